/* rules_reduce.c: type rules of the reductions (reduce_sum, reduce_max,
 * reduce_min, reduce_prod, reduce_and, reduce_or, argmax, argmin) and the
 * cumulative reductions (cumsum, cumprod, cummax, cummin).
 *
 * A reduction drops the specs of the reduced dimensions (reference 3.5):
 * reducing over a sharded dimension is allowed and means an implicit
 * all-reduce.  reduce_sum/max/min take an `out_sharding`, which may make the
 * result unreduced (of kind sum, max or min); the other reductions have no
 * ur rule.  A cumulative reduction must not be sharded along its axis.
 */
#include <string.h>

#include "prims/rule.h"
#include "text/print_val.h"

void sr_rules_reduce_init(void);

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

static const char *ukind_enum(int k) {
  return k == SR_UK_MAX ? "UnreducedKind.max" : k == SR_UK_MIN ? "UnreducedKind.min" : "UnreducedKind.sum";
}

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
                ukind_enum(kind), sr_buf_str(&sb));
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

void sr_rules_reduce_init(void) {
  sr_set_type_rule(SR_P_reduce_sum, type_reduce_with_out);
  sr_set_type_rule(SR_P_reduce_max, type_reduce_with_out);
  sr_set_type_rule(SR_P_reduce_min, type_reduce_with_out);
  sr_set_type_rule(SR_P_reduce_prod, type_reduce_plain);
  sr_set_type_rule(SR_P_reduce_and, type_reduce_plain);
  sr_set_type_rule(SR_P_reduce_or, type_reduce_plain);
  sr_set_type_rule(SR_P_argmax, type_argminmax);
  sr_set_type_rule(SR_P_argmin, type_argminmax);
  sr_set_type_rule(SR_P_cumsum, type_cumred);
  sr_set_type_rule(SR_P_cumprod, type_cumred);
  sr_set_type_rule(SR_P_cummax, type_cumred);
  sr_set_type_rule(SR_P_cummin, type_cumred);
}
