/* ad_scan.c: rules of scan and cond (lax/control_flow/loops.py:
 * _scan_jvp, _scan_linearize, _scan_transpose_fancy; conditionals.py).
 *
 * A scan's operands are its consts, its carries and its scanned-over xs;
 * its results the final carries and the stacked ys.  Linearized, a scan
 * becomes a primal scan that also returns its per-iteration residuals as
 * extra stacked outputs (residuals that are consts or xs elements are
 * passed from outside instead), and a tangent scan over the linear body;
 * transposed, the tangent scan runs in reverse, its const cotangents
 * accumulated in carries.
 */
#include "ad/ad_rules.h"

#include <stdlib.h>
#include <string.h>

#include "util/intern.h"

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)
#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

/* ---- the shape of a scan ---- */

typedef struct Scan {
  SrJaxpr *body;
  int nc, nk, nx, ny;
  int64_t length;
  int reverse;
  int ft;          /* ft_in/ft_out params (JAX 0.10) rather than num_consts */
} Scan;

static int count_leaves(const SrVal *v) {
  if (!sr_is_seq(v)) return 1;
  int n = 0;
  for (int i = 0; i < v->seq.n; i++) n += count_leaves(v->seq.items[i]);
  return n;
}

static int scan_read(SrAd *ad, const SrEqn *e, Scan *s) {
  memset(s, 0, sizeof *s);
  SrVal *j = param(e, "jaxpr");
  if (!j || j->kind != SR_V_JAXPR) return sr_raise(ad->I, "TypeError", "scan equation has no 'jaxpr' param"), -1;
  s->body = j->jx.jaxpr;
  SrVal *ft = param(e, "ft_in"), *nc = param(e, "num_consts"), *nk = param(e, "num_carry");
  if (nc || nk || !ft) {
    s->nc = nc && nc->kind == SR_V_INT ? (int)nc->i : 0;
    s->nk = nk && nk->kind == SR_V_INT ? (int)nk->i : 0;
  } else {
    if (ft->kind != SR_V_TUPLE || ft->seq.n != 3)
      return sr_raise(ad->I, "NotImplementedError", "autodiff of a scan whose ft_in is not a tuple of three groups"), -1;
    s->ft = 1;
    s->nc = count_leaves(ft->seq.items[0]);
    s->nk = count_leaves(ft->seq.items[1]);
  }
  s->nx = (int)e->nin - s->nc - s->nk;
  s->ny = (int)s->body->nout - s->nk;
  SrVal *len = param(e, "length"), *rev = param(e, "reverse");
  s->length = len && len->kind == SR_V_INT ? len->i : -1;
  if (s->length < 0 && s->nx > 0) s->length = e->in[s->nc + s->nk]->type->dims[0].size;
  s->reverse = rev && sr_val_truthy(rev);
  if (s->nx < 0 || s->ny < 0)
    return sr_raise(ad->I, "TypeError", "scan: its operands do not fit its body"), -1;
  return 0;
}

static SrVal *nones(int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_none());
  return t;
}

static SrVal *groups(int a, int b, int c, int three) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 3);
  sr_seq_push(NULL, t, nones(a));
  sr_seq_push(NULL, t, nones(b));
  if (three) sr_seq_push(NULL, t, nones(c));
  return t;
}

/* Binds a scan like e with a new body and operand counts. */
static SrVal *bind_scan(SrAd *ad, const SrEqn *e, const Scan *s, SrJaxpr *body, int nc, int nk, int nx,
                        int reverse, int nin, SrVal **in) {
  SrPList ps = {0};
  int ny = (int)body->nout - nk;
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "jaxpr") == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, body));
    else if (strcmp(k, "ft_in") == 0) sr_plist_add(&ps, k, groups(nc, nk, nx, 1));
    else if (strcmp(k, "ft_out") == 0) sr_plist_add(&ps, k, groups(nk, ny, 0, 0));
    else if (strcmp(k, "num_consts") == 0) sr_plist_add(&ps, k, sr_int(NULL, nc));
    else if (strcmp(k, "num_carry") == 0) sr_plist_add(&ps, k, sr_int(NULL, nk));
    else if (strcmp(k, "linear") == 0) {
      SrVal *l = sr_seq(NULL, SR_V_TUPLE, nc + nk + nx);
      for (int i = 0; i < nc + nk + nx; i++) sr_seq_push(NULL, l, sr_bool(0));
      sr_plist_add(&ps, k, l);
    } else if (strcmp(k, "reverse") == 0) sr_plist_add(&ps, k, sr_bool(reverse));
    else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
  }
  (void)s;
  SrVal *r = ad_bind(ad, SR_P_scan, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

/* core.mapped_leading_aval's inverse: t with a leading axis of size n. */
static const SrType *stacked(const SrType *t, int64_t n) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  memmove(b.dims + 1, b.dims, (size_t)b.ndim * sizeof *b.dims);
  memset(&b.dims[0], 0, sizeof b.dims[0]);
  b.dims[0].size = n;
  b.ndim++;
  return sr_type_get(&b);
}

