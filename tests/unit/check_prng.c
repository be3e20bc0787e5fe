/* check_prng.c: unit tests of lib/exec/prng.
 *
 * Every expected value below was printed by real JAX; each group names its
 * source.  "Exact" means the printed text pins the float bit for bit (a
 * float32 repr, a float64 repr, or an array print whose 8 decimals leave one
 * float32 within reach, i.e. |x| >= 0.125); "to N decimals" means only that.
 *
 * Verified, partitionable mode (JAX's default since 0.5):
 *   - threefry2x32: Random123 known answers (JAX tests/random_test.py
 *     testThreefry2x32, tests/random_impl_test.py).
 *   - keys: tests/random_test.py test_prng_seeds_and_keys, x32 and x64.
 *   - split/fold_in: fold_in(key(0), 4) (random_test.py testPRNGValues),
 *     fold_in == split symmetry (test_threefry_split_fold_in_symmetry),
 *     split(key(0), 3) (a third-party C port's table, consistent with the
 *     known answer for counter (0, 0)).
 *   - uniform float32, exact: jax/random.py doctest (key(0) scalar 0.947667,
 *     its split subkey 0.00729382), docs/jep/9263-typed-keys.md ((3,)), and
 *     a (3, 3) print in mfem's tests; with minval/maxval, to 2 decimals:
 *     doctests of jnp.trunc, floor, ceil, fix (updated in JAX commit
 *     a60ead6 "enable partitionable threefry by default").
 *   - uniform float64 (x64): 0.41845711171638644 (EnsKit's tests, captured
 *     under JAX 0.10.2 with x64).
 *   - normal float32, exact: key(0) elements 0..23 (lalamo's tests, and
 *     normal(key(0), (2, 3)) printed as float64 in EnsKit's tests), key(1)
 *     elements 0..15 (lalamo's tests), key(42) scalar -0.028304616 (JAX's
 *     "Pseudorandom numbers" page).  These include both log1p branches and
 *     pin the fused multiply-adds: without FMA, key(1) element 4 would be
 *     1.2666672 instead of 1.2666674.  To 2 decimals: jnp.cov of
 *     normal(key(0), (3, 100)) (lax_numpy.py doctest).
 *   - normal float64 (x64), exact: normal(key(0), (2, 3)) (pyEKI's tests,
 *     JAX 0.10.2) and normal(split(key(0))[i], (2, 2)) (EnsKit's tests).
 * Verified, original mode (jax_threefry_partitionable=False):
 *   - split(key(0), 4) and split(key(0)) (testPRNGValues; a 2024 notebook),
 *     bits of width 8/16/32/64 (testRngRandomBits, testRandomDistribution
 *     Values), uniform and normal to 6 decimals (testRandomDistribution
 *     Values), uniform exact (jax.nn.initializers.uniform docstring) and to
 *     float32 precision through -(sin(mat) @ vec) (jax/experimental/sparse
 *     /transform.py's docstring), normal
 *     exact (-0.20584226 and two subkey draws from a 2024 notebook; a (3, 2)
 *     print in stamox's docs), and the pre-0.5 doctests of trunc/floor/ceil/
 *     fix to 2 decimals.
 * Not confirmed by any printed JAX value (implemented from the sources):
 *   - float16 and bfloat16 uniform and normal;
 *   - which log XLA:CPU uses inside float32 log1p: prng.c follows XLA's
 *     Cephes logf; glibc's logf would change about 0.45% of normal samples
 *     by one ulp, none of them among the printed values;
 *   - which product LLVM fuses in that logf's y * x3 + q1 * e (changes
 *     about 2 in 100000 normal samples);
 *   - float64 normal far in the tails (|x| > 3.3, w >= 6.25), where glibc's
 *     log stands in for whatever XLA calls.
 * The statistical tests at the end are a backstop for all of them.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/prng.h"

static const unsigned ORIG = SR_PRNG_ORIGINAL, X64 = SR_PRNG_X64;

static void key_of(int64_t seed, unsigned flags, uint32_t k[2]) {
  sr_prng_key_ex(seed, flags, k);
}

/* The first n float32 normals / uniforms of key(seed) as a flat array. */
static float *normals(int64_t seed, unsigned flags, int64_t n) {
  uint32_t k[2];
  key_of(seed, flags, k);
  float *o = malloc((size_t)n * sizeof *o);
  ck_assert_int_eq(sr_prng_normal_ex(k, SR_F32, 1, &n, flags, o), 0);
  return o;
}

static float *uniforms(int64_t seed, unsigned flags, int64_t n, double lo,
                       double hi) {
  uint32_t k[2];
  key_of(seed, flags, k);
  float *o = malloc((size_t)n * sizeof *o);
  ck_assert_int_eq(sr_prng_uniform_ex(k, SR_F32, 1, &n, lo, hi, flags, o), 0);
  return o;
}

/* A float32 as numpy prints it in an array (or a 0-d Array): the shortest
 * repr, cut to 8 decimals.  Equal as float32, or within the cut. */
