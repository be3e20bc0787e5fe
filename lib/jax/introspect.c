/* introspect.c: looking into JAX's objects (JAX's core.py ClosedJaxpr,
 * Jaxpr, JaxprEqn, Var, Literal, Primitive; mesh.py Mesh.devices;
 * named_sharding.py and sharding.py NamedSharding's properties; array.py
 * Array.tolist / nbytes / itemsize; api.py device_get,
 * block_until_ready; xla_bridge.default_backend).  The attributes are
 * looked up before those the kinds had (sr_kind_getattr_get). */
#include "jax/introspect.h"
#include "jax/callback.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "exec/array.h"
#include "jax/api.h"
#include "jax/jax.h"
#include "jax/np_host.h"
#include "jax/layout.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "prims/prim.h"
#include "py/objects.h"
#include "text/print.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "jax/tracers.h"

static SrKindGetattr prev_jaxpr, prev_mesh, prev_sharding;

/* ---- counted copies of a program's (immortal) param values ---- */

static SrVal *counted(const SrVal *v) {
  switch (v->kind) {
  case SR_V_NONE: return sr_none();
  case SR_V_BOOL: return sr_bool((int)v->i);
  case SR_V_INT: return sr_int(NULL, v->i);
  case SR_V_FLOAT: return sr_float(NULL, v->f);
  case SR_V_COMPLEX: return sr_complex(NULL, v->c.re, v->c.im);
  case SR_V_STR: return sr_str(NULL, v->str.s, v->str.n);
  case SR_V_WORD: return sr_word(NULL, v->str.s, v->str.n);
  case SR_V_DTYPE: return sr_dtype_val(NULL, v->dtype);
  case SR_V_MESH: return sr_mesh_val(NULL, v->mesh);
  case SR_V_AXISTYPE: return sr_axistype_val(v->axistype);
  case SR_V_SPEC: return sr_spec_val(NULL, v->spec);
  case SR_V_SHARDING: return sr_sharding_val(NULL, v->sh.mesh, v->sh.spec, v->sh.memory_kind);
  case SR_V_JAXPR: return sr_jaxpr_val(NULL, v->jx.jaxpr);
  case SR_V_TUPLE:
  case SR_V_LIST: {
    SrVal *r = sr_seq(NULL, v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) sr_seq_push(NULL, r, counted(v->seq.items[i]));
    return r;
  }
  case SR_V_DICT: {
    SrVal *r = sr_dict(NULL);
    for (int i = 0; i < v->dict.n; i++) sr_dict_set(NULL, r, counted(v->dict.keys[i]), counted(v->dict.vals[i]));
    return r;
  }
  default:
    if (!sr_is_immortal(v)) return sr_ref((SrVal *)v);
    /* what else a param holds is kept as its text */
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    SrVal *w = sr_word(NULL, b.p ? b.p : "", b.len);
    sr_buf_free(&b);
    return w;
  }
}

/* ---- Var, Literal, JaxprEqn (Primitive: lax_prims.c) ---- */

/* a var or literal of a jaxpr value (held) */
typedef struct VarObj {
  SrVal *jx;
  const SrVar *var;
} VarObj;

/* The live Var objects by the var they stand for, so that a var read
   twice from a jaxpr is the same object (JAX's Vars compare by identity:
   `eqn.outvars[0] is other.invars[1]`).  An object leaves the table when
   it is freed. */
typedef struct VarSlot {
  const SrVar *var;
  SrVal *obj;
  struct VarSlot *next;
} VarSlot;
static VarSlot *var_table[1024];

static size_t var_bucket(const SrVar *v) { return ((uintptr_t)v >> 4) % (sizeof var_table / sizeof *var_table); }

static void var_free(void *d) {
  VarObj *o = d;
  for (VarSlot **p = &var_table[var_bucket(o->var)]; *p; p = &(*p)->next)
    if ((*p)->var == o->var && ((VarObj *)(*p)->obj->obj.data) == o) {
      VarSlot *dead = *p;
      *p = dead->next;
      free(dead);
      break;
    }
  sr_unref(o->jx);
  free(o);
}

static SrVal *var_getattr(SrInterp *I, SrVal *self, const char *name);

/* Var.__repr__: Var(id=...):float32[3] */
static void var_repr(SrBuf *out, const SrVal *v) {
  const VarObj *o = v->obj.data;
  if (o->var->kind == SR_LIT) {
    /* Literal.__repr__: Literal(1.0) */
    SrVal *val = var_getattr(NULL, (SrVal *)v, "val");
    sr_buf_puts(out, "Literal(");
    if (val) sr_val_str(out, val);
    sr_buf_putc(out, ')');
    sr_unref(val);
    return;
  }
  if (o->var->kind == SR_DROP) {
    sr_buf_putc(out, '_');
    return;
  }
  sr_buf_printf(out, "Var(id=%u):", o->var->id);
  sr_type_str(out, o->var->type, 0);
}

static SrVal *var_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const VarObj *o = self->obj.data;
  if (strcmp(name, "aval") == 0) return sr_aval_new(o->var->type);
  if (strcmp(name, "val") == 0 && o->var->kind == SR_LIT) {
    const SrType *t = o->var->type;
    if (sr_dtype_is_inexact(t->dtype)) return sr_float(NULL, o->var->val.f);
    if (t->dtype == SR_BOOL) return sr_bool((int)o->var->val.i);
    return sr_int(NULL, o->var->val.i);
  }
  return NULL;
}
static const SrLangOps var_ops = {.getattr = var_getattr};
static const SrClass var_class = {"Var", var_free, var_repr, NULL, &var_ops};
static const SrClass lit_class = {"Literal", var_free, var_repr, NULL, &var_ops};