/* ---- JVP (forward mode) ---- */

static int scan_jvp_mode(SrAd *ad, const SrEqn *e, const Scan *s, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  int nc = s->nc, nk = s->nk, nx = s->nx, ny = s->ny, n = nc + nk + nx, no = nk + ny;
  uint8_t *nz = sr_xcalloc((size_t)n + 1, 1), *onz = sr_xcalloc((size_t)no + 1, 1);
  uint8_t *carry_nz = nz + nc;
  for (int i = 0; i < n; i++) nz[i] = t[i] != NULL;
  SrJaxpr *J = NULL;
  uint8_t *inst = sr_xcalloc((size_t)no + 1, 1);
  /* the fixpoint of which carries have nonzero tangents */
  for (int it = 0; it <= nk + 1; it++) {
    if (J) sr_program_unref(J->prog);
    for (int i = 0; i < nk; i++) inst[i] = carry_nz[i];
    J = ad_jvp_jaxpr(ad, s->body, nz, inst, onz);
    if (!J) break;
    int same = 1;
    for (int i = 0; i < nk; i++)
      if (onz[i] && !carry_nz[i]) carry_nz[i] = 1, same = 0;
    if (same) break;
  }
  free(inst);
  int rc = -1;
  if (!J) goto out;
  /* J: [primals (n)] [nz tangents] -> [primal outs (no)] [nz touts];
     the scan wants ((consts, const dots), (carry, carry dots), (xs, xs dots))
     and ((carry, carry dots), (ys, ys dots)) */
  {
    int ntan = 0, nto = 0;
    for (int i = 0; i < n; i++) ntan += nz[i];
    for (int i = 0; i < no; i++) nto += onz[i];
    int *order = sr_xcalloc((size_t)(n + ntan) + 1, sizeof *order), k = 0;
    int tpos[1024];
    for (int i = 0, q = n; i < n && i < 1024; i++) tpos[i] = nz[i] ? q++ : -1;
    int starts[4] = {0, nc, nc + nk, n};
    int gc[3] = {0, 0, 0};
    for (int g = 0; g < 3; g++) {
      for (int i = starts[g]; i < starts[g + 1]; i++) order[k++] = i;
      for (int i = starts[g]; i < starts[g + 1]; i++)
        if (nz[i]) order[k++] = tpos[i], gc[g]++;
    }
    int *oorder = sr_xcalloc((size_t)(no + nto) + 1, sizeof *oorder), m = 0;
    int otpos[1024];
    for (int i = 0, q = no; i < no && i < 1024; i++) otpos[i] = onz[i] ? q++ : -1;
    int oc[2] = {0, 0};
    int ostarts[3] = {0, nk, no};
    for (int g = 0; g < 2; g++) {
      for (int i = ostarts[g]; i < ostarts[g + 1]; i++) oorder[m++] = i;
      for (int i = ostarts[g]; i < ostarts[g + 1]; i++)
        if (onz[i]) oorder[m++] = otpos[i], oc[g]++;
    }
    int bad = 0;
    for (int i = 0; i < nk; i++) bad |= carry_nz[i] != onz[i];
    if (bad) {
      sr_raise(ad->I, "NotImplementedError", "scan JVP: a carry whose tangent is zero on the way out");
      free(order);
      free(oorder);
      sr_program_unref(J->prog);
      goto out;
    }
    SrJaxpr *Jr = sr_ad_permute(J, order, oorder);
    SrVal **in = sr_xcalloc((size_t)(n + ntan) + 1, sizeof *in);
    for (int i = 0; i < n + ntan; i++) {
      int src = order[i];
      if (src < n) {
        in[i] = x[src];
      } else {
        int pi = 0;
        for (int q = 0; q < n; q++)
          if (tpos[q] == src) pi = q;
        in[i] = t[pi] ? t[pi] : ad_zeros(ad, sr_ad_tangent_type(ad_type(ad, x[pi])));
      }
    }
    SrVal *r = bind_scan(ad, e, s, Jr, nc + gc[0], nk + gc[1], nx + gc[2], s->reverse, n + ntan, in);
    if (r) {
      for (int i = 0; i < no + nto; i++) {
        int src = oorder[i];
        if (src < no) {
          y[src] = r->seq.items[i];
        } else {
          for (int q = 0; q < no; q++)
            if (otpos[q] == src) ty[q] = r->seq.items[i];
        }
      }
      rc = 0;
    }
    free(in);
    free(order);
    free(oorder);
    sr_program_unref(Jr->prog);
  }
out:
  free(nz);
  free(onz);
  return rc;
}

