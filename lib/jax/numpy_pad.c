/* numpy_pad.c: jax.numpy.pad (numpy/lax_numpy.py), every mode of
 * numpy.pad: constant, wrap, symmetric and reflect (even and odd), edge,
 * linear_ramp, maximum, minimum, mean, median, empty, and a callable,
 * each built from the operations JAX's _pad_* helpers bind, under the
 * jit named _pad (pad_width, mode, stat_length, end_values and
 * reflect_type static; the array and constant_values traced), so that the
 * jaxprs read as JAX's.  Registered by sr_jnp_pad_init (jax.h). */
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "util/mem.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "util/intern.h"

enum {
  PAD_CONSTANT, PAD_EMPTY, PAD_EDGE, PAD_WRAP, PAD_LINEAR_RAMP, PAD_MAXIMUM,
  PAD_MEAN, PAD_MEDIAN, PAD_MINIMUM, PAD_REFLECT, PAD_SYMMETRIC, PAD_NMODES
};
static const char *const mode_names[PAD_NMODES] = {"constant", "empty",  "edge",   "wrap",    "linear_ramp", "maximum",
                                                   "mean",     "median", "minimum", "reflect", "symmetric"};

typedef struct PadData {
  int nd, mode, odd;          /* odd: reflect_type='odd' */
  int64_t w[2 * SR_MAX_RANK]; /* (before, after) per dimension */
  int has_stat;
  int64_t stat[2 * SR_MAX_RANK];
  double end[2 * SR_MAX_RANK]; /* linear_ramp's end_values */
  uint8_t end_int[2 * SR_MAX_RANK];
} PadData;

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

static int str_is(const SrVal *v, const char *s) {
  return (v->kind == SR_V_STR || v->kind == SR_V_WORD) && v->str.n == strlen(s) && memcmp(v->str.s, s, v->str.n) == 0;
}

/* lax_numpy._broadcast_to_pairs: an entry, (entry,), (before, after),
   ((before, after),) or one pair per dimension, as 2 * nd borrowed
   entries. */
static int pairs_of(SrInterp *I, SrVal *v, int nd, const char *name, SrVal **out) {
  SrVal *pair[2];
  int n;
  if (!sr_is_seq(v)) {
    pair[0] = pair[1] = v;
  } else if (v->seq.n && sr_is_seq(v->seq.items[0])) {
    n = v->seq.n;
    for (int i = 0; i < n; i++) {
      SrVal *e = v->seq.items[i];
      if (!sr_is_seq(e) || e->seq.n != v->seq.items[0]->seq.n)
        return sr_raise(I, "TypeError", "`%s` entries must be the same shape", name), -1;
    }
    int m = v->seq.items[0]->seq.n;
    if (m != 2 || (n != nd && n != 1))
      return sr_raise(I, "ValueError",
                      "jnp.pad: %s with nd=%d has unsupported shape (%d, %d). Valid shapes are (%d, 2), (1, 2), "
                      "(2,), (1,), or ().",
                      name, nd, n, m, nd),
             -1;
    for (int i = 0; i < nd; i++)
      for (int k = 0; k < 2; k++) out[2 * i + k] = v->seq.items[n == nd ? i : 0]->seq.items[k];
    return 0;
  } else {
    n = v->seq.n;
    if (n != 1 && n != 2)
      return sr_raise(I, "ValueError",
                      "jnp.pad: %s with nd=%d has unsupported shape (%d,). Valid shapes are (%d, 2), (1, 2), "
                      "(2,), (1,), or ().",
                      name, nd, n, nd),
             -1;
    pair[0] = v->seq.items[0];
    pair[1] = v->seq.items[n - 1];
  }
  for (int i = 0; i < nd; i++) {
    out[2 * i] = pair[0];
    out[2 * i + 1] = pair[1];
  }
  return 0;
}

static int int_pairs(SrInterp *I, SrVal *v, int nd, const char *name, int64_t *w) {
  SrVal *e[2 * SR_MAX_RANK];
  if (pairs_of(I, v, nd, name, e) < 0) return -1;
  for (int i = 0; i < 2 * nd; i++)
    if (sr_as_int(I, e[i], name, &w[i]) < 0) return -1;
  return 0;
}

