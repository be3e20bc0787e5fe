/* numpy_searchsorted.c: jax.numpy.searchsorted and what is built on it,
 * digitize (numpy/lax_numpy.py), written as JAX writes them: jnp's
 * searchsorted is a jit of that name whose body is
 * hijax.searchsorted_via_expand, the expansion of the SearchSorted hijax
 * primitive (jax/_src/numpy/hijax.py): _searchsorted_scan_impl (method
 * 'scan' and 'scan_unrolled': a binary search, a scan of
 * ceil(log2(n + 1)) steps, vmapped over the queries),
 * _searchsorted_sort_impl ('sort': ranks by lax.sort_key_val and a
 * scatter) and _searchsorted_compare_all_impl ('compare_all': every
 * comparison, summed), each a jit of its own name, with lax's
 * _sort_lt_comparator / _sort_le_comparator on the total-order comparisons
 * lt_to, le_to and eq_to.  Registered by sr_jnp_searchsorted_init
 * (jax.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "py/ast.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, (v))

enum { M_SCAN, M_SCAN_UNROLLED, M_SORT, M_COMPARE_ALL };
static const char *const method_names[] = {"scan", "scan_unrolled", "sort", "compare_all"};

/* The static arguments of the jits. */
typedef struct SsData {
  int right;    /* side='right' */
  int method;   /* M_* */
  SrDtype dtype; /* the result's */
} SsData;

static SsData *ss_copy(const SsData *d) {
  SsData *c = sr_xmalloc(sizeof *c);
  *c = *d;
  return c;
}

static const SrType *type_of(SrNnScope *s, SrVal *v) { return v ? sr_value_type(s->I, v) : NULL; }

/* lax._canonicalize_float_for_sort: -0.0 as 0.0, every NaN as NaN. */
static SrVal *canon_float(SrNnScope *s, SrVal *x) {
  SrInterp *I = s->I;
  const SrType *t = type_of(s, x);
  if (!t) return NULL;
  SrVal *zero = sr_nn_typed_scalar(s, 0.0, t->dtype);
  SrVal *is0 = zero ? KEEP(sr_lax_binary(I, SR_P_eq, x, zero)) : NULL;
  SrVal *zeros = is0 ? sr_nn_full_like(s, x, sr_nn_int(s, 0)) : NULL;
  SrVal *r = zeros ? KEEP(sr_lax_select(I, is0, zeros, x)) : NULL;
  SrVal *isnan = r ? KEEP(sr_lax_binary(I, SR_P_ne, x, x)) : NULL;
  SrVal *nans = isnan ? sr_nn_full_like(s, r, sr_nn_float(s, NAN)) : NULL;
  return nans ? KEEP(sr_lax_select(I, isnan, nans, r)) : NULL;
}

/* lax._operands_to_keys for one operand: its keys (*nk of them). */
static int sort_keys(SrNnScope *s, SrVal *x, SrVal **k, int *nk) {
  const SrType *t = type_of(s, x);
  if (!t) return -1;
  if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) {
    /* JAX's keys are the canonicalized real and imaginary parts */
    sr_raise(s->I, "NotImplementedError", "searchsorted of complex values (lax.real and lax.imag)");
    return -1;
  }
  k[0] = sr_dtype_is_float(t->dtype) ? canon_float(s, x) : x;
  *nk = 1;
  return k[0] ? 0 : -1;
}

/* lax._sort_lt_comparator(x, y) (le: _sort_le_comparator), one key
   operand each: lexicographic over the keys, the last key first. */
static SrVal *sort_compare(SrNnScope *s, SrVal *x, SrVal *y, int le) {
  SrInterp *I = s->I;
  SrVal *xk[2], *yk[2];
  int nx, ny;
  if (!x || !y || sort_keys(s, x, xk, &nx) < 0 || sort_keys(s, y, yk, &ny) < 0) return NULL;
  SrVal *p = NULL;
  for (int i = nx - 1; i >= 0; i--) {
    if (!p) {
      p = KEEP(sr_lax_binary(I, le ? SR_P_le_to : SR_P_lt_to, xk[i], yk[i]));
    } else {
      SrVal *lt = KEEP(sr_lax_binary(I, SR_P_lt_to, xk[i], yk[i]));
      SrVal *eq = lt ? KEEP(sr_lax_binary(I, SR_P_eq_to, xk[i], yk[i])) : NULL;
      SrVal *both = eq ? KEEP(sr_lax_binary(I, SR_P_and, eq, p)) : NULL;
      p = both ? KEEP(sr_lax_binary(I, SR_P_or, lt, both)) : NULL;
    }
    if (!p) return NULL;
  }
  return p;
}

