/* kern_ew.c: elementwise kernels, one loop per (operation, dtype).
 *
 * float16 and bfloat16 are computed in float32 a chunk at a time and
 * rounded to nearest even, as XLA:CPU does.  Integer arithmetic wraps;
 * integer division by zero gives -1 (all ones) and remainder by zero the
 * dividend, XLA's answers where C has undefined behaviour. */
#include "exec/kern.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "exec/prng.h"
#include "prims/prim.h"

#define CHUNK 256

static float half_get(int bf, uint16_t h) { return bf ? sr_prng_bf16_to_float(h) : sr_prng_f16_to_float(h); }
static uint16_t half_put(int bf, double x) { return bf ? sr_prng_bf16_from_double(x) : sr_prng_f16_from_double(x); }

/* ---- scalars ---- */

double sr_kern_get_f64(SrDtype dt, const void *p) {
  switch (dt) {
  case SR_BOOL: return *(const uint8_t *)p;
  case SR_I8: return *(const int8_t *)p;
  case SR_I16: return *(const int16_t *)p;
  case SR_I32: return *(const int32_t *)p;
  case SR_I64: return (double)*(const int64_t *)p;
  case SR_U8: return *(const uint8_t *)p;
  case SR_U16: return *(const uint16_t *)p;
  case SR_U32: return *(const uint32_t *)p;
  case SR_U64: return (double)*(const uint64_t *)p;
  case SR_F16: return sr_prng_f16_to_float(*(const uint16_t *)p);
  case SR_BF16: return sr_prng_bf16_to_float(*(const uint16_t *)p);
  case SR_F32: return *(const float *)p;
  case SR_F64: return *(const double *)p;
  default: return 0;
  }
}

int64_t sr_kern_get_i64(SrDtype dt, const void *p) {
  switch (dt) {
  case SR_BOOL: return *(const uint8_t *)p;
  case SR_I8: return *(const int8_t *)p;
  case SR_I16: return *(const int16_t *)p;
  case SR_I32: return *(const int32_t *)p;
  case SR_I64: return *(const int64_t *)p;
  case SR_U8: return *(const uint8_t *)p;
  case SR_U16: return *(const uint16_t *)p;
  case SR_U32: return *(const uint32_t *)p;
  case SR_U64: return (int64_t)*(const uint64_t *)p;
  default: return (int64_t)sr_kern_get_f64(dt, p);
  }
}

void sr_kern_set_scalar(SrDtype dt, double re, int64_t iv, void *p) {
  switch (dt) {
  case SR_BOOL: *(uint8_t *)p = iv != 0 || re != 0; break;
  case SR_I8: *(int8_t *)p = (int8_t)iv; break;
  case SR_I16: *(int16_t *)p = (int16_t)iv; break;
  case SR_I32: *(int32_t *)p = (int32_t)iv; break;
  case SR_I64: *(int64_t *)p = iv; break;
  case SR_U8: *(uint8_t *)p = (uint8_t)iv; break;
  case SR_U16: *(uint16_t *)p = (uint16_t)iv; break;
  case SR_U32: *(uint32_t *)p = (uint32_t)iv; break;
  case SR_U64: *(uint64_t *)p = (uint64_t)iv; break;
  case SR_F16: *(uint16_t *)p = sr_prng_f16_from_double(re); break;
  case SR_BF16: *(uint16_t *)p = sr_prng_bf16_from_double(re); break;
  case SR_F32: *(float *)p = (float)re; break;
  case SR_F64: *(double *)p = re; break;
  default: memset(p, 0, 8); break;
  }
}

/* ---- binary ---- */

/* o[i] = EXPR(p, q) with either side possibly a broadcast scalar */
#define BIN(T, OT, EXPR)                                                     \
  do {                                                                       \
    const T *x_ = a, *y_ = b;                                                \
    OT *o_ = out;                                                            \
    if (!sa && !sb) {                                                        \
      for (size_t i = 0; i < n; i++) {                                       \
        T p = x_[i], q = y_[i];                                              \
        o_[i] = (OT)(EXPR);                                                  \
      }                                                                      \
    } else if (sa && !sb) {                                                  \
      T p = x_[0];                                                           \
      for (size_t i = 0; i < n; i++) {                                       \
        T q = y_[i];                                                         \
        o_[i] = (OT)(EXPR);                                                  \
      }                                                                      \
    } else if (!sa) {                                                        \
      T q = y_[0];                                                           \
      for (size_t i = 0; i < n; i++) {                                       \
        T p = x_[i];                                                         \
        o_[i] = (OT)(EXPR);                                                  \
      }                                                                      \
    } else {                                                                 \
      T p = x_[0], q = y_[0];                                                \
      for (size_t i = 0; i < n; i++) o_[i] = (OT)(EXPR);                     \
    }                                                                        \
    return 0;                                                                \
  } while (0)

