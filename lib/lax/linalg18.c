/* linalg18.c: the rules of lax/linalg.py's geqrf_p, householder_product_p,
 * ormqr_p, hessenberg_p, schur_p and tridiagonal_p: their type rules
 * (linalg_shape_rule and linalg_sharding_rule with _geqrf_shape_rule,
 * _householder_product_shape_rule, _ormqr_shape_rule,
 * _hessenberg_shape_rule, _schur_shape_rule, _tridiagonal_shape_rule and
 * their dtype rules), their eval rules through LAPACK as JAX's CPU
 * lowerings call it (geqrf; orgqr; ormqr; gehrd with ilo = 1, ihi = n;
 * gees without sorting; sytrd; a failed hessenberg, schur or tridiagonal
 * NaN, _replace_not_ok_with_nan) and their batch rule
 * (expand_dims_batcher: every operand's batch dim at the front, an
 * unbatched one broadcast there).  JAX defines no JVP for any of them.
 * float32 and float64 only: complex operands type check but do not
 * evaluate.  And tridiagonal_solve_p: _tridiagonal_solve_shape_rule,
 * its eval rule through LAPACK's gtsv as the CPU lowering calls it (a
 * singular system NaN), _tridiagonal_solve_jvp_rule (its tridiagonal
 * product by slices and pads, not JAX's scatter-adds),
 * _tridiagonal_solve_transpose_rule (linear in b) and
 * _tridiagonal_solve_batching_rule.  Registered by sr_lax_linalg18_init. */
#include "config.h"

#include "lax/lax.h"

#include <complex.h>
#undef I
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "lax/linalg.h"
#include "util/intern.h"

#define MAXI(a, b) ((a) > (b) ? (a) : (b))
#define MINI(a, b) ((a) < (b) ? (a) : (b))

enum { OP_GEQRF, OP_HOUSEHOLDER, OP_ORMQR, OP_HESSENBERG, OP_SCHUR, OP_TRIDIAGONAL };

static const char *const op_names[] = {"geqrf", "householder_product", "ormqr", "hessenberg", "schur", "tridiagonal"};

