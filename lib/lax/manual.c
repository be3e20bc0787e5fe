/* manual.c: the rules of manual mode: shard_map, and the collectives and casts
 * (shard_map.py, lax/parallel.py).
 *
 * The family's helpers, then each primitive's (or each group sharing
 * rules') type, eval, JVP and transpose rules and communication note side
 * by side in that order under its heading, then the family's registration
 * sr_lax_manual_init (lax/lax.h says what a family file holds and uses).
 */
#include "lax/lax.h"

#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "exec/eval.h"
#include "exec/kern.h"
#include "core/jaxstate.h"
#include "check/rule.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"
#include "util/pyfmt.h"

/* ==== the family's helpers ==== */

/* type rules of manual mode -- shard_map, and the
 * collectives and casts that run inside it (reference section 4).
 *
 * Inside a shard_map a value's type says, for each mesh axis the map is
 * manual over, how the devices along it relate: varying, invarying,
 * unreduced or reduced.  This is JAX's ManualAxisType (`aval.mat`).  In
 * this IR a type keeps one varying set and one unreduced and one reduced
 * set; the unreduced and reduced axes that the context makes Manual are the
 * mat's, the others belong to the explicit sharding.  Every collective
 * checks and moves axes between these states, with JAX's messages
 * (lax/parallel.py, core.py, shard_map.py).
 */

/* The mesh a result is built on: the operand's, else the context's shape. */
static const SrMesh *work_mesh(SrTypeCtx *cx, const SrType *t) {
  if (t && t->mesh) return t->mesh;
  if (cx->mesh && cx->mesh->n) return sr_mesh_shape(cx->mesh);
  return NULL;
}

/* The axes of m that a mesh with axis types (a context) makes Manual. */
static SrAxes manual_of(const SrMesh *ctx, const SrMesh *m) {
  SrAxes s = 0;
  if (!m || !ctx) return 0;
  for (int i = 0; i < m->n; i++) {
    int j = sr_mesh_axis(ctx, m->names[i]);
    if (j >= 0 && ctx->types[j] == SR_AXIS_MANUAL) s |= 1u << i;
  }
  return s;
}

static SrAxes manual_in(SrTypeCtx *cx, const SrMesh *m) { return manual_of(cx->mesh, m); }

/* The same axes named on another mesh (names it lacks are dropped). */
static SrAxes rebase(SrAxes a, const SrMesh *from, const SrMesh *to) {
  if (from == to || !a) return a;
  SrAxes r = 0;
  for (int i = 0; from && to && i < from->n; i++) {
    if (!(a & (1u << i))) continue;
    int j = sr_mesh_axis(to, from->names[i]);
    if (j >= 0) r |= 1u << j;
  }
  return r;
}

/* A type's ManualAxisType: varying, and the Manual part of its unreduced
   and reduced sets. */
typedef struct Mat {
  SrAxes v, u, r;
  int ukind;
} Mat;

static Mat mat_of(SrTypeCtx *cx, const SrType *t) {
  SrAxes man = manual_in(cx, t->mesh);
  Mat m = {t->varying, t->unreduced & man, t->reduced & man, SR_UK_NONE};
  if (m.u) m.ukind = t->ukind;
  return m;
}

/* t on mesh m with a new mat; the explicit unreduced/reduced axes stay. */
static void builder_with_mat(SrTypeCtx *cx, SrTypeBuilder *b, const SrType *t, const SrMesh *m, Mat mt) {
  SrAxes man = manual_in(cx, m);
  sr_type_builder(b, t);
  b->mesh = m;
  b->varying = mt.v;
  b->unreduced = (t->unreduced & ~man) | mt.u;
  b->reduced = (t->reduced & ~man) | mt.r;
  b->ukind = mt.u ? mt.ukind : (b->unreduced ? t->ukind : SR_UK_NONE);
}

static const SrType *with_mat(SrTypeCtx *cx, const SrType *t, const SrMesh *m, Mat mt) {
  SrTypeBuilder b;
  builder_with_mat(cx, &b, t, m, mt);
  return sr_type_get(&b);
}

static void put_name(SrBuf *b, const char *s) { sr_py_str_repr(b, s, strlen(s)); }

/* repr(frozenset) of a set of axes, in mesh order: frozenset({'i', 'j'}),
   frozenset() */
static void put_frozenset(SrBuf *b, const SrMesh *m, SrAxes a) {
  if (!a || !m) {
    sr_buf_puts(b, "frozenset()");
    return;
  }
  sr_buf_puts(b, "frozenset({");
  int k = 0;
  for (int i = 0; i < m->n; i++) {
    if (!(a & (1u << i))) continue;
    if (k++) sr_buf_puts(b, ", ");
    put_name(b, m->names[i]);
  }
  sr_buf_puts(b, "})");
}

/* Reports the message built in b (freeing it).  Returns -1. */
static int report(SrTypeCtx *cx, const char *exc, SrBuf *b) {
  sr_terr(cx, exc, "%s", sr_buf_str(b));
  sr_buf_free(b);
  return -1;
}

#define MAX_NAMES 32

/* The axes a collective names, as written: `axes=('i', 'j')`,
   `axis_name=('i',)` or `axis_name=i`; old psum may also name positional
   (integer) axes. */
typedef struct Names {
  int n, npos;
  const char *name[MAX_NAMES]; /* interned; NULL for an integer entry */
  int64_t pos[MAX_NAMES];
} Names;

static int names_item(SrTypeCtx *cx, const SrRuleEqn *e, const SrVal *v, Names *an) {
  if (an->n == MAX_NAMES) return sr_terr(cx, "ValueError", "%s names too many axes", e->prim->name);
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) {
    an->name[an->n] = sr_intern(v->str.s, v->str.n);
    an->pos[an->n++] = 0;
    return 0;
  }
  if (v->kind == SR_V_INT) {
    an->name[an->n] = NULL;
    an->pos[an->n++] = v->i;
    an->npos++;
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  sr_terr(cx, "TypeError", "%s: %s is not a mesh axis name", e->prim->name, sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

static int read_names(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, Names *an) {
  memset(an, 0, sizeof *an);
  SrVal *v = sr_rparam(e, key);
  if (!v) return sr_terr(cx, "TypeError", "%s equation has no '%s' param", e->prim->name, key);
  if (v->kind == SR_V_NONE) return 0;
  if (sr_is_seq(v)) {
    for (int i = 0; i < v->seq.n; i++)
      if (names_item(cx, e, v->seq.items[i], an) < 0) return -1;
    return 0;
  }
  return names_item(cx, e, v, an);
}

static void put_names_item(SrBuf *b, const Names *an, int i) {
  if (an->name[i]) put_name(b, an->name[i]);
  else sr_buf_printf(b, "%lld", (long long)an->pos[i]);
}

/* repr of the names as a tuple, as written: ('i',), ('i', 0) */
static void put_names_tuple(SrBuf *b, const Names *an) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < an->n; i++) {
    if (i) sr_buf_puts(b, ", ");
    put_names_item(b, an, i);
  }
  sr_buf_puts(b, an->n == 1 ? ",)" : ")");
}

/* repr of set(names): {'i', 'j'} */
static void put_names_set(SrBuf *b, const Names *an) {
  if (!an->n) {
    sr_buf_puts(b, "set()");
    return;
  }
  sr_buf_putc(b, '{');
  for (int i = 0; i < an->n; i++) {
    if (i) sr_buf_puts(b, ", ");
    put_names_item(b, an, i);
  }
  sr_buf_putc(b, '}');
}

/* The size of an enclosing jax.vmap's axis named n (the innermost of that
   name), or -1 when no vmap names it. */
static int64_t vmap_axis_size(const SrTypeCtx *cx, const char *n) {
  for (int i = cx->nvmap - 1; i >= 0; i--)
    if (cx->vmap_axis[i] == n) return cx->vmap_size[i];
  return -1;
}

/* lax/parallel.py: _check_axis_names.  A named axis must be bound by an
   enclosing shard_map (Manual in the context) or vmap; the shard_map's
   names become axes of m (a vmap's are not mesh axes). */
static int bind_names(SrTypeCtx *cx, const Names *an, const char *api, const SrMesh *m, SrAxes *out) {
  *out = 0;
  for (int i = 0; i < an->n; i++) {
    const char *n = an->name[i];
    if (!n || vmap_axis_size(cx, n) >= 0) continue;
    int c = cx->mesh ? sr_mesh_axis(cx->mesh, n) : -1;
    int k = m ? sr_mesh_axis(m, n) : -1;
    if (c < 0 || k < 0 || cx->mesh->types[c] != SR_AXIS_MANUAL)
      return sr_terr(cx, "NameError",
                     "Found an unbound axis name: %s. To fix this, please call %s under `jax.shard_map`.", n, api);
    *out |= 1u << k;
  }
  return 0;
}

/* The product of the sizes of the named axes (lax/parallel.py:
   _axis_size); -1 when the mesh does not know them. */
static int64_t names_size(SrTypeCtx *cx, const Names *an) {
  int64_t n = 1;
  for (int i = 0; i < an->n; i++) {
    int64_t v = an->name[i] ? vmap_axis_size(cx, an->name[i]) : -1;
    if (v >= 0) {
      n *= v;
      continue;
    }
    int c = an->name[i] && cx->mesh ? sr_mesh_axis(cx->mesh, an->name[i]) : -1;
    if (c < 0 || cx->mesh->sizes[c] <= 0) return -1;
    n *= cx->mesh->sizes[c];
  }
  return n;
}

/* core.py: check_unreduced_args (one argument, kind sum) */
static int check_unreduced_args(SrTypeCtx *cx, const char *name, const SrType *t, const Names *an, SrAxes ax) {
  Mat m = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (m.u & ax) {
    sr_buf_printf(&b, "%s cannot accept args which are unreduced. Got %s and axes=", name, sr_type_short(t));
    put_names_set(&b, an);
    return report(cx, "ValueError", &b);
  }
  if (m.u && m.ukind != SR_UK_SUM) {
    sr_buf_printf(&b, "%s cannot accept args with unreduced_kind=%s. Expected unreduced_kind=%s", name,
                  sr_ukind_str(m.ukind), sr_ukind_str(SR_UK_SUM));
    return report(cx, "ValueError", &b);
  }
  if (m.r & ax) {
    sr_buf_printf(&b, "%s cannot accept args which are reduced. Got %s and axes=", name, sr_type_short(t));
    put_names_set(&b, an);
    return report(cx, "ValueError", &b);
  }
  return 0;
}

/* lax/parallel.py: check_unreduced_kind */
static int check_unreduced_kind(SrTypeCtx *cx, const char *name, Mat m, int kind) {
  if (m.ukind == kind) return 0;
  return sr_terr(cx, "ValueError", "%s cannot accept args with unreduced_kind=%s. Expected unreduced_kind=%s", name,
                 sr_ukind_str(m.ukind), sr_ukind_str(kind));
}

/* lax/parallel.py: collective_vma_rule.  With check_vma the operand must
   vary over every named axis; the result varies as it does.  Without it
   nothing varies. */
static int collective_vma(SrTypeCtx *cx, const char *p, const Names *an, SrAxes ax, const SrType *t, SrAxes *out) {
  *out = 0;
  if (!cx->check_vma) return 0;
  if ((ax & t->varying) != ax || an->npos) {
    SrBuf b = SR_BUF_INIT;
    /* two spaces after "device-varying", as in JAX's source */
    sr_buf_printf(&b, "Collective %s must be applied to a device-varying  type, but got ", p);
    put_frozenset(&b, t->mesh, t->varying);
    sr_buf_puts(&b, " for collective acting over axis name ");
    put_names_tuple(&b, an);
    sr_buf_puts(&b, ". Please open an issue at https://github.com/jax-ml/jax/issues and as a temporary "
                    "workaround pass the check_vma=False argument to `jax.shard_map`");
    return report(cx, "ValueError", &b);
  }
  *out = t->varying;
  return 0;
}

/* Applies a rule to each operand in turn: the collectives and casts bind
   once per array (older psum bound all of them in one equation). */
typedef int (*OneRule)(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *in, const SrType **out);

static int each(SrTypeCtx *cx, const SrRuleEqn *e, OneRule f, const SrType **out) {
  if (e->nout != e->nin)
    return sr_terr(cx, "TypeError", "%s has %u operands but %u results; it maps each operand to one result",
                   e->prim->name, e->nin, e->nout);
  for (uint32_t i = 0; i < e->nin; i++)
    if (f(cx, e, e->in[i], &out[i]) < 0) return -1;
  return 0;
}

/* The numbers of operands and results an equation must have. */
static int arity_is(SrTypeCtx *cx, const SrRuleEqn *e, uint32_t nin, uint32_t nout) {
  if (e->nin == nin && e->nout == nout) return 0;
  return sr_terr(cx, "TypeError", "%s takes %u operand%s and gives %u result%s, but this equation has %u and %u",
                 e->prim->name, nin, nin == 1 ? "" : "s", nout, nout == 1 ? "" : "s", e->nin, e->nout);
}

/* A dimension param (all_gather_dimension...) checked against a rank. */
static int dim_param(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int limit, int64_t *d) {
  if (sr_rparam_int(cx, e, key, 1, d) < 0) return -1;
  if (*d < 0 || *d >= limit)
    return sr_terr(cx, "ValueError", "%s=%lld is out of range for a rank-%d operand", key, (long long)*d,
                   limit > 0 ? limit - 1 : 0);
  return 0;
}

/* shard_map and the collectives and casts of manual mode.
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

/* The operand on the context (manual) mesh. */
static SrArray *on_mesh(SrEvalCtx *cx, SrArray *a) {
  if (a->mesh == cx->mesh || !cx->mesh) return sr_array_ref(a);
  return sr_redistribute(cx, a, cx->mesh, a->layout);
}

static int named_axes(SrEvalCtx *cx, const SrEvalEqn *e, const SrMesh *m, int *axes, int *n) {
  const char *key = sr_ev_param(e, "axes") ? "axes" : "axis_name";
  if (sr_ev_param_axes(cx, e, key, m, axes, n) < 0) return -1;
  SrVal *g = sr_ev_param(e, "axis_index_groups");
  if (!g || g->kind == SR_V_NONE) return 0;
  int id = e->prim->id;
  if (id != SR_P_all_gather && id != SR_P_reduce_scatter && id != SR_P_all_to_all)
    return sr_ev_err(cx, "NotImplementedError", "%s with axis_index_groups is not supported", e->prim->name);
  /* the groups split each group over the axes (sr_comm_groups_sub), for
     this equation's collective only (clear_sub) */
  int ng = sr_is_seq(g) ? g->seq.n : 0, size = ng && sr_is_seq(g->seq.items[0]) ? g->seq.items[0]->seq.n : 0;
  if (!ng || !size) return sr_ev_err(cx, "ValueError", "%s: bad axis_index_groups", e->prim->name);
  int *sub = sr_xmalloc((size_t)ng * (size_t)size * sizeof *sub);
  for (int k = 0; k < ng; k++) {
    SrVal *gk = g->seq.items[k];
    for (int j = 0; j < size; j++) {
      if (!sr_is_seq(gk) || gk->seq.n != size || gk->seq.items[j]->kind != SR_V_INT) {
        free(sub);
        return sr_ev_err(cx, "ValueError", "%s: axis_index_groups must all have the same size", e->prim->name);
      }
      sub[k * size + j] = (int)gk->seq.items[j]->i;
    }
  }
  cx->sub_n = ng;
  cx->sub_size = size;
  cx->sub = sub;
  return 0;
}

/* Ends what named_axes set for one collective. */
static void clear_sub(SrEvalCtx *cx) {
  free((int *)cx->sub);
  cx->sub = NULL;
  cx->sub_n = cx->sub_size = 0;
}

/* The members of a group of the collective: the axes' sizes, or the
   axis_index_groups' size. */
static int64_t group_size(SrEvalCtx *cx, const SrMesh *m, const int *axes, int n) {
  if (cx->sub_n) return cx->sub_size;
  int64_t s = 1;
  for (int i = 0; i < n; i++) s *= m->sizes[axes[i]];
  return s;
}

static void sorted_axes(int *axes, int n) {
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && axes[k - 1] > axes[k]; k--) {
      int t = axes[k];
      axes[k] = axes[k - 1];
      axes[k - 1] = t;
    }
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

static int64_t ev_axes_size(const SrMesh *m, const int *axes, int n) {
  int64_t s = 1;
  for (int i = 0; i < n; i++) s *= m->sizes[axes[i]];
  return s;
}

/* rules of the sharding casts (reshard,
 * sharding_constraint) and of the manual-mode collectives and casts
 * (lax/parallel.py, core.py, pjit.py).
 *
 * All of these are linear: the JVP applies the same operation to the
 * tangent.  The transposes pair them up as the seed's table says: a
 * forward cast to reduced transposes to the reshard from unreduced that is
 * the all-reduce (reshard), psum_invariant <-> pvary, preduced <->
 * unreduced_psum, vary_unreduced_cast <-> reduced_vary_cast, all_gather <->
 * reduce_scatter, all_gather_reduced <-> unreduced_reduce_scatter,
 * ppermute <-> ppermute with the inverse permutation, all_to_all <->
 * all_to_all with split and concat swapped.  pmax and pmin have no rules,
 * as in JAX.
 */

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

/* Binds prim to the cotangents (zeros instantiated) with e's params, a
   key renamed (from -> to) and one param replaced (key -> val, stolen). */
static int coll_transpose(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **cx, int prim, const char *from,
                          const char *to, const char *key, SrVal *val, const char *drop) {
  SrPList ps = {0};
  for (uint32_t i = 0; i < e->nparams; i++) {
    const char *k = e->params[i].key;
    if (key && strcmp(k, key) == 0) continue;
    if (drop && strcmp(k, drop) == 0) continue;
    if (from && strcmp(k, from) == 0) k = to;
    sr_plist_add(&ps, k, sr_ref(e->params[i].val));
  }
  if (key) sr_plist_add(&ps, key, val);
  SrVal *small[32], **cs = e->nout <= 32 ? small : sr_xcalloc(e->nout, sizeof *cs);
  for (uint32_t i = 0; i < e->nout; i++) cs[i] = ct[i] ? ct[i] : sr_ad_full_zeros(ad, sr_ad_ct_type(e->out[i]->type));
  SrVal *r = sr_ad_bind(ad, prim, (int)e->nout, cs, ps.n, ps.p);
  sr_plist_free(&ps);
  if (cs != small) free(cs);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++) cx[i] = r->kind == SR_V_TUPLE ? r->seq.items[i] : r;
  return 0;
}

