/* custom_jvp.c: jax.custom_jvp, f.defjvp(jvp) and f.defjvps(*jvps)
 * (custom_derivatives.py: custom_jvp, _flatten_jvp; ad.py:
 * JVPTrace/LinearizeTrace.process_custom_jvp_call).
 *
 * Calling a custom_jvp function traces the primal function and binds one
 * custom_jvp_call equation, printed as JAX prints it:
 *
 *     custom_jvp_call[name=f call_jaxpr={ ... } jvp=f_jvp
 *                     symbolic_zeros=False]
 *
 * Its jvp param is an object the program keeps by reference
 * (sr_val_keep_class), so that autodiff can call the user's rule later:
 *  - in forward mode (jax.jvp) the rule is called on the primals and the
 *    tangents, zeros instantiated, as JVPTrace does: its operations go to
 *    the current trace, so it may look at concrete values;
 *  - under linearization (jax.grad, jax.vjp, jax.linearize) the rule is
 *    traced, and its equations are bound one by one through sr_ad_bind_eqn,
 *    which sends those that read only primals to the primal trace and the
 *    rest to the linear jaxpr -- JAX's linearize_from_jvp, which partially
 *    evaluates the rule with the tangents unknown.
 * Either way the rule's pair is checked as _flatten_jvp checks it.
 *
 * Values the function closes over become leading operands (num_consts);
 * as JAX's lift_jvp does, their tangents are not given to the rule.
 *
 * A custom_jvp_call read from a jaxpr text has a word for jvp: its
 * call_jaxpr is differentiated instead (lax/control.c's rule).  The row's
 * JVP rule is lax/control.c's: it calls jvp_custom_jvp below, through the
 * hook sr_lax_custom_hooks.custom_jvp_call (lax/lax.h) this file's init sets,
 * for an equation whose jvp param is a rule object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "core/jaxstate.h"
#include "ad/batch.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "py/interp.h"
#include "jax/vjp.h"
#include "jax/tracers.h"
#include "lax/lax.h"
#include "check/rule.h"
#include "util/intern.h"

/* One call of a custom_jvp function: the jvp= param of its equation. */
typedef struct Cjvp {
  SrVal *rule;             /* jvp(primals, tangents) */
  const char *name, *rule_name;
  SrVal *in_tree;          /* the arguments (a tuple), leaves numbered */
  SrVal *out_tree;         /* the output, leaves numbered */
  int nconsts, nleaves, nout;
  int symbolic_zeros;      /* defjvp(symbolic_zeros=True) */
  int x64;                 /* jax_enable_x64 where the call was bound: the
                              rule runs under it (JAX runs it inside the
                              bind's trace context) */
  const SrType **out_types;
  uint8_t *ndrop;          /* a vmapped rule's: per leaf, the leading batch
                              dims its SymbolicZeros' avals leave out (NULL:
                              none) */
} Cjvp;

static void cjvp_free(void *d) {
  Cjvp *c = d;
  sr_unref(c->rule);
  sr_unref(c->in_tree);
  sr_unref(c->out_tree);
  free(c->out_types);
  free(c->ndrop);
  free(c);
}

/* prints as the rule's name, as JAX prints jvp_jaxpr_fun */
static void cjvp_repr(SrBuf *out, const SrVal *v) {
  const Cjvp *c = v->obj.data;
  sr_buf_puts(out, c->rule_name);
}

static const SrClass cjvp_class = {"custom_jvp_rule", cjvp_free, cjvp_repr, NULL, NULL};

/* Appends PyTreeDef(...) of v: what two structures are compared by. */
void sr_custom_treedef_of(SrBuf *b, SrVal *v) {
  int k = 0;
  SrVal *n = sr_pytree_numbered(v, &k);
  sr_vjp_treedef_str(b, n);
  sr_unref(n);
}

/* The structure `tree` with each leaf replaced by its type's short text,
   as JAX's messages show tree_unflatten(out_tree, [a.str_short() ...])
   with the quotes removed. */
void sr_custom_type_tree(SrInterp *I, SrBuf *b, SrVal *tree, int n, const SrType **types) {
  SrVal *words = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) {
    SrBuf s = SR_BUF_INIT;
    sr_type_str(&s, types[i], 0);
    sr_seq_push(NULL, words, sr_word(NULL, sr_buf_str(&s), s.len));
    sr_buf_free(&s);
  }
  SrVal *t = sr_pytree_unflatten(tree, words);
  sr_to_repr(I, b, t);
  sr_unref(t);
  sr_unref(words);
}

/* ---- the custom_jvp object ---- */

typedef struct CustomJvp {
  SrCustomFn f;
  SrVal *jvp;
} CustomJvp;

/* ---- SymbolicZero (ad_util.SymbolicZero) ----

   What a rule defined with symbolic_zeros=True gets for a zero tangent:
   an object holding the tangent's aval, whose other attributes are the
   aval's (shape, dtype...).  Here it is a pytree node without children,
   so that tracing a rule passes it through as structure, as JAX's
   lift_jvp passes the zeros' positions on. */
static void symzero_free(void *d) { sr_unref(d); }
static void symzero_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "SymbolicZero");
}
static SrVal *symzero_getattr(SrInterp *I, SrVal *self, const char *name) {
  SrVal *aval = self->obj.data;
  if (strcmp(name, "aval") == 0) return sr_ref(aval);
  return sr_getattr(I, aval, name);
}
static SrVal *symzero_children(SrVal *self) {
  (void)self;
  return sr_seq(NULL, SR_V_LIST, 0);
}
static SrVal *symzero_rebuild(SrVal *self, SrVal *children) {
  (void)children;
  return sr_ref(self);
}
static SrVal *symzero_type_of(SrVal *self) {
  (void)self;
  SrVal *t = sr_lookup_qualname("jax.custom_derivatives.SymbolicZero");
  return t ? sr_ref(t) : NULL;
}
static const SrLangOps symzero_ops = {.getattr = symzero_getattr,
                                      .tree_children = symzero_children,
                                      .tree_rebuild = symzero_rebuild,
                                      .type_of = symzero_type_of};
static const SrClass symzero_class = {"SymbolicZero", symzero_free, symzero_repr, NULL, &symzero_ops};

static SrVal *symzero_new(const SrType *t) { return sr_obj(&symzero_class, sr_aval_new(t)); }
SrVal *sr_symbolic_zero_new(const SrType *t) { return symzero_new(t); }

/* the class itself: SymbolicZero(aval), isinstance */
static void symzero_type_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<class 'jax._src.ad_util.SymbolicZero'>");
}
static int symzero_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  (void)self;
  return sr_is_obj(x, &symzero_class);
}
static SrVal *symzero_call(SrInterp *I, SrVal *self, SrArgs *a) {
  (void)self;
  SrVal *p[1];
  if (sr_args_parse(I, a, "SymbolicZero", "aval", p) < 0) return NULL;
  if (!sr_is_obj(p[0], &sr_aval_class)) return sr_raise(I, "TypeError", "SymbolicZero(aval) takes an aval (jax.typeof)");
  return sr_obj(&symzero_class, sr_ref(p[0]));
}
static const SrLangOps symzero_type_ops = {.call = symzero_call, .instancecheck = symzero_instancecheck};
static const SrClass symzero_type_class = {"type", NULL, symzero_type_repr, NULL, &symzero_type_ops};

/* The type of a SymbolicZero's aval, or NULL when v is none. */
static const SrType *symzero_type(SrVal *v) {
  if (!sr_is_obj(v, &symzero_class)) return NULL;
  SrVal *aval = v->obj.data;
  return sr_is_obj(aval, &sr_aval_class) ? aval->obj.data : NULL;
}
const SrType *sr_symbolic_zero_type(SrVal *v) { return symzero_type(v); }
int sr_is_symbolic_zero(const SrVal *v) { return sr_is_obj(v, &symzero_class); }

/* ---- api_util.resolve_kwargs and nondiff_argnums (custom_vjp.c's too) ---- */

/* inspect.signature(fun).bind(*args, **kwargs) with apply_defaults, then
   resolve_kwargs' refusal of keyword-only arguments passed; the positional
   arguments as a new tuple.  A function that is not a def (a
   functools.partial, a built-in) has an opaque signature: its arguments
   pass as they are, and keyword arguments cannot be resolved. */
