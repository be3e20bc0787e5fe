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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lax/lax.h"

#include "ad/ad_rules.h"
#include "ir/name_stack.h"
#include "util/intern.h"

int (*sr_lax_remat_saveable)(SrInterp *I, SrVal *policy, const SrEqn *e);

enum { ROLE_KNOWN_SAVED = 1, ROLE_KNOWN_RECOMPUTED, ROLE_STAGED };

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


/* ---- partial_eval_jaxpr_custom on one jaxpr ----
 *
 * Pe holds the split of a jaxpr J whose arguments are known or unknown:
 * each equation's role, which vars are unknown, the residuals (known
 * vars a staged equation reads), and the two DCEs.  A call equation (a
 * jit, a nested remat) reading known and unknown values is split in two
 * by the same rule on its body (call_partial_eval_custom_rule, with the
 * outer policy): a known call of the known part, returning the known
 * outputs then its own residuals, and a staged call of the staged part
 * on those residuals and the operands it reads.  Its residuals get var
 * ids past J's (xbase). */

enum { ROLE_SPLIT = ROLE_STAGED + 1 };

typedef struct PeSub {
  SrJaxpr *Qk, *Qs;   /* each holds a reference to its program */
  int nb;             /* a cond's branches (Qkb, Qsb; Qk, Qs unused), or 0 */
  int scan;           /* a scan: Qk the known scan's body, Qs the staged
                         side inlined (its recompute and linear scans) */
  int sc_nc, sc_nk, sc_nx; /* the known scan's operand counts */
  int64_t sc_length;
  uint8_t *k_in;      /* the operands the known call takes (NULL: the known ones) */
  SrJaxpr **Qkb, **Qsb;
  SrJaxpr **Qrb;      /* a cond reading unknowns whose known outputs the
                         staged side reads: the branches of a cond
                         recomputing those (r_out) from the residuals and
                         the known operands, bound before the tangent
                         cond (Qsb), or NULL */
  uint8_t *r_out;
  uint32_t nres;      /* Qk's outputs past the known ones */
  uint32_t xbase;     /* the first of their ids */
  uint8_t *unk_out;   /* per output of the call */
  uint8_t *stage_out; /* per output: the staged call returns it (unknown,
                         or known and recomputed there: instantiated) */
  uint8_t *s_used;    /* per operand: Qs reads it (after the residuals) */
  uint8_t *rk_out;    /* a call reading unknown operands: per known output,
                         whether the staged side recomputes it (inst_out in
                         call_partial_eval_custom_rule) by a call of Qk on
                         the known operands, NULL: none */
} PeSub;

typedef struct Pe {
  const SrJaxpr *J;
  SrVal *policy;
  uint32_t na, nv; /* nv: J's ids, then the split calls' residuals */
  uint8_t *unk, *inst, *isres, *role, *live, *keepk, *keeps;
  int32_t *def;
  uint32_t *res, nres;
  int known_args_only; /* pe_trace_side's staged side: no unknown arguments */
  const SrType **vtype;
  PeSub *sub; /* per equation */
} Pe;

static void pe_free(Pe *pe) {
  if (pe->sub)
    for (uint32_t k = 0; k < pe->J->neqn; k++) {
      PeSub *s = &pe->sub[k];
      if (s->Qk) sr_program_unref(s->Qk->prog);
      if (s->Qs) sr_program_unref(s->Qs->prog);
      for (int b = 0; b < s->nb; b++) {
        if (s->Qkb[b]) sr_program_unref(s->Qkb[b]->prog);
        if (s->Qsb[b]) sr_program_unref(s->Qsb[b]->prog);
        if (s->Qrb && s->Qrb[b]) sr_program_unref(s->Qrb[b]->prog);
      }
      free(s->Qkb);
      free(s->Qsb);
      free(s->Qrb);
      free(s->r_out);
      free(s->unk_out);
      free(s->stage_out);
      free(s->k_in);
      free(s->s_used);
      free(s->rk_out);
    }
  free(pe->sub);
  free(pe->unk);
  free(pe->inst);
  free(pe->isres);
  free(pe->role);
  free(pe->live);
  free(pe->keepk);
  free(pe->keeps);
  free(pe->def);
  free(pe->res);
  free(pe->vtype);
}

/* per output of a split call: its staged side returns it */
static int st_out(const PeSub *s, uint32_t i) { return s->stage_out[i] || (s->r_out && s->r_out[i]); }

static int splittable(const SrEqn *q) {
  int id = q->prim->id;
  return id == SR_P_jit || id == SR_P_pjit || id == SR_P_remat2 || id == SR_P_remat || id == SR_P_checkpoint ||
         id == SR_P_cond || id == SR_P_scan;
}

static SrJaxpr *call_body(const SrEqn *q) {
  SrVal *v = sr_eqn_param(q, sr_intern_cstr("jaxpr"));
  if (!v) v = sr_eqn_param(q, sr_intern_cstr("call_jaxpr"));
  return v && v->kind == SR_V_JAXPR ? v->jx.jaxpr : NULL;
}

static int pe_build_sub(SrAd *ad, const SrEqn *q, const uint8_t *unk_in, SrVal *policy, PeSub *s);
/* > 0 inside a scan's body, whose split keeps the staged calls' known
   outputs as residuals (PeSub.rk_out unused) */
static int no_recomp;
static const SrType *stack_type(const SrType *t, int64_t length);

static SrVal *var_value(SrAd *ad, SrVar *v, SrVal **val) {
  return v->kind == SR_LIT ? sr_ad_literal(ad, v) : val[v->id];
}

/* Classifies J's equations, arguments unknown where unk_args is set (all
   instantiated).  0, 1 for what is not split here, -1 on error. */
