/* scipy_sparse.c: jax.scipy.sparse.linalg.cg (jax/_src/scipy/sparse/
 * linalg.py): the conjugate gradient iteration of _cg_solve as a
 * lax.while_loop, inside lax.custom_linear_solve with itself as solve and
 * transpose_solve (_isolve), symmetric when every leaf of b is real.
 *
 * The arithmetic is JAX's over pytrees: jax.tree.map of operator.add /
 * sub and of the scalar's multiply, _vdot_real_tree the sum over the
 * leaves of vdot(x.real, y.real) (+ vdot(x.imag, y.imag) for complex
 * leaves) at Precision.HIGHEST.  A matrix A or M becomes
 * partial(jnp.dot(precision=HIGHEST), A) (_normalize_matvec).
 * Registered by sr_scipy_sparse_init (jax.h).
 */
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/nn.h"
#include "jax/numpy.h"
#include "jax/np_host.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "util/buf.h"
#include "util/intern.h"
#include "util/mem.h"

#define SCOPE(I) SrNnScope s_ = {(I), {0}, 0}, *s = &s_
#define KEEP(v) sr_nn_keep(s, v)
#define DONE(v) sr_nn_done(s, v)
#define OP(op, x, y) sr_nn_op(s, SR_OP_##op, x, y)
#define C1(q, x) sr_nn_call1(s, q, x)
#define C2(q, x, y) sr_nn_call2(s, q, x, y)
#define C3(q, x, y, z) sr_nn_call3(s, q, x, y, z)
#define INT(i) sr_nn_int(s, i)

/* What the solver's functions close over. */
typedef struct CgClo {
  SrVal *A, *M;       /* callables (M NULL: _identity) */
  SrVal *x0, *tol, *atol;
  SrVal *atol2;       /* in the loop's cond */
  int64_t maxiter;
  int dtype;          /* result_type of p0's leaves, in the body */
} CgClo;

static void clo_free(void *d) {
  CgClo *c = d;
  sr_unref(c->A);
  sr_unref(c->M);
  sr_unref(c->x0);
  sr_unref(c->tol);
  sr_unref(c->atol);
  sr_unref(c->atol2);
  free(c);
}

static CgClo *clo_copy(const CgClo *c) {
  CgClo *n = sr_xcalloc(1, sizeof *n);
  *n = *c;
  SrVal **v[] = {&n->A, &n->M, &n->x0, &n->tol, &n->atol, &n->atol2};
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    if (*v[i]) sr_ref(*v[i]);
  return n;
}

static CgClo *cur(SrInterp *I) { return sr_current_builtin(I)->data; }

static SrVal *call1(SrNnScope *s, SrVal *f, SrVal *x) {
  if (!f || !x) return NULL;
  SrArgs a = {1, &x, 0, NULL, NULL, NULL};
  return KEEP(sr_call(s->I, f, &a));
}

static SrVal *item(SrNnScope *s, SrVal *t, int i) {
  if (!t) return NULL;
  if (sr_is_seq(t) && t->seq.n > i) return t->seq.items[i];
  return KEEP(sr_getitem(s->I, t, INT(i)));
}

/* M(x), M absent being _identity */
static SrVal *precond(SrNnScope *s, const CgClo *c, SrVal *x) { return c->M ? call1(s, c->M, x) : x; }

/* jax.tree.map(operator.NAME, x, y) */
static SrVal *tree_op(SrNnScope *s, const char *op, SrVal *x, SrVal *y) {
  SrVal *f = sr_lookup_qualname(op);
  if (!f) return sr_raise(s->I, "NotImplementedError", "%s is not available", op);
  return C3("jax.tree.map", f, x, y);
}

/* partial(operator.mul, scalar) */
static SrVal *scale_fn(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "mul() takes 1 argument");
  return sr_binop(I, SR_OP_MUL, sr_current_builtin(I)->data, a->v[0]);
}

static void unref_data(void *d) { sr_unref(d); }

/* _mul(scalar, tree) */
static SrVal *tree_scale(SrNnScope *s, SrVal *scalar, SrVal *t) {
  if (!scalar || !t) return NULL;
  SrVal *f = KEEP(sr_builtin_with("mul", scale_fn, sr_ref(scalar), unref_data));
  return C2("jax.tree.map", f, t);
}

/* _vdot(x, y): jnp.vdot(x, y, precision=HIGHEST) */
static SrVal *vdot(SrNnScope *s, SrVal *x, SrVal *y) {
  if (!x || !y) return NULL;
  SrVal *v[2] = {x, y}, *p = KEEP(sr_str(NULL, "highest", 7));
  const char *kw[1] = {"precision"};
  return sr_nn_call(s, "jax.numpy.vdot", 2, v, 1, kw, &p);
}

