/* np_rng.c: numpy's bit generators and distributions (np_rng.h).  Each
   function follows its namesake in numpy 1.24's numpy/random (named in
   the comment above it). */
#include "exec/np_rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/np_ziggurat.h"

/* ---- SeedSequence (bit_generator.pyx) ---- */

#define SS_POOL 4
#define SS_INIT_A 0x43b0d7e5u
#define SS_MULT_A 0x931e8875u
#define SS_INIT_B 0x8b51f9ddu
#define SS_MULT_B 0x58f38dedu
#define SS_MIX_L 0xca01f9ddu
#define SS_MIX_R 0x4973f715u

static uint32_t hashmix(uint32_t value, uint32_t *hash_const) {
  value ^= *hash_const;
  *hash_const *= SS_MULT_A;
  value *= *hash_const;
  value ^= value >> 16;
  return value;
}

static uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t r = SS_MIX_L * x - SS_MIX_R * y;
  return r ^ (r >> 16);
}

/* SeedSequence.mix_entropy, then generate_state */
void sr_np_seedseq_state(const uint32_t *entropy, size_t nentropy, uint32_t *out, size_t n_words) {
  uint32_t pool[SS_POOL], h = SS_INIT_A;
  for (size_t i = 0; i < SS_POOL; i++) pool[i] = hashmix(i < nentropy ? entropy[i] : 0, &h);
  for (size_t s = 0; s < SS_POOL; s++)
    for (size_t d = 0; d < SS_POOL; d++)
      if (s != d) pool[d] = mix(pool[d], hashmix(pool[s], &h));
  for (size_t s = SS_POOL; s < nentropy; s++)
    for (size_t d = 0; d < SS_POOL; d++) pool[d] = mix(pool[d], hashmix(entropy[s], &h));
  uint32_t hb = SS_INIT_B;
  for (size_t i = 0; i < n_words; i++) {
    uint32_t v = pool[i % SS_POOL];
    v ^= hb;
    hb *= SS_MULT_B;
    v *= hb;
    v ^= v >> 16;
    out[i] = v;
  }
}

size_t sr_np_int_words(unsigned __int128 seed, uint32_t *words) {
  size_t n = 0;
  do {
    words[n++] = (uint32_t)seed;
    seed >>= 32;
  } while (seed);
  return n;
}

/* ---- PCG64 (src/pcg64/pcg64.h) ---- */

#define PCG_MULT (((unsigned __int128)2549297995355413924ULL << 64) + 4865540595714422341ULL)

static void pcg_step(SrNpBitgen *g) { g->state = g->state * PCG_MULT + g->inc; }

/* pcg64_set_seed: the state words are generate_state(4, uint64), each
   uint64 two uint32 words, low first */
void sr_np_pcg64_seed(SrNpBitgen *g, const uint32_t *entropy, size_t nentropy) {
  uint32_t w[8];
  uint64_t v[4];
  sr_np_seedseq_state(entropy, nentropy, w, 8);
  for (int i = 0; i < 4; i++) v[i] = (uint64_t)w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
  memset(g, 0, sizeof *g);
  g->kind = SR_NP_PCG64;
  unsigned __int128 s = (unsigned __int128)v[0] << 64 | v[1], q = (unsigned __int128)v[2] << 64 | v[3];
  g->state = 0;
  g->inc = q << 1 | 1;
  pcg_step(g);
  g->state += s;
  pcg_step(g);
}

static uint64_t pcg_next64(SrNpBitgen *g) {
  pcg_step(g);
  uint64_t x = (uint64_t)(g->state >> 64) ^ (uint64_t)g->state;
  unsigned rot = (unsigned)(g->state >> 122);
  return (x >> rot) | (x << ((-rot) & 63));
}

/* ---- MT19937 (src/mt19937/mt19937.c) ---- */

#define MT_N 624
#define MT_M 397

void sr_np_mt_seed(SrNpBitgen *g, uint32_t seed) {
  memset(g, 0, sizeof *g);
  g->kind = SR_NP_MT19937;
  for (int pos = 0; pos < MT_N; pos++) {
    g->key[pos] = seed;
    seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)pos + 1;
  }
  g->pos = MT_N;
}

/* mt19937_init_by_array */
void sr_np_mt_seed_array(SrNpBitgen *g, const uint32_t *init_key, int key_length) {
  sr_np_mt_seed(g, 19650218u);
  uint32_t *mt = g->key;
  int i = 1, j = 0;
  for (int k = MT_N > key_length ? MT_N : key_length; k; k--) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + init_key[j] + (uint32_t)j;
    i++;
    j++;
    if (i >= MT_N) {
      mt[0] = mt[MT_N - 1];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (int k = MT_N - 1; k; k--) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
    i++;
    if (i >= MT_N) {
      mt[0] = mt[MT_N - 1];
      i = 1;
    }
  }
  mt[0] = 0x80000000u;
}

