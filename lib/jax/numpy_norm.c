/* numpy_norm.c: jax.numpy.linalg.norm and vector_norm (numpy/linalg.py),
 * norm a jit named norm over what linalg.py writes: sqrt(sum(real(x *
 * conj(x)))) for the 2- and Frobenius norms, sums of abs and amax/amin
 * (amax with initial=0) for 1, -1, inf, -inf, sum(x != 0) for 0, and
 * sum(abs(x) ** ord) ** (1 / ord) otherwise; the matrix norms 2, -2 and
 * 'nuc' the amax (initial=0), amin or sum of jnp.linalg.svd(compute_uv=False)
 * over the axes moved last.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/ast.h"
#include "py/objects.h"
#include "text/print_val.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_

enum { ORD_NONE, ORD_NUM, ORD_FRO, ORD_NUC };

typedef struct Norm {
  int kind; /* ORD_* */
  double ord;
  int has_axis, naxes;
  int64_t axes[SR_MAX_RANK];
  int keepdims;
} Norm;

static SrVal *axes_val(SrNnScope *s, const int64_t *axes, int n) {
  if (n == 1) return sr_nn_int(s, axes[0]);
  return sr_nn_keep(s, sr_int_tuple(axes, n));
}

/* reductions.sum(x, axis=, keepdims=[, dtype=]) */
static SrVal *rsum(SrNnScope *s, SrVal *x, SrVal *axis, int keepdims, SrVal *dtype) {
  SrVal *v[1] = {x};
  const char *kw[3] = {"axis", "keepdims", "dtype"};
  SrVal *kwv[3] = {axis, sr_nn_keep(s, sr_bool(keepdims)), dtype};
  return sr_nn_call(s, "jax.numpy.sum", 1, v, 3, kw, kwv);
}

static SrVal *ramin(SrNnScope *s, SrVal *x, SrVal *axis, int keepdims) {
  SrVal *v[1] = {x};
  const char *kw[2] = {"axis", "keepdims"};
  SrVal *kwv[2] = {axis, sr_nn_keep(s, sr_bool(keepdims))};
  return sr_nn_call(s, "jax.numpy.min", 1, v, 2, kw, kwv);
}

/* reductions.amax(x, axis=, keepdims=, initial=0) */
static SrVal *ramax0(SrNnScope *s, SrVal *x, SrVal *axis, int keepdims) {
  return x ? sr_nn_reduce(s, SR_P_reduce_max, x, axis, NULL, sr_nn_int(s, 0), keepdims) : NULL;
}

/* ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis, keepdims)) */
static SrVal *two_norm(SrNnScope *s, SrVal *x, SrVal *axis, int keepdims) {
  /* conj and real bind nothing on a real x (lax.asarray) */
  const SrType *t = x ? sr_value_type(s->I, x) : NULL;
  int cplx = t && (t->dtype == SR_C64 || t->dtype == SR_C128);
  SrVal *re = cplx ? sr_nn_call1(s, "jax.numpy.real", sr_nn_op(s, SR_OP_MUL, x, sr_nn_call1(s, "jax.numpy.conj", x)))
                   : sr_nn_op(s, SR_OP_MUL, x, x);
  return sr_nn_call1(s, "jax.numpy.sqrt", rsum(s, re, axis, keepdims, NULL));
}

/* vector_norm(x, axis=, keepdims=, ord=) on an inexact x */
static SrVal *vector_norm(SrNnScope *s, SrVal *x, SrVal *axis, int keepdims, int kind, double ord) {
  SrInterp *I = s->I;
  if (kind == ORD_FRO || kind == ORD_NUC)
    return sr_raise(I, "ValueError", "Invalid order '%s' for vector norm.", kind == ORD_FRO ? "fro" : "nuc"), NULL;
  if (kind == ORD_NONE || ord == 2) return two_norm(s, x, axis, keepdims);
  if (isinf(ord) && ord > 0) return ramax0(s, sr_nn_call1(s, "jax.numpy.abs", x), axis, keepdims);
  if (isinf(ord)) return ramin(s, sr_nn_call1(s, "jax.numpy.abs", x), axis, keepdims);
  const SrType *t = sr_value_type(I, x);
  if (ord == 0) {
    SrDtype fd = t->dtype == SR_C64 ? SR_F32 : t->dtype == SR_C128 ? SR_F64 : t->dtype;
    SrVal *ne = sr_nn_op(s, SR_OP_NE, x, sr_nn_int(s, 0));
    return rsum(s, ne, axis, keepdims, sr_nn_keep(s, sr_dtype_val(NULL, fd)));
  }
  SrVal *ab = sr_nn_call1(s, "jax.numpy.abs", x);
  if (ord == 1) return rsum(s, ab, axis, keepdims, NULL);
  /* abs_x ** ord_arr, then power(out, 1 / ord_arr): numpy scalars of abs_x's dtype */
  const SrType *at = ab ? sr_value_type(I, ab) : NULL;
  if (!at) return NULL;
  SrVal *o = sr_nn_typed_scalar(s, ord, at->dtype);
  SrVal *oi = sr_nn_typed_scalar(s, 1.0 / ord, at->dtype);
  SrVal *out = rsum(s, sr_nn_op(s, SR_OP_POW, ab, o), axis, keepdims, NULL);
  return sr_nn_call2(s, "jax.numpy.power", out, oi);
}

