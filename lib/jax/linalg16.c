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
 * wraps the same in custom_linear_solve (absent here), so the values and
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
  int64_t perm[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) perm[i] = i;
  perm[t->ndim - 2] = t->ndim - 1;
  perm[t->ndim - 1] = t->ndim - 2;
  return KEEP(sr_lax_transpose(s->I, x, perm, t->ndim));
}

/* one promoted operand, promote_dtypes_inexact(ensure_arraylike(a)) */
static SrVal *inexact1(SrNnScope *s, SrVal *v, const char *fname) {
  SrVal *x = v;
  return sr_nn_promote_inexact(s, 1, &x, fname) < 0 ? NULL : x;
}

/* the item i of a tuple value, kept */
static SrVal *item(SrNnScope *s, SrVal *t, int i) {
  if (!t) return NULL;
  if (!sr_is_seq(t) || t->seq.n <= (uint32_t)i) return sr_raise(s->I, "TypeError", "internal error: not a tuple");
  return t->seq.items[i];
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
static SrVal *symmetrize(SrNnScope *s, SrVal *x) { return OP(DIV, OP(ADD, x, mT(s, x)), sr_nn_float(s, 2.0)); }

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
  return DONE(x ? sr_bindv(I, SR_P_lu_pivots_to_permutation, 1, &x, "permutation_size", sr_int(NULL, size), NULL)
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
  SrVal *r = eigh2(s, inexact1(s, a->v[0], f[2] ? "jnp.linalg.eigvalsh" : "jnp.linalg.eigh"), f[0], f[1], 1, NULL,
                   NULL);
  if (!r) return DONE(NULL);
  if (f[2]) return DONE(item(s, r, 1));
  SrVal *it[2] = {item(s, r, 1), item(s, r, 0)};
  return DONE(KEEP(named(I, "EighResult", "eigenvalues eigenvectors", 2, it)));
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
  return sr_api_jit(I, "eigvalsh", eigh_body, flags(lower, sym, 1, 0), 1, &p[0]);
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
  return DONE(r ? named(I, "SlogdetResult", "sign logabsdet", 2, it) : NULL);
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
  int64_t m = at->dims[na - 1].size;
  if (at->dims[na - 2].size != m || (vec ? bt->dims[0].size : bt->dims[nb - 2].size) != m)
    return DONE(sr_raise(I, "ValueError",
                         "The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; got "
                         "a=%s and b=%s",
                         shape_str(b1, sizeof b1, at), shape_str(b2, sizeof b2, bt)));
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
static int inexact2(SrNnScope *s, SrVal **a, SrVal **b, const char *fname) {
  SrVal *ab[2] = {*a, *b};
  if (sr_nn_promote_inexact(s, 2, ab, fname) < 0) return -1;
  SrDtype dt = ty(s->I, ab[0])->dtype;
  *a = KEEP(sr_jnp_asarray(s->I, *a, -1));
  *b = *a ? KEEP(sr_jnp_asarray(s->I, *b, -1)) : NULL;
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
      sr_val_str(&b, as);
      sr_raise(I, "ValueError", "Expected assume_a to be one of ['gen', 'sym', 'her', 'pos'], got %s.", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
#undef ISA
  }
  return sr_api_jit(I, "_solve", sp_solve_body, flags(pos, lower, 0, 0), 2, p);
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
      {"jax.numpy.linalg.slogdet", jnp_slogdet,
       "slogdet(a, *, method=None): jit[name=slogdet], SlogdetResult(sign, logabsdet) through lu"},
      {"jax.numpy.linalg.det", jnp_det, "det(a): jit[name=det], the determinant"},
      {"jax.numpy.linalg.solve", jnp_solve, "solve(a, b): jit[name=solve], x with a @ x = b, through lu"},
      {"jax.numpy.linalg.inv", jnp_inv, "inv(a): jit[name=inv], solve(a, eye)"},
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
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
