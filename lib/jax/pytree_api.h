/* pytree_api.h: jax.tree / jax.tree_util's functions over PyTreeDef values
 * (pytree_api.c, after JAX's tree_util.py and jaxlib's pytree.cc). */
#ifndef SR_JAX_PYTREE_API_H
#define SR_JAX_PYTREE_API_H

/* Registers jax.tree.flatten .. map_with_path, their tree_util names,
   keystr and the key entry classes (called by sr_tree_util_init). */
void sr_pytree_api_init(void);

#endif
