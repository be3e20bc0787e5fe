/* kern.h: kernels on one shard (row-major, contiguous buffers).
 *
 * They know nothing of meshes: the eval rules and redistribute.c call
 * them on each device's buffers.  Inner loops are specialised per element
 * size or dtype; no function pointer is called per element.
 */
#ifndef SR_EXEC_KERN_H
#define SR_EXEC_KERN_H

#include <stddef.h>
#include <stdint.h>

#include "ir/dtype.h"

/* ---- moving elements (kern_copy.c) ---- */

/* out = in transposed: out dim k is in dim perm[k]. */
void sr_kern_transpose(size_t es, int ndim, const int64_t *in_shape, const int *perm, const void *in,
                       void *out);
/* How many transposes (of at least one element) sr_kern_transpose has
   made in this process: the evaluator's, and the dot kernel's copies of
   operands BLAS cannot read with a transpose flag. */
long sr_kern_transposes(void);
/* out (count-shaped) = the box of in that starts at start. */
void sr_kern_copy_box(size_t es, int ndim, const int64_t *in_shape, const int64_t *start,
                      const int64_t *count, const void *in, void *out);
/* The box of out that starts at start = in (count-shaped); the rest of out
   is left as it is. */
void sr_kern_paste_box(size_t es, int ndim, const int64_t *out_shape, const int64_t *start,
                       const int64_t *count, const void *in, void *out);
/* General strided gather: out[i] = in[sum_k (start[k] + i_k * step[k]) *
   stride_k] over out's shape (steps may be negative: rev). */
void sr_kern_strided(size_t es, int ndim, const int64_t *in_shape, const int64_t *start,
                     const int64_t *step, const int64_t *out_shape, const void *in, void *out);
/* The general walk: count-shaped box, element offsets and strides on
   each side (strides may be 0 or negative). */
void sr_kern_copy_general(size_t es, int ndim, const int64_t *count, const void *src, int64_t src_off,
                          const int64_t *src_stride, void *dst, int64_t dst_off, const int64_t *dst_stride);
/* Row-major strides (elements) of a shape. */
void sr_kern_row_strides(int ndim, const int64_t *shape, int64_t *strides);
/* n copies of one element. */
void sr_kern_fill(size_t es, size_t n, const void *elem, void *out);
/* Moves axis `from` of a shape to position `to` (the others keep their
   order): the copy a gather or an all-to-all needs. */
void sr_kern_move_axis(size_t es, int ndim, const int64_t *shape, int from, int to, const void *in,
                       void *out);

/* ---- elementwise (kern_ew.c) ---- */

/* An elementwise row's kernels (its SrPrim's kern slot, prims/prim.h),
   one per dtype, NULL for a dtype the operation does not support: n
   elements of a (and b, a scalar operand -- sa or sb set -- being one
   element broadcast) into out, which may be an operand's buffer; ip are
   the equation's integer params (integer_pow's y, round's method), or
   NULL.  The family file defines them with kern_ew.h's loops; float16 and
   bfloat16 run the float32 kernel a chunk at a time, rounding to nearest
   even, as XLA:CPU does. */
typedef int (*SrKernUnary)(size_t n, const void *a, void *out, const int64_t *ip);
typedef int (*SrKernBinary)(size_t n, const void *a, int sa, const void *b, int sb, void *out);
enum { SR_KERN_NDTYPES = SR_C128 + 1 };
typedef struct SrKernEw {
  SrKernUnary un[SR_KERN_NDTYPES];
  SrKernBinary bin[SR_KERN_NDTYPES];
  int bool_out;  /* results are bool whatever the operands (comparisons,
                    is_finite) */
} SrKernEw;

/* Runs k's kernel for dt (the float32 one for float16 and bfloat16 when a
   binary row has none of their own).
   Returns -1 for a dtype k has no kernel for (or k NULL). */