static int rflag(const SrRuleEqn *e, const char *key, int dflt) {
  SrVal *v = sr_rparam(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? (int)v->i : dflt;
}

static int evflag(const SrEvalEqn *e, const char *key, int dflt) {
  SrVal *v = sr_ev_param(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? (int)v->i : dflt;
}

static int64_t dim(const SrType *t, int from_end) { return t->dims[t->ndim - from_end].size; }

/* (m, n) or (k,), a core shape as Python prints it */
static void core_str(SrBuf *b, const SrType *t, int rank) {
  if (rank == 1) sr_buf_printf(b, "(%lld,)", (long long)dim(t, 1));
  else sr_buf_printf(b, "(%lld, %lld)", (long long)dim(t, 2), (long long)dim(t, 1));
}

/* linalg_shape_rule, naryop_dtype_rule and linalg_sharding_rule for
   operands of core ranks ranks[0..n): each of rank at least its core
   rank, floating or complex, the same dtype, the same batch dimensions,
   unsharded on its core dimensions. */
static int check_operands(SrTypeCtx *cx, const SrRuleEqn *e, const char *name, int n, const int *ranks) {
  for (int i = 0; i < n; i++) {
    const SrType *t = e->in[i];
    if (t->ndim < ranks[i]) {
      SrBuf b = SR_BUF_INIT;
      sr_shape_str(&b, t);
      sr_terr(cx, "TypeError", "Input %d to %s must have rank at least %d, but got shape=%s", i, name, ranks[i],
              sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
  }
  for (int i = 1; i < n; i++)
    if (e->in[i]->ndim - ranks[i] != e->in[0]->ndim - ranks[0]) {
      SrBuf b = SR_BUF_INIT;
      for (int j = 0; j < n; j++) sr_buf_printf(&b, "%s%d", j ? ", " : "", e->in[j]->ndim - ranks[j]);
      sr_terr(cx, "TypeError",
              "All inputs to %s must have the same number of batch dimensions, but got [%s] batch dimensions for "
              "the inputs.",
              name, sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
  for (int i = 0; i < n; i++) {
    SrDtype dt = e->in[i]->dtype;
    if (dt == SR_FLOAT0) return sr_float0_error(cx, name, i);
    if (!sr_dtype_in(dt, SR_DC_FLOAT | SR_DC_COMPLEX)) {
      SrBuf b = SR_BUF_INIT;
      sr_dtype_classes_str(&b, SR_DC_FLOAT | SR_DC_COMPLEX);
      sr_terr(cx, "TypeError",
              "%s does not accept dtype %s at position %d. Accepted dtypes at position %d are subtypes of %s.", name,
              sr_dtype_name(dt), i, i, sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
  }
  if (n > 1 && sr_check_same_dtypes(cx, name, e->in, (uint32_t)n) < 0) return -1;
  int nb = e->in[0]->ndim - ranks[0];
  for (int i = 1; i < n; i++)
    for (int d = 0; d < nb; d++)
      if (e->in[i]->dims[d].size != e->in[0]->dims[d].size) {
        SrBuf b = SR_BUF_INIT;
        for (int j = 0; j < n; j++) {
          sr_buf_puts(&b, j ? ", " : "");
          sr_shape_str(&b, e->in[j]);
        }
        sr_terr(cx, "TypeError", "All inputs to %s must have the same batch dimensions, but got shapes %s.", name,
                sr_buf_str(&b));
        sr_buf_free(&b);
        return -1;
      }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  if (s.mode != SR_MODE_EXPLICIT) return 0;
  for (int i = 0; i < n; i++) {
    const SrType *t = e->in[i];
    int bad = 0;
    for (int d = t->ndim - ranks[i]; d < t->ndim; d++) bad |= t->dims[d].nax != 0;
    if (bad) {
      SrBuf b = SR_BUF_INIT;
      sr_type_spec_repr(&b, t);
      sr_terr(cx, "ShardingTypeError", "Input %d to %s must be unsharded on non-batch dimensions, but got %s.", i,
              name, sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
  }
  for (int i = 1; i < n; i++)
    for (int d = 0; d < nb; d++)
      if (e->in[i]->dims[d].nax != e->in[0]->dims[d].nax ||
          memcmp(e->in[i]->dims[d].ax, e->in[0]->dims[d].ax, e->in[0]->dims[d].nax)) {
        SrBuf b = SR_BUF_INIT;
        for (int j = 0; j < n; j++) {
          sr_buf_puts(&b, j ? ", " : "");
          sr_type_spec_repr(&b, e->in[j]);
        }
        sr_terr(cx, "ShardingTypeError", "All inputs to %s must have the same batch sharding, but got %s.", name,
                sr_buf_str(&b));
        sr_buf_free(&b);
        return -1;
      }
  return 0;
}

static SrDtype real_of(SrDtype dt) { return dt == SR_C64 ? SR_F32 : dt == SR_C128 ? SR_F64 : dt; }

/* ==== type rules ==== */

/* _geqrf_shape_rule: (m, n) and taus (min(m, n),) */
static int type_geqrf(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const int r[1] = {2};
  if (sr_rule_arity(cx, e, 1, 2) < 0 || check_operands(cx, e, "geqrf", 1, r) < 0) return -1;
  const SrType *a = e->in[0];
  out[0] = a;
  out[1] = sr_linalg_result_type(a, a->dtype, MINI(dim(a, 2), dim(a, 1)), -1);
  return 0;
}

/* _householder_product_shape_rule: a (m, n) with m >= n, taus (k,) with
   k <= min(m, n); the result is a's shape */
static int type_householder(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const int r[2] = {2, 1};
  const char *name = "householder_product";
  if (sr_rule_arity(cx, e, 2, 1) < 0 || check_operands(cx, e, name, 2, r) < 0) return -1;
  const SrType *a = e->in[0], *t = e->in[1];
  if (dim(a, 2) < dim(a, 1)) {
    SrBuf b = SR_BUF_INIT;
    core_str(&b, a, 2);
    sr_terr(cx, "ValueError",
            "The first argument to householder_product must have at least as many rows as columns, got shape %s",
            sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (dim(t, 1) > MINI(dim(a, 2), dim(a, 1)))
    return sr_terr(cx, "ValueError",
                   "The second argument to householder_product must not have more rows than the minimum of the first "
                   "argument's rows and columns.");
  out[0] = sr_linalg_result_type(a, a->dtype, dim(a, 2), dim(a, 1));
  return 0;
}

/* _ormqr_shape_rule: c's rows (left) or columns (right) are a's rows;
   the result is c's shape.  (JAX leaves taus unchecked and LAPACK
   rejects a taus longer than a's columns; here that is a ValueError.) */
static int type_ormqr(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const int r[3] = {2, 1, 2};
  if (sr_rule_arity(cx, e, 3, 1) < 0 || check_operands(cx, e, "ormqr", 3, r) < 0) return -1;
  const SrType *a = e->in[0], *t = e->in[1], *c = e->in[2];
  int left = rflag(e, "left", 1);
  int64_t m = dim(a, 2);
  if (left ? dim(c, 2) != m : dim(c, 1) != m) {
    SrBuf sa = SR_BUF_INIT, sc = SR_BUF_INIT;
    core_str(&sa, a, 2);
    core_str(&sc, c, 2);
    if (left)
      sr_terr(cx, "ValueError",
              "ormqr with left=True expects c to have the same number of rows as the Householder matrix a. Got a "
              "shape %s and c shape %s.",
              sr_buf_str(&sa), sr_buf_str(&sc));
    else
      sr_terr(cx, "ValueError",
              "ormqr with left=False expects c to have the same number of columns as the Householder matrix a has "
              "rows. Got a shape %s and c shape %s.",
              sr_buf_str(&sa), sr_buf_str(&sc));
    sr_buf_free(&sa);
    sr_buf_free(&sc);
    return -1;
  }
  if (dim(t, 1) > MINI(m, dim(a, 1)))
    return sr_terr(cx, "ValueError",
                   "The second argument to ormqr must not have more rows than the minimum of the first argument's rows "
                   "and columns.");
  out[0] = c;
  return 0;
}

static int square(SrTypeCtx *cx, const SrType *a, const char *fmt) {
  if (dim(a, 2) == dim(a, 1)) return 0;
  SrBuf b = SR_BUF_INIT;
  core_str(&b, a, 2);
  sr_terr(cx, "ValueError", fmt, sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

/* _hessenberg_shape_rule: (n, n) and taus (n - 1,) */
static int type_hessenberg(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const int r[1] = {2};
  if (sr_rule_arity(cx, e, 1, 2) < 0 || check_operands(cx, e, "hessenberg", 1, r) < 0) return -1;
  const SrType *a = e->in[0];
  if (square(cx, a, "Argument to Hessenberg reduction must have shape [..., n, n], got shape %s") < 0) return -1;
  out[0] = a;
  out[1] = sr_linalg_result_type(a, a->dtype, MAXI(dim(a, 1) - 1, 0), -1);
  return 0;
}

/* _schur_shape_rule: (T, Z) with compute_schur_vectors, else (T,) */
static int type_schur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const int r[1] = {2};
  int vecs = rflag(e, "compute_schur_vectors", 1);
  if (sr_rule_arity(cx, e, 1, vecs ? 2 : 1) < 0 || check_operands(cx, e, "schur", 1, r) < 0) return -1;
  const SrType *a = e->in[0];
  if (square(cx, a, "The input to schur must be a square matrix. Got shape %s.") < 0) return -1;
  out[0] = a;
  if (vecs) out[1] = a;
  return 0;
}

/* _tridiagonal_shape_rule: (n, n) with n > 0; (a, d (n,), e (n - 1,),
   taus (n - 1,)), d and e of the real dtype */
static int type_tridiagonal(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const int r[1] = {2};
  if (sr_rule_arity(cx, e, 1, 4) < 0 || check_operands(cx, e, "tridiagonal", 1, r) < 0) return -1;
  const SrType *a = e->in[0];
  if (dim(a, 1) == 0 && dim(a, 2) == 0) a = NULL; /* square, but JAX rejects n = 0 too */
  if (square(cx, a ? a : e->in[0], "The input to tridiagonal must be a square matrix. Got shape %s.") < 0 || !a) {
    if (!a) {
      SrBuf b = SR_BUF_INIT;
      core_str(&b, e->in[0], 2);
      sr_terr(cx, "ValueError", "The input to tridiagonal must be a square matrix. Got shape %s.", sr_buf_str(&b));
      sr_buf_free(&b);
    }
    return -1;
  }
  int64_t n = dim(a, 1);
  out[0] = a;
  out[1] = sr_linalg_result_type(a, real_of(a->dtype), n, -1);
  out[2] = sr_linalg_result_type(a, real_of(a->dtype), n - 1, -1);
  out[3] = sr_linalg_result_type(a, a->dtype, n - 1, -1);
  return 0;
}

static uint32_t nout_two(int nin, const SrParam *ps, int np) {
  (void)nin, (void)ps, (void)np;
  return 2;
}

static uint32_t nout_four(int nin, const SrParam *ps, int np) {
  (void)nin, (void)ps, (void)np;
  return 4;
}

static uint32_t nout_schur(int nin, const SrParam *ps, int np) {
  (void)nin;
  for (int i = 0; i < np; i++)
    if (ps[i].key == sr_intern_cstr("compute_schur_vectors") && ps[i].val &&
        (ps[i].val->kind == SR_V_BOOL || ps[i].val->kind == SR_V_INT) && !ps[i].val->i)
      return 1;
  return 2;
}

/* ==== LAPACK ==== */

#ifdef HAVE_LAPACK
/* LAPACK's Fortran symbols, column-major; the trailing size_t are
   gfortran's hidden lengths of CHARACTER arguments. */
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work, const int *lwork,
             int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
             int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda, const float *tau, float *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);
void sormqr_(const char *side, const char *trans, const int *m, const int *n, const int *k, const float *a,
             const int *lda, const float *tau, float *c, const int *ldc, float *work, const int *lwork, int *info,
             size_t l1, size_t l2);
void dormqr_(const char *side, const char *trans, const int *m, const int *n, const int *k, const double *a,
             const int *lda, const double *tau, double *c, const int *ldc, double *work, const int *lwork, int *info,
             size_t l1, size_t l2);
void sgehrd_(const int *n, const int *ilo, const int *ihi, float *a, const int *lda, float *tau, float *work,
             const int *lwork, int *info);
void dgehrd_(const int *n, const int *ilo, const int *ihi, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void sgees_(const char *jobvs, const char *sort, void *select, const int *n, float *a, const int *lda, int *sdim,
            float *wr, float *wi, float *vs, const int *ldvs, float *work, const int *lwork, int *bwork, int *info,
            size_t l1, size_t l2);
void dgees_(const char *jobvs, const char *sort, void *select, const int *n, double *a, const int *lda, int *sdim,
            double *wr, double *wi, double *vs, const int *ldvs, double *work, const int *lwork, int *bwork,
            int *info, size_t l1, size_t l2);
void ssytrd_(const char *uplo, const int *n, float *a, const int *lda, float *d, float *e, float *tau, float *work,
             const int *lwork, int *info, size_t l1);
void dsytrd_(const char *uplo, const int *n, double *a, const int *lda, double *d, double *e, double *tau,
             double *work, const int *lwork, int *info, size_t l1);
#endif

typedef struct L18Call {
  int op;
  SrDtype dt;
  int nb;           /* batch dims */
  int left, trans;  /* ormqr */
  int vecs;         /* schur */
  int lower;        /* tridiagonal */
  int64_t m, n, k;  /* operand 0's matrix dims; taus' length */
  int64_t cm, cn;   /* ormqr's c */
} L18Call;

/* Each kernel runs on `nb` row-major matrices, through a column-major
   copy w (ld = rows), with the workspace LAPACK asks for. */
#define L18_IMPL(T, P)                                                                                                 \
  static void to_cm_##T(const T *x, T *w, int64_t m, int64_t n) {                                                      \
    for (int64_t i = 0; i < m; i++)                                                                                    \
      for (int64_t j = 0; j < n; j++) w[i + j * m] = x[i * n + j];                                                     \
  }                                                                                                                    \
  static void from_cm_##T(const T *w, T *x, int64_t m, int64_t n) {                                                    \
    for (int64_t i = 0; i < m; i++)                                                                                    \
      for (int64_t j = 0; j < n; j++) x[i * n + j] = w[i + j * m];                                                     \
  }                                                                                                                    \
  static void nan_##T(T *x, int64_t n) {                                                                               \
    for (int64_t i = 0; i < n; i++) x[i] = (T)NAN;                                                                     \
  }                                                                                                                    \
  static T *work_##T(T q, int *lwork) {                                                                                \
    *lwork = (int)MAXI(q, 1);                                                                                          \
    return sr_xcalloc((size_t)*lwork, sizeof(T));                                                                      \
  }                                                                                                                    \
  static void geqrf_##T(const L18Call *c, const T *x, T *a, T *tau, int64_t nb) {                                      \
    int m = (int)c->m, n = (int)c->n, k = MINI(m, n), ld = MAXI(m, 1), lw = -1, info = 0, lwork;                     \
    T q = 1, *w = sr_xcalloc((size_t)m * (size_t)n + 1, sizeof(T));                                                   \
    if (k > 0) P##geqrf_(&m, &n, w, &ld, tau, &q, &lw, &info);                                                         \
    T *work = work_##T(q, &lwork);                                                                                     \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      to_cm_##T(x + b * m * n, w, m, n);                                                                               \
      if (k > 0) P##geqrf_(&m, &n, w, &ld, tau + b * k, work, &lwork, &info);                                          \
      from_cm_##T(w, a + b * m * n, m, n);                                                                             \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(w);                                                                                                           \
  }                                                                                                                    \
  static void householder_##T(const L18Call *c, const T *x, const T *tau, T *q, int64_t nb) {                          \
    int m = (int)c->m, n = (int)c->n, k = (int)c->k, ld = MAXI(m, 1), lw = -1, info = 0, lwork;                      \
    T wq = 1, *w = sr_xcalloc((size_t)m * (size_t)n + 1, sizeof(T));                                                  \
    if (n > 0) P##orgqr_(&m, &n, &k, w, &ld, tau, &wq, &lw, &info);                                                    \
    T *work = work_##T(wq, &lwork);                                                                                    \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      to_cm_##T(x + b * m * n, w, m, n);                                                                               \
      if (n > 0) P##orgqr_(&m, &n, &k, w, &ld, tau + b * k, work, &lwork, &info);                                      \
      from_cm_##T(w, q + b * m * n, m, n);                                                                             \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(w);                                                                                                           \
  }                                                                                                                    \
  static void ormqr_##T(const L18Call *c, const T *x, const T *tau, const T *cin, T *out, int64_t nb) {                \
    int m = (int)c->m, n = (int)c->n, k = (int)c->k, cm = (int)c->cm, cn = (int)c->cn;                               \
    int lda = MAXI(m, 1), ldc = MAXI(cm, 1), lw = -1, info = 0, lwork;                                               \
    const char *side = c->left ? "L" : "R", *tr = c->trans ? "T" : "N";                                               \
    T wq = 1, *w = sr_xcalloc((size_t)m * (size_t)n + 1, sizeof(T));                                                  \
    T *cw = sr_xcalloc((size_t)cm * (size_t)cn + 1, sizeof(T));                                                       \
    int run = cm > 0 && cn > 0 && k > 0;                                                                               \
    if (run) P##ormqr_(side, tr, &cm, &cn, &k, w, &lda, tau, cw, &ldc, &wq, &lw, &info, 1, 1);                         \
    T *work = work_##T(wq, &lwork);                                                                                    \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      to_cm_##T(x + b * m * n, w, m, n);                                                                               \
      to_cm_##T(cin + b * cm * cn, cw, cm, cn);                                                                        \
      if (run) P##ormqr_(side, tr, &cm, &cn, &k, w, &lda, tau + b * k, cw, &ldc, work, &lwork, &info, 1, 1);           \
      from_cm_##T(cw, out + b * cm * cn, cm, cn);                                                                      \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(cw);                                                                                                          \
    free(w);                                                                                                           \
  }                                                                                                                    \
  static void hessenberg_##T(const L18Call *c, const T *x, T *a, T *tau, int64_t nb) {                                 \
    int n = (int)c->n, ld = MAXI(n, 1), one = 1, lw = -1, info = 0, lwork;                                           \
    int64_t nt = MAXI(n - 1, 0);                                                                                       \
    T wq = 1, *w = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(T)), *tw = sr_xcalloc((size_t)n + 1, sizeof(T));     \
    if (n > 0) P##gehrd_(&n, &one, &n, w, &ld, tw, &wq, &lw, &info);                                                   \
    T *work = work_##T(wq, &lwork);                                                                                    \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      to_cm_##T(x + b * n * n, w, n, n);                                                                               \
      info = 0;                                                                                                        \
      if (n > 0) P##gehrd_(&n, &one, &n, w, &ld, tw, work, &lwork, &info);                                             \
      from_cm_##T(w, a + b * n * n, n, n);                                                                             \
      memcpy(tau + b * nt, tw, (size_t)nt * sizeof(T));                                                                \
      if (info != 0) {                                                                                                 \
        nan_##T(a + b * n * n, (int64_t)n * n);                                                                        \
        nan_##T(tau + b * nt, nt);                                                                                     \
      }                                                                                                                \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(tw);                                                                                                          \
    free(w);                                                                                                           \
  }                                                                                                                    \
  static void schur_##T(const L18Call *c, const T *x, T *t, T *z, int64_t nb) {                                        \
    int n = (int)c->n, ld = MAXI(n, 1), lw = -1, info = 0, sdim = 0, lwork;                                          \
    const char *job = z ? "V" : "N";                                                                                   \
    T wq = 1, *w = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(T)), *vs = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(T)); \
    T *wr = sr_xcalloc((size_t)n + 1, sizeof(T)), *wi = sr_xcalloc((size_t)n + 1, sizeof(T));                        \
    int *bw = sr_xcalloc((size_t)n + 1, sizeof(int));                                                                  \
    if (n > 0) P##gees_(job, "N", NULL, &n, w, &ld, &sdim, wr, wi, vs, &ld, &wq, &lw, bw, &info, 1, 1);                \
    T *work = work_##T(wq, &lwork);                                                                                    \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      to_cm_##T(x + b * n * n, w, n, n);                                                                               \
      info = 0;                                                                                                        \
      if (n > 0) P##gees_(job, "N", NULL, &n, w, &ld, &sdim, wr, wi, vs, &ld, work, &lwork, bw, &info, 1, 1);          \
      from_cm_##T(w, t + b * n * n, n, n);                                                                             \
      if (z) from_cm_##T(vs, z + b * n * n, n, n);                                                                     \
      if (info != 0) {                                                                                                 \
        nan_##T(t + b * n * n, (int64_t)n * n);                                                                        \
        if (z) nan_##T(z + b * n * n, (int64_t)n * n);                                                                 \
      }                                                                                                                \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(bw);                                                                                                          \
    free(wi);                                                                                                          \
    free(wr);                                                                                                          \
    free(vs);                                                                                                          \
    free(w);                                                                                                           \
  }                                                                                                                    \
  static void tridiagonal_##T(const L18Call *c, const T *x, T *a, T *d, T *e, T *tau, int64_t nb) {                    \
    int n = (int)c->n, ld = MAXI(n, 1), lw = -1, info = 0, lwork;                                                    \
    const char *uplo = c->lower ? "L" : "U";                                                                           \
    T wq = 1, *w = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(T));                                                  \
    P##sytrd_(uplo, &n, w, &ld, d, e, tau, &wq, &lw, &info, 1);                                                        \
    T *work = work_##T(wq, &lwork);                                                                                    \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      T *db = d + b * n, *eb = e + b * (n - 1), *tb = tau + b * (n - 1);                                             \
      to_cm_##T(x + b * n * n, w, n, n);                                                                               \
      info = 0;                                                                                                        \
      P##sytrd_(uplo, &n, w, &ld, db, eb, tb, work, &lwork, &info, 1);                                                 \
      from_cm_##T(w, a + b * n * n, n, n);                                                                             \
      if (info != 0) {                                                                                                 \
        nan_##T(a + b * n * n, (int64_t)n * n);                                                                        \
        nan_##T(db, n);                                                                                                \
        nan_##T(eb, n - 1);                                                                                            \
        nan_##T(tb, n - 1);                                                                                            \
      }                                                                                                                \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(w);                                                                                                           \
  }

