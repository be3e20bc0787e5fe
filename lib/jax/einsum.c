/* einsum.c: jax.numpy.einsum (numpy/einsum.py: einsum, _einsum) over any
 * number of operands, contracted pairwise in the order of opt_einsum's
 * contract_path for optimize='auto' (paths.py's auto: optimal, then the
 * branch searches), with the
 * ellipsis and implicit output of opt_einsum's parser, and repeated
 * indices summed or extracted against lax._delta as _einsum's
 * sum_repeats does.  JAX's jit of _einsum is inline, so the equations
 * land in the caller's jaxpr.  Registered by sr_jnp_einsum_init (jax.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "py/interp.h"
#include "py/objects.h"
#include "util/intern.h"

#define MAXOPS 16
#define NAMES 64

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

static int name_bit(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }
static char bit_name(int b) { return (char)(b < 26 ? 'A' + b : 'a' + b - 26); }
static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static uint64_t name_set(const char *s) {
  uint64_t m = 0;
  for (; *s; s++)
    if (is_letter(*s)) m |= (uint64_t)1 << name_bit(*s); /* a term may still hold an ellipsis */
  return m;
}

static int count_of(const char *s, char c) {
  int k = 0;
  for (; *s; s++) k += *s == c;
  return k;
}

static int find_of(const char *s, char c) {
  const char *p = strchr(s, c);
  return p ? (int)(p - s) : -1;
}

/* names without the characters of chars */
static void remove_chars(char *s, const char *chars) {
  int k = 0;
  for (int i = 0; s[i]; i++)
    if (!strchr(chars, s[i])) s[k++] = s[i];
  s[k] = 0;
}

/* ---- opt_einsum's contract_path: the 'optimal' search ---- */

typedef struct Path {
  int64_t size[52];
  uint64_t output;
  uint64_t sets[2 * MAXOPS];
  double best;
  int best_pairs[MAXOPS][2], cur[MAXOPS][2], nbest;
} Path;

static double set_size(const Path *p, uint64_t s) {
  double r = 1;
  for (int b = 0; b < 52; b++)
    if (s >> b & 1) r *= (double)p->size[b];
  return r;
}

/* paths.optimal's _optimal_iterate: remaining ids ascending, strict
   improvement only, so the first best path found is kept */
static void optimal_iterate(Path *p, uint32_t remaining, int ninputs, int depth, double flops) {
  if (__builtin_popcount(remaining) == 1) {
    p->best = flops;
    p->nbest = depth;
    memcpy(p->best_pairs, p->cur, sizeof p->cur);
    return;
  }
  for (int i = 0; i < ninputs; i++) {
    if (!(remaining >> i & 1)) continue;
    for (int j = i + 1; j < ninputs; j++) {
      if (!(remaining >> j & 1)) continue;
      uint64_t keep = p->output;
      for (int k = 0; k < ninputs; k++)
        if ((remaining >> k & 1) && k != i && k != j) keep |= p->sets[k];
      uint64_t either = p->sets[i] | p->sets[j], shared = p->sets[i] & p->sets[j];
      double cost = set_size(p, either) * ((shared & ~keep) ? 2 : 1);
      double nf = flops + cost;
      if (nf >= p->best) continue;
      p->sets[ninputs] = either & keep;
      p->cur[depth][0] = i;
      p->cur[depth][1] = j;
      optimal_iterate(p, (remaining & ~((1u << i) | (1u << j))) | (1u << ninputs), ninputs + 1, depth + 1, nf);
    }
  }
}

/* paths.BranchBound (branch_all, branch_2, branch_1: what 'auto' picks for
   five to six, seven to eight and nine to fourteen operands):
   minimize='flops' (better_flops_first), cost_fn='memory-removed',
   cutoff_flops_factor=4, no memory limit.  Candidates are assessed
   in itertools.combinations order over the remaining ids ascending (a
   Python set of small ints iterates so while its ids stay below its table
   size), pushed on a heap ordered by (cost, flops12, new_flops, new_size,
   (i, j)), and the first nbranch (0: all) popped are recursed into; the
   result cache is keyed by the two index sets alone, as BranchBound's. */
typedef struct Branch {
  Path *p;
  int nbranch;
  double best_size, progress[2 * MAXOPS + 1];
  struct {
    uint64_t k1, k2, k12;
    double flops;
  } cache[512];
  int ncache;
} Branch;

typedef struct Cand {
  double cost, flops12, new_flops, new_size;
  int i, j;
  uint64_t k12;
} Cand;

static int cand_less(const Cand *a, const Cand *b) {
  if (a->cost != b->cost) return a->cost < b->cost;
  if (a->flops12 != b->flops12) return a->flops12 < b->flops12;
  if (a->new_flops != b->new_flops) return a->new_flops < b->new_flops;
  if (a->new_size != b->new_size) return a->new_size < b->new_size;
  if (a->i != b->i) return a->i < b->i;
  return a->j < b->j;
}

/* calc_k12_flops through the cache */
static void k12_flops(Branch *B, uint32_t remaining, int ninputs, int i, int j, uint64_t *k12, double *flops) {
  Path *p = B->p;
  uint64_t k1 = p->sets[i], k2 = p->sets[j];
  for (int c = 0; c < B->ncache; c++)
    if (B->cache[c].k1 == k1 && B->cache[c].k2 == k2) {
      *k12 = B->cache[c].k12;
      *flops = B->cache[c].flops;
      return;
    }
  uint64_t keep = p->output;
  for (int k = 0; k < ninputs; k++)
    if ((remaining >> k & 1) && k != i && k != j) keep |= p->sets[k];
  uint64_t either = k1 | k2, shared = k1 & k2;
  *k12 = either & keep;
  *flops = set_size(p, either) * ((shared & ~keep) ? 2 : 1);
  if (B->ncache < (int)(sizeof B->cache / sizeof *B->cache)) {
    B->cache[B->ncache].k1 = k1;
    B->cache[B->ncache].k2 = k2;
    B->cache[B->ncache].k12 = *k12;
    B->cache[B->ncache++].flops = *flops;
  }
}

