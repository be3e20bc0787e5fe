/* linalg21.c: the rules of lax/linalg.py's eig_p, the eigendecomposition
 * of a general square matrix: its type rule (_eig_dtype_rule: the complex
 * dtype of the operand's; _eig_shape_rule: the eigenvalues, then the left
 * and the right eigenvectors as asked), its eval rule through LAPACK's
 * geev as JAX's CPU lowering calls it (a failed decomposition's results
 * NaN; a real matrix's eigenvectors unpacked from geev's conjugate pairs,
 * _unpack_conjugate_pairs), and its batch rule (the batch dim moved to the
 * front).  No JVP rule: JAX's needs a complex linear solve.  Registered by
 * sr_lax_linalg21_init. */
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

/* ==== the type rule ==== */

static int flag_param(const SrParam *ps, int np, const char *key, int dflt) {
  for (int i = 0; i < np; i++)
    if (strcmp(ps[i].key, key) == 0 && ps[i].val && ps[i].val->kind == SR_V_BOOL) return ps[i].val->i != 0;
  return dflt;
}

static uint32_t nout_eig(int nin, const SrParam *ps, int np) {
  (void)nin;
  return 1 + (uint32_t)flag_param(ps, np, "compute_left_eigenvectors", 1) +
         (uint32_t)flag_param(ps, np, "compute_right_eigenvectors", 1);
}

static int type_eig(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  int left = 1, right = 1;
  if (sr_rparam_bool(cx, e, "compute_left_eigenvectors", 0, &left) < 0 ||
      sr_rparam_bool(cx, e, "compute_right_eigenvectors", 0, &right) < 0)
    return -1;
  if (sr_rule_arity(cx, e, 1, 1 + left + right) < 0 || sr_linalg_check_operand(cx, e, "eig") < 0) return -1;
  const SrType *x = e->in[0];
  int64_t m = x->dims[x->ndim - 2].size, n = x->dims[x->ndim - 1].size;
  if (m != n)
    return sr_terr(cx, "ValueError", "The input to eig must be a square matrix. Got shape (%lld, %lld).",
                   (long long)m, (long long)n);
  SrDtype cd = sr_dtype_complex_of(x->dtype);
  int k = 0;
  out[k++] = sr_linalg_result_type(x, cd, n, -1);
  for (int i = 0; i < left + right; i++) out[k++] = sr_linalg_result_type(x, cd, n, n);
  return 0;
}

/* ==== LAPACK ==== */

typedef struct EigCall {
  SrDtype dt;
  int nd, left, right;
  int64_t n;
} EigCall;

#ifdef HAVE_LAPACK
void sgeev_(const char *jobvl, const char *jobvr, const int *n, float *a, const int *lda, float *wr, float *wi,
            float *vl, const int *ldvl, float *vr, const int *ldvr, float *work, const int *lwork, int *info,
            size_t l1, size_t l2);
void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda, double *wr, double *wi,
            double *vl, const int *ldvl, double *vr, const int *ldvr, double *work, const int *lwork, int *info,
            size_t l1, size_t l2);
void cgeev_(const char *jobvl, const char *jobvr, const int *n, float _Complex *a, const int *lda,
            float _Complex *w, float _Complex *vl, const int *ldvl, float _Complex *vr, const int *ldvr,
            float _Complex *work, const int *lwork, float *rwork, int *info, size_t l1, size_t l2);
void zgeev_(const char *jobvl, const char *jobvr, const int *n, double _Complex *a, const int *lda,
            double _Complex *w, double _Complex *vl, const int *ldvl, double _Complex *vr, const int *ldvr,
            double _Complex *work, const int *lwork, double *rwork, int *info, size_t l1, size_t l2);

/* One batch of nb real n x n matrices (R the real type, C its complex):
   w (nb x n), vl and vr (nb x n x n, row-major, column j eigenvector j),
   either NULL when not asked for. */
