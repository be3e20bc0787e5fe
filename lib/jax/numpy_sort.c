/* numpy_sort.c: sorting and selection -- jax.numpy.sort, argsort,
 * searchsorted (numpy/sorting.py, lax_numpy.py) and jax.lax.sort,
 * sort_key_val, top_k (lax/lax.py), each binding what JAX's binds, in a
 * jit named as JAX's jit-decorated function is.  Registered by
 * sr_jnp_sort_init (jax.h). */
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/array_methods.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "py/objects.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }
static int flag(SrVal *v, int dflt) { return v ? sr_val_truthy(v) : dflt; }

/* lax.sort's bind: sort[dimension is_stable num_keys] of n operands; the
   tuple of results (a new reference). */
static SrVal *bind_sort(SrInterp *I, int n, SrVal **ops, int64_t dim, int stable, int64_t num_keys) {
  return sr_bindv(I, SR_P_sort, n, ops, "dimension", sr_int(NULL, dim), "is_stable", sr_bool(stable), "num_keys",
                  sr_int(NULL, num_keys), NULL);
}

static SrVal *item(SrVal *tup, int i) {
  SrVal *r = tup ? sr_ref(tup->seq.items[i]) : NULL;
  sr_unref(tup);
  return r;
}

/* The sort axis of jnp.sort/argsort: None ravels (the operand replaced). */
static int sort_axis(SrInterp *I, SrVal **x, SrVal *axis_v, int64_t *dim) {
  const SrType *t = vtype(I, *x);
  if (axis_v && axis_v->kind == SR_V_NONE) {
    int64_t n = sr_type_numel(t);
    SrVal *r = sr_lax_reshape(I, *x, &n, 1, NULL);
    if (!r) return -1;
    sr_unref(*x);
    *x = r;
    *dim = 0;
    return 0;
  }
  int64_t axis = -1;
  if (axis_v && sr_as_int(I, axis_v, "axis", &axis) < 0) return -1;
  return sr_api_axis(I, axis, t->ndim, dim);
}

/* core.typeof(x).sharding as a sharding param (NULL with no mesh in
   context, as canonicalize_sharding leaves it). */
static int type_sharding(SrInterp *I, const SrType *t, SrVal **sh) {
  *sh = NULL;
  if (!sr_api_mesh(I)->n) return 0;
  SrVal *ts = sr_type_sharding(I, t);
  int rc = sr_api_canon_sharding(I, ts, "broadcasted_iota", sh);
  sr_unref(ts);
  return rc;
}

typedef struct SortData {
  SrVal *axis; /* borrowed for the call */
  int stable, descending, dtype;
} SortData;

static int kind_order(SrInterp *I, SrVal *kind, SrVal *order, const char *name) {
  if (kind && kind->kind != SR_V_NONE) {
    sr_raise(I, "TypeError",
             "'kind' argument to %s is not supported. Use stable=True or stable=False to specify sort stability.",
             name);
    return -1;
  }
  if (order && order->kind != SR_V_NONE) {
    sr_raise(I, "TypeError", "'order' argument to %s is not supported.", name);
    return -1;
  }
  return 0;
}

static SrVal *sort_body(SrInterp *I, SrArgs *a) {
  SortData *d = sr_current_builtin(I)->data;
  SrVal *x = sr_ref(a->v[0]);
  int64_t dim;
  if (sort_axis(I, &x, d->axis, &dim) < 0) {
    sr_unref(x);
    return NULL;
  }
  SrVal *r = item(bind_sort(I, 1, &x, dim, d->stable, 1), 0);
  sr_unref(x);
  if (r && d->descending) {
    SrVal *v = sr_lax_rev(I, r, &dim, 1);
    sr_unref(r);
    r = v;
  }
  return r;
}

/* jnp.sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False) */
static SrVal *jnp_sort(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "sort", "a, axis=, *, kind=, order=, stable=, descending=", p) < 0) return NULL;
  if (kind_order(I, p[2], p[3], "sort") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SortData *d = sr_xcalloc(1, sizeof *d);
  d->axis = p[1];
  d->stable = flag(p[4], 1);
  d->descending = flag(p[5], 0);
  SrVal *r = sr_api_jit(I, "sort", sort_body, d, 1, &x);
  sr_unref(x);
  return r;
}