static int is_complex(SrNnScope *s, SrVal *x) {
  const SrType *t = sr_value_type(s->I, x);
  return t && sr_dtype_is_complex(t->dtype);
}

/* _vdot_real_tree(x, y): sum(tree_leaves(tree_map(_vdot_real_part, x, y))),
   Python's sum from 0 */
static SrVal *vdot_real_tree(SrNnScope *s, SrVal *x, SrVal *y) {
  SrVal *lx = x ? C1("jax.tree.leaves", x) : NULL, *ly = y ? C1("jax.tree.leaves", y) : NULL;
  if (!lx || !ly) return NULL;
  if (lx->seq.n != ly->seq.n) return sr_raise(s->I, "ValueError", "Tree structures of x and y do not match");
  SrVal *total = INT(0);
  for (int i = 0; i < lx->seq.n && total; i++) {
    SrVal *a = lx->seq.items[i], *b = ly->seq.items[i];
    SrVal *r = vdot(s, KEEP(sr_getattr(s->I, a, "real")), KEEP(sr_getattr(s->I, b, "real")));
    if (r && (is_complex(s, a) || is_complex(s, b)))
      r = OP(ADD, r, vdot(s, KEEP(sr_getattr(s->I, a, "imag")), KEEP(sr_getattr(s->I, b, "imag"))));
    total = r ? OP(ADD, total, r) : NULL;
  }
  return total;
}

static SrVal *astype(SrNnScope *s, SrVal *x, int dt) {
  if (!x) return NULL;
  SrVal *m = KEEP(sr_getattr(s->I, x, "astype")), *d = KEEP(sr_dtype_val(NULL, (SrDtype)dt));
  return call1(s, m, d);
}

/* cond_fun((x, r, gamma, p, k)): (rs > atol2) & (k < maxiter) */
static SrVal *cg_cond(SrInterp *I, SrArgs *a) {
  CgClo *c = cur(I);
  SCOPE(I);
  SrVal *v = a->v[0];
  SrVal *r = item(s, v, 1), *gamma = item(s, v, 2), *k = item(s, v, 4);
  SrVal *rs = c->M ? vdot_real_tree(s, r, r) : gamma ? KEEP(sr_getattr(I, gamma, "real")) : NULL;
  return DONE(OP(BITAND, OP(GT, rs, c->atol2), OP(LT, k, INT(c->maxiter))));
}

/* body_fun: one step of the preconditioned iteration */
static SrVal *cg_body(SrInterp *I, SrArgs *a) {
  CgClo *c = cur(I);
  SCOPE(I);
  SrVal *v = a->v[0];
  SrVal *x = item(s, v, 0), *r = item(s, v, 1), *gamma = item(s, v, 2), *p = item(s, v, 3), *k = item(s, v, 4);
  SrVal *Ap = call1(s, c->A, p);
  SrVal *alpha = OP(DIV, gamma, astype(s, vdot_real_tree(s, p, Ap), c->dtype));
  SrVal *x_ = tree_op(s, "operator.add", x, tree_scale(s, alpha, p));
  SrVal *r_ = tree_op(s, "operator.sub", r, tree_scale(s, alpha, Ap));
  SrVal *z_ = precond(s, c, r_);
  SrVal *gamma_ = astype(s, vdot_real_tree(s, r_, z_), c->dtype);
  SrVal *beta_ = OP(DIV, gamma_, gamma);
  SrVal *p_ = tree_op(s, "operator.add", z_, tree_scale(s, beta_, p));
  SrVal *k_ = OP(ADD, k, INT(1));
  SrVal *it[5] = {x_, r_, gamma_, p_, k_};
  for (int i = 0; i < 5; i++)
    if (!it[i]) return DONE(NULL);
  for (int i = 0; i < 5; i++) sr_ref(it[i]);
  return DONE(KEEP(sr_tuple(NULL, 5, it)));
}

/* _cg_solve(A, b, x0=, maxiter=, tol=, atol=, M=): the solve
   custom_linear_solve calls as solve(matvec, b); A is the matvec it
   passes */
