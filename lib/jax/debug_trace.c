/* debug_trace.c: jax.debug.print, jax.debug.callback and
 * jax.debug.inspect_array_sharding under a trace (debugging.py:
 * debug_print_p, debug_callback_p, inspect_sharding_p).
 *
 * Under jit, scan, cond, vmap, grad or shard_map the call binds one
 * equation with no results, printed as JAX prints it:
 *
 *     debug_print[fmt={x} has_placeholders=True in_tree=PyTreeDef(((), {'x': *}))
 *                 logging_record=None np_printoptions=(...) ordered=False
 *                 partitioned=False static_args=()] a
 *     debug_callback[callback=<function debug_callback.<locals>._debug_callback.<locals>._flat_callback at 0xXXXXXXXXXXXX>
 *                    effect=Debug partitioned=False] a
 *     inspect_sharding[callback=<function f at 0xXXXXXXXXXXXX>] a
 *
 * The leaves of the arguments that are arrays or Python numbers are its
 * operands; the others (strings...) are static (_split_callback_args).  The
 * in_tree and callback params are objects the program keeps
 * (sr_val_keep_class), which hold what running the equation needs: the
 * user's function, the numbered tree of (args, kwargs) and the static
 * leaves.  Its eval rule runs at run time, once each time the equation
 * runs (each iteration of a scan); inside shard_map (every axis of the
 * context mesh Manual) once per device, on the device's block, in mesh
 * order (the lowering's per-device callback; JAX's eager rule,
 * _debug_print_eager_rule).  Its JVP binds it on the primals, it has no
 * transpose to give (its operands' cotangents are None), and vmap unrolls
 * it over the mapped axis (debug_batching_rule: index_in_dim of each
 * mapped operand, a slice and a squeeze).  inspect_sharding calls back
 * with the operand's NamedSharding when the equation runs (JAX: when it is
 * compiled). */
#include <stdlib.h>
#include <string.h>

#include "jax/debug_trace.h"

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "ad/ops.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "jax/builtins_exec.h"
#include "jax/tree_util.h"
#include "jax/vjp.h"
#include "py/objects.h"
#include "exec/numfmt.h"
#include "py/strfmt.h"
#include "text/print_val.h"
#include "util/intern.h"

/* What running one staged call needs: its in_tree / callback param. */
typedef struct DbgCall {
  int kind;           /* SR_P_debug_print, SR_P_debug_callback or SR_P_inspect_sharding */
  SrVal *fn;          /* the user's callback (NULL for print) */
  SrVal *fmt;         /* print: the format string */
  int has_placeholders;
  SrVal *tree;        /* the numbered tree of (args, kwargs) */
  SrVal *leaves;      /* a list: the static leaves, None for the operands */
  char *text;         /* how the param prints */
  SrNumfmtOpts opts;  /* print: numpy's print options when it was traced */
} DbgCall;

static void dbg_free(void *d) {
  DbgCall *c = d;
  sr_unref(c->fn);
  sr_unref(c->fmt);
  sr_unref(c->tree);
  sr_unref(c->leaves);
  free(c->text);
  free(c);
}

static void dbg_repr(SrBuf *out, const SrVal *v) {
  const DbgCall *c = v->obj.data;
  sr_buf_puts(out, c->text);
}

static const SrClass dbg_class = {"debug_callback_fn", dbg_free, dbg_repr, NULL, NULL};

static int is_dynamic(SrVal *v) { return sr_array_of(v) || (v->kind >= SR_V_BOOL && v->kind <= SR_V_COMPLEX); }

/* tree_flatten with any leaf (strings too) */
static void all_leaves(SrVal *v, SrVal *out) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    sr_seq_push(NULL, out, sr_ref(v));
    return;
  }
  for (int i = 0; i < ch->seq.n; i++) all_leaves(ch->seq.items[i], out);
  sr_unref(ch);
}

/* ---- binding ---- */

/* Splits (args, kwargs) as _split_callback_args does: c gets the tree and
   the static leaves; *ops the operands (arrays; Python numbers made weakly
   typed arrays), a new list.  -1 with an exception raised. */
