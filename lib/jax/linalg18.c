/* linalg18.c: jax.lax.linalg's hessenberg, householder_product, ormqr,
 * schur and tridiagonal (one equation each, lax/linalg.py), and what
 * jax.scipy.linalg (scipy/linalg.py) builds on them and on svd, expm,
 * while_loop, fori_loop and scan: hessenberg, schur, qr_multiply, polar,
 * expm_frechet, eigh_tridiagonal, sqrtm and solve_sylvester, in the jits
 * JAX's jit-decorated functions are.
 *
 * schur's output='complex' and sqrtm are JAX's (the complex Schur form,
 * gees of the operand as complex).  solve_sylvester (method='schur')
 * still takes the real Schur form where JAX takes the complex one, which
 * is the same triangular factorization when every eigenvalue is real, and
 * raises (concrete operands) or gives NaN (traced ones) where a 2x2 block
 * shows a complex pair; its method='eigen' raises.  polar's method='qdwh' (jax._src.tpu.linalg.qdwh, absent here)
 * is computed through the SVD as method='svd' is, with qdwh's own shape
 * restrictions: the same factors to rounding, another jaxpr.
 * eigh_tridiagonal computes the eigenvalues only (its eigenvectors need
 * tridiagonal_solve).  Registered by sr_linalg18_api_init (jax.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "jax/np_host.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/mem.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, v)
#define DONE(v) sr_nn_done(s, v)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define C3(q, x, y, z) sr_nn_call3(s, q, x, y, z)
#define INT(i) sr_nn_int(s, i)
#define FL(d) sr_nn_float(s, d)
#define BOOL(b) KEEP(sr_bool(b))

static const SrType *ty(SrInterp *I, SrVal *x) { return x ? sr_value_type(I, x) : NULL; }
static int given(SrVal *v) { return v && v->kind != SR_V_NONE; }

static int flag(SrInterp *I, SrVal *v, int dflt, const char *what, int *out) {
  *out = dflt;
  if (!given(v)) return 0;
  if (v->kind == SR_V_BOOL || v->kind == SR_V_INT) {
    *out = v->i != 0;
    return 0;
  }
  sr_raise(I, "TypeError", "%s must be a bool", what);
  return -1;
}

static int str_is(const SrVal *v, const char *lit) {
  return v && v->kind == SR_V_STR && v->str.n == strlen(lit) && !memcmp(v->str.s, lit, v->str.n);
}

/* a shape as Python prints a tuple */
static void shape_str(SrBuf *b, const SrType *t) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < t->ndim; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
  sr_buf_puts(b, t->ndim == 1 ? ",)" : ")");
}

/* the items, kept; a tuple the scope holds */
static SrVal *tup(SrNnScope *s, int n, SrVal **items) {
  SrVal *it[8];
  for (int i = 0; i < n; i++) {
    if (!items[i]) return NULL;
    it[i] = sr_ref(items[i]);
  }
  return KEEP(sr_tuple(NULL, n, it));
}

static SrVal *item(SrNnScope *s, SrVal *t, int i) {
  if (!t) return NULL;
  if (sr_is_seq(t) && t->seq.n > (uint32_t)i) return t->seq.items[i];
  return KEEP(sr_getitem(s->I, t, INT(i)));
}

/* the slice a:b (SL_NONE: absent) */
#define SL_NONE INT64_MIN
static SrVal *sl(SrNnScope *s, int64_t a, int64_t b) {
  return KEEP(sr_slice_new(a == SL_NONE ? sr_none() : sr_int(NULL, a), b == SL_NONE ? sr_none() : sr_int(NULL, b),
                           sr_none()));
}
static SrVal *ellipsis(SrNnScope *s) { return KEEP(sr_word(NULL, "Ellipsis", 8)); }

/* x[k0, k1, ...] */
static SrVal *ix(SrNnScope *s, SrVal *x, int n, SrVal **keys) {
  if (!x) return NULL;
  for (int i = 0; i < n; i++)
    if (!keys[i]) return NULL;
  SrVal *key = n == 1 ? keys[0] : tup(s, n, keys);
  return key ? KEEP(sr_getitem(s->I, x, key)) : NULL;
}
#define IX(x, ...) ix(s, x, (int)(sizeof((SrVal *[]){__VA_ARGS__}) / sizeof(SrVal *)), (SrVal *[]){__VA_ARGS__})

/* x.at[key].set(v) */
static SrVal *at_set(SrNnScope *s, SrVal *x, SrVal *key, SrVal *v) {
  if (!x || !key || !v) return NULL;
  SrVal *at = KEEP(sr_getattr(s->I, x, "at"));
  SrVal *k = at ? KEEP(sr_getitem(s->I, at, key)) : NULL;
  SrVal *set = k ? KEEP(sr_getattr(s->I, k, "set")) : NULL;
  SrArgs a = {1, &v, 0, NULL, NULL, NULL};
  return set ? KEEP(sr_call(s->I, set, &a)) : NULL;
}

static SrVal *kcall(SrNnScope *s, const char *q, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv) {
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  return sr_nn_call(s, q, n, v, nkw, kw, kwv);
}

/* x.mT: the last two axes swapped */
static SrVal *mT(SrNnScope *s, SrVal *x) { return C3("jax.numpy.swapaxes", x, INT(-1), INT(-2)); }

/* jnp.matmul(x, y, precision=HIGHEST) (hi) or x @ y */
static SrVal *mm(SrNnScope *s, SrVal *x, SrVal *y, int hi) {
  if (!hi) return OP(MATMUL, x, y);
  SrVal *v[2] = {x, y}, *p = KEEP(sr_str(NULL, "highest", 7));
  const char *kw[1] = {"precision"};
  return kcall(s, "jax.numpy.matmul", 2, v, 1, kw, &p);
}

static SrVal *dtype_of(SrNnScope *s, SrVal *x) {
  const SrType *t = ty(s->I, x);
  return t ? KEEP(sr_dtype_val(NULL, t->dtype)) : NULL;
}

/* jnp.zeros(shape, dtype) / jnp.ones */
static SrVal *filled(SrNnScope *s, const char *q, const int64_t *shape, int nd, SrVal *dt) {
  SrVal *it[SR_MAX_RANK];
  for (int i = 0; i < nd; i++) it[i] = sr_int(NULL, shape[i]);
  SrVal *sh = KEEP(sr_tuple(NULL, nd, it));
  const char *kw[1] = {"dtype"};
  return kcall(s, q, 1, &sh, 1, kw, &dt);
}

/* promote_dtypes_inexact(jnp.asarray(v) ...), in place: one inexact
   dtype, the ranks as given */
static int inexact(SrNnScope *s, int n, SrVal **v, const char *fname) {
  SrInterp *I = s->I;
  (void)fname;
  for (int i = 0; i < n; i++)
    if (!(v[i] = KEEP(sr_jnp_asarray(I, v[i], -1)))) return -1;
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, n, v, &weak);
  if (sr_dtype_is_int(dt) || dt == SR_BOOL) dt = I->jax->enable_x64 ? SR_F64 : SR_F32, weak = 0;
  for (int i = 0; i < n; i++)
    if (!(v[i] = KEEP(sr_lax_convert(I, v[i], dt, weak, NULL)))) return -1;
  return 0;
}

/* ensure_arraylike(name, v): an array or a scalar */
static int arraylike(SrInterp *I, const char *name, SrVal *v) {
  if (v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || sr_array_of(v) || sr_is_ndarray(v))
    return 0;
  sr_raise(I, "TypeError", "%s requires ndarray or scalar arguments, got <class '%s'> at position 0.", name,
           sr_val_kind_name(v));
  return -1;
}

static int concrete(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  return a ? a->kind == SR_AV_CONCRETE : v->kind == SR_V_INT || v->kind == SR_V_FLOAT || sr_is_ndarray(v);
}

/* ---- jax.lax.linalg ---- */

static SrVal *lax_hessenberg(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "hessenberg", "a", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  return DONE(x ? KEEP(sr_bindv(I, SR_P_hessenberg, 1, &x, NULL)) : NULL);
}

/* householder_product(a, taus): auto_insert_reshard, then the equation */
static SrVal *lax_householder_product(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "householder_product", "a, taus", p) < 0) return NULL;
  SCOPE(I);
  SrVal *x[2] = {KEEP(sr_jnp_asarray(I, p[0], -1)), KEEP(sr_jnp_asarray(I, p[1], -1))};
  if (!x[0] || !x[1]) return DONE(NULL);
  sr_ref(x[0]), sr_ref(x[1]);
  if (sr_auto_insert_reshard(I, 2, x) < 0) return DONE(NULL);
  KEEP(x[0]), KEEP(x[1]);
  return DONE(KEEP(sr_bindv(I, SR_P_householder_product, 2, x, NULL)));
}

