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
 * and save_from_both_policies(p1, p2), save_and_offload_only_these_names
 * (which jax.checkpoint refuses: no offloading here), and a function of
 * the user's wrapped as one.  Each answers saveable(prim, *avals,
 * **params) for the remat rule's partial evaluation (lax/remat_pe.c,
 * through sr_lax_remat_saveable).
 *
 * saved_residuals and print_saved_residuals (ad_checkpoint.py) list what
 * jax.vjp(f) saves, with the source locations equations record
 * (SrEqn.loc, from trace_loc here: source_info_util.summarize). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/remat_policies.h"
#include "jax/api.h"
#include "jax/introspect.h"

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "check/rule.h"
#include "exec/eval.h"
#include "jax/tree_util.h"
#include "lax/lax.h"
#include "py/interp.h"
#include "py/lex.h"
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
  POL_CALLABLE,    /* a function of the user's: policy(prim, *avals, **params) */
  POL_OFFLOAD,     /* SaveAndOffloadOnlyTheseNames: not supported */
};

typedef struct Policy {
  char *repr;
  int kind;
  char **names; /* POL_ONLY_NAMES, POL_NAMES_BUT */
  int nnames;
  SrVal *p1, *p2; /* POL_BOTH; POL_CALLABLE: p1, the function */
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

SrVal *sr_remat_policy_of(SrVal *fn) {
  /* its repr, the address masked as JAX's printed params are compared */
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, fn);
  const char *s = sr_buf_str(&b), *at = strstr(s, " at 0x");
  SrBuf m = SR_BUF_INIT;
  if (at) {
    sr_buf_putn(&m, s, (size_t)(at - s) + 6);
    const char *q = at + 6;
    while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')) q++;
    sr_buf_puts(&m, "XXXXXXXXXXXX");
    sr_buf_puts(&m, q);
  } else if (strncmp(s, "<function ", 10) == 0 && b.len && s[b.len - 1] == '>') {
    /* a function's repr here has no address: CPython's has one */
    sr_buf_putn(&m, s, b.len - 1);
    sr_buf_puts(&m, " at 0xXXXXXXXXXXXX>");
  } else {
    sr_buf_puts(&m, s);
  }
  Policy *p = policy_new(sr_buf_str(&m), POL_CALLABLE);
  sr_buf_free(&b);
  sr_buf_free(&m);
  p->p1 = sr_ref(fn);
  return sr_obj(&policy_class, p);
}

int sr_remat_policy_kind(const SrVal *v) {
  if (!v || v->kind == SR_V_NONE) return 0;
  if (!sr_is_obj(v, &policy_class)) return -1;
  int k = ((const Policy *)v->obj.data)->kind;
  return k == POL_OFFLOAD ? -2 : k;
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
  case POL_CALLABLE: {
    /* saveable(prim, *[x.aval for x in eqn.invars], **eqn.params), then
       partial_eval.ensure_enum: a bool */
    SrVal **av = sr_xcalloc(e->nin + 2, sizeof *av);
    av[0] = sr_introspect_eqn_prim(e);
    for (uint32_t i = 0; i < e->nin; i++) av[i + 1] = sr_aval_new(e->in[i]->type);
    SrVal *d = sr_introspect_eqn_params(e);
    SrVal *r = sr_call_kwdict(I, p->p1, (int)e->nin + 1, av, d);
    for (uint32_t i = 0; i < e->nin + 1; i++) sr_unref(av[i]);
    free(av);
    sr_unref(d);
    if (!r) return -1;
    int rc = r->kind == SR_V_BOOL ? (int)r->i : -1;
    if (rc < 0) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, r);
      sr_raise(I, "TypeError",
               "Value returned by a remat policy should be a bool or `ad_checkpoint.Recompute`, "
               "`ad_checkpoint.Saveable` or `ad_checkpoint.Offloadable(...)`. Got %s of type <class '%s'>.",
               sr_buf_str(&b), sr_val_kind_name(r));
      sr_buf_free(&b);
    }
    sr_unref(r);
    return rc;
  }
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

/* {'a', 'b'} of a list of names (sorted, as names_repr), set() if empty */
static void set_repr(SrBuf *b, SrVal *names) {
  if (!names->seq.n) {
    sr_buf_puts(b, "set()");
    return;
  }
  sr_buf_putc(b, '{');
  for (int i = 0; i < names->seq.n; i++) {
    if (i) sr_buf_puts(b, ", ");
    sr_val_repr(b, names->seq.items[i]);
  }
  sr_buf_putc(b, '}');
}

