## dt30.mk: JAX's tests/dtypes_test.py (classes DtypesTest,
## ExtendedDTypeTest's testIsSubdtypeExtended, TestPromotionTables) and
## tests/x64_context_test.py (X64ContextTests) as shardrepl programs: the
## type promotion lattice and its errors (standard, strict, x32, x64,
## explicit x64 'allow'), result_type with weak types, dtype objects,
## issubdtype and isdtype, jax.enable_x64 contexts.  Included by golden.mk.
## Not ported: threads (test_thread_safety), CPU precision
## (test_near_singular_inverse runs on a random near-singular matrix),
## TPU-only cases (testIntNPromotionError is @run_on_devices('tpu'),
## float6 values where the test needs libtpu >= 0.0.45; the int1/uint1
## dtypes, None in dtypes unless ml_dtypes has them),
## JAX internals with no shardrepl counterpart (dtypes.canonicalize_value
## and literals.TypedInt/TypedFloat/TypedComplex/TypedNdArray,
## check_and_canonicalize_user_dtype of a class with __hash__ = None),
## and the user-defined
## extended dtypes (ExtendedDTypeTest's custom tangent dtypes, scale
## types, primal_tangent_dtype, edtype conversions: dtypes.ExtendedDType
## subclasses with _rules are not modelled).
GOLDEN_TESTS += \
	tests/golden/dt30_promotion.jxr \
	tests/golden/dt30_result_type.jxr \
	tests/golden/dt30_dtypes.jxr \
	tests/golden/dt30_x64.jxr
