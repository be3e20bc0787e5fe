/* nn.c: jax.nn (jax/_src/nn/functions.py).
 *
 * Each function is written as JAX writes it, on the registered jax.numpy
 * and jax.lax functions, with the wrappers JAX puts around it: a plain
 * @jax.jit is a jit equation named for the function (sr_api_jit; static
 * arguments travel in the body's data), @jit(inline=True) is nothing, and
 * @custom_jvp is a jax.custom_jvp object built on the jitted function
 * with JAX's rule (relu, relu6: defjvps; _softmax: defjvp, its axis a
 * nondiff argument held by the rule), so jax.make_jaxpr and the
 * derivatives print what JAX's do.  The helpers of nn.h keep the
 * temporaries of a body in a scope.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/nn.h"
#include "jax/tracers.h"
#include "jax/array_methods.h"
#include "py/ast.h"
#include "py/objects.h"
#include "core/jaxstate.h"
#include "lax/lax.h"
#include "util/intern.h"

/* ---- the scope of temporaries (nn.h) ---- */

SrVal *sr_nn_keep(SrNnScope *s, SrVal *v) {
  if (!v) return NULL;
  if (s->n == SR_NN_SCOPE_MAX) {
    sr_unref(v);
    return sr_raise(s->I, "RuntimeError", "jax.nn: too many temporaries");
  }
  s->v[s->n++] = v;
  return v;
}

SrVal *sr_nn_done(SrNnScope *s, SrVal *r) {
  if (r) sr_ref(r);
  for (int i = 0; i < s->n; i++) sr_unref(s->v[i]);
  s->n = 0;
  return r;
}

SrVal *sr_nn_float(SrNnScope *s, double d) { return sr_nn_keep(s, sr_float(NULL, d)); }
SrVal *sr_nn_int(SrNnScope *s, int64_t i) { return sr_nn_keep(s, sr_int(NULL, i)); }

int sr_nn_given(const SrVal *v) { return v && v->kind != SR_V_NONE; }

void sr_nn_unref_data(void *d) { sr_unref(d); }

SrVal *sr_nn_call(SrNnScope *s, const char *q, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv) {
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  SrVal *fn = sr_lookup_qualname(q);
  if (!fn) return sr_raise(s->I, "NotImplementedError", "%s is not available", q);
  const char *k[8];
  SrVal *kv[8];
  int m = 0;
  for (int i = 0; i < nkw && m < 8; i++)
    if (kwv[i]) {
      k[m] = sr_intern_cstr(kw[i]);
      kv[m++] = kwv[i];
    }
  SrArgs a = {n, v, m, k, kv, NULL};
  return sr_nn_keep(s, sr_call(s->I, fn, &a));
}

SrVal *sr_nn_call1(SrNnScope *s, const char *q, SrVal *x) { return sr_nn_call(s, q, 1, &x, 0, NULL, NULL); }

SrVal *sr_nn_call2(SrNnScope *s, const char *q, SrVal *x, SrVal *y) {
  SrVal *v[2] = {x, y};
  return sr_nn_call(s, q, 2, v, 0, NULL, NULL);
}

SrVal *sr_nn_call3(SrNnScope *s, const char *q, SrVal *x, SrVal *y, SrVal *z) {
  SrVal *v[3] = {x, y, z};
  return sr_nn_call(s, q, 3, v, 0, NULL, NULL);
}

SrVal *sr_nn_op(SrNnScope *s, int op, SrVal *a, SrVal *b) {
  if (!a || !b) return NULL;
  return sr_nn_keep(s, sr_binop(s->I, op, a, b));
}

int sr_nn_axes(SrInterp *I, SrVal *axis, int nd, int64_t *axes, int *n) {
  *n = 0;
  if (!sr_nn_given(axis)) {
    for (int i = 0; i < nd; i++) axes[(*n)++] = i;
    return 0;
  }
  int seq = sr_is_seq(axis);
  int k = seq ? axis->seq.n : 1;
  if (k > SR_MAX_RANK) return sr_raise(I, "ValueError", "too many axes"), -1;
  for (int i = 0; i < k; i++) {
    int64_t a;
    if (sr_as_int(I, seq ? axis->seq.items[i] : axis, "axis", &a) < 0) return -1;
    if (sr_api_axis(I, a, nd, &axes[i]) < 0) return -1;
    for (int j = 0; j < i; j++)
      if (axes[j] == axes[i]) return sr_raise(I, "ValueError", "duplicate value in 'axis'"), -1;
  }
  *n = k;
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

SrVal *sr_nn_array(SrNnScope *s, SrVal *x) {
  const SrType *t = x ? sr_value_type(s->I, x) : NULL;
  if (!t) return NULL;
  if (sr_array_of(x)) return x;
  if (t->weak) return sr_nn_call1(s, "jax.numpy.asarray", x);
  const char *kw[1] = {"dtype"};
  SrVal *kv[1] = {sr_nn_keep(s, sr_dtype_val(NULL, t->dtype))};
  return sr_nn_call(s, "jax.numpy.asarray", 1, &x, 1, kw, kv);
}

SrVal *sr_nn_typed_scalar(SrNnScope *s, double v, SrDtype dt) {
  SrVal *f = sr_float(NULL, v);
  SrVal *r = sr_jnp_asarray(s->I, f, (int)dt);
  sr_unref(f);
  return sr_nn_keep(s, r);
}

SrVal *sr_nn_reduce(SrNnScope *s, int prim, SrVal *x, SrVal *axis, SrVal *where, SrVal *initial, int keepdims) {
  SrInterp *I = s->I;
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  if (!t) return NULL;
  int64_t ax[SR_MAX_RANK];
  int n;
  if (sr_nn_axes(I, axis, t->ndim, ax, &n) < 0) return NULL;
  int is_max = prim == SR_P_reduce_max;
  SrDtype dt = t->dtype;
  /* sum: upcast_f16_for_computation */
  int up = !is_max && (dt == SR_F16 || dt == SR_BF16);
  SrVal *a = up ? sr_nn_keep(s, sr_lax_convert(I, x, SR_F32, 0, NULL)) : x;
  if (!a) return NULL;
  SrDtype cdt = up ? SR_F32 : dt;
  if (sr_nn_given(where)) {
    SrVal *iv = sr_nn_typed_scalar(s, is_max ? -INFINITY : 0.0, cdt);
    a = sr_nn_call3(s, "jax.numpy.where", where, a, iv);
    if (!a) return NULL;
  }
  SrVal *r = sr_nn_keep(s, sr_lax_reduce(I, prim, a, ax, n, NULL));
  if (r && sr_nn_given(initial)) {
    SrVal *iv = sr_nn_keep(s, sr_lax_convert(I, initial, cdt, 0, NULL));
    const SrType *it = iv ? sr_value_type(I, iv) : NULL;
    if (it && it->ndim) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_puts(&b, "(");
      for (int i = 0; i < it->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)it->dims[i].size);
      sr_buf_puts(&b, it->ndim == 1 ? ",)" : ")");
      sr_raise(I, "ValueError", "initial value must be a scalar. Got array of shape %s", b.p);
      sr_buf_free(&b);
      return NULL;
    }
    r = iv ? sr_nn_keep(s, sr_lax_binary(I, is_max ? SR_P_max : SR_P_add, iv, r)) : NULL;
  }
  if (r && keepdims) {
    qsort(ax, (size_t)n, sizeof *ax, cmp_i64);
    r = sr_nn_keep(s, sr_lax_expand_dims(I, r, ax, n));
  }
  if (r && up) r = sr_nn_keep(s, sr_lax_convert(I, r, dt, 0, NULL));
  return r;
}

