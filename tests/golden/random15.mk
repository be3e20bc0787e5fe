## random15.mk: build fragment, included by tests/golden/golden.mk: the
## tests of jax.random's split, fold_in and key_data on traced keys
## (issue 15): the random_split and random_fold_in primitives
## (lib/lax/random.c) under jit, vmap, scan and grad, and their key words
## against a pure-Python threefry2x32 (random15_oracle.sh); exponential,
## logistic and laplace.
RANDOM15_GOLDEN = tests/golden/random15_keys.jxr tests/golden/random15_dists.jxr
GOLDEN_TESTS += $(RANDOM15_GOLDEN)
TESTS += tests/random15_oracle.sh
EXTRA_DIST += tests/golden/random15.mk tests/random15_oracle.sh tests/random15_values.jxr tests/random15_values.py tests/threefry_ref.py
