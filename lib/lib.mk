## lib.mk: the sources of libshardrepl, one block per folder, in the order
## of the layers (HACKING.md, "layers:"): a folder uses only those above it.

lib_libshardrepl_a_SOURCES = \
	lib/util/buf.c lib/util/buf.h lib/util/diag.c lib/util/diag.h \
	lib/util/intern.c lib/util/intern.h lib/util/mem.c lib/util/mem.h \
	lib/util/env.h lib/util/pyfmt.c lib/util/pyfmt.h \
	lib/ir/dtype.c lib/ir/dtype.h lib/ir/jaxpr.c lib/ir/jaxpr.h lib/ir/mesh.c \
	lib/ir/mesh.h lib/ir/name_stack.c lib/ir/name_stack.h lib/ir/type.c lib/ir/type.h lib/ir/val.c lib/ir/val.h \
	lib/prims/prim.c lib/prims/prim.def lib/prims/prim.h \
	lib/text/doc.c lib/text/doc.h lib/text/parse.c lib/text/parse.h \
	lib/text/print.c lib/text/print.h lib/text/print_val.c \
	lib/text/print_val.h \
	lib/text/color.c lib/text/color.h lib/text/jaxpr_color.c \
	lib/check/check.c lib/check/check.h lib/check/rule.c lib/check/rule.h \
	lib/check/rule_cache.c lib/check/rule_cache.h \
	lib/core/array.c lib/core/core.h lib/core/exc.c lib/core/jaxstate.c \
	lib/core/jaxstate.h lib/core/trace.c lib/core/trace.h \
	lib/exec/array.c lib/exec/array.h lib/exec/comm.c lib/exec/comm.h \
	lib/exec/comm_local.c lib/exec/eval.c lib/exec/eval.h lib/exec/exec.c \
	lib/exec/exec.h lib/exec/kern.h lib/exec/kern_ew.h lib/exec/kern_copy.c lib/exec/kern_dot.c lib/exec/blas_cpu.c lib/exec/vmath.c lib/exec/vmath.h \
	lib/exec/fold.c lib/exec/fold.h lib/exec/kern_simd.c lib/exec/kern_simd.h \
	lib/exec/kern_ew.c lib/exec/kern_reduce.c lib/exec/layout.c \
	lib/exec/layout.h lib/exec/npy.c lib/exec/npy.h lib/exec/numfmt.c \
	lib/exec/numfmt.h lib/exec/prng.c lib/exec/prng.h lib/exec/redistribute.c \
	lib/exec/kern_conv.c lib/exec/kern_conv.h \
	lib/exec/kern_window.c lib/exec/kern_window.h \
	lib/exec/kern_fft.c lib/exec/kern_fft.h lib/exec/kern_fft_tmpl.h \
	lib/exec/special_fn.c lib/exec/special_fn.h \
	lib/exec/pool.c lib/exec/pool.h lib/exec/eval_par.c lib/exec/eval_par.h \
	lib/ad/ad.c lib/ad/ad.h lib/ad/ad_rules.h lib/ad/ops.c lib/ad/ops.h lib/ad/batch.c \
	lib/ad/batch.h \
	lib/opt/opt.c lib/opt/opt.h \
	lib/lax/control.c lib/lax/dot.c lib/lax/elementwise.c lib/lax/lax.c \
	lib/lax/lax.h lib/lax/manual.c lib/lax/random.c lib/lax/reduce.c \
	lib/lax/sharding.c lib/lax/structural.c \
	lib/lax/sort.c \
	lib/lax/cumred.c \
	lib/lax/conv.c \
	lib/lax/windowed.c \
	lib/lax/remat_pe.c \
	lib/lax/linalg.c \
	lib/lax/linalg16.c lib/lax/linalg21.c lib/lax/linalg.h \
	lib/lax/linalg18.c \
	lib/lax/fft.c \
	lib/lax/state.c \
	lib/lax/params.c \
	lib/lax/solves.c \
	lib/py/ast.h lib/py/builtins_py.c lib/py/class.c lib/py/class.h lib/py/interp.c lib/py/interp.h \
	lib/py/lex.c lib/py/lex.h lib/py/objects.c lib/py/objects.h lib/py/range.c \
	lib/py/range.h lib/py/re.c lib/py/input.c lib/py/syntax.c \
	lib/py/script.c lib/py/script.h lib/py/generator.c lib/py/generator.h \
	lib/py/modules.c lib/py/modules.h lib/py/mod_functools.c lib/py/mod_itertools.c \
	lib/py/mod_math.c lib/py/mod_cmath.c lib/py/mod_collections.c lib/py/strfmt.c lib/py/strfmt.h \
	lib/py/introspect_py.c lib/py/introspect.h lib/py/mod_enum.c lib/py/enum.h \
	lib/jax/api.c lib/jax/api.h lib/jax/array_methods.c lib/jax/array_methods.h lib/jax/autodiff.c \
	lib/jax/builtins_exec.c lib/jax/builtins_exec.h lib/jax/builtins_jax.c \
	lib/jax/custom_jvp.c lib/jax/custom_vjp.c lib/jax/custom_vmap.c lib/jax/debug.c lib/jax/jax.h \
	lib/jax/lax.c lib/jax/lax.h lib/jax/lax_control_flow.c \
	lib/jax/lax_parallel.c lib/jax/layout.c lib/jax/layout.h lib/jax/nn.c \
	lib/jax/numpy.c lib/jax/numpy.h lib/jax/random.c lib/jax/random.h \
	lib/jax/shard_map.c lib/jax/sharding.c lib/jax/stages.c \
	lib/jax/tree_util.c lib/jax/tree_util.h lib/jax/vjp.h lib/jax/vjp_api.c \
	lib/jax/vjp_io.c lib/jax/vmap.c lib/jax/jacobian.c lib/jax/test_util.c lib/jax/vmap_built.c \
	lib/jax/vmap_hooks.c \
	lib/jax/lax_solves.c \
	lib/jax/nn.h lib/jax/nn_initializers.c lib/jax/scipy_special.c lib/jax/scipy_stats.c \
	lib/jax/jit_options.c lib/jax/jit_options.h lib/jax/array_create.c lib/jax/array_create.h \
	lib/jax/pytree_api.c lib/jax/pytree_api.h lib/jax/introspect.c lib/jax/introspect.h lib/jax/pe_dce.c lib/jax/user_context.c \
	lib/jax/numpy_sort.c lib/jax/numpy_stats.c lib/jax/numpy_shape.c lib/jax/numpy_pad.c lib/jax/scipy_ndimage.c \
	lib/jax/numpy_misc.c \
	lib/jax/numpy_apiD.c \
	lib/jax/printoptions.c \
	lib/jax/numpy_build.c \
	lib/jax/numpy_apiC.c \
	lib/jax/scopes.c \
	lib/jax/numpy_linalg.c \
	lib/jax/numpy_fft.c \
	lib/jax/ref.c lib/jax/ref.h \
	lib/jax/einsum.c \
	lib/jax/random_more.c \
	lib/jax/random_dists.c \
	lib/jax/random_counts.c \
	lib/jax/numpy_info.c \
	lib/jax/numpy_norm.c \
	lib/jax/lax_linalg.c \
	lib/jax/linalg16.c \
	lib/jax/linalg18.c \
	lib/jax/numpy_repeat.c \
	lib/jax/numpy_index.c \
	lib/jax/kernel_counts.c \
	lib/jax/pxla.c \
	lib/jax/tracers.c lib/jax/tracers.h \
	lib/jax/debug_picture.c lib/jax/debug_picture.h \
	lib/jax/np_host.c lib/jax/np_host_funcs.c lib/jax/np_host.h \
	lib/jax/debug_trace.c lib/jax/debug_trace.h \
	lib/jax/callback.c lib/jax/callback.h \
	lib/jax/experimental.c \
	lib/jax/device_put.c lib/jax/device_put.h \
	lib/jax/remat_policies.c lib/jax/remat_policies.h \
	lib/jax/lax_conv.c \
	lib/jax/lax_prims.c \
	lib/jax/numpy_apiB.c \
	lib/jax/math_api.h lib/jax/lax_math.c lib/jax/numpy_math.c lib/jax/scipy_special_more.c lib/jax/nn_more.c \
	lib/jax/scipy_special_series.c \
	lib/jax/numpy_searchsorted.c \
	lib/jax/numpy_setops.c \
	lib/jax/misc16.h lib/jax/numpy_vectorize.c lib/jax/lax_assoc_scan.c lib/jax/custom_gradient.c lib/jax/tree_more.c lib/jax/numpy_small16.c \
	lib/jax/lax_scatter.c lib/jax/lax_scatter.h \
	lib/jax/numpy_index16.c \
	lib/jax/lax_precision.c lib/jax/lax_small18.c lib/jax/numpy_grid18.c lib/jax/numpy_small18.c \
	lib/jax/scipy_linalg18.c lib/jax/scipy_signal.c lib/jax/image.c \
	lib/jax/ops_segment.c lib/jax/scipy_sparse.c \
	lib/exec/bufpool.c lib/exec/bufpool.h \
	lib/exec/ew_pieces.c lib/exec/ew_pieces.h \
	lib/cmd/commands.c lib/cmd/commands.h lib/cmd/commands_ad.c \
	lib/cmd/hooks_exec.c lib/cmd/linit.c lib/cmd/linit.h \
	lib/cmd/session.c lib/cmd/target.c lib/cmd/help_examples.def \
	lib/cmd/comm_svg.c lib/cmd/comm_svg.h \
	lib/cmd/complete.c lib/cmd/complete.h
