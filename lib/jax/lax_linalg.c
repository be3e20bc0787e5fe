/* lax_linalg.c: jax.lax.linalg's qr and svd (lax/linalg.py: one qr_p /
 * svd_p equation each) and what jax.numpy.linalg (numpy/linalg.py) builds
 * on them: qr (modes reduced, complete, r), svd, svdvals and matrix_norm,
 * in the jits JAX's jit-decorated functions are, with JAX's QRResult and
 * SVDResult named tuples.  The primitives' rules are in lax/linalg.c.
 * Registered by sr_lax_linalg_api_init (jax.h). */
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "util/intern.h"

static int given(SrVal *v) { return v && v->kind != SR_V_NONE; }

static int flag_arg(SrInterp *I, SrVal *v, int dflt, const char *what, int *out) {
  *out = dflt;
  if (!v) return 0;
  if (v->kind == SR_V_BOOL || v->kind == SR_V_INT) {
    *out = v->i != 0;
    return 0;
  }
  sr_raise(I, "TypeError", "%s must be a bool", what);
  return -1;
}

/* qr_p.bind(x, pivoting=, full_matrices=, use_magma=): the tuple (q, r[, p]) */
static SrVal *bind_qr(SrInterp *I, SrVal *x, int pivoting, int full, SrVal *use_magma) {
  return sr_bindv(I, SR_P_qr, 1, &x, "pivoting", sr_bool(pivoting), "full_matrices", sr_bool(full), "use_magma",
                  use_magma ? sr_ref(use_magma) : sr_none(), NULL);
}

/* svd_p.bind(x, full_matrices=, compute_uv=, subset_by_index=, algorithm=):
   (s, u, vt), or (s,) */
static SrVal *bind_svd(SrInterp *I, SrVal *x, int full, int uv, SrVal *subset, SrVal *algorithm) {
  return sr_bindv(I, SR_P_svd, 1, &x, "full_matrices", sr_bool(full), "compute_uv", sr_bool(uv), "subset_by_index",
                  given(subset) ? sr_ref(subset) : sr_none(), "algorithm",
                  given(algorithm) ? sr_ref(algorithm) : sr_none(), NULL);
}

/* the items of a bound tuple reordered: (s, u, vt) -> (u, s, vt) */
static SrVal *svd_result(SrVal *r, int uv) {
  if (!r) return NULL;
  if (!uv) return sr_op_first(r);
  SrVal *it[3] = {sr_ref(r->seq.items[1]), sr_ref(r->seq.items[0]), sr_ref(r->seq.items[2])};
  sr_unref(r);
  return sr_tuple(NULL, 3, it);
}

/* jax.lax.linalg.qr(x, *, pivoting=False, full_matrices=True, use_magma=None) */
static SrVal *lax_qr(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "qr", "x, *, pivoting=, full_matrices=, use_magma=", p) < 0) return NULL;
  int piv, full;
  if (flag_arg(I, p[1], 0, "pivoting", &piv) < 0 || flag_arg(I, p[2], 1, "full_matrices", &full) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? bind_qr(I, x, piv, full, given(p[3]) ? p[3] : NULL) : NULL;
  sr_unref(x);
  return r;
}

/* jax.lax.linalg.svd(x, *, full_matrices=True, compute_uv=True,
   subset_by_index=None, algorithm=None): (u, s, vt), or s */
static SrVal *lax_svd(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "svd", "x, *, full_matrices=, compute_uv=, subset_by_index=, algorithm=", p) < 0)
    return NULL;
  int full, uv;
  if (flag_arg(I, p[1], 1, "full_matrices", &full) < 0 || flag_arg(I, p[2], 1, "compute_uv", &uv) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? svd_result(bind_svd(I, x, full, uv, p[3], p[4]), uv) : NULL;
  sr_unref(x);
  return r;
}

/* jax.lax.linalg.triangular_solve(a, b, *, left_side=False, lower=False,
   transpose_a=False, conjugate_a=False, unit_diagonal=False): one
   triangular_solve equation; a b of one dimension fewer than a is a
   vector (expand_dims, then the result's index 0) */