/* lax_slicing.slice_in_dim(x, lo, hi, axis), lo and hi canonical. */
static SrVal *slice_dim(SrNnScope *s, SrVal *x, int axis, int64_t lo, int64_t hi) {
  if (!x) return NULL;
  const SrType *t = vtype(s->I, x);
  int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK];
  for (int k = 0; k < t->ndim; k++) {
    st[k] = 0;
    lim[k] = t->dims[k].size;
  }
  st[axis] = lo;
  lim[axis] = hi;
  return sr_nn_keep(s, sr_lax_slice(s->I, x, st, lim, NULL));
}

/* lax.concatenate: one operand is itself. */
static SrVal *concat(SrNnScope *s, int n, SrVal **xs, int axis) {
  for (int i = 0; i < n; i++)
    if (!xs[i]) return NULL;
  if (n == 1) return xs[0];
  return sr_nn_keep(s, sr_lax_concatenate(s->I, n, xs, axis));
}

static SrVal *call_axis(SrNnScope *s, const char *fn, int n, SrVal **v, int axis, int keepdims) {
  const char *kw[2] = {"axis", "keepdims"};
  SrVal *kv[2] = {sr_nn_int(s, axis), keepdims ? sr_nn_keep(s, sr_bool(1)) : NULL};
  return sr_nn_call(s, fn, n, v, 2, kw, kv);
}

static SrVal *repeat_dim(SrNnScope *s, SrVal *x, int64_t k, int axis) {
  SrVal *v[2] = {x, sr_nn_int(s, k)};
  return call_axis(s, "jax.numpy.repeat", 2, v, axis, 0);
}

static SrVal *flip_dim(SrNnScope *s, SrVal *x, int axis) { return call_axis(s, "jax.numpy.flip", 1, &x, axis, 0); }

static int no_padding(SrInterp *I, const PadData *d, int i, const char *mode) {
  if (d->w[2 * i] > 0 || d->w[2 * i + 1] > 0)
    return sr_raise(I, "ValueError", "Cannot apply '%s' padding to empty axis", mode), -1;
  return 0;
}

/* Each mode below takes the array (a reference the scope holds) and
   returns the padded one (held by the scope), or NULL. */

static SrVal *pad_wrap(SrNnScope *s, SrVal *x, const PadData *d) {
  for (int i = 0; i < d->nd && x; i++) {
    int64_t size = vtype(s->I, x)->dims[i].size;
    if (size == 0) {
      if (no_padding(s->I, d, i, "wrap") < 0) return NULL;
      continue;
    }
    int64_t lrep = d->w[2 * i] / size, lrem = d->w[2 * i] % size;
    int64_t rrep = d->w[2 * i + 1] / size, rrem = d->w[2 * i + 1] % size;
    int64_t total = lrep + rrep + 1, n = total + (lrem > 0) + (rrem > 0);
    if (n > 4096) return sr_raise(s->I, "ValueError", "jnp.pad: wrap padding of %lld copies is too many", (long long)n);
    SrVal **parts = sr_xmalloc((size_t)n * sizeof *parts);
    int k = 0;
    if (lrem > 0) parts[k++] = slice_dim(s, x, i, size - lrem, size);
    for (int64_t r = 0; r < total; r++) parts[k++] = x;
    if (rrem > 0) parts[k++] = slice_dim(s, x, i, 0, rrem);
    x = concat(s, k, parts, i);
    free(parts);
  }
  return x;
}

/* _pad_symmetric_or_reflect's build_padding for one side of axis i.  x and
   the result are owned references (the scope is emptied each round). */