/* _assess_candidate: 0 when sieved out */
static int assess(Branch *B, uint32_t remaining, int ninputs, int i, int j, double flops, double size, Cand *c) {
  Path *p = B->p;
  uint64_t k12;
  double f12;
  k12_flops(B, remaining, ninputs, i, j, &k12, &f12);
  double size12 = set_size(p, k12), nf = flops + f12, ns = size > size12 ? size : size12;
  if (!(nf < p->best || (nf == p->best && ns < B->best_size))) return 0;
  if (nf < B->progress[ninputs]) B->progress[ninputs] = nf;
  else if (nf > 4 * B->progress[ninputs]) return 0;
  c->cost = size12 - set_size(p, p->sets[i]) - set_size(p, p->sets[j]);
  c->flops12 = f12;
  c->new_flops = nf;
  c->new_size = ns;
  c->i = i;
  c->j = j;
  c->k12 = k12;
  return 1;
}

static void branch_iterate(Branch *B, uint32_t remaining, int ninputs, int depth, double flops, double size) {
  Path *p = B->p;
  if (__builtin_popcount(remaining) == 1) {
    B->best_size = size;
    p->best = flops;
    p->nbest = depth;
    memcpy(p->best_pairs, p->cur, sizeof p->cur);
    return;
  }
  Cand cs[MAXOPS * MAXOPS];
  int nc = 0;
  for (int pass = 0; pass < 2 && nc == 0; pass++)
    for (int i = 0; i < ninputs; i++) {
      if (!(remaining >> i & 1)) continue;
      for (int j = i + 1; j < ninputs; j++) {
        if (!(remaining >> j & 1)) continue;
        /* outer products only when nothing else is left */
        if (pass == 0 && !(p->sets[i] & p->sets[j])) continue;
        if (assess(B, remaining, ninputs, i, j, flops, size, &cs[nc])) nc++;
      }
    }
  /* the heap's order */
  for (int a = 1; a < nc; a++)
    for (int b = a; b > 0 && cand_less(&cs[b], &cs[b - 1]); b--) {
      Cand t = cs[b];
      cs[b] = cs[b - 1];
      cs[b - 1] = t;
    }
  for (int k = 0; k < nc && (B->nbranch == 0 || k < B->nbranch); k++) {
    p->sets[ninputs] = cs[k].k12;
    p->cur[depth][0] = cs[k].i;
    p->cur[depth][1] = cs[k].j;
    branch_iterate(B, (remaining & ~((1u << cs[k].i) | (1u << cs[k].j))) | (1u << ninputs), ninputs + 1, depth + 1,
                   cs[k].new_flops, cs[k].new_size);
  }
}

typedef struct Contraction {
  int inds[2], nind;      /* positions in the operand list, descending */
  char removed[NAMES];    /* idx_removed, sorted */
  char in[2][NAMES], out[NAMES];
} Contraction;

/* the linear path of contract_path and its contraction list: the given
   path (ngiven >= 0), else for optimize='auto' what paths.auto picks:
   paths.optimal up to four operands, BranchBound with nbranch None, 2 and
   1 for five to six, seven to eight and nine to fourteen (strategy -1;
   0: 'optimal' or True, 1, 2, 3: 'branch-all', 'branch-2', 'branch-1'
   whatever the count); or Unoptimized (optimize=False, and
   beyond fourteen operands, where 'auto' picks greedy, not here: always
   the first two) */
