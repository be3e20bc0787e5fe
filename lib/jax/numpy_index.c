/* numpy_index.c: jax.numpy's indexing by gather and scatter
 * (jax/_src/numpy/indexing.py, jax/_src/ops/scatter.py): x[idx] with
 * integer arrays (NDIndexer, _index_to_gather, _gather), the .at[...]
 * property's get/set/add/subtract/multiply/min/max (_IndexUpdateHelper,
 * _IndexUpdateRef, _scatter_update, _scatter_impl), jnp.take and
 * jnp.take_along_axis.  The static and dynamic slices of x[...] stay in
 * numpy.c's _getitem, which calls sr_jnp_index_gather for the rest. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/rule.h"
#include "core/jaxstate.h"
#include "exec/array.h"
#include "exec/prng.h"
#include "jax/array_methods.h"
#include "jax/builtins_exec.h"
#include "jax/jax.h"
#include "jax/tracers.h"
#include "jax/lax.h"
#include "jax/lax_scatter.h"
#include "jax/np_host.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- NDIndexer ---- */

typedef enum { IT_NONE, IT_ELLIPSIS, IT_INT, IT_SLICE, IT_ARRAY, IT_BOOL, IT_SBOOL } ItKind;

typedef struct It {
  ItKind k;
  SrVal *v;  /* IT_ARRAY: the index array (owned); IT_SLICE: the slice (borrowed), NULL for a full one */
  int64_t i; /* IT_INT; IT_SBOOL: the bool; IT_ARRAY: 1 for np.arange(b) of a scalar bool */
} It;

enum { MAX_IT = 2 * SR_MAX_RANK + 2 };

typedef struct Indexer {
  It it[MAX_IT + SR_MAX_RANK];
  int n;
  int contiguous; /* the advanced indices are next to each other in the raw index */
  const SrType *t;
  int64_t sbool[MAX_IT]; /* scalar_bool_dims: where x gets a size-1 dim for a scalar bool */
  int nsbool;
} Indexer;

static void indexer_free(Indexer *x) {
  for (int i = 0; i < x->n; i++)
    if (x->it[i].k == IT_ARRAY) sr_unref(x->it[i].v);
  x->n = 0;
}

static int is_ellipsis(const SrVal *v) {
  return v->kind == SR_V_WORD && v->str.n == 8 && memcmp(v->str.s, "Ellipsis", 8) == 0;
}

static SrVal *call2(SrInterp *I, const char *fn, SrVal *x, SrVal *y) {
  SrVal *f = sr_lookup_qualname(fn);
  if (!f) return sr_raise(I, "NotImplementedError", "%s is not available", fn);
  SrVal *args[2] = {x, y};
  SrArgs a = {y ? 2 : 1, args, 0, NULL, NULL, NULL};
  return sr_call(I, f, &a);
}

/* eliminate_deprecated_list_indexing's error for a list key. */
static SrVal *list_key_error(SrInterp *I, SrVal *key) {
  int unpack = 0;
  for (int i = 0; i < key->seq.n; i++) {
    SrVal *e = key->seq.items[i];
    SrArrayObj *a = sr_array_of(e);
    SrArray *na = sr_is_ndarray(e) ? sr_ndarray_array(e) : NULL;
    unpack |= (a && a->type->ndim != 0) || (na && na->type->ndim != 0) || sr_is_seq(e) || sr_is_obj(e, &sr_slice_class) || is_ellipsis(e) ||
              e->kind == SR_V_NONE;
  }
  return sr_raise(I, "TypeError",
                  "Using a non-tuple sequence for multidimensional indexing is not allowed; use `arr[%s(seq)]` "
                  "instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 for more information.",
                  unpack ? "tuple" : "array");
}

/* IndexType.from_index's errors for an index of dtype dt. */
static int dtype_error(SrInterp *I, SrDtype dt) {
  sr_raise(I, "TypeError", "Indexer must have integer or boolean type, got indexer with type %s", sr_dtype_name(dt));
  return -1;
}

int sr_jnp_validate_slice(SrInterp *I, SrVal *slice, int position) {
  SrVal *tracer = NULL;
  for (int i = 0; i < 3 && !tracer; i++) {
    SrVal *e = sr_slice_part(slice, i);
    if (sr_array_of(e) && !sr_tracers_is_concrete(e)) tracer = e;
  }
  if (!tracer) return 0;
  SrBuf b = SR_BUF_INIT, og = SR_BUF_INIT;
  sr_val_str(&b, slice);
  sr_tracer_origin_msg(I, tracer, &og);
  sr_raise(I, "IndexError",
           "Array slice indices must have static start/stop/step to be used with NumPy indexing syntax. Got %s at "
           "position %d. To index an array at a dynamic position with a static slice size, use x[jax.ds(start, "
           "size)] or lax.dynamic_slice/dynamic_update_slice instead (JAX does not support dynamically sized "
           "arrays within traced functions).%s",
           sr_buf_str(&b), position, sr_buf_str(&og));
  sr_buf_free(&b);
  sr_buf_free(&og);
  return -1;
}

/* One entry of the raw index. */
static int parse_entry(SrInterp *I, SrVal *v, int position, It *out) {
  memset(out, 0, sizeof *out);
  if (sr_is_ndarray(v)) {
    /* a numpy array (or scalar) index is the jax.Array it becomes */
    SrVal *a = sr_ndarray_to_jax(I, v, 0);
    if (!a) return -1;
    int rc = parse_entry(I, a, position, out);
    sr_unref(a);
    return rc;
  }
  if (v->kind == SR_V_NONE) out->k = IT_NONE;
  else if (is_ellipsis(v)) out->k = IT_ELLIPSIS;
  else if (v->kind == SR_V_INT) out->k = IT_INT, out->i = v->i;
  else if (sr_is_ndarray(v)) {
    /* numpy values: an integer scalar (np.int64(2)) is a static int, as
       numpy's integers are; arrays index as the jax.Arrays they become */
    SrArray *na = sr_ndarray_array(v);
    if (sr_np_is_scalar(v) && na && (sr_dtype_is_int(na->type->dtype))) {
      int64_t k;
      if (sr_as_int(I, v, "index", &k) < 0) return -1;
      out->k = IT_INT, out->i = k;
      return 0;
    }
    SrVal *j = sr_ndarray_to_jax(I, v, 0);
    if (!j) return -1;
    int rc = parse_entry(I, j, position, out);
    sr_unref(j);
    return rc;
  } else if (sr_is_obj(v, &sr_slice_class)) {
    if (sr_jnp_validate_slice(I, v, position) < 0) return -1;
    out->k = IT_SLICE, out->v = v;
  }
  else if (v->kind == SR_V_BOOL) out->k = IT_SBOOL, out->i = v->i != 0;
  else if (sr_array_of(v) && sr_array_of(v)->type->ndim == 0 && sr_array_of(v)->type->dtype == SR_BOOL) {
    /* expand_bool_indices: a scalar bool stays, concrete */
    if (sr_array_of(v)->kind != SR_AV_CONCRETE) {
      sr_raise(I, "NonConcreteBooleanIndexError", "Array boolean indices must be concrete; got bool[]\n");
      return -1;
    }
    out->k = IT_SBOOL, out->i = sr_val_truthy(v);
  } else if (sr_array_of(v) && sr_array_of(v)->type->dtype == SR_BOOL) {
    out->k = IT_BOOL, out->v = sr_ref(v);
  } else if (sr_array_of(v)) {
    if (!sr_dtype_is_int(sr_array_of(v)->type->dtype)) return dtype_error(I, sr_array_of(v)->type->dtype);
    out->k = IT_ARRAY, out->v = sr_ref(v);
  } else if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    SrVal *a = sr_jnp_asarray(I, v, v->seq.n ? -1 : SR_I32);
    if (!a) return -1;
    SrDtype dt = sr_value_type(I, a)->dtype;
    if (dt == SR_BOOL) {
      out->k = IT_BOOL, out->v = a;
      return 0;
    }
    if (!sr_dtype_is_int(dt)) {
      sr_unref(a);
      return dtype_error(I, dt);
    }
    out->k = IT_ARRAY, out->v = a;
  } else if (v->kind == SR_V_FLOAT) {
    return dtype_error(I, SR_F64);
  } else if (v->kind == SR_V_COMPLEX) {
    return dtype_error(I, SR_C128);
  } else if (v->kind == SR_V_STR) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    sr_raise(I, "TypeError", "JAX does not support string indexing; got idx=%s", sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  } else {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, v);
    sr_raise(I, "IndexError",
             "only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and integer or boolean arrays are "
             "valid indices. Got %s",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

static void raw_free(It *raw, int n) {
  for (int j = 0; j < n; j++)
    if (raw[j].k == IT_ARRAY || raw[j].k == IT_BOOL) sr_unref(raw[j].v);
}

/* lax.full(shape, 0, dtype) */
static SrVal *zeros(SrInterp *I, const int64_t *shape, int nd, int dtype) {
  SrVal *zero = sr_int(NULL, 0);
  SrVal *r = sr_lax_full(I, shape, nd, zero, dtype, NULL);
  sr_unref(zero);
  return r;
}

/* expand_bool_indices for one mask consuming axes from `axis`: its
   nonzero positions (np.where), one int32 index array per dim, into out
   (which gets mask.ndim entries). */
static int expand_bool(SrInterp *I, SrVal *mask, const SrType *t, int axis, int position, It *out) {
  const SrType *mt = sr_value_type(I, mask);
  SrArrayObj *ao = sr_array_of(mask);
  if (!ao || ao->kind != SR_AV_CONCRETE) {
    SrBuf b = SR_BUF_INIT;
    sr_aval_str(&b, mt); /* str(core.typeof(index)): bool[4] */
    sr_raise(I, "NonConcreteBooleanIndexError", "Array boolean indices must be concrete; got %s\n", sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  int match = 1;
  for (int d = 0; d < mt->ndim; d++) match &= mt->dims[d].size == 0 || mt->dims[d].size == t->dims[axis + d].size;
  if (!match) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    sr_buf_putc(&c, '[');
    for (int d = 0; d < mt->ndim; d++) {
      sr_buf_printf(&b, d ? ", %lld" : "%lld", (long long)mt->dims[d].size);
      sr_buf_printf(&c, d ? ", %lld" : "%lld", (long long)t->dims[axis + d].size);
    }
    sr_buf_puts(&b, mt->ndim == 1 ? ",)" : ")");
    sr_buf_putc(&c, ']');
    sr_raise(I, "IndexError", "boolean index did not match shape of indexed array in index %d: got %s, expected %s",
             position, sr_buf_str(&b), sr_buf_str(&c));
    sr_buf_free(&b);
    sr_buf_free(&c);
    return -1;
  }
  SrArray *arr = sr_concrete_of(I, mask, NULL);
  const unsigned char *data = arr ? sr_concrete_host_data(I, arr) : NULL;
  if (arr) sr_array_unref(arr);
  if (!data) return -1;
  int64_t n = sr_type_numel(mt), pos[SR_MAX_RANK] = {0};
  SrVal *lists[SR_MAX_RANK];
  for (int d = 0; d < mt->ndim; d++) lists[d] = sr_seq(NULL, SR_V_LIST, 0);
  for (int64_t k = 0; k < n; k++) {
    if (data[k])
      for (int d = 0; d < mt->ndim; d++) sr_seq_push(NULL, lists[d], sr_int(NULL, pos[d]));
    for (int d = mt->ndim - 1; d >= 0 && ++pos[d] == mt->dims[d].size; d--) pos[d] = 0;
  }
  free((void *)data);
  int rc = 0;
  for (int d = 0; d < mt->ndim; d++) {
    SrVal *a = rc == 0 ? sr_jnp_asarray(I, lists[d], SR_I32) : NULL;
    if (!a) rc = -1;
    out[d] = (It){IT_ARRAY, a, 0};
    sr_unref(lists[d]);
  }
  if (rc < 0)
    for (int d = 0; d < mt->ndim; d++) sr_unref(out[d].v);
  return rc;
}

/* NDIndexer.from_raw_indices, expand_bool_indices, then expand_ellipses
   (the contiguity of the advanced indices is taken on the index with its
   masks expanded, as _index_to_gather sees it). */
static int indexer_parse(SrInterp *I, SrVal *key, const SrType *t, Indexer *x) {
  memset(x, 0, sizeof *x);
  x->t = t;
  if (key->kind == SR_V_LIST) {
    list_key_error(I, key);
    return -1;
  }
  int nk = key->kind == SR_V_TUPLE ? key->seq.n : 1;
  SrVal **keys = key->kind == SR_V_TUPLE ? key->seq.items : &key;
  if (nk > MAX_IT - SR_MAX_RANK) return sr_raise(I, "IndexError", "too many indices"), -1;
  It raw[MAX_IT];
  int consumed = 0, ell = -1;
  for (int k = 0; k < nk; k++) {
    if (parse_entry(I, keys[k], k, &raw[k]) < 0) {
      raw_free(raw, k);
      return -1;
    }
    if (raw[k].k == IT_ELLIPSIS) {
      if (ell >= 0) {
        raw_free(raw, k + 1);
        return sr_raise(I, "IndexError", "an index can only have a single ellipsis ('...')"), -1;
      }
      ell = k;
    }
    if (raw[k].k == IT_BOOL) consumed += sr_value_type(I, raw[k].v)->ndim;
    else if (raw[k].k != IT_NONE && raw[k].k != IT_ELLIPSIS && raw[k].k != IT_SBOOL) consumed++;
  }
  if (consumed > t->ndim) {
    raw_free(raw, nk);
    return sr_raise(I, "IndexError", "Too many indices: array is %d-dimensional, but %d were indexed", t->ndim,
                    consumed),
           -1;
  }
  /* masks into index arrays */
  It ex[MAX_IT + SR_MAX_RANK];
  int nex = 0, axis = 0, fill = t->ndim - consumed;
  for (int k = 0; k < nk; k++) {
    It *e = &raw[k];
    if (e->k == IT_BOOL) {
      int nd = sr_value_type(I, e->v)->ndim;
      if (expand_bool(I, e->v, t, axis, k, ex + nex) < 0) {
        raw_free(raw + k, nk - k);
        raw_free(ex, nex);
        return -1;
      }
      sr_unref(e->v);
      nex += nd;
      axis += nd;
      continue;
    }
    if (e->k == IT_ELLIPSIS) axis += fill;
    else if (e->k != IT_NONE && e->k != IT_SBOOL) axis++;
    ex[nex++] = *e;
  }
  int first = -1, last = -1, nadv = 0;
  for (int k = 0; k < nex; k++)
    if (ex[k].k == IT_INT || ex[k].k == IT_ARRAY) {
      if (first < 0) first = k;
      last = k;
      nadv++;
    }
  x->contiguous = nadv == 0 || last - first + 1 == nadv;
  for (int k = 0; k < nex; k++) {
    if (ex[k].k == IT_ELLIPSIS) {
      for (int f = 0; f < fill; f++) x->it[x->n++] = (It){IT_SLICE, NULL, 0};
      fill = 0;
    } else {
      x->it[x->n++] = ex[k];
    }
  }
  for (int f = 0; f < fill; f++) x->it[x->n++] = (It){IT_SLICE, NULL, 0};
  /* expand_scalar_bool_indices: x gets a size-1 dim where each scalar bool
     is, which np.arange(int(b)) indexes */
  for (int k = 0; k < x->n; k++) {
    It *e = &x->it[k];
    if (e->k == IT_SBOOL) {
      if (t->ndim + x->nsbool + 1 > SR_MAX_RANK) return sr_raise(I, "IndexError", "too many indices"), -1;
      x->sbool[x->nsbool++] = k;
      SrVal *l = e->i ? sr_seq(NULL, SR_V_LIST, 1) : sr_seq(NULL, SR_V_LIST, 0);
      if (e->i) sr_seq_push(NULL, l, sr_int(NULL, 0));
      SrVal *a = sr_jnp_asarray(I, l, SR_I32);
      sr_unref(l);
      if (!a) return -1;
      *e = (It){IT_ARRAY, a, 1};
    }
  }
  if (x->nsbool) {
    SrTypeBuilder b;
    sr_type_builder(&b, t);
    b.ndim = 0;
    for (int k = 0, d = 0; k < x->n; k++) {
      It *e = &x->it[k];
      if (e->k == IT_NONE) continue;
      if (e->k == IT_ARRAY && e->i == 1) b.dims[b.ndim++] = (SrDim){.size = 1};
      else b.dims[b.ndim++] = t->dims[d++];
    }
    x->t = sr_type_get(&b);
  }
  return 0;
}

static int indexer_is_advanced(SrInterp *I, const Indexer *x) {
  for (int i = 0; i < x->n; i++)
    if (x->it[i].k == IT_ARRAY && sr_value_type(I, x->it[i].v)->ndim > 0) return 1;
  return 0;
}

static SrVal *host_false(SrInterp *I, int64_t n) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)n);
  for (int64_t i = 0; i < n; i++) sr_seq_push(NULL, l, sr_bool(0));
  SrVal *a = sr_jnp_asarray(I, l, SR_BOOL);
  sr_unref(l);
  return a;
}

