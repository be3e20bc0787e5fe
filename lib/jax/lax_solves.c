/* lax_solves.c: jax.lax.custom_linear_solve and jax.lax.custom_root
 * (lax/control_flow/solves.py).
 *
 * custom_linear_solve traces matvec, solve(matvec, .), and when there is a
 * transpose_solve the transpose of matvec (jax.linear_transpose's, or
 * matvec itself when symmetric) and transpose_solve(vecmat, .), each on
 * b's types with its captured values as leading inputs, and binds one
 * custom_linear_solve equation (lax/solves.c has its rules) on the
 * captured values and b's leaves.
 *
 * custom_root traces f, solve(f, .) and the tangent solve
 * tangent_solve(linearize(f, x)[1], b), and calls _custom_root, a
 * jax.custom_jvp function whose primal runs the solve jaxpr and whose
 * rule, _root_jvp, differentiates the root implicitly:
 * du = -(d_u f)^-1 (d_params f)[dparams].  JAX passes the jaxprs as the
 * custom_jvp's nondiff arguments; here the two functions hold them, which
 * prints the same equations.
 */
#include "jax/jax.h"
#include "jax/lax.h"

#include <stdlib.h>
#include <string.h>

#include "ad/ad.h"
#include "jax/api.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "jax/vjp.h"
#include "py/objects.h"

/* ---- helpers ---- */

/* PyTreeDef(...) of v */
static void treedef(SrBuf *b, SrVal *v) {
  int k = 0;
  SrVal *n = sr_pytree_numbered(v, &k);
  sr_vjp_treedef_str(b, n);
  sr_unref(n);
}

/* common._check_tree: out's structure (its first of two children with
   has_aux) must be like's; -1 with JAX's error. */
static int check_tree(SrInterp *I, const char *fname, const char *ename, SrVal *out, SrVal *like, int has_aux) {
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  int rc = 0;
  if (has_aux) {
    if (!out || out->kind != SR_V_TUPLE || out->seq.n != 2) {
      treedef(&a, out);
      sr_raise(I, "ValueError",
               "%s() produced a pytree with structure %s, but a pytree tuple with auxiliary output was expected "
               "because has_aux was set to True.",
               fname, sr_buf_str(&a));
      sr_buf_free(&a);
      return -1;
    }
    out = out->seq.items[0];
  }
  treedef(&a, out);
  treedef(&b, like);
  if (strcmp(sr_buf_str(&a), sr_buf_str(&b)) != 0) {
    sr_raise(I, "TypeError", "%s() output pytree structure must match %s, got %s and %s.", fname, ename,
             sr_buf_str(&a), sr_buf_str(&b));
    rc = -1;
  }
  sr_buf_free(&a);
  sr_buf_free(&b);
  return rc;
}

/* [(2,), (3, 4)]: np.shape of each leaf, as a Python list prints */
static void shapes_str(SrInterp *I, SrBuf *b, SrVal *leaves) {
  sr_buf_putc(b, '[');
  for (int i = 0; i < leaves->seq.n; i++) {
    const SrType *t = sr_value_type(I, leaves->seq.items[i]);
    if (i) sr_buf_puts(b, ", ");
    sr_buf_putc(b, '(');
    for (int d = 0; t && d < t->ndim; d++) sr_buf_printf(b, d ? ", %lld" : "%lld", (long long)t->dims[d].size);
    if (t && t->ndim == 1) sr_buf_putc(b, ',');
    sr_buf_putc(b, ')');
  }
  sr_buf_putc(b, ']');
}

/* One of the functions the solves trace: fn(x), or fn(pre, x) (a
   functools.partial of the solver with matvec), its result's first item
   when `first` (_transpose_one_output), its leaves' shapes checked
   against b's when check names the function (_shape_checked). */
typedef struct Fn {
  SrVal *fn, *pre;
  int first, has_aux;
  const char *check;
  SrVal *b_leaves;
} Fn;

static void fn_free(void *d) {
  Fn *f = d;
  sr_unref(f->fn);
  sr_unref(f->pre);
  sr_unref(f->b_leaves);
  free(f);
}

