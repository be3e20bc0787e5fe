/* linalg.c: the rules of the linear-algebra primitives qr and svd
 * (lax/linalg.py's qr_p and svd_p, made by linalg_primitive): their type
 * rules (linalg_shape_rule, naryop_dtype_rule, linalg_sharding_rule: the
 * leading batch dimensions may be sharded, the matrix dimensions may not),
 * their eval rules through LAPACK as JAX's CPU lowering calls it (geqrf
 * then orgqr, _qr_lowering; gesdd, _svd_cpu_gpu_lowering), their JVP rules
 * (qr_jvp_rule, _svd_jvp_rule) and batch rules (expand_dims_batcher: the
 * batch dimension moved to the front).  Registered by sr_lax_linalg_init.
 *
 * LAPACK comes with OpenBLAS (Debian's libopenblas has its Fortran
 * symbols; configure defines HAVE_LAPACK): without it the eval rules raise
 * NotImplementedError.  float32 and float64 only; complex operands type
 * check but do not evaluate. */
#include "config.h"

#include "lax/lax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ad/batch.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "util/intern.h"

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

/* One (batch of) QR / SVD in precision T with LAPACK routines P##geqrf
   etc.: a row-major block of `nb` m x n matrices in, row-major results
   out, each as JAX's lowering computes it. */