/* ormqr(a, taus, c, *, left=True, transpose=False) */
static SrVal *lax_ormqr(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  int left, trans;
  if (sr_args_parse(I, a, "ormqr", "a, taus, c, *, left=, transpose=", p) < 0 ||
      flag(I, p[3], 1, "left", &left) < 0 || flag(I, p[4], 0, "transpose", &trans) < 0)
    return NULL;
  SCOPE(I);
  SrVal *x[3];
  for (int i = 0; i < 3; i++)
    if (!(x[i] = KEEP(sr_jnp_asarray(I, p[i], -1)))) return DONE(NULL);
  for (int i = 0; i < 3; i++) sr_ref(x[i]);
  if (sr_auto_insert_reshard(I, 3, x) < 0) return DONE(NULL);
  for (int i = 0; i < 3; i++) KEEP(x[i]);
  return DONE(KEEP(sr_bindv(I, SR_P_ormqr, 3, x, "left", sr_bool(left), "transpose", sr_bool(trans), NULL)));
}

/* schur(x, *, compute_schur_vectors=True, sort_eig_vals=False,
   select_callable=None): (T, Z), or (T,) */
static SrVal *lax_schur(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  int vecs, sort;
  if (sr_args_parse(I, a, "schur", "x, *, compute_schur_vectors=, sort_eig_vals=, select_callable=", p) < 0 ||
      flag(I, p[1], 1, "compute_schur_vectors", &vecs) < 0 || flag(I, p[2], 0, "sort_eig_vals", &sort) < 0)
    return NULL;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, p[0], -1));
  return DONE(x ? KEEP(sr_bindv(I, SR_P_schur, 1, &x, "compute_schur_vectors", sr_bool(vecs), "sort_eig_vals",
                                sr_bool(sort), "select_callable", given(p[3]) ? sr_ref(p[3]) : sr_none(), NULL))
                : NULL);
}

/* tridiagonal(a, *, lower=True): (a, d, e, taus) */
static SrVal *lax_tridiagonal(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int lower;
  if (sr_args_parse(I, a, "tridiagonal", "a, *, lower=", p) < 0 || flag(I, p[1], 1, "lower", &lower) < 0)
    return NULL;
  SCOPE(I);
  SrVal *x = sr_nn_array(s, p[0]);
  return DONE(x ? KEEP(sr_bindv(I, SR_P_tridiagonal, 1, &x, "lower", sr_bool(lower), NULL)) : NULL);
}

/* tridiagonal_solve(dl, d, du, b, *, perturb_singular=False): one
   tridiagonal_solve equation on the operands (core.auto_insert_reshard
   first) */
static SrVal *lax_tridiagonal_solve(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  int perturb;
  if (sr_args_parse(I, a, "tridiagonal_solve", "dl, d, du, b, *, perturb_singular=", p) < 0 ||
      flag(I, p[4], 0, "perturb_singular", &perturb) < 0)
    return NULL;
  SrVal *args[4] = {NULL, NULL, NULL, NULL}, *r = NULL;
  int ok = 1;
  for (int i = 0; i < 4 && ok; i++) ok = (args[i] = sr_jnp_asarray(I, p[i], -1)) != NULL;
  if (ok && sr_auto_insert_reshard(I, 4, args) == 0)
    r = sr_api_first(sr_bindv(I, SR_P_tridiagonal_solve, 4, args, "perturb_singular", sr_bool(perturb), NULL));
  for (int i = 0; i < 4; i++) sr_unref(args[i]);
  return r;
}

/* ---- jax.scipy.linalg.hessenberg ---- */

typedef struct Flag1 {
  int f;
} Flag1;

static void *flag1(int f) {
  Flag1 *d = sr_xmalloc(sizeof *d);
  d->f = f;
  return d;
}
static int cur_flag(SrInterp *I) { return ((Flag1 *)sr_current_builtin(I)->data)->f; }

/* hessenberg's body: h = triu(a_out, -1); q = householder_product(
   a_out[..., 1:, :-1], taus) in the block [[1, 0], [0, q]] */
static SrVal *hessenberg_body(SrInterp *I, SrArgs *a) {
  int calc_q = cur_flag(I);
  SCOPE(I);
  SrVal *x = a->v[0];
  const SrType *t = ty(I, x);
  if (!t) return DONE(sr_raise(I, "TypeError", "hessenberg expects an array"));
  if (t->ndim < 1) return DONE(sr_raise(I, "IndexError", "tuple index out of range"));
  int64_t n = t->dims[t->ndim - 1].size;
  if (n == 0) {
    SrVal *z = C1("jax.numpy.zeros_like", x);
    SrVal *it[2] = {z, z};
    return DONE(calc_q ? tup(s, 2, it) : z);
  }
  SrVal *r = KEEP(sr_bindv(I, SR_P_hessenberg, 1, &x, NULL));
  SrVal *a_out = item(s, r, 0), *taus = item(s, r, 1);
  SrVal *h = C2("jax.numpy.triu", a_out, INT(-1));
  if (!calc_q || !h) return DONE(h);
  SrVal *refl = IX(a_out, ellipsis(s), sl(s, 1, SL_NONE), sl(s, SL_NONE, -1));
  SrVal *q = C2("jax.lax.linalg.householder_product", refl, taus);
  int nb = t->ndim - 2;
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < nb; i++) sh[i] = t->dims[i].size;
  SrVal *dt = dtype_of(s, a_out);
  sh[nb] = 1, sh[nb + 1] = 1;
  SrVal *one = filled(s, "jax.numpy.ones", sh, nb + 2, dt);
  sh[nb + 1] = n - 1;
  SrVal *z01 = filled(s, "jax.numpy.zeros", sh, nb + 2, dt);
  sh[nb] = n - 1, sh[nb + 1] = 1;
  SrVal *z10 = filled(s, "jax.numpy.zeros", sh, nb + 2, dt);
  if (!q || !one || !z01 || !z10) return DONE(NULL);
  SrVal *row0 = sr_seq(NULL, SR_V_LIST, 2), *row1 = sr_seq(NULL, SR_V_LIST, 2), *rows = sr_seq(NULL, SR_V_LIST, 2);
  sr_seq_push(NULL, row0, sr_ref(one));
  sr_seq_push(NULL, row0, sr_ref(z01));
  sr_seq_push(NULL, row1, sr_ref(z10));
  sr_seq_push(NULL, row1, sr_ref(q));
  sr_seq_push(NULL, rows, row0);
  sr_seq_push(NULL, rows, row1);
  SrVal *qb = C1("jax.numpy.block", KEEP(rows));
  SrVal *it[2] = {h, qb};
  return DONE(qb ? tup(s, 2, it) : NULL);
}

/* hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
   jit[name=hessenberg] */
static SrVal *sp_hessenberg(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  int calc_q;
  if (sr_args_parse(I, a, "hessenberg", "a, *, calc_q=, overwrite_a=, check_finite=", p) < 0 ||
      flag(I, p[1], 0, "calc_q", &calc_q) < 0)
    return NULL;
  return sr_api_jit(I, "hessenberg", hessenberg_body, flag1(calc_q), 1, &p[0]);
}

/* ---- schur ---- */

/* _schur(a, output): a as its complex dtype for output='complex', then
   lax_linalg.schur */
static SrVal *schur_body(SrInterp *I, SrArgs *a) {
  int cplx = cur_flag(I);
  SCOPE(I);
  SrVal *x = a->v[0];
  const SrType *t = ty(I, x);
  if (cplx && t && !sr_dtype_is_complex(t->dtype)) x = KEEP(sr_lax_convert(I, x, sr_dtype_complex_of(t->dtype), 0, NULL));
  return DONE(x ? C1("jax.lax.linalg.schur", x) : NULL);
}

/* schur(a, output='real'): jit[name=_schur] */
static SrVal *sp_schur(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "schur", "a, output=", p) < 0) return NULL;
  if (p[1] && !str_is(p[1], "real") && !str_is(p[1], "complex")) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, p[1]);
    sr_raise(I, "ValueError", "Expected 'output' to be either 'real' or 'complex', got output=%s.", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  if (arraylike(I, "scipy.schur", p[0]) < 0) return NULL;
  return sr_api_jit(I, "_schur", schur_body, flag1(p[1] && str_is(p[1], "complex")), 1, &p[0]);
}

