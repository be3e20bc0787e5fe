/* numfmt.c: numpy's array2string and Dragon4 float formatting.
 *
 * Three layers, bottom up:
 *   1. Dragon4: the shortest decimal digits that read back as the same
 *      float16/32/64 (Steele & White's free-format algorithm on exact big
 *      integers), cut off at a precision, extended to a minimum number of
 *      digits, and laid out positionally or in scientific notation with
 *      numpy's trim and padding rules.
 *   2. Element formatters fitted to the elements on show, as numpy's
 *      FloatingFormat, IntegerFormat, BoolFormat and ComplexFloatingFormat
 *      do: one choice of notation and one column width per array.
 *   3. The layout: brackets, separators, line wrapping at the line width,
 *      and the "..." summary of arrays above the threshold.
 */
#include "exec/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

const SrNumfmtOpts sr_numfmt_defaults = SR_NUMFMT_OPTS_INIT;
SrNumfmtOpts sr_numfmt_opts = SR_NUMFMT_OPTS_INIT;

/* ---- big integers, just enough for Dragon4 ---- */

/* A float64 needs about 1130 bits (2^-1074 scaled by 10^323); minimum
   digit counts add up to 3.33 bits a digit, and public callers are
   clamped to MAX_DIGITS digits. */
enum { BN_LIMBS = 112, MAX_DIGITS = 400 };

typedef struct Bn {
  int n;
  uint32_t d[BN_LIMBS];
} Bn;

static void bn_overflow(void) __attribute__((noreturn));
static void bn_overflow(void) {
  fprintf(stderr, "shardrepl: numfmt: big integer overflow\n");
  abort();
}

static void bn_set(Bn *a, uint64_t v) {
  a->n = 0;
  while (v) {
    a->d[a->n++] = (uint32_t)v;
    v >>= 32;
  }
}

static void bn_mul_small(Bn *a, uint32_t m) {
  uint64_t c = 0;
  for (int i = 0; i < a->n; i++) {
    uint64_t t = (uint64_t)a->d[i] * m + c;
    a->d[i] = (uint32_t)t;
    c = t >> 32;
  }
  if (c) {
    if (a->n == BN_LIMBS) bn_overflow();
    a->d[a->n++] = (uint32_t)c;
  }
}

static void bn_shl(Bn *a, int s) {
  if (a->n == 0 || s == 0) return;
  int limbs = s / 32, bits = s % 32;
  if (a->n + limbs + 1 > BN_LIMBS) bn_overflow();
  a->d[a->n + limbs] = 0;
  for (int i = a->n - 1; i >= 0; i--) {
    uint64_t t = (uint64_t)a->d[i] << bits;
    a->d[i + limbs + 1] |= (uint32_t)(t >> 32);
    a->d[i + limbs] = (uint32_t)t;
  }
  for (int i = 0; i < limbs; i++) a->d[i] = 0;
  a->n += limbs + 1;
  while (a->n && !a->d[a->n - 1]) a->n--;
}

static void bn_pow2(Bn *a, int e) {
  bn_set(a, 1);
  bn_shl(a, e);
}

static void bn_mul_pow10(Bn *a, int k) {
  static const uint32_t p10[] = {1, 10, 100, 1000, 10000, 100000, 1000000,
                                 10000000, 100000000, 1000000000};
  for (; k >= 9; k -= 9) bn_mul_small(a, p10[9]);
  if (k) bn_mul_small(a, p10[k]);
}

static int bn_cmp(const Bn *a, const Bn *b) {
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  for (int i = a->n - 1; i >= 0; i--)
    if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
  return 0;
}

static void bn_add(Bn *r, const Bn *a, const Bn *b) {
  if (a->n < b->n) {
    const Bn *t = a;
    a = b;
    b = t;
  }
  uint64_t c = 0;
  int i;
  for (i = 0; i < a->n; i++) {
    uint64_t t = (uint64_t)a->d[i] + (i < b->n ? b->d[i] : 0) + c;
    r->d[i] = (uint32_t)t;
    c = t >> 32;
  }
  r->n = a->n;
  if (c) {
    if (r->n == BN_LIMBS) bn_overflow();
    r->d[r->n++] = (uint32_t)c;
  }
}

/* a -= b, for a >= b. */
static void bn_sub(Bn *a, const Bn *b) {
  int64_t borrow = 0;
  for (int i = 0; i < a->n; i++) {
    int64_t t = (int64_t)a->d[i] - (i < b->n ? b->d[i] : 0) - borrow;
    borrow = t < 0;
    a->d[i] = (uint32_t)(t + (borrow ? ((int64_t)1 << 32) : 0));
  }
  while (a->n && !a->d[a->n - 1]) a->n--;
}

/* ---- Dragon4 digits ---- */

/* Generates the decimal digits of mant * 2^exp2 (mant > 0) into buf,
   without a point, and returns how many; *exp10 is the decimal exponent of
   the first digit.  mbit is the index of mant's top bit and uneq says the
   gap to the next lower float is half the gap to the next higher (at a
   power of two), both as IEEE decoding gives them.
   Digits stop as soon as they identify the value among its type's floats
   (the margins), but not before min_digits digits, and never after
   precision digits; both count fraction digits when frac is set, all
   significant digits otherwise, and -1 means no limit.  The last digit is
   rounded to nearest, ties to even. */