#define LINALG_IMPL(T, P)                                                                                              \
  static void qr_##T(const LinArg *a, const T *x, T *q, T *r, int64_t nb) {                                          \
    int m = (int)a->m, n = (int)a->n, k = MINI(m, n), qc = a->full ? m : k, rr = a->full ? m : k;                    \
    int ld = MAXI(m, 1), qcols = m < n ? m : a->full ? m : n, info = 0, lw = -1;                                     \
    T *w = sr_xcalloc((size_t)ld * (size_t)MAXI(n, m) + 1, sizeof(T)), *tau = sr_xcalloc((size_t)k + 1, sizeof(T)); \
    T wq = 0, wq2 = 0;                                                                                                 \
    if (k > 0) {                                                                                                       \
      P##geqrf_(&m, &n, w, &ld, tau, &wq, &lw, &info);                                                                 \
      P##orgqr_(&m, &qcols, &k, w, &ld, tau, &wq2, &lw, &info);                                                        \
    }                                                                                                                  \
    int lwork = (int)MAXI(MAXI(wq, wq2), 1);                                                                           \
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
      P##orgqr_(&m, &qcols, &k, w, &ld, tau, work, &lwork, &info);                                                     \
      for (int i = 0; i < m; i++)                                                                                      \
        for (int j = 0; j < qc; j++) qb[(int64_t)i * qc + j] = w[i + (int64_t)j * ld];                                 \
    }                                                                                                                  \
    free(work);                                                                                                        \
    free(w);                                                                                                           \
    free(tau);                                                                                                         \
  }                                                                                                                    \
                                                                                                                       \
  static void svd_##T(const LinArg *a, const T *x, T *s, T *u, T *vt, int64_t nb) {                                  \
    int m = (int)a->m, n = (int)a->n, k = MINI(m, n), ld = MAXI(m, 1), info = 0, lw = -1;                            \
    int uc = a->full ? m : k, vr = a->full ? n : k, ldu = MAXI(m, 1), ldvt = MAXI(vr, 1);                           \
    char job = !a->uv ? 'N' : a->full ? 'A' : 'S';                                                                     \
    T *w = sr_xcalloc((size_t)ld * (size_t)MAXI(n, 1), sizeof(T));                                                    \
    T *uw = sr_xcalloc((size_t)ldu * (size_t)MAXI(uc, 1), sizeof(T));                                                 \
    T *vw = sr_xcalloc((size_t)ldvt * (size_t)MAXI(n, 1), sizeof(T));                                                 \
    int *iw = sr_xcalloc((size_t)(8 * MAXI(k, 1)), sizeof(int));                                                       \
    T wq = 1;                                                                                                          \
    if (k > 0) P##gesdd_(&job, &m, &n, w, &ld, s, uw, &ldu, vw, &ldvt, &wq, &lw, iw, &info, 1);                        \
    int lwork = (int)MAXI(wq, 1);                                                                                      \
    T *work = sr_xcalloc((size_t)lwork, sizeof(T));                                                                   \
    for (int64_t b = 0; b < nb; b++) {                                                                                 \
      const T *xb = x + b * (int64_t)m * n;                                                                            \
      T *sb = s + b * k, *ub = u ? u + b * (int64_t)m * uc : NULL, *vb = vt ? vt + b * (int64_t)vr * n : NULL;        \
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
      P##gesdd_(&job, &m, &n, w, &ld, sb, uw, &ldu, vw, &ldvt, work, &lwork, iw, &info, 1);                            \
      if (info != 0) { /* no convergence: NaNs, as JAX's lowering */                                                 \
        for (int i = 0; i < k; i++) sb[i] = (T)NAN;                                                                    \
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
    free(iw);                                                                                                          \
    free(vw);                                                                                                          \
    free(uw);                                                                                                          \
    free(w);                                                                                                           \
  }

#ifdef HAVE_LAPACK
LINALG_IMPL(float, s)
LINALG_IMPL(double, d)
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
    if (c->a.dt == SR_F32) qr_float(&c->a, x, io->out[0]->data, io->out[1]->data, nb);
    else qr_double(&c->a, x, io->out[0]->data, io->out[1]->data, nb);
  } else {
    void *u = c->a.uv ? io->out[1]->data : NULL, *vt = c->a.uv ? io->out[2]->data : NULL;
    if (c->a.dt == SR_F32) svd_float(&c->a, x, io->out[0]->data, u, vt, nb);
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
  if (c.a.dt != SR_F32 && c.a.dt != SR_F64)
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

/* ==== JVP ==== */

/* _svd_jvp_rule for compute_uv=False: s, U, Vt from svd(full_matrices=
   False, compute_uv=True); ds the diagonal of U^T dA V, here
   contracted directly (U over its rows, Vt over its columns) and the
   diagonal taken as the sum over the last axis of dS times the identity.
   The singular vectors' tangents (compute_uv=True) are not written yet. */
static int jvp_svd(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  if (param_flag(e, "compute_uv", 1))
    return sr_raise(ad->I, "NotImplementedError",
                    "the JVP of svd with compute_uv=True is not implemented (compute_uv=False is)"),
           -1;
  const SrType *xt = sr_ad_type(ad, x[0]);
  SrVal *r = sr_ad_bindv(ad, SR_P_svd, 1, x, "full_matrices", sr_bool(0), "compute_uv", sr_bool(1),
                         "subset_by_index", param(e, "subset_by_index") ? sr_ref(param(e, "subset_by_index")) : sr_none(),
                         "algorithm", param(e, "algorithm") ? sr_ref(param(e, "algorithm")) : sr_none(), NULL);
  if (!r) return -1;
  y[0] = r->seq.items[0];
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *u = r->seq.items[1], *vt = r->seq.items[2];
  int nd = xt->ndim, nb = nd - 2;
  int64_t bat[SR_MAX_RANK];
  for (int i = 0; i < nb; i++) bat[i] = i;
  const SrBinder *b = SR_AD_BINDER(ad);
  /* U^T dA: (..., k, n); then (U^T dA) Vt^T: (..., k, k) */
  int64_t lc = nd - 2, rc = nd - 2, lc2 = nd - 1, rc2 = nd - 1;
  SrVal *udA = sr_ad_keep(ad, sr_op_dot_general(b, u, t[0], &lc, 1, &rc, 1, bat, nb, bat, nb, NULL, -1, NULL));
  SrVal *ds = udA ? sr_ad_keep(ad, sr_op_dot_general(b, udA, vt, &lc2, 1, &rc2, 1, bat, nb, bat, nb, NULL, -1, NULL))
                  : NULL;
  if (!ds) return -1;
  const SrType *dt = sr_ad_type(ad, ds);
  int64_t k = dt->dims[nd - 1].size, kk[2] = {k, k};
  SrVal *i0 = sr_ad_keep(ad, sr_op_iota(b, SR_I32, kk, 2, 0, NULL));
  SrVal *i1 = sr_ad_keep(ad, sr_op_iota(b, SR_I32, kk, 2, 1, NULL));
  SrVal *eye = i1 ? sr_ad_convert(ad, sr_ad_binop(ad, SR_P_eq, i0, i1), dt->dtype, 0) : NULL;
  int64_t last[2] = {nd - 2, nd - 1};
  SrVal *beye = eye ? sr_ad_broadcast_in_dim(ad, eye, dt, last, 2, 0) : NULL;
  int64_t ax = nd - 1;
  ty[0] = beye ? sr_ad_reduce_sum(ad, sr_ad_mul(ad, ds, beye), &ax, 1, NULL) : NULL;
  return ty[0] ? 0 : -1;
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
  sr_prims[SR_P_svd].batch = batch_linalg;
}