int sr_jnp_check_static_index(SrInterp *I, int64_t i, int axis, int64_t size, int normalize) {
  int64_t normed = normalize && i < 0 ? i + size : i;
  if (normed >= 0 && normed < size) return 0;
  sr_raise(I, "IndexError", "index %lld out of bounds for axis %d with size %lld (normalize_indices=%s)", (long long)i,
           axis, (long long)size, normalize ? "True" : "False");
  return -1;
}

/* NDIndexer.validate_static_indices over the parsed index */
static int indexer_validate(SrInterp *I, Indexer *x, int normalize) {
  for (int k = 0, axis = 0; k < x->n; k++) {
    It *e = &x->it[k];
    if (e->k == IT_NONE) continue;
    int64_t size = x->t->dims[axis].size;
    if (e->k == IT_INT && sr_jnp_check_static_index(I, e->i, axis, size, normalize) < 0) return -1;
    axis++;
  }
  return 0;
}

/* NDIndexer.normalize_indices: a negative int plus the axis size; a
   signed index array through select(i < 0, i + size, i). */
static int indexer_normalize(SrInterp *I, Indexer *x) {
  for (int k = 0, axis = 0; k < x->n; k++) {
    It *e = &x->it[k];
    if (e->k == IT_NONE) continue;
    int64_t size = x->t->dims[axis++].size;
    if (e->k == IT_INT && e->i < 0) e->i += size;
    if (e->k != IT_ARRAY) continue;
    SrDtype dt = sr_value_type(I, e->v)->dtype;
    if (sr_dtype_kind(dt) == SR_DK_UINT) continue;
    SrVal *zero = sr_int(NULL, 0), *sz = sr_int(NULL, size);
    SrVal *c = sr_lax_convert(I, sz, dt, 0, NULL);
    /* np.arange(int(b)) < 0 is numpy's: all False */
    SrVal *neg = !c ? NULL : e->i == 1 ? host_false(I, sr_value_type(I, e->v)->dims[0].size)
                                       : call2(I, "jax.numpy.less", e->v, zero);
    SrVal *sum = neg ? sr_lax_binary(I, SR_P_add, e->v, c) : NULL;
    SrVal *r = sum ? sr_lax_select(I, neg, sum, e->v) : NULL;
    sr_unref(zero);
    sr_unref(sz);
    sr_unref(c);
    sr_unref(neg);
    sr_unref(sum);
    if (!r) return -1;
    sr_unref(e->v);
    e->v = r;
  }
  return 0;
}

/* ---- _index_to_gather ---- */

typedef struct GatherIx {
  SrVal *indices; /* gather_indices (owned) */
  int64_t offset[SR_MAX_RANK], collapsed[SR_MAX_RANK], start_map[SR_MAX_RANK];
  int noffset, ncollapsed, nstart_map;
  int64_t gather_slice[SR_MAX_RANK], slice_shape[MAX_IT + SR_MAX_RANK], newaxis[MAX_IT], reversed[SR_MAX_RANK];
  int ngather_slice, nslice_shape, nnewaxis, nreversed;
  int unique; /* no advanced indices: unique and sorted */
  SrDim sdims[MAX_IT + SR_MAX_RANK]; /* slice_spec: each slice_shape dim's mesh axes, */
  const SrMesh *smesh;  /* over this mesh (NULL: none named) */
} GatherIx;

static SrVal *dnums_text(const char *head, const char *const *names, const int64_t *const *v, const int *n) {
  SrBuf s = SR_BUF_INIT;
  sr_buf_puts(&s, head);
  sr_buf_putc(&s, '(');
  for (int i = 0; i < 5; i++) {
    if (i) sr_buf_puts(&s, ", ");
    sr_buf_puts(&s, names[i]);
    sr_buf_putc(&s, '=');
    sr_ints_str(&s, v[i], n[i]);
  }
  sr_buf_putc(&s, ')');
  SrVal *r = sr_word(NULL, sr_buf_str(&s), s.len);
  sr_buf_free(&s);
  return r;
}

static SrVal *gdn_text(const GatherIx *g) {
  static const char *const names[5] = {"offset_dims", "collapsed_slice_dims", "start_index_map",
                                       "operand_batching_dims", "start_indices_batching_dims"};
  const int64_t *v[5] = {g->offset, g->collapsed, g->start_map, NULL, NULL};
  int n[5] = {g->noffset, g->ncollapsed, g->nstart_map, 0, 0};
  return dnums_text("GatherDimensionNumbers", names, v, n);
}

static SrVal *sdn_text(const GatherIx *g) {
  static const char *const names[5] = {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                                       "operand_batching_dims", "scatter_indices_batching_dims"};
  const int64_t *v[5] = {g->offset, g->collapsed, g->start_map, NULL, NULL};
  int n[5] = {g->noffset, g->ncollapsed, g->nstart_map, 0, 0};
  return dnums_text("ScatterDimensionNumbers", names, v, n);
}

static void sort_ints(int64_t *v, int n) {
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
      int64_t s = v[k];
      v[k] = v[k - 1];
      v[k - 1] = s;
    }
}

typedef struct GIdx {
  SrVal *a; /* owned */
  int start;
} GIdx;

