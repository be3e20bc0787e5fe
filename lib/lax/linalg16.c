/* linalg16.c: the rules of lax/linalg.py's cholesky_p, lu_p, eigh_p and
 * lu_pivots_to_permutation_p: their type rules (linalg_shape_rule with
 * _cholesky_shape_rule, _lu_shape_rule / _lu_dtype_rule, _eigh_shape_rule
 * / _eigh_dtype_rule, _lu_pivots_to_permutation_shape_rule), their eval
 * rules through LAPACK as JAX's CPU lowerings call it (potrf with uplo L,
 * getrf with 0-based pivots and the permutation, syevd with mode V; a
 * failed factorization's results NaN, _replace_not_ok_with_nan), their
 * JVP rules (_cholesky_jvp_rule, _lu_jvp_rule, _eigh_jvp_rule) and batch
 * rules (the batch dim moved to the front).  The JVPs bind JAX's
 * equations, with dot_general for the matmuls and selects on iotas for
 * _tril/_triu; lu's a_dot[permutation] is a product with the one-hot
 * permutation matrix (JAX's a gather).  Registered by sr_lax_linalg16_init. */
#include "config.h"

#include "lax/lax.h"

#include <complex.h>
#undef I
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "lax/linalg.h"
#include "text/print_val.h"
#include "util/intern.h"

#define MAXI(a, b) ((a) > (b) ? (a) : (b))
#define MINI(a, b) ((a) < (b) ? (a) : (b))

/* (m, n), the matrix dims of x as Python prints a shape tuple */
static const char *mat_shape(char *buf, size_t n, const SrType *x) {
  snprintf(buf, n, "(%lld, %lld)", (long long)x->dims[x->ndim - 2].size, (long long)x->dims[x->ndim - 1].size);
  return buf;
}

/* ==== type rules ==== */

static int type_cholesky(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0 || sr_linalg_check_operand(cx, e, "cholesky") < 0) return -1;
  const SrType *x = e->in[0];
  char b[64];
  if (x->dims[x->ndim - 2].size != x->dims[x->ndim - 1].size)
    return sr_terr(cx, "ValueError", "The input to cholesky must be a square matrix. Got shape %s.",
                   mat_shape(b, sizeof b, x));
  out[0] = sr_linalg_result_type(x, x->dtype, x->dims[x->ndim - 2].size, x->dims[x->ndim - 1].size);
  return 0;
}

static int type_lu(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 3) < 0 || sr_linalg_check_operand(cx, e, "lu") < 0) return -1;
  const SrType *x = e->in[0];
  int64_t m = x->dims[x->ndim - 2].size, n = x->dims[x->ndim - 1].size;
  out[0] = sr_linalg_result_type(x, x->dtype, m, n);
  out[1] = sr_linalg_result_type(x, SR_I32, MINI(m, n), -1);
  out[2] = sr_linalg_result_type(x, SR_I32, m, -1);
  return 0;
}

static SrDtype real_of(SrDtype dt) { return dt == SR_C64 ? SR_F32 : dt == SR_C128 ? SR_F64 : dt; }

/* subset_by_index: None, or (lo, hi) into *lo, *hi; 1 if given */
static int subset_param(SrTypeCtx *cx, const SrRuleEqn *e, int64_t *lo, int64_t *hi) {
  SrVal *sub = sr_rparam(e, "subset_by_index");
  if (!sub || sub->kind == SR_V_NONE) return 0;
  int64_t ab[2];
  int got = 0;
  if (sr_rparam_ints(cx, e, "subset_by_index", 1, ab, 2, &got) < 0) return -1;
  if (got != 2) return sr_terr(cx, "ValueError", "subset_by_index must be a tuple of two ints");
  *lo = ab[0];
  *hi = ab[1];
  return 1;
}

static int type_eigh(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 2) < 0 || sr_linalg_check_operand(cx, e, "eigh") < 0) return -1;
  const SrType *x = e->in[0];
  char b[64];
  int64_t n = x->dims[x->ndim - 1].size, lo = 0, hi = n;
  if (x->dims[x->ndim - 2].size != n)
    return sr_terr(cx, "ValueError",
                   "Argument to symmetric eigendecomposition must have shape [..., n, n], got shape %s",
                   mat_shape(b, sizeof b, x));
  int s = subset_param(cx, e, &lo, &hi);
  if (s < 0) return -1;
  out[0] = sr_linalg_result_type(x, x->dtype, n, hi - lo);
  out[1] = sr_linalg_result_type(x, real_of(x->dtype), hi - lo, -1);
  return 0;
}

