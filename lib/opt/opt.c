/* opt.c: the optimization pass of opt.h -- inlining, shard_map fusion,
 * CSE and DCE -- over a working copy of the program, and the text
 * listing of a jaxpr.
 *
 * The working copy (OBody, OEqn, OVar) is mutable where SrJaxprs are not:
 * an OVar merged into another points at it (repl), an equation found dead
 * is marked, and a shard_map's body is an OBody of its own.  The result
 * is emitted into a new program at the end; params are the source
 * program's values, which the new program keeps alive (sr_program_dep).
 */
#include "opt/opt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad/ad.h"
#include "prims/prim.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"

typedef struct OVar {
  const SrType *type;
  const SrVar *lit;      /* a literal of the source program, or NULL */
  struct OVar *repl;     /* merged into this one (CSE, fusion) */
  uint8_t drop;          /* nothing reads it (printed `_`) */
  uint8_t live;
  SrVar *emitted;        /* its var in the jaxpr being emitted */
} OVar;

struct OBody;

typedef struct OEqn {
  const SrPrim *prim;
  int nin, nout;
  OVar **in, **out;
  const SrParam *params;
  int nparams;
  struct OBody *body;    /* shard_map: its body, worked on */
  SrVal **in_specs, **out_specs; /* shard_map: per operand / result */
  uint8_t dead;
  const char *ns;        /* its name stack (SrEqn.ns), calls inlined into it
                            included */
} OEqn;

typedef struct OBody {
  int nin, nout, neqn, cap;
  OVar **in, **out;
  OEqn **eqns;
  const SrJaxpr *src;    /* the jaxpr it came from (constvars) */
} OBody;

/* A map from pointers (source jaxprs) to values, open addressing. */
typedef struct PMap {
  const void **keys;
  uint64_t *vals;
  size_t cap, n;
} PMap;

static uint64_t *pmap_slot(PMap *m, const void *k, int add) {
  if (add && 2 * (m->n + 1) > m->cap) {
    PMap g = {0};
    g.cap = m->cap ? 2 * m->cap : 64;
    g.keys = sr_xcalloc(g.cap, sizeof *g.keys);
    g.vals = sr_xcalloc(g.cap, sizeof *g.vals);
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) *pmap_slot(&g, m->keys[i], 1) = m->vals[i];
    free(m->keys);
    free(m->vals);
    *m = g;
  }
  if (!m->cap) return NULL;
  size_t i = ((uintptr_t)k >> 4) * 11400714819323198485ull % m->cap;
  for (; m->keys[i]; i = (i + 1) % m->cap)
    if (m->keys[i] == k) return &m->vals[i];
  if (!add) return NULL;
  m->keys[i] = k;
  m->n++;
  return &m->vals[i];
}

