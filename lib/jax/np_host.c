/* np_host.c: numpy's ndarray on the host (np_host.h): the class, its
 * constructor, the conversions to and from jax.Array, its text forms
 * (numpy's repr and str), attributes, methods and operators. */
#include "jax/np_host.h"
#include "jax/tracers.h"
#include "jax/array_methods.h"

#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "exec/kern.h"
#include "exec/numfmt.h"
#include "jax/builtins_exec.h"
#include "jax/numpy.h"
#include "py/introspect.h"
#include "py/class.h"
#include "py/enum.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

typedef struct Nd {
  SrArray *a;  /* meshless, row-major, not weak */
  int scalar;  /* a numpy scalar (np.float64(1.5)), rank 0 */
  int devices; /* an object array of devices (np.array(jax.devices())):
                  int64 device ids, printed and indexed as the devices */
} Nd;

static void nd_free(void *d) {
  Nd *n = d;
  sr_array_unref(n->a);
  free(n);
}

static void nd_repr(SrBuf *out, const SrVal *v);
static void nd_str(SrBuf *out, const SrVal *v);
SrClass sr_ndarray_class = {"numpy.ndarray", nd_free, nd_repr, nd_str, NULL};

static Nd *nd_of(const SrVal *v) { return sr_is_ndarray(v) ? v->obj.data : NULL; }

SrArray *sr_ndarray_array(const SrVal *v) { return nd_of(v) ? nd_of(v)->a : NULL; }

static const void *nd_data(const Nd *n) { return n->a->shard[0]->data; }

/* the ndarray holding array a (its reference stolen) */
static SrVal *nd_wrap(SrArray *a, int scalar) {
  Nd *n = sr_xcalloc(1, sizeof *n);
  n->a = a;
  n->scalar = scalar && a->type->ndim == 0;
  return sr_obj(&sr_ndarray_class, n);
}

SrVal *sr_ndarray_new(SrDtype dt, int rank, const int64_t *shape, void **data) {
  const SrType *t = sr_type_array(dt, rank, shape);
  size_t n = (size_t)sr_type_numel(t) * sr_elem_size(dt);
  SrBuffer *b = sr_buffer_try(n);
  *data = NULL;
  if (!b) return NULL;
  SrArray *a = sr_array_new(t, NULL, NULL);
  a->shard[0] = b;
  *data = b->data;
  return nd_wrap(a, 0);
}

SrVal *sr_np_scalar_new(SrDtype dt, void **data) {
  SrVal *v = sr_ndarray_new(dt, 0, NULL, data);
  if (v) nd_of(v)->scalar = 1;
  return v;
}

int sr_np_is_scalar(const SrVal *v) {
  const Nd *n = nd_of(v);
  return n && n->scalar;
}

SrVal *sr_np_as_scalar(SrVal *nd) {
  Nd *n = nd_of(nd);
  if (!n || n->scalar || n->a->type->ndim) return sr_ref(nd);
  return nd_wrap(sr_array_ref(n->a), 1);
}

/* The devices of ids: jax.devices()[id] */
static SrVal *device_of(SrInterp *I, int64_t id) {
  SrVal *fn = sr_lookup_qualname("jax.devices");
  SrArgs a = {0, NULL, 0, NULL, NULL, NULL};
  SrVal *l = fn ? sr_call(I, fn, &a) : NULL;
  if (!l) return NULL;
  SrVal *r = l->kind == SR_V_LIST && id >= 0 && id < l->seq.n ? sr_ref(l->seq.items[id])
                                                             : sr_raise(I, "ValueError", "no device %lld", (long long)id);
  sr_unref(l);
  return r;
}

SrVal *sr_np_mark_devices(SrInterp *I, SrVal *nd) {
  Nd *n = nd_of(nd);
  if (!n || n->a->type->dtype != SR_I64) return nd;
  if (n->a->type->ndim == 0) {
    SrVal *d = device_of(I, *(const int64_t *)nd_data(n));
    sr_unref(nd);
    return d;
  }
  n->devices = 1;
  return nd;
}

int sr_np_is_devices(const SrVal *v) { return nd_of(v) && nd_of(v)->devices; }

/* whether nested lists hold devices (np.array(jax.devices())) */
static int holds_devices(const SrVal *v, int depth) {
  if (depth > SR_MAX_RANK) return 0;
  if ((v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) && v->seq.n) return holds_devices(v->seq.items[0], depth + 1);
  return v->kind == SR_V_OBJ && strcmp(sr_val_kind_name(v), "CpuDevice") == 0;
}

/* ---- conversions ---- */

SrVal *sr_ndarray_adopt_jax(SrInterp *I, SrVal *v) {
  SrArrayObj *o = sr_array_of(v);
  SrArray *a = o && o->kind == SR_AV_CONCRETE ? o->data : NULL;
  if (v->rc != 1 || !a || a->rc != 1 || a->mesh || a->local || !a->shard[0] || !sr_buffer_unique(a->shard[0]) ||
      !sr_numfmt_supported(a->type->dtype) || strncmp(sr_dtype_name(a->type->dtype), "key<", 4) == 0 || o->deleted)
    return sr_ndarray_from_jax(I, v, 0);
  return nd_wrap(sr_array_ref(a), 0);
}

