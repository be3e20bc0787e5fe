/* np_host_funcs.c: numpy's functions on host arrays (np_host.h).
 *
 * Each numpy.F runs jax.numpy.F on the eager kernels: its array arguments
 * (ndarrays, nested lists) go in as jax.Arrays of their own dtypes, with
 * 64-bit types on, after numpy's promotion of their dtypes (numpy's
 * result_type: int32 with float32 is float64, int8 with uint8 is int16;
 * Python scalars defer to arrays as NEP 50 has it, which is JAX's weak
 * typing); the result comes back as an ndarray, a 0-d result of a ufunc
 * or a reduction as a numpy scalar.  Then numpy's own: array, asarray,
 * astype, the comparisons that return Python bools, np.testing, and
 * save/load of ndarrays. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/prng.h"
#include "core/jaxstate.h"
#include "exec/kern.h"
#include "exec/numfmt.h"
#include "jax/builtins_exec.h"
#include "jax/np_host.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"

enum {
  NP_SCALAR = 1,   /* a 0-d result is a numpy scalar (ufuncs, reductions) */
  NP_PROMOTE = 2,  /* the array arguments promote to numpy's result_type */
  NP_INEXACT = 4,  /* an integer argument computes in numpy's float for it */
  NP_PYBOOL = 8,   /* the result is a Python bool */
  NP_SEQ = 16,     /* the first argument is a sequence of arrays */
  NP_FROM1 = 32,   /* promotion leaves the first argument alone (where) */
  NP_META = 64,    /* reads only the type (shape, ndim): a jax.Array or
                      tracer is not converted (np.shape(tracer) works) */
};

typedef struct NpFn {
  const char *name;  /* numpy.NAME (space-separated aliases after it) */
  const char *jnp;   /* jax.numpy's function; NULL: the same name */
  int narr;          /* leading positional arguments that are arrays; -1 all */
  unsigned flags;
} NpFn;

/* ---- numpy's promotion ---- */

static int kind_of(SrDtype d) {
  switch (sr_dtype_kind(d)) {
  case SR_DK_BOOL: return 0;
  case SR_DK_INT: return 1;
  case SR_DK_UINT: return 2;
  case SR_DK_FLOAT: return 3;
  case SR_DK_COMPLEX: return 4;
  default: return -1;
  }
}

static int bits_of(SrDtype d) { return sr_dtype_info(d)->bits; }

static SrDtype int_of_bits(int bits, int is_unsigned) {
  switch (bits) {
  case 8: return is_unsigned ? SR_U8 : SR_I8;
  case 16: return is_unsigned ? SR_U16 : SR_I16;
  case 32: return is_unsigned ? SR_U32 : SR_I32;
  default: return is_unsigned ? SR_U64 : SR_I64;
  }
}

/* the float that holds every value of an integer type exactly enough
   (numpy's can_cast(int, float, 'safe')) */
static SrDtype float_for_int(SrDtype d) {
  int b = bits_of(d);
  return kind_of(d) == 0 || b <= 8 ? SR_F16 : b <= 16 ? SR_F32 : SR_F64;
}

static SrDtype float_max(SrDtype a, SrDtype b) { return bits_of(a) >= bits_of(b) ? a : b; }

static SrDtype complex_for_float(SrDtype f) { return bits_of(f) <= 32 ? SR_C64 : SR_C128; }

/* np.result_type of two array dtypes (NULL-free: -1 when numpy has no
   answer here, e.g. bfloat16, and JAX's promotion is kept) */
static int np_promote2(SrDtype a, SrDtype b) {
  if (a == b) return a;
  int ka = kind_of(a), kb = kind_of(b);
  if (ka < 0 || kb < 0 || a == SR_BF16 || b == SR_BF16) return -1;
  if (ka > kb || (ka == kb && bits_of(a) < bits_of(b))) {
    SrDtype t = a;
    a = b, b = t;
    int k = ka;
    ka = kb, kb = k;
  }
  /* now kb >= ka */
  if (ka == 0) return b;
  if (ka == kb && ka != 1 && ka != 2) return bits_of(a) >= bits_of(b) ? a : b;
  if ((ka == 1 || ka == 2) && (kb == 1 || kb == 2)) {
    if (ka == kb) return bits_of(a) >= bits_of(b) ? a : b;
    SrDtype s = ka == 1 ? a : b, u = ka == 1 ? b : a;
    if (bits_of(u) < bits_of(s)) return s;
    if (bits_of(u) >= 64) return SR_F64;
    return int_of_bits(2 * bits_of(u), 0);
  }
  if (kb == 3) return float_max(float_for_int(a), b);                 /* int with float */
  if (ka == 3) return complex_for_float(float_max(a, bits_of(b) > 64 ? SR_F64 : SR_F32)) == SR_C128 ||
                      b == SR_C128 ? SR_C128 : SR_C64;                  /* float with complex */
  return complex_for_float(float_for_int(a)) == SR_C128 || b == SR_C128 ? SR_C128 : SR_C64;
}

/* ---- arguments ---- */

static SrVal *arg_to_jax(SrInterp *I, SrVal *v) {
  if (sr_is_ndarray(v)) return sr_ndarray_to_jax(I, v, 1);
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE || sr_as_range(v)) {
    SrVal *nd = sr_np_asarray(I, v, -1);
    if (!nd) return NULL;
    SrVal *r = sr_ndarray_to_jax(I, nd, 1);
    sr_unref(nd);
    return r;
  }
  SrArrayObj *o = sr_array_of(v);
  if (o && o->kind == SR_AV_TRACER) {
    /* numpy would call __array__ on the tracer */
    SrVal *r = sr_ndarray_from_jax(I, v, 0);
    sr_unref(r);
    return NULL;
  }
  if (o && o->kind == SR_AV_CONCRETE && o->data->mesh && o->data->mesh->n) {
    /* numpy takes a placed jax.Array through __array__: its value on the
       host, whatever its sharding */
    SrVal *nd = sr_ndarray_from_jax(I, v, 0);
    if (!nd) return NULL;
    SrVal *r = sr_is_ndarray(nd) ? sr_ndarray_to_jax(I, nd, 1) : sr_ref(nd);
    sr_unref(nd);
    return r;
  }
  return sr_ref(v);
}

static const SrType *strong_type(SrInterp *I, SrVal *v) {
  const SrType *t = sr_array_of(v) ? sr_array_of(v)->type : NULL;
  (void)I;
  return t && !t->weak ? t : NULL;
}

/* numpy's result_type over the strong arrays of vals, each converted to it */
static int promote(SrInterp *I, SrVal **vals, int n) {
  int dt = -1, count = 0;
  for (int i = 0; i < n; i++) {
    const SrType *t = strong_type(I, vals[i]);
    if (!t) continue;
    if (count++ == 0) dt = t->dtype;
    else if (dt >= 0) dt = np_promote2((SrDtype)dt, t->dtype);
  }
  if (count < 2 || dt < 0) return 0;
  for (int i = 0; i < n; i++) {
    const SrType *t = strong_type(I, vals[i]);
    if (!t || t->dtype == dt) continue;
    SrVal *c = sr_jnp_convert(I, vals[i], (SrDtype)dt, 0);
    if (!c) return -1;
    sr_unref(vals[i]);
    vals[i] = c;
  }
  return 0;
}

/* numpy's loops for a float function of an integer: float16 for 8 bits */
static int inexact(SrInterp *I, SrVal **vals, int n) {
  for (int i = 0; i < n; i++) {
    const SrType *t = strong_type(I, vals[i]);
    if (!t || kind_of(t->dtype) < 0 || kind_of(t->dtype) > 2) continue;
    SrVal *c = sr_jnp_convert(I, vals[i], float_for_int(t->dtype), 0);
    if (!c) return -1;
    sr_unref(vals[i]);
    vals[i] = c;
  }
  return 0;
}

/* ---- results ---- */