static int split_args(SrInterp *I, DbgCall *c, SrArgs *a, SrVal **ops) {
  SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  SrVal *kw = sr_dict(NULL);
  for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, kw, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
  SrVal *both = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, both, args);
  sr_seq_push(NULL, both, kw);
  if (sr_pytree_check_depth(I, both) < 0) {
    sr_unref(both);
    return -1;
  }
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  all_leaves(both, leaves);
  int k = 0;
  c->tree = sr_pytree_numbered(both, &k);
  sr_unref(both);
  c->leaves = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  *ops = sr_seq(NULL, SR_V_LIST, 0);
  SrVal *asarray = sr_lookup_qualname("jax.numpy.asarray");
  for (int i = 0; i < leaves->seq.n; i++) {
    SrVal *x = leaves->seq.items[i];
    if (!is_dynamic(x)) {
      sr_seq_push(NULL, c->leaves, sr_ref(x));
      continue;
    }
    sr_seq_push(NULL, c->leaves, sr_none());
    SrVal *arr = sr_array_of(x) ? sr_ref(x) : sr_call1(I, asarray, x);
    if (!arr) {
      sr_unref(leaves);
      return -1;
    }
    sr_seq_push(NULL, *ops, arr);
  }
  sr_unref(leaves);
  return 0;
}

/* static_args as JAX prints it: a tuple of (index, value) pairs. */
static void static_args_text(SrBuf *b, const DbgCall *c) {
  int n = 0;
  sr_buf_puts(b, "(");
  for (int i = 0; i < c->leaves->seq.n; i++) {
    SrVal *x = c->leaves->seq.items[i];
    if (x->kind == SR_V_NONE) continue;
    sr_buf_printf(b, "%s(%d, ", n++ ? ", " : "", i);
    sr_val_repr(b, x);
    sr_buf_puts(b, ")");
  }
  sr_buf_puts(b, n == 1 ? ",)" : ")");
}

static SrVal *bind_call(SrInterp *I, int prim, SrVal *ops, SrPList *ps) {
  SrVal *r = sr_bind(I, prim, ops->seq.n, ops->seq.items, ps->n, ps->p);
  sr_plist_free(ps);
  sr_unref(ops);
  if (!r) return NULL;
  sr_unref(r);
  return sr_none();
}

/* numpy's get_printoptions().items() for the options o, as Debian's
   numpy 1.24 gives them */
static void np_printoptions_text(SrBuf *b, const SrNumfmtOpts *o) {
  static const char *const fm[] = {"maxprec", "maxprec_equal", "fixed", "unique"};
  static const int fm_id[] = {SR_FM_MAXPREC, SR_FM_MAXPREC_EQUAL, SR_FM_FIXED, SR_FM_UNIQUE};
  const char *f = "maxprec";
  for (int i = 0; i < 4; i++)
    if (fm_id[i] == o->floatmode) f = fm[i];
  sr_buf_printf(b,
                "(('edgeitems', %d), ('threshold', %d), ('floatmode', '%s'), ('precision', %d), ('suppress', %s), "
                "('linewidth', %d), ('nanstr', '%s'), ('infstr', '%s'), ('sign', '%c'), ('formatter', None), "
                "('legacy', False))",
                o->edgeitems, o->threshold, f, o->precision, o->suppress ? "True" : "False", o->linewidth, o->nanstr,
                o->infstr, o->sign);
}

