/* reduce.c: the rules of the reductions, arg-reductions and cumulative reductions
 * (lax/lax.py, lax/control_flow/loops.py), and reduce, the reduction by the
 * jaxpr of a computation of the user's.
 *
 * The family's shared helpers, then each primitive's (or group's) type,
 * eval, JVP and transpose rules and communication note side by side, in
 * that order, under a heading per group, then the family's registration
 * sr_lax_reduce_init (lax/lax.h says what a family file holds and uses).
 */
#include "lax/lax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "exec/eval.h"
#include "exec/kern.h"
#include "exec/kern_ew.h"
#include "util/mem.h"
#include "check/rule.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ==== the family's helpers ==== */

/* type rules of the reductions (reduce_sum, reduce_max,
 * reduce_min, reduce_prod, reduce_and, reduce_or, argmax, argmin) and the
 * cumulative reductions (cumsum, cumprod, cummax, cummin).
 *
 * A reduction drops the specs of the reduced dimensions (reference 3.5):
 * reducing over a sharded dimension is allowed and means an implicit
 * all-reduce.  reduce_sum/max/min take an `out_sharding`, which may make the
 * result unreduced (of kind sum, max or min); the other reductions have no
 * ur rule.  A cumulative reduction must not be sharded along its axis.
 */

/* The axes of a reduction: distinct and in range (lax._reduce_op_shape_rule). */
static int read_axes(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *x, int64_t *axes, int *n, int *drop) {
  if (sr_rparam_ints(cx, e, "axes", 1, axes, SR_MAX_RANK, n) < 0) return -1;
  memset(drop, 0, SR_MAX_RANK * sizeof *drop);
  for (int i = 0; i < *n; i++)
    for (int k = 0; k < i; k++)
      if (axes[k] == axes[i]) {
        SrBuf a = SR_BUF_INIT;
        sr_ints_str(&a, axes, *n);
        sr_terr(cx, "ValueError", "duplicate value in 'axes' of reduction: %s", sr_buf_str(&a));
        sr_buf_free(&a);
        return -1;
      }
  for (int i = 0; i < *n; i++)
    if (axes[i] < 0 || axes[i] >= x->ndim) {
      SrBuf a = SR_BUF_INIT, t = SR_BUF_INIT;
      sr_ints_str(&a, axes, *n);
      sr_aval_str(&t, x);
      sr_terr(cx, "ValueError", "reduction axes %s contains out-of-bounds indices for %s.", sr_buf_str(&a), sr_buf_str(&t));
      sr_buf_free(&a);
      sr_buf_free(&t);
      return -1;
    }
  for (int i = 0; i < *n; i++) drop[axes[i]] = 1;
  return 0;
}

/* The result without the reduced dimensions, their specs dropped (or all
   replicated outside explicit mode). */
static void reduced_builder(SrTypeBuilder *b, const SrType *x, const int *drop, const SrStd *s) {
  memset(b, 0, sizeof *b);
  b->dtype = x->dtype;
  b->weak = x->weak;
  b->mem = x->mem;
  b->mesh = x->mesh ? x->mesh : s->mesh;
  for (int i = 0; i < x->ndim; i++) {
    if (drop[i]) continue;
    SrDim *d = &b->dims[b->ndim++];
    *d = x->dims[i];
    if (s->mode != SR_MODE_EXPLICIT) d->nax = 0;
  }
}

/* "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of
   number." (lax._reduce_number_dtype_rule and loops._cumred_dtype_rule) */
static int number_dtype(SrTypeCtx *cx, const char *name, const SrType *x) {
  if (sr_dtype_in(x->dtype, SR_DC_NUM)) return 0;
  return sr_terr(cx, "TypeError", "%s does not accept dtype %s. Accepted dtypes are subtypes of number.", name,
                 sr_dtype_name(x->dtype));
}

/* Sharding rules that index or iterate over a PartitionSpec with
   unreduced or reduced axes trip its guard (partition_spec.P.__getitem__,
   __iter__) before the missing ur rule is reached. */
static int spec_guard(SrTypeCtx *cx, const SrStd *s, const SrType *x, int iterate) {
  if (s->mode != SR_MODE_EXPLICIT || !(x->unreduced | x->reduced)) return 0;
  if (iterate)
    return sr_terr(cx, "ValueError",
                   "Using *pspec is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use "
                   "*spec.partitions");
  return sr_terr(cx, "ValueError",
                 "Using pspec[...] is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use "
                 "spec.partitions[...]");
}

/* eval rules of reductions, arg-reductions and scans.
 *
 * A reduction over a dim split over mesh axes reduces each device's block
 * where it is: the partial results are the result unreduced over those
 * axes (kind sum, max or min), and redistribute.c turns that into the
 * result's layout -- an all-reduce, a reduce-scatter, or nothing when the
 * result type is itself unreduced.  Products and logical reductions have
 * no unreduced kind, so their split dims are gathered first, as are the
 * dims of argmax/argmin and of the cumulative scans. */

typedef struct RedArg {
  int op;
  SrDtype dt;
  int nd;
  uint32_t axes;
} RedArg;

typedef struct AxisArg {
  int op, is_max, reverse, axis, nd;
  SrDtype dt, idt;
} AxisArg;

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

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)
#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

/* An int tuple param (NULL or None: n = 0). */
static int param_ints(const SrEqn *e, const char *key, int64_t *out, int max) {
  SrVal *v = param(e, key);
  int n = 0;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (sr_val_ints(v, out, max, &n) < 0) return -1;
  return n;
}

