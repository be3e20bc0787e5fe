/* linalg16.c: jax.lax.linalg's cholesky, lu, lu_pivots_to_permutation and
 * eigh (one equation each, lax/linalg.py), what jax.numpy.linalg
 * (numpy/linalg.py) builds on them -- cholesky, eigh, eigvalsh, slogdet
 * (with its custom_jvp, _slogdet_jvp), det, solve, inv, matrix_power,
 * multi_dot, pinv, lstsq, matrix_rank, cond, tensorinv, tensorsolve,
 * outer, cross, matmul, trace -- and jax.scipy.linalg's cholesky,
 * cho_factor, cho_solve, solve_triangular, solve, inv, det, lu,
 * lu_factor, lu_solve, eigh, qr, svd and block_diag, in the jits JAX's
 * jit-decorated functions are.
 *
 * solve is lu of a, the permutation applied as a product with its one-hot
 * matrix, and two triangular solves (lax_linalg._lu_solve_core); JAX
 * wraps the same in custom_linear_solve (not done here), so the values and
 * gradients are JAX's, the printed jaxpr is not.  det's 2x2 and 3x3
 * formulas are JAX's; larger ones are sign * exp(logdet) of slogdet, whose
 * custom_jvp is JAX's (trace(solve(x, g))), where JAX's _det has its own
 * custom_jvp through _cofactor_solve.  Registered by sr_linalg16_api_init
 * (jax.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, v)
#define DONE(v) sr_nn_done(s, v)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define INT(i) sr_nn_int(s, i)
#define BOOL(b) KEEP(sr_bool(b))

#define MAXI(a, b) ((a) > (b) ? (a) : (b))

static int given(SrVal *v) { return v && v->kind != SR_V_NONE; }

static int flag(SrInterp *I, SrVal *v, int dflt, const char *what, int *out) {
  *out = dflt;
  if (!v) return 0;
  if (v->kind == SR_V_BOOL || v->kind == SR_V_INT) {
    *out = v->i != 0;
    return 0;
  }
  sr_raise(I, "TypeError", "%s must be a bool", what);
  return -1;
}

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }

/* a shape as Python prints a tuple */
static const char *shape_str(char *buf, size_t n, const SrType *t) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, n - k, "(");
  for (int i = 0; i < t->ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)t->dims[i].size);
  if (k < n) snprintf(buf + k, n - k, t->ndim == 1 ? ",)" : ")");
  return buf;
}

/* kw-call q(args..., k0=v0, k1=v1, ...) in the scope; NULL kw values left out */
static SrVal *kcall(SrNnScope *s, const char *q, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv) {
  return sr_nn_call(s, q, n, v, nkw, kw, kwv);
}

/* x.mT: the last two axes swapped */
static SrVal *mT(SrNnScope *s, SrVal *x) {
  const SrType *t = ty(s->I, x);
  if (!t) return NULL;
  /* lax_linalg._T: (*range(ndim - 2), ndim - 1, ndim - 2), which for a
     rank below 2 is transpose's error */
  int64_t perm[SR_MAX_RANK + 2];
  int n = t->ndim < 2 ? 2 : t->ndim;
  for (int i = 0; i < n - 2; i++) perm[i] = i;
  perm[n - 2] = t->ndim - 1;
  perm[n - 1] = t->ndim - 2;
  return KEEP(sr_lax_transpose(s->I, x, perm, n));
}

/* one promoted operand, promote_dtypes_inexact(ensure_arraylike(a)) */
static SrVal *inexact1(SrNnScope *s, SrVal *v, const char *fname) {
  SrVal *x = v;
  return sr_nn_promote_inexact(s, 1, &x, fname) < 0 ? NULL : x;
}

/* the item i of a tuple value, kept */
static SrVal *item(SrNnScope *s, SrVal *t, int i) {
  if (!t) return NULL;
  if (sr_is_seq(t) && t->seq.n > (uint32_t)i) return t->seq.items[i];
  return KEEP(sr_getitem(s->I, t, INT(i))); /* a named tuple */
}

static SrVal *tuple_of(int n, SrVal **items) {
  SrVal *it[4];
  for (int i = 0; i < n; i++) {
    if (!items[i]) return NULL;
    it[i] = sr_ref(items[i]);
  }
  return sr_tuple(NULL, n, it);
}

/* An instance of a NamedTuple class NAME with fields FIELDS (new refs of items) */
static SrVal *named(SrInterp *I, const char *name, const char *fields, int n, SrVal **items) {
  for (int i = 0; i < n; i++)
    if (!items[i]) return NULL;
  SrVal *nt = sr_lookup_qualname("collections.namedtuple");
  if (!nt) return sr_raise(I, "RuntimeError", "internal error: no collections.namedtuple");
  SrVal *args[2] = {sr_str(NULL, name, strlen(name)), sr_str(NULL, fields, strlen(fields))};
  SrArgs ca = {2, args, 0, NULL, NULL, NULL};
  SrVal *cls = sr_call(I, nt, &ca), *r = NULL;
  if (cls) {
    SrArgs ia = {n, items, 0, NULL, NULL, NULL};
    r = sr_call(I, cls, &ia);
  }
  sr_unref(cls);
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

/* ---- the lax.linalg primitives ---- */

/* symmetrize(x): (x + _H(x)) / 2 */
/* lax_linalg.symmetrize: (x + _H(x)) / 2, _H the conjugate transpose */
static SrVal *symmetrize(SrNnScope *s, SrVal *x) {
  const SrType *t = ty(s->I, x);
  SrVal *h = mT(s, x);
  if (h && t && sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) h = sr_nn_call1(s, "jax.lax.conj", h);
  return OP(DIV, OP(ADD, x, h), sr_nn_float(s, 2.0));
}

/* lax_linalg's _tril(m, k) / _triu(m, k), inline: select(broadcast(
   lax._tri(bool, (N, M), k or k - 1), batch), m, full_like(m, 0)) */
static SrVal *tri_sel(SrNnScope *s, SrVal *x, int k, int upper) {
  const SrType *t = ty(s->I, x);
  if (!t) return NULL;
  int nd = t->ndim;
  SrVal *v[3] = {INT(t->dims[nd - 2].size), INT(t->dims[nd - 1].size), INT(upper ? k - 1 : k)};
  SrVal *bt = KEEP(sr_dtype_val(NULL, SR_BOOL));
  const char *dk[1] = {"dtype"};
  SrVal *mask = sr_nn_call(s, "jax.numpy.tri", 3, v, 1, dk, &bt);
  int64_t shape[SR_MAX_RANK], dims[2] = {nd - 2, nd - 1};
  for (int i = 0; i < nd; i++) shape[i] = t->dims[i].size;
  SrVal *which = mask ? KEEP(sr_lax_broadcast_in_dim(s->I, mask, shape, nd, dims, 2, NULL)) : NULL;
  SrVal *z = which ? sr_nn_full_like(s, x, INT(0)) : NULL;
  return z ? KEEP(upper ? sr_lax_select(s->I, which, z, x) : sr_lax_select(s->I, which, x, z)) : NULL;
}
static SrVal *tril(SrNnScope *s, SrVal *x, int k) { return tri_sel(s, x, k, 0); }
static SrVal *triu(SrNnScope *s, SrVal *x, int k) { return tri_sel(s, x, k, 1); }

/* lax_linalg.cholesky(x, symmetrize_input=): _tril(cholesky_p.bind(x)) */
static SrVal *chol(SrNnScope *s, SrVal *x, int sym) {
  if (x && sym) x = symmetrize(s, x);
  SrVal *l = x ? KEEP(sr_bindv(s->I, SR_P_cholesky, 1, &x, NULL)) : NULL;
  return l ? tril(s, l, 0) : NULL;
}

/* lu_p.bind(x): the tuple (lu, pivots, permutation) */
static SrVal *lu3(SrNnScope *s, SrVal *x) { return x ? KEEP(sr_bindv(s->I, SR_P_lu, 1, &x, NULL)) : NULL; }

/* lax_linalg.eigh: (v, w) */
static SrVal *eigh2(SrNnScope *s, SrVal *x, int lower, int sym, int sort, SrVal *subset, SrVal *impl) {
  if (x && sym) x = symmetrize(s, x);
  return x ? KEEP(sr_bindv(s->I, SR_P_eigh, 1, &x, "lower", sr_bool(lower), "sort_eigenvalues", sr_bool(sort),
                           "subset_by_index", given(subset) ? sr_ref(subset) : sr_none(), "algorithm",
                           given(impl) ? sr_ref(impl) : sr_none(), NULL))
           : NULL;
}

/* lax_linalg.triangular_solve(a, b, left_side=, lower=, transpose_a=, unit_diagonal=) */
static SrVal *trisolve(SrNnScope *s, SrVal *a, SrVal *b, int left, int lower, int trans, int unit) {
  SrVal *v[2] = {a, b};
  const char *kw[4] = {"left_side", "lower", "transpose_a", "unit_diagonal"};
  SrVal *kv[4] = {BOOL(left), BOOL(lower), BOOL(trans), BOOL(unit)};
  return kcall(s, "jax.lax.linalg.triangular_solve", 2, v, 4, kw, kv);
}

static SrVal *lax_cholesky(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int sym;
  if (sr_args_parse(I, a, "cholesky", "x, *, symmetrize_input=", p) < 0 ||
      flag(I, p[1], 1, "symmetrize_input", &sym) < 0)
    return NULL;
  SCOPE(I);
  return DONE(chol(s, KEEP(sr_jnp_asarray(I, p[0], -1)), sym));
}

static SrVal *lax_lu(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "lu", "x", p) < 0) return NULL;
  SCOPE(I);
  return DONE(lu3(s, KEEP(sr_jnp_asarray(I, p[0], -1))));
}

static SrVal *lax_lu_pivots(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int64_t size;
  if (sr_args_parse(I, a, "lu_pivots_to_permutation", "pivots, permutation_size", p) < 0 ||
      sr_as_int(I, p[1], "permutation_size", &size) < 0)
    return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  return DONE(x ? KEEP(sr_bindv(I, SR_P_lu_pivots_to_permutation, 1, &x, "permutation_size", sr_int(NULL, size), NULL))
                : NULL);
}

static SrVal *lax_eigh(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  int lower, sym, sort;
  if (sr_args_parse(I, a, "eigh", "x, *, lower=, symmetrize_input=, sort_eigenvalues=, subset_by_index=, implementation=",
                    p) < 0 ||
      flag(I, p[1], 1, "lower", &lower) < 0 || flag(I, p[2], 1, "symmetrize_input", &sym) < 0 ||
      flag(I, p[3], 1, "sort_eigenvalues", &sort) < 0)
    return NULL;
  SCOPE(I);
  SrVal *r = eigh2(s, KEEP(sr_jnp_asarray(I, p[0], -1)), lower, sym, sort, p[4], p[5]);
  return DONE(r);
}

/* lax_linalg.eig(x, *, compute_left_eigenvectors=True,
   compute_right_eigenvectors=True, enable_eigvec_derivs=False,
   implementation=None, use_magma=None): [w, vl, vr] as asked */
static SrVal *eig_bind(SrNnScope *s, SrVal *x, int left, int right, int derivs, SrVal *impl) {
  if (!x) return NULL;
  SrVal *r = KEEP(sr_bindv(s->I, SR_P_eig, 1, &x, "compute_left_eigenvectors", sr_bool(left),
                           "compute_right_eigenvectors", sr_bool(right), "enable_eigvec_derivs", sr_bool(derivs),
                           "implementation", given(impl) ? sr_ref(impl) : sr_none(), NULL));
  if (!r || !sr_is_seq(r)) return r;
  SrVal *l = sr_seq(NULL, SR_V_LIST, r->seq.n);
  for (int i = 0; i < r->seq.n; i++) sr_seq_push(NULL, l, sr_ref(r->seq.items[i]));
  return KEEP(l);
}

static SrVal *lax_eig(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  int left, right, derivs;
  if (sr_args_parse(I, a, "eig",
                    "x, *, compute_left_eigenvectors=, compute_right_eigenvectors=, enable_eigvec_derivs=, "
                    "implementation=, use_magma=",
                    p) < 0 ||
      flag(I, p[1], 1, "compute_left_eigenvectors", &left) < 0 ||
      flag(I, p[2], 1, "compute_right_eigenvectors", &right) < 0 ||
      flag(I, p[3], 0, "enable_eigvec_derivs", &derivs) < 0)
    return NULL;
  SCOPE(I);
  return DONE(eig_bind(s, KEEP(sr_jnp_asarray(I, p[0], -1)), left, right, derivs, p[4]));
}

/* ---- jnp.linalg ---- */

typedef struct Flags {
  int f[4];
} Flags;

static void *flags(int a, int b, int c, int d) {
  Flags *f = sr_xmalloc(sizeof *f);
  f->f[0] = a, f->f[1] = b, f->f[2] = c, f->f[3] = d;
  return f;
}

static const int *cur_flags(SrInterp *I) { return ((Flags *)sr_current_builtin(I)->data)->f; }

/* cholesky(a, *, upper=False, symmetrize_input=True) */
static SrVal *cholesky_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  SrVal *l = chol(s, inexact1(s, a->v[0], "jnp.linalg.cholesky"), f[1]);
  return DONE(l && f[0] ? mT(s, l) : l);
}

static SrVal *jnp_cholesky(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  int up, sym;
  if (sr_args_parse(I, a, "cholesky", "a, *, upper=, symmetrize_input=", p) < 0 || flag(I, p[1], 0, "upper", &up) < 0 ||
      flag(I, p[2], 1, "symmetrize_input", &sym) < 0)
    return NULL;
  return sr_api_jit(I, "cholesky", cholesky_body, flags(up, sym, 0, 0), 1, &p[0]);
}