#define CMP_CASES(T)                                                         \
  case SR_P_eq: BIN(T, uint8_t, p == q);                                     \
  case SR_P_ne: BIN(T, uint8_t, p != q);                                     \
  case SR_P_lt: BIN(T, uint8_t, p < q);                                      \
  case SR_P_le: BIN(T, uint8_t, p <= q);                                     \
  case SR_P_gt: BIN(T, uint8_t, p > q);                                      \
  case SR_P_ge: BIN(T, uint8_t, p >= q);

#define FMAX(p, q) ((p) != (p) || (q) != (q) ? (p) + (q) : ((p) < (q) ? (q) : (p)))
#define FMIN(p, q) ((p) != (p) || (q) != (q) ? (p) + (q) : ((q) < (p) ? (q) : (p)))

static int bin_f32(int prim, size_t n, const void *a, int sa, const void *b, int sb, void *out) {
  switch (prim) {
  case SR_P_add: case SR_P_add_any: BIN(float, float, p + q);
  case SR_P_sub: BIN(float, float, p - q);
  case SR_P_mul: BIN(float, float, p * q);
  case SR_P_div: BIN(float, float, p / q);
  case SR_P_rem: BIN(float, float, fmodf(p, q));
  case SR_P_pow: BIN(float, float, powf(p, q));
  case SR_P_max: BIN(float, float, FMAX(p, q));
  case SR_P_min: BIN(float, float, FMIN(p, q));
  case SR_P_atan2: BIN(float, float, atan2f(p, q));
  case SR_P_nextafter: BIN(float, float, nextafterf(p, q));
  CMP_CASES(float)
  default: return -1;
  }
}

static int bin_f64(int prim, size_t n, const void *a, int sa, const void *b, int sb, void *out) {
  switch (prim) {
  case SR_P_add: case SR_P_add_any: BIN(double, double, p + q);
  case SR_P_sub: BIN(double, double, p - q);
  case SR_P_mul: BIN(double, double, p * q);
  case SR_P_div: BIN(double, double, p / q);
  case SR_P_rem: BIN(double, double, fmod(p, q));
  case SR_P_pow: BIN(double, double, pow(p, q));
  case SR_P_max: BIN(double, double, FMAX(p, q));
  case SR_P_min: BIN(double, double, FMIN(p, q));
  case SR_P_atan2: BIN(double, double, atan2(p, q));
  case SR_P_nextafter: BIN(double, double, nextafter(p, q));
  CMP_CASES(double)
  default: return -1;
  }
}

/* integer pow by squaring; a negative exponent gives 0 unless |base| is 1 */
#define IPOW(T, U)                                                           \
  static T ipow_##T(T p, T q) {                                              \
    if (q < 0) return p == 1 ? 1 : p == (T)-1 ? ((q & 1) ? (T)-1 : 1) : 0;   \
    U r = 1, x = (U)p;                                                       \
    for (U e = (U)q; e; e >>= 1) {                                           \
      if (e & 1) r *= x;                                                     \
      x *= x;                                                                \
    }                                                                        \
    return (T)r;                                                             \
  }
#define UPOW(T)                                                              \
  static T ipow_##T(T p, T q) {                                              \
    T r = 1, x = p;                                                          \
    for (T e = q; e; e >>= 1) {                                              \
      if (e & 1) r = (T)(r * x);                                             \
      x = (T)(x * x);                                                        \
    }                                                                        \
    return r;                                                                \
  }
IPOW(int8_t, uint8_t)
IPOW(int16_t, uint16_t)
IPOW(int32_t, uint32_t)
IPOW(int64_t, uint64_t)
UPOW(uint8_t)
UPOW(uint16_t)
UPOW(uint32_t)
UPOW(uint64_t)

