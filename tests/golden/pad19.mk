## pad19.mk: jnp.pad's modes (lib/jax/numpy_pad.c), round() of an
## array, jnp.full with an array fill_value, vmap of the windowed
## reductions (lib/lax/windowed.c) and of conv_general_dilated
## (lib/lax/conv.c), jax.scipy.ndimage.map_coordinates
## (lib/jax/scipy_ndimage.c), jax.Array methods; included from golden.mk.
PAD19_GOLDEN = tests/golden/pad19.jxr tests/golden/full19.jxr tests/golden/windowed19.jxr tests/golden/conv19.jxr tests/golden/ndimage19.jxr tests/golden/methods19.jxr tests/golden/reduce_window19.jxr
GOLDEN_TESTS += $(PAD19_GOLDEN)
EXTRA_DIST += tests/golden/pad19.mk
