/* numpy_build.c: jax.numpy's dtype queries, shape helpers, index
 * builders and nonzero -- result_type, promote_types, issubdtype (with
 * numpy's abstract scalar types: jnp.floating, jnp.integer ...),
 * can_cast, isscalar, iterable, broadcast_shapes, broadcast_arrays,
 * copy, logspace, geomspace, indices, ix_, diag_indices(_from),
 * unravel_index, nonzero, flatnonzero, argwhere, tril/triu_indices(_from),
 * s_ and index_exp -- as jax/_src/numpy/lax_numpy.py, array_creation.py
 * and dtypes.py write them, binding what those bind.  Registered by
 * sr_jnp_build_init (jax.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/array_methods.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/np_host.h"
#include "jax/numpy.h"
#include "py/class.h"
#include "py/objects.h"
#include "util/intern.h"
#include "text/print_val.h"
#include "util/mem.h"
#include "jax/tracers.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static int given(const SrVal *v) { return v && v->kind != SR_V_NONE; }

static SrDtype default_int(SrInterp *I) { return I->jax->enable_x64 ? SR_I64 : SR_I32; }
static SrDtype default_float(SrInterp *I) { return I->jax->enable_x64 ? SR_F64 : SR_F32; }

/* dtypes.to_inexact_dtype */
static SrDtype to_inexact(SrInterp *I, SrDtype d) {
  int k = sr_dtype_kind(d);
  return k == SR_DK_FLOAT || k == SR_DK_COMPLEX ? d : default_float(I);
}

/* ======================================================================
 * numpy's abstract scalar types: generic > number > integer >
 * signedinteger / unsignedinteger, number > inexact > floating /
 * complexfloating, generic > bool_ (np.bool); issubdtype walks them
 * ====================================================================== */

typedef struct Abstract {
  const char *name;
  const char *parent;
  const char *module; /* numpy's (NULL), or jax.dtypes' extended types */
} Abstract;

static const Abstract abstracts[] = {
    {"generic", NULL, NULL},
    {"number", "generic", NULL},
    {"integer", "number", NULL},
    {"signedinteger", "integer", NULL},
    {"unsignedinteger", "integer", NULL},
    {"inexact", "number", NULL},
    {"floating", "inexact", NULL},
    {"complexfloating", "inexact", NULL},
    {"character", "generic", NULL},
    {"flexible", "generic", NULL},
    {"extended", "generic", "jax.dtypes"}, /* dtypes.extended: JAX's extended dtypes */
    {"prng_key", "extended", "jax.dtypes"}, /* dtypes.prng_key: key<impl> */
};
enum { NABSTRACT = sizeof abstracts / sizeof *abstracts };

static void abstract_repr(SrBuf *out, const SrVal *v) {
  const Abstract *a = v->obj.data;
  sr_buf_printf(out, "<class '%s.%s'>", a->module ? a->module : "numpy", a->name);
}

static const SrClass abstract_class = {"type", NULL, abstract_repr, NULL, NULL};

static const Abstract *abstract_of(const SrVal *v) {
  return sr_is_obj(v, &abstract_class) ? v->obj.data : NULL;
}

/* The abstract type a concrete dtype sits directly under. */
static const char *parent_of_dtype(SrDtype d) {
  switch (sr_dtype_kind(d)) {
  case SR_DK_BOOL: return "generic";
  case SR_DK_INT: return "signedinteger";
  case SR_DK_UINT: return "unsignedinteger";
  case SR_DK_FLOAT: return "floating";
  case SR_DK_COMPLEX: return "complexfloating";
  default: return strncmp(sr_dtype_name(d), "key<", 4) == 0 ? "prng_key" : "generic";
  }
}

static const Abstract *abstract_named(const char *name) {
  for (int i = 0; i < NABSTRACT; i++)
    if (strcmp(abstracts[i].name, name) == 0) return &abstracts[i];
  return NULL;
}

/* whether abstract type a is b or under it */
static int abstract_under(const Abstract *a, const Abstract *b) {
  for (; a; a = a->parent ? abstract_named(a->parent) : NULL)
    if (a == b) return 1;
  return 0;
}

/* jnp.issubdtype(arg1, arg2): dtypes.issubdtype, with JAX's extended
   types left out (bfloat16 and the float8s are floating, int4 signed) */
static int raw_dtype(SrInterp *I, SrVal *v, int *d, const char *what);

static SrVal *jnp_issubdtype(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "issubdtype", "arg1, arg2", p) < 0) return NULL;
  const Abstract *a1 = abstract_of(p[0]), *a2 = abstract_of(p[1]);
  /* np.dtype(object)'s type, object_, is under generic alone: no dtype
     here is under it */
  if (p[1] == sr_lookup_qualname("builtins.object")) return sr_bool(p[0] == p[1]);
  int d1 = -1, d2 = -1;
  /* np.dtype of each, as given (no x64 truncation) */
  if (!a1 && raw_dtype(I, p[0], &d1, "issubdtype") < 0) return NULL;
  if (!a2 && raw_dtype(I, p[1], &d2, "issubdtype") < 0) return NULL;
  if (!a1 && d1 < 0) return sr_bool(0);
  if (!a2 && d2 < 0) return sr_bool(0);
  if (!a2) return sr_bool(!a1 && d1 == d2);
  if (a1) return sr_bool(abstract_under(a1, a2));
  return sr_bool(abstract_under(abstract_named(parent_of_dtype((SrDtype)d1)), a2));
}

/* ======================================================================
 * result_type, promote_types, can_cast, isscalar, iterable
 * ====================================================================== */

static int is_value(SrVal *v) {
  return v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || v->kind == SR_V_COMPLEX ||
         sr_array_of(v) || sr_is_ndarray(v);
}

/* Python's int, float or complex type as the weak node SR_JNP_WEAK_*,
   else 0 */
static int python_weak_type(SrVal *v) {
  const char *nm = sr_is_obj(v, &sr_builtin_class) ? sr_builtin_name(v) : NULL;
  if (!nm) return 0;
  return strcmp(nm, "builtins.int") == 0 ? SR_JNP_WEAK_INT : strcmp(nm, "builtins.float") == 0 ? SR_JNP_WEAK_FLOAT
       : strcmp(nm, "builtins.complex") == 0 ? SR_JNP_WEAK_COMPLEX : 0;
}

/* dtypes._dtype_and_weaktype(v): dtypes.dtype(v) (Python's types and
   values canonical, an array's own dtype, a dtype's name per
   jax_explicit_x64_dtypes) and whether v is weak (Python's int, float,
   complex and their values, weak arrays) */
static int dtype_and_weak(SrInterp *I, SrVal *v, SrDtype *d, int *weak, const char *what) {
  *weak = 0;
  /* a Python complex: canonicalize_dtype(complex128) */
  if (v->kind == SR_V_COMPLEX) {
    *d = I->jax->enable_x64 ? SR_C128 : SR_C64;
    *weak = 1;
    return 0;
  }
  if (is_value(v)) {
    const SrType *t = vtype(I, v);
    if (!t) return -1;
    *d = t->dtype;
    *weak = t->weak && t->dtype != SR_BOOL;
    return 0;
  }
  /* dtypes.dtype: an object of a class of ours with a dtype attribute (a
     __jax_array__ duck array) has that dtype, strong */
  if (sr_class_of(v)) {
    SrVal *dv = sr_getattr(I, v, "dtype");
    if (!dv) sr_exc_clear(I);
    else if (dv->kind == SR_V_DTYPE) {
      *d = dv->dtype;
      sr_unref(dv);
      return 0;
    }
    sr_unref(dv);
  }
  if (v->kind == SR_V_NONE) return sr_raise(I, "ValueError", "Invalid argument to dtype: None."), -1;
  int dt;
  if (sr_dtype_arg(I, v, &dt, what) < 0) return -1;
  if (dt < 0) return sr_raise(I, "TypeError", "data type None not understood"), -1;
  *d = (SrDtype)dt;
  *weak = python_weak_type(v) != 0;
  return 0;
}

/* jnp.result_type(*args, return_weak_type_flag=False): dtypes.result_type:
   lattice_result_type of the arguments (None is the default float), a
   weak result its kind's default dtype */