/* ---- qr_multiply ---- */

/* qr_multiply(a, c, mode='right', pivoting=False, conjugate=False,
   overwrite_a=False, overwrite_c=False): geqrf, then ormqr */
static SrVal *sp_qr_multiply(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  int piv, conj;
  if (sr_args_parse(I, a, "qr_multiply", "a, c, mode=, pivoting=, conjugate=, overwrite_a=, overwrite_c=", p) < 0 ||
      flag(I, p[3], 0, "pivoting", &piv) < 0 || flag(I, p[4], 0, "conjugate", &conj) < 0)
    return NULL;
  SCOPE(I);
  SrVal *v[2] = {p[0], p[1]};
  if (inexact(s, 2, v, "qr_multiply") < 0) return DONE(NULL);
  SrVal *x = v[0], *c = v[1];
  int left_mode = 0;
  if (p[2] && str_is(p[2], "left")) left_mode = 1;
  else if (p[2] && !str_is(p[2], "right")) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, p[2]);
    sr_raise(I, "ValueError", "mode must be 'right' or 'left', got %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return DONE(NULL);
  }
  const SrType *at = ty(I, x), *ct = ty(I, c);
  int onedim = ct->ndim == 1;
  if (onedim) {
    SrVal *nx = KEEP(sr_none());
    c = left_mode ? IX(c, sl(s, SL_NONE, SL_NONE), nx) : IX(c, nx, sl(s, SL_NONE, SL_NONE));
    if (!c) return DONE(NULL);
    ct = ty(I, c);
  }
  if (at->ndim < 2) return DONE(sr_raise(I, "ValueError", "not enough values to unpack (expected 2, got %d)", at->ndim));
  if (ct->ndim < 2) return DONE(sr_raise(I, "IndexError", "tuple index out of range"));
  int64_t m = at->dims[at->ndim - 2].size, n = at->dims[at->ndim - 1].size, k = m < n ? m : n;
  SrBuf b = SR_BUF_INIT;
  shape_str(&b, at);
  if (left_mode && ct->dims[ct->ndim - 2].size != k) {
    sr_raise(I, "ValueError",
             "Array shapes are not compatible for Q @ c operation: a has shape %s so Q has %lld columns, but c has "
             "%lld rows (expected %lld).",
             sr_buf_str(&b), (long long)k, (long long)ct->dims[ct->ndim - 2].size, (long long)k);
    sr_buf_free(&b);
    return DONE(NULL);
  }
  if (!left_mode && ct->dims[ct->ndim - 1].size != m) {
    sr_raise(I, "ValueError",
             "Array shapes are not compatible for c @ Q operation: a has shape %s so Q has %lld rows, but c has "
             "%lld columns (expected %lld).",
             sr_buf_str(&b), (long long)m, (long long)ct->dims[ct->ndim - 1].size, (long long)m);
    sr_buf_free(&b);
    return DONE(NULL);
  }
  sr_buf_free(&b);
  if (piv) return DONE(sr_raise(I, "NotImplementedError", "qr_multiply's pivoting=True (geqp3) is not implemented"));
  /* batch = broadcast_shapes(a.shape[:-2], c.shape[:-2]) */
  SrVal *ab[SR_MAX_RANK], *cb[SR_MAX_RANK];
  for (int i = 0; i < at->ndim - 2; i++) ab[i] = sr_int(NULL, at->dims[i].size);
  for (int i = 0; i < ct->ndim - 2; i++) cb[i] = sr_int(NULL, ct->dims[i].size);
  SrVal *bs = C2("jax.numpy.broadcast_shapes", KEEP(sr_tuple(NULL, at->ndim - 2, ab)),
                 KEEP(sr_tuple(NULL, ct->ndim - 2, cb)));
  if (!bs || !sr_is_seq(bs)) return DONE(NULL);
  int nb = (int)bs->seq.n;
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < nb; i++) sh[i] = bs->seq.items[i]->i;
  SrVal *shv[SR_MAX_RANK];
  for (int i = 0; i < nb; i++) shv[i] = sr_int(NULL, sh[i]);
  shv[nb] = sr_int(NULL, m), shv[nb + 1] = sr_int(NULL, n);
  x = C2("jax.numpy.broadcast_to", x, KEEP(sr_tuple(NULL, nb + 2, shv)));
  for (int i = 0; i < nb; i++) shv[i] = sr_int(NULL, sh[i]);
  shv[nb] = sr_int(NULL, ct->dims[ct->ndim - 2].size), shv[nb + 1] = sr_int(NULL, ct->dims[ct->ndim - 1].size);
  c = C2("jax.numpy.broadcast_to", c, KEEP(sr_tuple(NULL, nb + 2, shv)));
  SrVal *rt = x ? KEEP(sr_bindv(I, SR_P_geqrf, 1, &x, NULL)) : NULL;
  SrVal *r = item(s, rt, 0), *taus = item(s, rt, 1);
  if (!r || !c) return DONE(NULL);
  if (m > n && left_mode) {
    ct = ty(I, c);
    for (int i = 0; i < nb; i++) sh[i] = ct->dims[i].size;
    sh[nb] = m - k, sh[nb + 1] = ct->dims[nb + 1].size;
    SrVal *z = filled(s, "jax.numpy.zeros", sh, nb + 2, dtype_of(s, c));
    SrVal *l = z ? KEEP(sr_seq(NULL, SR_V_LIST, 2)) : NULL;
    if (!l) return DONE(NULL);
    sr_seq_push(NULL, l, sr_ref(c));
    sr_seq_push(NULL, l, sr_ref(z));
    const char *kw[1] = {"axis"};
    SrVal *kv[1] = {INT(-2)};
    c = kcall(s, "jax.numpy.concatenate", 1, &l, 1, kw, kv);
  }
  if (conj) c = c ? C3("jax.numpy.swapaxes", c, INT(-1), INT(-2)) : NULL;
  int left = left_mode != conj;
  SrVal *ov[3] = {r, taus, c};
  const char *okw[2] = {"left", "transpose"};
  SrVal *okv[2] = {BOOL(left), BOOL(conj)};
  SrVal *cq = kcall(s, "jax.lax.linalg.ormqr", 3, ov, 2, okw, okv);
  if (conj) cq = cq ? C3("jax.numpy.swapaxes", cq, INT(-1), INT(-2)) : NULL;
  if (!left_mode) cq = IX(cq, ellipsis(s), sl(s, SL_NONE, k));
  if (onedim) cq = cq ? C1("jax.numpy.ravel", cq) : NULL;
  SrVal *rk = IX(r, ellipsis(s), sl(s, SL_NONE, k), sl(s, SL_NONE, SL_NONE));
  SrVal *rr = rk ? C1("jax.numpy.triu", rk) : NULL;
  SrVal *it[2] = {cq, rr};
  return DONE(cq && rr ? tup(s, 2, it) : NULL);
}

/* ---- polar ---- */

typedef struct Polar {
  int left;    /* side='left' */
  int method;  /* 0 qdwh, 1 svd, 2 another (its name in mname) */
  char mname[64];
} Polar;

/* _polar_2d(a, side, method): through svd(full_matrices=False) for both
   methods (see the header); qdwh's shape restrictions kept */
static SrVal *polar_2d_body(SrInterp *I, SrArgs *a) {
  Polar *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = a->v[0];
  const SrType *t = ty(I, x);
  if (!t) return DONE(NULL);
  int64_t m = t->dims[0].size, n = t->dims[1].size;
  if (d->method == 2) return DONE(sr_raise(I, "ValueError", "Unknown polar decomposition method %s.", d->mname));
  if (d->method == 0 && !(m >= n && !d->left) && !(m < n && d->left)) {
    SrBuf b = SR_BUF_INIT;
    shape_str(&b, t);
    sr_raise(I, "NotImplementedError",
             "method='qdwh' only supports mxn matrices where m < n where side='right' and m >= n side='left', got %s "
             "with side='%s'",
             sr_buf_str(&b), d->left ? "left" : "right");
    sr_buf_free(&b);
    return DONE(NULL);
  }
  const char *kw[1] = {"full_matrices"};
  SrVal *kv[1] = {BOOL(0)};
  SrVal *r = kcall(s, "jax.lax.linalg.svd", 1, &x, 1, kw, kv);
  SrVal *u = item(s, r, 0), *sv = item(s, r, 1), *vh = item(s, r, 2);
  SrVal *dt = dtype_of(s, u);
  SrVal *sa = sv && dt ? KEEP(sr_getattr(I, sv, "astype")) : NULL;
  SrArgs aa = {1, &dt, 0, NULL, NULL, NULL};
  sv = sa ? KEEP(sr_call(I, sa, &aa)) : NULL;
  SrVal *unitary = OP(MATMUL, u, vh);
  SrVal *srow = IX(sv, KEEP(sr_none()), sl(s, SL_NONE, SL_NONE));
  SrVal *posdef = d->left ? OP(MATMUL, OP(MUL, u, srow), mT(s, u)) : OP(MATMUL, OP(MUL, mT(s, vh), srow), vh);
  SrVal *it[2] = {unitary, posdef};
  return DONE(posdef ? tup(s, 2, it) : NULL);
}