static SrVal *wrap_result(SrInterp *I, SrVal *r, unsigned flags) {
  if (r->kind == SR_V_LIST || r->kind == SR_V_TUPLE) {
    SrVal *l = sr_seq(NULL, (SrValKind)r->kind, r->seq.n);
    for (int i = 0; i < r->seq.n; i++) {
      SrVal *x = wrap_result(I, r->seq.items[i], flags);
      if (!x) {
        sr_unref(l);
        return NULL;
      }
      sr_seq_push(NULL, l, x);
    }
    return l;
  }
  if (!sr_array_of(r)) return sr_ref(r);
  SrVal *nd = sr_ndarray_from_jax(I, r, flags & NP_SCALAR);
  if (nd && (flags & NP_PYBOOL) && sr_is_ndarray(nd)) {
    SrArray *a = sr_ndarray_array(nd);
    int b = sr_type_numel(a->type) == 1 && *(const uint8_t *)a->shard[0]->data;
    sr_unref(nd);
    return sr_bool(b);
  }
  return nd;
}

/* ---- the lifted functions ---- */

static SrVal *np_lift(SrInterp *I, SrArgs *a) {
  const NpFn *f = sr_current_builtin(I)->data;
  char q[96];
  snprintf(q, sizeof q, "jax.numpy.%s", f->jnp);
  SrVal *fn = sr_lookup_qualname(q);
  if (!fn) return sr_raise(I, "AttributeError", "module 'numpy' has no attribute '%s'", f->name);
  if ((f->flags & NP_META) && a->n >= 1 && sr_array_of(a->v[0])) return sr_call(I, fn, a);
  SrNpEval e;
  sr_np_eval_begin(I, &e);
  SrVal *argv[64], *kwv[32], *seq = NULL, *r = NULL;
  int n = a->n < 64 ? a->n : 64, nkw = a->nkw < 32 ? a->nkw : 32, ok = 1;
  for (int i = 0; i < n; i++) argv[i] = NULL;
  for (int i = 0; i < nkw; i++) kwv[i] = NULL;
  int narr = f->narr < 0 || f->narr > n ? n : f->narr;
  for (int i = 0; i < n && ok; i++) {
    if (i == 0 && (f->flags & NP_SEQ) && (a->v[0]->kind == SR_V_LIST || a->v[0]->kind == SR_V_TUPLE)) {
      SrVal *s = a->v[0];
      seq = sr_seq(NULL, (SrValKind)s->kind, s->seq.n);
      for (int k = 0; k < s->seq.n && ok; k++) {
        SrVal *x = arg_to_jax(I, s->seq.items[k]);
        if (!x) ok = 0;
        else sr_seq_push(NULL, seq, x);
      }
      if (ok && (f->flags & NP_PROMOTE) && promote(I, seq->seq.items, seq->seq.n) < 0) ok = 0;
      argv[0] = sr_ref(seq);
      continue;
    }
    argv[i] = i < narr || sr_is_ndarray(a->v[i]) ? arg_to_jax(I, a->v[i]) : sr_ref(a->v[i]);
    if (!argv[i]) ok = 0;
  }
  for (int i = 0; i < nkw && ok; i++) {
    kwv[i] = sr_is_ndarray(a->kwv[i]) ? sr_ndarray_to_jax(I, a->kwv[i], 1) : sr_ref(a->kwv[i]);
    if (!kwv[i]) ok = 0;
  }
  int from = f->flags & NP_FROM1 ? 1 : 0;
  if (ok && (f->flags & NP_PROMOTE) && !(f->flags & NP_SEQ) && narr > from && promote(I, argv + from, narr - from) < 0)
    ok = 0;
  if (ok && (f->flags & NP_INEXACT) && inexact(I, argv, narr) < 0) ok = 0;
  if (ok) {
    SrArgs ca = {n, argv, nkw, a->kw, kwv, NULL};
    r = sr_call(I, fn, &ca);
  }
  sr_np_eval_end(I, &e);
  for (int i = 0; i < n; i++) sr_unref(argv[i]);
  for (int i = 0; i < nkw; i++) sr_unref(kwv[i]);
  sr_unref(seq);
  if (!r) return NULL;
  SrVal *w = wrap_result(I, r, f->flags);
  sr_unref(r);
  /* shape functions keep an array of devices one (reshape, transpose) */
  int devices = 0;
  for (int i = 0; i < a->n; i++) devices |= sr_np_is_devices(a->v[i]);
  if (devices && w && !(f->flags & NP_SCALAR) && sr_is_ndarray(w)) w = sr_np_mark_devices(I, w);
  return w;
}

