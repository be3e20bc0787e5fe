/* remat_pe.c: remat's partial evaluation under linearization, with a
 * checkpoint policy (ad_checkpoint.py: remat_partial_eval, on
 * partial_eval.py's partial_eval_jaxpr_custom).
 *
 * The JVP body J of a remat (its primal inputs known, its tangents
 * unknown) is split equation by equation.  An equation reading an
 * unknown value is staged.  A known one is evaluated now, and the policy
 * (saveable(prim, *avals, **params)) says whether its outputs may be
 * saved: if so, a staged equation reading them gets them as residuals;
 * if not, the equation is staged too, recomputed where it is needed.
 * The staged jaxpr, DCE'd to the unknown outputs (the tangents), becomes
 * the body of a remat2[differentiated=True] bound into the tangent trace
 * on the residuals used, then the primal inputs and tangents used; the
 * known jaxpr, DCE'd to the primal outputs and those residuals, is bound
 * equation by equation into the primal trace (core.eval_jaxpr of
 * jaxpr_known), with x = reduce_precision(x, **finfo(x.dtype)) after
 * the producer of each floating residual that a known equation also
 * reads (_insert_reduce_precision).
 *
 * Equations with bodies of their own (a jit, a nested remat, scan...)
 * that read known and unknown values at once have partial_eval_jaxpr_
 * custom rules in JAX that are not here: for such a body the caller
 * keeps its former way (the primal as a remat of its own, the tangent a
 * remat of the JVP body without the primal outputs). */
#include <stdlib.h>
#include <string.h>

#include "lax/lax.h"

#include "ad/ad_rules.h"
#include "ir/name_stack.h"
#include "util/intern.h"

int (*sr_lax_remat_saveable)(SrInterp *I, SrVal *policy, const SrEqn *e);

/* ROLE_KNOWN_BOTH: a debug callback or print run in the known jaxpr and
   staged as well (debugging.py's _debug_partial_eval_custom) */
enum { ROLE_KNOWN_SAVED = 1, ROLE_KNOWN_RECOMPUTED, ROLE_STAGED, ROLE_KNOWN_BOTH };

static int saveable(SrAd *ad, SrVal *policy, const SrEqn *e) {
  if (!policy || policy->kind == SR_V_NONE || !sr_lax_remat_saveable) return 0;
  int r = sr_lax_remat_saveable(ad->I, policy, e);
  return r == -2 ? 0 : r; /* -2: not a policy object (a parsed text's word) */
}

static int has_body(const SrEqn *e) { return (e->prim->flags & SR_PF_CALL) != 0; }

/* finfo(dtype).nexp, .nmant for the floating dtypes reduce_precision takes */
static int float_bits(SrDtype d, int64_t *eb, int64_t *mb) {
  switch (d) {
  case SR_F16: *eb = 5, *mb = 10; return 1;
  case SR_BF16: *eb = 8, *mb = 7; return 1;
  case SR_F32: *eb = 8, *mb = 23; return 1;
  case SR_F64: *eb = 11, *mb = 52; return 1;
  default: return 0;
  }
}

static int64_t int_param(const SrEqn *e, const char *key) {
  SrVal *v = sr_eqn_param(e, sr_intern_cstr(key));
  return v && v->kind == SR_V_INT ? v->i : -1;
}

/* Binds e's primitive and params on in into the current trace, its
   results written as e's; a tuple of e->nout results (pooled). */
static SrVal *bind_like(SrAd *ad, const SrEqn *e, SrVal **in) {
  const SrType *wsmall[16] = {0}, **written = e->nout <= 16 ? wsmall : sr_xmalloc(e->nout * sizeof *written);
  for (uint32_t i = 0; i < e->nout; i++) written[i] = e->out[i]->type;
  SrVal *r = sr_bind_prim(ad->I, e->prim, (int)e->nin, in, (int)e->nparams, e->params, written, e->nout);
  if (written != wsmall) free(written);
  return sr_ad_keep(ad, r);
}

