## api19.mk: JAX's tests/api_test.py and custom_api_test.py as shardrepl
## programs (grad, jacobians, jvp/vjp checks, float0, jit's static and
## donated arguments, eval_shape, make_jaxpr, vmap's checks, custom_jvp and
## custom_vjp, remat); included from golden.mk.
API19_GOLDEN = tests/golden/api19_grad.jxr tests/golden/api19_jac.jxr tests/golden/api19_jvp_vjp.jxr \
	tests/golden/api19_jit.jxr tests/golden/api19_vmap.jxr tests/golden/api19_custom.jxr \
	tests/golden/api19_remat.jxr
GOLDEN_TESTS += $(API19_GOLDEN)
EXTRA_DIST += tests/golden/api19.mk
