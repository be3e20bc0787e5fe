/* jax.h: JAX's API in the statement language, one file per JAX module.
 *
 * The layer: the jax.* (and numpy.*) built-ins, written on the traces and
 * array values below it (trace.h, array.c, jaxstate.h), the autodiff
 * engine (ad/), the evaluator (exec/) and the Python subset's objects
 * (py/).  Each file is named after the JAX module whose functions it
 * holds, so that jax.X.y is in the file named for jax.X:
 *
 *   jax (api.py, pjit.py)    api.c      typeof, ShapeDtypeStruct, make_jaxpr,
 *                                       jit, checkpoint/remat, tracing a
 *                                       function (sr_trace_fn); api.h
 *     devices, device_put    builtins_exec.c  and x.sharding,
 *                                       x.addressable_shards, jnp.array,
 *                                       np.save/np.load (concrete arrays)
 *     set_mesh, config       builtins_jax.c   with JAX's state (jaxstate.h)
 *     jit(...).trace/.lower/.compile (stages.py)  stages.c, with the
 *                                       layouts they choose (layout.c)
 *   jax.numpy                numpy.c    promotion, asarray, then jax.numpy;
 *                                       numpy.h
 *   jax.lax                  lax.c      the lax layer's faces (lax.h, over
 *                                       ad/ops.h) and the jax.lax
 *                                       primitives' wrappers
 *     control flow           lax_control_flow.c  scan, cond, switch,
 *                                       while_loop, fori_loop
 *     solves                 lax_solves.c  custom_linear_solve,
 *                                       custom_root
 *     collectives            lax_parallel.c  psum, all_gather, ppermute,
 *                                       axis_index, pcast, pvary, ...
 *   jax.shard_map            shard_map.c
 *   jax.sharding             sharding.c Mesh, AbstractMesh, P,
 *                                       NamedSharding, reshard,
 *                                       with_sharding_constraint, auto_axes,
 *                                       explicit_axes
 *   jax.nn                   nn.c
 *   jax.random               random.c   on concrete keys and under a trace;
 *                                       random.h
 *   jax.tree, jax.tree_util  tree_util.c  pytrees (tree_util.h), tree.map,
 *                                       tree.leaves
 *   jax.debug                debug.c    visualize_array_sharding, print, callback
 *   jax.experimental.layout  layout.c   Layout, Format, with_layout_constraint,
 *                                       SingleDeviceSharding; layout.h
 *   jax.grad, jvp, vjp, linearize, linear_transpose, value_and_grad
 *                            autodiff.c
 *   jax.vmap (api.py, batching.py)  vmap.c, on ad/batch.h
 *   jax.jacfwd, jacrev, jacobian, hessian (api.py)  jacobian.c, on vmap
 *   jax.lax.map (loops.py), jax.eval_shape, jax.pmap (pmap.py)  vmap_built.c
 *   VJP objects (api.py: VJP), fwd_and_bwd  vjp_api.c; their files
 *                            vjp_io.c; vjp.h
 *   jax.custom_jvp           custom_jvp.c
 *   jax.custom_vjp           custom_vjp.c
 *   jax.ref                  ref.c
 *   jax.Array, tracers, avals  core/array.c (the values), array_methods.c
 *                            (their operators and methods); traces and
 *                            binding core/trace.c
 *
 * Each module registers its built-ins (sr_def) in an init function,
 * declared here or in its header; sr_jnp_init (api.c) and
 * sr_builtins_jax_init / sr_builtins_exec_init call them in a fixed order,
 * the order of the registry that :help and completion read.
 */
#ifndef SR_JAX_JAX_H
#define SR_JAX_JAX_H

