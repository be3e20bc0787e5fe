/* numpy_small16.c: small jax.numpy functions of lax_numpy.py and
 * window_functions.py, written with the same calls in the same order as
 * JAX's Python so that their jaxprs are JAX's: array_equiv, rollaxis
 * (jit, static axis and start), fromfunction (vmaps), block (jit),
 * unwrap (jit, static axis), kaiser, mask_indices, packbits and
 * unpackbits (jit, static axis, count and bitorder).  Registered by
 * sr_jnp_small16_init (misc16.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/array_methods.h"
#include "jax/lax.h"
#include "jax/misc16.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/intern.h"

#define NO_AXIS INT64_MIN

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

static SrVal *tuple_of(SrNnScope *s, int n, const int64_t *v) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_int(NULL, v[i]));
  return sr_nn_keep(s, t);
}

/* a registered function with one keyword argument */
static SrVal *call_kw(SrNnScope *s, const char *q, int n, SrVal **v, const char *k, SrVal *kv) {
  const char *kw[1] = {k};
  SrVal *kvv[1] = {kv};
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  return sr_nn_call(s, q, n, v, kv ? 1 : 0, kw, kvv);
}

/* ---- array_equiv ---- */

static SrVal *jnp_array_equiv(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "array_equiv", "a1, a2", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_call1(&s, "jax.numpy.asarray", p[0]);
  SrVal *y = sr_nn_call1(&s, "jax.numpy.asarray", p[1]);
  if (!x || !y) return sr_nn_done(&s, NULL);
  /* ufuncs.equal's ValueError: lax.broadcast_shapes in promote_shapes */
  const SrType *tx = vtype(I, x), *ty = vtype(I, y);
  for (int k = 1; k <= tx->ndim && k <= ty->ndim; k++) {
    int64_t u = tx->dims[tx->ndim - k].size, w = ty->dims[ty->ndim - k].size;
    if (u != w && u != 1 && w != 1) return sr_nn_done(&s, sr_nn_call1(&s, "jax.numpy.array", sr_bool(0)));
  }
  SrVal *eq = sr_nn_call2(&s, "jax.numpy.equal", x, y);
  return sr_nn_done(&s, sr_nn_call1(&s, "jax.numpy.all", eq));
}

/* ---- rollaxis ---- */

typedef struct {
  int64_t axis, start;
} RollAxis;

static SrVal *rollaxis_body(SrInterp *I, SrArgs *a) {
  RollAxis *r = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  int64_t nd = vtype(I, a->v[0])->ndim, axis;
  if (sr_api_axis(I, r->axis, (int)nd, &axis) < 0) return NULL;
  int64_t start = r->start;
  if (!(-nd <= start && start <= nd))
    return sr_raise(I, "ValueError", "start=%lld must satisfy %lld<=start<=%lld", (long long)start, (long long)-nd,
                    (long long)nd);
  if (start < 0) start += nd;
  if (start > axis) start -= 1;
  SrVal *v[3] = {a->v[0], sr_nn_int(&s, axis), sr_nn_int(&s, start)};
  return sr_nn_done(&s, sr_nn_call(&s, "jax.numpy.moveaxis", 3, v, 0, NULL, NULL));
}

static SrVal *jnp_rollaxis(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "rollaxis", "a, axis, start=", p) < 0) return NULL;
  RollAxis *r = sr_xcalloc(1, sizeof *r);
  if (sr_as_int(I, p[1], "axis", &r->axis) < 0 || (p[2] && sr_as_int(I, p[2], "start", &r->start) < 0)) {
    free(r);
    return NULL;
  }
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) {
    free(r);
    return NULL;
  }
  SrVal *res = sr_api_jit(I, "rollaxis", rollaxis_body, r, 1, &x);
  sr_unref(x);
  return res;
}

/* ---- fromfunction ---- */

static SrVal *jnp_fromfunction(SrInterp *I, SrArgs *a0) {
  SrVal *pv[2] = {a0->n > 0 ? a0->v[0] : NULL, a0->n > 1 ? a0->v[1] : NULL};
  const char *okw[64];
  SrVal *okv[64];
  int on = 0;
  for (int i = 0; i < a0->nkw && on < 64; i++) {
    if (!strcmp(a0->kw[i], "shape") && !pv[1] && a0->n == 1) pv[1] = a0->kwv[i];
    else if (!strcmp(a0->kw[i], "function") && !pv[0] && a0->n == 0) pv[0] = a0->kwv[i];
    else okw[on] = a0->kw[i], okv[on++] = a0->kwv[i];
  }
  int np = a0->n > 2 ? a0->n : (pv[0] != NULL) + (pv[1] != NULL);
  if (a0->n <= 2 && pv[1] && !pv[0]) np = 0;
  SrArgs ab = {np, a0->n > 2 ? a0->v : pv, on, okw, okv, NULL}, *a = &ab;
  if (a->n < 2)
    return sr_raise(I, "TypeError", "fromfunction() missing %d required positional argument%s: %s", 2 - a->n,
                    a->n ? "" : "s", a->n ? "'shape'" : "'function' and 'shape'");
  if (a->n > 2) return sr_raise(I, "TypeError", "fromfunction() takes 2 positional arguments but %d were given", a->n);
  int64_t shape[SR_MAX_RANK];
  int nd = 0;
  if (sr_ints_arg(I, a->v[1], shape, &nd, "shape argument of jnp.fromfunction()") < 0) return NULL;
  SrVal *dtype = NULL;
  const char *kw[64];
  SrVal *kwv[64];
  int nkw = 0;
  for (int i = 0; i < a->nkw && nkw < 64; i++) {
    if (!strcmp(a->kw[i], "dtype")) dtype = a->kwv[i];
    else kw[nkw] = a->kw[i], kwv[nkw++] = a->kwv[i];
  }
  SrNnScope s = {I, {0}, 0};
  if (!dtype) dtype = sr_nn_keep(&s, sr_lookup_qualname("builtins.float") ? sr_ref(sr_lookup_qualname("builtins.float")) : NULL);
  SrVal *fn = a->v[0];
  for (int i = 0; i < nd && fn; i++) {
    SrVal *axes = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, nd));
    for (int j = nd - 1; j >= 0; j--) sr_seq_push(NULL, axes, i == j ? sr_int(NULL, 0) : sr_none());
    fn = call_kw(&s, "jax.vmap", 1, &fn, "in_axes", axes);
  }
  if (!fn) return sr_nn_done(&s, NULL);
  SrVal *args[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) {
    SrVal *n = sr_nn_int(&s, shape[i]);
    args[i] = call_kw(&s, "jax.numpy.arange", 1, &n, "dtype", dtype);
    if (!args[i]) return sr_nn_done(&s, NULL);
  }
  SrArgs ca = {nd, args, nkw, kw, kwv, NULL};
  return sr_nn_done(&s, sr_nn_keep(&s, sr_call(I, fn, &ca)));
}