SrVal *sr_ndarray_from_jax(SrInterp *I, SrVal *v, int scalar) {
  SrVal *c = sr_array_concretize(I, v);
  SrArrayObj *o = sr_array_of(c);
  if (!o) return c;
  if (o->kind == SR_AV_TRACER) {
    SrBuf b = SR_BUF_INIT, og = SR_BUF_INIT;
    sr_type_long(&b, o->type);
    sr_tracer_origin_msg(I, c, &og);
    sr_raise(I, "TracerArrayConversionError",
             "The numpy.ndarray conversion method __array__() was called on traced array with shape %s%s", b.p,
             sr_buf_str(&og));
    sr_buf_free(&b);
    sr_buf_free(&og);
    sr_unref(c);
    return NULL;
  }
  if (o->kind != SR_AV_CONCRETE) {
    sr_unref(c);
    return sr_raise(I, "TypeError", "an abstract array has no value");
  }
  if (sr_array_check_deleted(I, c) < 0) {
    sr_unref(c);
    return NULL;
  }
  SrArray *a = o->data;
  const SrType *t = a->type;
  if (!sr_numfmt_supported(t->dtype) || strncmp(sr_dtype_name(t->dtype), "key<", 4) == 0) {
    sr_unref(c);
    return sr_raise(I, "TypeError", "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
                                    "jax.random.key_data(arr) if you wish to extract the underlying integer array.");
  }
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  /* a meshless array's one buffer is already the host's row-major data:
     copied once, not through a gathered copy */
  void *h = NULL;
  const void *src = !a->mesh && !a->local && a->shard[0] ? a->shard[0]->data : (h = sr_concrete_host_data(I, a));
  if (!src) {
    sr_unref(c);
    return NULL;
  }
  void *d;
  SrVal *r = sr_ndarray_new(t->dtype, t->ndim, shape, &d);
  if (r) {
    memcpy(d, src, sr_array_shard_bytes(sr_ndarray_array(r)));
    nd_of(r)->scalar = scalar && t->ndim == 0;
  } else {
    sr_raise(I, "MemoryError", "Unable to allocate an array of shape %s", "");
  }
  free(h);
  sr_unref(c);
  return r;
}

/* the 32-bit type JAX's canonicalize_dtype gives a 64-bit one */
static SrDtype canonical_dtype(SrInterp *I, SrDtype dt) {
  if (I->jax->enable_x64) return dt;
  switch (dt) {
  case SR_F64: return SR_F32;
  case SR_I64: return SR_I32;
  case SR_U64: return SR_U32;
  case SR_C128: return SR_C64;
  default: return dt;
  }
}

SrVal *sr_ndarray_to_jax(SrInterp *I, SrVal *v, int exact) {
  Nd *n = nd_of(v);
  SrDtype dt = n->a->type->dtype, to = exact ? dt : canonical_dtype(I, dt);
  if (to == dt) return sr_concrete_wrap(sr_array_ref(n->a));
  /* np.asarray(x).astype(canonical) on the host, as jnp.asarray does */
  const SrType *t = sr_type_with_dtype(n->a->type, to);
  size_t numel = (size_t)sr_type_numel(t), es = sr_elem_size(dt), et = sr_elem_size(to);
  SrBuffer *b = sr_buffer_try(numel * et);
  if (!b) return sr_raise(I, "MemoryError", "out of memory converting an array");
  const char *src = nd_data(n);
  char *dst = b->data;
  for (size_t i = 0; i < numel; i++) {
    const char *s = src + i * es;
    char *d = dst + i * et;
    if (to == SR_C64) {
      float f[2] = {(float)((const double *)s)[0], (float)((const double *)s)[1]};
      memcpy(d, f, sizeof f);
    } else if (to == SR_F32) {
      sr_kern_set_scalar(to, sr_kern_get_f64(dt, s), 0, d);
    } else {
      int64_t x = dt == SR_U64 ? (int64_t) * (const uint64_t *)s : sr_kern_get_i64(dt, s);
      if (to == SR_U32) *(uint32_t *)d = (uint32_t)x;
      else *(int32_t *)d = (int32_t)x;
    }
  }
  SrArray *a = sr_array_new(t, NULL, NULL);
  a->shard[0] = b;
  return sr_concrete_wrap(a);
}

void sr_np_eval_begin(SrInterp *I, SrNpEval *s) {
  s->x64 = I->jax->enable_x64;
  s->host = I->jax->host_numpy;
  s->trace = I->trace;
  I->jax->enable_x64 = 1;
  I->jax->host_numpy = 1;
  I->trace = NULL;
}

void sr_np_eval_end(SrInterp *I, const SrNpEval *s) {
  I->jax->enable_x64 = s->x64;
  I->jax->host_numpy = s->host;
  I->trace = s->trace;
}

SrVal *sr_np_call_x64(SrInterp *I, SrVal *fn, SrArgs *a) {
  SrNpEval e;
  sr_np_eval_begin(I, &e);
  SrVal *r = sr_call(I, fn, a);
  sr_np_eval_end(I, &e);
  return r;
}

/* The containers already converted, so that lists sharing their items
   are walked once and stay shared (array_shared_leaves): old -> new, open
   addressing. */
typedef struct SeqMap {
  SrVal **key, **val;
  size_t n, cap;
} SeqMap;

static SrVal **seqmap_slot(SeqMap *m, SrVal *k) {
  if (2 * (m->n + 1) > m->cap) {
    SeqMap t = {NULL, NULL, 0, m->cap ? 2 * m->cap : 64};
    t.key = sr_xcalloc(t.cap, sizeof *t.key);
    t.val = sr_xcalloc(t.cap, sizeof *t.val);
    for (size_t i = 0; i < m->cap; i++)
      if (m->key[i]) {
        SrVal **sl = seqmap_slot(&t, m->key[i]);
        *sl = m->val[i];
        t.key[sl - t.val] = m->key[i];
        t.n++;
      }
    free(m->key);
    free(m->val);
    *m = t;
  }
  size_t h = ((uintptr_t)k >> 4) * 0x9E3779B97F4A7C15ull;
  for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
    if (m->key[i] == k || !m->key[i]) return &m->val[i];
}

static SrVal *seq_to_jax(SrInterp *I, SrVal *v, int exact, SeqMap *m, int depth) {
  if (sr_is_ndarray(v)) return sr_ndarray_to_jax(I, v, exact);
  if ((v->kind != SR_V_LIST && v->kind != SR_V_TUPLE) || depth > SR_VAL_MAX_NEST) return sr_ref(v);
  SrVal **sl = seqmap_slot(m, v);
  if (*sl) return sr_ref(*sl);
  SrVal *r = NULL;
  for (int i = 0; i < v->seq.n; i++) {
    SrVal *x = seq_to_jax(I, v->seq.items[i], exact, m, depth + 1);
    if (!x) {
      sr_unref(r);
      return NULL;
    }
    if (!r && x != v->seq.items[i]) {
      /* the first item that changed: copy the ones before it */
      r = sr_seq(NULL, (SrValKind)v->kind, v->seq.n);
      for (int k = 0; k < i; k++) sr_seq_push(NULL, r, sr_ref(v->seq.items[k]));
    }
    if (r) sr_seq_push(NULL, r, x);
    else sr_unref(x);
  }
  if (!r) r = sr_ref(v);
  sl = seqmap_slot(m, v);
  m->key[sl - m->val] = v;
  *sl = r;
  m->n++;
  return sr_ref(r);
}

