/* jaxstate.h: JAX's global state (core.h: I->jax).
 *
 * The mesh set with jax.set_mesh (a concrete Mesh), the abstract meshes
 * entered with jax.sharding.use_abstract_mesh / auto_axes / explicit_axes /
 * shard_map (a stack), and jax.config values such as jax_num_cpu_devices.
 */
#ifndef SR_CORE_JAXSTATE_H
#define SR_CORE_JAXSTATE_H

#include "ir/mesh.h"

#define SR_DEFAULT_DEVICES 8
#define SR_MAX_VMAP_AXES 16

typedef struct SrJaxState {
  const SrMesh *mesh;          /* set_mesh's concrete mesh, or NULL */
  const SrMesh *abstract[32];  /* entered abstract meshes, innermost last */
  int nabstract;
  const SrMesh *resource[32];  /* the meshes entered with `with mesh:`
                                  (mesh_lib.thread_resources), innermost
                                  last */
  int nresource;
  int pjit_call;               /* inside a pjit call (the errors say pjit) */
  int num_devices;             /* jax_num_cpu_devices */
  int devices_used;            /* the device count is fixed once used */
  int num_ranks;               /* the processes the devices are split
                                  over (an MPI job's ranks), 1 without MPI:
                                  num_devices is a multiple of it */
  int enable_x64;
  int threefry_original;       /* jax_threefry_partitionable=False */
  int default_prng;            /* jax_default_prng_impl: an SR_PRNG_* (0
                                  is threefry2x32, JAX's default) */
  int legacy_prng_key;         /* jax_legacy_prng_key: 0 allow (the
                                  default), 1 warn, 2 error */
  int enable_custom_prng;      /* jax_enable_custom_prng */
  int random_seed_offset;      /* jax_random_seed_offset */
  int explicit_x64;            /* jax_explicit_x64_dtypes: 0 warn (the
                                  default), 1 error, 2 allow */
  int host_numpy;      /* inside numpy's functions on host arrays
                          (np_host.h): numpy's IEEE operations, none of
                          XLA's rewrites */
  int disable_jit;             /* jax.disable_jit(): jit calls run eagerly */
  int no_tracing;              /* jax.no_tracing(): a jit's cache miss raises */
  int no_execution;            /* jax.no_execution(): running a jit raises */
  int default_device;          /* jax.default_device(d): d's id + 1, 0 for none */
  int check_tracer_leaks;      /* jax_check_tracer_leaks (jax.checking_leaks()) */
  int explain_cache_misses;    /* jax_explain_cache_misses: a jit's trace cache
                                  miss is explained on stderr (pe.explain) */
  int no_f16_reductions;       /* jax_allow_f16_reductions=False */
  int softmax_custom_jvp;      /* jax_softmax_custom_jvp (default False) */
  int check_static_indices;     /* jax_check_static_indices: static int indices bounds-checked */
  int rank_promotion;          /* jax_numpy_rank_promotion: 0 allow, 1 warn, 2 raise */
  int strict_promotion;        /* jax_numpy_dtype_promotion: 0 standard, 1 strict */
  /* jax_default_matmul_precision (interned, or NULL for None): the
     global value (config.update) and the one a jax.default_matmul_precision
     context sets, which overrides it while one is entered (mmp_ctx_set) */
  const char *mmp_global, *mmp_ctx;
  int mmp_ctx_set;
  int compile_time_eval;       /* jax.ensure_compile_time_eval(): operations on
                                  known values run even while tracing */
  int check_vma;               /* tracing a shard_map body with check_vma */
  int no_auto_pcast;           /* jax_auto_pcast off: no pvary is inserted to
                                  match varying manual axes */
  /* the named axes of the enclosing jax.vmaps (core.get_axis_env()): each
     axis_name and its size, innermost last */
  const char *vmap_axis[SR_MAX_VMAP_AXES];
  int64_t vmap_size[SR_MAX_VMAP_AXES];
  int nvmap;
  /* the spmd_axis_names of the enclosing jax.vmaps
     (core.get_axis_env().spmd_axis_names), interned */
  const char *spmd_names[SR_MAX_VMAP_AXES];
  int nspmd_names;
  /* the Explicit mesh axes the enclosing jax.vmaps map away
     (core.get_axis_env().explicit_mesh_axis_names), interned */
  const char *explicit_names[SR_MAX_VMAP_AXES];
  int nexplicit_names;
} SrJaxState;

/* The jax_default_matmul_precision in effect (interned, or NULL). */
static inline const char *sr_jax_matmul_precision(const SrJaxState *s) {
  return s->mmp_ctx_set ? s->mmp_ctx : s->mmp_global;
}

SrJaxState *sr_jax_state_new(void);
void sr_jax_state_free(SrJaxState *s);
void sr_jax_state_reset(SrJaxState *s);
/* The abstract mesh in context (jax.sharding.get_abstract_mesh()): the
   innermost entered one, else the set mesh's abstract form with device
   fields, else the empty AbstractMesh. */
const SrMesh *sr_jax_abstract_mesh(const SrJaxState *s);
/* An equation's own abstract mesh (SrEqn.mesh) entered for its rules:
   returns the depth to go back to with sr_jax_leave_eqn_mesh. */
static inline int sr_jax_enter_eqn_mesh(SrJaxState *s, const SrMesh *m) {
  int n = s->nabstract;
  if (m && n < 32) s->abstract[s->nabstract++] = m;
  return n;
}
static inline void sr_jax_leave_eqn_mesh(SrJaxState *s, int n) { s->nabstract = n; }
/* The physical mesh of the resource env (`with mesh:`), or NULL. */
static inline const SrMesh *sr_jax_resource_mesh(const SrJaxState *s) {
  return s->nresource ? s->resource[s->nresource - 1] : NULL;
}
/* The mesh a jaxpr text's types name by default: the context mesh, or NULL. */
const SrMesh *sr_jax_context_mesh(const SrJaxState *s);

#endif