#define PAIR(name, prim)                                                                              \
  TR(name) {                                                                                          \
    (void)x;                                                                                          \
    return coll_transpose(ad, e, ct, cx, prim, NULL, NULL, NULL, NULL, NULL);                         \
  }

/* The batching rules' helpers (vmap of the collectives, parallel.py). */

static const SrVal *param_of(const SrEqn *e, const char *key) {
  for (uint32_t i = 0; i < e->nparams; i++)
    if (strcmp(e->params[i].key, key) == 0) return e->params[i].val;
  return NULL;
}

/* Is the axis name v (a str) the interned name n? */
static int name_is(const SrVal *v, const char *n) {
  return (v->kind == SR_V_STR || v->kind == SR_V_WORD) && sr_intern(v->str.s, v->str.n) == n;
}

/* Does the names param (a name or a tuple of them) name n? */
static int names_name(const SrVal *v, const char *n) {
  if (!v || !n) return 0;
  if (!sr_is_seq(v)) return name_is(v, n);
  for (int i = 0; i < v->seq.n; i++)
    if (name_is(v->seq.items[i], n)) return 1;
  return 0;
}

/* The names param v without n (a new tuple). */
static SrVal *names_without(const SrVal *v, const char *n) {
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, 0);
  if (!sr_is_seq(v)) {
    if (!name_is(v, n)) sr_seq_push(NULL, r, sr_ref((SrVal *)v));
    return r;
  }
  for (int i = 0; i < v->seq.n; i++)
    if (!name_is(v->seq.items[i], n)) sr_seq_push(NULL, r, sr_ref(v->seq.items[i]));
  return r;
}

/* e's primitive bound on one operand x with e's params, param key's value
   replaced by val (stolen).  The first result (pooled). */
static SrVal *bind_axes(SrBatch *b, const SrEqn *e, SrVal *x, const char *key, SrVal *val) {
  SrPList ps = {0};
  for (uint32_t i = 0; i < e->nparams; i++) {
    const char *k = e->params[i].key;
    sr_plist_add(&ps, k, strcmp(k, key) == 0 ? sr_ref(val) : sr_ref(e->params[i].val));
  }
  sr_unref(val);
  SrVal *r = x ? sr_ad_bind(&b->ad, e->prim->id, 1, &x, ps.n, ps.p) : NULL;
  sr_plist_free(&ps);
  if (r && r->kind == SR_V_TUPLE) r = r->seq.n ? r->seq.items[0] : NULL;
  return r;
}

/* parallel._foldaxis: dims k and k + 1 of x merged (pooled). */
static SrVal *fold_axis(SrAd *ad, SrVal *x, int k) {
  const SrType *t = x ? sr_ad_type(ad, x) : NULL;
  if (!t) return NULL;
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  tb.dims[k].size *= tb.dims[k + 1].size;
  tb.dims[k].nax = 0;
  memmove(&tb.dims[k + 1], &tb.dims[k + 2], (size_t)(tb.ndim - k - 2) * sizeof tb.dims[0]);
  tb.ndim--;
  return sr_ad_reshape_plain(ad, x, sr_type_get(&tb));
}

/* parallel._splitaxis: dim k of x as (n, size / n) (pooled). */
static SrVal *split_axis(SrAd *ad, SrVal *x, int k, int64_t n) {
  const SrType *t = x ? sr_ad_type(ad, x) : NULL;
  if (!t) return NULL;
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  memmove(&tb.dims[k + 1], &tb.dims[k], (size_t)(tb.ndim - k) * sizeof tb.dims[0]);
  tb.ndim++;
  tb.dims[k].size = n;
  tb.dims[k].nax = 0;
  tb.dims[k + 1].size = t->dims[k].size / n;
  tb.dims[k + 1].nax = 0;
  return sr_ad_reshape_plain(ad, x, sr_type_get(&tb));
}

/* ==== the all-reduces: psum, pmean, psum_invariant, pmax, pmin, unreduced_psum/pmax/pmin ==== */

/* lax/parallel.py: _allreduce_effectful_abstract_eval -- psum, and pmax /
   pmin without check_vma.  Positional (integer) axes reduce dimensions;
   the result is a fresh type: it varies over nothing and is not unreduced
   or reduced. */
static int allreduce_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "psum", m, &ax) < 0) return -1;
  SrVal *groups = sr_rparam(e, "axis_index_groups");
  if (groups && groups->kind != SR_V_NONE && an.npos) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "axis_index_groups can only be used with reductions over named axes, but got: ");
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (check_unreduced_args(cx, "psum", t, &an, ax) < 0) return -1;
  SrAxes drop = 0;
  for (int i = 0; i < an.n; i++) {
    if (an.name[i]) continue;
    int64_t p = an.pos[i];
    if (p < 0 || p >= t->ndim || (drop & (1u << p))) {
      SrBuf b = SR_BUF_INIT;
      Names pos = {0};
      for (int k = 0; k < an.n; k++)
        if (!an.name[k]) pos.pos[pos.n++] = an.pos[k];
      if (p >= 0 && p < t->ndim) {
        sr_buf_puts(&b, "duplicate value in 'axes' of reduction: ");
        put_names_tuple(&b, &pos);
      } else {
        sr_buf_puts(&b, "reduction axes ");
        put_names_tuple(&b, &pos);
        sr_buf_puts(&b, " contains out-of-bounds indices for ");
        sr_type_long(&b, t);
        sr_buf_putc(&b, '.');
      }
      return report(cx, "ValueError", &b);
    }
    drop |= 1u << p;
  }
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.ndim = 0;
  for (int i = 0; i < t->ndim; i++)
    if (!(drop & (1u << i))) b.dims[b.ndim++] = t->dims[i];
  b.varying = b.unreduced = b.reduced = 0;
  b.ukind = SR_UK_NONE;
  b.weak = 0;
  *out = sr_type_get(&b);
  return 0;
}

/* lax/parallel.py: _psum_invariant_abstract_eval -- psum_invariant, and
   pmax / pmin with check_vma: varying over the axes becomes invarying. */
static int invariant_one(SrTypeCtx *cx, const SrRuleEqn *e, const char *name, const SrType *t,
                         const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "psum", m, &ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!(ax & mt.v)) {
    sr_buf_puts(&b, "psum is a variant->invariant collective. This means that the axis names mentioned in "
                    "`axes` passed to `psum` must be present in `jax.typeof(inp).mat.varying`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(inp).mat.varying=");
    put_frozenset(&b, m, mt.v);
    return report(cx, "ValueError", &b);
  }
  if (an.npos) {
    sr_buf_puts(&b, "psum_invariant does not accept integer axes. Got ");
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (check_unreduced_args(cx, name, t, &an, ax) < 0) return -1;
  mt.v &= ~ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

static int psum_invariant_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  return invariant_one(cx, e, "psum_invariant", t, out);
}

/* lax/parallel.py: _pmin_pmax_abstract_eval */
static int pmax_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  if (!cx->check_vma) return allreduce_one(cx, e, t, out);
  return invariant_one(cx, e, e->prim->id == SR_P_pmin ? "pmin" : "pmax", t, out);
}

static int type_psum(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) { return each(cx, e, allreduce_one, out); }

static int type_psum_invariant(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, psum_invariant_one, out);
}

static int type_pmax(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) { return each(cx, e, pmax_one, out); }

/* lax/parallel.py: _unreduced_psum_pmax_pmin_abstract_eval -- unreduced
   over the axes becomes invarying; the kind must be the reduction's. */
static int unreduced_reduce_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  const char *name = e->prim->name;
  int kind = e->prim->id == SR_P_unreduced_pmax ? SR_UK_MAX : e->prim->id == SR_P_unreduced_pmin ? SR_UK_MIN : SR_UK_SUM;
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, name, m, &ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.u) {
    sr_buf_printf(&b, "%s only accepts inputs that are unreduced. Got %s", name, sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.u & ax)) {
    sr_buf_printf(&b, "%s is a Unreduced -> Invariant collective. This means that the axes=", name);
    put_names_tuple(&b, &an);
    sr_buf_printf(&b, " passed to `%s` must be present in jax.typeof(x).mat.unreduced=", name);
    put_frozenset(&b, m, mt.u);
    return report(cx, "ValueError", &b);
  }
  if (mt.v & ax) {
    /* two spaces before axis_name, as in JAX's source */
    sr_buf_printf(&b, "%s's input cannot be varying across the  axis_name provided. Got x=%s and axes=", name,
                  sr_type_short(t));
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (an.npos) {
    sr_buf_printf(&b, "%s does not accept integer axis_name. Got axis_name=", name);
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (check_unreduced_kind(cx, name, mt, kind) < 0) return -1;
  mt.u &= ~ax;
  if (!mt.u) mt.ukind = SR_UK_NONE;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

static int type_unreduced_reduce(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, unreduced_reduce_one, out);
}

/* The positional (integer) entries of an all-reduce's axes, as a mask of
   dims, and whether it names any axis too. */
static uint32_t positional_axes(const SrEvalEqn *e, int *named) {
  SrVal *v = sr_ev_param(e, "axes");
  uint32_t pos = 0;
  *named = 0;
  for (int i = 0; v && sr_is_seq(v) && i < v->seq.n; i++) {
    const SrVal *a = v->seq.items[i];
    if (a->kind == SR_V_INT && a->i >= 0 && a->i < SR_MAX_RANK) pos |= 1u << a->i;
    else *named = 1;
  }
  return pos;
}

/* The named entries of axes as axes of m (the integer ones skipped). */
static int named_only(SrEvalCtx *cx, const SrEvalEqn *e, const SrMesh *m, int *axes, int *n) {
  SrVal *v = sr_ev_param(e, "axes");
  *n = 0;
  for (int i = 0; v && sr_is_seq(v) && i < v->seq.n; i++) {
    const SrVal *a = v->seq.items[i];
    if (a->kind == SR_V_INT) continue;
    int k = a->kind == SR_V_STR || a->kind == SR_V_WORD ? sr_mesh_axis(m, sr_intern(a->str.s, a->str.n)) : -1;
    if (k < 0) return sr_ev_err(cx, "NameError", "%s: unbound axis name", e->prim->name);
    axes[(*n)++] = k;
  }
  return 0;
}

typedef struct PosRed {
  int op;
  SrDtype dt;
  int nd;
  uint32_t axes;
} PosRed;

static int posred_fn(SrShardIO *io) {
  const PosRed *r = io->arg;
  if (sr_kern_reduce(r->op, r->dt, r->nd, io->in_shape[0], r->axes, io->in[0]->data, io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "cannot reduce arrays of dtype %s", sr_dtype_name(r->dt));
  return 0;
}

/* a with the dims of pos reduced, as the positional axes of psum / pmax /
   pmin reduce them (_allreduce_impl's positional reduce): each device
   reduces its block with those dims whole.  The result has the kept dims
   of a's type and layout. */
static SrArray *reduce_positional(SrEvalCtx *cx, SrArray *a, uint32_t pos, SrRedOp op) {
  SrTypeBuilder lb;
  sr_type_builder(&lb, a->layout);
  for (int d = 0; d < lb.ndim; d++)
    if (pos >> d & 1) lb.dims[d].nax = 0;
  SrArray *xin = a->mesh ? sr_redistribute(cx, a, a->mesh, sr_type_get(&lb)) : sr_array_ref(a);
  if (!xin) return NULL;
  SrTypeBuilder tb, ob;
  sr_type_builder(&tb, a->type);
  sr_type_builder(&ob, xin->layout);
  tb.ndim = ob.ndim = 0;
  for (int d = 0; d < a->type->ndim; d++) {
    if (pos >> d & 1) continue;
    tb.dims[tb.ndim++] = a->type->dims[d];
    ob.dims[ob.ndim++] = xin->layout->dims[d];
  }
  SrArray *r = sr_array_new(sr_type_get(&tb), sr_type_get(&ob), xin->mesh);
  PosRed pr = {op == SR_RED_MAX ? SR_KR_MAX : op == SR_RED_MIN ? SR_KR_MIN : SR_KR_SUM, a->type->dtype,
               a->type->ndim, pos};
  int rc = sr_ev_map(cx, 1, &xin, 1, &r, 0, posred_fn, &pr);
  sr_array_unref(xin);
  if (rc < 0) {
    sr_array_unref(r);
    return NULL;
  }
  return r;
}

/* psum, psum_invariant, pmax, pmin, unreduced_psum/pmax/pmin */
static int ev_all_reduce(SrEvalCtx *cx, const SrEvalEqn *e) {
  int id = e->prim->id;
  SrRedOp op = id == SR_P_pmax || id == SR_P_unreduced_pmax ? SR_RED_MAX
               : id == SR_P_pmin || id == SR_P_unreduced_pmin ? SR_RED_MIN : SR_RED_SUM;
  int named = 1;
  uint32_t pos = id == SR_P_psum || id == SR_P_pmax || id == SR_P_pmin ? positional_axes(e, &named) : 0;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrArray *a = pos ? reduce_positional(cx, e->in[i], pos, op) : sr_array_ref(e->in[i]);
    if (!a) return -1;
    if (!named) {
      e->out[i] = sr_redistribute_typed(cx, a, a->mesh, a->layout, e->out_type[i]);
      sr_array_unref(a);
      if (!e->out[i]) return -1;
      continue;
    }
    SrArray *am = on_mesh(cx, a);
    sr_array_unref(a);
    a = am;
    if (!a) return -1;
    int axes[SR_MAX_AXES], n = 0;
    if (!a->mesh) {
      /* no mesh at all: a sum over nothing */
      e->out[i] = sr_array_retype(a, e->out_type[i], sr_layout_of_type(e->out_type[i]));
      sr_array_unref(a);
      continue;
    }
    if ((pos ? named_only(cx, e, a->mesh, axes, &n) : named_axes(cx, e, a->mesh, axes, &n)) < 0) {
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

PAIR(tr_psum_invariant, SR_P_pvary)
/* _psum_transpose_rule: a cotangent of a psum over positional axes is
   first broadcast back over them (reduce_sum's transpose), then psum'd
   over the named axes only (psum as psum + pbroadcast). */
TR(tr_psum) {
  (void)x;
  const SrVal *axes = param_of(e, "axes");
  int64_t pos[SR_MAX_RANK];
  int npos = 0;
  if (axes && sr_is_seq(axes))
    for (int k = 0; k < axes->seq.n && npos < SR_MAX_RANK; k++)
      if (axes->seq.items[k]->kind == SR_V_INT) pos[npos++] = axes->seq.items[k]->i;
  if (!npos) return coll_transpose(ad, e, ct, cx, SR_P_psum, NULL, NULL, NULL, NULL, NULL);
  SrVal *named = sr_seq(NULL, SR_V_TUPLE, 0);
  for (int k = 0; k < axes->seq.n; k++)
    if (axes->seq.items[k]->kind != SR_V_INT) sr_seq_push(NULL, named, sr_ref(axes->seq.items[k]));
  SrVal *small[32], **cs = e->nout <= 32 ? small : sr_xcalloc(e->nout, sizeof *cs);
  int rc = 0;
  for (uint32_t i = 0; i < e->nout && rc == 0; i++) {
    const SrType *it = sr_ad_ct_type(e->in[i]->type);
    SrVal *c = ct[i] ? ct[i] : sr_ad_full_zeros(ad, sr_ad_ct_type(e->out[i]->type));
    int64_t bd[SR_MAX_RANK];
    int nb = 0;
    for (int d = 0; d < it->ndim; d++) {
      int in = 0;
      for (int k = 0; k < npos; k++) in |= pos[k] == d;
      if (!in) bd[nb++] = d;
    }
    cs[i] = c ? sr_ad_broadcast_in_dim(ad, c, it, bd, nb, 1) : NULL;
    if (!cs[i]) rc = -1;
  }
  SrVal *r = rc == 0 ? sr_ad_bindv(ad, SR_P_psum, (int)e->nout, cs, "axes", named, "axis_index_groups",
                                   sr_ref((SrVal *)(param_of(e, "axis_index_groups") ? param_of(e, "axis_index_groups")
                                                                                     : sr_none())),
                                   NULL)
                     : (sr_unref(named), NULL);
  if (cs != small) free(cs);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++) cx[i] = r->kind == SR_V_TUPLE ? r->seq.items[i] : r;
  return 0;
}
PAIR(tr_unreduced_psum, SR_P_preduced)

/* The explicit collectives, by HLO's name. */
static int comm_all_reduce(const SrEqn *e, SrCommNote *out, int max) {
  (void)e;
  return sr_comm_note(out, max, 0, "all-reduce (explicit collective)", NULL, 0);
}

/* vmap: _batched_reduction_collective (psum, psum_invariant, pmax, pmin).
   Over axes that do not name vmap's axis, a mapped operand keeps its batch
   dim (moved in front when positional axes must shift past it).  Over
   vmap's axis, an unmapped operand is the reduction over the other axes
   (times the axis size for a sum: _constant_reduction), a mapped one
   reduces its batch dim as a positional axis and is no longer mapped. */
static int batch_all_reduce(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *axes = (SrVal *)param_of(e, "axes");
  if (!axes || !sr_is_seq(axes)) return sr_batch_bind_same(b, e, x, bd[0], y, ybd);
  int has = 0, npos = 0;
  for (int k = 0; k < axes->seq.n; k++) {
    const SrVal *a = axes->seq.items[k];
    if (a->kind == SR_V_INT) npos++;
    else if (b->axis_name && name_is(a, b->axis_name)) has = 1;
  }
  SrVal *groups = (SrVal *)param_of(e, "axis_index_groups");
  if (has && groups && groups->kind != SR_V_NONE) {
    sr_raise(b->ad.I, "NotImplementedError", "axis_index_groups not supported in vmap collectives. Please open a "
                                            "feature request!");
    return -1;
  }
  int sum = e->prim->id == SR_P_psum || e->prim->id == SR_P_psum_invariant;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrVal *v = x[i], *na = sr_seq(NULL, SR_V_TUPLE, 0);
    int d = bd[i];
    if (d != SR_NOT_MAPPED && (has || npos)) v = sr_batch_moveaxis(b, v, d, 0);
    for (int k = 0; k < axes->seq.n; k++) {
      SrVal *a = axes->seq.items[k];
      if (a->kind == SR_V_INT) sr_seq_push(NULL, na, sr_int(NULL, a->i + (d != SR_NOT_MAPPED)));
      else if (has && name_is(a, b->axis_name)) {
        if (d != SR_NOT_MAPPED) sr_seq_push(NULL, na, sr_int(NULL, 0));
      } else {
        sr_seq_push(NULL, na, sr_ref(a));
      }
    }
    if (!has || d != SR_NOT_MAPPED || na->seq.n) v = bind_axes(b, e, v, "axes", na);
    else sr_unref(na);
    if (v && has && d == SR_NOT_MAPPED && sum) v = sr_ad_mul(&b->ad, sr_ad_const(&b->ad, v, (double)b->size), v);
    if (!v) return -1;
    y[i] = v;
    ybd[i] = has || d == SR_NOT_MAPPED ? SR_NOT_MAPPED : npos ? 0 : d;
  }
  return 0;
}

/* vmap: _unreduced_psum_batcher, _unreduced_pmax_batcher and
   _unreduced_pmin_batcher, which raise a bare NotImplementedError (and so
   do _preduced_batcher and _vary_unreduced_cast_batcher). */
static int batch_unimplemented(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  (void)e, (void)x, (void)bd, (void)y, (void)ybd;
  sr_raise(b->ad.I, "NotImplementedError", "%s", "");
  return -1;
}

/* ==== the casts: pvary, preduced, vary_unreduced_cast, reduced_vary_cast ==== */

/* lax/parallel.py: _pvary_abstract_eval -- invarying becomes varying. */
static int pvary_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "pvary", m, &ax) < 0) return -1;
  if (check_unreduced_args(cx, "pvary", t, &an, ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  if (ax & mt.v) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "pvary is a invariant->variant collective. This means that the axis names mentioned in "
                    "`axes` passed to `pvary` must not be present in `jax.typeof(inp).mat.varying`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(inp)=");
    sr_type_long(&b, t);
    return report(cx, "ValueError", &b);
  }
  mt.v |= ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

