/* lax_small18.c: small jax.lax functions of lax.py and slicing.py,
 * written with the same calls in the same order as JAX's Python so that
 * their jaxprs are JAX's: reduce (its monoid fast paths, and reduce_p with
 * the computation's jaxpr otherwise), batch_matmul,
 * index_take, empty, broadcast_shapes, and the names JAX exports only as types
 * (DotDimensionNumbers, ConvGeneralDilatedDimensionNumbers).  Registered
 * by sr_lax_small18_init (jax.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kern.h"
#include "jax/api.h"
#include "jax/builtins_exec.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/np_host.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

static SrVal *int_tuple(SrNnScope *s, int n, const int64_t *v) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_int(NULL, v[i]));
  return sr_nn_keep(s, t);
}

/* ---- reduce ---- */

/* The scalar value of a concrete init value (a Python number or a concrete
   0-d array) in *f (and *i for integers); 0 when it is not one. */
static int concrete_scalar(SrInterp *I, SrVal *v, const SrType *t, double *f, int64_t *i) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *i = v->i;
    *f = (double)v->i;
    return 1;
  }
  if (v->kind == SR_V_FLOAT) {
    *f = v->f;
    *i = 0;
    return 1;
  }
  if (sr_is_ndarray(v) || sr_np_is_scalar(v)) {
    /* a numpy value is concrete (core.is_concrete) */
    SrVal *x = sr_jnp_asarray(I, v, -1);
    int rc = x && sr_array_of(x) ? concrete_scalar(I, x, t, f, i) : 0;
    if (!x) sr_exc_clear(I);
    sr_unref(x);
    return rc;
  }
  SrArrayObj *o = sr_array_of(v);
  if (!o || o->kind != SR_AV_CONCRETE || t->ndim != 0 || sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) return 0;
  SrArray *a = sr_concrete_of(I, v, NULL);
  if (!a) return 0;
  void *h = sr_concrete_host_data(I, a);
  sr_array_unref(a);
  if (!h) {
    sr_exc_clear(I);
    return 0;
  }
  *f = sr_kern_get_f64(t->dtype, h);
  *i = sr_kern_get_i64(t->dtype, h);
  free(h);
  return 1;
}

/* lax._get_monoid_reducer: the reduction primitive lax.reduce may use for
   computation with this init value, or -1. */
static int monoid_reducer(SrInterp *I, SrVal *computation, SrVal *init) {
  const SrType *t = vtype(I, init);
  double f;
  int64_t iv;
  if (!t || !concrete_scalar(I, init, t, &f, &iv)) return -1;
  SrDtype dt = t->dtype;
  int is_float = sr_dtype_is_float(dt), intlike = dt == SR_BOOL || sr_dtype_is_int(dt);
  int is_uint = sr_dtype_kind(dt) == SR_DK_UINT;
  int bits = dt == SR_BOOL ? 1 : sr_dtype_info(dt)->bits;
  /* the value as the init's dtype holds it (np.equal(val, identity)) */
  int64_t val = is_float ? 0 : dt == SR_BOOL ? iv != 0 : iv;
  static const struct {
    const char *fn;
    int prim, op;
  } ops[] = {{"jax.lax.add", SR_P_reduce_sum, 0},    {"jax.lax.mul", SR_P_reduce_prod, 1},
             {"jax.lax.bitwise_or", SR_P_reduce_or, 2}, {"jax.lax.bitwise_and", SR_P_reduce_and, 3},
             {"jax.lax.bitwise_xor", SR_P_reduce_xor, 4}, {"jax.lax.max", SR_P_reduce_max, 5},
             {"jax.lax.min", SR_P_reduce_min, 6}};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    if (computation != sr_lookup_qualname(ops[k].fn)) continue;
    switch (ops[k].op) {
    case 0: return (is_float ? f == 0 : val == 0) ? ops[k].prim : -1;
    case 1: return (is_float ? f == 1 : val == 1) ? ops[k].prim : -1;
    case 2:
    case 4: return intlike && val == 0 ? ops[k].prim : -1;
    case 3: {
      /* np.array(-1).astype(dtype): all bits set */
      int64_t ones = dt == SR_BOOL ? 1 : is_uint ? (bits == 64 ? -1 : (int64_t)((1ull << bits) - 1)) : -1;
      return intlike && val == ones ? ops[k].prim : -1;
    }
    case 5:
    case 6: {
      int mx = ops[k].op == 5;
      if (is_float) return f == (mx ? -INFINITY : INFINITY) ? ops[k].prim : -1;
      if (dt == SR_BOOL) return val == (mx ? 0 : 1) ? ops[k].prim : -1;
      int64_t lo = is_uint ? 0 : bits == 64 ? INT64_MIN : -(int64_t)(1ull << (bits - 1));
      int64_t hi = is_uint ? (bits == 64 ? -1 : (int64_t)((1ull << bits) - 1))
                           : bits == 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
      return val == (mx ? lo : hi) ? ops[k].prim : -1;
    }
    }
  }
  return -1;
}