#define SIGNED_BIN(NAME, T, U, BITS, MINV)                                                        \
  static int NAME(int prim, size_t n, const void *a, int sa, const void *b, int sb, void *out) {  \
    switch (prim) {                                                                               \
    case SR_P_add: case SR_P_add_any: BIN(T, T, (U)p + (U)q);                                     \
    case SR_P_sub: BIN(T, T, (U)p - (U)q);                                                        \
    case SR_P_mul: BIN(T, T, (U)p * (U)q);                                                        \
    case SR_P_div: BIN(T, T, q == 0 ? (T)-1 : (p == MINV && q == -1) ? p : p / q);                \
    case SR_P_rem: BIN(T, T, q == 0 ? p : (p == MINV && q == -1) ? 0 : p % q);                    \
    case SR_P_pow: BIN(T, T, ipow_##T(p, q));                                                     \
    case SR_P_max: BIN(T, T, p < q ? q : p);                                                      \
    case SR_P_min: BIN(T, T, q < p ? q : p);                                                      \
    case SR_P_and: BIN(T, T, p & q);                                                              \
    case SR_P_or: BIN(T, T, p | q);                                                               \
    case SR_P_xor: BIN(T, T, p ^ q);                                                              \
    case SR_P_shift_left: BIN(T, T, (q < 0 || q >= BITS) ? 0 : (U)p << q);                       \
    case SR_P_shift_right_logical: BIN(T, T, (q < 0 || q >= BITS) ? 0 : (U)p >> q);              \
    case SR_P_shift_right_arithmetic: BIN(T, T, (q < 0 || q >= BITS) ? (p < 0 ? -1 : 0) : p >> q); \
    CMP_CASES(T)                                                                                  \
    default: return -1;                                                                           \
    }                                                                                             \
  }

#define UNSIGNED_BIN(NAME, T, BITS)                                                               \
  static int NAME(int prim, size_t n, const void *a, int sa, const void *b, int sb, void *out) {  \
    switch (prim) {                                                                               \
    case SR_P_add: case SR_P_add_any: BIN(T, T, p + q);                                           \
    case SR_P_sub: BIN(T, T, p - q);                                                              \
    case SR_P_mul: BIN(T, T, p * q);                                                              \
    case SR_P_div: BIN(T, T, q == 0 ? (T)-1 : p / q);                                             \
    case SR_P_rem: BIN(T, T, q == 0 ? p : p % q);                                                 \
    case SR_P_pow: BIN(T, T, ipow_##T(p, q));                                                     \
    case SR_P_max: BIN(T, T, p < q ? q : p);                                                      \
    case SR_P_min: BIN(T, T, q < p ? q : p);                                                      \
    case SR_P_and: BIN(T, T, p & q);                                                              \
    case SR_P_or: BIN(T, T, p | q);                                                               \
    case SR_P_xor: BIN(T, T, p ^ q);                                                              \
    case SR_P_shift_left: BIN(T, T, q >= BITS ? 0 : p << q);                                      \
    case SR_P_shift_right_logical: BIN(T, T, q >= BITS ? 0 : p >> q);                             \
    case SR_P_shift_right_arithmetic: BIN(T, T, q >= BITS ? 0 : p >> q);                          \
    CMP_CASES(T)                                                                                  \
    default: return -1;                                                                           \
    }                                                                                             \
  }

SIGNED_BIN(bin_i8, int8_t, uint8_t, 8, INT8_MIN)
SIGNED_BIN(bin_i16, int16_t, uint16_t, 16, INT16_MIN)
SIGNED_BIN(bin_i32, int32_t, uint32_t, 32, INT32_MIN)
SIGNED_BIN(bin_i64, int64_t, uint64_t, 64, INT64_MIN)
UNSIGNED_BIN(bin_u8, uint8_t, 8)
UNSIGNED_BIN(bin_u16, uint16_t, 16)
UNSIGNED_BIN(bin_u32, uint32_t, 32)
UNSIGNED_BIN(bin_u64, uint64_t, 64)

static int bin_bool(int prim, size_t n, const void *a, int sa, const void *b, int sb, void *out) {
  switch (prim) {
  case SR_P_and: case SR_P_min: case SR_P_mul: BIN(uint8_t, uint8_t, p & q);
  case SR_P_or: case SR_P_max: case SR_P_add: case SR_P_add_any: BIN(uint8_t, uint8_t, p | q);
  case SR_P_xor: case SR_P_ne: BIN(uint8_t, uint8_t, p ^ q);
  case SR_P_eq: BIN(uint8_t, uint8_t, p == q);
  case SR_P_lt: BIN(uint8_t, uint8_t, p < q);
  case SR_P_le: BIN(uint8_t, uint8_t, p <= q);
  case SR_P_gt: BIN(uint8_t, uint8_t, p > q);
  case SR_P_ge: BIN(uint8_t, uint8_t, p >= q);
  default: return -1;
  }
}

static int is_compare(int prim) {
  return prim == SR_P_eq || prim == SR_P_ne || prim == SR_P_lt || prim == SR_P_le || prim == SR_P_gt ||
         prim == SR_P_ge;
}

static int bin_half(int prim, int bf, size_t n, const void *a, int sa, const void *b, int sb, void *out) {
  float fa[CHUNK], fb[CHUNK], fo[CHUNK];
  const uint16_t *x = a, *y = b;
  int cmp = is_compare(prim);
  for (size_t s = 0; s < n; s += CHUNK) {
    size_t m = n - s < CHUNK ? n - s : CHUNK;
    if (sa) fa[0] = half_get(bf, x[0]);
    else
      for (size_t i = 0; i < m; i++) fa[i] = half_get(bf, x[s + i]);
    if (sb) fb[0] = half_get(bf, y[0]);
    else
      for (size_t i = 0; i < m; i++) fb[i] = half_get(bf, y[s + i]);
    if (cmp) {
      if (bin_f32(prim, m, fa, sa, fb, sb, (uint8_t *)out + s) < 0) return -1;
      continue;
    }
    if (bin_f32(prim, m, fa, sa, fb, sb, fo) < 0) return -1;
    uint16_t *o = (uint16_t *)out + s;
    for (size_t i = 0; i < m; i++) o[i] = half_put(bf, fo[i]);
  }
  return 0;
}

int sr_kern_binary(int prim, SrDtype dt, size_t n, const void *a, int sa, const void *b, int sb, void *out) {
  switch (dt) {
  case SR_BOOL: return bin_bool(prim, n, a, sa, b, sb, out);
  case SR_I8: return bin_i8(prim, n, a, sa, b, sb, out);
  case SR_I16: return bin_i16(prim, n, a, sa, b, sb, out);
  case SR_I32: return bin_i32(prim, n, a, sa, b, sb, out);
  case SR_I64: return bin_i64(prim, n, a, sa, b, sb, out);
  case SR_U8: return bin_u8(prim, n, a, sa, b, sb, out);
  case SR_U16: return bin_u16(prim, n, a, sa, b, sb, out);
  case SR_U32: return bin_u32(prim, n, a, sa, b, sb, out);
  case SR_U64: return bin_u64(prim, n, a, sa, b, sb, out);
  case SR_F32: return bin_f32(prim, n, a, sa, b, sb, out);
  case SR_F64: return bin_f64(prim, n, a, sa, b, sb, out);
  case SR_F16: return bin_half(prim, 0, n, a, sa, b, sb, out);
  case SR_BF16: return bin_half(prim, 1, n, a, sa, b, sb, out);
  default: return -1;
  }
}

/* ---- unary ---- */

#define UN(T, OT, EXPR)                                                      \
  do {                                                                       \
    const T *x_ = a;                                                         \
    OT *o_ = out;                                                            \
    for (size_t i = 0; i < n; i++) {                                         \
      T p = x_[i];                                                           \
      o_[i] = (OT)(EXPR);                                                    \
    }                                                                        \
    return 0;                                                                \
  } while (0)

/* lax.integer_pow's lowering: square-and-multiply, then 1/acc for y < 0 */
/* Integers are raised in uint64_t, where overflow wraps as XLA's integer
   power does (signed overflow would be undefined); |y| is taken unsigned,
   as -INT64_MIN does not fit in int64. */
#define INTPOW(T, M, ONE, ISFLOAT)                                           \
  do {                                                                       \
    const T *x_ = a;                                                         \
    T *o_ = out;                                                             \
    int64_t y = ip ? ip[0] : 1;                                              \
    int recip = y < 0;                                                       \
    uint64_t ey = recip ? -(uint64_t)y : (uint64_t)y;                        \
    for (size_t i = 0; i < n; i++) {                                         \
      M x = (M)x_[i], acc = ONE;                                             \
      int have = 0;                                                          \
      for (uint64_t e = ey; e > 0;) {                                        \
        if (e & 1) {                                                         \
          acc = have ? (M)(acc * x) : x;                                     \
          have = 1;                                                          \
        }                                                                    \
        e >>= 1;                                                             \
        if (e > 0) x = (M)(x * x);                                           \
      }                                                                      \
      T r = (T)acc;                                                          \
      if (recip) r = ISFLOAT ? (T)(ONE / r) : (r == 1 || r == (T)-1) ? r : 0; \
      o_[i] = r;                                                             \
    }                                                                        \
    return 0;                                                                \
  } while (0)

static float round_even_f(float x) { return nearbyintf(x); }
static double round_even_d(double x) { return nearbyint(x); }

/* XLA's ReducePrecision (EmitReducePrecisionIR in elemental_ir_emitter.cc)
   on the bits u of a float of nbits bits, src_eb of them the exponent's
   and src_mb the mantissa's: the mantissa rounds to mb bits, to nearest
   even; then an exponent past what eb bits hold becomes infinity and one
   below becomes zero (denormals too), keeping the sign.  The sums wrap at
   nbits, as XLA's integer arithmetic does. */
static uint64_t reduce_precision_bits(uint64_t u, int nbits, int src_eb, int src_mb, int64_t eb, int64_t mb) {
  const uint64_t width = nbits == 64 ? ~0ull : (1ull << nbits) - 1;
  if (mb < src_mb) {
    uint64_t last = 1ull << (src_mb - mb);
    uint64_t bias = (last >> 1) - 1 + ((u & last) >> (src_mb - mb));
    u = ((u + bias) & width) & ~(last - 1);
  }
  if (eb < src_eb) {
    const uint64_t sign = 1ull << (nbits - 1), exp_mask = ((1ull << src_eb) - 1) << src_mb;
    const uint64_t bias = (1ull << (src_eb - 1)) - 1, reduced_bias = (1ull << (eb - 1)) - 1;
    const uint64_t e = u & exp_mask;
    if (e > (bias + reduced_bias) << src_mb) u = (u & sign) | exp_mask;
    else if (e <= (bias - reduced_bias) << src_mb) u = u & sign;
  }
  return u;
}

/* A NaN stays a NaN while a mantissa bit is left (rounding or the
   exponent's clamp would make it an infinity or a zero). */
static float reduce_precision_f(float x, int64_t eb, int64_t mb) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u = (uint32_t)reduce_precision_bits(u, 32, 8, 23, eb, mb);
  float r;
  memcpy(&r, &u, 4);
  return mb > 0 && isnan(x) ? x : r;
}

static double reduce_precision_d(double x, int64_t eb, int64_t mb) {
  uint64_t u;
  memcpy(&u, &x, 8);
  u = reduce_precision_bits(u, 64, 11, 52, eb, mb);
  double r;
  memcpy(&r, &u, 8);
  return mb > 0 && isnan(x) ? x : r;
}

static int un_f32(int prim, size_t n, const void *a, void *out, const int64_t *ip) {
  switch (prim) {
  case SR_P_neg: UN(float, float, -p);
  case SR_P_sign: UN(float, float, p > 0 ? 1.0f : p < 0 ? -1.0f : p);
  case SR_P_abs: UN(float, float, fabsf(p));
  case SR_P_exp: UN(float, float, expf(p));
  case SR_P_exp2: UN(float, float, exp2f(p));
  case SR_P_log: UN(float, float, logf(p));
  case SR_P_expm1: UN(float, float, expm1f(p));
  case SR_P_log1p: UN(float, float, log1pf(p));
  case SR_P_sin: UN(float, float, sinf(p));
  case SR_P_cos: UN(float, float, cosf(p));
  case SR_P_tan: UN(float, float, tanf(p));
  case SR_P_tanh: UN(float, float, tanhf(p));
  case SR_P_logistic: UN(float, float, 1.0f / (1.0f + expf(-p)));
  case SR_P_sqrt: UN(float, float, sqrtf(p));
  case SR_P_rsqrt: UN(float, float, 1.0f / sqrtf(p));
  case SR_P_cbrt: UN(float, float, cbrtf(p));
  case SR_P_square: UN(float, float, p * p);
  case SR_P_floor: UN(float, float, floorf(p));
  case SR_P_ceil: UN(float, float, ceilf(p));
  case SR_P_round:
    if (ip && ip[0] == 1) UN(float, float, round_even_f(p));
    UN(float, float, roundf(p));
  case SR_P_is_finite: UN(float, uint8_t, isfinite(p));
  case SR_P_erf: UN(float, float, erff(p));
  case SR_P_erfc: UN(float, float, erfcf(p));
  case SR_P_erf_inv: UN(float, float, sr_prng_erfinv_f32(p));
  case SR_P_stop_gradient: case SR_P_copy: case SR_P_copy_p: UN(float, float, p);
  case SR_P_reduce_precision: UN(float, float, reduce_precision_f(p, ip ? ip[0] : 64, ip ? ip[1] : 64));
  case SR_P_integer_pow: INTPOW(float, float, 1.0f, 1);
  default: return -1;
  }
}

static int un_f64(int prim, size_t n, const void *a, void *out, const int64_t *ip) {
  switch (prim) {
  case SR_P_neg: UN(double, double, -p);
  case SR_P_sign: UN(double, double, p > 0 ? 1.0 : p < 0 ? -1.0 : p);
  case SR_P_abs: UN(double, double, fabs(p));
  case SR_P_exp: UN(double, double, exp(p));
  case SR_P_exp2: UN(double, double, exp2(p));
  case SR_P_log: UN(double, double, log(p));
  case SR_P_expm1: UN(double, double, expm1(p));
  case SR_P_log1p: UN(double, double, log1p(p));
  case SR_P_sin: UN(double, double, sin(p));
  case SR_P_cos: UN(double, double, cos(p));
  case SR_P_tan: UN(double, double, tan(p));
  case SR_P_tanh: UN(double, double, tanh(p));
  case SR_P_logistic: UN(double, double, 1.0 / (1.0 + exp(-p)));
  case SR_P_sqrt: UN(double, double, sqrt(p));
  case SR_P_rsqrt: UN(double, double, 1.0 / sqrt(p));
  case SR_P_cbrt: UN(double, double, cbrt(p));
  case SR_P_square: UN(double, double, p * p);
  case SR_P_floor: UN(double, double, floor(p));
  case SR_P_ceil: UN(double, double, ceil(p));
  case SR_P_round:
    if (ip && ip[0] == 1) UN(double, double, round_even_d(p));
    UN(double, double, round(p));
  case SR_P_is_finite: UN(double, uint8_t, isfinite(p));
  case SR_P_erf: UN(double, double, erf(p));
  case SR_P_erfc: UN(double, double, erfc(p));
  case SR_P_erf_inv: UN(double, double, sr_prng_erfinv_f64(p));
  case SR_P_stop_gradient: case SR_P_copy: case SR_P_copy_p: UN(double, double, p);
  case SR_P_reduce_precision: UN(double, double, reduce_precision_d(p, ip ? ip[0] : 64, ip ? ip[1] : 64));
  case SR_P_integer_pow: INTPOW(double, double, 1.0, 1);
  default: return -1;
  }
}

#define SIGNED_UN(NAME, T, U)                                                \
  static int NAME(int prim, size_t n, const void *a, void *out, const int64_t *ip) { \
    switch (prim) {                                                          \
    case SR_P_neg: UN(T, T, -(U)p);                                          \
    case SR_P_sign: UN(T, T, (p > 0) - (p < 0));                             \
    case SR_P_abs: UN(T, T, p < 0 ? -(U)p : (U)p);                           \
    case SR_P_square: UN(T, T, (uint64_t)(U)p * (U)p);                       \
    case SR_P_not: UN(T, T, ~p);                                             \
    case SR_P_stop_gradient: case SR_P_copy: case SR_P_copy_p: UN(T, T, p);  \
    case SR_P_integer_pow: INTPOW(T, uint64_t, 1, 0);                        \
    default: return -1;                                                      \
    }                                                                        \
  }
#define UNSIGNED_UN(NAME, T)                                                 \
  static int NAME(int prim, size_t n, const void *a, void *out, const int64_t *ip) { \
    switch (prim) {                                                          \
    case SR_P_neg: UN(T, T, -p);                                             \
    case SR_P_sign: UN(T, T, p > 0);                                         \
    case SR_P_abs: UN(T, T, p);                                              \
    case SR_P_square: UN(T, T, (uint64_t)p * p);                             \
    case SR_P_not: UN(T, T, ~p);                                             \
    case SR_P_stop_gradient: case SR_P_copy: case SR_P_copy_p: UN(T, T, p);  \
    case SR_P_integer_pow: INTPOW(T, uint64_t, 1, 0);                        \
    default: return -1;                                                      \
    }                                                                        \
  }
SIGNED_UN(un_i8, int8_t, uint8_t)
SIGNED_UN(un_i16, int16_t, uint16_t)
SIGNED_UN(un_i32, int32_t, uint32_t)
SIGNED_UN(un_i64, int64_t, uint64_t)
UNSIGNED_UN(un_u8, uint8_t)
UNSIGNED_UN(un_u16, uint16_t)
UNSIGNED_UN(un_u32, uint32_t)
UNSIGNED_UN(un_u64, uint64_t)

static int un_bool(int prim, size_t n, const void *a, void *out, const int64_t *ip) {
  (void)ip;
  switch (prim) {
  case SR_P_not: UN(uint8_t, uint8_t, !p);
  case SR_P_stop_gradient: case SR_P_copy: case SR_P_copy_p: case SR_P_abs: case SR_P_sign: case SR_P_square:
    UN(uint8_t, uint8_t, p);
  default: return -1;
  }
}

static int un_half(int prim, int bf, size_t n, const void *a, void *out, const int64_t *ip) {
  float fa[CHUNK], fo[CHUNK];
  const uint16_t *x = a;
  for (size_t s = 0; s < n; s += CHUNK) {
    size_t m = n - s < CHUNK ? n - s : CHUNK;
    for (size_t i = 0; i < m; i++) fa[i] = half_get(bf, x[s + i]);
    if (prim == SR_P_is_finite) {
      if (un_f32(prim, m, fa, (uint8_t *)out + s, ip) < 0) return -1;
      continue;
    }
    if (un_f32(prim, m, fa, fo, ip) < 0) return -1;
    uint16_t *o = (uint16_t *)out + s;
    for (size_t i = 0; i < m; i++) o[i] = half_put(bf, fo[i]);
  }
  return 0;
}

int sr_kern_unary(int prim, SrDtype dt, size_t n, const void *a, void *out, const int64_t *ip) {
  switch (dt) {
  case SR_BOOL: return un_bool(prim, n, a, out, ip);
  case SR_I8: return un_i8(prim, n, a, out, ip);
  case SR_I16: return un_i16(prim, n, a, out, ip);
  case SR_I32: return un_i32(prim, n, a, out, ip);
  case SR_I64: return un_i64(prim, n, a, out, ip);
  case SR_U8: return un_u8(prim, n, a, out, ip);
  case SR_U16: return un_u16(prim, n, a, out, ip);
  case SR_U32: return un_u32(prim, n, a, out, ip);
  case SR_U64: return un_u64(prim, n, a, out, ip);
  case SR_F32: return un_f32(prim, n, a, out, ip);
  case SR_F64: return un_f64(prim, n, a, out, ip);
  case SR_F16: return un_half(prim, 0, n, a, out, ip);
  case SR_BF16: return un_half(prim, 1, n, a, out, ip);
  default: return -1;
  }
}

/* ---- convert_element_type ---- */

/* float -> integer: truncate toward zero, saturate, NaN -> 0 (XLA) */
#define F2I(T, LO, HI)                                                       \
  static T f2i_##T(double x) {                                               \
    if (x != x) return 0;                                                    \
    if (x <= (double)(LO)) return LO;                                        \
    if (x >= (double)(HI)) return HI;                                        \
    return (T)x;                                                             \
  }
