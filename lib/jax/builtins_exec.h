/* builtins_exec.h: the built-ins of concrete arrays (builtins_exec.c) --
 * devices, x.sharding, x.addressable_shards, jax.device_put, np.save /
 * np.load, jnp.array, the array methods that need data -- and the helpers
 * on concrete arrays that random.c (jax.random on concrete keys) and
 * debug.c share with them. */
#ifndef SR_JAX_BUILTINS_EXEC_H
#define SR_JAX_BUILTINS_EXEC_H

#include "exec/eval.h"
#include "core/trace.h"

/* An evaluation context on the session's backend and mesh, at `where`. */
void sr_concrete_ctx(SrInterp *I, SrEvalCtx *cx, SrDiags *d, const char *where);
/* The concrete array of a value (converting numbers and lists), a new
   reference; NULL (with *as_array set to the value) for tracers and
   abstract values. */
SrArray *sr_concrete_of(SrInterp *I, SrVal *v, SrVal **as_array);
/* The whole value on the host (malloc'ed), or NULL with an exception. */
void *sr_concrete_host_data(SrInterp *I, SrArray *a);
/* a as a concrete array value (NULL stays NULL). */
SrVal *sr_concrete_wrap(SrArray *a);
/* The type a layout gives on mesh m: only its Explicit axes. */
const SrType *sr_concrete_type_of_layout(const SrType *base, const SrType *l, const SrMesh *m);
/* JAX's error when a sharding does not divide a dimension: -1 then. */
int sr_concrete_check_divisible(SrInterp *I, const SrType *l, const SrVal *sh);
/* device_put's target as a concrete sharding value (new ref), a device,
   or NULL (with *dev set) */
SrVal *sr_concrete_target_sharding(SrInterp *I, SrVal *t, int *dev);

/* x.sharding's str for the printer of arrays. */
void sr_concrete_sharding_str(SrInterp *I, SrBuf *out, SrArray *a);
/* Registers the built-ins of concrete arrays (set by the evaluator's hooks
   when a backend is set up). */
void sr_builtins_exec_init(void);

#endif
