/* numpy_small18.c: small jax.numpy names of lax_numpy.py and dtypes.py,
 * written with the same calls in the same order as JAX's Python:
 * ndarray (jax.Array, an isinstance target for arrays and tracers), the
 * scalar type aliases double, single, float_, int_ and uint, isdtype,
 * gradient, fromstring, frombuffer, and fromiter and fromfile (which JAX
 * leaves unimplemented on purpose); poly and polyfit (polynomial.py),
 * histogramdd and histogram2d.  Registered by sr_jnp_small18_init (jax.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/array.h"
#include "exec/kern.h"
#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "jax/tracers.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

/* ---- ndarray ---- */

static void ndarray_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<class 'jax.Array'>");
}

static int ndarray_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  (void)self;
  SrArrayObj *o = sr_array_of(x);
  /* a Ref is no jax.Array (core.Ref is a class of its own) */
  return o && o->kind != SR_AV_ABSTRACT && !(o->kind == SR_AV_CONCRETE && o->type->ref);
}

static SrVal *ndarray_call(SrInterp *I, SrVal *self, SrArgs *a) {
  (void)self;
  (void)a;
  return sr_raise(I, "TypeError", "jax.numpy.ndarray() should not be instantiated explicitly. Use jax.numpy.array, "
                                  "or jax.numpy.zeros instead.");
}

static SrVal *ndarray_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  (void)self;
  if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, "Array");
  if (strcmp(name, "__module__") == 0) return sr_str_cstr(NULL, "jax");
  /* the methods, unbound (jax.Array.item) */
  char q[128];
  snprintf(q, sizeof q, "jax.Array.method.%s", name);
  SrVal *m = sr_lookup_qualname(q);
  return m ? sr_ref(m) : NULL;
}

static const SrLangOps ndarray_ops = {
    .call = ndarray_call, .getattr = ndarray_getattr, .instancecheck = ndarray_instancecheck};
static const SrClass ndarray_class = {"type", NULL, ndarray_repr, NULL, &ndarray_ops};

/* jax.core.Tracer: isinstance holds for the values being traced (by jit,
   vmap, grad... all trace here) */
static void tracer_class_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<class 'jax._src.core.Tracer'>");
}

static int tracer_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  (void)self;
  SrArrayObj *o = sr_array_of(x);
  return o && o->kind == SR_AV_TRACER;
}

static SrVal *tracer_class_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  (void)self;
  if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, "Tracer");
  if (strcmp(name, "__module__") == 0) return sr_str_cstr(NULL, "jax._src.core");
  return NULL;
}

static const SrLangOps tracer_class_ops = {.getattr = tracer_class_getattr, .instancecheck = tracer_instancecheck};
static const SrClass tracer_class = {"type", NULL, tracer_class_repr, NULL, &tracer_class_ops};

/* ---- isdtype ---- */

/* np.dtype(v): a dtype, its name, or Python's bool, int, float, complex
   (no x64 truncation: numpy's dtypes); -1 if v is none of them. */
static int np_dtype_of(SrVal *v) {
  if (v->kind == SR_V_DTYPE) return (int)v->dtype;
  if (v->kind == SR_V_STR) {
    int d = sr_dtype_lookup(v->str.s, v->str.n);
    return d >= 0 && d < SR_NBUILTIN_DTYPES ? d : -1;
  }
  const char *nm = sr_is_obj(v, &sr_builtin_class) ? sr_builtin_name(v) : NULL;
  if (!nm) return -1;
  if (strcmp(nm, "builtins.bool") == 0) return SR_BOOL;
  if (strcmp(nm, "builtins.int") == 0) return SR_I64;
  if (strcmp(nm, "builtins.float") == 0) return SR_F64;
  if (strcmp(nm, "builtins.complex") == 0) return SR_C128;
  return -1;
}

static const char *const dtype_kinds[] = {"bool",          "signed integer",   "unsigned integer", "integral",
                                          "real floating", "complex floating", "numeric"};

static int in_kind(SrDtype d, int kind) {
  int k = sr_dtype_kind(d);
  int sgn = k == SR_DK_INT, uns = k == SR_DK_UINT, flt = sr_dtype_is_float(d), cpx = k == SR_DK_COMPLEX;
  switch (kind) {
  case 0: return d == SR_BOOL;
  case 1: return sgn;
  case 2: return uns;
  case 3: return sgn || uns;
  case 4: return flt;
  case 5: return cpx;
  default: return sgn || uns || flt || cpx;
  }
}

static SrVal *jnp_isdtype(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "isdtype", "dtype, kind", p) < 0) return NULL;
  int d = np_dtype_of(p[0]);
  if (d < 0) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, p[0]);
    SrVal *r = sr_raise(I, "TypeError", "Cannot interpret '%s' as a data type", sr_buf_str(&b));
    sr_buf_free(&b);
    return r;
  }
  int n = p[1]->kind == SR_V_TUPLE ? p[1]->seq.n : 1;
  int found = 0;
  for (int i = 0; i < n; i++) {
    SrVal *k = p[1]->kind == SR_V_TUPLE ? p[1]->seq.items[i] : p[1];
    if (k->kind == SR_V_STR) {
      int j = 0;
      while (j < 7 && !(strlen(dtype_kinds[j]) == k->str.n && memcmp(dtype_kinds[j], k->str.s, k->str.n) == 0)) j++;
      if (j < 7) {
        found |= in_kind((SrDtype)d, j);
        continue;
      }
    }
    int kd = np_dtype_of(k);
    if (kd < 0) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, k);
      SrVal *r = k->kind == SR_V_STR
                     ? sr_raise(I, "ValueError",
                                "Unrecognized kind=%s expected one of ['bool', 'signed integer', 'unsigned integer', "
                                "'integral', 'real floating', 'complex floating', 'numeric'], or a compatible input "
                                "for jnp.dtype()",
                                sr_buf_str(&b))
                     : sr_raise(I, "TypeError", "Expected kind to be a dtype, string, or tuple; got kind=%s",
                                sr_buf_str(&b));
      sr_buf_free(&b);
      return r;
    }
    found |= kd == d;
  }
  return sr_bool(found);
}

/* ---- gradient ---- */

static SrVal *slice_in_dim(SrNnScope *s, SrVal *x, int64_t lo, int64_t hi, int64_t axis);

/* gradient_along_axis(a, h, axis): second-order central differences
   inside, first-order ones at the edges */
