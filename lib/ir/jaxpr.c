/* jaxpr.c: programs, the jaxpr builder, literals. */
#include "ir/jaxpr.h"

#include <stdlib.h>
#include <string.h>

#include "util/pyfmt.h"

SrProgram *sr_program_new(void) {
  SrProgram *p = sr_xcalloc(1, sizeof *p);
  p->rc = 1;
  p->arena = sr_arena_new();
  return p;
}

SrProgram *sr_program_ref(SrProgram *p) {
  if (p) p->rc++;
  return p;
}

void sr_program_unref(SrProgram *p) {
  if (!p || --p->rc > 0) return;
  for (int i = 0; i < p->capdeps; i++) sr_program_unref(p->deps[i]);
  free(p->deps);
  for (int i = 0; i < p->nheld; i++) sr_unref(p->held[i]);
  free(p->held);
  sr_src_unref(p->src);
  sr_arena_free(p->arena);
  free(p);
}

/* The slot of q in the set of deps t of cap slots: q's, or the empty one
   where it would go. */
static int dep_slot(SrProgram *const *t, int cap, const SrProgram *q) {
  int h = (int)((((uintptr_t)q >> 4) * 0x9E3779B97F4A7C15ull) >> 40) & (cap - 1);
  while (t[h] && t[h] != q) h = (h + 1) & (cap - 1);
  return h;
}

/* A trace may depend on thousands of programs (one per jitted call), so
   deps is a hash set, not a list to search. */
void sr_program_dep(SrProgram *p, SrProgram *q) {
  if (p == q) return;
  if (2 * (p->ndeps + 1) > p->capdeps) {
    int cap = p->capdeps ? 2 * p->capdeps : 8;
    SrProgram **t = sr_xcalloc((size_t)cap, sizeof *t);
    for (int i = 0; i < p->capdeps; i++)
      if (p->deps[i]) t[dep_slot(t, cap, p->deps[i])] = p->deps[i];
    free(p->deps);
    p->deps = t;
    p->capdeps = cap;
  }
  int h = dep_slot(p->deps, p->capdeps, q);
  if (p->deps[h]) return;
  p->deps[h] = sr_program_ref(q);
  p->ndeps++;
}

SrVal *sr_program_hold(SrProgram *p, SrVal *v) {
  if (v->rc < 0) return v;
  if (p->nheld == p->capheld) {
    p->capheld = p->capheld ? 2 * p->capheld : 4;
    p->held = sr_xrealloc(p->held, (size_t)p->capheld * sizeof *p->held);
  }
  p->held[p->nheld++] = sr_ref(v);
  return v;
}

int32_t *sr_jaxpr_last_use(const SrJaxpr *j, const uint8_t *skip) {
  int32_t *last = sr_xmalloc((j->nvars + 1) * sizeof *last);
  for (uint32_t i = 0; i <= j->nvars; i++) last[i] = SR_LAST_NONE;
  for (uint32_t k = 0; k < j->neqn; k++) {
    if (skip && skip[k]) continue;
    const SrEqn *e = &j->eqns[k];
    for (uint32_t i = 0; i < e->nin; i++)
      if (e->in[i]->kind == SR_VAR) last[e->in[i]->id] = (int32_t)k;
  }
  for (uint32_t i = 0; i < j->nout; i++)
    if (j->outvars[i]->kind == SR_VAR) last[j->outvars[i]->id] = SR_LAST_OUT;
  return last;
}

SrVal *sr_eqn_param(const SrEqn *e, const char *key) {
  for (uint32_t i = 0; i < e->nparams; i++)
    if (e->params[i].key == key) return e->params[i].val;
  return NULL;
}

SrVal *sr_params_find(const SrParam *ps, uint32_t n, const char *key) {
  for (uint32_t i = 0; i < n; i++)
    if (ps[i].key == key || strcmp(ps[i].key, key) == 0) return ps[i].val;
  return NULL;
}

