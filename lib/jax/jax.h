/* jax.h: JAX's API in the statement language, one file per JAX module.
 *
 * The layer: the jax.* built-ins, written on the traces and array values
 * below it (trace.h, array.c, jaxstate.h), the autodiff engine (ad/), the
 * evaluator (exec/) and the Python subset's objects (py/).  Each file is
 * named after the JAX module whose functions it holds, so jax.X.y is in
 * the file named for jax.X:
 *
 *   TODO map
 *
 * Each module registers its built-ins (sr_def) in an init function,
 * declared here; sr_jnp_init (numpy.c... ) calls them in a fixed order,
 * which is the order :help and completion list them.
 */
#ifndef SR_JAX_JAX_H
#define SR_JAX_JAX_H

void sr_ad_api_init(void);            /* autodiff.c */
void sr_numpy_elementwise_init(void); /* numpy.c */
void sr_sharding_init(void);          /* sharding.c: meshes, P, NamedSharding */
void sr_sharding_api_init(void);      /* sharding.c: the transforms */
void sr_shard_map_init(void);         /* shard_map.c */
void sr_lax_parallel_init(void);      /* lax_parallel.c */
void sr_lax_control_flow_init(void);  /* lax_control_flow.c */
void sr_tree_util_init(void);         /* tree_util.c */
void sr_debug_init(void);             /* debug.c */
void sr_nn_init(void);                /* nn.c */
void sr_random_concrete_init(void);   /* random.c */

#endif
