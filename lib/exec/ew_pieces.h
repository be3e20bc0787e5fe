/* ew_pieces.h: one big elementwise kernel in pieces on the thread pool
 * (ew_pieces.c).
 *
 * The pool runs the distinct devices of an equation side by side
 * (eval_par.h); an equation with one distinct device's work -- a value
 * replicated on every device of its mesh (a training step's update of
 * its replicated weights), or an array with no mesh (eager math on a big
 * array) -- ran on the interpreter's thread alone.  Elementwise math
 * reads and writes element i only, so such a kernel over n elements can
 * run as pieces of SR_EW_PIECE elements on every thread: each element is
 * computed by the same kernel code as in one call, and so are the same
 * bits, for every pool size.  Pieces start at multiples of SR_EW_PIECE
 * elements (a power of two, 64-byte aligned for every element size), so
 * a kernel's vector loop covers the same elements in a piece as in the
 * whole, and only the last piece has the whole's tail.
 */
#ifndef SR_EXEC_EW_PIECES_H
#define SR_EXEC_EW_PIECES_H

#include <stddef.h>
#include <stdint.h>

#include "exec/kern.h"

#define SR_EW_PIECE ((size_t)1 << 16)

/* sr_kern_unary (nin 1) or sr_kern_binary (nin 2) of k for dt over n
   elements: in[i] has es[i] bytes an element (0: a broadcast scalar,
   read at 0), out oes.  In pieces on the pool when n is 4 pieces or more
   (262,144 elements) and the pool has free threads (not from inside a pool task);
   in one call otherwise.  Returns the kernel's status (-1: no kernel for
   dt, the same from every piece). */
int sr_kern_ew_pieces(const SrKernEw *k, SrDtype dt, size_t n, int nin, const void *const *in, const size_t *es,
                      void *out, size_t oes, const int64_t *ip);

/* sr_kern_fma (kern_simd.h) over n elements in pieces on the pool as
   sr_kern_ew_pieces's: in[3] the operands, a scalar one (bit k of
   scalar) read at 0. */
int sr_kern_fma_pieces(SrDtype dt, int form, size_t n, const void *const *in, int scalar, void *out);

/* sr_kern_fill (out[0..n) = the es-byte element at v: a broadcast
   scalar, zeros_like, full) in pieces on the pool as sr_kern_ew_pieces's. */
void sr_kern_fill_pieces(size_t es, size_t n, const void *v, void *out);

/* Copies c[0..n) (disjoint), side by side on the pool when there are
   two or more of SR_COPY_PIECE bytes or more and the pool has free threads,
   one after another otherwise: a scan's stacked results moved into
   their slices, one a device. */
#define SR_COPY_PIECE ((size_t)64 << 10)
typedef struct SrCopy {
  void *dst;
  const void *src;
  size_t n;
} SrCopy;
void sr_copies_run(const SrCopy *c, int n);

#endif