static SrVal *lax_triangular_solve(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "triangular_solve", "a, b, *, left_side=, lower=, transpose_a=, conjugate_a=, unit_diagonal=",
                    p) < 0)
    return NULL;
  int f[5];
  static const char *const names[5] = {"left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal"};
  for (int i = 0; i < 5; i++)
    if (flag_arg(I, p[2 + i], 0, names[i], &f[i]) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1), *y = x ? sr_jnp_asarray(I, p[1], -1) : NULL;
  if (!y) {
    sr_unref(x);
    return NULL;
  }
  const SrType *xt = sr_value_type(I, x), *yt = sr_value_type(I, y);
  if (f[3] && xt->dtype != SR_C64 && xt->dtype != SR_C128) f[3] = 0;
  int single = yt->ndim == xt->ndim - 1;
  SrVal *r = NULL;
  if (single) {
    int64_t d = f[0] ? yt->ndim : yt->ndim - 1;
    SrVal *e = sr_lax_expand_dims(I, y, &d, 1);
    sr_unref(y);
    y = e;
  }
  if (y) {
    SrVal *in[2] = {x, y};
    r = sr_bindv(I, SR_P_triangular_solve, 2, in, "left_side", sr_bool(f[0]), "lower", sr_bool(f[1]), "transpose_a",
                 sr_bool(f[2]), "conjugate_a", sr_bool(f[3]), "unit_diagonal", sr_bool(f[4]), NULL);
  }
  if (r && single) {
    const SrType *rt = sr_value_type(I, r);
    int64_t dim = f[0] ? rt->ndim - 1 : rt->ndim - 2;
    SrVal *sq = sr_lax_squeeze(I, r, &dim, 1);
    sr_unref(r);
    r = sq;
  }
  sr_unref(x);
  sr_unref(y);
  return r;
}

/* An instance of a NamedTuple class NAME with fields FIELDS (a space
   separated list), items stolen. */
static SrVal *named_result(SrInterp *I, const char *name, const char *fields, int n, SrVal **items) {
  SrVal *nt = sr_lookup_qualname("collections.namedtuple");
  SrVal *r = NULL;
  if (nt) {
    SrVal *args[2] = {sr_str(NULL, name, strlen(name)), sr_str(NULL, fields, strlen(fields))};
    SrArgs ca = {2, args, 0, NULL, NULL, NULL};
    SrVal *cls = sr_call(I, nt, &ca);
    if (cls) {
      SrArgs ia = {n, items, 0, NULL, NULL, NULL};
      r = sr_call(I, cls, &ia);
    }
    sr_unref(cls);
    sr_unref(args[0]);
    sr_unref(args[1]);
  } else {
    sr_raise(I, "RuntimeError", "internal error: no collections.namedtuple");
  }
  for (int i = 0; i < n; i++) sr_unref(items[i]);
  return r;
}

/* one promoted operand: promote_dtypes_inexact(ensure_arraylike(a)) */
static SrVal *inexact(SrInterp *I, SrVal *v, const char *fname) {
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  SrVal *x = sr_nn_keep(s, sr_jnp_asarray(I, v, -1));
  if (x && sr_nn_promote_inexact(s, 1, &x, fname) < 0) x = NULL;
  return sr_nn_done(s, x);
}

typedef struct QrMode {
  int full, r_only, raw;
} QrMode;

/* mode='raw': geqrf's (a, taus), a with its last two axes swapped */
static SrVal *qr_raw(SrInterp *I, SrVal *x) {
  SrVal *t = sr_bindv(I, SR_P_geqrf, 1, &x, NULL);
  if (!t) return NULL;
  const SrType *at = sr_value_type(I, t->seq.items[0]);
  int64_t perm[SR_MAX_RANK];
  for (int i = 0; i < at->ndim; i++) perm[i] = i;
  perm[at->ndim - 2] = at->ndim - 1;
  perm[at->ndim - 1] = at->ndim - 2;
  SrVal *h = sr_lax_transpose(I, t->seq.items[0], perm, at->ndim);
  SrVal *it[2] = {h, h ? sr_ref(t->seq.items[1]) : NULL};
  sr_unref(t);
  return h ? named_result(I, "QRResult", "Q R", 2, it) : NULL;
}

static SrVal *qr_body(SrInterp *I, SrArgs *a) {
  QrMode *m = sr_current_builtin(I)->data;
  SrVal *x = inexact(I, a->v[0], "jnp.linalg.qr");
  if (x && m->raw) {
    SrVal *r = qr_raw(I, x);
    sr_unref(x);
    return r;
  }
  SrVal *t = x ? bind_qr(I, x, 0, m->full, NULL) : NULL;
  sr_unref(x);
  if (!t) return NULL;
  SrVal *r;
  if (m->r_only) {
    r = sr_ref(t->seq.items[1]);
  } else {
    SrVal *it[2] = {sr_ref(t->seq.items[0]), sr_ref(t->seq.items[1])};
    r = named_result(I, "QRResult", "Q R", 2, it);
  }
  sr_unref(t);
  return r;
}

