/* api.c: the jax module's own functions (JAX's api.py, pjit.py):
 * jax.typeof, ShapeDtypeStruct, tracing a function (sr_trace_fn),
 * make_jaxpr, jit and the traces it keeps, checkpoint, calling a jaxpr
 * value; and the registration of JAX's built-ins (sr_jnp_init). */
#include "jax/math_api.h"
#include "jax/remat_policies.h"
#include "jax/api.h"
#include "jax/ref.h"

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/np_host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "core/jaxstate.h"
#include "exec/array.h"
#include "jax/array_methods.h"
#include "jax/jit_options.h"
#include "jax/layout.h"
#include "jax/tracers.h"
#include "py/ast.h"
#include "py/class.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- jax.typeof and ShapeDtypeStruct ---- */

static SrVal *jax_typeof(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "typeof() takes exactly one argument");
  if (sr_is_obj(a->v[0], &sr_aval_class)) return sr_ref(a->v[0]);
  if (sr_class_instance_has(a->v[0], "__jax_array__")) return sr_raise(I, "ValueError", "%s", SR_JAX_ARRAY_ABSTRACTIFY_MSG);
  const SrType *t = sr_value_type(I, a->v[0]);
  if (!t) {
    SrVal *arr = sr_jnp_asarray(I, a->v[0], -1);
    if (!arr) return NULL;
    t = sr_value_type(I, arr);
    sr_unref(arr);
  }
  return sr_aval_new(t);
}

/* The type of shape and dtype with a sharding (NamedSharding or P, or
   None) as an aval's: core.get_sharding's checks (the spec's length, each
   sharded dimension divisible), only the Explicit axes named. */
const SrType *sr_api_typed_with_sharding(SrInterp *I, const SrType *base, SrVal *sharding, const char *what) {
  SrTypeBuilder b;
  sr_type_builder(&b, base);
  int nd = base->ndim;
  if (sharding && sharding->kind != SR_V_NONE) {
    SrVal *sh = sr_sharding_arg(I, sharding, nd, what);
    if (!sh) return NULL;
    SrTypeCtx cx;
    SrDiags d = SR_DIAGS_INIT;
    sr_type_ctx(I, &cx, &d);
    SrShardSpec s;
    if (sr_spec_to_shard(&cx, sh, sr_mesh_shape(sh->sh.mesh), nd, &s) < 0) {
      sr_unref(sh);
      return sr_raise_diags(I, &d, "ValueError"), NULL;
    }
    /* the type names Explicit axes only: Auto and Manual ones are None
       there (modify_spec_for_auto_manual) */
    const SrMesh *sm = sh->sh.mesh;
    for (int i = 0; i < nd; i++) {
      int n = 0;
      for (int k = 0; k < s.nax[i]; k++)
        if (sm->types[s.ax[i][k]] == SR_AXIS_EXPLICIT) s.ax[i][n++] = s.ax[i][k];
      s.nax[i] = (uint8_t)n;
    }
    sr_apply_shard(&b, &s);
    SrRuleEqn re = {&sr_prims[SR_P_copy], 0, 1, 0, NULL, NULL, NULL, NULL};
    const SrType *t;
    int rc = sr_finish_type(&cx, &re, &b, &t);
    sr_unref(sh);
    if (rc < 0) return sr_raise_diags(I, &d, "ValueError"), NULL;
  }
  return sr_type_get(&b);
}

/* jax.core.ShapedArray(shape, dtype, weak_type=False, *, sharding=None):
   an aval; its sharding is a NamedSharding over an AbstractMesh */
static SrVal *jax_shaped_array(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "ShapedArray", "shape, dtype, weak_type=, *, sharding=, memory_space=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_shape_arg(I, p[0], shape, &nd, "shape") < 0) return NULL;
  if (p[1]->kind != SR_V_DTYPE) return sr_raise(I, "TypeError", "ShapedArray's dtype must be a dtype");
  SrTypeBuilder b;
  sr_type_builder(&b, sr_type_array(p[1]->dtype, nd, shape));
  if (p[2]) b.weak = (uint8_t)sr_val_truthy(p[2]);
  /* memory_space: a jax.memory.Space (core.MemorySpace), Device by default */
  if (p[4] && p[4]->kind != SR_V_NONE) {
    const char *ms = p[4]->kind == SR_V_WORD ? p[4]->str.s : "";
    if (strcmp(ms, "MemorySpace.Host") == 0) b.mem = sr_intern_cstr("host");
    else if (strcmp(ms, "MemorySpace.Any") == 0) b.mem = sr_intern_cstr("any");
    else if (strcmp(ms, "MemorySpace.Device") != 0)
      return sr_raise(I, "TypeError", "ShapedArray's memory_space must be a jax.memory.Space");
  }
  SrVal *sh = p[3];
  if (sh && sh->kind == SR_V_SHARDING && !sh->sh.mesh->abstract) {
    SrBuf m = SR_BUF_INIT;
    sr_mesh_str(&m, sh->sh.mesh);
    sr_raise(I, "ValueError", "Mesh of an aval must be an AbstractMesh. Got %s of type <class 'jax._src.mesh.Mesh'>",
             m.p);
    sr_buf_free(&m);
    return NULL;
  }
  const SrType *t = sr_api_typed_with_sharding(I, sr_type_get(&b), sh, "ShapedArray's sharding");
  return t ? sr_aval_new(t) : NULL;
}

static SrVal *jax_shape_dtype_struct(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "ShapeDtypeStruct", "shape, dtype, *, sharding=, weak_type=, is_ref=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  /* core.ShapeDtypeStruct.__init__: tuple(shape), no None in it, a dtype
     (np.dtype(dtype): names and Python's types too) */
  if (p[0]->kind == SR_V_INT || p[0]->kind == SR_V_FLOAT || p[0]->kind == SR_V_BOOL || p[0]->kind == SR_V_NONE)
    return sr_raise(I, "TypeError", "'%s' object is not iterable", sr_val_kind_name(p[0]));
  if (p[0]->kind == SR_V_TUPLE || p[0]->kind == SR_V_LIST) {
    int none = 0;
    for (int i = 0; i < p[0]->seq.n; i++) none |= p[0]->seq.items[i]->kind == SR_V_NONE;
    if (none) {
      SrVal *t = sr_seq(NULL, SR_V_TUPLE, p[0]->seq.n);
      for (int i = 0; i < p[0]->seq.n; i++) sr_seq_push(NULL, t, sr_ref(p[0]->seq.items[i]));
      SrBuf b = SR_BUF_INIT;
      sr_to_repr(I, &b, t);
      sr_raise(I, "ValueError", "`shape` passed to `ShapeDtypeStruct` cannot have None in it. Got shape=%s", b.p);
      sr_buf_free(&b);
      sr_unref(t);
      return NULL;
    }
  }
  if (sr_shape_arg(I, p[0], shape, &nd, "shape") < 0) return NULL;
  if (p[1]->kind == SR_V_NONE) return sr_raise(I, "ValueError", "ShapeDtypeStruct: dtype must be specified.");
  SrDtype sdt = p[1]->kind == SR_V_DTYPE ? p[1]->dtype : SR_F32;
  if (p[1]->kind != SR_V_DTYPE) {
    /* np.dtype(...): a name as numpy spells it, or Python's float, int,
       bool and complex (64-bit, no canonicalizing) */
    int d = -1;
    if (p[1]->kind == SR_V_STR) d = sr_dtype_lookup(p[1]->str.s, p[1]->str.n);
    const char *nm = sr_is_obj(p[1], &sr_builtin_class) ? sr_builtin_name(p[1]) : NULL;
    if (nm && strcmp(nm, "builtins.float") == 0) d = SR_F64;
    if (nm && strcmp(nm, "builtins.int") == 0) d = SR_I64;
    if (nm && strcmp(nm, "builtins.bool") == 0) d = SR_BOOL;
    if (nm && strcmp(nm, "builtins.complex") == 0) d = SR_C128;
    if (d < 0 || d >= SR_NBUILTIN_DTYPES) {
      SrBuf b = SR_BUF_INIT;
      sr_to_repr(I, &b, p[1]);
      sr_raise(I, "TypeError", "Cannot interpret '%s' as a data type", b.p);
      sr_buf_free(&b);
      return NULL;
    }
    sdt = (SrDtype)d;
  }
  SrTypeBuilder b;
  sr_type_builder(&b, sr_type_array(sdt, nd, shape));
  if (p[3]) b.weak = (uint8_t)sr_val_truthy(p[3]);
  SrVal *sh = NULL;
  /* core._check_sharding: NamedSharding.check_compatible_aval and
     PartitionSpec._check_compatible_wrt_shape */
  const SrSpec *given = p[2] && p[2]->kind == SR_V_SHARDING ? p[2]->sh.spec : p[2] && p[2]->kind == SR_V_SPEC ? p[2]->spec : NULL;
  if (given && given->n > nd) {
    SrBuf m = SR_BUF_INIT;
    if (p[2]->kind == SR_V_SHARDING) sr_val_str(&m, p[2]);
    else sr_spec_repr(&m, given);
    sr_raise(I, "ValueError", "%s %s is only valid for values of rank at least %d, but was applied to a value of rank %d.%s",
             p[2]->kind == SR_V_SHARDING ? "Sharding" : "PartitionSpec", m.p, given->n, nd,
             nd == 0 ? " For scalars the PartitionSpec should be P()" : "");
    sr_buf_free(&m);
    return NULL;
  }
  /* a PartitionSpec with no mesh in context: kept as it is, resolved when
     .sharding is read (core.ShapeDtypeStruct.sharding) */
  int lazy = p[2] && p[2]->kind == SR_V_SPEC && !I->jax->mesh && !sr_jax_abstract_mesh(I->jax)->n;
  /* a SingleDeviceSharding names no mesh axes: the type is unsharded */
  if (p[2] && p[2]->kind != SR_V_NONE && !lazy && sr_single_device_sharding_id(p[2]) < 0) {
    sh = sr_sharding_arg(I, p[2], nd, "ShapeDtypeStruct's sharding");
    if (!sh) return NULL;
    SrTypeCtx cx;
    SrDiags d = SR_DIAGS_INIT;
    sr_type_ctx(I, &cx, &d);
    SrShardSpec s;
    if (sr_spec_to_shard(&cx, sh, sr_mesh_shape(sh->sh.mesh), nd, &s) < 0) {
      sr_unref(sh);
      return sr_raise_diags(I, &d, "ValueError");
    }
    /* the type names Explicit axes only: Auto and Manual ones are None
       there (modify_spec_for_auto_manual) */
    const SrMesh *sm = sh->sh.mesh;
    for (int i = 0; i < nd; i++) {
      int n = 0;
      for (int k = 0; k < s.nax[i]; k++)
        if (sm->types[s.ax[i][k]] == SR_AXIS_EXPLICIT) s.ax[i][n++] = s.ax[i][k];
      s.nax[i] = (uint8_t)n;
    }
    sr_apply_shard(&b, &s);
    SrRuleEqn re = {&sr_prims[SR_P_copy], 0, 1, 0, NULL, NULL, NULL, NULL};
    const SrType *t;
    if (sr_finish_type(&cx, &re, &b, &t) < 0) {
      sr_unref(sh);
      return sr_raise_diags(I, &d, "ValueError");
    }
  }
  /* is_ref=True: the struct of a Ref (AbstractRef of the aval) */
  if (p[4] && sr_val_truthy(p[4])) b.ref = 1;
  SrVal *r = sr_array_abstract(sr_type_get(&b));
  /* .sharding: a P is a NamedSharding over the concrete mesh in context */
  SrVal *keep = p[2] && p[2]->kind != SR_V_NONE ? sr_ref(p[2]) : NULL;
  if (keep && keep->kind == SR_V_SPEC && I->jax->mesh) {
    sr_unref(keep);
    keep = sr_sharding_val(NULL, I->jax->mesh, p[2]->spec, sr_intern_cstr("device"));
  }
  ((SrArrayObj *)r->obj.data)->sharding = keep;
  ((SrArrayObj *)r->obj.data)->no_sharding = !keep; /* core.ShapeDtypeStruct.sharding: None */
  sr_unref(sh);
  return r;
}

/* ShapeDtypeStruct.like(x): x's shape, dtype and weak type, and its
   sharding where it was placed on purpose (core.ShapeDtypeStruct.like):
   a committed array's (its format's sharding), a tracer's or abstract
   value's type's over a non-empty mesh, None for an uncommitted array or
   a numpy one */
static SrVal *jax_sds_like(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "like", "x", p) < 0) return NULL;
  const SrType *t = sr_value_type(I, p[0]);
  if (!t) return NULL;
  SrArrayObj *o = sr_array_of(p[0]);
  SrVal *sh = NULL;
  if (o && o->kind == SR_AV_CONCRETE) sh = o->data->committed ? sr_getattr(I, p[0], "sharding") : sr_none();
  else if (o && t->mesh && t->mesh->n) sh = sr_type_sharding(I, t);
  else sh = sr_none();
  if (!sh) return NULL;
  SrVal *shape = sr_seq(NULL, SR_V_TUPLE, t->ndim);
  for (int d = 0; d < t->ndim; d++) sr_seq_push(NULL, shape, sr_int(NULL, t->dims[d].size));
  SrVal *argv[2] = {shape, sr_dtype_val(NULL, t->dtype)};
  const char *kw[2] = {sr_intern_cstr("sharding"), sr_intern_cstr("weak_type")};
  SrVal *kwv[2] = {sh, sr_bool(t->weak)};
  SrArgs ca = {2, argv, 2, kw, kwv, NULL};
  SrVal *r = jax_shape_dtype_struct(I, &ca);
  sr_unref(argv[0]);
  sr_unref(argv[1]);
  sr_unref(kwv[0]);
  sr_unref(kwv[1]);
  return r;
}

/* ---- tracing functions ---- */

const char *sr_callable_name(SrVal *f) {
  SrFunction *uf = sr_as_function(f);
  if (uf) return uf->name;
  const char *n = sr_builtin_name(f);
  if (n && strrchr(n, '.')) n = strrchr(n, '.') + 1;
  return sr_intern_cstr(n ? n : "<unnamed function>");
}

/* The abstract mesh of an argument's sharding (a committed array's mesh,
   a ShapeDtypeStruct's NamedSharding's), or NULL. */
static const SrMesh *arg_mesh(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  const SrMesh *m = NULL;
  if (a && a->kind == SR_AV_CONCRETE && a->data->committed) m = a->data->mesh;
  else if (a && a->kind == SR_AV_ABSTRACT && a->sharding && a->sharding->kind == SR_V_SHARDING) m = a->sharding->sh.mesh;
  if (!m || !m->n) return NULL;
  return m->abstract ? m : sr_mesh_abstract(m, 1);
}

/* whether the signature ps binds the call's arguments a
   (inspect.Signature.bind): no more positional arguments than parameters
   but for *args, each keyword a parameter not given positionally or going
   to **kwargs, and each parameter without a default given */
static int signature_binds(const SrParams *ps, const SrArgs *a) {
  int npos = ps->n - ps->nkwonly;
  if (a->n > npos && !ps->star) return 0;
  for (int i = 0; i < a->nkw; i++) {
    int p = 0;
    while (p < ps->n && strcmp(ps->names[p], a->kw[i]) != 0) p++;
    if (p == ps->n ? !ps->kwstar : p < a->n || p < ps->nposonly) return 0;
  }
  for (int p = a->n; p < ps->n; p++) {
    if (ps->defaults && ps->defaults[p]) continue;
    int given = 0;
    for (int i = 0; i < a->nkw && !given; i++) given = strcmp(ps->names[p], a->kw[i]) == 0;
    if (!given) return 0;
  }
  return 1;
}

/* (api.h) "args[i]..." where there is no signature to follow (the function
   under jax.checkpoint, jit or grad wrappers: functools.wraps's
   __wrapped__, which inspect.signature follows) */
char **sr_debug_arg_names(SrInterp *I, SrVal *f, SrArgs *a, const uint8_t *skip, int *n) {
  SrVal *target = sr_signature_target(I, f);
  SrFunction *fn = sr_as_function(target);
  const SrParams *ps = fn && fn->node ? fn->node->params : NULL;
  SrParams bound;
  if (!fn && target && target->kind == SR_V_OBJ && !sr_builtin_name(target)) {
    /* an object with __call__: its method's signature, without self */
    SrVal *call = sr_getattr(I, target, "__call__");
    SrVal *func = call ? sr_getattr(I, call, "__func__") : NULL;
    SrFunction *cf = func ? sr_as_function(func) : NULL;
    const SrParams *cp = cf && cf->node ? cf->node->params : NULL;
    if (cp && cp->n - cp->nkwonly > 0) {
      bound = *cp;
      bound.n--;
      bound.names++;
      if (bound.defaults) bound.defaults++;
      if (bound.nposonly) bound.nposonly--;
      ps = &bound;
    }
    if (!func) sr_exc_clear(I);
    sr_unref(call);
    sr_unref(func); /* the class holds it */
  }
  int cap = 16, k = 0;
  char **out = sr_xcalloc((size_t)cap, sizeof *out);
  SrBuf path = SR_BUF_INIT;
  int npos = ps ? ps->n - ps->nkwonly : 0;
  /* api_util._non_static_arg_names: the signature's names where it binds
     the arguments, else args[i] and kwargs['k'] */
  int sig = ps && signature_binds(ps, a);
  for (int i = 0; i < a->n; i++) {
    if (skip && skip[i]) continue;
    SrVal *fl = sr_pytree_flatten(I, a->v[i]);
    int nl = fl ? fl->seq.n : 0;
    sr_unref(fl);
    while (k + nl + 1 > cap) cap *= 2, out = sr_xrealloc(out, (size_t)cap * sizeof *out);
    sr_buf_reset(&path);
    if (sig && i < npos) sr_buf_puts(&path, ps->names[i]);
    else if (sig) sr_buf_printf(&path, "%s[%d]", ps->star, i - npos);
    else sr_buf_printf(&path, "args[%d]", i);
    sr_pytree_leaf_paths(a->v[i], &path, out, &k);
  }
  int *order = sr_xcalloc((size_t)a->nkw + 1, sizeof *order);
  for (int i = 0; i < a->nkw; i++) order[i] = i;
  for (int i = 1; i < a->nkw; i++)
    for (int j = i; j > 0 && strcmp(a->kw[order[j - 1]], a->kw[order[j]]) > 0; j--) {
      int tmp = order[j];
      order[j] = order[j - 1];
      order[j - 1] = tmp;
    }
  for (int q = 0; q < a->nkw; q++) {
    int i = order[q];
    if (skip && skip[a->n + i]) continue;
    SrVal *fl = sr_pytree_flatten(I, a->kwv[i]);
    int nl = fl ? fl->seq.n : 0;
    sr_unref(fl);
    while (k + nl + 1 > cap) cap *= 2, out = sr_xrealloc(out, (size_t)cap * sizeof *out);
    sr_buf_reset(&path);
    int named = 0;
    for (int p = 0; ps && p < ps->n; p++) named |= strcmp(ps->names[p], a->kw[i]) == 0;
    if (!sig) sr_buf_printf(&path, "kwargs['%s']", a->kw[i]);
    else if (named || !ps->kwstar) sr_buf_puts(&path, a->kw[i]);
    else sr_buf_printf(&path, "%s['%s']", ps->kwstar, a->kw[i]);
    sr_pytree_leaf_paths(a->kwv[i], &path, out, &k);
  }
  free(order);
  sr_buf_free(&path);
  *n = k;
  return out;
}

