/* nn_initializers.c: jax.nn.initializers (jax/_src/nn/initializers.py),
 * and jax.random.truncated_normal (random.py's _truncated_normal), which
 * the truncated-normal initializers draw with.
 *
 * zeros and ones are functions of (key, shape, dtype); the others return
 * an init(key, shape, dtype=<its default>, out_sharding=None) function, a
 * builtin whose data is the initializer's parameters.  Every draw is
 * jax.random's (uniform, normal, truncated_normal), so the values are
 * JAX's for the same key; orthogonal's draws random.orthogonal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/nn.h"
#include "jax/random.h"
#include "py/ast.h"
#include "py/objects.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)

enum { K_CONSTANT, K_UNIFORM, K_NORMAL, K_TRUNCATED, K_VARIANCE, K_ORTHOGONAL, K_DELTA };
enum { D_TRUNCATED, D_NORMAL, D_UNIFORM };
enum { M_FAN_IN, M_FAN_OUT, M_FAN_AVG, M_FAN_GEO_AVG };

typedef struct Init {
  int kind;
  int dtype;        /* the default dtype, -1 for None */
  SrVal *value;     /* constant's value; uniform's scale; normal's stddev */
  double scale, lower, upper;
  int mode, distribution;
  SrVal *in_axis, *out_axis, *batch_axis;
  int64_t column_axis; /* orthogonal's */
} Init;

static void init_free(void *d) {
  Init *in = d;
  sr_unref(in->value);
  sr_unref(in->in_axis);
  sr_unref(in->out_axis);
  sr_unref(in->batch_axis);
  free(in);
}

static int default_float(SrInterp *I) { return I->jax->enable_x64 ? SR_F64 : SR_F32; }

/* jnp.array(v, dtype) */
static SrVal *array_of(SrNnScope *s, SrVal *v, int dt) {
  const char *kw[1] = {"dtype"};
  SrVal *kwv[1] = {sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)dt))};
  return sr_nn_call(s, "jax.numpy.array", 1, &v, 1, kw, kwv);
}

/* jax.random.<name>(key, shape, dtype[, minval]) with out_sharding */
static SrVal *draw(SrNnScope *s, const char *name, SrVal *key, SrVal *shape, int dt, SrVal *minval, SrVal *osh) {
  SrVal *v[4] = {key, shape, sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)dt)), minval};
  const char *kw[1] = {"out_sharding"};
  SrVal *kwv[1] = {sr_nn_given(osh) ? osh : NULL};
  return sr_nn_call(s, name, minval ? 4 : 3, v, 1, kw, kwv);
}

/* ---- jax.random.truncated_normal ---- */

typedef struct Trunc {
  int64_t shape[SR_MAX_RANK];
  int nd;
  SrDtype dt;
} Trunc;

/* _truncated_normal(key, lower, upper, shape, dtype, out_sharding) */
static SrVal *trunc_body(SrInterp *I, SrArgs *a) {
  Trunc *t = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *key = a->v[0];
  SrVal *sqrt2 = sr_nn_typed_scalar(s, sqrt(2.0), t->dt);
  SrVal *lower = sr_nn_keep(s, sr_lax_convert(I, a->v[1], t->dt, 0, NULL));
  SrVal *upper = lower ? sr_nn_keep(s, sr_lax_convert(I, a->v[2], t->dt, 0, NULL)) : NULL;
  SrVal *ea = sr_nn_call1(s, "jax.lax.erf", OP(DIV, lower, sqrt2));
  SrVal *eb = ea ? sr_nn_call1(s, "jax.lax.erf", OP(DIV, upper, sqrt2)) : NULL;
  if (!eb) return sr_nn_done(s, NULL);
  SrVal *shape = sr_nn_keep(s, sr_int_tuple(t->shape, t->nd));
  SrVal *v[5] = {key, shape, sr_nn_keep(s, sr_dtype_val(NULL, t->dt)), ea, eb};
  SrVal *u = sr_nn_call(s, "jax.random.uniform", 5, v, 0, NULL, NULL);
  SrVal *out = OP(MUL, sqrt2, sr_nn_keep(s, u ? sr_lax_unary(I, SR_P_erf_inv, u) : NULL));
  SrVal *sl = out ? sr_nn_call1(s, "jax.lax.stop_gradient", lower) : NULL;
  SrVal *lo = sl ? sr_nn_keep(s, sr_lax_binary(I, SR_P_nextafter, sl, sr_nn_typed_scalar(s, INFINITY, t->dt))) : NULL;
  SrVal *su = lo ? sr_nn_call1(s, "jax.lax.stop_gradient", upper) : NULL;
  SrVal *hi = su ? sr_nn_keep(s, sr_lax_binary(I, SR_P_nextafter, su, sr_nn_typed_scalar(s, -INFINITY, t->dt))) : NULL;
  return sr_nn_done(s, sr_nn_call3(s, "jax.numpy.clip", out, lo, hi));
}

