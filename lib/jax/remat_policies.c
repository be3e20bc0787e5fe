/* remat_policies.c: jax.checkpoint_policies and
 * jax.ad_checkpoint.checkpoint_name (ad_checkpoint.py).
 *
 * checkpoint_name(x, name) binds the `name` primitive on each leaf of x
 * (name[name=NAME] a): the identity, whose JVP names the primal only
 * (name_jvp) and whose batching rule binds it again (name_batcher).
 *
 * The policies are the objects JAX's are, printed as JAX prints them:
 * nothing_saveable and everything_saveable (functions), dots_saveable /
 * checkpoint_dots and dots_with_no_batch_dims_saveable (DotsSaveable
 * instances), save_only_these_names(*names), save_any_names_but_these(*names)
 * and save_from_both_policies(p1, p2).  jax.checkpoint takes
 * nothing_saveable, the default, which it applies; with another policy it
 * raises NotImplementedError (its partial evaluation, remat_partial_eval
 * with a saveable rule, is not there yet). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/remat_policies.h"

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "jax/tree_util.h"
#include "lax/lax.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- the name primitive ---- */

static int ty_name(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  out[0] = e->in[0];
  return 0;
}

static int ev_name(SrEvalCtx *cx, const SrEvalEqn *e) {
  (void)cx;
  e->out[0] = sr_array_ref(e->in[0]);
  return 0;
}

/* name_jvp: the primal named, the tangent as it is */
static int jvp_name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrVal *r = sr_ad_bind_eqn1(ad, e, x);
  if (!r) return -1;
  y[0] = r;
  ty[0] = t[0];
  return 0;
}

/* name_batcher */
static int batch_name(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *r = sr_ad_bind(&b->ad, SR_P_name, 1, x, (int)e->nparams, e->params);
  if (!r) return -1;
  y[0] = r;
  ybd[0] = bd[0];
  return 0;
}

static SrVal *name_leaf(SrInterp *I, SrVal *x, SrVal *name) {
  SrVal *ch = sr_pytree_children(x);
  if (ch) {
    for (int i = 0; i < ch->seq.n; i++) {
      SrVal *r = name_leaf(I, ch->seq.items[i], name);
      if (!r) {
        sr_unref(ch);
        return NULL;
      }
      sr_unref(ch->seq.items[i]);
      ch->seq.items[i] = r;
    }
    SrVal *r = sr_pytree_rebuild(x, ch);
    sr_unref(ch);
    return r;
  }
  /* name_p's impl is the identity: eagerly a value stays what it is */
  if (!I->trace) return sr_ref(x);
  SrVal *arr = sr_array_of(x) ? sr_ref(x) : sr_call1(I, sr_lookup_qualname("jax.numpy.asarray"), x);
  if (!arr) return NULL;
  SrPList ps = {0};
  sr_plist_add(&ps, "name", sr_word(NULL, name->str.s, name->str.n));
  SrVal *r = sr_bind(I, SR_P_name, 1, &arr, ps.n, ps.p);
  sr_plist_free(&ps);
  sr_unref(arr);
  return r;
}

/* checkpoint_name(x, name): tree_map(partial(name_p.bind, name=name), x) */
static SrVal *bi_checkpoint_name(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "checkpoint_name", "x, name", p) < 0) return NULL;
  if (p[1]->kind != SR_V_STR) return sr_raise(I, "TypeError", "checkpoint_name: name must be a str");
  if (sr_pytree_check_depth(I, p[0]) < 0) return NULL;
  return name_leaf(I, p[0], p[1]);
}

/* ---- the policies ---- */

/* kinds: what saveable(prim, *avals, **params) answers */
enum {
  POL_NOTHING,     /* nothing_saveable */
  POL_EVERYTHING,  /* everything_saveable */
  POL_DOTS,        /* DotsSaveable(only_if_no_batch_dims=False) */
  POL_DOTS_NO_BATCH, /* DotsSaveable(only_if_no_batch_dims=True) */
  POL_ONLY_NAMES,  /* SaveOnlyTheseNames */
  POL_NAMES_BUT,   /* SaveAnyNamesButThese */
  POL_BOTH,        /* save_from_both_policies(p1, p2) */
};

