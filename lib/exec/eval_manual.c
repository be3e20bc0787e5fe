/* eval_manual.c: shard_map and the collectives and casts of manual mode.
 *
 * shard_map lays each operand out as its in_spec says (the manual axes
 * major, then the body type's own axes), and then the very same buffers
 * are the body's values: a device's block over the manual axes is its
 * local value.  The body runs once for all devices, each equation on every
 * device's buffer, with the mesh's manual axes typed Manual; its results'
 * buffers become the blocks of the outputs, laid out by out_specs.  No data
 * moves at the boundary unless an operand's layout differs from its spec.
 *
 * The collectives run through the communication interface over groups of
 * the named axes.  Sums fold in member order over the axes taken in mesh
 * order (so psum over ('Y', 'X') and ('X', 'Y') give the same bytes);
 * gathers, scatters, all_to_all and ppermute order members as the axis
 * names are listed, as JAX does.  The casts (pvary, preduced,
 * reduced_vary_cast_p, vary_unreduced_cast_p) move no data. */
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "prims/rule.h"
#include "exec/kern.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"

/* ---- shard_map ---- */

static int spec_axes(SrEvalCtx *cx, const SrMesh *m, const char *const *names, int n, uint8_t *ax) {
  for (int k = 0; k < n; k++) {
    int a = sr_mesh_axis(m, names[k]);
    if (a < 0) return sr_ev_err(cx, "NameError", "shard_map: unknown mesh axis '%s'", names[k]);
    ax[k] = (uint8_t)a;
  }
  return 0;
}

/* The outer layout of a value whose body layout is bl, under spec s:
   the spec's (manual) axes major on each dim, then bl's. */
static const SrType *outer_layout(SrEvalCtx *cx, const SrType *outer_type, const SrType *bl, const SrSpec *s,
                                  const SrMesh *m, SrAxes manual) {
  SrTypeBuilder b;
  sr_type_builder(&b, sr_layout_of_type(outer_type));
  b.mesh = sr_mesh_shape(m);
  for (int i = 0; i < b.ndim; i++) {
    SrDim *d = &b.dims[i];
    d->nax = 0;
    if (i < s->n) {
      if (spec_axes(cx, m, s->e[i].names, s->e[i].n, d->ax) < 0) return NULL;
      d->nax = (uint8_t)s->e[i].n;
    }
    if (bl && i < bl->ndim)
      for (int k = 0; k < bl->dims[i].nax && d->nax < SR_MAX_DIM_AXES; k++) d->ax[d->nax++] = bl->dims[i].ax[k];
  }
  SrAxes u = 0, r = 0;
  for (int k = 0; k < s->nunreduced; k++) {
    int a = sr_mesh_axis(m, s->unreduced[k]);
    if (a >= 0) u |= 1u << a;
  }
  for (int k = 0; k < s->nreduced; k++) {
    int a = sr_mesh_axis(m, s->reduced[k]);
    if (a >= 0) r |= 1u << a;
  }
  if (bl) {
    u |= bl->unreduced & ~manual;
    r |= bl->reduced & ~manual;
  }
  b.unreduced = u;
  b.ukind = (uint8_t)(u ? (s->nunreduced ? (s->ukind ? s->ukind : SR_UK_SUM) : bl ? bl->ukind : SR_UK_SUM) : SR_UK_NONE);
  b.reduced = r;
  return sr_type_get(&b);
}

static SrAxes names_to_axes(const SrVal *v, const SrMesh *m) {
  SrAxes a = 0;
  if (!v) return 0;
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) {
    int k = sr_mesh_axis(m, sr_intern(v->str.s, v->str.n));
    return k >= 0 ? 1u << k : 0;
  }
  if (sr_is_seq(v))
    for (int i = 0; i < v->seq.n; i++) a |= names_to_axes(v->seq.items[i], m);
  return a;
}

static const SrSpec *spec_at(const SrVal *specs, uint32_t i) {
  if (!specs || !sr_is_seq(specs) || (int)i >= specs->seq.n) return NULL;
  const SrVal *v = specs->seq.items[i];
  if (v->kind == SR_V_SPEC) return v->spec;
  if (v->kind == SR_V_SHARDING) return v->sh.spec;
  return NULL;
}

