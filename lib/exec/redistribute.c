/* redistribute.c: all data movement between layouts, and the collectives
 * with their ledger entries.
 *
 * sr_redistribute() turns an array's layout into another as a sequence of
 * steps, each one collective or one local transform, over the dims' axis
 * lists (major first), the unreduced set U and its kind:
 *
 *   1. reduce the unreduced axes the target drops: a reduce-scatter into
 *      the dimension whose target list continues the current one with
 *      those axes (jnp.dot(..., out_sharding=P('X', None)) over a
 *      contracting dim split on X), else an all-reduce;
 *   2. all-to-all for an axis that is the last of one dimension's list and
 *      the next of another's target list (P('X', None) -> P(None, 'X'));
 *   3. for each dimension, the axes at the end of its list that its target
 *      list does not have, innermost first: padding with zeros in place
 *      for an axis that becomes unreduced (a device keeps its block, as
 *      XLA does), else an all-gather (consecutive ones in one call);
 *   4. a local slice for the axes each target list adds;
 *   5. for an axis that becomes unreduced and was replicated: the devices
 *      at coordinate 0 along it keep the value, the others hold zeros.
 *
 * Reduced axes hold replicated data, so they move nothing.  Arrays on
 * different meshes (or a meshless one) go through a replicated copy.
 */
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "exec/ew_pieces.h"
#include "exec/kern.h"
#include "exec/layout.h"
#include "util/intern.h"
#include "util/mem.h"

/* ---- the ledger ---- */

static void record(SrEvalCtx *cx, const char *kind, const SrMesh *m, const int *axes, int naxes, SrDtype dt,
                   size_t bytes) {
  if (!cx->ex) return;
  SrBuf a = SR_BUF_INIT, p = SR_BUF_INIT;
  sr_buf_putc(&a, '(');
  for (int i = 0; i < naxes; i++) sr_buf_printf(&a, i ? ", '%s'" : "'%s'", m->names[axes[i]]);
  sr_buf_puts(&a, naxes == 1 ? ",)" : ")");
  sr_ev_path_str(cx, &p);
  sr_exec_ledger_add(cx->ex, sr_intern_cstr(kind), sr_intern_cstr(a.p), dt, bytes, sr_intern_cstr(sr_buf_str(&p)));
  sr_buf_free(&a);
  sr_buf_free(&p);
}

static int groups(SrEvalCtx *cx, const SrMesh *m, const int *axes, int naxes, const SrGroups **g) {
  *g = cx->sub_n ? sr_comm_groups_sub(cx->comm, m, axes, naxes, cx->sub_n, cx->sub_size, cx->sub, cx->d)
                 : sr_comm_groups(cx->comm, m, axes, naxes, cx->d);
  return *g ? 0 : -1;
}

int sr_coll_all_reduce(SrEvalCtx *cx, SrArray *a, const int *axes, int naxes, SrRedOp op, SrBuffer **out) {
  const SrGroups *g;
  if (groups(cx, a->mesh, axes, naxes, &g) < 0) return -1;
  size_t count = (size_t)sr_layout_shard_numel(a->layout);
  record(cx, "all-reduce", a->mesh, axes, naxes, a->type->dtype, count * sr_elem_size(a->type->dtype));
  return cx->comm->ops->all_reduce(cx->comm, g, op, a->type->dtype, count, a->shard, out, cx->d);
}

int sr_coll_all_gather(SrEvalCtx *cx, SrBuffer **in, const SrMesh *m, SrDtype dt, size_t nbytes, const int *axes,
                       int naxes, SrBuffer **out) {
  const SrGroups *g;
  if (groups(cx, m, axes, naxes, &g) < 0) return -1;
  record(cx, "all-gather", m, axes, naxes, dt, nbytes);
  return cx->comm->ops->all_gather(cx->comm, g, nbytes, in, out, cx->d);
}

int sr_coll_reduce_scatter(SrEvalCtx *cx, SrBuffer **in, const SrMesh *m, SrDtype dt, size_t count,
                           const int *axes, int naxes, SrRedOp op, SrBuffer **out) {
  const SrGroups *g;
  if (groups(cx, m, axes, naxes, &g) < 0) return -1;
  record(cx, "reduce-scatter", m, axes, naxes, dt, count * (size_t)g->size * sr_elem_size(dt));
  return cx->comm->ops->reduce_scatter(cx->comm, g, op, dt, count, in, out, cx->d);
}

int sr_coll_all_to_all(SrEvalCtx *cx, SrBuffer **in, const SrMesh *m, SrDtype dt, size_t nbytes, const int *axes,
                       int naxes, SrBuffer **out) {
  const SrGroups *g;
  if (groups(cx, m, axes, naxes, &g) < 0) return -1;
  record(cx, "all-to-all", m, axes, naxes, dt, nbytes * (size_t)g->size);
  return cx->comm->ops->all_to_all(cx->comm, g, nbytes, in, out, cx->d);
}

