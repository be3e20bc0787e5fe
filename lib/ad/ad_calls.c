/* ad_calls.c: rules of calls and control flow -- jit, remat,
 * custom_jvp_call / custom_vjp_call, optimization_barrier, while, cond,
 * scan and shard_map.
 *
 * A call is differentiated by transforming its body and binding a new call
 * (pjit.py: _pjit_jvp, _pjit_linearize, _pjit_transpose_fancy).  Under
 * linearization a jit becomes two: a forward jit that also returns the
 * residuals (those that are just its inputs are passed from outside, not
 * returned) and a tangent jit of the linear body, both with the original
 * name; transposing the tangent jit gives a third with the same name.
 */
#include "ad/ad_rules.h"

#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "util/intern.h"

int sr_ad_jvp_linear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)
#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

static SrJaxpr *body_of(SrAd *ad, const SrEqn *e, const char *key) {
  SrVal *v = param(e, key);
  if (!v || v->kind != SR_V_JAXPR) {
    sr_raise(ad->I, "TypeError", "%s equation has no '%s' jaxpr", e->prim->name, key);
    return NULL;
  }
  return v->jx.jaxpr;
}

/* A copy of j without the outputs whose keep flag is 0 (the equations
   stay: JAX prunes outputs, it does not DCE the forward). */
static SrJaxpr *prune_outputs(SrJaxpr *j, const uint8_t *keep) {
  SrJaxprBuilder b;
  sr_jb_init(&b, j->prog);
  for (uint32_t i = 0; i < j->nconst; i++) sr_jb_constvar(&b, j->invars[i], j->consts ? j->consts[i] : NULL);
  for (uint32_t i = 0; i < sr_nargs(j); i++) sr_jb_invar(&b, sr_args(j)[i]);
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    sr_jb_eqn(&b, e->prim, e->nin, e->in, e->nout, e->out, e->nparams, e->params);
  }
  for (uint32_t i = 0; i < j->nout; i++)
    if (keep[i]) sr_jb_outvar(&b, j->outvars[i]);
  SrJaxpr *r = sr_jb_finish(&b);
  r->name = j->name;
  return r;
}

/* ---- jit ---- */

/* The params of a new jit like e's, with body and per-operand params
   rebuilt: operand i of the new call takes e's entry isrc[i] (or the
   default when isrc[i] < 0), likewise for the results. */
static void call_params(SrPList *ps, const SrEqn *e, SrJaxpr *body, int nin, const int *isrc, int nout,
                        const int *osrc) {
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    SrVal *v = e->params[p].val;
    int per_in = strcmp(k, "in_shardings") == 0 || strcmp(k, "in_layouts") == 0 || strcmp(k, "donated_invars") == 0;
    int per_out = strcmp(k, "out_shardings") == 0 || strcmp(k, "out_layouts") == 0;
    if (strcmp(k, "jaxpr") == 0 || strcmp(k, "call_jaxpr") == 0) {
      sr_plist_add(ps, k, sr_jaxpr_val(NULL, body));
    } else if ((per_in || per_out) && v->kind == SR_V_TUPLE) {
      int n = per_in ? nin : nout;
      const int *src = per_in ? isrc : osrc;
      SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
      for (int i = 0; i < n; i++) {
        SrVal *item;
        if (src[i] >= 0 && src[i] < v->seq.n) item = sr_ref(v->seq.items[src[i]]);
        else if (k[0] == 'd') item = sr_bool(0);
        else if (strstr(k, "layouts")) item = sr_none();
        else item = sr_word(NULL, "UnspecifiedValue", 16);
        sr_seq_push(NULL, t, item);
      }
      sr_plist_add(ps, k, t);
    } else {
      sr_plist_add(ps, k, sr_ref(v));
    }
  }
}