/* jax.vmap(fn, in_axes=(ax0, ax1))(x, y), fn a builtin (stolen). */
static SrVal *vmap2(SrNnScope *s, SrVal *fn, int ax0, int ax1, SrVal *x, SrVal *y) {
  KEEP(fn);
  SrVal *axes[2] = {ax0 < 0 ? sr_none() : sr_int(NULL, ax0), ax1 < 0 ? sr_none() : sr_int(NULL, ax1)};
  SrVal *in_axes = KEEP(sr_tuple(NULL, 2, axes));
  const char *kw[1] = {"in_axes"};
  SrVal *vf = sr_nn_call(s, "jax.vmap", 1, &fn, 1, kw, &in_axes);
  if (!vf) return NULL;
  SrVal *args[2] = {x, y};
  SrArgs a = {2, args, 0, NULL, NULL, NULL};
  return KEEP(sr_call(s->I, vf, &a));
}

/* ---- _searchsorted_scan_impl ---- */

typedef struct BodyData {
  SrVal *sorted_arr, *query;
  int right;
} BodyData;

static void body_free(void *p) {
  BodyData *d = p;
  sr_unref(d->sorted_arr);
  sr_unref(d->query);
  free(d);
}

/* body_fun(state, _): one step of the binary search */
static SrVal *scan_body(SrInterp *I, SrArgs *a) {
  BodyData *d = sr_current_builtin(I)->data;
  SrVal *state = a->v[0];
  if (!sr_is_seq(state) || state->seq.n != 2) return sr_raise(I, "TypeError", "searchsorted: bad scan state");
  SCOPE(I);
  SrVal *low = state->seq.items[0], *high = state->seq.items[1];
  SrVal *mid = sr_nn_op(s, SR_OP_ADD, low, sr_nn_op(s, SR_OP_FLOORDIV, sr_nn_op(s, SR_OP_SUB, high, low),
                                                    sr_nn_int(s, 2)));
  SrVal *at = mid ? KEEP(sr_getitem(I, d->sorted_arr, mid)) : NULL;
  SrVal *go_left = at ? sort_compare(s, d->query, at, !d->right) : NULL;
  SrVal *lo = go_left ? KEEP(sr_lax_select(I, go_left, low, mid)) : NULL;
  SrVal *hi = lo ? KEEP(sr_lax_select(I, go_left, mid, high)) : NULL;
  if (!hi) return sr_nn_done(s, NULL);
  SrVal *carry[2] = {sr_ref(lo), sr_ref(hi)};
  SrVal *out[2] = {sr_tuple(NULL, 2, carry), sr_tuple(NULL, 0, NULL)};
  return sr_nn_done(s, KEEP(sr_tuple(NULL, 2, out)));
}

static SrVal *scan_impl(SrInterp *I, SrArgs *a);

static SrVal *scan_impl_vmapped(SrInterp *I, SrArgs *a) {
  SsData *d = sr_current_builtin(I)->data;
  return sr_api_jit(I, "_searchsorted_scan_impl", scan_impl, ss_copy(d), 2, a->v);
}

