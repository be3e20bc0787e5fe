/* ad.c: the autodiff engine -- the JVP walk (which is also the
 * linearization walk), the backward pass, and the jaxpr-level transforms
 * built from them (ad.py: jvp, linearize, linearize_jaxpr, backward_pass3).
 */
#include "ad/ad_rules.h"

#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "check/rule.h"
#include "util/intern.h"

/* ---- types ---- */

const SrType *sr_ad_tangent_type(const SrType *t) {
  SrDtype d = sr_dtype_tangent(t->dtype);
  return d == t->dtype ? t : sr_type_with_dtype(t, d);
}

const SrType *sr_ad_ct_type(const SrType *t) {
  if (!t->unreduced && !t->reduced && sr_dtype_tangent(t->dtype) == t->dtype) return t;
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.dtype = sr_dtype_tangent(t->dtype);
  SrAxes u = t->unreduced, r = t->reduced;
  b.unreduced = r;
  b.reduced = u;
  b.ukind = r ? SR_UK_SUM : SR_UK_NONE;
  return sr_type_get(&b);
}

int sr_ad_differentiable(const SrType *t) { return t && sr_dtype_is_inexact(t->dtype); }

/* ---- rule registration ---- */

void sr_ad_set_jvp(int prim_id, SrJvpRule r) { sr_prims[prim_id].jvp = r; }
void sr_ad_set_transpose(int prim_id, SrTransposeRule r) { sr_prims[prim_id].transpose = r; }

int sr_ad_no_jvp(SrAd *ad, const SrPrim *p) {
  sr_raise(ad->I, "NotImplementedError", "Differentiation rule for '%s' not implemented", p->name);
  return -1;
}

int sr_ad_no_transpose(SrAd *ad, const SrPrim *p) {
  sr_raise(ad->I, "NotImplementedError",
           "Transpose rule (for reverse-mode differentiation) for '%s' not implemented", p->name);
  return -1;
}

/* ---- the context and its pool ---- */

void sr_ad_begin(SrAd *ad, SrInterp *I, SrAdMode mode) {
  memset(ad, 0, sizeof *ad);
  ad->I = I;
  ad->mode = mode;
  I->ad_depth++;
}

/* the debug info of the body of the equation whose rule is running (its
   one jaxpr param's), for the bodies the rule makes (sr_ad_trace_end) */
static const SrDebugInfo *rule_dbg;

static const SrDebugInfo *eqn_body_dbg(const SrEqn *e) {
  const SrDebugInfo *d = NULL;
  int n = 0;
  for (uint32_t p = 0; p < e->nparams; p++)
    if (e->params[p].val && e->params[p].val->kind == SR_V_JAXPR) d = e->params[p].val->jx.jaxpr->dbg, n++;
  return n == 1 ? d : NULL;
}

static int rule_call_jvp(SrJvpRule rule, SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  const SrDebugInfo *saved = rule_dbg;
  rule_dbg = eqn_body_dbg(e);
  int rc = rule(ad, e, x, t, y, ty);
  rule_dbg = saved;
  return rc;
}

static SrJaxpr *ad_trace_end(SrAd *ad, SrTrace *t, int n, SrVal **outs, SrVal **captured);

static void memo_free(struct SrAdMemo *m);

void sr_ad_release(SrAd *ad, int mark) {
  while (ad->npool > mark) sr_unref(ad->pool[--ad->npool]);
}

void sr_ad_end(SrAd *ad) {
  sr_ad_release(ad, 0);
  free(ad->pool);
  ad->pool = NULL;
  ad->cappool = 0;
  SrInterp *I = ad->I;
  if (I && --I->ad_depth == 0 && I->ad_memo) {
    memo_free(I->ad_memo);
    I->ad_memo = NULL;
  }
}

/* ---- the memo of call bodies' transforms ---- */

typedef struct MemoEntry {
  int tag;
  const SrJaxpr *body;
  const SrMesh *mesh;
  uint8_t *key;
  size_t nkey;
  uint64_t hash;
  SrAdMemoVal val;
  struct MemoEntry *next;
} MemoEntry;

struct SrAdMemo {
  MemoEntry **buckets;
  size_t nbuckets, n;
};

static uint64_t memo_hash(int tag, const SrJaxpr *body, const SrMesh *mesh, const uint8_t *key, size_t nkey) {
  uint64_t h = 1469598103934665603ull;
  uint64_t w[3] = {(uint64_t)tag, (uint64_t)(uintptr_t)body, (uint64_t)(uintptr_t)mesh};
  for (int i = 0; i < 3; i++) h = (h ^ w[i]) * 1099511628211ull;
  for (size_t i = 0; i < nkey; i++) h = (h ^ key[i]) * 1099511628211ull;
  return h;
}

static void memo_free(struct SrAdMemo *m) {
  for (size_t b = 0; b < m->nbuckets; b++)
    for (MemoEntry *e = m->buckets[b], *next; e; e = next) {
      next = e->next;
      for (int i = 0; i < 2; i++)
        if (e->val.j[i]) sr_program_unref(e->val.j[i]->prog);
      sr_program_unref(e->body->prog);
      free((void *)e->val.data);
      free(e->key);
      free(e);
    }
  free(m->buckets);
  free(m);
}

const SrAdMemoVal *sr_ad_memo_get(SrAd *ad, int tag, const SrJaxpr *body, const uint8_t *key, size_t nkey) {
  struct SrAdMemo *m = ad->I->ad_memo;
  if (!m) return NULL;
  const SrMesh *mesh = sr_ad_ctx_mesh(ad);
  uint64_t h = memo_hash(tag, body, mesh, key, nkey);
  for (MemoEntry *e = m->buckets[h % m->nbuckets]; e; e = e->next)
    if (e->hash == h && e->tag == tag && e->body == body && e->mesh == mesh && e->nkey == nkey &&
        (nkey == 0 || memcmp(e->key, key, nkey) == 0))
      return &e->val;
  return NULL;
}

void sr_ad_memo_put(SrAd *ad, int tag, const SrJaxpr *body, const uint8_t *key, size_t nkey, SrJaxpr *j0,
                 SrJaxpr *j1, const int *data, int ndata) {
  SrInterp *I = ad->I;
  struct SrAdMemo *m = I->ad_memo;
  if (!m) {
    m = I->ad_memo = sr_xcalloc(1, sizeof *m);
    m->nbuckets = 64;
    m->buckets = sr_xcalloc(m->nbuckets, sizeof *m->buckets);
  }
  if (m->n >= m->nbuckets) {
    /* grow: rehash into twice the buckets */
    size_t nb = 2 * m->nbuckets;
    MemoEntry **nbk = sr_xcalloc(nb, sizeof *nbk);
    for (size_t b = 0; b < m->nbuckets; b++)
      for (MemoEntry *e = m->buckets[b], *next; e; e = next) {
        next = e->next;
        e->next = nbk[e->hash % nb];
        nbk[e->hash % nb] = e;
      }
    free(m->buckets);
    m->buckets = nbk;
    m->nbuckets = nb;
  }
  MemoEntry *e = sr_xcalloc(1, sizeof *e);
  e->tag = tag;
  e->body = body;
  sr_program_ref(body->prog);
  e->mesh = sr_ad_ctx_mesh(ad);
  e->key = sr_xmalloc(nkey + 1);
  if (nkey) memcpy(e->key, key, nkey);
  e->nkey = nkey;
  e->hash = memo_hash(tag, body, e->mesh, key, nkey);
  e->val.j[0] = j0;
  e->val.j[1] = j1;
  for (int i = 0; i < 2; i++)
    if (e->val.j[i]) sr_program_ref(e->val.j[i]->prog);
  int *d = sr_xmalloc(((size_t)ndata + 1) * sizeof *d);
  if (ndata) memcpy(d, data, (size_t)ndata * sizeof *d);
  e->val.data = d;
  e->val.ndata = ndata;
  e->next = m->buckets[e->hash % m->nbuckets];
  m->buckets[e->hash % m->nbuckets] = e;
  m->n++;
}

SrVal *sr_ad_keep(SrAd *ad, SrVal *v) {
  if (!v) return NULL;
  if (ad->npool == ad->cappool) {
    ad->cappool = ad->cappool ? 2 * ad->cappool : 64;
    ad->pool = sr_xrealloc(ad->pool, (size_t)ad->cappool * sizeof *ad->pool);
  }
  ad->pool[ad->npool++] = v;
  return v;
}