static int ev_shard_map(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrJaxpr *j = sr_ev_param_jaxpr(e, "jaxpr");
  SrVal *mv = sr_ev_param(e, "mesh"), *ins = sr_ev_param(e, "in_specs"), *outs = sr_ev_param(e, "out_specs");
  if (!j || !mv || mv->kind != SR_V_MESH) return sr_ev_err(cx, "TypeError", "shard_map equation has no jaxpr or mesh");
  if (sr_nargs(j) != e->nin || j->nout != e->nout) return sr_ev_err(cx, "TypeError", "shard_map: the body does not match the equation");
  /* the concrete mesh: the inputs' or the context's, of the param's shape */
  const SrMesh *shape = sr_mesh_shape(mv->mesh), *m = NULL;
  for (uint32_t i = 0; i < e->nin && !m; i++)
    if (e->in[i]->mesh && sr_mesh_shape(e->in[i]->mesh) == shape) m = e->in[i]->mesh;
  if (!m && cx->mesh && sr_mesh_shape(cx->mesh) == shape) m = cx->mesh;
  if (!m) {
    SrTypeBuilder tb;
    memset(&tb, 0, sizeof tb);
    tb.mesh = shape;
    tb.ndim = 1;
    tb.dims[0].size = 1;
    tb.dims[0].nax = 1;
    SrEvalEqn none = *e;
    none.nin = 0;
    m = sr_ev_mesh_for(cx, &none, sr_type_get(&tb));
  }
  if (!m) return sr_ev_err(cx, "ValueError", "shard_map: no devices for its mesh");
  SrAxes manual = names_to_axes(sr_ev_param(e, "newly_manual_axes"), m);
  if (!sr_ev_param(e, "newly_manual_axes")) manual = (1u << m->n) - 1;
  uint8_t types[SR_MAX_AXES];
  memcpy(types, m->types, sizeof types);
  for (int a = 0; a < m->n; a++)
    if (manual & (1u << a)) types[a] = SR_AXIS_MANUAL;
  const SrMesh *mm = sr_mesh_with_types(m, types);
  SrArray **args = sr_xcalloc(e->nin + 1, sizeof *args);
  int rc = 0;
  for (uint32_t i = 0; i < e->nin && rc == 0; i++) {
    const SrType *bt = sr_args(j)[i]->type;
    const SrType *bl = sr_layout_of_type(bt);
    const SrSpec *s = spec_at(ins, i);
    SrSpec empty = {0};
    const SrType *ol = outer_layout(cx, e->in[i]->type, bl, s ? s : &empty, m, manual);
    if (!ol) {
      rc = -1;
      break;
    }
    SrArray *a = sr_redistribute(cx, e->in[i], m, ol);
    if (!a) {
      rc = -1;
      break;
    }
    SrTypeBuilder b;
    sr_type_builder(&b, bl);
    if (!b.mesh && (b.unreduced || b.reduced)) b.mesh = shape;
    SrArray *body = sr_array_new(bt, sr_type_get(&b), mm);
    for (int p = 0; p < a->ndev; p++) body->shard[p] = sr_buffer_ref(a->shard[p]);
    sr_array_unref(a);
    args[i] = body;
  }
  SrArray **res = sr_xcalloc(e->nout + 1, sizeof *res);
  const SrMesh *saved = cx->mesh;
  if (rc == 0) {
    cx->mesh = mm;
    rc = sr_ev_jaxpr(cx, j, args, res);
    cx->mesh = saved;
  }
  for (uint32_t i = 0; i < e->nout && rc == 0; i++) {
    SrArray *r = res[i];
    if (r->mesh != mm) {
      SrArray *s = sr_redistribute(cx, r, mm, r->layout);
      if (!s) {
        rc = -1;
        break;
      }
      sr_array_unref(r);
      res[i] = r = s;
    }
    const SrSpec *s = spec_at(outs, i);
    SrSpec empty = {0};
    const SrType *ol = outer_layout(cx, e->out_type[i], r->layout, s ? s : &empty, m, manual);
    if (!ol) {
      rc = -1;
      break;
    }
    SrArray *o = sr_array_new(e->out_type[i], ol, m);
    for (int p = 0; p < o->ndev; p++) o->shard[p] = sr_buffer_ref(r->shard[p]);
    e->out[i] = sr_redistribute_typed(cx, o, m, sr_ev_out_layout(cx, e, i, m), e->out_type[i]);
    sr_array_unref(o);
    if (!e->out[i]) rc = -1;
  }
  for (uint32_t i = 0; i < e->nin; i++) sr_array_unref(args[i]);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(res[i]);
  free(args);
  free(res);
  return rc;
}