static SrVal *var_new(SrVal *jx, const SrVar *v) {
  size_t b = var_bucket(v);
  for (VarSlot *q = var_table[b]; q; q = q->next)
    if (q->var == v) return sr_ref(q->obj);
  VarObj *o = sr_xcalloc(1, sizeof *o);
  o->jx = sr_ref(jx);
  o->var = v;
  SrVal *r = sr_obj(v->kind == SR_LIT ? &lit_class : &var_class, o);
  VarSlot *q = sr_xmalloc(sizeof *q);
  q->var = v;
  q->obj = r;
  q->next = var_table[b];
  var_table[b] = q;
  return r;
}

static SrVal *vars_list(SrVal *jx, SrVar *const *vs, uint32_t n) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)n);
  for (uint32_t i = 0; i < n; i++) sr_seq_push(NULL, l, var_new(jx, vs[i]));
  return l;
}

typedef struct EqnObj {
  SrVal *jx;
  const SrEqn *e;
} EqnObj;

/* JaxprEqn.__repr__: the equation printed alone */
static void eqn_repr(SrBuf *out, const SrVal *v) { sr_print_eqn(out, ((const EqnObj *)v->obj.data)->e); }

SrVal *sr_introspect_eqn_prim(const SrEqn *e) {
  return sr_lax_prim_obj(e->prim->name); /* lax_prims.c: lax.X_p itself */
}

SrVal *sr_introspect_eqn_params(const SrEqn *e) {
  SrVal *d = sr_dict(NULL);
  for (uint32_t i = 0; i < e->nparams; i++)
    sr_dict_set(NULL, d, sr_str_cstr(NULL, e->params[i].key), counted(e->params[i].val));
  return d;
}

static SrVal *eqn_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const EqnObj *o = self->obj.data;
  const SrEqn *e = o->e;
  if (strcmp(name, "primitive") == 0) return sr_introspect_eqn_prim(e);
  if (strcmp(name, "params") == 0) return sr_introspect_eqn_params(e);
  if (strcmp(name, "invars") == 0) return vars_list(o->jx, e->in, e->nin);
  if (strcmp(name, "outvars") == 0) return vars_list(o->jx, e->out, e->nout);
  if (strcmp(name, "effects") == 0) return sr_callback_eqn_effects(e);
  return NULL;
}
static const SrLangOps eqn_ops = {.getattr = eqn_getattr};
static const SrClass eqn_class = {"JaxprEqn", var_free, eqn_repr, NULL, &eqn_ops};

/* ---- core.DebugInfo ---- */

/* a DebugInfo: its fields (arrays owned, strings interned); initial:
   result_paths is core.initial_result_paths (api_util.debug_info's) */
typedef struct DbgObj {
  SrDebugInfo d;
  int initial;
} DbgObj;

static void dbg_free(void *p) {
  DbgObj *o = p;
  free(o->d.arg_names);
  free(o->d.result_paths);
  free(o);
}

/* linear_util.InitialResultPaths(), the one instance */
static void initial_paths_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<jax._src.linear_util.InitialResultPaths object>");
}
static const SrClass initial_paths_class = {"InitialResultPaths", NULL, initial_paths_repr, NULL, NULL};

static SrVal *initial_result_paths(void) {
  SrVal *v = sr_lookup_qualname("jax._src.core.initial_result_paths");
  return v ? sr_ref(v) : sr_none();
}

static SrVal *names_tuple(const char *const *names, int n) {
  if (n < 0) return sr_none();
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_str_cstr(NULL, names[i]));
  return t;
}

/* _re_func_src_info: "NAME at FILE:LINE"; the FILE's start and length and
   the LINE, or 0 when func_src_info is only a name */
static int src_info_parts(const char *s, const char **file, size_t *nfile, long *line) {
  const char *at = strstr(s, " at "), *colon = at ? strrchr(at, ':') : NULL;
  if (!at || !colon || !colon[1] || strchr(s, ' ') != at) return 0;
  for (const char *p = colon + 1; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  *file = at + 4;
  *nfile = (size_t)(colon - at - 4);
  *line = strtol(colon + 1, NULL, 10);
  return 1;
}

static SrVal *dbg_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const DbgObj *o = self->obj.data;
  const SrDebugInfo *d = &o->d;
  const char *file;
  size_t nfile;
  long line;
  int parts = src_info_parts(d->func_src_info, &file, &nfile, &line);
  if (strcmp(name, "traced_for") == 0) return sr_str_cstr(NULL, d->traced_for);
  if (strcmp(name, "func_src_info") == 0) return sr_str_cstr(NULL, d->func_src_info);
  if (strcmp(name, "func_name") == 0) {
    const char *sp = strchr(d->func_src_info, ' ');
    return sr_str(NULL, d->func_src_info, sp ? (size_t)(sp - d->func_src_info) : strlen(d->func_src_info));
  }
  if (strcmp(name, "func_filename") == 0) return parts ? sr_str(NULL, file, nfile) : sr_none();
  if (strcmp(name, "func_lineno") == 0) return parts ? sr_int(NULL, line) : sr_none();
  if (strcmp(name, "arg_names") == 0) return names_tuple(d->arg_names, d->narg);
  if (strcmp(name, "result_paths") == 0) return o->initial ? initial_result_paths() : names_tuple(d->result_paths, d->nres);
  return NULL;
}