int sr_coll_ppermute(SrEvalCtx *cx, SrBuffer **in, const SrMesh *m, SrDtype dt, size_t nbytes, const int *axes,
                     int naxes, int npairs, const int *src, const int *dst, SrBuffer **out) {
  const SrGroups *g;
  if (groups(cx, m, axes, naxes, &g) < 0) return -1;
  record(cx, "ppermute", m, axes, naxes, dt, nbytes);
  return cx->comm->ops->ppermute(cx->comm, g, npairs, src, dst, nbytes, in, out, cx->d);
}

/* Host copies (printing, item()) are not the program's collectives: the
   ledger leaves them out. */
static int fetch(SrEvalCtx *cx, const SrMesh *m, int pos, SrBuffer *buf, size_t nbytes, SrDtype dt,
                 SrBuffer **out) {
  (void)dt;
  return cx->comm->ops->fetch(cx->comm, sr_mesh_device(m, pos), buf, nbytes, out, cx->d);
}

/* ---- layouts being changed ---- */

static const SrType *lay_dim(const SrType *l, const SrMesh *m, int dim, const uint8_t *ax, int nax) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  b.mesh = sr_mesh_shape(m);
  b.dims[dim].nax = (uint8_t)nax;
  memset(b.dims[dim].ax, 0, sizeof b.dims[dim].ax);
  memcpy(b.dims[dim].ax, ax, (size_t)nax);
  return sr_type_get(&b);
}

static const SrType *lay_unreduced(const SrType *l, const SrMesh *m, SrAxes u, int ukind) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  if (m && m->n) b.mesh = sr_mesh_shape(m);
  b.unreduced = u;
  b.ukind = (uint8_t)(u ? ukind : SR_UK_NONE);
  b.reduced &= ~u;
  return sr_type_get(&b);
}

static SrRedOp red_op(int ukind) {
  return ukind == SR_UK_MAX ? SR_RED_MAX : ukind == SR_UK_MIN ? SR_RED_MIN : SR_RED_SUM;
}

static int local_prefix_one(const int64_t *shape, int dim) {
  for (int k = 0; k < dim; k++)
    if (shape[k] != 1) return 0;
  return 1;
}

/* Dedupe of (input buffer, extra) pairs within one step. */
typedef struct Seen {
  SrBuffer *in;
  int64_t extra;
  SrBuffer *out;
} Seen;

static SrBuffer *seen_find(Seen *s, int n, SrBuffer *in, int64_t extra) {
  for (int i = n - 1; i >= 0; i--)
    if (s[i].in == in && s[i].extra == extra) return s[i].out;
  return NULL;
}

/* ---- steps ---- */

static SrArray *step_all_reduce(SrEvalCtx *cx, SrArray *cur, SrAxes axes) {
  int list[SR_MAX_AXES], n = 0;
  for (int i = 0; i < cur->mesh->n; i++)
    if (axes & (1u << i)) list[n++] = i;
  SrArray *r = sr_array_new(cur->type, lay_unreduced(cur->layout, cur->mesh, cur->layout->unreduced & ~axes, cur->layout->ukind),
                            cur->mesh);
  if (sr_coll_all_reduce(cx, cur, list, n, red_op(cur->layout->ukind), r->shard) < 0) {
    sr_array_unref(r);
    return NULL;
  }
  return r;
}

static SrArray *step_reduce_scatter(SrEvalCtx *cx, SrArray *cur, int dim, const int *axes, int n) {
  const SrType *l = cur->layout;
  size_t es = sr_elem_size(cur->type->dtype);
  int64_t shape[SR_MAX_RANK + 1];
  sr_layout_shard_shape(l, shape);
  int64_t parts = 1;
  SrAxes set = 0;
  for (int i = 0; i < n; i++) {
    parts *= cur->mesh->sizes[axes[i]];
    set |= 1u << axes[i];
  }
  uint8_t ax[SR_MAX_DIM_AXES];
  int nax = l->dims[dim].nax;
  memcpy(ax, l->dims[dim].ax, (size_t)nax);
  for (int i = 0; i < n; i++) ax[nax++] = (uint8_t)axes[i];
  const SrType *nl = lay_unreduced(lay_dim(l, cur->mesh, dim, ax, nax), cur->mesh, l->unreduced & ~set, l->ukind);
  SrArray *r = sr_array_new(cur->type, nl, cur->mesh);
  size_t total = (size_t)sr_layout_shard_numel(l);
  SrBuffer **in = sr_xcalloc((size_t)cur->ndev, sizeof *in);
  int pack = !local_prefix_one(shape, dim);
  Seen *seen = sr_xmalloc((size_t)cur->ndev * sizeof *seen);
  int nseen = 0;
  for (int p = 0; p < cur->ndev; p++) {
    SrBuffer *b = cur->shard[p];
    if (!b) continue;
    if (!pack) {
      in[p] = sr_buffer_ref(b);
      continue;
    }
    SrBuffer *done = seen_find(seen, nseen, b, 0);
    if (!done) {
      /* [.., parts, s/parts, ..] with the parts axis moved to the front */
      int64_t v[SR_MAX_RANK + 1];
      for (int k = 0, j = 0; k < l->ndim; k++) {
        if (k == dim) {
          v[j++] = parts;
          v[j++] = shape[k] / parts;
        } else {
          v[j++] = shape[k];
        }
      }
      done = sr_buffer_new(total * es);
      sr_kern_move_axis(es, l->ndim + 1, v, dim, 0, b->data, done->data);
      seen[nseen++] = (Seen){b, 0, done};
    }
    in[p] = sr_buffer_ref(done);
  }
  for (int i = 0; i < nseen; i++) sr_buffer_unref(seen[i].out);
  free(seen);
  int rc = sr_coll_reduce_scatter(cx, in, cur->mesh, cur->type->dtype, total / (size_t)parts, axes, n,
                                  red_op(l->ukind), r->shard);
  for (int p = 0; p < cur->ndev; p++) sr_buffer_unref(in[p]);
  free(in);
  if (rc < 0) {
    sr_array_unref(r);
    return NULL;
  }
  return r;
}