static int type_lu_pivots(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  const char *name = "lu_pivots_to_permutation";
  if (x->ndim < 1) return sr_terr(cx, "TypeError", "Input 0 to %s must have rank at least 1, but got shape=()", name);
  if (x->dtype != SR_I32)
    return sr_terr(cx, "TypeError",
                   "%s does not accept dtype %s at position 0. Accepted dtypes at position 0 are subtypes of int32.",
                   name, sr_dtype_name(x->dtype));
  int64_t size = 0;
  SrVal *ps = sr_rparam(e, "permutation_size");
  if (!ps || ps->kind != SR_V_INT) return sr_terr(cx, "TypeError", "%s needs an int permutation_size", name);
  size = ps->i;
  int64_t k = x->dims[x->ndim - 1].size;
  if (!(size >= k))
    return sr_terr(cx, "ValueError",
                   "Output permutation size %lld has to exceed the trailing dimension of the pivots. Got pivots size "
                   "%lld",
                   (long long)size, (long long)k);
  SrTypeBuilder tb;
  sr_type_builder(&tb, x);
  memset(&tb.dims[x->ndim - 1], 0, sizeof tb.dims[0]);
  tb.dims[x->ndim - 1].size = size;
  out[0] = sr_type_get(&tb);
  return 0;
}

static uint32_t nout_lu(int nin, const SrParam *ps, int np) {
  (void)nin, (void)ps, (void)np;
  return 3;
}

static uint32_t nout_eigh(int nin, const SrParam *ps, int np) {
  (void)nin, (void)ps, (void)np;
  return 2;
}

/* ==== LAPACK ==== */

#ifdef HAVE_LAPACK
void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info, size_t len);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t len);
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w, float *work,
             const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
             const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2);
#endif

typedef struct L16Call {
  int op; /* 0 cholesky, 1 lu, 2 eigh */
  SrDtype dt;
  int nd, lower;
  int64_t m, n;
} L16Call;

/* a block of nb row-major m x n matrices into / out of column-major w;
   N names the functions of element type T, P is LAPACK's prefix */