SrVal *sr_custom_resolve_kwargs(SrInterp *I, SrVal *fun, const char *kind, const char *name, SrArgs *a) {
  SrFunction *uf = sr_as_function(fun);
  const SrParams *ps = uf ? uf->node->params : NULL;
  SrBuf err = SR_BUF_INIT;
  SrVal *r = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, r, sr_ref(a->v[i]));
  if (!ps) {
    if (a->nkw) {
      sr_buf_puts(&err, "The following keyword arguments could not be resolved to positions: ");
      for (int k = 0; k < a->nkw; k++) sr_buf_printf(&err, "%s%s", k ? ", " : "", a->kw[k]);
    }
  } else {
    int npos = ps->n - ps->nkwonly; /* names: the positional ones, then the keyword-only ones */
    if (a->n > npos && !ps->star) sr_buf_puts(&err, "too many positional arguments");
    for (int k = 0; k < a->nkw && !err.len; k++) {
      int q = -1;
      for (int j = 0; j < ps->n; j++)
        if (strcmp(ps->names[j], a->kw[k]) == 0) q = j;
      if (q >= 0 && q < a->n && q < npos) sr_buf_printf(&err, "multiple values for argument '%s'", a->kw[k]);
      else if ((q < 0 || q < ps->nposonly) && !ps->kwstar) sr_buf_printf(&err, "got an unexpected keyword argument '%s'", a->kw[k]);
    }
    for (int j = a->n; j < npos && !err.len; j++) {
      SrVal *v = NULL;
      for (int k = 0; k < a->nkw; k++)
        if (strcmp(ps->names[j], a->kw[k]) == 0 && j >= ps->nposonly) v = a->kwv[k];
      if (!v) v = uf->defaults ? uf->defaults[j] : NULL;
      if (!v) sr_buf_printf(&err, "missing a required argument: '%s'", ps->names[j]);
      else sr_seq_push(NULL, r, sr_ref(v));
    }
    for (int j = npos; j < ps->n && !err.len; j++) {
      int passed = 0;
      for (int k = 0; k < a->nkw; k++) passed |= strcmp(ps->names[j], a->kw[k]) == 0;
      if (!passed && !(uf->defaults && uf->defaults[j])) sr_buf_printf(&err, "missing a required argument: '%s'", ps->names[j]);
    }
    if (!err.len) {
      /* ba.kwargs: keyword-only parameters and **kwargs entries passed */
      int any = 0;
      for (int k = 0; k < a->nkw; k++) {
        int pos = 0;
        for (int j = ps->nposonly; j < npos; j++) pos |= strcmp(ps->names[j], a->kw[k]) == 0;
        if (pos) continue;
        if (!any) sr_buf_puts(&err, "The following keyword arguments could not be resolved to positions: ");
        sr_buf_printf(&err, "%s%s", any++ ? ", " : "", a->kw[k]);
      }
    }
  }
  if (err.len) {
    sr_unref(r);
    sr_raise(I, "TypeError",
             "The input arguments to the %s-decorated function %s could not be resolved to positional-only arguments. "
             "Binding failed with the error:\n%s",
             kind, name, err.p);
    sr_buf_free(&err);
    return NULL;
  }
  return r;
}

/* custom_jvp(fun, nondiff_argnums=, nondiff_argnames=): the positions
   (infer_argnums_and_argnames: names through fun's signature), sorted;
   0 with *out NULL when there are none. */
int sr_custom_nondiff_parse(SrInterp *I, SrVal *fun, SrVal *nums, SrVal *names, int **out, int *n) {
  *out = NULL;
  *n = 0;
  SrFunction *uf = sr_as_function(fun);
  const SrParams *ps = uf ? uf->node->params : NULL;
  int cap = 0;
  for (int pass = 0; pass < 2; pass++) {
    SrVal *v = pass ? names : nums;
    if (!v || v->kind == SR_V_NONE) continue;
    int single = pass ? v->kind == SR_V_STR : v->kind == SR_V_INT;
    int m = single ? 1 : sr_is_seq(v) ? v->seq.n : -1;
    if (m < 0) return sr_raise(I, "TypeError", "nondiff_arg%s must be a sequence", pass ? "names" : "nums"), -1;
    for (int i = 0; i < m; i++) {
      SrVal *x = single ? v : v->seq.items[i];
      int pos = -1;
      if (!pass && x->kind == SR_V_INT) pos = (int)x->i;
      if (pass && x->kind == SR_V_STR) {
        for (int j = 0; ps && j < ps->n - ps->nkwonly; j++)
          if (strlen(ps->names[j]) == x->str.n && memcmp(ps->names[j], x->str.s, x->str.n) == 0) pos = j;
        if (pos < 0) continue; /* a name the signature lacks: JAX ignores it */
      }
      if (pos < 0) {
        free(*out);
        *out = NULL;
        return sr_raise(I, "TypeError", "nondiff_argnums must be non-negative integers"), -1;
      }
      int dup = 0;
      for (int k = 0; k < *n; k++) dup |= (*out)[k] == pos;
      if (dup) continue;
      if (*n == cap) *out = sr_xrealloc(*out, (size_t)(cap = cap ? 2 * cap : 4) * sizeof **out);
      int k = (*n)++;
      while (k > 0 && (*out)[k - 1] > pos) {
        (*out)[k] = (*out)[k - 1];
        k--;
      }
      (*out)[k] = pos;
    }
  }
  return 0;
}

/* fun with its nondiff arguments held: merge puts them back at their
   positions among the call's arguments (the primal function, fwd),
   otherwise they come first (the jvp rule and bwd take them leading). */
typedef struct Nondiff {
  SrVal *fn, *vals;
  int *pos, n, merge;
} Nondiff;

static void nondiff_free(void *d) {
  Nondiff *w = d;
  sr_unref(w->fn);
  sr_unref(w->vals);
  free(w->pos);
  free(w);
}

static SrVal *nondiff_call(SrInterp *I, SrArgs *a) {
  Nondiff *w = sr_current_builtin(I)->data;
  int total = w->n + a->n, k = 0, s = 0;
  SrVal **v = sr_xcalloc((size_t)total + 1, sizeof *v);
  for (int i = 0; i < total; i++) {
    int held = w->merge ? s < w->n && w->pos[s] == i : i < w->n;
    v[i] = held ? w->vals->seq.items[s++] : a->v[k++];
  }
  SrArgs ca = {total, v, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, w->fn, &ca);
  free(v);
  return r;
}

SrVal *sr_custom_nondiff_wrap(SrVal *fn, SrVal *vals, const int *pos, int n, int merge) {
  Nondiff *w = sr_xcalloc(1, sizeof *w);
  w->fn = sr_ref(fn);
  w->vals = sr_ref(vals);
  w->pos = sr_xcalloc((size_t)n + 1, sizeof *w->pos);
  memcpy(w->pos, pos, (size_t)n * sizeof *pos);
  w->n = n;
  w->merge = merge;
  return sr_builtin_with(sr_callable_name(fn), nondiff_call, w, nondiff_free);
}

/* Splits resolved arguments by nondiff positions: the held values and the
   differentiated ones (new tuples); -1 with JAX's error when a position
   is past the arguments. */
/* v with its traced leaves whose values are known (an eager grad's
   arguments it does not differentiate, which JAX passes as they are)
   replaced by those values; a new reference. */
static SrVal *known_leaves(SrInterp *I, SrVal *v) {
  if (!I->trace) return sr_ref(v);
  SrVal *l = sr_pytree_flatten_any(I, v);
  if (!l) {
    sr_exc_clear(I);
    return sr_ref(v);
  }
  int changed = 0;
  for (int i = 0; i < l->seq.n; i++) {
    SrArrayObj *a = sr_array_of(l->seq.items[i]);
    if (!a || a->kind != SR_AV_TRACER) continue;
    SrVal *c = sr_tracers_value(I, l->seq.items[i]);
    if (!c) continue;
    sr_unref(l->seq.items[i]);
    l->seq.items[i] = c;
    changed = 1;
  }
  SrVal *r = changed ? sr_pytree_unflatten(v, l) : sr_ref(v);
  sr_unref(l);
  return r ? r : sr_ref(v);
}

int sr_custom_nondiff_split(SrInterp *I, SrVal *args, const int *pos, int n, SrVal **held, SrVal **dyn) {
  *held = sr_tuple(NULL, 0, NULL);
  *dyn = sr_tuple(NULL, 0, NULL);
  int s = 0;
  for (int i = 0; i < args->seq.n; i++) {
    if (s < n && pos[s] == i) {
      sr_seq_push(NULL, *held, known_leaves(I, args->seq.items[i]));
      s++;
    } else {
      sr_seq_push(NULL, *dyn, sr_ref(args->seq.items[i]));
    }
  }
  if (s < n) {
    sr_unref(*held);
    sr_unref(*dyn);
    *held = *dyn = NULL;
    return sr_raise(I, "TypeError", "nondiff_argnums %d is out of range for a call with %d arguments", pos[s],
                    args->seq.n), -1;
  }
  return 0;
}

/* Traced nondiff arguments of a custom_jvp function (a batched key, an
   array under vmap): JAX closes the rule over them, and its batching
   reinstates their trace whenever the rule runs.  Here the rule may run
   after that trace has ended (autodiff of the traced call), so their
   traced leaves become the call's first operand instead, a tuple `hl`
   (their tangents dropped, as _stop_gradient drops them in JAX), and
   these wrappers rebuild the held values from it:
     fun(hl, *dyn)                      -> fun(*held merged with dyn)
     rule((hl, *primals), (_, *tans))   -> rule(*held, primals, tangents) */
typedef struct DynHeld {
  SrVal *fn, *vals, *leaves; /* the held values, their leaves */
  int *pos, n, merge;        /* nondiff positions; merge: the function */
  uint8_t *traced;           /* per leaf: taken from hl */
} DynHeld;

static void dynheld_free(void *d) {
  DynHeld *w = d;
  sr_unref(w->fn);
  sr_unref(w->vals);
  sr_unref(w->leaves);
  free(w->pos);
  free(w->traced);
  free(w);
}

/* the held values with their traced leaves taken from hl; NULL when hl is
   not what the call was given (raised) */
static SrVal *dynheld_vals(SrInterp *I, DynHeld *w, SrVal *hl) {
  int nl = w->leaves->seq.n, k = 0, nt = 0;
  for (int i = 0; i < nl; i++) nt += w->traced[i];
  if (!sr_is_seq(hl) || hl->seq.n != nt)
    return sr_raise(I, "TypeError", "custom_jvp: the traced nondiff arguments were not passed through");
  SrVal *l = sr_seq(NULL, SR_V_LIST, nl);
  for (int i = 0; i < nl; i++) sr_seq_push(NULL, l, sr_ref(w->traced[i] ? hl->seq.items[k++] : w->leaves->seq.items[i]));
  SrVal *v = sr_pytree_unflatten(w->vals, l);
  sr_unref(l);
  return v;
}