/* After a gather or all-to-all: [n, shape...] -> n merged into dim. */
static SrBuffer *unpack_leading(size_t es, const int64_t *shape, int ndim, int dim, int64_t n, SrBuffer *b) {
  if (local_prefix_one(shape, dim)) return sr_buffer_ref(b);
  int64_t v[SR_MAX_RANK + 1];
  v[0] = n;
  for (int k = 0; k < ndim; k++) v[k + 1] = shape[k];
  SrBuffer *o = sr_buffer_new(b->nbytes);
  sr_kern_move_axis(es, ndim + 1, v, 0, dim, b->data, o->data);
  return o;
}

/* In one process (every device local) blocks move straight from the source
   shards into the destination shards: one copy where the collective needs
   three (pack, collective, unpack).  The bytes are those of the collective,
   and the ledger records it all the same. */
static int in_process(const SrEvalCtx *cx) { return cx->comm->nranks == 1; }

/* Copies the count-shaped box at src_start of a src_shape array into the box
   at dst_start of a dst_shape array. */
static void move_box(size_t es, int nd, const int64_t *count, const void *src, const int64_t *src_shape,
                     const int64_t *src_start, void *dst, const int64_t *dst_shape, const int64_t *dst_start) {
  int64_t ss[SR_MAX_RANK], ds[SR_MAX_RANK], so = 0, dof = 0;
  sr_kern_row_strides(nd, src_shape, ss);
  sr_kern_row_strides(nd, dst_shape, ds);
  for (int k = 0; k < nd; k++) {
    so += src_start[k] * ss[k];
    dof += dst_start[k] * ds[k];
  }
  sr_kern_copy_general(es, nd, count, src, so, ss, dst, dof, ds);
}

/* An earlier group of g with the same input buffers as group grp (devices
   along a replicated axis outside the group): the same results. */
static int twin_group(const SrGroups *g, int grp, SrBuffer *const *in) {
  const int *m = g->members + (size_t)grp * g->size;
  for (int h = 0; h < grp && h < 64; h++) {
    const int *o = g->members + (size_t)h * g->size;
    int same = 1;
    for (int i = 0; i < g->size && same; i++) same = in[m[i]] == in[o[i]];
    if (same) return h;
  }
  return -1;
}

static SrArray *gather_direct(SrEvalCtx *cx, SrArray *cur, SrArray *r, int dim, const int *axes, int n,
                              const int64_t *shape) {
  const SrGroups *g;
  if (groups(cx, cur->mesh, axes, n, &g) < 0) {
    sr_array_unref(r);
    return NULL;
  }
  size_t es = sr_elem_size(cur->type->dtype);
  record(cx, "all-gather", cur->mesh, axes, n, cur->type->dtype, sr_array_shard_bytes(cur));
  int nd = cur->layout->ndim;
  int64_t big[SR_MAX_RANK], zero[SR_MAX_RANK] = {0}, start[SR_MAX_RANK] = {0};
  memcpy(big, shape, (size_t)nd * sizeof *big);
  big[dim] *= g->size;
  for (int grp = 0; grp < g->count; grp++) {
    const int *m = g->members + (size_t)grp * g->size;
    int twin = twin_group(g, grp, cur->shard);
    if (twin >= 0) {
      const int *o = g->members + (size_t)twin * g->size;
      for (int i = 0; i < g->size; i++) r->shard[m[i]] = sr_buffer_ref(r->shard[o[i]]);
      continue;
    }
    SrBuffer *o = sr_buffer_new(sr_array_shard_bytes(cur) * (size_t)g->size);
    for (int i = 0; i < g->size; i++) {
      start[dim] = i * shape[dim];
      move_box(es, nd, shape, cur->shard[m[i]]->data, shape, zero, o->data, big, start);
    }
    for (int i = 0; i < g->size; i++) r->shard[m[i]] = sr_buffer_ref(o);
    sr_buffer_unref(o);
  }
  return r;
}

