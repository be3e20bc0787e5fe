/* kern_dot.c: dot_general of one pair of shards.
 *
 * Operands are brought to [batch, rows, contracting] / [batch,
 * contracting, cols] form -- without a copy when their dims are already in
 * that order or its transpose, which BLAS takes as a flag -- and each batch
 * is one cblas_sgemm or cblas_dgemm.  float16 and bfloat16 operands are
 * widened to float32 first, and the float32 result rounded when the output
 * is narrower.  Integer dots accumulate in 64 bits and wrap to the output
 * type, as XLA's do. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kern.h"
#include "ir/type.h"
#include "util/mem.h"

typedef struct Operand {
  const void *data;  /* in the compute type */
  void *owned;       /* a copy we made, or NULL */
  int trans;         /* stored as [B, K, M] (lhs) / [B, N, K] (rhs) */
} Operand;

static int is_order(int nd, const int *order) {
  for (int i = 0; i < nd; i++)
    if (order[i] != i) return 0;
  return 1;
}

static void cat3(int *dst, const int *a, int na, const int *b, int nb, const int *c, int nc) {
  memcpy(dst, a, (size_t)na * sizeof *a);
  memcpy(dst + na, b, (size_t)nb * sizeof *b);
  memcpy(dst + na + nb, c, (size_t)nc * sizeof *c);
}

/* Brings an operand to the compute type ct and to one of its two orders:
   primary (b, x, y) or alternative (b, y, x), copying only when needed. */
static void prepare(Operand *op, SrDtype dt, SrDtype ct, int nd, const int64_t *shape, const void *data,
                    const int *prim, const int *alt) {
  size_t n = 1;
  for (int i = 0; i < nd; i++) n *= (size_t)shape[i];
  const void *src = data;
  void *conv = NULL;
  if (dt != ct) {
    conv = sr_xmalloc((n ? n : 1) * sr_dtype_info(ct)->size);
    sr_kern_convert(dt, ct, n, data, conv);
    src = conv;
  }
  op->trans = 0;
  op->owned = conv;
  op->data = src;
  if (is_order(nd, prim)) return;
  if (is_order(nd, alt)) {
    op->trans = 1;
    return;
  }
  void *t = sr_xmalloc((n ? n : 1) * sr_dtype_info(ct)->size);
  sr_kern_transpose(sr_dtype_info(ct)->size, nd, shape, prim, src, t);
  free(conv);
  op->owned = t;
  op->data = t;
}

static SrDtype compute_type(SrDtype l, SrDtype r, SrDtype o) {
  if (sr_dtype_is_complex(l) || sr_dtype_is_complex(r) || sr_dtype_is_complex(o)) {
    if (l == SR_C128 || r == SR_C128 || o == SR_C128 || l == SR_F64 || r == SR_F64 || o == SR_F64) return SR_C128;
    return SR_C64;
  }
  int lf = sr_dtype_is_float(l), rf = sr_dtype_is_float(r);
  if (lf || rf || sr_dtype_is_float(o)) {
    if (l == SR_F64 || r == SR_F64 || o == SR_F64) return SR_F64;
    return SR_F32;
  }
  return SR_I64;
}

const char *sr_kern_blas_config(void) { return openblas_get_config(); }

static long nadds;

long sr_kern_dot_adds(void) { return __atomic_load_n(&nadds, __ATOMIC_RELAXED); }

