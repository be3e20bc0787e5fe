/* nn_more.c: the activations and helpers of jax.nn that issue 15 found
 * missing (jax/_src/nn/functions.py): hard_sigmoid, hard_silu (hard_swish),
 * mish, soft_sign, squareplus, sparse_plus, sparse_sigmoid, log1mexp (a
 * custom_jvp over a jit), logmeanexp, identity, and dot_product_attention
 * on its 'xla' path (_dot_product_attention_xla: the core vmapped over the
 * query heads of each key/value head).  Each is written as JAX writes it,
 * with its @jax.jit a jit equation named for the function (nn.c says how).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/math_api.h"
#include "jax/nn.h"
#include "py/ast.h"
#include "py/objects.h"
#include "core/jaxstate.h"
#include "util/intern.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define C3(q, x, y, z) sr_nn_call3(s, q, x, y, z)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define FL(d) sr_nn_float(s, d)
#define IN(i) sr_nn_int(s, i)
#define KEEP(v) sr_nn_keep(s, v)
#define DONE(v) sr_nn_done(s, v)

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }

/* fname(x) as a plain @jax.jit of one argument */
static SrVal *jit1(SrInterp *I, SrArgs *a, const char *name, SrBuiltinFn body) {
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "x", p) < 0) return NULL;
  return sr_api_jit(I, name, body, NULL, 1, p);
}

static SrVal *asarr(SrNnScope *s, SrVal *x) { return KEEP(sr_jnp_asarray(s->I, x, -1)); }

/* relu6(x + 3.) / 6. */
static SrVal *hard_sigmoid_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(OP(DIV, C1("jax.nn.relu6", OP(ADD, a->v[0], FL(3.0))), FL(6.0)));
}

static SrVal *nn_hard_sigmoid(SrInterp *I, SrArgs *a) { return jit1(I, a, "hard_sigmoid", hard_sigmoid_body); }

/* x * hard_sigmoid(x) */
static SrVal *hard_silu_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = asarr(s, a->v[0]);
  SrVal *h = x ? KEEP(sr_api_jit(I, "hard_sigmoid", hard_sigmoid_body, NULL, 1, &x)) : NULL;
  return DONE(OP(MUL, x, h));
}

static SrVal *nn_hard_silu(SrInterp *I, SrArgs *a) { return jit1(I, a, "hard_silu", hard_silu_body); }

/* x * jnp.tanh(softplus(x)) */
static SrVal *mish_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = asarr(s, a->v[0]);
  return DONE(OP(MUL, x, C1("jax.numpy.tanh", C1("jax.nn.softplus", x))));
}

static SrVal *nn_mish(SrInterp *I, SrArgs *a) { return jit1(I, a, "mish", mish_body); }

/* x / (jnp.abs(x) + 1) */
static SrVal *soft_sign_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = asarr(s, a->v[0]);
  return DONE(OP(DIV, x, OP(ADD, C1("jax.numpy.abs", x), IN(1))));
}

static SrVal *nn_soft_sign(SrInterp *I, SrArgs *a) { return jit1(I, a, "soft_sign", soft_sign_body); }

/* (x + jnp.sqrt(jnp.square(x) + b)) / 2 */
static SrVal *squareplus_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = asarr(s, a->v[0]), *b = a->n > 1 ? asarr(s, a->v[1]) : asarr(s, IN(4));
  SrVal *y = b ? OP(ADD, x, C1("jax.numpy.sqrt", OP(ADD, C1("jax.numpy.square", x), b))) : NULL;
  return DONE(OP(DIV, y, IN(2)));
}

static SrVal *nn_squareplus(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "squareplus", "x, b=", p) < 0) return NULL;
  SrVal *v[2] = {p[0], p[1]};
  if (!p[1]) {
    v[1] = sr_int(NULL, 4);
    SrVal *r = sr_api_jit(I, "squareplus", squareplus_body, NULL, 2, v);
    sr_unref(v[1]);
    return r;
  }
  return sr_api_jit(I, "squareplus", squareplus_body, NULL, 2, v);
}

/* jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0)**2/4)) */
static SrVal *sparse_plus_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = asarr(s, a->v[0]);
  SrVal *le = OP(LE, x, FL(-1.0));
  SrVal *ge = le ? OP(GE, x, FL(1.0)) : NULL;
  SrVal *q = ge ? OP(DIV, OP(POW, OP(ADD, x, FL(1.0)), IN(2)), IN(4)) : NULL;
  return DONE(C3("jax.numpy.where", le, FL(0.0), C3("jax.numpy.where", ge, x, q)));
}

static SrVal *nn_sparse_plus(SrInterp *I, SrArgs *a) { return jit1(I, a, "sparse_plus", sparse_plus_body); }

/* 0.5 * jnp.clip(x + 1.0, 0.0, 2.0) */
static SrVal *sparse_sigmoid_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(OP(MUL, FL(0.5), C3("jax.numpy.clip", OP(ADD, a->v[0], FL(1.0)), FL(0.0), FL(2.0))));
}

static SrVal *nn_sparse_sigmoid(SrInterp *I, SrArgs *a) { return jit1(I, a, "sparse_sigmoid", sparse_sigmoid_body); }

/* identity: ensure_arraylike, under a jit */
static SrVal *identity_body(SrInterp *I, SrArgs *a) { return sr_jnp_asarray(I, a->v[0], -1); }

static SrVal *nn_identity(SrInterp *I, SrArgs *a) { return jit1(I, a, "identity", identity_body); }

/* ---- log1mexp: custom_jvp over @jax.jit ---- */

/* jnp.where(x < log(2), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x))) */
static SrVal *log1mexp_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = asarr(s, a->v[0]);
  SrVal *c = C1("jax.numpy.log", FL(2.0));
  SrVal *lt = c ? OP(LT, x, c) : NULL;
  SrVal *nx = lt ? KEEP(sr_unop(I, SR_OP_NEG, x)) : NULL;
  SrVal *e1 = C1("jax.numpy.expm1", nx);
  SrVal *l1 = e1 ? C1("jax.numpy.log", KEEP(sr_unop(I, SR_OP_NEG, e1))) : NULL;
  SrVal *nx2 = l1 ? KEEP(sr_unop(I, SR_OP_NEG, x)) : NULL;
  SrVal *e2 = C1("jax.numpy.exp", nx2);
  SrVal *l2 = e2 ? C1("jax.numpy.log1p", KEEP(sr_unop(I, SR_OP_NEG, e2))) : NULL;
  return DONE(C3("jax.numpy.where", lt, l1, l2));
}

static SrVal *log1mexp_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "log1mexp() takes 1 positional argument");
  return sr_api_jit(I, "log1mexp", log1mexp_body, NULL, 1, a->v);
}

/* log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x)) */
static SrVal *log1mexp_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "<lambda>() takes 3 positional arguments");
  SCOPE(I);
  return DONE(OP(DIV, a->v[0], C1("jax.numpy.expm1", a->v[2])));
}

static SrVal *log1mexp_cj;

static SrVal *nn_log1mexp(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "log1mexp", "x", p) < 0) return NULL;
  SrVal *cj = sr_nn_custom_jvp(I, &log1mexp_cj, "log1mexp", log1mexp_fun, "<lambda>", log1mexp_jvp, 1);
  return cj ? sr_call1(I, cj, p[0]) : NULL;
}

/* ---- logmeanexp ---- */

typedef struct {
  SrVal *axis, *keepdims;
} LmeData;

static void lme_free(void *p) {
  LmeData *d = p;
  sr_unref(d->axis);
  sr_unref(d->keepdims);
  free(d);
}