static SrVal *fn_call(SrInterp *I, SrArgs *a) {
  Fn *f = sr_current_builtin(I)->data;
  if (a->n != 1) return sr_raise(I, "TypeError", "the function takes one argument");
  SrVal *argv[2] = {f->pre, a->v[0]};
  SrArgs ca = {f->pre ? 2 : 1, f->pre ? argv : argv + 1, 0, NULL, NULL, NULL};
  SrVal *y = sr_call(I, f->fn, &ca);
  if (y && f->first) {
    SrVal *y0 = sr_is_seq(y) && y->seq.n == 1 ? sr_ref(y->seq.items[0]) : NULL;
    sr_unref(y);
    y = y0 ? y0 : sr_raise(I, "TypeError", "the transposed function returned no single value");
  }
  if (y && f->has_aux) {
    /* y, aux = fun(x) */
    const SrType *t = sr_is_seq(y) ? NULL : sr_value_type(I, y);
    int64_t n = sr_is_seq(y) ? y->seq.n : t && t->ndim ? t->dims[0].size : -1;
    if (n < 0) {
      sr_unref(y);
      return sr_raise(I, "TypeError", "iteration over a 0-d array");
    }
    if (n != 2) {
      sr_unref(y);
      return n > 2 ? sr_raise(I, "ValueError", "too many values to unpack (expected 2)")
                   : sr_raise(I, "ValueError", "not enough values to unpack (expected 2, got %lld)", (long long)n);
    }
  }
  if (y && f->check) {
    SrVal *part = f->has_aux && sr_is_seq(y) ? y->seq.items[0] : y;
    SrVal *leaves = sr_pytree_flatten(I, part);
    if (!leaves) {
      sr_unref(y);
      return NULL;
    }
    SrBuf got = SR_BUF_INIT, want = SR_BUF_INIT;
    shapes_str(I, &got, leaves);
    shapes_str(I, &want, f->b_leaves);
    if (strcmp(sr_buf_str(&got), sr_buf_str(&want)) != 0) {
      sr_raise(I, "ValueError", "%s() output shapes must match b, got %s and %s", f->check, sr_buf_str(&got),
               sr_buf_str(&want));
      sr_unref(y);
      y = NULL;
    }
    sr_buf_free(&got);
    sr_buf_free(&want);
    sr_unref(leaves);
  }
  return y;
}

static SrVal *fn_new(SrVal *fn, SrVal *pre, int first, const char *check, int has_aux, SrVal *b_leaves) {
  Fn *f = sr_xcalloc(1, sizeof *f);
  f->fn = sr_ref(fn);
  f->pre = pre ? sr_ref(pre) : NULL;
  f->first = first;
  f->check = check;
  f->has_aux = has_aux;
  f->b_leaves = b_leaves ? sr_ref(b_leaves) : NULL;
  return sr_builtin_with(check ? check : "f", fn_call, f, fn_free);
}

/* A traced function: its jaxpr (captured values as leading inputs), the
   captured values and its result's structure. */
typedef struct Traced {
  SrJaxpr *j;
  SrVal *consts, *out;
} Traced;

static int trace(SrInterp *I, SrVal *fn, int nargs, SrVal **args, Traced *t) {
  t->consts = t->out = NULL;
  t->j = sr_trace_fn(I, fn, nargs, args, 0, NULL, NULL, SR_TRACE_BODY, &t->out, &t->consts);
  return t->j ? 0 : -1;
}

static void traced_free(Traced *t) {
  if (t->j) sr_program_unref(t->j->prog);
  sr_unref(t->consts);
  sr_unref(t->out);
  t->j = NULL;
  t->consts = t->out = NULL;
}

/* ---- jax.lax.custom_linear_solve ---- */