/* ---- collectives ---- */

/* The operand on the context (manual) mesh. */
static SrArray *on_mesh(SrEvalCtx *cx, SrArray *a) {
  if (a->mesh == cx->mesh || !cx->mesh) return sr_array_ref(a);
  return sr_redistribute(cx, a, cx->mesh, a->layout);
}

static int named_axes(SrEvalCtx *cx, const SrEvalEqn *e, const SrMesh *m, int *axes, int *n) {
  const char *key = sr_ev_param(e, "axes") ? "axes" : "axis_name";
  if (sr_ev_param_axes(cx, e, key, m, axes, n) < 0) return -1;
  SrVal *g = sr_ev_param(e, "axis_index_groups");
  if (g && g->kind != SR_V_NONE)
    return sr_ev_err(cx, "NotImplementedError", "%s with axis_index_groups is not supported", e->prim->name);
  return 0;
}

static void sorted_axes(int *axes, int n) {
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && axes[k - 1] > axes[k]; k--) {
      int t = axes[k];
      axes[k] = axes[k - 1];
      axes[k - 1] = t;
    }
}

/* psum, psum_invariant, pmax, pmin, unreduced_psum/pmax/pmin */
static int ev_all_reduce(SrEvalCtx *cx, const SrEvalEqn *e) {
  int id = e->prim->id;
  SrRedOp op = id == SR_P_pmax || id == SR_P_unreduced_pmax ? SR_RED_MAX
               : id == SR_P_pmin || id == SR_P_unreduced_pmin ? SR_RED_MIN : SR_RED_SUM;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrArray *a = on_mesh(cx, e->in[i]);
    if (!a) return -1;
    int axes[SR_MAX_AXES], n = 0;
    if (!a->mesh) {
      /* no mesh at all: a sum over nothing */
      e->out[i] = sr_array_retype(a, e->out_type[i], sr_layout_of_type(e->out_type[i]));
      sr_array_unref(a);
      continue;
    }
    if (named_axes(cx, e, a->mesh, axes, &n) < 0) {
      sr_array_unref(a);
      return -1;
    }
    sorted_axes(axes, n);
    SrArray *r = sr_array_new(e->out_type[i], sr_layout_of_type(e->out_type[i]), a->mesh);
    int rc = sr_coll_all_reduce(cx, a, axes, n, op, r->shard);
    sr_array_unref(a);
    if (rc < 0) {
      sr_array_unref(r);
      return -1;
    }
    e->out[i] = r;
  }
  return 0;
}

/* casts: the same buffers under the equation's type */
static int ev_cast(SrEvalCtx *cx, const SrEvalEqn *e) {
  for (uint32_t i = 0; i < e->nin; i++) {
    SrArray *a = on_mesh(cx, e->in[i]);
    if (!a) return -1;
    const SrType *l = sr_layout_of_type(e->out_type[i]);
    if (!sr_layout_same(l, a->layout) && (l->ndim != a->layout->ndim || sr_type_sharded_axes(l) != sr_type_sharded_axes(a->layout))) {
      SrArray *r = sr_redistribute(cx, a, a->mesh, l);
      sr_array_unref(a);
      if (!r) return -1;
      a = r;
    }
    e->out[i] = sr_array_retype(a, e->out_type[i], l);
    sr_array_unref(a);
  }
  return 0;
}

/* Per-device buffers of a into b (indexed by position), NULL elsewhere. */
static SrBuffer **buffers(SrArray *a) {
  SrBuffer **b = sr_xcalloc((size_t)a->ndev + 1, sizeof *b);
  for (int p = 0; p < a->ndev; p++) b[p] = sr_buffer_ref(a->shard[p]);
  return b;
}

static void free_buffers(SrBuffer **b, int n) {
  for (int p = 0; p < n; p++) sr_buffer_unref(b[p]);
  free(b);
}