/* lse = _logsumexp(x, axis, where, keepdims); lse - jnp.log(count) */
static SrVal *logmeanexp_body(SrInterp *I, SrArgs *a) {
  LmeData *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = a->v[0], *where = a->n > 1 ? a->v[1] : NULL;
  const char *kw[3] = {"axis", "keepdims", "where"};
  SrVal *kv[3] = {d->axis, d->keepdims, where};
  SrVal *lse = sr_nn_call(s, "jax.scipy.special.logsumexp", 1, &x, 3, kw, kv);
  if (!lse) return DONE(NULL);
  SrDtype dt = ty(I, lse)->dtype;
  SrVal *count;
  if (where) {
    /* _count: sum(broadcast_to(where, a.shape), axis, dtype, keepdims) */
    const SrType *t = ty(I, x);
    int64_t shape[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
    SrVal *w = KEEP(sr_jnp_asarray(I, where, -1));
    SrVal *wb = w ? KEEP(sr_lax_broadcast_to(I, w, shape, t->ndim, NULL)) : NULL;
    const char *kw2[3] = {"axis", "dtype", "keepdims"};
    SrVal *kv2[3] = {d->axis, KEEP(sr_dtype_val(NULL, dt)), d->keepdims};
    count = wb ? sr_nn_call(s, "jax.numpy.sum", 1, &wb, 3, kw2, kv2) : NULL;
  } else {
    const SrType *t = ty(I, x);
    int64_t ax[SR_MAX_RANK], n = 1;
    int na;
    if (sr_nn_axes(I, d->axis, t->ndim, ax, &na) < 0) return DONE(NULL);
    for (int i = 0; i < na; i++) n *= t->dims[ax[i]].size;
    count = KEEP(sr_lax_convert(I, IN(n), dt, 0, NULL));
  }
  return DONE(count ? OP(SUB, lse, C1("jax.numpy.log", count)) : NULL);
}

static SrVal *nn_logmeanexp(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "logmeanexp", "x, axis=, where=, keepdims=", p) < 0) return NULL;
  LmeData *d = sr_xcalloc(1, sizeof *d);
  d->axis = sr_nn_given(p[1]) ? sr_ref(p[1]) : NULL;
  d->keepdims = p[3] ? sr_ref(p[3]) : NULL;
  SrVal *b = sr_builtin_with("logmeanexp", logmeanexp_body, d, lme_free);
  SrVal *v[2] = {p[0], p[2]};
  SrArgs ca = {sr_nn_given(p[2]) ? 2 : 1, v, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, "logmeanexp", &ca);
  sr_unref(b);
  return r;
}

/* ---- dot_product_attention (implementation='xla') ---- */

typedef struct {
  int is_causal, has_bias, has_mask, has_q, has_kv, has_win, ret_res;
  int64_t win[2]; /* local_window_size: (left, right) */
  double scale;
} DpaCore;

static SrVal *dims_tuple(SrNnScope *s, const int64_t *v, int n) { return KEEP(sr_int_tuple(v, n)); }

static SrVal *reshape(SrNnScope *s, SrVal *x, const int64_t *shape, int n) {
  return x ? C2("jax.numpy.reshape", x, dims_tuple(s, shape, n)) : NULL;
}

static SrVal *einsum(SrNnScope *s, const char *spec, SrVal *a, SrVal *b, SrVal *pref) {
  SrVal *v[3] = {KEEP(sr_str(NULL, spec, strlen(spec))), a, b};
  const char *kw[2] = {"precision", "preferred_element_type"};
  SrVal *kv[2] = {KEEP(sr_none()), pref};
  return a && b ? sr_nn_call(s, "jax.numpy.einsum", 3, v, pref ? 2 : 0, kw, kv) : NULL;
}

static SrVal *astype(SrNnScope *s, SrVal *x, SrDtype dt) {
  return x ? KEEP(sr_lax_convert(s->I, x, dt, 0, NULL)) : NULL;
}

static double finfo_max(SrDtype dt) {
  switch (dt) {
  case SR_F16: return 65504.0;
  case SR_BF16: return 3.3895313892515355e+38;
  default: return FLT_MAX; /* capped at float32's, as _get_large_negative does */
  }
}

