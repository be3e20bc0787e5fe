/* numpy_searchsorted.c: jax.numpy.searchsorted and what is built on it,
 * digitize and interp (numpy/lax_numpy.py), written as JAX writes them: jnp's
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

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
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
  /* the initial carry varies as sorted_arr does (core.pvary onto its
     varying axes), so that the scan's carry keeps its type */
  const SrMesh *m = sr_api_mesh(I);
  SrAxes vma = sr_api_axes_on(st, st->varying, m);
  for (int i = 0; i < 2 && vma; i++) {
    SrVal *v = sr_lax_pvary(I, init_items[i], vma);
    sr_unref(init_items[i]);
    init_items[i] = v;
  }
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
  /* hijax.searchsorted_via_expand: core.auto_insert_reshard(sorted_arr, query) */
  SrVal *args[2] = {sr_ref(x), sr_ref(v)};
  int bad = sr_auto_insert_reshard(I, 2, args) < 0;
  KEEP(args[0]);
  KEEP(args[1]);
  if (bad) return sr_nn_done(s, NULL);
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
    return sr_nn_done(s, sr_nn_call(s, "jax.numpy.zeros_like", 1, &x, 1, kw, &dv));
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
  return sr_nn_done(s, nb ? sr_nn_call3(s, "jax.numpy.where", cond, fwd, nb) : NULL);
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

/* ---- jnp.interp ---- */

enum { EDGE_NONE, EDGE_EXTRAPOLATE, EDGE_VALUE };

/* interp's static arguments: how left and right are given, and whether a
   period is. */
typedef struct InterpData {
  int left, right, period;
} InterpData;

/* util.promote_dtypes_inexact: one inexact dtype, the ranks kept. */
static int promote_inexact(SrNnScope *s, int n, SrVal **args) {
  SrInterp *I = s->I;
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, n, args, &weak);
  if (sr_dtype_is_int(dt) || dt == SR_BOOL) dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  for (int i = 0; i < n; i++)
    if (!(args[i] = KEEP(sr_lax_convert(I, args[i], dt, weak, NULL)))) return -1;
  return 0;
}

static SrVal *idx(SrNnScope *s, SrVal *x, SrVal *i) { return x && i ? KEEP(sr_getitem(s->I, x, i)) : NULL; }

/* concatenate([a, b, c]) */
static SrVal *concat3(SrNnScope *s, SrVal *a, SrVal *b, SrVal *c) {
  if (!a || !b || !c) return NULL;
  SrVal *items[3] = {sr_ref(a), sr_ref(b), sr_ref(c)};
  SrVal *l = KEEP(sr_tuple(NULL, 3, items));
  return sr_nn_call1(s, "jax.numpy.concatenate", l);
}

/* _interp(x, xp, fp, left, right, period), jitted with the str or None
   ones static */