static SrVal *reflect_side(SrInterp *I, SrVal *x, const PadData *d, int i, int before) {
  int64_t axis_size = vtype(I, x)->dims[i].size, padding = d->w[2 * i + !before];
  int symmetric = d->mode == PAD_SYMMETRIC;
  int64_t offset = !symmetric && axis_size > 1 ? 1 : 0;
  SrNnScope s = {I, {0}, 0};
  SrVal *edge = sr_nn_done(&s, slice_dim(&s, x, i, before ? 0 : axis_size - 1, axis_size > 0 && before ? 1 : axis_size));
  if (!edge) goto fail;
  while (padding > 0) {
    int64_t cur = padding < axis_size - offset ? padding : axis_size - offset;
    padding -= cur;
    int64_t n = vtype(I, x)->dims[i].size, lo, hi;
    if (before) {
      lo = offset;
      hi = offset + cur;
    } else {
      lo = n - (cur + offset);
      hi = symmetric || axis_size == 1 ? n : n - 1;
    }
    SrVal *y = flip_dim(&s, slice_dim(&s, x, i, lo, hi), i);
    if (d->odd) {
      y = sr_nn_op(&s, SR_OP_SUB, sr_nn_op(&s, SR_OP_MUL, sr_nn_int(&s, 2), edge), y);
      if (y && axis_size > 1) {
        int64_t m = vtype(I, y)->dims[i].size;
        SrVal *e = slice_dim(&s, y, i, before ? 0 : m - 1, before ? 1 : m);
        if (e) {
          sr_unref(edge);
          edge = sr_ref(e);
        }
      }
    }
    SrVal *parts[2] = {before ? y : x, before ? x : y};
    SrVal *nx = sr_nn_done(&s, concat(&s, 2, parts, i));
    sr_unref(x);
    x = nx;
    if (!x) break;
  }
  sr_unref(edge);
  return x;
fail:
  sr_unref(x);
  return NULL;
}

static SrVal *pad_reflect(SrNnScope *s, SrVal *x, const PadData *d) {
  SrVal *a = sr_ref(x);
  for (int i = 0; i < d->nd && a; i++) {
    if (vtype(s->I, a)->dims[i].size == 0) {
      if (no_padding(s->I, d, i, mode_names[d->mode]) < 0) {
        sr_unref(a);
        return NULL;
      }
      continue;
    }
    if (d->w[2 * i] == 0 && d->w[2 * i + 1] == 0) continue;
    a = reflect_side(s->I, a, d, i, 1);
    if (a) a = reflect_side(s->I, a, d, i, 0);
  }
  return sr_nn_keep(s, a);
}

static SrVal *pad_edge(SrNnScope *s, SrVal *x, const PadData *d) {
  for (int i = 0; i < d->nd && x; i++) {
    int64_t n = vtype(s->I, x)->dims[i].size;
    if (n == 0) {
      if (no_padding(s->I, d, i, "edge") < 0) return NULL;
      continue;
    }
    SrVal *parts[3] = {repeat_dim(s, slice_dim(s, x, i, 0, 1), d->w[2 * i], i), x,
                       repeat_dim(s, slice_dim(s, x, i, n - 1, n), d->w[2 * i + 1], i)};
    x = concat(s, 3, parts, i);
  }
  return x;
}

/* linspace(start=end value, stop=edge squeezed, num, endpoint=False,
   dtype, axis), made as weakly typed as the array. */
static SrVal *ramp(SrNnScope *s, SrVal *x, SrVal *edge, const PadData *d, int i, int k) {
  if (!edge) return NULL;
  const SrType *t = vtype(s->I, x);
  int64_t ax = i;
  SrVal *stop = sr_nn_keep(s, sr_lax_squeeze(s->I, edge, &ax, 1));
  SrVal *start = d->end_int[2 * i + k] ? sr_nn_int(s, (int64_t)d->end[2 * i + k]) : sr_nn_float(s, d->end[2 * i + k]);
  SrVal *dt = sr_nn_keep(s, sr_dtype_val(NULL, t->dtype));
  const char *kw[4] = {"num", "endpoint", "dtype", "axis"};
  SrVal *kv[4] = {sr_nn_int(s, d->w[2 * i + k]), sr_nn_keep(s, sr_bool(0)), dt, sr_nn_int(s, i)};
  SrVal *v[2] = {start, stop};
  SrVal *r = sr_nn_call(s, "jax.numpy.linspace", 2, v, 4, kw, kv);
  if (!r) return NULL;
  return sr_nn_keep(s, sr_lax_convert(s->I, r, t->dtype, t->weak, NULL));
}

