/* prng.c: JAX's threefry2x32 PRNG and its uniform and normal samplers.
 *
 * The facts, with where they come from (JAX 0.11.1 unless named):
 *   jax/_src/random/threefry2x32.py  the hash, seed, split, fold_in, bits
 *   jax/_src/random/prng.py          iota_2x32_shape: the counters of the
 *                                    partitionable mode
 *   jax/_src/random/core.py          _uniform, _normal_real
 *   stablehlo ChloLegalizeToStablehlo.cpp  erfInv32, erfInv64
 *   xla codegen/intrinsic/log1p.cc   XLA:CPU's log1p
 *   xla service/cpu/llvm_ir_runtime.cc     XLA:CPU's float32 log
 *   xla service/cpu/cpu_compiler.cc  AllowFPOpFusion::Fast: every multiply
 *                                    that only feeds an add becomes an FMA
 * The floating-point kernels below write each fused multiply-add as fma()
 * and everything else as single IEEE operations, so the compiler must not
 * contract a*b+c on its own: hence the pragmas.
 */
#include "exec/prng.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/type.h"
#include "util/mem.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* ---- threefry2x32 ---- */

static inline uint32_t rotl32(uint32_t x, int r) {
  return (x << r) | (x >> (32 - r));
}

/* One 20-round threefry2x32 block, as Random123 defines it: key schedule
 * (k0, k1, k0 ^ k1 ^ 0x1BD11BDA), injected every 4 rounds with the round
 * group number added to the second word. */
static inline void threefry_block(uint32_t k0, uint32_t k1, uint32_t *a,
                                  uint32_t *b) {
  static const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  uint32_t x0 = *a + ks[0], x1 = *b + ks[1];
  for (int g = 1; g <= 5; g++) {
    const int *r = rot[(g - 1) & 1];
    for (int j = 0; j < 4; j++) {
      x0 += x1;
      x1 = rotl32(x1, r[j]) ^ x0;
    }
    x0 += ks[g % 3];
    x1 += ks[(g + 1) % 3] + (uint32_t)g;
  }
  *a = x0;
  *b = x1;
}

void sr_threefry2x32(const uint32_t key[2], size_t n, const uint32_t *x0,
                     const uint32_t *x1, uint32_t *y0, uint32_t *y1) {
  for (size_t i = 0; i < n; i++) {
    uint32_t a = x0[i], b = x1[i];
    threefry_block(key[0], key[1], &a, &b);
    y0[i] = a;
    y1[i] = b;
  }
}

/* JAX's threefry_2x32(key, count) for count = iota(m): the flat counts are
 * padded to even length, split into halves x0 | x1, hashed pairwise, and
 * the outputs concatenated y0 | y1 and cut back to m.  This is the counter
 * layout of the original (non-partitionable) mode.  Counts are uint32, so
 * m must stay below 2^32 - 1 (JAX then switches to per-block subkeys). */
static void threefry_iota(const uint32_t key[2], uint64_t m, uint32_t *out) {
  uint64_t h = (m + 1) / 2;
  for (uint64_t j = 0; j < h; j++) {
    uint32_t a = (uint32_t)j;
    uint32_t b = h + j < m ? (uint32_t)(h + j) : 0;
    threefry_block(key[0], key[1], &a, &b);
    out[j] = a;
    if (h + j < m) out[h + j] = b;
  }
}

/* The partitionable mode hashes element i with the counter (hi, lo) of the
 * 64-bit flat index. */
static inline void threefry_at(const uint32_t key[2], uint64_t i, uint32_t *a,
                               uint32_t *b) {
  *a = (uint32_t)(i >> 32);
  *b = (uint32_t)i;
  threefry_block(key[0], key[1], a, b);
}

/* ---- keys ---- */

void sr_prng_key_ex(int64_t seed, unsigned flags, uint32_t key[2]) {
  /* threefry_seed: (seed >> 32, seed & 0xFFFFFFFF) of the seed as JAX holds
   * it; without x64 the seed is an int32, whose logical shift by 32 is 0. */
  uint64_t s = (uint64_t)seed;
  key[0] = (flags & SR_PRNG_X64) ? (uint32_t)(s >> 32) : 0;
  key[1] = (uint32_t)s;
}

void sr_prng_key(int64_t seed, uint32_t key[2]) {
  sr_prng_key_ex(seed, 0, key);
}

void sr_prng_split_ex(const uint32_t key[2], int64_t num, unsigned flags,
                      uint32_t *out) {
  if (num <= 0) return;
  uint64_t n = (uint64_t)num;
  if (flags & SR_PRNG_ORIGINAL) {
    /* threefry_2x32(key, iota(2n)) reshaped to (n, 2). */
    threefry_iota(key, 2 * n, out);
    return;
  }
  for (uint64_t i = 0; i < n; i++) threefry_at(key, i, &out[2 * i], &out[2 * i + 1]);
}

void sr_prng_split(const uint32_t key[2], int64_t num, uint32_t *out) {
  sr_prng_split_ex(key, num, 0, out);
}