static int pe_classify(SrAd *ad, Pe *pe, const SrJaxpr *J, const uint8_t *unk_args, SrVal *policy) {
  memset(pe, 0, sizeof *pe);
  pe->J = J;
  pe->policy = policy;
  pe->na = sr_nargs(J);
  pe->sub = sr_xcalloc(J->neqn + 1, sizeof *pe->sub);
  /* the split calls' residual ids: count them as they come */
  uint32_t nv0 = J->nvars + 1, cap = nv0;
  pe->nv = nv0;
#define GROW(p, n0, n1) (p = sr_xrealloc(p, (n1) * sizeof *(p)), memset((p) + (n0), 0, ((n1) - (n0)) * sizeof *(p)))
  pe->unk = sr_xcalloc(cap, 1);
  pe->inst = sr_xcalloc(cap, 1);
  pe->isres = sr_xcalloc(cap, 1);
  pe->def = sr_xcalloc(cap, sizeof *pe->def);
  pe->res = sr_xcalloc(cap, sizeof *pe->res);
  pe->vtype = sr_xcalloc(cap, sizeof *pe->vtype);
  pe->role = sr_xcalloc(J->neqn + 1, 1);
  for (uint32_t i = 0; i < cap; i++) pe->def[i] = -1;
  for (uint32_t i = 0; i < pe->na; i++) {
    SrVar *v = sr_args(J)[i];
    pe->unk[v->id] = unk_args[i];
    pe->inst[v->id] = 1;
    pe->vtype[v->id] = v->type;
  }
#define ADD_RES(id_)                                                                                                   \
  do {                                                                                                                 \
    uint32_t i_ = (id_);                                                                                               \
    if (!pe->inst[i_] && !pe->isres[i_]) pe->isres[i_] = 1, pe->res[pe->nres++] = i_;                                  \
  } while (0)
  for (uint32_t k = 0; k < J->neqn; k++) {
    const SrEqn *q = &J->eqns[k];
    int anyunk = 0, allunk = 1;
    for (uint32_t i = 0; i < q->nin; i++) {
      int u = q->in[i]->kind == SR_VAR && pe->unk[q->in[i]->id];
      anyunk |= u;
      allunk &= u;
    }
    for (uint32_t i = 0; i < q->nout; i++)
      if (q->out[i]->kind != SR_DROP) pe->def[q->out[i]->id] = (int32_t)k, pe->vtype[q->out[i]->id] = q->out[i]->type;
    /* partial_eval_jaxpr_custom_rules: a call's own split, known
       operands or not (a jit, remat or cond split by the policy inside) */
    if (has_body(q) && !allunk && (anyunk || splittable(q)) && !sr_prim_has_effect(q->prim, q->params, q->nparams)) {
      if (!splittable(q)) return 1;
      uint8_t *uin = sr_xcalloc(q->nin + 1, 1);
      for (uint32_t i = 0; i < q->nin; i++) uin[i] = q->in[i]->kind == SR_VAR && pe->unk[q->in[i]->id];
      PeSub *s = &pe->sub[k];
      int rc = pe_build_sub(ad, q, uin, policy, s);
      free(uin);
      if (rc == 2) goto staged; /* a cond on an unknown index: all of it staged */
      if (rc) return rc;
      s->xbase = pe->nv;
      uint32_t nv1 = pe->nv + s->nres;
      if (nv1 > cap) {
        uint32_t c1 = 2 * nv1;
        GROW(pe->unk, cap, c1);
        GROW(pe->inst, cap, c1);
        GROW(pe->isres, cap, c1);
        GROW(pe->def, cap, c1);
        GROW(pe->res, cap, c1);
        GROW(pe->vtype, cap, c1);
        cap = c1;
      }
      pe->nv = nv1;
      uint32_t nko = 0;
      for (uint32_t i = 0; i < q->nout; i++) nko += !s->unk_out[i];
      for (uint32_t r = 0; r < s->nres; r++) {
        pe->def[s->xbase + r] = (int32_t)k;
        pe->vtype[s->xbase + r] = (s->nb ? s->Qkb[0] : s->Qk)->outvars[nko + r]->type;
        /* a scan's residuals are stacked */
        if (s->scan) pe->vtype[s->xbase + r] = stack_type(pe->vtype[s->xbase + r], s->sc_length);
      }
      pe->role[k] = ROLE_SPLIT;
      for (uint32_t r = 0; r < s->nres; r++) ADD_RES(s->xbase + r);
      for (uint32_t i = 0; i < q->nin; i++)
        if (s->s_used[i] && q->in[i]->kind == SR_VAR) ADD_RES(q->in[i]->id);
      for (uint32_t i = 0; i < q->nout; i++) {
        if (q->out[i]->kind == SR_DROP) continue;
        if (s->unk_out[i]) pe->unk[q->out[i]->id] = 1;
        if (st_out(s, i) || (s->rk_out && s->rk_out[i])) pe->inst[q->out[i]->id] = 1;
      }
      /* a recomputation reads the known operands (residuals where the
         staged side does not have them; pe_dce keeps those it reads) */
      if (s->rk_out)
        for (uint32_t i = 0; i < q->nin; i++)
          if (q->in[i]->kind == SR_VAR && !pe->unk[q->in[i]->id]) ADD_RES(q->in[i]->id);
      continue;
    }
    if (anyunk) {
    staged:
      pe->role[k] = ROLE_STAGED;
      for (uint32_t i = 0; i < q->nin; i++)
        if (q->in[i]->kind == SR_VAR) ADD_RES(q->in[i]->id);
      for (uint32_t i = 0; i < q->nout; i++)
        if (q->out[i]->kind != SR_DROP) pe->unk[q->out[i]->id] = pe->inst[q->out[i]->id] = 1;
      continue;
    }
    if (q->prim->id == SR_P_debug_print || q->prim->id == SR_P_debug_callback) {
      /* debugging.py's _debug_partial_eval_custom: run in the known part
         and again in the recomputation (it has no outputs), unless the
         policy saves it and an input is not instantiated */
      int sv = saveable(ad, policy, q), allinst = 1;
      if (sv < 0) return -1;
      for (uint32_t i = 0; i < q->nin; i++) allinst &= q->in[i]->kind != SR_VAR || pe->inst[q->in[i]->id];
      pe->role[k] = sv && !allinst ? ROLE_KNOWN_SAVED : ROLE_KNOWN_RECOMPUTED;
      if (pe->role[k] == ROLE_KNOWN_RECOMPUTED)
        for (uint32_t i = 0; i < q->nin; i++)
          if (q->in[i]->kind == SR_VAR) ADD_RES(q->in[i]->id);
      continue;
    }
    int sv = sr_prim_has_effect(q->prim, q->params, q->nparams) ? 1 : saveable(ad, policy, q);
    if (sv < 0) return -1;
    if (sv) {
      pe->role[k] = ROLE_KNOWN_SAVED;
    } else {
      pe->role[k] = ROLE_KNOWN_RECOMPUTED;
      for (uint32_t i = 0; i < q->nin; i++)
        if (q->in[i]->kind == SR_VAR) ADD_RES(q->in[i]->id);
      for (uint32_t i = 0; i < q->nout; i++)
        if (q->out[i]->kind != SR_DROP) pe->inst[q->out[i]->id] = 1;
    }
  }
#undef ADD_RES
#undef GROW
  return 0;
}

/* The two DCEs: the staged equations to the outputs with live_out set
   (the unknown ones), the known ones to the others and the residuals
   used; the residuals pruned to those. */
/* The staged DCE alone, to the outputs with staged_out set (add_res: a
   known output returned there made a residual) */
static void pe_dce_staged(Pe *pe, const uint8_t *staged_out, int add_res) {
  const SrJaxpr *J = pe->J;
  if (!pe->live) pe->live = sr_xcalloc(pe->nv, 1);
  if (!pe->keeps) pe->keeps = sr_xcalloc(J->neqn + 1, 1);
  memset(pe->live, 0, pe->nv);
  memset(pe->keeps, 0, J->neqn + 1);
  for (uint32_t i = 0; i < J->nout; i++)
    if (staged_out[i] && J->outvars[i]->kind == SR_VAR) {
      uint32_t id = J->outvars[i]->id;
      pe->live[id] = 1;
      /* a known output the staged side returns (a cond's branch where
         another branch makes it unknown): a residual */
      if (add_res && !pe->unk[id] && !pe->inst[id] && !pe->isres[id]) pe->isres[id] = 1, pe->res[pe->nres++] = id;
    }
  for (uint32_t k = J->neqn; k-- > 0;) {
    const SrEqn *q = &J->eqns[k];
    int r = pe->role[k];
    if (r != ROLE_STAGED && r != ROLE_KNOWN_RECOMPUTED && r != ROLE_SPLIT) continue;
    const PeSub *s = &pe->sub[k];
    int need = r != ROLE_SPLIT && sr_prim_has_effect(q->prim, q->params, q->nparams), recomp = 0;
    for (uint32_t i = 0; i < q->nout && !need; i++)
      need = (r != ROLE_SPLIT || st_out(s, i)) && q->out[i]->kind == SR_VAR && pe->live[q->out[i]->id];
    if (r == ROLE_SPLIT && s->rk_out)
      for (uint32_t i = 0; i < q->nout && !recomp; i++)
        recomp = s->rk_out[i] && q->out[i]->kind == SR_VAR && pe->live[q->out[i]->id];
    if (!need && !recomp) continue;
    pe->keeps[k] = (uint8_t)(1 | (recomp ? 2 : 0));
    for (uint32_t i = 0; i < q->nin; i++)
      if (q->in[i]->kind == SR_VAR && (r != ROLE_SPLIT || s->s_used[i])) pe->live[q->in[i]->id] = 1;
    if (recomp)
      for (uint32_t i = 0; i < q->nin; i++)
        if (q->in[i]->kind == SR_VAR && !pe->unk[q->in[i]->id]) pe->live[q->in[i]->id] = 1;
    if (r == ROLE_SPLIT)
      for (uint32_t x = 0; x < s->nres; x++) pe->live[s->xbase + x] = 1;
  }
}

static void pe_dce(Pe *pe, const uint8_t *known_out, const uint8_t *staged_out) {
  const SrJaxpr *J = pe->J;
  pe_dce_staged(pe, staged_out, 1);
  uint32_t nused = 0;
  for (uint32_t r = 0; r < pe->nres; r++)
    if (pe->live[pe->res[r]]) pe->res[nused++] = pe->res[r];
  pe->nres = nused;
  uint8_t *livek = sr_xcalloc(pe->nv, 1);
  pe->keepk = sr_xcalloc(J->neqn + 1, 1);
  for (uint32_t i = 0; i < J->nout; i++)
    if (known_out[i] && J->outvars[i]->kind == SR_VAR) livek[J->outvars[i]->id] = 1;
  for (uint32_t r = 0; r < pe->nres; r++) livek[pe->res[r]] = 1;
  for (uint32_t k = J->neqn; k-- > 0;) {
    const SrEqn *q = &J->eqns[k];
    int r = pe->role[k];
    if (r != ROLE_KNOWN_SAVED && r != ROLE_KNOWN_RECOMPUTED && r != ROLE_SPLIT) continue;
    const PeSub *s = &pe->sub[k];
    int need = r != ROLE_SPLIT && sr_prim_has_effect(q->prim, q->params, q->nparams);
    for (uint32_t i = 0; i < q->nout && !need; i++)
      need = (r != ROLE_SPLIT || !s->unk_out[i]) && q->out[i]->kind == SR_VAR && livek[q->out[i]->id];
    if (r == ROLE_SPLIT)
      for (uint32_t x = 0; x < s->nres && !need; x++) need = livek[s->xbase + x];
    if (!need) continue;
    pe->keepk[k] = 1;
    for (uint32_t i = 0; i < q->nin; i++)
      if (q->in[i]->kind == SR_VAR && (r != ROLE_SPLIT || (s->k_in ? s->k_in[i] : !pe->unk[q->in[i]->id]))) livek[q->in[i]->id] = 1;
  }
  free(livek);
}

/* The params of one side of a split call q on body Q: a jit's per-operand
   entries follow its operands (isrc, osrc), a remat's staged side is
   differentiated (remat_partial_eval_custom_params_updater). */
