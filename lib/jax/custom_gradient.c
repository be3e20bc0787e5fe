/* custom_gradient.c: jax.custom_gradient (custom_derivatives.py), built
 * on jax.custom_vjp as JAX builds it:
 *
 *   wrapped_fun(*args) = fun(*args)[0], made a custom_vjp named for fun;
 *   fwd(*args): ans, rule = fun(*args); rule traced on ans's cotangent
 *     types, its closed-over values separated as leading inputs
 *     (pe.separate_consts); returns ans and Residuals(jaxpr, trees,
 *     consts), a pytree node whose children are the consts;
 *   bwd(res, cts): the jaxpr evaluated on consts and cts's leaves
 *     (core.eval_jaxpr, inline), a bare result made a 1-tuple.
 *
 * Registered by sr_custom_gradient_init (misc16.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/jaxpr.h"
#include "jax/api.h"
#include "jax/jax.h"
#include "jax/misc16.h"
#include "jax/tree_util.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/intern.h"

/* ---- Residuals: (jaxpr, in_tree, out_tree, consts), consts its children */

typedef struct {
  int rc;
  SrJaxpr *jaxpr;   /* holds a reference to its program */
  SrVal *rule_out;  /* the rule's result structure, leaves numbered */
  SrVal *ct_tree;   /* the cotangent's structure (ans's), leaves numbered */
} ResAux;

typedef struct {
  ResAux *aux;
  SrVal *consts; /* a list */
} Res;

static void aux_unref(ResAux *x) {
  if (--x->rc > 0) return;
  sr_program_unref(x->jaxpr->prog);
  sr_unref(x->rule_out);
  sr_unref(x->ct_tree);
  free(x);
}

static void res_free(void *d) {
  Res *r = d;
  aux_unref(r->aux);
  sr_unref(r->consts);
  free(r);
}

static void res_repr(SrBuf *out, const SrVal *v) {
  const Res *r = v->obj.data;
  sr_buf_puts(out, "Residuals(jaxpr=..., consts=");
  sr_val_repr(out, r->consts);
  sr_buf_puts(out, ")");
}

static SrVal *res_children(SrVal *self) {
  Res *r = self->obj.data;
  SrVal *l = sr_seq(NULL, SR_V_LIST, r->consts->seq.n);
  for (int i = 0; i < r->consts->seq.n; i++) sr_seq_push(NULL, l, sr_ref(r->consts->seq.items[i]));
  return l;
}

static SrVal *res_new(ResAux *aux, SrVal *children);

static SrVal *res_rebuild(SrVal *self, SrVal *children) {
  return res_new(((Res *)self->obj.data)->aux, children);
}

static const SrLangOps res_ops = {.tree_children = res_children, .tree_rebuild = res_rebuild};
static const SrClass res_class = {"Residuals", res_free, res_repr, NULL, &res_ops};

/* a Residuals object over aux (referenced) with the items of children */
static SrVal *res_new(ResAux *aux, SrVal *children) {
  Res *r = sr_xcalloc(1, sizeof *r);
  r->aux = aux;
  aux->rc++;
  r->consts = sr_seq(NULL, SR_V_LIST, children->seq.n);
  for (int i = 0; i < children->seq.n; i++) sr_seq_push(NULL, r->consts, sr_ref(children->seq.items[i]));
  return sr_obj(&res_class, r);
}

/* ---- the three functions */

typedef struct {
  SrVal *fun;
} Grad;

static void grad_free(void *d) {
  Grad *g = d;
  sr_unref(g->fun);
  free(g);
}

/* fun(*args, **kwargs) checked to be a pair: a new reference or NULL */
static SrVal *call_pair(SrInterp *I, SrVal *fun, SrArgs *a) {
  SrVal *r = sr_call(I, fun, a);
  if (!r) return NULL;
  if (!sr_is_seq(r) || r->kind == SR_V_SET || r->kind == SR_V_FROZENSET) {
    sr_raise(I, "TypeError", "cannot unpack non-iterable %s object", sr_val_kind_name(r));
    sr_unref(r);
    return NULL;
  }
  if (r->seq.n != 2) {
    if (r->seq.n < 2) sr_raise(I, "ValueError", "not enough values to unpack (expected 2, got %d)", r->seq.n);
    else sr_raise(I, "ValueError", "too many values to unpack (expected 2)");
    sr_unref(r);
    return NULL;
  }
  return r;
}

/* wrapped_fun(*args, **kwargs): ans, _ = fun(*args, **kwargs); ans */
static SrVal *wrapped_call(SrInterp *I, SrArgs *a) {
  Grad *g = sr_current_builtin(I)->data;
  SrVal *p = call_pair(I, g->fun, a);
  if (!p) return NULL;
  SrVal *ans = sr_ref(p->seq.items[0]);
  sr_unref(p);
  return ans;
}

/* fwd(*args, **kwargs): ans and the Residuals of rule traced on ans's
   cotangent types */
static SrVal *fwd_call(SrInterp *I, SrArgs *a) {
  Grad *g = sr_current_builtin(I)->data;
  SrVal *p = call_pair(I, g->fun, a);
  if (!p) return NULL;
  SrVal *ans = p->seq.items[0], *rule = p->seq.items[1], *rule_out = NULL, *captured = NULL, *r = NULL;
  SrJaxpr *j = sr_trace_fn(I, rule, 1, &ans, 0, NULL, NULL, SR_TRACE_SEPARATE_CONSTS, &rule_out, &captured);
  if (!j) goto out;
  ResAux *aux = sr_xcalloc(1, sizeof *aux);
  aux->rc = 1;
  aux->jaxpr = j;
  int k = 0;
  aux->rule_out = sr_pytree_numbered(rule_out, &k);
  k = 0;
  aux->ct_tree = sr_pytree_numbered(ans, &k);
  SrVal *res = res_new(aux, captured);
  aux_unref(aux); /* res holds it */
  SrVal *items[2] = {sr_ref(ans), res};
  r = sr_tuple(NULL, 2, items);
out:
  sr_unref(rule_out);
  sr_unref(captured);
  sr_unref(p);
  return r;
}

