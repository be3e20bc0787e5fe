/* fold.c: transposes folded into the dot_generals beside them (fold.h).
 *
 * The plan looks at each dot_general once: which of its operands is a
 * transpose's result used by it alone, and whether its result's one use
 * is a transpose that swaps its free dims.  It writes the rewritten dot
 * (operands, dimension numbers, result) into an arena of its own; the
 * walk then runs the rewrite in the dot's place and skips the folded
 * transposes. */
#include "exec/fold.h"

#include <stdlib.h>
#include <string.h>

#include "check/rule.h"
#include "ir/val.h"
#include "prims/prim.h"
#include "util/env.h"
#include "util/intern.h"
#include "util/mem.h"

SrEvFold sr_ev_fold;

static long nfolded;

long sr_fold_count(void) { return __atomic_load_n(&nfolded, __ATOMIC_RELAXED); }

struct SrFold {
  SrArena *a;
  const SrEqn **run;   /* per equation: what runs (NULL: folded away) */
  const SrEqn **alt;   /* per dot with an operand folded in: the rewrite
                          without that fold, should its transpose run */
  int32_t *tdot;       /* per transpose folded into an operand: its dot */
  int32_t *xlast;      /* ... and its input's last use before the plan */
};

static int fold_enabled(void) {
  static int on = -1;
  return sr_env_on("SHARDREPL_FOLD", &on);
}

typedef struct Dims {
  int nc, nb;
  int lc[SR_MAX_RANK], rc[SR_MAX_RANK], lb[SR_MAX_RANK], rb[SR_MAX_RANK];
} Dims;

static int ints(const SrVal *v, int *out, int *n) {
  int64_t t[SR_MAX_RANK];
  if (!v || sr_val_ints(v, t, SR_MAX_RANK, n) < 0) return -1;
  for (int i = 0; i < *n; i++) out[i] = (int)t[i];
  return 0;
}

/* dimension_numbers=(((lc), (rc)), ((lb), (rb))) */
static int dims_of(const SrEqn *e, Dims *d) {
  const SrVal *v = sr_params_find(e->params, e->nparams, "dimension_numbers");
  if (!v || !sr_is_seq(v) || v->seq.n != 2) return -1;
  const SrVal *c = v->seq.items[0], *b = v->seq.items[1];
  if (!sr_is_seq(c) || !sr_is_seq(b) || c->seq.n != 2 || b->seq.n != 2) return -1;
  int n1, n2, n3, n4;
  if (ints(c->seq.items[0], d->lc, &n1) < 0 || ints(c->seq.items[1], d->rc, &n2) < 0 ||
      ints(b->seq.items[0], d->lb, &n3) < 0 || ints(b->seq.items[1], d->rb, &n4) < 0 || n1 != n2 || n3 != n4)
    return -1;
  d->nc = n1;
  d->nb = n3;
  return 0;
}

static int perm_of(const SrEqn *t, int *perm) {
  int n;
  const SrVal *v = sr_params_find(t->params, t->nparams, "permutation");
  if (ints(v, perm, &n) < 0 || t->nin != 1 || t->nout != 1 || n != t->in[0]->type->ndim) return -1;
  return n;
}

static int contains(const int *a, int n, int x) {
  for (int i = 0; i < n; i++)
    if (a[i] == x) return 1;
  return 0;
}

/* An operand's free dims, in order (those neither batch nor contracting). */
static int free_dims(int nd, const int *b, int nb, const int *c, int nc, int *f) {
  int n = 0;
  for (int i = 0; i < nd; i++)
    if (!contains(b, nb, i) && !contains(c, nc, i)) f[n++] = i;
  return n;
}

/* Whether dims a (n of them) then b then c are 0, 1, ..., in order. */
static int in_order(const int *a, int na, const int *b, int nb, const int *c, int nc) {
  int k = 0;
  for (int i = 0; i < na; i++)
    if (a[i] != k++) return 0;
  for (int i = 0; i < nb; i++)
    if (b[i] != k++) return 0;
  for (int i = 0; i < nc; i++)
    if (c[i] != k++) return 0;
  return 1;
}

/* Operand side s of a dot read through a transpose of perm (n dims): its
   batch and contracting dims mapped to the transpose's input, when its
   free dims keep their order and the kernel then reads the input with a
   transpose flag at most (kern_dot.c's two orders); else 0. */