/* jnp.linalg.qr(a, mode='reduced'): jit[name=qr] */
static SrVal *jnp_qr(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "qr", "a, mode=", p) < 0) return NULL;
  const char *mode = "reduced";
  size_t ml = 7;
  if (p[1]) {
    if (p[1]->kind != SR_V_STR) return sr_raise(I, "TypeError", "mode must be a str");
    mode = p[1]->str.s;
    ml = p[1]->str.n;
  }
  QrMode qm = {0, 0, 0};
#define IS(s) (ml == strlen(s) && !memcmp(mode, s, ml))
  if (IS("raw")) qm.raw = 1;
  else if (IS("reduced") || IS("r") || IS("full")) qm.r_only = IS("r");
  else if (IS("complete")) qm.full = 1;
  else return sr_raise(I, "ValueError", "Unsupported QR decomposition mode '%.*s'", (int)ml, mode);
#undef IS
  QrMode *d = sr_xmalloc(sizeof *d);
  *d = qm;
  return sr_api_jit(I, "qr", qr_body, d, 1, &p[0]);
}

typedef struct SvdMode {
  int full, uv;
} SvdMode;

static SrVal *svd_body(SrInterp *I, SrArgs *a) {
  SvdMode *m = sr_current_builtin(I)->data;
  SrVal *x = inexact(I, a->v[0], "jnp.linalg.svd");
  SrVal *t = x ? bind_svd(I, x, m->full, m->uv, NULL, NULL) : NULL;
  sr_unref(x);
  if (!t || !m->uv) return t ? sr_op_first(t) : NULL;
  SrVal *it[3] = {sr_ref(t->seq.items[1]), sr_ref(t->seq.items[0]), sr_ref(t->seq.items[2])};
  sr_unref(t);
  return named_result(I, "SVDResult", "U S Vh", 3, it);
}

static SrVal *call_svd(SrInterp *I, SrVal *x, int full, int uv) {
  SvdMode *d = sr_xmalloc(sizeof *d);
  d->full = full;
  d->uv = uv;
  return sr_api_jit(I, "svd", svd_body, d, 1, &x);
}

/* jnp.linalg.svd(a, full_matrices=True, compute_uv=True, hermitian=False,
   subset_by_index=None): jit[name=svd] */
static SrVal *jnp_svd(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "svd", "a, full_matrices=, compute_uv=, hermitian=, subset_by_index=", p) < 0) return NULL;
  int full, uv, herm;
  if (flag_arg(I, p[1], 1, "full_matrices", &full) < 0 || flag_arg(I, p[2], 1, "compute_uv", &uv) < 0 ||
      flag_arg(I, p[3], 0, "hermitian", &herm) < 0)
    return NULL;
  if (herm && given(p[4])) return sr_raise(I, "NotImplementedError", "subset_by_index not supported on CPU and GPU");
  if (herm) return sr_linalg16_svd_hermitian(I, p[0], uv);
  if (given(p[4])) return sr_raise(I, "NotImplementedError", "jnp.linalg.svd's subset_by_index is only on TPU");
  return call_svd(I, p[0], full, uv);
}

/* jnp.linalg.svdvals(x, /): svd(x, compute_uv=False, hermitian=False) */
static SrVal *jnp_svdvals(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "svdvals", "x", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = x ? call_svd(I, x, 1, 0) : NULL;
  sr_unref(x);
  return r;
}

/* jnp.linalg.matrix_norm(x, /, *, keepdims=False, ord='fro'):
   norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1)) */
static SrVal *jnp_matrix_norm(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "matrix_norm", "x, *, keepdims=, ord=", p) < 0) return NULL;
  SrVal *ax[2] = {sr_int(NULL, -2), sr_int(NULL, -1)};
  const char *kw[3] = {sr_intern_cstr("ord"), sr_intern_cstr("keepdims"), sr_intern_cstr("axis")};
  SrVal *kwv[3] = {p[2] ? sr_ref(p[2]) : sr_str(NULL, "fro", 3), p[1] ? sr_ref(p[1]) : sr_bool(0),
                   sr_tuple(NULL, 2, ax)};
  SrVal *f = sr_lookup_qualname("jax.numpy.linalg.norm");
  SrVal *r = NULL;
  if (f) {
    SrArgs ca = {1, &p[0], 3, kw, kwv, NULL};
    r = sr_call(I, f, &ca);
  }
  for (int i = 0; i < 3; i++) sr_unref(kwv[i]);
  return r;
}

