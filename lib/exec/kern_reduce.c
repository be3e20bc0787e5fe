/* kern_reduce.c: reductions, arg-reductions and scans of one shard.
 *
 * A reduction first merges neighbouring dims that are all kept or all
 * reduced; the common shapes -- reduce the inner part, reduce the outer
 * part, reduce a middle part -- then run as plain loops, and any other
 * pattern is transposed into "kept dims, then reduced dims" first.
 * Float sums of a row use eight running partial sums (a fixed order, so
 * results are reproducible), which is both faster and more accurate than
 * one.  float16 and bfloat16 are reduced in float32 and rounded once. */
#include "exec/kern.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/prng.h"
#include "ir/type.h"
#include "util/mem.h"

#define FMAXR(p, q) ((p) != (p) || (q) != (q) ? (p) + (q) : ((p) < (q) ? (q) : (p)))
#define FMINR(p, q) ((p) != (p) || (q) != (q) ? (p) + (q) : ((q) < (p) ? (q) : (p)))
#define IMAX(p, q) ((p) < (q) ? (q) : (p))
#define IMIN(p, q) ((q) < (p) ? (q) : (p))

/* One family of loops per element type: T the element, W the type sums
   are formed in (unsigned for signed ints, so that they wrap). */
#define REDUCERS(SUF, T, W, ISF, LOWEST, HIGHEST, ONES, AND, OR)                                        \
  static T ident_##SUF(int op) {                                                         \
    switch (op) {                                                                        \
    case SR_KR_SUM: case SR_KR_OR: return (T)0;                                          \
    case SR_KR_PROD: return (T)1;                                                        \
    case SR_KR_MAX: return LOWEST;                                                       \
    case SR_KR_MIN: return HIGHEST;                                                      \
    default: return (T)(ONES);                                                                \
    }                                                                                    \
  }                                                                                      \
  static T comb_##SUF(int op, T a, T b) {                                                \
    switch (op) {                                                                        \
    case SR_KR_SUM: return (T)((W)a + (W)b);                                             \
    case SR_KR_PROD: return (T)((W)a * (W)b);                                            \
    case SR_KR_MAX: return ISF ? FMAXR(a, b) : IMAX(a, b);                               \
    case SR_KR_MIN: return ISF ? FMINR(a, b) : IMIN(a, b);                               \
    case SR_KR_AND: return (T)(AND);                                                     \
    default: return (T)(OR);                                                             \
    }                                                                                    \
  }                                                                                      \
  static T row_##SUF(int op, int64_t n, const T *x) {                                    \
    if (n == 0) return ident_##SUF(op);                                                  \
    if (op == SR_KR_SUM && ISF && n >= 16) {                                             \
      T s[8] = {0};                                                                      \
      int64_t i = 0;                                                                     \
      for (; i + 8 <= n; i += 8)                                                         \
        for (int k = 0; k < 8; k++) s[k] = (T)(s[k] + x[i + k]);                         \
      T r = (T)(((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])));      \
      for (; i < n; i++) r = (T)(r + x[i]);                                              \
      return r;                                                                          \
    }                                                                                    \
    T r = x[0];                                                                          \
    switch (op) {                                                                        \
    case SR_KR_SUM: for (int64_t i = 1; i < n; i++) r = (T)((W)r + (W)x[i]); break;      \
    case SR_KR_MAX: for (int64_t i = 1; i < n; i++) r = ISF ? FMAXR(r, x[i]) : IMAX(r, x[i]); break; \
    case SR_KR_MIN: for (int64_t i = 1; i < n; i++) r = ISF ? FMINR(r, x[i]) : IMIN(r, x[i]); break; \
    default: for (int64_t i = 1; i < n; i++) r = comb_##SUF(op, r, x[i]); break;         \
    }                                                                                    \
    return r;                                                                            \
  }                                                                                      \
  /* out[k] = fold over r of x[r * K + k] */                                             \
  static void cols_##SUF(int op, int64_t R, int64_t K, const T *x, T *out) {             \
    if (R == 0) {                                                                        \
      for (int64_t k = 0; k < K; k++) out[k] = ident_##SUF(op);                          \
      return;                                                                            \
    }                                                                                    \
    memcpy(out, x, (size_t)K * sizeof(T));                                               \
    for (int64_t r = 1; r < R; r++) {                                                    \
      const T *y = x + r * K;                                                            \
      switch (op) {                                                                      \
      case SR_KR_SUM: for (int64_t k = 0; k < K; k++) out[k] = (T)((W)out[k] + (W)y[k]); break; \
      case SR_KR_MAX: for (int64_t k = 0; k < K; k++) out[k] = ISF ? FMAXR(out[k], y[k]) : IMAX(out[k], y[k]); break; \
      case SR_KR_MIN: for (int64_t k = 0; k < K; k++) out[k] = ISF ? FMINR(out[k], y[k]) : IMIN(out[k], y[k]); break; \
      default: for (int64_t k = 0; k < K; k++) out[k] = comb_##SUF(op, out[k], y[k]); break; \
      }                                                                                  \
    }                                                                                    \
  }                                                                                      \
  /* in viewed as [A, R, K]: out[a, k] = fold over r */                                  \
  static void red3_##SUF(int op, int64_t A, int64_t R, int64_t K, const void *in, void *out) { \
    const T *x = in;                                                                     \
    T *o = out;                                                                          \
    for (int64_t a = 0; a < A; a++) {                                                    \
      if (K == 1) o[a] = row_##SUF(op, R, x + a * R);                                    \
      else cols_##SUF(op, R, K, x + a * R * K, o + a * K);                               \
    }                                                                                    \
  }

