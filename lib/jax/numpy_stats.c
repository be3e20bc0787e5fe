/* numpy_stats.c: statistics and cumulative reductions -- jax.numpy.var,
 * std, average, nanmax/nanmin/nansum/nanprod/nanmean, median, quantile,
 * percentile, diff, cumprod (numpy/reductions.py, lax_numpy.py) and
 * jax.lax.cumprod/cummax/cummin (lax/control_flow/loops.py), each binding
 * what JAX's binds, in a jit named as JAX's jit-decorated function is, and
 * composed of the jax.numpy functions JAX's call (jnp.sum, jnp.mean,
 * jnp.where, ...).  Registered by sr_jnp_stats_init (jax.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }
static int given(SrVal *v) { return v && v->kind != SR_V_NONE; }

/* Calls the registered jax.numpy function `name` with n positional
   arguments and (key, value) keyword pairs ending in NULL; the values are
   borrowed, and a NULL value leaves its keyword out. */
static SrVal *np_call(SrInterp *I, const char *name, int n, SrVal **args, ...) {
  char q[96];
  snprintf(q, sizeof q, "jax.numpy.%s", name);
  SrVal *fn = sr_lookup_qualname(q);
  if (!fn) return sr_raise(I, "NotImplementedError", "%s is not available", q);
  const char *kw[8];
  SrVal *kwv[8];
  int nkw = 0;
  va_list ap;
  va_start(ap, args);
  for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
    SrVal *v = va_arg(ap, SrVal *);
    if (v && nkw < 8) kw[nkw] = sr_intern_cstr(k), kwv[nkw++] = v;
  }
  va_end(ap);
  SrArgs a = {n, args, nkw, kw, kwv, NULL};
  return sr_call(I, fn, &a);
}

static SrVal *np2(SrInterp *I, const char *name, SrVal *x, SrVal *y) {
  SrVal *a[2] = {x, y};
  return np_call(I, name, 2, a, NULL);
}
static SrVal *np3(SrInterp *I, const char *name, SrVal *x, SrVal *y, SrVal *z) {
  SrVal *a[3] = {x, y, z};
  return np_call(I, name, 3, a, NULL);
}

static void unref_all(int n, SrVal **v) {
  for (int i = 0; i < n; i++) sr_unref(v[i]);
}

static SrDtype default_float(SrInterp *I) { return I->jax->enable_x64 ? SR_F64 : SR_F32; }
static SrDtype upcast_f16(SrDtype d) { return d == SR_F16 || d == SR_BF16 ? SR_F32 : d; }

/* A dtype as a value for a dtype= keyword (a new reference). */
static SrVal *dtype_val(SrDtype d) { return sr_dtype_val(NULL, d); }

/* Positional and keyword arguments kept for a jit's body: the static
   ones (axis, dtype, keepdims...) are values held here, the dynamic ones
   are the body's arguments. */
typedef struct Statics {
  SrVal *v[6];
  int flags;
} Statics;

static void statics_free(void *p) {
  Statics *s = p;
  for (int i = 0; i < 6; i++) sr_unref(s->v[i]);
  free(s);
}

static Statics *statics_of(SrInterp *I) { return sr_current_builtin(I)->data; }

/* Calls body as a jit named `name` over n dynamic arguments (borrowed),
   with the statics s (owned by the jit afterwards). */
static SrVal *jit_with(SrInterp *I, const char *name, SrBuiltinFn body, Statics *s, int n, SrVal **args) {
  SrVal *b = sr_builtin_with(name, body, s, statics_free);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, name, &a);
  sr_unref(b);
  return r;
}

static Statics *statics_new(int n, SrVal **v) {
  Statics *s = sr_xcalloc(1, sizeof *s);
  for (int i = 0; i < n && i < 6; i++) s->v[i] = v[i] ? sr_ref(v[i]) : NULL;
  return s;
}

/* ==== var, std (reductions._var, _std) ==== */

/* _var_promote_types: (computation dtype, result dtype) */
static int var_types(SrInterp *I, SrDtype a, int dtype, SrDtype *comp, SrDtype *res) {
  if (dtype >= 0) {
    if (sr_dtype_kind((SrDtype)dtype) != SR_DK_COMPLEX && sr_dtype_kind(a) == SR_DK_COMPLEX) {
      sr_raise(I, "ValueError",
               "jax.numpy.var does not yet support real dtype parameters when computing the variance of an array of "
               "complex values. The semantics of numpy.var seem unclear in this case. Please comment on "
               "https://github.com/jax-ml/jax/issues/2283 if this behavior is important to you.");
      return -1;
    }
    *comp = *res = (SrDtype)dtype;
  } else if (!sr_dtype_is_inexact(a)) {
    *comp = *res = default_float(I);
  } else {
    *comp = a;
    *res = a == SR_C64 ? SR_F32 : a == SR_C128 ? SR_F64 : a;
  }
  *comp = upcast_f16(*comp);
  return 0;
}

/* sum(a, axis, dtype=, keepdims=, where=) as reductions' sum with where=
   (_reduction: a = _where(where, a, 0) first). */
static SrVal *sum_where(SrInterp *I, SrVal *a, SrVal *axis, SrDtype dt, SrVal *keepdims, SrVal *where) {
  SrVal *x = sr_ref(a);
  if (given(where)) {
    SrVal *z = sr_int(NULL, 0);
    SrVal *y = np3(I, "where", where, x, z);
    sr_unref(z);
    sr_unref(x);
    if (!(x = y)) return NULL;
  }
  SrVal *d = dtype_val(dt);
  SrVal *r = np_call(I, "sum", 1, &x, "axis", axis, "dtype", d, "keepdims", keepdims, NULL);
  sr_unref(d);
  sr_unref(x);
  return r;
}

/* _count: the number of elements reduced (a literal), or the sum of the
   broadcast mask. */
