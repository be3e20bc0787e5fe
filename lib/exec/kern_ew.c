/* kern_ew.c: elementwise kernels that are not a row's: scalars, running
 * a row's kernels (the family files define them, exec/kern_ew.h), with
 * float16 and bfloat16 computed in float32 a chunk at a time and rounded
 * to nearest even, as XLA:CPU does; convert_element_type, select_n and
 * iota. */
#include "exec/kern.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "exec/prng.h"

#define CHUNK 256

static float half_get(int bf, uint16_t h) { return bf ? sr_prng_bf16_to_float(h) : sr_prng_f16_to_float(h); }
static uint16_t half_put(int bf, double x) { return bf ? sr_prng_bf16_from_double(x) : sr_prng_f16_from_double(x); }

/* The sub-byte integers, one to a byte (int2/int4 sign-extended): from
   an integer the low bits (a wrap, as XLA's convert), from a float the
   value saturated to the type's range. */
static int8_t wrap_signed(int64_t v, int bits) {
  uint8_t u = (uint8_t)((uint64_t)v & ((1u << bits) - 1));
  return (int8_t)(u & (1u << (bits - 1)) ? (int)u - (1 << bits) : (int)u);
}
static int8_t sat_signed(double x, int bits) {
  int64_t lo = -(INT64_C(1) << (bits - 1)), hi = (INT64_C(1) << (bits - 1)) - 1, v = sr_f2i64(x);
  return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}
static uint8_t sat_unsigned(double x, int bits) {
  int64_t hi = (INT64_C(1) << bits) - 1, v = sr_f2i64(x);
  return (uint8_t)(v < 0 ? 0 : v > hi ? hi : v);
}

/* ---- scalars ---- */

double sr_kern_get_f64(SrDtype dt, const void *p) {
  switch (dt) {
  case SR_BOOL: return *(const uint8_t *)p;
  case SR_I2: case SR_I4: /* one to a byte, sign-extended */
  case SR_I8: return *(const int8_t *)p;
  case SR_U2: case SR_U4: return *(const uint8_t *)p;
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
  case SR_C64: return *(const float *)p; /* the real part */
  case SR_C128: return *(const double *)p;
  default: return 0;
  }
}

int64_t sr_kern_get_i64(SrDtype dt, const void *p) {
  switch (dt) {
  case SR_BOOL: return *(const uint8_t *)p;
  case SR_I2: case SR_I4:
  case SR_I8: return *(const int8_t *)p;
  case SR_U2: case SR_U4: return *(const uint8_t *)p;
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
  case SR_I2: *(int8_t *)p = wrap_signed(iv, 2); break;
  case SR_I4: *(int8_t *)p = wrap_signed(iv, 4); break;
  case SR_U2: *(uint8_t *)p = (uint8_t)((uint64_t)iv & 3); break;
  case SR_U4: *(uint8_t *)p = (uint8_t)((uint64_t)iv & 15); break;
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
  case SR_C64: ((float *)p)[0] = (float)re, ((float *)p)[1] = 0; break;
  case SR_C128: ((double *)p)[0] = re, ((double *)p)[1] = 0; break;
  default: memset(p, 0, 8); break;
  }
}

void sr_kern_set_complex(SrDtype dt, double re, double im, int64_t iv, void *p) {
  sr_kern_set_scalar(dt, re, iv, p);
  if (dt == SR_C64) ((float *)p)[1] = (float)im;
  if (dt == SR_C128) ((double *)p)[1] = im;
}

/* ---- unary and binary: the rows' kernels ---- */

static int bin_half(const SrKernEw *k, int bf, size_t n, const void *a, int sa, const void *b, int sb,
                    void *out) {
  SrKernBinary f = k->bin[SR_F32];
  if (!f) return -1;
  float fa[CHUNK], fb[CHUNK], fo[CHUNK];
  const uint16_t *x = a, *y = b;
  for (size_t s = 0; s < n; s += CHUNK) {
    size_t m = n - s < CHUNK ? n - s : CHUNK;
    if (sa) fa[0] = half_get(bf, x[0]);
    else
      for (size_t i = 0; i < m; i++) fa[i] = half_get(bf, x[s + i]);
    if (sb) fb[0] = half_get(bf, y[0]);
    else
      for (size_t i = 0; i < m; i++) fb[i] = half_get(bf, y[s + i]);
    if (k->bool_out) {
      if (f(m, fa, sa, fb, sb, (uint8_t *)out + s) < 0) return -1;
      continue;
    }
    if (f(m, fa, sa, fb, sb, fo) < 0) return -1;
    uint16_t *o = (uint16_t *)out + s;
    for (size_t i = 0; i < m; i++) o[i] = half_put(bf, fo[i]);
  }
  return 0;
}

int sr_kern_binary(const SrKernEw *k, SrDtype dt, size_t n, const void *a, int sa, const void *b, int sb,
                   void *out) {
  if (!k) return -1;
  /* halves run in float32 unless the kernel has its own for them */
  if ((dt == SR_F16 || dt == SR_BF16) && !k->bin[dt]) return bin_half(k, dt == SR_BF16, n, a, sa, b, sb, out);
  SrKernBinary f = dt < SR_KERN_NDTYPES ? k->bin[dt] : NULL;
  return f ? f(n, a, sa, b, sb, out) : -1;
}

