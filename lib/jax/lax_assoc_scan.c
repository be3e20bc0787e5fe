/* lax_assoc_scan.c: jax.lax.associative_scan (lax/control_flow/loops.py),
 * JAX's recursive algorithm with the same calls in the same order: the
 * pairs combined (slice_in_dim stride 2), the odd results scanned
 * recursively, the even ones combined from them, and the two interleaved
 * by two interior pads added (bitwise_or for bools), so that the jaxpr is
 * JAX's.  Registered by sr_lax_assoc_scan_init (misc16.h).
 */
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/misc16.h"
#include "jax/nn.h"
#include "jax/tree_util.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"

typedef struct {
  SrInterp *I;
  SrVal *fn, *tree; /* tree: the structure of elems */
  int64_t axis;
  int n;            /* leaves */
} Scan;

/* slicing.slice_in_dim(e, start, limit, stride=stride, axis=axis); limit
   INT64_MIN for None.  A new reference or NULL. */
static SrVal *slice_in_dim(Scan *c, SrVal *e, int64_t start, int64_t limit, int64_t stride) {
  SrNnScope s = {c->I, {0}, 0};
  SrVal *v[3] = {e, sr_nn_int(&s, start), limit == INT64_MIN ? sr_none() : sr_nn_int(&s, limit)};
  const char *kw[2] = {"stride", "axis"};
  SrVal *kv[2] = {sr_nn_int(&s, stride), sr_nn_int(&s, c->axis)};
  return sr_nn_done(&s, sr_nn_call(&s, "jax.lax.slice_in_dim", 3, v, 2, kw, kv));
}

/* a list of the n results of slice_in_dim on each of es; NULL on error */
static SrVal *slices(Scan *c, SrVal *es, int64_t start, int64_t limit, int64_t stride) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, es->seq.n);
  for (int i = 0; i < es->seq.n; i++) {
    SrVal *r = slice_in_dim(c, es->seq.items[i], start, limit, stride);
    if (!r) {
      sr_unref(l);
      return NULL;
    }
    sr_seq_push(NULL, l, r);
  }
  return l;
}

/* combine(a_flat, b_flat): fn on the two unflattened, flattened back;
   steals a and b */
static SrVal *combine(Scan *c, SrVal *a, SrVal *b) {
  SrVal *r = NULL;
  if (!a || !b) goto out;
  SrVal *v[2] = {sr_pytree_unflatten(c->tree, a), sr_pytree_unflatten(c->tree, b)};
  if (v[0] && v[1]) {
    SrArgs ca = {2, v, 0, NULL, NULL, NULL};
    SrVal *t = sr_call(c->I, c->fn, &ca);
    if (t) {
      r = sr_pytree_flatten(c->I, t);
      sr_unref(t);
    }
  }
  sr_unref(v[0]);
  sr_unref(v[1]);
out:
  sr_unref(a);
  sr_unref(b);
  return r;
}

static int64_t axis_size(Scan *c, SrVal *e) {
  const SrType *t = sr_value_type(c->I, e);
  return t->dims[c->axis].size;
}

/* _interleave(a, b, axis): a's and b's elements alternating along axis */
static SrVal *interleave(Scan *c, SrVal *a, SrVal *b) {
  SrNnScope s = {c->I, {0}, 0};
  const SrType *ta = sr_value_type(c->I, a), *tb = sr_value_type(c->I, b);
  int same = ta->dims[c->axis].size == tb->dims[c->axis].size;
  SrVal *pa = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, ta->ndim));
  SrVal *pb = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, tb->ndim));
  for (int k = 0; k < ta->ndim; k++) {
    int64_t t[3] = {0, 0, 0};
    if (k == c->axis) t[1] = same ? 1 : 0, t[2] = 1;
    SrVal *x[3] = {sr_int(NULL, t[0]), sr_int(NULL, t[1]), sr_int(NULL, t[2])};
    sr_seq_push(NULL, pa, sr_tuple(NULL, 3, x));
  }
  for (int k = 0; k < tb->ndim; k++) {
    int64_t t[3] = {0, 0, 0};
    if (k == c->axis) t[0] = 1, t[1] = same ? 0 : 1, t[2] = 1;
    SrVal *x[3] = {sr_int(NULL, t[0]), sr_int(NULL, t[1]), sr_int(NULL, t[2])};
    sr_seq_push(NULL, pb, sr_tuple(NULL, 3, x));
  }
  SrVal *xa = sr_nn_call3(&s, "jax.lax.pad", a, sr_nn_typed_scalar(&s, 0, ta->dtype), pa);
  SrVal *xb = sr_nn_call3(&s, "jax.lax.pad", b, sr_nn_typed_scalar(&s, 0, tb->dtype), pb);
  const char *op = ta->dtype == SR_BOOL ? "jax.lax.bitwise_or" : "jax.lax.add";
  return sr_nn_done(&s, sr_nn_call2(&s, op, xa, xb));
}

