/* random.h: jax.random under a trace (random.c): the primitives
 * JAX binds, where builtins_exec.c computes on concrete keys. */
#ifndef SR_LANG_RANDOM_API_H
#define SR_LANG_RANDOM_API_H

#include <stdint.h>

#include "py/interp.h"

/* Whether jax.random must bind primitives for this key or seed: under a
   trace, or for a traced or abstract value. */
int sr_random_traced(SrInterp *I, SrVal *v);
/* jax.random.key(seed) / PRNGKey(seed) (legacy): random_seed [, random_unwrap]. */
SrVal *sr_random_key_traced(SrInterp *I, SrVal *seed, int legacy);
/* jax.random.key_data(keys): random_unwrap. */
SrVal *sr_random_key_data_traced(SrInterp *I, SrVal *keys);
/* kind 0 normal, 1 uniform (minval, maxval: NULL for 0 and 1), 2 bits. */
SrVal *sr_random_sample_traced(SrInterp *I, int kind, SrVal *key, const int64_t *shape, int nd, SrDtype dt,
                               SrVal *minval, SrVal *maxval, SrVal *out_sharding);
/* random/core.py's maybe_auto_axes(f, out_sharding)(*args): calls fn (a
   builtin, stolen) on args, inside auto_axes(out_sharding=..., axes=its
   mesh's Explicit axes) when out_sharding (NULL for None) canonicalizes
   to a sharding (canonicalize_sharding(out_sharding, api)). */
SrVal *sr_random_maybe_auto_axes(SrInterp *I, SrVal *fn, SrVal *out_sharding, const char *api, int n,
                                 SrVal **args);
void sr_random_api_init(void);
/* jax_legacy_prng_key's value: 0 allow, 1 warn, 2 error; -1 with JAX's
   error raised. */
int sr_legacy_prng_key_mode(SrInterp *I, SrVal *v);
/* jax_default_prng_impl's value: an SR_PRNG_*; -1 with JAX's error
   raised (or NotImplementedError for JAX's implementations shardrepl
   lacks). */
int sr_default_prng_impl_value(SrInterp *I, SrVal *v);
/* _check_prng_key on a raw uint32 key: jax_legacy_prng_key's error or
   warning (jax_enable_custom_prng's warning); -1 when raised. */
int sr_random_legacy_key_used(SrInterp *I);
void sr_random_more_init(void); /* random_more.c */
/* _check_prng_key(name, key): a typed key (raw key data wrapped); a new
   reference, or NULL with an exception raised (random_more.c). */
SrVal *sr_random_check_key(SrInterp *I, SrVal *key, const char *name);
/* A shape as Python prints a tuple: (2,), (2, 3). */
void sr_random_shape_str(SrBuf *b, const int64_t *shape, int nd);
void sr_random_dists_init(void); /* random_dists.c */
/* _check_broadcast_shapes(name, shape, *params) (random_dists.c): shape
   None gives the parameters' broadcast shape, a given one must be what
   broadcasting it with them gives; JAX's messages. */
int sr_random_param_shape(SrInterp *I, const char *name, SrVal *shape, int n, SrVal **params, int64_t *out,
                          int *nd);
/* lax.broadcast_shapes(t's shape, shape) (random_dists.c); JAX's message. */
int sr_random_broadcast_shapes(SrInterp *I, const int64_t *shape, int nd, const SrType *t, int64_t *out, int *on);
void sr_random_counts_init(void); /* random_counts.c */

#endif
