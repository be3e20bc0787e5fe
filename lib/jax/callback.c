/* callback.c: host callbacks with results (callback.py): jax.pure_callback
 * and jax.experimental.io_callback, the pure_callback and io_callback
 * primitives.
 *
 *     b:f32[3] = pure_callback[
 *       callback=_FlatCallback(callback_func=<function f at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))
 *       result_avals=(ShapedArray(float32[3]),)
 *       sharding=None
 *       vmap_method=None
 *     ] a
 *     c:f32[3] = io_callback[callback=... ordered=True result_avals=(...) sharding=None] a
 *
 * Every leaf of (args, kwargs) is an operand (a Python number becomes a
 * weakly typed array).  The results are result_shape_dtypes' leaves as
 * ShapedArray(shape, dtype) (_check_shape_dtype first: no 64-bit dtype
 * without jax_enable_x64), unflattened in its structure.  The callback
 * runs when the equation runs (eagerly too: JAX's impl compiles the
 * primitive alone), on the operands as jax.Arrays; its result's leaves go
 * through np.asarray and dtypes.canonicalize_value and are checked
 * against result_avals as emit_python_callback's _wrapped_callback does
 * (number, shape, dtype, its RuntimeErrors).  What the callback raises
 * comes back as jaxlib's CPU callback error, a JaxRuntimeError whose
 * message holds the Python error.  Inside shard_map (every mesh axis
 * Manual) it runs once per device on the device's blocks, in mesh order,
 * and each device's results are that device's blocks
 * (_callback_op_sharding's MANUAL sharding); elsewhere once on the whole
 * values (MAXIMAL).
 *
 * pure_callback has no effect: an unused one is dropped.  io_callback has
 * the IO effect (OrderedIO with ordered=True): it is kept, and runs in
 * program order.  JVP and transpose are errors (pure_callback_jvp_rule,
 * io_callback_jvp_rule, ...).  vmap: pure_callback by its vmap_method
 * (ffi.ffi_batching_rule: a scan of the callback over the mapped
 * operands for sequential and sequential_unrolled, the unmapped operands
 * broadcast to size 1 for expand_dims and to the axis' size for
 * broadcast_all, the operands as they are for legacy_vectorized, an
 * error for None); io_callback a lax.map of it when unordered
 * (io_callback_batching_rule), an error when ordered.
 *
 * The rules that call Python (the eval rule, the sequential vmap's
 * lax.scan) sit above py/, so the rows' rules are all here, as
 * debug_trace.c's are for the debug callbacks.  Also here: the effects of
 * equations and jaxprs as JAX lists them for callbacks (JaxprEqn.effects,
 * Jaxpr.effects: IO, OrderedIO, Debug, OrderedDebug) and tokens
 * (lax.create_token, core.Token; the create_token row is structural.c's). */
#include <stdlib.h>
#include <string.h>

#include "jax/callback.h"

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "ad/ops.h"
#include "check/rule.h"
#include "core/jaxstate.h"
#include "exec/eval.h"
#include "jax/builtins_exec.h"
#include "jax/debug_trace.h"
#include "jax/np_host.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "jax/vjp.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* The callback param: _FlatCallback(callback_func, in_tree). */
typedef struct CbFn {
  SrVal *fn;       /* the user's function */
  SrVal *tree;     /* the numbered tree of (args, kwargs) */
  SrVal *sharding; /* the sharding param as given (the rules bind it again) */
  char *text;
} CbFn;

static void cbfn_free(void *d) {
  CbFn *c = d;
  sr_unref(c->fn);
  sr_unref(c->tree);
  sr_unref(c->sharding);
  free(c->text);
  free(c);
}

static void cbfn_repr(SrBuf *out, const SrVal *v) { sr_buf_puts(out, ((const CbFn *)v->obj.data)->text); }

static const SrClass cbfn_class = {"_FlatCallback", cbfn_free, cbfn_repr, NULL, NULL};

/* The result_avals param: a tuple of ShapedArrays. */
typedef struct CbAvals {
  int n;
  const SrType **t;
} CbAvals;

static void avals_free(void *d) {
  CbAvals *a = d;
  free(a->t);
  free(a);
}

static void avals_repr(SrBuf *out, const SrVal *v) {
  const CbAvals *a = v->obj.data;
  sr_buf_putc(out, '(');
  for (int i = 0; i < a->n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_aval_repr(out, a->t[i]);
  }
  sr_buf_puts(out, a->n == 1 ? ",)" : ")");
}

static const SrClass avals_class = {"result_avals", avals_free, avals_repr, NULL, NULL};

static SrVal *avals_val(int n, const SrType *const *t) {
  CbAvals *a = sr_xcalloc(1, sizeof *a);
  a->n = n;
  a->t = sr_xcalloc((size_t)n + 1, sizeof *a->t);
  for (int i = 0; i < n; i++) a->t[i] = t[i];
  return sr_obj(&avals_class, a);
}