SrVal *sr_np_seq_to_jax(SrInterp *I, SrVal *v, int exact) {
  SeqMap m = {0};
  SrVal *r = seq_to_jax(I, v, exact, &m, 0);
  for (size_t i = 0; i < m.cap; i++) sr_unref(m.key[i] ? m.val[i] : NULL);
  free(m.key);
  free(m.val);
  return r;
}

SrVal *sr_np_asarray(SrInterp *I, SrVal *v, int dtype) {
  Nd *n = nd_of(v);
  if (n && !n->scalar && (dtype < 0 || dtype == n->a->type->dtype)) return sr_ref(v);
  if (n && dtype < 0) return nd_wrap(sr_array_ref(n->a), 0);
  if (!n && sr_class_instance_has(v, "__array__")) {
    /* numpy's array protocol: the ndarray its __array__() gives */
    SrVal *a = sr_class_call_method0(I, v, "__array__");
    if (!a) return NULL;
    SrVal *r = sr_is_ndarray(a) || sr_array_of(a) ? sr_np_asarray(I, a, dtype) : NULL;
    if (!r && !I->exc) sr_raise(I, "ValueError", "object __array__ method not producing an array");
    sr_unref(a);
    return r;
  }
  SrVal *x = sr_np_seq_to_jax(I, v, 1);
  if (!x) return NULL;
  SrVal *fn = sr_lookup_qualname("jax.numpy.asarray");
  SrVal *dv = dtype >= 0 ? sr_dtype_val(NULL, (SrDtype)dtype) : NULL;
  const char *kw[] = {sr_intern_cstr("dtype")};
  SrArgs a = {1, &x, dv ? 1 : 0, kw, &dv, NULL};
  SrVal *j = fn ? sr_np_call_x64(I, fn, &a) : sr_raise(I, "RuntimeError", "no jax.numpy.asarray");
  sr_unref(x);
  sr_unref(dv);
  if (!j) return NULL;
  SrVal *r = sr_ndarray_from_jax(I, j, 0);
  sr_unref(j);
  if (r && dtype < 0 && holds_devices(v, 0)) r = sr_np_mark_devices(I, r);
  if (r && !sr_is_ndarray(r)) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, r);
    sr_unref(r);
    sr_raise(I, "TypeError", "cannot make a numpy array of %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  return r;
}

/* The hook through which core's sr_bind_prim and the jax.numpy functions
   take an ndarray as a jax.Array. */
/* An IntEnum's member is its int, a weak scalar.  An object whose class defines __jax_array__ is the array that method
   returns, as jnp's functions and lax.asarray take it (a failing method
   reads as no array). */
static SrVal *nd_as_jax(SrInterp *I, SrVal *v) {
  if (sr_is_ndarray(v)) return sr_ndarray_to_jax(I, v, 0);
  /* an IntEnum's member is the int it is (a weak scalar) */
  SrVal *ev;
  if (sr_enum_kind_value(v, &ev) && ev->kind == SR_V_INT) {
    const SrType *t = sr_value_type(I, ev);
    return t ? sr_array_scalar(t, (double)ev->i, 0, ev->i) : NULL;
  }
  if (!sr_class_instance_has(v, "__jax_array__")) return NULL;
  SrVal *r = sr_class_call_method0(I, v, "__jax_array__");
  if (!r) {
    sr_exc_clear(I);
    return NULL;
  }
  if (sr_array_of(r)) return r;
  SrVal *x = sr_is_ndarray(r) ? sr_ndarray_to_jax(I, r, 0) : NULL;
  sr_unref(r);
  return x;
}

/* ---- printing ---- */

static int dtype_implied(SrDtype dt) { return dt == SR_F64 || dt == SR_I64 || dt == SR_BOOL || dt == SR_C128; }

static void nd_shape(const Nd *n, int64_t *shape) {
  for (int i = 0; i < n->a->type->ndim; i++) shape[i] = n->a->type->dims[i].size;
}

/* numpy 2's repr of a scalar: np.float64(1.5), np.int64(3), np.True_ */
static void scalar_repr(SrBuf *out, const Nd *n) {
  SrDtype dt = n->a->type->dtype;
  const void *d = nd_data(n);
  if (dt == SR_BOOL) {
    sr_buf_puts(out, *(const uint8_t *)d ? "np.True_" : "np.False_");
    return;
  }
  SrBuf s = SR_BUF_INIT;
  sr_numfmt_scalar(&s, dt, d);
  const char *p = sr_buf_str(&s);
  size_t len = s.len;
  /* np.complex128(1+2j): no parentheses */
  if (len >= 2 && p[0] == '(' && p[len - 1] == ')') p++, len -= 2;
  sr_buf_printf(out, "np.%s(", sr_dtype_name(dt));
  sr_buf_putn(out, p, len);
  sr_buf_putc(out, ')');
  sr_buf_free(&s);
}

/* numpy's _formatArray over elements that are words of their own (an
   object array's reprs): no padding, lines wrapped at width */
