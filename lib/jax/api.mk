## api.mk: build fragment, included by Makefile.am
##
## The JAX API of the statement language beyond jnp.c: jax.numpy
## (jnp_api.c), jax.lax, the sharding transforms, shard_map and control
## flow (lax_api.c), their golden tests of tracing, and the walkthrough of
## the "Distributed arrays" seed.


## Golden tests of tracing (jax.make_jaxpr / jit(...).trace printed as JAX
## prints them), and the seed walkthrough, run by golden.mk's harness.
API_GOLDEN = \
	tests/golden/trace_jnp.jxr \
	tests/golden/jnp_corners.jxr \
	tests/golden/trace_sharding.jxr \
	tests/golden/trace_manual.jxr \
	tests/golden/trace_control.jxr \
	tests/golden/trace_pad_update.jxr \
	tests/golden/trace_shard_map_axes.jxr \
	tests/golden/trace_cond_errors.jxr \
	examples/seeds/distributed_arrays.jxr

GOLDEN_TESTS += $(API_GOLDEN)
