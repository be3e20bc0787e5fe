/* numpy.h: the numpy-level layer over sr_bind (numpy.c): dtype and rank
 * promotion, as jax.numpy does before it binds lax primitives, asarray,
 * and the helpers that read the arguments of API calls.  The jax.numpy,
 * jax.lax and jax built-ins are written with these; the pytrees
 * (tree_util.h) and jax.jit's entry points (api.h) come with it. */
#ifndef SR_JAX_NUMPY_H
#define SR_JAX_NUMPY_H

#include "jax/api.h"
#include "ad/ops.h"
#include "core/trace.h"
#include "jax/tree_util.h"

/* The dtype JAX gives a mix of operands (weak Python scalars defer to
   arrays' dtypes), and whether the result is weak. */
SrDtype sr_jnp_result_dtype(SrInterp *I, int n, SrVal **args, int *weak);
/* dtypes.lattice_result_type of the operands' (dtype, weak) pairs: 0, or
   -1 with TypePromotionError (or ValueError off the lattice) */
int sr_jnp_result_dtype_checked(SrInterp *I, int n, SrVal **args, SrDtype *out, int *weak);
/* dtypes.promote_types of two dtypes, or of Python's int, float and
   complex as SR_JNP_WEAK_*: 0, or -1 with TypePromotionError */
enum { SR_JNP_WEAK_INT = -2, SR_JNP_WEAK_FLOAT = -3, SR_JNP_WEAK_COMPLEX = -4 };
int sr_jnp_promote_types(SrInterp *I, int a, int b, SrDtype *out);
int sr_jnp_lattice_result(SrInterp *I, int n, const SrDtype *dts, const int *weaks, SrDtype *out, int *weak);
/* Converts x to dtype dt (a convert_element_type equation for arrays, a
   retyped literal for Python scalars); a new reference. */
static inline SrVal *sr_jnp_convert(SrInterp *I, SrVal *x, SrDtype dt, int weak) {
  return sr_op_convert(SR_BINDER(I), x, dt, weak, NULL);
}
/* Promotes operands in place to one dtype and one rank (broadcast_in_dim
   adds leading dims); the args array holds new references afterwards. */
int sr_jnp_promote(SrInterp *I, int n, SrVal **args, const char *fname);
/* A dtype object called as a constructor, jnp.float32(x): the init
   table's call_dtype (py/interp.h's SrPyInit, cmd/linit.c). */
SrVal *sr_jnp_dtype_call(SrInterp *I, SrVal *self, SrArgs *a);
/* Lists and nested lists of numbers as a concrete or abstract array. */
SrVal *sr_jnp_asarray(SrInterp *I, SrVal *x, int dtype /* -1: infer */);
/* reductions.check_where: 0 when where is NULL, None or a boolean array;
   else raises jnp.NAME's ValueError and returns -1 */
int sr_jnp_check_where(SrInterp *I, const char *name, SrVal *where);
/* jnp.remainder (the jit named remainder) */
SrVal *sr_jnp_remainder(SrInterp *I, SrVal *x, SrVal *y);

/* sr_bindv and sr_int_tuple are the op layer's (ad/ops.h). */
SrVal *sr_none_tuple(int n);
/* An optional dtype argument (dtype=...): a dtype, a dtype's name, or
   Python's bool, int, float or complex as dtypes.canonicalize_dtype has
   them (int is int32 and float float32 unless x64 is on); *out is -1 for
   None or absent.  The one place a dtype argument is interpreted. */
int sr_dtype_arg(SrInterp *I, SrVal *v, int *out, const char *what);
/* the same with the function the x64 warning names (dtypes.
   check_and_canonicalize_user_dtype's fun_name; "" names none, as
   jax.random's samplers) */
int sr_dtype_arg_fn(SrInterp *I, SrVal *v, int *out, const char *what, const char *fun_name);
/* The shape of a Python int or tuple of ints. */
int sr_shape_arg(SrInterp *I, SrVal *v, int64_t *shape, int *ndim, const char *what);
/* An int or a sequence of ints (axes, a permutation, sizes; at most
   SR_MAX_RANK) into out[*n]; None or absent gives none. */
int sr_ints_arg(SrInterp *I, SrVal *v, int64_t *out, int *n, const char *what);
/* The out_sharding / sharding argument of an API call (P or
   NamedSharding or None) as a sharding param value; NULL means None. */
SrVal *sr_sharding_arg(SrInterp *I, SrVal *v, int ndim, const char *what);


/* Whether the int v is in the range of the integer dtype d (any other
   dtype: 1). */
int sr_int_fits(int64_t v, SrDtype d);
/* JAX's OverflowError for a Python int that the default int dtype (int32,
   or int64 with x64) cannot hold, as an argument of jit or device_put
   becomes one ("Python int 4294967296 too large to convert to int32"):
   -1 then, else 0. */
int sr_check_py_int(SrInterp *I, const SrVal *v);

/* x[key] by a gather (indexing._gather, numpy_index.c): the keys numpy.c's
   static and dynamic slices do not take (index arrays, lists, a strided
   dynamic slice).  A new reference, or NULL with an exception raised. */
SrVal *sr_jnp_index_gather(SrInterp *I, SrVal *x, SrVal *key);
/* NDIndexer.validate_slices for the slice at `position` of an index:
   an IndexError (with the tracer's origin) when its start, stop or step
   is traced; 0 when all are static. */
int sr_jnp_validate_slice(SrInterp *I, SrVal *slice, int position);
/* NDIndexer.validate_static_indices for one static int index i of an axis
   (jax_check_static_indices): JAX's IndexError when out of bounds. */
/* A jax.ds Slice's start (borrowed), static size (-1 if traced) and
   stride; 0 when v is no Slice. */
int sr_jnp_dslice_parts(SrVal *v, SrVal **start, int64_t *size, int64_t *stride);
int sr_jnp_check_static_index(SrInterp *I, int64_t i, int axis, int64_t size, int normalize);

/* jnp.repeat with an array of repeats or a total_repeat_length, on a
   (raveled when axis is None) array x (numpy_repeat.c). */
SrVal *sr_jnp_repeat_general(SrInterp *I, SrVal *x, SrVal *repeats, int64_t axis, SrVal *total_repeat_length);

/* jnp.where(condition) with neither x nor y: nonzero(condition, size=,
   fill_value=) (numpy_build.c). */
SrVal *sr_jnp_where_nonzero(SrInterp *I, SrVal *cond, SrVal *size, SrVal *fill_value);

#endif