/* ---- calling the bodies ---- */

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define C3(q, x, y, z) sr_nn_call3(s, q, x, y, z)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define FL(d) sr_nn_float(s, d)
#define IN(i) sr_nn_int(s, i)

/* A plain @jax.jit function of its given positional parameters (after
   sr_args_parse's order; the ones not given are the body's defaults). */
static SrVal *jit_given(SrInterp *I, const char *name, SrBuiltinFn body, void *data, int n, SrVal **p) {
  SrVal *args[8];
  int k = 0;
  while (k < n && k < 8 && p[k]) {
    args[k] = p[k];
    k++;
  }
  return sr_api_jit(I, name, body, data, k, args);
}

/* One-argument and one-scalar-parameter activations: fname(x) or
   fname(x, param=default). */
static SrVal *act(SrInterp *I, SrArgs *a, const char *name, const char *spec, SrBuiltinFn body) {
  SrVal *p[2] = {NULL, NULL};
  if (sr_args_parse(I, a, name, spec, p) < 0) return NULL;
  return jit_given(I, name, body, NULL, 2, p);
}

SrVal *sr_nn_custom_jvp(SrInterp *I, SrVal **slot, const char *name, SrBuiltinFn fun, const char *rule_name,
                        SrBuiltinFn jvp, int defjvps) {
  if (*slot) return *slot;
  SrVal *cjf = sr_lookup_qualname("jax.custom_jvp");
  if (!cjf) return sr_raise(I, "NotImplementedError", "jax.custom_jvp is not available");
  SrVal *f = sr_builtin_with(name, fun, NULL, NULL);
  SrVal *cj = sr_call1(I, cjf, f);
  sr_unref(f);
  SrVal *d = cj ? sr_getattr(I, cj, defjvps ? "defjvps" : "defjvp") : NULL;
  SrVal *rule = d ? sr_builtin_with(rule_name, jvp, NULL, NULL) : NULL;
  SrVal *r = rule ? sr_call1(I, d, rule) : NULL;
  sr_unref(rule);
  sr_unref(d);
  if (!r) {
    sr_unref(cj);
    return NULL;
  }
  sr_unref(r);
  return *slot = cj;
}

int sr_nn_promote_inexact(SrNnScope *s, int n, SrVal **args, const char *fname) {
  SrInterp *I = s->I;
  for (int i = 0; i < n; i++)
    if (!(args[i] = sr_nn_keep(s, sr_jnp_asarray(I, args[i], -1)))) return -1;
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, n, args, &weak);
  if (sr_dtype_is_int(dt) || dt == SR_BOOL) dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  for (int i = 0; i < n; i++)
    if (!(args[i] = sr_nn_keep(s, sr_lax_convert(I, args[i], dt, weak, NULL)))) return -1;
  if (n < 2) return 0;
  SrVal *p[8];
  for (int i = 0; i < n; i++) p[i] = args[i];
  if (sr_jnp_promote(I, n, p, fname) < 0) return -1;
  for (int i = 0; i < n; i++) args[i] = sr_nn_keep(s, p[i]);
  return 0;
}

static SrVal *call_cj(SrInterp *I, SrVal *cj, SrArgs *a, const char *name) {
  SrVal *p[1];
  if (!cj || sr_args_parse(I, a, name, "x", p) < 0) return NULL;
  SrArgs ca = {1, p, 0, NULL, NULL, NULL};
  return sr_call(I, cj, &ca);
}

SrVal *sr_nn_full_like(SrNnScope *s, SrVal *x, SrVal *v) {
  const SrType *t = x && v ? sr_value_type(s->I, x) : NULL;
  if (!t) return NULL;
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  /* lax.full_like: a tracer's sharding is x.aval.sharding */
  SrVal *sh = t->mesh ? sr_type_sharding(s->I, t) : NULL;
  if (sh && sh->kind != SR_V_SHARDING) {
    sr_unref(sh);
    sh = NULL;
  }
  SrVal *r = sr_lax_full(s->I, shape, t->ndim, v, (int)t->dtype, sh);
  sr_unref(sh);
  if (r && t->weak) { /* weak_type = dtypes.is_weakly_typed(x) */
    SrVal *w = sr_lax_convert(s->I, r, t->dtype, 1, NULL);
    sr_unref(r);
    r = w;
  }
  return sr_nn_array(s, sr_nn_keep(s, r));
}

