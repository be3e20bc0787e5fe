/* vmap_hooks.c: what the batching rules of lib/lax/ call in the jax layer
 * above them (ad/batch.h's hooks), filled at start-up by sr_vmap_init. */
#include "config.h"

#include <stdlib.h>

#include "ad/batch.h"
#include "jax/jax.h"
#include "py/objects.h"
#include "util/intern.h"

/* x.take(np.array(idx), axis) -- JAX's `v.take(perm_indices, d)` in
   parallel.py's _ppermute_batcher: jnp.take of a numpy index array (a
   constvar of the jaxpr being traced), bound into the current trace. */
static SrVal *vmap_take(SrInterp *I, SrVal *x, const int64_t *idx, int n, int axis) {
  SrVal *np_array = sr_lookup_qualname("numpy.array"), *take = sr_lookup_qualname("jax.numpy.take");
  if (!np_array || !take) return sr_raise(I, "RuntimeError", "internal error: no numpy.array or jax.numpy.take");
  SrVal *l = sr_seq(NULL, SR_V_LIST, n);
  for (int k = 0; k < n; k++) sr_seq_push(NULL, l, sr_int(NULL, idx[k]));
  SrArgs la = {1, &l, 0, NULL, NULL, NULL};
  SrVal *ix = sr_call(I, np_array, &la);
  sr_unref(l);
  if (!ix) return NULL;
  SrVal *args[2] = {x, ix}, *ax = sr_int(NULL, axis);
  const char *kw[1] = {sr_intern_cstr("axis")};
  SrArgs ta = {2, args, 1, kw, &ax, NULL};
  SrVal *r = sr_call(I, take, &ta);
  sr_unref(ax);
  sr_unref(ix);
  return r;
}

void sr_vmap_hooks_init(void) { sr_batch_take = vmap_take; }
