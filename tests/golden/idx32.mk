## idx32.mk: JAX's tests/lax_numpy_indexing_test.py as shardrepl programs
## (IndexingStrategyTest, IndexingTest, IndexedUpdateTest,
## ValidateIndicesTest, DSliceTest), included by golden.mk.  The index
## tables run on arange inputs (idx32_tables, idx32_update), their values
## compared with numpy's by tests/idx32_numpy.py (tests/idx32_numpy.sh).
## Not ported: the internal indexing.rewriting_take(strategy=...) calls of
## IndexingStrategyTest (ported through x[idx] and x.at[idx].get(mode=),
## the values being the same), the numerical gradient checks' tolerances
## (check_grads: the gradients are printed instead), the dtype sweeps
## beyond a few dtypes.  Pending: a BatchTracer's origin in the non-static
## slice error (JAX names the tracer by its id).
GOLDEN_TESTS += \
	tests/golden/idx32_tables.jxr \
	tests/golden/idx32_update.jxr \
	tests/golden/idx32_misc.jxr \
	tests/golden/idx32_more.jxr \
	tests/golden/idx32_validate.jxr
TESTS += tests/idx32_numpy.sh
EXTRA_DIST += tests/idx32_numpy.sh tests/idx32_numpy.py
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/idx32_pending.jxr