#ifdef HAVE_LAPACK
L18_IMPL(float, s)
L18_IMPL(double, d)

/* gees of complex matrices: T upper triangular, the eigenvalues on its
   diagonal (JAX's schur of a complex operand) */
void cgees_(const char *jobvs, const char *sort, void *select, const int *n, float _Complex *a, const int *lda,
            int *sdim, float _Complex *w, float _Complex *vs, const int *ldvs, float _Complex *work, const int *lwork,
            float *rwork, int *bwork, int *info, size_t l1, size_t l2);
void zgees_(const char *jobvs, const char *sort, void *select, const int *n, double _Complex *a, const int *lda,
            int *sdim, double _Complex *w, double _Complex *vs, const int *ldvs, double _Complex *work,
            const int *lwork, double *rwork, int *bwork, int *info, size_t l1, size_t l2);
#define L18_CSCHUR(N, R, C, P)                                                                                         \
  static void schur_##N(const L18Call *c, const C *x, C *t, C *z, int64_t nb) {                                        \
    int n = (int)c->n, ld = MAXI(n, 1), lw = -1, info = 0, sdim = 0;                                                 \
    const char *job = z ? "V" : "N";                                                                                   \
    C wq = 1, *a = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(C)), *vs = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(C)); \
    C *w = sr_xcalloc((size_t)n + 1, sizeof(C));                                                                       \
    R *rw = sr_xcalloc((size_t)n + 1, sizeof(R));                                                                      \
    int *bw = sr_xcalloc((size_t)n + 1, sizeof(int));                                                                  \
    if (n > 0) P##gees_(job, "N", NULL, &n, a, &ld, &sdim, w, vs, &ld, &wq, &lw, rw, bw, &info, 1, 1);                 \
    int lwork = MAXI((int)creal(wq), 1);                                                                               \
    C *work = sr_xcalloc((size_t)lwork, sizeof(C));                                                                    \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      const C *xb = x + b * n * n;                                                                                     \
      for (int i = 0; i < n; i++)                                                                                      \
        for (int j = 0; j < n; j++) a[i + (int64_t)j * n] = xb[(int64_t)i * n + j];                                    \
      info = 0;                                                                                                        \
      if (n > 0) P##gees_(job, "N", NULL, &n, a, &ld, &sdim, w, vs, &ld, work, &lwork, rw, bw, &info, 1, 1);           \
      for (int i = 0; i < n; i++)                                                                                      \
        for (int j = 0; j < n; j++) {                                                                                  \
          int64_t o = b * n * n + (int64_t)i * n + j, q = i + (int64_t)j * n;                                          \
          t[o] = info ? (C)NAN : a[q];                                                                                 \
          if (z) z[o] = info ? (C)NAN : vs[q];                                                                         \
        }                                                                                                              \
    }                                                                                                                  \
    free(work), free(bw), free(rw), free(w), free(vs), free(a);                                                        \
  }