static void split_params(SrPList *ps, const SrEqn *q, SrJaxpr *Q, int nin, const int *isrc, const int *osrc,
                         int staged, const PeSub *s) {
  if (s->nb) {
    for (uint32_t p = 0; p < q->nparams; p++) {
      const char *k = q->params[p].key;
      if (strcmp(k, "branches") == 0) {
        SrVal *t = sr_seq(NULL, SR_V_TUPLE, s->nb);
        for (int b = 0; b < s->nb; b++) sr_seq_push(NULL, t, sr_jaxpr_val(NULL, staged ? s->Qsb[b] : s->Qkb[b]));
        sr_plist_add(ps, k, t);
      } else {
        sr_plist_add(ps, k, sr_ref(q->params[p].val));
      }
    }
    return;
  }
  if (q->prim->id == SR_P_jit || q->prim->id == SR_P_pjit) {
    sr_lax_call_params(ps, q, Q, nin, isrc, (int)Q->nout, osrc);
    return;
  }
  for (uint32_t p = 0; p < q->nparams; p++) {
    const char *k = q->params[p].key;
    if (strcmp(k, "jaxpr") == 0) sr_plist_add(ps, k, sr_jaxpr_val(NULL, Q));
    else if (staged && strcmp(k, "differentiated") == 0) sr_plist_add(ps, k, sr_bool(1));
    else sr_plist_add(ps, k, sr_ref(q->params[p].val));
  }
}

/* The recompute cond of a split cond's staged side (PeSub's Qrb), DCE'd
   to the outputs read: on the index, the residual slots and the known
   operands; its outputs written to val.  0 or -1. */
static int emit_recompute_cond(SrAd *ad, const Pe *pe, const SrEqn *e, const PeSub *s, SrVal **val) {
  SrInterp *I = ad->I;
  uint8_t *used = sr_xcalloc(e->nout + 1, 1);
  int *osrc = sr_xcalloc(e->nout + 1, sizeof *osrc);
  int nr = 0, nused = 0, rc = 0;
  for (uint32_t i = 0; i < e->nout; i++)
    if (s->r_out[i]) {
      used[nr] = e->out[i]->kind == SR_VAR && (!pe->live || pe->live[e->out[i]->id]);
      if (used[nr]) osrc[nused++] = (int)i;
      nr++;
    }
  if (nused) {
    SrVal **in = sr_xcalloc(e->nin + s->nres + 1, sizeof *in);
    int nin = 0, ok = 1;
    in[nin++] = var_value(ad, e->in[0], val);
    for (uint32_t x = 0; x < s->nres; x++) in[nin++] = val[s->xbase + x];
    for (uint32_t i = 1; i < e->nin; i++)
      if (!(e->in[i]->kind == SR_VAR && pe->unk[e->in[i]->id])) in[nin++] = var_value(ad, e->in[i], val);
    for (int i = 0; i < nin; i++) ok &= in[i] != NULL;
    SrPList ps = {0};
    for (uint32_t p = 0; ok && p < e->nparams; p++) {
      const char *k = e->params[p].key;
      if (strcmp(k, "branches") == 0) {
        SrVal *t = sr_seq(NULL, SR_V_TUPLE, s->nb);
        for (int b = 0; b < s->nb; b++)
          sr_seq_push(NULL, t, sr_jaxpr_val(NULL, nused < nr ? sr_ad_dce(s->Qrb[b], used, NULL, 0) : s->Qrb[b]));
        sr_plist_add(&ps, k, t);
      } else {
        sr_plist_add(&ps, k, sr_ref(e->params[p].val));
      }
    }
    SrVal *r = ok ? sr_ad_keep(ad, sr_bind_prim(I, e->prim, nin, in, ps.n, ps.p, NULL, (uint32_t)nused)) : NULL;
    sr_plist_free(&ps);
    if (r && r->kind == SR_V_TUPLE && r->seq.n == (uint32_t)nused)
      for (int i = 0; i < nused; i++) {
        uint32_t id = e->out[osrc[i]]->id;
        sr_unref(val[id]);
        val[id] = sr_ref(r->seq.items[i]);
      }
    else rc = -1;
    free(in);
  }
  free(used);
  free(osrc);
  return rc;
}

/* Binds the equations of pe's J with keep[k] set into the current trace,
   the known side of split calls (staged == 0) or their staged side; the
   values of the vars in val (counted; inputs filled by the caller).
   After the producer of a var with rp set, its value goes through
   reduce_precision.  Returns 0 or -1. */
/* The known call of e: its known operands (in, their positions in isrc)
   and its outputs (osrc: the known outputs' positions, then -1 for each
   residual). */
static void known_call(SrAd *ad, const Pe *pe, const SrEqn *e, const PeSub *s, SrVal **val, SrVal **in, int *isrc,
                       int *osrc, int *nin, int *nout) {
  *nin = *nout = 0;
  for (uint32_t i = 0; i < e->nin; i++)
    if (s->k_in ? s->k_in[i] : !(e->in[i]->kind == SR_VAR && pe->unk[e->in[i]->id]))
      isrc[*nin] = (int)i, in[(*nin)++] = var_value(ad, e->in[i], val);
  for (uint32_t i = 0; i < e->nout; i++)
    if (!s->unk_out[i]) osrc[(*nout)++] = (int)i;
  for (uint32_t x = 0; x < s->nres; x++) osrc[(*nout)++] = -1;
}