/* the function vectorize maps: jit[name=_polar_2d] of polar_2d_body */
static SrVal *polar_2d(SrInterp *I, SrArgs *a) {
  Polar *d = sr_xmalloc(sizeof *d);
  *d = *(Polar *)sr_current_builtin(I)->data;
  return sr_api_jit(I, "_polar_2d", polar_2d_body, d, a->n, a->v);
}

/* polar's body: vectorize(_polar_2d, signature=...)(jnp.asarray(a)) */
static SrVal *polar_body(SrInterp *I, SrArgs *a) {
  Polar *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *x = KEEP(sr_jnp_asarray(I, a->v[0], -1));
  const SrType *t = ty(I, x);
  if (!t) return DONE(NULL);
  if (t->ndim < 2) return DONE(sr_raise(I, "ValueError", "The input `a` must be at least a 2-D array."));
  Polar *fd = sr_xmalloc(sizeof *fd);
  *fd = *d;
  SrVal *f = KEEP(sr_builtin_with("_polar_2d", polar_2d, fd, free));
  const char *sig = d->left ? "(m,n)->(m,n),(m,m)" : "(m,n)->(m,n),(n,n)";
  SrVal *sv = KEEP(sr_str(NULL, sig, strlen(sig)));
  const char *kw[1] = {"signature"};
  SrVal *vf = kcall(s, "jax.numpy.vectorize", 1, &f, 1, kw, &sv);
  return DONE(vf ? KEEP(sr_call1(I, vf, x)) : NULL);
}

/* polar(a, side='right', *, method='qdwh', eps=None, max_iterations=None):
   jit[name=polar] */
static SrVal *sp_polar(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "polar", "a, side=, *, method=, eps=, max_iterations=", p) < 0) return NULL;
  Polar d = {0, 0, ""};
  if (given(p[1])) {
    if (str_is(p[1], "left")) d.left = 1;
    else if (!str_is(p[1], "right"))
      return sr_raise(I, "ValueError", "The argument `side` must be either 'right' or 'left'.");
  }
  if (given(p[2])) {
    if (str_is(p[2], "svd")) d.method = 1;
    else if (!str_is(p[2], "qdwh")) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, p[2]);
      d.method = 2;
      snprintf(d.mname, sizeof d.mname, "%s", sr_buf_str(&b));
      sr_buf_free(&b);
    }
  }
  Polar *dd = sr_xmalloc(sizeof *dd);
  *dd = d;
  return sr_api_jit(I, "polar", polar_body, dd, 1, &p[0]);
}

/* ---- expm_frechet ---- */

/* partial(expm, upper_triangular=False, max_squarings=16) */
static SrVal *expm_bound(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  const char *kw[2] = {"upper_triangular", "max_squarings"};
  SrVal *kv[2] = {BOOL(0), INT(16)};
  return DONE(kcall(s, "jax.scipy.linalg.expm", a->n, a->v, 2, kw, kv));
}

static int same_shape(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->dims[i].size != b->dims[i].size) return 0;
  return 1;
}

/* expm_frechet's body: jvp(expm, (A,), (E,)) */
static SrVal *expm_frechet_body(SrInterp *I, SrArgs *a) {
  int compute = cur_flag(I);
  SCOPE(I);
  SrVal *A = KEEP(sr_jnp_asarray(I, a->v[0], -1)), *E = KEEP(sr_jnp_asarray(I, a->v[1], -1));
  const SrType *at = ty(I, A), *et = ty(I, E);
  if (!at || !et) return DONE(NULL);
  SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
  shape_str(&b, at);
  shape_str(&c, et);
  int bad = 1;
  if (at->ndim < 2 || at->dims[at->ndim - 2].size != at->dims[1].size)
    sr_raise(I, "ValueError", "expected A to be a (batched) square matrix, got A.shape=%s", sr_buf_str(&b));
  else if (et->ndim < 2 || et->dims[et->ndim - 2].size != et->dims[et->ndim - 1].size)
    sr_raise(I, "ValueError", "expected E to be a (batched) square matrix, got E.shape=%s", sr_buf_str(&c));
  else if (!same_shape(at, et))
    sr_raise(I, "ValueError", "expected A and E to be the same shape, got A.shape=%s E.shape=%s", sr_buf_str(&b),
             sr_buf_str(&c));
  else
    bad = 0;
  sr_buf_free(&b);
  sr_buf_free(&c);
  if (bad) return DONE(NULL);
  SrVal *f = KEEP(sr_builtin_with("expm", expm_bound, NULL, NULL));
  SrVal *pr = tup(s, 1, &A), *tg = tup(s, 1, &E);
  SrVal *jv[3] = {f, pr, tg};
  SrVal *r = kcall(s, "jax.jvp", 3, jv, 0, NULL, NULL);
  if (!r || compute) return DONE(r);
  return DONE(item(s, r, 1));
}

/* expm_frechet(A, E, *, method=None, compute_expm=True): jit[name=expm_frechet] */
static SrVal *sp_expm_frechet(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  int compute;
  if (sr_args_parse(I, a, "expm_frechet", "A, E, *, method=, compute_expm=", p) < 0 ||
      flag(I, p[3], 1, "compute_expm", &compute) < 0)
    return NULL;
  return sr_api_jit(I, "expm_frechet", expm_frechet_body, flag1(compute), 2, p);
}

/* ---- closures: a builtin's data holding counted values ---- */

typedef struct Clo {
  SrVal *v[8];
  int64_t k[4];
} Clo;

static void clo_free(void *d) {
  Clo *c = d;
  if (!c) return;
  for (int i = 0; i < 8; i++) sr_unref(c->v[i]);
  free(c);
}

/* a builtin of fn whose data holds new references to vals[0..n) */
static SrVal *closure(SrNnScope *s, const char *name, SrBuiltinFn fn, int n, SrVal **vals, const int64_t *k, int nk) {
  for (int i = 0; i < n; i++)
    if (!vals[i]) return NULL;
  Clo *c = sr_xcalloc(1, sizeof *c);
  for (int i = 0; i < n; i++) c->v[i] = sr_ref(vals[i]);
  for (int i = 0; i < nk; i++) c->k[i] = k[i];
  return KEEP(sr_builtin_with(name, fn, c, clo_free));
}
static Clo *cur_clo(SrInterp *I) { return sr_current_builtin(I)->data; }

/* Whether every subdiagonal entry of x's real Schur form is 0 (every
   eigenvalue real) and, with nonneg, every eigenvalue is >= 0: run
   eagerly on a concrete x.  1 yes, 0 no, -1 with an exception raised. */
static int real_schur(SrInterp *I, SrVal *x, int nonneg) {
  SCOPE(I);
  const SrType *t = ty(I, x);
  if (!t || t->ndim < 2 || (t->dtype != SR_F32 && t->dtype != SR_F64) || t->dims[t->ndim - 1].size < 1)
    return DONE(NULL), 1; /* the jit reports what is wrong */
  const char *kw[1] = {"compute_schur_vectors"};
  SrVal *kv[1] = {BOOL(0)};
  SrVal *T = item(s, kcall(s, "jax.lax.linalg.schur", 1, &x, 1, kw, kv), 0);
  const char *dk[3] = {"offset", "axis1", "axis2"};
  SrVal *sub_a[1] = {T}, *sub_k[3] = {INT(-1), INT(-2), INT(-1)};
  SrVal *sub = kcall(s, "jax.numpy.diagonal", 1, sub_a, 3, dk, sub_k);
  SrVal *ok = C1("jax.numpy.all", OP(EQ, sub, FL(0.0)));
  if (nonneg) {
    SrVal *dg_k[3] = {INT(0), INT(-2), INT(-1)};
    SrVal *dg = kcall(s, "jax.numpy.diagonal", 1, sub_a, 3, dk, dg_k);
    ok = OP(BITAND, ok, C1("jax.numpy.all", OP(GE, dg, FL(0.0))));
  }
  int r = ok ? sr_truthy(I, ok) : -1;
  DONE(NULL);
  return r;
}

