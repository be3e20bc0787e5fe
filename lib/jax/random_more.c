/* random_more.c: jax.random's randint, bernoulli, rademacher, gumbel,
 * categorical, permutation and choice (issue 15), written as
 * jax/_src/random/core.py writes them, each a jit of the same name
 * (_randint, _bernoulli, _rademacher, _gumbel, _shuffle) over the
 * primitives JAX binds there: random_split and random_bits on the typed
 * key, the lax ops on the bits, jax.random.uniform for the floats, sort
 * (lax.sort_key_val) for the shuffles, argmax and top_k for the Gumbel
 * tricks.  The values are therefore JAX's, bit for bit, for the same key
 * in the default (partitionable threefry) mode; tests/random15_values.py
 * computes them in numpy on a pure-Python threefry.
 *
 * mode='high' of bernoulli and gumbel (and categorical's and choice's
 * gumbel) is _bernoulli's and _gumbel's two-uniform draw.  Not here:
 * gumbel's mode='highest' (lax.clz), out_sharding= (NotImplementedError).  choice with p= and replace=True
 * draws by jnp.searchsorted (numpy_searchsorted.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "jax/random.h"
#include "py/ast.h"
#include "py/objects.h"
#include "text/print_val.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define KEEP(v) sr_nn_keep(s, (v))

/* The static arguments of one of the jits. */
typedef struct RArgs {
  int64_t shape[SR_MAX_RANK];
  int nd;
  SrDtype dt;
  int64_t axis;
  int flag; /* categorical's replace */
} RArgs;

static RArgs *rargs(const int64_t *shape, int nd, SrDtype dt, int64_t axis) {
  RArgs *r = sr_xcalloc(1, sizeof *r);
  if (nd) memcpy(r->shape, shape, (size_t)nd * sizeof *shape);
  r->nd = nd;
  r->dt = dt;
  r->axis = axis;
  return r;
}

static SrDtype default_int(SrInterp *I) { return I->jax->enable_x64 ? SR_I64 : SR_I32; }
static SrDtype default_float(SrInterp *I) { return I->jax->enable_x64 ? SR_F64 : SR_F32; }

/* A numpy scalar of dtype dt (strongly typed), kept by the scope. */
static SrVal *lit(SrNnScope *s, SrDtype dt, double re, int64_t iv) {
  return KEEP(sr_array_scalar(sr_type_array(dt, 0, NULL), re, 0, iv));
}

static SrVal *shape_tuple(SrNnScope *s, const int64_t *shape, int nd) { return KEEP(sr_int_tuple(shape, nd)); }

static const SrType *type_of(SrNnScope *s, SrVal *v) { return v ? sr_value_type(s->I, v) : NULL; }

/* x[i] for a static i: slice then squeeze, as iterating a tracer does. */
static SrVal *index0(SrNnScope *s, SrVal *x, int64_t i) {
  const SrType *t = type_of(s, x);
  if (!t) return NULL;
  int64_t st[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK], zero = 0;
  for (int d = 0; d < t->ndim; d++) lim[d] = t->dims[d].size;
  st[0] = i;
  lim[0] = i + 1;
  SrVal *sl = KEEP(sr_lax_slice(s->I, x, st, lim, NULL));
  return sl ? KEEP(sr_lax_squeeze(s->I, sl, &zero, 1)) : NULL;
}

/* k1, k2 = _split(key): random_split[shape=(2,)], unpacked. */
static int split2(SrNnScope *s, SrVal *key, SrVal **k1, SrVal **k2) {
  int64_t two = 2;
  SrVal *ks = key ? KEEP(sr_bindv(s->I, SR_P_random_split, 1, &key, "shape", sr_int_tuple(&two, 1), NULL)) : NULL;
  *k1 = index0(s, ks, 0);
  *k2 = *k1 ? index0(s, ks, 1) : NULL;
  return *k2 ? 0 : -1;
}

/* _random_bits(key, bit_width, shape) */
static SrVal *rbits(SrNnScope *s, SrVal *key, int width, const int64_t *shape, int nd) {
  if (!key) return NULL;
  return KEEP(sr_bindv(s->I, SR_P_random_bits, 1, &key, "bit_width", sr_int(NULL, width), "shape",
                       sr_int_tuple(shape, nd), NULL));
}

/* jax.random.uniform(key, shape, dtype, minval, maxval) (NULL: 0., 1.) */
static SrVal *uniform(SrNnScope *s, SrVal *key, const int64_t *shape, int nd, SrDtype dt, SrVal *mn, SrVal *mx) {
  SrVal *v[5] = {key, shape_tuple(s, shape, nd), KEEP(sr_dtype_val(NULL, dt)), mn ? mn : sr_nn_float(s, 0.0),
                 mx ? mx : sr_nn_float(s, 1.0)};
  return sr_nn_call(s, "jax.random.uniform", 5, v, 0, NULL, NULL);
}

/* a jit of fn named name over n arguments, its static arguments r */
static SrVal *jit(SrInterp *I, const char *name, SrBuiltinFn fn, RArgs *r, int n, SrVal **args) {
  return sr_api_jit(I, name, fn, r, n, args);
}

static void shape_str(SrBuf *b, const int64_t *shape, int nd);

/* np.shape(v) as Python prints it */
static void type_shape_str(SrBuf *b, const SrType *t) {
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) sh[i] = t->dims[i].size;
  shape_str(b, sh, t->ndim);
}

/* _check_prng_key(name, key): a typed key as it is, other array data
   through random_wrap (jax.random.wrap_key_data, whose rule checks it);
   a key array is refused.  A new reference. */
static SrVal *check_key(SrInterp *I, SrVal *key, const char *name) {
  const SrType *t = sr_value_type(I, key);
  if (!t) return sr_raise(I, "TypeError", "unexpected PRNG key type <class '%s'>", sr_val_kind_name(key)), NULL;
  int typed = strncmp(sr_dtype_name(t->dtype), "key<", 4) == 0;
  SrVal *w;
  if (typed) {
    w = sr_ref(key);
  } else {
    SrVal *fn = sr_lookup_qualname("jax.random.wrap_key_data");
    SrArgs a = {1, &key, 0, NULL, NULL, NULL};
    w = fn ? sr_call(I, fn, &a) : NULL;
    if (w && sr_random_legacy_key_used(I) < 0) {
      sr_unref(w);
      w = NULL;
    }
  }
  const SrType *wt = w ? sr_value_type(I, w) : NULL;
  if (wt && wt->ndim) {
    SrBuf b = SR_BUF_INIT;
    type_shape_str(&b, t);
    sr_raise(I, "ValueError", "%s accepts a single key, but was given a key array of shape %s != (). Use jax.vmap for batching.",
             name, b.p);
    sr_buf_free(&b);
    sr_unref(w);
    return NULL;
  }
  return w;
}

