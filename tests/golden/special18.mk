## special18.mk: build fragment, included by tests/golden/golden.mk: the
## jax.scipy.special functions of JAX 0.11 added last (lib/jax/
## scipy_special_series.c) -- bernoulli, dawsn, spence, zeta, sici,
## fresnel, owens_t, expn, exp1 and expi -- in float32 and float64, their
## references written by special18_gen.py from scipy.special and mpmath.
SPECIAL18_GOLDEN = tests/golden/special18_f32.jxr tests/golden/special18_x64.jxr
GOLDEN_TESTS += $(SPECIAL18_GOLDEN)
EXTRA_DIST += tests/golden/special18.mk tests/golden/special18_gen.py $(SPECIAL18_GOLDEN) $(SPECIAL18_GOLDEN:.jxr=.out)