/* save_and_offload_only_these_names(*, names_which_can_be_saved,
   names_which_can_be_offloaded, offload_src, offload_dst): the object,
   with JAX's check that the names do not intersect; jax.checkpoint does
   not take it (offloading is not supported here) */
static SrVal *bi_save_and_offload(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "save_and_offload_only_these_names",
                    "*, names_which_can_be_saved, names_which_can_be_offloaded, offload_src, offload_dst", p) < 0)
    return NULL;
  SrVal *lists[2] = {NULL, NULL};
  SrVal *sorted = sr_lookup_builtin_name("sorted");
  for (int i = 0; i < 2; i++) {
    lists[i] = sorted ? sr_call1(I, sorted, p[i]) : NULL;
    if (!lists[i]) {
      sr_unref(lists[0]);
      return NULL;
    }
  }
  SrVal *both = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < lists[0]->seq.n; i++)
    for (int j = 0; j < lists[1]->seq.n; j++)
      if (sr_val_equal(lists[0]->seq.items[i], lists[1]->seq.items[j]))
        sr_seq_push(NULL, both, sr_ref(lists[0]->seq.items[i]));
  SrBuf b = SR_BUF_INIT;
  SrVal *r = NULL;
  if (both->seq.n) {
    sr_buf_puts(&b, "The names should be exclusive and should not intersect in `names_which_can_be_saved` and "
                    "`names_which_can_be_offloaded`. Got names_which_can_be_saved=");
    set_repr(&b, lists[0]);
    sr_buf_puts(&b, ", names_which_can_be_offloaded=");
    set_repr(&b, lists[1]);
    sr_buf_puts(&b, " and the intersection=");
    set_repr(&b, both);
    sr_raise(I, "ValueError", "%s", sr_buf_str(&b));
  } else {
    sr_buf_puts(&b, "SaveAndOffloadOnlyTheseNames(names_which_can_be_saved=frozenset(");
    if (lists[0]->seq.n) set_repr(&b, lists[0]);
    sr_buf_puts(&b, "), names_which_can_be_offloaded=frozenset(");
    if (lists[1]->seq.n) set_repr(&b, lists[1]);
    sr_buf_puts(&b, "), offload_src=");
    sr_val_repr(&b, p[2]);
    sr_buf_puts(&b, ", offload_dst=");
    sr_val_repr(&b, p[3]);
    sr_buf_puts(&b, ")");
    r = policy(sr_buf_str(&b), POL_OFFLOAD);
  }
  sr_buf_free(&b);
  sr_unref(both);
  sr_unref(lists[0]);
  sr_unref(lists[1]);
  return r;
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

/* ---- source locations (source_info_util.summarize) ---- */

/* "file:line (function)" of the statement running, interned; the last
   answer is kept, since a statement binds many equations */
static const char *trace_loc(SrInterp *I) {
  SrPyState *py = I->py;
  if (!py || !py->code || !py->code->src) return NULL;
  static const SrSrc *last_src;
  static const char *last_text, *last_func, *last;
  static uint32_t last_off;
  const SrSrc *src = py->code->src;
  if (last && src == last_src && src->text == last_text && py->cur_off == last_off && py->cur_qual == last_func)
    return last;
  uint32_t line = 0, col = 0;
  sr_src_linecol(src, py->cur_off, &line, &col);
  SrBuf b = SR_BUF_INIT;
  /* source_info_util._summarize_frame: the column (from 0) where it is not 0 */
  const char *fn = py->cur_qual ? py->cur_qual : "<module>"; /* co_qualname */
  if (col > 1) sr_buf_printf(&b, "%s:%u:%u (%s)", src->name, line, col - 1, fn);
  else sr_buf_printf(&b, "%s:%u (%s)", src->name, line, fn);
  last = sr_intern_cstr(sr_buf_str(&b));
  sr_buf_free(&b);
  last_src = src;
  last_text = src->text;
  last_off = py->cur_off;
  last_func = py->cur_qual;
  return last;
}

/* the last five frames (jax_tracer_error_num_traceback_frames' default) */
static const char *trace_frames(SrInterp *I) { return sr_py_frames_summary(I, 5); }

