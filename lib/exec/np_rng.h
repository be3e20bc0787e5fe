/* np_rng.h: numpy's random streams, bit for bit (numpy 1.24, Debian's).
 *
 * Two bit generators, as numpy has them:
 *   PCG64, seeded through SeedSequence (np.random.default_rng(seed)):
 *       a 128-bit LCG with the XSL-RR output; next32 hands out the low half
 *       of a 64-bit draw and keeps the high half for the next next32 call
 *       (numpy's has_uint32 buffer), next64 ignores that buffer.
 *   MT19937, seeded as RandomState.seed(int) seeds it (mt19937_seed, Knuth's
 *       initialisation) or, for a list of words, init_by_array; next64 is
 *       two 32-bit draws, high word first, and next_double numpy's 53 bits
 *       from two draws (a >> 5, b >> 6).
 * On top of them the distributions of numpy/random/src/distributions and
 * src/legacy: the 53-bit uniform double, the standard normal by numpy's
 * ziggurat (Generator; the exponential's too), the polar Box-Muller with its cached second value
 * (RandomState), bounded integers by Lemire's method (Generator.integers)
 * or masked rejection (RandomState.randint), and random_interval, which
 * shuffle and permutation draw from.  Pure C, no numpy; checked against
 * numbers numpy printed in tests/unit/check_np_rng.c. */
#ifndef SR_NP_RNG_H
#define SR_NP_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef enum { SR_NP_PCG64, SR_NP_MT19937 } SrNpBitgenKind;

typedef struct SrNpBitgen {
  SrNpBitgenKind kind;
  /* PCG64 */
  unsigned __int128 state, inc;
  int has_uint32;
  uint32_t uinteger;
  /* MT19937 */
  uint32_t key[624];
  int pos;
  /* RandomState's cached gauss (legacy_gauss) */
  int has_gauss;
  double gauss;
} SrNpBitgen;

/* SeedSequence(entropy).generate_state(n_words, uint32): entropy is the
   seed's 32-bit words, lowest first (_coerce_to_uint32_array); pool size 4. */
void sr_np_seedseq_state(const uint32_t *entropy, size_t nentropy, uint32_t *out, size_t n_words);
/* An int seed's words, lowest first, as _int_to_uint32_array makes them
   (0 is one word); returns how many (at most 4, for a seed < 2**128). */
size_t sr_np_int_words(unsigned __int128 seed, uint32_t *words);

/* PCG64(SeedSequence(entropy)) */
void sr_np_pcg64_seed(SrNpBitgen *g, const uint32_t *entropy, size_t nentropy);
/* MT19937 as RandomState.seed(seed) leaves it (gauss cache cleared) */
void sr_np_mt_seed(SrNpBitgen *g, uint32_t seed);
void sr_np_mt_seed_array(SrNpBitgen *g, const uint32_t *key, int n);
/* MT19937(SeedSequence(entropy)), as np.random.MT19937(seed) seeds it */
void sr_np_mt_seed_seq(SrNpBitgen *g, const uint32_t *entropy, size_t nentropy);

uint64_t sr_np_next64(SrNpBitgen *g);
uint32_t sr_np_next32(SrNpBitgen *g);
double sr_np_next_double(SrNpBitgen *g);

/* Generator.standard_normal: numpy's ziggurat */
double sr_np_standard_normal(SrNpBitgen *g);
/* Generator.standard_normal(dtype=float32): the float ziggurat, on 32-bit
   draws; and Generator.random(dtype=float32) */
float sr_np_standard_normal_f(SrNpBitgen *g);
float sr_np_next_float(SrNpBitgen *g);
/* Generator.standard_exponential: numpy's ziggurat */
double sr_np_standard_exponential(SrNpBitgen *g);
/* random_poisson (Generator's and RandomState's alike): multiplication of
   uniforms below lam = 10, Hoermann's PTRS from it on */
int64_t sr_np_poisson(SrNpBitgen *g, double lam);
/* random_binomial (inversion for n * min(p, 1 - p) <= 30, else BTPE);
   legacy: RandomState's, which draws for n == 0 and p == 0 too */
int64_t sr_np_binomial(SrNpBitgen *g, double p, int64_t n, int legacy);
/* random_standard_gamma (Marsaglia and Tsang above shape 1) and
   random_beta (Johnk's below 1 and 1); legacy: legacy_standard_gamma and
   legacy_beta, on legacy_gauss and -log(1 - U) */
double sr_np_standard_gamma(SrNpBitgen *g, double shape, int legacy);
double sr_np_beta(SrNpBitgen *g, double a, double b, int legacy);
/* RandomState.standard_normal: legacy_gauss */
double sr_np_legacy_gauss(SrNpBitgen *g);
/* random_bounded_uint64_fill: off + [0, rng] cnt times, by masked
   rejection (RandomState) or Lemire's method (Generator) */
void sr_np_bounded_uint64_fill(SrNpBitgen *g, uint64_t off, uint64_t rng, size_t cnt, int use_masked,
                               uint64_t *out);
/* random_interval: a value in [0, max] by masked rejection */
uint64_t sr_np_interval(SrNpBitgen *g, uint64_t max);
/* _shuffle_raw: Fisher-Yates over n items of size bytes, from the last */
void sr_np_shuffle(SrNpBitgen *g, void *data, size_t n, size_t size);

#endif
