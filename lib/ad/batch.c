/* batch.c: the batching engine (batch.h), JAX's batching.py: a walk over
 * a jaxpr with a batch dim per value, the family files' rules for the
 * equations that read a mapped value, and the helpers those rules share.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ad/batch.h"
#include "core/core.h"
#include "core/jaxstate.h"
#include "util/intern.h"
#include "util/mem.h"

SrVal *(*sr_batch_take)(SrInterp *I, SrVal *x, const int64_t *idx, int n, int axis);

void sr_batch_begin(SrBatch *b, SrInterp *I, int64_t size, const char *axis_name) {
  memset(b, 0, sizeof *b);
  sr_ad_begin(&b->ad, I, SR_AD_JVP);
  b->size = size;
  b->axis_name = axis_name;
}

void sr_batch_end(SrBatch *b) { sr_ad_end(&b->ad); }

int sr_batch_no_rule(SrBatch *b, const SrPrim *p) {
  sr_raise(b->ad.I, "NotImplementedError", "Batching rule for '%s' not implemented", p->name);
  return -1;
}

/* ---- types ---- */

const SrType *sr_batch_unmapped_type(const SrType *t, int bd) {
  if (bd == SR_NOT_MAPPED || !t || bd >= t->ndim) return t;
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  memmove(&tb.dims[bd], &tb.dims[bd + 1], (size_t)(tb.ndim - bd - 1) * sizeof tb.dims[0]);
  tb.ndim--;
  return sr_type_get(&tb);
}

const SrType *sr_batch_mapped_type(const SrBatch *b, const SrType *t, int bd) {
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  if (bd < 0 || bd > tb.ndim || tb.ndim >= SR_MAX_RANK) return t;
  memmove(&tb.dims[bd + 1], &tb.dims[bd], (size_t)(tb.ndim - bd) * sizeof tb.dims[0]);
  tb.ndim++;
  SrDim *d = &tb.dims[bd];
  memset(d, 0, sizeof *d);
  d->size = b->size;
  if (b->nspmd) {
    const SrMesh *m = tb.mesh ? tb.mesh : sr_ad_ctx_mesh((SrAd *)&b->ad);
    for (int k = 0; m && k < b->nspmd; k++)
      for (int a = 0; a < m->n; a++)
        if (m->names[a] == b->spmd[k]) d->ax[d->nax++] = (uint8_t)a;
    if (d->nax && !tb.mesh) tb.mesh = m;
  }
  return sr_type_get(&tb);
}

/* A mapped argument's type of a jaxpr batched: varying over b->arg_vary
   too. */
static const SrType *arg_type(const SrBatch *b, const SrType *t, int bd) {
  const SrType *m = sr_batch_mapped_type(b, t, bd);
  if (!b->arg_vary || !m->mesh) return m;
  SrTypeBuilder tb;
  sr_type_builder(&tb, m);
  tb.varying |= b->arg_vary;
  return sr_type_get(&tb);
}

/* ---- moving batch dims ---- */

SrVal *sr_batch_moveaxis(SrBatch *b, SrVal *x, int from, int to) {
  if (!x || from == to) return x;
  const SrType *t = sr_ad_type(&b->ad, x);
  int n = t->ndim;
  int64_t perm[SR_MAX_RANK];
  for (int i = 0, k = 0; i < n; i++) {
    if (i == to) {
      perm[i] = from;
      continue;
    }
    if (k == from) k++;
    perm[i] = k++;
  }
  return sr_ad_transpose_dims(&b->ad, x, perm, n);
}

/* An unmapped x broadcast to a new axis of the given size at `to`. */
static SrVal *broadcast_at(SrBatch *b, SrVal *x, int to, int64_t size) {
  const SrType *t = sr_ad_type(&b->ad, x);
  if (!t) return NULL;
  SrBatch sized = *b;
  sized.size = size;
  if (size != b->size) sized.nspmd = 0;
  const SrType *bt = sr_batch_mapped_type(&sized, t, to);
  int64_t dims[SR_MAX_RANK];
  for (int i = 0, k = 0; i < bt->ndim; i++)
    if (i != to) dims[k++] = i;
  const SrMesh *m = sr_ad_ctx_mesh(&b->ad);
  /* what is broadcast to the batch varies over the spmd axes */
  return sr_batch_spmd_pvary(b, sr_ad_broadcast_in_dim(&b->ad, x, bt, dims, t->ndim, m->n > 0));
}