/* ---- linearization ---- */

static int scan_lin(SrAd *ad, const SrEqn *e, const Scan *s, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  int nc = s->nc, nk = s->nk, nx = s->nx, ny = s->ny, n = nc + nk + nx, no = nk + ny;
  uint8_t *nz = sr_xcalloc((size_t)n + 1, 1), *inst = sr_xcalloc((size_t)no + 1, 1);
  uint8_t *allow = sr_xcalloc((size_t)n + 1, 1);
  for (int i = 0; i < n; i++) {
    nz[i] = t[i] != NULL;
    allow[i] = i < nc || i >= nc + nk; /* carries change every iteration */
  }
  SrLinJaxprs lj = {0};
  int rc = -1, have = 0;
  for (int it = 0; it <= nk + 1; it++) {
    if (have) ad_lin_jaxprs_free(&lj);
    for (int i = 0; i < nk; i++) inst[i] = nz[nc + i];
    if (ad_linearize_jaxpr(ad, s->body, nz, inst, allow, &lj) < 0) goto out;
    have = 1;
    int same = 1;
    for (int i = 0; i < nk; i++)
      if (lj.out_nz[i] && !nz[nc + i]) nz[nc + i] = 1, same = 0;
    if (same) break;
  }
  {
    SrJaxpr *F = lj.fwd, *L = lj.lin;
    int nres = lj.nres;
    /* residuals: forwarded consts are consts of the tangent scan, forwarded
       xs and computed residuals are its xs (the latter stacked outputs of
       the primal scan) */
    int nf = (int)F->nout; /* no, then the returned residuals */
    /* dedup: a residual output equal to a ys output or an earlier residual */
    int *dup = sr_xcalloc((size_t)nf + 1, sizeof *dup);
    uint8_t *keep = sr_xcalloc((size_t)nf + 1, 1);
    for (int i = 0; i < nf; i++) {
      dup[i] = -1;
      keep[i] = 1;
      if (i < no) continue;
      SrVar *o = F->outvars[i];
      for (int k = nk; k < i && dup[i] < 0; k++)
        if (keep[k] && o->kind == SR_VAR && F->outvars[k] == o) dup[i] = k;
      if (dup[i] >= 0) keep[i] = 0;
    }
    uint8_t *keepc = sr_xcalloc((size_t)nf + 1, 1);
    memcpy(keepc, keep, (size_t)nf);
    int *ord = sr_xcalloc((size_t)nf + 1, sizeof *ord), nkept = 0;
    for (int i = 0; i < nf; i++)
      if (keep[i]) ord[nkept++] = i;
    SrJaxpr *F2 = F;
    if (nkept != nf) {
      SrJaxprBuilder b;
      sr_jb_init(&b, F->prog);
      for (uint32_t i = 0; i < sr_nargs(F); i++) sr_jb_invar(&b, sr_args(F)[i]);
      for (uint32_t k = 0; k < F->neqn; k++) {
        const SrEqn *q = &F->eqns[k];
        sr_jb_eqn(&b, q->prim, q->nin, q->in, q->nout, q->out, q->nparams, q->params);
      }
      for (int i = 0; i < nkept; i++) sr_jb_outvar(&b, F->outvars[ord[i]]);
      F2 = sr_jb_finish(&b);
    }
    SrVal *r = bind_scan(ad, e, s, F2, nc, nk, nx, s->reverse, n, x);
    SrVal **outs = sr_xcalloc((size_t)nf + 1, sizeof *outs);
    if (r) {
      for (int i = 0; i < nkept; i++) outs[ord[i]] = r->seq.items[i];
      for (int i = 0; i < nf; i++)
        if (!outs[i] && dup[i] >= 0) outs[i] = outs[dup[i]];
      for (int i = 0; i < no; i++) y[i] = outs[i];
      int anynz = 0;
      for (int i = 0; i < no; i++) anynz |= lj.out_nz[i];
      rc = 0;
      if (anynz) {
        /* the tangent scan: consts = const residuals, nz const tangents;
           carries = nz carry tangents; xs = nz xs tangents, xs residuals */
        int nl = (int)sr_nargs(L);
        int *order = sr_xcalloc((size_t)nl + 1, sizeof *order), k = 0;
        SrVal **in = sr_xcalloc((size_t)nl + 1, sizeof *in);
        int *tpos = sr_xcalloc((size_t)n + 1, sizeof *tpos);
        for (int i = 0, q = nres; i < n; i++) tpos[i] = nz[i] ? q++ : -1;
        int g0 = 0, g1 = 0, g2 = 0, q = no;
        SrVal **resv = sr_xcalloc((size_t)nres + 1, sizeof *resv);
        uint8_t *res_const = sr_xcalloc((size_t)nres + 1, 1);
        for (int rr = 0; rr < nres; rr++) {
          int f = lj.in_fwd[rr];
          if (f) {
            resv[rr] = x[f - 1];
            res_const[rr] = f - 1 < nc;
          } else {
            resv[rr] = outs[q++];
          }
        }
        for (int rr = 0; rr < nres; rr++)
          if (res_const[rr]) order[k] = rr, in[k++] = resv[rr], g0++;
        for (int i = 0; i < nc; i++)
          if (nz[i]) order[k] = tpos[i], in[k++] = t[i], g0++;
        for (int i = nc; i < nc + nk; i++)
          if (nz[i]) {
            order[k] = tpos[i];
            in[k++] = t[i] ? t[i] : ad_zeros_staged(ad, sr_ad_tangent_type(ad_type(ad, x[i])));
            g1++;
          }
        for (int i = nc + nk; i < n; i++)
          if (nz[i]) order[k] = tpos[i], in[k++] = t[i], g2++;
        for (int rr = 0; rr < nres; rr++)
          if (!res_const[rr]) order[k] = rr, in[k++] = resv[rr], g2++;
        SrJaxpr *Lp = sr_ad_permute(L, order, NULL);
        lj.lin = Lp; /* L was consumed by the permutation */
        SrVal *rt = k == nl ? bind_scan(ad, e, s, Lp, g0, g1, g2, s->reverse, k, in) : NULL;
        if (!rt) {
          if (!ad->I->exc) sr_raise(ad->I, "RuntimeError", "internal error: the tangent scan's operands");
          rc = -1;
        } else {
          for (int i = 0, mm = 0; i < no; i++) ty[i] = lj.out_nz[i] ? rt->seq.items[mm++] : NULL;
        }
        free(order);
        free(in);
        free(tpos);
        free(resv);
        free(res_const);
      }
    }
    if (F2 != F) lj.fwd = F2;
    free(outs);
    free(dup);
    free(keep);
    free(keepc);
    free(ord);
  }
out:
  if (have) ad_lin_jaxprs_free(&lj);
  free(nz);
  free(inst);
  free(allow);
  return rc;
}