F2I(int8_t, INT8_MIN, INT8_MAX)
F2I(int16_t, INT16_MIN, INT16_MAX)
F2I(int32_t, INT32_MIN, INT32_MAX)
F2I(int64_t, INT64_MIN, INT64_MAX)
F2I(uint8_t, 0, UINT8_MAX)
F2I(uint16_t, 0, UINT16_MAX)
F2I(uint32_t, 0, UINT32_MAX)
F2I(uint64_t, 0, UINT64_MAX)

#define CONV_LOOP(ST, DT, EXPR)                                              \
  do {                                                                       \
    const ST *x_ = in;                                                       \
    DT *o_ = out;                                                            \
    for (size_t i = 0; i < n; i++) {                                         \
      ST p = x_[i];                                                          \
      o_[i] = (DT)(EXPR);                                                    \
    }                                                                        \
    return 0;                                                                \
  } while (0)

/* from a plain C type ST to the destination dtype */
#define CONV_FROM(ST, SFLOAT)                                                \
  switch (to) {                                                              \
  case SR_BOOL: CONV_LOOP(ST, uint8_t, p != 0);                              \
  case SR_I8: CONV_LOOP(ST, int8_t, SFLOAT ? f2i_int8_t((double)p) : (int8_t)p); \
  case SR_I16: CONV_LOOP(ST, int16_t, SFLOAT ? f2i_int16_t((double)p) : (int16_t)p); \
  case SR_I32: CONV_LOOP(ST, int32_t, SFLOAT ? f2i_int32_t((double)p) : (int32_t)p); \
  case SR_I64: CONV_LOOP(ST, int64_t, SFLOAT ? f2i_int64_t((double)p) : (int64_t)p); \
  case SR_U8: CONV_LOOP(ST, uint8_t, SFLOAT ? f2i_uint8_t((double)p) : (uint8_t)p); \
  case SR_U16: CONV_LOOP(ST, uint16_t, SFLOAT ? f2i_uint16_t((double)p) : (uint16_t)p); \
  case SR_U32: CONV_LOOP(ST, uint32_t, SFLOAT ? f2i_uint32_t((double)p) : (uint32_t)p); \
  case SR_U64: CONV_LOOP(ST, uint64_t, SFLOAT ? f2i_uint64_t((double)p) : (uint64_t)p); \
  case SR_F32: CONV_LOOP(ST, float, p);                                      \
  case SR_F64: CONV_LOOP(ST, double, p);                                     \
  case SR_F16: CONV_LOOP(ST, uint16_t, sr_prng_f16_from_double((double)p));  \
  case SR_BF16: CONV_LOOP(ST, uint16_t, sr_prng_bf16_from_double((double)p)); \
  default: return -1;                                                        \
  }