static void obj_recurse(SrBuf *s, const Nd *n, const int64_t *shape, int ndim, int axis, int64_t *flat,
                        const char *hang, long width, const char *sep) {
  if (axis == ndim) {
    sr_buf_printf(s, "CpuDevice(id=%lld)", (long long)((const int64_t *)nd_data(n))[(*flat)++]);
    return;
  }
  char next_hang[SR_MAX_RANK + 16];
  snprintf(next_hang, sizeof next_hang, "%s ", hang);
  long next_width = width - 1, hl = (long)strlen(hang);
  SrBuf body = SR_BUF_INIT;
  if (ndim - axis == 1) {
    long elem_width = width - (sep[0] == ',' ? 1 : 1);
    SrBuf line = SR_BUF_INIT;
    sr_buf_puts(&line, hang);
    for (int64_t i = 0; i < shape[axis]; i++) {
      SrBuf w = SR_BUF_INIT;
      obj_recurse(&w, n, shape, ndim, axis + 1, flat, next_hang, next_width, sep);
      long lw = i + 1 < shape[axis] ? elem_width : width;
      if ((long)line.len + (long)w.len > lw && (long)line.len > hl) {
        while (line.len && line.p[line.len - 1] == ' ') line.len--;
        sr_buf_putn(&body, line.p, line.len);
        sr_buf_putc(&body, '\n');
        line.len = 0;
        sr_buf_puts(&line, hang);
      }
      sr_buf_putn(&line, w.p, w.len);
      if (i + 1 < shape[axis]) sr_buf_puts(&line, sep);
      sr_buf_free(&w);
    }
    sr_buf_putn(&body, line.p, line.len);
    sr_buf_free(&line);
  } else {
    for (int64_t i = 0; i < shape[axis]; i++) {
      sr_buf_puts(&body, hang);
      obj_recurse(&body, n, shape, ndim, axis + 1, flat, next_hang, next_width, sep);
      if (i + 1 < shape[axis]) {
        if (sep[0] == ',') sr_buf_putc(&body, ',');
        for (int k = 0; k < ndim - axis - 1; k++) sr_buf_putc(&body, '\n');
      }
    }
  }
  sr_buf_putc(s, '[');
  sr_buf_putn(s, body.p + (body.len >= (size_t)hl ? hl : 0), body.len >= (size_t)hl ? body.len - hl : 0);
  sr_buf_putc(s, ']');
  sr_buf_free(&body);
}

static void devices_text(SrBuf *out, const Nd *n, const char *hang, long width, const char *sep) {
  int64_t shape[SR_MAX_RANK], flat = 0;
  nd_shape(n, shape);
  obj_recurse(out, n, shape, n->a->type->ndim, 0, &flat, hang, width, sep);
}

/* numpy's _array_repr_implementation, default print options */
static void nd_repr(SrBuf *out, const SrVal *v) {
  const Nd *n = v->obj.data;
  if (n->devices && n->a->type->ndim > 0) {
    SrBuf s = SR_BUF_INIT;
    sr_buf_puts(&s, "array(");
    devices_text(&s, n, "       ", sr_numfmt_opts.linewidth - 1, ", ");
    sr_buf_putc(&s, ',');
    const char *nl = strrchr(sr_buf_str(&s), '\n');
    long last = (long)s.len - (nl ? (long)(nl - s.p) + 1 : 0);
    sr_buf_putn(out, s.p, s.len);
    sr_buf_puts(out, last + 14 + 1 > sr_numfmt_opts.linewidth ? "\n      " : " ");
    sr_buf_puts(out, "dtype=object)");
    sr_buf_free(&s);
    return;
  }
  if (n->scalar) {
    scalar_repr(out, n);
    return;
  }
  const SrType *t = n->a->type;
  SrDtype dt = t->dtype;
  int64_t shape[SR_MAX_RANK];
  nd_shape(n, shape);
  int64_t numel = sr_type_numel(t);
  int skipdtype = dtype_implied(dt) && numel > 0;
  SrBuf s = SR_BUF_INIT;
  sr_buf_puts(&s, "array(");
  if (numel > 0 || (t->ndim == 1 && shape[0] == 0)) {
    sr_numfmt_array2string(&s, &sr_numfmt_opts, dt, t->ndim, shape, nd_data(n), ", ", 6, 1);
  } else {
    sr_buf_puts(&s, "[], shape=(");
    for (int i = 0; i < t->ndim; i++) sr_buf_printf(&s, i ? ", %lld" : "%lld", (long long)shape[i]);
    sr_buf_puts(&s, t->ndim == 1 ? ",)" : ")");
  }
  sr_buf_putc(&s, skipdtype ? ')' : ',');
  sr_buf_putn(out, s.p, s.len);
  if (!skipdtype) {
    SrBuf d = SR_BUF_INIT;
    sr_buf_printf(&d, "dtype=%s)", sr_dtype_name(dt));
    const char *nl = strrchr(sr_buf_str(&s), '\n');
    long last = (long)s.len - (nl ? (long)(nl - s.p) + 1 : 0);
    if (last + (long)d.len + 1 > sr_numfmt_opts.linewidth) sr_buf_puts(out, "\n      ");
    else sr_buf_putc(out, ' ');
    sr_buf_putn(out, d.p, d.len);
    sr_buf_free(&d);
  }
  sr_buf_free(&s);
}

static void nd_str(SrBuf *out, const SrVal *v) {
  const Nd *n = v->obj.data;
  int64_t shape[SR_MAX_RANK];
  nd_shape(n, shape);
  if (n->devices) devices_text(out, n, " ", sr_numfmt_opts.linewidth, " ");
  else if (n->scalar) sr_numfmt_scalar(out, n->a->type->dtype, nd_data(n));
  else sr_numfmt_str(out, n->a->type->dtype, n->a->type->ndim, shape, nd_data(n));
}

/* type(np.float64(1)) is numpy.float64 */
static const char *nd_type_name(const SrVal *v) {
  const Nd *n = v->obj.data;
  if (!n->scalar) return "numpy.ndarray";
  static const char *names[SR_NBUILTIN_DTYPES];
  SrDtype dt = n->a->type->dtype;
  if (dt >= SR_NBUILTIN_DTYPES) return "numpy.generic";
  if (!names[dt]) {
    char buf[64];
    snprintf(buf, sizeof buf, "numpy.%s%s", sr_dtype_name(dt), dt == SR_BOOL ? "_" : "");
    names[dt] = sr_intern_cstr(buf);
  }
  return names[dt];
}

/* ---- calling numpy's functions ---- */

static SrVal *call_np(SrInterp *I, const char *name, int n, SrVal **args) {
  char q[96];
  snprintf(q, sizeof q, "numpy.%s", name);
  SrVal *fn = sr_lookup_qualname(q);
  if (!fn) return sr_raise(I, "AttributeError", "module 'numpy' has no attribute '%s'", name);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  return sr_call(I, fn, &a);
}

/* ---- operators ---- */

