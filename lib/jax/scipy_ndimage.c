/* scipy_ndimage.c: jax.scipy.ndimage.map_coordinates (scipy/ndimage.py):
 * nearest (order 0) and linear (order 1) interpolation of an array at
 * coordinates, the modes constant, nearest, wrap, mirror and reflect, in
 * the jit named _map_coordinates (order, mode and cval static), built
 * from the operations JAX's builds it from: per dimension the nodes and
 * weights, the index fixed by the mode, then a gather per corner of the
 * cell, weighted and summed.  Registered by sr_scipy_ndimage_init
 * (jax.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/api.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/objects.h"

enum { M_CONSTANT, M_NEAREST, M_WRAP, M_MIRROR, M_REFLECT, M_N };
static const char *const mode_names[M_N] = {"constant", "nearest", "wrap", "mirror", "reflect"};

typedef struct MapData {
  int order, mode;
  SrVal *cval; /* the static cval, a Python number */
} MapData;

static void map_data_free(void *p) {
  MapData *d = p;
  sr_unref(d->cval);
  free(d);
}

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

#define C1(f, x) sr_nn_call1(s, f, x)
#define OP(op, a, b) sr_nn_op(s, op, a, b)
#define INT(i) sr_nn_int(s, i)

/* _mirror_index_fixer: a triangular wave of half-wavelength size - 1 */
static SrVal *mirror(SrNnScope *s, SrVal *index, int64_t size) {
  int64_t h = size - 1;
  return C1("jax.numpy.abs", OP(SR_OP_SUB, OP(SR_OP_MOD, OP(SR_OP_ADD, index, INT(h)), INT(2 * h)), INT(h)));
}

/* _INDEX_FIXERS[mode](index, size) */
static SrVal *fix_index(SrNnScope *s, int mode, SrVal *index, int64_t size) {
  switch (mode) {
  case M_NEAREST: return sr_nn_call3(s, "jax.numpy.clip", index, INT(0), INT(size - 1));
  case M_WRAP: return OP(SR_OP_MOD, index, INT(size));
  case M_MIRROR: return mirror(s, index, size);
  case M_REFLECT: {
    SrVal *m = mirror(s, OP(SR_OP_ADD, OP(SR_OP_MUL, INT(2), index), INT(1)), 2 * size + 1);
    return sr_nn_call2(s, "jax.numpy.floor_divide", OP(SR_OP_SUB, m, INT(1)), INT(2));
  }
  default: return index;
  }
}

/* lax.round (half away from zero) of a float, an integer as it is */
static SrVal *round_away(SrNnScope *s, SrVal *a) {
  const SrType *t = a ? vtype(s->I, a) : NULL;
  if (!t || sr_dtype_is_int(t->dtype)) return a;
  return C1("jax.lax.round", a);
}

static SrVal *as_int32(SrNnScope *s, SrVal *a) {
  return a ? sr_nn_keep(s, sr_lax_convert(s->I, a, SR_I32, 0, NULL)) : NULL;
}

/* One interpolation node of a dimension: the index fixed by the mode,
   its validity (NULL: always valid) and its weight. */
typedef struct Node {
  SrVal *index, *valid, *weight;
} Node;

static int nodes_of(SrNnScope *s, const MapData *d, SrVal *c, int64_t size, Node *out) {
  SrVal *idx[2], *w[2];
  int n;
  if (d->order == 0) {
    n = 1;
    idx[0] = as_int32(s, round_away(s, c));
    /* coordinate.dtype.type(1): a scalar of the coordinates' dtype, not weak */
    w[0] = c ? sr_nn_typed_scalar(s, 1, vtype(s->I, c)->dtype) : NULL;
  } else {
    n = 2;
    SrVal *lower = C1("jax.numpy.floor", c);
    w[1] = OP(SR_OP_SUB, c, lower);
    w[0] = OP(SR_OP_SUB, INT(1), w[1]);
    idx[0] = as_int32(s, lower);
    idx[1] = OP(SR_OP_ADD, idx[0], INT(1));
  }
  for (int k = 0; k < n; k++) {
    if (!idx[k] || !w[k]) return -1;
    out[k].index = fix_index(s, d->mode, idx[k], size);
    out[k].valid = NULL;
    if (d->mode == M_CONSTANT) {
      /* (0 <= index) & (index < size), in Python's order */
      SrVal *ge = OP(SR_OP_GE, idx[k], INT(0));
      SrVal *lt = OP(SR_OP_LT, idx[k], INT(size));
      out[k].valid = OP(SR_OP_BITAND, ge, lt);
    }
    out[k].weight = w[k];
    if (!out[k].index || (d->mode == M_CONSTANT && !out[k].valid)) return -1;
  }
  return n;
}