static SrVal *count(SrInterp *I, SrVal *a, SrVal *axis, SrVal *keepdims, SrVal *where, SrDtype dt) {
  const SrType *t = vtype(I, a);
  if (given(where)) {
    int64_t shape[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
    SrVal *w = arr(I, where);
    SrVal *b = w ? sr_lax_broadcast_to(I, w, shape, t->ndim, NULL) : NULL;
    sr_unref(w);
    SrVal *d = dtype_val(dt);
    SrVal *r = b ? np_call(I, "sum", 1, &b, "axis", axis, "dtype", d, "keepdims", keepdims, NULL) : NULL;
    sr_unref(d);
    sr_unref(b);
    return r;
  }
  int64_t n = 1;
  if (!given(axis)) {
    n = sr_type_numel(t);
  } else {
    SrVal *ints = sr_int_seq_arg(axis);
    SrVal *seq = ints;
    int k = sr_is_seq(seq) ? seq->seq.n : 1;
    for (int i = 0; i < k; i++) {
      int64_t ax;
      if (sr_as_int(I, sr_is_seq(seq) ? seq->seq.items[i] : seq, "axis", &ax) < 0 ||
          sr_api_axis(I, ax, t->ndim, &ax) < 0) {
        if (ints != axis) sr_unref(ints);
        return NULL;
      }
      n *= t->dims[ax].size;
    }
    if (ints != axis) sr_unref(ints);
  }
  SrVal *c = sr_int(NULL, n);
  SrVal *r = sr_lax_convert(I, c, dt, 0, NULL);
  sr_unref(c);
  return r;
}

/* mean(a, axis, dtype=comp, keepdims=, where=): jnp.mean, or with where=
   _mean's sum over the count (inlined in JAX as here). */
static SrVal *mean_where(SrInterp *I, SrVal *a, SrVal *axis, SrDtype comp, SrVal *keepdims, SrVal *where) {
  if (!given(where)) {
    SrVal *d = dtype_val(comp);
    SrVal *r = np_call(I, "mean", 1, &a, "axis", axis, "dtype", d, "keepdims", keepdims, NULL);
    sr_unref(d);
    return r;
  }
  SrVal *n = count(I, a, axis, keepdims, where, comp);
  SrVal *s = n ? sum_where(I, a, axis, comp, keepdims, where) : NULL;
  SrVal *r = s ? sr_lax_binary(I, SR_P_div, s, n) : NULL;
  sr_unref(n);
  sr_unref(s);
  return r;
}

/* statics of _var and _std: axis, dtype, keepdims */
enum { ST_AXIS, ST_DTYPE, ST_KEEP };

/* the body of jit _var: (a, correction[, where][, mean]) */
static SrVal *var_body(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  int k = 2;
  SrVal *where = s->flags & 1 ? a->v[k++] : NULL, *amean = s->flags & 2 ? a->v[k++] : NULL;
  int dt = -1;
  if (given(s->v[ST_DTYPE]) && sr_dtype_arg(I, s->v[ST_DTYPE], &dt, "var") < 0) return NULL;
  SrDtype comp, res;
  if (var_types(I, vtype(I, a->v[0])->dtype, dt, &comp, &res) < 0) return NULL;
  SrVal *x = sr_lax_convert(I, a->v[0], comp, 0, NULL);
  if (!x) return NULL;
  SrVal *t = sr_bool(1);
  SrVal *m = amean ? sr_lax_convert(I, amean, comp, 0, NULL) : mean_where(I, x, s->v[ST_AXIS], comp, t, where);
  sr_unref(t);
  SrVal *c = m ? sr_lax_binary(I, SR_P_sub, x, m) : NULL, *sq = NULL;
  if (c && sr_dtype_kind(comp) == SR_DK_COMPLEX) {
    /* real(centered * conj(centered)), and the rest in its real dtype */
    SrVal *cj = sr_call1(I, sr_lookup_qualname("jax.lax.conj"), c);
    SrVal *pr = cj ? sr_lax_binary(I, SR_P_mul, c, cj) : NULL;
    sq = pr ? sr_lax_unary(I, SR_P_real, pr) : NULL;
    sr_unref(cj);
    sr_unref(pr);
    comp = comp == SR_C128 ? SR_F64 : SR_F32;
  } else if (c) {
    sq = sr_lax_unary(I, SR_P_square, c);
  }
  SrVal *n = sq ? count(I, x, s->v[ST_AXIS], s->v[ST_KEEP], where, comp) : NULL;
  SrVal *cc = n ? sr_lax_convert(I, a->v[1], comp, 0, NULL) : NULL;
  SrVal *norm = cc ? sr_lax_binary(I, SR_P_sub, n, cc) : NULL;
  SrVal *sum = norm ? sum_where(I, sq, s->v[ST_AXIS], comp, s->v[ST_KEEP], where) : NULL;
  SrVal *q = sum ? sr_lax_binary(I, SR_P_div, sum, norm) : NULL;
  SrVal *qr = q ? sr_lax_convert(I, q, res, 0, NULL) : NULL;
  SrVal *zero = sr_int(NULL, 0), *nan = sr_float(NULL, NAN);
  SrVal *pos = qr ? np2(I, "greater", norm, zero) : NULL;
  SrVal *r = pos ? np3(I, "where", pos, qr, nan) : NULL;
  SrVal *tmp[] = {x, m, c, sq, n, cc, norm, sum, q, qr, zero, nan, pos};
  unref_all((int)(sizeof tmp / sizeof *tmp), tmp);
  return r;
}

/* The arguments of var and std: (a, axis, dtype, out, ddof, keepdims, *,
   where, mean, correction); *dyn gets the jit's dynamic arguments. */
static int var_args(SrInterp *I, SrArgs *a, const char *name, SrVal **dyn, int *ndyn, Statics **st) {
  SrVal *p[9];
  if (sr_args_parse(I, a, name, "a, axis=, dtype=, out=, ddof=, keepdims=, *, where=, mean=, correction=", p) < 0)
    return -1;
  if (given(p[3])) {
    sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.%s is not supported.", name);
    return -1;
  }
  SrVal *corr = p[8];
  if (!given(corr)) {
    corr = p[4] ? p[4] : NULL;
  } else if (p[4] && !(p[4]->kind == SR_V_INT && p[4]->i == 0)) {
    sr_raise(I, "ValueError", "ddof and correction can't be provided simultaneously.");
    return -1;
  }
  int dt;
  if (sr_jnp_check_where(I, name, p[6]) < 0 || sr_dtype_arg(I, p[2], &dt, name) < 0) return -1;
  if (dt >= 0 && strcmp(name, "std") == 0 && !sr_dtype_is_inexact((SrDtype)dt)) {
    sr_raise(I, "ValueError", "dtype argument to jnp.std must be inexact; got %s", sr_dtype_name((SrDtype)dt));
    return -1;
  }
  if (!(dyn[0] = arr(I, p[0]))) return -1;
  dyn[1] = corr ? sr_ref(corr) : sr_int(NULL, 0);
  *ndyn = 2;
  SrVal *sv[3] = {p[1], p[2], p[5]};
  *st = statics_new(3, sv);
  if (given(p[6])) {
    dyn[(*ndyn)++] = sr_ref(p[6]);
    (*st)->flags |= 1;
  }
  if (given(p[7])) {
    dyn[(*ndyn)++] = sr_ref(p[7]);
    (*st)->flags |= 2;
  }
  return 0;
}

static SrVal *jnp_var(SrInterp *I, SrArgs *a) {
  SrVal *dyn[4];
  int n;
  Statics *st;
  if (var_args(I, a, "var", dyn, &n, &st) < 0) return NULL;
  SrVal *r = jit_with(I, "_var", var_body, st, n, dyn);
  unref_all(n, dyn);
  return r;
}

/* the body of jit _std: sqrt of var (which is a jit _var of its own) */
static SrVal *std_body(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  Statics *vs = statics_new(3, s->v);
  vs->flags = s->flags;
  SrVal *v = jit_with(I, "_var", var_body, vs, a->n, a->v);
  SrVal *r = v ? sr_lax_unary(I, SR_P_sqrt, v) : NULL;
  sr_unref(v);
  return r;
}

static SrVal *jnp_std(SrInterp *I, SrArgs *a) {
  SrVal *dyn[4];
  int n;
  Statics *st;
  if (var_args(I, a, "std", dyn, &n, &st) < 0) return NULL;
  SrVal *r = jit_with(I, "_std", std_body, st, n, dyn);
  unref_all(n, dyn);
  return r;
}

/* ==== the nan-reductions (reductions._nan_reduction) ==== */

typedef enum { NAN_MAX, NAN_MIN, NAN_SUM, NAN_PROD } NanKind;
static const char *const nan_names[] = {"nanmax", "nanmin", "nansum", "nanprod"};
static const char *const nan_reds[] = {"max", "min", "sum", "prod"};

/* statics: axis, keepdims, dtype; flags: bit 0 where given, bit 1 initial
   given, bits 4..: the kind */
enum { NS_AXIS, NS_KEEP, NS_DTYPE };

/* _reduction_init_val(a, v): v as an array of a's dtype */
static SrVal *init_val(SrInterp *I, SrVal *a, double v) {
  SrVal *f = sr_float(NULL, v);
  SrVal *r = sr_lax_convert(I, f, vtype(I, a)->dtype, 0, NULL);
  sr_unref(f);
  return r;
}

static SrVal *nan_red_body(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  NanKind k = (NanKind)(s->flags >> 4);
  SrVal *x = a->v[0], *where = s->flags & 1 ? a->v[1] : NULL;
  SrVal *initial = s->flags & 2 ? a->v[(s->flags & 1) + 1] : NULL;
  int sum_like = k == NAN_SUM || k == NAN_PROD;
  int inexact = sr_dtype_is_inexact(vtype(I, x)->dtype);
  SrVal *masked = sr_ref(x);
  if (inexact) {
    /* _where(isnan(a), _reduction_init_val(a, init_val), a) */
    static const double inits[] = {-INFINITY, INFINITY, 0, 1};
    SrVal *isn = sr_lax_binary(I, SR_P_ne, x, x);
    SrVal *iv = isn ? init_val(I, x, inits[k]) : NULL;
    sr_unref(masked);
    masked = iv ? np3(I, "where", isn, iv, x) : NULL;
    sr_unref(isn);
    sr_unref(iv);
    if (!masked) return NULL;
  }
  /* jnp_reduction(masked, axis=, keepdims=, where=, initial=, dtype=) */
  SrVal *out = np_call(I, nan_reds[k], 1, &masked, "axis", s->v[NS_AXIS], "dtype", sum_like ? s->v[NS_DTYPE] : NULL,
                       "keepdims", s->v[NS_KEEP], "initial", initial, "where", where, NULL);
  sr_unref(masked);
  if (out && !sum_like && inexact && !initial) {
    /* nan_if_all_nan = initial is None */
    SrVal *isn = sr_lax_binary(I, SR_P_ne, x, x);
    SrVal *all = isn ? np_call(I, "all", 1, &isn, "axis", s->v[NS_AXIS], "keepdims", s->v[NS_KEEP], NULL) : NULL;
    SrVal *nan = all ? init_val(I, x, NAN) : NULL;
    SrVal *r = nan ? np3(I, "where", all, nan, out) : NULL;
    sr_unref(isn);
    sr_unref(all);
    sr_unref(nan);
    sr_unref(out);
    return r;
  }
  return out;
}

static SrVal *nan_red(SrInterp *I, SrArgs *a, NanKind k) {
  SrVal *p[7];
  const char *name = nan_names[k];
  int sum_like = k == NAN_SUM || k == NAN_PROD;
  if (sum_like ? sr_args_parse(I, a, name, "a, axis=, dtype=, out=, keepdims=, initial=, where=", p)
               : sr_args_parse(I, a, name, "a, axis=, out=, keepdims=, initial=, where=", p))
    return NULL;
  SrVal *axis = p[1], *dtype = sum_like ? p[2] : NULL, *out = sum_like ? p[3] : p[2];
  SrVal *keep = sum_like ? p[4] : p[3], *initial = sum_like ? p[5] : p[4], *where = sum_like ? p[6] : p[5];
  if (given(out)) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.%s is not supported.", name);
  if (sr_jnp_check_where(I, name, where) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *sv[3] = {axis, keep, dtype};
  Statics *st = statics_new(3, sv);
  st->flags = (int)k << 4;
  SrVal *dyn[3] = {x, NULL, NULL};
  int n = 1;
  if (given(where)) dyn[n++] = where, st->flags |= 1;
  if (given(initial)) dyn[n++] = initial, st->flags |= 2;
  SrVal *r = jit_with(I, name, nan_red_body, st, n, dyn);
  sr_unref(x);
  return r;
}

static SrVal *jnp_nanmax(SrInterp *I, SrArgs *a) { return nan_red(I, a, NAN_MAX); }
static SrVal *jnp_nanmin(SrInterp *I, SrArgs *a) { return nan_red(I, a, NAN_MIN); }
static SrVal *jnp_nansum(SrInterp *I, SrArgs *a) { return nan_red(I, a, NAN_SUM); }
static SrVal *jnp_nanprod(SrInterp *I, SrArgs *a) { return nan_red(I, a, NAN_PROD); }

/* nanmean: nansum over the count of non-NaNs (jit nanmean; statics axis,
   keepdims, dtype) */
static SrVal *nanmean_body(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  SrVal *x = a->v[0], *where = s->flags & 1 ? a->v[1] : NULL;
  const SrType *t = vtype(I, x);
  if (!sr_dtype_is_inexact(t->dtype)) {
    return np_call(I, "mean", 1, &x, "axis", s->v[NS_AXIS], "dtype", s->v[NS_DTYPE], "keepdims", s->v[NS_KEEP], "where",
                   where, NULL);
  }
  int dt = -1;
  if (given(s->v[NS_DTYPE]) && sr_dtype_arg(I, s->v[NS_DTYPE], &dt, "mean") < 0) return NULL;
  SrDtype d = dt >= 0 ? (SrDtype)dt : t->dtype;
  SrVal *isn = sr_lax_binary(I, SR_P_ne, x, x);
  SrVal *mask = isn ? sr_lax_unary(I, SR_P_not, isn) : NULL;
  SrVal *norm = mask ? sum_where(I, mask, s->v[NS_AXIS], d, s->v[NS_KEEP], where) : NULL;
  SrVal *sv[3] = {s->v[NS_AXIS], s->v[NS_KEEP], NULL};
  Statics *ns = statics_new(3, sv);
  ns->v[NS_DTYPE] = dtype_val(d);
  ns->flags = ((int)NAN_SUM << 4) | (where ? 1 : 0);
  SrVal *dyn[2] = {x, where};
  SrVal *sum = norm ? jit_with(I, "nansum", nan_red_body, ns, where ? 2 : 1, dyn) : (statics_free(ns), NULL);
  SrVal *r = sum ? sr_lax_binary(I, SR_P_div, sum, norm) : NULL;
  SrVal *tmp[] = {isn, mask, norm, sum};
  unref_all(4, tmp);
  return r;
}

static SrVal *jnp_nanmean(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "nanmean", "a, axis=, dtype=, out=, keepdims=, where=", p) < 0) return NULL;
  if (given(p[3])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.nanmean is not supported.");
  if (sr_jnp_check_where(I, "nanmean", p[5]) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *sv[3] = {p[1], p[4], p[2]};
  Statics *st = statics_new(3, sv);
  SrVal *dyn[2] = {x, p[5]};
  if (given(p[5])) st->flags |= 1;
  SrVal *r = jit_with(I, "nanmean", nanmean_body, st, given(p[5]) ? 2 : 1, dyn);
  sr_unref(x);
  return r;
}

/* ==== average (reductions._average, an inlined jit) ==== */

static SrVal *jnp_average(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "average", "a, axis=, weights=, returned=, keepdims=", p) < 0) return NULL;
  SrVal *axis = given(p[1]) ? p[1] : NULL, *keep = p[4];
  int returned = p[3] && sr_val_truthy(p[3]);
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *avg = NULL, *wsum = NULL;
  if (!given(p[2])) {
    SrDtype d = sr_dtype_is_inexact(vtype(I, x)->dtype) ? vtype(I, x)->dtype : default_float(I);
    SrVal *xc = sr_lax_convert(I, x, d, vtype(I, x)->weak, NULL);
    avg = xc ? np_call(I, "mean", 1, &xc, "axis", axis, "keepdims", keep, NULL) : NULL;
    SrVal *one = sr_bool(0);
    wsum = avg ? count(I, xc, axis, one, NULL, vtype(I, avg)->dtype) : NULL;
    sr_unref(one);
    sr_unref(xc);
  } else {
    SrVal *w = arr(I, p[2]);
    SrVal *ab[2] = {x, w};
    if (!w) {
      sr_unref(x);
      return NULL;
    }
    SrVal *both[2] = {x, w};
    SrDtype d;
    int weak;
    d = sr_jnp_result_dtype(I, 2, both, &weak);
    if (!sr_dtype_is_inexact(d)) d = default_float(I);
    ab[0] = sr_lax_convert(I, x, d, weak, NULL);
    ab[1] = ab[0] ? sr_lax_convert(I, w, d, weak, NULL) : NULL;
    sr_unref(w);
    const SrType *at = ab[0] ? vtype(I, ab[0]) : NULL, *wt = ab[1] ? vtype(I, ab[1]) : NULL;
    int same = at && wt && at->ndim == wt->ndim;
    for (int i = 0; same && i < at->ndim; i++) same = at->dims[i].size == wt->dims[i].size;
    SrVal *wr = NULL;
    if (!ab[1]) {
    } else if (same) {
      wr = sr_ref(ab[1]);
    } else if (!axis) {
      sr_raise(I, "ValueError", "Axis must be specified when shapes of a and weights differ.");
    } else {
      int64_t ax[SR_MAX_RANK];
      int nax = 0;
      SrVal *ints = sr_int_seq_arg(axis);
      int ok = 1;
      if (sr_is_seq(ints)) {
        for (int i = 0; i < ints->seq.n && ok; i++) ok = sr_as_int(I, ints->seq.items[i], "axis", &ax[nax++]) == 0;
      } else {
        ok = sr_as_int(I, ints, "axis", &ax[nax++]) == 0;
      }
      if (ints != axis) sr_unref(ints);
      for (int i = 0; i < nax && ok; i++) ok = sr_api_axis(I, ax[i], at->ndim, &ax[i]) == 0;
      int match = ok && wt->ndim == nax;
      for (int i = 0; match && i < nax; i++) match = wt->dims[i].size == at->dims[ax[i]].size;
      if (ok && !match) {
        sr_raise(I, "ValueError", "Shape of weights must be consistent with shape of a along specified axis.");
      } else if (ok) {
        int64_t shape[SR_MAX_RANK];
        for (int i = 0; i < at->ndim; i++) {
          shape[i] = 1;
          for (int k = 0; k < nax; k++)
            if (ax[k] == i) shape[i] = at->dims[i].size;
        }
        /* lax.reshape(weights, new_shape, dimensions=argsort(axis)) */
        int64_t perm[SR_MAX_RANK];
        int ident = 1;
        for (int i = 0; i < nax; i++) {
          int64_t r = 0;
          for (int k = 0; k < nax; k++) r += ax[k] < ax[i];
          perm[r] = i;
        }
        for (int i = 0; i < nax; i++) ident &= perm[i] == i;
        if (ident) {
          wr = sr_lax_reshape(I, ab[1], shape, at->ndim, NULL);
        } else {
          SrVal *rv[3] = {ab[1], sr_int_tuple(shape, at->ndim), sr_int_tuple(perm, nax)};
          SrVal *fn = sr_lookup_qualname("jax.lax.reshape");
          SrArgs ra = {3, rv, 0, NULL, NULL, NULL};
          wr = fn ? sr_call(I, fn, &ra) : sr_raise(I, "NotImplementedError", "jax.lax.reshape is not available");
          sr_unref(rv[1]);
          sr_unref(rv[2]);
        }
      }
    }
    if (wr) {
      wsum = np_call(I, "sum", 1, &wr, "axis", axis, "keepdims", keep, NULL);
      SrVal *prod = wsum ? np2(I, "multiply", ab[0], wr) : NULL;
      SrVal *s = prod ? np_call(I, "sum", 1, &prod, "axis", axis, "keepdims", keep, NULL) : NULL;
      avg = s ? np2(I, "true_divide", s, wsum) : NULL;
      sr_unref(prod);
      sr_unref(s);
      sr_unref(wr);
    }
    sr_unref(ab[0]);
    sr_unref(ab[1]);
  }
  sr_unref(x);
  if (!avg || !returned) {
    sr_unref(wsum);
    return avg;
  }
  const SrType *t = vtype(I, avg), *wt = vtype(I, wsum);
  if (t->ndim != wt->ndim || sr_type_numel(t) != sr_type_numel(wt)) {
    int64_t shape[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
    SrVal *b = sr_lax_broadcast_to(I, wsum, shape, t->ndim, NULL);
    sr_unref(wsum);
    if (!(wsum = b)) return sr_unref(avg), NULL;
  }
  SrVal *items[2] = {avg, wsum};
  return sr_tuple(NULL, 2, items);
}

/* ==== cumulative reductions ==== */

/* lax.cumsum / cumprod / cummax / cummin(operand, axis=0, reverse=False) */
static SrVal *lax_cum(SrInterp *I, SrArgs *a, int prim, const char *name) {
  SrVal *p[3];
  if (sr_args_parse(I, a, name, "operand, axis=, reverse=", p) < 0) return NULL;
  int64_t axis = 0;
  if (p[1] && sr_as_int(I, p[1], "axis", &axis) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = NULL;
  if (sr_api_axis(I, axis, vtype(I, x)->ndim, &axis) == 0)
    r = sr_bindv(I, prim, 1, &x, "axis", sr_int(NULL, axis), "reverse", sr_bool(p[2] && sr_val_truthy(p[2])), NULL);
  sr_unref(x);
  return r;
}

static SrVal *lax_cumprod(SrInterp *I, SrArgs *a) { return lax_cum(I, a, SR_P_cumprod, "cumprod"); }
static SrVal *lax_cummax(SrInterp *I, SrArgs *a) { return lax_cum(I, a, SR_P_cummax, "cummax"); }
static SrVal *lax_cummin(SrInterp *I, SrArgs *a) { return lax_cum(I, a, SR_P_cummin, "cummin"); }
static SrVal *lax_cumlogsumexp(SrInterp *I, SrArgs *a) { return lax_cum(I, a, SR_P_cumlogsumexp, "cumlogsumexp"); }

/* ==== diff (lax_numpy.diff, a jit with static n and axis) ==== */

static SrVal *diff_body(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  int64_t n = s->v[0]->i, axis = s->v[1]->i;
  SrVal *x = sr_ref(a->v[0]);
  int k = 1;
  const SrType *t = vtype(I, x);
  if (t->ndim == 0) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, a->v[0]);
    sr_raise(I, "ValueError", "diff requires input that is at least one dimensional; got %s", b.p);
    sr_buf_free(&b);
    sr_unref(x);
    return NULL;
  }
  if (sr_api_axis(I, axis, t->ndim, &axis) < 0) return sr_unref(x), NULL;
  SrVal *parts[3];
  int np = 0;
  for (int side = 0; side < 2; side++) {
    if (!(s->flags & (1 << side))) {
      if (side == 0) parts[np++] = sr_ref(x);
      continue;
    }
    SrVal *e = a->v[k++];
    if (vtype(I, e)->ndim == 0) {
      int64_t shape[SR_MAX_RANK];
      for (int i = 0; i < t->ndim; i++) shape[i] = i == axis ? 1 : t->dims[i].size;
      e = sr_lax_broadcast_to(I, e, shape, t->ndim, NULL);
    } else {
      sr_ref(e);
    }
    if (!e) break;
    if (side == 0) {
      parts[np++] = e;
      parts[np++] = sr_ref(x);
    } else {
      parts[np++] = e;
    }
  }
  if (np > 1) {
    SrVal *seq = sr_tuple(NULL, np, parts);
    SrVal *ax = sr_int(NULL, axis);
    SrVal *args[2] = {seq, ax};
    SrVal *c = np_call(I, "concatenate", 2, args, NULL);
    sr_unref(seq);
    sr_unref(ax);
    sr_unref(x);
    if (!(x = c)) return NULL;
  } else {
    unref_all(np, parts);
  }
  for (int64_t it = 0; it < n && x; it++) {
    t = vtype(I, x);
    if (t->dims[axis].size == 0) break; /* an empty axis stays empty */
    int64_t st[SR_MAX_RANK], li[SR_MAX_RANK], st2[SR_MAX_RANK], li2[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) {
      st[i] = st2[i] = 0;
      li[i] = li2[i] = t->dims[i].size;
    }
    st[axis] = t->dims[axis].size > 0 ? 1 : 0;
    li2[axis] = t->dims[axis].size > 0 ? t->dims[axis].size - 1 : 0;
    SrVal *hi = sr_lax_slice(I, x, st, li, NULL);
    SrVal *lo = hi ? sr_lax_slice(I, x, st2, li2, NULL) : NULL;
    SrVal *d = lo ? (t->dtype == SR_BOOL ? sr_lax_binary(I, SR_P_ne, hi, lo) : np2(I, "subtract", hi, lo)) : NULL;
    sr_unref(hi);
    sr_unref(lo);
    sr_unref(x);
    x = d;
  }
  return x;
}