static void pmap_free(PMap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

typedef struct Opt {
  SrArena *a;
  SrProgram *prog;       /* the result's */
  SrOptStats st;
  PMap size;             /* source jaxpr -> its equations, calls inlined, + 1 */
  PMap done;             /* source jaxpr -> the optimized one (SrJaxpr *) */
  int inline_all;        /* the whole program inlined stays within the budget */
} Opt;

/* XLA inlines every call; a program of n nested jits that each call the
   inner one twice would inline to 2^n equations.  So calls are inlined
   only while the result stays small: all of them when the whole program
   inlined has at most INLINE_BUDGET equations, and otherwise those whose
   body inlined has at most INLINE_SMALL.  The other calls stay calls, and
   the body of each is optimized once, the calls sharing the result. */
#define INLINE_BUDGET 100000
#define INLINE_SMALL 1000
#define SIZE_CAP (UINT64_C(1) << 62)

static const char *k_jaxpr, *k_call_jaxpr, *k_in_specs, *k_out_specs, *k_mesh, *k_check_vma,
    *k_manual, *k_axis_names;

static OVar *find(OVar *v) {
  while (v->repl) v = v->repl;
  return v;
}

static OVar *ovar(Opt *o, const SrType *t) {
  OVar *v = SR_NEW(o->a, OVar);
  v->type = t;
  return v;
}

static void push_eqn(Opt *o, OBody *b, OEqn *e) {
  if (b->neqn == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 16;
    OEqn **n = SR_NEWN(o->a, OEqn *, b->cap);
    if (b->neqn) memcpy(n, b->eqns, (size_t)b->neqn * sizeof *n);
    b->eqns = n;
  }
  b->eqns[b->neqn++] = e;
}

static SrVal *eparam(const SrParam *ps, int n, const char *key) {
  for (int i = 0; i < n; i++)
    if (ps[i].key == key) return ps[i].val;
  return NULL;
}

static int is_inlined_call(const SrEqn *e) { return (e->prim->flags & SR_PF_INLINE) != 0; }

static const SrJaxpr *call_body(const SrEqn *e) {
  SrVal *v = sr_eqn_param(e, k_jaxpr);
  if (!v) v = sr_eqn_param(e, k_call_jaxpr);
  if (!v) v = sr_eqn_param(e, sr_intern_cstr("fun_jaxpr"));
  return v && v->kind == SR_V_JAXPR ? v->jx.jaxpr : NULL;
}

/* ---- 1. import, inlining calls ---- */

static int type_sym(const SrType *t) {
  for (int d = 0; t && d < t->ndim; d++)
    if (t->dims[d].sym) return 1;
  return 0;
}

/* A body whose types name its own vars (dynamic shapes: f32[d] for an
   argument d) is not inlined: its types would need rewriting. */
static int body_sym(const SrJaxpr *j) {
  for (uint32_t i = 0; i < j->nin; i++)
    if (type_sym(j->invars[i]->type)) return 1;
  for (uint32_t k = 0; k < j->neqn; k++)
    for (uint32_t i = 0; i < j->eqns[k].nout; i++)
      if (type_sym(j->eqns[k].out[i]->type)) return 1;
  return 0;
}

static void import_into(Opt *o, OBody *b, const SrJaxpr *j, OVar **args);

static int inlinable(const SrEqn *e, const SrJaxpr *cb) {
  return cb && cb->nconst == 0 && sr_nargs(cb) == e->nin && cb->nout == e->nout && !body_sym(cb);
}

/* The equations of j with its calls inlined, nested bodies counted
   (saturating at SIZE_CAP); memoized, so shared bodies cost once. */
static uint64_t inlined_size(Opt *o, const SrJaxpr *j) {
  uint64_t *memo = pmap_slot(&o->size, j, 0);
  if (memo) return *memo - 1;
  uint64_t n = 0;
  for (uint32_t k = 0; k < j->neqn && n < SIZE_CAP; k++) {
    const SrEqn *e = &j->eqns[k];
    const SrJaxpr *cb = is_inlined_call(e) ? call_body(e) : NULL;
    if (inlinable(e, cb)) {
      n += inlined_size(o, cb);
      continue;
    }
    n++;
    SrJaxpr *subs[64];
    for (uint32_t p = 0; p < e->nparams; p++) {
      int ns = sr_param_jaxprs(e->params[p].val, subs, 64);
      for (int q = 0; q < ns && q < 64; q++) n += inlined_size(o, subs[q]);
    }
  }
  if (n > SIZE_CAP) n = SIZE_CAP;
  *pmap_slot(&o->size, j, 1) = n + 1;
  return n;
}

static OBody *import_body(Opt *o, const SrJaxpr *j) {
  OBody *b = SR_NEW(o->a, OBody);
  b->src = j;
  b->nin = (int)j->nin;
  b->in = SR_NEWN(o->a, OVar *, b->nin + 1);
  for (int i = 0; i < b->nin; i++) b->in[i] = ovar(o, j->invars[i]->type);
  import_into(o, b, j, b->in);
  return b;
}

/* The eqns of j appended to b, with j's inputs (constvars first) bound to
   args; b->out gets j's outputs when b is j's own body. */
static OVar **import_eqns(Opt *o, OBody *b, const SrJaxpr *j, OVar **args, const char *pre) {
  OVar **map = SR_NEWN(o->a, OVar *, j->nvars + 1);
  memset(map, 0, (j->nvars + 1) * sizeof *map);
  for (uint32_t i = 0; i < j->nin; i++) map[j->invars[i]->id] = args[i];
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    OVar **in = SR_NEWN(o->a, OVar *, e->nin + 1);
    for (uint32_t i = 0; i < e->nin; i++) {
      const SrVar *v = e->in[i];
      if (v->kind == SR_LIT) {
        OVar *l = ovar(o, v->type);
        l->lit = v;
        in[i] = l;
      } else {
        in[i] = map[v->id];
      }
    }
    const SrJaxpr *cb = is_inlined_call(e) ? call_body(e) : NULL;
    if (inlinable(e, cb) && (o->inline_all || inlined_size(o, cb) <= INLINE_SMALL)) {
      /* XLA inlines calls: the body's equations, here */
      OVar **outs = import_eqns(o, b, cb, in, sr_ns_concat(pre, e->ns));
      for (uint32_t i = 0; i < e->nout; i++)
        if (e->out[i]->kind != SR_DROP) map[e->out[i]->id] = outs[i];
      o->st.inlined++;
      continue;
    }
    OEqn *q = SR_NEW(o->a, OEqn);
    q->prim = e->prim;
    q->ns = sr_ns_concat(pre, e->ns);
    q->nin = (int)e->nin;
    q->nout = (int)e->nout;
    q->in = in;
    q->out = SR_NEWN(o->a, OVar *, e->nout + 1);
    q->params = e->params;
    q->nparams = (int)e->nparams;
    for (uint32_t i = 0; i < e->nout; i++) {
      q->out[i] = ovar(o, e->out[i]->type);
      if (e->out[i]->kind == SR_DROP) q->out[i]->drop = 1;
      else map[e->out[i]->id] = q->out[i];
    }
    if (e->prim->flags & SR_PF_MANUAL) {
      SrVal *jv = sr_eqn_param(e, k_jaxpr), *is = sr_eqn_param(e, k_in_specs), *os = sr_eqn_param(e, k_out_specs);
      if (jv && jv->kind == SR_V_JAXPR && jv->jx.jaxpr->nconst == 0 && is && sr_is_seq(is) &&
          is->seq.n == q->nin && os && sr_is_seq(os) && os->seq.n == q->nout) {
        q->body = import_body(o, jv->jx.jaxpr);
        q->in_specs = SR_NEWN(o->a, SrVal *, q->nin + 1);
        q->out_specs = SR_NEWN(o->a, SrVal *, q->nout + 1);
        for (int i = 0; i < q->nin; i++) q->in_specs[i] = is->seq.items[i];
        for (int i = 0; i < q->nout; i++) q->out_specs[i] = os->seq.items[i];
      }
    }
    push_eqn(o, b, q);
  }
  OVar **outs = SR_NEWN(o->a, OVar *, j->nout + 1);
  for (uint32_t i = 0; i < j->nout; i++) {
    const SrVar *v = j->outvars[i];
    if (v->kind == SR_LIT) {
      outs[i] = ovar(o, v->type);
      outs[i]->lit = v;
    } else {
      outs[i] = map[v->id];
    }
  }
  return outs;
}

