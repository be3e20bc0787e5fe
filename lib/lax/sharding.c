/* sharding.c: the rules of the sharding casts: reshard, sharding_constraint,
 * layout_constraint, shard_alike (pjit.py, layout.py, shard_alike.py).
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
#include "ad/batch.h"
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

/* The batching rules' helpers: a sharding param of the batched value. */

static const SrVal *param_of(const SrEqn *e, const char *key) {
  for (uint32_t i = 0; i < e->nparams; i++)
    if (strcmp(e->params[i].key, key) == 0) return e->params[i].val;
  return NULL;
}

static const char *const unconstrained[1] = {SR_SPEC_UNCONSTRAINED};

/* sh (a NamedSharding or a P) with an entry inserted at d (pxla.batch_spec
   and batching.get_sharding_for_vmap: None-padded to d entries first): the
   names val (nval of them; none: None).  Then the entries of unc (a mask)
   are UNCONSTRAINED, the spec None-padded to ndim.  A new value. */
static SrVal *batched_spec(const SrVal *sh, int d, const char *const *val, int nval, uint64_t unc, int ndim) {
  const SrSpec *sp = sh->kind == SR_V_SHARDING ? sh->sh.spec : sh->spec;
  SrSpec ns = *sp;
  int n = d < 0 ? sp->n : sp->n > d ? sp->n + 1 : d + 1;
  if (unc && n < ndim) n = ndim;
  SrSpecEntry *e = sr_xcalloc((size_t)n + 1, sizeof *e);
  for (int i = 0, k = 0; i < n; i++) {
    if (i == d) {
      e[i].n = nval;
      e[i].names = (const char **)val;
    } else {
      if (k < sp->n) e[i] = sp->e[k];
      k++;
    }
    if (unc >> i & 1) {
      e[i].n = 1;
      e[i].names = (const char **)unconstrained;
    }
  }
  ns.n = n;
  ns.e = e;
  SrVal *r = sh->kind == SR_V_SHARDING ? sr_sharding_val(NULL, sh->sh.mesh, &ns, sh->sh.memory_kind)
                                       : sr_spec_val(NULL, &ns);
  free(e);
  return r;
}

/* Does the spec of sh name any axis at all (not is_hlo_sharding_replicated)? */
static int spec_names_axes(const SrVal *sh) {
  const SrSpec *sp = sh->kind == SR_V_SHARDING ? sh->sh.spec : sh->spec;
  if (sp->nunreduced || sp->nreduced) return 1;
  for (int i = 0; i < sp->n; i++)
    for (int k = 0; k < sp->e[i].n; k++)
      if (sp->e[i].names[k] != SR_SPEC_UNCONSTRAINED) return 1;
  return 0;
}

/* e bound on x with param key's value replaced by val (stolen). */
static SrVal *bind_with(SrBatch *b, const SrEqn *e, SrVal *x, const char *key, SrVal *val, const char *key2,
                        SrVal *val2) {
  SrPList ps = {0};
  for (uint32_t i = 0; i < e->nparams; i++) {
    const char *k = e->params[i].key;
    SrVal *v = strcmp(k, key) == 0 ? sr_ref(val) : key2 && strcmp(k, key2) == 0 ? sr_ref(val2)
                                                                                 : sr_ref(e->params[i].val);
    sr_plist_add(&ps, k, v);
  }
  sr_unref(val);
  sr_unref(val2);
  SrVal *r = sr_ad_bind(&b->ad, e->prim->id, 1, &x, ps.n, ps.p);
  sr_plist_free(&ps);
  if (r && r->kind == SR_V_TUPLE) r = r->seq.n ? r->seq.items[0] : NULL;
  return r;
}

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
  /* a replicated result (its type names no mesh) of an input with no
     mesh (a constant) goes onto the devices of the sharding's mesh */
  if (!m && sh && sh->kind == SR_V_SHARDING && sh->sh.mesh->n && !sh->sh.mesh->unsized &&
      sr_mesh_size(sh->sh.mesh) > 0)
    m = sr_ev_mesh_of_shape(cx, e, sr_mesh_shape(sh->sh.mesh));
  if (sh && sh->kind != SR_V_NONE) {
    if (sh->kind == SR_V_SHARDING && sh->sh.mesh->n && (!m || sr_mesh_shape(m) != sr_mesh_shape(sh->sh.mesh)))
      return sr_ev_err(cx, "ValueError", "reshard: the sharding's mesh does not match the result's");
    if (sr_ev_layout_of_spec(cx, t, sh, m, NULL, 0, &l) < 0) return -1;
    if (sh->kind == SR_V_SHARDING) l = keep_auto_axes(l, e->in[0], m, sh->sh.mesh);
  } else {
    l = sr_ev_out_layout(cx, e, 0, m);
  }
  e->out[0] = sr_redistribute_typed(cx, e->in[0], m, sr_layout_even(l), t);
  sr_array_note_uneven(e->out[0], l, sh);
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

