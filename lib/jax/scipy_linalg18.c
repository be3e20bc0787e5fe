/* scipy_linalg18.c: jax.scipy.linalg's special matrices
 * (jax/_src/scipy/linalg.py): toeplitz, hankel, circulant, leslie,
 * companion, fiedler, fiedler_companion, convolution_matrix, hilbert,
 * invhilbert, pascal, invpascal, helmert and hadamard.
 *
 * Each is written with JAX's calls in JAX's order and with its wrappers
 * (a plain @jit is a jit equation named for the function, its static
 * arguments in the body's data).  Where JAX maps a one-matrix function
 * over leading dimensions with jnp.vectorize, the function here is written
 * on the batch directly: the operands are broadcast to one batch shape and
 * every index is an iota over the last two dimensions, so the matrices
 * are the same and the function stays traceable.  toeplitz and hankel
 * take the windows conv_general_dilated_patches takes as one gather
 * (jnp.take).  Registered by sr_scipy_linalg18_init (jax.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "jax/np_host.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "util/buf.h"
#include "util/mem.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, v)
#define DONE(v) sr_nn_done(s, v)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define INT(i) sr_nn_int(s, i)
#define FL(d) sr_nn_float(s, d)

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }
static SrDtype default_float(SrInterp *I) { return I->jax->enable_x64 ? SR_F64 : SR_F32; }
static SrDtype default_int(SrInterp *I) { return I->jax->enable_x64 ? SR_I64 : SR_I32; }

/* check_arraylike(name, *args) */
static int arraylike(SrInterp *I, const char *name, int n, SrVal **args) {
  for (int i = 0; i < n; i++) {
    SrVal *v = args[i];
    if (v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || v->kind == SR_V_COMPLEX ||
        sr_array_of(v) || sr_is_ndarray(v))
      continue;
    sr_raise(I, "TypeError", "%s requires ndarray or scalar arguments, got <class '%s'> at position %d.", name,
             sr_val_kind_name(v), i);
    return -1;
  }
  return 0;
}

/* the shape of t as Python prints a tuple: (3,), (2, 3) */
static void shape_str(SrBuf *b, const SrType *t) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < t->ndim; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
  sr_buf_puts(b, t->ndim == 1 ? ",)" : ")");
}

static SrVal *kwcall(SrNnScope *s, const char *q, int n, SrVal **v, const char *kw, SrVal *kv) {
  return sr_nn_call(s, q, n, v, 1, &kw, &kv);
}

static SrVal *dtype_val(SrNnScope *s, SrDtype dt) { return KEEP(sr_dtype_val(NULL, dt)); }

static SrVal *tuple_of(SrNnScope *s, int n, SrVal **v) {
  SrVal *it[8];
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  for (int i = 0; i < n; i++) it[i] = sr_ref(v[i]);
  return KEEP(sr_tuple(NULL, n, it));
}

/* [x, y] */
static SrVal *list2(SrNnScope *s, SrVal *x, SrVal *y) {
  if (!x || !y) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 2);
  sr_seq_push(NULL, l, sr_ref(x));
  sr_seq_push(NULL, l, sr_ref(y));
  return KEEP(l);
}

/* broadcasted_iota(dt, (rows, cols), dim) */
static SrVal *iota2(SrNnScope *s, SrDtype dt, int64_t rows, int64_t cols, int dim) {
  int64_t shape[2] = {rows, cols};
  return KEEP(sr_lax_iota(s->I, dt, shape, 2, dim, NULL));
}

/* x[..., lo:hi] */
static SrVal *slice_last(SrNnScope *s, SrVal *x, int64_t lo, int64_t hi) {
  const SrType *t = ty(s->I, x);
  if (!t) return NULL;
  int64_t start[SR_MAX_RANK], limit[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) start[i] = 0, limit[i] = t->dims[i].size;
  start[t->ndim - 1] = lo;
  limit[t->ndim - 1] = hi;
  return KEEP(sr_lax_slice(s->I, x, start, limit, NULL));
}

/* jnp.flip(x, axis=-1) */
static SrVal *flip_last(SrNnScope *s, SrVal *x) {
  const SrType *t = ty(s->I, x);
  if (!t) return NULL;
  int64_t d = t->ndim - 1;
  return KEEP(sr_lax_rev(s->I, x, &d, 1));
}

/* x[..., None, :] (k = 2) or x[..., None, None] (k = 0): x with a unit
   dimension inserted k places from the end... as lax.expand_dims */
static SrVal *expand_at(SrNnScope *s, SrVal *x, int64_t dim) {
  const SrType *t = ty(s->I, x);
  if (!t) return NULL;
  if (dim < 0) dim += t->ndim + 1;
  return KEEP(sr_lax_expand_dims(s->I, x, &dim, 1));
}

/* jnp.take(x, idx, axis=-1) */
static SrVal *take_last(SrNnScope *s, SrVal *x, SrVal *idx) {
  SrVal *v[2] = {x, idx};
  return kwcall(s, "jax.numpy.take", 2, v, "axis", INT(-1));
}