SrVal *sr_debug_print_staged(SrInterp *I, SrVal *fmt, SrArgs *a, int has_placeholders, int ordered,
                             int partitioned) {
  DbgCall *c = sr_xcalloc(1, sizeof *c);
  c->kind = SR_P_debug_print;
  c->fmt = sr_ref(fmt);
  c->has_placeholders = has_placeholders;
  SrVal *ops = NULL;
  if (split_args(I, c, a, &ops) < 0) {
    dbg_free(c);
    return NULL;
  }
  SrBuf b = SR_BUF_INIT;
  sr_vjp_treedef_str(&b, c->tree);
  c->text = sr_xstrdup(sr_buf_str(&b));
  sr_buf_reset(&b);
  static_args_text(&b, c);
  SrPList ps = {0};
  sr_plist_add(&ps, "fmt", sr_word(NULL, fmt->str.s, fmt->str.n));
  sr_plist_add(&ps, "has_placeholders", sr_bool(has_placeholders));
  sr_plist_add(&ps, "in_tree", sr_obj(&dbg_class, c));
  sr_plist_add(&ps, "logging_record", sr_none());
  /* the print options in force now are the ones it prints with (its
     np_printoptions param) */
  c->opts = sr_numfmt_opts;
  SrBuf po = SR_BUF_INIT;
  np_printoptions_text(&po, &c->opts);
  sr_plist_add(&ps, "np_printoptions", sr_word(NULL, po.p, po.len));
  sr_buf_free(&po);
  sr_plist_add(&ps, "ordered", sr_bool(ordered));
  sr_plist_add(&ps, "partitioned", sr_bool(partitioned));
  sr_plist_add(&ps, "static_args", sr_word(NULL, b.p, b.len));
  sr_buf_free(&b);
  return bind_call(I, SR_P_debug_print, ops, &ps);
}

/* str(function) with core.pp_kv_pair's address masked */
#define MASKED_AT " at 0xXXXXXXXXXXXX>"

SrVal *sr_debug_callback_staged(SrInterp *I, SrVal *fn, SrArgs *a, int ordered, int partitioned) {
  DbgCall *c = sr_xcalloc(1, sizeof *c);
  c->kind = SR_P_debug_callback;
  c->fn = sr_ref(fn);
  SrVal *ops = NULL;
  if (split_args(I, c, a, &ops) < 0) {
    dbg_free(c);
    return NULL;
  }
  c->text = sr_xstrdup("<function debug_callback.<locals>._debug_callback.<locals>._flat_callback" MASKED_AT);
  SrPList ps = {0};
  sr_plist_add(&ps, "callback", sr_obj(&dbg_class, c));
  sr_plist_add(&ps, "effect", sr_word(NULL, ordered ? "OrderedDebug" : "Debug", ordered ? 12 : 5));
  sr_plist_add(&ps, "partitioned", sr_bool(partitioned));
  return bind_call(I, SR_P_debug_callback, ops, &ps);
}

/* str(fn) as core.pp_kv_pair prints it: a Python function's address
   masked (ours print none, so the mask is added), a built-in as CPython
   names it. */
char *sr_debug_callback_text(SrVal *fn) {
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, fn);
  const char *s = sr_buf_str(&b);
  char *r;
  if (!strncmp(s, "<function builtins.", 19)) {
    SrBuf c = SR_BUF_INIT;
    sr_buf_printf(&c, "<built-in function %s", s + 19);
    r = sr_xstrdup(sr_buf_str(&c));
    sr_buf_free(&c);
  } else if (!strncmp(s, "<function ", 10) && b.len && s[b.len - 1] == '>' && !strstr(s, " at 0x")) {
    b.len--;
    sr_buf_puts(&b, MASKED_AT);
    r = sr_xstrdup(sr_buf_str(&b));
  } else {
    r = sr_xstrdup(s);
  }
  sr_buf_free(&b);
  return r;
}