JVP(jvp_scan) {
  Scan s;
  if (scan_read(ad, e, &s) < 0) return -1;
  if (ad->mode == SR_AD_LIN) return scan_lin(ad, e, &s, x, t, y, ty);
  return scan_jvp_mode(ad, e, &s, x, t, y, ty);
}

/* ---- transpose ---- */

/* The transposed body: (ires, ct_consts, ct_carry, ct_ys, eres) ->
   (ct_consts + this iteration's, ct_carry in, ct_xs). */
static SrJaxpr *scan_transpose_body(SrAd *ad, const Scan *s, const uint8_t *lin, const uint8_t *ys_nz) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  SrJaxpr *b = s->body;
  int nc = s->nc, nk = s->nk, nx = s->nx, ny = s->ny, n = nc + nk + nx;
  const SrType **types = sr_xcalloc((size_t)(n + ny) + 1, sizeof *types);
  int *slot = sr_xcalloc((size_t)(n + ny) + 1, sizeof *slot), k = 0;
  /* argument positions: ires, ct consts, ct carry, ct ys, eres */
  for (int i = 0; i < nc; i++)
    if (!lin[i]) slot[i] = k, types[k++] = sr_args(b)[i]->type;
  for (int i = 0; i < nc; i++)
    if (lin[i]) slot[i] = k, types[k++] = sr_ad_ct_type(sr_args(b)[i]->type);
  for (int i = nc; i < nc + nk; i++) slot[i] = k, types[k++] = sr_ad_ct_type(sr_args(b)[i]->type);
  for (int i = 0; i < ny; i++)
    if (ys_nz[i]) slot[n + i] = k, types[k++] = sr_ad_ct_type(b->outvars[nk + i]->type);
  for (int i = nc + nk; i < n; i++)
    if (!lin[i]) slot[i] = k, types[k++] = sr_args(b)[i]->type;
  SrVal **args = sr_xcalloc((size_t)k + 1, sizeof *args);
  SrTrace *tr = ad_trace_begin(ad, k, types, args);
  free(types);
  SrVal **vals = sr_xcalloc((size_t)n + 1, sizeof *vals), **cts = sr_xcalloc((size_t)(nk + ny) + 1, sizeof *cts);
  SrVal **cin = sr_xcalloc((size_t)n + 1, sizeof *cin);
  for (int i = 0; i < n; i++) {
    if (!lin[i]) vals[i] = args[slot[i]];
    else if (i < nc) cin[i] = sr_ref(args[slot[i]]); /* the accumulator starts from the carried sum */
  }
  for (int i = 0; i < nk; i++) cts[i] = args[slot[nc + i]];
  for (int i = 0; i < ny; i++) cts[nk + i] = ys_nz[i] ? args[slot[n + i]] : NULL;
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  I->trace = tr;
  int rc = ad_backward(&sub, b, lin, vals, cts, cin);
  SrJaxpr *r = NULL;
  if (rc == 0) {
    SrVal **outs = sr_xcalloc((size_t)n + 1, sizeof *outs);
    int m = 0;
    for (int i = 0; i < n && rc == 0; i++) {
      if (!lin[i]) continue;
      if (!cin[i]) {
        int mark = ad_mark(&sub);
        cin[i] = sr_ref(ad_zeros(&sub, sr_ad_ct_type(sr_args(b)[i]->type)));
        ad_release(&sub, mark);
        if (!cin[i]) rc = -1;
      }
      outs[m++] = cin[i];
    }
    if (rc == 0) r = ad_trace_end(&sub, tr, m, outs, NULL);
    else sr_trace_abort(I, tr);
    free(outs);
  } else {
    sr_trace_abort(I, tr);
  }
  sr_ad_end(&sub);
  for (int i = 0; i < n; i++) sr_unref(cin[i]);
  for (int i = 0; i < k; i++) sr_unref(args[i]);
  free(args);
  free(vals);
  free(cts);
  free(cin);
  free(slot);
  I->trace = saved;
  return r;
}