/* lax/parallel.py: _preduced_abstract_eval -- invarying becomes reduced. */
static int preduced_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "preduced", m, &ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (mt.v & ax) {
    sr_buf_puts(&b, "preduced is a Invariant->Reduced collective. This means that the axis names mentioned in "
                    "`axes` passed to `preduced` must not be present in `jax.typeof(inp).mat.varying`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(inp).mat.varying=");
    put_frozenset(&b, m, mt.v);
    return report(cx, "ValueError", &b);
  }
  if (mt.r & ax) {
    sr_buf_printf(&b, "preduced input cannot be reduced across the axis_name provided. Got x=%s and axis_name=",
                  sr_type_short(t));
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (mt.u && check_unreduced_kind(cx, "preduced", mt, SR_UK_SUM) < 0) return -1;
  mt.r |= ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

/* lax/parallel.py: _vary_unreduced_cast_abstract_eval -- varying becomes
   unreduced. */
static int vary_unreduced_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "vary_unreduced_cast", m, &ax) < 0) return -1;
  if (check_unreduced_args(cx, "vary_unreduced_cast", t, &an, ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.v) {
    sr_buf_printf(&b, "vary_unreduced_cast only accepts inputs that are varying. Got %s", sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.v & ax)) {
    sr_buf_puts(&b, "vary_unreduced_cast is a Varying->Unreduced collective. This means that the axis names "
                    "mentioned in `axes` passed to `vary_unreduced_cast` must be present in "
                    "`jax.typeof(x).mat.varying`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(x).mat.varying=");
    put_frozenset(&b, m, mt.v);
    return report(cx, "ValueError", &b);
  }
  if (mt.u & ax) {
    sr_buf_printf(&b, "vary_unreduced_cast input cannot be unreduced across the axis_name provided. Got x=%s and "
                      "axis_name=", sr_type_short(t));
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  /* ManualAxisType gives a new unreduced set the kind sum */
  if (!mt.u) mt.ukind = SR_UK_SUM;
  mt.u |= ax;
  mt.v &= ~ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

/* lax/parallel.py: _reduced_vary_cast_abstract_eval -- reduced becomes
   varying. */
static int reduced_vary_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axes", &an) < 0 || bind_names(cx, &an, "reduced_vary_cast", m, &ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.r) {
    sr_buf_printf(&b, "reduced_vary_cast only accepts inputs that are reduced. Got %s", sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.r & ax)) {
    sr_buf_puts(&b, "reduced_vary_cast is a Reduced->Varying collective. This means that the axis names "
                    "mentioned in `axes` passed to `reduced_vary_cast` must be present in "
                    "`jax.typeof(x).mat.reduced`. Got axes=");
    put_names_tuple(&b, &an);
    sr_buf_puts(&b, " and jax.typeof(x).mat.reduced=");
    put_frozenset(&b, m, mt.r);
    return report(cx, "ValueError", &b);
  }
  if (mt.v & ax) {
    sr_buf_printf(&b, "reduced_vary_cast input cannot be varying across the axis_name provided. Got x=%s and "
                      "axis_name=", sr_type_short(t));
    put_names_tuple(&b, &an);
    return report(cx, "ValueError", &b);
  }
  if (mt.u && check_unreduced_kind(cx, "reduced_vary_cast", mt, SR_UK_SUM) < 0) return -1;
  mt.r &= ~ax;
  mt.v |= ax;
  *out = with_mat(cx, t, m, mt);
  return 0;
}

static int type_pvary(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) { return each(cx, e, pvary_one, out); }

static int type_preduced(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, preduced_one, out);
}

static int type_vary_unreduced(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, vary_unreduced_one, out);
}

static int type_reduced_vary(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, reduced_vary_one, out);
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

PAIR(tr_pvary, SR_P_psum_invariant)
PAIR(tr_reduced_vary_cast, SR_P_vary_unreduced_cast)
PAIR(tr_vary_unreduced_cast, SR_P_reduced_vary_cast)
PAIR(tr_preduced, SR_P_unreduced_psum)

/* vmap: _pvary_batcher -- the cast on the batched value, its batch dim
   kept (for pvary, and the other casts alike). */
static int batch_cast(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  for (uint32_t i = 0; i < e->nin; i++) {
    SrVal *r = bind_axes(b, e, x[i], "axes", sr_ref((SrVal *)param_of(e, "axes")));
    if (!r) return -1;
    y[i] = r;
    ybd[i] = bd[i];
  }
  return 0;
}

/* ==== ppermute, pbroadcast ==== */

/* lax/parallel.py: _raise_to_shaped_abstract_eval -- ppermute and
   pbroadcast (both say "ppermute"): the type is unchanged. */
static int ppermute_one(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *t, const SrType **out) {
  Names an;
  SrAxes ax, v;
  const SrMesh *m = work_mesh(cx, t);
  if (read_names(cx, e, "axis_name", &an) < 0 || bind_names(cx, &an, "ppermute", m, &ax) < 0) return -1;
  if (collective_vma(cx, "ppermute", &an, ax, t, &v) < 0) return -1;
  if (check_unreduced_args(cx, "ppermute", t, &an, ax) < 0) return -1;
  *out = t;
  return 0;
}

static int type_ppermute(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  return each(cx, e, ppermute_one, out);
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
    int64_t size = ev_axes_size(a->mesh, axes, n);
    if (perm_unique(cx, perm, src, dst, np, size) < 0) rc = -1;
    /* _pcollectives_lowering_common with raise_on_ppermute_sort_diff (on
       by default): a group's members, listed as the axis names order them,
       must be in the mesh's order -- the names of the axes longer than 1
       in mesh order */
    for (int k = 1, last = -1; k <= n && rc == 0; k++) {
      int ax = axes[k - 1];
      if (a->mesh->sizes[ax] <= 1) continue;
      if (ax < last)
        rc = sr_ev_err(cx, "RuntimeError",
                       "Make sure that the axis_name passed to jax.lax.ppermute is in the same order as the "
                       "axis_names declared on the mesh. If you want to allow different order, you can disable the "
                       "check via `with jax.raise_on_ppermute_sort_diff(False):` context manager.");
      last = ax;
    }
    for (int k = 0; k < np && rc == 0; k++) {
      if (src[k] < 0 || src[k] >= size || dst[k] < 0 || dst[k] >= size)
        rc = sr_ev_err(cx, "ValueError", "ppermute: perm index out of range for axis size %lld", (long long)size);
      isrc[k] = (int)src[k];
      idst[k] = (int)dst[k];
    }
    SrBuffer **in = buffers(a);
    /* each device's buffer moves whole, so the result keeps the operand's
       layout (split over an Auto axis too: a sharding_constraint inside a
       partly manual shard_map) */
    SrArray *r = sr_array_new(e->out_type[i], a->layout, a->mesh);
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

TR(tr_ppermute) {
  (void)x;
  SrVal *perm = sr_eqn_param(e, sr_intern_cstr("perm"));
  if (!perm || !sr_is_seq(perm)) return sr_raise(ad->I, "TypeError", "ppermute: malformed perm"), -1;
  SrVal *inv = sr_seq(NULL, SR_V_TUPLE, perm->seq.n);
  for (int i = 0; i < perm->seq.n; i++) {
    SrVal *p = perm->seq.items[i];
    if (!sr_is_seq(p) || p->seq.n != 2) {
      sr_unref(inv);
      return sr_raise(ad->I, "TypeError", "ppermute: malformed perm"), -1;
    }
    SrVal *pair = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, pair, sr_ref(p->seq.items[1]));
    sr_seq_push(NULL, pair, sr_ref(p->seq.items[0]));
    sr_seq_push(NULL, inv, pair);
  }
  return coll_transpose(ad, e, ct, cx, SR_P_ppermute, NULL, NULL, "perm", inv, NULL);
}

static int comm_ppermute(const SrEqn *e, SrCommNote *out, int max) {
  (void)e;
  return sr_comm_note(out, max, 0, "collective-permute (explicit collective)", NULL, 0);
}

/* vmap: _ppermute_batcher.  Over other axes the batched value is
   permuted as it is; over vmap's axis alone, the examples are permuted
   along the batch dim: v.take(perm_indices, d), perm_indices[dst] = src. */
static int batch_ppermute(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  const SrVal *names = param_of(e, "axis_name"), *perm = param_of(e, "perm");
  SrInterp *I = b->ad.I;
  if (!names_name(names, b->axis_name)) return sr_batch_bind_same(b, e, x, bd[0], y, ybd);
  SrVal *rest = names_without(names, b->axis_name);
  if (rest->seq.n) {
    SrVal *r = bind_axes(b, e, x[0], "axis_name", rest);
    if (!r) return -1;
    y[0] = r;
    ybd[0] = bd[0];
    return 0;
  }
  sr_unref(rest);
  int64_t n = b->size;
  if (!perm || !sr_is_seq(perm) || perm->seq.n != n) {
    sr_raise(I, "AssertionError", "Permutation doesn't match the axis size!");
    return -1;
  }
  y[0] = x[0];
  ybd[0] = bd[0];
  if (bd[0] == SR_NOT_MAPPED) return 0;
  if (!sr_batch_take) return sr_raise(I, "RuntimeError", "internal error: no take for the ppermute batcher"), -1;
  int64_t *src = sr_xcalloc((size_t)n, sizeof *src);
  for (int k = 0; k < perm->seq.n; k++) {
    const SrVal *pr = perm->seq.items[k];
    if (sr_is_seq(pr) && pr->seq.n == 2 && pr->seq.items[1]->i >= 0 && pr->seq.items[1]->i < n)
      src[pr->seq.items[1]->i] = pr->seq.items[0]->i;
  }
  SrVal *r = sr_batch_take(I, x[0], src, (int)n, bd[0]);
  free(src);
  if (!r) return -1;
  y[0] = sr_ad_keep(&b->ad, r);
  return 0;
}

/* vmap: _pbroadcast_batcher.  Over other axes the batched value is
   broadcast as it is; over vmap's axis alone, every example becomes the
   source's (JAX's v.take([source] * axis_size, d): here its slice along
   the batch dim broadcast back to the axis size), an unmapped value is
   already every example's. */
static int batch_pbroadcast(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  const SrVal *names = param_of(e, "axis_name"), *sv = param_of(e, "source");
  SrInterp *I = b->ad.I;
  int d = bd[0];
  if (!names_name(names, b->axis_name)) return sr_batch_bind_same(b, e, x, d, y, ybd);
  SrVal *rest = names_without(names, b->axis_name);
  int nrest = rest->seq.n;
  sr_unref(rest);
  if (nrest) {
    sr_raise(I, "NotImplementedError", "pbroadcast batcher only supports a single axis");
    return -1;
  }
  int64_t src = sv && sv->kind == SR_V_INT ? sv->i : -1;
  if (src < 0 || src >= b->size) {
    sr_raise(I, "AssertionError", "collective broadcast doesn't fit in the axis size!");
    return -1;
  }
  y[0] = x[0];
  ybd[0] = d;
  if (d == SR_NOT_MAPPED) return 0;
  const SrType *t = sr_ad_type(&b->ad, x[0]);
  if (!t) return -1;
  int64_t lo[SR_MAX_RANK], hi[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) {
    lo[i] = 0;
    hi[i] = t->dims[i].size;
  }
  lo[d] = src;
  hi[d] = src + 1;
  SrVal *one = sr_ad_bindv(&b->ad, SR_P_slice, 1, &x[0], "start_indices", sr_ad_ints(lo, t->ndim), "limit_indices",
                           sr_ad_ints(hi, t->ndim), "strides", sr_none(), NULL);
  if (!one) return -1;
  int64_t dims[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) dims[i] = i;
  SrVal *r = sr_ad_broadcast_in_dim(&b->ad, one, t, dims, t->ndim, 0);
  if (!r) return -1;
  y[0] = r;
  return 0;
}

/* ==== all_gather, all_gather_invariant, all_gather_reduced ==== */

typedef struct Gather {
  Names an;
  SrAxes ax;
  const SrMesh *m;
  int64_t dim, size;
  int tiled;
} Gather;

static int read_gather(SrTypeCtx *cx, const SrRuleEqn *e, const char *api, const char *dim_key, const SrType *t,
                       Gather *g) {
  g->m = work_mesh(cx, t);
  g->tiled = 0;
  if (read_names(cx, e, "axis_name", &g->an) < 0 || bind_names(cx, &g->an, api, g->m, &g->ax) < 0) return -1;
  if (sr_rparam_bool(cx, e, "tiled", 0, &g->tiled) < 0) return -1;
  g->size = names_size(cx, &g->an);
  if (sr_rparam_int(cx, e, "axis_size", g->size < 0, &g->size) < 0) return -1;
  int scatter = strcmp(dim_key, "scatter_dimension") == 0;
  if (!scatter && !g->tiled && t->ndim >= SR_MAX_RANK)
    return sr_terr(cx, "ValueError", "%s: a result of rank %d is more than shardrepl handles", e->prim->name,
                   t->ndim + 1);
  return dim_param(cx, e, dim_key, t->ndim + (!scatter && !g->tiled), &g->dim);
}

/* The gathered shape: a tiled gather multiplies the dimension, an untiled
   one inserts a new dimension of the axis size. */
static void gather_shape(SrTypeBuilder *b, const Gather *g) {
  if (g->tiled) {
    b->dims[g->dim].size *= g->size;
    return;
  }
  memmove(&b->dims[g->dim + 1], &b->dims[g->dim], (size_t)(b->ndim - g->dim) * sizeof b->dims[0]);
  memset(&b->dims[g->dim], 0, sizeof b->dims[0]);
  b->dims[g->dim].size = g->size;
  b->ndim++;
}

/* lax/parallel.py: _all_gather_effectful_abstract_eval -- varying stays
   varying (with check_vma the operand must vary over the axes). */
static int type_all_gather(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "all_gather", "all_gather_dimension", t, &g) < 0) return -1;
  if (check_unreduced_args(cx, "all_gather", t, &g.an, g.ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  if (collective_vma(cx, "all_gather", &g.an, g.ax, t, &mt.v) < 0) return -1;
  SrTypeBuilder b;
  builder_with_mat(cx, &b, t, g.m, mt);
  gather_shape(&b, &g);
  out[0] = sr_type_get(&b);
  return 0;
}

/* lax/parallel.py: _all_gather_invariant_effectful_abstract_eval --
   varying over the axes becomes invarying. */
static int type_all_gather_invariant(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "all_gather_invariant", "all_gather_dimension", t, &g) < 0) return -1;
  if (check_unreduced_args(cx, "all_gather_invariant", t, &g.an, g.ax) < 0) return -1;
  Mat mt = mat_of(cx, t);
  mt.v &= ~g.ax;
  SrTypeBuilder b;
  builder_with_mat(cx, &b, t, g.m, mt);
  gather_shape(&b, &g);
  out[0] = sr_type_get(&b);
  return 0;
}

/* lax/parallel.py: _all_gather_reduced_effectful_abstract_eval -- varying
   over the axes becomes reduced. */
static int type_all_gather_reduced(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "all_gather_reduced", "all_gather_dimension", t, &g) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.v) {
    sr_buf_printf(&b, "all_gather_reduced only accepts inputs that are varying. Got %s", sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.v & g.ax)) {
    sr_buf_puts(&b, "all_gather_reduced is a Varying -> Reduced collective. This means that the axis_name=");
    put_names_tuple(&b, &g.an);
    sr_buf_puts(&b, " passed to `all_gather_reduced` must be present in jax.typeof(x).mat.varying=");
    put_frozenset(&b, g.m, mt.v);
    return report(cx, "ValueError", &b);
  }
  if (mt.r & g.ax) {
    sr_buf_printf(&b, "all_gather_reduced's input cannot be reduced across the axis_name provided. Got x=%s and "
                      "axis_name=", sr_type_short(t));
    put_names_tuple(&b, &g.an);
    return report(cx, "ValueError", &b);
  }
  if (mt.u && check_unreduced_kind(cx, "all_gather_reduced", mt, SR_UK_SUM) < 0) return -1;
  mt.r |= g.ax;
  mt.v &= ~g.ax;
  SrTypeBuilder tb;
  builder_with_mat(cx, &tb, t, g.m, mt);
  gather_shape(&tb, &g);
  out[0] = sr_type_get(&tb);
  return 0;
}