static const char *binop_name(int op) {
  switch (op) {
  case SR_OP_ADD: return "add";
  case SR_OP_SUB: return "subtract";
  case SR_OP_MUL: return "multiply";
  case SR_OP_DIV: return "true_divide";
  case SR_OP_FLOORDIV: return "floor_divide";
  case SR_OP_MOD: return "remainder";
  case SR_OP_POW: return "power";
  case SR_OP_MATMUL: return "matmul";
  case SR_OP_LSHIFT: return "left_shift";
  case SR_OP_RSHIFT: return "right_shift";
  case SR_OP_BITAND: return "bitwise_and";
  case SR_OP_BITOR: return "bitwise_or";
  case SR_OP_BITXOR: return "bitwise_xor";
  case SR_OP_EQ: return "equal";
  case SR_OP_NE: return "not_equal";
  case SR_OP_LT: return "less";
  case SR_OP_LE: return "less_equal";
  case SR_OP_GT: return "greater";
  case SR_OP_GE: return "greater_equal";
  default: return NULL;
  }
}

static int number(const SrVal *v) {
  return v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || v->kind == SR_V_COMPLEX;
}

static SrVal *nd_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  const char *name = binop_name(op);
  if (!name) return NULL;
  /* with a jax.Array the result is a jax.Array: the ndarray goes to JAX */
  if (sr_array_of(a) || sr_array_of(b)) {
    SrVal *ja = sr_is_ndarray(a) ? sr_ndarray_to_jax(I, a, 0) : sr_ref(a);
    SrVal *jb = ja && sr_is_ndarray(b) ? sr_ndarray_to_jax(I, b, 0) : sr_ref(b);
    SrVal *r = ja && jb ? sr_binop(I, op, ja, jb) : NULL;
    sr_unref(ja);
    sr_unref(jb);
    return r;
  }
  for (int i = 0; i < 2; i++) {
    SrVal *x = i ? b : a;
    if (!sr_is_ndarray(x) && !number(x) && x->kind != SR_V_LIST && x->kind != SR_V_TUPLE) return NULL;
  }
  SrVal *args[2] = {a, b};
  return call_np(I, name, 2, args);
}

static int nd_setitem(SrInterp *I, SrVal *x, SrVal *key, SrVal *v);

/* the order of numpy's same_kind casting: bool, int, float, complex */
static int dtype_rank(SrDtype d) {
  return sr_dtype_is_complex(d) ? 3 : sr_dtype_is_float(d) ? 2 : sr_dtype_is_int(d) ? 1 : 0;
}

/* x op= y writes into x (ufunc out=x): where the result has x's shape and
   casts to its dtype by same_kind; otherwise x op y is rebound */
static SrVal *nd_inplace(SrInterp *I, int op, SrVal *x, SrVal *y) {
  Nd *n = x->obj.data;
  if (n->scalar || sr_array_of(y)) return NULL;
  SrVal *r = nd_binop(I, op, x, y);
  if (!r) return NULL;
  if (!sr_is_ndarray(r)) return r;
  const SrType *t = n->a->type, *u = nd_of(r)->a->type;
  int same = t->ndim == u->ndim && dtype_rank(u->dtype) <= dtype_rank(t->dtype);
  for (int i = 0; same && i < t->ndim; i++) same = t->dims[i].size == u->dims[i].size;
  if (!same) return r;
  SrVal *all = sr_word(NULL, "Ellipsis", 8);
  int rc = nd_setitem(I, x, all, r);
  sr_unref(all);
  sr_unref(r);
  return rc < 0 ? NULL : sr_ref(x);
}

static SrVal *nd_unop(SrInterp *I, int op, SrVal *x) {
  if (op == SR_OP_ITEM) return call_np(I, "ndarray.item", 1, &x);
  const char *fn = op == SR_OP_NEG ? "negative" : op == SR_OP_POS ? "positive" : op == SR_OP_INVERT ? "invert"
                   : op == SR_OP_ABS ? "absolute" : NULL;
  return fn ? call_np(I, fn, 1, &x) : NULL;
}

static int nd_truthy(SrInterp *I, SrVal *x) {
  Nd *n = x->obj.data;
  if (sr_type_numel(n->a->type) != 1) {
    sr_raise(I, "ValueError", "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
    return -1;
  }
  SrVal *item = nd_unop(I, SR_OP_ITEM, x);
  if (!item) return -1;
  int t = sr_val_truthy(item);
  sr_unref(item);
  return t;
}

static int64_t nd_len(SrInterp *I, SrVal *x) {
  Nd *n = x->obj.data;
  if (n->a->type->ndim == 0) {
    sr_raise(I, "TypeError", n->scalar ? "object of type '%s' has no len()" : "len() of unsized object",
             nd_type_name(x));
    return -1;
  }
  return n->a->type->dims[0].size;
}

/* an index with its ndarrays and lists (masks, index arrays) as
   jax.Arrays: numpy takes a list as an index array */
static SrVal *key_item_to_jax(SrInterp *I, SrVal *k) {
  if (sr_is_ndarray(k)) return sr_ndarray_to_jax(I, k, 1);
  if (k->kind != SR_V_LIST) return sr_ref(k);
  SrVal *nd = sr_np_asarray(I, k, -1);
  SrVal *r = nd ? sr_ndarray_to_jax(I, nd, 1) : NULL;
  sr_unref(nd);
  return r;
}

static SrVal *key_to_jax(SrInterp *I, SrVal *key) {
  if (key->kind != SR_V_TUPLE) return key_item_to_jax(I, key);
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, key->seq.n);
  for (int i = 0; i < key->seq.n; i++) {
    SrVal *x = key_item_to_jax(I, key->seq.items[i]);
    if (!x) {
      sr_unref(r);
      return NULL;
    }
    sr_seq_push(NULL, r, x);
  }
  return r;
}

/* numpy's IndexError for an integer index past its axis (JAX clamps):
   checked where the key is integers and slices, one axis each */