static SrVal *interp_body(SrInterp *I, SrArgs *a) {
  InterpData *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *v[3];
  for (int i = 0; i < 3; i++)
    if (!(v[i] = KEEP(sr_jnp_asarray(I, a->v[i], -1)))) return sr_nn_done(s, NULL);
  int k = 3;
  SrVal *left = d->left == EDGE_VALUE ? a->v[k++] : NULL;
  SrVal *right = d->right == EDGE_VALUE ? a->v[k++] : NULL;
  SrVal *period = d->period ? a->v[k++] : NULL;
  const SrType *xpt = type_of(s, v[1]), *fpt = type_of(s, v[2]);
  int same = xpt->ndim == fpt->ndim;
  for (int i = 0; same && i < xpt->ndim; i++) same = xpt->dims[i].size == fpt->dims[i].size;
  if (!same || xpt->ndim != 1)
    return sr_nn_done(s, sr_raise(I, "ValueError", "xp and fp must be one-dimensional arrays of equal size"));
  SrVal *xf[2] = {v[0], v[1]}, *ff[1] = {v[2]};
  if (promote_inexact(s, 2, xf) < 0 || promote_inexact(s, 1, ff) < 0) return sr_nn_done(s, NULL);
  SrVal *x = xf[0], *xp = xf[1], *fp = ff[0];
  if (sr_dtype_kind(type_of(s, x)->dtype) == SR_DK_COMPLEX)
    return sr_nn_done(s, sr_raise(I, "ValueError", "jnp.interp: complex x values not supported."));
  if (period) {
    if (type_of(s, KEEP(sr_jnp_asarray(I, period, -1)))->ndim != 0) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, period);
      sr_raise(I, "ValueError", "period must be a scalar; got %s", b.p);
      sr_buf_free(&b);
      return sr_nn_done(s, NULL);
    }
    period = sr_nn_call1(s, "jax.numpy.abs", period);
    x = sr_nn_op(s, SR_OP_MOD, x, period);
    xp = sr_nn_op(s, SR_OP_MOD, xp, period);
    SrVal *kv = xp ? sr_nn_call2(s, "jax.lax.sort_key_val", xp, fp) : NULL;
    if (!kv) return sr_nn_done(s, NULL);
    xp = kv->seq.items[0];
    fp = kv->seq.items[1];
    SrVal *xl = sr_nn_op(s, SR_OP_SUB, slice1(s, xp, -1, -1), period);
    xp = concat3(s, xl, xp, xl ? sr_nn_op(s, SR_OP_ADD, slice1(s, xp, 0, 1), period) : NULL);
    SrVal *fl = xp ? slice1(s, fp, -1, -1) : NULL;
    fp = concat3(s, fl, fp, fl ? slice1(s, fp, 0, 1) : NULL);
    if (!fp) return sr_nn_done(s, NULL);
  }
  /* i = clip(searchsorted(xp, x, side='right'), 1, len(xp) - 1) */
  int64_t n = type_of(s, xp)->dims[0].size;
  const char *kw[1] = {"side"};
  SrVal *side = KEEP(sr_str(NULL, "right", 5));
  SrVal *sv[2] = {xp, x};
  SrVal *ss = sr_nn_call(s, "jax.numpy.searchsorted", 2, sv, 1, kw, &side);
  SrVal *i = ss ? sr_nn_call3(s, "jax.numpy.clip", ss, sr_nn_int(s, 1), sr_nn_int(s, n - 1)) : NULL;
  SrVal *one = sr_nn_int(s, 1);
  /* df = fp[i] - fp[i - 1]; dx = xp[i] - xp[i - 1]; delta = x - xp[i - 1] */
  SrVal *fpi = idx(s, fp, i);
  SrVal *df = fpi ? sr_nn_op(s, SR_OP_SUB, fpi, idx(s, fp, sr_nn_op(s, SR_OP_SUB, i, one))) : NULL;
  SrVal *xpi = df ? idx(s, xp, i) : NULL;
  SrVal *dx = xpi ? sr_nn_op(s, SR_OP_SUB, xpi, idx(s, xp, sr_nn_op(s, SR_OP_SUB, i, one))) : NULL;
  SrVal *delta = dx ? sr_nn_op(s, SR_OP_SUB, x, idx(s, xp, sr_nn_op(s, SR_OP_SUB, i, one))) : NULL;
  if (!delta) return sr_nn_done(s, NULL);
  /* epsilon = np.spacing(np.finfo(xp.dtype).eps): eps * eps */
  SrDtype xdt = type_of(s, xp)->dtype;
  int mant = xdt == SR_F64 ? 52 : xdt == SR_F16 ? 10 : xdt == SR_BF16 ? 7 : 23;
  SrVal *eps = sr_nn_typed_scalar(s, ldexp(1.0, -2 * mant), xdt);
  SrVal *dx0 = eps ? sr_nn_op(s, SR_OP_LE, KEEP(sr_lax_unary(I, SR_P_abs, dx)), eps) : NULL;
  /* f = where(dx0, fp[i - 1], fp[i - 1] + (delta / where(dx0, 1, dx)) * df) */
  SrVal *f1 = dx0 ? idx(s, fp, sr_nn_op(s, SR_OP_SUB, i, one)) : NULL;
  SrVal *f2 = f1 ? idx(s, fp, sr_nn_op(s, SR_OP_SUB, i, one)) : NULL;
  SrVal *w = f2 ? sr_nn_call3(s, "jax.numpy.where", dx0, one, dx) : NULL;
  SrVal *t = w ? sr_nn_op(s, SR_OP_MUL, sr_nn_op(s, SR_OP_DIV, delta, w), df) : NULL;
  SrVal *f = t ? sr_nn_call3(s, "jax.numpy.where", dx0, f1, sr_nn_op(s, SR_OP_ADD, f2, t)) : NULL;
  if (f && d->left != EDGE_EXTRAPOLATE) {
    SrVal *la = left ? left : idx(s, fp, sr_nn_int(s, 0));
    if (la && !d->period) f = sr_nn_call3(s, "jax.numpy.where", sr_nn_op(s, SR_OP_LT, x, idx(s, xp, sr_nn_int(s, 0))), la, f);
    else if (!la) f = NULL;
  }
  if (f && d->right != EDGE_EXTRAPOLATE) {
    SrVal *ra = right ? right : idx(s, fp, sr_nn_int(s, -1));
    if (ra && !d->period) f = sr_nn_call3(s, "jax.numpy.where", sr_nn_op(s, SR_OP_GT, x, idx(s, xp, sr_nn_int(s, -1))), ra, f);
    else if (!ra) f = NULL;
  }
  return sr_nn_done(s, f);
}