/* all_gather, all_gather_invariant, all_gather_reduced */
static int ev_all_gather(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *a = on_mesh(cx, e->in[0]);
  if (!a) return -1;
  int axes[SR_MAX_AXES], n = 0, rc = 0;
  int64_t dim = 0, tiled = 0;
  if (!a->mesh || named_axes(cx, e, a->mesh, axes, &n) < 0 || sr_ev_param_int(cx, e, "all_gather_dimension", &dim) < 0) {
    clear_sub(cx);
    sr_array_unref(a);
    return a->mesh ? -1 : sr_ev_err(cx, "ValueError", "%s outside shard_map", e->prim->name);
  }
  if (sr_ev_param(e, "tiled")) sr_ev_param_int(cx, e, "tiled", &tiled);
  size_t es = sr_elem_size(a->type->dtype);
  int64_t shape[SR_MAX_RANK], parts = group_size(cx, a->mesh, axes, n);
  sr_layout_shard_shape(a->layout, shape);
  SrBuffer **in = buffers(a), **got = sr_xcalloc((size_t)a->ndev + 1, sizeof *got);
  rc = sr_coll_all_gather(cx, in, a->mesh, a->type->dtype, sr_array_shard_bytes(a), axes, n, got);
  clear_sub(cx);
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

TR(tr_all_gather) {
  (void)x;
  return coll_transpose(ad, e, ct, cx, SR_P_reduce_scatter, "all_gather_dimension", "scatter_dimension", NULL, NULL,
                        NULL);
}

/* lax/parallel.py: _all_gather_invariant_transpose_rule -- each device
   takes its own slice of the (invarying) cotangent: dynamic_slice_in_dim
   at axis_index(axis_name) * slice_size, squeezed when untiled.  The
   index is lax.axis_index's over a tuple of names: the sum, minor name
   first, of axis_index(name) * the sizes of the names after it. */
TR(tr_all_gather_invariant) {
  (void)x;
  const SrVal *names = param_of(e, "axis_name"), *dv = param_of(e, "all_gather_dimension"),
              *sv = param_of(e, "axis_size"), *tv = param_of(e, "tiled");
  int64_t dim = dv && dv->kind == SR_V_INT ? dv->i : 0, size = sv && sv->kind == SR_V_INT ? sv->i : 1;
  int tiled = tv && sr_val_truthy(tv);
  SrVal *c = ct[0] ? ct[0] : sr_ad_full_zeros(ad, sr_ad_ct_type(e->out[0]->type));
  const SrType *t = sr_ad_type(ad, c);
  if (!t || size <= 0) return -1;
  int64_t slice = t->dims[dim].size / size;
  const SrMesh *m = sr_ad_ctx_mesh(ad);
  SrVal *idx = NULL;
  int64_t inner = 1;
  int nn = sr_is_seq(names) ? names->seq.n : 1;
  for (int i = nn - 1; i >= 0; i--) {
    SrVal *nm = sr_is_seq(names) ? names->seq.items[i] : (SrVal *)names;
    SrVal *ai = sr_ad_bindv(ad, SR_P_axis_index, 0, NULL, "axis_name", sr_ref(nm), NULL);
    SrVal *term = sr_ad_mul(ad, ai, sr_ad_scalar(ad, SR_I32, 1, (double)inner));
    idx = sr_ad_binop(ad, SR_P_add, idx ? idx : sr_ad_scalar(ad, SR_I32, 1, 0), term);
    int ax = m && (nm->kind == SR_V_STR || nm->kind == SR_V_WORD) ? sr_mesh_axis(m, sr_intern(nm->str.s, nm->str.n)) : -1;
    inner *= ax >= 0 ? m->sizes[ax] : 1;
  }
  SrVal *start = sr_ad_mul(ad, idx, sr_ad_scalar(ad, SR_I32, 1, (double)slice));
  if (!start) return -1;
  SrVal *starts[SR_MAX_RANK];
  int64_t sizes[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) {
    starts[i] = i == dim ? start : sr_ad_scalar(ad, sr_ad_type(ad, start)->dtype, 0, 0);
    sizes[i] = i == dim ? slice : t->dims[i].size;
  }
  SrVal *r = sr_ad_keep(ad, sr_op_dynamic_slice(SR_AD_BINDER(ad), c, starts, sizes));
  if (r && !tiled) r = sr_ad_keep(ad, sr_op_squeeze(SR_AD_BINDER(ad), r, &dim, 1));
  if (!r) return -1;
  cx[0] = r;
  return 0;
}

TR(tr_all_gather_reduced) {
  (void)x;
  return coll_transpose(ad, e, ct, cx, SR_P_unreduced_reduce_scatter, "all_gather_dimension", "scatter_dimension",
                        NULL, NULL, "axis_index_groups");
}

static int comm_all_gather(const SrEqn *e, SrCommNote *out, int max) {
  (void)e;
  return sr_comm_note(out, max, 0, "all-gather (explicit collective)", NULL, 0);
}

/* vmap: _all_gather_batched_collective.  Over other axes the gathered
   dim shifts past the batch dim (_all_gather_batcher); over vmap's axis
   the batch dim becomes the gathered one (an unmapped operand is
   broadcast), folded into its neighbour when tiled. */
static int batch_all_gather(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  const SrVal *names = param_of(e, "axis_name"), *dimv = param_of(e, "all_gather_dimension"),
              *tv = param_of(e, "tiled");
  int64_t agd = dimv && dimv->kind == SR_V_INT ? dimv->i : 0;
  int tiled = tv && sr_val_truthy(tv), d = bd[0];
  SrAd *ad = &b->ad;
  if (!names_name(names, b->axis_name)) {
    if (d == SR_NOT_MAPPED) return sr_batch_bind_same(b, e, x, d, y, ybd);
    if (d <= agd) agd++;
    else if (!tiled) d++;
    SrVal *r = bind_axes(b, e, x[0], "all_gather_dimension", sr_int(NULL, agd));
    if (!r) return -1;
    y[0] = r;
    ybd[0] = d;
    return 0;
  }
  SrVal *groups = (SrVal *)param_of(e, "axis_index_groups");
  if (groups && groups->kind != SR_V_NONE) {
    sr_raise(ad->I, "NotImplementedError", "axis_index_groups not supported in vmap");
    return -1;
  }
  if (sr_is_seq(names) && names->seq.n > 1) {
    sr_raise(ad->I, "NotImplementedError", "Please open a feature request!");
    return -1;
  }
  SrVal *r;
  if (d == SR_NOT_MAPPED) {
    const SrType *t = sr_ad_type(ad, x[0]);
    SrBatch at = *b;
    at.nspmd = 0;
    const SrType *bt = sr_batch_mapped_type(&at, t, (int)agd);
    int64_t dims[SR_MAX_RANK];
    for (int i = 0, k = 0; i < bt->ndim; i++)
      if (i != agd) dims[k++] = i;
    r = sr_ad_broadcast_in_dim(ad, x[0], bt, dims, t->ndim, 0);
  } else {
    r = sr_batch_moveaxis(b, x[0], d, (int)agd);
  }
  if (r && tiled) r = fold_axis(ad, r, (int)agd);
  if (!r) return -1;
  y[0] = r;
  ybd[0] = SR_NOT_MAPPED;
  return 0;
}

/* vmap: _all_gather_reduced_batched_collective (and
   _unreduced_reduce_scatter_batcher) raise, asking for an issue. */
static int batch_file_issue(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  (void)e, (void)x, (void)bd, (void)y, (void)ybd;
  sr_raise(b->ad.I, "NotImplementedError", "Please file an issue at https://github.com/jax-ml/jax/issues");
  return -1;
}

/* ==== reduce_scatter, unreduced_reduce_scatter ==== */

/* lax/parallel.py: _reduce_scatter_effectful_abstract_eval's shape */
static int scatter_shape(SrTypeCtx *cx, SrTypeBuilder *b, const Gather *g) {
  int64_t n = b->dims[g->dim].size;
  if (g->tiled) {
    if (g->size <= 0 || n % g->size != 0)
      return sr_terr(cx, "ValueError",
                     "tiled reduce_scatter operand scatter dimension size %lld must be divisible by shard_count %lld",
                     (long long)n, (long long)g->size);
    b->dims[g->dim].size = n / g->size;
    return 0;
  }
  if (n != g->size)
    return sr_terr(cx, "ValueError", "reduce_scatter operand scatter dimension size %lld must match shard count %lld",
                   (long long)n, (long long)g->size);
  memmove(&b->dims[g->dim], &b->dims[g->dim + 1], (size_t)(b->ndim - g->dim - 1) * sizeof b->dims[0]);
  b->ndim--;
  return 0;
}

/* lax/parallel.py: _reduce_scatter_effectful_abstract_eval -- varying
   stays varying (with check_vma the operand must vary over the axes). */
static int type_reduce_scatter(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "reduce_scatter", "scatter_dimension", t, &g) < 0) return -1;
  if (check_unreduced_args(cx, "reduce_scatter", t, &g.an, g.ax) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  if (scatter_shape(cx, &b, &g) < 0) return -1;
  Mat mt = mat_of(cx, t);
  if (collective_vma(cx, "reduce_scatter", &g.an, g.ax, t, &mt.v) < 0) return -1;
  const SrType *shaped = sr_type_get(&b);
  out[0] = with_mat(cx, shaped, g.m, mt);
  return 0;
}

/* lax/parallel.py: _unreduced_reduce_scatter_effectful_abstract_eval --
   unreduced over the axes becomes varying. */
static int type_unreduced_reduce_scatter(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  Gather g;
  if (read_gather(cx, e, "reduce_scatter", "scatter_dimension", t, &g) < 0) return -1;
  Mat mt = mat_of(cx, t);
  SrBuf b = SR_BUF_INIT;
  if (!mt.u) {
    sr_buf_printf(&b, "unreduced_psum_scatter only accepts inputs that are unreduced. Got %s", sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  if (!(mt.u & g.ax)) {
    sr_buf_puts(&b, "unreduced_psum_scatter is a Unreduced -> Varying collective. This means that the axis_name=");
    put_names_tuple(&b, &g.an);
    sr_buf_puts(&b, " passed to `unreduced_psum_scatter` must be present in jax.typeof(x).mat.unreduced=");
    put_frozenset(&b, g.m, mt.u);
    return report(cx, "ValueError", &b);
  }
  if (mt.v & g.ax) {
    sr_buf_printf(&b, "unreduced_psum_scatter's input cannot be varying across the axis_name provided. Got x=%s and "
                      "axis_name=", sr_type_short(t));
    put_names_tuple(&b, &g.an);
    return report(cx, "ValueError", &b);
  }
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  if (scatter_shape(cx, &tb, &g) < 0) return -1;
  if (check_unreduced_kind(cx, "unreduced_psum_scatter", mt, SR_UK_SUM) < 0) return -1;
  mt.u &= ~g.ax;
  mt.v |= g.ax;
  mt.ukind = mt.u ? SR_UK_SUM : SR_UK_NONE;
  out[0] = with_mat(cx, sr_type_get(&tb), g.m, mt);
  return 0;
}

/* reduce_scatter, unreduced_reduce_scatter */
static int ev_reduce_scatter(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *a = on_mesh(cx, e->in[0]);
  if (!a) return -1;
  int axes[SR_MAX_AXES], n = 0;
  int64_t dim = 0, tiled = 0;
  if (!a->mesh || named_axes(cx, e, a->mesh, axes, &n) < 0 || sr_ev_param_int(cx, e, "scatter_dimension", &dim) < 0) {
    clear_sub(cx);
    sr_array_unref(a);
    return a->mesh ? -1 : sr_ev_err(cx, "ValueError", "%s outside shard_map", e->prim->name);
  }
  if (sr_ev_param(e, "tiled")) sr_ev_param_int(cx, e, "tiled", &tiled);
  size_t es = sr_elem_size(a->type->dtype);
  int64_t parts = group_size(cx, a->mesh, axes, n);
  SrBuffer **in = pack(a, es, (int)dim, parts, (int)tiled);
  SrArray *r = sr_array_new(e->out_type[0], sr_layout_of_type(e->out_type[0]), a->mesh);
  size_t count = (size_t)sr_layout_shard_numel(a->layout) / (size_t)parts;
  int rc = sr_coll_reduce_scatter(cx, in, a->mesh, a->type->dtype, count, axes, n, SR_RED_SUM, r->shard);
  clear_sub(cx);
  free_buffers(in, a->ndev);
  sr_array_unref(a);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  e->out[0] = r;
  return 0;
}

TR(tr_reduce_scatter) {
  (void)x;
  return coll_transpose(ad, e, ct, cx, SR_P_all_gather, "scatter_dimension", "all_gather_dimension", NULL, NULL,
                        NULL);
}

TR(tr_unreduced_reduce_scatter) {
  (void)x;
  return coll_transpose(ad, e, ct, cx, SR_P_all_gather_reduced, "scatter_dimension", "all_gather_dimension", NULL,
                        NULL, "axis_index_groups");
}

static int comm_reduce_scatter(const SrEqn *e, SrCommNote *out, int max) {
  (void)e;
  return sr_comm_note(out, max, 0, "reduce-scatter (explicit collective)", NULL, 0);
}

/* vmap: _reduce_scatter_collective.  Over other axes the scatter dim
   shifts past the batch dim (_reduce_scatter_batcher); over vmap's axis
   the batch dim is summed away and the scatter dim becomes the batch dim
   (an unmapped operand is multiplied by the axis size), split in two when
   tiled (_splitaxis). */
static int batch_reduce_scatter(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  const SrVal *names = param_of(e, "axis_name"), *sv = param_of(e, "scatter_dimension"), *tv = param_of(e, "tiled");
  int64_t sd = sv && sv->kind == SR_V_INT ? sv->i : 0;
  int tiled = tv && sr_val_truthy(tv), d = bd[0];
  SrAd *ad = &b->ad;
  if (!names_name(names, b->axis_name)) {
    if (d == SR_NOT_MAPPED) return sr_batch_bind_same(b, e, x, d, y, ybd);
    /* an untiled scatter drops its dim, so a batch dim after it moves
       down one (JAX's batcher has d += 1 there, from all_gather's, whose
       untiled dim is inserted instead) */
    if (d <= sd) sd++;
    else if (!tiled) d--;
    SrVal *r = bind_axes(b, e, x[0], "scatter_dimension", sr_int(NULL, sd));
    if (!r) return -1;
    y[0] = r;
    ybd[0] = d;
    return 0;
  }
  SrVal *groups = (SrVal *)param_of(e, "axis_index_groups");
  if (groups && groups->kind != SR_V_NONE) {
    sr_raise(ad->I, "NotImplementedError", "axis_index_groups not supported in vmap");
    return -1;
  }
  if (sr_is_seq(names) && names->seq.n > 1) {
    sr_raise(ad->I, "NotImplementedError", "Please open a feature request!");
    return -1;
  }
  SrVal *r;
  if (d == SR_NOT_MAPPED) {
    r = sr_ad_mul(ad, x[0], sr_ad_const(ad, x[0], (double)b->size));
  } else {
    int64_t ax = d;
    r = sr_ad_reduce_sum(ad, x[0], &ax, 1, NULL);
  }
  if (r && tiled) r = split_axis(ad, r, (int)sd, b->size);
  if (!r) return -1;
  y[0] = r;
  ybd[0] = (int)sd;
  return 0;
}

/* ==== all_to_all ==== */

/* lax/parallel.py: _all_to_all_effectful_abstract_eval -- splits one
   dimension across the axes and concatenates along another. */
static int type_all_to_all(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 1, 1) < 0) return -1;
  const SrType *t = e->in[0];
  const SrMesh *m = work_mesh(cx, t);
  Names an;
  SrAxes ax;
  int64_t split, concat;
  if (read_names(cx, e, "axis_name", &an) < 0 || bind_names(cx, &an, "all_to_all", m, &ax) < 0) return -1;
  if (check_unreduced_args(cx, "all_to_all", t, &an, ax) < 0) return -1;
  if (dim_param(cx, e, "split_axis", t->ndim, &split) < 0 || dim_param(cx, e, "concat_axis", t->ndim, &concat) < 0)
    return -1;
  int64_t size = names_size(cx, &an);
  SrVal *groups = sr_rparam(e, "axis_index_groups");
  if (groups && sr_is_seq(groups) && groups->seq.n && sr_is_seq(groups->seq.items[0]))
    size = groups->seq.items[0]->seq.n;
  if (size <= 0) return sr_terr(cx, "ValueError", "all_to_all: the sizes of the mesh axes it names are not known");
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  if (b.dims[split].size % size != 0)
    /* JAX asserts this; the message is the assert's tuple */
    return sr_terr(cx, "AssertionError", "(%lld, %lld)", (long long)b.dims[split].size, (long long)size);
  b.dims[split].size /= size;
  b.dims[concat].size *= size;
  b.weak = 0;
  const SrType *shaped = sr_type_get(&b);
  Mat mt = mat_of(cx, t);
  if (collective_vma(cx, "all_to_all", &an, ax, t, &mt.v) < 0) return -1;
  out[0] = with_mat(cx, shaped, m, mt);
  return 0;
}