/* x and y broadcast to one batch shape (all but their last dimension),
   as jnp.vectorize broadcasts the loop dimensions of a core signature */
static int broadcast_batch(SrNnScope *s, SrVal **x, SrVal **y) {
  SrInterp *I = s->I;
  const SrType *tx = ty(I, *x), *ty_ = ty(I, *y);
  if (!tx || !ty_) return -1;
  int nb = (tx->ndim > ty_->ndim ? tx->ndim : ty_->ndim) - 1;
  int64_t b[SR_MAX_RANK];
  for (int i = 0; i < nb; i++) {
    int ix = i - (nb - (tx->ndim - 1)), iy = i - (nb - (ty_->ndim - 1));
    int64_t dx = ix >= 0 ? tx->dims[ix].size : 1, dy = iy >= 0 ? ty_->dims[iy].size : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      SrBuf bx = SR_BUF_INIT, by = SR_BUF_INIT;
      shape_str(&bx, tx);
      shape_str(&by, ty_);
      sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[%s, %s]", bx.p, by.p);
      sr_buf_free(&bx);
      sr_buf_free(&by);
      return -1;
    }
    b[i] = dx == 1 ? dy : dx;
  }
  SrVal **v[2] = {x, y};
  for (int k = 0; k < 2; k++) {
    const SrType *t = ty(I, *v[k]);
    b[nb] = t->dims[t->ndim - 1].size;
    if (!(*v[k] = KEEP(sr_lax_broadcast_to(I, *v[k], b, nb + 1, NULL)))) return -1;
  }
  return 0;
}

/* jnp.empty(batch + (rows, cols), dtype) for x's batch */
static SrVal *empty_batch(SrNnScope *s, SrVal *x, int64_t rows, int64_t cols, SrDtype dt) {
  const SrType *t = ty(s->I, x);
  int64_t sh[SR_MAX_RANK + 1];
  int nd = t->ndim - 1;
  for (int i = 0; i < nd; i++) sh[i] = t->dims[i].size;
  sh[nd] = rows;
  sh[nd + 1] = cols;
  SrVal *shv = KEEP(sr_int_tuple(sh, nd + 2));
  return kwcall(s, "jax.numpy.empty", 1, &shv, "dtype", dtype_val(s, dt));
}

/* promote_dtypes(x, y), replaced in place */
static int promote2(SrNnScope *s, SrVal **x, SrVal **y, const char *name) {
  SrVal *p[2] = {*x, *y};
  if (sr_jnp_promote(s->I, 2, p, name) < 0) return -1;
  *x = KEEP(p[0]);
  *y = KEEP(p[1]);
  return 0;
}

/* ---- toeplitz, hankel: one gather of the windows of v ---- */

/* M[..., i, j] = v[..., off + sign * i + j] for an (m, n) result */
static SrVal *windows(SrNnScope *s, SrVal *v, int64_t m, int64_t n, int64_t off, int sign) {
  SrVal *i = iota2(s, SR_I32, m, n, 0), *j = iota2(s, SR_I32, m, n, 1);
  SrVal *idx = OP(ADD, sign < 0 ? OP(SUB, INT(off), i) : OP(ADD, INT(off), i), j);
  return take_last(s, v, idx);
}

static SrVal *toeplitz_of(SrNnScope *s, SrVal *c, SrVal *r) {
  SrInterp *I = s->I;
  c = C1("jax.numpy.atleast_1d", c);
  r = c ? C1("jax.numpy.atleast_1d", r) : NULL;
  if (!r || broadcast_batch(s, &c, &r) < 0) return NULL;
  const SrType *tc = ty(I, c), *tr = ty(I, r);
  int64_t m = tc->dims[tc->ndim - 1].size, n = tr->dims[tr->ndim - 1].size;
  if (m == 0 || n == 0) {
    SrVal *v[2] = {c, r};
    int weak;
    SrDtype dt = sr_jnp_result_dtype(I, 2, v, &weak);
    return empty_batch(s, c, m, n, dt);
  }
  SrVal *parts[2] = {flip_last(s, c), slice_last(s, r, 1, n)};
  SrVal *pt = tuple_of(s, 2, parts);
  SrVal *elems = pt ? kwcall(s, "jax.numpy.concatenate", 1, &pt, "axis", INT(-1)) : NULL;
  return elems ? windows(s, elems, m, n, m - 1, -1) : NULL;
}

static SrVal *sp_toeplitz(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "toeplitz", "c, r=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *c = p[0], *r = p[1];
  if (!sr_nn_given(r)) {
    if (arraylike(I, "toeplitz", 1, p) < 0) return DONE(NULL);
    r = C1("jax.numpy.conjugate", C1("jax.numpy.asarray", c));
  } else if (arraylike(I, "toeplitz", 2, p) < 0) {
    return DONE(NULL);
  }
  c = C1("jax.numpy.asarray", c);
  r = r ? C1("jax.numpy.asarray", r) : NULL;
  return DONE(c && r ? toeplitz_of(s, c, r) : NULL);
}