static SrVal *jnp_result_type(SrInterp *I, SrArgs *a) {
  int flag = 0;
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "return_weak_type_flag") != 0)
      return sr_raise(I, "TypeError", "result_type() got an unexpected keyword argument '%s'", a->kw[k]);
    flag = sr_val_truthy(a->kwv[k]);
  }
  if (a->n == 0) return sr_raise(I, "ValueError", "at least one array or dtype is required");
  SrDtype *dts = sr_xcalloc((size_t)a->n, sizeof *dts);
  int *weaks = sr_xcalloc((size_t)a->n, sizeof *weaks);
  SrVal *r = NULL;
  SrDtype d;
  int weak;
  for (int i = 0; i < a->n; i++) {
    if (a->v[i]->kind == SR_V_NONE) {
      dts[i] = default_float(I);
      continue;
    }
    if (dtype_and_weak(I, a->v[i], &dts[i], &weaks[i], "result_type") < 0) goto done;
  }
  if (sr_jnp_lattice_result(I, a->n, dts, weaks, &d, &weak) < 0) goto done;
  if (weak) {
    int k = sr_dtype_kind(d);
    d = k == SR_DK_INT ? default_int(I) : k == SR_DK_UINT ? (I->jax->enable_x64 ? SR_U64 : SR_U32)
      : k == SR_DK_FLOAT ? default_float(I) : k == SR_DK_COMPLEX ? (I->jax->enable_x64 ? SR_C128 : SR_C64) : d;
  }
  r = sr_dtype_val(NULL, d);
  if (flag) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, t, r);
    sr_seq_push(NULL, t, sr_bool(weak));
    r = t;
  }
done:
  free(dts);
  free(weaks);
  return r;
}

/* np.dtype(v) as given (no x64 truncation), for promote_types */
static int raw_dtype(SrInterp *I, SrVal *v, int *d, const char *what) {
  const char *nm = sr_is_obj(v, &sr_builtin_class) ? sr_builtin_name(v) : NULL;
  if (nm && strcmp(nm, "builtins.int") == 0) return *d = SR_I64, 0;
  if (nm && strcmp(nm, "builtins.float") == 0) return *d = SR_F64, 0;
  if (nm && strcmp(nm, "builtins.complex") == 0) return *d = SR_C128, 0;
  int saved = I->jax->explicit_x64;
  I->jax->explicit_x64 = 2;
  int rc = sr_dtype_arg(I, v, d, what);
  I->jax->explicit_x64 = saved;
  if (rc == 0 && *d < 0) return sr_raise(I, "TypeError", "data type None not understood"), -1;
  return rc;
}

/* jnp.promote_types(a, b): dtypes.promote_types: the lattice's least
   upper bound of np.dtype(a) and np.dtype(b) (Python's int, float and
   complex are the weak types i*, f*, c*), as a dtype */
static SrVal *jnp_promote_types(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "promote_types", "a, b", p) < 0) return NULL;
  int d[2];
  for (int i = 0; i < 2; i++) {
    d[i] = python_weak_type(p[i]);
    if (!d[i] && raw_dtype(I, p[i], &d[i], "promote_types") < 0) return NULL;
  }
  SrDtype r;
  if (sr_jnp_promote_types(I, d[0], d[1], &r) < 0) return NULL;
  return sr_dtype_val(NULL, r);
}

/* jnp.can_cast(from_, to, casting='safe'): numpy's rules on the two
   dtypes: safe when to holds every value of from_ */
static SrVal *jnp_can_cast(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "can_cast", "from_, to, casting=", p) < 0) return NULL;
  int f, t;
  SrVal *fromv = p[0];
  if (is_value(fromv)) {
    const SrType *ty = vtype(I, fromv);
    if (!ty) return NULL;
    f = ty->dtype;
  } else if (sr_dtype_arg(I, fromv, &f, "can_cast") < 0) {
    return NULL;
  }
  if (sr_dtype_arg(I, p[1], &t, "can_cast") < 0) return NULL;
  const char *casting = given(p[2]) ? sr_as_str(I, p[2], "casting") : "safe";
  if (!casting) return NULL;
  if (strcmp(casting, "unsafe") == 0) return sr_bool(1);
  if (strcmp(casting, "no") == 0 || strcmp(casting, "equiv") == 0) return sr_bool(f == t);
  int kf = sr_dtype_kind((SrDtype)f), kt = sr_dtype_kind((SrDtype)t);
  int bf = sr_dtype_info((SrDtype)f)->bits, bt = sr_dtype_info((SrDtype)t)->bits;
  if (strcmp(casting, "same_kind") == 0) {
    int rank[] = {[SR_DK_BOOL] = 0, [SR_DK_UINT] = 1, [SR_DK_INT] = 1, [SR_DK_FLOAT] = 2, [SR_DK_COMPLEX] = 3};
    if (kf <= SR_DK_COMPLEX && kt <= SR_DK_COMPLEX && rank[kf] < rank[kt]) return sr_bool(1);
    if (kf == kt) return sr_bool(1);
    return sr_bool(kf == SR_DK_UINT && kt == SR_DK_INT);
  }
  if (f == t || kf == SR_DK_BOOL) return sr_bool(1);
  switch (kt) {
  case SR_DK_UINT: return sr_bool(kf == SR_DK_UINT && bt >= bf);
  case SR_DK_INT: return sr_bool((kf == SR_DK_INT && bt >= bf) || (kf == SR_DK_UINT && bt > bf));
  case SR_DK_FLOAT:
    return sr_bool((kf == SR_DK_FLOAT && bt >= bf && !(f == SR_BF16 && t == SR_F16) && !(f == SR_F16 && t == SR_BF16)) ||
                   ((kf == SR_DK_INT || kf == SR_DK_UINT) && bt > bf));
  case SR_DK_COMPLEX:
    return sr_bool((kf == SR_DK_COMPLEX && bt >= bf) || (kf == SR_DK_FLOAT && bt >= 2 * bf) ||
                   ((kf == SR_DK_INT || kf == SR_DK_UINT) && bt > 2 * bf));
  default: return sr_bool(0);
  }
}

/* jnp.isscalar(element): np.isscalar's (a Python number or str), or a
   rank-0 array (lax_numpy.isscalar) */
static SrVal *jnp_isscalar(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "isscalar", "element", p) < 0) return NULL;
  SrVal *x = p[0];
  if (x->kind == SR_V_INT || x->kind == SR_V_FLOAT || x->kind == SR_V_BOOL || x->kind == SR_V_COMPLEX ||
      x->kind == SR_V_STR)
    return sr_bool(1);
  if (sr_array_of(x) || sr_is_ndarray(x)) {
    const SrType *t = vtype(I, x);
    if (!t) return NULL;
    return sr_bool(t->ndim == 0);
  }
  /* an object with __jax_array__: whether the array it gives is rank 0 */
  if (sr_class_instance_has(x, "__jax_array__")) {
    SrVal *r = sr_class_call_method0(I, x, "__jax_array__");
    if (!r) return NULL;
    const SrType *t = sr_value_type(I, r);
    sr_unref(r);
    return sr_bool(t && t->ndim == 0);
  }
  return sr_bool(0);
}

/* jnp.iterable(y): whether iter(y) works (numpy's) */
static SrVal *jnp_iterable(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "iterable", "y", p) < 0) return NULL;
  SrVal *it = sr_call1(I, sr_lookup_qualname("builtins.iter"), p[0]);
  if (!it) {
    sr_exc_clear(I);
    return sr_bool(0);
  }
  sr_unref(it);
  return sr_bool(1);
}

/* ======================================================================
 * broadcast_shapes, broadcast_arrays, copy
 * ====================================================================== */

/* numpy's broadcast of shapes (lax.broadcast_shapes' error) into out */
static int broadcast_shapes(SrInterp *I, int n, int64_t (*shapes)[SR_MAX_RANK], const int *nds, int64_t *out,
                            int *nd) {
  *nd = 0;
  for (int i = 0; i < n; i++)
    if (nds[i] > *nd) *nd = nds[i];
  for (int k = 0; k < *nd; k++) out[k] = 1;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < nds[i]; k++) {
      int64_t s = shapes[i][k], *o = &out[*nd - nds[i] + k];
      if (s == *o || s == 1) continue;
      if (*o == 1) {
        *o = s;
        continue;
      }
      SrBuf b = SR_BUF_INIT;
      for (int j = 0; j < n; j++) {
        sr_buf_puts(&b, j ? ", (" : "(");
        for (int m = 0; m < nds[j]; m++) sr_buf_printf(&b, "%s%lld", m ? ", " : "", (long long)shapes[j][m]);
        sr_buf_puts(&b, nds[j] == 1 ? ",)" : ")");
      }
      sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: shapes=[%s]", sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
  return 0;
}

static SrVal *shape_tuple(const int64_t *s, int nd) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, nd);
  for (int i = 0; i < nd; i++) sr_seq_push(NULL, t, sr_int(NULL, s[i]));
  return t;
}

