/* sort.c: the rules of sort and top_k that the structural family leaves
 * (lax/lax.py's sort_p and top_k_p): sort's eval and JVP rules (its type
 * and batch rules are in structural.c, with its row), and every rule of
 * top_k, and every rule of tile (lax.tile's tile_p).  Registered by sr_lax_sort_init (lax/lax.h says what a family
 * file holds and uses).
 *
 * The order is XLA's for the comparator JAX builds (_sort_lt_comparator
 * over _operands_to_keys): floats compare as _canonicalize_float_for_sort
 * makes them (-0.0 equals 0.0, every NaN equals every other and sorts
 * last), complex numbers by real part then imaginary part, the keys
 * lexicographically with the first primary.  The sort is stable (an
 * unstable sort may be). */
#include "lax/lax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ad/batch.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "exec/kern.h"
#include "util/intern.h"

/* ==== shared helpers ==== */

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

static int64_t param_int(const SrEqn *e, const char *key, int64_t dflt) {
  SrVal *v = param(e, key);
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? v->i : dflt;
}

/* x laid out as the output layout l says, but whole along `axis`. */
static SrArray *axis_operand(SrEvalCtx *cx, SrArray *x, const SrMesh *m, const SrType *l, int axis) {
  SrTypeBuilder b;
  sr_type_builder(&b, x->layout);
  for (int i = 0; i < b.ndim; i++) {
    SrDim *d = &b.dims[i];
    d->nax = i == axis ? 0 : l->dims[i].nax;
    if (i != axis) memcpy(d->ax, l->dims[i].ax, SR_MAX_DIM_AXES);
    if (d->nax) b.mesh = l->mesh;
  }
  return sr_redistribute(cx, x, m, sr_type_get(&b));
}

static const SrType *without_dim_axes(const SrType *l, int dim) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  b.dims[dim].nax = 0;
  return sr_type_get(&b);
}

/* One key element, comparable: a float's class (0 number, 1 NaN) and
   value, an integer's value. */
typedef struct Key {
  SrDtype dt;
  const char *p;
  size_t es;
} Key;

static int cmp_f(double a, double b) {
  int na = isnan(a), nb = isnan(b);
  if (na || nb) return na - nb;
  return a < b ? -1 : a > b; /* -0.0 == 0.0 */
}

static int cmp_elem(const Key *k, int64_t i, int64_t j) {
  const char *a = k->p + (size_t)i * k->es, *b = k->p + (size_t)j * k->es;
  switch (sr_dtype_kind(k->dt)) {
  case SR_DK_FLOAT: return cmp_f(sr_kern_get_f64(k->dt, a), sr_kern_get_f64(k->dt, b));
  case SR_DK_COMPLEX:
    if (k->dt == SR_C64) {
      const float *x = (const float *)a, *y = (const float *)b;
      int c = cmp_f(x[0], y[0]);
      return c ? c : cmp_f(x[1], y[1]);
    } else {
      const double *x = (const double *)a, *y = (const double *)b;
      int c = cmp_f(x[0], y[0]);
      return c ? c : cmp_f(x[1], y[1]);
    }
  case SR_DK_UINT: {
    uint64_t x = (uint64_t)sr_kern_get_i64(k->dt, a), y = (uint64_t)sr_kern_get_i64(k->dt, b);
    return x < y ? -1 : x > y;
  }
  default: {
    int64_t x = sr_kern_get_i64(k->dt, a), y = sr_kern_get_i64(k->dt, b);
    return x < y ? -1 : x > y;
  }
  }
}

/* One line of the sort: keys are nkeys strided views. */
typedef struct Line {
  Key keys[16];
  int nkeys;
  int64_t stride; /* elements between neighbours along the dimension */
  int desc;       /* top_k: largest first */
} Line;

static int cmp_idx(const Line *ln, int64_t i, int64_t j) {
  for (int k = 0; k < ln->nkeys; k++) {
    int c = cmp_elem(&ln->keys[k], i * ln->stride, j * ln->stride);
    if (c) return ln->desc ? -c : c;
  }
  return 0;
}