/* the jit _truncated_normal (static shape and dtype) */
static SrVal *trunc_jit(SrInterp *I, SrArgs *a) {
  Trunc *t = sr_xmalloc(sizeof *t);
  *t = *(const Trunc *)sr_current_builtin(I)->data;
  SrVal *b = sr_builtin_with("_truncated_normal", trunc_body, t, free);
  SrVal *r = sr_jit_call(I, b, "_truncated_normal", a);
  sr_unref(b);
  return r;
}

static SrVal *random_truncated_normal(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "truncated_normal", "key, lower, upper, shape=, dtype=, *, out_sharding=", p) < 0)
    return NULL;
  Trunc *t = sr_xcalloc(1, sizeof *t);
  int dt;
  if (sr_dtype_arg(I, p[4], &dt, "truncated_normal") < 0) {
    free(t);
    return NULL;
  }
  t->dt = dt < 0 ? (SrDtype)default_float(I) : (SrDtype)dt;
  if (!sr_dtype_is_float(t->dt)) {
    free(t);
    return sr_raise(I, "ValueError", "dtype argument to `truncated_normal` must be a float dtype, got %s",
                    sr_dtype_name((SrDtype)dt));
  }
  if (sr_nn_given(p[3])) {
    if (sr_shape_arg(I, p[3], t->shape, &t->nd, "shape") < 0) {
      free(t);
      return NULL;
    }
  } else {
    /* lax.broadcast_shapes(np.shape(lower), np.shape(upper)) */
    for (int i = 1; i < 3; i++) {
      const SrType *ty = sr_value_type(I, p[i]);
      if (ty && ty->ndim > t->nd) {
        t->nd = ty->ndim;
        for (int k = 0; k < ty->ndim; k++) t->shape[k] = ty->dims[k].size;
      }
    }
  }
  SrVal *fn = sr_builtin_with("_truncated_normal", trunc_jit, t, free);
  return sr_random_maybe_auto_axes(I, fn, sr_nn_given(p[5]) ? p[5] : NULL, "truncated_normal", 3, p);
}

/* ---- zeros, ones ---- */

static SrVal *zeros_ones(SrInterp *I, SrArgs *a, const char *name, const char *q) {
  SrVal *p[4];
  if (sr_args_parse(I, a, name, "key, shape, dtype=, out_sharding=", p) < 0) return NULL;
  int dt;
  if (sr_dtype_arg(I, p[2], &dt, name) < 0) return NULL;
  SCOPE(I);
  SrVal *v[2] = {p[1], sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)(dt < 0 ? default_float(I) : dt)))};
  const char *kw[1] = {"out_sharding"};
  SrVal *kwv[1] = {sr_nn_given(p[3]) ? p[3] : NULL};
  return sr_nn_done(s, sr_nn_call(s, q, 2, v, 1, kw, kwv));
}

static SrVal *ini_zeros(SrInterp *I, SrArgs *a) { return zeros_ones(I, a, "zeros", "jax.numpy.zeros"); }
static SrVal *ini_ones(SrInterp *I, SrArgs *a) { return zeros_ones(I, a, "ones", "jax.numpy.ones"); }