/* DebugInfo's NamedTuple repr */
static void dbg_repr(SrBuf *out, const SrVal *v) {
  const DbgObj *o = v->obj.data;
  SrVal *f[4] = {sr_str_cstr(NULL, o->d.traced_for), sr_str_cstr(NULL, o->d.func_src_info),
                 names_tuple(o->d.arg_names, o->d.narg),
                 o->initial ? initial_result_paths() : names_tuple(o->d.result_paths, o->d.nres)};
  static const char *const names[4] = {"traced_for", "func_src_info", "arg_names", "result_paths"};
  sr_buf_puts(out, "DebugInfo(");
  for (int i = 0; i < 4; i++) {
    sr_buf_printf(out, "%s%s=", i ? ", " : "", names[i]);
    sr_val_repr(out, f[i]);
    sr_unref(f[i]);
  }
  sr_buf_putc(out, ')');
}

static const SrLangOps dbg_ops = {.getattr = dbg_getattr};
static const SrClass dbg_class = {"DebugInfo", dbg_free, dbg_repr, NULL, &dbg_ops};

static const char **dup_names(const char *const *names, int n) {
  if (n < 0) return NULL;
  const char **c = sr_xcalloc((size_t)n + 1, sizeof *c);
  for (int i = 0; i < n; i++) c[i] = names[i];
  return c;
}

static SrVal *dbg_new(const SrDebugInfo *d, int initial) {
  DbgObj *o = sr_xcalloc(1, sizeof *o);
  o->d = *d;
  o->d.arg_names = dup_names(d->arg_names, d->narg);
  o->d.result_paths = dup_names(d->result_paths, d->nres);
  o->initial = initial;
  return sr_obj(&dbg_class, o);
}

/* api_util.debug_info(traced_for, fun, args, kwargs, *, static_argnums=(),
   static_argnames=()): a function's saved __fun_debug_info__, else its
   fun_sourceinfo and _non_static_arg_names, result_paths
   core.initial_result_paths */
static SrVal *bi_api_debug_info(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "debug_info", "traced_for, fun, args, kwargs, *, static_argnums=, static_argnames=", p) < 0)
    return NULL;
  if (p[1]->kind == SR_V_OBJ && ((const SrLangOps *)p[1]->obj.cls->lang)) {
    SrVal *saved = sr_getattr(I, p[1], "__fun_debug_info__");
    if (saved && saved->kind == SR_V_OBJ && saved->obj.cls == &dbg_class) return saved;
    sr_unref(saved);
    sr_exc_clear(I);
  }
  const char *tf = sr_as_str(I, p[0], "traced_for");
  if (!tf) return NULL;
  if ((p[2]->kind != SR_V_TUPLE && p[2]->kind != SR_V_LIST) || p[3]->kind != SR_V_DICT)
    return sr_raise(I, "TypeError", "debug_info() takes a sequence of args and a dict of kwargs");
  int n = p[2]->seq.n, nkw = p[3]->dict.n;
  const char **kw = sr_xcalloc((size_t)nkw + 1, sizeof *kw);
  for (int i = 0; i < nkw && !I->exc; i++) kw[i] = sr_as_str(I, p[3]->dict.keys[i], "a keyword");
  uint8_t *skip = sr_xcalloc((size_t)n + (size_t)nkw + 1, 1);
  /* _ensure_inbounds: negative static_argnums count from the end, those
     out of range are left out */
  SrVal *sn = p[4] && p[4]->kind == SR_V_INT ? sr_tuple(NULL, 1, (SrVal *[]){sr_ref(p[4])}) : p[4] ? sr_ref(p[4]) : NULL;
  for (int i = 0; sn && (sn->kind == SR_V_TUPLE || sn->kind == SR_V_LIST) && i < sn->seq.n; i++) {
    int64_t k;
    if (sr_as_int(I, sn->seq.items[i], "static_argnums", &k) < 0) break;
    if (k < 0) k += n;
    if (k >= 0 && k < n) skip[k] = 1;
  }
  sr_unref(sn);
  SrVal *sa = p[5] && p[5]->kind == SR_V_STR ? sr_tuple(NULL, 1, (SrVal *[]){sr_ref(p[5])}) : p[5] ? sr_ref(p[5]) : NULL;
  for (int i = 0; sa && (sa->kind == SR_V_TUPLE || sa->kind == SR_V_LIST) && i < sa->seq.n && !I->exc; i++) {
    const char *nm = sr_as_str(I, sa->seq.items[i], "static_argnames");
    for (int q = 0; nm && q < nkw; q++) skip[n + q] |= kw[q] == nm;
  }
  sr_unref(sa);
  SrVal *r = NULL;
  if (!I->exc) {
    SrArgs ca = {n, p[2]->seq.items, nkw, kw, p[3]->dict.vals, NULL};
    int nn = 0;
    char **names = sr_debug_arg_names(I, p[1], &ca, skip, &nn);
    SrBuf src = SR_BUF_INIT;
    sr_fun_sourceinfo(I, &src, p[1]);
    const char **in = sr_xcalloc((size_t)nn + 1, sizeof *in);
    for (int i = 0; i < nn; i++) in[i] = sr_intern_cstr(names[i]);
    SrDebugInfo d = {sr_intern_cstr(tf), sr_intern_cstr(sr_buf_str(&src)), nn, -1, in, NULL};
    r = I->exc ? NULL : dbg_new(&d, 1);
    free(in);
    sr_buf_free(&src);
    sr_debug_arg_names_free(names, nn);
  }
  free(skip);
  free(kw);
  return r;
}