/* A stable merge sort of idx[0..n) (tmp has n slots). */
static void merge_sort(const Line *ln, int64_t *idx, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  merge_sort(ln, idx, tmp, h);
  merge_sort(ln, idx + h, tmp, n - h);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = cmp_idx(ln, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
  while (i < h) tmp[o++] = idx[i++];
  while (j < n) tmp[o++] = idx[j++];
  memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

typedef struct SortArg {
  int nin, nkeys, dim, nd, desc;
  int64_t k; /* results kept along dim: n for sort, k for top_k */
  int topk;
  SrDtype dts[16];
} SortArg;

/* Each line along dim of every input's block, sorted by the keys; the
   results are the first k of each line (top_k's indices are int32). */
static int sort_fn(SrShardIO *io) {
  SortArg *a = io->arg;
  const int64_t *shape = io->in_shape[0];
  int64_t n = shape[a->dim], outer = 1, inner = 1;
  for (int d = 0; d < a->dim; d++) outer *= shape[d];
  for (int d = a->dim + 1; d < a->nd; d++) inner *= shape[d];
  int64_t *idx = sr_xcalloc((size_t)n + 1, sizeof *idx), *tmp = sr_xcalloc((size_t)n + 1, sizeof *tmp);
  Line ln;
  ln.nkeys = a->nkeys;
  ln.stride = inner;
  ln.desc = a->desc;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * n * inner + in;
      for (int k = 0; k < a->nkeys; k++) {
        Key *key = &ln.keys[k];
        key->dt = a->dts[k];
        key->es = sr_elem_size(key->dt);
        key->p = (const char *)io->in[k]->data + (size_t)base * key->es;
      }
      for (int64_t i = 0; i < n; i++) idx[i] = i;
      merge_sort(&ln, idx, tmp, n);
      if (a->topk) {
        SrDtype dt = a->dts[0];
        size_t es = sr_elem_size(dt);
        int64_t ob = o * a->k * inner + in;
        for (int64_t i = 0; i < a->k; i++) {
          memcpy((char *)io->out[0]->data + (size_t)(ob + i * inner) * es,
                 (const char *)io->in[0]->data + (size_t)(base + idx[i] * inner) * es, es);
          ((int32_t *)io->out[1]->data)[ob + i * inner] = (int32_t)idx[i];
        }
        continue;
      }
      for (int x = 0; x < a->nin; x++) {
        SrDtype dt = a->dts[x];
        size_t es = sr_elem_size(dt);
        for (int64_t i = 0; i < n; i++)
          memcpy((char *)io->out[x]->data + (size_t)(base + i * inner) * es,
                 (const char *)io->in[x]->data + (size_t)(base + idx[i] * inner) * es, es);
      }
    }
  free(idx);
  free(tmp);
  return 0;
}

static int ev_sort_lines(SrEvalCtx *cx, const SrEvalEqn *e, int topk, int64_t dim, int64_t nkeys, int64_t k,
                         int desc);

/* The eval of sort (nin operands, nin results) and of top_k (one operand,
   two results). */
static int ev_sort_common(SrEvalCtx *cx, const SrEvalEqn *e, int topk) {
  int64_t dim = 0, nkeys = 1, k = 0;
  if (sr_ev_param_int(cx, e, topk ? "axis" : "dimension", &dim) < 0) return -1;
  if (!topk && sr_ev_param(e, "num_keys") && sr_ev_param_int(cx, e, "num_keys", &nkeys) < 0) return -1;
  if (topk && sr_ev_param_int(cx, e, "k", &k) < 0) return -1;
  return ev_sort_lines(cx, e, topk, dim, nkeys, k, topk);
}

/* Each line along dim sorted (desc: largest first); with topk, the
   first k values of the one operand and their int32 indices. */
static int ev_sort_lines(SrEvalCtx *cx, const SrEvalEqn *e, int topk, int64_t dim, int64_t nkeys, int64_t k,
                         int desc) {
  if (e->nin > 15 || nkeys < 1 || nkeys > (int64_t)e->nin)
    return sr_ev_err(cx, "NotImplementedError", "sort of %u operands with num_keys=%lld", e->nin, (long long)nkeys);
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l[16];
  SrArray *ins[16] = {0}, *outs[16] = {0};
  SortArg arg;
  memset(&arg, 0, sizeof arg);
  arg.nin = (int)e->nin;
  arg.nkeys = (int)nkeys;
  arg.dim = (int)dim;
  arg.nd = e->in[0]->type->ndim;
  arg.topk = topk;
  arg.desc = desc;
  arg.k = topk ? k : e->in[0]->type->dims[dim].size;
  int rc = 0;
  for (uint32_t i = 0; i < e->nout; i++) l[i] = sr_ev_out_layout(cx, e, i, m);
  for (uint32_t i = 0; i < e->nin && rc == 0; i++) {
    arg.dts[i] = e->in[i]->type->dtype;
    if (!(ins[i] = axis_operand(cx, e->in[i], m, l[0], (int)dim))) rc = -1;
  }
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    outs[i] = sr_array_new(e->out_type[i], without_dim_axes(l[i], (int)dim), m);
  if (rc == 0) rc = sr_ev_map(cx, (int)e->nin, ins, (int)e->nout, outs, 0, sort_fn, &arg);
  for (uint32_t i = 0; i < e->nout && rc == 0; i++)
    if (!(e->out[i] = sr_redistribute_typed(cx, outs[i], m, l[i], e->out_type[i]))) rc = -1;
  for (uint32_t i = 0; i < e->nin; i++) sr_array_unref(ins[i]);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(outs[i]);
  return rc;
}

/* ==== sort ==== */

static int ev_sort(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_sort_common(cx, e, 0); }

/* GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(dim,),
   start_index_map=(dim,), every other dimension a batching dim), as
   _sort_jvp and _top_k_jvp build them. */
static SrVal *take_along_dnums(int nd, int dim) {
  SrBuf s = SR_BUF_INIT;
  int64_t others[SR_MAX_RANK], d64 = dim;
  int n = 0;
  for (int i = 0; i < nd; i++)
    if (i != dim) others[n++] = i;
  sr_buf_puts(&s, "GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=");
  sr_ints_str(&s, &d64, 1);
  sr_buf_puts(&s, ", start_index_map=");
  sr_ints_str(&s, &d64, 1);
  sr_buf_puts(&s, ", operand_batching_dims=");
  sr_ints_str(&s, others, n);
  sr_buf_puts(&s, ", start_indices_batching_dims=");
  sr_ints_str(&s, others, n);
  sr_buf_putc(&s, ')');
  SrVal *v = sr_word(NULL, sr_buf_str(&s), s.len);
  sr_buf_free(&s);
  return v;
}

/* slicing.gather(t, idx, take_along_dnums, slice_sizes=(1,)*nd, mode)
   (slicing.gather makes mode=None PROMISE_IN_BOUNDS) */
static SrVal *take_along(SrAd *ad, SrVal *t, SrVal *idx, int nd, int dim, const char *mode) {
  int64_t ones[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) ones[i] = 1;
  SrVal *in[2] = {t, idx};
  return sr_ad_bindv(ad, SR_P_gather, 2, in, "dimension_numbers", take_along_dnums(nd, dim), "fill_value", sr_none(),
                     "indices_are_sorted", sr_bool(0), "mode", sr_word(NULL, mode, strlen(mode)), "slice_sizes",
                     sr_ad_ints(ones, nd), "unique_indices", sr_bool(0), NULL);
}

/* _sort_jvp: the operands sorted with an iota along the dimension, whose
   sorted copy gathers each tangent. */
static int jvp_sort(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  const SrType *xt = sr_ad_type(ad, x[0]);
  int nd = xt->ndim, dim = (int)param_int(e, "dimension", 0);
  SrDtype idt = SR_U32;
  for (int i = 0; i < nd; i++)
    if (xt->dims[i].size > (int64_t)UINT32_MAX) idt = SR_U64;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) shape[i] = xt->dims[i].size;
  SrVal *iota = sr_ad_bindv(ad, SR_P_iota, 0, NULL, "dtype", sr_dtype_val(NULL, idt), "shape", sr_ad_ints(shape, nd),
                     "dimension", sr_int(NULL, dim), "sharding", sr_ad_sharding_param(ad, xt), NULL);
  if (!iota) return -1;
  SrVal *small[17], **in = e->nin < 16 ? small : sr_xcalloc(e->nin + 1, sizeof *in);
  for (uint32_t i = 0; i < e->nin; i++) in[i] = x[i];
  in[e->nin] = iota;
  SrVal *r = sr_ad_bind(ad, SR_P_sort, (int)e->nin + 1, in, (int)e->nparams, e->params);
  if (in != small) free(in);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nin; i++) y[i] = r->seq.items[i];
  int64_t last = nd;
  SrVal *idx = sr_ad_expand_dims(ad, r->seq.items[e->nin], &last, 1);
  if (!idx) return -1;
  for (uint32_t i = 0; i < e->nin; i++) {
    ty[i] = t[i] ? take_along(ad, t[i], idx, nd, dim, "GatherScatterMode.PROMISE_IN_BOUNDS") : NULL;
    if (t[i] && !ty[i]) return -1;
  }
  return 0;
}