/* ---- sqrtm ---- */

/* lambda k, val: val + U[i, k] * U[k, j]  (v: U, i, j) */
static SrVal *sqrtm_k(SrInterp *I, SrArgs *a) {
  Clo *c = cur_clo(I);
  SCOPE(I);
  SrVal *k = a->v[0], *val = a->v[1];
  return DONE(OP(ADD, val, OP(MUL, IX(c->v[0], c->v[1], k), IX(c->v[0], k, c->v[2]))));
}

/* i_loop(l, (j, U)) (v: T, diag) */
static SrVal *sqrtm_i(SrInterp *I, SrArgs *a) {
  Clo *c = cur_clo(I);
  SCOPE(I);
  SrVal *l = a->v[0], *j = item(s, a->v[1], 0), *U = item(s, a->v[1], 1), *T = c->v[0], *dg = c->v[1];
  SrVal *i = OP(SUB, OP(SUB, j, INT(1)), l);
  SrVal *kv[3] = {U, i, j};
  SrVal *kf = closure(s, "<lambda>", sqrtm_k, 3, kv, NULL, 0);
  SrVal *fv[4] = {OP(ADD, i, INT(1)), j, kf, FL(0.0)};
  SrVal *sum = kcall(s, "jax.lax.fori_loop", 4, fv, 0, NULL, NULL);
  SrVal *tij = IX(T, i, j);
  SrVal *value = C3("jax.numpy.where", OP(EQ, tij, sum), FL(0.0),
                    OP(DIV, OP(SUB, tij, sum), OP(ADD, IX(dg, i), IX(dg, j))));
  SrVal *it[2] = {j, at_set(s, U, tup(s, 2, (SrVal *[]){i, j}), value)};
  return DONE(it[1] ? tup(s, 2, it) : NULL);
}

/* j_loop(j, U) (v: T, diag) */
static SrVal *sqrtm_j(SrInterp *I, SrArgs *a) {
  Clo *c = cur_clo(I);
  SCOPE(I);
  SrVal *j = a->v[0], *U = a->v[1];
  SrVal *f = closure(s, "i_loop", sqrtm_i, 2, c->v, NULL, 0);
  SrVal *fv[4] = {INT(0), j, f, tup(s, 2, (SrVal *[]){j, U})};
  return DONE(item(s, kcall(s, "jax.lax.fori_loop", 4, fv, 0, NULL, NULL), 1));
}

/* _sqrtm_triu(T): Bjorck and Hammarling's recurrence, column by column */
static SrVal *sqrtm_triu_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *T = a->v[0];
  SrVal *dg = C1("jax.numpy.sqrt", C1("jax.numpy.diag", T));
  const SrType *dt = ty(I, dg);
  if (!dt) return DONE(NULL);
  SrVal *U = C1("jax.numpy.diag", dg);
  SrVal *cv[2] = {T, dg};
  SrVal *f = closure(s, "j_loop", sqrtm_j, 2, cv, NULL, 0);
  SrVal *fv[4] = {INT(0), INT(dt->dims[0].size), f, U};
  return DONE(kcall(s, "jax.lax.fori_loop", 4, fv, 0, NULL, NULL));
}

/* _sqrtm(A): T, Z = schur(A, output='complex'), Z sqrtm_triu(T) conj(Z.T)
   at HIGHEST precision */
static SrVal *sqrtm_body(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  SrVal *A = a->v[0];
  const char *ok[1] = {"output"};
  SrVal *ov[1] = {KEEP(sr_str(NULL, "complex", 7))};
  SrVal *tz = kcall(s, "jax.scipy.linalg.schur", 1, &A, 1, ok, ov);
  SrVal *T = item(s, tz, 0), *Z = item(s, tz, 1);
  SrVal *st = T ? KEEP(sr_api_jit(I, "_sqrtm_triu", sqrtm_triu_body, NULL, 1, &T)) : NULL;
  return DONE(mm(s, mm(s, Z, st, 1), C1("jax.numpy.conj", mT(s, Z)), 1));
}

/* sqrtm(A, blocksize=1) */
static SrVal *sp_sqrtm(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int64_t bs = 1;
  if (sr_args_parse(I, a, "sqrtm", "A, blocksize=", p) < 0 || (p[1] && sr_as_int(I, p[1], "blocksize", &bs) < 0))
    return NULL;
  if (bs > 1) return sr_raise(I, "NotImplementedError", "Blocked version is not implemented yet.");
  if (arraylike(I, "scipy.sqrtm", p[0]) < 0) return NULL;
  return sr_api_jit(I, "_sqrtm", sqrtm_body, NULL, 1, &p[0]);
}

/* ---- solve_sylvester ---- */

/* scan_fn(Y_flat, idx) of _solve_sylvester_triangular_scan (v: R, S, F;
   k: m, n): Y[i, j] from the entries below and to the right of it */
static SrVal *sylv_step(SrInterp *I, SrArgs *a) {
  Clo *c = cur_clo(I);
  SCOPE(I);
  SrVal *R = c->v[0], *S = c->v[1], *F = c->v[2], *yf = a->v[0], *idx = a->v[1];
  int64_t m = c->k[0], n = c->k[1];
  SrVal *i = OP(FLOORDIV, idx, INT(n)), *j = OP(MOD, idx, INT(n));
  SrVal *Y = C2("jax.numpy.reshape", yf, tup(s, 2, (SrVal *[]){INT(m), INT(n)}));
  SrVal *rhs = IX(F, i, j), *all = sl(s, SL_NONE, SL_NONE);
  SrVal *row_mask = OP(GT, C1("jax.numpy.arange", INT(m)), i);
  SrVal *row_term = C1("jax.numpy.sum", C3("jax.numpy.where", row_mask, OP(MUL, IX(R, i, all), IX(Y, all, j)), FL(0.0)));
  SrVal *col_mask = OP(GT, C1("jax.numpy.arange", INT(n)), j);
  SrVal *col_term = C1("jax.numpy.sum", C3("jax.numpy.where", col_mask, OP(MUL, IX(Y, i, all), IX(S, all, j)), FL(0.0)));
  rhs = OP(SUB, rhs, OP(ADD, row_term, col_term));
  SrVal *val = OP(DIV, rhs, OP(ADD, IX(R, i, i), IX(S, j, j)));
  SrVal *it[2] = {at_set(s, yf, OP(ADD, OP(MUL, i, INT(n)), j), val), KEEP(sr_none())};
  return DONE(it[0] ? tup(s, 2, it) : NULL);
}

/* _solve_sylvester_triangular_scan(R, S, F): R Y + Y S = F for R upper
   and S lower triangular, one entry a step from the bottom right */
static SrVal *sylv_scan(SrNnScope *s, SrVal *R, SrVal *S, SrVal *F) {
  const SrType *ft = ty(s->I, F);
  if (!ft || !R || !S) return NULL;
  int64_t mn[2] = {ft->dims[0].size, ft->dims[1].size}, total = mn[0] * mn[1];
  SrVal *flat = C3("jax.numpy.arange", INT(total - 1), INT(-1), INT(-1));
  SrVal *y0 = filled(s, "jax.numpy.zeros", &total, 1, dtype_of(s, F));
  SrVal *cv[3] = {R, S, F};
  SrVal *f = closure(s, "scan_fn", sylv_step, 3, cv, mn, 2);
  SrVal *r = item(s, C3("jax.lax.scan", f, y0, flat), 0);
  return C2("jax.numpy.reshape", r, tup(s, 2, (SrVal *[]){INT(mn[0]), INT(mn[1])}));
}

static SrVal *sylv_nan(SrInterp *I, SrArgs *a) {
  (void)a;
  SCOPE(I);
  return DONE(OP(MUL, C1("jax.numpy.zeros_like", cur_clo(I)->v[0]), FL(NAN)));
}
static SrVal *sylv_x(SrInterp *I, SrArgs *a) {
  (void)a;
  return sr_ref(cur_clo(I)->v[0]);
}

typedef struct Sylv {
  int method; /* 0 schur, 1 eigen, 2 another (mname) */
  char mname[64];
  SrVal *tol; /* vectorize's function: the traced tol it closes over */
} Sylv;

static void sylv_free(void *d) {
  Sylv *y = d;
  if (y) sr_unref(y->tol);
  free(y);
}