static int no_out_sharding(SrInterp *I, SrVal *osh, const char *name) {
  if (sr_nn_given(osh)) return sr_raise(I, "NotImplementedError", "jax.random.%s with out_sharding is not supported yet", name), -1;
  return 0;
}

/* maybe_auto_axes(f, out_sharding)(*args): f a builtin named name whose
   data is r */
static SrVal *auto_axes_call(SrInterp *I, const char *name, SrBuiltinFn f, RArgs *r, SrVal *osh, int n, SrVal **args) {
  /* name is the jit's (_gumbel), the api's without the underscore */
  return sr_random_maybe_auto_axes(I, sr_builtin_with(name, f, r, free), sr_nn_given(osh) ? osh : NULL, name + 1, n,
                                   args);
}

/* The shape argument (None: *none stays set), canonicalized. */
static int shape_of(SrInterp *I, SrVal *v, int64_t *shape, int *nd, int *none) {
  *nd = 0;
  if (none) *none = !sr_nn_given(v);
  if (!sr_nn_given(v)) return 0;
  return sr_shape_arg(I, v, shape, nd, "shape");
}

static void shape_str(SrBuf *b, const int64_t *shape, int nd) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < nd; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)shape[i]);
  sr_buf_puts(b, nd == 1 ? ",)" : ")");
}

/* _check_shape(name, shape, param_shape): broadcasting them gives shape. */
static int check_shape(SrInterp *I, const char *name, const int64_t *shape, int nd, const SrType *pt) {
  int64_t out[SR_MAX_RANK];
  int n = nd > pt->ndim ? nd : pt->ndim, ok = 1;
  for (int i = 0; i < n; i++) {
    int64_t a = i - (n - nd) >= 0 ? shape[i - (n - nd)] : 1;
    int64_t b = i - (n - pt->ndim) >= 0 ? pt->dims[i - (n - pt->ndim)].size : 1;
    if (a != b && a != 1 && b != 1) {
      SrBuf bs = SR_BUF_INIT;
      sr_buf_puts(&bs, "Incompatible shapes for broadcasting: shapes=[");
      shape_str(&bs, shape, nd);
      sr_buf_puts(&bs, ", ");
      type_shape_str(&bs, pt);
      sr_buf_puts(&bs, "]");
      sr_raise(I, "ValueError", "%s", bs.p);
      sr_buf_free(&bs);
      return -1;
    }
    out[i] = a == 1 ? b : a;
  }
  if (n != nd) ok = 0;
  for (int i = 0; ok && i < n; i++) ok = out[i] == shape[i];
  if (ok) return 0;
  SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
  shape_str(&b1, out, n);
  shape_str(&b2, shape, nd);
  sr_raise(I, "ValueError",
           "%s parameter shapes must be broadcast-compatible with shape argument, and the result of broadcasting the "
           "shapes must equal the shape argument, but got result %s for shape argument %s.",
           name, b1.p, b2.p);
  sr_buf_free(&b1);
  sr_buf_free(&b2);
  return -1;
}

/* ---- gumbel ---- */

static double float_tiny(SrDtype dt) {
  return dt == SR_F64 ? 0x1p-1022 : dt == SR_F16 ? 0x1p-14 : 0x1p-126;
}

/* _gumbel(key, shape, dtype, mode='low'):
   -jnp.log(-jnp.log(_uniform(key, minval=finfo.tiny, maxval=1., ...))) */
static SrVal *gumbel_body(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  SCOPE(I);
  if (r->flag) {
    /* mode='high': high, low = _uniform(key, 0., 1., (2,) + shape);
       x = jnp.where(high >= 0.5, high, high + 2 ** -nmant * low + max(2 ** -(2 * nmant + 1), tiny));
       -jnp.log(-jnp.log1p(-x)) */
    int nmant = r->dt == SR_F64 ? 52 : r->dt == SR_F16 ? 10 : r->dt == SR_BF16 ? 7 : 23;
    int64_t sh[SR_MAX_RANK + 1];
    sh[0] = 2;
    memcpy(sh + 1, r->shape, (size_t)r->nd * sizeof *sh);
    SrVal *u = uniform(s, a->v[0], sh, r->nd + 1, r->dt, NULL, NULL);
    SrVal *hl = u ? sr_nn_call1(s, "builtins.tuple", u) : NULL;
    if (!hl) return sr_nn_done(s, NULL);
    SrVal *high = hl->seq.items[0], *low = hl->seq.items[1];
    double tiny = float_tiny(r->dt), eps2 = ldexp(1.0, -(2 * nmant + 1));
    SrVal *cond = OP(GE, high, sr_nn_float(s, 0.5));
    SrVal *sum = cond ? OP(ADD, OP(ADD, high, OP(MUL, sr_nn_float(s, ldexp(1.0, -nmant)), low)),
                           sr_nn_float(s, eps2 > tiny ? eps2 : tiny))
                      : NULL;
    SrVal *x = sum ? sr_nn_call3(s, "jax.numpy.where", cond, high, sum) : NULL;
    SrVal *l1 = x ? sr_nn_call1(s, "jax.numpy.log1p", KEEP(sr_lax_unary(I, SR_P_neg, x))) : NULL;
    SrVal *l2 = l1 ? sr_nn_call1(s, "jax.numpy.log", KEEP(sr_lax_unary(I, SR_P_neg, l1))) : NULL;
    return sr_nn_done(s, l2 ? KEEP(sr_lax_unary(I, SR_P_neg, l2)) : NULL);
  }
  SrVal *u = uniform(s, a->v[0], r->shape, r->nd, r->dt, lit(s, r->dt, float_tiny(r->dt), 0), NULL);
  SrVal *l1 = sr_nn_call1(s, "jax.numpy.log", u);
  SrVal *n1 = l1 ? KEEP(sr_lax_unary(I, SR_P_neg, l1)) : NULL;
  SrVal *l2 = sr_nn_call1(s, "jax.numpy.log", n1);
  return sr_nn_done(s, l2 ? KEEP(sr_lax_unary(I, SR_P_neg, l2)) : NULL);
}