/* ==== top_k ==== */

/* top_k's results: the k values along dimension d, and their int32 indices */
static int topk_types(const SrType *x, int d, int64_t k, const SrType **out) {
  SrTypeBuilder b;
  sr_type_builder(&b, x);
  b.dims[d].size = k;
  out[0] = sr_type_get(&b);
  b.dtype = SR_I32;
  b.weak = 0;
  out[1] = sr_type_get(&b);
  return 0;
}

/* _top_k_abstract_eval: the operand's type with k along the axis, and
   int32 indices of that shape. */
static int type_top_k(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 2) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t k = 0, axis = 0;
  if (sr_rparam_int(cx, e, "k", 1, &k) < 0 || sr_rparam_int(cx, e, "axis", 1, &axis) < 0) return -1;
  if (sr_dtype_kind(x->dtype) == SR_DK_COMPLEX)
    return sr_terr(cx, "ValueError", "top_k is not compatible with complex inputs.");
  if (k < 0) return sr_terr(cx, "ValueError", "k argument to top_k must be nonnegative, got %lld", (long long)k);
  SrBuf a = SR_BUF_INIT;
  if (x->ndim == 0) {
    sr_terr(cx, "TypeError", "top_k operand must have >= 1 dimension, got ()");
    return -1;
  }
  sr_shape_str(&a, x);
  int rc = 0;
  if (axis < 0 || axis >= x->ndim)
    rc = sr_terr(cx, "ValueError", "axis argument out of range: axis=%lld for operand.shape=%s", (long long)axis,
                 sr_buf_str(&a));
  else if (x->dims[axis].size < k) {
    /* shape is a list there */
    SrBuf l = SR_BUF_INIT;
    for (int i = 0; i < x->ndim; i++) sr_buf_printf(&l, "%s%lld", i ? ", " : "", (long long)x->dims[i].size);
    rc = sr_terr(cx, "ValueError",
                 "k argument to top_k must be no larger than size along axis; got k=%lld with shape=[%s] and axis=%lld",
                 (long long)k, sr_buf_str(&l), (long long)axis);
    sr_buf_free(&l);
  } else if (x->dims[axis].size > (int64_t)INT32_MAX + 1)
    rc = sr_terr(cx, "ValueError",
                 "top_k returns int32 indices, which will overflow for array dimensions larger than the maximum int32 "
                 "(%d). Got operand.shape=%s",
                 INT32_MAX, sr_buf_str(&a));
  sr_buf_free(&a);
  if (rc < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  /* operand.sharding.spec[axis] trips the spec's guard first */
  if (s.mode == SR_MODE_EXPLICIT && (x->unreduced | x->reduced))
    return sr_terr(cx, "ValueError",
                   "Using pspec[...] is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use "
                   "spec.partitions[...]");
  if (s.mode == SR_MODE_EXPLICIT && x->dims[axis].nax) {
    SrBuf b = SR_BUF_INIT;
    sr_aval_str(&b, x);
    sr_terr(cx, "ShardingTypeError",
            "The input should be unsharded over the axis along which to compute the top_k values. Got input type=%s "
            "and axis=%lld",
            sr_buf_str(&b), (long long)axis);
    sr_buf_free(&b);
    return -1;
  }
  return topk_types(x, axis, k, out);
}