static SrVal *bind_call(SrAd *ad, const SrEqn *e, SrJaxpr *body, int nin, SrVal **in, const int *isrc,
                        const int *osrc) {
  SrPList ps = {0};
  call_params(&ps, e, body, nin, isrc, (int)body->nout, osrc);
  SrVal *r = ad_bind(ad, e->prim->id, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

static int jit_lin(SrAd *ad, const SrEqn *e, SrJaxpr *body, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);

/* the memo's tags (ad_memo_get) */
enum { MEMO_JVP = 1, MEMO_LIN, MEMO_TRANSPOSE };

JVP(jvp_jit) {
  SrJaxpr *body = body_of(ad, e, "jaxpr");
  if (!body) return -1;
  if (ad->mode == SR_AD_LIN) return jit_lin(ad, e, body, x, t, y, ty);
  uint32_t n = e->nin, no = e->nout;
  uint8_t *in_nz = sr_xcalloc(n + 1, 1), *out_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) in_nz[i] = t[i] != NULL;
  const SrAdMemoVal *mv = ad_memo_get(ad, MEMO_JVP, body, in_nz, n);
  SrJaxpr *J;
  if (mv) {
    J = mv->j[0];
    sr_program_ref(J->prog);
    for (uint32_t i = 0; i < no; i++) out_nz[i] = (uint8_t)mv->data[i];
  } else if ((J = ad_jvp_jaxpr(ad, body, in_nz, NULL, out_nz))) {
    int *d = sr_xcalloc(no + 1, sizeof *d);
    for (uint32_t i = 0; i < no; i++) d[i] = out_nz[i];
    ad_memo_put(ad, MEMO_JVP, body, in_nz, n, J, NULL, d, (int)no);
    free(d);
  }
  int rc = -1;
  if (J) {
    SrVal **in = sr_xcalloc(2 * n + 1, sizeof *in);
    int *isrc = sr_xcalloc(2 * n + 1, sizeof *isrc), *osrc = sr_xcalloc(2 * no + 1, sizeof *osrc);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) in[k] = x[i], isrc[k++] = (int)i;
    for (uint32_t i = 0; i < n; i++)
      if (in_nz[i]) in[k] = t[i], isrc[k++] = (int)i;
    uint32_t m = 0;
    for (uint32_t i = 0; i < no; i++) osrc[m++] = (int)i;
    for (uint32_t i = 0; i < no; i++)
      if (out_nz[i]) osrc[m++] = (int)i;
    SrVal *r = bind_call(ad, e, J, (int)k, in, isrc, osrc);
    if (r) {
      for (uint32_t i = 0, q = no; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = out_nz[i] ? r->seq.items[q++] : NULL;
      }
      rc = 0;
    }
    sr_program_unref(J->prog);
    free(in);
    free(isrc);
    free(osrc);
  }
  free(in_nz);
  free(out_nz);
  return rc;
}

static int same_var(SrVar *a, SrVar *b) { return a == b && a->kind == SR_VAR; }

/* What _pjit_linearize makes of a body, given which inputs have tangents
   and which outputs have a specified sharding: the forward jit's body
   (F's outputs, pruned to those with keep set) and the tangent jit's. */
typedef struct JitLin {
  SrJaxpr *fwd, *lin; /* each holds a reference to its program */
  uint32_t nf;        /* F's outputs: the primal ones, then the residuals */
  int nres;
  int *in_fwd;        /* nres: per residual, the input+1 it is, or 0 */
  int *fwd_in, *dup;  /* nf: the input an output forwards, an earlier output it repeats (or -1) */
  uint8_t *keep;      /* nf: returned by the forward jit */
  uint8_t *out_nz;    /* no */
} JitLin;

static void jit_lin_free(JitLin *l) {
  if (l->fwd) sr_program_unref(l->fwd->prog);
  if (l->lin) sr_program_unref(l->lin->prog);
  free(l->in_fwd);
  free(l->fwd_in);
  free(l->dup);
  free(l->keep);
  free(l->out_nz);
}

/* The JitLin of e's body, from the memo or made (and memoized).  The
   memo's ints: nf, nres, in_fwd[nres], fwd_in[nf], dup[nf], keep[nf],
   out_nz[no]. */