static int emit(SrAd *ad, const Pe *pe, const uint8_t *keep, const uint8_t *rp, SrVal **val, int staged) {
  SrInterp *I = ad->I;
  const SrJaxpr *J = pe->J;
  /* the trace's program keeps J's, where the params' values stay */
  if (I->trace && I->trace->prog != J->prog) sr_program_dep(I->trace->prog, J->prog);
  SrEqnCtx c0 = sr_eqn_ctx_save(I);
  int rc = 0;
  for (uint32_t k = 0; k < J->neqn && rc == 0; k++) {
    if (!keep[k]) continue;
    const SrEqn *e = &J->eqns[k];
    sr_eqn_ctx_enter(I, &c0, c0.ns, e);
    int mark = sr_ad_mark(ad);
    SrVal *r = NULL;
    if (pe->role[k] == ROLE_SPLIT) {
      const PeSub *s = &pe->sub[k];
      PeSub sd;
      SrJaxpr **qsb_d = NULL;
      SrVal **in = sr_xcalloc(e->nin + s->nres + 1, sizeof *in);
      int *isrc = sr_xcalloc(e->nin + s->nres + 1, sizeof *isrc), *osrc = sr_xcalloc(e->nout + s->nres + 1, sizeof *osrc);
      int nin = 0, nout = 0;
      if (staged && (keep[k] & 2) && !s->nb && !s->scan) {
        /* the known outputs the staged side recomputes: the known call
           again, on the known operands (its residuals unused) */
        known_call(ad, pe, e, s, val, in, isrc, osrc, &nin, &nout);
        int ok = 1;
        for (int i = 0; i < nin; i++) ok &= in[i] != NULL;
        SrVal *rk = NULL;
        if (ok) {
          SrPList ps = {0};
          split_params(&ps, e, s->Qk, nin, isrc, osrc, 0, s);
          rk = sr_ad_keep(ad, sr_bind_prim(I, e->prim, nin, in, ps.n, ps.p, NULL, s->Qk->nout));
          sr_plist_free(&ps);
        }
        if (rk && (rk->kind != SR_V_TUPLE || rk->seq.n != nout)) rk = NULL;
        for (int i = 0; rk && i < nout; i++) {
          if (osrc[i] < 0 || !s->rk_out[osrc[i]]) continue;
          SrVar *ov = e->out[osrc[i]];
          if (ov->kind == SR_DROP) continue;
          sr_unref(val[ov->id]);
          val[ov->id] = sr_ref(rk->seq.items[i]);
        }
        if (!rk) {
          free(in);
          free(isrc);
          free(osrc);
          sr_ad_release(ad, mark);
          rc = -1;
          continue;
        }
        nin = nout = 0;
      }
      if (!staged) {
        known_call(ad, pe, e, s, val, in, isrc, osrc, &nin, &nout);
      } else {
        if (s->Qrb && emit_recompute_cond(ad, pe, e, s, val) < 0) {
          free(in);
          free(isrc);
          free(osrc);
          sr_ad_release(ad, mark);
          rc = -1;
          continue;
        }
        /* a cond's staged call: the index, the residuals, the operands */
        if (s->nb) isrc[nin] = 0, in[nin++] = var_value(ad, e->in[0], val);
        for (uint32_t x = 0; x < s->nres; x++) isrc[nin] = -1, in[nin++] = val[s->xbase + x];
        for (uint32_t i = s->nb ? 1 : 0; i < e->nin; i++)
          if (s->s_used[i]) isrc[nin] = (int)i, in[nin++] = var_value(ad, e->in[i], val);
        /* the staged call DCE'd to the outputs the staged side reads (the
           cond's and pjit's DCE rules) */
        uint8_t *used = sr_xcalloc(e->nout + 1, 1);
        int nused = 0, nst = 0;
        for (uint32_t i = 0; i < e->nout; i++)
          if (s->stage_out[i]) {
            used[nst] = e->out[i]->kind == SR_VAR && (!pe->live || pe->live[e->out[i]->id]);
            nused += used[nst++];
            if (used[nst - 1]) osrc[nout++] = (int)i;
          }
        if (s->Qrb && nused == 0) {
          /* only the recompute cond's outputs read */
          free(used);
          free(in);
          free(isrc);
          free(osrc);
          sr_ad_release(ad, mark);
          continue;
        }
        if (nused < nst) {
          /* a copy: the side may be bound again (a branch traced twice) */
          sd = *s;
          if (s->nb) {
            qsb_d = sr_xcalloc((size_t)s->nb, sizeof *qsb_d);
            for (int b = 0; b < s->nb; b++) qsb_d[b] = sr_ad_dce(s->Qsb[b], used, NULL, 0);
            sd.Qsb = qsb_d;
          } else {
            sd.Qs = sr_ad_dce(s->Qs, used, NULL, 0);
          }
          s = &sd;
        }
        free(used);
      }
      int ok = 1;
      for (int i = 0; i < nin; i++) ok &= in[i] != NULL;
      if (ok && s->scan && staged) {
        r = sr_ad_keep(ad, sr_eval_jaxpr(I, s->Qs, nin, in));
      } else if (ok && s->scan) {
        SrPList ps = {0};
        int rev = 0;
        SrVal *rv = sr_eqn_param(e, sr_intern_cstr("reverse"));
        rev = rv && sr_val_truthy(rv);
        sr_lax_scan_params(&ps, e, s->Qk, s->sc_nc, s->sc_nk, s->sc_nx, rev);
        r = sr_ad_keep(ad, sr_bind_prim(I, e->prim, nin, in, ps.n, ps.p, NULL, s->Qk->nout));
        sr_plist_free(&ps);
      } else if (ok) {
        SrPList ps = {0};
        SrJaxpr *Q = s->nb ? (staged ? s->Qsb[0] : s->Qkb[0]) : staged ? s->Qs : s->Qk;
        split_params(&ps, e, Q, nin, isrc, osrc, staged, s);
        r = sr_ad_keep(ad, sr_bind_prim(I, e->prim, nin, in, ps.n, ps.p, NULL, Q->nout));
        sr_plist_free(&ps);
      }
      if (r && (r->kind != SR_V_TUPLE || r->seq.n != nout)) r = NULL;
      for (int i = 0, o = 0; r && i < nout; i++) {
        uint32_t id;
        if (osrc[i] >= 0) {
          SrVar *ov = e->out[osrc[i]];
          if (ov->kind == SR_DROP) continue;
          id = ov->id;
        } else {
          id = s->xbase + (uint32_t)o++;
        }
        sr_unref(val[id]);
        val[id] = sr_ref(r->seq.items[i]);
      }
      free(in);
      free(isrc);
      free(osrc);
      free(qsb_d);
      sr_ad_release(ad, mark);
      if (!r) rc = -1;
      continue;
    }
    SrVal **in = sr_xcalloc(e->nin + 1, sizeof *in);
    for (uint32_t i = 0; i < e->nin; i++) in[i] = var_value(ad, e->in[i], val);
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
  sr_eqn_ctx_restore(I, &c0);
  return rc;
}

/* Traces one side of pe's J into a new jaxpr: the known side on the known
   arguments, returning the known outputs then the residuals; or the
   staged side on the residuals then the arguments it reads, returning the
   unknown outputs. */
/* With slot_res (a cond's branch): the residuals go in the shared slots
   instead, slot k holding residual slot_res[k] (-1: none of this
   branch's, a zeros output or an unread input), and the staged side takes
   all the arguments. */
static SrJaxpr *pe_trace_side(SrAd *ad, const Pe *pe, int staged, const uint8_t *unk_out, const uint8_t *stage_out,
                              const uint8_t *s_used,
                              uint32_t nslot, const SrType *const *slot_types, const int32_t *slot_res) {
  SrInterp *I = ad->I;
  const SrJaxpr *J = pe->J;
  int cond = slot_res != NULL;
  uint32_t nin = 0, nr = cond ? nslot : pe->nres;
  const SrType **types = sr_xcalloc(nr + pe->na + 1, sizeof *types);
  int64_t *ids = sr_xcalloc(nr + pe->na + 1, sizeof *ids);
  if (staged && cond)
    for (uint32_t k = 0; k < nslot; k++)
      ids[nin] = slot_res[k] >= 0 ? (int64_t)pe->res[slot_res[k]] : -1, types[nin++] = slot_types[k];
  else if (staged)
    for (uint32_t r = 0; r < pe->nres; r++) ids[nin] = pe->res[r], types[nin++] = pe->vtype[pe->res[r]];
  for (uint32_t i = 0; i < pe->na; i++) {
    SrVar *v = sr_args(J)[i];
    if (staged ? (!cond && !s_used[i]) || (pe->known_args_only && pe->unk[v->id]) : pe->unk[v->id]) continue;
    ids[nin] = v->id, types[nin++] = v->type;
  }
  SrVal **args = sr_xcalloc(nin + 1, sizeof *args);
  SrVal **val = sr_xcalloc(pe->nv, sizeof *val);
  SrTrace *saved = I->trace;
  SrTrace *st = sr_ad_trace_begin(ad, (int)nin, types, args);
  for (uint32_t i = 0; i < nin; i++) {
    if (ids[i] < 0) continue;
    sr_unref(val[ids[i]]);
    val[ids[i]] = sr_ref(args[i]);
  }
  I->trace = st;
  int erc = emit(ad, pe, staged ? pe->keeps : pe->keepk, NULL, val, staged);
  uint32_t nout = 0;
  SrVal **outs = sr_xcalloc(J->nout + nr + 1, sizeof *outs);
  int mark = sr_ad_mark(ad);
  for (uint32_t i = 0; erc == 0 && i < J->nout; i++)
    if ((staged ? stage_out[i] : !unk_out[i]) && !(outs[nout++] = var_value(ad, J->outvars[i], val))) erc = -1;
  /* the zeros of the slots a branch does not fill, made in this trace (a
     sub-AD that binds into the current one) */
  SrAd zs;
  int have_zs = 0;
  if (!staged && cond)
    for (uint32_t k = 0; erc == 0 && k < nslot; k++) {
      if (slot_res[k] < 0 && !have_zs) sr_ad_begin(&zs, I, SR_AD_BWD), have_zs = 1;
      if (!(outs[nout++] = slot_res[k] >= 0 ? val[pe->res[slot_res[k]]] : sr_ad_full_zeros(&zs, slot_types[k])))
        erc = -1;
    }
  if (!staged && !cond)
    for (uint32_t r = 0; erc == 0 && r < pe->nres; r++)
      if (!(outs[nout++] = val[pe->res[r]])) erc = -1;
  SrJaxpr *Q = NULL;
  if (erc == 0) Q = sr_ad_trace_end(ad, st, (int)nout, outs, NULL);
  else sr_trace_abort(I, st);
  /* pe.partial_eval_jaxpr_nounits: each side with_unknown_names */
  if (Q) Q->dbg = sr_debug_info_copy(Q->prog->arena, pe->J->dbg, 1);
  if (have_zs) sr_ad_end(&zs);
  sr_ad_release(ad, mark);
  I->trace = saved;
  for (uint32_t i = 0; i < pe->nv; i++) sr_unref(val[i]);
  for (uint32_t i = 0; i < nin; i++) sr_unref(args[i]);
  free(val);
  free(args);
  free(outs);
  free(types);
  free(ids);
  return Q;
}

/* _cond_partial_eval_custom: each branch split with the operands'
   unknowns, an output unknown where any branch makes it so; the
   branches' residuals merged into shared slots by type
   (_merge_branch_residuals), a branch returning zeros in the slots it does
   not fill; the staged cond takes the index, the slots and all operands.
   2 when the index is unknown (the whole cond is staged). */
static int pe_build_cond(SrAd *ad, const SrEqn *q, const uint8_t *unk_in, SrVal *policy, PeSub *s) {
  if (unk_in[0]) return 2;
  SrVal *bv = sr_eqn_param(q, sr_intern_cstr("branches"));
  SrJaxpr *bs[64];
  int nb = bv ? sr_param_jaxprs(bv, bs, 64) : 0;
  if (nb <= 0 || nb > 64) return 1;
  uint32_t nops = q->nin - 1;
  for (int b = 0; b < nb; b++)
    if (bs[b]->nconst || sr_nargs(bs[b]) != nops || bs[b]->nout != q->nout) return 1;
  Pe *pb = sr_xcalloc((size_t)nb, sizeof *pb);
  int rc = 0, nmade = 0;
  s->unk_out = sr_xcalloc(q->nout + 1, 1);
  s->stage_out = sr_xcalloc(q->nout + 1, 1);
  for (int b = 0; b < nb && rc == 0; b++) {
    /* a branch's calls save their known outputs (the cond recomputes
       what its staged side reads: r_out) */
    no_recomp++;
    rc = pe_classify(ad, &pb[b], bs[b], unk_in + 1, policy);
    no_recomp--;
    nmade++;
    for (uint32_t i = 0; rc == 0 && i < q->nout; i++) {
      SrVar *ov = bs[b]->outvars[i];
      s->unk_out[i] |= ov->kind == SR_VAR && pb[b].unk[ov->id];
      s->stage_out[i] |= ov->kind == SR_VAR && pb[b].inst[ov->id];
    }
  }
  uint8_t *known_out = sr_xcalloc(q->nout + 1, 1);
  int anyunk = 0;
  for (uint32_t i = 0; i < q->nin; i++) anyunk |= unk_in[i];
  /* a staged cond reading tangents returns tangents only, so that it
     transposes; the known outputs JAX's staged cond returns too
     (recomputed: instantiated) come from a cond of their own before it,
     on the residuals and the known operands (r_out) */
  uint8_t *all_out = sr_xcalloc(q->nout + 1, 1);
  int nr = 0;
  s->r_out = sr_xcalloc(q->nout + 1, 1);
  for (uint32_t i = 0; i < q->nout; i++) {
    if (anyunk) {
      s->r_out[i] = s->stage_out[i] && !s->unk_out[i];
      nr += s->r_out[i];
      s->stage_out[i] = 0;
    }
    s->stage_out[i] |= s->unk_out[i];
    all_out[i] = s->stage_out[i] || s->r_out[i];
    known_out[i] = !s->unk_out[i];
  }
  if (!nr) free(s->r_out), s->r_out = NULL;
  uint32_t nslot = 0;
  const SrType **slot_types = NULL;
  int32_t **slot_res = NULL;
  if (rc == 0) {
    /* the residuals of each branch, then their slots: the k-th residual
       of a type takes that type's k-th slot */
    uint32_t cap = 0;
    for (int b = 0; b < nb; b++) {
      pe_dce(&pb[b], known_out, all_out);
      cap += pb[b].nres;
    }
    slot_types = sr_xcalloc(cap + 1, sizeof *slot_types);
    slot_res = sr_xcalloc((size_t)nb, sizeof *slot_res);
    for (int b = 0; b < nb; b++) {
      slot_res[b] = sr_xcalloc(cap + 1, sizeof **slot_res);
      for (uint32_t k = 0; k < cap; k++) slot_res[b][k] = -1;
    }
    for (int b = 0; b < nb; b++)
      for (uint32_t r = 0; r < pb[b].nres; r++) {
        const SrType *t = pb[b].vtype[pb[b].res[r]];
        uint32_t k = 0;
        for (; k < nslot; k++)
          if (slot_types[k] == t && slot_res[b][k] < 0) break;
        if (k == nslot) slot_types[nslot++] = t;
        slot_res[b][k] = (int32_t)r;
      }
    s->nb = nb;
    s->nres = nslot;
    s->Qkb = sr_xcalloc((size_t)nb, sizeof *s->Qkb);
    s->Qsb = sr_xcalloc((size_t)nb, sizeof *s->Qsb);
    s->s_used = sr_xcalloc(q->nin + 1, 1);
    memset(s->s_used, 1, q->nin);
    if (nr) s->Qrb = sr_xcalloc((size_t)nb, sizeof *s->Qrb);
    for (int b = 0; b < nb && rc == 0; b++) {
      if (!(s->Qkb[b] = pe_trace_side(ad, &pb[b], 0, s->unk_out, s->stage_out, NULL, nslot, slot_types, slot_res[b])))
        rc = -1;
      if (rc == 0 && nr) {
        pe_dce_staged(&pb[b], s->r_out, 0);
        pb[b].known_args_only = 1;
        if (!(s->Qrb[b] = pe_trace_side(ad, &pb[b], 1, s->unk_out, s->r_out, NULL, nslot, slot_types, slot_res[b])))
          rc = -1;
        pb[b].known_args_only = 0;
        pe_dce_staged(&pb[b], s->stage_out, 0);
      }
      if (rc == 0 &&
          !(s->Qsb[b] = pe_trace_side(ad, &pb[b], 1, s->unk_out, s->stage_out, NULL, nslot, slot_types, slot_res[b])))
        rc = -1;
    }
    /* a cond with no residual slots and no known outputs still returns
       a tuple per side */
  }
  for (int b = 0; b < nmade; b++) pe_free(&pb[b]);
  for (int b = 0; slot_res && b < nb; b++) free(slot_res[b]);
  free(slot_res);
  free(slot_types);
  free(known_out);
  free(all_out);
  free(pb);
  return rc;
}

static int pe_build_scan(SrAd *ad, const SrEqn *q, const uint8_t *unk_in, SrVal *policy, PeSub *s);

static int pe_build_sub(SrAd *ad, const SrEqn *q, const uint8_t *unk_in, SrVal *policy, PeSub *s) {
  if (q->prim->id == SR_P_cond) return pe_build_cond(ad, q, unk_in, policy, s);
  if (q->prim->id == SR_P_scan) return pe_build_scan(ad, q, unk_in, policy, s);
  const SrJaxpr *B = call_body(q);
  if (!B || B->nconst || sr_nargs(B) != q->nin || B->nout != q->nout) return 1;
  Pe pe;
  int rc = pe_classify(ad, &pe, B, unk_in, policy);
  if (rc == 0) {
    s->unk_out = sr_xcalloc(B->nout + 1, 1);
    s->stage_out = sr_xcalloc(B->nout + 1, 1);
    uint8_t *known_out = sr_xcalloc(B->nout + 1, 1);
    int anyunk = 0;
    for (uint32_t i = 0; i < q->nin; i++) anyunk |= unk_in[i];
    for (uint32_t i = 0; i < B->nout; i++) {
      SrVar *ov = B->outvars[i];
      s->unk_out[i] = ov->kind == SR_VAR && pe.unk[ov->id];
      /* (see pe_build_cond) */
      s->stage_out[i] = s->unk_out[i] || (!anyunk && ov->kind == SR_VAR && pe.inst[ov->id]);
      known_out[i] = !s->unk_out[i];
      /* reading unknowns, the staged call returns tangents only: the known
         outputs it would recompute come from a known call of their own */
      if (anyunk && !no_recomp && !s->unk_out[i] && ov->kind == SR_VAR && pe.inst[ov->id]) {
        if (!s->rk_out) s->rk_out = sr_xcalloc(B->nout + 1, 1);
        s->rk_out[i] = 1;
      }
    }
    pe_dce(&pe, known_out, s->stage_out);
    free(known_out);
    s->s_used = sr_xcalloc(B->nout + q->nin + 1, 1);
    for (uint32_t i = 0; i < pe.na; i++) s->s_used[i] = pe.live[sr_args(B)[i]->id];
    s->nres = pe.nres;
    rc = -1;
    if ((s->Qk = pe_trace_side(ad, &pe, 0, s->unk_out, s->stage_out, s->s_used, 0, NULL, NULL)) &&
        (s->Qs = pe_trace_side(ad, &pe, 1, s->unk_out, s->stage_out, s->s_used, 0, NULL, NULL)))
      rc = 0;
  }
  pe_free(&pe);
  return rc;
}

/* Traces the equations of pe's J with keep set into a new jaxpr whose
   arguments are the vars in_ids (types in_types) and whose outputs are
   outs (J's vars or literals; where NULL, the value of out_ids[i], a
   split call's residual); split calls bound by their known side, or
   with staged their staged side. */
static SrJaxpr *trace_eqns(SrAd *ad, const Pe *pe, uint32_t nin, const uint32_t *in_ids,
                           const SrType *const *in_types, const uint8_t *keep, uint32_t nout, SrVar *const *outs,
                           const uint32_t *out_ids, int staged) {
  SrInterp *I = ad->I;
  SrVal **args = sr_xcalloc(nin + 1, sizeof *args);
  SrVal **val = sr_xcalloc(pe->nv, sizeof *val);
  SrTrace *saved = I->trace;
  SrTrace *st = sr_ad_trace_begin(ad, (int)nin, in_types, args);
  for (uint32_t i = 0; i < nin; i++) {
    sr_unref(val[in_ids[i]]);
    val[in_ids[i]] = sr_ref(args[i]);
  }
  I->trace = st;
  int erc = emit(ad, pe, keep, NULL, val, staged);
  SrVal **ov = sr_xcalloc(nout + 1, sizeof *ov);
  int mark = sr_ad_mark(ad);
  for (uint32_t i = 0; erc == 0 && i < nout; i++)
    if (!(ov[i] = outs[i] ? var_value(ad, outs[i], val) : val[out_ids[i]])) {
      sr_raise(I, "RuntimeError", "remat: a scan body's split reads a value it does not have");
      erc = -1;
    }
  SrJaxpr *Q = NULL;
  if (erc == 0) Q = sr_ad_trace_end(ad, st, (int)nout, ov, NULL);
  else sr_trace_abort(I, st);
  if (Q) Q->dbg = sr_debug_info_copy(Q->prog->arena, pe->J->dbg, 1);
  sr_ad_release(ad, mark);
  I->trace = saved;
  for (uint32_t i = 0; i < pe->nv; i++) sr_unref(val[i]);
  for (uint32_t i = 0; i < nin; i++) sr_unref(args[i]);
  free(val);
  free(args);
  free(ov);
  return Q;
}

static const SrType *stack_type(const SrType *t, int64_t length) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  memmove(&b.dims[1], &b.dims[0], (size_t)t->ndim * sizeof b.dims[0]);
  memset(&b.dims[0], 0, sizeof b.dims[0]);
  b.dims[0].size = length;
  b.ndim++;
  return sr_type_get(&b);
}