static int dragon4(uint64_t mant, int exp2, int mbit, int uneq, int frac,
                   int precision, int min_digits, char *buf, int bufsize,
                   int *exp10) {
  Bn value, scale, mlow, mhigh_store, hi;
  Bn *mhigh = uneq ? &mhigh_store : &mlow;
  int even = (mant & 1) == 0;
  /* value/scale is the float; mlow/scale and mhigh/scale are half the gaps
     to its neighbours */
  bn_set(&value, mant);
  if (exp2 >= 0) {
    bn_shl(&value, exp2 + 1 + uneq);
    bn_set(&scale, uneq ? 4 : 2);
    bn_pow2(&mlow, exp2);
  } else {
    bn_shl(&value, 1 + uneq);
    bn_pow2(&scale, -exp2 + 1 + uneq);
    bn_set(&mlow, 1);
  }
  if (uneq) {
    mhigh_store = mlow;
    bn_shl(&mhigh_store, 1);
  }

  /* an estimate of ceil(log10(value)) that is right or one too low */
  int k = (int)ceil((double)(mbit + exp2) * 0.30102999566398119521 - 0.69);
  /* with a fraction cutoff above the first digit, only the digit at the
     cutoff is left to print */
  if (frac && precision >= 0 && k <= -precision) k = -precision + 1;
  if (k > 0) {
    bn_mul_pow10(&scale, k);
  } else if (k < 0) {
    bn_mul_pow10(&value, -k);
    bn_mul_pow10(&mlow, -k);
    if (uneq) {
      mhigh_store = mlow;
      bn_shl(&mhigh_store, 1);
    }
  }
  if (bn_cmp(&value, &scale) >= 0) {
    k++;
  } else {
    bn_mul_small(&value, 10);
    bn_mul_small(&mlow, 10);
    if (uneq) {
      mhigh_store = mlow;
      bn_shl(&mhigh_store, 1);
    }
  }

  int cut_max = k - bufsize;
  if (precision >= 0) {
    int want = frac ? -precision : k - precision;
    if (want > cut_max) cut_max = want;
  }
  int cut_min = k;
  if (min_digits >= 0) {
    int want = frac ? -min_digits : k - min_digits;
    if (want < cut_min) cut_min = want;
  }
  *exp10 = k - 1;

  int n = 0, low, high, digit;
  for (;;) {
    k--;
    digit = 0;
    while (bn_cmp(&value, &scale) >= 0) {
      bn_sub(&value, &scale);
      digit++;
    }
    bn_add(&hi, &value, mhigh);
    int c = bn_cmp(&value, &mlow);
    low = even ? c <= 0 : c < 0;
    c = bn_cmp(&hi, &scale);
    high = even ? c >= 0 : c > 0;
    if (((low | high) && k <= cut_min) || k == cut_max) break;
    buf[n++] = (char)('0' + digit);
    bn_mul_small(&value, 10);
    bn_mul_small(&mlow, 10);
    if (uneq) {
      mhigh_store = mlow;
      bn_shl(&mhigh_store, 1);
    }
  }

  /* round the last digit: down if only the low margin was reached, up if
     only the high one, else to the nearer, ties to an even digit */
  int down = low;
  if (low == high) {
    bn_shl(&value, 1);
    int c = bn_cmp(&value, &scale);
    down = c < 0;
    if (c == 0) down = (digit & 1) == 0;
  }
  if (down) {
    buf[n++] = (char)('0' + digit);
  } else if (digit == 9) {
    for (;;) {
      if (n == 0) {
        buf[n++] = '1';
        *exp10 += 1;
        break;
      }
      n--;
      if (buf[n] != '9') {
        buf[n]++;
        n++;
        break;
      }
    }
  } else {
    buf[n++] = (char)('0' + digit + 1);
  }
  return n;
}

/* ---- floats: decoding ---- */

enum { FK_F16, FK_F32, FK_F64 };

typedef enum { FPC_FINITE, FPC_INF, FPC_NAN } FpClass;

/* One IEEE value, decoded the way Dragon4 wants it. */
typedef struct Fp {
  int cls;        /* FpClass */
  int neg;        /* the sign bit */
  uint64_t mant;  /* |value| = mant * 2^exp2; 0 for zero */
  int exp2;
  int mbit;       /* index of mant's top bit */
  int uneq;       /* lower gap is half the upper (a power of two) */
  double d;       /* the value itself: float16/32 are exact in double */
} Fp;

static Fp fp_decode(uint64_t bits, int fk) {
  static const int eb[] = {5, 8, 11}, mb[] = {10, 23, 52};
  int ebits = eb[fk], mbits = mb[fk], bias = (1 << (ebits - 1)) - 1;
  uint64_t frac = bits & ((UINT64_C(1) << mbits) - 1);
  int e = (int)((bits >> mbits) & ((1u << ebits) - 1));
  Fp v;
  memset(&v, 0, sizeof v);
  v.neg = (int)((bits >> (ebits + mbits)) & 1);
  if (e == (1 << ebits) - 1) {
    v.cls = frac ? FPC_NAN : FPC_INF;
    v.d = frac ? NAN : (v.neg ? -INFINITY : INFINITY);
    return v;
  }
  v.cls = FPC_FINITE;
  if (e) {
    v.mant = (UINT64_C(1) << mbits) | frac;
    v.exp2 = e - bias - mbits;
    v.mbit = mbits;
    v.uneq = e != 1 && frac == 0;
  } else {
    v.mant = frac;
    v.exp2 = 1 - bias - mbits;
    v.mbit = 0;
    for (uint64_t m = frac; m > 1; m >>= 1) v.mbit++;
  }
  v.d = ldexp((double)v.mant, v.exp2);
  if (v.neg) v.d = -v.d;
  return v;
}

static uint64_t load_bits(const char *p, int fk) {
  if (fk == FK_F16) {
    uint16_t h;
    memcpy(&h, p, 2);
    return h;
  }
  if (fk == FK_F32) {
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
  }
  uint64_t q;
  memcpy(&q, p, 8);
  return q;
}

static Fp fp_load(const char *p, int fk) { return fp_decode(load_bits(p, fk), fk); }

/* x rounded to float16, ties to even (for float16's thresholds). */
static double round_f16(double x) {
  if (x == 0 || !isfinite(x)) return x;
  double a = fabs(x);
  if (a >= 65520.0) return x < 0 ? -INFINITY : INFINITY;
  int ex;
  frexp(a, &ex); /* a = m * 2^ex, m in [0.5, 1) */
  int lead = ex - 1 < -14 ? -14 : ex - 1;
  double q = ldexp(1.0, lead - 10);
  double r = nearbyint(a / q) * q;
  return x < 0 ? -r : r;
}