static int jit_lin_jaxprs(SrAd *ad, const SrEqn *e, SrJaxpr *body, SrVal **t, JitLin *o) {
  uint32_t n = e->nin, no = e->nout;
  SrVal *osh = param(e, "out_shardings");
  memset(o, 0, sizeof *o);
  /* the key: the nonzero tangents, then which outputs have a sharding */
  uint8_t *key = sr_xcalloc(n + no + 1, 1);
  for (uint32_t i = 0; i < n; i++) key[i] = t[i] != NULL;
  for (uint32_t i = 0; i < no; i++)
    key[n + i] = osh && osh->kind == SR_V_TUPLE && (int)i < osh->seq.n && osh->seq.items[i]->kind != SR_V_WORD;
  const SrAdMemoVal *mv = ad_memo_get(ad, MEMO_LIN, body, key, n + no);
  if (mv) {
    const int *d = mv->data;
    o->fwd = mv->j[0];
    o->lin = mv->j[1];
    sr_program_ref(o->fwd->prog);
    sr_program_ref(o->lin->prog);
    o->nf = (uint32_t)*d++;
    o->nres = *d++;
    o->in_fwd = sr_xcalloc((size_t)o->nres + 1, sizeof *o->in_fwd);
    o->fwd_in = sr_xcalloc(o->nf + 1, sizeof *o->fwd_in);
    o->dup = sr_xcalloc(o->nf + 1, sizeof *o->dup);
    o->keep = sr_xcalloc(o->nf + 1, 1);
    o->out_nz = sr_xcalloc(no + 1, 1);
    for (int r = 0; r < o->nres; r++) o->in_fwd[r] = *d++;
    for (uint32_t i = 0; i < o->nf; i++) o->fwd_in[i] = *d++;
    for (uint32_t i = 0; i < o->nf; i++) o->dup[i] = *d++;
    for (uint32_t i = 0; i < o->nf; i++) o->keep[i] = (uint8_t)*d++;
    for (uint32_t i = 0; i < no; i++) o->out_nz[i] = (uint8_t)*d++;
    free(key);
    return 0;
  }
  SrLinJaxprs lj;
  if (ad_linearize_jaxpr(ad, body, key, NULL, NULL, &lj) < 0) {
    free(key);
    return -1;
  }
  SrJaxpr *F = lj.fwd;
  uint32_t nf = F->nout; /* no primal outputs, then the returned residuals */
  /* forwarding: outputs that are inputs of the forward body are not
     returned (primal ones only when their sharding is unspecified), and a
     residual equal to an earlier output is returned once */
  int *fwd_in = sr_xcalloc(nf + 1, sizeof *fwd_in), *dup = sr_xcalloc(nf + 1, sizeof *dup);
  uint8_t *keep = sr_xcalloc(nf + 1, 1);
  for (uint32_t i = 0; i < nf; i++) {
    SrVar *v = F->outvars[i];
    fwd_in[i] = dup[i] = -1;
    keep[i] = 1;
    for (uint32_t a = 0; a < sr_nargs(F) && v->kind == SR_VAR; a++)
      if (sr_args(F)[a] == v) fwd_in[i] = (int)a;
    if (fwd_in[i] >= 0 && i < no && key[n + i]) fwd_in[i] = -1;
    if (fwd_in[i] >= 0) {
      keep[i] = 0;
      continue;
    }
    if (i >= no)
      for (uint32_t k = 0; k < i && dup[i] < 0; k++)
        if (keep[k] && same_var(F->outvars[k], v)) dup[i] = (int)k;
    if (dup[i] >= 0) keep[i] = 0;
  }
  SrJaxpr *F2 = prune_outputs(F, keep);
  o->fwd = F2;
  sr_program_ref(F2->prog);
  o->lin = lj.lin;
  sr_program_ref(lj.lin->prog);
  o->nf = nf;
  o->nres = lj.nres;
  o->in_fwd = sr_xcalloc((size_t)lj.nres + 1, sizeof *o->in_fwd);
  memcpy(o->in_fwd, lj.in_fwd, (size_t)lj.nres * sizeof *o->in_fwd);
  o->fwd_in = fwd_in;
  o->dup = dup;
  o->keep = keep;
  o->out_nz = sr_xcalloc(no + 1, 1);
  memcpy(o->out_nz, lj.out_nz, no);
  ad_lin_jaxprs_free(&lj);
  int nd = 2 + o->nres + 3 * (int)nf + (int)no, *d = sr_xcalloc((size_t)nd + 1, sizeof *d), *p = d;
  *p++ = (int)nf;
  *p++ = o->nres;
  for (int r = 0; r < o->nres; r++) *p++ = o->in_fwd[r];
  for (uint32_t i = 0; i < nf; i++) *p++ = fwd_in[i];
  for (uint32_t i = 0; i < nf; i++) *p++ = dup[i];
  for (uint32_t i = 0; i < nf; i++) *p++ = keep[i];
  for (uint32_t i = 0; i < no; i++) *p++ = o->out_nz[i];
  ad_memo_put(ad, MEMO_LIN, body, key, n + no, o->fwd, o->lin, d, nd);
  free(d);
  free(key);
  return 0;
}

