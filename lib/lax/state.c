/* state.c: the mutable array references (JAX's jax/_src/state/ and the
 * Ref primitives of core.py): new_ref, get, swap, addupdate, freeze.
 *
 * A Ref is an array value whose type has the ref mark (Ref{f32[3]},
 * state/types.py's AbstractRef).  Its concrete form is an array whose
 * buffers only the Ref holds: new_ref copies its operand into fresh
 * buffers, swap and addupdate write into them in place, and get and
 * freeze copy out.  So a Ref passed to a jit, closed over by a body or
 * captured as a constant is the same buffers wherever the evaluator
 * takes it, and every write is seen by every later read, as the
 * discharged program JAX runs computes.
 *
 * The indexer of get, swap and addupdate (state/indexing.py's NDIndexer)
 * is the param `tree`: None for the whole Ref ([...]), else a tuple with
 * an item per dimension of the Ref: (start, size, stride) for a slice, or
 * the position among the equation's operands of an integer index array
 * (the index arrays all have one shape, broadcast by the caller, as
 * NDIndexer.from_indices_shape broadcasts them).  The printer shows the
 * equations as JAX's pp rules do (x[i] <- v, y <- x[...], x[i] += v).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad/batch.h"
#include "check/rule.h"
#include "core/trace.h"
#include "exec/eval.h"
#include "lax/lax.h"
#include "util/intern.h"

/* ==== indexers ==== */

typedef struct Ix {
  int rank;                 /* of the Ref */
  int64_t shape[SR_MAX_RANK];
  int is_int[SR_MAX_RANK];
  int64_t start[SR_MAX_RANK], size[SR_MAX_RANK], stride[SR_MAX_RANK];
  int operand[SR_MAX_RANK]; /* int dims: the operand position */
  int nb;                   /* the index arrays' rank */
  int64_t bshape[SR_MAX_RANK];
  int out_rank;
  int64_t out_shape[SR_MAX_RANK];
  /* out dim k: -1 - j for index array dim j, else the Ref dim sliced */
  int out_src[SR_MAX_RANK];
} Ix;

static const char *tree_key(void) {
  static const char *k;
  if (!k) k = sr_intern_cstr("tree");
  return k;
}

static SrVal *param_of(const SrParam *ps, uint32_t n, const char *key) {
  for (uint32_t i = 0; i < n; i++)
    if (ps[i].key == key) return ps[i].val;
  return NULL;
}

/* Reads the indexer of tree over a Ref of type r, the operands' types in;
   0, or -1 with msg written. */
static int ix_build(Ix *x, const SrVal *tree, const SrType *r, uint32_t nin, const SrType *const *in,
                    char *msg, size_t msgn) {
  memset(x, 0, sizeof *x);
  x->rank = r->ndim;
  for (int d = 0; d < r->ndim; d++) x->shape[d] = r->dims[d].size;
  if (!tree || tree->kind == SR_V_NONE) {
    for (int d = 0; d < x->rank; d++) {
      x->size[d] = x->shape[d];
      x->stride[d] = 1;
    }
  } else {
    if (!sr_is_seq(tree) || tree->seq.n != r->ndim) {
      snprintf(msg, msgn, "`indices` must be the same length as `Ref` shape.");
      return -1;
    }
    int have_b = 0;
    for (int d = 0; d < r->ndim; d++) {
      const SrVal *it = tree->seq.items[d];
      if (it->kind == SR_V_INT) {
        int k = (int)it->i;
        if (k < 0 || (uint32_t)k >= nin) {
          snprintf(msg, msgn, "bad index operand");
          return -1;
        }
        const SrType *t = in[k];
        if (!sr_dtype_is_int(t->dtype)) {
          snprintf(msg, msgn, "Indexer must be an integer array, got %s", sr_dtype_name(t->dtype));
          return -1;
        }
        if (!have_b) {
          x->nb = t->ndim;
          for (int j = 0; j < t->ndim; j++) x->bshape[j] = t->dims[j].size;
          have_b = 1;
        } else if (t->ndim != x->nb) {
          snprintf(msg, msgn, "Cannot broadcast shapes for indexing");
          return -1;
        }
        x->is_int[d] = 1;
        x->operand[d] = k;
      } else if (sr_is_seq(it) && it->seq.n == 3) {
        x->start[d] = it->seq.items[0]->i;
        x->size[d] = it->seq.items[1]->i;
        x->stride[d] = it->seq.items[2]->i;
      } else {
        snprintf(msg, msgn, "bad indexer");
        return -1;
      }
    }
  }
  /* NDIndexer.get_indexer_shape: the index arrays' shape where the first
     integer dimension is when they are contiguous, else in front */
  int first = -1, last = -1, nint = 0;
  for (int d = 0; d < x->rank; d++)
    if (x->is_int[d]) {
      if (first < 0) first = d;
      last = d;
      nint++;
    }
  int contiguous = nint == 0 || last - first + 1 == nint;
  int k = 0;
  if (nint && !contiguous)
    for (int j = 0; j < x->nb; j++) {
      x->out_src[k] = -1 - j;
      x->out_shape[k++] = x->bshape[j];
    }
  for (int d = 0; d < x->rank; d++) {
    if (x->is_int[d]) {
      if (contiguous && d == first)
        for (int j = 0; j < x->nb; j++) {
          x->out_src[k] = -1 - j;
          x->out_shape[k++] = x->bshape[j];
        }
      continue;
    }
    x->out_src[k] = d;
    x->out_shape[k++] = x->size[d];
  }
  x->out_rank = k;
  return 0;
}