/* _solve_sylvester_2d(A, B, C, *, method, tol) (args A, B, C, tol):
   R, U = schur(A); S, V = schur(B^T); Y from the triangular scan of
   R Y + Y S^T = U^T C V; X = U Y V^T, or NaN where an eigenvalue sum
   |a_i + b_j| < tol (the diagonals of R and S, the eigenvalues when the
   real Schur forms are triangular; NaN too where they are not) */
static SrVal *sylv_2d_body(SrInterp *I, SrArgs *a) {
  Sylv *d = sr_current_builtin(I)->data;
  SCOPE(I);
  if (d->method == 1)
    return DONE(sr_raise(I, "NotImplementedError",
                         "solve_sylvester's method='eigen' needs jnp.linalg.eig (complex dtypes), which shardrepl "
                         "does not have"));
  if (d->method == 2)
    return DONE(sr_raise(I, "ValueError",
                         "Unrecognized method %s. The two valid methods are either \"schur\" or \"eigen\".", d->mname));
  SrVal *A = a->v[0], *B = a->v[1], *Cm = a->v[2], *tol = a->v[3];
  SrVal *ru = C1("jax.scipy.linalg.schur", A), *sv = C1("jax.scipy.linalg.schur", mT(s, B));
  SrVal *R = item(s, ru, 0), *U = item(s, ru, 1), *S = item(s, sv, 0), *V = item(s, sv, 1);
  SrVal *F = OP(MATMUL, OP(MATMUL, mT(s, U), Cm), V);
  SrVal *Y = sylv_scan(s, R, mT(s, S), F);
  SrVal *X = OP(MATMUL, OP(MATMUL, U, Y), mT(s, V));
  SrVal *nx = KEEP(sr_none()), *all = sl(s, SL_NONE, SL_NONE);
  SrVal *ea = C1("jax.numpy.diag", R), *eb = C1("jax.numpy.diag", S);
  SrVal *sums = OP(ADD, IX(ea, all, nx), IX(eb, nx, all));
  SrVal *pred = C1("jax.numpy.any", OP(LT, C1("jax.numpy.abs", sums), tol));
  const char *dk[1] = {"offset"};
  SrVal *dv[1] = {INT(-1)};
  SrVal *cplx = OP(BITOR, C1("jax.numpy.any", OP(NE, kcall(s, "jax.numpy.diagonal", 1, &R, 1, dk, dv), FL(0.0))),
                   C1("jax.numpy.any", OP(NE, kcall(s, "jax.numpy.diagonal", 1, &S, 1, dk, dv), FL(0.0))));
  pred = OP(BITOR, pred, cplx);
  SrVal *fnan = closure(s, "<lambda>", sylv_nan, 1, &X, NULL, 0), *fx = closure(s, "<lambda>", sylv_x, 1, &X, NULL, 0);
  SrVal *cv[3] = {pred, fnan, fx};
  return DONE(kcall(s, "jax.lax.cond", 3, cv, 0, NULL, NULL));
}

/* partial(_solve_sylvester_2d, method=method, tol=tol), for vectorize */
static SrVal *sylv_2d(SrInterp *I, SrArgs *a) {
  Sylv *d0 = sr_current_builtin(I)->data;
  if (a->n != 3) return sr_raise(I, "TypeError", "_solve_sylvester_2d takes 3 arguments");
  Sylv *d = sr_xmalloc(sizeof *d);
  *d = *d0;
  d->tol = NULL;
  SrVal *args[4] = {a->v[0], a->v[1], a->v[2], d0->tol};
  return sr_api_jit(I, "_solve_sylvester_2d", sylv_2d_body, d, 4, args);
}

/* solve_sylvester's body (args A, B, C, tol) */
static SrVal *sylv_body(SrInterp *I, SrArgs *a) {
  Sylv *d0 = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *v[3] = {a->v[0], a->v[1], a->v[2]};
  if (inexact(s, 3, v, "solve_sylvester") < 0) return DONE(NULL);
  const SrType *at = ty(I, v[0]), *bt = ty(I, v[1]), *ct = ty(I, v[2]);
  if (ct->ndim < 2) return DONE(sr_raise(I, "ValueError", "not enough values to unpack (expected 2, got %d)", ct->ndim));
  int64_t m = ct->dims[ct->ndim - 2].size, n = ct->dims[ct->ndim - 1].size;
  if (at->ndim < 2 || bt->ndim < 2 || at->dims[at->ndim - 2].size != m || at->dims[at->ndim - 1].size != m ||
      bt->dims[bt->ndim - 2].size != n || bt->dims[bt->ndim - 1].size != n) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "Incompatible shapes for Sylvester equation:\nA: ");
    shape_str(&b, at);
    sr_buf_puts(&b, "\nB: ");
    shape_str(&b, bt);
    sr_buf_puts(&b, "\nC: ");
    shape_str(&b, ct);
    sr_raise(I, "ValueError", "%s", sr_buf_str(&b));
    sr_buf_free(&b);
    return DONE(NULL);
  }
  Sylv *d = sr_xmalloc(sizeof *d);
  *d = *d0;
  d->tol = sr_ref(a->v[3]);
  SrVal *f = KEEP(sr_builtin_with("_solve_sylvester_2d", sylv_2d, d, sylv_free));
  SrVal *sig = KEEP(sr_str(NULL, "(m,m),(n,n),(m,n)->(m,n)", 24));
  const char *kw[1] = {"signature"};
  SrVal *vf = kcall(s, "jax.numpy.vectorize", 1, &f, 1, kw, &sig);
  if (!vf) return DONE(NULL);
  SrArgs ca = {3, v, 0, NULL, NULL, NULL};
  return DONE(KEEP(sr_call(I, vf, &ca)));
}

/* solve_sylvester(A, B, C, *, method='schur', tol=1e-8): jit[name=solve_sylvester] */
static SrVal *sp_solve_sylvester(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "solve_sylvester", "A, B, C, *, method=, tol=", p) < 0) return NULL;
  Sylv d = {0, "", NULL};
  if (given(p[3]) && !str_is(p[3], "schur")) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, p[3]);
    d.method = str_is(p[3], "eigen") ? 1 : 2;
    snprintf(d.mname, sizeof d.mname, "%s", sr_buf_str(&b));
    sr_buf_free(&b);
  }
  if (d.method == 0)
    for (int i = 0; i < 2; i++) {
      if (!concrete(p[i])) continue;
      SrVal *x = sr_jnp_asarray(I, p[i], -1);
      SrVal *v[1] = {x};
      SCOPE(I);
      KEEP(x);
      int ok = x && inexact(s, 1, v, "solve_sylvester") == 0 ? real_schur(I, v[0], 0) : -1;
      DONE(NULL);
      if (ok < 0) return NULL;
      if (!ok)
        return sr_raise(I, "NotImplementedError",
                        "solve_sylvester: %s has complex eigenvalues, so the method needs its complex Schur form "
                        "(complex dtypes), which shardrepl does not have",
                        i ? "B" : "A");
    }
  Sylv *dd = sr_xmalloc(sizeof *dd);
  *dd = d;
  SrVal *args[4] = {p[0], p[1], p[2], given(p[4]) ? p[4] : NULL};
  SrVal *tol = args[3] ? NULL : sr_float(NULL, 1e-8);
  if (tol) args[3] = tol;
  SrVal *b = sr_builtin_with("solve_sylvester", sylv_body, dd, free);
  SrArgs ca = {4, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, "solve_sylvester", &ca);
  sr_unref(b);
  sr_unref(tol);
  return r;
}

/* ---- eigh_tridiagonal ---- */

/* What the Sturm recurrence and the bisection read: v alpha, beta_sq,
   pivmin, alpha0_perturbation, target_counts, abs_tol, x; k n, max_it. */
enum { T_ALPHA, T_BSQ, T_PIVMIN, T_A0, T_TARGET, T_TOL, T_X };

/* sturm_step(i, q, count): q = alpha[i] - beta_sq[i - 1] / q - x, a
   count where q <= pivmin, which becomes min(q, -pivmin) there */
static int sturm_step(SrNnScope *outer, const Clo *c, SrVal *x, SrVal *i, SrVal **q, SrVal **count) {
  SCOPE(outer->I);
  SrVal *nq = OP(SUB, OP(SUB, IX(c->v[T_ALPHA], i), OP(DIV, IX(c->v[T_BSQ], OP(SUB, i, INT(1))), *q)), x);
  SrVal *le = OP(LE, nq, c->v[T_PIVMIN]);
  SrVal *nc = C3("jax.numpy.where", le, OP(ADD, *count, INT(1)), *count);
  nq = C3("jax.numpy.where", le, C2("jax.numpy.minimum", nq, C1("jax.numpy.negative", c->v[T_PIVMIN])), nq);
  if (!nq || !nc) return DONE(NULL), -1;
  *q = sr_nn_keep(outer, sr_ref(nq));
  *count = sr_nn_keep(outer, sr_ref(nc));
  DONE(NULL);
  return 0;
}

