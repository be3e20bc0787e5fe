/* ad_comm.c: the communication an equation implies (sr_ad_comm_notes,
 * ad.h), which :comm-static lists (lib/cmd/commands_ad.c) and the
 * optimizer weighs. */
#include "ad/ad.h"
#include "prims/prim.h"
#include "prims/rule.h"
#include "util/intern.h"

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

/* Axes a type's dims are sharded over, named on the type's mesh. */
static SrAxes dims_axes(const SrType *t, const int64_t *dims, int n) {
  SrAxes a = 0;
  for (int i = 0; i < n; i++)
    if (dims[i] >= 0 && dims[i] < t->ndim) a |= sr_dim_axes(&t->dims[dims[i]]);
  return a;
}

static int note(SrCommNote *out, int max, int n, const char *what, const SrMesh *m, SrAxes a) {
  if (n < max) {
    out[n].what = what;
    out[n].mesh = m;
    out[n].axes = a;
  }
  return n + 1;
}

int sr_ad_comm_notes(const SrEqn *e, SrCommNote *out, int max) {
  int id = e->prim->id, n = 0;
  const SrType *in0 = e->nin ? e->in[0]->type : NULL, *o0 = e->nout ? e->out[0]->type : NULL;
  switch (id) {
  case SR_P_psum: case SR_P_psum_invariant: case SR_P_unreduced_psum:
  case SR_P_pmax: case SR_P_pmin: case SR_P_unreduced_pmax: case SR_P_unreduced_pmin:
    return note(out, max, n, "all-reduce (explicit collective)", NULL, 0);
  case SR_P_all_gather: case SR_P_all_gather_invariant: case SR_P_all_gather_reduced:
    return note(out, max, n, "all-gather (explicit collective)", NULL, 0);
  case SR_P_reduce_scatter: case SR_P_unreduced_reduce_scatter:
    return note(out, max, n, "reduce-scatter (explicit collective)", NULL, 0);
  case SR_P_ppermute: return note(out, max, n, "collective-permute (explicit collective)", NULL, 0);
  case SR_P_all_to_all: return note(out, max, n, "all-to-all (explicit collective)", NULL, 0);
  case SR_P_reshard:
    if (in0 && o0) {
      SrAxes u = in0->unreduced & ~sr_axes_remap(o0->unreduced, o0->mesh, in0->mesh);
      if (u) return note(out, max, n, "all-reduce (reshard from unreduced)", in0->mesh, u);
      SrAxes from = sr_type_sharded_axes(in0), to = o0->mesh ? sr_axes_remap(sr_type_sharded_axes(o0), o0->mesh, in0->mesh) : 0;
      if (from & ~to) n = note(out, max, n, "all-gather (reshard)", in0->mesh, from & ~to);
      else if (from && from != to) n = note(out, max, n, "all-to-all (reshard)", in0->mesh, from);
    }
    return n;
  case SR_P_dot_general: {
    SrVal *d = param(e, "dimension_numbers");
    if (!d || !sr_is_seq(d) || d->seq.n != 2 || !sr_is_seq(d->seq.items[0]) || e->nin < 2) return 0;
    int64_t lc[SR_MAX_RANK], rc[SR_MAX_RANK];
    int nl = 0, nr = 0;
    if (sr_val_ints(d->seq.items[0]->seq.items[0], lc, SR_MAX_RANK, &nl) < 0 ||
        sr_val_ints(d->seq.items[0]->seq.items[1], rc, SR_MAX_RANK, &nr) < 0)
      return 0;
    const SrType *lt = e->in[0]->type, *rt = e->in[1]->type;
    if (!lt || !rt || !o0) return 0;
    SrAxes la = dims_axes(lt, lc, nl), ra = rt->mesh && lt->mesh ? sr_axes_remap(dims_axes(rt, rc, nr), rt->mesh, lt->mesh) : dims_axes(rt, rc, nr);
    const SrMesh *m = lt->mesh ? lt->mesh : rt->mesh;
    SrAxes ou = o0->mesh && m ? sr_axes_remap(o0->unreduced, o0->mesh, m) : 0;
    SrAxes os = o0->mesh && m ? sr_axes_remap(sr_type_sharded_axes(o0), o0->mesh, m) : 0;
    SrAxes both = la & ra;
    if (both & ~ou & ~os) n = note(out, max, n, "all-reduce (contraction over sharded dims)", m, both & ~ou & ~os);
    else if (both & os) n = note(out, max, n, "reduce-scatter (contraction over sharded dims)", m, both & os);
    SrAxes one = (la ^ ra) & ~both;
    if (one) n = note(out, max, n, "all-gather (one side of a contraction sharded)", m, one);
    return n;
  }
  case SR_P_reduce_sum: case SR_P_reduce_max: case SR_P_reduce_min: case SR_P_reduce_prod:
  case SR_P_reduce_and: case SR_P_reduce_or: case SR_P_argmax: case SR_P_argmin: {
    if (!in0 || !o0) return 0;
    int64_t ax[SR_MAX_RANK];
    int na = 0;
    SrVal *v = param(e, "axes");
    if (!v || sr_val_ints(v, ax, SR_MAX_RANK, &na) < 0) return 0;
    SrAxes a = dims_axes(in0, ax, na);
    SrAxes ou = o0->mesh ? sr_axes_remap(o0->unreduced, o0->mesh, in0->mesh) : 0;
    if (a & ~ou) n = note(out, max, n, "all-reduce (reduction over sharded dims)", in0->mesh, a & ~ou);
    return n;
  }
  default: return -1;
  }
}