static int weakly_typed(SrInterp *I, SrVal *v) {
  const SrType *t = vtype(I, v);
  return t && t->weak;
}

/* repr(f) as JAX prints a function param: the address masked. */
static SrVal *masked_repr(SrVal *f) {
  SrBuf b = SR_BUF_INIT, m = SR_BUF_INIT;
  sr_val_repr(&b, f);
  const char *s = sr_buf_str(&b), *at = strstr(s, " at 0x");
  if (at) {
    sr_buf_putn(&m, s, (size_t)(at - s) + 6);
    const char *q = at + 6;
    while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')) q++;
    sr_buf_puts(&m, "XXXXXXXXXXXX");
    sr_buf_puts(&m, q);
  } else if (strncmp(s, "<function ", 10) == 0 && b.len && s[b.len - 1] == '>') {
    sr_buf_putn(&m, s, b.len - 1);
    sr_buf_puts(&m, " at 0xXXXXXXXXXXXX>");
  } else {
    sr_buf_puts(&m, s);
  }
  SrVal *w = sr_word(NULL, sr_buf_str(&m), m.len);
  sr_buf_free(&b);
  sr_buf_free(&m);
  return w;
}

/* The general path of lax.reduce: the computation traced on the init
   values' avals (_variadic_reduction_jaxpr) and reduce_p bound. */
static SrVal *reduce_general(SrInterp *I, SrVal *ops, SrVal *flat_ops, SrVal *inits, SrVal *flat_inits,
                             SrVal *computation, const int64_t *dims, int nd) {
  (void)ops;
  int n = flat_inits->seq.n;
  const SrType **types = sr_xcalloc((size_t)n + 1, sizeof *types);
  for (int i = 0; i < n; i++)
    if (!(types[i] = vtype(I, flat_inits->seq.items[i]))) {
      free(types);
      return sr_raise(I, "TypeError", "Value %s is not a valid JAX type", sr_val_kind_name(flat_inits->seq.items[i]));
    }
  SrVal *avals = sr_api_abstract_like(inits, types, n);
  free(types);
  SrVal *args[2] = {avals, avals}, *out_tree = NULL, *captured = NULL, *r = NULL;
  SrJaxpr *j = sr_trace_fn(I, computation, 2, args, 0, NULL, NULL, SR_TRACE_CONSTVARS, &out_tree, &captured);
  sr_unref(avals);
  if (j && captured && captured->seq.n > 0) {
    sr_raise(I, "NotImplementedError",
             "Reduction computations can't close over Tracers. Please open an issue at https://github.com/jax-ml/jax.");
  } else if (j && (int)j->nout != n) {
    sr_raise(I, "TypeError", "reduce's computation must return %d arrays, one per operand, got %u", n, j->nout);
  } else if (j) {
    SrVal **in = sr_xcalloc(2 * (size_t)n, sizeof *in);
    for (int i = 0; i < n; i++) {
      in[i] = sr_ref(flat_ops->seq.items[i]);
      in[n + i] = sr_ref(flat_inits->seq.items[i]);
    }
    if (sr_auto_insert_reshard(I, n, in) == 0 && sr_auto_insert_reshard(I, n, in + n) == 0) {
      SrVal *out = sr_bindv(I, SR_P_reduce, 2 * n, in, "computation", masked_repr(computation), "dimensions",
                            sr_int_tuple(dims, nd), "jaxpr", sr_jaxpr_val(NULL, j), NULL);
      if (out) r = sr_pytree_unflatten(out_tree, out);
      sr_unref(out);
    }
    for (int i = 0; i < 2 * n; i++) sr_unref(in[i]);
    free(in);
  }
  if (j) sr_program_unref(j->prog);
  sr_unref(out_tree);
  sr_unref(captured);
  return r;
}