/* ---- block ---- */

/* _block(xs): the block (kept by the scope) and its depth in *depth */
static SrVal *block_rec(SrNnScope *s, SrVal *xs, int *depth) {
  SrInterp *I = s->I;
  if (sr_interrupt_point(I)) {
    sr_raise(I, "KeyboardInterrupt", "interrupted");
    return NULL;
  }
  if (xs->kind == SR_V_TUPLE) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, xs);
    sr_raise(I, "ValueError", "jax.numpy.block does not allow tuples, got %s", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  if (xs->kind != SR_V_LIST) {
    *depth = 1;
    return sr_nn_call1(s, "jax.numpy.asarray", xs);
  }
  int n = xs->seq.n;
  if (!n) {
    sr_raise(I, "ValueError", "jax.numpy.block does not allow empty list arguments");
    return NULL;
  }
  SrVal *parts = sr_nn_keep(s, sr_seq(NULL, SR_V_LIST, n));
  int d0 = 0, rank = 0;
  for (int i = 0; i < n; i++) {
    int d;
    SrNnScope inner = {I, {0}, 0};
    SrVal *x = block_rec(&inner, xs->seq.items[i], &d);
    if (x) sr_seq_push(NULL, parts, sr_ref(x));
    sr_nn_done(&inner, NULL);
    if (!x) return NULL;
    if (i && d != d0) {
      sr_raise(I, "ValueError", "Mismatched list depths in jax.numpy.block");
      return NULL;
    }
    d0 = d;
  }
  rank = d0;
  for (int i = 0; i < n; i++)
    if (vtype(I, parts->seq.items[i])->ndim > rank) rank = vtype(I, parts->seq.items[i])->ndim;
  SrVal *tup = sr_nn_keep(s, sr_seq(NULL, SR_V_TUPLE, n));
  for (int i = 0; i < n; i++) { /* _atleast_nd */
    SrVal *x = parts->seq.items[i];
    int m = vtype(I, x)->ndim;
    if (m < rank) {
      int64_t ones[SR_MAX_RANK];
      for (int k = 0; k < rank - m; k++) ones[k] = 1;
      x = sr_nn_call2(s, "jax.lax.broadcast", x, tuple_of(s, rank - m, ones));
      if (!x) return NULL;
    }
    sr_seq_push(NULL, tup, sr_ref(x));
  }
  *depth = d0 + 1;
  return call_kw(s, "jax.numpy.concatenate", 1, &tup, "axis", sr_nn_int(s, -d0));
}

static SrVal *block_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  int d;
  return sr_nn_done(&s, block_rec(&s, a->v[0], &d));
}

static SrVal *jnp_block(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "block", "arrays", p) < 0) return NULL;
  return sr_api_jit(I, "block", block_body, NULL, 1, p);
}

/* ---- unwrap ---- */

/* promote_dtypes: args (kept by the scope) to one dtype; 0 or -1 */
static int promote(SrNnScope *s, int n, SrVal **args) {
  int weak = 0;
  for (int i = 0; i < n; i++)
    if (!(args[i] = sr_nn_keep(s, sr_jnp_asarray(s->I, args[i], -1)))) return -1;
  SrDtype dt = sr_jnp_result_dtype(s->I, n, args, &weak);
  for (int i = 0; i < n; i++) {
    const SrType *t = vtype(s->I, args[i]);
    if (t->dtype != dt || (t->weak && !weak)) args[i] = sr_nn_keep(s, sr_jnp_convert(s->I, args[i], dt, weak));
    if (!args[i]) return -1;
  }
  return 0;
}