static SrVal *jnp_diff(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "diff", "a, n=, axis=, prepend=, append=", p) < 0) return NULL;
  int64_t n = 1, axis = -1;
  if ((p[1] && sr_as_int(I, p[1], "'n' argument of jnp.diff", &n) < 0) ||
      (p[2] && sr_as_int(I, p[2], "'axis' argument of jnp.diff", &axis) < 0))
    return NULL;
  if (n < 0) return sr_raise(I, "ValueError", "order must be non-negative but got %lld", (long long)n);
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *sv[2] = {NULL, NULL};
  Statics *st = statics_new(2, sv);
  st->v[0] = sr_int(NULL, n);
  st->v[1] = sr_int(NULL, axis);
  SrVal *dyn[3] = {x, NULL, NULL};
  int nd = 1;
  for (int side = 0; side < 2; side++)
    if (given(p[3 + side])) {
      if (!(dyn[nd++] = arr(I, p[3 + side]))) {
        unref_all(nd - 1, dyn);
        statics_free(st);
        return NULL;
      }
      st->flags |= 1 << side;
    }
  SrVal *r = n == 0 ? (statics_free(st), sr_ref(x)) : jit_with(I, "diff", diff_body, st, nd, dyn);
  unref_all(nd, dyn);
  return r;
}