/* _pjit_linearize */
static int jit_lin(SrAd *ad, const SrEqn *e, SrJaxpr *body, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  uint32_t n = e->nin, no = e->nout;
  JitLin lj;
  if (jit_lin_jaxprs(ad, e, body, t, &lj) < 0) return -1;
  uint32_t nf = lj.nf;
  int *isrc = sr_xcalloc(n + 1, sizeof *isrc), *osrc = sr_xcalloc(nf + 1, sizeof *osrc);
  for (uint32_t i = 0; i < n; i++) isrc[i] = (int)i;
  for (uint32_t i = 0, k = 0; i < nf; i++)
    if (lj.keep[i]) osrc[k++] = i < no ? (int)i : -1;
  SrVal *r = bind_call(ad, e, lj.fwd, (int)n, x, isrc, osrc);
  SrVal **outs = sr_xcalloc(nf + 1, sizeof *outs);
  int rc = -1;
  if (r) {
    for (uint32_t i = 0, k = 0; i < nf; i++) {
      if (lj.keep[i]) outs[i] = r->seq.items[k++];
      else if (lj.fwd_in[i] >= 0) outs[i] = x[lj.fwd_in[i]];
    }
    for (uint32_t i = 0; i < nf; i++)
      if (!outs[i] && lj.dup[i] >= 0) outs[i] = outs[lj.dup[i]];
    for (uint32_t i = 0; i < no; i++) y[i] = outs[i];
    /* the tangent jit: residuals, then the nonzero tangents */
    int anynz = 0;
    for (uint32_t i = 0; i < no; i++) anynz |= lj.out_nz[i];
    rc = 0;
    if (anynz) {
      uint32_t nl = sr_nargs(lj.lin);
      SrVal **in = sr_xcalloc(nl + 1, sizeof *in);
      int *lsrc = sr_xcalloc(nl + 1, sizeof *lsrc), *losrc = sr_xcalloc(no + 1, sizeof *losrc);
      uint32_t k = 0, q = no;
      for (int res = 0; res < lj.nres; res++) {
        lsrc[k] = -1;
        in[k++] = lj.in_fwd[res] ? x[lj.in_fwd[res] - 1] : outs[q++];
      }
      for (uint32_t i = 0; i < n; i++)
        if (t[i]) lsrc[k] = (int)i, in[k++] = t[i];
      uint32_t m = 0;
      for (uint32_t i = 0; i < no; i++)
        if (lj.out_nz[i]) losrc[m++] = (int)i;
      SrVal *rt = k == nl ? bind_call(ad, e, lj.lin, (int)k, in, lsrc, losrc) : NULL;
      if (!rt) {
        if (!ad->I->exc) sr_raise(ad->I, "RuntimeError", "internal error: the linear jit takes %u inputs, not %u", nl, k);
        rc = -1;
      } else {
        for (uint32_t i = 0, mm = 0; i < no; i++) ty[i] = lj.out_nz[i] ? rt->seq.items[mm++] : NULL;
      }
      free(in);
      free(lsrc);
      free(losrc);
    }
  }
  free(outs);
  free(isrc);
  free(osrc);
  jit_lin_free(&lj);
  return rc;
}

/* The transpose of a call whose body is linear in some operands:
   _pjit_transpose_fancy (and remat's): a call of the transposed body on
   the other operands and the nonzero cotangents. */
static int call_transpose(SrAd *ad, const SrEqn *e, const char *key, SrVal **ct, SrVal **x, SrVal **cx) {
  SrJaxpr *body = body_of(ad, e, key);
  if (!body) return -1;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *lin = sr_xcalloc(n + 1, 1), *ct_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i] == NULL;
  for (uint32_t i = 0; i < no; i++) ct_nz[i] = ct[i] != NULL;
  uint8_t *mkey = sr_xcalloc(n + no + 1, 1);
  memcpy(mkey, lin, n);
  memcpy(mkey + n, ct_nz, no);
  const SrAdMemoVal *mv = ad_memo_get(ad, MEMO_TRANSPOSE, body, mkey, n + no);
  SrJaxpr *T;
  if (mv) sr_program_ref((T = mv->j[0])->prog);
  else if ((T = ad_transpose_jaxpr(ad, body, lin, ct_nz))) ad_memo_put(ad, MEMO_TRANSPOSE, body, mkey, n + no, T, NULL, NULL, 0);
  free(mkey);
  int rc = -1;
  if (T) {
    SrVal **in = sr_xcalloc(n + no + 1, sizeof *in);
    int *isrc = sr_xcalloc(n + no + 1, sizeof *isrc), *osrc = sr_xcalloc(n + 1, sizeof *osrc);
    uint32_t k = 0, m = 0;
    for (uint32_t i = 0; i < n; i++)
      if (!lin[i]) isrc[k] = (int)i, in[k++] = x[i];
    for (uint32_t i = 0; i < no; i++)
      if (ct_nz[i]) isrc[k] = -1, in[k++] = ct[i];
    /* the per-operand params of the transposed call: the operands' for
       the values, the results' for the cotangents */
    for (uint32_t i = 0; i < n; i++)
      if (lin[i]) osrc[m++] = (int)i;
    SrPList ps = {0};
    call_params(&ps, e, T, (int)k, isrc, (int)m, osrc);
    /* out_* params of the transposed call come from in_* of e: swap */
    for (int p = 0; p < ps.n; p++) {
      const char *pk = ps.p[p].key;
      SrVal *ev = NULL;
      if (strcmp(pk, "out_shardings") == 0) ev = param(e, "in_shardings");
      else if (strcmp(pk, "out_layouts") == 0) ev = param(e, "in_layouts");
      if (ev && ev->kind == SR_V_TUPLE) {
        SrVal *tt = sr_seq(NULL, SR_V_TUPLE, (int)m);
        for (uint32_t i = 0; i < m; i++)
          sr_seq_push(NULL, tt, osrc[i] < ev->seq.n ? sr_ref(ev->seq.items[osrc[i]]) : sr_none());
        sr_unref(ps.p[p].val);
        ps.p[p].val = tt;
      }
      if (strcmp(pk, "in_shardings") == 0 || strcmp(pk, "in_layouts") == 0) {
        SrVal *src = param(e, pk[3] == 's' ? "out_shardings" : "out_layouts");
        SrVal *tt = sr_seq(NULL, SR_V_TUPLE, (int)k);
        SrVal *old = ps.p[p].val;
        for (uint32_t i = 0, c = 0; i < k; i++) {
          SrVal *item;
          if (isrc[i] >= 0) {
            item = sr_ref(old->seq.items[i]);
          } else {
            while (c < no && !ct_nz[c]) c++;
            item = src && src->kind == SR_V_TUPLE && (int)c < src->seq.n ? sr_ref(src->seq.items[c])
                   : strstr(pk, "layouts")                            ? sr_none()
                                                                       : sr_word(NULL, "UnspecifiedValue", 16);
            c++;
          }
          sr_seq_push(NULL, tt, item);
        }
        sr_unref(old);
        ps.p[p].val = tt;
      }
    }
    SrVal *r = ad_bind(ad, e->prim->id, (int)k, in, ps.n, ps.p);
    sr_plist_free(&ps);
    if (r) {
      for (uint32_t i = 0, q = 0; i < n; i++)
        if (lin[i]) cx[i] = r->seq.items[q++];
      rc = 0;
    }
    sr_program_unref(T->prog);
    free(in);
    free(isrc);
    free(osrc);
  }
  free(lin);
  free(ct_nz);
  return rc;
}