static SrVal *unwrap_body(SrInterp *I, SrArgs *a) {
  int64_t axis = *(int64_t *)sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *v[2] = {a->v[0], a->v[a->n - 1]}; /* p, [discont,] period */
  if (promote(&s, 2, v) < 0) return sr_nn_done(&s, NULL);
  SrVal *p = v[0], *period = v[1], *discont = a->n == 3 ? a->v[1] : sr_none();
  const SrType *t = vtype(I, p);
  if (sr_dtype_is_inexact(t->dtype) && !sr_dtype_is_float(t->dtype))
    return sr_nn_done(&s, sr_raise(I, "ValueError", "jnp.unwrap does not support complex inputs."));
  int64_t ax;
  if (sr_api_axis(I, axis, t->ndim, &ax) < 0) return sr_nn_done(&s, NULL);
  if (t->dims[ax].size == 0) return sr_nn_done(&s, p);
  if (discont->kind == SR_V_NONE) discont = sr_nn_op(&s, SR_OP_DIV, period, sr_nn_int(&s, 2));
  SrVal *interval = sr_nn_op(&s, sr_dtype_is_int(t->dtype) ? SR_OP_FLOORDIV : SR_OP_DIV, period, sr_nn_int(&s, 2));
  SrVal *axv = sr_nn_int(&s, axis);
  SrVal *dd = call_kw(&s, "jax.numpy.diff", 1, &p, "axis", axv);
  SrVal *ddmod = sr_nn_op(&s, SR_OP_SUB, sr_nn_call2(&s, "jax.numpy.mod", sr_nn_op(&s, SR_OP_ADD, dd, interval), period),
                          interval);
  /* (ddmod == -interval) & (dd > 0), in Python's order of evaluation */
  SrVal *c = sr_nn_op(&s, SR_OP_EQ, ddmod, sr_nn_call1(&s, "jax.numpy.negative", interval));
  c = sr_nn_op(&s, SR_OP_BITAND, c, sr_nn_op(&s, SR_OP_GT, dd, sr_nn_int(&s, 0)));
  ddmod = sr_nn_call3(&s, "jax.numpy.where", c, interval, ddmod);
  SrVal *small = sr_nn_op(&s, SR_OP_LT, sr_nn_call1(&s, "jax.numpy.abs", dd), discont);
  SrVal *ph = sr_nn_call3(&s, "jax.numpy.where", small, sr_nn_int(&s, 0), sr_nn_op(&s, SR_OP_SUB, ddmod, dd));
  const char *kw[2] = {"axis"};
  SrVal *a0[3] = {p, sr_nn_int(&s, 0), sr_nn_int(&s, 1)};
  SrVal *kv[1] = {axv};
  SrVal *first = sr_nn_call(&s, "jax.lax.slice_in_dim", 3, a0, 1, kw, kv);
  SrVal *a1[3] = {p, sr_nn_int(&s, 1), sr_none()};
  SrVal *rest = sr_nn_call(&s, "jax.lax.slice_in_dim", 3, a1, 1, kw, kv);
  SrVal *cs = call_kw(&s, "jax.numpy.cumsum", 1, &ph, "axis", axv);
  SrVal *sum = sr_nn_op(&s, SR_OP_ADD, rest, cs);
  if (!first || !sum) return sr_nn_done(&s, NULL);
  SrVal *pair = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, 2));
  sr_seq_push(NULL, pair, sr_ref(first));
  sr_seq_push(NULL, pair, sr_ref(sum));
  return sr_nn_done(&s, call_kw(&s, "jax.numpy.concatenate", 1, &pair, "axis", axv));
}

static SrVal *jnp_unwrap(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "unwrap", "p, discont=, axis=, period=", p) < 0) return NULL;
  int64_t *axis = sr_xcalloc(1, sizeof *axis);
  *axis = -1;
  if (p[2] && sr_as_int(I, p[2], "axis", axis) < 0) {
    free(axis);
    return NULL;
  }
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) {
    free(axis);
    return NULL;
  }
  SrVal *period = p[3] ? sr_ref(p[3]) : sr_float(NULL, 2 * M_PI);
  int given = sr_nn_given(p[1]); /* None: no argument, as jit flattens it to none */
  SrVal *args[3] = {x, given ? p[1] : period, period};
  SrVal *r = sr_api_jit(I, "unwrap", unwrap_body, axis, given ? 3 : 2, args);
  sr_unref(x);
  sr_unref(period);
  return r;
}

/* ---- kaiser ---- */

static SrVal *jnp_kaiser(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "kaiser", "M, beta", p) < 0) return NULL;
  int64_t M;
  if (sr_as_int(I, p[0], "M argument of jnp.kaiser", &M) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *dt = sr_nn_keep(&s, sr_dtype_val(NULL, SR_F32));
  if (M <= 1) {
    int64_t sh[1] = {M < 0 ? 0 : M};
    SrVal *v[3] = {tuple_of(&s, 1, sh), sr_nn_int(&s, 1), dt};
    return sr_nn_done(&s, sr_nn_call(&s, "jax.lax.full", 3, v, 0, NULL, NULL));
  }
  SrVal *n = sr_nn_call2(&s, "jax.lax.iota", dt, sr_nn_int(&s, M));
  SrVal *alpha = sr_nn_float(&s, 0.5 * (double)(M - 1));
  SrVal *q = sr_nn_op(&s, SR_OP_DIV, sr_nn_op(&s, SR_OP_SUB, n, alpha), alpha);
  SrVal *r = sr_nn_op(&s, SR_OP_SUB, sr_nn_int(&s, 1), sr_nn_op(&s, SR_OP_POW, q, sr_nn_int(&s, 2)));
  SrVal *num = sr_nn_call1(&s, "jax.numpy.i0", sr_nn_op(&s, SR_OP_MUL, p[1], sr_nn_call1(&s, "jax.numpy.sqrt", r)));
  SrVal *den = sr_nn_call1(&s, "jax.numpy.i0", p[1]);
  return sr_nn_done(&s, sr_nn_op(&s, SR_OP_DIV, num, den));
}

/* ---- mask_indices ---- */

static SrVal *jnp_mask_indices(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "mask_indices", "n, mask_func, k=, *, size=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *n2 = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, 2));
  sr_seq_push(NULL, n2, sr_ref(p[0]));
  sr_seq_push(NULL, n2, sr_ref(p[0]));
  SrVal *ones = sr_nn_call1(&s, "jax.numpy.ones", n2);
  if (!ones) return sr_nn_done(&s, NULL);
  SrVal *fa[2] = {ones, p[2] ? p[2] : sr_nn_int(&s, 0)};
  SrArgs ca = {2, fa, 0, NULL, NULL, NULL};
  SrVal *m = sr_nn_keep(&s, sr_call(I, p[1], &ca));
  SrVal *ij = m ? call_kw(&s, "jax.numpy.nonzero", 1, &m, "size", p[3]) : NULL;
  return sr_nn_done(&s, ij);
}