static int un_half(const SrKernEw *k, int bf, size_t n, const void *a, void *out, const int64_t *ip) {
  SrKernUnary f = k->un[SR_F32];
  if (!f) return -1;
  float fa[CHUNK], fo[CHUNK];
  const uint16_t *x = a;
  for (size_t s = 0; s < n; s += CHUNK) {
    size_t m = n - s < CHUNK ? n - s : CHUNK;
    for (size_t i = 0; i < m; i++) fa[i] = half_get(bf, x[s + i]);
    if (k->bool_out) {
      if (f(m, fa, (uint8_t *)out + s, ip) < 0) return -1;
      continue;
    }
    if (f(m, fa, fo, ip) < 0) return -1;
    uint16_t *o = (uint16_t *)out + s;
    for (size_t i = 0; i < m; i++) o[i] = half_put(bf, fo[i]);
  }
  return 0;
}

int sr_kern_unary(const SrKernEw *k, SrDtype dt, size_t n, const void *a, void *out, const int64_t *ip) {
  if (!k) return -1;
  if (dt == SR_F16 || dt == SR_BF16) return un_half(k, dt == SR_BF16, n, a, out, ip);
  SrKernUnary f = dt < SR_KERN_NDTYPES ? k->un[dt] : NULL;
  return f ? f(n, a, out, ip) : -1;
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
  case SR_I2: CONV_LOOP(ST, int8_t, SFLOAT ? sat_signed((double)p, 2) : wrap_signed((int64_t)p, 2)); \
  case SR_I4: CONV_LOOP(ST, int8_t, SFLOAT ? sat_signed((double)p, 4) : wrap_signed((int64_t)p, 4)); \
  case SR_U2: CONV_LOOP(ST, uint8_t, SFLOAT ? sat_unsigned((double)p, 2) : (uint8_t)((uint64_t)(int64_t)p & 3)); \
  case SR_U4: CONV_LOOP(ST, uint8_t, SFLOAT ? sat_unsigned((double)p, 4) : (uint8_t)((uint64_t)(int64_t)p & 15)); \
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

/* To or from complex: complex64 <-> complex128 part by part; from complex
   the real part (XLA's convert drops the imaginary one); to complex the
   value as the real part, with imaginary part 0.  In chunks, through the
   real conversions. */
static int convert_complex(SrDtype from, SrDtype to, size_t n, const void *in, void *out) {
  double re[CHUNK], im[CHUNK];
  size_t fs = sr_dtype_info(from)->size, ts = sr_dtype_info(to)->size;
  for (size_t s = 0; s < n; s += CHUNK) {
    size_t m = n - s < CHUNK ? n - s : CHUNK;
    const char *src = (const char *)in + s * fs;
    char *dst = (char *)out + s * ts;
    if (sr_dtype_is_complex(from)) {
      for (size_t i = 0; i < m; i++) {
        re[i] = from == SR_C64 ? ((const float *)src)[2 * i] : ((const double *)src)[2 * i];
        im[i] = from == SR_C64 ? ((const float *)src)[2 * i + 1] : ((const double *)src)[2 * i + 1];
      }
    } else {
      if (sr_kern_convert(from, SR_F64, m, src, re) < 0) return -1;
      memset(im, 0, m * sizeof *im);
    }
    if (to == SR_C64) {
      for (size_t i = 0; i < m; i++) ((float *)dst)[2 * i] = (float)re[i], ((float *)dst)[2 * i + 1] = (float)im[i];
    } else if (to == SR_C128) {
      for (size_t i = 0; i < m; i++) ((double *)dst)[2 * i] = re[i], ((double *)dst)[2 * i + 1] = im[i];
    } else if (from == SR_C64) {
      /* float32's real part converts from float32, not from a double
         (float32 -> bfloat16 rounds once) */
      float f[CHUNK];
      for (size_t i = 0; i < m; i++) f[i] = (float)re[i];
      if (sr_kern_convert(SR_F32, to, m, f, dst) < 0) return -1;
    } else if (sr_kern_convert(SR_F64, to, m, re, dst) < 0) {
      return -1;
    }
  }
  return 0;
}

int sr_kern_convert(SrDtype from, SrDtype to, size_t n, const void *in, void *out) {
  if (from == to) {
    memcpy(out, in, n * sr_dtype_info(from)->size);
    return 0;
  }
  if (sr_dtype_is_complex(from) || sr_dtype_is_complex(to)) return convert_complex(from, to, n, in, out);
  switch (from) {
  case SR_BOOL: CONV_FROM(uint8_t, 0);
  case SR_I2: case SR_I4: CONV_FROM(int8_t, 0);
  case SR_U2: case SR_U4: CONV_FROM(uint8_t, 0);
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

/* ---- select_n ---- */

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
  /* the narrow ints, one to a byte: wrapped (sign-extended for int2/int4) */
  case SR_I2: IOTA(int8_t, ((v + 2) & 3) - 2);
  case SR_I4: IOTA(int8_t, ((v + 8) & 15) - 8);
  case SR_U2: IOTA(uint8_t, v & 3);
  case SR_U4: IOTA(uint8_t, v & 15);
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
  case SR_C64: IOTA(float _Complex, (float)v);
  case SR_C128: IOTA(double _Complex, (double)v);
  default: return -1;
  }
}