TR(tr_scan) {
  Scan s;
  if (scan_read(ad, e, &s) < 0) return -1;
  int nc = s.nc, nk = s.nk, nx = s.nx, ny = s.ny, n = nc + nk + nx;
  uint8_t *lin = sr_xcalloc((size_t)n + 1, 1), *ys_nz = sr_xcalloc((size_t)ny + 1, 1);
  for (int i = 0; i < n; i++) lin[i] = x[i] == NULL;
  /* carries are tangents of the body even when the value passed in is
     not linear (an instantiated zero): its cotangent is dropped */
  uint8_t *outer_lin = sr_xcalloc((size_t)n + 1, 1);
  memcpy(outer_lin, lin, (size_t)n);
  for (int i = nc; i < nc + nk; i++) lin[i] = 1;
  for (int i = 0; i < ny; i++) ys_nz[i] = ct[nk + i] != NULL;
  SrJaxpr *T = scan_transpose_body(ad, &s, lin, ys_nz);
  int rc = -1;
  if (T) {
    SrVal **in = sr_xcalloc((size_t)(n + ny) + 1, sizeof *in);
    int k = 0, g0 = 0, g1 = 0, g2 = 0;
    for (int i = 0; i < nc; i++)
      if (!lin[i]) in[k++] = x[i], g0++;
    for (int i = 0; i < nc; i++)
      if (lin[i]) in[k++] = ad_zeros(ad, sr_ad_ct_type(e->in[i]->type)), g1++;
    for (int i = 0; i < nk; i++)
      in[k++] = ct[i] ? ct[i] : ad_zeros(ad, sr_ad_ct_type(e->out[i]->type)), g1++;
    for (int i = 0; i < ny; i++)
      if (ys_nz[i]) in[k++] = ct[nk + i], g2++;
    for (int i = nc + nk; i < n; i++)
      if (!lin[i]) in[k++] = x[i], g2++;
    SrVal *r = bind_scan(ad, e, &s, T, g0, g1, g2, !s.reverse, k, in);
    if (r) {
      int q = 0;
      for (int i = 0; i < n; i++)
        if (lin[i] && i < nc) cx[i] = r->seq.items[q++];
      for (int i = nc; i < nc + nk; i++, q++)
        if (outer_lin[i]) cx[i] = r->seq.items[q];
      for (int i = nc + nk; i < n; i++)
        if (lin[i]) cx[i] = r->seq.items[q++];
      rc = 0;
    }
    free(in);
    sr_program_unref(T->prog);
  }
  free(lin);
  free(outer_lin);
  free(ys_nz);
  (void)stacked;
  return rc;
}