/* ==== quantile, percentile, median (reductions._quantile, without
   squash_nans or weights) ==== */

enum { QS_AXIS, QS_METHOD, QS_KEEP };
enum { Q_SQUASH = 1 << 4 }; /* Statics.flags: nanquantile's squash_nans */

static const char *const q_methods[] = {"linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf", NULL};

/* The end of _quantile: the method's value of the low and high values
   vals with their weights lw and hw (q's dtype qd), reshaped to keepdim
   (nkeep dims, q's first) when keepdims, in the dtype dt. */
static SrVal *quantile_finish(SrInterp *I, const char *method, SrVal **vals, SrVal *lw, SrVal *hw, SrDtype qd,
                              int keepdims, const int64_t *keepdim, int nkeep, const SrType *qt, SrDtype dt) {
  SrVal *half = sr_float(NULL, 0.5), *r = NULL;
  if (strcmp(method, "linear") == 0) {
    SrVal *l = sr_lax_convert(I, vals[0], qd, 0, NULL), *h = l ? sr_lax_convert(I, vals[1], qd, 0, NULL) : NULL;
    SrVal *m1 = h ? sr_lax_binary(I, SR_P_mul, l, lw) : NULL, *m2 = m1 ? sr_lax_binary(I, SR_P_mul, h, hw) : NULL;
    r = m2 ? sr_lax_binary(I, SR_P_add, m1, m2) : NULL;
    SrVal *tmp[] = {l, h, m1, m2};
    unref_all(4, tmp);
  } else if (strcmp(method, "lower") == 0) {
    r = sr_ref(vals[0]);
  } else if (strcmp(method, "higher") == 0) {
    r = sr_ref(vals[1]);
  } else if (strcmp(method, "nearest") == 0) {
    SrVal *hv = sr_lax_convert(I, half, vtype(I, hw)->dtype, 0, NULL);
    SrVal *pred = hv ? sr_lax_binary(I, SR_P_le, hw, hv) : NULL;
    r = pred ? sr_lax_select(I, pred, vals[0], vals[1]) : NULL;
    sr_unref(hv);
    sr_unref(pred);
  } else {
    SrVal *sum = sr_lax_binary(I, SR_P_add, vals[0], vals[1]);
    SrVal *hv = sum ? sr_lax_convert(I, half, vtype(I, sum)->dtype, 0, NULL) : NULL;
    r = hv ? sr_lax_binary(I, SR_P_mul, sum, hv) : NULL;
    sr_unref(sum);
    sr_unref(hv);
  }
  if (r && keepdims && nkeep) {
    int64_t shape[SR_MAX_RANK + 1];
    int n = 0;
    if (qt->ndim) shape[n++] = qt->dims[0].size;
    for (int i = 0; i < nkeep; i++) shape[n++] = keepdim[i];
    SrVal *rr = sr_lax_reshape(I, r, shape, n, NULL);
    sr_unref(r);
    r = rr;
  }
  if (r) {
    SrVal *rr = sr_lax_convert(I, r, dt, 0, NULL);
    sr_unref(r);
    r = rr;
  }
  sr_unref(half);
  return r;
}

/* _quantile's squash_nans path (nanquantile) on a promoted, raveled or
   axis-checked a: NaNs (made positive) sort last; the quantile is taken
   of each slice's count of the others, its values by indexing the
   sorted a with broadcasted iotas. */