static double round_to(int fk, double x) {
  if (fk == FK_F16) return round_f16(x);
  if (fk == FK_F32) return (double)(float)x;
  return x;
}

/* ---- floats: layout of the digits ---- */

static void put_spaces(SrBuf *b, int n) {
  if (n > 0) sr_buf_fill(b, ' ', (size_t)n);
}

/* np.format_float_positional / _scientific of one finite or non-finite
   value with unique digits. */
static void fmt_fp(SrBuf *out, const Fp *v, const SrFloatFmt *f) {
  if (v->cls != FPC_FINITE) {
    /* Dragon4 gives a NaN no sign, even a requested "+" */
    if (v->cls == FPC_NAN) sr_buf_puts(out, "nan");
    else sr_buf_puts(out, v->neg ? "-inf" : f->sign ? "+inf" : "inf");
    return;
  }
  int precision = f->precision > MAX_DIGITS ? MAX_DIGITS : f->precision;
  int min_digits = f->min_digits > MAX_DIGITS ? MAX_DIGITS : f->min_digits;
  char dig[2 * MAX_DIGITS + 32];
  int nd, e10;
  int frac = !f->scientific && f->fractional;
  if (v->mant == 0) {
    dig[0] = '0';
    nd = 1;
    e10 = 0;
  } else {
    /* scientific precision counts the digits after the first one */
    int p = precision, m = min_digits;
    if (f->scientific) {
      p = p < 0 ? -1 : p + 1;
      m = m < 0 ? -1 : m + 1;
    }
    nd = dragon4(v->mant, v->exp2, v->mbit, v->uneq, frac, p, m, dig,
                 (int)sizeof dig - 1, &e10);
  }
  char sign = v->neg ? '-' : f->sign ? '+' : 0;
  int trim = f->trim;
  int add = min_digits < 0 ? 0 : min_digits;
  SrBuf b = SR_BUF_INIT;
  int nfrac = 0, has_point = 0;

  if (f->scientific) {
    int lead = 1 + (sign != 0);
    if (f->pad_left > lead) put_spaces(&b, f->pad_left - lead);
    if (sign) sr_buf_putc(&b, sign);
    sr_buf_putc(&b, dig[0]);
    if (nd > 1) {
      sr_buf_putc(&b, '.');
      sr_buf_putn(&b, dig + 1, (size_t)nd - 1);
      nfrac = nd - 1;
    } else if (trim != SR_TRIM_POINT) {
      sr_buf_putc(&b, '.');
    }
    if (trim == SR_TRIM_ONE_ZERO && nfrac == 0) {
      sr_buf_putc(&b, '0');
      nfrac = 1;
    } else if (trim == SR_TRIM_KEEP && add > nfrac) {
      sr_buf_fill(&b, '0', (size_t)(add - nfrac));
      nfrac = add;
    }
    if (trim != SR_TRIM_KEEP && nfrac > 0) {
      while (b.p[b.len - 1] == '0') b.len--;
      if (trim == SR_TRIM_ONE_ZERO && b.p[b.len - 1] == '.')
        b.p[b.len++] = '0';
      b.p[b.len] = 0;
    }
    /* the exponent's digits, zero-padded to exp_digits (2 by default);
       with exp_digits 0 an exponent of 0 has no digits at all */
    int x = e10 < 0 ? -e10 : e10;
    int ed = f->exp_digits < 0 ? 2 : f->exp_digits > 5 ? 5 : f->exp_digits;
    sr_buf_putc(&b, 'e');
    sr_buf_putc(&b, e10 < 0 ? '-' : '+');
    if (x || ed) sr_buf_printf(&b, "%0*d", ed, x);
    sr_buf_putn(out, b.p, b.len);
    sr_buf_free(&b);
    return;
  }

  if (sign) sr_buf_putc(&b, sign);
  int nwhole;
  if (e10 >= 0) {
    nwhole = e10 + 1;
    if (nd <= nwhole) {
      sr_buf_putn(&b, dig, (size_t)nd);
      sr_buf_fill(&b, '0', (size_t)(nwhole - nd));
    } else {
      sr_buf_putn(&b, dig, (size_t)nwhole);
      sr_buf_putc(&b, '.');
      has_point = 1;
      sr_buf_putn(&b, dig + nwhole, (size_t)(nd - nwhole));
      nfrac = nd - nwhole;
    }
  } else {
    nwhole = 1;
    sr_buf_puts(&b, "0.");
    has_point = 1;
    sr_buf_fill(&b, '0', (size_t)(-(e10 + 1)));
    sr_buf_putn(&b, dig, (size_t)nd);
    nfrac = nd - (e10 + 1);
  }
  if (!has_point && trim != SR_TRIM_POINT) sr_buf_putc(&b, '.');
  int want = frac ? add : add - nwhole;
  if (trim == SR_TRIM_ONE_ZERO && nfrac == 0) {
    sr_buf_putc(&b, '0');
    nfrac = 1;
  } else if (trim == SR_TRIM_KEEP && want > nfrac) {
    sr_buf_fill(&b, '0', (size_t)(want - nfrac));
    nfrac = want;
  }
  if (trim != SR_TRIM_KEEP && nfrac > 0) {
    while (b.p[b.len - 1] == '0') {
      b.len--;
      nfrac--;
    }
    if (b.p[b.len - 1] == '.') {
      if (trim == SR_TRIM_ONE_ZERO) {
        b.p[b.len++] = '0';
        nfrac++;
      } else if (trim == SR_TRIM_POINT) {
        b.len--;
      }
    }
    b.p[b.len] = 0;
  }
  if (f->pad_right >= nfrac) {
    /* a dropped point still takes its column */
    if (trim == SR_TRIM_POINT && nfrac == 0) sr_buf_putc(&b, ' ');
    put_spaces(&b, f->pad_right - nfrac);
  }
  int have = nwhole + (sign != 0);
  if (f->pad_left > have) put_spaces(out, f->pad_left - have);
  sr_buf_putn(out, b.p, b.len);
  sr_buf_free(&b);
}

