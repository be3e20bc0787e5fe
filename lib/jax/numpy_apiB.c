/* numpy_apiB.c: jax.numpy's window functions (numpy/window_functions.py:
 * bartlett, blackman, hamming, hanning), kron and matrix_transpose
 * (numpy/lax_numpy.py), written with the same operations in the same
 * order as JAX's Python, so their jaxprs are JAX's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "lax/lax.h"
#include "py/ast.h"
#include "py/objects.h"

static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

/* a op b, consuming a (and b when owned) */
static SrVal *binop_take(SrInterp *I, int op, SrVal *a, SrVal *b) {
  SrVal *r = a && b ? sr_binop(I, op, a, b) : NULL;
  sr_unref(a);
  sr_unref(b);
  return r;
}

static SrVal *call_take(SrInterp *I, const char *fn, SrVal *x) {
  SrVal *r = x ? sr_call1(I, sr_lookup_qualname(fn), x) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *num(double v) { return sr_float(NULL, v); }
static SrVal *inum(int64_t v) { return sr_int(NULL, v); }

/* cos(k * np.pi * n / (M - 1)) */
static SrVal *cos_term(SrInterp *I, double k, SrVal *n, int64_t M) {
  SrVal *t = binop_take(I, SR_OP_MUL, num(k * M_PI), sr_ref(n));
  t = binop_take(I, SR_OP_DIV, t, inum(M - 1));
  return call_take(I, "jax.numpy.cos", t);
}

/* which: 0 bartlett, 1 blackman, 2 hamming, 3 hanning */
static SrVal *window(SrInterp *I, SrArgs *a, int which) {
  static const char *names[] = {"bartlett", "blackman", "hamming", "hanning"};
  SrVal *p[1];
  if (sr_args_parse(I, a, names[which], "M", p) < 0) return NULL;
  int64_t M;
  if (sr_as_int(I, p[0], "M", &M) < 0) return NULL;
  SrDtype dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  if (M <= 1) {
    SrVal *one = sr_int(NULL, 1);
    SrVal *r = sr_lax_full(I, &M, 1, one, (int)dt, NULL);
    sr_unref(one);
    return r;
  }
  SrVal *n = sr_lax_iota(I, dt, &M, 1, 0, NULL);
  if (!n) return NULL;
  SrVal *r = NULL;
  if (which == 0) {
    /* 1 - abs(2 * n + 1 - M) / (M - 1) */
    SrVal *t = binop_take(I, SR_OP_MUL, inum(2), sr_ref(n));
    t = binop_take(I, SR_OP_ADD, t, inum(1));
    t = binop_take(I, SR_OP_SUB, t, inum(M));
    t = call_take(I, "jax.numpy.abs", t);
    t = binop_take(I, SR_OP_DIV, t, inum(M - 1));
    r = binop_take(I, SR_OP_SUB, inum(1), t);
  } else if (which == 1) {
    /* 0.42 - 0.5 * cos(2 pi n / (M - 1)) + 0.08 * cos(4 pi n / (M - 1)) */
    SrVal *t = binop_take(I, SR_OP_MUL, num(0.5), cos_term(I, 2, n, M));
    t = binop_take(I, SR_OP_SUB, num(0.42), t);
    SrVal *u = binop_take(I, SR_OP_MUL, num(0.08), cos_term(I, 4, n, M));
    r = binop_take(I, SR_OP_ADD, t, u);
  } else if (which == 2) {
    r = binop_take(I, SR_OP_SUB, num(0.54), binop_take(I, SR_OP_MUL, num(0.46), cos_term(I, 2, n, M)));
  } else {
    r = binop_take(I, SR_OP_MUL, num(0.5), binop_take(I, SR_OP_SUB, inum(1), cos_term(I, 2, n, M)));
  }
  sr_unref(n);
  return r;
}

static SrVal *jnp_bartlett(SrInterp *I, SrArgs *a) { return window(I, a, 0); }
static SrVal *jnp_blackman(SrInterp *I, SrArgs *a) { return window(I, a, 1); }
static SrVal *jnp_hamming(SrInterp *I, SrArgs *a) { return window(I, a, 2); }
static SrVal *jnp_hanning(SrInterp *I, SrArgs *a) { return window(I, a, 3); }

/* kron's jitted body */
static SrVal *kron_body(SrInterp *I, SrArgs *a) {
  SrVal *ab[2] = {a->v[0], a->v[1]};
  if (sr_jnp_promote(I, 2, ab, "kron") < 0) return NULL; /* ab: new references */
  SrVal *r = NULL, *ar = NULL, *br = NULL, *m = NULL;
  const SrType *at = sr_value_type(I, ab[0]), *bt = sr_value_type(I, ab[1]);
  if (at->ndim != bt->ndim) {
    /* the lower-rank one gets leading axes (expand_dims(x, range(k))) */
    int lo = at->ndim < bt->ndim ? 0 : 1, k = abs(at->ndim - bt->ndim);
    int64_t lead[SR_MAX_RANK];
    for (int i = 0; i < k; i++) lead[i] = i;
    SrVal *e = sr_lax_expand_dims(I, ab[lo], lead, k);
    if (!e) goto done;
    sr_unref(ab[lo]);
    ab[lo] = e;
    at = sr_value_type(I, ab[0]);
    bt = sr_value_type(I, ab[1]);
  }
  int nd = at->ndim;
  if (2 * nd > SR_MAX_RANK) {
    r = sr_raise(I, "ValueError", "kron: rank %d is too large", nd);
    goto done;
  }
  int64_t da[SR_MAX_RANK], db[SR_MAX_RANK], shape[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) {
    da[i] = 1 + 2 * i;
    db[i] = 2 * i;
    shape[i] = at->dims[i].size * bt->dims[i].size;
  }
  ar = sr_lax_expand_dims(I, ab[0], da, nd);
  br = ar ? sr_lax_expand_dims(I, ab[1], db, nd) : NULL;
  m = br ? sr_lax_binary(I, SR_P_mul, ar, br) : NULL;
  r = m ? sr_lax_reshape(I, m, shape, nd, NULL) : NULL;
done:
  sr_unref(ab[0]);
  sr_unref(ab[1]);
  sr_unref(ar);
  sr_unref(br);
  sr_unref(m);
  return r;
}

static SrVal *jnp_kron(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "kron", "a, b", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL;
  SrVal *r = NULL;
  if (x && y) {
    SrVal *args[2] = {x, y};
    r = sr_api_jit(I, "kron", kron_body, NULL, 2, args);
  }
  sr_unref(x);
  sr_unref(y);
  return r;
}

static SrVal *jnp_matrix_transpose(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "matrix_transpose", "x", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  int nd = sr_value_type(I, x)->ndim;
  SrVal *r;
  if (nd < 2) {
    r = sr_raise(I, "ValueError", "x must be at least two-dimensional for matrix_transpose; got ndim=%d", nd);
  } else {
    int64_t perm[SR_MAX_RANK];
    for (int i = 0; i < nd; i++) perm[i] = i;
    perm[nd - 2] = nd - 1;
    perm[nd - 1] = nd - 2;
    r = sr_lax_transpose(I, x, perm, nd);
  }
  sr_unref(x);
  return r;
}

void sr_jnp_apiB_init(void) {
  sr_def("jax.numpy.bartlett", jnp_bartlett, "bartlett(M): the Bartlett (triangular) window of M points");
  sr_def("jax.numpy.blackman", jnp_blackman, "blackman(M): the Blackman window of M points");
  sr_def("jax.numpy.hamming", jnp_hamming, "hamming(M): the Hamming window of M points");
  sr_def("jax.numpy.hanning", jnp_hanning, "hanning(M): the Hann window of M points");
  sr_def("jax.numpy.kron", jnp_kron, "kron(a, b): the Kronecker product (a jitted expand_dims, mul, reshape)");
  sr_def("jax.numpy.matrix_transpose", jnp_matrix_transpose,
         "matrix_transpose(x, /): x with its last two axes swapped");
}