static SrVal *param_of(const SrParam *ps, uint32_t n, const char *key) {
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(ps[i].key, key)) return ps[i].val;
  return NULL;
}

static CbFn *cbfn_of(const SrParam *ps, uint32_t n) {
  SrVal *v = param_of(ps, n, "callback");
  return v && sr_is_obj(v, &cbfn_class) ? v->obj.data : NULL;
}

static CbAvals *avals_of(const SrParam *ps, uint32_t n) {
  SrVal *v = param_of(ps, n, "result_avals");
  return v && sr_is_obj(v, &avals_class) ? v->obj.data : NULL;
}

static int is_64bit(SrDtype d) { return d == SR_F64 || d == SR_I64 || d == SR_U64 || d == SR_C128; }

/* ---- binding ---- */

/* A leaf of result_shape_dtypes as ShapedArray(x.shape, x.dtype), after
   _check_shape_dtype; NULL with an exception raised. */
static const SrType *leaf_aval(SrInterp *I, SrVal *x) {
  SrVal *dt = sr_getattr(I, x, "dtype");
  if (!dt) return NULL;
  int d = -1;
  if (dt->kind == SR_V_DTYPE) d = (int)dt->dtype;
  else if (sr_dtype_arg(I, dt, &d, "dtype") < 0) d = -2;
  sr_unref(dt);
  if (d == -2) return NULL;
  if (d < 0) return sr_raise(I, "TypeError", "Cannot interpret 'None' as a data type"), NULL;
  if (is_64bit((SrDtype)d) && !I->jax->enable_x64)
    return sr_raise(I, "ValueError",
                    "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled"),
           NULL;
  SrVal *sh = sr_getattr(I, x, "shape");
  if (!sh) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = 0;
  int rc = sr_shape_arg(I, sh, shape, &nd, "shape");
  sr_unref(sh);
  if (rc < 0) return NULL;
  return sr_type_array((SrDtype)d, nd, shape);
}

SrVal *sr_callback_bind(SrInterp *I, int prim, SrVal *fn, SrVal *result_shape_dtypes, SrArgs *a, SrVal *sharding,
                        SrVal *mode) {
  SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  SrVal *kw = sr_dict(NULL);
  for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, kw, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
  SrVal *both = sr_pair(args, kw);
  SrVal *leaves = sr_pytree_flatten_any(I, both);
  SrVal *rleaves = leaves ? sr_pytree_flatten_any(I, result_shape_dtypes) : NULL;
  SrVal *r = NULL, *ops = NULL;
  const SrType **rt = NULL;
  if (!rleaves) goto done;
  /* tree_map(_check_shape_dtype, ...), then the avals */
  rt = sr_xcalloc((size_t)rleaves->seq.n + 1, sizeof *rt);
  for (int i = 0; i < rleaves->seq.n; i++)
    if (!(rt[i] = leaf_aval(I, rleaves->seq.items[i]))) goto done;
  ops = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  SrVal *asarray = sr_lookup_qualname("jax.numpy.asarray");
  for (int i = 0; i < leaves->seq.n; i++) {
    SrVal *x = leaves->seq.items[i];
    SrVal *arr = sr_array_of(x) ? sr_ref(x) : sr_call1(I, asarray, x);
    if (!arr) goto done;
    sr_seq_push(NULL, ops, arr);
  }
  CbFn *c = sr_xcalloc(1, sizeof *c);
  c->fn = sr_ref(fn);
  c->sharding = sr_ref(sharding);
  int k = 0;
  c->tree = sr_pytree_numbered(both, &k);
  SrBuf b = SR_BUF_INIT;
  char *ft = sr_debug_callback_text(fn);
  sr_buf_printf(&b, "_FlatCallback(callback_func=%s, in_tree=", ft);
  free(ft);
  sr_vjp_treedef_str(&b, c->tree);
  sr_buf_puts(&b, ")");
  c->text = sr_xstrdup(sr_buf_str(&b));
  sr_buf_free(&b);
  SrPList ps = {0};
  sr_plist_add(&ps, "callback", sr_obj(&cbfn_class, c));
  if (prim == SR_P_io_callback) sr_plist_add(&ps, "ordered", sr_ref(mode));
  sr_plist_add(&ps, "result_avals", avals_val(rleaves->seq.n, rt));
  sr_plist_add(&ps, "sharding", sr_ref(sharding));
  if (prim == SR_P_pure_callback) sr_plist_add(&ps, "vmap_method", sr_ref(mode));
  SrVal *outs = sr_bind(I, prim, ops->seq.n, ops->seq.items, ps.n, ps.p);
  sr_plist_free(&ps);
  if (outs) {
    r = sr_pytree_unflatten(result_shape_dtypes, outs);
    sr_unref(outs);
  }
done:
  free(rt);
  sr_unref(ops);
  sr_unref(rleaves);
  sr_unref(leaves);
  sr_unref(both);
  return r;
}