/* ---- binding ---- */

static int is_tracer_of(SrVal *v, const SrTrace *t) {
  SrArrayObj *a = sr_array_of(v);
  return t && a && a->kind == SR_AV_TRACER && a->trace == t && a->trace_id == t->id;
}

/* The trace an operation on these inputs belongs to. */
static SrTrace *pick_trace(SrAd *ad, int nin, SrVal **in) {
  if (ad->mode != SR_AD_LIN) return ad->I->trace;
  if (ad->staged) return ad->tangent;
  for (int i = 0; i < nin; i++)
    if (is_tracer_of(in[i], ad->tangent)) return ad->tangent;
  return ad->primal;
}

SrTrace *sr_ad_pick_trace(SrAd *ad, int nin, SrVal **in) { return pick_trace(ad, nin, in); }

static SrVal *bind_in(SrAd *ad, SrTrace *t, const SrPrim *p, int nin, SrVal **in, int np,
                      const SrParam *ps, const SrType *const *written, uint32_t nout) {
  for (int i = 0; i < nin; i++)
    if (!in[i]) return NULL;
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  I->trace = t;
  SrVal *r = sr_bind_prim(I, p, nin, in, np, ps, written, nout);
  I->trace = saved;
  return sr_ad_keep(ad, r);
}

/* The rules bind through the op layer's one bind (ops.h), results pooled. */
SrVal *sr_ad_bind(SrAd *ad, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params) {
  return sr_ad_keep(ad, sr_op_bind(SR_AD_BINDER(ad), prim_id, nin, in, nparams, params));
}

SrVal *sr_ad_bind_tangent(SrAd *ad, int prim_id, int nin, SrVal **in, int nparams, const SrParam *params) {
  SrTrace *t = ad->mode == SR_AD_LIN ? ad->tangent : ad->I->trace;
  return bind_in(ad, t, &sr_prims[prim_id], nin, in, nparams, params, NULL, 0);
}

SrVal *sr_ad_bindv(SrAd *ad, int prim_id, int nin, SrVal **in, ...) {
  va_list ap;
  va_start(ap, in);
  SrVal *r = sr_op_bindva(SR_AD_BINDER(ad), prim_id, nin, in, ap);
  va_end(ap);
  return sr_ad_keep(ad, r);
}

SrVal *sr_ad_bind_eqn(SrAd *ad, const SrEqn *e, SrVal **in) {
  for (uint32_t i = 0; i < e->nin; i++)
    if (!in[i]) return NULL;
  const SrType *wsmall[16] = {0}, **written = e->nout <= 16 ? wsmall : sr_xmalloc(e->nout * sizeof *written);
  for (uint32_t i = 0; i < e->nout; i++) written[i] = e->out[i]->type;
  SrVal *r = bind_in(ad, pick_trace(ad, (int)e->nin, in), e->prim, (int)e->nin, in, (int)e->nparams,
                     e->params, written, e->nout);
  if (written != wsmall) free(written);
  return r;
}

SrVal *sr_ad_bind_eqn1(SrAd *ad, const SrEqn *e, SrVal **in) {
  SrVal *r = sr_ad_bind_eqn(ad, e, in);
  return r ? r->seq.items[0] : NULL;
}

/* ---- the generic JVP rules ---- */

/* defjvp_zero: the primal, and a zero tangent. */
int sr_ad_jvp_zero(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  (void)t;
  SrVal *r = sr_ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) {
    y[i] = r->seq.items[i];
    ty[i] = NULL;
  }
  return 0;
}

/* linear_jvp: the primal, and the same op on the tangents (zeros
   instantiated). */
int sr_ad_jvp_linear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrVal *r = sr_ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) y[i] = r->seq.items[i];
  SrVal *small[16], **tt = e->nin <= 16 ? small : sr_xcalloc(e->nin, sizeof *tt);
  for (uint32_t i = 0; i < e->nin; i++)
    tt[i] = t[i] ? t[i] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[i])));
  SrVal *rt = sr_ad_bind_eqn(ad, e, tt);
  if (tt != small) free(tt);
  if (!rt) return -1;
  for (uint32_t i = 0; i < e->nout; i++) ty[i] = rt->seq.items[i];
  return 0;
}

/* defbilinear: op(t, y) + op(x, t'), each with the equation's params. */
int sr_ad_jvp_bilinear(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  y[0] = sr_ad_bind_eqn1(ad, e, x);
  SrVal *a = NULL, *b = NULL;
  if (t[0]) {
    SrVal *in[2] = {t[0], x[1]};
    a = sr_ad_bind_eqn1(ad, e, in);
    if (!a) return -1;
  }
  if (t[1]) {
    SrVal *in[2] = {x[0], t[1]};
    b = sr_ad_bind_eqn1(ad, e, in);
    if (!b) return -1;
  }
  ty[0] = sr_ad_add_tangents(ad, a, b);
  return y[0] && ty[0] ? 0 : -1;
}

/* ---- values ---- */

SrVal *sr_ad_literal(SrAd *ad, const SrVar *l) {
  const SrType *t = l->type;
  if (!t) {
    /* a bare literal of an older printer: its dtype from its text */
    const char *s = l->text ? l->text : "0";
    int isf = strchr(s, '.') || strchr(s, 'e') || strstr(s, "inf") || strstr(s, "nan");
    int isb = strcmp(s, "True") == 0 || strcmp(s, "False") == 0;
    t = sr_type_with_weak(sr_type_scalar(isb ? SR_BOOL : isf ? SR_F32 : SR_I32), !isb);
    if (isb) return sr_ad_keep(ad, sr_array_scalar(t, 0, 0, s[0] == 'T'));
    if (isf) return sr_ad_keep(ad, sr_array_scalar(t, strtod(s, NULL), 0, 0));
    return sr_ad_keep(ad, sr_array_scalar(t, 0, 0, strtoll(s, NULL, 10)));
  }
  if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) return sr_ad_keep(ad, sr_array_scalar(t, l->val.c[0], l->val.c[1], 0));
  if (sr_dtype_is_inexact(t->dtype)) return sr_ad_keep(ad, sr_array_scalar(t, l->val.f, 0, (int64_t)l->val.f));
  return sr_ad_keep(ad, sr_array_scalar(t, (double)l->val.i, 0, l->val.i));
}

SrVal *sr_ad_scalar(SrAd *ad, SrDtype dt, int weak, double v) {
  const SrType *t = sr_type_with_weak(sr_type_scalar(dt), weak);
  return sr_ad_keep(ad, sr_array_scalar(t, v, 0, (int64_t)v));
}

SrVal *sr_ad_const(SrAd *ad, SrVal *example, double v) {
  const SrType *t = sr_ad_type(ad, example);
  if (!t) return NULL;
  /* a weakly typed Python scalar keeps its weak type; an array's dtype
     gives a strong literal */
  int weak = t->weak && t->ndim == 0 && !sr_array_of(example);
  return sr_ad_scalar(ad, t->dtype, weak, v);
}

const SrMesh *sr_ad_ctx_mesh(SrAd *ad) { return sr_jax_abstract_mesh(ad->I->jax); }

int sr_ad_ctx_manual(SrAd *ad) {
  const SrMesh *m = sr_ad_ctx_mesh(ad);
  if (!m->n) return 0;
  for (int i = 0; i < m->n; i++)
    if (m->types[i] != SR_AXIS_MANUAL) return 0;
  return 1;
}

const SrMesh *sr_ad_jaxpr_mesh(const SrJaxpr *j) {
  if (!j) return NULL;
  for (uint32_t i = 0; i < j->nin; i++)
    if (j->invars[i]->type && j->invars[i]->type->mesh) return j->invars[i]->type->mesh;
  for (uint32_t i = 0; i < j->nout; i++)
    if (j->outvars[i]->type && j->outvars[i]->type->mesh) return j->outvars[i]->type->mesh;
  for (uint32_t k = 0; k < j->neqn; k++)
    for (uint32_t i = 0; i < j->eqns[k].nout; i++)
      if (j->eqns[k].out[i]->type && j->eqns[k].out[i]->type->mesh) return j->eqns[k].out[i]->type->mesh;
  return NULL;
}

