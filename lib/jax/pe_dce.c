/* pe_dce.c: partial_eval.py's dce_jaxpr as
 * jax._src.interpreters.partial_eval.dce_jaxpr(jaxpr, used_outputs,
 * instantiate=False) -> (jaxpr, used_inputs), with the DCE rules of scan
 * (loops.py's _scan_dce_rule: the fixed point of the used carries) and
 * cond (conditionals.py's _cond_dce_rule: the inputs any branch uses);
 * another equation is kept whole when one of its outputs is used or it
 * has an effect.  And core.subjaxprs.
 *
 * The pruned jaxpr is a new one, with vars of its own, in the program of
 * the one it prunes (whose params and literals it shares); that one is
 * left as it was. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"
#include "ir/jaxpr.h"
#include "jax/introspect.h"
#include "jax/jax.h"
#include "prims/prim.h"
#include "py/objects.h"
#include "util/intern.h"
#include "util/mem.h"

static SrJaxpr *dce(SrProgram *p, const SrJaxpr *j, const uint8_t *used_out, const uint8_t *inst, uint8_t *used_in);

/* an equation's fate: kept (with the inputs and outputs it keeps, and
   its params when a rule changed them) or not */
typedef struct {
  int keep, ruled;
  uint8_t *in, *out;
  SrPList ps;
} Plan;

static int param_int(const SrEqn *e, const char *k, int *out) {
  const SrVal *v = sr_eqn_param(e, sr_intern_cstr(k));
  if (!v || v->kind != SR_V_INT) return -1;
  *out = (int)v->i;
  return 0;
}

/* _scan_dce_rule */
static int rule_scan(SrProgram *p, const SrEqn *e, Plan *pl) {
  int nc, nk;
  const SrVal *jv = sr_eqn_param(e, sr_intern_cstr("jaxpr"));
  if (param_int(e, "num_consts", &nc) < 0 || param_int(e, "num_carry", &nk) < 0 || !jv || jv->kind != SR_V_JAXPR)
    return -1;
  const SrJaxpr *body = jv->jx.jaxpr;
  int n = (int)e->nin, no = (int)e->nout;
  if ((int)sr_nargs(body) != n || (int)body->nout != no || nc + nk > n || nk > no) return -1;
  uint8_t *uo = sr_xcalloc((size_t)no + 1, 1), *inst = sr_xcalloc((size_t)n + 1, 1);
  uint8_t *ui = sr_xcalloc((size_t)n + 1, 1);
  memcpy(uo, pl->out, (size_t)no);
  SrJaxpr *nb = NULL;
  for (int it = 0; it <= nk; it++) {
    memset(inst, 0, (size_t)n);
    memcpy(inst + nc, uo, (size_t)nk);
    nb = dce(p, body, uo, inst, ui);
    int same = 1;
    for (int i = 0; i < nk; i++)
      if (ui[nc + i] != uo[i]) same = 0, uo[i] |= ui[nc + i];
    if (same) break;
  }
  memcpy(pl->in, ui, (size_t)n);
  memcpy(pl->out, uo, (size_t)no);
  int kc = 0, kk = 0;
  for (int i = 0; i < nc; i++) kc += ui[i];
  for (int i = 0; i < nk; i++) kk += uo[i];
  for (uint32_t q = 0; q < e->nparams; q++) {
    const char *k = e->params[q].key;
    SrVal *v = e->params[q].val;
    if (strcmp(k, "jaxpr") == 0) v = sr_jaxpr_val(p->arena, nb);
    else if (strcmp(k, "num_consts") == 0) v = sr_int(p->arena, kc);
    else if (strcmp(k, "num_carry") == 0) v = sr_int(p->arena, kk);
    else if (strcmp(k, "linear") == 0 && v->kind == SR_V_TUPLE && v->seq.n == n) {
      SrVal *l = sr_seq(p->arena, SR_V_TUPLE, n);
      for (int i = 0; i < n; i++)
        if (ui[i]) sr_seq_push(p->arena, l, v->seq.items[i]);
      v = l;
    }
    sr_plist_add(&pl->ps, k, v);
  }
  free(uo);
  free(inst);
  free(ui);
  return 0;
}