/* ==== type rules ==== */

static const SrType *ix_type(const Ix *x, const SrType *r) {
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = r->dtype;
  b.weak = r->weak;
  b.ndim = (uint8_t)x->out_rank;
  for (int k = 0; k < x->out_rank; k++) {
    b.dims[k].size = x->out_shape[k];
    /* a whole dimension of the Ref keeps its sharding */
    int d = x->out_src[k];
    if (d >= 0 && !x->is_int[d] && x->start[d] == 0 && x->stride[d] == 1 && x->size[d] == x->shape[d])
      b.dims[k] = r->dims[d];
  }
  b.mesh = r->mesh;
  b.varying = r->varying;
  return sr_type_get(&b);
}

static void shape_str(char *buf, size_t n, const SrType *t) {
  size_t o = (size_t)snprintf(buf, n, "(");
  for (int d = 0; d < t->ndim && o < n; d++)
    o += (size_t)snprintf(buf + o, n - o, "%lld%s", (long long)t->dims[d].size,
                          t->ndim == 1 ? "," : d + 1 < t->ndim ? ", " : "");
  if (o < n) snprintf(buf + o, n - o, ")");
}

/* core.ref_p's abstract eval: a Ref of the operand's type */
static int type_new_ref(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  if (e->in[0]->ref) return sr_terr(cx, "ValueError", "Cannot store a Ref into another Ref.");
  const SrVal *kind = sr_rparam(e, "kind");
  int k = kind && kind->kind == SR_V_STR && kind->str.n == 16 && memcmp(kind->str.s, "no_grad_no_remat", 16) == 0;
  out[0] = sr_type_ref_kind(e->in[0], k ? 2 : 1);
  return 0;
}

/* freeze_p: the Ref's value */
static int type_freeze(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  if (!e->in[0]->ref) {
    SrBuf b = SR_BUF_INIT;
    sr_type_long(&b, e->in[0]);
    int rc = sr_terr(cx, "TypeError", "freeze expects a Ref, got %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return rc;
  }
  out[0] = sr_type_deref(e->in[0]);
  return 0;
}

static int ref_operand(SrTypeCtx *cx, const SrRuleEqn *e, const char *what) {
  if (e->nin < 1) return sr_terr(cx, "TypeError", "%s takes a Ref", what);
  if (!e->in[0]->ref) {
    SrBuf b = SR_BUF_INIT;
    sr_type_long(&b, e->in[0]);
    int rc = sr_terr(cx, "ValueError", "`%s` must be called on `Ref` types: %s.", what, sr_buf_str(&b));
    sr_buf_free(&b);
    return rc;
  }
  return 0;
}

static int rule_ix(SrTypeCtx *cx, const SrRuleEqn *e, Ix *x) {
  char msg[200];
  const SrType *r = e->in[0];
  if (ix_build(x, sr_rparam(e, tree_key()), r, e->nin, e->in, msg, sizeof msg) < 0)
    return sr_terr(cx, "ValueError", "%s", msg);
  /* NDIndexer._validate_sharding: a Ref sharded over explicit axes is
     indexed by slices only, whole along its sharded dimensions */
  int sharded = 0;
  for (int d = 0; d < r->ndim; d++) sharded |= r->dims[d].nax != 0;
  if (!sharded) return 0;
  for (int d = 0; d < x->rank; d++)
    if (x->is_int[d])
      return sr_terr(cx, "TypeError", "sharded ref (array reference) can only be indexed by slices, not integers");
  for (int d = 0; d < x->rank; d++) {
    if (!r->dims[d].nax || (x->start[d] == 0 && x->stride[d] == 1 && x->size[d] == x->shape[d])) continue;
    char shp[120];
    shape_str(shp, sizeof shp, r);
    SrBuf b = SR_BUF_INIT;
    /* the spec's entry as str prints it: x, or ('x', 'y') */
    if (r->dims[d].nax == 1) sr_buf_puts(&b, r->mesh->names[r->dims[d].ax[0]]);
    for (int k = 0; k < r->dims[d].nax && r->dims[d].nax > 1; k++)
      sr_buf_printf(&b, "%s'%s'", k ? ", " : "(", r->mesh->names[r->dims[d].ax[k]]);
    if (r->dims[d].nax > 1) sr_buf_putc(&b, ')');
    int rc = sr_terr(cx, "ValueError",
                     "sharded ref (array reference) can only be sliced along unsharded axes, but ref of shape %s "
                     "was sliced on axis %d, which is sharded like %s",
                     shp, d, sr_buf_str(&b));
    sr_buf_free(&b);
    return rc;
  }
  return 0;
}

/* empty_ref_p: a Ref of the type its param `ty` names (the repr of a
   ShapedArray, "ShapedArray(float32[3,4])", as JAX prints the param) */
static int type_empty_ref(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 0, 1) < 0) return -1;
  const SrVal *ty = sr_rparam(e, "ty");
  const char *s = ty && (ty->kind == SR_V_WORD || ty->kind == SR_V_STR) ? ty->str.s : NULL;
  size_t n = s ? ty->str.n : 0;
  const char *lb = s ? memchr(s, '(', n) : NULL, *sq = s ? memchr(s, '[', n) : NULL;
  if (!lb || !sq || sq < lb) return sr_terr(cx, "TypeError", "empty_ref: a ty param like ShapedArray(float32[3])");
  int dt = sr_dtype_lookup(lb + 1, (size_t)(sq - lb - 1));
  if (dt < 0) return sr_terr(cx, "TypeError", "empty_ref: unknown dtype in %.*s", (int)n, s);
  int64_t shape[SR_MAX_RANK];
  int nd = 0;
  const char *q = sq + 1, *end = s + n;
  while (q < end && *q != ']' && nd < SR_MAX_RANK) {
    char *next;
    shape[nd++] = strtoll(q, &next, 10);
    q = next;
    if (q < end && *q == ',') q++;
  }
  out[0] = sr_type_ref(sr_type_array((SrDtype)dt, nd, shape));
  return 0;
}