/* gumbel's mode: 0 'low' (or None: the use_high_dynamic_range_gumbel
   default, off), 1 'high'; -1 with an error raised ('highest' needs the
   clz primitive) */
static int mode_arg(SrInterp *I, SrVal *v, const char *name) {
  if (!sr_nn_given(v)) return 0;
  if (v->kind == SR_V_STR && v->str.n == 3 && memcmp(v->str.s, "low", 3) == 0) return 0;
  if (v->kind == SR_V_STR && v->str.n == 4 && memcmp(v->str.s, "high", 4) == 0) return 1;
  if (v->kind == SR_V_STR && v->str.n == 7 && memcmp(v->str.s, "highest", 7) == 0)
    return sr_raise(I, "NotImplementedError", "jax.random.%s with mode='%s' is not supported yet", name, v->str.s), -1;
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  sr_raise(I, "ValueError", "Must provide valid mode for gumbel got: %s", b.p);
  sr_buf_free(&b);
  return -1;
}

/* dtype=None: float (the default float); must be a float */
static int float_dtype(SrInterp *I, SrVal *v, const char *name, SrDtype *dt) {
  int d;
  if (sr_dtype_arg_fn(I, v, &d, name, "") < 0) return -1;
  *dt = d < 0 ? default_float(I) : (SrDtype)d;
  if (!sr_dtype_is_float(*dt))
    return sr_raise(I, "ValueError", "dtype argument to `%s` must be a float dtype, got %s", name, sr_dtype_name(*dt)), -1;
  return 0;
}

static SrVal *gumbel_call(SrInterp *I, SrVal *key, const int64_t *shape, int nd, SrDtype dt, int high) {
  RArgs *r = rargs(shape, nd, dt, 0);
  r->flag = high;
  return jit(I, "_gumbel", gumbel_body, r, 1, &key);
}

/* partial(_gumbel, shape=, dtype=, mode=) */
static SrVal *gumbel_fn(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  return gumbel_call(I, a->v[0], r->shape, r->nd, r->dt, r->flag);
}

/* gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None) */
static SrVal *bi_gumbel(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "gumbel", "key, shape=, dtype=, mode=, *, out_sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  SrDtype dt;
  int high;
  if (float_dtype(I, p[2], "gumbel", &dt) < 0 || shape_of(I, p[1], shape, &nd, NULL) < 0 ||
      (high = mode_arg(I, p[3], "gumbel")) < 0)
    return NULL;
  SrVal *k = check_key(I, p[0], "gumbel");
  RArgs *ra = k ? rargs(shape, nd, dt, 0) : NULL;
  if (ra) ra->flag = high;
  SrVal *r = k ? auto_axes_call(I, "_gumbel", gumbel_fn, ra, p[4], 1, &k) : NULL;
  sr_unref(k);
  return r;
}

/* ---- bernoulli, rademacher ---- */

/* _bernoulli(key, p, shape, mode='low'): uniform(key, shape, p.dtype) < p */
static SrVal *bernoulli_body(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  SCOPE(I);
  if (r->flag) {
    /* mode='high': u1, u2 = uniform(key, (2, *shape), dtype);
       u2 *= 2 ** -nmant; u2 < p - u1 */
    int nmant = r->dt == SR_F64 ? 52 : r->dt == SR_F16 ? 10 : r->dt == SR_BF16 ? 7 : 23;
    int64_t sh[SR_MAX_RANK + 1];
    sh[0] = 2;
    memcpy(sh + 1, r->shape, (size_t)r->nd * sizeof *sh);
    SrVal *u = uniform(s, a->v[0], sh, r->nd + 1, r->dt, NULL, NULL);
    SrVal *uu = u ? sr_nn_call1(s, "builtins.tuple", u) : NULL;
    if (!uu) return sr_nn_done(s, NULL);
    SrVal *u2 = OP(MUL, uu->seq.items[1], sr_nn_float(s, ldexp(1.0, -nmant)));
    return sr_nn_done(s, u2 ? OP(LT, u2, OP(SUB, a->v[1], uu->seq.items[0])) : NULL);
  }
  SrVal *u = uniform(s, a->v[0], r->shape, r->nd, r->dt, NULL, NULL);
  return sr_nn_done(s, OP(LT, u, a->v[1]));
}

/* bernoulli's checks and its jit on a checked key. */
static SrVal *bernoulli_call(SrInterp *I, SrVal *key, SrVal *pv, const int64_t *shape, int nd, int none, int high) {
  SrVal *pa = sr_jnp_asarray(I, pv, -1);
  const SrType *pt = pa ? sr_value_type(I, pa) : NULL;
  SrVal *r = NULL;
  if (!pt) goto done;
  if (!sr_dtype_is_float(pt->dtype)) {
    sr_raise(I, "TypeError", "bernoulli probability `p` must have a floating dtype, got %s.", sr_dtype_name(pt->dtype));
    goto done;
  }
  int64_t sh[SR_MAX_RANK];
  int n = nd;
  if (none) {
    n = pt->ndim;
    for (int i = 0; i < n; i++) sh[i] = pt->dims[i].size;
  } else {
    memcpy(sh, shape, (size_t)nd * sizeof *sh);
    if (check_shape(I, "bernoulli", sh, n, pt) < 0) goto done;
  }
  /* p = lax.convert_element_type(p, dtype): a Python float becomes strong */
  SrVal *pc = sr_lax_convert(I, pv->kind == SR_V_FLOAT || pv->kind == SR_V_INT ? pv : pa, pt->dtype, 0, NULL);
  if (pc) {
    SrVal *args[2] = {key, pc};
    RArgs *ra = rargs(sh, n, pt->dtype, 0);
    ra->flag = high;
    r = jit(I, "_bernoulli", bernoulli_body, ra, 2, args);
    sr_unref(pc);
  }
done:
  sr_unref(pa);
  return r;
}

/* partial(_bernoulli, shape=, mode=), with bernoulli's checks of p */
static SrVal *bernoulli_fn(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  return bernoulli_call(I, a->v[0], a->v[1], r->shape, r->nd, (int)r->axis, r->flag);
}