static int float_kind(SrDtype dt) {
  switch (dt) {
  case SR_F16: return FK_F16;
  case SR_F32: case SR_C64: return FK_F32;
  case SR_F64: case SR_C128: return FK_F64;
  default: return -1;
  }
}

void sr_numfmt_float(SrBuf *out, SrDtype dt, const void *elem, const SrFloatFmt *f) {
  int fk = float_kind(dt);
  if (fk < 0 || sr_dtype_kind(dt) != SR_DK_FLOAT) {
    sr_buf_putc(out, '?');
    return;
  }
  Fp v = fp_load(elem, fk);
  fmt_fp(out, &v, f);
}

/* str() of a numpy float scalar: positional from 1e-4 up to 1e16, else
   scientific, shortest digits either way. */
static void fp_scalar_str(SrBuf *out, const Fp *v, int trim_pos, int trim_sci, int sign) {
  SrFloatFmt f = {0, -1, -1, 1, trim_pos, sign, -1, -1, -1};
  double a = fabs(v->d);
  if (v->cls == FPC_FINITE && !(a == 0 || (a < 1e16 && a >= 1e-4))) {
    f.scientific = 1;
    f.trim = trim_sci;
  }
  fmt_fp(out, v, &f);
}

/* ---- ml_dtypes floats: bfloat16, float8, float4 ---- */

/* The value of a small float as float32 gives it (exact). */
static double mini_value(SrDtype dt, const unsigned char *p) {
  if (dt == SR_BF16) {
    uint16_t h;
    memcpy(&h, p, 2);
    uint32_t w = (uint32_t)h << 16;
    float f;
    memcpy(&f, &w, 4);
    return f;
  }
  unsigned b = p[0];
  int eb, mb, bias, ieee = 0, fnuz = 0, fn = 0;
  switch (dt) {
  case SR_F8_E4M3FN: eb = 4; mb = 3; bias = 7; fn = 1; break;
  case SR_F8_E5M2: eb = 5; mb = 2; bias = 15; ieee = 1; break;
  case SR_F8_E4M3FNUZ: eb = 4; mb = 3; bias = 8; fnuz = 1; break;
  case SR_F8_E5M2FNUZ: eb = 5; mb = 2; bias = 16; fnuz = 1; break;
  case SR_F8_E4M3B11FNUZ: eb = 4; mb = 3; bias = 11; fnuz = 1; break;
  case SR_F8_E3M4: eb = 3; mb = 4; bias = 3; ieee = 1; break;
  case SR_F8_E4M3: eb = 4; mb = 3; bias = 7; ieee = 1; break;
  case SR_F8_E8M0FNU:
    /* exponent only, no sign, no zero; all ones is NaN */
    return b == 0xff ? NAN : ldexp(1.0, (int)b - 127);
  case SR_F4_E2M1FN: eb = 2; mb = 1; bias = 1; b &= 0xf; break;
  /* float6: finite only, in the low 6 bits */
  case SR_F6_E2M3FN: eb = 2; mb = 3; bias = 1; b &= 0x3f; break;
  case SR_F6_E3M2FN: eb = 3; mb = 2; bias = 3; b &= 0x3f; break;
  default: return NAN;
  }
  int nbits = 1 + eb + mb;
  int neg = (b >> (nbits - 1)) & 1;
  unsigned e = (b >> mb) & ((1u << eb) - 1), m = b & ((1u << mb) - 1);
  if (fnuz && b == 1u << (nbits - 1)) return NAN; /* the "negative zero" */
  if (fn && e == (1u << eb) - 1 && m == (1u << mb) - 1) return NAN;
  if (ieee && e == (1u << eb) - 1) return m ? NAN : (neg ? -INFINITY : INFINITY);
  double v = e ? ldexp((double)((1u << mb) | m), (int)e - bias - mb)
               : ldexp((double)m, 1 - bias - mb);
  return neg ? -v : v;
}

/* ml_dtypes' repr and str: C++ `ostream << float`, which is "%g"; a NaN
   prints without its sign. */
static void mini_str(SrBuf *out, double v) {
  if (isnan(v)) sr_buf_puts(out, "nan");
  else if (isinf(v)) sr_buf_puts(out, v < 0 ? "-inf" : "inf");
  else sr_buf_printf(out, "%g", v);
}

/* ---- element kinds ---- */

typedef enum {
  EK_BOOL, EK_INT, EK_UINT, EK_FLOAT, EK_COMPLEX,
  EK_MINIFLOAT, /* ml_dtypes floats, printed by their repr */
  EK_SMALLINT,  /* ml_dtypes int2/int4/uint2/uint4, likewise */
  EK_FLOAT0,    /* JAX's float0: numpy's structured void, "(b'',)" */
  EK_OTHER,
} ElemKind;

static int elem_kind(SrDtype dt) {
  switch (dt) {
  case SR_BOOL: return EK_BOOL;
  case SR_I8: case SR_I16: case SR_I32: case SR_I64: return EK_INT;
  case SR_U8: case SR_U16: case SR_U32: case SR_U64: return EK_UINT;
  case SR_I2: case SR_I4: case SR_U2: case SR_U4: return EK_SMALLINT;
  case SR_F16: case SR_F32: case SR_F64: return EK_FLOAT;
  case SR_C64: case SR_C128: return EK_COMPLEX;
  case SR_FLOAT0: return EK_FLOAT0;
  case SR_BF16: case SR_F8_E4M3FN: case SR_F8_E5M2: case SR_F8_E4M3FNUZ:
  case SR_F8_E5M2FNUZ: case SR_F8_E4M3B11FNUZ: case SR_F8_E3M4:
  case SR_F8_E4M3: case SR_F8_E8M0FNU: case SR_F4_E2M1FN: case SR_F6_E2M3FN: case SR_F6_E3M2FN:
    return EK_MINIFLOAT;
  default: return EK_OTHER;
  }
}

int sr_numfmt_supported(SrDtype dt) { return elem_kind(dt) != EK_OTHER; }

