/* numpy_small18.c: small jax.numpy names of lax_numpy.py and dtypes.py,
 * written with the same calls in the same order as JAX's Python:
 * ndarray (jax.Array, an isinstance target for arrays and tracers), the
 * scalar type aliases double, single, float_, int_ and uint, isdtype,
 * gradient, fromstring, and fromiter and fromfile (which JAX leaves
 * unimplemented on purpose).  Registered by sr_jnp_small18_init (jax.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"

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
  return o && o->kind != SR_AV_ABSTRACT;
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
  return NULL;
}

static const SrLangOps ndarray_ops = {
    .call = ndarray_call, .getattr = ndarray_getattr, .instancecheck = ndarray_instancecheck};
static const SrClass ndarray_class = {"type", NULL, ndarray_repr, NULL, &ndarray_ops};

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
  if (nax == 0) return sr_nn_done(&s, sr_seq(NULL, SR_V_LIST, 0));
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
      {"jax.numpy.fromiter", jnp_fromiter, "fromiter(*args, **kwargs): not implemented, as in JAX (not pure)"},
      {"jax.numpy.fromfile", jnp_fromfile, "fromfile(*args, **kwargs): not implemented, as in JAX (not pure)"},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  sr_register("jax.numpy.ndarray", sr_obj(&ndarray_class, NULL));
  /* scalar_types.py's aliases, and numpy's */
  static const struct {
    const char *name;
    SrDtype d;
    int numpy;
  } aliases[] = {{"double", SR_F64, 1}, {"single", SR_F32, 1}, {"float_", SR_F64, 0}, {"int_", SR_I64, 1},
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