static SrVal *pad_linear_ramp(SrNnScope *s, SrVal *x, const PadData *d) {
  for (int i = 0; i < d->nd && x; i++) {
    int64_t n = vtype(s->I, x)->dims[i].size;
    SrVal *before = ramp(s, x, slice_dim(s, x, i, 0, n ? 1 : 0), d, i, 0);
    SrVal *after = ramp(s, x, slice_dim(s, x, i, n ? n - 1 : 0, n), d, i, 1);
    SrVal *parts[3] = {before, x, after ? flip_dim(s, after, i) : NULL};
    x = concat(s, 3, parts, i);
  }
  return x;
}

static SrVal *stat_of(SrNnScope *s, SrVal *x, const PadData *d, int i) {
  static const char *const fns[PAD_NMODES] = {[PAD_MAXIMUM] = "jax.numpy.amax", [PAD_MINIMUM] = "jax.numpy.amin",
                                              [PAD_MEAN] = "jax.numpy.mean", [PAD_MEDIAN] = "jax.numpy.median"};
  SrVal *r = call_axis(s, fns[d->mode], 1, &x, i, 1);
  const SrType *t = vtype(s->I, x);
  if (r && sr_dtype_is_int(t->dtype)) r = sr_nn_call1(s, "builtins.round", r);
  return r ? sr_nn_keep(s, sr_lax_convert(s->I, r, t->dtype, t->weak, NULL)) : NULL;
}

static SrVal *pad_stats(SrNnScope *s, SrVal *x, const PadData *d) {
  for (int i = 0; i < d->nd && x; i++) {
    SrVal *sb, *sa;
    if (!d->has_stat) {
      sb = sa = stat_of(s, x, d, i);
    } else {
      int64_t n = vtype(s->I, x)->dims[i].size, lb = d->stat[2 * i], la = d->stat[2 * i + 1];
      if (lb == 0 || la == 0) return sr_raise(s->I, "ValueError", "stat_length of 0 yields no value for padding");
      if (lb > n) lb = n;
      if (la > n) la = n;
      sb = stat_of(s, slice_dim(s, x, i, 0, lb), d, i);
      sa = stat_of(s, slice_dim(s, x, i, n - la, n), d, i);
    }
    SrVal *parts[3] = {repeat_dim(s, sb, d->w[2 * i], i), x, repeat_dim(s, sa, d->w[2 * i + 1], i)};
    x = concat(s, 3, parts, i);
  }
  return x;
}

static SrVal *empty_shaped(SrNnScope *s, SrVal *x, int i, int64_t k) {
  const SrType *t = vtype(s->I, x);
  SrVal *dims[SR_MAX_RANK];
  for (int j = 0; j < t->ndim; j++) dims[j] = sr_int(NULL, j == i ? k : t->dims[j].size);
  SrVal *shape = sr_tuple(NULL, t->ndim, dims);
  const char *kw = "shape";
  SrVal *kv = sr_nn_keep(s, shape);
  return sr_nn_call(s, "jax.numpy.empty_like", 1, &x, 1, &kw, &kv);
}

static SrVal *pad_empty(SrNnScope *s, SrVal *x, const PadData *d) {
  for (int i = 0; i < d->nd && x; i++) {
    SrVal *parts[3] = {empty_shaped(s, x, i, d->w[2 * i]), x, empty_shaped(s, x, i, d->w[2 * i + 1])};
    x = concat(s, 3, parts, i);
  }
  return x;
}

/* _pad_constant: constant_values in the array's dtype and weakness, a
   scalar (or one element) as one lax.pad, else a pair per dimension (or
   one pair for all) padded a side at a time. */
