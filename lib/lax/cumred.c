/* cumred.c: the JVP rules of cumprod, cummax, cummin and cumlogsumexp
 * (lax/control_flow/loops.py's _cumulative_jvp_rule): JAX differentiates
 * them through the parallel prefix scan,
 *
 *     api.jvp(partial(associative_scan, combine_fn, axis=axis,
 *                     reverse=reverse), primals, tangents)
 *
 * with combine_fn lax.mul, lax.max, lax.min or lax_other.logaddexp (a
 * custom_jvp, reached through sr_lax_logaddexp_hook).  The rule traces
 * associative_scan (its _scan recursion and _interleave, op for op) on the
 * operand's type into a jaxpr and runs that jaxpr's equations through
 * their own JVP rules, so the tangent equations are those JAX's jvp of
 * associative_scan emits.  Registered by sr_lax_cumred_init.
 */
#include "lax/lax.h"

#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "util/intern.h"

static int64_t param_int(const SrEqn *e, const char *key, int64_t dflt) {
  SrVal *v = sr_eqn_param(e, sr_intern_cstr(key));
  return v && (v->kind == SR_V_INT || v->kind == SR_V_BOOL) ? v->i : dflt;
}

/* The values a scan builds, released at the end. */
typedef struct Scan {
  SrInterp *I;
  int prim, axis;
  SrVal **keep;
  int n, cap;
} Scan;

static SrVal *keep(Scan *s, SrVal *v) {
  if (!v) return NULL;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 32;
    s->keep = sr_xrealloc(s->keep, (size_t)s->cap * sizeof *s->keep);
  }
  return s->keep[s->n++] = v;
}

static int64_t axis_len(Scan *s, SrVal *x) { return sr_value_type(s->I, x)->dims[s->axis].size; }

/* slicing.slice_in_dim(x, start, limit, stride, axis) (limit -1 counted
   from the end, LONG_MIN: None) */
static SrVal *slice_in_dim(Scan *s, SrVal *x, int64_t start, int64_t limit, int64_t stride, int none) {
  if (!x) return NULL;
  const SrType *t = sr_value_type(s->I, x);
  int64_t st[SR_MAX_RANK], lim[SR_MAX_RANK], str[SR_MAX_RANK], len = t->dims[s->axis].size;
  for (int i = 0; i < t->ndim; i++) st[i] = 0, lim[i] = t->dims[i].size, str[i] = 1;
  if (!none && limit < 0) limit += len;
  st[s->axis] = start;
  lim[s->axis] = none ? len : limit;
  str[s->axis] = stride;
  return keep(s, sr_op_slice(SR_BINDER(s->I), x, st, lim, str));
}

SrVal *(*sr_lax_logaddexp_hook)(SrInterp *I, SrVal *x1, SrVal *x2);

static SrVal *combine(Scan *s, SrVal *a, SrVal *b) {
  if (!a || !b) return NULL;
  if (s->prim == SR_P_cumlogsumexp) return keep(s, sr_lax_logaddexp_hook(s->I, a, b));
  return keep(s, sr_op_binary(SR_BINDER(s->I), s->prim, a, b));
}

/* _interleave(a, b, axis) */
static SrVal *interleave(Scan *s, SrVal *a, SrVal *b) {
  if (!a || !b) return NULL;
  const SrType *at = sr_value_type(s->I, a), *bt = sr_value_type(s->I, b);
  int eq = at->dims[s->axis].size == bt->dims[s->axis].size;
  int64_t ac[3 * SR_MAX_RANK] = {0}, bc[3 * SR_MAX_RANK] = {0};
  ac[3 * s->axis + 1] = eq ? 1 : 0;
  ac[3 * s->axis + 2] = 1;
  bc[3 * s->axis] = 1;
  bc[3 * s->axis + 1] = eq ? 0 : 1;
  bc[3 * s->axis + 2] = 1;
  SrVal *za = keep(s, sr_array_scalar(sr_type_array(at->dtype, 0, NULL), 0, 0, 0));
  SrVal *pa = keep(s, sr_op_pad(SR_BINDER(s->I), a, za, ac, at->ndim));
  SrVal *zb = keep(s, sr_array_scalar(sr_type_array(bt->dtype, 0, NULL), 0, 0, 0));
  SrVal *pb = pa ? keep(s, sr_op_pad(SR_BINDER(s->I), b, zb, bc, bt->ndim)) : NULL;
  return pb ? keep(s, sr_op_binary(SR_BINDER(s->I), at->dtype == SR_BOOL ? SR_P_or : SR_P_add, pa, pb)) : NULL;
}

