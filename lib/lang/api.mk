## api.mk: build fragment, included by Makefile.am
##
## The JAX API of the statement language beyond jnp.c: jax.numpy
## (jnp_api.c), jax.lax, the sharding transforms, shard_map and control
## flow (lax_api.c), their golden tests of tracing, and the walkthrough of
## the "Distributed arrays" seed.

lib_libshardrepl_a_SOURCES += lib/lang/api.h lib/lang/jnp_api.c lib/lang/lax_api.c