/* pure_callback(callback, result_shape_dtypes, *args, sharding=None,
   vmap_method=None, **kwargs) */
static SrVal *bi_pure_callback(SrInterp *I, SrArgs *args) {
  static const char *const methods[] = {"sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                                        "legacy_vectorized"};
  if (args->n < 2)
    return sr_raise(I, "TypeError", "pure_callback() missing %d required positional argument%s: %s", 2 - args->n,
                    args->n ? "" : "s", args->n ? "'result_shape_dtypes'" : "'callback' and 'result_shape_dtypes'");
  SrArgs a = *args;
  SrVal *sharding = sr_none(), *vm = sr_none();
  const char **kw = sr_xcalloc((size_t)a.nkw + 1, sizeof *kw);
  SrVal **kwv = sr_xcalloc((size_t)a.nkw + 1, sizeof *kwv);
  int m = 0;
  for (int i = 0; i < a.nkw; i++) {
    if (!strcmp(a.kw[i], "sharding")) sharding = a.kwv[i];
    else if (!strcmp(a.kw[i], "vmap_method")) vm = a.kwv[i];
    else kw[m] = a.kw[i], kwv[m++] = a.kwv[i];
  }
  SrVal *r = NULL, *mode = NULL;
  if (vm->kind != SR_V_NONE) {
    for (size_t i = 0; i < sizeof methods / sizeof *methods && !mode; i++)
      if (vm->kind == SR_V_STR && !strcmp(vm->str.s, methods[i])) mode = sr_word(NULL, vm->str.s, vm->str.n);
  } else {
    mode = sr_none();
  }
  if (!mode) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, vm);
    sr_raise(I, "ValueError",
             "vmap_method must be on of the allowed methods ['sequential', 'sequential_unrolled', 'expand_dims', "
             "'broadcast_all', 'legacy_vectorized', None], but got: %s",
             sr_buf_str(&b));
    sr_buf_free(&b);
  } else {
    SrArgs ca = {a.n - 2, a.v + 2, m, kw, kwv, NULL};
    r = sr_callback_bind(I, SR_P_pure_callback, a.v[0], a.v[1], &ca, sharding, mode);
  }
  sr_unref(mode);
  free(kw);
  free(kwv);
  return r;
}

/* io_callback(callback, result_shape_dtypes, *args, sharding=None,
   ordered=False, **kwargs) */
static SrVal *bi_io_callback(SrInterp *I, SrArgs *args) {
  if (args->n < 2)
    return sr_raise(I, "TypeError", "io_callback() missing %d required positional argument%s: %s", 2 - args->n,
                    args->n ? "" : "s", args->n ? "'result_shape_dtypes'" : "'callback' and 'result_shape_dtypes'");
  SrArgs a = *args;
  SrVal *sharding = sr_none();
  int ordered = 0;
  const char **kw = sr_xcalloc((size_t)a.nkw + 1, sizeof *kw);
  SrVal **kwv = sr_xcalloc((size_t)a.nkw + 1, sizeof *kwv);
  int m = 0;
  for (int i = 0; i < a.nkw; i++) {
    if (!strcmp(a.kw[i], "sharding")) sharding = a.kwv[i];
    else if (!strcmp(a.kw[i], "ordered")) ordered = sr_truthy(I, a.kwv[i]);
    else kw[m] = a.kw[i], kwv[m++] = a.kwv[i];
  }
  SrVal *r = NULL;
  if (ordered >= 0) {
    SrArgs ca = {a.n - 2, a.v + 2, m, kw, kwv, NULL};
    r = sr_callback_bind(I, SR_P_io_callback, a.v[0], a.v[1], &ca, sharding, sr_bool(ordered));
  }
  free(kw);
  free(kwv);
  return r;
}

/* ---- the rules ---- */

static int ty_cb(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  (void)cx;
  CbAvals *av = avals_of(e->params, e->nparams);
  for (uint32_t i = 0; i < e->nout; i++) out[i] = av && (int)i < av->n ? av->t[i] : e->written ? e->written[i] : NULL;
  if (!av && !e->written && e->nout) return sr_terr(cx, "TypeError", "%s: no result_avals", e->prim->name);
  return 0;
}

static uint32_t nout_cb(int nin, const SrParam *ps, int np) {
  (void)nin;
  CbAvals *av = avals_of(ps, (uint32_t)np);
  return av ? (uint32_t)av->n : 0;
}

/* The Python error being raised, as jaxlib's CPU callback reports it:
   "INTERNAL: CpuCallback error calling callback: TYPE: MESSAGE", raised
   as a JaxRuntimeError (a RuntimeError). */