static SrVal *grad_axis(SrNnScope *s, SrVal *a, SrVal *h, int64_t axis) {
  SrInterp *I = s->I;
  /* each operand made in Python's order, left to right */
#define SL(x, lo, hi) slice_in_dim(s, x, lo, hi, axis)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
  SrVal *u1 = SL(a, 1, 2), *u0 = SL(a, 0, 1);
  SrVal *upper = OP(SUB, u1, u0);
  SrVal *l1 = SL(a, -1, INT64_MAX), *l0 = SL(a, -2, -1);
  SrVal *lower = OP(SUB, l1, l0);
  const SrType *ht = vtype(I, h);
  SrVal *inner;
  if (!ht) return sr_raise(I, "TypeError", "spacing must be a scalar or a 1-D array"), NULL;
  if (ht->ndim == 0) {
    SrVal *i2 = SL(a, 2, INT64_MAX), *i0 = SL(a, INT64_MIN, -2);
    SrVal *d = OP(SUB, i2, i0);
    SrVal *half = OP(MUL, d, sr_nn_float(s, 0.5));
    inner = OP(DIV, half, h);
    lower = OP(DIV, lower, h);
    upper = OP(DIV, upper, h);
  } else if (ht->ndim == 1) {
    const SrType *at = vtype(I, a);
    if (ht->dims[0].size != at->dims[axis].size)
      return sr_raise(I, "ValueError", "Spacing arrays must have the same length as the dimension along which the "
                                       "gradient is calculated."),
             NULL;
    SrVal *st = sr_nn_keep(s, sr_seq(NULL, SR_V_TUPLE, at->ndim));
    for (int i = 0; i < at->ndim; i++) sr_seq_push(NULL, st, sr_int(NULL, i == axis ? ht->dims[0].size : 1));
    SrVal *hr = sr_nn_call2(s, "jax.numpy.reshape", h, st);
    if (!hr) return NULL;
    SrVal *x1 = SL(hr, 1, 2), *x0 = SL(hr, 0, 1);
    upper = OP(DIV, upper, OP(SUB, x1, x0));
    SrVal *y1 = SL(hr, -1, INT64_MAX), *y0 = SL(hr, -2, -1);
    lower = OP(DIV, lower, OP(SUB, y1, y0));
    SrVal *p1 = SL(hr, 1, -1), *p0 = SL(hr, 0, -2);
    SrVal *dx1 = OP(SUB, p1, p0);
    SrVal *q1 = SL(hr, 2, INT64_MAX), *q0 = SL(hr, 1, -1);
    SrVal *dx2 = OP(SUB, q1, q0);
    SrVal *neg = sr_nn_call1(s, "jax.numpy.negative", dx2);
    SrVal *sum = OP(ADD, dx1, dx2);
    SrVal *ca = OP(DIV, neg, OP(MUL, dx1, sum));
    SrVal *diff = OP(SUB, dx2, dx1);
    SrVal *cb = OP(DIV, diff, OP(MUL, dx1, dx2));
    SrVal *sum2 = OP(ADD, dx1, dx2);
    SrVal *cc = OP(DIV, dx1, OP(MUL, dx2, sum2));
    SrVal *t0 = OP(MUL, ca, SL(a, 0, -2));
    SrVal *t1 = OP(MUL, cb, SL(a, 1, -1));
    SrVal *t01 = OP(ADD, t0, t1);
    SrVal *t2 = OP(MUL, cc, SL(a, 2, INT64_MAX));
    inner = OP(ADD, t01, t2);
  } else {
    return sr_raise(I, "ValueError", "Spacing arrays must be 1D arrays or scalars."), NULL;
  }
#undef OP
#undef SL
  if (!upper || !inner || !lower) return NULL;
  SrVal *t = sr_nn_keep(s, sr_seq(NULL, SR_V_TUPLE, 3));
  sr_seq_push(NULL, t, sr_ref(upper));
  sr_seq_push(NULL, t, sr_ref(inner));
  sr_seq_push(NULL, t, sr_ref(lower));
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {sr_nn_int(s, axis)};
  return sr_nn_call(s, "jax.numpy.concatenate", 1, &t, 1, kw, kv);
}

/* lax_slicing.slice_in_dim(x, lo, hi, axis=axis); INT64_MIN/MAX for None */
static SrVal *slice_in_dim(SrNnScope *s, SrVal *x, int64_t lo, int64_t hi, int64_t axis) {
  if (!x) return NULL;
  SrVal *v[2] = {lo == INT64_MIN ? sr_none() : sr_nn_int(s, lo), hi == INT64_MAX ? sr_none() : sr_nn_int(s, hi)};
  SrVal *args[3] = {x, v[0], v[1]};
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {sr_nn_int(s, axis)};
  return sr_nn_call(s, "jax.lax.slice_in_dim", 3, args, 1, kw, kv);
}

static SrVal *jnp_gradient(SrInterp *I, SrArgs *a) {
  SrVal *axis = NULL, *edge = NULL;
  for (int i = 0; i < a->nkw; i++) {
    if (strcmp(a->kw[i], "axis") == 0) axis = a->kwv[i];
    else if (strcmp(a->kw[i], "edge_order") == 0) edge = a->kwv[i];
    else return sr_raise(I, "TypeError", "gradient() got an unexpected keyword argument '%s'", a->kw[i]);
  }
  if (a->n < 1) return sr_raise(I, "TypeError", "gradient() missing 1 required positional argument: 'f'");
  if (edge && edge->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "The 'edge_order' argument to jnp.gradient is not supported.");
  if (a->n > SR_MAX_RANK + 1) return sr_raise(I, "TypeError", "too many spacing arguments");
  SrNnScope s = {I, {0}, 0};
  SrVal *args[SR_MAX_RANK + 1];
  for (int i = 0; i < a->n; i++) args[i] = a->v[i];
  if (sr_nn_promote_inexact(&s, a->n, args, "gradient") < 0) return sr_nn_done(&s, NULL);
  SrVal *f = args[0];
  int nsp = a->n - 1;
  const SrType *t = vtype(I, f);
  int64_t axes[SR_MAX_RANK];
  int nax = 0;
  if (!axis || axis->kind == SR_V_NONE) {
    for (int i = 0; i < t->ndim; i++) axes[nax++] = i;
  } else {
    int64_t raw[SR_MAX_RANK];
    if (sr_ints_arg(I, axis, raw, &nax, "axis") < 0) return sr_nn_done(&s, NULL);
    for (int i = 0; i < nax; i++)
      if (sr_api_axis(I, raw[i], t->ndim, &axes[i]) < 0) return sr_nn_done(&s, NULL);
  }
  if (nax == 0) return sr_nn_done(&s, sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, 0)));
  int64_t smallest = INT64_MAX;
  for (int i = 0; i < nax; i++)
    if (t->dims[axes[i]].size < smallest) smallest = t->dims[axes[i]].size;
  if (smallest < 2)
    return sr_nn_done(&s, sr_raise(I, "ValueError", "Shape of array too small to calculate a numerical gradient, at "
                                                    "least 2 elements are required."));
  if (nsp != 0 && nsp != 1 && nsp != nax) {
    SrBuf b = SR_BUF_INIT;
    if (axis) sr_val_repr(&b, axis);
    else sr_buf_puts(&b, "None");
    SrVal *r = sr_raise(I, "TypeError", "Invalid number of spacing arguments %d for axis=%s", nsp, sr_buf_str(&b));
    sr_buf_free(&b);
    return sr_nn_done(&s, r);
  }
  SrVal *out = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, nax));
  for (int i = 0; i < nax; i++) {
    SrVal *h = nsp == 0 ? sr_nn_float(&s, 1.0) : args[1 + (nsp == 1 ? 0 : i)];
    SrVal *g = grad_axis(&s, f, h, axes[i]);
    if (!g) return sr_nn_done(&s, NULL);
    sr_seq_push(NULL, out, sr_ref(g));
  }
  return sr_nn_done(&s, nax == 1 ? out->seq.items[0] : out);
}