#define L16_IMPL(N, T, P)                                                                                              \
  static void to_cm_##N(const T *x, T *w, int m, int n) {                                                              \
    for (int i = 0; i < m; i++)                                                                                        \
      for (int j = 0; j < n; j++) w[i + (int64_t)j * m] = x[(int64_t)i * n + j];                                       \
  }                                                                                                                    \
  static void from_cm_##N(const T *w, T *x, int m, int n) {                                                            \
    for (int i = 0; i < m; i++)                                                                                        \
      for (int j = 0; j < n; j++) x[(int64_t)i * n + j] = w[i + (int64_t)j * m];                                       \
  }                                                                                                                    \
  static void chol_##N(const L16Call *c, const T *x, T *out, int64_t nb) {                                             \
    int n = (int)c->n, ld = MAXI(n, 1), info = 0;                                                                      \
    T *w = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(T));                                                          \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      to_cm_##N(x + b * n * n, w, n, n);                                                                               \
      if (n > 0) P##potrf_("L", &n, w, &ld, &info, 1);                                                                 \
      T *ob = out + b * n * n;                                                                                         \
      from_cm_##N(w, ob, n, n);                                                                                        \
      if (info != 0)                                                                                                   \
        for (int64_t i = 0; i < (int64_t)n * n; i++) ob[i] = (T)NAN;                                                   \
    }                                                                                                                  \
    free(w);                                                                                                           \
  }                                                                                                                    \
  static void lu_##N(const L16Call *c, const T *x, T *out, int32_t *piv, int32_t *perm, int64_t nb) {                 \
    int m = (int)c->m, n = (int)c->n, k = MINI(m, n), ld = MAXI(m, 1), info = 0;                                       \
    T *w = sr_xcalloc((size_t)m * (size_t)n + 1, sizeof(T));                                                          \
    int *ip = sr_xcalloc((size_t)k + 1, sizeof(int));                                                                  \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      to_cm_##N(x + b * m * n, w, m, n);                                                                               \
      info = 0;                                                                                                        \
      if (k > 0) P##getrf_(&m, &n, w, &ld, ip, &info);                                                                 \
      T *ob = out + b * m * n;                                                                                         \
      from_cm_##N(w, ob, m, n);                                                                                        \
      if (info < 0)                                                                                                    \
        for (int64_t i = 0; i < (int64_t)m * n; i++) ob[i] = (T)NAN;                                                   \
      int32_t *pb = piv + b * k, *qb = perm + b * m;                                                                   \
      for (int i = 0; i < k; i++) pb[i] = ip[i] - 1;                                                                   \
      for (int i = 0; i < m; i++) qb[i] = i;                                                                           \
      for (int i = 0; i < k; i++) {                                                                                    \
        int j = pb[i], t = qb[i];                                                                                      \
        if (j >= 0 && j < m) {                                                                                         \
          qb[i] = qb[j];                                                                                               \
          qb[j] = t;                                                                                                   \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
    free(ip);                                                                                                          \
    free(w);                                                                                                           \
  }

/* syevd of real symmetric matrices */
#define L16_SYEVD(T, P)                                                                                                \
  static void eigh_##T(const L16Call *c, const T *x, T *v, T *ev, int64_t nb) {                                        \
    int n = (int)c->n, ld = MAXI(n, 1), info = 0, lw = -1, liw = -1, iwq = 1;                                          \
    T wq = 1;                                                                                                          \
    const char *uplo = c->lower ? "L" : "U";                                                                           \
    T *w = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(T));                                                          \
    if (n > 0) P##syevd_("V", uplo, &n, w, &ld, ev, &wq, &lw, &iwq, &liw, &info, 1, 1);                                \
    int lwork = (int)MAXI(wq, 1), liwork = MAXI(iwq, 1);                                                               \
    T *work = sr_xcalloc((size_t)lwork, sizeof(T));                                                                   \
    int *iwork = sr_xcalloc((size_t)liwork, sizeof(int));                                                              \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      to_cm_##T(x + b * n * n, w, n, n);                                                                               \
      T *vb = v + b * n * n, *eb = ev + b * n;                                                                         \
      info = 0;                                                                                                        \
      if (n > 0) P##syevd_("V", uplo, &n, w, &ld, eb, work, &lwork, iwork, &liwork, &info, 1, 1);                      \
      from_cm_##T(w, vb, n, n);                                                                                        \
      if (info != 0) {                                                                                                 \
        for (int64_t i = 0; i < (int64_t)n * n; i++) vb[i] = (T)NAN;                                                   \
        for (int i = 0; i < n; i++) eb[i] = (T)NAN;                                                                    \
      }                                                                                                                \
    }                                                                                                                  \
    free(iwork);                                                                                                       \
    free(work);                                                                                                        \
    free(w);                                                                                                           \
  }

#ifdef HAVE_LAPACK
L16_IMPL(float, float, s)
L16_IMPL(double, double, d)
L16_SYEVD(float, s)
L16_SYEVD(double, d)
typedef float _Complex cfloat;
typedef double _Complex cdouble;
void cpotrf_(const char *uplo, const int *n, cfloat *a, const int *lda, int *info, size_t len);
void zpotrf_(const char *uplo, const int *n, cdouble *a, const int *lda, int *info, size_t len);
void cgetrf_(const int *m, const int *n, cfloat *a, const int *lda, int *ipiv, int *info);
void zgetrf_(const int *m, const int *n, cdouble *a, const int *lda, int *ipiv, int *info);
L16_IMPL(cfloat, cfloat, c)
L16_IMPL(cdouble, cdouble, z)

void cheevd_(const char *jobz, const char *uplo, const int *n, float _Complex *a, const int *lda, float *w,
             float _Complex *work, const int *lwork, float *rwork, const int *lrwork, int *iwork, const int *liwork,
             int *info, size_t l1, size_t l2);
void zheevd_(const char *jobz, const char *uplo, const int *n, double _Complex *a, const int *lda, double *w,
             double _Complex *work, const int *lwork, double *rwork, const int *lrwork, int *iwork,
             const int *liwork, int *info, size_t l1, size_t l2);

