/* sharding.c: the rules of the sharding casts: reshard, sharding_constraint,
 * layout_constraint (pjit.py, layout.py).
 *
 * The family's helpers, then each primitive's (or each group sharing
 * rules') type, eval, JVP and transpose rules and communication note side
 * by side in that order under its heading, then the family's registration
 * sr_lax_sharding_init (lax/lax.h says what a family file holds and uses).
 */
#include "lax/lax.h"

#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "exec/eval.h"
#include "exec/layout.h"
#include "check/rule.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ==== the family's helpers ==== */

/* type rules of the sharding casts: reshard,
 * sharding_constraint and layout_constraint (reference 3.12).
 *
 * reshard gives its operand a new sharding (any change is allowed: that is
 * where explicit mode's communication is spelled out); the printer shows no
 * params, so a parsed equation takes the new sharding from its binder.  The
 * constraints keep the type.
 */

/* reshard, sharding_constraint, layout_constraint.
 *
 * reshard and sharding_constraint are pure data movement: the layout their
 * sharding param names (which may name Auto axes, unlike the type), moved
 * to by redistribute.c. */

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

/* ==== reshard ==== */

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

/* A reshard into a mesh whose axes are Auto (auto_axes) leaves the data
   where it is along those axes, as XLA does when nothing asks otherwise:
   each dim the target leaves free keeps the input's Auto axes (the seed's
   check_in_auto_context shows the concrete sharding P('X',) there). */
static const SrType *keep_auto_axes(const SrType *l, const SrArray *x, const SrMesh *m, const SrMesh *dst) {
  if (!x->mesh || !m || !dst || sr_mesh_shape(x->mesh) != sr_mesh_shape(m) || x->layout->ndim != l->ndim) return l;
  for (int p = 0; p < x->ndev && x->mesh != m; p++)
    if (sr_mesh_device(x->mesh, p) != sr_mesh_device(m, p)) return l;
  SrAxes au = 0;
  for (int i = 0; i < dst->n && i < m->n; i++)
    if (dst->types[i] == SR_AXIS_AUTO) au |= 1u << i;
  if (!au) return l;
  SrAxes used = sr_type_sharded_axes(l) | l->unreduced;
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  int changed = 0;
  for (int d = 0; d < l->ndim; d++) {
    const SrDim *xd = &x->layout->dims[d];
    if (b.dims[d].nax || !xd->nax || xd->size != b.dims[d].size) continue;
    SrAxes want = sr_dim_axes(xd);
    if ((want & ~au) || (want & used)) continue;
    b.dims[d].nax = xd->nax;
    memcpy(b.dims[d].ax, xd->ax, SR_MAX_DIM_AXES);
    used |= want;
    changed = 1;
  }
  if (!changed) return l;
  b.mesh = sr_mesh_shape(m);
  return sr_type_get(&b);
}

static int ev_reshard(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  SrVal *sh = sr_ev_param(e, "sharding");
  if (!sh) sh = sr_ev_param(e, "dst_sharding");
  const SrType *l;
  if (sh && sh->kind != SR_V_NONE) {
    if (sh->kind == SR_V_SHARDING && sh->sh.mesh->n && (!m || sr_mesh_shape(m) != sr_mesh_shape(sh->sh.mesh)))
      return sr_ev_err(cx, "ValueError", "reshard: the sharding's mesh does not match the result's");
    if (sr_ev_layout_of_spec(cx, t, sh, m, NULL, 0, &l) < 0) return -1;
    if (sh->kind == SR_V_SHARDING) l = keep_auto_axes(l, e->in[0], m, sh->sh.mesh);
  } else {
    l = sr_ev_out_layout(cx, e, 0, m);
  }
  e->out[0] = sr_redistribute_typed(cx, e->in[0], m, l, t);
  return e->out[0] ? 0 : -1;
}

TR(tr_reshard) {
  (void)x;
  /* reshard of the cotangent to the input's cotangent sharding
     (_reshard_transpose_fancy): {U:X} -> replicated is the all-reduce */
  cx[0] = sr_ad_reshard(ad, ct[0], sr_ad_ct_type(e->in[0]->type));
  return cx[0] ? 0 : -1;
}

/* A reshard from unreduced all-reduces; one that drops sharded axes
   all-gathers them, one that moves them is an all-to-all. */