TR(tr_jit) { return call_transpose(ad, e, "jaxpr", ct, x, cx); }

/* ---- remat (checkpoint) ----
 *
 * The primal runs as it is; the tangent is a remat of the JVP body that
 * takes the primal inputs as its residuals, so the primal is recomputed
 * where the tangent (and, transposed, the cotangent) needs it
 * (ad_checkpoint.py: remat_jvp, remat_partial_eval, remat_transpose). */

static SrVal *bind_remat(SrAd *ad, const SrEqn *e, SrJaxpr *body, int nin, SrVal **in, int differentiated) {
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "jaxpr") == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, body));
    else if (strcmp(k, "differentiated") == 0) sr_plist_add(&ps, k, sr_bool(differentiated));
    else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
  }
  SrVal *r = ad_bind(ad, e->prim->id, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

JVP(jvp_remat) {
  SrJaxpr *body = body_of(ad, e, "jaxpr");
  if (!body) return -1;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *in_nz = sr_xcalloc(n + 1, 1), *out_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) in_nz[i] = t[i] != NULL;
  SrJaxpr *J = ad_jvp_jaxpr(ad, body, in_nz, NULL, out_nz);
  int rc = -1;
  if (!J) goto out;
  SrVal **in = sr_xcalloc(2 * n + 1, sizeof *in);
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) in[k++] = x[i];
  for (uint32_t i = 0; i < n; i++)
    if (t[i]) in[k++] = t[i];
  if (ad->mode == SR_AD_LIN) {
    /* the primal: the remat as it is (known) */
    SrVal *r = ad_bind_eqn(ad, e, x);
    /* the tangent: the JVP body without its primal outputs */
    uint8_t *keep = sr_xcalloc(J->nout + 1, 1);
    for (uint32_t i = no; i < J->nout; i++) keep[i] = 1;
    SrJaxpr *Jt = sr_ad_dce(J, keep, NULL, 0);
    free(keep);
    SrVal *rt = Jt->nout ? bind_remat(ad, e, Jt, (int)k, in, 1) : NULL;
    if (r && (rt || !Jt->nout)) {
      for (uint32_t i = 0, q = 0; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = out_nz[i] ? rt->seq.items[q++] : NULL;
      }
      rc = 0;
    }
  } else {
    SrVal *r = bind_remat(ad, e, J, (int)k, in, 1);
    if (r) {
      for (uint32_t i = 0, q = no; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = out_nz[i] ? r->seq.items[q++] : NULL;
      }
      rc = 0;
    }
  }
  free(in);
  sr_program_unref(J->prog);
out:
  free(in_nz);
  free(out_nz);
  return rc;
}