/* eigh of Hermitian matrices: heevd with mode V, as syevd above */
#define L16_HEEVD(R, C, P)                                                                                           \
  static void eighc_##R(const L16Call *c, const C *x, C *v, R *ev, int64_t nb) {                                     \
    int n = (int)c->n, ld = MAXI(n, 1), info = 0, lw = -1, lrw = -1, liw = -1, iwq = 1;                              \
    C wq = 1;                                                                                                        \
    R rwq = 1;                                                                                                       \
    const char *uplo = c->lower ? "L" : "U";                                                                         \
    C *w = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(C));                                                        \
    if (n > 0) P##heevd_("V", uplo, &n, w, &ld, ev, &wq, &lw, &rwq, &lrw, &iwq, &liw, &info, 1, 1);                  \
    int lwork = (int)MAXI(creal(wq), 1), lrwork = (int)MAXI(rwq, 1), liwork = MAXI(iwq, 1);                          \
    C *work = sr_xcalloc((size_t)lwork, sizeof(C));                                                                 \
    R *rwork = sr_xcalloc((size_t)lrwork, sizeof(R));                                                               \
    int *iwork = sr_xcalloc((size_t)liwork, sizeof(int));                                                            \
    for (int64_t b = 0; b < nb; b++) {                                                                               \
      const C *xb = x + b * n * n;                                                                                   \
      for (int i = 0; i < n; i++)                                                                                    \
        for (int j = 0; j < n; j++) w[i + (int64_t)j * n] = xb[(int64_t)i * n + j];                                  \
      C *vb = v + b * n * n;                                                                                         \
      R *eb = ev + b * n;                                                                                            \
      info = 0;                                                                                                      \
      if (n > 0) P##heevd_("V", uplo, &n, w, &ld, eb, work, &lwork, rwork, &lrwork, iwork, &liwork, &info, 1, 1);    \
      for (int i = 0; i < n; i++)                                                                                    \
        for (int j = 0; j < n; j++) vb[(int64_t)i * n + j] = info ? (C)NAN : w[i + (int64_t)j * n];                  \
      for (int i = 0; info && i < n; i++) eb[i] = (R)NAN;                                                            \
    }                                                                                                                \
    free(iwork);                                                                                                     \
    free(rwork);                                                                                                     \
    free(work);                                                                                                      \
    free(w);                                                                                                         \
  }
L16_HEEVD(float, float _Complex, c)
L16_HEEVD(double, double _Complex, z)
#undef L16_HEEVD
#endif

static int64_t nmat(const int64_t *sh, int nb) {
  int64_t r = 1;
  for (int i = 0; i < nb; i++) r *= sh[i];
  return r;
}

static int l16_fn(SrShardIO *io) {
  L16Call *c = io->arg;
  int64_t nb = nmat(io->in_shape[0], c->nd - 2);
#ifdef HAVE_LAPACK
  void *x = io->in[0]->data;
  int f = c->dt == SR_F32;
  if (c->op == 0) {
    if (c->dt == SR_C64) chol_cfloat(c, x, io->out[0]->data, nb);
    else if (c->dt == SR_C128) chol_cdouble(c, x, io->out[0]->data, nb);
    else if (f) chol_float(c, x, io->out[0]->data, nb);
    else chol_double(c, x, io->out[0]->data, nb);
  } else if (c->op == 1) {
    if (c->dt == SR_C64) lu_cfloat(c, x, io->out[0]->data, io->out[1]->data, io->out[2]->data, nb);
    else if (c->dt == SR_C128) lu_cdouble(c, x, io->out[0]->data, io->out[1]->data, io->out[2]->data, nb);
    else if (f) lu_float(c, x, io->out[0]->data, io->out[1]->data, io->out[2]->data, nb);
    else lu_double(c, x, io->out[0]->data, io->out[1]->data, io->out[2]->data, nb);
  } else if (c->dt == SR_C64) {
    eighc_float(c, x, io->out[0]->data, io->out[1]->data, nb);
  } else if (c->dt == SR_C128) {
    eighc_double(c, x, io->out[0]->data, io->out[1]->data, nb);
  } else {
    if (f) eigh_float(c, x, io->out[0]->data, io->out[1]->data, nb);
    else eigh_double(c, x, io->out[0]->data, io->out[1]->data, nb);
  }
#else
  (void)nb;
#endif
  return 0;
}

/* pivots (..., k) to permutations (..., size): the swaps applied in order */
static int piv_fn(SrShardIO *io) {
  L16Call *c = io->arg;
  int64_t nb = nmat(io->in_shape[0], c->nd - 2), k = c->m, size = c->n;
  const int32_t *p = io->in[0]->data;
  int32_t *q = io->out[0]->data;
  for (int64_t b = 0; b < nb; b++) {
    int32_t *qb = q + b * size;
    const int32_t *pb = p + b * k;
    for (int64_t i = 0; i < size; i++) qb[i] = (int32_t)i;
    for (int64_t i = 0; i < k; i++) {
      int32_t j = pb[i], t = qb[i];
      if (j >= 0 && j < size) { /* JAX's gather clamps; in range for getrf's pivots */
        qb[i] = qb[j];
        qb[j] = t;
      }
    }
  }
  return 0;
}