REDUCERS(b, uint8_t, uint8_t, 0, 0, 1, 1, a & b, a | b)
REDUCERS(i8, int8_t, uint8_t, 0, INT8_MIN, INT8_MAX, (int8_t)~(uint8_t)0, (uint8_t)a & (uint8_t)b, (uint8_t)a | (uint8_t)b)
REDUCERS(i16, int16_t, uint16_t, 0, INT16_MIN, INT16_MAX, (int16_t)~(uint16_t)0, (uint16_t)a & (uint16_t)b, (uint16_t)a | (uint16_t)b)
REDUCERS(i32, int32_t, uint32_t, 0, INT32_MIN, INT32_MAX, (int32_t)~(uint32_t)0, (uint32_t)a & (uint32_t)b, (uint32_t)a | (uint32_t)b)
REDUCERS(i64, int64_t, uint64_t, 0, INT64_MIN, INT64_MAX, (int64_t)~(uint64_t)0, (uint64_t)a & (uint64_t)b, (uint64_t)a | (uint64_t)b)
REDUCERS(u8, uint8_t, uint8_t, 0, 0, UINT8_MAX, (uint8_t)~(uint8_t)0, (uint8_t)a & (uint8_t)b, (uint8_t)a | (uint8_t)b)
REDUCERS(u16, uint16_t, uint16_t, 0, 0, UINT16_MAX, (uint16_t)~(uint16_t)0, (uint16_t)a & (uint16_t)b, (uint16_t)a | (uint16_t)b)
REDUCERS(u32, uint32_t, uint32_t, 0, 0, UINT32_MAX, (uint32_t)~(uint32_t)0, (uint32_t)a & (uint32_t)b, (uint32_t)a | (uint32_t)b)
REDUCERS(u64, uint64_t, uint64_t, 0, 0, UINT64_MAX, (uint64_t)~(uint64_t)0, (uint64_t)a & (uint64_t)b, (uint64_t)a | (uint64_t)b)
REDUCERS(f32, float, float, 1, -INFINITY, INFINITY, 1, a != 0 && b != 0, a != 0 || b != 0)
REDUCERS(f64, double, double, 1, -INFINITY, INFINITY, 1, a != 0 && b != 0, a != 0 || b != 0)

/* complex64 and complex128: sums (eight partial sums along a row, as for
   floats) and products only */
#define CREDUCERS(SUF, T)                                                                \
  static void red3_##SUF(int op, int64_t A, int64_t R, int64_t K, const void *in, void *out) { \
    const T *x = in;                                                                     \
    T *o = out;                                                                          \
    int sum = op == SR_KR_SUM;                                                           \
    for (int64_t a = 0; a < A; a++)                                                      \
      for (int64_t k = 0; k < K; k++) {                                                  \
        const T *y = x + a * R * K + k;                                                  \
        T r = sum ? (T)0 : (T)1;                                                         \
        int64_t i = 0;                                                                   \
        if (sum && K == 1 && R >= 16) {                                                  \
          T s[8] = {0};                                                                  \
          for (; i + 8 <= R; i += 8)                                                     \
            for (int j = 0; j < 8; j++) s[j] += y[i + j];                                \
          r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));         \
        }                                                                                \
        for (; i < R; i++) r = sum ? r + y[i * K] : r * y[i * K];                        \
        o[a * K + k] = r;                                                                \
      }                                                                                  \
  }
