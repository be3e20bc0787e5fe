/* kern_simd.c: vectorized kernels (kern_simd.h): the reductions of the
 * in-process collectives, and fused multiply-adds.
 *
 * A reduction over devices adds the devices' buffers in their order.
 * Folding them one after another reads and writes the accumulator once
 * per device; here each block of the accumulator (BLOCK bytes, which stay
 * in the cache) takes every device's block in turn, so large buffers move
 * through memory once, and the inner loops are the vectorizer's. */
#include "exec/kern_simd.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "exec/array.h"

enum { BLOCK = 16384 };

/* o = a op b and o op= b on one block; o does not overlap b (nor a,
   unless it is a). */
#define FOLD_FNS(NAME, T, SUMEXPR, MAXEXPR, MINEXPR)                               \
  SR_KERN_VEC static void NAME##_2(SrRedOp op, size_t n, void *o_, const void *a_, const void *b_) { \
    T *o = o_;                                                                     \
    const T *a = a_, *b = b_;                                                      \
    switch (op) {                                                                  \
    case SR_RED_SUM:                                                               \
      for (size_t i = 0; i < n; i++) {                                             \
        T p = a[i], q = b[i];                                                      \
        o[i] = SUMEXPR;                                                            \
      }                                                                            \
      break;                                                                       \
    case SR_RED_MAX:                                                               \
      for (size_t i = 0; i < n; i++) {                                             \
        T p = a[i], q = b[i];                                                      \
        o[i] = MAXEXPR;                                                            \
      }                                                                            \
      break;                                                                       \
    case SR_RED_MIN:                                                               \
      for (size_t i = 0; i < n; i++) {                                             \
        T p = a[i], q = b[i];                                                      \
        o[i] = MINEXPR;                                                            \
      }                                                                            \
      break;                                                                       \
    }                                                                              \
  }                                                                                \
  SR_KERN_VEC static void NAME##_1(SrRedOp op, size_t n, void *o_, const void *b_) { \
    T *o = o_;                                                                     \
    const T *b = b_;                                                               \
    switch (op) {                                                                  \
    case SR_RED_SUM:                                                               \
      for (size_t i = 0; i < n; i++) {                                             \
        T p = o[i], q = b[i];                                                      \
        o[i] = SUMEXPR;                                                            \
      }                                                                            \
      break;                                                                       \
    case SR_RED_MAX:                                                               \
      for (size_t i = 0; i < n; i++) {                                             \
        T p = o[i], q = b[i];                                                      \
        o[i] = MAXEXPR;                                                            \
      }                                                                            \
      break;                                                                       \
    case SR_RED_MIN:                                                               \
      for (size_t i = 0; i < n; i++) {                                             \
        T p = o[i], q = b[i];                                                      \
        o[i] = MINEXPR;                                                            \
      }                                                                            \
      break;                                                                       \
    }                                                                              \
  }

/* comm.c's steps: NaN-propagating max and min for floats, sums that wrap
   for signed integers */
#define FMAX_(p, q) ((p) != (p) || (q) != (q) ? (p) + (q) : ((p) < (q) ? (q) : (p)))
#define FMIN_(p, q) ((p) != (p) || (q) != (q) ? (p) + (q) : ((q) < (p) ? (q) : (p)))
FOLD_FNS(f32, float, p + q, FMAX_(p, q), FMIN_(p, q))
FOLD_FNS(f64, double, p + q, FMAX_(p, q), FMIN_(p, q))
FOLD_FNS(i32, int32_t, (int32_t)((uint32_t)p + (uint32_t)q), p < q ? q : p, q < p ? q : p)
FOLD_FNS(i64, int64_t, (int64_t)((uint64_t)p + (uint64_t)q), p < q ? q : p, q < p ? q : p)
FOLD_FNS(u32, uint32_t, p + q, p < q ? q : p, q < p ? q : p)
FOLD_FNS(u64, uint64_t, p + q, p < q ? q : p, q < p ? q : p)

typedef void (*Fold2)(SrRedOp op, size_t n, void *o, const void *a, const void *b);
typedef void (*Fold1)(SrRedOp op, size_t n, void *o, const void *b);