static SrVal *pad_constant(SrNnScope *s, SrVal *x, SrVal *values, const PadData *d) {
  SrInterp *I = s->I;
  const SrType *t = vtype(I, x);
  SrVal *cv = sr_nn_keep(s, sr_lax_convert(I, values, t->dtype, t->weak, NULL));
  if (!cv) return NULL;
  const SrType *ct = vtype(I, cv);
  int64_t cfg[3 * SR_MAX_RANK];
  if (ct->ndim == 1 && ct->dims[0].size == 1) {
    int64_t zero = 0;
    cv = sr_nn_keep(s, sr_lax_squeeze(I, cv, &zero, 1));
    if (!cv) return NULL;
    ct = vtype(I, cv);
  }
  if (ct->ndim == 0) {
    for (int i = 0; i < d->nd; i++) {
      cfg[3 * i] = d->w[2 * i];
      cfg[3 * i + 1] = d->w[2 * i + 1];
      cfg[3 * i + 2] = 0;
    }
    return sr_nn_keep(s, sr_lax_pad(I, x, cv, cfg, d->nd));
  }
  if (ct->ndim == 1 && ct->dims[0].size != 2) {
    SrBuf sb = SR_BUF_INIT;
    sr_shape_str(&sb, ct);
    sr_raise(I, "ValueError",
             "jnp.pad: constant_values has unsupported shape %s. If the shape is 1D or 2D, the last dimension must be "
             "of size 1 or 2.",
             sr_buf_str(&sb));
    sr_buf_free(&sb);
    return NULL;
  }
  int64_t shape[2] = {d->nd, 2};
  SrVal *pairs = sr_nn_keep(s, sr_lax_broadcast_to(I, cv, shape, 2, NULL));
  for (int i = 0; i < d->nd && x && pairs; i++)
    for (int k = 0; k < 2 && x; k++) {
      if (d->w[2 * i + k] == 0) continue;
      int64_t st[2] = {i, k}, lim[2] = {i + 1, k + 1}, both[2] = {0, 1};
      SrVal *c = sr_nn_keep(s, sr_lax_slice(I, pairs, st, lim, NULL));
      c = c ? sr_nn_keep(s, sr_lax_squeeze(I, c, both, 2)) : NULL;
      if (!c) return NULL;
      memset(cfg, 0, (size_t)(3 * d->nd) * sizeof *cfg);
      cfg[3 * i + k] = d->w[2 * i + k];
      x = sr_nn_keep(s, sr_lax_pad(I, x, c, cfg, d->nd));
    }
  return x;
}

/* lax_numpy._pad under its jit. */
static SrVal *pad_body(SrInterp *I, SrArgs *a) {
  PadData *d = sr_current_builtin(I)->data;
  SrVal *x = a->v[0];
  if (vtype(I, x)->ndim == 0) return sr_ref(x);
  for (int i = 0; i < 2 * d->nd; i++)
    if (d->w[i] < 0) return sr_raise(I, "ValueError", "index can't contain negative values");
  if (d->mode == PAD_REFLECT || d->mode == PAD_SYMMETRIC || d->mode == PAD_WRAP) {
    /* these grow the array a copy at a time: a result past the memory
       there is would take that many rounds before failing, so fail now */
    const SrType *t = vtype(I, x);
    uint64_t bytes = sr_dtype_info(t->dtype)->size;
    int huge = 0;
    for (int i = 0; i < t->ndim; i++) {
      uint64_t dim = (uint64_t)t->dims[i].size, with;
      huge |= __builtin_add_overflow(dim, (uint64_t)d->w[2 * i], &with) ||
              __builtin_add_overflow(with, (uint64_t)d->w[2 * i + 1], &with) ||
              __builtin_mul_overflow(bytes, with, &bytes);
    }
    if (huge || bytes > sr_mem_limit())
      return sr_raise(I, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate %llu bytes.",
                      huge ? (unsigned long long)UINT64_MAX : (unsigned long long)bytes);
  }
  SrNnScope s = {I, {0}, 0};
  SrVal *r;
  switch (d->mode) {
  case PAD_CONSTANT: r = pad_constant(&s, x, a->v[1], d); break;
  case PAD_WRAP: r = pad_wrap(&s, x, d); break;
  case PAD_REFLECT:
  case PAD_SYMMETRIC: r = pad_reflect(&s, x, d); break;
  case PAD_EDGE: r = pad_edge(&s, x, d); break;
  case PAD_LINEAR_RAMP: r = pad_linear_ramp(&s, x, d); break;
  case PAD_EMPTY: r = pad_empty(&s, x, d); break;
  default: r = pad_stats(&s, x, d); break;
  }
  return sr_nn_done(&s, r);
}