/* ---- packbits, unpackbits ---- */

typedef struct {
  int64_t axis, count; /* NO_AXIS: None */
  int little;
} Bits;

static SrVal *bits_arange(SrNnScope *s, int big) {
  SrVal *u8 = sr_nn_keep(s, sr_dtype_val(NULL, SR_U8));
  SrVal *e = sr_nn_int(s, 8);
  SrVal *bits = call_kw(s, "jax.numpy.arange", 1, &e, "dtype", u8);
  return bits;
}

static SrVal *rev(SrNnScope *s, SrVal *x) {
  SrVal *sl = sr_nn_keep(s, sr_slice_new(sr_none(), sr_none(), sr_int(NULL, -1)));
  return x ? sr_nn_keep(s, sr_getitem(s->I, x, sl)) : NULL;
}

static SrVal *astype_u8(SrNnScope *s, SrVal *x) {
  SrVal *m = x ? sr_nn_keep(s, sr_getattr(s->I, x, "astype")) : NULL;
  SrVal *u8 = sr_nn_keep(s, sr_str_cstr(NULL, "uint8"));
  SrArgs ca = {1, &u8, 0, NULL, NULL, NULL};
  return m ? sr_nn_keep(s, sr_call(s->I, m, &ca)) : NULL;
}

static SrVal *range_tuple(SrNnScope *s, int n) {
  int64_t r[SR_MAX_RANK];
  for (int i = 0; i < n; i++) r[i] = i;
  return tuple_of(s, n, r);
}

static SrVal *packbits_body(SrInterp *I, SrArgs *a) {
  Bits *b = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *arr = a->v[0];
  const SrType *t = vtype(I, arr);
  arr = astype_u8(&s, sr_nn_op(&s, SR_OP_NE, arr, sr_nn_typed_scalar(&s, 0, t->dtype)));
  SrVal *bits = bits_arange(&s, !b->little);
  if (!b->little) bits = rev(&s, bits);
  int64_t axis = b->axis;
  if (axis == NO_AXIS) {
    arr = sr_nn_call1(&s, "jax.numpy.ravel", arr);
    axis = 0;
  }
  arr = sr_nn_call3(&s, "jax.numpy.swapaxes", arr, sr_nn_int(&s, axis), sr_nn_int(&s, -1));
  if (!arr || !bits) return sr_nn_done(&s, NULL);
  t = vtype(I, arr);
  int nd = t->ndim;
  int64_t last = t->dims[nd - 1].size, rem = last % 8;
  if (rem) {
    SrVal *cfg = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, nd));
    for (int k = 0; k < nd; k++) {
      int64_t c[3] = {0, k == nd - 1 ? 8 - rem : 0, 0};
      SrVal *x[3] = {sr_int(NULL, c[0]), sr_int(NULL, c[1]), sr_int(NULL, c[2])};
      sr_seq_push(NULL, cfg, sr_tuple(NULL, 3, x));
    }
    arr = sr_nn_call3(&s, "jax.lax.pad", arr, sr_nn_typed_scalar(&s, 0, SR_U8), cfg);
    if (!arr) return sr_nn_done(&s, NULL);
    last += 8 - rem;
  }
  int64_t sh[SR_MAX_RANK + 1];
  for (int k = 0; k < nd - 1; k++) sh[k] = t->dims[k].size;
  sh[nd - 1] = last / 8;
  sh[nd] = 8;
  SrVal *shp = tuple_of(&s, nd + 1, sh);
  SrVal *rs = sr_nn_keep(&s, sr_getattr(I, arr, "reshape"));
  SrArgs ca = {1, &shp, 0, NULL, NULL, NULL};
  arr = rs ? sr_nn_keep(&s, sr_call(I, rs, &ca)) : NULL;
  bits = sr_nn_call2(&s, "jax.numpy.expand_dims", bits, range_tuple(&s, nd));
  SrVal *sh8 = sr_nn_op(&s, SR_OP_LSHIFT, arr, bits);
  SrVal *m1 = sr_nn_int(&s, -1);
  SrVal *sum = call_kw(&s, "jax.numpy.sum", 1, &sh8, "axis", m1);
  SrVal *packed = astype_u8(&s, sum);
  return sr_nn_done(&s, sr_nn_call3(&s, "jax.numpy.swapaxes", packed, sr_nn_int(&s, axis), sr_nn_int(&s, -1)));
}