static SrArray *step_all_gather(SrEvalCtx *cx, SrArray *cur, int dim, const int *axes, int n) {
  const SrType *l = cur->layout;
  size_t es = sr_elem_size(cur->type->dtype);
  int64_t shape[SR_MAX_RANK];
  sr_layout_shard_shape(l, shape);
  int64_t parts = 1;
  for (int i = 0; i < n; i++) parts *= cur->mesh->sizes[axes[i]];
  const SrType *nl = lay_dim(l, cur->mesh, dim, l->dims[dim].ax, l->dims[dim].nax - n);
  SrArray *r = sr_array_new(cur->type, nl, cur->mesh);
  if (in_process(cx) && !local_prefix_one(shape, dim)) return gather_direct(cx, cur, r, dim, axes, n, shape);
  size_t nbytes = (size_t)sr_layout_shard_numel(l) * es;
  SrBuffer **g = sr_xcalloc((size_t)cur->ndev, sizeof *g);
  if (sr_coll_all_gather(cx, cur->shard, cur->mesh, cur->type->dtype, nbytes, axes, n, g) < 0) {
    free(g);
    sr_array_unref(r);
    return NULL;
  }
  Seen *seen = sr_xmalloc((size_t)cur->ndev * sizeof *seen);
  int nseen = 0;
  for (int p = 0; p < cur->ndev; p++) {
    if (!g[p]) continue;
    SrBuffer *done = seen_find(seen, nseen, g[p], 0);
    if (!done) {
      done = unpack_leading(es, shape, l->ndim, dim, parts, g[p]);
      seen[nseen++] = (Seen){g[p], 0, done};
    }
    r->shard[p] = sr_buffer_ref(done);
  }
  for (int i = 0; i < nseen; i++) sr_buffer_unref(seen[i].out);
  for (int p = 0; p < cur->ndev; p++) sr_buffer_unref(g[p]);
  free(seen);
  free(g);
  return r;
}

static SrArray *step_all_to_all(SrEvalCtx *cx, SrArray *cur, int axis, int from, int to) {
  const SrType *l = cur->layout;
  size_t es = sr_elem_size(cur->type->dtype);
  int64_t shape[SR_MAX_RANK], n = cur->mesh->sizes[axis];
  sr_layout_shard_shape(l, shape);
  uint8_t ax[SR_MAX_DIM_AXES];
  int nax = l->dims[to].nax;
  memcpy(ax, l->dims[to].ax, (size_t)nax);
  ax[nax++] = (uint8_t)axis;
  const SrType *nl = lay_dim(lay_dim(l, cur->mesh, from, l->dims[from].ax, l->dims[from].nax - 1), cur->mesh, to, ax, nax);
  SrArray *r = sr_array_new(cur->type, nl, cur->mesh);
  if (in_process(cx)) {
    const SrGroups *g;
    if (groups(cx, cur->mesh, &axis, 1, &g) < 0) {
      sr_array_unref(r);
      return NULL;
    }
    record(cx, "all-to-all", cur->mesh, &axis, 1, cur->type->dtype, sr_array_shard_bytes(cur));
    int nd = l->ndim;
    int64_t chunk[SR_MAX_RANK], nshape[SR_MAX_RANK], ss[SR_MAX_RANK] = {0}, ds[SR_MAX_RANK] = {0};
    memcpy(chunk, shape, sizeof chunk);
    chunk[to] /= n;
    memcpy(nshape, chunk, sizeof nshape);
    nshape[from] *= n;
    for (int grp = 0; grp < g->count; grp++) {
      const int *m = g->members + (size_t)grp * g->size;
      int twin = twin_group(g, grp, cur->shard);
      if (twin >= 0) {
        const int *o = g->members + (size_t)twin * g->size;
        for (int i = 0; i < g->size; i++) r->shard[m[i]] = sr_buffer_ref(r->shard[o[i]]);
        continue;
      }
      for (int j = 0; j < g->size; j++) {
        SrBuffer *o = sr_buffer_new(sr_array_shard_bytes(cur));
        for (int i = 0; i < g->size; i++) {
          ss[to] = j * chunk[to];
          ds[from] = i * chunk[from];
          move_box(es, nd, chunk, cur->shard[m[i]]->data, shape, ss, o->data, nshape, ds);
        }
        r->shard[m[j]] = o;
      }
    }
    return r;
  }
  size_t total = (size_t)sr_layout_shard_numel(l);
  SrBuffer **in = sr_xcalloc((size_t)cur->ndev, sizeof *in), **got = sr_xcalloc((size_t)cur->ndev, sizeof *got);
  Seen *seen = sr_xmalloc((size_t)cur->ndev * sizeof *seen);
  int nseen = 0;
  for (int p = 0; p < cur->ndev; p++) {
    SrBuffer *b = cur->shard[p];
    if (!b) continue;
    SrBuffer *done = seen_find(seen, nseen, b, 0);
    if (!done) {
      if (local_prefix_one(shape, to)) {
        done = sr_buffer_ref(b);
      } else {
        int64_t v[SR_MAX_RANK + 1];
        for (int k = 0, j = 0; k < l->ndim; k++) {
          if (k == to) {
            v[j++] = n;
            v[j++] = shape[k] / n;
          } else {
            v[j++] = shape[k];
          }
        }
        done = sr_buffer_new(total * es);
        sr_kern_move_axis(es, l->ndim + 1, v, to, 0, b->data, done->data);
      }
      seen[nseen++] = (Seen){b, 0, done};
    }
    in[p] = sr_buffer_ref(done);
  }
  for (int i = 0; i < nseen; i++) sr_buffer_unref(seen[i].out);
  int rc = sr_coll_all_to_all(cx, in, cur->mesh, cur->type->dtype, total / (size_t)n * es, &axis, 1, got);
  if (rc == 0) {
    int64_t cshape[SR_MAX_RANK];
    memcpy(cshape, shape, sizeof cshape);
    cshape[to] /= n;
    for (int p = 0; p < cur->ndev; p++) {
      if (!got[p]) continue;
      r->shard[p] = unpack_leading(es, cshape, l->ndim, from, n, got[p]);
    }
  }
  for (int p = 0; p < cur->ndev; p++) {
    sr_buffer_unref(in[p]);
    sr_buffer_unref(got[p]);
  }
  free(in);
  free(got);
  free(seen);
  if (rc < 0) {
    sr_array_unref(r);
    return NULL;
  }
  return r;
}

