## api.mk: build fragment, included by Makefile.am
##
## The golden tests of tracing through JAX's API (lib/jax/: jax.numpy in
## numpy.c, jax.lax in lax.c, lax_control_flow.c and lax_parallel.c, the
## sharding transforms in sharding.c, shard_map in shard_map.c), and the
## walkthrough of the "Distributed arrays" seed.


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
