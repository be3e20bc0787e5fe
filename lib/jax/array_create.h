/* array_create.h: jnp.array of sequences holding arrays, and the device=
 * / out_sharding= arguments of the array constructors (array_create.c,
 * after JAX's numpy/array_constructors.py and numpy/util.py). */
#ifndef SR_JAX_ARRAY_CREATE_H
#define SR_JAX_ARRAY_CREATE_H

#include "core/trace.h"
#include "py/interp.h"

/* Whether v, a (nested) list or tuple, holds an array (a tracer too). */
int sr_jnp_seq_has_array(SrVal *v, int depth);
/* jnp.array(obj, dtype) for a sequence holding arrays: each element
   converted to the common dtype (lattice_result_type of the leaves when
   dtype is -1), given a leading axis (broadcast_in_dim) and concatenated,
   as JAX's array() does, so it works on tracers. */
SrVal *sr_jnp_array_of_arrays(SrInterp *I, SrVal *obj, int dtype);
/* util.choose_device_or_out_sharding: *sh the sharding param (or NULL),
   *dev a Device to put the result on afterwards (or NULL); both new
   references.  -1 with ValueError when both are given. */
int sr_jnp_device_arg(SrInterp *I, SrVal *device, SrVal *out_sharding, const char *name, SrVal **sh, SrVal **dev);
/* x with leading axes up to ndmin dimensions (array's ndmin=), stealing x. */
SrVal *sr_jnp_ndmin(SrInterp *I, SrVal *x, int ndmin);
/* jax.device_put(x, dev), stealing x; x itself when dev is NULL. */
SrVal *sr_jnp_put_on(SrInterp *I, SrVal *x, SrVal *dev);

#endif