void sr_debug_arg_names_free(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* (api.h) api_util.fun_sourceinfo: through functools.partial and
   __wrapped__, a def's name, file and first line, else a builtin's name,
   else "<unknown>" */
void sr_fun_sourceinfo(SrInterp *I, SrBuf *src, SrVal *fn) {
  for (int depth = 0; fn && depth < 100; depth++) {
    fn = sr_signature_target(I, fn);
    if (!fn || strcmp(sr_val_kind_name(fn), "functools.partial") != 0) break;
    SrVal *g = sr_getattr(I, fn, "func");
    if (!g) {
      sr_exc_clear(I);
      break;
    }
    sr_unref(g); /* held by the partial */
    fn = g;
  }
  SrFunction *uf = sr_as_function(fn);
  if (uf && uf->code && uf->code->src) {
    uint32_t line, col;
    /* co_firstlineno: a decorated def's first decorator's line */
    const SrNode *n = uf->node;
    uint32_t off = n->kind == SR_N_DEF && n->n2 > 0 && n->list2 && n->list2[0] ? n->list2[0]->off : n->off;
    sr_src_linecol(uf->code->src, off, &line, &col);
    sr_buf_printf(src, "%s at %s:%u", uf->name, uf->code->src->name, line);
  } else if (uf || (fn && sr_builtin_name(fn))) {
    sr_buf_puts(src, sr_callable_name(fn));
  } else {
    sr_buf_puts(src, "<unknown>");
  }
}

/* pjit's cache_miss under jax.no_tracing(): -1 with its RuntimeError */
static int check_no_tracing(SrInterp *I, SrVal *fn) {
  if (!I->jax->no_tracing) return 0;
  SrBuf src = SR_BUF_INIT;
  sr_fun_sourceinfo(I, &src, fn);
  sr_raise(I, "RuntimeError", "re-tracing function %s for `jit`, but 'no_tracing' is set", sr_buf_str(&src));
  sr_buf_free(&src);
  return -1;
}

/* partial_eval._check_returned_jaxtypes: "function f at file:line traced
   for jit returned a value of type <class 'function'> at output component
   [1], which is not a valid JAX type" */
static int returned_jaxtypes(SrInterp *I, SrVal *fn, SrVal *res, int flags) {
  if (sr_pytree_check_depth(I, res) < 0) return -1;
  SrBuf path = SR_BUF_INIT, src = SR_BUF_INIT;
  SrVal *leaf = NULL;
  if (!sr_pytree_bad_leaf(I, res, &path, &leaf)) {
    sr_buf_free(&path);
    return 0;
  }
  sr_fun_sourceinfo(I, &src, fn);
  SrBuf extra = SR_BUF_INIT;
  if (path.len) sr_buf_printf(&extra, " at output component %s", path.p);
  sr_raise(I, "TypeError", "function %s traced for %s returned a value of type <class '%s'>%s, which is not a valid JAX type",
           sr_buf_str(&src), flags & SR_TRACE_FOR_MAKE_JAXPR ? "make_jaxpr" : "jit", sr_val_kind_name(leaf),
           sr_buf_str(&extra));
  sr_buf_free(&path);
  sr_buf_free(&src);
  sr_buf_free(&extra);
  return -1;
}

/* batching.matchaxis: core.typeof of an output leaf fails */
static int vmap_jaxtypes(SrInterp *I, SrVal *res) {
  if (sr_pytree_check_depth(I, res) < 0) return -1;
  SrBuf path = SR_BUF_INIT;
  SrVal *leaf = NULL;
  int bad = sr_pytree_bad_leaf(I, res, &path, &leaf);
  sr_buf_free(&path);
  if (!bad) return 0;
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, leaf);
  sr_raise(I, "TypeError", "Output from batched function %s with type <class '%s'> is not a valid JAX type",
           sr_buf_str(&b), sr_val_kind_name(leaf));
  sr_buf_free(&b);
  return -1;
}

void sr_kwargs_order(int nkw, const char *const *kw, int *ord) {
  for (int i = 0; i < nkw; i++) {
    int k = i;
    while (k > 0 && strcmp(kw[ord[k - 1]], kw[i]) > 0) {
      ord[k] = ord[k - 1];
      k--;
    }
    ord[k] = i;
  }
}

static const char *next_traced_for;
void sr_trace_fn_for(const char *traced_for) { next_traced_for = traced_for; }
static SrVal *next_fun;
static char **next_names;
static int next_nnames;
static int next_owned; /* next_names are sr_trace_fn's to free */
void sr_trace_fn_debug(SrVal *fun, char **names, int n) {
  if (next_owned && next_names) sr_debug_arg_names_free(next_names, next_nnames);
  next_owned = 0;
  next_fun = fun;
  next_names = names;
  next_nnames = n;
}

void sr_trace_fn_debug_clear(void) {
  if (next_owned && next_names) sr_debug_arg_names_free(next_names, next_nnames);
  next_traced_for = NULL;
  next_fun = NULL;
  next_names = NULL;
  next_nnames = 0;
  next_owned = 0;
}

void sr_trace_fn_debug_call(SrInterp *I, const char *traced_for, SrVal *fun, SrArgs *a, const int *statics,
                            int nstatics) {
  sr_trace_fn_debug_clear();
  uint8_t *skip = sr_xcalloc((size_t)a->n + (size_t)a->nkw + 1, 1);
  for (int i = 0; i < nstatics; i++) {
    int k = statics[i] < 0 ? statics[i] + a->n : statics[i];
    if (k >= 0 && k < a->n) skip[k] = 1;
  }
  int pending = I->exc != NULL, n = 0;
  char **names = sr_debug_arg_names(I, fun, a, skip, &n);
  free(skip);
  if (!pending) sr_exc_clear(I);
  next_traced_for = traced_for;
  next_fun = fun;
  next_names = names;
  next_nnames = n;
  next_owned = 1;
}

/* api_util.save_wrapped_fun_debug_info for the functions made here (a
   fori_loop's body): the debug info their traces take, while they are
   pushed */
typedef struct SavedDebug {
  SrVal *fn, *src_fn;
  const char *traced_for;
  char **names;
  int n, result_paths_none;
} SavedDebug;
static SavedDebug saved_debug[16];
static int nsaved_debug;

void sr_trace_fn_save_debug(SrVal *fn, const char *traced_for, SrVal *src_fn, char **names, int n,
                            int result_paths_none) {
  if (nsaved_debug == (int)(sizeof saved_debug / sizeof *saved_debug)) {
    sr_debug_arg_names_free(names, n);
    return;
  }
  saved_debug[nsaved_debug++] = (SavedDebug){fn, src_fn, traced_for, names, n, result_paths_none};
}

void sr_trace_fn_unsave_debug(SrVal *fn) {
  for (int i = nsaved_debug; i-- > 0;)
    if (saved_debug[i].fn == fn) {
      sr_debug_arg_names_free(saved_debug[i].names, saved_debug[i].n);
      memmove(saved_debug + i, saved_debug + i + 1, (size_t)(nsaved_debug - i - 1) * sizeof *saved_debug);
      nsaved_debug--;
      return;
    }
}

SrJaxpr *sr_trace_fn(SrInterp *I, SrVal *fn, int nargs, SrVal **args, int nkw, const char **kw,
                     SrVal **kwv, int flags, SrVal **out_tree, SrVal **captured) {
  SrTrace *t = sr_trace_begin(I);
  if (flags & SR_TRACE_CONSTVARS) t->capture_consts = 1;
  if (flags & SR_TRACE_SEPARATE_CONSTS) t->capture_consts = 0;
  if (flags & SR_TRACE_ALL_CONSTS) t->capture_consts = 2;
  /* a staged function's tracers know it (DynamicJaxprTracer._debug_info) */
  const char *traced_for = next_traced_for;
  next_traced_for = NULL;
  if ((flags & (SR_TRACE_FOR_JIT | SR_TRACE_FOR_MAKE_JAXPR)) || traced_for) {
    if (!traced_for) traced_for = flags & SR_TRACE_FOR_MAKE_JAXPR ? "make_jaxpr" : "jit";
  }
  SrVal *dfun = next_fun ? next_fun : fn;
  char **names = next_names;
  int nnames = next_nnames, owned = next_owned;
  next_fun = NULL;
  next_names = NULL;
  next_nnames = 0;
  next_owned = 0;
  for (int i = nsaved_debug; i-- > 0;)
    if (saved_debug[i].fn == fn) {
      if (owned && names) sr_debug_arg_names_free(names, nnames);
      owned = 0;
      traced_for = saved_debug[i].traced_for;
      dfun = saved_debug[i].src_fn;
      names = saved_debug[i].names;
      nnames = saved_debug[i].n;
      t->result_paths_none = (uint8_t)saved_debug[i].result_paths_none;
      break;
    }
  /* the debug info jax_mutable_array_checks' errors name */
  SrBuf refdbg = SR_BUF_INIT;
  if (traced_for) {
    sr_fun_sourceinfo(I, &refdbg, dfun);
    sr_buf_printf(&refdbg, " traced for %s", traced_for);
  }
  SrVal *all_leaves = sr_seq(NULL, SR_V_LIST, 0);
  /* its debug info (api_util.debug_info): the jaxpr's, and where its
     tracers are DynamicJaxprTracers theirs */
  SrDebugInfo dbg = {NULL, NULL, -1, 0, NULL, NULL};
  if (traced_for) {
    SrBuf src = SR_BUF_INIT;
    sr_fun_sourceinfo(I, &src, dfun);
    dbg.traced_for = sr_intern_cstr(traced_for);
    dbg.func_src_info = sr_intern_cstr(sr_buf_str(&src));
    sr_buf_free(&src);
    /* and the names of its arguments (debug_info.arg_names) */
    SrArgs na = {nargs, args, (flags & SR_TRACE_KWARGS) ? nkw : 0, kw, kwv, NULL};
    int pending = I->exc != NULL;
    char **own = names || pending ? NULL : sr_debug_arg_names(I, fn, &na, NULL, &nnames);
    char **use = names ? names : own;
    if (!I->exc && use) {
      dbg.narg = nnames;
      dbg.arg_names = sr_xcalloc((size_t)nnames + 1, sizeof *dbg.arg_names);
      for (int i = 0; i < nnames; i++) dbg.arg_names[i] = sr_intern_cstr(use[i]);
    }
    if (!pending) sr_exc_clear(I); /* a name that could not be made is no error of the call's */
    if (own) sr_debug_arg_names_free(own, nnames);
    if (strcmp(t->origin, "DynamicJaxprTracer") == 0) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b, "%s traced for %s", dbg.func_src_info, traced_for);
      sr_trace_set_debug_info(t, sr_buf_str(&b));
      sr_buf_free(&b);
      if (dbg.arg_names) sr_trace_set_arg_names(t, dbg.arg_names, dbg.narg);
    }
  }
  if (owned && names) sr_debug_arg_names_free(names, nnames);
  /* the positional arguments, then (SR_TRACE_KWARGS) the keyword ones in
     sorted order, each abstracted leaf by leaf */
  int ndyn = nargs + ((flags & SR_TRACE_KWARGS) ? nkw : 0);
  SrVal **targs = sr_xcalloc((size_t)ndyn + 1, sizeof *targs);
  int *ord = sr_xcalloc((size_t)nkw + 1, sizeof *ord);
  sr_kwargs_order(nkw, kw, ord);
  SrVal **tkwv = sr_xcalloc((size_t)nkw + 1, sizeof *tkwv);
  for (int k = 0; k < nkw; k++) tkwv[k] = kwv[k];
  int ok = 1;
  for (int i = 0; i < ndyn && ok; i++) {
    SrVal *arg = i < nargs ? args[i] : kwv[ord[i - nargs]];
    SrVal *leaves = sr_pytree_flatten(I, arg);
    if (!leaves) {
      ok = 0;
      break;
    }
    /* api_util.py: _make_abstract_python_scalar refuses an int the
       default int dtype cannot hold */
    if (!(flags & SR_TRACE_ANY_INT))
      for (int k = 0; k < leaves->seq.n && ok; k++) ok = sr_check_py_int(I, leaves->seq.items[k]) == 0;
    if (!ok) {
      sr_unref(leaves);
      break;
    }
    SrVal *tl = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
    for (int k = 0; k < leaves->seq.n; k++) {
      if (!t->vmesh && !t->mesh->n) t->vmesh = arg_mesh(leaves->seq.items[k]);
      sr_seq_push(NULL, tl, sr_trace_arg(I, t, sr_value_type(I, leaves->seq.items[k])));
    }
    targs[i] = sr_pytree_unflatten(arg, tl);
    if (i >= nargs) tkwv[ord[i - nargs]] = targs[i];
    for (int k = 0; k < leaves->seq.n; k++) sr_seq_push(NULL, all_leaves, sr_ref(leaves->seq.items[k]));
    sr_unref(tl);
    sr_unref(leaves);
  }
  SrVal *res = NULL;
  if (ok && traced_for)
    ok = sr_jax_check_ref_args(I, t, sr_buf_str(&refdbg), all_leaves->seq.items, all_leaves->seq.n) == 0;
  if (ok) {
    SrArgs ca = {nargs, targs, nkw, kw, tkwv, NULL};
    res = sr_trace_call(I, fn, &ca);
  }
  for (int i = 0; i < ndyn; i++) sr_unref(targs[i]);
  free(targs);
  free(tkwv);
  free(ord);
  if (res && (flags & SR_TRACE_FOR_VMAP) && vmap_jaxtypes(I, res) < 0) {
    sr_unref(res);
    res = NULL;
  }
  if (res && (flags & (SR_TRACE_FOR_JIT | SR_TRACE_FOR_MAKE_JAXPR)) && returned_jaxtypes(I, fn, res, flags) < 0) {
    sr_unref(res);
    res = NULL;
  }
  SrVal *outs = res ? sr_pytree_flatten(I, res) : NULL;
  if (outs && traced_for &&
      (sr_jax_check_returned_refs(I, t, sr_buf_str(&refdbg), outs->seq.items, outs->seq.n) < 0 ||
       sr_jax_check_closed_refs(I, t, sr_buf_str(&refdbg), all_leaves->seq.items, all_leaves->seq.n) < 0)) {
    sr_unref(outs);
    outs = NULL;
  }
  sr_buf_free(&refdbg);
  sr_unref(all_leaves);
  if (!outs) {
    sr_unref(res);
    sr_trace_abort(I, t);
    free(dbg.arg_names);
    return NULL;
  }
  int trace_id = t->id;
  const char *origin = t->origin;
  SrJaxpr *j = sr_trace_end(I, t, outs->seq.items, outs->seq.n, captured);
  sr_unref(outs);
  /* the jaxpr's debug_info, its result_paths set (set_result_paths) */
  if (j && dbg.traced_for) {
    int nres = 0, cap = 0;
    SrVal *fl = sr_pytree_flatten(I, res);
    cap = fl ? fl->seq.n : 0;
    sr_unref(fl);
    char **paths = sr_xcalloc((size_t)cap + 1, sizeof *paths);
    SrBuf path = SR_BUF_INIT;
    sr_buf_puts(&path, "result");
    sr_pytree_leaf_paths(res, &path, paths, &nres);
    sr_buf_free(&path);
    dbg.nres = nres;
    dbg.result_paths = sr_xcalloc((size_t)nres + 1, sizeof *dbg.result_paths);
    for (int i = 0; i < nres; i++) dbg.result_paths[i] = sr_intern_cstr(paths[i]);
    sr_debug_arg_names_free(paths, nres);
    j->dbg = sr_debug_info_copy(j->prog->arena, &dbg, 0);
    free(dbg.result_paths);
  }
  free(dbg.arg_names);
  if (!j) {
    sr_unref(res);
    return NULL;
  }
  /* core.ensure_no_leaks: with jax_check_tracer_leaks, no tracer of the
     trace may outlive it (but for the results handed back) */
  SrVal *held = I->jax->check_tracer_leaks && out_tree ? sr_pytree_flatten_any(I, res) : NULL;
  if (I->jax->check_tracer_leaks && sr_trace_leaked(I, trace_id, origin, held) < 0) {
    sr_unref(held);
    sr_unref(res);
    sr_program_unref(j->prog);
    if (captured) {
      sr_unref(*captured);
      *captured = NULL;
    }
    return NULL;
  }
  sr_unref(held);
  const char *nm = sr_builtin_name(fn);
  if ((flags & SR_TRACE_SHORT_NAME) && nm && strrchr(nm, '.')) nm = strrchr(nm, '.') + 1;
  if (nm) j->name = sr_arena_strndup(j->prog->arena, nm, strlen(nm));
  if (out_tree) *out_tree = res;
  else sr_unref(res);
  return j;
}

static int custom_call_trace(SrInterp *I, SrVal *fun, const char *name, SrArgs *a, SrCustomCall *cc, SrVal **eager);

int sr_custom_call_trace(SrInterp *I, SrVal *fun, const char *name, SrArgs *a, SrCustomCall *cc, SrVal **eager) {
  return custom_call_trace(I, fun, name, a, cc, eager);
}

int sr_custom_call_trace_always(SrInterp *I, SrVal *fun, const char *name, SrArgs *a, SrCustomCall *cc) {
  return custom_call_trace(I, fun, name, a, cc, NULL);
}

static int custom_call_trace(SrInterp *I, SrVal *fun, const char *name, SrArgs *a, SrCustomCall *cc, SrVal **eager) {
  memset(cc, 0, sizeof *cc);
  if (eager) *eager = NULL;
  cc->args = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, cc->args, sr_ref(a->v[i]));
  cc->leaves = sr_pytree_array_leaves(I, cc->args);
  int concrete = eager && cc->leaves && !I->trace;
  for (int i = 0; concrete && i < cc->leaves->seq.n; i++) concrete = sr_tracers_is_concrete(cc->leaves->seq.items[i]);
  if (concrete) {
    sr_unref(cc->args);
    sr_unref(cc->leaves);
    memset(cc, 0, sizeof *cc);
    *eager = sr_call(I, fun, a);
    return *eager ? 1 : -1;
  }
  /* the function's tracers hold the arguments' values where an enclosing
     eager jvp or grad knows them */
  if (cc->leaves && I->trace) sr_tracers_custom_next(I, a->n, a->v);
  /* custom_vmap's fun is always traced to a jaxpr (DynamicJaxprTracers) */
  if (cc->leaves && I->trace && !eager) sr_trace_next_class(I, NULL);
  cc->body = cc->leaves ? sr_trace_fn(I, fun, a->n, a->v, 0, NULL, NULL, 0, &cc->out_tree, &cc->captured) : NULL;
  if (cc->leaves && I->trace) sr_trace_next_repr(I, NULL, NULL);
  if (!cc->body) {
    sr_unref(cc->args);
    sr_unref(cc->leaves);
    return -1;
  }
  cc->body->name = name;
  return 0;
}

SrVal *sr_custom_call_bind(SrInterp *I, int prim, SrCustomCall *cc, SrPList *ps) {
  SrVal *ins = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < cc->captured->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(cc->captured->seq.items[i]));
  for (int i = 0; i < cc->leaves->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(cc->leaves->seq.items[i]));
  SrVal *r = sr_bind(I, prim, ins->seq.n, ins->seq.items, ps->n, ps->p);
  sr_plist_free(ps);
  sr_program_unref(cc->body->prog);
  SrVal *res = r ? sr_pytree_unflatten(cc->out_tree, r) : NULL;
  sr_unref(r);
  sr_unref(ins);
  sr_unref(cc->captured);
  sr_unref(cc->out_tree);
  sr_unref(cc->leaves);
  sr_unref(cc->args);
  return res;
}