int sr_kern_dot(SrDtype ldt, SrDtype rdt, SrDtype odt, int lnd, const int64_t *lshape, const void *lhs, int rnd,
                const int64_t *rshape, const void *rhs, int nb, const int *lb, const int *rb, int nc, const int *lc,
                const int *rc, int acc, void *out) {
  int lf[SR_MAX_RANK], rf[SR_MAX_RANK], nlf = 0, nrf = 0;
  for (int i = 0; i < lnd; i++) {
    int used = 0;
    for (int k = 0; k < nb; k++) used |= lb[k] == i;
    for (int k = 0; k < nc; k++) used |= lc[k] == i;
    if (!used) lf[nlf++] = i;
  }
  for (int i = 0; i < rnd; i++) {
    int used = 0;
    for (int k = 0; k < nb; k++) used |= rb[k] == i;
    for (int k = 0; k < nc; k++) used |= rc[k] == i;
    if (!used) rf[nrf++] = i;
  }
  int64_t B = 1, M = 1, K = 1, N = 1;
  for (int k = 0; k < nb; k++) B *= lshape[lb[k]];
  for (int k = 0; k < nlf; k++) M *= lshape[lf[k]];
  for (int k = 0; k < nc; k++) K *= lshape[lc[k]];
  for (int k = 0; k < nrf; k++) N *= rshape[rf[k]];
  size_t osz = sr_dtype_info(odt)->size, total = (size_t)(B * M * N);
  if (!total) return 0;
  SrDtype ct = compute_type(ldt, rdt, odt);
  size_t csz = sr_dtype_info(ct)->size;
  if (acc && (ct != odt || (ct != SR_F32 && ct != SR_F64 && !sr_dtype_is_complex(ct)))) return -1;
  if (acc) __atomic_fetch_add(&nadds, 1, __ATOMIC_RELAXED);
  if (K == 0) {
    if (!acc) memset(out, 0, total * osz);
    return 0;
  }
  int lp[SR_MAX_RANK], la[SR_MAX_RANK], rp[SR_MAX_RANK], ra[SR_MAX_RANK];
  cat3(lp, lb, nb, lf, nlf, lc, nc);
  cat3(la, lb, nb, lc, nc, lf, nlf);
  cat3(rp, rb, nb, rc, nc, rf, nrf);
  cat3(ra, rb, nb, rf, nrf, rc, nc);
  Operand L, R;
  prepare(&L, ldt, ct, lnd, lshape, lhs, lp, la);
  prepare(&R, rdt, ct, rnd, rshape, rhs, rp, ra);
  void *c = odt == ct ? out : sr_xmalloc(total * csz);
  if (sr_dtype_is_complex(ct)) {
    /* cblas_cgemm / cblas_zgemm: alpha and beta by address */
    CBLAS_TRANSPOSE ta = L.trans ? CblasTrans : CblasNoTrans, tb = R.trans ? CblasTrans : CblasNoTrans;
    blasint lda = (blasint)(L.trans ? M : K), ldb = (blasint)(R.trans ? K : N), ldc = (blasint)N;
    const float one32[2] = {1, 0}, beta32[2] = {acc ? 1.0f : 0.0f, 0};
    const double one64[2] = {1, 0}, beta64[2] = {acc ? 1.0 : 0.0, 0};
    for (int64_t b = 0; b < B; b++) {
      if (ct == SR_C64)
        cblas_cgemm(CblasRowMajor, ta, tb, (blasint)M, (blasint)N, (blasint)K, one32,
                    (const float *)L.data + 2 * b * M * K, lda, (const float *)R.data + 2 * b * K * N, ldb, beta32,
                    (float *)c + 2 * b * M * N, ldc);
      else
        cblas_zgemm(CblasRowMajor, ta, tb, (blasint)M, (blasint)N, (blasint)K, one64,
                    (const double *)L.data + 2 * b * M * K, lda, (const double *)R.data + 2 * b * K * N, ldb, beta64,
                    (double *)c + 2 * b * M * N, ldc);
    }
  } else if (ct == SR_F32 || ct == SR_F64) {
    CBLAS_TRANSPOSE ta = L.trans ? CblasTrans : CblasNoTrans, tb = R.trans ? CblasTrans : CblasNoTrans;
    blasint lda = (blasint)(L.trans ? M : K), ldb = (blasint)(R.trans ? K : N), ldc = (blasint)N;
    for (int64_t b = 0; b < B; b++) {
      if (ct == SR_F32)
        cblas_sgemm(CblasRowMajor, ta, tb, (blasint)M, (blasint)N, (blasint)K, 1.0f,
                    (const float *)L.data + b * M * K, lda, (const float *)R.data + b * K * N, ldb, acc ? 1.0f : 0.0f,
                    (float *)c + b * M * N, ldc);
      else
        cblas_dgemm(CblasRowMajor, ta, tb, (blasint)M, (blasint)N, (blasint)K, 1.0,
                    (const double *)L.data + b * M * K, lda, (const double *)R.data + b * K * N, ldb, acc ? 1.0 : 0.0,
                    (double *)c + b * M * N, ldc);
    }
  } else {
    const int64_t *x = L.data, *y = R.data;
    int64_t *o = c;
    for (int64_t b = 0; b < B; b++)
      for (int64_t i = 0; i < M; i++) {
        int64_t *row = o + (b * M + i) * N;
        for (int64_t j = 0; j < N; j++) row[j] = 0;
        for (int64_t k = 0; k < K; k++) {
          int64_t a = L.trans ? x[b * M * K + k * M + i] : x[b * M * K + i * K + k];
          if (!a) continue;
          for (int64_t j = 0; j < N; j++) {
            int64_t v = R.trans ? y[b * K * N + j * K + k] : y[b * K * N + k * N + j];
            row[j] = (int64_t)((uint64_t)row[j] + (uint64_t)a * (uint64_t)v);
          }
        }
      }
  }
  int rcode = 0;
  if (c != out) {
    rcode = sr_kern_convert(ct, odt, total, c, out);
    free(c);
  }
  free(L.owned);
  free(R.owned);
  return rcode;
}