/* The identity of a reduction kind, for padding an unreduced max/min. */
static void fill_identity(SrDtype dt, int ukind, size_t n, void *out) {
  if (ukind != SR_UK_MAX && ukind != SR_UK_MIN) {
    memset(out, 0, n * sr_elem_size(dt));
    return;
  }
  int mx = ukind == SR_UK_MAX;
  unsigned char e[8];
  switch (dt) {
  case SR_F32: case SR_F64: case SR_F16: case SR_BF16:
    sr_kern_set_scalar(dt, mx ? -1.0 / 0.0 : 1.0 / 0.0, 0, e);
    break;
  case SR_BOOL: e[0] = mx ? 0 : 1; break;
  case SR_I8: sr_kern_set_scalar(dt, 0, mx ? INT8_MIN : INT8_MAX, e); break;
  case SR_I16: sr_kern_set_scalar(dt, 0, mx ? INT16_MIN : INT16_MAX, e); break;
  case SR_I32: sr_kern_set_scalar(dt, 0, mx ? INT32_MIN : INT32_MAX, e); break;
  case SR_I64: sr_kern_set_scalar(dt, 0, mx ? INT64_MIN : INT64_MAX, e); break;
  default: sr_kern_set_scalar(dt, 0, mx ? 0 : -1, e); break; /* unsigned: 0 or all ones */
  }
  sr_kern_fill(sr_elem_size(dt), n, e, out);
}

static SrArray *step_pad(SrEvalCtx *cx, SrArray *cur, int dim, int ukind) {
  (void)cx;
  const SrType *l = cur->layout;
  size_t es = sr_elem_size(cur->type->dtype);
  int axis = l->dims[dim].ax[l->dims[dim].nax - 1];
  int64_t shape[SR_MAX_RANK], n = cur->mesh->sizes[axis];
  sr_layout_shard_shape(l, shape);
  const SrType *nl = lay_dim(l, cur->mesh, dim, l->dims[dim].ax, l->dims[dim].nax - 1);
  nl = lay_unreduced(nl, cur->mesh, l->unreduced | (1u << axis), l->unreduced ? l->ukind : ukind);
  SrArray *r = sr_array_new(cur->type, nl, cur->mesh);
  int64_t big[SR_MAX_RANK], start[SR_MAX_RANK] = {0};
  memcpy(big, shape, sizeof big);
  big[dim] *= n;
  size_t numel = (size_t)sr_layout_shard_numel(nl);
  Seen *seen = sr_xmalloc((size_t)cur->ndev * sizeof *seen);
  int nseen = 0;
  for (int p = 0; p < cur->ndev; p++) {
    SrBuffer *b = cur->shard[p];
    if (!b) continue;
    int64_t c = sr_mesh_coord(cur->mesh, p, axis);
    SrBuffer *done = seen_find(seen, nseen, b, c);
    if (!done) {
      done = sr_buffer_new(numel * es);
      fill_identity(cur->type->dtype, nl->ukind, numel, done->data);
      start[dim] = c * shape[dim];
      sr_kern_paste_box(es, l->ndim, big, start, shape, b->data, done->data);
      seen[nseen++] = (Seen){b, c, done};
    }
    r->shard[p] = sr_buffer_ref(done);
  }
  for (int i = 0; i < nseen; i++) sr_buffer_unref(seen[i].out);
  free(seen);
  return r;
}