/* lax.full_like(g, 0) */
static SrVal *zeros_like(SrNnScope *s, SrVal *g) { return sr_nn_full_like(s, g, IN(0)); }

/* ---- relu, relu6 ---- */

static SrVal *relu_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return sr_nn_done(s, C2("jax.numpy.maximum", a->v[0], IN(0)));
}

static SrVal *relu_fun(SrInterp *I, SrArgs *a) { return sr_api_jit(I, "relu", relu_body, NULL, a->n, a->v); }

/* relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0))) */
static SrVal *relu_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "<lambda>() takes 3 positional arguments");
  SCOPE(I);
  SrVal *g = a->v[0], *x = a->v[2];
  SrVal *m = OP(GT, x, IN(0));
  SrVal *z = m ? zeros_like(s, g) : NULL;
  return sr_nn_done(s, C3("jax.lax.select", m, g, z));
}

static SrVal *relu_cj, *relu6_cj;

static SrVal *nn_relu(SrInterp *I, SrArgs *a) {
  return call_cj(I, sr_nn_custom_jvp(I, &relu_cj, "relu", relu_fun, "<lambda>", relu_jvp, 1), a, "relu");
}

static SrVal *relu6_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return sr_nn_done(s, C2("jax.numpy.minimum", C2("jax.numpy.maximum", a->v[0], IN(0)), FL(6.0)));
}

static SrVal *relu6_fun(SrInterp *I, SrArgs *a) { return sr_api_jit(I, "relu6", relu6_body, NULL, a->n, a->v); }

/* lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)) */
static SrVal *relu6_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "<lambda>() takes 3 positional arguments");
  SCOPE(I);
  SrVal *g = a->v[0], *x = a->v[2];
  SrVal *gt = OP(GT, x, IN(0));
  SrVal *lt = gt ? OP(LT, x, IN(6)) : NULL;
  SrVal *m = OP(BITAND, gt, lt);
  SrVal *z = m ? zeros_like(s, g) : NULL;
  return sr_nn_done(s, C3("jax.lax.select", m, g, z));
}

static SrVal *nn_relu6(SrInterp *I, SrArgs *a) {
  return call_cj(I, sr_nn_custom_jvp(I, &relu6_cj, "relu6", relu6_fun, "<lambda>", relu6_jvp, 1), a, "relu6");
}

/* ---- the elementwise activations ---- */

/* jax.nn.sigmoid is lax.logistic (@jit(inline=True)) */
static SrVal *nn_sigmoid(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "sigmoid", "x", p) < 0) return NULL;
  return sr_call1(I, sr_lookup_qualname("jax.lax.logistic"), p[0]);
}

/* ---- jnp.logaddexp (ufuncs.py) on lax_other.logaddexp, a custom_jvp ---- */

/* lax_other.logaddexp for real floating operands of one dtype */
static SrVal *logaddexp_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 2) return sr_raise(I, "TypeError", "logaddexp() takes 2 positional arguments");
  SCOPE(I);
  SrVal *x1 = a->v[0], *x2 = a->v[1];
  const SrType *t = sr_value_type(I, x1);
  if (t && sr_dtype_kind(t->dtype) == SR_DK_COMPLEX)
    return sr_nn_done(s, sr_raise(I, "NotImplementedError", "logaddexp of complex values is not supported here"));
  if (t && sr_dtype_kind(t->dtype) != SR_DK_FLOAT)
    return sr_nn_done(s, sr_raise(I, "ValueError", "logaddexp requires floating-point or complex inputs; got %s",
                                  sr_dtype_name(t->dtype)));
  SrVal *amax = C2("jax.lax.max", x1, x2);
  SrVal *delta = C2("jax.lax.sub", x1, x2);
  SrVal *nan = C2("jax.lax.ne", delta, delta);
  SrVal *sum = C2("jax.lax.add", x1, x2);
  SrVal *big = C2("jax.lax.add", amax, C1("jax.lax.log1p", C1("jax.lax.exp", C1("jax.lax.neg", C1("jax.lax.abs", delta)))));
  return sr_nn_done(s, C3("jax.lax.select", nan, sum, big));
}

/* _replace_inf: lax.select(lax.eq(x, inf), lax._zeros(x), x) */
static SrVal *replace_inf(SrNnScope *s, SrVal *x) {
  const SrType *t = x ? sr_value_type(s->I, x) : NULL;
  if (!t) return NULL;
  SrVal *inf = sr_nn_keep(s, sr_lax_convert(s->I, FL(INFINITY), t->dtype, t->weak, NULL));
  SrVal *eq = C2("jax.lax.eq", x, inf);
  SrVal *z = eq ? sr_nn_full_like(s, x, IN(0)) : NULL;
  return C3("jax.lax.select", eq, z, x);
}

static SrVal *logaddexp_cj;
static SrVal *logaddexp_cjv(SrInterp *I);

/* _logaddexp_jvp: primal_out = logaddexp(x1, x2);
   t1 * exp(_replace_inf(x1) - _replace_inf(primal_out)) + the same for x2 */
static SrVal *logaddexp_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 2 || a->v[1]->seq.n != 2)
    return sr_raise(I, "TypeError", "_logaddexp_jvp(primals, tangents) takes two pairs");
  SrVal *cj = logaddexp_cjv(I);
  if (!cj) return NULL;
  SCOPE(I);
  SrArgs ca = {2, a->v[0]->seq.items, 0, NULL, NULL, NULL};
  SrVal *out = sr_nn_keep(s, sr_call(I, cj, &ca));
  SrVal *term[2] = {NULL, NULL};
  for (int i = 0; i < 2 && out; i++) {
    SrVal *rx = replace_inf(s, a->v[0]->seq.items[i]);
    SrVal *ro = rx ? replace_inf(s, out) : NULL;
    if (!(term[i] = C2("jax.lax.mul", a->v[1]->seq.items[i], C1("jax.lax.exp", C2("jax.lax.sub", rx, ro))))) break;
  }
  SrVal *t = C2("jax.lax.add", term[0], term[1]);
  if (!t || !out) return sr_nn_done(s, NULL);
  SrVal *items[2] = {sr_ref(out), sr_ref(t)};
  return sr_nn_done(s, sr_nn_keep(s, sr_tuple(NULL, 2, items)));
}