static SrVal *unpackbits_body(SrInterp *I, SrArgs *a) {
  Bits *b = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrVal *arr = a->v[0];
  SrVal *one = sr_nn_call1(&s, "jax.numpy.asarray", sr_nn_int(&s, 1));
  SrVal *bits = sr_nn_op(&s, SR_OP_LSHIFT, one, bits_arange(&s, 0));
  if (!b->little) bits = rev(&s, bits);
  int64_t axis = b->axis;
  if (axis == NO_AXIS) {
    arr = sr_nn_call1(&s, "jax.numpy.ravel", arr);
    axis = 0;
  }
  arr = sr_nn_call3(&s, "jax.numpy.swapaxes", arr, sr_nn_int(&s, axis), sr_nn_int(&s, -1));
  if (!arr || !bits) return sr_nn_done(&s, NULL);
  int nd = vtype(I, arr)->ndim;
  SrVal *key = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, 2));
  sr_seq_push(NULL, key, sr_word(NULL, "Ellipsis", 8));
  sr_seq_push(NULL, key, sr_none());
  SrVal *ex = sr_nn_keep(&s, sr_getitem(I, arr, key));
  SrVal *eb = sr_nn_call2(&s, "jax.numpy.expand_dims", bits, range_tuple(&s, nd));
  SrVal *u = astype_u8(&s, sr_nn_op(&s, SR_OP_GT, sr_nn_op(&s, SR_OP_BITAND, ex, eb), sr_nn_int(&s, 0)));
  if (!u) return sr_nn_done(&s, NULL);
  const SrType *t = vtype(I, u);
  int64_t sh[SR_MAX_RANK];
  for (int k = 0; k < t->ndim - 2; k++) sh[k] = t->dims[k].size;
  sh[t->ndim - 2] = -1;
  SrVal *shp = tuple_of(&s, t->ndim - 1, sh);
  SrVal *rs = sr_nn_keep(&s, sr_getattr(I, u, "reshape"));
  SrArgs ca = {1, &shp, 0, NULL, NULL, NULL};
  u = rs ? sr_nn_keep(&s, sr_call(I, rs, &ca)) : NULL;
  if (u && b->count != NO_AXIS) {
    t = vtype(I, u);
    int64_t last = t->dims[t->ndim - 1].size;
    if (b->count > last) {
      SrVal *w = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, t->ndim));
      for (int k = 0; k < t->ndim; k++) {
        SrVal *x[2] = {sr_int(NULL, 0), sr_int(NULL, k == t->ndim - 1 ? b->count - last : 0)};
        sr_seq_push(NULL, w, sr_tuple(NULL, 2, x));
      }
      u = sr_nn_call2(&s, "jax.numpy.pad", u, w);
    } else {
      SrVal *k2 = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, 2));
      sr_seq_push(NULL, k2, sr_word(NULL, "Ellipsis", 8));
      sr_seq_push(NULL, k2, sr_slice_new(sr_none(), sr_int(NULL, b->count), sr_none()));
      u = sr_nn_keep(&s, sr_getitem(I, u, k2));
    }
  }
  return sr_nn_done(&s, sr_nn_call3(&s, "jax.numpy.swapaxes", u, sr_nn_int(&s, axis), sr_nn_int(&s, -1)));
}

/* the static arguments of packbits and unpackbits; NULL with an error */
static Bits *bits_args(SrInterp *I, SrVal *axis, SrVal *count, SrVal *order) {
  Bits *b = sr_xcalloc(1, sizeof *b);
  b->axis = b->count = NO_AXIS;
  if ((sr_nn_given(axis) && sr_as_int(I, axis, "axis", &b->axis) < 0) ||
      (sr_nn_given(count) && sr_as_int(I, count, "count", &b->count) < 0)) {
    free(b);
    return NULL;
  }
  if (order && (order->kind != SR_V_STR || (strcmp(order->str.s, "little") && strcmp(order->str.s, "big")))) {
    free(b);
    sr_raise(I, "ValueError", "'order' must be either 'little' or 'big'");
    return NULL;
  }
  b->little = order && !strcmp(order->str.s, "little");
  return b;
}

