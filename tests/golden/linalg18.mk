## linalg18.mk: build fragment, included by tests/golden/golden.mk: the
## linear algebra of issue 18 (lib/lax/linalg18.c's geqrf, householder_product,
## ormqr, hessenberg, schur and tridiagonal through LAPACK, lib/jax/linalg18.c's
## jax.scipy.linalg hessenberg, schur, qr_multiply, polar, sqrtm, expm_frechet,
## solve_sylvester and eigh_tridiagonal): the printed jaxprs and errors, and the
## values against scipy.linalg's (the references linalg18_gen.py computed).
LINALG18_GOLDEN = tests/golden/linalg18_jaxpr.jxr tests/golden/linalg18_values.jxr
GOLDEN_TESTS += $(LINALG18_GOLDEN)
EXTRA_DIST += tests/golden/linalg18.mk tests/golden/linalg18_gen.py