int sr_kern_convert(SrDtype from, SrDtype to, size_t n, const void *in, void *out) {
  if (from == to) {
    memcpy(out, in, n * sr_dtype_info(from)->size);
    return 0;
  }
  switch (from) {
  case SR_BOOL: CONV_FROM(uint8_t, 0);
  case SR_I8: CONV_FROM(int8_t, 0);
  case SR_I16: CONV_FROM(int16_t, 0);
  case SR_I32: CONV_FROM(int32_t, 0);
  case SR_I64: CONV_FROM(int64_t, 0);
  case SR_U8: CONV_FROM(uint8_t, 0);
  case SR_U16: CONV_FROM(uint16_t, 0);
  case SR_U32: CONV_FROM(uint32_t, 0);
  case SR_U64: CONV_FROM(uint64_t, 0);
  case SR_F32: CONV_FROM(float, 1);
  case SR_F64: CONV_FROM(double, 1);
  case SR_F16: case SR_BF16: {
    float f[CHUNK];
    const uint16_t *x = in;
    size_t es = sr_dtype_info(to)->size;
    int bf = from == SR_BF16;
    for (size_t s = 0; s < n; s += CHUNK) {
      size_t m = n - s < CHUNK ? n - s : CHUNK;
      for (size_t i = 0; i < m; i++) f[i] = half_get(bf, x[s + i]);
      if (sr_kern_convert(SR_F32, to, m, f, (char *)out + s * es) < 0) return -1;
    }
    return 0;
  }
  default: return -1;
  }
}