/* UPLO: None or 'L' (lower), 'U'; -1 with JAX's ValueError */
static int uplo_arg(SrInterp *I, SrVal *v, int dflt_lower) {
  if (!given(v)) return dflt_lower;
  if (v->kind == SR_V_STR && v->str.n == 1 && (v->str.s[0] == 'L' || v->str.s[0] == 'U')) return v->str.s[0] == 'L';
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  sr_raise(I, "ValueError", "UPLO must be one of None, 'L', or 'U', got %s", sr_buf_str(&b));
  sr_buf_free(&b);
  return -1;
}

static SrVal *eigh_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  SrVal *r = eigh2(s, inexact1(s, a->v[0], "jnp.linalg.eigh"), f[0], f[1], 1, NULL, NULL);
  if (!r) return DONE(NULL);
  SrVal *it[2] = {item(s, r, 1), item(s, r, 0)};
  return DONE(KEEP(named(I, "EighResult", "eigenvalues eigenvectors", 2, it)));
}

/* eigvalsh's body: w, _ = eigh(a, UPLO, symmetrize_input=) (the jit eigh) */
static SrVal *eigvalsh_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "jnp.linalg.eigvalsh");
  SrVal *v[2] = {x, KEEP(sr_str(NULL, f[0] ? "L" : "U", 1))};
  const char *kw[1] = {"symmetrize_input"};
  SrVal *kv[1] = {BOOL(f[1])};
  SrVal *r = x ? kcall(s, "jax.numpy.linalg.eigh", 2, v, 1, kw, kv) : NULL;
  return DONE(item(s, r, 0));
}

/* eig(a): EigResult(eigenvalues, eigenvectors) of lax_linalg.eig(a,
   compute_left_eigenvectors=False) (not jitted, as in JAX) */
static SrVal *jnp_eig(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "eig", "a", p) < 0) return NULL;
  SCOPE(I);
  SrVal *r = eig_bind(s, inexact1(s, p[0], "jnp.linalg.eig"), 0, 1, 0, NULL);
  if (!r) return DONE(NULL);
  SrVal *it[2] = {item(s, r, 0), item(s, r, 1)};
  return DONE(KEEP(named(I, "EigResult", "eigenvalues eigenvectors", 2, it)));
}

/* eigvals(a): @jit, lax_linalg.eig(a, no eigenvectors)[0] */
static SrVal *eigvals_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *r = eig_bind(s, inexact1(s, a->v[0], "jnp.linalg.eigvals"), 0, 0, 0, NULL);
  return DONE(r ? item(s, r, 0) : NULL);
}

static SrVal *jnp_eigvals(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "eigvals", "a", p) < 0) return NULL;
  return sr_api_jit(I, "eigvals", eigvals_body, NULL, 1, p);
}

/* eigh(a, UPLO=None, symmetrize_input=True) */
static SrVal *jnp_eigh(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  int sym;
  if (sr_args_parse(I, a, "eigh", "a, UPLO=, symmetrize_input=", p) < 0 ||
      flag(I, p[2], 1, "symmetrize_input", &sym) < 0)
    return NULL;
  int lower = uplo_arg(I, p[1], 1);
  if (lower < 0) return NULL;
  return sr_api_jit(I, "eigh", eigh_body, flags(lower, sym, 0, 0), 1, &p[0]);
}

/* eigvalsh(a, UPLO='L', *, symmetrize_input=True) */
static SrVal *jnp_eigvalsh(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  int sym;
  if (sr_args_parse(I, a, "eigvalsh", "a, UPLO=, *, symmetrize_input=", p) < 0 ||
      flag(I, p[2], 1, "symmetrize_input", &sym) < 0)
    return NULL;
  int lower = uplo_arg(I, p[1], 1);
  if (lower < 0) return NULL;
  return sr_api_jit(I, "eigvalsh", eigvalsh_body, flags(lower, sym, 0, 0), 1, &p[0]);
}

/* x[..., i, j] as JAX's static indexing lowers it: a slice, a squeeze */
static SrVal *elem(SrNnScope *s, SrVal *x, int64_t i, int64_t j) {
  const SrType *t = ty(s->I, x);
  if (!t) return NULL;
  int nd = t->ndim;
  int64_t st[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK], dims[2] = {nd - 2, nd - 1};
  for (int k = 0; k < nd; k++) lim[k] = t->dims[k].size;
  st[nd - 2] = i, lim[nd - 2] = i + 1, st[nd - 1] = j, lim[nd - 1] = j + 1;
  SrVal *sl = KEEP(sr_lax_slice(s->I, x, st, lim, NULL));
  return sl ? KEEP(sr_lax_squeeze(s->I, sl, dims, 2)) : NULL;
}

static int square_or_raise(SrInterp *I, SrVal *x, const char *fmt) {
  const SrType *t = ty(I, x);
  if (!t) return -1;
  if (t->ndim >= 2 && t->dims[t->ndim - 1].size == t->dims[t->ndim - 2].size) return 0;
  char b[256];
  sr_raise(I, "ValueError", fmt, shape_str(b, sizeof b, t));
  return -1;
}

/* _slogdet_lu(a), the primal of its custom_jvp */
static SrVal *slogdet_lu_fun(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_slogdet_lu() takes 1 positional argument");
  SCOPE(I);
  SrVal *x = a->v[0];
  const SrType *t = ty(I, x);
  if (!t) return DONE(NULL);
  SrDtype dt = t->dtype;
  int64_t n = t->dims[t->ndim - 1].size;
  SrVal *r = lu3(s, x);
  SrVal *lu = item(s, r, 0), *piv = item(s, r, 1);
  const char *dk[2] = {"axis1", "axis2"}, *ak[1] = {"axis"}, *dtk[1] = {"dtype"};
  SrVal *dv[2] = {INT(-2), INT(-1)}, *av[1] = {INT(-1)};
  SrVal *diag = kcall(s, "jax.numpy.diagonal", 1, &lu, 2, dk, dv);
  SrVal *zero = sr_nn_typed_scalar(s, 0.0, dt);
  SrVal *dz = OP(EQ, diag, zero);
  SrVal *is_zero = kcall(s, "jax.numpy.any", 1, &dz, 1, ak, av);
  SrVal *nv = INT(n), *i32 = KEEP(sr_dtype_val(NULL, SR_I32));
  SrVal *iota = kcall(s, "jax.numpy.arange", 1, &nv, 1, dtk, &i32);
  SrVal *ne = OP(NE, piv, iota);
  SrVal *parity = kcall(s, "jax.numpy.count_nonzero", 1, &ne, 1, ak, av);
  SrVal *neg = OP(LT, diag, zero);
  parity = OP(ADD, parity, kcall(s, "jax.numpy.count_nonzero", 1, &neg, 1, ak, av));
  SrVal *sgn = OP(ADD, OP(MUL, INT(-2), OP(MOD, parity, INT(2))), INT(1));
  SrVal *dtv = KEEP(sr_dtype_val(NULL, dt));
  SrVal *one = sr_nn_typed_scalar(s, 1.0, dt);
  SrVal *sgn_t = OP(MUL, one, kcall(s, "jax.numpy.asarray", 1, &sgn, 1, dtk, &dtv));
  SrVal *sign = sr_nn_call3(s, "jax.numpy.where", is_zero, zero, sgn_t);
  SrVal *lg = sr_nn_call1(s, "jax.numpy.log", sr_nn_call1(s, "jax.numpy.abs", diag));
  SrVal *sum = kcall(s, "jax.numpy.sum", 1, &lg, 1, ak, av);
  SrVal *logdet = sr_nn_call3(s, "jax.numpy.where", is_zero, sr_nn_typed_scalar(s, -INFINITY, dt), sum);
  SrVal *it[2] = {sign, logdet};
  return DONE(KEEP(tuple_of(2, it)));
}

static SrVal *slogdet_cj;

static SrVal *slogdet_jvp(SrInterp *I, SrArgs *a);

static SrVal *slogdet_lu(SrInterp *I, SrVal *x) {
  SrVal *cj = sr_nn_custom_jvp(I, &slogdet_cj, "_slogdet_lu", slogdet_lu_fun, "_slogdet_jvp", slogdet_jvp, 0);
  return cj ? sr_call1(I, cj, x) : NULL;
}

/* _slogdet_jvp: ans_dot = trace(solve(x, g)), sign_dot = 0 */
static SrVal *slogdet_jvp(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n != 1 || a->v[1]->seq.n != 1)
    return sr_raise(I, "TypeError", "_slogdet_jvp(primals, tangents) takes one primal");
  SCOPE(I);
  SrVal *x = a->v[0]->seq.items[0], *g = a->v[1]->seq.items[0];
  SrArgs fa = {1, &x, 0, NULL, NULL, NULL};
  SrVal *r = KEEP(slogdet_lu_fun(I, &fa));
  SrVal *sign = item(s, r, 0), *ans = item(s, r, 1);
  SrVal *sol = sr_nn_call2(s, "jax.numpy.linalg.solve", x, g);
  const char *tk[2] = {"axis1", "axis2"};
  SrVal *tv[2] = {INT(-1), INT(-2)};
  SrVal *ans_dot = kcall(s, "jax.numpy.trace", 1, &sol, 2, tk, tv);
  SrVal *sign_dot = sr_nn_call1(s, "jax.numpy.zeros_like", sign);
  SrVal *p[2] = {sign, ans}, *d[2] = {sign_dot, ans_dot};
  SrVal *pt = KEEP(tuple_of(2, p)), *dtup = KEEP(tuple_of(2, d));
  SrVal *both[2] = {pt, dtup};
  return DONE(KEEP(tuple_of(2, both)));
}

static SrVal *slogdet_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "jnp.linalg.slogdet");
  if (!x || square_or_raise(I, x, "Argument to slogdet() must have shape [..., n, n], got %s") < 0) return DONE(NULL);
  if (f[0]) return DONE(sr_raise(I, "NotImplementedError", "slogdet's method='qr' (geqrf) is not implemented"));
  SrVal *r = KEEP(slogdet_lu(I, x));
  SrVal *it[2] = {item(s, r, 0), item(s, r, 1)};
  return DONE(r ? KEEP(named(I, "SlogdetResult", "sign logabsdet", 2, it)) : NULL);
}

/* slogdet(a, *, method=None) */
static SrVal *jnp_slogdet(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "slogdet", "a, *, method=", p) < 0) return NULL;
  int qr = 0;
  if (given(p[1])) {
    if (p[1]->kind == SR_V_STR && p[1]->str.n == 2 && !memcmp(p[1]->str.s, "lu", 2)) qr = 0;
    else if (p[1]->kind == SR_V_STR && p[1]->str.n == 2 && !memcmp(p[1]->str.s, "qr", 2)) qr = 1;
    else {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, p[1]);
      sr_raise(I, "ValueError", "Unknown slogdet method '%s'. Supported methods are 'lu' (`None`), and 'qr'.",
               sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  }
  return sr_api_jit(I, "slogdet", slogdet_body, flags(qr, 0, 0, 0), 1, &p[0]);
}

static SrVal *det_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "jnp.linalg.det");
  if (!x || square_or_raise(I, x, "Argument to _det() must have shape [..., n, n], got %s") < 0) return DONE(NULL);
  int64_t n = ty(I, x)->dims[ty(I, x)->ndim - 1].size;
#define E(i, j) elem(s, x, i, j)
  if (n == 2) return DONE(OP(SUB, OP(MUL, E(0, 0), E(1, 1)), OP(MUL, E(0, 1), E(1, 0))));
  if (n == 3) {
    SrVal *t = OP(MUL, OP(MUL, E(0, 0), E(1, 1)), E(2, 2));
    t = OP(ADD, t, OP(MUL, OP(MUL, E(0, 1), E(1, 2)), E(2, 0)));
    t = OP(ADD, t, OP(MUL, OP(MUL, E(0, 2), E(1, 0)), E(2, 1)));
    t = OP(SUB, t, OP(MUL, OP(MUL, E(0, 2), E(1, 1)), E(2, 0)));
    t = OP(SUB, t, OP(MUL, OP(MUL, E(0, 0), E(1, 2)), E(2, 1)));
    t = OP(SUB, t, OP(MUL, OP(MUL, E(0, 1), E(1, 0)), E(2, 2)));
    return DONE(t);
  }
#undef E
  SrVal *r = KEEP(slogdet_lu(I, x));
  return DONE(OP(MUL, item(s, r, 0), sr_nn_call1(s, "jax.numpy.exp", item(s, r, 1))));
}

/* det(a) */
static SrVal *jnp_det(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "det", "a", p) < 0) return NULL;
  return sr_api_jit(I, "det", det_body, NULL, 1, &p[0]);
}

/* broadcast_to(x, batch + x.shape[-keep:]) */
static SrVal *bcast_batch(SrNnScope *s, SrVal *x, const int64_t *batch, int nb, int keep) {
  const SrType *t = ty(s->I, x);
  if (!t) return NULL;
  int64_t sh[SR_MAX_RANK];
  memcpy(sh, batch, (size_t)nb * sizeof *sh);
  for (int i = 0; i < keep; i++) sh[nb + i] = t->dims[t->ndim - keep + i].size;
  if (t->ndim == nb + keep) {
    int same = 1;
    for (int i = 0; i < nb + keep; i++) same &= t->dims[i].size == sh[i];
    if (same) return x;
  }
  return KEEP(sr_lax_broadcast_to(s->I, x, sh, nb + keep, NULL));
}

/* numpy's broadcast of two batch shapes; -1 with numpy's ValueError */
static int bshape(SrInterp *I, const SrType *x, int kx, const SrType *y, int ky, int64_t *out, int *nb) {
  int nx = x->ndim - kx, ny = y->ndim - ky, n = nx > ny ? nx : ny;
  for (int i = 0; i < n; i++) {
    int64_t a = i - (n - nx) >= 0 ? x->dims[i - (n - nx)].size : 1, b = i - (n - ny) >= 0 ? y->dims[i - (n - ny)].size : 1;
    if (a != b && a != 1 && b != 1) {
      sr_raise(I, "ValueError", "Incompatible shapes for broadcasting: batch dimensions %lld and %lld", (long long)a,
               (long long)b);
      return -1;
    }
    out[i] = a == 1 ? b : a;
  }
  *nb = n;
  return 0;
}