void sr_prng_fold_in(const uint32_t key[2], uint32_t data, uint32_t out[2]) {
  /* threefry_2x32(key, threefry_seed(data)) = hash of the pair (0, data). */
  out[0] = 0;
  out[1] = data;
  threefry_block(key[0], key[1], &out[0], &out[1]);
}

/* ---- random bits ---- */

int64_t sr_prng_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  return n;
}

/* Element i of random_bits(key, width, shape) in the partitionable mode. */
static inline uint64_t bits_at(const uint32_t key[2], int width, uint64_t i) {
  uint32_t a, b;
  threefry_at(key, i, &a, &b);
  if (width == 64) return ((uint64_t)a << 32) | b;
  uint32_t x = a ^ b; /* narrower widths keep the low bits */
  return width == 32 ? x : width == 16 ? (uint16_t)x : (uint8_t)x;
}

static void store_bits(void *out, int width, uint64_t k, uint64_t v) {
  switch (width) {
  case 8: ((uint8_t *)out)[k] = (uint8_t)v; break;
  case 16: ((uint16_t *)out)[k] = (uint16_t)v; break;
  case 32: ((uint32_t *)out)[k] = (uint32_t)v; break;
  default: ((uint64_t *)out)[k] = v; break;
  }
}

/* random_bits in the original mode: ceil(width * n / 32) words of
 * threefry_2x32(key, iota); 64-bit elements pair word i (high) with word
 * n + i (low), 8- and 16-bit ones read the words little-endian. */
static void bits_original(const uint32_t key[2], int width, uint64_t n,
                          void *out) {
  uint64_t m = (width * n + 31) / 32;
  uint32_t *w = sr_xmalloc((m ? m : 1) * sizeof *w);
  threefry_iota(key, m, w);
  for (uint64_t k = 0; k < n; k++) {
    uint64_t v;
    if (width == 64) {
      v = ((uint64_t)w[k] << 32) | w[n + k];
    } else {
      uint64_t per = 32 / (unsigned)width;
      v = w[k / per] >> (width * (k % per));
    }
    store_bits(out, width, k, v);
  }
  free(w);
}

static void gen_bits(const uint32_t key[2], int width, uint64_t start,
                     uint64_t count, unsigned flags, void *out) {
  if (flags & SR_PRNG_ORIGINAL) {
    bits_original(key, width, count, out);
    return;
  }
  for (uint64_t k = 0; k < count; k++)
    store_bits(out, width, k, bits_at(key, width, start + k));
}

int sr_prng_bits_ex(const uint32_t key[2], int bit_width, int ndim,
                    const int64_t *shape, unsigned flags, void *out) {
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64)
    return -1;
  gen_bits(key, bit_width, 0, (uint64_t)sr_prng_numel(ndim, shape), flags, out);
  return 0;
}

void sr_prng_bits32(const uint32_t key[2], int ndim, const int64_t *shape,
                    uint32_t *out) {
  sr_prng_bits_ex(key, 32, ndim, shape, 0, out);
}

void sr_prng_bits32_range(const uint32_t key[2], uint64_t start, size_t count,
                          uint32_t *out) {
  gen_bits(key, 32, start, count, 0, out);
}

/* ---- half precision ---- */

/* Rounds x to a binary format with mbits stored mantissa bits and ebits
 * exponent bits (IEEE-style: subnormals, inf, NaN), to nearest even. */
static uint16_t small_float_from_double(double x, int mbits, int ebits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t exp_mask = ((1u << ebits) - 1) << mbits;
  uint16_t sign = signbit(x) ? (uint16_t)(1u << (mbits + ebits)) : 0;
  if (isnan(x)) return (uint16_t)(sign | exp_mask | (1u << (mbits - 1)));
  double a = fabs(x);
  if (a == 0) return sign;
  if (isinf(a)) return (uint16_t)(sign | exp_mask);
  int e2;
  frexp(a, &e2);
  int e = e2 - 1; /* a = 1.f * 2^e */
  if (e < 1 - bias) e = 1 - bias; /* subnormals share the least exponent */
  double q = nearbyint(ldexp(a, mbits - e));
  if (q >= ldexp(1, mbits + 1)) {
    q /= 2;
    e++;
  }
  if (e > bias) return (uint16_t)(sign | exp_mask);
  uint32_t m = (uint32_t)q;
  if (m < (1u << mbits)) return (uint16_t)(sign | m); /* subnormal */
  return (uint16_t)(sign | ((uint32_t)(e + bias) << mbits) | (m - (1u << mbits)));
}

uint16_t sr_prng_f16_from_double(double x) {
  return small_float_from_double(x, 10, 5);
}

uint16_t sr_prng_bf16_from_double(double x) {
  return small_float_from_double(x, 7, 8);
}

float sr_prng_f16_to_float(uint16_t h) {
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m | 0x400), (int)e - 25);
  return (h & 0x8000) ? -v : v;
}