/* ---- select_n and clamp ---- */

int sr_kern_select(SrDtype wdt, SrDtype dt, size_t n, const void *which, int sw, int ncases,
                   const void *const *cases, const int *scalar, void *out) {
  size_t es = sr_dtype_info(dt)->size;
  const uint8_t *wb = which;
  const int32_t *wi = which;
  if (wdt != SR_BOOL && wdt != SR_I32) return -1;
  for (size_t i = 0; i < n; i++) {
    size_t wi_ = sw ? 0 : i;
    int64_t c = wdt == SR_BOOL ? wb[wi_] : wi[wi_];
    if (c < 0) c = 0;
    if (c >= ncases) c = ncases - 1;
    const char *src = (const char *)cases[c] + (scalar[c] ? 0 : i * es);
    switch (es) {
    case 1: ((uint8_t *)out)[i] = *(const uint8_t *)src; break;
    case 2: memcpy((char *)out + i * 2, src, 2); break;
    case 4: memcpy((char *)out + i * 4, src, 4); break;
    case 8: memcpy((char *)out + i * 8, src, 8); break;
    default: memcpy((char *)out + i * es, src, es); break;
    }
  }
  return 0;
}

int sr_kern_clamp(SrDtype dt, size_t n, const void *lo, int slo, const void *x, int sx, const void *hi, int shi,
                  void *out) {
  /* clamp = min(max(x, lo), hi) */
  if (sr_kern_binary(SR_P_max, dt, n, x, sx, lo, slo, out) < 0) return -1;
  return sr_kern_binary(SR_P_min, dt, n, out, sx && slo, hi, shi, out);
}