TR(tr_remat) {
  SrJaxpr *body = body_of(ad, e, "jaxpr");
  if (!body) return -1;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *lin = sr_xcalloc(n + 1, 1), *ct_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i] == NULL;
  for (uint32_t i = 0; i < no; i++) ct_nz[i] = ct[i] != NULL;
  SrJaxpr *T = ad_transpose_jaxpr(ad, body, lin, ct_nz);
  int rc = -1;
  if (T) {
    SrVal **in = sr_xcalloc(n + no + 1, sizeof *in);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
      if (!lin[i]) in[k++] = x[i];
    for (uint32_t i = 0; i < no; i++)
      if (ct_nz[i]) in[k++] = ct[i];
    SrVal *r = bind_remat(ad, e, T, (int)k, in, 1);
    if (r) {
      for (uint32_t i = 0, q = 0; i < n; i++)
        if (lin[i]) cx[i] = r->seq.items[q++];
      rc = 0;
    }
    free(in);
    sr_program_unref(T->prog);
  }
  free(lin);
  free(ct_nz);
  return rc;
}

/* ---- custom_jvp_call, custom_vjp_call ----
 *
 * In a jaxpr text the custom rule is a Python function that did not
 * survive printing, so these differentiate the primal function, inline:
 * the structure JAX gives a custom_jvp under linearize (its rule is traced
 * inline too), with the primal's derivative in place of the rule's. */

JVP(jvp_custom_call) {
  SrJaxpr *body = NULL;
  SrVal *v = param(e, "call_jaxpr");
  if (!v) v = param(e, "fun_jaxpr");
  if (v && v->kind == SR_V_JAXPR) body = v->jx.jaxpr;
  if (!body) return sr_raise(ad->I, "TypeError", "%s equation has no call_jaxpr", e->prim->name), -1;
  if (sr_nargs(body) != e->nin || body->nout != e->nout)
    return sr_raise(ad->I, "TypeError", "%s: its call_jaxpr does not match its operands", e->prim->name), -1;
  SrVal **out = sr_xcalloc(2 * e->nout + 1, sizeof *out);
  int rc = ad_eval(ad, body, x, t, out, out + e->nout);
  if (rc == 0)
    for (uint32_t i = 0; i < e->nout; i++) {
      y[i] = ad_keep(ad, out[i]);
      ty[i] = ad_keep(ad, out[e->nout + i]);
    }
  free(out);
  return rc;
}

/* ---- optimization_barrier ---- */

JVP(jvp_barrier) {
  SrVal *r = ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  SrVal *small[32], **nz = e->nin <= 32 ? small : sr_xcalloc(e->nin, sizeof *nz);
  int k = 0;
  for (uint32_t i = 0; i < e->nin; i++)
    if (t[i]) nz[k++] = t[i];
  SrVal *rt = ad_bind(ad, SR_P_optimization_barrier, k, nz, 0, NULL);
  if (nz != small) free(nz);
  if (!rt) return -1;
  for (uint32_t i = 0, q = 0; i < e->nout; i++) {
    y[i] = r->seq.items[i];
    ty[i] = t[i] ? rt->seq.items[q++] : NULL;
  }
  return 0;
}

TR(tr_barrier) {
  (void)x;
  SrVal *small[32], **nz = e->nout <= 32 ? small : sr_xcalloc(e->nout, sizeof *nz);
  int k = 0;
  for (uint32_t i = 0; i < e->nout; i++)
    if (ct[i]) nz[k++] = ct[i];
  SrVal *r = ad_bind(ad, SR_P_optimization_barrier, k, nz, 0, NULL);
  if (nz != small) free(nz);
  if (!r) return -1;
  for (uint32_t i = 0, q = 0; i < e->nin; i++) cx[i] = ct[i] ? r->seq.items[q++] : NULL;
  return 0;
}

/* ---- while: forward mode ---- */

/* A copy of a jaxpr traced with extra unused arguments after its own. */
static SrJaxpr *with_extra_args(SrAd *ad, const SrJaxpr *j, int nextra, const SrType *const *extra) {
  uint32_t n = sr_nargs(j);
  const SrType **types = sr_xcalloc(n + (uint32_t)nextra + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) types[i] = sr_args(j)[i]->type;
  for (int i = 0; i < nextra; i++) types[n + (uint32_t)i] = extra[i];
  SrVal **args = sr_xcalloc(n + (uint32_t)nextra + 1, sizeof *args);
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  SrTrace *tr = ad_trace_begin(ad, (int)n + nextra, types, args);
  I->trace = tr;
  SrVal *r = sr_eval_jaxpr(I, j, (int)n, args);
  SrJaxpr *out = NULL;
  if (r) out = ad_trace_end(ad, tr, r->seq.n, r->seq.items, NULL);
  else sr_trace_abort(I, tr);
  sr_unref(r);
  for (uint32_t i = 0; i < n + (uint32_t)nextra; i++) sr_unref(args[i]);
  free(args);
  free(types);
  I->trace = saved;
  return out;
}

/* The JVP of a while's body with binders in the order the loop wants:
   consts, const tangents, carries, carry tangents -> carries, carry
   tangents (ad.rearrange_binders). */