/* _scan_partial_eval_custom, as the backward pass can take it: the body
   split with the fixpoint of which carries are unknown; the known scan
   computes the known carries and ys and stacks the residuals (the outputs
   of the equations the policy saves that the staged side reads); the
   staged side is a scan recomputing, from those and the known operands,
   the known carries and values the tangent equations read (what JAX's
   staged scan recomputes, made its own scan so that the tangent scan has
   linear carries only), then the tangent scan. */
static int pe_build_scan(SrAd *ad, const SrEqn *q, const uint8_t *unk_in, SrVal *policy, PeSub *s) {
  SrInterp *I = ad->I;
  const SrJaxpr *B = call_body(q);
  int nc, nk, rev;
  int64_t length;
  if (!B || B->nconst || sr_nargs(B) != q->nin) return 1;
  if (sr_lax_scan_shape(ad, q, &nc, &nk, &length, &rev) < 0) return -1;
  int nx = (int)q->nin - nc - nk, ny = (int)B->nout - nk;
  if (nx < 0 || ny < 0 || length < 0) return 1;
  uint32_t na = q->nin, no = B->nout;
  uint8_t *uk = sr_xcalloc(na + 1, 1);
  memcpy(uk, unk_in, na);
  Pe pe;
  int rc = 0, have = 0;
  /* the fixpoint of the unknown carries */
  for (int it = 0; it <= nk + 1; it++) {
    if (have) pe_free(&pe);
    no_recomp++;
    rc = pe_classify(ad, &pe, B, uk, policy);
    no_recomp--;
    have = 1;
    if (rc) break;
    int grew = 0;
    for (int i = 0; i < nk; i++) {
      SrVar *ov = B->outvars[i];
      if (ov->kind == SR_VAR && pe.unk[ov->id] && !uk[nc + i]) uk[nc + i] = 1, grew = 1;
    }
    if (!grew) break;
  }
  uint32_t nv = 0;
  uint8_t *unkv = NULL, *liveS = NULL, *keepS = NULL, *needR = NULL, *liveR = NULL, *keepR = NULL, *isres = NULL,
          *livek = NULL, *keepK = NULL, *inK_R = NULL;
  SrVar **byid = NULL;
  uint32_t *ids = NULL;
  const SrType **types = NULL;
  SrVar **outs = NULL;
  uint32_t *oids = NULL;
  uint8_t *mixed = NULL; /* per equation: a split call reading unknowns */
  uint32_t *resv = NULL, nres = 0;
  SrJaxpr *R = NULL, *L = NULL;
  uint8_t *argkind = NULL;
  if (rc) goto out;
  nv = pe.nv;
  unkv = pe.unk;
  uint32_t nv0 = B->nvars + 1; /* past it: split calls' residuals */
  mixed = sr_xcalloc(B->neqn + 1, 1);
  for (uint32_t k = 0; k < B->neqn; k++)
    if (pe.role[k] == ROLE_SPLIT) {
      const PeSub *c = &pe.sub[k];
      for (uint32_t i = 0; i < B->eqns[k].nout; i++) mixed[k] |= c->unk_out[i];
      for (uint32_t i = 0; i < B->eqns[k].nin; i++)
        mixed[k] |= B->eqns[k].in[i]->kind == SR_VAR && unkv[B->eqns[k].in[i]->id];
    }
  byid = sr_xcalloc(nv, sizeof *byid);
  for (uint32_t i = 0; i < na; i++) byid[sr_args(B)[i]->id] = sr_args(B)[i];
  for (uint32_t k = 0; k < B->neqn; k++)
    for (uint32_t i = 0; i < B->eqns[k].nout; i++)
      if (B->eqns[k].out[i]->kind == SR_VAR) byid[B->eqns[k].out[i]->id] = B->eqns[k].out[i];
  s->unk_out = sr_xcalloc(no + 1, 1);
  s->stage_out = sr_xcalloc(no + 1, 1);
  for (int i = 0; i < nk; i++) s->unk_out[i] = uk[nc + i];
  for (int i = nk; i < (int)no; i++) s->unk_out[i] = B->outvars[i]->kind == SR_VAR && unkv[B->outvars[i]->id];
  memcpy(s->stage_out, s->unk_out, no);
  /* a scan reading no unknowns: its staged side is the recompute scan
     alone, returning every output (ensure_out_inst: the known values not
     saved recomputed there, the saved ones from the residuals), for DCE
     to prune to what the caller's staged side reads */
  int allknown = 1;
  for (uint32_t i = 0; i < na; i++) allknown &= !uk[i];
  for (uint32_t i = nk; allknown && i < no; i++) {
    SrVar *ov = B->outvars[i];
    if (ov->kind != SR_VAR || (ov->id < nv && pe.def[ov->id] < 0)) allknown = 0; /* a literal or an operand */
  }
  if (allknown) memset(s->stage_out, 1, no);
  /* the tangent equations the unknown outputs need */
  liveS = sr_xcalloc(nv, 1);
  keepS = sr_xcalloc(B->neqn + 1, 1);
  needR = sr_xcalloc(nv, 1);
  for (uint32_t i = 0; i < no; i++)
    if (s->unk_out[i] && B->outvars[i]->kind == SR_VAR) liveS[B->outvars[i]->id] = 1;
  for (uint32_t k = B->neqn; k-- > 0;) {
    const SrEqn *e = &B->eqns[k];
    int sp = pe.role[k] == ROLE_SPLIT && mixed[k];
    if (pe.role[k] != ROLE_STAGED && !sp) continue;
    const PeSub *c = &pe.sub[k];
    int need = !sp && sr_prim_has_effect(e->prim, e->params, e->nparams);
    for (uint32_t i = 0; i < e->nout && !need; i++)
      need = (!sp || st_out(c, i)) && e->out[i]->kind == SR_VAR && liveS[e->out[i]->id];
    if (!need) continue;
    keepS[k] = 1;
    for (uint32_t i = 0; i < e->nin; i++)
      if (e->in[i]->kind == SR_VAR && (!sp || c->s_used[i])) liveS[e->in[i]->id] = 1;
    if (sp)
      for (uint32_t x = 0; x < c->nres; x++) liveS[c->xbase + x] = 1;
  }
  /* the known values they read (and the known values of unknown carry
     outputs): known consts and xs go to the tangent scan as they are,
     the rest the recompute scan gives per iteration */
  argkind = sr_xcalloc(nv, 1); /* 1 const, 2 carry, 3 xs */
  for (uint32_t i = 0; i < na; i++) argkind[sr_args(B)[i]->id] = (uint8_t)(i < (uint32_t)nc ? 1 : i < (uint32_t)(nc + nk) ? 2 : 3);
  for (uint32_t v = 0; v < nv; v++)
    if (liveS[v] && !unkv[v] && (byid[v] || v >= nv0) && argkind[v] != 1 && argkind[v] != 3) needR[v] = 1;
  if (allknown)
    for (uint32_t i = nk; i < no; i++) needR[B->outvars[i]->id] = 1;
  for (int i = 0; i < nk; i++) {
    SrVar *ov = B->outvars[i];
    if (uk[nc + i] && ov->kind == SR_VAR && !unkv[ov->id]) {
      if (argkind[ov->id] == 1 || argkind[ov->id] == 3) liveS[ov->id] = 1;
      else needR[ov->id] = 1;
    }
  }
  /* the recompute scan: its known carries, the fixpoint */
  inK_R = sr_xcalloc((size_t)nk + 1, 1);
  liveR = sr_xcalloc(nv, 1);
  keepR = sr_xcalloc(B->neqn + 1, 1);
  isres = sr_xcalloc(nv, 1);
  if (allknown) memset(inK_R, 1, (size_t)nk);
  for (int it = 0; it <= nk + 1; it++) {
    memcpy(liveR, needR, nv);
    memset(keepR, 0, B->neqn);
    for (int i = 0; i < nk; i++)
      if (inK_R[i] && B->outvars[i]->kind == SR_VAR) liveR[B->outvars[i]->id] = 1;
    for (uint32_t k = B->neqn; k-- > 0;) {
      const SrEqn *e = &B->eqns[k];
      /* a known call split: its staged side recomputes the stage_out ones */
      int sp = pe.role[k] == ROLE_SPLIT && !mixed[k];
      if (pe.role[k] != ROLE_KNOWN_RECOMPUTED && !sp) continue;
      const PeSub *c = &pe.sub[k];
      int need = 0;
      for (uint32_t i = 0; i < e->nout && !need; i++)
        need = (!sp || st_out(c, i)) && e->out[i]->kind == SR_VAR && liveR[e->out[i]->id];
      if (!need) continue;
      keepR[k] = 1;
      for (uint32_t i = 0; i < e->nin; i++)
        if (e->in[i]->kind == SR_VAR && (!sp || c->s_used[i])) liveR[e->in[i]->id] = 1;
      if (sp)
        for (uint32_t x = 0; x < c->nres; x++) liveR[c->xbase + x] = 1;
    }
    int grew = 0;
    for (int i = 0; i < nk; i++) {
      uint32_t id = sr_args(B)[nc + i]->id;
      if (!uk[nc + i] && liveR[id] && !inK_R[i]) inK_R[i] = 1, grew = 1;
    }
    if (!grew) break;
  }
  /* the residuals: outputs of saved equations the recompute scan reads */
  resv = sr_xcalloc(nv, sizeof *resv);
  for (uint32_t v = 0; v < nv; v++) {
    if (!liveR[v] || unkv[v] || argkind[v] || pe.def[v] < 0) continue;
    int k = pe.def[v], inR = pe.role[k] == ROLE_KNOWN_RECOMPUTED;
    if (pe.role[k] == ROLE_SPLIT && !mixed[k] && v < nv0) {
      const SrEqn *e = &B->eqns[k];
      for (uint32_t i = 0; i < e->nout; i++)
        if (e->out[i]->kind == SR_VAR && e->out[i]->id == v) inR = st_out(&pe.sub[k], i);
    }
    if (!inR) isres[v] = 1, resv[nres++] = v;
  }
  /* the known scan's body: the known consts, carries and xs to the known
     carries, the known ys, the residuals */
  livek = sr_xcalloc(nv, 1);
  keepK = sr_xcalloc(B->neqn + 1, 1);
  for (uint32_t i = 0; i < no; i++)
    if (!s->unk_out[i] && B->outvars[i]->kind == SR_VAR) livek[B->outvars[i]->id] = 1;
  for (uint32_t r = 0; r < nres; r++) livek[resv[r]] = 1;
  for (uint32_t k = B->neqn; k-- > 0;) {
    const SrEqn *e = &B->eqns[k];
    int sp = pe.role[k] == ROLE_SPLIT;
    if (pe.role[k] != ROLE_KNOWN_SAVED && pe.role[k] != ROLE_KNOWN_RECOMPUTED && !sp) continue;
    const PeSub *c = &pe.sub[k];
    int need = !sp && sr_prim_has_effect(e->prim, e->params, e->nparams);
    for (uint32_t i = 0; i < e->nout && !need; i++)
      need = (!sp || !c->unk_out[i]) && e->out[i]->kind == SR_VAR && livek[e->out[i]->id];
    for (uint32_t x = 0; sp && x < c->nres && !need; x++) need = livek[c->xbase + x];
    if (!need) continue;
    keepK[k] = 1;
    for (uint32_t i = 0; i < e->nin; i++)
      if (e->in[i]->kind == SR_VAR && (!sp || (c->k_in ? c->k_in[i] : !unkv[e->in[i]->id])))
        livek[e->in[i]->id] = 1;
  }
  ids = sr_xcalloc(na + nv + 1, sizeof *ids);
  types = sr_xcalloc(na + nv + 1, sizeof *types);
  outs = sr_xcalloc(no + nv + 1, sizeof *outs);
  oids = sr_xcalloc(no + nv + 1, sizeof *oids);
  uint32_t n = 0, m = 0;
  s->sc_nc = s->sc_nk = s->sc_nx = 0;
  for (uint32_t i = 0; i < na; i++) {
    if (uk[i]) continue;
    SrVar *v = sr_args(B)[i];
    ids[n] = v->id, types[n++] = v->type;
    if (i < (uint32_t)nc) s->sc_nc++;
    else if (i < (uint32_t)(nc + nk)) s->sc_nk++;
    else s->sc_nx++;
  }
  for (int i = 0; i < nk; i++)
    if (!uk[nc + i]) outs[m++] = B->outvars[i];
  for (int i = nk; i < (int)no; i++)
    if (!s->unk_out[i]) outs[m++] = B->outvars[i];
  for (uint32_t r = 0; r < nres; r++) oids[m] = resv[r], outs[m++] = byid[resv[r]];
  rc = -1;
  if (!(s->Qk = trace_eqns(ad, &pe, n, ids, types, keepK, m, outs, oids, 0))) goto out;
  s->nres = nres;
  /* the recompute scan's body: known consts it reads, its carries, the
     known xs it reads, the residuals (a slice each); to its carries'
     next values and the values the tangent scan reads */
  uint32_t rc_c = 0, rc_k = 0, rc_x = 0, ny_r = 0;
  n = m = 0;
  for (uint32_t i = 0; i < (uint32_t)nc; i++) {
    SrVar *v = sr_args(B)[i];
    if (!uk[i] && liveR[v->id]) ids[n] = v->id, types[n++] = v->type, rc_c++;
  }
  for (int i = 0; i < nk; i++)
    if (inK_R[i]) ids[n] = sr_args(B)[nc + i]->id, types[n++] = sr_args(B)[nc + i]->type, rc_k++;
  for (uint32_t i = (uint32_t)(nc + nk); i < na; i++) {
    SrVar *v = sr_args(B)[i];
    if (!uk[i] && liveR[v->id]) ids[n] = v->id, types[n++] = v->type, rc_x++;
  }
  for (uint32_t r = 0; r < nres; r++) ids[n] = resv[r], types[n++] = pe.vtype[resv[r]], rc_x++;
  for (int i = 0; i < nk; i++)
    if (inK_R[i]) outs[m++] = B->outvars[i];
  uint32_t *rvals = sr_xcalloc(nv + 1, sizeof *rvals);
  for (uint32_t v = 0; v < nv; v++)
    if (needR[v]) rvals[ny_r] = v, oids[m] = v, outs[m++] = byid[v], ny_r++;
  int want_R = rc_k || ny_r;
  if (want_R && !(R = trace_eqns(ad, &pe, n, ids, types, keepR, m, outs, oids, 1))) {
    free(rvals);
    goto out;
  }
  /* the tangent scan's body: unknown consts then the known consts it
     reads; the unknown carries; the unknown xs, the known xs it reads,
     the recomputed values (a slice each) */
  uint32_t l_c = 0, l_k = 0, l_x = 0;
  n = m = 0;
  for (uint32_t i = 0; i < (uint32_t)nc; i++)
    if (uk[i]) ids[n] = sr_args(B)[i]->id, types[n++] = sr_args(B)[i]->type, l_c++;
  for (uint32_t i = 0; i < (uint32_t)nc; i++)
    if (!uk[i] && liveS[sr_args(B)[i]->id]) ids[n] = sr_args(B)[i]->id, types[n++] = sr_args(B)[i]->type, l_c++;
  for (int i = 0; i < nk; i++)
    if (uk[nc + i]) ids[n] = sr_args(B)[nc + i]->id, types[n++] = sr_args(B)[nc + i]->type, l_k++;
  for (uint32_t i = (uint32_t)(nc + nk); i < na; i++)
    if (uk[i]) ids[n] = sr_args(B)[i]->id, types[n++] = sr_args(B)[i]->type, l_x++;
  for (uint32_t i = (uint32_t)(nc + nk); i < na; i++)
    if (!uk[i] && liveS[sr_args(B)[i]->id]) ids[n] = sr_args(B)[i]->id, types[n++] = sr_args(B)[i]->type, l_x++;
  for (uint32_t r = 0; r < ny_r; r++) ids[n] = rvals[r], types[n++] = pe.vtype[rvals[r]], l_x++;
  for (uint32_t i = 0; i < no; i++)
    if (s->unk_out[i]) outs[m++] = B->outvars[i];
  if (!(L = trace_eqns(ad, &pe, n, ids, types, keepS, m, outs, oids, 1))) {
    free(rvals);
    goto out;
  }
  /* the staged side: on the stacked residuals, then the operands used */
  s->s_used = sr_xcalloc(na + 1, 1);
  for (uint32_t i = 0; i < na; i++) {
    SrVar *v = sr_args(B)[i];
    s->s_used[i] = uk[i] || liveS[v->id] || (i >= (uint32_t)nc && i < (uint32_t)(nc + nk) ? inK_R[i - nc] : liveR[v->id]);
  }
  {
    uint32_t nin_s = 0;
    const SrType **st = sr_xcalloc(nres + na + 1, sizeof *st);
    for (uint32_t r = 0; r < nres; r++) st[nin_s++] = stack_type(pe.vtype[resv[r]], length);
    int *slot = sr_xcalloc(na + 1, sizeof *slot);
    for (uint32_t i = 0; i < na; i++) {
      slot[i] = -1;
      if (s->s_used[i]) slot[i] = (int)nin_s, st[nin_s++] = q->in[i]->type;
    }
    SrVal **sa = sr_xcalloc(nin_s + 1, sizeof *sa);
    SrTrace *saved = I->trace;
    SrTrace *tr = sr_ad_trace_begin(ad, (int)nin_s, st, sa);
    I->trace = tr;
    SrVal **in = sr_xcalloc(na + nres + nv + 1, sizeof *in);
    SrVal *rr = NULL, *lr = NULL;
    int ok = 1;
    if (want_R) {
      uint32_t k = 0;
      for (uint32_t i = 0; i < (uint32_t)nc; i++)
        if (!uk[i] && liveR[sr_args(B)[i]->id]) in[k++] = sa[slot[i]];
      for (int i = 0; i < nk; i++)
        if (inK_R[i]) in[k++] = sa[slot[nc + i]];
      for (uint32_t i = (uint32_t)(nc + nk); i < na; i++)
        if (!uk[i] && liveR[sr_args(B)[i]->id]) in[k++] = sa[slot[i]];
      for (uint32_t r = 0; r < nres; r++) in[k++] = sa[r];
      SrPList ps = {0};
      sr_lax_scan_params(&ps, q, R, (int)rc_c, (int)rc_k, (int)rc_x, rev);
      rr = sr_bind_prim(I, q->prim, (int)k, in, ps.n, ps.p, NULL, R->nout);
      sr_plist_free(&ps);
      ok = rr != NULL;
    }
    if (ok && allknown) {
      /* the outputs from the recompute scan: its carries, then the ys
         (its stacked values, in var order) */
      lr = sr_seq(NULL, SR_V_TUPLE, no);
      for (int i = 0; want_R && i < nk; i++) sr_seq_push(NULL, lr, sr_ref(rr->seq.items[i]));
      for (uint32_t i = nk; want_R && i < no; i++)
        for (uint32_t r = 0; r < ny_r; r++)
          if (rvals[r] == B->outvars[i]->id) {
            sr_seq_push(NULL, lr, sr_ref(rr->seq.items[rc_k + r]));
            break;
          }
      if (lr->seq.n != no) {
        sr_raise(I, "RuntimeError", "remat: a known scan's recompute lacks an output");
        sr_unref(lr);
        lr = NULL;
        ok = 0;
      }
    } else if (ok) {
      uint32_t k = 0;
      for (uint32_t i = 0; i < (uint32_t)nc; i++)
        if (uk[i]) in[k++] = sa[slot[i]];
      for (uint32_t i = 0; i < (uint32_t)nc; i++)
        if (!uk[i] && liveS[sr_args(B)[i]->id]) in[k++] = sa[slot[i]];
      for (int i = 0; i < nk; i++)
        if (uk[nc + i]) in[k++] = sa[slot[nc + i]];
      for (uint32_t i = (uint32_t)(nc + nk); i < na; i++)
        if (uk[i]) in[k++] = sa[slot[i]];
      for (uint32_t i = (uint32_t)(nc + nk); i < na; i++)
        if (!uk[i] && liveS[sr_args(B)[i]->id]) in[k++] = sa[slot[i]];
      for (uint32_t r = 0; r < ny_r; r++) in[k++] = rr->seq.items[rc_k + r];
      SrPList ps = {0};
      sr_lax_scan_params(&ps, q, L, (int)l_c, (int)l_k, (int)l_x, rev);
      lr = sr_bind_prim(I, q->prim, (int)k, in, ps.n, ps.p, NULL, L->nout);
      sr_plist_free(&ps);
      ok = lr != NULL;
    }
    if (ok && lr->kind == SR_V_TUPLE) s->Qs = sr_ad_trace_end(ad, tr, lr->seq.n, lr->seq.items, NULL);
    else sr_trace_abort(I, tr);
    I->trace = saved;
    sr_unref(rr);
    sr_unref(lr);
    for (uint32_t i = 0; i < nin_s; i++) sr_unref(sa[i]);
    free(sa);
    free(in);
    free(st);
    free(slot);
  }
  free(rvals);
  if (!s->Qs) goto out;
  s->scan = 1;
  s->sc_length = length;
  s->k_in = sr_xcalloc(na + 1, 1);
  for (uint32_t i = 0; i < na; i++) s->k_in[i] = !uk[i];
  rc = 0;
out:
  if (R) sr_program_unref(R->prog);
  if (L) sr_program_unref(L->prog);
  if (have) pe_free(&pe);
  free(uk);
  free(byid);
  free(liveS);
  free(keepS);
  free(needR);
  free(liveR);
  free(keepR);
  free(isres);
  free(livek);
  free(keepK);
  free(inK_R);
  free(ids);
  free(types);
  free(outs);
  free(resv);
  free(argkind);
  free(oids);
  free(mixed);
  return rc;
}