/* jnp.broadcast_shapes(*shapes): a tuple of ints */
static SrVal *jnp_broadcast_shapes(SrInterp *I, SrArgs *a) {
  if (a->n == 0) return sr_seq(NULL, SR_V_TUPLE, 0);
  int64_t (*shapes)[SR_MAX_RANK] = sr_xcalloc((size_t)a->n, sizeof *shapes);
  int *nds = sr_xcalloc((size_t)a->n, sizeof *nds);
  SrVal *r = NULL;
  int64_t out[SR_MAX_RANK];
  int nd;
  for (int i = 0; i < a->n; i++) {
    /* lax._validate_shapes: canonicalize_shape (operator.index of each
       dim), then non-negative dims */
    SrVal *v = a->v[i];
    int bad = 0, neg = 0;
    if (v->kind == SR_V_INT) neg = v->i < 0;
    else if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST || v->kind == SR_V_STR) {
      SrVal *items = sr_iterate(I, v);
      if (!items) goto done;
      for (int k = 0; k < items->seq.n && !bad; k++) {
        int64_t d;
        if (sr_as_index(I, items->seq.items[k], &d) < 0) {
          sr_exc_clear(I);
          bad = 1;
        } else if (d < 0) {
          neg = 1;
        }
      }
      sr_unref(items);
    }
    if (bad || neg) {
      SrBuf b = SR_BUF_INIT;
      if (bad) {
        sr_val_str(&b, v);
        sr_raise(I, "TypeError", "Shapes must be 1D sequences of concrete values of integer type, got %s.",
                 sr_buf_str(&b));
      } else {
        sr_val_repr(&b, v);
        sr_raise(I, "TypeError",
                 "Only non-negative indices are allowed when broadcasting static shapes, but got shape %s.",
                 sr_buf_str(&b));
      }
      sr_buf_free(&b);
      goto done;
    }
    if (sr_shape_arg(I, v, shapes[i], &nds[i], "broadcast_shapes") < 0) goto done;
  }
  if (broadcast_shapes(I, a->n, shapes, nds, out, &nd) == 0) r = shape_tuple(out, nd);
done:
  free(shapes);
  free(nds);
  return r;
}

/* jnp.broadcast_arrays(*args): util._broadcast_arrays, each array
   broadcast_to the common shape (an array of that shape already is
   returned as it is) */
static SrVal *jnp_broadcast_arrays(SrInterp *I, SrArgs *a) {
  SrVal **x = sr_xcalloc((size_t)a->n + 1, sizeof *x);
  int64_t (*shapes)[SR_MAX_RANK] = sr_xcalloc((size_t)a->n + 1, sizeof *shapes);
  int *nds = sr_xcalloc((size_t)a->n + 1, sizeof *nds);
  SrVal *r = NULL;
  int ok = 1;
  for (int i = 0; i < a->n && ok; i++) {
    x[i] = sr_jnp_asarray(I, a->v[i], -1);
    const SrType *t = x[i] ? vtype(I, x[i]) : NULL;
    if (!t) {
      ok = 0;
      break;
    }
    nds[i] = t->ndim;
    for (int k = 0; k < t->ndim; k++) shapes[i][k] = t->dims[k].size;
  }
  int64_t out[SR_MAX_RANK];
  int nd;
  if (ok && broadcast_shapes(I, a->n, shapes, nds, out, &nd) == 0) {
    r = sr_seq(NULL, SR_V_TUPLE, a->n);
    for (int i = 0; i < a->n; i++) {
      int same = nds[i] == nd && memcmp(shapes[i], out, (size_t)nd * sizeof *out) == 0;
      SrVal *b = same ? sr_ref(x[i]) : sr_lax_broadcast_to(I, x[i], out, nd, NULL);
      if (!b) {
        sr_unref(r);
        r = NULL;
        break;
      }
      sr_seq_push(NULL, r, b);
    }
  }
  for (int i = 0; i < a->n; i++) sr_unref(x[i]);
  free(x);
  free(shapes);
  free(nds);
  return r;
}

/* jnp.copy(a, order=None) and x.copy(): array(a, copy=True) */
static SrVal *jnp_copy(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "copy", "a, order=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  const char *kw[] = {"copy", "order"};
  SrVal *kwv[] = {sr_bool(1), given(p[1]) ? p[1] : NULL};
  SrVal *r = sr_nn_call(&s, "jax.numpy.array", 1, p, 2, kw, kwv);
  return sr_nn_done(&s, r);
}

/* ======================================================================
 * logspace, geomspace (array_creation._logspace, _geomspace: jits with
 * num, endpoint, dtype and axis static)
 * ====================================================================== */

typedef struct SpaceData {
  int64_t num, axis;
  int endpoint, dtype;
} SpaceData;

static SrDtype space_dtype(SrInterp *I, const SpaceData *d, SrVal *start, SrVal *stop) {
  if (d->dtype >= 0) return (SrDtype)d->dtype;
  SrVal *ss[2] = {start, stop};
  int weak;
  SrDtype r = sr_jnp_result_dtype(I, 2, ss, &weak);
  if (weak && sr_dtype_kind(r) == SR_DK_INT) r = default_int(I);
  return to_inexact(I, r);
}

static SrVal *linspace_of(SrNnScope *s, SrVal *start, SrVal *stop, const SpaceData *d, SrVal *dtype, int64_t axis) {
  const char *kw[] = {"num", "endpoint", "retstep", "dtype", "axis"};
  SrVal *kwv[] = {sr_nn_int(s, d->num), sr_bool(d->endpoint), sr_bool(0), dtype, sr_nn_int(s, axis)};
  SrVal *args[2] = {start, stop};
  return sr_nn_call(s, "jax.numpy.linspace", 2, args, 5, kw, kwv);
}

static SrVal *logspace_body(SrInterp *I, SrArgs *a) {
  SpaceData *d = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrDtype dt = space_dtype(I, d, a->v[0], a->v[1]), comp = to_inexact(I, dt);
  SrVal *start = sr_nn_keep(&s, sr_lax_convert(I, a->v[0], comp, 0, NULL));
  SrVal *stop = start ? sr_nn_keep(&s, sr_lax_convert(I, a->v[1], comp, 0, NULL)) : NULL;
  SrVal *lin = stop ? linspace_of(&s, start, stop, d, NULL, d->axis) : NULL;
  SrVal *pw = lin ? sr_nn_call2(&s, "jax.numpy.power", a->v[2], lin) : NULL;
  SrVal *r = pw ? sr_nn_keep(&s, sr_lax_convert(I, pw, dt, 0, NULL)) : NULL;
  return sr_nn_done(&s, r);
}

static SrVal *geomspace_body(SrInterp *I, SrArgs *a) {
  SpaceData *d = sr_current_builtin(I)->data;
  SrNnScope s = {I, {0}, 0};
  SrDtype dt = space_dtype(I, d, a->v[0], a->v[1]), comp = to_inexact(I, dt);
  SrVal *start = sr_nn_keep(&s, sr_lax_convert(I, a->v[0], comp, 0, NULL));
  SrVal *stop = start ? sr_nn_keep(&s, sr_lax_convert(I, a->v[1], comp, 0, NULL)) : NULL;
  SrVal *sign = stop ? sr_nn_call1(&s, "jax.numpy.sign", start) : NULL;
  SrVal *l0 = sign ? sr_nn_call1(&s, "jax.numpy.log10", sr_nn_op(&s, SR_OP_DIV, start, sign)) : NULL;
  SrVal *l1 = l0 ? sr_nn_call1(&s, "jax.numpy.log10", sr_nn_op(&s, SR_OP_DIV, stop, sign)) : NULL;
  SrVal *lg = NULL;
  if (l1) {
    const char *kw[] = {"num", "endpoint", "base", "dtype", "axis"};
    SrVal *kwv[] = {sr_nn_int(&s, d->num), sr_bool(d->endpoint), sr_nn_float(&s, 10.0),
                    sr_nn_keep(&s, sr_dtype_val(NULL, comp)), sr_nn_int(&s, 0)};
    SrVal *args[2] = {l0, l1};
    lg = sr_nn_call(&s, "jax.numpy.logspace", 2, args, 5, kw, kwv);
  }
  SrVal *res = lg ? sr_nn_op(&s, SR_OP_MUL, sign, lg) : NULL;
  if (res) {
    int nd = vtype(I, res)->ndim;
    int64_t axis = d->axis < 0 ? d->axis + nd : d->axis;
    if (axis < 0 || axis >= nd) {
      sr_raise(I, "AxisError", "axis %lld is out of bounds for array of dimension %d", (long long)d->axis, nd);
      res = NULL;
    } else if (axis != 0) {
      int64_t perm[SR_MAX_RANK];
      int k = 0;
      for (int i = 1; i <= axis; i++) perm[k++] = i;
      perm[k++] = 0;
      for (int i = (int)axis + 1; i < nd; i++) perm[k++] = i;
      res = sr_nn_keep(&s, sr_lax_transpose(I, res, perm, nd));
    }
  }
  SrVal *r = res ? sr_nn_keep(&s, sr_lax_convert(I, res, dt, 0, NULL)) : NULL;
  return sr_nn_done(&s, r);
}