static SrVal *dynheld_call(SrInterp *I, SrArgs *a) {
  DynHeld *w = sr_current_builtin(I)->data;
  if (w->merge) {
    if (a->n < 1) return sr_raise(I, "TypeError", "custom_jvp: missing the traced nondiff arguments");
    SrVal *vals = dynheld_vals(I, w, a->v[0]);
    if (!vals) return NULL;
    int total = w->n + a->n - 1, k = 1, s = 0;
    SrVal **v = sr_xcalloc((size_t)total + 1, sizeof *v);
    for (int i = 0; i < total; i++) v[i] = s < w->n && w->pos[s] == i ? vals->seq.items[s++] : a->v[k++];
    SrArgs ca = {total, v, a->nkw, a->kw, a->kwv, NULL};
    SrVal *r = sr_call(I, w->fn, &ca);
    free(v);
    sr_unref(vals);
    return r;
  }
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n < 1 || a->v[1]->seq.n < 1)
    return sr_raise(I, "TypeError", "custom_jvp: the rule's wrapper takes (primals, tangents)");
  SrVal *vals = dynheld_vals(I, w, a->v[0]->seq.items[0]);
  if (!vals) return NULL;
  SrVal *pt[2];
  for (int j = 0; j < 2; j++) {
    SrVal *t = a->v[j];
    pt[j] = sr_tuple(NULL, 0, NULL);
    for (int i = 1; i < t->seq.n; i++) sr_seq_push(NULL, pt[j], sr_ref(t->seq.items[i]));
  }
  int total = w->n + 2;
  SrVal **v = sr_xcalloc((size_t)total + 1, sizeof *v);
  for (int i = 0; i < w->n; i++) v[i] = vals->seq.items[i];
  v[w->n] = pt[0];
  v[w->n + 1] = pt[1];
  SrArgs ca = {total, v, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, w->fn, &ca);
  free(v);
  sr_unref(vals);
  sr_unref(pt[0]);
  sr_unref(pt[1]);
  return r;
}

/* held's leaves that are traced arrays, as a tuple (NULL: none); *leaves
   and *traced say which */
static SrVal *traced_held(SrInterp *I, SrVal *held, SrVal **leaves, uint8_t **traced) {
  *leaves = NULL;
  *traced = NULL;
  if (!I->trace) return NULL;
  SrVal *l = sr_pytree_flatten_any(I, held);
  if (!l) {
    sr_exc_clear(I);
    return NULL;
  }
  uint8_t *t = sr_xcalloc((size_t)l->seq.n + 1, 1);
  SrVal *hl = NULL;
  for (int i = 0; i < l->seq.n; i++) {
    SrArrayObj *arr = sr_array_of(l->seq.items[i]);
    if (!arr || arr->kind == SR_AV_CONCRETE || !sr_tracers_is_live(I, l->seq.items[i]) || sr_tracers_is_ad(I, l->seq.items[i])) continue;
    t[i] = 1;
    if (!hl) hl = sr_tuple(NULL, 0, NULL);
    sr_seq_push(NULL, hl, sr_ref(l->seq.items[i]));
  }
  if (!hl) {
    sr_unref(l);
    free(t);
    return NULL;
  }
  *leaves = l;
  *traced = t;
  return hl;
}

static SrVal *dynheld_wrap(SrVal *fn, SrVal *vals, SrVal *leaves, const uint8_t *traced, const int *pos, int n,
                           int merge) {
  DynHeld *w = sr_xcalloc(1, sizeof *w);
  w->fn = sr_ref(fn);
  w->vals = sr_ref(vals);
  w->leaves = sr_ref(leaves);
  w->traced = sr_xcalloc((size_t)leaves->seq.n + 1, 1);
  memcpy(w->traced, traced, (size_t)leaves->seq.n);
  w->pos = sr_xcalloc((size_t)n + 1, sizeof *w->pos);
  memcpy(w->pos, pos, (size_t)n * sizeof *pos);
  w->n = n;
  w->merge = merge;
  return sr_builtin_with(sr_callable_name(fn), dynheld_call, w, dynheld_free);
}

/* A rule that closes over tracers (of a vmap, whose trace has ended by
   the time autodiff runs the rule: JAX's batch_custom_jvp_subtrace
   reinstates it).  Such a rule is traced when its function is called, on
   abstract primals and tangents, and the values it captured become the
   call's first operand, a tuple `hl` (their tangents dropped), so that
   every transformation sees them:
     fun(hl, *args)                    -> fun(*args)
     rule((hl, *primals), (_, *tans))  -> the traced rule on hl, primals, tans */
typedef struct PreRule {
  SrVal *fn;        /* fun (merge), or NULL for the rule */
  SrJaxpr *j;       /* the traced rule (its program held) */
  SrVal *out_tree;
  int mode;         /* 0 as above; 2: j replayed on (hl, *args); 3: fn's
                       result with a None first (custom_vjp's bwd) */
} PreRule;

static void prerule_free(void *d) {
  PreRule *w = d;
  sr_unref(w->fn);
  if (w->j) sr_program_unref(w->j->prog);
  sr_unref(w->out_tree);
  free(w);
}

static SrVal *prerule_call(SrInterp *I, SrArgs *a) {
  PreRule *w = sr_current_builtin(I)->data;
  if (w->mode == 3) {
    SrVal *r = sr_call(I, w->fn, a);
    if (!r || !sr_is_seq(r)) return r;
    SrVal *t = sr_tuple(NULL, 0, NULL);
    sr_seq_push(NULL, t, sr_none());
    for (int i = 0; i < r->seq.n; i++) sr_seq_push(NULL, t, sr_ref(r->seq.items[i]));
    sr_unref(r);
    return t;
  }
  if (w->mode == 2) {
    if (a->n < 1 || !sr_is_seq(a->v[0])) return sr_raise(I, "TypeError", "custom_vjp: missing the captured values");
    SrVal *ins = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = 0; i < a->v[0]->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(a->v[0]->seq.items[i]));
    for (int i = 1; i < a->n; i++) {
      SrVal *l = sr_pytree_flatten(I, a->v[i]);
      if (!l) {
        sr_unref(ins);
        return NULL;
      }
      for (int k = 0; k < l->seq.n; k++) sr_seq_push(NULL, ins, sr_ref(l->seq.items[k]));
      sr_unref(l);
    }
    SrVal *r = NULL;
    if ((uint32_t)ins->seq.n != sr_nargs(w->j)) {
      sr_raise(I, "TypeError", "custom_vjp: the traced fwd takes %u inputs, not %d", sr_nargs(w->j), ins->seq.n);
    } else {
      SrVal *o = sr_eval_jaxpr(I, w->j, ins->seq.n, ins->seq.items);
      if (o && !sr_is_seq(o)) {
        SrVal *t = sr_tuple(NULL, 0, NULL);
        sr_seq_push(NULL, t, o);
        o = t;
      }
      if (o) r = sr_pytree_unflatten(w->out_tree, o);
      sr_unref(o);
    }
    sr_unref(ins);
    return r;
  }
  if (w->fn) {
    if (a->n < 1) return sr_raise(I, "TypeError", "custom_jvp: missing the rule's captured values");
    SrArgs ca = {a->n - 1, a->v + 1, a->nkw, a->kw, a->kwv, NULL};
    return sr_call(I, w->fn, &ca);
  }
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]) || a->v[0]->seq.n < 1 || a->v[1]->seq.n < 1 ||
      !sr_is_seq(a->v[0]->seq.items[0]))
    return sr_raise(I, "TypeError", "custom_jvp: the rule's wrapper takes (primals, tangents)");
  SrVal *hl = a->v[0]->seq.items[0];
  SrVal *ins = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < hl->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(hl->seq.items[i]));
  for (int j = 0; j < 2; j++) {
    SrVal *t = a->v[j];
    for (int i = 1; i < t->seq.n; i++) {
      SrVal *l = sr_pytree_flatten(I, t->seq.items[i]);
      if (!l) {
        sr_unref(ins);
        return NULL;
      }
      for (int k = 0; k < l->seq.n; k++) sr_seq_push(NULL, ins, sr_ref(l->seq.items[k]));
      sr_unref(l);
    }
  }
  SrVal *r = NULL;
  if ((uint32_t)ins->seq.n != sr_nargs(w->j)) {
    sr_raise(I, "TypeError", "custom_jvp: the traced rule takes %u inputs, not %d", sr_nargs(w->j), ins->seq.n);
  } else {
    SrVal *o = sr_eval_jaxpr(I, w->j, ins->seq.n, ins->seq.items);
    if (o && !sr_is_seq(o)) {
      SrVal *t = sr_tuple(NULL, 0, NULL);
      sr_seq_push(NULL, t, o);
      o = t;
    }
    if (o) r = sr_pytree_unflatten(w->out_tree, o);
    sr_unref(o);
  }
  sr_unref(ins);
  return r;
}

/* Does fn close over a traced array (in its closure's environments, the
   module's aside)? */
int sr_custom_closes_over_tracer(SrInterp *I, SrVal *fn) {
  SrFunction *uf = sr_as_function(fn);
  if (!uf) return 0;
  for (SrEnv *e = uf->closure; e && e->parent; e = e->parent)
    for (size_t i = 0; i < e->cap; i++) {
      SrArrayObj *arr = e->keys[i] && e->vals[i] ? sr_array_of(e->vals[i]) : NULL;
      /* a JVP tracer in the rule is JAX's UnexpectedTracerError (the rule
         runs below the jvp), which the lazy rule raises too */
      if (arr && sr_tracers_is_live(I, e->vals[i]) && !sr_tracers_is_ad(I, e->vals[i])) return 1;
    }
  return 0;
}