static int contraction_list(int nops, char terms[][NAMES], const char *output, const int64_t *size,
                            int given[][2], int ngiven, int unopt, int strategy, Contraction *cs) {
  int linear[MAXOPS][2], npath = 0;
  if (ngiven >= 0) {
    memcpy(linear, given, sizeof linear);
    npath = ngiven;
  } else if (nops == 1) {
    linear[0][0] = 0;
    linear[0][1] = -1;
    npath = 1;
  } else if (nops == 2) {
    linear[0][0] = 0;
    linear[0][1] = 1;
    npath = 1;
  } else if (unopt || nops > 14) {
    for (int k = 0; k < nops - 1; k++) {
      linear[k][0] = 0;
      linear[k][1] = 1;
    }
    npath = nops - 1;
  } else {
    Path p;
    memset(&p, 0, sizeof p);
    memcpy(p.size, size, sizeof p.size);
    p.output = name_set(output);
    for (int i = 0; i < nops; i++) p.sets[i] = name_set(terms[i]);
    p.best = __builtin_inf();
    if (strategy == 0 || (strategy < 0 && nops <= 4)) {
      optimal_iterate(&p, (1u << nops) - 1, nops, 0, 0);
    } else {
      Branch *B = sr_xcalloc(1, sizeof *B);
      B->p = &p;
      B->nbranch = strategy > 0 ? (strategy == 1 ? 0 : strategy == 2 ? 2 : 1) : nops <= 6 ? 0 : nops <= 8 ? 2 : 1;
      B->best_size = __builtin_inf();
      for (int k = 0; k <= 2 * MAXOPS; k++) B->progress[k] = __builtin_inf();
      branch_iterate(B, (1u << nops) - 1, nops, 0, 0, 0);
      free(B);
    }
    /* ssa_to_linear */
    int ids[2 * MAXOPS], nids = nops, next = nops;
    for (int i = 0; i < nops; i++) ids[i] = i;
    for (int k = 0; k < p.nbest; k++) {
      int pos[2] = {0, 0};
      for (int t = 0; t < 2; t++)
        for (int q = 0; q < nids; q++)
          if (ids[q] == p.best_pairs[k][t]) pos[t] = q;
      linear[k][0] = pos[0];
      linear[k][1] = pos[1];
      int w = 0;
      for (int q = 0; q < nids; q++)
        if (q != pos[0] && q != pos[1]) ids[w++] = ids[q];
      ids[w++] = next++;
      nids = w;
    }
    npath = p.nbest;
  }
  char list[MAXOPS][NAMES];
  uint64_t sets[MAXOPS];
  int n = nops;
  for (int i = 0; i < nops; i++) {
    strcpy(list[i], terms[i]);
    sets[i] = name_set(terms[i]);
  }
  for (int k = 0; k < npath; k++) {
    Contraction *c = &cs[k];
    memset(c, 0, sizeof *c);
    c->nind = linear[k][1] < 0 ? 1 : 2;
    c->inds[0] = linear[k][0];
    c->inds[1] = linear[k][1];
    if (c->nind == 2 && c->inds[0] < c->inds[1]) {
      c->inds[0] = linear[k][1];
      c->inds[1] = linear[k][0];
    }
    /* find_contraction */
    uint64_t contract = 0, remain = name_set(output);
    for (int i = 0; i < n; i++) {
      if (i == c->inds[0] || (c->nind == 2 && i == c->inds[1])) contract |= sets[i];
      else remain |= sets[i];
    }
    uint64_t result = remain & contract, removed = contract & ~result;
    int nr = 0;
    for (int b = 0; b < 52; b++)
      if (removed >> b & 1) c->removed[nr++] = bit_name(b);
    for (int t = 0; t < c->nind; t++) {
      strcpy(c->in[t], list[c->inds[t]]);
      for (int i = c->inds[t]; i + 1 < n; i++) {
        memcpy(list[i], list[i + 1], sizeof list[i]);
        sets[i] = sets[i + 1];
      }
      n--;
    }
    if (k == npath - 1) {
      strcpy(c->out, output);
    } else { /* sorted by (dimension size, name) */
      int no = 0;
      for (int b = 0; b < 52; b++)
        if (result >> b & 1) c->out[no++] = bit_name(b);
      for (int i = 1; i < no; i++)
        for (int j = i; j > 0; j--) {
          char x = c->out[j - 1], y = c->out[j];
          int64_t sx = size[name_bit(x)], sy = size[name_bit(y)];
          if (sx > sy || (sx == sy && x > y)) {
            c->out[j - 1] = y;
            c->out[j] = x;
          }
        }
    }
    strcpy(list[n], c->out);
    sets[n++] = result;
  }
  return npath;
}

/* ---- _einsum ---- */

typedef struct Ctx {
  SrInterp *I;
  SrDtype pref;
  SrVal *precision;
} Ctx;

/* _einsum's sum: lax.reduce with add (or) over axes */
static SrVal *einsum_sum(Ctx *C, SrVal *x, const int64_t *axes, int n, SrVal *out_sh) {
  SrInterp *I = C->I;
  SrVal *y = sr_ref(x);
  const SrType *t = vtype(I, x);
  SrVal *pair[2] = {x, sr_array_abstract(sr_type_scalar(C->pref))};
  int weak;
  SrDtype rt = sr_jnp_result_dtype(I, 2, pair, &weak);
  sr_unref(pair[1]);
  if (rt != t->dtype) {
    sr_unref(y);
    y = sr_lax_convert(I, x, C->pref, 0, NULL);
    if (!y) return NULL;
  }
  SrVal *r = sr_lax_reduce(I, vtype(I, y)->dtype == SR_BOOL ? SR_P_reduce_or : SR_P_reduce_sum, y, axes, n, out_sh);
  sr_unref(y);
  return r;
}

/* sum_uniques; steals x */
static SrVal *sum_uniques(Ctx *C, SrVal *x, char *names, const char *uniques, SrVal *out_sh) {
  if (!x || !*uniques) return x;
  int64_t axes[NAMES];
  int n = 0;
  for (const char *c = uniques; *c; c++) axes[n++] = find_of(names, *c);
  SrVal *r = einsum_sum(C, x, axes, n, out_sh);
  sr_unref(x);
  remove_chars(names, uniques);
  return r;
}

/* lax._delta(bool, shape, axes): the Kronecker delta over axes */
static SrVal *delta(SrInterp *I, const SrType *t, const int64_t *axes, int n) {
  int64_t base[NAMES], shape[SR_MAX_RANK];
  for (int i = 0; i < n; i++) base[i] = t->dims[axes[i]].size;
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  SrVal *acc = NULL, *prev = sr_lax_iota(I, SR_U32, base, n, 0, NULL);
  for (int i = 1; prev && i < n; i++) {
    SrVal *io = sr_lax_iota(I, SR_U32, base, n, i, NULL);
    SrVal *e = io ? sr_lax_binary(I, SR_P_eq, prev, io) : NULL;
    sr_unref(prev);
    prev = io;
    if (!e) {
      sr_unref(acc);
      acc = NULL;
      break;
    }
    if (acc) {
      SrVal *a2 = sr_lax_binary(I, SR_P_and, acc, e);
      sr_unref(acc);
      sr_unref(e);
      acc = a2;
    } else {
      acc = e;
    }
  }
  sr_unref(prev);
  if (!acc) return NULL;
  /* _delta binds convert_element_type_p itself: an equation even to bool */
  SrVal *cv = sr_bindv(I, SR_P_convert_element_type, 1, &acc, "new_dtype", sr_dtype_val(NULL, SR_BOOL), "weak_type",
                       sr_bool(0), "sharding", sr_none(), NULL);
  sr_unref(acc);
  if (!cv) return NULL;
  SrVal *r = sr_lax_broadcast_in_dim(I, cv, shape, t->ndim, axes, n, NULL);
  sr_unref(cv);
  return r;
}