/* Binds the equations with keep[k] set of J into the current trace, the
   values of J's vars in val (counted; inputs filled by the caller); after
   the producer of a var with rp set, its value goes through
   reduce_precision.  Returns 0 or -1. */
static int emit(SrAd *ad, const SrJaxpr *J, const uint8_t *keep, const uint8_t *rp, SrVal **val) {
  SrInterp *I = ad->I;
  /* the trace's program keeps J's, where the params' values stay */
  if (I->trace && I->trace->prog != J->prog) sr_program_dep(I->trace->prog, J->prog);
  const char *ns0 = I->ns, *loc0 = I->loc;
  int rc = 0;
  for (uint32_t k = 0; k < J->neqn && rc == 0; k++) {
    if (!keep[k]) continue;
    const SrEqn *e = &J->eqns[k];
    I->ns = sr_ns_concat(ns0, e->ns);
    I->loc = e->loc ? e->loc : loc0;
    int mark = sr_ad_mark(ad);
    SrVal **in = sr_xcalloc(e->nin + 1, sizeof *in);
    for (uint32_t i = 0; i < e->nin; i++) in[i] = e->in[i]->kind == SR_LIT ? sr_ad_literal(ad, e->in[i]) : val[e->in[i]->id];
    SrVal *r = NULL;
    for (uint32_t i = 0; i < e->nin; i++)
      if (!in[i]) goto out;
    r = bind_like(ad, e, in);
    if (!r) goto out;
    for (uint32_t i = 0; i < e->nout; i++) {
      SrVar *o = e->out[i];
      if (o->kind == SR_DROP) continue;
      SrVal *v = r->seq.items[i];
      int64_t eb, mb;
      if (rp && rp[o->id] && float_bits(o->type->dtype, &eb, &mb)) {
        SrPList ps = {0};
        sr_plist_add(&ps, "exponent_bits", sr_int(NULL, eb));
        sr_plist_add(&ps, "mantissa_bits", sr_int(NULL, mb));
        v = sr_ad_keep(ad, sr_bind_prim(I, &sr_prims[SR_P_reduce_precision], 1, &v, ps.n, ps.p, NULL, 1));
        sr_plist_free(&ps);
        if (v && v->kind == SR_V_TUPLE) v = v->seq.items[0];
        if (!v) {
          r = NULL;
          goto out;
        }
      }
      sr_unref(val[o->id]);
      val[o->id] = sr_ref(v);
    }
  out:
    free(in);
    sr_ad_release(ad, mark);
    if (!r) rc = -1;
  }
  I->ns = ns0;
  I->loc = loc0;
  return rc;
}

static SrVal *out_value(SrAd *ad, SrVar *v, SrVal **val) {
  return v->kind == SR_LIT ? sr_ad_literal(ad, v) : val[v->id];
}