static SrVal *jnp_packbits(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "packbits", "a, axis=, bitorder=", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrDtype dt = vtype(I, x)->dtype;
  Bits *b = NULL;
  if (!(sr_dtype_is_int(dt) || dt == SR_BOOL))
    sr_raise(I, "TypeError", "Expected an input array of integer or boolean data type");
  else
    b = bits_args(I, p[1], NULL, p[2]);
  SrVal *r = b ? sr_api_jit(I, "packbits", packbits_body, b, 1, &x) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *jnp_unpackbits(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "unpackbits", "a, axis=, count=, bitorder=", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  Bits *b = NULL;
  if (vtype(I, x)->dtype != SR_U8)
    sr_raise(I, "TypeError", "Expected an input array of unsigned byte data type");
  else
    b = bits_args(I, p[1], p[2], p[3]);
  SrVal *r = b ? sr_api_jit(I, "unpackbits", unpackbits_body, b, 1, &x) : NULL;
  sr_unref(x);
  return r;
}


/* ---- polydiv, lax.broadcast_like, lax.RoundingMethod ---- */

/* x.at[key].NAME(v), kept by the scope */
static SrVal *at_op(SrNnScope *s, SrVal *x, SrVal *key, const char *name, SrVal *v) {
  if (!x || !key || !v) return NULL;
  SrVal *at = sr_nn_keep(s, sr_getattr(s->I, x, "at"));
  SrVal *ix = at ? sr_nn_keep(s, sr_getitem(s->I, at, key)) : NULL;
  SrVal *m = ix ? sr_nn_keep(s, sr_getattr(s->I, ix, name)) : NULL;
  SrArgs a = {1, &v, 0, NULL, NULL, NULL};
  return m ? sr_nn_keep(s, sr_call(s->I, m, &a)) : NULL;
}

/* trim_zeros_tol(filt, tol, trim='f'): filt without its leading entries
   of magnitude below tol (empty when all are), on concrete values */
static SrVal *trim_zeros_tol_f(SrNnScope *s, SrVal *filt, double tol) {
  SrInterp *I = s->I;
  SrVal *nz = sr_nn_op(s, SR_OP_LT, sr_nn_call1(s, "jax.numpy.abs", filt), sr_nn_float(s, tol));
  SrVal *all = nz ? sr_nn_call1(s, "jax.numpy.all", nz) : NULL;
  int t = all ? sr_truthy(I, all) : -1;
  if (t < 0) return NULL;
  const SrType *ft = vtype(I, filt);
  if (t) {
    SrVal *zero = sr_nn_int(s, 0);
    return call_kw(s, "jax.numpy.empty", 1, &zero, "dtype", sr_nn_keep(s, sr_dtype_val(NULL, ft->dtype)));
  }
  SrVal *start = sr_nn_call1(s, "jax.numpy.argmin", nz);
  int64_t k;
  if (!start || sr_as_int(I, start, "start", &k) < 0) return NULL;
  return sr_nn_keep(s, sr_getitem(I, filt, sr_nn_keep(s, sr_slice_new(sr_int(NULL, k), sr_none(), sr_none()))));
}

/* polydiv(u, v, *, trim_leading_zeros=False): the long division's
   quotient and remainder, one .at[].set and .at[].add a step; with
   trim_leading_zeros, the remainder trimmed at sqrt(finfo(dtype).eps) */
static SrVal *jnp_polydiv(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "polydiv", "u, v, *, trim_leading_zeros=", p) < 0) return NULL;
  int trim = p[2] && sr_val_truthy(p[2]);
  SrNnScope s = {I, {0}, 0};
  SrVal *uv[2] = {sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1)), NULL};
  if (uv[0]) uv[1] = sr_nn_keep(&s, sr_jnp_asarray(I, p[1], -1));
  if (!uv[1] || sr_nn_promote_inexact(&s, 2, uv, "polydiv") < 0) return sr_nn_done(&s, NULL);
  SrVal *u = uv[0], *v = uv[1];
  if (!vtype(I, u)->ndim || !vtype(I, v)->ndim) return sr_nn_done(&s, sr_raise(I, "TypeError", "len() of unsized object"));
  int64_t m = vtype(I, u)->dims[0].size - 1, n = vtype(I, v)->dims[0].size - 1;
  SrVal *scale = sr_nn_op(&s, SR_OP_DIV, sr_nn_float(&s, 1.0), sr_nn_keep(&s, sr_getindex(I, v, 0)));
  SrVal *len = sr_nn_int(&s, m - n + 1 > 1 ? m - n + 1 : 1);
  SrVal *q = call_kw(&s, "jax.numpy.zeros", 1, &len, "dtype", sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, u)->dtype)));
  for (int64_t k = 0; q && u && k < m - n + 1; k++) {
    if (sr_interrupt_point(I)) {
      sr_raise(I, "KeyboardInterrupt", "interrupted");
      return sr_nn_done(&s, NULL);
    }
    SrVal *d = sr_nn_op(&s, SR_OP_MUL, scale, sr_nn_keep(&s, sr_getindex(I, u, k)));
    q = at_op(&s, q, sr_nn_int(&s, k), "set", d);
    SrVal *sl = sr_nn_keep(&s, sr_slice_new(sr_int(NULL, k), sr_int(NULL, k + n + 1), sr_none()));
    u = at_op(&s, u, sl, "add", sr_nn_op(&s, SR_OP_MUL, sr_nn_call1(&s, "jax.numpy.negative", d), v));
    if (s.n > SR_NN_SCOPE_MAX - 16) { /* keep the scope small: only q, u, v and scale live on */
      SrVal *keep[4] = {sr_ref(q), sr_ref(u), sr_ref(v), sr_ref(scale)};
      sr_nn_done(&s, NULL);
      q = sr_nn_keep(&s, keep[0]);
      u = sr_nn_keep(&s, keep[1]);
      v = sr_nn_keep(&s, keep[2]);
      scale = sr_nn_keep(&s, keep[3]);
    }
  }
  if (!q || !u) return sr_nn_done(&s, NULL);
  if (trim) {
    SrDtype dt = vtype(I, u)->dtype;
    double eps = dt == SR_F64 ? 2.220446049250313e-16 : dt == SR_F16 ? 0x1p-10 : dt == SR_BF16 ? 0x1p-7 : 0x1p-23;
    if (!(u = trim_zeros_tol_f(&s, u, sqrt(eps)))) return sr_nn_done(&s, NULL);
  }
  SrVal *items[2] = {sr_ref(q), sr_ref(u)};
  return sr_nn_done(&s, sr_nn_keep(&s, sr_tuple(NULL, 2, items)));
}

/* lax.broadcast_like(arr, like_arr): broadcast_to like_arr's shape */
static SrVal *lax_broadcast_like(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "broadcast_like", "arr, like_arr", p) < 0) return NULL;
  SrVal *like = sr_jnp_asarray(I, p[1], -1);
  SrVal *x = like ? sr_jnp_asarray(I, p[0], -1) : NULL;
  SrVal *r = NULL;
  if (x) {
    const SrType *t = vtype(I, like);
    int64_t sh[SR_MAX_RANK];
    for (int k = 0; k < t->ndim; k++) sh[k] = t->dims[k].size;
    /* like_arr's shape and aval.sharding */
    SrVal *ts = sr_type_sharding(I, t), *cs = NULL;
    if (sr_api_canon_sharding(I, ts, "broadcast_in_dim", &cs) == 0) r = sr_lax_broadcast_to(I, x, sh, t->ndim, cs);
    sr_unref(ts);
    sr_unref(cs);
  }
  sr_unref(x);
  sr_unref(like);
  return r;
}


/* ---- frexp (@jit, over the custom_jvp _frexp) and ldexp (@jit) ---- */

typedef struct {
  int nexp, nmant, minexp;
  double tiny;
  SrDtype int_type;
} FInfo;

/* dtypes.finfo's fields _frexp reads; 0 or -1 for a dtype it has none of */
static int finfo_of(SrDtype d, FInfo *f) {
  switch (d) {
  case SR_F16: *f = (FInfo){5, 10, -14, 6.103515625e-05, SR_I16}; return 0;
  case SR_BF16: *f = (FInfo){8, 7, -126, 1.1754943508222875e-38, SR_I16}; return 0;
  case SR_F32: *f = (FInfo){8, 23, -126, 1.1754943508222875e-38, SR_I32}; return 0;
  case SR_F64: *f = (FInfo){11, 52, -1022, 2.2250738585072014e-308, SR_I64}; return 0;
  default: return -1;
  }
}

static SrVal *where3(SrNnScope *s, SrVal *c, SrVal *x, SrVal *y) { return sr_nn_call3(s, "jax.numpy.where", c, x, y); }