/* inspect_array_sharding(value, *, callback): one inspect_sharding per leaf */
static SrVal *bi_inspect(SrInterp *I, SrArgs *args) {
  SrVal *p[2];
  if (sr_args_parse(I, args, "inspect_array_sharding", "value, *, callback", p) < 0) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  for (int i = 0; i < leaves->seq.n; i++) {
    SrVal *x = leaves->seq.items[i];
    SrArrayObj *o = sr_array_of(x);
    if (!I->trace && o && o->kind == SR_AV_CONCRETE) {
      /* _inspect_sharding_impl: callback(value.sharding) now */
      SrVal *sh = sr_getattr(I, x, "sharding");
      SrVal *r = sh ? sr_call1(I, p[1], sh) : NULL;
      sr_unref(sh);
      if (!r) {
        sr_unref(leaves);
        return NULL;
      }
      sr_unref(r);
      continue;
    }
    DbgCall *c = sr_xcalloc(1, sizeof *c);
    c->kind = SR_P_inspect_sharding;
    c->fn = sr_ref(p[1]);
    c->text = sr_debug_callback_text(p[1]);
    SrVal *ops = sr_seq(NULL, SR_V_LIST, 0);
    SrVal *arr = o ? sr_ref(x) : sr_call1(I, sr_lookup_qualname("jax.numpy.asarray"), x);
    if (!arr) {
      dbg_free(c);
      sr_unref(ops);
      sr_unref(leaves);
      return NULL;
    }
    sr_seq_push(NULL, ops, arr);
    SrPList ps = {0};
    sr_plist_add(&ps, "callback", sr_obj(&dbg_class, c));
    SrVal *r = bind_call(I, SR_P_inspect_sharding, ops, &ps);
    if (!r) {
      sr_unref(leaves);
      return NULL;
    }
    sr_unref(r);
  }
  sr_unref(leaves);
  return sr_none();
}

/* ---- the rules ---- */

static SrVal *find_param(const SrParam *ps, uint32_t n, const char *key) {
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(ps[i].key, key)) return ps[i].val;
  return NULL;
}

static DbgCall *call_of(const SrParam *ps, uint32_t n) {
  SrVal *v = find_param(ps, n, "in_tree");
  if (!v) v = find_param(ps, n, "callback");
  return v && sr_is_obj(v, &dbg_class) ? v->obj.data : NULL;
}

static int ty_debug(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  (void)cx;
  (void)e;
  (void)out;
  return 0;
}

static uint32_t nout_none(int nin, const SrParam *ps, int np) {
  (void)nin;
  (void)ps;
  (void)np;
  return 0;
}

/* Runs c's callback on the operands vals (new references, stolen). */
static int run_call(SrInterp *I, DbgCall *c, SrVal **vals, int n) {
  int rc = -1;
  if (c->kind == SR_P_inspect_sharding) {
    SrVal *sh = sr_getattr(I, vals[0], "sharding");
    if (sh && sh->kind == SR_V_SHARDING && sh->sh.mesh) {
      /* the lowering's Mesh(devices, axis_names): Auto axes */
      uint8_t types[SR_MAX_AXES] = {0};
      for (int i = 0; i < SR_MAX_AXES; i++) types[i] = SR_AXIS_AUTO;
      SrVal *auto_sh = sr_sharding_val(NULL, sr_mesh_with_types(sh->sh.mesh, types), sh->sh.spec, sh->sh.memory_kind);
      sr_unref(sh);
      sh = auto_sh;
    }
    SrVal *r = sh ? sr_call1(I, c->fn, sh) : NULL;
    sr_unref(sh);
    rc = r ? 0 : -1;
    sr_unref(r);
    sr_unref(vals[0]);
    return rc;
  }
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, c->leaves->seq.n);
  for (int i = 0, k = 0; i < c->leaves->seq.n; i++) {
    SrVal *x = c->leaves->seq.items[i];
    sr_seq_push(NULL, leaves, x->kind == SR_V_NONE && k < n ? vals[k++] : sr_ref(x));
  }
  SrVal *both = sr_pytree_unflatten(c->tree, leaves);
  sr_unref(leaves);
  SrVal *args = both->seq.items[0], *kw = both->seq.items[1];
  SrArgs a = {0};
  a.n = args->seq.n;
  a.v = args->seq.items;
  a.nkw = kw->dict.n;
  a.kw = sr_xcalloc((size_t)a.nkw + 1, sizeof *a.kw);
  a.kwv = kw->dict.vals;
  for (int i = 0; i < a.nkw; i++) a.kw[i] = sr_intern(kw->dict.keys[i]->str.s, kw->dict.keys[i]->str.n);
  if (c->kind == SR_P_debug_print) {
    /* _format_print_callback, under the options it was traced with */
    SrBuf b = SR_BUF_INIT;
    int ok = 1;
    SrNumfmtOpts saved = sr_numfmt_opts;
    sr_numfmt_opts = c->opts;
    if (c->has_placeholders) {
      SrVal *msg = sr_str_format(I, c->fmt, &a);
      if (msg) sr_buf_putn(&b, msg->str.s, msg->str.n);
      else ok = 0;
      sr_unref(msg);
    } else {
      sr_buf_putn(&b, c->fmt->str.s, c->fmt->str.n);
      for (int i = 0; i < a.n; i++) {
        sr_buf_puts(&b, " ");
        sr_val_str(&b, a.v[i]);
      }
    }
    sr_numfmt_opts = saved;
    if (ok) {
      sr_buf_puts(&b, "\n");
      sr_write(I, b.p, b.len);
      rc = 0;
    }
    sr_buf_free(&b);
  } else {
    SrVal *r = sr_call(I, c->fn, &a);
    rc = r ? 0 : -1;
    sr_unref(r);
  }
  free(a.kw);
  sr_unref(both);
  return rc;
}