static int callback_error(SrEvalCtx *cx) {
  SrInterp *I = cx->I;
  if (!I->exc) return sr_ev_err(cx, "JaxRuntimeError", "INTERNAL: CpuCallback error calling callback");
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "%s: %s", sr_exc_type(I->exc), sr_exc_msg(I->exc));
  sr_exc_clear(I);
  sr_ev_err(cx, "JaxRuntimeError", "INTERNAL: CpuCallback error calling callback: %s", sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

static void shape_text(SrBuf *b, const SrType *t) {
  sr_buf_putc(b, '(');
  for (int d = 0; d < t->ndim; d++) sr_buf_printf(b, "%s%lld", d ? ", " : "", (long long)t->dims[d].size);
  sr_buf_puts(b, t->ndim == 1 ? ",)" : ")");
}

/* Runs the callback on vals (c's operands, borrowed) and writes its
   results' data to res[k] (row-major, av->t[k]'s size).  -1 with I->exc
   set. */
static int run_cb(SrEvalCtx *cx, CbFn *c, CbAvals *av, SrVal **vals, int n, unsigned char **res) {
  SrInterp *I = cx->I;
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, leaves, sr_ref(vals[i]));
  SrVal *both = sr_pytree_unflatten(c->tree, leaves);
  sr_unref(leaves);
  SrVal *args = both->seq.items[0];
  SrVal *r = sr_call_kwdict(I, c->fn, args->seq.n, args->seq.items, both->seq.items[1]);
  sr_unref(both);
  if (!r) return -1;
  /* tree_leaves of the result; then _wrapped_callback's checks */
  SrVal *outs = sr_pytree_flatten_any(I, r);
  sr_unref(r);
  if (!outs) return -1;
  int rc = 0;
  if (outs->seq.n != av->n) {
    sr_raise(I, "RuntimeError", "Mismatched number of outputs from callback. Expected: %d, Actual: %d", av->n,
             outs->seq.n);
    rc = -1;
  }
  for (int k = 0; k < av->n && rc == 0; k++) {
    /* dtypes.canonicalize_value(np.asarray(a)) */
    SrVal *nd = sr_np_asarray(I, outs->seq.items[k], -1);
    SrVal *jv = nd ? sr_ndarray_to_jax(I, nd, 0) : NULL;
    sr_unref(nd);
    SrArrayObj *o = jv ? sr_array_of(jv) : NULL;
    if (!o || !o->data) {
      if (jv && !I->exc) sr_raise(I, "TypeError", "the callback's result #%d is not an array", k);
      sr_unref(jv);
      rc = -1;
      break;
    }
    const SrType *got = o->type, *want = av->t[k];
    int same_shape = got->ndim == want->ndim;
    for (int d = 0; same_shape && d < got->ndim; d++) same_shape = got->dims[d].size == want->dims[d].size;
    SrBuf b = SR_BUF_INIT;
    if (!same_shape) {
      sr_buf_printf(&b, "Incorrect output shape for return value #%d: Expected: ", k);
      shape_text(&b, want);
      sr_buf_puts(&b, ", Actual: ");
      shape_text(&b, got);
      sr_raise(I, "RuntimeError", "%s", sr_buf_str(&b));
      rc = -1;
    } else if (got->dtype != want->dtype) {
      sr_raise(I, "RuntimeError", "Incorrect output dtype for return value #%d: Expected: %s, Actual: %s", k,
               sr_dtype_name(want->dtype), sr_dtype_name(got->dtype));
      rc = -1;
    } else if (sr_array_to_host(cx, o->data, res[k]) < 0) {
      rc = -1;
    }
    sr_buf_free(&b);
    sr_unref(jv);
  }
  sr_unref(outs);
  return rc;
}

typedef struct CopyArg {
  int n;
  unsigned char **stack; /* per result: the devices' blocks, one after another */
  size_t *bytes;         /* per result: a block's size */
} CopyArg;

static int copy_block(SrShardIO *io) {
  CopyArg *c = io->arg;
  for (int k = 0; k < c->n; k++)
    if (c->bytes[k]) memcpy(io->out[k]->data, c->stack[k] + (size_t)io->pos * c->bytes[k], c->bytes[k]);
  return 0;
}