/* free_ref_p: no results */
static int type_free_ref(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  (void)out;
  return ref_operand(cx, e, "free_ref");
}

/* state/primitives.py's _get_abstract_eval */
static int type_get(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (ref_operand(cx, e, "get") < 0) return -1;
  Ix x;
  if (rule_ix(cx, e, &x) < 0) return -1;
  out[0] = ix_type(&x, e->in[0]);
  return 0;
}

/* _swap_abstract_eval and _addupdate_abstract_eval: the value has the
   indexed shape and the Ref's dtype */
static int check_value(SrTypeCtx *cx, const SrRuleEqn *e, const char *what, const SrType **t) {
  if (ref_operand(cx, e, what) < 0) return -1;
  if (e->nin < 2) return sr_terr(cx, "TypeError", "%s takes a Ref and a value", what);
  const SrType *v = e->in[1];
  if (v->ref)
    return sr_terr(cx, "ValueError", "Cannot store a Ref into another Ref. Did you forget to load from it using `[...]`?");
  Ix x;
  if (rule_ix(cx, e, &x) < 0) return -1;
  const SrType *want = ix_type(&x, e->in[0]);
  int same = want->ndim == v->ndim;
  for (int d = 0; d < v->ndim && same; d++) same = want->dims[d].size == v->dims[d].size;
  if (!same) {
    char rs[120], es[120], vs[120];
    shape_str(rs, sizeof rs, e->in[0]);
    shape_str(es, sizeof es, want);
    shape_str(vs, sizeof vs, v);
    return sr_terr(cx, "ValueError", "Invalid shape for `%s`. Ref shape: %s. Expected shape: %s. Value shape: %s. ",
                   what, rs, es, vs);
  }
  if (want->dtype != v->dtype) {
    if (strcmp(what, "swap") == 0)
      return sr_terr(cx, "ValueError", "Invalid dtype for `swap`. Ref dtype: %s. Value dtype: %s. ",
                     sr_dtype_name(want->dtype), sr_dtype_name(v->dtype));
    return sr_terr(cx, "ValueError", "Invalid dtype for `addupdate`. Ref dtype: %s. Value shape: %s. ",
                   sr_dtype_name(want->dtype), sr_dtype_name(v->dtype));
  }
  *t = want;
  return 0;
}

static int type_swap(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  const SrType *t;
  if (check_value(cx, e, "swap", &t) < 0) return -1;
  out[0] = t;
  return 0;
}

static int type_addupdate(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  (void)out;
  const SrType *t;
  return check_value(cx, e, "addupdate", &t);
}

static uint32_t nout_addupdate(int nin, const SrParam *ps, int nparams) {
  (void)nin, (void)ps, (void)nparams;
  return 0;
}

/* ==== eval rules ==== */

/* every device holds the whole value (no dimension split in pieces) */
static int unsharded(const SrArray *a) {
  for (int d = 0; d < a->layout->ndim; d++)
    if (a->layout->dims[d].nax && sr_layout_splits(a->layout, d) != 1) return 0;
  return 1;
}

/* a Ref's buffers hold blocks of its value, no partial sums */
static int need_unsharded(SrEvalCtx *cx, const SrArray *a) {
  if (!a->layout->unreduced) return 0;
  return sr_ev_err(cx, "NotImplementedError", "a Ref's value cannot be unreduced");
}

/* the whole value of a on the host (malloc'ed), or NULL after an error */
static void *host_of(SrEvalCtx *cx, SrArray *a) {
  size_t n = (size_t)sr_type_numel(a->type) * sr_elem_size(a->type->dtype);
  void *p = malloc(n ? n : 1);
  if (!p) {
    sr_ev_oom(cx, n);
    return NULL;
  }
  if (sr_array_to_host(cx, a, p) < 0) {
    free(p);
    return NULL;
  }
  return p;
}

/* whether a layout splits a dimension in pieces */
static int layout_split(const SrType *l) {
  for (int d = 0; d < l->ndim; d++)
    if (l->dims[d].nax && sr_layout_splits(l, d) != 1) return 1;
  return 0;
}

/* an array on `like`'s mesh of type t holding the host data p (the
   whole value, row-major), laid out as t's sharding says */
static SrArray *from_host_cx(SrEvalCtx *cx, const SrArray *like, const SrType *t, const void *p) {
  const SrMesh *m = like ? like->mesh : NULL;
  const SrType *l = sr_layout_of_type(t);
  if (!m || !layout_split(l)) return sr_array_from_data(t, m, p);
  SrArray *rep = sr_array_from_data(sr_type_strip_sharding(t), m, p);
  SrArray *r = sr_redistribute_typed(cx, rep, m, l, t);
  sr_array_unref(rep);
  return r;
}
#define from_host(like, t, p) from_host_cx(cx, like, t, p)

/* writes host data p (the whole value) into every buffer of Ref array a,
   each device its block */