/* ---- saved_residuals, print_saved_residuals ---- */

/* f with its keyword arguments passed positionally after the others, so
   that they are traced too (flatten((args, kwargs)): keys sorted) */
typedef struct KwCall {
  SrVal *f;
  int nargs, nkw;
  const char **kw; /* interned, sorted */
} KwCall;

static void kwcall_free(void *d) {
  KwCall *k = d;
  sr_unref(k->f);
  free(k->kw);
  free(k);
}

static SrVal *kwcall(SrInterp *I, SrArgs *a) {
  KwCall *k = sr_current_builtin(I)->data;
  SrArgs ca = {k->nargs, a->v, k->nkw, k->kw, a->v + k->nargs, NULL};
  return sr_call(I, k->f, &ca);
}

/* saved_residuals(f, *args, **kwargs): the residuals jax.vjp(f) saves,
   each (its type as a ShapeDtypeStruct, where it comes from), in
   _saved_residuals's order: literals, constants, arguments, then the
   equations' outputs (a reduce_precision looked through). */
static SrVal *saved_residuals(SrInterp *I, SrArgs *a) {
  if (a->n < 1) return sr_raise(I, "TypeError", "saved_residuals() missing 1 required positional argument: 'f'");
  SrVal *f = a->v[0];
  SrArgs b = *a;
  b.n--;
  b.v++;
  KwCall *kc = sr_xcalloc(1, sizeof *kc);
  kc->f = sr_ref(f);
  kc->nargs = b.n;
  kc->nkw = b.nkw;
  kc->kw = sr_xcalloc((size_t)b.nkw + 1, sizeof *kc->kw);
  SrVal **all = sr_xcalloc((size_t)(b.n + b.nkw) + 1, sizeof *all);
  for (int i = 0; i < b.n; i++) all[i] = b.v[i];
  for (int i = 0; i < b.nkw; i++) {
    int j = i;
    while (j > 0 && strcmp(kc->kw[j - 1], b.kw[i]) > 0) {
      kc->kw[j] = kc->kw[j - 1];
      all[b.n + j] = all[b.n + j - 1];
      j--;
    }
    kc->kw[j] = b.kw[i];
    all[b.n + j] = b.kwv[i];
  }
  SrVal *wrapper = sr_builtin_with("saved_residuals.<locals>.f_", kwcall, kc, kwcall_free);
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *body = sr_trace_fn(I, wrapper, b.n + b.nkw, all, 0, NULL, NULL, 0, &out_tree, &captured);
  free(all);
  sr_unref(wrapper);
  if (!body) return NULL;
  sr_unref(out_tree);
  uint32_t n = sr_nargs(body), ncap = captured ? (uint32_t)captured->seq.n : 0;
  SrTrace *saved = I->trace;
  SrTrace *T = sr_trace_begin(I);
  SrVal **prim = sr_xcalloc(n + 1, sizeof *prim);
  uint8_t *in_nz = sr_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) {
    if (i < ncap) prim[i] = sr_ref(captured->seq.items[i]);
    else prim[i] = sr_trace_arg(I, T, sr_args(body)[i]->type), in_nz[i] = 1;
  }
  SrVal **outs = sr_xcalloc(body->nout + 1, sizeof *outs);
  SrLinear lin;
  I->trace = T;
  int rc = sr_ad_linearize(I, body, prim, in_nz, NULL, outs, &lin);
  SrJaxpr *F = NULL;
  SrVal *fcap = NULL;
  uint32_t nres = 0;
  if (rc == 0) {
    nres = (uint32_t)lin.nres;
    SrVal **fo = sr_xcalloc(body->nout + nres + 1, sizeof *fo);
    for (uint32_t i = 0; i < body->nout; i++) fo[i] = outs[i];
    for (uint32_t r = 0; r < nres; r++) fo[body->nout + r] = lin.res[r];
    I->trace = T;
    F = sr_trace_end(I, T, fo, (int)(body->nout + nres), &fcap);
    free(fo);
    sr_ad_linear_free(&lin);
  } else {
    sr_trace_abort(I, T);
  }
  I->trace = saved;
  for (uint32_t i = 0; i < body->nout; i++) sr_unref(outs[i]);
  free(outs);
  for (uint32_t i = 0; i < n; i++) sr_unref(prim[i]);
  free(prim);
  free(in_nz);
  sr_unref(captured);
  sr_program_unref(body->prog);
  if (!F) return NULL;
  sr_unref(fcap);
  int nnames = 0;
  char **names = sr_debug_arg_names(I, f, &b, NULL, &nnames);
  /* the residual vars, reduce_precision looked through */
  uint32_t nv = F->nvars + 1;
  uint8_t *isres = sr_xcalloc(nv, 1);
  SrVal *list = sr_seq(NULL, SR_V_LIST, 0);
