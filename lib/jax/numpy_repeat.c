/* numpy_repeat.c: jnp.repeat with an array of repeats or a
 * total_repeat_length (lax_numpy.py's _repeat past its scalar fast path):
 * the repeats raveled and broadcast to a.shape[axis], then
 *
 *     exclusive_repeats = roll(repeats, shift=1).at[0].set(0)
 *     scatter_indices = cumsum(exclusive_repeats)
 *     block_split_indicators = zeros([total_repeat_length], 'int32')
 *                              .at[scatter_indices].add(1)
 *     gather_indices = cumsum(block_split_indicators) - 1
 *     take(a, gather_indices, axis=axis)
 *
 * with total_repeat_length the sum of the (then concrete) repeats when
 * not given.  numpy_shape.c's jnp.repeat calls it for those cases.
 */
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/builtins_exec.h"
#include "jax/jax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "jax/tracers.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, (v))

/* x.at[idx].name(v) */
static SrVal *at_call(SrNnScope *s, SrVal *x, SrVal *idx, const char *name, SrVal *v) {
  if (!x || !idx || !v) return NULL;
  SrVal *at = KEEP(sr_getattr(s->I, x, "at"));
  SrVal *ref = at ? KEEP(sr_getitem(s->I, at, idx)) : NULL;
  SrVal *m = ref ? KEEP(sr_getattr(s->I, ref, name)) : NULL;
  SrArgs a = {1, &v, 0, NULL, NULL, NULL};
  return m ? KEEP(sr_call(s->I, m, &a)) : NULL;
}

/* the sum of concrete repeats (np.ravel, np.broadcast_to [n], np.sum) */
static int repeat_total(SrInterp *I, SrVal *repeats, int64_t n, int64_t *total) {
  *total = 0;
  if (repeats->kind == SR_V_INT || repeats->kind == SR_V_BOOL) return *total = repeats->i * n, 0;
  if (sr_is_seq(repeats)) {
    for (int i = 0; i < repeats->seq.n; i++) {
      int64_t v;
      if (sr_as_int(I, repeats->seq.items[i], "repeats", &v) < 0) return -1;
      *total += v;
    }
    if (repeats->seq.n == 1) *total *= n;
    return 0;
  }
  SrArray *a = sr_concrete_of(I, repeats, NULL);
  if (!a) {
    if (!I->exc) {
      sr_raise_concretization(I, repeats,
                              "When jit-compiling jnp.repeat, the total number of repeats must be static. To fix "
                              "this, either specify a static value for `repeats`, or pass a static value to "
                              "`total_repeat_length`.");
    }
    return -1;
  }
  int64_t m = sr_type_numel(a->type);
  SrDtype dt = a->type->dtype;
  void *h = sr_concrete_host_data(I, a);
  sr_array_unref(a);
  if (!h) return -1;
  for (int64_t i = 0; i < m; i++) {
    switch (dt) {
    case SR_I32: *total += ((int32_t *)h)[i]; break;
    case SR_I64: *total += ((int64_t *)h)[i]; break;
    case SR_U32: *total += ((uint32_t *)h)[i]; break;
    case SR_I16: *total += ((int16_t *)h)[i]; break;
    case SR_I8: *total += ((int8_t *)h)[i]; break;
    case SR_U8: case SR_BOOL: *total += ((uint8_t *)h)[i]; break;
    case SR_U16: *total += ((uint16_t *)h)[i]; break;
    default:
      free(h);
      return sr_raise(I, "TypeError", "repeats must be an integer array"), -1;
    }
  }
  free(h);
  if (m == 1) *total *= n;
  return 0;
}

SrVal *sr_jnp_repeat_general(SrInterp *I, SrVal *x, SrVal *repeats, int64_t axis, SrVal *total_v) {
  SCOPE(I);
  const SrType *t = sr_value_type(I, x);
  if (!t) return sr_nn_done(s, NULL);
  if (t->ndim && sr_api_axis(I, axis, t->ndim, &axis) < 0) return sr_nn_done(s, NULL);
  SrVal *r = sr_nn_call1(s, "jax.numpy.ravel", KEEP(sr_jnp_asarray(I, repeats, -1)));
  if (r && t->ndim) {
    int64_t n = t->dims[axis].size;
    r = sr_nn_call2(s, "jax.numpy.broadcast_to", r, KEEP(sr_int_tuple(&n, 1)));
  }
  if (!r) return sr_nn_done(s, NULL);
  int64_t total;
  if (sr_nn_given(total_v)) {
    if (sr_as_int(I, total_v, "total_repeat_length", &total) < 0) return sr_nn_done(s, NULL);
  } else {
    /* int(np.sum(repeats)) on the host: the repeats must be concrete */
    if (repeat_total(I, repeats, t->ndim ? t->dims[axis].size : 1, &total) < 0) return sr_nn_done(s, NULL);
  }
  const SrType *rt = sr_value_type(I, r);
  if (!t->ndim) {
    if (rt->ndim == 1 && rt->dims[0].size == 1) {
      SrVal *v[2] = {KEEP(sr_int_tuple(&total, 1)), x};
      return sr_nn_done(s, sr_nn_call(s, "jax.numpy.full", 2, v, 0, NULL, NULL));
    }
    return sr_nn_done(s, sr_raise(I, "ValueError",
                                  "`repeat` with a scalar parameter `a` is only implemented for scalar values of the "
                                  "parameter `repeats`."));
  }
  if (total == 0) {
    int64_t shape[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) shape[i] = i == axis ? 0 : t->dims[i].size;
    SrVal *empty = KEEP(sr_seq(NULL, SR_V_LIST, 0));
    SrVal *v[1] = {empty};
    const char *kw[1] = {"dtype"};
    SrVal *kwv[1] = {KEEP(sr_dtype_val(NULL, t->dtype))};
    SrVal *e = sr_nn_call(s, "jax.numpy.array", 1, v, 1, kw, kwv);
    return sr_nn_done(s, sr_nn_call2(s, "jax.numpy.reshape", e, KEEP(sr_int_tuple(shape, t->ndim))));
  }
  if (t->dims[axis].size == 0) return sr_nn_done(s, x);
  SrVal *rv[1] = {r};
  const char *kw[1] = {"shift"};
  SrVal *kwv[1] = {sr_nn_int(s, 1)};
  SrVal *rolled = sr_nn_call(s, "jax.numpy.roll", 1, rv, 1, kw, kwv);
  SrVal *excl = at_call(s, rolled, sr_nn_int(s, 0), "set", sr_nn_int(s, 0));
  SrVal *scat = sr_nn_call1(s, "jax.numpy.cumsum", excl);
  SrVal *zv[2] = {KEEP(sr_int_tuple(&total, 1)), KEEP(sr_dtype_val(NULL, SR_I32))};
  SrVal *zeros = scat ? sr_nn_call(s, "jax.numpy.zeros", 2, zv, 0, NULL, NULL) : NULL;
  SrVal *bsi = at_call(s, zeros, scat, "add", sr_nn_int(s, 1));
  SrVal *gi = sr_nn_op(s, SR_OP_SUB, sr_nn_call1(s, "jax.numpy.cumsum", bsi), sr_nn_int(s, 1));
  SrVal *tv[2] = {x, gi};
  const char *tk[1] = {"axis"};
  SrVal *tkv[1] = {sr_nn_int(s, axis)};
  return sr_nn_done(s, gi ? sr_nn_call(s, "jax.numpy.take", 2, tv, 1, tk, tkv) : NULL);
}