static SrArray *step_zero(SrEvalCtx *cx, SrArray *cur, int axis, int ukind) {
  const SrType *l = cur->layout;
  const SrType *nl = lay_unreduced(l, cur->mesh, l->unreduced | (1u << axis), l->unreduced ? l->ukind : ukind);
  SrArray *r = sr_array_new(cur->type, nl, cur->mesh);
  int keep_all = nl->ukind == SR_UK_MAX || nl->ukind == SR_UK_MIN; /* max of copies is the value */
  size_t numel = (size_t)sr_layout_shard_numel(l);
  SrBuffer *zero = NULL;
  for (int p = 0; p < cur->ndev; p++) {
    if (!cur->shard[p]) continue;
    if (keep_all || sr_mesh_coord(cur->mesh, p, axis) == 0) {
      r->shard[p] = sr_buffer_ref(cur->shard[p]);
      continue;
    }
    size_t nbytes = numel * sr_elem_size(cur->type->dtype);
    if (!zero && !(zero = sr_buffer_zeros_shared(nbytes))) {
      sr_ev_oom(cx, nbytes);
      sr_array_unref(r);
      return NULL;
    }
    r->shard[p] = sr_buffer_ref(zero);
  }
  sr_buffer_unref(zero);
  return r;
}

static SrArray *step_slice(SrEvalCtx *cx, SrArray *cur, int dim, const uint8_t *axes, int n) {
  (void)cx;
  const SrType *l = cur->layout;
  size_t es = sr_elem_size(cur->type->dtype);
  int64_t shape[SR_MAX_RANK];
  sr_layout_shard_shape(l, shape);
  uint8_t ax[SR_MAX_DIM_AXES];
  int nax = l->dims[dim].nax;
  memcpy(ax, l->dims[dim].ax, (size_t)nax);
  int64_t parts = 1;
  for (int i = 0; i < n; i++) {
    ax[nax++] = axes[i];
    parts *= cur->mesh->sizes[axes[i]];
  }
  const SrType *nl = lay_dim(l, cur->mesh, dim, ax, nax);
  SrArray *r = sr_array_new(cur->type, nl, cur->mesh);
  int64_t cnt[SR_MAX_RANK], start[SR_MAX_RANK] = {0};
  memcpy(cnt, shape, sizeof cnt);
  cnt[dim] = shape[dim] / parts;
  size_t numel = (size_t)sr_layout_shard_numel(nl);
  int view = local_prefix_one(shape, dim);
  Seen *seen = sr_xmalloc((size_t)cur->ndev * sizeof *seen);
  int nseen = 0;
  for (int p = 0; p < cur->ndev; p++) {
    SrBuffer *b = cur->shard[p];
    if (!b) continue;
    int64_t idx = 0;
    for (int i = 0; i < n; i++) idx = idx * cur->mesh->sizes[axes[i]] + sr_mesh_coord(cur->mesh, p, axes[i]);
    SrBuffer *done = seen_find(seen, nseen, b, idx);
    if (!done) {
      if (view) {
        done = sr_buffer_view(b, (size_t)idx * numel * es, numel * es);
      } else {
        done = sr_buffer_new(numel * es);
        start[dim] = idx * cnt[dim];
        sr_kern_copy_box(es, l->ndim, shape, start, cnt, b->data, done->data);
      }
      seen[nseen++] = (Seen){b, idx, done};
    }
    r->shard[p] = sr_buffer_ref(done);
  }
  for (int i = 0; i < nseen; i++) sr_buffer_unref(seen[i].out);
  free(seen);
  return r;
}

/* ---- the plan ---- */

static int is_prefix(const SrDim *a, const SrDim *b) {
  if (a->nax > b->nax) return 0;
  for (int k = 0; k < a->nax; k++)
    if (a->ax[k] != b->ax[k]) return 0;
  return 1;
}

static int common_prefix(const SrDim *a, const SrDim *b) {
  int k = 0;
  while (k < a->nax && k < b->nax && a->ax[k] == b->ax[k]) k++;
  return k;
}