typedef struct Policy {
  char *repr;
  int kind;
  char **names; /* POL_ONLY_NAMES, POL_NAMES_BUT */
  int nnames;
  SrVal *p1, *p2; /* POL_BOTH */
} Policy;

static void policy_free(void *d) {
  Policy *p = d;
  free(p->repr);
  for (int i = 0; i < p->nnames; i++) free(p->names[i]);
  free(p->names);
  sr_unref(p->p1);
  sr_unref(p->p2);
  free(p);
}

static void policy_repr(SrBuf *out, const SrVal *v) {
  const Policy *p = v->obj.data;
  sr_buf_puts(out, p->repr);
}

static const SrClass policy_class = {"checkpoint_policy", policy_free, policy_repr, NULL, NULL};

static Policy *policy_new(const char *repr, int kind) {
  Policy *p = sr_xcalloc(1, sizeof *p);
  p->repr = sr_xstrdup(repr);
  p->kind = kind;
  return p;
}

static SrVal *policy(const char *repr, int kind) { return sr_obj(&policy_class, policy_new(repr, kind)); }

int sr_remat_policy_kind(const SrVal *v) {
  if (!v || v->kind == SR_V_NONE) return 0;
  if (!sr_is_obj(v, &policy_class)) return -1;
  return ((const Policy *)v->obj.data)->kind;
}

static int has_name(const Policy *p, const SrVal *name) {
  if (!name || (name->kind != SR_V_WORD && name->kind != SR_V_STR)) return 0;
  for (int i = 0; i < p->nnames; i++)
    if (strlen(p->names[i]) == name->str.n && memcmp(p->names[i], name->str.s, name->str.n) == 0) return 1;
  return 0;
}

/* An empty sequence (a dimension_numbers batch part)? */
static int empty_seq(const SrVal *v) { return v && sr_is_seq(v) && v->seq.n == 0; }

/* The policy's saveable(prim, *avals, **params) on an equation
   (ad_checkpoint.py's policies); -2 for what is no policy object. */
static int policy_saveable(SrInterp *I, SrVal *v, const SrEqn *e) {
  if (!sr_is_obj(v, &policy_class)) return -2;
  const Policy *p = v->obj.data;
  switch (p->kind) {
  case POL_NOTHING: return 0;
  case POL_EVERYTHING: return 1;
  case POL_DOTS: return e->prim->id == SR_P_dot_general;
  case POL_DOTS_NO_BATCH: {
    if (e->prim->id != SR_P_dot_general) return 0;
    SrVal *dn = sr_eqn_param(e, sr_intern_cstr("dimension_numbers"));
    /* (_, _), (lhs_b, rhs_b) = params['dimension_numbers'] */
    if (!dn || !sr_is_seq(dn) || dn->seq.n != 2 || !sr_is_seq(dn->seq.items[1]) || dn->seq.items[1]->seq.n != 2)
      return 0;
    return empty_seq(dn->seq.items[1]->seq.items[0]) && empty_seq(dn->seq.items[1]->seq.items[1]);
  }
  case POL_ONLY_NAMES:
    return e->prim->id == SR_P_name && has_name(p, sr_eqn_param(e, sr_intern_cstr("name")));
  case POL_NAMES_BUT:
    return e->prim->id == SR_P_name && !has_name(p, sr_eqn_param(e, sr_intern_cstr("name")));
  case POL_BOTH: {
    int a = policy_saveable(I, p->p1, e);
    if (a < 0) return a;
    int b = policy_saveable(I, p->p2, e);
    if (b < 0) return b;
    return a || b;
  }
  }
  return 0;
}

/* frozenset({'a', 'b'}) of the names, sorted as str of a frozenset of
   strings is not (its order is the hash's): sorted here */
static char *names_repr(const char *cls, const char *field, SrArgs *a, SrInterp *I) {
  for (int i = 0; i < a->n; i++)
    if (a->v[i]->kind != SR_V_STR) {
      sr_raise(I, "TypeError", "%s: names must be str", cls);
      return NULL;
    }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "%s(%s=frozenset(", cls, field);
  if (!a->n) sr_buf_puts(&b, "))");
  else {
    sr_buf_puts(&b, "{");
    for (int i = 0; i < a->n; i++) {
      if (i) sr_buf_puts(&b, ", ");
      sr_val_repr(&b, a->v[i]);
    }
    sr_buf_puts(&b, "}))");
  }
  char *r = sr_xstrdup(sr_buf_str(&b));
  sr_buf_free(&b);
  return r;
}