/* sum_repeats: counts are those of names0 (first occurrence order); steals x */
static SrVal *sum_repeats(Ctx *C, SrVal *x, char *names, const char *names0, const char *keep, SrVal *out_sh) {
  SrInterp *I = C->I;
  for (int i = 0; x && names0[i]; i++) {
    char c = names0[i];
    if (find_of(names0, c) != i) continue;
    int count = count_of(names0, c);
    if (count <= 1) continue;
    int64_t axes[NAMES];
    int n = 0;
    for (int k = 0; names[k]; k++)
      if (names[k] == c) axes[n++] = k;
    const SrType *t = vtype(I, x);
    int64_t shape[SR_MAX_RANK];
    for (int k = 0; k < t->ndim; k++) shape[k] = t->dims[k].size;
    SrVal *eye = delta(I, t, axes, n);
    SrVal *zero = sr_int(NULL, 0);
    SrVal *z = eye ? sr_lax_full(I, shape, t->ndim, zero, t->dtype, NULL) : NULL;
    sr_unref(zero);
    SrVal *s = z ? sr_lax_select(I, eye, x, z) : NULL;
    sr_unref(eye);
    sr_unref(z);
    sr_unref(x);
    if (!s) return NULL;
    int keepit = strchr(keep, c) != NULL;
    x = einsum_sum(C, s, axes, keepit ? n - 1 : n, out_sh);
    sr_unref(s);
    /* names.replace(c, '', count - 1) or all of them */
    int drop = keepit ? count - 1 : count, w = 0;
    for (int k = 0; names[k]; k++) {
      if (names[k] == c && drop > 0) {
        drop--;
        continue;
      }
      names[w++] = names[k];
    }
    names[w] = 0;
  }
  return x;
}

/* filter_singleton_dims; steals x */
static SrVal *filter_singleton(SrInterp *I, SrVal *x, char *names, const SrType *other, const char *onames) {
  const SrType *t = vtype(I, x);
  int64_t sq[NAMES];
  int nsq = 0, w = 0;
  char keep[NAMES];
  for (int i = 0; names[i]; i++) {
    int j = find_of(onames, names[i]);
    if (t->dims[i].size != 1 || j == -1 || other->dims[j].size == 1) keep[w++] = names[i];
    else sq[nsq++] = i;
  }
  keep[w] = 0;
  SrVal *y = sr_lax_squeeze(I, x, sq, nsq);
  sr_unref(x);
  strcpy(names, keep);
  return y;
}

/* _get_inverse_sharding: out_sharding's spec in the dot's output order */
static SrVal *inverse_sharding(SrVal *sh, const char *names, const char *result) {
  const SrSpec *s = sh->sh.spec;
  SrSpec t = *s;
  SrSpecEntry e[SR_MAX_RANK];
  int n = (int)strlen(names);
  for (int i = 0; i < n; i++) {
    int j = find_of(result, names[i]);
    e[i] = j >= 0 && j < s->n ? s->e[j] : (SrSpecEntry){0, NULL};
  }
  t.e = e;
  t.n = n;
  return sr_sharding_val(NULL, sh->sh.mesh, &t, sh->sh.memory_kind);
}

/* one pairwise contraction: lhs, rhs stolen */
static SrVal *contract2(Ctx *C, SrVal *lhs, SrVal *rhs, const Contraction *c, char *names, SrVal *sh) {
  SrInterp *I = C->I;
  char ln[NAMES], rn[NAMES], l0[NAMES], r0[NAMES];
  const char *res = c->out;
  strcpy(ln, c->in[0]);
  strcpy(rn, c->in[1]);
  lhs = filter_singleton(I, lhs, ln, vtype(I, rhs), rn);
  if (!lhs) {
    sr_unref(rhs);
    return NULL;
  }
  rhs = filter_singleton(I, rhs, rn, vtype(I, lhs), ln);
  if (!rhs) {
    sr_unref(lhs);
    return NULL;
  }
  strcpy(l0, ln);
  strcpy(r0, rn);
  char lu[NAMES] = {0}, ru[NAMES] = {0};
  int nlu = 0, nru = 0;
  for (const char *p = c->removed; *p; p++) {
    if (count_of(l0, *p) == 1 && count_of(r0, *p) == 0) lu[nlu++] = *p;
    if (count_of(r0, *p) == 1 && count_of(l0, *p) == 0) ru[nru++] = *p;
  }
  lhs = sum_uniques(C, lhs, ln, lu, NULL);
  rhs = sum_uniques(C, rhs, rn, ru, NULL);
  char keep[2 * NAMES];
  snprintf(keep, sizeof keep, "%s%s", res, rn);
  lhs = sum_repeats(C, lhs, ln, l0, keep, NULL);
  snprintf(keep, sizeof keep, "%s%s", res, ln);
  rhs = sum_repeats(C, rhs, rn, r0, keep, NULL);
  SrVal *r = NULL;
  if (!lhs || !rhs) goto done;
  char cn[NAMES] = {0}, bn[NAMES] = {0};
  int ncn = 0, nbn = 0;
  for (const char *p = c->removed; *p; p++)
    if (strchr(ln, *p) || strchr(rn, *p)) cn[ncn++] = *p;
  for (const char *p = res; *p; p++)
    if (strchr(ln, *p) && strchr(rn, *p)) bn[nbn++] = *p;
  int64_t lb[NAMES], rb[NAMES], lc[NAMES], rc[NAMES];
  for (int i = 0; i < nbn; i++) {
    lb[i] = find_of(ln, bn[i]);
    rb[i] = find_of(rn, bn[i]);
  }
  for (int i = 0; i < ncn; i++) {
    lc[i] = find_of(ln, cn[i]);
    rc[i] = find_of(rn, cn[i]);
    if (lc[i] < 0 || rc[i] < 0 || vtype(I, lhs)->dims[lc[i]].size != vtype(I, rhs)->dims[rc[i]].size) {
      sr_raise(I, "AssertionError", "Incompatible reduction dimensions: lhs_names=%s rhs_names=%s", ln, rn);
      goto done;
    }
  }
  char deleted[2 * NAMES];
  snprintf(deleted, sizeof deleted, "%s%s", bn, cn);
  char rl[NAMES], rr[NAMES];
  strcpy(rl, ln);
  strcpy(rr, rn);
  remove_chars(rl, deleted);
  remove_chars(rr, deleted);
  snprintf(names, NAMES, "%s%s%s", bn, rr, rl);
  if (strcmp(names, res) == 0) {
    r = sr_lax_dot_general(I, rhs, lhs, rc, ncn, lc, ncn, rb, nbn, lb, nbn, C->precision, C->pref, sh);
  } else {
    snprintf(names, NAMES, "%s%s%s", bn, rl, rr);
    SrVal *dsh = sh && strcmp(names, res) != 0 ? inverse_sharding(sh, names, res) : (sh ? sr_ref(sh) : NULL);
    r = sr_lax_dot_general(I, lhs, rhs, lc, ncn, rc, ncn, lb, nbn, rb, nbn, C->precision, C->pref, dsh);
    sr_unref(dsh);
  }
done:
  sr_unref(lhs);
  sr_unref(rhs);
  return r;
}