/* _dot_product_attention_core for one group: query, key, value[, bias][, mask] */
static SrVal *dpa_core(SrInterp *I, SrArgs *a) {
  DpaCore *c = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *q = a->v[0], *k = a->v[1], *v = a->v[2];
  int i = 3;
  SrVal *bias = c->has_bias ? a->v[i++] : NULL;
  SrVal *mask = c->has_mask ? a->v[i++] : NULL;
  SrVal *qsl = c->has_q ? a->v[i++] : NULL;
  SrVal *kvsl = c->has_kv ? a->v[i++] : NULL;
  SrDtype qdt = ty(I, q)->dtype, kdt = ty(I, k)->dtype;
  SrDtype ldt = qdt == SR_F64 ? SR_F64 : SR_F32;
  SrVal *logits = einsum(s, "BTNH,BSNH->BNTS", q, k, KEEP(sr_dtype_val(NULL, ldt)));
  logits = logits ? OP(MUL, logits, sr_nn_typed_scalar(s, c->scale, ldt)) : NULL;
  if (logits && bias) logits = astype(s, OP(ADD, logits, bias), ldt);
  if (!logits) return DONE(NULL);
  const SrType *lt = ty(I, logits);
  int64_t T = lt->dims[2].size, S = lt->dims[3].size;
  if (mask || c->is_causal || c->has_win || qsl || kvsl) {
    /* _apply_masks: mask, causal, local window, padding, in that order */
    const char *kw[1] = {"dtype"};
    SrVal *kv[1] = {KEEP(sr_dtype_val(NULL, SR_BOOL))};
    SrVal *comb = sr_nn_call(s, "jax.numpy.ones_like", 1, &logits, 1, kw, kv);
    if (comb && mask) comb = C2("jax.numpy.logical_and", comb, mask);
    int64_t m4[4] = {1, 1, T, S};
    if (comb && c->is_causal) {
      int64_t ts[2] = {T, S};
      SrVal *ones = sr_nn_call(s, "jax.numpy.ones", 2, (SrVal *[]){dims_tuple(s, ts, 2), kv[0]}, 0, NULL, NULL);
      SrVal *tri = C1("jax.numpy.tril", ones);
      SrVal *cm = tri ? KEEP(sr_lax_reshape(I, tri, m4, 4, NULL)) : NULL;
      comb = cm ? C2("jax.numpy.logical_and", comb, cm) : NULL;
    }
    if (comb && c->has_win) {
      /* _get_window_mask: q <= k + left and q >= k - right */
      int64_t one = 1, zero = 0;
      SrVal *qp = C1("jax.numpy.arange", IN(T)), *kp = qp ? C1("jax.numpy.arange", IN(S)) : NULL;
      SrVal *qc = kp ? KEEP(sr_lax_expand_dims(I, qp, &one, 1)) : NULL;
      SrVal *kr = qc ? KEEP(sr_lax_expand_dims(I, kp, &zero, 1)) : NULL;
      SrVal *lm = kr ? OP(LE, qc, OP(ADD, kr, IN(c->win[0]))) : NULL;
      SrVal *rm = lm ? OP(GE, qc, OP(SUB, kr, IN(c->win[1]))) : NULL;
      SrVal *wm = rm ? C2("jax.numpy.logical_and", rm, lm) : NULL;
      SrVal *w4 = wm ? KEEP(sr_lax_reshape(I, wm, m4, 4, NULL)) : NULL;
      comb = w4 ? C2("jax.numpy.logical_and", comb, w4) : NULL;
    }
    if (comb && (qsl || kvsl)) {
      /* _get_padding_mask_logits: [B, 1, T, S] */
      SrVal *pm = NULL;
      if (qsl) {
        int64_t a1[2] = {0, 2}, b1[2] = {1, 2};
        SrVal *qi = KEEP(sr_lax_expand_dims(I, C1("jax.numpy.arange", IN(T)), a1, 2));
        SrVal *qs = qi ? KEEP(sr_lax_expand_dims(I, qsl, b1, 2)) : NULL;
        pm = qs ? OP(LT, qi, qs) : NULL;
      }
      if (kvsl && (!qsl || pm)) {
        int64_t a2[2] = {0, 1}, b2[2] = {1, 2};
        SrVal *ki = KEEP(sr_lax_expand_dims(I, C1("jax.numpy.arange", IN(S)), a2, 2));
        SrVal *ks = ki ? KEEP(sr_lax_expand_dims(I, kvsl, b2, 2)) : NULL;
        SrVal *km = ks ? OP(LT, ki, ks) : NULL;
        pm = km && pm ? C2("jax.numpy.logical_and", pm, km) : km;
      }
      int64_t ax1 = 1;
      SrVal *p4 = pm ? KEEP(sr_lax_expand_dims(I, pm, &ax1, 1)) : NULL;
      comb = p4 ? C2("jax.numpy.logical_and", comb, p4) : NULL;
    }
    SrVal *neg = sr_nn_typed_scalar(s, -0.7 * finfo_max(ldt), ldt);
    logits = comb ? C3("jax.numpy.where", comb, logits, neg) : NULL;
  }
  SrVal *pl = astype(s, logits, SR_F32);
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {IN(-1)};
  SrVal *probs = pl ? sr_nn_call(s, "jax.nn.softmax", 1, &pl, 1, kw, kv) : NULL;
  probs = astype(s, probs, kdt);
  SrVal *enc = einsum(s, "BNTS,BSNH->BTNH", probs, v, NULL);
  if (enc && qsl) {
    /* encoded *= _get_padding_mask_encoded(T, q_seqlen) */
    int64_t a0 = 0, b0 = 1, tail[2] = {2, 3};
    SrVal *qi = KEEP(sr_lax_expand_dims(I, C1("jax.numpy.arange", IN(ty(I, enc)->dims[1].size)), &a0, 1));
    SrVal *qs = qi ? KEEP(sr_lax_expand_dims(I, qsl, &b0, 1)) : NULL;
    SrVal *em = qs ? OP(LT, qi, qs) : NULL;
    SrVal *e4 = em ? KEEP(sr_lax_expand_dims(I, em, tail, 2)) : NULL;
    enc = e4 ? OP(MUL, enc, astype(s, e4, ty(I, enc)->dtype)) : NULL;
  }
  if (!enc || !c->ret_res) return DONE(enc);
  /* lse = logsumexp(padded_logits, axis=-1).astype(key.dtype), B N T -> B T N */
  SrVal *lse = sr_nn_call(s, "jax.nn.logsumexp", 1, &pl, 1, kw, kv);
  lse = astype(s, lse, kdt);
  int64_t perm[3] = {0, 2, 1};
  SrVal *lt2 = lse ? KEEP(sr_lax_transpose(I, lse, perm, 3)) : NULL;
  SrVal *sg = lt2 ? C1("jax.lax.stop_gradient", lt2) : NULL;
  if (!sg) return DONE(NULL);
  return DONE(KEEP(sr_tuple(NULL, 2, (SrVal *[]){sr_ref(enc), sr_ref(sg)})));
}

