/* lax_scatter.h: lax.scatter_apply's bind and lax's public gather/scatter
 * API (lax_scatter.c). */
#ifndef SR_JAX_LAX_SCATTER_H
#define SR_JAX_LAX_SCATTER_H

#include "py/interp.h"

/* slicing.scatter_apply(x, ix, func, dnums, update_shape=ushape, ...):
   scatter_p bound on x, ix and zeros of ushape with func's update_jaxpr;
   dnums (a ScatterDimensionNumbers word) and mode (a GatherScatterMode
   word) borrowed.  NULL with an exception raised. */
SrVal *sr_lax_scatter_apply_bind(SrInterp *I, SrVal *x, SrVal *ix, SrVal *func, SrVal *dnums,
                                 const int64_t *ushape, int nu, int sorted, int unique, SrVal *mode);
/* GatherScatterMode.from_any's member name ("CLIP", ...), NULL with
   ValueError (numpy_index.c); gather: None means PROMISE_IN_BOUNDS. */
const char *sr_gs_mode_name(SrInterp *I, SrVal *m, int gather);
/* slicing.gather's bind (numpy_index.c): mode a member name, fill None
   or NULL for the dtype's default with FILL_OR_DROP; gdn stolen. */
SrVal *sr_gs_bind_gather(SrInterp *I, SrVal *x, SrVal *ix, SrVal *gdn, const int64_t *ss, int nss, const char *mode,
                         SrVal *fill, int unique, int sorted);
/* The param word GatherScatterMode.NAME. */
SrVal *sr_gs_mode_word(const char *name);
void sr_lax_scatter_init(void);

#endif