float sr_prng_bf16_to_float(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Arithmetic on float16 / bfloat16 rounds after every operation.  Doing it
 * in float and rounding once is exact: float has more than 2p + 2 bits for
 * both formats, so the double rounding is innocuous. */
typedef uint16_t (*HalfRound)(double);
typedef float (*HalfWiden)(uint16_t);

/* ---- float32 kernels (XLA:CPU) ---- */

static inline float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* XLA:CPU's float32 log (GenerateVF32Log): Cephes' logf.  The mantissa is
 * reduced to [sqrt(1/2), sqrt(2)), a degree-8 polynomial runs in three
 * interleaved Horner chains, and the exponent is added back in two parts. */
static float xla_logf(float in) {
  const float p0 = 7.0376836292E-2f, p1 = -1.1514610310E-1f,
              p2 = 1.1676998740E-1f, p3 = -1.2420140846E-1f,
              p4 = +1.4249322787E-1f, p5 = -1.6668057665E-1f,
              p6 = +2.0000714765E-1f, p7 = -2.4999993993E-1f,
              p8 = +3.3333331174E-1f;
  const float q1 = -2.12194440e-4f, q2 = 0.693359375f;
  const float sqrthf = (float)0.707106781186547524;

  if (isnan(in) || in < 0) return NAN;
  if (in == 0) return -INFINITY;
  if (in == INFINITY) return INFINITY;
  float t = in > FLT_MIN ? in : FLT_MIN; /* denormals count as FLT_MIN */
  uint32_t u = f32_bits(t);
  int32_t emm0 = (int32_t)(u >> 23) - 0x7f;
  t = f32_from_bits((u & ~0x7f800000u) | f32_bits(0.5f));
  float e = 1.0f + (float)emm0;
  int small = t < sqrthf;
  float tmp1 = small ? t : 0.0f;
  t = t - 1.0f;
  e = e - (small ? 1.0f : 0.0f);
  t = t + tmp1;
  float x2 = t * t;
  float x3 = x2 * t;
  float y = fmaf(t, p0, p1);
  float y1 = fmaf(t, p3, p4);
  float y2 = fmaf(t, p6, p7);
  y = fmaf(y, t, p2);
  y1 = fmaf(y1, t, p5);
  y2 = fmaf(y2, t, p8);
  y = fmaf(y, x3, y1);
  y = fmaf(y, x3, y2);
  /* y * x3 + q1 * e: the first product is the one fused (LLVM fuses the
   * left operand of the add when both are single-use products). */
  y = fmaf(y, x3, q1 * e);
  t = fmaf(-0.5f, x2, t);
  t = t + y;
  return fmaf(q2, e, t);
}

/* Cephes' log1p rational approximation P(x)/Q(x), as XLA evaluates it in
 * the input type: Horner from 0, one FMA per coefficient. */
static const double log1p_num[7] = {
    4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
    6.5787325942061044846969E0,  2.9911919328553073277375E1,
    6.0949667980987787057556E1,  5.7112963590585538103336E1,
    2.0039553499201281259648E1,
};
static const double log1p_den[7] = {
    1.,
    1.5062909083469192043167E1,
    8.3047565967967209469434E1,
    2.2176239823732856465394E2,
    3.0909872225312059774938E2,
    2.1642788614495947685003E2,
    6.0118660497603843919306E1,
};

float sr_prng_log1p_f32(float x) {
  float large = xla_logf(x + 1.0f);
  float x2 = x * x;
  float num = 0.0f, den = 0.0f;
  for (int i = 0; i < 7; i++) {
    num = fmaf(num, x, (float)log1p_num[i]);
    den = fmaf(den, x, (float)log1p_den[i]);
  }
  float r = (x * x2) * (num / den);
  /* -0.5 * x2 + r: the left product is fused (and is exact anyway). */
  float small = x + fmaf(-0.5f, x2, r);
  return fabsf(x) < (float)0.41421356237309504880 ? small : large;
}

/* Giles' single-precision erfinv, as StableHLO's erfInv32 writes it. */
static const float erfinv_lt5[9] = {
    2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
    -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
    -0.00417768164f,  0.246640727f,    1.50140941f};
static const float erfinv_ge5[9] = {
    -0.000200214257f, 0.000100950558f, 0.00134934322f,
    -0.00367342844f,  0.00573950773f,  -0.0076224613f,
    0.00943887047f,   1.00167406f,     2.83297682f};

float sr_prng_erfinv_f32(float x) {
  float w = -sr_prng_log1p_f32(x * -x);
  int lt = w < 5.0f;
  const float *c = lt ? erfinv_lt5 : erfinv_ge5;
  w = lt ? w - 2.5f : sqrtf(w) - 3.0f;
  float p = c[0];
  for (int i = 1; i < 9; i++) p = fmaf(p, w, c[i]);
  return fabsf(x) == 1.0f ? x * INFINITY : p * x;
}

/* ---- float64 kernels ---- */

static double xla_log1p_f64(double x) {
  double large = log(x + 1.0);
  double x2 = x * x;
  double num = 0.0, den = 0.0;
  for (int i = 0; i < 7; i++) {
    num = fma(num, x, log1p_num[i]);
    den = fma(den, x, log1p_den[i]);
  }
  double r = (x * x2) * (num / den);
  double small = x + fma(-0.5, x2, r);
  /* float64 uses the rational form only for 1/sqrt(2) <= 1 + x <= sqrt(2). */
  int in_range = x >= -0.29289321881345247560 && x <= 0.41421356237309504880;
  return in_range ? small : large;
}

/* Giles' double-precision erfinv, as StableHLO's erfInv64 writes it. */
static const double erfinv_lt625[23] = {
    -3.6444120640178196996e-21, -1.685059138182016589e-19,
    1.2858480715256400167e-18,  1.115787767802518096e-17,
    -1.333171662854620906e-16,  2.0972767875968561637e-17,
    6.6376381343583238325e-15,  -4.0545662729752068639e-14,
    -8.1519341976054721522e-14, 2.6335093153082322977e-12,
    -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09,   -4.1126339803469836976e-09,
    -2.9070369957882005086e-08, 4.2347877827932403518e-07,
    -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352,   -0.00074070253416626697512,
    -0.0060336708714301490533,  0.24015818242558961693,
    1.6536545626831027356};
static const double erfinv_lt16[19] = {
    2.2137376921775787049e-09,  9.0756561938885390979e-08,
    -2.7517406297064545428e-07, 1.8239629214389227755e-08,
    1.5027403968909827627e-06,  -4.013867526981545969e-06,
    2.9234449089955446044e-06,  1.2475304481671778723e-05,
    -4.7318229009055733981e-05, 6.8284851459573175448e-05,
    2.4031110387097893999e-05,  -0.0003550375203628474796,
    0.00095328937973738049703,  -0.0016882755560235047313,
    0.0024914420961078508066,   -0.0037512085075692412107,
    0.005370914553590063617,    1.0052589676941592334,
    3.0838856104922207635};
static const double erfinv_ge16[17] = {
    -2.7109920616438573243e-11, -2.5556418169965252055e-10,
    1.5076572693500548083e-09,  -3.7894654401267369937e-09,
    7.6157012080783393804e-09,  -1.4960026627149240478e-08,
    2.9147953450901080826e-08,  -6.7711997758452339498e-08,
    2.2900482228026654717e-07,  -9.9298272942317002539e-07,
    4.5260625972231537039e-06,  -1.9681778105531670567e-05,
    7.5995277030017761139e-05,  -0.00021503011930044477347,
    -0.00013871931833623122026, 1.0103004648645343977,
    4.8499064014085844221};

double sr_prng_erfinv_f64(double x) {
  double w = -xla_log1p_f64(x * -x);
  int lt625 = w < 6.25, lt16 = w < 16.0;
  /* Three polynomials of degree 22, 18 and 16 in one Horner loop: the
   * shorter ones start later, so their leading steps are skipped. */
  double ww = lt625 ? w - 3.125 : sqrt(w) - (lt16 ? 3.25 : 5.0);
  const double *c = lt625 ? erfinv_lt625 : lt16 ? erfinv_lt16 : erfinv_ge16;
  int deg = lt625 ? 23 : lt16 ? 19 : 17;
  double p = c[0];
  for (int i = 1; i < deg; i++) p = fma(p, ww, c[i]);
  return fabs(x) == 1.0 ? x * INFINITY : p * x;
}

/* ---- uniform and normal ---- */

static int supported_float(SrDtype dt) {
  return dt == SR_F32 || dt == SR_F64 || dt == SR_F16 || dt == SR_BF16;
}

/* Python floats reach _uniform as weakly typed jit arguments: float32
 * without x64, float64 with it, then convert to the dtype. */
static double canon_scalar(double v, unsigned flags) {
  return (flags & SR_PRNG_X64) ? v : (double)(float)v;
}

/* The bits of the sampler: JAX draws nbits-wide bits, except 8 for dtypes
 * with fewer than 8 mantissa bits (bfloat16). */
static int rng_width(SrDtype dt) {
  return dt == SR_F64 ? 64 : dt == SR_F32 ? 32 : dt == SR_F16 ? 16 : 8;
}

/* Fills out[k], k < count, with uniform(key, dtype, minval, maxval)
 * elements start + k (of an array of count elements in the original
 * mode).  _uniform: float = bitcast((bits >> (nbits - nmant)) | bits(1.0))
 * - 1, then max(minval, float * (maxval - minval) + minval) in the dtype. */
static void uniform_of_bits(SrDtype dt, const void *bits, uint64_t count, double minval, double maxval,
                            unsigned flags, void *out);

static void uniform_fill(const uint32_t key[2], SrDtype dt, uint64_t start,
                         uint64_t count, double minval, double maxval,
                         unsigned flags, void *out) {
  int width = rng_width(dt);
  if (dt == SR_F64) flags |= SR_PRNG_X64; /* float64 exists only with x64 */
  void *bits = sr_xmalloc((count ? count : 1) * (size_t)(width / 8));
  gen_bits(key, width, start, count, flags, bits);
  uniform_of_bits(dt, bits, count, minval, maxval, flags, out);
  free(bits);
}

/* _uniform's float ops on count random words of rng_width(dt) bits */
static void uniform_of_bits(SrDtype dt, const void *bits, uint64_t count, double minval, double maxval,
                            unsigned flags, void *out) {
  if (dt == SR_F64) flags |= SR_PRNG_X64;
  minval = canon_scalar(minval, flags);
  maxval = canon_scalar(maxval, flags);
  if (dt == SR_F32) {
    const uint32_t *b = bits;
    float *o = out;
    float lo = (float)minval, d = (float)maxval - lo;
    for (uint64_t k = 0; k < count; k++) {
      float f = f32_from_bits((b[k] >> 9) | 0x3f800000u) - 1.0f;
      float v = fmaf(f, d, lo);
      o[k] = v > lo || isnan(v) ? v : lo;
    }
  } else if (dt == SR_F64) {
    const uint64_t *b = bits;
    double *o = out;
    double lo = minval, d = maxval - lo;
    for (uint64_t k = 0; k < count; k++) {
      uint64_t u = (b[k] >> 12) | 0x3ff0000000000000u;
      double f;
      memcpy(&f, &u, sizeof f);
      f -= 1.0;
      double v = fma(f, d, lo);
      o[k] = v > lo || isnan(v) ? v : lo;
    }
  } else {
    /* float16 from 16 bits, bfloat16 from 8 bits widened to 16.  Each
     * half-precision op rounds: x86 without AVX512-FP16 has no fused
     * half multiply-add, and LLVM widens every op to float and back. */
    int f16 = dt == SR_F16;
    HalfRound rnd = f16 ? sr_prng_f16_from_double : sr_prng_bf16_from_double;
    HalfWiden wid = f16 ? sr_prng_f16_to_float : sr_prng_bf16_to_float;
    uint16_t one = f16 ? 0x3c00 : 0x3f80;
    int shift = f16 ? 16 - 10 : 8 - 7;
    float lo = wid(rnd(minval)), hi = wid(rnd(maxval));
    float d = wid(rnd((double)hi - lo));
    uint16_t *o = out;
    for (uint64_t k = 0; k < count; k++) {
      uint32_t raw = f16 ? ((const uint16_t *)bits)[k] : ((const uint8_t *)bits)[k];
      float f = wid(rnd((double)wid((uint16_t)((raw >> shift) | one)) - 1.0));
      float v = wid(rnd((double)f * d));
      v = wid(rnd((double)v + lo));
      o[k] = rnd(v > lo || isnan(v) ? v : lo);
    }
  }
}

int sr_prng_uniform_of_bits(SrDtype dt, const void *bits, uint64_t count, double minval, double maxval,
                            unsigned flags, void *out) {
  if (!supported_float(dt)) return -1;
  uniform_of_bits(dt, bits, count, minval, maxval, flags, out);
  return 0;
}

int sr_prng_rng_width(SrDtype dt) { return rng_width(dt); }

/* _normal_real: sqrt(2) * erf_inv(uniform(key, shape, dtype, lo, 1)) with
 * lo = nextafter(-1, 0) in the dtype; half types run erf_inv in float32. */
static void normal_fill_from(const uint32_t *key, const void *bits, SrDtype dt, uint64_t start, uint64_t count,
                             unsigned flags, void *out);

static void normal_fill(const uint32_t key[2], SrDtype dt, uint64_t start,
                        uint64_t count, unsigned flags, void *out) {
  normal_fill_from(key, NULL, dt, start, count, flags, out);
}

/* the uniform draws of key, or of the given bits when bits is not NULL */
static void ufill(const uint32_t *key, const void *bits, SrDtype dt, uint64_t start, uint64_t count, double lo,
                  double hi, unsigned flags, void *out) {
  if (bits) uniform_of_bits(dt, bits, count, lo, hi, flags, out);
  else uniform_fill(key, dt, start, count, lo, hi, flags, out);
}

int sr_prng_normal_of_bits(SrDtype dt, const void *bits, uint64_t count, unsigned flags, void *out) {
  if (!supported_float(dt)) return -1;
  normal_fill_from(NULL, bits, dt, 0, count, flags, out);
  return 0;
}

static void normal_fill_from(const uint32_t *key, const void *bits, SrDtype dt, uint64_t start, uint64_t count,
                             unsigned flags, void *out) {
  if (dt == SR_F32) {
    float *o = out;
    ufill(key, bits, dt, start, count, nextafterf(-1.0f, 0.0f), 1.0, flags, o);
    const float sqrt2 = (float)1.4142135623730951;
    for (uint64_t k = 0; k < count; k++) o[k] = sqrt2 * sr_prng_erfinv_f32(o[k]);
  } else if (dt == SR_F64) {
    double *o = out;
    ufill(key, bits, dt, start, count, nextafter(-1.0, 0.0), 1.0, flags | SR_PRNG_X64, o);
    const double sqrt2 = 1.4142135623730951;
    for (uint64_t k = 0; k < count; k++) o[k] = sqrt2 * sr_prng_erfinv_f64(o[k]);
  } else {
    int f16 = dt == SR_F16;
    HalfRound rnd = f16 ? sr_prng_f16_from_double : sr_prng_bf16_from_double;
    HalfWiden wid = f16 ? sr_prng_f16_to_float : sr_prng_bf16_to_float;
    /* nextafter(-1, 0) in the half type: -1 + 2^-11 or -1 + 2^-8; exact in
     * float, so the float32 canonicalization leaves it alone. */
    double lo = f16 ? -1.0 + 0x1p-11 : -1.0 + 0x1p-8;
    uint16_t *o = out;
    ufill(key, bits, dt, start, count, lo, 1.0, flags, o);
    float sqrt2 = wid(rnd(1.4142135623730951));
    for (uint64_t k = 0; k < count; k++) {
      float e = wid(rnd(sr_prng_erfinv_f32(wid(o[k]))));
      o[k] = rnd((double)sqrt2 * e);
    }
  }
}

int sr_prng_uniform_ex(const uint32_t key[2], SrDtype dt, int ndim,
                       const int64_t *shape, double minval, double maxval,
                       unsigned flags, void *out) {
  if (!supported_float(dt)) return -1;
  uniform_fill(key, dt, 0, (uint64_t)sr_prng_numel(ndim, shape), minval,
               maxval, flags, out);
  return 0;
}

int sr_prng_uniform(const uint32_t key[2], SrDtype dt, int ndim,
                    const int64_t *shape, double minval, double maxval,
                    void *out) {
  return sr_prng_uniform_ex(key, dt, ndim, shape, minval, maxval, 0, out);
}

int sr_prng_normal_ex(const uint32_t key[2], SrDtype dt, int ndim,
                      const int64_t *shape, unsigned flags, void *out) {
  if (!supported_float(dt)) return -1;
  normal_fill(key, dt, 0, (uint64_t)sr_prng_numel(ndim, shape), flags, out);
  return 0;
}

int sr_prng_normal(const uint32_t key[2], SrDtype dt, int ndim,
                   const int64_t *shape, void *out) {
  return sr_prng_normal_ex(key, dt, ndim, shape, 0, out);
}

int sr_prng_uniform_range(const uint32_t key[2], SrDtype dt, uint64_t start,
                          size_t count, double minval, double maxval,
                          unsigned flags, void *out) {
  if (!supported_float(dt)) return -1;
  uniform_fill(key, dt, start, count, minval, maxval, flags & SR_PRNG_X64, out);
  return 0;
}

int sr_prng_normal_range(const uint32_t key[2], SrDtype dt, uint64_t start,
                         size_t count, unsigned flags, void *out) {
  if (!supported_float(dt)) return -1;
  normal_fill(key, dt, start, count, flags & SR_PRNG_X64, out);
  return 0;
}

/* ---- shards ---- */

/* What a block fill computes: one of bits, uniform or normal. */
typedef struct {
  int kind; /* 0 bits, 1 uniform, 2 normal */
  int width;
  SrDtype dt;
  double minval, maxval;
  unsigned flags;
} BlockGen;

static size_t block_elsize(const BlockGen *g) {
  if (g->kind == 0) return (size_t)g->width / 8;
  return g->dt == SR_F64 ? 8 : g->dt == SR_F32 ? 4 : 2;
}

static void block_fill(const uint32_t key[2], const BlockGen *g,
                       uint64_t start, uint64_t count, void *out) {
  if (g->kind == 0) gen_bits(key, g->width, start, count, g->flags, out);
  else if (g->kind == 1)
    uniform_fill(key, g->dt, start, count, g->minval, g->maxval, g->flags, out);
  else normal_fill(key, g->dt, start, count, g->flags, out);
}

/* The block is a set of runs along the last axis; each run is a contiguous
 * range of flat indices.  The original mode has no such locality: it fills
 * the whole array and copies the runs. */
static void block_gen(const uint32_t key[2], const BlockGen *g, int ndim,
                      const int64_t *shape, const int64_t *start,
                      const int64_t *count, void *out) {
  size_t es = block_elsize(g);
  int64_t total = sr_prng_numel(ndim, shape), nout = sr_prng_numel(ndim, count);
  if (nout <= 0) return;
  char *whole = NULL;
  if (g->flags & SR_PRNG_ORIGINAL) {
    whole = sr_xmalloc((size_t)total * es);
    block_fill(key, g, 0, (uint64_t)total, whole);
  }
  int64_t run = ndim ? count[ndim - 1] : 1, nruns = nout / run;
  int64_t *idx = sr_xcalloc((size_t)(ndim > 0 ? ndim : 1), sizeof *idx);
  char *o = out; /* idx: the run's position within the block */
  for (int64_t r = 0; r < nruns; r++) {
    int64_t flat = 0;
    for (int d = 0; d < ndim; d++) flat = flat * shape[d] + start[d] + idx[d];
    if (whole) memcpy(o, whole + (size_t)flat * es, (size_t)run * es);
    else block_fill(key, g, (uint64_t)flat, (uint64_t)run, o);
    o += (size_t)run * es;
    for (int d = ndim - 2; d >= 0; d--) { /* next run: odometer */
      if (++idx[d] < count[d]) break;
      idx[d] = 0;
    }
  }
  free(idx);
  free(whole);
}

int sr_prng_bits_block(const uint32_t key[2], int bit_width, int ndim,
                       const int64_t *shape, const int64_t *start,
                       const int64_t *count, unsigned flags, void *out) {
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64)
    return -1;
  BlockGen g = {0, bit_width, 0, 0, 0, flags};
  block_gen(key, &g, ndim, shape, start, count, out);
  return 0;
}