/* api_util.save_wrapped_fun_debug_info(wrapper, dbg): the debug info
   debug_info gives for wrapper from now on */
static SrVal *bi_save_wrapped_fun_debug_info(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "save_wrapped_fun_debug_info", "wrapper, dbg", p) < 0) return NULL;
  if (sr_setattr(I, p[0], "__fun_debug_info__", p[1]) < 0) return NULL;
  return sr_none();
}

SrVal *sr_introspect_tracer_debug_info(SrInterp *I, const SrVal *x) {
  (void)I;
  const SrArrayObj *a = sr_array_of(x);
  if (!a || a->kind != SR_AV_TRACER || !a->origin) return NULL;
  static const char dyn[] = "DynamicJaxprTracer\t";
  if (strncmp(a->origin, dyn, sizeof dyn - 1) != 0) return NULL;
  const char *dbg = a->origin + sizeof dyn - 1, *sep = NULL;
  for (const char *p = strstr(dbg, " traced for "); p; p = strstr(p + 1, " traced for ")) sep = p;
  if (!sep) return NULL;
  /* the names from the joined key its trace gave it */
  int n = 0, cap = 8, res_none = a->arg_names && a->arg_names[0] == '\x1e';
  const char **names = sr_xcalloc((size_t)cap, sizeof *names);
  for (const char *p = a->arg_names ? strchr(a->arg_names, '\x1f') : NULL; p; p = strchr(p + 1, '\x1f')) {
    const char *e = strchr(p + 1, '\x1f');
    size_t len = e ? (size_t)(e - p - 1) : strlen(p + 1);
    if (n + 1 >= cap) names = sr_xrealloc(names, (size_t)(cap *= 2) * sizeof *names);
    names[n++] = sr_intern(p + 1, len);
  }
  SrDebugInfo d = {sr_intern_cstr(sep + strlen(" traced for ")), sr_intern(dbg, (size_t)(sep - dbg)),
                   a->arg_names ? n : -1, -1, names, NULL};
  SrVal *r = dbg_new(&d, !res_none);
  free(names);
  return r;
}

SrVal *sr_introspect_debug_info(const SrJaxpr *j) {
  return j && j->dbg ? dbg_new(j->dbg, 0) : sr_none();
}

/* ---- ClosedJaxpr / Jaxpr attributes ---- */

static SrVal *avals_list(SrVar *const *vs, uint32_t n) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)n);
  for (uint32_t i = 0; i < n; i++) sr_seq_push(NULL, l, sr_aval_new(vs[i]->type));
  return l;
}

/* jaxpr.pretty_print(*, source_info=False, print_shapes=True,
   use_color=True, ...): its text, without color here */
static SrVal *jaxpr_pretty_print(SrInterp *I, SrArgs *a) {
  if (a->n) return sr_raise(I, "TypeError", "pretty_print() takes keyword arguments only");
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, a->self);
  SrVal *r = sr_str(NULL, b.p ? b.p : "", b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *jaxpr_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrJaxpr *j = self->jx.jaxpr;
  if (strcmp(name, "pretty_print") == 0) return sr_bound_method(self, "pretty_print", jaxpr_pretty_print);
  if (strcmp(name, "eqns") == 0) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->neqn);
    for (uint32_t i = 0; i < j->neqn; i++) {
      EqnObj *o = sr_xcalloc(1, sizeof *o);
      o->jx = sr_ref(self);
      o->e = &j->eqns[i];
      sr_seq_push(NULL, l, sr_obj(&eqn_class, o));
    }
    return l;
  }
  if (strcmp(name, "debug_info") == 0) return sr_introspect_debug_info(j);
  if (strcmp(name, "in_avals") == 0) return avals_list(j->invars + j->nconst, j->nin - j->nconst);
  if (strcmp(name, "out_avals") == 0) return avals_list(j->outvars, j->nout);
  if (strcmp(name, "effects") == 0) return sr_callback_jaxpr_effects(j);
  if (strcmp(name, "invars") == 0) return vars_list(self, j->invars + j->nconst, j->nin - j->nconst);
  if (strcmp(name, "constvars") == 0) return vars_list(self, j->invars, j->nconst);
  if (strcmp(name, "outvars") == 0) return vars_list(self, j->outvars, j->nout);
  if (strcmp(name, "literals") == 0) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->nconst);
    for (uint32_t i = 0; i < j->nconst; i++)
      sr_seq_push(NULL, l, j->consts && j->consts[i] ? sr_ref(j->consts[i]) : sr_none());
    return l;
  }
  return prev_jaxpr ? prev_jaxpr(I, self, name) : NULL;
}

/* ---- Mesh.devices ---- */