/* _cond_dce_rule: the index, and the operands any branch uses */
static int rule_cond(SrProgram *p, const SrEqn *e, Plan *pl) {
  const SrVal *bv = sr_eqn_param(e, sr_intern_cstr("branches"));
  if (!bv || bv->kind != SR_V_TUPLE || bv->seq.n == 0 || e->nin < 1) return -1;
  int nb = bv->seq.n, n = (int)e->nin - 1;
  for (int b = 0; b < nb; b++) {
    const SrVal *x = bv->seq.items[b];
    if (x->kind != SR_V_JAXPR || (int)sr_nargs(x->jx.jaxpr) != n || x->jx.jaxpr->nout != e->nout) return -1;
  }
  uint8_t *any = sr_xcalloc((size_t)n + 1, 1), *ui = sr_xcalloc((size_t)n + 1, 1);
  for (int b = 0; b < nb; b++) {
    dce(p, bv->seq.items[b]->jx.jaxpr, pl->out, NULL, ui);
    for (int i = 0; i < n; i++) any[i] |= ui[i];
  }
  SrVal *br = sr_seq(p->arena, SR_V_TUPLE, nb);
  for (int b = 0; b < nb; b++)
    sr_seq_push(p->arena, br, sr_jaxpr_val(p->arena, dce(p, bv->seq.items[b]->jx.jaxpr, pl->out, any, ui)));
  pl->in[0] = 1;
  memcpy(pl->in + 1, any, (size_t)n);
  for (uint32_t q = 0; q < e->nparams; q++)
    sr_plist_add(&pl->ps, e->params[q].key, strcmp(e->params[q].key, "branches") == 0 ? br : e->params[q].val);
  free(any);
  free(ui);
  return 0;
}

/* j pruned to the outputs with used_out set (NULL: all), keeping the
   arguments used or with inst set; used_in[i] says which it keeps. */
static SrJaxpr *dce(SrProgram *p, const SrJaxpr *j, const uint8_t *used_out, const uint8_t *inst, uint8_t *used_in) {
  uint8_t *live = sr_xcalloc((size_t)j->nvars + 1, 1);
  Plan *pl = sr_xcalloc((size_t)j->neqn + 1, sizeof *pl);
  for (uint32_t i = 0; i < j->nout; i++)
    if ((!used_out || used_out[i]) && j->outvars[i]->kind == SR_VAR) live[j->outvars[i]->id] = 1;
  for (uint32_t k = j->neqn; k-- > 0;) {
    const SrEqn *e = &j->eqns[k];
    Plan *q = &pl[k];
    q->in = sr_xcalloc((size_t)e->nin + 1, 1);
    q->out = sr_xcalloc((size_t)e->nout + 1, 1);
    int any = 0;
    for (uint32_t i = 0; i < e->nout; i++) any |= q->out[i] = e->out[i]->kind == SR_VAR && live[e->out[i]->id];
    if (!any && !sr_prim_has_effect(e->prim, e->params, e->nparams)) continue;
    q->keep = 1;
    if (e->prim == &sr_prims[SR_P_scan]) q->ruled = rule_scan(p, e, q) == 0;
    else if (e->prim == &sr_prims[SR_P_cond]) q->ruled = rule_cond(p, e, q) == 0;
    if (!q->ruled) {
      sr_plist_free(&q->ps);
      memset(q->in, 1, e->nin);
    }
    for (uint32_t i = 0; i < e->nin; i++)
      if (q->in[i] && e->in[i]->kind == SR_VAR) live[e->in[i]->id] = 1;
  }
  SrJaxprBuilder b;
  sr_jb_init(&b, p);
  SrVar **map = sr_xcalloc((size_t)j->nvars + 1, sizeof *map);
  for (uint32_t i = 0; i < j->nconst; i++) {
    SrVar *v = j->invars[i];
    map[v->id] = sr_jb_var(&b, v->type);
    sr_jb_constvar(&b, map[v->id], j->consts ? j->consts[i] : NULL);
  }
  for (uint32_t i = 0; i < sr_nargs(j); i++) {
    SrVar *v = sr_args(j)[i];
    int u = live[v->id] || (inst && inst[i]);
    if (used_in) used_in[i] = (uint8_t)u;
    if (!u) continue;
    map[v->id] = sr_jb_var(&b, v->type);
    sr_jb_invar(&b, map[v->id]);
  }
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    Plan *q = &pl[k];
    if (q->keep) {
      SrVar **in = sr_xcalloc((size_t)e->nin + 1, sizeof *in), **out = sr_xcalloc((size_t)e->nout + 1, sizeof *out);
      uint32_t ni = 0, nout = 0;
      for (uint32_t i = 0; i < e->nin; i++)
        if (q->in[i]) in[ni++] = e->in[i]->kind == SR_VAR ? map[e->in[i]->id] : e->in[i];
      for (uint32_t i = 0; i < e->nout; i++) {
        SrVar *v = e->out[i];
        if (q->ruled && !q->out[i]) continue;
        out[nout] = v->kind == SR_VAR ? sr_jb_var(&b, v->type) : sr_jb_drop(&b, v->type);
        if (v->kind == SR_VAR) map[v->id] = out[nout];
        nout++;
      }
      SrEqn *ne = q->ruled ? sr_jb_eqn(&b, e->prim, ni, in, nout, out, (uint32_t)q->ps.n, q->ps.p)
                           : sr_jb_eqn(&b, e->prim, ni, in, nout, out, e->nparams, e->params);
      ne->off = e->off;
      ne->ns = e->ns;
      ne->mesh = e->mesh;
      ne->loc = e->loc;
      free(in);
      free(out);
    }
    sr_plist_free(&q->ps);
    free(q->in);
    free(q->out);
  }
  for (uint32_t i = 0; i < j->nout; i++)
    if (!used_out || used_out[i]) {
      SrVar *v = j->outvars[i];
      sr_jb_outvar(&b, v->kind == SR_VAR ? map[v->id] : v);
    }
  SrJaxpr *r = sr_jb_finish(&b);
  r->name = j->name;
  r->effects = j->effects;
  free(map);
  free(pl);
  free(live);
  return r;
}