static SrVal *nan_quantile(SrInterp *I, SrVal *a0, SrVal *q, int64_t axis, int keepdims, const char *method,
                           const int64_t *keepdim, int nkeep, const SrType *qt, SrDtype dt) {
  SrDtype qd = qt->dtype, it = I->jax->enable_x64 ? SR_I64 : SR_I32;
  int qnd = qt->ndim;
  SrVal *tmp[64] = {0}, *r = NULL;
  int nt = 0;
#define KEEP(x) (tmp[nt++] = (x))
  SrVal *isn = KEEP(sr_lax_binary(I, SR_P_ne, a0, a0)), *nan = KEEP(sr_float(NULL, NAN));
  SrVal *a = isn ? KEEP(np3(I, "where", isn, nan, a0)) : NULL, *sorted = NULL;
  if (a) {
    SrVal *st = sr_bindv(I, SR_P_sort, 1, &a, "dimension", sr_int(NULL, axis), "is_stable", sr_bool(1), "num_keys",
                         sr_int(NULL, 1), NULL);
    sorted = st ? KEEP(sr_ref(st->seq.items[0])) : NULL;
    sr_unref(st);
  }
  SrVal *isn2 = sorted ? KEEP(sr_lax_binary(I, SR_P_ne, sorted, sorted)) : NULL;
  SrVal *valid = isn2 ? KEEP(sr_lax_unary(I, SR_P_not, isn2)) : NULL;
  SrVal *axv = KEEP(sr_int(NULL, axis)), *kd = KEEP(sr_bool(keepdims)), *dtv = KEEP(dtype_val(qd));
  SrVal *counts = valid ? KEEP(np_call(I, "sum", 1, &valid, "axis", axv, "dtype", dtv, "keepdims", kd, NULL)) : NULL;
  if (!counts) goto out;
  const SrType *ct = vtype(I, counts);
  int R = ct->ndim;
  int64_t qdims[SR_MAX_RANK], cdims[1] = {0}, out_shape[SR_MAX_RANK + 1];
  for (int i = 0; i < R; i++) qdims[i] = qnd + i;
  for (int i = 0; i < qnd; i++) out_shape[i] = qt->dims[i].size;
  for (int i = 0; i < R; i++) out_shape[qnd + i] = ct->dims[i].size;
  SrVal *q2 = KEEP(sr_lax_expand_dims(I, q, qdims, R));
  SrVal *c2 = q2 ? KEEP(sr_lax_expand_dims(I, counts, cdims, qnd)) : NULL;
  SrVal *of = KEEP(sr_float(NULL, 1)), *zf = KEEP(sr_float(NULL, 0));
  SrVal *one = c2 ? KEEP(sr_lax_convert(I, of, qd, 0, NULL)) : NULL, *zero = one ? KEEP(sr_lax_convert(I, zf, qd, 0, NULL)) : NULL;
  SrVal *cm1 = zero ? KEEP(sr_lax_binary(I, SR_P_sub, c2, one)) : NULL;
  SrVal *qq = cm1 ? KEEP(sr_lax_binary(I, SR_P_mul, q2, cm1)) : NULL;
  SrVal *low = qq ? KEEP(sr_lax_unary(I, SR_P_floor, qq)) : NULL;
  SrVal *high = low ? KEEP(sr_lax_unary(I, SR_P_ceil, qq)) : NULL;
  SrVal *hw = high ? KEEP(sr_lax_binary(I, SR_P_sub, qq, low)) : NULL;
  SrVal *lw = hw ? KEEP(sr_lax_binary(I, SR_P_sub, one, hw)) : NULL;
  SrVal *ix[2] = {NULL, NULL};
  for (int k = 0; k < 2 && lw; k++) {
    /* max(0, min(x, counts - 1)), as an int */
    SrVal *m1 = KEEP(sr_lax_binary(I, SR_P_sub, c2, one));
    SrVal *mn = m1 ? KEEP(sr_lax_binary(I, SR_P_min, k ? high : low, m1)) : NULL;
    SrVal *mx = mn ? KEEP(sr_lax_binary(I, SR_P_max, zero, mn)) : NULL;
    if (!mx) goto out;
    ix[k] = mx;
  }
  for (int k = 0; k < 2 && ix[1]; k++)
    if (!(ix[k] = KEEP(sr_lax_convert(I, ix[k], it, 0, NULL)))) goto out;
  if (!ix[1]) goto out;
  SrVal *index = KEEP(sr_seq(NULL, SR_V_LIST, R + 1));
  for (int d = 0; d < R; d++) {
    SrVal *io = sr_lax_iota(I, it, out_shape, qnd + R, d + qnd, NULL);
    if (!io) goto out;
    sr_seq_push(NULL, index, io);
  }
  SrVal *vals[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    /* index[axis] = low with keepdims, else index.insert(axis, low) */
    SrVal *key = sr_seq(NULL, SR_V_TUPLE, R + 1);
    for (int d = 0, j = 0; d < R + !keepdims; d++)
      sr_seq_push(NULL, key, sr_ref(d == axis ? ix[k] : index->seq.items[keepdims ? d : j++]));
    /* a[tuple(index)] */
    SrVal *gi = sr_lookup_qualname("jax.numpy._getitem");
    SrVal *ga[2] = {sorted, key};
    SrArgs gargs = {2, ga, 0, NULL, NULL, NULL};
    vals[k] = gi ? KEEP(sr_call(I, gi, &gargs)) : NULL;
    sr_unref(key);
    if (!vals[k]) goto out;
  }
  r = quantile_finish(I, method, vals, lw, hw, qd, keepdims, keepdim, nkeep, qt, dt);
out:
  unref_all(nt, tmp);
#undef KEEP
  return r;
}

/* _quantile's method='inverted_cdf' (with or without weights) on a
   (inexact, real, the reduction along axis after _quantile's axis
   handling) and w (a's shape, or NULL): the first index whose cumulative
   weight reaches q * total, NaN where a weight is bad or (nanquantile:
   all, quantile: any) data is NaN. */
static SrVal *inverted_cdf(SrInterp *I, SrVal *a, SrVal *q, SrVal *w, int64_t axis, int keepdims, int squash,
                           const int64_t *keepdim, int nkeep) {
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
#define K(v) sr_nn_keep(s, v)
  const SrType *at = vtype(I, a), *qt = vtype(I, q);
  int qnd = qt->ndim, nd = at->ndim;
  int64_t asize = at->dims[axis].size;
  SrDtype qd = qt->dtype, adt = at->dtype;
  SrVal *axv = sr_nn_int(s, axis), *tru = K(sr_bool(1)), *kd = K(sr_bool(keepdims));
  SrVal *nan = sr_nn_float(s, NAN);
  /* NaNs positive so they sort last (squash), or a slice with any NaN all NaN */
  SrVal *isn = K(sr_lax_binary(I, SR_P_ne, a, a));
  if (!isn) return sr_nn_done(s, NULL);
  if (squash) {
    a = sr_nn_call3(s, "jax.numpy.where", isn, nan, a);
  } else {
    const char *kw[2] = {"axis", "keepdims"};
    SrVal *kv[2] = {axv, tru};
    SrVal *anyn = sr_nn_call(s, "jax.numpy.any", 1, &isn, 2, kw, kv);
    a = anyn ? sr_nn_call3(s, "jax.numpy.where", anyn, nan, a) : NULL;
  }
  if (!a) return sr_nn_done(s, NULL);
  if (!w) {
    /* weights = lax.full_like(a, 1.0) */
    const char *kw[1] = {"dtype"};
    SrVal *kv[1] = {K(sr_dtype_val(NULL, adt))};
    SrVal *one = sr_nn_float(s, 1.0);
    SrVal *v[2] = {a, one};
    w = sr_nn_call(s, "jax.numpy.full_like", 2, v, 1, kw, kv);
    SrVal *st = w ? K(sr_bindv(I, SR_P_sort, 1, &a, "dimension", sr_int(NULL, axis), "is_stable", sr_bool(1),
                                "num_keys", sr_int(NULL, 1), NULL)) : NULL;
    a = st ? K(sr_ref(st->seq.items[0])) : NULL;
  } else {
    SrVal *in[2] = {a, w};
    SrVal *st = K(sr_bindv(I, SR_P_sort, 2, in, "dimension", sr_int(NULL, axis), "is_stable", sr_bool(1), "num_keys",
                           sr_int(NULL, 1), NULL));
    a = st ? K(sr_ref(st->seq.items[0])) : NULL;
    w = st ? K(sr_ref(st->seq.items[1])) : NULL;
  }
  if (!a || !w) return sr_nn_done(s, NULL);
  SrVal *zeros = sr_nn_call1(s, "jax.numpy.zeros_like", w);
  SrVal *bad = zeros ? sr_nn_op(s, SR_OP_BITOR, sr_nn_op(s, SR_OP_LT, w, zeros), K(sr_lax_binary(I, SR_P_ne, w, w))) : NULL;
  SrVal *nan_data = bad ? K(sr_lax_binary(I, SR_P_ne, a, a)) : NULL;
  SrVal *clean = nan_data ? sr_nn_call3(s, "jax.numpy.where", sr_nn_op(s, SR_OP_BITOR, bad, nan_data), zeros, w) : NULL;
  const char *kax[1] = {"axis"};
  SrVal *cum = clean ? sr_nn_call(s, "jax.numpy.cumsum", 1, &clean, 1, kax, &axv) : NULL;
  if (!cum) return sr_nn_done(s, NULL);
  /* total_weight = index_in_dim(cum, -1, axis, keepdims) */
  SrVal *lastv = sr_nn_int(s, asize - 1);
  const char *ktk[2] = {"axis", "keepdims"};
  SrVal *tv[2] = {cum, lastv};
  SrVal *tkv[2] = {axv, kd};
  SrVal *total = NULL;
  {
    SrVal *idx1 = K(sr_int_tuple((int64_t[]){asize - 1}, 1));
    SrVal *tk[2] = {cum, idx1};
    SrVal *t = sr_nn_call(s, "jax.numpy.take", 2, tk, 1, kax, &axv);
    total = t && !keepdims ? sr_nn_call2(s, "jax.numpy.squeeze", t, axv) : t;
  }
  (void)tv;
  (void)tkv;
  (void)ktk;
  if (!total) return sr_nn_done(s, NULL);
  const SrType *tt = vtype(I, total);
  int tnd = tt->ndim;
  /* tw_f = expand_dims(total, range(q_ndim)); q_f = q reshaped to q.shape + (1,) * total.ndim */
  int64_t lead[SR_MAX_RANK], qshape[SR_MAX_RANK + 1];
  for (int i = 0; i < qnd; i++) lead[i] = i;
  SrVal *twf = qnd ? K(sr_lax_expand_dims(I, total, lead, qnd)) : total;
  for (int i = 0; i < qnd; i++) qshape[i] = qt->dims[i].size;
  for (int i = 0; i < tnd; i++) qshape[qnd + i] = 1;
  SrVal *qc = K(sr_lax_convert(I, q, adt, 0, NULL));
  SrVal *qf = qc ? K(sr_lax_reshape(I, qc, qshape, qnd + tnd, NULL)) : NULL;
  SrVal *target = qf && twf ? sr_nn_op(s, SR_OP_MUL, qf, twf) : NULL;
  int64_t ax2 = axis + qnd;
  SrVal *taln = target && !keepdims ? K(sr_lax_expand_dims(I, target, &ax2, 1)) : target;
  SrVal *cwf = qnd ? K(sr_lax_expand_dims(I, cum, lead, qnd)) : cum;
  SrVal *isless = taln && cwf ? sr_nn_op(s, SR_OP_LT, cwf, taln) : NULL;
  SrDtype it = I->jax->enable_x64 ? SR_I64 : SR_I32;
  SrVal *il = isless ? K(sr_lax_convert(I, isless, it, 0, NULL)) : NULL;
  SrVal *ax2v = sr_nn_int(s, ax2);
  SrVal *skv[2] = {ax2v, kd};
  SrVal *idx = il ? sr_nn_call(s, "jax.numpy.sum", 1, &il, 2, ktk, skv) : NULL;
  if (!idx) return sr_nn_done(s, NULL);
  /* valid_counts, clipped indices */
  SrVal *valid;
  if (squash) {
    SrVal *nn = K(sr_lax_unary(I, SR_P_not, nan_data));
    const char *k3[3] = {"axis", "dtype", "keepdims"};
    SrVal *v3[3] = {axv, K(sr_dtype_val(NULL, qd)), kd};
    valid = nn ? sr_nn_call(s, "jax.numpy.sum", 1, &nn, 3, k3, v3) : NULL;
  } else {
    const char *k1[1] = {"dtype"};
    SrVal *v1[1] = {K(sr_dtype_val(NULL, qd))};
    SrVal *fv[2] = {total, sr_nn_int(s, asize)};
    valid = sr_nn_call(s, "jax.numpy.full_like", 2, fv, 1, k1, v1);
  }
  if (!valid) return sr_nn_done(s, NULL);
  SrVal *limit = sr_nn_op(s, SR_OP_SUB, valid, sr_nn_int(s, 1));
  SrVal *maxi = limit ? K(sr_lax_convert(I, limit, it, 0, NULL)) : NULL;
  SrVal *maxf = maxi && qnd ? K(sr_lax_expand_dims(I, maxi, lead, qnd)) : maxi;
  SrVal *mn = maxf ? sr_nn_call2(s, "jax.numpy.minimum", idx, maxf) : NULL;
  idx = mn ? sr_nn_call2(s, "jax.numpy.maximum", mn, sr_nn_int(s, 0)) : NULL;
  SrVal *take = idx && keepdims ? sr_nn_call2(s, "jax.numpy.squeeze", idx, ax2v) : idx;
  if (!take) return sr_nn_done(s, NULL);
  SrVal *res;
  if (qnd == 0) {
    SrVal *ti = K(sr_lax_expand_dims(I, take, &axis, 1));
    SrVal *tv2[2] = {a, ti};
    SrVal *r0 = ti ? sr_nn_call(s, "jax.numpy.take_along_axis", 2, tv2, 1, kax, &axv) : NULL;
    res = r0 ? sr_nn_call2(s, "jax.numpy.squeeze", r0, axv) : NULL;
  } else {
    int tn = vtype(I, take)->ndim, np_ = 0;
    int64_t perm[SR_MAX_RANK], inv[SR_MAX_RANK];
    for (int i = qnd; i < qnd + axis; i++) perm[np_++] = i;
    for (int i = 0; i < qnd; i++) perm[np_++] = i;
    for (int i = qnd + (int)axis; i < tn; i++) perm[np_++] = i;
    for (int i = 0; i < tn; i++) inv[perm[i]] = i;
    SrVal *ti = K(sr_lax_transpose(I, take, perm, tn));
    SrVal *tv2[2] = {a, ti};
    SrVal *r0 = ti ? sr_nn_call(s, "jax.numpy.take_along_axis", 2, tv2, 1, kax, &axv) : NULL;
    res = r0 ? K(sr_lax_transpose(I, r0, inv, tn)) : NULL;
  }
  if (res && keepdims) res = K(sr_lax_expand_dims(I, res, &ax2, 1));
  /* force NaN */
  SrVal *kv2[2] = {axv, kd};
  SrVal *anyb = res ? sr_nn_call(s, "jax.numpy.any", 1, &bad, 2, ktk, kv2) : NULL;
  SrVal *force;
  if (squash) {
    SrVal *z = anyb ? sr_nn_call1(s, "jax.numpy.zeros_like", valid) : NULL;
    force = z ? sr_nn_op(s, SR_OP_BITOR, anyb, sr_nn_op(s, SR_OP_EQ, valid, z)) : NULL;
  } else {
    SrVal *anyn2 = anyb ? sr_nn_call(s, "jax.numpy.any", 1, &nan_data, 2, ktk, kv2) : NULL;
    force = anyn2 ? sr_nn_op(s, SR_OP_BITOR, anyb, anyn2) : NULL;
  }
  SrVal *ff = force && qnd ? K(sr_lax_expand_dims(I, force, lead, qnd)) : force;
  res = ff ? sr_nn_call3(s, "jax.numpy.where", ff, nan, res) : NULL;
  if (res && keepdims && nkeep) {
    int64_t shape[SR_MAX_RANK + 1];
    int n = 0;
    if (qnd) shape[n++] = qt->dims[0].size;
    for (int i = 0; i < nkeep; i++) shape[n++] = keepdim[i];
    res = K(sr_lax_reshape(I, res, shape, n, NULL));
  }
  res = res ? K(sr_lax_convert(I, res, adt, 0, NULL)) : NULL;
  (void)nd;
#undef K
  return sr_nn_done(s, res);
}