static int nd_check_bounds(SrInterp *I, const SrType *t, SrVal *key) {
  int n = key->kind == SR_V_TUPLE ? key->seq.n : 1;
  SrVal **ks = key->kind == SR_V_TUPLE ? key->seq.items : &key;
  for (int i = 0; i < n; i++)
    if (ks[i]->kind != SR_V_INT && !sr_is_obj(ks[i], &sr_slice_class)) return 0;
  for (int i = 0; i < n && i < t->ndim; i++) {
    if (ks[i]->kind != SR_V_INT) continue;
    int64_t k = ks[i]->i, d = t->dims[i].size;
    if (k >= d || k < -d) {
      sr_raise(I, "IndexError", "index %lld is out of bounds for axis %d with size %lld", (long long)k, i,
               (long long)d);
      return -1;
    }
  }
  return 0;
}

static SrVal *nd_getitem(SrInterp *I, SrVal *x, SrVal *key) {
  if (nd_of(x)->scalar) return sr_raise(I, "IndexError", "invalid index to scalar variable.");
  if (nd_check_bounds(I, nd_of(x)->a->type, key) < 0) return NULL;
  SrVal *fn = sr_lookup_qualname("jax.numpy._getitem");
  SrVal *args[2] = {sr_ndarray_to_jax(I, x, 1), key_to_jax(I, key)};
  SrVal *r = NULL;
  if (fn && args[0] && args[1]) {
    SrArgs a = {2, args, 0, NULL, NULL, NULL};
    r = sr_np_call_x64(I, fn, &a);
  }
  sr_unref(args[0]);
  sr_unref(args[1]);
  if (!r) return NULL;
  SrVal *nd = sr_ndarray_from_jax(I, r, 1);
  sr_unref(r);
  return nd_of(x)->devices ? sr_np_mark_devices(I, nd) : nd;
}

/* x[key] = v: the array with the update, as x.at[key].set(v) computes
   it, replaces x's data (numpy writes in place; a view taken before does
   not see it here) */
static int nd_setitem(SrInterp *I, SrVal *x, SrVal *key, SrVal *v) {
  Nd *n = x->obj.data;
  if (n->scalar) {
    sr_raise(I, "TypeError", "'%s' object does not support item assignment", nd_type_name(x) + 6);
    return -1;
  }
  SrNpEval e;
  sr_np_eval_begin(I, &e);
  SrVal *jx = sr_ndarray_to_jax(I, x, 1), *jk = key_to_jax(I, key);
  SrVal *jv = sr_is_ndarray(v) ? sr_ndarray_to_jax(I, v, 1) : sr_np_seq_to_jax(I, v, 1);
  SrVal *at = jx ? sr_getattr(I, jx, "at") : NULL;
  const SrLangOps *ops = at ? sr_ops(at) : NULL;
  SrVal *ref = ops && ops->getitem && jk ? ops->getitem(I, at, jk) : NULL;
  SrVal *set = ref ? sr_getattr(I, ref, "set") : NULL;
  SrVal *r = NULL;
  if (set && jv) {
    /* numpy casts the value to the array's dtype */
    SrVal *fn = sr_lookup_qualname("jax.numpy.asarray");
    SrVal *dv = sr_dtype_val(NULL, n->a->type->dtype);
    const char *kw[] = {sr_intern_cstr("dtype")};
    SrArgs ca = {1, &jv, 1, kw, &dv, NULL};
    SrVal *cv = fn ? sr_call(I, fn, &ca) : NULL;
    sr_unref(dv);
    if (cv) r = sr_call1(I, set, cv);
    sr_unref(cv);
  }
  sr_np_eval_end(I, &e);
  sr_unref(jx);
  sr_unref(jk);
  sr_unref(jv);
  sr_unref(at);
  sr_unref(ref);
  sr_unref(set);
  if (!r) {
    if (!I->exc) sr_raise(I, "TypeError", "unsupported index assignment");
    return -1;
  }
  SrVal *nd = sr_ndarray_from_jax(I, r, 0);
  sr_unref(r);
  if (!nd) return -1;
  if (!sr_is_ndarray(nd)) {
    sr_unref(nd);
    sr_raise(I, "TypeError", "unsupported index assignment");
    return -1;
  }
  Nd *m = nd->obj.data;
  SrArray *old = n->a;
  n->a = m->a;
  m->a = old;
  sr_unref(nd);
  return 0;
}

static SrVal *nd_iter(SrInterp *I, SrVal *x) { return sr_iter_by_index(I, x, nd_len(I, x), nd_getitem); }

/* ---- attributes and methods ---- */

/* x.method(...): numpy.ndarray.method (its own) or numpy.method(x, ...) */
static SrVal *nd_method(SrInterp *I, SrArgs *a) {
  return sr_method_forward(I, a, "numpy.ndarray", "numpy", "numpy.ndarray");
}

static const char *const methods[] = {
  "reshape", "sum", "max", "min", "mean", "prod", "astype", "transpose", "squeeze", "argmax",
  "argmin", "cumsum", "cumprod", "ravel", "flatten", "clip", "dot", "any", "all", "round", "conj", "var",
  "std", "swapaxes", "repeat", "item", "tolist", "copy", "sort", "argsort", "nonzero", "fill", "view", NULL,
};

static SrVal *nd_getattr(SrInterp *I, SrVal *self, const char *name) {
  Nd *n = self->obj.data;
  const SrType *t = n->a->type;
  if (strcmp(name, "shape") == 0) return sr_shape_tuple(t);
  if (strcmp(name, "dtype") == 0) return sr_dtype_val(NULL, n->devices ? sr_dtype_intern("object", 6) : t->dtype);
  if (strcmp(name, "ndim") == 0) return sr_int(NULL, t->ndim);
  if (strcmp(name, "size") == 0) return sr_int(NULL, sr_type_numel(t));
  if (strcmp(name, "itemsize") == 0) return sr_int(NULL, (int64_t)sr_dtype_info(t->dtype)->size);
  if (strcmp(name, "nbytes") == 0) return sr_int(NULL, sr_type_numel(t) * (int64_t)sr_dtype_info(t->dtype)->size);
  if (strcmp(name, "T") == 0) return call_np(I, "transpose", 1, &self);
  /* ndarray.flat, as far as iterating and indexing it go: the elements in
     row-major order */
  if (strcmp(name, "flat") == 0) return call_np(I, "ravel", 1, &self);
  if (strcmp(name, "real") == 0 || strcmp(name, "imag") == 0) return call_np(I, name, 1, &self);
  for (int i = 0; methods[i]; i++)
    if (strcmp(methods[i], name) == 0) {
      SrVal *m = sr_builtin_with(name, nd_method, (void *)sr_intern_cstr(name), NULL);
      ((SrBuiltin *)m->obj.data)->self = sr_ref(self);
      return m;
    }
  return NULL;
}