static SrVal *i32_scalar(SrInterp *I, int64_t v) {
  SrVal *iv = sr_int(NULL, v);
  SrVal *r = sr_lax_convert(I, iv, SR_I32, 0, NULL);
  sr_unref(iv);
  return r;
}

/* _index_to_gather on a parsed, normalized indexer. */
static int index_to_gather(SrInterp *I, Indexer *x, GatherIx *o) {
  memset(o, 0, sizeof *o);
  const SrType *t = x->t;
  int advanced = indexer_is_advanced(I, x);
  GIdx gi[MAX_IT];
  int ngi = 0, rc = -1;
  int64_t gshape[2 * SR_MAX_RANK + 1];
  int ngshape = 0;
  /* the advanced indices: every int and index array, broadcast together */
  SrVal *adv[MAX_IT];
  int nadv = 0, first_adv = -1, adv_axes[MAX_IT];
  if (advanced) {
    for (int k = 0, axis = 0; k < x->n; k++) {
      It *e = &x->it[k];
      if (e->k == IT_NONE) continue;
      if (e->k == IT_INT || e->k == IT_ARRAY) {
        if (first_adv < 0) first_adv = k;
        adv_axes[nadv] = axis;
        if (e->k == IT_INT) {
          SrVal *iv = sr_int(NULL, e->i);
          adv[nadv++] = sr_jnp_asarray(I, iv, -1);
          sr_unref(iv);
        } else {
          adv[nadv++] = sr_ref(e->v);
        }
        if (!adv[nadv - 1]) goto done;
      }
      axis++;
    }
  }
  int x_axis = 0, y_axis = 0, cy_axis = 0;
  for (int k = 0; k < x->n; k++) {
    It *e = &x->it[k];
    if (nadv && ((x->contiguous && k == first_adv) || (!x->contiguous && k == 0))) {
      /* util._broadcast_arrays */
      int64_t bshape[SR_MAX_RANK];
      int bnd = 0;
      for (int a = 0; a < nadv; a++) bnd = sr_value_type(I, adv[a])->ndim > bnd ? sr_value_type(I, adv[a])->ndim : bnd;
      for (int d = 0; d < bnd; d++) bshape[d] = 1;
      for (int a = 0; a < nadv; a++) {
        const SrType *at = sr_value_type(I, adv[a]);
        for (int d = 0; d < at->ndim; d++) {
          int64_t s = at->dims[d].size, *b = &bshape[bnd - at->ndim + d];
          if (*b == 1) *b = s;
          else if (s != 1 && s != *b) {
            SrBuf m = SR_BUF_INIT;
            for (int q = 0; q < nadv; q++) {
              const SrType *qt = sr_value_type(I, adv[q]);
              if (q) sr_buf_puts(&m, ", ");
              sr_buf_putc(&m, '(');
              for (int r = 0; r < qt->ndim; r++) sr_buf_printf(&m, r ? ", %lld" : "%lld", (long long)qt->dims[r].size);
              sr_buf_puts(&m, qt->ndim == 1 ? ",)" : ")");
            }
            sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[%s]", sr_buf_str(&m));
            sr_buf_free(&m);
            goto done;
          }
        }
      }
      if (ngshape + bnd > 2 * SR_MAX_RANK || bnd > SR_MAX_RANK) {
        sr_raise(I, "IndexError", "too many indices");
        goto done;
      }
      int start = ngshape;
      for (int a = 0; a < nadv; a++) {
        const SrType *at = sr_value_type(I, adv[a]);
        int same = at->ndim == bnd;
        for (int d = 0; same && d < bnd; d++) same = at->dims[d].size == bshape[d];
        SrVal *b = adv[a];
        if (!same) {
          SrVal *shp = sr_int_tuple(bshape, bnd);
          b = call2(I, "jax.numpy.broadcast_to", adv[a], shp);
          sr_unref(shp);
          if (!b) goto done;
        } else {
          sr_ref(b);
        }
        SrVal *c = sr_lax_convert(I, b, SR_I32, 0, NULL);
        sr_unref(b);
        if (!c) goto done;
        gi[ngi++] = (GIdx){c, start};
        o->start_map[o->nstart_map++] = adv_axes[a];
        o->collapsed[o->ncollapsed++] = adv_axes[a];
      }
      /* aia_spec: the broadcast advanced indices' spec */
      const SrType *ft = sr_value_type(I, gi[ngi - nadv].a);
      if (ft->mesh && !o->smesh) o->smesh = ft->mesh;
      for (int d = 0; d < bnd; d++) {
        o->sdims[o->nslice_shape] = ft->dims[d];
        gshape[ngshape++] = bshape[d], o->slice_shape[o->nslice_shape++] = bshape[d];
      }
      y_axis += bnd;
      cy_axis += bnd;
    }
    if (advanced && (e->k == IT_INT || e->k == IT_ARRAY)) {
      x_axis++;
      o->gather_slice[o->ngather_slice++] = 1;
      continue;
    }
    if (e->k == IT_INT || e->k == IT_ARRAY) {
      int64_t size = t->dims[x_axis].size;
      if (size == 0) {
        sr_raise(I, "IndexError", "index is out of bounds for axis %d with size 0", x_axis);
        goto done;
      }
      SrVal *c = e->k == IT_INT ? i32_scalar(I, e->i) : sr_lax_convert(I, e->v, SR_I32, 0, NULL);
      if (!c) goto done;
      gi[ngi++] = (GIdx){c, ngshape};
      o->collapsed[o->ncollapsed++] = x_axis;
      o->gather_slice[o->ngather_slice++] = 1;
      o->start_map[o->nstart_map++] = x_axis;
      x_axis++;
    } else if (e->k == IT_NONE) {
      memset(&o->sdims[o->nslice_shape], 0, sizeof o->sdims[0]);
      o->slice_shape[o->nslice_shape++] = 1;
      o->newaxis[o->nnewaxis++] = y_axis;
      y_axis++;
    } else {
      int64_t size = t->dims[x_axis].size, s0 = 0, s1 = size, st = 1, cnt = size;
      if (e->v && sr_slice_indices(I, e->v, size, &s0, &s1, &st, &cnt) < 0) goto done;
      o->sdims[o->nslice_shape] = t->dims[x_axis];
      if (t->dims[x_axis].nax) o->smesh = t->mesh;
      o->slice_shape[o->nslice_shape++] = cnt;
      if (st == 1) {
        if (cnt != size) {
          SrVal *c = i32_scalar(I, s0);
          if (!c) goto done;
          gi[ngi++] = (GIdx){c, ngshape};
          o->start_map[o->nstart_map++] = x_axis;
        }
        o->gather_slice[o->ngather_slice++] = cnt;
        o->offset[o->noffset++] = cy_axis;
      } else {
        /* array(start) + array(step) * iota(cnt), reversed for a negative step */
        SrVal *a = i32_scalar(I, s0), *b = i32_scalar(I, st);
        SrVal *io = b ? sr_lax_iota(I, SR_I32, &cnt, 1, 0, NULL) : NULL;
        SrVal *m = io ? call2(I, "jax.numpy.multiply", b, io) : NULL;
        SrVal *ix = m && a ? call2(I, "jax.numpy.add", a, m) : NULL;
        sr_unref(a);
        sr_unref(b);
        sr_unref(io);
        sr_unref(m);
        if (!ix) goto done;
        if (st < 0) {
          o->reversed[o->nreversed++] = cy_axis;
          int64_t d0 = 0;
          SrVal *r = sr_lax_rev(I, ix, &d0, 1);
          sr_unref(ix);
          if (!(ix = r)) goto done;
        }
        o->gather_slice[o->ngather_slice++] = 1;
        gi[ngi++] = (GIdx){ix, ngshape};
        o->start_map[o->nstart_map++] = x_axis;
        gshape[ngshape++] = cnt;
        o->collapsed[o->ncollapsed++] = x_axis;
      }
      cy_axis++;
      y_axis++;
      x_axis++;
    }
  }
  if (ngi == 0) {
    int64_t z = 0;
    o->indices = zeros(I, &z, 1, SR_I32);
  } else if (ngi == 1) {
    int64_t d = sr_value_type(I, gi[0].a)->ndim;
    o->indices = sr_lax_expand_dims(I, gi[0].a, &d, 1);
  } else {
    gshape[ngshape] = 1;
    SrVal *parts[MAX_IT];
    int np = 0;
    for (int i = 0; i < ngi; i++) {
      int nd = sr_value_type(I, gi[i].a)->ndim;
      int64_t dims[SR_MAX_RANK];
      for (int d = 0; d < nd; d++) dims[d] = gi[i].start + d;
      parts[np] = sr_lax_broadcast_in_dim(I, gi[i].a, gshape, ngshape + 1, dims, nd, NULL);
      if (!parts[np]) break;
      np++;
    }
    o->indices = np == ngi ? sr_lax_concatenate(I, np, parts, ngshape) : NULL;
    for (int i = 0; i < np; i++) sr_unref(parts[i]);
  }
  if (!o->indices) goto done;
  sort_ints(o->collapsed, o->ncollapsed);
  o->unique = nadv == 0;
  rc = 0;
done:
  for (int a = 0; a < nadv; a++) sr_unref(adv[a]);
  for (int i = 0; i < ngi; i++) sr_unref(gi[i].a);
  return rc;
}

/* ---- options: mode, fill_value, indices_are_sorted, unique_indices ---- */

typedef struct IxOpts {
  SrVal *mode;     /* borrowed: None or a str or a GatherScatterMode word */
  SrVal *fill;     /* borrowed or NULL */
  int sorted, unique, normalize;
  SrVal *out_sharding; /* borrowed, or NULL */
  SrVal *apply;        /* .apply(func)'s func (borrowed), or NULL */
} IxOpts;

/* GatherScatterMode.from_any: the mode's name; NULL (ValueError) if unknown. */
static const char *mode_name(SrInterp *I, SrVal *m, int gather) {
  if (!m || m->kind == SR_V_NONE) return gather ? "PROMISE_IN_BOUNDS" : "FILL_OR_DROP";
  const char *s = m->str.s;
  size_t n = m->str.n;
  if (m->kind == SR_V_WORD && n > 18 && memcmp(s, "GatherScatterMode.", 18) == 0) s += 18, n -= 18;
  if (m->kind == SR_V_STR || m->kind == SR_V_WORD) {
    if ((n == 4 && memcmp(s, "clip", 4) == 0) || (n == 4 && memcmp(s, "CLIP", 4) == 0)) return "CLIP";
    if ((n == 4 && memcmp(s, "fill", 4) == 0) || (n == 4 && memcmp(s, "drop", 4) == 0) ||
        (n == 12 && memcmp(s, "FILL_OR_DROP", 12) == 0))
      return "FILL_OR_DROP";
    if ((n == 17 && memcmp(s, "promise_in_bounds", 17) == 0) || (n == 17 && memcmp(s, "PROMISE_IN_BOUNDS", 17) == 0))
      return "PROMISE_IN_BOUNDS";
    if ((n == 7 && memcmp(s, "one_hot", 7) == 0) || (n == 7 && memcmp(s, "ONE_HOT", 7) == 0)) return "ONE_HOT";
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, m);
  sr_raise(I, "ValueError", "Unknown gather mode \"%s\"", sr_buf_str(&b));
  sr_buf_free(&b);
  return NULL;
}