/* opt_einsum's parser.parse_einsum_input: terms with ellipses replaced and
   the output, explicit or implicit */
static int parse_subscripts(SrInterp *I, const char *sub0, size_t sl, int nops, SrVal **ops, char terms[][NAMES],
                            char *output) {
  char sub[512];
  size_t n = 0;
  for (size_t i = 0; i < sl && n + 1 < sizeof sub; i++)
    if (sub0[i] != ' ') sub[n++] = sub0[i];
  sub[n] = 0;
  for (size_t i = 0; i < n; i++) {
    char c = sub[i];
    if (!is_letter(c) && !strchr(".,->", c)) {
      sr_raise(I, "ValueError", "Character %c is not a valid symbol.", c);
      return -1;
    }
  }
  char *arrow = strstr(sub, "->");
  if (arrow) *arrow = 0;
  if (strchr(sub, '-') || strchr(sub, '>') || (arrow && (strchr(arrow + 2, '-') || strchr(arrow + 2, '>')))) {
    sr_raise(I, "ValueError", "Subscripts can only contain one '->'.");
    return -1;
  }
  /* the input terms */
  int k = 0;
  char *p = sub;
  for (;;) {
    char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (k >= nops || len >= NAMES) {
      sr_raise(I, "ValueError", "Number of einsum subscripts must be equal to the number of operands.");
      return -1;
    }
    memcpy(terms[k], p, len);
    terms[k++][len] = 0;
    if (!comma) break;
    p = comma + 1;
  }
  if (k != nops) {
    sr_raise(I, "ValueError", "Number of einsum subscripts must be equal to the number of operands.");
    return -1;
  }
  /* ellipses: the unused letters, sorted (upper case first) */
  char unused[53];
  int nu = 0, longest = 0, maxdim = 0, any_ell = strchr(sub0, '.') != NULL;
  uint64_t used = 0;
  for (int i = 0; i < nops; i++) used |= name_set(terms[i]);
  if (arrow)
    for (const char *q = arrow + 2; *q; q++)
      if (is_letter(*q)) used |= (uint64_t)1 << name_bit(*q);
  for (int b = 0; b < 52; b++)
    if (!(used >> b & 1)) unused[nu++] = bit_name(b);
  unused[nu] = 0;
  for (int i = 0; i < nops; i++) maxdim = vtype(I, ops[i])->ndim > maxdim ? vtype(I, ops[i])->ndim : maxdim;
  for (int i = 0; any_ell && i < nops; i++) {
    char *t = terms[i];
    int dots = count_of(t, '.');
    if (dots == 0) continue;
    char *e = strstr(t, "...");
    if (dots != 3 || !e) {
      sr_raise(I, "ValueError", "Invalid Ellipses.");
      return -1;
    }
    int nd = vtype(I, ops[i])->ndim;
    int cnt = (nd > 1 ? nd : 1) - ((int)strlen(t) - 3);
    if (cnt > longest) longest = cnt;
    if (cnt < 0) {
      sr_raise(I, "ValueError", "Ellipses lengths do not match.");
      return -1;
    }
    if (maxdim > nu) {
      sr_raise(I, "ValueError", "too many dimensions for an ellipsis");
      return -1;
    }
    char buf[NAMES];
    snprintf(buf, sizeof buf, "%.*s%.*s%s", (int)(e - t), t, cnt, unused + maxdim - cnt, e + 3);
    strcpy(t, buf);
  }
  char out_ell[NAMES];
  snprintf(out_ell, sizeof out_ell, "%.*s", longest, unused + maxdim - longest);
  if (arrow) {
    const char *o = arrow + 2, *e = strstr(o, "...");
    if (count_of(o, '.') != (e ? 3 : 0)) {
      sr_raise(I, "ValueError", "Invalid Ellipses.");
      return -1;
    }
    if (e) snprintf(output, NAMES, "%.*s%s%s", (int)(e - o), o, out_ell, e + 3);
    else snprintf(output, NAMES, "%s", o);
    for (const char *q = output; *q; q++) {
      int seen = 0;
      for (int i = 0; i < nops; i++) seen |= strchr(terms[i], *q) != NULL;
      if (!seen) {
        sr_raise(I, "ValueError", "Output character %c did not appear in the input", *q);
        return -1;
      }
      if (count_of(output, *q) > 1) {
        sr_raise(I, "ValueError", "Output character %c appeared more than once in the output.", *q);
        return -1;
      }
    }
  } else { /* find_output_str, the ellipsis letters first */
    int w = (int)strlen(out_ell);
    strcpy(output, out_ell);
    for (int b = 0; b < 52; b++) {
      char c = bit_name(b);
      int cnt = 0;
      for (int i = 0; i < nops; i++) cnt += count_of(terms[i], c);
      if (cnt == 1 && !strchr(out_ell, c)) output[w++] = c;
    }
    output[w] = 0;
  }
  for (int i = 0; i < nops; i++)
    if ((int)strlen(terms[i]) != vtype(I, ops[i])->ndim) {
      sr_raise(I, "ValueError",
               "Einstein sum subscript '%s' does not contain the correct number of indices for operand %d.",
               terms[i], i);
      return -1;
    }
  return 0;
}