const SrMesh *sr_ad_value_mesh(SrAd *ad) {
  const SrMesh *m = sr_ad_ctx_mesh(ad);
  if (m->n) return m;
  /* no mesh in context: the values' own (an abstract mesh derived from a
     concrete one, as an array's aval.sharding.mesh) */
  return ad->vmesh ? sr_mesh_abstract(ad->vmesh, 1) : NULL;
}

SrVal *sr_ad_sharding_param(SrAd *ad, const SrType *t) {
  const SrMesh *m = sr_ad_ctx_mesh(ad);
  if (!m->n) {
    /* operand.aval.sharding: the type's own mesh, else the values' */
    m = t->mesh ? sr_mesh_abstract(t->mesh, 1) : sr_ad_value_mesh(ad);
    if (!m) return sr_none();
  }
  SrShardSpec s;
  sr_shard_of_type(t, &s);
  const SrMesh *shape = sr_mesh_shape(m);
  /* a type over a mesh of other names (use_abstract_mesh(mesh.update(
     axis_names=...))): its own mesh */
  for (int i = 0; t->mesh && t->mesh != shape && i < t->mesh->n; i++)
    if (sr_mesh_axis(shape, t->mesh->names[i]) < 0) {
      m = sr_mesh_abstract(t->mesh, 1);
      shape = t->mesh;
      break;
    }
  /* the type's axes, named on the context mesh */
  if (t->mesh && t->mesh != shape) {
    for (int i = 0; i < s.ndim; i++)
      for (int k = 0; k < s.nax[i]; k++) {
        int a = sr_mesh_axis(shape, t->mesh->names[s.ax[i][k]]);
        s.ax[i][k] = (uint8_t)(a < 0 ? 0 : a);
      }
    s.unreduced = sr_axes_remap(s.unreduced, t->mesh, shape);
    s.reduced = sr_axes_remap(s.reduced, t->mesh, shape);
  }
  s.mesh = shape;
  if (sr_ad_ctx_manual(ad)) {
    /* manual axes live in the type's mat, not in its sharding */
    s.unreduced = s.reduced = 0;
    s.ukind = 0;
  }
  SrVal *spec = sr_shard_to_spec_val(&s);
  SrVal *sh = sr_sharding_val(NULL, m, spec->spec, NULL);
  sr_unref(spec);
  return sh;
}

/* ---- the JVP / linearization walk ---- */

static int eqn_nz(const SrEqn *e, SrVal **t) {
  for (uint32_t i = 0; i < e->nin; i++)
    if (t[i]) return 1;
  /* a new Ref has a tangent Ref whatever its operand's tangent
     (JVPTrace.process_primitive's exception for ref_p) */
  for (uint32_t i = 0; i < e->nout; i++)
    if (e->out[i]->type && e->out[i]->type->ref && sr_ad_differentiable(sr_type_deref(e->out[i]->type))) return 1;
  return 0;
}

/* A tangent is kept only for an inexact primal type. */
static SrVal *filter_tangent(const SrType *primal, SrVal *t) {
  return t && sr_ad_differentiable(primal) ? t : NULL;
}

/* The programs of the traces that receive j's equations (and their param
   values, which stay in j's arena) keep j's program alive. */
static void keep_prog(SrTrace *t, const SrJaxpr *j) {
  if (t && t->prog != j->prog) sr_program_dep(t->prog, j->prog);
}

int sr_ad_eval(SrAd *ad, const SrJaxpr *j, SrVal **primals, SrVal **tangents, SrVal **out, SrVal **tout) {
  SrInterp *I = ad->I;
  if (!ad->vmesh) ad->vmesh = sr_ad_jaxpr_mesh(j);
  keep_prog(I->trace, j);
  keep_prog(ad->primal, j);
  keep_prog(ad->tangent, j);
  uint32_t nv = j->nvars + 1;
  SrVal **pv = sr_xcalloc(nv, sizeof *pv), **tv = sr_xcalloc(nv, sizeof *tv);
  int rc = -1;
  for (uint32_t i = 0; i < j->nconst; i++) {
    SrVar *v = j->invars[i];
    pv[v->id] = j->consts && j->consts[i] ? sr_ref(j->consts[i]) : sr_array_abstract(v->type);
  }
  for (uint32_t i = 0; i < sr_nargs(j); i++) {
    SrVar *v = sr_args(j)[i];
    pv[v->id] = sr_ref(primals[i]);
    tv[v->id] = tangents ? sr_ref(filter_tangent(v->type, tangents[i])) : NULL;
  }
  /* values are released after their last use (sr_jaxpr_last_use), which
     keeps the working set of a long jaxpr small */
  int32_t *last = sr_jaxpr_last_use(j, NULL);
  SrVal *xs_small[32], *ts_small[32], *ys_small[32], *tys_small[32];
  /* each equation's rule binds in the equation's context */
  SrEqnCtx c0 = sr_eqn_ctx_save(I);
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    sr_eqn_ctx_enter(I, &c0, c0.ns, e);
    if (sr_interrupt_point(I)) {
      sr_raise(I, "KeyboardInterrupt", "interrupted");
      goto done;
    }
    int big = e->nin > 32 || e->nout > 32;
    SrVal **x = big ? sr_xcalloc(e->nin + 1, sizeof *x) : xs_small;
    SrVal **t = big ? sr_xcalloc(e->nin + 1, sizeof *t) : ts_small;
    SrVal **y = big ? sr_xcalloc(e->nout + 1, sizeof *y) : ys_small;
    SrVal **ty = big ? sr_xcalloc(e->nout + 1, sizeof *ty) : tys_small;
    int mark = sr_ad_mark(ad), ok = 1;
    for (uint32_t i = 0; i < e->nin; i++) {
      SrVar *a = e->in[i];
      if (a->kind == SR_LIT) {
        x[i] = sr_ad_literal(ad, a);
        t[i] = NULL;
      } else {
        x[i] = pv[a->id];
        t[i] = tv[a->id];
      }
    }
    for (uint32_t i = 0; i < e->nout; i++) y[i] = ty[i] = NULL;
    if (!eqn_nz(e, t)) {
      SrVal *r = sr_ad_bind_eqn(ad, e, x);
      if (!r) ok = 0;
      else
        for (uint32_t i = 0; i < e->nout; i++) y[i] = r->seq.items[i];
    } else {
      SrJvpRule rule = sr_ad_jvp_rule(e->prim);
      if (!rule) {
        sr_ad_no_jvp(ad, e->prim);
        ok = 0;
      } else if (rule_call_jvp(rule, ad, e, x, t, y, ty) < 0) {
        if (!I->exc) sr_raise(I, "RuntimeError", "the JVP rule of %s failed", e->prim->name);
        ok = 0;
      } else {
        for (uint32_t i = 0; i < e->nout; i++)
          if (!y[i]) {
            sr_raise(I, "RuntimeError", "the JVP rule of %s gave no primal output", e->prim->name);
            ok = 0;
            break;
          }
      }
    }
    if (ok)
      for (uint32_t i = 0; i < e->nout; i++) {
        SrVar *o = e->out[i];
        if (o->kind == SR_DROP) continue;
        pv[o->id] = sr_ref(y[i]);
        tv[o->id] = sr_ref(filter_tangent(o->type, ty[i]));
      }
    sr_ad_release(ad, mark);
    if (big) {
      free(x);
      free(t);
      free(y);
      free(ty);
    }
    if (!ok) goto done;
    for (uint32_t i = 0; i < e->nin; i++) {
      SrVar *a = e->in[i];
      if (!sr_dies_at(last, a, k)) continue;
      sr_unref(pv[a->id]);
      sr_unref(tv[a->id]);
      pv[a->id] = tv[a->id] = NULL;
    }
  }
  sr_eqn_ctx_restore(I, &c0);
  for (uint32_t i = 0; i < j->nout; i++) {
    SrVar *o = j->outvars[i];
    if (o->kind == SR_LIT) {
      int mark = sr_ad_mark(ad);
      out[i] = sr_ref(sr_ad_literal(ad, o));
      sr_ad_release(ad, mark);
      tout[i] = NULL;
    } else {
      out[i] = sr_ref(pv[o->id]);
      tout[i] = sr_ref(tv[o->id]);
    }
  }
  rc = 0;