int sr_param_jaxprs(const SrVal *v, SrJaxpr **out, int max) {
  if (v->kind == SR_V_JAXPR) {
    if (max > 0) out[0] = v->jx.jaxpr;
    return 1;
  }
  if (v->kind != SR_V_TUPLE || v->seq.n == 0) return 0;
  for (int i = 0; i < v->seq.n; i++)
    if (v->seq.items[i]->kind != SR_V_JAXPR) return 0;
  for (int i = 0; i < v->seq.n && i < max; i++) out[i] = v->seq.items[i]->jx.jaxpr;
  return v->seq.n;
}

/* ---- the builder ---- */

#define GROW(arr, n, cap)                                            \
  do {                                                               \
    if ((n) == (cap)) {                                              \
      (cap) = (cap) ? 2 * (cap) : 8;                                 \
      (arr) = sr_xrealloc((arr), (size_t)(cap) * sizeof *(arr));     \
    }                                                                \
  } while (0)

void sr_jb_init(SrJaxprBuilder *b, SrProgram *p) {
  memset(b, 0, sizeof *b);
  b->prog = p;
  b->off = SR_NO_OFF;
}

void sr_jb_free(SrJaxprBuilder *b) {
  free(b->in);
  free(b->consts);
  free(b->out);
  free(b->eqns);
  memset(b, 0, sizeof *b);
}

SrVar *sr_jb_var(SrJaxprBuilder *b, const SrType *t) {
  SrVar *v = SR_NEW(b->prog->arena, SrVar);
  v->type = t;
  v->kind = SR_VAR;
  return v;
}

SrVar *sr_jb_drop(SrJaxprBuilder *b, const SrType *t) {
  SrVar *v = sr_jb_var(b, t);
  v->kind = SR_DROP;
  return v;
}

void sr_jb_invar(SrJaxprBuilder *b, SrVar *v) {
  GROW(b->in, b->nin, b->capin);
  b->in[b->nin++] = v;
}

void sr_jb_constvar(SrJaxprBuilder *b, SrVar *v, SrVal *value) {
  /* constvars lead the inputs */
  GROW(b->in, b->nin, b->capin);
  memmove(b->in + b->nconst + 1, b->in + b->nconst, (b->nin - b->nconst) * sizeof *b->in);
  b->in[b->nconst] = v;
  b->consts = sr_xrealloc(b->consts, (b->nconst + 1) * sizeof *b->consts);
  b->consts[b->nconst] = value ? sr_program_hold(b->prog, value) : NULL;
  b->nconst++;
  b->nin++;
}

void sr_jb_outvar(SrJaxprBuilder *b, SrVar *v) {
  GROW(b->out, b->nout, b->capout);
  b->out[b->nout++] = v;
}

SrEqn *sr_jb_eqn(SrJaxprBuilder *b, const struct SrPrim *prim, uint32_t nin,
                 SrVar *const *in, uint32_t nout, SrVar *const *out, uint32_t nparams,
                 const SrParam *params) {
  SrArena *a = b->prog->arena;
  GROW(b->eqns, b->neqn, b->capeqn);
  SrEqn *e = &b->eqns[b->neqn++];
  e->prim = prim;
  e->nin = nin;
  e->nout = nout;
  e->nparams = nparams;
  e->in = sr_arena_memdup(a, in, nin * sizeof *in);
  e->out = sr_arena_memdup(a, out, nout * sizeof *out);
  e->params = sr_arena_memdup(a, params, nparams * sizeof *params);
  e->off = SR_NO_OFF;
  e->ns = NULL;
  e->loc = NULL;
  e->mesh = NULL;
  return e;
}

const SrDebugInfo *sr_debug_info_copy(SrArena *a, const SrDebugInfo *d, int unknown_names) {
  if (!d) return NULL;
  SrDebugInfo *c = SR_NEW(a, SrDebugInfo);
  *c = *d;
  if (unknown_names) c->narg = c->nres = -1;
  c->arg_names = c->narg > 0 ? sr_arena_memdup(a, d->arg_names, (size_t)c->narg * sizeof *c->arg_names) : NULL;
  c->result_paths = c->nres > 0 ? sr_arena_memdup(a, d->result_paths, (size_t)c->nres * sizeof *c->result_paths) : NULL;
  return c;
}