static SrVal *mesh_getattr(SrInterp *I, SrVal *self, const char *name) {
  const SrMesh *m = self->mesh;
  if (strcmp(name, "local_devices") == 0 && !m->abstract) {
    /* the devices of this process, in mesh order (one process: all) */
    int64_t n = sr_mesh_size(m);
    SrVal *l = sr_seq(NULL, SR_V_LIST, (int)n);
    for (int64_t p = 0; p < n; p++) sr_seq_push(NULL, l, sr_concrete_device_val(sr_mesh_device(m, (int)p)));
    return l;
  }
  if (strcmp(name, "devices") == 0 && !m->abstract) {
    /* an array of the mesh's shape: device ids, as np.array(jax.devices())
       holds them here */
    int64_t n = sr_mesh_size(m);
    SrVal *flat = sr_seq(NULL, SR_V_LIST, (int)n);
    for (int64_t p = 0; p < n; p++) sr_seq_push(NULL, flat, sr_int(NULL, sr_mesh_device(m, (int)p)));
    SrVal *arr = sr_jnp_asarray(I, flat, -1);
    sr_unref(flat);
    if (!arr || m->n <= 1) return arr;
    SrVal *shape = sr_seq(NULL, SR_V_TUPLE, m->n);
    for (int i = 0; i < m->n; i++) sr_seq_push(NULL, shape, sr_int(NULL, m->sizes[i]));
    SrVal *reshape = sr_lookup_qualname("jax.numpy.reshape");
    SrVal *argv[2] = {arr, shape};
    SrArgs ca = {2, argv, 0, NULL, NULL, NULL};
    SrVal *r = reshape ? sr_call(I, reshape, &ca) : NULL;
    sr_unref(arr);
    sr_unref(shape);
    return r;
  }
  return prev_mesh ? prev_mesh(I, self, name) : NULL;
}

/* ---- NamedSharding's properties ---- */

static int64_t axis_size(const SrMesh *m, const char *name) {
  for (int i = 0; i < m->n; i++)
    if (m->names[i] == name) return m->sizes[i];
  return 1;
}

/* how many ways dimension d is split (1 past the spec) */
static int64_t ways(const SrVal *sh, int d) {
  const SrSpec *s = sh->sh.spec;
  if (d >= s->n) return 1;
  int64_t w = 1;
  for (int k = 0; k < s->e[d].n; k++)
    if (s->e[d].names[k] != SR_SPEC_UNCONSTRAINED) w *= axis_size(sh->sh.mesh, s->e[d].names[k]);
  return w;
}

static int fully_replicated(const SrVal *sh) {
  if (sr_mesh_size(sh->sh.mesh) == 1) return 1;
  if (sh->sh.spec->nunreduced) return 0;
  for (int d = 0; d < sh->sh.spec->n; d++)
    if (ways(sh, d) != 1) return 0;
  return 1;
}

static SrVal *device_set(const SrMesh *m) {
  int64_t n = sr_mesh_size(m);
  SrVal *s = sr_seq(NULL, SR_V_SET, (int)n);
  for (int64_t p = 0; p < n; p++) sr_seq_push(NULL, s, sr_concrete_device_val(sr_mesh_device(m, (int)p)));
  return s;
}

static SrVal *m_shard_shape(SrInterp *I, SrArgs *a) {
  SrVal *sh = a->self;
  if (a->n != 1) return sr_raise(I, "TypeError", "shard_shape() takes exactly one argument (%d given)", a->n);
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_shape_arg(I, a->v[0], shape, &nd, "global_shape") < 0) return NULL;
  if (fully_replicated(sh)) return sr_ref(a->v[0]);
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, nd);
  for (int d = 0; d < nd; d++) {
    int64_t w = ways(sh, d);
    if (shape[d] % w != 0) {
      SrBuf b = SR_BUF_INIT, g = SR_BUF_INIT, t = SR_BUF_INIT;
      sr_val_repr(&b, sh);
      sr_val_repr(&g, a->v[0]);
      sr_buf_putc(&t, '(');
      for (int k = 0; k < nd; k++) sr_buf_printf(&t, k ? ", %lld" : "%lld", (long long)ways(sh, k));
      sr_buf_puts(&t, nd == 1 ? ",)" : ")");
      sr_raise(I, "IndivisibleError",
               "%s implies that array axis %d is partitioned %lld times, but the dimension size is %lld (full shape: "
               "%s, per-dimension tiling factors: %s should evenly divide the shape)",
               b.p, d, (long long)w, (long long)shape[d], g.p, t.p);
      sr_buf_free(&b);
      sr_buf_free(&g);
      sr_buf_free(&t);
      sr_unref(r);
      return NULL;
    }
    sr_seq_push(NULL, r, sr_int(NULL, shape[d] / w));
  }
  return r;
}

/* the block of dimension d the device at mesh position p holds: its
   coordinates along the dimension's axes, major first */
static int64_t block_of(const SrVal *sh, int p, int d) {
  const SrSpec *s = sh->sh.spec;
  const SrMesh *m = sh->sh.mesh;
  int64_t b = 0;
  for (int k = 0; d < s->n && k < s->e[d].n; k++) {
    const char *nm = s->e[d].names[k];
    if (nm == SR_SPEC_UNCONSTRAINED) continue;
    int64_t stride = 1, coord = 0;
    for (int i = m->n - 1; i >= 0; i--) {
      if (m->names[i] == nm) {
        coord = (p / stride) % m->sizes[i];
        b = b * m->sizes[i] + coord;
        break;
      }
      stride *= m->sizes[i];
    }
  }
  return b;
}

/* devices_indices_map(global_shape): each device of the mesh (in its
   order) to the tuple of slices of the block it holds
   (sharding.common_devices_indices_map): shard_shape's error first, a
   dimension split one way whole (slice(None)) */
