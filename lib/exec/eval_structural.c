/* eval_structural.c: eval rules of the structural primitives.
 *
 * Each rule picks, for every operand, the layout under which the result's
 * shard is a function of the operands' shards alone: dims that map one to
 * one onto result dims take the result's axes, dims the operation reads
 * across (a sliced, padded, reversed or concatenated dim) are gathered.
 * The result is computed in the layout that gives ("natural"), then
 * redistributed to its type's layout, which for the usual cases is the
 * same or a local slice away.  reshape, squeeze and expand_dims move no
 * data when the blocks line up. */
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "prims/rule.h"
#include "exec/kern.h"
#include "util/mem.h"

/* ---- layouts ---- */

/* A layout for operand a: its dim i takes result layout l's dim map[i]
   axes when map[i] >= 0 and the sizes agree, else none; a's own unreduced
   and reduced sets and dtype. */
static const SrType *mapped_layout(const SrArray *a, const SrType *l, const int *map) {
  SrTypeBuilder b;
  sr_type_builder(&b, a->layout);
  for (int i = 0; i < b.ndim; i++) {
    b.dims[i].nax = 0;
    memset(b.dims[i].ax, 0, sizeof b.dims[i].ax);
    int d = map ? map[i] : i;
    if (d < 0 || !l || l->dims[d].size != b.dims[i].size || !l->dims[d].nax) continue;
    b.dims[i].nax = l->dims[d].nax;
    memcpy(b.dims[i].ax, l->dims[d].ax, SR_MAX_DIM_AXES);
    b.mesh = l->mesh;
  }
  return sr_type_get(&b);
}

/* l without the axes of the dims in mask. */
static const SrType *drop_dims(const SrType *l, uint64_t mask) {
  if (!mask) return l;
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  for (int i = 0; i < b.ndim; i++)
    if (mask >> i & 1) b.dims[i].nax = 0;
  return sr_type_get(&b);
}

/* A natural result layout: l's dims except those in mask, with the
   unreduced/reduced sets of operand layout src (structural operations
   carry them through). */
static const SrType *natural(const SrType *l, uint64_t mask, const SrType *src, SrDtype dt) {
  SrTypeBuilder b;
  sr_type_builder(&b, drop_dims(l, mask));
  b.dtype = dt;
  b.unreduced = src->unreduced;
  b.ukind = src->ukind;
  b.reduced = src->reduced;
  if ((b.unreduced || b.reduced) && !b.mesh) b.mesh = src->mesh;
  return sr_type_get(&b);
}

/* Redistributes the natural result to the type's layout; consumes nat. */
static int finish(SrEvalCtx *cx, const SrEvalEqn *e, uint32_t i, const SrMesh *m, SrArray *nat) {
  const SrType *l = sr_ev_out_layout(cx, e, i, m);
  e->out[i] = sr_redistribute_typed(cx, nat, m, l, e->out_type[i]);
  sr_array_unref(nat);
  return e->out[i] ? 0 : -1;
}

typedef struct Out1 {
  const SrMesh *m;
  const SrType *l; /* the result's type layout */
} Out1;

static Out1 out1(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o;
  o.m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  o.l = sr_ev_out_layout(cx, e, 0, o.m);
  return o;
}

static size_t esize(const SrArray *a) { return sr_elem_size(a->type->dtype); }

/* ---- broadcast_in_dim ---- */

typedef struct BcastArg {
  int nd;
  int64_t in_view[SR_MAX_RANK]; /* the operand's shard as out-rank */
  int64_t step[SR_MAX_RANK];
  size_t es;
} BcastArg;

static int bcast_fn(SrShardIO *io) {
  BcastArg *b = io->arg;
  int64_t zero[SR_MAX_RANK] = {0};
  sr_kern_strided(b->es, b->nd, b->in_view, zero, b->step, io->out_shape[0], io->in[0]->data, io->out[0]->data);
  return 0;
}