/* lu_solve of the factors (lu, permutation) for b (..., m, k), batches equal
   (lax_linalg._lu_solve_core, trans 0 or 1) */
static SrVal *lu_solve_core(SrNnScope *s, SrVal *lu, SrVal *perm, SrVal *b, int trans) {
  const SrType *lt = ty(s->I, lu);
  if (!lt || !perm || !b) return NULL;
  int64_t m = lt->dims[lt->ndim - 1].size;
  const char *dtk[1] = {"dtype"};
  SrVal *mv = INT(m), *i32 = KEEP(sr_dtype_val(NULL, SR_I32)), *dtv = KEEP(sr_dtype_val(NULL, lt->dtype));
  SrVal *iota = kcall(s, "jax.numpy.arange", 1, &mv, 1, dtk, &i32);
  SrVal *pe = sr_nn_call2(s, "jax.numpy.expand_dims", perm, INT(-1));
  SrVal *eq = OP(EQ, pe, iota);
  SrVal *P = kcall(s, "jax.numpy.asarray", 1, &eq, 1, dtk, &dtv); /* P[i, j] = perm[i] == j */
  if (trans == 0) {
    SrVal *x = OP(MATMUL, P, b);
    x = trisolve(s, lu, x, 1, 1, 0, 1);
    return trisolve(s, lu, x, 1, 0, 0, 0);
  }
  SrVal *x = trisolve(s, lu, b, 1, 0, 1, 0);
  x = trisolve(s, lu, x, 1, 1, 1, 1);
  return OP(MATMUL, mT(s, P), x);
}

/* a (..., m, m), b (..., m) (vec) or (..., m, k): the batches broadcast,
   lu of a, lu_solve_core */
static SrVal *lu_solve_ab(SrNnScope *s, SrVal *lu, SrVal *perm, SrVal *b, int vec, int trans) {
  SrInterp *I = s->I;
  if (!lu || !perm || !b) return NULL;
  if (vec) b = sr_nn_call2(s, "jax.numpy.expand_dims", b, INT(-1));
  const SrType *lt = ty(I, lu), *bt = ty(I, b);
  if (!bt) return NULL;
  int64_t batch[SR_MAX_RANK];
  int nb;
  if (bshape(I, lt, 2, bt, 2, batch, &nb) < 0) return NULL;
  lu = bcast_batch(s, lu, batch, nb, 2);
  perm = bcast_batch(s, perm, batch, nb, 1);
  b = bcast_batch(s, b, batch, nb, 2);
  SrVal *x = lu_solve_core(s, lu, perm, b, trans);
  return vec && x ? sr_nn_call2(s, "jax.numpy.squeeze", x, INT(-1)) : x;
}

static SrVal *solve_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *ab[2] = {a->v[0], a->v[1]};
  if (sr_nn_promote_inexact(s, 2, ab, "jnp.linalg.solve") < 0) return DONE(NULL);
  /* promote_dtypes_inexact promotes dtypes only: the ranks as given */
  SrVal *x = KEEP(sr_jnp_asarray(I, a->v[0], -1)), *y = KEEP(sr_jnp_asarray(I, a->v[1], -1));
  if (!x || !y) return DONE(NULL);
  SrDtype dt = ty(I, ab[0])->dtype;
  x = KEEP(sr_lax_convert(I, x, dt, 0, NULL));
  y = KEEP(sr_lax_convert(I, y, dt, 0, NULL));
  if (!x || !y) return DONE(NULL);
  const SrType *at = ty(I, x), *bt = ty(I, y);
  char b1[256], b2[256];
  if (at->ndim < 2)
    return DONE(sr_raise(I, "ValueError", "left hand array must be at least two dimensional; got a.shape=%s",
                         shape_str(b1, sizeof b1, at)));
  int na = at->ndim, nb = bt->ndim;
  if (nb > 1 && na == nb + 1 && at->dims[na - 1].size == bt->dims[nb - 1].size &&
      at->dims[na - 1].size != bt->dims[nb - 2].size)
    return DONE(sr_raise(I, "ValueError",
                         "Invalid shapes for solve: %s, %s. Prior to JAX v0.5.0, this would have been treated as a "
                         "batched 1-dimensional solve. To recover this behavior, use solve(a, b[..., None]).squeeze(-1).",
                         shape_str(b1, sizeof b1, at), shape_str(b2, sizeof b2, bt)));
  int vec = nb == 1;
  /* jnp.vectorize's checks of the core dims, signature (m,m),(m)->(m) or
     (m,m),(m,n)->(m,n) */
  const char *sig = vec ? "(m,m),(m)->(m)" : "(m,m),(m,n)->(m,n)";
  if (nb < (vec ? 1 : 2))
    return DONE(sr_raise(I, "ValueError",
                         "input with shape %s does not have enough dimensions for all core dimensions ('m', 'n') on "
                         "vectorized function with excluded=frozenset() and signature='%s'",
                         shape_str(b1, sizeof b1, bt), sig));
  int64_t m = at->dims[na - 2].size, got = at->dims[na - 1].size;
  if (got == m) got = vec ? bt->dims[0].size : bt->dims[nb - 2].size;
  if (got != m)
    return DONE(sr_raise(I, "ValueError",
                         "inconsistent size for core dimension 'm': %lld vs %lld on vectorized function with "
                         "excluded=frozenset() and signature='%s'",
                         (long long)got, (long long)m, sig));
  SrVal *r = lu3(s, x);
  return DONE(lu_solve_ab(s, item(s, r, 0), item(s, r, 2), y, vec, 0));
}

/* solve(a, b) */
static SrVal *jnp_solve(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "solve", "a, b", p) < 0) return NULL;
  return sr_api_jit(I, "solve", solve_body, NULL, 2, p);
}

static SrVal *inv_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, a->v[0], -1));
  const SrType *t = ty(I, x);
  char b[256];
  if (!t) return DONE(NULL);
  if (t->ndim < 2 || t->dims[t->ndim - 1].size != t->dims[t->ndim - 2].size)
    return DONE(sr_raise(I, "ValueError", "Argument to inv must have shape [..., n, n], got %s.",
                         shape_str(b, sizeof b, t)));
  int64_t n = t->dims[t->ndim - 1].size;
  SrVal *nv = INT(n), *dtv = KEEP(sr_dtype_val(NULL, t->dtype));
  const char *dtk[1] = {"dtype"};
  SrVal *eye = kcall(s, "jax.numpy.eye", 1, &nv, 1, dtk, &dtv);
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) sh[i] = t->dims[i].size;
  SrVal *be = eye ? KEEP(sr_lax_broadcast_to(I, eye, sh, t->ndim, NULL)) : NULL;
  return DONE(sr_nn_call2(s, "jax.numpy.linalg.solve", x, be));
}

/* inv(a) */
static SrVal *jnp_inv(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "inv", "a", p) < 0) return NULL;
  return sr_api_jit(I, "inv", inv_body, NULL, 1, &p[0]);
}

/* ---- jnp.linalg's functions over jnp's ---- */

/* x[..., i] (i < 0 from the end): a slice and a squeeze */
static SrVal *last_at(SrNnScope *s, SrVal *x, int64_t i) {
  const SrType *t = ty(s->I, x);
  if (!t) return NULL;
  int nd = t->ndim;
  int64_t n = t->dims[nd - 1].size, st[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK], d = nd - 1;
  if (i < 0) i += n;
  for (int k = 0; k < nd; k++) lim[k] = t->dims[k].size;
  st[nd - 1] = i, lim[nd - 1] = i + 1;
  SrVal *sl = KEEP(sr_lax_slice(s->I, x, st, lim, NULL));
  return sl ? KEEP(sr_lax_squeeze(s->I, sl, &d, 1)) : NULL;
}

/* outer(x1, x2, /): x1[:, None] * x2[None, :] of vectors */
static SrVal *la_outer(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "outer", "x1, x2", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1)), *y = x ? KEEP(sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (!y) return DONE(NULL);
  int n1 = ty(I, x)->ndim, n2 = ty(I, y)->ndim;
  if (n1 != 1 || n2 != 1)
    return DONE(sr_raise(I, "ValueError", "Input arrays must be one-dimensional, but they are x1.ndim=%d x2.ndim=%d",
                         n1, n2));
  return DONE(OP(MUL, sr_nn_call2(s, "jax.numpy.expand_dims", x, INT(1)), sr_nn_call2(s, "jax.numpy.expand_dims", y, INT(0))));
}

/* cross(x1, x2, /, *, axis=-1): jnp.cross of 3-vectors */
static SrVal *la_cross(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "cross", "x1, x2, *, axis=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1)), *y = x ? KEEP(sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (!y) return DONE(NULL);
  int64_t ax = -1;
  if (given(p[2]) && sr_as_int(I, p[2], "axis", &ax) < 0) return DONE(NULL);
  const SrType *xt = ty(I, x), *yt = ty(I, y);
  int64_t a1 = ax < 0 ? ax + xt->ndim : ax, a2 = ax < 0 ? ax + yt->ndim : ax;
  if (a1 < 0 || a1 >= xt->ndim || a2 < 0 || a2 >= yt->ndim)
    return DONE(sr_raise(I, "IndexError", "tuple index out of range"));
  int64_t s1 = xt->dims[a1].size, s2 = yt->dims[a2].size;
  if (s1 != 3 || s2 != 3)
    return DONE(sr_raise(I, "ValueError",
                         "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
                         "x1.shape[axis]=%lld and x2.shape[axis]=%lld",
                         (long long)s1, (long long)s2));
  SrVal *v[2] = {x, y};
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {INT(ax)};
  return DONE(kcall(s, "jax.numpy.cross", 2, v, 1, kw, kv));
}

/* matmul(x1, x2, /, *, precision=None, preferred_element_type=None) */
static SrVal *la_matmul(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "matmul", "x1, x2, *, precision=, preferred_element_type=", p) < 0) return NULL;
  SCOPE(I);
  const char *kw[2] = {"precision", "preferred_element_type"};
  SrVal *kv[2] = {p[2], p[3]};
  return DONE(kcall(s, "jax.numpy.matmul", 2, p, 2, kw, kv));
}

/* trace(x, /, *, offset=0, dtype=None): jnp.trace over the last two axes */
static SrVal *la_trace(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "trace", "x, *, offset=, dtype=", p) < 0) return NULL;
  SCOPE(I);
  const char *kw[4] = {"offset", "axis1", "axis2", "dtype"};
  SrVal *kv[4] = {p[1] ? p[1] : INT(0), INT(-2), INT(-1), p[2]};
  return DONE(kcall(s, "jax.numpy.trace", 1, p, 4, kw, kv));
}

/* matrix_power's body (n static): inv for n < 0, then squarings */
static SrVal *matrix_power_body(SrInterp *I, SrArgs *a) {
  int64_t n = *(int64_t *)sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, a->v[0], -1));
  const SrType *t = ty(I, x);
  if (!t) return DONE(NULL);
  if (t->ndim < 2)
    return DONE(sr_raise(I, "TypeError", "%d-dimensional array given. Array must be at least two-dimensional",
                         t->ndim));
  if (t->dims[t->ndim - 2].size != t->dims[t->ndim - 1].size)
    return DONE(sr_raise(I, "TypeError", "Last 2 dimensions of the array must be square"));
  if (n == 0) {
    SrVal *nv = INT(t->dims[t->ndim - 1].size), *dtv = KEEP(sr_dtype_val(NULL, t->dtype));
    const char *dk[1] = {"dtype"};
    SrVal *eye = kcall(s, "jax.numpy.eye", 1, &nv, 1, dk, &dtv);
    int64_t sh[SR_MAX_RANK];
    for (int i = 0; i < t->ndim; i++) sh[i] = t->dims[i].size;
    return DONE(eye ? KEEP(sr_lax_broadcast_to(I, eye, sh, t->ndim, NULL)) : NULL);
  }
  if (n < 0) {
    x = sr_nn_call1(s, "jax.numpy.linalg.inv", x);
    n = -n;
  }
  if (n == 1) return DONE(x);
  if (n == 2) return DONE(OP(MATMUL, x, x));
  if (n == 3) return DONE(OP(MATMUL, OP(MATMUL, x, x), x));
  SrVal *z = NULL, *r = NULL;
  while (n > 0 && x) {
    z = z ? OP(MATMUL, z, z) : x;
    if (n % 2) r = r ? OP(MATMUL, r, z) : z;
    n /= 2;
    if (!z) return DONE(NULL);
  }
  return DONE(r);
}

/* matrix_power(a, n): jit[name=matrix_power] with n static */
static SrVal *la_matrix_power(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "matrix_power", "a, n", p) < 0) return NULL;
  int64_t n;
  if (p[1]->kind != SR_V_INT && p[1]->kind != SR_V_BOOL) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, p[1]);
    sr_raise(I, "TypeError", "exponent must be an integer, got %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  n = p[1]->i;
  int64_t *d = sr_xmalloc(sizeof *d);
  *d = n;
  return sr_api_jit(I, "matrix_power", matrix_power_body, d, 1, &p[0]);
}

