/* np_host.h: numpy's ndarray, on the host (np_host.c, np_host_funcs.c).
 *
 * `import numpy as np` is numpy, not jax.numpy: its arrays are values of
 * the class numpy.ndarray (and numpy's scalars, np.float64(1.5), the same
 * class with the scalar mark), held as a meshless, row-major SrArray of
 * exec/array.h -- host storage, no sharding, no weak types.  numpy's
 * functions run on the same eager kernels as jax.numpy's: an ndarray goes
 * in as a jax.Array of its own dtype, the jax.numpy function runs with
 * 64-bit types on (numpy's int64/float64 defaults whatever
 * jax_enable_x64 says), after numpy's promotion of the operands' dtypes,
 * and its result comes back as an ndarray (a numpy scalar where numpy
 * gives one).  Where an ndarray meets JAX (jnp.asarray, jax.device_put,
 * a jitted function's argument, an operator with a jax.Array) it becomes
 * a jax.Array canonicalized as JAX does: float64 is float32 unless
 * jax_enable_x64 is on.
 */
#ifndef SR_JAX_NP_HOST_H
#define SR_JAX_NP_HOST_H

#include "core/trace.h"
#include "exec/array.h"
#include "py/interp.h"

/* The class of ndarrays and numpy scalars. */
extern SrClass sr_ndarray_class;

static inline int sr_is_ndarray(const SrVal *v) { return v && sr_is_obj(v, &sr_ndarray_class); }

/* THE constructor: a new ndarray of dtype dt and shape shape[rank]
   (a new reference), with *data set to its writable, row-major,
   uninitialised buffer of numel * sr_elem_size(dt) bytes.  NULL (with
   *data NULL) when the array would pass the memory limit; the caller
   raises (MemoryError). */
SrVal *sr_ndarray_new(SrDtype dt, int rank, const int64_t *shape, void **data);
/* The same marked as a numpy scalar (rank 0): np.float64(1.5). */
SrVal *sr_np_scalar_new(SrDtype dt, void **data);
/* Whether v is a numpy scalar (not a 0-d ndarray). */
int sr_np_is_scalar(const SrVal *v);
/* The numpy scalar of a 0-d ndarray (the same data), else nd; a new
   reference. */
SrVal *sr_np_as_scalar(SrVal *nd);
/* Marks an int64 ndarray of device ids as the object array of those
   devices (np.array(jax.devices())); a 0-d one becomes its device.
   Steals nd, returns the result. */
SrVal *sr_np_mark_devices(SrInterp *I, SrVal *nd);
int sr_np_is_devices(const SrVal *v);
/* The array of an ndarray (borrowed): its type and its one buffer. */
SrArray *sr_ndarray_array(const SrVal *v);
/* An ndarray as a jax.Array: exact keeps its dtype (numpy's functions
   run on that); otherwise canonicalized as JAX does (64-bit types to
   32-bit without jax_enable_x64).  A new reference. */
SrVal *sr_ndarray_to_jax(SrInterp *I, SrVal *v, int exact);
/* A jax.Array (concrete) as an ndarray of its dtype, weak type dropped;
   a 0-d one is a numpy scalar when scalar is set.  Anything else is
   returned as it is (a new reference); tracers raise JAX's
   TracerArrayConversionError. */
SrVal *sr_ndarray_from_jax(SrInterp *I, SrVal *v, int scalar);
/* The same for a concrete array value that nothing else holds (a fresh
   result): the ndarray takes over its one buffer instead of copying it. */
SrVal *sr_ndarray_adopt_jax(SrInterp *I, SrVal *v);
/* Nested lists and tuples with each ndarray in them as a jax.Array
   (exact as in sr_ndarray_to_jax); a new reference. */
SrVal *sr_np_seq_to_jax(SrInterp *I, SrVal *v, int exact);
/* np.asarray(v, dtype) (dtype -1: numpy's inference): ndarrays, jax.Arrays,
   nested lists and scalars as an ndarray; a new reference or NULL with
   an exception. */
SrVal *sr_np_asarray(SrInterp *I, SrVal *v, int dtype);
/* numpy computes eagerly on host values, 64-bit types on, whatever
   trace is being built (inside jit, np.arange(3.0) is a constant, as
   numpy's arrays are): between begin and end, x64 is on and no trace is
   current. */
typedef struct SrNpEval {
  int x64, host;
  SrTrace *trace;
} SrNpEval;
void sr_np_eval_begin(SrInterp *I, SrNpEval *s);
void sr_np_eval_end(SrInterp *I, const SrNpEval *s);
/* Calls jax.numpy function fn so (begin/end); a new reference. */
SrVal *sr_np_call_x64(SrInterp *I, SrVal *fn, SrArgs *a);
/* The init table's call_dtype: np.float32(1.5) is a numpy scalar,
   jnp.float32(1.5) a jax.Array (sr_jnp_dtype_call). */
SrVal *sr_np_dtype_call(SrInterp *I, SrVal *self, SrArgs *a);
/* isinstance(x, self) for a dtype as a scalar type (SrPyInit's
   dtype_instancecheck): x is a numpy scalar of that dtype */
int sr_np_dtype_instancecheck(SrInterp *I, SrVal *self, SrVal *x);
/* numpy's scalar type of dtype d (np.dtype(d).type; ml_dtypes' for
   bfloat16, the float8s, int4...): called, it makes numpy scalars
   (borrowed) */
SrVal *sr_np_scalar_type(SrDtype d);

/* Registers numpy's module over what jax/ registered under numpy.*
   (after the evaluator's built-ins, sr_builtins_exec_init). */
void sr_np_host_init(void);
/* numpy's functions (np_host_funcs.c), from sr_np_host_init. */
void sr_np_host_funcs_init(void);

#endif