/* The rule traced on abstract values of args' types (and their tangents'):
   1 with *fun, *rule replaced by the wrappers above and *args by (hl,
   *args); 0 (nothing changed, no error left) where it cannot be. */
static int pretrace_rule(SrInterp *I, SrVal **fun, SrVal **rule, SrVal **args) {
  SrVal *leaves = sr_pytree_array_leaves(I, *args);
  if (!leaves) {
    sr_exc_clear(I);
    return 0;
  }
  SrVal *pl = sr_seq(NULL, SR_V_LIST, leaves->seq.n), *tl = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < leaves->seq.n; i++) {
    const SrType *t = sr_type_with_weak(sr_value_type(I, leaves->seq.items[i]), 0);
    sr_seq_push(NULL, pl, sr_array_abstract(t));
    sr_seq_push(NULL, tl, sr_array_abstract(sr_ad_tangent_type(t)));
  }
  sr_unref(leaves);
  SrVal *argv[2] = {sr_pytree_unflatten(*args, pl), sr_pytree_unflatten(*args, tl)};
  sr_unref(pl);
  sr_unref(tl);
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *j = argv[0] && argv[1] ? sr_trace_fn(I, *rule, 2, argv, 0, NULL, NULL, 0, &out_tree, &captured) : NULL;
  sr_unref(argv[0]);
  sr_unref(argv[1]);
  if (!j) {
    sr_exc_clear(I);
    return 0;
  }
  PreRule *wf = sr_xcalloc(1, sizeof *wf), *wr = sr_xcalloc(1, sizeof *wr);
  wf->fn = *fun;
  wr->j = j;
  wr->out_tree = out_tree;
  SrVal *f2 = sr_builtin_with(sr_callable_name(*fun), prerule_call, wf, prerule_free);
  SrVal *r2 = sr_builtin_with(sr_callable_name(*rule), prerule_call, wr, prerule_free);
  sr_unref(*rule);
  *fun = f2;
  *rule = r2;
  SrVal *hl = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, hl, sr_ref(captured->seq.items[i]));
  sr_unref(captured);
  SrVal *a2 = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, a2, hl);
  for (int i = 0; i < (*args)->seq.n; i++) sr_seq_push(NULL, a2, sr_ref((*args)->seq.items[i]));
  sr_unref(*args);
  *args = a2;
  return 1;
}

int sr_custom_pretrace_fwd(SrInterp *I, SrVal **fun, SrVal **fwd, SrVal **bwd, SrVal **args) {
  SrVal *leaves = sr_pytree_array_leaves(I, *args);
  if (!leaves) {
    sr_exc_clear(I);
    return 0;
  }
  SrVal *al = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < leaves->seq.n; i++)
    sr_seq_push(NULL, al, sr_array_abstract(sr_type_with_weak(sr_value_type(I, leaves->seq.items[i]), 0)));
  sr_unref(leaves);
  SrVal *abs = sr_pytree_unflatten(*args, al);
  sr_unref(al);
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *j = abs ? sr_trace_fn(I, *fwd, abs->seq.n, abs->seq.items, 0, NULL, NULL, 0, &out_tree, &captured) : NULL;
  sr_unref(abs);
  if (!j) {
    sr_exc_clear(I);
    return 0;
  }
  PreRule *wf = sr_xcalloc(1, sizeof *wf), *ww = sr_xcalloc(1, sizeof *ww), *wb = sr_xcalloc(1, sizeof *wb);
  wf->fn = *fun;
  ww->j = j;
  ww->out_tree = out_tree;
  ww->mode = 2;
  wb->fn = *bwd;
  wb->mode = 3;
  *fun = sr_builtin_with(sr_callable_name(*fun), prerule_call, wf, prerule_free);
  SrVal *f2 = sr_builtin_with(sr_callable_name(*fwd), prerule_call, ww, prerule_free);
  sr_unref(*fwd);
  *fwd = f2;
  *bwd = sr_builtin_with(sr_callable_name(*bwd), prerule_call, wb, prerule_free);
  SrVal *hl = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, hl, sr_ref(captured->seq.items[i]));
  sr_unref(captured);
  SrVal *a2 = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, a2, hl);
  for (int i = 0; i < (*args)->seq.n; i++) sr_seq_push(NULL, a2, sr_ref((*args)->seq.items[i]));
  sr_unref(*args);
  *args = a2;
  return 1;
}

static const SrClass custom_jvp_class; /* below, with the methods */

static void cj_free(void *d) {
  CustomJvp *c = d;
  sr_custom_fn_free(&c->f);
  sr_unref(c->jvp);
  free(c);
}

static void cj_repr(SrBuf *out, const SrVal *v) {
  const CustomJvp *c = v->obj.data;
  sr_buf_printf(out, "<jax._src.custom_derivatives.custom_jvp object of <function %s>>", c->f.name);
}

static SrVal *cj_call(SrInterp *I, SrVal *self, SrArgs *a) {
  CustomJvp *cj = self->obj.data;
  if (!cj->jvp)
    return sr_raise(I, "AttributeError", "No JVP defined for custom_jvp function %s using defjvp.", cj->f.name);
  SrVal *args = sr_custom_resolve_kwargs(I, cj->f.fun, "custom_jvp", cj->f.name, a);
  if (!args) return NULL;
  SrVal *fun = sr_ref(cj->f.fun), *rule = sr_ref(cj->jvp);
  if (cj->f.nnondiff) {
    SrVal *held, *dyn;
    if (sr_custom_nondiff_split(I, args, cj->f.nondiff, cj->f.nnondiff, &held, &dyn) < 0) {
      sr_unref(args);
      sr_unref(fun);
      sr_unref(rule);
      return NULL;
    }
    sr_unref(fun);
    sr_unref(rule);
    SrVal *hleaves = NULL;
    uint8_t *traced = NULL;
    SrVal *hl = traced_held(I, held, &hleaves, &traced);
    if (hl) {
      fun = dynheld_wrap(cj->f.fun, held, hleaves, traced, cj->f.nondiff, cj->f.nnondiff, 1);
      rule = dynheld_wrap(cj->jvp, held, hleaves, traced, cj->f.nondiff, cj->f.nnondiff, 0);
      SrVal *d2 = sr_tuple(NULL, 0, NULL);
      sr_seq_push(NULL, d2, hl);
      for (int i = 0; i < dyn->seq.n; i++) sr_seq_push(NULL, d2, sr_ref(dyn->seq.items[i]));
      sr_unref(dyn);
      dyn = d2;
      sr_unref(hleaves);
      free(traced);
    } else {
      fun = sr_custom_nondiff_wrap(cj->f.fun, held, cj->f.nondiff, cj->f.nnondiff, 1);
      rule = sr_custom_nondiff_wrap(cj->jvp, held, cj->f.nondiff, cj->f.nnondiff, 0);
    }
    sr_unref(held);
    sr_unref(args);
    args = dyn;
  }
  if (I->trace && sr_custom_closes_over_tracer(I, cj->jvp)) pretrace_rule(I, &fun, &rule, &args);
  SrArgs pa = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
  SrCustomCall cc;
  SrVal *eager;
  /* debug_info("custom_jvp fun", self.fun, args, kwargs, nondiff_argnums) */
  sr_trace_fn_debug_call(I, "custom_jvp fun", cj->f.fun, a, cj->f.nondiff, cj->f.nnondiff);
  int rc = sr_custom_call_trace(I, fun, cj->f.name, &pa, &cc, &eager);
  sr_trace_fn_debug_clear();
  sr_unref(args);
  sr_unref(fun);
  if (rc == 1) {
    sr_unref(rule);
    return eager;
  }
  if (rc < 0) {
    sr_unref(rule);
    return NULL;
  }
  Cjvp *c = sr_xcalloc(1, sizeof *c);
  c->rule = rule;
  c->name = cj->f.name;
  c->rule_name = sr_callable_name(cj->jvp);
  int k = 0;
  c->in_tree = sr_pytree_numbered(cc.args, &k);
  c->nleaves = cc.leaves->seq.n;
  k = 0;
  c->out_tree = sr_pytree_numbered(cc.out_tree, &k);
  c->nout = (int)cc.body->nout;
  c->nconsts = cc.captured->seq.n;
  c->symbolic_zeros = cj->f.symbolic_zeros;
  c->x64 = I->jax->enable_x64;
  c->out_types = sr_xcalloc((size_t)c->nout + 1, sizeof *c->out_types);
  for (int i = 0; i < c->nout; i++) c->out_types[i] = cc.body->outvars[i]->type;
  SrPList ps = {0};
  sr_plist_add(&ps, "name", sr_str_cstr(NULL, cj->f.name));
  sr_plist_add(&ps, "call_jaxpr", sr_jaxpr_val(NULL, cc.body));
  sr_plist_add(&ps, "jvp", sr_obj(&cjvp_class, c));
  sr_plist_add(&ps, "num_consts", sr_int(NULL, c->nconsts));
  sr_plist_add(&ps, "symbolic_zeros", sr_bool(c->symbolic_zeros));
  return sr_custom_call_bind(I, SR_P_custom_jvp_call, &cc, &ps);
}