L18_CSCHUR(cfloat, float, float _Complex, c)
L18_CSCHUR(cdouble, double, double _Complex, z)
#undef L18_CSCHUR
#endif

static int64_t nmat(const int64_t *sh, int nb) {
  int64_t r = 1;
  for (int i = 0; i < nb; i++) r *= sh[i];
  return r;
}

static int l18_fn(SrShardIO *io) {
  L18Call *c = io->arg;
  int64_t nb = nmat(io->in_shape[0], c->nb);
#ifdef HAVE_LAPACK
  void *x = io->in[0]->data, *o0 = io->out[0]->data, *o1 = NULL;
  int f = c->dt == SR_F32;
  switch (c->op) {
  case OP_GEQRF:
    if (f) geqrf_float(c, x, o0, io->out[1]->data, nb);
    else geqrf_double(c, x, o0, io->out[1]->data, nb);
    break;
  case OP_HOUSEHOLDER:
    if (f) householder_float(c, x, io->in[1]->data, o0, nb);
    else householder_double(c, x, io->in[1]->data, o0, nb);
    break;
  case OP_ORMQR:
    if (f) ormqr_float(c, x, io->in[1]->data, io->in[2]->data, o0, nb);
    else ormqr_double(c, x, io->in[1]->data, io->in[2]->data, o0, nb);
    break;
  case OP_HESSENBERG:
    if (f) hessenberg_float(c, x, o0, io->out[1]->data, nb);
    else hessenberg_double(c, x, o0, io->out[1]->data, nb);
    break;
  case OP_SCHUR:
    o1 = c->vecs ? io->out[1]->data : NULL;
    if (c->dt == SR_C64) schur_cfloat(c, x, o0, o1, nb);
    else if (c->dt == SR_C128) schur_cdouble(c, x, o0, o1, nb);
    else if (f) schur_float(c, x, o0, o1, nb);
    else schur_double(c, x, o0, o1, nb);
    break;
  default:
    if (f) tridiagonal_float(c, x, o0, io->out[1]->data, io->out[2]->data, io->out[3]->data, nb);
    else tridiagonal_double(c, x, o0, io->out[1]->data, io->out[2]->data, io->out[3]->data, nb);
    break;
  }
#else
  (void)nb;
#endif
  return 0;
}