/* jnp.linalg.matrix_transpose(x, /): one transpose of the last two axes
   (jnp.matrix_transpose is numpy_apiB.c's; their messages differ) */
static SrVal *matrix_transpose(SrInterp *I, SrArgs *a, const char *fmt) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "matrix_transpose", "x", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  int nd = sr_value_type(I, x)->ndim;
  SrVal *r = NULL;
  if (nd < 2) {
    sr_raise(I, "ValueError", fmt, nd);
  } else {
    int64_t perm[SR_MAX_RANK];
    for (int i = 0; i < nd; i++) perm[i] = i;
    perm[nd - 2] = nd - 1;
    perm[nd - 1] = nd - 2;
    r = sr_lax_transpose(I, x, perm, nd);
  }
  sr_unref(x);
  return r;
}

static SrVal *jnp_linalg_matrix_transpose(SrInterp *I, SrArgs *a) {
  return matrix_transpose(I, a, "matrix_transpose requires at least 2 dimensions; got ndim=%d");
}

/* jnp.linalg.diagonal(x, /, *, offset=0): jnp.diagonal(x, offset=offset,
   axis1=-2, axis2=-1) */
static SrVal *jnp_linalg_diagonal(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "diagonal", "x, *, offset=", p) < 0) return NULL;
  SrVal *f = sr_lookup_qualname("jax.numpy.diagonal");
  if (!f) return sr_raise(I, "RuntimeError", "internal error: no jax.numpy.diagonal");
  const char *kw[3] = {sr_intern_cstr("offset"), sr_intern_cstr("axis1"), sr_intern_cstr("axis2")};
  SrVal *kwv[3] = {p[1] ? sr_ref(p[1]) : sr_int(NULL, 0), sr_int(NULL, -2), sr_int(NULL, -1)};
  SrArgs ca = {1, &p[0], 3, kw, kwv, NULL};
  SrVal *r = sr_call(I, f, &ca);
  for (int i = 0; i < 3; i++) sr_unref(kwv[i]);
  return r;
}

/* ---- jax.random.orthogonal (random/core.py) ---- */

typedef struct Orth {
  int64_t n, m, shape[SR_MAX_RANK];
  int nd;
  SrDtype dt;
} Orth;

/* _orthogonal(key, n, _m, shape, dtype), a jit: z = normal(key, (*shape,
   max(n, m), min(n, m)), dtype); q, r = jnp.linalg.qr(z); q times
   expand_dims(sign(diagonal(r)), -2), transposed (.mT) when n < m */
static SrVal *orth_body(SrInterp *I, SrArgs *a) {
  Orth *o = sr_current_builtin(I)->data;
  SrNnScope s_ = {I, {0}, 0}, *s = &s_;
  int64_t sh[SR_MAX_RANK + 2];
  memcpy(sh, o->shape, (size_t)o->nd * sizeof *sh);
  sh[o->nd] = o->n > o->m ? o->n : o->m;
  sh[o->nd + 1] = o->n > o->m ? o->m : o->n;
  SrVal *nv[3] = {a->v[0], sr_nn_keep(s, sr_int_tuple(sh, o->nd + 2)), sr_nn_keep(s, sr_dtype_val(NULL, o->dt))};
  SrVal *z = sr_nn_call(s, "jax.random.normal", 3, nv, 0, NULL, NULL);
  SrVal *qr = z ? sr_nn_call1(s, "jax.numpy.linalg.qr", z) : NULL;
  if (!qr) return sr_nn_done(s, NULL);
  SrVal *q = sr_nn_keep(s, sr_getitem(I, qr, sr_nn_int(s, 0)));
  SrVal *r = q ? sr_nn_keep(s, sr_getitem(I, qr, sr_nn_int(s, 1))) : NULL;
  SrVal *d = sr_nn_call1(s, "jax.numpy.linalg.diagonal", r);
  SrVal *e = sr_nn_call2(s, "jax.numpy.expand_dims", sr_nn_call1(s, "jax.numpy.sign", d), sr_nn_int(s, -2));
  SrVal *x = sr_nn_op(s, SR_OP_MUL, q, e);
  if (o->n < o->m) x = sr_nn_call1(s, "jax.numpy.matrix_transpose", x);
  return sr_nn_done(s, x);
}