static SrVal *norm_body(SrInterp *I, SrArgs *a) {
  const Norm *n = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *args[1] = {a->v[0]};
  if (sr_nn_promote_inexact(s, 1, args, "norm") < 0) return sr_nn_done(s, NULL);
  SrVal *x = args[0];
  const SrType *t = sr_value_type(I, x);
  int nd = t->ndim, keep = n->keepdims;
  int64_t axes[SR_MAX_RANK];
  int na = n->naxes;
  if (!n->has_axis) {
    if (n->kind == ORD_NONE) return sr_nn_done(s, two_norm(s, x, NULL, keep));
    na = nd;
    for (int i = 0; i < nd; i++) axes[i] = i;
  } else {
    for (int i = 0; i < na; i++)
      if (sr_api_axis(I, n->axes[i], nd, &axes[i]) < 0) return sr_nn_done(s, NULL);
  }
  if (na == 1)
    return sr_nn_done(s, vector_norm(s, x, axes_val(s, axes, 1), keep, n->kind, n->kind ? n->ord : 2));
  if (na != 2) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "(");
    for (int i = 0; i < na; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)axes[i]);
    sr_buf_puts(&b, na == 1 ? ",)" : ")");
    sr_raise(I, "ValueError",
             "Improper number of axes for norm: axis=%s. Pass one axis to compute a vector-norm, or two axes to "
             "compute a matrix-norm.",
             b.p);
    sr_buf_free(&b);
    return sr_nn_done(s, NULL);
  }
  int64_t row = axes[0], col = axes[1];
  SrVal *both = axes_val(s, axes, 2);
  if (n->kind == ORD_NONE || n->kind == ORD_FRO) return sr_nn_done(s, two_norm(s, x, both, keep));
  if (n->kind == ORD_NUM && (n->ord == 1 || n->ord == -1)) {
    if (!keep && col > row) col--;
    SrVal *sm = rsum(s, sr_nn_call1(s, "jax.numpy.abs", x), sr_nn_int(s, row), keep, NULL);
    SrVal *ca = sr_nn_int(s, col);
    return sr_nn_done(s, n->ord == 1 ? ramax0(s, sm, ca, keep) : ramin(s, sm, ca, keep));
  }
  if (n->kind == ORD_NUM && isinf(n->ord)) {
    if (!keep && row > col) row--;
    SrVal *sm = rsum(s, sr_nn_call1(s, "jax.numpy.abs", x), sr_nn_int(s, col), keep, NULL);
    SrVal *ra = sr_nn_int(s, row);
    return sr_nn_done(s, n->ord > 0 ? ramax0(s, sm, ra, keep) : ramin(s, sm, ra, keep));
  }
  if (n->kind == ORD_NUC || (n->kind == ORD_NUM && (n->ord == 2 || n->ord == -2))) {
    /* moveaxis(x, axis, (-2, -1)), svd(x, compute_uv=False), then amax
       (initial=0), amin or sum over the last axis; expand_dims(y, axis) */
    int64_t last[2] = {-2, -1};
    SrVal *mx = sr_nn_call(s, "jax.numpy.moveaxis", 3,
                           (SrVal *[]){x, both, sr_nn_keep(s, sr_int_tuple(last, 2))}, 0, NULL, NULL);
    SrVal *sv = sr_nn_call(s, "jax.numpy.linalg.svd", 1, &mx, 1, (const char *[]){"compute_uv"},
                           (SrVal *[]){sr_nn_keep(s, sr_bool(0))});
    SrVal *m1 = sr_nn_int(s, -1), *y;
    if (n->kind == ORD_NUC) y = rsum(s, sv, m1, 0, NULL);
    else if (n->ord > 0) y = ramax0(s, sv, m1, 0);
    else y = ramin(s, sv, m1, 0);
    if (keep) y = sr_nn_call2(s, "jax.numpy.expand_dims", y, both);
    return sr_nn_done(s, y);
  }
  SrBuf b = SR_BUF_INIT;
  if (n->ord == floor(n->ord) && fabs(n->ord) < 1e15) sr_buf_printf(&b, "%lld", (long long)n->ord);
  else sr_buf_printf(&b, "%.17g", n->ord);
  sr_raise(I, "ValueError", "Invalid order '%s' for matrix norm.", b.p);
  sr_buf_free(&b);
  return sr_nn_done(s, NULL);
}