/* A layout whole on a value's core dims (those after its first nb) and,
   on its batch dims, like l's. */
static const SrType *whole(const SrType *base, const SrType *l, int nb) {
  return sr_linalg_whole_matrix(base, l, nb + 2);
}

static int ev_l18(SrEvalCtx *cx, const SrEvalEqn *e, int op) {
  const char *name = op_names[op];
  L18Call c;
  memset(&c, 0, sizeof c);
  const SrType *xt = e->in[0]->type;
  c.op = op;
  c.dt = xt->dtype;
  c.nb = xt->ndim - 2;
  c.m = dim(xt, 2);
  c.n = dim(xt, 1);
  if (op == OP_HOUSEHOLDER || op == OP_ORMQR) c.k = dim(e->in[1]->type, 1);
  if (op == OP_ORMQR) {
    c.cm = dim(e->in[2]->type, 2);
    c.cn = dim(e->in[2]->type, 1);
    c.left = evflag(e, "left", 1);
    c.trans = evflag(e, "transpose", 0);
  }
  c.vecs = evflag(e, "compute_schur_vectors", 1);
  c.lower = evflag(e, "lower", 1);
#ifndef HAVE_LAPACK
  return sr_ev_err(cx, "NotImplementedError", "%s needs LAPACK, which this shardrepl was built without", name);
#endif
  if (c.dt != SR_F32 && c.dt != SR_F64 && !(op == OP_SCHUR && (c.dt == SR_C64 || c.dt == SR_C128)))
    return sr_ev_err(cx, "NotImplementedError", "%s of %s is not implemented (float32 and float64 only)", name,
                     sr_dtype_name(c.dt));
  if (op == OP_SCHUR && evflag(e, "sort_eig_vals", 0))
    return sr_ev_err(cx, "NotImplementedError", "The sort feature of LAPACK's gees routine is not implemented.");
  if (c.m > 1 << 20 || c.n > 1 << 20 || c.cm > 1 << 20 || c.cn > 1 << 20)
    return sr_ev_err(cx, "NotImplementedError", "%s of a matrix this large", name);
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l[4];
  SrArray *in[3] = {0}, *outs[4] = {0};
  int rc = 0;
  for (uint32_t i = 0; i < e->nout; i++) l[i] = sr_ev_out_layout(cx, e, i, m);
  for (uint32_t i = 0; i < e->nin && rc == 0; i++)
    if (!(in[i] = sr_redistribute(cx, e->in[i], m, whole(e->in[i]->layout, l[0], c.nb)))) rc = -1;
  for (uint32_t i = 0; i < e->nout && rc == 0; i++) outs[i] = sr_array_new(e->out_type[i], whole(l[i], l[i], c.nb), m);
  if (rc == 0) rc = sr_ev_map(cx, (int)e->nin, in, (int)e->nout, outs, 0, l18_fn, &c);
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    if (!(e->out[i] = sr_redistribute_typed(cx, outs[i], m, l[i], e->out_type[i]))) rc = -1;
  for (uint32_t i = 0; i < e->nin; i++) sr_array_unref(in[i]);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(outs[i]);
  return rc;
}