static SrVal *scan_impl(SrInterp *I, SrArgs *a) {
  SsData *d = sr_current_builtin(I)->data;
  SrVal *sa = a->v[0], *q = a->v[1];
  SCOPE(I);
  const SrType *st = type_of(s, sa), *qt = type_of(s, q);
  if (!st || !qt) return sr_nn_done(s, NULL);
  int64_t n = st->dims[0].size, qshape[SR_MAX_RANK];
  for (int i = 0; i < qt->ndim; i++) qshape[i] = qt->dims[i].size;
  if (n == 0) return sr_nn_done(s, KEEP(sr_lax_full(I, qshape, qt->ndim, sr_nn_int(s, 0), (int)d->dtype, NULL)));
  if (qt->ndim > 0) {
    SrVal *fn = sr_builtin_with("_searchsorted_scan_impl", scan_impl_vmapped, ss_copy(d), free);
    return sr_nn_done(s, vmap2(s, fn, -1, 0, sa, q));
  }
  int64_t levels = (int64_t)ceil(log2((double)n + 1));
  SrDtype udt = sr_dtype_info(d->dtype)->bits == 64 ? SR_U64 : SR_U32;
  SrVal *init_items[2] = {sr_ref(sr_nn_typed_scalar(s, 0, udt)), sr_ref(sr_nn_typed_scalar(s, (double)n, udt))};
  if (!init_items[0] || !init_items[1]) {
    sr_unref(init_items[0]);
    sr_unref(init_items[1]);
    return sr_nn_done(s, NULL);
  }
  SrVal *init = KEEP(sr_tuple(NULL, 2, init_items));
  BodyData *bd = sr_xmalloc(sizeof *bd);
  bd->sorted_arr = sr_ref(sa);
  bd->query = sr_ref(q);
  bd->right = d->right;
  SrVal *body = KEEP(sr_builtin_with("body_fun", scan_body, bd, body_free));
  SrVal *args[3] = {body, init, KEEP(sr_tuple(NULL, 0, NULL))};
  const char *kw[2] = {"length", "unroll"};
  SrVal *kwv[2] = {sr_nn_int(s, levels), sr_nn_int(s, d->method == M_SCAN_UNROLLED ? levels : 1)};
  SrVal *r = sr_nn_call(s, "jax.lax.scan", 3, args, 2, kw, kwv);
  if (!r) return sr_nn_done(s, NULL);
  if (!sr_is_seq(r) || r->seq.n != 2 || !sr_is_seq(r->seq.items[0]) || r->seq.items[0]->seq.n != 2)
    return sr_nn_done(s, sr_raise(I, "TypeError", "searchsorted: bad scan result"));
  return sr_nn_done(s, KEEP(sr_lax_convert(I, r->seq.items[0]->seq.items[1], d->dtype, 0, NULL)));
}

/* ---- _searchsorted_sort_impl ---- */

/* _rank(x): lax.full_like(idx, 0).at[lax.sort_key_val(x, idx)[1]].set(idx) */
static SrVal *rank(SrNnScope *s, SrVal *x, SrDtype wdt) {
  SrInterp *I = s->I;
  const SrType *t = type_of(s, x);
  if (!t) return NULL;
  int64_t len = t->dims[0].size;
  SrVal *idx = KEEP(sr_lax_iota(I, wdt, &len, 1, 0, NULL));
  SrVal *skv = idx ? sr_nn_call2(s, "jax.lax.sort_key_val", x, idx) : NULL;
  if (!skv) return NULL;
  if (!sr_is_seq(skv) || skv->seq.n != 2) return sr_raise(I, "TypeError", "searchsorted: bad sort_key_val result");
  SrVal *zeros = sr_nn_full_like(s, idx, sr_nn_int(s, 0));
  SrVal *at = zeros ? KEEP(sr_getattr(I, zeros, "at")) : NULL;
  SrVal *ref = at ? KEEP(sr_getitem(I, at, skv->seq.items[1])) : NULL;
  SrVal *set = ref ? KEEP(sr_getattr(I, ref, "set")) : NULL;
  if (!set) return NULL;
  SrArgs a = {1, &idx, 0, NULL, NULL, NULL};
  return KEEP(sr_call(I, set, &a));
}

static SrVal *slice1(SrNnScope *s, SrVal *x, int64_t start, int64_t stop) {
  SrVal *sl = KEEP(sr_slice_new(start ? sr_int(NULL, start) : sr_none(), stop >= 0 ? sr_int(NULL, stop) : sr_none(),
                                sr_none()));
  return KEEP(sr_getitem(s->I, x, sl));
}

static SrVal *sort_impl(SrInterp *I, SrArgs *a) {
  SsData *d = sr_current_builtin(I)->data;
  SrVal *sa = a->v[0], *q = a->v[1];
  SCOPE(I);
  const SrType *st = type_of(s, sa), *qt = type_of(s, q);
  if (!st || !qt) return sr_nn_done(s, NULL);
  int64_t na = sr_type_numel(st), nq = sr_type_numel(qt);
  SrDtype wdt = na + nq <= INT32_MAX ? SR_I32 : SR_I64;
  SrVal *qr = sr_nn_call1(s, "jax.numpy.ravel", q);
  if (!qr) return sr_nn_done(s, NULL);
  SrVal *parts[2] = {d->right ? sa : qr, d->right ? qr : sa};
  SrVal *cat = KEEP(sr_lax_concatenate(I, 2, parts, 0));
  SrVal *rk = cat ? rank(s, cat, wdt) : NULL;
  SrVal *index = rk ? (d->right ? slice1(s, rk, na, -1) : slice1(s, rk, 0, nq)) : NULL;
  SrVal *rq = index ? rank(s, qr, wdt) : NULL;
  SrVal *diff = rq ? KEEP(sr_lax_binary(I, SR_P_sub, index, rq)) : NULL;
  int64_t qshape[SR_MAX_RANK];
  for (int i = 0; i < qt->ndim; i++) qshape[i] = qt->dims[i].size;
  SrVal *r = diff ? KEEP(sr_lax_reshape(I, diff, qshape, qt->ndim, NULL)) : NULL;
  return sr_nn_done(s, r ? KEEP(sr_lax_convert(I, r, d->dtype, 0, NULL)) : NULL);
}

