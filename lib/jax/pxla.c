/* pxla.c: what jax/_src/interpreters/pxla.py decides about a jit's
 * results that the evaluator does not: maybe_recover_user_shardings. */
#include "jax/api.h"

#include "core/trace.h"
#include "exec/array.h"
#include "jax/layout.h"

/* The same split of every dimension (HloSharding.is_equivalent_to). */
static int same_split(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim || a->unreduced || b->unreduced) return 0;
  for (int i = 0; i < a->ndim; i++) {
    if (a->dims[i].nax != b->dims[i].nax) return 0;
    for (int k = 0; k < a->dims[i].nax; k++)
      if (a->dims[i].ax[k] != b->dims[i].ax[k]) return 0;
  }
  return 1;
}

void sr_jit_recover_user_shardings(SrVal **args, int nargs, SrVal *outs) {
  SrArray *orig = NULL;
  for (int i = 0; i < nargs && !orig; i++) {
    SrArrayObj *a = sr_array_of(args[i]);
    if (a && a->kind == SR_AV_CONCRETE && a->data->mesh && a->data->mesh->n) orig = a->data;
  }
  /* over Explicit axes a result's sharding is its type's; XLA picks the
     others (Auto), and those equivalent to the first argument's are that
     sharding as the argument has it (_get_out_sharding_from_orig_sharding) */
  if (!orig || !sr_mesh_axes_of_type(orig->mesh, SR_AXIS_AUTO) || !outs || !sr_is_seq(outs)) return;
  SrVal *osh = NULL;
  for (int i = 0; i < outs->seq.n; i++) {
    SrArrayObj *o = sr_array_of(outs->seq.items[i]);
    if (!o || o->kind != SR_AV_CONCRETE || o->data == orig || o->data->rc > 1 || o->data->sharding ||
        o->data->mesh != orig->mesh || !same_split(o->data->layout, orig->layout))
      continue;
    if (!osh) osh = sr_concrete_array_sharding(orig);
    o->data->sharding = sr_ref(osh);
  }
  sr_unref(osh);
}