static int ev_geqrf(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l18(cx, e, OP_GEQRF); }
static int ev_householder(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l18(cx, e, OP_HOUSEHOLDER); }
static int ev_ormqr(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l18(cx, e, OP_ORMQR); }
static int ev_hessenberg(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l18(cx, e, OP_HESSENBERG); }
static int ev_schur(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l18(cx, e, OP_SCHUR); }
static int ev_tridiagonal(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_l18(cx, e, OP_TRIDIAGONAL); }

/* ==== batching ==== */

/* batching.expand_dims_batcher: every operand's batch dim at the front
   (bdim_at_front, an unbatched operand broadcast to the batch size),
   every result batched there. */
static int batch_expand_dims(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *xs[3];
  for (uint32_t i = 0; i < e->nin && i < 3; i++)
    if (!(xs[i] = sr_batch_at_front(b, x[i], bd[i], b->size))) return -1;
  return sr_batch_bind_same(b, e, xs, 0, y, ybd);
}

/* ==== tridiagonal_solve ==== */

/* _tridiagonal_solve_shape_rule (with linalg_primitive's checks, core
   ranks 1, 1, 1, 2): the diagonals (..., m), b (..., m, n); b's type */
static int type_tridiagonal_solve(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const int r[4] = {1, 1, 1, 2};
  const char *name = "tridiagonal_solve";
  if (sr_rule_arity(cx, e, 4, 1) < 0 || check_operands(cx, e, name, 4, r) < 0) return -1;
  int64_t m = dim(e->in[0], 1);
  if (dim(e->in[1], 1) != m || dim(e->in[2], 1) != m)
    return sr_terr(cx, "TypeError", "tridiagonal_solve requires that all diagonal arguments have the same shape.");
  if (dim(e->in[3], 2) != m)
    return sr_terr(cx, "TypeError",
                   "tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the dimensions of the "
                   "diagonal arguments.");
  out[0] = e->in[3];
  return 0;
}

#ifdef HAVE_LAPACK
void sgtsv_(const int *n, const int *nrhs, float *dl, float *d, float *du, float *b, const int *ldb, int *info);
void dgtsv_(const int *n, const int *nrhs, double *dl, double *d, double *du, double *b, const int *ldb, int *info);
#endif

typedef struct TdsCall {
  SrDtype dt;
  int nb;
  int64_t m, n;
} TdsCall;

/* gtsv on each system: LAPACK's sub- and superdiagonals are dl[1:] and
   du[:-1], b column-major; a singular system (info > 0) is NaN */
#define TDS_SOLVE(T, P)                                                                                               \
  static void tds_##T(const TdsCall *c, const T *dl, const T *d, const T *du, const T *b, T *o, int64_t nsys) {    \
    int m = (int)c->m, n = (int)c->n, info = 0;                                                                        \
    T *wl = sr_xmalloc(((size_t)m + 1) * sizeof *wl), *wd = sr_xmalloc(((size_t)m + 1) * sizeof *wd);                \
    T *wu = sr_xmalloc(((size_t)m + 1) * sizeof *wu), *wb = sr_xmalloc(((size_t)m * n + 1) * sizeof *wb);            \
    for (int64_t s = 0; s < nsys; s++) {                                                                               \
      const T *l = dl + s * m, *dd = d + s * m, *u = du + s * m, *bb = b + s * m * n;                                  \
      T *oo = o + s * m * n;                                                                                           \
      for (int i = 0; i + 1 < m; i++) wl[i] = l[i + 1], wu[i] = u[i];                                                  \
      for (int i = 0; i < m; i++) wd[i] = dd[i];                                                                       \
      for (int i = 0; i < m; i++)                                                                                      \
        for (int j = 0; j < n; j++) wb[i + (int64_t)j * m] = bb[(int64_t)i * n + j];                                   \
      info = 0;                                                                                                        \
      if (m > 0 && n > 0) P##gtsv_(&m, &n, wl, wd, wu, wb, &m, &info);                                                 \
      for (int i = 0; i < m; i++)                                                                                      \
        for (int j = 0; j < n; j++) oo[(int64_t)i * n + j] = info ? (T)NAN : wb[i + (int64_t)j * m];                   \
    }                                                                                                                  \
    free(wl), free(wd), free(wu), free(wb);                                                                            \
  }