SrVal *sr_batch_spmd_pvary(SrBatch *b, SrVal *x) {
  SrInterp *I = b->ad.I;
  if (!x || !b->arg_vary || !I->jax->check_vma || I->jax->no_auto_pcast) return x;
  const SrMesh *m = sr_ad_ctx_mesh(&b->ad);
  const SrType *t = sr_ad_type(&b->ad, x);
  SrAxes need = b->arg_vary & ~(t ? sr_op_axes_on(t, t->varying, m) : 0);
  return need ? sr_ad_pvary_to(&b->ad, x, need, m) : x;
}

SrVal *sr_batch_matchaxis(SrBatch *b, SrVal *x, int bd, int to) {
  if (!x) return NULL;
  if (bd == SR_NOT_MAPPED) return broadcast_at(b, x, to, b->size);
  return sr_batch_moveaxis(b, x, bd, to);
}

SrVal *sr_batch_at_front(SrBatch *b, SrVal *x, int bd, int64_t size) {
  if (!x) return NULL;
  if (bd == SR_NOT_MAPPED) return broadcast_at(b, x, 0, size);
  return sr_batch_moveaxis(b, x, bd, 0);
}

/* ---- binding ---- */

int sr_batch_bind_same(SrBatch *b, const SrEqn *e, SrVal **x, int bd, SrVal **y, int *ybd) {
  SrInterp *I = b->ad.I;
  for (uint32_t i = 0; i < e->nin; i++)
    if (!x[i]) return -1;
  SrVal *r = sr_ad_keep(&b->ad, sr_bind_prim(I, e->prim, (int)e->nin, x, (int)e->nparams, e->params, NULL,
                                             e->nout));
  if (!r) return -1;
  if (e->prim->flags & SR_PF_MULTI) {
    for (uint32_t i = 0; i < e->nout; i++) {
      y[i] = r->seq.items[i];
      ybd[i] = bd;
    }
  } else {
    y[0] = r;
    ybd[0] = bd;
  }
  return 0;
}

SrVal *sr_batch_broadcast_as(SrBatch *b, SrVal *x, int to, const SrType *src, int bd) {
  const SrType *t = sr_ad_type(&b->ad, x);
  if (!t) return NULL;
  if (!src || !src->mesh || bd < 0 || bd >= src->ndim || !src->dims[bd].nax || t->ndim >= SR_MAX_RANK ||
      (t->mesh && t->mesh != src->mesh))
    return sr_batch_matchaxis(b, x, SR_NOT_MAPPED, to);
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  memmove(&tb.dims[to + 1], &tb.dims[to], (size_t)(tb.ndim - to) * sizeof tb.dims[0]);
  tb.ndim++;
  tb.dims[to] = src->dims[bd];
  tb.dims[to].size = b->size;
  tb.dims[to].sym = NULL;
  tb.mesh = src->mesh;
  const SrType *bt = sr_type_get(&tb);
  int64_t dims[SR_MAX_RANK];
  for (int i = 0, k = 0; i < bt->ndim; i++)
    if (i != to) dims[k++] = i;
  return sr_ad_broadcast_in_dim(&b->ad, x, bt, dims, t->ndim, 1);
}