/* ---- _searchsorted_compare_all_impl ---- */

static SrVal *compare_op(SrInterp *I, SrArgs *a) {
  SsData *d = sr_current_builtin(I)->data;
  SCOPE(I);
  /* lt for side='left', le for side='right' */
  return sr_nn_done(s, sort_compare(s, a->v[0], a->v[1], d->right));
}

static SrVal *compare_all_impl(SrInterp *I, SrArgs *a) {
  SsData *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *op = sr_builtin_with(d->right ? "_sort_le_comparator" : "_sort_lt_comparator", compare_op, ss_copy(d), free);
  SrVal *cmp = vmap2(s, op, 0, -1, a->v[0], a->v[1]);
  SrVal *sum = cmp ? KEEP(sr_getattr(I, cmp, "sum")) : NULL;
  if (!sum) return sr_nn_done(s, NULL);
  const char *kw[2] = {sr_intern_cstr("dtype"), sr_intern_cstr("axis")};
  SrVal *kwv[2] = {KEEP(sr_dtype_val(NULL, d->dtype)), sr_nn_int(s, 0)};
  SrArgs ca = {0, NULL, 2, kw, kwv, NULL};
  return sr_nn_done(s, KEEP(sr_call(I, sum, &ca)));
}

/* ---- jnp.searchsorted ---- */

static SrVal *searchsorted_body(SrInterp *I, SrArgs *a) {
  SsData *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, a->v[0], -1));
  SrVal *v = x ? KEEP(sr_jnp_asarray(I, a->v[1], -1)) : NULL;
  SrVal *sorter = a->n > 2 ? a->v[2] : NULL;
  if (!v || (sorter && !(sorter = KEEP(sr_jnp_asarray(I, sorter, -1))))) return sr_nn_done(s, NULL);
  const SrType *xt = type_of(s, x);
  if (xt->ndim != 1) return sr_nn_done(s, sr_raise(I, "ValueError", "a should be 1-dimensional"));
  /* util.promote_dtypes(a, v) */
  SrVal *pv[2] = {x, v};
  int weak = 0;
  SrDtype dt = sr_jnp_result_dtype(I, 2, pv, &weak);
  x = KEEP(sr_jnp_convert(I, x, dt, weak));
  v = x ? KEEP(sr_jnp_convert(I, v, dt, weak)) : NULL;
  if (!v) return sr_nn_done(s, NULL);
  if (sorter && !(x = KEEP(sr_getitem(I, x, sorter)))) return sr_nn_done(s, NULL);
  xt = type_of(s, x);
  SsData dd = *d;
  dd.dtype = xt->dims[0].size > INT32_MAX ? SR_I64 : SR_I32;
  SrVal *args[2] = {x, v};
  SrBuiltinFn fn = d->method == M_SORT ? sort_impl : d->method == M_COMPARE_ALL ? compare_all_impl : scan_impl;
  const char *name = d->method == M_SORT          ? "_searchsorted_sort_impl"
                     : d->method == M_COMPARE_ALL ? "_searchsorted_compare_all_impl"
                                                  : "_searchsorted_scan_impl";
  return sr_nn_done(s, KEEP(sr_api_jit(I, name, fn, ss_copy(&dd), 2, args)));
}

static int side_arg(SrInterp *I, SrVal *v, int *right) {
  *right = 0;
  if (!v) return 0;
  if (v->kind == SR_V_STR && !strcmp(v->str.s, "left")) return 0;
  if (v->kind == SR_V_STR && !strcmp(v->str.s, "right")) {
    *right = 1;
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  sr_raise(I, "ValueError", "invalid argument side=%s, expected 'left' or 'right'", b.p);
  sr_buf_free(&b);
  return -1;
}

static int method_arg(SrInterp *I, SrVal *v, int *method) {
  *method = M_SCAN;
  if (!v) return 0;
  for (int i = 0; i < 4; i++)
    if (v->kind == SR_V_STR && !strcmp(v->str.s, method_names[i])) {
      *method = i;
      return 0;
    }
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, v);
  sr_raise(I, "ValueError",
           "invalid argument method=%s, expected one of ['compare_all', 'scan', 'scan_unrolled', 'sort']", b.p);
  sr_buf_free(&b);
  return -1;
}