/* Same mesh: the steps of the comment at the top.  Consumes cur. */
static SrArray *within_mesh(SrEvalCtx *cx, SrArray *cur, const SrType *t) {
#define STEP(call)                 \
  do {                             \
    SrArray *nx_ = (call);         \
    sr_array_unref(cur);           \
    if (!nx_) return NULL;         \
    cur = nx_;                     \
  } while (0)
  const SrMesh *m = cur->mesh;
  int nd = t->ndim;
  /* 1. unreduced axes the target drops */
  SrAxes ured = cur->layout->unreduced & ~t->unreduced;
  if (cur->layout->unreduced && t->unreduced && cur->layout->ukind != t->ukind) ured = cur->layout->unreduced;
  if (ured) {
    for (int i = 0; i < nd && ured; i++) {
      const SrDim *c = &cur->layout->dims[i], *d = &t->dims[i];
      if (!is_prefix(c, d) || c->nax == d->nax) continue;
      int run[SR_MAX_DIM_AXES], n = 0;
      for (int k = c->nax; k < d->nax && (ured & (1u << d->ax[k])); k++) run[n++] = d->ax[k];
      if (!n) continue;
      STEP(step_reduce_scatter(cx, cur, i, run, n));
      for (int k = 0; k < n; k++) ured &= ~(1u << run[k]);
    }
    if (ured) STEP(step_all_reduce(cx, cur, ured));
  }
  SrAxes uadd = t->unreduced & ~cur->layout->unreduced;
  /* 2. all-to-all for an axis moving between dims */
  for (int again = 1; again;) {
    again = 0;
    for (int i = 0; i < nd && !again; i++) {
      const SrDim *c = &cur->layout->dims[i];
      if (!c->nax || is_prefix(c, &t->dims[i])) continue;
      int a = c->ax[c->nax - 1];
      if (uadd & (1u << a)) continue;
      for (int j = 0; j < nd; j++) {
        const SrDim *cj = &cur->layout->dims[j], *tj = &t->dims[j];
        if (j == i || !is_prefix(cj, tj) || cj->nax == tj->nax || tj->ax[cj->nax] != a) continue;
        STEP(step_all_to_all(cx, cur, a, i, j));
        again = 1;
        break;
      }
    }
  }
  /* 3. axes each dim drops, innermost first */
  for (int i = 0; i < nd; i++) {
    for (;;) {
      const SrDim *c = &cur->layout->dims[i];
      int keep = common_prefix(c, &t->dims[i]);
      if (c->nax <= keep) break;
      int a = c->ax[c->nax - 1];
      if (uadd & (1u << a)) {
        STEP(step_pad(cx, cur, i, t->ukind));
        continue;
      }
      int run[SR_MAX_DIM_AXES], n = 0;
      for (int k = keep; k < c->nax; k++) {
        if (uadd & (1u << c->ax[k])) {
          n = 0; /* only the gathered axes after the last padded one */
          continue;
        }
        run[n++] = c->ax[k];
      }
      STEP(step_all_gather(cx, cur, i, run, n));
    }
  }
  /* 4. axes each dim adds */
  for (int i = 0; i < nd; i++) {
    const SrDim *c = &cur->layout->dims[i], *d = &t->dims[i];
    if (d->nax > c->nax) STEP(step_slice(cx, cur, i, d->ax + c->nax, d->nax - c->nax));
  }
  /* 5. replicated axes that become unreduced */
  for (int a = 0; m && a < m->n; a++)
    if ((t->unreduced & (1u << a)) && !(cur->layout->unreduced & (1u << a))) STEP(step_zero(cx, cur, a, t->ukind));
  return cur;
#undef STEP
}

/* A replicated copy on mesh m of a meshless array (no data moves). */
static SrArray *spread(SrEvalCtx *cx, SrArray *a, const SrMesh *m, const SrType *shape_mesh_layout) {
  SrArray *r = sr_array_new(a->type, shape_mesh_layout, m);
  for (int p = 0; p < r->ndev; p++)
    if (sr_comm_local(cx->comm, m, p)) r->shard[p] = sr_buffer_ref(a->shard[0]);
  return r;
}

static const SrType *replicated_like(const SrType *l, const SrMesh *m) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  for (int i = 0; i < b.ndim; i++) b.dims[i].nax = 0;
  b.unreduced = b.reduced = b.varying = 0;
  b.ukind = SR_UK_NONE;
  b.weak = 0;
  b.mesh = m ? sr_mesh_shape(m) : NULL;
  if (b.mesh && !b.mesh->n) b.mesh = NULL;
  return sr_type_get(&b);
}

static int devices_subset(const SrMesh *small, const SrMesh *big) {
  int nb = sr_mesh_ndev(big), ns = sr_mesh_ndev(small);
  for (int i = 0; i < ns; i++) {
    int d = sr_mesh_device(small, i), found = 0;
    for (int k = 0; k < nb && !found; k++) found = sr_mesh_device(big, k) == d;
    if (!found) return 0;
  }
  return 1;
}