static int ev_cb(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrInterp *I = cx->I;
  CbFn *c = cbfn_of(e->params, e->nparams);
  CbAvals *av = avals_of(e->params, e->nparams);
  if (!I || !c || !av || (uint32_t)av->n != e->nout)
    return sr_ev_err(cx, "NotImplementedError", "%s: no callback to run (an equation read from a text)",
                     e->prim->name);
  int manual = 0;
  if (cx->mesh && sr_mesh_axes_of_type(cx->mesh, SR_AXIS_MANUAL)) {
    /* _callback_op_sharding */
    for (int i = 0; i < cx->mesh->n; i++)
      if (cx->mesh->types[i] != SR_AXIS_MANUAL)
        return sr_ev_err(cx, "NotImplementedError",
                         "callbacks are only supported in spmd computations when all mesh axes are partitioned "
                         "manually (no partial automatic sharding).");
    SrVal *sh = param_of(e->params, e->nparams, "sharding");
    if (sh && sh->kind != SR_V_NONE)
      return sr_ev_err(cx, "NotImplementedError", "callbacks do not support specifying sharding inside spmd computations");
    manual = 1;
  } else {
    /* _callback_op_sharding: a MAXIMAL sharding on the device given */
    SrVal *sh = param_of(e->params, e->nparams, "sharding");
    if (sh && sh->kind == SR_V_SHARDING && sh->sh.mesh && sh->sh.mesh->n)
      return sr_ev_err(cx, "NotImplementedError",
                       "pure_callback only supports SingleDeviceSharding, but got <class "
                       "'jax._src.named_sharding.NamedSharding'>");
  }
  int ncalls = manual ? sr_mesh_ndev(cx->mesh) : 1;
  uint32_t no = e->nout;
  size_t *bytes = sr_xcalloc(no + 1, sizeof *bytes);
  unsigned char **stack = sr_xcalloc(no + 1, sizeof *stack), **res = sr_xcalloc(no + 1, sizeof *res);
  SrVal **vals = sr_xcalloc(e->nin + 1, sizeof *vals), **blocks = sr_xcalloc(e->nin + 1, sizeof *blocks);
  int rc = 0;
  for (uint32_t k = 0; k < no; k++) {
    bytes[k] = (size_t)sr_type_numel(av->t[k]) * sr_elem_size(av->t[k]->dtype);
    stack[k] = sr_xmalloc(bytes[k] * (size_t)ncalls + 1);
  }
  for (uint32_t i = 0; i < e->nin && manual && rc == 0; i++)
    if (!(blocks[i] = sr_debug_stacked_blocks(cx, e->in[i]))) rc = -1;
  for (int p = 0; p < ncalls && rc == 0; p++) {
    uint32_t got = 0;
    for (; got < e->nin; got++)
      if (!(vals[got] = manual ? sr_getindex(I, blocks[got], p) : sr_array_concrete(sr_array_ref(e->in[got])))) break;
    for (uint32_t k = 0; k < no; k++) res[k] = stack[k] + (size_t)p * bytes[k];
    if (got < e->nin) rc = -1;
    else if (run_cb(cx, c, av, vals, (int)e->nin, res) < 0) rc = callback_error(cx);
    else if (sr_interrupt_point(I)) rc = -1;
    for (uint32_t i = 0; i < got; i++) sr_unref(vals[i]);
  }
  if (rc == 0 && !manual) {
    rc = sr_lax_host_outputs(cx, e, no, stack);
  } else if (rc == 0 && no) {
    for (uint32_t k = 0; k < no; k++)
      e->out[k] = sr_array_new(e->out_type[k], sr_layout_of_type(e->out_type[k]), cx->mesh);
    CopyArg ca = {(int)no, stack, bytes};
    rc = sr_ev_map(cx, 0, NULL, (int)no, e->out, SR_MAP_POS, copy_block, &ca);
  }
  for (uint32_t i = 0; i < e->nin; i++) sr_unref(blocks[i]);
  for (uint32_t k = 0; k < no; k++) free(stack[k]);
  free(blocks);
  free(vals);
  free(stack);
  free(res);
  free(bytes);
  return rc;
}

static int jvp_pure(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  (void)e, (void)x, (void)t, (void)y, (void)ty;
  return sr_raise(ad->I, "ValueError",
                  "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking "
                  "gradients."),
         -1;
}

static int tr_pure(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)e, (void)ct, (void)x, (void)cx;
  return sr_raise(ad->I, "ValueError",
                  "Pure callbacks do not support transpose. Please use `jax.custom_vjp` to use callbacks while "
                  "taking gradients."),
         -1;
}

static int jvp_io(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  (void)e, (void)x, (void)t, (void)y, (void)ty;
  return sr_raise(ad->I, "ValueError", "IO callbacks do not support JVP."), -1;
}

static int tr_io(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)e, (void)ct, (void)x, (void)cx;
  return sr_raise(ad->I, "ValueError", "IO callbacks do not support transpose."), -1;
}

/* ---- vmap ---- */

/* The body of the sequential scan: the callback bound on the unmapped
   operands and the slices of the mapped ones (ffi_batching_rule's
   _batch_fun under scan's g = lambda _, x: ((), _batch_fun(x))). */
typedef struct SeqBody {
  int prim, nin;
  uint8_t *batched;
  SrVal **unbatched; /* by operand, NULL where mapped */
  SrPList ps;
} SeqBody;