static int ev_broadcast_in_dim(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  const SrType *t = e->out_type[0];
  SrArray *x = e->in[0];
  int64_t bd[SR_MAX_RANK];
  int nbd = 0;
  if (sr_ev_param_ints(cx, e, "broadcast_dimensions", bd, SR_MAX_RANK, &nbd) < 0) return -1;
  if (nbd != x->type->ndim) return sr_ev_err(cx, "TypeError", "broadcast_in_dim: broadcast_dimensions do not match the operand");
  int map[SR_MAX_RANK];
  for (int i = 0; i < nbd; i++) map[i] = (int)bd[i];
  SrArray *xin = sr_redistribute(cx, x, o.m, mapped_layout(x, o.l, map));
  if (!xin) return -1;
  /* the result in the type's layout directly: a broadcast dim's block is
     the same values whichever block it is */
  SrTypeBuilder nb;
  sr_type_builder(&nb, o.l);
  nb.unreduced = xin->layout->unreduced;
  nb.ukind = xin->layout->ukind;
  nb.reduced = xin->layout->reduced;
  if ((nb.unreduced || nb.reduced) && !nb.mesh) nb.mesh = xin->layout->mesh;
  SrArray *r = sr_array_new(t, sr_type_get(&nb), o.m);
  BcastArg b;
  b.nd = t->ndim;
  b.es = esize(x);
  int64_t xs[SR_MAX_RANK];
  sr_layout_shard_shape(xin->layout, xs);
  for (int d = 0; d < t->ndim; d++) {
    b.in_view[d] = 1;
    b.step[d] = 0;
  }
  for (int i = 0; i < nbd; i++) {
    b.in_view[bd[i]] = xs[i];
    b.step[bd[i]] = xs[i] == 1 ? 0 : 1;
  }
  int rc = sr_ev_map(cx, 1, &xin, 1, &r, 0, bcast_fn, &b);
  sr_array_unref(xin);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* ---- reshape, squeeze, expand_dims: blocks that line up move nothing ---- */

/* The flat range of the block at pos, or -1 if it is not contiguous. */
static int flat_block(const SrType *l, const SrMesh *m, int pos, int64_t *start, int64_t *count) {
  int64_t st[SR_MAX_RANK], sh[SR_MAX_RANK], strides[SR_MAX_RANK], full[SR_MAX_RANK];
  sr_layout_block_start(l, m, pos, st);
  sr_layout_shard_shape(l, sh);
  for (int i = 0; i < l->ndim; i++) full[i] = l->dims[i].size;
  sr_kern_row_strides(l->ndim, full, strides);
  int k = 0;
  while (k < l->ndim - 1 && sh[k] == 1) k++;
  for (int i = k + 1; i < l->ndim; i++)
    if (sh[i] != full[i]) return -1;
  *start = 0;
  *count = 1;
  for (int i = 0; i < l->ndim; i++) {
    *start += st[i] * strides[i];
    *count *= sh[i];
  }
  return 0;
}

static int blocks_line_up(const SrType *a, const SrType *b, const SrMesh *m) {
  if (a->unreduced != b->unreduced || (a->unreduced && a->ukind != b->ukind)) return 0;
  if (!m) return 1;
  int n = sr_mesh_ndev(m);
  for (int p = 0; p < n; p++) {
    int64_t s1, c1, s2, c2;
    if (flat_block(a, m, p, &s1, &c1) < 0 || flat_block(b, m, p, &s2, &c2) < 0) return 0;
    if (s1 != s2 || c1 != c2) return 0;
  }
  return 1;
}

/* The same elements in row-major order, under a new shape. */
static int ev_reshape_like(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  const SrType *t = e->out_type[0];
  SrArray *x = e->in[0];
  SrVal *dims = sr_ev_param(e, "dimensions");
  if (dims && dims->kind != SR_V_NONE && e->prim->id == SR_P_reshape)
    return sr_ev_err(cx, "NotImplementedError", "reshape with dimensions= is not supported");
  /* the result's layout with the operand's unreduced/reduced sets */
  const SrType *want = natural(o.l, 0, x->layout, t->dtype);
  if (x->mesh == o.m && blocks_line_up(x->layout, want, o.m)) return finish(cx, e, 0, o.m, sr_array_retype(x, t, want));
  /* otherwise through the whole value on every device */
  SrArray *full = sr_redistribute(cx, x, o.m, natural(drop_dims(x->layout, ~0ull), 0, x->layout, x->type->dtype));
  if (!full) return -1;
  SrArray *r = sr_array_retype(full, t, natural(drop_dims(o.l, ~0ull), 0, full->layout, t->dtype));
  sr_array_unref(full);
  return finish(cx, e, 0, o.m, r);
}

/* ---- transpose ---- */

typedef struct TransArg {
  int nd;
  size_t es;
  int perm[SR_MAX_RANK];
} TransArg;

static int transpose_fn(SrShardIO *io) {
  TransArg *t = io->arg;
  sr_kern_transpose(t->es, t->nd, io->in_shape[0], t->perm, io->in[0]->data, io->out[0]->data);
  return 0;
}

static int ev_transpose(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  SrArray *x = e->in[0];
  int64_t p[SR_MAX_RANK];
  int np;
  if (sr_ev_param_ints(cx, e, "permutation", p, SR_MAX_RANK, &np) < 0) return -1;
  TransArg ta;
  int inv[SR_MAX_RANK];
  ta.nd = np;
  ta.es = esize(x);
  for (int k = 0; k < np; k++) {
    ta.perm[k] = (int)p[k];
    inv[p[k]] = k;
  }
  SrArray *xin = sr_redistribute(cx, x, o.m, mapped_layout(x, o.l, inv));
  if (!xin) return -1;
  SrArray *r = sr_array_new(e->out_type[0], natural(o.l, 0, xin->layout, x->type->dtype), o.m);
  int rc = sr_ev_map(cx, 1, &xin, 1, &r, 0, transpose_fn, &ta);
  sr_array_unref(xin);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* ---- rev, slice: strided reads of gathered dims ---- */

typedef struct StridedArg {
  int nd;
  size_t es;
  int64_t start[SR_MAX_RANK], step[SR_MAX_RANK];
} StridedArg;

static int strided_fn(SrShardIO *io) {
  StridedArg *s = io->arg;
  sr_kern_strided(s->es, s->nd, io->in_shape[0], s->start, s->step, io->out_shape[0], io->in[0]->data,
                  io->out[0]->data);
  return 0;
}

static int run_strided(SrEvalCtx *cx, const SrEvalEqn *e, Out1 o, uint64_t gathered, StridedArg *s) {
  SrArray *x = e->in[0];
  int id[SR_MAX_RANK];
  for (int i = 0; i < x->type->ndim; i++) id[i] = gathered >> i & 1 ? -1 : i;
  SrArray *xin = sr_redistribute(cx, x, o.m, mapped_layout(x, o.l, id));
  if (!xin) return -1;
  SrArray *r = sr_array_new(e->out_type[0], natural(o.l, gathered, xin->layout, x->type->dtype), o.m);
  /* dims that are not gathered are read whole, from 0 */
  for (int i = 0; i < s->nd; i++)
    if (!(gathered >> i & 1)) {
      s->start[i] = 0;
      s->step[i] = 1;
    }
  int rc = sr_ev_map(cx, 1, &xin, 1, &r, 0, strided_fn, s);
  sr_array_unref(xin);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

static int ev_rev(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  SrArray *x = e->in[0];
  int64_t dims[SR_MAX_RANK];
  int n;
  if (sr_ev_param_ints(cx, e, "dimensions", dims, SR_MAX_RANK, &n) < 0) return -1;
  StridedArg s;
  memset(&s, 0, sizeof s);
  s.nd = x->type->ndim;
  s.es = esize(x);
  uint64_t g = 0;
  for (int k = 0; k < n; k++) {
    g |= 1ull << dims[k];
    s.start[dims[k]] = x->type->dims[dims[k]].size - 1;
    s.step[dims[k]] = -1;
  }
  return run_strided(cx, e, o, g, &s);
}

static int ev_slice(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  SrArray *x = e->in[0];
  int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK];
  int n1, n2, n3 = 0;
  if (sr_ev_param_ints(cx, e, "start_indices", st, SR_MAX_RANK, &n1) < 0) return -1;
  if (sr_ev_param_ints(cx, e, "limit_indices", lim, SR_MAX_RANK, &n2) < 0) return -1;
  SrVal *sv = sr_ev_param(e, "strides");
  if (sv && sv->kind != SR_V_NONE && sr_ev_param_ints(cx, e, "strides", str, SR_MAX_RANK, &n3) < 0) return -1;
  StridedArg s;
  memset(&s, 0, sizeof s);
  s.nd = x->type->ndim;
  s.es = esize(x);
  uint64_t g = 0;
  for (int i = 0; i < s.nd; i++) {
    int64_t step = n3 ? str[i] : 1;
    if (st[i] != 0 || lim[i] != x->type->dims[i].size || step != 1) g |= 1ull << i;
    s.start[i] = st[i];
    s.step[i] = step;
  }
  return run_strided(cx, e, o, g, &s);
}

/* ---- squeeze / expand_dims ---- */

static int ev_squeeze(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_reshape_like(cx, e); }

/* ---- concatenate ---- */

typedef struct CatArg {
  int nd, dim, n;
  size_t es;
} CatArg;

static int cat_fn(SrShardIO *io) {
  CatArg *c = io->arg;
  int64_t start[SR_MAX_RANK] = {0};
  for (int k = 0; k < c->n; k++) {
    sr_kern_paste_box(c->es, c->nd, io->out_shape[0], start, io->in_shape[k], io->in[k]->data, io->out[0]->data);
    start[c->dim] += io->in_shape[k][c->dim];
  }
  return 0;
}

static int ev_concatenate(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  int64_t dim;
  if (sr_ev_param_int(cx, e, "dimension", &dim) < 0) return -1;
  if (e->nin > 16) return sr_ev_err(cx, "NotImplementedError", "concatenate of more than 16 operands");
  SrArray *ins[16] = {0};
  int id[SR_MAX_RANK];
  for (int i = 0; i < e->out_type[0]->ndim; i++) id[i] = i == dim ? -1 : i;
  int rc = 0;
  for (uint32_t k = 0; k < e->nin && rc == 0; k++) {
    ins[k] = sr_redistribute(cx, e->in[k], o.m, mapped_layout(e->in[k], o.l, id));
    if (!ins[k]) rc = -1;
  }
  SrArray *r = NULL;
  if (rc == 0) {
    r = sr_array_new(e->out_type[0], natural(o.l, 1ull << dim, ins[0]->layout, e->out_type[0]->dtype), o.m);
    CatArg c = {e->out_type[0]->ndim, (int)dim, (int)e->nin, esize(e->in[0])};
    rc = sr_ev_map(cx, (int)e->nin, ins, 1, &r, 0, cat_fn, &c);
  }
  for (uint32_t k = 0; k < e->nin; k++) sr_array_unref(ins[k]);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* ---- stack / unstack ---- */

/* Both move whole operand blocks: the operands' shape with a size-1 dim
   at the axis is the block each one fills (stack) or takes (unstack). */
typedef struct StackArg {
  int nd, axis, n; /* nd: rank with the axis */
  size_t es;
} StackArg;

static void with_unit_axis(const StackArg *s, const int64_t *shape, int64_t *out) {
  for (int d = 0, j = 0; d < s->nd; d++) out[d] = d == s->axis ? 1 : shape[j++];
}

static int stack_fn(SrShardIO *io) {
  StackArg *s = io->arg;
  int64_t start[SR_MAX_RANK] = {0}, box[SR_MAX_RANK];
  for (int k = 0; k < s->n; k++) {
    with_unit_axis(s, io->in_shape[k], box);
    start[s->axis] = k;
    sr_kern_paste_box(s->es, s->nd, io->out_shape[0], start, box, io->in[k]->data, io->out[0]->data);
  }
  return 0;
}

static int unstack_fn(SrShardIO *io) {
  StackArg *s = io->arg;
  int64_t start[SR_MAX_RANK] = {0}, box[SR_MAX_RANK];
  for (int k = 0; k < s->n; k++) {
    with_unit_axis(s, io->out_shape[k], box);
    start[s->axis] = k;
    sr_kern_copy_box(s->es, s->nd, io->in_shape[0], start, box, io->in[0]->data, io->out[k]->data);
  }
  return 0;
}

/* map[i]: the dim of the stacked array that dim i of an operand is */
static void stack_map(int nd, int axis, int *map) {
  for (int i = 0; i < nd - 1; i++) map[i] = i < axis ? i : i + 1;
}

static int ev_stack(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  int64_t axis;
  if (sr_ev_param_int(cx, e, "axis", &axis) < 0) return -1;
  if (e->nin > 16) return sr_ev_err(cx, "NotImplementedError", "stack of more than 16 operands");
  SrArray *ins[16] = {0};
  int map[SR_MAX_RANK];
  stack_map(e->out_type[0]->ndim, (int)axis, map);
  int rc = 0;
  for (uint32_t k = 0; k < e->nin && rc == 0; k++) {
    ins[k] = sr_redistribute(cx, e->in[k], o.m, mapped_layout(e->in[k], o.l, map));
    if (!ins[k]) rc = -1;
  }
  SrArray *r = NULL;
  if (rc == 0) {
    r = sr_array_new(e->out_type[0], natural(o.l, 1ull << axis, ins[0]->layout, e->out_type[0]->dtype), o.m);
    StackArg s = {e->out_type[0]->ndim, (int)axis, (int)e->nin, esize(e->in[0])};
    rc = sr_ev_map(cx, (int)e->nin, ins, 1, &r, 0, stack_fn, &s);
  }
  for (uint32_t k = 0; k < e->nin; k++) sr_array_unref(ins[k]);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* The natural layout of an unstacked piece: the operand's layout without
   the axis. */
static const SrType *without_axis(const SrType *l, int axis) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  memmove(&b.dims[axis], &b.dims[axis + 1], (size_t)(b.ndim - axis - 1) * sizeof b.dims[0]);
  b.ndim--;
  return sr_type_get(&b);
}

static int ev_unstack(SrEvalCtx *cx, const SrEvalEqn *e) {
  int64_t axis;
  if (sr_ev_param_int(cx, e, "axis", &axis) < 0) return -1;
  if (e->nout > 16) return sr_ev_err(cx, "NotImplementedError", "unstack into more than 16 parts");
  SrArray *x = e->in[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l0 = sr_ev_out_layout(cx, e, 0, m);
  /* the operand takes the first result's axes on its other dims */
  int map[SR_MAX_RANK];
  for (int i = 0; i < x->type->ndim; i++) map[i] = i == axis ? -1 : i < axis ? i : i - 1;
  SrArray *xin = sr_redistribute(cx, x, m, mapped_layout(x, l0, map));
  if (!xin) return -1;
  SrArray *outs[16];
  for (uint32_t k = 0; k < e->nout; k++)
    outs[k] = sr_array_new(e->out_type[k], without_axis(natural(xin->layout, 0, xin->layout, x->type->dtype), (int)axis), m);
  StackArg s = {x->type->ndim, (int)axis, (int)e->nout, esize(x)};
  int rc = sr_ev_map(cx, 1, &xin, (int)e->nout, outs, 0, unstack_fn, &s);
  sr_array_unref(xin);
  for (uint32_t k = 0; k < e->nout; k++) {
    if (rc == 0) rc = finish(cx, e, k, m, outs[k]);
    else sr_array_unref(outs[k]);
  }
  return rc;
}

/* ---- split ---- */

typedef struct SplitArg {
  int nd, axis, n;
  size_t es;
} SplitArg;

static int split_fn(SrShardIO *io) {
  SplitArg *s = io->arg;
  int64_t start[SR_MAX_RANK] = {0};
  for (int k = 0; k < s->n; k++) {
    sr_kern_copy_box(s->es, s->nd, io->in_shape[0], start, io->out_shape[k], io->in[0]->data, io->out[k]->data);
    start[s->axis] += io->out_shape[k][s->axis];
  }
  return 0;
}

static int ev_split(SrEvalCtx *cx, const SrEvalEqn *e) {
  int64_t axis;
  if (sr_ev_param_int(cx, e, "axis", &axis) < 0) return -1;
  if (e->nout > 16) return sr_ev_err(cx, "NotImplementedError", "split into more than 16 parts");
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l0 = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = e->in[0];
  int id[SR_MAX_RANK];
  for (int i = 0; i < x->type->ndim; i++) id[i] = i == axis ? -1 : i;
  SrArray *xin = sr_redistribute(cx, x, m, mapped_layout(x, l0, id));
  if (!xin) return -1;
  SrArray *outs[16];
  for (uint32_t k = 0; k < e->nout; k++) {
    const SrType *lk = sr_ev_out_layout(cx, e, k, m);
    outs[k] = sr_array_new(e->out_type[k], natural(lk, 1ull << axis, xin->layout, x->type->dtype), m);
  }
  SplitArg s = {x->type->ndim, (int)axis, (int)e->nout, esize(x)};
  int rc = sr_ev_map(cx, 1, &xin, (int)e->nout, outs, 0, split_fn, &s);
  sr_array_unref(xin);
  for (uint32_t k = 0; k < e->nout; k++) {
    if (rc == 0) rc = finish(cx, e, k, m, outs[k]);
    else sr_array_unref(outs[k]);
  }
  return rc;
}

/* ---- pad ---- */

typedef struct PadArg {
  int nd;
  size_t es;
  int64_t lo[SR_MAX_RANK], hi[SR_MAX_RANK], in_[SR_MAX_RANK];
  uint64_t padded;
} PadArg;

static int pad_fn(SrShardIO *io) {
  PadArg *p = io->arg;
  size_t total = io->out[0]->nbytes / p->es;
  sr_kern_fill(p->es, total, io->in[1]->data, io->out[0]->data);
  const int64_t *is = io->in_shape[0], *os = io->out_shape[0];
  int64_t istr[SR_MAX_RANK], ostr[SR_MAX_RANK], count[SR_MAX_RANK], sst[SR_MAX_RANK], dst[SR_MAX_RANK];
  sr_kern_row_strides(p->nd, is, istr);
  sr_kern_row_strides(p->nd, os, ostr);
  int64_t soff = 0, doff = 0;
  for (int i = 0; i < p->nd; i++) {
    if (!(p->padded >> i & 1)) {
      count[i] = is[i];
      sst[i] = istr[i];
      dst[i] = ostr[i];
      continue;
    }
    /* input element j lands at lo + j * (interior + 1), if inside */
    int64_t step = p->in_[i] + 1, j0 = 0;
    if (p->lo[i] < 0) j0 = (-p->lo[i] + step - 1) / step;
    int64_t j1 = is[i]; /* exclusive */
    while (j1 > j0 && p->lo[i] + (j1 - 1) * step >= os[i]) j1--;
    count[i] = j1 > j0 ? j1 - j0 : 0;
    soff += j0 * istr[i];
    doff += (p->lo[i] + j0 * step) * ostr[i];
    sst[i] = istr[i];
    dst[i] = ostr[i] * step;
  }
  sr_kern_copy_general(p->es, p->nd, count, io->in[0]->data, soff, sst, io->out[0]->data, doff, dst);
  return 0;
}

static int ev_pad(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  SrArray *x = e->in[0];
  int64_t cfg[3 * SR_MAX_RANK];
  int n;
  if (sr_ev_param_ints(cx, e, "padding_config", cfg, 3 * SR_MAX_RANK, &n) < 0) return -1;
  PadArg p;
  memset(&p, 0, sizeof p);
  p.nd = x->type->ndim;
  p.es = esize(x);
  if (n != 3 * p.nd) return sr_ev_err(cx, "TypeError", "pad: padding_config does not match the operand");
  int id[SR_MAX_RANK];
  for (int i = 0; i < p.nd; i++) {
    p.lo[i] = cfg[3 * i];
    p.hi[i] = cfg[3 * i + 1];
    p.in_[i] = cfg[3 * i + 2];
    if (p.lo[i] || p.hi[i] || p.in_[i]) p.padded |= 1ull << i;
    id[i] = p.padded >> i & 1 ? -1 : i;
  }
  SrArray *ins[2];
  ins[0] = sr_redistribute(cx, x, o.m, mapped_layout(x, o.l, id));
  if (!ins[0]) return -1;
  ins[1] = sr_redistribute(cx, e->in[1], o.m, e->in[1]->layout);
  if (!ins[1]) {
    sr_array_unref(ins[0]);
    return -1;
  }
  SrArray *r = sr_array_new(e->out_type[0], natural(o.l, p.padded, ins[0]->layout, x->type->dtype), o.m);
  int rc = sr_ev_map(cx, 2, ins, 1, &r, 0, pad_fn, &p);
  sr_array_unref(ins[0]);
  sr_array_unref(ins[1]);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* ---- dynamic_slice / dynamic_update_slice ---- */

typedef struct DynArg {
  int nd, nidx;
  size_t es;
  SrDtype idt[SR_MAX_RANK];
  uint64_t sliced;
} DynArg;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static int dyn_slice_fn(SrShardIO *io) {
  DynArg *d = io->arg;
  int64_t start[SR_MAX_RANK];
  for (int i = 0; i < d->nd; i++) {
    if (!(d->sliced >> i & 1)) {
      start[i] = 0;
      continue;
    }
    int64_t v = sr_kern_get_i64(d->idt[i], io->in[1 + i]->data);
    start[i] = clamp64(v, 0, io->in_shape[0][i] - io->out_shape[0][i]);
  }
  sr_kern_copy_box(d->es, d->nd, io->in_shape[0], start, io->out_shape[0], io->in[0]->data, io->out[0]->data);
  return 0;
}

static int dyn_update_fn(SrShardIO *io) {
  DynArg *d = io->arg;
  int64_t start[SR_MAX_RANK];
  memcpy(io->out[0]->data, io->in[0]->data, io->out[0]->nbytes);
  for (int i = 0; i < d->nd; i++) {
    if (!(d->sliced >> i & 1)) {
      start[i] = 0;
      continue;
    }
    int64_t v = sr_kern_get_i64(d->idt[i], io->in[2 + i]->data);
    start[i] = clamp64(v, 0, io->in_shape[0][i] - io->in_shape[1][i]);
  }
  sr_kern_paste_box(d->es, d->nd, io->out_shape[0], start, io->in_shape[1], io->in[1]->data, io->out[0]->data);
  return 0;
}

/* Scalar index operands, on the result's mesh. */
static int index_operands(SrEvalCtx *cx, const SrEvalEqn *e, uint32_t from, const SrMesh *m, SrArray **ins,
                          DynArg *d) {
  for (uint32_t k = from; k < e->nin; k++) {
    ins[k] = sr_redistribute(cx, e->in[k], m, e->in[k]->layout);
    if (!ins[k]) return -1;
    if (ins[k]->mesh && ins[k]->mesh != m) return sr_ev_err(cx, "RuntimeError", "internal: index on another mesh");
    d->idt[k - from] = e->in[k]->type->dtype;
  }
  return 0;
}

static int ev_dynamic_slice(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  SrArray *x = e->in[0];
  DynArg d;
  memset(&d, 0, sizeof d);
  d.nd = x->type->ndim;
  d.es = esize(x);
  if ((int)e->nin != 1 + d.nd || e->nin > 16)
    return sr_ev_err(cx, "NotImplementedError", "dynamic_slice with %u operands", e->nin);
  int id[SR_MAX_RANK];
  for (int i = 0; i < d.nd; i++) {
    if (e->out_type[0]->dims[i].size != x->type->dims[i].size) d.sliced |= 1ull << i;
    id[i] = d.sliced >> i & 1 ? -1 : i;
  }
  SrArray *ins[16] = {0};
  int rc = 0;
  ins[0] = sr_redistribute(cx, x, o.m, mapped_layout(x, o.l, id));
  if (!ins[0]) rc = -1;
  if (rc == 0) rc = index_operands(cx, e, 1, o.m, ins, &d);
  SrArray *r = NULL;
  if (rc == 0) {
    r = sr_array_new(e->out_type[0], natural(o.l, d.sliced, ins[0]->layout, x->type->dtype), o.m);
    rc = sr_ev_map(cx, (int)e->nin, ins, 1, &r, 0, dyn_slice_fn, &d);
  }
  for (uint32_t k = 0; k < e->nin; k++) sr_array_unref(ins[k]);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

static int ev_dynamic_update_slice(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  SrArray *x = e->in[0], *u = e->in[1];
  DynArg d;
  memset(&d, 0, sizeof d);
  d.nd = x->type->ndim;
  d.es = esize(x);
  if ((int)e->nin != 2 + d.nd || e->nin > 16)
    return sr_ev_err(cx, "NotImplementedError", "dynamic_update_slice with %u operands", e->nin);
  int id[SR_MAX_RANK];
  for (int i = 0; i < d.nd; i++) {
    if (u->type->dims[i].size != x->type->dims[i].size) d.sliced |= 1ull << i;
    id[i] = d.sliced >> i & 1 ? -1 : i;
  }
  SrArray *ins[16] = {0};
  int rc = 0;
  ins[0] = sr_redistribute(cx, x, o.m, mapped_layout(x, o.l, id));
  ins[1] = ins[0] ? sr_redistribute(cx, u, o.m, mapped_layout(u, o.l, id)) : NULL;
  if (!ins[0] || !ins[1]) rc = -1;
  if (rc == 0) rc = index_operands(cx, e, 2, o.m, ins, &d);
  SrArray *r = NULL;
  if (rc == 0) {
    r = sr_array_new(e->out_type[0], natural(o.l, d.sliced, ins[0]->layout, x->type->dtype), o.m);
    rc = sr_ev_map(cx, (int)e->nin, ins, 1, &r, 0, dyn_update_fn, &d);
  }
  for (uint32_t k = 0; k < e->nin; k++) sr_array_unref(ins[k]);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* ---- iota ---- */

typedef struct IotaArg {
  SrDtype dt;
  int nd, dim;
} IotaArg;

static int iota_fn(SrShardIO *io) {
  IotaArg *a = io->arg;
  if (sr_kern_iota(a->dt, a->nd, io->out_shape[0], io->out_start, a->dim, io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "iota of dtype %s", sr_dtype_name(a->dt));
  return 0;
}

static int ev_iota(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  const SrType *t = e->out_type[0];
  int64_t dim = 0;
  if (sr_ev_param_int(cx, e, "dimension", &dim) < 0) return -1;
  IotaArg a = {t->dtype, t->ndim, (int)dim};
  e->out[0] = sr_array_new(t, o.l, o.m);
  return sr_ev_map(cx, 0, NULL, 1, e->out, SR_MAP_BLOCK, iota_fn, &a);
}

void sr_eval_rules_structural(void) {
  sr_set_eval_rule(SR_P_broadcast_in_dim, ev_broadcast_in_dim);
  sr_set_eval_rule(SR_P_reshape, ev_reshape_like);
  sr_set_eval_rule(SR_P_squeeze, ev_squeeze);
  sr_set_eval_rule(SR_P_expand_dims, ev_squeeze);
  sr_set_eval_rule(SR_P_transpose, ev_transpose);
  sr_set_eval_rule(SR_P_rev, ev_rev);
  sr_set_eval_rule(SR_P_slice, ev_slice);
  sr_set_eval_rule(SR_P_concatenate, ev_concatenate);
  sr_set_eval_rule(SR_P_split, ev_split);
  sr_set_eval_rule(SR_P_stack, ev_stack);
  sr_set_eval_rule(SR_P_unstack, ev_unstack);
  sr_set_eval_rule(SR_P_pad, ev_pad);
  sr_set_eval_rule(SR_P_dynamic_slice, ev_dynamic_slice);
  sr_set_eval_rule(SR_P_dynamic_update_slice, ev_dynamic_update_slice);
  sr_set_eval_rule(SR_P_iota, ev_iota);
}