static int64_t load_int(const char *p, SrDtype dt) {
  switch (dt) {
  case SR_I8: { int8_t v; memcpy(&v, p, 1); return v; }
  case SR_I16: { int16_t v; memcpy(&v, p, 2); return v; }
  case SR_I32: { int32_t v; memcpy(&v, p, 4); return v; }
  case SR_I64: { int64_t v; memcpy(&v, p, 8); return v; }
  case SR_I2: case SR_I4: {
    /* one per byte; sign-extend the low bits whatever the high ones hold */
    int bits = dt == SR_I2 ? 2 : 4;
    int v = (unsigned char)p[0] & ((1 << bits) - 1);
    return v >= 1 << (bits - 1) ? v - (1 << bits) : v;
  }
  default: return 0;
  }
}

static uint64_t load_uint(const char *p, SrDtype dt) {
  switch (dt) {
  case SR_U8: return (unsigned char)p[0];
  case SR_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
  case SR_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
  case SR_U64: { uint64_t v; memcpy(&v, p, 8); return v; }
  case SR_U2: return (unsigned char)p[0] & 3;
  case SR_U4: return (unsigned char)p[0] & 15;
  default: return 0;
  }
}

/* ---- scalars ---- */

void sr_numfmt_scalar(SrBuf *out, SrDtype dt, const void *elem) {
  const char *p = elem;
  switch (elem_kind(dt)) {
  case EK_BOOL:
    sr_buf_puts(out, p[0] ? "True" : "False");
    return;
  case EK_INT:
  case EK_SMALLINT:
    if (dt == SR_U2 || dt == SR_U4)
      sr_buf_printf(out, "%llu", (unsigned long long)load_uint(p, dt));
    else
      sr_buf_printf(out, "%lld", (long long)load_int(p, dt));
    return;
  case EK_UINT:
    sr_buf_printf(out, "%llu", (unsigned long long)load_uint(p, dt));
    return;
  case EK_FLOAT: {
    Fp v = fp_load(p, float_kind(dt));
    fp_scalar_str(out, &v, SR_TRIM_ONE_ZERO, SR_TRIM_POINT, 0);
    return;
  }
  case EK_COMPLEX: {
    /* numpy's complex scalar str: "(re+imj)", or "imj" when re is +0 */
    int fk = float_kind(dt);
    size_t half = dt == SR_C64 ? 4 : 8;
    Fp re = fp_load(p, fk), im = fp_load(p + half, fk);
    if (re.cls == FPC_FINITE && re.mant == 0 && !re.neg) {
      fp_scalar_str(out, &im, SR_TRIM_POINT, SR_TRIM_POINT, 0);
      sr_buf_putc(out, 'j');
      return;
    }
    sr_buf_putc(out, '(');
    if (re.cls == FPC_FINITE) fp_scalar_str(out, &re, SR_TRIM_POINT, SR_TRIM_POINT, 0);
    else if (re.cls == FPC_NAN) sr_buf_puts(out, "nan");
    else sr_buf_puts(out, re.neg ? "-inf" : "inf");
    if (im.cls == FPC_FINITE) fp_scalar_str(out, &im, SR_TRIM_POINT, SR_TRIM_POINT, 1);
    else if (im.cls == FPC_NAN) sr_buf_puts(out, "+nan");
    else sr_buf_puts(out, im.neg ? "-inf" : "+inf");
    sr_buf_puts(out, "j)");
    return;
  }
  case EK_MINIFLOAT:
    mini_str(out, mini_value(dt, elem));
    return;
  case EK_FLOAT0:
    sr_buf_puts(out, "(b'',)");
    return;
  default:
    sr_buf_putc(out, '?');
    return;
  }
}

/* ---- element formatters fitted to an array ---- */

/* numpy's FloatingFormat in 'maxprec' mode: one notation and one set of
   paddings for the array. */
typedef struct FloatFit {
  int sign;          /* '+' on non-negative values (imaginary parts) */
  int exp_format;
  int precision, min_digits, trim;
  int pad_left, pad_right, exp_size;
  char nanstr[16], infstr[16];
} FloatFit;

/* Whether numpy switches the array to scientific notation. */
static int wants_exp(const SrNumfmtOpts *o, int fk, double maxv, double minv) {
  double big = 1e8, small = 1e-4;
  if (o->rules >= SR_NUMPY_2_3) {
    /* 10 ** min(8, finfo(dtype).precision) */
    big = fk == FK_F16 ? 1e3 : fk == FK_F32 ? 1e6 : 1e8;
  }
  if (o->rules >= SR_NUMPY_2_0) {
    /* NEP 50: the Python floats take the array's dtype */
    big = round_to(fk, big);
    small = round_to(fk, small);
  }
  /* max / min is computed in the dtype; float16 divides in float32 */
  double ratio;
  if (fk == FK_F64) ratio = maxv / minv;
  else ratio = round_to(fk, (double)((float)maxv / (float)minv));
  return maxv >= big || (!o->suppress && (minv < small || ratio > 1000.0));
}