static SrVal *cj_defjvp(SrInterp *I, SrArgs *a) {
  CustomJvp *cj = a->self->obj.data;
  SrVal *p[2];
  if (sr_args_parse(I, a, "defjvp", "jvp, symbolic_zeros=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "defjvp(jvp) takes a function");
  cj->f.symbolic_zeros = p[1] && sr_val_truthy(p[1]);
  sr_unref(cj->jvp);
  cj->jvp = sr_ref(p[0]);
  return sr_ref(p[0]); /* so that defjvp can be a decorator */
}

/* defjvps' rule: jvp(primals, tangents) with
     primal_out = f(*primals)
   where f is the custom_jvp function itself, so that primal_out is a
   custom_jvp_call as in JAX, and
     tangent_out = sum of jvps[i](tangents[i], primal_out, *primals)
   over the jvps that are not None (custom_jvp.defjvps).  The rule does
   not hold the custom_jvp object, which holds the rule: that cycle would
   never be freed.  It makes a new custom_jvp object of its own for each
   call instead. */
typedef struct Jvps {
  int rc;
  SrVal *fun;  /* the primal function */
  const char *name;
  SrVal *jvps; /* a tuple of functions and Nones */
} Jvps;

static void jvps_unref(void *d) {
  Jvps *j = d;
  if (--j->rc > 0) return;
  sr_unref(j->fun);
  sr_unref(j->jvps);
  free(j);
}

static SrVal *jvps_rule(SrInterp *I, SrArgs *a);

static SrVal *jvps_builtin(Jvps *js) {
  js->rc++;
  /* JAX's rule here is the closure `jvp`, the name the equation shows */
  return sr_builtin_with("jvp", jvps_rule, js, jvps_unref);
}

static SrVal *jvps_rule(SrInterp *I, SrArgs *a) {
  Jvps *js = sr_current_builtin(I)->data;
  if (a->n != 2 || !sr_is_seq(a->v[0]) || !sr_is_seq(a->v[1]))
    return sr_raise(I, "TypeError", "jvp(primals, tangents) takes two tuples");
  SrVal *primals = a->v[0], *tangents = a->v[1];
  CustomJvp *cj = sr_xcalloc(1, sizeof *cj);
  cj->f.fun = sr_ref(js->fun);
  cj->f.name = js->name;
  cj->jvp = jvps_builtin(js);
  SrVal *self = sr_obj(&custom_jvp_class, cj);
  SrArgs fa = {primals->seq.n, primals->seq.items, 0, NULL, NULL, NULL};
  SrVal *out = sr_call(I, self, &fa);
  sr_unref(self);
  if (!out) return NULL;
  SrVal *acc = NULL; /* the summed tangent leaves */
  int n = js->jvps->seq.n < tangents->seq.n ? js->jvps->seq.n : tangents->seq.n;
  for (int i = 0; i < n && out; i++) {
    SrVal *g = js->jvps->seq.items[i];
    if (g->kind == SR_V_NONE) continue; /* a zero adds nothing */
    SrVal **argv = sr_xcalloc((size_t)primals->seq.n + 3, sizeof *argv);
    argv[0] = tangents->seq.items[i];
    argv[1] = out;
    for (int q = 0; q < primals->seq.n; q++) argv[2 + q] = primals->seq.items[q];
    SrArgs ga = {primals->seq.n + 2, argv, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, g, &ga);
    free(argv);
    SrVal *rl = r ? sr_pytree_flatten(I, r) : NULL;
    sr_unref(r);
    if (!rl) {
      sr_unref(acc);
      acc = NULL;
      sr_unref(out);
      out = NULL;
      break;
    }
    if (!acc) {
      acc = rl;
      continue;
    }
    if (rl->seq.n != acc->seq.n) {
      sr_raise(I, "ValueError", "defjvps: the JVP for argument %d has %d leaves where the output has %d", i,
               rl->seq.n, acc->seq.n);
      sr_unref(rl);
      sr_unref(out);
      out = NULL;
      break;
    }
    for (int q = 0; q < acc->seq.n && out; q++) {
      SrVal *s = sr_binop(I, SR_OP_ADD, acc->seq.items[q], rl->seq.items[q]);
      if (!s) {
        sr_unref(out);
        out = NULL;
        break;
      }
      sr_unref(acc->seq.items[q]);
      acc->seq.items[q] = s;
    }
    sr_unref(rl);
  }
  if (!out) {
    sr_unref(acc);
    return NULL;
  }
  SrVal *tan;
  if (acc) {
    tan = sr_pytree_unflatten(out, acc);
    sr_unref(acc);
  } else {
    /* every jvp None: _zeros_like_pytree(primal_out) */
    SrVal *zl = sr_lookup_qualname("jax.numpy.zeros_like");
    SrVal *ol = zl ? sr_pytree_flatten(I, out) : NULL;
    if (!ol) {
      sr_unref(out);
      return zl ? NULL : sr_raise(I, "RuntimeError", "jax.numpy.zeros_like is missing");
    }
    for (int q = 0; q < ol->seq.n; q++) {
      SrVal *z = sr_call1(I, zl, ol->seq.items[q]);
      if (!z) {
        sr_unref(ol);
        sr_unref(out);
        return NULL;
      }
      sr_unref(ol->seq.items[q]);
      ol->seq.items[q] = z;
    }
    tan = sr_pytree_unflatten(out, ol);
    sr_unref(ol);
  }
  SrVal *items[2] = {out, tan};
  return sr_tuple(NULL, 2, items);
}

static SrVal *cj_defjvps(SrInterp *I, SrArgs *a) {
  CustomJvp *cj = a->self->obj.data;
  if (a->nkw) return sr_raise(I, "TypeError", "defjvps() takes positional arguments only");
  for (int i = 0; i < a->n; i++)
    if (a->v[i]->kind != SR_V_NONE && !sr_is_callable(I, a->v[i]))
      return sr_raise(I, "TypeError", "defjvps(*jvps) takes functions or None");
  Jvps *js = sr_xcalloc(1, sizeof *js);
  js->fun = sr_ref(cj->f.fun);
  js->name = cj->f.name;
  js->jvps = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, js->jvps, sr_ref(a->v[i]));
  sr_unref(cj->jvp);
  cj->jvp = jvps_builtin(js);
  return sr_none();
}

static SrVal *cj_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  CustomJvp *cj = self->obj.data;
  if (strcmp(name, "defjvp") == 0) return sr_bound_method(self, "defjvp", cj_defjvp);
  if (strcmp(name, "defjvps") == 0) return sr_bound_method(self, "defjvps", cj_defjvps);
  if (strcmp(name, "jvp") == 0) return sr_ref(cj->jvp ? cj->jvp : sr_none());
  return sr_custom_fn_getattr(I, &cj->f, name);
}

static const SrLangOps cj_ops = {.call = cj_call, .getattr = cj_getattr};
static const SrClass custom_jvp_class = {"custom_jvp", cj_free, cj_repr, NULL, &cj_ops};

int sr_custom_fn_init(SrInterp *I, SrArgs *a, const char *kind, SrCustomFn *f) {
  SrVal *p[3];
  memset(f, 0, sizeof *f);
  if (sr_args_parse(I, a, kind, "fun, nondiff_argnums=, nondiff_argnames=", p) < 0) return -1;
  if (!sr_is_callable(I, p[0]))
    return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(p[0])), -1;
  if (sr_custom_nondiff_parse(I, p[0], p[1], p[2], &f->nondiff, &f->nnondiff) < 0) return -1;
  f->fun = sr_ref(p[0]);
  f->name = sr_callable_name(p[0]);
  return 0;
}

SrVal *sr_custom_fn_getattr(SrInterp *I, const SrCustomFn *f, const char *name) {
  if (strcmp(name, "__name__") == 0) return sr_str_cstr(NULL, f->name);
  /* functools.update_wrapper(self, fun), which inspect.signature follows */
  if (strcmp(name, "fun") == 0 || strcmp(name, "__wrapped__") == 0) return sr_ref(f->fun);
  /* custom_api_util.forward_attr: a wrapped custom_vmap's def_vmap... */
  if (f->fun->kind == SR_V_OBJ && !sr_as_function(f->fun) && sr_ops(f->fun) && sr_ops(f->fun)->getattr)
    return sr_ops(f->fun)->getattr(I, f->fun, name);
  return NULL;
}

void sr_custom_fn_free(SrCustomFn *f) {
  sr_unref(f->fun);
  free(f->nondiff);
}

static SrVal *jax_custom_jvp(SrInterp *I, SrArgs *a) {
  CustomJvp *cj = sr_xcalloc(1, sizeof *cj);
  if (sr_custom_fn_init(I, a, "custom_jvp", &cj->f) < 0) {
    free(cj);
    return NULL;
  }
  return sr_obj(&custom_jvp_class, cj);
}

/* ---- autodiff ---- */


/* Whether e, under linearization, is a jit (or closed_call) whose inputs
   are known values and tangents both; *sub its jaxpr. */
static int mixed_call(SrAd *ad, const SrEqn *e, SrVal **in, SrJaxpr **sub) {
  int id = e->prim->id;
  if (ad->mode != SR_AD_LIN || ad->staged || (id != SR_P_jit && id != SR_P_pjit && id != SR_P_closed_call))
    return 0;
  int nknown = 0, ntangent = 0;
  for (uint32_t i = 0; i < e->nin; i++) {
    if (sr_ad_pick_trace(ad, 1, &in[i]) == ad->tangent) ntangent = 1;
    else nknown = 1;
  }
  if (!nknown || !ntangent) return 0;
  SrVal *jv = sr_eqn_param(e, sr_intern_cstr("jaxpr"));
  if (!jv || sr_param_jaxprs(jv, sub, 1) != 1) return 0;
  const SrJaxpr *j = *sub;
  if (sr_nargs(j) != e->nin || j->nout != e->nout) return 0;
  /* only a call with a result the known inputs alone compute (a jvp'd
     jit's primal) is split; one whose results all read tangents stays
     whole on the tangent trace */
  uint8_t *known = sr_xcalloc(j->nvars + 1, 1);
  for (uint32_t i = 0; i < j->nconst; i++) known[j->invars[i]->id] = 1;
  for (uint32_t i = 0; i < e->nin; i++) known[sr_args(j)[i]->id] = sr_ad_pick_trace(ad, 1, &in[i]) != ad->tangent;
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *q = &j->eqns[k];
    int all = 1;
    for (uint32_t i = 0; i < q->nin && all; i++) all = q->in[i]->kind == SR_LIT || known[q->in[i]->id];
    for (uint32_t i = 0; i < q->nout; i++)
      if (q->out[i]->kind != SR_DROP) known[q->out[i]->id] = (uint8_t)all;
  }
  int split = 0;
  for (uint32_t i = 0; i < j->nout && !split; i++) split = j->outvars[i]->kind != SR_LIT && known[j->outvars[i]->id];
  free(known);
  return split;
}