SrVal *sr_batch_bind_with(SrBatch *b, const SrEqn *e, int nin, SrVal **x, ...) {
  SrPList ps = {0};
  for (uint32_t i = 0; i < e->nparams; i++) sr_plist_add(&ps, e->params[i].key, sr_ref(e->params[i].val));
  va_list ap;
  va_start(ap, x);
  for (;;) {
    const char *k = va_arg(ap, const char *);
    if (!k) break;
    SrVal *v = va_arg(ap, SrVal *);
    k = sr_intern_cstr(k);
    int i = 0;
    while (i < ps.n && ps.p[i].key != k) i++;
    if (i == ps.n) {
      sr_plist_add(&ps, k, v);
    } else {
      sr_unref(ps.p[i].val);
      ps.p[i].val = v;
    }
  }
  va_end(ap);
  SrVal *r = NULL;
  int ok = 1;
  for (int i = 0; i < nin; i++) ok &= x[i] != NULL;
  if (ok) r = sr_ad_keep(&b->ad, sr_bind_prim(b->ad.I, e->prim, nin, x, ps.n, ps.p, NULL, e->nout));
  sr_plist_free(&ps);
  return r;
}

SrVal *sr_batch_sharding_for_vmap(SrVal *orig, int axis, const SrType *src, int bd) {
  const SrSpec *s = !orig ? NULL : orig->kind == SR_V_SHARDING ? orig->sh.spec
                                 : orig->kind == SR_V_SPEC ? orig->spec : NULL;
  if (!s || axis < 0) return sr_none();
  int n = (s->n > axis ? s->n : axis) + 1;
  SrSpecEntry *ent = sr_xcalloc((size_t)n, sizeof *ent);
  const char *names[SR_MAX_DIM_AXES];
  SrSpecEntry mapped = {0, names};
  if (src && src->mesh && bd >= 0 && bd < src->ndim)
    for (int k = 0; k < src->dims[bd].nax && k < SR_MAX_DIM_AXES; k++)
      names[mapped.n++] = src->mesh->names[src->dims[bd].ax[k]];
  for (int i = 0, k = 0; i < n; i++) {
    if (i == axis) ent[i] = mapped;
    else if (k < s->n) ent[i] = s->e[k++];
    else k++;
  }
  SrSpec spec = *s;
  spec.n = n;
  spec.e = ent;
  SrVal *r = orig->kind == SR_V_SHARDING ? sr_sharding_val(NULL, orig->sh.mesh, &spec, orig->sh.memory_kind)
                                         : sr_spec_val(NULL, &spec);
  free(ent);
  return r;
}

/* ---- generic rules ---- */

int sr_batch_unary(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  return sr_batch_bind_same(b, e, x, bd[0], y, ybd);
}

int sr_batch_broadcast(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  /* in a shard_map body batched under spmd_axis_name the batched operands
     vary over its axes and the others not: pvary them as the body's own
     jnp operations do when JAX traces it batched (standard_insert_pvary) */
  SrVal *pv[16];
  if (b->arg_vary && e->nin <= 16) {
    for (uint32_t i = 0; i < e->nin; i++) pv[i] = sr_ref(x[i]);
    if (sr_op_auto_insert(SR_AD_BINDER(&b->ad), (int)e->nin, pv) < 0) {
      for (uint32_t i = 0; i < e->nin; i++) sr_unref(pv[i]);
      return -1;
    }
    for (uint32_t i = 0; i < e->nin; i++) pv[i] = sr_ad_keep(&b->ad, pv[i]);
    x = pv;
  }
  int dim = SR_NOT_MAPPED, nd = 0;
  const SrType *shape = NULL;
  for (uint32_t i = 0; i < e->nin; i++)
    if (bd[i] != SR_NOT_MAPPED) {
      dim = bd[i];
      shape = sr_ad_type(&b->ad, x[i]);
      break;
    }
  if (!shape) return -1;
  int agree = 1;
  for (uint32_t i = 0; i < e->nin && agree; i++) {
    const SrType *t = sr_ad_type(&b->ad, x[i]);
    if (!t) return -1;
    if (t->ndim > nd) nd = t->ndim;
    if (!t->ndim) continue;
    if (bd[i] != dim || t->ndim != shape->ndim) agree = 0;
    for (int d = 0; agree && d < t->ndim; d++) agree = t->dims[d].size == shape->dims[d].size;
  }
  if (agree) return sr_batch_bind_same(b, e, x, dim, y, ybd);
  /* every non-scalar operand with its batch axis in front (size 1 for an
     unmapped one, which the primitive's own broadcasting widens), and
     scalars batched along with them get leading 1s to the common rank */
  SrVal *small[16], **a = e->nin <= 16 ? small : sr_xcalloc(e->nin, sizeof *a);
  nd = 0;
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *t = sr_ad_type(&b->ad, x[i]);
    a[i] = t->ndim || bd[i] != SR_NOT_MAPPED ? sr_batch_at_front(b, x[i], bd[i], 1) : x[i];
    const SrType *at = sr_ad_type(&b->ad, a[i]);
    if (at && at->ndim > nd) nd = at->ndim;
  }
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *at = sr_ad_type(&b->ad, a[i]);
    if (!at || bd[i] == SR_NOT_MAPPED || at->ndim == nd) continue;
    /* _handle_scalar_broadcasting: a mapped scalar becomes [n,1,...,1] */
    int64_t dims[SR_MAX_RANK];
    int k = at->ndim;
    for (int d = 0; d < nd - k; d++) dims[d] = k + d;
    a[i] = sr_ad_expand_dims(&b->ad, a[i], dims, nd - k);
  }
  int rc = sr_batch_bind_same(b, e, a, 0, y, ybd);
  if (a != small) free(a);
  return rc;
}