static SrVal *cg_solve(SrInterp *I, SrArgs *a) {
  CgClo *c0 = cur(I);
  if (a->n != 2) return sr_raise(I, "TypeError", "_cg_solve() takes 2 positional arguments");
  SCOPE(I);
  CgClo *c = clo_copy(c0);
  sr_unref(c->A);
  c->A = sr_ref(a->v[0]);
  SrVal *b = a->v[1];
  SrVal *bs = vdot_real_tree(s, b, b);
  SrVal *atol2 = C2("jax.numpy.maximum", OP(MUL, C1("jax.numpy.square", c->tol), bs), C1("jax.numpy.square", c->atol));
  SrVal *r0 = tree_op(s, "operator.sub", b, call1(s, c->A, c->x0));
  SrVal *p0 = precond(s, c, r0);
  SrVal *leaves = p0 ? C1("jax.tree.leaves", p0) : NULL;
  SrVal *rt = leaves ? sr_nn_call(s, "jax.numpy.result_type", leaves->seq.n, leaves->seq.items, 0, NULL, NULL) : NULL;
  int dt = -1;
  if (rt && sr_dtype_arg(I, rt, &dt, "result_type") < 0) dt = -1;
  if (!atol2 || dt < 0) {
    clo_free(c);
    return DONE(NULL);
  }
  c->dtype = dt;
  c->atol2 = sr_ref(atol2);
  SrVal *gamma0 = astype(s, vdot_real_tree(s, r0, p0), dt);
  SrVal *cond = KEEP(sr_builtin_with("cond_fun", cg_cond, clo_copy(c), clo_free));
  SrVal *body = KEEP(sr_builtin_with("body_fun", cg_body, c, clo_free));
  SrVal *it[5] = {c->x0, r0, gamma0, p0, INT(0)};
  for (int i = 0; i < 5; i++)
    if (!it[i]) return DONE(NULL);
  for (int i = 0; i < 5; i++) sr_ref(it[i]);
  SrVal *init = KEEP(sr_tuple(NULL, 5, it));
  return DONE(item(s, C3("jax.lax.while_loop", cond, body, init), 0));
}

/* partial(_dot, f) for a matrix operator */
static SrVal *dot_fn(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "_dot() takes 1 argument");
  SCOPE(I);
  SrVal *v[2] = {sr_current_builtin(I)->data, a->v[0]}, *p = KEEP(sr_str(NULL, "highest", 7));
  const char *kw[1] = {"precision"};
  return DONE(sr_nn_call(s, "jax.numpy.dot", 2, v, 1, kw, &p));
}

/* _normalize_matvec(f) */
static SrVal *normalize_matvec(SrInterp *I, SrVal *f) {
  SrArrayObj *o = sr_array_of(f);
  if (o || sr_is_ndarray(f)) {
    const SrType *t = sr_value_type(I, f);
    if (!t) return NULL;
    if (t->ndim != 2 || t->dims[0].size != t->dims[1].size) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_putc(&b, '(');
      for (int i = 0; i < t->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
      sr_buf_puts(&b, t->ndim == 1 ? ",)" : ")");
      sr_raise(I, "ValueError", "linear operator must be a square matrix, but has shape: %s", b.p);
      sr_buf_free(&b);
      return NULL;
    }
    return sr_builtin_with("_dot", dot_fn, sr_ref(f), unref_data);
  }
  if (sr_is_callable(I, f)) return sr_ref(f);
  SrBuf b = SR_BUF_INIT;
  sr_to_str(I, &b, f);
  sr_raise(I, "TypeError", "linear operator must be either a function or ndarray: %s", b.p ? b.p : "");
  sr_buf_free(&b);
  return NULL;
}

/* cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
   _isolve(_cg_solve, ..., check_symmetric=True) */