static SrVal *m_devices_indices_map(SrInterp *I, SrArgs *a) {
  SrVal *sh = a->self;
  if (a->n != 1) return sr_raise(I, "TypeError", "devices_indices_map() takes exactly one argument (%d given)", a->n);
  if (sh->sh.mesh->abstract)
    return sr_raise(I, "ValueError", "devices_indices_map is not implemented for a NamedSharding over an AbstractMesh");
  SrVal *ss = m_shard_shape(I, a);
  if (!ss) return NULL;
  sr_unref(ss);
  if (sh->sh.spec->nunreduced)
    return sr_raise(I, "NotImplementedError",
                    "device_indices_map doesn't work with unreduced. Please file a bug at "
                    "https://github.com/jax-ml/jax/issues");
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_shape_arg(I, a->v[0], shape, &nd, "global_shape") < 0) return NULL;
  SrVal *r = sr_dict(NULL);
  int64_t n = sr_mesh_size(sh->sh.mesh);
  for (int64_t p = 0; p < n; p++) {
    SrVal *idx = sr_seq(NULL, SR_V_TUPLE, nd);
    for (int d = 0; d < nd; d++) {
      int64_t w = ways(sh, d);
      if (w == 1) {
        sr_seq_push(NULL, idx, sr_slice_new(sr_none(), sr_none(), sr_none()));
        continue;
      }
      int64_t sz = shape[d] / w, b = block_of(sh, (int)p, d);
      sr_seq_push(NULL, idx, sr_slice_new(sr_int(NULL, b * sz), sr_int(NULL, (b + 1) * sz), sr_none()));
    }
    sr_dict_set(NULL, r, sr_concrete_device_val(sr_mesh_device(sh->sh.mesh, (int)p)), idx);
  }
  return r;
}

/* is_equivalent_to(other, ndim): the same devices in the same order, the
   same tiling of each of ndim dimensions by axes of size > 1, the same
   memory kind */
static SrVal *m_is_equivalent_to(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "is_equivalent_to", "other, ndim", p) < 0) return NULL;
  SrVal *x = a->self, *y = p[0];
  /* a SingleDeviceSharding: the same one device, replicated on it */
  int ydev = sr_single_device_sharding_id(y);
  if (ydev >= 0) {
    const char *kx = x->sh.memory_kind ? x->sh.memory_kind : "device";
    return sr_bool(!x->sh.mesh->abstract && sr_mesh_size(x->sh.mesh) == 1 && sr_mesh_device(x->sh.mesh, 0) == ydev &&
                   !x->sh.spec->nunreduced && strcmp(kx, "device") == 0);
  }
  if (y->kind != SR_V_SHARDING) return sr_bool(0);
  const SrMesh *mx = x->sh.mesh, *my = y->sh.mesh;
  int64_t n = sr_mesh_size(mx);
  int eq = n == sr_mesh_size(my);
  for (int64_t q = 0; q < n && eq; q++) eq = sr_mesh_device(mx, (int)q) == sr_mesh_device(my, (int)q);
  const char *kx = x->sh.memory_kind ? x->sh.memory_kind : "device", *ky = y->sh.memory_kind ? y->sh.memory_kind : "device";
  eq = eq && strcmp(kx, ky) == 0;
  int fx = fully_replicated(x), fy = fully_replicated(y);
  if (eq && !(fx && fy)) {
    /* compare which mesh position holds which block: axes of size 1 and
       the order of the mesh's names do not matter, positions do */
    int nd = p[1]->kind == SR_V_INT ? (int)p[1]->i : 0;
    for (int d = 0; d < nd && eq; d++) {
      const SrSpec *sx = x->sh.spec, *sy = y->sh.spec;
      int ix = 0, iy = 0;
      int nx = d < sx->n ? sx->e[d].n : 0, ny = d < sy->n ? sy->e[d].n : 0;
      for (;;) {
        while (ix < nx && axis_size(mx, sx->e[d].names[ix]) == 1) ix++;
        while (iy < ny && axis_size(my, sy->e[d].names[iy]) == 1) iy++;
        if (ix == nx || iy == ny) {
          eq = ix == nx && iy == ny;
          break;
        }
        int ax = -1, ay = -1;
        for (int k = 0; k < mx->n; k++)
          if (mx->names[k] == sx->e[d].names[ix]) ax = k;
        for (int k = 0; k < my->n; k++)
          if (my->names[k] == sy->e[d].names[iy]) ay = k;
        if (ax != ay || ax < 0 || mx->sizes[ax] != my->sizes[ay]) {
          eq = 0;
          break;
        }
        ix++;
        iy++;
      }
    }
    if (eq && mx->n != my->n) eq = 0;
    for (int k = 0; k < mx->n && eq; k++) eq = mx->sizes[k] == my->sizes[k];
  }
  return sr_bool(eq);
}

/* check_compatible_aval(aval_shape): the spec no longer than the rank */
static SrVal *m_check_compatible_aval(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "check_compatible_aval() takes exactly one argument (%d given)", a->n);
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_shape_arg(I, a->v[0], shape, &nd, "aval_shape") < 0) return NULL;
  int n = a->self->sh.spec->n;
  if (nd < n) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, a->self);
    sr_raise(I, "ValueError",
             "Sharding %s is only valid for values of rank at least %d, but was applied to a value of rank %d.%s", b.p, n,
             nd, nd == 0 ? " For scalars the PartitionSpec should be P()" : "");
    sr_buf_free(&b);
    return NULL;
  }
  return sr_none();
}