/* multi_dot(arrays, *, precision=None): one einsum with the chain's axes */
static SrVal *la_multi_dot(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "multi_dot", "arrays, *, precision=", p) < 0) return NULL;
  if (!sr_is_seq(p[0])) return sr_raise(I, "TypeError", "multi_dot: arrays must be a sequence");
  int n = (int)p[0]->seq.n;
  if (n < 2) return sr_raise(I, "ValueError", "multi_dot requires at least two arrays; got len(arrays)=%d", n);
  if (n > 26) return sr_raise(I, "NotImplementedError", "multi_dot of more than 26 arrays");
  SCOPE(I);
  SrVal *xs[26];
  int ok = 1, chain = 1;
  for (int i = 0; i < n; i++) {
    if (!(xs[i] = KEEP(sr_jnp_asarray(I, p[0]->seq.items[i], -1)))) return DONE(NULL);
    int nd = ty(I, xs[i])->ndim;
    if ((i == 0 || i == n - 1) ? (nd != 1 && nd != 2) : nd != 2) ok = 0;
  }
  SrBuf sh = SR_BUF_INIT;
  sr_buf_puts(&sh, "[");
  for (int i = 0; i < n; i++) {
    char b[128];
    sr_buf_printf(&sh, "%s%s", i ? ", " : "", shape_str(b, sizeof b, ty(I, xs[i])));
    if (i && ok) {
      const SrType *l = ty(I, xs[i - 1]), *r = ty(I, xs[i]);
      if (l->dims[l->ndim - 1].size != r->dims[0].size) chain = 0;
    }
  }
  sr_buf_puts(&sh, "]");
  if (!ok || !chain) {
    if (!ok)
      sr_raise(I, "ValueError",
               "multi_dot: input arrays must all be two-dimensional, except for the first and last array which may "
               "be 1 or 2 dimensional. Got array shapes %s",
               sr_buf_str(&sh));
    else
      sr_raise(I, "ValueError",
               "multi_dot: last dimension of each array must match first dimension of following array. Got array "
               "shapes %s",
               sr_buf_str(&sh));
    sr_buf_free(&sh);
    return DONE(NULL);
  }
  sr_buf_free(&sh);
  /* the subscripts: array i has axes (i, i + 1), the ends trimmed for vectors */
  SrBuf sub = SR_BUF_INIT;
  for (int i = 0; i < n; i++) {
    int nd = ty(I, xs[i])->ndim;
    if (i) sr_buf_puts(&sub, ",");
    if (nd == 2 || i > 0) sr_buf_printf(&sub, "%c", 'a' + i);
    if (nd == 2 || i == 0) sr_buf_printf(&sub, "%c", 'a' + i + 1);
  }
  sr_buf_puts(&sub, "->");
  if (ty(I, xs[0])->ndim == 2) sr_buf_puts(&sub, "a");
  if (ty(I, xs[n - 1])->ndim == 2) sr_buf_printf(&sub, "%c", 'a' + n);
  SrVal *args[27];
  args[0] = KEEP(sr_str(NULL, sr_buf_str(&sub), strlen(sr_buf_str(&sub))));
  sr_buf_free(&sub);
  for (int i = 0; i < n; i++) args[i + 1] = xs[i];
  const char *kw[2] = {"optimize", "precision"};
  SrVal *kv[2] = {KEEP(sr_str(NULL, "auto", 4)), p[1]};
  return DONE(kcall(s, "jax.numpy.einsum", n + 1, args, 2, kw, kv));
}

/* tensorinv(a, ind=2): inv of the flattened square, reshaped */
static SrVal *la_tensorinv(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "tensorinv", "a, ind=", p) < 0) return NULL;
  int64_t ind = 2;
  if (p[1] && sr_as_int(I, p[1], "ind", &ind) < 0) return NULL;
  if (ind <= 0) return sr_raise(I, "ValueError", "ind must be a positive integer; got ind=%lld", (long long)ind);
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  const SrType *t = ty(I, x);
  if (!t) return DONE(NULL);
  int nd = t->ndim, k = ind < nd ? (int)ind : nd;
  int64_t f0 = 1, f1 = 1, sh[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) {
    if (i < k) f0 *= t->dims[i].size;
    else f1 *= t->dims[i].size;
  }
  if (f0 != f1) {
    char b[256];
    return DONE(sr_raise(I, "ValueError",
                         "tensorinv is only possible when the product of the first `ind` dimensions equals that of "
                         "the remaining dimensions. got arr.shape=%s with ind=%lld.",
                         shape_str(b, sizeof b, t), (long long)ind));
  }
  int64_t flat[2] = {f0, f1};
  SrVal *m = KEEP(sr_lax_reshape(I, x, flat, 2, NULL));
  SrVal *inv = sr_nn_call1(s, "jax.numpy.linalg.inv", m);
  int j = 0;
  for (int i = k; i < nd; i++) sh[j++] = t->dims[i].size;
  for (int i = 0; i < k; i++) sh[j++] = t->dims[i].size;
  return DONE(inv ? KEEP(sr_lax_reshape(I, inv, sh, nd, NULL)) : NULL);
}

/* tensorsolve(a, b, axes=None): solve of the flattened system */
static SrVal *la_tensorsolve(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "tensorsolve", "a, b, axes=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1)), *y = x ? KEEP(sr_jnp_asarray(I, p[1], -1)) : NULL;
  if (!y) return DONE(NULL);
  if (given(p[2])) {
    if (!sr_is_seq(p[2])) return DONE(sr_raise(I, "TypeError", "axes must be a tuple of ints"));
    int na = (int)p[2]->seq.n;
    SrVal *dst[SR_MAX_RANK];
    for (int i = 0; i < na && i < SR_MAX_RANK; i++) dst[i] = INT(ty(I, x)->ndim - 1);
    for (int i = 0; i < na; i++) sr_ref(dst[i]);
    SrVal *dt = KEEP(sr_tuple(NULL, na, dst));
    x = sr_nn_call3(s, "jax.numpy.moveaxis", x, p[2], dt);
    if (!x) return DONE(NULL);
  }
  const SrType *at = ty(I, x), *bt = ty(I, y);
  char b1[256], b2[256];
  int nb = bt->ndim, same = at->ndim >= nb;
  for (int i = 0; same && i < nb; i++) same = at->dims[i].size == bt->dims[i].size;
  if (!same)
    return DONE(sr_raise(I, "ValueError",
                         "After moving axes to end, leading shape of a must match shape of b. got a.shape=%s, "
                         "b.shape=%s",
                         shape_str(b1, sizeof b1, at), shape_str(b2, sizeof b2, bt)));
  int64_t bs = 1, os = 1, out[SR_MAX_RANK];
  for (int i = 0; i < nb; i++) bs *= bt->dims[i].size;
  for (int i = nb; i < at->ndim; i++) os *= (out[i - nb] = at->dims[i].size);
  if (bs != os)
    return DONE(sr_raise(I, "ValueError",
                         "Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); got a.shape=%s, "
                         "b.ndim=%d.",
                         shape_str(b1, sizeof b1, at), nb));
  int64_t flat[2] = {bs, os};
  SrVal *m = KEEP(sr_lax_reshape(I, x, flat, 2, NULL));
  SrVal *v = KEEP(sr_lax_reshape(I, y, &bs, 1, NULL));
  SrVal *r = sr_nn_call2(s, "jax.numpy.linalg.solve", m, v);
  return DONE(r ? KEEP(sr_lax_reshape(I, r, out, at->ndim - nb, NULL)) : NULL);
}

static int inexact2(SrNnScope *s, SrVal **a, SrVal **b, const char *fname);

/* svd(x, full_matrices=False, compute_uv=False): the singular values */
static SrVal *svals(SrNnScope *s, SrVal *x) {
  const char *kw[2] = {"full_matrices", "compute_uv"};
  SrVal *kv[2] = {BOOL(0), BOOL(0)};
  return kcall(s, "jax.numpy.linalg.svd", 1, &x, 2, kw, kv);
}

static SrVal *eps_of(SrNnScope *s, SrDtype dt) {
  return sr_nn_typed_scalar(s, dt == SR_F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07, dt);
}

/* cond's body: p as given (NULL: None) in the builtin's data */
static SrVal *cond_body(SrInterp *I, SrArgs *a) {
  SrVal *pv = sr_current_builtin(I)->data ? *(SrVal **)sr_current_builtin(I)->data : NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, a->v[0], -1));
  const SrType *t = ty(I, x);
  char b[256];
  if (!t) return DONE(NULL);
  if (t->ndim < 2)
    return DONE(sr_raise(I, "ValueError", "jnp.linalg.cond: input array must be at least 2D; got arr.shape=%s",
                         shape_str(b, sizeof b, t)));
  if (t->dims[t->ndim - 1].size == 0 || t->dims[t->ndim - 2].size == 0)
    return DONE(sr_raise(I, "ValueError", "jnp.linalg.cond: input array must not be empty; got arr.shape=%s",
                         shape_str(b, sizeof b, t)));
  int two = !given(pv) || ((pv->kind == SR_V_INT && pv->i == 2) || (pv->kind == SR_V_FLOAT && pv->f == 2.0));
  int mtwo = given(pv) && ((pv->kind == SR_V_INT && pv->i == -2) || (pv->kind == SR_V_FLOAT && pv->f == -2.0));
  SrVal *r;
  if (two) {
    SrVal *sv = sr_nn_call1(s, "jax.numpy.linalg.svdvals", x);
    return DONE(OP(DIV, last_at(s, sv, 0), last_at(s, sv, -1)));
  } else if (mtwo) {
    SrVal *sv = sr_nn_call1(s, "jax.numpy.linalg.svdvals", x);
    r = OP(DIV, last_at(s, sv, -1), last_at(s, sv, 0));
  } else {
    if (t->dims[t->ndim - 2].size != t->dims[t->ndim - 1].size) {
      SrBuf pb = SR_BUF_INIT;
      sr_val_repr(&pb, pv);
      sr_raise(I, "ValueError", "jnp.linalg.cond: for p=%s, array must be square; got arr.shape=%s", sr_buf_str(&pb),
               shape_str(b, sizeof b, t));
      sr_buf_free(&pb);
      return DONE(NULL);
    }
    SrVal *axv[2] = {KEEP(sr_int(NULL, -2)), KEEP(sr_int(NULL, -1))};
    for (int i = 0; i < 2; i++) sr_ref(axv[i]);
    SrVal *axes = KEEP(sr_tuple(NULL, 2, axv));
    const char *kw[2] = {"ord", "axis"};
    SrVal *kv[2] = {pv, axes};
    SrVal *n1 = kcall(s, "jax.numpy.linalg.norm", 1, &x, 2, kw, kv);
    SrVal *iv = sr_nn_call1(s, "jax.numpy.linalg.inv", x);
    SrVal *n2 = iv ? kcall(s, "jax.numpy.linalg.norm", 1, &iv, 2, kw, kv) : NULL;
    r = OP(MUL, n1, n2);
  }
  SrVal *axv[2] = {KEEP(sr_int(NULL, -2)), KEEP(sr_int(NULL, -1))};
  for (int i = 0; i < 2; i++) sr_ref(axv[i]);
  SrVal *axes = KEEP(sr_tuple(NULL, 2, axv));
  const char *ak[1] = {"axis"};
  SrVal *xn = sr_nn_call1(s, "jax.numpy.isnan", x);
  SrVal *anyn = xn ? kcall(s, "jax.numpy.any", 1, &xn, 1, ak, &axes) : NULL;
  SrVal *m = OP(BITAND, sr_nn_call1(s, "jax.numpy.isnan", r), sr_nn_call1(s, "jax.numpy.logical_not", anyn));
  return DONE(sr_nn_call3(s, "jax.numpy.where", m, sr_nn_float(s, INFINITY), r));
}

static void unref_box(void *d) {
  if (d) sr_unref(*(SrVal **)d);
  free(d);
}

/* cond(x, p=None): jit[name=cond] with p static */
static SrVal *la_cond(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "cond", "x, p=", p) < 0) return NULL;
  SrVal **box = sr_xmalloc(sizeof *box);
  *box = p[1] ? sr_ref(p[1]) : sr_none();
  SrVal *b = sr_builtin_with("cond", cond_body, box, unref_box);
  SrVal *jit = sr_lookup_qualname("jax.jit");
  SrVal *f = jit ? sr_call1(I, jit, b) : NULL;
  sr_unref(b);
  SrArgs ca = {1, &p[0], 0, NULL, NULL, NULL};
  SrVal *r = f ? sr_call(I, f, &ca) : NULL;
  sr_unref(f);
  return r;
}

/* matrix_rank's body (hermitian static; rtol an operand or None) */
static SrVal *matrix_rank_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "jnp.linalg.matrix_rank");
  const SrType *t = ty(I, x);
  if (!t) return DONE(NULL);
  SrVal *i32 = KEEP(sr_dtype_val(NULL, SR_I32));
  if (t->ndim < 2) {
    SrVal *nz = OP(NE, x, INT(0));
    SrVal *any = sr_nn_call1(s, "jax.numpy.any", nz);
    return DONE(any ? KEEP(sr_lax_convert(I, any, SR_I32, 0, NULL)) : NULL);
  }
  (void)i32;
  SrVal *S = cur_flags(I)[0] ? KEEP(sr_linalg16_svd_hermitian(I, x, 0)) : svals(s, x);
  SrVal *rtol = a->n > 1 && given(a->v[1]) ? KEEP(sr_jnp_asarray(I, a->v[1], -1)) : NULL;
  if (!rtol && S) {
    int64_t mx = MAXI(t->dims[t->ndim - 2].size, t->dims[t->ndim - 1].size);
    const char *ak[1] = {"axis"};
    SrVal *av[1] = {INT(-1)};
    SrVal *smax = kcall(s, "jax.numpy.max", 1, &S, 1, ak, av);
    rtol = OP(MUL, OP(MUL, smax, sr_nn_typed_scalar(s, (double)mx, ty(I, S)->dtype)), eps_of(s, ty(I, S)->dtype));
  }
  const SrType *rt = ty(I, rtol);
  SrVal *re = rt ? sr_nn_call2(s, "jax.numpy.expand_dims", rtol, INT(rt->ndim)) : NULL;
  SrVal *gt = OP(GT, S, re);
  const char *ak[1] = {"axis"};
  SrVal *av[1] = {INT(-1)};
  return DONE(gt ? kcall(s, "jax.numpy.sum", 1, &gt, 1, ak, av) : NULL);
}

