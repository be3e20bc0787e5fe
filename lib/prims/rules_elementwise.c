/* rules_elementwise.c: type rules of the elementwise primitives.
 *
 * Unary ops keep their operand's sharding and pass `reduced` through but
 * reject `unreduced` (lax.unop); n-ary ops broadcast shapes and shardings
 * dimension by dimension (lax.broadcasting_shape_rule,
 * broadcasting_sharding_rule) and combine unreduced/reduced sets with one
 * of the ur rules of lax.py.  Also here: select_n, clamp,
 * convert_element_type, integer_pow, reduce_precision, add_any and the
 * identity primitives (copy, stop_gradient).
 */
#include <string.h>

#include "prims/rule.h"
#include "text/print_val.h"

void sr_rules_elementwise_init(void);

/* ---- unary ---- */

typedef enum { RES_SAME, RES_BOOL, RES_REAL } ResultDtype;

/* The real dtype of a complex one (lax._complex_basetype). */
static SrDtype real_of(SrDtype d) {
  if (d == SR_C64) return SR_F32;
  if (d == SR_C128) return SR_F64;
  return d;
}

static const struct {
  int id;
  unsigned accepted;
  uint8_t result;      /* ResultDtype */
  uint8_t narrow_ints; /* accepts int2/int4/uint2/uint4 */
} unops[] = {
  {SR_P_neg, SR_DC_NUM, RES_SAME, 1},
  {SR_P_sign, SR_DC_NUM, RES_SAME, 1},
  {SR_P_abs, SR_DC_SIGNED | SR_DC_FLOAT | SR_DC_COMPLEX, RES_REAL, 0},
  {SR_P_exp, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_exp2, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_log, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_expm1, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_log1p, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_sin, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_cos, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_tan, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_tanh, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_logistic, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_sqrt, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_rsqrt, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_cbrt, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_square, SR_DC_NUM, RES_SAME, 1},
  {SR_P_floor, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_ceil, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_round, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_not, SR_DC_INT | SR_DC_BOOL, RES_SAME, 1},
  {SR_P_is_finite, SR_DC_FLOAT, RES_BOOL, 1},
  {SR_P_erf, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_erf_inv, SR_DC_FLOAT, RES_SAME, 1},
};