static SrVal *logaddexp_cjv(SrInterp *I) {
  return sr_nn_custom_jvp(I, &logaddexp_cj, "logaddexp", logaddexp_fun, "_logaddexp_jvp", logaddexp_jvp, 0);
}

/* sr_lax_logaddexp_hook (lax/lax.h): the custom_jvp on two operands */
static SrVal *logaddexp_call(SrInterp *I, SrVal *x1, SrVal *x2) {
  SrVal *cj = logaddexp_cjv(I);
  if (!cj) return NULL;
  SrVal *v[2] = {x1, x2};
  SrArgs ca = {2, v, 0, NULL, NULL, NULL};
  return sr_call(I, cj, &ca);
}

/* jnp.logaddexp: promote_args_inexact, then the custom_jvp */
static SrVal *jnp_logaddexp(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "logaddexp", "x1, x2", p) < 0) return NULL;
  SrVal *cj = logaddexp_cjv(I);
  if (!cj) return NULL;
  SCOPE(I);
  if (sr_nn_promote_inexact(s, 2, p, "logaddexp") < 0) return sr_nn_done(s, NULL);
  SrArgs ca = {2, p, 0, NULL, NULL, NULL};
  return sr_nn_done(s, sr_nn_keep(s, sr_call(I, cj, &ca)));
}

static SrVal *softplus_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return sr_nn_done(s, C2("jax.numpy.logaddexp", a->v[0], IN(0)));
}

static SrVal *softplus_fn(SrInterp *I, SrVal *x) { return sr_api_jit(I, "softplus", softplus_body, NULL, 1, &x); }

static SrVal *nn_softplus(SrInterp *I, SrArgs *a) { return act(I, a, "softplus", "x", softplus_body); }

static SrVal *silu_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  return sr_nn_done(s, OP(MUL, x, C1("jax.lax.logistic", x)));
}

static SrVal *nn_silu(SrInterp *I, SrArgs *a) { return act(I, a, "silu", "x", silu_body); }

static SrVal *log_sigmoid_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *nx = sr_nn_keep(s, sr_unop(I, SR_OP_NEG, a->v[0]));
  SrVal *sp = nx ? sr_nn_keep(s, softplus_fn(I, nx)) : NULL;
  return sr_nn_done(s, sp ? sr_nn_keep(s, sr_unop(I, SR_OP_NEG, sp)) : NULL);
}

static SrVal *nn_log_sigmoid(SrInterp *I, SrArgs *a) { return act(I, a, "log_sigmoid", "x", log_sigmoid_body); }

/* jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x))) */
static SrVal *elu_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], *alpha = a->n > 1 ? a->v[1] : FL(1.0);
  SrVal *pos = OP(GT, x, IN(0));
  SrVal *pos2 = pos ? OP(GT, x, IN(0)) : NULL;
  SrVal *e = OP(MUL, alpha, C1("jax.numpy.expm1", C3("jax.numpy.where", pos2, FL(0.0), x)));
  return sr_nn_done(s, C3("jax.numpy.where", pos, x, e));
}

static SrVal *nn_elu(SrInterp *I, SrArgs *a) { return act(I, a, "elu", "x, alpha=", elu_body); }

/* jnp.where(x >= 0, x, negative_slope * x) */
static SrVal *leaky_relu_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], *ns = a->n > 1 ? a->v[1] : FL(1e-2);
  SrVal *ge = OP(GE, x, IN(0));
  SrVal *m = ge ? OP(MUL, ns, x) : NULL;
  return sr_nn_done(s, C3("jax.numpy.where", ge, x, m));
}

static SrVal *nn_leaky_relu(SrInterp *I, SrArgs *a) {
  return act(I, a, "leaky_relu", "x, negative_slope=", leaky_relu_body);
}

/* jnp.where(x > 1, 1, jnp.where(x < -1, -1, x)) */
static SrVal *hard_tanh_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0];
  SrVal *gt = OP(GT, x, IN(1));
  SrVal *inner = gt ? C3("jax.numpy.where", OP(LT, x, IN(-1)), IN(-1), x) : NULL;
  return sr_nn_done(s, C3("jax.numpy.where", gt, IN(1), inner));
}

static SrVal *nn_hard_tanh(SrInterp *I, SrArgs *a) { return act(I, a, "hard_tanh", "x", hard_tanh_body); }

/* jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha) */
static SrVal *celu_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], *alpha = a->n > 1 ? a->v[1] : FL(1.0);
  SrVal *mx = C2("jax.numpy.maximum", x, FL(0.0));
  SrVal *e = mx ? OP(MUL, alpha, C1("jax.numpy.expm1", OP(DIV, C2("jax.numpy.minimum", x, FL(0.0)), alpha))) : NULL;
  return sr_nn_done(s, OP(ADD, mx, e));
}

static SrVal *nn_celu(SrInterp *I, SrArgs *a) { return act(I, a, "celu", "x, alpha=", celu_body); }

/* scale * elu(x, alpha) */
static SrVal *selu_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *args[2] = {a->v[0], FL(1.6732632423543772848170429916717)};
  SrVal *e = sr_nn_keep(s, sr_api_jit(I, "elu", elu_body, NULL, 2, args));
  return sr_nn_done(s, OP(MUL, FL(1.0507009873554804934193349852946), e));
}

static SrVal *nn_selu(SrInterp *I, SrArgs *a) { return act(I, a, "selu", "x", selu_body); }

/* not jitted (JAX's TODO): promote_args_inexact, then the tanh
   approximation or the erfc form */