/* lax.reduce(operands, init_values, computation, dimensions, out_sharding=None) */
static SrVal *lax_reduce(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "reduce", "operands, init_values, computation, dimensions, out_sharding=", p) < 0)
    return NULL;
  SrVal *ops = p[0], *inits = p[1];
  int64_t dims[SR_MAX_RANK];
  int nd;
  if (sr_ints_arg(I, p[3], dims, &nd, "dimensions") < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *fo = sr_nn_keep(&s, sr_pytree_flatten(I, ops));
  SrVal *fi = fo ? sr_nn_keep(&s, sr_pytree_flatten(I, inits)) : NULL;
  if (!fi) return sr_nn_done(&s, NULL);
  /* the structures printed from numbered copies, whose leaves are distinct */
  SrBuf to = SR_BUF_INIT, ti = SR_BUF_INIT;
  int k = 0;
  SrVal *no = sr_nn_keep(&s, sr_pytree_numbered(ops, &k));
  k = 0;
  SrVal *ni = sr_nn_keep(&s, sr_pytree_numbered(inits, &k));
  sr_treedef_str(&to, no, sr_pytree_children);
  sr_treedef_str(&ti, ni, sr_pytree_children);
  if (strcmp(sr_buf_str(&to), sr_buf_str(&ti)) != 0)
    sr_raise(I, "ValueError", "Operands must have the same tree structure as init_values: %s vs. %s", sr_buf_str(&to),
             sr_buf_str(&ti));
  sr_buf_free(&to);
  sr_buf_free(&ti);
  if (I->exc) return sr_nn_done(&s, NULL);
  if (fo->seq.n != fi->seq.n)
    return sr_nn_done(&s, sr_raise(I, "ValueError", "Must have same total number of operands as init_values:  %d vs. %d",
                                   fo->seq.n, fi->seq.n));
  SrVal *x = fo->seq.n == 1 ? fo->seq.items[0] : NULL, *init = fi->seq.n == 1 ? fi->seq.items[0] : NULL;
  int prim = x ? monoid_reducer(I, p[2], init) : -1;
  if (I->exc) return sr_nn_done(&s, NULL);
  if (prim < 0) return sr_nn_done(&s, sr_nn_keep(&s, reduce_general(I, ops, fo, inits, fi, p[2], dims, nd)));
  int given_sh = sr_nn_given(p[4]);
  if (given_sh && prim != SR_P_reduce_sum) return sr_nn_done(&s, sr_raise(I, "NotImplementedError", "%s", ""));
  int weak = weakly_typed(I, x) && weakly_typed(I, init);
  SrVal *xa = sr_nn_keep(&s, sr_jnp_asarray(I, x, -1));
  if (!xa) return sr_nn_done(&s, NULL);
  SrVal *sh = NULL;
  if (given_sh && sr_api_canon_sharding(I, p[4], "reduce_sum", &sh) < 0) return sr_nn_done(&s, NULL);
  sr_nn_keep(&s, sh);
  SrVal *out = sr_nn_keep(&s, sr_lax_reduce(I, prim, xa, dims, nd, sh));
  if (!out) return sr_nn_done(&s, NULL);
  /* _convert_element_type(out, weak_type=weak_type) */
  out = sr_nn_keep(&s, sr_lax_convert(I, out, vtype(I, out)->dtype, weak, NULL));
  /* the fast path returns the array itself, not the operands' tree */
  return sr_nn_done(&s, out);
}

/* ---- batch_matmul ---- */