static SrVal *sp_hankel(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "hankel", "c, r=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *c, *r;
  if (!sr_nn_given(p[1])) {
    if (arraylike(I, "hankel", 1, p) < 0) return DONE(NULL);
    c = C1("jax.numpy.asarray", p[0]);
    r = c ? C1("jax.numpy.zeros_like", c) : NULL;
  } else {
    if (arraylike(I, "hankel", 2, p) < 0) return DONE(NULL);
    c = C1("jax.numpy.asarray", p[0]);
    r = c ? C1("jax.numpy.asarray", p[1]) : NULL;
  }
  if (!r) return DONE(NULL);
  if (ty(I, c)->ndim == 0)
    return DONE(sr_raise(I, "ValueError", "hankel: c must be at least 1-dimensional, got a scalar."));
  if (ty(I, r)->ndim == 0)
    return DONE(sr_raise(I, "ValueError", "hankel: r must be at least 1-dimensional, got a scalar."));
  if (broadcast_batch(s, &c, &r) < 0) return DONE(NULL);
  const SrType *tc = ty(I, c), *tr = ty(I, r);
  int64_t m = tc->dims[tc->ndim - 1].size, n = tr->dims[tr->ndim - 1].size;
  if (m == 0 || n == 0) {
    SrVal *v[2] = {c, r};
    int weak;
    SrDtype dt = sr_jnp_result_dtype(I, 2, v, &weak);
    return DONE(empty_batch(s, c, m, n, dt));
  }
  SrVal *parts[2] = {c, slice_last(s, r, 1, n)};
  SrVal *pt = tuple_of(s, 2, parts);
  SrVal *v = pt ? kwcall(s, "jax.numpy.concatenate", 1, &pt, "axis", INT(-1)) : NULL;
  return DONE(v ? windows(s, v, m, n, 0, 1) : NULL);
}

/* ---- circulant, fiedler ---- */

static SrVal *sp_circulant(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "circulant", "c", p) < 0) return NULL;
  if (arraylike(I, "circulant", 1, p) < 0) return NULL;
  SCOPE(I);
  SrVal *c = C1("jax.numpy.atleast_1d", C1("jax.numpy.asarray", p[0]));
  if (!c) return DONE(NULL);
  const SrType *t = ty(I, c);
  int64_t n = t->dims[t->ndim - 1].size;
  if (n == 0) return DONE(empty_batch(s, c, 0, 0, t->dtype));
  /* idx = (arange(n)[:, None] - arange(n)[None, :]) % n */
  SrVal *idx = OP(MOD, OP(SUB, iota2(s, SR_I32, n, n, 0), iota2(s, SR_I32, n, n, 1)), INT(n));
  return DONE(take_last(s, c, idx));
}

static SrVal *sp_fiedler(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "fiedler", "a", p) < 0) return NULL;
  if (arraylike(I, "fiedler", 1, p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = C1("jax.numpy.atleast_1d", p[0]);
  /* jnp.abs(arr[..., None] - arr[..., None, :]) */
  return DONE(C1("jax.numpy.abs", OP(SUB, expand_at(s, x, -1), expand_at(s, x, -2))));
}

/* ---- leslie, companion, fiedler_companion ---- */

static SrVal *sp_leslie(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "leslie", "f, s", p) < 0) return NULL;
  if (arraylike(I, "leslie", 2, p) < 0) return NULL;
  SCOPE(I);
  SrVal *f = C1("jax.numpy.atleast_1d", p[0]), *sv = f ? C1("jax.numpy.atleast_1d", p[1]) : NULL;
  if (!sv) return DONE(NULL);
  const SrType *tf = ty(I, f), *ts = ty(I, sv);
  int64_t n = tf->dims[tf->ndim - 1].size;
  SrBuf bf = SR_BUF_INIT, bs = SR_BUF_INIT;
  shape_str(&bf, tf);
  shape_str(&bs, ts);
  if (n < 2)
    sr_raise(I, "ValueError", "The length of f along the last axis must be at least 2; got shape %s.", bf.p);
  else if (ts->dims[ts->ndim - 1].size != n - 1)
    sr_raise(I, "ValueError",
             "Incorrect lengths for f and s. The length of s along the last axis must be one less than the length "
             "of f; got f shape %s and s shape %s.",
             bf.p, bs.p);
  sr_buf_free(&bf);
  sr_buf_free(&bs);
  if (I->exc) return DONE(NULL);
  if (promote2(s, &f, &sv, "leslie") < 0) return DONE(NULL);
  /* jnp.diag(s, k=-1).at[0].set(f): f on row 0, s[j] at (j + 1, j) */
  int64_t cfg[2 * 3 * SR_MAX_RANK] = {0};
  const SrType *t = ty(I, sv);
  cfg[3 * (t->ndim - 1) + 1] = 1;
  SrVal *spad = KEEP(sr_lax_pad(I, sv, sr_nn_typed_scalar(s, 0, t->dtype), cfg, t->ndim));
  SrVal *i = iota2(s, SR_I32, n, n, 0), *j = iota2(s, SR_I32, n, n, 1);
  SrVal *w[3] = {OP(EQ, i, OP(ADD, j, INT(1))), expand_at(s, spad, -2), sr_nn_typed_scalar(s, 0, t->dtype)};
  SrVal *lower = w[0] && w[1] && w[2] ? sr_nn_call(s, "jax.numpy.where", 3, w, 0, NULL, NULL) : NULL;
  SrVal *u[3] = {OP(EQ, i, INT(0)), expand_at(s, f, -2), lower};
  return DONE(lower ? sr_nn_call(s, "jax.numpy.where", 3, u, 0, NULL, NULL) : NULL);
}