/* bernoulli(key, p=0.5, shape=None, mode='low', *, out_sharding=None) */
static SrVal *bi_bernoulli(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "bernoulli", "key, p=, shape=, mode=, *, out_sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd, none, high = 0;
  if (shape_of(I, p[2], shape, &nd, &none) < 0) return NULL;
  if (sr_nn_given(p[3])) {
    SrVal *m = p[3];
    int low = m->kind == SR_V_STR && m->str.n == 3 && memcmp(m->str.s, "low", 3) == 0;
    high = m->kind == SR_V_STR && m->str.n == 4 && memcmp(m->str.s, "high", 4) == 0;
    if (!low && !high) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, m);
      sr_raise(I, "ValueError", "got mode=%s, expected 'high' or 'low'", b.p);
      sr_buf_free(&b);
      return NULL;
    }
  }
  SrVal *k = check_key(I, p[0], "bernoulli");
  if (!k) return NULL;
  SrVal *half = p[1] ? NULL : sr_float(NULL, 0.5);
  SrVal *r;
  if (sr_nn_given(p[4])) {
    RArgs *ra = rargs(shape, nd, SR_F32, none);
    ra->flag = high;
    SrVal *args[2] = {k, p[1] ? p[1] : half};
    r = auto_axes_call(I, "_bernoulli", bernoulli_fn, ra, p[4], 2, args);
  } else {
    r = bernoulli_call(I, k, p[1] ? p[1] : half, shape, nd, none, high);
  }
  sr_unref(half);
  sr_unref(k);
  return r;
}

/* _rademacher(key, shape, dtype): 2 * bernoulli(key, 0.5, shape).astype(dtype) - 1 */
static SrVal *rademacher_body(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *half = sr_nn_float(s, 0.5);
  SrVal *b = half ? KEEP(bernoulli_call(I, a->v[0], half, r->shape, r->nd, 0, 0)) : NULL;
  SrVal *c = b ? KEEP(sr_lax_convert(I, b, r->dt, 0, NULL)) : NULL;
  SrVal *m = OP(SUB, OP(MUL, sr_nn_int(s, 2), c), sr_nn_int(s, 1));
  return sr_nn_done(s, m ? KEEP(sr_lax_convert(I, m, r->dt, 0, NULL)) : NULL);
}

/* rademacher(key, shape=(), dtype=None, *, out_sharding=None) */
static SrVal *bi_rademacher(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "rademacher", "key, shape=, dtype=, *, out_sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd, d;
  if (shape_of(I, p[1], shape, &nd, NULL) < 0 || sr_dtype_arg_fn(I, p[2], &d, "rademacher", "") < 0 ||
      no_out_sharding(I, p[3], "rademacher") < 0)
    return NULL;
  SrVal *k = check_key(I, p[0], "rademacher");
  SrVal *r = k ? jit(I, "_rademacher", rademacher_body, rargs(shape, nd, d < 0 ? default_int(I) : (SrDtype)d, 0), 1, &k)
               : NULL;
  sr_unref(k);
  return r;
}

/* ---- randint ---- */

static int int_limits(SrDtype dt, int64_t *lo, int64_t *hi, int *bits) {
  switch (dt) {
  case SR_I8: *lo = INT8_MIN, *hi = INT8_MAX, *bits = 8; return 0;
  case SR_I16: *lo = INT16_MIN, *hi = INT16_MAX, *bits = 16; return 0;
  case SR_I32: *lo = INT32_MIN, *hi = INT32_MAX, *bits = 32; return 0;
  case SR_I64: *lo = INT64_MIN, *hi = INT64_MAX, *bits = 64; return 0;
  case SR_U8: *lo = 0, *hi = UINT8_MAX, *bits = 8; return 0;
  case SR_U16: *lo = 0, *hi = UINT16_MAX, *bits = 16; return 0;
  case SR_U32: *lo = 0, *hi = UINT32_MAX, *bits = 32; return 0;
  default: return -1;
  }
}

static SrDtype unsigned_of(int bits) { return bits == 8 ? SR_U8 : bits == 16 ? SR_U16 : bits == 32 ? SR_U32 : SR_U64; }

/* _convert_and_clip_integer(val, dtype): jnp.clip(val, lo, hi).astype(dtype)
   with the bounds numpy scalars of val's dtype */
static SrVal *convert_and_clip(SrNnScope *s, SrVal *val, SrDtype dt) {
  const SrType *t = type_of(s, val);
  int64_t dlo, dhi, vlo, vhi;
  int b;
  if (!t) return NULL;
  if (int_limits(dt, &dlo, &dhi, &b) < 0 || int_limits(t->dtype, &vlo, &vhi, &b) < 0)
    return sr_raise(s->I, "NotImplementedError", "randint of dtype %s", sr_dtype_name(dt)), NULL;
  int64_t lo = dlo > vlo ? dlo : vlo, hi = dhi < vhi ? dhi : vhi;
  SrVal *c = sr_nn_call3(s, "jax.numpy.clip", val, lit(s, t->dtype, (double)lo, lo), lit(s, t->dtype, (double)hi, hi));
  return c ? KEEP(sr_lax_convert(s->I, c, dt, 0, NULL)) : NULL;
}

/* lax.broadcast_to_rank */
static SrVal *to_rank(SrNnScope *s, SrVal *x, int nd) {
  const SrType *t = type_of(s, x);
  if (!t || t->ndim == nd) return t ? x : NULL;
  int64_t shape[SR_MAX_RANK], dims[SR_MAX_RANK];
  int k = nd - t->ndim;
  for (int i = 0; i < k; i++) shape[i] = 1;
  for (int i = 0; i < t->ndim; i++) {
    shape[k + i] = t->dims[i].size;
    dims[i] = k + i;
  }
  return KEEP(sr_lax_broadcast_in_dim(s->I, x, shape, nd, dims, t->ndim, NULL));
}

static SrVal *bin(SrNnScope *s, int prim, SrVal *x, SrVal *y) {
  return x && y ? KEEP(sr_lax_binary(s->I, prim, x, y)) : NULL;
}

/* jnp.asarray(v), then .astype(int) unless an integer */
static SrVal *as_int_array(SrNnScope *s, SrVal *v) {
  SrVal *x = KEEP(sr_jnp_asarray(s->I, v, -1));
  const SrType *t = type_of(s, x);
  if (!t) return NULL;
  if (sr_dtype_is_int(t->dtype)) return x;
  return KEEP(sr_lax_convert(s->I, x, default_int(s->I), 0, NULL));
}