static void write_back(SrArray *a, const void *p) {
  size_t es = sr_elem_size(a->type->dtype);
  size_t n = (size_t)sr_type_numel(a->type) * es;
  if (!unsharded(a)) {
    const SrType *l = a->layout;
    int nd = l->ndim;
    int64_t shard[SR_MAX_RANK], start[SR_MAX_RANK], g[SR_MAX_RANK];
    sr_layout_shard_shape(l, shard);
    for (int d = 0; d < nd; d++) g[d] = a->type->dims[d].size;
    int64_t cnt = sr_layout_shard_numel(l);
    for (int pos = 0; pos < a->ndev; pos++) {
      SrBuffer *b = a->shard[pos];
      if (!b) continue;
      sr_layout_block_start(l, a->mesh, pos, start);
      for (int64_t i = 0; i < cnt; i++) {
        int64_t rem = i, flat = 0, c[SR_MAX_RANK];
        for (int d = nd - 1; d >= 0; d--) {
          c[d] = rem % shard[d];
          rem /= shard[d];
        }
        for (int d = 0; d < nd; d++) flat = flat * g[d] + start[d] + c[d];
        memcpy((char *)b->data + i * (int64_t)es, (const char *)p + flat * (int64_t)es, es);
      }
    }
    return;
  }
  for (int i = 0; i < a->ndev; i++) {
    SrBuffer *b = a->shard[i];
    if (b && n && b->data != p) memcpy(b->data, p, n);
  }
}

/* a copy of a in buffers of its own, in its layout (new_ref) */
static SrArray *deep_copy(const SrArray *a, const SrType *t) {
  SrArray *r = sr_array_new(t, a->layout, a->mesh);
  for (int i = 0; i < r->ndev; i++) {
    SrBuffer *b = a->shard[i];
    if (!b) continue;
    /* devices that share a buffer share its copy */
    int k = 0;
    while (k < i && a->shard[k] != b) k++;
    r->shard[i] = k < i ? sr_buffer_ref(r->shard[k]) : sr_buffer_copy(b);
  }
  return r;
}

static int64_t int_at(const void *p, SrDtype dt, int64_t i) {
  switch (dt) {
  case SR_I8: return ((const int8_t *)p)[i];
  case SR_I16: return ((const int16_t *)p)[i];
  case SR_I32: return ((const int32_t *)p)[i];
  case SR_I64: return ((const int64_t *)p)[i];
  case SR_U8: return ((const uint8_t *)p)[i];
  case SR_U16: return ((const uint16_t *)p)[i];
  case SR_U32: return ((const uint32_t *)p)[i];
  case SR_U64: return (int64_t)((const uint64_t *)p)[i];
  case SR_BOOL: return ((const uint8_t *)p)[i];
  default: return 0;
  }
}

/* The flat offsets into the Ref of the indexed elements, in the order of
   the result (malloc'ed, *n of them), or NULL after an error. */
static int64_t *ix_offsets(SrEvalCtx *cx, const SrEvalEqn *e, const Ix *x, int64_t *n) {
  int64_t total = 1;
  for (int k = 0; k < x->out_rank; k++) total *= x->out_shape[k];
  void *iv[SR_MAX_RANK] = {0};
  int ok = 1;
  for (int d = 0; d < x->rank && ok; d++)
    if (x->is_int[d]) {
      iv[d] = host_of(cx, e->in[x->operand[d]]);
      ok = iv[d] != NULL;
    }
  int64_t *off = ok ? malloc((size_t)(total ? total : 1) * sizeof *off) : NULL;
  if (ok && !off) ok = (sr_ev_oom(cx, (size_t)total * sizeof *off), 0);
  for (int64_t o = 0; ok && o < total; o++) {
    int64_t c[SR_MAX_RANK], rem = o;
    for (int k = x->out_rank - 1; k >= 0; k--) {
      c[k] = x->out_shape[k] ? rem % x->out_shape[k] : 0;
      rem = x->out_shape[k] ? rem / x->out_shape[k] : 0;
    }
    int64_t bflat = 0;
    for (int k = 0; k < x->out_rank; k++)
      if (x->out_src[k] < 0) bflat = bflat * x->bshape[-1 - x->out_src[k]] + c[k];
    int64_t src[SR_MAX_RANK];
    for (int k = 0; k < x->out_rank; k++)
      if (x->out_src[k] >= 0) {
        int d = x->out_src[k];
        src[d] = x->start[d] + c[k] * x->stride[d];
      }
    int64_t flat = 0;
    for (int d = 0; d < x->rank; d++) {
      if (x->is_int[d]) {
        int64_t i = int_at(iv[d], e->in[x->operand[d]]->type->dtype, bflat);
        if (i < 0) i += x->shape[d];
        /* as XLA's gather and dynamic_slice clamp */
        if (i < 0) i = 0;
        if (i >= x->shape[d]) i = x->shape[d] - 1;
        src[d] = i;
      }
      if (src[d] < 0 || src[d] >= x->shape[d]) {
        ok = 0;
        sr_ev_err(cx, "IndexError", "index %lld is out of bounds for axis %d with size %lld", (long long)src[d],
                  d, (long long)x->shape[d]);
        break;
      }
      flat = flat * x->shape[d] + src[d];
    }
    off[o] = flat;
  }
  for (int d = 0; d < x->rank; d++) free(iv[d]);
  if (!ok) {
    free(off);
    return NULL;
  }
  *n = total;
  return off;
}