static int ev_all_to_all(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *a = on_mesh(cx, e->in[0]);
  if (!a) return -1;
  int axes[SR_MAX_AXES], n = 0;
  int64_t split, concat;
  if (!a->mesh || named_axes(cx, e, a->mesh, axes, &n) < 0 || sr_ev_param_int(cx, e, "split_axis", &split) < 0 ||
      sr_ev_param_int(cx, e, "concat_axis", &concat) < 0) {
    clear_sub(cx);
    sr_array_unref(a);
    return a->mesh ? -1 : sr_ev_err(cx, "ValueError", "all_to_all outside shard_map");
  }
  size_t es = sr_elem_size(a->type->dtype);
  int64_t parts = group_size(cx, a->mesh, axes, n), shape[SR_MAX_RANK];
  sr_layout_shard_shape(a->layout, shape);
  SrBuffer **in = pack(a, es, (int)split, parts, 1), **got = sr_xcalloc((size_t)a->ndev + 1, sizeof *got);
  int rc = sr_coll_all_to_all(cx, in, a->mesh, a->type->dtype, sr_array_shard_bytes(a) / (size_t)parts, axes, n, got);
  clear_sub(cx);
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

TR(tr_all_to_all) {
  (void)x;
  SrVal *sa = sr_eqn_param(e, sr_intern_cstr("split_axis")), *ca = sr_eqn_param(e, sr_intern_cstr("concat_axis"));
  if (!sa || !ca) return sr_raise(ad->I, "TypeError", "all_to_all: missing split_axis or concat_axis"), -1;
  SrPList ps = {0};
  for (uint32_t i = 0; i < e->nparams; i++) {
    const char *k = e->params[i].key;
    SrVal *v = e->params[i].val;
    if (strcmp(k, "split_axis") == 0) v = ca;
    else if (strcmp(k, "concat_axis") == 0) v = sa;
    sr_plist_add(&ps, k, sr_ref(v));
  }
  SrVal *c = ct[0];
  cx[0] = sr_ad_bind(ad, SR_P_all_to_all, 1, &c, ps.n, ps.p);
  sr_plist_free(&ps);
  return cx[0] ? 0 : -1;
}

static int comm_all_to_all(const SrEqn *e, SrCommNote *out, int max) {
  (void)e;
  return sr_comm_note(out, max, 0, "all-to-all (explicit collective)", NULL, 0);
}

/* vmap: _all_to_all_batched_collective.  Over other axes the split and
   concat dims shift past the batch dim (_all_to_all_batcher); over vmap's
   axis alone the batch dim is split into the concat dim's chunks and the
   split dim's chunks become the batch dim (an unmapped operand is
   broadcast first). */
static int batch_all_to_all(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  const SrVal *names = param_of(e, "axis_name"), *sv = param_of(e, "split_axis"), *cv = param_of(e, "concat_axis");
  SrVal *groups = (SrVal *)param_of(e, "axis_index_groups");
  SrAd *ad = &b->ad;
  int split = sv && sv->kind == SR_V_INT ? (int)sv->i : 0, concat = cv && cv->kind == SR_V_INT ? (int)cv->i : 0;
  int d = bd[0];
  if (groups && groups->kind != SR_V_NONE) {
    sr_raise(ad->I, "NotImplementedError", "Please open a feature request!");
    return -1;
  }
  if (!names_name(names, b->axis_name)) {
    if (d == SR_NOT_MAPPED) return sr_batch_bind_same(b, e, x, d, y, ybd);
    SrPList ps = {0};
    for (uint32_t i = 0; i < e->nparams; i++) {
      const char *k = e->params[i].key;
      SrVal *v = strcmp(k, "split_axis") == 0    ? sr_int(NULL, split + (d <= split))
                 : strcmp(k, "concat_axis") == 0 ? sr_int(NULL, concat + (d <= concat))
                                                 : sr_ref(e->params[i].val);
      sr_plist_add(&ps, k, v);
    }
    SrVal *r = sr_ad_bind(ad, e->prim->id, 1, x, ps.n, ps.p);
    sr_plist_free(&ps);
    if (!r) return -1;
    y[0] = r;
    ybd[0] = d;
    return 0;
  }
  SrVal *v = x[0];
  if (d == SR_NOT_MAPPED) {
    v = sr_batch_matchaxis(b, v, d, 0);
    d = 0;
  }
  SrVal *r;
  if (sr_is_seq(names) && names->seq.n > 1) {
    /* the names before vmap's (major) and after it (minor): chunks
       accumulate in three leading dims [Major, Current, Minor, ...] */
    int pos = 0;
    while (pos < names->seq.n && !name_is(names->seq.items[pos], b->axis_name)) pos++;
    SrVal *major = sr_seq(NULL, SR_V_TUPLE, 0), *minor = sr_seq(NULL, SR_V_TUPLE, 0);
    for (int k = 0; k < names->seq.n; k++)
      if (k != pos) sr_seq_push(NULL, k < pos ? major : minor, sr_ref(names->seq.items[k]));
    int64_t lead[2] = {0, 2};
    v = sr_batch_moveaxis(b, v, d, 0);
    v = v ? sr_ad_expand_dims(ad, v, lead, 2) : NULL;
    split += 3;
    concat += 3;
    if (v && major->seq.n) {
      SrVal *mv = v;
      v = sr_ad_bindv(ad, SR_P_all_to_all, 1, &mv, "axis_name", sr_ref(major), "split_axis", sr_int(NULL, split),
                      "concat_axis", sr_int(NULL, 0), "axis_index_groups", sr_none(), "tiled",
                      sr_ref((SrVal *)(param_of(e, "tiled") ? param_of(e, "tiled") : sr_bool(0))), NULL);
    }
    v = split_axis(ad, v, split, b->size);
    int new_d = split;
    concat += split <= concat;
    split += 1;
    if (v && minor->seq.n) {
      SrVal *mv = v;
      v = sr_ad_bindv(ad, SR_P_all_to_all, 1, &mv, "axis_name", sr_ref(minor), "split_axis", sr_int(NULL, split),
                      "concat_axis", sr_int(NULL, 2), "axis_index_groups", sr_none(), "tiled",
                      sr_ref((SrVal *)(param_of(e, "tiled") ? param_of(e, "tiled") : sr_bool(0))), NULL);
    }
    sr_unref(major);
    sr_unref(minor);
    v = fold_axis(ad, fold_axis(ad, v, 0), 0);
    split -= 2;
    concat -= 2;
    new_d -= 2;
    r = v ? fold_axis(ad, sr_batch_moveaxis(b, v, 0, concat - 1), concat - 1) : NULL;
    if (!r) return -1;
    y[0] = r;
    ybd[0] = new_d - 1;
    return 0;
  }
  if (split == concat) {
    int axis = split + (d <= split), pre = d;
    v = split_axis(ad, v, axis, b->size);
    d += axis <= d;
    const SrType *t = v ? sr_ad_type(ad, v) : NULL;
    if (!t) return -1;
    int64_t perm[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) perm[i] = i;
    perm[d] = axis;
    perm[axis] = d;
    r = fold_axis(ad, sr_ad_transpose_dims(ad, v, perm, t->ndim), axis);
    ybd[0] = pre;
  } else {
    r = split_axis(ad, fold_axis(ad, sr_batch_moveaxis(b, v, d, concat), concat), split, b->size);
    ybd[0] = split;
  }
  if (!r) return -1;
  y[0] = r;
  return 0;
}

/* ==== axis_index ==== */

/* lax/parallel.py: _axis_index_effectful_abstract_eval -- an int32 scalar
   that, with check_vma, varies over the axes. */
static int type_axis_index(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (arity_is(cx, e, 0, 1) < 0) return -1;
  const SrMesh *m = work_mesh(cx, NULL);
  Names an;
  SrAxes ax;
  if (read_names(cx, e, "axis_name", &an) < 0 || bind_names(cx, &an, "axis_index", m, &ax) < 0) return -1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = SR_I32;
  b.mesh = m;
  if (cx->check_vma && manual_in(cx, m)) b.varying = ax;
  out[0] = sr_type_get(&b);
  return 0;
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

/* vmap: _axis_index_batcher -- over vmap's axis, iota of its size along
   the batch dim. */
static int batch_axis_index(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  (void)bd;
  if (!names_name(param_of(e, "axis_name"), b->axis_name)) return sr_batch_bind_same(b, e, x, SR_NOT_MAPPED, y, ybd);
  int64_t n = b->size;
  y[0] = sr_ad_bindv(&b->ad, SR_P_iota, 0, NULL, "dtype", sr_dtype_val(NULL, SR_I32), "shape", sr_ad_ints(&n, 1),
                     "dimension", sr_int(NULL, 0), "sharding", sr_none(), NULL);
  ybd[0] = 0;
  return y[0] ? 0 : -1;
}

/* ==== shard_map ==== */

/* One PartitionSpec of in_specs or out_specs, as axes of the shard_map's
   mesh. */
typedef struct MSpec {
  const SrVal *val; /* the P, for messages */
  int n;            /* its number of partitions */
  uint8_t nax[SR_MAX_RANK];
  uint8_t ax[SR_MAX_RANK][SR_MAX_DIM_AXES];
  SrAxes parts, u, r; /* _spec_to_vma(spec), unreduced, reduced */
  int ukind;
} MSpec;

typedef struct SMap {
  const SrMesh *mesh;  /* the mesh param, with its axis types */
  const SrMesh *shape; /* its shape: the axes below index it */
  const SrMesh *inner; /* the body's context: the newly manual axes Manual */
  SrAxes all, newly, prev; /* every axis; newly manual; Manual already */
  int check_vma;
  const char *fname;   /* the mapped function's name, for messages */
  uint32_t nin, nout;
  MSpec *in, *out;
} SMap;

/* keystr of entry i of a flat list of n: "" for a lone one, else "[i]" */
static void put_key(SrBuf *b, uint32_t i, uint32_t n) {
  if (n != 1) sr_buf_printf(b, "[%u]", i);
}

static void put_spec(SrBuf *b, const MSpec *s) { sr_val_repr(b, s->val); }

/* tuple(mesh.shape.values()) and mesh.axis_names */
static void put_mesh_shape(SrBuf *b, const SrMesh *m) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < m->n; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)m->sizes[i]);
  sr_buf_puts(b, m->n == 1 ? ",)" : ")");
}

static void put_mesh_line(SrBuf *b, const SMap *sm) {
  sr_buf_puts(b, "The mesh given has shape ");
  put_mesh_shape(b, sm->mesh);
  sr_buf_puts(b, " with corresponding axis names ");
  sr_axes_tuple_str(b, sm->shape, sm->all);
  sr_buf_puts(b, ".\n\n");
}

static int64_t axes_size(const SrMesh *m, const uint8_t *ax, int n) {
  int64_t s = 1;
  for (int k = 0; k < n; k++) s *= m->sizes[ax[k]];
  return s;
}

static int spec_name(SrTypeCtx *cx, const SMap *sm, const char *prefix, const char *name, SrAxes *bit) {
  int a = sr_mesh_axis(sm->shape, name);
  if (a < 0)
    return sr_terr(cx, "ValueError", "%s_specs name the axis '%s', which the shard_map's mesh does not have", prefix,
                   name);
  *bit = 1u << a;
  return 0;
}

/* shard_map.py: _check_specs and _check_unreduced, for in_specs or
   out_specs (n of them). */
static int read_specs(SrTypeCtx *cx, const SrRuleEqn *e, const SMap *sm, const char *key, const char *prefix,
                      uint32_t n, MSpec *specs) {
  SrVal *v = sr_rparam(e, key);
  if (!v) return sr_terr(cx, "TypeError", "shard_map equation has no '%s' param", key);
  if (!sr_is_seq(v) || (uint32_t)v->seq.n != n)
    return sr_terr(cx, "TypeError", "shard_map has %u %sputs but %s has %d entries", n, prefix, key,
                   sr_is_seq(v) ? v->seq.n : 1);
  SrBuf b = SR_BUF_INIT;
  int bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    const SrVal *x = v->seq.items[i];
    if (x->kind == SR_V_SPEC) continue;
    if (!bad++)
      sr_buf_printf(&b, "shard_map %s_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, but:\n\n",
                    prefix);
    else
      sr_buf_puts(&b, "\n\n");
    sr_buf_printf(&b, "  %s_specs", prefix);
    put_key(&b, i, n);
    sr_buf_puts(&b, " is ");
    sr_val_str(&b, x);
    sr_buf_printf(&b, " of type %s, ", sr_val_kind_name(x));
  }
  if (bad) {
    sr_buf_printf(&b, "\n\nCheck the %s_specs values passed to shard_map.", prefix);
    return report(cx, "TypeError", &b);
  }
  SrAxes manual = sm->newly | sm->prev;
  for (uint32_t i = 0; i < n; i++) {
    const SrSpec *s = v->seq.items[i]->spec;
    for (int d = 0; d < s->n; d++)
      for (int k = 0; k < s->e[d].n; k++) {
        const char *nm = s->e[d].names[k];
        int a = nm == SR_SPEC_UNCONSTRAINED ? -2 : sr_mesh_axis(sm->shape, nm);
        if (a == -2 || (a >= 0 && (manual & (1u << a)))) continue;
        sr_buf_puts(&b, bad++ ? "\n\n" : "");
        sr_buf_printf(&b, "  %s_specs", prefix);
        put_key(&b, i, n);
        sr_buf_puts(&b, " refers to ");
        put_name(&b, nm);
      }
  }
  if (bad) {
    SrBuf m = SR_BUF_INIT;
    sr_buf_printf(&m, "shard_map %s_specs argument must refer to an axis marked as manual (", prefix);
    put_frozenset(&m, sm->shape, manual);
    sr_buf_printf(&m, "), but:\n\n%s\n\nCheck the %s_specs values passed to shard_map.", sr_buf_str(&b), prefix);
    sr_buf_free(&b);
    return report(cx, "ValueError", &m);
  }
  sr_buf_free(&b);
  for (uint32_t i = 0; i < n; i++) {
    const SrSpec *s = v->seq.items[i]->spec;
    MSpec *ms = &specs[i];
    memset(ms, 0, sizeof *ms);
    ms->val = v->seq.items[i];
    if (s->n > SR_MAX_RANK) return sr_terr(cx, "ValueError", "%s_specs entry has too many dimensions", prefix);
    ms->n = s->n;
    for (int d = 0; d < s->n; d++)
      for (int k = 0; k < s->e[d].n; k++) {
        int a = sr_mesh_axis(sm->shape, s->e[d].names[k]);
        if (a < 0) continue; /* UNCONSTRAINED */
        if (ms->nax[d] == SR_MAX_DIM_AXES) return sr_terr(cx, "ValueError", "too many mesh axes on one dimension");
        ms->ax[d][ms->nax[d]++] = (uint8_t)a;
        ms->parts |= 1u << a;
      }
    SrAxes bit = 0;
    for (int k = 0; k < s->nunreduced; k++) {
      if (spec_name(cx, sm, prefix, s->unreduced[k], &bit) < 0) return -1;
      ms->u |= bit;
    }
    for (int k = 0; k < s->nreduced; k++) {
      if (spec_name(cx, sm, prefix, s->reduced[k], &bit) < 0) return -1;
      ms->r |= bit;
    }
    ms->ukind = ms->u ? (s->ukind ? s->ukind : SR_UK_SUM) : SR_UK_NONE;
    /* _check_unreduced */
    if (!ms->u && !ms->r) continue;
    SrAxes explicit = 0;
    for (int a = 0; a < sm->mesh->n; a++)
      if (sm->mesh->types[a] == SR_AXIS_EXPLICIT) explicit |= 1u << a;
    SrBuf m = SR_BUF_INIT;
    if ((sm->newly | sm->prev) != sm->all) {
      sr_buf_printf(&m, "unreduced/reduced can only be passed to %s_specs when shard_map is in full manual mode. Got "
                        "mesh axis names ", prefix);
      sr_axes_tuple_str(&m, sm->shape, sm->all);
      sr_buf_puts(&m, ", manual_axes: ");
      put_frozenset(&m, sm->shape, sm->newly | sm->prev);
      sr_buf_puts(&m, ", specs: ");
      put_spec(&m, ms);
      sr_buf_puts(&m, ". Please file a bug at https://github.com/jax-ml/jax/issues.");
      return report(cx, "NotImplementedError", &m);
    }
    for (int pass = 0; pass < 2; pass++) {
      if (!((pass ? ms->r : ms->u) & ~explicit)) continue;
      sr_buf_printf(&m, "%s in %s_specs ", pass ? "reduced" : "unreduced", prefix);
      put_spec(&m, ms);
      sr_buf_puts(&m, " can only be used when the mesh passed to shard_map contains axis names all of type "
                      "`Explicit`. Got mesh ");
      sr_mesh_str(&m, sm->mesh);
      return report(cx, "ValueError", &m);
    }
  }
  return 0;
}

/* shard_map.py: _spec_rank_error -- specs longer than the rank of the
   values they describe (types[i] on the inputs' or outputs' side). */
static int rank_check(SrTypeCtx *cx, const SMap *sm, int is_out, const SrType *const *types) {
  const char *prefix = is_out ? "out" : "in";
  uint32_t n = is_out ? sm->nout : sm->nin;
  const MSpec *specs = is_out ? sm->out : sm->in;
  SrBuf msgs = SR_BUF_INIT;
  int k = 0, scalar = 0;
  for (uint32_t i = 0; i < n; i++) {
    const SrType *t = types[i];
    if (!t || !specs[i].n || specs[i].n <= t->ndim) continue;
    if (k++) sr_buf_puts(&msgs, "\n\n");
    sr_buf_printf(&msgs, "* %s_specs", prefix);
    put_key(&msgs, i, n);
    sr_buf_puts(&msgs, " is ");
    put_spec(&msgs, &specs[i]);
    sr_buf_printf(&msgs, " which has length %d, but ", specs[i].n);
    if (is_out) {
      sr_buf_printf(&msgs, "%s(*args)", sm->fname);
      put_key(&msgs, i, n);
    } else {
      sr_buf_printf(&msgs, "the passed args[%u]", i);
    }
    sr_buf_puts(&msgs, " has shape ");
    sr_type_str(&msgs, t, 0);
    sr_buf_printf(&msgs, ", which has rank %d (and %d < %d)", t->ndim, t->ndim, specs[i].n);
    if (!t->ndim) scalar = 1;
  }
  if (!k) {
    sr_buf_free(&msgs);
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "shard_map applied to the function '%s' was given an %s_specs entry which is too long to be "
                    "compatible with the corresponding %sput value from the function:\n\n%s\n\n",
                sm->fname, prefix, prefix, sr_buf_str(&msgs) + (k == 1 ? 2 : 0));
  sr_buf_printf(&b, "Entries in %s_specs must be of length no greater than the number of axes in the corresponding "
                    "%sput value.\n\nEither revise the spec to be shorter, or modify '%s' so that its %sputs have "
                    "sufficient rank.",
                prefix, prefix, sm->fname, prefix);
  if (scalar)
    sr_buf_printf(&b, "\n\nFor scalar values (rank 0), consider using an %s_specs entry of `P()`, where "
                      "`P = jax.sharding.PartitionSpec`.", prefix);
  if (scalar && is_out)
    sr_buf_puts(&b, " In particular, for rank 0 outputs which are not constant over the mesh, add at least one "
                    "(singleton) axis to them so that they can be concatenated using out_specs.");
  sr_buf_free(&msgs);
  return report(cx, "ValueError", &b);
}

/* shard_map.py: _spec_divisibility_error -- each input dimension must
   divide by the sizes of the axes its spec splits it over. */
static int divisibility_check(SrTypeCtx *cx, const SMap *sm, const SrType *const *types) {
  SrBuf msgs = SR_BUF_INIT;
  int k = 0;
  for (uint32_t i = 0; i < sm->nin; i++) {
    const MSpec *s = &sm->in[i];
    const SrType *t = types[i];
    for (int d = 0; d < s->n && d < t->ndim; d++) {
      if (!s->nax[d] || t->dims[d].size < 0) continue;
      int64_t sz = axes_size(sm->mesh, s->ax[d], s->nax[d]);
      if (sz <= 0 || t->dims[d].size % sz == 0) continue;
      if (k++) sr_buf_puts(&msgs, "\n\n");
      sr_buf_printf(&msgs, "* the passed args[%u] of shape ", i);
      sr_type_str(&msgs, t, 0);
      sr_buf_puts(&msgs, " corresponds to in_specs");
      put_key(&msgs, i, sm->nin);
      sr_buf_puts(&msgs, " of value ");
      put_spec(&msgs, s);
      sr_buf_printf(&msgs, ", which maps array axis %d (of size %lld) to mesh ", d, (long long)t->dims[d].size);
      if (s->nax[d] > 1) {
        sr_buf_puts(&msgs, "axes (");
        for (int a = 0; a < s->nax[d]; a++) {
          if (a) sr_buf_puts(&msgs, ", ");
          put_name(&msgs, sm->shape->names[s->ax[d][a]]);
        }
        sr_buf_puts(&msgs, ")");
      } else {
        sr_buf_printf(&msgs, "axis '%s'", sm->shape->names[s->ax[d][0]]);
      }
      sr_buf_printf(&msgs, " (of %ssize %lld), but %lld does not evenly divide %lld", s->nax[d] > 1 ? "total " : "",
                    (long long)sz, (long long)sz, (long long)t->dims[d].size);
    }
  }
  if (!k) {
    sr_buf_free(&msgs);
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "shard_map applied to the function '%s' was given argument arrays with axis sizes that are not "
                    "evenly divisible by the corresponding mesh axis sizes:\n\n", sm->fname);
  put_mesh_line(&b, sm);
  sr_buf_printf(&b, "%s\n\nArray arguments' axis sizes must be evenly divisible by the mesh axis or axes indicated by "
                    "the corresponding elements of the argument's in_specs entry. Consider checking that in_specs "
                    "are correct, and if so consider changing the mesh axis sizes or else padding the input and "
                    "adapting '%s' appropriately.",
                sr_buf_str(&msgs) + (k == 1 ? 2 : 0), sm->fname);
  sr_buf_free(&msgs);
  return report(cx, "ValueError", &b);
}