/* The blocks of a inside shard_map, stacked: an array of shape (devices,
   *block) split along its first dimension over every mesh axis, whose
   shard on each device is the buffer that device holds.  Indexing it
   (sr_getindex) gives a device's block wherever it is held (another MPI
   rank's too).  A concrete value, new reference. */
SrVal *sr_debug_stacked_blocks(SrEvalCtx *cx, SrArray *a) {
  const SrMesh *cm = cx->mesh;
  uint8_t types[SR_MAX_AXES] = {0};
  for (int i = 0; i < SR_MAX_AXES; i++) types[i] = SR_AXIS_EXPLICIT;
  const SrMesh *m = sr_mesh_with_types(cm, types);
  const SrType *lt = sr_type_strip_sharding(a->type);
  SrTypeBuilder tb;
  sr_type_builder(&tb, lt);
  tb.ndim = (uint8_t)(lt->ndim + 1);
  tb.dims[0] = (SrDim){0};
  tb.dims[0].size = sr_mesh_ndev(m);
  tb.dims[0].nax = (uint8_t)m->n;
  for (int i = 0; i < m->n; i++) tb.dims[0].ax[i] = (uint8_t)i;
  for (int i = 0; i < lt->ndim; i++) tb.dims[i + 1] = lt->dims[i];
  tb.mesh = m;
  const SrType *t = sr_type_get(&tb);
  SrArray *r = sr_array_new(t, sr_layout_of_type(t), m);
  for (int p = 0; p < r->ndev; p++) r->shard[p] = a->shard[p] ? sr_buffer_ref(a->shard[p]) : NULL;
  /* gathered onto every device, so that indexing it is local */
  tb.dims[0].nax = 0;
  const SrType *rt = sr_type_get(&tb);
  SrArray *g = sr_redistribute(cx, r, m, sr_layout_of_type(rt));
  sr_array_unref(r);
  if (!g) return NULL;
  SrArray *out = sr_array_retype(g, rt, sr_layout_of_type(rt));
  sr_array_unref(g);
  return sr_array_concrete(out);
}

static int ev_debug(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrInterp *I = cx->I;
  DbgCall *c = call_of(e->params, e->nparams);
  if (!I || !c) return sr_ev_err(cx, "NotImplementedError", "%s: no callback to run (an equation read from a text)", e->prim->name);
  int manual = cx->mesh && sr_mesh_axes_of_type(cx->mesh, SR_AXIS_MANUAL) && c->kind != SR_P_inspect_sharding;
  int ncalls = manual ? sr_mesh_ndev(cx->mesh) : 1;
  SrVal **vals = sr_xcalloc(e->nin + 1, sizeof *vals), **blocks = sr_xcalloc(e->nin + 1, sizeof *blocks);
  int rc = 0;
  for (uint32_t i = 0; i < e->nin && manual && rc == 0; i++)
    if (!(blocks[i] = sr_debug_stacked_blocks(cx, e->in[i]))) rc = -1;
  for (int p = 0; p < ncalls && rc == 0; p++) {
    uint32_t got = 0;
    for (uint32_t i = 0; i < e->nin; i++, got++) {
      vals[i] = manual ? sr_getindex(I, blocks[i], p) : sr_array_concrete(sr_array_ref(e->in[i]));
      if (!vals[i]) break;
    }
    if (got < e->nin) {
      for (uint32_t i = 0; i < got; i++) sr_unref(vals[i]);
      rc = -1;
    } else if (run_call(I, c, vals, (int)e->nin) < 0 || sr_interrupt_point(I)) {
      rc = -1;
      /* inspect_sharding's callback runs while JAX lowers: what it raises
         is raised as it is */
      if (c->kind == SR_P_inspect_sharding && I->exc && (!cx->d || !cx->d->count))
        sr_ev_err(cx, sr_exc_type(I->exc), "%s", sr_exc_msg(I->exc));
    }
  }
  for (uint32_t i = 0; i < e->nin; i++) sr_unref(blocks[i]);
  free(blocks);
  free(vals);
  return rc;
}