static SrVal *frexp_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_frexp() takes 1 positional argument");
  SrNnScope s = {I, {0}, 0};
  SrVal *x = a->v[0];
  SrDtype dt = vtype(I, x)->dtype;
  FInfo f;
  if (finfo_of(dt, &f) < 0) return sr_raise(I, "ValueError", "data type %s not inexact", sr_dtype_name(dt));
  int64_t mask = ((int64_t)1 << f.nexp) - 1, bias = 1 - f.minexp;
  SrVal *ity = sr_nn_keep(&s, sr_dtype_val(NULL, f.int_type));
  /* _normalize_float */
  SrVal *cond = sr_nn_op(&s, SR_OP_LT, sr_nn_call1(&s, "jax.lax.abs", x), sr_nn_float(&s, f.tiny));
  SrVal *x1 = where3(&s, cond, sr_nn_op(&s, SR_OP_MUL, x, sr_nn_typed_scalar(&s, ldexp(1.0, f.nmant), dt)), x);
  SrVal *x2 = where3(&s, cond, sr_nn_typed_scalar(&s, -f.nmant, f.int_type), sr_nn_typed_scalar(&s, 0, f.int_type));
  x1 = sr_nn_call2(&s, "jax.lax.bitcast_convert_type", x1, ity);
  SrVal *e = sr_nn_op(&s, SR_OP_BITAND, sr_nn_op(&s, SR_OP_RSHIFT, x1, sr_nn_int(&s, f.nmant)), sr_nn_int(&s, mask));
  x2 = sr_nn_op(&s, SR_OP_ADD, x2, sr_nn_op(&s, SR_OP_ADD, sr_nn_op(&s, SR_OP_SUB, e, sr_nn_int(&s, bias)), sr_nn_int(&s, 1)));
  x1 = sr_nn_op(&s, SR_OP_BITAND, x1, sr_nn_int(&s, ~(mask << f.nmant)));
  x1 = sr_nn_op(&s, SR_OP_BITOR, x1, sr_nn_int(&s, (bias - 1) << f.nmant));
  x1 = sr_nn_call2(&s, "jax.lax.bitcast_convert_type", x1, sr_nn_keep(&s, sr_dtype_val(NULL, dt)));
  /* isinf(x) | isnan(x) | (x == 0), in Python's order of evaluation */
  SrVal *inf = sr_nn_call1(&s, "jax.numpy.isinf", x);
  SrVal *nan = sr_nn_call1(&s, "jax.numpy.isnan", x);
  SrVal *c2 = sr_nn_op(&s, SR_OP_BITOR, inf, nan);
  c2 = sr_nn_op(&s, SR_OP_BITOR, c2, sr_nn_op(&s, SR_OP_EQ, x, sr_nn_int(&s, 0)));
  x2 = where3(&s, c2, x2 ? sr_nn_full_like(&s, x2, sr_nn_int(&s, 0)) : NULL, x2);
  SrVal *m = where3(&s, c2, x, x1);
  SrVal *e32 = sr_nn_call2(&s, "jax.lax.convert_element_type", x2, sr_nn_keep(&s, sr_dtype_val(NULL, SR_I32)));
  if (!m || !e32) return sr_nn_done(&s, NULL);
  SrVal *items[2] = {sr_ref(m), sr_ref(e32)};
  return sr_nn_done(&s, sr_nn_keep(&s, sr_tuple(NULL, 2, items)));
}

/* m, e = frexp(x); (m, e), (t * exp2(-e.astype(t.dtype)), zeros of float0) */
static SrVal *frexp_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 1 || a->v[1]->seq.n != 1)
    return sr_raise(I, "TypeError", "_frexp_jvp(primals, tangents) takes one primal");
  SrNnScope s = {I, {0}, 0};
  SrVal *x = a->v[0]->seq.items[0], *t = a->v[1]->seq.items[0];
  SrVal *me = sr_nn_call1(&s, "jax.numpy.frexp", x);
  if (!me || !sr_is_seq(me) || me->seq.n != 2) return sr_nn_done(&s, NULL);
  SrVal *m = me->seq.items[0], *e = me->seq.items[1];
  SrVal *ec = sr_nn_call2(&s, "jax.lax.convert_element_type", e,
                          sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, t)->dtype)));
  SrVal *mdot = sr_nn_op(&s, SR_OP_MUL, t, sr_nn_call1(&s, "jax.numpy.exp2", sr_nn_call1(&s, "jax.numpy.negative", ec)));
  const char *kw[2] = {"fill_value", "dtype"};
  SrVal *kv[2] = {sr_nn_int(&s, 0), sr_nn_keep(&s, sr_dtype_val(NULL, SR_FLOAT0))};
  SrVal *edot = sr_nn_call(&s, "jax.lax.full_like", 1, &e, 2, kw, kv);
  if (!mdot || !edot) return sr_nn_done(&s, NULL);
  SrVal *p1[2] = {sr_ref(m), sr_ref(e)}, *p2[2] = {sr_ref(mdot), sr_ref(edot)};
  SrVal *pair[2] = {sr_tuple(NULL, 2, p1), sr_tuple(NULL, 2, p2)};
  return sr_nn_done(&s, sr_nn_keep(&s, sr_tuple(NULL, 2, pair)));
}

static SrVal *frexp_cj;

static SrVal *frexp_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  SrVal *x = a->v[0];
  if (sr_nn_promote_inexact(&s, 1, &x, "frexp") < 0) return sr_nn_done(&s, NULL);
  SrDtype dt = vtype(I, x)->dtype;
  if (sr_dtype_is_inexact(dt) && !sr_dtype_is_float(dt))
    return sr_nn_done(&s, sr_raise(I, "TypeError", "frexp does not support complex-valued inputs"));
  SrVal *cj = sr_nn_custom_jvp(I, &frexp_cj, "_frexp", frexp_fun, "_frexp_jvp", frexp_jvp, 0);
  return sr_nn_done(&s, cj ? sr_nn_keep(&s, sr_call1(I, cj, x)) : NULL);
}