#define PUSH(type, text)                                                                                               \
  do {                                                                                                                 \
    SrVal *tup = sr_seq(NULL, SR_V_TUPLE, 2);                                                                          \
    sr_seq_push(NULL, tup, sr_array_abstract(type));                                                                   \
    sr_seq_push(NULL, tup, sr_str_cstr(NULL, text));                                                                   \
    sr_seq_push(NULL, list, tup);                                                                                      \
  } while (0)
  for (uint32_t i = F->nout - nres; i < F->nout; i++) {
    SrVar *v = F->outvars[i];
    if (v->kind == SR_LIT) {
      PUSH(v->type, "from a literal");
      continue;
    }
    isres[v->id] = 1;
  }
  for (uint32_t k = 0; k < F->neqn; k++) {
    const SrEqn *e = &F->eqns[k];
    if (e->prim->id == SR_P_reduce_precision && e->out[0]->kind == SR_VAR && isres[e->out[0]->id] &&
        e->in[0]->kind == SR_VAR) {
      isres[e->out[0]->id] = 0;
      isres[e->in[0]->id] = 1;
    }
  }
  SrBuf s = SR_BUF_INIT;
  for (uint32_t i = 0; i < F->nconst; i++)
    if (isres[F->invars[i]->id]) PUSH(F->invars[i]->type, "from a constant");
  for (uint32_t i = 0; i < sr_nargs(F); i++) {
    SrVar *v = sr_args(F)[i];
    if (!isres[v->id]) continue;
    sr_buf_reset(&s);
    if ((int)i < nnames && names[i][0]) sr_buf_printf(&s, "from the argument %s", names[i]);
    else sr_buf_printf(&s, "from the argument at flattened index %u", i);
    PUSH(v->type, sr_buf_str(&s));
  }
  for (uint32_t k = 0; k < F->neqn; k++) {
    const SrEqn *e = &F->eqns[k];
    for (uint32_t i = 0; i < e->nout; i++) {
      SrVar *v = e->out[i];
      if (v->kind != SR_VAR || !isres[v->id]) continue;
      const char *src = e->loc ? e->loc : "";
      SrVal *nm = e->prim->id == SR_P_name || e->prim->id == SR_P_jit ? sr_eqn_param(e, sr_intern_cstr("name")) : NULL;
      sr_buf_reset(&s);
      if (nm && (nm->kind == SR_V_STR || nm->kind == SR_V_WORD) && e->prim->id == SR_P_name)
        sr_buf_printf(&s, "named '%.*s' from %s", (int)nm->str.n, nm->str.s, src);
      else if (nm && (nm->kind == SR_V_STR || nm->kind == SR_V_WORD))
        sr_buf_printf(&s, "output of jitted function '%.*s' from %s", (int)nm->str.n, nm->str.s, src);
      else sr_buf_printf(&s, "output of %s from %s", e->prim->name, src);
      PUSH(v->type, sr_buf_str(&s));
    }
  }
#undef PUSH
  sr_buf_free(&s);
  for (int i = 0; i < nnames; i++) free(names[i]);
  free(names);
  free(isres);
  sr_program_unref(F->prog);
  return list;
}

/* saved_residuals's list with ShapeDtypeStructs for the types */
static SrVal *bi_saved_residuals(SrInterp *I, SrArgs *a) {
  SrVal *list = saved_residuals(I, a);
  if (!list) return NULL;
  SrVal *sds = sr_lookup_qualname("jax.ShapeDtypeStruct");
  for (int i = 0; i < list->seq.n && sds; i++) {
    SrVal *tup = list->seq.items[i];
    const SrType *t = sr_value_type(I, tup->seq.items[0]);
    int64_t dims[SR_MAX_RANK];
    for (int d = 0; d < t->ndim; d++) dims[d] = t->dims[d].size;
    SrVal *args[2] = {sr_int_tuple(dims, t->ndim), sr_dtype_val(NULL, t->dtype)};
    SrArgs ca = {2, args, 0, NULL, NULL, NULL};
    SrVal *v = sr_call(I, sds, &ca);
    sr_unref(args[0]);
    sr_unref(args[1]);
    if (!v) {
      sr_unref(list);
      return NULL;
    }
    sr_unref(tup->seq.items[0]);
    tup->seq.items[0] = v;
  }
  return list;
}