/* ---- fromstring, fromiter, fromfile ---- */

/* np.fromstring(string, dtype, count, sep=sep) in text mode, then asarray */
static SrVal *jnp_fromstring(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "fromstring", "string, dtype=, count=, *, sep", p) < 0) return NULL;
  const char *str = sr_as_str(I, p[0], "string");
  const char *sep = str ? sr_as_str(I, p[3], "sep") : NULL;
  if (!sep) return NULL;
  int64_t count = -1;
  if (p[2] && sr_as_int(I, p[2], "count", &count) < 0) return NULL;
  int dt = SR_F64;
  if (p[1] && p[1]->kind != SR_V_NONE && (dt = np_dtype_of(p[1])) < 0) return sr_raise(I, "TypeError", "data type not understood");
  if (sr_dtype_kind((SrDtype)dt) == SR_DK_COMPLEX) return sr_raise(I, "NotImplementedError", "complex dtypes are not supported");
  /* the separator's blanks match any run of blanks, as numpy's do */
  char trimmed[64];
  size_t sn = 0;
  for (const char *q = sep; *q && sn + 1 < sizeof trimmed; q++)
    if (*q != ' ' && *q != '\t' && *q != '\n') trimmed[sn++] = *q;
  trimmed[sn] = 0;
  SrVal *list = sr_seq(NULL, SR_V_LIST, 0);
  const char *q = str;
  int isint = dt == SR_BOOL || sr_dtype_is_int((SrDtype)dt);
  while (count < 0 || list->seq.n < count) {
    while (*q == ' ' || *q == '\t' || *q == '\n') q++;
    if (!*q) break;
    char *e;
    errno = 0;
    SrVal *x = isint ? sr_int(NULL, strtoll(q, &e, 10)) : sr_float(NULL, strtod(q, &e));
    if (e == q) {
      sr_unref(x);
      break;
    }
    sr_seq_push(NULL, list, x);
    q = e;
    while (*q == ' ' || *q == '\t' || *q == '\n') q++;
    if (sn) {
      if (strncmp(q, trimmed, sn) != 0) break;
      q += sn;
    }
  }
  if (count >= 0 && list->seq.n < count) {
    sr_unref(list);
    return sr_raise(I, "ValueError", "string is smaller than requested size");
  }
  SrVal *dv = sr_dtype_val(NULL, (SrDtype)dt);
  SrNnScope s = {I, {0}, 0};
  sr_nn_keep(&s, list);
  sr_nn_keep(&s, dv);
  SrVal *np = sr_nn_call2(&s, "numpy.array", list, dv);
  return sr_nn_done(&s, np ? sr_nn_call1(&s, "jax.numpy.asarray", np) : NULL);
}

static SrVal *not_pure(SrInterp *I, const char *name) {
  return sr_raise(I, "NotImplementedError",
                  "jnp.%s() is not implemented because it may be non-pure and thus unsafe for use with JIT and other "
                  "JAX transformations. Consider using jnp.asarray(np.%s(...)) instead, although care should be taken "
                  "if np.%s is used within a jax transformations because of its potential side-effect of consuming "
                  "the %s object; for more information see "
                  "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions",
                  name, name, name, strcmp(name, "fromfile") == 0 ? "file" : "iterable");
}
static SrVal *jnp_fromiter(SrInterp *I, SrArgs *a) {
  (void)a;
  return not_pure(I, "fromiter");
}
static SrVal *jnp_fromfile(SrInterp *I, SrArgs *a) {
  (void)a;
  return not_pure(I, "fromfile");
}

/* ---- poly, polyfit (numpy/polynomial.py) ---- */

#define KEEP(v) sr_nn_keep(s, v)

static SrVal *dtype_kw(SrNnScope *s, const char *fn, int n, SrVal **v, SrDtype dt) {
  const char *kw[1] = {"dtype"};
  SrVal *kv[1] = {KEEP(sr_dtype_val(NULL, dt))};
  return sr_nn_call(s, fn, n, v, 1, kw, kv);
}

/* x[key...]: a key of values (NULL: slice(None); SR_NEWAXIS_TAG: None). */
static SrVal newaxis_tag;
#define SR_NEWAXIS_TAG (&newaxis_tag)
static SrVal *take_key(SrNnScope *s, SrVal *x, int n, SrVal **key) {
  if (!x) return NULL;
  SrVal *items[SR_MAX_RANK];
  for (int i = 0; i < n; i++)
    items[i] = key[i] == SR_NEWAXIS_TAG ? sr_none() : key[i] ? sr_ref(key[i]) : sr_slice_new(sr_none(), sr_none(), sr_none());
  SrVal *t = KEEP(sr_tuple(NULL, n, items));
  return KEEP(sr_getitem(s->I, x, t));
}

/* poly's body (jit[name=poly]): the product of (x - z) for the roots z by
   repeated convolve(a, array([1, -z[k]])). */
