## doc18.mk: JAX docstring examples made to pass in issue doc18 (weak
## types of lax._const, jax.scipy.linalg's special matrices, jax.dtypes,
## ...); included from golden.mk.
DOC18_GOLDEN = tests/golden/doc18_weak.jxr tests/golden/doc18_linalg.jxr tests/golden/doc18_dtypes.jxr tests/golden/doc18_poly.jxr tests/golden/doc18_vmap.jxr
GOLDEN_TESTS += $(DOC18_GOLDEN)
EXTRA_DIST += tests/golden/doc18.mk