/* an explicit path: a list of tuples of one or two positions, after an
   optional 'einsum_path' (as einsum_path returns it) */
static int parse_path(SrInterp *I, SrVal *v, int nops, int given[][2], int *ngiven) {
  SrVal **items = v->seq.items;
  int n = v->seq.n, k = 0;
  int left = nops;
  if (n && items[0]->kind == SR_V_STR) k = 1;
  *ngiven = 0;
  for (; k < n; k++) {
    int m = sr_is_seq(items[k]) ? items[k]->seq.n : 0;
    SrVal **pi = m ? items[k]->seq.items : NULL;
    if (*ngiven >= MAXOPS || m < 1 || m > 2) {
      sr_raise(I, "NotImplementedError",
               "jax.numpy.einsum does not support simultaneous contraction of 3 or more operands. Typically this "
               "means you've passed an unsupported path to the einsum optimize parameter.");
      return -1;
    }
    int pos[2] = {0, -1};
    for (int t = 0; t < m; t++) {
      int64_t x;
      if (sr_as_int(I, pi[t], "path", &x) < 0) return -1;
      if (x < 0 || x >= left) {
        sr_raise(I, "IndexError", "pop index out of range");
        return -1;
      }
      pos[t] = (int)x;
    }
    if (pos[0] == pos[1]) {
      sr_raise(I, "ValueError", "a path's contraction names position %d twice", pos[0]);
      return -1;
    }
    given[*ngiven][0] = pos[0];
    given[(*ngiven)++][1] = pos[1];
    left -= m - 1;
  }
  if (left != 1) {
    sr_raise(I, "ValueError", "the einsum path leaves %d operands uncontracted", left);
    return -1;
  }
  return 0;
}

/* ---- out_sharding over more than one contraction ---- */

/* The call einsum makes of itself under auto_axes: the subscripts and the
   keyword arguments but out_sharding, kept. */
typedef struct AutoEinsum {
  SrVal *subscripts;
  int nkw;
  const char *kw[8];
  SrVal *kwv[8];
} AutoEinsum;

static void auto_einsum_free(void *d) {
  AutoEinsum *ae = d;
  sr_unref(ae->subscripts);
  for (int i = 0; i < ae->nkw; i++) sr_unref(ae->kwv[i]);
  free(ae);
}

static SrVal *auto_einsum_body(SrInterp *I, SrArgs *a) {
  const AutoEinsum *ae = sr_current_builtin(I)->data;
  SrVal *args[MAXOPS + 1];
  args[0] = ae->subscripts;
  for (int i = 0; i < a->n && i < MAXOPS; i++) args[1 + i] = a->v[i];
  SrVal *f = sr_lookup_qualname("jax.numpy.einsum");
  SrArgs ca = {a->n + 1, args, ae->nkw, (const char **)ae->kw, (SrVal **)ae->kwv, NULL};
  return f ? sr_call(I, f, &ca) : sr_raise(I, "RuntimeError", "internal error: no jax.numpy.einsum");
}

/* einsum.py: with more than one contraction and an out_sharding, the
   whole einsum runs under auto_axes(axes=out_sharding.mesh.explicit_axes,
   out_sharding=out_sharding) with out_sharding=None: the intermediates'
   shardings are the dot_general rules' in Auto mode, the result is
   resharded to out_sharding. */
static SrVal *einsum_auto_axes(SrInterp *I, SrArgs *a, SrVal *sh) {
  AutoEinsum *ae = sr_xcalloc(1, sizeof *ae);
  ae->subscripts = sr_ref(a->v[0]);
  for (int i = 0; i < a->nkw && ae->nkw < 8; i++)
    if (strcmp(a->kw[i], "out_sharding") != 0) {
      ae->kw[ae->nkw] = a->kw[i];
      ae->kwv[ae->nkw++] = sr_ref(a->kwv[i]);
    }
  SrVal *fn = sr_builtin_with("_einsum", auto_einsum_body, ae, auto_einsum_free);
  const SrMesh *m = sh->sh.mesh;
  SrVal *axes = sr_api_axes_tuple(m, sr_mesh_axes_of_type(m, SR_AXIS_EXPLICIT));
  SrVal *aa = sr_lookup_qualname("jax.sharding.auto_axes"), *r = NULL;
  if (aa) {
    const char *kw[2] = {sr_intern_cstr("out_sharding"), sr_intern_cstr("axes")};
    SrVal *kwv[2] = {sh, axes};
    SrArgs da = {1, &fn, 2, kw, kwv, NULL};
    SrVal *dec = sr_call(I, aa, &da);
    if (dec) {
      SrArgs ca = {a->n - 1, a->v + 1, 0, NULL, NULL, NULL};
      r = sr_call(I, dec, &ca);
      sr_unref(dec);
    }
  } else {
    sr_raise(I, "NotImplementedError", "einsum with out_sharding over more than one contraction needs auto_axes");
  }
  sr_unref(axes);
  sr_unref(fn);
  return r;
}