static SrVal *space_api(SrInterp *I, SrArgs *a, int geom) {
  const char *fname = geom ? "geomspace" : "logspace";
  SrVal *p[7];
  if (sr_args_parse(I, a, fname, geom ? "start, stop, num=, endpoint=, dtype=, axis=" :
                                        "start, stop, num=, endpoint=, base=, dtype=, axis=", p) < 0)
    return NULL;
  SrVal *base = geom ? NULL : p[4];
  SrVal *dtype = geom ? p[4] : p[5], *axis = geom ? p[5] : p[6];
  SpaceData *d = sr_xcalloc(1, sizeof *d);
  d->num = 50;
  d->endpoint = !p[3] || sr_val_truthy(p[3]);
  if ((p[2] && sr_as_int(I, p[2], "num", &d->num) < 0) || sr_dtype_arg(I, dtype, &d->dtype, fname) < 0 ||
      (given(axis) && sr_as_int(I, axis, "axis", &d->axis) < 0)) {
    free(d);
    return NULL;
  }
  if (geom) {
    SrVal *args[2] = {p[0], p[1]};
    return sr_api_jit(I, "_geomspace", geomspace_body, d, 2, args);
  }
  SrVal *b = given(base) ? sr_ref(base) : sr_float(NULL, 10.0);
  SrVal *args[3] = {p[0], p[1], b};
  SrVal *r = sr_api_jit(I, "_logspace", logspace_body, d, 3, args);
  sr_unref(b);
  return r;
}

static SrVal *jnp_logspace(SrInterp *I, SrArgs *a) { return space_api(I, a, 0); }
static SrVal *jnp_geomspace(SrInterp *I, SrArgs *a) { return space_api(I, a, 1); }

/* ======================================================================
 * indices, ix_, diag_indices, unravel_index
 * ====================================================================== */

/* jnp.indices(dimensions, dtype=None, sparse=False): an iota broadcast
   along each dimension, stacked (or the sparse tuple) */
static SrVal *jnp_indices(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "indices", "dimensions, dtype=, sparse=", p) < 0) return NULL;
  int64_t dims[SR_MAX_RANK];
  int n;
  int dt;
  if (sr_shape_arg(I, p[0], dims, &n, "indices") < 0 || sr_dtype_arg(I, p[1], &dt, "indices") < 0) return NULL;
  SrDtype d = dt >= 0 ? (SrDtype)dt : default_int(I);
  int sparse = p[2] && sr_val_truthy(p[2]);
  SrNnScope s = {I, {0}, 0};
  SrVal *parts = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, n));
  for (int i = 0; i < n; i++) {
    SrVal *io = sr_nn_keep(&s, sr_lax_iota(I, d, &dims[i], 1, 0, NULL));
    if (!io) return sr_nn_done(&s, NULL);
    int64_t shape[SR_MAX_RANK], bd = i;
    for (int k = 0; k < n; k++) shape[k] = sparse ? (k == i ? dims[i] : 1) : dims[k];
    SrVal *b = sr_op_broadcast_in_dim(SR_BINDER(I), io, shape, n, &bd, 1, NULL);
    if (!b) return sr_nn_done(&s, NULL);
    sr_seq_push(NULL, parts, b);
  }
  if (sparse) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
    for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_ref(parts->seq.items[i]));
    sr_nn_done(&s, NULL);
    return t;
  }
  if (n == 0) {
    const char *kw[] = {"dtype"};
    SrVal *kwv[] = {sr_nn_keep(&s, sr_dtype_val(NULL, d))};
    SrVal *empty = sr_nn_keep(&s, sr_seq(NULL, SR_V_LIST, 0));
    return sr_nn_done(&s, sr_nn_call(&s, "jax.numpy.array", 1, &empty, 1, kw, kwv));
  }
  const char *kw[] = {"axis"};
  SrVal *kwv[] = {sr_nn_int(&s, 0)};
  return sr_nn_done(&s, sr_nn_call(&s, "jax.numpy.stack", 1, &parts, 1, kw, kwv));
}

/* jnp.ix_(*args): each 1-d sequence reshaped to lie along its own axis */
static SrVal *jnp_ix(SrInterp *I, SrArgs *a) {
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) {
    SrVal *x = sr_jnp_asarray(I, a->v[i], -1);
    const SrType *t = x ? vtype(I, x) : NULL;
    if (!t) {
      sr_unref(x);
      sr_unref(r);
      return NULL;
    }
    if (t->ndim != 1) {
      sr_unref(x);
      sr_unref(r);
      return sr_raise(I, "ValueError", "Cross index must be 1 dimensional");
    }
    if (sr_dtype_kind(t->dtype) == SR_DK_BOOL) {
      sr_unref(x);
      sr_unref(r);
      return sr_raise(I, "NotImplementedError", "Boolean arguments to jax.numpy.ix_ are not supported");
    }
    int64_t shape[SR_MAX_RANK], bd = i;
    for (int k = 0; k < a->n; k++) shape[k] = k == i ? t->dims[0].size : 1;
    SrVal *b = sr_op_broadcast_in_dim(SR_BINDER(I), x, shape, a->n, &bd, 1, NULL);
    sr_unref(x);
    if (!b) {
      sr_unref(r);
      return NULL;
    }
    sr_seq_push(NULL, r, b);
  }
  return r;
}

/* jnp.diag_indices(n, ndim=2): the same iota ndim times */
static SrVal *diag_indices(SrInterp *I, int64_t n, int64_t ndim) {
  if (n < 0) return sr_raise(I, "ValueError", "n argument to diag_indices must be nonnegative, got %lld", (long long)n);
  if (ndim < 0)
    return sr_raise(I, "ValueError", "ndim argument to diag_indices must be nonnegative, got %lld", (long long)ndim);
  SrVal *io = sr_lax_iota(I, n > INT32_MAX ? SR_I64 : default_int(I), &n, 1, 0, NULL);
  if (!io) return NULL;
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, (int)ndim);
  for (int64_t i = 0; i < ndim; i++) sr_seq_push(NULL, t, sr_ref(io));
  sr_unref(io);
  return t;
}

static SrVal *jnp_diag_indices(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "diag_indices", "n, ndim=", p) < 0) return NULL;
  int64_t n, nd = 2;
  if (sr_as_int(I, p[0], "n", &n) < 0 || (given(p[1]) && sr_as_int(I, p[1], "ndim", &nd) < 0)) return NULL;
  return diag_indices(I, n, nd);
}

static SrVal *jnp_diag_indices_from(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "diag_indices_from", "arr", p) < 0) return NULL;
  const SrType *t = vtype(I, p[0]);
  if (!t) return NULL;
  if (t->ndim < 2) return sr_raise(I, "ValueError", "input array must be at least 2-d");
  for (int i = 1; i < t->ndim; i++)
    if (t->dims[i].size != t->dims[0].size) return sr_raise(I, "ValueError", "All dimensions of input must be of equal length");
  return diag_indices(I, t->dims[0].size, t->ndim);
}

/* jnp.unravel_index(indices, shape): divmod from the last dimension,
   out-of-bounds indices clipped as JAX clips them */
static SrVal *jnp_unravel_index(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "unravel_index", "indices, shape", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int n;
  if (sr_shape_arg(I, p[1], shape, &n, "unravel_index") < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *idx = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  SrVal *outs[SR_MAX_RANK] = {0};
  for (int i = n - 1; i >= 0 && idx; i--) {
    SrVal *dm = sr_nn_call2(&s, "jax.numpy.divmod", idx, sr_nn_int(&s, shape[i]));
    if (!dm) return sr_nn_done(&s, NULL);
    idx = dm->seq.items[0];
    outs[i] = dm->seq.items[1];
  }
  if (!idx) return sr_nn_done(&s, NULL);
  SrVal *oob_pos = sr_nn_op(&s, SR_OP_GT, idx, sr_nn_int(&s, 0));
  const SrType *it = vtype(I, idx);
  SrVal *oob_neg = it && sr_dtype_kind(it->dtype) == SR_DK_UINT
                       ? sr_nn_call1(&s, "jax.numpy.asarray", sr_bool(0))
                       : sr_nn_op(&s, SR_OP_LT, idx, sr_nn_int(&s, -1));
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n && oob_neg; i++) {
    SrVal *inner = sr_nn_call3(&s, "jax.numpy.where", oob_neg, sr_nn_int(&s, 0), outs[i]);
    SrVal *w = inner ? sr_nn_call3(&s, "jax.numpy.where", oob_pos, sr_nn_int(&s, shape[i] - 1), inner) : NULL;
    if (!w) {
      sr_unref(r);
      return sr_nn_done(&s, NULL);
    }
    sr_seq_push(NULL, r, sr_ref(w));
  }
  if (!oob_neg) {
    sr_unref(r);
    r = NULL;
  }
  sr_nn_done(&s, NULL);
  return r;
}