/* promote_args_inexact(name, a), then jnp.atleast_1d */
static SrVal *inexact_1d(SrNnScope *s, SrVal *a, const char *name) {
  SrVal *v[1] = {a};
  if (sr_nn_promote_inexact(s, 1, v, name) < 0) return NULL;
  return C1("jax.numpy.atleast_1d", v[0]);
}

static SrVal *sp_companion(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "companion", "a", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = inexact_1d(s, p[0], "companion");
  if (!x) return DONE(NULL);
  const SrType *t = ty(I, x);
  int64_t n = t->dims[t->ndim - 1].size, m = n - 1;
  if (n < 2) {
    SrBuf b = SR_BUF_INIT;
    shape_str(&b, t);
    sr_raise(I, "ValueError", "The length of `a` along the last axis must be at least 2; got shape %s.", b.p);
    sr_buf_free(&b);
    return DONE(NULL);
  }
  /* first_row = -a[1:] / a[0]; jnp.eye(m, m, k=-1).at[0].set(first_row) */
  SrVal *first = OP(DIV, C1("jax.numpy.negative", slice_last(s, x, 1, n)), slice_last(s, x, 0, 1));
  SrVal *i = iota2(s, SR_I32, m, m, 0), *j = iota2(s, SR_I32, m, m, 1);
  SrVal *eye = OP(EQ, i, OP(ADD, j, INT(1)));
  eye = eye ? KEEP(sr_lax_convert(I, eye, t->dtype, 0, NULL)) : NULL;
  SrVal *v[3] = {OP(EQ, i, INT(0)), expand_at(s, first, -2), eye};
  return DONE(first && eye && v[0] && v[1] ? sr_nn_call(s, "jax.numpy.where", 3, v, 0, NULL, NULL) : NULL);
}

static SrVal *sp_fiedler_companion(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "fiedler_companion", "a", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = inexact_1d(s, p[0], "fiedler_companion");
  if (!x) return DONE(NULL);
  const SrType *t = ty(I, x);
  int64_t n = t->dims[t->ndim - 1].size - 1;
  if (n < 0) {
    SrBuf b = SR_BUF_INIT;
    shape_str(&b, t);
    sr_raise(I, "ValueError",
             "fiedler_companion requires the last axis of 'a' to have nonzero length, but got an array of shape %s.",
             b.p);
    sr_buf_free(&b);
    return DONE(NULL);
  }
  if (n == 0) return DONE(empty_batch(s, x, 0, 0, t->dtype));
  x = OP(DIV, x, slice_last(s, x, 0, 1)); /* a = a / a[0] */
  if (n == 1) return DONE(C1("jax.numpy.negative", expand_at(s, slice_last(s, x, 1, 2), -1)));
  SrVal *i = iota2(s, SR_I32, n, n, 0), *j = iota2(s, SR_I32, n, n, 1);
  SrVal *super = C1("jax.numpy.negative", take_last(s, x, C2("jax.numpy.minimum", OP(ADD, i, INT(2)), INT(n))));
  SrVal *sub = C1("jax.numpy.negative", take_last(s, x, C2("jax.numpy.minimum", OP(ADD, i, INT(1)), INT(n))));
  SrVal *even = OP(EQ, OP(MOD, i, INT(2)), INT(0)), *odd = OP(EQ, OP(MOD, i, INT(2)), INT(1));
  SrVal *one = sr_nn_typed_scalar(s, 1, t->dtype), *zero = sr_nn_typed_scalar(s, 0, t->dtype);
  SrVal *conds[6] = {
      OP(BITAND, OP(EQ, i, INT(0)), OP(EQ, j, INT(0))),
      OP(BITAND, OP(EQ, i, INT(1)), OP(EQ, j, INT(0))),
      OP(BITAND, OP(EQ, j, OP(ADD, i, INT(1))), even),
      OP(BITAND, OP(EQ, j, OP(ADD, i, INT(2))), even),
      OP(BITAND, OP(BITAND, OP(EQ, j, OP(SUB, i, INT(1))), even), OP(GE, i, INT(2))),
      OP(BITAND, OP(BITAND, OP(EQ, j, OP(SUB, i, INT(2))), odd), OP(GE, i, INT(3))),
  };
  SrVal *a1 = C1("jax.numpy.negative", expand_at(s, expand_at(s, slice_last(s, x, 1, 2), -1), -1));
  /* -a[1] has the batch shape: (..., 1, 1) after the slice */
  const SrType *ta = ty(I, a1);
  if (ta) {
    int64_t d = ta->ndim - 1;
    a1 = KEEP(sr_lax_squeeze(I, a1, &d, 1));
  }
  SrVal *choices[6] = {a1, one, super, one, sub, one};
  SrVal *cl = tuple_of(s, 6, conds), *chl = tuple_of(s, 6, choices);
  SrVal *v[2] = {cl, chl};
  return DONE(cl && chl ? kwcall(s, "jax.numpy.select", 2, v, "default", zero) : NULL);
}