/* jax.make_jaxpr(f, static_argnums=...)(*args) */
typedef struct MakeJaxpr {
  SrVal *fn;
  SrJitOpts opts;
  int return_shape; /* (jaxpr, the outputs' ShapeDtypeStructs) */
  /* axis_env=[(name, size), ...]: named axes bound while tracing
     (core.extend_axis_env_nd), as a vmap binds its axis_name */
  const char **axis_names;
  int64_t *axis_sizes;
  int naxes;
} MakeJaxpr;

static void make_jaxpr_free(void *d) {
  MakeJaxpr *m = d;
  sr_unref(m->fn);
  free(m->axis_names);
  free(m->axis_sizes);
  free(m);
}

static SrVal *make_jaxpr_call(SrInterp *I, SrArgs *a) {
  MakeJaxpr *m = sr_current_builtin(I)->data;
  SrJitSplit sp;
  if (sr_jit_split(I, &m->opts, m->fn, sr_callable_name(m->fn), a, &sp) < 0) return NULL;
  SrVal *tree = NULL;
  int nvmap0 = I->jax->nvmap;
  if (nvmap0 + m->naxes > SR_MAX_VMAP_AXES) {
    sr_jit_split_free(&sp);
    return sr_raise(I, "NotImplementedError", "make_jaxpr: more than %d named axes", SR_MAX_VMAP_AXES);
  }
  for (int k = 0; k < m->naxes; k++) {
    I->jax->vmap_axis[nvmap0 + k] = m->axis_names[k];
    I->jax->vmap_size[nvmap0 + k] = m->axis_sizes[k];
  }
  I->jax->nvmap = nvmap0 + m->naxes;
  sr_jit_split_debug(&sp);
  SrJaxpr *j = sr_trace_fn(I, sp.fn, sp.a.n, sp.a.v, sp.a.nkw, sp.a.kw, sp.a.kwv, SR_TRACE_FOR_MAKE_JAXPR | SR_TRACE_KWARGS | SR_TRACE_ALL_CONSTS,
                           m->return_shape ? &tree : NULL, NULL);
  I->jax->nvmap = nvmap0;
  sr_jit_split_free(&sp);
  if (!j) return NULL;
  SrVal *r = sr_jaxpr_val(NULL, j);
  if (m->return_shape) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->nout);
    for (uint32_t i = 0; i < j->nout; i++) sr_seq_push(NULL, l, sr_array_abstract(sr_atom_type(j->outvars[i])));
    SrVal *shapes = sr_pytree_unflatten(tree, l);
    sr_unref(l);
    sr_unref(tree);
    SrVal *pair = sr_tuple(NULL, 0, NULL);
    sr_seq_push(NULL, pair, r);
    sr_seq_push(NULL, pair, shapes);
    r = pair;
  }
  sr_program_unref(j->prog); /* the value holds it now */
  return r;
}

static SrVal *jax_make_jaxpr(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "make_jaxpr", "fun, static_argnums=, axis_env=, return_shape=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(p[0]));
  SrVal *env = p[2] && p[2]->kind != SR_V_NONE ? p[2] : NULL;
  if (env && env->kind != SR_V_LIST && env->kind != SR_V_TUPLE)
    return sr_raise(I, "TypeError", "make_jaxpr: axis_env must be a sequence of (axis_name, size) pairs");
  for (int k = 0; env && k < env->seq.n; k++) {
    SrVal *pr = env->seq.items[k];
    if ((pr->kind != SR_V_TUPLE && pr->kind != SR_V_LIST) || pr->seq.n != 2 || pr->seq.items[0]->kind != SR_V_STR ||
        pr->seq.items[1]->kind != SR_V_INT)
      return sr_raise(I, "TypeError", "make_jaxpr: axis_env must be a sequence of (axis_name, size) pairs");
  }
  p[2] = p[3];
  MakeJaxpr *m = sr_xcalloc(1, sizeof *m);
  if (env && env->seq.n) {
    m->naxes = env->seq.n;
    m->axis_names = sr_xcalloc((size_t)m->naxes, sizeof *m->axis_names);
    m->axis_sizes = sr_xcalloc((size_t)m->naxes, sizeof *m->axis_sizes);
    for (int k = 0; k < m->naxes; k++) {
      m->axis_names[k] = sr_intern_cstr(env->seq.items[k]->seq.items[0]->str.s);
      m->axis_sizes[k] = env->seq.items[k]->seq.items[1]->i;
    }
  }
  /* make_jaxpr checks no signature: its numbers are taken as given */
  if (sr_jit_opts_parse(I, NULL, p[1], NULL, NULL, NULL, &m->opts) < 0) {
    make_jaxpr_free(m);
    return NULL;
  }
  m->fn = sr_ref(p[0]);
  m->return_shape = p[2] && sr_val_truthy(p[2]);
  /* wraps(fun, "make_jaxpr({})"), in module jax */
  const char *fname = sr_callable_name(p[0]);
  if (!fname) fname = "fun";
  if (strrchr(fname, '.')) fname = strrchr(fname, '.') + 1;
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "jax.make_jaxpr(%s)", fname);
  const char *nm = sr_intern_cstr(b.p);
  sr_buf_free(&b);
  return sr_builtin_with(nm, make_jaxpr_call, m, make_jaxpr_free);
}

/* ---- jax.jit ---- */

typedef struct Jit {
  SrVal *fn;
  const char *name;
  SrVal *in_sh, *out_sh; /* in_shardings= and out_shardings=, or NULL */
  SrJitOpts opts;         /* static and donated arguments */
  SrVal *device;          /* device= (or backend='cpu''s first device), or NULL */
  int inline_early;       /* inline=True or Inline.JAX_EARLY */
  int resource_env;       /* pjit: the mesh of `with mesh:` is the context
                             mesh, a None sharding replicated over it */
  SrVal *pj_in, *pj_out;  /* pjit's in_shardings= / out_shardings= as given
                             (None kept), or NULL: unspecified */
  int pjit;               /* made by jax.experimental.pjit.pjit */
  SrVal *copts;           /* compiler_options= (a non-empty dict), or NULL */
} Jit;

/* pjit.get_ctx_mesh: pjit's is the resource env's (`with mesh:`), jit's
   set_mesh's */
const SrMesh *sr_jit_ctx_mesh(SrInterp *I) {
  if (I->jax->pjit_call && sr_jax_resource_mesh(I->jax)) return sr_jax_resource_mesh(I->jax);
  return I->jax->mesh;
}

void sr_jit_mark_pjit(SrVal *jit) {
  if (jit && jit->kind == SR_V_OBJ && strcmp(sr_val_kind_name(jit), "PjitFunction") == 0) ((Jit *)jit->obj.data)->pjit = 1;
}

static void jit_free(void *d) {
  Jit *j = d;
  sr_unref(j->copts);
  sr_unref(j->device);
  sr_unref(j->fn);
  sr_unref(j->in_sh);
  sr_unref(j->out_sh);
  sr_unref(j->pj_in);
  sr_unref(j->pj_out);
  free(j);
}

static void jit_repr(SrBuf *out, const SrVal *v) {
  const Jit *j = v->obj.data;
  /* f"<PjitFunction of {repr(fun)}>" for a callable object, and
     "<PjitFunction>" when its repr raises */
  if (j->fn->kind == SR_V_OBJ && sr_class_instance_callable(j->fn) > 0) {
    SrBuf r = SR_BUF_INIT;
    if (sr_class_repr_or_fail(&r, j->fn) == 0) sr_buf_printf(out, "<PjitFunction of %s>", sr_buf_str(&r));
    else sr_buf_puts(out, "<PjitFunction>");
    sr_buf_free(&r);
    return;
  }
  sr_buf_printf(out, "<PjitFunction of <function %s>>", j->name);
}

/* The params of a jit equation, in JAX's order (pjit.py: _pjit_call);
   formats: in_shardings, out_shardings, in_layouts, out_layouts (stolen),
   or NULL when jit was given none. */
static void jit_params(SrInterp *I, SrPList *ps, SrJaxpr *body, const char *name, SrVal **formats,
                       const uint8_t *don, int ndon) {
  uint32_t n = body->nin, m = body->nout;
  SrVal *unspec_in = sr_seq(NULL, SR_V_TUPLE, (int)n), *unspec_out = sr_seq(NULL, SR_V_TUPLE, (int)m);
  SrVal *donated = sr_seq(NULL, SR_V_TUPLE, (int)n);
  for (uint32_t i = 0; i < n; i++) {
    sr_seq_push(NULL, unspec_in, sr_word(NULL, "UnspecifiedValue", 16));
    sr_seq_push(NULL, donated, sr_bool((int)i < ndon && don[i]));
  }
  for (uint32_t i = 0; i < m; i++) sr_seq_push(NULL, unspec_out, sr_word(NULL, "UnspecifiedValue", 16));
  sr_plist_add(ps, "jaxpr", sr_jaxpr_val(NULL, body));
  if (formats) {
    sr_unref(unspec_in);
    sr_unref(unspec_out);
    sr_plist_add(ps, "in_shardings", formats[0]);
    sr_plist_add(ps, "out_shardings", formats[1]);
    sr_plist_add(ps, "in_layouts", formats[2]);
    sr_plist_add(ps, "out_layouts", formats[3]);
  } else {
    sr_plist_add(ps, "in_shardings", unspec_in);
    sr_plist_add(ps, "out_shardings", unspec_out);
    sr_plist_add(ps, "in_layouts", sr_none_tuple((int)n));
    sr_plist_add(ps, "out_layouts", sr_none_tuple((int)m));
  }
  sr_plist_add(ps, "donated_invars", donated);
  const SrMesh *mesh = I->jax->mesh;
  SrMesh empty = {0};
  sr_plist_add(ps, "ctx_mesh", sr_mesh_val(NULL, mesh ? mesh : sr_mesh_intern(&empty)));
  sr_plist_add(ps, "name", sr_str_cstr(NULL, name));
  sr_plist_add(ps, "keep_unused", sr_bool(0));
  sr_plist_add(ps, "inline", sr_bool(0));
  sr_plist_add(ps, "compiler_options_kvs", sr_seq(NULL, SR_V_TUPLE, 0));
}

/* Calls a jitted function: traces it, then binds a jit equation (which a
   trace records, and concrete arguments run). */
/* Traces fn on a's arguments and binds a call primitive on them: jit
   (params from jit_params) or remat2 (jax.checkpoint). */
static SrVal *call_traced(SrInterp *I, SrVal *fn, const char *name, SrArgs *a, int prim, int prevent_cse,
                          SrVal *in_sh, SrVal *out_sh);

SrVal *sr_jit_call(SrInterp *I, SrVal *fn, const char *name, SrArgs *a) {
  return call_traced(I, fn, name, a, SR_P_jit, 0, NULL, NULL);
}

SrVal *sr_jit_call_sharded(SrInterp *I, SrVal *fn, const char *name, SrArgs *a, SrVal *in_sh, SrVal *out_sh) {
  return call_traced(I, fn, name, a, SR_P_jit, 0, in_sh, out_sh);
}

static SrVal *bind_body(SrInterp *I, SrJaxpr *body, SrVal *out_tree, SrVal *captured, const char *name, SrArgs *a,
                        int prim, int prevent_cse, SrVal *in_sh, SrVal *out_sh);
/* The donation of the split call being bound (jit_call), or NULL. */
static const SrJitSplit *binding_split;
/* the function call_traced traced, for its parameter names */
static SrVal *binding_fn;
/* jax.checkpoint's policy for the remat2 equation bind_body makes next */
static SrVal *binding_policy;
/* the jit bind_body binds next has inline=True (Inline.JAX_EARLY) */
static int binding_inline;

static SrVal *call_traced(SrInterp *I, SrVal *fn, const char *name, SrArgs *a, int prim, int prevent_cse,
                          SrVal *in_sh, SrVal *out_sh) {
  if (in_sh && a->nkw) return sr_raise(I, "ValueError", "pjit does not support kwargs when in_shardings is specified.");
  if (prim == SR_P_jit && I->jax->disable_jit && !in_sh && !out_sh) return sr_call(I, fn, a);
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *body = sr_trace_fn(I, fn, a->n, a->v, a->nkw, a->kw, a->kwv, SR_TRACE_KWARGS, &out_tree, &captured);
  if (!body) return NULL;
  binding_fn = fn;
  return bind_body(I, body, out_tree, captured, name, a, prim, prevent_cse, in_sh, out_sh);
}

/* ---- pxla._get_and_check_device_assignment, as pjit reports it ---- */

enum { DA_ARG, DA_CONST, DA_OUT, DA_CTX, DA_INSIDE, DA_MAX = 512 };
typedef struct DevAssign {
  int n, ids[DA_MAX];
  int kind;
  const char *prim, *loc; /* DA_INSIDE's equation's primitive and source */
} DevAssign;

/* The devices of a concrete sharding in order (a NamedSharding's mesh's,
   a SingleDeviceSharding's device): 0, or -1 for another value. */
static int sharding_devices(SrInterp *I, SrVal *sh, DevAssign *d) {
  d->n = 0;
  if (!sh) return -1;
  if (sh->kind == SR_V_SHARDING) {
    const SrMesh *m = sh->sh.mesh;
    if (m->abstract || !m->n) return -1;
    for (int p = 0; p < sr_mesh_ndev(m) && d->n < DA_MAX; p++) d->ids[d->n++] = sr_mesh_device(m, p);
    return 0;
  }
  if (sh->kind == SR_V_OBJ && strcmp(sr_val_kind_name(sh), "SingleDeviceSharding") == 0) {
    SrVal *ds = sr_getattr(I, sh, "device_set");
    SrVal *l = ds ? sr_iterate(I, ds) : NULL;
    sr_unref(ds);
    if (!l) {
      sr_exc_clear(I);
      return -1;
    }
    for (int i = 0; i < l->seq.n && d->n < DA_MAX; i++) {
      int id = sr_concrete_device_id(l->seq.items[i]);
      if (id >= 0) d->ids[d->n++] = id;
    }
    sr_unref(l);
    return d->n ? 0 : -1;
  }
  return -1;
}

static void array_devices(const SrArray *x, DevAssign *d) {
  d->n = 0;
  for (int p = 0; p < x->ndev && d->n < DA_MAX; p++)
    d->ids[d->n++] = x->mesh ? sr_mesh_device(x->mesh, p) : 0;
}

static int da_equal(const DevAssign *a, const DevAssign *b) {
  return a->n == b->n && memcmp(a->ids, b->ids, (size_t)a->n * sizeof a->ids[0]) == 0;
}

static void da_ids(SrBuf *b, const DevAssign *d) {
  sr_buf_puts(b, "with device ids [");
  for (int i = 0; i < d->n; i++) sr_buf_printf(b, "%s%d", i ? ", " : "", d->ids[i]);
  sr_buf_puts(b, "] on platform CPU");
}

/* MismatchType's words (stages.py: ARG_SHARDING and SHARDING_INSIDE_... by
   name) in DeviceAssignmentMismatch._str */
static void da_str(SrBuf *b, const DevAssign *d) {
  static const char *const words[] = {"ARG_SHARDING", "closed over constant sharding", "explicit output sharding",
                                      "context mesh"};
  if (d->kind == DA_INSIDE) sr_buf_printf(b, " %s inside jit ", d->prim);
  else sr_buf_printf(b, "%s %s ", d->kind == DA_CTX ? " jit's" : "", words[d->kind]);
  da_ids(b, d);
  if (d->kind == DA_INSIDE && d->loc) sr_buf_printf(b, " at %s", d->loc);
}

/* dispatch.get_intermediate_shardings: the concrete shardings a body's
   device_put (its devices) and sharding_constraint equations name, those
   of inner jaxprs after; the k-th of them in d (0), or -1 past the last */
typedef struct {
  int k;
  DevAssign *d;
} InsideFind;

static int inside_sharding(SrInterp *I, const SrJaxpr *j, InsideFind *f, int depth) {
  if (!j || depth > 64) return -1;
  for (uint32_t e = 0; e < j->neqn; e++) {
    const SrEqn *q = &j->eqns[e];
    const char *key = strcmp(q->prim->name, "device_put") == 0           ? "devices"
                      : strcmp(q->prim->name, "sharding_constraint") == 0 ? "sharding"
                                                                          : NULL;
    for (uint32_t p = 0; key && p < q->nparams; p++) {
      if (strcmp(q->params[p].key, key) != 0) continue;
      const SrVal *v = q->params[p].val;
      int n = sr_is_seq(v) ? (int)v->seq.n : 1;
      for (int i = 0; i < n; i++) {
        SrVal *sh = sr_is_seq(v) ? v->seq.items[i] : (SrVal *)v;
        if (sharding_devices(I, sh, f->d) < 0) continue;
        if (f->k-- == 0) {
          f->d->kind = DA_INSIDE;
          f->d->prim = q->prim->name;
          f->d->loc = q->loc;
          return 0;
        }
      }
    }
  }
  for (uint32_t e = 0; e < j->neqn; e++)
    for (uint32_t p = 0; p < j->eqns[e].nparams; p++) {
      const SrVal *v = j->eqns[e].params[p].val;
      if (v && v->kind == SR_V_JAXPR && inside_sharding(I, v->jx.jaxpr, f, depth + 1) == 0) return 0;
    }
  return -1;
}

/* The debug info's name of each of the nin argument leaves: the
   parameter's (or *args' entry's) name and the leaf's key path; malloc'd
   strings, NULL past the arguments. */
static char **arg_leaf_names(SrInterp *I, SrVal *fn, SrVal **args, int nargs, int nin) {
  char **paths = sr_xcalloc((size_t)nin + 1, sizeof *paths);
  SrFunction *f = fn ? sr_as_function(fn) : NULL;
  int k = 0;
  for (int i = 0; i < nargs && k <= nin; i++) {
    SrBuf pb = SR_BUF_INIT;
    const SrParams *ps = f && f->node ? f->node->params : NULL;
    int npos = ps ? ps->n - ps->nkwonly : 0;
    if (ps && i < npos) sr_buf_puts(&pb, ps->names[i]);
    else if (ps && ps->star) sr_buf_printf(&pb, "%s[%d]", ps->star, i - npos);
    SrVal *leaves = sr_pytree_flatten(I, args[i]);
    int n = leaves ? leaves->seq.n : 1;
    sr_unref(leaves);
    if (I->exc) sr_exc_clear(I);
    /* the names past nin are not kept */
    if (k + n > nin) {
      sr_buf_free(&pb);
      break;
    }
    sr_pytree_leaf_paths(args[i], &pb, paths, &k);
    sr_buf_free(&pb);
  }
  return paths;
}

/* pjit's check of what jit is called with: a ShapeDtypeStruct (an
   abstract value) is no argument to run on: TypeError naming it. */
static int check_valid_args(SrInterp *I, SrVal *fn, SrVal **args, int nargs, SrVal **leaves, int nin) {
  for (int i = 0; i < nin; i++) {
    SrArrayObj *o = sr_array_of(leaves[i]);
    if (!o || o->kind != SR_AV_ABSTRACT) continue;
    char **paths = arg_leaf_names(I, fn, args, nargs, nin);
    SrTypeCtx cx;
    SrDiags d = SR_DIAGS_INIT;
    sr_type_ctx(I, &cx, &d);
    SrBuf b = SR_BUF_INIT;
    sr_aval_str_short(&b, &cx, sr_value_type(I, leaves[i]), 0, 0);
    sr_diags_clear(&d);
    sr_raise(I, "TypeError", "Argument '%s' of shape %s of type <class 'jax._src.api.ShapeDtypeStruct'> is not a valid JAX type.",
             paths[i] ? paths[i] : "", sr_buf_str(&b));
    sr_buf_free(&b);
    for (int k = 0; k < nin; k++) free(paths[k]);
    free(paths);
    return -1;
  }
  return 0;
}