#define S NP_SCALAR
#define P NP_PROMOTE
#define F NP_INEXACT
static const NpFn lifted[] = {
  /* building arrays */
  {"arange", NULL, 0, 0}, {"linspace", NULL, 0, 0}, {"zeros", NULL, 0, 0}, {"ones", NULL, 0, 0},
  {"full", NULL, 0, 0}, {"empty", NULL, 0, 0}, {"eye", NULL, 0, 0}, {"identity", NULL, 0, 0},
  {"tri", NULL, 0, 0}, {"zeros_like", NULL, 1, 0}, {"ones_like", NULL, 1, 0}, {"full_like", NULL, 1, 0},
  {"empty_like", NULL, 1, 0}, {"meshgrid", NULL, -1, 0}, {"diag_indices", NULL, 0, 0},
  /* shapes */
  {"reshape", NULL, 1, 0}, {"ravel", NULL, 1, 0}, {"transpose", NULL, 1, 0}, {"squeeze", NULL, 1, 0},
  {"expand_dims", NULL, 1, 0}, {"broadcast_to", NULL, 1, 0}, {"swapaxes", NULL, 1, 0},
  {"moveaxis", NULL, 1, 0}, {"flip", NULL, 1, 0}, {"fliplr", NULL, 1, 0}, {"flipud", NULL, 1, 0},
  {"roll", NULL, 1, 0}, {"rot90", NULL, 1, 0}, {"tile", NULL, 1, 0}, {"repeat", NULL, 1, 0},
  {"pad", NULL, 1, 0}, {"atleast_1d", NULL, -1, 0}, {"atleast_2d", NULL, -1, 0}, {"atleast_3d", NULL, -1, 0},
  {"stack", NULL, 1, P | NP_SEQ}, {"concatenate concat", "concatenate", 1, P | NP_SEQ}, {"vstack", NULL, 1, P | NP_SEQ},
  {"hstack", NULL, 1, P | NP_SEQ}, {"dstack", NULL, 1, P | NP_SEQ}, {"column_stack", NULL, 1, P | NP_SEQ},
  {"split", NULL, 1, 0}, {"array_split", NULL, 1, 0}, {"hsplit", NULL, 1, 0}, {"vsplit", NULL, 1, 0},
  {"dsplit", NULL, 1, 0}, {"diag", NULL, 1, 0}, {"diagonal", NULL, 1, 0}, {"tril", NULL, 1, 0},
  {"triu", NULL, 1, 0}, {"sort", NULL, 1, 0}, {"argsort", NULL, 1, 0}, {"take", NULL, 2, 0},
  {"take_along_axis", NULL, 2, 0}, {"nan_to_num", NULL, 1, 0}, {"unique", NULL, 1, 0}, {"diff", NULL, 1, 0},
  {"cumsum", NULL, 1, 0}, {"cumprod", NULL, 1, 0}, {"shape", NULL, 1, NP_META}, {"ndim", NULL, 1, NP_META},
  {"size", NULL, 1, NP_META},
  /* arithmetic and comparisons (the operators' functions) */
  {"add", NULL, 2, S | P}, {"subtract", NULL, 2, S | P}, {"multiply", NULL, 2, S | P},
  {"true_divide divide", "true_divide", 2, S | P}, {"floor_divide", NULL, 2, S | P},
  {"remainder mod", "remainder", 2, S | P}, {"power", NULL, 2, S | P}, {"maximum", NULL, 2, S | P},
  {"minimum", NULL, 2, S | P}, {"equal", NULL, 2, S | P}, {"not_equal", NULL, 2, S | P},
  {"less", NULL, 2, S | P}, {"less_equal", NULL, 2, S | P}, {"greater", NULL, 2, S | P},
  {"greater_equal", NULL, 2, S | P}, {"logical_and", NULL, 2, S | P}, {"logical_or", NULL, 2, S | P},
  {"logical_xor", NULL, 2, S | P}, {"bitwise_and", NULL, 2, S | P}, {"bitwise_or", NULL, 2, S | P},
  {"bitwise_xor", NULL, 2, S | P}, {"left_shift", NULL, 2, S | P}, {"right_shift", NULL, 2, S | P},
  {"logaddexp", NULL, 2, S | P | F}, {"matmul", NULL, 2, S | P}, {"dot", NULL, 2, S | P},
  {"inner", NULL, 2, S | P}, {"outer", NULL, 2, S | P},
  /* elementwise functions of one array */
  {"exp", NULL, 1, S | F}, {"log", NULL, 1, S | F}, {"sin", NULL, 1, S | F}, {"cos", NULL, 1, S | F},
  {"tan", NULL, 1, S | F}, {"tanh", NULL, 1, S | F}, {"sqrt", NULL, 1, S | F}, {"log1p", NULL, 1, S | F},
  {"expm1", NULL, 1, S | F}, {"exp2", NULL, 1, S | F}, {"abs absolute", "abs", 1, S},
  {"negative", NULL, 1, S}, {"positive", NULL, 1, S}, {"sign", NULL, 1, S}, {"floor", NULL, 1, S | F},
  {"ceil", NULL, 1, S | F}, {"square", NULL, 1, S}, {"reciprocal", NULL, 1, S}, {"isnan", NULL, 1, S},
  {"isfinite", NULL, 1, S}, {"logical_not", NULL, 1, S}, {"invert", NULL, 1, S}, {"real", NULL, 1, S},
  {"imag", NULL, 1, S}, {"conj conjugate", "conj", 1, S}, {"angle", NULL, 1, S | F},
  {"round around", "round", 1, S}, {"clip", NULL, 3, S},
  {"where", NULL, 3, S | P | NP_FROM1},
  /* reductions */
  {"sum", NULL, 1, S}, {"prod", NULL, 1, S}, {"mean", NULL, 1, S}, {"max amax", "max", 1, S},
  {"min amin", "min", 1, S}, {"argmax", NULL, 1, S}, {"argmin", NULL, 1, S}, {"std", NULL, 1, S},
  {"var", NULL, 1, S}, {"median", NULL, 1, S}, {"average", NULL, 2, S}, {"any", NULL, 1, S},
  {"all", NULL, 1, S}, {"nansum", NULL, 1, S}, {"nanmean", NULL, 1, S}, {"nanmax", NULL, 1, S},
  {"nanmin", NULL, 1, S}, {"nanprod", NULL, 1, S}, {"percentile", NULL, 1, S}, {"quantile", NULL, 1, S},
  {"trace", NULL, 1, S}, {"einsum", NULL, -1, S},
  /* numpy.linalg and numpy.fft, in float64 and complex128 */
  {"linalg.inv", NULL, 1, F}, {"linalg.det", NULL, 1, S | F}, {"linalg.solve", NULL, 2, P | F},
  {"linalg.norm", NULL, 1, S | F}, {"linalg.eig", NULL, 1, F}, {"linalg.eigvals", NULL, 1, F},
  {"linalg.eigh", NULL, 1, F}, {"linalg.eigvalsh", NULL, 1, F}, {"linalg.svd", NULL, 1, F},
  {"linalg.qr", NULL, 1, F}, {"linalg.cholesky", NULL, 1, F}, {"linalg.pinv", NULL, 1, F},
  {"linalg.matrix_rank", NULL, 1, S | F}, {"linalg.slogdet", NULL, 1, F}, {"linalg.lstsq", NULL, 2, P | F},
  {"linalg.matrix_power", NULL, 1, 0}, {"fft.fft", NULL, 1, F}, {"fft.ifft", NULL, 1, F},
  {"fft.rfft", NULL, 1, F}, {"fft.irfft", NULL, 1, F}, {"fft.fft2", NULL, 1, F}, {"fft.ifft2", NULL, 1, F},
  {"fft.rfft2", NULL, 1, F}, {"fft.irfft2", NULL, 1, F}, {"fft.fftn", NULL, 1, F}, {"fft.ifftn", NULL, 1, F},
  {"fft.rfftn", NULL, 1, F}, {"fft.irfftn", NULL, 1, F}, {"fft.hfft", NULL, 1, F}, {"fft.ihfft", NULL, 1, F},
  {"fft.fftfreq", NULL, 0, 0}, {"fft.rfftfreq", NULL, 0, 0}, {"fft.fftshift", NULL, 1, 0},
  {"fft.ifftshift", NULL, 1, 0},
  /* checking results */
  {"isclose", NULL, 2, S | P}, {"allclose", NULL, 2, P | NP_PYBOOL},
  {NULL, NULL, 0, 0},
};
#undef S
#undef P
#undef F

/* ---- numpy's own ---- */

static int dtype_x64(SrInterp *I, SrVal *v, int *dt, const char *what) {
  int saved = I->jax->enable_x64;
  I->jax->enable_x64 = 1;
  int rc = sr_dtype_arg(I, v, dt, what);
  I->jax->enable_x64 = saved;
  return rc;
}

/* np.result_type(*arrays_and_dtypes): numpy's promotion of the arrays'
   and dtypes' types (Python scalars as the dtypes numpy gives them) */
static SrVal *np_result_type(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "result_type() takes no keyword arguments");
  if (a->n == 0) return sr_raise(I, "ValueError", "at least one array or dtype is required");
  int dt = -1;
  for (int i = 0; i < a->n; i++) {
    SrVal *v = a->v[i];
    int d = -1;
    if (sr_is_ndarray(v)) d = (int)sr_ndarray_array(v)->type->dtype;
    else if (sr_array_of(v)) d = (int)sr_array_of(v)->type->dtype;
    else if (dtype_x64(I, v, &d, "result_type") < 0) return NULL;
    int r = i == 0 ? d : np_promote2((SrDtype)dt, (SrDtype)d);
    if (r < 0)
      return sr_raise(I, "TypeError", "The DType <class 'numpy.dtypes.%sDType'> could not be promoted", sr_dtype_name((SrDtype)d));
    dt = r;
  }
  return sr_dtype_val(NULL, (SrDtype)dt);
}

/* ---- numpy's polymul and polydiv (numpy/lib/_polynomial_impl.py) ---- */

/* jax.numpy function q on n values, with keyword kw=kv when kw is set;
   NULL operands pass NULL on */
static SrVal *jcall(SrInterp *I, const char *q, int n, SrVal **v, const char *kw, SrVal *kv) {
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  const char *k = kw ? sr_intern_cstr(kw) : NULL; /* keywords are interned */
  SrArgs ca = {n, v, kw ? 1 : 0, kw ? &k : NULL, kw ? &kv : NULL, NULL};
  return sr_call(I, sr_lookup_qualname(q), &ca);
}

/* poly1d(c).coeffs: c with its leading zeros trimmed, [0] when none is left */
static SrVal *poly1d_coeffs(SrInterp *I, SrVal *c) {
  SrVal *f = sr_str_cstr(NULL, "f");
  SrVal *t = jcall(I, "jax.numpy.trim_zeros", 1, &c, "trim", f);
  sr_unref(f);
  if (!t || sr_value_type(I, t)->dims[0].size) return t;
  SrVal *one = sr_int(NULL, 1), *dt = sr_dtype_val(NULL, sr_value_type(I, t)->dtype);
  SrVal *z = jcall(I, "jax.numpy.zeros", 1, &one, "dtype", dt);
  sr_unref(one);
  sr_unref(dt);
  sr_unref(t);
  return z;
}

/* the two arguments of a numpy polynomial function as 1-d jax.Arrays of
   numpy's result type (plus 0.0 when inexact) */
static int poly_args(SrInterp *I, SrArgs *a, const char *name, int inexact_, SrVal **x) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, "a1, a2", p) < 0) return -1;
  x[0] = x[1] = NULL;
  for (int i = 0; i < 2; i++) {
    SrVal *j = arg_to_jax(I, p[i]);
    x[i] = j ? jcall(I, "jax.numpy.atleast_1d", 1, &j, NULL, NULL) : NULL;
    sr_unref(j);
    if (!x[i]) goto fail;
  }
  if (promote(I, x, 2) < 0 || (inexact_ && inexact(I, x, 2) < 0)) goto fail;
  return 0;