static SrVal *names_policy(SrInterp *I, SrArgs *a, const char *cls, const char *field, int kind) {
  char *r = names_repr(cls, field, a, I);
  if (!r) return NULL;
  Policy *p = policy_new(r, kind);
  free(r);
  p->names = sr_xcalloc((size_t)a->n + 1, sizeof *p->names);
  for (int i = 0; i < a->n; i++) p->names[p->nnames++] = sr_xstrndup(a->v[i]->str.s, a->v[i]->str.n);
  return sr_obj(&policy_class, p);
}

static SrVal *bi_save_only_these_names(SrInterp *I, SrArgs *a) {
  return names_policy(I, a, "SaveOnlyTheseNames", "saveable_names", POL_ONLY_NAMES);
}

static SrVal *bi_save_any_names_but_these(SrInterp *I, SrArgs *a) {
  return names_policy(I, a, "SaveAnyNamesButThese", "names", POL_NAMES_BUT);
}

static SrVal *bi_save_from_both_policies(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "save_from_both_policies", "policy_1, policy_2", p) < 0) return NULL;
  for (int i = 0; i < 2; i++)
    if (!sr_is_obj(p[i], &policy_class))
      return sr_raise(I, "NotImplementedError",
                      "save_from_both_policies: only the policies of jax.checkpoint_policies are supported here");
  Policy *pol = policy_new("<function save_from_both_policies.<locals>.policy at 0xXXXXXXXXXXXX>", POL_BOTH);
  pol->p1 = sr_ref(p[0]);
  pol->p2 = sr_ref(p[1]);
  return sr_obj(&policy_class, pol);
}

/* ---- registration ---- */

void sr_remat_policies_init(void) {
  sr_set_type_rule(SR_P_name, ty_name);
  sr_set_eval_rule(SR_P_name, ev_name);
  sr_ad_set_jvp(SR_P_name, jvp_name);
  sr_prims[SR_P_name].batch = batch_name;
  sr_val_keep_class(&policy_class);
  sr_lax_remat_saveable = policy_saveable;
  sr_def("jax.ad_checkpoint.checkpoint_name", bi_checkpoint_name,
         "checkpoint_name(x, name): x, each leaf named (the name primitive) for a checkpoint policy");
  static const struct {
    const char *name, *repr;
    int kind;
  } fixed[] = {
    {"nothing_saveable", "<function nothing_saveable at 0xXXXXXXXXXXXX>", POL_NOTHING},
    {"everything_saveable", "<function everything_saveable at 0xXXXXXXXXXXXX>", POL_EVERYTHING},
    {"dots_saveable", "DotsSaveable(only_if_no_batch_dims=False)", POL_DOTS},
    {"checkpoint_dots", "DotsSaveable(only_if_no_batch_dims=False)", POL_DOTS},
    {"dots_with_no_batch_dims_saveable", "DotsSaveable(only_if_no_batch_dims=True)", POL_DOTS_NO_BATCH},
    {"checkpoint_dots_with_no_batch_dims", "DotsSaveable(only_if_no_batch_dims=True)", POL_DOTS_NO_BATCH},
  };
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
    char q[96];
    snprintf(q, sizeof q, "jax.checkpoint_policies.%s", fixed[i].name);
    sr_register(q, policy(fixed[i].repr, fixed[i].kind));
  }
  sr_def("jax.checkpoint_policies.save_only_these_names", bi_save_only_these_names,
         "save_only_these_names(*names): a checkpoint policy saving only the values named so (checkpoint_name)");
  sr_def("jax.checkpoint_policies.save_any_names_but_these", bi_save_any_names_but_these,
         "save_any_names_but_these(*names): a checkpoint policy saving the named values but these");
  sr_def("jax.checkpoint_policies.save_from_both_policies", bi_save_from_both_policies,
         "save_from_both_policies(p1, p2): a checkpoint policy saving what either saves");
}