static void float_fit(FloatFit *ff, const SrNumfmtOpts *o, int fk, int sign,
                      const Fp *v, size_t n) {
  memset(ff, 0, sizeof *ff);
  ff->sign = sign;
  ff->precision = o->floatmode == SR_FM_UNIQUE ? -1 : o->precision;
  ff->exp_size = -1;
  ff->min_digits = -1;
  ff->trim = SR_TRIM_ZEROS;
  size_t nfinite = 0, nnonzero = 0;
  double maxv = 0, minv = 0;
  int any_neginf = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i].cls != FPC_FINITE) {
      if (v[i].cls == FPC_INF && v[i].neg) any_neginf = 1;
      continue;
    }
    nfinite++;
    if (v[i].mant == 0) continue;
    double a = fabs(v[i].d);
    if (nnonzero == 0 || a > maxv) maxv = a;
    if (nnonzero == 0 || a < minv) minv = a;
    nnonzero++;
  }
  if (nnonzero) ff->exp_format = wants_exp(o, fk, maxv, minv);

  if (nfinite > 0) {
    SrBuf s = SR_BUF_INIT;
    /* fixed: precision digits each (numpy's non-unique Dragon4, here
       the shortest digits padded with zeros to the precision) */
    int fixed = o->floatmode == SR_FM_FIXED;
    SrFloatFmt f = {ff->exp_format, ff->precision, fixed ? ff->precision : -1, 1,
                    fixed ? SR_TRIM_KEEP : SR_TRIM_ZEROS, sign == '+', -1, -1, -1};
    int pl = 0, pr = 0, es = 0;
    for (size_t i = 0; i < n; i++) {
      if (v[i].cls != FPC_FINITE) continue;
      sr_buf_reset(&s);
      fmt_fp(&s, &v[i], &f);
      const char *dot = strchr(s.p, '.');
      const char *e = strchr(s.p, 'e');
      size_t len = e ? (size_t)(e - s.p) : s.len;
      int ip = dot ? (int)(dot - s.p) : (int)len;
      int fp = dot ? (int)(len - (size_t)(dot - s.p) - 1) : 0;
      if (ip > pl) pl = ip;
      if (fp > pr) pr = fp;
      if (e && (int)strlen(e + 1) - 1 > es) es = (int)strlen(e + 1) - 1;
    }
    sr_buf_free(&s);
    ff->pad_left = pl;
    if (ff->exp_format) {
      ff->exp_size = es;
      ff->trim = SR_TRIM_KEEP;
      ff->precision = pr;
      ff->min_digits = pr;
      ff->pad_right = es + 2 + pr;
    } else {
      ff->pad_right = pr;
      if (o->floatmode == SR_FM_FIXED || o->floatmode == SR_FM_MAXPREC_EQUAL) {
        ff->precision = ff->min_digits = pr;
        ff->trim = SR_TRIM_KEEP;
      } else {
        ff->trim = SR_TRIM_ZEROS;
        ff->min_digits = 0;
      }
    }
    /* sign=' ': a space where no value has a minus sign */
    int anyneg = 0;
    for (size_t i = 0; i < n; i++) anyneg |= v[i].cls == FPC_FINITE && v[i].neg;
    if (sign == ' ' && !anyneg) ff->pad_left++;
  }
  if (nfinite < n) {
    /* nanstr and infstr right-aligned in the column */
    int neginf = sign != '-' || any_neginf;
    int off = ff->pad_right + 1, ln = (int)strlen(o->nanstr), li = (int)strlen(o->infstr);
    if (ln - off > ff->pad_left) ff->pad_left = ln - off;
    if (li + neginf - off > ff->pad_left) ff->pad_left = li + neginf - off;
  }
  snprintf(ff->nanstr, sizeof ff->nanstr, "%s", o->nanstr);
  snprintf(ff->infstr, sizeof ff->infstr, "%s", o->infstr);
}

static void float_word(SrBuf *out, const FloatFit *ff, const Fp *v) {
  if (v->cls != FPC_FINITE) {
    char r[24];
    const char *sg = v->cls != FPC_NAN && v->neg ? "-" : ff->sign == '+' ? "+" : "";
    snprintf(r, sizeof r, "%s%s", sg, v->cls == FPC_NAN ? ff->nanstr : ff->infstr);
    put_spaces(out, ff->pad_left + ff->pad_right + 1 - (int)strlen(r));
    sr_buf_puts(out, r);
    return;
  }
  SrFloatFmt f;
  f.scientific = ff->exp_format;
  f.precision = ff->precision;
  f.min_digits = ff->min_digits;
  f.fractional = 1;
  f.trim = ff->trim;
  f.sign = ff->sign == '+';
  f.pad_left = ff->pad_left;
  f.pad_right = ff->exp_format ? -1 : ff->pad_right;
  f.exp_digits = ff->exp_format ? ff->exp_size : -1;
  fmt_fp(out, v, &f);
}

/* The formatter of one array: its kind and what was fitted. */
typedef struct Fmt {
  SrDtype dt;
  int kind;
  int fk;
  int zero_d;      /* rank 0: BoolFormat drops its padding */
  int int_width;
  FloatFit re, im;
} Fmt;

static void fmt_fit(Fmt *F, const SrNumfmtOpts *o, SrDtype dt, int ndim,
                    const char *data, const int64_t *offs, size_t n) {
  memset(F, 0, sizeof *F);
  F->dt = dt;
  F->kind = elem_kind(dt);
  F->fk = float_kind(dt);
  F->zero_d = ndim == 0;
  size_t es = sr_dtype_info(dt)->size;
  char tmp[32];
  switch (F->kind) {
  case EK_INT:
  case EK_UINT: {
    /* IntegerFormat: width of the longest of str(max) and str(min) */
    if (n == 0) break;
    int wmax, wmin;
    if (F->kind == EK_INT) {
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (size_t i = 0; i < n; i++) {
        int64_t x = load_int(data + offs[i] * es, dt);
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      wmax = snprintf(tmp, sizeof tmp, "%lld", (long long)hi);
      wmin = snprintf(tmp, sizeof tmp, "%lld", (long long)lo);
    } else {
      uint64_t lo = UINT64_MAX, hi = 0;
      for (size_t i = 0; i < n; i++) {
        uint64_t x = load_uint(data + offs[i] * es, dt);
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      wmax = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)hi);
      wmin = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)lo);
    }
    F->int_width = wmax > wmin ? wmax : wmin;
    break;
  }
  case EK_FLOAT:
  case EK_COMPLEX: {
    Fp *re = sr_xmalloc((n ? n : 1) * sizeof *re);
    Fp *im = F->kind == EK_COMPLEX ? sr_xmalloc((n ? n : 1) * sizeof *im) : NULL;
    size_t half = F->fk == FK_F32 ? 4 : 8;
    for (size_t i = 0; i < n; i++) {
      const char *p = data + offs[i] * es;
      re[i] = fp_load(p, F->fk);
      if (im) im[i] = fp_load(p + half, F->fk);
    }
    float_fit(&F->re, o, F->fk, o->sign ? o->sign : '-', re, n);
    if (im) float_fit(&F->im, o, F->fk, '+', im, n);
    free(re);
    free(im);
    break;
  }
  default:
    break;
  }
}