/* _randint(key, minval, maxval, shape, dtype) */
static SrVal *randint_body(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  SCOPE(I);
  SrDtype dt = r->dt;
  int64_t dlo, dhi, mlo, mhi;
  int nbits, mb;
  (void)mlo, (void)mhi, (void)mb;
  SrVal *minval = as_int_array(s, a->v[1]);
  SrVal *maxval = minval ? as_int_array(s, a->v[2]) : NULL;
  const SrType *mt = type_of(s, maxval);
  if (!mt) return sr_nn_done(s, NULL);
  if (int_limits(dt, &dlo, &dhi, &nbits) < 0 || int_limits(mt->dtype, &mlo, &mhi, &mb) < 0)
    return sr_nn_done(s, sr_raise(I, "NotImplementedError", "randint of dtype %s", sr_dtype_name(dt)));
  /* maxval > _convert_and_clip_integer(jnp.array(iinfo(dtype).max, dtype), maxval.dtype) */
  SrVal *cmax = convert_and_clip(s, lit(s, dt, (double)dhi, dhi), mt->dtype);
  SrVal *oor = bin(s, SR_P_gt, maxval, cmax);
  minval = convert_and_clip(s, minval, dt);
  maxval = minval ? convert_and_clip(s, maxval, dt) : NULL;
  minval = to_rank(s, minval, r->nd);
  maxval = to_rank(s, maxval, r->nd);
  SrVal *k1, *k2;
  if (!oor || !maxval || split2(s, a->v[0], &k1, &k2) < 0) return sr_nn_done(s, NULL);
  SrVal *higher = rbits(s, k1, nbits, r->shape, r->nd), *lower = rbits(s, k2, nbits, r->shape, r->nd);
  SrDtype udt = unsigned_of(nbits);
  SrVal *diff = OP(SUB, maxval, minval);
  SrVal *span = diff ? KEEP(sr_lax_convert(I, diff, udt, 0, NULL)) : NULL;
  SrVal *le = OP(LE, maxval, minval);
  SrVal *one = span ? sr_nn_full_like(s, span, sr_nn_int(s, 1)) : NULL;
  span = le && one ? KEEP(sr_lax_select(I, le, one, span)) : NULL;
  SrVal *cond = OP(BITAND, oor, OP(GT, maxval, minval));
  SrVal *inc = bin(s, SR_P_add, span, lit(s, udt, 1, 1));
  span = cond && inc ? KEEP(sr_lax_select(I, cond, inc, span)) : NULL;
  int64_t half = (int64_t)1 << (nbits / 2);
  SrVal *mult = bin(s, SR_P_rem, lit(s, udt, (double)half, half), span);
  mult = bin(s, SR_P_rem, bin(s, SR_P_mul, mult, mult), span);
  SrVal *off = bin(s, SR_P_add, bin(s, SR_P_mul, bin(s, SR_P_rem, higher, span), mult), bin(s, SR_P_rem, lower, span));
  off = bin(s, SR_P_rem, off, span);
  SrVal *offc = off ? KEEP(sr_lax_convert(I, off, dt, 0, NULL)) : NULL;
  return sr_nn_done(s, bin(s, SR_P_add, minval, offc));
}

/* randint's checks, the 32-bit sampling of narrow dtypes and the jit, on a
   checked key. */
static SrVal *randint_call(SrInterp *I, SrVal *key, const int64_t *shape, int nd, SrVal *minval, SrVal *maxval,
                           SrDtype dt) {
  int64_t lo, hi;
  int bits;
  if (!sr_dtype_is_int(dt)) return sr_raise(I, "TypeError", "randint only accepts integer dtypes, got %s", sr_dtype_name(dt));
  if (int_limits(dt, &lo, &hi, &bits) < 0)
    return sr_raise(I, "NotImplementedError", "randint of dtype %s", sr_dtype_name(dt));
  SCOPE(I);
  SrDtype sdt = dt;
  SrVal *mn = minval, *mx = maxval;
  if (bits < 32) {
    /* jnp.asarray(v).astype('int32').clip(info.min, info.max (+ 1)) */
    sdt = SR_I32;
    SrVal *a = KEEP(sr_jnp_asarray(I, minval, -1)), *b = a ? KEEP(sr_jnp_asarray(I, maxval, -1)) : NULL;
    a = a ? KEEP(sr_lax_convert(I, a, SR_I32, 0, NULL)) : NULL;
    b = b ? KEEP(sr_lax_convert(I, b, SR_I32, 0, NULL)) : NULL;
    mn = sr_nn_call3(s, "jax.numpy.clip", a, sr_nn_int(s, lo), sr_nn_int(s, hi));
    mx = sr_nn_call3(s, "jax.numpy.clip", b, sr_nn_int(s, lo), sr_nn_int(s, hi + 1));
    if (!mn || !mx) return sr_nn_done(s, NULL);
  }
  /* _check_shape("randint", shape, np.shape(minval), np.shape(maxval)) */
  for (int i = 0; i < 2; i++) {
    const SrType *t = sr_value_type(I, i ? mx : mn);
    if (t && check_shape(I, "randint", shape, nd, t) < 0) return sr_nn_done(s, NULL);
  }
  SrVal *args[3] = {key, mn, mx};
  SrVal *r = KEEP(jit(I, "_randint", randint_body, rargs(shape, nd, sdt, 0), 3, args));
  return sr_nn_done(s, r ? KEEP(sr_lax_convert(I, r, dt, 0, NULL)) : NULL);
}

/* partial(_randint, shape=, dtype=), with randint's checks and casts */
static SrVal *randint_fn(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  return randint_call(I, a->v[0], r->shape, r->nd, a->v[1], a->v[2], r->dt);
}

/* randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None) */
static SrVal *bi_randint(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "randint", "key, shape, minval, maxval, dtype=, *, out_sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd, d;
  if (sr_shape_arg(I, p[1], shape, &nd, "shape") < 0 || sr_dtype_arg_fn(I, p[4], &d, "randint", "") < 0) return NULL;
  SrVal *k = check_key(I, p[0], "randint");
  SrDtype dt = d < 0 ? default_int(I) : (SrDtype)d;
  SrVal *r = NULL;
  if (k && sr_nn_given(p[5])) {
    SrVal *args[3] = {k, p[2], p[3]};
    r = auto_axes_call(I, "_randint", randint_fn, rargs(shape, nd, dt, 0), p[5], 3, args);
  } else if (k) {
    r = randint_call(I, k, shape, nd, p[2], p[3], dt);
  }
  sr_unref(k);
  return r;
}

/* ---- permutation ---- */