static SrVal *lax_custom_linear_solve(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "custom_linear_solve",
                    "matvec, b, solve, transpose_solve=, symmetric=, has_aux=", p) < 0)
    return NULL;
  SrVal *matvec = p[0], *b = p[1], *solve = p[2], *tsolve = p[3] && p[3]->kind != SR_V_NONE ? p[3] : NULL;
  int symmetric = p[4] && sr_val_truthy(p[4]), has_aux = p[5] && sr_val_truthy(p[5]);
  if (!tsolve && symmetric) tsolve = solve;
  SrVal *b_leaves = sr_pytree_flatten(I, b);
  if (!b_leaves) return NULL;
  Traced t[4] = {{0}};
  SrVal *result = NULL, *vecmat = NULL, *f = NULL;
  /* matvec, no auxiliary data */
  f = fn_new(matvec, NULL, 0, "matvec", 0, b_leaves);
  if (trace(I, f, 1, &b, &t[0]) < 0 || check_tree(I, "matvec", "b", t[0].out, b, 0) < 0) goto done;
  sr_unref(f);
  f = fn_new(solve, matvec, 0, "solve", has_aux, b_leaves);
  if (trace(I, f, 1, &b, &t[2]) < 0 || check_tree(I, "solve", "b", t[2].out, b, has_aux) < 0) goto done;
  if (tsolve) {
    if (symmetric) {
      vecmat = sr_ref(matvec);
      t[1].j = t[0].j;
      sr_program_ref(t[1].j->prog);
      t[1].consts = sr_ref(t[0].consts);
    } else {
      SrVal *lt = sr_lookup_qualname("jax.linear_transpose");
      if (!lt) {
        sr_raise(I, "RuntimeError", "jax.linear_transpose is missing");
        goto done;
      }
      SrVal *lta[2] = {matvec, b};
      SrArgs la = {2, lta, 0, NULL, NULL, NULL};
      SrVal *tr = sr_call(I, lt, &la);
      if (!tr) goto done;
      vecmat = fn_new(tr, NULL, 1, NULL, 0, NULL);
      sr_unref(tr);
      if (trace(I, vecmat, 1, &b, &t[1]) < 0) goto done;
    }
    sr_unref(f);
    f = fn_new(tsolve, vecmat, 0, "transpose_solve", has_aux, b_leaves);
    if (trace(I, f, 1, &b, &t[3]) < 0 || check_tree(I, "transpose_solve", "b", t[3].out, b, has_aux) < 0)
      goto done;
  }
  {
    SrVal *in = sr_seq(NULL, SR_V_LIST, 0);
    SrVal *cl = sr_seq(NULL, SR_V_TUPLE, 4), *js = sr_seq(NULL, SR_V_TUPLE, 4);
    for (int q = 0; q < 4; q++) {
      int n = t[q].consts ? t[q].consts->seq.n : 0;
      for (int i = 0; i < n; i++) sr_seq_push(NULL, in, sr_ref(t[q].consts->seq.items[i]));
      sr_seq_push(NULL, cl, sr_int(NULL, n));
      sr_seq_push(NULL, js, t[q].j ? sr_jaxpr_val(NULL, t[q].j) : sr_none());
    }
    for (int i = 0; i < b_leaves->seq.n; i++) sr_seq_push(NULL, in, sr_ref(b_leaves->seq.items[i]));
    SrPList ps = {0};
    sr_plist_add(&ps, "const_lengths", cl);
    sr_plist_add(&ps, "jaxprs", js);
    SrVal *r = NULL;
    if (sr_auto_insert_reshard(I, in->seq.n, in->seq.items) == 0)
      r = sr_bind(I, SR_P_custom_linear_solve, in->seq.n, in->seq.items, ps.n, ps.p);
    sr_plist_free(&ps);
    sr_unref(in);
    if (r) result = sr_pytree_unflatten(t[2].out, r);
    sr_unref(r);
  }
done:
  for (int q = 0; q < 4; q++) traced_free(&t[q]);
  sr_unref(f);
  sr_unref(vecmat);
  sr_unref(b_leaves);
  return result;
}

/* ---- jax.lax.custom_root ---- */

/* What _custom_root and _root_jvp hold: the jaxprs of f, solve and the
   tangent solve (l_and_s) and how many constants each takes. */
typedef struct Root {
  int rc;
  SrJaxpr *j[3];
  int n[3], nconst;
} Root;

static void root_unref(void *d) {
  Root *r = d;
  if (--r->rc > 0) return;
  for (int q = 0; q < 3; q++) sr_program_unref(r->j[q]->prog);
  free(r);
}

static SrVal *custom_root_fn(SrInterp *I, Root *r);