static SrVal *lax_batch_matmul(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "batch_matmul", "lhs, rhs, precision=", p) < 0) return NULL;
  const SrType *l = vtype(I, p[0]), *r = vtype(I, p[1]);
  if (!l || !r) return sr_raise(I, "AttributeError", "'%s' object has no attribute 'ndim'", sr_val_kind_name(l ? p[1] : p[0]));
  if ((l->ndim < r->ndim ? l->ndim : r->ndim) < 2)
    return sr_raise(I, "ValueError", "Arguments to batch_matmul must be at least 2D, got %d, %d", l->ndim, r->ndim);
  if (l->ndim != r->ndim)
    return sr_raise(I, "ValueError", "Arguments to batch_matmul must have same ndim, got %d, %d", l->ndim, r->ndim);
  SrNnScope s = {I, {0}, 0};
  int64_t lc = l->ndim - 1, rc = r->ndim - 2, batch[SR_MAX_RANK];
  for (int i = 0; i < l->ndim - 2; i++) batch[i] = i;
  SrVal *b = int_tuple(&s, l->ndim - 2, batch);
  SrVal *c = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, 2));
  sr_seq_push(NULL, c, sr_ref(int_tuple(&s, 1, &lc)));
  sr_seq_push(NULL, c, sr_ref(int_tuple(&s, 1, &rc)));
  SrVal *bb = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, 2));
  sr_seq_push(NULL, bb, sr_ref(b));
  sr_seq_push(NULL, bb, sr_ref(b));
  SrVal *dn = sr_nn_keep(&s, sr_seq(NULL, SR_V_TUPLE, 2));
  sr_seq_push(NULL, dn, sr_ref(c));
  sr_seq_push(NULL, dn, sr_ref(bb));
  SrVal *v[3] = {p[0], p[1], dn};
  const char *kw[1] = {"precision"};
  SrVal *kv[1] = {p[2]};
  return sr_nn_done(&s, sr_nn_call(&s, "jax.lax.dot_general", 3, v, 1, kw, kv));
}

/* ---- index_take ---- */

static SrVal *lax_index_take(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "index_take", "src, idxs, axes", p) < 0) return NULL;
  int64_t axes[SR_MAX_RANK];
  int nax;
  if (sr_ints_arg(I, p[2], axes, &nax, "axes") < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *src = sr_nn_call1(&s, "jax.numpy.asarray", p[0]);
  SrVal *idxs = sr_nn_keep(&s, sr_iterate(I, p[1]));
  if (!src || !idxs) return sr_nn_done(&s, NULL);
  const SrType *st = vtype(I, src);
  SrVal *parts = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, idxs->seq.n));
  int64_t one = 1;
  for (int i = 0; i < idxs->seq.n; i++) {
    SrVal *e = sr_nn_call2(&s, "jax.lax.expand_dims", idxs->seq.items[i], int_tuple(&s, 1, &one));
    if (!e) return sr_nn_done(&s, NULL);
    sr_seq_push(NULL, parts, sr_ref(e));
  }
  SrVal *indices = sr_nn_call2(&s, "jax.lax.concatenate", parts, sr_nn_int(&s, 1));
  if (!indices) return sr_nn_done(&s, NULL);
  const SrType *it = vtype(I, indices);
  int64_t sizes[SR_MAX_RANK], lead[SR_MAX_RANK];
  for (int i = 0; i < nax; i++) {
    if (axes[i] < 0 || axes[i] >= st->ndim)
      return sr_nn_done(&s, sr_raise(I, "IndexError", "tuple index out of range"));
    sizes[i] = st->dims[axes[i]].size;
  }
  for (int i = 0; i < it->ndim - 1; i++) lead[i] = i;
  SrVal *np_sizes = sr_nn_call1(&s, "numpy.array", int_tuple(&s, nax, sizes));
  SrVal *max_idx = sr_nn_call2(&s, "jax.lax.expand_dims", np_sizes, int_tuple(&s, it->ndim - 1, lead));
  indices = max_idx ? sr_nn_op(&s, SR_OP_MOD, indices, max_idx) : NULL;
  if (!indices) return sr_nn_done(&s, NULL);
  it = vtype(I, indices);
  int64_t slice[SR_MAX_RANK], offset[SR_MAX_RANK];
  for (int i = 0; i < st->ndim; i++) slice[i] = st->dims[i].size;
  for (int i = 0; i < nax; i++) slice[axes[i]] = 1;
  int noff = (int)(st->ndim - it->dims[1].size);
  for (int i = 0; i < noff; i++) offset[i] = i + 1;
  const char *dkw[3] = {"offset_dims", "collapsed_slice_dims", "start_index_map"};
  SrVal *dkv[3] = {int_tuple(&s, noff < 0 ? 0 : noff, offset), int_tuple(&s, nax, axes), int_tuple(&s, nax, axes)};
  SrVal *dn = sr_nn_call(&s, "jax.lax.GatherDimensionNumbers", 0, NULL, 3, dkw, dkv);
  if (!dn) return sr_nn_done(&s, NULL);
  SrVal *v[2] = {src, indices};
  const char *kw[2] = {"dimension_numbers", "slice_sizes"};
  SrVal *kv[2] = {dn, int_tuple(&s, st->ndim, slice)};
  return sr_nn_done(&s, sr_nn_call(&s, "jax.lax.gather", 2, v, 2, kw, kv));
}