static void import_into(Opt *o, OBody *b, const SrJaxpr *j, OVar **args) {
  b->out = import_eqns(o, b, j, args, NULL);
  b->nout = (int)j->nout;
}

static int count_eqns(const OBody *b) {
  int n = 0;
  for (int k = 0; k < b->neqn; k++) {
    if (b->eqns[k]->dead) continue;
    n++;
    if (b->eqns[k]->body) n += count_eqns(b->eqns[k]->body);
  }
  return n;
}

/* ---- 2. shard_map fusion ---- */

static int same_param(const OEqn *a, const OEqn *b, const char *key) {
  SrVal *x = eparam(a->params, a->nparams, key), *y = eparam(b->params, b->nparams, key);
  if (!x || !y) return x == y;
  return sr_val_equal(x, y);
}

static int spec_eq(SrVal *a, SrVal *b) { return a == b || sr_val_equal(a, b); }

/* Joins shard_map B (at ib) into A (at ia < ib) when nothing between them
   that depends on A feeds B.  Returns 1 when it did. */
static int fuse_pair(Opt *o, OBody *b, int ia, int ib) {
  OEqn *A = b->eqns[ia], *B = b->eqns[ib];
  if (!same_param(A, B, k_mesh) || !same_param(A, B, k_check_vma) || !same_param(A, B, k_manual) ||
      !same_param(A, B, k_axis_names))
    return 0;
  /* the equations between that depend on A */
  int n = ib - ia - 1;
  uint8_t *dep = SR_NEWN(o->a, uint8_t, n + 1);
  memset(dep, 0, (size_t)n + 1);
  for (int k = 0; k < A->nout; k++) find(A->out[k])->live = 2; /* a mark */
  for (int k = ia + 1; k < ib; k++) {
    OEqn *e = b->eqns[k];
    if (e->dead) continue;
    int d = 0;
    for (int i = 0; i < e->nin && !d; i++) d = find(e->in[i])->live == 2;
    if (d) {
      dep[k - ia - 1] = 1;
      for (int i = 0; i < e->nout; i++) find(e->out[i])->live = 2;
    }
  }
  int ok = 1;
  for (int i = 0; i < B->nin && ok; i++) {
    OVar *v = find(B->in[i]);
    if (v->live != 2) continue;
    int k;
    for (k = 0; k < A->nout; k++)
      if (find(A->out[k]) == v) break;
    ok = k < A->nout && spec_eq(A->out_specs[k], B->in_specs[i]);
  }
  /* clear the marks */
  for (int k = 0; k < A->nout; k++) find(A->out[k])->live = 0;
  for (int k = ia + 1; k < ib; k++)
    for (int i = 0; i < b->eqns[k]->nout; i++) find(b->eqns[k]->out[i])->live = 0;
  if (!ok) return 0;
  /* B's body inputs: A's results or operands (the same value in the same
     spec), or new operands of the joined shard_map */
  OBody *ab = A->body, *bb = B->body;
  int nin = A->nin + B->nin;
  OVar **in = SR_NEWN(o->a, OVar *, nin + 1), **bin = SR_NEWN(o->a, OVar *, nin + 1);
  SrVal **ispec = SR_NEWN(o->a, SrVal *, nin + 1);
  memcpy(in, A->in, (size_t)A->nin * sizeof *in);
  memcpy(bin, ab->in, (size_t)A->nin * sizeof *bin);
  memcpy(ispec, A->in_specs, (size_t)A->nin * sizeof *ispec);
  int m = A->nin;
  for (int i = 0; i < B->nin; i++) {
    OVar *v = find(B->in[i]);
    OVar *to = NULL;
    for (int k = 0; k < A->nout && !to; k++)
      if (find(A->out[k]) == v && spec_eq(A->out_specs[k], B->in_specs[i])) to = ab->out[k];
    for (int k = 0; k < m && !to; k++)
      if (find(in[k]) == v && spec_eq(ispec[k], B->in_specs[i])) to = bin[k];
    if (to) {
      bb->in[i]->repl = find(to);
    } else {
      in[m] = B->in[i];
      bin[m] = bb->in[i];
      ispec[m] = B->in_specs[i];
      m++;
    }
  }
  int nout = A->nout + B->nout;
  OVar **out = SR_NEWN(o->a, OVar *, nout + 1), **bout = SR_NEWN(o->a, OVar *, nout + 1);
  SrVal **ospec = SR_NEWN(o->a, SrVal *, nout + 1);
  memcpy(out, A->out, (size_t)A->nout * sizeof *out);
  memcpy(out + A->nout, B->out, (size_t)B->nout * sizeof *out);
  memcpy(bout, ab->out, (size_t)A->nout * sizeof *bout);
  memcpy(bout + A->nout, bb->out, (size_t)B->nout * sizeof *bout);
  memcpy(ospec, A->out_specs, (size_t)A->nout * sizeof *ospec);
  memcpy(ospec + A->nout, B->out_specs, (size_t)B->nout * sizeof *ospec);
  OBody *nb = SR_NEW(o->a, OBody);
  nb->src = ab->src;
  nb->nin = m;
  nb->in = bin;
  nb->nout = nout;
  nb->out = bout;
  for (int k = 0; k < ab->neqn; k++) push_eqn(o, nb, ab->eqns[k]);
  for (int k = 0; k < bb->neqn; k++) push_eqn(o, nb, bb->eqns[k]);
  OEqn *J = SR_NEW(o->a, OEqn);
  *J = *A;
  J->nin = m;
  J->in = in;
  J->in_specs = ispec;
  J->nout = nout;
  J->out = out;
  J->out_specs = ospec;
  J->body = nb;
  /* the order: before A; between, not depending on A; J; between,
     depending on A; after B */
  OEqn **order = SR_NEWN(o->a, OEqn *, b->neqn + 1);
  int w = 0;
  for (int k = 0; k < ia; k++) order[w++] = b->eqns[k];
  for (int k = ia + 1; k < ib; k++)
    if (!dep[k - ia - 1]) order[w++] = b->eqns[k];
  order[w++] = J;
  for (int k = ia + 1; k < ib; k++)
    if (dep[k - ia - 1]) order[w++] = b->eqns[k];
  for (int k = ib + 1; k < b->neqn; k++) order[w++] = b->eqns[k];
  b->eqns = order;
  b->neqn = w;
  b->cap = w;
  o->st.fused++;
  return 1;
}

