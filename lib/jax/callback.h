/* callback.h: jax.pure_callback and jax.experimental.io_callback
 * (callback.c: the pure_callback and io_callback primitives). */
#ifndef SR_JAX_CALLBACK_H
#define SR_JAX_CALLBACK_H

#include "py/interp.h"

/* Binds prim (SR_P_pure_callback or SR_P_io_callback) for fn(*a, **a's
   keywords) with results like result_shape_dtypes' leaves; mode is the
   vmap_method (None or a word) or ordered (a bool).  The results in
   result_shape_dtypes' structure, or NULL with an exception raised. */
SrVal *sr_callback_bind(SrInterp *I, int prim, SrVal *fn, SrVal *result_shape_dtypes, SrArgs *a, SrVal *sharding,
                        SrVal *mode);
/* The effects of an equation or a jaxpr as JAX has them for callbacks and
   debugging (JaxprEqn.effects, Jaxpr.effects): a new set of their names
   ("IO", "OrderedIO", "Debug", "OrderedDebug"), the nested jaxprs'
   included. */
struct SrEqn;
struct SrJaxpr;
SrVal *sr_callback_eqn_effects(const struct SrEqn *e);
SrVal *sr_callback_jaxpr_effects(const struct SrJaxpr *j);
/* The rows' rules, jax.pure_callback and jax.experimental.io_callback. */
void sr_callback_init(void);

#endif
