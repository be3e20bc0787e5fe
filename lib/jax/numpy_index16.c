/* numpy_index16.c: lax.stack and lax.unstack (lax.py: stack_p,
 * unstack_p) and jnp.unstack (lax_numpy.py: an inline jit of
 * lax.unstack). */
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "util/intern.h"

/* ---- lax.stack, lax.unstack, jnp.unstack ---- */

static SrVal *lax_stack(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "stack", "operands, axis=", p) < 0) return NULL;
  if (!sr_is_seq(p[0])) return sr_raise(I, "TypeError", "stack: operands must be a sequence of arrays");
  int n = p[0]->seq.n;
  if (!n) return sr_raise(I, "IndexError", "list index out of range");
  SrVal **xs = sr_xcalloc((size_t)n + 1, sizeof *xs), *r = NULL;
  int ok = 1;
  for (int i = 0; i < n && ok; i++) ok = (xs[i] = sr_jnp_asarray(I, p[0]->seq.items[i], -1)) != NULL;
  int64_t axis = 0;
  if (ok && (!p[1] || sr_as_int(I, p[1], "axis", &axis) == 0) &&
      sr_api_axis(I, axis, sr_value_type(I, xs[0])->ndim + 1, &axis) == 0 && sr_auto_insert_reshard(I, n, xs) == 0) {
    SrPList ps = {0};
    sr_plist_add(&ps, "axis", sr_int(NULL, axis));
    r = sr_bind_prim(I, sr_prim_lookup("stack", 5), n, xs, ps.n, ps.p, NULL, 0);
    sr_plist_free(&ps);
  }
  for (int i = 0; i < n; i++) sr_unref(xs[i]);
  free(xs);
  return r;
}

/* unstack_p.bind(x, axis=axis): a tuple of x.shape[axis] arrays. */
static SrVal *unstack(SrInterp *I, SrVal *x0, SrVal *axisv) {
  SrVal *x = sr_jnp_asarray(I, x0, -1), *r = NULL;
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  int64_t axis = 0;
  if (t->ndim == 0) {
    sr_raise(I, "ValueError", "unstack requires arrays with rank > 0, however a scalar array of shape () was passed.");
  } else if ((!axisv || sr_as_int(I, axisv, "axis", &axis) == 0) && sr_api_axis(I, axis, t->ndim, &axis) == 0) {
    int64_t n = t->dims[axis].size;
    if (n == 0) {
      r = sr_seq(NULL, SR_V_TUPLE, 0);
    } else {
      SrPList ps = {0};
      sr_plist_add(&ps, "axis", sr_int(NULL, axis));
      r = sr_bind_prim(I, sr_prim_lookup("unstack", 7), 1, &x, ps.n, ps.p, NULL, (uint32_t)n);
      sr_plist_free(&ps);
      if (r && r->kind == SR_V_LIST) r->kind = SR_V_TUPLE;
    }
  }
  sr_unref(x);
  return r;
}

static SrVal *lax_unstack(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "unstack", "x, axis=", p) < 0) return NULL;
  return unstack(I, p[0], p[1]);
}

static SrVal *jnp_unstack(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "unstack", "x, *, axis=", p) < 0) return NULL;
  /* util.ensure_arraylike */
  if (p[0]->kind == SR_V_LIST || p[0]->kind == SR_V_TUPLE)
    return sr_raise(I, "TypeError", "unstack requires ndarray or scalar arguments, got <class '%s'> at position 0.",
                    sr_val_kind_name(p[0]));
  return unstack(I, p[0], p[1]);
}

void sr_jnp_index16_init(void) {
  sr_def("jax.lax.stack", lax_stack,
         "stack(operands, axis=0): the arrays (of one shape and dtype) joined along a new axis (stack_p)");
  sr_def("jax.lax.unstack", lax_unstack, "unstack(x, axis=0): the tuple of x's slices along axis (unstack_p)");
  sr_def("jax.numpy.unstack", jnp_unstack, "unstack(x, /, *, axis=0): lax.unstack(x, axis)");
}