/* the body of jit quantile: (a, q) */
static SrVal *quantile_body(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  const char *method = s->v[QS_METHOD] ? s->v[QS_METHOD]->str.s : "linear";
  int keepdims = s->v[QS_KEEP] && sr_val_truthy(s->v[QS_KEEP]);
  SrVal *x = a->v[0], *q = a->v[1], *w = NULL;
  const SrType *t = vtype(I, x);
  SrVal *ax = NULL;
  if (a->n > 2) {
    /* weights: real, method='inverted_cdf' only, promoted with a */
    const SrType *wt = vtype(I, a->v[2]);
    if (sr_dtype_kind(wt->dtype) == SR_DK_COMPLEX) return sr_raise(I, "ValueError", "Weights cannot be complex types.");
    if (strcmp(method, "inverted_cdf") != 0)
      return sr_raise(I, "NotImplementedError", "%s doesn't support weights. Only method 'inverted_cdf' supports weights.",
                      method);
    SrVal *pa[2] = {x, a->v[2]};
    int weak;
    SrDtype d = sr_jnp_result_dtype(I, 2, pa, &weak);
    if (!sr_dtype_is_inexact(d)) d = default_float(I);
    if (!(ax = sr_lax_convert(I, x, d, 0, NULL))) return NULL;
    if (!(w = sr_lax_convert(I, a->v[2], d, 0, NULL))) {
      sr_unref(ax);
      return NULL;
    }
    const SrType *at = vtype(I, ax);
    wt = vtype(I, w);
    int same = at->ndim == wt->ndim;
    for (int i = 0; same && i < at->ndim; i++) same = at->dims[i].size == wt->dims[i].size;
    if (!same) {
      int64_t ax1;
      if (!given(s->v[QS_AXIS])) {
        sr_unref(ax);
        sr_unref(w);
        return sr_raise(I, "ValueError", "Weights shape must match 'a' shape when axis is None.");
      }
      if (s->v[QS_AXIS]->kind != SR_V_INT || sr_api_axis(I, s->v[QS_AXIS]->i, at->ndim, &ax1) < 0 || wt->ndim != 1 ||
          wt->dims[0].size != at->dims[ax1].size) {
        sr_unref(ax);
        sr_unref(w);
        return I->exc ? NULL : sr_raise(I, "NotImplementedError", "weights of another shape than a's or its axis'");
      }
      int64_t shape[SR_MAX_RANK];
      for (int i = 0; i < at->ndim; i++) shape[i] = at->dims[i].size;
      SrVal *b = sr_lax_broadcast_in_dim(I, w, shape, at->ndim, &ax1, 1, NULL);
      sr_unref(w);
      if (!(w = b)) {
        sr_unref(ax);
        return NULL;
      }
    }
  } else if (!sr_dtype_is_inexact(t->dtype)) {
    if (!(ax = sr_lax_convert(I, x, default_float(I), t->weak, NULL))) return NULL;
  } else {
    ax = sr_ref(x);
  }
  t = vtype(I, ax);
  if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    sr_unref(ax);
    sr_unref(w);
    return sr_raise(I, "ValueError", "quantile does not support complex input, as the operation is poorly defined.");
  }
  int64_t keepdim[SR_MAX_RANK + 1];
  int nkeep = 0;
  int64_t axis = 0;
  if (!given(s->v[QS_AXIS])) {
    if (keepdims)
      for (int i = 0; i < t->ndim; i++) keepdim[nkeep++] = 1;
    int64_t n = sr_type_numel(t);
    SrVal *r = sr_lax_reshape(I, ax, &n, 1, NULL);
    sr_unref(ax);
    if (!(ax = r)) {
      sr_unref(w);
      return NULL;
    }
    if (w) {
      SrVal *rw = sr_lax_reshape(I, w, &n, 1, NULL);
      sr_unref(w);
      if (!(w = rw)) {
        sr_unref(ax);
        return NULL;
      }
    }
    t = vtype(I, ax);
  } else if (s->v[QS_AXIS]->kind == SR_V_TUPLE) {
    /* the axes moved last and flattened into one (lax.reshape with
       dimensions); keepdims reshapes to a's shape with them 1 */
    int nd = t->ndim, nax = (int)s->v[QS_AXIS]->seq.n, isax[SR_MAX_RANK] = {0};
    int64_t dims[SR_MAX_RANK], shape[SR_MAX_RANK + 1], touch = 1;
    int ns = 0;
    for (int i = 0; i < nax; i++) {
      int64_t v;
      if (sr_as_int(I, s->v[QS_AXIS]->seq.items[i], "axis", &v) < 0 || sr_api_axis(I, v, nd, &v) < 0) {
        sr_unref(ax);
        return NULL;
      }
      if (isax[v]) {
        sr_unref(ax);
        return sr_raise(I, "ValueError", "repeated axis");
      }
      isax[v] = 1;
    }
    for (int i = 0; i < nd; i++) {
      dims[i] = i;
      keepdim[nkeep++] = isax[i] ? 1 : t->dims[i].size;
    }
    for (int i = 0, k = 0; i < nd; i++)
      if (!isax[i]) {
        int64_t tmp = dims[k];
        dims[k] = dims[i];
        dims[i] = tmp;
        k++;
      }
    for (int i = 0; i < nd; i++)
      if (!isax[i]) shape[ns++] = t->dims[i].size;
      else touch *= t->dims[i].size;
    shape[ns++] = touch;
    SrVal *sh = sr_int_tuple(shape, ns), *dm = sr_int_tuple(dims, nd);
    SrVal *rv[3] = {ax, sh, dm};
    SrVal *fn = sr_lookup_qualname("jax.lax.reshape");
    SrArgs ra = {3, rv, 0, NULL, NULL, NULL};
    SrVal *r = fn ? sr_call(I, fn, &ra) : sr_raise(I, "NotImplementedError", "jax.lax.reshape is not available");
    SrVal *rw = NULL;
    if (r && w) {
      SrVal *wv[3] = {w, sh, dm};
      SrArgs wa = {3, wv, 0, NULL, NULL, NULL};
      rw = sr_call(I, fn, &wa);
    }
    sr_unref(sh);
    sr_unref(dm);
    sr_unref(ax);
    if (w) {
      sr_unref(w);
      w = rw;
      if (!w) {
        sr_unref(r);
        r = NULL;
      }
    }
    if (!(ax = r)) return NULL;
    t = vtype(I, ax);
    axis = t->ndim - 1;
  } else if (s->v[QS_AXIS]->kind != SR_V_INT) {
    sr_unref(ax);
    return sr_raise(I, "NotImplementedError", "jnp.quantile over a tuple of axes is not supported");
  } else if (sr_api_axis(I, s->v[QS_AXIS]->i, t->ndim, &axis) < 0) {
    sr_unref(ax);
    return NULL;
  }
  const SrType *qt = vtype(I, q);
  if (qt->ndim > 1) {
    SrBuf b = SR_BUF_INIT;
    sr_shape_str(&b, qt);
    sr_raise(I, "ValueError", "q must be have rank <= 1, got shape %s", sr_buf_str(&b));
    sr_buf_free(&b);
    sr_unref(ax);
    sr_unref(w);
    return NULL;
  }
  if (strcmp(method, "inverted_cdf") == 0) {
    SrVal *r = inverted_cdf(I, ax, q, w, axis, keepdims, (s->flags & Q_SQUASH) != 0, keepdim, nkeep);
    sr_unref(ax);
    sr_unref(w);
    return r;
  }
  int qnd = qt->ndim, nd = t->ndim;
  SrDtype qd = qt->dtype;
  int64_t size = t->dims[axis].size;
  if (s->flags & Q_SQUASH) {
    SrVal *r = nan_quantile(I, ax, q, axis, keepdims, method, keepdim, nkeep, qt, t->dtype);
    sr_unref(ax);
    return r;
  }
  /* a = _where(any(isnan(a), axis, keepdims=True), nan, a); a = sort(a) */
  SrVal *isn = sr_lax_binary(I, SR_P_ne, ax, ax);
  SrVal *axv = sr_int(NULL, axis), *tru = sr_bool(1), *nan = sr_float(NULL, NAN);
  SrVal *anyn = isn ? np_call(I, "any", 1, &isn, "axis", axv, "keepdims", tru, NULL) : NULL;
  SrVal *an = anyn ? np3(I, "where", anyn, nan, ax) : NULL;
  SrVal *sorted = NULL;
  if (an) {
    SrVal *st = sr_bindv(I, SR_P_sort, 1, &an, "dimension", sr_int(NULL, axis), "is_stable", sr_bool(1), "num_keys",
                         sr_int(NULL, 1), NULL);
    sorted = st ? sr_ref(st->seq.items[0]) : NULL;
    sr_unref(st);
  }
  SrVal *tmp0[] = {isn, axv, tru, nan, anyn, an, ax};
  unref_all(7, tmp0);
  if (!sorted) return NULL;
  SrVal *nm1v = sr_float(NULL, (double)size - 1);
  SrVal *nm1 = sr_lax_convert(I, nm1v, qd, 0, NULL);
  SrVal *zf = sr_float(NULL, 0), *of = sr_float(NULL, 1), *half = sr_float(NULL, 0.5);
  SrVal *z = nm1 ? sr_lax_convert(I, zf, qd, 0, NULL) : NULL, *one = z ? sr_lax_convert(I, of, qd, 0, NULL) : NULL;
  SrVal *qq = one ? sr_lax_binary(I, SR_P_mul, q, nm1) : NULL;
  SrVal *low = qq ? sr_lax_unary(I, SR_P_floor, qq) : NULL;
  SrVal *high = low ? sr_lax_unary(I, SR_P_ceil, qq) : NULL;
  SrVal *hw = high ? sr_lax_binary(I, SR_P_sub, qq, low) : NULL;
  SrVal *lw = hw ? sr_lax_binary(I, SR_P_sub, one, hw) : NULL;
  SrVal *lc = NULL, *hc = NULL, *li = NULL, *hi = NULL;
  if (lw) {
    SrVal *in[3] = {z, low, nm1};
    lc = sr_bindv(I, SR_P_clamp, 3, in, NULL);
    in[1] = high;
    hc = lc ? sr_bindv(I, SR_P_clamp, 3, in, NULL) : NULL;
    SrDtype it = I->jax->enable_x64 ? SR_I64 : SR_I32;
    li = hc ? sr_lax_convert(I, lc, it, 0, NULL) : NULL;
    hi = li ? sr_lax_convert(I, hc, it, 0, NULL) : NULL;
  }
  /* the gather of each index along axis */
  SrVal *vals[2] = {NULL, NULL};
  if (hi) {
    int64_t sizes[SR_MAX_RANK], offs[SR_MAX_RANK];
    int noff = 0;
    for (int i = 0; i < nd; i++) sizes[i] = i == axis ? 1 : t->dims[i].size;
    for (int i = qnd; i < (keepdims ? nd + qnd : nd + qnd - 1); i++) offs[noff++] = i;
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "GatherDimensionNumbers(offset_dims=");
    sr_ints_str(&b, offs, noff);
    sr_buf_puts(&b, ", collapsed_slice_dims=");
    sr_ints_str(&b, &axis, keepdims ? 0 : 1);
    sr_buf_puts(&b, ", start_index_map=");
    sr_ints_str(&b, &axis, 1);
    sr_buf_puts(&b, ", operand_batching_dims=(), start_indices_batching_dims=())");
    for (int k = 0; k < 2; k++) {
      int64_t last = qnd;
      SrVal *ix = sr_lax_expand_dims(I, k ? hi : li, &last, 1);
      SrVal *in[2] = {sorted, ix};
      if (ix)
        vals[k] = sr_bindv(I, SR_P_gather, 2, in, "dimension_numbers", sr_word(NULL, sr_buf_str(&b), b.len),
                           "fill_value", sr_none(), "indices_are_sorted", sr_bool(0), "mode",
                           sr_word(NULL, "GatherScatterMode.PROMISE_IN_BOUNDS", 35), "slice_sizes",
                           sr_int_tuple(sizes, nd), "unique_indices", sr_bool(0), NULL);
      sr_unref(ix);
      if (!vals[k]) break;
    }
    sr_buf_free(&b);
  }
  SrVal *r = NULL;
  if (vals[1] && qnd == 1) {
    const SrType *vt = vtype(I, vals[0]);
    int64_t shape[SR_MAX_RANK], zero = 0;
    for (int i = 0; i < vt->ndim; i++) shape[i] = vt->dims[i].size;
    SrVal *l2 = sr_lax_broadcast_in_dim(I, lw, shape, vt->ndim, &zero, 1, NULL);
    SrVal *h2 = l2 ? sr_lax_broadcast_in_dim(I, hw, shape, vt->ndim, &zero, 1, NULL) : NULL;
    sr_unref(lw);
    sr_unref(hw);
    lw = l2;
    hw = h2;
  }
  if (vals[1] && hw) r = quantile_finish(I, method, vals, lw, hw, qd, keepdims, keepdim, nkeep, qt, t->dtype);
  SrVal *tmp[] = {sorted, nm1v, nm1, zf, of, half, z, one, qq, low, high, hw, lw, lc, hc, li, hi, vals[0], vals[1]};
  unref_all((int)(sizeof tmp / sizeof *tmp), tmp);
  return r;
}