#ifdef HAVE_LAPACK
TDS_SOLVE(float, s)
TDS_SOLVE(double, d)
#endif
#undef TDS_SOLVE

static int tds_fn(SrShardIO *io) {
  TdsCall *c = io->arg;
  int64_t nsys = nmat(io->in_shape[3], c->nb);
#ifdef HAVE_LAPACK
  if (c->dt == SR_F32)
    tds_float(c, io->in[0]->data, io->in[1]->data, io->in[2]->data, io->in[3]->data, io->out[0]->data, nsys);
  else
    tds_double(c, io->in[0]->data, io->in[1]->data, io->in[2]->data, io->in[3]->data, io->out[0]->data, nsys);
#else
  (void)nsys;
#endif
  return 0;
}

static int ev_tridiagonal_solve(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *bt = e->in[3]->type;
  TdsCall c = {bt->dtype, bt->ndim - 2, dim(bt, 2), dim(bt, 1)};
#ifndef HAVE_LAPACK
  return sr_ev_err(cx, "NotImplementedError", "tridiagonal_solve needs LAPACK, which this shardrepl was built without");
#endif
  if (evflag(e, "perturb_singular", 0))
    return sr_ev_err(cx, "NotImplementedError", "tridiagonal_solve with perturb_singular=True is not implemented");
  if (c.dt != SR_F32 && c.dt != SR_F64)
    return sr_ev_err(cx, "NotImplementedError", "tridiagonal_solve of %s is not implemented (float32 and float64 only)",
                     sr_dtype_name(c.dt));
  if (c.m > 1 << 24 || c.n > 1 << 24 || c.m * c.n > (int64_t)1 << 30)
    return sr_ev_err(cx, "NotImplementedError", "tridiagonal_solve of a system this large");
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *in[4] = {0}, *out = NULL;
  int rc = 0;
  for (int i = 0; i < 4 && rc == 0; i++)
    if (!(in[i] = sr_redistribute(cx, e->in[i], m, sr_linalg_whole_matrix(e->in[i]->layout, l, c.nb + 2)))) rc = -1;
  if (rc == 0) out = sr_array_new(e->out_type[0], whole(l, l, c.nb), m);
  if (rc == 0) rc = sr_ev_map(cx, 4, in, 1, &out, 0, tds_fn, &c);
  if (rc == 0 && !(e->out[0] = sr_redistribute_typed(cx, out, m, l, e->out_type[0]))) rc = -1;
  for (int i = 0; i < 4; i++) sr_array_unref(in[i]);
  sr_array_unref(out);
  return rc;
}

static SrVal *tds_bind(SrAd *ad, const SrEqn *e, SrVal *dl, SrVal *d, SrVal *du, SrVal *b) {
  SrVal *in[4] = {dl, d, du, b};
  if (!dl || !d || !du || !b) return NULL;
  return sr_ad_bind(ad, SR_P_tridiagonal_solve, 4, in, (int)e->nparams, e->params);
}

/* x[..., lo:hi] along axis ax (pooled) */
static SrVal *slice_axis(SrAd *ad, SrVal *x, int ax, int64_t lo, int64_t hi) {
  const SrType *t = x ? sr_ad_type(ad, x) : NULL;
  if (!t) return NULL;
  int64_t st[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) lim[i] = t->dims[i].size;
  st[ax] = lo;
  lim[ax] = hi;
  return sr_ad_keep(ad, sr_op_slice(SR_AD_BINDER(ad), x, st, lim, NULL));
}

/* x padded with zeros along axis ax, lo before and hi after (pooled) */
static SrVal *pad_axis(SrAd *ad, SrVal *x, int ax, int64_t lo, int64_t hi) {
  const SrType *t = x ? sr_ad_type(ad, x) : NULL;
  if (!t) return NULL;
  int64_t cfg[3 * SR_MAX_RANK] = {0};
  cfg[3 * ax] = lo;
  cfg[3 * ax + 1] = hi;
  SrVal *z = sr_ad_scalar_like(ad, x, 0.0);
  return z ? sr_ad_keep(ad, sr_op_pad(SR_AD_BINDER(ad), x, z, cfg, t->ndim)) : NULL;
}

/* v (..., k) broadcast along a last dim to like's shape (..., k, n):
   v[..., None] as jnp's multiply broadcasts it */
static SrVal *col_bcast(SrAd *ad, SrVal *v, SrVal *like) {
  const SrType *lt = v && like ? sr_ad_type(ad, like) : NULL;
  if (!lt) return NULL;
  int64_t dims[SR_MAX_RANK];
  for (int i = 0; i < lt->ndim - 1; i++) dims[i] = i;
  SrTypeBuilder tb;
  sr_type_builder(&tb, lt);
  tb.dtype = sr_ad_type(ad, v)->dtype;
  return sr_ad_broadcast_in_dim(ad, v, sr_type_get(&tb), dims, lt->ndim - 1, 0);
}

/* _tridiagonal_product(dl, d, du, b): d[..., None] b, plus dl[..., 1:,
   None] b[..., :-1, :] on rows 1:, plus du[..., :-1, None] b[..., 1:, :]
   on rows :-1 */
