## solve18.mk: jax.lax.custom_linear_solve and jax.lax.custom_root
## (lax/solves.c, jax/lax_solves.c), added in issue solve18; included
## from golden.mk.
SOLVE18_GOLDEN = tests/golden/solve18_linear.jxr tests/golden/solve18_root.jxr
GOLDEN_TESTS += $(SOLVE18_GOLDEN)
EXTRA_DIST += tests/golden/solve18.mk