void sr_ad_rules_scan_init(void);
void sr_ad_rules_cond_init(void);

void sr_ad_rules_scan_init(void) {
  sr_ad_set_jvp(SR_P_scan, jvp_scan);
  sr_ad_set_transpose(SR_P_scan, tr_scan);
}

/* ---- cond ----
 *
 * cond(index, *ops) with params branches=(jaxprs).  Under linearization
 * every branch is linearized; the forward cond returns the primal outputs
 * and one set of residual slots shared by the branches (a slot per type,
 * as _merge_branch_residuals assigns them; a branch fills the slots it does
 * not use with zeros where JAX uses empty_like), and the tangent cond takes
 * the index, the slots and the nonzero tangents. */

static SrJaxpr *const *branches_of(SrAd *ad, const SrEqn *e, int *nb) {
  SrVal *v = param(e, "branches");
  static SrJaxpr *bs[64];
  *nb = v ? sr_param_jaxprs(v, bs, 64) : 0;
  if (*nb <= 0 || *nb > 64) {
    sr_raise(ad->I, "TypeError", "cond equation without branches");
    return NULL;
  }
  return bs;
}

static SrVal *bind_cond(SrAd *ad, const SrEqn *e, SrJaxpr **bs, int nb, int nin, SrVal **in) {
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "branches") == 0) {
      SrVal *t = sr_seq(NULL, SR_V_TUPLE, nb);
      for (int b = 0; b < nb; b++) sr_seq_push(NULL, t, sr_jaxpr_val(NULL, bs[b]));
      sr_plist_add(&ps, k, t);
    } else {
      sr_plist_add(&ps, k, sr_ref(e->params[p].val));
    }
  }
  SrVal *r = ad_bind(ad, SR_P_cond, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

static int cond_jvp_mode(SrAd *ad, const SrEqn *e, SrJaxpr *const *bs0, int nb, SrVal **x, SrVal **t, SrVal **y,
                         SrVal **ty) {
  uint32_t n = e->nin - 1, no = e->nout;
  uint8_t *nz = sr_xcalloc(n + 1, 1), *onz = sr_xcalloc(no + 1, 1), *any = sr_xcalloc(no + 1, 1);
  SrJaxpr *bs[64] = {0};
  for (uint32_t i = 0; i < n; i++) nz[i] = t[i + 1] != NULL;
  int rc = -1;
  for (int b = 0; b < nb; b++) {
    SrJaxpr *J = ad_jvp_jaxpr(ad, bs0[b], nz, NULL, onz);
    if (!J) goto out;
    for (uint32_t i = 0; i < no; i++) any[i] |= onz[i];
    sr_program_unref(J->prog);
  }
  for (int b = 0; b < nb; b++)
    if (!(bs[b] = ad_jvp_jaxpr(ad, bs0[b], nz, any, onz))) goto out;
  {
    SrVal **in = sr_xcalloc(2 * n + 2, sizeof *in);
    uint32_t k = 0;
    in[k++] = x[0];
    for (uint32_t i = 0; i < n; i++) in[k++] = x[i + 1];
    for (uint32_t i = 0; i < n; i++)
      if (nz[i]) in[k++] = t[i + 1];
    SrVal *r = bind_cond(ad, e, bs, nb, (int)k, in);
    free(in);
    if (r) {
      for (uint32_t i = 0, q = no; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = any[i] ? r->seq.items[q++] : NULL;
      }
      rc = 0;
    }
  }
out:
  for (int b = 0; b < nb; b++)
    if (bs[b]) sr_program_unref(bs[b]->prog);
  free(nz);
  free(onz);
  free(any);
  return rc;
}

/* A branch's forward jaxpr with its residuals moved into the shared slots
   (zeros in the slots it does not use), traced again. */
static SrJaxpr *cond_fwd_branch(SrAd *ad, SrJaxpr *F, uint32_t no, const int *slot_of, int nslots,
                                const SrType *const *slot_types) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(F);
  const SrType **types = sr_xcalloc(n + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) types[i] = sr_args(F)[i]->type;
  SrVal **args = sr_xcalloc(n + 1, sizeof *args);
  SrTrace *tr = ad_trace_begin(ad, (int)n, types, args);
  free(types);
  I->trace = tr;
  SrVal *r = sr_eval_jaxpr(I, F, (int)n, args);
  SrJaxpr *out = NULL;
  if (r) {
    SrAd sub;
    sr_ad_begin(&sub, I, SR_AD_BWD);
    SrVal **outs = sr_xcalloc(no + (uint32_t)nslots + 1, sizeof *outs);
    for (uint32_t i = 0; i < no; i++) outs[i] = r->seq.items[i];
    for (uint32_t i = no; i < (uint32_t)r->seq.n; i++) outs[no + (uint32_t)slot_of[i - no]] = r->seq.items[i];
    int ok = 1;
    for (int s2 = 0; s2 < nslots && ok; s2++)
      if (!outs[no + (uint32_t)s2]) ok = (outs[no + (uint32_t)s2] = ad_zeros(&sub, slot_types[s2])) != NULL;
    if (ok) out = ad_trace_end(&sub, tr, (int)no + nslots, outs, NULL);
    else sr_trace_abort(I, tr);
    free(outs);
    sr_ad_end(&sub);
  } else {
    sr_trace_abort(I, tr);
  }
  sr_unref(r);
  for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  I->trace = saved;
  return out;
}