/* Every committed argument, explicit in_sharding and out_sharding, and the
   mesh in context, on the same devices; else pjit's ValueError "Received
   incompatible devices for jitted computation" naming the first pair
   that differs (the arguments among them by name and aval). */
static int check_devices_match(SrInterp *I, const char *name, SrVal *fn, SrVal **args, int nargs, SrVal **leaves,
                               int nleaves, int ncaptured, const SrJitFlat *fi, const SrJitFlat *fo,
                               const SrJaxpr *body) {
  DevAssign first = {0}, cur, ctx = {0};
  int have_first = 0, have_ctx = 0;
  const SrMesh *cm = sr_jit_ctx_mesh(I);
  if (cm && cm->n && !cm->abstract) {
    for (int p = 0; p < sr_mesh_ndev(cm) && ctx.n < DA_MAX; p++) ctx.ids[ctx.n++] = sr_mesh_device(cm, p);
    ctx.kind = DA_CTX;
    have_ctx = 1;
  }
  DevAssign fail[2];
  int failed = 0;
  int nin = nleaves - ncaptured;
  int nbc = body ? (int)body->nconst : 0;
  for (int pass = 0; pass < 4 && !failed; pass++) {
    int n = pass == 0 ? nin : pass == 1 ? ncaptured + nbc : pass == 2 ? (fo ? fo->n : 0) : INT_MAX;
    for (int i = 0; i < n && !failed; i++) {
      int ok = -1;
      if (pass == 0) {
        SrVal *sh = fi && i < fi->n ? fi->e[i].sh : NULL;
        if (sh) ok = sharding_devices(I, sh, &cur);
        else {
          SrArray *x = sr_jit_leaf_array(leaves[ncaptured + i]);
          if (x && x->committed) {
            array_devices(x, &cur);
            ok = 0;
          }
        }
        cur.kind = DA_ARG;
      } else if (pass == 1) {
        /* the captured values, then the body's own constants */
        SrVal *cv = i < ncaptured ? leaves[i] : body->consts ? body->consts[i - ncaptured] : NULL;
        SrArray *x = cv ? sr_jit_leaf_array(cv) : NULL;
        if (x && x->committed) {
          array_devices(x, &cur);
          ok = 0;
        }
        cur.kind = DA_CONST;
      } else if (pass == 2) {
        ok = sharding_devices(I, fo->e[i].sh, &cur);
        cur.kind = DA_OUT;
      } else {
        InsideFind f = {i, &cur};
        if (inside_sharding(I, body, &f, 0) < 0) break;
        ok = 0;
      }
      if (ok < 0) continue;
      if (!have_first) {
        first = cur;
        have_first = 1;
      }
      if (have_ctx) {
        if (!da_equal(&ctx, &cur)) {
          fail[0] = ctx;
          fail[1] = cur;
          failed = 1;
        }
      } else if (!da_equal(&first, &cur)) {
        fail[0] = first;
        fail[1] = cur;
        failed = 1;
      }
    }
  }
  if (!failed) return 0;
  /* stages._find_arg_mismatch: an ARG_SHARDING failure names the first
     argument whose own sharding is on those devices */
  SrBuf b = SR_BUF_INIT, t = SR_BUF_INIT;
  char **paths = arg_leaf_names(I, fn, args, nargs, nin);
  const char *msg[2] = {NULL, NULL};
  SrBuf mb[2] = {SR_BUF_INIT, SR_BUF_INIT};
  int nmatched = 0;
  for (int j = 0; j < 2; j++) {
    if (fail[j].kind != DA_ARG) continue;
    for (int i = 0; i < nin; i++) {
      SrArray *x = sr_jit_leaf_array(leaves[ncaptured + i]);
      if (!x) continue;
      DevAssign ad;
      array_devices(x, &ad);
      if (!da_equal(&ad, &fail[j])) continue;
      SrTypeCtx cx;
      SrDiags d = SR_DIAGS_INIT;
      sr_type_ctx(I, &cx, &d);
      sr_buf_printf(&mb[nmatched], "argument %s of %s with shape ", paths[i] ? paths[i] : "", name);
      sr_aval_str_short(&mb[nmatched], &cx, sr_value_type(I, leaves[ncaptured + i]), 0, 0);
      sr_diags_clear(&d);
      sr_buf_puts(&mb[nmatched], " and ");
      da_ids(&mb[nmatched], &fail[j]);
      msg[nmatched] = mb[nmatched].p;
      nmatched++;
      break;
    }
  }
  if (nmatched == 2) {
    sr_buf_printf(&b, " Got %s and %s", msg[0], msg[1]);
  } else if (nmatched == 1) {
    const DevAssign *left = fail[0].kind == DA_ARG ? &fail[1] : &fail[0];
    sr_buf_printf(&b, " Got %s and", msg[0]);
    da_str(&b, left);
  } else {
    sr_buf_puts(&b, " Got");
    da_str(&b, &fail[0]);
    sr_buf_puts(&b, " and");
    da_str(&b, &fail[1]);
  }
  sr_raise(I, "ValueError", "Received incompatible devices for jitted computation.%s", b.p);
  for (int i = 0; i < nin; i++) free(paths[i]);
  free(paths);
  sr_buf_free(&mb[0]);
  sr_buf_free(&mb[1]);
  sr_buf_free(&b);
  sr_buf_free(&t);
  return -1;
}

/* pxla's lowering check: a jit run on the devices of its committed
   arguments (or of the context mesh, or on one device) cannot return a
   value typed over a fully Explicit mesh of another size. */
/* The devices of a concrete sharding in a param value (device_put's
   devices, a sharding_constraint's sharding), inner jaxprs included: 0
   for none. */
static int param_devices(const SrVal *v, int depth) {
  if (!v || depth > 64) return 0;
  if (v->kind == SR_V_SHARDING) return !v->sh.mesh->abstract && v->sh.mesh->n ? sr_mesh_ndev(v->sh.mesh) : 0;
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    for (int i = 0; i < v->seq.n; i++) {
      int n = param_devices(v->seq.items[i], depth + 1);
      if (n) return n;
    }
    return 0;
  }
  if (v->kind == SR_V_JAXPR) {
    const SrJaxpr *j = v->jx.jaxpr;
    for (uint32_t k = 0; k < j->neqn; k++)
      for (uint32_t p = 0; p < j->eqns[k].nparams; p++) {
        int n = param_devices(j->eqns[k].params[p].val, depth + 1);
        if (n) return n;
      }
  }
  return 0;
}

static int check_device_assignment(SrInterp *I, const SrJaxpr *body, SrVal *leaves) {
  int nda = 0;
  /* pxla: the devices of the arguments' and the jaxpr's shardings */
  for (uint32_t k = 0; k < body->neqn && !nda; k++)
    for (uint32_t p = 0; p < body->eqns[k].nparams && !nda; p++) nda = param_devices(body->eqns[k].params[p].val, 0);
  for (int i = 0; i < leaves->seq.n && !nda; i++) {
    SrArrayObj *a = sr_array_of(leaves->seq.items[i]);
    if (a && a->kind == SR_AV_CONCRETE && a->data->committed) nda = sr_mesh_ndev(a->data->mesh);
  }
  if (!nda) nda = I->jax->mesh && I->jax->mesh->n ? sr_mesh_ndev(I->jax->mesh) : 1;
  const SrMesh *ctx = sr_jax_abstract_mesh(I->jax);
  for (uint32_t i = 0; i < body->nout; i++) {
    const SrType *t = body->outvars[i]->type;
    if (!t || !t->mesh || !t->mesh->n) continue;
    /* the aval's axis types: the context's where it is that mesh (types
       name Explicit axes only) */
    int explicit = 1;
    if (ctx->n && sr_mesh_shape(ctx) == t->mesh)
      for (int k = 0; k < ctx->n; k++) explicit &= ctx->types[k] == SR_AXIS_EXPLICIT;
    int64_t size = sr_mesh_size(t->mesh);
    if (!explicit || size == nda || t->mesh->unsized) continue;
    SrTypeCtx cx;
    SrDiags d = SR_DIAGS_INIT;
    sr_type_ctx(I, &cx, &d);
    SrBuf b = SR_BUF_INIT;
    sr_aval_str_short(&b, &cx, t, 1, 1);
    sr_diags_clear(&d);
    sr_raise(I, "ValueError",
             "Length of device assignment %d is not equal to the size of the mesh %lld of aval %s. Please enter "
             "your `jit` into a mesh context via `jax.set_mesh`.",
             nda, (long long)size, sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

/* Binds the call primitive on a traced body: the captured values, then the
   arguments' leaves.  Takes body's program reference, out_tree and
   captured (NULL for none). */
static SrVal *bind_body(SrInterp *I, SrJaxpr *body, SrVal *out_tree, SrVal *captured, const char *name, SrArgs *a,
                        int prim, int prevent_cse, SrVal *in_sh, SrVal *out_sh) {
  const SrJitSplit *split = binding_split;
  binding_split = NULL;
  SrVal *fn_named = binding_fn;
  binding_fn = NULL;
  SrVal *policy = binding_policy;
  binding_policy = NULL;
  int inline_early = binding_inline;
  binding_inline = 0;
  if (!captured) captured = sr_seq(NULL, SR_V_LIST, 0);
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, leaves, sr_ref(captured->seq.items[i]));
  int *ord = sr_xcalloc((size_t)a->nkw + 1, sizeof *ord);
  sr_kwargs_order(a->nkw, a->kw, ord);
  for (int i = 0; i < a->n + a->nkw; i++) {
    SrVal *l = sr_pytree_flatten(I, i < a->n ? a->v[i] : a->kwv[ord[i - a->n]]);
    for (int k = 0; l && k < l->seq.n; k++) sr_seq_push(NULL, leaves, sr_ref(l->seq.items[k]));
    sr_unref(l);
  }
  free(ord);
  SrPList ps = {0};
  SrVal *formats[4];
  if (prim == SR_P_jit && (in_sh || out_sh) &&
      sr_jit_formats(I, split ? split->fn : NULL, in_sh, out_sh, a->n, a->v, captured->seq.n, out_tree, formats) < 0) {
    sr_program_unref(body->prog);
    sr_unref(leaves);
    sr_unref(captured);
    sr_unref(out_tree);
    return NULL;
  }
  if (prim == SR_P_jit && !I->trace) {
    SrJitFlat fi = {0}, fo = {0};
    int rc = sr_jit_flat_entries(I, in_sh, a->n, a->v, NULL, "in_shardings", &fi);
    if (rc == 0) rc = sr_jit_flat_entries(I, out_sh, 0, NULL, out_tree, "out_shardings", &fo);
    if (rc == 0)
      rc = check_valid_args(I, fn_named, a->v, a->n, leaves->seq.items + captured->seq.n,
                            leaves->seq.n - captured->seq.n);
    /* mlir's constant handler of a ShapeDtypeStruct: a closed-over one */
    for (int i = 0; rc == 0 && i < captured->seq.n; i++) {
      SrArrayObj *o = sr_array_of(captured->seq.items[i]);
      if (o && o->kind == SR_AV_ABSTRACT) {
        sr_raise(I, "TypeError",
                 "A ShapeDtypeStruct does not have a value and cannot be used as a constant in a JAX function.");
        rc = -1;
      }
    }
    if (rc == 0)
      rc = check_devices_match(I, name, fn_named, a->v, a->n, leaves->seq.items, leaves->seq.n, captured->seq.n,
                               &fi, &fo, body);
    sr_jit_flat_free(&fi);
    sr_jit_flat_free(&fo);
    if (rc < 0) {
      if (in_sh || out_sh)
        for (int k = 0; k < 4; k++) sr_unref(formats[k]); /* made above, not yet the params' */
      sr_program_unref(body->prog);
      sr_unref(leaves);
      sr_unref(captured);
      sr_unref(out_tree);
      return NULL;
    }
  }
  /* pxla: the computation's devices are the mesh's in context, else
     those of the committed arguments; the uncommitted arguments are put
     there (replicated) first */
  const SrMesh *da_mesh = NULL;
  uint8_t *given = NULL; /* per leaf: an in_sharding says where it goes */
  if (prim == SR_P_jit && !I->trace) {
    const SrMesh *cm = sr_jit_ctx_mesh(I);
    if (cm && !cm->abstract && cm->n) da_mesh = cm;
    if (in_sh || out_sh) {
      SrJitFlat fi = {0}, fo = {0};
      given = sr_xcalloc((size_t)leaves->seq.n + 1, 1);
      if (sr_jit_flat_entries(I, in_sh, a->n, a->v, NULL, "in_shardings", &fi) == 0 &&
          sr_jit_flat_entries(I, out_sh, 0, NULL, out_tree, "out_shardings", &fo) == 0) {
        for (int i = 0; i < fi.n; i++) {
          SrVal *e = fi.e[i].sh;
          if (!e) continue;
          if (captured->seq.n + i < leaves->seq.n) given[captured->seq.n + i] = 1;
          if (!da_mesh && e->kind == SR_V_SHARDING && !e->sh.mesh->abstract && e->sh.mesh->n) da_mesh = e->sh.mesh;
        }
        for (int i = 0; i < fo.n && !da_mesh; i++) {
          SrVal *e = fo.e[i].sh;
          if (e && e->kind == SR_V_SHARDING && !e->sh.mesh->abstract && e->sh.mesh->n) da_mesh = e->sh.mesh;
        }
      }
      sr_exc_clear(I);
      sr_jit_flat_free(&fi);
      sr_jit_flat_free(&fo);
    }
    for (int i = 0; i < leaves->seq.n && !da_mesh; i++) {
      SrArray *x = sr_jit_leaf_array(leaves->seq.items[i]);
      if (x && x->committed) da_mesh = x->mesh;
    }
    if (da_mesh && sr_mesh_ndev(da_mesh) < 2) da_mesh = NULL;
  }
  if (da_mesh) {
    SrVal *rep = NULL;
    for (int i = 0; i < leaves->seq.n; i++) {
      SrArrayObj *xo = sr_array_of(leaves->seq.items[i]);
      if (!xo || xo->kind != SR_AV_CONCRETE || xo->data->ndev != 1 || (given && given[i])) continue;
      if (!rep) {
        SrVal *sp = sr_call(I, sr_lookup_qualname("jax.sharding.PartitionSpec"), &(SrArgs){0});
        if (!sp) break;
        rep = sr_sharding_val(NULL, da_mesh, sp->spec, NULL);
        sr_unref(sp);
      }
      SrVal *pa[2] = {leaves->seq.items[i], rep};
      SrArgs pargs = {.n = 2, .v = pa};
      SrVal *y = sr_call(I, sr_lookup_qualname("jax.device_put"), &pargs);
      if (!y) break;
      SrArrayObj *yo = sr_array_of(y);
      if (yo && yo->kind == SR_AV_CONCRETE) yo->data->committed = 0;
      sr_unref(leaves->seq.items[i]);
      leaves->seq.items[i] = y;
    }
    sr_unref(rep);
    free(given);
    given = NULL;
    if (I->exc) {
      if (in_sh || out_sh)
        for (int k = 0; k < 4; k++) sr_unref(formats[k]);
      sr_program_unref(body->prog);
      sr_unref(leaves);
      sr_unref(captured);
      sr_unref(out_tree);
      return NULL;
    }
  }
  free(given);
  uint8_t *usable = NULL;
  if (prim == SR_P_jit) {
    int ndon = 0;
    uint8_t *don = split ? sr_jit_donated_leaves(I, split, captured->seq.n, &ndon) : NULL;
    jit_params(I, &ps, body, name, in_sh || out_sh ? formats : NULL, don, ndon);
    if (don && !I->trace) {
      const SrType **outs = sr_xcalloc((size_t)body->nout + 1, sizeof *outs);
      for (uint32_t k = 0; k < body->nout; k++) outs[k] = sr_atom_type(body->outvars[k]);
      int rc = sr_jit_donation_check(I, leaves->seq.items, leaves->seq.n, captured->seq.n, don, ndon, outs,
                                     (int)body->nout, &usable);
      free(outs);
      if (rc < 0) {
        free(don);
        sr_plist_free(&ps);
        sr_program_unref(body->prog);
        sr_unref(leaves);
        sr_unref(captured);
        sr_unref(out_tree);
        return NULL;
      }
    }
    free(don);
  } else {
    /* ad_checkpoint.py: remat_p.bind(*consts, *args, jaxpr=, prevent_cse=,
       differentiated=False, policy=) */
    sr_plist_add(&ps, "jaxpr", sr_jaxpr_val(NULL, body));
    sr_plist_add(&ps, "prevent_cse", sr_bool(prevent_cse));
    sr_plist_add(&ps, "differentiated", sr_bool(0));
    sr_plist_add(&ps, "policy", policy ? sr_ref(policy) : sr_none());
  }
  SrVal *r = NULL;
  if (prim == SR_P_jit && !I->trace && I->jax->no_execution)
    sr_raise(I, "RuntimeError", "JAX tried to execute function jit(%s), but the no_execution config option is set", name);
  else if (prim == SR_P_jit && inline_early && I->trace && !in_sh && !out_sh)
    /* pjit_staging_rule: a JAX_EARLY jit is inlined into the trace */
    r = sr_eval_jaxpr(I, body, leaves->seq.n, leaves->seq.items);
  else if (!(prim == SR_P_jit && !I->trace && check_device_assignment(I, body, leaves) < 0))
    r = sr_bind(I, prim, leaves->seq.n, leaves->seq.items, ps.n, ps.p);
  if (r && prim == SR_P_jit && !I->trace) sr_jit_fresh_outputs(leaves->seq.items, leaves->seq.n, r);
  if (r) sr_jit_donation_finish(leaves->seq.items, leaves->seq.n, usable);
  free(usable);
  if (r && prim == SR_P_jit && !out_sh)
    sr_jit_recover_user_shardings(leaves->seq.items + captured->seq.n, leaves->seq.n - captured->seq.n, r);
  if (r && prim == SR_P_jit && out_sh && !I->trace && sr_jit_keep_out_shardings(I, out_sh, out_tree, r) < 0) {
    sr_unref(r);
    r = NULL;
  }
  /* a ShapeDtypeStruct returned as it is was a constant of the jaxpr
     (mlir's constant handler) */
  for (int i = 0; r && prim == SR_P_jit && !I->trace && sr_is_seq(r) && i < r->seq.n; i++) {
    SrArrayObj *o = sr_array_of(r->seq.items[i]);
    if (o && o->kind == SR_AV_ABSTRACT) {
      sr_raise(I, "TypeError",
               "A ShapeDtypeStruct does not have a value and cannot be used as a constant in a JAX function.");
      sr_unref(r);
      r = NULL;
    }
  }
  /* the outputs live on the computation's devices too (a constant made
     inside, replicated on them) */
  for (int i = 0; r && da_mesh && sr_is_seq(r) && i < r->seq.n; i++) {
    SrVal *o = r->seq.items[i];
    SrArrayObj *xo = sr_array_of(o);
    int py = o->kind == SR_V_INT || o->kind == SR_V_FLOAT || o->kind == SR_V_BOOL || o->kind == SR_V_COMPLEX;
    if (!py && (!xo || xo->kind != SR_AV_CONCRETE || xo->data->ndev != 1)) continue;
    SrVal *sp = sr_call(I, sr_lookup_qualname("jax.sharding.PartitionSpec"), &(SrArgs){0});
    SrVal *rep = sp ? sr_sharding_val(NULL, da_mesh, sp->spec, NULL) : NULL;
    sr_unref(sp);
    SrVal *pa[2] = {r->seq.items[i], rep};
    SrArgs pargs = {.n = 2, .v = pa};
    SrVal *y = rep ? sr_call(I, sr_lookup_qualname("jax.device_put"), &pargs) : NULL;
    sr_unref(rep);
    if (!y) {
      sr_unref(r);
      r = NULL;
      break;
    }
    sr_unref(r->seq.items[i]);
    r->seq.items[i] = y;
  }
  sr_plist_free(&ps);
  sr_program_unref(body->prog);
  sr_unref(leaves);
  sr_unref(captured);
  SrVal *res = NULL;
  if (r) {
    SrVal *outs = sr_pytree_flatten(I, out_tree);
    if (outs && outs->seq.n == r->seq.n) res = sr_pytree_unflatten(out_tree, r);
    else if (outs) res = sr_raise(I, "RuntimeError", "jit: the outputs do not match the traced structure");
    sr_unref(outs);
  }
  sr_unref(r);
  sr_unref(out_tree);
  return res;
}

/* ---- the traces of jitted functions ----
   JAX traces a jitted function once per signature (pjit's cache: the
   function, the structure and abstract values of its arguments, the
   context) and reuses the jaxpr: two calls in one trace bind one jaxpr
   object, which the printer hoists (`let inner_fn = { ... } in`), and the
   body's trace-time effects (a print) happen once.  Here a trace is kept
   until :reset (the newest JIT_CACHE_MAX of them); each entry holds its
   jitted function, so that no other function can match it at a reused
   address, and the signature names interned types and meshes.  A trace
   that captured outer values is not kept: they are the trace's own. */

typedef struct JitEntry {
  SrVal *self;     /* the jitted function */
  char *sig;       /* what the trace depends on */
  SrJaxpr *body;   /* holds a ref to its program */
  SrVal *out_tree;
  SrVal *statics;  /* the static arguments, or NULL */
  SrVal *captured; /* the tracers the trace closed over, or NULL: the
                      entry holds while trace trace_id is built (pjit's
                      cache keeps the consts of a trace in context) */
  int trace_id;
  SrVal *auxes;    /* the aux data of the arguments' pytree nodes, or NULL */
  const SrType **types; /* the argument leaves' types (interned), for
                           jax_explain_cache_misses */
  int ntypes;
} JitEntry;

struct SrJitCache {
  JitEntry *e;
  int n, cap;
};

void sr_jit_cache_clear(SrInterp *I) {
  struct SrJitCache *c = I->jit_cache;
  if (!c) return;
  for (int i = 0; i < c->n; i++) {
    sr_unref(c->e[i].self);
    free(c->e[i].sig);
    sr_program_unref(c->e[i].body->prog);
    sr_unref(c->e[i].out_tree);
    sr_unref(c->e[i].statics);
    sr_unref(c->e[i].captured);
    sr_unref(c->e[i].auxes);
    free(c->e[i].types);
  }
  free(c->e);
  free(c);
  I->jit_cache = NULL;
}

/* The cache keeps the newest traces: past this many, the oldest goes. */
enum { JIT_CACHE_MAX = 512 };

static void evict_oldest(struct SrJitCache *c) {
  JitEntry *e = &c->e[0];
  sr_unref(e->self);
  free(e->sig);
  sr_program_unref(e->body->prog);
  sr_unref(e->out_tree);
  sr_unref(e->statics);
  sr_unref(e->captured);
  sr_unref(e->auxes);
  free(e->types);
  memmove(c->e, c->e + 1, (size_t)(c->n - 1) * sizeof *c->e);
  c->n--;
}

/* The arguments' structure and interned types; -1 for a node that is not
   a list, tuple, dict, None or typed leaf.  With auxes, an instance of a
   registered pytree class is a node too: its class, and its aux data
   pushed on auxes, to compare with == (pytree.cc's PyTreeDef equality).
   The caller has checked the depth (sr_pytree_check_depth). */
static int arg_sig(SrInterp *I, SrVal *v, SrBuf *b, SrVal *auxes) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    sr_buf_putc(b, v->kind == SR_V_LIST ? '[' : '(');
    for (int i = 0; i < v->seq.n; i++)
      if (arg_sig(I, v->seq.items[i], b, auxes) < 0) return -1;
    sr_buf_putc(b, ')');
    return 0;
  }
  if (v->kind == SR_V_DICT) {
    sr_buf_putc(b, '{');
    for (int i = 0; i < v->dict.n; i++) {
      sr_val_repr(b, v->dict.keys[i]);
      sr_buf_putc(b, ':');
      if (arg_sig(I, v->dict.vals[i], b, auxes) < 0) return -1;
    }
    sr_buf_putc(b, '}');
    return 0;
  }
  if (v->kind == SR_V_NONE) {
    sr_buf_putc(b, 'N');
    return 0;
  }
  SrVal *cls = auxes ? sr_class_of(v) : NULL;
  if (cls) {
    SrVal *ch = sr_pytree_children(v);
    SrVal *aux = ch && !I->exc ? sr_class_tree_aux(I, v) : NULL;
    if (!aux) {
      sr_unref(ch);
      return -1;
    }
    sr_buf_printf(b, "C%p[", (const void *)cls);
    sr_seq_push(NULL, auxes, sr_pair(sr_ref(cls), aux));
    int rc = 0;
    for (int i = 0; i < ch->seq.n && rc == 0; i++) rc = arg_sig(I, ch->seq.items[i], b, auxes);
    sr_unref(ch);
    sr_buf_putc(b, ']');
    return rc;
  }
  /* Python scalars key by their weak type, as JAX's cache does; an int
     past int32 is left to the trace, whose check raises */
  int py = v->kind == SR_V_BOOL || v->kind == SR_V_FLOAT || v->kind == SR_V_COMPLEX ||
           (v->kind == SR_V_INT && v->i >= INT32_MIN && v->i <= INT32_MAX);
  const SrType *t = sr_is_obj(v, &sr_array_class) || py ? sr_value_type(I, v) : NULL;
  /* a numpy array by its dtype and shape (not weak) */
  if (!t && sr_ndarray_array(v)) t = sr_ndarray_array(v)->type;
  if (!t) return -1;
  sr_buf_printf(b, "%p%s,", (const void *)t, py ? "p" : "");
  return 0;
}