void sr_autodiff_init(void);            /* autodiff.c */
void sr_vmap_init(void);                /* vmap.c */
void sr_vmap_hooks_init(void);          /* vmap_hooks.c */
void sr_jacobian_init(void);            /* jacobian.c */
void sr_test_util_init(void);           /* test_util.c */
void sr_jax_ref_init(void);             /* ref.c: jax.ref, jax.new_ref, jax.freeze */
void sr_vmap_built_init(void);          /* vmap_built.c */
void sr_numpy_elementwise_init(void); /* numpy.c: jax.numpy's elementwise core */
void sr_sharding_init(void);          /* sharding.c: meshes, P, NamedSharding */
void sr_sharding_api_init(void);      /* sharding.c: the transforms */
void sr_shard_map_init(void);         /* shard_map.c */
void sr_experimental_init(void);      /* experimental.c: shard_map(check_rep=), pjit, mesh_utils */
void sr_remat_policies_init(void);    /* remat_policies.c: jax.checkpoint_policies, checkpoint_name */
void sr_lax_parallel_init(void);      /* lax_parallel.c */
void sr_lax_control_flow_init(void);  /* lax_control_flow.c */
void sr_lax_solves_api_init(void);    /* lax_solves.c: custom_linear_solve, custom_root */
void sr_tree_util_init(void);         /* tree_util.c */
void sr_debug_init(void);             /* debug.c */
void sr_nn_init(void);                /* nn.c */
void sr_jnp_sort_init(void);          /* numpy_sort.c */
void sr_jnp_searchsorted_init(void);  /* numpy_searchsorted.c */
void sr_jnp_setops_init(void);        /* numpy_setops.c */
void sr_jnp_stats_init(void);         /* numpy_stats.c */
void sr_jnp_shape_init(void);         /* numpy_shape.c */
void sr_jnp_pad_init(void);           /* numpy_pad.c */
void sr_scipy_ndimage_init(void);     /* scipy_ndimage.c */
void sr_jnp_misc_init(void);          /* numpy_misc.c */
void sr_jnp_apiD_init(void);          /* numpy_apiD.c */
void sr_printoptions_init(void);      /* printoptions.c */
void sr_jnp_build_init(void);         /* numpy_build.c */
void sr_jnp_apiC_init(void);         /* numpy_apiC.c */
void sr_scopes_init(void);            /* scopes.c */
void sr_user_context_init(void);      /* user_context.c */
struct SrVal;
/* appends the value in effect of each jax.make_user_context to a jit's
   cache key (user_context.c) */
void sr_user_context_keys(struct SrVal *keys);
void sr_jnp_linalg_init(void);        /* numpy_linalg.c */
void sr_jnp_einsum_init(void);        /* einsum.c */
void sr_jnp_info_init(void);          /* numpy_info.c: finfo, iinfo */
void sr_jnp_norm_init(void);          /* numpy_norm.c: linalg.norm, vector_norm */
void sr_lax_linalg_api_init(void);    /* lax_linalg.c: lax.linalg and jnp.linalg qr, svd */
void sr_linalg16_api_init(void);      /* linalg16.c: cholesky, lu, eigh, solve, det, ... and jax.scipy.linalg */
void sr_linalg18_api_init(void);      /* linalg18.c: hessenberg, schur, qr_multiply, polar, sqrtm, ... */
void sr_random_concrete_init(void);   /* random.c: on concrete keys */
void sr_numpy_index_init(void);       /* numpy_index.c: gather/scatter indexing, .at, take */
void sr_np_random_init(void);         /* np_random.c: numpy.random, numpy's streams */
void sr_lax_conv_api_init(void);      /* lax_conv.c: conv_general_dilated and its wrappers */
void sr_lax_prims_init(void);         /* lax_prims.c: lax.add_p, ... */
void sr_jnp_apiB_init(void);          /* numpy_apiB.c: windows, kron, matrix_transpose */
void sr_lax_scatter_init(void);       /* lax_scatter.c: scatter_apply, lax.gather/scatter API */
void sr_jnp_index16_init(void);
void sr_lax_precision_init(void);     /* lax_precision.c: Precision, DotAlgorithmPreset */
void sr_lax_small18_init(void);       /* lax_small18.c: reduce, batch_matmul, index_take */
void sr_jnp_grid18_init(void);        /* numpy_grid18.c: mgrid, ogrid, r_, c_ */
void sr_jnp_small18_init(void);       /* numpy_small18.c: ndarray, isdtype, gradient, ... */       /* numpy_index16.c: lax.stack/unstack, nan-quantiles, ... */
void sr_scipy_linalg18_init(void);    /* scipy_linalg18.c: toeplitz, hankel, ... (special matrices) */
void sr_jnp_fft_init(void);          /* numpy_fft.c: jax.lax.fft, lax.FftType and jax.numpy.fft */
void sr_ops_segment_init(void);       /* ops_segment.c: jax.ops.segment_sum, _prod, _max, _min */
void sr_scipy_sparse_init(void);      /* scipy_sparse.c: jax.scipy.sparse.linalg.cg */
void sr_scipy_signal_init(void);      /* scipy_signal.c: jax.scipy.signal convolve, correlate, detrend */
void sr_image_init(void);             /* image.c: jax.image resize, scale_and_translate */
void sr_jax_dtypes_init(void);        /* numpy_build.c: jax.dtypes (after jax.numpy) */
/* The Primitive object of the primitive printed `name` (lax.X_p), one per
   name: a new reference (lax_prims.c). */
struct SrVal *sr_lax_prim_obj(const char *name);

#endif