/* ======================================================================
 * nonzero, flatnonzero, argwhere, where(condition), tril/triu_indices
 * ====================================================================== */

/* lax_numpy.nonzero: the flat positions of the true elements by
   cumsum(bincount(cumsum(mask), length=size)), split by strides; size
   must be static under a trace, fill_value pads */
static SrVal *nonzero(SrInterp *I, SrVal *a, SrVal *size_v, SrVal *fill_value) {
  SrNnScope s = {I, {0}, 0};
  SrVal *arr = sr_nn_keep(&s, sr_jnp_asarray(I, a, -1));
  const SrType *t = arr ? vtype(I, arr) : NULL;
  if (!t) return sr_nn_done(&s, NULL);
  if (t->ndim == 0)
    return sr_nn_done(&s, sr_raise(I, "ValueError", "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() instead."));
  int nd = t->ndim;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) shape[i] = t->dims[i].size;
  SrVal *mask = sr_dtype_kind(t->dtype) == SR_DK_BOOL ? arr : sr_nn_op(&s, SR_OP_NE, arr, sr_nn_int(&s, 0));
  int64_t size;
  if (given(size_v)) {
    if (sr_as_int(I, size_v, "size", &size) < 0) return sr_nn_done(&s, NULL);
  } else {
    SrVal *cnt = mask ? sr_nn_call1(&s, "jax.numpy.sum", mask) : NULL;
    if (!cnt) return sr_nn_done(&s, NULL);
    if (!sr_array_of(cnt) || sr_array_of(cnt)->kind != SR_AV_CONCRETE)
      return sr_nn_done(&s, sr_raise_concretization(I, cnt,
                                                    "The size argument of jnp.nonzero must be statically specified "
                                                    "to use jnp.nonzero within JAX transformations."));
    SrVal *iv = sr_nn_call1(&s, "builtins.int", cnt);
    if (!iv) return sr_nn_done(&s, NULL);
    size = iv->i;
  }
  int64_t total = sr_type_numel(t);
  SrVal *out = sr_seq(NULL, SR_V_TUPLE, nd);
  if (total == 0 || size == 0) {
    for (int i = 0; i < nd; i++) {
      const char *zkw[] = {"dtype"};
      SrVal *zkwv[] = {sr_nn_keep(&s, sr_dtype_val(NULL, default_int(I)))};
      SrVal *n1 = sr_nn_int(&s, size);
      SrVal *z = sr_nn_call(&s, "jax.numpy.zeros", 1, &n1, 1, zkw, zkwv);
      if (!z) {
        sr_unref(out);
        return sr_nn_done(&s, NULL);
      }
      sr_seq_push(NULL, out, sr_ref(z));
    }
    sr_nn_done(&s, NULL);
    return out;
  }
  /* bincount(cumsum(mask), length=size): zeros(size).at[clip(x, 0)].add(1, mode='drop') */
  SrVal *cm = sr_nn_call1(&s, "jax.numpy.cumsum", mask);
  SrVal *zi = NULL;
  if (cm) {
    const char *zkw[] = {"dtype"};
    SrVal *zkwv[] = {sr_nn_keep(&s, sr_dtype_val(NULL, default_int(I)))};
    SrVal *n1 = sr_nn_int(&s, size);
    zi = sr_nn_call(&s, "jax.numpy.zeros", 1, &n1, 1, zkw, zkwv);
  }
  SrVal *clipped = zi ? sr_nn_call2(&s, "jax.numpy.clip", cm, sr_nn_int(&s, 0)) : NULL;
  SrVal *bc = NULL;
  if (clipped) {
    SrVal *at = sr_nn_keep(&s, sr_getattr(I, zi, "at"));
    SrVal *ref = at ? sr_nn_keep(&s, sr_getitem(I, at, clipped)) : NULL;
    SrVal *add = ref ? sr_nn_keep(&s, sr_getattr(I, ref, "add")) : NULL;
    if (add) {
      SrVal *one = sr_nn_keep(&s, sr_jnp_asarray(I, sr_nn_int(&s, 1), default_int(I)));
      SrVal *args[1] = {one};
      const char *kw[] = {sr_intern_cstr("mode")};
      SrVal *kwv[] = {sr_nn_keep(&s, sr_str_cstr(NULL, "drop"))};
      SrArgs ca = {1, args, 1, kw, kwv, NULL};
      bc = sr_nn_keep(&s, sr_call(I, add, &ca));
    }
  }
  SrVal *flat = bc ? sr_nn_call1(&s, "jax.numpy.cumsum", bc) : NULL;
  if (!flat) {
    sr_unref(out);
    return sr_nn_done(&s, NULL);
  }
  SrVal *fill_mask = NULL;
  SrVal *fills[SR_MAX_RANK] = {0};
  if (given(fill_value)) {
    for (int i = 0; i < nd; i++) {
      SrVal *fv = fill_value->kind == SR_V_TUPLE ? (i < fill_value->seq.n ? fill_value->seq.items[i] : NULL) : fill_value;
      const SrType *ft = fv ? vtype(I, fv) : NULL;
      if (!ft || ft->ndim != 0 || (fill_value->kind == SR_V_TUPLE && fill_value->seq.n != nd)) {
        SrBuf b = SR_BUF_INIT;
        sr_val_repr(&b, fill_value);
        sr_exc_clear(I);
        sr_raise(I, "ValueError", "fill_value must be a scalar or a tuple of length %d; got %s", nd, sr_buf_str(&b));
        sr_buf_free(&b);
        sr_unref(out);
        return sr_nn_done(&s, NULL);
      }
      fills[i] = fv;
    }
    SrVal *ar = sr_nn_call1(&s, "jax.numpy.arange", sr_nn_int(&s, size));
    SrVal *cnt = ar ? sr_nn_call1(&s, "jax.numpy.sum", mask) : NULL;
    fill_mask = cnt ? sr_nn_op(&s, SR_OP_GE, ar, cnt) : NULL;
    if (!fill_mask) {
      sr_unref(out);
      return sr_nn_done(&s, NULL);
    }
  }
  int64_t stride = 1, strides[SR_MAX_RANK];
  for (int i = nd - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= shape[i];
  }
  for (int i = 0; i < nd; i++) {
    SrVal *st = sr_nn_keep(&s, sr_jnp_asarray(I, sr_nn_int(&s, strides[i]), vtype(I, flat)->dtype));
    SrVal *q = st ? sr_nn_op(&s, SR_OP_FLOORDIV, flat, st) : NULL;
    SrVal *e = q ? sr_nn_op(&s, SR_OP_MOD, q, sr_nn_int(&s, shape[i])) : NULL;
    if (e && fill_mask) e = sr_nn_call3(&s, "jax.numpy.where", fill_mask, fills[i], e);
    if (!e) {
      sr_unref(out);
      return sr_nn_done(&s, NULL);
    }
    sr_seq_push(NULL, out, sr_ref(e));
  }
  sr_nn_done(&s, NULL);
  return out;
}

static SrVal *jnp_nonzero(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "nonzero", "a, *, size=, fill_value=", p) < 0) return NULL;
  return nonzero(I, p[0], p[1], p[2]);
}

static SrVal *jnp_flatnonzero(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "flatnonzero", "a, *, size=, fill_value=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *flat = sr_nn_call1(&s, "jax.numpy.ravel", p[0]);
  SrVal *t = flat ? sr_nn_keep(&s, nonzero(I, flat, p[1], p[2])) : NULL;
  return sr_nn_done(&s, t ? t->seq.items[0] : NULL);
}

/* argwhere: transpose(vstack(nonzero(atleast_1d(a)))), reshaped */
static SrVal *jnp_argwhere(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "argwhere", "a, *, size=, fill_value=", p) < 0) return NULL;
  SrNnScope s = {I, {0}, 0};
  SrVal *x = sr_nn_keep(&s, sr_jnp_asarray(I, p[0], -1));
  const SrType *xt = x ? vtype(I, x) : NULL;
  if (!xt) return sr_nn_done(&s, NULL);
  int nd0 = xt->ndim;
  SrVal *a1 = sr_nn_call1(&s, "jax.numpy.atleast_1d", x);
  SrVal *nz = a1 ? sr_nn_keep(&s, nonzero(I, a1, p[1], p[2])) : NULL;
  SrVal *vs = nz ? sr_nn_call1(&s, "jax.numpy.vstack", nz) : NULL;
  SrVal *tr = vs ? sr_nn_call1(&s, "jax.numpy.transpose", vs) : NULL;
  if (!tr) return sr_nn_done(&s, NULL);
  int64_t rows = vtype(I, tr)->dims[0].size;
  SrVal *r;
  if (nd0 == 0) {
    SrVal *sl = sr_nn_keep(&s, sr_getitem(I, tr, sr_nn_keep(&s, sr_slice_new(sr_none(), sr_int(NULL, 0), sr_none()))));
    int64_t sh[2] = {rows, 0};
    r = sl ? sr_lax_reshape(I, sl, sh, 2, NULL) : NULL;
  } else {
    int64_t sh[2] = {rows, nd0};
    r = sr_lax_reshape(I, tr, sh, 2, NULL);
  }
  return sr_nn_done(&s, sr_nn_keep(&s, r));
}