done:
  sr_eqn_ctx_restore(I, &c0);
  for (uint32_t i = 0; i < nv; i++) {
    sr_unref(pv[i]);
    sr_unref(tv[i]);
  }
  free(pv);
  free(tv);
  free(last);
  return rc;
}

/* ---- the backward pass ---- */

/* core.typematch(no_dtype_check=True): shapes and shardings agree. */
static int ct_match(const SrType *a, const SrType *b) {
  if (a == b) return 1;
  if (a->ndim != b->ndim) return 0;
  if (a->mesh == b->mesh && a->unreduced == b->unreduced && a->reduced == b->reduced &&
      a->varying == b->varying && a->ukind == b->ukind) {
    int same = 1;
    for (int i = 0; i < a->ndim && same; i++)
      same = sr_dim_same(&a->dims[i], &b->dims[i]) && a->dims[i].nax == b->dims[i].nax &&
             memcmp(a->dims[i].ax, b->dims[i].ax, a->dims[i].nax) == 0;
    if (same) return 1;
  }
  SrTypeBuilder ba, bb;
  sr_type_builder(&ba, a);
  sr_type_builder(&bb, b);
  ba.dtype = bb.dtype;
  ba.weak = bb.weak = 0;
  return sr_type_equal_mod_mesh(sr_type_get(&ba), sr_type_get(&bb));
}

/* ValAccum.accum: checks the cotangent's type (ad.ct_check) and sums a
   second contribution with add_any. */
static int accum(SrAd *ad, SrVal **slot, SrVal *ct, const SrType *want) {
  if (!ct) return 0;
  const SrType *got = sr_ad_type(ad, ct);
  if (!got) {
    sr_raise(ad->I, "TypeError", "a cotangent is not an array");
    return -1;
  }
  if (want && !ct_match(got, want)) {
    sr_raise(ad->I, "ValueError", "Expected cotangent type %s but got %s", sr_type_short(want), sr_type_short(got));
    return -1;
  }
  if (!*slot) {
    *slot = sr_ref(ct);
    return 0;
  }
  int mark = sr_ad_mark(ad);
  SrVal *s = sr_ad_add_any(ad, *slot, ct);
  if (!s) return -1;
  sr_unref(*slot);
  *slot = sr_ref(s);
  sr_ad_release(ad, mark);
  return 0;
}

SrVal *(*sr_ad_zero_ref_hook)(SrAd *ad, const SrType *ref_type);
int (*sr_ad_ref_accum_hook)(SrAd *ad, SrVal *ref, SrVal *ct);

int sr_ad_backward(SrAd *ad, const SrJaxpr *j, const uint8_t *linear, SrVal **vals, SrVal **cts_out,
                SrVal **cts_in) {
  SrInterp *I = ad->I;
  if (!ad->vmesh) ad->vmesh = sr_ad_jaxpr_mesh(j);
  keep_prog(I->trace, j);
  uint32_t nv = j->nvars + 1, nargs = sr_nargs(j);
  SrVal **val = sr_xcalloc(nv, sizeof *val), **ct = sr_xcalloc(nv, sizeof *ct);
  uint8_t *lin = sr_xcalloc(nv, 1);
  uint32_t *leqns = sr_xmalloc((j->neqn + 1) * sizeof *leqns), nl = 0;
  int rc = -1;
  for (uint32_t i = 0; i < j->nconst; i++) {
    SrVar *v = j->invars[i];
    val[v->id] = j->consts && j->consts[i] ? sr_ref(j->consts[i]) : sr_array_abstract(v->type);
  }
  for (uint32_t i = 0; i < nargs; i++) {
    SrVar *v = sr_args(j)[i];
    if (linear[i]) lin[v->id] = 1;
    else val[v->id] = sr_ref(vals[i]);
    /* an accumulator that starts from a value (a scan's const cotangent) */
    if (linear[i] && cts_in[i]) ct[v->id] = sr_ref(cts_in[i]);
  }
  /* forward: equations that read no linear value are bound as they are,
     under the name stack and their own (ad.backward_pass3's
     _name_stack_ctx), the linear ones transposed under 'transpose' too
     when ad->transform_stack */
  SrEqnCtx c0 = sr_eqn_ctx_save(I);
  const char *bns = ad->transform_stack ? sr_ns_transform(c0.ns, "transpose") : c0.ns;
  SrVal *small[32];
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    sr_eqn_ctx_enter(I, &c0, c0.ns, e);
    int islin = 0;
    for (uint32_t i = 0; i < e->nin && !islin; i++) islin = e->in[i]->kind != SR_LIT && lin[e->in[i]->id];
    /* an equation making a Ref is linear (backward_pass3's ref_primitive):
       every Ref of a linear program is a tangent's */
    for (uint32_t i = 0; i < e->nout && !islin; i++) islin = e->out[i]->type && e->out[i]->type->ref == 1;
    if (islin) {
      for (uint32_t i = 0; i < e->nout; i++) lin[e->out[i]->id] = 1;
      leqns[nl++] = k;
      continue;
    }
    SrVal **x = e->nin > 32 ? sr_xcalloc(e->nin, sizeof *x) : small;
    int mark = sr_ad_mark(ad);
    for (uint32_t i = 0; i < e->nin; i++) x[i] = e->in[i]->kind == SR_LIT ? sr_ad_literal(ad, e->in[i]) : val[e->in[i]->id];
    SrVal *r = sr_ad_bind_eqn(ad, e, x);
    if (r)
      for (uint32_t i = 0; i < e->nout; i++)
        if (e->out[i]->kind != SR_DROP) val[e->out[i]->id] = sr_ref(r->seq.items[i]);
    sr_ad_release(ad, mark);
    if (x != small) free(x);
    if (!r) goto done;
  }
  sr_eqn_ctx_restore(I, &c0);
  /* the output cotangents */
  for (uint32_t i = 0; i < j->nout; i++) {
    SrVar *o = j->outvars[i];
    if (o->kind == SR_LIT || !lin[o->id] || !cts_out[i]) continue;
    if (accum(ad, &ct[o->id], cts_out[i], sr_ad_ct_type(o->type)) < 0) goto done;
  }
  /* backward */
  while (nl > 0) {
    const SrEqn *e = &j->eqns[leqns[--nl]];
    sr_eqn_ctx_enter(I, &c0, bns, e);
    if (sr_interrupt_point(I)) {
      sr_raise(I, "KeyboardInterrupt", "interrupted");
      goto done;
    }
    int any = 0;
    for (uint32_t i = 0; i < e->nout && !any; i++) any = e->out[i]->kind != SR_DROP && ct[e->out[i]->id];
    /* what reads or writes a linear Ref acts on its cotangent, a Ref too
       (backward_pass3's RefAccum): such an equation is transposed though
       its results have no cotangent */
    for (uint32_t i = 0; i < e->nin && !any; i++)
      any = e->in[i]->kind != SR_LIT && lin[e->in[i]->id] && e->in[i]->type && e->in[i]->type->ref;
    if (!any) continue;
    SrTransposeRule rule = sr_ad_transpose_rule(e->prim);
    if (!rule) {
      sr_ad_no_transpose(ad, e->prim);
      goto done;
    }
    int big = e->nin > 32 || e->nout > 32;
    SrVal *cs[32], *xs[32], *cxs[32];
    SrVal **c = big ? sr_xcalloc(e->nout + 1, sizeof *c) : cs;
    SrVal **x = big ? sr_xcalloc(e->nin + 1, sizeof *x) : xs;
    SrVal **cx = big ? sr_xcalloc(e->nin + 1, sizeof *cx) : cxs;
    int mark = sr_ad_mark(ad), ok = 1;
    for (uint32_t i = 0; i < e->nout; i++) {
      SrVar *o = e->out[i];
      c[i] = o->kind == SR_DROP ? NULL : sr_ad_keep(ad, ct[o->id]);
      if (o->kind != SR_DROP) ct[o->id] = NULL; /* the pool holds it now */
    }
    for (uint32_t i = 0; i < e->nin && ok; i++) {
      SrVar *a = e->in[i];
      cx[i] = NULL;
      if (a->kind == SR_LIT) x[i] = sr_ad_literal(ad, a);
      else x[i] = lin[a->id] ? NULL : val[a->id];
      /* a linear Ref's cotangent Ref, made of zeros when first needed
         (RefAccum.inst), is what its rule writes into */
      if (a->kind != SR_LIT && lin[a->id] && a->type && a->type->ref) {
        if (!ct[a->id]) {
          SrVal *z = sr_ad_zero_ref_hook ? sr_ad_zero_ref_hook(ad, a->type) : NULL;
          if (!z) {
            if (!I->exc) sr_ad_no_transpose(ad, e->prim);
            ok = 0;
            break;
          }
          ct[a->id] = sr_ref(z);
        }
        x[i] = ct[a->id];
      }
    }
    if (!ok) {
      sr_ad_release(ad, mark);
      if (big) {
        free(c);
        free(x);
        free(cx);
      }
      goto done;
    }
    const SrDebugInfo *saved_dbg = rule_dbg;
    rule_dbg = eqn_body_dbg(e);
    int rrc = rule(ad, e, c, x, cx);
    rule_dbg = saved_dbg;
    if (rrc < 0) {
      if (!I->exc) sr_raise(I, "RuntimeError", "the transpose rule of %s failed", e->prim->name);
      ok = 0;
    }
    for (uint32_t i = 0; ok && i < e->nin; i++) {
      SrVar *a = e->in[i];
      if (a->kind == SR_LIT || !lin[a->id] || !cx[i]) continue;
      if (a->type && a->type->ref) {
        /* a value for a Ref operand (a custom_vjp rule's) is added into
           the Ref's cotangent (RefAccum.accum) */
        const SrType *ct_t = sr_ad_type(ad, cx[i]);
        if (ct_t && !ct_t->ref && ct[a->id] && sr_ad_ref_accum_hook && sr_ad_ref_accum_hook(ad, ct[a->id], cx[i]) < 0)
          ok = 0;
        continue;
      }
      if (accum(ad, &ct[a->id], cx[i], sr_ad_ct_type(a->type)) < 0) ok = 0;
    }
    sr_ad_release(ad, mark);
    if (big) {
      free(c);
      free(x);
      free(cx);
    }
    if (!ok) goto done;
  }
  for (uint32_t i = 0; i < nargs; i++) {
    SrVar *v = sr_args(j)[i];
    if (linear[i] && cts_in[i]) sr_unref(cts_in[i]);
    cts_in[i] = linear[i] ? ct[v->id] : NULL;
    if (linear[i]) ct[v->id] = NULL;
  }
  rc = 0;