/* ---- iota ---- */

#define IOTA(T, EXPR)                                                        \
  do {                                                                       \
    T *o_ = out;                                                             \
    for (size_t i = 0; i < total; i++) {                                     \
      int64_t v = start[dim] + (int64_t)((i / inner) % count[dim]);          \
      o_[i] = (T)(EXPR);                                                     \
    }                                                                        \
    return 0;                                                                \
  } while (0)

int sr_kern_iota(SrDtype dt, int ndim, const int64_t *count, const int64_t *start, int dim, void *out) {
  size_t total = 1, inner = 1;
  for (int i = 0; i < ndim; i++) total *= (size_t)count[i];
  for (int i = dim + 1; i < ndim; i++) inner *= (size_t)count[i];
  if (!total) return 0;
  switch (dt) {
  case SR_I8: IOTA(int8_t, v);
  case SR_I16: IOTA(int16_t, v);
  case SR_I32: IOTA(int32_t, v);
  case SR_I64: IOTA(int64_t, v);
  case SR_U8: IOTA(uint8_t, v);
  case SR_U16: IOTA(uint16_t, v);
  case SR_U32: IOTA(uint32_t, v);
  case SR_U64: IOTA(uint64_t, v);
  case SR_F32: IOTA(float, v);
  case SR_F64: IOTA(double, v);
  case SR_F16: IOTA(uint16_t, sr_prng_f16_from_double((double)v));
  case SR_BF16: IOTA(uint16_t, sr_prng_bf16_from_double((double)v));
  case SR_BOOL: IOTA(uint8_t, v != 0);
  default: return -1;
  }
}