/* the ord argument: None, a number, or 'fro' / 'f' / 'nuc' */
static int ord_arg(SrInterp *I, SrVal *v, Norm *n) {
  n->kind = ORD_NONE;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind == SR_V_STR) {
    if ((v->str.n == 3 && !memcmp(v->str.s, "fro", 3)) || (v->str.n == 1 && v->str.s[0] == 'f')) {
      n->kind = ORD_FRO;
      return 0;
    }
    if (v->str.n == 3 && !memcmp(v->str.s, "nuc", 3)) {
      n->kind = ORD_NUC;
      return 0;
    }
    const char *extra = v->str.n == 3 && !memcmp(v->str.s, "inf", 3)    ? "Use 'jax.numpy.inf' instead."
                        : v->str.n == 4 && !memcmp(v->str.s, "-inf", 4) ? "Use '-jax.numpy.inf' instead."
                                                                         : "";
    return sr_raise(I, "ValueError", "Invalid order '%.*s' for vector norm.%s", (int)v->str.n, v->str.s, extra), -1;
  }
  n->kind = ORD_NUM;
  return sr_as_float(I, v, "ord", &n->ord);
}

static SrVal *norm_call(SrInterp *I, SrVal *x, SrVal *ordv, SrVal *axis, SrVal *keepdims, int vector) {
  Norm *n = sr_xcalloc(1, sizeof *n);
  if (ord_arg(I, ordv, n) < 0) {
    free(n);
    return NULL;
  }
  n->keepdims = keepdims ? sr_truthy(I, keepdims) : 0;
  if (n->keepdims < 0 || (sr_nn_given(axis) && sr_ints_arg(I, axis, n->axes, &n->naxes, "axis") < 0)) {
    free(n);
    return NULL;
  }
  n->has_axis = sr_nn_given(axis);
  if (vector) {
    /* not a jit: vector_norm over all axes (axis=None) or the ones given */
    SCOPE(I);
    SrVal *xa = sr_nn_keep(s, sr_jnp_asarray(I, x, -1));
    SrVal *ax = n->has_axis ? axis : NULL;
    SrVal *r = xa ? vector_norm(s, xa, ax, n->keepdims, n->kind, n->kind ? n->ord : 2) : NULL;
    free(n);
    return sr_nn_done(s, r);
  }
  SrVal *b = sr_builtin_with("norm", norm_body, n, free);
  SrArgs ja = {1, &x, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, "norm", &ja);
  sr_unref(b);
  return r;
}

/* norm(x, ord=None, axis=None, keepdims=False) */
static SrVal *bi_norm(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "norm", "x, ord=, axis=, keepdims=", p) < 0) return NULL;
  return norm_call(I, p[0], p[1], p[2], p[3], 0);
}

/* vector_norm(x, /, *, axis=None, keepdims=False, ord=2) */
static SrVal *bi_vector_norm(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "vector_norm", "x, *, axis=, keepdims=, ord=", p) < 0) return NULL;
  return norm_call(I, p[0], p[3], p[1], p[2], 1);
}

void sr_jnp_norm_init(void) {
  sr_def("jax.numpy.linalg.norm", bi_norm,
         "norm(x, ord=None, axis=None, keepdims=False): vector (2, 1, inf, -inf, 0, p) and matrix ('fro', 1, -1, "
         "inf, -inf) norms (jit norm)");
  sr_def("jax.numpy.linalg.vector_norm", bi_vector_norm,
         "vector_norm(x, /, *, axis=None, keepdims=False, ord=2): the vector norm over axis (all by default)");
}