done:
  sr_eqn_ctx_restore(I, &c0);
  for (uint32_t i = 0; i < nv; i++) {
    sr_unref(val[i]);
    sr_unref(ct[i]);
  }
  free(val);
  free(ct);
  free(lin);
  free(leqns);
  return rc;
}

/* ---- dead-code elimination ---- */

SrJaxpr *sr_ad_dce(SrJaxpr *j, const uint8_t *used_out, uint8_t *used_in, int prune_args) {
  uint32_t nv = j->nvars + 1;
  uint8_t *live = sr_xcalloc(nv, 1), *keep = sr_xcalloc(j->neqn + 1, 1);
  for (uint32_t i = 0; i < j->nout; i++)
    if ((!used_out || used_out[i]) && j->outvars[i]->kind != SR_LIT) live[j->outvars[i]->id] = 1;
  for (uint32_t k = j->neqn; k-- > 0;) {
    const SrEqn *e = &j->eqns[k];
    /* an effect is kept, as pe.dce_jaxpr keeps effectful equations */
    int need = 0;
    for (uint32_t i = 0; i < e->nout && !need; i++) need = e->out[i]->kind != SR_DROP && live[e->out[i]->id];
    if (!need) need = sr_prim_has_effect(e->prim, e->params, e->nparams);
    if (!need) continue;
    keep[k] = 1;
    for (uint32_t i = 0; i < e->nin; i++)
      if (e->in[i]->kind != SR_LIT) live[e->in[i]->id] = 1;
  }
  SrJaxprBuilder b;
  sr_jb_init(&b, j->prog);
  for (uint32_t i = 0; i < j->nconst; i++)
    if (live[j->invars[i]->id]) sr_jb_constvar(&b, j->invars[i], j->consts ? j->consts[i] : NULL);
  for (uint32_t i = 0; i < sr_nargs(j); i++) {
    SrVar *v = sr_args(j)[i];
    if (used_in) used_in[i] = live[v->id];
    if (!prune_args || live[v->id]) sr_jb_invar(&b, v);
  }
  for (uint32_t k = 0; k < j->neqn; k++) {
    if (!keep[k]) continue;
    const SrEqn *e = &j->eqns[k];
    /* outputs nothing reads print as _ */
    for (uint32_t i = 0; i < e->nout; i++)
      if (e->out[i]->kind == SR_VAR && !live[e->out[i]->id]) e->out[i]->kind = SR_DROP;
    SrEqn *n = sr_jb_eqn(&b, e->prim, e->nin, e->in, e->nout, e->out, e->nparams, e->params);
    n->off = e->off;
    n->ns = e->ns;
    n->mesh = e->mesh;
    n->loc = e->loc;
  }
  for (uint32_t i = 0; i < j->nout; i++)
    if (!used_out || used_out[i]) sr_jb_outvar(&b, j->outvars[i]);
  SrJaxpr *r = sr_jb_finish(&b);
  r->name = j->name;
  r->effects = j->effects;
  /* pe.dce_jaxpr: the names of the inputs and outputs kept */
  if (j->dbg) {
    SrDebugInfo d = *j->dbg;
    const char **an = sr_xcalloc(sr_nargs(j) + 1, sizeof *an), **rp = sr_xcalloc(j->nout + 1, sizeof *rp);
    int na = 0, nr = 0;
    for (uint32_t i = 0; d.narg == (int)sr_nargs(j) && i < sr_nargs(j); i++)
      if (!prune_args || live[sr_args(j)[i]->id]) an[na++] = d.arg_names[i];
    for (uint32_t i = 0; d.nres == (int)j->nout && i < j->nout; i++)
      if (!used_out || used_out[i]) rp[nr++] = d.result_paths[i];
    if (d.narg >= 0) d.narg = d.narg == (int)sr_nargs(j) ? na : -1;
    if (d.nres >= 0) d.nres = d.nres == (int)j->nout ? nr : -1;
    d.arg_names = an;
    d.result_paths = rp;
    r->dbg = sr_debug_info_copy(r->prog->arena, &d, 0);
    free(an);
    free(rp);
  }
  free(live);
  free(keep);
  return r;
}

SrJaxpr *sr_ad_permute(SrJaxpr *j, const int *arg_order, const int *out_order) {
  SrJaxprBuilder b;
  sr_jb_init(&b, j->prog);
  for (uint32_t i = 0; i < j->nconst; i++) sr_jb_constvar(&b, j->invars[i], j->consts ? j->consts[i] : NULL);
  for (uint32_t i = 0; i < sr_nargs(j); i++) sr_jb_invar(&b, sr_args(j)[arg_order ? (uint32_t)arg_order[i] : i]);
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    SrEqn *n = sr_jb_eqn(&b, e->prim, e->nin, e->in, e->nout, e->out, e->nparams, e->params);
    n->off = e->off;
    n->ns = e->ns;
    n->mesh = e->mesh;
    n->loc = e->loc;
  }
  for (uint32_t i = 0; i < j->nout; i++) sr_jb_outvar(&b, j->outvars[out_order ? (uint32_t)out_order[i] : i]);
  SrJaxpr *r = sr_jb_finish(&b);
  r->name = j->name;
  r->effects = j->effects;
  /* pe.move_binders_to_front and the like: the names move with them */
  if (j->dbg) {
    SrDebugInfo d = *j->dbg;
    const char **an = sr_xcalloc(sr_nargs(j) + 1, sizeof *an), **rp = sr_xcalloc(j->nout + 1, sizeof *rp);
    if (d.narg != (int)sr_nargs(j)) d.narg = -1;
    if (d.nres != (int)j->nout) d.nres = -1;
    for (int i = 0; i < d.narg; i++) an[i] = j->dbg->arg_names[arg_order ? arg_order[i] : i];
    for (int i = 0; i < d.nres; i++) rp[i] = j->dbg->result_paths[out_order ? out_order[i] : i];
    d.arg_names = an;
    d.result_paths = rp;
    r->dbg = sr_debug_info_copy(r->prog->arena, &d, 0);
    free(an);
    free(rp);
  }
  return r;
}