/* _shuffle(key, x, axis): ceil(3 log(size) / log(2^32 - 1)) rounds of a
   sort of x by fresh 32-bit keys */
static SrVal *shuffle_body(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *key = a->v[0], *x = a->v[1];
  const SrType *t = type_of(s, x);
  if (!t) return sr_nn_done(s, NULL);
  int64_t size = sr_type_numel(t), shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  int rounds = (int)ceil(3 * log((double)(size > 1 ? size : 1)) / log(4294967295.0));
  for (int i = 0; i < rounds && x; i++) {
    SrVal *sub;
    if (split2(s, key, &key, &sub) < 0) return sr_nn_done(s, NULL);
    SrVal *sk = rbits(s, sub, 32, shape, t->ndim);
    SrVal *v[2] = {sk, x};
    const char *kw[1] = {"dimension"};
    SrVal *kwv[1] = {sr_nn_int(s, r->axis)};
    SrVal *kv = sr_nn_call(s, "jax.lax.sort_key_val", 2, v, 1, kw, kwv);
    x = kv && sr_is_seq(kv) && kv->seq.n == 2 ? kv->seq.items[1] : NULL;
  }
  return sr_nn_done(s, x);
}

static SrVal *shuffle(SrInterp *I, SrVal *key, SrVal *x, int64_t axis) {
  SrVal *args[2] = {key, x};
  return jit(I, "_shuffle", shuffle_body, rargs(NULL, 0, SR_F32, axis), 2, args);
}

/* jnp.arange(n) */
static SrVal *arange(SrNnScope *s, int64_t n) { return sr_nn_call1(s, "jax.numpy.arange", sr_nn_int(s, n)); }

/* permutation on a checked key */
static SrVal *permutation_call(SrInterp *I, SrVal *key, SrVal *x, int64_t axis, int independent) {
  SCOPE(I);
  SrVal *xa = KEEP(sr_jnp_asarray(I, x, -1));
  const SrType *t = type_of(s, xa);
  if (!t) return sr_nn_done(s, NULL);
  int64_t ax;
  if (sr_api_axis(I, axis, t->ndim ? t->ndim : 1, &ax) < 0) return sr_nn_done(s, NULL);
  if (!t->ndim) {
    if (!sr_dtype_is_int(t->dtype))
      return sr_nn_done(s, sr_raise(I, "TypeError", "x must be an integer or at least 1-dimensional"));
    int64_t n;
    if (sr_as_int(I, x, "argument x of jax.random.permutation()", &n) < 0) return sr_nn_done(s, NULL);
    SrVal *ar = arange(s, n);
    return sr_nn_done(s, ar ? KEEP(shuffle(I, key, ar, ax)) : NULL);
  }
  if (independent || t->ndim == 1) return sr_nn_done(s, KEEP(shuffle(I, key, xa, ax)));
  SrVal *ar = arange(s, t->dims[ax].size);
  SrVal *ind = ar ? KEEP(shuffle(I, key, ar, 0)) : NULL;
  SrVal *v[3] = {xa, ind, sr_nn_int(s, ax)};
  const char *kw[1] = {"unique_indices"};
  SrVal *kwv[1] = {KEEP(sr_bool(1))};
  return sr_nn_done(s, sr_nn_call(s, "jax.numpy.take", 3, v, 1, kw, kwv));
}

/* partial(_permutation, axis=, independent=), with permutation's checks */
static SrVal *permutation_fn(SrInterp *I, SrArgs *a) {
  const RArgs *r = sr_current_builtin(I)->data;
  if (a->n == 1) {
    SrVal *n = sr_int(NULL, r->shape[0]);
    SrVal *out = permutation_call(I, a->v[0], n, r->axis, r->flag);
    sr_unref(n);
    return out;
  }
  return permutation_call(I, a->v[0], a->v[1], r->axis, r->flag);
}

/* permutation(key, x, axis=0, independent=False, *, out_sharding=None) */
static SrVal *bi_permutation(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "permutation", "key, x, axis=, independent=, *, out_sharding=", p) < 0) return NULL;
  int64_t axis = 0;
  if (sr_nn_given(p[2]) && sr_as_int(I, p[2], "axis", &axis) < 0) return NULL;
  int indep = p[3] ? sr_truthy(I, p[3]) : 0;
  if (indep < 0) return NULL;
  SrVal *k = check_key(I, p[0], "permutation");
  SrVal *r = NULL;
  const SrType *xt = k && sr_nn_given(p[4]) ? sr_value_type(I, p[1]) : NULL;
  if (xt) {
    /* an integer x: a function of the key alone, on arange(x) */
    RArgs *ra = rargs(NULL, 0, SR_F32, axis);
    ra->flag = indep;
    if (!xt->ndim) {
      ra->nd = 1;
      if (!sr_dtype_is_int(xt->dtype))
        sr_raise(I, "TypeError", "x must be an integer or at least 1-dimensional");
      else
        sr_as_int(I, p[1], "argument x of jax.random.permutation()", &ra->shape[0]);
    }
    SrVal *args[2] = {k, p[1]};
    if (I->exc)
      free(ra);
    else
      r = auto_axes_call(I, "_permutation", permutation_fn, ra, p[4], xt->ndim ? 2 : 1, args);
  } else if (k && !I->exc) {
    r = permutation_call(I, k, p[1], axis, indep);
  }
  sr_unref(k);
  return r;
}

/* ---- categorical ---- */