/* The statics of quantile, median and percentile, checked. */
static Statics *q_statics(SrInterp *I, const char *name, SrVal *axis, SrVal *method, SrVal *keepdims, SrVal *out,
                          SrVal *overwrite) {
  if (given(out) || (overwrite && sr_val_truthy(overwrite))) {
    /* median and percentile pass both on to quantile, which raises */
    sr_raise(I, "ValueError", "jax.numpy.%s does not support overwrite_input=True or out != None",
             strncmp(name, "nan", 3) == 0 ? "nanquantile" : "quantile");
    return NULL;
  }
  if (method) {
    const char *m = sr_as_str(I, method, "method");
    if (!m) return NULL;
    int ok = 0;
    for (int i = 0; q_methods[i]; i++) ok |= strcmp(m, q_methods[i]) == 0;
    if (!ok) {
      if (strcmp(m, "inverted_cdf") == 0)
        sr_raise(I, "NotImplementedError", "jnp.%s: method='inverted_cdf' is not supported", name);
      else
        sr_raise(I, "ValueError",
                 "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'");
      return NULL;
    }
  }
  SrVal *sv[3] = {given(axis) ? axis : NULL, method, keepdims};
  return statics_new(3, sv);
}

/* The jit a percentile or median body calls: quantile's, or nanquantile's
   where its own statics squash NaNs. */