/* ---- traces ---- */

SrTrace *sr_ad_trace_begin(SrAd *ad, int n, const SrType *const *types, SrVal **args) {
  SrTrace *t = sr_trace_begin(ad->I);
  for (int i = 0; i < n; i++) args[i] = sr_trace_arg(ad->I, t, types[i]);
  return t;
}

SrJaxpr *sr_ad_trace_end(SrAd *ad, SrTrace *t, int n, SrVal **outs, SrVal **captured) {
  SrJaxpr *j = ad_trace_end(ad, t, n, outs, captured);
  /* a body a rule made of the equation's: its debug info with unknown
     names (ad.py's and partial_eval's with_unknown_names) */
  if (j && !j->dbg && rule_dbg) j->dbg = sr_debug_info_copy(j->prog->arena, rule_dbg, 1);
  return j;
}

static SrJaxpr *ad_trace_end(SrAd *ad, SrTrace *t, int n, SrVal **outs, SrVal **captured) {
  SrInterp *I = ad->I;
  SrVal *cap = NULL;
  I->trace = t;
  /* concrete arrays the body reads (a jitted body's closed-over consts)
     stay its consts, as jvp_jaxpr's ClosedJaxpr keeps them; only
     tracers of an outer trace are captured */
  t->capture_consts = 1;
  SrJaxpr *j = sr_trace_end(I, t, outs, n, &cap);
  if (!j) return NULL;
  if (captured) {
    *captured = cap;
  } else {
    int nc = cap->seq.n;
    sr_unref(cap);
    if (nc) {
      sr_program_unref(j->prog);
      sr_raise(I, "RuntimeError", "internal error: a differentiated body closed over a traced value");
      return NULL;
    }
  }
  return j;
}

SrJaxpr *sr_ad_retrace(SrAd *ad, const SrJaxpr *F, int cap, SrAdRetraceMap map, void *arg) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(F);
  const SrType **types = sr_xcalloc(n + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) types[i] = sr_args(F)[i]->type;
  SrVal **args = sr_xcalloc(n + 1, sizeof *args);
  SrTrace *tr = sr_ad_trace_begin(ad, (int)n, types, args);
  free(types);
  I->trace = tr;
  SrVal *r = sr_eval_jaxpr(I, F, (int)n, args);
  SrJaxpr *out = NULL;
  if (r) {
    SrAd sub;
    sr_ad_begin(&sub, I, SR_AD_BWD);
    SrVal **outs = sr_xcalloc((size_t)cap + 1, sizeof *outs);
    int k = map(&sub, r->seq.items, r->seq.n, outs, cap, arg);
    if (k >= 0) out = sr_ad_trace_end(&sub, tr, k, outs, NULL);
    else sr_trace_abort(I, tr);
    if (out) out->dbg = sr_debug_info_copy(out->prog->arena, F->dbg, 1);
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

/* ---- jaxpr-level transforms ---- */

SrJaxpr *sr_ad_jvp_jaxpr(SrAd *ad, const SrJaxpr *j, const uint8_t *in_nz, const uint8_t *inst, uint8_t *out_nz) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(j), nt = 0;
  const SrType **types = sr_xcalloc(2 * n + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) types[i] = sr_args(j)[i]->type;
  for (uint32_t i = 0; i < n; i++)
    if (in_nz[i]) types[n + nt++] = sr_ad_tangent_type(sr_args(j)[i]->type);
  SrVal **args = sr_xcalloc(n + nt + 1, sizeof *args);
  SrTrace *t = sr_ad_trace_begin(ad, (int)(n + nt), types, args);
  SrVal **tan = sr_xcalloc(n + 1, sizeof *tan);
  for (uint32_t i = 0, k = 0; i < n; i++) tan[i] = in_nz[i] ? args[n + k++] : NULL;
  /* tout is its own array, not the tail of out: the non-zero tangents are
     packed after the primal outputs in out, and packing into the region
     they are read from would leave one value in two slots, unref'd twice */
  SrVal **out = sr_xcalloc(2 * j->nout + 1, sizeof *out), **tout = sr_xcalloc(j->nout + 1, sizeof *tout);
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_JVP);
  SrJaxpr *r = NULL;
  I->trace = t;
  int rc = sr_ad_eval(&sub, j, args, tan, out, tout);
  uint32_t no = j->nout;
  if (rc == 0) {
    for (uint32_t i = 0; i < j->nout; i++) {
      if (!tout[i] && inst && inst[i]) {
        int mark = sr_ad_mark(&sub);
        tout[i] = sr_ref(sr_ad_full_zeros(&sub, sr_ad_tangent_type(j->outvars[i]->type)));
        sr_ad_release(&sub, mark);
        if (!tout[i]) rc = -1;
      }
      out_nz[i] = tout[i] != NULL;
      if (tout[i]) out[no++] = tout[i];
    }
  }
  if (rc == 0) r = sr_ad_trace_end(&sub, t, (int)no, out, NULL);
  else sr_trace_abort(I, t);
  /* ad.jvp_jaxpr: the debug info with_unknown_names */
  if (r) r->dbg = sr_debug_info_copy(r->prog->arena, j->dbg, 1);
  for (uint32_t i = 0; i < j->nout; i++) sr_unref(out[i]), sr_unref(tout[i]);
  sr_ad_end(&sub);
  for (uint32_t i = 0; i < n + nt; i++) sr_unref(args[i]);
  free(args);
  free(tan);
  free(out);
  free(tout);
  free(types);
  I->trace = saved;
  return r;
}

void sr_ad_lin_jaxprs_free(SrLinJaxprs *l) {
  if (l->fwd) sr_program_unref(l->fwd->prog);
  if (l->lin) sr_program_unref(l->lin->prog);
  free(l->in_fwd);
  free(l->out_nz);
  memset(l, 0, sizeof *l);
}

/* Linearizes j with primal values in trace P and tangents in a new trace
   nested in it; the core of sr_ad_linearize and sr_ad_linearize_jaxpr.
   Leaves I->trace at P.  On success *lin_out is the DCE'd linear jaxpr
   and *res its residuals (a new list, aligned with its leading args). */