static int eval_ix(SrEvalCtx *cx, const SrEvalEqn *e, Ix *x) {
  const SrType *in[512];
  for (uint32_t i = 0; i < e->nin && i < 512; i++) in[i] = e->in[i]->type;
  char msg[200];
  if (ix_build(x, param_of(e->params, e->nparams, tree_key()), e->in[0]->type, e->nin, in, msg, sizeof msg) < 0)
    return sr_ev_err(cx, "ValueError", "%s", msg);
  return 0;
}

/* new_ref: fresh buffers holding a copy */
static int ev_new_ref(SrEvalCtx *cx, const SrEvalEqn *e) {
  if (need_unsharded(cx, e->in[0]) < 0) return -1;
  if (e->in[0]->local) return sr_ev_err(cx, "NotImplementedError", "a Ref of an array in a device-local layout");
  e->out[0] = deep_copy(e->in[0], e->out_type[0]);
  return 0;
}

/* freeze: a copy of the value */
static int ev_freeze(SrEvalCtx *cx, const SrEvalEqn *e) {
  void *p = host_of(cx, e->in[0]);
  if (!p) return -1;
  e->out[0] = from_host(e->in[0], e->out_type[0], p);
  free(p);
  return 0;
}

/* empty_ref: fresh buffers (zeros: JAX leaves them uninitialized) */
static int ev_empty_ref(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  size_t nb = (size_t)sr_type_numel(t) * sr_elem_size(t->dtype);
  void *p = calloc(1, nb ? nb : 1);
  if (!p) return sr_ev_oom(cx, nb);
  e->out[0] = sr_array_from_data(t, NULL, p);
  free(p);
  return 0;
}

static int ev_free_ref(SrEvalCtx *cx, const SrEvalEqn *e) {
  (void)cx, (void)e;
  return 0;
}

/* get: the indexed elements; swap also writes the value there */
static int get_swap(SrEvalCtx *cx, const SrEvalEqn *e, int write) {
  SrArray *r = e->in[0];
  if (write && need_unsharded(cx, r) < 0) return -1;
  Ix x;
  if (eval_ix(cx, e, &x) < 0) return -1;
  int64_t n;
  int64_t *off = ix_offsets(cx, e, &x, &n);
  if (!off) return -1;
  size_t es = sr_elem_size(r->type->dtype);
  char *p = host_of(cx, r);
  char *o = p ? malloc((size_t)(n ? n : 1) * es) : NULL;
  char *v = p && o && write ? host_of(cx, e->in[1]) : NULL;
  int rc = -1;
  if (o && (!write || v)) {
    for (int64_t i = 0; i < n; i++) memcpy(o + i * (int64_t)es, p + off[i] * (int64_t)es, es);
    if (write) {
      for (int64_t i = 0; i < n; i++) memcpy(p + off[i] * (int64_t)es, v + i * (int64_t)es, es);
      write_back(r, p);
    }
    e->out[0] = from_host(r, e->out_type[0], o);
    rc = 0;
  }
  free(v);
  free(o);
  free(p);
  free(off);
  return rc;
}

static int ev_get(SrEvalCtx *cx, const SrEvalEqn *e) { return get_swap(cx, e, 0); }
static int ev_swap(SrEvalCtx *cx, const SrEvalEqn *e) { return get_swap(cx, e, 1); }

/* addupdate: the indexed elements plus the value, by add's own eval
   rule (every dtype), written back */
static int ev_addupdate(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrArray *r = e->in[0];
  if (need_unsharded(cx, r) < 0) return -1;
  Ix x;
  if (eval_ix(cx, e, &x) < 0) return -1;
  int64_t n;
  int64_t *off = ix_offsets(cx, e, &x, &n);
  if (!off) return -1;
  size_t es = sr_elem_size(r->type->dtype);
  char *p = host_of(cx, r);
  char *o = p ? malloc((size_t)(n ? n : 1) * es) : NULL;
  int rc = -1;
  if (o) {
    for (int64_t i = 0; i < n; i++) memcpy(o + i * (int64_t)es, p + off[i] * (int64_t)es, es);
    const SrType *vt = e->in[1]->type;
    SrArray *old = from_host(e->in[1], sr_type_with_weak(vt, 0), o);
    SrArray *in2[2] = {old, e->in[1]}, *sum = NULL;
    const SrType *st = sr_type_with_weak(vt, 0);
    SrEvalEqn add = {.prim = &sr_prims[SR_P_add], .nin = 2, .nout = 1, .in = in2, .out_type = &st, .out = &sum};
    if (sr_ev_eqn(cx, &add) == 0) {
      char *s = host_of(cx, sum);
      if (s) {
        for (int64_t i = 0; i < n; i++) memcpy(p + off[i] * (int64_t)es, s + i * (int64_t)es, es);
        write_back(r, p);
        free(s);
        rc = 0;
      }
    }
    sr_array_unref(sum);
    sr_array_unref(old);
  }
  free(o);
  free(p);
  free(off);
  return rc;
}

/* ==== JVP rules ==== */

/* Zeros of x's tangent type, not weak: the tangent a rule instantiates
   for a value whose tangent is symbolically zero. */
static SrVal *tangent_zeros(SrAd *ad, SrVal *x) {
  const SrType *xt = sr_ad_type(ad, x);
  SrTypeBuilder b;
  sr_type_builder(&b, xt);
  b.dtype = sr_dtype_tangent(xt->dtype);
  b.weak = 0;
  return sr_ad_full_zeros(ad, sr_type_get(&b));
}