/* ---- convolution_matrix (@jit, n and mode static) ---- */

typedef struct ConvMat {
  int64_t n;
  int mode; /* 0 full, 1 valid, 2 same */
} ConvMat;

static SrVal *conv_matrix_body(SrInterp *I, SrArgs *a) {
  const ConvMat *cm = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = C1("jax.numpy.asarray", a->v[0]);
  if (!x) return DONE(NULL);
  const SrType *t = ty(I, x);
  if (t->ndim == 0)
    return DONE(sr_raise(I, "ValueError", "convolution_matrix: a must be at least 1-dimensional, got a scalar."));
  int64_t m = t->dims[t->ndim - 1].size, n = cm->n;
  if (m < 1) {
    SrBuf b = SR_BUF_INIT;
    shape_str(&b, t);
    sr_raise(I, "ValueError", "len(a) must be at least 1; got shape %s.", b.p);
    sr_buf_free(&b);
    return DONE(NULL);
  }
  int64_t cfg[3 * SR_MAX_RANK] = {0};
  cfg[3 * (t->ndim - 1) + 1] = n - 1;
  SrVal *zero = sr_nn_typed_scalar(s, 0, t->dtype);
  SrVal *az = KEEP(sr_lax_pad(I, x, zero, cfg, t->ndim));
  SrVal *fl = az ? flip_last(s, x) : NULL;
  SrVal *raz = fl ? KEEP(sr_lax_pad(I, fl, zero, cfg, t->ndim)) : NULL;
  if (!raz) return DONE(NULL);
  int64_t L = m + n - 1, lo = m < n ? m : n, tb = 0, te = 0;
  if (cm->mode == 2) {
    tb = (lo - 1) / 2;
    te = lo - 1 - tb;
  } else if (cm->mode == 1) {
    tb = te = lo - 1;
  }
  SrVal *col0 = slice_last(s, az, tb, L - te), *row0 = slice_last(s, raz, L - n - tb, L - tb);
  return DONE(col0 && row0 ? toeplitz_of(s, col0, row0) : NULL);
}

