/* kern_window.h: the kernels of the windowed reductions on one shard
 * (kern_window.c): reduce_window_sum, _max, _min, select_and_gather_add
 * and select_and_scatter_add, after XLA's ReduceWindow semantics.
 * Buffers are row-major; padding and the holes of base dilation hold the
 * reduction's identity, so they take no part.
 */
#ifndef SR_EXEC_KERN_WINDOW_H
#define SR_EXEC_KERN_WINDOW_H

#include <stdint.h>

#include "ir/dtype.h"
#include "ir/type.h"

typedef struct SrWindowGeom {
  int nd;
  int64_t in[SR_MAX_RANK], out[SR_MAX_RANK];  /* operand and result shapes */
  int64_t win[SR_MAX_RANK], stride[SR_MAX_RANK], lo[SR_MAX_RANK];
  int64_t bdil[SR_MAX_RANK], wdil[SR_MAX_RANK];
} SrWindowGeom;

enum { SR_WIN_SUM, SR_WIN_MAX, SR_WIN_MIN };

/* out (g->out) = the reduction op of each window of in (g->in); -1 for a
   dtype without a loop. */
int sr_kern_reduce_window(int op, SrDtype dt, const SrWindowGeom *g, const void *in, void *out);
/* select_and_gather_add: out[o] = t at the first element of window o of
   x that is >= (ge) or <= (le) every other; 0 for a window with none. */
int sr_kern_select_gather(int ge, SrDtype dt, const SrWindowGeom *g, const void *t, const void *x, void *out);
/* select_and_scatter_add: out (g->in) = zeros, then src[o] added at the
   element select_gather picks in window o of x (src is g->out-shaped). */
int sr_kern_select_scatter(int ge, SrDtype dt, const SrWindowGeom *g, const void *src, const void *x, void *out);

#endif