int sr_kern_fold_many(SrRedOp op, SrDtype dt, size_t n, void *acc, const void *const *xs, int nx) {
  if (!sr_comm_fold_supported(dt)) return -1;
  Fold2 f2 = NULL;
  Fold1 f1 = NULL;
  switch (dt) {
  case SR_F32: f2 = f32_2, f1 = f32_1; break;
  case SR_F64: f2 = f64_2, f1 = f64_1; break;
  case SR_I32: f2 = i32_2, f1 = i32_1; break;
  case SR_I64: f2 = i64_2, f1 = i64_1; break;
  case SR_U32: f2 = u32_2, f1 = u32_1; break;
  case SR_U64: f2 = u64_2, f1 = u64_1; break;
  default: break;
  }
  size_t es = sr_elem_size(dt), step = BLOCK / es;
  for (size_t i0 = 0; i0 < n; i0 += step) {
    size_t m = n - i0 < step ? n - i0 : step, off = i0 * es;
    char *o = (char *)acc + off;
    const char *x0 = (const char *)xs[0] + off;
    int k = 1;
    if (f2 && nx >= 2) {
      f2(op, m, o, x0, (const char *)xs[1] + off);
      k = 2;
    } else if (o != x0) {
      memcpy(o, x0, m * es);
    }
    for (; k < nx; k++) {
      const char *x = (const char *)xs[k] + off;
      if (f1) f1(op, m, o, x);
      else sr_comm_fold(op, dt, m, o, x);
    }
  }
  return 0;
}

/* ---- transposes ---- */

/* 8 x 8 blocks of 4-byte and 4 x 4 blocks of 8-byte elements, transposed
   in registers by three (two) rounds of shuffles, the unpack network of
   _MM_TRANSPOSE8_PS; gcc's vector extensions make them SSE2, AVX2 or
   AVX-512 code by the clone. */
typedef uint32_t V8u __attribute__((vector_size(32)));
typedef uint64_t V4u __attribute__((vector_size(32)));
typedef int32_t V8i __attribute__((vector_size(32)));
typedef int64_t V4i __attribute__((vector_size(32)));


#define LO32 ((V8i){0, 8, 1, 9, 4, 12, 5, 13})
#define HI32 ((V8i){2, 10, 3, 11, 6, 14, 7, 15})
#define LO64 ((V8i){0, 1, 8, 9, 4, 5, 12, 13})
#define HI64 ((V8i){2, 3, 10, 11, 6, 7, 14, 15})
#define LO128 ((V8i){0, 1, 2, 3, 8, 9, 10, 11})
#define HI128 ((V8i){4, 5, 6, 7, 12, 13, 14, 15})

SR_KERN_VEC static void block8(const uint32_t *s, int64_t ss, uint32_t *d, int64_t ds) {
  V8u r0, r1, r2, r3, r4, r5, r6, r7;
  memcpy(&r0, s, sizeof r0);
  memcpy(&r1, s + ss, sizeof r0);
  memcpy(&r2, s + 2 * ss, sizeof r0);
  memcpy(&r3, s + 3 * ss, sizeof r0);
  memcpy(&r4, s + 4 * ss, sizeof r0);
  memcpy(&r5, s + 5 * ss, sizeof r0);
  memcpy(&r6, s + 6 * ss, sizeof r0);
  memcpy(&r7, s + 7 * ss, sizeof r0);
  V8u t0 = __builtin_shuffle(r0, r1, LO32), t1 = __builtin_shuffle(r0, r1, HI32);
  V8u t2 = __builtin_shuffle(r2, r3, LO32), t3 = __builtin_shuffle(r2, r3, HI32);
  V8u t4 = __builtin_shuffle(r4, r5, LO32), t5 = __builtin_shuffle(r4, r5, HI32);
  V8u t6 = __builtin_shuffle(r6, r7, LO32), t7 = __builtin_shuffle(r6, r7, HI32);
  V8u u0 = __builtin_shuffle(t0, t2, LO64), u1 = __builtin_shuffle(t0, t2, HI64);
  V8u u2 = __builtin_shuffle(t1, t3, LO64), u3 = __builtin_shuffle(t1, t3, HI64);
  V8u u4 = __builtin_shuffle(t4, t6, LO64), u5 = __builtin_shuffle(t4, t6, HI64);
  V8u u6 = __builtin_shuffle(t5, t7, LO64), u7 = __builtin_shuffle(t5, t7, HI64);
  V8u o[8] = {__builtin_shuffle(u0, u4, LO128), __builtin_shuffle(u1, u5, LO128), __builtin_shuffle(u2, u6, LO128),
              __builtin_shuffle(u3, u7, LO128), __builtin_shuffle(u0, u4, HI128), __builtin_shuffle(u1, u5, HI128),
              __builtin_shuffle(u2, u6, HI128), __builtin_shuffle(u3, u7, HI128)};
  memcpy(d, &o[0], sizeof o[0]);
  memcpy(d + ds, &o[1], sizeof o[0]);
  memcpy(d + 2 * ds, &o[2], sizeof o[0]);
  memcpy(d + 3 * ds, &o[3], sizeof o[0]);
  memcpy(d + 4 * ds, &o[4], sizeof o[0]);
  memcpy(d + 5 * ds, &o[5], sizeof o[0]);
  memcpy(d + 6 * ds, &o[6], sizeof o[0]);
  memcpy(d + 7 * ds, &o[7], sizeof o[0]);
}