/* associative_scan's _scan on one element */
static SrVal *scan(Scan *s, SrVal *x) {
  if (!x) return NULL;
  int64_t n = axis_len(s, x);
  if (n < 2) return x;
  SrVal *lo = slice_in_dim(s, x, 0, -1, 2, 0);
  SrVal *hi = slice_in_dim(s, x, 1, 0, 2, 1);
  SrVal *odd = scan(s, combine(s, lo, hi));
  SrVal *even;
  if (n % 2 == 0) {
    SrVal *a = slice_in_dim(s, odd, 0, -1, 1, 0);
    even = combine(s, a, slice_in_dim(s, x, 2, 0, 2, 1));
  } else {
    even = combine(s, odd, slice_in_dim(s, x, 2, 0, 2, 1));
  }
  SrVal *first = slice_in_dim(s, x, 0, 1, 1, 0);
  SrVal *parts[2] = {first, even};
  even = first && even ? keep(s, sr_op_concatenate(SR_BINDER(s->I), 2, parts, s->axis)) : NULL;
  return interleave(s, even, odd);
}

/* _cumulative_jvp_rule */
static int jvp_cumred(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrInterp *I = ad->I;
  const SrType *xt = sr_ad_type(ad, x[0]);
  if (!xt) return -1;
  int axis = (int)param_int(e, "axis", 0), reverse = (int)param_int(e, "reverse", 0);
  int prim = e->prim->id == SR_P_cumprod ? SR_P_mul : e->prim->id == SR_P_cummax ? SR_P_max : SR_P_min;
  if (e->prim->id == SR_P_cumlogsumexp) {
    if (!sr_lax_logaddexp_hook) return sr_ad_no_jvp(ad, e->prim);
    prim = SR_P_cumlogsumexp;
  }
  SrVal *arg = NULL;
  SrTrace *saved = I->trace;
  SrTrace *tr = sr_ad_trace_begin(ad, 1, &xt, &arg);
  I->trace = tr;
  Scan s = {I, prim, axis, NULL, 0, 0};
  int64_t ax = axis;
  SrVal *in = reverse ? keep(&s, sr_op_rev(SR_BINDER(I), arg, &ax, 1)) : arg;
  SrVal *out = scan(&s, in);
  if (out && reverse) out = keep(&s, sr_op_rev(SR_BINDER(I), out, &ax, 1));
  SrJaxpr *j = NULL;
  if (out) j = sr_ad_trace_end(ad, tr, 1, &out, NULL);
  else sr_trace_abort(I, tr);
  I->trace = saved;
  for (int i = 0; i < s.n; i++) sr_unref(s.keep[i]);
  free(s.keep);
  sr_unref(arg);
  if (!j) return -1;
  SrVal *yo = NULL, *to = NULL;
  int rc = sr_ad_eval(ad, j, x, t, &yo, &to);
  sr_program_unref(j->prog);
  if (rc < 0) return -1;
  y[0] = sr_ad_keep(ad, yo);
  ty[0] = to ? sr_ad_keep(ad, to) : NULL;
  return 0;
}

void sr_lax_cumred_init(void) {
  sr_ad_set_jvp(SR_P_cumprod, jvp_cumred);
  sr_ad_set_jvp(SR_P_cummax, jvp_cumred);
  sr_ad_set_jvp(SR_P_cummin, jvp_cumred);
  sr_ad_set_jvp(SR_P_cumlogsumexp, jvp_cumred);
}