static void seq_free(void *d) {
  SeqBody *s = d;
  for (int i = 0; i < s->nin; i++) sr_unref(s->unbatched[i]);
  free(s->unbatched);
  free(s->batched);
  sr_plist_free(&s->ps);
  free(s);
}

static SrVal *seq_call(SrInterp *I, SrArgs *a) {
  SeqBody *s = sr_current_builtin(I)->data;
  if (a->n != 2 || !sr_is_seq(a->v[1])) return sr_raise(I, "TypeError", "the callback's scan body takes (carry, xs)");
  SrVal *xs = a->v[1];
  SrVal **in = sr_xcalloc((size_t)s->nin + 1, sizeof *in);
  for (int i = 0, k = 0; i < s->nin; i++) in[i] = s->batched[i] ? (k < xs->seq.n ? xs->seq.items[k++] : NULL) : s->unbatched[i];
  for (int i = 0; i < s->nin; i++)
    if (!in[i]) {
      free(in);
      return sr_raise(I, "TypeError", "the callback's scan body got too few operands");
    }
  SrVal *r = sr_bind(I, s->prim, s->nin, in, s->ps.n, s->ps.p);
  free(in);
  if (!r) return NULL;
  SrVal *ys = sr_seq(NULL, SR_V_LIST, r->seq.n);
  for (int i = 0; i < r->seq.n; i++) sr_seq_push(NULL, ys, sr_ref(r->seq.items[i]));
  sr_unref(r);
  return sr_pair(sr_seq(NULL, SR_V_TUPLE, 0), ys);
}

/* e's params as counted values (those of a program live in its arena),
   with key's value replaced by val (stolen; NULL: kept) */
static void params_with(SrPList *ps, const SrEqn *e, const char *key, SrVal *val) {
  CbFn *c = cbfn_of(e->params, e->nparams);
  for (uint32_t i = 0; i < e->nparams; i++) {
    const char *k = e->params[i].key;
    SrVal *v = e->params[i].val, *nv;
    if (val && !strcmp(k, key)) nv = val;
    else if (!strcmp(k, "sharding") && c) nv = sr_ref(c->sharding);
    else if (v->kind == SR_V_WORD || v->kind == SR_V_STR) nv = sr_word(NULL, v->str.s, v->str.n);
    else if (v->kind == SR_V_BOOL) nv = sr_bool((int)v->i);
    else if (v->kind == SR_V_NONE || v->rc > 0) nv = sr_ref(v);
    else nv = sr_none();
    sr_plist_add(ps, k, nv);
  }
}

/* scan(g, (), batched_args, unroll=unroll) over the mapped operands (moved
   to the front in x); the stacked results in y, mapped at 0 */
static int batch_sequential(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd, SrVal *ordered,
                            int unroll) {
  SrInterp *I = b->ad.I;
  SeqBody *s = sr_xcalloc(1, sizeof *s);
  s->prim = e->prim->id;
  s->nin = (int)e->nin;
  s->batched = sr_xcalloc(e->nin + 1, 1);
  s->unbatched = sr_xcalloc(e->nin + 1, sizeof *s->unbatched);
  SrVal *xs = sr_seq(NULL, SR_V_LIST, 0);
  for (uint32_t i = 0; i < e->nin; i++) {
    s->batched[i] = bd[i] != SR_NOT_MAPPED;
    if (s->batched[i]) sr_seq_push(NULL, xs, sr_ref(x[i]));
    else s->unbatched[i] = sr_ref(x[i]);
  }
  params_with(&s->ps, e, "ordered", ordered);
  SrVal *g = sr_builtin_with("_batch_fun", seq_call, s, seq_free);
  SrVal *argv[3] = {g, sr_seq(NULL, SR_V_TUPLE, 0), xs};
  const char *kw[1] = {sr_intern_cstr("unroll")};
  SrVal *kwv[1] = {sr_bool(unroll)};
  SrArgs a = {3, argv, unroll ? 1 : 0, kw, kwv, NULL};
  SrVal *r = sr_call(I, sr_lookup_qualname("jax.lax.scan"), &a);
  for (int i = 0; i < 3; i++) sr_unref(argv[i]);
  if (!r) return -1;
  int rc = 0;
  SrVal *ys = sr_is_seq(r) && r->seq.n == 2 ? r->seq.items[1] : NULL;
  if (!ys || !sr_is_seq(ys) || ys->seq.n != (int)e->nout) {
    sr_raise(I, "RuntimeError", "%s: the scan of the callback gave no results", e->prim->name);
    rc = -1;
  }
  for (uint32_t i = 0; rc == 0 && i < e->nout; i++) {
    y[i] = sr_ad_keep(&b->ad, sr_ref(ys->seq.items[i]));
    ybd[i] = 0;
  }
  sr_unref(r);
  return rc;
}