/* searchsorted(a, v, side='left', sorter=None, *, method='scan') */
static SrVal *jnp_searchsorted(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "searchsorted", "a, v, side=, sorter=, *, method=", p) < 0) return NULL;
  SsData d = {0, M_SCAN, SR_I32};
  if (side_arg(I, p[2], &d.right) < 0 || method_arg(I, p[4], &d.method) < 0) return NULL;
  SrVal *args[3] = {p[0], p[1], p[3]};
  int n = sr_nn_given(p[3]) ? 3 : 2;
  return sr_api_jit(I, "searchsorted", searchsorted_body, ss_copy(&d), n, args);
}

/* ---- jnp.digitize ---- */

static SrVal *digitize_body(SrInterp *I, SrArgs *a) {
  SsData *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, a->v[0], -1));
  SrVal *bins = x ? KEEP(sr_jnp_asarray(I, a->v[1], -1)) : NULL;
  if (!bins) return sr_nn_done(s, NULL);
  const SrType *bt = type_of(s, bins);
  if (bt->ndim != 1) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, a->v[1]);
    sr_raise(I, "ValueError", "digitize: bins must be a 1-dimensional array; got bins=%s", b.p);
    sr_buf_free(&b);
    return sr_nn_done(s, NULL);
  }
  if (bt->dims[0].size == 0) {
    const char *kw[1] = {"dtype"};
    SrVal *dv = KEEP(sr_dtype_val(NULL, SR_I32));
    return sr_nn_done(s, sr_ref(sr_nn_call(s, "jax.numpy.zeros_like", 1, &x, 1, kw, &dv)));
  }
  /* side = 'right' if not right else 'left' */
  const char *side = d->right ? "left" : "right";
  const char *kw[2] = {"side", "method"};
  SrVal *kwv[2] = {KEEP(sr_str(NULL, side, strlen(side))), d->method >= 0 ? KEEP(sr_str(NULL, method_names[d->method], strlen(method_names[d->method]))) : NULL};
  /* jnp.where(bins[-1] >= bins[0], searchsorted(bins, x, side=side, ...),
               bins.shape[0] - searchsorted(bins[::-1], x, side=side, ...)) */
  SrVal *last = KEEP(sr_getitem(I, bins, sr_nn_int(s, -1)));
  SrVal *first = last ? KEEP(sr_getitem(I, bins, sr_nn_int(s, 0))) : NULL;
  SrVal *cond = first ? sr_nn_op(s, SR_OP_GE, last, first) : NULL;
  SrVal *sv[2] = {bins, x};
  SrVal *fwd = cond ? sr_nn_call(s, "jax.numpy.searchsorted", 2, sv, 2, kw, kwv) : NULL;
  SrVal *rsl = fwd ? KEEP(sr_slice_new(sr_none(), sr_none(), sr_int(NULL, -1))) : NULL;
  SrVal *rev = rsl ? KEEP(sr_getitem(I, bins, rsl)) : NULL;
  SrVal *rv[2] = {rev, x};
  SrVal *bwd = rev ? sr_nn_call(s, "jax.numpy.searchsorted", 2, rv, 2, kw, kwv) : NULL;
  SrVal *nb = bwd ? sr_nn_op(s, SR_OP_SUB, sr_nn_int(s, bt->dims[0].size), bwd) : NULL;
  return sr_nn_done(s, nb ? sr_ref(sr_nn_call3(s, "jax.numpy.where", cond, fwd, nb)) : NULL);
}

/* digitize(x, bins, right=False, *, method=None) */
static SrVal *jnp_digitize(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "digitize", "x, bins, right=, *, method=", p) < 0) return NULL;
  SsData d = {0, -1, SR_I32};
  if (p[2]) {
    d.right = sr_truthy(I, p[2]);
    if (d.right < 0) return NULL;
  }
  if (sr_nn_given(p[3]) && method_arg(I, p[3], &d.method) < 0) return NULL;
  SrVal *args[2] = {p[0], p[1]};
  return sr_api_jit(I, "digitize", digitize_body, ss_copy(&d), 2, args);
}

void sr_jnp_searchsorted_init(void) {
  sr_def("jax.numpy.searchsorted", jnp_searchsorted,
         "searchsorted(a, v, side='left', sorter=None, *, method='scan'): insertion indices of v in the sorted a, "
         "jit[name=searchsorted]");
  sr_def("jax.numpy.digitize", jnp_digitize,
         "digitize(x, bins, right=False, *, method=None): the bin of each x, by searchsorted, jit[name=digitize]");
}
