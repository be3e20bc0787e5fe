/* introspect.h: the attributes that look into jaxprs, meshes, shardings
 * and arrays, and jax.device_get / block_until_ready / default_backend
 * (introspect.c). */
#ifndef SR_JAX_INTROSPECT_H
#define SR_JAX_INTROSPECT_H

/* Registers them; after the kinds' own attribute handlers are set
   (sr_builtins_jax_init), which it chains to. */
void sr_introspect_init(void);

/* An equation's primitive as a Primitive object and its params as a dict
   (JaxprEqn.primitive and .params; new references): what a checkpoint
   policy function is called with (remat_policies.c). */
#include "ir/jaxpr.h"
SrVal *sr_introspect_eqn_prim(const SrEqn *e);
SrVal *sr_introspect_eqn_params(const SrEqn *e);

#endif