/* _ensure_4d */
static SrVal *ensure_4d(SrNnScope *s, SrVal *t) {
  SrVal *x = KEEP(sr_jnp_asarray(s->I, t, -1));
  const SrType *tt = ty(s->I, x);
  if (!tt || tt->ndim >= 4) return x;
  int64_t ax[4];
  int n = 4 - tt->ndim;
  for (int i = 0; i < n; i++) ax[i] = i;
  return C2("jax.numpy.expand_dims", x, dims_tuple(s, ax, n));
}

static int check_shape(SrInterp *I, SrVal *t, const int64_t *shape, int nd, int dtype, const char *name) {
  const SrType *tt = ty(I, t);
  if (!tt) return 0;
  if (tt->ndim != nd) return sr_raise(I, "ValueError", "%s ndim should be %d, but got %d", name, nd, tt->ndim), -1;
  if (dtype >= 0 && tt->dtype != (SrDtype)dtype)
    return sr_raise(I, "ValueError", "%s dtype should be %s, but got %s", name, sr_dtype_name((SrDtype)dtype),
                    sr_dtype_name(tt->dtype)),
           -1;
  for (int i = 0; i < nd; i++)
    if (shape[i] != -1 && tt->dims[i].size != shape[i]) {
      SrBuf b = SR_BUF_INIT, g = SR_BUF_INIT;
      sr_buf_puts(&b, "[");
      sr_buf_puts(&g, "(");
      for (int j = 0; j < nd; j++) {
        sr_buf_printf(&b, j ? ", %lld" : "%lld", (long long)shape[j]);
        sr_buf_printf(&g, j ? ", %lld" : "%lld", (long long)tt->dims[j].size);
      }
      sr_buf_puts(&b, "]");
      sr_buf_puts(&g, nd == 1 ? ",)" : ")");
      sr_raise(I, "ValueError", "%s shape should be %s: but got %s", name, b.p, g.p);
      sr_buf_free(&b);
      sr_buf_free(&g);
      return -1;
    }
  return 0;
}