static SrVal *poly_body(SrInterp *I, SrArgs *a) {
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *z = KEEP(sr_jnp_asarray(I, a->v[0], -1));
  if (!z || sr_nn_promote_inexact(s, 1, &z, "poly") < 0) return sr_nn_done(s, NULL);
  z = sr_nn_call1(s, "jax.numpy.atleast_1d", z);
  if (!z) return sr_nn_done(s, NULL);
  const SrType *t = vtype(I, z);
  if (t->ndim == 2 && t->dims[0].size == t->dims[1].size && t->dims[0].size != 0) {
    /* a square matrix: the polynomial of its eigenvalues */
    z = sr_nn_call1(s, "jax.numpy.linalg.eigvals", z);
    if (!z) return sr_nn_done(s, NULL);
    t = vtype(I, z);
  }
  if (t->ndim != 1) return sr_nn_done(s, sr_raise(I, "ValueError", "input must be 1d or non-empty square 2d array."));
  SrDtype dt = t->dtype;
  int64_t n = t->dims[0].size;
  if (n == 0) {
    SrVal *shape = KEEP(sr_seq(NULL, SR_V_TUPLE, 0));
    return sr_nn_done(s, dtype_kw(s, "jax.numpy.ones", 1, &shape, dt));
  }
  SrVal *one = KEEP(sr_seq(NULL, SR_V_TUPLE, 1));
  sr_seq_push(NULL, one, sr_int(NULL, 1));
  SrVal *acc = dtype_kw(s, "jax.numpy.ones", 1, &one, dt);
  for (int64_t k = 0; acc && k < n; k++) {
    SrVal *zk = KEEP(sr_getindex(I, z, k));
    SrVal *nz = zk ? KEEP(sr_unop(I, SR_OP_NEG, zk)) : NULL;
    if (!nz) return sr_nn_done(s, NULL);
    SrVal *pair = KEEP(sr_seq(NULL, SR_V_LIST, 2));
    sr_seq_push(NULL, pair, sr_int(NULL, 1));
    sr_seq_push(NULL, pair, sr_ref(nz));
    SrVal *arr = dtype_kw(s, "jax.numpy.array", 1, &pair, dt);
    if (!arr) return sr_nn_done(s, NULL);
    const char *kw[1] = {"mode"};
    SrVal *kv[1] = {KEEP(sr_str(NULL, "full", 4))};
    SrVal *v[2] = {acc, arr};
    acc = sr_nn_call(s, "jax.numpy.convolve", 2, v, 1, kw, kv);
  }
  return sr_nn_done(s, acc);
}

/* ---- roots ---- */

static SrVal *empty_complex(SrNnScope *s, SrDtype dt) {
  SrVal *none = KEEP(sr_seq(NULL, SR_V_LIST, 0));
  return dtype_kw(s, "jax.numpy.array", 1, &none, sr_dtype_complex_of(dt));
}

/* _roots_no_zeros: the eigenvalues of the companion matrix, whose first
   row is -p[1:] / p[0] and whose subdiagonal is ones */
static SrVal *roots_no_zeros(SrNnScope *s, SrVal *p) {
  SrInterp *I = s->I;
  const SrType *t = vtype(I, p);
  int64_t n = t->dims[0].size;
  if (n < 2) return empty_complex(s, t->dtype);
  SrVal *shape = KEEP(sr_seq(NULL, SR_V_TUPLE, 1));
  sr_seq_push(NULL, shape, sr_int(NULL, n - 2));
  SrVal *ones = dtype_kw(s, "jax.numpy.ones", 1, &shape, t->dtype);
  SrVal *dv[2] = {ones, sr_nn_int(s, -1)};
  SrVal *A = ones ? sr_nn_call(s, "jax.numpy.diag", 2, dv, 0, NULL, NULL) : NULL;
  SrVal *tail = A ? KEEP(sr_getitem(I, p, KEEP(sr_slice_new(sr_int(NULL, 1), sr_none(), sr_none())))) : NULL;
  SrVal *p0 = tail ? KEEP(sr_getindex(I, p, 0)) : NULL;
  SrVal *q = p0 ? sr_nn_op(s, SR_OP_DIV, tail, p0) : NULL;
  SrVal *row = q ? KEEP(sr_unop(I, SR_OP_NEG, q)) : NULL;
  /* A.at[0, :].set(row) */
  SrVal *at = row ? KEEP(sr_getattr(I, A, "at")) : NULL;
  SrVal *key = at ? KEEP(sr_seq(NULL, SR_V_TUPLE, 2)) : NULL;
  if (!key) return NULL;
  sr_seq_push(NULL, key, sr_int(NULL, 0));
  sr_seq_push(NULL, key, sr_slice_new(sr_none(), sr_none(), sr_none()));
  SrVal *ref = KEEP(sr_getitem(I, at, key));
  SrVal *set = ref ? KEEP(sr_getattr(I, ref, "set")) : NULL;
  SrVal *A2 = set ? KEEP(sr_call1(I, set, row)) : NULL;
  return A2 ? sr_nn_call1(s, "jax.numpy.linalg.eigvals", A2) : NULL;
}

/* _roots_with_zeros (jit): the leading zeros rolled to the end, their
   roots sorted last and set to NaN */
static SrVal *roots_with_zeros_body(SrInterp *I, SrArgs *a) {
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *p = a->v[0], *nlz = a->v[1];
  int64_t n = vtype(I, p)->dims[0].size;
  SrVal *allz = sr_nn_op(s, SR_OP_EQ, sr_nn_int(s, n), nlz);
  p = allz ? sr_nn_call3(s, "jax.numpy.where", allz, sr_nn_float(s, 1.0), p) : NULL;
  SrVal *rv[2] = {p, KEEP(sr_unop(I, SR_OP_NEG, nlz))};
  SrVal *rolled = p && rv[1] ? sr_nn_call(s, "jax.numpy.roll", 2, rv, 0, NULL, NULL) : NULL;
  SrVal *r = rolled ? roots_no_zeros(s, rolled) : NULL;
  SrVal *isz = r ? sr_nn_op(s, SR_OP_EQ, r, sr_nn_int(s, 0)) : NULL;
  SrVal *kv = isz ? sr_nn_call2(s, "jax.lax.sort_key_val", isz, r) : NULL;
  SrVal *sorted = kv ? KEEP(sr_getindex(I, kv, 1)) : NULL;
  if (!sorted) return sr_nn_done(s, NULL);
  int64_t m = vtype(I, sorted)->dims[0].size;
  SrVal *keep = sr_nn_op(s, SR_OP_LT, sr_nn_call1(s, "jax.numpy.arange", sr_nn_int(s, m)),
                         sr_nn_op(s, SR_OP_SUB, sr_nn_int(s, m), nlz));
  SrVal *nan = KEEP(sr_complex(NULL, NAN, NAN));
  return sr_nn_done(s, keep ? sr_nn_call3(s, "jax.numpy.where", keep, sorted, nan) : NULL);
}