/* _mt19937.pyx's __init__: key[0] = 0x80000000, the rest from the seed
   sequence, and pos left at 623 (the loop's last index), as numpy has it */
void sr_np_mt_seed_seq(SrNpBitgen *g, const uint32_t *entropy, size_t nentropy) {
  memset(g, 0, sizeof *g);
  g->kind = SR_NP_MT19937;
  sr_np_seedseq_state(entropy, nentropy, g->key, MT_N);
  g->key[0] = 0x80000000u;
  g->pos = MT_N - 1;
}

static void mt_gen(SrNpBitgen *g) {
  uint32_t *k = g->key, y;
  int i;
  for (i = 0; i < MT_N - MT_M; i++) {
    y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
    k[i] = k[i + MT_M] ^ (y >> 1) ^ (-(y & 1) & 0x9908b0dfu);
  }
  for (; i < MT_N - 1; i++) {
    y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
    k[i] = k[i + (MT_M - MT_N)] ^ (y >> 1) ^ (-(y & 1) & 0x9908b0dfu);
  }
  y = (k[MT_N - 1] & 0x80000000u) | (k[0] & 0x7fffffffu);
  k[MT_N - 1] = k[MT_M - 1] ^ (y >> 1) ^ (-(y & 1) & 0x9908b0dfu);
  g->pos = 0;
}