static SrVal *sp_convolution_matrix(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "convolution_matrix", "a, n, mode=", p) < 0) return NULL;
  int64_t n;
  if (sr_as_int(I, p[1], "n", &n) < 0) return NULL;
  if (n <= 0) return sr_raise(I, "ValueError", "n must be a positive integer; got %lld.", (long long)n);
  if (arraylike(I, "convolution_matrix", 1, p) < 0) return NULL;
  int mode = 0;
  if (sr_nn_given(p[2])) {
    static const char *const modes[3] = {"full", "valid", "same"};
    mode = -1;
    for (int k = 0; k < 3 && p[2]->kind == SR_V_STR; k++)
      if (p[2]->str.n == strlen(modes[k]) && !memcmp(p[2]->str.s, modes[k], p[2]->str.n)) mode = k;
    if (mode < 0) {
      SrBuf b = SR_BUF_INIT;
      sr_to_repr(I, &b, p[2]);
      sr_raise(I, "ValueError", "mode must be one of 'full', 'valid', 'same'; got %s.", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  }
  ConvMat *cm = sr_xmalloc(sizeof *cm);
  cm->n = n;
  cm->mode = mode;
  return sr_api_jit(I, "convolution_matrix", conv_matrix_body, cm, 1, p);
}

/* ---- hilbert, invhilbert, pascal, invpascal, helmert, hadamard (@jit) ---- */

typedef struct Static {
  int64_t n;
  int kind;   /* pascal, invpascal: 0 symmetric, 1 lower, 2 upper; helmert: full */
  SrDtype dt; /* hadamard */
} Static;

static const Static *static_of(SrInterp *I) { return sr_current_builtin(I)->data; }

static SrVal *jit_static(SrInterp *I, const char *name, SrBuiltinFn body, int64_t n, int kind, SrDtype dt) {
  Static *st = sr_xmalloc(sizeof *st);
  st->n = n;
  st->kind = kind;
  st->dt = dt;
  return sr_api_jit(I, name, body, st, 0, NULL);
}

/* a[:, None] (dim 0) or a[None, :] (dim 1) of jnp.arange(n, dtype=dt) */
static SrVal *arange_col(SrNnScope *s, int64_t n, SrDtype dt, int dim) {
  return dim ? iota2(s, dt, 1, n, 1) : iota2(s, dt, n, 1, 0);
}

static SrVal *hilbert_body(SrInterp *I, SrArgs *a) {
  (void)a;
  SCOPE(I);
  int64_t n = static_of(I)->n;
  /* a = lax.broadcasted_iota(float, (n, 1), 0); 1 / (a + a.T + 1) */
  SrVal *x = iota2(s, default_float(I), n, 1, 0);
  SrVal *xt = x ? C1("jax.numpy.transpose", x) : NULL;
  return DONE(OP(DIV, INT(1), OP(ADD, OP(ADD, x, xt), INT(1))));
}

/* dft(n, scale, dtype) (jit, static): exp(-2j pi a[:, None] a[None, :] / n)
   for a = jnp.arange(n, dtype=dtype), over sqrt(n) or n as scale says */
static SrVal *dft_body(SrInterp *I, SrArgs *a) {
  (void)a;
  SCOPE(I);
  const Static *st = static_of(I);
  int64_t n = st->n;
  SrVal *w = KEEP(sr_complex(NULL, -0.0, -2.0 * M_PI));
  SrVal *e = OP(DIV, OP(MUL, OP(MUL, w, arange_col(s, n, st->dt, 0)), arange_col(s, n, st->dt, 1)), INT(n));
  SrVal *om = e ? C1("jax.numpy.exp", e) : NULL;
  if (om && st->kind == 1) om = OP(DIV, om, C1("jax.numpy.sqrt", INT(n)));
  if (om && st->kind == 2) om = OP(DIV, om, INT(n));
  return DONE(om);
}

static SrVal *sp_dft(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  int64_t n;
  int dt = -1;
  if (sr_args_parse(I, a, "dft", "n, scale=, *, dtype=", p) < 0 || sr_as_int(I, p[0], "n", &n) < 0) return NULL;
  int kind = 0;
  if (sr_nn_given(p[1])) {
    if (p[1]->kind == SR_V_STR && p[1]->str.n == 5 && !memcmp(p[1]->str.s, "sqrtn", 5)) kind = 1;
    else if (p[1]->kind == SR_V_STR && p[1]->str.n == 1 && p[1]->str.s[0] == 'n') kind = 2;
    else {
      SrBuf b = SR_BUF_INIT;
      sr_to_repr(I, &b, p[1]);
      sr_raise(I, "ValueError", "scale must be None, 'sqrtn', or 'n'; got %s.", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  }
  if (sr_nn_given(p[2])) {
    if (sr_dtype_arg(I, p[2], &dt, "dft") < 0) return NULL;
    if (sr_dtype_kind((SrDtype)dt) != SR_DK_COMPLEX)
      return sr_raise(I, "ValueError", "dtype must be a complex floating-point type; got %s.", sr_dtype_name((SrDtype)dt));
  }
  if (dt < 0) dt = I->jax->enable_x64 ? SR_C128 : SR_C64;
  return jit_static(I, "dft", dft_body, n, kind, (SrDtype)dt);
}

/* jax.scipy.special.comb(N, k) */
static SrVal *comb(SrNnScope *s, SrVal *N, SrVal *k) { return C2("jax.scipy.special.comb", N, k); }

static SrVal *invhilbert_body(SrInterp *I, SrArgs *a) {
  (void)a;
  SCOPE(I);
  int64_t n = static_of(I)->n;
  SrDtype dt = default_float(I);
  SrVal *i = arange_col(s, n, dt, 0), *j = arange_col(s, n, dt, 1);
  SrVal *sm = OP(ADD, i, j);
  SrVal *r = OP(MUL, C2("jax.numpy.power", FL(-1.0), sm), OP(ADD, sm, FL(1.0)));
  r = OP(MUL, r, comb(s, OP(ADD, INT(n), i), OP(SUB, OP(SUB, INT(n), j), INT(1))));
  r = OP(MUL, r, comb(s, OP(ADD, INT(n), j), OP(SUB, OP(SUB, INT(n), i), INT(1))));
  SrVal *c = comb(s, sm, i);
  return DONE(OP(MUL, r, OP(POW, c, INT(2))));
}

/* _binom(n, k) = exp(lgamma(n + 1) - lgamma(n - k + 1) - lgamma(k + 1)) */
static SrVal *binom(SrNnScope *s, SrVal *n, SrVal *k) {
  SrVal *x = C1("jax.lax.lgamma", OP(ADD, n, FL(1.0)));
  SrVal *y = C1("jax.lax.lgamma", OP(ADD, OP(SUB, n, k), FL(1.0)));
  SrVal *z = C1("jax.lax.lgamma", OP(ADD, k, FL(1.0)));
  return C1("jax.lax.exp", OP(SUB, OP(SUB, x, y), z));
}

static SrVal *pascal_body(SrInterp *I, SrArgs *a) {
  (void)a;
  SCOPE(I);
  const Static *st = static_of(I);
  SrVal *L = binom(s, arange_col(s, st->n, SR_F32, 0), arange_col(s, st->n, SR_F32, 1));
  if (st->kind == 1 || !L) return DONE(L);
  SrVal *LT = C1("jax.numpy.transpose", L);
  if (st->kind == 2) return DONE(LT);
  return DONE(C2("jax.numpy.dot", L, LT));
}

static SrVal *invpascal_body(SrInterp *I, SrArgs *a) {
  (void)a;
  SCOPE(I);
  const Static *st = static_of(I);
  SrDtype dt = default_float(I);
  SrVal *i = arange_col(s, st->n, dt, 0), *j = arange_col(s, st->n, dt, 1);
  /* L_inv = (-1.0) ** (i - j) * _binom(i, j) */
  SrVal *L = OP(MUL, C2("jax.numpy.power", FL(-1.0), OP(SUB, i, j)), binom(s, i, j));
  if (st->kind == 1 || !L) return DONE(L);
  SrVal *LT = C1("jax.numpy.transpose", L);
  if (st->kind == 2) return DONE(LT);
  return DONE(C2("jax.numpy.dot", LT, L));
}

/* kind=None|'symmetric'|'lower'|'upper'; -1 with JAX's error raised */
static int kind_arg(SrInterp *I, SrVal *v, const char *fmt) {
  static const char *const kinds[3] = {"symmetric", "lower", "upper"};
  if (!sr_nn_given(v)) return 0;
  for (int k = 0; k < 3 && v->kind == SR_V_STR; k++)
    if (v->str.n == strlen(kinds[k]) && !memcmp(v->str.s, kinds[k], v->str.n)) return k;
  SrBuf b = SR_BUF_INIT;
  sr_to_str(I, &b, v);
  sr_raise(I, "ValueError", fmt, sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

static int n_arg(SrInterp *I, SrVal *v, int64_t *n) { return sr_as_int(I, v, "n", n); }

static SrVal *sp_hilbert(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  int64_t n;
  if (sr_args_parse(I, a, "hilbert", "n", p) < 0 || n_arg(I, p[0], &n) < 0) return NULL;
  return jit_static(I, "hilbert", hilbert_body, n, 0, SR_F32);
}

static SrVal *sp_invhilbert(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  int64_t n;
  if (sr_args_parse(I, a, "invhilbert", "n", p) < 0 || n_arg(I, p[0], &n) < 0) return NULL;
  return jit_static(I, "invhilbert", invhilbert_body, n, 0, SR_F32);
}

static SrVal *sp_pascal(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int64_t n;
  if (sr_args_parse(I, a, "pascal", "n, kind=", p) < 0 || n_arg(I, p[0], &n) < 0) return NULL;
  int kind = kind_arg(I, p[1], "Expected kind to be on of: ['symmetric', 'lower', 'upper']; got %s");
  if (kind < 0) return NULL;
  return jit_static(I, "pascal", pascal_body, n, kind, SR_F32);
}

static SrVal *sp_invpascal(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int64_t n;
  if (sr_args_parse(I, a, "invpascal", "n, kind=", p) < 0 || n_arg(I, p[0], &n) < 0) return NULL;
  int kind = kind_arg(I, p[1], "Expected kind to be one of: ['symmetric', 'lower', 'upper']; got %s");
  if (kind < 0) return NULL;
  return jit_static(I, "invpascal", invpascal_body, n, kind, SR_F32);
}

static SrVal *helmert_body(SrInterp *I, SrArgs *a) {
  (void)a;
  SCOPE(I);
  const Static *st = static_of(I);
  int64_t n = st->n;
  SrDtype fdt = default_float(I);
  SrVal *i = arange_col(s, n - 1, default_int(I), 0), *j = arange_col(s, n, default_int(I), 1);
  SrVal *k = OP(ADD, i, INT(1));
  SrVal *kf = k ? KEEP(sr_lax_convert(I, k, fdt, 0, NULL)) : NULL;
  SrVal *den = C1("jax.numpy.sqrt", OP(MUL, kf, OP(ADD, kf, INT(1))));
  SrVal *inner[3] = {OP(EQ, j, k), OP(DIV, C1("jax.numpy.negative", kf), den), C1("jax.numpy.zeros_like", den)};
  SrVal *in = inner[0] && inner[1] && inner[2] ? sr_nn_call(s, "jax.numpy.where", 3, inner, 0, NULL, NULL) : NULL;
  SrVal *outer[3] = {OP(LE, j, i), OP(DIV, FL(1.0), den), in};
  SrVal *H = in && outer[0] && outer[1] ? sr_nn_call(s, "jax.numpy.where", 3, outer, 0, NULL, NULL) : NULL;
  if (!st->kind || !H) return DONE(H);
  /* jnp.full((1, n), 1.0 / jnp.sqrt(n), dtype=H.dtype) on top */
  int64_t sh[2] = {1, n};
  SrVal *fill = OP(DIV, FL(1.0), C1("jax.numpy.sqrt", INT(n)));
  SrVal *fv[2] = {KEEP(sr_int_tuple(sh, 2)), fill};
  SrVal *first = fill ? sr_nn_call(s, "jax.numpy.full", 2, fv, 1, (const char *[]){"dtype"},
                                   (SrVal *[]){dtype_val(s, ty(I, H)->dtype)})
                      : NULL;
  SrVal *parts[2] = {first, H};
  SrVal *pt = tuple_of(s, 2, parts);
  return DONE(pt ? kwcall(s, "jax.numpy.concatenate", 1, &pt, "axis", INT(0)) : NULL);
}

static SrVal *sp_helmert(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int64_t n;
  if (sr_args_parse(I, a, "helmert", "n, full=", p) < 0 || n_arg(I, p[0], &n) < 0) return NULL;
  if (n < 1) return sr_raise(I, "ValueError", "n must be a positive integer; got %lld.", (long long)n);
  return jit_static(I, "helmert", helmert_body, n, sr_nn_given(p[1]) && sr_val_truthy(p[1]), SR_F32);
}

static SrVal *hadamard_body(SrInterp *I, SrArgs *a) {
  (void)a;
  SCOPE(I);
  const Static *st = static_of(I);
  int64_t one[2] = {1, 1};
  SrVal *shv = KEEP(sr_int_tuple(one, 2));
  SrVal *H = kwcall(s, "jax.numpy.ones", 1, &shv, "dtype", dtype_val(s, st->dt));
  /* H = jnp.block([[H, H], [H, -H]]) lg2(n) times */
  for (int64_t m = 1; H && m < st->n; m *= 2) {
    SrVal *neg = C1("jax.numpy.negative", H);
    SrVal *top = list2(s, H, H), *bot = list2(s, H, neg);
    SrVal *blocks = list2(s, top, bot);
    H = blocks ? C1("jax.numpy.block", blocks) : NULL;
  }
  return DONE(H);
}

static SrVal *sp_hadamard(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int64_t n;
  if (sr_args_parse(I, a, "hadamard", "n, dtype=", p) < 0 || n_arg(I, p[0], &n) < 0) return NULL;
  if (n < 1 || (n & (n - 1)))
    return sr_raise(I, "ValueError", "n must be a positive power of 2; got %lld.", (long long)n);
  int dt = default_int(I);
  if (sr_nn_given(p[1]) && sr_dtype_arg(I, p[1], &dt, "hadamard") < 0) return NULL;
  return jit_static(I, "hadamard", hadamard_body, n, 0, (SrDtype)dt);
}

void sr_scipy_linalg18_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.scipy.linalg.toeplitz", sp_toeplitz, "toeplitz(c, r=None): the matrix of diagonals c (column) and r (row)"},
      {"jax.scipy.linalg.hankel", sp_hankel, "hankel(c, r=None): the matrix of anti-diagonals c (column) and r (row)"},
      {"jax.scipy.linalg.circulant", sp_circulant, "circulant(c): the matrix of cyclic shifts of the column c"},
      {"jax.scipy.linalg.leslie", sp_leslie, "leslie(f, s): f on the first row, s on the first sub-diagonal"},
      {"jax.scipy.linalg.companion", sp_companion, "companion(a): the companion matrix of polynomial coefficients a"},
      {"jax.scipy.linalg.fiedler", sp_fiedler, "fiedler(a): the symmetric matrix |a[i] - a[j]|"},
      {"jax.scipy.linalg.fiedler_companion", sp_fiedler_companion,
       "fiedler_companion(a): the pentadiagonal companion matrix of coefficients a"},
      {"jax.scipy.linalg.convolution_matrix", sp_convolution_matrix,
       "convolution_matrix(a, n, mode='full'): jit[name=convolution_matrix], the Toeplitz matrix of jnp.convolve"},
      {"jax.scipy.linalg.hilbert", sp_hilbert, "hilbert(n): jit[name=hilbert], 1 / (i + j + 1)"},
      {"jax.scipy.linalg.dft", sp_dft, "dft(n, scale=None, *, dtype=None): jit[name=dft], the n x n DFT matrix"},
      {"jax.scipy.linalg.invhilbert", sp_invhilbert,
       "invhilbert(n): jit[name=invhilbert], the inverse Hilbert matrix through comb"},
      {"jax.scipy.linalg.pascal", sp_pascal,
       "pascal(n, kind=None): jit[name=pascal], binomial coefficients (symmetric, lower or upper)"},
      {"jax.scipy.linalg.invpascal", sp_invpascal, "invpascal(n, kind=None): jit[name=invpascal], pascal's inverse"},
      {"jax.scipy.linalg.helmert", sp_helmert, "helmert(n, full=False): jit[name=helmert], the Helmert contrasts"},
      {"jax.scipy.linalg.hadamard", sp_hadamard,
       "hadamard(n, dtype=int): jit[name=hadamard], the Sylvester Hadamard matrix of order n (a power of 2)"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