/* jnp.where(condition) with neither x nor y: nonzero(condition) */
SrVal *sr_jnp_where_nonzero(SrInterp *I, SrVal *cond, SrVal *size, SrVal *fill_value) {
  return nonzero(I, cond, size, fill_value);
}

/* triu_indices / tril_indices: nonzero of triu/tril(ones((n, m)), k)
   with the static count as size */
static int64_t tri_count(int64_t n, int64_t m, int64_t k) {
  /* the number of (i, j), 0 <= i < n, 0 <= j < m, with j - i >= k */
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t lo = i + k < 0 ? 0 : i + k;
    if (lo < m) c += m - lo;
  }
  return c;
}

static SrVal *tri_indices(SrInterp *I, int64_t n, int64_t k, int64_t m, int upper) {
  SrNnScope s = {I, {0}, 0};
  int64_t sh[2] = {n, m};
  SrVal *shape = sr_nn_keep(&s, shape_tuple(sh, 2));
  SrVal *ones = sr_nn_call1(&s, "jax.numpy.ones", shape);
  const char *kw[] = {"k"};
  SrVal *kwv[] = {sr_nn_int(&s, k)};
  SrVal *tri = ones ? sr_nn_call(&s, upper ? "jax.numpy.triu" : "jax.numpy.tril", 1, &ones, 1, kw, kwv) : NULL;
  int64_t size = upper ? tri_count(n, m, k) : tri_count(m, n, -k);
  SrVal *r = tri ? nonzero(I, tri, sr_nn_int(&s, size), NULL) : NULL;
  sr_nn_done(&s, NULL);
  return r;
}

static SrVal *tri_indices_api(SrInterp *I, SrArgs *a, int upper) {
  SrVal *p[3];
  if (sr_args_parse(I, a, upper ? "triu_indices" : "tril_indices", "n, k=, m=", p) < 0) return NULL;
  int64_t n, k = 0, m;
  if (sr_as_int(I, p[0], "n", &n) < 0 || (given(p[1]) && sr_as_int(I, p[1], "k", &k) < 0)) return NULL;
  m = n;
  if (given(p[2]) && sr_as_int(I, p[2], "m", &m) < 0) return NULL;
  return tri_indices(I, n, k, m, upper);
}

static SrVal *tri_indices_from(SrInterp *I, SrArgs *a, int upper) {
  SrVal *p[2];
  if (sr_args_parse(I, a, upper ? "triu_indices_from" : "tril_indices_from", "arr, k=", p) < 0) return NULL;
  int64_t k = 0;
  if (given(p[1]) && sr_as_int(I, p[1], "k", &k) < 0) return NULL;
  const SrType *t = vtype(I, p[0]);
  if (!t) return NULL;
  if (t->ndim != 2)
    return sr_raise(I, "ValueError", "%s requires an array of shape (N, M); got shape=%s",
                    upper ? "triu_indices_from" : "tril_indices_from", "(...)");
  return tri_indices(I, t->dims[0].size, k, t->dims[1].size, upper);
}

static SrVal *jnp_triu_indices(SrInterp *I, SrArgs *a) { return tri_indices_api(I, a, 1); }
static SrVal *jnp_tril_indices(SrInterp *I, SrArgs *a) { return tri_indices_api(I, a, 0); }
static SrVal *jnp_triu_indices_from(SrInterp *I, SrArgs *a) { return tri_indices_from(I, a, 1); }
static SrVal *jnp_tril_indices_from(SrInterp *I, SrArgs *a) { return tri_indices_from(I, a, 0); }

/* ======================================================================
 * s_ and index_exp: the key itself (index_exp always a tuple)
 * ====================================================================== */

typedef struct IndexExp {
  int maketuple;
} IndexExp;

static void index_exp_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<numpy.lib._index_tricks_impl.IndexExpression object at %p>", v->obj.data);
}

static SrVal *index_exp_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  (void)I;
  const IndexExp *e = self->obj.data;
  if (e->maketuple && key->kind != SR_V_TUPLE) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, 1);
    sr_seq_push(NULL, t, sr_ref(key));
    return t;
  }
  return sr_ref(key);
}

/* jnp.dtype(x) and np.dtype(x): the dtype object of a dtype, its name,
   or a scalar type */
static SrVal *jnp_dtype(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "dtype", "dtype, align=, copy=", p) < 0) return NULL;
  int dt;
  /* np.dtype: as given, whatever jax_enable_x64 (None is float64, int
     int64) */
  if (p[0]->kind == SR_V_NONE) return sr_dtype_val(NULL, SR_F64);
  if (raw_dtype(I, p[0], &dt, "dtype") < 0) return NULL;
  return sr_dtype_val(NULL, (SrDtype)dt);
}

/* numpy.isscalar: Python numbers and strings, numpy scalars (0-d
   ndarrays here); not jax.Arrays, not tracers */
static SrVal *np_isscalar(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "isscalar", "element", p) < 0) return NULL;
  SrVal *x = p[0];
  if (x->kind == SR_V_INT || x->kind == SR_V_FLOAT || x->kind == SR_V_BOOL || x->kind == SR_V_COMPLEX ||
      x->kind == SR_V_STR)
    return sr_bool(1);
  (void)I;
  return sr_bool(sr_np_is_scalar(x)); /* a 0-d ndarray is not a scalar */
}

/* numpy.issubdtype: as jnp's, but ml_dtypes' types (bfloat16, float8s,
   int4) are not under numpy's abstract types */
static SrVal *np_issubdtype(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "issubdtype", "arg1, arg2", p) < 0) return NULL;
  int d1 = -1;
  if (!abstract_of(p[0]) && abstract_of(p[1])) {
    if (sr_dtype_arg(I, p[0], &d1, "issubdtype") < 0) return NULL;
    SrDtype d = (SrDtype)d1;
    int native = d == SR_BOOL || (sr_dtype_kind(d) != SR_DK_OTHER && d != SR_BF16 &&
                                  sr_dtype_info(d)->bits >= 8 && strncmp(sr_dtype_name(d), "float8", 6) != 0 &&
                                  strncmp(sr_dtype_name(d), "float4", 6) != 0);
    if (!native) return sr_bool(abstract_of(p[1]) == abstract_named("generic"));
  }
  return jnp_issubdtype(I, a);
}

static const SrLangOps index_exp_ops = {.getitem = index_exp_getitem};
static const SrClass index_exp_class = {"IndexExpression", NULL, index_exp_repr, NULL, &index_exp_ops};
static const IndexExp s_data = {0}, index_exp_data = {1};