/* Moves axis 0 of [n, shape...] to position `to`, buffer by buffer. */
static void unpack(SrBuffer **got, SrArray *r, size_t es, int64_t n, const int64_t *shape, int nd, int to) {
  int64_t v[SR_MAX_RANK + 1];
  v[0] = n;
  memcpy(v + 1, shape, (size_t)nd * sizeof *shape);
  for (int p = 0; p < r->ndev; p++) {
    if (!got[p]) continue;
    int q = 0;
    while (q < p && got[q] != got[p]) q++;
    if (q < p) {
      r->shard[p] = sr_buffer_ref(r->shard[q]);
      continue;
    }
    if (to == 0) {
      r->shard[p] = sr_buffer_ref(got[p]);
      continue;
    }
    SrBuffer *o = sr_buffer_new(got[p]->nbytes);
    sr_kern_move_axis(es, nd + 1, v, 0, to, got[p]->data, o->data);
    r->shard[p] = o;
  }
}

/* Moves the `parts` pieces of dim d to the front: [.., parts, s/parts, ..]
   -> [parts, .., s/parts, ..] (untiled: dim d has size parts). */
static SrBuffer **pack(SrArray *a, size_t es, int d, int64_t parts, int tiled) {
  int64_t shape[SR_MAX_RANK], v[SR_MAX_RANK + 1];
  sr_layout_shard_shape(a->layout, shape);
  int nd = a->layout->ndim, nv = 0, pos = d;
  for (int k = 0; k < nd; k++) {
    if (k == d && tiled) {
      v[nv++] = parts;
      v[nv++] = shape[k] / parts;
    } else {
      v[nv++] = shape[k];
    }
  }
  SrBuffer **b = sr_xcalloc((size_t)a->ndev + 1, sizeof *b);
  for (int p = 0; p < a->ndev; p++) {
    if (!a->shard[p]) continue;
    int q = 0;
    while (q < p && a->shard[q] != a->shard[p]) q++;
    if (q < p) {
      b[p] = sr_buffer_ref(b[q]);
      continue;
    }
    if (pos == 0) {
      b[p] = sr_buffer_ref(a->shard[p]);
      continue;
    }
    b[p] = sr_buffer_new(a->shard[p]->nbytes);
    sr_kern_move_axis(es, nv, v, pos, 0, a->shard[p]->data, b[p]->data);
  }
  return b;
}

static int64_t axes_size(const SrMesh *m, const int *axes, int n) {
  int64_t s = 1;
  for (int i = 0; i < n; i++) s *= m->sizes[axes[i]];
  return s;
}

/* all_gather, all_gather_invariant, all_gather_reduced */
static int ev_all_gather(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *a = on_mesh(cx, e->in[0]);
  if (!a) return -1;
  int axes[SR_MAX_AXES], n = 0, rc = 0;
  int64_t dim = 0, tiled = 0;
  if (!a->mesh || named_axes(cx, e, a->mesh, axes, &n) < 0 || sr_ev_param_int(cx, e, "all_gather_dimension", &dim) < 0) {
    sr_array_unref(a);
    return a->mesh ? -1 : sr_ev_err(cx, "ValueError", "%s outside shard_map", e->prim->name);
  }
  if (sr_ev_param(e, "tiled")) sr_ev_param_int(cx, e, "tiled", &tiled);
  size_t es = sr_elem_size(a->type->dtype);
  int64_t shape[SR_MAX_RANK], parts = axes_size(a->mesh, axes, n);
  sr_layout_shard_shape(a->layout, shape);
  SrBuffer **in = buffers(a), **got = sr_xcalloc((size_t)a->ndev + 1, sizeof *got);
  rc = sr_coll_all_gather(cx, in, a->mesh, a->type->dtype, sr_array_shard_bytes(a), axes, n, got);
  SrArray *r = NULL;
  if (rc == 0) {
    r = sr_array_new(e->out_type[0], sr_layout_of_type(e->out_type[0]), a->mesh);
    unpack(got, r, es, parts, shape, a->layout->ndim, (int)dim);
  }
  (void)tiled; /* tiled merges the new dim into dim: the same bytes */
  free_buffers(in, a->ndev);
  free_buffers(got, a->ndev);
  sr_array_unref(a);
  e->out[0] = r;
  return rc;
}

