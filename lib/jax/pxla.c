/* pxla.c: what jax/_src/interpreters/pxla.py decides about a jit's
 * results that the evaluator does not: maybe_recover_user_shardings. */
#include "jax/api.h"

#include <stdlib.h>

#include "core/trace.h"
#include "exec/array.h"
#include "jax/builtins_exec.h"
#include "jax/layout.h"
#include "util/intern.h"

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

/* The buffer that owns b's memory (a view's base). */
static const SrBuffer *owner(const SrBuffer *b) { return b && b->base ? b->base : b; }

static int seen(const SrBuffer **set, int n, const SrBuffer *b) {
  for (int i = 0; i < n; i++)
    if (set[i] == b) return 1;
  return 0;
}

void sr_jit_fresh_outputs(SrVal **args, int nargs, SrVal *outs) {
  if (!outs || !sr_is_seq(outs)) return;
  int cap = 64, n = 0;
  const SrBuffer **set = sr_xcalloc((size_t)cap, sizeof *set);
#define ADD_BUFFERS(arr)                                                                 \
  for (int d = 0; d < (arr)->ndev; d++) {                                                \
    const SrBuffer *ob = owner((arr)->shard[d]);                                         \
    if (!ob || seen(set, n, ob)) continue;                                               \
    if (n == cap) set = sr_xrealloc(set, (size_t)(cap *= 2) * sizeof *set);              \
    set[n++] = ob;                                                                       \
  }
  for (int i = 0; i < nargs; i++) {
    SrArrayObj *a = sr_array_of(args[i]);
    if (a && a->kind == SR_AV_CONCRETE && a->data) ADD_BUFFERS(a->data)
  }
  for (int i = 0; i < outs->seq.n; i++) {
    SrArrayObj *o = sr_array_of(outs->seq.items[i]);
    if (!o || o->kind != SR_AV_CONCRETE || !o->data) continue;
    SrArray *a = o->data;
    int shared = 0;
    for (int d = 0; d < a->ndev && !shared; d++) shared = a->shard[d] && seen(set, n, owner(a->shard[d]));
    if (shared) {
      /* a copy, its shards sharing buffers as a's do */
      SrArray *c = sr_array_retype(a, a->type, a->layout);
      c->sharding = a->sharding ? sr_ref(a->sharding) : NULL;
      for (int d = 0; d < c->ndev; d++) {
        if (!a->shard[d]) continue;
        int same = -1;
        for (int e = 0; e < d && same < 0; e++)
          if (a->shard[e] == a->shard[d]) same = e;
        sr_buffer_unref(c->shard[d]);
        c->shard[d] = same >= 0 ? sr_buffer_ref(c->shard[same]) : sr_buffer_copy(a->shard[d]);
      }
      SrVal *w = sr_concrete_wrap(c);
      sr_unref(outs->seq.items[i]);
      outs->seq.items[i] = w;
      a = c;
    }
    ADD_BUFFERS(a)
  }
#undef ADD_BUFFERS
  free(set);
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

/* pxla._maybe_get_and_check_out_shardings: a result that out_shardings
   gives a sharding has that sharding as the user wrote it (P('x') on a
   matrix stays P('x',); P(unreduced={'x'}) stays unpadded), over the
   placement the evaluator made. */
int sr_jit_keep_out_shardings(SrInterp *I, SrVal *out_sh, SrVal *out_tree, SrVal *outs) {
  if (!outs || !sr_is_seq(outs)) return 0;
  SrJitFlat fo = {0};
  if (sr_jit_flat_entries(I, out_sh, 0, NULL, out_tree, "out_shardings", &fo) < 0) {
    sr_jit_flat_free(&fo);
    return -1;
  }
  for (int i = 0; i < fo.n && i < outs->seq.n; i++) {
    SrVal *sh = fo.e[i].sh;
    SrArrayObj *o = sr_array_of(outs->seq.items[i]);
    if (!sh || sh->kind != SR_V_SHARDING || !o || o->kind != SR_AV_CONCRETE || o->data->mesh != sh->sh.mesh) continue;
    SrArray *c = sr_array_retype(o->data, o->data->type, o->data->layout);
    sr_unref(c->sharding);
    c->sharding = sh->sh.memory_kind ? sr_ref(sh)
                                     : sr_sharding_val(NULL, sh->sh.mesh, sh->sh.spec, sr_intern_cstr("device"));
    c->committed = 1;
    sr_unref(outs->seq.items[i]);
    outs->seq.items[i] = sr_concrete_wrap(c);
  }
  sr_jit_flat_free(&fo);
  return 0;
}
