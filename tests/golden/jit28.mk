## jit28.mk: JAX's tests/api_test.py class JitTest as shardrepl programs
## (jit's wrapper and its errors, static and keyword arguments and the
## trace cache, donation, the lowered and compiled stages, device=),
## included by golden.mk.  Not ported: tests of XLA text, HLO and compile
## internals (as_text, compiler_ir, cost_analysis, memory_analysis,
## runtime_executable, replica attributes, kept_var_idx, the
## compilation-cache counts, compiler_options' XLA flags and their XLA
## errors), buffer pointers and GC (unsafe_buffer_pointer,
## testBuffersAreFreedPromptly, test_jit_reference_dropping, weakrefs,
## live_executables), threads (test_concurrent_jit's executor), numpy masked
## arrays, jax internals (api_util.resolve_argnums / infer_argnums_and_argnames,
## pe.close_jaxpr, token._buf), the copy module, GPU/TPU-only tests
## (explicit backends, default_device on an accelerator), the transfer
## guard, __annotations__ and a partial's own __name__.
GOLDEN_TESTS += \
	tests/golden/jit28_basics.jxr \
	tests/golden/jit28_donate.jxr \
	tests/golden/jit28_stages.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING += \
	tests/golden/pending/jit28_pending.jxr