/* jnp.roots(p, *, strip_zeros=True) */
static SrVal *jnp_roots(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "roots", "p, *, strip_zeros=", p) < 0) return NULL;
  int strip = 1;
  if (sr_nn_given(p[1]) && (strip = sr_truthy(I, p[1])) < 0) return NULL;
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  if (!x || sr_nn_promote_inexact(s, 1, &x, "roots") < 0) return sr_nn_done(s, NULL);
  x = sr_nn_call1(s, "jax.numpy.atleast_1d", x);
  if (!x) return sr_nn_done(s, NULL);
  const SrType *t = vtype(I, x);
  if (t->ndim != 1) return sr_nn_done(s, sr_raise(I, "ValueError", "Input must be a rank-1 array."));
  if (t->dims[0].size < 2) return sr_nn_done(s, empty_complex(s, t->dtype));
  SrVal *isz = sr_nn_op(s, SR_OP_EQ, x, sr_nn_int(s, 0));
  SrVal *all = isz ? sr_nn_call1(s, "jax.numpy.all", isz) : NULL;
  SrVal *amin = all ? sr_nn_call1(s, "jax.numpy.argmin", isz) : NULL;
  SrVal *nlz = amin ? sr_nn_call3(s, "jax.numpy.where", all, sr_nn_int(s, t->dims[0].size), amin) : NULL;
  if (!nlz) return sr_nn_done(s, NULL);
  if (strip) {
    SrArrayObj *o = sr_array_of(nlz);
    if (o && o->kind != SR_AV_CONCRETE) {
      sr_raise_concretization(I, nlz,
                              "The error occurred in the jnp.roots() function. To use this within a JIT-compiled "
                              "context, pass strip_zeros=False, but be aware that leading zeros will result in some "
                              "returned roots being set to NaN.");
      return sr_nn_done(s, NULL);
    }
    int64_t k;
    if (sr_as_int(I, nlz, "roots", &k) < 0) return sr_nn_done(s, NULL);
    SrVal *rest = KEEP(sr_getitem(I, x, KEEP(sr_slice_new(sr_int(NULL, k), sr_none(), sr_none()))));
    return sr_nn_done(s, rest ? roots_no_zeros(s, rest) : NULL);
  }
  SrVal *args[2] = {x, nlz};
  return sr_nn_done(s, KEEP(sr_api_jit(I, "_roots_with_zeros", roots_with_zeros_body, NULL, 2, args)));
}

/* jnp.poly(seq_of_zeros) */
static SrVal *jnp_poly(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "poly", "seq_of_zeros", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *r = sr_api_jit(I, "poly", poly_body, NULL, 1, &x);
  sr_unref(x);
  return r;
}

static int same_len(SrInterp *I, SrVal *a, SrVal *b) { return vtype(I, a)->dims[0].size == vtype(I, b)->dims[0].size; }

/* jnp.polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False) */
static SrVal *jnp_polyfit(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "polyfit", "x, y, deg, rcond=, full=, w=, cov=", p) < 0) return NULL;
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1)), *y = x ? KEEP(sr_jnp_asarray(I, p[1], -1)) : NULL;
  SrVal *w = y && sr_nn_given(p[5]) ? KEEP(sr_jnp_asarray(I, p[5], -1)) : NULL;
  if (!y || (sr_nn_given(p[5]) && !w)) return sr_nn_done(s, NULL);
  int64_t deg;
  if (sr_as_int(I, p[2], "deg must be int", &deg) < 0) return sr_nn_done(s, NULL);
  int64_t order = deg + 1;
  const SrType *xt = vtype(I, x), *yt = vtype(I, y);
  if (deg < 0) return sr_nn_done(s, sr_raise(I, "ValueError", "expected deg >= 0"));
  if (xt->ndim != 1) return sr_nn_done(s, sr_raise(I, "TypeError", "expected 1D vector for x"));
  if (xt->dims[0].size == 0) return sr_nn_done(s, sr_raise(I, "TypeError", "expected non-empty vector for x"));
  if (yt->ndim < 1 || yt->ndim > 2) return sr_nn_done(s, sr_raise(I, "TypeError", "expected 1D or 2D array for y"));
  if (!same_len(I, x, y)) return sr_nn_done(s, sr_raise(I, "TypeError", "expected x and y to have same length"));
  int64_t len = xt->dims[0].size;
  double rcond;
  if (!sr_nn_given(p[3])) {
    SrVal *dv = KEEP(sr_dtype_val(NULL, xt->dtype));
    SrVal *fi = sr_nn_call1(s, "jax.numpy.finfo", dv);
    SrVal *eps = fi ? KEEP(sr_getattr(I, fi, "eps")) : NULL;
    if (!eps || sr_as_float(I, eps, "eps", &rcond) < 0) return sr_nn_done(s, NULL);
    rcond *= (double)len;
  } else if (sr_as_float(I, p[3], "rcond must be float", &rcond) < 0) {
    return sr_nn_done(s, NULL);
  }
  SrVal *v2[2] = {x, sr_nn_int(s, order)};
  SrVal *lhs = sr_nn_call(s, "jax.numpy.vander", 2, v2, 0, NULL, NULL), *rhs = y;
  if (!lhs) return sr_nn_done(s, NULL);
  SrVal *col[2] = {NULL, SR_NEWAXIS_TAG};
  if (w) {
    if (sr_nn_promote_inexact(s, 1, &w, "polyfit") < 0) return sr_nn_done(s, NULL);
    if (vtype(I, w)->ndim != 1) return sr_nn_done(s, sr_raise(I, "TypeError", "expected a 1-d array for weights"));
    if (!same_len(I, w, y)) return sr_nn_done(s, sr_raise(I, "TypeError", "expected w and y to have the same length"));
    lhs = sr_nn_op(s, SR_OP_MUL, lhs, take_key(s, w, 2, col));
    rhs = sr_nn_op(s, SR_OP_MUL, rhs, yt->ndim == 2 ? take_key(s, w, 2, col) : w);
    if (!lhs || !rhs) return sr_nn_done(s, NULL);
  }
  SrVal *sq = sr_nn_op(s, SR_OP_MUL, lhs, lhs);
  SrVal *ssum = NULL;
  if (sq) { /* (lhs*lhs).sum(axis=0) */
    const char *kw[1] = {"axis"};
    SrVal *kv[1] = {sr_nn_int(s, 0)};
    ssum = sr_nn_call(s, "jax.numpy.sum", 1, &sq, 1, kw, kv);
  }
  SrVal *scale = ssum ? sr_nn_call1(s, "jax.numpy.sqrt", ssum) : NULL;
  SrVal *row[2] = {SR_NEWAXIS_TAG, NULL};
  lhs = scale ? sr_nn_op(s, SR_OP_DIV, lhs, take_key(s, scale, 2, row)) : NULL;
  if (!lhs) return sr_nn_done(s, NULL);
  SrVal *v3[3] = {lhs, rhs, KEEP(sr_float(NULL, rcond))};
  SrVal *res = sr_nn_call(s, "jax.numpy.linalg.lstsq", 3, v3, 0, NULL, NULL);
  if (!res) return sr_nn_done(s, NULL);
  SrVal *c = res->seq.items[0], *resids = res->seq.items[1];
  if (vtype(I, c)->ndim > 1) {
    SrVal *ct = KEEP(sr_getattr(I, c, "T"));
    SrVal *q = ct ? sr_nn_op(s, SR_OP_DIV, ct, take_key(s, scale, 2, row)) : NULL;
    c = q ? KEEP(sr_getattr(I, q, "T")) : NULL;
  } else {
    c = sr_nn_op(s, SR_OP_DIV, c, scale);
  }
  if (!c) return sr_nn_done(s, NULL);
  if (sr_nn_given(p[4]) && sr_val_truthy(p[4])) {
    SrVal *rc = sr_nn_call1(s, "jax.numpy.asarray", KEEP(sr_float(NULL, rcond))); /* lax.asarray(rcond) */
    if (!rc) return sr_nn_done(s, NULL);
    SrVal *items[5] = {sr_ref(c), sr_ref(resids), sr_ref(res->seq.items[2]), sr_ref(res->seq.items[3]), sr_ref(rc)};
    return sr_nn_done(s, KEEP(sr_tuple(NULL, 5, items)));
  }
  if (!sr_nn_given(p[6]) || !sr_val_truthy(p[6])) return sr_nn_done(s, c);
  SrVal *lt = KEEP(sr_getattr(I, lhs, "T"));
  SrVal *dot = lt ? sr_nn_call2(s, "jax.numpy.dot", lt, lhs) : NULL;
  SrVal *vbase = dot ? sr_nn_call1(s, "jax.numpy.linalg.inv", dot) : NULL;
  SrVal *outer = vbase ? sr_nn_call2(s, "jax.numpy.outer", scale, scale) : NULL;
  vbase = outer ? sr_nn_op(s, SR_OP_DIV, vbase, outer) : NULL;
  if (!vbase) return sr_nn_done(s, NULL);
  SrVal *fac;
  if (p[6]->kind == SR_V_STR && p[6]->str.n == 8 && memcmp(p[6]->str.s, "unscaled", 8) == 0) {
    fac = sr_nn_call1(s, "jax.numpy.array", sr_nn_float(s, 1.0));
  } else {
    if (len <= order)
      return sr_nn_done(s, sr_raise(I, "ValueError",
                                    "the number of data points must exceed order to scale the covariance matrix"));
    fac = sr_nn_op(s, SR_OP_DIV, resids, sr_nn_int(s, len - order));
  }
  SrVal *f1 = fac ? sr_nn_call1(s, "jax.numpy.atleast_1d", fac) : NULL, *cv;
  if (yt->ndim == 1) {
    SrVal *k1[1] = {SR_NEWAXIS_TAG};
    cv = f1 ? sr_nn_op(s, SR_OP_MUL, vbase, take_key(s, f1, 1, k1)) : NULL;
  } else {
    SrVal *k3[3] = {NULL, NULL, SR_NEWAXIS_TAG}, *k2[3] = {SR_NEWAXIS_TAG, SR_NEWAXIS_TAG, NULL};
    cv = f1 ? sr_nn_op(s, SR_OP_MUL, take_key(s, vbase, 3, k3), take_key(s, f1, 3, k2)) : NULL;
  }
  if (!cv) return sr_nn_done(s, NULL);
  SrVal *items[2] = {sr_ref(c), sr_ref(cv)};
  return sr_nn_done(s, KEEP(sr_tuple(NULL, 2, items)));
}