static SrVal *mode_word(const char *name) {
  char buf[64];
  int n = snprintf(buf, sizeof buf, "GatherScatterMode.%s", name);
  return sr_word(NULL, buf, (size_t)n);
}

/* slicing.gather's fill_value for FILL_OR_DROP: the given one, or NaN,
   the integer's least (signed) or greatest (unsigned) value, True. */
static SrVal *fill_param(SrInterp *I, SrVal *fill, SrDtype dt) {
  if (fill && fill->kind != SR_V_NONE) {
    SrArrayObj *a = sr_array_of(fill);
    if (a) {
      if (a->type->ndim != 0)
        return sr_raise(I, "ValueError", "fill_value argument to indexed get() must be a scalar");
      if (a->kind != SR_AV_CONCRETE)
        return sr_raise(I, "ConcretizationTypeError",
                        "Abstract tracer value encountered where concrete value is expected: fill_value argument to "
                        "indexed get()");
      return sr_unop(I, SR_OP_ITEM, fill);
    }
    if (sr_is_seq(fill)) return sr_raise(I, "ValueError", "fill_value argument to indexed get() must be a scalar");
    return sr_ref(fill);
  }
  if (sr_dtype_is_inexact(dt)) return sr_float(NULL, NAN);
  if (dt == SR_BOOL) return sr_bool(1);
  /* a key: every word of its data uint32's max */
  if (sr_prng_impl_of(dt) >= 0) return sr_int(NULL, 4294967295);
  int bits = (int)sr_elem_size(dt) * 8;
  if (sr_dtype_kind(dt) == SR_DK_UINT) {
    if (bits >= 64) return sr_int(NULL, -1); /* no int64 holds uint64's max; its bits */
    return sr_int(NULL, (int64_t)(((uint64_t)1 << bits) - 1));
  }
  return sr_int(NULL, bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)));
}

/* indexing._gather: x[key] through a gather. */
static SrVal *do_gather(SrInterp *I, SrVal *x, SrVal *key, const IxOpts *op) {
  const SrType *t = sr_value_type(I, x);
  Indexer ix;
  if (indexer_parse(I, key, t, &ix) < 0) return NULL;
  GatherIx g;
  SrVal *r = NULL, *y = NULL;
  const char *mode = mode_name(I, op->mode, 1);
  /* rewriting_take: under jax_check_static_indices, for a mode of None or
     promise_in_bounds */
  int check = mode && I->jax->check_static_indices && !ix.nsbool && strcmp(mode, "PROMISE_IN_BOUNDS") == 0;
  if (!mode || (check && indexer_validate(I, &ix, op->normalize) < 0) ||
      (op->normalize && indexer_normalize(I, &ix) < 0) || index_to_gather(I, &ix, &g) < 0) {
    indexer_free(&ix);
    return NULL;
  }
  /* _gather: y = lax.expand_dims(y, indexer.scalar_bool_dims) */
  SrVal *xe = ix.nsbool ? sr_lax_expand_dims(I, x, ix.sbool, ix.nsbool) : sr_ref(x);
  indexer_free(&ix);
  if (!xe) {
    sr_unref(g.indices);
    return NULL;
  }
  x = xe;
  int empty = 0;
  for (int i = 0; i < g.nslice_shape; i++) empty |= g.slice_shape[i] == 0;
  if (empty) {
    r = zeros(I, g.slice_shape, g.nslice_shape, t->dtype);
    sr_unref(g.indices);
    sr_unref(xe);
    return r;
  }
  const SrType *it = sr_value_type(I, g.indices);
  int gempty = 0;
  for (int i = 0; i < it->ndim; i++) gempty |= it->dims[i].size == 0;
  if (gempty) {
    y = sr_ref(x);
  } else {
    int fill = strcmp(mode, "FILL_OR_DROP") == 0;
    SrVal *fv = fill ? fill_param(I, op->fill, t->dtype) : sr_none();
    SrVal *in[2] = {sr_ref(x), sr_ref(g.indices)};
    if (fv && sr_auto_insert_reshard(I, 2, in) == 0)
      y = sr_bindv(I, SR_P_gather, 2, in, "dimension_numbers", gdn_text(&g), "fill_value", fv, "indices_are_sorted",
                   sr_bool(op->sorted || g.unique), "mode", mode_word(mode), "slice_sizes",
                   sr_int_tuple(g.gather_slice, g.ngather_slice), "unique_indices", sr_bool(op->unique || g.unique),
                   NULL);
    else sr_unref(fv);
    sr_unref(in[0]);
    sr_unref(in[1]);
  }
  sr_unref(g.indices);
  sr_unref(xe);
  if (!y) return NULL;
  if (g.nreversed) {
    SrVal *z = sr_lax_rev(I, y, g.reversed, g.nreversed);
    sr_unref(y);
    if (!(y = z)) return NULL;
  }
  r = g.nnewaxis ? sr_lax_expand_dims(I, y, g.newaxis, g.nnewaxis) : sr_ref(y);
  sr_unref(y);
  return r;
}

/* Whether x[key] needs a gather: an index array of rank 1 or more, or a
   list, anywhere in the key. */
static int needs_gather(SrVal *key) {
  if (key->kind == SR_V_LIST) return 1;
  int nk = key->kind == SR_V_TUPLE ? key->seq.n : 1;
  SrVal **keys = key->kind == SR_V_TUPLE ? key->seq.items : &key;
  for (int k = 0; k < nk; k++) {
    SrArrayObj *a = sr_array_of(keys[k]);
    if ((a && a->type->ndim > 0) || keys[k]->kind == SR_V_LIST || keys[k]->kind == SR_V_TUPLE) return 1;
  }
  return 0;
}

SrVal *sr_jnp_index_gather(SrInterp *I, SrVal *x, SrVal *key) {
  IxOpts o = {NULL, NULL, 0, 0, 1, NULL, NULL};
  return do_gather(I, x, key, &o);
}

/* ---- _scatter_update ---- */

static SrVal *do_scatter(SrInterp *I, SrVal *x0, SrVal *key, SrVal *y0, int prim, const IxOpts *op) {
  SrVal *x = sr_jnp_asarray(I, x0, -1);
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  SrDtype dtype = t->dtype;
  int weak = t->weak;
  SrVal *y = NULL;
  if (y0->kind == SR_V_INT && sr_dtype_is_int(dtype) && sr_int_fits(y0->i, dtype)) y = sr_jnp_asarray(I, y0, dtype);
  else y = sr_jnp_asarray(I, y0, -1);
  Indexer ix;
  GatherIx g;
  memset(&g, 0, sizeof g);
  SrVal *r = NULL, *args[2] = {x, y};
  const char *mode = y ? mode_name(I, op->mode, 0) : NULL;
  if (!mode || indexer_parse(I, key, t, &ix) < 0) goto out;
  /* indexer.scalar_bool_dims: x gets size-1 dims there for the scatter */
  int64_t sbool[MAX_IT];
  int nsbool = ix.nsbool;
  memcpy(sbool, ix.sbool, sizeof(int64_t) * (size_t)nsbool);
  int bad = (op->normalize && indexer_normalize(I, &ix) < 0) || index_to_gather(I, &ix, &g) < 0;
  indexer_free(&ix);
  if (bad) goto out;
  int empty = 0;
  for (int i = 0; i < g.nslice_shape; i++) empty |= g.slice_shape[i] == 0;
  if (empty) {
    r = sr_ref(x);
    goto out;
  }
  {
    /* dtypes.safe_to_cast(y, x): result_type(y, x's dtype taken as strong)
       is x's dtype, else the deprecation's FutureWarning */
    const SrType *yt = sr_value_type(I, y);
    if (yt->dtype != dtype) {
      SrDtype dts[2] = {yt->dtype, dtype}, rd;
      int weaks[2] = {yt->weak, 0}, rw;
      if (sr_jnp_lattice_result(I, 2, dts, weaks, &rd, &rw) < 0) goto out;
      if (rd != dtype) {
        sr_warn(I, "FutureWarning",
                "scatter inputs have incompatible types: cannot safely cast value from dtype=%s to dtype=%s with "
                "jax_numpy_dtype_promotion=%s. In future JAX releases this will result in an error.",
                sr_dtype_name(yt->dtype), sr_dtype_name(dtype), I->jax->strict_promotion ? "strict" : "standard");
        if (I->exc) goto out;
      }
    }
    /* util.promote_dtypes: the dtypes only (strict promotion's error too) */
    int pw = 0;
    SrDtype pd;
    if (sr_jnp_result_dtype_checked(I, 2, args, &pd, &pw) < 0) goto out;
    SrVal *cx = sr_jnp_convert(I, x, pd, pw), *cy = cx ? sr_jnp_convert(I, y, pd, pw) : NULL;
    sr_unref(x);
    sr_unref(y);
    x = cx, y = cy;
    if (!y) goto out;
  }
  {
    /* jnp.broadcast_to(y, slice_shape, out_sharding=slice_sharding) */
    SrVal *sh = NULL;
    if (g.smesh) {
      SrTypeBuilder b;
      sr_type_builder(&b, sr_value_type(I, y));
      b.ndim = (uint8_t)g.nslice_shape;
      b.mesh = g.smesh;
      b.unreduced = b.reduced = b.varying = 0;
      for (int i = 0; i < g.nslice_shape; i++) b.dims[i] = g.sdims[i], b.dims[i].size = g.slice_shape[i];
      SrVal *ns = sr_type_sharding(I, sr_type_get(&b));
      int failed = sr_api_canon_sharding(I, ns, "index_to_gather", &sh) < 0;
      sr_unref(ns);
      if (failed) goto out;
    }
    SrVal *bt = sr_lax_broadcast_to(I, y, g.slice_shape, g.nslice_shape, sh);
    sr_unref(sh);
    sr_unref(y);
    y = bt;
  }
  if (y && g.nnewaxis) {
    SrVal *s = sr_lax_squeeze(I, y, g.newaxis, g.nnewaxis);
    sr_unref(y);
    y = s;
  }
  if (y && g.nreversed) {
    SrVal *s = sr_lax_rev(I, y, g.reversed, g.nreversed);
    sr_unref(y);
    y = s;
  }
  if (y && nsbool) {
    SrVal *xe = sr_lax_expand_dims(I, x, sbool, nsbool);
    sr_unref(x);
    x = xe;
  }
  if (!y || !x) goto out;
  {
    SrVal *in[3] = {sr_ref(x), sr_ref(g.indices), sr_ref(y)};
    SrVal *s = NULL;
    if (op->apply) {
      const SrType *yt = sr_value_type(I, y);
      int64_t us[SR_MAX_RANK];
      for (int i = 0; i < yt->ndim; i++) us[i] = yt->dims[i].size;
      SrVal *dn = sdn_text(&g), *mw = mode_word(mode);
      s = sr_lax_scatter_apply_bind(I, x, g.indices, op->apply, dn, us, yt->ndim, op->sorted || g.unique,
                                    op->unique || g.unique, mw);
      sr_unref(dn);
      sr_unref(mw);
    } else if (sr_auto_insert_reshard(I, 3, in) == 0)
      s = sr_bindv(I, prim, 3, in, "dimension_numbers", sdn_text(&g), "indices_are_sorted",
                   sr_bool(op->sorted || g.unique), "mode", mode_word(mode), "unique_indices",
                   sr_bool(op->unique || g.unique), "update_consts", sr_seq(NULL, SR_V_TUPLE, 0), "update_jaxpr",
                   sr_lax_scatter_update_jaxpr(prim, sr_value_type(I, x)->dtype), NULL);
    for (int i = 0; i < 3; i++) sr_unref(in[i]);
    if (s && nsbool) {
      SrVal *q = sr_lax_squeeze(I, s, sbool, nsbool);
      sr_unref(s);
      s = q;
    }
    if (s) {
      r = sr_lax_convert(I, s, dtype, weak, NULL);
      sr_unref(s);
    }
  }
  sr_unref(x);
  sr_unref(y);
  sr_unref(g.indices);
  return r;
out:
  sr_unref(x);
  sr_unref(y);
  sr_unref(g.indices);
  return r;
}