/* print_saved_residuals: f'{aval.str_short(short_dtypes=True)} {src}' */
static SrVal *bi_print_saved_residuals(SrInterp *I, SrArgs *a) {
  SrVal *list = saved_residuals(I, a);
  if (!list) return NULL;
  SrBuf b = SR_BUF_INIT;
  for (int i = 0; i < list->seq.n; i++) {
    SrVal *tup = list->seq.items[i];
    sr_type_str(&b, sr_value_type(I, tup->seq.items[0]), 1);
    sr_buf_printf(&b, " %.*s\n", (int)tup->seq.items[1]->str.n, tup->seq.items[1]->str.s);
  }
  sr_write(I, sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  sr_unref(list);
  return sr_none();
}

/* ---- registration ---- */

void sr_remat_policies_init(void) {
  sr_set_type_rule(SR_P_name, ty_name);
  sr_set_eval_rule(SR_P_name, ev_name);
  sr_ad_set_jvp(SR_P_name, jvp_name);
  sr_prims[SR_P_name].batch = batch_name;
  sr_val_keep_class(&policy_class);
  sr_lax_remat_saveable = policy_saveable;
  sr_trace_loc_hook = trace_loc;
  sr_trace_frames_hook = trace_frames;
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
  /* jax.ad_checkpoint.checkpoint_policies is the same module */
  sr_module_alias("jax.ad_checkpoint.checkpoint_policies", "jax.checkpoint_policies");
  sr_def("jax.ad_checkpoint.saved_residuals", bi_saved_residuals,
         "saved_residuals(f, *args, **kwargs): the residuals jax.vjp(f) saves, each (its shape and dtype, where it comes from)");
  sr_def("jax.ad_checkpoint.print_saved_residuals", bi_print_saved_residuals,
         "print_saved_residuals(f, *args, **kwargs): prints the residuals jax.vjp(f) saves and where each comes from");
  sr_def("jax.checkpoint_policies.save_only_these_names", bi_save_only_these_names,
         "save_only_these_names(*names): a checkpoint policy saving only the values named so (checkpoint_name)");
  sr_def("jax.checkpoint_policies.save_any_names_but_these", bi_save_any_names_but_these,
         "save_any_names_but_these(*names): a checkpoint policy saving the named values but these");
  sr_def("jax.checkpoint_policies.save_and_offload_only_these_names", bi_save_and_offload,
         "save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded, offload_src, "
         "offload_dst): save_only_these_names offloading some names (jax.checkpoint does not take it here)");
  sr_def("jax.checkpoint_policies.save_from_both_policies", bi_save_from_both_policies,
         "save_from_both_policies(p1, p2): a checkpoint policy saving what either saves");
  /* jax._src.ad_checkpoint, where JAX's tests take them from, holds the
     same functions and policies at its top level */
  static const char *const src_names[] = {
      "jax.ad_checkpoint.checkpoint_name", "jax.ad_checkpoint.saved_residuals",
      "jax.ad_checkpoint.print_saved_residuals", "jax.checkpoint_policies.nothing_saveable",
      "jax.checkpoint_policies.everything_saveable", "jax.checkpoint_policies.dots_saveable",
      "jax.checkpoint_policies.checkpoint_dots", "jax.checkpoint_policies.dots_with_no_batch_dims_saveable",
      "jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims", "jax.checkpoint_policies.save_only_these_names",
      "jax.checkpoint_policies.save_any_names_but_these", "jax.checkpoint_policies.save_and_offload_only_these_names",
      "jax.checkpoint_policies.save_from_both_policies", NULL};
  for (int i = 0; src_names[i]; i++) {
    SrVal *v = sr_lookup_qualname(src_names[i]);
    char q[128];
    snprintf(q, sizeof q, "jax._src.ad_checkpoint.%s", strrchr(src_names[i], '.') + 1);
    if (v) sr_register(q, sr_ref(v));
  }
}