/* Whether e, under linearization, is a custom_jvp_call or custom_vjp_call
   that reads a tangent (a rule applying its function to its tangent):
   partial_eval's process_custom_jvp_call inlines the function there (the
   linear part keeps no custom rule); *sub its body. */
static int tangent_custom_call(SrAd *ad, const SrEqn *e, SrVal **in, SrJaxpr **sub) {
  int id = e->prim->id;
  if (ad->mode != SR_AD_LIN || ad->staged || (id != SR_P_custom_jvp_call && id != SR_P_custom_vjp_call)) return 0;
  int ntangent = 0;
  for (uint32_t i = 0; i < e->nin; i++) ntangent |= sr_ad_pick_trace(ad, 1, &in[i]) == ad->tangent;
  if (!ntangent) return 0;
  SrVal *jv = sr_eqn_param(e, sr_intern_cstr("call_jaxpr"));
  if (!jv || sr_param_jaxprs(jv, sub, 1) != 1) return 0;
  return sr_nargs(*sub) == e->nin && (*sub)->nout == e->nout;
}

/* Binds the equations of j (the traced rule) through sr_ad_bind_eqn, which
   picks the primal or the tangent trace for each: outs gets j's outputs
   (new references). */
static int bind_rule_jaxpr(SrAd *ad, const SrJaxpr *j, SrVal **args, SrVal **outs) {
  /* the equations' params stay in j's arena */
  if (ad->primal && ad->primal->prog != j->prog) sr_program_dep(ad->primal->prog, j->prog);
  if (ad->tangent && ad->tangent->prog != j->prog) sr_program_dep(ad->tangent->prog, j->prog);
  if (ad->I->trace && ad->I->trace->prog != j->prog) sr_program_dep(ad->I->trace->prog, j->prog);
  SrVal **env = sr_xcalloc(j->nvars + 1, sizeof *env);
  for (uint32_t i = 0; i < j->nconst; i++) {
    SrVar *v = j->invars[i];
    env[v->id] = j->consts && j->consts[i] ? sr_ref(j->consts[i]) : sr_array_abstract(v->type);
  }
  for (uint32_t i = 0; i < sr_nargs(j); i++) env[sr_args(j)[i]->id] = sr_ref(args[i]);
  int rc = -1;
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    SrVal **in = sr_xcalloc(e->nin + 1, sizeof *in);
    int mark = sr_ad_mark(ad);
    for (uint32_t i = 0; i < e->nin; i++)
      in[i] = e->in[i]->kind == SR_LIT ? sr_ad_literal(ad, e->in[i]) : env[e->in[i]->id];
    SrJaxpr *sub = NULL;
    if (tangent_custom_call(ad, e, in, &sub) || mixed_call(ad, e, in, &sub)) {
      /* partial evaluation of a call that reads known values and
         tangents (a jvp'd jit): its equations each go to their trace, so
         that its known results stay known */
      SrVal **o = sr_xcalloc(e->nout + 1, sizeof *o);
      int src = bind_rule_jaxpr(ad, sub, in, o);
      free(in);
      for (uint32_t i = 0; i < e->nout; i++) {
        if (src == 0 && e->out[i]->kind != SR_DROP) env[e->out[i]->id] = sr_ref(o[i]);
        sr_unref(o[i]);
      }
      free(o);
      sr_ad_release(ad, mark);
      if (src < 0) goto done;
      continue;
    }
    SrVal *r = sr_ad_bind_eqn(ad, e, in);
    free(in);
    if (r)
      for (uint32_t i = 0; i < e->nout; i++)
        if (e->out[i]->kind != SR_DROP) env[e->out[i]->id] = sr_ref(r->seq.items[i]);
    sr_ad_release(ad, mark);
    if (!r) goto done;
  }
  for (uint32_t i = 0; i < j->nout; i++) {
    SrVar *o = j->outvars[i];
    if (o->kind == SR_LIT) {
      int mark = sr_ad_mark(ad);
      outs[i] = sr_ref(sr_ad_literal(ad, o));
      sr_ad_release(ad, mark);
    } else {
      outs[i] = sr_ref(env[o->id]);
    }
  }
  rc = 0;
done:
  for (uint32_t i = 0; i <= j->nvars; i++) sr_unref(env[i]);
  free(env);
  return rc;
}

static SrVal *run_rule_x64(SrAd *ad, Cjvp *c, SrVal *primals, SrVal *tangents);

/* Runs the rule on (primals, tangents): the pair it returns. */
static SrVal *run_rule(SrAd *ad, Cjvp *c, SrVal *primals, SrVal *tangents) {
  int saved = ad->I->jax->enable_x64;
  ad->I->jax->enable_x64 = c->x64;
  SrVal *r = run_rule_x64(ad, c, primals, tangents);
  ad->I->jax->enable_x64 = saved;
  return r;
}

static SrVal *run_rule_x64(SrAd *ad, Cjvp *c, SrVal *primals, SrVal *tangents) {
  SrInterp *I = ad->I;
  SrVal *argv[2] = {primals, tangents};
  if (ad->mode != SR_AD_LIN) {
    SrArgs fa = {2, argv, 0, NULL, NULL, NULL};
    return sr_call(I, c->rule, &fa);
  }
  SrTrace *saved = I->trace;
  I->trace = ad->staged ? ad->tangent : ad->primal;
  SrVal *out_tree = NULL, *captured = NULL;
  /* linearize_from_jvp: the primals are known, so the rule may look at
     their values where they have them */
  if (I->trace) sr_tracers_custom_next(I, 2, argv);
  SrJaxpr *j = sr_trace_fn(I, c->rule, 2, argv, 0, NULL, NULL, 0, &out_tree, &captured);
  sr_trace_next_repr(I, NULL, NULL);
  I->trace = saved;
  if (!j) return NULL;
  /* the traced rule's inputs: captured values, primal leaves, tangent
     leaves */
  SrVal *ins = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(captured->seq.items[i]));
  SrVal *pl = sr_pytree_flatten(I, primals), *tl = sr_pytree_flatten(I, tangents);
  for (int i = 0; pl && i < pl->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(pl->seq.items[i]));
  for (int i = 0; tl && i < tl->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(tl->seq.items[i]));
  sr_unref(pl);
  sr_unref(tl);
  SrVal *pair = NULL;
  if ((uint32_t)ins->seq.n != sr_nargs(j)) {
    sr_raise(I, "RuntimeError", "custom_jvp: the traced rule of %s has %u inputs, not %d", c->name, sr_nargs(j),
             ins->seq.n);
  } else {
    SrVal *outs = sr_seq(NULL, SR_V_LIST, (int)j->nout);
    for (uint32_t i = 0; i < j->nout; i++) sr_seq_push(NULL, outs, NULL);
    if (bind_rule_jaxpr(ad, j, ins->seq.items, outs->seq.items) == 0) pair = sr_pytree_unflatten(out_tree, outs);
    sr_unref(outs);
  }
  sr_unref(ins);
  sr_unref(captured);
  sr_unref(out_tree);
  sr_program_unref(j->prog);
  return pair;
}

/* The checks of _flatten_jvp on the rule's pair; fills the primal and
   tangent leaves. */