/* ---- the init functions ---- */

/* _compute_fans: the size of the axes ax (an int or a sequence) of shape */
static int fan_size(SrInterp *I, SrVal *ax, const int64_t *shape, int nd, double *out) {
  int seq = sr_is_seq(ax);
  int n = seq ? ax->seq.n : 1;
  double p = 1;
  for (int i = 0; i < n; i++) {
    int64_t k;
    if (sr_as_int(I, seq ? ax->seq.items[i] : ax, "axis", &k) < 0) return -1;
    if (k < 0) k += nd;
    if (k < 0 || k >= nd) return sr_raise(I, "IndexError", "tuple index out of range"), -1;
    p *= (double)shape[k];
  }
  *out = p;
  return 0;
}

/* _complex_uniform (a disk of unit variance) and _complex_truncated_normal
   (modulus truncated to 2): r * exp(1j * theta) from two uniform draws of
   the real dtype on random.split(key) */
static SrVal *complex_draw(SrNnScope *s, SrVal *key, SrVal *shape_t, SrDtype cdt, int truncated) {
  SrInterp *I = s->I;
  SrDtype rdt = cdt == SR_C128 ? SR_F64 : SR_F32;
  SrVal *ks = sr_nn_call1(s, "jax.random.split", key);
  SrVal *kr = ks ? sr_nn_keep(s, sr_getindex(I, ks, 0)) : NULL, *kt = kr ? sr_nn_keep(s, sr_getindex(I, ks, 1)) : NULL;
  SrVal *u = kt ? draw(s, "jax.random.uniform", kr, shape_t, rdt, NULL, NULL) : NULL;
  SrVal *r;
  if (!truncated) {
    SrVal *sq = u ? sr_nn_call1(s, "jax.numpy.sqrt", OP(MUL, sr_nn_int(s, 2), u)) : NULL;
    r = sq ? sr_nn_keep(s, sr_lax_convert(I, sq, cdt, 0, NULL)) : NULL;
  } else {
    /* t = (1 - exp(jnp.array(-(upper ** 2), dtype))) * u; r = sqrt(-log(1 - t)) */
    SrVal *e = u ? sr_nn_call1(s, "jax.numpy.exp", array_of(s, sr_nn_int(s, -4), cdt)) : NULL;
    SrVal *uc = e ? sr_nn_keep(s, sr_lax_convert(I, u, cdt, 0, NULL)) : NULL;
    SrVal *t = uc ? OP(MUL, OP(SUB, sr_nn_int(s, 1), e), uc) : NULL;
    SrVal *lg = t ? sr_nn_call1(s, "jax.numpy.log", OP(SUB, sr_nn_int(s, 1), t)) : NULL;
    r = lg ? sr_nn_call1(s, "jax.numpy.sqrt", sr_nn_op(s, SR_OP_SUB, sr_nn_int(s, 0), lg)) : NULL;
  }
  SrVal *u2 = r ? draw(s, "jax.random.uniform", kt, shape_t, rdt, NULL, NULL) : NULL;
  SrVal *u2c = u2 ? sr_nn_keep(s, sr_lax_convert(I, u2, cdt, 0, NULL)) : NULL;
  SrVal *theta = u2c ? OP(MUL, sr_nn_float(s, 2 * M_PI), u2c) : NULL;
  SrVal *ex = theta ? sr_nn_call1(s, "jax.numpy.exp", OP(MUL, sr_nn_keep(s, sr_complex(NULL, 0, 1)), theta)) : NULL;
  return ex ? OP(MUL, r, ex) : NULL;
}