/* left= / right=: None, 'extrapolate' (static), or a value (traced) */
static int edge_arg(SrInterp *I, SrVal *v, const char *name, int *kind) {
  *kind = EDGE_NONE;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind != SR_V_STR) {
    *kind = EDGE_VALUE;
    return 0;
  }
  if (strcmp(v->str.s, "extrapolate")) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    sr_raise(I, "ValueError", "the only valid string value of `%s` is 'extrapolate', but got: %s", name, b.p);
    sr_buf_free(&b);
    return -1;
  }
  *kind = EDGE_EXTRAPOLATE;
  return 0;
}

/* interp(x, xp, fp, left=None, right=None, period=None) */
static SrVal *jnp_interp(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "interp", "x, xp, fp, left=, right=, period=", p) < 0) return NULL;
  InterpData d = {0, 0, sr_nn_given(p[5])};
  if (edge_arg(I, p[3], "left", &d.left) < 0 || edge_arg(I, p[4], "right", &d.right) < 0) return NULL;
  SrVal *args[6] = {p[0], p[1], p[2]};
  int n = 3;
  if (d.left == EDGE_VALUE) args[n++] = p[3];
  if (d.right == EDGE_VALUE) args[n++] = p[4];
  if (d.period) args[n++] = p[5];
  InterpData *c = sr_xmalloc(sizeof *c);
  *c = d;
  return sr_api_jit(I, "_interp", interp_body, c, n, args);
}

void sr_jnp_searchsorted_init(void) {
  sr_def("jax.numpy.searchsorted", jnp_searchsorted,
         "searchsorted(a, v, side='left', sorter=None, *, method='scan'): insertion indices of v in the sorted a, "
         "jit[name=searchsorted]");
  sr_def("jax.numpy.digitize", jnp_digitize,
         "digitize(x, bins, right=False, *, method=None): the bin of each x, by searchsorted, jit[name=digitize]");
  sr_def("jax.numpy.interp", jnp_interp,
         "interp(x, xp, fp, left=None, right=None, period=None): one-dimensional linear interpolation, "
         "jit[name=_interp]");
}