static SrJaxpr *while_body_jvp(SrAd *ad, const SrJaxpr *body, uint32_t nb, const uint8_t *bc_nz,
                               uint32_t nc, const uint8_t *carry_nz, uint8_t *out_nz) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  const SrType **types = sr_xcalloc(2 * (nb + nc) + 1, sizeof *types);
  uint32_t k = 0;
  for (uint32_t i = 0; i < nb; i++) types[k++] = sr_args(body)[i]->type;
  for (uint32_t i = 0; i < nb; i++)
    if (bc_nz[i]) types[k++] = sr_ad_tangent_type(sr_args(body)[i]->type);
  uint32_t carry0 = k;
  for (uint32_t i = 0; i < nc; i++) types[k++] = sr_args(body)[nb + i]->type;
  for (uint32_t i = 0; i < nc; i++)
    if (carry_nz[i]) types[k++] = sr_ad_tangent_type(sr_args(body)[nb + i]->type);
  SrVal **args = sr_xcalloc(k + 1, sizeof *args);
  SrTrace *tr = ad_trace_begin(ad, (int)k, types, args);
  free(types);
  SrVal **p = sr_xcalloc(nb + nc + 1, sizeof *p), **tn = sr_xcalloc(nb + nc + 1, sizeof *tn);
  uint32_t q = nb;
  for (uint32_t i = 0; i < nb; i++) {
    p[i] = args[i];
    tn[i] = bc_nz[i] ? args[q++] : NULL;
  }
  q = carry0 + nc;
  for (uint32_t i = 0; i < nc; i++) {
    p[nb + i] = args[carry0 + i];
    tn[nb + i] = carry_nz[i] ? args[q++] : NULL;
  }
  SrVal **out = sr_xcalloc(2 * nc + 1, sizeof *out);
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_JVP);
  I->trace = tr;
  int rc = ad_eval(&sub, body, p, tn, out, out + nc);
  SrJaxpr *r = NULL;
  if (rc == 0) {
    uint32_t m = nc;
    SrVal **outs = sr_xcalloc(2 * nc + 1, sizeof *outs);
    for (uint32_t i = 0; i < nc; i++) outs[i] = out[i];
    for (uint32_t i = 0; i < nc; i++) {
      SrVal *tv = out[nc + i];
      out_nz[i] = tv != NULL;
      if (carry_nz[i] && !tv) {
        int mark = ad_mark(&sub);
        tv = out[nc + i] = sr_ref(ad_zeros(&sub, sr_ad_tangent_type(body->outvars[i]->type)));
        ad_release(&sub, mark);
      }
      if (carry_nz[i]) outs[m++] = tv;
    }
    r = ad_trace_end(&sub, tr, (int)m, outs, NULL);
    free(outs);
  } else {
    sr_trace_abort(I, tr);
  }
  sr_ad_end(&sub);
  for (uint32_t i = 0; i < 2 * nc; i++) sr_unref(out[i]);
  for (uint32_t i = 0; i < k; i++) sr_unref(args[i]);
  free(out);
  free(args);
  free(p);
  free(tn);
  I->trace = saved;
  return r;
}

/* _while_loop_jvp.  Under linearization the same loop goes into the
   tangent trace (its primal inputs are residuals), as JAX's partial eval
   stages the whole loop as unknown; its transpose is JAX's error. */