static void fuse(Opt *o, OBody *b) {
  for (int again = 1; again;) {
    again = 0;
    for (int ia = 0; ia < b->neqn && !again; ia++) {
      if (!b->eqns[ia]->body || b->eqns[ia]->dead) continue;
      for (int ib = ia + 1; ib < b->neqn && !again; ib++)
        if (b->eqns[ib]->body && !b->eqns[ib]->dead && b->eqns[ib]->prim == b->eqns[ia]->prim)
          again = fuse_pair(o, b, ia, ib);
    }
  }
  for (int k = 0; k < b->neqn; k++)
    if (b->eqns[k]->body) fuse(o, b->eqns[k]->body);
}

/* ---- 3. CSE ---- */

static int lit_equal(const SrVar *a, const SrVar *b) {
  if (a->type != b->type) return 0;
  if (a->text && b->text) return strcmp(a->text, b->text) == 0;
  return memcmp(&a->val, &b->val, sizeof a->val) == 0;
}

static int atom_equal(OVar *x, OVar *y) {
  x = find(x);
  y = find(y);
  if (x == y) return 1;
  return x->lit && y->lit && lit_equal(x->lit, y->lit);
}

static int params_equal(const OEqn *a, const OEqn *b) {
  if (a->nparams != b->nparams) return 0;
  for (int i = 0; i < a->nparams; i++)
    if (a->params[i].key != b->params[i].key || !sr_val_equal(a->params[i].val, b->params[i].val)) return 0;
  return 1;
}

/* Equations CSE leaves alone: bodies, and rows that say so (barriers,
   fresh seeds, what has effects). */
static int no_cse(const OEqn *e) { return e->body || (e->prim->flags & (SR_PF_NO_CSE | SR_PF_EFFECT)); }

static uint64_t eqn_hash(const OEqn *e) {
  uint64_t h = (uint64_t)(uintptr_t)e->prim * 1099511628211ull;
  for (int i = 0; i < e->nin; i++) {
    OVar *v = find(e->in[i]);
    uint64_t x = v->lit ? (uint64_t)(uintptr_t)v->type * 31 + (uint64_t)v->lit->val.i : (uint64_t)(uintptr_t)v;
    h = (h ^ x) * 1099511628211ull;
  }
  return h ^ (uint64_t)e->nout;
}

