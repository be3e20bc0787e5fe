/* check.c: checking jaxprs with the primitives' type rules. */
#include "check/check.h"

#include <stdlib.h>
#include <string.h>

typedef struct Checker {
  SrCheckResult *res;
  int strict;
  int errors;
} Checker;

/* Symbolic sizes (the old dynamic shapes) name vars of their own scope:
   across a call they match any size. */
static int has_symbolic(const SrType *t) {
  for (int i = 0; i < t->ndim; i++)
    if (t->dims[i].sym) return 1;
  return 0;
}

static const SrType *without_symbols(const SrType *t) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  for (int i = 0; i < b.ndim; i++)
    if (b.dims[i].sym) {
      b.dims[i].sym = NULL;
      b.dims[i].size = 0;
    }
  return sr_type_get(&b);
}

int sr_types_match(const SrType *a, const SrType *b) {
  if (a == b) return 1;
  if (!a || !b) return 0;
  if (has_symbolic(a) || has_symbolic(b)) {
    if (a->ndim != b->ndim) return 0;
    a = without_symbols(a);
    b = without_symbols(b);
    for (int i = 0; i < a->ndim; i++)
      if (!a->dims[i].size || !b->dims[i].size) {
        /* either side symbolic: take the other's size */
        SrTypeBuilder x;
        sr_type_builder(&x, a);
        x.dims[i].size = b->dims[i].size;
        a = sr_type_get(&x);
      }
  }
  if (a->weak != b->weak) {
    a = sr_type_with_weak(a, 0);
    b = sr_type_with_weak(b, 0);
  }
  return sr_type_equal_mod_mesh(a, b);
}

const SrType *sr_atom_type(const SrVar *v) {
  if (v->type) return v->type;
  /* a bare literal of the 2021-2024 printer made without the parser */
  return sr_lit_bare_type(v->text ? v->text : "0");
}

static void note_unknown(Checker *ck, const char *name) {
  SrCheckResult *r = ck->res;
  if (!r) return;
  for (int i = 0; i < r->nunknown; i++)
    if (r->unknown[i] == name) return;
  if (r->nunknown < 16) r->unknown[r->nunknown++] = name;
}

static const char *ordinal(uint32_t i) {
  static const char *const o[] = {"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"};
  return i < 8 ? o[i] : "next";
}

int sr_check_body(SrTypeCtx *cx, const SrJaxpr *j, const SrType *const *in, uint32_t nin,
                  const SrType **out) {
  Checker *ck = cx->user;
  int errors = 0;
  const SrType **env = sr_xcalloc(j->nvars + 1, sizeof *env);
  SrTypeCtx c = *cx;
  if (j->off != SR_NO_OFF) c.off = j->off;
  /* the inputs: constvars take their written types; the arguments must
     receive what is written */
  uint32_t nargs = sr_nargs(j);
  if (in && nin != nargs) {
    sr_terr(&c, "TypeError", "a jaxpr with %u inputs is applied to %u arguments", nargs, nin);
    errors++;
  }
  for (uint32_t i = 0; i < j->nin; i++) env[j->invars[i]->id] = j->invars[i]->type;
  /* a top-level jaxpr's binders are types as written: they must be ones
     (a nested jaxpr's are compared with what it receives) */
  for (uint32_t i = 0; !in && i < j->nin; i++)
    if (j->invars[i]->type && sr_check_divisible(&c, j->invars[i]->type) < 0) errors++;
  for (uint32_t i = 0; in && i < nargs && i < nin; i++) {
    const SrType *w = sr_args(j)[i]->type;
    if (in[i] && !sr_types_match(in[i], w)) {
      sr_terr(&c, "TypeError", "the %s input of this jaxpr is written %s but it receives %s", ordinal(i),
              sr_type_short(w), sr_type_short(in[i]));
      errors++;
    }
  }
  const SrType *ins[256], *outs[256], *written[256];
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    c.off = e->off != SR_NO_OFF ? e->off : c.off;
    if (e->nin > 256 || e->nout > 256) {
      sr_terr(&c, "TypeError", "%s: too many operands to check", e->prim->name);
      errors++;
      continue;
    }
    for (uint32_t i = 0; i < e->nin; i++) {
      const SrVar *a = e->in[i];
      ins[i] = a->kind == SR_LIT ? sr_atom_type(a) : env[a->id];
    }
    for (uint32_t i = 0; i < e->nout; i++) written[i] = e->out[i]->type;
    int ok = 0;
    if (!e->prim->type) {
      if (ck && ck->strict) {
        sr_terr(&c, "NotImplementedError", "shardrepl has no type rule for the primitive '%s'", e->prim->name);
        errors++;
      } else if (ck) {
        note_unknown(ck, e->prim->name);
      }
    } else {
      SrRuleEqn re = {e->prim, e->nin, e->nout, e->nparams, ins, e->in, e->params, written};
      memset(outs, 0, e->nout * sizeof *outs);
      int before = c.d ? c.d->count : 0;
      if (sr_type_rule(&c, &re, outs) < 0) {
        if (!c.d || c.d->count == before)
          sr_terr(&c, "TypeError", "the type rule of %s failed", e->prim->name);
        errors++;
      } else {
        ok = 1;
      }
    }
    for (uint32_t i = 0; ok && i < e->nout; i++) {
      if (!outs[i] || sr_types_match(outs[i], written[i])) continue;
      if (written[i] && written[i]->dtype == sr_dtype_intern("*", 1)) continue;
      sr_terr(&c, "TypeError", "%s computes %s for its %s output, but the jaxpr writes %s", e->prim->name,
              sr_type_short(outs[i]), ordinal(i), sr_type_short(written[i]));
      errors++;
    }
    for (uint32_t i = 0; i < e->nout; i++) env[e->out[i]->id] = written[i];
  }
  for (uint32_t i = 0; out && i < j->nout; i++) {
    const SrVar *v = j->outvars[i];
    out[i] = v->kind == SR_LIT ? sr_atom_type(v) : env[v->id];
  }
  free(env);
  if (ck) ck->errors += errors;
  return errors ? -1 : 0;
}

int sr_check_jaxpr(const SrJaxpr *j, const SrCheckOpts *opts, SrDiags *d, SrCheckResult *res) {
  sr_prims_init();
  Checker ck = {res, opts ? opts->strict : 0, 0};
  if (res) memset(res, 0, sizeof *res);
  SrTypeCtx cx;
  memset(&cx, 0, sizeof cx);
  cx.mesh = opts ? opts->mesh : NULL;
  if (!cx.mesh && j->prog && j->prog->mesh) cx.mesh = j->prog->mesh;
  cx.d = d;
  cx.src = j->prog ? j->prog->src : NULL;
  cx.off = j->off != SR_NO_OFF ? j->off : 0;
  cx.check_body = sr_check_body;
  cx.user = &ck;
  sr_check_body(&cx, j, NULL, 0, NULL);
  return ck.errors;
}