static char *jit_sig_aux(SrInterp *I, SrArgs *a, SrVal *auxes) {
  SrBuf b = SR_BUF_INIT;
  const SrJaxState *s = I->jax;
  /* the abstract mesh, not the concrete one (pe.trace_to_jaxpr's trace
     context holds the former only) */
  sr_buf_printf(&b, "%p %d %d %d %d %d %d %d %s|", (const void *)sr_jax_abstract_mesh(s),
                s->enable_x64, s->check_vma, sr_type_remove_size_one(), s->no_f16_reductions, s->rank_promotion,
                s->strict_promotion, s->explicit_x64,
                sr_jax_matmul_precision(s) ? sr_jax_matmul_precision(s) : "-");
  /* the named axes of the vmaps around (the trace's axis env: a body may
     ask lax.axis_size) */
  for (int i = 0; i < s->nvmap; i++)
    sr_buf_printf(&b, "%p=%lld,", (const void *)s->vmap_axis[i], (long long)s->vmap_size[i]);
  for (int i = 0; i < a->n; i++)
    if (sr_pytree_check_depth(I, a->v[i]) < 0 || arg_sig(I, a->v[i], &b, auxes) < 0) {
      sr_buf_free(&b);
      return NULL;
    }
  /* the keyword arguments by name, in sorted order (a dict's key) */
  int *ord = sr_xcalloc((size_t)a->nkw + 1, sizeof *ord);
  sr_kwargs_order(a->nkw, a->kw, ord);
  for (int k = 0; k < a->nkw; k++) {
    SrVal *v = a->kwv[ord[k]];
    sr_buf_printf(&b, "|%s=", a->kw[ord[k]]);
    if (sr_pytree_check_depth(I, v) < 0 || arg_sig(I, v, &b, auxes) < 0) {
      free(ord);
      sr_buf_free(&b);
      return NULL;
    }
  }
  free(ord);
  return sr_buf_str(&b) == b.p ? b.p : NULL;
}

static char *jit_sig(SrInterp *I, SrArgs *a) { return jit_sig_aux(I, a, NULL); }

/* The traces of control-flow bodies (pe.trace_to_jaxpr's cache: the
   function, its arguments' structure and avals, the context -- here also
   the named vmap axes, whose sizes a body can read): a while_loop, scan
   or cond given the same function objects on the same types traces them
   once.  Traces that captured outer values are not kept. */
SrJaxpr *sr_trace_body_cached(SrInterp *I, SrVal *fn, int nargs, SrVal **args, int flags, SrVal **out_tree,
                              SrVal **captured) {
  SrArgs a = {nargs, args, 0, NULL, NULL, NULL};
  char *sig0 = jit_sig(I, &a);
  if (!sig0 && I->exc) return NULL;
  char *sig = NULL;
  if (sig0) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_printf(&b, "body %d %d|", flags, I->jax->nvmap);
    for (int i = 0; i < I->jax->nvmap; i++)
      sr_buf_printf(&b, "%p:%lld,", (const void *)I->jax->vmap_axis[i], (long long)I->jax->vmap_size[i]);
    sr_buf_puts(&b, sig0);
    free(sig0);
    sig = b.p;
  }
  struct SrJitCache *c = I->jit_cache;
  for (int i = 0; sig && c && i < c->n; i++)
    if (c->e[i].self == fn && !c->e[i].statics && strcmp(c->e[i].sig, sig) == 0) {
      free(sig);
      sr_trace_fn_debug_clear(); /* sr_trace_fn_for's, for the trace not made */
      sr_program_ref(c->e[i].body->prog);
      if (out_tree) *out_tree = sr_ref(c->e[i].out_tree);
      if (captured) *captured = sr_seq(NULL, SR_V_LIST, 0);
      return c->e[i].body;
    }
  SrVal *ot = NULL, *cap = NULL;
  SrJaxpr *body = sr_trace_fn(I, fn, nargs, args, 0, NULL, NULL, flags, &ot, &cap);
  if (!body) {
    free(sig);
    return NULL;
  }
  if (sig && cap->seq.n == 0) {
    c = I->jit_cache;
    if (!c) c = I->jit_cache = sr_xcalloc(1, sizeof *c);
    if (c->n == JIT_CACHE_MAX) evict_oldest(c);
    if (c->n == c->cap) c->e = sr_xrealloc(c->e, (size_t)(c->cap = c->cap ? 2 * c->cap : 8) * sizeof *c->e);
    c->e[c->n++] = (JitEntry){sr_ref(fn), sig, body, sr_ref(ot), NULL, NULL, 0, NULL, NULL, 0};
    sr_program_ref(body->prog);
    sig = NULL;
  }
  free(sig);
  if (out_tree) *out_tree = ot;
  else sr_unref(ot);
  if (captured) *captured = cap;
  else sr_unref(cap);
  return body;
}

/* Whether two jitted functions share their traces: the same object, or
   jit of the same function with the same options (pjit's cache is keyed
   by the function and jit's arguments, so jit(f)(2) then jit(f)(3)
   traces once) */
static int same_opt(const SrVal *a, const SrVal *b) { return a == b || (a && b && sr_val_equal(a, b)); }

static int same_jit(SrVal *a, SrVal *b) {
  if (a == b) return 1;
  /* the cache also keeps control-flow bodies, keyed by their function */
  if (!sr_is_obj(a, &sr_jit_class) || !sr_is_obj(b, &sr_jit_class)) return 0;
  const Jit *x = a->obj.data, *y = b->obj.data;
  /* the same shardings (pjit's as given: its jaxpr's depend on the mesh,
     which the signature holds) */
  int same_sh = x->resource_env == y->resource_env &&
                (x->resource_env ? same_opt(x->pj_in, y->pj_in) && same_opt(x->pj_out, y->pj_out)
                                 : same_opt(x->in_sh, y->in_sh) && same_opt(x->out_sh, y->out_sh));
  return x->fn == y->fn && x->name == y->name && same_sh && x->device == y->device &&
         memcmp(&x->opts, &y->opts, sizeof x->opts) == 0;
}

/* The pytree nodes' aux data of two calls, == one by one (the signature
   has matched their classes): 1, 0, or -1 with pytree.cc's ValueError
   where == raises */
static int auxes_equal(SrInterp *I, SrVal *a, SrVal *b) {
  if (!a || !b) return !a && !b;
  if (a->seq.n != b->seq.n) return 0;
  for (int i = 0; i < a->seq.n; i++) {
    SrVal *r = sr_binop(I, SR_OP_EQ, a->seq.items[i]->seq.items[1], b->seq.items[i]->seq.items[1]);
    int t = r ? sr_truthy(I, r) : -1;
    sr_unref(r);
    if (t < 0) {
      SrBuf m = SR_BUF_INIT;
      sr_exc_clear(I);
      sr_to_repr(I, &m, a->seq.items[i]->seq.items[0]);
      sr_raise(I, "ValueError", SR_PYTREE_EQ_MSG, sr_buf_str(&m));
      sr_buf_free(&m);
      return -1;
    }
    if (!t) return 0;
  }
  return 1;
}

/* A call's cache key: its signature (prefix, then jit_sig_aux's) in *sig
   (NULL: not cacheable) and the aux data of its pytree nodes in *keys
   (NULL: none).  -1 with an exception raised. */
static int call_key(SrInterp *I, SrArgs *a, const char *prefix, char **sig, SrVal **keys) {
  *keys = sr_seq(NULL, SR_V_TUPLE, 0);
  char *s = jit_sig_aux(I, a, *keys);
  if (!s && I->exc) {
    sr_unref(*keys);
    *keys = NULL;
    return -1;
  }
  /* the user contexts' values (config.py's include_in_jit_key) */
  sr_user_context_keys(*keys);
  if ((*keys)->seq.n == 0) {
    sr_unref(*keys);
    *keys = NULL;
  }
  if (s && *prefix) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_printf(&b, "%s%s", prefix, s);
    free(s);
    s = b.p;
  }
  *sig = s;
  return 0;
}

/* The cached trace of self's call (sig, the split's statics, keys): 1 with
   *e, 0 for none, -1 with an exception raised (an __eq__ that failed). */
static int cache_find(SrInterp *I, SrVal *self, const char *sig, const SrJitSplit *sp, SrVal *keys, JitEntry **e) {
  struct SrJitCache *c = I->jit_cache;
  for (int i = 0; sig && c && i < c->n; i++) {
    int live = !c->e[i].captured || (I->trace && I->trace->id == c->e[i].trace_id);
    int eq = live && same_jit(c->e[i].self, self) && strcmp(c->e[i].sig, sig) == 0
                 ? sr_jit_statics_equal(I, c->e[i].statics, sp->statics)
                 : 0;
    if (eq > 0) eq = auxes_equal(I, c->e[i].auxes, keys);
    if (eq) {
      *e = &c->e[i];
      return eq;
    }
  }
  return 0;
}

/* Keeps a trace of self's call for the next ones, unless it closed over
   values other than tracers of the trace in context (which is kept for
   that trace only); takes *sig when it does. */
static int cache_keep(SrInterp *I, SrVal *self, char **sig, SrJaxpr *body, SrVal *out_tree, SrVal *captured,
                      SrVal *statics, SrVal *keys) {
  int tracers = captured->seq.n > 0 && I->trace;
  for (int i = 0; tracers && i < captured->seq.n; i++) {
    SrArrayObj *o = sr_array_of(captured->seq.items[i]);
    tracers = o && o->kind == SR_AV_TRACER;
  }
  if (!*sig || (captured->seq.n && !tracers)) return 0;
  /* the trace may have made the cache (a jitted call inside) */
  struct SrJitCache *c = I->jit_cache;
  if (!c) c = I->jit_cache = sr_xcalloc(1, sizeof *c);
  if (c->n == JIT_CACHE_MAX) evict_oldest(c);
  if (c->n == c->cap) c->e = sr_xrealloc(c->e, (size_t)(c->cap = c->cap ? 2 * c->cap : 8) * sizeof *c->e);
  c->e[c->n++] = (JitEntry){sr_ref(self), *sig, body, sr_ref(out_tree), statics ? sr_ref(statics) : NULL,
                            tracers ? sr_ref(captured) : NULL, tracers ? I->trace->id : 0, keys ? sr_ref(keys) : NULL,
                            NULL, 0};
  sr_program_ref(body->prog);
  *sig = NULL;
  return 1;
}

/* ---- jax_explain_cache_misses: pe.explain's report of a trace cache
   miss, a logger warning (stderr, the message alone) ---- */

/* The call's argument leaves' types, the positional ones then the keyword
   ones by sorted name (pjit's flat (args, kwargs)); malloc'd, *n of them. */
static const SrType **call_leaf_types(SrInterp *I, SrArgs *a, int *n) {
  int cap = 8, k = 0;
  const SrType **t = sr_xmalloc((size_t)cap * sizeof *t);
  int *ord = sr_xcalloc((size_t)a->nkw + 1, sizeof *ord);
  sr_kwargs_order(a->nkw, a->kw, ord);
  for (int i = 0; i < a->n + a->nkw; i++) {
    SrVal *leaves = sr_pytree_flatten(I, i < a->n ? a->v[i] : a->kwv[ord[i - a->n]]);
    if (!leaves) {
      sr_exc_clear(I);
      continue;
    }
    for (int q = 0; q < leaves->seq.n; q++) {
      if (k == cap) t = sr_xrealloc(t, (size_t)(cap *= 2) * sizeof *t);
      t[k++] = sr_value_type(I, leaves->seq.items[q]);
    }
    sr_unref(leaves);
  }
  free(ord);
  *n = k;
  return t;
}

/* A signature's context (up to its first '|') and its arguments'
   structure, each leaf's type pointer as L */
static void sig_structure(const char *sig, SrBuf *out) {
  const char *p = strchr(sig, '|');
  if (!p) {
    sr_buf_puts(out, sig);
    return;
  }
  sr_buf_putn(out, sig, (size_t)(p - sig) + 1);
  for (p++; *p;) {
    if (p[0] == '0' && p[1] == 'x') {
      const char *q = p + 2;
      while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')) q++;
      if (*q == 'p') q++;
      if (*q == ',') {
        sr_buf_puts(out, "L,");
        p = q + 1;
        continue;
      }
    }
    sr_buf_putc(out, *p++);
  }
}

/* aval.sharding differs (an unsharded value's is the empty mesh's) */
static int sharding_differs(const SrType *a, const SrType *b) {
  if (!a->mesh && !b->mesh) return 0;
  if (a->mesh != b->mesh || a->ndim != b->ndim || a->unreduced != b->unreduced || a->reduced != b->reduced) return 1;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d].nax != b->dims[d].nax || memcmp(a->dims[d].ax, b->dims[d].ax, a->dims[d].nax) != 0) return 1;
  return 0;
}

/* pe.diff_types: each leaf whose type differs, in str_short(True) (with
   the mesh's axis types where the shardings differ, and the weak types
   where they do); the number of them */