/* ---- histogramdd, histogram2d (numpy/lax_numpy.py; not jits) ---- */

/* util.promote_dtypes_inexact: the dtypes only, no broadcasting */
static int promote_dtypes_inexact(SrNnScope *s, int n, SrVal **args) {
  SrInterp *I = s->I;
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, n, args, &weak);
  if (sr_dtype_is_int(dt) || dt == SR_BOOL) dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  for (int i = 0; i < n; i++)
    if (!(args[i] = sr_nn_keep(s, sr_lax_convert(I, args[i], dt, weak, NULL)))) return -1;
  return 0;
}

/* jnp.histogramdd(sample, bins=10, range=None, weights=None, density=None) */
static SrVal *jnp_histogramdd(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "histogramdd", "sample, bins=, range=, weights=, density=", p) < 0) return NULL;
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *sample = KEEP(sr_jnp_asarray(I, p[0], -1)), *weights = NULL;
  if (!sample) return sr_nn_done(s, NULL);
  if (!sr_nn_given(p[3])) {
    if (sr_nn_promote_inexact(s, 1, &sample, "histogramdd") < 0) return sr_nn_done(s, NULL);
  } else {
    SrVal *sw[2] = {sample, KEEP(sr_jnp_asarray(I, p[3], -1))};
    if (!sw[1]) return sr_nn_done(s, NULL);
    const SrType *st = vtype(I, sample), *wt = vtype(I, sw[1]);
    if (wt->ndim != (st->ndim ? 1 : 0) || (st->ndim && wt->dims[0].size != st->dims[0].size))
      return sr_nn_done(s, sr_raise(I, "ValueError", "should have one weight for each sample."));
    if (promote_dtypes_inexact(s, 2, sw) < 0) return sr_nn_done(s, NULL);
    sample = sw[0];
    weights = sw[1];
  }
  const SrType *st = vtype(I, sample);
  if (st->ndim != 2)
    return sr_nn_done(s, sr_raise(I, "ValueError", "not enough values to unpack (expected 2, got %d)", st->ndim));
  int64_t N = st->dims[0].size, D = st->dims[1].size;
  SrVal *range = sr_nn_given(p[2]) ? p[2] : NULL, *rl = NULL;
  if (range) {
    rl = KEEP(sr_iterate(I, range));
    if (!rl) return sr_nn_done(s, NULL);
    int bad = rl->seq.n != D;
    for (int i = 0; !bad && i < rl->seq.n; i++) {
      SrVal *r = rl->seq.items[i];
      if (r->kind == SR_V_NONE) continue;
      SrVal *ra = KEEP(sr_jnp_asarray(I, r, -1));
      if (!ra) return sr_nn_done(s, NULL);
      bad = vtype(I, ra)->ndim < 1 || vtype(I, ra)->dims[0].size != 2;
    }
    if (bad) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, range);
      sr_raise(I, "ValueError",
               "For sample.shape=(%lld, %lld), range must be a sequence of %lld pairs or Nones; got range=%s",
               (long long)N, (long long)D, (long long)D, sr_buf_str(&b));
      sr_buf_free(&b);
      return sr_nn_done(s, NULL);
    }
  }
  SrVal *bins = p[1] ? p[1] : sr_nn_int(s, 10), *bl = NULL;
  if (bins->kind == SR_V_LIST || bins->kind == SR_V_TUPLE || (sr_array_of(bins) && vtype(I, bins)->ndim > 0)) {
    bl = KEEP(sr_iterate(I, bins));
    if (!bl) return sr_nn_done(s, NULL);
    if (bl->seq.n != D) return sr_nn_done(s, sr_raise(I, "ValueError", "should be a bin for each dimension."));
  }
  SrVal *idx = KEEP(sr_seq(NULL, SR_V_TUPLE, (int)D)), *edges = KEEP(sr_seq(NULL, SR_V_LIST, (int)D));
  SrVal *nbins = KEEP(sr_seq(NULL, SR_V_TUPLE, (int)D));
  int64_t total = 1;
  for (int64_t i = 0; i < D; i++) {
    SrVal *k[2] = {NULL, sr_nn_int(s, i)};
    SrVal *col = take_key(s, sample, 2, k);
    SrVal *v4[4] = {col, bl ? bl->seq.items[i] : bins, rl ? rl->seq.items[i] : KEEP(sr_none()),
                    weights ? weights : KEEP(sr_none())};
    SrVal *be = col ? sr_nn_call(s, "jax.numpy.histogram_bin_edges", 4, v4, 0, NULL, NULL) : NULL;
    SrVal *bi = NULL;
    if (be) {
      const char *kw[1] = {"side"};
      SrVal *kv[1] = {KEEP(sr_str(NULL, "right", 5))};
      SrVal *v[2] = {be, col};
      bi = sr_nn_call(s, "jax.numpy.searchsorted", 2, v, 1, kw, kv);
    }
    SrVal *last = bi ? KEEP(sr_getindex(I, be, -1)) : NULL;
    SrVal *eq = last ? sr_nn_op(s, SR_OP_EQ, col, last) : NULL;
    SrVal *m1 = eq ? sr_nn_op(s, SR_OP_SUB, bi, sr_nn_int(s, 1)) : NULL;
    bi = m1 ? sr_nn_call3(s, "jax.numpy.where", eq, m1, bi) : NULL;
    if (!bi) return sr_nn_done(s, NULL);
    sr_seq_push(NULL, idx, sr_ref(bi));
    sr_seq_push(NULL, edges, sr_ref(be));
    int64_t nb = vtype(I, be)->dims[0].size + 1;
    sr_seq_push(NULL, nbins, sr_int(NULL, nb));
    total *= nb;
  }
  SrVal *dedges = KEEP(sr_seq(NULL, SR_V_LIST, (int)D));
  for (int64_t i = 0; i < D; i++) {
    SrVal *d = sr_nn_call1(s, "jax.numpy.diff", edges->seq.items[i]);
    if (!d) return sr_nn_done(s, NULL);
    sr_seq_push(NULL, dedges, sr_ref(d));
  }
  SrVal *xy;
  {
    const char *kw[1] = {"mode"};
    SrVal *kv[1] = {KEEP(sr_str(NULL, "clip", 4))};
    SrVal *v[2] = {idx, nbins};
    xy = sr_nn_call(s, "jax.numpy.ravel_multi_index", 2, v, 1, kw, kv);
  }
  SrVal *hist = NULL;
  if (xy) {
    const char *kw[1] = {"length"};
    SrVal *kv[1] = {sr_nn_int(s, total)};
    SrVal *v[2] = {xy, weights ? weights : KEEP(sr_none())};
    hist = sr_nn_call(s, "jax.numpy.bincount", 2, v, 1, kw, kv);
  }
  hist = hist ? sr_nn_call2(s, "jax.numpy.reshape", hist, nbins) : NULL;
  if (!hist) return sr_nn_done(s, NULL);
  SrVal *core[SR_MAX_RANK];
  SrVal *sl = KEEP(sr_slice_new(sr_int(NULL, 1), sr_int(NULL, -1), sr_none()));
  for (int64_t i = 0; i < D && i < SR_MAX_RANK; i++) core[i] = sl;
  hist = take_key(s, hist, (int)D, core);
  if (hist && sr_nn_given(p[4]) && sr_val_truthy(p[4])) {
    SrVal *as = KEEP(sr_getattr(I, hist, "astype"));
    hist = as ? KEEP(sr_call1(I, as, KEEP(sr_dtype_val(NULL, st->dtype)))) : NULL;
    SrVal *tot = hist ? sr_nn_call1(s, "jax.numpy.sum", hist) : NULL;
    hist = tot ? sr_nn_op(s, SR_OP_DIV, hist, tot) : NULL;
    SrVal *norms = hist ? sr_nn_call(s, "jax.numpy.ix_", dedges->seq.n, dedges->seq.items, 0, NULL, NULL) : NULL;
    for (int i = 0; norms && hist && i < norms->seq.n; i++) hist = sr_nn_op(s, SR_OP_DIV, hist, norms->seq.items[i]);
  }
  if (!hist) return sr_nn_done(s, NULL);
  SrVal *items[2] = {sr_ref(hist), sr_ref(edges)};
  return sr_nn_done(s, KEEP(sr_tuple(NULL, 2, items)));
}