/* The outputs of jaxpr j on pre[npre] then args[nargs] (a tuple). */
static SrVal *run(SrInterp *I, const SrJaxpr *j, int npre, SrVal **pre, int nargs, SrVal **args) {
  SrVal **in = sr_xcalloc((size_t)(npre + nargs) + 1, sizeof *in);
  memcpy(in, pre, (size_t)npre * sizeof *in);
  memcpy(in + npre, args, (size_t)nargs * sizeof *in);
  SrVal *o = sr_eval_jaxpr(I, j, npre + nargs, in);
  free(in);
  return o;
}

/* _custom_root(*consts, *initial_guess): the solve jaxpr */
static SrVal *root_primal(SrInterp *I, SrArgs *a) {
  Root *r = sr_current_builtin(I)->data;
  if (a->n < r->nconst) return sr_raise(I, "TypeError", "_custom_root: too few arguments");
  return run(I, r->j[1], r->n[1], a->v + r->n[0], a->n - r->nconst, a->v + r->nconst);
}

/* f_at_solution(*params_f): f on its constants and the solution */
typedef struct AtSol {
  Root *r;
  SrVal *sol; /* a tuple */
} AtSol;

static void atsol_free(void *d) {
  AtSol *s = d;
  root_unref(s->r);
  sr_unref(s->sol);
  free(s);
}

static SrVal *at_solution(SrInterp *I, SrArgs *a) {
  AtSol *s = sr_current_builtin(I)->data;
  return run(I, s->r->j[0], a->n, a->v, s->sol->seq.n, s->sol->seq.items);
}

/* _root_jvp(primals, tangents) */
static SrVal *root_jvp(SrInterp *I, SrArgs *a) {
  Root *r = sr_current_builtin(I)->data;
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n < r->nconst)
    return sr_raise(I, "TypeError", "_root_jvp(primals, tangents) takes two tuples");
  SrVal *primals = a->v[0], *tangents = a->v[1];
  SrVal *self = custom_root_fn(I, r);
  SrArgs ca = {primals->seq.n, primals->seq.items, 0, NULL, NULL, NULL};
  SrVal *sol = self ? sr_call(I, self, &ca) : NULL;
  sr_unref(self);
  if (!sol) return NULL;
  int nf = (int)r->j[0]->nout, nsol = sol->seq.n;
  SrVal *solution = sr_seq(NULL, SR_V_TUPLE, nf);
  for (int i = 0; i < nf && i < nsol; i++) sr_seq_push(NULL, solution, sr_ref(sol->seq.items[i]));
  SrVal *result = NULL, *lin = NULL, *rhs = NULL, *rl = NULL, *ls = NULL;
  /* rhs = d_params f at the solution, applied to the params' tangents */
  AtSol *as = sr_xcalloc(1, sizeof *as);
  as->r = r;
  r->rc++;
  as->sol = sr_ref(solution);
  SrVal *fat = sr_builtin_with("<lambda>", at_solution, as, atsol_free);
  SrVal *lz = sr_lookup_qualname("jax.linearize");
  SrVal **la = sr_xcalloc((size_t)r->n[0] + 2, sizeof *la);
  la[0] = fat;
  memcpy(la + 1, primals->seq.items, (size_t)r->n[0] * sizeof *la);
  SrArgs lza = {r->n[0] + 1, la, 0, NULL, NULL, NULL};
  lin = lz ? sr_call(I, lz, &lza) : sr_raise(I, "RuntimeError", "jax.linearize is missing");
  free(la);
  sr_unref(fat);
  if (!lin) goto done;
  if (!sr_is_seq(lin) || lin->seq.n != 2) {
    sr_raise(I, "TypeError", "jax.linearize returned no pair");
    goto done;
  }
  SrArgs ra = {r->n[0], tangents->seq.items, 0, NULL, NULL, NULL};
  if (!(rhs = sr_call(I, lin->seq.items[1], &ra)) || !(rl = sr_pytree_flatten(I, rhs))) goto done;
  /* solution_dot = -l_and_s(*params.l_and_s, *solution, *rhs) */
  {
    int nin = nf + rl->seq.n;
    SrVal **args = sr_xcalloc((size_t)nin + 1, sizeof *args);
    memcpy(args, solution->seq.items, (size_t)nf * sizeof *args);
    memcpy(args + nf, rl->seq.items, (size_t)rl->seq.n * sizeof *args);
    ls = run(I, r->j[2], r->n[2], primals->seq.items + r->n[0] + r->n[1], nin, args);
    free(args);
  }
  if (!ls) goto done;
  {
    SrVal *out_p = sr_seq(NULL, SR_V_TUPLE, nsol), *out_t = sr_seq(NULL, SR_V_TUPLE, nsol);
    int ok = 1;
    for (int i = 0; i < nsol; i++) sr_seq_push(NULL, out_p, sr_ref(sol->seq.items[i]));
    for (int i = 0; i < ls->seq.n && ok; i++) {
      SrVal *neg = sr_lax_unary(I, SR_P_neg, ls->seq.items[i]);
      if (!neg) ok = 0;
      else sr_seq_push(NULL, out_t, neg);
    }
    /* the auxiliary values' tangents are zeros like them
       (ad_util.zeros_like_jaxval: an int's are ints, which the
       custom_jvp's check refuses, as JAX's does) */
    for (int i = nf; i < nsol && ok; i++) {
      SrVal *z = sr_ad_zeros(I, sr_type_with_weak(sr_value_type(I, sol->seq.items[i]), 0));
      if (!z) ok = 0;
      else sr_seq_push(NULL, out_t, z);
    }
    SrVal *pair[2] = {out_p, out_t};
    if (ok) {
      result = sr_tuple(NULL, 2, pair); /* steals both */
    } else {
      sr_unref(out_p);
      sr_unref(out_t);
    }
  }