static int comm_reshard(const SrEqn *e, SrCommNote *out, int max) {
  int n = 0;
  const SrType *in0 = e->nin ? e->in[0]->type : NULL, *o0 = e->nout ? e->out[0]->type : NULL;
  if (in0 && o0) {
    SrAxes u = in0->unreduced & ~sr_axes_remap(o0->unreduced, o0->mesh, in0->mesh);
    if (u) return sr_comm_note(out, max, n, "all-reduce (reshard from unreduced)", in0->mesh, u);
    SrAxes from = sr_type_sharded_axes(in0), to = o0->mesh ? sr_axes_remap(sr_type_sharded_axes(o0), o0->mesh, in0->mesh) : 0;
    if (from & ~to) n = sr_comm_note(out, max, n, "all-gather (reshard)", in0->mesh, from & ~to);
    else if (from && from != to) n = sr_comm_note(out, max, n, "all-to-all (reshard)", in0->mesh, from);
  }
  return n;
}

/* ==== sharding_constraint, layout_constraint ==== */

/* pjit._sharding_constraint_abstract_eval: the operand's type (only its
   mesh is updated, which a type here does not show). */
static int type_constraint(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  out[0] = e->in[0];
  return 0;
}

static int ev_sharding_constraint(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  SrArray *x = e->in[0];
  const SrMesh *m = x->mesh ? x->mesh : sr_ev_mesh_for(cx, e, t);
  SrVal *sh = sr_ev_param(e, "sharding");
  uint64_t keep = 0;
  SrVal *un = sr_ev_param(e, "unconstrained_dims");
  if (un && sr_is_seq(un))
    for (int i = 0; i < un->seq.n; i++)
      if (un->seq.items[i]->kind == SR_V_INT) keep |= 1ull << un->seq.items[i]->i;
  const SrType *l;
  if (!sh || sh->kind == SR_V_NONE) l = x->layout;
  else if (sr_ev_layout_of_spec(cx, t, sh, m, x->mesh == m ? x->layout : NULL, keep, &l) < 0) return -1;
  e->out[0] = sr_redistribute_typed(cx, x, m, l, t);
  return e->out[0] ? 0 : -1;
}

/* The result laid out as the layout param says (exec/layout.h); its
   input comes as it is (a transparent primitive). */
static int ev_layout_constraint(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *x = e->in[0];
  uint8_t m2m[SR_MAX_RANK];
  int k = sr_local_parse(sr_ev_param(e, "layout"), x->type->ndim, m2m);
  if (k < 0) return sr_ev_err(cx, "ValueError", "layout_constraint: its layout is not one of rank %d", x->type->ndim);
  SrArray *l = k ? sr_array_relayout(x, m2m) : sr_array_ref(x);
  e->out[0] = sr_array_retype(l, e->out_type[0], NULL);
  sr_array_unref(l);
  return 0;
}

/* sharding_constraint, layout_constraint: the same constraint on ct */
TR(tr_same) {
  (void)x;
  SrVal *r = sr_ad_bind_eqn(ad, e, ct);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++) cx[i] = r->seq.items[i];
  return 0;
}

/* ==== registration ==== */

#undef TR

static void type_rules_sharding(void) {
  sr_set_type_rule(SR_P_reshard, type_reshard);
  sr_set_type_rule(SR_P_sharding_constraint, type_constraint);
  sr_set_type_rule(SR_P_layout_constraint, type_constraint);
}

static void eval_rules_sharding(void) {
  sr_set_eval_rule(SR_P_reshard, ev_reshard);
  sr_set_eval_rule(SR_P_sharding_constraint, ev_sharding_constraint);
  sr_set_eval_rule(SR_P_layout_constraint, ev_layout_constraint);
}

static void ad_rules_sharding(void) {
  sr_ad_set_jvp(SR_P_reshard, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reshard, tr_reshard);
  sr_ad_set_jvp(SR_P_sharding_constraint, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_sharding_constraint, tr_same);
  sr_ad_set_jvp(SR_P_layout_constraint, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_layout_constraint, tr_same);
}

void sr_lax_sharding_init(void) {
  type_rules_sharding();
  eval_rules_sharding();
  ad_rules_sharding();
  sr_prims[SR_P_reshard].comm = comm_reshard;
}