static SrVal *argsort_body(SrInterp *I, SrArgs *a) {
  SortData *d = sr_current_builtin(I)->data;
  SrVal *x = sr_ref(a->v[0]);
  int64_t dim;
  if (sort_axis(I, &x, d->axis, &dim) < 0) {
    sr_unref(x);
    return NULL;
  }
  const SrType *t = vtype(I, x);
  SrDtype idt = d->dtype >= 0 ? (SrDtype)d->dtype
                : t->dims[dim].size > INT32_MAX ? SR_I64
                : I->jax->enable_x64 ? SR_I64 : SR_I32;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  SrVal *sh = NULL, *iota = NULL, *r = NULL;
  if (type_sharding(I, t, &sh) < 0) return sr_unref(x), NULL;
  iota = sr_lax_iota(I, idt, shape, t->ndim, (int)dim, sh);
  if (iota && d->descending && d->stable) {
    SrVal *xr = sr_lax_rev(I, x, &dim, 1);
    SrVal *ir = xr ? sr_lax_rev(I, iota, &dim, 1) : NULL;
    sr_unref(x);
    sr_unref(iota);
    x = xr;
    iota = ir;
  }
  if (iota) {
    SrVal *ops[2] = {x, iota};
    r = item(bind_sort(I, 2, ops, dim, d->stable, 1), 1);
  }
  if (r && d->descending) {
    SrVal *v = sr_lax_rev(I, r, &dim, 1);
    sr_unref(r);
    r = v;
  }
  sr_unref(sh);
  sr_unref(iota);
  sr_unref(x);
  return r;
}

/* jnp.argsort(a, axis=-1, *, kind=None, order=None, stable=True,
   descending=False, dtype=None) */
static SrVal *jnp_argsort(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "argsort", "a, axis=, *, kind=, order=, stable=, descending=, dtype=", p) < 0) return NULL;
  if (kind_order(I, p[2], p[3], "argsort") < 0) return NULL;
  int dt;
  if (sr_dtype_arg(I, p[6], &dt, "argsort") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SortData *d = sr_xcalloc(1, sizeof *d);
  d->axis = p[1];
  d->stable = flag(p[4], 1);
  d->descending = flag(p[5], 0);
  d->dtype = dt;
  SrVal *r = sr_api_jit(I, "argsort", argsort_body, d, 1, &x);
  sr_unref(x);
  return r;
}

/* lax.sort(operand, dimension=-1, is_stable=True, num_keys=1): one array,
   or a sequence of them (a tuple back). */
static SrVal *lax_sort(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "sort", "operand, dimension=, is_stable=, num_keys=", p) < 0) return NULL;
  int64_t dim = -1, nk = 1;
  if ((p[1] && sr_as_int(I, p[1], "dimension", &dim) < 0) || (p[3] && sr_as_int(I, p[3], "num_keys", &nk) < 0))
    return NULL;
  int stable = flag(p[2], 1);
  if (!sr_is_seq(p[0])) {
    if (nk != 1) return sr_raise(I, "ValueError", "num_keys=%lld must equal 1 for a single operand.", (long long)nk);
    SrVal *x = arr(I, p[0]);
    if (!x || sr_api_axis(I, dim, vtype(I, x)->ndim, &dim) < 0) {
      sr_unref(x);
      return NULL;
    }
    SrVal *r = item(bind_sort(I, 1, &x, dim, stable, 1), 0);
    sr_unref(x);
    return r;
  }
  int n = p[0]->seq.n;
  if (n == 0) return sr_raise(I, "TypeError", "Sort requires at least one operand");
  if (nk < 1 || nk > n)
    return sr_raise(I, "ValueError", "num_keys=%lld must be between 1 and len(operand)=%d", (long long)nk, n);
  if (n > 64) return sr_raise(I, "ValueError", "too many operands for sort");
  SrVal *ops[64];
  for (int i = 0; i < n; i++)
    if (!(ops[i] = arr(I, p[0]->seq.items[i]))) {
      for (int k = 0; k < i; k++) sr_unref(ops[k]);
      return NULL;
    }
  SrVal *r = NULL;
  if (sr_api_axis(I, dim, vtype(I, ops[0])->ndim, &dim) == 0 && sr_auto_insert_reshard(I, n, ops) == 0)
    r = bind_sort(I, n, ops, dim, stable, nk);
  for (int i = 0; i < n; i++) sr_unref(ops[i]);
  return r;
}

/* lax.sort_key_val(keys, values, dimension=-1, is_stable=True) */
static SrVal *lax_sort_key_val(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "sort_key_val", "keys, values, dimension=, is_stable=", p) < 0) return NULL;
  int64_t dim = -1;
  if (p[2] && sr_as_int(I, p[2], "dimension", &dim) < 0) return NULL;
  SrVal *ops[2] = {arr(I, p[0]), NULL};
  if (ops[0]) ops[1] = arr(I, p[1]);
  SrVal *r = NULL;
  if (ops[1] && sr_api_axis(I, dim, vtype(I, ops[0])->ndim, &dim) == 0) r = bind_sort(I, 2, ops, dim, flag(p[3], 1), 1);
  sr_unref(ops[0]);
  sr_unref(ops[1]);
  return r;
}

