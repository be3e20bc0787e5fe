## main15.mk: build fragment, included by tests/golden/golden.mk
## Python and jax.numpy gaps found by running JAX's docstring examples
## (issue 15): the with statement's protocol, numpy's print options, ...
MAIN15_GOLDEN = \
	tests/golden/py_with.jxr \
	tests/golden/np_printoptions.jxr \
	tests/golden/jnp_array_weak.jxr \
	tests/golden/jnp_doc_fixes.jxr \
	tests/golden/jnp_build_doc.jxr \
	tests/golden/jax_scopes.jxr \
	tests/golden/py_repl_underscore.jxr
GOLDEN_TESTS += $(MAIN15_GOLDEN)
EXTRA_DIST += tests/golden/main15.mk
## generators: a .py golden run by py_scripts.sh, checked by py_oracle.sh
EXTRA_DIST += tests/golden/py_generators.py tests/golden/py_generators.out \
	tests/golden/py_lazy_iter.py tests/golden/py_lazy_iter.out \
	tests/golden/py_builtins_more.py tests/golden/py_builtins_more.out