/* _check_prng_key: a typed key as it is, raw key data wrapped
   (jax.random.wrap_key_data checks it); a new reference */
static SrVal *prng_key(SrInterp *I, SrVal *key) {
  const SrType *t = sr_value_type(I, key);
  if (!t) return sr_raise(I, "TypeError", "unexpected PRNG key type <class '%s'>", sr_val_kind_name(key));
  if (strncmp(sr_dtype_name(t->dtype), "key<", 4) == 0) return sr_ref(key);
  SrVal *fn = sr_lookup_qualname("jax.random.wrap_key_data");
  SrArgs a = {1, &key, 0, NULL, NULL, NULL};
  return fn ? sr_call(I, fn, &a) : NULL;
}

/* jax.random.orthogonal(key, n, shape=(), dtype=None, m=None, *,
   out_sharding=None) */
static SrVal *random_orthogonal(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "orthogonal", "key, n, shape=, dtype=, m=, *, out_sharding=", p) < 0) return NULL;
  Orth o;
  memset(&o, 0, sizeof o);
  int dt = -1;
  if (sr_as_int(I, p[1], "n", &o.n) < 0) return NULL;
  o.m = o.n;
  if (given(p[4]) && sr_as_int(I, p[4], "m", &o.m) < 0) return NULL;
  if (given(p[2]) && sr_shape_arg(I, p[2], o.shape, &o.nd, "shape") < 0) return NULL;
  if (sr_dtype_arg(I, p[3], &dt, "orthogonal") < 0) return NULL;
  o.dt = dt < 0 ? (I->jax->enable_x64 ? SR_F64 : SR_F32) : (SrDtype)dt;
  if (given(p[5]))
    return sr_raise(I, "NotImplementedError", "jax.random.orthogonal with out_sharding is not supported yet");
  SrVal *k = prng_key(I, p[0]);
  if (!k) return NULL;
  const SrType *kt = sr_value_type(I, k);
  if (kt && kt->ndim) {
    sr_unref(k);
    return sr_raise(I, "ValueError",
                    "orthogonal accepts a single key, but was given a key array of shape %s != (). Use jax.vmap for "
                    "batching.",
                    "(...)");
  }
  Orth *d = sr_xmalloc(sizeof *d);
  *d = o;
  SrVal *r = sr_api_jit(I, "_orthogonal", orth_body, d, 1, &k);
  sr_unref(k);
  return r;
}

void sr_lax_linalg_api_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.lax.linalg.qr", lax_qr,
       "qr(x, *, pivoting=False, full_matrices=True, use_magma=None): (q, r), one qr equation (LAPACK's geqrf, orgqr)"},
      {"jax.lax.linalg.svd", lax_svd,
       "svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None): (u, s, vt) or s, one svd "
       "equation (LAPACK's gesdd)"},
      {"jax.lax.linalg.triangular_solve", lax_triangular_solve,
       "triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False, "
       "unit_diagonal=False): x with op(a) x = b or x op(a) = b, a triangular (BLAS's trsm)"},
      {"jax.numpy.linalg.qr", jnp_qr,
       "qr(a, mode='reduced'): jit[name=qr], QRResult(Q, R) (mode 'reduced' or 'complete') or R (mode 'r')"},
      {"jax.numpy.linalg.svd", jnp_svd,
       "svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None): jit[name=svd], "
       "SVDResult(U, S, Vh) or S"},
      {"jax.numpy.linalg.svdvals", jnp_svdvals, "svdvals(x, /): the singular values, svd(x, compute_uv=False)"},
      {"jax.numpy.linalg.matrix_norm", jnp_matrix_norm,
       "matrix_norm(x, /, *, keepdims=False, ord='fro'): norm over the last two axes"},
      {"jax.numpy.linalg.matrix_transpose", jnp_linalg_matrix_transpose,
       "matrix_transpose(x, /): the last two axes swapped"},
      {"jax.numpy.linalg.diagonal", jnp_linalg_diagonal,
       "diagonal(x, /, *, offset=0): jnp.diagonal over the last two axes"},
      {"jax.random.orthogonal", random_orthogonal,
       "orthogonal(key, n, shape=(), dtype=None, m=None): jit[name=_orthogonal], Q of normal's QR, signs of diag(R)"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