JVP(jvp_while) {
  int64_t cn = 0, bn = 0;
  SrVal *v = param(e, "cond_nconsts");
  if (v && v->kind == SR_V_INT) cn = v->i;
  v = param(e, "body_nconsts");
  if (v && v->kind == SR_V_INT) bn = v->i;
  SrJaxpr *cond = body_of(ad, e, "cond_jaxpr"), *body = body_of(ad, e, "body_jaxpr");
  if (!cond || !body) return -1;
  uint32_t nb = (uint32_t)bn, nc = e->nin - (uint32_t)cn - nb;
  const uint8_t dummy = 0;
  (void)dummy;
  uint8_t *bc_nz = sr_xcalloc(nb + 1, 1), *carry_nz = sr_xcalloc(nc + 1, 1), *onz = sr_xcalloc(nc + 1, 1);
  for (uint32_t i = 0; i < nb; i++) bc_nz[i] = t[cn + i] != NULL;
  for (uint32_t i = 0; i < nc; i++) carry_nz[i] = t[cn + nb + i] != NULL;
  SrJaxpr *J = NULL;
  for (uint32_t it = 0; it <= nc + 1; it++) {
    if (J) sr_program_unref(J->prog);
    J = while_body_jvp(ad, body, nb, bc_nz, nc, carry_nz, onz);
    if (!J) break;
    int same = 1;
    for (uint32_t i = 0; i < nc; i++)
      if (onz[i] && !carry_nz[i]) carry_nz[i] = 1, same = 0;
    if (same) break;
  }
  int rc = -1;
  if (J) {
    const SrType **ext = sr_xcalloc(nc + 1, sizeof *ext);
    int next = 0;
    for (uint32_t i = 0; i < nc; i++)
      if (carry_nz[i]) ext[next++] = sr_ad_tangent_type(sr_args(body)[nb + i]->type);
    SrJaxpr *C = with_extra_args(ad, cond, next, ext);
    free(ext);
    if (C) {
      SrVal **in = sr_xcalloc(2 * e->nin + 1, sizeof *in);
      uint32_t k = 0, nbd = 0;
      for (uint32_t i = 0; i < (uint32_t)cn + nb; i++) in[k++] = x[i];
      for (uint32_t i = 0; i < nb; i++)
        if (bc_nz[i]) in[k++] = t[cn + i], nbd++;
      for (uint32_t i = 0; i < nc; i++) in[k++] = x[cn + nb + i];
      for (uint32_t i = 0; i < nc; i++)
        if (carry_nz[i]) in[k++] = t[cn + nb + i] ? t[cn + nb + i] : ad_zeros(ad, sr_ad_tangent_type(ad_type(ad, x[cn + nb + i])));
      SrPList ps = {0};
      for (uint32_t p = 0; p < e->nparams; p++) {
        const char *key = e->params[p].key;
        if (strcmp(key, "cond_jaxpr") == 0) sr_plist_add(&ps, key, sr_jaxpr_val(NULL, C));
        else if (strcmp(key, "body_jaxpr") == 0) sr_plist_add(&ps, key, sr_jaxpr_val(NULL, J));
        else if (strcmp(key, "body_nconsts") == 0) sr_plist_add(&ps, key, sr_int(NULL, bn + nbd));
        else sr_plist_add(&ps, key, sr_ref(e->params[p].val));
      }
      SrVal *r = ad_bind(ad, SR_P_while, (int)k, in, ps.n, ps.p);
      sr_plist_free(&ps);
      if (r) {
        if (ad->mode == SR_AD_LIN) {
          /* the primal outputs are known: the loop itself, in the primal trace */
          SrVal *rp = ad_bind_eqn(ad, e, x);
          for (uint32_t i = 0; rp && i < nc; i++) y[i] = rp->seq.items[i];
          if (!rp) r = NULL;
        } else {
          for (uint32_t i = 0; i < nc; i++) y[i] = r->seq.items[i];
        }
      }
      if (r) {
        for (uint32_t i = 0, q = nc; i < nc; i++) ty[i] = carry_nz[i] ? r->seq.items[q++] : NULL;
        rc = 0;
      }
      free(in);
      sr_program_unref(C->prog);
    }
    sr_program_unref(J->prog);
  }
  free(bc_nz);
  free(carry_nz);
  free(onz);
  return rc;
}

TR(tr_while) {
  (void)e, (void)ct, (void)x, (void)cx;
  sr_raise(ad->I, "ValueError",
           "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic start/stop "
           "values. Try using lax.scan, or using fori_loop with static start/stop.");
  return -1;
}

void sr_ad_rules_scan_init(void);
void sr_ad_rules_cond_init(void);
void sr_ad_rules_shard_map_init(void);

void sr_ad_rules_control_init(void) {
  sr_ad_set_jvp(SR_P_jit, jvp_jit);
  sr_ad_set_transpose(SR_P_jit, tr_jit);
  sr_ad_set_jvp(SR_P_pjit, jvp_jit);
  sr_ad_set_transpose(SR_P_pjit, tr_jit);
  sr_ad_set_jvp(SR_P_checkpoint, jvp_remat);
  sr_ad_set_transpose(SR_P_checkpoint, tr_remat);
  sr_ad_set_jvp(SR_P_remat, jvp_remat);
  sr_ad_set_transpose(SR_P_remat, tr_remat);
  sr_ad_set_jvp(SR_P_remat2, jvp_remat);
  sr_ad_set_transpose(SR_P_remat2, tr_remat);
  sr_ad_set_jvp(SR_P_custom_jvp_call, jvp_custom_call);
  sr_ad_set_jvp(SR_P_custom_vjp_call, jvp_custom_call);
  sr_ad_set_jvp(SR_P_custom_vjp_call_jaxpr, jvp_custom_call);
  sr_ad_set_jvp(SR_P_optimization_barrier, jvp_barrier);
  sr_ad_set_transpose(SR_P_optimization_barrier, tr_barrier);
  sr_ad_set_jvp(SR_P_while, jvp_while);
  sr_ad_set_transpose(SR_P_while, tr_while);
  sr_ad_rules_scan_init();
  sr_ad_rules_cond_init();
  sr_ad_rules_shard_map_init();
}