#define EIG_REAL(R, C, P)                                                                                    \
  /* geev's packed eigenvectors (column-major) as complex row-major ones:                                \
     a pair w[j], w[j+1] = conj(w[j]) has v_j = V(:, j) + i V(:, j+1) and                                 \
     v_{j+1} its conjugate */                                                                             \
  static void unpack_##R(const R *v, const R *wi, C *out, int n) {                                        \
    for (int j = 0; j < n; j++) {                                                                         \
      int pair = wi[j] != 0 && j + 1 < n;                                                                 \
      for (int i = 0; i < n; i++) {                                                                       \
        R re = v[i + (int64_t)j * n], im = pair ? v[i + (int64_t)(j + 1) * n] : 0;                        \
        out[(int64_t)i * n + j] = re + im * (C)_Complex_I;                                                \
        if (pair) out[(int64_t)i * n + j + 1] = re - im * (C)_Complex_I;                                  \
      }                                                                                                   \
      if (pair) j++;                                                                                      \
    }                                                                                                     \
  }                                                                                                       \
  static void eig_##R(const EigCall *c, const R *x, C *w, C *vl, C *vr, int64_t nb) {                    \
    int n = (int)c->n, ld = n > 1 ? n : 1, info = 0, lw = -1;                                             \
    const char *jl = vl ? "V" : "N", *jr = vr ? "V" : "N";                                               \
    R *a = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(R));                                              \
    R *wr = sr_xcalloc((size_t)n + 1, sizeof(R)), *wi = sr_xcalloc((size_t)n + 1, sizeof(R));            \
    R *l = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(R)), *r = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(R)); \
    R wq = 1;                                                                                             \
    if (n > 0) P##geev_(jl, jr, &n, a, &ld, wr, wi, l, &ld, r, &ld, &wq, &lw, &info, 1, 1);               \
    int lwork = wq > 1 ? (int)wq : 1;                                                                     \
    R *work = sr_xcalloc((size_t)lwork, sizeof(R));                                                       \
    for (int64_t b = 0; b < nb; b++) {                                                                    \
      const R *xb = x + b * n * n;                                                                        \
      for (int i = 0; i < n; i++)                                                                         \
        for (int j = 0; j < n; j++) a[i + (int64_t)j * n] = xb[(int64_t)i * n + j];                       \
      info = 0;                                                                                           \
      if (n > 0) P##geev_(jl, jr, &n, a, &ld, wr, wi, l, &ld, r, &ld, work, &lwork, &info, 1, 1);         \
      C *wb = w + b * n;                                                                                  \
      for (int j = 0; j < n; j++) wb[j] = info ? (C)NAN : wr[j] + wi[j] * (C)_Complex_I;                  \
      if (vl) unpack_##R(l, wi, vl + b * n * n, n);                                                       \
      if (vr) unpack_##R(r, wi, vr + b * n * n, n);                                                       \
      for (int64_t i = 0; info && i < (int64_t)n * n; i++) {                                              \
        if (vl) vl[b * n * n + i] = (C)NAN;                                                               \
        if (vr) vr[b * n * n + i] = (C)NAN;                                                               \
      }                                                                                                   \
    }                                                                                                     \
    free(work);                                                                                           \
    free(a), free(wr), free(wi), free(l), free(r);                                                        \
  }
EIG_REAL(float, float _Complex, s)
EIG_REAL(double, double _Complex, d)
#undef EIG_REAL

/* The same of complex matrices: geev's eigenvectors need no unpacking. */
#define EIG_COMPLEX(R, C, P)                                                                                 \
  static void eigc_##R(const EigCall *c, const C *x, C *w, C *vl, C *vr, int64_t nb) {                   \
    int n = (int)c->n, ld = n > 1 ? n : 1, info = 0, lw = -1;                                             \
    const char *jl = vl ? "V" : "N", *jr = vr ? "V" : "N";                                               \
    C *a = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(C));                                              \
    C *l = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(C)), *r = sr_xcalloc((size_t)n * (size_t)n + 1, sizeof(C)); \
    R *rwork = sr_xcalloc(2 * (size_t)n + 1, sizeof(R));                                                  \
    C wq = 1;                                                                                             \
    if (n > 0) P##geev_(jl, jr, &n, a, &ld, w, l, &ld, r, &ld, &wq, &lw, rwork, &info, 1, 1);             \
    int lwork = creal(wq) > 1 ? (int)creal(wq) : 1;                                                       \
    C *work = sr_xcalloc((size_t)lwork, sizeof(C));                                                       \
    for (int64_t b = 0; b < nb; b++) {                                                                    \
      const C *xb = x + b * n * n;                                                                        \
      for (int i = 0; i < n; i++)                                                                         \
        for (int j = 0; j < n; j++) a[i + (int64_t)j * n] = xb[(int64_t)i * n + j];                       \
      info = 0;                                                                                           \
      C *wb = w + b * n;                                                                                  \
      if (n > 0) P##geev_(jl, jr, &n, a, &ld, wb, l, &ld, r, &ld, work, &lwork, rwork, &info, 1, 1);      \
      for (int j = 0; info && j < n; j++) wb[j] = (C)NAN;                                                 \
      for (int i = 0; i < n; i++)                                                                         \
        for (int j = 0; j < n; j++) {                                                                     \
          int64_t o = b * n * n + (int64_t)i * n + j, s = i + (int64_t)j * n;                             \
          if (vl) vl[o] = info ? (C)NAN : l[s];                                                           \
          if (vr) vr[o] = info ? (C)NAN : r[s];                                                           \
        }                                                                                                 \
    }                                                                                                     \
    free(work);                                                                                           \
    free(a), free(l), free(r), free(rwork);                                                               \
  }