static SrVal *nn_gelu(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "gelu", "x, approximate=", p) < 0) return NULL;
  int approx = 1;
  if (p[1] && (approx = sr_truthy(I, p[1])) < 0) return NULL;
  SCOPE(I);
  SrVal *x = sr_nn_keep(s, sr_jnp_asarray(I, p[0], -1));
  const SrType *t = x ? sr_value_type(I, x) : NULL;
  if (!t) return sr_nn_done(s, NULL);
  if (sr_dtype_is_int(t->dtype) || t->dtype == SR_BOOL)
    x = sr_nn_keep(s, sr_lax_convert(I, x, I->jax->enable_x64 ? SR_F64 : SR_F32, t->weak, NULL));
  if (!x) return sr_nn_done(s, NULL);
  SrDtype dt = sr_value_type(I, x)->dtype;
  SrVal *r;
  if (approx) {
    SrVal *c = sr_nn_typed_scalar(s, sqrt(2 / M_PI), dt);
    SrVal *cube = OP(POW, x, IN(3));
    SrVal *th = C1("jax.numpy.tanh", OP(MUL, c, OP(ADD, x, OP(MUL, FL(0.044715), cube))));
    SrVal *cdf = OP(MUL, FL(0.5), OP(ADD, FL(1.0), th));
    r = OP(MUL, x, cdf);
  } else {
    SrVal *c = sr_nn_typed_scalar(s, sqrt(0.5), dt);
    SrVal *hx = OP(MUL, FL(0.5), x);
    SrVal *nx = hx ? sr_nn_keep(s, sr_unop(I, SR_OP_NEG, x)) : NULL;
    r = OP(MUL, hx, C1("jax.lax.erfc", OP(MUL, nx, c)));
  }
  return sr_nn_done(s, r);
}

/* x1, x2 = jnp.split(x, 2, axis); x1 * sigmoid(x2) (axis static) */
static SrVal *glu_body(SrInterp *I, SrArgs *a) {
  int64_t axis = *(int64_t *)sr_current_builtin(I)->data;
  SrVal *x = a->v[0];
  const SrType *t = sr_value_type(I, x);
  int64_t ax;
  if (!t || sr_api_axis(I, axis, t->ndim, &ax) < 0) return NULL;
  if (t->dims[ax].size % 2) return sr_raise(I, "AssertionError", "axis size must be divisible by 2");
  int64_t half = t->dims[ax].size / 2, sz[2] = {half, half};
  SCOPE(I);
  SrVal *parts = sr_nn_keep(s, sr_bindv(I, SR_P_split, 1, &x, "sizes", sr_int_tuple(sz, 2), "axis",
                                        sr_int(NULL, ax), NULL));
  if (!parts) return sr_nn_done(s, NULL);
  SrVal *x1 = parts->seq.items[0], *x2 = parts->seq.items[1];
  return sr_nn_done(s, OP(MUL, x1, C1("jax.lax.logistic", x2)));
}

static SrVal *nn_glu(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "glu", "x, axis=", p) < 0) return NULL;
  int64_t *axis = sr_xcalloc(1, sizeof *axis);
  *axis = -1;
  if (p[1] && sr_as_int(I, p[1], "axis", axis) < 0) {
    free(axis);
    return NULL;
  }
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) {
    free(axis);
    return NULL;
  }
  SrVal *r = sr_api_jit(I, "glu", glu_body, axis, 1, &x);
  sr_unref(x);
  return r;
}

/* ---- softmax, log_softmax ---- */

static SrVal *softmax_cj(SrInterp *I, SrVal *axis);

/* _softmax(x, axis, where, initial): the primal function, axis its data */
static SrVal *softmax_body(SrInterp *I, SrArgs *a) {
  SrVal *axis = sr_current_builtin(I)->data;
  if (a->n != 3) return sr_raise(I, "TypeError", "_softmax() takes 3 arguments");
  SCOPE(I);
  SrVal *x = a->v[0], *where = a->v[1], *initial = a->v[2];
  SrVal *x_max = sr_nn_reduce(s, SR_P_reduce_max, x, axis, where, initial, 1);
  SrVal *x_safe = sr_nn_given(where) ? C3("jax.numpy.where", where, x, initial) : x;
  SrVal *un = C1("jax.numpy.exp", OP(SUB, x_safe, x_max));
  SrVal *r = OP(DIV, un, sr_nn_reduce(s, SR_P_reduce_sum, un, axis, where, NULL, 1));
  if (sr_nn_given(where)) r = C3("jax.numpy.where", where, r, IN(0));
  return sr_nn_done(s, r);
}

/* _softmax_jvp(axis, primals, tangents):
     y = _softmax(x, axis, where, initial)
     return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True)) */
static SrVal *softmax_jvp(SrInterp *I, SrArgs *a) {
  SrVal *axis = sr_current_builtin(I)->data;
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 3)
    return sr_raise(I, "TypeError", "_softmax_jvp(primals, tangents) takes two tuples");
  SrVal *pr = a->v[0], *x_dot = a->v[1]->seq.items[0], *where = pr->seq.items[1];
  SCOPE(I);
  SrVal *cj = sr_nn_keep(s, softmax_cj(I, axis));
  SrArgs ca = {3, pr->seq.items, 0, NULL, NULL, NULL};
  SrVal *y = cj ? sr_nn_keep(s, sr_call(I, cj, &ca)) : NULL;
  SrVal *sum = sr_nn_reduce(s, SR_P_reduce_sum, OP(MUL, y, x_dot), axis, where, NULL, 1);
  SrVal *t = OP(MUL, y, OP(SUB, x_dot, sum));
  if (!t) return sr_nn_done(s, NULL);
  SrVal *items[2] = {sr_ref(y), sr_ref(t)};
  return sr_nn_done(s, sr_nn_keep(s, sr_tuple(NULL, 2, items)));
}

/* partial(custom_jvp, nondiff_argnums=(1,))(_softmax) with its defjvp,
   for one axis; a new object per call, so that the rule (which calls
   _softmax again) holds no cycle */