int sr_prng_uniform_block(const uint32_t key[2], SrDtype dt, int ndim,
                          const int64_t *shape, const int64_t *start,
                          const int64_t *count, double minval, double maxval,
                          unsigned flags, void *out) {
  if (!supported_float(dt)) return -1;
  BlockGen g = {1, 0, dt, minval, maxval, flags};
  block_gen(key, &g, ndim, shape, start, count, out);
  return 0;
}

int sr_prng_normal_block(const uint32_t key[2], SrDtype dt, int ndim,
                         const int64_t *shape, const int64_t *start,
                         const int64_t *count, unsigned flags, void *out) {
  if (!supported_float(dt)) return -1;
  BlockGen g = {2, 0, dt, 0, 0, flags};
  block_gen(key, &g, ndim, shape, start, count, out);
  return 0;
}

/* ---- XLA's RngBitGenerator ---- */

/* Philox-4x32 with 10 rounds on the counter c under key k, in place. */
static void philox4x32(uint32_t c[4], const uint32_t key[2]) {
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)c[0] * 0xD2511F53u, p1 = (uint64_t)c[2] * 0xCD9E8D57u;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = (uint32_t)p1;
    c[2] = n2;
    c[3] = (uint32_t)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

/* The Philox block i: the 128-bit counter (low s[1], high s[0], as the
   expander reverses a two-word state) plus i, hashed under s[0]'s words. */
