/* linalg.c: the rules of the linear-algebra primitives qr, svd and
 * triangular_solve (lax/linalg.py's qr_p, svd_p and triangular_solve_p,
 * made by linalg_primitive): their type rules (linalg_shape_rule,
 * naryop_dtype_rule, linalg_sharding_rule: the leading batch dimensions
 * may be sharded, the matrix dimensions may not), their eval rules through
 * LAPACK as JAX's CPU lowering calls it (geqrf then orgqr, _qr_lowering;
 * gesdd, _svd_cpu_gpu_lowering; BLAS's trsm), their JVP rules
 * (qr_jvp_rule, _svd_jvp_rule, triangular_solve's defjvp2 and transpose)
 * and batch rules (expand_dims_batcher: the batch dimension moved to the
 * front).  The JVPs bind JAX's equations but not JAX's text: dot_general
 * for the matmuls (JAX's jnp.matmul jits), a select or a product with the
 * identity for _tril and _extract_diagonal (JAX's gathers).  Registered by
 * sr_lax_linalg_init.
 *
 * LAPACK comes with OpenBLAS (Debian's libopenblas has its Fortran
 * symbols; configure defines HAVE_LAPACK): without it qr's and svd's eval
 * rules raise NotImplementedError.  float32 and float64 only; complex
 * operands type check but do not evaluate. */
#include "config.h"

#include "lax/lax.h"

#include <complex.h>
#undef I
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ad/batch.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "util/intern.h"
#include "lax/linalg.h"

#include <cblas.h>
#undef I /* complex.h's, which cblas.h may bring */

/* ==== shared helpers ==== */

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