static void cse(Opt *o, OBody *b) {
  int cap = 16;
  while (cap < 2 * b->neqn + 2) cap *= 2;
  OEqn **tab = SR_NEWN(o->a, OEqn *, cap);
  memset(tab, 0, (size_t)cap * sizeof *tab);
  for (int k = 0; k < b->neqn; k++) {
    OEqn *e = b->eqns[k];
    if (e->dead) continue;
    if (e->body) {
      cse(o, e->body);
      continue;
    }
    if (no_cse(e)) continue;
    uint64_t h = eqn_hash(e);
    size_t s = (size_t)(h & (uint64_t)(cap - 1));
    OEqn *hit = NULL;
    for (; tab[s]; s = (s + 1) & (size_t)(cap - 1)) {
      OEqn *p = tab[s];
      if (p->prim != e->prim || p->nin != e->nin || p->nout != e->nout) continue;
      int same = 1;
      for (int i = 0; i < e->nin && same; i++) same = atom_equal(p->in[i], e->in[i]);
      for (int i = 0; i < e->nout && same; i++) same = p->out[i]->type == e->out[i]->type;
      if (same && params_equal(p, e)) {
        hit = p;
        break;
      }
    }
    if (!hit) {
      tab[s] = e;
      continue;
    }
    for (int i = 0; i < e->nout; i++) e->out[i]->repl = find(hit->out[i]);
    e->dead = 1;
    o->st.cse++;
  }
}

/* ---- 4. DCE ---- */

static int has_effects(const OEqn *e) {
  return (e->prim->flags & SR_PF_EFFECT) || sr_prim_has_effect(e->prim, e->params, (uint32_t)e->nparams);
}

static void dce(Opt *o, OBody *b) {
  for (int i = 0; i < b->nout; i++) find(b->out[i])->live = 1;
  for (int k = b->neqn - 1; k >= 0; k--) {
    OEqn *e = b->eqns[k];
    if (e->dead) continue;
    int any = 0;
    for (int i = 0; i < e->nout; i++) any |= find(e->out[i])->live;
    if (!any) any = has_effects(e);
    if (!any) {
      e->dead = 1;
      o->st.dce++;
      continue;
    }
    if (e->body) {
      /* drop the unused results, then the operands the body no longer
         reads */
      OBody *sb = e->body;
      int w = 0;
      for (int i = 0; i < e->nout; i++)
        if (find(e->out[i])->live) {
          e->out[w] = e->out[i];
          sb->out[w] = sb->out[i];
          e->out_specs[w] = e->out_specs[i];
          w++;
        }
      e->nout = sb->nout = w;
      for (int i = 0; i < sb->nin; i++) sb->in[i]->live = 0;
      dce(o, sb);
      w = 0;
      for (int i = 0; i < e->nin; i++)
        if (sb->in[i]->live) {
          e->in[w] = e->in[i];
          sb->in[w] = sb->in[i];
          e->in_specs[w] = e->in_specs[i];
          w++;
        }
      e->nin = sb->nin = w;
    }
    for (int i = 0; i < e->nin; i++) find(e->in[i])->live = 1;
  }
}

/* ---- emitting the result ---- */

static SrVar *emit_atom(SrJaxprBuilder *jb, OVar *v) {
  v = find(v);
  if (v->lit) return (SrVar *)v->lit;
  if (!v->emitted) v->emitted = sr_jb_var(jb, v->type);
  return v->emitted;
}

static SrJaxpr *emit_body(Opt *o, OBody *b, int top);
static SrVal *opt_param(Opt *o, SrVal *v);