/* unrolled_steps((start, q, count)) of the partly unrolled while loop:
   16 steps from a traced start (v as the bisection's, x the midpoints) */
static SrVal *sturm_block(SrInterp *I, SrArgs *a) {
  Clo *c = cur_clo(I);
  SCOPE(I);
  SrVal *start = item(s, a->v[0], 0), *q = item(s, a->v[0], 1), *count = item(s, a->v[0], 2);
  for (int j = 0; j < 16; j++)
    if (sturm_step(s, c, c->v[T_X], OP(ADD, start, INT(j)), &q, &count) < 0) return DONE(NULL);
  SrVal *it[3] = {OP(ADD, start, INT(16)), q, count};
  return DONE(tup(s, 3, it));
}

static SrVal *sturm_cond(SrInterp *I, SrArgs *a) {
  SCOPE(I);
  return DONE(C2("jax.numpy.less", item(s, a->v[0], 0), INT(cur_clo(I)->k[0])));
}

/* _sturm(alpha, beta_sq, pivmin, alpha0_perturbation, x): how many
   eigenvalues lie below each x */
static SrVal *sturm(SrNnScope *s, const Clo *c, SrVal *x) {
  SrInterp *I = s->I;
  int64_t n = c->k[0];
  const SrType *xt = ty(I, x);
  if (!xt) return NULL;
  int64_t sh[SR_MAX_RANK];
  for (int i = 0; i < xt->ndim; i++) sh[i] = xt->dims[i].size;
  SrVal *i32 = KEEP(sr_dtype_val(NULL, SR_I32));
  SrVal *zeros = filled(s, "jax.numpy.zeros", sh, xt->ndim, i32), *ones = filled(s, "jax.numpy.ones", sh, xt->ndim, i32);
  SrVal *a0 = IX(c->v[T_ALPHA], INT(0));
  SrVal *q = OP(SUB, a0, x);
  SrVal *count = C3("jax.numpy.where", OP(LT, q, FL(0.0)), ones, zeros);
  q = C3("jax.numpy.where", OP(EQ, a0, x), c->v[T_A0], q);
  int64_t peel = (n - 1) % 16;
  for (int64_t j = 0; j < peel; j++)
    if (sturm_step(s, c, x, INT(1 + j), &q, &count) < 0) return NULL;
  SrVal *cv[8];
  memcpy(cv, c->v, sizeof cv);
  cv[T_X] = x;
  SrVal *cond = closure(s, "cond", sturm_cond, 7, cv, c->k, 2);
  SrVal *body = closure(s, "unrolled_steps", sturm_block, 7, cv, c->k, 2);
  SrVal *init = tup(s, 3, (SrVal *[]){INT(1 + peel), q, count});
  return item(s, C3("jax.lax.while_loop", cond, body, init), 2);
}

/* the bisection's cond: i < max_it and abs_tol < max(upper - lower) */
static SrVal *bisect_cond(SrInterp *I, SrArgs *a) {
  Clo *c = cur_clo(I);
  SCOPE(I);
  SrVal *i = item(s, a->v[0], 0), *lo = item(s, a->v[0], 1), *up = item(s, a->v[0], 3);
  return DONE(C2("jax.numpy.logical_and", C2("jax.numpy.less", i, INT(c->k[1])),
                 C2("jax.numpy.less", c->v[T_TOL], C1("jax.numpy.amax", OP(SUB, up, lo)))));
}

/* the bisection's body: every interval halved at its midpoint */
static SrVal *bisect_body(SrInterp *I, SrArgs *a) {
  Clo *c = cur_clo(I);
  SCOPE(I);
  SrVal *i = item(s, a->v[0], 0), *lo = item(s, a->v[0], 1), *mid = item(s, a->v[0], 2), *up = item(s, a->v[0], 3);
  SrVal *counts = sturm(s, c, mid);
  lo = C3("jax.numpy.where", OP(LE, counts, c->v[T_TARGET]), mid, lo);
  up = C3("jax.numpy.where", OP(GT, counts, c->v[T_TARGET]), mid, up);
  mid = OP(MUL, FL(0.5), OP(ADD, lo, up));
  SrVal *it[4] = {OP(ADD, i, INT(1)), lo, mid, up};
  return DONE(tup(s, 4, it));
}

typedef struct Tridiag {
  int vals_only;
  int select; /* 'a', 'i' */
  int64_t lo, hi;
} Tridiag;

/* eigh_tridiagonal's body (args d, e, tol): Gershgorin bounds, then a
   bisection of every eigenvalue at once with Sturm counts */
static SrVal *tridiag_body(SrInterp *I, SrArgs *a) {
  Tridiag *d = sr_current_builtin(I)->data;
  SCOPE(I);
  SrVal *alpha = KEEP(sr_jnp_asarray(I, a->v[0], -1)), *beta = KEEP(sr_jnp_asarray(I, a->v[1], -1)), *tol = a->v[2];
  const SrType *at = ty(I, alpha), *bt = ty(I, beta);
  if (!at || !bt) return DONE(NULL);
  if (at->dtype != bt->dtype)
    return DONE(sr_raise(I, "TypeError", "diagonal and off-diagonal values must have same dtype, got %s and %s",
                         sr_dtype_name(at->dtype), sr_dtype_name(bt->dtype)));
  SrDtype dt = at->dtype;
  if (dt != SR_F32 && dt != SR_F64)
    return DONE(sr_raise(I, "TypeError",
                         "Only float32 and float64 inputs are supported as inputs to jax.scipy.linalg.eigh_tridiagonal, "
                         "got %s and %s",
                         sr_dtype_name(dt), sr_dtype_name(bt->dtype)));
  if (at->ndim < 1) return DONE(sr_raise(I, "IndexError", "tuple index out of range"));
  int64_t n = at->dims[0].size;
  if (n <= 1) {
    SrVal *re = C1("jax.numpy.real", alpha);
    if (d->vals_only) return DONE(re);
    const char *kw[1] = {"dtype"};
    SrVal *ev[1] = {INT(n)}, *dv = dtype_of(s, alpha);
    SrVal *it[2] = {re, kcall(s, "jax.numpy.eye", 1, ev, 1, kw, &dv)};
    return DONE(it[1] ? tup(s, 2, it) : NULL);
  }
  SrVal *babs = C1("jax.numpy.abs", beta), *bsq = C1("jax.numpy.square", beta);
  SrVal *parts = KEEP(sr_seq(NULL, SR_V_LIST, 3));
  SrVal *p0 = IX(babs, sl(s, SL_NONE, 1)), *p1 = OP(ADD, IX(babs, sl(s, SL_NONE, -1)), IX(babs, sl(s, 1, SL_NONE)));
  SrVal *p2 = IX(babs, sl(s, -1, SL_NONE));
  if (!p0 || !p1 || !p2) return DONE(NULL);
  sr_seq_push(NULL, parts, sr_ref(p0));
  sr_seq_push(NULL, parts, sr_ref(p1));
  sr_seq_push(NULL, parts, sr_ref(p2));
  const char *ak[1] = {"axis"};
  SrVal *av[1] = {INT(0)};
  SrVal *rowsum = kcall(s, "jax.numpy.concatenate", 1, &parts, 1, ak, av);
  SrVal *lmax = C1("jax.numpy.amax", OP(ADD, alpha, rowsum)), *lmin = C1("jax.numpy.amin", OP(SUB, alpha, rowsum));
  SrVal *t_norm = C2("jax.numpy.maximum", C1("jax.numpy.abs", lmin), C1("jax.numpy.abs", lmax));
  /* np.finfo(dtype) and safemin in the dtype's own arithmetic */
  double eps, safemin;
  int nmant;
  if (dt == SR_F32) {
    volatile float one = 1.0f, a1 = one / FLT_MAX, a2 = (one + FLT_EPSILON) * FLT_MIN;
    eps = FLT_EPSILON, safemin = a1 > a2 ? a1 : a2, nmant = FLT_MANT_DIG - 1;
  } else {
    volatile double one = 1.0, a1 = one / DBL_MAX, a2 = (one + DBL_EPSILON) * DBL_MIN;
    eps = DBL_EPSILON, safemin = a1 > a2 ? a1 : a2, nmant = DBL_MANT_DIG - 1;
  }
  SrVal *epsv = sr_nn_typed_scalar(s, eps, dt);
  SrVal *pivmin = OP(MUL, sr_nn_typed_scalar(s, safemin, dt), C2("jax.numpy.maximum", INT(1), C1("jax.numpy.amax", bsq)));
  SrVal *a0p = C1("jax.numpy.square", OP(MUL, epsv, IX(babs, INT(0))));
  SrVal *abs_tol = OP(MUL, epsv, t_norm);
  if (given(tol)) abs_tol = C2("jax.numpy.maximum", tol, abs_tol);
  SrVal *i32 = KEEP(sr_dtype_val(NULL, SR_I32));
  const char *dk[1] = {"dtype"};
  SrVal *target;
  if (d->select == 'a') {
    SrVal *nv[1] = {INT(n)};
    target = kcall(s, "jax.numpy.arange", 1, nv, 1, dk, &i32);
  } else {
    SrVal *nv[2] = {INT(d->lo), INT(d->hi + 1)};
    target = kcall(s, "jax.numpy.arange", 2, nv, 1, dk, &i32);
  }
  const SrType *tt = ty(I, target);
  if (!tt) return DONE(NULL);
  SrVal *tshape = tup(s, 1, (SrVal *[]){INT(tt->dims[0].size)});
  SrVal *nslack = OP(MUL, OP(MUL, OP(MUL, KEEP(sr_jnp_asarray(I, INT(n), (int)dt)), FL(2.1)), epsv), t_norm);
  SrVal *lower = OP(SUB, OP(SUB, lmin, nslack), OP(MUL, FL(2 * 2.1), pivmin));
  SrVal *upper = OP(ADD, OP(ADD, lmax, nslack), OP(MUL, FL(2.1), pivmin));
  lower = C2("jax.numpy.broadcast_to", lower, tshape);
  upper = C2("jax.numpy.broadcast_to", upper, tshape);
  SrVal *mid = OP(MUL, FL(0.5), OP(ADD, upper, lower));
  pivmin = C2("jax.numpy.broadcast_to", pivmin, tshape);
  a0p = C2("jax.numpy.broadcast_to", a0p, tshape);
  SrVal *cv[7] = {alpha, bsq, pivmin, a0p, target, abs_tol, alpha};
  int64_t k[2] = {n, nmant + 1};
  SrVal *cond = closure(s, "cond", bisect_cond, 7, cv, k, 2), *body = closure(s, "body", bisect_body, 7, cv, k, 2);
  SrVal *init = tup(s, 4, (SrVal *[]){INT(0), lower, mid, upper});
  SrVal *r = item(s, C3("jax.lax.while_loop", cond, body, init), 2);
  if (!r || d->vals_only) return DONE(r);
  return DONE(sr_raise(I, "NotImplementedError",
                       "eigh_tridiagonal's eigenvectors (eigvals_only=False) need tridiagonal_solve, which is not "
                       "implemented"));
}