done:
  sr_unref(ls);
  sr_unref(rl);
  sr_unref(rhs);
  sr_unref(lin);
  sr_unref(solution);
  sr_unref(sol);
  return result;
}

/* A new custom_jvp object for _custom_root with _root_jvp as its rule
   (a fresh one each call, so that the rule does not hold the function
   that holds it). */
static SrVal *custom_root_fn(SrInterp *I, Root *r) {
  SrVal *cj = sr_lookup_qualname("jax.custom_jvp");
  if (!cj) return NULL;
  r->rc += 2;
  SrVal *prim = sr_builtin_with("_custom_root", root_primal, r, root_unref);
  SrVal *jvp = sr_builtin_with("_root_jvp", root_jvp, r, root_unref);
  SrVal *obj = sr_call1(I, cj, prim), *defjvp = obj ? sr_getattr(I, obj, "defjvp") : NULL;
  SrVal *d = defjvp ? sr_call1(I, defjvp, jvp) : NULL;
  if (!d) {
    sr_unref(obj);
    obj = NULL;
  }
  sr_unref(d);
  sr_unref(defjvp);
  sr_unref(prim);
  sr_unref(jvp);
  return obj;
}

/* linearize_and_solve(x, b): tangent_solve(linearize(f, x)[1], b) */
typedef struct LandS {
  SrVal *f, *tangent_solve;
} LandS;

static void lands_free(void *d) {
  LandS *l = d;
  sr_unref(l->f);
  sr_unref(l->tangent_solve);
  free(l);
}

static SrVal *lands_call(SrInterp *I, SrArgs *a) {
  LandS *l = sr_current_builtin(I)->data;
  if (a->n != 2) return sr_raise(I, "TypeError", "linearize_and_solve takes two arguments");
  SrVal *lz = sr_lookup_qualname("jax.linearize");
  if (!lz) return sr_raise(I, "RuntimeError", "jax.linearize is missing");
  SrVal *la[2] = {l->f, a->v[0]};
  SrArgs lza = {2, la, 0, NULL, NULL, NULL};
  SrVal *lin = sr_call(I, lz, &lza);
  if (!lin) return NULL;
  SrVal *r = NULL;
  if (!sr_is_seq(lin) || lin->seq.n != 2) {
    sr_raise(I, "TypeError", "jax.linearize returned no pair");
  } else {
    SrVal *ta[2] = {lin->seq.items[1], a->v[1]};
    SrArgs tsa = {2, ta, 0, NULL, NULL, NULL};
    r = sr_call(I, l->tangent_solve, &tsa);
  }
  sr_unref(lin);
  return r;
}