static int ev_top_k(SrEvalCtx *cx, const SrEvalEqn *e) { return ev_sort_common(cx, e, 1); }

/* _top_k_jvp: the tangent gathered at the indices (reshaped to end in a
   dimension of 1); the indices' tangent is zero. */
static int jvp_top_k(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrVal *r = sr_ad_bind(ad, SR_P_top_k, 1, x, (int)e->nparams, e->params);
  if (!r) return -1;
  y[0] = r->seq.items[0];
  y[1] = r->seq.items[1];
  ty[1] = NULL;
  if (!t[0]) {
    ty[0] = NULL;
    return 0;
  }
  const SrType *it = sr_ad_type(ad, y[1]);
  SrTypeBuilder b;
  sr_type_builder(&b, it);
  b.dims[b.ndim].size = 1;
  b.dims[b.ndim].nax = 0;
  b.ndim++;
  SrVal *idx = sr_ad_reshape_plain(ad, y[1], sr_type_get(&b));
  ty[0] = idx ? take_along(ad, t[0], idx, it->ndim, (int)param_int(e, "axis", 0), "GatherScatterMode.PROMISE_IN_BOUNDS")
              : NULL;
  return ty[0] ? 0 : -1;
}

/* _top_k_batch_rule: the axis shifted past the batch dim. */
static int batch_top_k(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  int64_t axis = param_int(e, "axis", 0);
  if (bd[0] <= axis) axis++;
  SrVal *r = sr_batch_bind_with(b, e, 1, x, "axis", sr_int(NULL, axis), NULL);
  if (!r) return -1;
  y[0] = r->seq.items[0];
  y[1] = r->seq.items[1];
  ybd[0] = ybd[1] = bd[0];
  return 0;
}