fail:
  sr_unref(x[0]);
  sr_unref(x[1]);
  return -1;
}

/* numpy.NAME(args), a new reference */
static SrVal *npcall(SrInterp *I, const char *name, int n, SrVal **args) {
  char q[64];
  snprintf(q, sizeof q, "numpy.%s", name);
  SrVal *fn = sr_lookup_qualname(q);
  if (!fn) return sr_raise(I, "AttributeError", "module 'numpy' has no attribute '%s'", name);
  SrArgs ca = {n, args, 0, NULL, NULL, NULL};
  return sr_call(I, fn, &ca);
}

/* numpy.NAME(x) of a float32 x through float64, rounded once: a correctly
   rounded expf or logf (libm's), which scipy's float loops call */
static SrVal *via_double(SrInterp *I, const char *name, SrVal *x) {
  SrVal *cv[2] = {x, sr_dtype_val(NULL, SR_F64)};
  SrVal *d = npcall(I, "astype", 2, cv);
  sr_unref(cv[1]);
  SrVal *y = d ? npcall(I, name, 1, &d) : NULL;
  sr_unref(d);
  if (!y) return NULL;
  SrVal *bv[2] = {y, sr_dtype_val(NULL, SR_F32)};
  SrVal *r = npcall(I, "astype", 2, bv);
  sr_unref(bv[1]);
  sr_unref(y);
  return r;
}

/* scipy.special.expit(x) and logit(x): scipy's loops (_logit.h: 1 / (1 +
   exp(-x)); log(x / (1 - x))) in float or double, as numpy's operations on
   host arrays.  float16, bool and the 8- and 16-bit integers take the
   float loop, other integers the double one. */
static SrVal *sp_expit_logit(SrInterp *I, SrArgs *a, int logit) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "%s() takes exactly one argument", logit ? "logit" : "expit");
  SrVal *x = a->v[0];
  if (sr_array_of(x)) return sr_raise(I, "TypeError", "scipy.special on a jax.Array: use jax.scipy.special");
  SrArray *xa = sr_ndarray_array(x);
  SrDtype xd = xa ? xa->type->dtype : SR_F64;
  int f32 = xd == SR_F32 || xd == SR_F16 || xd == SR_BOOL || (sr_dtype_is_int(xd) && sr_elem_size(xd) <= 2);
  SrVal *xs = NULL;
  if (f32) {
    SrVal *cv[2] = {x, sr_dtype_val(NULL, SR_F32)};
    xs = npcall(I, "astype", 2, cv);
    sr_unref(cv[1]);
    if (!xs) return NULL;
    x = xs;
  }
  SrVal *one = sr_int(NULL, 1), *r = NULL;
  if (!logit) {
    SrVal *n = npcall(I, "negative", 1, &x);
    SrVal *e = n ? (f32 ? via_double(I, "exp", n) : npcall(I, "exp", 1, &n)) : NULL;
    SrVal *d[2] = {one, e};
    SrVal *den = e ? npcall(I, "add", 2, d) : NULL;
    SrVal *q[2] = {one, den};
    r = den ? npcall(I, "true_divide", 2, q) : NULL;
    sr_unref(n);
    sr_unref(e);
    sr_unref(den);
  } else {
    SrVal *d[2] = {one, x};
    SrVal *om = npcall(I, "subtract", 2, d);
    SrVal *q[2] = {x, om};
    SrVal *ratio = om ? npcall(I, "true_divide", 2, q) : NULL;
    r = ratio ? (f32 ? via_double(I, "log", ratio) : npcall(I, "log", 1, &ratio)) : NULL;
    sr_unref(om);
    sr_unref(ratio);
  }
  sr_unref(one);
  sr_unref(xs);
  return r;
}

static SrVal *sp_expit(SrInterp *I, SrArgs *a) { return sp_expit_logit(I, a, 0); }
static SrVal *sp_logit(SrInterp *I, SrArgs *a) { return sp_expit_logit(I, a, 1); }

/* scipy.special.jv(v, z): the Bessel function of the first kind of order
   v, on host arrays broadcast together.  scipy's float loop (ff->f) where
   both arguments cast safely to float32 (Python scalars defer, as NEP 50
   has it), else its double loop; each computes in double.  An integer
   order is libm's jn (scipy's AMOS result agrees to a few ulps);
   a non-integer order and complex arguments are not provided. */
static SrVal *sp_jv(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->nkw) return sr_raise(I, "TypeError", "jv() takes exactly 2 positional arguments (%d given)", a->n);
  int f32 = 1, narr = 0;
  SrVal *in[2] = {NULL, NULL}, *x[2] = {NULL, NULL}, *r = NULL;
  for (int i = 0; i < 2; i++) {
    /* a jax.Array goes in through __array__, as numpy's ufuncs take it */
    in[i] = sr_array_of(a->v[i]) ? sr_ndarray_from_jax(I, a->v[i], 0) : sr_ref(a->v[i]);
    if (!in[i]) goto out;
    SrVal *v = in[i];
    SrArray *xa = sr_ndarray_array(v);
    narr += xa != NULL;
    if (!xa) {
      if (v->kind != SR_V_INT && v->kind != SR_V_FLOAT && v->kind != SR_V_BOOL) f32 = 0;
      continue;
    }
    SrDtype d = xa->type->dtype;
    if (sr_dtype_is_complex(d)) {
      sr_raise(I, "NotImplementedError", "scipy.special.jv of a complex argument is not provided");
      goto out;
    }
    f32 &= d == SR_F32 || d == SR_F16 || d == SR_BOOL || (sr_dtype_is_int(d) && sr_elem_size(d) <= 2);
  }
  f32 &= narr > 0; /* two Python scalars: numpy's int64 and float64 */
  if (!(x[0] = sr_np_asarray(I, in[0], SR_F64)) || !(x[1] = sr_np_asarray(I, in[1], SR_F64))) goto out;
  const SrType *t[2] = {sr_ndarray_array(x[0])->type, sr_ndarray_array(x[1])->type};
  int rank = t[0]->ndim > t[1]->ndim ? t[0]->ndim : t[1]->ndim;
  int64_t shape[SR_MAX_RANK], st[2][SR_MAX_RANK];
  int64_t s0 = 1, s1 = 1;
  for (int k = rank - 1; k >= 0; k--) {
    int k0 = k - (rank - t[0]->ndim), k1 = k - (rank - t[1]->ndim);
    int64_t d0 = k0 >= 0 ? t[0]->dims[k0].size : 1, d1 = k1 >= 0 ? t[1]->dims[k1].size : 1;
    if (d0 != d1 && d0 != 1 && d1 != 1) {
      char sh[2][160];
      for (int j = 0; j < 2; j++) {
        size_t m = 0;
        m += (size_t)snprintf(sh[j] + m, sizeof sh[j] - m, "(");
        for (int q = 0; q < t[j]->ndim && m < sizeof sh[j]; q++)
          m += (size_t)snprintf(sh[j] + m, sizeof sh[j] - m, "%s%lld", q ? "," : "", (long long)t[j]->dims[q].size);
        if (m < sizeof sh[j]) snprintf(sh[j] + m, sizeof sh[j] - m, t[j]->ndim == 1 ? ",)" : ")");
      }
      sr_raise(I, "ValueError", "operands could not be broadcast together with shapes %s %s ", sh[0], sh[1]);
      goto out;
    }
    shape[k] = d0 == 1 ? d1 : d0;
    st[0][k] = d0 == 1 ? 0 : s0;
    st[1][k] = d1 == 1 ? 0 : s1;
    s0 *= d0;
    s1 *= d1;
  }
  const double *vd = sr_array_buf(sr_ndarray_array(x[0]), 0)->data, *zd = sr_array_buf(sr_ndarray_array(x[1]), 0)->data;
  void *data;
  r = sr_ndarray_new(f32 ? SR_F32 : SR_F64, rank, shape, &data);
  if (!r) {
    sr_raise(I, "MemoryError", "scipy.special.jv: result too large");
    goto out;
  }
  int64_t n = 1;
  for (int k = 0; k < rank; k++) n *= shape[k];
  for (int64_t e = 0; e < n; e++) {
    int64_t rem = e, o0 = 0, o1 = 0;
    for (int k = rank - 1; k >= 0; k--) {
      int64_t ik = rem % shape[k];
      rem /= shape[k];
      o0 += ik * st[0][k];
      o1 += ik * st[1][k];
    }
    double v = vd[o0], z = zd[o1], y;
    if (isnan(v) || isnan(z)) {
      y = NAN;
    } else if (v != floor(v) || fabs(v) > INT_MAX) {
      sr_unref(r);
      r = sr_raise(I, "NotImplementedError", "scipy.special.jv of a non-integer order is not provided");
      goto out;
    } else {
      y = jn((int)v, z);
    }
    if (f32) ((float *)data)[e] = (float)y;
    else ((double *)data)[e] = y;
  }
  if (rank == 0) {
    SrVal *sc = sr_np_as_scalar(r);
    sr_unref(r);
    r = sc;
  }