void sr_jnp_build_init(void) {
  static const struct {
    const char *name;
    SrBuiltinFn fn;
    const char *doc;
  } fns[] = {
      {"jax.numpy.issubdtype", jnp_issubdtype, "issubdtype(arg1, arg2): whether dtype arg1 is arg2 or under it (jnp.floating, jnp.integer...)"},
      {"jax.numpy.result_type", jnp_result_type, "result_type(*args): the dtype JAX's promotion gives the arguments"},
      {"jax.numpy.promote_types", jnp_promote_types, "promote_types(a, b): the dtype two dtypes promote to"},
      {"jax.numpy.can_cast", jnp_can_cast, "can_cast(from_, to, casting='safe'): whether a cast keeps every value"},
      {"jax.numpy.dtype numpy.dtype", jnp_dtype, "dtype(x): the dtype object of a dtype, its name or a scalar type"},
      {"numpy.isscalar", np_isscalar, "isscalar(element): a Python number or str, or a numpy scalar"},
      {"numpy.issubdtype", np_issubdtype, "issubdtype(arg1, arg2): numpy's, where ml_dtypes' types are not floating"},
      {"jax.numpy.isscalar", jnp_isscalar, "isscalar(element): a Python number or a rank-0 array"},
      {"jax.numpy.iterable", jnp_iterable, "iterable(y): whether iter(y) works"},
      {"jax.numpy.broadcast_shapes jax.lax.broadcast_shapes", jnp_broadcast_shapes, "broadcast_shapes(*shapes): the shape the shapes broadcast to"},
      {"jax.numpy.broadcast_arrays", jnp_broadcast_arrays, "broadcast_arrays(*args): the arrays broadcast to one shape"},
      {"jax.numpy.copy jax.Array.method.copy", jnp_copy, "copy(a, order=None): a copy of an array"},
      {"jax.numpy.logspace", jnp_logspace, "logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0): base ** linspace(start, stop)"},
      {"jax.numpy.geomspace", jnp_geomspace, "geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0): geometrically spaced numbers"},
      {"jax.numpy.indices", jnp_indices, "indices(dimensions, dtype=None, sparse=False): the index grids of a shape"},
      {"jax.numpy.ix_", jnp_ix, "ix_(*args): open meshes from 1-d index sequences"},
      {"jax.numpy.diag_indices", jnp_diag_indices, "diag_indices(n, ndim=2): the indices of an array's main diagonal"},
      {"jax.numpy.diag_indices_from", jnp_diag_indices_from, "diag_indices_from(arr): diag_indices for arr's shape"},
      {"jax.numpy.unravel_index", jnp_unravel_index, "unravel_index(indices, shape): flat indices as tuples of indices"},
      {"jax.numpy.nonzero jax.Array.method.nonzero", jnp_nonzero, "nonzero(a, *, size=None, fill_value=None): the indices of the nonzero elements"},
      {"jax.numpy.flatnonzero", jnp_flatnonzero, "flatnonzero(a, *, size=None, fill_value=None): the flat indices of the nonzero elements"},
      {"jax.numpy.argwhere", jnp_argwhere, "argwhere(a, *, size=None, fill_value=None): the indices of the nonzero elements, one row each"},
      {"jax.numpy.triu_indices", jnp_triu_indices, "triu_indices(n, k=0, m=None): the indices of the upper triangle"},
      {"jax.numpy.tril_indices", jnp_tril_indices, "tril_indices(n, k=0, m=None): the indices of the lower triangle"},
      {"jax.numpy.triu_indices_from", jnp_triu_indices_from, "triu_indices_from(arr, k=0): triu_indices for arr's shape"},
      {"jax.numpy.tril_indices_from", jnp_tril_indices_from, "tril_indices_from(arr, k=0): tril_indices for arr's shape"},
  };
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) sr_def(fns[i].name, fns[i].fn, fns[i].doc);
  static SrVal *types[NABSTRACT];
  for (int i = 0; i < NABSTRACT; i++) {
    char q[64];
    types[i] = sr_obj(&abstract_class, (void *)&abstracts[i]);
    if (abstracts[i].module) {
      snprintf(q, sizeof q, "%s.%s", abstracts[i].module, abstracts[i].name);
      sr_register(q, types[i]);
      continue;
    }
    snprintf(q, sizeof q, "jax.numpy.%s", abstracts[i].name);
    sr_register(q, types[i]);
    snprintf(q, sizeof q, "numpy.%s", abstracts[i].name);
    sr_register(q, sr_ref(types[i]));
  }
  sr_register("jax.numpy.s_", sr_obj(&index_exp_class, (void *)&s_data));
  sr_register("jax.numpy.index_exp", sr_obj(&index_exp_class, (void *)&index_exp_data));
}

/* jax.dtypes.canonicalize_dtype(dtype, allow_extended_dtype=False):
   np.dtype(dtype) (a name, Python's bool, int, float, complex as 64-bit
   numpy types), then without x64 its 32-bit counterpart; no warning */
static SrVal *dtypes_canonicalize_dtype(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "canonicalize_dtype", "dtype, allow_extended_dtype=", p) < 0) return NULL;
  int d = -1;
  SrVal *v = p[0];
  if (v->kind == SR_V_DTYPE) d = (int)v->dtype;
  else if (v->kind == SR_V_STR) d = sr_dtype_lookup(v->str.s, v->str.n);
  const char *nm = sr_is_obj(v, &sr_builtin_class) ? sr_builtin_name(v) : NULL;
  if (nm && strcmp(nm, "builtins.float") == 0) d = SR_F64;
  if (nm && strcmp(nm, "builtins.int") == 0) d = SR_I64;
  if (nm && strcmp(nm, "builtins.bool") == 0) d = SR_BOOL;
  if (nm && strcmp(nm, "builtins.complex") == 0) d = SR_C128;
  if (d < 0 || (d >= SR_NBUILTIN_DTYPES && !(p[1] && sr_val_truthy(p[1])))) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, v);
    /* _canonicalize_dtype: np.dtype's TypeError, in JAX's words */
    sr_raise(I, "TypeError", "dtype %s not understood", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  if (!I->jax->enable_x64)
    d = d == SR_F64 ? SR_F32 : d == SR_I64 ? SR_I32 : d == SR_U64 ? SR_U32 : d == SR_C128 ? SR_C64 : d;
  return sr_dtype_val(NULL, (SrDtype)d);
}

/* ---- jax._src.dtypes, as JAX's tests import it ---- */

/* dtypes.lattice_result_type(*args): the promoted dtype and weak flag,
   as a tuple (not canonicalized to the kind's default) */
static SrVal *dtypes_lattice_result_type(SrInterp *I, SrArgs *a) {
  if (a->n == 0) return sr_raise(I, "ValueError", "not enough values to unpack (expected 2, got 0)");
  SrDtype *dts = sr_xcalloc((size_t)a->n, sizeof *dts);
  int *weaks = sr_xcalloc((size_t)a->n, sizeof *weaks);
  SrVal *r = NULL;
  SrDtype d;
  int weak;
  for (int i = 0; i < a->n; i++)
    if (dtype_and_weak(I, a->v[i], &dts[i], &weaks[i], "dtype") < 0) goto done;
  if (sr_jnp_lattice_result(I, a->n, dts, weaks, &d, &weak) < 0) goto done;
  r = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, r, sr_dtype_val(NULL, d));
  sr_seq_push(NULL, r, sr_bool(weak));
done:
  free(dts);
  free(weaks);
  return r;
}

/* dtypes.dtype(x): the dtype JAX gives x (Python's types and values
   canonical, an array's own, a dtype's name per jax_explicit_x64_dtypes) */
static SrVal *dtypes_dtype(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "dtype", "x", p) < 0) return NULL;
  SrDtype d;
  int weak;
  if (dtype_and_weak(I, p[0], &d, &weak, "dtype") < 0) return NULL;
  return sr_dtype_val(NULL, d);
}

/* dtypes.is_weakly_typed(x): Python's int, float and complex values, and
   weak arrays */
static SrVal *dtypes_is_weakly_typed(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "is_weakly_typed", "x", p) < 0) return NULL;
  SrVal *x = p[0];
  if (x->kind == SR_V_INT || x->kind == SR_V_FLOAT || x->kind == SR_V_COMPLEX) return sr_bool(1);
  if (!sr_array_of(x)) return sr_bool(0);
  const SrType *t = vtype(I, x);
  return t ? sr_bool(t->weak) : NULL;
}

static SrVal *dtypes_default_float_dtype(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "default_float_dtype", "", NULL) < 0) return NULL;
  return sr_dtype_val(NULL, default_float(I));
}

/* dtypes.itemsize_bits(dtype): bits per element (bool 8, sub-byte types
   their width, complex twice its part's) */
static SrVal *dtypes_itemsize_bits(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "itemsize_bits", "dtype", p) < 0) return NULL;
  if (p[0]->kind == SR_V_NONE) return sr_raise(I, "ValueError", "dtype cannot be None.");
  int d;
  if (raw_dtype(I, p[0], &d, "itemsize_bits") < 0) return NULL;
  return sr_int(NULL, sr_dtype_info((SrDtype)d)->bits);
}

/* dtypes.safe_to_cast(input_dtype_or_value, output_dtype_or_value):
   whether result_type of the input and the output's dtype (strong) is
   the output's dtype */
static SrVal *dtypes_safe_to_cast(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "safe_to_cast", "input_dtype_or_value, output_dtype_or_value", p) < 0) return NULL;
  SrDtype din, dout, d;
  int win, wout, weak;
  if (dtype_and_weak(I, p[0], &din, &win, "dtype") < 0 || dtype_and_weak(I, p[1], &dout, &wout, "dtype") < 0)
    return NULL;
  if (din == dout) return sr_bool(1);
  SrDtype dts[2] = {din, dout};
  int weaks[2] = {win, 0};
  if (sr_jnp_lattice_result(I, 2, dts, weaks, &d, &weak) < 0) return NULL;
  if (weak) {
    int k = sr_dtype_kind(d);
    d = k == SR_DK_INT ? default_int(I) : k == SR_DK_UINT ? (I->jax->enable_x64 ? SR_U64 : SR_U32)
      : k == SR_DK_FLOAT ? default_float(I) : k == SR_DK_COMPLEX ? (I->jax->enable_x64 ? SR_C128 : SR_C64) : d;
  }
  return sr_bool(d == dout);
}

/* dtypes._dtype_and_weaktype(value): (dtypes.dtype(value), whether it is
   weak: Python's int, float and complex types and values, weak arrays) */