CREDUCERS(c64, float _Complex)
CREDUCERS(c128, double _Complex)
#undef CREDUCERS

typedef void (*Red3)(int op, int64_t A, int64_t R, int64_t K, const void *in, void *out);

static Red3 red3_for(SrDtype dt) {
  switch (dt) {
  case SR_BOOL: return red3_b;
  case SR_I8: return red3_i8;
  case SR_I16: return red3_i16;
  case SR_I32: return red3_i32;
  case SR_I64: return red3_i64;
  case SR_U8: return red3_u8;
  case SR_U16: return red3_u16;
  case SR_U32: return red3_u32;
  case SR_U64: return red3_u64;
  case SR_F32: case SR_F16: case SR_BF16: return red3_f32;
  case SR_F64: return red3_f64;
  case SR_C64: return red3_c64;
  case SR_C128: return red3_c128;
  default: return NULL;
  }
}

/* Runs of dims: sizes and whether they are reduced, size-1 dims dropped. */
static int runs(int ndim, const int64_t *shape, uint32_t axes, int64_t *size, int *red) {
  int n = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 1) continue;
    int r = (axes >> i) & 1;
    if (n && red[n - 1] == r) {
      size[n - 1] *= shape[i];
      continue;
    }
    size[n] = shape[i];
    red[n++] = r;
  }
  return n;
}

int sr_kern_reduce(int op, SrDtype dt, int ndim, const int64_t *shape, uint32_t axes, const void *in, void *out) {
  Red3 f = red3_for(dt);
  if (!f || (sr_dtype_is_complex(dt) && op != SR_KR_SUM && op != SR_KR_PROD)) return -1;
  int half = dt == SR_F16 || dt == SR_BF16, bf = dt == SR_BF16;
  int64_t nin = 1, nout = 1;
  for (int i = 0; i < ndim; i++) {
    nin *= shape[i];
    if (!((axes >> i) & 1)) nout *= shape[i];
  }
  float *fin = NULL, *fout = NULL;
  if (half) {
    fin = sr_xmalloc((size_t)(nin ? nin : 1) * sizeof *fin);
    fout = sr_xmalloc((size_t)(nout ? nout : 1) * sizeof *fout);
    for (int64_t i = 0; i < nin; i++)
      fin[i] = bf ? sr_prng_bf16_to_float(((const uint16_t *)in)[i]) : sr_prng_f16_to_float(((const uint16_t *)in)[i]);
    in = fin;
  }
  void *o = half ? (void *)fout : out;
  size_t es = half ? 4 : sr_dtype_info(dt)->size;
  int64_t size[SR_MAX_RANK];
  int red[SR_MAX_RANK];
  int n = runs(ndim, shape, axes, size, red);
  if (nin == 0) {
    /* empty reduction: the identity everywhere */
    f(op, nout, 0, 1, in, o);
  } else if (n == 0) {
    memcpy(o, in, es);
  } else if (n == 1) {
    if (red[0]) f(op, 1, size[0], 1, in, o);
    else memcpy(o, in, (size_t)size[0] * es);
  } else if (n == 2) {
    if (red[1]) f(op, size[0], size[1], 1, in, o);
    else f(op, 1, size[0], size[1], in, o);
  } else if (n == 3 && red[1]) {
    f(op, size[0], size[1], size[2], in, o);
  } else {
    /* kept dims first, then reduced dims */
    int perm[SR_MAX_RANK], np = 0;
    int64_t kept = 1, redn = 1;
    for (int i = 0; i < ndim; i++)
      if (!((axes >> i) & 1)) perm[np++] = i, kept *= shape[i];
    for (int i = 0; i < ndim; i++)
      if ((axes >> i) & 1) perm[np++] = i, redn *= shape[i];
    void *t = sr_xmalloc((size_t)nin * es);
    sr_kern_transpose(es, ndim, shape, perm, in, t);
    f(op, kept, redn, 1, t, o);
    free(t);
  }
  if (half) {
    for (int64_t i = 0; i < nout; i++)
      ((uint16_t *)out)[i] = bf ? sr_prng_bf16_from_double(fout[i]) : sr_prng_f16_from_double(fout[i]);
    free(fin);
    free(fout);
  }
  return 0;
}