static SrVal *variance_scaling_init(SrNnScope *s, Init *in, SrVal *key, SrVal *shapev, int dt, SrVal *osh) {
  SrInterp *I = s->I;
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_shape_arg(I, shapev, shape, &nd, "shape") < 0) return NULL;
  if (in->in_axis->kind == SR_V_INT && in->in_axis->i == -2 && nd <= 1)
    return sr_raise(I, "ValueError",
                    "Can't compute input and output sizes of a %d-dimensional weights tensor with default in_axis. "
                    "Must be at least 2D or specify in_axis explicitly.",
                    nd);
  double in_size, out_size, batch_size, total = 1;
  if (fan_size(I, in->in_axis, shape, nd, &in_size) < 0 || fan_size(I, in->out_axis, shape, nd, &out_size) < 0 ||
      fan_size(I, in->batch_axis, shape, nd, &batch_size) < 0)
    return NULL;
  for (int i = 0; i < nd; i++) total *= (double)shape[i];
  double rf = total / in_size / out_size / batch_size;
  double fan_in = in_size * rf, fan_out = out_size * rf;
  double den = in->mode == M_FAN_IN    ? fan_in
               : in->mode == M_FAN_OUT ? fan_out
               : in->mode == M_FAN_AVG ? (fan_in + fan_out) / 2
                                       : sqrt(fan_in * fan_out);
  SrVal *variance = array_of(s, sr_nn_float(s, in->scale / den), dt);
  SrVal *shape_t = sr_nn_keep(s, sr_int_tuple(shape, nd));
  if (sr_dtype_kind((SrDtype)dt) == SR_DK_COMPLEX && in->distribution != D_NORMAL) {
    if (sr_nn_given(osh)) return sr_raise(I, "NotImplementedError", "variance_scaling: out_sharding= of a complex dtype"), NULL;
    SrVal *sd = variance ? sr_nn_call1(s, "jax.numpy.sqrt", variance) : NULL;
    if (sd && in->distribution == D_TRUNCATED) sd = OP(DIV, sd, array_of(s, sr_nn_float(s, .95311164380491208), dt));
    SrVal *r = sd ? complex_draw(s, key, shape_t, (SrDtype)dt, in->distribution == D_TRUNCATED) : NULL;
    return OP(MUL, r, sd);
  }
  if (in->distribution == D_TRUNCATED) {
    SrVal *stddev = OP(DIV, sr_nn_call1(s, "jax.numpy.sqrt", variance), array_of(s, sr_nn_float(s, .87962566103423978), dt));
    SrVal *v[6] = {key, sr_nn_int(s, -2), sr_nn_int(s, 2), shape_t, sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)dt))};
    const char *kw[1] = {"out_sharding"};
    SrVal *kwv[1] = {sr_nn_given(osh) ? osh : NULL};
    SrVal *r = stddev ? sr_nn_call(s, "jax.random.truncated_normal", 5, v, 1, kw, kwv) : NULL;
    return OP(MUL, r, stddev);
  }
  if (in->distribution == D_NORMAL) {
    SrVal *r = variance ? draw(s, "jax.random.normal", key, shape_t, dt, NULL, osh) : NULL;
    return OP(MUL, r, r ? sr_nn_call1(s, "jax.numpy.sqrt", variance) : NULL);
  }
  SrVal *r = variance ? draw(s, "jax.random.uniform", key, shape_t, dt, sr_nn_int(s, -1), osh) : NULL;
  return OP(MUL, r, r ? sr_nn_call1(s, "jax.numpy.sqrt", OP(MUL, sr_nn_int(s, 3), variance)) : NULL);
}

/* orthogonal's init: random.orthogonal(key, n_rows, (), dtype, n_cols)
   with n_cols = shape[column_axis], reshaped to shape without that axis
   plus it, the axis moved back, times jnp.array(scale, dtype) */