static SrVal *softmax_cj(SrInterp *I, SrVal *axis) {
  SrVal *cjf = sr_lookup_qualname("jax.custom_jvp");
  if (!cjf) return sr_raise(I, "NotImplementedError", "jax.custom_jvp is not available");
  SrVal *f = sr_builtin_with("_softmax", softmax_body, sr_ref(axis), sr_nn_unref_data);
  SrVal *cj = sr_call1(I, cjf, f);
  sr_unref(f);
  SrVal *d = cj ? sr_getattr(I, cj, "defjvp") : NULL;
  SrVal *rule = d ? sr_builtin_with("_softmax_jvp", softmax_jvp, sr_ref(axis), sr_nn_unref_data) : NULL;
  SrVal *r = rule ? sr_call1(I, d, rule) : NULL;
  sr_unref(rule);
  sr_unref(d);
  if (!r) {
    sr_unref(cj);
    return NULL;
  }
  sr_unref(r);
  return cj;
}

/* _softmax_deprecated (softmax while jax_softmax_custom_jvp is False, its
   default): _softmax's body with lax.stop_gradient(x_max) and no rule */
static SrVal *softmax_deprecated(SrInterp *I, SrVal *x, SrVal *axis, SrVal *where) {
  SCOPE(I);
  SrVal *initial = FL(-INFINITY);
  SrVal *x_max = sr_nn_reduce(s, SR_P_reduce_max, x, axis, where, initial, 1);
  SrVal *x_safe = sr_nn_given(where) ? C3("jax.numpy.where", where, x, initial) : x;
  SrVal *un = C1("jax.numpy.exp", OP(SUB, x_safe, C1("jax.lax.stop_gradient", x_max)));
  SrVal *r = OP(DIV, un, sr_nn_reduce(s, SR_P_reduce_sum, un, axis, where, NULL, 1));
  if (sr_nn_given(where)) r = C3("jax.numpy.where", where, r, IN(0));
  return sr_nn_done(s, r);
}

static SrVal *nn_softmax(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "softmax", "x, axis=, where=", p) < 0) return NULL;
  if (!I->jax->softmax_custom_jvp) {
    SrVal *x = sr_jnp_asarray(I, p[0], -1), *ax = p[1] ? sr_ref(p[1]) : sr_int(NULL, -1);
    SrVal *r = x ? softmax_deprecated(I, x, ax, p[2]) : NULL;
    sr_unref(x);
    sr_unref(ax);
    return r;
  }
  SrVal *axis = p[1] ? sr_ref(p[1]) : sr_int(NULL, -1);
  SrVal *cj = softmax_cj(I, axis);
  sr_unref(axis);
  if (!cj) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = NULL;
  if (x) {
    SrVal *args[3] = {x, p[2] ? p[2] : sr_none(), sr_float(NULL, -INFINITY)};
    SrArgs ca = {3, args, 0, NULL, NULL, NULL};
    r = sr_call(I, cj, &ca);
    sr_unref(args[2]);
    if (!p[2]) sr_unref(args[1]);
  }
  sr_unref(x);
  sr_unref(cj);
  return r;
}

static SrVal *log_softmax_body(SrInterp *I, SrArgs *a) {
  SrVal *axis = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = a->v[0], *where = a->n > 1 ? a->v[1] : NULL;
  SrVal *ninf = FL(-INFINITY);
  SrVal *x_max = sr_nn_reduce(s, SR_P_reduce_max, x, axis, where, ninf, 1);
  SrVal *x_safe = where ? C3("jax.numpy.where", where, x, ninf) : x;
  SrVal *shifted = OP(SUB, x_safe, C1("jax.lax.stop_gradient", x_max));
  SrVal *lse = C1("jax.numpy.log", sr_nn_reduce(s, SR_P_reduce_sum, C1("jax.numpy.exp", shifted), axis, where, NULL, 1));
  SrVal *r = OP(SUB, shifted, lse);
  if (where) r = C3("jax.numpy.where", where, r, ninf);
  return sr_nn_done(s, r);
}

static SrVal *nn_log_softmax(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "log_softmax", "x, axis=, where=", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *args[2] = {x, p[2]};
  int n = sr_nn_given(p[2]) ? 2 : 1;
  SrVal *b = sr_builtin_with("log_softmax", log_softmax_body, p[1] ? sr_ref(p[1]) : sr_int(NULL, -1),
                             sr_nn_unref_data);
  SrArgs ja = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, "log_softmax", &ja);
  sr_unref(b);
  sr_unref(x);
  return r;
}

/* ---- standardize, one_hot ---- */

typedef struct Std {
  SrVal *axis;
  int stable;
  int has[4]; /* mean, variance, epsilon, where given: their places in the args */
} Std;

static void std_free(void *d) {
  Std *st = d;
  sr_unref(st->axis);
  free(st);
}

static SrVal *standardize_body(SrInterp *I, SrArgs *a) {
  Std *st = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = a->v[0], *opt[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0, k = 1; i < 4; i++)
    if (st->has[i]) opt[i] = a->v[k++];
  SrVal *mean = opt[0], *var = opt[1], *eps = opt[2] ? opt[2] : FL(1e-5), *where = opt[3];
  const char *kw[2] = {"keepdims", "where"};
  SrVal *kwv[2] = {sr_bool(1), where};
  if (!mean) {
    SrVal *ma[2] = {x, st->axis};
    mean = sr_nn_call(s, "jax.numpy.mean", 2, ma, 2, kw, kwv);
  }
  if (!var) {
    SrVal *ma[2] = {NULL, st->axis};
    if (st->stable) {
      ma[0] = C1("jax.numpy.square", C2("jax.numpy.subtract", x, mean));
      var = sr_nn_call(s, "jax.numpy.mean", 2, ma, 2, kw, kwv);
    } else {
      ma[0] = C1("jax.numpy.square", x);
      SrVal *m2 = sr_nn_call(s, "jax.numpy.mean", 2, ma, 2, kw, kwv);
      var = m2 ? OP(SUB, m2, C1("jax.numpy.square", mean)) : NULL;
      var = C2("jax.numpy.clip", var, IN(0));
    }
  }
  sr_unref(kwv[0]);
  SrVal *d = C2("jax.numpy.subtract", x, mean);
  SrVal *r = d ? C1("jax.lax.rsqrt", OP(ADD, var, eps)) : NULL;
  return sr_nn_done(s, OP(MUL, d, r));
}