/* ---- argmax / argmin ---- */

#define ARGLOOP(T, ISF)                                                          \
  do {                                                                           \
    const T *x = src;                                                            \
    for (int64_t a = 0; a < A; a++)                                              \
      for (int64_t k = 0; k < K; k++) {                                          \
        const T *p = x + a * N * K + k;                                          \
        int64_t best = 0;                                                        \
        T bv = p[0];                                                             \
        int bnan = ISF && bv != bv;                                              \
        for (int64_t i = 1; i < N && !bnan; i++) {                               \
          T v = p[i * K];                                                        \
          if (ISF && v != v) {                                                   \
            best = i;                                                            \
            bnan = 1;                                                            \
          } else if (is_max ? v > bv : v < bv) {                                 \
            best = i;                                                            \
            bv = v;                                                              \
          }                                                                      \
        }                                                                        \
        idx[a * K + k] = best;                                                   \
      }                                                                          \
  } while (0)

int sr_kern_argminmax(int is_max, SrDtype dt, SrDtype idt, int ndim, const int64_t *shape, int axis,
                      const void *in, void *out) {
  int64_t A = 1, N = shape[axis], K = 1;
  for (int i = 0; i < axis; i++) A *= shape[i];
  for (int i = axis + 1; i < ndim; i++) K *= shape[i];
  int64_t *idx = sr_xmalloc((size_t)(A * K + 1) * sizeof *idx);
  const void *src = in;
  float *tmp = NULL;
  if (dt == SR_F16 || dt == SR_BF16) {
    tmp = sr_xmalloc((size_t)(A * N * K + 1) * sizeof *tmp);
    for (int64_t i = 0; i < A * N * K; i++)
      tmp[i] = dt == SR_BF16 ? sr_prng_bf16_to_float(((const uint16_t *)in)[i])
                             : sr_prng_f16_to_float(((const uint16_t *)in)[i]);
    src = tmp;
  }
  int rc = 0;
  if (N == 0) {
    for (int64_t i = 0; i < A * K; i++) idx[i] = 0;
  } else {
    switch (dt) {
    case SR_BOOL: case SR_U8: ARGLOOP(uint8_t, 0); break;
    case SR_I8: ARGLOOP(int8_t, 0); break;
    case SR_I16: ARGLOOP(int16_t, 0); break;
    case SR_I32: ARGLOOP(int32_t, 0); break;
    case SR_I64: ARGLOOP(int64_t, 0); break;
    case SR_U16: ARGLOOP(uint16_t, 0); break;
    case SR_U32: ARGLOOP(uint32_t, 0); break;
    case SR_U64: ARGLOOP(uint64_t, 0); break;
    case SR_F32: case SR_F16: case SR_BF16: ARGLOOP(float, 1); break;
    case SR_F64: ARGLOOP(double, 1); break;
    default: rc = -1;
    }
  }
  if (rc == 0) {
    for (int64_t i = 0; i < A * K; i++) {
      if (idt == SR_I64) ((int64_t *)out)[i] = idx[i];
      else if (idt == SR_I32) ((int32_t *)out)[i] = (int32_t)idx[i];
      else sr_kern_set_scalar(idt, (double)idx[i], idx[i], (char *)out + i * sr_dtype_info(idt)->size);
    }
  }
  free(idx);
  free(tmp);
  return rc;
}

/* ---- cumulative ---- */