/* ffi.ffi_batching_rule */
static int batch_pure(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrAd *ad = &b->ad;
  SrVal *vm = sr_eqn_param(e, sr_intern_cstr("vmap_method"));
  const char *m = vm && (vm->kind == SR_V_WORD || vm->kind == SR_V_STR) ? vm->str.s : NULL;
  int legacy = m && !strcmp(m, "legacy_vectorized"), expand = m && !strcmp(m, "expand_dims"),
      bcast = m && !strcmp(m, "broadcast_all"), seq = m && !strcmp(m, "sequential"),
      unrolled = m && !strcmp(m, "sequential_unrolled");
  if (!legacy && !expand && !bcast && !seq && !unrolled) {
    SrBuf t = SR_BUF_INIT;
    if (m) sr_buf_printf(&t, "'%s'", m);
    else sr_buf_puts(&t, "None");
    sr_raise(ad->I, "NotImplementedError",
             "vmap is only supported for the %s primitive when vmap_method is one of 'sequential', "
             "'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. Got vmap_method=%s.",
             e->prim->name, sr_buf_str(&t));
    sr_buf_free(&t);
    return -1;
  }
  SrVal **in = sr_xcalloc(e->nin + 1, sizeof *in);
  int rc = 0;
  for (uint32_t i = 0; i < e->nin && rc == 0; i++) {
    in[i] = bd[i] == SR_NOT_MAPPED ? x[i] : sr_batch_moveaxis(b, x[i], bd[i], 0);
    if (!in[i]) rc = -1;
  }
  if (rc == 0 && (seq || unrolled)) {
    rc = batch_sequential(b, e, in, bd, y, ybd, NULL, unrolled);
    free(in);
    return rc;
  }
  CbAvals *av = avals_of(e->params, e->nparams);
  if (!av) {
    free(in);
    return sr_raise(ad->I, "NotImplementedError", "%s: no result_avals (an equation read from a text)", e->prim->name), -1;
  }
  for (uint32_t i = 0; i < e->nin && rc == 0 && (expand || bcast); i++) {
    if (bd[i] != SR_NOT_MAPPED) continue;
    /* lax.broadcast(x, (size,)) */
    const SrType *t = sr_ad_type(ad, in[i]);
    int64_t shape[SR_MAX_RANK], bdims[SR_MAX_RANK];
    shape[0] = bcast ? b->size : 1;
    for (int d = 0; d < t->ndim; d++) shape[d + 1] = t->dims[d].size, bdims[d] = d + 1;
    in[i] = sr_ad_keep(ad, sr_op_broadcast_in_dim(SR_AD_BINDER(ad), in[i], shape, t->ndim + 1, bdims, t->ndim, NULL));
    if (!in[i]) rc = -1;
  }
  if (rc == 0) {
    /* core.unmapped_aval(axis_size, 0, aval) of each result */
    const SrType **bt = sr_xcalloc((size_t)av->n + 1, sizeof *bt);
    for (int k = 0; k < av->n; k++) {
      int64_t shape[SR_MAX_RANK];
      shape[0] = b->size;
      for (int d = 0; d < av->t[k]->ndim; d++) shape[d + 1] = av->t[k]->dims[d].size;
      bt[k] = sr_type_array(av->t[k]->dtype, av->t[k]->ndim + 1, shape);
    }
    SrPList ps = {0};
    params_with(&ps, e, "result_avals", avals_val(av->n, bt));
    free(bt);
    SrVal *r = sr_ad_bind(ad, e->prim->id, (int)e->nin, in, ps.n, ps.p);
    sr_plist_free(&ps);
    if (!r) rc = -1;
    for (uint32_t i = 0; rc == 0 && i < e->nout; i++) {
      y[i] = r->seq.items[i];
      ybd[i] = 0;
    }
  }
  free(in);
  return rc;
}

/* io_callback_batching_rule: a lax.map of the unordered callback */
static int batch_io(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *o = sr_eqn_param(e, sr_intern_cstr("ordered"));
  if (o && (o->kind == SR_V_BOOL || o->kind == SR_V_INT) && o->i)
    return sr_raise(b->ad.I, "ValueError", "Cannot `vmap` ordered IO callback."), -1;
  SrVal **in = sr_xcalloc(e->nin + 1, sizeof *in);
  int rc = 0;
  for (uint32_t i = 0; i < e->nin && rc == 0; i++) {
    in[i] = bd[i] == SR_NOT_MAPPED ? x[i] : sr_batch_moveaxis(b, x[i], bd[i], 0);
    if (!in[i]) rc = -1;
  }
  if (rc == 0) rc = batch_sequential(b, e, in, bd, y, ybd, sr_bool(0), 0);
  free(in);
  return rc;
}

/* ---- effects (core.Jaxpr.effects, JaxprEqn.effects) ---- */

static void add_effect(SrVal *set, const char *name) {
  size_t n = strlen(name);
  for (int i = 0; i < set->seq.n; i++)
    if (set->seq.items[i]->str.n == n && !memcmp(set->seq.items[i]->str.s, name, n)) return;
  sr_seq_push(NULL, set, sr_word(NULL, name, n));
}