/* ---- the walk ---- */

static void keep_prog(SrTrace *t, const SrJaxpr *j) {
  if (t && t->prog != j->prog) sr_program_dep(t->prog, j->prog);
}

/* Does the equation go to its rule with no mapped input?  A collective
   over vmap's own axis_name does (psum of an unmapped value over the batch
   is the value times its size), and so does a call, cond, scan or
   custom_jvp_call whose body holds one: JAX's BatchTrace processes the
   body whatever its operands. */
static int names_axis(const SrBatch *b, const SrEqn *e) {
  return b->axis_name &&
         ((e->prim->flags & SR_PF_COLL) || sr_prim_holds_collective(e->prim, e->params, e->nparams));
}

int sr_batch_eval(SrBatch *b, const SrJaxpr *j, SrVal **in, const int *in_bd, SrVal **out, int *out_bd) {
  SrInterp *I = b->ad.I;
  SrAd *ad = &b->ad;
  keep_prog(I->trace, j);
  uint32_t nv = j->nvars + 1;
  SrVal **pv = sr_xcalloc(nv, sizeof *pv);
  int *vb = sr_xmalloc(nv * sizeof *vb);
  for (uint32_t i = 0; i < nv; i++) vb[i] = SR_NOT_MAPPED;
  int rc = -1;
  for (uint32_t i = 0; i < j->nconst; i++) {
    SrVar *v = j->invars[i];
    pv[v->id] = j->consts && j->consts[i] ? sr_ref(j->consts[i]) : sr_array_abstract(v->type);
  }
  for (uint32_t i = 0; i < sr_nargs(j); i++) {
    SrVar *v = sr_args(j)[i];
    pv[v->id] = sr_ref(in[i]);
    vb[v->id] = in_bd[i];
  }
  int32_t *last = sr_jaxpr_last_use(j, NULL);
  SrVal *xs_small[32], *ys_small[32];
  int bs_small[32], ybs_small[32];
  /* each equation's rule binds in the equation's context */
  SrEqnCtx c0 = sr_eqn_ctx_save(I);
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    sr_eqn_ctx_enter(I, &c0, c0.ns, e);
    if (sr_interrupt_point(I)) {
      sr_raise(I, "KeyboardInterrupt", "interrupted");
      goto done;
    }
    int big = e->nin > 32 || e->nout > 32;
    SrVal **x = big ? sr_xcalloc(e->nin + 1, sizeof *x) : xs_small;
    SrVal **y = big ? sr_xcalloc(e->nout + 1, sizeof *y) : ys_small;
    int *bd = big ? sr_xcalloc(e->nin + 1, sizeof *bd) : bs_small;
    int *ybd = big ? sr_xcalloc(e->nout + 1, sizeof *ybd) : ybs_small;
    int mark = sr_ad_mark(ad), ok = 1, mapped = 0;
    for (uint32_t i = 0; i < e->nin; i++) {
      SrVar *a = e->in[i];
      if (a->kind == SR_LIT) {
        x[i] = sr_ad_literal(ad, a);
        bd[i] = SR_NOT_MAPPED;
      } else {
        x[i] = pv[a->id];
        bd[i] = vb[a->id];
      }
      mapped |= bd[i] != SR_NOT_MAPPED;
    }
    /* a new Ref is batched defensively, whatever its operand (its rule
       is one of batching.fancy_primitive_batchers): a batched value may
       be written into it later */
    for (uint32_t i = 0; i < e->nout; i++) mapped |= e->out[i]->type && e->out[i]->type->ref;
    for (uint32_t i = 0; i < e->nout; i++) {
      y[i] = NULL;
      ybd[i] = SR_NOT_MAPPED;
    }
    if (!mapped && !names_axis(b, e)) {
      SrVal *r = sr_ad_bind_eqn(ad, e, x);
      if (!r) ok = 0;
      else
        for (uint32_t i = 0; i < e->nout; i++) y[i] = r->seq.items[i];
    } else if (!e->prim->batch) {
      sr_batch_no_rule(b, e->prim);
      ok = 0;
    } else if (e->prim->batch(b, e, x, bd, y, ybd) < 0) {
      if (!I->exc) sr_raise(I, "RuntimeError", "the batching rule of %s failed", e->prim->name);
      ok = 0;
    } else {
      for (uint32_t i = 0; i < e->nout && ok; i++)
        if (!y[i]) {
          sr_raise(I, "RuntimeError", "the batching rule of %s gave no output", e->prim->name);
          ok = 0;
        }
    }
    if (ok)
      for (uint32_t i = 0; i < e->nout; i++) {
        SrVar *o = e->out[i];
        if (o->kind == SR_DROP) continue;
        pv[o->id] = sr_ref(y[i]);
        vb[o->id] = ybd[i];
      }
    sr_ad_release(ad, mark);
    if (big) {
      free(x);
      free(y);
      free(bd);
      free(ybd);
    }
    if (!ok) goto done;
    for (uint32_t i = 0; i < e->nin; i++) {
      SrVar *a = e->in[i];
      if (!sr_dies_at(last, a, k)) continue;
      sr_unref(pv[a->id]);
      pv[a->id] = NULL;
    }
  }
  sr_eqn_ctx_restore(I, &c0);
  for (uint32_t i = 0; i < j->nout; i++) {
    SrVar *o = j->outvars[i];
    if (o->kind == SR_LIT) {
      int mark = sr_ad_mark(ad);
      out[i] = sr_ref(sr_ad_literal(ad, o));
      sr_ad_release(ad, mark);
      out_bd[i] = SR_NOT_MAPPED;
    } else {
      out[i] = sr_ref(pv[o->id]);
      out_bd[i] = vb[o->id];
    }
    if (!out[i]) {
      for (uint32_t k = 0; k < i; k++) sr_unref(out[k]);
      if (!I->exc) sr_raise(I, "RuntimeError", "internal error: a jaxpr output has no value");
      goto done;
    }
  }
  rc = 0;