/* state/primitives.py's _ref_jvp: the tangent is a Ref of the operand's
   tangent (zeros when it has none) */
static int jvp_new_ref(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  const SrType *yt = sr_ad_type(ad, y[0]);
  if (yt && yt->ref == 2) {
    /* _ref_lin: a no_grad_no_remat Ref has a zero tangent */
    ty[0] = NULL;
    return 0;
  }
  SrVal *tin = t[0] ? t[0] : tangent_zeros(ad, x[0]);
  if (!tin) return -1;
  ty[0] = t[0] ? sr_ad_bind(ad, SR_P_new_ref, 1, &tin, (int)e->nparams, e->params)
               : sr_ad_bind_tangent(ad, SR_P_new_ref, 1, &tin, (int)e->nparams, e->params);
  return ty[0] ? 0 : -1;
}

/* _get_jvp: the same read of the tangent Ref */
static int jvp_get(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *in[512];
  in[0] = t[0];
  for (uint32_t i = 1; i < e->nin && i < 512; i++) in[i] = x[i];
  ty[0] = sr_ad_bind(ad, SR_P_get, (int)e->nin, in, (int)e->nparams, e->params);
  return ty[0] ? 0 : -1;
}

/* _swap_jvp and addupdate_jvp_rule: the same write of the value's
   tangent into the tangent Ref */
static int jvp_write(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty, int prim) {
  SrVal *r = e->nout ? sr_ad_bind_eqn1(ad, e, x) : sr_ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  if (e->nout) y[0] = r;
  const SrType *rt = sr_ad_type(ad, x[0]);
  if ((!t[0] && !t[1]) || (rt && rt->ref == 2)) {
    if (e->nout) ty[0] = NULL;
    return 0;
  }
  if (!t[0]) {
    SrBuf b = SR_BUF_INIT;
    sr_type_long(&b, sr_ad_type(ad, x[0]));
    sr_raise(ad->I, "Exception",
             "performing a set/swap operation with a differentiated value on a non-differentiated array "
             "reference of type %s. Move the array reference to be an argument of the differentiated function?",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  SrVal *tv = t[1] ? t[1] : tangent_zeros(ad, x[1]);
  if (!tv) return -1;
  SrVal *in[512];
  in[0] = t[0];
  in[1] = tv;
  for (uint32_t i = 2; i < e->nin && i < 512; i++) in[i] = x[i];
  SrVal *o = sr_ad_bind(ad, prim, (int)e->nin, in, (int)e->nparams, e->params);
  if (!o) return -1;
  if (e->nout) ty[0] = o;
  return 0;
}

static int jvp_swap(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  return jvp_write(ad, e, x, t, y, ty, SR_P_swap);
}

static int jvp_addupdate(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  return jvp_write(ad, e, x, t, y, ty, SR_P_addupdate);
}

/* _empty_ref_jvp: a tangent Ref of the tangent type */
static int jvp_empty_ref(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  (void)t;
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  if (!y[0]) return -1;
  ty[0] = sr_ad_bind_tangent(ad, SR_P_empty_ref, 0, NULL, (int)e->nparams, e->params);
  return ty[0] ? 0 : -1;
}

/* _free_ref_jvp: both Refs are freed */
static int jvp_free_ref(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  (void)y, (void)ty;
  if (!sr_ad_bind_eqn(ad, e, x)) return -1;
  if (t[0] && !sr_ad_bind(ad, SR_P_free_ref, 1, t, 0, NULL)) return -1;
  return 0;
}

/* ==== transpose rules ====
 *
 * ad.backward_pass3's: the cotangent of a linear Ref is a Ref of the
 * transposed program (RefAccum), which the backward engine makes of
 * zeros when first needed (sr_ad_zero_ref_hook) and hands to the rules
 * of what reads and writes the Ref in x[0]; they write into it. */

static SrVal *ct_ref_zeros(SrAd *ad, const SrType *ref_type) {
  const SrType *inner = sr_type_deref(ref_type);
  SrTypeBuilder b;
  sr_type_builder(&b, inner);
  b.dtype = sr_dtype_tangent(inner->dtype);
  b.weak = 0;
  SrVal *z = sr_ad_full_zeros(ad, sr_type_get(&b));
  if (!z) return NULL;
  return sr_ad_bindv(ad, SR_P_new_ref, 1, &z, "kind", sr_none(), "memory_space", sr_none(), "pin", sr_bool(0),
                     NULL);
}

static int ct_ref_accum(SrAd *ad, SrVal *ref, SrVal *ct) {
  SrVal *in[2] = {ref, ct};
  SrParam p = {tree_key(), sr_none()};
  return sr_ad_bind(ad, SR_P_addupdate, 2, in, 1, &p) ? 0 : -1;
}

/* new_ref: the operand's cotangent is the Ref's final cotangent */
static int tr_new_ref(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)e, (void)x;
  cx[0] = ct[0] ? sr_ad_bind(ad, SR_P_freeze, 1, ct, 0, NULL) : NULL;
  return ct[0] && !cx[0] ? -1 : 0;
}

/* the state op binding e's indexer onto the cotangent Ref r with value v */
static SrVal *bind_like(SrAd *ad, int prim, const SrEqn *e, SrVal *r, SrVal *v, SrVal **x, int first_ix) {
  SrVal *in[512];
  int n = 0;
  in[n++] = r;
  if (v) in[n++] = v;
  /* the index operands keep their positions: get's start at 1, the
     writes' at 2 */
  for (uint32_t i = (uint32_t)first_ix; i < e->nin && n < 512; i++) in[n++] = x[i];
  return sr_ad_bind(ad, prim, n, in, (int)e->nparams, e->params);
}

/* get: the result's cotangent is added into the Ref's at the indexer */
static int tr_get(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)cx;
  if (!ct[0]) return 0;
  /* addupdate's index operands sit after its value: get's `tree` names
     positions from 1, so shift them by one */
  SrVal *tree = sr_eqn_param(e, tree_key());
  SrVal *t2 = tree;
  if (tree && sr_is_seq(tree)) {
    t2 = sr_seq(NULL, SR_V_TUPLE, tree->seq.n);
    for (int d = 0; d < tree->seq.n; d++) {
      SrVal *it = tree->seq.items[d];
      sr_seq_push(NULL, t2, it->kind == SR_V_INT ? sr_int(NULL, it->i + 1) : sr_ref(it));
    }
  }
  SrVal *in[512];
  int n = 0;
  in[n++] = x[0];
  in[n++] = ct[0];
  for (uint32_t i = 1; i < e->nin && n < 512; i++) in[n++] = x[i];
  SrParam p = {tree_key(), t2 ? t2 : sr_none()};
  SrVal *r = sr_ad_bind(ad, SR_P_addupdate, n, in, 1, &p);
  if (t2 != tree) sr_unref(t2);
  return r ? 0 : -1;
}

