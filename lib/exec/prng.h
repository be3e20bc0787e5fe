/* prng.h: JAX's default PRNG (threefry2x32), bit for bit.
 *
 * A key<fry> is two uint32 words, as jax.random.key_data shows them.  The
 * functions below reproduce jax.random.key / PRNGKey, split, fold_in, bits,
 * uniform and normal of JAX 0.11 on CPU, with JAX's defaults:
 *
 *   jax_default_prng_impl = threefry2x32
 *   jax_threefry_partitionable = True  (since JAX 0.5): element i of an array
 *       is hashed from the counter (i >> 32, i & 0xffffffff) alone, so a
 *       value never depends on the array's sharding, and a shard can be
 *       filled by itself (the *_range and *_block functions).
 *   jax_enable_x64 = False: a seed keeps only its low 32 bits.
 *
 * SR_PRNG_ORIGINAL selects jax_threefry_partitionable=False (JAX < 0.5, and
 * every hard-coded value in JAX's random_test.py); SR_PRNG_X64 selects
 * jax_enable_x64=True for seeds and for the float inputs of uniform.
 *
 * How normal is computed (jax/_src/random/core.py, _normal_real): u =
 * uniform(key, shape, dtype, nextafter(-1, 0), 1), then sqrt(2) * erf_inv(u).
 * erf_inv lowers to chlo.erf_inv, which StableHLO expands into Giles'
 * polynomial (erfInv32 / erfInv64 in ChloLegalizeToStablehlo.cpp) on top of
 * log1p.  XLA:CPU emits log1p as Cephes' rational approximation for
 * |x| < sqrt(2) - 1 and log(1 + x) otherwise, with its own Cephes logf for
 * f32 (llvm_ir_runtime.cc, GenerateVF32Log).  XLA:CPU always lets LLVM fuse
 * a multiply into the add that consumes it (AllowFPOpFusion::Fast), so on
 * any machine with FMA (every x86-64 since Haswell, every arm64) those
 * multiply-adds round once; prng.c reproduces each of them with fmaf.
 *
 * What is verified and against what: see the comment at the top of
 * tests/unit/check_prng.c.  In short: threefry2x32, keys, split, fold_in,
 * bits, float32 uniform/normal and float64 (x64) uniform/normal match
 * every printed JAX value found, bit for bit where the print allows it;
 * float16 and bfloat16 are implemented from the JAX/StableHLO/XLA sources
 * and no printed JAX value confirms them.
 *
 * Arrays are row-major; outputs are caller-allocated.  float16 and bfloat16
 * elements are stored as their uint16 bit patterns.
 */
#ifndef SR_EXEC_PRNG_H
#define SR_EXEC_PRNG_H

#include <stddef.h>
#include <stdint.h>

#include "ir/dtype.h"

/* Flags for the *_ex functions; 0 is JAX's default configuration. */
enum {
  SR_PRNG_X64 = 1u << 0,      /* jax_enable_x64=True */
  SR_PRNG_ORIGINAL = 1u << 1, /* jax_threefry_partitionable=False */
};

/* The threefry2x32 hash (20 rounds), elementwise over n counter pairs:
 * (y0[i], y1[i]) = threefry2x32(key, (x0[i], x1[i])).  Outputs may alias
 * inputs. */
void sr_threefry2x32(const uint32_t key[2], size_t n, const uint32_t *x0,
                     const uint32_t *x1, uint32_t *y0, uint32_t *y1);

/* jax.random.key(seed) / PRNGKey(seed) with x64 off: (0, low 32 bits). */
void sr_prng_key(int64_t seed, uint32_t key[2]);
/* The same under flags: with SR_PRNG_X64, (high 32 bits, low 32 bits) of a
 * seed held as int64 (a Python int).  A seed typed int32 or uint32 keeps a
 * zero high word even under x64: pass it without SR_PRNG_X64. */
void sr_prng_key_ex(int64_t seed, unsigned flags, uint32_t key[2]);

/* jax.random.split(key, num): num keys, out[2*i], out[2*i+1] the i-th.  A
 * tuple num (split(key, (2, 3))) is the same as its product, row-major. */
void sr_prng_split(const uint32_t key[2], int64_t num, uint32_t *out);
void sr_prng_split_ex(const uint32_t key[2], int64_t num, unsigned flags,
                      uint32_t *out);