static int ev_l16(SrEvalCtx *cx, const SrEvalEqn *e, int op) {
  static const char *const names[4] = {"cholesky", "lu", "eigh", "lu_pivots_to_permutation"};
  L16Call c;
  memset(&c, 0, sizeof c);
  const SrType *xt = e->in[0]->type;
  c.op = op;
  c.nd = op == 3 ? xt->ndim + 1 : xt->ndim;
  c.dt = xt->dtype;
  if (op == 3) {
    c.m = xt->dims[xt->ndim - 1].size;
    c.n = e->out_type[0]->dims[xt->ndim - 1].size;
  } else {
#ifndef HAVE_LAPACK
    return sr_ev_err(cx, "NotImplementedError", "%s needs LAPACK, which this shardrepl was built without", names[op]);
#endif
    if (c.dt != SR_F32 && c.dt != SR_F64 && c.dt != SR_C64 && c.dt != SR_C128)
      return sr_ev_err(cx, "NotImplementedError", "%s of %s is not implemented (float32 and float64 only)", names[op],
                       sr_dtype_name(c.dt));
    c.m = xt->dims[xt->ndim - 2].size;
    c.n = xt->dims[xt->ndim - 1].size;
    if (c.m > 1 << 20 || c.n > 1 << 20)
      return sr_ev_err(cx, "NotImplementedError", "%s of a matrix this large", names[op]);
  }
  if (op == 2) {
    SrVal *lo = sr_ev_param(e, "lower");
    c.lower = !lo || lo->kind != SR_V_BOOL || lo->i;
    SrVal *sub = sr_ev_param(e, "subset_by_index");
    if (sub && sub->kind != SR_V_NONE) {
      int ok = sub->kind == SR_V_TUPLE && sub->seq.n == 2 && sub->seq.items[0]->kind == SR_V_INT &&
               sub->seq.items[1]->kind == SR_V_INT && sub->seq.items[0]->i == 0 && sub->seq.items[1]->i == c.n;
      if (!ok) return sr_ev_err(cx, "NotImplementedError", "subset_by_index not supported on CPU and GPU");
    }
    SrVal *alg = sr_ev_param(e, "algorithm");
    if (alg && alg->kind != SR_V_NONE) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, alg);
      int qdwh = strstr(sr_buf_str(&b), "QDWH") != NULL, jac = strstr(sr_buf_str(&b), "JACOBI") != NULL;
      sr_buf_free(&b);
      if (qdwh) return sr_ev_err(cx, "NotImplementedError", "QDWH implementation is only supported on TPU");
      if (jac) return sr_ev_err(cx, "NotImplementedError", "Jacobi implementation is not supported on CPU");
    }
  }
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l[3];
  SrArray *in = NULL, *outs[3] = {0};
  int rc = 0;
  for (uint32_t i = 0; i < e->nout; i++) l[i] = sr_ev_out_layout(cx, e, i, m);
  int nb = c.nd - 2;
  if (!(in = sr_redistribute(cx, e->in[0], m, sr_linalg_whole_matrix(e->in[0]->layout, l[0], nb + 2)))) rc = -1;
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    outs[i] = sr_array_new(e->out_type[i], sr_linalg_whole_matrix(l[i], l[i], nb + 2), m);
  if (rc == 0) rc = sr_ev_map(cx, 1, &in, (int)e->nout, outs, 0, op == 3 ? piv_fn : l16_fn, &c);
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    if (!(e->out[i] = sr_redistribute_typed(cx, outs[i], m, l[i], e->out_type[i]))) rc = -1;
  sr_array_unref(in);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(outs[i]);
  return rc;
}

static int ev_cholesky(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l16(cx, e, 0); }
static int ev_lu(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l16(cx, e, 1); }
static int ev_eigh(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l16(cx, e, 2); }
static int ev_lu_pivots(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l16(cx, e, 3); }

/* ==== JVP rules ==== */

static SrVal *tsolve_c(SrAd *ad, SrVal *a, SrVal *b, int left, int lower, int trans, int conj, int unit) {
  SrVal *in[2] = {a, b};
  if (!a || !b) return NULL;
  return sr_ad_bindv(ad, SR_P_triangular_solve, 2, in, "left_side", sr_bool(left), "lower", sr_bool(lower),
                     "transpose_a", sr_bool(trans), "conjugate_a", sr_bool(conj), "unit_diagonal", sr_bool(unit),
                     NULL);
}