SrJaxpr *sr_jb_finish(SrJaxprBuilder *b) {
  SrArena *a = b->prog->arena;
  SrJaxpr *j = SR_NEW(a, SrJaxpr);
  j->prog = b->prog;
  j->off = b->off;
  j->nconst = b->nconst;
  j->nin = b->nin;
  j->nout = b->nout;
  j->neqn = b->neqn;
  j->invars = sr_arena_memdup(a, b->in, b->nin * sizeof *b->in);
  j->outvars = sr_arena_memdup(a, b->out, b->nout * sizeof *b->out);
  j->eqns = sr_arena_memdup(a, b->eqns, b->neqn * sizeof *b->eqns);
  j->consts = b->nconst ? sr_arena_memdup(a, b->consts, b->nconst * sizeof *b->consts) : NULL;
  /* number the binders */
  uint32_t id = 0;
  for (uint32_t i = 0; i < j->nin; i++) j->invars[i]->id = id++;
  for (uint32_t k = 0; k < j->neqn; k++)
    for (uint32_t i = 0; i < j->eqns[k].nout; i++) j->eqns[k].out[i]->id = id++;
  j->nvars = id;
  sr_jb_free(b);
  return j;
}

/* ---- literals ---- */

const SrType *sr_lit_bare_type(const char *t) {
  SrDtype d = strcmp(t, "True") == 0 || strcmp(t, "False") == 0 ? SR_BOOL
              : strchr(t, 'j')                                  ? SR_C64
              : strpbrk(t, ".eEn")                              ? SR_F32
                                                                : SR_I32;
  return sr_type_with_weak(sr_type_scalar(d), 1);
}

static SrVar *new_lit(SrProgram *p, const SrType *t) {
  SrVar *v = SR_NEW(p->arena, SrVar);
  v->type = t;
  v->kind = SR_LIT;
  v->lit_form = SR_LIT_TYPED;
  return v;
}

SrVar *sr_lit_int(SrProgram *p, const SrType *t, int64_t i) {
  SrVar *v = new_lit(p, t);
  if (sr_dtype_is_inexact(t->dtype))
    v->val.f = (double)i;
  else
    v->val.i = i;
  return v;
}

SrVar *sr_lit_float(SrProgram *p, const SrType *t, double f) {
  SrVar *v = new_lit(p, t);
  if (t->dtype == SR_F32) f = (double)(float)f;
  if (sr_dtype_is_inexact(t->dtype))
    v->val.f = f;
  else
    v->val.i = (int64_t)f;
  return v;
}

SrVar *sr_lit_bool(SrProgram *p, int b) {
  SrVar *v = new_lit(p, sr_type_scalar(SR_BOOL));
  v->val.i = b != 0;
  return v;
}

void sr_lit_value_text(SrBuf *out, const SrVar *lit) {
  if (lit->text) {
    sr_buf_puts(out, lit->text);
    return;
  }
  if (!lit->type) {
    sr_buf_printf(out, "%lld", (long long)lit->val.i);
    return;
  }
  switch (sr_dtype_kind(lit->type->dtype)) {
  case SR_DK_BOOL: sr_buf_puts(out, lit->val.i ? "True" : "False"); break;
  case SR_DK_INT: sr_buf_printf(out, "%lld", (long long)lit->val.i); break;
  case SR_DK_UINT: sr_buf_printf(out, "%llu", (unsigned long long)lit->val.i); break;
  case SR_DK_FLOAT: sr_py_float_repr(out, lit->val.f); break;
  case SR_DK_COMPLEX: sr_py_complex_str(out, lit->val.c[0], lit->val.c[1]); break;
  default: sr_buf_puts(out, "[...]"); break;
  }
}