static SrVal *orthogonal_init(SrNnScope *s, Init *in, SrVal *key, SrVal *shapev, int dt, SrVal *osh) {
  SrInterp *I = s->I;
  int64_t shape[SR_MAX_RANK], rest[SR_MAX_RANK], ca;
  int nd = 0, k = 0;
  if (sr_nn_given(osh)) return sr_raise(I, "NotImplementedError", "orthogonal: out_sharding= is not supported"), NULL;
  if (sr_shape_arg(I, shapev, shape, &nd, "shape") < 0) return NULL;
  if (nd < 2) return sr_raise(I, "ValueError", "orthogonal initializer requires at least a 2D shape"), NULL;
  int64_t total = 1;
  for (int i = 0; i < nd; i++) total *= shape[i];
  if (total == 0) {
    const char *kw[1] = {"dtype"};
    SrVal *kwv[1] = {sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)dt))};
    return sr_nn_call(s, "jax.numpy.zeros", 1, &shapev, 1, kw, kwv);
  }
  if (sr_api_axis(I, in->column_axis, nd, &ca) < 0) return NULL;
  for (int i = 0; i < nd; i++)
    if (i != ca) rest[k++] = shape[i];
  rest[k++] = shape[ca];
  SrVal *v[5] = {key, sr_nn_int(s, total / shape[ca]), sr_nn_keep(s, sr_int_tuple(NULL, 0)),
                 sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)dt)), sr_nn_int(s, shape[ca])};
  SrVal *q = sr_nn_call(s, "jax.random.orthogonal", 5, v, 0, NULL, NULL);
  q = sr_nn_call2(s, "jax.numpy.reshape", q, sr_nn_keep(s, sr_int_tuple(rest, k)));
  q = sr_nn_call3(s, "jax.numpy.moveaxis", q, sr_nn_int(s, -1), sr_nn_int(s, in->column_axis));
  return OP(MUL, q ? array_of(s, in->value, dt) : NULL, q);
}

/* delta_orthogonal's init: zeros with an orthogonal shape[-2:] matrix at
   the centre of the spatial axes (W.at[(k1-1)//2, ...].set(ortho)) */
static SrVal *delta_orthogonal_init(SrNnScope *s, Init *in, SrVal *key, SrVal *shapev, int dt, SrVal *osh) {
  SrInterp *I = s->I;
  int64_t shape[SR_MAX_RANK];
  int nd = 0;
  if (sr_nn_given(osh)) return sr_raise(I, "NotImplementedError", "%s", ""), NULL;
  if (sr_shape_arg(I, shapev, shape, &nd, "shape") < 0) return NULL;
  if (nd < 3 || nd > 5) return sr_raise(I, "ValueError", "Delta orthogonal initializer requires a 3D, 4D or 5D shape."), NULL;
  if (shape[nd - 1] < shape[nd - 2])
    return sr_raise(I, "ValueError", "`fan_in` must be less or equal than `fan_out`. "), NULL;
  SrVal *ortho = orthogonal_init(s, in, key, sr_nn_keep(s, sr_int_tuple(shape + nd - 2, 2)), dt, NULL);
  const char *kw[1] = {"dtype"};
  SrVal *kwv[1] = {sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)dt))};
  SrVal *W = ortho ? sr_nn_call(s, "jax.numpy.zeros", 1, &shapev, 1, kw, kwv) : NULL;
  SrVal *at = W ? sr_nn_keep(s, sr_getattr(I, W, "at")) : NULL;
  int64_t mid[3];
  for (int i = 0; i < nd - 2; i++) mid[i] = (shape[i] - 1) / 2;
  SrVal *ref = at ? sr_nn_keep(s, sr_getitem(I, at, sr_nn_keep(s, sr_int_tuple(mid, nd - 2)))) : NULL;
  SrVal *set = ref ? sr_nn_keep(s, sr_getattr(I, ref, "set")) : NULL;
  return set ? sr_nn_keep(s, sr_call1(I, set, ortho)) : NULL;
}

