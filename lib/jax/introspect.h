/* introspect.h: the attributes that look into jaxprs, meshes, shardings
 * and arrays, and jax.device_get / block_until_ready / default_backend
 * (introspect.c). */
#ifndef SR_JAX_INTROSPECT_H
#define SR_JAX_INTROSPECT_H

/* Registers them; after the kinds' own attribute handlers are set
   (sr_builtins_jax_init), which it chains to. */
void sr_introspect_init(void);

#endif