/* matrix_rank(M, rtol=None, *, hermitian=False, tol=None) */
static SrVal *la_matrix_rank(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  int herm;
  if (sr_args_parse(I, a, "matrix_rank", "M, rtol=, *, hermitian=, tol=", p) < 0 ||
      flag(I, p[2], 0, "hermitian", &herm) < 0)
    return NULL;
  SrVal *rtol = p[1];
  if (given(p[3])) {
    if (given(rtol)) return sr_raise(I, "ValueError", "matrix_rank: only one of tol or rtol may be specified.");
    rtol = p[3];
  }
  SrVal *args[2] = {p[0], given(rtol) ? rtol : sr_none()};
  return sr_api_jit(I, "matrix_rank", matrix_rank_body, flags(herm, 0, 0, 0), 2, args);
}

/* _pinv's body: vh.mT @ (u.mT / s[..., None]) with the singular values
   at most rtol * s[..., 0:1] infinite */
static SrVal *pinv_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "jnp.linalg.pinv");
  const SrType *t = ty(I, x);
  if (!t) return DONE(NULL);
  int nd = t->ndim;
  if (nd < 2) return DONE(sr_raise(I, "ValueError", "not enough values to unpack (expected 2, got %d)", nd));
  int64_t m = t->dims[nd - 2].size, n = t->dims[nd - 1].size;
  if (m == 0 || n == 0) {
    int64_t sh[SR_MAX_RANK];
    for (int i = 0; i < nd - 2; i++) sh[i] = t->dims[i].size;
    sh[nd - 2] = n, sh[nd - 1] = m;
    SrVal *shv = KEEP(sr_int_tuple(sh, nd)), *dtv = KEEP(sr_dtype_val(NULL, t->dtype));
    const char *dk[1] = {"dtype"};
    return DONE(kcall(s, "jax.numpy.zeros", 1, &shv, 1, dk, &dtv));
  }
  SrVal *rtol = a->n > 1 && given(a->v[1]) ? KEEP(sr_jnp_asarray(I, a->v[1], -1)) : NULL;
  SrDtype rdt = t->dtype == SR_C64 ? SR_F32 : t->dtype == SR_C128 ? SR_F64 : t->dtype; /* finfo(complex).eps is real */
  if (!rtol) rtol = OP(MUL, sr_nn_float(s, 10.0 * (double)MAXI(m, n)), eps_of(s, rdt));
  const char *kw[2] = {"full_matrices", "hermitian"};
  SrVal *kv[2] = {BOOL(0), BOOL(cur_flags(I)[0])};
  SrVal *usv = kcall(s, "jax.numpy.linalg.svd", 1, &x, 2, kw, kv);
  SrVal *u = item(s, usv, 0), *sv = item(s, usv, 1), *vh = item(s, usv, 2);
  if (!vh || !rtol) return DONE(NULL);
  /* rtol[..., None] expanded in front to s's rank */
  SrVal *r = sr_nn_call2(s, "jax.numpy.expand_dims", rtol, INT(-1));
  int sn = ty(I, sv)->ndim, rn = r ? ty(I, r)->ndim : 0;
  for (int i = rn; r && i < sn; i++) r = sr_nn_call2(s, "jax.numpy.expand_dims", r, INT(0));
  const SrType *st = ty(I, sv);
  int64_t z[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK];
  for (int i = 0; i < st->ndim; i++) lim[i] = st->dims[i].size;
  lim[st->ndim - 1] = 1;
  SrVal *s0 = KEEP(sr_lax_slice(I, sv, z, lim, NULL));
  SrVal *cutoff = OP(MUL, r, s0);
  SrVal *sc = sr_nn_call3(s, "jax.numpy.where", OP(GT, sv, cutoff), sv, sr_nn_float(s, INFINITY));
  SrVal *se = sr_nn_call2(s, "jax.numpy.expand_dims", sc, INT(-1));
  SrVal *res = OP(MATMUL, mT(s, vh), OP(DIV, mT(s, u), se));
  /* res.conj() (the real arrays' conj is themselves), then the dtype */
  if (res && sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) res = sr_nn_call1(s, "jax.numpy.conj", res);
  return DONE(res ? KEEP(sr_lax_convert(I, res, t->dtype, 0, NULL)) : NULL);
}

/* pinv(a, rtol=None, hermitian=False, *, rcond=None): jit[name=_pinv] */
static SrVal *la_pinv(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  int herm;
  if (sr_args_parse(I, a, "pinv", "a, rtol=, hermitian=, *, rcond=", p) < 0 || flag(I, p[2], 0, "hermitian", &herm) < 0)
    return NULL;
  SrVal *rtol = p[1];
  if (given(p[3])) {
    if (given(rtol)) return sr_raise(I, "ValueError", "pinv: only one of rtol and rcond may be specified.");
    rtol = p[3];
  }
  SrVal *args[2] = {p[0], given(rtol) ? rtol : sr_none()};
  return sr_api_jit(I, "_pinv", pinv_body, flags(herm, 0, 0, 0), 2, args);
}

/* _lstsq(a, b, rcond, numpy_resid=False) of a 2-D a */
static SrVal *lstsq_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *x = a->v[0], *b = a->v[1], *rcond = a->v[2];
  if (inexact2(s, &x, &b, "jnp.linalg.lstsq") < 0) return DONE(NULL);
  const SrType *at = ty(I, x), *bt = ty(I, b);
  if (at->dims[0].size != bt->dims[0].size)
    return DONE(sr_raise(I, "ValueError", "Leading dimensions of input arrays must match"));
  int vec = bt->ndim == 1;
  if (vec) b = sr_nn_call2(s, "jax.numpy.expand_dims", b, INT(1));
  if (at->ndim != 2)
    return DONE(sr_raise(I, "TypeError", "%d-dimensional array given. Array must be two-dimensional", at->ndim));
  if (!b || ty(I, b)->ndim != 2)
    return DONE(b ? sr_raise(I, "TypeError", "%d-dimensional array given. Array must be one or two-dimensional",
                             ty(I, b)->ndim)
                  : NULL);
  int64_t m = at->dims[0].size, n = at->dims[1].size;
  SrDtype dt = at->dtype;
  if (m * n == 0) return DONE(sr_raise(I, "NotImplementedError", "jnp.linalg.lstsq of an empty array"));
  SrVal *rc = given(rcond) ? sr_nn_call3(s, "jax.numpy.where", OP(LT, rcond, INT(0)), eps_of(s, dt), rcond)
                           : sr_nn_float(s, (dt == SR_F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07) * (double)MAXI(m, n));
  const char *kw[1] = {"full_matrices"};
  SrVal *kv[1] = {BOOL(0)};
  SrVal *usv = kcall(s, "jax.numpy.linalg.svd", 1, &x, 1, kw, kv);
  SrVal *u = item(s, usv, 0), *sv = item(s, usv, 1), *vt = item(s, usv, 2);
  if (!vt || !rc) return DONE(NULL);
  SrVal *sdt = KEEP(sr_dtype_val(NULL, ty(I, sv)->dtype)), *adt = KEEP(sr_dtype_val(NULL, dt));
  const char *dk[1] = {"dtype"};
  SrVal *rca = kcall(s, "jax.numpy.asarray", 1, &rc, 1, dk, &sdt);
  SrVal *mask = OP(BITAND, OP(GT, sv, INT(0)), OP(GE, sv, OP(MUL, rca, last_at(s, sv, 0))));
  SrVal *rank = mask ? sr_nn_call1(s, "jax.numpy.sum", mask) : NULL;
  SrVal *safe = sr_nn_call3(s, "jax.numpy.where", mask, sv, INT(1));
  safe = safe ? kcall(s, "jax.numpy.asarray", 1, &safe, 1, dk, &adt) : NULL;
  SrVal *sinv = sr_nn_call3(s, "jax.numpy.where", mask, OP(DIV, INT(1), safe), INT(0));
  sinv = sr_nn_call2(s, "jax.numpy.expand_dims", sinv, INT(1));
  SrVal *utb = OP(MATMUL, mT(s, u), b);
  SrVal *sol = OP(MATMUL, mT(s, vt), OP(MUL, sinv, utb));
  SrVal *est = OP(MATMUL, x, sol);
  const char *ak[1] = {"axis"};
  SrVal *av[1] = {INT(0)};
  SrVal *diff = OP(SUB, b, est);
  SrVal *nrm = diff ? kcall(s, "jax.numpy.linalg.norm", 1, &diff, 1, ak, av) : NULL;
  SrVal *resid = OP(POW, nrm, INT(2));
  if (vec) sol = sr_nn_call1(s, "jax.numpy.ravel", sol);
  SrVal *it[4] = {sol, resid, rank, sv};
  return DONE(resid && sol ? KEEP(tuple_of(4, it)) : NULL);
}

/* lstsq(a, b, rcond=None, *, numpy_resid=False): jit[name=_lstsq] */
static SrVal *la_lstsq(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  int npr;
  if (sr_args_parse(I, a, "lstsq", "a, b, rcond=, *, numpy_resid=", p) < 0 || flag(I, p[3], 0, "numpy_resid", &npr) < 0)
    return NULL;
  if (npr) return sr_raise(I, "NotImplementedError", "jnp.linalg.lstsq's numpy_resid=True is not implemented");
  SrVal *args[3] = {p[0], p[1], given(p[2]) ? p[2] : sr_none()};
  return sr_api_jit(I, "_lstsq", lstsq_body, NULL, 3, args);
}

/* ---- jax.scipy.linalg ---- */

/* jnp.vectorize(partial(triangular_solve, left_side=True, ...)) over
   (n,n),(n)->(n) or (n,n),(n,k)->(n,k): the batches broadcast, a vector
   b a column */
static SrVal *tri_vec(SrNnScope *s, SrVal *a, SrVal *b, int lower, int trans, int unit) {
  SrInterp *I = s->I;
  const SrType *at = ty(I, a), *bt = ty(I, b);
  if (!at || !bt) return NULL;
  int vec = bt->ndim == 1 || (at->ndim == bt->ndim + 1 && at->dims[at->ndim - 1].size == bt->dims[bt->ndim - 1].size);
  if (vec) b = sr_nn_call2(s, "jax.numpy.expand_dims", b, INT(-1));
  if (!(bt = ty(I, b))) return NULL;
  int64_t batch[SR_MAX_RANK];
  int nb;
  if (bshape(I, at, 2, bt, 2, batch, &nb) < 0) return NULL;
  SrVal *x = trisolve(s, bcast_batch(s, a, batch, nb, 2), bcast_batch(s, b, batch, nb, 2), 1, lower, trans, unit);
  return vec && x ? sr_nn_call2(s, "jax.numpy.squeeze", x, INT(-1)) : x;
}

/* two promoted operands, ranks kept */
/* promote_dtypes_inexact(a, b): the dtypes only, shapes as they are */
static int inexact2(SrNnScope *s, SrVal **a, SrVal **b, const char *fname) {
  (void)fname;
  *a = KEEP(sr_jnp_asarray(s->I, *a, -1));
  *b = *a ? KEEP(sr_jnp_asarray(s->I, *b, -1)) : NULL;
  if (!*b) return -1;
  SrVal *ab[2] = {*a, *b};
  int weak;
  SrDtype dt = sr_jnp_result_dtype(s->I, 2, ab, &weak);
  if (sr_dtype_is_int(dt) || dt == SR_BOOL) dt = s->I->jax->enable_x64 ? SR_F64 : SR_F32;
  *a = *b ? KEEP(sr_lax_convert(s->I, *a, dt, 0, NULL)) : NULL;
  *b = *a ? KEEP(sr_lax_convert(s->I, *b, dt, 0, NULL)) : NULL;
  return *b ? 0 : -1;
}

/* _cholesky(a, lower): lax cholesky of a (lower) or a.mT, unsymmetrized */
static SrVal *sp_cholesky_body(SrInterp *I, SrArgs *a) {
  int lower = cur_flags(I)[0];
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "cholesky");
  SrVal *l = chol(s, lower ? x : mT(s, x), 0);
  return DONE(lower ? l : mT(s, l));
}

static SrVal *sp_cholesky_call(SrInterp *I, SrArgs *a, int factor) {
  SrVal *p[4];
  int lower;
  if (sr_args_parse(I, a, factor ? "cho_factor" : "cholesky", "a, lower=, overwrite_a=, check_finite=", p) < 0 ||
      flag(I, p[1], 0, "lower", &lower) < 0)
    return NULL;
  SrVal *c = sr_api_jit(I, "_cholesky", sp_cholesky_body, flags(lower, 0, 0, 0), 1, &p[0]);
  if (!c || !factor) return c;
  SrVal *it[2] = {c, sr_bool(lower)};
  return sr_tuple(NULL, 2, it);
}

static SrVal *sp_cholesky(SrInterp *I, SrArgs *a) { return sp_cholesky_call(I, a, 0); }
static SrVal *sp_cho_factor(SrInterp *I, SrArgs *a) { return sp_cholesky_call(I, a, 1); }

static SrVal *sp_cho_solve_body(SrInterp *I, SrArgs *a) {
  int lower = cur_flags(I)[0];
  SCOPE(I);
  SrVal *c = a->v[0], *b = a->v[1];
  if (inexact2(s, &c, &b, "cho_solve") < 0) return DONE(NULL);
  b = tri_vec(s, c, b, lower, !lower, 0);
  return DONE(tri_vec(s, c, b, lower, lower, 0));
}

/* cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True) */
static SrVal *sp_cho_solve(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "cho_solve", "c_and_lower, b, overwrite_b=, check_finite=", p) < 0) return NULL;
  if (!sr_is_seq(p[0]) || p[0]->seq.n != 2) return sr_raise(I, "ValueError", "c_and_lower must be a tuple (c, lower)");
  int lower;
  if (flag(I, p[0]->seq.items[1], 0, "lower", &lower) < 0) return NULL;
  SrVal *args[2] = {p[0]->seq.items[0], p[1]};
  return sr_api_jit(I, "_cho_solve", sp_cho_solve_body, flags(lower, 0, 0, 0), 2, args);
}

static SrVal *sp_solve_triangular_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  SrVal *x = a->v[0], *b = a->v[1];
  if (inexact2(s, &x, &b, "solve_triangular") < 0) return DONE(NULL);
  return DONE(tri_vec(s, x, b, f[1], f[0], f[2]));
}

/* solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False,
   overwrite_b=False, debug=None, check_finite=True) */
static SrVal *sp_solve_triangular(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  int lower, unit, trans = 0;
  if (sr_args_parse(I, a, "solve_triangular",
                    "a, b, trans=, lower=, unit_diagonal=, overwrite_b=, debug=, check_finite=", p) < 0 ||
      flag(I, p[3], 0, "lower", &lower) < 0 || flag(I, p[4], 0, "unit_diagonal", &unit) < 0)
    return NULL;
  SrVal *t = p[2];
  if (t) {
    int ok = 1;
    if (t->kind == SR_V_INT && t->i >= 0 && t->i <= 2) trans = (int)t->i;
    else if (t->kind == SR_V_STR && t->str.n == 1 && strchr("NTC", t->str.s[0])) trans = t->str.s[0] == 'N' ? 0 : t->str.s[0] == 'T' ? 1 : 2;
    else ok = 0;
    if (!ok) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, t);
      sr_raise(I, "ValueError", "Invalid 'trans' value %s", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  }
  return sr_api_jit(I, "_solve_triangular", sp_solve_triangular_body, flags(trans != 0, lower, unit, 0), 2, p);
}

static SrVal *sp_lu_factor_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *r = lu3(s, inexact1(s, a->v[0], "lu_factor"));
  SrVal *it[2] = {item(s, r, 0), item(s, r, 1)};
  return DONE(r ? KEEP(tuple_of(2, it)) : NULL);
}

/* lu_factor(a, overwrite_a=False, check_finite=True) */
static SrVal *sp_lu_factor(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "lu_factor", "a, overwrite_a=, check_finite=", p) < 0) return NULL;
  return sr_api_jit(I, "lu_factor", sp_lu_factor_body, NULL, 1, &p[0]);
}

static SrVal *sp_lu_solve_body(SrInterp *I, SrArgs *a) {
  int trans = cur_flags(I)[0];
  SCOPE(I);
  SrVal *lu = a->v[0], *b = a->v[2];
  if (inexact2(s, &lu, &b, "lu_solve") < 0) return DONE(NULL);
  const SrType *lt = ty(I, lu), *bt = ty(I, b);
  int64_t m = lt->dims[lt->ndim - 2].size;
  SrVal *piv = KEEP(sr_jnp_asarray(I, a->v[1], -1));
  SrVal *perm = piv ? KEEP(sr_bindv(I, SR_P_lu_pivots_to_permutation, 1, &piv, "permutation_size", sr_int(NULL, m), NULL))
                    : NULL;
  int vec = bt->ndim == 1 || (lt->ndim == bt->ndim + 1 && lt->dims[lt->ndim - 1].size == bt->dims[bt->ndim - 1].size);
  return DONE(lu_solve_ab(s, lu, perm, b, vec, trans));
}

/* lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True) */
static SrVal *sp_lu_solve(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  int64_t trans = 0;
  if (sr_args_parse(I, a, "lu_solve", "lu_and_piv, b, trans=, overwrite_b=, check_finite=", p) < 0) return NULL;
  if (!sr_is_seq(p[0]) || p[0]->seq.n != 2) return sr_raise(I, "ValueError", "lu_and_piv must be a tuple (lu, piv)");
  if (p[2] && sr_as_int(I, p[2], "trans", &trans) < 0) return NULL;
  if (trans < 0 || trans > 2) return sr_raise(I, "ValueError", "'trans' value must be 0, 1, or 2, got %lld", (long long)trans);
  SrVal *args[3] = {p[0]->seq.items[0], p[0]->seq.items[1], p[1]};
  return sr_api_jit(I, "lu_solve", sp_lu_solve_body, flags((int)trans, 0, 0, 0), 3, args);
}

/* _lu(a, permute_l): p (permutation[None, :] == arange(m)[:, None]), l,
   u; permute_l: (p @ l, u) */
static SrVal *sp_lu_body(SrInterp *I, SrArgs *a) {
  int permute_l = cur_flags(I)[0];
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "lu");
  SrVal *r = lu3(s, x);
  if (!r) return DONE(NULL);
  const SrType *t = ty(I, x);
  SrDtype dt = t->dtype;
  int64_t m = t->dims[t->ndim - 2].size, n = t->dims[t->ndim - 1].size, k = m < n ? m : n;
  SrVal *lu = item(s, r, 0), *perm = item(s, r, 2);
  const char *dtk[1] = {"dtype"};
  SrVal *mv = INT(m), *i32 = KEEP(sr_dtype_val(NULL, SR_I32)), *dtv = KEEP(sr_dtype_val(NULL, dt));
  SrVal *iota = kcall(s, "jax.numpy.arange", 1, &mv, 1, dtk, &i32);
  SrVal *eq = OP(EQ, sr_nn_call2(s, "jax.numpy.expand_dims", perm, INT(-2)),
                 sr_nn_call2(s, "jax.numpy.expand_dims", iota, INT(-1)));
  SrVal *p = kcall(s, "jax.numpy.asarray", 1, &eq, 1, dtk, &dtv);
  SrVal *lt = tril(s, lu, -1);
  int64_t st[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) lim[i] = t->dims[i].size;
  lim[t->ndim - 1] = k;
  SrVal *lk = lt ? KEEP(sr_lax_slice(I, lt, st, lim, NULL)) : NULL;
  SrVal *ev[2] = {INT(m), INT(k)};
  SrVal *eye = kcall(s, "jax.numpy.eye", 2, ev, 1, dtk, &dtv);
  SrVal *l = OP(ADD, lk, eye);
  SrVal *ut = triu(s, lu, 0);
  for (int i = 0; i < t->ndim; i++) lim[i] = t->dims[i].size;
  lim[t->ndim - 2] = k;
  SrVal *u = ut ? KEEP(sr_lax_slice(I, ut, st, lim, NULL)) : NULL;
  if (permute_l) {
    SrVal *it[2] = {OP(MATMUL, p, l), u};
    return DONE(KEEP(tuple_of(2, it)));
  }
  SrVal *it[3] = {p, l, u};
  return DONE(KEEP(tuple_of(3, it)));
}

/* lu(a, permute_l=False, overwrite_a=False, check_finite=True): jit[lu] of jit[_lu] */
static SrVal *sp_lu_outer(SrInterp *I, SrArgs *a) {
  int permute_l = cur_flags(I)[0];
  return sr_api_jit(I, "_lu", sp_lu_body, flags(permute_l, 0, 0, 0), 1, &a->v[0]);
}

static SrVal *sp_lu(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  int permute_l;
  if (sr_args_parse(I, a, "lu", "a, permute_l=, overwrite_a=, check_finite=", p) < 0 ||
      flag(I, p[1], 0, "permute_l", &permute_l) < 0)
    return NULL;
  return sr_api_jit(I, "lu", sp_lu_outer, flags(permute_l, 0, 0, 0), 1, &p[0]);
}

static SrVal *sp_eigh_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  SrVal *r = eigh2(s, inexact1(s, a->v[0], "eigh"), f[0], 1, 1, NULL, NULL);
  if (!r) return DONE(NULL);
  if (f[1]) return DONE(item(s, r, 1));
  SrVal *it[2] = {item(s, r, 1), item(s, r, 0)};
  return DONE(KEEP(tuple_of(2, it)));
}

/* eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False,
   overwrite_b=False, turbo=True, eigvals=None, type=1, check_finite=True) */
static SrVal *sp_eigh(SrInterp *I, SrArgs *a) {
  SrVal *p[10];
  int lower, only;
  int64_t type = 1;
  if (sr_args_parse(I, a, "eigh",
                    "a, b=, lower=, eigvals_only=, overwrite_a=, overwrite_b=, turbo=, eigvals=, type=, check_finite=",
                    p) < 0 ||
      flag(I, p[2], 1, "lower", &lower) < 0 || flag(I, p[3], 0, "eigvals_only", &only) < 0)
    return NULL;
  if (given(p[1])) return sr_raise(I, "NotImplementedError", "Only the b=None case of eigh is implemented");
  if (p[8] && sr_as_int(I, p[8], "type", &type) < 0) return NULL;
  if (type != 1) return sr_raise(I, "NotImplementedError", "Only the type=1 case of eigh is implemented.");
  if (given(p[7])) return sr_raise(I, "NotImplementedError", "Only the eigvals=None case of eigh is implemented.");
  return sr_api_jit(I, "_eigh", sp_eigh_body, flags(lower, only, 0, 0), 1, &p[0]);
}

/* det / inv / solve: jnp.linalg's (solve with assume_a='pos': cho_factor,
   cho_solve, inside jit[_solve]) */
static SrVal *sp_det(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "det", "a, overwrite_a=, check_finite=", p) < 0) return NULL;
  SCOPE(I);
  return DONE(sr_nn_call1(s, "jax.numpy.linalg.det", p[0]));
}

static SrVal *sp_inv(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "inv", "a, overwrite_a=, check_finite=", p) < 0) return NULL;
  SCOPE(I);
  return DONE(sr_nn_call1(s, "jax.numpy.linalg.inv", p[0]));
}

static SrVal *sp_solve_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  if (!f[0]) return DONE(sr_nn_call2(s, "jax.numpy.linalg.solve", a->v[0], a->v[1]));
  SrVal *x = a->v[0], *b = a->v[1];
  if (inexact2(s, &x, &b, "solve") < 0) return DONE(NULL);
  const SrType *at = ty(I, x), *bt = ty(I, b);
  char b1[256], b2[256];
  if (!(at->ndim >= 2 && (bt->ndim == at->ndim || bt->ndim == at->ndim - 1) &&
        at->dims[at->ndim - 1].size == at->dims[at->ndim - 2].size &&
        at->dims[at->ndim - 1].size == bt->dims[at->ndim - 2].size))
    return DONE(sr_raise(I, "ValueError",
                         "The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; got "
                         "a=%s and b=%s",
                         shape_str(b1, sizeof b1, at), shape_str(b2, sizeof b2, bt)));
  SrVal *c = chol(s, f[1] ? x : mT(s, x), 0);
  if (c && !f[1]) c = mT(s, c);
  b = tri_vec(s, c, b, f[1], !f[1], 0);
  return DONE(tri_vec(s, c, b, f[1], f[1], 0));
}

/* solve(a, b, lower=False, overwrite_a=False, overwrite_b=False,
   debug=False, check_finite=True, assume_a='gen') */
static SrVal *sp_solve(SrInterp *I, SrArgs *a) {
  SrVal *p[8];
  int lower;
  if (sr_args_parse(I, a, "solve", "a, b, lower=, overwrite_a=, overwrite_b=, debug=, check_finite=, assume_a=", p) <
          0 ||
      flag(I, p[2], 0, "lower", &lower) < 0)
    return NULL;
  int pos = 0;
  SrVal *as = p[7];
  if (given(as)) {
    int ok = as->kind == SR_V_STR;
#define ISA(x) (ok && as->str.n == strlen(x) && !memcmp(as->str.s, x, as->str.n))
    if (ISA("pos")) pos = 1;
    else if (!(ISA("gen") || ISA("sym") || ISA("her"))) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, as);
      sr_raise(I, "ValueError", "Expected assume_a to be one of ['gen', 'sym', 'her', 'pos']; got %s", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
#undef ISA
  }
  return sr_api_jit(I, "_solve", sp_solve_body, flags(pos, lower, 0, 0), 2, p);
}

/* _qr(a, mode, pivoting): lax_linalg.qr, mode 'full' / 'r' full matrices,
   'economic' not; (q, r), (r,) for 'r' */
static SrVal *sp_qr_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "qr");
  const char *kw[2] = {"pivoting", "full_matrices"};
  SrVal *kv[2] = {BOOL(0), BOOL(f[0])};
  SrVal *qr = x ? kcall(s, "jax.lax.linalg.qr", 1, &x, 2, kw, kv) : NULL;
  if (!qr) return DONE(NULL);
  if (f[1]) {
    SrVal *it[1] = {item(s, qr, 1)};
    return DONE(KEEP(tuple_of(1, it)));
  }
  SrVal *it[2] = {item(s, qr, 0), item(s, qr, 1)};
  return DONE(KEEP(tuple_of(2, it)));
}

/* qr(a, overwrite_a=False, lwork=None, mode='full', pivoting=False, check_finite=True) */
static SrVal *sp_qr(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  int piv;
  if (sr_args_parse(I, a, "qr", "a, overwrite_a=, lwork=, mode=, pivoting=, check_finite=", p) < 0 ||
      flag(I, p[4], 0, "pivoting", &piv) < 0)
    return NULL;
  int full = 1, r_only = 0;
  if (given(p[3])) {
    SrVal *m = p[3];
    int ok = m->kind == SR_V_STR;
#define ISM(x) (ok && m->str.n == strlen(x) && !memcmp(m->str.s, x, m->str.n))
    if (ISM("full")) full = 1;
    else if (ISM("r")) full = 1, r_only = 1;
    else if (ISM("economic")) full = 0;
    else {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, m);
      sr_raise(I, "ValueError", "Unsupported QR decomposition mode '%s'", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
#undef ISM
  }
  if (piv) return sr_raise(I, "NotImplementedError", "jax.scipy.linalg.qr's pivoting=True is not implemented");
  return sr_api_jit(I, "_qr", sp_qr_body, flags(full, r_only, 0, 0), 1, &p[0]);
}

static SrVal *sp_svd_body(SrInterp *I, SrArgs *a) {
  const int *f = cur_flags(I);
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "svd");
  const char *kw[2] = {"full_matrices", "compute_uv"};
  SrVal *kv[2] = {BOOL(f[0]), BOOL(f[1])};
  return DONE(x ? kcall(s, "jax.lax.linalg.svd", 1, &x, 2, kw, kv) : NULL);
}

/* svd(a, full_matrices=True, compute_uv=True, overwrite_a=False,
   check_finite=True, lapack_driver='gesdd'): jit[name=_svd] */