/* debug_callback_jvp_rule: bound on the primals, no tangents */
static int jvp_debug(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  (void)t;
  (void)y;
  (void)ty;
  return sr_ad_bind_eqn(ad, e, x) ? 0 : -1;
}

/* debug_callback_transpose_rule: None for every operand */
static int tr_debug(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)ad;
  (void)ct;
  (void)x;
  for (uint32_t i = 0; i < e->nin; i++) cx[i] = NULL;
  return 0;
}

/* debug_batching_rule: unrolled over the mapped axis (inspect_sharding's
   rule binds it once on the batched value) */
static int batch_debug(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  (void)y;
  (void)ybd;
  if (e->prim->id == SR_P_inspect_sharding) return sr_ad_bind(&b->ad, e->prim->id, (int)e->nin, x, (int)e->nparams, e->params) ? 0 : -1;
  SrVal **xi = sr_xcalloc(e->nin + 1, sizeof *xi);
  int rc = 0;
  for (int64_t k = 0; k < b->size && rc == 0; k++) {
    for (uint32_t i = 0; i < e->nin; i++) {
      if (bd[i] < 0) {
        xi[i] = sr_ref(x[i]);
        continue;
      }
      const SrType *t = sr_ad_type(&b->ad, x[i]);
      int64_t start[SR_MAX_RANK], limit[SR_MAX_RANK], strides[SR_MAX_RANK];
      for (int d = 0; d < t->ndim; d++) {
        start[d] = d == bd[i] ? k : 0;
        limit[d] = d == bd[i] ? k + 1 : t->dims[d].size;
        strides[d] = 1;
      }
      SrVal *s = sr_op_slice(SR_AD_BINDER(&b->ad), x[i], start, limit, strides);
      int64_t dim = bd[i];
      xi[i] = s ? sr_op_squeeze(SR_AD_BINDER(&b->ad), s, &dim, 1) : NULL;
      sr_unref(s);
      if (!xi[i]) rc = -1;
    }
    if (rc == 0 && !sr_ad_bind(&b->ad, e->prim->id, (int)e->nin, xi, (int)e->nparams, e->params)) rc = -1;
    for (uint32_t i = 0; i < e->nin; i++) {
      sr_unref(xi[i]);
      xi[i] = NULL;
    }
  }
  free(xi);
  return rc;
}

void sr_debug_trace_init(void) {
  static const int ids[] = {SR_P_debug_print, SR_P_debug_callback, SR_P_inspect_sharding};
  sr_val_keep_class(&dbg_class);
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
    int id = ids[i];
    sr_set_type_rule(id, ty_debug);
    sr_set_eval_rule(id, ev_debug);
    sr_ad_set_jvp(id, jvp_debug);
    if (id != SR_P_inspect_sharding) sr_ad_set_transpose(id, tr_debug);
    sr_prims[id].batch = batch_debug;
    sr_prims[id].nout = nout_none;
  }
  sr_def("jax.debug.inspect_array_sharding", bi_inspect,
         "inspect_array_sharding(value, *, callback): callback(sharding) of each leaf (under jit: when it runs)");
}