/* ---- empty ---- */

/* lax.empty(shape, dtype, *, out_sharding=None): empty_p with the shape
   as given (an int stays an int in the params, as JAX's does). */
static SrVal *lax_empty(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "empty", "shape, dtype, *, out_sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd, dt;
  if (sr_shape_arg(I, p[0], shape, &nd, "shape") < 0 || sr_dtype_arg(I, p[1], &dt, "lax.empty") < 0) return NULL;
  if (dt < 0) return sr_raise(I, "TypeError", "Cannot interpret 'None' as a data type");
  SrVal *sh = NULL;
  if (sr_nn_given(p[2]) && sr_api_canon_sharding(I, p[2], "lax.empty", &sh) < 0) return NULL;
  SrVal *sv = p[0]->kind == SR_V_INT || p[0]->kind == SR_V_TUPLE ? sr_ref(p[0]) : sr_int_tuple(shape, nd);
  return sr_bindv(I, SR_P_empty, 0, NULL, "dtype", sr_dtype_val(NULL, (SrDtype)dt), "out_sharding",
                  sh ? sh : sr_none(), "shape", sv, NULL);
}

/* ---- composite ---- */

/* lax.composite(decomposition, name, version=0): the function that binds
   composite_p, whose jaxpr is the decomposition's on the arguments (the
   keyword arguments fixed into it as the attributes) */
typedef struct Composite {
  SrVal *fn;
  char *name;
  int64_t version;
} Composite;

static void composite_free(void *d) {
  Composite *c = d;
  sr_unref(c->fn);
  free(c->name);
  free(c);
}

static int is_tracer(const SrVal *v) {
  const SrArrayObj *o = sr_array_of(v);
  return o && o->kind != SR_AV_CONCRETE;
}