static SrVal *init_call(SrInterp *I, SrArgs *a) {
  Init *in = sr_current_builtin(I)->data;
  SrVal *p[4];
  if (sr_args_parse(I, a, "init", "key, shape, dtype=, out_sharding=", p) < 0) return NULL;
  int dt = in->dtype;
  if (p[2] && sr_dtype_arg(I, p[2], &dt, "init") < 0) return NULL;
  if (dt < 0) dt = default_float(I);
  SrVal *key = p[0], *shape = p[1], *osh = p[3];
  SCOPE(I);
  SrVal *r = NULL;
  switch (in->kind) {
  case K_CONSTANT: {
    /* jnp.full(shape, value, dtype=dtype, device=out_sharding) */
    const char *kw[2] = {"dtype", "device"};
    SrVal *kwv[2] = {sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)dt)), sr_nn_given(osh) ? osh : NULL};
    SrVal *v[2] = {shape, in->value};
    r = sr_nn_call(s, "jax.numpy.full", 2, v, 1 + sr_nn_given(osh), kw, kwv);
    break;
  }
  case K_UNIFORM:
  case K_NORMAL: {
    SrVal *d = draw(s, in->kind == K_UNIFORM ? "jax.random.uniform" : "jax.random.normal", key, shape, dt, NULL, osh);
    r = OP(MUL, d, d ? array_of(s, in->value, dt) : NULL);
    break;
  }
  case K_TRUNCATED: {
    SrVal *v[5] = {key, sr_nn_float(s, in->lower), sr_nn_float(s, in->upper), shape,
                   sr_nn_keep(s, sr_dtype_val(NULL, (SrDtype)dt))};
    const char *kw[1] = {"out_sharding"};
    SrVal *kwv[1] = {sr_nn_given(osh) ? osh : NULL};
    SrVal *d = sr_nn_call(s, "jax.random.truncated_normal", 5, v, 1, kw, kwv);
    r = OP(MUL, d, d ? array_of(s, in->value, dt) : NULL);
    break;
  }
  case K_VARIANCE: r = variance_scaling_init(s, in, key, shape, dt, osh); break;
  case K_DELTA: r = delta_orthogonal_init(s, in, key, shape, dt, osh); break;
  default: r = orthogonal_init(s, in, key, shape, dt, osh);
  }
  return sr_nn_done(s, r);
}

static SrVal *make_init(Init *in) { return sr_builtin_with("init", init_call, in, init_free); }

static Init *new_init(SrInterp *I, int kind, SrVal *dtype, const char *name) {
  int dt = -1;
  if (dtype && sr_dtype_arg(I, dtype, &dt, name) < 0) return NULL;
  Init *in = sr_xcalloc(1, sizeof *in);
  in->kind = kind;
  in->dtype = dt;
  return in;
}

static SrVal *ini_constant(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "constant", "value, dtype=", p) < 0) return NULL;
  Init *in = new_init(I, K_CONSTANT, p[1], "constant");
  if (!in) return NULL;
  in->value = sr_ref(p[0]);
  return make_init(in);
}

/* uniform(scale=1e-2, dtype=None), normal(stddev=1e-2, dtype=None) */
static SrVal *ini_scaled(SrInterp *I, SrArgs *a, int kind, const char *name, const char *spec) {
  SrVal *p[2];
  if (sr_args_parse(I, a, name, spec, p) < 0) return NULL;
  Init *in = new_init(I, kind, p[1], name);
  if (!in) return NULL;
  in->value = p[0] ? sr_ref(p[0]) : sr_float(NULL, 1e-2);
  return make_init(in);
}

static SrVal *ini_uniform(SrInterp *I, SrArgs *a) { return ini_scaled(I, a, K_UNIFORM, "uniform", "scale=, dtype="); }
static SrVal *ini_normal(SrInterp *I, SrArgs *a) { return ini_scaled(I, a, K_NORMAL, "normal", "stddev=, dtype="); }

static SrVal *ini_truncated_normal(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "truncated_normal", "stddev=, dtype=, lower=, upper=", p) < 0) return NULL;
  double lo = -2.0, hi = 2.0;
  if ((p[2] && sr_as_float(I, p[2], "lower", &lo) < 0) || (p[3] && sr_as_float(I, p[3], "upper", &hi) < 0))
    return NULL;
  Init *in = new_init(I, K_TRUNCATED, p[1], "truncated_normal");
  if (!in) return NULL;
  in->value = p[0] ? sr_ref(p[0]) : sr_float(NULL, 1e-2);
  in->lower = lo;
  in->upper = hi;
  return make_init(in);
}