/* categorical(key, logits, axis=-1, shape=None, replace=True, mode=None) */
static SrVal *bi_categorical(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "categorical", "key, logits, axis=, shape=, replace=, mode=, *, out_sharding=", p) < 0)
    return NULL;
  int64_t axis = -1, shape[SR_MAX_RANK];
  int nd, none, high;
  if ((sr_nn_given(p[2]) && sr_as_int(I, p[2], "axis", &axis) < 0) || shape_of(I, p[3], shape, &nd, &none) < 0 ||
      (high = mode_arg(I, p[5], "categorical")) < 0 || no_out_sharding(I, p[6], "categorical") < 0)
    return NULL;
  int replace = p[4] ? sr_truthy(I, p[4]) : 1;
  if (replace < 0) return NULL;
  SrVal *key = check_key(I, p[0], "categorical");
  if (!key) return NULL;
  SCOPE(I);
  KEEP(key);
  SrVal *logits = KEEP(sr_jnp_asarray(I, p[1], -1));
  const SrType *lt = type_of(s, logits);
  if (!lt) return sr_nn_done(s, NULL);
  int ln = lt->ndim;
  int64_t ax;
  if (sr_api_axis(I, axis, ln, &ax) < 0) return sr_nn_done(s, NULL);
  /* batch_shape = np.delete(logits.shape, axis) */
  int64_t batch[SR_MAX_RANK];
  int nb = 0;
  for (int i = 0; i < ln; i++)
    if (i != ax) batch[nb++] = lt->dims[i].size;
  if (none) {
    nd = nb;
    memcpy(shape, batch, (size_t)nb * sizeof *batch);
  } else {
    const SrType *bt = sr_type_array(lt->dtype, nb, batch);
    if (check_shape(I, "categorical", shape, nd, bt) < 0) return sr_nn_done(s, NULL);
  }
  int npre = nd - nb;
  if (replace) {
    /* argmax(gumbel(key, (*prefix, *logits_shape)) + expand_dims(logits, range(npre)), axis) */
    int64_t gshape[SR_MAX_RANK], dims[SR_MAX_RANK];
    int g = 0;
    for (int i = 0; i < npre; i++) gshape[g++] = shape[i];
    for (int i = 0; i < ln; i++) gshape[g++] = i == ax ? lt->dims[ax].size : shape[npre + (i < ax ? i : i - 1)];
    SrVal *gum = KEEP(gumbel_call(I, key, gshape, g, lt->dtype, high));
    for (int i = 0; i < npre; i++) dims[i] = i;
    SrVal *ex = gum && npre ? KEEP(sr_lax_expand_dims(I, logits, dims, npre)) : logits;
    SrVal *sum = gum && ex ? OP(ADD, gum, ex) : NULL;
    SrVal *v[2] = {sum, sr_nn_int(s, (ax - ln) + g)};
    const char *kw[1] = {"axis"};
    return sr_nn_done(s, sr_nn_call(s, "jax.numpy.argmax", 1, v, 1, kw, v + 1));
  }
  /* logits + gumbel(key, logits.shape); lax.top_k over the moved axis */
  int64_t lshape[SR_MAX_RANK];
  for (int i = 0; i < ln; i++) lshape[i] = lt->dims[i].size;
  SrVal *gum = KEEP(gumbel_call(I, key, lshape, ln, lt->dtype, high));
  SrVal *sum = gum ? OP(ADD, logits, gum) : NULL;
  int64_t k = 1;
  for (int i = 0; i < npre; i++) k *= shape[i];
  if (sum && k > lt->dims[ax].size)
    return sr_nn_done(s, sr_raise(I, "ValueError",
                                  "Number of samples without replacement (%lld) cannot exceed number of categories (%lld).",
                                  (long long)k, (long long)lt->dims[ax].size));
  SrVal *mv = sum ? sr_nn_call3(s, "jax.numpy.moveaxis", sum, sr_nn_int(s, ax), sr_nn_int(s, -1)) : NULL;
  SrVal *tk = mv ? sr_nn_call2(s, "jax.lax.top_k", mv, sr_nn_int(s, k)) : NULL;
  SrVal *ind = tk && sr_is_seq(tk) && tk->seq.n == 2 ? tk->seq.items[1] : NULL;
  if (!ind) return sr_nn_done(s, NULL);
  /* lax.reshape(indices, shape, (ndim - 1, *range(ndim - 1))) */
  const SrType *it = type_of(s, ind);
  int64_t perm[SR_MAX_RANK];
  perm[0] = it->ndim - 1;
  for (int i = 1; i < it->ndim; i++) perm[i] = i - 1;
  SrVal *tr = it->ndim > 1 ? KEEP(sr_lax_transpose(I, ind, perm, it->ndim)) : ind;
  return sr_nn_done(s, tr ? KEEP(sr_lax_reshape(I, tr, shape, nd, NULL)) : NULL);
}

/* ---- choice ---- */

/* choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None) */
static SrVal *bi_choice(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "choice", "key, a, shape=, replace=, p=, axis=, mode=", p) < 0) return NULL;
  SrVal *key = check_key(I, p[0], "choice");
  if (!key) return NULL;
  SCOPE(I);
  KEEP(key);
  int64_t shape[SR_MAX_RANK], axis = 0;
  int nd = 0;
  if (p[2]) {
    if (!sr_is_seq(p[2])) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, p[2]);
      sr_raise(I, "TypeError", "shape argument of jax.random.choice must be a sequence, got %s", b.p);
      sr_buf_free(&b);
      return sr_nn_done(s, NULL);
    }
    if (sr_shape_arg(I, p[2], shape, &nd, "shape") < 0) return sr_nn_done(s, NULL);
  }
  int replace = p[3] ? sr_truthy(I, p[3]) : 1, high = 0;
  if (replace < 0 || (sr_nn_given(p[5]) && sr_as_int(I, p[5], "axis", &axis) < 0) || (high = mode_arg(I, p[6], "choice")) < 0)
    return sr_nn_done(s, NULL);
  SrVal *arr = KEEP(sr_jnp_asarray(I, p[1], -1));
  const SrType *at = type_of(s, arr);
  if (!at) return sr_nn_done(s, NULL);
  int64_t n_inputs;
  if (!at->ndim) {
    if (sr_as_int(I, p[1], "The error occurred in jax.random.choice()", &n_inputs) < 0) return sr_nn_done(s, NULL);
  } else {
    if (sr_api_axis(I, axis, at->ndim, &axis) < 0) return sr_nn_done(s, NULL);
    n_inputs = at->dims[axis].size;
  }
  int64_t n_draws = sr_shape_numel(nd, shape);
  if (n_draws == 0) {
    SrVal *v[2] = {shape_tuple(s, shape, nd), KEEP(sr_dtype_val(NULL, at->dtype))};
    return sr_nn_done(s, sr_nn_call(s, "jax.numpy.zeros", 2, v, 0, NULL, NULL));
  }
  if (n_inputs <= 0) return sr_nn_done(s, sr_raise(I, "ValueError", "a must be greater than 0 unless no samples are taken"));
  if (!replace && n_draws > n_inputs)
    return sr_nn_done(s, sr_raise(I, "ValueError",
                                  "Cannot take a larger sample (size %lld) than population (size %lld) when 'replace=False'",
                                  (long long)n_draws, (long long)n_inputs));
  SrVal *result = NULL;
  if (!sr_nn_given(p[4])) {
    if (replace) {
      SrVal *ind = KEEP(randint_call(I, key, shape, nd, sr_nn_int(s, 0), sr_nn_int(s, n_inputs), default_int(I)));
      if (!at->ndim || !ind) {
        result = ind;
      } else {
        SrVal *v[3] = {arr, ind, sr_nn_int(s, axis)};
        result = sr_nn_call(s, "jax.numpy.take", 3, v, 0, NULL, NULL);
      }
    } else {
      /* permutation(key, n_inputs or arr, axis)[(slice(None),) * axis + (slice(n_draws),)] */
      SrVal *nv = sr_nn_int(s, n_inputs);
      SrVal *perm = KEEP(permutation_call(I, key, at->ndim ? arr : nv, axis, 0));
      if (perm) {
        SrVal *items[SR_MAX_RANK];
        for (int i = 0; i <= axis; i++)
          items[i] = sr_slice_new(sr_none(), i == axis ? sr_int(NULL, n_draws) : sr_none(), sr_none());
        SrVal *idx = KEEP(sr_tuple(NULL, (int)axis + 1, items));
        result = KEEP(sr_getitem(I, perm, idx));
      }
    }
  } else {
    SrVal *pa = KEEP(sr_jnp_asarray(I, p[4], -1));
    SrVal *args[1] = {pa};
    if (!pa || sr_nn_promote_inexact(s, 1, args, "choice") < 0) return sr_nn_done(s, NULL);
    pa = args[0];
    const SrType *pt = type_of(s, pa);
    if (pt->ndim != 1 || pt->dims[0].size != n_inputs) {
      SrBuf pshape = SR_BUF_INIT;
      type_shape_str(&pshape, pt);
      sr_raise(I, "ValueError",
                                    "p must be None or a 1D vector with the same size as a.shape[axis]. p has shape %s "
                                    "and a.shape[axis] is %lld.",
                                    pshape.p, (long long)n_inputs);
      sr_buf_free(&pshape);
      return sr_nn_done(s, NULL);
    }
    SrVal *ind;
    if (replace) {
      /* p_cuml = jnp.cumsum(p); r = p_cuml[-1] * (1 - uniform(key, shape, p_cuml.dtype));
         jnp.searchsorted(p_cuml, r).astype(int) */
      SrVal *cuml = sr_nn_call1(s, "jax.numpy.cumsum", pa);
      SrVal *last = cuml ? KEEP(sr_getitem(I, cuml, sr_nn_int(s, -1))) : NULL;
      SrVal *u = last ? uniform(s, key, shape, nd, type_of(s, cuml)->dtype, NULL, NULL) : NULL;
      SrVal *r = u ? OP(MUL, last, OP(SUB, sr_nn_int(s, 1), u)) : NULL;
      SrVal *ss = r ? sr_nn_call2(s, "jax.numpy.searchsorted", cuml, r) : NULL;
      ind = ss ? KEEP(sr_lax_convert(I, ss, default_int(I), 0, NULL)) : NULL;
    } else {
      /* gumbel(key, (n_inputs,), p.dtype) + jnp.log(p); top_k's indices */
      SrVal *g = KEEP(gumbel_call(I, key, &n_inputs, 1, pt->dtype, high));
      SrVal *sum = g ? OP(ADD, g, sr_nn_call1(s, "jax.numpy.log", pa)) : NULL;
      SrVal *tk = sum ? sr_nn_call2(s, "jax.lax.top_k", sum, sr_nn_int(s, n_draws)) : NULL;
      ind = tk && sr_is_seq(tk) && tk->seq.n == 2 ? tk->seq.items[1] : NULL;
      ind = ind ? KEEP(sr_lax_convert(I, ind, default_int(I), 0, NULL)) : NULL;
    }
    if (!at->ndim || !ind) {
      result = ind;
    } else {
      SrVal *v[3] = {arr, ind, sr_nn_int(s, axis)};
      result = sr_nn_call(s, "jax.numpy.take", 3, v, 0, NULL, NULL);
    }
  }
  if (!result) return sr_nn_done(s, NULL);
  /* result.reshape(shape, or a.shape[:axis] + shape + a.shape[axis+1:]) */
  int64_t out[SR_MAX_RANK];
  int no = 0;
  if (!at->ndim) {
    memcpy(out, shape, (size_t)nd * sizeof *shape);
    no = nd;
  } else {
    for (int i = 0; i < axis; i++) out[no++] = at->dims[i].size;
    for (int i = 0; i < nd; i++) out[no++] = shape[i];
    for (int i = (int)axis + 1; i < at->ndim; i++) out[no++] = at->dims[i].size;
  }
  const SrType *rt = type_of(s, result);
  int same = rt && rt->ndim == no;
  for (int i = 0; same && i < no; i++) same = rt->dims[i].size == out[i];
  if (same) return sr_nn_done(s, result);
  return sr_nn_done(s, KEEP(sr_lax_reshape(I, result, out, no, NULL)));
}

void sr_random_more_init(void) {
  sr_def("jax.random.randint", bi_randint,
         "randint(key, shape, minval, maxval, dtype=int): uniform integers in [minval, maxval) (jit _randint)");
  sr_def("jax.random.bernoulli", bi_bernoulli,
         "bernoulli(key, p=0.5, shape=None): booleans, True with probability p (jit _bernoulli)");
  sr_def("jax.random.rademacher", bi_rademacher, "rademacher(key, shape=(), dtype=int): -1 or 1 with probability 1/2");
  sr_def("jax.random.gumbel", bi_gumbel, "gumbel(key, shape=(), dtype=float): standard Gumbel samples (jit _gumbel)");
  sr_def("jax.random.categorical", bi_categorical,
         "categorical(key, logits, axis=-1, shape=None, replace=True): samples of categorical distributions (Gumbel max)");
  sr_def("jax.random.permutation", bi_permutation,
         "permutation(key, x, axis=0, independent=False): a shuffled arange(x) or array (jit _shuffle, sorts by random bits)");
  sr_def("jax.random.choice", bi_choice,
         "choice(key, a, shape=(), replace=True, p=None, axis=0): a random sample of a's elements");
}

/* For the samplers of random_dists.c. */
SrVal *sr_random_check_key(SrInterp *I, SrVal *key, const char *name) { return check_key(I, key, name); }
void sr_random_shape_str(SrBuf *b, const int64_t *shape, int nd) { shape_str(b, shape, nd); }