#define CUMLOOP(T, W, ISF)                                                       \
  do {                                                                           \
    const T *x = src;                                                            \
    T *o = dst;                                                                  \
    for (int64_t a = 0; a < A; a++)                                              \
      for (int64_t k = 0; k < K; k++) {                                          \
        int64_t base = a * N * K + k;                                            \
        T acc = 0;                                                               \
        for (int64_t j = 0; j < N; j++) {                                        \
          int64_t i = reverse ? N - 1 - j : j;                                   \
          T v = x[base + i * K];                                                 \
          if (j == 0) acc = v;                                                   \
          else if (op == SR_KR_SUM) acc = (T)((W)acc + (W)v);                    \
          else if (op == SR_KR_PROD) acc = (T)((W)acc * (W)v);                   \
          else if (op == SR_KR_MAX) acc = ISF ? FMAXR(acc, v) : IMAX(acc, v);    \
          else acc = ISF ? FMINR(acc, v) : IMIN(acc, v);                         \
          o[base + i * K] = acc;                                                 \
        }                                                                        \
      }                                                                          \
  } while (0)

/* complex cumulative sums and products */
#define CCUM(SUF, T)                                                                     \
  static int ccum_##SUF(int op, int64_t A, int64_t N, int64_t K, int reverse, const void *src, void *dst) { \
    if (op != SR_KR_SUM && op != SR_KR_PROD) return -1;                                  \
    const T *x = src;                                                                    \
    T *o = dst;                                                                          \
    for (int64_t a = 0; a < A; a++)                                                      \
      for (int64_t k = 0; k < K; k++) {                                                  \
        int64_t base = a * N * K + k;                                                    \
        T acc = 0;                                                                       \
        for (int64_t j = 0; j < N; j++) {                                                \
          int64_t i = reverse ? N - 1 - j : j;                                           \
          T v = x[base + i * K];                                                         \
          acc = j == 0 ? v : op == SR_KR_SUM ? acc + v : acc * v;                        \
          o[base + i * K] = acc;                                                         \
        }                                                                                \
      }                                                                                  \
    return 0;                                                                            \
  }
CCUM(c64, float _Complex)
CCUM(c128, double _Complex)
#undef CCUM

int sr_kern_cumulative(int op, SrDtype dt, int ndim, const int64_t *shape, int axis, int reverse, const void *in,
                       void *out) {
  int64_t A = 1, N = shape[axis], K = 1;
  for (int i = 0; i < axis; i++) A *= shape[i];
  for (int i = axis + 1; i < ndim; i++) K *= shape[i];
  int64_t total = A * N * K;
  const void *src = in;
  void *dst = out;
  float *tin = NULL, *tout = NULL;
  int half = dt == SR_F16 || dt == SR_BF16;
  if (half) {
    tin = sr_xmalloc((size_t)(total + 1) * sizeof *tin);
    tout = sr_xmalloc((size_t)(total + 1) * sizeof *tout);
    for (int64_t i = 0; i < total; i++)
      tin[i] = dt == SR_BF16 ? sr_prng_bf16_to_float(((const uint16_t *)in)[i])
                             : sr_prng_f16_to_float(((const uint16_t *)in)[i]);
    src = tin;
    dst = tout;
  }
  int rc = 0;
  switch (dt) {
  case SR_BOOL: case SR_U8: CUMLOOP(uint8_t, uint8_t, 0); break;
  case SR_I8: CUMLOOP(int8_t, uint8_t, 0); break;
  case SR_I16: CUMLOOP(int16_t, uint16_t, 0); break;
  case SR_I32: CUMLOOP(int32_t, uint32_t, 0); break;
  case SR_I64: CUMLOOP(int64_t, uint64_t, 0); break;
  case SR_U16: CUMLOOP(uint16_t, uint16_t, 0); break;
  case SR_U32: CUMLOOP(uint32_t, uint32_t, 0); break;
  case SR_U64: CUMLOOP(uint64_t, uint64_t, 0); break;
  case SR_F32: case SR_F16: case SR_BF16: CUMLOOP(float, float, 1); break;
  case SR_F64: CUMLOOP(double, double, 1); break;
  case SR_C64: rc = ccum_c64(op, A, N, K, reverse, src, dst); break;
  case SR_C128: rc = ccum_c128(op, A, N, K, reverse, src, dst); break;
  default: rc = -1;
  }
  if (half && rc == 0)
    for (int64_t i = 0; i < total; i++)
      ((uint16_t *)out)[i] = dt == SR_BF16 ? sr_prng_bf16_from_double(tout[i]) : sr_prng_f16_from_double(tout[i]);
  free(tin);
  free(tout);
  return rc;
}