int sr_lax_shard_map_divisible(SrTypeCtx *cx, const SrMesh *mesh, const char *fname, uint32_t nin,
                               const SrType *const *types, SrVal *const *specs) {
  SMap sm;
  memset(&sm, 0, sizeof sm);
  sm.mesh = mesh;
  sm.shape = sr_mesh_shape(mesh);
  sm.all = (SrAxes)((1ull << mesh->n) - 1);
  sm.fname = fname;
  sm.nin = nin;
  sm.in = sr_xcalloc(nin + 1, sizeof *sm.in);
  for (uint32_t i = 0; i < nin; i++) {
    MSpec *ms = &sm.in[i];
    ms->val = specs[i];
    if (specs[i]->kind != SR_V_SPEC) continue; /* None: a static argument */
    const SrSpec *sp = specs[i]->spec;
    ms->n = sp->n < SR_MAX_RANK ? sp->n : SR_MAX_RANK;
    for (int d = 0; d < ms->n; d++)
      for (int k = 0; k < sp->e[d].n && ms->nax[d] < SR_MAX_DIM_AXES; k++) {
        int a = sp->e[d].names[k] == SR_SPEC_UNCONSTRAINED ? -1 : sr_mesh_axis(sm.shape, sp->e[d].names[k]);
        if (a >= 0) ms->ax[d][ms->nax[d]++] = (uint8_t)a;
      }
  }
  int rc = divisibility_check(cx, &sm, types);
  free(sm.in);
  return rc;
}

/* shard_map.py: _shard_shaped_array -- an argument's type inside the body:
   each dimension divided by the sizes of the axes its spec names, the
   newly manual axes gone from the sharding, varying over the spec's axes
   (with check_vma), and the argument's unreduced/reduced moved into the
   manual sets. */
static int shard_aval(SrTypeCtx *cx, const SMap *sm, uint32_t i, const SrType *t, const SrType **out) {
  const MSpec *s = &sm->in[i];
  const SrMesh *tm = t->mesh;
  /* outside, the axes of the mesh param that are Manual already (JAX
     requires the context mesh to be the mesh param) */
  SrAxes outer_man = rebase(sm->prev, sm->shape, tm);
  SrAxes au = rebase(t->unreduced & ~outer_man, tm, sm->shape);
  SrAxes ar = rebase(t->reduced & ~outer_man, tm, sm->shape);
  int akind = au ? t->ukind : SR_UK_NONE;
  SrBuf b = SR_BUF_INIT;
  const char *what = s->u != au ? "unreduced" : s->ukind != akind ? "unreduced_kind" : s->r != ar ? "reduced" : NULL;
  if (what) {
    sr_buf_printf(&b, "in_specs containing %s ", what);
    put_spec(&b, s);
    sr_buf_printf(&b, " passed to shard_map should be equal to the %s present on the in_aval %s", what,
                  sr_type_short(t));
    return report(cx, "ValueError", &b);
  }
  SrAxes inner_explicit = 0;
  for (int a = 0; a < sm->inner->n; a++)
    if (sm->inner->types[a] == SR_AXIS_EXPLICIT) inner_explicit |= 1u << a;
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  tb.mesh = sm->shape;
  for (int d = 0; d < t->ndim; d++) {
    SrDim *dim = &tb.dims[d];
    dim->nax = 0;
    for (int k = 0; k < t->dims[d].nax; k++) {
      int a = sr_mesh_axis(sm->shape, tm->names[t->dims[d].ax[k]]);
      if (a >= 0 && (inner_explicit & (1u << a))) dim->ax[dim->nax++] = (uint8_t)a;
    }
    if (d < s->n && dim->size >= 0) dim->size /= axes_size(sm->mesh, s->ax[d], s->nax[d]);
  }
  tb.varying = (sm->check_vma ? s->parts : 0) | rebase(t->varying, tm, sm->shape);
  tb.unreduced = (au & inner_explicit) | (sm->check_vma ? au : 0);
  tb.reduced = (ar & inner_explicit) | (sm->check_vma ? ar : 0);
  tb.ukind = tb.unreduced ? t->ukind : SR_UK_NONE;
  *out = sr_type_get(&tb);
  return 0;
}

/* shard_map.py: _check_mats / _valid_repeats / _inout_vma_error -- an
   output may vary (or be unreduced or reduced) only over the mesh axes its
   out_spec mentions. */
static int replication_check(SrTypeCtx *cx, const SMap *sm, const SrType *const *outs) {
  SrBuf msgs = SR_BUF_INIT;
  int k = 0;
  for (uint32_t i = 0; i < sm->nout; i++) {
    const MSpec *s = &sm->out[i];
    const SrType *a = outs[i];
    if (!a) continue;
    SrAxes man = manual_of(sm->inner, a->mesh);
    SrAxes v = rebase(a->varying, a->mesh, sm->shape);
    SrAxes vur = v | rebase((a->unreduced | a->reduced) & man, a->mesh, sm->shape);
    SrAxes unmentioned = sm->all & ~(s->parts | s->u | s->r);
    if (!(unmentioned & ~sm->prev & vur)) continue;
    if (k++) sr_buf_puts(&msgs, "\n\n");
    sr_buf_puts(&msgs, "* out_specs");
    put_key(&msgs, i, sm->nout);
    sr_buf_puts(&msgs, " is ");
    put_spec(&msgs, s);
    if (sr_axes_count(unmentioned) > 1) {
      sr_buf_puts(&msgs, " which implies that the corresponding output value is only varying across mesh axes {");
      for (int pass = 0; pass < 3; pass++) {
        SrAxes set = pass == 0 ? s->parts : pass == 1 ? unmentioned & v : v;
        int j = 0;
        for (int ax = 0; ax < sm->shape->n; ax++)
          if (set & (1u << ax)) sr_buf_printf(&msgs, j++ ? ",%s" : "%s", sm->shape->names[ax]);
        sr_buf_puts(&msgs, pass == 0 ? "} and not {" : pass == 1 ? "}, but it was inferred to be possibly varying over {"
                                                                 : "}");
      }
    } else {
      int ax = __builtin_ctz(unmentioned);
      sr_buf_printf(&msgs, " which implies that the corresponding output value is replicated across mesh axis '%s', "
                           "but could not infer replication over any axes", sm->shape->names[ax]);
    }
  }
  if (!k) {
    sr_buf_free(&msgs);
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "shard_map applied to the function '%s' was given out_specs which require replication which "
                    "can't be statically inferred given the mesh:\n\n", sm->fname);
  put_mesh_line(&b, sm);
  sr_buf_printf(&b, "%s\n\nCheck if these output values are meant to be replicated over those mesh axes. If not, "
                    "consider revising the corresponding out_specs entries. If so, consider disabling the check by "
                    "passing the check_vma=False argument to `jax.shard_map`.",
                sr_buf_str(&msgs) + (k == 1 ? 2 : 0));
  sr_buf_free(&msgs);
  return report(cx, "ValueError", &b);
}

/* shard_map.py: _unshard_shaped_array -- a body output's type outside:
   each dimension multiplied by the sizes of the axes its out_spec names,
   which join the sharding; unreduced/reduced from the out_spec; varying
   only over the axes that stay Manual outside. */
static int unshard_aval(SrTypeCtx *cx, const SMap *sm, uint32_t i, const SrType *a, const SrType **out) {
  const MSpec *s = &sm->out[i];
  const SrMesh *am = a->mesh;
  SrAxes man = manual_of(sm->inner, am);
  if (sm->check_vma) {
    SrAxes mu = rebase(a->unreduced & man, am, sm->shape), mr = rebase(a->reduced & man, am, sm->shape);
    int mkind = mu ? a->ukind : SR_UK_NONE;
    const char *what = s->u != mu ? "unreduced" : s->ukind != mkind ? "unreduced_kind" : s->r != mr ? "reduced" : NULL;
    if (what) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b, "out_specs passed to shard_map should be equal to the %s present on the out_aval. Got "
                        "out_specs=", what);
      put_spec(&b, s);
      sr_buf_printf(&b, " and out_aval=%s", sr_type_short(a));
      return report(cx, "ValueError", &b);
    }
  }
  const SrMesh *om = cx->mesh && cx->mesh->n ? sr_mesh_shape(cx->mesh) : sm->shape;
  /* new_mesh: the context's abstract mesh, else the shard_map's; the
     type names only its Explicit axes (modify_spec_for_auto_manual) */
  const SrMesh *tm = cx->mesh && cx->mesh->n ? cx->mesh : sm->mesh;
  SrAxes outer_man = rebase(sm->prev, sm->shape, om);
  SrTypeBuilder b;
  sr_type_builder(&b, a);
  b.mesh = om;
  for (int d = 0; d < a->ndim; d++) {
    SrDim *dim = &b.dims[d];
    dim->nax = 0;
    if (d < s->n) {
      if (dim->size >= 0) dim->size *= axes_size(sm->mesh, s->ax[d], s->nax[d]);
      for (int k = 0; k < s->nax[d]; k++) {
        const char *name = sm->shape->names[s->ax[d][k]];
        int ax = sr_mesh_axis(om, name), at = sr_mesh_axis(tm, name);
        if (at >= 0 && tm->types[at] == SR_AXIS_AUTO) continue;
        if (ax >= 0) dim->ax[dim->nax++] = (uint8_t)ax;
      }
    }
    for (int k = 0; k < a->dims[d].nax; k++) {
      int ax = sr_mesh_axis(om, am->names[a->dims[d].ax[k]]);
      if (ax < 0) continue;
      if (dim->nax == SR_MAX_DIM_AXES) return sr_terr(cx, "ValueError", "too many mesh axes on one dimension");
      dim->ax[dim->nax++] = (uint8_t)ax;
    }
  }
  b.unreduced = rebase(s->u, sm->shape, om);
  b.reduced = rebase(s->r, sm->shape, om);
  b.ukind = b.unreduced ? s->ukind : SR_UK_NONE;
  b.varying = rebase(a->varying, am, om) & outer_man;
  *out = sr_type_get(&b);
  return 0;
}

/* shard_map.py: _shard_map_staging / _shard_map_typecheck, with the
   checks of _shard_map and _shmap_checks that a printed equation can
   still fail. */
static int type_shard_map(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  SMap sm;
  memset(&sm, 0, sizeof sm);
  SrVal *jv = sr_rparam(e, "jaxpr");
  if (!jv || jv->kind != SR_V_JAXPR) return sr_terr(cx, "TypeError", "shard_map equation has no 'jaxpr' param");
  const SrJaxpr *body = jv->jx.jaxpr;
  SrVal *mv = sr_rparam(e, "mesh");
  sm.mesh = mv && mv->kind == SR_V_MESH ? mv->mesh : cx->mesh;
  if (!sm.mesh || !sm.mesh->n) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "shard_map requires a non-empty mesh. Got ");
    if (mv) sr_val_str(&b, mv);
    else sr_mesh_str(&b, sr_mesh_empty());
    return report(cx, "ValueError", &b);
  }
  if (sm.mesh->unsized) return sr_terr(cx, "ValueError", "shard_map: the sizes of the mesh's axes are not known");
  sm.shape = sr_mesh_shape(sm.mesh);
  sm.all = (SrAxes)((1ull << sm.mesh->n) - 1);
  for (int a = 0; a < sm.mesh->n; a++)
    if (sm.mesh->types[a] == SR_AXIS_MANUAL) sm.prev |= 1u << a;
  SrVal *nv = sr_rparam(e, "newly_manual_axes"), *auto_v = sr_rparam(e, "auto");
  if (nv) {
    if (sr_names_to_axes(cx, nv, sm.shape, &sm.newly) < 0) return -1;
  } else {
    SrAxes au = 0;
    if (auto_v && sr_names_to_axes(cx, auto_v, sm.shape, &au) < 0) return -1;
    sm.newly = sm.all & ~au & ~sm.prev;
  }
  sm.check_vma = 1;
  if (sr_rparam(e, "check_vma")) {
    if (sr_rparam_bool(cx, e, "check_vma", 1, &sm.check_vma) < 0) return -1;
  } else if (sr_rparam_bool(cx, e, "check_rep", 0, &sm.check_vma) < 0) {
    return -1;
  }
  uint8_t types[SR_MAX_AXES];
  memcpy(types, sm.mesh->types, sizeof types);
  for (int a = 0; a < sm.mesh->n; a++)
    if (sm.newly & (1u << a)) types[a] = SR_AXIS_MANUAL;
  sm.inner = sr_mesh_with_types(sm.mesh, types);
  sm.fname = body->name ? body->name : "f";
  sm.nin = e->nin;
  sm.nout = e->nout;
  if (body->nout != e->nout)
    return sr_terr(cx, "TypeError", "shard_map has %u results but its jaxpr returns %u values", e->nout, body->nout);

  int rc = -1;
  sm.in = sr_xcalloc(e->nin + 1, sizeof *sm.in);
  sm.out = sr_xcalloc(e->nout + 1, sizeof *sm.out);
  const SrType **ins = sr_xcalloc(e->nin + 1, sizeof *ins);
  const SrType **bouts = sr_xcalloc(e->nout + 1, sizeof *bouts);
  if (read_specs(cx, e, &sm, "in_specs", "in", e->nin, sm.in) < 0 ||
      read_specs(cx, e, &sm, "out_specs", "out", e->nout, sm.out) < 0)
    goto done;
  if (rank_check(cx, &sm, 0, e->in) < 0 || divisibility_check(cx, &sm, e->in) < 0) goto done;
  for (uint32_t i = 0; i < e->nin; i++)
    if (shard_aval(cx, &sm, i, e->in[i], &ins[i]) < 0) goto done;
  SrTypeCtx inner = *cx;
  inner.mesh = sm.inner;
  inner.check_vma = sm.check_vma;
  if (cx->check_body) {
    if (cx->check_body(&inner, body, ins, e->nin, bouts) < 0) goto done;
  } else {
    for (uint32_t i = 0; i < body->nout; i++) bouts[i] = body->outvars[i]->type;
  }
  if (rank_check(cx, &sm, 1, bouts) < 0) goto done;
  if (sm.check_vma && replication_check(cx, &sm, bouts) < 0) goto done;
  for (uint32_t i = 0; i < e->nout; i++)
    if (bouts[i] && unshard_aval(cx, &sm, i, bouts[i], &out[i]) < 0) goto done;
  rc = 0;
done:
  free(sm.in);
  free(sm.out);
  free(ins);
  free(bouts);
  return rc;
}

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
  /* else the shard_map's own mesh when it is a concrete one */
  if (!m && !mv->mesh->abstract) m = mv->mesh;
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
    /* over Auto axes the result stays where out_specs put it (its
       sharding is NamedSharding(mesh, out_spec)) */
    int auto_ = sr_mesh_axes_of_type(m, SR_AXIS_AUTO) != 0;
    e->out[i] = sr_redistribute_typed(cx, o, m, auto_ ? ol : sr_ev_out_layout(cx, e, i, m), e->out_type[i]);
    sr_array_unref(o);
    if (!e->out[i]) rc = -1;
    /* eagerly over all of its mesh's axes, the result's sharding is
       NamedSharding(mesh, out_spec) as the out_spec is written
       (_shard_map_impl's out_shardings), not its type's */
    else if (!cx->fused && s && manual == (SrAxes)((1u << m->n) - 1) && !e->out[i]->sharding && e->out[i]->rc == 1)
      e->out[i]->sharding = sr_sharding_val(NULL, m, s, sr_intern_cstr("device"));
  }
  for (uint32_t i = 0; i < e->nin; i++) sr_array_unref(args[i]);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(res[i]);
  free(args);
  free(res);
  return rc;
}

/* rules of shard_map (shard_map.py: _shard_map_jvp,
 * _shard_map_linearize, _shard_map_transpose).
 *
 * The body is transformed inside the manual context the map creates (its
 * mesh with the newly manual axes Manual, and check_vma), so that the type
 * rules see manual-mode types.  Linearized, a shard_map becomes a forward
 * shard_map that also returns the residuals (each with an out_spec that
 * stacks its per-device values: P(varying axes, unreduced=..., reduced=...)
 * as ShapedArray.nospec gives; scalars are given a leading axis of 1 first)
 * and a tangent shard_map of the linear body.  Transposed, the cotangents
 * come in with `out_spec.to_ct_spec()` (reduced <-> unreduced) and leave
 * with `in_spec.to_ct_spec()`.
 */

#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

typedef struct AdSMap {
  SrJaxpr *body;
  SrVal *in_specs, *out_specs; /* tuples of P */
  int check_vma;
  const SrMesh *inner;         /* the manual mesh of the body */
  const SrMesh *mesh;          /* the abstract mesh of the map */
  SrAxes newly;                /* newly manual axes, on mesh */
  SrAxes spmd;                 /* the enclosing vmaps' spmd_axis_names */
} AdSMap;