/* a list of bools, one per output: each an element's truth, or flag for
   all of them */
static uint8_t *flags(SrInterp *I, SrVal *v, uint32_t n, const char *what) {
  uint8_t *f = sr_xcalloc((size_t)n + 1, 1);
  if (v->kind == SR_V_BOOL || v->kind == SR_V_INT) {
    memset(f, sr_val_truthy(v) ? 1 : 0, n);
    return f;
  }
  SrVal *l = sr_iterate(I, v);
  if (!l) {
    free(f);
    return NULL;
  }
  if ((uint32_t)l->seq.n != n) {
    sr_raise(I, "ValueError", "dce_jaxpr: %s has %d entries, the jaxpr %u", what, l->seq.n, n);
    sr_unref(l);
    free(f);
    return NULL;
  }
  for (uint32_t i = 0; i < n; i++) f[i] = (uint8_t)sr_val_truthy(l->seq.items[i]);
  sr_unref(l);
  return f;
}

static SrVal *pe_dce_jaxpr(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "dce_jaxpr", "jaxpr, used_outputs, instantiate=", p) < 0) return NULL;
  if (p[0]->kind != SR_V_JAXPR) return sr_raise(I, "TypeError", "dce_jaxpr takes a Jaxpr");
  const SrJaxpr *j = p[0]->jx.jaxpr;
  uint32_t n = sr_nargs(j);
  uint8_t *uo = flags(I, p[1], j->nout, "used_outputs");
  if (!uo) return NULL;
  uint8_t *inst = p[2] ? flags(I, p[2], n, "instantiate") : sr_xcalloc((size_t)n + 1, 1);
  if (!inst) {
    free(uo);
    return NULL;
  }
  uint8_t *ui = sr_xcalloc((size_t)n + 1, 1);
  SrJaxpr *r = dce(j->prog, j, uo, inst, ui);
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)n);
  for (uint32_t i = 0; i < n; i++) sr_seq_push(NULL, l, sr_bool(ui[i]));
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, t, sr_jaxpr_val(NULL, r));
  sr_seq_push(NULL, t, l);
  free(uo);
  free(inst);
  free(ui);
  return t;
}

/* core.subjaxprs: the jaxprs in the params of jaxpr's equations (a
   param's, or those of a tuple), not the ones nested in those */
static SrVal *core_subjaxprs(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "subjaxprs", "jaxpr", p) < 0) return NULL;
  if (p[0]->kind != SR_V_JAXPR) return sr_raise(I, "TypeError", "subjaxprs takes a Jaxpr");
  const SrJaxpr *j = p[0]->jx.jaxpr;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  for (uint32_t k = 0; k < j->neqn; k++)
    for (uint32_t q = 0; q < j->eqns[k].nparams; q++) {
      SrVal *v = j->eqns[k].params[q].val;
      if (v->kind == SR_V_JAXPR) sr_seq_push(NULL, l, sr_jaxpr_val(NULL, v->jx.jaxpr));
      else if (v->kind == SR_V_TUPLE)
        for (int i = 0; i < v->seq.n; i++)
          if (v->seq.items[i]->kind == SR_V_JAXPR) sr_seq_push(NULL, l, sr_jaxpr_val(NULL, v->seq.items[i]->jx.jaxpr));
    }
  return l;
}

void sr_pe_dce_init(void) {
  sr_def("jax._src.interpreters.partial_eval.dce_jaxpr", pe_dce_jaxpr,
         "dce_jaxpr(jaxpr, used_outputs, instantiate=False): (the jaxpr pruned to the used outputs, the inputs it "
         "uses), scans and conds pruned inside");
  sr_def("jax._src.core.subjaxprs", core_subjaxprs,
         "subjaxprs(jaxpr): the jaxprs in the params of jaxpr's equations");
}