static SrVal *map_body(SrInterp *I, SrArgs *a) {
  const MapData *d = sr_current_builtin(I)->data;
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *x = a->v[0];
  const SrType *t = vtype(I, x);
  int nd = t->ndim;
  if (a->n - 1 != nd)
    return sr_raise(I, "ValueError", "coordinates must be a sequence of length input.ndim, but %d != %d", a->n - 1,
                    nd);
  const char *dk = "dtype";
  SrVal *dtv = sr_nn_keep(s, sr_dtype_val(NULL, t->dtype));
  SrVal *cval = sr_nn_call(s, "jax.numpy.asarray", 1, (SrVal **)&d->cval, 1, &dk, &dtv);
  if (!cval) return sr_nn_done(s, NULL);
  Node nodes[SR_MAX_RANK][2];
  int nn[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) {
    SrVal *c = C1("jax.numpy.asarray", a->v[1 + i]);
    if (!c || (nn[i] = nodes_of(s, d, c, t->dims[i].size, nodes[i])) < 0) return sr_nn_done(s, NULL);
  }
  /* itertools.product over the dims' nodes, the last dim fastest */
  int pick[SR_MAX_RANK] = {0};
  SrVal *sum = NULL;
  for (;;) {
    SrNnScope c_ = {I, {0}, 0}, *c = &c_;
    SrVal *ix[SR_MAX_RANK], *valid = NULL, *weight = NULL;
    int all_valid = 1;
    for (int i = 0; i < nd; i++) {
      const Node *n = &nodes[i][pick[i]];
      ix[i] = sr_ref(n->index);
      if (n->valid) {
        all_valid = 0;
        valid = valid ? sr_nn_op(c, SR_OP_BITAND, valid, n->valid) : n->valid;
      }
      weight = weight ? sr_nn_op(c, SR_OP_MUL, weight, n->weight) : n->weight;
    }
    SrVal *key = sr_tuple(NULL, nd, ix);
    const SrLangOps *ops = sr_ops(x);
    SrVal *g = ops && ops->getitem ? sr_nn_keep(c, ops->getitem(I, x, key)) : NULL;
    sr_unref(key);
    if (g && !all_valid) g = sr_nn_call3(c, "jax.numpy.where", valid, g, cval);
    SrVal *term = g && weight ? sr_nn_op(c, SR_OP_MUL, weight, g) : NULL;
    if (term) sum = sum ? sr_nn_op(c, SR_OP_ADD, sum, term) : term;
    /* keep the running sum in the outer scope, drop this corner's */
    SrVal *keep = sum ? sr_nn_keep(s, sr_ref(sum)) : NULL;
    sr_nn_done(c, NULL);
    sum = keep;
    if (!sum) return sr_nn_done(s, NULL);
    int i = nd - 1;
    while (i >= 0 && ++pick[i] == nn[i]) pick[i--] = 0;
    if (i < 0) break;
  }
  if (sr_dtype_is_int(t->dtype)) sum = round_away(s, sum);
  SrVal *r = sum ? sr_nn_keep(s, sr_lax_convert(I, sum, t->dtype, 0, NULL)) : NULL;
  return sr_nn_done(s, r);
}

/* map_coordinates(input, coordinates, order, mode='constant', cval=0.0) */
static SrVal *map_coordinates(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "map_coordinates", "input, coordinates, order, mode=, cval=", p) < 0) return NULL;
  int64_t order;
  if (sr_as_int(I, p[2], "order", &order) < 0) return NULL;
  int mode = M_CONSTANT;
  if (p[3] && p[3]->kind != SR_V_NONE) {
    if (p[3]->kind != SR_V_STR) return sr_raise(I, "TypeError", "map_coordinates: mode must be a string");
    for (mode = 0; mode < M_N; mode++)
      if (p[3]->str.n == strlen(mode_names[mode]) && !memcmp(p[3]->str.s, mode_names[mode], p[3]->str.n)) break;
    if (mode == M_N)
      return sr_raise(I, "NotImplementedError",
                      "jax.scipy.ndimage.map_coordinates does not yet support mode %.*s. Currently supported modes "
                      "are {'constant', 'nearest', 'wrap', 'mirror', 'reflect'}.",
                      (int)p[3]->str.n, p[3]->str.s);
  }
  if (order != 0 && order != 1)
    return sr_raise(I, "NotImplementedError", "jax.scipy.ndimage.map_coordinates currently requires order<=1");
  SrVal *cv = p[4] && p[4]->kind != SR_V_NONE ? p[4] : NULL;
  if (cv && cv->kind != SR_V_INT && cv->kind != SR_V_FLOAT && cv->kind != SR_V_BOOL)
    return sr_raise(I, "TypeError", "map_coordinates: cval must be a number (it is static)");
  if (!sr_is_seq(p[1])) return sr_raise(I, "TypeError", "map_coordinates: coordinates must be a sequence of arrays");
  int n = p[1]->seq.n;
  if (n > SR_MAX_RANK) return sr_raise(I, "ValueError", "map_coordinates: too many coordinate arrays");
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *args[SR_MAX_RANK + 1];
  args[0] = x;
  for (int i = 0; i < n; i++) args[1 + i] = p[1]->seq.items[i];
  MapData *d = sr_xcalloc(1, sizeof *d);
  d->order = (int)order;
  d->mode = mode;
  d->cval = cv ? sr_ref(cv) : sr_float(NULL, 0.0);
  SrVal *b = sr_builtin_with("_map_coordinates", map_body, d, map_data_free);
  SrArgs ja = {n + 1, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, "_map_coordinates", &ja);
  sr_unref(b);
  sr_unref(x);
  return r;
}

void sr_scipy_ndimage_init(void) {
  sr_def("jax.scipy.ndimage.map_coordinates", map_coordinates,
         "map_coordinates(input, coordinates, order, mode='constant', cval=0.0): order 0 or 1 interpolation at the "
         "coordinates, modes constant, nearest, wrap, mirror, reflect (jit[name=_map_coordinates])");
}