static SrVal *sp_svd(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  int full, uv;
  if (sr_args_parse(I, a, "svd", "a, full_matrices=, compute_uv=, overwrite_a=, check_finite=, lapack_driver=", p) <
          0 ||
      flag(I, p[1], 1, "full_matrices", &full) < 0 || flag(I, p[2], 1, "compute_uv", &uv) < 0)
    return NULL;
  return sr_api_jit(I, "_svd", sp_svd_body, flags(full, uv, 0, 0), 1, &p[0]);
}

/* block_diag(*arrs): each (atleast_2d) padded to the total columns, concatenated */
static SrVal *sp_block_diag(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "block_diag() got an unexpected keyword argument");
  int n = a->n;
  if (n > 64) return sr_raise(I, "NotImplementedError", "block_diag of more than 64 arrays");
  SCOPE(I);
  SrVal *xs[64] = {0};
  int64_t zsh[2] = {1, 0};
  if (n == 0) {
    SrVal *shv = KEEP(sr_int_tuple(zsh, 2));
    xs[0] = sr_nn_call1(s, "jax.numpy.zeros", shv);
    n = 1;
  } else {
    for (int i = 0; i < n; i++) xs[i] = a->v[i];
  }
  if (!xs[0]) return DONE(NULL);
  for (int i = 0; i < n; i++)
    if (!(xs[i] = KEEP(sr_jnp_asarray(I, xs[i], -1)))) return DONE(NULL);
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, n, xs, &weak);
  for (int i = 0; i < n; i++) {
    if (ty(I, xs[i])->ndim > 2) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, xs[i]);
      sr_raise(I, "ValueError", "Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got %s at argument %d.",
               sr_buf_str(&b), i);
      sr_buf_free(&b);
      return DONE(NULL);
    }
    xs[i] = KEEP(sr_lax_convert(I, xs[i], dt, weak, NULL));
    xs[i] = sr_nn_call1(s, "jax.numpy.atleast_2d", xs[i]);
    if (!xs[i]) return DONE(NULL);
  }
  int64_t total = 0, cur = 0;
  for (int i = 0; i < n; i++) total += ty(I, xs[i])->dims[1].size;
  SrVal *zero = sr_nn_typed_scalar(s, 0.0, dt);
  for (int i = 0; i < n; i++) {
    int64_t cols = ty(I, xs[i])->dims[1].size, cfg[6] = {0, 0, 0, cur, total - cols - cur, 0};
    xs[i] = zero ? KEEP(sr_lax_pad(I, xs[i], zero, cfg, 2)) : NULL;
    if (!xs[i]) return DONE(NULL);
    cur += cols;
  }
  SrVal *it[64];
  for (int i = 0; i < n; i++) it[i] = sr_ref(xs[i]);
  SrVal *list = KEEP(sr_tuple(NULL, n, it));
  const char *kw[1] = {"axis"};
  SrVal *kv[1] = {INT(0)};
  return DONE(kcall(s, "jax.numpy.concatenate", 1, &list, 1, kw, kv));
}

/* ---- expm (scipy/linalg.py: Pade approximants, scaling and squaring) ---- */

/* jnp.dot(x, y, precision=lax.Precision.HIGHEST), the precision as its name */
static SrVal *pdot(SrNnScope *s, SrVal *x, SrVal *y) {
  SrVal *hi = KEEP(sr_str(NULL, "highest", 7)); /* lax.Precision.HIGHEST */
  if (!x || !y) return NULL;
  SrVal *v[2] = {x, y};
  const char *kw[1] = {"precision"};
  return kcall(s, "jax.numpy.dot", 2, v, 1, kw, &hi);
}

/* c[0] * m[0] + c[1] * m[1] + ..., left to right */
static SrVal *lin(SrNnScope *s, int n, const double *c, SrVal **m) {
  SrVal *r = NULL;
  for (int i = 0; i < n; i++) {
    SrVal *t = OP(MUL, sr_nn_float(s, c[i]), m[i]);
    r = i ? OP(ADD, r, t) : t;
  }
  return r;
}

/* _pade3 .. _pade13: (U, V) */
static SrVal *pade(SrInterp *I, SrArgs *a, int deg) {
  static const double b3[] = {120., 60., 12., 1.}, b5[] = {30240., 15120., 3360., 420., 30., 1.},
                      b7[] = {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.},
                      b9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960.,
                              90., 1.},
                      b13[] = {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
                               129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
                               40840800., 960960., 16380., 182., 1.};
  SCOPE(I);
  SrVal *A = a->v[0];
  const SrType *t = ty(I, A);
  if (!t) return DONE(NULL);
  SrVal *ev[2] = {INT(t->dims[0].size), INT(t->dims[1].size)}, *dtv = KEEP(sr_dtype_val(NULL, t->dtype));
  const char *dk[1] = {"dtype"};
  SrVal *id = kcall(s, "jax.numpy.eye", 2, ev, 1, dk, &dtv);
  SrVal *A2 = pdot(s, A, A), *A4 = deg >= 5 ? pdot(s, A2, A2) : NULL, *A6 = deg >= 7 ? pdot(s, A4, A2) : NULL;
  SrVal *U = NULL, *V = NULL;
  if (deg == 3) {
    U = pdot(s, A, lin(s, 2, (double[]){b3[3], b3[1]}, (SrVal *[]){A2, id}));
    V = lin(s, 2, (double[]){b3[2], b3[0]}, (SrVal *[]){A2, id});
  } else if (deg == 5) {
    U = pdot(s, A, lin(s, 3, (double[]){b5[5], b5[3], b5[1]}, (SrVal *[]){A4, A2, id}));
    V = lin(s, 3, (double[]){b5[4], b5[2], b5[0]}, (SrVal *[]){A4, A2, id});
  } else if (deg == 7) {
    U = pdot(s, A, lin(s, 4, (double[]){b7[7], b7[5], b7[3], b7[1]}, (SrVal *[]){A6, A4, A2, id}));
    V = lin(s, 4, (double[]){b7[6], b7[4], b7[2], b7[0]}, (SrVal *[]){A6, A4, A2, id});
  } else if (deg == 9) {
    SrVal *A8 = pdot(s, A6, A2);
    U = pdot(s, A, lin(s, 5, (double[]){b9[9], b9[7], b9[5], b9[3], b9[1]}, (SrVal *[]){A8, A6, A4, A2, id}));
    V = lin(s, 5, (double[]){b9[8], b9[6], b9[4], b9[2], b9[0]}, (SrVal *[]){A8, A6, A4, A2, id});
  } else {
    SrVal *u1 = pdot(s, A6, lin(s, 3, (double[]){b13[13], b13[11], b13[9]}, (SrVal *[]){A6, A4, A2}));
    SrVal *u2 = lin(s, 4, (double[]){b13[7], b13[5], b13[3], b13[1]}, (SrVal *[]){A6, A4, A2, id});
    U = pdot(s, A, OP(ADD, u1, u2));
    SrVal *v1 = pdot(s, A6, lin(s, 3, (double[]){b13[12], b13[10], b13[8]}, (SrVal *[]){A6, A4, A2}));
    V = OP(ADD, v1, lin(s, 4, (double[]){b13[6], b13[4], b13[2], b13[0]}, (SrVal *[]){A6, A4, A2, id}));
  }
  SrVal *it[2] = {U, V};
  return DONE(U && V ? KEEP(tuple_of(2, it)) : NULL);
}

static SrVal *pade3(SrInterp *I, SrArgs *a) { return pade(I, a, 3); }
static SrVal *pade5(SrInterp *I, SrArgs *a) { return pade(I, a, 5); }
static SrVal *pade7(SrInterp *I, SrArgs *a) { return pade(I, a, 7); }
static SrVal *pade9(SrInterp *I, SrArgs *a) { return pade(I, a, 9); }
static SrVal *pade13(SrInterp *I, SrArgs *a) { return pade(I, a, 13); }

/* _calc_P_Q(A): (P, Q, n_squarings) */
static SrVal *calc_pq_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *A = a->v[0];
  const SrType *t = ty(I, A);
  if (!t) return DONE(NULL);
  if (t->ndim != 2 || t->dims[0].size != t->dims[1].size)
    return DONE(sr_raise(I, "ValueError", "expected A to be a square matrix"));
  int f64 = t->dtype == SR_F64;
  if (t->dtype != SR_F32 && !f64) return DONE(sr_raise(I, "TypeError", "A.dtype=%s is not supported.", sr_dtype_name(t->dtype)));
  SrVal *l1 = sr_nn_call2(s, "jax.numpy.linalg.norm", A, INT(1));
  SrVal *lg = sr_nn_call1(s, "jax.numpy.log2", OP(DIV, l1, sr_nn_float(s, f64 ? 5.371920351148152 : 3.925724783138660)));
  SrVal *nsq = sr_nn_call2(s, "jax.numpy.maximum", INT(0), sr_nn_call1(s, "jax.numpy.floor", lg));
  SrVal *dtv = KEEP(sr_dtype_val(NULL, t->dtype));
  SrVal *nst = nsq ? KEEP(sr_lax_convert(I, nsq, t->dtype, 0, NULL)) : NULL;
  A = OP(DIV, A, OP(POW, INT(2), nst));
  static const double c64[] = {1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                               2.097847961257068e+000},
                      c32[] = {4.258730016922831e-001, 1.880152677804762e+000};
  int nc = f64 ? 4 : 2;
  SrVal *cv[4];
  for (int i = 0; i < nc; i++) cv[i] = sr_ref(sr_nn_float(s, f64 ? c64[i] : c32[i]));
  SrVal *clist = KEEP(sr_tuple(NULL, nc, cv));
  const char *dk[1] = {"dtype"};
  SrVal *l1dt = l1 ? KEEP(sr_dtype_val(NULL, ty(I, l1)->dtype)) : NULL;
  SrVal *conds = l1dt ? kcall(s, "jax.numpy.array", 1, &clist, 1, dk, &l1dt) : NULL;
  (void)dtv;
  SrVal *idx = sr_nn_call2(s, "jax.numpy.digitize", l1, conds);
  SrVal *fs[5] = {KEEP(sr_builtin_with("_pade3", pade3, NULL, NULL)), KEEP(sr_builtin_with("_pade5", pade5, NULL, NULL)),
                  KEEP(sr_builtin_with("_pade7", pade7, NULL, NULL)), KEEP(sr_builtin_with("_pade9", pade9, NULL, NULL)),
                  KEEP(sr_builtin_with("_pade13", pade13, NULL, NULL))};
  int nf = f64 ? 5 : 3;
  for (int i = 0; i < nf; i++) sr_ref(fs[i]);
  SrVal *branches = KEEP(sr_tuple(NULL, nf, fs));
  SrVal *sv[3] = {idx, branches, A};
  SrVal *uv = idx && A ? sr_nn_call(s, "jax.lax.switch", 3, sv, 0, NULL, NULL) : NULL;
  SrVal *U = item(s, uv, 0), *V = item(s, uv, 1);
  SrVal *P = OP(ADD, U, V), *Q = OP(ADD, sr_nn_call1(s, "jax.numpy.negative", U), V);
  SrVal *it[3] = {P, Q, nsq};
  return DONE(P && Q && nsq ? KEEP(tuple_of(3, it)) : NULL);
}

typedef struct Expm {
  int upper;
  int64_t max_sq;
  SrVal *nsq; /* the traced n_squarings the branches and the loop close over */
} Expm;

static void expm_free(void *d) {
  Expm *e = d;
  if (e) sr_unref(e->nsq);
  free(e);
}

static SrVal *sq_precise(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(pdot(s, a->v[0], a->v[0]));
}

static SrVal *sq_ident(SrInterp *I, SrArgs *a) { return sr_ref(a->v[0]); }

/* _scan_f(c, i): (cond(i < n_squarings, square, identity, c), None) */
static SrVal *scan_f(SrInterp *I, SrArgs *a) {
  Expm *e = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *sq = KEEP(sr_builtin_with("_squaring_precise", sq_precise, NULL, NULL));
  SrVal *id = KEEP(sr_builtin_with("_identity", sq_ident, NULL, NULL));
  SrVal *cv[4] = {OP(LT, a->v[1], e->nsq), sq, id, a->v[0]};
  SrVal *c = cv[0] ? sr_nn_call(s, "jax.lax.cond", 4, cv, 0, NULL, NULL) : NULL;
  SrVal *it[2] = {c, sr_none()};
  return DONE(c ? KEEP(tuple_of(2, it)) : NULL);
}

/* _squaring(R, n_squarings, max_squarings): a scan of max_squarings conds */
static SrVal *squaring_body(SrInterp *I, SrArgs *a) {
  Expm *e0 = sr_current_builtin(I)->data;
  SCOPE(I);
  Expm *e = sr_xmalloc(sizeof *e);
  *e = *e0;
  e->nsq = sr_ref(a->v[1]);
  SrVal *f = KEEP(sr_builtin_with("_scan_f", scan_f, e, expm_free));
  SrVal *mv = INT(e->max_sq), *ndt = KEEP(sr_dtype_val(NULL, ty(I, a->v[1])->dtype));
  const char *dk[1] = {"dtype"};
  SrVal *xs = kcall(s, "jax.numpy.arange", 1, &mv, 1, dk, &ndt);
  SrVal *sv[3] = {f, a->v[0], xs};
  SrVal *r = xs ? sr_nn_call(s, "jax.lax.scan", 3, sv, 0, NULL, NULL) : NULL;
  return DONE(item(s, r, 0));
}

static SrVal *expm_nan(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *A = item(s, a->v[0], 0);
  return DONE(sr_nn_full_like(s, A, sr_nn_float(s, NAN)));
}