/* ---- x.at[...]: _IndexUpdateHelper and _IndexUpdateRef ---- */

typedef struct AtRef {
  SrVal *array, *index; /* index NULL: the helper, before [...] */
} AtRef;

static void at_free(void *d) {
  AtRef *r = d;
  sr_unref(r->array);
  sr_unref(r->index);
  free(r);
}

static void at_repr(SrBuf *out, const SrVal *v) {
  const AtRef *r = v->obj.data;
  sr_buf_puts(out, r->index ? "_IndexUpdateRef(" : "_IndexUpdateHelper(");
  sr_val_repr(out, r->array);
  if (r->index) {
    sr_buf_puts(out, ", ");
    sr_val_repr(out, r->index);
  }
  sr_buf_putc(out, ')');
}

static SrVal *at_getattr(SrInterp *I, SrVal *self, const char *name);
static SrVal *at_getitem(SrInterp *I, SrVal *self, SrVal *key);
static const SrLangOps at_ops = {.getattr = at_getattr, .getitem = at_getitem};
static const SrClass at_helper_class = {"_IndexUpdateHelper", at_free, at_repr, NULL, &at_ops};
static const SrClass at_ref_class = {"_IndexUpdateRef", at_free, at_repr, NULL, &at_ops};

static SrVal *at_new(SrVal *array, SrVal *index) {
  AtRef *r = sr_xcalloc(1, sizeof *r);
  r->array = sr_ref(array);
  r->index = index ? sr_ref(index) : NULL;
  return sr_obj(index ? &at_ref_class : &at_helper_class, r);
}

static SrVal *at_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  AtRef *r = self->obj.data;
  if (r->index) return sr_raise(I, "TypeError", "'_IndexUpdateRef' object is not subscriptable");
  return at_new(r->array, key);
}

static int opt_bool(SrInterp *I, SrVal *v, int *out) {
  *out = 0;
  if (!v) return 0;
  *out = sr_truthy(I, v);
  return *out < 0 ? -1 : 0;
}

static int read_opts(SrInterp *I, SrVal **p, IxOpts *o) {
  memset(o, 0, sizeof *o);
  o->mode = p[2];
  int wrap = 1;
  if (opt_bool(I, p[0], &o->sorted) < 0 || opt_bool(I, p[1], &o->unique) < 0) return -1;
  if (p[4] && opt_bool(I, p[4], &wrap) < 0) return -1;
  if (!p[4]) wrap = 1;
  o->normalize = wrap;
  o->out_sharding = p[3] && p[3]->kind != SR_V_NONE ? p[3] : NULL;
  return 0;
}

/* ---- out_sharding=: auto_axes over the gather or the scatter ---- */

/* What the function auto_axes wraps needs: the key, whose index arrays
   are replaced by its arguments in order (its tree_flatten), the options
   and the scatter (-1 for a gather). */
typedef struct AutoData {
  SrVal *key; /* counted */
  IxOpts o;   /* mode and fill counted here */
  int prim;
} AutoData;

static void auto_free(void *p) {
  AutoData *d = p;
  sr_unref(d->key);
  sr_unref(d->o.mode);
  sr_unref(d->o.fill);
  free(d);
}

static int is_dynamic(SrVal *v) { return sr_array_of(v) != NULL; }

static SrVal *auto_body(SrInterp *I, SrArgs *a) {
  AutoData *d = sr_current_builtin(I)->data;
  int nfix = d->prim < 0 ? 1 : 2, next = nfix;
  SrVal *key = d->key;
  int nk = key->kind == SR_V_TUPLE ? key->seq.n : 1;
  SrVal **keys = key->kind == SR_V_TUPLE ? key->seq.items : &key;
  SrVal *nkey = sr_seq(NULL, SR_V_TUPLE, nk);
  for (int k = 0; k < nk; k++)
    sr_seq_push(NULL, nkey, sr_ref(is_dynamic(keys[k]) && next < a->n ? a->v[next++] : keys[k]));
  SrVal *use = key->kind == SR_V_TUPLE ? sr_ref(nkey) : sr_ref(nkey->seq.items[0]);
  sr_unref(nkey);
  IxOpts o = d->o;
  o.out_sharding = NULL;
  SrVal *r = d->prim < 0 ? do_gather(I, a->v[0], use, &o) : do_scatter(I, a->v[0], use, a->v[1], d->prim, &o);
  sr_unref(use);
  return r;
}

/* auto_axes(internal_gather or internal_scatter, out_sharding=, axes=the
   sharding's mesh's Explicit axes)(x, [y,] *dynamic_idx). */
static SrVal *with_out_sharding(SrInterp *I, SrVal *x, SrVal *key, SrVal *y, int prim, const IxOpts *o,
                                const char *api) {
  SrVal *sh = NULL;
  if (sr_api_canon_sharding(I, o->out_sharding, api, &sh) < 0) return NULL;
  if (!sh) {
    IxOpts q = *o;
    q.out_sharding = NULL;
    return prim < 0 ? do_gather(I, x, key, &q) : do_scatter(I, x, key, y, prim, &q);
  }
  /* lists in the key become arrays first, so that every index array is an argument */
  int nk = key->kind == SR_V_TUPLE ? key->seq.n : 1;
  SrVal **keys = key->kind == SR_V_TUPLE ? key->seq.items : &key;
  SrVal *ck = sr_seq(NULL, SR_V_TUPLE, nk), *args[MAX_IT + 2];
  int n = 0, ok = 1;
  args[n++] = x;
  if (prim >= 0) args[n++] = y;
  for (int k = 0; k < nk && ok; k++) {
    SrVal *v = keys[k];
    if (v->kind == SR_V_LIST || (v->kind == SR_V_TUPLE && key->kind == SR_V_TUPLE)) {
      v = sr_jnp_asarray(I, v, v->seq.n ? -1 : SR_I32);
      if (!v) ok = 0;
    } else {
      sr_ref(v);
    }
    if (!ok) break;
    sr_seq_push(NULL, ck, v);
    if (is_dynamic(v) && n < MAX_IT + 2) args[n++] = v;
  }
  SrVal *r = NULL;
  if (ok && key->kind != SR_V_TUPLE) {
    SrVal *one = sr_ref(ck->seq.items[0]);
    sr_unref(ck);
    ck = one;
  }
  if (ok) {
    AutoData *d = sr_xcalloc(1, sizeof *d);
    d->key = sr_ref(ck);
    d->o = *o;
    d->o.out_sharding = NULL;
    if (d->o.mode) sr_ref(d->o.mode);
    if (d->o.fill) sr_ref(d->o.fill);
    d->prim = prim;
    SrVal *fn = sr_builtin_with(prim < 0 ? "_gather" : "_scatter_impl", auto_body, d, auto_free);
    SrVal *aa = sr_lookup_qualname("jax.sharding.auto_axes");
    if (aa) {
      const SrMesh *m = sh->sh.mesh;
      SrVal *axes = sr_api_axes_tuple(m, sr_mesh_axes_of_type(m, SR_AXIS_EXPLICIT));
      const char *kw[2] = {sr_intern_cstr("out_sharding"), sr_intern_cstr("axes")};
      SrVal *kwv[2] = {sh, axes};
      SrArgs da = {1, &fn, 2, kw, kwv, NULL};
      SrVal *dec = sr_call(I, aa, &da);
      if (dec) {
        SrArgs ca = {n, args, 0, NULL, NULL, NULL};
        r = sr_call(I, dec, &ca);
        sr_unref(dec);
      }
      sr_unref(axes);
    } else {
      sr_raise(I, "NotImplementedError", "out_sharding= needs jax.sharding.auto_axes");
    }
    sr_unref(fn);
  }
  sr_unref(ck);
  sr_unref(sh);
  return r;
}

/* _IndexUpdateRef.get: indexing.rewriting_take with the options. */
static SrVal *at_get(SrInterp *I, SrArgs *a) {
  AtRef *r = a->self->obj.data;
  SrVal *p[6];
  if (sr_args_parse(I, a, "get", "*, indices_are_sorted=, unique_indices=, mode=, out_sharding=, wrap_negative_indices=, fill_value=", p) < 0)
    return NULL;
  IxOpts o;
  if (read_opts(I, p, &o) < 0) return NULL;
  o.fill = p[5];
  const char *m = mode_name(I, o.mode, 1);
  if (!m) return NULL;
  /* the static and dynamic slices take PROMISE_IN_BOUNDS (and CLIP) keys
     without index arrays */
  if (!needs_gather(r->index) && o.normalize && strcmp(m, "FILL_OR_DROP") != 0 && strcmp(m, "ONE_HOT") != 0) {
    /* jax_check_static_indices holds for mode None and promise_in_bounds only */
    int saved = I->jax->check_static_indices;
    if (strcmp(m, "CLIP") == 0) I->jax->check_static_indices = 0;
    SrVal *res = call2(I, "jax.numpy._getitem", r->array, r->index);
    I->jax->check_static_indices = saved;
    return res;
  }
  SrVal *x = sr_jnp_asarray(I, r->array, -1);
  SrVal *y = !x ? NULL : o.out_sharding ? with_out_sharding(I, x, r->index, NULL, -1, &o, "take")
                                        : do_gather(I, x, r->index, &o);
  sr_unref(x);
  return y;
}

/* _scatter_update(base, self.index, values, prim, ...) for x.at[idx].name */
static SrVal *at_update_on(SrInterp *I, SrArgs *a, const char *name, int prim, SrVal *base);

static SrVal *at_update(SrInterp *I, SrArgs *a, const char *name, int prim) {
  AtRef *r = a->self->obj.data;
  return at_update_on(I, a, name, prim, r->array);
}