static SrVal *sparse_cg(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "cg", "A, b, x0=, *, tol=, atol=, maxiter=, M=", p) < 0) return NULL;
  SCOPE(I);
  SrVal *b = p[1];
  SrVal *x0 = p[2] && p[2]->kind != SR_V_NONE ? p[2] : NULL;
  if (!x0) {
    SrVal *zl = sr_lookup_qualname("jax.numpy.zeros_like");
    if (!zl) return DONE(sr_raise(I, "NotImplementedError", "jax.numpy.zeros_like is not available"));
    x0 = C2("jax.tree.map", zl, b);
    if (!x0) return DONE(NULL);
  }
  /* api.device_put((b, x0)) */
  SrVal *pair[2] = {sr_ref(b), sr_ref(x0)};
  SrVal *put = C1("jax.device_put", KEEP(sr_tuple(NULL, 2, pair)));
  b = item(s, put, 0);
  x0 = item(s, put, 1);
  if (!b || !x0) return DONE(NULL);
  SrVal *bl = C1("jax.tree.leaves", b), *xl = bl ? C1("jax.tree.leaves", x0) : NULL;
  if (!xl) return DONE(NULL);
  int64_t maxiter = 0;
  if (p[5] && p[5]->kind != SR_V_NONE) {
    if (sr_as_int(I, p[5], "maxiter", &maxiter) < 0) return DONE(NULL);
  } else {
    for (int i = 0; i < bl->seq.n; i++) {
      const SrType *t = sr_value_type(I, bl->seq.items[i]);
      if (!t) return DONE(NULL);
      maxiter += sr_type_numel(t);
    }
    maxiter *= 10;
  }
  SrVal *A = KEEP(normalize_matvec(I, p[0]));
  SrVal *M = p[6] && p[6]->kind != SR_V_NONE ? KEEP(normalize_matvec(I, p[6])) : NULL;
  if (!A || (p[6] && p[6]->kind != SR_V_NONE && !M)) return DONE(NULL);
  SrVal *ts = C1("jax.tree.structure", x0), *bs = C1("jax.tree.structure", b);
  if (!ts || !bs) return DONE(NULL);
  SrVal *same = KEEP(sr_binop(I, SR_OP_EQ, ts, bs));
  if (!same) return DONE(NULL);
  if (!sr_val_truthy(same)) {
    SrBuf m = SR_BUF_INIT, n = SR_BUF_INIT;
    sr_to_str(I, &m, ts);
    sr_to_str(I, &n, bs);
    sr_raise(I, "ValueError", "x0 and b must have matching tree structure: %s vs %s", m.p ? m.p : "", n.p ? n.p : "");
    sr_buf_free(&m);
    sr_buf_free(&n);
    return DONE(NULL);
  }
  int shapes_match = 1, symmetric = 1;
  for (int i = 0; i < bl->seq.n; i++) {
    const SrType *t = sr_value_type(I, bl->seq.items[i]), *u = sr_value_type(I, xl->seq.items[i]);
    if (!t || !u) return DONE(NULL);
    if (t->ndim != u->ndim) shapes_match = 0;
    for (int d = 0; shapes_match && d < t->ndim; d++) shapes_match = t->dims[d].size == u->dims[d].size;
    if (sr_dtype_is_complex(t->dtype)) symmetric = 0;
  }
  if (!shapes_match) {
    SrBuf m = SR_BUF_INIT;
    for (int k = 0; k < 2; k++) {
      SrVal *l = k ? bl : xl;
      if (k) sr_buf_puts(&m, " vs ");
      sr_buf_putc(&m, '[');
      for (int i = 0; i < l->seq.n; i++) {
        const SrType *t = sr_value_type(I, l->seq.items[i]);
        if (i) sr_buf_puts(&m, ", ");
        sr_buf_putc(&m, '(');
        for (int d = 0; d < t->ndim; d++) sr_buf_printf(&m, d ? ", %lld" : "%lld", (long long)t->dims[d].size);
        sr_buf_puts(&m, t->ndim == 1 ? ",)" : ")");
      }
      sr_buf_putc(&m, ']');
    }
    sr_raise(I, "ValueError", "arrays in x0 and b must have matching shapes: %s", m.p);
    sr_buf_free(&m);
    return DONE(NULL);
  }
  CgClo *c = sr_xcalloc(1, sizeof *c);
  c->M = M ? sr_ref(M) : NULL;
  c->x0 = sr_ref(x0);
  c->tol = p[3] ? sr_ref(p[3]) : sr_float(NULL, 1e-5);
  c->atol = p[4] ? sr_ref(p[4]) : sr_float(NULL, 0.0);
  c->maxiter = maxiter;
  SrVal *solve = KEEP(sr_builtin_with("_cg_solve", cg_solve, c, clo_free));
  SrVal *v[3] = {A, b, solve}, *kwv[2] = {solve, KEEP(sr_bool(symmetric))};
  const char *kw[2] = {"transpose_solve", "symmetric"};
  SrVal *x = sr_nn_call(s, "jax.lax.custom_linear_solve", 3, v, 2, kw, kwv);
  if (!x) return DONE(NULL);
  SrVal *it[2] = {sr_ref(x), sr_none()};
  return DONE(KEEP(sr_tuple(NULL, 2, it)));
}

void sr_scipy_sparse_init(void) {
  sr_def("jax.scipy.sparse.linalg.cg", sparse_cg,
         "cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None): (x, None), the conjugate gradient "
         "solution of A x = b (a while_loop inside custom_linear_solve)");
}