static void fmt_word(SrBuf *out, const Fmt *F, const char *p) {
  switch (F->kind) {
  case EK_BOOL:
    sr_buf_puts(out, p[0] ? (F->zero_d ? "True" : " True") : "False");
    return;
  case EK_INT:
    sr_buf_printf(out, "%*lld", F->int_width, (long long)load_int(p, F->dt));
    return;
  case EK_UINT:
    sr_buf_printf(out, "%*llu", F->int_width, (unsigned long long)load_uint(p, F->dt));
    return;
  case EK_FLOAT: {
    Fp v = fp_load(p, F->fk);
    float_word(out, &F->re, &v);
    return;
  }
  case EK_COMPLEX: {
    Fp re = fp_load(p, F->fk), im = fp_load(p + (F->fk == FK_F32 ? 4 : 8), F->fk);
    float_word(out, &F->re, &re);
    /* the 'j' goes before the imaginary part's right padding */
    size_t start = out->len;
    float_word(out, &F->im, &im);
    size_t end = out->len;
    while (end > start && out->p[end - 1] == ' ') end--;
    size_t pad = out->len - end;
    out->len = end;
    sr_buf_putc(out, 'j');
    sr_buf_fill(out, ' ', pad);
    return;
  }
  default:
    sr_numfmt_scalar(out, F->dt, p);
    return;
  }
}

/* ---- layout ---- */

typedef struct Lay {
  int ndim;
  const int64_t *shape;
  const char *sep;
  size_t seplen, sep_rs; /* sep_rs: sep without its trailing spaces */
  int summary, edge;
  /* the words, in the order they are shown */
  const char *words;
  const size_t *wstart;
  size_t next;
} Lay;

/* Visits the elements shown (all, or the edges of each long axis when
   summarising) in printing order, appending their flat offsets. */
static void collect(const Lay *L, int axis, int64_t off, int64_t **offs,
                    size_t *n, size_t *cap) {
  if (axis == L->ndim) {
    if (*n == *cap) {
      *cap = *cap ? 2 * *cap : 64;
      *offs = sr_xrealloc(*offs, *cap * sizeof **offs);
    }
    (*offs)[(*n)++] = off;
    return;
  }
  int64_t len = L->shape[axis];
  int show = L->summary && 2 * (int64_t)L->edge < len;
  for (int64_t i = 0; i < len; i++) {
    if (show && i == L->edge) i = len - L->edge;
    collect(L, axis + 1, off * len + i, offs, n, cap);
  }
}

static void rstrip_into(SrBuf *s, const SrBuf *line) {
  size_t n = line->len;
  while (n && line->p[n - 1] == ' ') n--;
  sr_buf_putn(s, line->p, n);
}

/* numpy's _extendLine: wrap before a word that would pass the width,
   unless the line holds nothing but its indent. */
static void extend_line(SrBuf *s, SrBuf *line, const char *w, size_t wl,
                        int width, int hang) {
  if ((int)(line->len + wl) > width && (int)line->len > hang) {
    rstrip_into(s, line);
    sr_buf_putc(s, '\n');
    sr_buf_reset(line);
    put_spaces(line, hang);
  }
  sr_buf_putn(line, w, wl);
}

/* Lays out the subarray at this axis, "[" ... "]", consuming its words.
   hang is the indent of its continuation lines, width its line width. */
static void lay(Lay *L, int axis, int hang, int width, SrBuf *out) {
  if (axis == L->ndim) {
    size_t k = L->next++;
    sr_buf_putn(out, L->words + L->wstart[k], L->wstart[k + 1] - L->wstart[k]);
    return;
  }
  int64_t len = L->shape[axis];
  int show = L->summary && 2 * (int64_t)L->edge < len;
  int64_t nitems = show ? 2 * (int64_t)L->edge + 1 : len;
  int left = L->ndim - axis;
  SrBuf s = SR_BUF_INIT;
  if (left == 1) {
    int elem_width = width - (L->sep_rs > 1 ? (int)L->sep_rs : 1);
    SrBuf line = SR_BUF_INIT;
    put_spaces(&line, hang);
    for (int64_t i = 0; i < nitems; i++) {
      if (show && i == L->edge) {
        extend_line(&s, &line, "...", 3, elem_width, hang);
      } else {
        size_t k = L->next++;
        extend_line(&s, &line, L->words + L->wstart[k],
                    L->wstart[k + 1] - L->wstart[k], elem_width, hang);
      }
      if (i + 1 < nitems) sr_buf_putn(&line, L->sep, L->seplen);
    }
    sr_buf_putn(&s, line.p, line.len);
    sr_buf_free(&line);
  } else {
    for (int64_t i = 0; i < nitems; i++) {
      put_spaces(&s, hang);
      if (show && i == L->edge) sr_buf_puts(&s, "...");
      else lay(L, axis + 1, hang + 1, width - 1, &s);
      if (i + 1 < nitems) {
        /* rows end in the separator's visible part and one newline per
           axis still below this one */
        sr_buf_putn(&s, L->sep, L->sep_rs);
        sr_buf_fill(&s, '\n', (size_t)(left - 1));
      }
    }
  }
  sr_buf_putc(out, '[');
  sr_buf_putn(out, s.p + hang, s.len - (size_t)hang);
  sr_buf_putc(out, ']');
  sr_buf_free(&s);
}

/* The arrays printed exist, so their counts fit; but a zero size may
   follow sizes whose product alone would not (2**62, 4, 0). */