/* ndarray.__hash__ is None; numpy's scalars hash */
static int nd_unhashable(const SrVal *v) { return !((const Nd *)v->obj.data)->scalar; }

static const SrLangOps nd_ops = {
  .unhashable = nd_unhashable,
  .getattr = nd_getattr,
  .getitem = nd_getitem,
  .setitem = nd_setitem,
  .iter = nd_iter,
  .binop = nd_binop,
  .inplace = nd_inplace,
  .unop = nd_unop,
  .len = nd_len,
  .truthy = nd_truthy,
};

/* ---- the methods numpy has and jax.numpy lacks ---- */

static SrVal *m_tolist_of(SrInterp *I, SrVal *x) {
  Nd *n = x->obj.data;
  if (n->a->type->ndim == 0) return nd_unop(I, SR_OP_ITEM, x);
  SrVal *items = nd_iter(I, x);
  if (!items) return NULL;
  for (int i = 0; i < items->seq.n; i++) {
    /* an array of devices gives its devices themselves */
    if (!nd_of(items->seq.items[i])) continue;
    SrVal *e = m_tolist_of(I, items->seq.items[i]);
    if (!e) {
      sr_unref(items);
      return NULL;
    }
    sr_unref(items->seq.items[i]);
    items->seq.items[i] = e;
  }
  return items;
}

static SrVal *self_nd(SrInterp *I, SrArgs *a, const char *fname) {
  if (a->n < 1 || !sr_is_ndarray(a->v[0]))
    return sr_raise(I, "TypeError", "descriptor '%s' for 'numpy.ndarray' objects needs an argument", fname);
  return a->v[0];
}

static SrVal *m_tolist(SrInterp *I, SrArgs *a) {
  SrVal *x = self_nd(I, a, "tolist");
  return x ? m_tolist_of(I, x) : NULL;
}

/* a Python scalar of the one element (x.item(), int(x), float(x)) */
static SrVal *m_item(SrInterp *I, SrArgs *a) {
  SrVal *x = self_nd(I, a, "item");
  if (!x) return NULL;
  Nd *n = x->obj.data;
  const SrType *t = n->a->type;
  int64_t idx = 0;
  if (a->n == 2) {
    if (sr_as_int(I, a->v[1], "index", &idx) < 0) return NULL;
    if (idx < 0) idx += sr_type_numel(t);
    if (idx < 0 || idx >= sr_type_numel(t)) return sr_raise(I, "IndexError", "index %lld is out of bounds for size %lld",
                                                            (long long)(a->v[1]->i), (long long)sr_type_numel(t));
  } else if (sr_type_numel(t) != 1) {
    return sr_raise(I, "ValueError", "can only convert an array of size 1 to a Python scalar");
  }
  const char *p = (const char *)nd_data(n) + idx * (int64_t)sr_elem_size(t->dtype);
  SrDtype dt = t->dtype;
  if (dt == SR_BOOL) return sr_bool(*(const uint8_t *)p != 0);
  if (dt == SR_C64) return sr_complex(NULL, ((const float *)p)[0], ((const float *)p)[1]);
  if (dt == SR_C128) return sr_complex(NULL, ((const double *)p)[0], ((const double *)p)[1]);
  if (sr_dtype_is_float(dt)) return sr_float(NULL, sr_kern_get_f64(dt, p));
  if (dt == SR_U64) return sr_int(NULL, (int64_t) * (const uint64_t *)p);
  return sr_int(NULL, sr_kern_get_i64(dt, p));
}

static SrVal *m_copy(SrInterp *I, SrArgs *a) {
  SrVal *x = self_nd(I, a, "copy");
  if (!x) return NULL;
  Nd *n = x->obj.data;
  int64_t shape[SR_MAX_RANK];
  nd_shape(n, shape);
  void *d;
  SrVal *r = sr_ndarray_new(n->a->type->dtype, n->a->type->ndim, shape, &d);
  if (!r) return sr_raise(I, "MemoryError", "out of memory copying an array");
  memcpy(d, nd_data(n), sr_array_shard_bytes(n->a));
  nd_of(r)->scalar = n->scalar;
  return r;
}

/* x.view(dtype): the same bytes read as dtype (a copy here: host arrays
   share no memory); the last axis scales by the ratio of the sizes */
static SrVal *m_view(SrInterp *I, SrArgs *a) {
  SrVal *x = self_nd(I, a, "view");
  if (!x) return NULL;
  if (a->n != 2) return sr_raise(I, "TypeError", "view() takes exactly 1 argument (%d given)", a->n - 1);
  Nd *n = x->obj.data;
  int dt;
  int saved = I->jax->explicit_x64;
  I->jax->explicit_x64 = 2;
  int rc = sr_dtype_arg(I, a->v[1], &dt, "view");
  I->jax->explicit_x64 = saved;
  if (rc < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  nd_shape(n, shape);
  int nd = n->a->type->ndim;
  size_t from = sr_dtype_info(n->a->type->dtype)->size, to = sr_dtype_info((SrDtype)dt)->size;
  if (from != to) {
    if (!nd) return sr_raise(I, "ValueError", "Changing the dtype of a 0d array is only supported if the itemsize is unchanged");
    int64_t bytes = shape[nd - 1] * (int64_t)from;
    if (bytes % (int64_t)to)
      return sr_raise(I, "ValueError",
                      "When changing to a larger dtype, its size must be a divisor of the total size in bytes of the "
                      "last axis of the array.");
    shape[nd - 1] = bytes / (int64_t)to;
  }
  void *d;
  SrVal *r = sr_ndarray_new((SrDtype)dt, nd, shape, &d);
  if (!r) return sr_raise(I, "MemoryError", "out of memory viewing an array");
  memcpy(d, nd_data(n), sr_array_shard_bytes(n->a));
  return r;
}

static SrVal *m_fill(SrInterp *I, SrArgs *a) {
  SrVal *x = self_nd(I, a, "fill");
  if (!x) return NULL;
  if (a->n != 2) return sr_raise(I, "TypeError", "fill() takes exactly 1 argument (%d given)", a->n - 1);
  SrVal *args[2] = {x, a->v[1]};
  SrVal *r = call_np(I, "full_like", 2, args);
  if (!r) return NULL;
  if (sr_is_ndarray(r)) {
    Nd *n = x->obj.data, *m = r->obj.data;
    SrArray *old = n->a;
    n->a = m->a;
    m->a = old;
  }
  sr_unref(r);
  return sr_none();
}

/* ---- numpy's scalar types called: np.float32(1.5) ---- */

static SrVal *np_dtype_vals[SR_NBUILTIN_DTYPES];

SrVal *sr_np_scalar_type(SrDtype d) {
  if (d >= SR_NBUILTIN_DTYPES) return NULL;
  if (!np_dtype_vals[d]) np_dtype_vals[d] = sr_dtype_val(NULL, d);
  return np_dtype_vals[d];
}

int sr_np_dtype_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  return sr_np_is_scalar(x) && sr_ndarray_array(x)->type->dtype == self->dtype;
}