static SrVal *jnp_frexp(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "frexp", "x", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *r = sr_api_jit(I, "frexp", frexp_body, NULL, 1, &x);
  sr_unref(x);
  return r;
}

static SrVal *ldexp_body(SrInterp *I, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  SrVal *x1 = a->v[0], *x2 = a->v[1];
  SrDtype d1 = vtype(I, x1)->dtype, d2 = vtype(I, x2)->dtype;
  if ((sr_dtype_is_inexact(d1) && !sr_dtype_is_float(d1)) || sr_dtype_is_inexact(d2))
    return sr_raise(I, "ValueError", "ldexp not supported for input types (dtype('%s'), dtype('%s'))", sr_dtype_name(d1),
                    sr_dtype_name(d2));
  if (sr_nn_promote_inexact(&s, 1, &x1, "ldexp") < 0) return sr_nn_done(&s, NULL);
  SrVal *dt1 = sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, x1)->dtype));
  x2 = sr_nn_call2(&s, "jax.lax.convert_element_type", x2, dt1);
  SrVal *me = sr_nn_call1(&s, "jax.numpy.frexp", x1);
  if (!x2 || !me || !sr_is_seq(me) || me->seq.n != 2) return sr_nn_done(&s, NULL);
  SrVal *m = me->seq.items[0], *e = me->seq.items[1];
  SrVal *dt2 = sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, x2)->dtype));
  e = sr_nn_call2(&s, "jax.lax.convert_element_type", sr_nn_op(&s, SR_OP_ADD, sr_nn_call2(&s, "jax.lax.convert_element_type", e, dt2), x2), dt1);
  SrVal *pos = sr_nn_op(&s, SR_OP_GT, e, sr_nn_int(&s, 0));
  m = where3(&s, pos, sr_nn_op(&s, SR_OP_MUL, m, sr_nn_int(&s, 2)), m);
  e = where3(&s, pos, sr_nn_op(&s, SR_OP_SUB, e, sr_nn_int(&s, 1)), e);
  SrVal *dtm = m ? sr_nn_keep(&s, sr_dtype_val(NULL, vtype(I, m)->dtype)) : NULL;
  SrVal *x = sr_nn_op(&s, SR_OP_MUL, m, sr_nn_op(&s, SR_OP_POW, sr_nn_int(&s, 2), sr_nn_call2(&s, "jax.lax.convert_element_type", e, dtm)));
  SrVal *inf = sr_nn_call1(&s, "jax.numpy.isinf", a->v[0]);
  SrVal *keep = sr_nn_op(&s, SR_OP_BITOR, inf, sr_nn_op(&s, SR_OP_EQ, a->v[0], sr_nn_int(&s, 0)));
  return sr_nn_done(&s, where3(&s, keep, a->v[0], x));
}

static SrVal *jnp_ldexp(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "ldexp", "x1, x2", p) < 0) return NULL;
  SrVal *x[2] = {sr_jnp_asarray(I, p[0], -1), NULL};
  if (x[0]) x[1] = sr_jnp_asarray(I, p[1], -1);
  SrVal *r = x[1] ? sr_api_jit(I, "ldexp", ldexp_body, NULL, 2, x) : NULL;
  sr_unref(x[0]);
  sr_unref(x[1]);
  return r;
}

void sr_jnp_small16_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.array_equiv", jnp_array_equiv, "array_equiv(a1, a2): whether a1 and a2 are equal after broadcasting"},
      {"jax.numpy.rollaxis", jnp_rollaxis, "rollaxis(a, axis, start=0): jit[name=rollaxis], axis moved before start"},
      {"jax.numpy.fromfunction", jnp_fromfunction,
       "fromfunction(function, shape, *, dtype=float, **kwargs): function on the index grids (vmaps)"},
      {"jax.numpy.block", jnp_block, "block(arrays): jit[name=block], an array assembled from nested lists of blocks"},
      {"jax.numpy.unwrap", jnp_unwrap,
       "unwrap(p, discont=None, axis=-1, period=2*pi): jit[name=unwrap], jumps above discont taken off"},
      {"jax.numpy.kaiser", jnp_kaiser, "kaiser(M, beta): the Kaiser window, i0(beta*sqrt(1-((n-a)/a)**2))/i0(beta)"},
      {"jax.numpy.mask_indices", jnp_mask_indices,
       "mask_indices(n, mask_func, k=0, *, size=None): the indices where mask_func(ones((n, n)), k) is nonzero"},
      {"jax.numpy.packbits", jnp_packbits,
       "packbits(a, axis=None, bitorder='big'): jit[name=packbits], the bits of a packed into uint8"},
      {"jax.numpy.unpackbits", jnp_unpackbits,
       "unpackbits(a, axis=None, count=None, bitorder='big'): jit[name=unpackbits], uint8 unpacked into bits"},
      {"jax.numpy.polydiv", jnp_polydiv,
       "polydiv(u, v, *, trim_leading_zeros=False): (quotient, remainder) of the polynomials' long division"},
      {"jax.numpy.frexp", jnp_frexp, "frexp(x, /): jit[name=frexp], (mantissa, exponent) with x = m * 2**e"},
      {"jax.numpy.ldexp", jnp_ldexp, "ldexp(x1, x2, /): jit[name=ldexp], x1 * 2**x2"},
      {"jax.lax.broadcast_like", lax_broadcast_like, "broadcast_like(arr, like_arr): arr broadcast to like_arr's shape"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  /* lax.RoundingMethod (an IntEnum: its members are the ints round's
     rounding_method= takes) */
  sr_register("jax.lax.RoundingMethod.AWAY_FROM_ZERO", sr_int(NULL, 0));
  sr_register("jax.lax.RoundingMethod.TO_NEAREST_EVEN", sr_int(NULL, 1));
}