static int64_t param_int(const SrEqn *e, const char *key, int64_t dflt) {
  SrVal *v = param(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? v->i : dflt;
}

static const SrType *ct_of(const SrEqn *e, int i) { return sr_ad_ct_type(e->in[i]->type); }

static int contains(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

static SrVal *triples(const int64_t *lo, const int64_t *hi, const int64_t *in, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) {
    int64_t v[3] = {lo[i], hi[i], in[i]};
    sr_seq_push(NULL, t, sr_ad_ints(v, 3));
  }
  return t;
}

/* Axes a type's dims are sharded over, named on the type's mesh. */
static SrAxes dims_axes(const SrType *t, const int64_t *dims, int n) {
  SrAxes a = 0;
  for (int i = 0; i < n; i++)
    if (dims[i] >= 0 && dims[i] < t->ndim) a |= sr_dim_axes(&t->dims[dims[i]]);
  return a;
}

/* ==== reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_and, reduce_or ==== */

/* reduce_sum, reduce_max, reduce_min
   (lax._reduce_op_sharding_rule_with_out_sharding and the ur rules
   _reduce_sum_ur_rule, _reduce_max_ur_rule, _reduce_min_ur_rule). */
static int type_reduce_with_out(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  const char *name = e->prim->name;
  int kind = e->prim->id == SR_P_reduce_max ? SR_UK_MAX : e->prim->id == SR_P_reduce_min ? SR_UK_MIN : SR_UK_SUM;
  int64_t axes[SR_MAX_RANK];
  int n = 0, drop[SR_MAX_RANK];
  if (read_axes(cx, e, x, axes, &n, drop) < 0) return -1;
  if (kind == SR_UK_SUM && number_dtype(cx, name, x) < 0) return -1;
  /* _reduce_sum_dtype_rule: jax_allow_f16_reductions=False refuses
     half-precision sums but over size-1 axes */
  if (e->prim->id == SR_P_reduce_sum && cx->no_f16_reductions && (x->dtype == SR_F16 || x->dtype == SR_BF16)) {
    int all_one = 1;
    for (int i = 0; i < n; i++) all_one &= x->dims[axes[i]].size == 1;
    if (!all_one) {
      SrBuf b = SR_BUF_INIT;
      sr_type_str(&b, x, 1);
      sr_terr(cx, "ValueError", "reduce_sum on operand %s is not allowed when jax_allow_f16_reductions=False.",
              sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  reduced_builder(&b, x, drop, &s);
  /* out_sharding, or the written binder when the printer left it out */
  SrShardSpec g;
  int given = 0;
  if (sr_rparam(e, "out_sharding")) {
    if (sr_rparam_sharding(cx, e, "out_sharding", b.ndim, &g, &given) < 0) return -1;
  } else if (sr_written(e, 0) && sr_written(e, 0)->ndim == b.ndim) {
    sr_shard_of_type(sr_written(e, 0), &g);
    given = 1;
  }
  if (given && s.mode == SR_MODE_EXPLICIT) {
    if (g.mesh) b.mesh = g.mesh;
    for (int i = 0; i < b.ndim; i++) {
      b.dims[i].nax = g.nax[i];
      memcpy(b.dims[i].ax, g.ax[i], SR_MAX_DIM_AXES);
    }
  }
  if (s.mode != SR_MODE_AUTO) {
    /* _reduce_op_unreduced_rule */
    SrAxes u = 0;
    if (given && g.unreduced && s.mode == SR_MODE_EXPLICIT) {
      if (g.ukind != kind) {
        SrBuf sb = SR_BUF_INIT;
        SrVal *spec = sr_shard_to_spec_val(&g);
        sr_val_repr(&sb, spec);
        sr_unref(spec);
        sr_terr(cx, "ShardingTypeError", "%s requires `out_sharding`'s unreduced_kind to be %s but got %s", name,
                sr_ukind_str(kind), sr_buf_str(&sb));
        sr_buf_free(&sb);
        return -1;
      }
      SrAxes used = x->unreduced;
      for (int i = 0; i < n; i++) used |= sr_dim_axes(&x->dims[axes[i]]);
      SrAxes gu = sr_axes_remap(g.unreduced, g.mesh, x->mesh ? x->mesh : g.mesh);
      if (gu & ~used) {
        /* the message shows axes as the frozenset the rule made of them */
        SrBuf op = SR_BUF_INIT, ax = SR_BUF_INIT, us = SR_BUF_INIT;
        sr_aval_repr(&op, x);
        int64_t sorted[SR_MAX_RANK];
        int ns = 0;
        for (int i = 0; i < x->ndim; i++)
          if (drop[i]) sorted[ns++] = i;
        sr_buf_puts(&ax, ns ? "frozenset({" : "frozenset()");
        for (int i = 0; i < ns; i++) sr_buf_printf(&ax, i ? ", %lld" : "%lld", (long long)sorted[i]);
        if (ns) sr_buf_puts(&ax, "})");
        sr_axes_frozenset_str(&us, g.mesh, g.unreduced);
        sr_terr(cx, "ShardingTypeError",
                "out_sharding's unreduced axes should be in operand's specs that were %s over. Got operand=%s, "
                "axes=%s, unreduced_spec=%s",
                name, sr_buf_str(&op), sr_buf_str(&ax), sr_buf_str(&us));
        sr_buf_free(&op);
        sr_buf_free(&ax);
        sr_buf_free(&us);
        return -1;
      }
      u = g.unreduced;
    } else if (sr_getu(cx, x, &u) < 0) {
      return -1;
    }
    b.unreduced = u;
    b.ukind = u ? (uint8_t)kind : SR_UK_NONE;
    /* _reduce_op_reduced_rule */
    if (given && g.reduced && s.mode == SR_MODE_EXPLICIT) {
      SrBuf sb = SR_BUF_INIT;
      SrTypeBuilder gb = b;
      gb.unreduced = g.unreduced;
      gb.reduced = g.reduced;
      gb.ukind = g.ukind;
      gb.varying = 0;
      sr_buf_puts(&sb, "out_sharding=");
      sr_type_sharding_str(&sb, cx, sr_type_get(&gb));
      sr_terr(cx, "ValueError", "out_sharding passed to %s cannot be reduced. Got %s", name, sr_buf_str(&sb));
      sr_buf_free(&sb);
      return -1;
    }
    b.reduced = sr_getr(cx, x);
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* reduce_prod, reduce_and, reduce_or (lax._reduce_op_sharding_rule,
   _reduce_logical_sharding_rule): no out_sharding, no ur rule. */
static int type_reduce_plain(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t axes[SR_MAX_RANK];
  int n = 0, drop[SR_MAX_RANK];
  int logical = e->prim->id != SR_P_reduce_prod;
  if (logical) {
    if (x->dtype != SR_BOOL && !sr_dtype_in(x->dtype, SR_DC_INT))
      return sr_terr(cx, "TypeError", "logical reduction requires operand dtype bool or int, got %s.",
                     sr_dtype_name(x->dtype));
    if (sr_rparam_ints(cx, e, "axes", 1, axes, SR_MAX_RANK, &n) < 0) return -1;
    memset(drop, 0, sizeof drop);
    for (int i = 0; i < n; i++) {
      if (axes[i] < 0 || axes[i] >= x->ndim)
        return sr_terr(cx, "IndexError", "index %lld is out of bounds for axis 0 with size %d", (long long)axes[i], x->ndim);
      drop[axes[i]] = 1;
    }
  } else {
    if (read_axes(cx, e, x, axes, &n, drop) < 0 || number_dtype(cx, "reduce_prod", x) < 0) return -1;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || spec_guard(cx, &s, x, !logical) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  reduced_builder(&b, x, drop, &s);
  if (logical) b.weak = 0;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* reduce_xor has no kernel of exec's: its own loop over one shard, the
   result zeroed then each element xor'ed into its place */
enum { KR_XOR = -1 };

static void xor_reduce(const RedArg *r, const int64_t *shape, const void *in, void *out) {
  size_t es = sr_dtype_info(r->dt)->size;
  int64_t n = 1, nout = 1, ostride[SR_MAX_RANK], idx[SR_MAX_RANK];
  for (int i = r->nd - 1; i >= 0; i--) {
    ostride[i] = r->axes >> i & 1 ? 0 : nout;
    if (!(r->axes >> i & 1)) nout *= shape[i];
    n *= shape[i];
    idx[i] = 0;
  }
  uint64_t *acc = sr_xcalloc((size_t)(nout ? nout : 1), sizeof *acc);
  int64_t o = 0;
  for (int64_t k = 0; k < n; k++) {
    acc[o] ^= (uint64_t)sr_kern_get_i64(r->dt, (const char *)in + (size_t)k * es);
    for (int i = r->nd - 1; i >= 0; i--) {
      o += ostride[i];
      if (++idx[i] < shape[i]) break;
      o -= ostride[i] * shape[i];
      idx[i] = 0;
    }
  }
  for (int64_t k = 0; k < nout; k++)
    sr_kern_set_scalar(r->dt, 0, r->dt == SR_BOOL ? (int64_t)(acc[k] & 1) : (int64_t)acc[k], (char *)out + (size_t)k * es);
  free(acc);
}

static int red_fn(SrShardIO *io) {
  RedArg *r = io->arg;
  if (r->op == KR_XOR) {
    xor_reduce(r, io->in_shape[0], io->in[0]->data, io->out[0]->data);
    return 0;
  }
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
  case SR_P_reduce_xor: return KR_XOR;
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

JVP(jvp_reduce_chooser) {
  /* div(reduce_sum(mul(g, loc), axes), reduce_sum(loc, axes)) with
     loc = convert(eq(operand, reshape(ans, shape with 1s)), g.dtype) */
  SrVal *ans = y[0] = sr_ad_bind_eqn1(ad, e, x);
  const SrType *xt = sr_ad_type(ad, x[0]);
  if (!ans || !xt) return -1;
  int64_t axes[SR_MAX_RANK];
  int na = param_ints(e, "axes", axes, SR_MAX_RANK);
  SrTypeBuilder b;
  sr_type_builder(&b, xt);
  for (int i = 0; i < b.ndim; i++) {
    b.dims[i].nax = 0;
    if (contains(axes, na, i)) b.dims[i].size = 1;
  }
  b.unreduced = b.reduced = 0;
  SrVal *r = sr_ad_reshape_plain(ad, ans, sr_type_get(&b));
  SrVal *loc = sr_ad_convert(ad, sr_ad_binop(ad, SR_P_eq, x[0], r), sr_ad_type(ad, t[0])->dtype, 0);
  SrVal *counts = sr_ad_reduce_sum(ad, loc, axes, na, NULL);
  ty[0] = sr_ad_div(ad, sr_ad_reduce_sum(ad, sr_ad_mul(ad, t[0], loc), axes, na, NULL), counts);
  return ty[0] ? 0 : -1;
}

static SrVal *triples(const int64_t *lo, const int64_t *hi, const int64_t *in, int n);

/* lax.slice_in_dim(v, lo, hi) on axis 0, strides all 1. */
static SrVal *slice_rows(SrAd *ad, SrVal *v, int64_t lo, int64_t hi) {
  const SrType *vt = sr_ad_type(ad, v);
  if (!vt) return NULL;
  int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK];
  for (int i = 0; i < vt->ndim; i++) {
    st[i] = 0;
    lim[i] = vt->dims[i].size;
    str[i] = 1;
  }
  st[0] = lo;
  lim[0] = hi;
  return sr_ad_bindv(ad, SR_P_slice, 1, &v, "start_indices", sr_ad_ints(st, vt->ndim), "limit_indices",
                  sr_ad_ints(lim, vt->ndim), "strides", sr_ad_ints(str, vt->ndim), NULL);
}

/* lax.pad(v, fill, [(0, 1, 0)] on axis 0): one more row of fill. */
static SrVal *pad_row(SrAd *ad, SrVal *v, SrVal *fill) {
  const SrType *vt = sr_ad_type(ad, v);
  if (!vt || !fill) return NULL;
  int64_t lo[SR_MAX_RANK] = {0}, hi[SR_MAX_RANK] = {0}, in[SR_MAX_RANK] = {0};
  hi[0] = 1;
  SrVal *pin[2] = {v, fill};
  return sr_ad_bindv(ad, SR_P_pad, 2, pin, "padding_config", triples(lo, hi, in, vt->ndim), NULL);
}

/* _reduce_prod_jvp_rule, i.e. _reduce_jvp with mul: the reduced axes
   moved to the front and flattened, then halved by a pairwise product
   tree (an odd half padded with ones) under the JVP of mul.  Nothing
   divides by the product, so zeros in the operand are exact, and the
   tangent is built by slice, pad with 0, mul by primal values and add_any
   alone: linear in t, so linearize and transpose work. */
JVP(jvp_reduce_prod) {
  const SrType *xt = sr_ad_type(ad, x[0]);
  if (!xt) return -1;
  int64_t axes[SR_MAX_RANK], perm[SR_MAX_RANK];
  int na = param_ints(e, "axes", axes, SR_MAX_RANK);
  if (na < 0) return sr_raise(ad->I, "TypeError", "reduce_prod: malformed axes"), -1;
  int64_t n = 1;
  for (int i = 0; i < na; i++) {
    perm[i] = axes[i];
    n *= xt->dims[axes[i]].size;
  }
  int np = na;
  for (int i = 0; i < xt->ndim; i++)
    if (!contains(axes, na, i)) perm[np++] = i;
  /* new_shape = (n,) + the kept dimensions */
  SrTypeBuilder b;
  sr_type_builder(&b, xt);
  b.ndim = (uint8_t)(xt->ndim - na + 1);
  b.dims[0].size = n;
  b.dims[0].nax = 0;
  for (int i = na; i < xt->ndim; i++) b.dims[i - na + 1] = xt->dims[perm[i]];
  b.unreduced = b.reduced = 0;
  const SrType *flat = sr_type_get(&b);
  SrVal *p = sr_ad_reshape_plain(ad, sr_ad_transpose_dims(ad, x[0], perm, xt->ndim), flat);
  SrVal *g = t[0] ? sr_ad_reshape_plain(ad, sr_ad_transpose_dims(ad, t[0], perm, xt->ndim), flat) : NULL;
  if (!p || (t[0] && !g)) return -1;
  if (n == 0) {
    /* an empty product: full(kept shape, 1), a zero tangent */
    SrTypeBuilder k;
    sr_type_builder(&k, flat);
    k.ndim--;
    memmove(k.dims, k.dims + 1, k.ndim * sizeof k.dims[0]);
    y[0] = sr_ad_full(ad, sr_type_get(&k), 1.0);
    ty[0] = NULL;
    return y[0] ? 0 : -1;
  }
  for (int64_t m = n; m > 1;) {
    int64_t n1 = (m + 1) / 2;
    /* in JAX's order: each primal operation, then its tangent */
    SrVal *p1 = slice_rows(ad, p, 0, n1), *g1 = g ? slice_rows(ad, g, 0, n1) : NULL;
    SrVal *p2 = slice_rows(ad, p, n1, m), *g2 = g ? slice_rows(ad, g, n1, m) : NULL;
    if (m - n1 != n1) {
      p2 = pad_row(ad, p2, sr_ad_scalar(ad, xt->dtype, 0, 1.0));
      /* the padding value is a constant: its tangent is zero */
      if (g) g2 = pad_row(ad, g2, sr_ad_scalar(ad, sr_ad_type(ad, g)->dtype, 0, 0.0));
    }
    /* jvp of mul: p1 * p2, then g1 * p2 + p1 * g2 */
    SrVal *prod = sr_ad_mul(ad, p1, p2);
    if (g) {
      SrVal *a = sr_ad_mul(ad, g1, p2);
      g = sr_ad_add_any(ad, a, sr_ad_mul(ad, p1, g2));
    }
    p = prod;
    if (!p || (t[0] && !g)) return -1;
    m = n1;
  }
  int64_t zero = 0;
  y[0] = sr_ad_bindv(ad, SR_P_squeeze, 1, &p, "dimensions", sr_ad_ints(&zero, 1), NULL);
  ty[0] = g ? sr_ad_bindv(ad, SR_P_squeeze, 1, &g, "dimensions", sr_ad_ints(&zero, 1), NULL) : NULL;
  return y[0] && (ty[0] || !g) ? 0 : -1;
}

TR(tr_reduce_sum) {
  (void)x;
  int64_t axes[SR_MAX_RANK], bd[SR_MAX_RANK];
  int na = param_ints(e, "axes", axes, SR_MAX_RANK);
  if (na < 0) return sr_raise(ad->I, "TypeError", "reduce_sum: malformed axes"), -1;
  const SrType *ot = ct_of(e, 0);
  int nb = 0;
  for (int i = 0; i < ot->ndim; i++)
    if (!contains(axes, na, i)) bd[nb++] = i;
  cx[0] = sr_ad_broadcast_in_dim(ad, ct[0], ot, bd, nb, 1);
  return cx[0] ? 0 : -1;
}

/* A reduction over sharded dims (not into unreduced ones) all-reduces. */
static int comm_reduce(const SrEqn *e, SrCommNote *out, int max) {
  int n = 0;
  const SrType *in0 = e->nin ? e->in[0]->type : NULL, *o0 = e->nout ? e->out[0]->type : NULL;
  if (!in0 || !o0) return 0;
  int64_t ax[SR_MAX_RANK];
  int na = 0;
  SrVal *v = param(e, "axes");
  if (!v || sr_val_ints(v, ax, SR_MAX_RANK, &na) < 0) return 0;
  SrAxes a = dims_axes(in0, ax, na);
  SrAxes ou = o0->mesh ? sr_axes_remap(o0->unreduced, o0->mesh, in0->mesh) : 0;
  if (a & ~ou) n = sr_comm_note(out, max, n, "all-reduce (reduction over sharded dims)", in0->mesh, a & ~ou);
  return n;
}

/* batching.reducer_batcher (defreducer): the axes shifted past the batch
   dim, which stays where it falls among the kept dims; an out_sharding
   gets the batch axis' entry there (get_sharding_for_vmap). */
static int batch_reducer(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  if (e->nin != 1) return sr_batch_no_rule(b, e->prim);
  const SrType *xt = sr_ad_type(&b->ad, x[0]);
  int64_t axes[SR_MAX_RANK];
  int na = param_ints(e, "axes", axes, SR_MAX_RANK);
  if (!xt || na < 0) return -1;
  int d = bd[0], out = 0;
  for (int i = 0; i < na; i++)
    if (axes[i] >= d) axes[i]++;
  for (int i = 0; i < d; i++) out += !contains(axes, na, i);
  SrVal *os = param(e, "out_sharding");
  if (os && os->kind != SR_V_NONE)
    y[0] = sr_batch_bind_with(b, e, (int)e->nin, x, "axes", sr_ad_ints(axes, na), "out_sharding",
                              sr_batch_sharding_for_vmap(os, out, xt, d), NULL);
  else
    y[0] = sr_batch_bind_with(b, e, (int)e->nin, x, "axes", sr_ad_ints(axes, na), NULL);
  ybd[0] = out;
  return y[0] ? 0 : -1;
}

/* ==== reduce (lax.reduce with a computation of the user's) ==== */

/* reduce_p binds the operands, then one scalar init value per operand,
 * with the computation's jaxpr (which takes the accumulators, then the
 * elements, and gives the new accumulators), the dimensions reduced and
 * the Python computation itself (a printed word here). */

/* The dimensions np.delete removes from a shape of rank nd: negative ones
   counted from the end, repeats once. */
static int general_dims(SrTypeCtx *cx, const SrRuleEqn *e, int nd, int *drop) {
  int64_t dims[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "dimensions", 1, dims, SR_MAX_RANK, &n) < 0) return -1;
  memset(drop, 0, SR_MAX_RANK * sizeof *drop);
  for (int i = 0; i < n; i++) {
    if (dims[i] < -nd || dims[i] >= nd)
      return sr_terr(cx, "IndexError", "index %lld is out of bounds for axis 0 with size %d", (long long)dims[i], nd);
    drop[dims[i] < 0 ? dims[i] + nd : dims[i]] = 1;
  }
  return 0;
}

/* lax._reduce_shape_rule, _reduce_dtype_rule, _reduce_weak_type_rule and
   _reduce_sharding_rule: each result is its operand without the reduced
   dimensions (their specs dropped), weak when operand and init are. */
static int type_reduce_general(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  uint32_t n = e->nin / 2;
  if (e->nin == 0 || e->nin % 2)
    return sr_terr(cx, "TypeError", "reduce takes as many init values as operands, got %u inputs", e->nin);
  if (sr_rule_arity(cx, e, -1, (int)n) < 0) return -1;
  for (uint32_t i = n; i < e->nin; i++) {
    if (e->in[i]->ndim == 0) continue;
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '[');
    for (uint32_t k = n; k < e->nin; k++) {
      if (k > n) sr_buf_puts(&b, ", ");
      sr_shape_str(&b, e->in[k]);
    }
    sr_buf_putc(&b, ']');
    sr_terr(cx, "ValueError", "reduce found non-scalar initial value: %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (e->in[i]->dtype == e->in[n + i]->dtype) continue;
    SrBuf b = SR_BUF_INIT;
    for (int half = 0; half < 2; half++) {
      sr_buf_puts(&b, half ? "] and initial_values=[" : "operands=[");
      for (uint32_t k = 0; k < n; k++) {
        if (k) sr_buf_puts(&b, ", ");
        sr_aval_repr(&b, e->in[half * n + k]);
      }
    }
    sr_buf_putc(&b, ']');
    sr_terr(cx, "TypeError", "reduce operand dtypes should match corresponding initial value dtypes, got %s",
            sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  for (uint32_t i = 0; i < n; i++) {
    const SrType *x = e->in[i];
    int drop[SR_MAX_RANK];
    if (general_dims(cx, e, x->ndim, drop) < 0) return -1;
    SrTypeBuilder b;
    reduced_builder(&b, x, drop, &s);
    b.weak = x->weak && e->in[n + i]->weak;
    b.varying = x->varying;
    if (sr_finish_type(cx, e, &b, &out[i]) < 0) return -1;
  }
  return 0;
}

/* The jaxpr param of an equation (borrowed), or NULL. */
static const SrJaxpr *jaxpr_param(const SrEqn *e, const char *key) {
  SrVal *v = param(e, key);
  return v && v->kind == SR_V_JAXPR ? v->jx.jaxpr : NULL;
}

/* One step of a reducer jaxpr (reduce's, reduce_window's) on the host:
   the accumulators acc[i] and the elements elem[i] (n each, scalars of
   the operands' dtypes) to the new accumulators, written over acc[i]. */
int sr_lax_reducer_step(SrEvalCtx *cx, const SrEvalEqn *e, const SrJaxpr *j, const char *name,
                        unsigned char *const *acc, unsigned char *const *elem) {
  uint32_t n = e->nin / 2;
  SrArray **in = sr_xcalloc(3 * (size_t)n, sizeof *in), **res = in + 2 * n;
  for (uint32_t i = 0; i < n; i++) {
    in[i] = sr_array_from_data(sr_args(j)[i]->type, NULL, acc[i]);
    in[n + i] = sr_array_from_data(sr_args(j)[n + i]->type, NULL, elem[i]);
  }
  int rc = sr_ev_jaxpr(cx, j, in, res);
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    const SrType *rt = res[i]->type;
    if (rt->ndim != 0 || rt->dtype != e->in[i]->type->dtype)
      rc = sr_ev_err(cx, "TypeError", "%s's computation gives %s, the operand is %s", name, sr_type_short(rt),
                     sr_dtype_name(e->in[i]->type->dtype));
    else rc = sr_array_to_host(cx, res[i], acc[i]);
  }
  for (uint32_t i = 0; i < 2 * n; i++) sr_array_unref(in[i]);
  for (uint32_t i = 0; i < n; i++)
    if (res[i]) sr_array_unref(res[i]);
  free(in);
  return rc;
}

/* Results made on the host (acc[i]: the row-major data of result i) laid
   out as the equation's outputs. */
int sr_lax_host_outputs(SrEvalCtx *cx, const SrEvalEqn *e, uint32_t n, unsigned char *const *acc) {
  for (uint32_t i = 0; i < n; i++) {
    SrArray *r = sr_array_from_data(sr_type_strip_sharding(e->out_type[i]), NULL, acc[i]);
    const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[i]);
    e->out[i] = sr_redistribute_typed(cx, r, m, sr_ev_out_layout(cx, e, i, m), e->out_type[i]);
    sr_array_unref(r);
    if (!e->out[i]) return -1;
  }
  return 0;
}

/* XLA's Reduce on the host: each result element starts at its init value
   and takes the jaxpr of the accumulators and the next element of each
   operand, in row-major order of the reduced dimensions. */
static int ev_reduce_general(SrEvalCtx *cx, const SrEvalEqn *e) {
  uint32_t n = e->nin / 2;
  const SrJaxpr *j = sr_ev_param_jaxpr(e, "jaxpr");
  if (!j || sr_nargs(j) != 2 * n || j->nout != n)
    return sr_ev_err(cx, "TypeError", "reduce's jaxpr must take %u arguments and give %u results", 2 * n, n);
  int64_t dims[SR_MAX_RANK];
  int nd;
  if (sr_ev_param_ints(cx, e, "dimensions", dims, SR_MAX_RANK, &nd) < 0) return -1;
  const SrType *xt = e->in[0]->type;
  for (uint32_t i = 1; i < n; i++) {
    int same = e->in[i]->type->ndim == xt->ndim;
    for (int d = 0; same && d < xt->ndim; d++) same = e->in[i]->type->dims[d].size == xt->dims[d].size;
    if (!same) return sr_ev_err(cx, "ValueError", "reduce's operands must have the same shape");
  }
  int drop[SR_MAX_RANK] = {0};
  for (int i = 0; i < nd; i++) drop[dims[i] < 0 ? dims[i] + xt->ndim : dims[i]] = 1;
  int64_t total = sr_type_numel(xt), nres = sr_type_numel(e->out_type[0]);
  unsigned char **xs = sr_xcalloc(2 * n, sizeof *xs), **acc = xs + n;
  size_t *es = sr_xcalloc(n, sizeof *es);
  int rc = 0;
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    es[i] = sr_elem_size(e->in[i]->type->dtype);
    xs[i] = sr_xmalloc((size_t)total * es[i] + 1);
    acc[i] = sr_xmalloc((size_t)nres * es[i] + es[i] + 1);
    rc = sr_array_to_host(cx, e->in[i], xs[i]);
    if (rc == 0) rc = sr_array_to_host(cx, e->in[n + i], acc[i]);
    for (int64_t o = 1; rc == 0 && o < nres; o++) memcpy(acc[i] + (size_t)o * es[i], acc[i], es[i]);
  }
  unsigned char **pa = sr_xcalloc(2 * (size_t)n, sizeof *pa), **pe = pa + n;
  int64_t idx[SR_MAX_RANK] = {0};
  for (int64_t p = 0; rc == 0 && nres > 0 && p < total; p++) {
    int64_t o = 0;
    for (int d = 0; d < xt->ndim; d++)
      if (!drop[d]) o = o * xt->dims[d].size + idx[d];
    for (uint32_t i = 0; i < n; i++) {
      pa[i] = acc[i] + (size_t)o * es[i];
      pe[i] = xs[i] + (size_t)p * es[i];
    }
    rc = sr_lax_reducer_step(cx, e, j, "reduce", pa, pe);
    for (int d = xt->ndim - 1; d >= 0 && ++idx[d] == xt->dims[d].size; d--) idx[d] = 0;
    if (rc == 0 && cx->I && (p & 1023) == 1023 && sr_interrupt_point(cx->I))
      rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
  }
  if (rc == 0) rc = sr_lax_host_outputs(cx, e, n, acc);
  for (uint32_t i = 0; i < 2 * n; i++) free(xs[i]);
  free(xs);
  free(es);
  free(pa);
  return rc;
}

/* What _reduce_jvp's tree reduction keeps alive while it traces. */
typedef struct RTree {
  SrInterp *I;
  SrVal **keep;
  int n, cap;
} RTree;

static SrVal *rt_keep(RTree *r, SrVal *v) {
  if (!v) return NULL;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 32;
    r->keep = sr_xrealloc(r->keep, (size_t)r->cap * sizeof *r->keep);
  }
  return r->keep[r->n++] = v;
}

/* The reducer under api.vmap once per dimension of shape[nd] (the outer
   vmap over the first): a new jaxpr (its own program), NULL with an
   exception raised. */
static SrJaxpr *vmapped_reducer(SrInterp *I, const SrJaxpr *j, const int64_t *shape, int nd) {
  uint32_t m = sr_nargs(j) > j->nout ? sr_nargs(j) : j->nout;
  uint8_t *all = sr_xmalloc(m + 1), *outb = sr_xmalloc(m + 1);
  memset(all, 1, m + 1);
  SrJaxpr *cur = NULL;
  for (int d = nd - 1; d >= 0; d--) {
    SrBatch b;
    sr_batch_begin(&b, I, shape[d], NULL);
    SrJaxpr *nj = sr_batch_jaxpr(&b, cur ? cur : j, all, all, outb);
    sr_batch_end(&b);
    if (cur) sr_program_unref(cur->prog);
    cur = nj;
    if (!cur) break;
  }
  free(all);
  free(outb);
  return cur;
}

/* _reduce_jvp's _reduce_tree, traced: the reduced dims moved to the front
   and flattened, then the rows halved by the vmapped reducer (an odd half
   padded with the init values) until one is left.  args are the operands
   then the init values; outs gets n results (kept in r). */
static int reduce_tree(RTree *r, const SrJaxpr *red, SrVal **args, uint32_t n, const int *drop, SrVal **outs) {
  SrInterp *I = r->I;
  const SrBinder *B = SR_BINDER(I);
  const SrType *xt = sr_value_type(I, args[0]);
  int64_t perm[SR_MAX_RANK], shape[SR_MAX_RANK], len = 1;
  int np = 0, nk = 0;
  for (int i = 0; i < xt->ndim; i++)
    if (drop[i]) perm[np++] = i, len *= xt->dims[i].size;
  shape[nk++] = len;
  for (int i = 0; i < xt->ndim; i++)
    if (!drop[i]) perm[np++] = i, shape[nk++] = xt->dims[i].size;
  SrVal **xs = sr_xcalloc(2 * n, sizeof *xs);
  int rc = 0;
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    SrVal *tp = rt_keep(r, sr_op_transpose(B, args[i], perm, xt->ndim));
    xs[i] = tp ? rt_keep(r, sr_op_reshape(B, tp, shape, nk, NULL)) : NULL;
    if (!xs[i]) rc = -1;
  }
  int64_t cfg[3 * SR_MAX_RANK] = {0}, st[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK], str[SR_MAX_RANK];
  cfg[1] = 1;
  for (int i = 0; i < nk; i++) str[i] = 1;
  while (rc == 0 && shape[0] > 1) {
    int64_t m = shape[0], n1 = (m + 1) / 2;
    memcpy(lim, shape, sizeof lim);
    lim[0] = n1;
    for (uint32_t i = 0; i < n && rc == 0; i++)
      if (!(xs[n + i] = rt_keep(r, sr_op_slice(B, xs[i], st, lim, str)))) rc = -1;
    int64_t st2[SR_MAX_RANK] = {0};
    st2[0] = n1;
    lim[0] = m;
    SrVal **hi = sr_xcalloc(n, sizeof *hi);
    for (uint32_t i = 0; i < n && rc == 0; i++)
      if (!(hi[i] = rt_keep(r, sr_op_slice(B, xs[i], st2, lim, str)))) rc = -1;
    for (uint32_t i = 0; i < n && rc == 0 && m - n1 != n1; i++)
      if (!(hi[i] = rt_keep(r, sr_op_pad(B, hi[i], args[n + i], cfg, nk)))) rc = -1;
    shape[0] = n1;
    SrJaxpr *vj = rc == 0 ? vmapped_reducer(I, red, shape, nk) : NULL;
    if (!vj) rc = -1;
    if (rc == 0) {
      SrVal **ins = sr_xcalloc(2 * n, sizeof *ins);
      for (uint32_t i = 0; i < n; i++) ins[i] = xs[n + i], ins[n + i] = hi[i];
      SrVal *res = rt_keep(r, sr_eval_jaxpr(I, vj, (int)(2 * n), ins));
      free(ins);
      if (!res) rc = -1;
      for (uint32_t i = 0; i < n && rc == 0; i++) xs[i] = res->seq.items[i];
    }
    if (vj) sr_program_unref(vj->prog);
    free(hi);
  }
  int64_t zero = 0;
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    outs[i] = rt_keep(r, shape[0] == 0 ? sr_op_full(B, shape + 1, nk - 1, args[n + i], -1, NULL)
                                       : sr_op_squeeze(B, xs[i], &zero, 1));
    if (!outs[i]) rc = -1;
  }
  free(xs);
  return rc;
}

/* lax._reduce_jvp_rule: api.jvp of the tree reduction (reduce_tree) by
   the rules of its equations; an init value with a tangent is JAX's
   NotImplementedError. */
JVP(jvp_reduce_general) {
  SrInterp *I = ad->I;
  uint32_t n = e->nin / 2;
  for (uint32_t i = n; i < e->nin; i++)
    if (t[i])
      return sr_raise(I, "NotImplementedError",
                      "Gradient of general lax.reduce with non-zero tangents for initial values to reduction not "
                      "implemented"),
             -1;
  const SrJaxpr *red = jaxpr_param(e, "jaxpr");
  int64_t dims[SR_MAX_RANK];
  int nd = param_ints(e, "dimensions", dims, SR_MAX_RANK);
  const SrType *xt = sr_ad_type(ad, x[0]);
  if (!red || nd < 0 || !xt) return sr_raise(I, "TypeError", "reduce: malformed params"), -1;
  int drop[SR_MAX_RANK] = {0};
  for (int i = 0; i < nd; i++) drop[dims[i] < 0 ? dims[i] + xt->ndim : dims[i]] = 1;
  const SrType **types = sr_xcalloc(2 * n, sizeof *types);
  SrVal **args = sr_xcalloc(2 * n, sizeof *args), **outs = sr_xcalloc(2 * n, sizeof *outs);
  for (uint32_t i = 0; i < 2 * n; i++) types[i] = sr_ad_type(ad, x[i]);
  SrTrace *saved = I->trace;
  SrTrace *tr = sr_ad_trace_begin(ad, (int)(2 * n), types, args);
  I->trace = tr;
  RTree r = {I, NULL, 0, 0};
  SrJaxpr *j = NULL;
  if (reduce_tree(&r, red, args, n, drop, outs) == 0) j = sr_ad_trace_end(ad, tr, (int)n, outs, NULL);
  else sr_trace_abort(I, tr);
  I->trace = saved;
  for (int i = 0; i < r.n; i++) sr_unref(r.keep[i]);
  free(r.keep);
  for (uint32_t i = 0; i < 2 * n; i++) sr_unref(args[i]);
  free(args);
  free(types);
  int rc = -1;
  if (j) {
    SrVal **yo = outs, **to = outs + n;
    memset(outs, 0, 2 * n * sizeof *outs);
    rc = sr_ad_eval(ad, j, x, t, yo, to);
    sr_program_unref(j->prog);
    for (uint32_t i = 0; i < n; i++) {
      if (rc == 0) {
        y[i] = sr_ad_keep(ad, yo[i]);
        ty[i] = to[i] ? sr_ad_keep(ad, to[i]) : NULL;
      } else {
        sr_unref(yo[i]);
        sr_unref(to[i]);
      }
    }
  }
  free(outs);
  return rc;
}

/* lax._reduce_batch_rule: the operands' batch dims moved to the front
   (an unmapped operand broadcast there), the dimensions shifted past it;
   batched init values are JAX's NotImplementedError. */
static int batch_reduce_general(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  uint32_t n = e->nin / 2;
  for (uint32_t i = n; i < e->nin; i++)
    if (bd[i] != SR_NOT_MAPPED) return sr_raise(b->ad.I, "NotImplementedError", "%s", ""), -1;
  int64_t dims[SR_MAX_RANK];
  int nd = param_ints(e, "dimensions", dims, SR_MAX_RANK);
  if (nd < 0) return sr_raise(b->ad.I, "TypeError", "reduce: malformed dimensions"), -1;
  for (int i = 0; i < nd; i++) dims[i]++;
  SrVal **in = sr_xcalloc(e->nin, sizeof *in);
  for (uint32_t i = 0; i < e->nin; i++) in[i] = i < n ? sr_batch_at_front(b, x[i], bd[i], b->size) : x[i];
  SrVal *r = sr_batch_bind_with(b, e, (int)e->nin, in, "dimensions", sr_ad_ints(dims, nd), NULL);
  free(in);
  if (!r) return -1;
  for (uint32_t i = 0; i < n; i++) {
    y[i] = r->seq.items[i];
    ybd[i] = 0;
  }
  return 0;
}

/* ==== argmax, argmin ==== */

/* argmax, argmin (lax._argminmax_*): one axis, an integer index dtype. */
static int type_argminmax(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t axes[SR_MAX_RANK];
  int n = 0, has = 0;
  SrDtype idt = SR_I32;
  if (sr_rparam_ints(cx, e, "axes", 1, axes, SR_MAX_RANK, &n) < 0 ||
      sr_rparam_dtype(cx, e, "index_dtype", &idt, &has) < 0)
    return -1;
  if (n != 1) return sr_terr(cx, "ValueError", "not enough values to unpack (expected 1, got %d)", n);
  SrBuf sh = SR_BUF_INIT;
  sr_shape_str(&sh, x);
  int rc = 0;
  if (axes[0] < 0 || axes[0] >= x->ndim)
    rc = sr_terr(cx, "ValueError", "Invalid axis %lld for operand shape %s", (long long)axes[0], sr_buf_str(&sh));
  else if (x->dims[axes[0]].size < 1 && !x->dims[axes[0]].sym)
    rc = sr_terr(cx, "ValueError",
                 "argmin and argmax require non-empty reduced dimension. operand.shape=%s axis=%lld", sr_buf_str(&sh),
                 (long long)axes[0]);
  sr_buf_free(&sh);
  if (rc) return -1;
  if (!has || !sr_dtype_in(idt, SR_DC_INT))
    return sr_terr(cx, "TypeError", "index_dtype must be an integer type, but got %s", has ? sr_dtype_name(idt) : "None");
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || spec_guard(cx, &s, x, 0) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  int drop[SR_MAX_RANK] = {0};
  drop[axes[0]] = 1;
  SrTypeBuilder b;
  reduced_builder(&b, x, drop, &s);
  b.dtype = idt;
  b.weak = 0;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

static int arg_fn(SrShardIO *io) {
  AxisArg *a = io->arg;
  if (sr_kern_argminmax(a->is_max, a->dt, a->idt, a->nd, io->in_shape[0], a->axis, io->in[0]->data,
                        io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "argmax of dtype %s", sr_dtype_name(a->dt));
  return 0;
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

/* ==== cumsum, cumprod, cummax, cummin ==== */

/* cumsum, cumprod, cummax, cummin (control_flow/loops.py
   _cumred_shape_rule, _cumred_sharding_rule): the operand's type, which
   must not be sharded along the axis. */
static int type_cumred(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t axis = 0;
  int rev = 0;
  if (sr_rparam_int(cx, e, "axis", 1, &axis) < 0 || sr_rparam_bool(cx, e, "reverse", 0, &rev) < 0) return -1;
  if (axis < 0) return sr_terr(cx, "ValueError", "XLA operations do not allow negative axes");
  if (axis >= x->ndim) {
    SrBuf a = SR_BUF_INIT;
    sr_shape_str(&a, x);
    sr_terr(cx, "ValueError", "axis %lld is out of bounds for array of shape %s", (long long)axis, sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if (number_dtype(cx, e->prim->name, x) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || spec_guard(cx, &s, x, 0) < 0) return -1;
  if (s.mode == SR_MODE_EXPLICIT && x->dims[axis].nax) {
    SrBuf a = SR_BUF_INIT;
    sr_aval_str(&a, x);
    sr_terr(cx, "ShardingTypeError", "Input should be unsharded over the axis being reduced. Got input type=%s and axis=%lld",
            sr_buf_str(&a), (long long)axis);
    sr_buf_free(&a);
    return -1;
  }
  if (sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, x);
  b.unreduced = b.reduced = b.varying = 0;
  if (s.mode != SR_MODE_EXPLICIT) sr_builder_replicate(&b);
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* cumlogsumexp's accumulation: lax_other.logaddexp, one element at a time */
enum { CUM_LOGADDEXP = -1 };
#define LOGADDEXP(T, LOG1P, EXP, FABS)                                                          \
  static T logaddexp_##T(T x, T y) {                                                           \
    T amax = x < y ? y : x, d = x - y;                                                         \
    return d != d ? x + y : amax + LOG1P(EXP(-FABS(d)));                                       \
  }                                                                                            \
  static void cumlogsumexp_##T(int nd, const int64_t *shape, int axis, int rev, const T *in, T *out) { \
    int64_t outer = 1, inner = 1, n = shape[axis];                                             \
    for (int i = 0; i < axis; i++) outer *= shape[i];                                          \
    for (int i = axis + 1; i < nd; i++) inner *= shape[i];                                     \
    for (int64_t o = 0; o < outer; o++)                                                        \
      for (int64_t j = 0; j < inner; j++) {                                                    \
        T acc = 0;                                                                             \
        for (int64_t k = 0; k < n; k++) {                                                      \
          int64_t at = (o * n + (rev ? n - 1 - k : k)) * inner + j;                            \
          acc = k ? logaddexp_##T(acc, in[at]) : in[at];                                       \
          out[at] = acc;                                                                       \
        }                                                                                      \
      }                                                                                        \
  }
LOGADDEXP(float, log1pf, expf, fabsf)
LOGADDEXP(double, log1p, exp, fabs)
#undef LOGADDEXP

static int cum_fn(SrShardIO *io) {
  AxisArg *a = io->arg;
  if (a->op == CUM_LOGADDEXP) {
    if (a->dt == SR_F32)
      cumlogsumexp_float(a->nd, io->in_shape[0], a->axis, a->reverse, io->in[0]->data, io->out[0]->data);
    else if (a->dt == SR_F64)
      cumlogsumexp_double(a->nd, io->in_shape[0], a->axis, a->reverse, io->in[0]->data, io->out[0]->data);
    else if (a->dt == SR_F16 || a->dt == SR_BF16) {
      /* in float32, rounded back (XLA:CPU's 16-bit elementwise ops) */
      size_t n = io->in[0]->nbytes / 2;
      float *w = sr_xmalloc(sizeof *w * (n ? 2 * n : 1));
      const uint16_t *x = io->in[0]->data;
      uint16_t *y = io->out[0]->data;
      for (size_t i = 0; i < n; i++) w[i] = (float)sr_kern_get_f64(a->dt, x + i);
      cumlogsumexp_float(a->nd, io->in_shape[0], a->axis, a->reverse, w, w + n);
      for (size_t i = 0; i < n; i++) sr_kern_set_scalar(a->dt, w[n + i], 0, y + i);
      free(w);
    } else
      return sr_ev_err(io->cx, "NotImplementedError", "cumlogsumexp of dtype %s", sr_dtype_name(a->dt));
    return 0;
  }
  if (sr_kern_cumulative(a->op, a->dt, a->nd, io->in_shape[0], a->axis, a->reverse, io->in[0]->data,
                         io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "cumulative reduction of dtype %s", sr_dtype_name(a->dt));
  return 0;
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
  if (id == SR_P_cumlogsumexp) op = CUM_LOGADDEXP;
  AxisArg a = {op, 0, (int)reverse, (int)axis, x->type->ndim, x->type->dtype, t->dtype};
  SrArray *r = sr_array_new(t, without_dim_axes(l, (int)axis, xin->layout), m);
  int rc = sr_ev_map(cx, 1, &xin, 1, &r, 0, cum_fn, &a);
  sr_array_unref(xin);
  if (rc == 0) e->out[0] = sr_redistribute_typed(cx, r, m, l, t);
  sr_array_unref(r);
  return rc < 0 || !e->out[0] ? -1 : 0;
}

/* loops._cumred_batch_rule: the axis shifted past the batch dim, which
   stays. */
static int batch_cumred(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  if (e->nin != 1) return sr_batch_no_rule(b, e->prim);
  int64_t axis = param_int(e, "axis", 0);
  if (axis >= bd[0]) axis++;
  y[0] = sr_batch_bind_with(b, e, (int)e->nin, x, "axis", sr_int(NULL, axis), NULL);
  ybd[0] = bd[0];
  return y[0] ? 0 : -1;
}

TR(tr_cumsum) {
  (void)x;
  SrVal *c = ct[0];
  cx[0] = sr_ad_bindv(ad, SR_P_cumsum, 1, &c, "axis", sr_int(NULL, param_int(e, "axis", 0)), "reverse",
                   sr_bool(!param_int(e, "reverse", 0)), NULL);
  return cx[0] ? 0 : -1;
}

#undef TR
#undef JVP

/* ==== registration ==== */

static void type_rules_reduce(void) {
  sr_set_type_rule(SR_P_reduce_sum, type_reduce_with_out);
  sr_set_type_rule(SR_P_reduce_max, type_reduce_with_out);
  sr_set_type_rule(SR_P_reduce_min, type_reduce_with_out);
  sr_set_type_rule(SR_P_reduce_prod, type_reduce_plain);
  sr_set_type_rule(SR_P_reduce_and, type_reduce_plain);
  sr_set_type_rule(SR_P_reduce_or, type_reduce_plain);
  sr_set_type_rule(SR_P_reduce_xor, type_reduce_plain);
  sr_set_type_rule(SR_P_reduce, type_reduce_general);
  sr_set_type_rule(SR_P_argmax, type_argminmax);
  sr_set_type_rule(SR_P_argmin, type_argminmax);
  sr_set_type_rule(SR_P_cumsum, type_cumred);
  sr_set_type_rule(SR_P_cumprod, type_cumred);
  sr_set_type_rule(SR_P_cummax, type_cumred);
  sr_set_type_rule(SR_P_cummin, type_cumred);
  sr_set_type_rule(SR_P_cumlogsumexp, type_cumred);
}

static void eval_rules_reduce(void) {
  sr_set_eval_rule(SR_P_reduce_sum, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_max, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_min, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_prod, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_and, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_or, ev_reduce);
  sr_set_eval_rule(SR_P_reduce_xor, ev_reduce);
  sr_set_eval_rule(SR_P_reduce, ev_reduce_general);
  sr_set_eval_rule(SR_P_argmax, ev_argminmax);
  sr_set_eval_rule(SR_P_argmin, ev_argminmax);
  sr_set_eval_rule(SR_P_cumsum, ev_cumulative);
  sr_set_eval_rule(SR_P_cumprod, ev_cumulative);
  sr_set_eval_rule(SR_P_cummax, ev_cumulative);
  sr_set_eval_rule(SR_P_cummin, ev_cumulative);
  sr_set_eval_rule(SR_P_cumlogsumexp, ev_cumulative);
}

static void ad_rules_reduce(void) {
  static const int zero[] = {SR_P_argmax, SR_P_argmin, SR_P_reduce_and, SR_P_reduce_or, SR_P_reduce_xor};
  for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) sr_ad_set_jvp(zero[i], sr_ad_jvp_zero);
  sr_ad_set_jvp(SR_P_reduce_sum, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reduce_sum, tr_reduce_sum);
  sr_ad_set_jvp(SR_P_reduce_max, jvp_reduce_chooser);
  sr_ad_set_jvp(SR_P_reduce_min, jvp_reduce_chooser);
  sr_ad_set_jvp(SR_P_reduce_prod, jvp_reduce_prod);
  sr_ad_set_jvp(SR_P_reduce, jvp_reduce_general);
  sr_ad_set_jvp(SR_P_cumsum, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_cumsum, tr_cumsum);
}

static void comm_rules_reduce(void) {
  static const int ids[] = {SR_P_reduce_sum, SR_P_reduce_max, SR_P_reduce_min, SR_P_reduce_prod,
                            SR_P_reduce_and, SR_P_reduce_or,  SR_P_reduce_xor, SR_P_argmax,     SR_P_argmin};
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) sr_prims[ids[i]].comm = comm_reduce;
}

static void batch_rules_reduce(void) {
  static const int red[] = {SR_P_reduce_sum, SR_P_reduce_max, SR_P_reduce_min, SR_P_reduce_prod,
                            SR_P_reduce_and, SR_P_reduce_or,  SR_P_reduce_xor, SR_P_argmax,     SR_P_argmin};
  static const int cum[] = {SR_P_cumsum, SR_P_cumprod, SR_P_cummax, SR_P_cummin, SR_P_cumlogsumexp};
  for (size_t i = 0; i < sizeof red / sizeof *red; i++) sr_prims[red[i]].batch = batch_reducer;
  for (size_t i = 0; i < sizeof cum / sizeof *cum; i++) sr_prims[cum[i]].batch = batch_cumred;
  sr_prims[SR_P_reduce].batch = batch_reduce_general;
}

void sr_lax_reduce_init(void) {
  type_rules_reduce();
  eval_rules_reduce();
  ad_rules_reduce();
  comm_rules_reduce();
  batch_rules_reduce();
}
