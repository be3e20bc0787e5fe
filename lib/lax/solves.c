/* solves.c: the rules of custom_linear_solve (lax/control_flow/solves.py).
 *
 * custom_linear_solve(*consts, *b) has two params, each a 4-tuple in the
 * order of JAX's _LinearSolveTuple -- matvec, vecmat, solve,
 * transpose_solve:
 *
 *   const_lengths  how many of the leading operands each jaxpr takes
 *   jaxprs         the four jaxprs (vecmat and transpose_solve may be
 *                  None), each taking its constants and then one value
 *                  shaped like b; solve may return auxiliary values after
 *                  its solution
 *
 * The results are the solution, shaped like b, then solve's auxiliary
 * values.  Running it runs solve.  Its JVP solves again for
 * b_dot - (dA) x, the tangent of matvec in its constants at the solution;
 * its transpose solves the transposed system (vecmat and transpose_solve
 * in the places of matvec and solve), and batching batches the four
 * jaxprs consistently (a fixed point of which parts of x and b are
 * batched), as JAX's rules do.  The printer writes both params as JAX's
 * str of a _LinearSolveTuple (text/print.c, SR_PP_LINEAR_SOLVE).
 */
#include "lax/lax.h"

#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "check/check.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "util/intern.h"

enum { LS_MATVEC, LS_VECMAT, LS_SOLVE, LS_TSOLVE };

/* The params read: each jaxpr (or NULL for None), how many constants
   each takes and where they start among the operands. */
typedef struct Ls {
  SrJaxpr *j[4];
  int n[4], at[4];
  int nconst;
} Ls;

/* Reads const_lengths and jaxprs; -1 when either is not a 4-tuple of the
   right kinds (a parsed text keeps them as text). */
static int ls_read(const SrVal *cl, const SrVal *js, Ls *s) {
  if (!cl || !js || cl->kind != SR_V_TUPLE || js->kind != SR_V_TUPLE || cl->seq.n != 4 || js->seq.n != 4) return -1;
  s->nconst = 0;
  for (int i = 0; i < 4; i++) {
    const SrVal *c = cl->seq.items[i], *j = js->seq.items[i];
    if (c->kind != SR_V_INT || c->i < 0) return -1;
    if (j->kind != SR_V_JAXPR && j->kind != SR_V_NONE) return -1;
    s->j[i] = j->kind == SR_V_JAXPR ? j->jx.jaxpr : NULL;
    s->n[i] = (int)c->i;
    s->at[i] = s->nconst;
    s->nconst += s->n[i];
  }
  return s->j[LS_MATVEC] && s->j[LS_SOLVE] ? 0 : -1;
}

static int ls_of(const void *e, SrLaxParamGet get, Ls *s) {
  return ls_read(get(e, "const_lengths"), get(e, "jaxprs"), s);
}

/* The param values of a _LinearSolveTuple of four (new references). */
static SrVal *ls_ints(const int *n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 4);
  for (int i = 0; i < 4; i++) sr_seq_push(NULL, t, sr_int(NULL, n[i]));
  return t;
}

static SrVal *ls_jaxprs(SrJaxpr *const *j) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 4);
  for (int i = 0; i < 4; i++) sr_seq_push(NULL, t, j[i] ? sr_jaxpr_val(NULL, j[i]) : sr_none());
  return t;
}