static int check_pair(SrInterp *I, Cjvp *c, SrVal *pair, SrVal **po, SrVal **to) {
  if (!sr_is_seq(pair) || pair->seq.n != 2) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, pair);
    sr_raise(I, "TypeError",
             "Custom JVP rule %s for function %s must produce a pair (list or tuple of length two) representing "
             "primal and tangent outputs, but got %s.",
             c->rule_name, c->name, sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  int rc = -1;
  SrBuf s1 = SR_BUF_INIT, s2 = SR_BUF_INIT, s3 = SR_BUF_INIT;
  const SrType **pt = NULL;
  *po = sr_pytree_array_leaves(I, pair->seq.items[0]);
  *to = *po ? sr_pytree_array_leaves(I, pair->seq.items[1]) : NULL;
  if (!*to) goto done;
  sr_custom_treedef_of(&s1, pair->seq.items[0]);
  sr_custom_treedef_of(&s2, pair->seq.items[1]);
  if (strcmp(sr_buf_str(&s1), sr_buf_str(&s2)) != 0) {
    sr_raise(I, "TypeError",
             "Custom JVP rule %s for function %s must produce primal and tangent outputs with equal container "
             "(pytree) structures, but got %s and %s respectively.",
             c->rule_name, c->name, sr_buf_str(&s1), sr_buf_str(&s2));
    goto done;
  }
  int n = (*po)->seq.n;
  pt = sr_xcalloc((size_t)n + 1, sizeof *pt);
  for (int i = 0; i < n; i++) pt[i] = sr_value_type(I, (*po)->seq.items[i]);
  sr_buf_reset(&s2);
  sr_vjp_treedef_str(&s2, c->out_tree);
  int same_tree = strcmp(sr_buf_str(&s1), sr_buf_str(&s2)) == 0;
  int same_types = same_tree;
  for (int i = 0; same_types && i < n; i++)
    same_types = sr_type_equal_mod_mesh(sr_type_with_weak(pt[i], 0), sr_type_with_weak(c->out_types[i], 0));
  if (!same_types) {
    sr_buf_reset(&s1);
    sr_buf_reset(&s2);
    sr_custom_type_tree(I, &s1, pair->seq.items[0], n, pt);
    sr_custom_type_tree(I, &s2, c->out_tree, c->nout, c->out_types);
    if (!same_tree)
      sr_raise(I, "TypeError",
               "Custom JVP rule %s for function %s must produce a pair (list or tuple of length two) where the "
               "first element represents the primal output (equal in value to the output of the "
               "custom_jvp-decorated function %s, and in particular of the same container/pytree structure), but "
               "instead the JVP rule output's first element had container/pytree structure:\n    %s\nwhile the "
               "custom_jvp-decorated function %s had output container/pytree structure:\n    %s.",
               c->rule_name, c->name, c->name, sr_buf_str(&s1), c->name, sr_buf_str(&s2));
    else
      sr_raise(I, "TypeError",
               "Custom JVP rule %s for function %s must produce a pair (list or tuple of length two) where the "
               "first element represents the primal output (equal in value to the output of the "
               "custom_jvp-decorated function %s, and in particular with leaves of the same shape/dtype), but "
               "instead the JVP rule output's first element had shapes/dtypes of:\n    %s\nwhile the "
               "custom_jvp-decorated function %s had output shapes/dtypes of:\n    %s",
               c->rule_name, c->name, c->name, sr_buf_str(&s1), c->name, sr_buf_str(&s2));
    goto done;
  }
  /* each tangent's type: the tangent type of its primal, weak types aside */
  int bad = 0;
  sr_buf_reset(&s3);
  for (int i = 0; i < n; i++) {
    const SrType *p = sr_type_with_weak(pt[i], 0);
    const SrType *want = sr_ad_tangent_type(p);
    const SrType *got = sr_type_with_weak(sr_value_type(I, (*to)->seq.items[i]), 0);
    if (sr_type_equal_mod_mesh(want, got)) continue;
    SrBuf tw = SR_BUF_INIT, tp = SR_BUF_INIT, tg = SR_BUF_INIT;
    sr_type_str(&tw, want, 0);
    sr_type_str(&tp, p, 0);
    sr_type_str(&tg, got, 0);
    if (n == 1) {
      sr_raise(I, "TypeError",
               "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes. "
               "Expected %s (tangent type of %s) but got %s.",
               sr_buf_str(&tw), sr_buf_str(&tp), sr_buf_str(&tg));
      sr_buf_free(&tw);
      sr_buf_free(&tp);
      sr_buf_free(&tg);
      goto done;
    }
    sr_buf_printf(&s3, "%s  primal %s with tangent %s, expecting tangent ", bad ? "\n" : "", sr_buf_str(&tp),
                  sr_buf_str(&tg));
    sr_buf_free(&tw);
    sr_buf_free(&tp);
    sr_buf_free(&tg);
    sr_aval_str(&s3, want);
    bad = 1;
  }
  if (bad) {
    sr_raise(I, "TypeError",
             "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes, but "
             "got:\n%s",
             sr_buf_str(&s3));
    goto done;
  }
  rc = 0;
done:
  free(pt);
  sr_buf_free(&s1);
  sr_buf_free(&s2);
  sr_buf_free(&s3);
  return rc;
}

/* The rule's tangent output v with each SymbolicZero made zeros of the
   tangent type of its primal (the leaves pl, *k the next one), marked in
   mask; a new reference, NULL on error. */
static SrVal *symzero_outs(SrAd *ad, SrVal *v, SrVal *pl, int *k, uint8_t *mask) {
  SrInterp *I = ad->I;
  if (sr_is_obj(v, &symzero_class)) {
    const SrType *zt = symzero_type(v);
    if (*k < pl->seq.n) {
      zt = sr_ad_tangent_type(sr_value_type(I, pl->seq.items[*k]));
      mask[*k] = 1;
    }
    (*k)++;
    SrVal *z = zt ? (ad->mode == SR_AD_LIN ? sr_ad_zeros_staged(ad, zt) : sr_ad_full_zeros(ad, zt)) : NULL;
    return z ? sr_ref(z) : NULL;
  }
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    (*k)++;
    return sr_ref(v);
  }
  SrVal *nc = sr_seq(NULL, SR_V_LIST, ch->seq.n);
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *e = symzero_outs(ad, ch->seq.items[i], pl, k, mask);
    if (!e) {
      sr_unref(nc);
      sr_unref(ch);
      return NULL;
    }
    sr_seq_push(NULL, nc, e);
  }
  SrVal *r = sr_pytree_rebuild(v, nc);
  sr_unref(nc);
  sr_unref(ch);
  return r;
}

static int jvp_custom_jvp(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrInterp *I = ad->I;
  SrVal *v = sr_eqn_param(e, sr_intern_cstr("jvp"));
  if (!v || !sr_is_obj(v, &cjvp_class)) return sr_lax_jvp_custom_call(ad, e, x, t, y, ty);
  Cjvp *c = v->obj.data;
  /* symbolic_zeros=False: the rule sees zeros, instantiated where the
     tangents go (the linear jaxpr under linearization) */
  SrVal *xl = sr_seq(NULL, SR_V_LIST, c->nleaves), *tl = sr_seq(NULL, SR_V_LIST, c->nleaves);
  for (int i = 0; i < c->nleaves; i++) {
    SrVal *xi = x[c->nconsts + i], *ti = t[c->nconsts + i];
    if (!ti && c->symbolic_zeros) {
      /* lift_jvp: a SymbolicZero of the tangent's aval (per example under
         vmap: batch_custom_jvp_subtrace's mapped_aval) */
      const SrType *zt = sr_ad_tangent_type(sr_value_type(I, xi));
      for (int k = 0; c->ndrop && k < c->ndrop[i]; k++) zt = sr_batch_unmapped_type(zt, 0);
      ti = sr_ad_keep(ad, symzero_new(zt));
    } else if (!ti) {
      const SrType *tt = sr_ad_tangent_type(sr_value_type(I, xi));
      ti = ad->mode == SR_AD_LIN ? sr_ad_zeros_staged(ad, tt) : sr_ad_full_zeros(ad, tt);
    }
    if (!ti) {
      sr_unref(xl);
      sr_unref(tl);
      return -1;
    }
    sr_seq_push(NULL, xl, sr_ref(xi));
    sr_seq_push(NULL, tl, sr_ref(ti));
  }
  SrVal *primals = sr_pytree_unflatten(c->in_tree, xl), *tangents = sr_pytree_unflatten(c->in_tree, tl);
  sr_unref(xl);
  sr_unref(tl);
  SrVal *pair = run_rule(ad, c, primals, tangents);
  sr_unref(primals);
  sr_unref(tangents);
  if (!pair) return -1;
  uint8_t *zmask = NULL;
  if (sr_is_seq(pair) && pair->seq.n == 2) {
    /* SymbolicZeros the rule returns (zero_from_primal(...,
       symbolic_zeros=True) makes them whatever the rule's mode) are zero
       tangents (NULL below); for
       the checks, zeros of their primals' tangent types */
    SrVal *pl = sr_pytree_flatten(I, pair->seq.items[0]);
    if (!pl) {
      sr_unref(pair);
      return -1;
    }
    zmask = sr_xcalloc((size_t)pl->seq.n + 1, 1);
    int k = 0;
    SrVal *tz = symzero_outs(ad, pair->seq.items[1], pl, &k, zmask);
    sr_unref(pl);
    if (!tz) {
      free(zmask);
      sr_unref(pair);
      return -1;
    }
    SrVal *items[2] = {sr_ref(pair->seq.items[0]), tz};
    sr_unref(pair);
    pair = sr_tuple(NULL, 2, items);
  }
  SrVal *po = NULL, *to = NULL;
  int rc = check_pair(I, c, pair, &po, &to);
  if (rc == 0)
    for (int i = 0; i < c->nout; i++) {
      y[i] = sr_ad_keep(ad, sr_ref(po->seq.items[i]));
      ty[i] = zmask && zmask[i] ? NULL : sr_ad_keep(ad, sr_ref(to->seq.items[i]));
    }
  free(zmask);
  sr_unref(po);
  sr_unref(to);
  sr_unref(pair);
  return rc;
}

/* ---- vmap ---- */

/* The jvp= object of a batched custom_jvp_call (custom_derivatives.py's
   _custom_jvp_call_vmap, whose batched_jvp_jaxpr_thunk batches the rule
   lazily): the rule jax.vmap'ed over the primals' and tangents' batched
   leaves (the closed-over operands are not the rule's), its primal and
   tangent results batched at 0 where the batched function's are
   (batch_custom_jvp_subtrace matches them), and the call's batched
   result types. */