static void philox_block(const uint64_t s[2], uint64_t i, uint32_t out[4]) {
  uint64_t lo = s[1] + i, hi = s[0] + (lo < s[1]);
  uint32_t key[2] = {(uint32_t)s[0], (uint32_t)(s[0] >> 32)};
  out[0] = (uint32_t)lo;
  out[1] = (uint32_t)(lo >> 32);
  out[2] = (uint32_t)hi;
  out[3] = (uint32_t)(hi >> 32);
  philox4x32(out, key);
}

static void put_bits(void *out, size_t k, int bw, uint64_t v) {
  switch (bw) {
  case 8: ((uint8_t *)out)[k] = (uint8_t)v; break;
  case 16: ((uint16_t *)out)[k] = (uint16_t)v; break;
  case 32: ((uint32_t *)out)[k] = (uint32_t)v; break;
  default: ((uint64_t *)out)[k] = v; break;
  }
}

/* ThreeFryRngBit32's split: the first even dim, else the first largest;
   -1 for a scalar. */
static int rbg_split_dim(int nd, const int64_t *shape) {
  if (!nd) return -1;
  for (int i = 0; i < nd; i++)
    if (shape[i] % 2 == 0) return i;
  int d = 0;
  for (int i = 1; i < nd; i++)
    if (shape[i] > shape[d]) d = i;
  return d;
}