static SrVal *dtypes_dtype_and_weaktype(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "_dtype_and_weaktype", "value", p) < 0) return NULL;
  SrDtype d;
  int weak;
  if (dtype_and_weak(I, p[0], &d, &weak, "dtype") < 0) return NULL;
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, t, sr_dtype_val(NULL, d));
  sr_seq_push(NULL, t, sr_bool(weak));
  return t;
}

/* dtypes._jax_type(dtype, weak_type): the lattice node: a weak dtype's
   is Python's type of its kind (bool stays the bool dtype; the narrow
   floats are float) */
static SrVal *dtypes_jax_type(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "_jax_type", "dtype, weak_type", p) < 0) return NULL;
  int d;
  if (raw_dtype(I, p[0], &d, "_jax_type") < 0) return NULL;
  if (!sr_val_truthy(p[1]) || d == SR_BOOL) return sr_dtype_val(NULL, (SrDtype)d);
  int k = sr_dtype_kind((SrDtype)d);
  const char *t = k == SR_DK_INT || k == SR_DK_UINT ? "builtins.int" : k == SR_DK_FLOAT ? "builtins.float"
                : k == SR_DK_COMPLEX ? "builtins.complex" : NULL;
  return t ? sr_ref(sr_lookup_qualname(t)) : sr_dtype_val(NULL, (SrDtype)d);
}

/* dtypes.check_and_canonicalize_user_dtype(dtype, fun_name=None): a
   dtype asked for by the user, canonical (Python's types their default
   dtypes; a 64-bit one per jax_explicit_x64_dtypes); an array is an
   error */
static SrVal *dtypes_check_user_dtype(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "check_and_canonicalize_user_dtype", "dtype, fun_name=, *, allow_non_jax_dtypes=", p) < 0)
    return NULL;
  if (p[0]->kind == SR_V_NONE) return sr_raise(I, "ValueError", "dtype must be specified.");
  if (sr_array_of(p[0]))
    return sr_raise(I, "ValueError",
                    "Passing an array as a dtype argument is no longer supported; instead of dtype=arr use "
                    "dtype=arr.dtype.");
  const char *fn = p[1] && p[1]->kind == SR_V_STR ? p[1]->str.s : "";
  int d;
  if (sr_dtype_arg_fn(I, p[0], &d, "check_and_canonicalize_user_dtype", fn) < 0) return NULL;
  if (d < 0) return sr_raise(I, "TypeError", "data type None not understood");
  return sr_dtype_val(NULL, (SrDtype)d);
}

/* jax._src.dtypes: jax.dtypes' names and the internals JAX's
   tests/dtypes_test.py reads */
static void jax_src_dtypes_init(void) {
  static const char *const from_dtypes[] = {"canonicalize_dtype", "bfloat16", "finfo", "iinfo", "issubdtype",
                                            "result_type", "extended", "prng_key", "float0", "TypePromotionError"};
  char q[96];
  for (size_t i = 0; i < sizeof from_dtypes / sizeof *from_dtypes; i++) {
    snprintf(q, sizeof q, "jax.dtypes.%s", from_dtypes[i]);
    SrVal *v = sr_lookup_qualname(q);
    snprintf(q, sizeof q, "jax._src.dtypes.%s", from_dtypes[i]);
    if (v && !sr_lookup_qualname(q)) sr_register(q, sr_ref(v));
  }
  static const char *const from_jnp[] = {
    "promote_types", "isdtype", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn",
    "float6_e3m2fn", "int2", "uint2", "int4",
    "uint4"};
  for (size_t i = 0; i < sizeof from_jnp / sizeof *from_jnp; i++) {
    snprintf(q, sizeof q, "jax.numpy.%s", from_jnp[i]);
    SrVal *v = sr_lookup_qualname(q);
    snprintf(q, sizeof q, "jax._src.dtypes.%s", from_jnp[i]);
    if (v) sr_register(q, sr_ref(v));
  }
  /* the default scalar types: numpy's bool_, int64, uint64, float64,
     complex128 */
  static const char *const defaults[][2] = {
    {"bool_", "bool_"}, {"int_", "int64"}, {"uint", "uint64"}, {"float_", "float64"}, {"complex_", "complex128"}};
  for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++) {
    snprintf(q, sizeof q, "numpy.%s", defaults[i][1]);
    SrVal *v = sr_lookup_qualname(q);
    snprintf(q, sizeof q, "jax._src.dtypes.%s", defaults[i][0]);
    if (v) sr_register(q, sr_ref(v));
  }
  sr_def("jax._src.dtypes.lattice_result_type", dtypes_lattice_result_type,
         "lattice_result_type(*args): the (dtype, weak_type) JAX's type promotion lattice gives args");
  sr_def("jax._src.dtypes.dtype", dtypes_dtype, "dtype(x): the dtype JAX gives x (Python's types canonical)");
  sr_def("jax._src.dtypes.is_weakly_typed", dtypes_is_weakly_typed,
         "is_weakly_typed(x): whether x is a Python scalar or a weakly typed array");
  sr_def("jax._src.dtypes.default_float_dtype", dtypes_default_float_dtype,
         "default_float_dtype(): float64 with jax_enable_x64, else float32");
  sr_def("jax._src.dtypes.check_and_canonicalize_user_dtype", dtypes_check_user_dtype,
         "check_and_canonicalize_user_dtype(dtype, fun_name=None): a user's dtype as JAX holds it");
  sr_def_private("jax._src.dtypes._dtype_and_weaktype",
                 sr_builtin_with("jax._src.dtypes._dtype_and_weaktype", dtypes_dtype_and_weaktype, NULL, NULL));
  sr_def_private("jax._src.dtypes._jax_type", sr_builtin_with("jax._src.dtypes._jax_type", dtypes_jax_type, NULL, NULL));
  sr_def("jax._src.dtypes.itemsize_bits", dtypes_itemsize_bits, "itemsize_bits(dtype): the bits of one element");
  sr_def("jax._src.dtypes.safe_to_cast", dtypes_safe_to_cast,
         "safe_to_cast(input_dtype_or_value, output_dtype_or_value): whether promotion leaves the output dtype");
  /* the lattice's nodes (dtypes._jax_types, _weak_types) */
  SrVal *jt = sr_seq(NULL, SR_V_LIST, 0);
  static const SrDtype order[] = {SR_BOOL, SR_U2, SR_U4, SR_U8, SR_U16, SR_U32, SR_U64, SR_I2, SR_I4, SR_I8, SR_I16,
                                  SR_I32, SR_I64, SR_F4_E2M1FN, SR_F6_E2M3FN, SR_F6_E3M2FN, SR_F8_E3M4, SR_F8_E4M3, SR_F8_E8M0FNU,
                                  SR_F8_E4M3B11FNUZ, SR_F8_E4M3FN, SR_F8_E4M3FNUZ, SR_F8_E5M2, SR_F8_E5M2FNUZ,
                                  SR_BF16, SR_F16, SR_F32, SR_F64, SR_C64, SR_C128};
  for (size_t i = 0; i < sizeof order / sizeof *order; i++) sr_seq_push(NULL, jt, sr_dtype_val(NULL, order[i]));
  sr_def_private("jax._src.dtypes._jax_types", jt);
  SrVal *wt = sr_seq(NULL, SR_V_LIST, 0);
  static const char *const weak_names[] = {"builtins.int", "builtins.float", "builtins.complex"};
  for (int i = 0; i < 3; i++) sr_seq_push(NULL, wt, sr_ref(sr_lookup_qualname(weak_names[i])));
  sr_def_private("jax._src.dtypes._weak_types", wt);
}

/* jax.dtypes: the names jax/dtypes.py exports that jax.numpy has too
   (registered after jax.numpy; extended and prng_key are above) */
void sr_jax_dtypes_init(void) {
  sr_def("jax.dtypes.canonicalize_dtype", dtypes_canonicalize_dtype,
         "canonicalize_dtype(dtype): np.dtype(dtype) as JAX holds it (32-bit without x64)");
  static const char *const dtypes_names[] = {"bfloat16", "finfo", "iinfo", "issubdtype", "result_type"};
  for (size_t i = 0; i < sizeof dtypes_names / sizeof *dtypes_names; i++) {
    char q[64];
    snprintf(q, sizeof q, "jax.numpy.%s", dtypes_names[i]);
    SrVal *v = sr_lookup_qualname(q);
    snprintf(q, sizeof q, "jax.dtypes.%s", dtypes_names[i]);
    if (v) sr_register(q, sr_ref(v));
  }
  /* jax.dtypes.float0 (also jax.float0): np.dtype([('float0', np.void, 0)]),
     the tangent dtype of integer and boolean values */
  sr_register("jax.dtypes.float0", sr_dtype_val(NULL, SR_FLOAT0));
  sr_register("jax.float0", sr_dtype_val(NULL, SR_FLOAT0));
  jax_src_dtypes_init();
}
