/* prim.c: the primitive table and the lookup of printed names. */
#include "prims/prim.h"

#include <stdlib.h>
#include <string.h>

#include "util/intern.h"
#include "util/mem.h"

SrPrim sr_prims[SR_NPRIMS] = {
#define SR_PRIM(id, name, flags, pp) [SR_P_##id] = {NULL, SR_P_##id, flags, pp, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
#include "prims/prim.def"
#undef SR_PRIM
};

static const char *const prim_names[SR_NPRIMS] = {
#define SR_PRIM(id, name, flags, pp) [SR_P_##id] = name,
#include "prims/prim.def"
#undef SR_PRIM
};

/* Name -> row, keyed by the interned name's address. */
static const SrPrim **index_tab;
static size_t index_cap, index_count;

static size_t slot_of(const char *s) { return ((uintptr_t)s >> 4) * 2654435761u; }

static void index_put(const SrPrim *p);

static void index_grow(void) {
  const SrPrim **old = index_tab;
  size_t oldcap = index_cap;
  index_cap = index_cap ? 2 * index_cap : 512;
  index_tab = sr_xcalloc(index_cap, sizeof *index_tab);
  index_count = 0;
  for (size_t i = 0; i < oldcap; i++)
    if (old[i]) index_put(old[i]);
  free(old);
}

static void index_put(const SrPrim *p) {
  if (2 * (index_count + 1) > index_cap) index_grow();
  size_t j = slot_of(p->name) & (index_cap - 1);
  while (index_tab[j]) j = (j + 1) & (index_cap - 1);
  index_tab[j] = p;
  index_count++;
}

void sr_prims_init(void) {
  static int done;
  if (done) return;
  done = 1;
  for (int i = 0; i < SR_NPRIMS; i++) {
    sr_prims[i].name = sr_intern_cstr(prim_names[i]);
    index_put(&sr_prims[i]);
  }
}

const SrPrim *sr_prim_lookup(const char *name, size_t n) {
  sr_prims_init();
  const char *s = sr_intern(name, n);
  /* the names are interned, so this compares pointers */
  for (size_t j = slot_of(s) & (index_cap - 1); index_tab[j]; j = (j + 1) & (index_cap - 1))
    if (index_tab[j]->name == s) return index_tab[j];
  /* a primitive the table lacks gets a row with no rules */
  SrPrim *p = sr_xcalloc(1, sizeof *p);
  p->name = s;
  p->id = -1;
  /* nothing knows its effects, so the optimizer keeps it */
  p->flags = SR_PF_MULTI | SR_PF_EFFECT | SR_PF_NO_CSE;
  p->pp = SR_PP_DEFAULT;
  index_put(p);
  return p;
}

void sr_prims_matrix(SrBuf *b) {
  sr_prims_init();
  static const char *const rules[] = {"type", "eval", "jvp", "transpose", "comm", "batch"};
  enum { NRULES = sizeof rules / sizeof *rules };
  int width = (int)strlen("primitive");
  for (int i = 0; i < SR_NPRIMS; i++) {
    int n = (int)strlen(sr_prims[i].name);
    if (n > width) width = n;
  }
  int count[NRULES] = {0};
  sr_buf_printf(b, "%-*s", width, "primitive");
  for (int r = 0; r < NRULES; r++) sr_buf_printf(b, "  %s", rules[r]);
  sr_buf_puts(b, "\n");
  for (int i = 0; i < SR_NPRIMS; i++) {
    const SrPrim *p = &sr_prims[i];
    const int has[NRULES] = {p->type != NULL, p->eval != NULL, p->jvp != NULL, p->transpose != NULL,
                             p->comm != NULL, p->batch != NULL};
    SrBuf line = SR_BUF_INIT;
    sr_buf_printf(&line, "%-*s", width, p->name);
    for (int r = 0; r < NRULES; r++) {
      /* the mark under the first letter of the column's name */
      sr_buf_printf(&line, "  %-*s", (int)strlen(rules[r]), has[r] ? "x" : "-");
      count[r] += has[r];
    }
    /* no trailing blanks */
    while (line.len && line.p[line.len - 1] == ' ') line.p[--line.len] = 0;
    sr_buf_printf(b, "%s\n", line.p);
    sr_buf_free(&line);
  }
  sr_buf_printf(b, "%d primitives:", SR_NPRIMS);
  for (int r = 0; r < NRULES; r++) sr_buf_printf(b, " %d %s%s", count[r], rules[r], r + 1 < NRULES ? "," : "\n");
}

int sr_prim_comm_notes(const SrEqn *e, SrCommNote *out, int max) {
  return e->prim->comm ? e->prim->comm(e, out, max) : -1;
}

int sr_comm_note(SrCommNote *out, int max, int n, const char *what, const SrMesh *m, SrAxes a) {
  if (n < max) {
    out[n].what = what;
    out[n].mesh = m;
    out[n].axes = a;
  }
  return n + 1;
}

const char *sr_prim_op_name(const SrPrim *p, const SrParam *ps, uint32_t nparams, const char *key, int s,
                            char *buf, size_t n) {
  if (p->op_name) return p->op_name(ps, nparams, key, s, buf, n);
  return key ? NULL : p->name;
}

/* The walk of sr_prim_has_effect: each body checked once (bodies are
   shared, as jit's of jit's are, so a walk that did not remember would
   take exponential time). */
typedef struct EffWalk {
  const SrJaxpr **seen;
  int n, cap;
  unsigned flag; /* SR_PF_EFFECT, or SR_PF_COLL */
} EffWalk;

static int eff_walk(EffWalk *w, const SrPrim *p, const SrParam *ps, uint32_t n) {
  if ((p->flags & w->flag) && p->id >= 0) return 1;
  if (!(p->flags & SR_PF_CALL) && p->id >= 0) return 0;
  for (uint32_t i = 0; i < n; i++) {
    SrJaxpr *js[16];
    int nj = sr_param_jaxprs(ps[i].val, js, 16);
    for (int k = 0; k < nj && k < 16; k++) {
      int seen = 0;
      for (int s = 0; s < w->n && !seen; s++) seen = w->seen[s] == js[k];
      if (seen) continue;
      if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 16;
        w->seen = sr_xrealloc(w->seen, (size_t)w->cap * sizeof *w->seen);
      }
      w->seen[w->n++] = js[k];
      for (uint32_t q = 0; q < js[k]->neqn; q++) {
        const SrEqn *e = &js[k]->eqns[q];
        if (eff_walk(w, e->prim, e->params, e->nparams)) return 1;
      }
    }
  }
  return 0;
}

int sr_prim_has_effect(const SrPrim *p, const SrParam *ps, uint32_t n) {
  if ((p->flags & SR_PF_EFFECT) && p->id >= 0) return 1;
  if (!(p->flags & SR_PF_CALL) && p->id >= 0) return 0;
  EffWalk w = {0};
  w.flag = SR_PF_EFFECT;
  int r = eff_walk(&w, p, ps, n);
  free(w.seen);
  return r;
}

int sr_prim_holds_collective(const SrPrim *p, const SrParam *ps, uint32_t n) {
  if (!(p->flags & SR_PF_CALL) && p->id >= 0) return 0;
  EffWalk w = {0};
  w.flag = SR_PF_COLL;
  int r = eff_walk(&w, p, ps, n);
  free(w.seen);
  return r;
}
