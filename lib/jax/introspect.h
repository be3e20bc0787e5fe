/* introspect.h: the attributes that look into jaxprs, meshes, shardings
 * and arrays, and jax.device_get / block_until_ready / default_backend
 * (introspect.c). */
#ifndef SR_JAX_INTROSPECT_H
#define SR_JAX_INTROSPECT_H

/* Registers them; after the kinds' own attribute handlers are set
   (sr_builtins_jax_init), which it chains to. */
void sr_introspect_init(void);
/* pe_dce.c: partial_eval.dce_jaxpr and core.subjaxprs */
void sr_pe_dce_init(void);

/* An equation's primitive as a Primitive object and its params as a dict
   (JaxprEqn.primitive and .params; new references): what a checkpoint
   policy function is called with (remat_policies.c). */
#include "ir/jaxpr.h"
#include "py/interp.h"
SrVal *sr_introspect_eqn_prim(const SrEqn *e);
SrVal *sr_introspect_eqn_params(const SrEqn *e);
/* jaxpr.debug_info: a DebugInfo object of j's (new), None if it has none */
SrVal *sr_introspect_debug_info(const SrJaxpr *j);
/* A staging trace's tracer's _debug_info (DynamicJaxprTracer's: what its
   function was traced for, its func_src_info and arg_names, result_paths
   core.initial_result_paths); NULL where it has none. */
SrVal *sr_introspect_tracer_debug_info(SrInterp *I, const SrVal *x);

#endif