static SrVal *tsolve(SrAd *ad, SrVal *a, SrVal *b, int left, int lower, int trans, int unit) {
  return tsolve_c(ad, a, b, left, lower, trans, 0, unit);
}

/* symmetrize(x): (x + _H(x)) / 2 */
static SrVal *symmetrize(SrAd *ad, SrVal *x) {
  SrVal *s = x ? sr_ad_binop(ad, SR_P_add, x, sr_linalg_mT(ad, x)) : NULL;
  return s ? sr_ad_div(ad, s, sr_ad_scalar_like(ad, s, 2.0)) : NULL;
}

/* _cholesky_jvp_rule: L = _tril(cholesky(x)); tmp = L^-H sigma_dot from
   the right (transpose_a and conjugate_a); L_dot = L phi(L^-1 tmp), phi(X) = _tril(X) / (1 + eye) */
static int jvp_cholesky(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrVal *raw = sr_ad_bind(ad, SR_P_cholesky, 1, x, (int)e->nparams, e->params);
  SrVal *L = raw ? sr_linalg_tri_mask(ad, raw, SR_P_le) : NULL;
  if (!L) return -1;
  y[0] = L;
  ty[0] = NULL;
  if (!t[0]) return 0;
  SrVal *tmp = tsolve_c(ad, L, t[0], 0, 1, 1, 1, 0);
  SrVal *X = tsolve(ad, L, tmp, 1, 1, 0, 0);
  SrVal *lx = sr_linalg_tri_mask(ad, X, SR_P_le);
  SrVal *eye = lx ? sr_linalg_eye_like(ad, sr_ad_type(ad, lx)) : NULL;
  SrVal *den = eye ? sr_ad_binop(ad, SR_P_add, sr_ad_scalar_like(ad, eye, 1.0), eye) : NULL;
  SrVal *phi = den ? sr_ad_div(ad, lx, den) : NULL;
  ty[0] = phi ? sr_linalg_mm(ad, L, phi, 0, 0) : NULL;
  return ty[0] ? 0 : -1;
}

/* _eigh_jvp_rule: v, w = eigh(symmetrize(a)); Fmat = (eye + w[..., None,
   :] - w[..., None]) ** -1 - eye; vdag_adot_v = v^T a_dot v; dv = v
   (Fmat * vdag_adot_v); dw its diagonal */
static int jvp_eigh(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  const SrType *xt = sr_ad_type(ad, x[0]);
  int nd = xt->ndim;
  int64_t n = xt->dims[nd - 1].size;
  SrVal *sub = sr_eqn_param(e, sr_intern_cstr("subset_by_index"));
  if (sub && sub->kind != SR_V_NONE &&
      !(sub->kind == SR_V_TUPLE && sub->seq.n == 2 && sub->seq.items[0]->i == 0 && sub->seq.items[1]->i == n))
    return sr_raise(ad->I, "NotImplementedError", "Derivatives not defined for partial eigen decomposition."), -1;
  SrVal *sx = symmetrize(ad, x[0]);
  SrVal *r = sx ? sr_ad_bind(ad, SR_P_eigh, 1, &sx, (int)e->nparams, e->params) : NULL;
  if (!r) return -1;
  SrVal *v = r->seq.items[0], *w = r->seq.items[1];
  y[0] = v;
  y[1] = w;
  ty[0] = ty[1] = NULL;
  if (!t[0]) return 0;
  const SrType *vt = sr_ad_type(ad, v);
  SrVal *eye = sr_linalg_eye_like(ad, vt);
  int64_t dj[SR_MAX_RANK], di[SR_MAX_RANK];
  for (int i = 0; i < nd - 2; i++) dj[i] = di[i] = i;
  dj[nd - 2] = nd - 1; /* w[..., None, :] */
  di[nd - 2] = nd - 2; /* w[..., :, None] */
  SrVal *wj = eye ? sr_ad_broadcast_in_dim(ad, w, vt, dj, nd - 1, 1) : NULL;
  SrVal *wi = wj ? sr_ad_broadcast_in_dim(ad, w, vt, di, nd - 1, 1) : NULL;
  SrVal *d = wi ? sr_ad_binop(ad, SR_P_sub, sr_ad_binop(ad, SR_P_add, eye, wj), wi) : NULL;
  SrVal *inv = d ? sr_ad_bindv(ad, SR_P_integer_pow, 1, &d, "y", sr_int(NULL, -1), NULL) : NULL;
  SrVal *F = inv ? sr_ad_binop(ad, SR_P_sub, inv, eye) : NULL;
  SrVal *vav = F ? sr_linalg_mm(ad, sr_linalg_mm(ad, v, t[0], 1, 0), v, 0, 0) : NULL;
  ty[0] = vav ? sr_linalg_mm(ad, v, sr_ad_mul(ad, F, vav), 0, 0) : NULL;
  int64_t ax = nd - 1;
  ty[1] = ty[0] ? sr_ad_reduce_sum(ad, sr_ad_mul(ad, vav, eye), &ax, 1, NULL) : NULL;
  return ty[1] ? 0 : -1;
}