/* _reshape_to_grouped: a [B, N or 1, T, S] bias or mask to [B, K, G, T, S] */
static SrVal *to_grouped(SrNnScope *s, SrVal *t, int64_t N, int64_t K, int64_t G) {
  const SrType *tt = ty(s->I, t);
  if (!tt) return NULL;
  int64_t tB = tt->dims[0].size, tN = tt->dims[1].size, tT = tt->dims[2].size, tS = tt->dims[3].size;
  if (tN == 1) {
    int64_t ax = 2, shape[5] = {tB, tN, G, tT, tS};
    SrVal *e = KEEP(sr_lax_expand_dims(s->I, t, &ax, 1));
    return e ? C2("jax.numpy.broadcast_to", e, dims_tuple(s, shape, 5)) : NULL;
  }
  if (tN != N) return sr_raise(s->I, "AssertionError", "bias/mask heads %lld are neither 1 nor %lld", (long long)tN,
                               (long long)N);
  int64_t shape[5] = {tB, K, G, tT, tS};
  return reshape(s, t, shape, 5);
}

static SrVal *nn_dot_product_attention(SrInterp *I, SrArgs *a) {
  SrVal *p[12];
  if (sr_args_parse(I, a, "dot_product_attention",
                    "query, key, value, bias=, mask=, *, scale=, is_causal=, query_seq_lengths=, "
                    "key_value_seq_lengths=, local_window_size=, implementation=, return_residual=",
                    p) < 0)
    return NULL;
  int is_causal = 0, ret_res = 0;
  if (p[6] && (is_causal = sr_truthy(I, p[6])) < 0) return NULL;
  if (p[11] && (ret_res = sr_truthy(I, p[11])) < 0) return NULL;
  if (sr_nn_given(p[10])) {
    if (p[10]->kind != SR_V_STR) return sr_raise(I, "ValueError", "Unsupported implementation option: %s", "?");
    if (p[10]->str.n != 3 || memcmp(p[10]->str.s, "xla", 3) != 0) {
      if (p[10]->str.n == 5 && memcmp(p[10]->str.s, "cudnn", 5) == 0)
        return sr_raise(I, "NotImplementedError", "dot_product_attention: implementation='cudnn' needs a GPU; "
                        "shardrepl has the 'xla' one");
      return sr_raise(I, "ValueError", "Unsupported implementation option: %.*s", (int)p[10]->str.n, p[10]->str.s);
    }
  }
  int64_t win[2] = {0, 0};
  int has_win = sr_nn_given(p[9]);
  if (has_win) {
    /* an int is a symmetric window */
    if (p[9]->kind == SR_V_INT) {
      win[0] = win[1] = p[9]->i;
    } else if (!sr_is_seq(p[9]) || p[9]->seq.n != 2 || sr_as_int(I, p[9]->seq.items[0], "local_window_size", &win[0]) < 0 ||
               sr_as_int(I, p[9]->seq.items[1], "local_window_size", &win[1]) < 0) {
      return I->exc ? NULL : sr_raise(I, "TypeError", "local_window_size must be an int or a pair of ints");
    }
  }
  SCOPE(I);
  SrVal *q0 = KEEP(sr_jnp_asarray(I, p[0], -1));
  const SrType *qt0 = ty(I, q0);
  if (!qt0) return DONE(NULL);
  int64_t out_shape[SR_MAX_RANK];
  int out_nd = qt0->ndim;
  for (int i = 0; i < out_nd; i++) out_shape[i] = qt0->dims[i].size;
  SrVal *q = ensure_4d(s, q0), *k = q ? ensure_4d(s, p[1]) : NULL, *v = k ? ensure_4d(s, p[2]) : NULL;
  SrVal *bias = v && sr_nn_given(p[3]) ? ensure_4d(s, p[3]) : NULL;
  SrVal *mask = v && sr_nn_given(p[4]) ? ensure_4d(s, p[4]) : NULL;
  if (!v || (sr_nn_given(p[3]) && !bias) || (sr_nn_given(p[4]) && !mask)) return DONE(NULL);
  const SrType *kt = ty(I, k), *qt = ty(I, q);
  int64_t B = kt->dims[0].size, S = kt->dims[1].size, K = kt->dims[2].size, H = kt->dims[3].size;
  int64_t vs[4] = {B, S, K, H}, qs[4] = {B, -1, -1, H}, any[4] = {-1, -1, -1, -1};
  SrVal *qsl = sr_nn_given(p[7]) ? KEEP(sr_jnp_asarray(I, p[7], -1)) : NULL;
  SrVal *kvsl = sr_nn_given(p[8]) ? KEEP(sr_jnp_asarray(I, p[8], -1)) : NULL;
  if ((sr_nn_given(p[7]) && !qsl) || (sr_nn_given(p[8]) && !kvsl)) return DONE(NULL);
  int64_t bs[1] = {B};
  if (check_shape(I, v, vs, 4, kt->dtype, "value") < 0 || check_shape(I, q, qs, 4, kt->dtype, "query") < 0 ||
      check_shape(I, mask, any, 4, SR_BOOL, "mask") < 0 || check_shape(I, bias, any, 4, -1, "bias") < 0 ||
      check_shape(I, qsl, bs, 1, SR_I32, "query_seq_lengths") < 0 ||
      check_shape(I, kvsl, bs, 1, SR_I32, "key_value_seq_lengths") < 0)
    return DONE(NULL);
  int64_t T = qt->dims[1].size, N = qt->dims[2].size;
  if (N % K != 0)
    return DONE(sr_raise(I, "ValueError", "The number of query heads must be a multiple of key/value heads, but got "
                         "%lld vs %lld", (long long)N, (long long)K));
  double scale = 1.0 / sqrt((double)H);
  if (sr_nn_given(p[5]) && sr_as_float(I, p[5], "scale", &scale) < 0) return DONE(NULL);
  /* _dot_product_attention_xla */
  int64_t G = N / K;
  int64_t q5[5] = {B, T, K, G, H};
  SrVal *qg = reshape(s, q, q5, 5);
  SrVal *bg = bias ? to_grouped(s, bias, N, K, G) : NULL;
  SrVal *mg = mask ? to_grouped(s, mask, N, K, G) : NULL;
  if (!qg || (bias && !bg) || (mask && !mg)) return DONE(NULL);
  DpaCore *cd = sr_xcalloc(1, sizeof *cd);
  *cd = (DpaCore){is_causal, bias != NULL, mask != NULL, qsl != NULL, kvsl != NULL, has_win, ret_res,
                  {win[0], win[1]}, scale};
  SrVal *core = KEEP(sr_builtin_with("_dot_product_attention_core", dpa_core, cd, free));
  SrVal *args[7] = {qg, k, v};
  SrVal *axes[7] = {IN(3), KEEP(sr_none()), KEEP(sr_none())};
  int n = 3;
  if (bg) {
    args[n] = bg;
    axes[n++] = IN(2);
  }
  if (mg) {
    args[n] = mg;
    axes[n++] = IN(2);
  }
  if (qsl) {
    args[n] = qsl;
    axes[n++] = KEEP(sr_none());
  }
  if (kvsl) {
    args[n] = kvsl;
    axes[n++] = KEEP(sr_none());
  }
  SrVal *in_axes = KEEP(sr_seq(NULL, SR_V_TUPLE, n));
  for (int i = 0; i < n; i++) sr_seq_push(NULL, in_axes, sr_ref(axes[i]));
  const char *kw[2] = {"in_axes", "out_axes"};
  SrVal *kv[2] = {in_axes, IN(3)};
  SrVal *vm = sr_nn_call(s, "jax.vmap", 1, &core, 2, kw, kv);
  SrVal *out = vm ? KEEP(sr_call(I, vm, &(SrArgs){n, args, 0, NULL, NULL, NULL})) : NULL;
  int64_t o4[4] = {B, T, N, H};
  if (!ret_res) {
    out = reshape(s, out, o4, 4);
    return DONE(reshape(s, out, out_shape, out_nd));
  }
  /* (encoded, lse_residual): [B, T, N, H] and [B, T, N], then the query's
     shape and that without its last axis */
  int64_t o3[3] = {B, T, N};
  SrVal *enc = out ? reshape(s, out->seq.items[0], o4, 4) : NULL;
  SrVal *res = enc ? reshape(s, out->seq.items[1], o3, 3) : NULL;
  enc = res ? reshape(s, enc, out_shape, out_nd) : NULL;
  res = enc ? reshape(s, res, out_shape, out_nd - 1) : NULL;
  if (!res) return DONE(NULL);
  return DONE(KEEP(sr_tuple(NULL, 2, (SrVal *[]){sr_ref(enc), sr_ref(res)})));
}