int sr_rbg_bits_block(const uint64_t s[2], int algorithm, int bit_width, int ndim, const int64_t *shape,
                      const int64_t *start, const int64_t *count, void *out) {
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64) return -1;
  int fry = algorithm == SR_RBG_THREE_FRY, split = fry && bit_width < 64 ? rbg_split_dim(ndim, shape) : -1;
  int64_t half[SR_MAX_RANK];
  for (int d = 0; d < ndim; d++) half[d] = d == split ? (shape[d] + 1) / 2 : shape[d];
  size_t n = 1;
  for (int d = 0; d < ndim; d++) n *= (size_t)count[d];
  int64_t at[SR_MAX_RANK];
  for (int d = 0; d < ndim; d++) at[d] = start[d];
  uint32_t blk[4];
  uint64_t cached = UINT64_MAX;
  uint32_t fkey[2] = {(uint32_t)s[0], (uint32_t)(s[0] >> 32)};
  for (size_t k = 0; k < n; k++) {
    /* the element's row-major index in the result, and in the halves */
    uint64_t lin = 0, hl = 0;
    for (int d = 0; d < ndim; d++) {
      lin = lin * (uint64_t)shape[d] + (uint64_t)at[d];
      hl = hl * (uint64_t)half[d] + (uint64_t)(d == split ? at[d] / 2 : at[d]);
    }
    uint64_t v;
    if (fry) {
      uint64_t x = s[1] + (bit_width < 64 ? hl : lin);
      uint32_t x0 = (uint32_t)x, x1 = (uint32_t)(x >> 32), y0, y1;
      sr_threefry2x32(fkey, 1, &x0, &x1, &y0, &y1);
      v = bit_width == 64 ? ((uint64_t)y1 << 32 | y0) : split >= 0 && at[split] % 2 ? y1 : y0;
    } else {
      uint64_t per = bit_width == 64 ? 2 : 4, b = lin / per;
      if (b != cached) {
        philox_block(s, b, blk);
        cached = b;
      }
      int j = (int)(lin % per);
      v = bit_width == 64 ? ((uint64_t)blk[2 * j + 1] << 32 | blk[2 * j]) : blk[j];
    }
    put_bits(out, k, bit_width, v);
    for (int d = ndim - 1; d >= 0; d--) {
      if (++at[d] < start[d] + count[d]) break;
      at[d] = start[d];
    }
  }
  return 0;
}