/* pjit._reshard_batcher: the destination sharding with the batch axis'
   entry inserted (batching.get_sharding_for_vmap: the mesh axes the batch
   axis is sharded over, else None). */
static int batch_reshard(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  const SrVal *dst = param_of(e, "dst_sharding");
  if (!dst || (dst->kind != SR_V_SHARDING && dst->kind != SR_V_SPEC)) {
    /* a parsed reshard: its written type says where the data goes */
    const SrType *t = sr_batch_mapped_type(b, e->out[0]->type, bd[0]);
    y[0] = sr_ad_reshard(&b->ad, x[0], t);
  } else {
    y[0] = bind_with(b, e, x[0], "dst_sharding", batched_spec(dst, bd[0], b->spmd, b->nspmd, 0, 0), NULL, NULL);
  }
  ybd[0] = bd[0];
  return y[0] ? 0 : -1;
}

/* ==== sharding_constraint, layout_constraint ==== */

/* pjit._sharding_constraint_abstract_eval: the operand's type (only its
   mesh is updated, which a type here does not show). */
static int type_constraint(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  out[0] = e->in[0];
  return 0;
}

/* mlir.add_manual_axes, as the constraint is lowered: under a shard_map
   the sharding may not name the context mesh's manual axes */
static int check_manual_axes(SrEvalCtx *cx, const SrEvalEqn *e, const SrVal *sh) {
  const SrVal *cm = sr_ev_param(e, "context_mesh");
  if (!cm || cm->kind != SR_V_MESH || !sh || sh->kind != SR_V_SHARDING) return 0;
  const SrMesh *m = cm->mesh;
  SrAxes manual = sr_mesh_axes_of_type(m, SR_AXIS_MANUAL);
  if (!manual) return 0;
  const SrSpec *s = sh->sh.spec;
  int bad = 0;
  for (int i = 0; i < s->n && !bad; i++)
    for (int k = 0; k < s->e[i].n && !bad; k++) {
      const char *nm = s->e[i].names[k];
      int a = nm == SR_SPEC_UNCONSTRAINED ? -1 : sr_mesh_axis(m, nm);
      bad = a >= 0 && (manual >> a & 1);
    }
  if (!bad) return 0;
  SrBuf ps = SR_BUF_INIT, ma = SR_BUF_INIT;
  sr_spec_repr(&ps, s);
  sr_axes_tuple_str(&ma, m, manual);
  sr_ev_err(cx, "ValueError",
            "pspec %s contains a manual axes %s of mesh which is not allowed. If you are using a "
            "with_sharding_constraint under a shard_map, only use the mesh axis in PartitionSpec which are not manual.",
            sr_buf_str(&ps), sr_buf_str(&ma));
  sr_buf_free(&ps);
  sr_buf_free(&ma);
  return -1;
}