/* lax.top_k(operand, k, *, axis=-1, is_stable=True): (values, indices) */
static SrVal *lax_top_k(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "top_k", "operand, k, *, axis=, is_stable=", p) < 0) return NULL;
  int64_t k, axis = -1;
  if (sr_as_int(I, p[1], "k", &k) < 0 || (p[2] && sr_as_int(I, p[2], "axis", &axis) < 0)) return NULL;
  if (k < 0) return sr_raise(I, "ValueError", "k argument to top_k must be nonnegative, got %lld", (long long)k);
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = NULL;
  if (sr_api_axis(I, axis, vtype(I, x)->ndim, &axis) == 0)
    r = sr_bindv(I, SR_P_top_k, 1, &x, "k", sr_int(NULL, k), "axis", sr_int(NULL, axis), "is_stable",
                 sr_bool(flag(p[3], 1)), NULL);
  sr_unref(x);
  return r;
}

/* lax.approx_max_k / approx_min_k(operand, k, reduction_dimension=-1,
   recall_target=0.95, reduction_input_size_override=-1,
   aggregate_to_topk=True): an approx_top_k equation */
static SrVal *approx_k(SrInterp *I, SrArgs *a, const char *name, int is_max) {
  SrVal *p[6];
  if (sr_args_parse(I, a, name,
                    "operand, k, reduction_dimension=, recall_target=, reduction_input_size_override=, "
                    "aggregate_to_topk=",
                    p) < 0)
    return NULL;
  int64_t k, rd = -1, over = -1;
  double recall = 0.95;
  if (sr_as_int(I, p[1], "k", &k) < 0 || (p[2] && sr_as_int(I, p[2], "reduction_dimension", &rd) < 0) ||
      (p[4] && sr_as_int(I, p[4], "reduction_input_size_override", &over) < 0))
    return NULL;
  if (p[3]) {
    if (p[3]->kind == SR_V_FLOAT) recall = p[3]->f;
    else if (p[3]->kind == SR_V_INT) recall = (double)p[3]->i;
    else return sr_raise(I, "TypeError", "recall_target must be a float");
  }
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_approx_top_k, 1, &x, "k", sr_int(NULL, k), "reduction_dimension", sr_int(NULL, rd),
                      "recall_target", sr_float(NULL, recall), "is_max_k", sr_bool(is_max),
                      "reduction_input_size_override", sr_int(NULL, over), "aggregate_to_topk",
                      sr_bool(flag(p[5], 1)), NULL);
  sr_unref(x);
  return r;
}
static SrVal *lax_approx_max_k(SrInterp *I, SrArgs *a) { return approx_k(I, a, "approx_max_k", 1); }
static SrVal *lax_approx_min_k(SrInterp *I, SrArgs *a) { return approx_k(I, a, "approx_min_k", 0); }

/* jnp.sort_complex: lax.sort along the last axis, as complex */
static SrVal *sort_complex_body(SrInterp *I, SrArgs *a) {
  SrVal *x = a->v[0];
  SrVal *sorted = sr_call1(I, sr_lookup_qualname("jax.lax.sort"), x);
  const SrType *t = sorted ? vtype(I, sorted) : NULL;
  if (!t) return sr_unref(sorted), NULL;
  SrVal *r = sr_lax_convert(I, sorted, sr_dtype_complex_of(t->dtype), 0, NULL);
  sr_unref(sorted);
  return r;
}

static SrVal *jnp_sort_complex(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "sort_complex", "a", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = sr_api_jit(I, "sort_complex", sort_complex_body, NULL, 1, &x);
  sr_unref(x);
  return r;
}

void sr_jnp_sort_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.sort", jnp_sort,
       "sort(a, axis=-1, *, stable=True, descending=False): jit[name=sort] of lax.sort (rev when descending)"},
      {"jax.numpy.argsort", jnp_argsort,
       "argsort(a, axis=-1, *, stable=True, descending=False, dtype=None): jit[name=argsort], a sort of (a, iota)"},
      {"jax.numpy.sort_complex", jnp_sort_complex, "sort_complex(a): jit[name=sort_complex], a sorted along its last axis, as complex"},
      {"jax.lax.sort", lax_sort, "sort(operand, dimension=-1, is_stable=True, num_keys=1): sort of one or more operands"},
      {"jax.lax.sort_key_val", lax_sort_key_val,
       "sort_key_val(keys, values, dimension=-1, is_stable=True): sort of (keys, values)"},
      {"jax.lax.top_k", lax_top_k, "top_k(operand, k, *, axis=-1, is_stable=True): (values, int32 indices)"},
      {"jax.lax.approx_max_k", lax_approx_max_k,
       "approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1, "
       "aggregate_to_topk=True): (values, int32 indices) of the k largest (exact here, as XLA on CPU)"},
      {"jax.lax.approx_min_k", lax_approx_min_k,
       "approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1, "
       "aggregate_to_topk=True): (values, int32 indices) of the k smallest (exact here, as XLA on CPU)"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