/* _pad_func: zeros padded, then func along each axis through
   apply_along_axis(func, axis, padded, pad_width[axis], axis, kwargs). */
static SrVal *pad_func(SrInterp *I, SrVal *x, SrVal *func, const PadData *d, SrArgs *a) {
  SrNnScope s = {I, {0}, 0};
  PadData c = *d;
  c.mode = PAD_CONSTANT;
  SrVal *zero = sr_nn_int(&s, 0);
  SrVal *p = pad_constant(&s, x, zero, &c);
  SrVal *kw = sr_nn_keep(&s, sr_dict(NULL));
  for (int i = 0; i < a->nkw; i++) {
    sr_dict_set(NULL, kw, sr_str(NULL, a->kw[i], strlen(a->kw[i])), sr_ref(a->kwv[i]));
  }
  for (int i = 0; i < d->nd && p; i++) {
    SrVal *w[2] = {sr_int(NULL, d->w[2 * i]), sr_int(NULL, d->w[2 * i + 1])};
    SrVal *args[6] = {func, sr_nn_int(&s, i), p, sr_nn_keep(&s, sr_tuple(NULL, 2, w)), sr_nn_int(&s, i), kw};
    p = sr_nn_call(&s, "jax.numpy.apply_along_axis", 6, args, 0, NULL, NULL);
  }
  return sr_nn_done(&s, p);
}