out:
  for (int i = 0; i < 2; i++) sr_unref(in[i]), sr_unref(x[i]);
  return r;
}

/* np.polymul(a1, a2): convolve(poly1d(a1), poly1d(a2)) */
static SrVal *np_polymul(SrInterp *I, SrArgs *a) {
  SrNpEval e;
  sr_np_eval_begin(I, &e);
  SrVal *x[2], *r = NULL;
  if (poly_args(I, a, "polymul", 0, x) == 0) {
    SrVal *c[2] = {poly1d_coeffs(I, x[0]), NULL};
    c[1] = c[0] ? poly1d_coeffs(I, x[1]) : NULL;
    r = jcall(I, "jax.numpy.convolve", 2, c, NULL, NULL);
    /* numpy's convolve keeps an integer type (jnp's is inexact; the
       float64 sums of integers are exact) */
    SrDtype dt = sr_value_type(I, x[0])->dtype;
    if (r && kind_of(dt) >= 0 && kind_of(dt) <= 2) {
      SrVal *ci = sr_jnp_convert(I, r, dt, 0);
      sr_unref(r);
      r = ci;
    }
    sr_unref(c[0]);
    sr_unref(c[1]);
    sr_unref(x[0]);
    sr_unref(x[1]);
  }
  sr_np_eval_end(I, &e);
  if (!r) return NULL;
  SrVal *w = wrap_result(I, r, 0);
  sr_unref(r);
  return w;
}

/* np.polydiv(u, v): the long division in float64 (jnp.polydiv's steps),
   the remainder's leading entries dropped while allclose(r[0], 0) */
static SrVal *np_polydiv(SrInterp *I, SrArgs *a) {
  SrNpEval e;
  sr_np_eval_begin(I, &e);
  SrVal *x[2], *r = NULL;
  if (poly_args(I, a, "polydiv", 1, x) == 0) {
    r = jcall(I, "jax.numpy.polydiv", 2, x, NULL, NULL);
    sr_unref(x[0]);
    sr_unref(x[1]);
  }
  if (r) {
    SrVal *rem = r->seq.items[1];
    SrArray *h = sr_concrete_of(I, rem, NULL);
    int64_t n = sr_value_type(I, rem)->dims[0].size, k = 0;
    double *d = h && h->type->dtype == SR_F64 ? sr_concrete_host_data(I, h) : NULL;
    while (d && k < n - 1 && fabs(d[k]) <= 1e-8) k++; /* allclose(r[0], 0, rtol=1e-14) */
    free(d);
    if (h) sr_array_unref(h);
    if (k) {
      SrVal *sl = sr_slice_new(sr_int(NULL, k), sr_none(), sr_none());
      SrVal *t = sr_getitem(I, rem, sl);
      sr_unref(sl);
      SrVal *items[2] = {sr_ref(r->seq.items[0]), t};
      sr_unref(r);
      r = t ? sr_tuple(NULL, 2, items) : (sr_unref(items[0]), NULL);
    }
  }
  sr_np_eval_end(I, &e);
  if (!r) return NULL;
  SrVal *w = wrap_result(I, r, 0);
  sr_unref(r);
  return w;
}

/* numpy.promote_types(type1, type2): np_promote2 of the two dtypes,
   Python's int, float and complex numpy's int64, float64, complex128 */
static SrVal *np_promote_types(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "promote_types", "type1, type2", p) < 0) return NULL;
  SrDtype d[2];
  for (int i = 0; i < 2; i++) {
    int dt = -1;
    if (p[i] == sr_lookup_qualname("builtins.int")) dt = SR_I64;
    else if (p[i] == sr_lookup_qualname("builtins.float")) dt = SR_F64;
    else if (p[i] == sr_lookup_qualname("builtins.complex")) dt = SR_C128;
    else if (dtype_x64(I, p[i], &dt, "promote_types") < 0) return NULL;
    if (dt < 0) return sr_raise(I, "TypeError", "data type None not understood");
    d[i] = (SrDtype)dt;
  }
  int r = np_promote2(d[0], d[1]);
  if (r < 0)
    return sr_raise(I, "TypeError", "The DType <class 'numpy.dtypes.%sDType'> could not be promoted by <class "
                    "'numpy.dtypes.%sDType'>.", sr_dtype_name(d[1]), sr_dtype_name(d[0]));
  return sr_dtype_val(NULL, (SrDtype)r);
}

static SrVal *np_array(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "array", "object, dtype=, *, copy=, order=, ndmin=", p) < 0) return NULL;
  int dt;
  if (dtype_x64(I, p[1], &dt, "array") < 0) return NULL;
  SrVal *r;
  if (sr_is_ndarray(p[0])) {
    /* a copy, a scalar becoming a 0-d array */
    SrArgs ca = {1, p, 0, NULL, NULL, NULL};
    SrVal *c = sr_lookup_qualname("numpy.copy") ? sr_call(I, sr_lookup_qualname("numpy.copy"), &ca) : NULL;
    r = c ? sr_np_asarray(I, c, dt) : NULL;
    sr_unref(c);
  } else {
    r = sr_np_asarray(I, p[0], dt);
  }
  if (r && p[4] && p[4]->kind == SR_V_INT) {
    SrArray *x = sr_ndarray_array(r);
    int nd = x->type->ndim, want = (int)p[4]->i;
    if (want > nd && want <= SR_MAX_RANK) {
      int64_t shape[SR_MAX_RANK];
      for (int i = 0; i < want; i++) shape[i] = i < want - nd ? 1 : x->type->dims[i - (want - nd)].size;
      SrVal *sh = sr_seq(NULL, SR_V_TUPLE, want);
      for (int i = 0; i < want; i++) sr_seq_push(NULL, sh, sr_int(NULL, shape[i]));
      SrVal *args[2] = {r, sh};
      SrVal *fn = sr_lookup_qualname("numpy.reshape");
      SrArgs ca = {2, args, 0, NULL, NULL, NULL};
      SrVal *y = fn ? sr_call(I, fn, &ca) : NULL;
      sr_unref(sh);
      sr_unref(r);
      r = y;
    }
  }
  return r;
}

static SrVal *np_asarray(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "asarray", "a, dtype=, order=", p) < 0) return NULL;
  int dt;
  if (dtype_x64(I, p[1], &dt, "asarray") < 0) return NULL;
  return sr_np_asarray(I, p[0], dt);
}