static int linearize_into(SrAd *ad, SrTrace *P, const SrJaxpr *j, SrVal **primals, const uint8_t *in_nz,
                          const uint8_t *out_diff, const uint8_t *inst, SrVal **out, uint8_t *out_nz,
                          SrJaxpr **lin_out, SrVal **res) {
  SrInterp *I = ad->I;
  uint32_t n = sr_nargs(j);
  I->trace = P;
  SrTrace *T = sr_trace_begin(I);
  /* ad.linearize's tangent trace is made as it is, the name stack kept */
  I->ns = T->saved_ns;
  SrVal **tan = sr_xcalloc(n + 1, sizeof *tan);
  for (uint32_t i = 0; i < n; i++)
    if (in_nz[i]) tan[i] = sr_trace_arg(I, T, sr_ad_tangent_type(sr_args(j)[i]->type));
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_LIN);
  sub.primal = P;
  sub.tangent = T;
  SrVal **tout = sr_xcalloc(j->nout + 1, sizeof *tout);
  int rc = sr_ad_eval(&sub, j, primals, tan, out, tout);
  int nnz = 0;
  if (rc == 0)
    for (uint32_t i = 0; i < j->nout; i++) {
      if (out_diff && !out_diff[i]) {
        sr_unref(tout[i]);
        tout[i] = NULL;
        out_nz[i] = 0;
        continue;
      }
      if (!tout[i] && inst && inst[i]) {
        int mark = sr_ad_mark(&sub);
        const SrType *tt = sr_ad_tangent_type(j->outvars[i]->type);
        /* as in JAX, the zero is known: a residual (or a literal) of the
           linear jaxpr */
        tout[i] = sr_ref(sr_ad_full_zeros(&sub, tt));
        sr_ad_release(&sub, mark);
        if (!tout[i]) rc = -1;
      }
      out_nz[i] = tout[i] != NULL;
      if (tout[i]) tout[nnz++] = tout[i];
    }
  sr_ad_end(&sub);
  for (uint32_t i = 0; i < n; i++) sr_unref(tan[i]);
  free(tan);
  if (rc < 0) {
    for (int i = 0; i < nnz; i++) sr_unref(tout[i]);
    free(tout);
    sr_trace_abort(I, T);
    I->trace = P;
    return -1;
  }
  SrVal *cap = NULL;
  I->trace = T;
  SrJaxpr *L = sr_trace_end(I, T, tout, nnz, &cap);
  for (int i = 0; i < nnz; i++) sr_unref(tout[i]);
  free(tout);
  I->trace = P;
  if (!L) return -1;
  /* drop the tangent work nothing needs (the tangent trace's auto_dce) and
     the residuals nothing reads */
  uint8_t *used = sr_xcalloc(sr_nargs(L) + 1, 1);
  L = sr_ad_dce(L, NULL, used, 0);
  uint32_t ncap = (uint32_t)cap->seq.n;
  SrVal *kept = sr_seq(NULL, SR_V_LIST, (int)ncap);
  SrJaxprBuilder b;
  sr_jb_init(&b, L->prog);
  for (uint32_t i = 0; i < L->nconst; i++) sr_jb_constvar(&b, L->invars[i], L->consts ? L->consts[i] : NULL);
  for (uint32_t i = 0; i < sr_nargs(L); i++) {
    if (i < ncap && !used[i]) continue;
    if (i < ncap) sr_seq_push(NULL, kept, sr_ref(cap->seq.items[i]));
    sr_jb_invar(&b, sr_args(L)[i]);
  }
  for (uint32_t k = 0; k < L->neqn; k++) {
    const SrEqn *e = &L->eqns[k];
    {
      SrEqn *c = sr_jb_eqn(&b, e->prim, e->nin, e->in, e->nout, e->out, e->nparams, e->params);
      c->ns = e->ns;
      c->mesh = e->mesh;
    }
  }
  for (uint32_t i = 0; i < L->nout; i++) sr_jb_outvar(&b, L->outvars[i]);
  L = sr_jb_finish(&b);
  free(used);
  sr_unref(cap);
  *lin_out = L;
  *res = kept;
  return 0;
}

int sr_ad_linearize_jaxpr(SrAd *ad, const SrJaxpr *j, const uint8_t *in_nz, const uint8_t *inst,
                       const uint8_t *allow_fwd, SrLinJaxprs *o) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  memset(o, 0, sizeof *o);
  uint32_t n = sr_nargs(j);
  const SrType **types = sr_xcalloc(n + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) types[i] = sr_args(j)[i]->type;
  SrVal **args = sr_xcalloc(n + 1, sizeof *args);
  SrTrace *P = sr_ad_trace_begin(ad, (int)n, types, args);
  free(types);
  SrVal **out = sr_xcalloc(j->nout + 1, sizeof *out);
  o->out_nz = sr_xcalloc(j->nout + 1, 1);
  SrJaxpr *L = NULL;
  SrVal *res = NULL;
  if (linearize_into(ad, P, j, args, in_nz, NULL, inst, out, o->out_nz, &L, &res) < 0) {
    for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
    free(args);
    free(out);
    sr_trace_abort(I, P);
    I->trace = saved;
    sr_ad_lin_jaxprs_free(o);
    return -1;
  }
  /* residuals that are arguments are forwarded, not returned */
  int nres = res->seq.n;
  o->nres = nres;
  o->in_fwd = sr_xcalloc((size_t)nres + 1, sizeof *o->in_fwd);
  SrVal **fouts = sr_xcalloc(j->nout + (size_t)nres + 1, sizeof *fouts);
  int nf = 0;
  for (uint32_t i = 0; i < j->nout; i++) fouts[nf++] = out[i];
  for (int r = 0; r < nres; r++) {
    SrVal *v = res->seq.items[r];
    SrArrayObj *a = sr_array_of(v);
    for (uint32_t i = 0; i < n && a; i++) {
      SrArrayObj *b = sr_array_of(args[i]);
      if (a->kind == SR_AV_TRACER && b && a->var == b->var && (!allow_fwd || allow_fwd[i])) o->in_fwd[r] = (int)i + 1;
    }
    if (!o->in_fwd[r]) fouts[nf++] = v;
  }
  SrVal *cap = NULL;
  SrJaxpr *F = sr_ad_trace_end(ad, P, nf, fouts, &cap);
  for (uint32_t i = 0; i < j->nout; i++) sr_unref(out[i]);
  for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  free(out);
  free(fouts);
  sr_unref(res);
  I->trace = saved;
  if (!F) {
    sr_program_unref(L->prog);
    sr_ad_lin_jaxprs_free(o);
    return -1;
  }
  int ncap = cap->seq.n;
  sr_unref(cap);
  if (ncap) {
    sr_program_unref(F->prog);
    sr_program_unref(L->prog);
    sr_ad_lin_jaxprs_free(o);
    sr_raise(I, "RuntimeError", "internal error: a linearized body closed over a traced value");
    return -1;
  }
  /* ad.linearize_jaxpr: both with_unknown_names */
  F->dbg = sr_debug_info_copy(F->prog->arena, j->dbg, 1);
  L->dbg = sr_debug_info_copy(L->prog->arena, j->dbg, 1);
  o->fwd = F;
  o->lin = L;
  return 0;
}

SrJaxpr *sr_ad_transpose_jaxpr(SrAd *ad, const SrJaxpr *j, const uint8_t *linear, const uint8_t *ct_nz) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(j), na = 0;
  const SrType **types = sr_xcalloc(n + j->nout + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++)
    if (!linear[i]) types[na++] = sr_args(j)[i]->type;
  uint32_t nc = 0;
  for (uint32_t i = 0; i < j->nout; i++)
    if (ct_nz[i]) types[na + nc++] = sr_ad_ct_type(j->outvars[i]->type);
  SrVal **args = sr_xcalloc(na + nc + 1, sizeof *args);
  SrTrace *t = sr_ad_trace_begin(ad, (int)(na + nc), types, args);
  free(types);
  SrVal **vals = sr_xcalloc(n + 1, sizeof *vals), **cts = sr_xcalloc(j->nout + 1, sizeof *cts);
  for (uint32_t i = 0, k = 0; i < n; i++) vals[i] = linear[i] ? NULL : args[k++];
  for (uint32_t i = 0, k = 0; i < j->nout; i++) cts[i] = ct_nz[i] ? args[na + k++] : NULL;
  SrVal **cin = sr_xcalloc(n + 1, sizeof *cin);
  /* a Ref among the inputs of a linear body is a tangent's cotangent Ref,
     passed in (the caller's RefAccum): the body writes into it */
  uint8_t *lin2 = sr_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) {
    const SrType *at = sr_args(j)[i]->type;
    lin2[i] = linear[i] || (at && at->ref == 1); /* a no_grad_no_remat Ref has no cotangent */
    if (!linear[i] && lin2[i]) cin[i] = sr_ref(vals[i]);
  }
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  I->trace = t;
  int rc = sr_ad_backward(&sub, j, lin2, vals, cts, cin);
  for (uint32_t i = 0; i < n; i++)
    if (!linear[i] && lin2[i]) {
      sr_unref(cin[i]);
      cin[i] = NULL;
    }
  free(lin2);
  SrJaxpr *r = NULL;
  if (rc == 0) {
    uint32_t no = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (!linear[i]) continue;
      if (!cin[i]) {
        int mark = sr_ad_mark(&sub);
        cin[i] = sr_ref(sr_ad_full_zeros(&sub, sr_ad_ct_type(sr_args(j)[i]->type)));
        sr_ad_release(&sub, mark);
        if (!cin[i]) rc = -1;
      }
      cin[no++] = cin[i];
      if (no - 1 != i) cin[i] = NULL;
    }
    if (rc == 0) r = sr_ad_trace_end(&sub, t, (int)no, cin, NULL);
    /* ad.transpose_jaxpr: with_unknown_names */
    if (r) r->dbg = sr_debug_info_copy(r->prog->arena, j->dbg, 1);
  }
  if (rc < 0) sr_trace_abort(I, t);
  for (uint32_t i = 0; i < n; i++) sr_unref(cin[i]);
  sr_ad_end(&sub);
  for (uint32_t i = 0; i < na + nc; i++) sr_unref(args[i]);
  free(args);
  free(vals);
  free(cts);
  free(cin);
  I->trace = saved;
  return r;
}