/* A branch's linear jaxpr taking all the slots (it reads its own), then
   the tangents. */
static SrJaxpr *cond_lin_branch(SrAd *ad, SrJaxpr *L, int nres, const int *slot_of, int nslots,
                                const SrType *const *slot_types) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(L), nt = n - (uint32_t)nres;
  const SrType **types = sr_xcalloc((size_t)nslots + nt + 1, sizeof *types);
  for (int s2 = 0; s2 < nslots; s2++) types[s2] = slot_types[s2];
  for (uint32_t i = 0; i < nt; i++) types[(uint32_t)nslots + i] = sr_args(L)[(uint32_t)nres + i]->type;
  SrVal **args = sr_xcalloc((size_t)nslots + nt + 1, sizeof *args), **in = sr_xcalloc(n + 1, sizeof *in);
  SrTrace *tr = ad_trace_begin(ad, nslots + (int)nt, types, args);
  free(types);
  for (int r = 0; r < nres; r++) in[r] = args[slot_of[r]];
  for (uint32_t i = 0; i < nt; i++) in[(uint32_t)nres + i] = args[(uint32_t)nslots + i];
  I->trace = tr;
  SrVal *r = sr_eval_jaxpr(I, L, (int)n, in);
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  SrJaxpr *out = r ? ad_trace_end(&sub, tr, r->seq.n, r->seq.items, NULL) : NULL;
  if (!r) sr_trace_abort(I, tr);
  sr_ad_end(&sub);
  sr_unref(r);
  for (uint32_t i = 0; i < (uint32_t)nslots + nt; i++) sr_unref(args[i]);
  free(args);
  free(in);
  I->trace = saved;
  return out;
}