done:
  sr_eqn_ctx_restore(I, &c0);
  for (uint32_t i = 0; i < nv; i++) sr_unref(pv[i]);
  free(pv);
  free(vb);
  free(last);
  return rc;
}

SrJaxpr *sr_batch_jaxpr(SrBatch *b, const SrJaxpr *j, const uint8_t *in_batched, const uint8_t *inst,
                        uint8_t *out_batched) {
  SrInterp *I = b->ad.I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(j), nout = j->nout;
  const SrType **types = sr_xcalloc(n + 1, sizeof *types);
  int *bd = sr_xcalloc(n + 1, sizeof *bd), *obd = sr_xcalloc(nout + 1, sizeof *obd);
  for (uint32_t i = 0; i < n; i++) {
    const SrType *t = sr_args(j)[i]->type;
    bd[i] = in_batched[i] ? 0 : SR_NOT_MAPPED;
    types[i] = in_batched[i] ? arg_type(b, t, 0) : t;
  }
  SrVal **args = sr_xcalloc(n + 1, sizeof *args), **outs = sr_xcalloc(nout + 1, sizeof *outs);
  SrTrace *t = sr_ad_trace_begin(&b->ad, (int)n, types, args);
  SrJaxpr *r = NULL;
  int rc = sr_batch_eval(b, j, args, bd, outs, obd);
  if (rc == 0) {
    int mark = sr_ad_mark(&b->ad);
    for (uint32_t i = 0; i < nout && rc == 0; i++) {
      int want = obd[i] != SR_NOT_MAPPED || (inst && inst[i]);
      out_batched[i] = (uint8_t)want;
      if (!want) continue;
      SrVal *m = sr_ref(sr_batch_matchaxis(b, outs[i], obd[i], 0));
      sr_unref(outs[i]);
      outs[i] = m;
      if (!m) rc = -1;
    }
    sr_ad_release(&b->ad, mark);
  }
  if (rc == 0) r = sr_ad_trace_end(&b->ad, t, (int)nout, outs, NULL);
  /* batching.batch_jaxpr keeps the debug info */
  if (r) r->dbg = sr_debug_info_copy(r->prog->arena, j->dbg, 0);
  else sr_trace_abort(I, t);
  I->trace = saved;
  for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
  for (uint32_t i = 0; i < nout; i++) sr_unref(outs[i]);
  free(args);
  free(outs);
  free(types);
  free(bd);
  free(obd);
  return r;
}