/* reduce_scatter, unreduced_reduce_scatter */
static int ev_reduce_scatter(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *a = on_mesh(cx, e->in[0]);
  if (!a) return -1;
  int axes[SR_MAX_AXES], n = 0;
  int64_t dim = 0, tiled = 0;
  if (!a->mesh || named_axes(cx, e, a->mesh, axes, &n) < 0 || sr_ev_param_int(cx, e, "scatter_dimension", &dim) < 0) {
    sr_array_unref(a);
    return a->mesh ? -1 : sr_ev_err(cx, "ValueError", "%s outside shard_map", e->prim->name);
  }
  if (sr_ev_param(e, "tiled")) sr_ev_param_int(cx, e, "tiled", &tiled);
  size_t es = sr_elem_size(a->type->dtype);
  int64_t parts = axes_size(a->mesh, axes, n);
  SrBuffer **in = pack(a, es, (int)dim, parts, (int)tiled);
  SrArray *r = sr_array_new(e->out_type[0], sr_layout_of_type(e->out_type[0]), a->mesh);
  size_t count = (size_t)sr_layout_shard_numel(a->layout) / (size_t)parts;
  int rc = sr_coll_reduce_scatter(cx, in, a->mesh, a->type->dtype, count, axes, n, SR_RED_SUM, r->shard);
  free_buffers(in, a->ndev);
  sr_array_unref(a);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  e->out[0] = r;
  return 0;
}

static int ev_all_to_all(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *a = on_mesh(cx, e->in[0]);
  if (!a) return -1;
  int axes[SR_MAX_AXES], n = 0;
  int64_t split, concat;
  if (!a->mesh || named_axes(cx, e, a->mesh, axes, &n) < 0 || sr_ev_param_int(cx, e, "split_axis", &split) < 0 ||
      sr_ev_param_int(cx, e, "concat_axis", &concat) < 0) {
    sr_array_unref(a);
    return a->mesh ? -1 : sr_ev_err(cx, "ValueError", "all_to_all outside shard_map");
  }
  size_t es = sr_elem_size(a->type->dtype);
  int64_t parts = axes_size(a->mesh, axes, n), shape[SR_MAX_RANK];
  sr_layout_shard_shape(a->layout, shape);
  SrBuffer **in = pack(a, es, (int)split, parts, 1), **got = sr_xcalloc((size_t)a->ndev + 1, sizeof *got);
  int rc = sr_coll_all_to_all(cx, in, a->mesh, a->type->dtype, sr_array_shard_bytes(a) / (size_t)parts, axes, n, got);
  SrArray *r = NULL;
  if (rc == 0) {
    shape[split] /= parts;
    r = sr_array_new(e->out_type[0], sr_layout_of_type(e->out_type[0]), a->mesh);
    unpack(got, r, es, parts, shape, a->layout->ndim, (int)concat);
  }
  free_buffers(in, a->ndev);
  free_buffers(got, a->ndev);
  sr_array_unref(a);
  e->out[0] = r;
  return rc;
}

/* _pcollectives_lowering_common: no two pairs share a source or a
   destination, indices compared modulo the group size as Python's %
   does. */
static int perm_unique(SrEvalCtx *cx, SrVal *perm, const int64_t *src, const int64_t *dst, int np, int64_t size) {
  for (int k = 0; k < np; k++)
    for (int j = 0; j < k; j++) {
      int64_t sj = (src[j] % size + size) % size, sk = (src[k] % size + size) % size;
      int64_t dj = (dst[j] % size + size) % size, dk = (dst[k] % size + size) % size;
      if (sj == sk || dj == dk) {
        SrBuf b = SR_BUF_INIT;
        sr_val_repr(&b, perm);
        int rc = sr_ev_err(cx, "ValueError", "ppermute sources and destinations must be unique, got %s.", sr_buf_str(&b));
        sr_buf_free(&b);
        return rc;
      }
    }
  return 0;
}