/* swap: the value's cotangent is what the Ref's cotangent held there,
   which becomes the result's */
static int tr_swap(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  SrVal *g = ct[0];
  if (!g) {
    const SrType *ot = e->out[0]->type;
    SrTypeBuilder b;
    sr_type_builder(&b, ot);
    b.dtype = sr_dtype_tangent(ot->dtype);
    b.weak = 0;
    g = sr_ad_full_zeros(ad, sr_type_get(&b));
    if (!g) return -1;
  }
  SrVal *old = bind_like(ad, SR_P_swap, e, x[0], g, x, 2);
  if (!old) return -1;
  cx[1] = old;
  return 0;
}

/* addupdate: the value's cotangent is the Ref's cotangent there */
static int tr_addupdate(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)ct;
  SrVal *tree = sr_eqn_param(e, tree_key());
  SrVal *t2 = tree;
  if (tree && sr_is_seq(tree)) {
    t2 = sr_seq(NULL, SR_V_TUPLE, tree->seq.n);
    for (int d = 0; d < tree->seq.n; d++) {
      SrVal *it = tree->seq.items[d];
      sr_seq_push(NULL, t2, it->kind == SR_V_INT ? sr_int(NULL, it->i - 1) : sr_ref(it));
    }
  }
  SrVal *in[512];
  int n = 0;
  in[n++] = x[0];
  for (uint32_t i = 2; i < e->nin && n < 512; i++) in[n++] = x[i];
  SrParam p = {tree_key(), t2 ? t2 : sr_none()};
  cx[1] = sr_ad_bind(ad, SR_P_get, n, in, 1, &p);
  if (t2 != tree) sr_unref(t2);
  return cx[1] ? 0 : -1;
}

/* freeze: the result's cotangent is added into the Ref's */
static int tr_freeze(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)e, (void)cx;
  if (!ct[0]) return 0;
  SrVal *in[2] = {x[0], ct[0]};
  SrParam p = {tree_key(), sr_none()};
  return sr_ad_bind(ad, SR_P_addupdate, 2, in, 1, &p) ? 0 : -1;
}

/* empty_ref: its cotangent Ref is dropped; free_ref: nothing */
static int tr_nothing(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)ad, (void)e, (void)ct, (void)x, (void)cx;
  return 0;
}

/* ==== batching rules ==== */

/* _freeze_batched: the batch dim passes through */
static int batch_same(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  return sr_batch_bind_same(b, e, x, bd[0], y, ybd);
}

/* _array_ref_batched: an unbatched operand is broadcast first (the Ref is
   batched at 0 defensively, a batched value may be written later) */
static int batch_new_ref(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  if (bd[0] != SR_NOT_MAPPED) return sr_batch_bind_same(b, e, x, bd[0], y, ybd);
  SrVal *v = sr_batch_matchaxis(b, x[0], SR_NOT_MAPPED, 0);
  if (!v) return -1;
  return sr_batch_bind_same(b, e, &v, 0, y, ybd);
}

/* e's indexer over a Ref batched at dim r (the examples' indexer with the
   batch dim taken whole, as _batch_indexer does for unbatched indices)
   as a counted tree, and where the batch dim lands in the indexed value
   (*p) */
static SrVal *batched_tree(SrBatch *b, const SrEqn *e, const SrType *rt, int r, int *p) {
  SrVal *tree = sr_eqn_param(e, tree_key());
  if (!tree || !sr_is_seq(tree)) {
    *p = r;
    return sr_none();
  }
  SrVal *t2 = sr_seq(NULL, SR_V_TUPLE, tree->seq.n + 1);
  for (int d = 0; d <= tree->seq.n; d++) {
    if (d == r) {
      SrVal *tr[3] = {sr_int(NULL, 0), sr_int(NULL, b->size), sr_int(NULL, 1)};
      sr_seq_push(NULL, t2, sr_tuple(NULL, 3, tr));
    }
    if (d < tree->seq.n) sr_seq_push(NULL, t2, sr_ref(tree->seq.items[d]));
  }
  const SrType *in[512];
  in[0] = rt;
  for (uint32_t i = 1; i < e->nin && i < 512; i++) in[i] = e->in[i]->type;
  Ix x;
  char msg[200];
  *p = -1;
  if (ix_build(&x, t2, rt, e->nin, in, msg, sizeof msg) == 0)
    for (int k = 0; k < x.out_rank; k++)
      if (x.out_src[k] == r) *p = k;
  return t2;
}

