## signal19.mk: jax.scipy.signal's convolve, correlate, convolve2d,
## correlate2d, detrend (lib/jax/scipy_signal.c) and jax.image's resize
## and scale_and_translate (lib/jax/image.c); included from golden.mk.
SIGNAL19_GOLDEN = tests/golden/signal19.jxr
GOLDEN_TESTS += $(SIGNAL19_GOLDEN)
EXTRA_DIST += tests/golden/signal19.mk