void sr_nn_more_init(void) {
  sr_def("jax.nn.hard_sigmoid", nn_hard_sigmoid, "hard_sigmoid(x): relu6(x + 3) / 6 (jax.nn)");
  sr_def("jax.nn.hard_silu jax.nn.hard_swish", nn_hard_silu, "hard_silu(x): x * hard_sigmoid(x) (jax.nn)");
  sr_def("jax.nn.mish", nn_mish, "mish(x): x * tanh(softplus(x)) (jax.nn)");
  sr_def("jax.nn.soft_sign", nn_soft_sign, "soft_sign(x): x / (|x| + 1) (jax.nn)");
  sr_def("jax.nn.squareplus", nn_squareplus, "squareplus(x, b=4): (x + sqrt(x**2 + b)) / 2 (jax.nn)");
  sr_def("jax.nn.sparse_plus", nn_sparse_plus, "sparse_plus(x): 0, (x + 1)**2 / 4, or x (jax.nn)");
  sr_def("jax.nn.sparse_sigmoid", nn_sparse_sigmoid, "sparse_sigmoid(x): clip(x + 1, 0, 2) / 2 (jax.nn)");
  sr_def("jax.nn.log1mexp", nn_log1mexp, "log1mexp(x): log(1 - exp(-x)), a custom_jvp (jax.nn)");
  sr_def("jax.nn.logmeanexp", nn_logmeanexp,
         "logmeanexp(x, axis=None, where=None, keepdims=False): log(mean(exp(x))) (jax.nn)");
  sr_def("jax.nn.identity", nn_identity, "identity(x): x, under a jit (jax.nn)");
  sr_def("jax.nn.dot_product_attention", nn_dot_product_attention,
         "dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False, "
         "query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None, implementation=None, "
         "return_residual=False): softmax(q k^T * scale + bias, masked) v over [B, T, N, H] (the 'xla' path)");
}