static SrVal *nn_standardize(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "standardize", "x, axis=, mean=, variance=, epsilon=, where=, *, algorithm=", p) < 0)
    return NULL;
  int stable = 0;
  if (p[6]) {
    const char *alg = sr_as_str(I, p[6], "algorithm");
    if (!alg) return NULL;
    if (strcmp(alg, "stable") == 0) stable = 1;
    else if (strcmp(alg, "fast") != 0)
      return sr_raise(I, "ValueError", "Unknown algorithm '%s'. Expected 'fast' or 'stable'.", alg);
  }
  Std *st = sr_xcalloc(1, sizeof *st);
  st->axis = p[1] ? sr_ref(p[1]) : sr_int(NULL, -1);
  st->stable = stable;
  SrVal *args[5] = {p[0]};
  int n = 1;
  for (int i = 0; i < 4; i++)
    if (sr_nn_given(p[2 + i])) {
      st->has[i] = 1;
      args[n++] = p[2 + i];
    }
  SrVal *b = sr_builtin_with("standardize", standardize_body, st, std_free);
  SrArgs ja = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, "standardize", &ja);
  sr_unref(b);
  return r;
}

typedef struct OneHot {
  int64_t num_classes, axis;
  SrDtype dtype;
  SrVal *out_sharding; /* a NamedSharding, or NULL */
} OneHot;

static void one_hot_free(void *d) {
  OneHot *oh = d;
  sr_unref(oh->out_sharding);
  free(oh);
}

/* entry e of spec s (None past its end) names the mesh axes ax[0..nax) */
static int spec_entry_is(const SrSpec *s, int e, const SrMesh *m, const SrDim *d) {
  int n = e < s->n ? s->e[e].n : 0;
  if (n != d->nax) return 0;
  for (int k = 0; k < n; k++)
    if (s->e[e].names[k] != m->names[d->ax[k]]) return 0;
  return 1;
}

/* _one_hot's rhs_sharding for out_sharding: out_sharding's entry at
   out_axis, None elsewhere; the input part of the spec must be x's
   (ShardingTypeError).  A new NamedSharding, or NULL with an exception. */
static SrVal *one_hot_rhs_sharding(SrInterp *I, const SrVal *osh, const SrType *t, int64_t out_axis) {
  const SrSpec *os = osh->sh.spec;
  const SrMesh *m = osh->sh.mesh;
  if (os->nunreduced || os->nreduced) return sr_raise(I, "NotImplementedError", "jax.nn.one_hot: unreduced out_sharding");
  int ok = 1;
  for (int i = 0; i < t->ndim; i++)
    if (!spec_entry_is(os, i < out_axis ? i : i + 1, m, &t->dims[i])) ok = 0;
  if (!ok) {
    /* typeof(x).spec and P(*out_sharding.spec without out_axis) normalized */
    SrSpecEntry xe[SR_MAX_RANK], oe[SR_MAX_RANK];
    const char *names[SR_MAX_RANK][SR_MAX_DIM_AXES];
    SrSpec xs = {0}, ox = {0};
    xs.n = ox.n = t->ndim;
    xs.e = xe;
    ox.e = oe;
    for (int i = 0; i < t->ndim; i++) {
      xe[i].n = t->dims[i].nax;
      xe[i].names = names[i];
      for (int k = 0; k < t->dims[i].nax; k++) names[i][k] = m->names[t->dims[i].ax[k]];
      int e = i < out_axis ? i : i + 1;
      oe[i] = e < os->n ? os->e[e] : (SrSpecEntry){0, NULL};
    }
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
    sr_spec_repr(&a, &xs);
    sr_spec_repr(&b, &ox);
    sr_raise(I, "ShardingTypeError",
             "The input part of spec in out_sharding should match the spec of `x`. Got typeof(x).spec=%s and "
             "out_sharding.spec=%s",
             a.p, b.p);
    sr_buf_free(&a);
    sr_buf_free(&b);
    return NULL;
  }
  SrSpecEntry re[SR_MAX_RANK + 1];
  SrSpec rs = {0};
  rs.n = t->ndim + 1;
  rs.e = re;
  for (int i = 0; i <= t->ndim; i++) re[i] = i == out_axis && i < os->n ? os->e[i] : (SrSpecEntry){0, NULL};
  return sr_sharding_val(NULL, m, &rs, osh->sh.memory_kind);
}

/* lhs = lax.expand_dims(x, (axis,)); rhs = broadcasted_iota(x.dtype,
   rhs_shape, out_axis); (lhs == rhs).astype(dtype) */
static SrVal *one_hot_body(SrInterp *I, SrArgs *a) {
  OneHot *oh = sr_current_builtin(I)->data;
  SrVal *x = a->v[0];
  const SrType *t = sr_value_type(I, x);
  int64_t out_axis;
  if (!t || sr_api_axis(I, oh->axis, t->ndim + 1, &out_axis) < 0) return NULL;
  SCOPE(I);
  SrVal *lhs = sr_nn_keep(s, sr_lax_expand_dims(I, x, &out_axis, 1));
  int64_t shape[SR_MAX_RANK + 1];
  for (int i = 0, k = 0; i <= t->ndim; i++) shape[i] = i == out_axis ? oh->num_classes : (k++, 1);
  SrVal *rsh = oh->out_sharding ? sr_nn_keep(s, one_hot_rhs_sharding(I, oh->out_sharding, t, out_axis)) : NULL;
  if (oh->out_sharding && !rsh) return sr_nn_done(s, NULL);
  SrVal *rhs = sr_nn_keep(s, sr_lax_iota(I, t->dtype, shape, t->ndim + 1, (int)out_axis, rsh));
  SrVal *eq = lhs && rhs ? sr_nn_keep(s, sr_lax_binary(I, SR_P_eq, lhs, rhs)) : NULL;
  return sr_nn_done(s, eq ? sr_nn_keep(s, sr_lax_convert(I, eq, oh->dtype, 0, NULL)) : NULL);
}