/* an identity-like (rows x cols) mask of x's batch (col - row == off and
   row >= from) in x's dtype: the pieces of _lu_jvp_inner's l and u */
static SrVal *eye_block(SrAd *ad, const SrType *like, int64_t rows, int64_t cols, int64_t from) {
  const SrBinder *b = SR_AD_BINDER(ad);
  int64_t kk[2] = {rows, cols};
  SrVal *i0 = sr_ad_keep(ad, sr_op_iota(b, SR_I32, kk, 2, 0, NULL));
  SrVal *i1 = i0 ? sr_ad_keep(ad, sr_op_iota(b, SR_I32, kk, 2, 1, NULL)) : NULL;
  SrVal *eq = i1 ? sr_ad_binop(ad, SR_P_eq, i0, i1) : NULL;
  if (eq && from > 0) {
    SrVal *f = sr_ad_full(ad, sr_ad_type(ad, i0), (double)from);
    eq = f ? sr_ad_binop(ad, SR_P_and, eq, sr_ad_binop(ad, SR_P_ge, i0, f)) : NULL;
  }
  SrVal *c = eq ? sr_ad_convert(ad, eq, like->dtype, 0) : NULL;
  SrTypeBuilder tb;
  sr_type_builder(&tb, like);
  tb.dims[like->ndim - 2].size = rows;
  tb.dims[like->ndim - 1].size = cols;
  int64_t last[2] = {like->ndim - 2, like->ndim - 1};
  return c ? sr_ad_broadcast_in_dim(ad, c, sr_type_get(&tb), last, 2, 1) : NULL;
}

/* x[..., r0:r1, c0:c1] */
static SrVal *block(SrAd *ad, SrVal *x, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  if (!x) return NULL;
  const SrType *t = sr_ad_type(ad, x);
  int nd = t->ndim;
  int64_t st[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) lim[i] = t->dims[i].size;
  st[nd - 2] = r0, lim[nd - 2] = r1, st[nd - 1] = c0, lim[nd - 1] = c1;
  return sr_ad_keep(ad, sr_op_slice(SR_AD_BINDER(ad), x, st, lim, NULL));
}

/* x padded with zeros to rows x cols at the end of its matrix dims */
static SrVal *pad_to(SrAd *ad, SrVal *x, int64_t rows, int64_t cols) {
  if (!x) return NULL;
  const SrType *t = sr_ad_type(ad, x);
  int nd = t->ndim;
  int64_t cfg[3 * SR_MAX_RANK] = {0};
  cfg[3 * (nd - 2) + 1] = rows - t->dims[nd - 2].size;
  cfg[3 * (nd - 1) + 1] = cols - t->dims[nd - 1].size;
  if (!cfg[3 * (nd - 2) + 1] && !cfg[3 * (nd - 1) + 1]) return x;
  SrVal *z = sr_ad_scalar(ad, t->dtype, 0, 0.0);
  return z ? sr_ad_keep(ad, sr_op_pad(SR_AD_BINDER(ad), x, z, cfg, nd)) : NULL;
}

/* _lu_jvp_rule over the batch: l = pad(_tril(lu[..., :k], -1)) + eye(m),
   u = pad(_triu(lu[..., :k, :])) + the eye of the last n - k; la = l^-1
   a_dot[permutation] (unit diagonal), lau = la u^-1; lu_dot = l
   _tril(lau, -1) + _triu(lau) u.  Pivots and permutation: no tangent. */