void sr_rbg_state(const uint64_t s[2], int algorithm, int bit_width, int ndim, const int64_t *shape,
                  uint64_t out[2]) {
  uint64_t n = 1, h = 1;
  int split = rbg_split_dim(ndim, shape);
  for (int d = 0; d < ndim; d++) {
    n *= (uint64_t)shape[d];
    h *= (uint64_t)(d == split ? (shape[d] + 1) / 2 : shape[d]);
  }
  out[0] = s[0];
  if (algorithm == SR_RBG_THREE_FRY)
    out[1] = s[1] + (bit_width == 64 ? n : h);
  else
    out[1] = s[1] + (bit_width == 64 ? (2 * n + 3) / 4 : (n + 3) / 4);
}

/* ---- the implementations of keys, and rbg.py's keys ---- */

static const char *const impl_tags[SR_PRNG_NIMPLS] = {"fry", "rbg", "urbg"};
static const char *const impl_names[SR_PRNG_NIMPLS] = {"threefry2x32", "rbg", "unsafe_rbg"};

int sr_prng_impl_of(SrDtype d) {
  const char *n = sr_dtype_name(d);
  if (strncmp(n, "key<", 4) != 0) return -1;
  for (int i = 0; i < SR_PRNG_NIMPLS; i++) {
    size_t k = strlen(impl_tags[i]);
    if (strncmp(n + 4, impl_tags[i], k) == 0 && n[4 + k] == '>' && !n[5 + k]) return i;
  }
  return -1;
}