static SrVal *nn_one_hot(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "one_hot", "x, num_classes, *, dtype=, axis=, out_sharding=", p) < 0) return NULL;
  int64_t nc, axis = -1;
  /* core.concrete_dim_or_error(num_classes, ...) */
  SrArrayObj *ncv = sr_array_of(p[1]);
  if (ncv && ncv->kind == SR_AV_TRACER && !ncv->has_value)
    return sr_raise_concretization(I, p[1], "The error arose in jax.nn.one_hot argument `num_classes`.");
  if (sr_as_int(I, p[1], "num_classes", &nc) < 0) return NULL;
  if (p[3] && sr_as_int(I, p[3], "axis", &axis) < 0) return NULL;
  int dt = -1;
  if (sr_dtype_arg(I, p[2], &dt, "one_hot") < 0) return NULL;
  if (dt < 0) dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrDtype xd = sr_value_type(I, x)->dtype;
  if (!sr_dtype_is_int(xd)) /* deprecations.warn('jax-nn-one-hot-float-input', ...) */
    sr_warn(I, "DeprecationWarning", "jax.nn.one_hot input should be integer-typed; got dtype=%s", sr_dtype_name(xd));
  if (I->exc) {
    sr_unref(x);
    return NULL;
  }
  SrVal *osh = NULL;
  if (sr_api_canon_sharding(I, p[4], "jax.nn.one_hot", &osh) < 0) {
    sr_unref(x);
    return NULL;
  }
  OneHot *oh = sr_xcalloc(1, sizeof *oh);
  oh->num_classes = nc;
  oh->axis = axis;
  oh->dtype = (SrDtype)dt;
  oh->out_sharding = osh;
  SrVal *b = sr_builtin_with("_one_hot", one_hot_body, oh, one_hot_free);
  SrArgs ja = {1, &x, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, "_one_hot", &ja);
  sr_unref(b);
  sr_unref(x);
  return r;
}

static SrVal *nn_tanh(SrInterp *I, SrArgs *a) { return sr_call(I, sr_lookup_qualname("jax.numpy.tanh"), a); }

/* ---- registration ---- */

void sr_nn_init(void) {
  sr_lax_logaddexp_hook = logaddexp_call;
  sr_def("jax.nn.relu", nn_relu, "relu(x): max(x, 0), a custom_jvp whose derivative at 0 is 0 (jax.nn)");
  sr_def("jax.nn.relu6", nn_relu6, "relu6(x): min(max(x, 0), 6), a custom_jvp (jax.nn)");
  sr_def("jax.nn.sigmoid", nn_sigmoid, "sigmoid(x): lax.logistic, 1 / (1 + exp(-x)) (jax.nn)");
  sr_def("jax.nn.softplus", nn_softplus, "softplus(x): log(1 + exp(x)), jnp.logaddexp(x, 0) (jax.nn)");
  sr_def("jax.nn.silu jax.nn.swish", nn_silu, "silu(x) (swish): x * sigmoid(x) (jax.nn)");
  sr_def("jax.nn.log_sigmoid", nn_log_sigmoid, "log_sigmoid(x): -softplus(-x) (jax.nn)");
  sr_def("jax.nn.elu", nn_elu, "elu(x, alpha=1.0): x if x > 0 else alpha * expm1(x) (jax.nn)");
  sr_def("jax.nn.leaky_relu", nn_leaky_relu,
         "leaky_relu(x, negative_slope=0.01): x if x >= 0 else negative_slope * x (jax.nn)");
  sr_def("jax.nn.hard_tanh", nn_hard_tanh, "hard_tanh(x): x clipped to [-1, 1] (jax.nn)");
  sr_def("jax.nn.celu", nn_celu, "celu(x, alpha=1.0): max(x, 0) + alpha * expm1(min(x, 0) / alpha) (jax.nn)");
  sr_def("jax.nn.selu", nn_selu, "selu(x): 1.0507... * elu(x, 1.6732...) (jax.nn)");
  sr_def("jax.nn.gelu", nn_gelu, "gelu(x, approximate=True): the tanh approximation, or x/2 * erfc(-x/sqrt(2)) (jax.nn)");
  sr_def("jax.nn.glu", nn_glu, "glu(x, axis=-1): the first half of x along axis times sigmoid of the second (jax.nn)");
  sr_def("jax.nn.softmax", nn_softmax, "softmax(x, axis=-1, where=None): exp(x) normalized along axis, a custom_jvp (jax.nn)");
  sr_def("jax.nn.log_softmax", nn_log_softmax, "log_softmax(x, axis=-1, where=None): x - logsumexp(x) along axis (jax.nn)");
  sr_def("jax.nn.standardize", nn_standardize,
         "standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm='fast') (jax.nn)");
  sr_def("jax.nn.one_hot", nn_one_hot, "one_hot(x, num_classes, *, dtype=float32, axis=-1): one-hot encoding of indices (jax.nn)");
  sr_def("jax.nn.tanh", nn_tanh, "tanh(x): jax.numpy.tanh (jax.nn)");
  if (!sr_lookup_qualname("jax.numpy.logaddexp"))
    sr_def("jax.numpy.logaddexp", jnp_logaddexp, "logaddexp(x1, x2): log(exp(x1) + exp(x2)), a custom_jvp");
  sr_nn_initializers_init();
  sr_scipy_special_init();
  sr_scipy_stats_init();
}