SR_KERN_VEC static void block4(const uint64_t *s, int64_t ss, uint64_t *d, int64_t ds) {
  V4u r[4], t[4];
  for (int k = 0; k < 4; k++) memcpy(&r[k], s + k * ss, sizeof r[k]);
  const V4i lo = {0, 4, 2, 6}, hi = {1, 5, 3, 7}, lo128 = {0, 1, 4, 5}, hi128 = {2, 3, 6, 7};
  t[0] = __builtin_shuffle(r[0], r[1], lo);
  t[1] = __builtin_shuffle(r[0], r[1], hi);
  t[2] = __builtin_shuffle(r[2], r[3], lo);
  t[3] = __builtin_shuffle(r[2], r[3], hi);
  V4u o[4] = {__builtin_shuffle(t[0], t[2], lo128), __builtin_shuffle(t[1], t[3], lo128),
              __builtin_shuffle(t[0], t[2], hi128), __builtin_shuffle(t[1], t[3], hi128)};
  for (int k = 0; k < 4; k++) memcpy(d + k * ds, &o[k], sizeof o[k]);
}

enum { TTILE = 128 };

#define TRANSPOSE_2D(T, B, BLOCKFN)                                                        \
  do {                                                                                     \
    const T *s = src;                                                                      \
    T *d = dst;                                                                            \
    for (int64_t i0 = 0; i0 < a; i0 += TTILE)                                              \
      for (int64_t j0 = 0; j0 < b; j0 += TTILE) {                                          \
        int64_t ie = i0 + TTILE < a ? i0 + TTILE : a, je = j0 + TTILE < b ? j0 + TTILE : b; \
        int64_t ib = i0 + (ie - i0) / B * B, jb = j0 + (je - j0) / B * B;                  \
        for (int64_t i = i0; i < ib; i += B)                                               \
          for (int64_t j = j0; j < jb; j += B) BLOCKFN(s + j * ss + i, ss, d + i * ds + j, ds); \
        for (int64_t i = i0; i < ie; i++)                                                  \
          for (int64_t j = i < ib ? jb : j0; j < je; j++) d[i * ds + j] = s[j * ss + i];   \
      }                                                                                    \
  } while (0)

int sr_kern_transpose_2d(size_t es, int64_t a, int64_t b, const void *src, int64_t ss, void *dst, int64_t ds) {
  if (es == 4) TRANSPOSE_2D(uint32_t, 8, block8);
  else if (es == 8) TRANSPOSE_2D(uint64_t, 4, block4);
  else return -1;
  return 0;
}

/* o[i] = fma(ga * a, b, gc * c) with ga, gc = +-1 (exact negations), a
   loop for each pattern of scalar operands (SA, SB, SC: 0 or 1) so that
   each vectorizes */
#define FMA_FN(NAME, T, FMA)                                                                      \
  SR_KERN_VEC_FMA static void NAME(size_t n, const T *a, const T *b, const T *c, int sc_, T ga, T gc, T *o) { \
    switch (sc_) {                                                                                \
    FMA_CASE(T, FMA, 0, 0, 0) FMA_CASE(T, FMA, 1, 0, 0) FMA_CASE(T, FMA, 0, 1, 0) FMA_CASE(T, FMA, 1, 1, 0) \
    FMA_CASE(T, FMA, 0, 0, 1) FMA_CASE(T, FMA, 1, 0, 1) FMA_CASE(T, FMA, 0, 1, 1) FMA_CASE(T, FMA, 1, 1, 1) \
    }                                                                                             \
  }
#define FMA_CASE(T, FMA, SA, SB, SC)                                                              \
  case SA | SB << 1 | SC << 2:                                                                    \
    for (size_t i = 0; i < n; i++) o[i] = FMA(ga * a[SA ? 0 : i], b[SB ? 0 : i], gc * c[SC ? 0 : i]); \
    break;

FMA_FN(fma_f32, float, fmaf)
FMA_FN(fma_f64, double, fma)

int sr_kern_fma(SrDtype dt, SrFmaForm form, size_t n, const void *a, const void *b, const void *c, int scalar,
                void *out) {
  int na = form == SR_FMA_RSUB, nc = form == SR_FMA_SUB;
  if (dt == SR_F32) fma_f32(n, a, b, c, scalar & 7, na ? -1.0f : 1.0f, nc ? -1.0f : 1.0f, out);
  else if (dt == SR_F64) fma_f64(n, a, b, c, scalar & 7, na ? -1.0 : 1.0, nc ? -1.0 : 1.0, out);
  else return -1;
  return 0;
}