static SrVal *lax_custom_root(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "custom_root", "f, initial_guess, solve, tangent_solve, has_aux=", p) < 0) return NULL;
  SrVal *f = p[0], *guess = p[1], *solve = p[2], *tangent_solve = p[3];
  int has_aux = p[4] && sr_val_truthy(p[4]);
  SrVal *guess_leaves = sr_pytree_flatten(I, guess);
  if (!guess_leaves) return NULL;
  Traced t[3] = {{0}};
  SrVal *result = NULL, *fn = NULL, *root = NULL;
  /* each traced with its api_util.debug_info("custom_root", f,
     (initial_guess,)), ("custom_root solve", solve, (f, initial_guess),
     static_argnums=(0,)), ("custom_root tangent_solve", tangent_solve,
     (initial_guess, initial_guess)) */
  SrArgs fa = {1, &guess, 0, NULL, NULL, NULL};
  sr_trace_fn_debug_call(I, "custom_root", f, &fa, NULL, 0);
  int rc0 = trace(I, f, 1, &guess, &t[0]);
  sr_trace_fn_debug_clear();
  if (rc0 < 0 || check_tree(I, "f", "initial_guess", t[0].out, guess, 0) < 0) goto done;
  fn = fn_new(solve, f, 0, NULL, 0, NULL);
  SrVal *sv[2] = {f, guess};
  SrArgs sa = {2, sv, 0, NULL, NULL, NULL};
  static const int solve_static[1] = {0};
  sr_trace_fn_debug_call(I, "custom_root solve", solve, &sa, solve_static, 1);
  int rc1 = trace(I, fn, 1, &guess, &t[1]);
  sr_trace_fn_debug_clear();
  if (rc1 < 0 || check_tree(I, "solve", "initial_guess", t[1].out, guess, has_aux) < 0) goto done;
  sr_unref(fn);
  {
    LandS *l = sr_xcalloc(1, sizeof *l);
    l->f = sr_ref(f);
    l->tangent_solve = sr_ref(tangent_solve);
    fn = sr_builtin_with("linearize_and_solve", lands_call, l, lands_free);
  }
  SrVal *xb[2] = {guess, guess};
  SrArgs ta = {2, xb, 0, NULL, NULL, NULL};
  sr_trace_fn_debug_call(I, "custom_root tangent_solve", tangent_solve, &ta, NULL, 0);
  int rc2 = trace(I, fn, 2, xb, &t[2]);
  sr_trace_fn_debug_clear();
  if (rc2 < 0 || check_tree(I, "tangent_solve", "x", t[2].out, guess, 0) < 0) goto done;
  {
    Root *r = sr_xcalloc(1, sizeof *r);
    r->rc = 1;
    for (int q = 0; q < 3; q++) {
      r->j[q] = t[q].j;
      sr_program_ref(r->j[q]->prog);
      r->n[q] = t[q].consts->seq.n;
      r->nconst += r->n[q];
    }
    root = custom_root_fn(I, r);
    root_unref(r);
  }
  if (!root) goto done;
  {
    SrVal *in = sr_seq(NULL, SR_V_LIST, 0);
    for (int q = 0; q < 3; q++)
      for (int i = 0; i < t[q].consts->seq.n; i++) sr_seq_push(NULL, in, sr_ref(t[q].consts->seq.items[i]));
    for (int i = 0; i < guess_leaves->seq.n; i++) sr_seq_push(NULL, in, sr_ref(guess_leaves->seq.items[i]));
    SrArgs ca = {in->seq.n, in->seq.items, 0, NULL, NULL, NULL};
    SrVal *sol = sr_call(I, root, &ca);
    sr_unref(in);
    SrVal *leaves = sol ? sr_pytree_flatten(I, sol) : NULL;
    if (leaves) result = sr_pytree_unflatten(t[1].out, leaves);
    sr_unref(leaves);
    sr_unref(sol);
  }
done:
  for (int q = 0; q < 3; q++) traced_free(&t[q]);
  sr_unref(fn);
  sr_unref(root);
  sr_unref(guess_leaves);
  return result;
}

void sr_lax_solves_api_init(void) {
  sr_def("jax.lax.custom_linear_solve", lax_custom_linear_solve,
         "custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False): "
         "solve(matvec, b), differentiated implicitly");
  sr_def("jax.lax.custom_root", lax_custom_root,
         "custom_root(f, initial_guess, solve, tangent_solve, has_aux=False): solve(f, initial_guess), a root of "
         "f, differentiated implicitly");
}