static void check_printed(const float *got, const double *want, int n,
                          const char *what) {
  for (int i = 0; i < n; i++)
    ck_assert_msg((float)want[i] == got[i] ||
                      fabs((double)got[i] - want[i]) <= 5.0001e-9,
                  "%s[%d]: got %.9g, JAX printed %.9g", what, i, got[i], want[i]);
}

/* A value printed to `dec` decimals. */
static void check_decimals(const float *got, const double *want, int n,
                           int dec, const char *what) {
  double tol = 0.5 * pow(10, -dec) + 1e-7;
  for (int i = 0; i < n; i++)
    ck_assert_msg(fabs((double)got[i] - want[i]) <= tol,
                  "%s[%d]: got %.9g, JAX printed %.*f", what, i, got[i], dec,
                  want[i]);
}

/* ---- threefry2x32 ---- */

START_TEST(test_threefry_kat) {
  /* Random123 known answers, as in JAX's testThreefry2x32. */
  static const uint32_t kat[3][6] = {
      {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6b200159, 0x99ba4efe},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
      {0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3, 0xc4923a9c, 0x483df7a0},
  };
  for (int t = 0; t < 3; t++) {
    uint32_t y0, y1;
    sr_threefry2x32(kat[t], 1, &kat[t][2], &kat[t][3], &y0, &y1);
    ck_assert_uint_eq(y0, kat[t][4]);
    ck_assert_uint_eq(y1, kat[t][5]);
  }
  /* testThreefry2x32Large in miniature: elementwise over many counters,
   * outputs aliasing inputs. */
  enum { N = 1000 };
  static uint32_t a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = 0x243f6a88, b[i] = 0x85a308d3;
  sr_threefry2x32(kat[2], N, a, b, a, b);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += a[i] != 0xc4923a9c || b[i] != 0x483df7a0;
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* ---- keys, split, fold_in ---- */

START_TEST(test_keys) {
  /* test_prng_seeds_and_keys: seeds as Python ints (int64 under x64). */
  static const struct {
    int64_t seed;
    uint32_t x32[2], x64[2];
  } cases[] = {
      {0, {0, 0}, {0, 0}},
      {1, {0, 1}, {0, 1}},
      {3, {0, 3}, {0, 3}},
      {-1, {0, 4294967295u}, {4294967295u, 4294967295u}},
      {-3, {0, 4294967293u}, {4294967295u, 4294967293u}},
      {2147483647LL + 100, {0, 2147483747u}, {0, 2147483747u}},
      {-2147483648LL - 100, {0, 2147483548u}, {4294967295u, 2147483548u}},
      {-2147483648LL - 101, {0, 2147483547u}, {4294967295u, 2147483547u}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint32_t k[2];
    sr_prng_key(cases[i].seed, k);
    ck_assert_uint_eq(k[0], cases[i].x32[0]);
    ck_assert_uint_eq(k[1], cases[i].x32[1]);
    sr_prng_key_ex(cases[i].seed, X64, k);
    ck_assert_uint_eq(k[0], cases[i].x64[0]);
    ck_assert_uint_eq(k[1], cases[i].x64[1]);
  }
}
END_TEST

START_TEST(test_split_fold_in) {
  uint32_t k0[2], k[2], s[10];
  sr_prng_key(0, k0);

  /* testPRNGValues: fold_in(key(0), 4), the same in both modes. */
  sr_prng_fold_in(k0, 4, k);
  ck_assert_uint_eq(k[0], 2285895361u);
  ck_assert_uint_eq(k[1], 433833334u);

  /* Original mode: testPRNGValues' split(key(0), 4), and split(key(0))
   * printed in a 2024 notebook. */
  static const uint32_t orig4[8] = {2285895361u, 1501764800u, 1518642379u,
                                    4090693311u, 433833334u,  4221794875u,
                                    839183663u,  3740430601u};
  sr_prng_split_ex(k0, 4, ORIG, s);
  for (int i = 0; i < 8; i++) ck_assert_uint_eq(s[i], orig4[i]);
  static const uint32_t orig2[4] = {4146024105u, 967050713u, 2718843009u,
                                    1272950319u};
  sr_prng_split_ex(k0, 2, ORIG, s);
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(s[i], orig2[i]);

  /* Partitionable: split(key(0), 3); key i hashes the counter (0, i), so
   * key 0 is the first known answer. */
  static const uint32_t part3[6] = {1797259609u, 2579123966u, 928981903u,
                                    3453687069u, 4146024105u, 2718843009u};
  sr_prng_split(k0, 3, s);
  for (int i = 0; i < 6; i++) ck_assert_uint_eq(s[i], part3[i]);
  ck_assert_uint_eq(s[0], 0x6b200159);
  ck_assert_uint_eq(s[1], 0x99ba4efe);

  /* test_threefry_split_fold_in_symmetry: fold_in(key(72), i) equals
   * split(key(72), 3)[i]; and fold_in(key(0), 4) is split(key(0), 5)[4]. */
  uint32_t k72[2];
  sr_prng_key(72, k72);
  sr_prng_split(k72, 3, s);
  for (uint32_t i = 0; i < 3; i++) {
    sr_prng_fold_in(k72, i, k);
    ck_assert_uint_eq(k[0], s[2 * i]);
    ck_assert_uint_eq(k[1], s[2 * i + 1]);
  }
  sr_prng_split(k0, 5, s);
  ck_assert_uint_eq(s[8], 2285895361u);
  ck_assert_uint_eq(s[9], 433833334u);
}
END_TEST

/* ---- bits ---- */

START_TEST(test_bits_original) {
  uint32_t k[2];
  int64_t n3 = 3, n5 = 5;
  /* testRngRandomBits: key(1701), shape (3,). */
  key_of(1701, ORIG, k);
  uint8_t b8[5];
  uint16_t b16[5];
  uint32_t b32[5];
  uint64_t b64[5];
  sr_prng_bits_ex(k, 8, 1, &n3, ORIG, b8);
  sr_prng_bits_ex(k, 16, 1, &n3, ORIG, b16);
  sr_prng_bits_ex(k, 32, 1, &n3, ORIG, b32);
  sr_prng_bits_ex(k, 64, 1, &n3, ORIG | X64, b64);
  static const uint8_t e8[3] = {216, 115, 43};
  static const uint16_t e16[3] = {41682, 1300, 55017};
  static const uint32_t e32[3] = {56197195u, 4200222568u, 961309823u};
  static const uint64_t e64[3] = {3982329540505020460ull,
                                  16822122385914693683ull,
                                  7882654074788531506ull};
  for (int i = 0; i < 3; i++) {
    ck_assert_uint_eq(b8[i], e8[i]);
    ck_assert_uint_eq(b16[i], e16[i]);
    ck_assert_uint_eq(b32[i], e32[i]);
    ck_assert_uint_eq(b64[i], e64[i]);
  }
  /* testRandomDistributionValues "bits": key(adler32("bitsthreefry2x32")),
   * shape (5,). */
  key_of(942802475, ORIG, k);
  sr_prng_bits_ex(k, 8, 1, &n5, ORIG, b8);
  sr_prng_bits_ex(k, 16, 1, &n5, ORIG, b16);
  sr_prng_bits_ex(k, 32, 1, &n5, ORIG, b32);
  sr_prng_bits_ex(k, 64, 1, &n5, ORIG | X64, b64);
  static const uint8_t f8[5] = {10, 158, 82, 54, 158};
  static const uint16_t f16[5] = {6738, 38161, 50695, 57337, 61600};
  static const uint32_t f32[5] = {1978747883u, 4134381225u, 3628107870u,
                                  689687174u, 2788938207u};
  static const uint64_t f64[5] = {
      17649965731882839947ull, 1415307058040849897ull, 8282622628079774249ull,
      14024425113645909402ull, 2012979996110532418ull};
  for (int i = 0; i < 5; i++) {
    ck_assert_uint_eq(b8[i], f8[i]);
    ck_assert_uint_eq(b16[i], f16[i]);
    ck_assert_uint_eq(b32[i], f32[i]);
    ck_assert_uint_eq(b64[i], f64[i]);
  }
  /* The 8/16/32-bit streams are views of one another
   * (testRngRandomBitsViewProperty). */
  int64_t n80 = 80, n40 = 40, n20 = 20;
  uint8_t v8[80];
  uint16_t v16[40];
  uint32_t v32[20];
  key_of(1701, ORIG, k);
  sr_prng_bits_ex(k, 8, 1, &n80, ORIG, v8);
  sr_prng_bits_ex(k, 16, 1, &n40, ORIG, v16);
  sr_prng_bits_ex(k, 32, 1, &n20, ORIG, v32);
  for (int i = 0; i < 20; i++) {
    ck_assert_uint_eq(v32[i], (uint32_t)v16[2 * i] | (uint32_t)v16[2 * i + 1] << 16);
    ck_assert_uint_eq(v32[i], (uint32_t)v8[4 * i] | (uint32_t)v8[4 * i + 1] << 8 |
                                  (uint32_t)v8[4 * i + 2] << 16 |
                                  (uint32_t)v8[4 * i + 3] << 24);
  }
  ck_assert_int_eq(sr_prng_bits_ex(k, 24, 1, &n3, 0, b32), -1);
}
END_TEST

START_TEST(test_bits_partitionable) {
  /* Element i hashes the counter (i >> 32, i & 0xffffffff); 32-bit bits are
   * the xor of the two words, 64-bit ones their concatenation, narrower ones
   * the low bits of the xor. */
  uint32_t k[2] = {0x13198a2e, 0x03707344};
  int64_t shape[2] = {3, 4};
  uint32_t b32[12];
  uint64_t b64[12];
  uint16_t b16[12];
  uint8_t b8[12];
  sr_prng_bits32(k, 2, shape, b32);
  sr_prng_bits_ex(k, 64, 2, shape, 0, b64);
  sr_prng_bits_ex(k, 16, 2, shape, 0, b16);
  sr_prng_bits_ex(k, 8, 2, shape, 0, b8);
  for (uint32_t i = 0; i < 12; i++) {
    uint32_t x0 = 0, x1 = i, y0, y1;
    sr_threefry2x32(k, 1, &x0, &x1, &y0, &y1);
    ck_assert_uint_eq(b32[i], y0 ^ y1);
    ck_assert_uint_eq(b64[i], (uint64_t)y0 << 32 | y1);
    ck_assert_uint_eq(b16[i], (uint16_t)(y0 ^ y1));
    ck_assert_uint_eq(b8[i], (uint8_t)(y0 ^ y1));
  }
  /* A shard computed alone equals its slice of the whole array. */
  uint32_t part[5];
  sr_prng_bits32_range(k, 7, 5, part);
  ck_assert_int_eq(memcmp(part, b32 + 7, sizeof part), 0);
  /* The high counter word: element 2^32 + 5 hashes (1, 5). */
  uint32_t hi, x0 = 1, x1 = 5, y0, y1;
  sr_prng_bits32_range(k, (1ull << 32) + 5, 1, &hi);
  sr_threefry2x32(k, 1, &x0, &x1, &y0, &y1);
  ck_assert_uint_eq(hi, y0 ^ y1);
}
END_TEST

/* ---- uniform ---- */

START_TEST(test_uniform_partitionable) {
  /* jax/random.py and docs/jep/9263-typed-keys.md (float32 reprs), and a
   * (3, 3) array printed in mfem's tests. */
  float *u = uniforms(0, 0, 9, 0, 1);
  static const float e9[9] = {0.947667f,  0.9785799f,  0.33229148f,
                              0.46866846f, 0.5698887f, 0.16550303f,
                              0.3101946f, 0.68948054f, 0.74676657f};
  for (int i = 0; i < 9; i++) ck_assert_msg(u[i] == e9[i], "uniform[%d]", i);
  free(u);
  uint32_t k0[2], s[4];
  float v;
  int64_t n1 = 1;
  sr_prng_key(0, k0);
  sr_prng_split(k0, 2, s);
  sr_prng_uniform(s + 2, SR_F32, 0, &n1, 0, 1, &v);
  static const double sub[1] = {0.00729382};
  check_printed(&v, sub, 1, "subkey uniform");

  /* With minval/maxval (a fused multiply-add), to 2 decimals: the
   * doctests of jnp.trunc (key(42), -10..10), jnp.floor (key(42), -5..5),
   * jnp.ceil (key(1), -5..5) and jnp.fix (key(0), -5..5). */
  static const double trunc42[9] = {-0.23, 3.6, 2.33, 1.22, -0.99, 1.72, -8.5, 5.5, 3.98};
  static const double floor42[9] = {-0.11, 1.8, 1.16, 0.61, -0.49, 0.86, -4.25, 2.75, 1.99};
  static const double ceil1[9] = {-0.61, 0.34, -0.54, -0.62, 3.97, 0.59, 4.84, 3.42, -1.14};
  static const double fix0[9] = {4.48, 4.79, -1.68, -0.31, 0.7, -3.34, -1.9, 1.89, 2.47};
  u = uniforms(42, 0, 9, -10, 10);
  check_decimals(u, trunc42, 9, 2, "trunc doctest");
  free(u);
  u = uniforms(42, 0, 9, -5, 5);
  check_decimals(u, floor42, 9, 2, "floor doctest");
  free(u);
  u = uniforms(1, 0, 9, -5, 5);
  check_decimals(u, ceil1, 9, 2, "ceil doctest");
  free(u);
  u = uniforms(0, 0, 9, -5, 5);
  check_decimals(u, fix0, 9, 2, "fix doctest");
  free(u);

  /* float64 with x64 (EnsKit's tests, JAX 0.10.2): uniform(key(0), (),
   * float64) == 0.41845711171638644. */
  double d;
  sr_prng_uniform_ex(k0, SR_F64, 0, &n1, 0, 1, X64, &d);
  ck_assert(d == 0.41845711171638644);
}
END_TEST

START_TEST(test_uniform_original) {
  /* testRandomDistributionValues "uniform", key(adler32(...)) = 1338574713,
   * to 6 decimals. */
  static const double e[5] = {0.298671, 0.073213, 0.873356, 0.260549, 0.412797};
  float *u = uniforms(1338574713, ORIG, 5, 0, 1);
  check_decimals(u, e, 5, 6, "original uniform");
  free(u);
  /* jax.nn.initializers.uniform(10.0) docstring (pre-0.5, printed in
   * full): uniform(key(42), (2, 3)) * 10. */
  static const float e10[6] = {7.298188f,  8.691938f,  8.7230015f,
                               2.0818567f, 1.8662417f, 5.5022564f};
  u = uniforms(42, ORIG, 6, 0, 1);
  for (int i = 0; i < 6; i++) ck_assert(u[i] * 10.0f == e10[i]);
  free(u);
  /* jax/experimental/sparse/transform.py (2021, never updated, so in the
   * original mode): mat = uniform(key(1701), (5, 5)) with entries below 0.5
   * zeroed, vec = uniform(key(42), (5,)), -(sin(mat) @ vec) printed in
   * full.  Recomputed in double here, so it pins the uniforms to about
   * float32 precision. */
  float *mat = uniforms(1701, ORIG, 25, 0, 1), *vec = uniforms(42, ORIG, 5, 0, 1);
  static const double want[5] = {-1.2655463, -0.52060574, -0.14522289,
                                 -0.10817424, -0.15574613};
  for (int r = 0; r < 5; r++) {
    double acc = 0;
    for (int c = 0; c < 5; c++) {
      double m = mat[5 * r + c] < 0.5f ? 0.0 : mat[5 * r + c];
      acc += sin(m) * vec[c];
    }
    ck_assert_msg(fabs(-acc - want[r]) <= 4e-7 * fabs(want[r]) + 1e-8,
                  "sparse doctest row %d: %.9g vs %.9g", r, -acc, want[r]);
  }
  free(mat);
  free(vec);

  /* The doctests' values before the switch (JAX commit a60ead6). */
  static const double trunc42[9] = {2.88, -3.55, -6.13, 7.73, 4.49, -6.16, -3.1, -4.95, 2.64};
  static const double floor42[9] = {1.44, -1.77, -3.07, 3.86, 2.25, -3.08, -1.55, -2.48, 1.32};
  static const double ceil1[9] = {2.55, -1.87, -3.76, 0.48, 3.85, -1.94, 3.2, 4.56, -1.43};
  static const double fix0[9] = {-1.45, 1.04, -0.72, -2.69, 1.74, -0.6, -2.49, -2.23, 2.68};
  u = uniforms(42, ORIG, 9, -10, 10);
  check_decimals(u, trunc42, 9, 2, "old trunc doctest");
  free(u);
  u = uniforms(42, ORIG, 9, -5, 5);
  check_decimals(u, floor42, 9, 2, "old floor doctest");
  free(u);
  u = uniforms(1, ORIG, 9, -5, 5);
  check_decimals(u, ceil1, 9, 2, "old ceil doctest");
  free(u);
  u = uniforms(0, ORIG, 9, -5, 5);
  check_decimals(u, fix0, 9, 2, "old fix doctest");
  free(u);
}
END_TEST

/* ---- normal ---- */

START_TEST(test_normal_partitionable) {
  /* key(0): lalamo's tests print elements 0..23 (rows of 8); the first
   * three also appear in a JAX 0.11.1 tutorial. */
  static const double k0[24] = {
      1.6226422,  2.0252647,  -0.43359444, -0.07861735, 0.1760909,
      -0.97208923, -0.49529874, 0.4943786,  0.6643493,   -0.9501635,
      2.1795304,  -1.9551506, 0.35857072,  0.15779513,  1.2770847,
      1.5104648,  0.970656,   0.59960806,  0.0247007,   -1.9164772,
      -1.8593491, 1.728144,   0.04719035,  0.814128};
  float *n = normals(0, 0, 24);
  check_printed(n, k0, 24, "normal key(0)");
  /* EnsKit's tests: normal(key(0), (2, 3), float32) printed as float64. */
  static const double k0f64[6] = {1.622642159461975,    2.0252647399902344,
                                  -0.4335944354534149,  -0.07861734926700592,
                                  0.17609089612960815,  -0.9720892310142517};
  for (int i = 0; i < 6; i++) ck_assert((double)n[i] == k0f64[i]);
  free(n);

  /* key(1): lalamo's tests, elements 0..15. */
  static const double k1[16] = {
      -0.15443718, 0.08470728, -0.13598049, -0.15503626, 1.2666674,
      0.14829758,  2.1415603,  1.0026742,   -0.29033586, 0.3583448,
      -0.70792735, -0.24555527, 0.8855825,  0.7861191,   0.88892716,
      0.54932535};
  n = normals(1, 0, 16);
  check_printed(n, k1, 16, "normal key(1)");
  free(n);

  /* JAX's "Pseudorandom numbers" page: random.normal(key(42)). */
  n = normals(42, 0, 1);
  ck_assert(n[0] == -0.028304616f);
  free(n);

  /* lax_numpy.py doctest: jnp.cov(normal(key(0), (3, 100))) to 2
   * decimals (ddof 1). */
  n = normals(0, 0, 300);
  static const double cov[9] = {0.9, 0.03, 0.1, 0.03, 1., 0.01, 0.1, 0.01, 0.85};
  double mean[3] = {0, 0, 0};
  for (int r = 0; r < 3; r++) {
    for (int c = 0; c < 100; c++) mean[r] += n[100 * r + c];
    mean[r] /= 100;
  }
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      double acc = 0;
      for (int c = 0; c < 100; c++)
        acc += (n[100 * a + c] - mean[a]) * (n[100 * b + c] - mean[b]);
      acc /= 99;
      ck_assert_msg(fabs(acc - cov[3 * a + b]) <= 0.005 + 1e-6,
                    "cov doctest [%d,%d]: %.4f", a, b, acc);
    }
  free(n);
}
END_TEST

START_TEST(test_normal_f64) {
  /* pyEKI's tests (JAX 0.10.2, x64): normal(key(0), (2, 3)). */
  static const double e0[6] = {-0.2058421394796434, -0.7847657764467411,
                               1.8160866726679836,  0.1878440128937887,
                               0.08086788103743275, -0.3721107933346203};
  /* EnsKit's tests (JAX 0.10.2, x64): normal(split(key(0), 2)[i], (2, 2)). */
  static const double es[2][4] = {
      {1.8800298928929466, -0.4812149737008219, 0.4154572296392434,
       2.381840078208049},
      {-1.400884102827668, 1.4321449977776874, 0.6248106961344603,
       0.20048727190797802}};
  uint32_t k[2], s[4];
  int64_t shape[2] = {2, 3};
  double o[6];
  sr_prng_key_ex(0, X64, k);
  ck_assert_int_eq(sr_prng_normal_ex(k, SR_F64, 2, shape, X64, o), 0);
  for (int i = 0; i < 6; i++) ck_assert_msg(o[i] == e0[i], "f64 normal[%d]", i);
  sr_prng_split_ex(k, 2, X64, s);
  shape[1] = 2;
  for (int j = 0; j < 2; j++) {
    sr_prng_normal_ex(s + 2 * j, SR_F64, 2, shape, X64, o);
    for (int i = 0; i < 4; i++)
      ck_assert_msg(o[i] == es[j][i], "f64 normal key %d [%d]", j, i);
  }
}
END_TEST

START_TEST(test_normal_original) {
  /* testRandomDistributionValues "normal", to 6 decimals. */
  static const double e[5] = {-1.173234, -1.511662, 0.070593, -0.099764, 1.052845};
  float *n = normals(1193674498, ORIG, 5);
  check_decimals(n, e, 5, 6, "original normal");
  free(n);
  /* A 2024 notebook: normal(key(0), (1,)), then normal(subkey, (1,)) and
   * normal(key, (1,)) for key, subkey = split(key(0)). */
  n = normals(0, ORIG, 1);
  ck_assert(n[0] == -0.20584226f);
  free(n);
  uint32_t k0[2], s[4];
  int64_t n1 = 1;
  float v;
  sr_prng_key(0, k0);
  sr_prng_split_ex(k0, 2, ORIG, s);
  sr_prng_normal_ex(s + 2, SR_F32, 1, &n1, ORIG, &v);
  ck_assert(v == -1.2515389f);
  sr_prng_normal_ex(s, SR_F32, 1, &n1, ORIG, &v);
  ck_assert(v == 0.14389051f);
  /* stamox's docs: normal(PRNGKey(0), (3, 2)). */
  static const double st[6] = {0.18784384, -1.2833426, 0.6494181,
                               1.2490594,  0.24447003, -0.11744965};
  n = normals(0, ORIG, 6);
  check_printed(n, st, 6, "stamox");
  free(n);
}
END_TEST

/* ---- structure: shapes, shards, dtypes ---- */

START_TEST(test_partitionable_structure) {
  uint32_t k[2];
  sr_prng_key(7, k);
  /* Values depend only on the flat index, not on the shape... */
  int64_t s23[2] = {2, 3}, s6 = 6, s32[3] = {3, 2, 1};
  float a[6], b[6], c[6];
  sr_prng_normal(k, SR_F32, 2, s23, a);
  sr_prng_normal(k, SR_F32, 1, &s6, b);
  sr_prng_normal(k, SR_F32, 3, s32, c);
  ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
  ck_assert_int_eq(memcmp(a, c, sizeof a), 0);
  /* ...so a shard computed by itself equals its slice of the whole array,
   * for every dtype. */
  static const SrDtype dts[4] = {SR_F32, SR_F64, SR_F16, SR_BF16};
  for (int d = 0; d < 4; d++) {
    int64_t n = 64;
    size_t sz = dts[d] == SR_F64 ? 8 : dts[d] == SR_F32 ? 4 : 2;
    char whole[64 * 8], part[16 * 8];
    unsigned fl = dts[d] == SR_F64 ? X64 : 0;
    sr_prng_uniform_ex(k, dts[d], 1, &n, -2, 3, fl, whole);
    ck_assert_int_eq(sr_prng_uniform_range(k, dts[d], 40, 16, -2, 3, fl, part), 0);
    ck_assert_int_eq(memcmp(part, whole + 40 * sz, 16 * sz), 0);
    sr_prng_normal_ex(k, dts[d], 1, &n, fl, whole);
    ck_assert_int_eq(sr_prng_normal_range(k, dts[d], 40, 16, fl, part), 0);
    ck_assert_int_eq(memcmp(part, whole + 40 * sz, 16 * sz), 0);
  }
  /* A 2-D shard, as float32[8@X,4@Y] on a 2x2 mesh puts on device (1, 0):
   * rows 4..7, columns 0..1 of normal(key(0), (8, 4)).  Also in the
   * original mode, where the block is cut from the whole array. */
  uint32_t kz[2];
  sr_prng_key(0, kz);
  int64_t shp[2] = {8, 4}, st[2] = {4, 0}, cnt[2] = {4, 2};
  for (int m = 0; m < 2; m++) {
    unsigned fl = m ? ORIG : 0;
    float full[32], shard[8];
    uint32_t bfull[32], bshard[8];
    sr_prng_normal_ex(kz, SR_F32, 2, shp, fl, full);
    ck_assert_int_eq(sr_prng_normal_block(kz, SR_F32, 2, shp, st, cnt, fl, shard), 0);
    sr_prng_bits_ex(kz, 32, 2, shp, fl, bfull);
    ck_assert_int_eq(sr_prng_bits_block(kz, 32, 2, shp, st, cnt, fl, bshard), 0);
    for (int r = 0; r < 4; r++)
      for (int q = 0; q < 2; q++) {
        ck_assert(shard[2 * r + q] == full[4 * (4 + r) + q]);
        ck_assert_uint_eq(bshard[2 * r + q], bfull[4 * (4 + r) + q]);
      }
    float uf[32], us[8];
    sr_prng_uniform_ex(kz, SR_F32, 2, shp, -1, 2, fl, uf);
    sr_prng_uniform_block(kz, SR_F32, 2, shp, st, cnt, -1, 2, fl, us);
    for (int r = 0; r < 4; r++)
      for (int q = 0; q < 2; q++) ck_assert(us[2 * r + q] == uf[4 * (4 + r) + q]);
  }
  /* A scalar is a block of itself. */
  float sc, sb;
  sr_prng_normal(kz, SR_F32, 0, NULL, &sc);
  sr_prng_normal_block(kz, SR_F32, 0, NULL, NULL, NULL, 0, &sb);
  ck_assert(sc == sb);

  /* Unsupported dtypes. */
  int64_t n1 = 1;
  int32_t i32;
  ck_assert_int_eq(sr_prng_uniform(k, SR_I32, 1, &n1, 0, 1, &i32), -1);
  ck_assert_int_eq(sr_prng_normal(k, SR_C64, 1, &n1, &i32), -1);
}
END_TEST

START_TEST(test_half_formats) {
  ck_assert_uint_eq(sr_prng_f16_from_double(1.0), 0x3c00);
  ck_assert_uint_eq(sr_prng_f16_from_double(-2.0), 0xc000);
  ck_assert_uint_eq(sr_prng_f16_from_double(65504.0), 0x7bff);
  ck_assert_uint_eq(sr_prng_f16_from_double(65520.0), 0x7c00); /* rounds up */
  ck_assert_uint_eq(sr_prng_f16_from_double(0x1p-24), 0x0001);
  ck_assert_uint_eq(sr_prng_f16_from_double(0x1p-25), 0x0000); /* tie to even */
  ck_assert_uint_eq(sr_prng_f16_from_double(1.0 + 0x1p-11), 0x3c00); /* tie */
  ck_assert_uint_eq(sr_prng_f16_from_double(1.0 + 3 * 0x1p-11), 0x3c02);
  ck_assert_uint_eq(sr_prng_f16_from_double(1.4142135623730951), 0x3da8);
  ck_assert(sr_prng_f16_to_float(0x3da8) == 1.4140625f);
  ck_assert(sr_prng_f16_to_float(0x0001) == 0x1p-24f);
  ck_assert(isnan(sr_prng_f16_to_float(sr_prng_f16_from_double(NAN))));
  ck_assert_uint_eq(sr_prng_bf16_from_double(1.0), 0x3f80);
  ck_assert_uint_eq(sr_prng_bf16_from_double(1.0 + 0x1p-8), 0x3f80); /* tie */
  ck_assert_uint_eq(sr_prng_bf16_from_double(1.0 + 3 * 0x1p-8), 0x3f82);
  ck_assert_uint_eq(sr_prng_bf16_from_double(-1.4142135623730951), 0xbfb5);
  ck_assert(sr_prng_bf16_to_float(0x3fb5) == 1.4140625f);
  /* Every non-NaN float16 and bfloat16 round-trips.  (Loops count
   * failures and assert once: each Check assertion costs a system call.) */
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    if (!((h & 0x7c00) == 0x7c00 && (h & 0x3ff)))
      bad += sr_prng_f16_from_double(sr_prng_f16_to_float((uint16_t)h)) != h;
    if (!((h & 0x7f80) == 0x7f80 && (h & 0x7f)))
      bad += sr_prng_bf16_from_double(sr_prng_bf16_to_float((uint16_t)h)) != h;
  }
  ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(test_erfinv_kernels) {
  ck_assert(sr_prng_erfinv_f32(0.0f) == 0.0f);
  ck_assert(isinf(sr_prng_erfinv_f32(1.0f)) && sr_prng_erfinv_f32(1.0f) > 0);
  ck_assert(isinf(sr_prng_erfinv_f32(-1.0f)) && sr_prng_erfinv_f32(-1.0f) < 0);
  ck_assert(isinf(sr_prng_erfinv_f64(1.0)) && sr_prng_erfinv_f64(-1.0) < 0);
  int bad = 0;
  for (int i = 1; i < 1000; i++) {
    float x = (float)i / 1000.0f;
    bad += sr_prng_erfinv_f32(-x) != -sr_prng_erfinv_f32(x);
    /* erf(erfinv(x)) is x to within the approximation's error. */
    bad += !(fabs(erf((double)sr_prng_erfinv_f32(x)) - x) < 2e-6 * x + 1e-7);
    double xd = i / 1000.0;
    bad += !(fabs(erf(sr_prng_erfinv_f64(xd)) - xd) < 1e-14);
  }
  for (int i = -999; i < 10000; i++) {
    float x = (float)i / 1000.0f;
    bad += !(fabs(sr_prng_log1p_f32(x) - log1p((double)x)) <=
             2e-7 * fabs(log1p((double)x)) + 1e-12);
  }
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* ---- statistics: a backstop for every dtype ---- */

static void moments(const uint32_t k[2], SrDtype dt, int normal, int64_t n,
                    double *mean, double *var, double *lo, double *hi) {
  size_t sz = dt == SR_F64 ? 8 : dt == SR_F32 ? 4 : 2;
  void *buf = malloc((size_t)n * sz);
  unsigned fl = dt == SR_F64 ? X64 : 0;
  if (normal)
    ck_assert_int_eq(sr_prng_normal_ex(k, dt, 1, &n, fl, buf), 0);
  else
    ck_assert_int_eq(sr_prng_uniform_ex(k, dt, 1, &n, 0, 1, fl, buf), 0);
  double s = 0, s2 = 0;
  int64_t nonfinite = 0;
  *lo = INFINITY;
  *hi = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    double v = dt == SR_F64   ? ((double *)buf)[i]
               : dt == SR_F32 ? ((float *)buf)[i]
               : dt == SR_F16 ? sr_prng_f16_to_float(((uint16_t *)buf)[i])
                              : sr_prng_bf16_to_float(((uint16_t *)buf)[i]);
    nonfinite += !isfinite(v);
    s += v;
    s2 += v * v;
    if (v < *lo) *lo = v;
    if (v > *hi) *hi = v;
  }
  ck_assert_int_eq(nonfinite, 0);
  *mean = s / n;
  *var = s2 / n - *mean * *mean;
  free(buf);
}

START_TEST(test_statistics) {
  uint32_t k[2];
  sr_prng_key(2024, k);
  const int64_t n = 1000000;
  static const SrDtype dts[4] = {SR_F32, SR_F64, SR_F16, SR_BF16};
  for (int d = 0; d < 4; d++) {
    double mean, var, lo, hi;
    /* bfloat16's uniform has 7 random bits: its mean is 0.5 - 2^-8. */
    double umean = dts[d] == SR_BF16 ? 0.5 - 0x1p-8 : 0.5;
    moments(k, dts[d], 0, n, &mean, &var, &lo, &hi);
    ck_assert_msg(fabs(mean - umean) < 2e-3 && fabs(var - 1.0 / 12) < 2e-3,
                  "uniform dtype %d: mean %g var %g", dts[d], mean, var);
    ck_assert(lo >= 0 && hi < 1);
    moments(k, dts[d], 1, n, &mean, &var, &lo, &hi);
    /* 1e6 samples: the mean's standard error is 1e-3, the variance's 1.4e-3;
     * bfloat16's 256-level grid makes its variance a little larger. */
    double vtol = dts[d] == SR_BF16 ? 0.03 : 6e-3;
    /* bfloat16's u takes 128 values centred on -2^-8, not 0: JAX's
     * bfloat16 normals have mean -0.0125. */
    double nmean = dts[d] == SR_BF16 ? -0.0125 : 0.0;
    ck_assert_msg(fabs(mean - nmean) < 5e-3 && fabs(var - 1) < vtol,
                  "normal dtype %d: mean %g var %g", dts[d], mean, var);
    ck_assert(lo > -7 && hi < 7);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("prng");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_threefry_kat);
  tcase_add_test(tc, test_keys);
  tcase_add_test(tc, test_split_fold_in);
  tcase_add_test(tc, test_bits_original);
  tcase_add_test(tc, test_bits_partitionable);
  tcase_add_test(tc, test_uniform_partitionable);
  tcase_add_test(tc, test_uniform_original);
  tcase_add_test(tc, test_normal_partitionable);
  tcase_add_test(tc, test_normal_f64);
  tcase_add_test(tc, test_normal_original);
  tcase_add_test(tc, test_partitionable_structure);
  tcase_add_test(tc, test_half_formats);
  tcase_add_test(tc, test_erfinv_kernels);
  tcase_add_test(tc, test_statistics);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