int sr_kern_unary(const SrKernEw *k, SrDtype dt, size_t n, const void *a, void *out, const int64_t *iparams);
int sr_kern_binary(const SrKernEw *k, SrDtype dt, size_t n, const void *a, int sa, const void *b, int sb,
                   void *out);
/* select_n: out[i] = cases[which[i]][i]; which is bool or int32. */
int sr_kern_select(SrDtype wdt, SrDtype dt, size_t n, const void *which, int sw, int ncases,
                   const void *const *cases, const int *scalar, void *out);
/* convert_element_type */
int sr_kern_convert(SrDtype from, SrDtype to, size_t n, const void *in, void *out);
/* Element value as double / int64 (for literals and item()). */
double sr_kern_get_f64(SrDtype dt, const void *p);
int64_t sr_kern_get_i64(SrDtype dt, const void *p);
/* One element of dt from a double or int64 (ints from iv, floats from re). */
void sr_kern_set_scalar(SrDtype dt, double re, int64_t iv, void *p);
/* The same with an imaginary part, which only complex dtypes keep. */
void sr_kern_set_complex(SrDtype dt, double re, double im, int64_t iv, void *p);
/* iota along dim of a block: out[idx] = start[dim] + idx[dim]. */
int sr_kern_iota(SrDtype dt, int ndim, const int64_t *count, const int64_t *start, int dim, void *out);

/* ---- reductions (kern_reduce.c) ---- */

enum { SR_KR_SUM, SR_KR_MAX, SR_KR_MIN, SR_KR_PROD, SR_KR_AND, SR_KR_OR };
/* Reduces the dims in `axes` (a bitmask) of in; out has the other dims. */
int sr_kern_reduce(int op, SrDtype dt, int ndim, const int64_t *shape, uint32_t axes, const void *in,
                   void *out);
/* argmax / argmin along one axis; index dtype idt (int32 or int64). */
int sr_kern_argminmax(int is_max, SrDtype dt, SrDtype idt, int ndim, const int64_t *shape, int axis,
                      const void *in, void *out);
/* cumulative sum/prod/max/min along an axis. */
int sr_kern_cumulative(int op, SrDtype dt, int ndim, const int64_t *shape, int axis, int reverse,
                       const void *in, void *out);

/* ---- contractions (kern_dot.c) ---- */

/* dot_general of one pair of shards: out is batch dims (lhs order), lhs
   free dims, rhs free dims.  Floats go through cblas (float16 and bfloat16
   in float32); integers and bool through a plain loop.  acc: out holds
   values the products are added to (the gemm's beta = 1), for float32 and
   float64 computed in their own type only (-1 otherwise). */
int sr_kern_dot(SrDtype ldt, SrDtype rdt, SrDtype odt, int lnd, const int64_t *lshape, const void *lhs,
                int rnd, const int64_t *rshape, const void *rhs, int nb, const int *lb, const int *rb,
                int nc, const int *lc, const int *rc, int acc, void *out);
/* How many calls of sr_kern_dot have added into their output (acc). */
long sr_kern_dot_adds(void);

/* The BLAS library the contractions run on, as OpenBLAS describes itself:
   version, build options and the kernel it chose for this CPU (or the one
   OPENBLAS_CORETYPE names), as "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell
   MAX_THREADS=64".  A static string. */
const char *sr_kern_blas_config(void);
struct SrBuf;
/* The core name of the kernels OpenBLAS chose (or was told to use with
   OPENBLAS_CORETYPE), as "Haswell" (blas_cpu.c). */
const char *sr_kern_blas_core(void);
/* "OpenBLAS, Zen kernels (AVX2), on a CPU with AVX2" */
void sr_kern_blas_describe(struct SrBuf *b);
/* When the kernels use fewer vector units than the CPU has: a one-line
   warning naming the fix, and 1; else 0. */
int sr_kern_blas_advice(struct SrBuf *b);

#endif