static int smap_read(SrAd *ad, const SrEqn *e, AdSMap *s) {
  memset(s, 0, sizeof *s);
  SrVal *j = param(e, "jaxpr"), *is = param(e, "in_specs"), *os = param(e, "out_specs");
  SrVal *m = param(e, "mesh"), *cv = param(e, "check_vma"), *nm = param(e, "newly_manual_axes");
  if (!j || j->kind != SR_V_JAXPR || !is || !os || !sr_is_seq(is) || !sr_is_seq(os))
    return sr_raise(ad->I, "TypeError", "shard_map equation without jaxpr, in_specs and out_specs"), -1;
  s->body = j->jx.jaxpr;
  s->in_specs = is;
  s->out_specs = os;
  s->check_vma = cv ? sr_val_truthy(cv) : 1;
  const SrMesh *am = m && m->kind == SR_V_MESH ? m->mesh : NULL;
  if (!am || !am->n) am = sr_ad_ctx_mesh(ad);
  if (!am->n) return sr_raise(ad->I, "ValueError", "shard_map: no mesh to differentiate it on"), -1;
  if (!am->abstract) am = sr_mesh_abstract(am, 1);
  s->mesh = am;
  SrAxes newly = 0;
  if (nm && sr_is_seq(nm)) {
    for (int i = 0; i < nm->seq.n; i++) {
      SrVal *n = nm->seq.items[i];
      if (n->kind != SR_V_STR && n->kind != SR_V_WORD) continue;
      int a = sr_mesh_axis(am, sr_intern(n->str.s, n->str.n));
      if (a >= 0) newly |= 1u << a;
    }
  } else {
    newly = (SrAxes)((1ull << am->n) - 1) & ~sr_mesh_axes_of_type(am, SR_AXIS_MANUAL);
  }
  s->newly = newly;
  for (int k = 0; k < ad->I->jax->nspmd_names; k++) {
    int a = sr_mesh_axis(am, ad->I->jax->spmd_names[k]);
    if (a >= 0) s->spmd |= 1u << a;
  }
  uint8_t types[SR_MAX_AXES];
  memcpy(types, am->types, sizeof types);
  for (int i = 0; i < am->n; i++)
    if (newly & (1u << i)) types[i] = SR_AXIS_MANUAL;
  s->inner = sr_mesh_with_types(am, types);
  return 0;
}

/* Entering and leaving the body's manual context. */
typedef struct Ctx {
  int vma;
} Ctx;

static int enter(SrAd *ad, const AdSMap *s, Ctx *c) {
  SrJaxState *js = ad->I->jax;
  if (js->nabstract == 32) return sr_raise(ad->I, "RuntimeError", "abstract meshes nested too deeply"), -1;
  js->abstract[js->nabstract++] = s->inner;
  c->vma = js->check_vma;
  js->check_vma = s->check_vma;
  return 0;
}

static void leave(SrAd *ad, Ctx *c) {
  SrJaxState *js = ad->I->jax;
  if (js->nabstract) js->nabstract--;
  js->check_vma = c->vma;
}

static const SrSpec *spec_of(const SrVal *v) { return v && v->kind == SR_V_SPEC ? v->spec : NULL; }

/* P.to_ct_spec: unreduced and reduced swapped */
static SrVal *to_ct_spec(const SrVal *v) {
  const SrSpec *s = spec_of(v);
  if (!s) return sr_ref((SrVal *)v);
  SrSpec c = *s;
  c.unreduced = s->reduced;
  c.nunreduced = s->nreduced;
  c.reduced = s->unreduced;
  c.nreduced = s->nunreduced;
  c.ukind = c.nunreduced ? SR_UK_SUM : SR_UK_NONE;
  return sr_spec_val(NULL, &c);
}

/* ShapedArray.nospec: the out_spec of a residual t (a body type). */
static SrVal *nospec(const AdSMap *s, const SrType *t) {
  SrSpec sp = {0};
  SrSpecEntry en;
  const char *names[SR_MAX_AXES], *un[SR_MAX_AXES], *re[SR_MAX_AXES];
  int nn = 0;
  const SrMesh *m = s->mesh;
  for (int i = 0; i < m->n; i++) {
    int a = t->mesh ? sr_mesh_axis(t->mesh, m->names[i]) : -1;
    /* _all_newly_manual_mesh_names: without check_vma, the newly manual
       axes but the enclosing vmaps' spmd_axis_names */
    int vary = s->check_vma ? a >= 0 && (t->varying & (1u << a)) : (s->newly & ~s->spmd & (1u << i)) != 0;
    if (vary) names[nn++] = m->names[i];
    if (s->check_vma && a >= 0 && (t->unreduced & (1u << a))) un[sp.nunreduced++] = m->names[i];
    if (s->check_vma && a >= 0 && (t->reduced & (1u << a))) re[sp.nreduced++] = m->names[i];
  }
  if (nn) {
    en.n = nn;
    en.names = names;
    sp.n = 1;
    sp.e = &en;
  }
  sp.unreduced = un;
  sp.reduced = re;
  sp.ukind = sp.nunreduced ? (t->ukind ? t->ukind : SR_UK_SUM) : SR_UK_NONE;
  return sr_spec_val(NULL, &sp);
}

/* pxla.batch_spec(spec, 0, val): a P with a leading entry, the names of
   val (none: None). */
/* pxla.batch_spec(spec, dim, val): the spec padded with None to dim
   entries, val (nval mesh axes; none: None) inserted at dim. */
static SrVal *spec_inserted(const SrVal *v, int dim, const char *const *val, int nval) {
  const SrSpec *sp = spec_of(v);
  SrSpec ns = sp ? *sp : (SrSpec){0};
  int n0 = sp ? sp->n : 0, n = (n0 > dim ? n0 : dim) + 1;
  SrSpecEntry *en = sr_xcalloc((size_t)n + 1, sizeof *en);
  for (int i = 0, k = 0; i < n; i++) {
    if (i == dim) {
      en[i].n = nval;
      en[i].names = (const char **)val;
    } else if (k < n0) {
      en[i] = sp->e[k++];
    }
  }
  ns.n = n;
  ns.e = en;
  SrVal *r = sr_spec_val(NULL, &ns);
  free(en);
  return r;
}

static SrVal *specs_tuple(int n, SrVal **items) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, items[i]);
  return t;
}

static SrVal *bind_smap(SrAd *ad, const SrEqn *e, SrJaxpr *body, SrVal *in_specs, SrVal *out_specs, int nin,
                        SrVal **in) {
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "jaxpr") == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, body));
    else if (strcmp(k, "in_specs") == 0) sr_plist_add(&ps, k, sr_ref(in_specs));
    else if (strcmp(k, "out_specs") == 0) sr_plist_add(&ps, k, sr_ref(out_specs));
    else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
  }
  SrVal *r = sr_ad_bind(ad, SR_P_shard_map, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

static int smap_jvp_mode(SrAd *ad, const SrEqn *e, const AdSMap *s, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  uint32_t n = e->nin, no = e->nout;
  uint8_t *nz = sr_xcalloc(n + 1, 1), *onz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) nz[i] = t[i] != NULL;
  Ctx c;
  if (enter(ad, s, &c) < 0) return -1;
  SrJaxpr *J = sr_ad_jvp_jaxpr(ad, s->body, nz, NULL, onz);
  leave(ad, &c);
  int rc = -1;
  if (J) {
    SrVal **in = sr_xcalloc(2 * n + 1, sizeof *in), **isp = sr_xcalloc(2 * n + 1, sizeof *isp);
    SrVal **osp = sr_xcalloc(2 * no + 1, sizeof *osp);
    uint32_t k = 0, m = 0;
    for (uint32_t i = 0; i < n; i++) in[k] = x[i], isp[k++] = sr_ref(s->in_specs->seq.items[i]);
    for (uint32_t i = 0; i < n; i++)
      if (nz[i]) in[k] = t[i], isp[k++] = sr_ref(s->in_specs->seq.items[i]);
    for (uint32_t i = 0; i < no; i++) osp[m++] = sr_ref(s->out_specs->seq.items[i]);
    for (uint32_t i = 0; i < no; i++)
      if (onz[i]) osp[m++] = sr_ref(s->out_specs->seq.items[i]);
    SrVal *ist = specs_tuple((int)k, isp), *ost = specs_tuple((int)m, osp);
    SrVal *r = bind_smap(ad, e, J, ist, ost, (int)k, in);
    if (r) {
      for (uint32_t i = 0, q = no; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = onz[i] ? r->seq.items[q++] : NULL;
      }
      rc = 0;
    }
    sr_unref(ist);
    sr_unref(ost);
    free(in);
    free(isp);
    free(osp);
    sr_program_unref(J->prog);
  }
  free(nz);
  free(onz);
  return rc;
}

/* F with its scalar residual outputs (from index first) given a leading
   axis of 1 (lax.broadcast(x, (1,))), traced again in the manual context. */
typedef struct Promote {
  uint32_t first;
  const uint8_t *promote;
} Promote;

static int promote_map(SrAd *sub, SrVal *const *in, int n, SrVal **outs, int cap, void *arg) {
  const Promote *pr = arg;
  (void)cap;
  for (int i = 0; i < n; i++) {
    outs[i] = in[i];
    if ((uint32_t)i >= pr->first && pr->promote[i - (int)pr->first]) {
      const SrType *t = sr_ad_type(sub, outs[i]);
      SrTypeBuilder b;
      sr_type_builder(&b, t);
      b.ndim = 1;
      memset(&b.dims[0], 0, sizeof b.dims[0]);
      b.dims[0].size = 1;
      outs[i] = sr_ad_broadcast_in_dim(sub, outs[i], sr_type_get(&b), NULL, 0, 0);
      if (!outs[i]) return -1;
    }
  }
  return n;
}

static SrJaxpr *promote_outputs(SrAd *ad, SrJaxpr *F, uint32_t first, const uint8_t *promote) {
  Promote pr = {first, promote};
  return sr_ad_retrace(ad, F, (int)F->nout, promote_map, &pr);
}

/* L with its scalar residual arguments taking a leading axis of 1 that
   is squeezed away first (_promote_scalar_residuals_jaxpr). */
static SrJaxpr *promote_args(SrAd *ad, SrJaxpr *L, const uint8_t *promote, uint32_t nprom) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(L);
  const SrType **types = sr_xcalloc(n + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) {
    const SrType *t = sr_args(L)[i]->type;
    if (i < nprom && promote[i]) {
      SrTypeBuilder b;
      sr_type_builder(&b, t);
      b.ndim = 1;
      memset(&b.dims[0], 0, sizeof b.dims[0]);
      b.dims[0].size = 1;
      t = sr_type_get(&b);
    }
    types[i] = t;
  }
  SrVal **args = sr_xcalloc(n + 1, sizeof *args), **in = sr_xcalloc(n + 1, sizeof *in);
  SrTrace *tr = sr_ad_trace_begin(ad, (int)n, types, args);
  free(types);
  I->trace = tr;
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  int ok = 1;
  for (uint32_t i = 0; i < n && ok; i++) {
    in[i] = args[i];
    if (i < nprom && promote[i]) {
      int64_t d0 = 0;
      in[i] = sr_ad_bindv(&sub, SR_P_squeeze, 1, &args[i], "dimensions", sr_ad_ints(&d0, 1), NULL);
      ok = in[i] != NULL;
    }
  }
  SrVal *r = ok ? sr_eval_jaxpr(I, L, (int)n, in) : NULL;
  SrJaxpr *out = NULL;
  if (r) out = sr_ad_trace_end(&sub, tr, r->seq.n, r->seq.items, NULL);
  else sr_trace_abort(I, tr);
  sr_unref(r);
  sr_ad_end(&sub);
  for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  free(in);
  I->trace = saved;
  return out;
}

static int smap_lin(SrAd *ad, const SrEqn *e, const AdSMap *s, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  uint32_t n = e->nin, no = e->nout;
  uint8_t *nz = sr_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) nz[i] = t[i] != NULL;
  Ctx c;
  if (enter(ad, s, &c) < 0) {
    free(nz);
    return -1;
  }
  SrLinJaxprs lj;
  int rc = sr_ad_linearize_jaxpr(ad, s->body, nz, NULL, NULL, &lj);
  if (rc < 0) {
    leave(ad, &c);
    free(nz);
    return -1;
  }
  rc = -1;
  SrJaxpr *F = lj.fwd, *L = lj.lin;
  int nres = lj.nres;
  uint32_t nf = F->nout;
  /* residuals: forwarded inputs (in_fwd), primal outputs (out_fwd), or
     returned by the forward map */
  int *out_fwd = sr_xcalloc((size_t)nres + 1, sizeof *out_fwd), *ret = sr_xcalloc((size_t)nres + 1, sizeof *ret);
  uint8_t *keep = sr_xcalloc(nf + 1, 1), *promote = sr_xcalloc((size_t)nres + 1, 1);
  for (uint32_t i = 0; i < no; i++) keep[i] = 1;
  uint32_t q = no, nkept = no;
  for (int r = 0; r < nres; r++) {
    out_fwd[r] = -1;
    ret[r] = -1;
    if (lj.in_fwd[r]) continue;
    SrVar *v = F->outvars[q];
    for (uint32_t i = 0; i < no && out_fwd[r] < 0; i++)
      if (v->kind == SR_VAR && F->outvars[i] == v) out_fwd[r] = (int)i;
    if (out_fwd[r] < 0) {
      keep[q] = 1;
      ret[r] = (int)nkept++;
      promote[r] = v->type && v->type->ndim == 0;
    }
    q++;
  }
  uint8_t *fprom = sr_xcalloc(nf + 1, 1);
  for (int r = 0, qq = 0; r < nres; r++)
    if (ret[r] >= 0) fprom[qq++] = promote[r];
  SrJaxpr *F2 = F;
  if (nkept != nf) {
    int *ord = sr_xcalloc(nf + 1, sizeof *ord);
    uint32_t k = 0;
    for (uint32_t i = 0; i < nf; i++)
      if (keep[i]) ord[k++] = (int)i;
    SrJaxprBuilder b;
    sr_jb_init(&b, F->prog);
    for (uint32_t i = 0; i < sr_nargs(F); i++) sr_jb_invar(&b, sr_args(F)[i]);
    for (uint32_t kk = 0; kk < F->neqn; kk++) {
      const SrEqn *q2 = &F->eqns[kk];
      sr_jb_eqn(&b, q2->prim, q2->nin, q2->in, q2->nout, q2->out, q2->nparams, q2->params)->ns = q2->ns;
    }
    for (uint32_t i = 0; i < k; i++) sr_jb_outvar(&b, F->outvars[ord[i]]);
    F2 = sr_jb_finish(&b);
    lj.fwd = F2;
    free(ord);
  }
  int anyprom = 0;
  for (int r = 0; r < nres; r++) anyprom |= promote[r];
  SrJaxpr *F3 = anyprom ? promote_outputs(ad, F2, no, fprom) : F2;
  SrJaxpr *L2 = anyprom ? promote_args(ad, L, promote, (uint32_t)nres) : L;
  SrVal **rspec = sr_xcalloc((size_t)nres + 1, sizeof *rspec);
  for (int r = 0; r < nres; r++) {
    const SrType *rt = sr_args(L)[r]->type;
    if (lj.in_fwd[r]) rspec[r] = sr_ref(s->in_specs->seq.items[lj.in_fwd[r] - 1]);
    else if (out_fwd[r] >= 0) rspec[r] = sr_ref(s->out_specs->seq.items[out_fwd[r]]);
    else rspec[r] = nospec(s, rt);
  }
  leave(ad, &c);
  if (!F3 || !L2) goto out;
  {
    /* the forward map */
    SrVal **osp = sr_xcalloc(nkept + 1, sizeof *osp);
    for (uint32_t i = 0; i < no; i++) osp[i] = sr_ref(s->out_specs->seq.items[i]);
    for (int r = 0; r < nres; r++)
      if (ret[r] >= 0) osp[ret[r]] = sr_ref(rspec[r]);
    SrVal *ost = specs_tuple((int)nkept, osp);
    free(osp);
    SrVal *rf = bind_smap(ad, e, F3, s->in_specs, ost, (int)n, x);
    sr_unref(ost);
    if (!rf) goto out;
    for (uint32_t i = 0; i < no; i++) y[i] = rf->seq.items[i];
    int anynz = 0;
    for (uint32_t i = 0; i < no; i++) anynz |= lj.out_nz[i];
    if (!anynz) {
      rc = 0;
      goto out;
    }
    /* the tangent map: residuals, then the nonzero tangents */
    uint32_t nl = sr_nargs(L2);
    SrVal **in = sr_xcalloc(nl + 1, sizeof *in), **isp = sr_xcalloc(nl + 1, sizeof *isp);
    uint32_t k = 0;
    for (int r = 0; r < nres; r++) {
      in[k] = lj.in_fwd[r] ? x[lj.in_fwd[r] - 1] : out_fwd[r] >= 0 ? y[out_fwd[r]] : rf->seq.items[ret[r]];
      isp[k++] = sr_ref(rspec[r]);
    }
    for (uint32_t i = 0; i < n; i++)
      if (nz[i]) in[k] = t[i], isp[k++] = sr_ref(s->in_specs->seq.items[i]);
    SrVal **osp2 = sr_xcalloc(no + 1, sizeof *osp2);
    uint32_t m = 0;
    for (uint32_t i = 0; i < no; i++)
      if (lj.out_nz[i]) osp2[m++] = sr_ref(s->out_specs->seq.items[i]);
    SrVal *ist = specs_tuple((int)k, isp), *ost2 = specs_tuple((int)m, osp2);
    SrVal *rt = k == nl ? bind_smap(ad, e, L2, ist, ost2, (int)k, in) : NULL;
    if (rt) {
      for (uint32_t i = 0, mm = 0; i < no; i++) ty[i] = lj.out_nz[i] ? rt->seq.items[mm++] : NULL;
      rc = 0;
    } else if (!ad->I->exc) {
      sr_raise(ad->I, "RuntimeError", "internal error: the tangent shard_map's operands");
    }
    sr_unref(ist);
    sr_unref(ost2);
    free(in);
    free(isp);
    free(osp2);
  }
out:
  if (F3 && F3 != F2) sr_program_unref(F3->prog);
  if (L2 && L2 != L) sr_program_unref(L2->prog);
  for (int r = 0; r < nres; r++) sr_unref(rspec[r]);
  free(rspec);
  free(out_fwd);
  free(ret);
  free(keep);
  free(promote);
  free(fprom);
  free(nz);
  sr_ad_lin_jaxprs_free(&lj);
  return rc;
}

JVP(jvp_shard_map) {
  AdSMap s;
  if (smap_read(ad, e, &s) < 0) return -1;
  if (ad->mode == SR_AD_LIN) return smap_lin(ad, e, &s, x, t, y, ty);
  return smap_jvp_mode(ad, e, &s, x, t, y, ty);
}

/* shard_map._unmentioned2 of a spec (P.to_ct_spec of it): the newly
   manual axes, but the enclosing vmaps' spmd_axis_names, that the spec
   neither splits over nor has unreduced. */