static int ev_sharding_constraint(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  SrArray *x = e->in[0];
  const SrMesh *m = x->mesh ? x->mesh : sr_ev_mesh_for(cx, e, t);
  SrVal *sh = sr_ev_param(e, "sharding");
  /* a NamedSharding over a concrete mesh puts the data on its devices
     (_sharding_constraint_impl: jit(_identity_fn, out_shardings=sharding)) */
  if (sh && sh->kind == SR_V_SHARDING && sh->sh.mesh->n && !sh->sh.mesh->abstract) m = sh->sh.mesh;
  /* one over an abstract mesh of other names and sizes
     (use_abstract_mesh(mesh.update(axis_sizes=, axis_names=))): the
     operand's devices as that mesh, with its axis types */
  const SrMesh *sm = sh && sh->kind == SR_V_SHARDING ? sh->sh.mesh : NULL;
  if (sm && sm->n && sm->abstract && !sm->unsized && m && sr_mesh_shape(sm) != sr_mesh_shape(m) &&
      sr_mesh_ndev(sm) == sr_mesh_ndev(m)) {
    SrMesh nm = *sm;
    nm.abstract = 0;
    nm.device_fields = 0;
    nm.devices = m->devices;
    m = sr_mesh_intern(&nm);
  }
  if (check_manual_axes(cx, e, sh) < 0) return -1;
  uint64_t keep = 0;
  SrVal *un = sr_ev_param(e, "unconstrained_dims");
  if (un && sr_is_seq(un))
    for (int i = 0; i < un->seq.n; i++)
      if (un->seq.items[i]->kind == SR_V_INT) keep |= 1ull << un->seq.items[i]->i;
  const SrType *l;
  /* _sharding_constraint_hlo_lowering: where the type splits a dimension
     (Explicit axes of a mixed mesh), its axes lead the constraint's */
  SrVal *merged = NULL;
  if (sh && sh->kind == SR_V_SHARDING && t->mesh && sr_type_sharded_axes(t)) {
    const SrSpec *sp = sh->sh.spec;
    SrSpecEntry ent[SR_MAX_RANK];
    const char *names[SR_MAX_RANK][2 * SR_MAX_DIM_AXES];
    SrSpec ns = *sp;
    ns.n = t->ndim;
    ns.e = ent;
    for (int i = 0; i < t->ndim; i++) {
      int n = 0;
      const SrDim *d = &t->dims[i];
      for (int k = 0; k < d->nax; k++) names[i][n++] = t->mesh->names[d->ax[k]];
      const SrSpecEntry *u = i < sp->n ? &sp->e[i] : NULL;
      int unc = u && u->n == 1 && u->names[0] == SR_SPEC_UNCONSTRAINED;
      if (u && (!unc || !n))
        for (int k = 0; k < u->n && n < 2 * SR_MAX_DIM_AXES; k++) names[i][n++] = u->names[k];
      ent[i].n = n;
      ent[i].names = names[i];
    }
    merged = sr_sharding_val(NULL, sh->sh.mesh, &ns, sh->sh.memory_kind);
  }
  if (!sh || sh->kind == SR_V_NONE) l = x->layout;
  else if (sr_ev_layout_of_spec(cx, t, merged ? merged : sh, m, x->mesh == m ? x->layout : NULL, keep, &l) < 0) {
    sr_unref(merged);
    return -1;
  }
  sr_unref(merged);
  e->out[0] = sr_redistribute_typed(cx, x, m, sr_layout_even(l), t);
  sr_array_note_uneven(e->out[0], l, sh);
  return e->out[0] ? 0 : -1;
}

/* pjit._sharding_constraint_batcher: the batch axis' entry inserted into
   the sharding (_pjit_batcher_for_sharding: spmd_axis_name's axes, or
   UNCONSTRAINED without them, a replicated sharding left as it is), the
   unconstrained dims shifted past it (and the batch dim among them
   without spmd_axis_name). */