/* Moves a replicated array on one mesh to another mesh (or none). */
static SrArray *change_mesh(SrEvalCtx *cx, SrArray *rep, const SrMesh *m) {
  const SrType *l = replicated_like(rep->layout, m);
  SrArray *r = sr_array_new(rep->type, l, m);
  size_t nbytes = sr_array_shard_bytes(rep);
  if (m && devices_subset(m, rep->mesh)) {
    for (int p = 0; p < r->ndev; p++) {
      if (!sr_comm_local(cx->comm, m, p)) continue;
      int dev = sr_mesh_device(m, p);
      for (int q = 0; q < rep->ndev; q++)
        if (sr_mesh_device(rep->mesh, q) == dev) {
          r->shard[p] = sr_buffer_ref(rep->shard[q]);
          break;
        }
    }
    return r;
  }
  SrBuffer *b = NULL;
  int p0 = 0;
  if (fetch(cx, rep->mesh, p0, rep->shard[p0], nbytes, rep->type->dtype, &b) < 0) {
    sr_array_unref(r);
    return NULL;
  }
  for (int p = 0; p < r->ndev; p++)
    if (sr_comm_local(cx->comm, m, p)) r->shard[p] = sr_buffer_ref(b);
  sr_buffer_unref(b);
  return r;
}

SrArray *sr_redistribute_typed(SrEvalCtx *cx, SrArray *a, const SrMesh *m, const SrType *layout,
                               const SrType *type) {
  if (!type) type = a->type;
  if (a->mesh == m && sr_layout_same(a->layout, layout)) {
    if (a->type == type && a->layout == layout) return sr_array_ref(a);
    return sr_array_retype(a, type, layout);
  }
  /* the steps below move row-major shards (exec/layout.h) */
  if (a->local) {
    SrArray *rm = sr_array_row_major(a);
    SrArray *r = sr_redistribute_typed(cx, rm, m, layout, type);
    sr_array_unref(rm);
    return r;
  }
  SrArray *cur;
  if (a->mesh == m) {
    cur = sr_array_ref(a);
  } else if (!a->mesh) {
    cur = spread(cx, a, m, replicated_like(layout, m));
  } else {
    SrArray *rep = within_mesh(cx, sr_array_ref(a), replicated_like(a->layout, a->mesh));
    if (!rep) return NULL;
    cur = change_mesh(cx, rep, m);
    sr_array_unref(rep);
    if (!cur) return NULL;
  }
  if (m) {
    cur = within_mesh(cx, cur, layout);
    if (!cur) return NULL;
  }
  SrArray *r = sr_array_retype(cur, type, layout);
  sr_array_unref(cur);
  return r;
}

SrArray *sr_redistribute(SrEvalCtx *cx, SrArray *a, const SrMesh *m, const SrType *layout) {
  return sr_redistribute_typed(cx, a, m, layout, NULL);
}

/* ---- whole values on the host ---- */

static int to_host(SrEvalCtx *cx, SrArray *a, void *out);

int sr_array_to_host(SrEvalCtx *cx, SrArray *a, void *out) {
  if (!cx->comm) return to_host(cx, a, out);
  /* every rank must be copying the same global array */
  SrCommOperands saved = sr_comm_operands(cx->comm, &a->type, 1);
  int rc = to_host(cx, a, out);
  cx->comm->operands = saved;
  return rc;
}

static int to_host(SrEvalCtx *cx, SrArray *a, void *out) {
  if (a->local) {
    SrArray *rm = sr_array_row_major(a);
    int rc = to_host(cx, rm, out);
    sr_array_unref(rm);
    return rc;
  }
  size_t es = sr_elem_size(a->type->dtype);
  if (!a->mesh) {
    if (cx->comm && cx->comm->ops->check && cx->comm->ops->check(cx->comm, cx->d) < 0) return -1;
    memcpy(out, a->shard[0]->data, (size_t)sr_type_numel(a->type) * es);
    return 0;
  }
  SrArray *r = sr_array_ref(a);
  if (a->layout->unreduced) {
    SrArray *n = within_mesh(cx, r, lay_unreduced(a->layout, a->mesh, 0, SR_UK_NONE));
    if (!n) return -1;
    r = n;
  }
  const SrType *l = r->layout;
  int64_t shard[SR_MAX_RANK], gshape[SR_MAX_RANK], nblocks = 1;
  sr_layout_shard_shape(l, shard);
  for (int i = 0; i < l->ndim; i++) {
    gshape[i] = l->dims[i].size;
    nblocks *= sr_layout_splits(l, i);
  }
  char *seen = sr_xcalloc((size_t)nblocks + 1, 1);
  size_t nbytes = sr_array_shard_bytes(r);
  int rc = 0;
  for (int p = 0; p < r->ndev && rc == 0; p++) {
    int64_t id = 0;
    for (int i = 0; i < l->ndim; i++) id = id * sr_layout_splits(l, i) + sr_layout_block_index(l, r->mesh, p, i);
    if (seen[id]) continue;
    seen[id] = 1;
    SrBuffer *b;
    if (fetch(cx, r->mesh, p, r->shard[p], nbytes, r->type->dtype, &b) < 0) {
      rc = -1;
      break;
    }
    int64_t start[SR_MAX_RANK];
    sr_layout_block_start(l, r->mesh, p, start);
    sr_kern_paste_box(es, l->ndim, gshape, start, shard, b->data, out);
    sr_buffer_unref(b);
  }
  free(seen);
  sr_array_unref(r);
  return rc;
}