static SrVal *at_update_on(SrInterp *I, SrArgs *a, const char *name, int prim, SrVal *base) {
  AtRef *r = a->self->obj.data;
  SrVal *p[6];
  if (sr_args_parse(I, a, name, "values, *, indices_are_sorted=, unique_indices=, mode=, out_sharding=, wrap_negative_indices=", p) < 0)
    return NULL;
  IxOpts o;
  if (read_opts(I, p + 1, &o) < 0) return NULL;
  if (!o.out_sharding) return do_scatter(I, base, r->index, p[0], prim, &o);
  /* _scatter_update: x and y as arrays first, then auto_axes */
  SrVal *x = sr_jnp_asarray(I, base, -1), *y = NULL, *res = NULL;
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  if (t && p[0]->kind == SR_V_INT && sr_dtype_is_int(t->dtype) && sr_int_fits(p[0]->i, t->dtype))
    y = sr_jnp_asarray(I, p[0], t->dtype);
  else if (t)
    y = sr_jnp_asarray(I, p[0], -1);
  char api[16];
  snprintf(api, sizeof api, ".%s", name);
  if (y) res = with_out_sharding(I, x, r->index, y, prim, &o, api);
  sr_unref(x);
  sr_unref(y);
  return res;
}

/* x.at[idx].divide(y) / .power(y): ufuncs.divide / power(x,
   _scatter_update(ones_like(x), idx, y, scatter_mul, ...)) */
static SrVal *at_mul_then(SrInterp *I, SrArgs *a, const char *name, const char *ufunc) {
  AtRef *r = a->self->obj.data;
  SrVal *x = sr_jnp_asarray(I, r->array, -1);
  SrVal *ones = x ? call2(I, "jax.numpy.ones_like", x, NULL) : NULL;
  SrVal *m = ones ? at_update_on(I, a, name, SR_P_scatter_mul, ones) : NULL;
  SrVal *res = m ? call2(I, ufunc, x, m) : NULL;
  sr_unref(x);
  sr_unref(ones);
  sr_unref(m);
  return res;
}

static SrVal *at_divide(SrInterp *I, SrArgs *a) { return at_mul_then(I, a, "divide", "jax.numpy.divide"); }
static SrVal *at_power(SrInterp *I, SrArgs *a) { return at_mul_then(I, a, "power", "jax.numpy.power"); }

static SrVal *at_set(SrInterp *I, SrArgs *a) { return at_update(I, a, "set", SR_P_scatter); }
static SrVal *at_add(SrInterp *I, SrArgs *a) { return at_update(I, a, "add", SR_P_scatter_add); }
static SrVal *at_subtract(SrInterp *I, SrArgs *a) { return at_update(I, a, "subtract", SR_P_scatter_sub); }
static SrVal *at_multiply(SrInterp *I, SrArgs *a) { return at_update(I, a, "multiply", SR_P_scatter_mul); }
static SrVal *at_min(SrInterp *I, SrArgs *a) { return at_update(I, a, "min", SR_P_scatter_min); }
static SrVal *at_max(SrInterp *I, SrArgs *a) { return at_update(I, a, "max", SR_P_scatter_max); }

/* x.at[idx].apply(func): _scatter_update(x, idx, lax._zero(x),
   scatter_apply(func, update_shape=y.shape)) */
static SrVal *at_apply(SrInterp *I, SrArgs *a) {
  AtRef *r = a->self->obj.data;
  SrVal *p[5];
  if (sr_args_parse(I, a, "apply", "func, *, indices_are_sorted=, unique_indices=, mode=, wrap_negative_indices=", p) < 0)
    return NULL;
  SrVal *q[5] = {p[1], p[2], p[3], NULL, p[4]};
  IxOpts o;
  if (read_opts(I, q, &o) < 0) return NULL;
  o.apply = p[0];
  SrVal *x = sr_jnp_asarray(I, r->array, -1);
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  SrVal *z0 = sr_int(NULL, 0), *zero = sr_jnp_asarray(I, z0, t->dtype), *res = NULL;
  sr_unref(z0);
  if (zero && t->weak) {
    SrVal *w = sr_lax_convert(I, zero, t->dtype, 1, NULL);
    sr_unref(zero);
    zero = w;
  }
  if (zero) res = do_scatter(I, x, r->index, zero, SR_P_scatter, &o);
  sr_unref(zero);
  sr_unref(x);
  return res;
}

const char *sr_gs_mode_name(SrInterp *I, SrVal *m, int gather) { return mode_name(I, m, gather); }

static SrVal *at_getattr(SrInterp *I, SrVal *self, const char *name) {
  AtRef *r = self->obj.data;
  (void)I;
  if (!r->index) return NULL;
  static const struct {
    const char *name;
    SrBuiltinFn fn;
  } m[] = {{"get", at_get},           {"set", at_set}, {"add", at_add}, {"subtract", at_subtract},
           {"multiply", at_multiply}, {"mul", at_multiply}, {"min", at_min}, {"max", at_max},
           {"divide", at_divide},     {"power", at_power}, {"apply", at_apply}};
  for (size_t i = 0; i < sizeof m / sizeof *m; i++)
    if (strcmp(name, m[i].name) == 0) return sr_bound_method(self, m[i].name, m[i].fn);
  return NULL;
}

/* x.at */
static SrVal *array_at(SrInterp *I, SrArgs *a) {
  (void)I;
  return at_new(a->self, NULL);
}

/* ---- jnp.take, jnp.take_along_axis ---- */

/* slicing.gather as the jnp functions call it (mode from_any'd; the
   default fill for FILL_OR_DROP); x and ix borrowed. */
static SrVal *bind_gather(SrInterp *I, SrVal *x, SrVal *ix, SrVal *gdn, const int64_t *ss, int nss, const char *mode,
                          SrVal *fill, int unique, int sorted) {
  SrVal *fv = strcmp(mode, "FILL_OR_DROP") == 0 ? fill_param(I, fill, sr_value_type(I, x)->dtype) : sr_none();
  SrVal *in[2] = {sr_ref(x), sr_ref(ix)}, *r = NULL;
  if (fv && sr_auto_insert_reshard(I, 2, in) == 0)
    r = sr_bindv(I, SR_P_gather, 2, in, "dimension_numbers", gdn, "fill_value", fv, "indices_are_sorted",
                 sr_bool(sorted), "mode", mode_word(mode), "slice_sizes", sr_int_tuple(ss, nss), "unique_indices",
                 sr_bool(unique), NULL);
  else {
    sr_unref(fv);
    sr_unref(gdn);
  }
  sr_unref(in[0]);
  sr_unref(in[1]);
  return r;
}

typedef struct TakeData {
  int64_t axis;
  int has_axis, unique, sorted;
  char mode[24];
  int fill_kind; /* SR_V_NONE, SR_V_INT, SR_V_BOOL or SR_V_FLOAT */
  int64_t fill_i;
  double fill_f;
} TakeData;

/* The fill value kept as a scalar (sr_api_jit frees its data with free). */
static SrVal *take_fill(const TakeData *d) {
  if (d->fill_kind == SR_V_INT) return sr_int(NULL, d->fill_i);
  if (d->fill_kind == SR_V_BOOL) return sr_bool((int)d->fill_i);
  if (d->fill_kind == SR_V_FLOAT) return sr_float(NULL, d->fill_f);
  return NULL;
}

/* indexing._take (a jit named _take): a gather of whole slices along
   axis, FILL_OR_DROP by default with negative indices wrapped first. */
static SrVal *take_body(SrInterp *I, SrArgs *a) {
  TakeData *d = sr_current_builtin(I)->data;
  SrVal *x = sr_ref(a->v[0]), *ix = sr_ref(a->v[1]), *r = NULL;
  const char *gmode = NULL;
  if (!d->has_axis) {
    SrVal *f = call2(I, "jax.numpy.ravel", x, NULL);
    sr_unref(x);
    if (!(x = f)) goto out;
  }
  const SrType *t = sr_value_type(I, x), *it = sr_value_type(I, ix);
  int64_t axis = 0;
  if (d->has_axis && sr_api_axis(I, d->axis, t->ndim, &axis) < 0) goto out;
  if (!d->mode[0] || strcmp(d->mode, "fill") == 0) {
    gmode = "FILL_OR_DROP";
    /* util._where(indices < 0, indices + a.shape[axis], indices) */
    SrVal *z = sr_int(NULL, 0), *n = sr_int(NULL, t->dims[axis].size);
    SrVal *neg = call2(I, "jax.numpy.less", ix, z);
    SrVal *sum = neg ? call2(I, "jax.numpy.add", ix, n) : NULL;
    SrVal *w = NULL;
    if (sum) {
      SrVal *f = sr_lookup_qualname("jax.numpy.where");
      SrVal *args[3] = {neg, sum, ix};
      SrArgs wa = {3, args, 0, NULL, NULL, NULL};
      w = f ? sr_call(I, f, &wa) : NULL;
    }
    sr_unref(z);
    sr_unref(n);
    sr_unref(neg);
    sr_unref(sum);
    sr_unref(ix);
    if (!(ix = w)) goto out;
  } else if (strcmp(d->mode, "raise") == 0) {
    sr_raise(I, "NotImplementedError", "The 'raise' mode to jnp.take is not supported.");
    goto out;
  } else if (strcmp(d->mode, "wrap") == 0) {
    SrVal *n = sr_int(NULL, t->dims[axis].size);
    SrVal *c = sr_lax_convert(I, n, it->dtype, 0, NULL);
    SrVal *w = c ? call2(I, "jax.numpy.mod", ix, c) : NULL;
    sr_unref(n);
    sr_unref(c);
    sr_unref(ix);
    if (!(ix = w)) goto out;
    gmode = "PROMISE_IN_BOUNDS";
  } else if (strcmp(d->mode, "clip") == 0) {
    gmode = "CLIP";
  } else {
    sr_raise(I, "ValueError", "Invalid mode '%s' for np.take", d->mode);
    goto out;
  }
  it = sr_value_type(I, ix);
  int64_t ss[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) ss[i] = t->dims[i].size;
  if (ss[axis] == 0) {
    if (sr_type_numel(it) != 0) {
      sr_raise(I, "IndexError", "Cannot do a non-empty jnp.take() from an empty axis.");
      goto out;
    }
    r = sr_ref(x);
    goto out;
  }
  int nd = it->ndim;
  if (t->ndim - 1 + nd > SR_MAX_RANK) {
    sr_raise(I, "ValueError", "take: the result's rank is too large");
    goto out;
  }
  if (sr_type_numel(it) == 0) {
    int64_t os[SR_MAX_RANK];
    int n = 0;
    for (int i = 0; i < axis; i++) os[n++] = ss[i];
    for (int i = 0; i < nd; i++) os[n++] = it->dims[i].size;
    for (int i = (int)axis + 1; i < t->ndim; i++) os[n++] = ss[i];
    r = zeros(I, os, n, t->dtype);
    goto out;
  }
  ss[axis] = 1;
  GatherIx g;
  memset(&g, 0, sizeof g);
  for (int i = 0; i < axis; i++) g.offset[g.noffset++] = i;
  for (int i = (int)axis + nd; i < t->ndim + nd - 1; i++) g.offset[g.noffset++] = i;
  g.collapsed[g.ncollapsed++] = axis;
  g.start_map[g.nstart_map++] = axis;
  /* indices[..., None] */
  SrVal *key = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, key, sr_word(NULL, "Ellipsis", 8));
  sr_seq_push(NULL, key, sr_none());
  SrVal *gi = call2(I, "jax.numpy._getitem", ix, key);
  sr_unref(key);
  SrVal *fill = take_fill(d);
  if (gi) r = bind_gather(I, x, gi, gdn_text(&g), ss, t->ndim, gmode, fill, d->unique, d->sorted);
  sr_unref(fill);
  sr_unref(gi);