/* bwd(res, cts): core.eval_jaxpr(jaxpr, consts, *cts_flat), unflattened
   to the rule's structure, a leaf made a 1-tuple */
static SrVal *bwd_call(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || !sr_is_obj(a->v[0], &res_class))
    return sr_raise(I, "TypeError", "custom_gradient's bwd takes the residuals of its fwd and the cotangents");
  Res *res = a->v[0]->obj.data;
  SrVal *cts = sr_pytree_flatten(I, a->v[1]);
  if (!cts) return NULL;
  SrVal *tc = sr_pytree_children(res->aux->ct_tree);
  SrVal *ctc = sr_pytree_children(a->v[1]);
  int ok = (!tc) == (!ctc);
  sr_unref(tc);
  sr_unref(ctc);
  SrVal *r = NULL;
  int nres = res->consts->seq.n, n = nres + cts->seq.n;
  if (!ok || (uint32_t)n != sr_nargs(res->aux->jaxpr)) {
    SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
    SrVal *wrap1 = sr_seq(NULL, SR_V_TUPLE, 1), *wrap2 = sr_seq(NULL, SR_V_TUPLE, 1);
    sr_seq_push(NULL, wrap1, sr_ref(res->aux->ct_tree));
    sr_seq_push(NULL, wrap2, sr_ref(a->v[1]));
    sr_treedef_str(&x, wrap1, sr_pytree_children);
    sr_treedef_str(&y, wrap2, sr_pytree_children);
    sr_raise(I, "TypeError", "%s\n!=\n%s", x.p, y.p);
    sr_unref(wrap1);
    sr_unref(wrap2);
    sr_buf_free(&x);
    sr_buf_free(&y);
    sr_unref(cts);
    return NULL;
  }
  SrVal **in = sr_xcalloc((size_t)n + 1, sizeof *in);
  for (int i = 0; i < nres; i++) in[i] = res->consts->seq.items[i];
  for (int i = 0; i < cts->seq.n; i++) in[nres + i] = cts->seq.items[i];
  SrVal *outs = sr_eval_jaxpr(I, res->aux->jaxpr, n, in);
  free(in);
  sr_unref(cts);
  if (!outs) return NULL;
  SrVal *ol = sr_seq(NULL, SR_V_LIST, outs->seq.n);
  for (int i = 0; i < outs->seq.n; i++) sr_seq_push(NULL, ol, sr_ref(outs->seq.items[i]));
  sr_unref(outs);
  SrVal *ct = sr_pytree_unflatten(res->aux->rule_out, ol);
  sr_unref(ol);
  if (!ct) return NULL;
  SrVal *ch = sr_pytree_children(res->aux->rule_out);
  if (!ch) { /* treedef_is_leaf(in_tree) */
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, 1);
    sr_seq_push(NULL, t, ct);
    r = t;
  } else {
    r = ct;
  }
  sr_unref(ch);
  return r;
}

/* custom_gradient(fun) */
static SrVal *make(SrInterp *I, SrVal *fun) {
  const char *name = sr_callable_name(fun);
  Grad *g = sr_xcalloc(1, sizeof *g);
  g->fun = sr_ref(fun);
  SrVal *w = sr_builtin_with(name, wrapped_call, g, grad_free);
  g = sr_xcalloc(1, sizeof *g);
  g->fun = sr_ref(fun);
  SrVal *fwd = sr_builtin_with("fwd", fwd_call, g, grad_free);
  SrVal *bwd = sr_builtin_with("bwd", bwd_call, NULL, NULL);
  SrVal *cvf = sr_lookup_qualname("jax.custom_vjp");
  SrArgs ca = {1, &w, 0, NULL, NULL, NULL};
  SrVal *cv = cvf ? sr_call(I, cvf, &ca) : sr_raise(I, "RuntimeError", "jax.custom_vjp is missing");
  SrVal *def = cv ? sr_getattr(I, cv, "defvjp") : NULL;
  SrVal *fb[2] = {fwd, bwd};
  SrArgs da = {2, fb, 0, NULL, NULL, NULL};
  SrVal *ok = def ? sr_call(I, def, &da) : NULL;
  sr_unref(ok);
  sr_unref(def);
  sr_unref(w);
  sr_unref(fwd);
  sr_unref(bwd);
  if (!ok) {
    sr_unref(cv);
    return NULL;
  }
  return cv;
}

static SrVal *decorator_call(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "<lambda>() takes 1 positional argument but %d were given", a->n);
  return make(I, a->v[0]);
}

/* jax.custom_gradient(fun=None, *, with_logs=False) */
static SrVal *jax_custom_gradient(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "custom_gradient", "fun=, *, with_logs=", p) < 0) return NULL;
  if (p[1] && sr_val_truthy(p[1]))
    return sr_raise(I, "NotImplementedError", "custom_gradient: with_logs=True is not supported here");
  if (!p[0] || p[0]->kind == SR_V_NONE) return sr_builtin_with("<lambda>", decorator_call, NULL, NULL);
  return make(I, p[0]);
}

void sr_custom_gradient_init(void) {
  sr_def("jax.custom_gradient jax.custom_derivatives.custom_gradient", jax_custom_gradient,
         "custom_gradient(fun): fun returns (value, vjp function); a custom_vjp over it (TensorFlow's API)");
}