static SrVal *inner_quantile(SrInterp *I, const Statics *s, SrVal **sv, SrVal **dyn, int ndyn) {
  Statics *st = statics_new(3, sv);
  st->flags |= s->flags & Q_SQUASH;
  return jit_with(I, (s->flags & Q_SQUASH) ? "nanquantile" : "quantile", quantile_body, st, ndyn, dyn);
}

/* percentile's internal_quantile(x, y): the quantile jit on what
   auto_axes passes */
static SrVal *internal_quantile(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  if (a->n != 2) return sr_raise(I, "TypeError", "internal_quantile() takes 2 positional arguments");
  return inner_quantile(I, s, s->v, a->v, a->n);
}

/* the body of jit percentile and nanpercentile: (nan)quantile(a, q / 100);
   percentile's out_sharding (statics slot 3) through auto_axes over the
   out_sharding mesh's Explicit axes */
static SrVal *percentile_body(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  SrVal *h = sr_int(NULL, 100);
  SrVal *q = np2(I, "true_divide", a->v[1], h);
  sr_unref(h);
  if (!q) return NULL;
  SrVal *dyn[3] = {a->v[0], q, a->n > 2 ? a->v[2] : NULL}, *r = NULL;
  SrVal *sh = s->v[3];
  if (!sh) {
    r = inner_quantile(I, s, s->v, dyn, a->n > 2 ? 3 : 2);
  } else {
    Statics *is = statics_new(3, s->v);
    is->flags = s->flags;
    SrVal *fn = sr_builtin_with("internal_quantile", internal_quantile, is, statics_free);
    SrVal *aa = sr_lookup_qualname("jax.sharding.auto_axes");
    if (!aa) {
      sr_raise(I, "NotImplementedError", "out_sharding= needs jax.sharding.auto_axes");
    } else {
      const SrMesh *m = sh->sh.mesh;
      SrVal *axes = sr_api_axes_tuple(m, sr_mesh_axes_of_type(m, SR_AXIS_EXPLICIT));
      const char *kw[2] = {sr_intern_cstr("out_sharding"), sr_intern_cstr("axes")};
      SrVal *kwv[2] = {sh, axes};
      SrArgs da = {1, &fn, 2, kw, kwv, NULL};
      SrVal *dec = sr_call(I, aa, &da);
      if (dec) {
        SrArgs ca = {2, dyn, 0, NULL, NULL, NULL};
        r = sr_call(I, dec, &ca);
        sr_unref(dec);
      }
      sr_unref(axes);
    }
    sr_unref(fn);
  }
  sr_unref(q);
  return r;
}

/* the body of jit median and nanmedian: (nan)quantile(a, 0.5,
   method='midpoint') */
static SrVal *median_body(SrInterp *I, SrArgs *a) {
  Statics *s = statics_of(I);
  SrVal *m = sr_str(NULL, "midpoint", 8);
  SrVal *sv[3] = {s->v[QS_AXIS], m, s->v[QS_KEEP]};
  SrVal *h = sr_float(NULL, 0.5);
  SrVal *hq = arr(I, h);
  SrVal *dyn[2] = {a->v[0], hq};
  SrVal *r = hq ? inner_quantile(I, s, sv, dyn, 2) : NULL;
  sr_unref(m);
  sr_unref(h);
  sr_unref(hq);
  return r;
}

/* quantile, percentile and their nan forms (squash: NaNs left out), each
   a jit of its own name around body */
static SrVal *q_front(SrInterp *I, SrArgs *a, const char *name, SrBuiltinFn body, int squash) {
  SrVal *p[9] = {NULL};
  /* percentile alone takes out_sharding */
  int with_sh = strcmp(name, "percentile") == 0;
  if (sr_args_parse(I, a, name,
                    with_sh ? "a, q, axis=, out=, overwrite_input=, method=, keepdims=, *, weights=, out_sharding="
                            : "a, q, axis=, out=, overwrite_input=, method=, keepdims=, *, weights=",
                    p) < 0)
    return NULL;
  SrVal *sh = NULL;
  if (given(p[8]) && sr_api_canon_sharding(I, p[8], "jnp.percentile", &sh) < 0) return NULL;
  Statics *st = q_statics(I, name, p[2], p[5], p[6], p[3], p[4]);
  if (!st) {
    sr_unref(sh);
    return NULL;
  }
  st->v[3] = sh;
  if (squash) st->flags |= Q_SQUASH;
  SrVal *dyn[3] = {arr(I, p[0]), NULL, NULL};
  int nd = given(p[7]) ? 3 : 2;
  if (dyn[0]) dyn[1] = arr(I, p[1]);
  if (dyn[1] && nd == 3 && !(dyn[2] = arr(I, p[7]))) {
    sr_unref(dyn[1]);
    dyn[1] = NULL;
  }
  SrVal *r = dyn[1] ? jit_with(I, name, body, st, nd, dyn) : (statics_free(st), NULL);
  unref_all(nd, dyn);
  return r;
}

/* median and nanmedian */
static SrVal *m_front(SrInterp *I, SrArgs *a, const char *name, int squash) {
  SrVal *p[5];
  if (sr_args_parse(I, a, name, "a, axis=, out=, overwrite_input=, keepdims=", p) < 0) return NULL;
  Statics *st = q_statics(I, name, p[1], NULL, p[4], p[2], p[3]);
  if (!st) return NULL;
  if (squash) st->flags |= Q_SQUASH;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? jit_with(I, name, median_body, st, 1, &x) : (statics_free(st), NULL);
  sr_unref(x);
  return r;
}

static SrVal *jnp_quantile(SrInterp *I, SrArgs *a) { return q_front(I, a, "quantile", quantile_body, 0); }
static SrVal *jnp_percentile(SrInterp *I, SrArgs *a) { return q_front(I, a, "percentile", percentile_body, 0); }
static SrVal *jnp_nanquantile(SrInterp *I, SrArgs *a) { return q_front(I, a, "nanquantile", quantile_body, 1); }
static SrVal *jnp_nanpercentile(SrInterp *I, SrArgs *a) { return q_front(I, a, "nanpercentile", percentile_body, 1); }
static SrVal *jnp_median(SrInterp *I, SrArgs *a) { return m_front(I, a, "median", 0); }
static SrVal *jnp_nanmedian(SrInterp *I, SrArgs *a) { return m_front(I, a, "nanmedian", 1); }

void sr_jnp_stats_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.var", jnp_var,
       "var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None): "
       "jit[name=_var]"},
      {"jax.numpy.std", jnp_std,
       "std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None): "
       "jit[name=_std], sqrt of var"},
      {"jax.numpy.nanmax", jnp_nanmax, "nanmax(a, axis=None, keepdims=False, initial=None, where=None): jit[name=nanmax]"},
      {"jax.numpy.nanmin", jnp_nanmin, "nanmin(a, axis=None, keepdims=False, initial=None, where=None): jit[name=nanmin]"},
      {"jax.numpy.nansum", jnp_nansum, "nansum(a, axis=None, dtype=None, keepdims=False, initial=None, where=None): jit[name=nansum]"},
      {"jax.numpy.nanprod", jnp_nanprod, "nanprod(a, axis=None, dtype=None, keepdims=False, initial=None, where=None): jit[name=nanprod]"},
      {"jax.numpy.nanmean", jnp_nanmean, "nanmean(a, axis=None, dtype=None, keepdims=False, where=None): jit[name=nanmean]"},
      {"jax.numpy.average", jnp_average, "average(a, axis=None, weights=None, returned=False, keepdims=False)"},
      {"jax.numpy.diff", jnp_diff, "diff(a, n=1, axis=-1, prepend=None, append=None): jit[name=diff] of slices"},
      {"jax.numpy.nanquantile", jnp_nanquantile,
       "nanquantile(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False): "
       "jit[name=nanquantile], the quantile of the non-NaN values"},
      {"jax.numpy.nanpercentile", jnp_nanpercentile,
       "nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False): "
       "jit[name=nanpercentile], nanquantile(a, q / 100)"},
      {"jax.numpy.nanmedian", jnp_nanmedian,
       "nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False): jit[name=nanmedian], a midpoint "
       "nanquantile"},
      {"jax.numpy.quantile", jnp_quantile,
       "quantile(a, q, axis=None, method='linear', keepdims=False, *, weights=None): jit[name=quantile]: sort, then "
       "gathers (inverted_cdf: the first index whose cumulative weight reaches q)"},
      {"jax.numpy.percentile", jnp_percentile,
       "percentile(a, q, axis=None, method='linear', keepdims=False, *, out_sharding=None): jit[name=percentile], quantile of q / 100"},
      {"jax.numpy.median", jnp_median, "median(a, axis=None, keepdims=False): jit[name=median], a midpoint quantile"},
      {"jax.lax.cumprod", lax_cumprod, "cumprod(operand, axis=0, reverse=False)"},
      {"jax.lax.cummax", lax_cummax, "cummax(operand, axis=0, reverse=False)"},
      {"jax.lax.cumlogsumexp", lax_cumlogsumexp, "cumlogsumexp(operand, axis=0, reverse=False): log(cumsum(exp(x))), stably"},
      {"jax.lax.cummin", lax_cummin, "cummin(operand, axis=0, reverse=False)"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