int sr_lax_remat_lin(SrAd *ad, const SrEqn *e, const SrJaxpr *J, SrVal **x, SrVal **t, SrVal **y, SrVal **tpk) {
  SrInterp *I = ad->I;
  if (ad->staged || J->nconst) return 1;
  SrVal *policy = sr_eqn_param(e, sr_intern_cstr("policy"));
  uint32_t n = e->nin, no = e->nout, na = sr_nargs(J);
  /* the inputs: the primals known, the tangents unknown */
  uint8_t *unk_args = sr_xcalloc(na + 1, 1), *unk_out = sr_xcalloc(J->nout + 1, 1), *rp = NULL;
  for (uint32_t i = n; i < na; i++) unk_args[i] = 1;
  for (uint32_t i = no; i < J->nout; i++) unk_out[i] = 1;
  SrVal **val = NULL, **sval = NULL, **sargs = NULL, **rin = NULL;
  const SrType **stypes = NULL;
  uint32_t nin_s = 0;
  Pe pe;
  int rc = pe_classify(ad, &pe, J, unk_args, policy);
  if (rc) goto done;
  rc = 1;
  /* the primal outputs must be known, the tangents unknown */
  for (uint32_t i = 0; i < J->nout; i++) {
    SrVar *v = J->outvars[i];
    int u = v->kind == SR_VAR && pe.unk[v->id];
    if (u != (i >= no)) goto done;
  }
  uint8_t *known_out = sr_xcalloc(J->nout + 1, 1);
  for (uint32_t i = 0; i < no; i++) known_out[i] = 1;
  pe_dce(&pe, known_out, unk_out);
  free(known_out);
  uint32_t nv = pe.nv;
  /* _insert_reduce_precision: floating residuals a known equation reads */
  rp = sr_xcalloc(nv, 1);
  for (uint32_t r = 0; r < pe.nres; r++) {
    uint32_t v = pe.res[r];
    int used = 0;
    for (uint32_t k = 0; k < J->neqn && !used; k++) {
      if (!pe.keepk[k]) continue;
      for (uint32_t i = 0; i < J->eqns[k].nin && !used; i++)
        used = J->eqns[k].in[i]->kind == SR_VAR && J->eqns[k].in[i]->id == v;
    }
    if (!used || pe.def[v] < 0 || v >= J->nvars + 1) continue;
    const SrEqn *p = &J->eqns[pe.def[v]];
    if (pe.role[pe.def[v]] == ROLE_SPLIT) continue;
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
  int erc = emit(ad, &pe, pe.keepk, rp, val, 0);
  I->trace = saved;
  if (erc < 0) goto done;
  for (uint32_t i = 0; i < no; i++) {
    y[i] = J->outvars[i]->kind == SR_LIT ? sr_ad_literal(ad, J->outvars[i]) : sr_ad_keep(ad, sr_ref(val[J->outvars[i]->id]));
    if (!y[i]) goto done;
  }
  /* the staged part: its body traced on the residuals used, then the
     inputs used */
  stypes = sr_xcalloc(pe.nres + na + 1, sizeof *stypes);
  rin = sr_xcalloc(pe.nres + na + 1, sizeof *rin);
  for (uint32_t r = 0; r < pe.nres; r++) {
    stypes[nin_s] = pe.vtype[pe.res[r]];
    rin[nin_s++] = val[pe.res[r]];
  }
  for (uint32_t i = 0, q = 0; i < na; i++) {
    SrVar *v = sr_args(J)[i];
    SrVal *xv = i < n ? x[i] : NULL;
    if (i >= n) {
      while (q < n && !t[q]) q++;
      xv = t[q++];
    }
    if (!pe.live[v->id]) continue;
    stypes[nin_s] = v->type;
    rin[nin_s++] = xv;
  }
  uint32_t nt = J->nout - no;
  sargs = sr_xcalloc(nin_s + 1, sizeof *sargs);
  SrTrace *st = sr_ad_trace_begin(ad, (int)nin_s, stypes, sargs);
  sval = sr_xcalloc(nv, sizeof *sval);
  {
    uint32_t k = 0;
    for (uint32_t r = 0; r < pe.nres; r++) sval[pe.res[r]] = sr_ref(sargs[k++]);
    for (uint32_t i = 0; i < na; i++)
      if (pe.live[sr_args(J)[i]->id]) {
        sr_unref(sval[sr_args(J)[i]->id]);
        sval[sr_args(J)[i]->id] = sr_ref(sargs[k++]);
      }
  }
  I->trace = st;
  erc = emit(ad, &pe, pe.keeps, NULL, sval, 1);
  SrVal **souts = sr_xcalloc(nt + 1, sizeof *souts);
  int mark = sr_ad_mark(ad);
  for (uint32_t i = 0; erc == 0 && i < nt; i++) {
    souts[i] = var_value(ad, J->outvars[no + i], sval);
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
    for (uint32_t i = 0; i < pe.nv; i++) sr_unref(val[i]);
  if (sval)
    for (uint32_t i = 0; i < pe.nv; i++) sr_unref(sval[i]);
  if (sargs)
    for (uint32_t i = 0; i < nin_s; i++) sr_unref(sargs[i]);
  free(val);
  free(sval);
  free(sargs);
  free(stypes);
  free(rin);
  free(rp);
  free(unk_args);
  free(unk_out);
  pe_free(&pe);
  return rc;
}
