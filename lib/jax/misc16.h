/* misc16.h: the inits of jnp.vectorize, lax.associative_scan,
 * jax.custom_gradient, the tree_util leftovers and the small jnp
 * functions of wave 7's misc16, all called from sr_misc16_init
 * (numpy_vectorize.c), which sr_jnp_init calls.
 */
#ifndef SR_JAX_MISC16_H
#define SR_JAX_MISC16_H

void sr_misc16_init(void);
void sr_jnp_vectorize_init(void);     /* numpy_vectorize.c */
void sr_lax_assoc_scan_init(void);    /* lax_assoc_scan.c */
void sr_custom_gradient_init(void);   /* custom_gradient.c */
void sr_tree_more_init(void);         /* tree_more.c */
void sr_jnp_small16_init(void);       /* numpy_small16.c */

#endif
