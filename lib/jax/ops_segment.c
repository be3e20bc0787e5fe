/* ops_segment.c: jax.ops's segment reductions (jax/_src/ops/scatter.py):
 * segment_sum, segment_prod, segment_max and segment_min.
 *
 * Each is JAX's _segment_update: an array of the reduction's identity of
 * shape (num_segments, *data.shape[1:]) scattered into with
 * x.at[segment_ids].add / multiply / max / min (data, mode FILL_OR_DROP
 * unless given, no wrapping of negative indices, out_sharding passed on,
 * which auto_axes the scatter as _scatter_update does), or, with a
 * bucket_size, one such row per bucket reduced over the buckets.
 * Registered by sr_ops_segment_init (jax.h).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/lax_scatter.h"
#include "jax/numpy.h"
#include "jax/np_host.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "util/intern.h"

typedef enum { SEG_SUM, SEG_PROD, SEG_MAX, SEG_MIN } SegOp;

static const struct {
  const char *name, *method, *reducer;
} seg_ops[] = {
    [SEG_SUM] = {"segment_sum", "add", "jax.numpy.sum"},
    [SEG_PROD] = {"segment_prod", "multiply", "jax.numpy.prod"},
    [SEG_MAX] = {"segment_max", "max", "jax.numpy.max"},
    [SEG_MIN] = {"segment_min", "min", "jax.numpy.min"},
};

static SrVal *callq(SrInterp *I, const char *qual, int n, SrVal **args, int nkw, const char **kw, SrVal **kwv) {
  SrVal *fn = sr_lookup_qualname(qual);
  if (!fn) return sr_raise(I, "NotImplementedError", "%s is not available", qual);
  SrArgs a = {n, args, nkw, kw, kwv, NULL};
  return sr_call(I, fn, &a);
}

/* util.check_arraylike: arrays and scalars */
static int check_arraylike(SrInterp *I, const char *name, SrVal **v, int n) {
  for (int i = 0; i < n; i++) {
    SrVal *x = v[i];
    if (x->kind == SR_V_INT || x->kind == SR_V_FLOAT || x->kind == SR_V_BOOL || x->kind == SR_V_COMPLEX ||
        sr_array_of(x) || sr_is_ndarray(x))
      continue;
    sr_raise(I, "TypeError", "%s requires ndarray or scalar arguments, got <class '%s'> at position %d.", name,
             sr_val_kind_name(x), i);
    return -1;
  }
  return 0;
}

/* _get_identity(scatter_op, dtype) */
static SrVal *identity(SegOp op, SrDtype dt) {
  int is_int = sr_dtype_is_int(dt), is_bool = dt == SR_BOOL;
  int64_t lo = 0, hi = 0;
  if (is_int) {
    int bits = sr_dtype_info(dt)->bits;
    if (sr_dtype_kind(dt) == SR_DK_UINT) {
      hi = bits >= 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1); /* uint64's max wraps, as its bits */
    } else {
      lo = bits >= 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
      hi = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    }
  }
  switch (op) {
  case SEG_SUM: return sr_int(NULL, 0);
  case SEG_PROD: return sr_int(NULL, 1);
  case SEG_MIN: return is_bool ? sr_bool(1) : is_int ? sr_int(NULL, hi) : sr_float(NULL, INFINITY);
  default: return is_bool ? sr_bool(0) : is_int ? sr_int(NULL, lo) : sr_float(NULL, -INFINITY);
  }
}

/* out.at[idx].METHOD(data, indices_are_sorted=, unique_indices=,
   mode=, wrap_negative_indices=False, out_sharding=) */