static SrVal *spec_tuple(Opt *o, SrVal **specs, int n) {
  SrVal *t = sr_seq(o->prog->arena, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(o->prog->arena, t, sr_val_to_prog(o->prog, specs[i]));
  return t;
}

/* The jaxprs in a param of an equation the pass does not open (scan,
   while and cond bodies, remat): each optimized on its own, with the same
   inputs and outputs. */
static SrVal *opt_param(Opt *o, SrVal *v) {
  if (v->kind == SR_V_JAXPR) {
    /* once per source jaxpr: the equations sharing it share the result */
    uint64_t *done = pmap_slot(&o->done, v->jx.jaxpr, 0);
    if (done) return sr_jaxpr_val(o->prog->arena, (SrJaxpr *)(uintptr_t)*done);
    OBody *b = import_body(o, v->jx.jaxpr);
    fuse(o, b);
    cse(o, b);
    dce(o, b);
    SrJaxpr *r = emit_body(o, b, 1);
    *pmap_slot(&o->done, v->jx.jaxpr, 1) = (uint64_t)(uintptr_t)r;
    return sr_jaxpr_val(o->prog->arena, r);
  }
  SrJaxpr *subs[1];
  if ((v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) && sr_param_jaxprs(v, subs, 1) > 0) {
    SrVal *t = sr_seq(o->prog->arena, v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) sr_seq_push(o->prog->arena, t, opt_param(o, v->seq.items[i]));
    return t;
  }
  return sr_val_to_prog(o->prog, v);
}

static SrJaxpr *emit_body(Opt *o, OBody *b, int top) {
  SrJaxprBuilder jb;
  sr_jb_init(&jb, o->prog);
  uint32_t nc = top ? b->src->nconst : 0;
  for (int i = 0; i < b->nin; i++) {
    OVar *v = b->in[i];
    v->emitted = sr_jb_var(&jb, v->type);
    if ((uint32_t)i < nc) {
      SrVal *c = b->src->consts ? b->src->consts[i] : NULL;
      sr_jb_constvar(&jb, v->emitted, c);
    } else {
      sr_jb_invar(&jb, v->emitted);
    }
  }
  for (int k = 0; k < b->neqn; k++) {
    OEqn *e = b->eqns[k];
    if (e->dead) continue;
    SrVar **in = SR_NEWN(o->a, SrVar *, e->nin + 1), **out = SR_NEWN(o->a, SrVar *, e->nout + 1);
    for (int i = 0; i < e->nin; i++) in[i] = emit_atom(&jb, e->in[i]);
    SrParam *ps = SR_NEWN(o->a, SrParam, e->nparams + 1);
    for (int i = 0; i < e->nparams; i++) {
      ps[i].key = e->params[i].key;
      SrVal *v = e->params[i].val;
      if (e->body && ps[i].key == k_jaxpr) v = sr_jaxpr_val(o->prog->arena, emit_body(o, e->body, 0));
      else if (e->body && ps[i].key == k_in_specs) v = spec_tuple(o, e->in_specs, e->nin);
      else if (e->body && ps[i].key == k_out_specs) v = spec_tuple(o, e->out_specs, e->nout);
      else v = opt_param(o, v);
      ps[i].val = v;
    }
    for (int i = 0; i < e->nout; i++) {
      OVar *v = e->out[i];
      /* results nobody reads print as `_` */
      v->emitted = !v->live ? sr_jb_drop(&jb, v->type) : sr_jb_var(&jb, v->type);
      out[i] = v->emitted;
    }
    sr_jb_eqn(&jb, e->prim, (uint32_t)e->nin, in, (uint32_t)e->nout, out, (uint32_t)e->nparams, ps)->ns = e->ns;
  }
  for (int i = 0; i < b->nout; i++) sr_jb_outvar(&jb, emit_atom(&jb, b->out[i]));
  SrJaxpr *r = sr_jb_finish(&jb);
  r->name = b->src->name;
  return r;
}

/* ---- the text listing ---- */

/* The HLO opcode of an equation: its row's, else its name with `-` for `_`. */
static const char *opcode(const SrPrim *p, char *buf, size_t n) {
  if (p->hlo) return p->hlo;
  snprintf(buf, n, "%s", p->name);
  for (char *c = buf; *c; c++)
    if (*c == '_') *c = '-';
  return buf;
}

typedef struct Txt {
  SrBuf *b;
  int next;              /* the next value number */
  PMap printed;          /* a call's body printed in full -> its path (char *) */
} Txt;

static void txt_jaxpr(Txt *t, const SrJaxpr *j, int *ids, const char *path, int depth);

static void indent(SrBuf *b, int d) {
  for (int i = 0; i < d; i++) sr_buf_puts(b, "  ");
}

static void txt_atom(Txt *t, const SrVar *v, const int *ids) {
  if (v->kind == SR_LIT) {
    sr_lit_value_text(t->b, v);
    sr_buf_printf(t->b, ":%s", v->type ? sr_type_short(v->type) : "?");
  } else {
    sr_buf_printf(t->b, "%%%d", ids[v->id]);
  }
}

/* op_name paths, as XLA's metadata names them (jit(f)/shard_map/...): the
   equation's segment, then its body's (the rows' op_name rules) */
static void sub_path(SrBuf *b, const char *path, const SrEqn *e, const char *key, int s) {
  char buf[160];
  sr_buf_printf(b, "%s/%s%s%s", path, e->ns ? e->ns : "", e->ns ? "/" : "",
                sr_prim_op_name(e->prim, e->params, e->nparams, NULL, 0, buf, sizeof buf));
  const char *sub = sr_prim_op_name(e->prim, e->params, e->nparams, key, s, buf, sizeof buf);
  if (sub) sr_buf_printf(b, "/%s", sub);
}

/* op_name="...": the path (its segments and the equations' name stacks)
   with e's name stack and its primitive, rendered as JAX's NameStack
   (ir/name_stack.h) */
static void op_name(SrBuf *b, const char *path, const SrEqn *e) {
  SrBuf raw = SR_BUF_INIT;
  sr_buf_printf(&raw, "%s/%s%s%s", path, e->ns ? e->ns : "", e->ns ? "/" : "", e->prim->name);
  sr_buf_puts(b, ", op_name=\"");
  sr_ns_render_op(b, sr_buf_str(&raw));
  sr_buf_putc(b, '"');
  sr_buf_free(&raw);
}

/* The communication explicit sharding makes of an equation (a contraction
   or reduction over sharded dims, a reshard): a line of its own after the
   equation's, as XLA's SPMD partitioner adds the collective
   (:comm-static's classification: the rows' comm rules, prims/prim.h). */
static void implied(Txt *t, const SrEqn *e, int *ids, const char *path, int depth) {
  SrCommNote notes[4];
  int n = sr_prim_comm_notes(e, notes, 4);
  for (int i = 0; i < n && i < 4; i++) {
    if (!notes[i].mesh || !e->nout) continue;
    const char *w = notes[i].what, *paren = strstr(w, " (");
    int kl = paren ? (int)(paren - w) : (int)strlen(w);
    SrBuf *b = t->b;
    int id = t->next++;
    indent(b, depth);
    sr_buf_printf(b, "%%%d:%s = %.*s(", id, sr_type_short(e->out[0]->type), kl, w);
    if (e->out[0]->kind == SR_DROP) {
      sr_buf_puts(b, "_");
    } else {
      /* the equation's result is the collective's: later uses read it */
      sr_buf_printf(b, "%%%d", ids[e->out[0]->id]);
      ids[e->out[0]->id] = id;
    }
    sr_buf_puts(b, "), axes=(");
    int k = 0;
    for (int a = 0; a < notes[i].mesh->n; a++)
      if (notes[i].axes & (1u << a)) sr_buf_printf(b, k++ ? ", '%s'" : "'%s'", notes[i].mesh->names[a]);
    sr_buf_printf(b, "%s), implied_by=\"%s%s\"", k == 1 ? "," : "", e->prim->name, paren ? paren : "");
    op_name(b, path, e);
    sr_buf_putc(b, '\n');
  }
}

static void txt_eqn(Txt *t, const SrEqn *e, int *ids, const char *path, int depth) {
  SrBuf *b = t->b;
  char op[64];
  indent(b, depth);
  for (uint32_t i = 0; i < e->nout; i++) {
    if (i) sr_buf_puts(b, ", ");
    if (e->out[i]->kind == SR_DROP) {
      sr_buf_printf(b, "_:%s", sr_type_short(e->out[i]->type));
    } else {
      ids[e->out[i]->id] = t->next++;
      sr_buf_printf(b, "%%%d:%s", ids[e->out[i]->id], sr_type_short(e->out[i]->type));
    }
  }
  sr_buf_printf(b, " = %s(", opcode(e->prim, op, sizeof op));
  for (uint32_t i = 0; i < e->nin; i++) {
    if (i) sr_buf_puts(b, ", ");
    txt_atom(t, e->in[i], ids);
  }
  sr_buf_putc(b, ')');
  SrJaxpr *subs[64];
  int nsub = 0;
  for (uint32_t p = 0; p < e->nparams; p++) {
    int ns = sr_param_jaxprs(e->params[p].val, subs, 64);
    if (ns > 0) {
      nsub += ns;
      continue;
    }
    sr_buf_printf(b, ", %s=", e->params[p].key);
    sr_val_repr(b, e->params[p].val);
  }
  op_name(b, path, e);
  /* a call's body is listed once, as HLO lists a computation once: later
     calls of it name the first listing's path */
  const SrJaxpr *cb = is_inlined_call(e) && nsub == 1 ? call_body(e) : NULL;
  uint64_t *seen = cb ? pmap_slot(&t->printed, cb, 0) : NULL;
  if (seen) {
    sr_buf_puts(b, ", to_apply=\"");
    sr_ns_render(b, (const char *)(uintptr_t)*seen);
    sr_buf_puts(b, "\"\n");
    return;
  }
  if (cb) {
    SrBuf sp = SR_BUF_INIT;
    sub_path(&sp, path, e, "jaxpr", 0);
    *pmap_slot(&t->printed, cb, 1) = (uint64_t)(uintptr_t)sr_xstrdup(sr_buf_str(&sp));
    sr_buf_free(&sp);
  }
  if (!nsub) {
    sr_buf_putc(b, '\n');
    implied(t, e, ids, path, depth);
    return;
  }
  sr_buf_puts(b, " {\n");
  for (uint32_t p = 0; p < e->nparams; p++) {
    int ns = sr_param_jaxprs(e->params[p].val, subs, 64);
    for (int s = 0; s < ns && s < 64; s++) {
      SrBuf sp = SR_BUF_INIT;
      sub_path(&sp, path, e, e->params[p].key, s);
      indent(b, depth + 1);
      sr_buf_printf(b, "%s:\n", e->params[p].key);
      int *sids = sr_xcalloc(subs[s]->nvars + 1, sizeof *sids);
      txt_jaxpr(t, subs[s], sids, sr_buf_str(&sp), depth + 2);
      free(sids);
      sr_buf_free(&sp);
    }
  }
  indent(b, depth);
  sr_buf_puts(b, "}\n");
}

static void txt_jaxpr(Txt *t, const SrJaxpr *j, int *ids, const char *path, int depth) {
  SrBuf *b = t->b;
  indent(b, depth);
  sr_buf_putc(b, '(');
  for (uint32_t i = 0; i < j->nin; i++) {
    ids[j->invars[i]->id] = t->next++;
    sr_buf_printf(b, "%s%%%d:%s", i ? ", " : "", ids[j->invars[i]->id], sr_type_short(j->invars[i]->type));
  }
  sr_buf_puts(b, ")\n");
  for (uint32_t k = 0; k < j->neqn; k++) txt_eqn(t, &j->eqns[k], ids, path, depth);
  indent(b, depth);
  sr_buf_puts(b, "return (");
  for (uint32_t i = 0; i < j->nout; i++) {
    if (i) sr_buf_puts(b, ", ");
    txt_atom(t, j->outvars[i], ids);
  }
  sr_buf_puts(b, ")\n");
}

static void text_of(const SrJaxpr *j, const char *name, const char *what, const SrOptStats *st, SrBuf *out) {
  sr_buf_printf(out, "// shardrepl program jit(%s), %s", name ? name : "", what);
  if (st)
    sr_buf_printf(out, ": %d equation%s (was %lld): inlined %d call%s, fused %d shard_map%s, merged %d (CSE), removed "
                       "%d (DCE)",
                  st->eqns_out, st->eqns_out == 1 ? "" : "s", (long long)st->eqns_in, st->inlined, st->inlined == 1 ? "" : "s",
                  st->fused, st->fused == 1 ? "" : "s", st->cse, st->dce);
  sr_buf_puts(out, "\nmain {\n");
  Txt t = {out, 0, {0}};
  int *ids = sr_xcalloc(j->nvars + 1, sizeof *ids);
  SrBuf path = SR_BUF_INIT;
  sr_buf_printf(&path, "jit(%s)", name ? name : "");
  txt_jaxpr(&t, j, ids, sr_buf_str(&path), 1);
  sr_buf_free(&path);
  for (size_t i = 0; i < t.printed.cap; i++)
    if (t.printed.keys[i]) free((char *)(uintptr_t)t.printed.vals[i]);
  pmap_free(&t.printed);
  free(ids);
  sr_buf_puts(out, "}\n");
}

void sr_opt_text(const SrJaxpr *j, const char *name, SrBuf *text) { text_of(j, name, "as traced", NULL, text); }

static void keys_init(void) {
  if (k_jaxpr) return;
  k_jaxpr = sr_intern_cstr("jaxpr");
  k_call_jaxpr = sr_intern_cstr("call_jaxpr");
  k_in_specs = sr_intern_cstr("in_specs");
  k_out_specs = sr_intern_cstr("out_specs");
  k_mesh = sr_intern_cstr("mesh");
  k_check_vma = sr_intern_cstr("check_vma");
  k_manual = sr_intern_cstr("newly_manual_axes");
  k_axis_names = sr_intern_cstr("axis_names");
}

/* The equations of j, nested ones counted once per use (saturating);
   memoized in m, so that a shared body is walked once. */
static uint64_t count_src(PMap *m, const SrJaxpr *j) {
  uint64_t *memo = pmap_slot(m, j, 0);
  if (memo) return *memo - 1;
  uint64_t n = 0;
  for (uint32_t k = 0; k < j->neqn && n < SIZE_CAP; k++) {
    const SrEqn *e = &j->eqns[k];
    n++;
    SrJaxpr *subs[64];
    for (uint32_t p = 0; p < e->nparams; p++) {
      int ns = sr_param_jaxprs(e->params[p].val, subs, 64);
      for (int s = 0; s < ns && s < 64; s++) n += count_src(m, subs[s]);
    }
  }
  if (n > SIZE_CAP) n = SIZE_CAP;
  *pmap_slot(m, j, 1) = n + 1;
  return n;
}

SrJaxpr *sr_opt_optimize(const SrJaxpr *j, const char *name, SrBuf *text, SrOptStats *stats) {
  keys_init();
  Opt o = {0};
  o.a = sr_arena_new();
  o.prog = sr_program_new();
  sr_program_dep(o.prog, j->prog);
  PMap cm = {0};
  uint64_t nsrc = count_src(&cm, j);
  pmap_free(&cm);
  o.st.eqns_in = (int64_t)nsrc;
  o.inline_all = inlined_size(&o, j) <= INLINE_BUDGET;
  OBody *b = import_body(&o, j);
  fuse(&o, b);
  cse(&o, b);
  dce(&o, b);
  o.st.eqns_out = count_eqns(b);
  SrJaxpr *r = emit_body(&o, b, 1);
  o.prog->top = r;
  if (text) text_of(r, name, "optimized", &o.st, text);
  if (stats) *stats = o.st;
  pmap_free(&o.size);
  pmap_free(&o.done);
  sr_arena_free(o.a);
  return r;
}