static int ev_ppermute(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrVal *perm = sr_ev_param(e, "perm");
  if (!perm || !sr_is_seq(perm)) return sr_ev_err(cx, "TypeError", "ppermute equation has no perm");
  int np = perm->seq.n;
  int64_t *src = sr_xmalloc((size_t)(np + 1) * sizeof *src), *dst = sr_xmalloc((size_t)(np + 1) * sizeof *dst);
  int *isrc = sr_xmalloc((size_t)(np + 1) * sizeof *isrc), *idst = sr_xmalloc((size_t)(np + 1) * sizeof *idst);
  int rc = 0;
  for (int k = 0; k < np && rc == 0; k++) {
    int64_t pr[2];
    int n2;
    if (sr_val_ints(perm->seq.items[k], pr, 2, &n2) < 0 || n2 != 2) rc = sr_ev_err(cx, "TypeError", "ppermute: bad perm");
    src[k] = pr[0];
    dst[k] = pr[1];
  }
  for (uint32_t i = 0; i < e->nin && rc == 0; i++) {
    SrArray *a = on_mesh(cx, e->in[i]);
    if (!a) {
      rc = -1;
      break;
    }
    int axes[SR_MAX_AXES], n = 0;
    if (!a->mesh || named_axes(cx, e, a->mesh, axes, &n) < 0) {
      rc = a->mesh ? -1 : sr_ev_err(cx, "ValueError", "ppermute outside shard_map");
      sr_array_unref(a);
      break;
    }
    int64_t size = axes_size(a->mesh, axes, n);
    if (perm_unique(cx, perm, src, dst, np, size) < 0) rc = -1;
    for (int k = 0; k < np && rc == 0; k++) {
      if (src[k] < 0 || src[k] >= size || dst[k] < 0 || dst[k] >= size)
        rc = sr_ev_err(cx, "ValueError", "ppermute: perm index out of range for axis size %lld", (long long)size);
      isrc[k] = (int)src[k];
      idst[k] = (int)dst[k];
    }
    SrBuffer **in = buffers(a);
    SrArray *r = sr_array_new(e->out_type[i], sr_layout_of_type(e->out_type[i]), a->mesh);
    if (rc == 0)
      rc = sr_coll_ppermute(cx, in, a->mesh, a->type->dtype, sr_array_shard_bytes(a), axes, n, np, isrc, idst, r->shard);
    free_buffers(in, a->ndev);
    sr_array_unref(a);
    if (rc < 0) sr_array_unref(r);
    else e->out[i] = r;
  }
  free(src);
  free(dst);
  free(isrc);
  free(idst);
  return rc;
}

typedef struct IdxArg {
  int axes[SR_MAX_AXES], n;
  SrDtype dt;
} IdxArg;

static int index_fn(SrShardIO *io) {
  IdxArg *a = io->arg;
  int64_t v = 0;
  for (int k = 0; k < a->n; k++) v = v * io->mesh->sizes[a->axes[k]] + sr_mesh_coord(io->mesh, io->pos, a->axes[k]);
  sr_kern_set_scalar(a->dt, (double)v, v, io->out[0]->data);
  return 0;
}

static int ev_axis_index(SrEvalCtx *cx, const SrEvalEqn *e) {
  if (!cx->mesh) return sr_ev_err(cx, "NameError", "axis_index outside shard_map: unbound axis name");
  IdxArg a;
  if (sr_ev_param_axes(cx, e, "axis_name", cx->mesh, a.axes, &a.n) < 0) return -1;
  a.dt = e->out_type[0]->dtype;
  e->out[0] = sr_array_new(e->out_type[0], sr_layout_of_type(e->out_type[0]), cx->mesh);
  return sr_ev_map(cx, 0, NULL, 1, e->out, SR_MAP_POS, index_fn, &a);
}

void sr_eval_rules_manual(void) {
  sr_set_eval_rule(SR_P_shard_map, ev_shard_map);
  static const int reduce[] = {SR_P_psum, SR_P_psum_invariant, SR_P_pmax, SR_P_pmin, SR_P_unreduced_psum,
                               SR_P_unreduced_pmax, SR_P_unreduced_pmin};
  for (size_t i = 0; i < sizeof reduce / sizeof *reduce; i++) sr_set_eval_rule(reduce[i], ev_all_reduce);
  static const int casts[] = {SR_P_pvary, SR_P_pbroadcast, SR_P_preduced, SR_P_reduced_vary_cast,
                              SR_P_vary_unreduced_cast};
  for (size_t i = 0; i < sizeof casts / sizeof *casts; i++) sr_set_eval_rule(casts[i], ev_cast);
  sr_set_eval_rule(SR_P_all_gather, ev_all_gather);
  sr_set_eval_rule(SR_P_all_gather_invariant, ev_all_gather);
  sr_set_eval_rule(SR_P_all_gather_reduced, ev_all_gather);
  sr_set_eval_rule(SR_P_reduce_scatter, ev_reduce_scatter);
  sr_set_eval_rule(SR_P_unreduced_reduce_scatter, ev_reduce_scatter);
  sr_set_eval_rule(SR_P_all_to_all, ev_all_to_all);
  sr_set_eval_rule(SR_P_ppermute, ev_ppermute);
  sr_set_eval_rule(SR_P_axis_index, ev_axis_index);
}