/* opt_einsum's _parse_einsum_input for the interleaved form
   einsum(op0, sublist0, op1, sublist1, ..., [sublistout]): the
   subscripts string, each distinct int (in sorted order) a letter of
   get_symbol's, Ellipsis "...".  NULL with TypeError. */
static int is_ellipsis(const SrVal *v) {
  return v->kind == SR_V_WORD && v->str.n == 8 && memcmp(v->str.s, "Ellipsis", 8) == 0;
}

static SrVal *interleaved_subscripts(SrInterp *I, int n, SrVal **v) {
  /* the sublists: v[1], v[3], ... and the output's v[n - 1] when n is odd */
  SrVal *subs[MAXOPS + 1];
  int nsub = 0;
  for (int k = 1; k < n; k += 2) subs[nsub++] = v[k];
  if (n % 2) subs[nsub++] = v[n - 1];
  int64_t syms[52];
  int nsym = 0;
  for (int k = 0; k < nsub; k++) {
    if (!sr_is_seq(subs[k]))
      return sr_raise(I, "TypeError", "For this input type lists must contain either Ellipsis or hashable and "
                                      "comparable object (e.g. int, str).");
    for (int i = 0; i < subs[k]->seq.n; i++) {
      SrVal *e = subs[k]->seq.items[i];
      if (is_ellipsis(e)) continue;
      if (e->kind != SR_V_INT && e->kind != SR_V_BOOL)
        return sr_raise(I, "TypeError", "For this input type lists must contain either Ellipsis or hashable and "
                                        "comparable object (e.g. int, str).");
      int seen = 0;
      for (int j = 0; j < nsym; j++) seen |= syms[j] == e->i;
      if (seen || k == n / 2) continue; /* the output's own symbols are the inputs' */
      if (nsym == 52) return sr_raise(I, "NotImplementedError", "einsum of more than 52 distinct indices");
      int at = nsym++;
      while (at > 0 && syms[at - 1] > e->i) syms[at] = syms[at - 1], at--;
      syms[at] = e->i;
    }
  }
  SrBuf b = SR_BUF_INIT;
  for (int k = 0; k < nsub; k++) {
    if (k == n / 2) sr_buf_puts(&b, "->");
    else if (k) sr_buf_putc(&b, ',');
    for (int i = 0; i < subs[k]->seq.n; i++) {
      SrVal *e = subs[k]->seq.items[i];
      if (is_ellipsis(e)) {
        sr_buf_puts(&b, "...");
        continue;
      }
      int j = 0;
      while (j < nsym && syms[j] != e->i) j++;
      if (j == nsym) {
        sr_buf_free(&b);
        return sr_raise(I, "KeyError", "%lld", (long long)e->i);
      }
      sr_buf_putc(&b, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[j]);
    }
  }
  SrVal *r = sr_str(NULL, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return r;
}

/* einsum, or with want_path einsum_path: (the contraction path, None for
   opt_einsum's PathInfo) */
static SrVal *einsum_run(SrInterp *I, SrArgs *a, int want_path) {
  if (a->n >= 2 && a->v[0]->kind != SR_V_STR) {
    /* the interleaved form: its operands and the subscripts they spell */
    int n = a->n, nops = n / 2;
    if (nops > MAXOPS) return sr_raise(I, "NotImplementedError", "einsum of more than %d operands", MAXOPS);
    SrVal *sub = interleaved_subscripts(I, n, a->v);
    if (!sub) return NULL;
    SrVal *args[MAXOPS + 1];
    args[0] = sub;
    for (int k = 0; k < nops; k++) args[1 + k] = a->v[2 * k];
    SrArgs ca = {nops + 1, args, a->nkw, a->kw, a->kwv, NULL};
    SrVal *r = einsum_run(I, &ca, want_path);
    sr_unref(sub);
    return r;
  }
  SrVal *precision = NULL, *pref_v = NULL, *out_sharding = NULL, *optimize = NULL;
  for (int i = 0; i < a->nkw; i++) {
    if (strcmp(a->kw[i], "precision") == 0) precision = a->kwv[i];
    else if (strcmp(a->kw[i], "preferred_element_type") == 0) pref_v = a->kwv[i];
    else if (strcmp(a->kw[i], "out_sharding") == 0) out_sharding = a->kwv[i];
    else if (strcmp(a->kw[i], "optimize") == 0) optimize = a->kwv[i];
    else if (strcmp(a->kw[i], "out") == 0) {
      if (a->kwv[i]->kind != SR_V_NONE)
        return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.einsum is not supported.");
    } else return sr_raise(I, "TypeError", "einsum() got an unexpected keyword argument '%s'", a->kw[i]);
  }
  if (a->n < 2 || a->v[0]->kind != SR_V_STR)
    return sr_raise(I, "TypeError", "einsum(subscripts, *operands): subscripts must be a string");
  int nops = a->n - 1;
  if (nops > MAXOPS) return sr_raise(I, "NotImplementedError", "einsum of more than %d operands", MAXOPS);
  SrVal *ops[MAXOPS] = {0}, *sh = NULL, *r = NULL;
  int nlive = 0;
  for (int o = 0; o < nops; o++, nlive++)
    if (!(ops[o] = sr_jnp_asarray(I, a->v[1 + o], -1))) goto done;
  char terms[MAXOPS][NAMES], output[NAMES];
  if (parse_subscripts(I, a->v[0]->str.s, a->v[0]->str.n, nops, ops, terms, output) < 0) goto done;
  int64_t size[52];
  for (int b = 0; b < 52; b++) size[b] = 1;
  int64_t seen[52] = {0};
  for (int o = 0; o < nops; o++) {
    const SrType *t = vtype(I, ops[o]);
    for (int i = 0; terms[o][i]; i++) {
      int b = name_bit(terms[o][i]);
      int64_t d = t->dims[i].size;
      if (seen[b] && size[b] != 1 && d != 1 && d != size[b]) {
        sr_raise(I, "ValueError", "Size of label '%c' for operand %d (%lld) does not match previous terms (%lld).",
                 terms[o][i], o, (long long)d, (long long)size[b]);
        goto done;
      }
      if (!seen[b] || size[b] == 1) size[b] = d;
      seen[b] = 1;
    }
  }
  Ctx C = {I, SR_F32, precision};
  int weak = 0, pt;
  if (sr_dtype_arg(I, pref_v, &pt, "einsum") < 0) goto done;
  if (pt >= 0) C.pref = (SrDtype)pt;
  else C.pref = sr_jnp_result_dtype(I, nops, ops, &weak);
  if (sr_api_canon_sharding(I, out_sharding, "einsum", &sh) < 0) goto done;
  int given[MAXOPS][2], ngiven = -1, unopt = optimize && optimize->kind == SR_V_BOOL && !optimize->i;
  if (optimize && (optimize->kind == SR_V_LIST || optimize->kind == SR_V_TUPLE) && parse_path(I, optimize, nops, given, &ngiven) < 0) goto done;
  Contraction cs[MAXOPS];
  int strategy = -1;
  if (optimize && optimize->kind == SR_V_BOOL && optimize->i) strategy = 0;
  if (optimize && optimize->kind == SR_V_STR) {
    static const char *const names[] = {"optimal", "branch-all", "branch-2", "branch-1"};
    for (int k = 0; k < 4; k++)
      if (optimize->str.n == strlen(names[k]) && memcmp(optimize->str.s, names[k], optimize->str.n) == 0) strategy = k;
  }
  int nc = contraction_list(nops, terms, output, size, given, ngiven, unopt, strategy, cs);
  if (want_path) {
    /* each contraction's operand positions, ascending */
    SrVal *path = sr_seq(NULL, SR_V_LIST, nc);
    for (int k = 0; k < nc; k++) {
      int64_t ij[2] = {cs[k].inds[cs[k].nind - 1], cs[k].inds[0]};
      sr_seq_push(NULL, path, sr_int_tuple(ij, cs[k].nind));
    }
    SrVal *items[2] = {path, sr_none()};
    r = sr_tuple(NULL, 2, items);
    goto done;
  }
  if (nc > 1 && sh) {
    r = einsum_auto_axes(I, a, sh);
    goto done;
  }
  for (int k = 0; k < nc; k++) {
    const Contraction *c = &cs[k];
    char names[NAMES];
    SrVal *operand;
    if (c->nind == 1) {
      SrVal *x = ops[c->inds[0]];
      memmove(&ops[c->inds[0]], &ops[c->inds[0] + 1], (size_t)(nlive - c->inds[0] - 1) * sizeof *ops);
      ops[--nlive] = NULL;
      strcpy(names, c->in[0]);
      char uniques[NAMES] = {0};
      int nuq = 0;
      for (const char *p = c->removed; *p; p++)
        if (count_of(c->in[0], *p) == 1) uniques[nuq++] = *p;
      operand = sum_uniques(&C, x, names, uniques, sh);
      operand = sum_repeats(&C, operand, names, c->in[0], c->out, sh);
    } else {
      SrVal *lhs = ops[c->inds[0]];
      memmove(&ops[c->inds[0]], &ops[c->inds[0] + 1], (size_t)(nlive - c->inds[0] - 1) * sizeof *ops);
      ops[--nlive] = NULL;
      SrVal *rhs = ops[c->inds[1]];
      memmove(&ops[c->inds[1]], &ops[c->inds[1] + 1], (size_t)(nlive - c->inds[1] - 1) * sizeof *ops);
      ops[--nlive] = NULL;
      operand = contract2(&C, lhs, rhs, c, names, sh);
    }
    if (!operand) goto done;
    if (strcmp(names, c->out) != 0) {
      int64_t perm[NAMES];
      int n = (int)strlen(c->out);
      for (int i = 0; i < n; i++) perm[i] = find_of(names, c->out[i]);
      SrVal *tr = sr_lax_transpose(I, operand, perm, n);
      sr_unref(operand);
      if (!(operand = tr)) goto done;
    }
    ops[nlive++] = operand;
  }
  r = sr_lax_convert(I, ops[0], C.pref, weak, NULL);
done:
  for (int o = 0; o < nlive; o++) sr_unref(ops[o]);
  sr_unref(sh);
  return r;
}

static SrVal *jnp_einsum(SrInterp *I, SrArgs *a) { return einsum_run(I, a, 0); }
static SrVal *jnp_einsum_path(SrInterp *I, SrArgs *a) { return einsum_run(I, a, 1); }

void sr_jnp_einsum_init(void) {
  sr_def("jax.numpy.einsum_path", jnp_einsum_path,
         "einsum_path(subscripts, *operands, optimize='auto'): (the contraction path einsum takes as optimize=, "
         "None where opt_einsum gives its PathInfo)");
  sr_def("jax.numpy.einsum", jnp_einsum,
         "einsum(subscripts, *operands, optimize='auto', precision=None, preferred_element_type=None, "
         "out_sharding=None): any number of operands, ellipses, repeated indices, in opt_einsum's order");
}