/* jax.random.fold_in(key, data).  The same in both modes: with the
 * partitionable default, fold_in(key, i) == split(key, n)[i]. */
void sr_prng_fold_in(const uint32_t key[2], uint32_t data, uint32_t out[2]);

/* Number of elements of a shape (1 for a scalar). */
int64_t sr_prng_numel(int ndim, const int64_t *shape);

/* jax.random.bits(key, shape, uint32) / the random_bits primitive. */
void sr_prng_bits32(const uint32_t key[2], int ndim, const int64_t *shape,
                    uint32_t *out);
/* jax.random.bits for bit_width 8, 16, 32 or 64: out holds numel elements
 * of uint8_t, uint16_t, uint32_t or uint64_t.  Returns 0, or -1 for another
 * width.  (Without x64, JAX turns a uint64 request into uint32 bits; that
 * choice is the caller's.)  In the original mode arrays are limited to
 * 2^32 - 2 words of bits, where JAX would switch to per-block subkeys. */
int sr_prng_bits_ex(const uint32_t key[2], int bit_width, int ndim,
                    const int64_t *shape, unsigned flags, void *out);

/* jax.random.uniform(key, shape, dtype, minval, maxval) for dtype float32,
 * float64 (from 64-bit bits, as JAX does with x64 on), float16 and bfloat16.
 * Returns 0, or -1 for another dtype. */
int sr_prng_uniform(const uint32_t key[2], SrDtype dt, int ndim,
                    const int64_t *shape, double minval, double maxval,
                    void *out);
int sr_prng_uniform_ex(const uint32_t key[2], SrDtype dt, int ndim,
                       const int64_t *shape, double minval, double maxval,
                       unsigned flags, void *out);

/* jax.random.normal(key, shape, dtype) for the same dtypes. */
int sr_prng_normal(const uint32_t key[2], SrDtype dt, int ndim,
                   const int64_t *shape, void *out);
int sr_prng_normal_ex(const uint32_t key[2], SrDtype dt, int ndim,
                      const int64_t *shape, unsigned flags, void *out);

/* Elements [start, start + count) of the row-major flattening of the
 * arrays above, in the partitionable mode (flags other than SR_PRNG_X64
 * are ignored): what one device computes for its shard, without the rest.
 * They equal the corresponding elements of the whole-array functions. */
void sr_prng_bits32_range(const uint32_t key[2], uint64_t start, size_t count,
                          uint32_t *out);
int sr_prng_uniform_range(const uint32_t key[2], SrDtype dt, uint64_t start,
                          size_t count, double minval, double maxval,
                          unsigned flags, void *out);
int sr_prng_normal_range(const uint32_t key[2], SrDtype dt, uint64_t start,
                         size_t count, unsigned flags, void *out);

/* A device's shard: the block start[d] <= i[d] < start[d] + count[d] of
 * the array of `shape`, written row-major into out (prod(count) elements).
 * In the partitionable mode only the block is computed; with
 * SR_PRNG_ORIGINAL the whole array is computed and the block copied out.
 * bits: returns -1 for a bad width; uniform, normal: for a bad dtype. */
int sr_prng_bits_block(const uint32_t key[2], int bit_width, int ndim,
                       const int64_t *shape, const int64_t *start,
                       const int64_t *count, unsigned flags, void *out);
int sr_prng_uniform_block(const uint32_t key[2], SrDtype dt, int ndim,
                          const int64_t *shape, const int64_t *start,
                          const int64_t *count, double minval, double maxval,
                          unsigned flags, void *out);
int sr_prng_normal_block(const uint32_t key[2], SrDtype dt, int ndim,
                         const int64_t *shape, const int64_t *start,
                         const int64_t *count, unsigned flags, void *out);

/* uniform and normal from count given random words of
 * sr_prng_rng_width(dt) bits (uint8..uint64 as the width says): the float
 * ops of _uniform and _normal_real on the bits of any implementation
 * (rbg's come from RngBitGenerator).  -1 for a bad dtype. */
int sr_prng_rng_width(SrDtype dt);
int sr_prng_uniform_of_bits(SrDtype dt, const void *bits, uint64_t count, double minval, double maxval,
                            unsigned flags, void *out);
int sr_prng_normal_of_bits(SrDtype dt, const void *bits, uint64_t count, unsigned flags, void *out);