/* lax.unop_dtype_rule. */
static int unop_dtype(SrTypeCtx *cx, const char *name, const SrType *x, unsigned accepted, int narrow_ints) {
  if (x->dtype == SR_FLOAT0) return sr_float0_error(cx, name, -1);
  if (!sr_dtype_in(x->dtype, accepted)) {
    SrBuf b = SR_BUF_INIT;
    sr_dtype_classes_str(&b, accepted);
    sr_terr(cx, "TypeError", "%s does not accept dtype %s. Accepted dtypes are subtypes of %s.", name,
            sr_dtype_name(x->dtype), sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (!narrow_ints && (x->dtype == SR_I2 || x->dtype == SR_I4 || x->dtype == SR_U2 || x->dtype == SR_U4))
    return sr_terr(cx, "TypeError",
                   "%s does not accept dtype %s. Support for narrow-width integers is platform-dependent and "
                   "limited to a few specific operations, e.g. basic arithmetic and type casting.",
                   name, sr_dtype_name(x->dtype));
  return 0;
}

/* The sharding half of a rule whose result has its operand's shape and
   sharding (`sharding_rule=_attrgetter('sharding')`). */
static void same_sharding(SrTypeBuilder *b, const SrType *x, const SrStd *s) {
  sr_type_builder(b, x);
  b->unreduced = b->reduced = b->varying = 0;
  b->ukind = SR_UK_NONE;
  if (s->mode != SR_MODE_EXPLICIT) sr_builder_replicate(b);
  if (!b->mesh) b->mesh = s->mesh;
}

/* lax.unop with unop_ur_rule: reduced passes, unreduced is an error. */
static int type_unop(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  size_t k = 0;
  while (k < sizeof unops / sizeof unops[0] && unops[k].id != e->prim->id) k++;
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  /* the older printer's untyped literal (`neg 1.0`) had the result's dtype */
  if (e->inv && sr_is_bare_lit(e->inv[0]) && sr_written(e, 0) && unops[k].result == RES_SAME)
    x = sr_type_with_dtype(x, sr_written(e, 0)->dtype);
  if (unop_dtype(cx, e->prim->name, x, unops[k].accepted, unops[k].narrow_ints) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  b.dtype = unops[k].result == RES_BOOL ? SR_BOOL : unops[k].result == RES_REAL ? real_of(x->dtype) : x->dtype;
  b.weak = x->weak;
  if (s.mode != SR_MODE_AUTO) {
    SrAxes u;
    if (sr_getu(cx, x, &u) < 0) return -1;
    if (u)
      return sr_terr(cx, "NotImplementedError",
                     "unreduced rule for %s is not implemented. Please file an issue at "
                     "https://github.com/jax-ml/jax/issues",
                     e->prim->name);
    b.reduced = sr_getr(cx, x);
  }
  b.varying = x->varying; /* unop's vma rule: the operand's, unchecked */
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

/* lax.integer_pow_p: a unop without an ur rule. */
static int type_integer_pow(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t y = 0;
  if (sr_rparam_int(cx, e, "y", 1, &y) < 0) return -1;
  if (unop_dtype(cx, "integer_pow", x, SR_DC_NUM, 1) < 0) return -1;
  if (y < 0 && sr_dtype_in(x->dtype, SR_DC_INT)) {
    SrBuf b = SR_BUF_INIT;
    sr_aval_str(&b, x);
    sr_terr(cx, "TypeError", "Integers cannot be raised to negative powers, got integer_pow(%s, %lld)",
            sr_buf_str(&b), (long long)y);
    sr_buf_free(&b);
    return -1;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  b.varying = x->varying;
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

/* lax.reduce_precision_p: float operands, sets pass through. */
static int type_reduce_precision(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t ebits = 0, mbits = 0;
  if (sr_rparam_int(cx, e, "exponent_bits", 1, &ebits) < 0 || sr_rparam_int(cx, e, "mantissa_bits", 1, &mbits) < 0)
    return -1;
  if (ebits < 1)
    return sr_terr(cx, "ValueError", "reduce_precision: exponent_bits must be positive; got %lld", (long long)ebits);
  if (mbits < 0)
    return sr_terr(cx, "ValueError", "reduce_precision: mantissa_bits must be non-negative; got %lld",
                   (long long)mbits);
  if (unop_dtype(cx, "reduce_precision", x, SR_DC_FLOAT, 1) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  if (s.mode != SR_MODE_AUTO) {
    if (sr_getu(cx, x, &b.unreduced) < 0) return -1;
    b.reduced = sr_getr(cx, x);
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

/* Primitives whose abstract eval is the identity: copy_p, stop_gradient,
   layout_constraint (lax.copy_p, ad_util.stop_gradient_p). */
static int type_identity(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  out[0] = e->in[0];
  return 0;
}

/* ---- n-ary: shapes and shardings ---- */

/* lax._try_broadcast_shapes over the non-scalar operands
   (broadcasting_shape_rule). */
static int nary_shape(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  const SrType *shaped[64];
  int n = 0;
  for (uint32_t i = 0; i < e->nin && n < 64; i++)
    if (ts[i]->ndim) shaped[n++] = ts[i];
  b->ndim = 0;
  if (!n) return 0;
  int rank = shaped[0]->ndim;
  for (int i = 1; i < n; i++)
    if (shaped[i]->ndim != rank) {
      /* the set of ranks, which Python prints in increasing order */
      SrBuf rb = SR_BUF_INIT;
      int seen[SR_MAX_RANK + 1] = {0};
      for (int k = 0; k < n; k++) seen[shaped[k]->ndim] = 1;
      int first = 1;
      sr_buf_putc(&rb, '{');
      for (int r = 0; r <= SR_MAX_RANK; r++)
        if (seen[r]) {
          sr_buf_printf(&rb, first ? "%d" : ", %d", r);
          first = 0;
        }
      sr_buf_putc(&rb, '}');
      sr_terr(cx, "TypeError", "%s: arrays must have the same number of dimensions, got %s", e->prim->name,
              sr_buf_str(&rb));
      sr_buf_free(&rb);
      return -1;
    }
  b->ndim = (uint8_t)rank;
  for (int d = 0; d < rank; d++) {
    const SrDim *pick = &shaped[0]->dims[d];
    int all_same = 1;
    for (int i = 1; i < n; i++)
      if (!sr_dim_same(&shaped[i]->dims[d], pick)) all_same = 0;
    if (!all_same) {
      pick = NULL;
      for (int i = 0; i < n; i++) {
        const SrDim *x = &shaped[i]->dims[d];
        if (x->size == 1 && !x->sym) continue;
        if (!pick) {
          pick = x;
        } else if (!sr_dim_same(pick, x)) {
          SrBuf sb = SR_BUF_INIT;
          for (int k = 0; k < n; k++) {
            if (k) sr_buf_puts(&sb, ", ");
            sr_shape_str(&sb, shaped[k]);
          }
          sr_terr(cx, "TypeError", "%s got incompatible shapes for broadcasting: %s.", e->prim->name, sr_buf_str(&sb));
          sr_buf_free(&sb);
          return -1;
        }
      }
    }
    memset(&b->dims[d], 0, sizeof b->dims[d]);
    if (pick) {
      b->dims[d].size = pick->size;
      b->dims[d].sym = pick->sym;
    } else {
      b->dims[d].size = 1;
    }
  }
  return 0;
}

/* lax.broadcasting_sharding_rule: per dimension, equal specs pass; else
   the specs of non-trivial operands (not size 1 with None) must agree,
   None giving way to a sharded spec. */
static int nary_sharding(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  const SrMesh *m = NULL;
  if (sr_inputs_mesh(cx, e, "ShardingTypeError", &m) < 0) return -1;
  const SrType *shaped[64];
  int n = 0;
  for (uint32_t i = 0; i < e->nin && n < 64; i++)
    if (ts[i]->ndim) shaped[n++] = ts[i];
  for (int d = 0; d < b->ndim; d++) {
    const SrType *res = shaped[0];
    int all_same = 1;
    for (int i = 1; i < n; i++)
      if (!sr_spec_entry_eq(shaped[i], d, shaped[0], d)) all_same = 0;
    if (!all_same) {
      /* the non-trivial entries */
      res = NULL;
      int nontriv_same = 1;
      for (int i = 0; i < n; i++) {
        const SrDim *x = &shaped[i]->dims[d];
        if (x->size == 1 && !x->sym && !x->nax) continue;
        if (!res) res = shaped[i];
        else if (!sr_spec_entry_eq(shaped[i], d, res, d)) nontriv_same = 0;
      }
      if (res && !nontriv_same) {
        /* the first sharded entry wins; another sharded one is an error */
        res = NULL;
        for (int i = 0; i < n; i++) {
          if (!shaped[i]->dims[d].nax) continue;
          if (!res) {
            res = shaped[i];
          } else if (!sr_spec_entry_eq(shaped[i], d, res, d)) {
            SrBuf sb = SR_BUF_INIT;
            for (int k = 0; k < n; k++) {
              if (k) sr_buf_puts(&sb, ", ");
              sr_partitions_str(&sb, shaped[k], NULL, 0);
            }
            sr_terr(cx, "ShardingTypeError", "%s got incompatible shardings for broadcasting: %s.", e->prim->name,
                    sr_buf_str(&sb));
            sr_buf_free(&sb);
            return -1;
          }
        }
      }
    }
    b->dims[d].nax = 0;
    if (res && res->dims[d].nax) {
      /* axis indices of the result mesh */
      const SrDim *x = &res->dims[d];
      b->dims[d].nax = x->nax;
      for (int k = 0; k < x->nax; k++) {
        int a = b->mesh ? sr_mesh_axis(b->mesh, res->mesh->names[x->ax[k]]) : -1;
        if (a < 0) {
          b->mesh = res->mesh;
          a = x->ax[k];
        }
        b->dims[d].ax[k] = (uint8_t)a;
      }
    }
  }
  return 0;
}

/* ---- n-ary: unreduced and reduced ---- */

/* The axes of the context mesh an operand is replicated over
   (lax.replicated_axes). */
static SrAxes replicated_axes(SrTypeCtx *cx, const SrType *t) {
  if (!cx->mesh || !cx->mesh->n) return 0;
  SrAxes all = (SrAxes)((1ull << cx->mesh->n) - 1);
  return all & ~(sr_type_sharded_axes(t) | t->unreduced | t->reduced | t->varying);
}

/* The mesh names for messages about a rule's sets. */
static const SrMesh *msg_mesh(SrTypeCtx *cx, const SrRuleEqn *e) {
  for (uint32_t i = 0; i < e->nin; i++)
    if (e->in[i]->mesh) return e->in[i]->mesh;
  return cx->mesh && cx->mesh->n ? sr_mesh_shape(cx->mesh) : NULL;
}

/* lax.default_nary_reduced_rule: every reduced operand is reduced over
   the same axes, and no operand is replicated, sharded or varying on
   them. */
static int nary_reduced(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrAxes *out) {
  const SrMesh *m = msg_mesh(cx, e);
  SrAxes sets[64];
  int nsets = 0;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrAxes r = sr_getr(cx, ts[i]);
    if (!r) continue;
    int k = 0;
    while (k < nsets && sets[k] != r) k++;
    if (k == nsets && nsets < 64) sets[nsets++] = r;
  }
  if (nsets > 1) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '{');
    for (int k = 0; k < nsets; k++) {
      if (k) sr_buf_puts(&b, ", ");
      sr_axes_frozenset_str(&b, m, sets[k]);
    }
    sr_buf_putc(&b, '}');
    sr_terr(cx, "ShardingTypeError", "All inputs should be reduced across the same mesh axes. Got specs: %s",
            sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  SrAxes r = nsets ? sets[0] : 0;
  *out = r;
  if (!r) return 0;
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *a = ts[i];
    const char *msg = NULL;
    if (replicated_axes(cx, a) & r)
      msg = "Inputs cannot be replicated on the same axes that another input is reduced on. Got input type: %s "
            "and reduced spec: %s";
    else if ((sr_type_sharded_axes(a) | a->varying) & r)
      msg = "Inputs cannot be sharded/varying on the same axes that another input is reduced on. Reshard the "
            "input which is reduced to be sharded on the mesh axes it is reduced on via "
            "`jax.sharding.reshard(inp, jax.P(...))`. Got input type: %s and reduced spec: %s";
    if (!msg) continue;
    SrBuf at = SR_BUF_INIT, rs = SR_BUF_INIT;
    sr_aval_str(&at, a);
    sr_axes_frozenset_str(&rs, m, r);
    sr_terr(cx, "ShardingTypeError", msg, sr_buf_str(&at), sr_buf_str(&rs));
    sr_buf_free(&at);
    sr_buf_free(&rs);
    return -1;
  }
  return 0;
}

static int unreduced_not_implemented(SrTypeCtx *cx, const char *name) {
  return sr_terr(cx, "NotImplementedError",
                 "unreduced rule for %s is not implemented. Please file an issue at "
                 "https://github.com/jax-ml/jax/issues",
                 name);
}

/* lax.nary_ur_rule: no operand may be unreduced. */
static int nary_ur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  if (nary_reduced(cx, e, ts, &b->reduced) < 0) return -1;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrAxes u;
    if (sr_getu(cx, ts[i], &u) < 0) return -1;
    if (u) return unreduced_not_implemented(cx, e->prim->name);
  }
  return 0;
}

/* lax._add_ur_rule: both sides unreduced over the same axes, or
   neither. */
static int add_ur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  if (nary_reduced(cx, e, ts, &b->reduced) < 0) return -1;
  SrAxes xu, yu;
  if (sr_getu(cx, ts[0], &xu) < 0 || sr_getu(cx, ts[1], &yu) < 0) return -1;
  if (xu && yu) {
    if (xu != yu) {
      const SrMesh *m = msg_mesh(cx, e);
      SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
      sr_axes_frozenset_str(&x, m, xu);
      sr_axes_frozenset_str(&y, m, yu);
      sr_terr(cx, "ShardingTypeError",
              "lhs and rhs to `add` must be unreduced along the same mesh axes. Got lhs=%s, rhs=%s", sr_buf_str(&x),
              sr_buf_str(&y));
      sr_buf_free(&x);
      sr_buf_free(&y);
      return -1;
    }
    b->unreduced = xu;
  } else if (xu || yu) {
    const char *l = xu ? "lhs" : "rhs", *r = xu ? "rhs" : "lhs";
    return sr_terr(cx, "ShardingTypeError",
                   "%s is unreduced while %s is not. `add` operation does not allow this because there will be "
                   "implicit communication. Please reduce %s via `reshard` before calling `add`.",
                   l, r, l);
  }
  return 0;
}

static int ur_pair_error(SrTypeCtx *cx, const char *exc, const char *fmt, const SrType *x, const SrType *y,
                         int repr) {
  SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
  if (repr) {
    sr_aval_repr(&a, x);
    sr_aval_repr(&c, y);
  } else {
    sr_aval_str(&a, x);
    sr_aval_str(&c, y);
  }
  sr_terr(cx, exc, fmt, sr_buf_str(&a), sr_buf_str(&c));
  sr_buf_free(&a);
  sr_buf_free(&c);
  return -1;
}

/* lax._mul_ur_rule: mul is bilinear, so one side may be unreduced if the
   other is reduced over the same axes. */
static int mul_ur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  if (nary_reduced(cx, e, ts, &b->reduced) < 0) return -1;
  const SrType *x = ts[0], *y = ts[1];
  SrAxes xu, yu;
  if (sr_getu(cx, x, &xu) < 0 || sr_getu(cx, y, &yu) < 0) return -1;
  if (xu && yu) {
    const SrMesh *m = msg_mesh(cx, e);
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_axes_frozenset_str(&a, m, xu);
    sr_axes_frozenset_str(&c, m, yu);
    sr_terr(cx, "ShardingTypeError", "lhs and rhs to `mul` cannot be unreduced since mul is bilinear. Got lhs=%s, rhs=%s",
            sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  if (xu && xu != sr_getr(cx, y))
    return ur_pair_error(cx, "ShardingTypeError",
                         "RHS should be reduced along the same axes LHS is unreduced on. Got lhs=%s and rhs=%s", x, y, 0);
  if (yu && sr_getr(cx, x) != yu)
    return ur_pair_error(cx, "ShardingTypeError",
                         "LHS should be reduced along the same axes RHS is unreduced on. Got lhs=%s and rhs=%s", x, y, 0);
  b->unreduced = xu | yu;
  if (b->unreduced) b->reduced = 0; /* the reduced set equals it, and is used up */
  return 0;
}

/* lax._div_ur_rule: the numerator may be unreduced over the axes the
   denominator is reduced over. */
static int div_ur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  if (nary_reduced(cx, e, ts, &b->reduced) < 0) return -1;
  const SrType *x = ts[0], *y = ts[1];
  SrAxes xu, yu;
  if (sr_getu(cx, x, &xu) < 0 || sr_getu(cx, y, &yu) < 0) return -1;
  if (yu) {
    SrBuf a = SR_BUF_INIT;
    sr_aval_repr(&a, y);
    sr_terr(cx, "ValueError", "The denominator cannot be unreduced passed to `div`. Got y=%s", sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if (xu && xu != sr_getr(cx, y))
    return ur_pair_error(cx, "ValueError",
                         "Denominator should be reduced along the same axes numerator is unreduced on. Got x=%s, y=%s",
                         x, y, 1);
  b->unreduced = xu;
  if (xu) b->reduced = 0;
  return 0;
}

typedef int (*UrRule)(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b);

static const struct {
  int id;
  unsigned accepted[2]; /* dtype classes of each position */
  uint8_t result;       /* ResultDtype */
  uint8_t extended;     /* allow_extended_dtype */
  UrRule ur;
} naryops[] = {
  {SR_P_add, {SR_DC_NUM, SR_DC_NUM}, RES_SAME, 0, add_ur},
  {SR_P_sub, {SR_DC_NUM, SR_DC_NUM}, RES_SAME, 0, nary_ur},
  {SR_P_mul, {SR_DC_NUM, SR_DC_NUM}, RES_SAME, 0, mul_ur},
  {SR_P_div, {SR_DC_NUM, SR_DC_NUM}, RES_SAME, 0, div_ur},
  {SR_P_rem, {SR_DC_INT | SR_DC_FLOAT, SR_DC_INT | SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_pow, {SR_DC_FLOAT | SR_DC_COMPLEX, SR_DC_NUM}, RES_SAME, 0, nary_ur},
  {SR_P_max, {SR_DC_ANY, SR_DC_ANY}, RES_SAME, 0, nary_ur},
  {SR_P_min, {SR_DC_ANY, SR_DC_ANY}, RES_SAME, 0, nary_ur},
  {SR_P_atan2, {SR_DC_FLOAT | SR_DC_COMPLEX, SR_DC_FLOAT | SR_DC_COMPLEX}, RES_SAME, 0, nary_ur},
  {SR_P_nextafter, {SR_DC_FLOAT, SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_eq, {SR_DC_ANY, SR_DC_ANY}, RES_BOOL, 1, nary_ur},
  {SR_P_ne, {SR_DC_ANY, SR_DC_ANY}, RES_BOOL, 1, nary_ur},
  {SR_P_lt, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_le, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_gt, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_ge, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_and, {SR_DC_INT | SR_DC_BOOL, SR_DC_INT | SR_DC_BOOL}, RES_SAME, 0, nary_ur},
  {SR_P_or, {SR_DC_INT | SR_DC_BOOL, SR_DC_INT | SR_DC_BOOL}, RES_SAME, 0, nary_ur},
  {SR_P_xor, {SR_DC_INT | SR_DC_BOOL, SR_DC_INT | SR_DC_BOOL}, RES_SAME, 0, nary_ur},
  {SR_P_shift_left, {SR_DC_INT, SR_DC_INT}, RES_SAME, 0, nary_ur},
  {SR_P_shift_right_logical, {SR_DC_INT, SR_DC_INT}, RES_SAME, 0, nary_ur},
  {SR_P_shift_right_arithmetic, {SR_DC_INT, SR_DC_INT}, RES_SAME, 0, nary_ur},
};

/* lax.naryop_dtype_rule: each operand's dtype class, then equal dtypes
   (unless mul has an out_dtype, or for pow). */
static int nary_dtype(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, const unsigned *accepted,
                      int extended, int require_same) {
  const char *name = e->prim->name;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrDtype d = ts[i]->dtype;
    if (extended && sr_dtype_kind(d) == SR_DK_OTHER) continue;
    if (sr_dtype_in(d, accepted[i])) continue;
    if (d == SR_FLOAT0) return sr_float0_error(cx, name, (int)i);
    SrBuf b = SR_BUF_INIT;
    sr_dtype_classes_str(&b, accepted[i]);
    sr_terr(cx, "TypeError",
            "%s does not accept dtype %s at position %u. Accepted dtypes at position %u are subtypes of %s.", name,
            sr_dtype_name(d), i, i, sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (require_same) return sr_check_same_dtypes(cx, name, ts, e->nin);
  return 0;
}

/* lax.naryop: the binary arithmetic, comparison and bitwise ops. */
static int type_naryop(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  size_t k = 0;
  while (k < sizeof naryops / sizeof naryops[0] && naryops[k].id != e->prim->id) k++;
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *ts[2];
  sr_resolve_bare_literals(e, ts);
  SrDtype out_dtype = 0;
  int has_out_dtype = 0;
  if (e->prim->id == SR_P_mul && sr_rparam_dtype(cx, e, "out_dtype", &out_dtype, &has_out_dtype) < 0) return -1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  if (nary_shape(cx, e, ts, &b) < 0) return -1;
  if (nary_dtype(cx, e, ts, naryops[k].accepted, naryops[k].extended,
                 e->prim->id != SR_P_pow && !has_out_dtype) < 0)
    return -1;
  if (e->prim->id == SR_P_pow && !(sr_dtype_in(ts[0]->dtype, SR_DC_FLOAT | SR_DC_COMPLEX) &&
                                   sr_dtype_in(ts[1]->dtype, SR_DC_INT)) &&
      ts[0]->dtype != ts[1]->dtype)
    return sr_terr(cx, "TypeError",
                   "the first argument to pow must have an inexact dtype (float or complex), and the second "
                   "argument must have an inexact or integer dtype, and two inexact dtypes must match, but got %s "
                   "and %s respectively.",
                   sr_dtype_name(ts[0]->dtype), sr_dtype_name(ts[1]->dtype));
  b.dtype = naryops[k].result == RES_BOOL ? SR_BOOL : has_out_dtype ? out_dtype : ts[0]->dtype;
  b.weak = (uint8_t)(ts[0]->weak && ts[1]->weak);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  b.mesh = s.mesh;
  if (s.mode == SR_MODE_EXPLICIT && nary_sharding(cx, e, ts, &b) < 0) return -1;
  if (s.mode != SR_MODE_AUTO && naryops[k].ur(cx, e, ts, &b) < 0) return -1;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* lax.clamp_p: min and max are scalars or have the operand's shape; the
   result has the operand's sharding; no ur rule. */
static int type_clamp(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 3, 1) < 0) return -1;
  const SrType *ts[3];
  sr_resolve_bare_literals(e, ts);
  const SrType *mn = ts[0], *x = ts[1], *mx = ts[2];
  static const char *const which[] = {"min", "max"};
  const SrType *bound[] = {mn, mx};
  for (int k = 0; k < 2; k++) {
    const SrType *t = bound[k];
    int same = t->ndim == x->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = sr_dim_same(&t->dims[d], &x->dims[d]);
    if (!t->ndim || same) continue;
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_shape_str(&a, t);
    sr_shape_str(&c, x);
    sr_terr(cx, "TypeError", "clamp requires %s.shape == operand.shape or %s.shape == (), got %s.shape=%s, operand.shape=%s.",
            which[k], which[k], which[k], sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  static const unsigned any3[3] = {SR_DC_ANY, SR_DC_ANY, SR_DC_ANY};
  if (nary_dtype(cx, e, ts, any3, 0, 1) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  b.dtype = mn->dtype;
  b.weak = (uint8_t)(mn->weak && x->weak && mx->weak);
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* ---- select_n ---- */

/* lax.select_n_p: cases of one shape, dtype and sharding; `which` a bool
   or int scalar, or shaped and sharded like the cases. */
static int type_select_n(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (e->nin < 1 || sr_rule_arity(cx, e, -1, 1) < 0) return sr_terr(cx, "TypeError", "select_n takes `which` and cases");
  const SrType *ts[256];
  if (e->nin > 256) return sr_terr(cx, "TypeError", "select_n: too many cases");
  sr_resolve_bare_literals(e, ts);
  const SrType *which = ts[0], *const *cases = ts + 1;
  uint32_t nc = e->nin - 1;
  /* _select_shape_rule */
  if (!nc) return sr_terr(cx, "TypeError", "select must have at least one case");
  for (uint32_t i = 1; i < nc; i++) {
    int same = cases[i]->ndim == cases[0]->ndim;
    for (int d = 0; same && d < cases[0]->ndim; d++) same = sr_dim_same(&cases[i]->dims[d], &cases[0]->dims[d]);
    if (same) continue;
    SrBuf b = SR_BUF_INIT;
    for (uint32_t k = 0; k < nc; k++) {
      if (k) sr_buf_puts(&b, ", ");
      sr_shape_str(&b, cases[k]);
    }
    sr_terr(cx, "TypeError", "select cases must have the same shapes, got [%s].", sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (which->ndim) {
    int same = which->ndim == cases[0]->ndim;
    for (int d = 0; same && d < which->ndim; d++) same = sr_dim_same(&which->dims[d], &cases[0]->dims[d]);
    if (!same) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_shape_str(&a, which);
      sr_shape_str(&c, cases[0]);
      sr_terr(cx, "TypeError",
              "select `which` must be scalar or have the same shape as cases, got `which` shape %s but case shape %s.",
              sr_buf_str(&a), sr_buf_str(&c));
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
  }
  /* _select_dtype_rule */
  if (sr_check_same_dtypes(cx, "select", cases, nc) < 0) return -1;
  if (!sr_dtype_in(which->dtype, SR_DC_BOOL | SR_DC_INT))
    return sr_terr(cx, "TypeError", "select `which` must be boolean or integer type, got %s.",
                   sr_dtype_name(which->dtype));
  if (which->dtype == SR_BOOL && nc > 2) return sr_terr(cx, "TypeError", "select with boolean `which` cannot have > 2 cases.");
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, cases[0]);
  b.unreduced = b.reduced = b.varying = 0;
  b.ukind = SR_UK_NONE;
  b.weak = 1;
  for (uint32_t i = 0; i < nc; i++) b.weak &= cases[i]->weak;
  if (!b.mesh) b.mesh = s.mesh;
  /* the first case on a mesh */
  const SrType *first = NULL;
  for (uint32_t i = 0; i < nc && !first; i++)
    if (!sr_in_mesh_empty(cx, e, i + 1)) first = cases[i];
  if (s.mode == SR_MODE_EXPLICIT) {
    /* _select_sharding_rule */
    for (uint32_t i = 0; first && i < nc; i++) {
      const SrType *c = cases[i];
      if (sr_in_mesh_empty(cx, e, i + 1)) continue;
      int same = c->unreduced == first->unreduced && c->reduced == first->reduced && c->ukind == first->ukind;
      for (int d = 0; same && d < c->ndim; d++) same = sr_spec_entry_eq(c, d, first, d);
      if (same) continue;
      SrBuf sb = SR_BUF_INIT;
      for (uint32_t k = 0; k < nc; k++) {
        if (k) sr_buf_puts(&sb, ", ");
        sr_type_sharding_str(&sb, cx, cases[k]);
      }
      sr_terr(cx, "ShardingTypeError", "select cases must have the same shardings, got [%s].", sr_buf_str(&sb));
      sr_buf_free(&sb);
      return -1;
    }
    if (first && which->ndim && !sr_in_mesh_empty(cx, e, 0)) {
      int same = 1;
      for (int d = 0; same && d < which->ndim; d++) same = sr_spec_entry_eq(which, d, first, d);
      if (!same) {
        SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
        sr_type_sharding_str(&a, cx, which);
        sr_type_sharding_str(&c, cx, cases[0]);
        sr_terr(cx, "ShardingTypeError",
                "select `which` must be scalar or have the same sharding as cases, got `which` sharding %s but case "
                "sharding %s.",
                sr_buf_str(&a), sr_buf_str(&c));
        sr_buf_free(&a);
        sr_buf_free(&c);
        return -1;
      }
    }
    if (first) {
      sr_type_builder(&b, first);
      b.dtype = cases[0]->dtype;
      b.unreduced = b.reduced = b.varying = 0;
      b.weak = 1;
      for (uint32_t i = 0; i < nc; i++) b.weak &= cases[i]->weak;
    } else {
      sr_builder_replicate(&b);
    }
  } else {
    sr_builder_replicate(&b);
  }
  /* _select_ur_rule: the first case on a mesh gives the sets */
  if (s.mode != SR_MODE_AUTO && first) {
    if (sr_getu(cx, first, &b.unreduced) < 0) return -1;
    b.reduced = sr_getr(cx, first);
    b.ukind = b.unreduced ? SR_UK_SUM : SR_UK_NONE;
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* ---- convert_element_type ---- */

/* lax.convert_element_type_p: new dtype and weak type from the params;
   the operand's sharding or the given one.  The printer drops `sharding`,
   so a parsed equation takes it from its binder. */
static int type_convert(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  SrDtype nd = x->dtype;
  int has = 0, weak = 0;
  if (sr_rparam_dtype(cx, e, "new_dtype", &nd, &has) < 0) return -1;
  if (!has) return sr_terr(cx, "TypeError", "convert_element_type equation has no 'new_dtype' param");
  if (sr_rparam_bool(cx, e, "weak_type", 0, &weak) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrShardSpec given;
  int present = 0;
  const SrType *w = sr_written(e, 0);
  if (sr_rparam(e, "sharding")) {
    if (sr_rparam_sharding(cx, e, "sharding", x->ndim, &given, &present) < 0) return -1;
  } else if (w) {
    sr_shard_of_type(w, &given);
    present = 1;
  }
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  b.dtype = nd;
  b.weak = (uint8_t)weak;
  if (s.mode == SR_MODE_EXPLICIT && present) {
    for (int d = 0; d < b.ndim; d++) {
      b.dims[d].nax = given.nax[d];
      memcpy(b.dims[d].ax, given.ax[d], SR_MAX_DIM_AXES);
    }
    if (given.mesh) b.mesh = given.mesh;
  }
  /* _convert_element_type_ur_rule */
  if (s.mode != SR_MODE_AUTO) {
    if (present && given.unreduced) {
      if (given.ukind != SR_UK_SUM) {
        SrBuf sb = SR_BUF_INIT;
        SrVal *spec = sr_shard_to_spec_val(&given);
        sr_val_repr(&sb, spec);
        sr_unref(spec);
        sr_terr(cx, "ValueError",
                "`sharding` passed to `convert_element_type` can only contain unreduced of kind `sum`. Got "
                "sharding=%s",
                sr_buf_str(&sb));
        sr_buf_free(&sb);
        return -1;
      }
      b.unreduced = given.unreduced;
    } else {
      if (sr_getu(cx, x, &b.unreduced) < 0) return -1;
    }
    b.reduced = present && given.reduced ? given.reduced : sr_getr(cx, x);
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

/* ---- add_any ---- */

/* ad_util.add_jaxvals_p: both operands have the same type (typematch),
   which is the result. */
static int type_add_any(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *ts[2];
  sr_resolve_bare_literals(e, ts);
  const SrType *x = ts[0], *y = ts[1];
  int same = x->dtype == y->dtype && x->ndim == y->ndim && x->mem == y->mem && x->varying == y->varying;
  for (int d = 0; same && d < x->ndim; d++) same = sr_dim_same(&x->dims[d], &y->dims[d]);
  /* core.cmp_shape_shd_mat_memsp compares shardings only when both have a
     mesh */
  int shd = !sr_in_mesh_empty(cx, e, 0) && !sr_in_mesh_empty(cx, e, 1);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  if (shd || s.mode == SR_MODE_MANUAL)
    same = same && x->unreduced == y->unreduced && x->reduced == y->reduced && x->ukind == y->ukind;
  for (int d = 0; same && shd && d < x->ndim; d++) same = sr_spec_entry_eq(x, d, y, d);
  if (!same) return ur_pair_error(cx, "AssertionError", "(%s, %s)", x, y, 1);
  out[0] = e->in[0];
  return 0;
}

void sr_rules_elementwise_init(void) {
  for (size_t k = 0; k < sizeof unops / sizeof unops[0]; k++) sr_set_type_rule(unops[k].id, type_unop);
  for (size_t k = 0; k < sizeof naryops / sizeof naryops[0]; k++) sr_set_type_rule(naryops[k].id, type_naryop);
  sr_set_type_rule(SR_P_integer_pow, type_integer_pow);
  sr_set_type_rule(SR_P_reduce_precision, type_reduce_precision);
  sr_set_type_rule(SR_P_convert_element_type, type_convert);
  sr_set_type_rule(SR_P_copy, type_identity);
  sr_set_type_rule(SR_P_copy_p, type_identity);
  sr_set_type_rule(SR_P_stop_gradient, type_identity);
  sr_set_type_rule(SR_P_select_n, type_select_n);
  sr_set_type_rule(SR_P_clamp, type_clamp);
  sr_set_type_rule(SR_P_add_any, type_add_any);
}