static uint32_t nout_top_k(int nin, const SrParam *ps, int np) {
  (void)nin, (void)ps, (void)np;
  return 2;
}

/* ==== approx_top_k (lax/ann.py's approx_top_k_p) ==== */

/* The reduction dimension, counted from 0. */
static int64_t approx_dim(int64_t rd, int nd) { return rd < 0 ? rd + nd : rd; }

/* _approx_top_k_abstract_eval: the operand's type with k along the
   reduction dimension, and int32 indices of that shape. */
static int type_approx_top_k(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 2) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t k = 0, rd = -1;
  int agg = 1;
  if (sr_rparam_int(cx, e, "k", 1, &k) < 0 || sr_rparam_int(cx, e, "reduction_dimension", 0, &rd) < 0 ||
      sr_rparam_bool(cx, e, "aggregate_to_topk", 1, &agg) < 0)
    return -1;
  if (k <= 0) return sr_terr(cx, "ValueError", "k must be positive, got %lld", (long long)k);
  if (x->ndim == 0) return sr_terr(cx, "TypeError", "approx_top_k operand must have >= 1 dimension, got ()");
  int64_t d = approx_dim(rd, x->ndim);
  if (d < 0 || d >= x->ndim)
    return sr_terr(cx, "IndexError", "list index out of range");
  if (x->dims[d].size < k)
    return sr_terr(cx, "ValueError", "k must be smaller than the size of reduction_dim %lld, got %lld",
                   (long long)x->dims[d].size, (long long)k);
  if (!sr_dtype_is_float(x->dtype)) return sr_terr(cx, "ValueError", "operand must be a floating type");
  /* XLA's approx_top_k_reduction_output_size is not here */
  if (!agg) return sr_terr(cx, "NotImplementedError", "approx_top_k with aggregate_to_topk=False is not supported here");
  if (x->dims[d].nax) {
    SrBuf b = SR_BUF_INIT;
    sr_type_str(&b, x, 0);
    sr_terr(cx, "ShardingTypeError",
            "reduction dimension %lld in operand %s should be unsharded i.e. the spec of that dim should be `None`.",
            (long long)rd, sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  return topk_types(x, d, k, out);
}

/* On CPU XLA falls back to the exact top k (of the smallest for
   is_max_k=False), as a sort does. */
static int ev_approx_top_k(SrEvalCtx *cx, const SrEvalEqn *e) {
  int64_t k = 0, rd = -1;
  if (sr_ev_param_int(cx, e, "k", &k) < 0 || sr_ev_param_int(cx, e, "reduction_dimension", &rd) < 0) return -1;
  SrVal *mx = sr_ev_param(e, "is_max_k");
  int desc = !mx || mx->kind != SR_V_BOOL || mx->i;
  return ev_sort_lines(cx, e, 1, approx_dim(rd, e->in[0]->type->ndim), 1, k, desc);
}

/* _approx_top_k_batch_rule: the reduction dimension among the batched
   operand's other dimensions. */
static int batch_approx_top_k(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  int nd = e->in[0]->type->ndim;
  int64_t d = approx_dim(param_int(e, "reduction_dimension", -1), nd);
  if (bd[0] <= d) d++;
  SrVal *r = sr_batch_bind_with(b, e, 1, x, "reduction_dimension", sr_int(NULL, d), NULL);
  if (!r) return -1;
  y[0] = r->seq.items[0];
  y[1] = r->seq.items[1];
  ybd[0] = ybd[1] = bd[0];
  return 0;
}

/* ==== registration ==== */

static void tile_init(void);

void sr_lax_sort_init(void) {
  sr_set_eval_rule(SR_P_sort, ev_sort);
  sr_ad_set_jvp(SR_P_sort, jvp_sort);
  sr_prims[SR_P_top_k].nout = nout_top_k;
  sr_set_type_rule(SR_P_top_k, type_top_k);
  sr_set_eval_rule(SR_P_top_k, ev_top_k);
  sr_ad_set_jvp(SR_P_top_k, jvp_top_k);
  sr_prims[SR_P_top_k].batch = batch_top_k;
  sr_prims[SR_P_approx_top_k].nout = nout_top_k;
  sr_set_type_rule(SR_P_approx_top_k, type_approx_top_k);
  sr_set_eval_rule(SR_P_approx_top_k, ev_approx_top_k);
  sr_prims[SR_P_approx_top_k].batch = batch_approx_top_k;
  tile_init();
}

/* ==== tile (lax.py's tile_p) ==== */

/* _tile_abstract_eval: each dimension times its reps; a dimension tiled
   more than once must be unsharded. */
static int type_tile(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t reps[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "reps", 1, reps, SR_MAX_RANK, &n) < 0) return -1;
  if (n != x->ndim)
    return sr_terr(cx, "TypeError", "reps length must be equal to the ndim of x, got len(reps)=%d and x.ndim=%d.", n,
                   x->ndim);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  for (int i = 0; i < n; i++)
    if (reps[i] != 1 && x->dims[i].nax && s.mode == SR_MODE_EXPLICIT) {
      SrBuf a = SR_BUF_INIT, r = SR_BUF_INIT;
      sr_aval_str(&a, x);
      sr_ints_str(&r, reps, n);
      sr_terr(cx, "ShardingTypeError",
              "Operand cannot be sharded on dimension %d when the tiling is non-trivial. Got input type: %s with reps: %s",
              i, sr_buf_str(&a), sr_buf_str(&r));
      sr_buf_free(&a);
      sr_buf_free(&r);
      return -1;
    }
  SrTypeBuilder b;
  sr_type_builder(&b, x);
  for (int i = 0; i < n; i++) {
    if (reps[i] < 0) return sr_terr(cx, "TypeError", "tile reps must be non-negative, got %lld", (long long)reps[i]);
    if (__builtin_mul_overflow(b.dims[i].size, reps[i], &b.dims[i].size))
      return sr_terr(cx, "ValueError", "tile: the result's dimension %d is too large", i);
    if (reps[i] != 1) b.dims[i].nax = 0;
  }
  out[0] = sr_type_get(&b);
  return 0;
}