static SrAxes unmentioned2(const AdSMap *s, const SrVal *spec) {
  SrVal *cs = to_ct_spec(spec);
  const SrSpec *sp = spec_of(cs);
  SrAxes named = 0;
  for (int d = 0; sp && d < sp->n; d++)
    for (int k = 0; k < sp->e[d].n; k++) {
      int a = sp->e[d].names[k] == SR_SPEC_UNCONSTRAINED ? -1 : sr_mesh_axis(s->mesh, sp->e[d].names[k]);
      if (a >= 0) named |= 1u << a;
    }
  for (int k = 0; sp && k < sp->nunreduced; k++) {
    int a = sr_mesh_axis(s->mesh, sp->unreduced[k]);
    if (a >= 0) named |= 1u << a;
  }
  sr_unref(cs);
  return s->newly & ~s->spmd & ~named;
}

static int is_float0(const SrType *t) { return t && sr_dtype_kind(t->dtype) == SR_DK_FLOAT0; }

TR(tr_shard_map) {
  AdSMap s;
  if (smap_read(ad, e, &s) < 0) return -1;
  SrInterp *I = ad->I;
  SrJaxpr *b = s.body;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *lin = sr_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i] == NULL;
  /* the transposed body: (nonzero cts, non-linear operands) -> nonzero
     cotangents of the linear operands */
  const SrType **types = sr_xcalloc(n + no + 1, sizeof *types);
  uint32_t k = 0;
  for (uint32_t i = 0; i < no; i++)
    if (ct[i]) types[k++] = sr_ad_ct_type(b->outvars[i]->type);
  uint32_t nct = k;
  for (uint32_t i = 0; i < n; i++)
    if (!lin[i]) types[k++] = sr_args(b)[i]->type;
  Ctx c;
  if (enter(ad, &s, &c) < 0) {
    free(lin);
    free(types);
    return -1;
  }
  SrTrace *saved = I->trace;
  SrVal **args = sr_xcalloc(k + 1, sizeof *args);
  SrTrace *tr = sr_ad_trace_begin(ad, (int)k, types, args);
  free(types);
  SrVal **vals = sr_xcalloc(n + 1, sizeof *vals), **cts = sr_xcalloc(no + 1, sizeof *cts);
  SrVal **cin = sr_xcalloc(n + 1, sizeof *cin);
  for (uint32_t i = 0, q = 0; i < no; i++) cts[i] = ct[i] ? args[q++] : NULL;
  for (uint32_t i = 0, q = nct; i < n; i++)
    if (!lin[i]) vals[i] = args[q++];
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  I->trace = tr;
  int rc = sr_ad_backward(&sub, b, lin, vals, cts, cin);
  /* without check_vma each cotangent is summed over the axes its in_spec
     leaves unmentioned (lax_parallel.psum in fun_trans_callable) */
  for (uint32_t i = 0; rc == 0 && !s.check_vma && i < n; i++) {
    if (!lin[i] || !cin[i] || is_float0(sr_ad_type(&sub, cin[i]))) continue;
    SrAxes um = unmentioned2(&s, s.in_specs->seq.items[i]);
    if (!um) continue;
    SrVal *names = sr_seq(NULL, SR_V_TUPLE, 0);
    for (int a = 0; a < s.mesh->n; a++)
      if (um >> a & 1) sr_seq_push(NULL, names, sr_str_cstr(NULL, s.mesh->names[a]));
    SrVal *ps = sr_ad_bindv(&sub, SR_P_psum, 1, &cin[i], "axes", names, "axis_index_groups", sr_none(), NULL);
    if (!ps) {
      rc = -1;
      break;
    }
    if (ps->kind == SR_V_TUPLE) ps = ps->seq.items[0];
    sr_unref(cin[i]);
    cin[i] = sr_ref(ps);
  }
  SrJaxpr *T = NULL;
  uint32_t nout = 0;
  if (rc == 0) {
    SrVal **outs = sr_xcalloc(n + 1, sizeof *outs);
    for (uint32_t i = 0; i < n; i++)
      if (lin[i] && cin[i]) outs[nout++] = cin[i];
    T = sr_ad_trace_end(&sub, tr, (int)nout, outs, NULL);
    free(outs);
  } else {
    sr_trace_abort(I, tr);
  }
  sr_ad_end(&sub);
  I->trace = saved;
  leave(ad, &c);
  for (uint32_t i = 0; i < k; i++) sr_unref(args[i]);
  free(args);
  rc = -1;
  if (T) {
    SrVal **in = sr_xcalloc(n + no + 1, sizeof *in), **isp = sr_xcalloc(n + no + 1, sizeof *isp);
    SrVal **osp = sr_xcalloc(n + 1, sizeof *osp);
    uint32_t m = 0, q = 0;
    for (uint32_t i = 0; i < no; i++) {
      if (!ct[i]) continue;
      in[m] = ct[i];
      /* without check_vma a cotangent is first divided by the size of the
         axes its out_spec leaves unmentioned (mb_div) */
      SrAxes um = s.check_vma || is_float0(sr_ad_type(ad, ct[i])) ? 0 : unmentioned2(&s, s.out_specs->seq.items[i]);
      int64_t size = 1;
      for (int a = 0; a < s.mesh->n; a++)
        if (um >> a & 1) size *= s.mesh->sizes[a];
      if (size != 1) in[m] = sr_ad_div(ad, ct[i], sr_ad_const(ad, ct[i], (double)size));
      isp[m++] = to_ct_spec(s.out_specs->seq.items[i]);
    }
    for (uint32_t i = 0; i < n; i++)
      if (!lin[i]) in[m] = x[i], isp[m++] = sr_ref(s.in_specs->seq.items[i]);
    for (uint32_t i = 0; i < n; i++)
      if (lin[i] && cin[i]) osp[q++] = to_ct_spec(s.in_specs->seq.items[i]);
    SrVal *ist = specs_tuple((int)m, isp), *ost = specs_tuple((int)q, osp);
    SrVal *r = bind_smap(ad, e, T, ist, ost, (int)m, in);
    if (r) {
      for (uint32_t i = 0, z = 0; i < n; i++)
        if (lin[i] && cin[i]) cx[i] = r->seq.items[z++];
      rc = 0;
    }
    sr_unref(ist);
    sr_unref(ost);
    free(in);
    free(isp);
    free(osp);
    sr_program_unref(T->prog);
  }
  for (uint32_t i = 0; i < n; i++) sr_unref(cin[i]);
  free(cin);
  free(vals);
  free(cts);
  free(lin);
  return rc;
}

/* vmap: shard_map.py's _shard_map_batch.  The batched operands' specs get
   an unsharded batch dim (pxla.batch_spec(spec, d, None); with
   spmd_axis_name, its axes, the body batched over the per-device part of
   the batch), the body is batched inside the map's manual context, and
   the batched results' out_specs get the same entry (_batch_out_specs).
   Each batch dim stays where it is (batch_subtrace_2 with the operands'
   dims; the results' where the body's rules put them). */
static int batch_shard_map(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrAd *ad = &b->ad;
  SrInterp *I = ad->I;
  AdSMap s;
  if (smap_read(ad, e, &s) < 0) return -1;
  int spmd = b->nspmd && !b->spmd_explicit;
  int64_t per = b->size;
  if (b->nspmd) {
    for (uint32_t i = 0; i < e->nin; i++) {
      const SrSpec *sp = spec_of(s.in_specs->seq.items[i]);
      for (int k = 0; sp && k < sp->n; k++)
        for (int q = 0; q < sp->e[k].n; q++)
          for (int a = 0; a < b->nspmd; a++)
            if (sp->e[k].names[q] == b->spmd[a]) {
              sr_raise(I, "ValueError", spmd ? "vmap spmd_axis_name cannot appear in shard_map in_specs"
                                             : "vmapped away explicit mesh axis cannot appear in shard_map in_specs");
              return -1;
            }
    }
    for (int a = 0; spmd && a < b->nspmd; a++) {
      int ax = sr_mesh_axis(s.mesh, b->spmd[a]);
      if (ax >= 0) per /= s.mesh->sizes[ax];
    }
  }
  uint32_t n = e->nin, no = e->nout;
  int *outb = sr_xcalloc(no + 1, sizeof *outb);
  SrVal **isp = sr_xcalloc(n + 1, sizeof *isp), **osp = sr_xcalloc(no + 1, sizeof *osp);
  const char *const *val = spmd ? b->spmd : NULL;
  int nval = spmd ? b->nspmd : 0;
  int rc = -1;
  for (uint32_t i = 0; i < n; i++)
    isp[i] = bd[i] != SR_NOT_MAPPED ? spec_inserted(s.in_specs->seq.items[i], bd[i], val, nval)
                                    : sr_ref(s.in_specs->seq.items[i]);
  /* the body, batched in the map's manual context over its share of the
     batch (whose axis no mesh axis shards inside) */
  Ctx c;
  if (enter(ad, &s, &c) < 0) goto done;
  int64_t size = b->size;
  int nspmd = b->nspmd;
  SrAxes vary = b->arg_vary;
  /* under spmd_axis_name the batch dims are split over those manual axes:
     the body's batched operands vary over them (their in_specs name them) */
  for (int a = 0; spmd && a < b->nspmd; a++) {
    int ax = sr_mesh_axis(s.mesh, b->spmd[a]);
    if (ax >= 0) b->arg_vary |= (SrAxes)1 << ax;
  }
  b->size = per;
  /* a vmapped-away Explicit axis stays the batch axis' inside the body
     (new_axis_data = trace.axis_data), where it is still Explicit */
  if (!b->spmd_explicit) b->nspmd = 0;
  SrJaxpr *J = sr_batch_jaxpr_axes(b, s.body, bd, NULL, outb);
  b->size = size;
  b->nspmd = nspmd;
  b->arg_vary = vary;
  leave(ad, &c);
  if (!J) goto done;
  /* _batch_out_specs: nor in out_specs */
  for (uint32_t i = 0; b->nspmd && i < no; i++) {
    const SrSpec *sp = spec_of(s.out_specs->seq.items[i]);
    for (int k = 0; sp && k < sp->n; k++)
      for (int q = 0; q < sp->e[k].n; q++)
        for (int a = 0; a < b->nspmd; a++)
          if (sp->e[k].names[q] == b->spmd[a]) {
            sr_raise(I, "ValueError", spmd ? "vmap spmd_axis_name cannot appear in shard_map out_specs"
                                           : "vmapped away explicit mesh axis cannot appear in shard_map out_specs");
            sr_program_unref(J->prog);
            goto done;
          }
  }
  for (uint32_t i = 0; i < no; i++)
    osp[i] = outb[i] != SR_NOT_MAPPED ? spec_inserted(s.out_specs->seq.items[i], outb[i], val, nval)
                                      : sr_ref(s.out_specs->seq.items[i]);
  SrVal *ist = specs_tuple((int)n, isp), *ost = specs_tuple((int)no, osp);
  memset(isp, 0, (n + 1) * sizeof *isp);
  memset(osp, 0, (no + 1) * sizeof *osp);
  SrVal *r = bind_smap(ad, e, J, ist, ost, (int)n, x);
  sr_unref(ist);
  sr_unref(ost);
  sr_program_unref(J->prog);
  if (r) {
    for (uint32_t i = 0; i < no; i++) {
      y[i] = r->seq.items[i];
      ybd[i] = outb[i];
    }
    rc = 0;
  }
done:
  for (uint32_t i = 0; i < n; i++) sr_unref(isp[i]);
  for (uint32_t i = 0; i < no; i++) sr_unref(osp[i]);
  free(isp);
  free(osp);
  free(outb);
  return rc;
}

/* ==== registration ==== */

static void type_rules_manual(void) {
  sr_set_type_rule(SR_P_shard_map, type_shard_map);
  sr_set_type_rule(SR_P_psum, type_psum);
  sr_set_type_rule(SR_P_pmean, type_psum);
  sr_set_type_rule(SR_P_psum_invariant, type_psum_invariant);
  sr_set_type_rule(SR_P_pmax, type_pmax);
  sr_set_type_rule(SR_P_pmin, type_pmax);
  sr_set_type_rule(SR_P_unreduced_psum, type_unreduced_reduce);
  sr_set_type_rule(SR_P_unreduced_pmax, type_unreduced_reduce);
  sr_set_type_rule(SR_P_unreduced_pmin, type_unreduced_reduce);
  sr_set_type_rule(SR_P_pvary, type_pvary);
  sr_set_type_rule(SR_P_preduced, type_preduced);
  sr_set_type_rule(SR_P_vary_unreduced_cast, type_vary_unreduced);
  sr_set_type_rule(SR_P_reduced_vary_cast, type_reduced_vary);
  sr_set_type_rule(SR_P_ppermute, type_ppermute);
  sr_set_type_rule(SR_P_pbroadcast, type_ppermute);
  sr_set_type_rule(SR_P_all_gather, type_all_gather);
  sr_set_type_rule(SR_P_all_gather_invariant, type_all_gather_invariant);
  sr_set_type_rule(SR_P_all_gather_reduced, type_all_gather_reduced);
  sr_set_type_rule(SR_P_reduce_scatter, type_reduce_scatter);
  sr_set_type_rule(SR_P_unreduced_reduce_scatter, type_unreduced_reduce_scatter);
  sr_set_type_rule(SR_P_all_to_all, type_all_to_all);
  sr_set_type_rule(SR_P_axis_index, type_axis_index);
}

static void eval_rules_manual(void) {
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

static void ad_rules_manual(void) {
  static const struct {
    int id;
    SrTransposeRule tr;
  } lin[] = {
      {SR_P_psum_invariant, tr_psum_invariant},
      {SR_P_pvary, tr_pvary},
      {SR_P_psum, tr_psum},
      {SR_P_reduced_vary_cast, tr_reduced_vary_cast},
      {SR_P_vary_unreduced_cast, tr_vary_unreduced_cast},
      {SR_P_preduced, tr_preduced},
      {SR_P_unreduced_psum, tr_unreduced_psum},
      {SR_P_all_gather, tr_all_gather},
      {SR_P_all_gather_invariant, tr_all_gather_invariant},
      {SR_P_reduce_scatter, tr_reduce_scatter},
      {SR_P_all_gather_reduced, tr_all_gather_reduced},
      {SR_P_unreduced_reduce_scatter, tr_unreduced_reduce_scatter},
      {SR_P_ppermute, tr_ppermute},
      {SR_P_all_to_all, tr_all_to_all},
  };
  for (size_t i = 0; i < sizeof lin / sizeof *lin; i++) {
    sr_ad_set_jvp(lin[i].id, sr_ad_jvp_linear);
    sr_ad_set_transpose(lin[i].id, lin[i].tr);
  }
}

#undef PAIR

static void ad_rules_shard_map(void) {
  sr_ad_set_jvp(SR_P_shard_map, jvp_shard_map);
  sr_ad_set_transpose(SR_P_shard_map, tr_shard_map);
}

#undef TR

#undef JVP

static void comm_rules_manual(void) {
  static const struct {
    int id;
    SrCommRule comm;
  } rows[] = {
      {SR_P_psum, comm_all_reduce},
      {SR_P_psum_invariant, comm_all_reduce},
      {SR_P_unreduced_psum, comm_all_reduce},
      {SR_P_pmax, comm_all_reduce},
      {SR_P_pmin, comm_all_reduce},
      {SR_P_unreduced_pmax, comm_all_reduce},
      {SR_P_unreduced_pmin, comm_all_reduce},
      {SR_P_all_gather, comm_all_gather},
      {SR_P_all_gather_invariant, comm_all_gather},
      {SR_P_all_gather_reduced, comm_all_gather},
      {SR_P_reduce_scatter, comm_reduce_scatter},
      {SR_P_unreduced_reduce_scatter, comm_reduce_scatter},
      {SR_P_ppermute, comm_ppermute},
      {SR_P_all_to_all, comm_all_to_all},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) sr_prims[rows[i].id].comm = rows[i].comm;
}

/* vmap: the collectives' batchers of parallel.py. */
static void batch_rules_manual(void) {
  static const int reduce[] = {SR_P_psum, SR_P_psum_invariant, SR_P_pmax, SR_P_pmin};
  for (size_t i = 0; i < sizeof reduce / sizeof *reduce; i++) sr_prims[reduce[i]].batch = batch_all_reduce;
  sr_prims[SR_P_pvary].batch = batch_cast;
  sr_prims[SR_P_ppermute].batch = batch_ppermute;
  sr_prims[SR_P_all_gather].batch = batch_all_gather;
  sr_prims[SR_P_all_gather_invariant].batch = batch_all_gather;
  sr_prims[SR_P_axis_index].batch = batch_axis_index;
  sr_prims[SR_P_shard_map].batch = batch_shard_map;
  sr_prims[SR_P_reduce_scatter].batch = batch_reduce_scatter;
  sr_prims[SR_P_all_to_all].batch = batch_all_to_all;
  sr_prims[SR_P_pbroadcast].batch = batch_pbroadcast;
  static const int unimpl[] = {SR_P_unreduced_psum, SR_P_unreduced_pmax, SR_P_unreduced_pmin, SR_P_preduced,
                               SR_P_vary_unreduced_cast};
  for (size_t i = 0; i < sizeof unimpl / sizeof *unimpl; i++) sr_prims[unimpl[i]].batch = batch_unimplemented;
  sr_prims[SR_P_all_gather_reduced].batch = batch_file_issue;
  sr_prims[SR_P_unreduced_reduce_scatter].batch = batch_file_issue;
}

/* The HLO opcodes of the optimizer's listing (opt/opt.c): what XLA lowers
   each collective to. */
static void hlo_names_manual(void) {
  static const struct {
    int id;
    const char *hlo;
  } rows[] = {
      {SR_P_all_gather, "all-gather"},
      {SR_P_all_gather_invariant, "all-gather"},
      {SR_P_all_gather_reduced, "all-gather"},
      {SR_P_psum, "all-reduce"},
      {SR_P_psum_invariant, "all-reduce"},
      {SR_P_unreduced_psum, "all-reduce"},
      {SR_P_pmax, "all-reduce"},
      {SR_P_pmin, "all-reduce"},
      {SR_P_reduce_scatter, "reduce-scatter"},
      {SR_P_unreduced_reduce_scatter, "reduce-scatter"},
      {SR_P_ppermute, "collective-permute"},
      {SR_P_all_to_all, "all-to-all"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) sr_prims[rows[i].id].hlo = rows[i].hlo;
}

void sr_lax_manual_init(void) {
  hlo_names_manual();
  type_rules_manual();
  eval_rules_manual();
  ad_rules_manual();
  sr_ad_set_jvp(SR_P_axis_index, sr_ad_jvp_zero);
  ad_rules_shard_map();
  comm_rules_manual();
  batch_rules_manual();
}