out:
  sr_unref(x);
  sr_unref(ix);
  return r;
}

static SrVal *jnp_take(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  if (sr_args_parse(I, a, "take", "a, indices, axis=, out=, mode=, unique_indices=, indices_are_sorted=, fill_value=", p) < 0)
    return NULL;
  if (p[3] && p[3]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.take is not supported.");
  TakeData d = {0};
  d.has_axis = p[2] && p[2]->kind != SR_V_NONE;
  if (d.has_axis && sr_as_int(I, p[2], "axis", &d.axis) < 0) return NULL;
  if (p[4] && p[4]->kind != SR_V_NONE) {
    if (p[4]->kind != SR_V_STR || p[4]->str.n >= sizeof d.mode) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, p[4]);
      sr_raise(I, "ValueError", "Invalid mode '%s' for np.take", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
    memcpy(d.mode, p[4]->str.s, p[4]->str.n);
  }
  if (opt_bool(I, p[5], &d.unique) < 0 || opt_bool(I, p[6], &d.sorted) < 0) return NULL;
  SrVal *fv = p[7];
  if (fv && sr_array_of(fv) && sr_array_of(fv)->type->ndim == 0 && sr_array_of(fv)->kind == SR_AV_CONCRETE)
    fv = sr_unop(I, SR_OP_ITEM, fv);
  else if (fv)
    sr_ref(fv);
  if (fv && fv->kind != SR_V_NONE && fv->kind != SR_V_INT && fv->kind != SR_V_BOOL && fv->kind != SR_V_FLOAT) {
    sr_unref(fv);
    return sr_raise(I, "ValueError", "fill_value argument to indexed get() must be a scalar");
  }
  if (fv) d.fill_kind = fv->kind, d.fill_i = fv->i, d.fill_f = fv->kind == SR_V_FLOAT ? fv->f : 0;
  sr_unref(fv);
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *ix = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  SrVal *r = NULL;
  if (ix && !sr_dtype_is_int(sr_value_type(I, ix)->dtype))
    sr_raise(I, "TypeError", "take: indices must be integer arrays; got %s", sr_dtype_name(sr_value_type(I, ix)->dtype));
  else if (ix) {
    TakeData *h = sr_xmalloc(sizeof *h);
    *h = d;
    SrVal *args[2] = {x, ix};
    r = sr_api_jit(I, "_take", take_body, h, 2, args);
  }
  sr_unref(x);
  sr_unref(ix);
  return r;
}

typedef struct AlongData {
  int64_t axis;
  int has_axis, wrap, has_wrap, inplace;
  char mode[24]; /* "" for None */
  int fill_kind;
  int64_t fill_i;
  double fill_f;
} AlongData;

/* The mode argument of take_along_axis/put_along_axis into d->mode. */
static int along_mode(SrInterp *I, SrVal *m, AlongData *d, const char *fname) {
  d->mode[0] = 0;
  if (!m || m->kind == SR_V_NONE) return 0;
  const char *s = m->str.s;
  size_t n = m->str.n;
  if (m->kind == SR_V_WORD && n > 18 && memcmp(s, "GatherScatterMode.", 18) == 0) s += 18, n -= 18;
  if ((m->kind != SR_V_STR && m->kind != SR_V_WORD) || n >= sizeof d->mode) {
    sr_raise(I, "ValueError", "%s: unknown mode", fname);
    return -1;
  }
  memcpy(d->mode, s, n);
  d->mode[n] = 0;
  return 0;
}

/* _normalize_index(index, axis_size) */
static SrVal *normalize_index(SrInterp *I, SrVal *ix, int64_t size) {
  SrDtype dt = sr_value_type(I, ix)->dtype;
  if (sr_dtype_kind(dt) == SR_DK_UINT) return sr_ref(ix);
  SrVal *zero = sr_int(NULL, 0), *sz = sr_int(NULL, size);
  SrVal *c = sr_lax_convert(I, sz, dt, 0, NULL);
  SrVal *neg = c ? call2(I, "jax.numpy.less", ix, zero) : NULL;
  SrVal *sum = neg ? sr_lax_binary(I, SR_P_add, ix, c) : NULL;
  SrVal *r = sum ? sr_lax_select(I, neg, sum, ix) : NULL;
  sr_unref(zero);
  sr_unref(sz);
  sr_unref(c);
  sr_unref(neg);
  sr_unref(sum);
  return r;
}

/* take_along_axis (a jit of that name): one gather whose batching dims
   pair the index's dims with the array's (_take_along_axis's loop). */
static SrVal *take_along_body(SrInterp *I, SrArgs *a) {
  AlongData *d = sr_current_builtin(I)->data;
  SrVal *x = sr_ref(a->v[0]), *ix = sr_ref(a->v[1]), *r = NULL;
  const SrType *it = sr_value_type(I, ix);
  if (!d->has_axis) {
    if (it->ndim != 1) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_putc(&b, '(');
      for (int i = 0; i < it->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)it->dims[i].size);
      sr_buf_puts(&b, it->ndim == 1 ? ",)" : ")");
      sr_raise(I, "ValueError", "take_along_axis indices must be 1D if axis=None, got shape %s", sr_buf_str(&b));
      sr_buf_free(&b);
      goto out;
    }
    SrVal *f = call2(I, "jax.numpy.ravel", x, NULL);
    sr_unref(x);
    if (!(x = f)) goto out;
  }
  const SrType *t = sr_value_type(I, x);
  int rank = t->ndim;
  if (rank != it->ndim) {
    sr_raise(I, "ValueError", "indices and arr must have the same number of dimensions; %d vs. %d", it->ndim, rank);
    goto out;
  }
  int64_t axis = 0;
  if (d->has_axis && sr_api_axis(I, d->axis, rank, &axis) < 0) goto out;
  int64_t idx_shape[SR_MAX_RANK], arr_shape[SR_MAX_RANK], out_shape[SR_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    idx_shape[i] = it->dims[i].size;
    arr_shape[i] = i == axis ? 1 : t->dims[i].size;
    if (idx_shape[i] != arr_shape[i] && idx_shape[i] != 1 && arr_shape[i] != 1) {
      sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[%s, %s]", sr_type_short(it),
               sr_type_short(t));
      goto out;
    }
    out_shape[i] = idx_shape[i] == 1 ? arr_shape[i] : idx_shape[i];
  }
  int64_t axis_size = t->dims[axis].size;
  if (axis_size == 0) {
    r = zeros(I, out_shape, rank, t->dtype);
    goto out;
  }
  int wrap = d->has_wrap ? d->wrap : strcmp(d->mode, "promise_in_bounds") != 0;
  if (wrap) {
    SrDtype idt = axis_size > INT32_MAX ? SR_I64 : SR_I32; /* index_dtype_for_axis_size */
    SrVal *c = sr_lax_convert(I, ix, idt, 0, NULL);
    SrVal *nix = c ? normalize_index(I, c, axis_size) : NULL;
    sr_unref(c);
    sr_unref(ix);
    if (!(ix = nix)) goto out;
  }
  int64_t gshape[SR_MAX_RANK + 1];
  int ng = 0;
  for (int i = 0; i < rank; i++)
    if (i == axis || idx_shape[i] != 1) gshape[ng++] = out_shape[i];
  gshape[ng++] = 1;
  SrVal *gi = sr_lax_reshape(I, ix, gshape, ng, NULL);
  if (!gi) goto out;
  int64_t ss[SR_MAX_RANK], offset[SR_MAX_RANK], smap[SR_MAX_RANK], coll[SR_MAX_RANK], ob[SR_MAX_RANK],
      ib[SR_MAX_RANK], sq[SR_MAX_RANK];
  int nss = 0, no = 0, nsm = 0, nc = 0, nb = 0, nsq = 0;
  for (int i = 0, new_i = 0, j = 0; i < rank; i++) {
    if (i == axis) {
      ss[nss++] = 1;
      smap[nsm++] = new_i;
      coll[nc++] = new_i;
      new_i++, j++;
    } else if (idx_shape[i] == 1) {
      offset[no++] = i;
      ss[nss++] = arr_shape[i];
      new_i++;
    } else if (arr_shape[i] == 1) {
      sq[nsq++] = i;
      j++;
    } else {
      ss[nss++] = arr_shape[i] == 0 ? 0 : 1;
      ob[nb] = new_i;
      ib[nb++] = j;
      new_i++, j++;
    }
  }
  SrVal *sqx = nsq ? sr_lax_squeeze(I, x, sq, nsq) : sr_ref(x);
  if (sqx) {
    static const char *const names[5] = {"offset_dims", "collapsed_slice_dims", "start_index_map",
                                         "operand_batching_dims", "start_indices_batching_dims"};
    const int64_t *v[5] = {offset, coll, smap, ob, ib};
    int n[5] = {no, nc, nsm, nb, nb};
    SrVal *mv = sr_str_cstr(NULL, d->mode[0] ? d->mode : "fill");
    const char *mode = mode_name(I, mv, 1);
    sr_unref(mv);
    SrVal *fill = d->fill_kind == SR_V_INT ? sr_int(NULL, d->fill_i)
                  : d->fill_kind == SR_V_BOOL ? sr_bool((int)d->fill_i)
                  : d->fill_kind == SR_V_FLOAT ? sr_float(NULL, d->fill_f)
                                               : NULL;
    if (mode) r = bind_gather(I, sqx, gi, dnums_text("GatherDimensionNumbers", names, v, n), ss, nss, mode, fill, 0, 0);
    sr_unref(fill);
  }
  sr_unref(sqx);
  sr_unref(gi);
out:
  sr_unref(x);
  sr_unref(ix);
  return r;
}

/* A fill_value argument kept as a scalar in d. */
static int along_fill(SrInterp *I, SrVal *fv, AlongData *d) {
  d->fill_kind = SR_V_NONE;
  if (!fv || fv->kind == SR_V_NONE) return 0;
  if (sr_array_of(fv) && sr_array_of(fv)->type->ndim == 0 && sr_array_of(fv)->kind == SR_AV_CONCRETE)
    fv = sr_unop(I, SR_OP_ITEM, fv);
  else
    sr_ref(fv);
  if (!fv) return -1;
  int ok = fv->kind == SR_V_INT || fv->kind == SR_V_BOOL || fv->kind == SR_V_FLOAT;
  if (ok) d->fill_kind = fv->kind, d->fill_i = fv->i, d->fill_f = fv->kind == SR_V_FLOAT ? fv->f : 0;
  sr_unref(fv);
  if (!ok) sr_raise(I, "ValueError", "fill_value argument to indexed get() must be a scalar");
  return ok ? 0 : -1;
}

