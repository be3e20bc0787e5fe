/* eval_dot.c: dot_general over sharded operands.
 *
 * A contracting dim split the same way on both sides stays split: each
 * device contracts its blocks, and the partial products are the result
 * unreduced over those axes; redistribute.c then gives the result's layout
 * (all-reduce for a replicated result, reduce-scatter for one split over
 * those axes, nothing for an unreduced out_sharding).  A contracting dim
 * split on one side only, or differently, is gathered on both sides, as
 * the FSDP pattern f32[8,4] . f32[4@X,16] -> f32[8,16] all-gathers the
 * weight.  Batch and free dims take the result's axes. */
#include <string.h>

#include "exec/eval.h"
#include "prims/rule.h"
#include "exec/kern.h"

typedef struct DotArg {
  int nb, nc, lnd, rnd;
  int lb[SR_MAX_RANK], rb[SR_MAX_RANK], lc[SR_MAX_RANK], rc[SR_MAX_RANK];
  SrDtype ldt, rdt, odt;
} DotArg;

static int dot_fn(SrShardIO *io) {
  DotArg *d = io->arg;
  if (sr_kern_dot(d->ldt, d->rdt, d->odt, d->lnd, io->in_shape[0], io->in[0]->data, d->rnd, io->in_shape[1],
                  io->in[1]->data, d->nb, d->lb, d->rb, d->nc, d->lc, d->rc, io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "dot_general of %s and %s into %s", sr_dtype_name(d->ldt),
                     sr_dtype_name(d->rdt), sr_dtype_name(d->odt));
  return 0;
}

static int ints_of(const SrVal *v, int *out, int *n) {
  int64_t tmp[SR_MAX_RANK];
  if (!v || sr_val_ints(v, tmp, SR_MAX_RANK, n) < 0) return -1;
  for (int i = 0; i < *n; i++) out[i] = (int)tmp[i];
  return 0;
}

/* dimension_numbers=(((lc), (rc)), ((lb), (rb))) */
static int dims_param(SrEvalCtx *cx, const SrEvalEqn *e, DotArg *d) {
  SrVal *v = sr_ev_param(e, "dimension_numbers");
  if (!v || !sr_is_seq(v) || v->seq.n != 2 || !sr_is_seq(v->seq.items[0]) || !sr_is_seq(v->seq.items[1]) ||
      v->seq.items[0]->seq.n != 2 || v->seq.items[1]->seq.n != 2)
    return sr_ev_err(cx, "TypeError", "dot_general equation has no valid dimension_numbers");
  int n1, n2, n3, n4;
  if (ints_of(v->seq.items[0]->seq.items[0], d->lc, &n1) < 0 || ints_of(v->seq.items[0]->seq.items[1], d->rc, &n2) < 0 ||
      ints_of(v->seq.items[1]->seq.items[0], d->lb, &n3) < 0 || ints_of(v->seq.items[1]->seq.items[1], d->rb, &n4) < 0 ||
      n1 != n2 || n3 != n4)
    return sr_ev_err(cx, "TypeError", "dot_general equation has no valid dimension_numbers");
  d->nc = n1;
  d->nb = n3;
  return 0;
}

static int same_axes(const SrDim *a, const SrDim *b) {
  if (a->nax != b->nax) return 0;
  for (int k = 0; k < a->nax; k++)
    if (a->ax[k] != b->ax[k]) return 0;
  return 1;
}

static void set_dim(SrTypeBuilder *b, int i, const SrDim *src, SrAxes forbid, const SrMesh *mesh) {
  SrDim *d = &b->dims[i];
  if (!src || (sr_dim_axes(src) & forbid) || !src->nax) {
    d->nax = 0;
    return;
  }
  d->nax = src->nax;
  memcpy(d->ax, src->ax, SR_MAX_DIM_AXES);
  b->mesh = mesh;
}

static int ev_dot_general(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = e->in[0], *y = e->in[1];
  DotArg d;
  memset(&d, 0, sizeof d);
  if (dims_param(cx, e, &d) < 0) return -1;
  d.lnd = x->type->ndim;
  d.rnd = y->type->ndim;
  d.ldt = x->type->dtype;
  d.rdt = y->type->dtype;
  d.odt = t->dtype;
  /* operands on another mesh (meshless ones) count as replicated */
  const SrType *xl = x->mesh == m ? x->layout : NULL, *yl = y->mesh == m ? y->layout : NULL;
  /* contracting pairs split alike stay split */
  SrAxes contract = 0;
  int keep[SR_MAX_RANK] = {0};
  for (int k = 0; k < d.nc; k++) {
    if (!xl || !yl) continue;
    const SrDim *a = &xl->dims[d.lc[k]], *b = &yl->dims[d.rc[k]];
    if (a->nax && same_axes(a, b) && !(sr_dim_axes(a) & contract)) {
      keep[k] = 1;
      contract |= sr_dim_axes(a);
    }
  }
  /* operand layouts */
  SrTypeBuilder lb_, rb_;
  sr_type_builder(&lb_, sr_layout_of_type(sr_type_strip_sharding(x->type)));
  sr_type_builder(&rb_, sr_layout_of_type(sr_type_strip_sharding(y->type)));
  int lf[SR_MAX_RANK], rf[SR_MAX_RANK], nlf = 0, nrf = 0;
  for (int i = 0; i < d.lnd; i++) {
    int used = 0;
    for (int k = 0; k < d.nb; k++) used |= d.lb[k] == i;
    for (int k = 0; k < d.nc; k++) used |= d.lc[k] == i;
    if (!used) lf[nlf++] = i;
  }
  for (int i = 0; i < d.rnd; i++) {
    int used = 0;
    for (int k = 0; k < d.nb; k++) used |= d.rb[k] == i;
    for (int k = 0; k < d.nc; k++) used |= d.rc[k] == i;
    if (!used) rf[nrf++] = i;
  }
  const SrMesh *sh = l->mesh ? l->mesh : (xl && xl->mesh ? xl->mesh : NULL);
  SrTypeBuilder nat;
  sr_type_builder(&nat, l);
  for (int k = 0; k < d.nb; k++) {
    set_dim(&lb_, d.lb[k], &l->dims[k], contract, sh);
    set_dim(&rb_, d.rb[k], &l->dims[k], contract, sh);
    set_dim(&nat, k, &l->dims[k], contract, sh);
  }
  for (int k = 0; k < nlf; k++) {
    set_dim(&lb_, lf[k], &l->dims[d.nb + k], contract, sh);
    set_dim(&nat, d.nb + k, &l->dims[d.nb + k], contract, sh);
  }
  for (int k = 0; k < nrf; k++) {
    set_dim(&rb_, rf[k], &l->dims[d.nb + nlf + k], contract, sh);
    set_dim(&nat, d.nb + nlf + k, &l->dims[d.nb + nlf + k], contract, sh);
  }
  for (int k = 0; k < d.nc; k++) {
    set_dim(&lb_, d.lc[k], keep[k] ? &xl->dims[d.lc[k]] : NULL, 0, sh);
    set_dim(&rb_, d.rc[k], keep[k] ? &yl->dims[d.rc[k]] : NULL, 0, sh);
  }
  SrArray *ins[2];
  ins[0] = sr_redistribute(cx, x, m, sr_type_get(&lb_));
  if (!ins[0]) return -1;
  ins[1] = sr_redistribute(cx, y, m, sr_type_get(&rb_));
  if (!ins[1]) {
    sr_array_unref(ins[0]);
    return -1;
  }
  nat.unreduced = contract;
  nat.ukind = contract ? SR_UK_SUM : SR_UK_NONE;
  nat.reduced = 0;
  if (contract && !nat.mesh) nat.mesh = sh;
  SrArray *r = sr_array_new(t, sr_type_get(&nat), m);
  int rc = sr_ev_map(cx, 2, ins, 1, &r, 0, dot_fn, &d);
  sr_array_unref(ins[0]);
  sr_array_unref(ins[1]);
  if (rc == 0) e->out[0] = sr_redistribute_typed(cx, r, m, l, t);
  sr_array_unref(r);
  return rc < 0 || !e->out[0] ? -1 : 0;
}

void sr_eval_rules_dot(void) { sr_set_eval_rule(SR_P_dot_general, ev_dot_general); }