SrJaxpr *sr_batch_jaxpr_axes(SrBatch *b, const SrJaxpr *j, const int *in_axes, const int *out_dest, int *out_axes) {
  SrInterp *I = b->ad.I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(j), nout = j->nout;
  const SrType **types = sr_xcalloc(n + 1, sizeof *types);
  int *obd = sr_xcalloc(nout + 1, sizeof *obd);
  for (uint32_t i = 0; i < n; i++) {
    const SrType *t = sr_args(j)[i]->type;
    types[i] = in_axes[i] != SR_NOT_MAPPED ? arg_type(b, t, in_axes[i]) : t;
  }
  SrVal **args = sr_xcalloc(n + 1, sizeof *args), **outs = sr_xcalloc(nout + 1, sizeof *outs);
  SrTrace *t = sr_ad_trace_begin(&b->ad, (int)n, types, args);
  SrJaxpr *r = NULL;
  int rc = sr_batch_eval(b, j, args, in_axes, outs, obd);
  if (rc == 0) {
    int mark = sr_ad_mark(&b->ad);
    for (uint32_t i = 0; i < nout && rc == 0; i++) {
      int to = out_dest ? out_dest[i] : obd[i];
      if (to == SR_BATCH_ZERO_IF_MAPPED) to = obd[i] == SR_NOT_MAPPED ? SR_NOT_MAPPED : 0;
      out_axes[i] = to;
      if (to == obd[i]) continue;
      if (to == SR_NOT_MAPPED) {
        sr_raise(I, "ValueError", "vmap has mapped output but out_axes is None");
        rc = -1;
        break;
      }
      SrVal *m = sr_ref(sr_batch_matchaxis(b, outs[i], obd[i], to));
      sr_unref(outs[i]);
      outs[i] = m;
      if (!m) rc = -1;
    }
    sr_ad_release(&b->ad, mark);
  }
  if (rc == 0) r = sr_ad_trace_end(&b->ad, t, (int)nout, outs, NULL);
  /* batching.batch_jaxpr keeps the debug info */
  if (r) r->dbg = sr_debug_info_copy(r->prog->arena, j->dbg, 0);
  else sr_trace_abort(I, t);
  I->trace = saved;
  for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
  for (uint32_t i = 0; i < nout; i++) sr_unref(outs[i]);
  free(args);
  free(outs);
  free(types);
  free(obd);
  return r;
}