static uint32_t mt_next(SrNpBitgen *g) {
  if (g->pos == MT_N) mt_gen(g);
  uint32_t y = g->key[g->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

/* ---- the bitgen_t faces ---- */

uint64_t sr_np_next64(SrNpBitgen *g) {
  if (g->kind == SR_NP_PCG64) return pcg_next64(g);
  uint64_t hi = mt_next(g);
  return hi << 32 | mt_next(g);
}

uint32_t sr_np_next32(SrNpBitgen *g) {
  if (g->kind == SR_NP_MT19937) return mt_next(g);
  if (g->has_uint32) {
    g->has_uint32 = 0;
    return g->uinteger;
  }
  uint64_t next = pcg_next64(g);
  g->has_uint32 = 1;
  g->uinteger = (uint32_t)(next >> 32);
  return (uint32_t)next;
}

double sr_np_next_double(SrNpBitgen *g) {
  if (g->kind == SR_NP_PCG64) return (double)(pcg_next64(g) >> 11) * (1.0 / 9007199254740992.0);
  int32_t a = (int32_t)(mt_next(g) >> 5), b = (int32_t)(mt_next(g) >> 6);
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

/* ---- distributions (src/distributions/distributions.c) ---- */

/* random_standard_normal */
double sr_np_standard_normal(SrNpBitgen *g) {
  for (;;) {
    uint64_t r = sr_np_next64(g);
    int idx = (int)(r & 0xff);
    r >>= 8;
    int sign = (int)(r & 1);
    uint64_t rabs = (r >> 1) & 0x000fffffffffffffULL;
    double x = (double)rabs * np_zig_wi[idx];
    if (sign) x = -x;
    if (rabs < np_zig_ki[idx]) return x;
    if (idx == 0) {
      for (;;) {
        double xx = -np_zig_inv_r * log1p(-sr_np_next_double(g));
        double yy = -log1p(-sr_np_next_double(g));
        if (yy + yy > xx * xx) return ((rabs >> 8) & 1) ? -(np_zig_r + xx) : np_zig_r + xx;
      }
    } else if ((np_zig_fi[idx - 1] - np_zig_fi[idx]) * sr_np_next_double(g) + np_zig_fi[idx] < exp(-0.5 * x * x)) {
      return x;
    }
  }
}

/* next_float */
float sr_np_next_float(SrNpBitgen *g) { return (float)(sr_np_next32(g) >> 8) * (1.0f / 16777216.0f); }

/* random_standard_normal_f */
float sr_np_standard_normal_f(SrNpBitgen *g) {
  for (;;) {
    uint32_t r = sr_np_next32(g);
    int idx = (int)(r & 0xff);
    int sign = (int)((r >> 8) & 1);
    uint32_t rabs = (r >> 9) & 0x0007fffff;
    float x = (float)rabs * np_zig_wi_f[idx];
    if (sign) x = -x;
    if (rabs < np_zig_ki_f[idx]) return x;
    if (idx == 0) {
      for (;;) {
        float xx = -np_zig_inv_r_f * log1pf(-sr_np_next_float(g));
        float yy = -log1pf(-sr_np_next_float(g));
        if (yy + yy > xx * xx) return ((rabs >> 8) & 1) ? -(np_zig_r_f + xx) : np_zig_r_f + xx;
      }
    } else if ((np_zig_fi_f[idx - 1] - np_zig_fi_f[idx]) * sr_np_next_float(g) + np_zig_fi_f[idx] <
               exp(-0.5 * x * x)) {
      return x;
    }
  }
}

/* random_standard_exponential (and standard_exponential_unlikely, whose
   last case draws again from the top) */
double sr_np_standard_exponential(SrNpBitgen *g) {
  for (;;) {
    uint64_t ri = sr_np_next64(g) >> 3;
    uint8_t idx = (uint8_t)(ri & 0xff);
    ri >>= 8;
    double x = (double)ri * np_zig_we[idx];
    if (ri < np_zig_ke[idx]) return x;
    if (idx == 0) return np_zig_exp_r - log1p(-sr_np_next_double(g));
    if ((np_zig_fe[idx - 1] - np_zig_fe[idx]) * sr_np_next_double(g) + np_zig_fe[idx] < exp(-x)) return x;
  }
}

/* random_loggam */
static double loggam(double x) {
  static const double a[10] = {8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
                               -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
                               6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
                               -1.39243221690590e+00};
  if (x == 1.0 || x == 2.0) return 0.0;
  int64_t n = x < 7.0 ? (int64_t)(7 - x) : 0;
  double x0 = x + (double)n, x2 = (1.0 / x0) * (1.0 / x0), lg2pi = 1.8378770664093453e+00, gl0 = a[9];
  for (int k = 8; k >= 0; k--) {
    gl0 *= x2;
    gl0 += a[k];
  }
  double gl = gl0 / x0 + 0.5 * lg2pi + (x0 - 0.5) * log(x0) - x0;
  if (x < 7.0)
    for (int64_t k = 1; k <= n; k++) {
      gl -= log(x0 - 1.0);
      x0 -= 1.0;
    }
  return gl;
}

/* random_poisson_mult, random_poisson_ptrs, random_poisson */
int64_t sr_np_poisson(SrNpBitgen *g, double lam) {
  if (lam == 0) return 0;
  if (lam < 10) {
    double enlam = exp(-lam), prod = 1.0;
    int64_t x = 0;
    for (;;) {
      prod *= sr_np_next_double(g);
      if (prod > enlam) x += 1;
      else return x;
    }
  }
  double slam = sqrt(lam), loglam = log(lam), b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    double u = sr_np_next_double(g) - 0.5, v = sr_np_next_double(g), us = 0.5 - fabs(u);
    int64_t k = (int64_t)floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + (double)k * loglam - loggam((double)k + 1)) return k;
  }
}

/* random_binomial_btpe (numpy's goto structure kept, its cache of the
   setup values dropped: they are recomputed the same) */
static int64_t binomial_btpe(SrNpBitgen *g, int64_t n, double p) {
  double r = p < 1.0 - p ? p : 1.0 - p, q = 1.0 - r, fm = (double)n * r + r;
  int64_t m = (int64_t)floor(fm);
  double p1 = floor(2.195 * sqrt((double)n * r * q) - 4.6 * q) + 0.5, xm = (double)m + 0.5;
  double xl = xm - p1, xr = xm + p1, c = 0.134 + 20.5 / (15.3 + (double)m);
  double a = (fm - xl) / (fm - xl * r), laml = a * (1.0 + a / 2.0);
  a = (xr - fm) / (xr * q);
  double lamr = a * (1.0 + a / 2.0), p2 = p1 * (1.0 + 2.0 * c), p3 = p2 + c / laml, p4 = p3 + c / lamr;
  double nrq, u, v, x, s, F, rho, t, A, x1, x2, f1, f2, z, z2, w, w2;
  int64_t y, k, i;
Step10:
  nrq = (double)n * r * q;
  u = sr_np_next_double(g) * p4;
  v = sr_np_next_double(g);
  if (u > p1) goto Step20;
  y = (int64_t)floor(xm - p1 * v + u);
  goto Step60;
Step20:
  if (u > p2) goto Step30;
  x = xl + (u - p1) / c;
  v = v * c + 1.0 - fabs((double)m - x + 0.5) / p1;
  if (v > 1.0) goto Step10;
  y = (int64_t)floor(x);
  goto Step50;
Step30:
  if (u > p3) goto Step40;
  y = (int64_t)floor(xl + log(v) / laml);
  if (y < 0 || v == 0.0) goto Step10;
  v = v * (u - p2) * laml;
  goto Step50;
Step40:
  y = (int64_t)floor(xr - log(v) / lamr);
  if (y > n || v == 0.0) goto Step10;
  v = v * (u - p3) * lamr;
Step50:
  k = llabs(y - m);
  if (k > 20 && (double)k < nrq / 2.0 - 1) goto Step52;
  s = r / q;
  a = s * (double)(n + 1);
  F = 1.0;
  if (m < y) {
    for (i = m + 1; i <= y; i++) F *= (a / (double)i - s);
  } else if (m > y) {
    for (i = y + 1; i <= m; i++) F /= (a / (double)i - s);
  }
  if (v > F) goto Step10;
  goto Step60;
Step52:
  rho = ((double)k / nrq) * (((double)k * ((double)k / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5);
  t = (double)(-k * k) / (2 * nrq);
  A = log(v);
  if (A < t - rho) goto Step60;
  if (A > t + rho) goto Step10;
  x1 = (double)(y + 1);
  f1 = (double)(m + 1);
  z = (double)(n + 1 - m);
  w = (double)(n - y + 1);
  x2 = x1 * x1;
  f2 = f1 * f1;
  z2 = z * z;
  w2 = w * w;
  if (A > (xm * log(f1 / x1) + ((double)(n - m) + 0.5) * log(z / w) + (double)(y - m) * log(w * r / (x1 * q)) +
           (13680. - (462. - (132. - (99. - 140. / f2) / f2) / f2) / f2) / f1 / 166320. +
           (13680. - (462. - (132. - (99. - 140. / z2) / z2) / z2) / z2) / z / 166320. +
           (13680. - (462. - (132. - (99. - 140. / x2) / x2) / x2) / x2) / x1 / 166320. +
           (13680. - (462. - (132. - (99. - 140. / w2) / w2) / w2) / w2) / w / 166320.))
    goto Step10;
Step60:
  if (p > 0.5) y = n - y;
  return y;
}

/* random_binomial_inversion */
static int64_t binomial_inversion(SrNpBitgen *g, int64_t n, double p) {
  double q = 1.0 - p, qn = exp((double)n * log(q)), np = (double)n * p;
  double lim = np + 10.0 * sqrt(np * q + 1);
  int64_t bound = (double)n < lim ? n : (int64_t)lim;
  int64_t x = 0;
  double px = qn, u = sr_np_next_double(g);
  while (u > px) {
    x++;
    if (x > bound) {
      x = 0;
      px = qn;
      u = sr_np_next_double(g);
    } else {
      u -= px;
      px = ((double)(n - x + 1) * p * px) / ((double)x * q);
    }
  }
  return x;
}

int64_t sr_np_binomial(SrNpBitgen *g, double p, int64_t n, int legacy) {
  if (!legacy && (n == 0 || p == 0.0)) return 0;
  if (p <= 0.5) return p * (double)n <= 30.0 ? binomial_inversion(g, n, p) : binomial_btpe(g, n, p);
  double q = 1.0 - p;
  return n - (q * (double)n <= 30.0 ? binomial_inversion(g, n, q) : binomial_btpe(g, n, q));
}

/* legacy_gauss (src/legacy/legacy-distributions.c) */
double sr_np_legacy_gauss(SrNpBitgen *g) {
  if (g->has_gauss) {
    double t = g->gauss;
    g->has_gauss = 0;
    g->gauss = 0.0;
    return t;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * sr_np_next_double(g) - 1.0;
    x2 = 2.0 * sr_np_next_double(g) - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  double f = sqrt(-2.0 * log(r2) / r2);
  g->gauss = f * x1;
  g->has_gauss = 1;
  return f * x2;
}

static uint64_t gen_mask(uint64_t max) {
  uint64_t m = max;
  m |= m >> 1;
  m |= m >> 2;
  m |= m >> 4;
  m |= m >> 8;
  m |= m >> 16;
  m |= m >> 32;
  return m;
}

/* buffered_bounded_lemire_uint32 (the buffer is unused for 32 bits) */
static uint32_t lemire32(SrNpBitgen *g, uint32_t rng) {
  const uint32_t excl = rng + 1;
  uint64_t m = (uint64_t)sr_np_next32(g) * excl;
  uint32_t left = (uint32_t)m;
  if (left < excl) {
    const uint32_t threshold = (UINT32_MAX - rng) % excl;
    while (left < threshold) {
      m = (uint64_t)sr_np_next32(g) * excl;
      left = (uint32_t)m;
    }
  }
  return (uint32_t)(m >> 32);
}

/* bounded_lemire_uint64 */
static uint64_t lemire64(SrNpBitgen *g, uint64_t rng) {
  const uint64_t excl = rng + 1;
  unsigned __int128 m = (unsigned __int128)sr_np_next64(g) * excl;
  uint64_t left = (uint64_t)m;
  if (left < excl) {
    const uint64_t threshold = (UINT64_MAX - rng) % excl;
    while (left < threshold) {
      m = (unsigned __int128)sr_np_next64(g) * excl;
      left = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

/* random_bounded_uint64_fill */
void sr_np_bounded_uint64_fill(SrNpBitgen *g, uint64_t off, uint64_t rng, size_t cnt, int use_masked,
                               uint64_t *out) {
  uint64_t mask = gen_mask(rng), v;
  for (size_t i = 0; i < cnt; i++) {
    if (rng == 0) {
      v = 0;
    } else if (rng == 0xffffffffULL) {
      v = sr_np_next32(g);
    } else if (rng < 0xffffffffULL) {
      if (use_masked) {
        while ((v = (sr_np_next32(g) & mask)) > rng) {
        }
      } else {
        v = lemire32(g, (uint32_t)rng);
      }
    } else if (rng == UINT64_MAX) {
      v = sr_np_next64(g);
    } else if (use_masked) {
      while ((v = (sr_np_next64(g) & mask)) > rng) {
      }
    } else {
      v = lemire64(g, rng);
    }
    out[i] = off + v;
  }
}

/* random_interval */
uint64_t sr_np_interval(SrNpBitgen *g, uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = gen_mask(max), v;
  if (max <= 0xffffffffULL) {
    while ((v = (sr_np_next32(g) & mask)) > max) {
    }
  } else {
    while ((v = (sr_np_next64(g) & mask)) > max) {
    }
  }
  return v;
}

/* _shuffle_raw (_generator.pyx and mtrand.pyx alike) */
void sr_np_shuffle(SrNpBitgen *g, void *data, size_t n, size_t size) {
  unsigned char *p = data, tmp[64];
  for (size_t i = n; i-- > 1;) {
    size_t j = (size_t)sr_np_interval(g, i);
    if (i == j) continue;
    for (size_t o = 0; o < size; o += sizeof tmp) {
      size_t k = size - o < sizeof tmp ? size - o : sizeof tmp;
      memcpy(tmp, p + j * size + o, k);
      memcpy(p + j * size + o, p + i * size + o, k);
      memcpy(p + i * size + o, tmp, k);
    }
  }
}

/* random_standard_gamma / legacy_standard_gamma */
double sr_np_standard_gamma(SrNpBitgen *g, double shape, int legacy) {
  if (shape == 1.0) return legacy ? -log(1.0 - sr_np_next_double(g)) : sr_np_standard_exponential(g);
  if (shape == 0.0) return 0.0;
  if (shape < 1.0) {
    for (;;) {
      double u = sr_np_next_double(g);
      double v = legacy ? -log(1.0 - sr_np_next_double(g)) : sr_np_standard_exponential(g);
      if (u <= 1.0 - shape) {
        double x = pow(u, 1. / shape);
        if (x <= v) return x;
      } else {
        double y = -log((1 - u) / shape), x = pow(1.0 - shape + shape * y, 1. / shape);
        if (x <= v + y) return x;
      }
    }
  }
  double b = shape - 1. / 3., c = 1. / sqrt(9 * b);
  for (;;) {
    double x, v;
    do {
      x = legacy ? sr_np_legacy_gauss(g) : sr_np_standard_normal(g);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = sr_np_next_double(g);
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return b * v;
    if (log(u) < 0.5 * x * x + b * (1. - v + log(v))) return b * v;
  }
}

double sr_np_beta(SrNpBitgen *g, double a, double b, int legacy) {
  if (a <= 1.0 && b <= 1.0) {
    for (;;) {
      double u = sr_np_next_double(g), v = sr_np_next_double(g);
      double x = pow(u, 1.0 / a), y = pow(v, 1.0 / b), xpy = x + y;
      /* Generator's also rejects x + y == 0 (both draws 0.0) */
      if (xpy <= 1.0 && (legacy || xpy > 0.0)) {
        if (x + y > 0) return x / xpy;
        double lx = log(u) / a, ly = log(v) / b, lm = lx > ly ? lx : ly;
        lx -= lm;
        ly -= lm;
        return exp(lx - log(exp(lx) + exp(ly)));
      }
    }
  }
  double ga = sr_np_standard_gamma(g, a, legacy), gb = sr_np_standard_gamma(g, b, legacy);
  return ga / (ga + gb);
}