typedef struct TileArg {
  int nd;
  size_t es;
} TileArg;

static int tile_fn(SrShardIO *io) {
  TileArg *a = io->arg;
  const int64_t *is = io->in_shape[0], *os = io->out_shape[0];
  int64_t total = 1, idx[SR_MAX_RANK] = {0};
  for (int d = 0; d < a->nd; d++) total *= os[d];
  const char *src = io->in[0]->data;
  char *dst = io->out[0]->data;
  for (int64_t k = 0; k < total; k++) {
    int64_t off = 0;
    for (int d = 0; d < a->nd; d++) off = off * is[d] + idx[d] % is[d];
    memcpy(dst + (size_t)k * a->es, src + (size_t)off * a->es, a->es);
    for (int d = a->nd - 1; d >= 0; d--) {
      if (++idx[d] < os[d]) break;
      idx[d] = 0;
    }
  }
  return 0;
}

/* Each device's block tiled: the input laid out as the result, except
   that the tiled dimensions are whole. */
static int ev_tile(SrEvalCtx *cx, const SrEvalEqn *e) {
  int64_t reps[SR_MAX_RANK];
  int n = 0;
  if (sr_ev_param_ints(cx, e, "reps", reps, SR_MAX_RANK, &n) < 0) return -1;
  const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[0]);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  for (int i = 0; i < n; i++)
    if (reps[i] != 1) b.dims[i].nax = 0;
  const SrType *ol = sr_type_get(&b);
  SrTypeBuilder ib;
  sr_type_builder(&ib, e->in[0]->layout);
  for (int i = 0; i < n; i++) {
    ib.dims[i].nax = ol->dims[i].nax;
    memcpy(ib.dims[i].ax, ol->dims[i].ax, SR_MAX_DIM_AXES);
    if (ib.dims[i].nax) ib.mesh = ol->mesh;
  }
  SrArray *x = sr_redistribute(cx, e->in[0], m, sr_type_get(&ib));
  if (!x) return -1;
  SrArray *r = sr_array_new(e->out_type[0], ol, m);
  TileArg a = {n, sr_elem_size(e->in[0]->type->dtype)};
  int rc = sr_ev_map(cx, 1, &x, 1, &r, 0, tile_fn, &a);
  sr_array_unref(x);
  if (rc == 0 && !(e->out[0] = sr_redistribute_typed(cx, r, m, l, e->out_type[0]))) rc = -1;
  sr_array_unref(r);
  return rc;
}