static int64_t num_elems(int ndim, const int64_t *shape) {
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

void sr_numfmt_array2string(SrBuf *out, const SrNumfmtOpts *o, SrDtype dt,
                            int ndim, const int64_t *shape, const void *data,
                            const char *sep, int prefix_len, int suffix_len) {
  int64_t size = num_elems(ndim, shape);
  if (size == 0) {
    sr_buf_puts(out, "[]");
    return;
  }
  Lay L;
  memset(&L, 0, sizeof L);
  L.ndim = ndim;
  L.shape = shape;
  L.sep = sep;
  L.seplen = strlen(sep);
  L.sep_rs = L.seplen;
  while (L.sep_rs && sep[L.sep_rs - 1] == ' ') L.sep_rs--;
  L.summary = size > o->threshold;
  L.edge = o->edgeitems;

  int64_t *offs = NULL;
  size_t n = 0, cap = 0;
  collect(&L, 0, 0, &offs, &n, &cap);

  Fmt F;
  fmt_fit(&F, o, dt, ndim, data, offs, n);
  size_t es = sr_dtype_info(dt)->size;
  SrBuf words = SR_BUF_INIT;
  size_t *wstart = sr_xmalloc((n + 1) * sizeof *wstart);
  for (size_t i = 0; i < n; i++) {
    wstart[i] = words.len;
    fmt_word(&words, &F, (const char *)data + offs[i] * (int64_t)es);
  }
  wstart[n] = words.len;
  L.words = sr_buf_str(&words);
  L.wstart = wstart;

  /* continuation lines align under the first "[" after the prefix */
  lay(&L, 0, 1 + prefix_len, o->linewidth - suffix_len, out);

  free(offs);
  free(wstart);
  sr_buf_free(&words);
}

void sr_numfmt_str_opts(SrBuf *out, const SrNumfmtOpts *o, SrDtype dt,
                        int ndim, const int64_t *shape, const void *data) {
  if (ndim == 0) {
    sr_numfmt_scalar(out, dt, data);
    return;
  }
  sr_numfmt_array2string(out, o, dt, ndim, shape, data, " ", 0, 0);
}

/* A shape as Python prints the tuple: "()", "(3,)", "(2, 3)". */
static void shape_tuple(SrBuf *out, int ndim, const int64_t *shape) {
  sr_buf_putc(out, '(');
  for (int i = 0; i < ndim; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_buf_printf(out, "%lld", (long long)shape[i]);
  }
  if (ndim == 1) sr_buf_putc(out, ',');
  sr_buf_putc(out, ')');
}

/* numpy's array_repr, for float0: JAX hands float0 values (the gradients
   of integer inputs) back as numpy arrays, not jax Arrays, so they print
   as numpy prints its structured void, with numpy's placement of the
   dtype (a new line under the "(" when it does not fit). */
static void numpy_repr(SrBuf *out, const SrNumfmtOpts *o, SrDtype dt, int ndim,
                       const int64_t *shape, const void *data) {
  static const char prefix[] = "array(";
  static const char dtype_str[] = "dtype=[('float0', 'V')])";
  const int plen = (int)sizeof prefix - 1;
  SrBuf s = SR_BUF_INIT;
  sr_buf_puts(&s, prefix);
  if (num_elems(ndim, shape) == 0 && !(ndim == 1 && shape[0] == 0)) {
    sr_buf_puts(&s, "[], shape=");
    shape_tuple(&s, ndim, shape);
  } else {
    sr_numfmt_array2string(&s, o, dt, ndim, shape, data, ", ", plen, 1);
  }
  sr_buf_putc(&s, ',');
  const char *nl = strrchr(sr_buf_str(&s), '\n');
  long last = (long)s.len - (nl ? (long)(nl - s.p) + 1 : 0);
  sr_buf_putn(out, s.p, s.len);
  if (last + (long)(sizeof dtype_str - 1) + 1 > o->linewidth) {
    sr_buf_putc(out, '\n');
    put_spaces(out, plen);
  } else {
    sr_buf_putc(out, ' ');
  }
  sr_buf_puts(out, dtype_str);
  sr_buf_free(&s);
}

void sr_numfmt_repr_opts(SrBuf *out, const SrNumfmtOpts *o, SrDtype dt,
                         int ndim, const int64_t *shape, const void *data,
                         int weak_type) {
  if (dt == SR_FLOAT0) {
    numpy_repr(out, o, dt, ndim, shape, data);
    return;
  }
  static const char prefix[] = "Array(";
  const int plen = (int)sizeof prefix - 1;
  SrBuf s = SR_BUF_INIT, d = SR_BUF_INIT;
  sr_buf_printf(&d, "dtype=%s", sr_dtype_name(dt));
  if (weak_type) sr_buf_puts(&d, ", weak_type=True");
  if (num_elems(ndim, shape) == 0) {
    sr_buf_puts(&s, "[], shape=");
    shape_tuple(&s, ndim, shape);
  } else {
    sr_numfmt_array2string(&s, o, dt, ndim, shape, data, ", ", plen, 1);
  }
  /* JAX's test, kept as it is: the last line's length plus two (without
     a newline, the whole text's length plus two), and when the dtype would
     not fit it is pushed right by the prefix's width, not onto a new line */
  const char *nl = strrchr(sr_buf_str(&s), '\n');
  long rfind = nl ? (long)(nl - s.p) : -1;
  long last = (long)s.len - rfind + 1;
  sr_buf_puts(out, prefix);
  sr_buf_putn(out, sr_buf_str(&s), s.len);
  sr_buf_putc(out, ',');
  if (last + (long)d.len + 2 > o->linewidth) put_spaces(out, plen);
  else sr_buf_putc(out, ' ');
  sr_buf_putn(out, d.p, d.len);
  sr_buf_putc(out, ')');
  sr_buf_free(&s);
  sr_buf_free(&d);
}

void sr_numfmt_str(SrBuf *out, SrDtype dt, int ndim, const int64_t *shape,
                   const void *data) {
  sr_numfmt_str_opts(out, &sr_numfmt_opts, dt, ndim, shape, data);
}

void sr_numfmt_repr(SrBuf *out, SrDtype dt, int ndim, const int64_t *shape,
                    const void *data, int weak_type) {
  sr_numfmt_repr_opts(out, &sr_numfmt_opts, dt, ndim, shape, data, weak_type);
}