static int idx_batched(const SrEqn *e, const int *bd, uint32_t first) {
  for (uint32_t i = first; i < e->nin; i++)
    if (bd[i] != SR_NOT_MAPPED) return 1;
  return 0;
}

/* _get_vmap, for indices the map does not batch */
static int batch_get(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  if (bd[0] == SR_NOT_MAPPED || idx_batched(e, bd, 1)) return sr_batch_no_rule(b, e->prim);
  int p;
  SrVal *t2 = batched_tree(b, e, sr_value_type(b->ad.I, x[0]), bd[0], &p);
  y[0] = sr_batch_bind_with(b, e, (int)e->nin, x, "tree", t2, NULL);
  ybd[0] = p;
  return y[0] ? 0 : -1;
}

/* _swap_vmap and _addupdate_vmap, for indices the map does not batch */
static int batch_write(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd, const char *what) {
  if (bd[0] == SR_NOT_MAPPED) {
    SrBuf t = SR_BUF_INIT;
    sr_type_long(&t, sr_value_type(b->ad.I, x[0]));
    sr_raise(b->ad.I, "Exception",
             "performing %s operation with vmapped value on an unbatched array reference of type %s. Move the "
             "array reference to be an argument to the vmapped function?",
             what, sr_buf_str(&t));
    sr_buf_free(&t);
    return -1;
  }
  if (idx_batched(e, bd, 2)) return sr_batch_no_rule(b, e->prim);
  int p;
  SrVal *t2 = batched_tree(b, e, sr_value_type(b->ad.I, x[0]), bd[0], &p);
  SrVal *v = p < 0 ? NULL : sr_batch_matchaxis(b, x[1], bd[1], p);
  if (!v) {
    sr_unref(t2);
    return p < 0 ? sr_batch_no_rule(b, e->prim) : -1;
  }
  SrVal *in[512];
  for (uint32_t i = 0; i < e->nin && i < 512; i++) in[i] = x[i];
  in[1] = v;
  SrVal *r = sr_batch_bind_with(b, e, (int)e->nin, in, "tree", t2, NULL);
  if (!r) return -1;
  if (e->nout) {
    y[0] = r;
    ybd[0] = p;
  }
  return 0;
}

static int batch_swap(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  return batch_write(b, e, x, bd, y, ybd, "a set/swap");
}

static int batch_addupdate(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  return batch_write(b, e, x, bd, y, ybd, "an addupdate");
}

/* ==== registration ==== */

void sr_lax_state_init(void) {
  sr_set_type_rule(SR_P_new_ref, type_new_ref);
  sr_set_type_rule(SR_P_get, type_get);
  sr_set_type_rule(SR_P_swap, type_swap);
  sr_set_type_rule(SR_P_addupdate, type_addupdate);
  sr_set_type_rule(SR_P_freeze, type_freeze);
  sr_prims[SR_P_addupdate].nout = nout_addupdate;
  sr_prims[SR_P_free_ref].nout = nout_addupdate;
  sr_set_type_rule(SR_P_empty_ref, type_empty_ref);
  sr_set_type_rule(SR_P_free_ref, type_free_ref);
  sr_set_eval_rule(SR_P_empty_ref, ev_empty_ref);
  sr_set_eval_rule(SR_P_free_ref, ev_free_ref);
  sr_ad_set_jvp(SR_P_empty_ref, jvp_empty_ref);
  sr_ad_set_jvp(SR_P_free_ref, jvp_free_ref);
  sr_ad_set_transpose(SR_P_empty_ref, tr_nothing);
  sr_ad_set_transpose(SR_P_free_ref, tr_nothing);
  sr_set_eval_rule(SR_P_new_ref, ev_new_ref);
  sr_set_eval_rule(SR_P_get, ev_get);
  sr_set_eval_rule(SR_P_swap, ev_swap);
  sr_set_eval_rule(SR_P_addupdate, ev_addupdate);
  sr_set_eval_rule(SR_P_freeze, ev_freeze);
  sr_ad_set_jvp(SR_P_new_ref, jvp_new_ref);
  sr_ad_set_jvp(SR_P_get, jvp_get);
  sr_ad_set_jvp(SR_P_swap, jvp_swap);
  sr_ad_set_jvp(SR_P_addupdate, jvp_addupdate);
  sr_ad_set_jvp(SR_P_freeze, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_new_ref, tr_new_ref);
  sr_ad_set_transpose(SR_P_get, tr_get);
  sr_ad_set_transpose(SR_P_swap, tr_swap);
  sr_ad_set_transpose(SR_P_addupdate, tr_addupdate);
  sr_ad_set_transpose(SR_P_freeze, tr_freeze);
  sr_prims[SR_P_new_ref].batch = batch_new_ref;
  sr_prims[SR_P_freeze].batch = batch_same;
  sr_prims[SR_P_get].batch = batch_get;
  sr_prims[SR_P_swap].batch = batch_swap;
  sr_prims[SR_P_addupdate].batch = batch_addupdate;
  sr_ad_zero_ref_hook = ct_ref_zeros;
  sr_ad_ref_accum_hook = ct_ref_accum;
}
