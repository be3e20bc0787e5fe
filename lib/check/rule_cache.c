/* rule_cache.c: the results of the type rules, remembered (issue 17).

   An eager operation binds its primitive, and binding runs the type rule
   on the operands' types.  A rule is a function of the primitive, its
   input types, its params and the typing context (the abstract mesh in
   context, check_vma), and types and meshes are interned for the whole
   session, so the same operands give the same results: a small
   direct-mapped table keyed by all of those gives them back without
   running the rule again.  Only what the key holds completely is
   remembered: equations without input atoms (literal values) or written
   result types, outside vmap's named axes, params of plain values (None,
   numbers, strings, dtypes, interned meshes, tuples of those), a rule that
   succeeded without a diagnostic.  Errors always run the rule, so its
   message and location are its own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/rule.h"
#include "check/rule_cache.h"
#include "util/env.h"

#define NSLOT 256
#define MAXIN 4
#define MAXOUT 2
#define MAXKEY 192

typedef struct Slot {
  const SrPrim *prim;
  SrTypeRule rule;
  const SrMesh *mesh;
  int check_vma; /* ctx_flags */
  uint32_t nin, nout, keylen;
  const SrType *in[MAXIN];
  const SrType *out[MAXOUT];
  unsigned char key[MAXKEY];
} Slot;

static Slot slots[NSLOT];
static int enabled = -1;  /* SHARDREPL_RULE_CACHE */

typedef struct Key {
  unsigned char *p;
  uint32_t n;
  int full;
} Key;

static void put(Key *k, const void *p, size_t n) {
  if (k->full || k->n + n > MAXKEY) {
    k->full = 1;
    return;
  }
  memcpy(k->p + k->n, p, n);
  k->n += (uint32_t)n;
}

/* Appends v's kind and value; 0 when v is not plain enough to be a key. */
static int put_val(Key *k, const SrVal *v, int depth) {
  unsigned char kind = v->kind;
  put(k, &kind, 1);
  switch (v->kind) {
  case SR_V_NONE: return 1;
  case SR_V_BOOL:
  case SR_V_INT: put(k, &v->i, sizeof v->i); return 1;
  case SR_V_FLOAT: put(k, &v->f, sizeof v->f); return 1; /* the bits: -0.0 and NaNs apart */
  case SR_V_COMPLEX: put(k, &v->c, sizeof v->c); return 1;
  case SR_V_STR:
  case SR_V_WORD: {
    uint32_t n = (uint32_t)v->str.n;
    put(k, &n, sizeof n);
    put(k, v->str.s, v->str.n);
    return 1;
  }
  case SR_V_DTYPE: put(k, &v->dtype, sizeof v->dtype); return 1;
  case SR_V_AXISTYPE: put(k, &v->axistype, sizeof v->axistype); return 1;
  case SR_V_MESH: put(k, &v->mesh, sizeof v->mesh); return 1; /* interned */
  case SR_V_TUPLE:
    if (depth > 3) return 0;
    put(k, &v->seq.n, sizeof v->seq.n);
    for (int i = 0; i < v->seq.n && !k->full; i++)
      if (!put_val(k, v->seq.items[i], depth + 1)) return 0;
    return 1;
  default: return 0;
  }
}

static uint32_t mix(uint32_t h, uintptr_t x) { return (h ^ (uint32_t)(x ^ (x >> 29))) * 16777619u; }

/* The key of e in cx into k and its slot, or -1 when e is not remembered. */
static int key_of(SrTypeCtx *cx, const SrRuleEqn *e, Key *k) {
  if (!sr_env_on("SHARDREPL_RULE_CACHE", &enabled) || e->inv || e->written || cx->nvmap || e->nin > MAXIN || e->nout > MAXOUT) return -1;
  if (e->prim->flags & (SR_PF_CALL | SR_PF_EFFECT)) return -1;
  for (uint32_t i = 0; i < e->nin; i++)
    if (!e->in[i]) return -1;
  k->n = 0;
  k->full = 0;
  for (uint32_t i = 0; i < e->nparams; i++) {
    const char *key = e->params[i].key;
    uint32_t n = (uint32_t)strlen(key);
    put(k, &n, sizeof n);
    put(k, key, n);
    if (!put_val(k, e->params[i].val, 0) || k->full) return -1;
  }
  uint32_t h = 2166136261u;
  h = mix(h, (uintptr_t)e->prim);
  h = mix(h, (uintptr_t)cx->mesh);
  for (uint32_t i = 0; i < e->nin; i++) h = mix(h, e->in[i]->hash);
  for (uint32_t i = 0; i < k->n; i++) h = (h ^ k->p[i]) * 16777619u;
  return (int)(h & (NSLOT - 1));
}

/* the context's flags a rule reads: check_vma, jax_allow_f16_reductions */
static int ctx_flags(const SrTypeCtx *cx) { return cx->check_vma | (cx->no_f16_reductions ? 2 : 0); }

static int matches(const Slot *s, SrTypeCtx *cx, const SrRuleEqn *e, const Key *k) {
  if (s->prim != e->prim || s->rule != e->prim->type || s->mesh != cx->mesh || s->check_vma != ctx_flags(cx) ||
      s->nin != e->nin || s->nout != e->nout || s->keylen != k->n)
    return 0;
  for (uint32_t i = 0; i < e->nin; i++)
    if (s->in[i] != e->in[i]) return 0;
  return memcmp(s->key, k->p, k->n) == 0;
}

int sr_type_rule_cached(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  unsigned char buf[MAXKEY];
  Key k = {buf, 0, 0};
  int j = key_of(cx, e, &k);
  if (j >= 0 && matches(&slots[j], cx, e, &k)) {
    for (uint32_t i = 0; i < e->nout; i++) out[i] = slots[j].out[i];
    return 0;
  }
  int before = cx->d ? cx->d->count : 0;
  if (sr_type_rule_run(cx, e, out) < 0) return -1;
  if (j < 0 || (cx->d && cx->d->count != before)) return 0;
  for (uint32_t i = 0; i < e->nout; i++)
    if (!out[i]) return 0;
  Slot *s = &slots[j];
  s->prim = e->prim;
  s->rule = e->prim->type;
  s->mesh = cx->mesh;
  s->check_vma = ctx_flags(cx);
  s->nin = e->nin;
  s->nout = e->nout;
  s->keylen = k.n;
  for (uint32_t i = 0; i < e->nin; i++) s->in[i] = e->in[i];
  for (uint32_t i = 0; i < e->nout; i++) s->out[i] = out[i];
  memcpy(s->key, k.p, k.n);
  return 0;
}