static int fold_operand(Dims *d, int s, const int *perm, int n) {
  int *b = s ? d->rb : d->lb, *c = s ? d->rc : d->lc;
  int f[SR_MAX_RANK], nf = free_dims(n, b, d->nb, c, d->nc, f);
  int b2[SR_MAX_RANK], c2[SR_MAX_RANK], f2[SR_MAX_RANK];
  for (int i = 0; i < d->nb; i++) b2[i] = perm[b[i]];
  for (int i = 0; i < d->nc; i++) c2[i] = perm[c[i]];
  for (int i = 0; i < nf; i++) {
    f2[i] = perm[f[i]];
    if (i && f2[i] < f2[i - 1]) return 0;
  }
  if (!in_order(b2, d->nb, f2, nf, c2, d->nc) && !in_order(b2, d->nb, c2, d->nc, f2, nf)) return 0;
  memcpy(b, b2, (size_t)d->nb * sizeof *b);
  memcpy(c, c2, (size_t)d->nc * sizeof *c);
  return 1;
}

/* Whether perm (n dims) swaps a dot's lhs-free and rhs-free dims. */
static int swaps_free(const Dims *d, int lnd, int rnd, const int *perm, int n) {
  int nlf = lnd - d->nb - d->nc, nrf = rnd - d->nb - d->nc;
  if (n != d->nb + nlf + nrf || !nlf || !nrf) return 0;
  for (int k = 0; k < d->nb; k++)
    if (perm[k] != k) return 0;
  for (int i = 0; i < nrf; i++)
    if (perm[d->nb + i] != d->nb + nlf + i) return 0;
  for (int i = 0; i < nlf; i++)
    if (perm[d->nb + nrf + i] != d->nb + i) return 0;
  return 1;
}