/* variance_scaling's parameters after scale, mode and distribution */
static SrVal *vs_make(SrInterp *I, double scale, int mode, int distribution, SrVal **axes_dtype, const char *name) {
  Init *in = new_init(I, K_VARIANCE, axes_dtype[3], name);
  if (!in) return NULL;
  in->scale = scale;
  in->mode = mode;
  in->distribution = distribution;
  in->in_axis = axes_dtype[0] ? sr_ref(axes_dtype[0]) : sr_int(NULL, -2);
  in->out_axis = axes_dtype[1] ? sr_ref(axes_dtype[1]) : sr_int(NULL, -1);
  in->batch_axis = axes_dtype[2] ? sr_ref(axes_dtype[2]) : sr_tuple(NULL, 0, NULL);
  return make_init(in);
}

static SrVal *ini_variance_scaling(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "variance_scaling", "scale, mode, distribution, in_axis=, out_axis=, batch_axis=, dtype=", p) <
      0)
    return NULL;
  double scale;
  if (sr_as_float(I, p[0], "scale", &scale) < 0) return NULL;
  const char *mode = sr_as_str(I, p[1], "mode"), *dist = mode ? sr_as_str(I, p[2], "distribution") : NULL;
  if (!dist) return NULL;
  static const char *const modes[] = {"fan_in", "fan_out", "fan_avg", "fan_geo_avg"};
  static const char *const dists[] = {"truncated_normal", "normal", "uniform"};
  int m = -1, d = -1;
  for (int i = 0; i < 4; i++)
    if (strcmp(mode, modes[i]) == 0) m = i;
  for (int i = 0; i < 3; i++)
    if (strcmp(dist, dists[i]) == 0) d = i;
  /* JAX raises these when init is called; here when it is made */
  if (m < 0) return sr_raise(I, "ValueError", "invalid mode for variance scaling initializer: %s", mode);
  if (d < 0) return sr_raise(I, "ValueError", "invalid distribution for variance scaling initializer: %s", dist);
  return vs_make(I, scale, m, d, p + 3, "variance_scaling");
}

/* glorot/xavier, lecun, he/kaiming: variance_scaling(scale, mode, distribution) */
static SrVal *ini_named(SrInterp *I, SrArgs *a, const char *name, double scale, int mode, int dist) {
  SrVal *p[4];
  if (sr_args_parse(I, a, name, "in_axis=, out_axis=, batch_axis=, dtype=", p) < 0) return NULL;
  return vs_make(I, scale, mode, dist, p, name);
}

static SrVal *ini_glorot_uniform(SrInterp *I, SrArgs *a) {
  return ini_named(I, a, "glorot_uniform", 1.0, M_FAN_AVG, D_UNIFORM);
}
static SrVal *ini_glorot_normal(SrInterp *I, SrArgs *a) {
  return ini_named(I, a, "glorot_normal", 1.0, M_FAN_AVG, D_TRUNCATED);
}
static SrVal *ini_lecun_uniform(SrInterp *I, SrArgs *a) {
  return ini_named(I, a, "lecun_uniform", 1.0, M_FAN_IN, D_UNIFORM);
}
static SrVal *ini_lecun_normal(SrInterp *I, SrArgs *a) {
  return ini_named(I, a, "lecun_normal", 1.0, M_FAN_IN, D_TRUNCATED);
}
static SrVal *ini_he_uniform(SrInterp *I, SrArgs *a) { return ini_named(I, a, "he_uniform", 2.0, M_FAN_IN, D_UNIFORM); }
static SrVal *ini_he_normal(SrInterp *I, SrArgs *a) { return ini_named(I, a, "he_normal", 2.0, M_FAN_IN, D_TRUNCATED); }

static SrVal *ini_orthogonal(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "orthogonal", "scale=, column_axis=, dtype=", p) < 0) return NULL;
  int64_t ca = -1;
  if (p[1] && sr_as_int(I, p[1], "column_axis", &ca) < 0) return NULL;
  Init *in = new_init(I, K_ORTHOGONAL, p[2], "orthogonal");
  if (!in) return NULL;
  in->value = p[0] ? sr_ref(p[0]) : sr_float(NULL, 1.0);
  in->column_axis = ca;
  return make_init(in);
}