/* _compute((A, P, Q)): R = solve(Q, P) (solve_triangular if upper), squared */
static SrVal *expm_compute(SrInterp *I, SrArgs *a) {
  Expm *e = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *P = item(s, a->v[0], 1), *Q = item(s, a->v[0], 2);
  SrVal *R = e->upper ? sr_nn_call2(s, "jax.scipy.linalg.solve_triangular", Q, P)
                      : sr_nn_call2(s, "jax.numpy.linalg.solve", Q, P);
  Expm *d = sr_xmalloc(sizeof *d);
  *d = *e;
  d->nsq = NULL;
  SrVal *args[2] = {R, e->nsq};
  return DONE(R ? KEEP(sr_api_jit(I, "_squaring", squaring_body, d, 2, args)) : (free(d), NULL));
}

static SrVal *expm_body(SrInterp *I, SrArgs *a);

static SrVal *expm_body(SrInterp *I, SrArgs *a) {
  Expm *e0 = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *A = inexact1(s, a->v[0], "expm");
  const SrType *t = ty(I, A);
  char b[256];
  if (!t) return DONE(NULL);
  if (t->ndim < 2 || t->dims[t->ndim - 1].size != t->dims[t->ndim - 2].size)
    return DONE(sr_raise(I, "ValueError", "Expected A to be a (batched) square matrix, got A.shape=%s.",
                         shape_str(b, sizeof b, t)));
  if (t->ndim > 2) { /* jnp.vectorize over (n,n)->(n,n): vmap over each batch dim */
    Expm *d = sr_xmalloc(sizeof *d);
    *d = *e0;
    d->nsq = NULL;
    SrVal *f = KEEP(sr_builtin_with("expm", expm_body, d, expm_free));
    SrVal *vm = sr_lookup_qualname("jax.vmap");
    for (int i = 0; i < t->ndim - 2 && f; i++) f = vm ? KEEP(sr_call1(I, vm, f)) : NULL;
    return DONE(f ? KEEP(sr_call1(I, f, A)) : NULL);
  }
  SrVal *pq = KEEP(sr_api_jit(I, "_calc_P_Q", calc_pq_body, NULL, 1, &A));
  SrVal *P = item(s, pq, 0), *Q = item(s, pq, 1), *nsq = item(s, pq, 2);
  if (!nsq) return DONE(NULL);
  Expm *d = sr_xmalloc(sizeof *d);
  *d = *e0;
  d->nsq = sr_ref(nsq);
  SrVal *comp = KEEP(sr_builtin_with("_compute", expm_compute, d, expm_free));
  SrVal *nan = KEEP(sr_builtin_with("_nan", expm_nan, NULL, NULL));
  SrVal *ops[3] = {A, P, Q};
  SrVal *opt = KEEP(tuple_of(3, ops));
  SrVal *cv[4] = {OP(GT, nsq, INT(e0->max_sq)), nan, comp, opt};
  return DONE(cv[0] ? sr_nn_call(s, "jax.lax.cond", 4, cv, 0, NULL, NULL) : NULL);
}

/* expm(A, *, upper_triangular=False, max_squarings=16): jit[name=expm] */
static SrVal *sp_expm(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  int upper;
  int64_t ms = 16;
  if (sr_args_parse(I, a, "expm", "A, *, upper_triangular=, max_squarings=", p) < 0 ||
      flag(I, p[1], 0, "upper_triangular", &upper) < 0 || (p[2] && sr_as_int(I, p[2], "max_squarings", &ms) < 0))
    return NULL;
  Expm *d = sr_xmalloc(sizeof *d);
  d->upper = upper;
  d->max_sq = ms;
  d->nsq = NULL;
  return sr_api_jit(I, "expm", expm_body, d, 1, &p[0]);
}

/* ---- jnp.linalg.svd(hermitian=True): through eigh ---- */

/* svd's hermitian branch: (w, v) = eigh(a) in JAX's names swapped (w the
   eigenvectors); s = |eigenvalues| sorted descending with their indices
   and signs (lax.sort, lax.rev), u the eigenvectors taken in that order,
   vh = _H(u * sign) */
static SrVal *svd_herm_body(SrInterp *I, SrArgs *a) {
  int uv = cur_flags(I)[0];
  SCOPE(I);
  SrVal *x = inexact1(s, a->v[0], "jnp.linalg.svd");
  SrVal *r = eigh2(s, x, 1, 1, 1, NULL, NULL);
  SrVal *w = item(s, r, 0), *v = item(s, r, 1);
  SrVal *sv = v ? sr_nn_call1(s, "jax.lax.abs", v) : NULL;
  const SrType *st = ty(I, sv);
  if (!st) return DONE(NULL);
  int nd = st->ndim;
  SrVal *dims = INT(nd - 1);
  SrVal *dl1 = KEEP(sr_tuple(NULL, 1, (SrVal *[]){sr_ref(dims)}));
  const char *rk[1] = {"dimensions"};
  if (!uv) {
    const char *dk[1] = {"dimension"};
    SrVal *dv[1] = {INT(-1)};
    SrVal *so = kcall(s, "jax.lax.sort", 1, &sv, 1, dk, dv);
    return DONE(so ? kcall(s, "jax.lax.rev", 1, &so, 1, rk, &dl1) : NULL);
  }
  SrVal *sign = sr_nn_call1(s, "jax.lax.sign", v);
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) sh[i] = st->dims[i].size;
  SrVal *idxs = KEEP(sr_lax_iota(I, SR_U32, sh, nd, nd - 1, NULL));
  SrVal *ops = sign && idxs ? KEEP(tuple_of(3, (SrVal *[]){sv, idxs, sign})) : NULL;
  const char *sk[2] = {"dimension", "num_keys"};
  SrVal *skv[2] = {INT(-1), INT(1)};
  SrVal *so = ops ? kcall(s, "jax.lax.sort", 1, &ops, 2, sk, skv) : NULL;
  SrVal *ss = item(s, so, 0), *si = item(s, so, 1), *sg = item(s, so, 2);
  ss = ss ? kcall(s, "jax.lax.rev", 1, &ss, 1, rk, &dl1) : NULL;
  si = si ? kcall(s, "jax.lax.rev", 1, &si, 1, rk, &dl1) : NULL;
  sg = sg ? kcall(s, "jax.lax.rev", 1, &sg, 1, rk, &dl1) : NULL;
  SrVal *ie = si ? sr_nn_call2(s, "jax.numpy.expand_dims", si, INT(-2)) : NULL;
  const char *ak[1] = {"axis"};
  SrVal *av[1] = {INT(-1)};
  SrVal *tv[2] = {w, ie};
  SrVal *u = ie ? kcall(s, "jax.numpy.take_along_axis", 2, tv, 1, ak, av) : NULL;
  SrVal *sge = sg ? sr_nn_call2(s, "jax.numpy.expand_dims", sg, INT(-2)) : NULL;
  SrVal *vh = u && sge ? mT(s, OP(MUL, u, sge)) : NULL;
  if (!vh || !ss) return DONE(NULL);
  SrVal *it[3] = {u, ss, vh};
  return DONE(KEEP(named(I, "SVDResult", "U S Vh", 3, it)));
}

SrVal *sr_linalg16_svd_hermitian(SrInterp *I, SrVal *a, int compute_uv) {
  return sr_api_jit(I, "svd", svd_herm_body, flags(compute_uv, 0, 0, 0), 1, &a);
}

/* ---- registration ---- */

void sr_linalg16_api_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.lax.linalg.cholesky", lax_cholesky,
       "cholesky(x, *, symmetrize_input=True): L lower triangular with x = L L^T, one cholesky equation (LAPACK's potrf)"},
      {"jax.lax.linalg.lu", lax_lu,
       "lu(x): (lu, pivots, permutation), LU with partial pivoting, one lu equation (LAPACK's getrf)"},
      {"jax.lax.linalg.lu_pivots_to_permutation", lax_lu_pivots,
       "lu_pivots_to_permutation(pivots, permutation_size): the row swaps as a permutation"},
      {"jax.lax.linalg.eigh", lax_eigh,
       "eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None, "
       "implementation=None): (v, w), one eigh equation (LAPACK's syevd)"},
      {"jax.numpy.linalg.cholesky", jnp_cholesky,
       "cholesky(a, *, upper=False, symmetrize_input=True): jit[name=cholesky], the Cholesky factor"},
      {"jax.numpy.linalg.eigh", jnp_eigh,
       "eigh(a, UPLO=None, symmetrize_input=True): jit[name=eigh], EighResult(eigenvalues, eigenvectors)"},
      {"jax.numpy.linalg.eigvalsh", jnp_eigvalsh,
       "eigvalsh(a, UPLO='L', *, symmetrize_input=True): jit[name=eigvalsh], the eigenvalues ascending"},
      {"jax.numpy.linalg.eig", jnp_eig, "eig(a): EigResult(eigenvalues, eigenvectors), complex, through LAPACK's geev"},
      {"jax.numpy.linalg.eigvals", jnp_eigvals, "eigvals(a): jit[name=eigvals], the complex eigenvalues"},
      {"jax.lax.linalg.eig", lax_eig,
       "eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, enable_eigvec_derivs=False, "
       "implementation=None): [w, vl, vr], one eig equation (LAPACK's geev)"},
      {"jax.numpy.linalg.slogdet", jnp_slogdet,
       "slogdet(a, *, method=None): jit[name=slogdet], SlogdetResult(sign, logabsdet) through lu"},
      {"jax.numpy.linalg.det", jnp_det, "det(a): jit[name=det], the determinant"},
      {"jax.numpy.linalg.solve", jnp_solve, "solve(a, b): jit[name=solve], x with a @ x = b, through lu"},
      {"jax.numpy.linalg.inv", jnp_inv, "inv(a): jit[name=inv], solve(a, eye)"},
      {"jax.numpy.linalg.outer", la_outer, "outer(x1, x2, /): the outer product of two vectors"},
      {"jax.numpy.linalg.cross", la_cross, "cross(x1, x2, /, *, axis=-1): the cross product of 3-vectors"},
      {"jax.numpy.linalg.matmul", la_matmul,
       "matmul(x1, x2, /, *, precision=None, preferred_element_type=None): jnp.matmul"},
      {"jax.numpy.linalg.trace", la_trace, "trace(x, /, *, offset=0, dtype=None): the trace over the last two axes"},
      {"jax.numpy.linalg.matrix_power", la_matrix_power,
       "matrix_power(a, n): jit[name=matrix_power], a to the integer power n (inv for n < 0)"},
      {"jax.numpy.linalg.multi_dot", la_multi_dot,
       "multi_dot(arrays, *, precision=None): the chained product, one einsum"},
      {"jax.numpy.linalg.tensorinv", la_tensorinv, "tensorinv(a, ind=2): the inverse of a as a tensor"},
      {"jax.numpy.linalg.tensorsolve", la_tensorsolve, "tensorsolve(a, b, axes=None): x with tensordot(a, x) = b"},
      {"jax.numpy.linalg.cond", la_cond, "cond(x, p=None): jit[name=cond], the condition number in norm p"},
      {"jax.numpy.linalg.matrix_rank", la_matrix_rank,
       "matrix_rank(M, rtol=None, *, hermitian=False, tol=None): jit[name=matrix_rank], the singular values above rtol"},
      {"jax.numpy.linalg.pinv", la_pinv,
       "pinv(a, rtol=None, hermitian=False, *, rcond=None): jit[name=_pinv], the pseudo-inverse through svd"},
      {"jax.numpy.linalg.lstsq", la_lstsq,
       "lstsq(a, b, rcond=None, *, numpy_resid=False): jit[name=_lstsq], (x, resid, rank, s) through svd"},
      {"jax.scipy.linalg.cholesky", sp_cholesky,
       "cholesky(a, lower=False, overwrite_a=False, check_finite=True): jit[name=_cholesky], upper by default"},
      {"jax.scipy.linalg.cho_factor", sp_cho_factor,
       "cho_factor(a, lower=False, overwrite_a=False, check_finite=True): (c, lower)"},
      {"jax.scipy.linalg.cho_solve", sp_cho_solve,
       "cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True): jit[name=_cho_solve], two triangular solves"},
      {"jax.scipy.linalg.solve_triangular", sp_solve_triangular,
       "solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None, "
       "check_finite=True): jit[name=_solve_triangular]"},
      {"jax.scipy.linalg.lu_factor", sp_lu_factor,
       "lu_factor(a, overwrite_a=False, check_finite=True): jit[name=lu_factor], (lu, piv)"},
      {"jax.scipy.linalg.lu_solve", sp_lu_solve,
       "lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True): jit[name=lu_solve]"},
      {"jax.scipy.linalg.lu", sp_lu,
       "lu(a, permute_l=False, overwrite_a=False, check_finite=True): jit[name=lu], (p, l, u) or (p @ l, u)"},
      {"jax.scipy.linalg.eigh", sp_eigh,
       "eigh(a, b=None, lower=True, eigvals_only=False, ...): jit[name=_eigh], (w, v) or w"},
      {"jax.scipy.linalg.det", sp_det, "det(a, overwrite_a=False, check_finite=True): jnp.linalg.det"},
      {"jax.scipy.linalg.inv", sp_inv, "inv(a, overwrite_a=False, check_finite=True): jnp.linalg.inv"},
      {"jax.scipy.linalg.solve", sp_solve,
       "solve(a, b, lower=False, ..., assume_a='gen'): jit[name=_solve], jnp.linalg.solve or (pos) cho_solve"},
      {"jax.scipy.linalg.qr", sp_qr,
       "qr(a, overwrite_a=False, lwork=None, mode='full', pivoting=False, check_finite=True): jit[name=_qr], (q, r) "
       "or (r,)"},
      {"jax.scipy.linalg.svd", sp_svd,
       "svd(a, full_matrices=True, compute_uv=True, ...): jit[name=_svd], (u, s, vt) or s"},
      {"jax.scipy.linalg.block_diag", sp_block_diag, "block_diag(*arrs): the arrays on the diagonal of one matrix"},
      {"jax.scipy.linalg.expm", sp_expm,
       "expm(A, *, upper_triangular=False, max_squarings=16): jit[name=expm], the matrix exponential (Pade, "
       "scaling and squaring)"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