/* x.astype(dtype): a copy; a numpy scalar stays one */
static SrVal *m_astype(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "astype", "x, dtype", p) < 0) return NULL;
  int dt;
  if (dtype_x64(I, p[1], &dt, "astype") < 0) return NULL;
  if (!sr_is_ndarray(p[0])) return sr_raise(I, "TypeError", "astype() needs an array");
  SrArray *x = sr_ndarray_array(p[0]);
  if (dt < 0) dt = SR_F64;
  SrVal *j = sr_ndarray_to_jax(I, p[0], 1);
  SrNpEval e;
  sr_np_eval_begin(I, &e);
  SrVal *c = j ? sr_jnp_convert(I, j, (SrDtype)dt, 0) : NULL;
  sr_np_eval_end(I, &e);
  sr_unref(j);
  if (!c) return NULL;
  /* a new array even when the dtype is the same */
  SrVal *r = sr_ndarray_from_jax(I, c, 0);
  sr_unref(c);
  if (r && sr_is_ndarray(r) && x->type->ndim == 0 && strcmp(sr_val_kind_name(p[0]), "numpy.ndarray") != 0) {
    /* np.float64(1).astype(np.float32) is np.float32(1.0) */
    SrVal *sc = sr_np_as_scalar(r);
    sr_unref(r);
    r = sc;
  }
  return r;
}

/* np.array_equal(a1, a2, equal_nan=False): a Python bool */
static SrVal *np_array_equal(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "array_equal", "a1, a2, equal_nan=", p) < 0) return NULL;
  SrVal *x = sr_np_asarray(I, p[0], -1), *y = x ? sr_np_asarray(I, p[1], -1) : NULL;
  SrVal *r = NULL;
  if (x && y) {
    const SrType *tx = sr_ndarray_array(x)->type, *ty = sr_ndarray_array(y)->type;
    int same = tx->ndim == ty->ndim;
    for (int i = 0; same && i < tx->ndim; i++) same = tx->dims[i].size == ty->dims[i].size;
    if (!same) {
      r = sr_bool(0);
    } else {
      SrVal *args[2] = {x, y};
      SrVal *eq = sr_lookup_qualname("numpy.equal");
      SrArgs ca = {2, args, 0, NULL, NULL, NULL};
      SrVal *e = eq ? sr_call(I, eq, &ca) : NULL;
      if (e && p[2] && sr_val_truthy(p[2])) {
        /* NaN == NaN counts */
        SrVal *fn = sr_lookup_qualname("numpy.isnan");
        SrVal *nx = fn ? sr_call1(I, fn, x) : NULL, *ny = nx ? sr_call1(I, fn, y) : NULL;
        SrVal *both = ny ? sr_binop(I, SR_OP_BITAND, nx, ny) : NULL;
        SrVal *e2 = both ? sr_binop(I, SR_OP_BITOR, e, both) : NULL;
        sr_unref(nx);
        sr_unref(ny);
        sr_unref(both);
        sr_unref(e);
        e = e2;
      }
      SrVal *all = e ? sr_call1(I, sr_lookup_qualname("numpy.all"), e) : NULL;
      if (all) {
        int t = sr_truthy(I, all);
        r = t < 0 ? NULL : sr_bool(t);
      }
      sr_unref(e);
      sr_unref(all);
    }
  }
  sr_unref(x);
  sr_unref(y);
  return r;
}

/* ---- np.testing ---- */

/* numpy.testing's build_err_msg: the header, err_msg (with the remarks
   after it), then ACTUAL and DESIRED as their reprs (three lines at most) */
static SrVal *assert_fail(SrInterp *I, const char *header, const char *err_msg, SrBuf *remarks, SrVal *x,
                          SrVal *y) {
  SrBuf m = SR_BUF_INIT, em = SR_BUF_INIT;
  sr_buf_puts(&em, err_msg ? err_msg : "");
  if (remarks && remarks->len) sr_buf_printf(&em, "\n%s", sr_buf_str(remarks));
  sr_buf_printf(&m, "\n%s", header);
  if (em.len) {
    if (!strchr(sr_buf_str(&em), '\n') && em.len < 79 - strlen(header)) sr_buf_printf(&m, " %s", sr_buf_str(&em));
    else sr_buf_printf(&m, "\n%s", sr_buf_str(&em));
  }
  const char *names[2] = {"ACTUAL", "DESIRED"};
  SrVal *vals[2] = {x, y};
  for (int i = 0; i < 2; i++) {
    SrBuf r = SR_BUF_INIT;
    sr_to_repr(I, &r, vals[i]);
    sr_buf_printf(&m, "\n %s: ", names[i]);
    int lines = 0;
    const char *p = sr_buf_str(&r);
    for (; *p; p++) {
      if (*p == '\n' && ++lines == 3) break;
      sr_buf_putc(&m, *p);
    }
    if (*p) sr_buf_puts(&m, "...");
    sr_buf_free(&r);
  }
  sr_buf_free(&em);
  sr_raise(I, "AssertionError", "%s", sr_buf_str(&m));
  sr_buf_free(&m);
  return NULL;
}

/* " [1, 2]: 3.1 (ACTUAL), 3.0 (DESIRED)": the element at flat index i */
static void mismatch_line(SrBuf *out, SrVal *x, SrVal *y, int64_t i) {
  SrVal *v[2] = {x, y};
  const SrType *t = sr_ndarray_array(x)->type->ndim ? sr_ndarray_array(x)->type : sr_ndarray_array(y)->type;
  int64_t idx[SR_MAX_RANK], r = i;
  for (int d = t->ndim - 1; d >= 0; d--) {
    idx[d] = r % t->dims[d].size;
    r /= t->dims[d].size;
  }
  sr_buf_puts(out, "\n [");
  for (int d = 0; d < t->ndim; d++) sr_buf_printf(out, d ? ", %lld" : "%lld", (long long)idx[d]);
  sr_buf_puts(out, "]:");
  for (int k = 0; k < 2; k++) {
    SrArray *a = sr_ndarray_array(v[k]);
    int64_t at = a->type->ndim ? i : 0;
    sr_buf_putc(out, ' ');
    sr_numfmt_scalar(out, a->type->dtype, (const char *)a->shard[0]->data + at * (int64_t)sr_elem_size(a->type->dtype));
    sr_buf_puts(out, k ? " (DESIRED)" : " (ACTUAL),");
  }
}

static int shapes_equal(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->dims[i].size != b->dims[i].size) return 0;
  return 1;
}