/* _tile_transpose_rule: the cotangent reshaped to (reps[0], shape[0],
   ...) (the operand's sharding on the shape dims) and summed over the reps
   dims. */
static int tr_tile(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  (void)x;
  const SrType *ot = sr_ad_ct_type(e->in[0]->type);
  int64_t reps[SR_MAX_RANK];
  SrVal *rv = param(e, "reps");
  int n = 0;
  if (!rv || sr_val_ints(rv, reps, SR_MAX_RANK, &n) < 0 || n != ot->ndim || 2 * n > SR_MAX_RANK)
    return sr_ad_no_transpose(ad, e->prim);
  SrTypeBuilder b;
  sr_type_builder(&b, ot);
  b.dtype = sr_ad_type(ad, ct[0])->dtype;
  b.ndim = (uint8_t)(2 * n);
  int64_t axes[SR_MAX_RANK];
  for (int i = 0; i < n; i++) {
    b.dims[2 * i] = ot->dims[i];
    b.dims[2 * i].size = reps[i];
    b.dims[2 * i].nax = 0;
    b.dims[2 * i + 1] = ot->dims[i];
    axes[i] = 2 * i;
  }
  SrVal *r = sr_ad_reshape(ad, ct[0], sr_type_get(&b));
  cx[0] = r ? sr_ad_reduce_sum(ad, r, axes, n, NULL) : NULL;
  return cx[0] ? 0 : -1;
}

/* _tile_batch_rule: a rep of 1 for the batch dim. */
static int batch_tile(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  int64_t reps[SR_MAX_RANK], nr[SR_MAX_RANK];
  SrVal *rv = param(e, "reps");
  int n = 0;
  if (!rv || sr_val_ints(rv, reps, SR_MAX_RANK, &n) < 0 || n + 1 > SR_MAX_RANK) return sr_batch_no_rule(b, e->prim);
  for (int i = 0, k = 0; i <= n; i++) nr[i] = i == bd[0] ? 1 : reps[k++];
  y[0] = sr_batch_bind_with(b, e, 1, x, "reps", sr_ad_ints(nr, n + 1), NULL);
  ybd[0] = bd[0];
  return y[0] ? 0 : -1;
}

static void tile_init(void) {
  sr_set_type_rule(SR_P_tile, type_tile);
  sr_set_eval_rule(SR_P_tile, ev_tile);
  sr_ad_set_jvp(SR_P_tile, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_tile, tr_tile);
  sr_prims[SR_P_tile].batch = batch_tile;
}
