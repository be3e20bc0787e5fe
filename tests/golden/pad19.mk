## pad19.mk: jnp.pad's modes (lib/jax/numpy_pad.c) and round() of an
## array; included from golden.mk.
PAD19_GOLDEN = tests/golden/pad19.jxr
GOLDEN_TESTS += $(PAD19_GOLDEN)
EXTRA_DIST += tests/golden/pad19.mk