static int batch_sharding_constraint(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrInterp *I = b->ad.I;
  const SrVal *sh = param_of(e, "sharding"), *ud = param_of(e, "unconstrained_dims");
  int d = bd[0];
  if (!sh || (sh->kind != SR_V_SHARDING && sh->kind != SR_V_SPEC)) return sr_batch_bind_same(b, e, x, d, y, ybd);
  const SrSpec *sp = sh->kind == SR_V_SHARDING ? sh->sh.spec : sh->spec;
  if (b->nspmd && sh->kind == SR_V_SHARDING) {
    int used = 0;
    for (int i = 0; i < sp->n; i++)
      for (int k = 0; k < sp->e[i].n; k++)
        for (int q = 0; q < b->nspmd; q++) used |= sp->e[i].names[k] == b->spmd[q];
    if (used) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_buf_putc(&a, '(');
      for (int q = 0; q < b->nspmd; q++) sr_buf_printf(&a, q ? ", '%s'" : "'%s'", b->spmd[q]);
      sr_buf_puts(&a, b->nspmd == 1 ? ",)" : ")");
      sr_spec_repr(&c, sp);
      sr_raise(I, "ValueError", "vmap spmd_axis_name %s cannot appear in with_sharding_constraint spec, but got spec %s",
               sr_buf_str(&a), sr_buf_str(&c));
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
  }
  uint64_t unc = 0;
  for (int i = 0; ud && sr_is_seq(ud) && i < ud->seq.n; i++) {
    int64_t u = ud->seq.items[i]->i;
    unc |= 1ull << (u + (d <= u));
  }
  if (!b->nspmd) unc |= 1ull << d;
  const SrType *t = sr_ad_type(&b->ad, x[0]);
  SrVal *ns;
  if (b->nspmd) ns = batched_spec(sh, d, b->spmd, b->nspmd, 0, 0);
  else if (spec_names_axes(sh)) ns = batched_spec(sh, d, unconstrained, 1, 0, 0);
  else ns = sr_ref((SrVal *)sh);
  if (unc) {
    SrVal *w = batched_spec(ns, -1, NULL, 0, unc, t->ndim);
    sr_unref(ns);
    ns = w;
  }
  SrVal *us = sr_seq(NULL, SR_V_FROZENSET, 0);
  for (int i = 0; i < 64; i++)
    if (unc >> i & 1) sr_seq_push(NULL, us, sr_int(NULL, i));
  y[0] = bind_with(b, e, x[0], "sharding", ns, "unconstrained_dims", us);
  ybd[0] = d;
  return y[0] ? 0 : -1;
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

/* pjit._layout_constraint_batcher: the layout of the batched value
   (layout.get_layout_for_vmap: the example's dims shifted by one in
   major_to_minor and the batch dim, 0 there, inserted at index bd); no
   layout (None) stays none. */
static int batch_layout_constraint(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  int d = bd[0];
  const SrType *t = sr_ad_type(&b->ad, x[0]);
  if (!t) return -1;
  uint8_t m2m[SR_MAX_RANK];
  int nd = t->ndim - 1, k = sr_local_parse(param_of(e, "layout"), nd, m2m);
  if (k < 0) {
    sr_raise(b->ad.I, "ValueError", "layout_constraint: its layout is not one of rank %d", nd);
    return -1;
  }
  if (!k) return sr_batch_bind_same(b, e, x, d, y, ybd);
  SrBuf l = SR_BUF_INIT;
  sr_buf_puts(&l, "Layout(major_to_minor=(");
  for (int i = 0, j = 0; i <= nd; i++) sr_buf_printf(&l, i ? ", %d" : "%d", i == d ? 0 : m2m[j++] + 1);
  sr_buf_puts(&l, nd == 0 ? ",), tiling=None, sub_byte_element_size_in_bits=0)"
                          : "), tiling=None, sub_byte_element_size_in_bits=0)");
  y[0] = bind_with(b, e, x[0], "layout", sr_word(NULL, l.p, l.len), NULL, NULL);
  sr_buf_free(&l);
  ybd[0] = d;
  return y[0] ? 0 : -1;
}

/* sharding_constraint, layout_constraint: the same constraint on ct */
TR(tr_same) {
  (void)x;
  SrVal *r = sr_ad_bind_eqn(ad, e, ct);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++) cx[i] = r->seq.items[i];
  return 0;
}

/* ==== shard_alike ==== */

/* shard_alike.py: abstract_eval is (x, y) as they are */
static int type_shard_alike(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 2) < 0) return -1;
  out[0] = e->in[0];
  out[1] = e->in[1];
  return 0;
}

/* The lowering puts x and y in one sharding group, and XLA's propagation
   gives both the same sharding, the better of theirs: here the Auto
   sharding of whichever is split into the smaller shards (x's on a tie),
   on that one's devices, each result keeping its type's (Explicit)
   axes. */