static int param_flag(const SrEqn *e, const char *key, int dflt) {
  SrVal *v = param(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? (int)v->i : dflt;
}

static int rparam_flag(const SrRuleEqn *e, const char *key, int dflt) {
  SrVal *v = sr_rparam(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? (int)v->i : dflt;
}

static int ev_flag(const SrEvalEqn *e, const char *key, int dflt) {
  SrVal *v = sr_ev_param(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? (int)v->i : dflt;
}

/* linalg_shape_rule's and naryop_dtype_rule's checks of the one operand
   (rank at least 2; floating or complex), then linalg_sharding_rule's:
   the matrix dimensions unsharded. */
static int check_operand(SrTypeCtx *cx, const SrRuleEqn *e, const char *name) {
  const SrType *x = e->in[0];
  if (x->ndim < 2) {
    SrBuf b = SR_BUF_INIT;
    sr_shape_str(&b, x);
    sr_terr(cx, "TypeError", "Input 0 to %s must have rank at least 2, but got shape=%s", name, sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (x->dtype == SR_FLOAT0) return sr_float0_error(cx, name, 0);
  if (!sr_dtype_in(x->dtype, SR_DC_FLOAT | SR_DC_COMPLEX)) {
    SrBuf b = SR_BUF_INIT;
    sr_dtype_classes_str(&b, SR_DC_FLOAT | SR_DC_COMPLEX);
    sr_terr(cx, "TypeError",
            "%s does not accept dtype %s at position 0. Accepted dtypes at position 0 are subtypes of %s.", name,
            sr_dtype_name(x->dtype), sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  if (s.mode == SR_MODE_EXPLICIT && (x->dims[x->ndim - 2].nax || x->dims[x->ndim - 1].nax)) {
    SrBuf b = SR_BUF_INIT;
    sr_type_spec_repr(&b, x);
    sr_terr(cx, "ShardingTypeError", "Input 0 to %s must be unsharded on non-batch dimensions, but got %s.", name,
            sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

/* The operand's batch dimensions (and their sharding) followed by the
   unsharded matrix dimensions rows x cols (cols < 0: a vector of rows). */
static const SrType *result_type(const SrType *x, SrDtype dt, int64_t rows, int64_t cols) {
  SrTypeBuilder b;
  sr_type_builder(&b, x);
  b.dtype = dt;
  b.ndim = x->ndim - 2 + (cols < 0 ? 1 : 2);
  SrDim *d = &b.dims[x->ndim - 2];
  memset(d, 0, sizeof *d);
  d->size = rows;
  if (cols >= 0) {
    memset(d + 1, 0, sizeof *d);
    d[1].size = cols;
  }
  return sr_type_get(&b);
}

static SrDtype real_dtype(SrDtype dt) {
  return dt == SR_C64 ? SR_F32 : dt == SR_C128 ? SR_F64 : dt;
}

/* ==== qr ==== */

/* _qr_shape_rule, _qr_dtype_rule: q is (m, k), r (k, n), k = m for full
   matrices and min(m, n) otherwise; with pivoting p is int32 (n,). */
static int type_qr(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  int piv = rparam_flag(e, "pivoting", 0), full = rparam_flag(e, "full_matrices", 1);
  if (sr_rule_arity(cx, e, 1, piv ? 3 : 2) < 0 || check_operand(cx, e, "qr") < 0) return -1;
  const SrType *x = e->in[0];
  int64_t m = x->dims[x->ndim - 2].size, n = x->dims[x->ndim - 1].size;
  int64_t k = full ? m : m < n ? m : n;
  out[0] = result_type(x, x->dtype, m, k);
  out[1] = result_type(x, x->dtype, k, n);
  if (piv) out[2] = result_type(x, SR_I32, n, -1);
  return 0;
}

static uint32_t nout_qr(int nin, const SrParam *ps, int np) {
  (void)nin;
  for (int i = 0; i < np; i++)
    if (ps[i].key == sr_intern_cstr("pivoting") && ps[i].val && ps[i].val->kind == SR_V_BOOL && ps[i].val->i) return 3;
  return 2;
}

/* ==== svd ==== */

/* _svd_shape_rule, _svd_dtype_rule: s (rank,) of the real dtype, then
   with compute_uv u (m, m or rank) and vt (n or rank, n). */
static int type_svd(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  int uv = rparam_flag(e, "compute_uv", 1), full = rparam_flag(e, "full_matrices", 1);
  if (sr_rule_arity(cx, e, 1, uv ? 3 : 1) < 0) return -1;
  const SrType *x = e->in[0];
  if (check_operand(cx, e, "svd") < 0) return -1;
  int64_t m = x->dims[x->ndim - 2].size, n = x->dims[x->ndim - 1].size;
  int64_t rank = m < n ? m : n;
  SrVal *sub = sr_rparam(e, "subset_by_index");
  if (sub && sub->kind != SR_V_NONE) {
    int64_t ab[2];
    int got = 0;
    if (sr_rparam_ints(cx, e, "subset_by_index", 1, ab, 2, &got) < 0) return -1;
    if (got != 2) return sr_terr(cx, "ValueError", "subset_by_index must be a tuple of two ints");
    if (full && !(ab[0] == 0 && ab[1] == rank))
      return sr_terr(cx, "ValueError", "full_matrices and subset_by_index cannot both be set");
    if (ab[1] - ab[0] < rank) rank = ab[1] - ab[0];
  }
  out[0] = result_type(x, real_dtype(x->dtype), rank, -1);
  if (uv) {
    out[1] = result_type(x, x->dtype, m, full ? m : rank);
    out[2] = result_type(x, x->dtype, full ? n : rank, n);
  }
  return 0;
}

static uint32_t nout_svd(int nin, const SrParam *ps, int np) {
  (void)nin;
  for (int i = 0; i < np; i++)
    if (ps[i].key == sr_intern_cstr("compute_uv") && ps[i].val && ps[i].val->kind == SR_V_BOOL && !ps[i].val->i)
      return 1;
  return 3;
}

/* ==== LAPACK ==== */

#ifdef HAVE_LAPACK
/* LAPACK's Fortran symbols, column-major; the trailing size_t is
   gfortran's hidden length of a CHARACTER argument. */
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work, const int *lwork,
             int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
             int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda, const float *tau, float *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);
void sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s, float *u,
             const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork, int *iwork, int *info,
             size_t jobz_len);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s, double *u,
             const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *iwork, int *info,
             size_t jobz_len);
#endif

typedef struct LinArg {
  SrDtype dt;
  int full, uv;
  int64_t m, n;
} LinArg;

#define MAXI(a, b) ((a) > (b) ? (a) : (b))
#define MINI(a, b) ((a) < (b) ? (a) : (b))

/* One (batch of) QR / SVD with LAPACK's routines P##geqrf, ORGQR (orgqr,
   or ungqr for complex) and P##gesdd_w: a row-major block of `nb` m x n
   matrices of T (its real type R) in, row-major results out, each as
   JAX's lowering computes it.  CPLX: complex T, whose gesdd takes a real
   work array. */
#define LINALG_IMPL(N, T, R, P, ORGQR, CPLX)                                                                                              \
  static void qr_##N(const LinArg *a, const T *x, T *q, T *r, int64_t nb) {                                          \
    int m = (int)a->m, n = (int)a->n, k = MINI(m, n), qc = a->full ? m : k, rr = a->full ? m : k;                    \
    int ld = MAXI(m, 1), qcols = m < n ? m : a->full ? m : n, info = 0, lw = -1;                                     \
    T *w = sr_xcalloc((size_t)ld * (size_t)MAXI(n, m) + 1, sizeof(T)), *tau = sr_xcalloc((size_t)k + 1, sizeof(T)); \
    T wq = 0, wq2 = 0;                                                                                                 \
    if (k > 0) {                                                                                                       \
      P##geqrf_(&m, &n, w, &ld, tau, &wq, &lw, &info);                                                                 \
      ORGQR(&m, &qcols, &k, w, &ld, tau, &wq2, &lw, &info);                                                        \
    }                                                                                                                  \
    int lwork = (int)MAXI(MAXI(creal(wq), creal(wq2)), 1);                                                                           \
    T *work = sr_xcalloc((size_t)lwork, sizeof(T));                                                                   \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      const T *xb = x + b * (int64_t)m * n;                                                                            \
      T *qb = q + b * (int64_t)m * qc, *rb = r + b * (int64_t)rr * n;                                                 \
      if (k == 0) {                                                                                                    \
        for (int i = 0; i < m; i++)                                                                                    \
          for (int j = 0; j < qc; j++) qb[(int64_t)i * qc + j] = i == j;                                               \
        memset(rb, 0, (size_t)rr * (size_t)n * sizeof(T));                                                             \
        continue;                                                                                                      \
      }                                                                                                                \
      memset(w, 0, (size_t)ld * (size_t)MAXI(n, m) * sizeof(T));                                                       \
      for (int i = 0; i < m; i++)                                                                                      \
        for (int j = 0; j < n; j++) w[i + (int64_t)j * ld] = xb[(int64_t)i * n + j];                                   \
      P##geqrf_(&m, &n, w, &ld, tau, work, &lwork, &info);                                                             \
      for (int i = 0; i < rr; i++) /* r: the upper triangle of the factored block */                                 \
        for (int j = 0; j < n; j++) rb[(int64_t)i * n + j] = i <= j && i < m ? w[i + (int64_t)j * ld] : 0;             \
      /* q: the Householder product of the reflectors, m x qcols */                                                    \
      for (int j = n; j < qcols; j++)                                                                                  \
        for (int i = 0; i < m; i++) w[i + (int64_t)j * ld] = 0;                                                        \
      ORGQR(&m, &qcols, &k, w, &ld, tau, work, &lwork, &info);                                                     \
      for (int i = 0; i < m; i++)                                                                                      \
        for (int j = 0; j < qc; j++) qb[(int64_t)i * qc + j] = w[i + (int64_t)j * ld];                                 \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(w);                                                                                                           \
    free(tau);                                                                                                         \
  }                                                                                                                    \
                                                                                                                       \
  static void svd_##N(const LinArg *a, const T *x, R *s, T *u, T *vt, int64_t nb) {                                  \
    int m = (int)a->m, n = (int)a->n, k = MINI(m, n), ld = MAXI(m, 1), info = 0, lw = -1;                            \
    int uc = a->full ? m : k, vr = a->full ? n : k, ldu = MAXI(m, 1), ldvt = MAXI(vr, 1);                           \
    char job = !a->uv ? 'N' : a->full ? 'A' : 'S';                                                                     \
    T *w = sr_xcalloc((size_t)ld * (size_t)MAXI(n, 1), sizeof(T));                                                    \
    T *uw = sr_xcalloc((size_t)ldu * (size_t)MAXI(uc, 1), sizeof(T));                                                 \
    T *vw = sr_xcalloc((size_t)ldvt * (size_t)MAXI(n, 1), sizeof(T));                                                 \
    int *iw = sr_xcalloc((size_t)(8 * MAXI(k, 1)), sizeof(int));                                                       \
    /* complex gesdd's real work array: mn * max(5 mn + 7, 2 max(m, n) + 2 mn + 1) */                               \
    R *rw = sr_xcalloc(CPLX ? (size_t)MAXI(k, 1) * (size_t)MAXI(5 * k + 7, 2 * MAXI(m, n) + 2 * k + 1) : 1, sizeof(R));                                                       \
    T wq = 1;                                                                                                          \
    if (k > 0) P##gesdd_w(&job, &m, &n, w, &ld, s, uw, &ldu, vw, &ldvt, &wq, &lw, rw, iw, &info);                        \
    int lwork = (int)MAXI(creal(wq), 1);                                                                                      \
    T *work = sr_xcalloc((size_t)lwork, sizeof(T));                                                                   \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      const T *xb = x + b * (int64_t)m * n;                                                                            \
      R *sb = s + b * k;                                                                                               \
      T *ub = u ? u + b * (int64_t)m * uc : NULL, *vb = vt ? vt + b * (int64_t)vr * n : NULL;        \
      if (k == 0) { /* _empty_svd: identities for the full matrices */                                                \
        if (ub)                                                                                                        \
          for (int i = 0; i < m; i++)                                                                                  \
            for (int j = 0; j < uc; j++) ub[(int64_t)i * uc + j] = i == j;                                             \
        if (vb)                                                                                                        \
          for (int i = 0; i < vr; i++)                                                                                 \
            for (int j = 0; j < n; j++) vb[(int64_t)i * n + j] = i == j;                                               \
        continue;                                                                                                      \
      }                                                                                                                \
      for (int i = 0; i < m; i++)                                                                                      \
        for (int j = 0; j < n; j++) w[i + (int64_t)j * ld] = xb[(int64_t)i * n + j];                                   \
      /* gesdd may not return on an inf or a NaN: NaNs, as for no convergence */                                     \
      int finite = 1;                                                                                                  \
      for (int64_t i = 0; i < (int64_t)m * n && finite; i++) finite = isfinite(creal(xb[i])) && isfinite(cimag(xb[i]));                                 \
      if (finite) P##gesdd_w(&job, &m, &n, w, &ld, sb, uw, &ldu, vw, &ldvt, work, &lwork, rw, iw, &info);                \
      else info = 1;                                                                                                   \
      if (info != 0) { /* no convergence: NaNs, as JAX's lowering */                                                 \
        for (int i = 0; i < k; i++) sb[i] = (R)NAN;                                                                    \
        if (ub)                                                                                                        \
          for (int64_t i = 0; i < (int64_t)m * uc; i++) ub[i] = (T)NAN;                                                \
        if (vb)                                                                                                        \
          for (int64_t i = 0; i < (int64_t)vr * n; i++) vb[i] = (T)NAN;                                                \
        continue;                                                                                                      \
      }                                                                                                                \
      if (ub)                                                                                                          \
        for (int i = 0; i < m; i++)                                                                                    \
          for (int j = 0; j < uc; j++) ub[(int64_t)i * uc + j] = uw[i + (int64_t)j * ldu];                             \
      if (vb)                                                                                                          \
        for (int i = 0; i < vr; i++)                                                                                   \
          for (int j = 0; j < n; j++) vb[(int64_t)i * n + j] = vw[i + (int64_t)j * ldvt];                              \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(rw);                                                                                                          \
    free(iw);                                                                                                          \
    free(vw);                                                                                                          \
    free(uw);                                                                                                          \
    free(w);                                                                                                           \
  }

#ifdef HAVE_LAPACK
void cgeqrf_(const int *m, const int *n, float _Complex *a, const int *lda, float _Complex *tau, float _Complex *work,
             const int *lwork, int *info);
void zgeqrf_(const int *m, const int *n, double _Complex *a, const int *lda, double _Complex *tau,
             double _Complex *work, const int *lwork, int *info);
void cungqr_(const int *m, const int *n, const int *k, float _Complex *a, const int *lda, const float _Complex *tau,
             float _Complex *work, const int *lwork, int *info);
void zungqr_(const int *m, const int *n, const int *k, double _Complex *a, const int *lda, const double _Complex *tau,
             double _Complex *work, const int *lwork, int *info);
void cgesdd_(const char *jobz, const int *m, const int *n, float _Complex *a, const int *lda, float *s,
             float _Complex *u, const int *ldu, float _Complex *vt, const int *ldvt, float _Complex *work,
             const int *lwork, float *rwork, int *iwork, int *info, size_t l1);
void zgesdd_(const char *jobz, const int *m, const int *n, double _Complex *a, const int *lda, double *s,
             double _Complex *u, const int *ldu, double _Complex *vt, const int *ldvt, double _Complex *work,
             const int *lwork, double *rwork, int *iwork, int *info, size_t l1);

/* gesdd with one signature: the real ones have no rwork */
#define GESDD_W(P, R, T, ...)                                                                                        \
  static void P##gesdd_w(const char *jobz, const int *m, const int *n, T *a, const int *lda, R *s, T *u,            \
                         const int *ldu, T *vt, const int *ldvt, T *work, const int *lwork, R *rwork, int *iwork,    \
                         int *info) {                                                                                \
    (void)rwork;                                                                                                     \
    P##gesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, __VA_ARGS__ iwork, info, 1);                    \
  }
GESDD_W(s, float, float)
GESDD_W(d, double, double)
GESDD_W(c, float, float _Complex, rwork,)
GESDD_W(z, double, double _Complex, rwork,)
#undef GESDD_W

LINALG_IMPL(float, float, float, s, sorgqr_, 0)
LINALG_IMPL(double, double, double, d, dorgqr_, 0)
LINALG_IMPL(cfloat, float _Complex, float, c, cungqr_, 1)
LINALG_IMPL(cdouble, double _Complex, double, z, zungqr_, 1)
#endif

/* The number of matrices in a block of shape sh (rank nd). */
static int64_t batch_count(const int64_t *sh, int nd) {
  int64_t nb = 1;
  for (int i = 0; i < nd - 2; i++) nb *= sh[i];
  return nb;
}

typedef struct LinCall {
  LinArg a;
  int op; /* 0 qr, 1 svd */
  int nd;
} LinCall;

static int lin_fn(SrShardIO *io) {
  LinCall *c = io->arg;
  int64_t nb = batch_count(io->in_shape[0], c->nd);
#ifdef HAVE_LAPACK
  void *x = io->in[0]->data;
  if (c->op == 0) {
    if (c->a.dt == SR_C64) qr_cfloat(&c->a, x, io->out[0]->data, io->out[1]->data, nb);
    else if (c->a.dt == SR_C128) qr_cdouble(&c->a, x, io->out[0]->data, io->out[1]->data, nb);
    else if (c->a.dt == SR_F32) qr_float(&c->a, x, io->out[0]->data, io->out[1]->data, nb);
    else qr_double(&c->a, x, io->out[0]->data, io->out[1]->data, nb);
  } else {
    void *u = c->a.uv ? io->out[1]->data : NULL, *vt = c->a.uv ? io->out[2]->data : NULL;
    if (c->a.dt == SR_C64) svd_cfloat(&c->a, x, io->out[0]->data, u, vt, nb);
    else if (c->a.dt == SR_C128) svd_cdouble(&c->a, x, io->out[0]->data, u, vt, nb);
    else if (c->a.dt == SR_F32) svd_float(&c->a, x, io->out[0]->data, u, vt, nb);
    else svd_double(&c->a, x, io->out[0]->data, u, vt, nb);
  }
#else
  (void)nb;
#endif
  return 0;
}

/* a layout like l's on the batch dimensions, whole on the matrix ones */
static const SrType *whole_matrix(const SrType *base, const SrType *l, int nd) {
  SrTypeBuilder b;
  sr_type_builder(&b, base);
  int any = 0;
  for (int i = 0; i < b.ndim; i++) {
    SrDim *d = &b.dims[i];
    if (i < nd - 2 && l && i < l->ndim - 0) {
      d->nax = l->dims[i].nax;
      memcpy(d->ax, l->dims[i].ax, SR_MAX_DIM_AXES);
    } else {
      d->nax = 0;
    }
    any |= d->nax != 0;
  }
  if (any && l) b.mesh = l->mesh;
  return sr_type_get(&b);
}

static int ev_linalg(SrEvalCtx *cx, const SrEvalEqn *e, int op) {
  const char *name = op ? "svd" : "qr";
  LinCall c;
  memset(&c, 0, sizeof c);
  const SrType *xt = e->in[0]->type;
  c.op = op;
  c.nd = xt->ndim;
  c.a.dt = xt->dtype;
  c.a.m = xt->dims[xt->ndim - 2].size;
  c.a.n = xt->dims[xt->ndim - 1].size;
  c.a.full = ev_flag(e, "full_matrices", 1);
  c.a.uv = ev_flag(e, "compute_uv", 1);
#ifndef HAVE_LAPACK
  return sr_ev_err(cx, "NotImplementedError", "%s needs LAPACK, which this shardrepl was built without", name);
#endif
  if (c.a.dt != SR_F32 && c.a.dt != SR_F64 && c.a.dt != SR_C64 && c.a.dt != SR_C128)
    return sr_ev_err(cx, "NotImplementedError", "%s of %s is not implemented (float32 and float64 only)", name,
                     sr_dtype_name(c.a.dt));
  if (op == 0 && ev_flag(e, "pivoting", 0))
    return sr_ev_err(cx, "NotImplementedError", "qr with pivoting=True is not implemented");
  if (op == 1) {
    SrVal *sub = sr_ev_param(e, "subset_by_index");
    if (sub && sub->kind != SR_V_NONE)
      return sr_ev_err(cx, "NotImplementedError", "svd's subset_by_index is only implemented on TPU");
  }
  if (c.a.m > 1 << 30 || c.a.n > 1 << 30) return sr_ev_err(cx, "NotImplementedError", "%s of a matrix this large", name);
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l[3];
  SrArray *in = NULL, *outs[3] = {0};
  int rc = 0;
  for (uint32_t i = 0; i < e->nout; i++) l[i] = sr_ev_out_layout(cx, e, i, m);
  if (!(in = sr_redistribute(cx, e->in[0], m, whole_matrix(e->in[0]->layout, l[1 % e->nout], c.nd)))) rc = -1;
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    outs[i] = sr_array_new(e->out_type[i], whole_matrix(l[i], l[i], l[i]->ndim + (op == 1 && i == 0)), m);
  if (rc == 0) rc = sr_ev_map(cx, 1, &in, (int)e->nout, outs, 0, lin_fn, &c);
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    if (!(e->out[i] = sr_redistribute_typed(cx, outs[i], m, l[i], e->out_type[i]))) rc = -1;
  sr_array_unref(in);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(outs[i]);
  return rc;
}

static int ev_qr(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_linalg(cx, e, 0); }
static int ev_svd(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_linalg(cx, e, 1); }

/* ==== triangular_solve ==== */

/* _triangular_solve_shape_rule and the dtype / sharding rules: a is
   (..., m, m), b (..., m, n) (left_side) or (..., n, m); the result is
   b's type.  Both unsharded on their matrix dimensions. */
static int type_triangular_solve(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *a = e->in[0], *b = e->in[1];
  const char *name = "triangular_solve";
  for (int i = 0; i < 2; i++) {
    const SrType *t = e->in[i];
    if (t->ndim < 2) {
      SrBuf sb = SR_BUF_INIT;
      sr_shape_str(&sb, t);
      sr_terr(cx, "TypeError", "Input %d to %s must have rank at least 2, but got shape=%s", i, name, sr_buf_str(&sb));
      sr_buf_free(&sb);
      return -1;
    }
  }
  if (a->ndim != b->ndim)
    return sr_terr(cx, "TypeError",
                   "All inputs to %s must have the same number of batch dimensions, but got [%d, %d] batch dimensions "
                   "for the inputs.",
                   name, a->ndim - 2, b->ndim - 2);
  int64_t am = a->dims[a->ndim - 2].size, an = a->dims[a->ndim - 1].size;
  int left = rparam_flag(e, "left_side", 0);
  SrBuf sa = SR_BUF_INIT, sb = SR_BUF_INIT;
  int rc = 0;
  if (am != an || an != b->dims[b->ndim - (left ? 2 : 1)].size) {
    sr_buf_printf(&sa, "(%lld, %lld)", (long long)am, (long long)an);
    sr_buf_printf(&sb, "(%lld, %lld)", (long long)b->dims[b->ndim - 2].size, (long long)b->dims[b->ndim - 1].size);
    if (am != an)
      rc = sr_terr(cx, "ValueError", "The first input to triangular_solve must be a square matrix. Got shape %s.",
                   sr_buf_str(&sa));
    else
      rc = sr_terr(cx, "ValueError", "Incompatible shapes for arguments to triangular_solve: %s and %s.",
                   sr_buf_str(&sa), sr_buf_str(&sb));
  }
  sr_buf_free(&sa);
  sr_buf_free(&sb);
  if (rc < 0) return -1;
  for (int i = 0; i < 2; i++)
    if (!sr_dtype_in(e->in[i]->dtype, SR_DC_FLOAT | SR_DC_COMPLEX)) {
      SrBuf c = SR_BUF_INIT;
      sr_dtype_classes_str(&c, SR_DC_FLOAT | SR_DC_COMPLEX);
      sr_terr(cx, "TypeError",
              "%s does not accept dtype %s at position %d. Accepted dtypes at position %d are subtypes of %s.", name,
              sr_dtype_name(e->in[i]->dtype), i, i, sr_buf_str(&c));
      sr_buf_free(&c);
      return -1;
    }
  if (sr_check_same_dtypes(cx, name, e->in, 2) < 0) return -1;
  SrStd st;
  if (sr_std_begin(cx, e, &st) < 0) return -1;
  if (st.mode == SR_MODE_EXPLICIT)
    for (int i = 0; i < 2; i++) {
      const SrType *t = e->in[i];
      if (t->dims[t->ndim - 2].nax || t->dims[t->ndim - 1].nax) {
        SrBuf sp = SR_BUF_INIT;
        sr_type_spec_repr(&sp, t);
        sr_terr(cx, "ShardingTypeError", "Input %d to %s must be unsharded on non-batch dimensions, but got %s.", i,
                name, sr_buf_str(&sp));
        sr_buf_free(&sp);
        return -1;
      }
    }
  out[0] = b;
  return 0;
}

typedef struct TriArg {
  SrDtype dt;
  int left, lower, trans, unit, nd, conj;
  int64_t m, n; /* b's matrix dims */
} TriArg;

static int tri_fn(SrShardIO *io) {
  TriArg *t = io->arg;
  int64_t nb = batch_count(io->in_shape[1], t->nd), k = t->left ? t->m : t->n;
  size_t es = sr_elem_size(t->dt), bs = (size_t)(t->m * t->n) * es;
  memcpy(io->out[0]->data, io->in[1]->data, (size_t)nb * bs);
  for (int64_t i = 0; i < nb && t->m > 0 && t->n > 0; i++) {
    const char *a = (const char *)io->in[0]->data + (size_t)(i * k * k) * es;
    char *b = (char *)io->out[0]->data + (size_t)i * bs;
    enum CBLAS_SIDE side = t->left ? CblasLeft : CblasRight;
    enum CBLAS_UPLO uplo = t->lower ? CblasLower : CblasUpper;
    int cplx = t->dt == SR_C64 || t->dt == SR_C128;
    enum CBLAS_TRANSPOSE tr = t->trans ? (t->conj && cplx ? CblasConjTrans : CblasTrans) : CblasNoTrans;
    enum CBLAS_DIAG dg = t->unit ? CblasUnit : CblasNonUnit;
    if (cplx) {
      /* conjugate_a without transpose_a: the solve with conj(a) */
      char *ca = NULL;
      if (t->conj && !t->trans) {
        ca = sr_xmalloc((size_t)(k * k) * es + 1);
        memcpy(ca, a, (size_t)(k * k) * es);
        for (int64_t q = 0; q < k * k; q++) {
          if (t->dt == SR_C64) ((float *)ca)[2 * q + 1] = -((float *)ca)[2 * q + 1];
          else ((double *)ca)[2 * q + 1] = -((double *)ca)[2 * q + 1];
        }
        a = ca;
      }
      const double one64[2] = {1, 0};
      const float one32[2] = {1, 0};
      if (t->dt == SR_C64)
        cblas_ctrsm(CblasRowMajor, side, uplo, tr, dg, (int)t->m, (int)t->n, one32, a, (int)k, b, (int)t->n);
      else
        cblas_ztrsm(CblasRowMajor, side, uplo, tr, dg, (int)t->m, (int)t->n, one64, a, (int)k, b, (int)t->n);
      free(ca);
    } else if (t->dt == SR_F32)
      cblas_strsm(CblasRowMajor, side, uplo, tr, dg, (int)t->m, (int)t->n, 1.0f, (const float *)a, (int)k, (float *)b,
                  (int)t->n);
    else
      cblas_dtrsm(CblasRowMajor, side, uplo, tr, dg, (int)t->m, (int)t->n, 1.0, (const double *)a, (int)k, (double *)b,
                  (int)t->n);
  }
  return 0;
}

static int ev_triangular_solve(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *bt = e->in[1]->type;
  TriArg t = {bt->dtype, ev_flag(e, "left_side", 0), ev_flag(e, "lower", 0), ev_flag(e, "transpose_a", 0),
              ev_flag(e, "unit_diagonal", 0), bt->ndim, ev_flag(e, "conjugate_a", 0), bt->dims[bt->ndim - 2].size,
              bt->dims[bt->ndim - 1].size};
  if (t.dt != SR_F32 && t.dt != SR_F64 && t.dt != SR_C64 && t.dt != SR_C128)
    return sr_ev_err(cx, "NotImplementedError", "triangular_solve of %s is not implemented (float32 and float64 only)",
                     sr_dtype_name(t.dt));
  if (t.m > 1 << 30 || t.n > 1 << 30) return sr_ev_err(cx, "NotImplementedError", "triangular_solve this large");
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *in[2] = {NULL, NULL}, *out = NULL;
  int rc = 0;
  for (int i = 0; i < 2 && rc == 0; i++)
    if (!(in[i] = sr_redistribute(cx, e->in[i], m, whole_matrix(e->in[i]->layout, l, t.nd)))) rc = -1;
  if (rc == 0) out = sr_array_new(e->out_type[0], whole_matrix(l, l, t.nd), m);
  if (rc == 0) rc = sr_ev_map(cx, 2, in, 1, &out, 0, tri_fn, &t);
  if (rc == 0 && !(e->out[0] = sr_redistribute_typed(cx, out, m, l, e->out_type[0]))) rc = -1;
  sr_array_unref(in[0]);
  sr_array_unref(in[1]);
  sr_array_unref(out);
  return rc;
}

/* triangular_solve(a, b, **params of e) in the rule's binder */
static SrVal *tri_solve(SrAd *ad, const SrEqn *e, SrVal *a, SrVal *b, int flip_transpose) {
  SrVal *in[2] = {a, b};
  if (!a || !b) return NULL;
  int tr = param_flag(e, "transpose_a", 0);
  return sr_ad_bindv(ad, SR_P_triangular_solve, 2, in, "left_side", sr_bool(param_flag(e, "left_side", 0)), "lower",
                     sr_bool(param_flag(e, "lower", 0)), "transpose_a", sr_bool(flip_transpose ? !tr : tr),
                     "conjugate_a", sr_bool(param_flag(e, "conjugate_a", 0)), "unit_diagonal",
                     sr_bool(param_flag(e, "unit_diagonal", 0)), NULL);
}

/* x where the mask over its last two dims (col ? row by cmp) holds, else 0 */
static SrVal *tri_mask(SrAd *ad, SrVal *x, int cmp) {
  if (!x) return NULL;
  const SrType *t = sr_ad_type(ad, x);
  int nd = t->ndim;
  int64_t kk[2] = {t->dims[nd - 2].size, t->dims[nd - 1].size}, last[2] = {nd - 2, nd - 1};
  const SrBinder *b = SR_AD_BINDER(ad);
  SrVal *i0 = sr_ad_keep(ad, sr_op_iota(b, SR_I32, kk, 2, 0, NULL));
  SrVal *i1 = sr_ad_keep(ad, sr_op_iota(b, SR_I32, kk, 2, 1, NULL));
  SrVal *mask = i1 ? sr_ad_binop(ad, cmp, i1, i0) : NULL;
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  tb.dtype = SR_BOOL;
  tb.weak = 0;
  SrVal *bm = mask ? sr_ad_broadcast_in_dim(ad, mask, sr_type_get(&tb), last, 2, 1) : NULL;
  SrVal *z = bm ? sr_ad_full_zeros(ad, t) : NULL;
  SrVal *cases[2] = {z, x};
  return z ? sr_ad_select_n(ad, bm, 2, cases) : NULL;
}

static SrVal *mm(SrAd *ad, SrVal *x, SrVal *y, int tx, int ty);
static SrVal *mT(SrAd *ad, SrVal *x);

/* ad.defjvp2: in b, triangular_solve(a, g_b); in a,
   _triangular_solve_jvp_rule_a: g_a's triangle, negated (transposed for
   transpose_a), times the answer and solved, in the cheaper order. */
static int jvp_triangular_solve(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  y[0] = tri_solve(ad, e, x[0], x[1], 0);
  if (!y[0]) return -1;
  SrVal *tb = t[1] ? tri_solve(ad, e, x[0], t[1], 0) : NULL, *ta = NULL;
  if (t[1] && !tb) return -1;
  if (t[0]) {
    int lower = param_flag(e, "lower", 0), unit = param_flag(e, "unit_diagonal", 0);
    int left = param_flag(e, "left_side", 0);
    SrVal *g = tri_mask(ad, t[0], lower ? (unit ? SR_P_lt : SR_P_le) : (unit ? SR_P_gt : SR_P_ge));
    g = g ? sr_ad_neg(ad, g) : NULL;
    if (param_flag(e, "transpose_a", 0)) g = mT(ad, g);
    const SrType *bt = sr_ad_type(ad, x[1]);
    int64_t m = bt->dims[bt->ndim - 2].size, n = bt->dims[bt->ndim - 1].size;
    if (left) ta = m > n ? tri_solve(ad, e, x[0], mm(ad, g, y[0], 0, 0), 0) : mm(ad, tri_solve(ad, e, x[0], g, 0), y[0], 0, 0);
    else ta = m < n ? tri_solve(ad, e, x[0], mm(ad, y[0], g, 0, 0), 0) : mm(ad, y[0], tri_solve(ad, e, x[0], g, 0), 0, 0);
    if (!ta) return -1;
  }
  ty[0] = ta && tb ? sr_ad_add_tangents(ad, ta, tb) : ta ? ta : tb;
  return (ta || tb) && !ty[0] ? -1 : 0;
}

/* _triangular_solve_transpose_rule: linear in b, whose cotangent is the
   solve with transpose_a flipped. */
static int tr_triangular_solve(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **ctx) {
  if (!x[0]) return sr_raise(ad->I, "AssertionError", "triangular_solve is not linear in its first operand"), -1;
  ctx[0] = NULL;
  ctx[1] = ct[0] ? tri_solve(ad, e, x[0], ct[0], 1) : NULL;
  return ct[0] && !ctx[1] ? -1 : 0;
}

/* _triangular_solve_batching_rule, both operands' batch dims at the front
   (an unmapped one broadcast there). */
static int batch_triangular_solve(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *xs[2];
  for (int i = 0; i < 2; i++)
    if (!(xs[i] = sr_batch_at_front(b, x[i], bd[i], b->size))) return -1;
  return sr_batch_bind_same(b, e, xs, 0, y, ybd);
}

/* ==== qr's JVP ==== */

/* x @ y over the last two dims with the leading ones batched */
static SrVal *mm(SrAd *ad, SrVal *x, SrVal *y, int tx, int ty) {
  if (!x || !y) return NULL;
  int nd = sr_ad_type(ad, x)->ndim, nb = nd - 2;
  int64_t bat[SR_MAX_RANK];
  for (int i = 0; i < nb; i++) bat[i] = i;
  int64_t lc = tx ? nd - 2 : nd - 1, rc = ty ? nd - 1 : nd - 2;
  SrVal *r = sr_ad_keep(ad, sr_op_dot_general(SR_AD_BINDER(ad), x, y, &lc, 1, &rc, 1, bat, nb, bat, nb, NULL, -1, NULL));
  if (!r) return NULL;
  if (tx && ty) return r;
  /* dot_general puts lhs's free dim before rhs's: already (.., i, j) */
  return r;
}

static SrVal *mT(SrAd *ad, SrVal *x) {
  if (!x) return NULL;
  int nd = sr_ad_type(ad, x)->ndim;
  int64_t perm[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) perm[i] = i;
  perm[nd - 2] = nd - 1;
  perm[nd - 1] = nd - 2;
  return sr_ad_transpose_dims(ad, x, perm, nd);
}

/* _tril(x, -1): x where col < row, else 0 (a select on iotas) */
static SrVal *strict_lower(SrAd *ad, SrVal *x) { return tri_mask(ad, x, SR_P_lt); }

/* _thin_qr_jvp(q, r, dx) for m >= n: dx_rinv = dx r^-1 (a right-side
   triangular solve), qt_dx_rinv = q^T dx_rinv, do = its strictly lower
   part minus that transposed; dq = q (do - qt_dx_rinv) + dx_rinv, dr =
   (qt_dx_rinv - do) r.  (Real operands: the complex correction is 0.) */
static int thin_qr_jvp(SrAd *ad, const SrEqn *e, SrVal *q, SrVal *r, SrVal *dx, SrVal **dq, SrVal **dr) {
  SrVal *in[2] = {r, dx};
  SrVal *dx_rinv = sr_ad_bindv(ad, SR_P_triangular_solve, 2, in, "left_side", sr_bool(0), "lower", sr_bool(0),
                               "transpose_a", sr_bool(0), "conjugate_a", sr_bool(0), "unit_diagonal", sr_bool(0), NULL);
  (void)e;
  SrVal *qt = mm(ad, q, dx_rinv, 1, 0);
  SrVal *low = strict_lower(ad, qt);
  SrVal *dO = low ? sr_ad_binop(ad, SR_P_sub, low, mT(ad, low)) : NULL;
  SrVal *t1 = dO ? sr_ad_binop(ad, SR_P_sub, dO, qt) : NULL;
  *dq = t1 ? sr_ad_binop(ad, SR_P_add, mm(ad, q, t1, 0, 0), dx_rinv) : NULL;
  SrVal *t2 = *dq ? sr_ad_binop(ad, SR_P_sub, qt, dO) : NULL;
  *dr = t2 ? mm(ad, t2, r, 0, 0) : NULL;
  return *dr ? 0 : -1;
}

/* qr_jvp_rule: q, r again, then _thin_qr_jvp; for m < n the square
   block's, with dr2 = dq^T x2 + q^T dx2 concatenated.  Not written yet:
   pivoting and full matrices with m > n (lu_solve). */
static int jvp_qr(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  const SrType *xt = sr_ad_type(ad, x[0]);
  int nd = xt->ndim, full = param_flag(e, "full_matrices", 1);
  int64_t m = xt->dims[nd - 2].size, n = xt->dims[nd - 1].size;
  if (param_flag(e, "pivoting", 0))
    return sr_raise(ad->I, "NotImplementedError", "the JVP of qr with pivoting=True is not implemented"), -1;
  if (full && m > n)
    return sr_raise(ad->I, "NotImplementedError",
                    "the JVP of qr with full_matrices=True and more rows than columns is not implemented"),
           -1;
  SrVal *res = sr_ad_bind(ad, SR_P_qr, 1, x, (int)e->nparams, e->params);
  if (!res) return -1;
  y[0] = res->seq.items[0];
  y[1] = res->seq.items[1];
  if (!t[0]) {
    ty[0] = ty[1] = NULL;
    return 0;
  }
  SrVal *q = y[0], *r = y[1];
  if (m >= n) return thin_qr_jvp(ad, e, q, r, t[0], &ty[0], &ty[1]);
  /* wide: x = [x1 x2], r = [r1 r2] with x1, r1 m x m */
  int64_t z[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) lim[i] = xt->dims[i].size;
  const SrBinder *b = SR_AD_BINDER(ad);
  int64_t lim1[SR_MAX_RANK], st2[SR_MAX_RANK];
  memcpy(lim1, lim, sizeof lim1);
  lim1[nd - 1] = m;
  memcpy(st2, z, sizeof st2);
  st2[nd - 1] = m;
  SrVal *x2 = sr_ad_keep(ad, sr_op_slice(b, x[0], st2, lim, NULL));
  SrVal *dx1 = sr_ad_keep(ad, sr_op_slice(b, t[0], z, lim1, NULL));
  SrVal *dx2 = sr_ad_keep(ad, sr_op_slice(b, t[0], st2, lim, NULL));
  SrVal *r1 = sr_ad_keep(ad, sr_op_slice(b, r, z, lim1, NULL));
  SrVal *dq = NULL, *dr1 = NULL;
  if (!x2 || !dx1 || !dx2 || !r1 || thin_qr_jvp(ad, e, q, r1, dx1, &dq, &dr1) < 0) return -1;
  SrVal *dr2 = sr_ad_binop(ad, SR_P_add, mm(ad, dq, x2, 1, 0), mm(ad, q, dx2, 1, 0));
  SrVal *cat[2] = {dr1, dr2};
  SrVal *dr = dr2 ? sr_ad_keep(ad, sr_op_concatenate(b, 2, cat, nd - 1)) : NULL;
  ty[0] = dq;
  ty[1] = dr;
  return dr ? 0 : -1;
}

/* ==== JVP ==== */

static SrVal *mm(SrAd *ad, SrVal *x, SrVal *y, int tx, int ty);
static SrVal *mT(SrAd *ad, SrVal *x);

/* s (..., k) broadcast to (..., k, k) along the last dim (s[..., None, :])
   or the one before (s[..., :, None]), typed like `like` */
static SrVal *s_mat(SrAd *ad, SrVal *sv, const SrType *like, int along_last) {
  const SrType *st = sr_ad_type(ad, sv);
  int nd = st->ndim + 1;
  int64_t dims[SR_MAX_RANK];
  for (int i = 0; i < nd - 2; i++) dims[i] = i;
  dims[nd - 2] = along_last ? nd - 1 : nd - 2;
  SrTypeBuilder b;
  sr_type_builder(&b, like);
  b.dtype = st->dtype;
  return sr_ad_broadcast_in_dim(ad, sv, sr_type_get(&b), dims, nd - 1, 1);
}

static SrVal *eye_like(SrAd *ad, const SrType *t) {
  int nd = t->ndim;
  int64_t k = t->dims[nd - 1].size, kk[2] = {k, k}, last[2] = {nd - 2, nd - 1};
  const SrBinder *b = SR_AD_BINDER(ad);
  SrVal *i0 = sr_ad_keep(ad, sr_op_iota(b, SR_I32, kk, 2, 0, NULL));
  SrVal *i1 = sr_ad_keep(ad, sr_op_iota(b, SR_I32, kk, 2, 1, NULL));
  SrVal *eye = i1 ? sr_ad_convert(ad, sr_ad_binop(ad, SR_P_eq, i0, i1), t->dtype, 0) : NULL;
  return eye ? sr_ad_broadcast_in_dim(ad, eye, t, last, 2, 1) : NULL;
}

/* _svd_jvp_rule: s, U, Vt from svd(full_matrices=False, compute_uv=True);
   dS = U^T dA V (contracted directly), ds its diagonal (dS times the
   identity summed over the last axis); with compute_uv, dU and dV as
   JAX's rule writes them, the (m > n / n > m) corrections included.  Full
   matrices of a non-square A raise JAX's NotImplementedError. */
static int jvp_svd(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  const SrType *xt = sr_ad_type(ad, x[0]);
  int nd = xt->ndim, uv = param_flag(e, "compute_uv", 1), full = param_flag(e, "full_matrices", 1);
  int64_t m = xt->dims[nd - 2].size, n = xt->dims[nd - 1].size;
  SrVal *r = sr_ad_bindv(ad, SR_P_svd, 1, x, "full_matrices", sr_bool(0), "compute_uv", sr_bool(1),
                         "subset_by_index", param(e, "subset_by_index") ? sr_ref(param(e, "subset_by_index")) : sr_none(),
                         "algorithm", param(e, "algorithm") ? sr_ref(param(e, "algorithm")) : sr_none(), NULL);
  if (!r) return -1;
  if (uv && full && m != n)
    return sr_raise(ad->I, "NotImplementedError", "Singular value decomposition JVP not implemented for full matrices"),
           -1;
  SrVal *sv = r->seq.items[0], *u = r->seq.items[1], *vt = r->seq.items[2];
  y[0] = sv;
  if (uv) {
    y[1] = u;
    y[2] = vt;
  }
  if (!t[0]) {
    ty[0] = NULL;
    if (uv) ty[1] = ty[2] = NULL;
    return 0;
  }
  SrVal *ds = mm(ad, mm(ad, u, t[0], 1, 0), vt, 0, 1);
  if (!ds) return -1;
  const SrType *dt = sr_ad_type(ad, ds);
  SrVal *eye = eye_like(ad, dt);
  int64_t ax = nd - 1;
  ty[0] = eye ? sr_ad_reduce_sum(ad, sr_ad_mul(ad, ds, eye), &ax, 1, NULL) : NULL;
  if (!ty[0]) return -1;
  if (!uv) return 0;
  SrVal *sj = s_mat(ad, sv, dt, 1), *si = s_mat(ad, sv, dt, 0);
  SrVal *diffs = sj ? sr_ad_mul(ad, sr_ad_binop(ad, SR_P_add, sj, si), sr_ad_binop(ad, SR_P_sub, sj, si)) : NULL;
  SrVal *one = diffs ? sr_ad_full(ad, dt, 1.0) : NULL;
  SrVal *F = one ? sr_ad_binop(ad, SR_P_sub, sr_ad_div(ad, one, sr_ad_binop(ad, SR_P_add, diffs, eye)), eye) : NULL;
  SrVal *dSS = F ? sr_ad_mul(ad, sj, ds) : NULL, *SdS = dSS ? sr_ad_mul(ad, si, ds) : NULL;
  /* s_inv = 1 / (s + (s == 0)) - (s == 0), on the diagonal */
  SrVal *zero = SdS ? sr_ad_full(ad, sr_ad_type(ad, sv), 0.0) : NULL;
  SrVal *sz = zero ? sr_ad_convert(ad, sr_ad_binop(ad, SR_P_eq, sv, zero), sr_ad_type(ad, sv)->dtype, 0) : NULL;
  SrVal *ones = sz ? sr_ad_full(ad, sr_ad_type(ad, sv), 1.0) : NULL;
  SrVal *sinv = ones ? sr_ad_binop(ad, SR_P_sub, sr_ad_div(ad, ones, sr_ad_binop(ad, SR_P_add, sv, sz)), sz) : NULL;
  SrVal *sinv_mat = sinv ? sr_ad_mul(ad, s_mat(ad, sinv, dt, 1), eye) : NULL;
  SrVal *half = sinv_mat ? sr_ad_full(ad, dt, 0.5) : NULL;
  SrVal *dUdV = half ? sr_ad_mul(ad, sr_ad_mul(ad, half, sr_ad_binop(ad, SR_P_sub, ds, mT(ad, ds))), sinv_mat) : NULL;
  SrVal *du = dUdV ? mm(ad, u, sr_ad_binop(ad, SR_P_add, sr_ad_mul(ad, F, sr_ad_binop(ad, SR_P_add, dSS, mT(ad, dSS))), dUdV), 0, 0)
                   : NULL;
  SrVal *dv = du ? mm(ad, vt, sr_ad_mul(ad, F, sr_ad_binop(ad, SR_P_add, SdS, mT(ad, SdS))), 1, 0) : NULL;
  if (!dv) return -1;
  if (m > n) { /* dU += (dA V - U (U^T dA V)) / s */
    SrVal *dav = mm(ad, t[0], vt, 0, 1);
    SrVal *corr = dav ? sr_ad_binop(ad, SR_P_sub, dav, mm(ad, u, mm(ad, u, dav, 1, 0), 0, 0)) : NULL;
    du = corr ? sr_ad_binop(ad, SR_P_add, du, sr_ad_div(ad, corr, s_mat(ad, sv, sr_ad_type(ad, corr), 1))) : NULL;
  }
  if (n > m) { /* dV += (dA^T U - V (Vt dA^T U)) / s */
    SrVal *dahu = mm(ad, t[0], u, 1, 0);
    SrVal *corr = dahu ? sr_ad_binop(ad, SR_P_sub, dahu, mm(ad, vt, mm(ad, vt, dahu, 0, 0), 1, 0)) : NULL;
    dv = corr ? sr_ad_binop(ad, SR_P_add, dv, sr_ad_div(ad, corr, s_mat(ad, sv, sr_ad_type(ad, corr), 1))) : NULL;
  }
  ty[1] = du;
  ty[2] = dv ? mT(ad, dv) : NULL;
  return du && ty[2] ? 0 : -1;
}

/* ==== batching ==== */

/* batching.expand_dims_batcher: the batch dimension moved to the front,
   every result batched there. */
static int batch_linalg(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *xf = sr_batch_moveaxis(b, x[0], bd[0], 0);
  if (!xf) return -1;
  return sr_batch_bind_same(b, e, &xf, 0, y, ybd);
}

/* ==== registration ==== */

void sr_lax_linalg_init(void) {
  sr_prims[SR_P_qr].nout = nout_qr;
  sr_set_type_rule(SR_P_qr, type_qr);
  sr_set_eval_rule(SR_P_qr, ev_qr);
  sr_prims[SR_P_svd].nout = nout_svd;
  sr_set_type_rule(SR_P_svd, type_svd);
  sr_set_eval_rule(SR_P_svd, ev_svd);
  sr_ad_set_jvp(SR_P_svd, jvp_svd);
  sr_prims[SR_P_qr].batch = batch_linalg;
  sr_ad_set_jvp(SR_P_qr, jvp_qr);
  sr_set_type_rule(SR_P_triangular_solve, type_triangular_solve);
  sr_set_eval_rule(SR_P_triangular_solve, ev_triangular_solve);
  sr_ad_set_jvp(SR_P_triangular_solve, jvp_triangular_solve);
  sr_ad_set_transpose(SR_P_triangular_solve, tr_triangular_solve);
  sr_prims[SR_P_triangular_solve].batch = batch_triangular_solve;
  sr_prims[SR_P_svd].batch = batch_linalg;
}

/* ==== shared with linalg16.c (linalg.h) ==== */

int sr_linalg_check_operand(SrTypeCtx *cx, const SrRuleEqn *e, const char *name) {
  return check_operand(cx, e, name);
}
const SrType *sr_linalg_result_type(const SrType *x, SrDtype dt, int64_t rows, int64_t cols) {
  return result_type(x, dt, rows, cols);
}
const SrType *sr_linalg_whole_matrix(const SrType *base, const SrType *l, int nd) { return whole_matrix(base, l, nd); }
SrVal *sr_linalg_mm(SrAd *ad, SrVal *x, SrVal *y, int tx, int ty) { return mm(ad, x, y, tx, ty); }
SrVal *sr_linalg_mT(SrAd *ad, SrVal *x) { return mT(ad, x); }
SrVal *sr_linalg_tri_mask(SrAd *ad, SrVal *x, int cmp) { return tri_mask(ad, x, cmp); }
SrVal *sr_linalg_eye_like(SrAd *ad, const SrType *t) { return eye_like(ad, t); }
int sr_linalg_batch_front(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  return batch_linalg(b, e, x, bd, y, ybd);
}