static SrVal *sharding_getattr(SrInterp *I, SrVal *self, const char *name) {
  if (strcmp(name, "is_fully_replicated") == 0) return sr_bool(fully_replicated(self));
  if (strcmp(name, "is_fully_addressable") == 0) return sr_bool(I->jax->num_ranks <= 1);
  if (strcmp(name, "num_devices") == 0) return sr_int(NULL, sr_mesh_size(self->sh.mesh));
  if (strcmp(name, "device_set") == 0 || strcmp(name, "addressable_devices") == 0) {
    if (self->sh.mesh->abstract)
      return sr_raise(I, "ValueError", "%s is not implemented for a NamedSharding over an AbstractMesh", name);
    return device_set(self->sh.mesh);
  }
  if (strcmp(name, "_device_assignment") == 0) {
    /* the mesh's devices in order (mesh._flat_devices_tuple) */
    if (self->sh.mesh->abstract)
      return sr_raise(I, "ValueError", "_device_assignment is not implemented for `jax.sharding.AbstractMesh`.");
    int64_t n = sr_mesh_size(self->sh.mesh);
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, (int)n);
    for (int64_t q = 0; q < n; q++) sr_seq_push(NULL, t, sr_concrete_device_val(sr_mesh_device(self->sh.mesh, (int)q)));
    return t;
  }
  if (strcmp(name, "shard_shape") == 0) return sr_bound_method(self, name, m_shard_shape);
  if (strcmp(name, "check_compatible_aval") == 0) return sr_bound_method(self, name, m_check_compatible_aval);
  if (strcmp(name, "devices_indices_map") == 0 || strcmp(name, "addressable_devices_indices_map") == 0)
    return sr_bound_method(self, name, m_devices_indices_map);
  if (strcmp(name, "is_equivalent_to") == 0) return sr_bound_method(self, name, m_is_equivalent_to);
  if (strcmp(name, "devices_indices_map") == 0 || strcmp(name, "addressable_devices_indices_map") == 0)
    return sr_bound_method(self, name, m_devices_indices_map);
  return prev_sharding ? prev_sharding(I, self, name) : NULL;
}

/* ---- arrays ---- */

static SrVal *tolist_rec(SrInterp *I, SrVal *x, int depth) {
  const SrType *t = sr_value_type(I, x);
  if (!t) return NULL;
  if (t->ndim == 0 || depth > SR_MAX_RANK) {
    SrVal *item = sr_lookup_qualname("jax.Array.method.item");
    SrArgs ca = {1, &x, 0, NULL, NULL, NULL};
    return item ? sr_call(I, item, &ca) : NULL;
  }
  SrVal *rows = sr_iterate(I, x);
  if (!rows) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, rows->seq.n);
  for (int i = 0; i < rows->seq.n; i++) {
    if (sr_interrupt_point(I)) {
      sr_unref(rows);
      sr_unref(l);
      return sr_raise(I, "KeyboardInterrupt", "interrupted");
    }
    SrVal *r = tolist_rec(I, rows->seq.items[i], depth + 1);
    if (!r) {
      sr_unref(rows);
      sr_unref(l);
      return NULL;
    }
    sr_seq_push(NULL, l, r);
  }
  sr_unref(rows);
  return l;
}

/* x.tolist(): nested lists of Python scalars (np.ndarray.tolist) */
static SrVal *m_tolist(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "tolist() takes no arguments (%d given)", a->n - 1);
  SrArrayObj *o = sr_array_of(a->v[0]);
  if (o && o->kind == SR_AV_TRACER)
  {
    /* Tracer.tolist: the context already ends in the origin, which
       ConcretizationTypeError adds again */
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "The tolist() method was called on traced array with shape ");
    sr_type_str(&b, o->type, 0);
    sr_buf_putc(&b, '.');
    sr_tracer_origin_msg(I, a->v[0], &b);
    sr_raise_concretization(I, a->v[0], sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  if (sr_array_check_deleted(I, a->v[0]) < 0) return NULL;
  /* a sharded array's values come from the host (self._value.tolist()):
     its rows are not slices of it, which sharded dims would refuse */
  const SrType *t = sr_value_type(I, a->v[0]);
  int sharded = 0;
  for (int i = 0; t && i < t->ndim; i++) sharded |= t->dims[i].nax > 0;
  if (sharded) {
    SrVal *h = sr_np_asarray(I, a->v[0], -1);
    SrVal *m = h ? sr_getattr(I, h, "tolist") : NULL;
    SrArgs na = {0, NULL, 0, NULL, NULL, NULL};
    SrVal *r = m ? sr_call(I, m, &na) : NULL;
    sr_unref(m);
    sr_unref(h);
    return r;
  }
  return tolist_rec(I, a->v[0], 0);
}

static SrVal *prop_itemsize(SrInterp *I, SrArgs *a) {
  const SrType *t = sr_value_type(I, a->self);
  if (!t) return sr_raise(I, "TypeError", "itemsize of a value that is not an array");
  return sr_int(NULL, (sr_dtype_info(t->dtype)->bits + 7) / 8);
}