static SrVal *int_tuple(SrArena *a, const int *v, int n) {
  SrVal *t = sr_seq(a, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(a, t, sr_int(a, v[i]));
  return t;
}

static SrVal *pair(SrArena *a, SrVal *x, SrVal *y) {
  SrVal *t = sr_seq(a, SR_V_TUPLE, 2);
  sr_seq_push(a, t, x);
  sr_seq_push(a, t, y);
  return t;
}

/* dot q rewritten: operands x, y, dims d, result out. */
static const SrEqn *rewrite(SrArena *a, const SrEqn *q, SrVar *x, SrVar *y, const Dims *d, SrVar *out) {
  SrEqn *e = SR_NEW(a, SrEqn);
  *e = *q;
  e->in = SR_NEWN(a, SrVar *, 2);
  e->in[0] = x;
  e->in[1] = y;
  e->out = SR_NEWN(a, SrVar *, 1);
  e->out[0] = out;
  e->params = SR_NEWN(a, SrParam, q->nparams);
  const char *key = sr_intern_cstr("dimension_numbers");
  for (uint32_t i = 0; i < q->nparams; i++) {
    e->params[i] = q->params[i];
    if (q->params[i].key == key)
      e->params[i].val = pair(a, pair(a, int_tuple(a, d->lc, d->nc), int_tuple(a, d->rc, d->nc)),
                              pair(a, int_tuple(a, d->lb, d->nb), int_tuple(a, d->rb, d->nb)));
  }
  return e;
}

static Dims swapped(const Dims *d) {
  Dims s = *d;
  memcpy(s.lc, d->rc, sizeof s.lc);
  memcpy(s.rc, d->lc, sizeof s.rc);
  memcpy(s.lb, d->rb, sizeof s.lb);
  memcpy(s.rb, d->lb, sizeof s.rb);
  return s;
}

SrFold *sr_fold_plan(const SrJaxpr *j, const uint8_t *dead, int32_t *last) {
  if (!sr_ev_fold.on || !fold_enabled()) return NULL;
  int any = 0;
  for (uint32_t k = 0; k < j->neqn && !any; k++)
    any = j->eqns[k].prim->id == sr_ev_fold.transpose && !(dead && dead[k]);
  if (!any) return NULL;
  uint32_t nv = j->nvars + 1;
  int32_t *uses = sr_xcalloc(nv, sizeof *uses), *def = sr_xmalloc(nv * sizeof *def), *user = sr_xmalloc(nv * sizeof *user);
  for (uint32_t i = 0; i < nv; i++) def[i] = user[i] = -1;
  for (uint32_t i = 0; i < j->nout; i++)
    if (j->outvars[i]->kind == SR_VAR) uses[j->outvars[i]->id] += 2;
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *q = &j->eqns[k];
    if (dead && dead[k]) continue;
    for (uint32_t i = 0; i < q->nin; i++)
      if (q->in[i]->kind == SR_VAR) {
        uses[q->in[i]->id]++;
        user[q->in[i]->id] = (int32_t)k;
      }
    for (uint32_t i = 0; i < q->nout; i++)
      if (q->out[i]->kind == SR_VAR) def[q->out[i]->id] = (int32_t)k;
  }
  SrFold *f = NULL;
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *q = &j->eqns[k];
    Dims d;
    if ((dead && dead[k]) || q->prim->id != sr_ev_fold.dot || q->nin != 2 || q->nout != 1 || dims_of(q, &d) < 0)
      continue;
    SrVar *in[2] = {q->in[0], q->in[1]}, *out = q->out[0];
    int lnd = in[0]->type->ndim, rnd = in[1]->type->ndim, perm[SR_MAX_RANK], n;
    /* an operand through a transpose */
    int side = -1;
    int32_t t = -1;
    for (int s = 0; s < 2 && side < 0; s++) {
      const SrVar *v = in[s];
      if (v->kind != SR_VAR || uses[v->id] != 1 || (t = def[v->id]) < 0) continue;
      if (f && !f->run[t]) continue; /* an earlier dot's result already */
      const SrEqn *tq = &j->eqns[t];
      if (tq->prim->id != sr_ev_fold.transpose || tq->in[0]->kind != SR_VAR || (n = perm_of(tq, perm)) < 0) continue;
      if (fold_operand(&d, s, perm, n)) side = s;
    }
    /* the result through a transpose */
    int32_t u = -1;
    if (out->kind == SR_VAR && uses[out->id] == 1 && (u = user[out->id]) >= 0) {
      const SrEqn *tq = &j->eqns[u];
      if (tq->prim->id != sr_ev_fold.transpose || (n = perm_of(tq, perm)) < 0 || !swaps_free(&d, lnd, rnd, perm, n))
        u = -1;
    }
    if (side < 0 && u < 0) continue;
    if (!f) {
      f = sr_xcalloc(1, sizeof *f);
      f->a = sr_arena_new();
      f->run = sr_xmalloc(j->neqn * sizeof *f->run);
      f->alt = sr_xcalloc(j->neqn, sizeof *f->alt);
      f->tdot = sr_xmalloc(j->neqn * sizeof *f->tdot);
      f->xlast = sr_xmalloc(j->neqn * sizeof *f->xlast);
      for (uint32_t i = 0; i < j->neqn; i++) {
        f->run[i] = &j->eqns[i];
        f->tdot[i] = -1;
      }
    }
    const SrEqn *no_in = q;
    if (u >= 0) {
      Dims d0;
      dims_of(q, &d0);
      Dims s0 = swapped(&d0);
      no_in = rewrite(f->a, q, in[1], in[0], &s0, j->eqns[u].out[0]);
      f->run[u] = NULL;
    }
    if (side >= 0) {
      SrVar *x = j->eqns[t].in[0];
      in[side] = x;
      f->tdot[t] = (int32_t)k;
      f->xlast[t] = last[x->id];
      if (last[x->id] != SR_LAST_OUT && last[x->id] < (int32_t)k) last[x->id] = (int32_t)k;
      f->alt[k] = no_in;
      f->run[t] = NULL;
    }
    if (u >= 0) {
      Dims s = swapped(&d);
      f->run[k] = rewrite(f->a, q, in[1], in[0], &s, j->eqns[u].out[0]);
    } else {
      f->run[k] = rewrite(f->a, q, in[0], in[1], &d, out);
    }
  }
  free(uses);
  free(def);
  free(user);
  return f;
}

const SrEqn *sr_fold_eqn(SrFold *f, uint32_t k, const SrEqn *q, SrArray *const *env, int32_t *last) {
  int32_t d = f->tdot[k];
  if (d >= 0) {
    /* an operand's transpose: folded when its input is laid out as its
       type says */
    const SrVar *x = q->in[0];
    const SrArray *a = env[x->id];
    if (a && !a->local && a->layout == sr_layout_of_type(a->type)) {
      __atomic_fetch_add(&nfolded, 1, __ATOMIC_RELAXED);
      return NULL;
    }
    f->run[d] = f->alt[d];
    last[x->id] = f->xlast[k];
    return q;
  }
  if (!f->run[k]) __atomic_fetch_add(&nfolded, 1, __ATOMIC_RELAXED);
  return f->run[k];
}

void sr_fold_free(SrFold *f) {
  if (!f) return;
  sr_arena_free(f->a);
  free(f->run);
  free(f->alt);
  free(f->tdot);
  free(f->xlast);
  free(f);
}