static SrVal *jnp_take_along_axis(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "take_along_axis", "arr, indices, axis=, mode=, fill_value=, *, wrap_negative_indices=", p) <
      0)
    return NULL;
  AlongData d;
  memset(&d, 0, sizeof d);
  d.has_axis = !p[2] || p[2]->kind != SR_V_NONE;
  d.axis = -1;
  if (p[2] && d.has_axis && sr_as_int(I, p[2], "axis", &d.axis) < 0) return NULL;
  if (along_mode(I, p[3], &d, "take_along_axis") < 0 || along_fill(I, p[4], &d) < 0) return NULL;
  if (p[5] && p[5]->kind != SR_V_NONE) {
    d.has_wrap = 1;
    if (opt_bool(I, p[5], &d.wrap) < 0) return NULL;
  }
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *ix = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  SrVal *r = NULL;
  if (ix && !sr_dtype_is_int(sr_value_type(I, ix)->dtype))
    sr_raise(I, "TypeError", "take_along_axis indices must be of integer type, got %s",
             sr_dtype_name(sr_value_type(I, ix)->dtype));
  else if (ix) {
    AlongData *h = sr_xmalloc(sizeof *h);
    *h = d;
    SrVal *args[2] = {x, ix};
    r = sr_api_jit(I, "take_along_axis", take_along_body, h, 2, args);
  }
  sr_unref(x);
  sr_unref(ix);
  return r;
}

/* put_along_axis (a jit of that name): arr.at[idx].set(values) with idx
   the sparse jnp.indices of arr's shape, indices at axis
   (_make_along_axis_idx). */
static SrVal *put_along_body(SrInterp *I, SrArgs *a) {
  AlongData *d = sr_current_builtin(I)->data;
  SrVal *x = sr_ref(a->v[0]), *ix = a->v[1], *vals = NULL, *key = NULL, *r = NULL;
  const SrType *t0 = sr_value_type(I, x), *it = sr_value_type(I, ix);
  if (!d->has_axis) {
    SrVal *f = call2(I, "jax.numpy.ravel", x, NULL);
    sr_unref(x);
    if (!(x = f)) goto out;
  }
  const SrType *t = sr_value_type(I, x);
  if (t->ndim != it->ndim) {
    sr_raise(I, "ValueError",
             "put_along_axis arguments 'arr' and 'indices' must have same ndim. Got arr.ndim=%d and indices.ndim=%d.",
             t->ndim, it->ndim);
    goto out;
  }
  int64_t ishape[SR_MAX_RANK];
  for (int i = 0; i < it->ndim; i++) ishape[i] = it->dims[i].size;
  vals = sr_lax_broadcast_to(I, a->v[2], ishape, it->ndim, NULL);
  if (!vals) {
    const SrType *vt = sr_value_type(I, a->v[2]);
    sr_exc_clear(I);
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < vt->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)vt->dims[i].size);
    sr_buf_puts(&b, vt->ndim == 1 ? ",)" : ")");
    sr_buf_putc(&c, '(');
    for (int i = 0; i < it->ndim; i++) sr_buf_printf(&c, i ? ", %lld" : "%lld", (long long)ishape[i]);
    sr_buf_puts(&c, it->ndim == 1 ? ",)" : ")");
    sr_raise(I, "ValueError",
             "put_along_axis argument 'values' must be broadcastable to 'indices'. Got values.shape=%s and "
             "indices.shape=%s.",
             sr_buf_str(&b), sr_buf_str(&c));
    sr_buf_free(&b);
    sr_buf_free(&c);
    goto out;
  }
  int64_t axis = 0;
  if (d->has_axis && sr_api_axis(I, d->axis, t->ndim, &axis) < 0) goto out;
  key = sr_seq(NULL, SR_V_TUPLE, t->ndim);
  for (int i = 0; i < t->ndim; i++) {
    if (i == axis) {
      sr_seq_push(NULL, key, sr_ref(ix));
      continue;
    }
    /* jnp.indices(shape, sparse=True)[i]: broadcast_in_dim(iota(n), (1,..,n,..,1), (i,)) */
    int64_t n = t->dims[i].size, s[SR_MAX_RANK], bd = i;
    for (int q = 0; q < t->ndim; q++) s[q] = q == i ? n : 1;
    SrVal *io = sr_lax_iota(I, SR_I32, &n, 1, 0, NULL);
    SrVal *b = io ? sr_lax_broadcast_in_dim(I, io, s, t->ndim, &bd, 1, NULL) : NULL;
    sr_unref(io);
    if (!b) goto out;
    sr_seq_push(NULL, key, b);
  }
  {
    SrVal *mv = d->mode[0] ? sr_str_cstr(NULL, d->mode) : NULL;
    IxOpts o = {mv, NULL, 0, 0, 1, NULL, NULL};
    r = do_scatter(I, x, key, vals, SR_P_scatter, &o);
    sr_unref(mv);
  }
  if (r && !d->has_axis) {
    int64_t os[SR_MAX_RANK];
    for (int i = 0; i < t0->ndim; i++) os[i] = t0->dims[i].size;
    SrVal *rs = sr_lax_reshape(I, r, os, t0->ndim, NULL);
    sr_unref(r);
    r = rs;
  }
out:
  sr_unref(x);
  sr_unref(vals);
  sr_unref(key);
  return r;
}

static SrVal *jnp_put_along_axis(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "put_along_axis", "arr, indices, values, axis, inplace=, *, mode=", p) < 0) return NULL;
  AlongData d;
  memset(&d, 0, sizeof d);
  int inplace = 1;
  if (p[4] && opt_bool(I, p[4], &inplace) < 0) return NULL;
  if (inplace)
    return sr_raise(I, "ValueError",
                    "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arraysare immutable. Pass "
                    "inplace=False to instead return an updated array.");
  d.has_axis = p[3]->kind != SR_V_NONE;
  if (d.has_axis && sr_as_int(I, p[3], "axis", &d.axis) < 0) return NULL;
  if (along_mode(I, p[5], &d, "put_along_axis") < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *ix = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  SrVal *v = ix ? sr_jnp_asarray(I, p[2], -1) : NULL;
  SrVal *r = NULL;
  if (v) {
    AlongData *h = sr_xmalloc(sizeof *h);
    *h = d;
    SrVal *args[3] = {x, ix, v};
    r = sr_api_jit(I, "put_along_axis", put_along_body, h, 3, args);
  }
  sr_unref(x);
  sr_unref(ix);
  sr_unref(v);
  return r;
}

SrVal *sr_gs_bind_gather(SrInterp *I, SrVal *x, SrVal *ix, SrVal *gdn, const int64_t *ss, int nss, const char *mode,
                         SrVal *fill, int unique, int sorted) {
  return bind_gather(I, x, ix, gdn, ss, nss, mode, fill, unique, sorted);
}

SrVal *sr_gs_mode_word(const char *name) { return mode_word(name); }

/* ---- jax.ds: jax._src.indexing.Slice, a start (static or traced), a
   static size and a stride ---- */

typedef struct DSlice {
  SrVal *start, *size;
  int64_t stride;
} DSlice;

static void dslice_free(void *d) {
  DSlice *q = d;
  sr_unref(q->start);
  sr_unref(q->size);
  free(q);
}

static void dslice_repr(SrBuf *out, const SrVal *v) {
  const DSlice *q = v->obj.data;
  sr_buf_puts(out, "Slice(start=");
  sr_val_repr(out, q->start);
  sr_buf_puts(out, ", size=");
  sr_val_repr(out, q->size);
  sr_buf_printf(out, ", stride=%lld)", (long long)q->stride);
}

static SrVal *dslice_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  DSlice *q = self->obj.data;
  if (strcmp(name, "start") == 0) return sr_ref(q->start);
  if (strcmp(name, "size") == 0) return sr_ref(q->size);
  if (strcmp(name, "stride") == 0) return sr_int(NULL, q->stride);
  return NULL;
}

static const SrClass dslice_class;

/* the dataclass's __eq__: the fields' tuples */
static SrVal *dslice_compare(SrInterp *I, int op, SrVal *a, SrVal *b) {
  (void)I;
  if ((op != SR_OP_EQ && op != SR_OP_NE) || !sr_is_obj(a, &dslice_class) || !sr_is_obj(b, &dslice_class)) return NULL;
  const DSlice *x = a->obj.data, *y = b->obj.data;
  int eq = sr_val_equal(x->start, y->start) && sr_val_equal(x->size, y->size) && x->stride == y->stride;
  return sr_bool(op == SR_OP_EQ ? eq : !eq);
}

static const SrLangOps dslice_ops = {.getattr = dslice_getattr, .binop = dslice_compare};
static const SrClass dslice_class = {"Slice", dslice_free, dslice_repr, NULL, &dslice_ops};

int sr_jnp_dslice_parts(SrVal *v, SrVal **start, int64_t *size, int64_t *stride) {
  if (!sr_is_obj(v, &dslice_class)) return 0;
  const DSlice *q = v->obj.data;
  *start = q->start;
  *size = q->size->kind == SR_V_INT ? q->size->i : -1;
  *stride = q->stride;
  return 1;
}

/* jax.ds(start, size=<not given>, stride=None), indexing.dslice */
static SrVal *jax_dslice(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "dslice", "start, size=, stride=", p) < 0) return NULL;
  SrVal *start = p[0], *size = p[1], *stride = p[2];
  int has_size = size != NULL;
  if (start->kind == SR_V_NONE) {
    if (!has_size) return sr_slice_new(sr_none(), sr_none(), stride ? sr_ref(stride) : sr_none());
    start = NULL;
  }
  int64_t st = 1;
  if (stride && stride->kind != SR_V_NONE) {
    if (stride->kind != SR_V_INT) return sr_raise(I, "ValueError", "Non-static stride in `dslice`");
    st = stride->i;
  }
  if (st < 0) return sr_raise(I, "ValueError", "`stride` must be >= 0.");
  DSlice *q = sr_xcalloc(1, sizeof *q);
  if (!has_size) {
    q->start = sr_int(NULL, 0);
    q->size = sr_ref(start);
  } else {
    q->start = start ? sr_ref(start) : sr_int(NULL, 0);
    q->size = sr_ref(size);
  }
  q->stride = st;
  return sr_obj(&dslice_class, q);
}

void sr_numpy_index_init(void) {
  sr_def("jax.ds jax.dslice", jax_dslice,
         "ds(start, size=, stride=None): indexing.Slice(start, size, stride), start:start+size:stride with a start that "
         "may be traced; ds(None) is slice(None), ds(j) is Slice(0, j)");
  sr_def("jax.Array.property.at", array_at,
         "x.at[idx]: indexed updates, .get/.set/.add/.subtract/.multiply/.min/.max(values, *, mode=, "
         "indices_are_sorted=, unique_indices=, wrap_negative_indices=) as gather and scatter; .apply(func, ...) "
         "as scatter_apply; .divide/.power");
  sr_def("jax.numpy.take", jnp_take,
         "take(a, indices, axis=None, mode=None, unique_indices=False, indices_are_sorted=False, fill_value=None): a gather; mode 'fill' by default");
  sr_def("jax.numpy.take_along_axis", jnp_take_along_axis,
         "take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None): one gather with batching dims, mode "
         "'fill' by default");
  sr_def("jax.numpy.put_along_axis", jnp_put_along_axis,
         "put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None): arr.at[...].set(values) along "
         "axis; inplace=False is required");
}