static int diff_types(SrInterp *I, char **names, int n, const SrType **now, const SrType **before, SrBuf *msg) {
  int ndiff = 0, weak_hint = 0;
  SrTypeCtx cx;
  SrDiags d = SR_DIAGS_INIT;
  sr_type_ctx(I, &cx, &d);
  sr_buf_puts(msg, "different input types:");
  for (int i = 0; i < n; i++) {
    if (now[i] == before[i] || !now[i] || !before[i]) continue;
    ndiff++;
    sr_buf_printf(msg, "\n  * at %s, now ", names && names[i] ? names[i] : "");
    int shd = sharding_differs(now[i], before[i]), weak = now[i]->weak != before[i]->weak;
    for (int k = 0; k < 2; k++) {
      const SrType *t = k ? before[i] : now[i];
      if (k) sr_buf_puts(msg, " and before ");
      if (shd) sr_aval_str_short(msg, &cx, t, 1, 1);
      else sr_type_str(msg, t, 1);
      if (weak) sr_buf_printf(msg, "{weak_type=%s}", t->weak ? "True" : "False");
    }
    weak_hint |= weak;
  }
  sr_diags_clear(&d);
  if (weak_hint) sr_buf_puts(msg, "https://docs.jax.dev/en/latest/type_promotion.html#weak-types");
  return ndiff;
}

/* a signature as a call's: .trace()'s are prefixed (pe.trace_to_jaxpr's
   cache is one for both) */
static const char *sig_of_call(const char *sig) { return strncmp(sig, "trace|", 6) == 0 ? sig + 6 : sig; }

static const char **explained_callsites;
static int nexplained_callsites;

static void explain_miss(SrInterp *I, SrVal *self, Jit *j, SrJitSplit *sp, const char *sig, const SrType **types,
                         int ntypes) {
  SrFunction *uf = sr_as_function(j->fn);
  /* a silent rank (an MPI job's others) reports nothing: not worked out */
  if (!I->py->out && !I->py->on_warn) return;
  /* only functions of the user's code (source_info_util.is_user_filename) */
  if (!uf || !uf->code || !uf->code->src || !uf->node) return;
  const char *callsite = sr_trace_loc_hook ? sr_trace_loc_hook(I) : NULL;
  SrBuf m = SR_BUF_INIT;
  sr_buf_printf(&m, "TRACING CACHE MISS at %s:\n", callsite ? callsite : "unknown");
  uint32_t line, col;
  const SrNode *n = uf->node;
  uint32_t off = n->kind == SR_N_DEF && n->n2 > 0 && n->list2 && n->list2[0] ? n->list2[0]->off : n->off;
  sr_src_linecol(uf->code->src, off, &line, &col);
  SrBuf src = SR_BUF_INIT;
  sr_buf_printf(&src, " defined at %s:%u", uf->code->src->name, line);
  struct SrJitCache *c = I->jit_cache;
  int seen = 0;
  for (int i = 0; c && i < c->n; i++) {
    if (!same_jit(c->e[i].self, self)) continue;
    seen = 1;
    /* the other stage's trace of the same key: JAX's cache hit */
    int hit = strcmp(sig_of_call(c->e[i].sig), sig_of_call(sig)) == 0 &&
              sr_jit_statics_equal(I, c->e[i].statics, sp->statics) > 0;
    if (I->exc) sr_exc_clear(I);
    if (hit) {
      sr_buf_free(&src);
      sr_buf_free(&m);
      return;
    }
  }
  if (!seen) {
    /* id(fun): an address, masked */
    sr_buf_printf(&m, "  never seen function:\n    %s id=XXXXXXXXXXXXXXX%s", uf->name, src.p);
    int again = 0;
    for (int i = 0; callsite && i < nexplained_callsites; i++) again |= explained_callsites[i] == callsite;
    if (again) {
      sr_buf_puts(&m, "\n  but seen another function defined on the same line; maybe the function is\n"
                      "  being re-defined repeatedly, preventing caching?");
    } else if (callsite) {
      explained_callsites =
          sr_xrealloc(explained_callsites, (size_t)(nexplained_callsites + 1) * sizeof *explained_callsites);
      explained_callsites[nexplained_callsites++] = callsite;
    }
  } else {
    sr_buf_printf(&m, "  for %s%s\n", uf->name, src.p);
    sr_buf_puts(&m, "  all previously seen cache keys differ. For the closest previous key:\n  ");
    /* the names of the call's argument leaves (debug_info.arg_names) */
    int npos = 0;
    for (int i = 0; i < sp->a.n; i++) {
      SrVal *l = sr_pytree_flatten(I, sp->a.v[i]);
      if (!l) sr_exc_clear(I);
      else npos += l->seq.n;
      sr_unref(l);
    }
    char **names = sp->names && sp->nnames >= ntypes ? sp->names : NULL;
    char **own = NULL;
    if (!names) {
      own = sr_xcalloc((size_t)ntypes + 1, sizeof *own);
      char **pn = arg_leaf_names(I, j->fn, sp->a.v, sp->a.n, npos);
      for (int i = 0; i < npos && i < ntypes; i++) own[i] = pn[i];
      free(pn);
      int *ord = sr_xcalloc((size_t)sp->a.nkw + 1, sizeof *ord);
      sr_kwargs_order(sp->a.nkw, sp->a.kw, ord);
      int k = npos;
      for (int i = 0; i < sp->a.nkw && k <= ntypes; i++) {
        SrBuf pb = SR_BUF_INIT;
        sr_buf_puts(&pb, sp->a.kw[ord[i]]);
        SrVal *l = sr_pytree_flatten(I, sp->a.kwv[ord[i]]);
        if (!l) sr_exc_clear(I);
        if (l && k + l->seq.n <= ntypes) sr_pytree_leaf_paths(sp->a.kwv[ord[i]], &pb, own, &k);
        sr_unref(l);
        sr_buf_free(&pb);
      }
      free(ord);
      names = own;
    }
    /* the closest key: the fewest differing types among the keys of the
       same context and structure (pe.diff_tracing_cache_keys; the other
       differences are not explained here) */
    SrBuf best = SR_BUF_INIT, want = SR_BUF_INIT;
    int best_n = -1;
    sig_structure(sig_of_call(sig), &want);
    for (int i = 0; c && i < c->n; i++) {
      JitEntry *e = &c->e[i];
      if (!same_jit(e->self, self) || e->ntypes != ntypes || !e->types) continue;
      SrBuf have = SR_BUF_INIT;
      sig_structure(sig_of_call(e->sig), &have);
      int same = strcmp(sr_buf_str(&have), sr_buf_str(&want)) == 0 && sr_jit_statics_equal(I, e->statics, sp->statics) > 0;
      if (I->exc) sr_exc_clear(I);
      sr_buf_free(&have);
      if (!same) continue;
      SrBuf d = SR_BUF_INIT;
      int nd = diff_types(I, names, ntypes, types, e->types, &d);
      if (nd > 0 && (best_n < 0 || nd < best_n || (nd == best_n && strcmp(d.p, best.p) < 0))) {
        sr_buf_free(&best);
        best = d;
        best_n = nd;
      } else {
        sr_buf_free(&d);
      }
    }
    sr_buf_puts(&m, best_n > 0 ? best.p : "cache miss explanation unavailable");
    sr_buf_free(&best);
    sr_buf_free(&want);
    if (own) {
      for (int i = 0; i < ntypes; i++) free(own[i]);
      free(own);
    }
  }
  sr_buf_putc(&m, '\n');
  sr_write_stderr(I, m.p, m.len, 0);
  sr_buf_free(&src);
  sr_buf_free(&m);
}

/* One call of a jitted function, its static arguments split off. */
static SrVal *jit_call_split(SrInterp *I, SrVal *self, Jit *j, SrJitSplit *sp) {
  SrArgs *a = &sp->a;
  binding_split = NULL;
  if (j->in_sh && a->nkw) return sr_raise(I, "ValueError", "pjit does not support kwargs when in_shardings is specified.");
  /* the aux data of the arguments' pytree nodes compare with == */
  char *sig;
  SrVal *keys;
  if (call_key(I, a, "", &sig, &keys) < 0) return NULL;
  JitEntry *ce;
  int found = cache_find(I, self, sig, sp, keys, &ce);
  if (found) {
    free(sig);
    sr_unref(keys);
    if (found < 0) return NULL;
    sr_program_ref(ce->body->prog);
    binding_split = sp;
    binding_inline = j->inline_early;
    binding_fn = j->fn;
    SrVal *cap = ce->captured ? sr_ref(ce->captured) : NULL;
    return bind_body(I, ce->body, sr_ref(ce->out_tree), cap, j->name, a, SR_P_jit, 0, j->in_sh, j->out_sh);
  }
  if (check_no_tracing(I, j->fn) < 0) {
    free(sig);
    sr_unref(keys);
    return NULL;
  }
  SrVal *out_tree = NULL, *captured = NULL;
  int ntypes = 0;
  const SrType **types = sig ? call_leaf_types(I, a, &ntypes) : NULL;
  if (sig && I->jax->explain_cache_misses) explain_miss(I, self, j, sp, sig, types, ntypes);
  sr_jit_split_debug(sp);
  SrJaxpr *body = sr_trace_fn(I, sp->fn, a->n, a->v, a->nkw, a->kw, a->kwv, SR_TRACE_FOR_JIT | SR_TRACE_KWARGS, &out_tree, &captured);
  if (!body) {
    free(types);
    free(sig);
    sr_unref(keys);
    return NULL;
  }
  int kept = cache_keep(I, self, &sig, body, out_tree, captured, sp->statics, keys);
  if (kept) {
    JitEntry *e = &I->jit_cache->e[I->jit_cache->n - 1];
    e->types = types;
    e->ntypes = ntypes;
  } else {
    free(types);
  }
  free(sig);
  sr_unref(keys);
  binding_split = sp;
  binding_inline = j->inline_early;
  binding_fn = j->fn;
  return bind_body(I, body, out_tree, captured, j->name, a, SR_P_jit, 0, j->in_sh, j->out_sh);
}

/* pjit._create_sharding_for_array over the resource env's mesh m: a None
   leaf is NamedSharding(m, P()), a P NamedSharding(m, P) (a new
   reference). */
static SrVal *resource_shardings(SrInterp *I, SrVal *v, const SrMesh *m) {
  /* NamedSharding's constructor: a concrete mesh's default memory kind */
  const char *mk = m->abstract ? NULL : sr_intern_cstr("device");
  if (v->kind == SR_V_NONE) {
    SrSpec none = {0};
    return sr_sharding_val(NULL, m, &none, mk);
  }
  if (v->kind == SR_V_SPEC) {
    /* NamedSharding's check_pspec */
    if (sr_api_check_unique(I, v->spec, "NamedSharding spec") < 0 || sr_mesh_resource_check(I, m, v->spec) < 0)
      return NULL;
    return sr_sharding_val(NULL, m, v->spec, mk);
  }
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    SrVal *t = sr_seq(NULL, v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *e = resource_shardings(I, v->seq.items[i], m);
      if (!e) {
        sr_unref(t);
        return NULL;
      }
      sr_seq_push(NULL, t, e);
    }
    return t;
  }
  if (v->kind == SR_V_DICT) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < v->dict.n; i++) {
      SrVal *e = resource_shardings(I, v->dict.vals[i], m);
      if (!e) {
        sr_unref(d);
        return NULL;
      }
      sr_dict_set(NULL, d, sr_ref(v->dict.keys[i]), e);
    }
    return d;
  }
  return sr_ref(v);
}

typedef struct PjitEnv {
  const SrMesh *mesh;
  int pjit_call;
  SrVal *in_sh, *out_sh;
  int on;
} PjitEnv;

/* pjit's call: the resource env's mesh is the concrete and abstract mesh
   of the trace (pjit._infer_params: _internal_use_concrete_mesh and
   use_abstract_mesh), its shardings resolved over it. */
static int pjit_enter(SrInterp *I, Jit *j, PjitEnv *e) {
  e->on = j->resource_env;
  if (!e->on) return 0;
  const SrMesh *m = sr_jax_resource_mesh(I->jax);
  e->mesh = I->jax->mesh;
  e->in_sh = j->in_sh;
  e->out_sh = j->out_sh;
  e->pjit_call = I->jax->pjit_call;
  I->jax->pjit_call = 1;
  /* use_abstract_mesh(ctx_mesh.abstract_mesh).__enter__ */
  const SrMesh *prev = sr_jax_abstract_mesh(I->jax);
  I->jax->mesh = m;
  j->in_sh = j->out_sh = NULL;
  if (m && prev->n && sr_mesh_size(prev) != sr_mesh_size(m)) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_mesh_str(&b, sr_mesh_abstract(m, 1));
    sr_mesh_str(&c, prev);
    sr_raise(I, "ValueError",
             "use_abstract_mesh cannot change the size of the mesh. Got new mesh: %s with size=%lld and prev mesh: "
             "%s with size=%lld",
             b.p, (long long)sr_mesh_size(m), c.p, (long long)sr_mesh_size(prev));
    sr_buf_free(&b);
    sr_buf_free(&c);
    return -1;
  }
  if (m) {
    if (j->pj_in && !(j->in_sh = resource_shardings(I, j->pj_in, m))) return -1;
    if (j->pj_out && !(j->out_sh = resource_shardings(I, j->pj_out, m))) return -1;
  } else {
    j->in_sh = e->in_sh ? sr_ref(e->in_sh) : NULL;
    j->out_sh = e->out_sh ? sr_ref(e->out_sh) : NULL;
  }
  return 0;
}

static void pjit_leave(SrInterp *I, Jit *j, PjitEnv *e) {
  if (!e->on) return;
  I->jax->mesh = e->mesh;
  I->jax->pjit_call = e->pjit_call;
  sr_unref(j->in_sh);
  sr_unref(j->out_sh);
  j->in_sh = e->in_sh;
  j->out_sh = e->out_sh;
}

int sr_jit_use_resource_env(SrVal *jit, SrVal *in_sh, SrVal *out_sh) {
  if (!sr_is_obj(jit, &sr_jit_class)) return -1;
  Jit *j = jit->obj.data;
  j->resource_env = 1;
  j->pj_in = in_sh ? sr_ref(in_sh) : NULL;
  j->pj_out = out_sh ? sr_ref(out_sh) : NULL;
  return 0;
}

static SrVal *jit_call_env(SrInterp *I, SrVal *self, SrArgs *a);

static SrVal *jit_call(SrInterp *I, SrVal *self, SrArgs *a) {
  Jit *j = self->obj.data;
  PjitEnv e;
  SrVal *r = pjit_enter(I, j, &e) < 0 ? NULL : jit_call_env(I, self, a);
  pjit_leave(I, j, &e);
  return r;
}

static SrVal *jit_call_env(SrInterp *I, SrVal *self, SrArgs *a) {
  Jit *j = self->obj.data;
  /* jax.disable_jit(): the function runs as it is, op by op */
  if (I->jax->disable_jit) return sr_call(I, j->fn, a);
  /* pjit._infer_params: a device= or backend= jit under a mesh in context */
  /* pjit's staging rule: compiler_options on a jit bound inside a trace */
  if (j->copts && I->trace) {
    SrBuf b = SR_BUF_INIT, w = SR_BUF_INIT;
    sr_val_repr(&b, j->copts);
    const SrSrc *src = I->py->code ? I->py->code->src : NULL;
    if (src) {
      uint32_t line = 0, col = 0;
      sr_src_linecol(src, I->py->cur_off, &line, &col);
      /* (the location of the call; JAX's summary also names the
         enclosing function, which the interpreter does not keep here) */
      sr_buf_printf(&w, "%s:%u:%u", src->name, line, col);
    }
    sr_raise(I, "ValueError",
             "`compiler_options` can only be passed to top-level `jax.jit`. Got compiler_options=%s specified on a "
             "nested jit with name: %s and source info: %s",
             b.p, j->name, w.len ? w.p : "unknown");
    sr_buf_free(&b);
    sr_buf_free(&w);
    return NULL;
  }
  int was_pjit = I->jax->pjit_call;
  I->jax->pjit_call = j->pjit;
  const SrMesh *cm = sr_jit_ctx_mesh(I);
  I->jax->pjit_call = was_pjit;
  if (j->device && cm && cm->n)
    return sr_raise(I, "ValueError",
                    "Mesh context manager should not be used with jit when backend or device is also specified as an "
                    "argument to jit.");
  SrJitSplit sp;
  if (sr_jit_split(I, &j->opts, j->fn, j->name, a, &sp) < 0) return NULL;
  I->jax->pjit_call = j->pjit;
  /* pjit._trace_for_jit: traced under its context mesh, as the concrete
     and the abstract mesh (_internal_use_concrete_mesh, use_abstract_mesh) */
  const SrMesh *was_mesh = I->jax->mesh;
  if (j->pjit && !I->jax->mesh && sr_jax_resource_mesh(I->jax)) I->jax->mesh = sr_jax_resource_mesh(I->jax);
  SrVal *r = jit_call_split(I, self, j, &sp);
  I->jax->mesh = was_mesh;
  I->jax->pjit_call = was_pjit;
  sr_jit_split_free(&sp);
  /* device= / backend=: the results committed to that device (pjit's
     SingleDeviceSharding in and out shardings) */
  SrVal *dev = r ? j->device : NULL;
  int from_default = 0;
  if (r && !dev && I->jax->default_device > 1 && !I->trace) {
    /* jax.default_device: where no argument is committed */
    int committed = 0;
    for (int i = 0; i < a->n + a->nkw && !committed; i++) {
      SrVal *l = sr_pytree_flatten_any(I, i < a->n ? a->v[i] : a->kwv[i - a->n]);
      for (int k = 0; l && k < l->seq.n; k++) {
        SrArrayObj *o = sr_array_of(l->seq.items[k]);
        committed |= o && o->kind == SR_AV_CONCRETE && o->data->committed;
      }
      sr_unref(l);
      sr_exc_clear(I);
    }
    if (!committed) dev = sr_concrete_device_val(I->jax->default_device - 1);
    else dev = NULL;
    from_default = dev != NULL;
  } else if (dev) {
    sr_ref(dev);
  }
  if (r && dev && !I->trace) {
    SrVal *dv[2] = {r, dev};
    SrArgs da = {2, dv, 0, NULL, NULL, NULL};
    SrVal *put = sr_call(I, sr_lookup_qualname("jax.device_put"), &da);
    sr_unref(r);
    r = put;
    /* on the default device the results stay uncommitted, as their
       arguments were */
    SrVal *l = r && from_default ? sr_pytree_flatten_any(I, r) : NULL;
    for (int k = 0; l && k < l->seq.n; k++) {
      SrArrayObj *o = sr_array_of(l->seq.items[k]);
      if (o && o->kind == SR_AV_CONCRETE) o->data->committed = 0;
    }
    sr_unref(l);
  }
  sr_unref(dev);
  return r;
}

/* The Traced stage of a split call: its trace from the cache (entries of
   their own, "trace|" signatures) or made and kept (pe.trace_to_jaxpr's
   cache: .trace() under another concrete mesh of the same abstract mesh
   does not trace again). */
static SrVal *trace_stage(SrInterp *I, SrVal *self, Jit *j, SrJitSplit *sp, const uint8_t *don, int ndon) {
  SrArgs *a = &sp->a;
  if (j->in_sh && a->nkw) return sr_raise(I, "ValueError", "pjit does not support kwargs when in_shardings is specified.");
  char *sig;
  SrVal *keys;
  if (call_key(I, a, "trace|", &sig, &keys) < 0) return NULL;
  JitEntry *ce;
  int found = cache_find(I, self, sig, sp, keys, &ce);
  if (found) {
    free(sig);
    sr_unref(keys);
    if (found < 0) return NULL;
    sr_program_ref(ce->body->prog);
    SrVal *cap = ce->captured ? sr_ref(ce->captured) : NULL;
    return sr_jit_stage_of_trace(I, ce->body, sr_ref(ce->out_tree), cap, sp->fn, j->name, j->in_sh, j->out_sh, a,
                                 don, ndon);
  }
  SrVal *out_tree = NULL, *captured = NULL;
  int ntypes = 0;
  const SrType **types = sig ? call_leaf_types(I, a, &ntypes) : NULL;
  if (sig && I->jax->explain_cache_misses) explain_miss(I, self, j, sp, sig, types, ntypes);
  sr_jit_split_debug(sp);
  sr_trace_fn_for("jit"); /* its tracers' errors name jit, as a call's */
  SrJaxpr *body = sr_trace_fn(I, sp->fn, a->n, a->v, a->nkw, a->kw, a->kwv, SR_TRACE_KWARGS, &out_tree, &captured);
  if (!body) {
    free(types);
    free(sig);
    sr_unref(keys);
    return NULL;
  }
  if (cache_keep(I, self, &sig, body, out_tree, captured, sp->statics, keys)) {
    JitEntry *e = &I->jit_cache->e[I->jit_cache->n - 1];
    e->types = types;
    e->ntypes = ntypes;
  } else {
    free(types);
  }
  free(sig);
  sr_unref(keys);
  return sr_jit_stage_of_trace(I, body, out_tree, captured, sp->fn, j->name, j->in_sh, j->out_sh, a, don, ndon);
}