SrDtype sr_prng_key_dtype(int impl) {
  char b[16];
  int n = snprintf(b, sizeof b, "key<%s>", impl_tags[impl]);
  return sr_dtype_intern(b, (size_t)n);
}

int sr_prng_key_words(int impl) { return impl == SR_PRNG_FRY ? 2 : 4; }
const char *sr_prng_impl_tag(int impl) { return impl_tags[impl]; }
const char *sr_prng_impl_name(int impl) { return impl_names[impl]; }

int sr_prng_impl_lookup(const char *s) {
  for (int i = 0; i < SR_PRNG_NIMPLS; i++)
    if (strcmp(s, impl_tags[i]) == 0 || strcmp(s, impl_names[i]) == 0) return i;
  return -1;
}

void sr_rbg_state_of_words(const uint32_t w[4], uint64_t s[2]) {
  s[0] = (uint64_t)w[1] << 32 | w[0];
  s[1] = (uint64_t)w[3] << 32 | w[2];
}

void sr_prng_rbg_seed(int64_t seed, unsigned flags, uint32_t key[4]) {
  sr_prng_key_ex(seed, flags, key);
  key[2] = key[0];
  key[3] = key[1];
}

int sr_prng_rbg_split(const uint32_t key[4], int64_t num, unsigned flags, uint32_t *out) {
  if (num <= 0) return 0;
  uint32_t *half = sr_try_malloc((size_t)num * 8);
  if (!half) return -1;
  for (int h = 0; h < 2; h++) {
    sr_prng_split_ex(key + 2 * h, num, flags, half);
    for (int64_t i = 0; i < num; i++) {
      out[4 * i + 2 * h] = half[2 * i];
      out[4 * i + 2 * h + 1] = half[2 * i + 1];
    }
  }
  free(half);
  return 0;
}

void sr_prng_rbg_fold_in(const uint32_t key[4], uint32_t data, uint32_t out[4]) {
  sr_prng_fold_in(key, data, out);
  sr_prng_fold_in(key + 2, data, out + 2);
}

/* the four words of row `row` of RngBitGenerator(state, (rows, 4)), rows
   past `row` not mattering: Philox numbers its words row-major */
static void rbg_row(const uint64_t s[2], int64_t row, uint32_t out[4]) {
  int64_t shape[1] = {4 * (row + 1)}, start[1] = {4 * row}, count[1] = {4};
  sr_rbg_bits_block(s, SR_RBG_PHILOX, 32, 1, shape, start, count, out);
}

void sr_prng_urbg_split(const uint32_t key0[4], int64_t b, int64_t num, uint32_t *out) {
  uint64_t s[2];
  sr_rbg_state_of_words(key0, s);
  for (int64_t j = 0; j < num; j++) rbg_row(s, (b * num + j) * 10, out + 4 * j);
}

void sr_prng_urbg_fold_in(const uint32_t key[4], uint32_t data0, int64_t b, uint32_t out[4]) {
  uint32_t seed[4], bits[4];
  uint64_t s[2];
  sr_prng_rbg_seed(data0, 0, seed);
  sr_rbg_state_of_words(seed, s);
  rbg_row(s, b * 10 + 9, bits);
  for (int i = 0; i < 4; i++) out[i] = key[i] ^ bits[i];
}