/* eigh_tridiagonal(d, e, *, eigvals_only=False, select='a',
   select_range=None, tol=None, key=None): jit[name=eigh_tridiagonal] */
static SrVal *sp_eigh_tridiagonal(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  int vals;
  if (sr_args_parse(I, a, "eigh_tridiagonal", "d, e, *, eigvals_only=, select=, select_range=, tol=, key=", p) < 0 ||
      flag(I, p[2], 0, "eigvals_only", &vals) < 0)
    return NULL;
  Tridiag t = {vals, 'a', 0, 0};
  if (given(p[3]) && !str_is(p[3], "a")) {
    if (str_is(p[3], "i")) {
      t.select = 'i';
      if (!given(p[4])) return sr_raise(I, "ValueError", "for select='i', select_range must be specified.");
      SrVal *lo = sr_getindex(I, p[4], 0), *hi = lo ? sr_getindex(I, p[4], 1) : NULL;
      int bad = !hi || sr_as_int(I, lo, "select_range", &t.lo) < 0 || sr_as_int(I, hi, "select_range", &t.hi) < 0;
      sr_unref(lo);
      sr_unref(hi);
      if (bad) return NULL;
      if (t.lo > t.hi) return sr_raise(I, "ValueError", "Got empty index range in select_range.");
    } else if (str_is(p[3], "v")) {
      return sr_raise(I, "NotImplementedError", "eigh_tridiagonal(..., select='v') is not implemented");
    } else {
      return sr_raise(I, "ValueError", "'select must have a value in {'a', 'i', 'v'}.");
    }
  }
  Tridiag *d = sr_xmalloc(sizeof *d);
  *d = t;
  SrVal *args[3] = {p[0], p[1], given(p[5]) ? p[5] : sr_none()};
  SrVal *r = sr_api_jit(I, "eigh_tridiagonal", tridiag_body, d, 3, args);
  return r;
}

/* ---- registration ---- */

void sr_linalg18_api_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.lax.linalg.hessenberg", lax_hessenberg,
       "hessenberg(a): (a, taus), the upper Hessenberg form and its Householder reflectors, one hessenberg "
       "equation (LAPACK's gehrd)"},
      {"jax.lax.linalg.householder_product", lax_householder_product,
       "householder_product(a, taus): the product of the Householder reflectors in a's lower triangle (LAPACK's "
       "orgqr)"},
      {"jax.lax.linalg.ormqr", lax_ormqr,
       "ormqr(a, taus, c, *, left=True, transpose=False): Q @ c, Q^T @ c, c @ Q or c @ Q^T for the Q of geqrf's "
       "reflectors, without forming Q (LAPACK's ormqr)"},
      {"jax.lax.linalg.schur", lax_schur,
       "schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None): (T, Z), the real Schur "
       "form, one schur equation (LAPACK's gees)"},
      {"jax.lax.linalg.tridiagonal_solve", lax_tridiagonal_solve,
       "tridiagonal_solve(dl, d, du, b, *, perturb_singular=False): the solution x of A x = b for the tridiagonal A "
       "of diagonals dl (dl[0] unused), d and du (du[-1] unused), one tridiagonal_solve equation (LAPACK's gtsv)"},
      {"jax.lax.linalg.tridiagonal", lax_tridiagonal,
       "tridiagonal(a, *, lower=True): (a, d, e, taus), the symmetric tridiagonal reduction (LAPACK's sytrd)"},
      {"jax.scipy.linalg.hessenberg", sp_hessenberg,
       "hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True): jit[name=hessenberg], H or (H, Q) "
       "with a = Q H Q^T"},
      {"jax.scipy.linalg.schur", sp_schur,
       "schur(a, output='real'): jit[name=_schur], (T, Z) with a = Z T Z^T, T quasi-upper-triangular (output="
       "'complex' raises NotImplementedError)"},
      {"jax.scipy.linalg.qr_multiply", sp_qr_multiply,
       "qr_multiply(a, c, mode='right', pivoting=False, conjugate=False, ...): (c @ Q or Q @ c, R) through geqrf "
       "and ormqr"},
      {"jax.scipy.linalg.polar", sp_polar,
       "polar(a, side='right', *, method='qdwh', eps=None, max_iterations=None): jit[name=polar], (u, p) with a = "
       "u p (right) or p u (left), through the SVD for both methods"},
      {"jax.scipy.linalg.expm_frechet", sp_expm_frechet,
       "expm_frechet(A, E, *, method=None, compute_expm=True): jit[name=expm_frechet], (expm(A), its derivative "
       "in the direction E) by jax.jvp of expm"},
      {"jax.scipy.linalg.sqrtm", sp_sqrtm,
       "sqrtm(A, blocksize=1): jit[name=_sqrtm], the matrix square root through the real Schur form "
       "(NotImplementedError where it is complex)"},
      {"jax.scipy.linalg.solve_sylvester", sp_solve_sylvester,
       "solve_sylvester(A, B, C, *, method='schur', tol=1e-8): jit[name=solve_sylvester], X with A X + X B = C "
       "(Bartels-Stewart on real Schur forms with real eigenvalues)"},
      {"jax.scipy.linalg.eigh_tridiagonal", sp_eigh_tridiagonal,
       "eigh_tridiagonal(d, e, *, eigvals_only=False, select='a', select_range=None, tol=None, key=None): "
       "jit[name=eigh_tridiagonal], the eigenvalues of a symmetric tridiagonal matrix by bisection (eigvals_only="
       "True only)"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