static int jvp_lu(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrVal *r = sr_ad_bind(ad, SR_P_lu, 1, x, (int)e->nparams, e->params);
  if (!r) return -1;
  for (int i = 0; i < 3; i++) y[i] = r->seq.items[i], ty[i] = NULL;
  if (!t[0]) return 0;
  const SrType *at = sr_ad_type(ad, x[0]);
  int nd = at->ndim;
  int64_t m = at->dims[nd - 2].size, n = at->dims[nd - 1].size, k = MINI(m, n);
  SrVal *lu = y[0], *perm = y[2];
  SrVal *l = pad_to(ad, sr_linalg_tri_mask(ad, block(ad, lu, 0, m, 0, k), SR_P_lt), m, m);
  SrVal *el = l ? eye_block(ad, at, m, m, 0) : NULL;
  l = el ? sr_ad_binop(ad, SR_P_add, l, el) : NULL;
  SrVal *u = l ? pad_to(ad, sr_linalg_tri_mask(ad, block(ad, lu, 0, k, 0, n), SR_P_ge), n, n) : NULL;
  SrVal *eu = u ? eye_block(ad, at, n, n, k) : NULL;
  u = eu ? sr_ad_binop(ad, SR_P_add, u, eu) : NULL;
  /* a_dot[permutation]: P a_dot with P[i, j] = (permutation[i] == j) */
  SrTypeBuilder tb;
  sr_type_builder(&tb, at);
  tb.dims[nd - 1].size = m;
  tb.dtype = SR_I32;
  tb.weak = 0;
  const SrType *pt = sr_type_get(&tb);
  int64_t pd[SR_MAX_RANK];
  for (int i = 0; i < nd - 1; i++) pd[i] = i;
  SrVal *pb = u ? sr_ad_broadcast_in_dim(ad, perm, pt, pd, nd - 1, 1) : NULL;
  int64_t kk[2] = {m, m}, last[2] = {nd - 2, nd - 1};
  SrVal *io = pb ? sr_ad_keep(ad, sr_op_iota(SR_AD_BINDER(ad), SR_I32, kk, 2, 1, NULL)) : NULL;
  SrVal *iob = io ? sr_ad_broadcast_in_dim(ad, io, pt, last, 2, 1) : NULL;
  SrVal *P = iob ? sr_ad_convert(ad, sr_ad_binop(ad, SR_P_eq, pb, iob), at->dtype, 0) : NULL;
  SrVal *pa = P ? sr_linalg_mm(ad, P, t[0], 0, 0) : NULL;
  SrVal *la = tsolve(ad, l, pa, 1, 1, 0, 1);
  SrVal *lau = tsolve(ad, u, la, 0, 0, 0, 0);
  SrVal *ld = lau ? sr_linalg_mm(ad, l, sr_linalg_tri_mask(ad, lau, SR_P_lt), 0, 0) : NULL;
  SrVal *ud = ld ? sr_linalg_mm(ad, sr_linalg_tri_mask(ad, lau, SR_P_ge), u, 0, 0) : NULL;
  ty[0] = ud ? sr_ad_binop(ad, SR_P_add, ld, ud) : NULL;
  return ty[0] ? 0 : -1;
}

/* ==== batching: lu_pivots_to_permutation's pivots batched at the front ==== */

static int batch_pivots(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *xf = sr_batch_moveaxis(b, x[0], bd[0], 0);
  return xf ? sr_batch_bind_same(b, e, &xf, 0, y, ybd) : -1;
}

/* ==== registration ==== */

void sr_lax_linalg16_init(void) {
  sr_set_type_rule(SR_P_cholesky, type_cholesky);
  sr_set_eval_rule(SR_P_cholesky, ev_cholesky);
  sr_ad_set_jvp(SR_P_cholesky, jvp_cholesky);
  sr_prims[SR_P_cholesky].batch = sr_linalg_batch_front;
  sr_prims[SR_P_lu].nout = nout_lu;
  sr_set_type_rule(SR_P_lu, type_lu);
  sr_set_eval_rule(SR_P_lu, ev_lu);
  sr_ad_set_jvp(SR_P_lu, jvp_lu);
  sr_prims[SR_P_lu].batch = sr_linalg_batch_front;
  sr_prims[SR_P_eigh].nout = nout_eigh;
  sr_set_type_rule(SR_P_eigh, type_eigh);
  sr_set_eval_rule(SR_P_eigh, ev_eigh);
  sr_ad_set_jvp(SR_P_eigh, jvp_eigh);
  sr_prims[SR_P_eigh].batch = sr_linalg_batch_front;
  sr_set_type_rule(SR_P_lu_pivots_to_permutation, type_lu_pivots);
  sr_set_eval_rule(SR_P_lu_pivots_to_permutation, ev_lu_pivots);
  sr_prims[SR_P_lu_pivots_to_permutation].batch = batch_pivots;
}