static void shape_text(SrBuf *out, const SrType *t) {
  sr_buf_putc(out, '(');
  for (int i = 0; i < t->ndim; i++) sr_buf_printf(out, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
  if (t->ndim == 1) sr_buf_putc(out, ',');
  sr_buf_putc(out, ')');
}

/* a 0-d value's text as array2string shows it (the remarks' numbers) */
static void scalar_text(SrBuf *out, SrDtype dt, const void *p) {
  sr_numfmt_array2string(out, &sr_numfmt_opts, dt, 0, NULL, p, " ", 0, 0);
}

/* The comparison of assert_allclose (tol: rtol, atol) or of
   assert_array_equal (tol NULL). */
static SrVal *assert_compare(SrInterp *I, SrVal *actual, SrVal *desired, const double *tol, int equal_nan,
                             const char *err_msg) {
  SrVal *x = sr_np_asarray(I, actual, -1), *y = x ? sr_np_asarray(I, desired, -1) : NULL;
  if (!x || !y) {
    sr_unref(x);
    return NULL;
  }
  char header[128];
  if (tol) snprintf(header, sizeof header, "Not equal to tolerance rtol=%g, atol=%g", tol[0], tol[1]);
  else snprintf(header, sizeof header, "Arrays are not equal");
  const SrType *tx = sr_ndarray_array(x)->type, *ty = sr_ndarray_array(y)->type;
  SrVal *r = NULL;
  /* a scalar broadcasts; other shapes must agree */
  if (!shapes_equal(tx, ty) && tx->ndim && ty->ndim) {
    SrBuf rm = SR_BUF_INIT;
    sr_buf_puts(&rm, "(shapes ");
    shape_text(&rm, tx);
    sr_buf_puts(&rm, ", ");
    shape_text(&rm, ty);
    sr_buf_puts(&rm, " mismatch)");
    assert_fail(I, header, err_msg, &rm, x, y);
    sr_buf_free(&rm);
    goto out;
  }
  {
    /* both as float64 (or their common dtype) on the host, broadcast */
    SrVal *args[2] = {x, y};
    SrVal *bfn = sr_lookup_qualname("numpy.broadcast_to");
    (void)bfn;
    SrVal *xf = NULL, *yf = NULL;
    SrVal *cast = sr_lookup_qualname("numpy.ndarray.astype");
    SrVal *f64 = sr_dtype_val(NULL, SR_F64);
    SrArgs c1 = {2, (SrVal *[]){args[0], f64}, 0, NULL, NULL, NULL};
    SrArgs c2 = {2, (SrVal *[]){args[1], f64}, 0, NULL, NULL, NULL};
    int cplx = sr_dtype_kind(tx->dtype) == SR_DK_COMPLEX || sr_dtype_kind(ty->dtype) == SR_DK_COMPLEX;
    if (cplx) {
      sr_unref(f64);
      f64 = sr_dtype_val(NULL, SR_C128);
      c1.v[1] = f64;
      c2.v[1] = f64;
    }
    xf = sr_call(I, cast, &c1);
    yf = xf ? sr_call(I, cast, &c2) : NULL;
    sr_unref(f64);
    if (!xf || !yf) {
      sr_unref(xf);
      sr_unref(yf);
      goto out;
    }
    SrArray *ax = sr_ndarray_array(xf), *ay = sr_ndarray_array(yf);
    int64_t nx = sr_type_numel(ax->type), ny = sr_type_numel(ay->type), n = nx > ny ? nx : ny;
    int step = cplx ? 2 : 1;
    const double *px = ax->shard[0]->data, *py = ay->shard[0]->data;
    int64_t bad = 0, pos[5];
    double max_abs = 0, max_rel = -1;
    int int_diff = !tol && kind_of(tx->dtype) >= 0 && kind_of(tx->dtype) <= 2 && kind_of(ty->dtype) >= 0 &&
                   kind_of(ty->dtype) <= 2;
    for (int64_t i = 0; i < n; i++) {
      const double *a1 = px + (nx == 1 ? 0 : i) * step, *b1 = py + (ny == 1 ? 0 : i) * step;
      double d = cplx ? hypot(a1[0] - b1[0], a1[1] - b1[1]) : fabs(a1[0] - b1[0]);
      double mag = cplx ? hypot(b1[0], b1[1]) : fabs(b1[0]);
      int nan_x = isnan(a1[0]) || (cplx && isnan(a1[1])), nan_y = isnan(b1[0]) || (cplx && isnan(b1[1]));
      int ok;
      if (nan_x || nan_y) ok = nan_x && nan_y && equal_nan;
      else if (isinf(a1[0]) || isinf(b1[0])) ok = a1[0] == b1[0];
      else ok = tol ? d <= tol[1] + tol[0] * mag : d == 0;
      if (ok) continue;
      if (bad < 5) pos[bad] = i;
      bad++;
      if (d > max_abs || isnan(d)) max_abs = d;
      if (mag != 0) {
        double rel = d / mag;
        if (rel > max_rel || isnan(rel)) max_rel = rel;
      }
    }
    if (bad) {
      SrBuf rm = SR_BUF_INIT;
      char pbuf[32];
      snprintf(pbuf, sizeof pbuf, "%.3g", 100.0 * (double)bad / (double)n);
      sr_buf_printf(&rm, "Mismatched elements: %lld / %lld (%s%%)", (long long)bad, (long long)n, pbuf);
      if (tx->ndim || ty->ndim) {
        sr_buf_puts(&rm, bad == 1 ? "\nMismatch at index:" : bad <= 5 ? "\nMismatch at indices:"
                                                             : "\nFirst 5 mismatches are at indices:");
        for (int64_t k = 0; k < bad && k < 5; k++) mismatch_line(&rm, x, y, pos[k]);
      }
      sr_buf_puts(&rm, "\nMax absolute difference among violations: ");
      if (int_diff) sr_buf_printf(&rm, "%lld", (long long)max_abs);
      else scalar_text(&rm, SR_F64, &max_abs);
      sr_buf_puts(&rm, "\nMax relative difference among violations: ");
      if (max_rel < 0) max_rel = INFINITY;
      scalar_text(&rm, SR_F64, &max_rel);
      assert_fail(I, header, err_msg, &rm, x, y);
      sr_buf_free(&rm);
    } else {
      r = sr_none();
    }
    sr_unref(xf);
    sr_unref(yf);
  }
out:
  sr_unref(x);
  sr_unref(y);
  return r;
}

static SrVal *np_assert_allclose(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "assert_allclose", "actual, desired, rtol=, atol=, equal_nan=, err_msg=, verbose=", p) < 0)
    return NULL;
  double tol[2] = {1e-7, 0};
  if (p[2] && sr_as_float(I, p[2], "rtol", &tol[0]) < 0) return NULL;
  if (p[3] && sr_as_float(I, p[3], "atol", &tol[1]) < 0) return NULL;
  const char *msg = p[5] ? sr_as_str(I, p[5], "err_msg") : "";
  if (!msg) return NULL;
  return assert_compare(I, p[0], p[1], tol, p[4] ? sr_val_truthy(p[4]) : 1, msg);
}

static SrVal *np_assert_array_equal(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "assert_array_equal", "actual, desired, err_msg=, verbose=, *, strict=", p) < 0) return NULL;
  const char *msg = p[2] ? sr_as_str(I, p[2], "err_msg") : "";
  if (!msg) return NULL;
  return assert_compare(I, p[0], p[1], NULL, 1, msg);
}

static SrVal *np_assert_equal(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "assert_equal", "actual, desired, err_msg=", p) < 0) return NULL;
  if (sr_is_ndarray(p[0]) || sr_is_ndarray(p[1]) || sr_array_of(p[0]) || sr_array_of(p[1]))
    return np_assert_array_equal(I, a);
  if (sr_val_equal(p[0], p[1])) return sr_none();
  SrBuf m = SR_BUF_INIT, r = SR_BUF_INIT;
  sr_to_repr(I, &r, p[0]);
  sr_buf_printf(&m, "\nItems are not equal:\n ACTUAL: %s\n DESIRED: ", sr_buf_str(&r));
  r.len = 0;
  sr_to_repr(I, &r, p[1]);
  sr_buf_puts(&m, sr_buf_str(&r));
  sr_raise(I, "AssertionError", "%s", sr_buf_str(&m));
  sr_buf_free(&m);
  sr_buf_free(&r);
  return NULL;
}

/* ---- .npy files ---- */

static SrVal *saved_save, *saved_load;

static SrVal *np_save(SrInterp *I, SrArgs *a) {
  SrVal *argv[8];
  int n = a->n < 8 ? a->n : 8;
  for (int i = 0; i < n; i++) argv[i] = i == 1 ? sr_np_asarray(I, a->v[i], -1) : sr_ref(a->v[i]);
  SrVal *r = NULL;
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= argv[i] != NULL;
  if (ok && n >= 2) {
    SrVal *j = sr_ndarray_to_jax(I, argv[1], 1);
    sr_unref(argv[1]);
    argv[1] = j;
    if (j) {
      SrArgs ca = {n, argv, a->nkw, a->kw, a->kwv, NULL};
      r = sr_call(I, saved_save, &ca);
    }
  } else if (ok) {
    SrArgs ca = {n, argv, a->nkw, a->kw, a->kwv, NULL};
    r = sr_call(I, saved_save, &ca);
  }
  for (int i = 0; i < n; i++) sr_unref(argv[i]);
  return r;
}

static SrVal *np_load(SrInterp *I, SrArgs *a) {
  SrVal *r = sr_call(I, saved_load, a);
  if (!r) return NULL;
  SrVal *w;
  if (r->kind == SR_V_DICT) {
    w = sr_dict(NULL);
    for (int i = 0; i < r->dict.n; i++) {
      SrVal *v = sr_ndarray_from_jax(I, r->dict.vals[i], 0);
      if (!v) {
        sr_unref(w);
        sr_unref(r);
        return NULL;
      }
      sr_dict_set(NULL, w, sr_ref(r->dict.keys[i]), v);
    }
  } else {
    w = sr_ndarray_adopt_jax(I, r);
  }
  sr_unref(r);
  return w;
}