/* jnp.histogram2d(x, y, bins=10, range=None, weights=None, density=None) */
static SrVal *jnp_histogram2d(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "histogram2d", "x, y, bins=, range=, weights=, density=", p) < 0) return NULL;
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1)), *y = x ? KEEP(sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (!y) return sr_nn_done(s, NULL);
  SrVal *bins = p[2] ? p[2] : sr_nn_int(s, 10);
  int64_t N = 1;
  if (bins->kind == SR_V_LIST || bins->kind == SR_V_TUPLE) N = bins->seq.n;
  else if (sr_array_of(bins) && vtype(I, bins)->ndim > 0) N = vtype(I, bins)->dims[0].size;
  if (N != 1 && N != 2) {
    SrVal *e = KEEP(sr_jnp_asarray(I, bins, -1));
    if (!e) return sr_nn_done(s, NULL);
    bins = KEEP(sr_seq(NULL, SR_V_LIST, 2));
    sr_seq_push(NULL, bins, sr_ref(e));
    sr_seq_push(NULL, bins, sr_ref(e));
  }
  SrVal *xy = KEEP(sr_seq(NULL, SR_V_LIST, 2));
  sr_seq_push(NULL, xy, sr_ref(x));
  sr_seq_push(NULL, xy, sr_ref(y));
  SrVal *st = sr_nn_call1(s, "jax.numpy.asarray", xy);
  SrVal *sample = st ? sr_nn_call1(s, "jax.numpy.transpose", st) : NULL;
  SrVal *v[5] = {sample, bins, p[3] ? p[3] : KEEP(sr_none()), p[4] ? p[4] : KEEP(sr_none()),
                 p[5] ? p[5] : KEEP(sr_none())};
  SrVal *r = sample ? sr_nn_call(s, "jax.numpy.histogramdd", 5, v, 0, NULL, NULL) : NULL;
  if (!r) return sr_nn_done(s, NULL);
  SrVal *ed = r->seq.items[1];
  SrVal *items[3] = {sr_ref(r->seq.items[0]), sr_ref(ed->seq.items[0]), sr_ref(ed->seq.items[1])};
  return sr_nn_done(s, KEEP(sr_tuple(NULL, 3, items)));
}