/* jax.jit(f).trace(*args): the Traced stage, whose .jaxpr is f's jaxpr
   (layout.c) */
static SrVal *jit_trace(SrInterp *I, SrArgs *a) {
  Jit *j = a->self->obj.data;
  SrJitSplit sp;
  if (sr_jit_split(I, &j->opts, j->fn, j->name, a, &sp) < 0) return NULL;
  PjitEnv e;
  if (pjit_enter(I, j, &e) < 0) {
    pjit_leave(I, j, &e);
    sr_jit_split_free(&sp);
    return NULL;
  }
  sp.a.self = a->self;
  int ndon = 0;
  uint8_t *don = sr_jit_donated_leaves(I, &sp, 0, &ndon);
  SrVal *r = trace_stage(I, a->self, j, &sp, don, ndon);
  pjit_leave(I, j, &e);
  if (r && j->device) sr_jit_stage_set_device(r, j->device);
  free(don);
  sr_jit_split_free(&sp);
  return r;
}

/* jax.jit(f).lower(*args) = .trace(*args).lower() */
static SrVal *jit_lower(SrInterp *I, SrArgs *a) {
  SrVal *t = jit_trace(I, a);
  SrVal *r = t ? sr_jit_stage_lower(I, t) : NULL;
  sr_unref(t);
  return r;
}

/* jitted.__getstate__(): what pickling a PjitFunction keeps; here its
   function_name (the wrapped function's name, through partials) */
static SrVal *jit_getstate(SrInterp *I, SrArgs *a) {
  (void)I;
  SrVal *d = sr_dict(NULL);
  sr_dict_set(NULL, d, sr_str_cstr(NULL, "function_name"), sr_str_cstr(NULL, ((Jit *)a->self->obj.data)->name));
  return d;
}

static int same_jit(SrVal *a, SrVal *b);

/* jitted._cache_size(): the traces kept for it (one per signature) */
static SrVal *jit_cache_size(SrInterp *I, SrArgs *a) {
  struct SrJitCache *c = I->jit_cache;
  int n = 0;
  /* the calls' (C++ dispatch) entries: not those of .trace() */
  for (int i = 0; c && i < c->n; i++) n += same_jit(c->e[i].self, a->self) && strncmp(c->e[i].sig, "trace|", 6) != 0;
  return sr_int(NULL, n);
}

/* jitted.clear_cache(): forgets them */
static SrVal *jit_clear_cache(SrInterp *I, SrArgs *a) {
  struct SrJitCache *c = I->jit_cache;
  int k = 0;
  for (int i = 0; c && i < c->n; i++) {
    JitEntry *e = &c->e[i];
    if (!same_jit(e->self, a->self)) {
      c->e[k++] = *e;
      continue;
    }
    sr_unref(e->self);
    free(e->sig);
    sr_program_unref(e->body->prog);
    sr_unref(e->out_tree);
    sr_unref(e->statics);
    sr_unref(e->captured);
    free(e->types);
  }
  if (c) c->n = k;
  return sr_none();
}

static SrVal *jit_getattr(SrInterp *I, SrVal *self, const char *name) {
  if (strcmp(name, "trace") == 0) return sr_bound_method(self, "trace", jit_trace);
  if (strcmp(name, "lower") == 0) return sr_bound_method(self, "lower", jit_lower);
  Jit *j = self->obj.data;
  if (strcmp(name, "eval_shape") == 0) return sr_bound_method(self, "eval_shape", sr_jit_eval_shape);
  if (strcmp(name, "__name__") == 0) return sr_str_cstr(NULL, j->name);
  if (strcmp(name, "__getstate__") == 0) return sr_bound_method(self, "__getstate__", jit_getstate);
  if (strcmp(name, "_cache_size") == 0) return sr_bound_method(self, "_cache_size", jit_cache_size);
  if (strcmp(name, "clear_cache") == 0) return sr_bound_method(self, "clear_cache", jit_clear_cache);
  /* functools.wraps: __wrapped__, the wrapped function's __module__,
     __name__, __qualname__, __doc__ and __annotations__, and its
     __dict__ (the attributes set on it) */
  if (strcmp(name, "__wrapped__") == 0) return sr_ref(j->fn);
  char q[128];
  snprintf(q, sizeof q, "jax.jit.method.%s", name);
  SrVal *m = sr_lookup_qualname(q);
  if (m) return sr_bound_method(self, name, ((SrBuiltin *)m->obj.data)->fn);
  static const char *const wrapped[] = {"__module__", "__qualname__", "__doc__", "__annotations__"};
  int dunder = strncmp(name, "__", 2) == 0;
  for (int k = 0; k < 4; k++) dunder &= strcmp(name, wrapped[k]) != 0;
  if (dunder) return NULL;
  SrVal *r = sr_getattr(I, j->fn, name);
  if (!r && I->exc && strcmp(sr_exc_type(I->exc), "AttributeError") == 0) sr_exc_clear(I);
  return r;
}

static const SrLangOps jit_ops = {.call = jit_call, .getattr = jit_getattr};
const SrClass sr_jit_class = {"PjitFunction", jit_free, jit_repr, NULL, &jit_ops};

static SrVal *jax_jit(SrInterp *I, SrArgs *a);

/* jax.jit(**options) without the function: a decorator that jits what it
   is given with those options (jax.jit's fun=None form) */
typedef struct JitOptsArgs {
  int nkw;
  const char **kw;
  SrVal **kwv;
} JitOptsArgs;

static void jit_opts_args_free(void *d) {
  JitOptsArgs *o = d;
  for (int i = 0; i < o->nkw; i++) sr_unref(o->kwv[i]);
  free(o->kw);
  free(o->kwv);
  free(o);
}

static SrVal *jit_decorator(SrInterp *I, SrArgs *a) {
  JitOptsArgs *o = sr_current_builtin(I)->data;
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "jit() takes the function to compile as its one argument");
  SrArgs ca = {1, a->v, o->nkw, o->kw, o->kwv, NULL};
  return jax_jit(I, &ca);
}

static int check_unique_tree(SrInterp *I, SrVal *v, const char *arg_name) {
  if (!v) return 0;
  if (v->kind == SR_V_SPEC) return sr_api_check_unique(I, v->spec, arg_name);
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    for (int i = 0; i < v->seq.n; i++)
      if (check_unique_tree(I, v->seq.items[i], arg_name) < 0) return -1;
    return 0;
  }
  if (v->kind == SR_V_DICT) {
    for (int i = 0; i < v->dict.n; i++)
      if (check_unique_tree(I, v->dict.vals[i], arg_name) < 0) return -1;
    return 0;
  }
  return 0;
}

static SrVal *jax_jit(SrInterp *I, SrArgs *a) {
  SrVal *fn = a->n >= 1 ? a->v[0] : NULL;
  for (int k = 0; k < a->nkw && !fn; k++)
    if (strcmp(a->kw[k], "fun") == 0) fn = a->kwv[k];
  if (!fn || fn->kind == SR_V_NONE) {
    if (a->n > 1) return sr_raise(I, "TypeError", "jit() takes 1 positional argument but %d were given", a->n);
    JitOptsArgs *o = sr_xcalloc(1, sizeof *o);
    o->kw = sr_xcalloc((size_t)a->nkw + 1, sizeof *o->kw);
    o->kwv = sr_xcalloc((size_t)a->nkw + 1, sizeof *o->kwv);
    for (int k = 0; k < a->nkw; k++)
      if (strcmp(a->kw[k], "fun") != 0) {
        o->kw[o->nkw] = a->kw[k];
        o->kwv[o->nkw++] = sr_ref(a->kwv[k]);
      }
    return sr_builtin_with("jit", jit_decorator, o, jit_opts_args_free);
  }
  /* api_util.check_callable */
  const char *bad = strcmp(sr_val_kind_name(fn), "staticmethod") == 0 ? "staticmethod arguments are not supported, got "
                    : !sr_is_callable(I, fn)                           ? "Expected a callable value, got "
                    : sr_as_function(fn) && sr_as_function(fn)->node->kind == SR_N_DEF && sr_as_function(fn)->node->op == 1
                        ? "Expected a function, got a generator function: "
                        : NULL;
  if (bad) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, fn);
    sr_raise(I, "TypeError", "%s%s", bad, b.p);
    sr_buf_free(&b);
    return NULL;
  }
  /* in_shardings= / out_shardings= and the static and donated arguments
     (the other options change nothing here) */
  SrVal *opt[4] = {NULL, NULL, NULL, NULL}, *in_sh = NULL, *out_sh = NULL, *device = NULL, *backend = NULL, *inl = NULL;
  SrVal *copts = NULL;
  static const char *const names[4] = {"static_argnums", "static_argnames", "donate_argnums", "donate_argnames"};
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "inline") == 0) inl = a->kwv[k];
    if (strcmp(a->kw[k], "in_shardings") == 0 && a->kwv[k]->kind != SR_V_NONE) in_sh = a->kwv[k];
    if (strcmp(a->kw[k], "out_shardings") == 0 && a->kwv[k]->kind != SR_V_NONE) out_sh = a->kwv[k];
    if (strcmp(a->kw[k], "device") == 0 && a->kwv[k]->kind != SR_V_NONE) device = a->kwv[k];
    if (strcmp(a->kw[k], "backend") == 0 && a->kwv[k]->kind != SR_V_NONE) backend = a->kwv[k];
    if (strcmp(a->kw[k], "compiler_options") == 0 && a->kwv[k]->kind == SR_V_DICT && a->kwv[k]->dict.n) copts = a->kwv[k];
    for (int q = 0; q < 4; q++)
      if (strcmp(a->kw[k], names[q]) == 0) opt[q] = a->kwv[k];
  }
  /* pjit._parse_jit_arguments: device= and backend= (deprecated) */
  if (device && backend) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_val_repr(&b, device);
    sr_val_repr(&c, backend);
    sr_raise(I, "ValueError", "can't specify both a device and a backend for jit, got device=%s and backend=%s", b.p,
             c.p);
    sr_buf_free(&b);
    sr_buf_free(&c);
    return NULL;
  }
  if (sr_jit_check_axis_resources(I, in_sh, "in_shardings", 0) < 0 ||
      sr_jit_check_axis_resources(I, out_sh, "out_shardings", 0) < 0)
    return NULL;
  if ((device || backend) && (in_sh || out_sh))
    return sr_raise(I, "ValueError", "If backend or device is specified on jit, then %s should not be specified.",
                    in_sh ? "in_shardings" : "out_shardings");
  SrVal *devval = NULL;
  if (device) {
    devval = sr_ref(device);
  } else if (backend) {
    /* xb.get_backend(backend).local_devices()[0] */
    SrVal *ld = sr_lookup_qualname("jax.local_devices");
    const char *kw = "backend";
    SrArgs la = {0, NULL, 1, &kw, &backend, NULL};
    SrVal *l = ld ? sr_call(I, ld, &la) : NULL;
    if (!l) return NULL;
    devval = l->kind == SR_V_LIST && l->seq.n ? sr_ref(l->seq.items[0]) : NULL;
    sr_unref(l);
  }
  /* pjit._canonicalize_inline: True is JAX_EARLY, False AUTO */
  int early = 0;
  if (inl && sr_lax_inline_early(I, inl, &early) < 0) {
    sr_unref(devval);
    return NULL;
  }
  /* sharding_impls.prepare_axis_resources: a spec maps each mesh axis
     to one dimension at most */
  if (check_unique_tree(I, in_sh, "in_shardings") < 0 || check_unique_tree(I, out_sh, "out_shardings") < 0) {
    sr_unref(devval);
    return NULL;
  }
  Jit *j = sr_xcalloc(1, sizeof *j);
  j->device = devval;
  j->inline_early = early;
  if (sr_jit_opts_parse(I, fn, opt[0], opt[1], opt[2], opt[3], &j->opts) < 0) {
    sr_unref(devval);
    free(j);
    return NULL;
  }
  j->fn = sr_ref(fn);
  j->copts = copts ? sr_ref(copts) : NULL;
  j->in_sh = in_sh ? sr_ref(in_sh) : NULL;
  j->out_sh = out_sh ? sr_ref(out_sh) : NULL;
  const char *nm = sr_builtin_name(fn);
  /* a built-in's __name__ is its last component: jit(jnp.cos) is "cos" */
  if (nm && strrchr(nm, '.')) nm = strrchr(nm, '.') + 1;
  if (fn->kind == SR_V_JAXPR && fn->jx.jaxpr->name) nm = fn->jx.jaxpr->name;
  /* jit of a jitted function: functools.wraps passes the name on */
  if (sr_is_obj(fn, &sr_jit_class)) nm = ((Jit *)fn->obj.data)->name;
  j->name = sr_intern_cstr(nm ? nm : "<unnamed function>");
  return sr_obj(&sr_jit_class, j);
}

/* jax.checkpoint(fun, prevent_cse=True, policy=None) / jax.remat */
/* ad_checkpoint.py's _trace_to_jaxpr is a weakref_lru_cache on the
   function (with its static arguments, WrapHashably's), the arguments'
   structure and avals: a checkpointed function called again on the same
   signature binds the same jaxpr, not traced again.  Each Remat keeps its
   newest traces (REMAT_CACHE_MAX); as for jit, a trace that captured outer
   values is not kept. */
typedef struct RematEntry {
  char *sig;
  SrVal *statics; /* a tuple, or NULL */
  SrJaxpr *body;  /* holds a ref to its program */
  SrVal *out_tree;
} RematEntry;

enum { REMAT_CACHE_MAX = 32 };

typedef struct Remat {
  SrVal *fn, *policy;
  int prevent_cse;
  int64_t *statics; /* static_argnums as given */
  int nstatics;
  RematEntry cache[REMAT_CACHE_MAX];
  int ncache;
} Remat;

static void remat_entry_free(RematEntry *e) {
  free(e->sig);
  sr_unref(e->statics);
  sr_program_unref(e->body->prog);
  sr_unref(e->out_tree);
}

static void remat_free(void *d) {
  Remat *r = d;
  sr_unref(r->fn);
  sr_unref(r->policy);
  free(r->statics);
  for (int i = 0; i < r->ncache; i++) remat_entry_free(&r->cache[i]);
  free(r);
}

/* _remat_static_argnums's function: the static arguments put back
   (WrapHashably's values) among the dynamic ones */
typedef struct RematStatic {
  SrVal *fn;
  int nargs;
  uint8_t *is_static; /* nargs */
  SrVal **vals;       /* nargs: the static ones' values */
} RematStatic;

static void remat_static_free(void *d) {
  RematStatic *s = d;
  sr_unref(s->fn);
  for (int i = 0; i < s->nargs; i++) sr_unref(s->vals[i]);
  free(s->vals);
  free(s->is_static);
  free(s);
}

static SrVal *remat_static_call(SrInterp *I, SrArgs *a) {
  RematStatic *s = sr_current_builtin(I)->data;
  SrVal **all = sr_xcalloc((size_t)s->nargs + 1, sizeof *all);
  for (int i = 0, k = 0; i < s->nargs; i++) all[i] = s->is_static[i] ? s->vals[i] : k < a->n ? a->v[k++] : NULL;
  SrArgs ca = {s->nargs, all, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, s->fn, &ca);
  free(all);
  return r;
}

static SrVal *remat_call(SrInterp *I, SrArgs *a) {
  Remat *r = sr_current_builtin(I)->data;
  const char *nm = sr_builtin_name(r->fn);
  SrVal *fn = r->fn;
  SrArgs dyn = *a;
  SrVal **dv = NULL;
  if (r->nstatics) {
    for (int i = 0; i < r->nstatics; i++)
      if (r->statics[i] < -a->n || r->statics[i] >= a->n) {
        SrBuf b = SR_BUF_INIT;
        sr_buf_puts(&b, r->nstatics == 1 ? "(" : "(");
        for (int k = 0; k < r->nstatics; k++) sr_buf_printf(&b, "%s%lld", k ? ", " : "", (long long)r->statics[k]);
        sr_buf_puts(&b, r->nstatics == 1 ? ",)" : ")");
        sr_raise(I, "ValueError",
                 "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer values greater "
                 "than or equal to `-len(args)` and less than `len(args)`, but got %s, while `len(args)` = %d",
                 sr_buf_str(&b), a->n);
        sr_buf_free(&b);
        return NULL;
      }
    RematStatic *s = sr_xcalloc(1, sizeof *s);
    s->fn = sr_ref(r->fn);
    s->nargs = a->n;
    s->is_static = sr_xcalloc((size_t)a->n + 1, 1);
    s->vals = sr_xcalloc((size_t)a->n + 1, sizeof *s->vals);
    for (int i = 0; i < r->nstatics; i++) s->is_static[(r->statics[i] % a->n + a->n) % a->n] = 1;
    dv = sr_xcalloc((size_t)a->n + 1, sizeof *dv);
    dyn.n = 0;
    dyn.v = dv;
    for (int i = 0; i < a->n; i++) {
      if (s->is_static[i]) s->vals[i] = sr_ref(a->v[i]);
      else dv[dyn.n++] = a->v[i];
    }
    fn = sr_builtin_with(nm ? nm : "<unnamed function>", remat_static_call, s, remat_static_free);
  } else {
    sr_ref(fn);
  }
  /* the static values, as the cache compares them; none that is a tracer
     (dyn_args_fun's uncached case) */
  SrVal *statics = NULL;
  int cacheable = 1;
  if (r->nstatics) {
    RematStatic *s = ((SrBuiltin *)fn->obj.data)->data;
    statics = sr_seq(NULL, SR_V_TUPLE, 0);
    for (int i = 0; i < s->nargs; i++)
      if (s->is_static[i]) {
        SrArrayObj *o = sr_array_of(s->vals[i]);
        if (o && o->kind == SR_AV_TRACER) cacheable = 0;
        sr_seq_push(NULL, statics, sr_ref(s->vals[i]));
      }
  }
  char *sig = cacheable ? jit_sig(I, &dyn) : NULL;
  if (!sig && I->exc) {
    sr_unref(fn);
    sr_unref(statics);
    free(dv);
    return NULL;
  }
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *body = NULL;
  for (int i = 0; sig && i < r->ncache && !body; i++)
    if (strcmp(r->cache[i].sig, sig) == 0 && sr_jit_statics_equal(I, r->cache[i].statics, statics)) {
      body = r->cache[i].body;
      sr_program_ref(body->prog);
      out_tree = sr_ref(r->cache[i].out_tree);
    }
  if (!body) {
    /* api_util.debug_info("checkpoint / remat", fun, args, kwargs,
       static_argnums) */
    uint8_t *skip = sr_xcalloc((size_t)a->n + (size_t)a->nkw + 1, 1);
    for (int i = 0; i < r->nstatics && a->n; i++) skip[(r->statics[i] % a->n + a->n) % a->n] = 1;
    int nnames = 0;
    char **names = sr_debug_arg_names(I, r->fn, a, skip, &nnames);
    free(skip);
    if (!names) sr_exc_clear(I);
    sr_trace_fn_for("checkpoint / remat");
    if (names) sr_trace_fn_debug(r->fn, names, nnames);
    body = sr_trace_fn(I, fn, dyn.n, dyn.v, dyn.nkw, dyn.kw, dyn.kwv, SR_TRACE_KWARGS, &out_tree, &captured);
    if (names) sr_debug_arg_names_free(names, nnames);
    /* ad_checkpoint._trace_to_jaxpr: a ConcretizationTypeError of the
       function's own tracers suggests static_argnums */
    const char *et = !body && I->exc ? sr_exc_type(I->exc) : NULL;
    if (et && (strcmp(et, "ConcretizationTypeError") == 0 || strcmp(et, "TracerBoolConversionError") == 0) &&
        strstr(sr_exc_msg(I->exc), "for checkpoint")) {
      sr_exc_append_msg(I, "\n\nConsider using the `static_argnums` parameter for `jax.remat` or `jax.checkpoint`. "
                           "See the `jax.checkpoint` docstring and its example involving `static_argnums`:\n"
                           "https://docs.jax.dev/en/latest/_autosummary/jax.checkpoint.html\n");
    }
    if (body && sig && captured->seq.n == 0) {
      if (r->ncache == REMAT_CACHE_MAX) {
        remat_entry_free(&r->cache[0]);
        memmove(r->cache, r->cache + 1, (size_t)(REMAT_CACHE_MAX - 1) * sizeof *r->cache);
        r->ncache--;
      }
      r->cache[r->ncache++] = (RematEntry){sig, statics ? sr_ref(statics) : NULL, body, sr_ref(out_tree)};
      sr_program_ref(body->prog);
      sig = NULL;
    }
  }
  free(sig);
  sr_unref(statics);
  sr_unref(fn);
  SrVal *res = NULL;
  if (body) {
    /* the policy param, set after tracing (the body may hold checkpoints) */
    binding_policy = r->policy;
    res = bind_body(I, body, out_tree, captured, nm ? nm : "<unnamed function>", &dyn, SR_P_remat2, r->prevent_cse,
                    NULL, NULL);
  }
  free(dv);
  return res;
}