static SrVal *prop_nbytes(SrInterp *I, SrArgs *a) {
  const SrType *t = sr_value_type(I, a->self);
  if (!t) return sr_raise(I, "TypeError", "nbytes of a value that is not an array");
  /* int4's two to a byte as numpy stores them: one per byte */
  return sr_int(NULL, sr_type_numel(t) * ((sr_dtype_info(t->dtype)->bits + 7) / 8));
}

/* the leaves of a tree mapped by fn (a jax.Array method's C function) */
static SrVal *tree_apply(SrInterp *I, SrVal *tree, SrVal *(*fn)(SrInterp *I, SrVal *leaf)) {
  if (sr_pytree_check_depth(I, tree) < 0) return NULL;
  SrVal *ch = sr_pytree_children(tree);
  if (!ch) return fn(I, tree);
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *r = tree_apply(I, ch->seq.items[i], fn);
    if (!r) {
      sr_unref(ch);
      return NULL;
    }
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = r;
  }
  SrVal *r = sr_pytree_rebuild(tree, ch);
  sr_unref(ch);
  return r;
}

static SrVal *leaf_ready(SrInterp *I, SrVal *x) {
  if (sr_array_check_deleted(I, x) < 0) return NULL;
  return sr_ref(x);
}

/* device_get: arrays' values on the host (an array here), others as they are */
static SrVal *leaf_get(SrInterp *I, SrVal *x) {
  SrArrayObj *o = sr_array_of(x);
  if (o && o->kind == SR_AV_TRACER)
  {
    SrBuf b = SR_BUF_INIT;
    sr_type_str(&b, o->type, 0);
    sr_raise(I, "ConcretizationTypeError",
             "Abstract tracer value encountered where concrete value is expected: traced array with shape %s", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  return leaf_ready(I, x);
}

static SrVal *bi_block_until_ready(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "block_until_ready", "x", p) < 0) return NULL;
  return tree_apply(I, p[0], leaf_ready);
}

/* jax.copy_to_host_async(x): each leaf's copy_to_host_async() called,
   where it has one (an AttributeError looking it up is passed over, one
   the call raises is not); x itself */
static SrVal *bi_copy_to_host_async(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "copy_to_host_async", "x", p) < 0) return NULL;
  SrVal *leaves = sr_pytree_flatten_any(I, p[0]);
  if (!leaves) return NULL;
  for (int i = 0; i < leaves->seq.n; i++) {
    SrVal *m = sr_getattr(I, leaves->seq.items[i], "copy_to_host_async");
    if (!m) {
      if (I->exc && sr_exception_is_a(sr_exc_type(I->exc), "AttributeError")) {
        sr_exc_clear(I);
        continue;
      }
      sr_unref(leaves);
      return NULL;
    }
    SrArgs na = {0, NULL, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, m, &na);
    sr_unref(m);
    if (!r) {
      sr_unref(leaves);
      return NULL;
    }
    sr_unref(r);
  }
  sr_unref(leaves);
  return sr_ref(p[0]);
}

/* jax.effects_barrier(): every effect of the computations dispatched so
   far has happened -- as they have here, where each runs to its end */
static SrVal *bi_effects_barrier(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "effects_barrier", "", NULL) < 0) return NULL;
  return sr_none();
}

static SrVal *bi_device_get(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "device_get", "x", p) < 0) return NULL;
  return tree_apply(I, p[0], leaf_get);
}

static SrVal *bi_default_backend(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "default_backend() takes 0 positional arguments but %d were given", a->n);
  return sr_str_cstr(NULL, "cpu");
}

void sr_introspect_init(void) {
  prev_jaxpr = sr_kind_getattr_get(SR_V_JAXPR);
  prev_mesh = sr_kind_getattr_get(SR_V_MESH);
  prev_sharding = sr_kind_getattr_get(SR_V_SHARDING);
  sr_kind_getattr_set(SR_V_JAXPR, jaxpr_getattr);
  sr_kind_getattr_set(SR_V_MESH, mesh_getattr);
  sr_kind_getattr_set(SR_V_SHARDING, sharding_getattr);
  sr_register("jax._src.api_util.debug_info", sr_builtin_with("debug_info", bi_api_debug_info, NULL, NULL));
  sr_register("jax._src.api_util.save_wrapped_fun_debug_info",
              sr_builtin_with("save_wrapped_fun_debug_info", bi_save_wrapped_fun_debug_info, NULL, NULL));
  sr_register("jax._src.core.initial_result_paths", sr_obj(&initial_paths_class, NULL));
  sr_def("jax.Array.method.tolist", m_tolist, "x.tolist(): x's values as nested lists of Python scalars");
  sr_def("jax.Array.property.itemsize", prop_itemsize, "x.itemsize: the bytes of one element");
  sr_def("jax.Array.property.nbytes", prop_nbytes, "x.nbytes: the bytes of all elements (x.size * x.itemsize)");
  sr_def("jax.block_until_ready", bi_block_until_ready,
         "block_until_ready(x): x (a pytree), once every array in it is computed");
  sr_def("jax.copy_to_host_async", bi_copy_to_host_async,
         "copy_to_host_async(x): x (a pytree), each leaf's copy_to_host_async() called where it has one");
  sr_def("jax.effects_barrier", bi_effects_barrier, "effects_barrier(): waits until the effects of every computation so far have happened");
  sr_def("jax.device_get", bi_device_get, "device_get(x): x (a pytree) with its arrays' values fetched to the host");
  sr_def("jax.default_backend", bi_default_backend, "default_backend(): the platform of the default backend, 'cpu'");
}
