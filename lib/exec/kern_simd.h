/* kern_simd.h: the vectorized kernels (kern_simd.c).
 *
 * SR_KERN_VEC marks a loop kernel for gcc's vectorizer and builds it for
 * AVX-512, AVX2 and the baseline x86-64 (SSE2), one picked at load time
 * by the CPU (function multiversioning, target_clones).  Floating-point
 * contraction stays off, so every form computes each element with the
 * same IEEE operations and the same bits as the scalar loop: only
 * elementwise work is vectorized, never a sum's order.  Elsewhere (other
 * compilers, other CPUs) it is nothing, and the loops are plain C. */
#ifndef SR_EXEC_KERN_SIMD_H
#define SR_EXEC_KERN_SIMD_H

#include <stddef.h>
#include <stdint.h>

#include "exec/comm.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define SR_KERN_VEC                                                                            \
  __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic", "fp-contract=off"),    \
                 target_clones("avx512f", "avx2", "default")))
/* The same for a kernel of fused multiply-adds: forms with FMA
   instructions (x86-64-v4: AVX-512; v3: AVX2 and FMA), and the baseline,
   whose fma() is libm's, the same bits. */
#define SR_KERN_VEC_FMA                                                                        \
  __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic"),                        \
                 target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SR_KERN_VEC
#define SR_KERN_VEC_FMA
/* dst[i * ds + j] = src[j * ss + i] for i < a, j < b: the a x b transpose
   of a b x a matrix, 8 x 8 blocks (4 x 4 of 8-byte elements) at a time
   in 128 x 128 tiles.  Returns -1 for an element size other than 4 or 8. */
int sr_kern_transpose_2d(size_t es, int64_t a, int64_t b, const void *src, int64_t ss, void *dst, int64_t ds);

/* The forms of a fused multiply-add, each rounded once: a*b + c, c - a*b
   and a*b - c (fma(-a, b, c), fma(a, b, -c)). */
typedef enum { SR_FMA_ADD, SR_FMA_RSUB, SR_FMA_SUB } SrFmaForm;
/* out[i] = the form of a[i], b[i], c[i] for i < n, float32 or float64
   (-1 otherwise); an operand flagged in scalar (bit 0 a, 1 b, 2 c) is
   read at 0.  out may be any operand that is not a scalar. */
int sr_kern_fma(SrDtype dt, SrFmaForm form, size_t n, const void *a, const void *b, const void *c, int scalar,
                void *out);

#endif

/* acc = xs[0] op xs[1] op ... op xs[nx - 1], element by element, in that
   order (so the same bits as folding them one at a time with
   sr_comm_fold), a cache-sized block at a time: each input is read once
   and acc written once.  acc may be xs[0] itself but must not overlap
   the others.  Returns -1 for a dtype sr_comm_fold has no step for. */
int sr_kern_fold_many(SrRedOp op, SrDtype dt, size_t n, void *acc, const void *const *xs, int nx);

/* dst[i * ds + j] = src[j * ss + i] for i < a, j < b: the a x b transpose
   of a b x a matrix, 8 x 8 blocks (4 x 4 of 8-byte elements) at a time
   in 128 x 128 tiles.  Returns -1 for an element size other than 4 or 8. */
int sr_kern_transpose_2d(size_t es, int64_t a, int64_t b, const void *src, int64_t ss, void *dst, int64_t ds);

/* The forms of a fused multiply-add, each rounded once: a*b + c, c - a*b
   and a*b - c (fma(-a, b, c), fma(a, b, -c)). */
typedef enum { SR_FMA_ADD, SR_FMA_RSUB, SR_FMA_SUB } SrFmaForm;
/* out[i] = the form of a[i], b[i], c[i] for i < n, float32 or float64
   (-1 otherwise); an operand flagged in scalar (bit 0 a, 1 b, 2 c) is
   read at 0.  out may be any operand that is not a scalar. */
int sr_kern_fma(SrDtype dt, SrFmaForm form, size_t n, const void *a, const void *b, const void *c, int scalar,
                void *out);

#endif
