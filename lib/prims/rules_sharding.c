/* rules_sharding.c: type rules of the sharding casts: reshard,
 * sharding_constraint and layout_constraint (reference 3.12).
 *
 * reshard gives its operand a new sharding (any change is allowed: that is
 * where explicit mode's communication is spelled out); the printer shows no
 * params, so a parsed equation takes the new sharding from its binder.  The
 * constraints keep the type.
 */
#include <string.h>

#include "prims/rule.h"
#include "text/print_val.h"

void sr_rules_sharding_init(void);

/* pjit._reshard_abstract_eval with _check_unreduced_reshard: the operand
   with dst_sharding's spec; a max/min-unreduced result must not be more
   unreduced than the operand, and both kinds must agree. */
static int type_reshard(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  SrShardSpec dst;
  int present = 0;
  const SrVal *v = sr_rparam(e, "dst_sharding");
  if (v && v->kind != SR_V_NONE) {
    if (sr_rparam_sharding(cx, e, "dst_sharding", x->ndim, &dst, &present) < 0) return -1;
  } else if (!v && sr_written(e, 0)) {
    const SrType *w = sr_written(e, 0);
    if (w->ndim != x->ndim)
      return sr_terr(cx, "TypeError", "reshard keeps the shape of its operand, %s, but the jaxpr writes %s",
                     sr_type_short(x), sr_type_short(w));
    sr_shard_of_type(w, &dst);
    present = 1;
  }
  if (!present) {
    SrBuf a = SR_BUF_INIT;
    if (v) sr_val_str(&a, v);
    else sr_buf_puts(&a, "None");
    sr_terr(cx, "ValueError",
            "Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. Got "
            "sharding %s.",
            sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  SrAxes du = sr_axes_remap(dst.unreduced, dst.mesh, x->mesh ? x->mesh : dst.mesh);
  const char *fmt = NULL;
  if (dst.unreduced && dst.ukind != SR_UK_SUM && (du & ~x->unreduced))
    fmt = "out_sharding passed to `jax.reshard` cannot be more unreduced than the input. Got input pspec: %s, out "
          "pspec: %s";
  else if (x->unreduced && dst.unreduced && x->ukind != dst.ukind)
    fmt = "The unreduced_kind of input and output sharding passed to `jax.reshard` should be the same. Got input "
          "spec: %s and output spec: %s";
  if (fmt) {
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_type_spec_repr(&a, x);
    SrVal *spec = sr_shard_to_spec_val(&dst);
    sr_val_repr(&c, spec);
    sr_unref(spec);
    sr_terr(cx, "ValueError", fmt, sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  SrTypeBuilder b;
  sr_type_builder(&b, x);
  sr_apply_shard(&b, &dst);
  if (!b.mesh) b.mesh = x->mesh;
  b.varying = x->varying; /* the manual part of the type stays */
  return sr_finish_type(cx, e, &b, out);
}

/* pjit._sharding_constraint_abstract_eval: the operand's type (only its
   mesh is updated, which a type here does not show). */
static int type_constraint(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  out[0] = e->in[0];
  return 0;
}

void sr_rules_sharding_init(void) {
  sr_set_type_rule(SR_P_reshard, type_reshard);
  sr_set_type_rule(SR_P_sharding_constraint, type_constraint);
  sr_set_type_rule(SR_P_layout_constraint, type_constraint);
}