static int ev_shard_alike(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *x = e->in[0], *y = e->in[1];
  int xs = x->mesh && sr_type_sharded_axes(x->layout), ys = y->mesh && sr_type_sharded_axes(y->layout);
  const SrArray *src = xs && (!ys || sr_layout_shard_numel(x->layout) <= sr_layout_shard_numel(y->layout)) ? x
                       : ys                                                                                ? y
                                                                                                           : NULL;
  for (uint32_t i = 0; i < 2; i++) {
    const SrType *t = e->out_type[i];
    const SrMesh *m = src ? src->mesh : e->in[i]->mesh ? e->in[i]->mesh : sr_ev_mesh_for(cx, e, t);
    const SrType *l = e->in[i]->mesh == m ? e->in[i]->layout : sr_layout_of_type(t);
    if (src && src != e->in[i]) l = sr_layout_adopt_auto(sr_layout_of_type(t), src->layout, m);
    e->out[i] = sr_redistribute_typed(cx, e->in[i], m, sr_layout_even(l), t);
    if (!e->out[i]) return -1;
  }
  return 0;
}

/* shard_alike_transpose: a zero cotangent passes both through as they
   are, else shard_alike of the two */
TR(tr_shard_alike) {
  (void)x;
  if (!ct[0] || !ct[1]) {
    cx[0] = ct[0];
    cx[1] = ct[1];
    return 0;
  }
  SrVal *r = sr_ad_bind_eqn(ad, e, ct);
  if (!r) return -1;
  cx[0] = r->seq.items[0];
  cx[1] = r->seq.items[1];
  return 0;
}

/* _shard_alike_batcher: an unmapped operand broadcast to the other's
   batch dim, else y's batch dim moved to x's */
static int batch_shard_alike(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *in[2] = {x[0], x[1]};
  int d = bd[0];
  if (bd[0] == SR_NOT_MAPPED) {
    d = bd[1];
    in[0] = sr_batch_matchaxis(b, x[0], SR_NOT_MAPPED, d);
  } else if (bd[1] == SR_NOT_MAPPED)
    in[1] = sr_batch_matchaxis(b, x[1], SR_NOT_MAPPED, d);
  else if (bd[1] != bd[0])
    in[1] = sr_batch_moveaxis(b, x[1], bd[1], d);
  if (!in[0] || !in[1]) return -1;
  SrVal *r = sr_ad_bind_eqn(&b->ad, e, in);
  if (!r) return -1;
  y[0] = r->seq.items[0];
  y[1] = r->seq.items[1];
  ybd[0] = ybd[1] = d;
  return 0;
}

/* ==== registration ==== */

#undef TR

static void type_rules_sharding(void) {
  sr_set_type_rule(SR_P_reshard, type_reshard);
  sr_set_type_rule(SR_P_sharding_constraint, type_constraint);
  sr_set_type_rule(SR_P_layout_constraint, type_constraint);
  sr_set_type_rule(SR_P_shard_alike, type_shard_alike);
}

static void eval_rules_sharding(void) {
  sr_set_eval_rule(SR_P_reshard, ev_reshard);
  sr_set_eval_rule(SR_P_sharding_constraint, ev_sharding_constraint);
  sr_set_eval_rule(SR_P_layout_constraint, ev_layout_constraint);
  sr_set_eval_rule(SR_P_shard_alike, ev_shard_alike);
}

static void ad_rules_sharding(void) {
  sr_ad_set_jvp(SR_P_reshard, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reshard, tr_reshard);
  sr_ad_set_jvp(SR_P_sharding_constraint, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_sharding_constraint, tr_same);
  sr_ad_set_jvp(SR_P_layout_constraint, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_layout_constraint, tr_same);
  sr_ad_set_jvp(SR_P_shard_alike, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_shard_alike, tr_shard_alike);
}

/* vmap: pjit.py's batchers. */
static void batch_rules_sharding(void) {
  sr_prims[SR_P_reshard].batch = batch_reshard;
  sr_prims[SR_P_sharding_constraint].batch = batch_sharding_constraint;
  sr_prims[SR_P_layout_constraint].batch = batch_layout_constraint;
  sr_prims[SR_P_shard_alike].batch = batch_shard_alike;
}

void sr_lax_sharding_init(void) {
  batch_rules_sharding();
  type_rules_sharding();
  eval_rules_sharding();
  ad_rules_sharding();
  sr_prims[SR_P_reshard].comm = comm_reshard;
}