static SrVal *jnp_pad(SrInterp *I, SrArgs *a) {
  if (a->n == 1) {
    /* pad_width (and mode) by keyword: as positional arguments */
    int pw = -1, md = -1;
    for (int i = 0; i < a->nkw; i++) {
      if (!strcmp(a->kw[i], "pad_width")) pw = i;
      if (!strcmp(a->kw[i], "mode")) md = i;
    }
    if (pw >= 0) {
      SrVal *v[3] = {a->v[0], a->kwv[pw], md >= 0 ? a->kwv[md] : NULL};
      const char **k = sr_xcalloc((size_t)a->nkw + 1, sizeof *k);
      SrVal **kv = sr_xcalloc((size_t)a->nkw + 1, sizeof *kv);
      int nk = 0;
      for (int i = 0; i < a->nkw; i++)
        if (i != pw && i != md) {
          k[nk] = a->kw[i];
          kv[nk++] = a->kwv[i];
        }
      SrArgs b = {md >= 0 ? 3 : 2, v, nk, k, kv, NULL};
      SrVal *r = jnp_pad(I, &b);
      free(k);
      free(kv);
      return r;
    }
  }
  SrVal *x = a->n >= 1 ? sr_jnp_asarray(I, a->v[0], -1) : NULL;
  if (a->n < 2 || a->n > 3) {
    sr_unref(x);
    return sr_raise(I, "TypeError", "pad() takes from 2 to 3 positional arguments but %d were given", a->n);
  }
  if (!x) return NULL;
  SrVal *mode = a->n == 3 ? a->v[2] : NULL;
  SrVal *r = NULL, *kwv[4] = {0};
  static const char *const kws[4] = {"constant_values", "stat_length", "end_values", "reflect_type"};
  PadData *d = sr_xcalloc(1, sizeof *d);
  d->nd = vtype(I, x)->ndim;
  if (int_pairs(I, a->v[1], d->nd, "pad_width", d->w) < 0) goto done;
  for (int i = 0; i < a->nkw; i++)
    if (!strcmp(a->kw[i], "mode")) mode = a->kwv[i];
  if (mode && mode->kind != SR_V_STR && mode->kind != SR_V_NONE && sr_is_callable(I, mode)) {
    SrArgs rest = *a;
    rest.nkw = 0;
    const char **k = sr_xcalloc((size_t)a->nkw + 1, sizeof *k);
    SrVal **v = sr_xcalloc((size_t)a->nkw + 1, sizeof *v);
    for (int i = 0; i < a->nkw; i++)
      if (strcmp(a->kw[i], "mode")) {
        k[rest.nkw] = a->kw[i];
        v[rest.nkw++] = a->kwv[i];
      }
    rest.kw = k;
    rest.kwv = v;
    r = pad_func(I, x, mode, d, &rest);
    free(k);
    free(v);
    goto done;
  }
  if (mode && mode->kind != SR_V_STR) {
    sr_raise(I, "TypeError", "jnp.pad: mode must be a string or a callable");
    goto done;
  }
  d->mode = 0;
  if (mode) {
    while (d->mode < PAD_NMODES && !str_is(mode, mode_names[d->mode])) d->mode++;
    if (d->mode == PAD_NMODES) {
      sr_raise(I, "NotImplementedError", "Unimplemented padding mode '%.*s' for np.pad.", (int)mode->str.n,
               mode->str.s);
      goto done;
    }
  }
  /* the keyword arguments each mode allows (lax_numpy.pad) */
  static const int allowed[PAD_NMODES] = {[PAD_CONSTANT] = 1, [PAD_LINEAR_RAMP] = 3, [PAD_MAXIMUM] = 2,
                                          [PAD_MEAN] = 2,     [PAD_MEDIAN] = 2,      [PAD_MINIMUM] = 2,
                                          [PAD_REFLECT] = 4,  [PAD_SYMMETRIC] = 4};
  SrBuf bad = SR_BUF_INIT;
  for (int i = 0; i < a->nkw; i++) {
    if (!strcmp(a->kw[i], "mode")) continue;
    int k = 0;
    while (k < 4 && strcmp(a->kw[i], kws[k])) k++;
    if (k < 4 && allowed[d->mode] == k + 1) {
      kwv[k] = a->kwv[i];
      continue;
    }
    sr_buf_printf(&bad, "%s'%s'", bad.len ? ", " : "", a->kw[i]);
  }
  if (bad.len) {
    sr_raise(I, "ValueError", "unsupported keyword arguments for mode '%s': {%s}", mode_names[d->mode],
             sr_buf_str(&bad));
    sr_buf_free(&bad);
    goto done;
  }
  if (kwv[3]) {
    if (str_is(kwv[3], "odd")) {
      d->odd = 1;
    } else if (!str_is(kwv[3], "even")) {
      sr_raise(I, "ValueError", "jnp.pad: reflect_type must be 'even' or 'odd'");
      goto done;
    }
  }
  if (kwv[1] && kwv[1]->kind != SR_V_NONE) {
    d->has_stat = 1;
    if (int_pairs(I, kwv[1], d->nd, "stat_length", d->stat) < 0) goto done;
  }
  if (d->mode == PAD_LINEAR_RAMP && d->nd) {
    SrVal *e[2 * SR_MAX_RANK];
    SrVal *zero = sr_int(NULL, 0);
    int rc = pairs_of(I, kwv[2] ? kwv[2] : zero, d->nd, "end_values", e);
    for (int i = 0; rc == 0 && i < 2 * d->nd; i++) {
      if (e[i]->kind == SR_V_INT || e[i]->kind == SR_V_BOOL) {
        d->end[i] = (double)e[i]->i;
        d->end_int[i] = 1;
      } else if (e[i]->kind == SR_V_FLOAT) {
        d->end[i] = e[i]->f;
      } else {
        sr_raise(I, "TypeError", "jnp.pad: end_values must be numbers");
        rc = -1;
      }
    }
    sr_unref(zero);
    if (rc < 0) goto done;
  }
  /* a nested sequence of constant values as the array it stands for */
  SrVal *cv = !kwv[0] ? sr_int(NULL, 0) : sr_is_seq(kwv[0]) ? sr_jnp_asarray(I, kwv[0], -1) : sr_ref(kwv[0]);
  if (!cv) goto done;
  SrVal *args[2] = {x, cv};
  r = sr_api_jit(I, "_pad", pad_body, d, 2, args);
  sr_unref(cv);
  d = NULL;
done:
  free(d);
  sr_unref(x);
  return r;
}

void sr_jnp_pad_init(void) {
  sr_def("jax.numpy.pad", jnp_pad,
         "pad(array, pad_width, mode='constant', **kwargs): every numpy.pad mode (constant, edge, wrap, reflect, "
         "symmetric, linear_ramp, maximum, minimum, mean, median, empty) or a callable, under jit[name=_pad]");
}