static SrVal *scatter_update(SrInterp *I, SegOp op, SrVal *out, SrVal *idx, SrVal *data, SrVal *sorted,
                             SrVal *unique, SrVal *mode, SrVal *sh) {
  SrVal *at = sr_getattr(I, out, "at");
  SrVal *ref = at ? sr_getitem(I, at, idx) : NULL;
  SrVal *m = ref ? sr_getattr(I, ref, seg_ops[op].method) : NULL;
  SrVal *r = NULL;
  if (m) {
    const char *kw[5] = {sr_intern_cstr("indices_are_sorted"), sr_intern_cstr("unique_indices"), sr_intern_cstr("mode"),
                         sr_intern_cstr("wrap_negative_indices"), sr_intern_cstr("out_sharding")};
    SrVal *kwv[5] = {sorted, unique, mode, sr_bool(0), sh ? sh : sr_none()};
    SrArgs a = {1, &data, 5, kw, kwv, NULL};
    r = sr_call(I, m, &a);
  }
  sr_unref(at);
  sr_unref(ref);
  sr_unref(m);
  return r;
}

/* num_segments: an int (core.concrete_dim_or_error), or max(segment_ids)
   + 1 on the host when None */
static int num_segments_of(SrInterp *I, SegOp op, SrVal *v, SrVal *ids, int64_t *n) {
  if (v && v->kind != SR_V_NONE) {
    char what[64];
    snprintf(what, sizeof what, "%s() `num_segments` argument.", seg_ops[op].name);
    return sr_as_int(I, v, what, n);
  }
  SrVal *mx = callq(I, "numpy.max", 1, &ids, 0, NULL, NULL);
  if (!mx) return -1;
  int rc = sr_as_int(I, mx, "num_segments", n);
  sr_unref(mx);
  if (rc == 0) ++*n;
  return rc;
}

static SrVal *segment_update(SrInterp *I, SrArgs *a, SegOp op) {
  const char *name = seg_ops[op].name;
  SrVal *p[8];
  if (sr_args_parse(I, a, name,
                    "data, segment_ids, num_segments=, indices_are_sorted=, unique_indices=, bucket_size=, mode=, "
                    "out_sharding=",
                    p) < 0)
    return NULL;
  SrVal *sh = NULL;
  if (p[7] && p[7]->kind != SR_V_NONE && sr_api_canon_sharding(I, p[7], name, &sh) < 0) return NULL;
  if (sh && op != SEG_SUM && sh->sh.spec && sh->sh.spec->nunreduced) {
    sr_unref(sh);
    return sr_raise(I, "NotImplementedError", "unreduced for %s is not yet supported.",
                    op == SEG_PROD ? "prod" : op == SEG_MAX ? "max" : "min");
  }
  SrVal *args[2] = {p[0], p[1]};
  SrVal *data = NULL, *ids = NULL, *out = NULL, *res = NULL, *mode = NULL;
  if (check_arraylike(I, name, args, 2) < 0) goto done;
  mode = p[6] && p[6]->kind != SR_V_NONE ? sr_ref(p[6]) : sr_gs_mode_word("FILL_OR_DROP");
  data = sr_jnp_asarray(I, p[0], -1);
  ids = data ? sr_jnp_asarray(I, p[1], -1) : NULL;
  if (!ids) goto done;
  int64_t nseg;
  if (num_segments_of(I, op, p[2], ids, &nseg) < 0) goto done;
  if (nseg < 0) {
    sr_raise(I, "ValueError", "num_segments must be non-negative.");
    goto done;
  }
  const SrType *dt = sr_value_type(I, data), *it = sr_value_type(I, ids);
  SrVal *sorted = p[3] ? p[3] : sr_bool(0), *unique = p[4] ? p[4] : sr_bool(0);
  int bucketed = p[5] && p[5]->kind != SR_V_NONE;
  int64_t shape[SR_MAX_RANK + 1], nd = 0, bucket = 0;
  if (bucketed) {
    if (sr_as_int(I, p[5], "bucket_size", &bucket) < 0) goto done;
    if (sh) {
      sr_raise(I, "NotImplementedError", "%s", "");
      goto done;
    }
    int64_t size = 1;
    for (int i = 0; i < it->ndim; i++) size *= it->dims[i].size;
    if (bucket <= 0) {
      sr_raise(I, "ZeroDivisionError", "integer division or modulo by zero");
      goto done;
    }
    shape[nd++] = (size + bucket - 1) / bucket;
  }
  shape[nd++] = nseg;
  for (int i = 1; i < dt->ndim && nd <= SR_MAX_RANK; i++) shape[nd++] = dt->dims[i].size;
  {
    SrVal *fa[2] = {sr_int_tuple(shape, (int)nd), identity(op, dt->dtype)};
    const char *kw = sr_intern_cstr("dtype");
    SrVal *dv = sr_dtype_val(NULL, dt->dtype);
    out = callq(I, "jax.numpy.full", 2, fa, 1, &kw, &dv);
    sr_unref(fa[0]);
    sr_unref(fa[1]);
    sr_unref(dv);
  }
  if (!out) goto done;
  if (!bucketed) {
    res = scatter_update(I, op, out, ids, data, sorted, unique, mode, sh);
    goto done;
  }
  {
    /* np.index_exp[jnp.arange(segment_ids.shape[0]) // bucket_size,
       segment_ids[None, :]] */
    SrVal *n0 = sr_int(NULL, it->ndim ? it->dims[0].size : 1);
    SrVal *ar = callq(I, "jax.numpy.arange", 1, &n0, 0, NULL, NULL);
    SrVal *bs = sr_int(NULL, bucket);
    SrVal *rows = ar ? sr_binop(I, SR_OP_FLOORDIV, ar, bs) : NULL;
    SrVal *key = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, key, sr_none());
    sr_seq_push(NULL, key, sr_slice_new(sr_none(), sr_none(), sr_none()));
    SrVal *cols = rows ? sr_getitem(I, ids, key) : NULL;
    SrVal *idx = NULL;
    if (cols) {
      idx = sr_seq(NULL, SR_V_TUPLE, 2);
      sr_seq_push(NULL, idx, sr_ref(rows));
      sr_seq_push(NULL, idx, sr_ref(cols));
    }
    SrVal *s = idx ? scatter_update(I, op, out, idx, data, sorted, unique, mode, NULL) : NULL;
    SrVal *red = NULL;
    if (s) {
      const char *kw = sr_intern_cstr("axis");
      SrVal *zero = sr_int(NULL, 0);
      red = callq(I, seg_ops[op].reducer, 1, &s, 1, &kw, &zero);
      sr_unref(zero);
    }
    if (red) {
      SrVal *dv = sr_dtype_val(NULL, dt->dtype), *m = sr_getattr(I, red, "astype");
      if (m) {
        SrArgs ca = {1, &dv, 0, NULL, NULL, NULL};
        res = sr_call(I, m, &ca);
      }
      sr_unref(m);
      sr_unref(dv);
    }
    SrVal *tmp[] = {n0, ar, bs, rows, key, cols, idx, s, red};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) sr_unref(tmp[i]);
  }