SrVal *sr_np_dtype_call(SrInterp *I, SrVal *self, SrArgs *a) {
  int mine = 0;
  for (int i = 0; i < SR_NBUILTIN_DTYPES && !mine; i++) mine = np_dtype_vals[i] == self;
  if (!mine) return sr_jnp_dtype_call(I, self, a);
  SrDtype dt = self->dtype;
  SrVal *zero = sr_int(NULL, 0);
  SrVal *x = a->n ? a->v[0] : zero;
  if (a->n > 1) {
    sr_unref(zero);
    return sr_raise(I, "TypeError", "%s() takes at most 1 argument (%d given)", sr_dtype_name(dt), a->n);
  }
  SrVal *r = sr_np_asarray(I, x, dt);
  sr_unref(zero);
  SrVal *s = r ? sr_np_as_scalar(r) : NULL;
  sr_unref(r);
  return s;
}

/* Mesh.devices: an object array of the mesh's devices */
static SrKindGetattr prev_mesh;

static SrVal *mesh_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrVal *r = prev_mesh ? prev_mesh(I, self, name) : NULL;
  if (r && strcmp(name, "devices") == 0 && sr_array_of(r)) {
    SrVal *nd = sr_ndarray_from_jax(I, r, 0);
    sr_unref(r);
    if (!nd || !sr_is_ndarray(nd)) return nd;
    SrArray *a = sr_ndarray_array(nd);
    if (a->type->dtype != SR_I64) {
      /* the ids as int64 */
      SrVal *args[2] = {nd, sr_dtype_val(NULL, SR_I64)};
      SrVal *c = call_np(I, "ndarray.astype", 2, args);
      sr_unref(args[1]);
      sr_unref(nd);
      nd = c;
      if (!nd) return NULL;
    }
    return sr_np_mark_devices(I, nd);
  }
  return r;
}

/* ---- registration ---- */

static SrVal *bi_ndarray(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "ndarray", "shape, dtype=", p) < 0) return NULL;
  SrVal *fn = sr_lookup_qualname("numpy.zeros");
  SrArgs ca = {p[1] ? 2 : 1, p, 0, NULL, NULL, NULL};
  return fn ? sr_call(I, fn, &ca) : NULL;
}

void sr_np_host_init(void) {
  sr_ndarray_class.lang = &nd_ops;
  sr_val_type_name_class(&sr_ndarray_class, nd_type_name);
  sr_as_array_hook = nd_as_jax;
  if (!prev_mesh) {
    prev_mesh = sr_kind_getattr_get(SR_V_MESH);
    sr_kind_getattr_set(SR_V_MESH, mesh_getattr);
  }
  sr_mark_builtin_type(
      sr_def("numpy.ndarray", bi_ndarray, "np.ndarray(shape, dtype=float): numpy's array class (its objects are host arrays)"),
      "numpy.ndarray");
  sr_def("numpy.ndarray.tolist", m_tolist, "x.tolist(): nested lists of Python scalars");
  sr_def("numpy.ndarray.item", m_item, "x.item(): the one element as a Python scalar");
  sr_def("numpy.ndarray.copy numpy.copy", m_copy, "x.copy(): a new array with the same data");
  sr_def("numpy.ndarray.fill", m_fill, "x.fill(value): sets every element");
  sr_def("numpy.ndarray.view", m_view, "x.view(dtype): the array's bytes read as dtype");
  static const struct {
    const char *name;
    SrDtype d;
  } dtypes[] = {
    {"bool_", SR_BOOL}, {"bool", SR_BOOL}, {"int8", SR_I8}, {"int16", SR_I16}, {"int32", SR_I32},
    {"int64", SR_I64}, {"uint8", SR_U8}, {"uint16", SR_U16}, {"uint32", SR_U32}, {"uint64", SR_U64},
    {"float16", SR_F16}, {"float32", SR_F32}, {"float64", SR_F64}, {"complex64", SR_C64},
    {"complex128", SR_C128}, {"int_", SR_I64}, {"double", SR_F64}, {"single", SR_F32}, {"intp", SR_I64},
    {"uint", SR_U64}, {"half", SR_F16}, {"cdouble", SR_C128}, {"csingle", SR_C64}, {NULL, 0},
  };
  for (int i = 0; dtypes[i].name; i++) {
    SrDtype d = dtypes[i].d;
    if (!np_dtype_vals[d]) np_dtype_vals[d] = sr_dtype_val(NULL, d);
    char q[64];
    snprintf(q, sizeof q, "numpy.%s", dtypes[i].name);
    sr_register(q, sr_ref(np_dtype_vals[d]));
  }
  for (int b = 0; b < 2; b++) {
    void *d;
    SrVal *v = sr_np_scalar_new(SR_BOOL, &d);
    *(uint8_t *)d = (uint8_t)b;
    sr_register(b ? "numpy.True_" : "numpy.False_", v);
  }
  sr_np_host_funcs_init();
}