static SrVal *ini_delta_orthogonal(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "delta_orthogonal", "scale=, column_axis=, dtype=", p) < 0) return NULL;
  int64_t ca = -1;
  if (p[1] && sr_as_int(I, p[1], "column_axis", &ca) < 0) return NULL;
  Init *in = new_init(I, K_DELTA, p[2], "delta_orthogonal");
  if (!in) return NULL;
  in->value = p[0] ? sr_ref(p[0]) : sr_float(NULL, 1.0);
  in->column_axis = ca;
  return make_init(in);
}

/* ---- registration ---- */

void sr_nn_initializers_init(void) {
  if (!sr_lookup_qualname("jax.random.truncated_normal"))
    sr_def("jax.random.truncated_normal", random_truncated_normal,
           "truncated_normal(key, lower, upper, shape=None, dtype=float32, *, out_sharding=None): normal samples "
           "truncated to (lower, upper)");
  sr_def("jax.nn.initializers.zeros", ini_zeros, "zeros(key, shape, dtype=float32): an array of zeros (jax.nn.initializers)");
  sr_def("jax.nn.initializers.ones", ini_ones, "ones(key, shape, dtype=float32): an array of ones (jax.nn.initializers)");
  sr_def("jax.nn.initializers.constant", ini_constant,
         "constant(value, dtype=None): an init(key, shape, dtype) filling with value (jax.nn.initializers)");
  sr_def("jax.nn.initializers.uniform", ini_uniform,
         "uniform(scale=1e-2, dtype=None): an init drawing uniformly from [0, scale) (jax.nn.initializers)");
  sr_def("jax.nn.initializers.normal", ini_normal,
         "normal(stddev=1e-2, dtype=None): an init drawing from N(0, stddev^2) (jax.nn.initializers)");
  sr_def("jax.nn.initializers.truncated_normal", ini_truncated_normal,
         "truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0): an init (jax.nn.initializers)");
  sr_def("jax.nn.initializers.variance_scaling", ini_variance_scaling,
         "variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None): an init");
  sr_def("jax.nn.initializers.glorot_uniform jax.nn.initializers.xavier_uniform", ini_glorot_uniform,
         "glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None): variance_scaling(1.0, 'fan_avg', 'uniform')");
  sr_def("jax.nn.initializers.glorot_normal jax.nn.initializers.xavier_normal", ini_glorot_normal,
         "glorot_normal(...): variance_scaling(1.0, 'fan_avg', 'truncated_normal')");
  sr_def("jax.nn.initializers.lecun_uniform", ini_lecun_uniform,
         "lecun_uniform(...): variance_scaling(1.0, 'fan_in', 'uniform')");
  sr_def("jax.nn.initializers.lecun_normal", ini_lecun_normal,
         "lecun_normal(...): variance_scaling(1.0, 'fan_in', 'truncated_normal')");
  sr_def("jax.nn.initializers.he_uniform jax.nn.initializers.kaiming_uniform", ini_he_uniform,
         "he_uniform(...): variance_scaling(2.0, 'fan_in', 'uniform')");
  sr_def("jax.nn.initializers.he_normal jax.nn.initializers.kaiming_normal", ini_he_normal,
         "he_normal(...): variance_scaling(2.0, 'fan_in', 'truncated_normal')");
  sr_def("jax.nn.initializers.delta_orthogonal", ini_delta_orthogonal,
         "delta_orthogonal(scale=1.0, column_axis=-1, dtype=None): an init for 3D-5D convolution kernels, an orthogonal "
         "matrix at the centre of the spatial axes (jax.nn.initializers)");
  sr_def("jax.nn.initializers.orthogonal", ini_orthogonal,
         "orthogonal(scale=1.0, column_axis=-1, dtype=None): an init drawing jax.random.orthogonal matrices (jax.nn.initializers)");
}