done:
  sr_unref(sh);
  sr_unref(mode);
  sr_unref(data);
  sr_unref(ids);
  sr_unref(out);
  return res;
}

static SrVal *ops_segment_sum(SrInterp *I, SrArgs *a) { return segment_update(I, a, SEG_SUM); }
static SrVal *ops_segment_prod(SrInterp *I, SrArgs *a) { return segment_update(I, a, SEG_PROD); }
static SrVal *ops_segment_max(SrInterp *I, SrArgs *a) { return segment_update(I, a, SEG_MAX); }
static SrVal *ops_segment_min(SrInterp *I, SrArgs *a) { return segment_update(I, a, SEG_MIN); }

void sr_ops_segment_init(void) {
  sr_def("jax.ops.segment_sum", ops_segment_sum,
         "segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, "
         "bucket_size=None, mode=None, out_sharding=None): sums of data's rows per segment (a scatter-add)");
  sr_def("jax.ops.segment_prod", ops_segment_prod,
         "segment_prod(data, segment_ids, num_segments=None, ...): products per segment (a scatter-mul)");
  sr_def("jax.ops.segment_max", ops_segment_max,
         "segment_max(data, segment_ids, num_segments=None, ...): maxima per segment (a scatter-max)");
  sr_def("jax.ops.segment_min", ops_segment_min,
         "segment_min(data, segment_ids, num_segments=None, ...): minima per segment (a scatter-min)");
}