static SrVal *composite_call(SrInterp *I, SrArgs *a) {
  Composite *c = sr_current_builtin(I)->data;
  for (int i = 0; i < a->nkw; i++)
    if (is_tracer(a->kwv[i]))
      return sr_raise(I, "UnexpectedTracerError",
                      "Found a JAX Tracer as an attribute in the decomposition for the composite op '%s'. This means "
                      "that the decomposition function closes over a value that is involved in a JAX transformation. "
                      "Any values that aren't explicitly known at compile time must be explicitly passed as arguments "
                      "to the composite.\n\nNote: If you are passing jax arrays as attributes, use numpy arrays "
                      "instead.",
                      c->name);
  SrVal *out_tree = NULL, *captured = NULL, *r = NULL;
  SrJaxpr *j = sr_trace_fn(I, c->fn, a->n, a->v, a->nkw, a->kw, a->kwv, SR_TRACE_SEPARATE_CONSTS, &out_tree, &captured);
  if (!j) return NULL;
  SrVal *in = sr_seq(NULL, SR_V_LIST, 0);
  int bad = 0;
  for (int i = 0; captured && i < captured->seq.n; i++) {
    bad |= is_tracer(captured->seq.items[i]);
    sr_seq_push(NULL, in, sr_ref(captured->seq.items[i]));
  }
  for (int i = 0; i < a->n && !bad; i++) {
    SrVal *l = sr_pytree_flatten(I, a->v[i]);
    for (int k = 0; l && k < l->seq.n; k++) sr_seq_push(NULL, in, sr_ref(l->seq.items[k]));
    if (!l) bad = -1;
    sr_unref(l);
  }
  if (bad > 0)
    sr_raise(I, "UnexpectedTracerError",
             "Found a JAX Tracer as a constant in the decomposition for the composite op '%s'. This means that the "
             "decomposition function closes over a value that is involved in a JAX transformation. Any values that "
             "aren't explicitly known at compile time must be explicitly passed as arguments to the composite.",
             c->name);
  if (!bad) {
    /* attributes: (key, leaves, treedef) per keyword argument, in order */
    SrVal *attrs = sr_seq(NULL, SR_V_TUPLE, a->nkw);
    for (int i = 0; i < a->nkw && attrs; i++) {
      SrVal *l = sr_pytree_flatten_any(I, a->kwv[i]);
      if (!l) {
        sr_unref(attrs);
        attrs = NULL;
        break;
      }
      SrBuf tb = SR_BUF_INIT;
      int k = 0;
      SrVal *num = sr_pytree_numbered(a->kwv[i], &k);
      sr_treedef_str(&tb, num, sr_pytree_children);
      sr_unref(num);
      SrVal *lt = sr_seq(NULL, SR_V_TUPLE, l->seq.n);
      for (int q = 0; q < l->seq.n; q++) sr_seq_push(NULL, lt, sr_ref(l->seq.items[q]));
      sr_unref(l);
      SrVal *e = sr_seq(NULL, SR_V_TUPLE, 3);
      sr_seq_push(NULL, e, sr_str(NULL, a->kw[i], strlen(a->kw[i])));
      sr_seq_push(NULL, e, lt);
      sr_seq_push(NULL, e, sr_word(NULL, sr_buf_str(&tb), tb.len));
      sr_buf_free(&tb);
      sr_seq_push(NULL, attrs, e);
    }
    if (attrs) {
      SrVal *out = sr_bindv(I, SR_P_composite, in->seq.n, in->seq.items, "attributes", attrs, "jaxpr",
                            sr_jaxpr_val(NULL, j), "name", sr_str(NULL, c->name, strlen(c->name)), "version",
                            sr_int(NULL, c->version), NULL);
      if (out) r = sr_pytree_unflatten(out_tree, out);
      sr_unref(out);
    }
  }
  sr_unref(in);
  sr_program_unref(j->prog);
  sr_unref(out_tree);
  sr_unref(captured);
  return r;
}

static SrVal *lax_composite(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "composite", "decomposition, name, version=", p) < 0) return NULL;
  const char *name = sr_as_str(I, p[1], "name");
  if (!name) return NULL;
  int64_t version = 0;
  if (p[2] && sr_as_int(I, p[2], "version", &version) < 0) return NULL;
  Composite *c = sr_xcalloc(1, sizeof *c);
  c->fn = sr_ref(p[0]);
  c->name = sr_xstrdup(name);
  c->version = version;
  return sr_builtin_with(sr_callable_name(p[0]), composite_call, c, composite_free);
}

void sr_lax_small18_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.lax.reduce", lax_reduce,
       "reduce(operands, init_values, computation, dimensions, out_sharding=None): XLA's Reduce of pytrees of "
       "operands by computation; lax.add, lax.mul, lax.max, lax.min and the bitwise ops with their identity become "
       "reduce_sum, reduce_prod, ..."},
      {"jax.lax.batch_matmul", lax_batch_matmul,
       "batch_matmul(lhs, rhs, precision=None): matrix products over the leading batch dimensions"},
      {"jax.lax.empty", lax_empty,
       "empty(shape, dtype, *, out_sharding=None): an array whose values are left unset (zeros on CPU)"},
      {"jax.lax.composite", lax_composite,
       "composite(decomposition, name, version=0): the function that binds composite_p with the decomposition's "
       "jaxpr, named name (its keyword arguments the attributes); no JVP rule"},
      {"jax.lax.index_take", lax_index_take,
       "index_take(src, idxs, axes): src at the indices idxs along axes (a gather, the indices wrapped)"},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  /* names JAX exports as type aliases: their reprs */
  static const char dot_dn[] =
      "tuple[tuple[typing.Sequence[int], typing.Sequence[int]], tuple[typing.Sequence[int], typing.Sequence[int]]]";
  sr_register("jax.lax.DotDimensionNumbers", sr_word(NULL, dot_dn, sizeof dot_dn - 1));
  static const char conv_dn[] =
      "typing.Union[tuple[str, str, str], jax._src.lax.convolution.ConvDimensionNumbers, NoneType]";
  sr_register("jax.lax.ConvGeneralDilatedDimensionNumbers", sr_word(NULL, conv_dn, sizeof conv_dn - 1));
}