static SrVal *batch_custom_jvp(SrInterp *I, SrVal *jvp, const uint8_t *in_batched, const uint8_t *out_batched,
                               int64_t size, const SrType *const *out_types) {
  if (!sr_is_obj(jvp, &cjvp_class)) return sr_ref(jvp);
  const Cjvp *c = jvp->obj.data;
  SrVal *vmap = sr_lookup_qualname("jax.vmap");
  if (!vmap) return sr_raise(I, "RuntimeError", "jax.vmap is missing");
  SrVal *axl = sr_seq(NULL, SR_V_LIST, c->nleaves);
  for (int i = 0; i < c->nleaves; i++)
    sr_seq_push(NULL, axl, in_batched[c->nconsts + i] ? sr_int(NULL, 0) : sr_none());
  SrVal *ax = sr_pytree_unflatten(c->in_tree, axl);
  sr_unref(axl);
  if (!ax) return NULL;
  SrVal *in_axes = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, in_axes, sr_ref(ax));
  sr_seq_push(NULL, in_axes, ax);
  SrVal *oxl = sr_seq(NULL, SR_V_LIST, c->nout);
  for (int i = 0; i < c->nout; i++) sr_seq_push(NULL, oxl, out_batched[i] ? sr_int(NULL, 0) : sr_none());
  SrVal *ox = sr_pytree_unflatten(c->out_tree, oxl);
  sr_unref(oxl);
  if (!ox) {
    sr_unref(in_axes);
    return NULL;
  }
  SrVal *out_axes = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, out_axes, sr_ref(ox));
  sr_seq_push(NULL, out_axes, ox);
  SrVal *kwv[3] = {in_axes, out_axes, sr_int(NULL, size)};
  const char *kw[3] = {sr_intern_cstr("in_axes"), sr_intern_cstr("out_axes"), sr_intern_cstr("axis_size")};
  SrVal *pos[1] = {c->rule};
  SrArgs a = {1, pos, 3, kw, kwv, NULL};
  SrVal *rule = sr_call(I, vmap, &a);
  for (int i = 0; i < 3; i++) sr_unref(kwv[i]);
  if (!rule) return NULL;
  Cjvp *d = sr_xcalloc(1, sizeof *d);
  *d = *c;
  d->rule = rule;
  d->in_tree = sr_ref(c->in_tree);
  d->out_tree = sr_ref(c->out_tree);
  d->out_types = sr_xcalloc((size_t)c->nout + 1, sizeof *d->out_types);
  for (int i = 0; i < c->nout; i++) d->out_types[i] = out_types[i];
  d->ndrop = sr_xcalloc((size_t)c->nleaves + 1, 1);
  for (int i = 0; i < c->nleaves; i++) d->ndrop[i] = (uint8_t)((c->ndrop ? c->ndrop[i] : 0) + in_batched[c->nconsts + i]);
  return sr_obj(&cjvp_class, d);
}

/* The rule traced on abstract primals and tangents of the per-example
   types, and that jaxpr batched as the call's operands are (the tangents
   as their primals, as batch_custom_jvp_subtrace passes in_dims * 2):
   which of its results come out batched. */
static void batch_custom_jvp_outs(SrInterp *I, SrVal *jvp, const uint8_t *in_batched, int64_t size,
                                  const char *axis_name, const SrType *const *in_types, uint8_t *force) {
  /* a rule that calls its function (most do) binds a custom_jvp_call in
     the probe: that one is not probed again */
  static int probing;
  if (!sr_is_obj(jvp, &cjvp_class) || I->exc || probing) return;
  const Cjvp *c = jvp->obj.data;
  if (c->symbolic_zeros) return;
  probing = 1;
  SrVal *pl = sr_seq(NULL, SR_V_LIST, c->nleaves), *tl = sr_seq(NULL, SR_V_LIST, c->nleaves);
  for (int i = 0; i < c->nleaves; i++) {
    const SrType *t = in_types[c->nconsts + i];
    sr_seq_push(NULL, pl, sr_array_abstract(t));
    sr_seq_push(NULL, tl, sr_array_abstract(sr_ad_tangent_type(t)));
  }
  SrVal *argv[2] = {sr_pytree_unflatten(c->in_tree, pl), sr_pytree_unflatten(c->in_tree, tl)};
  sr_unref(pl);
  sr_unref(tl);
  SrVal *out_tree = NULL, *captured = NULL;
  /* JAX does not run the rule here: what it prints is not shown */
  FILE *saved_out = I->py->out;
  I->py->out = NULL;
  SrJaxpr *j = argv[0] && argv[1] ? sr_trace_fn(I, c->rule, 2, argv, 0, NULL, NULL, 0, &out_tree, &captured) : NULL;
  I->py->out = saved_out;
  sr_unref(argv[0]);
  sr_unref(argv[1]);
  if (!j) {
    sr_exc_clear(I);
    probing = 0;
    return;
  }
  SrVal *outs = sr_is_seq(out_tree) && out_tree->seq.n == 2 ? sr_pytree_flatten(I, out_tree) : NULL;
  if (!outs) sr_exc_clear(I);
  if (outs && outs->seq.n == 2 * c->nout && j->nout == (uint32_t)(2 * c->nout) &&
      sr_nargs(j) == (uint32_t)(captured->seq.n + 2 * c->nleaves)) {
    uint8_t *inb = sr_xcalloc(sr_nargs(j) + 1, 1), *outb = sr_xcalloc(j->nout + 1, 1);
    for (int i = 0; i < c->nleaves; i++)
      inb[captured->seq.n + i] = inb[captured->seq.n + c->nleaves + i] = in_batched[c->nconsts + i];
    SrBatch b;
    sr_batch_begin(&b, I, size, axis_name);
    SrJaxpr *bj = sr_batch_jaxpr(&b, j, inb, NULL, outb);
    sr_batch_end(&b);
    if (bj) {
      for (int k = 0; k < c->nout; k++) force[k] = outb[k] || outb[c->nout + k];
      sr_program_unref(bj->prog);
    } else {
      sr_exc_clear(I);
    }
    free(inb);
    free(outb);
  }
  sr_unref(outs);
  sr_unref(out_tree);
  sr_unref(captured);
  sr_program_unref(j->prog);
  probing = 0;
}

/* custom_derivatives.zero_from_primal(val, symbolic_zeros=False): zeros
   of each leaf's tangent type (float0 for integers and booleans); None
   leaves stay None. */
static SrVal *zero_leaves(SrInterp *I, SrVal *v) {
  if (v->kind == SR_V_NONE) return sr_none();
  SrVal *ch = sr_pytree_children(v);
  if (ch) {
    for (int i = 0; i < ch->seq.n; i++) {
      SrVal *z = zero_leaves(I, ch->seq.items[i]);
      if (!z) {
        sr_unref(ch);
        return NULL;
      }
      sr_unref(ch->seq.items[i]);
      ch->seq.items[i] = z;
    }
    SrVal *r = sr_pytree_rebuild(v, ch);
    sr_unref(ch);
    return r;
  }
  const SrType *t = sr_value_type(I, v);
  if (!t) {
    SrBuf b = SR_BUF_INIT;
    sr_to_str(I, &b, v);
    sr_raise(I, "TypeError", "Value %s of type <class '%s'> is not a valid JAX type", sr_buf_str(&b), sr_val_kind_name(v));
    sr_buf_free(&b);
    return NULL;
  }
  SrDtype dt = sr_dtype_is_inexact(t->dtype) ? t->dtype : SR_FLOAT0;
  SrVal *args[2] = {sr_shape_tuple(t), sr_dtype_val(NULL, dt)};
  SrArgs ca = {2, args, 0, NULL, NULL, NULL};
  SrVal *zf = sr_lookup_qualname("jax.numpy.zeros");
  SrVal *r = zf ? sr_call(I, zf, &ca) : sr_raise(I, "RuntimeError", "jax.numpy.zeros is missing");
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

/* zero_from_primal(val, symbolic_zeros=True): a SymbolicZero of each
   leaf's tangent aval */
static SrVal *symzero_leaves(SrInterp *I, SrVal *v) {
  if (v->kind == SR_V_NONE) return sr_none();
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    SrVal *r = sr_seq(NULL, v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *e = symzero_leaves(I, v->seq.items[i]);
      if (!e) {
        sr_unref(r);
        return NULL;
      }
      sr_seq_push(NULL, r, e);
    }
    return r;
  }
  const SrType *t = sr_value_type(I, v);
  if (!t) {
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, v);
    sr_raise(I, "TypeError", "Value %s of type <class '%s'> is not a valid JAX type", sr_buf_str(&b), sr_val_kind_name(v));
    sr_buf_free(&b);
    return NULL;
  }
  return symzero_new(sr_ad_tangent_type(t));
}

static SrVal *jax_zero_from_primal(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "zero_from_primal", "val, symbolic_zeros=", p) < 0) return NULL;
  if (sr_pytree_check_depth(I, p[0]) < 0) return NULL;
  if (p[1] && sr_val_truthy(p[1])) return symzero_leaves(I, p[0]);
  return zero_leaves(I, p[0]);
}

void sr_custom_jvp_init(void) {
  sr_register("jax.custom_derivatives.SymbolicZero", sr_obj(&symzero_type_class, NULL));
  sr_def("jax.custom_derivatives.zero_from_primal", jax_zero_from_primal,
         "zero_from_primal(val, symbolic_zeros=False): zeros of each leaf's tangent type (float0 for integer leaves)");
  sr_val_keep_class(&cjvp_class);
  sr_lax_custom_hooks.custom_jvp_call = jvp_custom_jvp;
  sr_lax_custom_hooks.custom_jvp_batch = batch_custom_jvp;
  sr_lax_custom_hooks.custom_jvp_batch_outs = batch_custom_jvp_outs;
  sr_def("jax.custom_jvp jax.custom_derivatives.custom_jvp", jax_custom_jvp,
         "custom_jvp(fun): fun with a custom forward-mode rule, set with f.defjvp(jvp) or f.defjvps(*jvps); "
         "calls bind a custom_jvp_call equation, and jax.jvp, jax.grad and jax.vjp use the rule");
}
