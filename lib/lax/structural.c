/* structural.c: the rules of the structural primitives: broadcast_in_dim, reshape,
 * transpose, squeeze, expand_dims, rev, slices, pad, concatenate, split,
 * gather, sort, iota, stack and unstack (lax/lax.py, lax/slicing.py).
 *
 * The family's helpers, then each primitive's (or each group sharing
 * rules') type, eval, JVP and transpose rules and communication note side
 * by side in that order under its heading, then the family's registration
 * sr_lax_structural_init (lax/lax.h says what a family file holds and uses).
 */
#include "lax/lax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "exec/eval.h"
#include "exec/prng.h"
#include "exec/ew_pieces.h"
#include "exec/kern.h"
#include "check/rule.h"
#include "core/core.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"

/* ==== the family's helpers ==== */

/* type rules of the primitives that move data around:
 * broadcast_in_dim, reshape, transpose, squeeze, expand_dims, rev,
 * concatenate, split, pad, slice, dynamic_slice, dynamic_update_slice,
 * iota and sort.
 *
 * A result dimension takes the spec of the operand dimension it comes from
 * (reference 3.6-3.10); reshape has its own split/merge rules, and the
 * slicing family keeps the operand's sharding as long as every changed
 * sharded dimension stays divisible.
 */

/* Python's floor division, for negative sizes in pad and slice. */

/* A message's (1, 2) and shape (8, 4), into b: built only when an error is
   reported, not on every equation. */
static const char *ints_s(SrBuf *b, const int64_t *v, int n) {
  sr_ints_str(b, v, n);
  return sr_buf_str(b);
}

static const char *shape_s(SrBuf *b, const SrType *t) {
  sr_shape_str(b, t);
  return sr_buf_str(b);
}

/* A builder for a result of the given shape on the rule's mesh, with no
   sharding yet. */
static void builder_shape(SrTypeBuilder *b, const SrType *like, const int64_t *shape, int ndim, const SrStd *s) {
  memset(b, 0, sizeof *b);
  b->dtype = like->dtype;
  b->weak = like->weak;
  b->mem = like->mem;
  b->mesh = like->mesh ? like->mesh : s->mesh;
  b->ndim = (uint8_t)ndim;
  for (int i = 0; i < ndim; i++) b->dims[i].size = shape[i];
}

/* Copies dim j's spec of type t to dim i of b (whose mesh is t's). */
static void take_spec(SrTypeBuilder *b, int i, const SrType *t, int j) {
  b->dims[i].nax = t->dims[j].nax;
  memcpy(b->dims[i].ax, t->dims[j].ax, SR_MAX_DIM_AXES);
  if (t->mesh) b->mesh = t->mesh;
}

/* The ur rule of every primitive that passes both sets through
   (transpose, squeeze, pad, slice, ...). */
static int pass_ur(SrTypeCtx *cx, const SrStd *s, const SrType *x, SrTypeBuilder *b) {
  b->unreduced = b->reduced = 0;
  b->ukind = SR_UK_NONE;
  if (s->mode == SR_MODE_AUTO) return 0;
  if (sr_getu(cx, x, &b->unreduced) < 0) return -1;
  b->reduced = sr_getr(cx, x);
  return 0;
}

static int64_t spec_size(const SrType *t, int d) {
  int64_t n = 1;
  for (int k = 0; k < t->dims[d].nax; k++) n *= t->mesh->sizes[t->dims[d].ax[k]];
  return n;
}

/* str of a spec entry: X, or ('X', 'Y') */
static void entry_str(SrBuf *out, const SrType *t, int d) {
  if (t->dims[d].nax == 1)
    sr_buf_puts(out, t->mesh->names[t->dims[d].ax[0]]);
  else
    sr_dim_spec_str(out, t, d);
}

static void builder_shape_str(SrBuf *out, const SrTypeBuilder *b) {
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < b->ndim; i++) sh[i] = b->dims[i].size;
  sr_ints_str(out, sh, b->ndim);
}

/* slicing._get_sharding_for_varying_out_shape: the operand's sharding (P()
   if every result dimension is 1), but a sharded dimension that changes
   size must stay divisible by its axes. */
static int varying_out_sharding(SrTypeCtx *cx, const SrType *x, SrTypeBuilder *b, const char *name) {
  int all1 = 1;
  for (int i = 0; i < b->ndim; i++)
    if (b->dims[i].size != 1) all1 = 0;
  for (int i = 0; i < b->ndim; i++) b->dims[i].nax = 0;
  if (all1) return 0;
  for (int i = 0; i < b->ndim && i < x->ndim; i++) {
    const SrDim *d = &x->dims[i];
    if (d->size != b->dims[i].size && d->nax && !x->mesh->unsized) {
      int64_t sz = spec_size(x, i);
      if (sz && b->dims[i].size % sz != 0) {
        SrBuf sp = SR_BUF_INIT, ts = SR_BUF_INIT, sh = SR_BUF_INIT;
        entry_str(&sp, x, i);
        sr_type_str(&ts, x, 1);
        builder_shape_str(&sh, b);
        sr_terr(cx, "ShardingTypeError",
                "%s on sharded dims where out dim (%lld) is not divisible by mesh axes (%lld) with spec (%s) is not "
                "implemented. Got input type=%s and output shape=%s",
                name, (long long)b->dims[i].size, (long long)sz, sr_buf_str(&sp), sr_buf_str(&ts), sr_buf_str(&sh));
        sr_buf_free(&sp);
        sr_buf_free(&ts);
        sr_buf_free(&sh);
        return -1;
      }
    }
  }
  for (int i = 0; i < b->ndim && i < x->ndim; i++) take_spec(b, i, x, i);
  return 0;
}

/* Reads a sharding param, or (when the printer dropped it) the sharding
   of the written result. */
static int given_sharding(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int ndim, SrShardSpec *out,
                          int *present) {
  *present = 0;
  if (sr_rparam(e, key)) return sr_rparam_sharding(cx, e, key, ndim, out, present);
  const SrType *w = sr_written(e, 0);
  if (w && w->ndim == ndim) {
    sr_shard_of_type(w, out);
    *present = 1;
  }
  return 0;
}

/* Applies a given sharding's partitions to b. */
static void apply_partitions(SrTypeBuilder *b, const SrShardSpec *g) {
  if (g->mesh) b->mesh = g->mesh;
  for (int i = 0; i < b->ndim; i++) {
    b->dims[i].nax = i < g->ndim ? g->nax[i] : 0;
    memcpy(b->dims[i].ax, g->ax[i], SR_MAX_DIM_AXES);
  }
}

static int bad_dims(SrTypeCtx *cx, const char *fmt, const int64_t *v, int n, const SrType *x) {
  SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
  sr_ints_str(&a, v, n);
  if (x) sr_shape_str(&c, x);
  sr_terr(cx, "TypeError", fmt, sr_buf_str(&a), sr_buf_str(&c));
  sr_buf_free(&a);
  sr_buf_free(&c);
  return -1;
}

static int shape_pair_error(SrTypeCtx *cx, const char *fmt, const int64_t *a, const int64_t *b, int n) {
  SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
  sr_ints_str(&x, a, n);
  sr_ints_str(&y, b, n);
  sr_terr(cx, "TypeError", fmt, sr_buf_str(&x), sr_buf_str(&y));
  sr_buf_free(&x);
  sr_buf_free(&y);
  return -1;
}

/* lax._check_shapelike's bound on the sizes a primitive's shape param
   names; a negative size would otherwise reach the allocator. */
static int check_nonnegative(SrTypeCtx *cx, const char *fun, const char *arg, const int64_t *v, int n) {
  for (int i = 0; i < n; i++)
    if (v[i] < 0) {
      SrBuf b = SR_BUF_INIT;
      sr_terr(cx, "TypeError", "%s %s must have every element be nonnegative, got %s.", fun, arg, ints_s(&b, v, n));
      sr_buf_free(&b);
      return -1;
    }
  return 0;
}

/* eval rules of the structural primitives.
 *
 * Each rule picks, for every operand, the layout under which the result's
 * shard is a function of the operands' shards alone: dims that map one to
 * one onto result dims take the result's axes, dims the operation reads
 * across (a sliced, padded, reversed or concatenated dim) are gathered.
 * The result is computed in the layout that gives ("natural"), then
 * redistributed to its type's layout, which for the usual cases is the
 * same or a local slice away.  reshape, squeeze and expand_dims move no
 * data when the blocks line up. */

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

/* JVP and transpose rules of contractions, reductions
 * and the structural primitives (lax/lax.py, lax/slicing.py).
 *
 * The transposes take their output shardings from the cotangent type of
 * the operand they produce a cotangent for: that is how a dot_general
 * whose weights were {R:X} comes out {U:X} with no communication, and how
 * a reduce_sum's cotangent is broadcast back onto the operand's sharding.
 */

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

/* An int tuple param (NULL or None: n = 0). */
static int param_ints(const SrEqn *e, const char *key, int64_t *out, int max) {
  SrVal *v = param(e, key);
  int n = 0;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (sr_val_ints(v, out, max, &n) < 0) return -1;
  return n;
}

static int64_t param_int(const SrEqn *e, const char *key, int64_t dflt) {
  SrVal *v = param(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? v->i : dflt;
}

static const SrType *ct_of(const SrEqn *e, int i) { return sr_ad_ct_type(e->in[i]->type); }

static void argsort(const int64_t *v, int n, int64_t *out) {
  for (int i = 0; i < n; i++) out[i] = i;
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && v[out[k - 1]] > v[out[k]]; k--) {
      int64_t s = out[k];
      out[k] = out[k - 1];
      out[k - 1] = s;
    }
}

static int contains(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

static SrVal *triples(const int64_t *lo, const int64_t *hi, const int64_t *in, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) {
    int64_t v[3] = {lo[i], hi[i], in[i]};
    sr_seq_push(NULL, t, sr_ad_ints(v, 3));
  }
  return t;
}

/* The batching rules' helpers (ad/batch.h has batching.py's moveaxis,
   matchaxis and bdim_at_front). */
#define BATCH(name) static int name(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd)

/* Puts a single result (or each of a multi-result primitive's) in y with
   batch dim d. */
static int batch_out(const SrEqn *e, SrVal *r, int d, SrVal **y, int *ybd) {
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) {
    y[i] = e->prim->flags & SR_PF_MULTI ? r->seq.items[i] : r;
    ybd[i] = d;
  }
  return 0;
}

/* The first mapped input's batch size. */
static int64_t batch_size(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd) {
  for (uint32_t i = 0; i < e->nin; i++)
    if (bd[i] != SR_NOT_MAPPED) return sr_ad_type(&b->ad, x[i])->dims[bd[i]].size;
  return b->size;
}

/* v (an int tuple) with `by` added to each entry, and `first` (when not
   negative) in front. */
static SrVal *shifted(const int64_t *v, int n, int64_t by, int64_t first) {
  int64_t o[SR_MAX_RANK + 1];
  int k = 0;
  if (first >= 0) o[k++] = first;
  for (int i = 0; i < n && k <= SR_MAX_RANK; i++) o[k++] = v[i] + by;
  return sr_ad_ints(o, k);
}

/* batching.get_sharding_for_vmap(axis_data, sharding, 0): a sharding
   param with the batch axis' entry (spmd_axis_name, else None) in front;
   None stays None. */
static SrVal *vmap_sharding(SrBatch *b, const SrVal *sh) {
  if (!sh || sh->kind != SR_V_SHARDING) return sr_none();
  const SrSpec *s = sh->sh.spec;
  SrSpecEntry ent[SR_MAX_RANK + 1];
  SrSpec ns = *s;
  ns.n = s->n < SR_MAX_RANK ? s->n + 1 : SR_MAX_RANK + 1;
  ns.e = ent;
  ent[0].n = b->nspmd;
  ent[0].names = b->spmd;
  if (ns.n > 1) memcpy(ent + 1, s->e, (size_t)(ns.n - 1) * sizeof *ent);
  return sr_sharding_val(NULL, sh->sh.mesh, &ns, sh->sh.memory_kind);
}

/* lax.broadcast(x, (size,)) of an unmapped x; with out_sharding the
   new axis sharded as dim d of `like` and x's own dims as they are
   (concatenate's rule), else none.  Binds through b (whose pool keeps the
   result): a copy of b is only for the type. */
static SrVal *broadcast_front(SrBatch *b, int64_t size, SrVal *x, const SrType *like, int d) {
  const SrType *t = sr_ad_type(&b->ad, x);
  if (!t) return NULL;
  SrBatch plain = *b;
  plain.size = size;
  plain.nspmd = 0;
  SrTypeBuilder tb;
  sr_type_builder(&tb, sr_batch_mapped_type(&plain, t, 0));
  if (like && like->dims[d].nax) {
    tb.dims[0].nax = like->dims[d].nax;
    memcpy(tb.dims[0].ax, like->dims[d].ax, SR_MAX_DIM_AXES);
    if (!tb.mesh) tb.mesh = like->mesh;
  }
  int64_t dims[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) dims[i] = i + 1;
  return sr_ad_broadcast_in_dim(&b->ad, x, sr_type_get(&tb), dims, t->ndim,
                                like && sr_ad_ctx_mesh(&b->ad)->n > 0);
}

/* ==== broadcast_in_dim ==== */

/* lax.broadcast_in_dim_p: operand dimension i goes to result dimension
   broadcast_dimensions[i] and keeps its spec; new dimensions are None.  The
   printer drops `shape` and `sharding`, so a parsed equation takes them
   from its binder. */