int sr_lax_remat_lin(SrAd *ad, const SrEqn *e, const SrJaxpr *J, SrVal **x, SrVal **t, SrVal **y, SrVal **tpk) {
  SrInterp *I = ad->I;
  if (ad->staged || J->nconst) return 1;
  SrVal *policy = sr_eqn_param(e, sr_intern_cstr("policy"));
  uint32_t n = e->nin, no = e->nout, na = sr_nargs(J), nv = J->nvars + 1;
  uint8_t *unk = sr_xcalloc(nv, 1), *inst = sr_xcalloc(nv, 1), *isres = sr_xcalloc(nv, 1);
  uint8_t *role = sr_xcalloc(J->neqn + 1, 1);
  int32_t *def = sr_xcalloc(nv, sizeof *def);
  uint32_t *res = sr_xcalloc(nv, sizeof *res), nres = 0;
  uint8_t *live = NULL, *keepk = NULL, *keeps = NULL, *rp = NULL;
  SrVal **val = NULL, **sval = NULL, **sargs = NULL, **rin = NULL;
  const SrType **stypes = NULL, **vtype = sr_xcalloc(nv, sizeof *vtype);
  uint32_t nin_s = 0;
  int rc = 1;
  for (uint32_t i = 0; i < nv; i++) def[i] = -1;
  /* the inputs: the primals known, the tangents unknown; all instantiated */
  for (uint32_t i = 0; i < na; i++) {
    SrVar *v = sr_args(J)[i];
    unk[v->id] = i >= n;
    inst[v->id] = 1;
    vtype[v->id] = v->type;
  }
#define ADD_RES(v)                                                                                                     \
  do {                                                                                                                 \
    if ((v)->kind == SR_VAR && !inst[(v)->id] && !isres[(v)->id]) isres[(v)->id] = 1, res[nres++] = (v)->id;          \
  } while (0)
  for (uint32_t k = 0; k < J->neqn; k++) {
    const SrEqn *q = &J->eqns[k];
    int anyunk = 0, allunk = 1;
    for (uint32_t i = 0; i < q->nin; i++) {
      int u = q->in[i]->kind == SR_VAR && unk[q->in[i]->id];
      anyunk |= u;
      allunk &= u;
    }
    for (uint32_t i = 0; i < q->nout; i++)
      if (q->out[i]->kind != SR_DROP) def[q->out[i]->id] = (int32_t)k, vtype[q->out[i]->id] = q->out[i]->type;
    if (anyunk) {
      /* partial_eval_jaxpr_custom_rules (pjit, remat, scan...) would split it */
      if (has_body(q) && !allunk) goto done;
      role[k] = ROLE_STAGED;
      for (uint32_t i = 0; i < q->nin; i++) ADD_RES(q->in[i]);
      for (uint32_t i = 0; i < q->nout; i++) unk[q->out[i]->id] = inst[q->out[i]->id] = 1;
      continue;
    }
    if (q->prim->id == SR_P_debug_print || q->prim->id == SR_P_debug_callback) {
      /* _debug_partial_eval_custom: staged too, to call back again in the
         recomputation, unless the policy saves it and an input is not
         instantiated */
      int sv = saveable(ad, policy, q), allinst = 1;
      if (sv < 0) {
        rc = -1;
        goto done;
      }
      for (uint32_t i = 0; i < q->nin; i++) allinst &= q->in[i]->kind != SR_VAR || inst[q->in[i]->id];
      if (sv && !allinst) {
        role[k] = ROLE_KNOWN_SAVED;
      } else {
        role[k] = ROLE_KNOWN_BOTH;
        for (uint32_t i = 0; i < q->nin; i++) ADD_RES(q->in[i]);
      }
      continue;
    }
    int s = sr_prim_has_effect(q->prim, q->params, q->nparams) ? 1 : saveable(ad, policy, q);
    if (s < 0) {
      rc = -1;
      goto done;
    }
    if (s) {
      role[k] = ROLE_KNOWN_SAVED;
    } else {
      role[k] = ROLE_KNOWN_RECOMPUTED;
      for (uint32_t i = 0; i < q->nin; i++) ADD_RES(q->in[i]);
      for (uint32_t i = 0; i < q->nout; i++) inst[q->out[i]->id] = 1;
    }
  }
#undef ADD_RES
  /* the primal outputs must be known, the tangents unknown */
  for (uint32_t i = 0; i < J->nout; i++) {
    SrVar *v = J->outvars[i];
    int u = v->kind == SR_VAR && unk[v->id];
    if (u != (i >= no)) goto done;
  }
  /* the staged jaxpr DCE'd to the unknown outputs */
  live = sr_xcalloc(nv, 1);
  keeps = sr_xcalloc(J->neqn + 1, 1);
  for (uint32_t i = no; i < J->nout; i++)
    if (J->outvars[i]->kind == SR_VAR) live[J->outvars[i]->id] = 1;
  for (uint32_t k = J->neqn; k-- > 0;) {
    const SrEqn *q = &J->eqns[k];
    if (role[k] != ROLE_STAGED && role[k] != ROLE_KNOWN_RECOMPUTED && role[k] != ROLE_KNOWN_BOTH) continue;
    int need = sr_prim_has_effect(q->prim, q->params, q->nparams);
    for (uint32_t i = 0; i < q->nout && !need; i++) need = q->out[i]->kind == SR_VAR && live[q->out[i]->id];
    if (!need) continue;
    keeps[k] = 1;
    for (uint32_t i = 0; i < q->nin; i++)
      if (q->in[i]->kind == SR_VAR) live[q->in[i]->id] = 1;
  }
  uint32_t nused = 0;
  for (uint32_t r = 0; r < nres; r++)
    if (live[res[r]]) res[nused++] = res[r];
  nres = nused;
  /* the known jaxpr DCE'd to the primal outputs and the residuals used */
  uint8_t *livek = sr_xcalloc(nv, 1);
  keepk = sr_xcalloc(J->neqn + 1, 1);
  for (uint32_t i = 0; i < no; i++)
    if (J->outvars[i]->kind == SR_VAR) livek[J->outvars[i]->id] = 1;
  for (uint32_t r = 0; r < nres; r++) livek[res[r]] = 1;
  for (uint32_t k = J->neqn; k-- > 0;) {
    const SrEqn *q = &J->eqns[k];
    if (role[k] != ROLE_KNOWN_SAVED && role[k] != ROLE_KNOWN_RECOMPUTED && role[k] != ROLE_KNOWN_BOTH) continue;
    int need = sr_prim_has_effect(q->prim, q->params, q->nparams);
    for (uint32_t i = 0; i < q->nout && !need; i++) need = q->out[i]->kind == SR_VAR && livek[q->out[i]->id];
    if (!need) continue;
    keepk[k] = 1;
    for (uint32_t i = 0; i < q->nin; i++)
      if (q->in[i]->kind == SR_VAR) livek[q->in[i]->id] = 1;
  }
  free(livek);
  /* _insert_reduce_precision: floating residuals a known equation reads */
  rp = sr_xcalloc(nv, 1);
  for (uint32_t r = 0; r < nres; r++) {
    uint32_t v = res[r];
    int used = 0;
    for (uint32_t k = 0; k < J->neqn && !used; k++) {
      if (!keepk[k]) continue;
      for (uint32_t i = 0; i < J->eqns[k].nin && !used; i++)
        used = J->eqns[k].in[i]->kind == SR_VAR && J->eqns[k].in[i]->id == v;
    }
    if (!used || def[v] < 0) continue;
    const SrEqn *p = &J->eqns[def[v]];
    SrVar *pv = NULL;
    for (uint32_t i = 0; i < p->nout; i++)
      if (p->out[i]->kind == SR_VAR && p->out[i]->id == v) pv = p->out[i];
    int64_t eb, mb;
    if (!pv || !float_bits(pv->type->dtype, &eb, &mb)) continue;
    if (p->prim->id == SR_P_reduce_precision && int_param(p, "exponent_bits") == eb &&
        int_param(p, "mantissa_bits") == mb)
      continue;
    rp[v] = 1;
  }
  /* the known part, into the primal trace */
  rc = -1;
  SrTrace *saved = I->trace;
  val = sr_xcalloc(nv, sizeof *val);
  for (uint32_t i = 0; i < n; i++) val[sr_args(J)[i]->id] = sr_ref(x[i]);
  I->trace = ad->primal;
  int erc = emit(ad, J, keepk, rp, val);
  I->trace = saved;
  if (erc < 0) goto done;
  for (uint32_t i = 0; i < no; i++) {
    y[i] = J->outvars[i]->kind == SR_LIT ? sr_ad_literal(ad, J->outvars[i]) : sr_ad_keep(ad, sr_ref(val[J->outvars[i]->id]));
    if (!y[i]) goto done;
  }
  /* the staged part: its body traced on the residuals used, then the
     inputs used */
  stypes = sr_xcalloc(nres + na + 1, sizeof *stypes);
  rin = sr_xcalloc(nres + na + 1, sizeof *rin);
  for (uint32_t r = 0; r < nres; r++) {
    stypes[nin_s] = vtype[res[r]];
    rin[nin_s++] = val[res[r]];
  }
  for (uint32_t i = 0, q = 0; i < na; i++) {
    SrVar *v = sr_args(J)[i];
    SrVal *xv = i < n ? x[i] : NULL;
    if (i >= n) {
      while (q < n && !t[q]) q++;
      xv = t[q++];
    }
    if (!live[v->id]) continue;
    stypes[nin_s] = v->type;
    rin[nin_s++] = xv;
  }
  uint32_t nt = J->nout - no;
  sargs = sr_xcalloc(nin_s + 1, sizeof *sargs);
  SrTrace *st = sr_ad_trace_begin(ad, (int)nin_s, stypes, sargs);
  sval = sr_xcalloc(nv, sizeof *sval);
  {
    uint32_t k = 0;
    for (uint32_t r = 0; r < nres; r++) sval[res[r]] = sr_ref(sargs[k++]);
    for (uint32_t i = 0; i < na; i++)
      if (live[sr_args(J)[i]->id]) sval[sr_args(J)[i]->id] = sr_ref(sargs[k++]);
  }
  I->trace = st;
  erc = emit(ad, J, keeps, NULL, sval);
  SrVal **souts = sr_xcalloc(nt + 1, sizeof *souts);
  int mark = sr_ad_mark(ad);
  for (uint32_t i = 0; erc == 0 && i < nt; i++) {
    souts[i] = out_value(ad, J->outvars[no + i], sval);
    if (!souts[i]) erc = -1;
  }
  SrJaxpr *S = NULL;
  if (erc == 0) S = sr_ad_trace_end(ad, st, (int)nt, souts, NULL);
  else sr_trace_abort(I, st);
  sr_ad_release(ad, mark);
  free(souts);
  I->trace = saved;
  if (!S) goto done;
  /* remat_p.bind(*residuals, *staged inputs, jaxpr=jaxpr_unknown,
     differentiated=True, ...) into the tangent trace */
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *key = e->params[p].key;
    if (strcmp(key, "jaxpr") == 0) sr_plist_add(&ps, key, sr_jaxpr_val(NULL, S));
    else if (strcmp(key, "differentiated") == 0) sr_plist_add(&ps, key, sr_bool(1));
    else sr_plist_add(&ps, key, sr_ref(e->params[p].val));
  }
  SrVal *r = nt ? sr_ad_bind_tangent(ad, e->prim->id, (int)nin_s, rin, ps.n, ps.p) : NULL;
  sr_plist_free(&ps);
  sr_program_unref(S->prog);
  if (nt && !r) goto done;
  /* the tangents, packed: those of the outputs with nonzero ones */
  for (uint32_t i = 0; i < nt; i++) tpk[i] = r->seq.items[i];
  rc = 0;
done:
  if (val)
    for (uint32_t i = 0; i < nv; i++) sr_unref(val[i]);
  if (sval)
    for (uint32_t i = 0; i < nv; i++) sr_unref(sval[i]);
  if (sargs)
    for (uint32_t i = 0; i < nin_s; i++) sr_unref(sargs[i]);
  free(val);
  free(sval);
  free(sargs);
  free(stypes);
  free(vtype);
  free(rin);
  free(unk);
  free(inst);
  free(isres);
  free(role);
  free(def);
  free(res);
  free(live);
  free(keepk);
  free(keeps);
  free(rp);
  return rc;
}