/* jax.device_get(x): ndarrays for the arrays of a pytree */
static SrVal *device_get_leaf(SrInterp *I, SrVal *v) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    SrVal *l = sr_seq(NULL, (SrValKind)v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *x = device_get_leaf(I, v->seq.items[i]);
      if (!x) {
        sr_unref(l);
        return NULL;
      }
      sr_seq_push(NULL, l, x);
    }
    return l;
  }
  if (v->kind == SR_V_DICT) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < v->dict.n; i++) {
      SrVal *x = device_get_leaf(I, v->dict.vals[i]);
      if (!x) {
        sr_unref(d);
        return NULL;
      }
      sr_dict_set(NULL, d, sr_ref(v->dict.keys[i]), x);
    }
    return d;
  }
  /* an extended dtype (a key array) stays a jax.Array: its data is what
     goes to the host (api._device_get) */
  const SrType *t = sr_array_of(v) ? sr_value_type(I, v) : NULL;
  if (t && sr_prng_impl_of(t->dtype) >= 0) return sr_ref(v);
  return sr_array_of(v) ? sr_ndarray_from_jax(I, v, 0) : sr_ref(v);
}

static SrVal *saved_device_get;

static SrVal *bi_device_get(SrInterp *I, SrArgs *a) {
  SrVal *r = sr_call(I, saved_device_get, a);
  SrVal *w = r ? device_get_leaf(I, r) : NULL;
  sr_unref(r);
  return w;
}

/* numpy.linalg.eig and eigvals: numpy's results are real when every
   eigenvalue is (jax.numpy's are always complex) */
static SrVal *lifted_eig, *lifted_eigvals;

static SrVal *np_call1(SrInterp *I, const char *q, SrVal *x) { return sr_call1(I, sr_lookup_qualname(q), x); }

static SrVal *real_if_real(SrInterp *I, SrVal *w, int *real) {
  SrVal *im = np_call1(I, "numpy.imag", w), *nz = im ? np_call1(I, "numpy.any", im) : NULL;
  int t = nz ? sr_truthy(I, nz) : -1;
  sr_unref(im);
  sr_unref(nz);
  if (t < 0) return NULL;
  *real = !t;
  return t ? sr_ref(w) : np_call1(I, "numpy.real", w);
}

static SrVal *np_eig(SrInterp *I, SrArgs *a) {
  SrVal *r0 = sr_call(I, lifted_eig, a);
  /* jnp's EigResult: its two items */
  SrVal *r = r0 && !sr_is_seq(r0) ? sr_iterate(I, r0) : r0 ? sr_ref(r0) : NULL;
  sr_unref(r0);
  if (!r || !sr_is_seq(r) || r->seq.n != 2) return r;
  int real = 0;
  SrVal *w = real_if_real(I, r->seq.items[0], &real);
  SrVal *v = w && real ? np_call1(I, "numpy.real", r->seq.items[1]) : w ? sr_ref(r->seq.items[1]) : NULL;
  sr_unref(r);
  if (!v) return sr_unref(w), NULL;
  SrVal *items[2] = {w, v};
  return sr_tuple(NULL, 2, items);
}

static SrVal *np_eigvals(SrInterp *I, SrArgs *a) {
  SrVal *r = sr_call(I, lifted_eigvals, a);
  int real = 0;
  SrVal *w = r ? real_if_real(I, r, &real) : NULL;
  sr_unref(r);
  return w;
}

void sr_np_host_funcs_init(void) {
  for (int i = 0; lifted[i].name; i++) {
    char names[128];
    snprintf(names, sizeof names, "%s", lifted[i].name);
    char *save = NULL;
    char *first = strtok_r(names, " ", &save);
    NpFn *f = sr_xcalloc(1, sizeof *f);
    *f = lifted[i];
    f->name = sr_intern_cstr(first);
    f->jnp = lifted[i].jnp ? lifted[i].jnp : f->name;
    char q[96];
    snprintf(q, sizeof q, "jax.numpy.%s", f->jnp);
    SrVal *jfn = sr_lookup_qualname(q);
    if (!jfn) {
      free(f);
      continue;
    }
    const char *jdoc = sr_builtin_doc(jfn);
    for (char *nm = first; nm; nm = strtok_r(NULL, " ", &save)) {
      snprintf(q, sizeof q, "numpy.%s", nm);
      SrVal *fn = sr_builtin_with(sr_intern_cstr(q), np_lift, f, NULL);
      ((SrBuiltin *)fn->obj.data)->doc = jdoc;
      sr_register(q, fn);
    }
  }
  /* the lifted ones, kept (sr_def replaces and releases them) and wrapped */
  lifted_eig = sr_lookup_qualname("numpy.linalg.eig");
  lifted_eigvals = sr_lookup_qualname("numpy.linalg.eigvals");
  if (lifted_eig) sr_ref(lifted_eig);
  if (lifted_eigvals) sr_ref(lifted_eigvals);
  if (lifted_eig) sr_def("numpy.linalg.eig", np_eig, "np.linalg.eig(a): (w, v), real when every eigenvalue is");
  if (lifted_eigvals) sr_def("numpy.linalg.eigvals", np_eigvals, "np.linalg.eigvals(a): real when every eigenvalue is");
  sr_def("numpy.array", np_array, "np.array(object, dtype=None, *, copy=True, ndmin=0): a host array (numpy.ndarray)");
  sr_def("numpy.asarray", np_asarray, "np.asarray(a, dtype=None): a host array; a jax.Array's values copied to the host");
  sr_def("numpy.result_type", np_result_type, "np.result_type(*arrays_and_dtypes): numpy's promotion of their dtypes");
  sr_def("numpy.asfortranarray numpy.ascontiguousarray", np_asarray,
         "np.asfortranarray(a, dtype=None): np.asarray(a, dtype) (host arrays are row-major: the memory order is not kept)");
  sr_def("numpy.ndarray.astype numpy.astype", m_astype, "x.astype(dtype): a copy converted to dtype");
  sr_def("scipy.special.expit", sp_expit, "scipy.special.expit(x): 1 / (1 + exp(-x)) of a host array, in its float dtype");
  sr_def("scipy.special.jv", sp_jv, "scipy.special.jv(v, z): the Bessel function of the first kind of integer order v, on host arrays");
  sr_def("scipy.special.logit", sp_logit, "scipy.special.logit(x): log(x / (1 - x)) of a host array, in its float dtype");
  sr_def("numpy.polymul", np_polymul, "np.polymul(a1, a2): the product of two polynomials (leading zeros trimmed)");
  sr_def("numpy.polydiv", np_polydiv, "np.polydiv(u, v): the quotient and remainder of polynomial division");
  sr_def("numpy.promote_types", np_promote_types, "np.promote_types(type1, type2): the dtype numpy promotes two dtypes to");
  sr_def("numpy.array_equal", np_array_equal, "np.array_equal(a1, a2, equal_nan=False): same shape and elements (a bool)");
  sr_def("numpy.testing.assert_allclose", np_assert_allclose,
         "np.testing.assert_allclose(actual, desired, rtol=1e-07, atol=0, equal_nan=True, err_msg='')");
  sr_def("numpy.testing.assert_array_equal", np_assert_array_equal,
         "np.testing.assert_array_equal(actual, desired, err_msg='')");
  sr_def("numpy.testing.assert_equal", np_assert_equal, "np.testing.assert_equal(actual, desired, err_msg='')");
  SrVal *s = sr_lookup_qualname("numpy.save"), *l = sr_lookup_qualname("numpy.load");
  if (s && !saved_save) saved_save = sr_ref(s);
  if (l && !saved_load) saved_load = sr_ref(l);
  if (saved_save) sr_def("numpy.save", np_save, "np.save(file, arr): writes arr to a .npy file");
  if (saved_load) sr_def("numpy.load", np_load, "np.load(file): reads a .npy file as an ndarray (a .npz as a dict of them)");
  SrVal *dg = sr_lookup_qualname("jax.device_get");
  if (dg && !saved_device_get) saved_device_get = sr_ref(dg);
  if (saved_device_get) sr_def("jax.device_get", bi_device_get, "device_get(x): the arrays of x as numpy arrays on the host");
}