/* Binds custom_linear_solve with these jaxprs and constant counts. */
static SrVal *ls_bind(SrAd *ad, SrJaxpr *const *j, const int *n, int nin, SrVal **in) {
  SrPList ps = {0};
  sr_plist_add(&ps, "const_lengths", ls_ints(n));
  sr_plist_add(&ps, "jaxprs", ls_jaxprs(j));
  SrVal *r = sr_ad_bind(ad, SR_P_custom_linear_solve, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

/* ==== type ==== */

/* _linear_solve_abstract_eval: the b operands' types, then the types of
   solve's auxiliary results. */
static int type_linear_solve(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  Ls s;
  if (ls_of(e, sr_lax_get_rule, &s) < 0)
    return sr_terr(cx, "JaxprTypeError",
                   "custom_linear_solve takes const_lengths and jaxprs, _LinearSolveTuples of four");
  int nb = (int)e->nin - s.nconst;
  const SrJaxpr *solve = s.j[LS_SOLVE];
  if (nb < 0 || (int)sr_nargs(solve) != s.n[LS_SOLVE] + nb || (int)solve->nout < nb)
    return sr_terr(cx, "JaxprTypeError", "custom_linear_solve: %u operands do not match its jaxprs", e->nin);
  if (e->nout != solve->nout)
    return sr_terr(cx, "TypeError", "custom_linear_solve has %u results but its solve returns %u values", e->nout,
                   solve->nout);
  for (int i = 0; i < nb; i++) out[i] = e->in[s.nconst + i];
  for (uint32_t k = (uint32_t)nb; k < solve->nout; k++) out[k] = sr_atom_type(solve->outvars[k]);
  return 0;
}

/* ==== eval ==== */

/* _custom_linear_solve_impl: solve on its constants and b. */
static int ev_linear_solve(SrEvalCtx *cx, const SrEvalEqn *e) {
  Ls s;
  if (ls_of(e, sr_lax_get_ev, &s) < 0) return sr_ev_err(cx, "TypeError", "custom_linear_solve without its jaxprs");
  int nb = (int)e->nin - s.nconst, n = s.n[LS_SOLVE] + nb;
  const SrJaxpr *solve = s.j[LS_SOLVE];
  if (nb < 0 || (int)sr_nargs(solve) != n || solve->nout != e->nout)
    return sr_ev_err(cx, "TypeError", "custom_linear_solve: its operands do not match its solve jaxpr");
  SrArray **in = sr_xcalloc((size_t)n + 1, sizeof *in);
  for (int i = 0; i < s.n[LS_SOLVE]; i++) in[i] = e->in[s.at[LS_SOLVE] + i];
  for (int i = 0; i < nb; i++) in[s.n[LS_SOLVE] + i] = e->in[s.nconst + i];
  int rc = sr_ev_jaxpr(cx, solve, in, e->out);
  free(in);
  /* the equation's types (the body's may differ in weak types) */
  for (uint32_t i = 0; rc == 0 && i < e->nout; i++) {
    if (e->out[i]->type == e->out_type[i]) continue;
    SrArray *r = sr_array_retype(e->out[i], e->out_type[i], NULL);
    sr_array_unref(e->out[i]);
    e->out[i] = r;
    if (!r) rc = -1;
  }
  return rc;
}

/* ==== jvp ==== */

/* _custom_linear_solve_jvp: A x = b gives dA x + A dx = db, so
   dx = solve(db - dA x), dA x the tangent of matvec in its constants at
   the solution x (_tangent_linear_map); the auxiliary results' tangents
   are zero. */
static int jvp_linear_solve(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  Ls s;
  SrVal *v1 = sr_eqn_param(e, sr_intern_cstr("const_lengths")), *v2 = sr_eqn_param(e, sr_intern_cstr("jaxprs"));
  if (ls_read(v1, v2, &s) < 0)
    return sr_raise(ad->I, "TypeError", "custom_linear_solve without its jaxprs"), -1;
  int nin = (int)e->nin, nb = nin - s.nconst;
  SrVal *xs = sr_ad_bind_eqn(ad, e, x);
  if (!xs) return -1;
  for (uint32_t i = 0; i < e->nout; i++) y[i] = xs->seq.items[i];
  int any = 0;
  for (int i = 0; i < s.n[LS_MATVEC]; i++) any |= t[s.at[LS_MATVEC] + i] != NULL;
  SrVal **rhs = sr_xcalloc((size_t)nin + 1, sizeof *rhs);
  for (int i = 0; i < nb; i++) rhs[s.nconst + i] = t[s.nconst + i];
  int rc = 0;
  if (any) {
    const SrJaxpr *mv = s.j[LS_MATVEC];
    int nm = s.n[LS_MATVEC] + nb;
    SrVal **p = sr_xcalloc((size_t)nm + 1, sizeof *p), **pt = sr_xcalloc((size_t)nm + 1, sizeof *pt);
    SrVal **o = sr_xcalloc(2 * mv->nout + 1, sizeof *o);
    for (int i = 0; i < s.n[LS_MATVEC]; i++) {
      p[i] = x[s.at[LS_MATVEC] + i];
      pt[i] = t[s.at[LS_MATVEC] + i];
    }
    for (int i = 0; i < nb; i++) p[s.n[LS_MATVEC] + i] = y[i];
    rc = (int)sr_nargs(mv) == nm && (int)mv->nout == nb ? sr_ad_eval(ad, mv, p, pt, o, o + mv->nout) : -1;
    if (rc < 0 && !ad->I->exc) sr_raise(ad->I, "TypeError", "custom_linear_solve: its matvec does not match b");
    for (uint32_t i = 0; i < mv->nout; i++) {
      SrVal *dax = rc == 0 ? sr_ad_keep(ad, o[mv->nout + i]) : (sr_unref(o[mv->nout + i]), NULL);
      sr_unref(o[i]);
      if (rc == 0 && dax) {
        SrVal *neg = sr_ad_neg(ad, dax);
        rhs[s.nconst + i] = rhs[s.nconst + i] ? sr_ad_add_tangents(ad, rhs[s.nconst + i], neg) : neg;
        if (!rhs[s.nconst + i]) rc = -1;
      }
    }
    free(p);
    free(pt);
    free(o);
  }
  for (int i = 0; rc == 0 && i < nb; i++)
    if (!rhs[s.nconst + i] && !(rhs[s.nconst + i] = sr_ad_zeros_staged(ad, sr_ad_ct_type(e->in[s.nconst + i]->type))))
      rc = -1;
  if (rc == 0) {
    for (int i = 0; i < s.nconst; i++) rhs[i] = x[i];
    SrVal *dx = sr_ad_bind_eqn(ad, e, rhs);
    if (!dx) rc = -1;
    for (uint32_t i = 0; rc == 0 && i < e->nout; i++) ty[i] = (int)i < nb ? dx->seq.items[i] : NULL;
  }
  free(rhs);
  return rc;
}

/* ==== transpose ==== */

/* _linear_solve_transpose_rule: the cotangent of b is the solution of the
   transposed system for the solution's cotangent. */
static int tr_linear_solve(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **ctx) {
  Ls s;
  SrVal *v1 = sr_eqn_param(e, sr_intern_cstr("const_lengths")), *v2 = sr_eqn_param(e, sr_intern_cstr("jaxprs"));
  if (ls_read(v1, v2, &s) < 0)
    return sr_raise(ad->I, "TypeError", "custom_linear_solve without its jaxprs"), -1;
  if (!s.j[LS_TSOLVE])
    return sr_raise(ad->I, "TypeError",
                    "transpose_solve required for backwards mode automatic differentiation of custom_linear_solve"),
           -1;
  int nb = (int)e->nin - s.nconst;
  for (int i = 0; i < s.nconst; i++)
    if (!x[i]) return sr_raise(ad->I, "NotImplementedError", "open an issue at https://github.com/google/jax !!"), -1;
  for (uint32_t i = (uint32_t)nb; i < e->nout; i++)
    if (ct[i]) return sr_raise(ad->I, "NotImplementedError", "open an issue at https://github.com/google/jax !!"), -1;
  /* the transposed tuple: (vecmat, matvec, transpose_solve, solve) */
  static const int perm[4] = {LS_VECMAT, LS_MATVEC, LS_TSOLVE, LS_SOLVE};
  SrJaxpr *j[4];
  int n[4];
  SrVal **in = sr_xcalloc(e->nin + 1, sizeof *in);
  int k = 0;
  for (int q = 0; q < 4; q++) {
    j[q] = s.j[perm[q]];
    n[q] = s.n[perm[q]];
    for (int i = 0; i < n[q]; i++) in[k++] = x[s.at[perm[q]] + i];
  }
  int rc = 0;
  for (int i = 0; i < nb && rc == 0; i++)
    if (!(in[k++] = ct[i] ? ct[i] : sr_ad_full_zeros(ad, sr_ad_ct_type(e->out[i]->type)))) rc = -1;
  SrVal *r = rc == 0 ? ls_bind(ad, j, n, (int)e->nin, in) : NULL;
  free(in);
  if (!r) return -1;
  for (int i = 0; i < nb; i++) ctx[s.nconst + i] = r->seq.items[i];
  return 0;
}

/* ==== batching ==== */

/* batching.batch_jaxpr is memoized (_batch_jaxpr's weakref_lru_cache):
   the same jaxpr batched the same way is the same jaxpr, which the
   printer then hoists (a symmetric solve's matvec and vecmat).  The memo
   of one rule's calls, each entry a reference to its program. */
typedef struct BMemo {
  struct {
    const SrJaxpr *j;
    uint8_t *key; /* in_batched then inst, nargs + nout bytes */
    SrJaxpr *r;
    uint8_t *out;
  } e[64];
  int n;
} BMemo;

static SrJaxpr *batch_memo(SrBatch *b, BMemo *m, const SrJaxpr *j, const uint8_t *in, const uint8_t *inst,
                           uint8_t *out) {
  size_t na = sr_nargs(j), no = j->nout;
  for (int i = 0; i < m->n; i++)
    if (m->e[i].j == j && memcmp(m->e[i].key, in, na) == 0 && memcmp(m->e[i].key + na, inst, no) == 0) {
      memcpy(out, m->e[i].out, no);
      sr_program_ref(m->e[i].r->prog);
      return m->e[i].r;
    }
  SrJaxpr *r = sr_batch_jaxpr(b, j, in, inst, out);
  if (r && m->n < 64) {
    int i = m->n++;
    m->e[i].j = j;
    m->e[i].key = sr_xmalloc(na + no + 1);
    memcpy(m->e[i].key, in, na);
    memcpy(m->e[i].key + na, inst, no);
    m->e[i].out = sr_xmalloc(no + 1);
    memcpy(m->e[i].out, out, no);
    m->e[i].r = r;
    sr_program_ref(r->prog);
  }
  return r;
}

static void batch_memo_free(BMemo *m) {
  for (int i = 0; i < m->n; i++) {
    free(m->e[i].key);
    free(m->e[i].out);
    sr_program_unref(m->e[i].r->prog);
  }
}

/* _linear_solve_batching_rule: which parts of x and b are batched is a
   fixed point over the four jaxprs (solve and vecmat give x, matvec and
   transpose_solve give b); the constants are batched at 0, b broadcast
   where it must be, and the solution is batched at 0 where solve says. */
static int batch_linear_solve(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrAd *ad = &b->ad;
  Ls s;
  SrVal *v1 = sr_eqn_param(e, sr_intern_cstr("const_lengths")), *v2 = sr_eqn_param(e, sr_intern_cstr("jaxprs"));
  if (ls_read(v1, v2, &s) < 0)
    return sr_raise(ad->I, "TypeError", "custom_linear_solve without its jaxprs"), -1;
  int nin = (int)e->nin, nb = nin - s.nconst;
  SrJaxpr *solve = s.j[LS_SOLVE], *vecmat = s.j[LS_VECMAT], *matvec = s.j[LS_MATVEC], *solve_t = s.j[LS_TSOLVE];
  int nx = (int)solve->nout, naux = nx - (int)matvec->nout, cap = nin + nx + 4;
  uint8_t *orig_b = sr_xcalloc((size_t)cap, 1), *b_bat = sr_xcalloc((size_t)cap, 1), *x_bat = sr_xcalloc((size_t)cap, 1);
  uint8_t *in = sr_xcalloc((size_t)cap, 1), *out = sr_xcalloc((size_t)cap, 1), *xo = sr_xcalloc((size_t)cap, 1);
  uint8_t *bo = sr_xcalloc((size_t)cap, 1), *solve_x = sr_xcalloc((size_t)cap, 1);
  SrJaxpr *bj[4] = {0};
  BMemo memo = {.n = 0};
  int rc = -1, done = 0;
  for (int i = 0; i < nb; i++) orig_b[i] = b_bat[i] = bd[s.nconst + i] != SR_NOT_MAPPED;
  for (int it = 0; it < 1 + nb + nx && !done; it++) {
    for (int q = 0; q < 4; q++)
      if (bj[q]) {
        sr_program_unref(bj[q]->prog);
        bj[q] = NULL;
      }
    /* vecmat and solve: the batched parts of x */
    for (int i = 0; i < s.n[LS_SOLVE]; i++) in[i] = bd[s.at[LS_SOLVE] + i] != SR_NOT_MAPPED;
    memcpy(in + s.n[LS_SOLVE], b_bat, (size_t)nb);
    if (!(bj[LS_SOLVE] = batch_memo(b, &memo, solve, in, x_bat, solve_x))) goto out;
    memcpy(xo, solve_x, (size_t)nx);
    if (vecmat) {
      for (int i = 0; i < s.n[LS_VECMAT]; i++) in[i] = bd[s.at[LS_VECMAT] + i] != SR_NOT_MAPPED;
      memcpy(in + s.n[LS_VECMAT], b_bat, (size_t)nb);
      if (!(bj[LS_VECMAT] = batch_memo(b, &memo, vecmat, in, b_bat, out))) goto out;
      for (int i = 0; i < nx; i++) xo[i] = (i < nx - naux ? out[i] : 1) || solve_x[i];
    }
    /* matvec and transpose_solve: the batched parts of b */
    for (int i = 0; i < s.n[LS_MATVEC]; i++) in[i] = bd[s.at[LS_MATVEC] + i] != SR_NOT_MAPPED;
    memcpy(in + s.n[LS_MATVEC], xo, (size_t)(nx - naux));
    if (!(bj[LS_MATVEC] = batch_memo(b, &memo, matvec, in, b_bat, out))) goto out;
    for (int i = 0; i < nb; i++) bo[i] = out[i] || orig_b[i];
    if (solve_t) {
      for (int i = 0; i < s.n[LS_TSOLVE]; i++) in[i] = bd[s.at[LS_TSOLVE] + i] != SR_NOT_MAPPED;
      memcpy(in + s.n[LS_TSOLVE], xo, (size_t)(nx - naux));
      if (!(bj[LS_TSOLVE] = batch_memo(b, &memo, solve_t, in, xo, out))) goto out;
      for (int i = 0; i < nb; i++) bo[i] |= out[i];
    }
    done = memcmp(xo, x_bat, (size_t)nx) == 0 && memcmp(bo, b_bat, (size_t)nb) == 0;
    memcpy(x_bat, xo, (size_t)nx);
    memcpy(b_bat, bo, (size_t)nb);
  }
  if (!done) {
    sr_raise(ad->I, "AssertionError", "Fixedpoint not reached");
    goto out;
  }
  {
    SrVal **nx_in = sr_xcalloc((size_t)nin + 1, sizeof *nx_in);
    int ok = 1;
    for (int i = 0; i < s.nconst && ok; i++)
      ok = (nx_in[i] = bd[i] != SR_NOT_MAPPED && bd[i] != 0 ? sr_batch_moveaxis(b, x[i], bd[i], 0) : x[i]) != NULL;
    for (int i = 0; i < nb && ok; i++) {
      int d = bd[s.nconst + i];
      SrVal *v = x[s.nconst + i];
      if (b_bat[i] && !orig_b[i]) v = sr_batch_matchaxis(b, v, SR_NOT_MAPPED, 0);
      else if (b_bat[i] && d != 0) v = sr_batch_moveaxis(b, v, d, 0);
      ok = (nx_in[s.nconst + i] = v) != NULL;
    }
    SrVal *r = ok ? ls_bind(ad, bj, s.n, nin, nx_in) : NULL;
    free(nx_in);
    if (r) {
      for (int i = 0; i < nx; i++) {
        y[i] = r->seq.items[i];
        ybd[i] = solve_x[i] ? 0 : SR_NOT_MAPPED;
      }
      rc = 0;
    }
  }
out:
  for (int q = 0; q < 4; q++)
    if (bj[q]) sr_program_unref(bj[q]->prog);
  batch_memo_free(&memo);
  free(orig_b);
  free(b_bat);
  free(x_bat);
  free(in);
  free(out);
  free(xo);
  free(bo);
  free(solve_x);
  return rc;
}

/* ==== registration ==== */

/* one result per solve output: the solution and the auxiliary values */
static uint32_t nout_linear_solve(int nin, const SrParam *ps, int np) {
  (void)nin;
  const SrVal *cl = NULL, *js = NULL;
  for (int i = 0; i < np; i++) {
    if (strcmp(ps[i].key, "const_lengths") == 0) cl = ps[i].val;
    if (strcmp(ps[i].key, "jaxprs") == 0) js = ps[i].val;
  }
  Ls s;
  return ls_read(cl, js, &s) == 0 ? s.j[LS_SOLVE]->nout : 0;
}

void sr_lax_solves_init(void) {
  sr_prims[SR_P_custom_linear_solve].nout = nout_linear_solve;
  sr_set_type_rule(SR_P_custom_linear_solve, type_linear_solve);
  sr_set_eval_rule(SR_P_custom_linear_solve, ev_linear_solve);
  sr_ad_set_jvp(SR_P_custom_linear_solve, jvp_linear_solve);
  sr_ad_set_transpose(SR_P_custom_linear_solve, tr_linear_solve);
  sr_prims[SR_P_custom_linear_solve].batch = batch_linear_solve;
}
