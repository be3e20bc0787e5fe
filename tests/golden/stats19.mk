## stats19.mk: jax.scipy.stats (lib/jax/scipy_stats.c): norm,
## multivariate_normal, uniform, expon, laplace, logistic, cauchy,
## bernoulli, poisson, gamma, beta, t, chi2, geom, pareto, gumbel_r/l,
## binom, nbinom, betabinom, gennorm, vonmises, wrapcauchy, dirichlet and
## multinomial, truncnorm as JAX's
## jax/_src/scipy/stats/*.py write them; included from golden.mk.
STATS19_GOLDEN = tests/golden/stats19.jxr
GOLDEN_TESTS += $(STATS19_GOLDEN)
EXTRA_DIST += tests/golden/stats19.mk