/* ---- frombuffer ---- */

/* np.frombuffer(buffer, dtype, count, offset), then asarray: a bytes
   literal (held as a str of its raw bytes; a str is taken as its UTF-8
   bytes, where Python would refuse it) read as the dtype's machine
   values. */
static SrVal *jnp_frombuffer(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "frombuffer", "buffer, dtype=, count=, offset=", p) < 0) return NULL;
  if (p[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "a bytes-like object is required, not '%s'", sr_val_kind_name(p[0]));
  int64_t count = -1, offset = 0;
  if ((p[2] && sr_as_int(I, p[2], "count", &count) < 0) || (p[3] && sr_as_int(I, p[3], "offset", &offset) < 0)) return NULL;
  int dt = SR_F64;
  if (p[1] && p[1]->kind != SR_V_NONE && (dt = np_dtype_of(p[1])) < 0) return sr_raise(I, "TypeError", "data type not understood");
  if (sr_dtype_kind((SrDtype)dt) == SR_DK_COMPLEX) return sr_raise(I, "NotImplementedError", "complex dtypes are not supported");
  /* the bytes, as the lexer keeps a bytes literal's escapes: raw */
  const unsigned char *bytes = (const unsigned char *)p[0]->str.s;
  size_t nb = p[0]->str.n;
  size_t es = sr_elem_size((SrDtype)dt);
  SrVal *err = NULL;
  if (offset < 0 || (size_t)offset > nb)
    err = sr_raise(I, "ValueError", "offset must be non-negative and no greater than buffer length (%zu)", nb);
  else if (count < 0 && (nb - (size_t)offset) % es)
    err = sr_raise(I, "ValueError", "buffer size must be a multiple of element size");
  else if (count >= 0 && (size_t)count * es > nb - (size_t)offset)
    err = sr_raise(I, "ValueError", "buffer is smaller than requested size");
  if (I->exc) return err;
  int64_t n = count >= 0 ? count : (int64_t)((nb - (size_t)offset) / es);
  SrVal *list = sr_seq(NULL, SR_V_LIST, (int)n);
  int isint = dt == SR_BOOL || sr_dtype_is_int((SrDtype)dt);
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *e = bytes + offset + (size_t)i * es;
    sr_seq_push(NULL, list, dt == SR_BOOL ? sr_bool(*e != 0) : isint ? sr_int(NULL, sr_kern_get_i64((SrDtype)dt, e))
                                                              : sr_float(NULL, sr_kern_get_f64((SrDtype)dt, e)));
  }
  SrNnScope s = {I, {0}, 0};
  sr_nn_keep(&s, list);
  SrVal *dv = sr_nn_keep(&s, sr_dtype_val(NULL, (SrDtype)dt));
  SrVal *np = sr_nn_call2(&s, "numpy.array", list, dv);
  return sr_nn_done(&s, np ? sr_nn_call1(&s, "jax.numpy.asarray", np) : NULL);
}
#undef KEEP

void sr_jnp_small18_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.isdtype", jnp_isdtype,
       "isdtype(dtype, kind): whether dtype is of kind ('bool', 'signed integer', 'unsigned integer', 'integral', "
       "'real floating', 'complex floating', 'numeric', a dtype or a tuple of these)"},
      {"jax.numpy.gradient", jnp_gradient,
       "gradient(f, *varargs, axis=None, edge_order=None): central differences inside, one-sided at the edges"},
      {"jax.numpy.fromstring", jnp_fromstring,
       "fromstring(string, dtype=float, count=-1, *, sep): the numbers of a text as a 1-D array"},
      {"jax.numpy.frombuffer", jnp_frombuffer,
       "frombuffer(buffer, dtype=float, count=-1, offset=0): the machine values of a bytes object as a 1-D array"},
      {"jax.numpy.poly", jnp_poly, "poly(seq_of_zeros): the coefficients of the polynomial with those roots"},
      {"jax.numpy.roots", jnp_roots, "roots(p, *, strip_zeros=True): the complex roots, the companion matrix's eigenvalues"},
      {"jax.numpy.polyfit", jnp_polyfit,
       "polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False): least-squares polynomial coefficients"},
      {"jax.numpy.histogramdd", jnp_histogramdd,
       "histogramdd(sample, bins=10, range=None, weights=None, density=None): the counts of N points in D-dimensional "
       "bins, and the edges"},
      {"jax.numpy.histogram2d", jnp_histogram2d,
       "histogram2d(x, y, bins=10, range=None, weights=None, density=None): the counts in 2-D bins, and the x and y "
       "edges"},
      {"jax.numpy.fromiter", jnp_fromiter, "fromiter(*args, **kwargs): not implemented, as in JAX (not pure)"},
      {"jax.numpy.fromfile", jnp_fromfile, "fromfile(*args, **kwargs): not implemented, as in JAX (not pure)"},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  sr_register("jax.numpy.ndarray", sr_obj(&ndarray_class, NULL));
  /* jax.Array, the same type (jnp.ndarray is jax.Array) */
  SrVal *nd = sr_lookup_qualname("jax.numpy.ndarray");
  sr_register("jax.Array", nd ? sr_ref(nd) : sr_obj(&ndarray_class, NULL));
  sr_register("jax.core.Tracer", sr_obj(&tracer_class, NULL));
  sr_register("jax._src.core.Tracer", sr_obj(&tracer_class, NULL));
  /* scalar_types.py's aliases, and numpy's */
  static const struct {
    const char *name;
    SrDtype d;
    int numpy;
  } aliases[] = {{"double", SR_F64, 1}, {"single", SR_F32, 1}, {"float_", SR_F64, 0}, {"complex_", SR_C128, 0}, {"int_", SR_I64, 1},
                 {"uint", SR_U64, 1}};
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++) {
    char q[64];
    snprintf(q, sizeof q, "jax.numpy.%s", aliases[i].name);
    sr_register(q, sr_dtype_val(NULL, aliases[i].d));
    if (!aliases[i].numpy) continue;
    snprintf(q, sizeof q, "numpy.%s", aliases[i].name);
    if (!sr_lookup_qualname(q)) sr_register(q, sr_dtype_val(NULL, aliases[i].d));
  }
}