EIG_COMPLEX(float, float _Complex, c)
EIG_COMPLEX(double, double _Complex, z)
#undef EIG_COMPLEX
#endif

static int eig_fn(SrShardIO *io) {
  EigCall *c = io->arg;
  int64_t nb = 1;
  for (int i = 0; i < c->nd - 2; i++) nb *= io->in_shape[0][i];
#ifdef HAVE_LAPACK
  void *w = io->out[0]->data;
  void *vl = c->left ? io->out[1]->data : NULL, *vr = c->right ? io->out[1 + c->left]->data : NULL;
  const void *x = io->in[0]->data;
  switch (c->dt) {
  case SR_F32: eig_float(c, x, w, vl, vr, nb); break;
  case SR_F64: eig_double(c, x, w, vl, vr, nb); break;
  case SR_C64: eigc_float(c, x, w, vl, vr, nb); break;
  default: eigc_double(c, x, w, vl, vr, nb); break;
  }
#else
  (void)nb;
#endif
  return 0;
}

static int ev_eig(SrEvalCtx *cx, const SrEvalEqn *e) {
#ifndef HAVE_LAPACK
  return sr_ev_err(cx, "NotImplementedError", "eig needs LAPACK, which this shardrepl was built without");
#endif
  EigCall c;
  memset(&c, 0, sizeof c);
  const SrType *xt = e->in[0]->type;
  c.nd = xt->ndim;
  c.dt = xt->dtype;
  c.n = xt->dims[xt->ndim - 1].size;
  SrVal *l = sr_ev_param(e, "compute_left_eigenvectors"), *r = sr_ev_param(e, "compute_right_eigenvectors");
  c.left = !l || l->kind != SR_V_BOOL || l->i;
  c.right = !r || r->kind != SR_V_BOOL || r->i;
  if (c.dt != SR_F32 && c.dt != SR_F64 && c.dt != SR_C64 && c.dt != SR_C128)
    return sr_ev_err(cx, "NotImplementedError", "eig of %s is not implemented", sr_dtype_name(c.dt));
  if (c.n > 1 << 16) return sr_ev_err(cx, "NotImplementedError", "eig of a matrix this large");
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *lay[3];
  SrArray *in = NULL, *outs[3] = {0};
  int rc = 0;
  for (uint32_t i = 0; i < e->nout; i++) lay[i] = sr_ev_out_layout(cx, e, i, m);
  int nb = c.nd - 2;
  if (!(in = sr_redistribute(cx, e->in[0], m, sr_linalg_whole_matrix(e->in[0]->layout, lay[0], nb + 2)))) rc = -1;
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    outs[i] = sr_array_new(e->out_type[i], sr_linalg_whole_matrix(lay[i], lay[i], nb + 2), m);
  if (rc == 0) rc = sr_ev_map(cx, 1, &in, (int)e->nout, outs, 0, eig_fn, &c);
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    if (!(e->out[i] = sr_redistribute_typed(cx, outs[i], m, lay[i], e->out_type[i]))) rc = -1;
  sr_array_unref(in);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(outs[i]);
  return rc;
}

/* ==== registration ==== */

void sr_lax_linalg21_init(void) {
  sr_prims[SR_P_eig].nout = nout_eig;
  sr_set_type_rule(SR_P_eig, type_eig);
  sr_set_eval_rule(SR_P_eig, ev_eig);
  sr_prims[SR_P_eig].batch = sr_linalg_batch_front;
}