SrVal *sr_remat_wrapped(SrVal *f) {
  SrBuiltin *b = sr_is_obj(f, &sr_builtin_class) ? f->obj.data : NULL;
  return b && b->fn == remat_call ? ((Remat *)b->data)->fn : NULL;
}

SrVal *sr_jit_wrapped(SrVal *f) { return sr_is_obj(f, &sr_jit_class) ? ((Jit *)f->obj.data)->fn : NULL; }
SrVal *sr_api_wraps_doc(SrInterp *I, SrVal *b, SrVal *fun, const char *docstr, SrVal *argnums, int with_doc) {
  const char *name = sr_callable_name(fun);
  SrBuf d = SR_BUF_INIT, an = SR_BUF_INIT;
  if (argnums) sr_to_str(I, &an, argnums);
  else sr_buf_puts(&an, "0");
  for (const char *s = docstr; *s; s++) {
    if (strncmp(s, "{fun}", 5) == 0) sr_buf_puts(&d, name), s += 4;
    else if (strncmp(s, "{argnums}", 9) == 0) sr_buf_puts(&d, sr_buf_str(&an)), s += 8;
    else sr_buf_putc(&d, *s);
  }
  if (with_doc) {
    SrVal *doc = sr_getattr(I, fun, "__doc__");
    if (!doc) sr_exc_clear(I);
    if (doc && doc->kind == SR_V_STR && doc->str.n) {
      sr_buf_puts(&d, "\n\nOriginal documentation:\n\n");
      sr_buf_printf(&d, "%.*s", (int)doc->str.n, doc->str.s);
    }
    sr_unref(doc);
  }
  sr_builtin_set_doc(b, sr_buf_str(&d));
  sr_buf_free(&d);
  sr_buf_free(&an);
  return sr_builtin_set_wrapped(b, fun);
}

SrVal *sr_jit_out_shardings(SrVal *f) { return sr_is_obj(f, &sr_jit_class) ? ((Jit *)f->obj.data)->out_sh : NULL; }

static SrVal *jax_checkpoint(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  /* static_argnames: remat3's (jax_remat3, off by default); the default
     checkpoint takes and ignores it */
  if (sr_args_parse(I, a, "checkpoint", "fun, *, prevent_cse=, policy=, static_argnums=, static_argnames=", p) < 0)
    return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(p[0]));
  /* prevent_cse: a bool, or a sequence (made a tuple) of them */
  if (p[1] && p[1]->kind != SR_V_BOOL && p[1]->kind != SR_V_TUPLE && p[1]->kind != SR_V_LIST)
    return sr_raise(I, "TypeError", "prevent_cse must be a bool or tuple of bools, got type(prevent_cse)=<class '%s'>",
                    sr_val_kind_name(p[1]));
  /* remat_policies.c: the policies of jax.checkpoint_policies, which the
     remat rule's partial evaluation asks (remat_pe.c) */
  int pk = sr_remat_policy_kind(p[2]);
  SrVal *pol = NULL;
  if (pk == -2)
    return sr_raise(I, "NotImplementedError",
                    "jax.checkpoint: offloading residuals to another memory (%s) is not supported",
                    "save_and_offload_only_these_names");
  if (pk == -1 && sr_is_callable(I, p[2])) pol = sr_remat_policy_of(p[2]), pk = 0;
  if (pk < 0) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, p[2]);
    sr_raise(I, "NotImplementedError",
             "jax.checkpoint: the policy %s is not supported (only those of jax.checkpoint_policies)", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  /* _remat_static_argnums: an int or a tuple of ints */
  int64_t *statics = NULL;
  int nstatics = 0;
  if (p[3] && p[3]->kind == SR_V_INT) {
    statics = sr_xcalloc(1, sizeof *statics);
    statics[nstatics++] = p[3]->i;
  } else if (p[3] && p[3]->kind == SR_V_TUPLE) {
    statics = sr_xcalloc((size_t)p[3]->seq.n + 1, sizeof *statics);
    for (int i = 0; i < p[3]->seq.n; i++) {
      SrVal *d = p[3]->seq.items[i];
      if (d->kind != SR_V_INT) {
        free(statics);
        statics = NULL;
        nstatics = -1;
        break;
      }
      statics[nstatics++] = d->i;
    }
  } else if (p[3]) {
    nstatics = -1;
  }
  if (nstatics < 0) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, p[3]);
    sr_raise(I, "TypeError",
             "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must be an int, tuple of ints or, bool, "
             "but got value %s",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  Remat *r = sr_xcalloc(1, sizeof *r);
  r->statics = statics;
  r->nstatics = nstatics;
  r->fn = sr_ref(p[0]);
  r->policy = pol ? pol : p[2] && p[2]->kind != SR_V_NONE ? sr_ref(p[2]) : NULL;
  r->prevent_cse = p[1] ? sr_val_truthy(p[1]) : 1;
  /* functools.wraps(fun): the checkpointed function has fun's name and
     __wrapped__ */
  const char *nm = sr_builtin_name(p[0]);
  if (nm && strrchr(nm, '.')) nm = strrchr(nm, '.') + 1;
  return sr_builtin_set_wrapped(sr_builtin_with(nm ? nm : "checkpoint(fun)", remat_call, r, remat_free), r->fn);
}

/* bool < int < float < complex: how far a weak type may be promoted */
static int dtype_kind(SrDtype d) {
  return d == SR_BOOL ? 0 : sr_dtype_is_int(d) ? 1 : sr_dtype_is_float(d) ? 2 : 3;
}

/* A jaxpr is a computation typed once and for all, like a compiled one:
   each argument must have its binder's shape and dtype (shardings aside,
   as in pxla.check_arg_avals_for_call, whose message this is), or an
   equation would run on the wrong shape or fail later in some rule's
   words.  A weak-typed value (a Python scalar) takes the binder's dtype
   where JAX's promotion would give it that dtype, as in a jitted
   function: 2 and 2.0 both pass for f32[].  args[i] is replaced by a new
   reference (converted or not); returns -1 with nothing replaced. */
static int check_jaxpr_args(SrInterp *I, const SrJaxpr *j, int n, SrVal **args) {
  SrBuf errs = SR_BUF_INIT;
  int nerr = 0;
  int *to = sr_xmalloc(((size_t)n + 1) * sizeof *to); /* a dtype to convert to, or -1 */
  for (int i = 0; i < n; i++) {
    const SrType *want = sr_args(j)[i]->type, *got = sr_value_type(I, args[i]);
    to[i] = -1;
    if (!got || !want) continue;
    int same = got->ndim == want->ndim;
    for (int d = 0; same && d < got->ndim; d++)
      same = got->dims[d].sym || want->dims[d].sym || got->dims[d].size == want->dims[d].size;
    if (same && got->dtype != want->dtype) {
      if (got->weak && dtype_kind(got->dtype) <= dtype_kind(want->dtype))
        to[i] = (int)want->dtype;
      else
        same = 0;
    }
    if (same) continue;
    if (++nerr > 5) continue;
    sr_buf_printf(&errs, "\nArgument %d/%d compiled with ", i + 1, n);
    sr_type_str(&errs, want, 0);
    sr_buf_puts(&errs, " and called with ");
    sr_type_str(&errs, got, 0);
  }
  if (nerr) {
    char lead[32];
    if (nerr >= 5)
      snprintf(lead, sizeof lead, "The first 5 of %d", nerr);
    else
      snprintf(lead, sizeof lead, "The");
    sr_raise(I, "TypeError",
             "Argument types differ from the types for which this computation was compiled. %s mismatches are:%s",
             lead, sr_buf_str(&errs));
    sr_buf_free(&errs);
    free(to);
    return -1;
  }
  sr_buf_free(&errs);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    SrVal *c = to[i] >= 0 ? sr_jnp_convert(I, args[i], (SrDtype)to[i], 0) : sr_ref(args[i]);
    if (!c) {
      for (int k = 0; k < i; k++) sr_unref(args[k]);
      rc = -1;
    } else {
      args[i] = c;
    }
  }
  free(to);
  return rc;
}

/* j's equations bound one by one on a's positional arguments, checked
   against its input types first: the sequence of its results */
static SrVal *run_jaxpr(SrInterp *I, const SrJaxpr *j, SrArgs *a) {
  if ((uint32_t)a->n != sr_nargs(j)) return sr_eval_jaxpr(I, j, a->n, a->v); /* which says so */
  SrVal **args = sr_xmalloc(((size_t)a->n + 1) * sizeof *args);
  memcpy(args, a->v, (size_t)a->n * sizeof *args);
  SrVal *r = NULL;
  if (check_jaxpr_args(I, j, a->n, args) == 0) {
    r = sr_eval_jaxpr(I, j, a->n, args);
    for (int i = 0; i < a->n; i++) sr_unref(args[i]);
  }
  free(args);
  return r;
}

/* jax.extend.core.check_jaxpr(jaxpr): core.check_jaxpr, every equation's
   type rule against its written binder types, under the mesh in context;
   the first error is a JaxprTypeError (or the rule's own exception). */
static SrVal *extend_check_jaxpr(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "check_jaxpr", "jaxpr", p) < 0) return NULL;
  if (p[0]->kind != SR_V_JAXPR) return sr_raise(I, "TypeError", "check_jaxpr takes a jaxpr");
  SrCheckOpts opts = {sr_jax_context_mesh(I->jax), 0};
  SrDiags d = SR_DIAGS_INIT;
  int n = sr_check_jaxpr(p[0]->jx.jaxpr, &opts, &d, NULL);
  if (!n || !d.first) {
    sr_diags_clear(&d);
    return sr_none();
  }
  sr_raise(I, d.first->exc ? d.first->exc : "JaxprTypeError", "%s", d.first->msg);
  sr_diags_clear(&d);
  return NULL;
}

/* Calling a jaxpr value: one result bare, several as a tuple. */
static SrVal *call_jaxpr_value(SrInterp *I, SrVal *fn, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "a jaxpr takes positional arguments only");
  SrVal *r = run_jaxpr(I, fn->jx.jaxpr, a);
  if (r && r->seq.n == 1) {
    SrVal *x = sr_ref(r->seq.items[0]);
    sr_unref(r);
    return x;
  }
  return r;
}

/* core.jaxpr_as_fun(jaxpr): a function that runs the jaxpr on its
   arguments and returns the list of its results */
static SrVal *jaxpr_fun_call(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "jaxpr_as_fun's function takes positional arguments only");
  SrVal *r = run_jaxpr(I, a->self->jx.jaxpr, a);
  if (r && r->kind != SR_V_LIST) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, r->seq.n);
    for (int i = 0; i < r->seq.n; i++) sr_seq_push(NULL, l, sr_ref(r->seq.items[i]));
    sr_unref(r);
    r = l;
  }
  return r;
}

static SrVal *jax_jaxpr_as_fun(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "jaxpr_as_fun", "closed_jaxpr", p) < 0) return NULL;
  if (p[0]->kind != SR_V_JAXPR) return sr_raise(I, "TypeError", "jaxpr_as_fun expects a ClosedJaxpr");
  return sr_bound_method(p[0], "jaxpr_as_fun", jaxpr_fun_call);
}

/* core.eval_jaxpr(jaxpr, consts, *args): runs the jaxpr with its
   constvars bound to consts; the list of its results */
static SrVal *jax_eval_jaxpr(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "eval_jaxpr() takes positional arguments only");
  if (a->n < 2) return sr_raise(I, "TypeError", "eval_jaxpr() missing required positional arguments: 'jaxpr' and 'consts'");
  if (a->v[0]->kind != SR_V_JAXPR) return sr_raise(I, "TypeError", "eval_jaxpr expects a Jaxpr");
  SrJaxpr *j = a->v[0]->jx.jaxpr;
  SrVal *cl = sr_iterate(I, a->v[1]);
  if (!cl) return NULL;
  if ((uint32_t)cl->seq.n != j->nconst) {
    sr_unref(cl);
    return sr_raise(I, "TypeError", "eval_jaxpr: the jaxpr has %u constvars, %d consts given", j->nconst, cl->seq.n);
  }
  SrVal **saved = j->consts;
  SrVal **cs = sr_xcalloc((size_t)j->nconst + 1, sizeof *cs);
  for (uint32_t i = 0; i < j->nconst; i++) cs[i] = cl->seq.items[i];
  j->consts = cs;
  SrArgs ra = {a->n - 2, a->v + 2, 0, NULL, NULL, NULL};
  SrVal *r = run_jaxpr(I, j, &ra);
  j->consts = saved;
  free(cs);
  sr_unref(cl);
  if (r && r->kind != SR_V_LIST) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, r->seq.n);
    for (int i = 0; i < r->seq.n; i++) sr_seq_push(NULL, l, sr_ref(r->seq.items[i]));
    sr_unref(r);
    r = l;
  }
  return r;
}

void sr_jnp_init(void) {
  sr_autodiff_init();
  sr_vmap_init();
  sr_jacobian_init();
  sr_test_util_init();
  sr_jax_ref_init();
  sr_vmap_built_init();
  sr_numpy_elementwise_init();
  sr_def("jax.typeof", jax_typeof, "typeof(x): x's type with its sharding, as float32[8@X,4]");
  /* jax.memory.Space: core.MemorySpace's members, words that print as
     their repr */
  sr_register("jax.memory", sr_module("jax.memory"));
  sr_register("jax.memory.Space", sr_module("jax.memory.Space"));
  sr_register("jax.memory.Space.Device", sr_word(NULL, "MemorySpace.Device", 18));
  sr_register("jax.memory.Space.Host", sr_word(NULL, "MemorySpace.Host", 16));
  sr_register("jax.memory.Space.Any", sr_word(NULL, "MemorySpace.Any", 15));
  sr_def("jax.extend.core.check_jaxpr jax._src.core.check_jaxpr", extend_check_jaxpr,
         "check_jaxpr(jaxpr): type-checks a jaxpr's equations, raising JaxprTypeError at the first that does not check");
  sr_def("jax.core.ShapedArray jax._src.core.ShapedArray", jax_shaped_array,
         "ShapedArray(shape, dtype, weak_type=False, *, sharding=None): an aval (its sharding over an AbstractMesh)");
  sr_def("jax.core.eval_jaxpr jax._src.core.eval_jaxpr", jax_eval_jaxpr,
         "eval_jaxpr(jaxpr, consts, *args): the list of the jaxpr's results on args");
  sr_def("jax.core.jaxpr_as_fun jax._src.core.jaxpr_as_fun", jax_jaxpr_as_fun,
         "jaxpr_as_fun(closed_jaxpr): a function running the jaxpr, returning the list of its results");
  /* jax.errors: JAX's exception classes (their bases in py/objects.c) */
  static const char *const errs[] = {"JAXTypeError", "JAXIndexError", "ConcretizationTypeError",
                                     "NonConcreteBooleanIndexError", "TracerArrayConversionError",
                                     "TracerIntegerConversionError", "TracerBoolConversionError",
                                     "UnexpectedTracerError", "KeyReuseError", "JaxRuntimeError"};
  for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
    char q[96];
    snprintf(q, sizeof q, "jax.errors.%s", errs[i]);
    sr_register(q, sr_obj(&sr_exctype_class, (void *)sr_intern_cstr(errs[i])));
  }
  sr_def("jax.ShapeDtypeStruct", jax_shape_dtype_struct,
         "ShapeDtypeStruct(shape, dtype, sharding=None): an abstract array");
  sr_def("jax.ShapeDtypeStruct.like", jax_sds_like,
         "ShapeDtypeStruct.like(x): x's shape, dtype, weak type and (where x was placed on purpose) sharding");
  sr_def("jax.make_jaxpr", jax_make_jaxpr, "make_jaxpr(f)(*args): the jaxpr of f traced on args' types");
  sr_def("jax.jit", jax_jit,
         "jit(f, static_argnums=, static_argnames=, donate_argnums=, donate_argnames=, in_shardings=, "
         "out_shardings=): f compiled; jit(f).trace(*args).jaxpr is its jaxpr; jit(**options) a decorator");
  sr_class_binds(&sr_jit_class); /* a jitted method gets self, as PjitFunction.__get__ gives it */
  sr_def("jax.checkpoint jax.remat jax._src.ad_checkpoint.checkpoint jax._src.ad_checkpoint.remat", jax_checkpoint,
         "checkpoint(f, prevent_cse=True, policy=None, static_argnums=()): f whose residuals the policy does not save are recomputed in the backward pass (a remat2 equation)");
  sr_jnp_api_init();
  sr_lax_api_init();
  sr_jit_options_init();
  sr_numpy_index_init();
  sr_np_random_init();
  sr_lax_conv_api_init();
  sr_lax_prims_init();
  sr_jnp_apiB_init();
  sr_math_api_init();
  sr_lax_scatter_init();
  sr_jnp_index16_init();
  sr_lax_precision_init();
  sr_lax_small18_init();
  sr_jnp_grid18_init();
  sr_jnp_small18_init();
  sr_scipy_linalg18_init();
  sr_scipy_signal_init();
  sr_ops_segment_init();
  sr_scipy_sparse_init();
  sr_jnp_fft_init();
  sr_image_init();
  sr_jax_dtypes_init();
}

SrJaxprCallFn sr_jaxpr_call_hook(void) { return call_jaxpr_value; }