static SrVal *tds_product(SrAd *ad, SrVal *dl, SrVal *d, SrVal *du, SrVal *b) {
  const SrType *bt = sr_ad_type(ad, b);
  int nd = bt->ndim, r = nd - 2;
  int64_t m = bt->dims[r].size;
  SrVal *y = sr_ad_mul(ad, col_bcast(ad, d, b), b);
  if (!y || m < 2) return y;
  SrVal *b0 = slice_axis(ad, b, r, 0, m - 1), *b1 = slice_axis(ad, b, r, 1, m);
  SrVal *lo = sr_ad_mul(ad, col_bcast(ad, slice_axis(ad, dl, r, 1, m), b0), b0);
  SrVal *up = sr_ad_mul(ad, col_bcast(ad, slice_axis(ad, du, r, 0, m - 1), b1), b1);
  y = lo ? sr_ad_binop(ad, SR_P_add, y, pad_axis(ad, lo, r, 1, 0)) : NULL;
  return y && up ? sr_ad_binop(ad, SR_P_add, y, pad_axis(ad, up, r, 0, 1)) : NULL;
}

/* _tridiagonal_solve_jvp_rule */
static int jvp_tridiagonal_solve(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  y[0] = tds_bind(ad, e, x[0], x[1], x[2], x[3]);
  if (!y[0]) return -1;
  SrVal *rhs = t[3];
  if (t[0] || t[1] || t[2]) {
    SrVal *dz[3];
    for (int i = 0; i < 3; i++) dz[i] = t[i] ? t[i] : sr_ad_full_zeros(ad, sr_ad_type(ad, x[i]));
    SrVal *mv = dz[0] && dz[1] && dz[2] ? tds_product(ad, dz[0], dz[1], dz[2], y[0]) : NULL;
    if (!mv) return -1;
    mv = sr_ad_neg(ad, mv);
    rhs = sr_ad_add_tangents(ad, t[3], mv);
  }
  if (!rhs) {
    ty[0] = NULL;
    return 0;
  }
  ty[0] = tds_bind(ad, e, x[0], x[1], x[2], rhs);
  return ty[0] ? 0 : -1;
}

/* _tridiagonal_solve_transpose_rule: linear in b only; its cotangent the
   solve with dl_trans = [0, du[:-1]] and du_trans = [dl[1:], 0] */
static int tr_tridiagonal_solve(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  if (!x[0] || !x[1] || !x[2] || x[3])
    return sr_raise(ad->I, "AssertionError", "tridiagonal_solve is linear in b only"), -1;
  cx[0] = cx[1] = cx[2] = cx[3] = NULL;
  if (!ct[0]) return 0;
  const SrType *t = sr_ad_type(ad, x[0]);
  int r = t->ndim - 1;
  int64_t m = t->dims[r].size;
  SrVal *dlt = pad_axis(ad, slice_axis(ad, x[2], r, 0, m > 0 ? m - 1 : 0), r, m > 0 ? 1 : 0, 0);
  SrVal *dut = pad_axis(ad, slice_axis(ad, x[0], r, m > 0 ? 1 : 0, m), r, 0, m > 0 ? 1 : 0);
  cx[3] = tds_bind(ad, e, dlt, x[1], dut, ct[0]);
  return cx[3] ? 0 : -1;
}

/* _tridiagonal_solve_batching_rule: with the diagonals unbatched, b's
   batch dim joins its columns (moved before them and folded in); else
   every operand batched at the front */
static int batch_tridiagonal_solve(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrAd *ad = &b->ad;
  if (bd[0] == SR_NOT_MAPPED && bd[1] == SR_NOT_MAPPED && bd[2] == SR_NOT_MAPPED) {
    const SrType *bt0 = sr_ad_type(ad, x[3]);
    SrVal *bm = sr_batch_moveaxis(b, x[3], bd[3], bt0->ndim - 2);
    const SrType *bt = bm ? sr_ad_type(ad, bm) : NULL;
    if (!bt) return -1;
    int nd = bt->ndim;
    /* (..., m, k, n) -> (..., m, k * n) */
    SrTypeBuilder fb;
    sr_type_builder(&fb, bt);
    fb.dims[nd - 2].size = bt->dims[nd - 2].size * bt->dims[nd - 1].size;
    fb.dims[nd - 2].nax = 0;
    fb.ndim = (uint8_t)(nd - 1);
    SrVal *flat = sr_ad_reshape_plain(ad, bm, sr_type_get(&fb));
    SrVal *in[4] = {x[0], x[1], x[2], flat};
    SrVal *o = flat ? sr_ad_bind(ad, SR_P_tridiagonal_solve, 4, in, (int)e->nparams, e->params) : NULL;
    y[0] = o ? sr_ad_reshape_plain(ad, o, bt) : NULL;
    ybd[0] = nd - 2;
    return y[0] ? 0 : -1;
  }
  SrVal *xs[4];
  for (int i = 0; i < 4; i++)
    if (!(xs[i] = sr_batch_at_front(b, x[i], bd[i], b->size))) return -1;
  return sr_batch_bind_same(b, e, xs, 0, y, ybd);
}

/* ==== registration ==== */

void sr_lax_linalg18_init(void) {
  sr_set_type_rule(SR_P_tridiagonal_solve, type_tridiagonal_solve);
  sr_set_eval_rule(SR_P_tridiagonal_solve, ev_tridiagonal_solve);
  sr_ad_set_jvp(SR_P_tridiagonal_solve, jvp_tridiagonal_solve);
  sr_ad_set_transpose(SR_P_tridiagonal_solve, tr_tridiagonal_solve);
  sr_prims[SR_P_tridiagonal_solve].batch = batch_tridiagonal_solve;
  static const struct {
    int prim;
    SrTypeRule type;
    SrEvalRule eval;
    uint32_t (*nout)(int, const SrParam *, int);
  } rows[] = {
      {SR_P_geqrf, type_geqrf, ev_geqrf, nout_two},
      {SR_P_householder_product, type_householder, ev_householder, NULL},
      {SR_P_ormqr, type_ormqr, ev_ormqr, NULL},
      {SR_P_hessenberg, type_hessenberg, ev_hessenberg, nout_two},
      {SR_P_schur, type_schur, ev_schur, nout_schur},
      {SR_P_tridiagonal, type_tridiagonal, ev_tridiagonal, nout_four},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    sr_set_type_rule(rows[i].prim, rows[i].type);
    sr_set_eval_rule(rows[i].prim, rows[i].eval);
    if (rows[i].nout) sr_prims[rows[i].prim].nout = rows[i].nout;
    sr_prims[rows[i].prim].batch = batch_expand_dims;
  }
}
