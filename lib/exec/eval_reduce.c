/* eval_reduce.c: eval rules of reductions, arg-reductions and scans.
 *
 * A reduction over a dim split over mesh axes reduces each device's block
 * where it is: the partial results are the result unreduced over those
 * axes (kind sum, max or min), and redistribute.c turns that into the
 * result's layout -- an all-reduce, a reduce-scatter, or nothing when the
 * result type is itself unreduced.  Products and logical reductions have
 * no unreduced kind, so their split dims are gathered first, as are the
 * dims of argmax/argmin and of the cumulative scans. */
#include <string.h>

#include "exec/eval.h"
#include "prims/rule.h"
#include "exec/kern.h"

typedef struct RedArg {
  int op;
  SrDtype dt;
  int nd;
  uint32_t axes;
} RedArg;

static int red_fn(SrShardIO *io) {
  RedArg *r = io->arg;
  if (sr_kern_reduce(r->op, r->dt, r->nd, io->in_shape[0], r->axes, io->in[0]->data, io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "cannot reduce arrays of dtype %s", sr_dtype_name(r->dt));
  return 0;
}

static int kr_of(int prim) {
  switch (prim) {
  case SR_P_reduce_sum: return SR_KR_SUM;
  case SR_P_reduce_max: return SR_KR_MAX;
  case SR_P_reduce_min: return SR_KR_MIN;
  case SR_P_reduce_prod: return SR_KR_PROD;
  case SR_P_reduce_and: return SR_KR_AND;
  default: return SR_KR_OR;
  }
}

static int ev_reduce(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = e->in[0];
  int64_t ax[SR_MAX_RANK];
  int nax;
  if (sr_ev_param_ints(cx, e, "axes", ax, SR_MAX_RANK, &nax) < 0) return -1;
  uint32_t axes = 0;
  for (int k = 0; k < nax; k++) axes |= 1u << ax[k];
  int op = kr_of(e->prim->id);
  int partial_ok = op == SR_KR_SUM || op == SR_KR_MAX || op == SR_KR_MIN;
  int ukind = op == SR_KR_SUM ? SR_UK_SUM : op == SR_KR_MAX ? SR_UK_MAX : SR_UK_MIN;
  /* the operand's layout: kept dims as the result's, reduced dims as they
     are (partial results) unless an axis is needed elsewhere */
  SrAxes used = sr_type_sharded_axes(l);
  SrTypeBuilder b;
  sr_type_builder(&b, x->layout);
  SrAxes partial = 0;
  for (int i = 0, o = 0; i < b.ndim; i++) {
    SrDim *d = &b.dims[i];
    if (axes >> i & 1) {
      SrAxes da = sr_dim_axes(d);
      if (!partial_ok || (da & used) || (x->layout->unreduced && ukind != x->layout->ukind)) d->nax = 0;
      else partial |= da;
      continue;
    }
    d->nax = l->dims[o].nax;
    memcpy(d->ax, l->dims[o].ax, SR_MAX_DIM_AXES);
    if (d->nax) b.mesh = l->mesh;
    o++;
  }
  SrArray *xin = sr_redistribute(cx, x, m, sr_type_get(&b));
  if (!xin) return -1;
  /* the natural result: the kept dims, unreduced over the partial axes */
  SrTypeBuilder nb;
  sr_type_builder(&nb, l);
  nb.unreduced = xin->layout->unreduced | partial;
  nb.ukind = (uint8_t)(nb.unreduced ? (xin->layout->unreduced ? xin->layout->ukind : ukind) : SR_UK_NONE);
  nb.reduced = 0;
  if (nb.unreduced && !nb.mesh) nb.mesh = xin->layout->mesh;
  SrArray *r = sr_array_new(t, sr_type_get(&nb), m);
  RedArg ra = {op, x->type->dtype, x->type->ndim, axes};
  int rc = sr_ev_map(cx, 1, &xin, 1, &r, 0, red_fn, &ra);
  sr_array_unref(xin);
  if (rc == 0) e->out[0] = sr_redistribute_typed(cx, r, m, l, t);
  sr_array_unref(r);
  return rc < 0 || !e->out[0] ? -1 : 0;
}

/* ---- argmax / argmin, cumulative ---- */

typedef struct AxisArg {
  int op, is_max, reverse, axis, nd;
  SrDtype dt, idt;
} AxisArg;

static int arg_fn(SrShardIO *io) {
  AxisArg *a = io->arg;
  if (sr_kern_argminmax(a->is_max, a->dt, a->idt, a->nd, io->in_shape[0], a->axis, io->in[0]->data,
                        io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "argmax of dtype %s", sr_dtype_name(a->dt));
  return 0;
}

static int cum_fn(SrShardIO *io) {
  AxisArg *a = io->arg;
  if (sr_kern_cumulative(a->op, a->dt, a->nd, io->in_shape[0], a->axis, a->reverse, io->in[0]->data,
                         io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "cumulative reduction of dtype %s", sr_dtype_name(a->dt));
  return 0;
}

/* The operand with `axis` gathered and the other dims laid out as the
   result's (whose dims are the operand's, less `axis` when drop). */
static SrArray *axis_operand(SrEvalCtx *cx, SrArray *x, const SrMesh *m, const SrType *l, int axis, int drop) {
  SrTypeBuilder b;
  sr_type_builder(&b, x->layout);
  for (int i = 0, o = 0; i < b.ndim; i++) {
    SrDim *d = &b.dims[i];
    if (i == axis) {
      d->nax = 0;
      if (!drop) o++;
      continue;
    }
    d->nax = l->dims[o].nax;
    memcpy(d->ax, l->dims[o].ax, SR_MAX_DIM_AXES);
    if (d->nax) b.mesh = l->mesh;
    o++;
  }
  return sr_redistribute(cx, x, m, sr_type_get(&b));
}

static const SrType *without_dim_axes(const SrType *l, int dim, const SrType *src) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  if (dim >= 0) b.dims[dim].nax = 0;
  b.unreduced = src->unreduced;
  b.ukind = src->ukind;
  b.reduced = src->reduced;
  if ((b.unreduced || b.reduced) && !b.mesh) b.mesh = src->mesh;
  return sr_type_get(&b);
}

static int ev_argminmax(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  int64_t ax[4];
  int n;
  if (sr_ev_param_ints(cx, e, "axes", ax, 4, &n) < 0 || n != 1)
    return sr_ev_err(cx, "TypeError", "%s needs one axis", e->prim->name);
  SrArray *x = e->in[0];
  SrArray *xin = axis_operand(cx, x, m, l, (int)ax[0], 1);
  if (!xin) return -1;
  AxisArg a = {0, e->prim->id == SR_P_argmax, 0, (int)ax[0], x->type->ndim, x->type->dtype, t->dtype};
  SrArray *r = sr_array_new(t, without_dim_axes(l, -1, sr_layout_of_type(t)), m);
  int rc = sr_ev_map(cx, 1, &xin, 1, &r, 0, arg_fn, &a);
  sr_array_unref(xin);
  if (rc == 0) e->out[0] = sr_redistribute_typed(cx, r, m, l, t);
  sr_array_unref(r);
  return rc < 0 || !e->out[0] ? -1 : 0;
}

static int ev_cumulative(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  int64_t axis = 0, reverse = 0;
  if (sr_ev_param_int(cx, e, "axis", &axis) < 0) return -1;
  if (sr_ev_param(e, "reverse")) sr_ev_param_int(cx, e, "reverse", &reverse);
  SrArray *x = e->in[0];
  SrArray *xin = axis_operand(cx, x, m, l, (int)axis, 0);
  if (!xin) return -1;
  int id = e->prim->id;
  int op = id == SR_P_cumsum ? SR_KR_SUM : id == SR_P_cumprod ? SR_KR_PROD : id == SR_P_cummax ? SR_KR_MAX : SR_KR_MIN;
  AxisArg a = {op, 0, (int)reverse, (int)axis, x->type->ndim, x->type->dtype, t->dtype};
  SrArray *r = sr_array_new(t, without_dim_axes(l, (int)axis, xin->layout), m);
  int rc = sr_ev_map(cx, 1, &xin, 1, &r, 0, cum_fn, &a);
  sr_array_unref(xin);
  if (rc == 0) e->out[0] = sr_redistribute_typed(cx, r, m, l, t);
  sr_array_unref(r);
  return rc < 0 || !e->out[0] ? -1 : 0;
}

void sr_eval_rules_reduce(void) {
  sr_set_eval_rule(SR_P_reduce_sum, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_max, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_min, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_prod, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_and, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_or, ev_reduce);
  sr_set_eval_rule(SR_P_argmax, ev_argminmax);
  sr_set_eval_rule(SR_P_argmin, ev_argminmax);
  sr_set_eval_rule(SR_P_cumsum, ev_cumulative);
  sr_set_eval_rule(SR_P_cumprod, ev_cumulative);
  sr_set_eval_rule(SR_P_cummax, ev_cumulative);
  sr_set_eval_rule(SR_P_cummin, ev_cumulative);
}