/* _scan(elems): a new list, or NULL; borrows elems */
static SrVal *scan(Scan *c, SrVal *elems) {
  if (sr_interrupt_point(c->I)) return sr_raise(c->I, "KeyboardInterrupt", "interrupted");
  int64_t n = axis_size(c, elems->seq.items[0]);
  if (n < 2) return sr_ref(elems);
  SrVal *lo = slices(c, elems, 0, -1, 2); /* JAX's order of evaluation */
  SrVal *reduced = combine(c, lo, lo ? slices(c, elems, 1, INT64_MIN, 2) : NULL);
  if (!reduced) return NULL;
  SrVal *odd = scan(c, reduced);
  sr_unref(reduced);
  if (!odd) return NULL;
  SrVal *even;
  if (n % 2 == 0) {
    SrVal *o = slices(c, odd, 0, -1, 1);
    even = combine(c, o, o ? slices(c, elems, 2, INT64_MIN, 2) : NULL);
  } else {
    even = combine(c, sr_ref(odd), slices(c, elems, 2, INT64_MIN, 2));
  }
  SrVal *r = NULL;
  if (!even) goto out;
  if (even->seq.n != elems->seq.n || odd->seq.n != elems->seq.n) {
    sr_raise(c->I, "ValueError", "zip() argument 2 is shorter than argument 1");
    goto out;
  }
  r = sr_seq(NULL, SR_V_LIST, elems->seq.n);
  for (int i = 0; i < elems->seq.n; i++) {
    SrNnScope s = {c->I, {0}, 0};
    SrVal *first = sr_nn_keep(&s, slice_in_dim(c, elems->seq.items[i], 0, 1, 1));
    SrVal *ops = first ? sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, 2)) : NULL;
    if (ops) {
      sr_seq_push(NULL, ops, sr_ref(first));
      sr_seq_push(NULL, ops, sr_ref(even->seq.items[i]));
    }
    const char *kw[1] = {"dimension"};
    SrVal *kv[1] = {sr_nn_int(&s, c->axis)};
    SrVal *cat = ops ? sr_nn_call(&s, "jax.lax.concatenate", 1, &ops, 1, kw, kv) : NULL;
    SrVal *e = cat ? interleave(c, cat, odd->seq.items[i]) : NULL;
    sr_nn_done(&s, NULL);
    if (!e) {
      sr_unref(r);
      r = NULL;
      goto out;
    }
    sr_seq_push(NULL, r, e);
  }
out:
  sr_unref(odd);
  sr_unref(even);
  return r;
}

/* lax.rev(e, [axis]) of each leaf: a new list or NULL */
static SrVal *rev_all(Scan *c, SrVal *l) {
  SrVal *r = sr_seq(NULL, SR_V_LIST, l->seq.n);
  for (int i = 0; i < l->seq.n; i++) {
    SrNnScope s = {c->I, {0}, 0};
    SrVal *dims = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, 1));
    sr_seq_push(NULL, dims, sr_int(NULL, c->axis));
    SrVal *e = sr_nn_done(&s, sr_nn_call2(&s, "jax.lax.rev", l->seq.items[i], dims));
    if (!e) {
      sr_unref(r);
      return NULL;
    }
    sr_seq_push(NULL, r, e);
  }
  return r;
}

/* lax.associative_scan(fn, elems, reverse=False, axis=0) */
static SrVal *lax_associative_scan(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "associative_scan", "fn, elems, reverse=, axis=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "lax.associative_scan: fn argument should be callable.");
  int reverse = p[2] ? sr_truthy(I, p[2]) : 0;
  int64_t axis = 0;
  if (reverse < 0 || (p[3] && sr_as_int(I, p[3], "axis", &axis) < 0)) return NULL;
  Scan c = {I, p[0], NULL, 0, 0};
  SrVal *flat = sr_pytree_flatten(I, p[1]), *r = NULL, *scans = NULL;
  if (!flat) return NULL;
  int k = 0;
  c.tree = sr_pytree_numbered(p[1], &k);
  c.n = flat->seq.n;
  for (int i = 0; i < flat->seq.n; i++) { /* the leaves as arrays (elem.shape) */
    SrVal *x = sr_jnp_asarray(I, flat->seq.items[i], -1);
    if (!x) goto out;
    sr_unref(flat->seq.items[i]);
    flat->seq.items[i] = x;
  }
  if (!flat->seq.n) {
    sr_raise(I, "IndexError", "list index out of range");
    goto out;
  }
  if (reverse) {
    c.axis = axis; /* lax.rev before the axis is canonicalized, as JAX */
    SrVal *rv = rev_all(&c, flat);
    if (!rv) goto out;
    sr_unref(flat);
    flat = rv;
  }
  const SrType *t0 = sr_value_type(I, flat->seq.items[0]);
  if (sr_api_axis(I, axis, t0->ndim, &c.axis) < 0) goto out;
  int64_t n = t0->dims[c.axis].size;
  for (int i = 1; i < flat->seq.n; i++) {
    const SrType *t = sr_value_type(I, flat->seq.items[i]);
    if (c.axis >= t->ndim) {
      sr_raise(I, "IndexError", "tuple index out of range");
      goto out;
    }
    if (t->dims[c.axis].size != n) {
      SrVal *l = sr_seq(NULL, SR_V_LIST, flat->seq.n);
      for (int j = 0; j < flat->seq.n; j++) sr_seq_push(NULL, l, sr_getattr(I, flat->seq.items[j], "shape"));
      SrBuf b = {0};
      sr_val_repr(&b, l);
      sr_unref(l);
      sr_raise(I, "ValueError", "Array inputs to associative_scan must have the same first dimension. (saw: %s)", b.p);
      sr_buf_free(&b);
      goto out;
    }
  }
  scans = scan(&c, flat);
  if (!scans) goto out;
  if (reverse) {
    SrVal *rv = rev_all(&c, scans);
    if (!rv) goto out;
    sr_unref(scans);
    scans = rv;
  }
  r = sr_pytree_unflatten(c.tree, scans);
out:
  sr_unref(scans);
  sr_unref(flat);
  sr_unref(c.tree);
  return r;
}

void sr_lax_assoc_scan_init(void) {
  sr_def("jax.lax.associative_scan", lax_associative_scan,
         "associative_scan(fn, elems, reverse=False, axis=0): the prefix fn-reductions along axis (JAX's parallel scan)");
}