static int type_broadcast_in_dim(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (e->nin > 1 && e->nout == 1 && sr_written(e, 0)) {
    /* JAX's removed dynamic shapes (jax_dynamic_shapes): the sizes of the
       None entries of `shape` come as integer scalar operands and the
       binder names them; only the operands can be checked */
    for (uint32_t i = 1; i < e->nin; i++)
      if (e->in[i]->ndim || !sr_dtype_in(e->in[i]->dtype, SR_DC_INT))
        return sr_terr(cx, "TypeError", "broadcast_in_dim: a dynamic size must be an integer scalar, got %s",
                       sr_type_short(e->in[i]));
    out[0] = sr_written(e, 0);
    return 0;
  }
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t shape[SR_MAX_RANK], bd[SR_MAX_RANK];
  int n = 0, nb = 0;
  const SrType *w = sr_written(e, 0);
  if (sr_rparam(e, "shape")) {
    if (sr_rparam_ints(cx, e, "shape", 1, shape, SR_MAX_RANK, &n) < 0) return -1;
  } else if (w) {
    n = w->ndim;
    for (int i = 0; i < n; i++) shape[i] = w->dims[i].size;
  } else {
    return sr_terr(cx, "TypeError", "broadcast_in_dim equation has no 'shape' param");
  }
  if (check_nonnegative(cx, "broadcast_in_dim", "shape", shape, n) < 0) return -1;
  if (sr_rparam_ints(cx, e, "broadcast_dimensions", 0, bd, SR_MAX_RANK, &nb) < 0) return -1;
  /* _broadcast_in_dim_shape_rule */
  SrBuf sh = SR_BUF_INIT, bds = SR_BUF_INIT, os = SR_BUF_INIT;
  int rc = 0;
  int in_range = 1, dup = 0;
  for (int i = 0; i < nb; i++) {
    if (bd[i] < 0 || bd[i] >= n) in_range = 0;
    for (int k = 0; k < i; k++)
      if (bd[k] == bd[i]) dup = 1;
  }
  if (x->ndim != nb)
    rc = sr_terr(cx, "TypeError",
                 "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
                 "broadcast_dimensions %s for operand ndim %d.",
                 ints_s(&bds, bd, nb), x->ndim);
  else if (n < x->ndim)
    rc = sr_terr(cx, "TypeError",
                 "broadcast_in_dim target broadcast shape must have equal or higher rank to the operand shape; got "
                 "operand ndim %d and target broadcast ndim %d.",
                 x->ndim, n);
  else if (!in_range)
    rc = sr_terr(cx, "TypeError",
                 "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got %s for operand "
                 "ndim %d and shape %s.",
                 ints_s(&bds, bd, nb), x->ndim, ints_s(&sh, shape, n));
  for (int i = 0; rc == 0 && i < nb; i++) {
    int64_t d = x->dims[i].size;
    if (d != 1 && d != shape[bd[i]] && !x->dims[i].sym)
      rc = sr_terr(cx, "TypeError",
                   "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their corresponding "
                   "dimensions in the target broadcast shape; got operand of shape %s, target broadcast shape %s, "
                   "broadcast_dimensions %s ",
                   shape_s(&os, x), ints_s(&sh, shape, n), ints_s(&bds, bd, nb));
  }
  if (rc == 0 && dup)
    rc = sr_terr(cx, "TypeError", "broadcast_in_dim broadcast_dimensions must not contain duplicates, got broadcast_dimensions %s",
                 ints_s(&bds, bd, nb));
  sr_buf_free(&sh);
  sr_buf_free(&bds);
  sr_buf_free(&os);
  if (rc < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrShardSpec g;
  int given = 0;
  if (given_sharding(cx, e, "sharding", n, &g, &given) < 0) return -1;
  SrTypeBuilder b;
  builder_shape(&b, x, shape, n, &s);
  if (w && w->ndim == n && !sr_rparam(e, "shape"))
    for (int i = 0; i < n; i++) b.dims[i].sym = w->dims[i].sym;
  if (s.mode == SR_MODE_EXPLICIT) {
    if (given) {
      apply_partitions(&b, &g);
    } else {
      for (int i = 0; i < nb; i++) take_spec(&b, (int)bd[i], x, i);
    }
  }
  if (s.mode != SR_MODE_AUTO) {
    /* _broadcast_in_dim_unreduced_rule / _reduced_rule: a given sharding
       decides in explicit mode */
    if (given && s.mode == SR_MODE_EXPLICIT) {
      if (g.unreduced && g.ukind != SR_UK_SUM) {
        SrBuf sb = SR_BUF_INIT;
        SrVal *spec = sr_shard_to_spec_val(&g);
        sr_val_repr(&sb, spec);
        sr_unref(spec);
        sr_terr(cx, "ValueError",
                "`out_sharding` passed to `broadcast_in_dim` can only contain unreduced of kind `sum`. Got "
                "out_sharding=%s",
                sr_buf_str(&sb));
        sr_buf_free(&sb);
        return -1;
      }
      b.unreduced = g.unreduced;
      b.reduced = g.reduced;
    } else if (pass_ur(cx, &s, x, &b) < 0) {
      return -1;
    }
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

typedef struct BcastArg {
  int nd;
  int64_t in_view[SR_MAX_RANK]; /* the operand's shard as out-rank */
  int64_t step[SR_MAX_RANK];
  size_t es;
} BcastArg;

static int bcast_fn(SrShardIO *io) {
  BcastArg *b = io->arg;
  int64_t zero[SR_MAX_RANK] = {0};
  if (io->in[0]->nbytes == b->es) {
    /* a scalar's broadcast: a fill (exec/ew_pieces.h) */
    sr_kern_fill_pieces(b->es, io->out[0]->nbytes / b->es, io->in[0]->data, io->out[0]->data);
    return 0;
  }
  sr_kern_strided(b->es, b->nd, b->in_view, zero, b->step, io->out_shape[0], io->in[0]->data, io->out[0]->data);
  return 0;
}

/* A broadcast of a scalar zero (jnp.zeros, zeros_like): r's shards are
   shared zeros (exec/array.h), as XLA makes zeros a constant.  0 when x
   is anything else, or memory is short (the broadcast then fills and
   reports it). */
static int zeros_of(SrEvalCtx *cx, const SrArray *x, SrArray *r) {
  size_t es = esize(x), nbytes = (size_t)sr_layout_shard_numel(r->layout) * es;
  int any = 0;
  for (int p = 0; p < x->ndev; p++) {
    /* every device's element: a scalar's may differ (varying, unreduced),
       and one element per device may be a sharded vector */
    const SrBuffer *xs = x->shard[p];
    if (!xs) continue;
    if (xs->nbytes != es) return 0;
    for (size_t k = 0; k < es; k++)
      if (((const unsigned char *)xs->data)[k]) return 0;
    any = 1;
  }
  if (!any || nbytes < es) return 0;
  for (int p = 0; p < r->ndev; p++) {
    if (!sr_comm_local(cx->comm, r->mesh, p)) continue;
    if (!(r->shard[p] = sr_buffer_zeros_shared(nbytes))) {
      for (int q = 0; q < p; q++) {
        sr_buffer_unref(r->shard[q]);
        r->shard[q] = NULL;
      }
      return 0;
    }
  }
  return 1;
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
  int rc = zeros_of(cx, xin, r) ? 0 : sr_ev_map(cx, 1, &xin, 1, &r, 0, bcast_fn, &b);
  sr_array_unref(xin);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

TR(tr_broadcast_in_dim) {
  if (x[0]) return 0; /* transpose wrt a literal */
  const SrType *ot = ct_of(e, 0);
  int64_t bdims[SR_MAX_RANK];
  int nbd = param_ints(e, "broadcast_dimensions", bdims, SR_MAX_RANK);
  const SrType *outt = e->out[0]->type;
  /* unit dims: size 1 and not sharded */
  int64_t unit[SR_MAX_RANK], bd2[SR_MAX_RANK], axes[SR_MAX_RANK];
  int nunit = 0, nbd2 = 0, na = 0;
  for (int i = 0; i < ot->ndim; i++)
    if (ot->dims[i].size == 1 && ot->dims[i].nax == 0) unit[nunit++] = i;
  for (int i = 0; i < nbd; i++)
    if (!contains(unit, nunit, i)) bd2[nbd2++] = bdims[i];
  for (int i = 0; i < outt->ndim; i++)
    if (!contains(bd2, nbd2, i)) axes[na++] = i;
  SrTypeBuilder b;
  sr_type_builder(&b, ot);
  int nd = 0;
  for (int i = 0; i < ot->ndim; i++)
    if (!contains(unit, nunit, i)) b.dims[nd++] = ot->dims[i];
  b.ndim = (uint8_t)nd;
  SrVal *s = sr_ad_reduce_sum(ad, ct[0], axes, na, sr_type_get(&b));
  cx[0] = sr_ad_expand_dims(ad, s, unit, nunit);
  return cx[0] ? 0 : -1;
}

BATCH(batch_broadcast_in_dim) {
  /* _broadcast_in_dim_batch_rule (its operand is the one input) */
  int64_t shape[SR_MAX_RANK], dims[SR_MAX_RANK];
  int ns = param_ints(e, "shape", shape, SR_MAX_RANK), nd = param_ints(e, "broadcast_dimensions", dims, SR_MAX_RANK);
  if (ns < 0 || nd < 0 || e->nin != 1) return sr_batch_no_rule(b, e->prim);
  SrVal *op = sr_batch_moveaxis(b, x[0], bd[0], 0);
  const SrType *t = sr_ad_type(&b->ad, op);
  if (!t) return -1;
  return batch_out(e,
                   sr_batch_bind_with(b, e, 1, &op, "shape", shifted(shape, ns, 0, t->dims[0].size), "broadcast_dimensions",
                          shifted(dims, nd, 1, 0), "sharding", vmap_sharding(b, param(e, "sharding")), NULL),
                   0, y, ybd);
}

/* ==== reshape, squeeze, expand_dims ==== */

/* expand_dims (an older primitive; lax.expand_dims is broadcast_in_dim):
   size-1 dimensions with no sharding are inserted. */
static int type_expand_dims(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t dims[SR_MAX_RANK];
  int nd = 0;
  if (sr_rparam_ints(cx, e, "dimensions", 1, dims, SR_MAX_RANK, &nd) < 0) return -1;
  int rank = x->ndim + nd;
  if (rank > SR_MAX_RANK) return sr_terr(cx, "TypeError", "expand_dims: too many dimensions");
  int isnew[SR_MAX_RANK] = {0};
  for (int i = 0; i < nd; i++) {
    int64_t d = dims[i] < 0 ? dims[i] + rank : dims[i];
    if (d < 0 || d >= rank || isnew[d]) return bad_dims(cx, "repeated axis in lax.expand_dims: %s%s", dims, nd, NULL);
    isnew[d] = 1;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0, k = 0; i < rank; i++) shape[i] = isnew[i] ? 1 : x->dims[k++].size;
  SrTypeBuilder b;
  builder_shape(&b, x, shape, rank, &s);
  for (int i = 0, k = 0; i < rank; i++) {
    if (isnew[i]) continue;
    b.dims[i].sym = x->dims[k].sym;
    if (s.mode == SR_MODE_EXPLICIT) take_spec(&b, i, x, k);
    k++;
  }
  if (pass_ur(cx, &s, x, &b) < 0 || sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

static int reshape_error(SrTypeCtx *cx, const SrType *x, const int64_t *ns, int n) {
  SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
  sr_aval_str(&a, x);
  sr_ints_str(&c, ns, n);
  sr_terr(cx, "ShardingTypeError",
          "This reshape is not supported. Please specify the sharding of the output via the `out_sharding` argument "
          "of jax.lax.reshape. Got operand type: %s, new sizes: %s",
          sr_buf_str(&a), sr_buf_str(&c));
  sr_buf_free(&a);
  sr_buf_free(&c);
  return -1;
}

/* One piece of lax._split_on_one_axis's result: a dimension kept as is
   (n == 0), or split into the n sizes from `first`. */
typedef struct Piece {
  int first, n;
} Piece;

/* lax._split_on_one_axis on the non-1 sizes: does exactly one dimension of
   `a` become several consecutive dimensions of `b`?  Returns 1 with the
   pieces (one per dimension of a), 0 if not, -1 for a second split
   (ReshapeExplicitError). */
static int split_on_one_axis(const int64_t *a, int na, const int64_t *b, int nb, Piece *pieces) {
  if (nb <= na) return 0;
  int i = 0, j = 0, count = 0;
  while (j < nb) {
    if (i >= na) return 0; /* sizes that do not multiply up (Python would raise IndexError) */
    if (a[i] == b[j]) {
      pieces[i].first = j;
      pieces[i].n = 0;
    } else {
      if (++count > 1) return -1;
      int64_t prod = b[j];
      int first = j;
      while (prod != a[i]) {
        if (prod > a[i] || j + 1 >= nb) return 0;
        prod *= b[++j];
      }
      pieces[i].first = first;
      pieces[i].n = j - first + 1;
    }
    i++;
    j++;
  }
  return i == na ? 1 : 0;
}

/* lax.split_partitions: hands a dimension's axes (major first) to the
   sizes o[0..no): each size takes axes while it is > 1 and divisible. */
static int split_partitions(const SrMesh *m, const uint8_t *axes, int nax, const int64_t *o, int no,
                            SrDim *res) {
  int k = 0;
  for (int i = 0; i < no; i++) {
    int64_t left = o[i];
    res[i].nax = 0;
    while (left > 1 && k < nax) {
      int64_t sz = m->sizes[axes[k]];
      if (!sz || left % sz != 0) return -1;
      left /= sz;
      res[i].ax[res[i].nax++] = axes[k++];
    }
  }
  return k == nax ? 0 : -2; /* axes left over: JAX fails an assert */
}

/* lax._reshape_sharding_rule without out_sharding.  Fills b's dims' axes;
   returns -1 after an error, 1 when the mesh's sizes would be needed but
   are unknown. */
static int reshape_sharding(SrTypeCtx *cx, const SrType *x, const int64_t *ns, int n, int has_dims,
                            SrTypeBuilder *b) {
  int all_none = 1;
  for (int i = 0; i < x->ndim; i++)
    if (x->dims[i].nax) all_none = 0;
  if (all_none) return 0;
  int64_t op1[SR_MAX_RANK], new1[SR_MAX_RANK];
  int opidx[SR_MAX_RANK], newidx[SR_MAX_RANK];
  int nop = 0, nnew = 0;
  for (int i = 0; i < x->ndim; i++)
    if (x->dims[i].size != 1) opidx[nop] = i, op1[nop++] = x->dims[i].size;
  for (int i = 0; i < n; i++)
    if (ns[i] != 1) newidx[nnew] = i, new1[nnew++] = ns[i];
  int same = nop == nnew;
  for (int i = 0; same && i < nop; i++) same = op1[i] == new1[i];
  if (same) {
    /* _split_merge_singleton_dim_sharding_rule, which zips the shape with
       the spec itself and so trips its guard when there are sets */
    if (x->unreduced | x->reduced)
      return sr_terr(cx, "ValueError",
                     "Using *pspec is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use "
                     "*spec.partitions");
    for (int i = 0; i < nop; i++) take_spec(b, newidx[i], x, opidx[i]);
    return 0;
  }
  const SrMesh *m = x->mesh;
  Piece pieces[SR_MAX_RANK];
  int r = split_on_one_axis(op1, nop, new1, nnew, pieces);
  if (r < 0) return reshape_error(cx, x, ns, n);
  if (r == 1) {
    /* _split_an_axis_sharding_rule */
    SrDim spec[SR_MAX_RANK];
    int k = 0;
    memset(spec, 0, sizeof spec);
    for (int i = 0; i < nop; i++) {
      const SrDim *d = &x->dims[opidx[i]];
      if (!pieces[i].n) {
        spec[k++] = *d;
        continue;
      }
      if (d->nax && has_dims) return reshape_error(cx, x, ns, n);
      if (d->nax) {
        if (m->unsized) return 1;
        int rc = split_partitions(m, d->ax, d->nax, new1 + pieces[i].first, pieces[i].n, spec + k);
        if (rc == -1) return reshape_error(cx, x, ns, n);
        if (rc == -2) return sr_terr(cx, "AssertionError", "reshape: the axes of a split dimension are left over");
      }
      k += pieces[i].n;
    }
    for (int i = 0, it = 0; i < n; i++) {
      if (ns[i] == 1) {
        if (i < x->ndim && x->dims[i].size == 1) take_spec(b, i, x, i);
        continue;
      }
      b->dims[i].nax = spec[it].nax;
      memcpy(b->dims[i].ax, spec[it].ax, SR_MAX_DIM_AXES);
      it++;
    }
    return 0;
  }
  r = split_on_one_axis(new1, nnew, op1, nop, pieces);
  if (r < 0) return reshape_error(cx, x, ns, n);
  if (r == 0) return reshape_error(cx, x, ns, n);
  /* _merge_an_axis_sharding_rule */
  SrDim spec[SR_MAX_RANK];
  memset(spec, 0, sizeof spec);
  for (int j = 0; j < nnew; j++) {
    if (!pieces[j].n) {
      spec[j] = x->dims[opidx[pieces[j].first]];
      continue;
    }
    /* the merged dims' axes, flattened, trailing Nones stripped */
    uint8_t axes[SR_MAX_RANK * SR_MAX_DIM_AXES];
    int nax = 0, hole = 0, none_seen = 0;
    for (int q = 0; q < pieces[j].n; q++) {
      const SrDim *d = &x->dims[opidx[pieces[j].first + q]];
      if (!d->nax) {
        none_seen = 1;
        continue;
      }
      if (none_seen) hole = 1;
      for (int a = 0; a < d->nax; a++) axes[nax++] = d->ax[a];
    }
    if (!nax) continue;
    if (has_dims || hole) return reshape_error(cx, x, ns, n);
    if (nax > SR_MAX_DIM_AXES) return reshape_error(cx, x, ns, n);
    if (m->unsized) {
      /* one result dimension takes all the axes; only the divisibility
         is unknown */
      spec[j].nax = (uint8_t)nax;
      memcpy(spec[j].ax, axes, (size_t)nax);
      continue;
    }
    int rc = split_partitions(m, axes, nax, &new1[j], 1, &spec[j]);
    if (rc == -1) return reshape_error(cx, x, ns, n);
    if (rc == -2) return sr_terr(cx, "AssertionError", "reshape: the axes of a merged dimension are left over");
  }
  for (int i = 0, it = 0; i < n; i++) {
    if (ns[i] == 1) {
      if (i < x->ndim && x->dims[i].size == 1) take_spec(b, i, x, i);
      continue;
    }
    b->dims[i].nax = spec[it].nax;
    memcpy(b->dims[i].ax, spec[it].ax, SR_MAX_DIM_AXES);
    it++;
  }
  return 0;
}

/* lax.reshape_p (reference 3.6). */
static int type_reshape(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t ns[SR_MAX_RANK], dims[SR_MAX_RANK];
  int n = 0, nd = 0;
  if (sr_rparam_ints(cx, e, "new_sizes", 1, ns, SR_MAX_RANK, &n) < 0) return -1;
  if (sr_rparam_ints(cx, e, "dimensions", 0, dims, SR_MAX_RANK, &nd) < 0) return -1;
  SrVal *dv = sr_rparam(e, "dimensions");
  int has_dims = dv && dv->kind != SR_V_NONE;
  for (int i = 0; i < n; i++)
    if (ns[i] < 0) return bad_dims(cx, "reshape new_sizes must all be positive, got %s.%s", ns, n, NULL);
  if (has_dims) {
    int ok = nd == x->ndim, seen[SR_MAX_RANK] = {0};
    for (int i = 0; ok && i < nd; i++) {
      if (dims[i] < 0 || dims[i] >= x->ndim || seen[dims[i]]) ok = 0;
      else seen[dims[i]] = 1;
    }
    if (!ok)
      return bad_dims(cx, "reshape dimensions must be a permutation of operand dimensions, got dimensions %s for shape %s.",
                      dims, nd, x);
  }
  /* XLA's check, which jnp words as numpy does */
  int64_t numel = sr_type_numel(x), newn = sr_shape_numel(n, ns);
  if (newn < 0) return sr_terr_too_big(cx); /* the sizes are not negative: their product overflows */
  if (numel >= 0 && numel != newn) {
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_shape_str(&a, x);
    sr_ints_str(&c, ns, n);
    sr_terr(cx, "TypeError", "cannot reshape array of shape %s (size %lld) into shape %s (size %lld)", sr_buf_str(&a),
            (long long)numel, sr_buf_str(&c), (long long)newn);
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrShardSpec g;
  int given = 0;
  if (given_sharding(cx, e, "sharding", n, &g, &given) < 0) return -1;
  SrTypeBuilder b;
  builder_shape(&b, x, ns, n, &s);
  if (s.mode == SR_MODE_EXPLICIT) {
    if (given) {
      apply_partitions(&b, &g);
    } else {
      int r = reshape_sharding(cx, x, ns, n, has_dims, &b);
      if (r < 0) return -1;
      if (r > 0) {
        /* an unsized mesh: the split cannot be worked out; trust the binder */
        const SrType *w = sr_written(e, 0);
        if (!w) return sr_terr(cx, "ValueError", "reshape: the sizes of the mesh axes are unknown");
        SrShardSpec ws;
        sr_shard_of_type(w, &ws);
        apply_partitions(&b, &ws);
      }
    }
  }
  /* _reshape_unreduced_rule / _reduced_rule */
  if (s.mode != SR_MODE_AUTO) {
    SrAxes u;
    if (sr_getu(cx, x, &u) < 0) return -1;
    SrAxes r = sr_getr(cx, x);
    SrBuf sb = SR_BUF_INIT, ts = SR_BUF_INIT;
    const char *fmt = NULL;
    if (given && s.mode == SR_MODE_EXPLICIT) {
      SrVal *spec = sr_shard_to_spec_val(&g);
      if (u && x->unreduced != g.unreduced)
        fmt = "out_sharding passed to reshape must be unreduced over the same mesh axes as operand. Got "
              "out_sharding: %s and operand type: %s";
      else if (!u && g.unreduced)
        fmt = "out_sharding passed to `reshape` cannot contain unreduced axes. Got %s%s";
      else if (r && x->reduced != g.reduced)
        fmt = "out_sharding passed to reshape must be reduced over the same mesh axes as operand. Got "
              "out_sharding: %s and operand type: %s";
      else if (!r && g.reduced)
        fmt = "out_sharding passed to `reshape` cannot contain reduced axes. Got %s%s";
      if (fmt && strstr(fmt, "cannot contain")) {
        SrTypeBuilder gb = b;
        apply_partitions(&gb, &g);
        gb.unreduced = g.unreduced;
        gb.reduced = g.reduced;
        gb.ukind = g.ukind;
        gb.varying = 0;
        sr_type_sharding_str(&sb, cx, sr_type_get(&gb));
      } else if (fmt) {
        sr_val_repr(&sb, spec);
        sr_type_str(&ts, x, 1);
      }
      sr_unref(spec);
    }
    if (fmt) {
      sr_terr(cx, "ValueError", fmt, sr_buf_str(&sb), sr_buf_str(&ts));
      sr_buf_free(&sb);
      sr_buf_free(&ts);
      return -1;
    }
    b.unreduced = u;
    b.reduced = r;
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

/* lax.squeeze_p: drops size-1 dimensions and their specs. */
static int type_squeeze(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t dims[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "dimensions", 1, dims, SR_MAX_RANK, &n) < 0) return -1;
  int drop[SR_MAX_RANK] = {0}, dup = 0, range = 1;
  for (int i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= x->ndim) {
      range = 0;
      continue;
    }
    if (drop[dims[i]]) dup = 1;
    drop[dims[i]] = 1;
  }
  if (dup || !range) {
    /* _compute_squeeze_shape's are ValueErrors */
    SrBuf a = SR_BUF_INIT;
    sr_ints_str(&a, dims, n);
    sr_terr(cx, "ValueError", dup ? "dimensions are not unique: %s" : "dimensions outside range [0, ndim): %s",
            sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  for (int i = 0; i < n; i++)
    if (x->dims[dims[i]].size != 1) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_shape_str(&a, x);
      sr_ints_str(&c, dims, n);
      sr_terr(cx, "ValueError",
              "cannot select an axis to squeeze out which has size not equal to one, got shape=%s and dimensions=%s",
              sr_buf_str(&a), sr_buf_str(&c));
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  int64_t shape[SR_MAX_RANK];
  int k = 0;
  for (int i = 0; i < x->ndim; i++)
    if (!drop[i]) shape[k++] = x->dims[i].size;
  SrTypeBuilder b;
  builder_shape(&b, x, shape, k, &s);
  for (int i = 0, j = 0; i < x->ndim; i++) {
    if (drop[i]) continue;
    b.dims[j].sym = x->dims[i].sym;
    if (s.mode == SR_MODE_EXPLICIT) take_spec(&b, j, x, i);
    j++;
  }
  if (pass_ur(cx, &s, x, &b) < 0 || sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

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

/* reshape with dimensions: the operand's elements read in the order of
   its dimensions permuted (XLA's transpose, then the reshape), on the
   whole value on every device. */
static int ev_reshape_permuted(SrEvalCtx *cx, const SrEvalEqn *e, Out1 o) {
  SrArray *x = e->in[0];
  const SrType *t = e->out_type[0];
  int64_t p[SR_MAX_RANK];
  int np;
  if (sr_ev_param_ints(cx, e, "dimensions", p, SR_MAX_RANK, &np) < 0) return -1;
  TransArg ta;
  ta.nd = np;
  ta.es = esize(x);
  for (int k = 0; k < np; k++) ta.perm[k] = (int)p[k];
  SrArray *full = sr_redistribute(cx, x, o.m, natural(drop_dims(x->layout, ~0ull), 0, x->layout, x->type->dtype));
  if (!full) return -1;
  SrArray *r = sr_array_new(t, natural(drop_dims(o.l, ~0ull), 0, full->layout, t->dtype), o.m);
  int rc = sr_ev_map(cx, 1, &full, 1, &r, 0, transpose_fn, &ta);
  sr_array_unref(full);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* The same elements in row-major order, under a new shape. */
static int ev_reshape_like(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  const SrType *t = e->out_type[0];
  SrArray *x = e->in[0];
  SrVal *dims = sr_ev_param(e, "dimensions");
  if (dims && dims->kind != SR_V_NONE && e->prim->id == SR_P_reshape) return ev_reshape_permuted(cx, e, o);
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

static int ev_squeeze(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_reshape_like(cx, e); }

TR(tr_reshape) {
  (void)x;
  int64_t dims[SR_MAX_RANK], inv[SR_MAX_RANK];
  SrVal *dv = param(e, "dimensions");
  if (dv && dv->kind != SR_V_NONE) {
    /* _reshape_transpose_rule: back to the permuted operand's shape, then
       the inverse permutation */
    int n = param_ints(e, "dimensions", dims, SR_MAX_RANK);
    const SrType *ot = ct_of(e, 0);
    SrTypeBuilder pb;
    sr_type_builder(&pb, ot);
    for (int i = 0; i < n; i++) pb.dims[i] = ot->dims[dims[i]];
    argsort(dims, n, inv);
    SrVal *mid = sr_ad_reshape(ad, ct[0], sr_type_get(&pb));
    cx[0] = mid ? sr_ad_transpose_dims(ad, mid, inv, n) : NULL;
    return cx[0] ? 0 : -1;
  }
  cx[0] = sr_ad_reshape(ad, ct[0], ct_of(e, 0));
  return cx[0] ? 0 : -1;
}

TR(tr_squeeze) {
  (void)x;
  int64_t dims[SR_MAX_RANK];
  int n = param_ints(e, "dimensions", dims, SR_MAX_RANK);
  cx[0] = sr_ad_expand_dims(ad, ct[0], dims, n);
  return cx[0] ? 0 : -1;
}

BATCH(batch_reshape) {
  /* _reshape_batch_rule */
  int64_t sizes[SR_MAX_RANK], dims[SR_MAX_RANK];
  int ns = param_ints(e, "new_sizes", sizes, SR_MAX_RANK), nd = param_ints(e, "dimensions", dims, SR_MAX_RANK);
  if (ns < 0 || nd < 0 || e->nin != 1) return sr_batch_no_rule(b, e->prim);
  SrVal *op = sr_batch_moveaxis(b, x[0], bd[0], 0);
  const SrType *t = sr_ad_type(&b->ad, op);
  if (!t) return -1;
  SrVal *dv = param(e, "dimensions");
  return batch_out(e,
                   sr_batch_bind_with(b, e, 1, &op, "new_sizes", shifted(sizes, ns, 0, t->dims[0].size), "dimensions",
                          dv && dv->kind != SR_V_NONE ? shifted(dims, nd, 1, 0) : sr_none(), "sharding",
                          vmap_sharding(b, param(e, "sharding")), NULL),
                   0, y, ybd);
}

BATCH(batch_squeeze) {
  /* _squeeze_batch_rule; expand_dims the same way */
  int64_t dims[SR_MAX_RANK];
  int nd = param_ints(e, "dimensions", dims, SR_MAX_RANK);
  if (nd < 0) return sr_batch_no_rule(b, e->prim);
  const SrType *t = sr_ad_type(&b->ad, x[0]);
  if (!t) return -1;
  /* negative dims count from the end of the operand (squeeze) or of the
     result (expand_dims) */
  int rank = t->ndim - 1 + (e->prim->id == SR_P_expand_dims ? nd : 0);
  for (int i = 0; i < nd; i++)
    if (dims[i] < 0) dims[i] += rank;
  SrVal *op = sr_batch_moveaxis(b, x[0], bd[0], 0);
  return batch_out(e, sr_batch_bind_with(b, e, 1, &op, "dimensions", shifted(dims, nd, 1, -1), NULL), 0, y, ybd);
}

/* ==== transpose ==== */

/* lax.transpose_p: out_spec[i] = in_spec[perm[i]]. */
static int type_transpose(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t perm[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "permutation", 1, perm, SR_MAX_RANK, &n) < 0) return -1;
  int ok = n == x->ndim, seen[SR_MAX_RANK] = {0};
  for (int i = 0; ok && i < n; i++) {
    if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]) ok = 0;
    else seen[perm[i]] = 1;
  }
  if (!ok)
    return bad_dims(cx, "transpose permutation isn't a permutation of operand dimensions, got permutation %s for operand shape %s.",
                    perm, n, x);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < n; i++) shape[i] = x->dims[perm[i]].size;
  builder_shape(&b, x, shape, n, &s);
  for (int i = 0; i < n; i++) {
    b.dims[i].sym = x->dims[perm[i]].sym;
    if (s.mode == SR_MODE_EXPLICIT) take_spec(&b, i, x, (int)perm[i]);
  }
  if (pass_ur(cx, &s, x, &b) < 0 || sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
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

TR(tr_transpose) {
  (void)x;
  int64_t perm[SR_MAX_RANK], inv[SR_MAX_RANK];
  int n = param_ints(e, "permutation", perm, SR_MAX_RANK);
  argsort(perm, n, inv);
  cx[0] = sr_ad_transpose_dims(ad, ct[0], inv, n);
  return cx[0] ? 0 : -1;
}

BATCH(batch_transpose) {
  /* _transpose_batch_rule */
  int64_t perm[SR_MAX_RANK], np_[SR_MAX_RANK];
  int n = param_ints(e, "permutation", perm, SR_MAX_RANK - 1);
  if (n < 0) return sr_batch_no_rule(b, e->prim);
  np_[0] = bd[0];
  for (int i = 0; i < n; i++) np_[i + 1] = perm[i] < bd[0] ? perm[i] : perm[i] + 1;
  return batch_out(e, sr_ad_transpose_dims(&b->ad, x[0], np_, n + 1), 0, y, ybd);
}

/* ==== rev, slice ==== */

/* lax.rev_p: the operand's sharding; no ur rule. */
static int type_rev(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t dims[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "dimensions", 1, dims, SR_MAX_RANK, &n) < 0) return -1;
  if (check_nonnegative(cx, "rev", "dimensions", dims, n) < 0) return -1;
  int64_t mx = -1;
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++)
      if (dims[k] == dims[i]) return bad_dims(cx, "rev dimensions must be unique, got %s.%s", dims, n, NULL);
    if (dims[i] > mx) mx = dims[i];
  }
  if (n && mx >= x->ndim) {
    SrBuf a = SR_BUF_INIT;
    sr_ints_str(&a, dims, n);
    sr_terr(cx, "TypeError", "rev dimensions must all be less than operand ndim, got dimensions %s for operand ndim %d.",
            sr_buf_str(&a), x->ndim);
    sr_buf_free(&a);
    return -1;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, x);
  b.unreduced = b.reduced = b.varying = 0;
  if (s.mode != SR_MODE_EXPLICIT) sr_builder_replicate(&b);
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* slicing.slice_p. */
static int type_slice(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t st[SR_MAX_RANK], li[SR_MAX_RANK], sd[SR_MAX_RANK];
  int ns = 0, nl = 0, nd = 0;
  if (sr_rparam_ints(cx, e, "start_indices", 1, st, SR_MAX_RANK, &ns) < 0 ||
      sr_rparam_ints(cx, e, "limit_indices", 1, li, SR_MAX_RANK, &nl) < 0 ||
      sr_rparam_ints(cx, e, "strides", 0, sd, SR_MAX_RANK, &nd) < 0)
    return -1;
  SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT, os = SR_BUF_INIT;
  int rc = 0;
  if (x->ndim != ns)
    rc = sr_terr(cx, "TypeError",
                 "slice start_indices must have length equal to the number of dimensions of the operand, got "
                 "indices %s for operand shape %s.",
                 ints_s(&a, st, ns), shape_s(&os, x));
  else if (ns != nl)
    rc = sr_terr(cx, "TypeError",
                 "slice limit_indices must have the same length as start_indices, got start_indices %s and "
                 "limit_indices %s.",
                 ints_s(&a, st, ns), ints_s(&c, li, nl));
  for (int i = 0; !rc && i < ns; i++)
    if (li[i] > x->dims[i].size && !x->dims[i].sym) {
      rc = sr_terr(cx, "TypeError",
                   "slice limit_indices must be less than or equal to operand shape, got limit_indices %s for operand "
                   "shape %s.",
                   ints_s(&c, li, nl), shape_s(&os, x));
    }
  for (int i = 0; !rc && i < ns; i++)
    if (st[i] < 0)
      rc = sr_terr(cx, "TypeError", "slice start_indices must be greater than or equal to zero, got start_indices of %s.",
                   ints_s(&a, st, ns));
  for (int i = 0; !rc && i < ns; i++)
    if (li[i] < st[i])
      rc = sr_terr(cx, "TypeError",
                   "slice limit_indices must be greater than or equal to start_indices, got start_indices %s and "
                   "limit_indices %s.",
                   ints_s(&a, st, ns), ints_s(&c, li, nl));
  if (!rc && nd && nd != x->ndim) {
    SrBuf ds = SR_BUF_INIT;
    rc = sr_terr(cx, "TypeError",
                 "slice strides must have length equal to the number of dimensions of the operand, got strides %s "
                 "for operand shape %s.",
                 ints_s(&ds, sd, nd), shape_s(&os, x));
    sr_buf_free(&ds);
  }
  for (int i = 0; !rc && i < nd; i++)
    if (sd[i] <= 0) {
      SrBuf ds = SR_BUF_INIT;
      sr_ints_str(&ds, sd, nd);
      rc = sr_terr(cx, "TypeError", "slice strides must be positive, got %s", sr_buf_str(&ds));
      sr_buf_free(&ds);
    }
  sr_buf_free(&a);
  sr_buf_free(&c);
  sr_buf_free(&os);
  if (rc) return -1;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < ns; i++) {
    int64_t diff = li[i] - st[i];
    shape[i] = nd ? sr_lax_floordiv(diff - 1, sd[i]) + 1 : diff;
    if (shape[i] < 0) shape[i] = 0;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  builder_shape(&b, x, shape, ns, &s);
  if (s.mode == SR_MODE_EXPLICIT && varying_out_sharding(cx, x, &b, "slicing") < 0) return -1;
  if (pass_ur(cx, &s, x, &b) < 0 || sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

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

/* the same op on the cotangent (rev) */
TR(tr_self) {
  (void)x;
  cx[0] = sr_ad_bind_eqn1(ad, e, ct);
  return cx[0] ? 0 : -1;
}

TR(tr_slice) {
  (void)x;
  const SrType *ot = ct_of(e, 0);
  int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK], lo[SR_MAX_RANK], hi[SR_MAX_RANK],
      in[SR_MAX_RANK];
  int n = param_ints(e, "start_indices", st, SR_MAX_RANK);
  param_ints(e, "limit_indices", lim, SR_MAX_RANK);
  int ns = param_ints(e, "strides", str, SR_MAX_RANK);
  const SrType *ctt = sr_ad_type(ad, ct[0]);
  if (!ctt) return -1;
  int unit = 1;
  for (int i = 0; i < ns; i++) unit &= str[i] == 1;
  for (int i = 0; i < n; i++) {
    lo[i] = st[i];
    if (ns == 0 || unit) {
      hi[i] = ot->dims[i].size - lim[i];
      in[i] = 0;
    } else {
      int64_t real = ctt->dims[i].size == 0 ? st[i] : st[i] + 1 + (ctt->dims[i].size - 1) * str[i];
      hi[i] = ot->dims[i].size - real;
      in[i] = str[i] - 1;
    }
  }
  /* the padding value varies as the cotangent does (lax.pad's
     standard_insert_pvary), or pad refuses the mix inside shard_map */
  SrVal *pin[2] = {ct[0], sr_ad_scalar_like(ad, ct[0], 0.0)};
  cx[0] = sr_ad_bindv(ad, SR_P_pad, 2, pin, "padding_config", triples(lo, hi, in, n), NULL);
  return cx[0] ? 0 : -1;
}

BATCH(batch_rev) {
  /* _rev_batch_rule */
  int64_t dims[SR_MAX_RANK];
  int nd = param_ints(e, "dimensions", dims, SR_MAX_RANK);
  if (nd < 0) return sr_batch_no_rule(b, e->prim);
  for (int i = 0; i < nd; i++)
    if (dims[i] >= bd[0]) dims[i]++;
  return batch_out(e, sr_batch_bind_with(b, e, 1, x, "dimensions", sr_ad_ints(dims, nd), NULL), bd[0], y, ybd);
}

BATCH(batch_slice) {
  /* _slice_batching_rule */
  int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK];
  int n = param_ints(e, "start_indices", st, SR_MAX_RANK - 1);
  int nl = param_ints(e, "limit_indices", lim, SR_MAX_RANK - 1);
  int ns = param_ints(e, "strides", str, SR_MAX_RANK - 1);
  const SrType *t = sr_ad_type(&b->ad, x[0]);
  int d = bd[0];
  if (n < 0 || nl != n || ns < 0 || (ns && ns != n) || !t || d > n) return t ? sr_batch_no_rule(b, e->prim) : -1;
  memmove(st + d + 1, st + d, (size_t)(n - d) * sizeof *st);
  memmove(lim + d + 1, lim + d, (size_t)(n - d) * sizeof *lim);
  st[d] = 0;
  lim[d] = t->dims[d].size;
  SrVal *sv = sr_none();
  if (ns) {
    memmove(str + d + 1, str + d, (size_t)(n - d) * sizeof *str);
    str[d] = 1;
    sv = sr_ad_ints(str, n + 1);
  }
  return batch_out(e,
                   sr_batch_bind_with(b, e, 1, x, "start_indices", sr_ad_ints(st, n + 1), "limit_indices", sr_ad_ints(lim, n + 1),
                          "strides", sv, NULL),
                   d, y, ybd);
}

/* ==== concatenate ==== */

/* The sharding of concatenate and stack (_concatenate_sharding_rule,
   _stack_sharding_rule and their ur rules): every operand on a mesh has
   the same sharding, unreduced and reduced sets included. */
static int same_sharding_of_operands(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, const SrStd *s,
                                     SrTypeBuilder *b, int inserted) {
  sr_builder_replicate(b);
  if (!b->mesh) b->mesh = s->mesh;
  const SrType *first = NULL;
  for (uint32_t i = 0; i < e->nin && !first; i++)
    if (!sr_in_mesh_empty(cx, e, i)) first = ts[i];
  if (s->mode == SR_MODE_EXPLICIT && first) {
    /* _concatenate_sharding_rule: shardings equal, unreduced and reduced
       included */
    for (uint32_t i = 0; i < e->nin; i++) {
      const SrType *t = ts[i];
      if (sr_in_mesh_empty(cx, e, i)) continue;
      int same = t->unreduced == first->unreduced && t->reduced == first->reduced && t->ukind == first->ukind;
      for (int d = 0; same && d < t->ndim; d++) same = sr_spec_entry_eq(t, d, first, d);
      if (same) continue;
      SrBuf ss = SR_BUF_INIT;
      for (uint32_t k = 0; k < e->nin; k++) {
        if (k) sr_buf_puts(&ss, ", ");
        sr_type_sharding_str(&ss, cx, ts[k]);
      }
      sr_terr(cx, "ShardingTypeError", "All operands should have the same sharding. Got shardings %s", sr_buf_str(&ss));
      sr_buf_free(&ss);
      return -1;
    }
    /* the result's dims are the operands' with `inserted` (stack's new
       axis, unsharded) added */
    for (int d = 0, j = 0; d < b->ndim; d++) {
      if (d == inserted) continue;
      take_spec(b, d, first, j++);
    }
  }
  if (s->mode != SR_MODE_AUTO) {
    /* _concatenate_unreduced_rule / _reduced_rule */
    SrAxes u = 0, r = 0;
    const SrMesh *m = first ? first->mesh : s->mesh;
    for (int pass = 0; pass < 2; pass++) {
      SrAxes sets[256];
      int nsets = 0;
      for (uint32_t i = 0; i < e->nin; i++) {
        SrAxes a;
        if (pass == 0) {
          if (sr_getu(cx, ts[i], &a) < 0) return -1;
        } else {
          a = sr_getr(cx, ts[i]);
        }
        if (!a) continue;
        int k = 0;
        while (k < nsets && sets[k] != a) k++;
        if (k == nsets) sets[nsets++] = a;
      }
      if (nsets > 1) {
        SrBuf ss = SR_BUF_INIT;
        sr_buf_putc(&ss, '{');
        for (int k = 0; k < nsets; k++) {
          if (k) sr_buf_puts(&ss, ", ");
          sr_axes_frozenset_str(&ss, m, sets[k]);
        }
        sr_buf_putc(&ss, '}');
        sr_terr(cx, "ShardingTypeError",
                pass == 0 ? "All operands should be unreduced along the same mesh axes. Got unreduced specs: %s"
                          : "All operands should be reduced along the same mesh axes. Got reduced specs: %s",
                sr_buf_str(&ss));
        sr_buf_free(&ss);
        return -1;
      }
      if (pass == 0) u = nsets ? sets[0] : 0;
      else r = nsets ? sets[0] : 0;
    }
    b->unreduced = u;
    b->reduced = r;
  }
  return 0;
}

/* lax.concatenate_p: every operand on a mesh has the same sharding. */

/* (8, 4), (8, 2): the operands' shapes, for a message. */
static const char *shapes_s(SrBuf *b, const SrType *const *ts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (i) sr_buf_puts(b, ", ");
    sr_shape_str(b, ts[i]);
  }
  return sr_buf_str(b);
}

static int type_concatenate(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, -1, 1) < 0) return -1;
  int64_t dim = 0;
  if (sr_rparam_int(cx, e, "dimension", 1, &dim) < 0) return -1;
  if (!e->nin) return sr_terr(cx, "TypeError", "concatenate expects at least one operand, got 0.");
  const SrType *ts[256];
  if (e->nin > 256) return sr_terr(cx, "TypeError", "concatenate: too many operands");
  sr_resolve_bare_literals(e, ts);
  const SrType *x0 = ts[0];
  SrBuf sb = SR_BUF_INIT;
  int rc = 0;
  for (uint32_t i = 1; i < e->nin && !rc; i++)
    if (ts[i]->ndim != x0->ndim)
      rc = sr_terr(cx, "TypeError", "Cannot concatenate arrays with different numbers of dimensions: got %s.",
                   shapes_s(&sb, ts, e->nin));
  if (!rc && (dim < 0 || dim >= x0->ndim))
    rc = sr_terr(cx, "TypeError", "concatenate dimension out of bounds: dimension %lld for shapes %s.", (long long)dim,
                 shapes_s(&sb, ts, e->nin));
  for (uint32_t i = 1; i < e->nin && !rc; i++)
    for (int d = 0; d < x0->ndim; d++)
      if (d != dim && !sr_dim_same(&ts[i]->dims[d], &x0->dims[d])) {
        rc = sr_terr(cx, "TypeError",
                     "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
                     "concatenated: concatenating along dimension %lld for shapes %s.",
                     (long long)dim, shapes_s(&sb, ts, e->nin));
        break;
      }
  sr_buf_free(&sb);
  if (rc < 0 || sr_check_same_dtypes(cx, "concatenate", ts, e->nin) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, x0);
  b.unreduced = b.reduced = b.varying = 0;
  b.ukind = SR_UK_NONE;
  int64_t total = 0;
  for (uint32_t i = 0; i < e->nin; i++) total += ts[i]->dims[dim].size;
  b.dims[dim].size = total;
  b.dims[dim].sym = NULL;
  int weak = 1;
  for (uint32_t i = 0; i < e->nin; i++) weak &= ts[i]->weak;
  b.weak = (uint8_t)weak;
  if (same_sharding_of_operands(cx, e, ts, &s, &b, -1) < 0) return -1;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

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

/* concatenate's and stack's eval after their params: the (at most 16)
   operands redistributed onto o's mesh, operand dim i as the result's
   map[i], and joined by fn(arg) into a result unsharded along dim. */
static int ev_join(SrEvalCtx *cx, const SrEvalEqn *e, Out1 o, int dim, const int *map, int (*fn)(SrShardIO *),
                   void *arg) {
  SrArray *ins[16] = {0};
  int rc = 0;
  for (uint32_t k = 0; k < e->nin && rc == 0; k++) {
    ins[k] = sr_redistribute(cx, e->in[k], o.m, mapped_layout(e->in[k], o.l, map));
    if (!ins[k]) rc = -1;
  }
  SrArray *r = NULL;
  if (rc == 0) {
    r = sr_array_new(e->out_type[0], natural(o.l, 1ull << dim, ins[0]->layout, e->out_type[0]->dtype), o.m);
    rc = sr_ev_map(cx, (int)e->nin, ins, 1, &r, 0, fn, arg);
  }
  for (uint32_t k = 0; k < e->nin; k++) sr_array_unref(ins[k]);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

static int ev_concatenate(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  int64_t dim;
  if (sr_ev_param_int(cx, e, "dimension", &dim) < 0) return -1;
  if (e->nin > 16) {
    /* XLA joins any number: here groups of 16 (unsharded along dim), then
       the groups */
    uint32_t ng = (e->nin + 15) / 16;
    SrArray **parts = sr_xcalloc(ng, sizeof *parts);
    int rc = 0;
    for (uint32_t g = 0; g < ng && rc == 0; g++) {
      SrEvalEqn sub = *e;
      sub.nin = e->nin - 16 * g < 16 ? e->nin - 16 * g : 16;
      sub.in = e->in + 16 * g;
      sub.donate = 0;
      sub.lit = 0;
      SrTypeBuilder b;
      sr_type_builder(&b, e->out_type[0]);
      b.dims[dim].size = 0;
      b.dims[dim].nax = 0;
      for (uint32_t k = 0; k < sub.nin; k++) b.dims[dim].size += sub.in[k]->type->dims[dim].size;
      const SrType *t = sr_type_get(&b);
      sub.out_type = &t;
      sub.out = &parts[g];
      rc = ev_concatenate(cx, &sub);
    }
    if (rc == 0) {
      SrEvalEqn top = *e;
      top.nin = ng;
      top.in = parts;
      top.donate = 0;
      top.lit = 0;
      rc = ev_concatenate(cx, &top);
    }
    for (uint32_t g = 0; g < ng; g++) sr_array_unref(parts[g]);
    free(parts);
    return rc;
  }
  int id[SR_MAX_RANK];
  for (int i = 0; i < e->out_type[0]->ndim; i++) id[i] = i == dim ? -1 : i;
  CatArg c = {e->out_type[0]->ndim, (int)dim, (int)e->nin, esize(e->in[0])};
  return ev_join(cx, e, o, (int)dim, id, cat_fn, &c);
}

TR(tr_concatenate) {
  int64_t dim = param_int(e, "dimension", 0);
  int64_t sizes[256];
  uint32_t n = e->nin < 256 ? e->nin : 256;
  for (uint32_t i = 0; i < n; i++) sizes[i] = e->in[i]->type->dims[dim].size;
  SrVal *c = ct[0];
  SrVal *r = sr_ad_bindv(ad, SR_P_split, 1, &c, "sizes", sr_ad_ints(sizes, (int)n), "axis", sr_int(NULL, dim), NULL);
  if (!r) return -1;
  for (uint32_t i = 0; i < n; i++)
    if (!x[i]) cx[i] = r->seq.items[i];
  return 0;
}

BATCH(batch_concatenate) {
  /* _concatenate_batch_rule: unmapped operands broadcast, their new axis
     sharded as the first mapped operand's batch axis */
  const SrType *like = NULL;
  int ld = 0;
  for (uint32_t i = 0; i < e->nin && !like; i++)
    if (bd[i] != SR_NOT_MAPPED) like = sr_ad_type(&b->ad, x[i]), ld = bd[i];
  if (!like) return -1;
  int64_t size = like->dims[ld].size;
  SrVal *small[16], **ops = e->nin <= 16 ? small : sr_xcalloc(e->nin, sizeof *ops);
  int rc = 0;
  for (uint32_t i = 0; i < e->nin && rc == 0; i++) {
    ops[i] = bd[i] != SR_NOT_MAPPED ? sr_batch_moveaxis(b, x[i], bd[i], 0) : broadcast_front(b, size, x[i], like, ld);
    if (!ops[i]) rc = -1;
  }
  if (rc == 0)
    rc = batch_out(e, sr_batch_bind_with(b, e, (int)e->nin, ops, "dimension", sr_int(NULL, param_int(e, "dimension", 0) + 1), NULL),
                   0, y, ybd);
  if (ops != small) free(ops);
  return rc;
}

/* ==== stack, unstack ==== */

/* lax.stack_p: operands of one shape stacked along a new, unsharded axis. */
static int type_stack(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, -1, 1) < 0) return -1;
  int64_t axis = 0;
  if (sr_rparam_int(cx, e, "axis", 1, &axis) < 0) return -1;
  if (!e->nin) return sr_terr(cx, "ValueError", "stack expects at least one operand, got 0.");
  if (e->nin > 256) return sr_terr(cx, "TypeError", "stack: too many operands");
  const SrType *ts[256];
  sr_resolve_bare_literals(e, ts);
  const SrType *x0 = ts[0];
  SrBuf sb = SR_BUF_INIT;
  for (uint32_t i = 0; i < e->nin; i++) {
    if (i) sr_buf_puts(&sb, ", ");
    sr_shape_str(&sb, ts[i]);
  }
  int rc = 0;
  for (uint32_t i = 1; i < e->nin && !rc; i++)
    if (ts[i]->ndim != x0->ndim)
      rc = sr_terr(cx, "ValueError", "Cannot stack arrays with different numbers of dimensions: got %s.", sr_buf_str(&sb));
  for (uint32_t i = 1; i < e->nin && !rc; i++)
    for (int d = 0; d < x0->ndim; d++)
      if (!sr_dim_same(&ts[i]->dims[d], &x0->dims[d])) {
        rc = sr_terr(cx, "ValueError", "All input arrays must have the same shape. Got %s.", sr_buf_str(&sb));
        break;
      }
  sr_buf_free(&sb);
  if (!rc && (axis < 0 || axis > x0->ndim))
    rc = sr_terr(cx, "ValueError", "stack axis %lld is out of bounds for result rank %d", (long long)axis, x0->ndim + 1);
  if (rc < 0 || sr_check_same_dtypes(cx, "stack", ts, e->nin) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  int64_t shape[SR_MAX_RANK];
  if (x0->ndim + 1 > SR_MAX_RANK) return sr_terr(cx, "ValueError", "stack: too many dimensions");
  for (int d = 0, j = 0; d <= x0->ndim; d++) shape[d] = d == axis ? (int64_t)e->nin : x0->dims[j++].size;
  SrTypeBuilder b;
  builder_shape(&b, x0, shape, x0->ndim + 1, &s);
  int weak = 1;
  for (uint32_t i = 0; i < e->nin; i++) weak &= ts[i]->weak;
  b.weak = (uint8_t)weak;
  if (same_sharding_of_operands(cx, e, ts, &s, &b, (int)axis) < 0) return -1;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* lax.unstack_p: one result per index of the axis, each without it; the
   axis may not be sharded (_unstack_sharding_rule). */
static int type_unstack(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, -1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t axis = 0;
  if (sr_rparam_int(cx, e, "axis", 1, &axis) < 0) return -1;
  if (x->ndim == 0)
    return sr_terr(cx, "ValueError",
                   "unstack requires arrays with rank > 0, however a scalar array of shape () was passed.");
  if (axis < 0 || axis >= x->ndim)
    return sr_terr(cx, "TypeError", "unstack axis %lld is out of bounds for rank %d", (long long)axis, x->ndim);
  if ((int64_t)e->nout != x->dims[axis].size)
    return sr_terr(cx, "TypeError", "unstack of a dimension of size %lld binds %u results",
                   (long long)x->dims[axis].size, e->nout);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  if (s.mode == SR_MODE_EXPLICIT && x->dims[axis].nax) {
    SrBuf a = SR_BUF_INIT;
    sr_type_str(&a, x, 1); /* str_short(True) */
    sr_terr(cx, "ShardingTypeError", "unstack operand cannot be sharded on the unstacking axis %lld. Got operand type=%s",
            (long long)axis, sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  SrAxes vma;
  if (sr_vma_standard(cx, e, &vma) < 0) return -1;
  for (uint32_t i = 0; i < e->nout; i++) {
    SrTypeBuilder b;
    sr_type_builder(&b, x);
    memmove(&b.dims[axis], &b.dims[axis + 1], (size_t)(b.ndim - axis - 1) * sizeof b.dims[0]);
    b.ndim--;
    if (!b.mesh) b.mesh = s.mesh;
    if (s.mode != SR_MODE_EXPLICIT) sr_builder_replicate(&b);
    if (pass_ur(cx, &s, x, &b) < 0) return -1;
    b.varying = vma;
    if (sr_finish_type(cx, e, &b, &out[i]) < 0) return -1;
  }
  return 0;
}

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
  int map[SR_MAX_RANK];
  stack_map(e->out_type[0]->ndim, (int)axis, map);
  StackArg s = {e->out_type[0]->ndim, (int)axis, (int)e->nin, esize(e->in[0])};
  return ev_join(cx, e, o, (int)axis, map, stack_fn, &s);
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

/* stack and unstack: rows the table may lack (made on first lookup) */
TR(tr_stack) {
  SrVal *c = ct[0];
  SrPList ps = {0};
  sr_plist_add(&ps, "axis", sr_int(NULL, param_int(e, "axis", 0)));
  SrVal *r = NULL;
  const SrPrim *un = sr_prim_lookup("unstack", 7);
  if (c) {
    const SrType *written[256];
    uint32_t n = e->nin < 256 ? e->nin : 256;
    for (uint32_t i = 0; i < n; i++) written[i] = sr_ad_ct_type(e->in[i]->type);
    SrInterp *I = ad->I;
    r = sr_ad_keep(ad, sr_bind_prim(I, un, 1, &c, ps.n, ps.p, written, n));
  }
  sr_plist_free(&ps);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++)
    if (!x[i]) cx[i] = r->seq.items[i];
  return 0;
}

TR(tr_unstack) {
  (void)x;
  SrVal *cs[256];
  uint32_t n = e->nout < 256 ? e->nout : 256;
  for (uint32_t i = 0; i < n; i++) cs[i] = ct[i] ? ct[i] : sr_ad_full_zeros(ad, sr_ad_ct_type(e->out[i]->type));
  SrPList ps = {0};
  sr_plist_add(&ps, "axis", sr_int(NULL, param_int(e, "axis", 0)));
  const SrType *written[1] = {sr_ad_ct_type(e->in[0]->type)};
  cx[0] = sr_ad_keep(ad, sr_bind_prim(ad->I, sr_prim_lookup("stack", 5), (int)n, cs, ps.n, ps.p, written, 1));
  sr_plist_free(&ps);
  if (cx[0] && cx[0]->kind == SR_V_TUPLE) cx[0] = cx[0]->seq.items[0];
  return cx[0] ? 0 : -1;
}

BATCH(batch_stack) {
  /* _stack_batch_rule */
  int64_t axis = param_int(e, "axis", 0);
  int same = 1;
  for (uint32_t i = 1; i < e->nin; i++) same &= bd[i] == bd[0];
  if (same && bd[0] != SR_NOT_MAPPED) {
    int64_t oa = axis <= bd[0] ? axis : axis + 1;
    int ob = axis <= bd[0] ? bd[0] + 1 : bd[0];
    return batch_out(e, sr_batch_bind_with(b, e, (int)e->nin, x, "axis", sr_int(NULL, oa), NULL), ob, y, ybd);
  }
  int64_t size = batch_size(b, e, x, bd);
  SrVal *small[16], **ops = e->nin <= 16 ? small : sr_xcalloc(e->nin, sizeof *ops);
  int rc = 0;
  for (uint32_t i = 0; i < e->nin && rc == 0; i++) {
    ops[i] = bd[i] != SR_NOT_MAPPED ? sr_batch_moveaxis(b, x[i], bd[i], 0) : broadcast_front(b, size, x[i], NULL, 0);
    if (!ops[i]) rc = -1;
  }
  if (rc == 0) rc = batch_out(e, sr_batch_bind_with(b, e, (int)e->nin, ops, "axis", sr_int(NULL, axis + 1), NULL), 0, y, ybd);
  if (ops != small) free(ops);
  return rc;
}

BATCH(batch_unstack) {
  /* _unstack_batch_rule */
  int64_t axis = param_int(e, "axis", 0);
  int64_t oa = axis < bd[0] ? axis : axis + 1;
  int ob = axis < bd[0] ? bd[0] - 1 : bd[0];
  return batch_out(e, sr_batch_bind_with(b, e, 1, x, "axis", sr_int(NULL, oa), NULL), ob, y, ybd);
}

/* ==== split ==== */

/* lax.split_p: pieces of the operand along `axis`, each sharded like the
   operand while divisible. */
static int type_split(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, -1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t sizes[256], axis = 0;
  int n = 0;
  if (sr_rparam_ints(cx, e, "sizes", 1, sizes, 256, &n) < 0 || sr_rparam_int(cx, e, "axis", 1, &axis) < 0) return -1;
  if (axis < 0 || axis >= x->ndim) return sr_terr(cx, "TypeError", "split axis %lld is out of bounds for rank %d", (long long)axis, x->ndim);
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    if (sizes[i] < 0) {
      SrBuf a = SR_BUF_INIT;
      for (int k = 0; k < n; k++) sr_buf_printf(&a, k ? ", %lld" : "%lld", (long long)sizes[k]);
      sr_terr(cx, "ValueError", "Sizes passed to split must be nonnegative, got [%s]", sr_buf_str(&a));
      sr_buf_free(&a);
      return -1;
    }
    sum += sizes[i];
  }
  if (x->dims[axis].size != sum) {
    SrBuf a = SR_BUF_INIT;
    for (int k = 0; k < x->ndim; k++) sr_buf_printf(&a, k ? ", %lld" : "%lld", (long long)x->dims[k].size);
    sr_terr(cx, "ValueError", "Sum of sizes %lld must be equal to dimension %lld of the operand shape [%s]", (long long)sum,
            (long long)axis, sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if ((uint32_t)n != e->nout)
    return sr_terr(cx, "TypeError", "split into %d pieces binds %u results", n, e->nout);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrAxes vma;
  if (sr_vma_standard(cx, e, &vma) < 0) return -1;
  for (int i = 0; i < n; i++) {
    SrTypeBuilder b;
    sr_type_builder(&b, x);
    b.unreduced = b.reduced = b.varying = 0;
    b.dims[axis].size = sizes[i];
    b.dims[axis].sym = NULL;
    if (!b.mesh) b.mesh = s.mesh;
    if (s.mode == SR_MODE_EXPLICIT) {
      if (varying_out_sharding(cx, x, &b, "split") < 0) return -1;
    } else {
      sr_builder_replicate(&b);
    }
    if (pass_ur(cx, &s, x, &b) < 0) return -1;
    b.varying = vma;
    if (sr_finish_type(cx, e, &b, &out[i]) < 0) return -1;
  }
  return 0;
}

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
  if (e->nout == 0) return 0; /* sizes=() of an empty axis: no parts */
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

TR(tr_split) {
  (void)x;
  SrVal *cs[256];
  uint32_t n = e->nout < 256 ? e->nout : 256;
  for (uint32_t i = 0; i < n; i++) cs[i] = ct[i] ? ct[i] : sr_ad_full_zeros(ad, sr_ad_ct_type(e->out[i]->type));
  cx[0] = sr_ad_bindv(ad, SR_P_concatenate, (int)n, cs, "dimension", sr_int(NULL, param_int(e, "axis", 0)), NULL);
  return cx[0] ? 0 : -1;
}

BATCH(batch_split) {
  /* _split_batch_rule */
  int64_t axis = param_int(e, "axis", 0);
  return batch_out(e, sr_batch_bind_with(b, e, 1, x, "axis", sr_int(NULL, axis >= bd[0] ? axis + 1 : axis), NULL), bd[0], y, ybd);
}

/* ==== pad ==== */

/* lax.pad_p: low, high and interior padding per dimension. */
static int type_pad(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *ts[2];
  sr_resolve_bare_literals(e, ts);
  const SrType *x = ts[0], *pv = ts[1];
  int64_t cfg[3 * SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "padding_config", 1, cfg, 3 * SR_MAX_RANK, &n) < 0) return -1;
  if (pv->ndim) {
    SrBuf a = SR_BUF_INIT;
    sr_shape_str(&a, pv);
    sr_terr(cx, "ValueError", "padding_value must be a scalar; got np.shape(padding_value)=%s", sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  SrBuf cs = SR_BUF_INIT, os = SR_BUF_INIT;
  SrVal *cv = sr_rparam(e, "padding_config");
  sr_val_str(&cs, cv);
  sr_shape_str(&os, x);
  int rc = 0;
  if (n != 3 * x->ndim)
    rc = sr_terr(cx, "ValueError",
                 "length of padding_config must equal the number of axes of operand, got padding_config %s for "
                 "operand shape %s",
                 sr_buf_str(&cs), sr_buf_str(&os));
  for (int i = 0; !rc && i < x->ndim; i++)
    if (cfg[3 * i + 2] < 0)
      rc = sr_terr(cx, "ValueError", "interior padding in padding_config must be nonnegative, got padding_config %s",
                   sr_buf_str(&cs));
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; !rc && i < x->ndim; i++) {
    int64_t d = x->dims[i].size, lo = cfg[3 * i], hi = cfg[3 * i + 1], in = cfg[3 * i + 2];
    int64_t dil = 0;
    /* sizes past int64 are too big for any array; JAX's Python ints would
       get as far as allocating */
    if (d > 0 && (__builtin_mul_overflow(in + 1, d - 1, &dil) || __builtin_add_overflow(dil, 1, &dil) ||
                  __builtin_add_overflow(lo, dil, &dil) || __builtin_add_overflow(hi, dil, &shape[i])))
      rc = sr_terr_too_big(cx);
    else if (d <= 0 && __builtin_add_overflow(lo, hi, &shape[i]))
      rc = sr_terr_too_big(cx);
  }
  for (int i = 0; !rc && i < x->ndim; i++)
    if (shape[i] < 0) {
      SrBuf rs = SR_BUF_INIT;
      sr_ints_str(&rs, shape, x->ndim);
      rc = sr_terr(cx, "ValueError",
                   "Dimension size after padding is not at least 0, got result shape %s, for padding_config %s and "
                   "operand shape %s",
                   sr_buf_str(&rs), sr_buf_str(&cs), sr_buf_str(&os));
      sr_buf_free(&rs);
    }
  if (!rc && x->dtype != pv->dtype)
    rc = sr_terr(cx, "TypeError", "pad operand and padding_value must be same dtype: got %s and %s.",
                 sr_dtype_name(x->dtype), sr_dtype_name(pv->dtype));
  sr_buf_free(&cs);
  sr_buf_free(&os);
  if (rc) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  builder_shape(&b, x, shape, x->ndim, &s);
  b.weak = (uint8_t)(x->weak && pv->weak);
  if (s.mode == SR_MODE_EXPLICIT && varying_out_sharding(cx, x, &b, "padding") < 0) return -1;
  if (pass_ur(cx, &s, x, &b) < 0 || sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

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

TR(tr_pad) {
  int64_t cfg[3 * SR_MAX_RANK], lo[SR_MAX_RANK], hi[SR_MAX_RANK], in[SR_MAX_RANK];
  int n = param_ints(e, "padding_config", cfg, 3 * SR_MAX_RANK) / 3;
  for (int i = 0; i < n; i++) {
    lo[i] = -cfg[3 * i];
    hi[i] = -cfg[3 * i + 1];
    in[i] = 0;
  }
  SrVal *t = ct[0], *top = NULL;
  const SrType *tt = sr_ad_type(ad, t);
  if (!tt) return -1;
  if (!x[0] || !x[1]) {
    SrVal *pin[2] = {t, sr_ad_scalar(ad, tt->dtype, 0, 0.0)};
    SrVal *unpadded = sr_ad_bindv(ad, SR_P_pad, 2, pin, "padding_config", triples(lo, hi, in, n), NULL);
    const SrType *ut = sr_ad_type(ad, unpadded);
    if (!ut) return -1;
    int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK];
    for (int i = 0; i < n; i++) {
      st[i] = 0;
      lim[i] = ut->dims[i].size;
      str[i] = cfg[3 * i + 2] + 1;
    }
    top = sr_ad_bindv(ad, SR_P_slice, 1, &unpadded, "start_indices", sr_ad_ints(st, n), "limit_indices", sr_ad_ints(lim, n),
                   "strides", sr_ad_ints(str, n), NULL);
    if (!top) return -1;
  }
  if (!x[0]) cx[0] = top;
  if (!x[1]) {
    int64_t all[SR_MAX_RANK];
    for (int i = 0; i < n; i++) all[i] = i;
    cx[1] = sr_ad_binop(ad, SR_P_sub, sr_ad_reduce_sum(ad, t, all, n, NULL), sr_ad_reduce_sum(ad, top, all, n, NULL));
    if (!cx[1]) return -1;
  }
  return 0;
}

BATCH(batch_pad) {
  /* _pad_batch_rule: a batched padding value pads with zeros and selects
     it in where a mask of the padding says */
  int64_t cfg[3 * SR_MAX_RANK + 3];
  int n = param_ints(e, "padding_config", cfg, 3 * SR_MAX_RANK - 3);
  if (n < 0 || n % 3) return sr_batch_no_rule(b, e->prim);
  n /= 3;
  SrVal *op = x[0], *pv = x[1];
  int d = bd[0];
  if (d == SR_NOT_MAPPED) {
    op = broadcast_front(b, batch_size(b, e, x, bd), op, NULL, 0);
    if (!op) return -1;
    d = 0;
  }
  memmove(cfg + 3 * d + 3, cfg + 3 * d, (size_t)(3 * (n - d)) * sizeof *cfg);
  cfg[3 * d] = cfg[3 * d + 1] = cfg[3 * d + 2] = 0;
  SrVal *c = sr_seq(NULL, SR_V_TUPLE, n + 1);
  for (int i = 0; i <= n; i++) sr_seq_push(NULL, c, sr_ad_ints(cfg + 3 * i, 3));
  if (bd[1] == SR_NOT_MAPPED) {
    SrVal *in[2] = {op, pv};
    return batch_out(e, sr_batch_bind_with(b, e, 2, in, "padding_config", c, NULL), d, y, ybd);
  }
  const SrType *t = sr_ad_type(&b->ad, op);
  if (!t) {
    sr_unref(c);
    return -1;
  }
  SrVal *in[2] = {op, sr_ad_scalar_like(&b->ad, op, 0.0)};
  SrVal *padded = sr_batch_bind_with(b, e, 2, in, "padding_config", sr_ref(c), NULL);
  SrTypeBuilder tb;
  sr_type_builder(&tb, t);
  tb.dtype = SR_BOOL;
  tb.weak = 0;
  SrVal *min[2] = {sr_ad_full(&b->ad, sr_type_get(&tb), 1.0), sr_ad_scalar(&b->ad, SR_BOOL, 0, 0.0)};
  SrVal *mask = sr_batch_bind_with(b, e, 2, min, "padding_config", c, NULL);
  const SrType *pt = sr_ad_type(&b->ad, padded);
  if (!pt) return -1;
  int64_t dims[1] = {d};
  SrVal *wide = sr_ad_broadcast_in_dim(&b->ad, pv, pt, dims, 1, 0);
  SrVal *cases[2] = {wide, padded};
  return batch_out(e, sr_ad_select_n(&b->ad, mask, 2, cases), d, y, ybd);
}

/* ==== dynamic_slice, dynamic_update_slice ==== */

/* The index operands of dynamic_slice / dynamic_update_slice: scalars of
   one integer dtype. */
static int check_indices(SrTypeCtx *cx, const SrRuleEqn *e, uint32_t first, const char *name, const char *sep) {
  int bad = 0;
  for (uint32_t i = first; i < e->nin; i++)
    if (e->in[i]->dtype != e->in[first]->dtype || !sr_dtype_in(e->in[i]->dtype, SR_DC_INT)) bad = 1;
  if (bad) {
    SrBuf a = SR_BUF_INIT;
    for (uint32_t i = first; i < e->nin; i++) sr_buf_printf(&a, i > first ? ", %s" : "%s", sr_dtype_name(e->in[i]->dtype));
    sr_terr(cx, "TypeError", "index arguments to %s must be integers of the same type, got%s%s", name, sep, sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  return 0;
}

static int nonscalar_indices(SrTypeCtx *cx, const SrRuleEqn *e, uint32_t first, const char *fmt) {
  for (uint32_t i = first; i < e->nin; i++)
    if (e->in[i]->ndim) {
      /* the tuple of index avals, as Python prints it */
      SrBuf a = SR_BUF_INIT;
      sr_buf_putc(&a, '(');
      for (uint32_t k = first; k < e->nin; k++) {
        if (k > first) sr_buf_puts(&a, ", ");
        sr_aval_repr(&a, e->in[k]);
      }
      sr_buf_puts(&a, e->nin - first == 1 ? ",)" : ")");
      sr_terr(cx, "TypeError", fmt, sr_buf_str(&a));
      sr_buf_free(&a);
      return -1;
    }
  return 0;
}

/* slicing.dynamic_slice_p: operand and one scalar index per dimension. */
static int type_dynamic_slice(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (e->nin < 1 || sr_rule_arity(cx, e, -1, 1) < 0) return sr_terr(cx, "TypeError", "dynamic_slice takes an operand and indices");
  const SrType *x = e->in[0];
  int64_t sz[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "slice_sizes", 1, sz, SR_MAX_RANK, &n) < 0) return -1;
  if (n != x->ndim || e->nin - 1 != (uint32_t)x->ndim)
    return sr_terr(cx, "TypeError", "dynamic_slice of a rank-%d operand needs %d indices and slice sizes", x->ndim, x->ndim);
  for (int i = 0; i < n; i++)
    if (sz[i] > x->dims[i].size && !x->dims[i].sym)
      return bad_dims(cx, "slice slice_sizes must be less than or equal to operand shape, got slice_sizes %s for operand shape %s.",
                      sz, n, x);
  for (int i = 0; i < n; i++)
    if (sz[i] < 0) return bad_dims(cx, "slice slice_sizes must be greater than or equal to zero, got slice_sizes of %s.%s", sz, n, NULL);
  if (nonscalar_indices(cx, e, 1, "start_indices arguments to dynamic_slice must be scalars,  got indices %s") < 0) return -1;
  if (e->nin > 1 && check_indices(cx, e, 1, "dynamic_slice", ": ") < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  builder_shape(&b, x, sz, n, &s);
  if (s.mode == SR_MODE_EXPLICIT && varying_out_sharding(cx, x, &b, "dynamic_slice") < 0) return -1;
  if (s.mode != SR_MODE_AUTO) {
    /* _dynamic_slice_ur_rule */
    SrAxes u;
    if (sr_getu(cx, x, &u) < 0) return -1;
    if (u)
      return sr_terr(cx, "NotImplementedError",
                     "unreduced rule for dynamic_slice is not implemented. Please file an issue at "
                     "https://github.com/jax-ml/jax/issues");
    b.reduced = sr_getr(cx, x);
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  b.weak = x->weak;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* slicing.dynamic_update_slice_p: operand and update agree on sharding,
   unreduced and reduced. */
static int type_dynamic_update_slice(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (e->nin < 2 || sr_rule_arity(cx, e, -1, 1) < 0)
    return sr_terr(cx, "TypeError", "dynamic_update_slice takes an operand, an update and indices");
  const SrType *x = e->in[0], *u = e->in[1];
  SrBuf us = SR_BUF_INIT, os = SR_BUF_INIT;
  sr_shape_str(&us, u);
  sr_shape_str(&os, x);
  int rc = 0;
  if (x->ndim != u->ndim)
    rc = sr_terr(cx, "TypeError",
                 "dynamic_update_slice update must have the same rank as operand, got update shape %s for operand "
                 "shape %s.",
                 sr_buf_str(&us), sr_buf_str(&os));
  else if ((uint32_t)x->ndim != e->nin - 2)
    rc = sr_terr(cx, "TypeError",
                 "dynamic_update_slice start_indices must have length equal to the rank of operand, got %u indices "
                 "for operand shape %s.",
                 e->nin - 2, sr_buf_str(&os));
  for (int i = 0; !rc && i < x->ndim; i++)
    if (u->dims[i].size > x->dims[i].size)
      rc = sr_terr(cx, "TypeError",
                   "dynamic_update_slice update shape must be smaller than operand shape, got update shape %s for "
                   "operand shape %s.",
                   sr_buf_str(&us), sr_buf_str(&os));
  sr_buf_free(&us);
  sr_buf_free(&os);
  if (rc) return -1;
  if (nonscalar_indices(cx, e, 2, "start_indices arguments to dynamic_update_slice must be scalars, got indices %s") < 0)
    return -1;
  const SrType *pair[2] = {x, u};
  if (sr_check_same_dtypes(cx, "dynamic_update_slice", pair, 2) < 0) return -1;
  if (e->nin > 2 && check_indices(cx, e, 2, "dynamic_update_slice", " ") < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, x);
  b.unreduced = b.reduced = b.varying = 0;
  b.weak = (uint8_t)(x->weak && u->weak);
  for (uint32_t i = 2; i < e->nin; i++) b.weak &= e->in[i]->weak;
  const char *what = NULL;
  if (s.mode == SR_MODE_EXPLICIT) {
    int same = x->unreduced == u->unreduced && x->reduced == u->reduced;
    for (int d = 0; same && d < x->ndim; d++) same = sr_spec_entry_eq(x, d, u, d);
    if (!same && !(sr_in_mesh_empty(cx, e, 0) && sr_in_mesh_empty(cx, e, 1)))
      what = "dynamic_update_slice operand sharding must be equal to update sharding, got operand sharding %s and update sharding %s.";
  } else {
    sr_builder_replicate(&b);
  }
  SrAxes xu = 0, uu = 0;
  if (!what && s.mode != SR_MODE_AUTO) {
    if (sr_getu(cx, x, &xu) < 0 || sr_getu(cx, u, &uu) < 0) return -1;
    if (xu != uu)
      what = "dynamic_update_slice operand and update must be unreduced along the same axes. Got operand sharding %s and update sharding %s.";
    else if (sr_getr(cx, x) != sr_getr(cx, u))
      what = "dynamic_update_slice operand and update must be reduced along the same axes. Got operand sharding %s and update sharding %s.";
  }
  if (what) {
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_aval_str_axis_types(&a, cx, x);
    sr_aval_str_axis_types(&c, cx, u);
    sr_terr(cx, "ShardingTypeError", what, sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  if (s.mode != SR_MODE_AUTO) {
    b.unreduced = xu;
    b.reduced = sr_getr(cx, x);
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

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

JVP(jvp_dynamic_slice) {
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *in[SR_MAX_RANK + 1];
  in[0] = t[0];
  for (uint32_t i = 1; i < e->nin && i <= SR_MAX_RANK; i++) in[i] = x[i];
  ty[0] = sr_ad_bind_eqn1(ad, e, in);
  return ty[0] ? 0 : -1;
}

TR(tr_dynamic_slice) {
  const SrType *ot = ct_of(e, 0);
  SrTypeBuilder b;
  sr_type_builder(&b, ot);
  b.dtype = sr_ad_type(ad, ct[0])->dtype;
  SrVal *zeros = sr_ad_full(ad, sr_type_get(&b), 0.0);
  SrVal *in[SR_MAX_RANK + 2];
  in[0] = zeros;
  in[1] = ct[0];
  for (uint32_t i = 1; i < e->nin && i <= SR_MAX_RANK; i++) in[i + 1] = x[i];
  cx[0] = sr_ad_bind(ad, SR_P_dynamic_update_slice, (int)e->nin + 1, in, 0, NULL);
  return cx[0] ? 0 : -1;
}

JVP(jvp_dynamic_update_slice) {
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0] && !t[1]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *in[SR_MAX_RANK + 2];
  in[0] = t[0] ? t[0] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[0])));
  in[1] = t[1] ? t[1] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[1])));
  for (uint32_t i = 2; i < e->nin && i < SR_MAX_RANK + 2; i++) in[i] = x[i];
  ty[0] = sr_ad_bind_eqn1(ad, e, in);
  return ty[0] ? 0 : -1;
}

TR(tr_dynamic_update_slice) {
  const SrType *ut = x[1] ? sr_ad_ct_type(sr_ad_type(ad, x[1])) : ct_of(e, 1);
  SrVal *in[SR_MAX_RANK + 2];
  for (uint32_t i = 2; i < e->nin && i < SR_MAX_RANK + 2; i++) in[i] = x[i];
  if (!x[0]) {
    in[0] = ct[0];
    in[1] = sr_ad_full(ad, ut, 0.0);
    if (!(cx[0] = sr_ad_bind(ad, SR_P_dynamic_update_slice, (int)e->nin, in, 0, NULL))) return -1;
  }
  if (!x[1]) {
    int64_t sizes[SR_MAX_RANK];
    for (int i = 0; i < ut->ndim; i++) sizes[i] = ut->dims[i].size;
    in[1] = ct[0];
    cx[1] = sr_ad_bindv(ad, SR_P_dynamic_slice, (int)e->nin - 1, in + 1, "slice_sizes", sr_ad_ints(sizes, ut->ndim), NULL);
    if (!cx[1]) return -1;
  }
  return 0;
}

/* ==== gather ==== */

typedef struct Gdn {
  int64_t offset[SR_MAX_RANK], collapsed[SR_MAX_RANK], start_map[SR_MAX_RANK], obatch[SR_MAX_RANK],
      ibatch[SR_MAX_RANK];
  int noffset, ncollapsed, nstart_map, nobatch, nibatch;
} Gdn;

/* The fields of GatherDimensionNumbers and ScatterDimensionNumbers, in
   Gdn's order. */
static const char *const gdn_keys[5] = {"offset_dims", "collapsed_slice_dims", "start_index_map",
                                        "operand_batching_dims", "start_indices_batching_dims"};
static const char *const sdn_keys[5] = {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                                        "operand_batching_dims", "scatter_indices_batching_dims"};

/* A cls(...) param with those fields (keys): 0, -1 when it is not one,
   -2 when it cannot be read (a field older texts lack is empty). */
static int parse_dn(const SrVal *v, const char *cls, const char *const *keys, Gdn *g) {
  size_t n, cl = strlen(cls);
  const char *s = sr_lax_param_text(v, &n);
  if (!s || n < cl + 1 || memcmp(s, cls, cl) != 0 || s[cl] != '(') return -1;
  int64_t *f[5] = {g->offset, g->collapsed, g->start_map, g->obatch, g->ibatch};
  int *c[5] = {&g->noffset, &g->ncollapsed, &g->nstart_map, &g->nobatch, &g->nibatch};
  for (int i = 0; i < 5; i++)
    if (sr_lax_text_ints(s, n, keys[i], f[i], c[i]) < 0) return -2;
  return 0;
}

/* The param text of g with those fields, as JAX prints it. */
static SrVal *dn_text(const char *cls, const char *const *keys, const Gdn *g) {
  const int64_t *f[5] = {g->offset, g->collapsed, g->start_map, g->obatch, g->ibatch};
  int c[5] = {g->noffset, g->ncollapsed, g->nstart_map, g->nobatch, g->nibatch};
  return sr_lax_dn_text(cls, 5, keys, f, c);
}

/* A GatherDimensionNumbers param (parse_dn's result). */
static int parse_gdn(const SrVal *v, Gdn *g) { return parse_dn(v, "GatherDimensionNumbers", gdn_keys, g); }

static int read_gdn(SrTypeCtx *cx, const SrRuleEqn *e, Gdn *g) {
  const SrVal *v = sr_rparam(e, "dimension_numbers");
  int rc = parse_gdn(v, g);
  if (rc == -1) return sr_terr(cx, "TypeError", "gather's dimension_numbers is not a GatherDimensionNumbers(...)");
  if (rc == -2) {
    const char *s = v->text ? v->text : v->str.s;
    int n = (int)(v->text ? v->textlen : v->str.n);
    return sr_terr(cx, "TypeError", "gather's dimension_numbers cannot be read: %.*s", n, s);
  }
  return 0;
}

static int in_list(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

/* slicing._is_sorted, _no_duplicate_dims, _sorted_dims_in_range,
   _dims_in_range, _disjoint_dims */
static int dims_check_op(SrTypeCtx *cx, const char *opn, const int64_t *d, int n, const char *name, int sorted, int nodup,
                         int rank, int range_sorted) {
  SrBuf b = SR_BUF_INIT;
  sr_ints_str(&b, d, n);
  int rc = 0;
  for (int i = 1; sorted && !rc && i < n; i++)
    if (d[i] < d[i - 1]) rc = sr_terr(cx, "TypeError", "%s in %s op must be sorted; got %s", name, opn, sr_buf_str(&b));
  if (!rc && rank >= 0 && n) {
    int64_t bad = 0;
    int has = 0;
    if (range_sorted) {
      if (d[0] < 0) bad = d[0], has = 1;
      else if (d[n - 1] >= rank) bad = d[n - 1], has = 1;
      has = has && bad != 0; /* Python's `if invalid_dim:` skips a 0 */
    } else {
      for (int i = 0; i < n && !has; i++)
        if (d[i] < 0 || d[i] >= rank) bad = d[i], has = 1;
    }
    if (has)
      rc = sr_terr(cx, "TypeError", "Invalid %s set in %s op; valid range is [0, %d); got: %lld.", name, opn, rank,
                   (long long)bad);
  }
  for (int i = 0; nodup && !rc && i < n; i++)
    for (int k = 0; k < i && !rc; k++)
      if (d[i] == d[k]) rc = sr_terr(cx, "TypeError", "%s in %s op must not repeat; got: %s.", name, opn, sr_buf_str(&b));
  sr_buf_free(&b);
  return rc;
}

static int disjoint_op(SrTypeCtx *cx, const char *opn, const int64_t *a, int na, const int64_t *b, int nb, const char *n1,
                       const char *n2) {
  for (int i = 0; i < na; i++)
    if (in_list(b, nb, a[i])) {
      SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
      sr_ints_str(&x, a, na);
      sr_ints_str(&y, b, nb);
      sr_terr(cx, "TypeError", "%s and %s in %s op must be disjoint; got: %s and %s.", n1, n2, opn, sr_buf_str(&x),
              sr_buf_str(&y));
      sr_buf_free(&x);
      sr_buf_free(&y);
      return -1;
    }
  return 0;
}

static int dims_check(SrTypeCtx *cx, const int64_t *d, int n, const char *name, int sorted, int nodup, int rank,
                      int range_sorted) {
  return dims_check_op(cx, "gather", d, n, name, sorted, nodup, rank, range_sorted);
}

static int disjoint(SrTypeCtx *cx, const int64_t *a, int na, const int64_t *b, int nb, const char *n1, const char *n2) {
  return disjoint_op(cx, "gather", a, na, b, nb, n1, n2);
}

/* slicing._gather_shape_rule (the checks of XLA's InferGatherShape). */
static int gather_shape(SrTypeCtx *cx, const SrType *op, const SrType *ix, const Gdn *g, const int64_t *ss, int nss,
                        int64_t *shape, const char **syms, int *rank) {
  int ivd = ix->ndim - 1;
  if (ivd < 0)
    return sr_terr(cx, "TypeError",
                   "Gather index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is %d and gather "
                   "index leaf dimension is %d.",
                   ix->ndim, ivd);
  if (dims_check(cx, g->offset, g->noffset, "offset_dims", 1, 1, -1, 0) < 0) return -1;
  int out_rank = g->noffset + ix->ndim - 1;
  if (out_rank > SR_MAX_RANK) return sr_terr(cx, "TypeError", "gather: a result of rank %d is too large", out_rank);
  for (int i = 0; i < g->noffset; i++)
    if (g->offset[i] < 0 || g->offset[i] >= out_rank)
      return sr_terr(cx, "TypeError",
                     "Offset dimension %d in gather op is out of bounds; got %lld, but should have been in [0, %d)", i,
                     (long long)g->offset[i], out_rank);
  if (g->nstart_map != ix->dims[ivd].size)
    return sr_terr(cx, "TypeError",
                   "Gather op has %d elements in start_index_map and the bound of dimension index_vector_dim=%d of "
                   "indices is %lld. These two numbers must be equal.",
                   g->nstart_map, ivd, (long long)ix->dims[ivd].size);
  for (int i = 0; i < g->nstart_map; i++)
    if (g->start_map[i] < 0 || g->start_map[i] >= op->ndim)
      return sr_terr(cx, "TypeError", "Invalid start_index_map; domain is [0, %d), got: %d->%lld.", op->ndim, i,
                     (long long)g->start_map[i]);
  if (dims_check(cx, g->start_map, g->nstart_map, "start_index_map", 0, 1, -1, 0) < 0 ||
      dims_check(cx, g->collapsed, g->ncollapsed, "collapsed_slice_dims", 1, 1, op->ndim, 1) < 0 ||
      dims_check(cx, g->obatch, g->nobatch, "operand_batching_dims", 1, 1, op->ndim, 1) < 0 ||
      disjoint(cx, g->collapsed, g->ncollapsed, g->obatch, g->nobatch, "collapsed_slice_dims", "operand_batching_dims") < 0 ||
      disjoint(cx, g->start_map, g->nstart_map, g->obatch, g->nobatch, "start_index_map", "operand_batching_dims") < 0 ||
      dims_check(cx, g->ibatch, g->nibatch, "start_indices_batching_dims", 0, 1, ix->ndim, 0) < 0)
    return -1;
  if (in_list(g->ibatch, g->nibatch, ivd)) {
    SrBuf b = SR_BUF_INIT;
    sr_ints_str(&b, g->ibatch, g->nibatch);
    sr_terr(cx, "TypeError", "Gather op cannot have the index vector dimension as a batching dimension; got %s.",
            sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (g->nobatch != g->nibatch) {
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
    sr_ints_str(&a, g->obatch, g->nobatch);
    sr_ints_str(&b, g->ibatch, g->nibatch);
    sr_terr(cx, "TypeError",
            "Gather op requires equal numbers of operand_batching_dims and start_indices_batching_dims, got %s and%s.",
            sr_buf_str(&a), sr_buf_str(&b));
    sr_buf_free(&a);
    sr_buf_free(&b);
    return -1;
  }
  for (int i = 0; i < g->nobatch; i++)
    if (op->dims[g->obatch[i]].size != ix->dims[g->ibatch[i]].size) {
      int64_t a[SR_MAX_RANK], b[SR_MAX_RANK];
      for (int k = 0; k < g->nobatch; k++) a[k] = op->dims[g->obatch[k]].size, b[k] = ix->dims[g->ibatch[k]].size;
      return shape_pair_error(cx,
                              "Gather op requires operand batching dimensions and indices batching dimensions to have "
                              "the same shape, got %s and %s.",
                              a, b, g->nobatch);
    }
  if (nss != op->ndim)
    return sr_terr(cx, "TypeError",
                   "Gather op must have one slice size for every input dimension; got: len(slice_sizes)=%d, "
                   "input_shape.rank=%d",
                   nss, op->ndim);
  if (nss != g->noffset + g->ncollapsed + g->nobatch) {
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_ints_str(&a, g->offset, g->noffset);
    sr_ints_str(&b, g->collapsed, g->ncollapsed);
    sr_ints_str(&c, g->obatch, g->nobatch);
    sr_terr(cx, "TypeError",
            "All components of the offset index in a gather op must either be a offset dimension or explicitly "
            "collapsed/batching; got len(slice_sizes)=%d, output_slice_sizes=%s, collapsed_slice_dims=%s, "
            "operand_batching_dims=%s.",
            nss, sr_buf_str(&a), sr_buf_str(&b), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&b);
    sr_buf_free(&c);
    return -1;
  }
  int empty = 0;
  for (int i = 0; i < ix->ndim; i++)
    if (ix->dims[i].size == 0) empty = 1;
  for (int i = 0; i < nss && !empty; i++)
    if (!(ss[i] >= 0 && op->dims[i].size >= ss[i]))
      return sr_terr(cx, "TypeError", "Slice size at index %d in gather op is out of range, must be within [0, %lld + 1), got %lld.",
                     i, (long long)op->dims[i].size, (long long)ss[i]);
  for (int i = 0; i < g->ncollapsed; i++)
    if (ss[g->collapsed[i]] != 1)
      return sr_terr(cx, "TypeError",
                     "Gather op can only collapse slice dims with bound 1, but bound is %lld for index %lld at position %d.",
                     (long long)ss[g->collapsed[i]], (long long)g->collapsed[i], i);
  for (int i = 0; i < g->nobatch; i++)
    if (ss[g->obatch[i]] > 1)
      return sr_terr(cx, "TypeError",
                     "Gather op can only have operand batching dims with bound 0/1, but bound is %lld for index %lld at "
                     "position %d.",
                     (long long)ss[g->obatch[i]], (long long)g->obatch[i], i);
  /* _gather_shape_computation */
  int si = 0, ii = 0;
  for (int i = 0; i < out_rank; i++) {
    if (in_list(g->offset, g->noffset, i)) {
      while (in_list(g->collapsed, g->ncollapsed, si) || in_list(g->obatch, g->nobatch, si)) si++;
      syms[i] = NULL;
      shape[i] = ss[si++];
    } else {
      if (ii == ivd) ii++;
      syms[i] = ix->dims[ii].sym;
      shape[i] = ix->dims[ii++].size;
    }
  }
  *rank = out_rank;
  return 0;
}

/* slicing._gather_spec_computation: the result's specs when they follow
   unambiguously from the operand's and the indices'; 1 if they do not. */
static int gather_spec(const SrType *op, const SrType *ix, const Gdn *g, const int64_t *ss, SrTypeBuilder *b) {
  int any = 0;
  for (int i = 0; i < op->ndim; i++) any |= op->dims[i].nax != 0;
  for (int i = 0; i < ix->ndim; i++) any |= ix->dims[i].nax != 0;
  if (!any) return 0;
  for (int k = 0; k < g->nstart_map; k++) {
    int64_t i = g->start_map[k];
    if (ss[i] != op->dims[i].size && op->dims[i].nax) return 1;
  }
  for (int k = 0; k < g->nobatch; k++) {
    const SrDim *o = &op->dims[g->obatch[k]], *x = &ix->dims[g->ibatch[k]];
    if (o->nax && x->nax && !sr_spec_entry_eq(op, (int)g->obatch[k], ix, (int)g->ibatch[k])) return 1;
  }
  for (int i = 0; i < ix->ndim; i++)
    if (ix->dims[i].nax && !in_list(g->ibatch, g->nibatch, i)) return 1;
  /* the indices' specs, batching dims resolved from the operand's */
  const SrType *isrc[SR_MAX_RANK];
  int idim[SR_MAX_RANK];
  for (int i = 0; i < ix->ndim; i++) isrc[i] = ix, idim[i] = i;
  for (int k = 0; k < g->nobatch; k++)
    if (!ix->dims[g->ibatch[k]].nax) isrc[g->ibatch[k]] = op, idim[g->ibatch[k]] = (int)g->obatch[k];
  int si = 0, ii = 0;
  for (int i = 0; i < b->ndim; i++) {
    const SrType *t;
    int d;
    if (in_list(g->offset, g->noffset, i)) {
      while (in_list(g->collapsed, g->ncollapsed, si) || in_list(g->obatch, g->nobatch, si)) si++;
      t = op, d = si++;
    } else {
      t = isrc[ii], d = idim[ii];
      ii++;
    }
    if (!t->dims[d].nax) continue;
    b->dims[i].nax = t->dims[d].nax;
    for (int k = 0; k < t->dims[d].nax; k++) {
      int a = b->mesh ? sr_mesh_axis(b->mesh, t->mesh->names[t->dims[d].ax[k]]) : -1;
      if (a < 0) b->mesh = t->mesh, a = t->dims[d].ax[k];
      b->dims[i].ax[k] = (uint8_t)a;
    }
  }
  return 0;
}

/* slicing.gather_p. */
static int type_gather(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *op = e->in[0], *ix = e->in[1];
  Gdn g;
  int64_t ss[SR_MAX_RANK], shape[SR_MAX_RANK];
  const char *syms[SR_MAX_RANK];
  int nss = 0, rank = 0;
  if (read_gdn(cx, e, &g) < 0 || sr_rparam_ints(cx, e, "slice_sizes", 1, ss, SR_MAX_RANK, &nss) < 0) return -1;
  if (gather_shape(cx, op, ix, &g, ss, nss, shape, syms, &rank) < 0) return -1;
  if (!sr_dtype_in(ix->dtype, SR_DC_INT)) return sr_terr(cx, "ValueError", "indices must have an integer type");
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  builder_shape(&b, op, shape, rank, &s);
  for (int i = 0; i < rank; i++) b.dims[i].sym = syms[i];
  b.weak = op->weak;
  if (s.mode == SR_MODE_EXPLICIT && gather_spec(op, ix, &g, ss, &b) > 0) {
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_aval_repr(&a, op);
    sr_aval_repr(&c, ix);
    sr_terr(cx, "ShardingTypeError",
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as out "
            "sharding could not be resolved unambiguously (or would require collectives on inputs). Got operand=%s, "
            "indices=%s",
            sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  if (s.mode != SR_MODE_AUTO) {
    /* _gather_ur_rule */
    SrAxes ou, iu;
    if (sr_getu(cx, op, &ou) < 0 || sr_getu(cx, ix, &iu) < 0) return -1;
    if (ou || iu)
      return sr_terr(cx, "NotImplementedError",
                     "unreduced rule for gather is not implemented. Please file an issue at "
                     "https://github.com/jax-ml/jax/issues");
    if (sr_getr(cx, ix)) {
      SrBuf a = SR_BUF_INIT;
      sr_aval_str_axis_types(&a, cx, ix);
      sr_terr(cx, "ShardingTypeError", "gather indices cannot be reduced. Got indices sharding %s.", sr_buf_str(&a));
      sr_buf_free(&a);
      return -1;
    }
    b.reduced = sr_getr(cx, op);
    for (int i = 0; b.reduced && i < ix->ndim; i++)
      if (ix->dims[i].nax) return sr_terr(cx, "NotImplementedError", "gather of a reduced operand with sharded indices");
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* Gather on whole arrays (every device computes the whole result from
   replicated operands): XLA's semantics, out-of-range starts clamped
   (CLIP and PROMISE_IN_BOUNDS). */
typedef struct GatherArg {
  Gdn g;
  int64_t ss[SR_MAX_RANK];
  int nd, ni, no; /* operand, indices and result ranks */
  size_t es;
  SrDtype idt;
  int fill;                 /* FILL_OR_DROP: a window out of range is fillv */
  unsigned char fillv[16];
} GatherArg;

static int gather_fn(SrShardIO *io) {
  GatherArg *a = io->arg;
  const int64_t *os = io->in_shape[0], *is = io->in_shape[1], *rs = io->out_shape[0];
  const unsigned char *op = io->in[0]->data, *ix = io->in[1]->data;
  unsigned char *out = io->out[0]->data;
  size_t isz = sr_elem_size(a->idt);
  int64_t total = 1, opstride[SR_MAX_RANK], istride[SR_MAX_RANK];
  for (int i = 0; i < a->no; i++) total *= rs[i];
  for (int64_t i = a->nd - 1, s = 1; i >= 0; s *= os[i], i--) opstride[i] = s;
  for (int64_t i = a->ni - 1, s = 1; i >= 0; s *= is[i], i--) istride[i] = s;
  /* which operand dims the offset dims walk, in order */
  int window[SR_MAX_RANK], nw = 0;
  for (int d = 0; d < a->nd; d++)
    if (!in_list(a->g.collapsed, a->g.ncollapsed, d) && !in_list(a->g.obatch, a->g.nobatch, d)) window[nw++] = d;
  int64_t pos[SR_MAX_RANK] = {0};
  for (int64_t k = 0; k < total; k++) {
    int64_t batch[SR_MAX_RANK], start[SR_MAX_RANK] = {0};
    int nb = 0, nof = 0, oob = 0;
    int64_t off[SR_MAX_RANK];
    for (int i = 0; i < a->no; i++) {
      if (in_list(a->g.offset, a->g.noffset, i)) off[nof++] = pos[i];
      else batch[nb++] = pos[i];
    }
    int64_t base = 0;
    for (int j = 0; j < nb; j++) base += batch[j] * istride[j];
    for (int m = 0; m < a->g.nstart_map; m++) {
      int d = (int)a->g.start_map[m];
      int64_t v = sr_kern_get_i64(a->idt, ix + (size_t)(base + m * istride[a->ni - 1]) * isz);
      int64_t hi = os[d] - a->ss[d];
      if (v < 0 || v > hi) oob = 1;
      start[d] = clamp64(v, 0, hi < 0 ? 0 : hi);
    }
    for (int m = 0; m < a->g.nobatch; m++) start[a->g.obatch[m]] = batch[a->g.ibatch[m]];
    int64_t at = 0;
    for (int d = 0; d < a->nd; d++) at += start[d] * opstride[d];
    for (int w = 0; w < nw; w++) at += off[w] * opstride[window[w]];
    if (oob && a->fill) memcpy(out + (size_t)k * a->es, a->fillv, a->es);
    else memcpy(out + (size_t)k * a->es, op + (size_t)at * a->es, a->es);
    for (int i = a->no - 1; i >= 0 && ++pos[i] == rs[i]; i--) pos[i] = 0;
  }
  return 0;
}

/* The fill value of a FILL_OR_DROP gather, in dtype dt, into out: the
   param's value, or when it is None the default slicing.gather gives
   (NaN, the integer's least or greatest value, True). */
static void gather_fill_value(const SrVal *v, SrDtype dt, unsigned char *out) {
  double f = 0;
  int64_t i = 0;
  int have = 0;
  memset(out, 0, 16);
  if (v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL)) f = (double)v->i, i = v->i, have = 1;
  else if (v && v->kind == SR_V_FLOAT) f = v->f, i = (int64_t)v->f, have = 1;
  else if (v && v->kind == SR_V_WORD && v->str.n >= 3) {
    int neg = v->str.s[0] == '-';
    f = memcmp(v->str.s + neg, "nan", 3) == 0 ? NAN : neg ? -INFINITY : INFINITY;
    have = 1;
  }
  if (sr_prng_impl_of(dt) >= 0) {
    /* a key: each uint32 word of its data (uint32's max by default) */
    uint32_t w = have ? (uint32_t)i : UINT32_MAX;
    for (size_t k = 0; k + 4 <= sr_elem_size(dt) && k + 4 <= 16; k += 4) memcpy(out + k, &w, 4);
    return;
  }
  if (!have) {
    if (sr_dtype_in(dt, SR_DC_FLOAT) || sr_dtype_in(dt, SR_DC_COMPLEX)) f = NAN;
    else if (dt == SR_BOOL) i = 1;
    else if (sr_dtype_kind(dt) == SR_DK_UINT) i = -1; /* all ones: the greatest */
    else i = sr_elem_size(dt) == 8 ? INT64_MIN : -((int64_t)1 << (8 * sr_elem_size(dt) - 1));
    if (!sr_dtype_in(dt, SR_DC_FLOAT) && !sr_dtype_in(dt, SR_DC_COMPLEX)) f = (double)i;
  }
  sr_kern_set_scalar(dt, f, i, out);
}

static int ev_gather(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  SrArray *x = e->in[0], *ix = e->in[1];
  GatherArg a;
  memset(&a, 0, sizeof a);
  const SrVal *mode = sr_ev_param(e, "mode");
  int nss = 0;
  if (parse_gdn(sr_ev_param(e, "dimension_numbers"), &a.g) < 0 ||
      sr_ev_param_ints(cx, e, "slice_sizes", a.ss, SR_MAX_RANK, &nss) < 0 || nss != x->type->ndim)
    return sr_ev_err(cx, "RuntimeError", "internal: gather's params cannot be read");
  a.nd = x->type->ndim;
  a.ni = ix->type->ndim;
  a.no = e->out_type[0]->ndim;
  a.es = esize(x);
  a.idt = ix->type->dtype;
  if (mode && mode->kind == SR_V_WORD && mode->str.n >= 12 && memcmp(mode->str.s + mode->str.n - 12, "FILL_OR_DROP", 12) == 0) {
    a.fill = 1;
    gather_fill_value(sr_ev_param(e, "fill_value"), x->type->dtype, a.fillv);
  }
  SrArray *ins[2] = {0};
  int rc = 0;
  ins[0] = sr_redistribute(cx, x, o.m, mapped_layout(x, NULL, NULL));
  ins[1] = ins[0] ? sr_redistribute(cx, ix, o.m, mapped_layout(ix, NULL, NULL)) : NULL;
  if (!ins[0] || !ins[1]) rc = -1;
  SrArray *r = NULL;
  if (rc == 0) {
    r = sr_array_new(e->out_type[0], natural(o.l, ~0ull, ins[0]->layout, x->type->dtype), o.m);
    rc = sr_ev_map(cx, 2, ins, 1, &r, 0, gather_fn, &a);
  }
  sr_array_unref(ins[0]);
  sr_array_unref(ins[1]);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* The param text of GatherDimensionNumbers g, as JAX prints it. */
static SrVal *gdn_val(const Gdn *g) { return dn_text("GatherDimensionNumbers", gdn_keys, g); }

static void shift_dims(int64_t *v, int n, int64_t by) {
  for (int i = 0; i < n; i++) v[i] += by;
}

/* Puts d in front of v (n entries; n grows). */
static void push_front(int64_t *v, int *n, int64_t d) {
  memmove(v + 1, v, (size_t)*n * sizeof *v);
  v[0] = d;
  (*n)++;
}

/* _gather_batching_rule on an operand and indices with batch dims obd and
   ibd (one of them mapped), the gather's dimension numbers g, slice sizes
   ss (nss of them) and its other params as values (borrowed). */
static int batch_gather_with(SrBatch *b, SrVal *op, int obd, SrVal *ix, int ibd, Gdn g, const int64_t *ss, int nss,
                             SrVal *unique, SrVal *sorted, SrVal *mode, SrVal *fill, SrVal **y, int *ybd) {
  int64_t nsz[SR_MAX_RANK + 1];
  if (nss >= SR_MAX_RANK) return sr_batch_no_rule(b, &sr_prims[SR_P_gather]);
  memcpy(nsz + 1, ss, (size_t)nss * sizeof *ss);
  if (obd != SR_NOT_MAPPED) {
    op = sr_batch_moveaxis(b, op, obd, 0);
    const SrType *t = sr_ad_type(&b->ad, op);
    if (!t) return -1;
    shift_dims(g.offset, g.noffset, 1);
    shift_dims(g.collapsed, g.ncollapsed, 1);
    shift_dims(g.obatch, g.nobatch, 1);
    shift_dims(g.start_map, g.nstart_map, 1);
    if (ibd == SR_NOT_MAPPED) {
      nsz[0] = t->dims[0].size;
      push_front(g.offset, &g.noffset, 0);
    } else {
      ix = sr_batch_moveaxis(b, ix, ibd, 0);
      nsz[0] = t->dims[0].size == 0 ? 0 : 1;
      push_front(g.obatch, &g.nobatch, 0);
      shift_dims(g.ibatch, g.nibatch, 1);
      push_front(g.ibatch, &g.nibatch, 0);
    }
  } else {
    ix = sr_batch_moveaxis(b, ix, ibd, 0);
    shift_dims(g.offset, g.noffset, 1);
    shift_dims(g.ibatch, g.nibatch, 1);
    /* batched accesses into one array need not be sorted or unique */
    unique = sorted = sr_bool(0);
  }
  SrVal *in[2] = {op, ix};
  if (!op || !ix) return -1;
  const int64_t *sizes = obd != SR_NOT_MAPPED ? nsz : nsz + 1;
  int n = obd != SR_NOT_MAPPED ? nss + 1 : nss;
  y[0] = sr_ad_bindv(&b->ad, SR_P_gather, 2, in, "dimension_numbers", gdn_val(&g), "fill_value", sr_ref(fill),
                     "indices_are_sorted", sr_ref(sorted), "mode", sr_ref(mode), "slice_sizes", sr_ad_ints(sizes, n),
                     "unique_indices", sr_ref(unique), NULL);
  ybd[0] = 0;
  return y[0] ? 0 : -1;
}

BATCH(batch_gather) {
  Gdn g;
  int64_t ss[SR_MAX_RANK];
  int nss = param_ints(e, "slice_sizes", ss, SR_MAX_RANK);
  SrVal *unique = param(e, "unique_indices"), *sorted = param(e, "indices_are_sorted"), *mode = param(e, "mode"),
        *fill = param(e, "fill_value");
  if (e->nin != 2 || nss < 0 || parse_gdn(param(e, "dimension_numbers"), &g) < 0)
    return sr_batch_no_rule(b, e->prim);
  return batch_gather_with(b, x[0], bd[0], x[1], bd[1], g, ss, nss, unique ? unique : sr_bool(0),
                           sorted ? sorted : sr_bool(0), mode ? mode : sr_none(), fill ? fill : sr_none(), y, ybd);
}

/* ==== scatter, scatter-add ==== */

/* lax.scatter_p and scatter_add_p (slicing.py): the updates replace (or
   are added to) the operand's windows at the indices.  Its dimension numbers in the same layout as a gather's:
   update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
   operand_batching_dims, scatter_indices_batching_dims. */
static int parse_sdn(const SrVal *v, Gdn *g) { return parse_dn(v, "ScatterDimensionNumbers", sdn_keys, g); }

static SrVal *sdn_val(const Gdn *g) { return dn_text("ScatterDimensionNumbers", sdn_keys, g); }

/* The updates dims that are not window dims, in order (their scatter
   dims, matching the indices' dims but the index vector). */
static int update_scatter_dims(const Gdn *g, int urank, int *out) {
  int n = 0;
  for (int i = 0; i < urank; i++)
    if (!in_list(g->offset, g->noffset, i)) out[n++] = i;
  return n;
}

/* The window size of each operand dim (_clamp_scatter_indices). */
static void scatter_window(const Gdn *g, const int64_t *oshape, int orank, const int64_t *ushape, int64_t *ws) {
  for (int i = 0, pos = 0; i < orank; i++)
    ws[i] = in_list(g->collapsed, g->ncollapsed, i) || in_list(g->obatch, g->nobatch, i) ? 1
            : pos < g->noffset                                                          ? ushape[g->offset[pos++]]
                                                                                        : oshape[i];
}

/* At most one distinct spec among the entries (None counts for none):
   _is_resolvable. */
static int resolvable(const SrType *a, int da, const SrType *b, int db, const SrType *c, int dc) {
  const SrType *t[3] = {a, b, c};
  int d[3] = {da, db, dc};
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < i; k++)
      if (t[i]->dims[d[i]].nax && t[k]->dims[d[k]].nax && !sr_spec_entry_eq(t[i], d[i], t[k], d[k])) return 0;
  return 1;
}

/* _scatter_spec_computation: the result's spec into b (which starts as
   the operand's), or 1 when the operands' shardings do not resolve it. */
static int scatter_spec(const SrType *op, const SrType *ix, const SrType *up, const Gdn *g, SrTypeBuilder *b) {
  int any = 0, ivd = ix->ndim - 1;
  for (int i = 0; i < op->ndim; i++) any |= op->dims[i].nax != 0;
  for (int i = 0; i < ix->ndim; i++) any |= ix->dims[i].nax != 0;
  for (int i = 0; i < up->ndim; i++) any |= up->dims[i].nax != 0;
  if (!any) return 0;
  int sd[SR_MAX_RANK], ubatch[SR_MAX_RANK], ow[SR_MAX_RANK], now = 0;
  update_scatter_dims(g, up->ndim, sd);
  for (int k = 0; k < g->nibatch; k++) ubatch[k] = sd[g->ibatch[k]];
  for (int i = 0; i < op->ndim; i++)
    if (!in_list(g->collapsed, g->ncollapsed, i) && !in_list(g->obatch, g->nobatch, i)) ow[now++] = i;
  for (int k = 0; k < g->nobatch; k++)
    if (!resolvable(op, (int)g->obatch[k], ix, (int)g->ibatch[k], up, ubatch[k])) return 1;
  for (int k = 0; k < g->noffset && k < now; k++) {
    int ud = (int)g->offset[k], od = ow[k];
    int full = up->dims[ud].size == op->dims[od].size && sr_spec_entry_eq(up, ud, op, od);
    if (!full && (up->dims[ud].nax || op->dims[od].nax)) return 1;
  }
  for (int k = 0; k < g->ncollapsed; k++)
    if (op->dims[g->collapsed[k]].nax) return 1;
  for (int i = 0; i < up->ndim; i++)
    if (up->dims[i].nax && !in_list(g->offset, g->noffset, i)) {
      int batching = 0;
      for (int k = 0; k < g->nibatch; k++) batching |= ubatch[k] == i;
      if (!batching) return 1;
    }
  for (int i = 0; i < ivd; i++)
    if (ix->dims[i].nax && !in_list(g->ibatch, g->nibatch, i)) return 1;
  if (ix->dims[ivd].nax) return 1;
  for (int k = 0; k < g->nobatch; k++) {
    int od = (int)g->obatch[k];
    if (b->dims[od].nax) continue;
    if (ix->dims[g->ibatch[k]].nax) take_spec(b, od, ix, (int)g->ibatch[k]);
    else if (up->dims[ubatch[k]].nax) take_spec(b, od, up, ubatch[k]);
  }
  for (int k = 0; k < g->noffset && k < now; k++)
    if (!b->dims[ow[k]].nax && up->dims[g->offset[k]].nax) take_spec(b, ow[k], up, (int)g->offset[k]);
  return 0;
}

/* _scatter_ur_rule: no reduced inputs; the operand and the updates
   unreduced alike (the result so), over replicated indices
   (_scatter_unreduced_rule). */
static int scatter_ur(SrTypeCtx *cx, const SrType *op, const SrType *ix, const SrType *up, SrTypeBuilder *b) {
  if (sr_getr(cx, op) || sr_getr(cx, ix) || sr_getr(cx, up))
    return sr_terr(cx, "NotImplementedError",
                   "reduced rule for scatter is not implemented. Please file an issue at "
                   "https://github.com/jax-ml/jax/issues");
  SrAxes ou, iu, uu;
  if (sr_getu(cx, ix, &iu) < 0) return -1;
  if (iu) {
    SrBuf a = SR_BUF_INIT;
    sr_aval_str_axis_types(&a, cx, ix);
    sr_terr(cx, "ShardingTypeError", "scatter indices cannot be unreduced. Got indices sharding %s.", sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if (sr_getu(cx, op, &ou) < 0 || sr_getu(cx, up, &uu) < 0) return -1;
  if (ou != uu) {
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_aval_str_axis_types(&a, cx, op);
    sr_aval_str_axis_types(&c, cx, up);
    sr_terr(cx, "ShardingTypeError",
            "scatter operand and updates must be unreduced along the same axes. Got operand sharding %s and updates "
            "sharding %s.",
            sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  for (int i = 0; ou && i < ix->ndim; i++)
    if (ix->dims[i].nax) return sr_terr(cx, "NotImplementedError", "%s", "");
  b->unreduced = ou;
  b->ukind = ou ? SR_UK_SUM : SR_UK_NONE;
  return 0;
}

static int type_scatter(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 3, 1) < 0) return -1;
  const SrType *op = e->in[0], *ix = e->in[1], *up = e->in[2];
  Gdn g;
  int rc = parse_sdn(sr_rparam(e, "dimension_numbers"), &g);
  if (rc < 0) return sr_terr(cx, "TypeError", "scatter's dimension_numbers is not a ScatterDimensionNumbers(...)");
  if (!sr_dtype_in(ix->dtype, SR_DC_INT)) return sr_terr(cx, "ValueError", "indices must have an integer type");
  if (op->dtype != up->dtype)
    return sr_terr(cx, "TypeError", "lax.scatter requires arguments to have the same dtypes, got %s, %s.",
                   sr_dtype_name(op->dtype), sr_dtype_name(up->dtype));
  int ivd = ix->ndim - 1;
  if (ivd < 0)
    return sr_terr(cx, "TypeError",
                   "Scatter index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is 0 and "
                   "scatter index leaf dimension is -1.");
  int want = ivd + g.noffset;
  if (up->ndim != want) return sr_terr(cx, "TypeError", "Updates tensor must be of rank %d; got %d.", want, up->ndim);
  /* _scatter_shape_rule's checks, in its order */
  const char *sc = "scatter";
  if (dims_check_op(cx, sc, g.offset, g.noffset, "update_window_dims", 1, 0, -1, 0) < 0 ||
      dims_check_op(cx, sc, g.offset, g.noffset, "update_window_dims", 0, 1, -1, 0) < 0 ||
      dims_check_op(cx, sc, g.offset, g.noffset, "update_window_dims", 0, 0, up->ndim, 1) < 0 ||
      dims_check_op(cx, sc, g.collapsed, g.ncollapsed, "inserted_window_dims", 1, 0, -1, 0) < 0 ||
      dims_check_op(cx, sc, g.collapsed, g.ncollapsed, "inserted_window_dims", 0, 1, -1, 0) < 0 ||
      dims_check_op(cx, sc, g.collapsed, g.ncollapsed, "inserted_window_dims", 0, 0, op->ndim, 1) < 0 ||
      dims_check_op(cx, sc, g.obatch, g.nobatch, "operand_batching_dims", 1, 0, -1, 0) < 0 ||
      dims_check_op(cx, sc, g.obatch, g.nobatch, "operand_batching_dims", 0, 1, -1, 0) < 0 ||
      dims_check_op(cx, sc, g.obatch, g.nobatch, "operand_batching_dims", 0, 0, op->ndim, 1) < 0 ||
      disjoint_op(cx, sc, g.collapsed, g.ncollapsed, g.obatch, g.nobatch, "inserted_window_dims",
                  "operand_batching_dims") < 0 ||
      disjoint_op(cx, sc, g.start_map, g.nstart_map, g.obatch, g.nobatch, "scatter_dims_to_operand_dims",
                  "operand_batching_dims") < 0 ||
      dims_check_op(cx, sc, g.ibatch, g.nibatch, "scatter_indices_batching_dims", 0, 1, -1, 0) < 0 ||
      dims_check_op(cx, sc, g.ibatch, g.nibatch, "scatter_indices_batching_dims", 0, 0, ix->ndim, 0) < 0)
    return -1;
  if (in_list(g.ibatch, g.nibatch, ivd)) {
    SrBuf a = SR_BUF_INIT;
    sr_ints_str(&a, g.ibatch, g.nibatch);
    sr_terr(cx, "TypeError", "Scatter op cannot have the index vector dimension as a batching dimension; got %s.",
            sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if (g.nobatch != g.nibatch) {
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_ints_str(&a, g.obatch, g.nobatch);
    sr_ints_str(&c, g.ibatch, g.nibatch);
    sr_terr(cx, "TypeError",
            "Scatter op requires equal numbers of operand_batching_dims and scatter_indices_batching_dims, got %s and "
            "%s.",
            sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  {
    /* the batch shapes of the operand, the indices and the updates
       (_get_updates_batching_dims: the indices' dims among the updates'
       scatter dims) */
    int64_t ob[SR_MAX_RANK], ib[SR_MAX_RANK], ub[SR_MAX_RANK];
    int same_i = 1, same_u = 1;
    for (int k = 0; k < g.nobatch; k++) {
      ob[k] = op->dims[g.obatch[k]].size;
      ib[k] = ix->dims[g.ibatch[k]].size;
      same_i &= ob[k] == ib[k];
    }
    const char *what = "indices";
    const int64_t *other = ib;
    if (same_i) {
      for (int k = 0; k < g.nobatch; k++) {
        int64_t pos = -1;
        for (int d = 0, j = 0; d < up->ndim && pos < 0; d++) {
          if (in_list(g.offset, g.noffset, d)) continue;
          if (j++ == g.ibatch[k]) pos = d;
        }
        ub[k] = pos >= 0 ? up->dims[pos].size : -1;
        same_u &= ob[k] == ub[k];
      }
      what = "updates";
      other = ub;
    }
    if (!same_i || !same_u) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_ints_str(&a, ob, g.nobatch);
      sr_ints_str(&c, other, g.nobatch);
      sr_terr(cx, "TypeError",
              "Scatter op requires operand batching dimensions and %s batching dimensions to have the same shape, got "
              "%s and %s.",
              what, sr_buf_str(&a), sr_buf_str(&c));
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
  }
  if (g.noffset + g.ncollapsed + g.nobatch != op->ndim)
    return sr_terr(cx, "TypeError", "Scatter op has window of size %d; doesn't match operand of rank %d.",
                   g.noffset + g.ncollapsed + g.nobatch, op->ndim);
  if (g.nstart_map != ix->dims[ivd].size)
    return sr_terr(cx, "TypeError",
                   "Scatter op has %d elements in scatter_dims_to_operand_dims and the bound of dimension "
                   "index_vector_dim=%d of indices is %lld. These two numbers must be equal",
                   g.nstart_map, ivd, (long long)ix->dims[ivd].size);
  for (int i = 0; i < g.nstart_map; i++)
    if (g.start_map[i] < 0 || g.start_map[i] >= op->ndim)
      return sr_terr(cx, "TypeError", "Invalid scatter_dims_to_operand_dims mapping; domain is [0, %d), got: %d->%lld.",
                     op->ndim, i, (long long)g.start_map[i]);
  if (dims_check_op(cx, sc, g.start_map, g.nstart_map, "scatter_dims_to_operand_dims", 0, 1, -1, 0) < 0) return -1;
  int64_t oshape[SR_MAX_RANK], ushape[SR_MAX_RANK];
  for (int i = 0; i < op->ndim; i++) oshape[i] = op->dims[i].size;
  for (int i = 0; i < up->ndim; i++) ushape[i] = up->dims[i].size;
  for (int i = 0, w = 0; i < op->ndim; i++) {
    if (in_list(g.collapsed, g.ncollapsed, i) || in_list(g.obatch, g.nobatch, i) || w >= g.noffset) continue;
    int64_t d = g.offset[w++];
    if (ushape[d] > oshape[i])
      return sr_terr(cx, "TypeError",
                     "Bounds of the window dimensions of updates must not exceed the bounds of the corresponding "
                     "dimensions of operand. For dimension %lld, updates bound is %lld, operand bound is %lld.",
                     (long long)d, (long long)ushape[d], (long long)oshape[i]);
  }
  int sd[SR_MAX_RANK], ns = update_scatter_dims(&g, up->ndim, sd);
  for (int j = 0; j < ns; j++)
    if (ushape[sd[j]] != ix->dims[j].size)
      return sr_terr(cx, "TypeError",
                     "Bounds of the scatter dimensions of updates must be the same as the bounds of the "
                     "corresponding dimensions of scatter indices. For scatter dimension %d, updates bound is %lld, "
                     "indices bound is %lld.",
                     sd[j], (long long)ushape[sd[j]], (long long)ix->dims[j].size);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, op);
  b.unreduced = b.reduced = b.varying = 0;
  if (s.mode != SR_MODE_EXPLICIT) sr_builder_replicate(&b);
  else if (scatter_spec(op, ix, up, &g, &b)) {
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT, d = SR_BUF_INIT;
    sr_aval_repr(&a, op);
    sr_aval_repr(&c, ix);
    sr_aval_repr(&d, up);
    sr_terr(cx, "ShardingTypeError",
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the scatter update as "
            "out sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
            "operand=%s, indices=%s, updates=%s",
            sr_buf_str(&a), sr_buf_str(&c), sr_buf_str(&d));
    sr_buf_free(&a);
    sr_buf_free(&c);
    sr_buf_free(&d);
    return -1;
  }
  if (s.mode != SR_MODE_AUTO && scatter_ur(cx, op, ix, up, &b) < 0) return -1;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* Scatter on whole arrays: the updates' elements replace the operand's at
   their windows, in order (scatter-add adds them); CLIP clamps each window's start into range
   (_clamp_scatter_indices), the other modes drop a window out of range
   (XLA's semantics). */
typedef struct ScatterArg {
  Gdn g;
  int nd, ni, nu;
  size_t es;
  SrDtype idt, dt;
  int clip, op; /* op: a ScatterOp */
} ScatterArg;

typedef enum { SC_SET, SC_ADD, SC_SUB, SC_MUL, SC_MIN, SC_MAX } ScatterOp;

/* *to = *to op *from, in dtype dt (bool: add is or, mul and); min and max
   propagate a NaN, as lax.min and lax.max do. */
static void combine_elem(ScatterOp op, SrDtype dt, unsigned char *to, const unsigned char *from) {
  if (sr_dtype_is_complex(dt)) {
    /* part by part in the dtype's own precision; min and max
       lexicographic, as the collectives fold complex values */
    double ar, ai, br, bi;
    if (dt == SR_C64) {
      float f[4];
      memcpy(f, to, 8);
      memcpy(f + 2, from, 8);
      ar = f[0], ai = f[1], br = f[2], bi = f[3];
    } else {
      double d[4];
      memcpy(d, to, 16);
      memcpy(d + 2, from, 16);
      ar = d[0], ai = d[1], br = d[2], bi = d[3];
    }
    double rr, ri;
    if (op == SC_ADD) rr = ar + br, ri = ai + bi;
    else if (op == SC_SUB) rr = ar - br, ri = ai - bi;
    else if (op == SC_MUL) rr = ar * br - ai * bi, ri = ar * bi + ai * br;
    else {
      int b_less = br < ar || (br == ar && bi < ai);
      int take_b = op == SC_MIN ? b_less : !b_less && (br != ar || bi != ai);
      rr = take_b ? br : ar, ri = take_b ? bi : ai;
    }
    if (dt == SR_C64) {
      float f[2] = {(float)rr, (float)ri};
      memcpy(to, f, 8);
    } else {
      double d[2] = {rr, ri};
      memcpy(to, d, 16);
    }
  } else if (sr_dtype_in(dt, SR_DC_FLOAT)) {
    double a = sr_kern_get_f64(dt, to), b = sr_kern_get_f64(dt, from);
    double r = op == SC_ADD ? a + b : op == SC_SUB ? a - b : op == SC_MUL ? a * b : isnan(a) || isnan(b) ? NAN : op == SC_MIN ? fmin(a, b) : fmax(a, b);
    sr_kern_set_scalar(dt, r, 0, to);
  } else if (dt == SR_BOOL) {
    *to = (unsigned char)(op == SC_ADD || op == SC_MAX ? *to || *from : op == SC_SUB ? *to != *from : *to && *from);
  } else if (sr_dtype_kind(dt) == SR_DK_UINT) {
    uint64_t a = (uint64_t)sr_kern_get_i64(dt, to), b = (uint64_t)sr_kern_get_i64(dt, from);
    uint64_t r = op == SC_ADD ? a + b : op == SC_SUB ? a - b : op == SC_MUL ? a * b : op == SC_MIN ? (a < b ? a : b) : (a > b ? a : b);
    sr_kern_set_scalar(dt, 0, (int64_t)r, to);
  } else {
    int64_t a = sr_kern_get_i64(dt, to), b = sr_kern_get_i64(dt, from);
    int64_t r = op == SC_ADD   ? (int64_t)((uint64_t)a + (uint64_t)b)
                : op == SC_SUB ? (int64_t)((uint64_t)a - (uint64_t)b)
                : op == SC_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                : op == SC_MIN ? (a < b ? a : b)
                               : (a > b ? a : b);
    sr_kern_set_scalar(dt, 0, r, to);
  }
}

/* The operand element (row-major offset) each of the `total` update
   elements goes to, in order, or -1 where its window is dropped (out of
   bounds, the mode not CLIP): os, is, us the operand's, indices' and
   updates' shapes, ix the indices' data. */
static void scatter_offsets(const ScatterArg *a, const int64_t *os, const int64_t *is, const int64_t *us,
                            const unsigned char *ix, int64_t total, int64_t *ats) {
  size_t isz = sr_elem_size(a->idt);
  int64_t opstride[SR_MAX_RANK], istride[SR_MAX_RANK], ws[SR_MAX_RANK];
  for (int64_t i = a->nd - 1, s = 1; i >= 0; s *= os[i], i--) opstride[i] = s;
  for (int64_t i = a->ni - 1, s = 1; i >= 0; s *= is[i], i--) istride[i] = s;
  scatter_window(&a->g, os, a->nd, us, ws);
  int window[SR_MAX_RANK], nw = 0;
  for (int d = 0; d < a->nd; d++)
    if (!in_list(a->g.collapsed, a->g.ncollapsed, d) && !in_list(a->g.obatch, a->g.nobatch, d)) window[nw++] = d;
  int64_t pos[SR_MAX_RANK] = {0};
  for (int64_t k = 0; k < total; k++) {
    int64_t batch[SR_MAX_RANK], start[SR_MAX_RANK] = {0}, off[SR_MAX_RANK];
    int nb = 0, nof = 0, oob = 0;
    for (int i = 0; i < a->nu; i++) {
      if (in_list(a->g.offset, a->g.noffset, i)) off[nof++] = pos[i];
      else batch[nb++] = pos[i];
    }
    int64_t base = 0;
    for (int j = 0; j < nb; j++) base += batch[j] * istride[j];
    for (int m = 0; m < a->g.nstart_map; m++) {
      int d = (int)a->g.start_map[m];
      int64_t v = sr_kern_get_i64(a->idt, ix + (size_t)(base + m * istride[a->ni - 1]) * isz);
      int64_t hi = os[d] - ws[d];
      if (v < 0 || v > hi) oob = 1;
      start[d] = a->clip ? clamp64(v, 0, hi < 0 ? 0 : hi) : v;
    }
    for (int m = 0; m < a->g.nobatch; m++) start[a->g.obatch[m]] = batch[a->g.ibatch[m]];
    int64_t at = -1;
    if (!oob || a->clip) {
      at = 0;
      for (int d = 0; d < a->nd; d++) at += start[d] * opstride[d];
      for (int w = 0; w < nw && w < nof; w++) at += off[w] * opstride[window[w]];
    }
    ats[k] = at;
    for (int i = a->nu - 1; i >= 0 && ++pos[i] == us[i]; i--) pos[i] = 0;
  }
}

static int scatter_fn(SrShardIO *io) {
  ScatterArg *a = io->arg;
  const unsigned char *up = io->in[2]->data;
  unsigned char *out = io->out[0]->data;
  memcpy(out, io->in[0]->data, io->out[0]->nbytes);
  if (!io->out[0]->nbytes) return 0; /* an empty operand takes no update */
  int64_t total = 1;
  for (int i = 0; i < a->nu; i++) total *= io->in_shape[2][i];
  int64_t *ats = sr_xmalloc((size_t)total * sizeof *ats + 1);
  scatter_offsets(a, io->in_shape[0], io->in_shape[1], io->in_shape[2], io->in[1]->data, total, ats);
  for (int64_t k = 0; k < total; k++) {
    if (ats[k] < 0) continue;
    if (a->op != SC_SET) combine_elem(a->op, a->dt, out + (size_t)ats[k] * a->es, up + (size_t)k * a->es);
    else memcpy(out + (size_t)ats[k] * a->es, up + (size_t)k * a->es, a->es);
  }
  free(ats);
  return 0;
}

/* A scatter whose update_jaxpr is given (lax.scatter_apply): each update
   element k in turn makes its operand element x update_jaxpr(x, u[k]),
   a repeated index applying it again.  On the host, the whole arrays. */
static int ev_scatter_apply(SrEvalCtx *cx, const SrEvalEqn *e, ScatterArg *a, const SrJaxpr *uj, Out1 o) {
  if (sr_nargs(uj) != 2 || uj->nout != 1)
    return sr_ev_err(cx, "TypeError", "scatter's update_jaxpr must take 2 arguments and give 1 result");
  const SrType *xt = e->in[0]->type, *it = e->in[1]->type, *ut = e->in[2]->type;
  int64_t os[SR_MAX_RANK], is[SR_MAX_RANK], us[SR_MAX_RANK];
  for (int i = 0; i < xt->ndim; i++) os[i] = xt->dims[i].size;
  for (int i = 0; i < it->ndim; i++) is[i] = it->dims[i].size;
  for (int i = 0; i < ut->ndim; i++) us[i] = ut->dims[i].size;
  int64_t nx = sr_type_numel(xt), ni = sr_type_numel(it), total = sr_type_numel(ut);
  unsigned char *xb = sr_xmalloc((size_t)nx * a->es + 1), *ib = sr_xmalloc((size_t)ni * sr_elem_size(a->idt) + 1),
                *ub = sr_xmalloc((size_t)total * a->es + 1);
  int64_t *ats = sr_xmalloc((size_t)total * sizeof *ats + 1);
  int rc = sr_array_to_host(cx, e->in[0], xb);
  if (rc == 0) rc = sr_array_to_host(cx, e->in[1], ib);
  if (rc == 0) rc = sr_array_to_host(cx, e->in[2], ub);
  if (rc == 0 && nx > 0) scatter_offsets(a, os, is, us, ib, total, ats);
  const SrType *at = sr_args(uj)[0]->type, *bt = sr_args(uj)[1]->type;
  for (int64_t k = 0; rc == 0 && nx > 0 && k < total; k++) {
    if (ats[k] < 0) continue;
    SrArray *in[2] = {sr_array_from_data(at, NULL, xb + (size_t)ats[k] * a->es),
                      sr_array_from_data(bt, NULL, ub + (size_t)k * a->es)},
            *res = NULL;
    rc = sr_ev_jaxpr(cx, uj, in, &res);
    if (rc == 0 && (res->type->dtype != a->dt || res->type->ndim != 0))
      rc = sr_ev_err(cx, "TypeError", "scatter's update_jaxpr gives %s[], the operand is %s",
                     sr_dtype_name(res->type->dtype), sr_dtype_name(a->dt));
    if (rc == 0) rc = sr_array_to_host(cx, res, xb + (size_t)ats[k] * a->es);
    sr_array_unref(in[0]);
    sr_array_unref(in[1]);
    sr_array_unref(res);
    if (rc == 0 && cx->I && (k & 1023) == 1023 && sr_interrupt_point(cx->I))
      rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
  }
  SrArray *r = rc == 0 ? sr_array_from_data(sr_type_strip_sharding(e->out_type[0]), NULL, xb) : NULL;
  free(xb);
  free(ib);
  free(ub);
  free(ats);
  if (rc < 0) return -1;
  return finish(cx, e, 0, o.m, r);
}

static int ev_scatter(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  SrArray *x = e->in[0], *ix = e->in[1], *u = e->in[2];
  ScatterArg a;
  memset(&a, 0, sizeof a);
  if (parse_sdn(sr_ev_param(e, "dimension_numbers"), &a.g) < 0)
    return sr_ev_err(cx, "RuntimeError", "internal: scatter's params cannot be read");
  const SrVal *mode = sr_ev_param(e, "mode");
  a.clip = mode && mode->kind == SR_V_WORD && mode->str.n >= 4 && memcmp(mode->str.s + mode->str.n - 4, "CLIP", 4) == 0;
  a.nd = x->type->ndim;
  a.ni = ix->type->ndim;
  a.nu = u->type->ndim;
  a.es = esize(x);
  a.idt = ix->type->dtype;
  a.dt = x->type->dtype;
  int id = e->prim->id;
  a.op = id == SR_P_scatter_add ? SC_ADD : id == SR_P_scatter_sub ? SC_SUB : id == SR_P_scatter_mul ? SC_MUL : id == SR_P_scatter_min ? SC_MIN
         : id == SR_P_scatter_max ? SC_MAX : SC_SET;
  const SrJaxpr *uj = a.op == SC_SET ? sr_ev_param_jaxpr(e, "update_jaxpr") : NULL;
  if (uj) return ev_scatter_apply(cx, e, &a, uj, o);
  SrArray *ins[3] = {0};
  int rc = 0;
  for (int k = 0; k < 3 && rc == 0; k++) {
    ins[k] = sr_redistribute(cx, e->in[k], o.m, mapped_layout(e->in[k], NULL, NULL));
    if (!ins[k]) rc = -1;
  }
  SrArray *r = NULL;
  if (rc == 0) {
    r = sr_array_new(e->out_type[0], natural(o.l, ~0ull, ins[0]->layout, x->type->dtype), o.m);
    rc = sr_ev_map(cx, 3, ins, 1, &r, 0, scatter_fn, &a);
  }
  for (int k = 0; k < 3; k++) sr_array_unref(ins[k]);
  if (rc < 0) {
    sr_array_unref(r);
    return -1;
  }
  return finish(cx, e, 0, o.m, r);
}

/* _scatter_batching_rule on batched operand, indices and updates (batch
   dims obd, ibd, ubd, one mapped at least), the scatter's dimension
   numbers g and its other params (borrowed); e's own when e is given. */
static int batch_scatter_with(SrBatch *b, int prim, SrVal *op, int obd, SrVal *ix, int ibd, SrVal *up, int ubd, Gdn g,
                              SrVal *sorted, SrVal *unique, SrVal *mode, SrVal *ujaxpr, SrVal *uconsts, SrVal **y,
                              int *ybd) {
  int64_t size = -1;
  SrVal *xs[3] = {op, ix, up};
  const int bds[3] = {obd, ibd, ubd};
  for (int i = 0; i < 3 && size < 0; i++)
    if (bds[i] != SR_NOT_MAPPED) size = sr_ad_type(&b->ad, xs[i])->dims[bds[i]].size;
  op = sr_batch_at_front(b, op, obd, size);
  up = sr_batch_at_front(b, up, ubd, size);
  if (ibd == SR_NOT_MAPPED) {
    shift_dims(g.collapsed, g.ncollapsed, 1);
    shift_dims(g.offset, g.noffset, 1);
    push_front(g.offset, &g.noffset, 0);
    shift_dims(g.obatch, g.nobatch, 1);
    shift_dims(g.start_map, g.nstart_map, 1);
    op = sr_batch_spmd_pvary(b, op);
    ix = sr_batch_spmd_pvary(b, ix);
    up = sr_batch_spmd_pvary(b, up);
  } else {
    ix = sr_batch_at_front(b, ix, ibd, size);
    shift_dims(g.offset, g.noffset, 1);
    shift_dims(g.collapsed, g.ncollapsed, 1);
    shift_dims(g.obatch, g.nobatch, 1);
    push_front(g.obatch, &g.nobatch, 0);
    shift_dims(g.ibatch, g.nibatch, 1);
    push_front(g.ibatch, &g.nibatch, 0);
    shift_dims(g.start_map, g.nstart_map, 1);
  }
  SrVal *in[3] = {op, ix, up};
  if (!op || !ix || !up) return -1;
  y[0] = sr_ad_bindv(&b->ad, prim, 3, in, "dimension_numbers", sdn_val(&g), "indices_are_sorted",
                     sr_ref(sorted), "mode", sr_ref(mode), "unique_indices", sr_ref(unique), "update_consts",
                     sr_ref(uconsts), "update_jaxpr", sr_ref(ujaxpr), NULL);
  ybd[0] = 0;
  return y[0] ? 0 : -1;
}

BATCH(batch_scatter) {
  Gdn g;
  SrVal *sorted = param(e, "indices_are_sorted"), *unique = param(e, "unique_indices"), *mode = param(e, "mode"),
        *uj = param(e, "update_jaxpr"), *uc = param(e, "update_consts");
  if (e->nin != 3 || parse_sdn(param(e, "dimension_numbers"), &g) < 0) return sr_batch_no_rule(b, e->prim);
  SrVal *empty = sr_seq(NULL, SR_V_TUPLE, 0);
  int rc = batch_scatter_with(b, e->prim->id, x[0], bd[0], x[1], bd[1], x[2], bd[2], g, sorted ? sorted : sr_bool(0),
                              unique ? unique : sr_bool(0), mode ? mode : sr_none(), uj ? uj : sr_none(),
                              uc ? uc : empty, y, ybd);
  sr_unref(empty);
  return rc;
}

/* ==== gather, scatter and its kin: autodiff ==== */

SrVal *sr_lax_scatter_update_jaxpr(int prim_id, SrDtype dt) {
  int op = prim_id == SR_P_scatter_add   ? SR_P_add
           : prim_id == SR_P_scatter_sub ? SR_P_sub
           : prim_id == SR_P_scatter_mul ? SR_P_mul
           : prim_id == SR_P_scatter_min ? SR_P_min
           : prim_id == SR_P_scatter_max ? SR_P_max
                                         : -1;
  if (op < 0) return sr_none();
  SrProgram *p = sr_program_new();
  SrJaxprBuilder b;
  sr_jb_init(&b, p);
  const SrType *t = sr_type_scalar(dt);
  SrVar *in[2] = {sr_jb_var(&b, t), sr_jb_var(&b, t)}, *out = sr_jb_var(&b, t);
  sr_jb_invar(&b, in[0]);
  sr_jb_invar(&b, in[1]);
  sr_jb_eqn(&b, &sr_prims[op], 2, in, 1, &out, 0, NULL);
  sr_jb_outvar(&b, out);
  SrJaxpr *j = sr_jb_finish(&b);
  sr_jb_free(&b);
  SrVal *v = sr_jaxpr_val(NULL, j);
  sr_program_unref(p);
  return v;
}

static int is_fill_mode(const SrVal *mode) {
  return mode && mode->kind == SR_V_WORD && mode->str.n >= 12 &&
         memcmp(mode->str.s + mode->str.n - 12, "FILL_OR_DROP", 12) == 0;
}

static SrVal *param_or(const SrEqn *e, const char *key, SrVal *dflt) {
  SrVal *v = param(e, key);
  return v ? v : dflt;
}

/* slicing.gather(op, ix, g, ss, unique_indices=, indices_are_sorted=,
   mode=, fill_value=0) as the rules call it: fill_value 0 for
   FILL_OR_DROP, else None (params borrowed). */
static SrVal *ad_gather(SrAd *ad, SrVal *op, SrVal *ix, const Gdn *g, const int64_t *ss, int nss, SrVal *unique,
                        SrVal *sorted, SrVal *mode) {
  SrVal *in[2] = {op, ix};
  return sr_ad_bindv(ad, SR_P_gather, 2, in, "dimension_numbers", gdn_val(g), "fill_value",
                     is_fill_mode(mode) ? sr_int(NULL, 0) : sr_none(), "indices_are_sorted", sr_ref(sorted), "mode",
                     sr_ref(mode), "slice_sizes", sr_ad_ints(ss, nss), "unique_indices", sr_ref(unique), NULL);
}

/* slicing.scatter_add and its kin (prim) as the rules call them. */
static SrVal *ad_scatter(SrAd *ad, int prim, SrVal *op, SrVal *ix, SrVal *up, const Gdn *g, SrVal *sorted,
                         SrVal *unique, SrVal *mode) {
  SrVal *in[3] = {op, ix, up};
  const SrType *t = sr_ad_type(ad, op);
  if (!t) return NULL;
  return sr_ad_bindv(ad, prim, 3, in, "dimension_numbers", sdn_val(g), "indices_are_sorted", sr_ref(sorted), "mode",
                     sr_ref(mode), "unique_indices", sr_ref(unique), "update_consts", sr_seq(NULL, SR_V_TUPLE, 0),
                     "update_jaxpr", sr_lax_scatter_update_jaxpr(prim, t->dtype), NULL);
}

/* The gather that undoes a scatter with dimension numbers g on an operand
   of rank orank and updates of shape ushape: its slice sizes
   (_scatter_addsub_transpose_rule). */
static int scatter_slice_sizes(const Gdn *g, int orank, const SrType *ut, int64_t *ss) {
  for (int i = 0, pos = 0; i < orank; i++)
    ss[i] = in_list(g->collapsed, g->ncollapsed, i) || in_list(g->obatch, g->nobatch, i) ? 1
            : pos < g->noffset ? ut->dims[g->offset[pos++]].size
                               : 1;
  return orank;
}

/* _gather_jvp_rule: the tangent gathered alike, fill_value=0. */
JVP(jvp_gather) {
  Gdn g;
  int64_t ss[SR_MAX_RANK];
  int nss = param_ints(e, "slice_sizes", ss, SR_MAX_RANK);
  if (nss < 0 || parse_gdn(param(e, "dimension_numbers"), &g) < 0) return sr_ad_no_jvp(ad, e->prim);
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  ty[0] = ad_gather(ad, t[0], x[1], &g, ss, nss, param_or(e, "unique_indices", sr_bool(0)),
                    param_or(e, "indices_are_sorted", sr_bool(0)), param_or(e, "mode", sr_none()));
  return ty[0] ? 0 : -1;
}

/* _gather_transpose_fancy: the cotangent scatter-added into zeros of the
   operand's shape and sharding, in the cotangent's dtype. */
TR(tr_gather) {
  Gdn g;
  if (parse_gdn(param(e, "dimension_numbers"), &g) < 0 || !x[1]) return sr_ad_no_transpose(ad, e->prim);
  SrTypeBuilder b;
  sr_type_builder(&b, ct_of(e, 0));
  b.dtype = sr_ad_type(ad, ct[0])->dtype;
  SrVal *zeros = sr_ad_full(ad, sr_type_get(&b), 0.0);
  if (!zeros) return -1;
  cx[0] = ad_scatter(ad, SR_P_scatter_add, zeros, x[1], ct[0], &g, param_or(e, "indices_are_sorted", sr_bool(0)),
                     param_or(e, "unique_indices", sr_bool(0)), param_or(e, "mode", sr_none()));
  return cx[0] ? 0 : -1;
}

/* _scatter_addsub_jvp: scatter-add is linear in the operand and the
   updates; the tangents are scattered alike. */
JVP(jvp_scatter_add) {
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0] && !t[2]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *in[3];
  in[0] = t[0] ? t[0] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[0])));
  in[1] = x[1];
  in[2] = t[2] ? t[2] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[2])));
  if (!in[0] || !in[2]) return -1;
  ty[0] = sr_ad_bind_eqn1(ad, e, in);
  return ty[0] ? 0 : -1;
}

/* The updates' cotangent of a scatter: ct gathered at the indices
   (mode kept, fill_value=0, the default sortedness and uniqueness). */
static SrVal *scatter_updates_ct(SrAd *ad, const SrEqn *e, const Gdn *g, SrVal *ct, SrVal *ix, SrVal *up) {
  const SrType *ut = up ? sr_ad_type(ad, up) : e->in[2]->type, *tt = sr_ad_type(ad, ct);
  int64_t ss[SR_MAX_RANK];
  int nss = scatter_slice_sizes(g, tt->ndim, ut, ss);
  return ad_gather(ad, ct, ix, g, ss, nss, sr_bool(0), sr_bool(0), param_or(e, "mode", sr_none()));
}

/* _scatter_addsub_transpose_rule */
TR(tr_scatter_add) {
  Gdn g;
  if (parse_sdn(param(e, "dimension_numbers"), &g) < 0 || !x[1]) return sr_ad_no_transpose(ad, e->prim);
  if (!x[0]) cx[0] = ct[0];
  if (!x[2] && !(cx[2] = scatter_updates_ct(ad, e, &g, ct[0], x[1], NULL))) return -1;
  if (!x[2] && e->prim->id == SR_P_scatter_sub && !(cx[2] = sr_ad_neg(ad, cx[2]))) return -1;
  return 0;
}

/* scatter_mul's JVP (ad.defjvp): the operand's tangent scattered-multiplied
   by the updates, plus for the updates' (unique indices only)
   x * scatter_add(zeros_like(x), i, g) (_scatter_mul_jvp_rhs). */
JVP(jvp_scatter_mul) {
  Gdn g;
  if (parse_sdn(param(e, "dimension_numbers"), &g) < 0) return sr_ad_no_jvp(ad, e->prim);
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  SrVal *acc = NULL;
  if (t[0]) {
    SrVal *in[3] = {t[0], x[1], x[2]};
    if (!(acc = sr_ad_bind_eqn1(ad, e, in))) return -1;
  }
  if (t[2]) {
    SrVal *unique = param_or(e, "unique_indices", sr_bool(0));
    if (!unique->i)
      return sr_raise(ad->I, "NotImplementedError",
                      "scatter_mul gradients are only implemented if `unique_indices=True`"),
             -1;
    SrVal *z = sr_ad_full_zeros(ad, sr_ad_type(ad, x[0]));
    SrVal *s = z ? ad_scatter(ad, SR_P_scatter_add, z, x[1], t[2], &g, param_or(e, "indices_are_sorted", sr_bool(0)),
                              unique, param_or(e, "mode", sr_none()))
                 : NULL;
    SrVal *r = s ? sr_ad_mul(ad, x[0], s) : NULL;
    if (!r) return -1;
    acc = sr_ad_add_tangents(ad, acc, r);
    if (!acc) return -1;
  }
  ty[0] = acc;
  return 0;
}

/* _scatter_mul_transpose_rule */
TR(tr_scatter_mul) {
  Gdn g;
  if (parse_sdn(param(e, "dimension_numbers"), &g) < 0 || !x[1]) return sr_ad_no_transpose(ad, e->prim);
  SrVal *unique = param_or(e, "unique_indices", sr_bool(0));
  if (!x[0]) {
    if (!x[2]) return sr_ad_no_transpose(ad, e->prim);
    SrVal *in[3] = {ct[0], x[1], x[2]};
    if (!(cx[0] = sr_ad_bind_eqn1(ad, e, in))) return -1;
  }
  if (!x[2]) {
    if (!unique->i)
      return sr_raise(ad->I, "NotImplementedError",
                      "scatter_mul gradients are only implemented if `unique_indices=True`"),
             -1;
    if (!x[0]) return sr_ad_no_transpose(ad, e->prim);
    SrVal *m = sr_ad_mul(ad, ct[0], x[0]);
    if (!m || !(cx[2] = scatter_updates_ct(ad, e, &g, m, x[1], NULL))) return -1;
  }
  return 0;
}

/* _scatter_jvp where the indices are unique (unique_indices=True): the
   tangents scattered alike.  Overlapping indices take the masked
   scatter-adds of the ids scheme (below). */
static int scatter_jvp_ids(SrAd *ad, const SrEqn *e, const Gdn *g, SrVal **x, SrVal *gop, SrVal *gup, SrVal **y,
                           SrVal **ty);

JVP(jvp_scatter) {
  Gdn g;
  SrVal *uj = param(e, "update_jaxpr");
  if (uj && uj->kind != SR_V_NONE) return sr_raise(ad->I, "NotImplementedError", "scatter_apply JVP not implemented"), -1;
  if (parse_sdn(param(e, "dimension_numbers"), &g) < 0) return sr_ad_no_jvp(ad, e->prim);
  if (!t[0] && !t[2]) {
    y[0] = sr_ad_bind_eqn1(ad, e, x);
    ty[0] = NULL;
    return y[0] ? 0 : -1;
  }
  SrVal *gop = t[0] ? t[0] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[0])));
  SrVal *gup = t[2] ? t[2] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[2])));
  if (!gop || !gup) return -1;
  if (param_or(e, "unique_indices", sr_bool(0))->i) {
    SrVal *in[3] = {gop, x[1], gup};
    y[0] = sr_ad_bind_eqn1(ad, e, x);
    ty[0] = y[0] ? sr_ad_bind_eqn1(ad, e, in) : NULL;
    return ty[0] ? 0 : -1;
  }
  return scatter_jvp_ids(ad, e, &g, x, gop, gup, y, ty);
}

/* lax.iota(dt, n) */
static SrVal *ad_iota(SrAd *ad, SrDtype dt, int64_t n) {
  return sr_ad_bindv(ad, SR_P_iota, 0, NULL, "dtype", sr_dtype_val(NULL, dt), "shape", sr_ad_ints(&n, 1), "dimension",
                     sr_int(NULL, 0), "sharding", sr_none(), NULL);
}

/* select(eq(a, b), x, zeros_like(x)) */
static SrVal *mask_eq(SrAd *ad, SrVal *a, SrVal *b, SrVal *x) {
  SrVal *eq = sr_ad_binop(ad, SR_P_eq, a, b);
  SrVal *z = eq ? sr_ad_full_zeros(ad, sr_ad_type(ad, x)) : NULL;
  SrVal *cases[2] = {z, x};
  return z ? sr_ad_select_n(ad, eq, 2, cases) : NULL;
}

/* _scatter_jvp's ids scheme: a positive id per update scattered, gathered
   back, and the primal and tangent masked to the update that won, then
   scatter-added. */
static int scatter_jvp_ids(SrAd *ad, const SrEqn *e, const Gdn *g, SrVal **x, SrVal *gop, SrVal *gup, SrVal **y,
                           SrVal **ty) {
  const SrType *ut = sr_ad_type(ad, x[2]), *ot = sr_ad_type(ad, x[0]);
  int64_t ids_shape[SR_MAX_RANK], num = 1;
  for (int i = 0; i < ut->ndim; i++) ids_shape[i] = in_list(g->offset, g->noffset, i) ? 1 : ut->dims[i].size;
  for (int i = 0; i < ut->ndim; i++) num *= ids_shape[i];
  /* int_dtype_for_dim(num_ids, signed=False) */
  SrDtype idt = num <= 0xffffffffLL ? SR_U32 : SR_U64;
  SrVal *sorted = param_or(e, "indices_are_sorted", sr_bool(0)), *unique = param_or(e, "unique_indices", sr_bool(0)),
        *mode = param_or(e, "mode", sr_none());
  SrVal *io = ad_iota(ad, idt, num);
  SrVal *r = io ? sr_ad_reshape_plain(ad, io, sr_type_array(idt, ut->ndim, ids_shape)) : NULL;
  SrVal *one = r ? sr_ad_full(ad, sr_type_with_dtype(sr_type_strip_sharding(ut), idt), 1.0) : NULL;
  SrVal *ids = one ? sr_ad_binop(ad, SR_P_add, r, one) : NULL;
  int64_t oshape[SR_MAX_RANK];
  for (int i = 0; i < ot->ndim; i++) oshape[i] = ot->dims[i].size;
  SrVal *z = ids ? sr_ad_full(ad, sr_type_array(idt, ot->ndim, oshape), 0.0) : NULL;
  SrVal *in[3] = {z, x[1], ids};
  SrVal *sids = z ? sr_ad_bindv(ad, SR_P_scatter, 3, in, "dimension_numbers", sdn_val(g), "indices_are_sorted",
                                sr_ref(sorted), "mode", sr_ref(mode), "unique_indices", sr_ref(unique),
                                "update_consts", sr_seq(NULL, SR_V_TUPLE, 0), "update_jaxpr", sr_none(), NULL)
                    : NULL;
  if (!sids) return -1;
  int64_t ss[SR_MAX_RANK];
  int nss = scatter_slice_sizes(g, ot->ndim, ut, ss);
  SrVal *pib = sr_ad_keep(ad, sr_word(NULL, "GatherScatterMode.PROMISE_IN_BOUNDS", 34));
  SrVal *gids = ad_gather(ad, sids, x[1], g, ss, nss, sr_bool(0), sr_bool(0), pib);
  SrVal *zid = gids ? sr_ad_full_zeros(ad, sr_ad_type(ad, sids)) : NULL;
  SrVal *mop = zid ? mask_eq(ad, sids, zid, x[0]) : NULL;
  SrVal *mup = mop ? mask_eq(ad, ids, gids, x[2]) : NULL;
  SrVal *mgop = mup ? mask_eq(ad, sids, zid, gop) : NULL;
  SrVal *mgup = mgop ? mask_eq(ad, ids, gids, gup) : NULL;
  if (!mgup) return -1;
  y[0] = ad_scatter(ad, SR_P_scatter_add, mop, x[1], mup, g, sorted, unique, mode);
  ty[0] = y[0] ? ad_scatter(ad, SR_P_scatter_add, mgop, x[1], mgup, g, sorted, unique, mode) : NULL;
  return ty[0] ? 0 : -1;
}

/* _scatter_extremal_jvp (scatter-min, scatter-max): the tangent of the
   winning values, shared equally among the updates (and the operand
   value) that tie for a place. */
JVP(jvp_scatter_extremal) {
  Gdn g;
  if (parse_sdn(param(e, "dimension_numbers"), &g) < 0) return sr_ad_no_jvp(ad, e->prim);
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0] && !t[2]) {
    ty[0] = NULL;
    return 0;
  }
  const SrType *ot = sr_ad_type(ad, x[0]), *ut = sr_ad_type(ad, x[2]);
  SrVal *gop = t[0] ? t[0] : sr_ad_full_zeros(ad, sr_ad_tangent_type(ot));
  SrVal *gup = t[2] ? t[2] : sr_ad_full_zeros(ad, sr_ad_tangent_type(ut));
  if (!gop || !gup) return -1;
  SrVal *sorted = param_or(e, "indices_are_sorted", sr_bool(0)), *unique = param_or(e, "unique_indices", sr_bool(0)),
        *mode = param_or(e, "mode", sr_none()), *f = sr_bool(0);
  SrVal *pib = sr_ad_keep(ad, sr_word(NULL, "GatherScatterMode.PROMISE_IN_BOUNDS", 34));
  SrVal *fdo = sr_ad_keep(ad, sr_word(NULL, "GatherScatterMode.FILL_OR_DROP", 30));
  int64_t ss[SR_MAX_RANK];
  int nss = scatter_slice_sizes(&g, ot->ndim, ut, ss);
  SrDtype dt = ot->dtype;
  SrVal *init = ad_gather(ad, x[0], x[1], &g, ss, nss, f, f, pib);
  SrVal *target = init ? ad_gather(ad, y[0], x[1], &g, ss, nss, f, f, pib) : NULL;
  SrVal *succ = target ? sr_ad_binop(ad, SR_P_eq, x[2], target) : NULL;
  SrVal *kept = succ ? sr_ad_binop(ad, SR_P_eq, init, target) : NULL;
  SrVal *zo = kept ? sr_ad_full(ad, ot, 0.0) : NULL;
  SrVal *ou = zo ? sr_ad_full(ad, ut, 1.0) : NULL, *zu = ou ? sr_ad_full(ad, ut, 0.0) : NULL;
  SrVal *c1[2] = {zu, ou};
  SrVal *sel = zu ? sr_ad_select_n(ad, succ, 2, c1) : NULL;
  SrVal *sa = sel ? ad_scatter(ad, SR_P_scatter_add, zo, x[1], sel, &g, f, f, fdo) : NULL;
  SrVal *nup = sa ? ad_gather(ad, sa, x[1], &g, ss, nss, f, f, pib) : NULL;
  SrVal *zo2 = nup ? sr_ad_full(ad, ot, 0.0) : NULL, *ou2 = zo2 ? sr_ad_full(ad, ut, 1.0) : NULL;
  SrVal *sb = ou2 ? ad_scatter(ad, SR_P_scatter_add, zo2, x[1], ou2, &g, f, f, fdo) : NULL;
  SrVal *nref = sb ? ad_gather(ad, sb, x[1], &g, ss, nss, f, f, pib) : NULL;
  SrVal *one = nref ? sr_ad_scalar(ad, dt, 1, 1.0) : NULL;
  SrVal *np1 = one ? sr_ad_binop(ad, SR_P_add, nup, one) : NULL;
  SrVal *a1 = np1 ? sr_ad_binop(ad, SR_P_div, one, np1) : NULL;
  SrVal *a2 = a1 ? sr_ad_binop(ad, SR_P_div, one, nup) : NULL;
  SrVal *c2[2] = {a2, a1};
  SrVal *unorm = a2 ? sr_ad_select_n(ad, kept, 2, c2) : NULL;
  SrVal *zu2 = unorm ? sr_ad_full(ad, ut, 0.0) : NULL;
  SrVal *c3[2] = {zu2, unorm};
  SrVal *ucoef = zu2 ? sr_ad_select_n(ad, succ, 2, c3) : NULL;
  SrVal *a3 = ucoef ? sr_ad_binop(ad, SR_P_div, one, np1) : NULL;
  SrVal *zn = a3 ? sr_ad_full(ad, sr_ad_type(ad, nup), 0.0) : NULL;
  SrVal *c4[2] = {zn, a3};
  SrVal *onorm = zn ? sr_ad_select_n(ad, kept, 2, c4) : NULL;
  SrVal *m1 = onorm ? sr_ad_scalar(ad, dt, 1, -1.0) : NULL;
  SrVal *s1 = m1 ? sr_ad_binop(ad, SR_P_add, m1, onorm) : NULL;
  SrVal *ocoef = s1 ? sr_ad_binop(ad, SR_P_div, s1, nref) : NULL;
  SrVal *tt = ocoef ? ad_gather(ad, gop, x[1], &g, ss, nss, f, f, pib) : NULL;
  SrVal *p1 = tt ? sr_ad_mul(ad, tt, ocoef) : NULL;
  SrVal *p2 = p1 ? sr_ad_mul(ad, gup, ucoef) : NULL;
  SrVal *tu = p2 ? sr_ad_binop(ad, SR_P_add, p1, p2) : NULL;
  ty[0] = tu ? ad_scatter(ad, SR_P_scatter_add, gop, x[1], tu, &g, sorted, unique, mode) : NULL;
  return ty[0] ? 0 : -1;
}

/* _scatter_transpose_rule (unique indices only) */
TR(tr_scatter) {
  Gdn g;
  if (parse_sdn(param(e, "dimension_numbers"), &g) < 0 || !x[1]) return sr_ad_no_transpose(ad, e->prim);
  if (!param_or(e, "unique_indices", sr_bool(0))->i)
    return sr_raise(ad->I, "NotImplementedError", "scatter transpose is only implemented where unique_indices=True"), -1;
  const SrType *ut = x[2] ? sr_ad_type(ad, x[2]) : ct_of(e, 2);
  if (!x[0]) {
    SrVal *z = sr_ad_full(ad, sr_type_with_dtype(ut, sr_ad_type(ad, ct[0])->dtype), 0.0);
    SrVal *in[3] = {ct[0], x[1], z};
    if (!z || !(cx[0] = sr_ad_bindv(ad, SR_P_scatter, 3, in, "dimension_numbers", sdn_val(&g), "indices_are_sorted",
                                    sr_ref(param_or(e, "indices_are_sorted", sr_bool(0))), "mode",
                                    sr_ref(param_or(e, "mode", sr_none())), "unique_indices", sr_bool(1),
                                    "update_consts", sr_seq(NULL, SR_V_TUPLE, 0), "update_jaxpr", sr_none(), NULL)))
      return -1;
  }
  if (!x[2] && !(cx[2] = scatter_updates_ct(ad, e, &g, ct[0], x[1], NULL))) return -1;
  return 0;
}

/* ==== dynamic_slice, dynamic_update_slice: batching ==== */

/* _batch_dynamic_slice_indices: the scalar start indices as one index
   vector, [n] (none mapped) or [size, n] (batch dim 0). */
static SrVal *batch_slice_indices(SrBatch *b, SrVal **ix, const int *bd, int n, int *ibd) {
  if (n == 0) {
    /* no start indices (a scalar operand): np.array([], 'int32') */
    SrTypeBuilder tb;
    memset(&tb, 0, sizeof tb);
    tb.dtype = SR_I32;
    tb.ndim = 1;
    *ibd = SR_NOT_MAPPED;
    return sr_ad_full_zeros(&b->ad, sr_type_get(&tb));
  }
  int64_t size = -1;
  const SrType *like = NULL;
  int ld = 0;
  for (int i = 0; i < n && size < 0; i++)
    if (bd[i] != SR_NOT_MAPPED) {
      like = sr_ad_type(&b->ad, ix[i]);
      ld = bd[i];
      size = like->dims[ld].size;
    }
  /* every part sharded as the mapped index's batch dim (out_s) */
  int with_sharding = like && sr_ad_ctx_mesh(&b->ad)->n > 0;
  SrVal *parts[SR_MAX_RANK];
  for (int i = 0; i < n; i++) {
    const SrType *t = sr_ad_type(&b->ad, ix[i]);
    if (!t) return NULL;
    SrTypeBuilder tb;
    memset(&tb, 0, sizeof tb);
    tb.dtype = t->dtype;
    tb.weak = t->weak;
    tb.ndim = size < 0 ? 1 : 2;
    tb.dims[0].size = size < 0 ? 1 : size;
    tb.dims[1].size = 1;
    if (like) {
      tb.mesh = like->mesh;
      take_spec(&tb, 0, like, ld);
    }
    int64_t zero = 0;
    parts[i] = sr_ad_broadcast_in_dim(&b->ad, ix[i], sr_type_get(&tb), &zero, bd[i] != SR_NOT_MAPPED, with_sharding);
    if (!parts[i]) return NULL;
  }
  *ibd = size < 0 ? SR_NOT_MAPPED : 0;
  if (n == 1) return parts[0];
  return sr_ad_bindv(&b->ad, SR_P_concatenate, n, parts, "dimension", sr_int(NULL, size < 0 ? 0 : 1), NULL);
}

BATCH(batch_dynamic_slice) {
  /* _dynamic_slice_batching_rule: a gather of the slice at the start
     indices, through _gather_batching_rule */
  int64_t ss[SR_MAX_RANK];
  int nd = (int)e->nin - 1, nss = param_ints(e, "slice_sizes", ss, SR_MAX_RANK);
  if (nd < 0 || nss != nd) return sr_batch_no_rule(b, e->prim);
  Gdn g;
  memset(&g, 0, sizeof g);
  for (int i = 0; i < nd; i++) g.offset[i] = g.start_map[i] = i;
  g.noffset = g.nstart_map = nd;
  int ibd = SR_NOT_MAPPED;
  SrVal *index = batch_slice_indices(b, x + 1, bd + 1, nd, &ibd);
  if (!index) return -1;
  SrVal *clip = sr_ad_keep(&b->ad, sr_word(NULL, "GatherScatterMode.CLIP", 22));
  return batch_gather_with(b, x[0], bd[0], index, ibd, g, ss, nss, sr_bool(1), sr_bool(1), clip, sr_none(), y, ybd);
}

BATCH(batch_dynamic_update_slice) {
  /* _dynamic_update_slice_batching_rule: vmap of a scatter of the update
     at the start indices (through _scatter_batching_rule) */
  int nd = (int)e->nin - 2;
  const SrType *ut = sr_ad_type(&b->ad, x[1]);
  if (nd < 0 || !ut || ut->ndim - (bd[1] != SR_NOT_MAPPED) != nd) return ut ? sr_batch_no_rule(b, e->prim) : -1;
  Gdn g;
  memset(&g, 0, sizeof g);
  for (int i = 0; i < nd; i++) g.offset[i] = g.start_map[i] = i;
  g.noffset = g.nstart_map = nd;
  int ibd = SR_NOT_MAPPED;
  SrVal *index = batch_slice_indices(b, x + 2, bd + 2, nd, &ibd);
  if (!index) return -1;
  SrVal *clip = sr_word(NULL, "GatherScatterMode.CLIP", 22), *empty = sr_seq(NULL, SR_V_TUPLE, 0);
  int rc = batch_scatter_with(b, SR_P_scatter, x[0], bd[0], index, ibd, x[1], bd[1], g, sr_bool(1), sr_bool(1), clip, sr_none(),
                              empty, y, ybd);
  sr_unref(clip);
  sr_unref(empty);
  return rc;
}

/* ==== iota ==== */

/* The type of a result made from no operand (iota, empty): dtype and
   shape on the context mesh, replicated unless the sharding param `key`
   gives partitions, unreduced and reduced axes. */
static int fresh_type(SrTypeCtx *cx, const SrRuleEqn *e, SrDtype dt, const int64_t *shape, int n, const char *key,
                      const SrType **out) {
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrShardSpec g;
  int given = 0;
  if (given_sharding(cx, e, key, n, &g, &given) < 0) return -1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = dt;
  b.ndim = (uint8_t)n;
  b.mesh = s.mesh;
  for (int i = 0; i < n; i++) b.dims[i].size = shape[i];
  if (given) {
    apply_partitions(&b, &g);
    b.unreduced = g.unreduced;
    b.reduced = g.reduced;
    b.ukind = g.ukind;
  }
  return sr_finish_type(cx, e, &b, out);
}

/* lax.iota_p (not a standard primitive): replicated on the context mesh
   unless `sharding` is given. */
static int type_iota(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 0, 1) < 0) return -1;
  SrDtype dt = SR_I32;
  int has = 0, n = 0;
  int64_t shape[SR_MAX_RANK], dim = 0;
  if (sr_rparam_dtype(cx, e, "dtype", &dt, &has) < 0 || sr_rparam_ints(cx, e, "shape", 1, shape, SR_MAX_RANK, &n) < 0 ||
      sr_rparam_int(cx, e, "dimension", 1, &dim) < 0)
    return -1;
  if (!has) return sr_terr(cx, "TypeError", "iota equation has no 'dtype' param");
  if (!sr_dtype_in(dt, SR_DC_NUM)) {
    SrBuf a = SR_BUF_INIT;
    sr_dtype_classes_str(&a, SR_DC_NUM);
    sr_terr(cx, "TypeError", "iota does not accept dtype %s. Accepted dtypes are subtypes of %s.", sr_dtype_name(dt),
            sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if (dim < 0 || dim >= n) {
    SrBuf a = SR_BUF_INIT;
    sr_ints_str(&a, shape, n);
    sr_terr(cx, "ValueError", "iota dimension must be between 0 and len(shape), got dimension=%lld for shape=%s",
            (long long)dim, sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if (check_nonnegative(cx, "iota", "shape", shape, n) < 0) return -1;
  return fresh_type(cx, e, dt, shape, n, "sharding", out);
}

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

/* ==== empty ==== */

/* lax.empty_p (_empty_abstract_eval): ShapedArray(shape, dtype,
   sharding=out_sharding) of no operands. */
static int type_empty(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 0, 1) < 0) return -1;
  SrDtype dt = SR_F32;
  int has = 0, n = 0;
  int64_t shape[SR_MAX_RANK];
  if (sr_rparam_dtype(cx, e, "dtype", &dt, &has) < 0 || sr_rparam_ints(cx, e, "shape", 1, shape, SR_MAX_RANK, &n) < 0)
    return -1;
  if (!has) return sr_terr(cx, "TypeError", "empty equation has no 'dtype' param");
  if (check_nonnegative(cx, "empty", "shape", shape, n) < 0) return -1;
  return fresh_type(cx, e, dt, shape, n, "out_sharding", out);
}

static int zero_fn(SrShardIO *io) {
  memset(io->out[0]->data, 0, io->out[0]->nbytes);
  return 0;
}

/* XLA:CPU's lowering (_empty_lower): zeros. */
static int ev_empty(SrEvalCtx *cx, const SrEvalEqn *e) {
  Out1 o = out1(cx, e);
  e->out[0] = sr_array_new(e->out_type[0], o.l, o.m);
  return sr_ev_map(cx, 0, NULL, 1, e->out, SR_MAP_BLOCK, zero_fn, NULL);
}

/* ==== sort ==== */

/* lax.sort_p: the operands' types, which must agree in shape and
   sharding and be unsharded over the sorting dimension. */
static int type_sort(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (e->nin < 1 || sr_rule_arity(cx, e, -1, (int)e->nin) < 0) return sr_terr(cx, "TypeError", "sort binds one result per operand");
  int64_t dim = 0;
  if (sr_rparam_int(cx, e, "dimension", 1, &dim) < 0) return -1;
  const SrType *x = e->in[0];
  for (uint32_t i = 1; i < e->nin; i++) {
    int same = e->in[i]->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; d++) same = sr_dim_same(&e->in[i]->dims[d], &x->dims[d]);
    if (same) continue;
    SrBuf a = SR_BUF_INIT;
    for (uint32_t k = 0; k < e->nin; k++) {
      if (k) sr_buf_putc(&a, ' ');
      sr_shape_str(&a, e->in[k]);
    }
    sr_terr(cx, "TypeError", "Arguments to sort must have equal shapes, got: %s", sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if (dim < 0 || dim >= x->ndim) return sr_terr(cx, "TypeError", "sort dimension %lld is out of bounds for rank %d", (long long)dim, x->ndim);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  const SrType *first = NULL;
  for (uint32_t i = 0; s.mode == SR_MODE_EXPLICIT && i < e->nin; i++) {
    const SrType *t = e->in[i];
    if (sr_in_mesh_empty(cx, e, i)) continue;
    if (t->unreduced | t->reduced)
      return sr_terr(cx, "ValueError",
                     "Using pspec[...] is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use "
                     "spec.partitions[...]");
    if (t->dims[dim].nax) {
      SrBuf a = SR_BUF_INIT;
      sr_type_sharding_str(&a, cx, t);
      sr_terr(cx, "ShardingTypeError",
              "Arguments to sort must be unsharded over the sorting dimension. Got arg sharding=%s and sorting "
              "dimension=%lld",
              sr_buf_str(&a), (long long)dim);
      sr_buf_free(&a);
      return -1;
    }
    if (!first) first = t;
    int same = t->unreduced == first->unreduced && t->reduced == first->reduced;
    for (int d = 0; same && d < t->ndim; d++) same = sr_spec_entry_eq(t, d, first, d);
    if (!same) {
      SrBuf a = SR_BUF_INIT;
      int k = 0;
      for (uint32_t j = 0; j < e->nin; j++) {
        if (sr_in_mesh_empty(cx, e, j)) continue;
        if (k++) sr_buf_putc(&a, ' ');
        sr_type_sharding_str(&a, cx, e->in[j]);
      }
      sr_terr(cx, "ShardingTypeError", "Arguments to sort must have equal shardings, got: %s", sr_buf_str(&a));
      sr_buf_free(&a);
      return -1;
    }
  }
  for (uint32_t i = 0; i < e->nin; i++) out[i] = e->in[i];
  return 0;
}

/* ==== engine slots: split's result count, slice's lines for Layout.AUTO ==== */

static uint32_t nout_split(int nin, const SrParam *ps, int np) {
  (void)nin;
  const SrVal *v = sr_params_find(ps, (uint32_t)np, "sizes");
  return v && sr_is_seq(v) ? (uint32_t)v->seq.n : 0;
}

/* A slice that keeps one dimension wider than 1 reads its operand along
   that dimension (exec/layout.c's Layout.AUTO). */
static int minor_slice(const SrEqn *q, uint32_t i, int nd) {
  (void)i;
  int64_t st[SR_MAX_RANK], li[SR_MAX_RANK];
  int ns = 0, nl = 0;
  for (uint32_t p = 0; p < q->nparams; p++) {
    if (strcmp(q->params[p].key, "start_indices") == 0) sr_val_ints(q->params[p].val, st, SR_MAX_RANK, &ns);
    if (strcmp(q->params[p].key, "limit_indices") == 0) sr_val_ints(q->params[p].val, li, SR_MAX_RANK, &nl);
  }
  if (ns != nd || nl != nd) return -1;
  int d = -1, wide = 0;
  for (int t = 0; t < nd; t++)
    if (li[t] - st[t] > 1) d = t, wide++;
  return wide == 1 ? d : -1;
}

BATCH(batch_sort) {
  /* _sort_batch_rule: every operand batched at the first mapped one's
     batch dim (unmapped ones broadcast to its shape) */
  int nb = SR_NOT_MAPPED;
  const SrType *proto = NULL;
  for (uint32_t i = 0; i < e->nin && !proto; i++)
    if (bd[i] != SR_NOT_MAPPED) proto = sr_ad_type(&b->ad, x[i]), nb = bd[i];
  if (!proto) return -1;
  SrVal *small[16], **ops = e->nin <= 16 ? small : sr_xcalloc(e->nin, sizeof *ops);
  int rc = 0;
  for (uint32_t i = 0; i < e->nin && rc == 0; i++) {
    if (bd[i] != SR_NOT_MAPPED) {
      ops[i] = sr_batch_moveaxis(b, x[i], bd[i], nb);
    } else {
      int64_t dims[SR_MAX_RANK];
      for (int d = 0, k = 0; d < proto->ndim; d++)
        if (d != nb) dims[k++] = d;
      SrTypeBuilder tb;
      sr_type_builder(&tb, proto);
      tb.dtype = sr_ad_type(&b->ad, x[i])->dtype;
      ops[i] = sr_ad_broadcast_in_dim(&b->ad, x[i], sr_type_get(&tb), dims, proto->ndim - 1,
                                      sr_ad_ctx_mesh(&b->ad)->n > 0);
    }
    if (!ops[i]) rc = -1;
  }
  int64_t dim = param_int(e, "dimension", 0);
  if (rc == 0)
    rc = batch_out(e, sr_batch_bind_with(b, e, (int)e->nin, ops, "dimension", sr_int(NULL, dim + (nb <= dim)), NULL), nb, y, ybd);
  if (ops != small) free(ops);
  return rc;
}

/* ==== registration ==== */

static void type_rules_structural(void) {
  sr_set_type_rule(SR_P_broadcast_in_dim, type_broadcast_in_dim);
  sr_set_type_rule(SR_P_expand_dims, type_expand_dims);
  sr_set_type_rule(SR_P_reshape, type_reshape);
  sr_set_type_rule(SR_P_transpose, type_transpose);
  sr_set_type_rule(SR_P_squeeze, type_squeeze);
  sr_set_type_rule(SR_P_rev, type_rev);
  sr_set_type_rule(SR_P_concatenate, type_concatenate);
  sr_set_type_rule(SR_P_stack, type_stack);
  sr_set_type_rule(SR_P_unstack, type_unstack);
  sr_set_type_rule(SR_P_split, type_split);
  sr_set_type_rule(SR_P_pad, type_pad);
  sr_set_type_rule(SR_P_slice, type_slice);
  sr_set_type_rule(SR_P_dynamic_slice, type_dynamic_slice);
  sr_set_type_rule(SR_P_dynamic_update_slice, type_dynamic_update_slice);
  sr_set_type_rule(SR_P_gather, type_gather);
  sr_set_type_rule(SR_P_scatter, type_scatter);
  sr_set_type_rule(SR_P_scatter_add, type_scatter);
  sr_set_type_rule(SR_P_scatter_sub, type_scatter);
  sr_set_type_rule(SR_P_scatter_mul, type_scatter);
  sr_set_type_rule(SR_P_scatter_min, type_scatter);
  sr_set_type_rule(SR_P_scatter_max, type_scatter);
  sr_set_type_rule(SR_P_iota, type_iota);
  sr_set_type_rule(SR_P_empty, type_empty);
  sr_set_type_rule(SR_P_sort, type_sort);
}

static void eval_rules_structural(void) {
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
  sr_set_eval_rule(SR_P_gather, ev_gather);
  sr_set_eval_rule(SR_P_scatter, ev_scatter);
  sr_set_eval_rule(SR_P_scatter_add, ev_scatter);
  sr_set_eval_rule(SR_P_scatter_sub, ev_scatter);
  sr_set_eval_rule(SR_P_scatter_mul, ev_scatter);
  sr_set_eval_rule(SR_P_scatter_min, ev_scatter);
  sr_set_eval_rule(SR_P_scatter_max, ev_scatter);
  sr_set_eval_rule(SR_P_iota, ev_iota);
  sr_set_eval_rule(SR_P_empty, ev_empty);
}

static void ad_rules_structural(void) {
  sr_ad_set_jvp(SR_P_stack, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_stack, tr_stack);
  sr_ad_set_jvp(SR_P_unstack, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_unstack, tr_unstack);
  sr_ad_set_jvp(SR_P_iota, sr_ad_jvp_zero);
  sr_ad_set_jvp(SR_P_broadcast_in_dim, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_broadcast_in_dim, tr_broadcast_in_dim);
  sr_ad_set_jvp(SR_P_reshape, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reshape, tr_reshape);
  sr_ad_set_jvp(SR_P_transpose, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_transpose, tr_transpose);
  sr_ad_set_jvp(SR_P_squeeze, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_squeeze, tr_squeeze);
  sr_ad_set_jvp(SR_P_rev, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_rev, tr_self);
  sr_ad_set_jvp(SR_P_concatenate, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_concatenate, tr_concatenate);
  sr_ad_set_jvp(SR_P_split, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_split, tr_split);
  sr_ad_set_jvp(SR_P_pad, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_pad, tr_pad);
  sr_ad_set_jvp(SR_P_slice, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_slice, tr_slice);
  sr_ad_set_jvp(SR_P_dynamic_slice, jvp_dynamic_slice);
  sr_ad_set_transpose(SR_P_dynamic_slice, tr_dynamic_slice);
  sr_ad_set_jvp(SR_P_dynamic_update_slice, jvp_dynamic_update_slice);
  sr_ad_set_transpose(SR_P_dynamic_update_slice, tr_dynamic_update_slice);
  sr_ad_set_jvp(SR_P_gather, jvp_gather);
  sr_ad_set_transpose(SR_P_gather, tr_gather);
  sr_ad_set_jvp(SR_P_scatter, jvp_scatter);
  sr_ad_set_transpose(SR_P_scatter, tr_scatter);
  sr_ad_set_jvp(SR_P_scatter_add, jvp_scatter_add);
  sr_ad_set_transpose(SR_P_scatter_add, tr_scatter_add);
  sr_ad_set_jvp(SR_P_scatter_sub, jvp_scatter_add);
  sr_ad_set_transpose(SR_P_scatter_sub, tr_scatter_add);
  sr_ad_set_jvp(SR_P_scatter_mul, jvp_scatter_mul);
  sr_ad_set_jvp(SR_P_scatter_min, jvp_scatter_extremal);
  sr_ad_set_jvp(SR_P_scatter_max, jvp_scatter_extremal);
  sr_ad_set_transpose(SR_P_scatter_mul, tr_scatter_mul);
}

static void batch_rules_structural(void) {
  sr_prims[SR_P_broadcast_in_dim].batch = batch_broadcast_in_dim;
  sr_prims[SR_P_reshape].batch = batch_reshape;
  sr_prims[SR_P_squeeze].batch = batch_squeeze;
  sr_prims[SR_P_expand_dims].batch = batch_squeeze;
  sr_prims[SR_P_transpose].batch = batch_transpose;
  sr_prims[SR_P_rev].batch = batch_rev;
  sr_prims[SR_P_slice].batch = batch_slice;
  sr_prims[SR_P_concatenate].batch = batch_concatenate;
  sr_prims[SR_P_stack].batch = batch_stack;
  sr_prims[SR_P_unstack].batch = batch_unstack;
  sr_prims[SR_P_split].batch = batch_split;
  sr_prims[SR_P_pad].batch = batch_pad;
  sr_prims[SR_P_dynamic_slice].batch = batch_dynamic_slice;
  sr_prims[SR_P_gather].batch = batch_gather;
  sr_prims[SR_P_scatter].batch = batch_scatter;
  sr_prims[SR_P_scatter_add].batch = batch_scatter;
  sr_prims[SR_P_scatter_sub].batch = batch_scatter;
  sr_prims[SR_P_scatter_mul].batch = batch_scatter;
  sr_prims[SR_P_scatter_min].batch = batch_scatter;
  sr_prims[SR_P_scatter_max].batch = batch_scatter;
  sr_prims[SR_P_dynamic_update_slice].batch = batch_dynamic_update_slice;
  sr_prims[SR_P_sort].batch = batch_sort;
}

#undef BATCH

#undef TR

#undef JVP

/* ==== create_token (lax.py: create_token_p) ==== */

const SrType *sr_lax_token_type(void) {
  static const SrType *t;
  if (!t) t = sr_type_scalar(sr_dtype_intern("Tok", 3));
  return t;
}

static int type_create_token(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  (void)cx;
  (void)e;
  out[0] = sr_lax_token_type();
  return 0;
}

/* a token holds no data */
static int ev_create_token(SrEvalCtx *cx, const SrEvalEqn *e) {
  (void)cx;
  e->out[0] = sr_array_from_data(e->out_type[0], NULL, "");
  return 0;
}

void sr_lax_structural_init(void) {
  sr_set_type_rule(SR_P_create_token, type_create_token);
  sr_set_eval_rule(SR_P_create_token, ev_create_token);
  sr_prims[SR_P_split].nout = nout_split;
  sr_prims[SR_P_slice].minor = minor_slice;
  type_rules_structural();
  eval_rules_structural();
  ad_rules_structural();
  batch_rules_structural();
}
