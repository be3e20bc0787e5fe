/* eval_sharding.c: reshard, sharding_constraint, layout_constraint.
 *
 * reshard and sharding_constraint are pure data movement: the layout their
 * sharding param names (which may name Auto axes, unlike the type), moved
 * to by redistribute.c. */
#include <string.h>

#include "exec/eval.h"
#include "exec/layout.h"

/* The layout a NamedSharding / P value gives a result of type t on mesh m:
   dims from the spec (except `keep` dims, which keep x's axes), unreduced
   and reduced from the spec. */
static int layout_of_spec(SrEvalCtx *cx, const SrType *t, const SrVal *sh, const SrMesh *m, const SrType *xl,
                          uint64_t keep, const SrType **out) {
  const SrSpec *s = sh->kind == SR_V_SHARDING ? sh->sh.spec : sh->kind == SR_V_SPEC ? sh->spec : NULL;
  if (!s) return sr_ev_err(cx, "TypeError", "expected a sharding, got %s", sr_val_kind_name(sh));
  SrTypeBuilder b;
  sr_type_builder(&b, sr_layout_of_type(t));
  b.mesh = m ? sr_mesh_shape(m) : NULL;
  if (b.mesh && !b.mesh->n) b.mesh = NULL;
  for (int i = 0; i < b.ndim; i++) {
    SrDim *d = &b.dims[i];
    d->nax = 0;
    if (keep >> i & 1) {
      if (xl && i < xl->ndim) {
        d->nax = xl->dims[i].nax;
        memcpy(d->ax, xl->dims[i].ax, SR_MAX_DIM_AXES);
      }
      continue;
    }
    if (i >= s->n) continue;
    for (int k = 0; k < s->e[i].n; k++) {
      const char *nm = s->e[i].names[k];
      if (nm == SR_SPEC_UNCONSTRAINED) {
        if (xl && i < xl->ndim) {
          d->nax = xl->dims[i].nax;
          memcpy(d->ax, xl->dims[i].ax, SR_MAX_DIM_AXES);
        }
        break;
      }
      int a = m ? sr_mesh_axis(m, nm) : -1;
      if (a < 0) return sr_ev_err(cx, "ValueError", "Resource axis: %s is not found in the mesh", nm);
      d->ax[d->nax++] = (uint8_t)a;
    }
  }
  SrAxes u = 0, r = 0;
  for (int k = 0; k < s->nunreduced; k++) {
    int a = m ? sr_mesh_axis(m, s->unreduced[k]) : -1;
    if (a >= 0) u |= 1u << a;
  }
  for (int k = 0; k < s->nreduced; k++) {
    int a = m ? sr_mesh_axis(m, s->reduced[k]) : -1;
    if (a >= 0) r |= 1u << a;
  }
  b.unreduced = u;
  b.ukind = (uint8_t)(u ? (s->ukind ? s->ukind : SR_UK_SUM) : SR_UK_NONE);
  b.reduced = r;
  *out = sr_type_get(&b);
  return 0;
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
    if (layout_of_spec(cx, t, sh, m, NULL, 0, &l) < 0) return -1;
    if (sh->kind == SR_V_SHARDING) l = keep_auto_axes(l, e->in[0], m, sh->sh.mesh);
  } else {
    l = sr_ev_out_layout(cx, e, 0, m);
  }
  e->out[0] = sr_redistribute_typed(cx, e->in[0], m, l, t);
  return e->out[0] ? 0 : -1;
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
  else if (layout_of_spec(cx, t, sh, m, x->mesh == m ? x->layout : NULL, keep, &l) < 0) return -1;
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

int sr_ev_layout_of_sharding(SrEvalCtx *cx, const SrType *t, const SrVal *sh, const SrMesh *m, const SrType **out) {
  return layout_of_spec(cx, t, sh, m, NULL, 0, out);
}

void sr_eval_rules_sharding(void) {
  sr_set_eval_rule(SR_P_reshard, ev_reshard);
  sr_set_eval_rule(SR_P_sharding_constraint, ev_sharding_constraint);
  sr_set_eval_rule(SR_P_layout_constraint, ev_layout_constraint);
}