/* ---- the public entry points ---- */

int sr_ad_jvp(SrInterp *I, const SrJaxpr *j, SrVal **primals, SrVal **tangents, SrVal **out, SrVal **tout) {
  SrAd ad;
  sr_ad_begin(&ad, I, SR_AD_JVP);
  /* ad.jvp(transform_stack=True) */
  const char *ns0 = I->ns;
  I->ns = sr_ns_transform(ns0, "jvp");
  int rc = sr_ad_eval(&ad, j, primals, tangents, out, tout);
  I->ns = ns0;
  sr_ad_end(&ad);
  return rc;
}

void sr_ad_linear_free(SrLinear *lin) {
  if (lin->jaxpr) sr_program_unref(lin->jaxpr->prog);
  for (int i = 0; i < lin->nres; i++) sr_unref(lin->res[i]);
  free(lin->res);
  free(lin->in_nz);
  free(lin->out_nz);
  free(lin->in_types);
  free(lin->out_types);
  free(lin->res_arg);
  memset(lin, 0, sizeof *lin);
}

int sr_ad_linearize(SrInterp *I, const SrJaxpr *j, SrVal **primals, const uint8_t *in_nz,
                    const uint8_t *out_diff, SrVal **out, SrLinear *lin) {
  memset(lin, 0, sizeof *lin);
  uint32_t n = sr_nargs(j);
  lin->nin = (int)n;
  lin->nout = (int)j->nout;
  lin->in_nz = sr_xcalloc(n + 1, 1);
  lin->out_nz = sr_xcalloc(j->nout + 1, 1);
  lin->in_types = sr_xcalloc(n + 1, sizeof *lin->in_types);
  lin->out_types = sr_xcalloc(j->nout + 1, sizeof *lin->out_types);
  for (uint32_t i = 0; i < n; i++) {
    lin->in_types[i] = sr_value_type(I, primals[i]);
    if (!lin->in_types[i]) lin->in_types[i] = sr_args(j)[i]->type;
    lin->in_nz[i] = (in_nz ? in_nz[i] : 1) && sr_ad_differentiable(sr_args(j)[i]->type);
  }
  SrAd ad;
  sr_ad_begin(&ad, I, SR_AD_LIN);
  SrTrace *saved = I->trace;
  SrJaxpr *L = NULL;
  SrVal *res = NULL;
  /* ad.linearize: transform_name_stack('jvp') */
  const char *ns0 = I->ns;
  I->ns = sr_ns_transform(ns0, "jvp");
  int rc = linearize_into(&ad, saved, j, primals, lin->in_nz, out_diff, NULL, out, lin->out_nz, &L, &res);
  I->ns = ns0;
  I->trace = saved;
  sr_ad_end(&ad);
  if (rc < 0) {
    sr_ad_linear_free(lin);
    return -1;
  }
  for (uint32_t i = 0; i < j->nout; i++) lin->out_types[i] = sr_value_type(I, out[i]);
  lin->jaxpr = L;
  lin->nres = res->seq.n;
  lin->res = sr_xcalloc((size_t)lin->nres + 1, sizeof *lin->res);
  lin->res_arg = sr_xcalloc((size_t)lin->nres + 1, 1);
  for (int r = 0; r < lin->nres; r++) {
    lin->res[r] = sr_ref(res->seq.items[r]);
    for (uint32_t i = 0; i < n && i < 255; i++)
      if (lin->res[r] == primals[i]) lin->res_arg[r] = (uint8_t)(i + 1);
  }
  sr_unref(res);
  return 0;
}

int sr_ad_linear_apply(SrInterp *I, const SrLinear *lin, SrVal **tangents, SrVal **tout) {
  const SrJaxpr *L = lin->jaxpr;
  uint32_t n = sr_nargs(L);
  SrVal **args = sr_xcalloc(n + 1, sizeof *args);
  uint32_t k = 0;
  for (int r = 0; r < lin->nres; r++) args[k++] = lin->res[r];
  for (int i = 0; i < lin->nin; i++)
    if (lin->in_nz[i]) args[k++] = tangents[i];
  SrVal *r = sr_eval_jaxpr(I, L, (int)k, args);
  free(args);
  if (!r) return -1;
  SrAd ad;
  sr_ad_begin(&ad, I, SR_AD_JVP);
  int rc = 0;
  for (int i = 0, m = 0; i < lin->nout; i++) {
    if (lin->out_nz[i]) {
      tout[i] = sr_ref(r->seq.items[m++]);
    } else {
      int mark = sr_ad_mark(&ad);
      tout[i] = sr_ref(sr_ad_full_zeros(&ad, sr_ad_tangent_type(lin->out_types[i])));
      sr_ad_release(&ad, mark);
      if (!tout[i]) rc = -1;
    }
  }
  sr_ad_end(&ad);
  sr_unref(r);
  return rc;
}

int sr_ad_vjp_apply(SrInterp *I, const SrLinear *lin, SrVal **cts_out, SrVal **cts_in, int zeros_all) {
  const SrJaxpr *L = lin->jaxpr;
  uint32_t n = sr_nargs(L);
  uint8_t *linear = sr_xcalloc(n + 1, 1);
  SrVal **vals = sr_xcalloc(n + 1, sizeof *vals), **cin = sr_xcalloc(n + 1, sizeof *cin);
  SrVal **cts = sr_xcalloc(L->nout + 1, sizeof *cts);
  for (int r = 0; r < lin->nres; r++) vals[r] = lin->res[r];
  for (uint32_t i = (uint32_t)lin->nres; i < n; i++) linear[i] = 1;
  for (int i = 0, m = 0; i < lin->nout; i++)
    if (lin->out_nz[i]) cts[m++] = cts_out[i];
  SrAd ad;
  sr_ad_begin(&ad, I, SR_AD_BWD);
  ad.transform_stack = 1; /* api.vjp: backward_pass3(jaxpr, True, ...) */
  int rc = sr_ad_backward(&ad, L, linear, vals, cts, cin);
  for (int i = 0, k = lin->nres; rc == 0 && i < lin->nin; i++) {
    SrVal *c = lin->in_nz[i] ? cin[k++] : NULL;
    if (!c && !lin->in_nz[i] && !zeros_all) {
      cts_in[i] = NULL;
      continue;
    }
    if (!c) {
      int mark = sr_ad_mark(&ad);
      c = sr_ref(sr_ad_full_zeros(&ad, sr_ad_ct_type(lin->in_types[i])));
      sr_ad_release(&ad, mark);
      if (!c) rc = -1;
    } else {
      sr_ref(c);
    }
    cts_in[i] = c;
  }
  sr_ad_end(&ad);
  for (uint32_t i = 0; i < n; i++) sr_unref(cin[i]);
  free(linear);
  free(vals);
  free(cin);
  free(cts);
  return rc;
}

int sr_ad_transpose(SrInterp *I, const SrJaxpr *j, const uint8_t *linear, SrVal **vals, SrVal **cts_out,
                    SrVal **cts_in) {
  SrAd ad;
  sr_ad_begin(&ad, I, SR_AD_BWD);
  ad.transform_stack = 1; /* api.linear_transpose: backward_pass(jaxpr, True, ...) */
  int rc = sr_ad_backward(&ad, j, linear, vals, cts_out, cts_in);
  sr_ad_end(&ad);
  return rc;
}

SrVal *sr_ad_zeros(SrInterp *I, const SrType *t) {
  SrAd ad;
  sr_ad_begin(&ad, I, SR_AD_BWD);
  SrVal *z = sr_ref(sr_ad_full_zeros(&ad, t));
  sr_ad_end(&ad);
  return z;
}

SrVal *sr_ad_one_ct(SrInterp *I, const SrType *ans, const SrMesh *vmesh) {
  SrAd ad;
  sr_ad_begin(&ad, I, SR_AD_BWD);
  ad.vmesh = vmesh;
  SrVal *r = sr_ref(sr_ad_full(&ad, sr_ad_ct_type(ans), 1.0));
  sr_ad_end(&ad);
  return r;
}