static int cond_lin(SrAd *ad, const SrEqn *e, SrJaxpr *const *bs0, int nb, SrVal **x, SrVal **t, SrVal **y,
                    SrVal **ty) {
  uint32_t n = e->nin - 1, no = e->nout;
  uint8_t *nz = sr_xcalloc(n + 1, 1), *any = sr_xcalloc(no + 1, 1);
  uint8_t *nofwd = sr_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) nz[i] = t[i + 1] != NULL;
  SrLinJaxprs lj[64];
  memset(lj, 0, sizeof lj);
  int rc = -1, have = 0;
  /* which outputs have a nonzero tangent in some branch */
  for (int b = 0; b < nb; b++) {
    SrLinJaxprs tmp;
    if (ad_linearize_jaxpr(ad, bs0[b], nz, NULL, nofwd, &tmp) < 0) goto out;
    for (uint32_t i = 0; i < no; i++) any[i] |= tmp.out_nz[i];
    ad_lin_jaxprs_free(&tmp);
  }
  for (int b = 0; b < nb; b++, have++)
    if (ad_linearize_jaxpr(ad, bs0[b], nz, any, nofwd, &lj[b]) < 0) goto out;
  {
    /* the residual slots */
    const SrType *stypes[1024];
    int nslots = 0, *slot_of[64];
    for (int b = 0; b < nb; b++) {
      slot_of[b] = sr_xcalloc((size_t)lj[b].nres + 1, sizeof *slot_of[b]);
      uint8_t used[1024] = {0};
      for (int r = 0; r < lj[b].nres; r++) {
        const SrType *rt = sr_args(lj[b].lin)[r]->type;
        int found = -1;
        for (int s2 = 0; s2 < nslots && found < 0; s2++)
          if (!used[s2] && stypes[s2] == rt) found = s2;
        if (found < 0 && nslots < 1024) stypes[found = nslots++] = rt;
        used[found] = 1;
        slot_of[b][r] = found;
      }
    }
    SrJaxpr *fb[64] = {0}, *lb[64] = {0};
    int ok = 1;
    for (int b = 0; b < nb && ok; b++) {
      fb[b] = cond_fwd_branch(ad, lj[b].fwd, no, slot_of[b], nslots, stypes);
      lb[b] = fb[b] ? cond_lin_branch(ad, lj[b].lin, lj[b].nres, slot_of[b], nslots, stypes) : NULL;
      ok = fb[b] && lb[b];
    }
    if (ok) {
      SrVal *r = bind_cond(ad, e, fb, nb, (int)e->nin, x);
      if (r) {
        for (uint32_t i = 0; i < no; i++) y[i] = r->seq.items[i];
        int anynz = 0;
        for (uint32_t i = 0; i < no; i++) anynz |= any[i];
        rc = 0;
        if (anynz) {
          SrVal **in = sr_xcalloc(1 + (size_t)nslots + n + 1, sizeof *in);
          uint32_t k = 0;
          in[k++] = x[0];
          for (int s2 = 0; s2 < nslots; s2++) in[k++] = r->seq.items[no + (uint32_t)s2];
          for (uint32_t i = 0; i < n; i++)
            if (nz[i]) in[k++] = t[i + 1];
          SrVal *rt = bind_cond(ad, e, lb, nb, (int)k, in);
          free(in);
          if (!rt) rc = -1;
          else
            for (uint32_t i = 0, q = 0; i < no; i++) ty[i] = any[i] ? rt->seq.items[q++] : NULL;
        }
      }
    }
    for (int b = 0; b < nb; b++) {
      if (fb[b]) sr_program_unref(fb[b]->prog);
      if (lb[b]) sr_program_unref(lb[b]->prog);
      free(slot_of[b]);
    }
  }
out:
  for (int b = 0; b < have; b++) ad_lin_jaxprs_free(&lj[b]);
  free(nz);
  free(any);
  free(nofwd);
  return rc;
}

JVP(jvp_cond) {
  int nb;
  SrJaxpr *const *bs0 = branches_of(ad, e, &nb);
  if (!bs0) return -1;
  SrJaxpr *bs[64];
  memcpy(bs, bs0, (size_t)nb * sizeof *bs);
  if (t[0]) return sr_raise(ad->I, "TypeError", "cond: the index has no tangent"), -1;
  if (ad->mode == SR_AD_LIN) return cond_lin(ad, e, bs, nb, x, t, y, ty);
  return cond_jvp_mode(ad, e, bs, nb, x, t, y, ty);
}

TR(tr_cond) {
  int nb;
  SrJaxpr *const *bs0 = branches_of(ad, e, &nb);
  if (!bs0) return -1;
  SrJaxpr *bs[64] = {0}, *src[64];
  memcpy(src, bs0, (size_t)nb * sizeof *src);
  if (!x[0]) return sr_raise(ad->I, "TypeError", "cond: the index cannot be linear"), -1;
  uint32_t n = e->nin - 1, no = e->nout;
  uint8_t *lin = sr_xcalloc(n + 1, 1), *ct_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i + 1] == NULL;
  for (uint32_t i = 0; i < no; i++) ct_nz[i] = ct[i] != NULL;
  int rc = -1, ok = 1;
  for (int b = 0; b < nb && ok; b++) ok = (bs[b] = ad_transpose_jaxpr(ad, src[b], lin, ct_nz)) != NULL;
  if (ok) {
    SrVal **in = sr_xcalloc(1 + n + no + 1, sizeof *in);
    uint32_t k = 0;
    in[k++] = x[0];
    for (uint32_t i = 0; i < n; i++)
      if (!lin[i]) in[k++] = x[i + 1];
    for (uint32_t i = 0; i < no; i++)
      if (ct[i]) in[k++] = ct[i];
    SrVal *r = bind_cond(ad, e, bs, nb, (int)k, in);
    free(in);
    if (r) {
      for (uint32_t i = 0, q = 0; i < n; i++)
        if (lin[i]) cx[i + 1] = r->seq.items[q++];
      rc = 0;
    }
  }
  for (int b = 0; b < nb; b++)
    if (bs[b]) sr_program_unref(bs[b]->prog);
  free(lin);
  free(ct_nz);
  return rc;
}

void sr_ad_rules_cond_init(void) {
  sr_ad_set_jvp(SR_P_cond, jvp_cond);
  sr_ad_set_transpose(SR_P_cond, tr_cond);
}