static void jaxpr_effects(const SrJaxpr *j, SrVal *set, int depth);

/* e's own effect and those of the jaxprs in its params */
static void eqn_effects(const SrEqn *e, SrVal *set, int depth) {
  int id = e->prim->id;
  if (id == SR_P_io_callback) {
    SrVal *o = sr_eqn_param(e, sr_intern_cstr("ordered"));
    add_effect(set, o && (o->kind == SR_V_BOOL || o->kind == SR_V_INT) && o->i ? "OrderedIO" : "IO");
  } else if (id == SR_P_debug_callback) {
    SrVal *ef = sr_eqn_param(e, sr_intern_cstr("effect"));
    add_effect(set, ef && (ef->kind == SR_V_WORD || ef->kind == SR_V_STR) ? ef->str.s : "Debug");
  } else if (id == SR_P_debug_print) {
    SrVal *o = sr_eqn_param(e, sr_intern_cstr("ordered"));
    add_effect(set, o && (o->kind == SR_V_BOOL || o->kind == SR_V_INT) && o->i ? "OrderedDebug" : "Debug");
  }
  for (uint32_t i = 0; i < e->nparams && depth < 64; i++) {
    SrJaxpr *js[16];
    int nj = sr_param_jaxprs(e->params[i].val, js, 16);
    for (int k = 0; k < nj && k < 16; k++) jaxpr_effects(js[k], set, depth + 1);
  }
}

static void jaxpr_effects(const SrJaxpr *j, SrVal *set, int depth) {
  for (uint32_t q = 0; q < j->neqn; q++) eqn_effects(&j->eqns[q], set, depth);
}

SrVal *sr_callback_eqn_effects(const SrEqn *e) {
  SrVal *set = sr_seq(NULL, SR_V_SET, 0);
  eqn_effects(e, set, 0);
  return set;
}

SrVal *sr_callback_jaxpr_effects(const SrJaxpr *j) {
  SrVal *set = sr_seq(NULL, SR_V_SET, 0);
  jaxpr_effects(j, set, 0);
  return set;
}

/* ---- tokens (lax.create_token, core.Token) ---- */

/* lax.create_token(_=None): create_token_p.bind() */
static SrVal *bi_create_token(SrInterp *I, SrArgs *a) {
  if (a->n > 1 || a->nkw)
    return sr_raise(I, "TypeError", "create_token() takes from 0 to 1 positional arguments but %d were given", a->n);
  return sr_bind(I, SR_P_create_token, 0, NULL, 0, NULL);
}

static int is_token(SrVal *x) {
  SrArrayObj *o = sr_array_of(x);
  return o && o->kind == SR_AV_CONCRETE && o->type->dtype == sr_lax_token_type()->dtype;
}

static void token_class_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<class 'jax._src.core.Token'>");
}

static int token_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  (void)self;
  return is_token(x);
}

static const SrLangOps token_ops = {.instancecheck = token_instancecheck};
static const SrClass token_class = {"type", NULL, token_class_repr, NULL, &token_ops};

void sr_callback_init(void) {
  sr_val_keep_class(&cbfn_class);
  sr_val_keep_class(&avals_class);
  static const int ids[] = {SR_P_pure_callback, SR_P_io_callback};
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
    sr_set_type_rule(ids[i], ty_cb);
    sr_set_eval_rule(ids[i], ev_cb);
    sr_prims[ids[i]].nout = nout_cb;
  }
  sr_ad_set_jvp(SR_P_pure_callback, jvp_pure);
  sr_ad_set_transpose(SR_P_pure_callback, tr_pure);
  sr_ad_set_jvp(SR_P_io_callback, jvp_io);
  sr_ad_set_transpose(SR_P_io_callback, tr_io);
  sr_prims[SR_P_pure_callback].batch = batch_pure;
  sr_prims[SR_P_io_callback].batch = batch_io;
  sr_register("jax._src.core.no_effects", sr_seq(NULL, SR_V_FROZENSET, 0));
  sr_register("jax.core.Token", sr_obj(&token_class, NULL));
  sr_register("jax._src.core.Token", sr_obj(&token_class, NULL));
  sr_def("jax.lax.create_token", bi_create_token,
         "create_token(_=None): a token (core.Token: no data), the create_token primitive under a trace");
  sr_def("jax.pure_callback", bi_pure_callback,
         "pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs): calls the "
         "Python function callback(*args, **kwargs) on the host when it runs (under jit too); its results have the "
         "shapes and dtypes of result_shape_dtypes' leaves");
  sr_def("jax.experimental.io_callback", bi_io_callback,
         "io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs): the same for an "
         "impure callback: never dropped, and with ordered=True run in program order");
}