/* The scalar kernels, exposed for tests and for the erf_inv primitive:
 * XLA:CPU's float32 erf_inv, float64 erf_inv and float32 log1p. */
float sr_prng_erfinv_f32(float x);
double sr_prng_erfinv_f64(double x);
float sr_prng_log1p_f32(float x);

/* IEEE half and bfloat16 conversions, rounding to nearest even. */
uint16_t sr_prng_f16_from_double(double x);
uint16_t sr_prng_bf16_from_double(double x);
float sr_prng_f16_to_float(uint16_t h);
float sr_prng_bf16_to_float(uint16_t h);

/* The PRNG implementations, as jax.random.key(seed, impl=...) names them:
 * threefry2x32 (key<fry>, the default, two uint32 words a key), rbg
 * (key<rbg>) and unsafe_rbg (key<urbg>), four words a key, whose bits are
 * XLA's RngBitGenerator (jax/_src/random/rbg.py). */
enum { SR_PRNG_FRY, SR_PRNG_RBG, SR_PRNG_URBG, SR_PRNG_NIMPLS };
/* The implementation of a key dtype; -1 if d is not one. */
int sr_prng_impl_of(SrDtype d);
SrDtype sr_prng_key_dtype(int impl);
int sr_prng_key_words(int impl);         /* 2, 4, 4 */
const char *sr_prng_impl_tag(int impl);  /* "fry", "rbg", "urbg" */
const char *sr_prng_impl_name(int impl); /* "threefry2x32", "rbg", "unsafe_rbg" */
/* The implementation a tag or a name names; -1 for neither. */
int sr_prng_impl_lookup(const char *s);

/* rbg.py's keys on their four words (w0, w1, w2, w3):
 *   seed     the threefry key of the seed, twice;
 *   split    rbg: each half (w0, w1), (w2, w3) split by threefry, the i-th
 *            new key the pair of the halves' i-th keys; unsafe_rbg: every
 *            tenth row of RngBitGenerator(key, (10 * num, 4));
 *   fold_in  rbg: each half folded by threefry; unsafe_rbg: the key xor
 *            the last row of RngBitGenerator(seed(data), (10, 4)).
 * The unsafe_rbg functions take the RngBitGenerator state key0 and a row
 * offset: under vmap XLA's RngBitGenerator batches by drawing a bigger
 * shape from the batch's first key (loops.py,
 * _rng_bit_generator_batching_rule), so the b-th of a batch of keys draws
 * from the first key's rows after b * 10 * num.  split returns -1 when it
 * cannot allocate. */
void sr_prng_rbg_seed(int64_t seed, unsigned flags, uint32_t key[4]);
int sr_prng_rbg_split(const uint32_t key[4], int64_t num, unsigned flags, uint32_t *out);
void sr_prng_rbg_fold_in(const uint32_t key[4], uint32_t data, uint32_t out[4]);
void sr_prng_urbg_split(const uint32_t key0[4], int64_t b, int64_t num, uint32_t *out);
void sr_prng_urbg_fold_in(const uint32_t key[4], uint32_t data0, int64_t b, uint32_t out[4]);
/* XLA's u64[2] RngBitGenerator state of a uint32[4] key (the bitcast). */
void sr_rbg_state_of_words(const uint32_t w[4], uint64_t s[2]);

/* XLA's RngBitGenerator (lax.rng_bit_generator), as XLA expands it
 * (rng_bit_generator_expander.cc, hlo/builder/lib/prng.cc) on its u64[2]
 * state s = (key, counter): algorithm SR_RBG_THREE_FRY or SR_RBG_PHILOX
 * (RNG_DEFAULT is Philox on XLA's CPU and GPU).  Writes the block
 * start[d] <= i[d] < start[d] + count[d] of the bit_width (8, 16, 32, 64)
 * unsigned result of `shape`, row-major, into out; -1 for a bad width.
 * sr_rbg_state gives the state it returns. */
enum { SR_RBG_DEFAULT = 0, SR_RBG_THREE_FRY = 1, SR_RBG_PHILOX = 2 };
int sr_rbg_bits_block(const uint64_t s[2], int algorithm, int bit_width, int ndim, const int64_t *shape,
                      const int64_t *start, const int64_t *count, void *out);
void sr_rbg_state(const uint64_t s[2], int algorithm, int bit_width, int ndim, const int64_t *shape,
                  uint64_t out[2]);

#endif
