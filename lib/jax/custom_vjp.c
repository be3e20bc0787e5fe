/* custom_vjp.c: jax.custom_vjp and f.defvjp(fwd, bwd)
 * (custom_derivatives.py: custom_vjp, CustomVJPCallPrimitive; ad.py:
 * custom_lin).
 *
 * Calling a custom_vjp function traces the primal function and binds one
 * custom_vjp_call equation, printed as JAX prints it:
 *
 *     custom_vjp_call[name=f bwd=f_bwd call_jaxpr={ ... } fwd=f_fwd
 *                     symbolic_zeros=False]
 *
 * Its fwd and bwd params are objects that the program keeps by reference
 * (sr_val_keep_class), so that autodiff can call the user's rules later:
 *  - linearizing the equation runs fwd on the primal arguments, inline in
 *    the primal trace (as JAX's LinearizeTrace does), and binds a
 *    custom_lin equation over fwd's residual leaves and the tangents into
 *    the linear jaxpr;
 *  - transposing custom_lin calls bwd(residuals, output cotangent) in the
 *    backward trace and checks what it returns.
 * The residuals are any pytree -- a VJP object among them, as the FSDP
 * example saves its layer's VJP -- flattened into leaves and rebuilt for
 * bwd from a structure with numbered leaves.
 *
 * A custom_vjp_call read from a jaxpr text has words for fwd and bwd: its
 * call_jaxpr is differentiated instead (lax/control.c's rule).
 */
#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "exec/eval.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "jax/tree_util.h"
#include "jax/vjp.h"
#include "jax/tracers.h"
#include "jax/ref.h"
#include "lax/lax.h"
#include "text/print_val.h"
#include "util/intern.h"

/* One call of a custom_vjp function: its rules and structures. */
typedef struct Cvjp {
  int rc;
  SrVal *fwd, *bwd;
  const char *name, *fwd_name, *bwd_name;
  const char *fun_info;    /* "f at file.py:3" (api_util.fun_sourceinfo) */
  SrVal *in_tree;          /* the arguments (a tuple), leaves numbered */
  SrVal *out_tree;         /* the output, leaves numbered */
  int nconsts, nleaves, nout;
  const SrType **in_types; /* per argument leaf */
  const SrType **out_types;
  int symbolic_zeros;      /* defvjp(symbolic_zeros=True) */
  uint8_t *out_batched;    /* a batched call's rules: per output, batched
                              at 0 (its SymbolicZero cotangents' avals are
                              per example); NULL: none */
} Cvjp;

static void cvjp_unref(Cvjp *c) {
  if (!c || --c->rc > 0) return;
  sr_unref(c->fwd);
  sr_unref(c->bwd);
  sr_unref(c->in_tree);
  sr_unref(c->out_tree);
  free(c->in_types);
  free(c->out_types);
  free(c->out_batched);
  free(c);
}

/* The fwd= and bwd= params of custom_vjp_call: print as the function's
   name. */
typedef struct CvjpRef {
  Cvjp *c;
  int bwd;
} CvjpRef;

static void ref_free(void *d) {
  CvjpRef *r = d;
  cvjp_unref(r->c);
  free(r);
}

static void ref_repr(SrBuf *out, const SrVal *v) {
  const CvjpRef *r = v->obj.data;
  sr_buf_puts(out, r->bwd ? r->c->bwd_name : r->c->fwd_name);
}

static const SrClass cvjp_ref_class = {"custom_vjp_rule", ref_free, ref_repr, NULL, NULL};

static SrVal *ref_new(Cvjp *c, int bwd) {
  CvjpRef *r = sr_xcalloc(1, sizeof *r);
  r->c = c;
  c->rc++;
  r->bwd = bwd;
  return sr_obj(&cvjp_ref_class, r);
}

/* custom_lin's bwd= param: the backward rule of one linearized call, with
   its residuals' structure and which argument leaves are linear inputs. */
typedef struct CvjpLin {
  Cvjp *c;
  SrVal *res_tree;
  int nres;
  uint8_t *lin;            /* per argument leaf */
} CvjpLin;

static void lin_free(void *d) {
  CvjpLin *l = d;
  cvjp_unref(l->c);
  sr_unref(l->res_tree);
  free(l->lin);
  free(l);
}

static void lin_repr(SrBuf *out, const SrVal *v) {
  const CvjpLin *l = v->obj.data;
  sr_buf_puts(out, l->c->bwd_name);
}

static const SrClass cvjp_lin_class = {"custom_lin_rule", lin_free, lin_repr, NULL, NULL};

/* ---- the custom_vjp object ---- */

typedef struct CustomVjp {
  SrCustomFn f;
  SrVal *fwd, *bwd;
} CustomVjp;

/* ---- CustomVJPPrimal (custom_derivatives.py): what fwd gets for each
   argument leaf when symbolic_zeros=True, its value and whether it is
   perturbed.  A pytree leaf, as JAX's dataclass is: a vmapped fwd is
   vmapped over the values and gets them rewrapped (sz_fwd_outer). ---- */
typedef struct VjpPrimal {
  SrVal *value;
  int perturbed;
} VjpPrimal;

static void vp_free(void *d) {
  VjpPrimal *p = d;
  sr_unref(p->value);
  free(p);
}
static void vp_repr(SrBuf *out, const SrVal *v) {
  const VjpPrimal *p = v->obj.data;
  sr_buf_puts(out, "CustomVJPPrimal(value=");
  sr_val_str(out, p->value);
  sr_buf_printf(out, ", perturbed=%s)", p->perturbed ? "True" : "False");
}
static SrVal *vp_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  VjpPrimal *p = self->obj.data;
  if (strcmp(name, "value") == 0) return sr_ref(p->value);
  if (strcmp(name, "perturbed") == 0) return sr_bool(p->perturbed);
  return NULL;
}
static SrVal *vp_type_of(SrVal *self) {
  (void)self;
  SrVal *t = sr_lookup_qualname("jax.custom_derivatives.CustomVJPPrimal");
  return t ? sr_ref(t) : NULL;
}
static const SrLangOps vp_ops = {
    .getattr = vp_getattr, .type_of = vp_type_of};
static const SrClass vp_class = {"CustomVJPPrimal", vp_free, vp_repr, NULL, &vp_ops};

static SrVal *vp_new(SrVal *value, int perturbed) {
  VjpPrimal *p = sr_xcalloc(1, sizeof *p);
  p->value = value;
  p->perturbed = perturbed;
  return sr_obj(&vp_class, p);
}

/* the class: isinstance, CustomVJPPrimal(value, perturbed) */
static void vp_type_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<class 'jax._src.custom_derivatives.CustomVJPPrimal'>");
}
static int vp_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  (void)self;
  return sr_is_obj(x, &vp_class);
}
static SrVal *vp_call(SrInterp *I, SrVal *self, SrArgs *a) {
  (void)self;
  SrVal *p[2];
  if (sr_args_parse(I, a, "CustomVJPPrimal", "value, perturbed", p) < 0) return NULL;
  return vp_new(sr_ref(p[0]), sr_val_truthy(p[1]));
}
static const SrLangOps vp_type_ops = {.call = vp_call, .instancecheck = vp_instancecheck};
static const SrClass vp_type_class = {"type", NULL, vp_type_repr, NULL, &vp_type_ops};

/* custom_vjp_primal_tree_values(tree): each CustomVJPPrimal's value */
static SrVal *primal_values(SrInterp *I, SrVal *v, int depth) {
  if (sr_is_obj(v, &vp_class)) return sr_ref(((VjpPrimal *)v->obj.data)->value);
  if (depth > 256) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return sr_ref(v);
  SrVal *nc = sr_seq(NULL, SR_V_LIST, ch->seq.n);
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *e = primal_values(I, ch->seq.items[i], depth + 1);
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
static SrVal *jax_primal_tree_values(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "custom_vjp_primal_tree_values", "tree", p) < 0) return NULL;
  return primal_values(I, p[0], 0);
}

static void cv_free(void *d) {
  CustomVjp *c = d;
  sr_custom_fn_free(&c->f);
  sr_unref(c->fwd);
  sr_unref(c->bwd);
  free(c);
}

static void cv_repr(SrBuf *out, const SrVal *v) {
  const CustomVjp *c = v->obj.data;
  sr_buf_printf(out, "<jax._src.custom_derivatives.custom_vjp object of <function %s>>", c->f.name);
}

/* custom_derivatives._check_for_tracers: a traced nondiff argument (one
   whose value is not known) is refused */
static int check_for_tracers(SrInterp *I, SrVal *held) {
  SrVal *l = sr_pytree_flatten_any(I, held);
  if (!l) return -1;
  int bad = 0;
  for (int i = 0; i < l->seq.n && !bad; i++) {
    SrArrayObj *a = sr_array_of(l->seq.items[i]);
    bad = a && a->kind == SR_AV_TRACER;
  }
  sr_unref(l);
  if (!bad) return 0;
  sr_raise(I, "UnexpectedTracerError",
           "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position indicated by "
           "nondiff_argnums as non-differentiable. Tracers cannot be passed as non-differentiable arguments to "
           "custom_vjp functions; instead, nondiff_argnums should only be used for arguments that can't be or "
           "contain JAX tracers, e.g. function-valued arguments. In particular, array-valued arguments should "
           "typically not be indicated as nondiff_argnums.");
  return -1;
}

/* _check_for_aliased_refs: the same Ref twice among the arguments but for
   the nondiff ones; 0, or -1 with JAX's ValueError */
static int aliased_refs(SrInterp *I, const CustomVjp *cv, SrVal *args) {
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  int anyref = 0;
  for (int i = 0; i < args->seq.n; i++) {
    int nd = 0;
    for (int k = 0; k < cv->f.nnondiff; k++) nd |= cv->f.nondiff[k] == i;
    SrVal *l = sr_pytree_flatten(I, args->seq.items[i]);
    if (!l) {
      sr_exc_clear(I);
      continue;
    }
    for (int k = 0; k < l->seq.n; k++) {
      /* a nondiff leaf takes its place, but no Ref of it counts */
      SrVal *x = l->seq.items[k];
      sr_seq_push(NULL, leaves, nd ? sr_none() : sr_ref(x));
      anyref |= !nd && sr_jax_is_ref(x);
    }
    sr_unref(l);
  }
  int rc = 0;
  for (int i = 0; anyref && i < leaves->seq.n && !rc; i++)
    for (int k = 0; k < i && !rc; k++)
      if (sr_jax_is_ref(leaves->seq.items[i]) && leaves->seq.items[k] == leaves->seq.items[i]) {
        SrArgs na = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
        int nn = 0;
        char **nm = sr_debug_arg_names(I, cv->f.fun, &na, NULL, &nn);
        if (!nm) sr_exc_clear(I);
        SrBuf t = SR_BUF_INIT;
        sr_type_str(&t, sr_value_type(I, leaves->seq.items[i]), 0);
        sr_raise(I, "ValueError",
                 "only one reference to a mutable array may be passed as an argument to a function, but "
                 "custom_vjp function %s got the same mutable array reference of type %s at %s and %s.",
                 cv->f.name, sr_buf_str(&t), nm && k < nn ? nm[k] : "unknown", nm && i < nn ? nm[i] : "unknown");
        sr_buf_free(&t);
        if (nm) sr_debug_arg_names_free(nm, nn);
        rc = -1;
      }
  sr_unref(leaves);
  return rc;
}

/* _check_for_returned_refs of the primal function: no Ref among its
   results (types: the traced body's, or the leaves of an eager result) */
static int returned_refs(SrInterp *I, const char *name, int n, const SrType *const *types) {
  for (int i = 0; i < n; i++)
    if (types[i] && types[i]->ref) {
      SrBuf t = SR_BUF_INIT;
      sr_type_str(&t, types[i], 0);
      sr_raise(I, "ValueError",
               "custom_vjp primal function %s returned a mutable array reference of type %s that was not an "
               "argument.",
               name, sr_buf_str(&t));
      sr_buf_free(&t);
      return -1;
    }
  return 0;
}

static SrVal *cv_call(SrInterp *I, SrVal *self, SrArgs *a) {
  CustomVjp *cv = self->obj.data;
  if (!cv->fwd || !cv->bwd)
    return sr_raise(I, "AttributeError", "No VJP defined for custom_vjp function %s using defvjp.", cv->f.name);
  SrVal *args = sr_custom_resolve_kwargs(I, cv->f.fun, "custom_vjp", cv->f.name, a);
  if (!args) return NULL;
  if (aliased_refs(I, cv, args) < 0) {
    sr_unref(args);
    return NULL;
  }
  SrVal *fun = sr_ref(cv->f.fun), *fwd = sr_ref(cv->fwd), *bwd = sr_ref(cv->bwd);
  if (cv->f.nnondiff) {
    SrVal *held, *dyn;
    if (sr_custom_nondiff_split(I, args, cv->f.nondiff, cv->f.nnondiff, &held, &dyn) < 0 ||
        check_for_tracers(I, held) < 0) {
      sr_unref(held); /* NULL when the split failed */
      sr_unref(dyn);
      sr_unref(args);
      sr_unref(fun);
      sr_unref(fwd);
      sr_unref(bwd);
      return NULL;
    }
    sr_unref(fun);
    sr_unref(fwd);
    sr_unref(bwd);
    fun = sr_custom_nondiff_wrap(cv->f.fun, held, cv->f.nondiff, cv->f.nnondiff, 1);
    fwd = sr_custom_nondiff_wrap(cv->fwd, held, cv->f.nondiff, cv->f.nnondiff, 1);
    bwd = sr_custom_nondiff_wrap(cv->bwd, held, cv->f.nondiff, cv->f.nnondiff, 0);
    sr_unref(held);
    sr_unref(args);
    args = dyn;
  }
  if (I->trace && !cv->f.symbolic_zeros && sr_custom_closes_over_tracer(I, cv->fwd))
    sr_custom_pretrace_fwd(I, &fun, &fwd, &bwd, &args);
  SrArgs pa = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
  SrCustomCall cc;
  SrVal *eager;
  /* debug_info("custom_vjp fun", self.fun, args, kwargs, nondiff_argnums) */
  sr_trace_fn_debug_call(I, "custom_vjp fun", cv->f.fun, a, cv->f.nondiff, cv->f.nnondiff);
  int rc = sr_custom_call_trace(I, fun, cv->f.name, &pa, &cc, &eager);
  sr_trace_fn_debug_clear();
  sr_unref(args);
  sr_unref(fun);
  if (rc == 1) {
    sr_unref(fwd);
    sr_unref(bwd);
    SrVal *el = sr_pytree_flatten(I, eager);
    if (!el) sr_exc_clear(I);
    for (int i = 0; el && i < el->seq.n; i++) {
      const SrType *t = sr_jax_is_ref(el->seq.items[i]) ? sr_value_type(I, el->seq.items[i]) : NULL;
      if (returned_refs(I, cv->f.name, 1, &t) < 0) {
        sr_unref(el);
        sr_unref(eager);
        return NULL;
      }
    }
    sr_unref(el);
    return eager;
  }
  if (rc < 0) {
    sr_unref(fwd);
    sr_unref(bwd);
    return NULL;
  }
  {
    const SrType **ot = sr_xcalloc(cc.body->nout + 1, sizeof *ot);
    for (uint32_t i = 0; i < cc.body->nout; i++) ot[i] = cc.body->outvars[i]->type;
    int bad = returned_refs(I, cv->f.name, (int)cc.body->nout, ot) < 0;
    free(ot);
    if (bad) {
      sr_unref(fwd);
      sr_unref(bwd);
      sr_unref(cc.args);
      sr_unref(cc.leaves);
      sr_unref(cc.out_tree);
      sr_unref(cc.captured);
      sr_program_unref(cc.body->prog);
      return NULL;
    }
  }
  Cvjp *c = sr_xcalloc(1, sizeof *c);
  c->rc = 1;
  c->fwd = fwd;
  c->bwd = bwd;
  c->name = cv->f.name;
  c->fun_info = sr_vjp_fun_info(cv->f.fun);
  c->fwd_name = sr_callable_name(cv->fwd);
  c->bwd_name = sr_callable_name(cv->bwd);
  int k = 0;
  c->in_tree = sr_pytree_numbered(cc.args, &k);
  c->nleaves = cc.leaves->seq.n;
  k = 0;
  c->out_tree = sr_pytree_numbered(cc.out_tree, &k);
  c->nout = (int)cc.body->nout;
  c->nconsts = cc.captured->seq.n;
  c->in_types = sr_xcalloc((size_t)c->nleaves + 1, sizeof *c->in_types);
  for (int i = 0; i < c->nleaves; i++) c->in_types[i] = sr_value_type(I, cc.leaves->seq.items[i]);
  c->out_types = sr_xcalloc((size_t)c->nout + 1, sizeof *c->out_types);
  for (int i = 0; i < c->nout; i++) c->out_types[i] = cc.body->outvars[i]->type;
  c->symbolic_zeros = cv->f.symbolic_zeros;
  SrPList ps = {0};
  sr_plist_add(&ps, "name", sr_str_cstr(NULL, cv->f.name));
  sr_plist_add(&ps, "bwd", ref_new(c, 1));
  sr_plist_add(&ps, "call_jaxpr", sr_jaxpr_val(NULL, cc.body));
  sr_plist_add(&ps, "fwd", ref_new(c, 0));
  sr_plist_add(&ps, "num_consts", sr_int(NULL, c->nconsts));
  sr_plist_add(&ps, "symbolic_zeros", sr_bool(c->symbolic_zeros));
  cvjp_unref(c);
  return sr_custom_call_bind(I, SR_P_custom_vjp_call, &cc, &ps);
}

static SrVal *cv_defvjp(SrInterp *I, SrArgs *a) {
  CustomVjp *cv = a->self->obj.data;
  SrVal *p[4];
  if (sr_args_parse(I, a, "defvjp", "fwd, bwd, symbolic_zeros=, optimize_remat=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0]) || !sr_is_callable(I, p[1]))
    return sr_raise(I, "TypeError", "defvjp(fwd, bwd) takes two functions");
  /* optimize_remat=True changes what is saved, not the values */
  cv->f.symbolic_zeros = p[2] && sr_val_truthy(p[2]);
  sr_unref(cv->fwd);
  sr_unref(cv->bwd);
  cv->fwd = sr_ref(p[0]);
  cv->bwd = sr_ref(p[1]);
  return sr_none();
}

static SrVal *cv_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  CustomVjp *cv = self->obj.data;
  if (strcmp(name, "defvjp") == 0) return sr_bound_method(self, "defvjp", cv_defvjp);
  if (strcmp(name, "fwd") == 0) return sr_ref(cv->fwd ? cv->fwd : sr_none());
  if (strcmp(name, "bwd") == 0) return sr_ref(cv->bwd ? cv->bwd : sr_none());
  return sr_custom_fn_getattr(I, &cv->f, name);
}

static const SrLangOps cv_ops = {.call = cv_call, .getattr = cv_getattr};
static const SrClass custom_vjp_class = {"custom_vjp", cv_free, cv_repr, NULL, &cv_ops};

static SrVal *jax_custom_vjp(SrInterp *I, SrArgs *a) {
  CustomVjp *cv = sr_xcalloc(1, sizeof *cv);
  if (sr_custom_fn_init(I, a, "custom_vjp", &cv->f) < 0) {
    free(cv);
    return NULL;
  }
  return sr_obj(&custom_vjp_class, cv);
}

/* ---- autodiff: linearizing custom_vjp_call ---- */

static Cvjp *cvjp_of(const SrEqn *e) {
  SrVal *v = sr_eqn_param(e, sr_intern_cstr("bwd"));
  return v && sr_is_obj(v, &cvjp_ref_class) ? ((CvjpRef *)v->obj.data)->c : NULL;
}

static int jvp_custom_vjp(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrInterp *I = ad->I;
  Cvjp *c = cvjp_of(e);
  if (!c) return sr_lax_jvp_custom_call(ad, e, x, t, y, ty);
  /* forward mode (JVPTrace.process_custom_vjp_call) also runs fwd and
     binds custom_lin: it is running custom_lin forward that JAX refuses
     (a jvp evaluated), while one that is transposed (a remat's or a
     jit's jvp under grad) applies bwd */
  for (int i = 0; i < c->nconsts; i++)
    if (t[i]) {
      sr_raise(I, "CustomVJPException",
               "Detected differentiation of a custom_vjp function with respect to a closed-over value. That isn't "
               "supported because the custom VJP rule only specifies how to differentiate the custom_vjp function "
               "with respect to explicit input parameters. Try passing the closed-over value into the custom_vjp "
               "function as an argument, and adapting the custom_vjp fwd and bwd rules.");
      return -1;
    }
  /* fwd(*args), inline in the primal trace */
  SrVal *lv = sr_seq(NULL, SR_V_LIST, c->nleaves);
  for (int i = 0; i < c->nleaves; i++)
    sr_seq_push(NULL, lv, c->symbolic_zeros ? vp_new(sr_ref(x[c->nconsts + i]), t[c->nconsts + i] != NULL)
                                            : sr_ref(x[c->nconsts + i]));
  SrVal *args = sr_pytree_unflatten(c->in_tree, lv);
  sr_unref(lv);
  /* _flatten_fwd's _check_for_aliased_refs, on the primal values */
  for (int i = 0; i < c->nleaves; i++)
    for (int k = 0; k < i && sr_jax_is_ref(x[c->nconsts + i]); k++)
      if (x[c->nconsts + k] == x[c->nconsts + i]) {
        SrArgs na = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
        int nn = 0;
        char **nm = sr_debug_arg_names(I, c->fwd, &na, NULL, &nn);
        if (!nm) sr_exc_clear(I);
        SrBuf tb = SR_BUF_INIT;
        sr_type_str(&tb, sr_value_type(I, x[c->nconsts + i]), 0);
        sr_raise(I, "ValueError",
                 "only one reference to a mutable array may be passed as an argument to a function, but "
                 "custom_vjp function %s got the same mutable array reference of type %s at %s and %s.",
                 c->name, sr_buf_str(&tb), nm && k < nn ? nm[k] : "unknown", nm && i < nn ? nm[i] : "unknown");
        sr_buf_free(&tb);
        if (nm) sr_debug_arg_names_free(nm, nn);
        sr_unref(args);
        return -1;
      }
  SrTrace *saved = I->trace;
  if (ad->mode == SR_AD_LIN) I->trace = ad->staged ? ad->tangent : ad->primal;
  SrArgs fa = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, c->fwd, &fa);
  I->trace = saved;
  sr_unref(args);
  if (!r) return -1;
  int rc = -1;
  SrVal *yl = NULL, *rl = NULL;
  if (!sr_is_seq(r) || r->seq.n != 2) {
    SrBuf b = SR_BUF_INIT;
    sr_to_str(I, &b, r);
    sr_raise(I, "TypeError",
             "Custom VJP fwd rule %s for function %s must produce a pair (list or tuple of length two) where the "
             "first element represents the primal output (equal to those of the custom_vjp-decorated function %s) "
             "and the second element represents residuals (i.e. values stored from the forward pass for use on the "
             "backward pass), but instead of a pair the fwd rule %s produced %s.",
             c->fwd_name, c->name, c->name, c->fwd_name, sr_buf_str(&b));
    sr_buf_free(&b);
    goto done;
  }
  yl = sr_pytree_array_leaves(I, r->seq.items[0]);
  if (!yl) goto done;
  {
    /* _flatten_fwd's checks against the function's output */
    SrBuf s1 = SR_BUF_INIT, s2 = SR_BUF_INIT;
    sr_custom_treedef_of(&s1, r->seq.items[0]);
    sr_vjp_treedef_str(&s2, c->out_tree);
    int same_tree = strcmp(sr_buf_str(&s1), sr_buf_str(&s2)) == 0 && yl->seq.n == c->nout;
    int same = same_tree;
    const SrType **pt = sr_xcalloc((size_t)yl->seq.n + 1, sizeof *pt);
    for (int i = 0; i < yl->seq.n; i++) pt[i] = sr_value_type(I, yl->seq.items[i]);
    for (int i = 0; same && i < c->nout; i++)
      same = sr_type_equal_mod_mesh(sr_type_with_weak(pt[i], 0), sr_type_with_weak(c->out_types[i], 0));
    if (!same) {
      sr_buf_reset(&s1);
      sr_buf_reset(&s2);
      int k = 0;
      SrVal *num = sr_pytree_numbered(r->seq.items[0], &k);
      sr_custom_type_tree(I, &s1, num, yl->seq.n, pt);
      sr_unref(num);
      sr_custom_type_tree(I, &s2, c->out_tree, c->nout, c->out_types);
      if (!same_tree)
        sr_raise(I, "TypeError",
                 "Custom VJP fwd rule %s for function %s must produce a pair (list or tuple of length two) where the "
                 "first element represents the primal output (equal to the output of the custom_vjp-decorated "
                 "function %s) and the second element represents residuals (i.e. values stored from the forward "
                 "pass for use on the backward pass), but instead the fwd rule output's first element had "
                 "container/pytree structure:\n    %s\nwhile the custom_vjp-decorated function %s had output "
                 "container/pytree structure:\n    %s.",
                 c->fwd_name, c->name, c->name, sr_buf_str(&s1), c->name, sr_buf_str(&s2));
      else
        sr_raise(I, "TypeError",
                 "Custom VJP fwd rule %s for function %s must produce a pair (list or tuple of length two) where the "
                 "first element represents the primal output (equal to the output of the custom_vjp-decorated "
                 "function %s) and the second element represents residuals (i.e. values stored from the forward "
                 "pass for use on the backward pass), but instead the fwd rule output's first element had "
                 "shapes/dtypes of:\n    %s\nwhile the custom_vjp-decorated function %s had output shapes/dtypes "
                 "of:\n    %s",
                 c->fwd_name, c->name, c->name, sr_buf_str(&s1), c->name, sr_buf_str(&s2));
    }
    free(pt);
    sr_buf_free(&s1);
    sr_buf_free(&s2);
    if (!same) goto done;
  }
  /* _check_for_returned_refs of fwd: a Ref among the residuals must be an
     argument, and none among the primal results */
  {
    SrVal *pl = sr_pytree_flatten(I, r->seq.items[0]), *res = sr_pytree_flatten(I, r->seq.items[1]);
    int bad = 0;
    for (int i = 0; pl && i < pl->seq.n && !bad; i++)
      if (sr_jax_is_ref(pl->seq.items[i])) {
        SrBuf tb = SR_BUF_INIT;
        sr_type_str(&tb, sr_value_type(I, pl->seq.items[i]), 0);
        sr_raise(I, "ValueError",
                 "custom_vjp fwd function %s returned a mutable array reference of type %s at output tree path "
                 "[0], but mutable array references cannot be returned there.",
                 c->fwd_name, sr_buf_str(&tb));
        sr_buf_free(&tb);
        bad = 1;
      }
    for (int i = 0; res && i < res->seq.n && !bad; i++) {
      SrVal *rv = res->seq.items[i];
      if (!sr_jax_is_ref(rv)) continue;
      int arg = 0;
      for (int k = 0; k < c->nleaves && !arg; k++) arg = x[c->nconsts + k] == rv;
      if (arg) continue;
      SrBuf tb = SR_BUF_INIT;
      sr_type_str(&tb, sr_value_type(I, rv), 0);
      sr_raise(I, "ValueError",
               "custom_vjp fwd function %s returned a mutable array reference of type %s at output tree path [1] "
               "that was not an argument.",
               c->fwd_name, sr_buf_str(&tb));
      sr_buf_free(&tb);
      bad = 1;
    }
    if (!pl || !res) sr_exc_clear(I);
    sr_unref(pl);
    sr_unref(res);
    if (bad) goto done;
  }
  rl = sr_pytree_array_leaves(I, r->seq.items[1]);
  if (!rl) goto done;
  /* custom_lin(*res, *tangents) */
  CvjpLin *cl = sr_xcalloc(1, sizeof *cl);
  cl->c = c;
  c->rc++;
  int k = 0;
  cl->res_tree = sr_pytree_numbered(r->seq.items[1], &k);
  cl->nres = rl->seq.n;
  cl->lin = sr_xcalloc((size_t)c->nleaves + 1, 1);
  SrVal **in = sr_xcalloc((size_t)cl->nres + (size_t)c->nleaves + 1, sizeof *in);
  int n = 0;
  for (int i = 0; i < cl->nres; i++) in[n++] = rl->seq.items[i];
  for (int i = 0; i < c->nleaves; i++)
    if (t[c->nconsts + i]) {
      cl->lin[i] = 1;
      in[n++] = t[c->nconsts + i];
    }
  SrVal *obj = sr_obj(&cvjp_lin_class, cl);
  SrPList ps = {0};
  sr_plist_add(&ps, "bwd", obj);
  sr_plist_add(&ps, "num_res", sr_int(NULL, cl->nres));
  SrVal *avals = sr_seq(NULL, SR_V_TUPLE, c->nout);
  for (int i = 0; i < c->nout; i++) {
    const char *ts = sr_type_short(sr_ad_tangent_type(c->out_types[i]));
    sr_seq_push(NULL, avals, sr_word(NULL, ts, strlen(ts)));
  }
  sr_plist_add(&ps, "out_avals", avals);
  sr_plist_add(&ps, "symbolic_zeros", sr_bool(c->symbolic_zeros));
  SrVal *tl = sr_ad_bind(ad, SR_P_custom_lin, n, in, ps.n, ps.p);
  sr_plist_free(&ps);
  free(in);
  if (!tl) goto done;
  for (int i = 0; i < c->nout; i++) {
    y[i] = sr_ad_keep(ad, sr_ref(yl->seq.items[i]));
    ty[i] = tl->seq.items[i];
  }
  rc = 0;
done:
  sr_unref(yl);
  sr_unref(rl);
  sr_unref(r);
  return rc;
}

/* custom_lin's results: the output tangents. */
static int type_custom_lin(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  SrVal *v = sr_rparam(e, "bwd");
  if (!v || !sr_is_obj(v, &cvjp_lin_class)) {
    if (e->written) {
      for (uint32_t i = 0; i < e->nout; i++) out[i] = e->written[i];
      return 0;
    }
    return sr_terr(cx, "TypeError", "custom_lin: its backward rule did not survive printing");
  }
  const CvjpLin *l = v->obj.data;
  if ((int)e->nout != l->c->nout)
    return sr_terr(cx, "TypeError", "custom_lin has %u results, its function %d", e->nout, l->c->nout);
  for (int i = 0; i < l->c->nout; i++) out[i] = sr_ad_tangent_type(l->c->out_types[i]);
  return 0;
}

/* bwd(res, ct): the cotangents of the linear inputs. */
/* bwd's output for one argument, ra, against the argument's structure
   sk: its cotangent leaves into out (NULL for a zero from a None,
   borrowed), *k advanced; -1 where the structures differ. */
static int count_leaves(SrVal *sk, int depth) {
  SrVal *cs = sr_pytree_children(sk);
  if (!cs) return sk->kind == SR_V_NONE ? 0 : 1;
  int n = 0;
  for (int i = 0; i < cs->seq.n && depth < 256; i++) n += count_leaves(cs->seq.items[i], depth + 1);
  sr_unref(cs);
  return n;
}

static int collect_cts(SrVal *ra, SrVal *sk, SrVal **out, int *k, int max, int depth) {
  if (depth > 256) return -1;
  SrVal *cs = sr_pytree_children(sk);
  if (ra->kind == SR_V_NONE) {
    /* zeros for each leaf of sk (None in sk has none) */
    int n = 0;
    if (!cs) {
      n = sk->kind == SR_V_NONE ? 0 : 1;
    } else {
      for (int i = 0; i < cs->seq.n; i++) {
        int k0 = *k;
        if (collect_cts(ra, cs->seq.items[i], out, k, max, depth + 1) < 0) {
          sr_unref(cs);
          return -1;
        }
        (void)k0;
      }
    }
    for (int i = 0; i < n; i++) {
      if (*k >= max) return -1;
      out[(*k)++] = NULL;
    }
    sr_unref(cs);
    return 0;
  }
  if (!cs || sr_is_symbolic_zero(ra)) {
    sr_unref(cs);
    SrVal *cr = sr_is_symbolic_zero(ra) ? NULL : sr_pytree_children(ra);
    if (cr) {
      sr_unref(cr);
      return -1;
    }
    if (*k >= max) return -1;
    out[(*k)++] = ra;
    return 0;
  }
  SrVal *cr = sr_pytree_children(ra);
  if (!cr) {
    /* a leaf where the argument has a subtree: tree_map(append, py_cts_in,
       dummy) gives it to each of the subtree's leaves */
    int n = count_leaves(sk, depth);
    sr_unref(cs);
    for (int i = 0; i < n; i++) {
      if (*k >= max) return -1;
      out[(*k)++] = ra;
    }
    return 0;
  }
  int ok = cr->seq.n == cs->seq.n &&
           (ra->kind == sk->kind || (sr_is_seq(ra) && sr_is_seq(sk) && ra->kind != SR_V_OBJ && sk->kind != SR_V_OBJ && 0));
  for (int i = 0; ok && i < cs->seq.n; i++) ok = collect_cts(cr->seq.items[i], cs->seq.items[i], out, k, max, depth + 1) == 0;
  sr_unref(cr);
  sr_unref(cs);
  return ok ? 0 : -1;
}

static int tr_custom_lin(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx) {
  SrInterp *I = ad->I;
  SrVal *v = sr_eqn_param(e, sr_intern_cstr("bwd"));
  if (!v || !sr_is_obj(v, &cvjp_lin_class)) {
    sr_raise(I, "NotImplementedError", "custom_lin: its backward rule did not survive printing");
    return -1;
  }
  CvjpLin *l = v->obj.data;
  Cvjp *c = l->c;
  SrVal *rv = sr_seq(NULL, SR_V_LIST, l->nres);
  for (int i = 0; i < l->nres; i++) sr_seq_push(NULL, rv, sr_ref(x[i]));
  SrVal *res = sr_pytree_unflatten(l->res_tree, rv);
  sr_unref(rv);
  /* zero cotangents: instantiated, or SymbolicZeros (of the per-example
     aval in a batched call's rule) */
  SrVal *cv = sr_seq(NULL, SR_V_LIST, c->nout);
  for (int i = 0; i < c->nout; i++) {
    if (ct[i]) {
      sr_seq_push(NULL, cv, sr_ref(ct[i]));
    } else if (c->symbolic_zeros) {
      const SrType *zt = sr_ad_ct_type(c->out_types[i]);
      if (c->out_batched && c->out_batched[i]) zt = sr_batch_unmapped_type(zt, 0);
      sr_seq_push(NULL, cv, sr_symbolic_zero_new(zt));
    } else {
      sr_seq_push(NULL, cv, sr_ref(sr_ad_full_zeros(ad, sr_ad_ct_type(c->out_types[i]))));
    }
  }
  SrVal *cts = sr_pytree_unflatten(c->out_tree, cv);
  sr_unref(cv);
  SrVal *argv[2] = {res, cts};
  SrArgs ba = {2, argv, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, c->bwd, &ba);
  sr_unref(res);
  sr_unref(cts);
  if (!r) return -1;
  int rc = -1, nargs = c->in_tree->seq.n;
  SrBuf pb = SR_BUF_INIT, ib = SR_BUF_INIT;
  /* a list of the arguments' length passes for the tuple */
  if (r->kind == SR_V_LIST && r->seq.n == nargs) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, nargs);
    for (int i = 0; i < nargs; i++) sr_seq_push(NULL, t, sr_ref(r->seq.items[i]));
    sr_unref(r);
    r = t;
  }
  /* _flatten_bwd's tree_map over the arguments: None (anywhere) for a
     subtree of zeros, a SymbolicZero for a leaf */
  SrVal **gv = sr_xcalloc((size_t)c->nleaves + 1, sizeof *gv);
  int ng = 0;
  int shape_ok = r->kind == SR_V_TUPLE && r->seq.n == nargs;
  for (int a = 0; shape_ok && a < nargs; a++) shape_ok = collect_cts(r->seq.items[a], c->in_tree->seq.items[a], gv, &ng, c->nleaves, 0) == 0;
  if (!shape_ok || ng != c->nleaves) {
    free(gv);
    SrBuf tb = SR_BUF_INIT;
    sr_vjp_treedef_str(&tb, r);
    sr_vjp_treedef_str(&pb, c->in_tree);
    sr_raise(I, "TypeError",
             "Custom VJP bwd rule must produce an output with the same container (pytree) structure as the args "
             "tuple of the primal function, and in particular must produce a tuple of length equal to the number "
             "of arguments to the primal function, but got bwd output structure %s for primal input structure %s.",
             sr_buf_str(&tb), sr_buf_str(&pb));
    sr_buf_free(&tb);
    goto done;
  }
  char **paths = sr_xcalloc((size_t)c->nleaves + 1, sizeof *paths);
  int npaths = 0;
  sr_pytree_leaf_paths(c->in_tree, &pb, paths, &npaths);
  int leaf = 0, q = l->nres;
  SrVal *held = sr_seq(NULL, SR_V_LIST, 0);
  for (int a = 0; a < 1; a++) {
    int nl = c->nleaves;
    SrVal *gl = NULL;
    for (int i = 0; i < nl; i++, leaf++) {
      SrVal *g = gv[leaf];
      /* a Ref input's cotangent is a value of its contents' type (the
         backward pass adds it into the Ref's cotangent) */
      const SrType *in_t = c->in_types[leaf], *want = sr_type_deref(sr_ad_ct_type(in_t));
      if (g && sr_is_symbolic_zero(g)) {
        const SrType *zt = sr_symbolic_zero_type(g);
        if (zt && want->dtype != SR_FLOAT0 &&
            !sr_type_equal_mod_mesh(sr_type_strip_sharding(sr_type_with_weak(zt, 0)),
                                    sr_type_strip_sharding(sr_type_with_weak(want, 0)))) {
          SrBuf zb = SR_BUF_INIT, wb = SR_BUF_INIT;
          sr_type_str(&zb, zt, 0);
          sr_type_str(&wb, in_t, 0);
          sr_raise(I, "ValueError",
                   "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not match the "
                   "corresponding input tangent shape/dtype: at output%s the SymbolicZero had shape/dtype %s while "
                   "the corresponding input had shape/dtype %s. Consider just returning a None here instead of a "
                   "SymbolicZero object.",
                   leaf < npaths && paths[leaf] ? paths[leaf] : "", sr_buf_str(&zb), sr_buf_str(&wb));
          sr_buf_free(&zb);
          sr_buf_free(&wb);
          goto paths_done;
        }
        g = NULL;
      }
      if (g && !sr_array_of(g)) {
        /* a Python scalar: a weakly typed array */
        SrVal *conv = sr_pytree_array_leaves(I, g);
        if (!conv || conv->seq.n != 1) {
          sr_unref(conv);
          if (!I->exc) sr_raise(I, "TypeError", "Custom VJP bwd rule produced a non-array cotangent");
          goto paths_done;
        }
        sr_seq_push(NULL, held, sr_ref(conv->seq.items[0]));
        g = conv->seq.items[0];
        sr_unref(conv);
      }
      /* _flatten_bwd: whatever the rule gives for an input whose
         cotangent is float0 (an integer or boolean one) is a zero */
      if (want->dtype == SR_FLOAT0) g = NULL;
      if (g) {
        const SrType *got = sr_value_type(I, g);
        /* _temporary_dtype_exception: a cotangent of another dtype passes
           for an inexact input, the types otherwise matching */
        const SrType *cmp = sr_dtype_in(want->dtype, SR_DC_FLOAT | SR_DC_COMPLEX) ? sr_type_with_dtype(got, want->dtype) : got;
        if (!sr_type_equal_mod_mesh(sr_type_with_weak(cmp, 0), sr_type_with_weak(want, 0))) {
          /* core.aval_mismatch_extra(a, a_) */
          const char *what[3];
          int nw = 0, same_shape = got->ndim == in_t->ndim;
          for (int d = 0; same_shape && d < got->ndim; d++) same_shape = got->dims[d].size == in_t->dims[d].size;
          if (got->dtype != in_t->dtype) what[nw++] = "the dtypes do not match";
          if (!same_shape) what[nw++] = "the shapes do not match";
          if (got->varying != in_t->varying || got->unreduced != in_t->unreduced || got->reduced != in_t->reduced)
            what[nw++] = "the manual axis types do not match";
          SrBuf gb = SR_BUF_INIT, ib2 = SR_BUF_INIT, xb = SR_BUF_INIT;
          sr_type_str(&gb, got, 0);
          sr_type_str(&ib2, in_t, 0);
          for (int w = 0; w < nw; w++)
            sr_buf_printf(&xb, "%s%s", w == 0 ? ", so " : w + 1 == nw ? ", and " : ", ",
                          what[w]);
          sr_raise(I, "ValueError",
                   "Custom VJP bwd rule attached to %s must produce an output with the same type as the args tuple "
                   "of the primal function, but at output%s the bwd rule produced an output of type %s "
                   "corresponding to an input of type %s%s",
                   c->fun_info, leaf < npaths && paths[leaf] ? paths[leaf] : "", sr_buf_str(&gb),
                   sr_buf_str(&ib2), sr_buf_str(&xb));
          sr_buf_free(&gb);
          sr_buf_free(&ib2);
          sr_buf_free(&xb);
          sr_unref(gl);
          goto paths_done;
        }
      }
      if (l->lin[leaf]) cx[q++] = g ? sr_ad_keep(ad, sr_ref(g)) : NULL;
    }
    sr_unref(gl);
  }
  rc = 0;
paths_done:
  for (int i = 0; i < npaths; i++) free(paths[i]);
  free(paths);
  free(gv);
  sr_unref(held);
  if (rc < 0) goto done;
done:
  (void)e;
  sr_buf_free(&pb);
  sr_buf_free(&ib);
  sr_unref(r);
  return rc;
}

/* ---- vmap ---- */

/* The bwd rule of a batched call (custom_derivatives.py's
   _custom_vjp_call_vmap and _match_axes_and_sum): the user's bwd vmapped
   over the residuals and the cotangents (all batched at 0), the
   cotangents of the argument leaves the call did not batch summed over
   the batch. */
typedef struct BatchedBwd {
  SrVal *bwd;          /* the vmapped rule */
  SrVal *in_tree;
  uint8_t *leaf_batched;
} BatchedBwd;

static void bb_free(void *d) {
  BatchedBwd *bb = d;
  sr_unref(bb->bwd);
  sr_unref(bb->in_tree);
  free(bb->leaf_batched);
  free(bb);
}

static SrVal *batched_bwd_call(SrInterp *I, SrArgs *a) {
  BatchedBwd *bb = sr_current_builtin(I)->data;
  SrVal *r = sr_call(I, bb->bwd, a);
  int nargs = bb->in_tree->seq.n;
  if (r && r->kind == SR_V_LIST && r->seq.n == nargs) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, nargs);
    for (int i = 0; i < nargs; i++) sr_seq_push(NULL, t, sr_ref(r->seq.items[i]));
    sr_unref(r);
    r = t;
  }
  if (!r || r->kind != SR_V_TUPLE || r->seq.n != nargs) return r; /* tr_custom_lin says what is wrong */
  SrVal *sum = sr_lookup_qualname("jax.numpy.sum");
  if (!sum) {
    sr_unref(r);
    return sr_raise(I, "RuntimeError", "jax.numpy.sum is missing");
  }
  SrVal *out = sr_seq(NULL, SR_V_TUPLE, nargs);
  int leaf = 0;
  for (int i = 0; i < nargs && out; i++) {
    SrVal *sk = sr_pytree_flatten(I, bb->in_tree->seq.items[i]);
    int nl = sk ? sk->seq.n : 0;
    sr_unref(sk);
    SrVal *ra = r->seq.items[i];
    if (sr_is_symbolic_zero(ra)) {
      /* a zero (its aval is the example's) */
      sr_seq_push(NULL, out, sr_none());
      leaf += nl;
      continue;
    }
    SrVal *gl = ra->kind == SR_V_NONE ? NULL : sr_pytree_flatten(I, ra);
    if (!gl || gl->seq.n != nl) {
      sr_seq_push(NULL, out, sr_ref(ra));
      sr_unref(gl);
      leaf += nl;
      continue;
    }
    SrVal *nv = sr_seq(NULL, SR_V_LIST, nl);
    for (int k = 0; k < nl; k++) {
      SrVal *g = gl->seq.items[k];
      if (bb->leaf_batched[leaf + k]) {
        sr_seq_push(NULL, nv, sr_ref(g));
        continue;
      }
      SrVal *ax = sr_int(NULL, 0);
      const char *kw[1] = {sr_intern_cstr("axis")};
      SrArgs sa = {1, &g, 1, kw, &ax, NULL};
      SrVal *s = sr_call(I, sum, &sa);
      sr_unref(ax);
      if (!s) {
        sr_unref(nv);
        sr_unref(out);
        nv = out = NULL;
        break;
      }
      sr_seq_push(NULL, nv, s);
    }
    leaf += nl;
    sr_unref(gl);
    if (nv) {
      sr_seq_push(NULL, out, sr_pytree_unflatten(ra, nv));
      sr_unref(nv);
    }
  }
  sr_unref(r);
  return out;
}

/* jax.vmap(fn, in_axes, out_axes=0, axis_size=size) */
static SrVal *vmapped(SrInterp *I, SrVal *fn, SrVal *in_axes, SrVal *out_axes, int64_t size) {
  SrVal *vmap = sr_lookup_qualname("jax.vmap");
  if (!vmap) return sr_raise(I, "RuntimeError", "jax.vmap is missing");
  SrVal *kwv[3] = {in_axes, out_axes ? sr_ref(out_axes) : sr_int(NULL, 0), sr_int(NULL, size)};
  const char *kw[3] = {sr_intern_cstr("in_axes"), sr_intern_cstr("out_axes"), sr_intern_cstr("axis_size")};
  SrArgs a = {1, &fn, 3, kw, kwv, NULL};
  SrVal *r = sr_call(I, vmap, &a);
  sr_unref(kwv[1]);
  sr_unref(kwv[2]);
  return r;
}

/* A symbolic_zeros fwd vmapped: vmapped over the arguments' values (the
   CustomVJPPrimal leaves are not arrays), each rewrapped with its
   perturbed flag inside the batched trace, as JAX builds them there
   (_flatten_fwd). */
typedef struct SzFwd {
  SrVal *fwd;  /* the user's rule */
  SrVal *vf;   /* sz_fwd_inner vmapped */
  SrVal *cur;  /* the outer call's arguments (a tuple), while it runs */
} SzFwd;

static void sz_free(void *d) {
  SzFwd *z = d;
  sr_unref(z->fwd);
  sr_unref(z->vf);
  free(z);
}

/* orig's CustomVJPPrimal leaves rebuilt around the values in val */
static SrVal *zip_vp(SrInterp *I, SrVal *orig, SrVal *val, int depth) {
  if (sr_is_obj(orig, &vp_class)) return vp_new(sr_ref(val), ((VjpPrimal *)orig->obj.data)->perturbed);
  if (depth > 256) return sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
  SrVal *co = sr_pytree_children(orig);
  if (!co) return sr_ref(val);
  SrVal *cv = sr_pytree_children(val);
  if (!cv || cv->seq.n != co->seq.n) {
    sr_unref(co);
    sr_unref(cv);
    return sr_ref(val);
  }
  SrVal *nc = sr_seq(NULL, SR_V_LIST, co->seq.n);
  for (int i = 0; i < co->seq.n; i++) {
    SrVal *e = zip_vp(I, co->seq.items[i], cv->seq.items[i], depth + 1);
    if (!e) {
      sr_unref(nc);
      sr_unref(co);
      sr_unref(cv);
      return NULL;
    }
    sr_seq_push(NULL, nc, e);
  }
  SrVal *r = sr_pytree_rebuild(val, nc);
  sr_unref(nc);
  sr_unref(co);
  sr_unref(cv);
  return r;
}

static SrVal *sz_fwd_inner(SrInterp *I, SrArgs *a) {
  SzFwd *z = sr_current_builtin(I)->data;
  SrVal *vals = sr_tuple(NULL, a->n, a->v);
  for (int i = 0; i < a->n; i++) sr_ref(a->v[i]);
  SrVal *args = z->cur ? zip_vp(I, z->cur, vals, 0) : sr_ref(vals);
  sr_unref(vals);
  if (!args) return NULL;
  SrArgs fa = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, z->fwd, &fa);
  sr_unref(args);
  return r;
}

static SrVal *sz_fwd_outer(SrInterp *I, SrArgs *a) {
  SzFwd *z = sr_current_builtin(I)->data;
  SrVal *args = sr_tuple(NULL, a->n, a->v);
  for (int i = 0; i < a->n; i++) sr_ref(a->v[i]);
  SrVal *vals = primal_values(I, args, 0);
  if (!vals) {
    sr_unref(args);
    return NULL;
  }
  SrVal *saved = z->cur;
  z->cur = args;
  SrArgs fa = {vals->seq.n, vals->seq.items, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, z->vf, &fa);
  z->cur = saved;
  sr_unref(args);
  sr_unref(vals);
  return r;
}

/* The hook of lax.h: fwd vmapped over the batched argument leaves, its
   outputs batched at 0 where the batched function's are (out_batched)
   and its residuals at 0; bwd as above, over the residuals and the
   cotangents of the batched outputs. */
static SrVal *batch_custom_vjp(SrInterp *I, SrVal *bwd, const uint8_t *in_batched, const uint8_t *out_batched,
                               int64_t size, const SrType *const *in_types, const SrType *const *out_types,
                               SrVal **fwd) {
  *fwd = NULL;
  if (!sr_is_obj(bwd, &cvjp_ref_class)) return sr_raise(I, "TypeError", "custom_vjp_call: bwd is not a rule");
  const Cvjp *c = ((CvjpRef *)bwd->obj.data)->c;
  SrVal *axl = sr_seq(NULL, SR_V_LIST, c->nleaves);
  for (int i = 0; i < c->nleaves; i++)
    sr_seq_push(NULL, axl, in_batched[c->nconsts + i] ? sr_int(NULL, 0) : sr_none());
  SrVal *ax = sr_pytree_unflatten(c->in_tree, axl);
  sr_unref(axl);
  if (!ax) return NULL;
  SrVal *oxl = sr_seq(NULL, SR_V_LIST, c->nout);
  for (int i = 0; i < c->nout; i++) sr_seq_push(NULL, oxl, out_batched[i] ? sr_int(NULL, 0) : sr_none());
  SrVal *ox = sr_pytree_unflatten(c->out_tree, oxl);
  sr_unref(oxl);
  if (!ox) {
    sr_unref(ax);
    return NULL;
  }
  SrVal *fo = sr_seq(NULL, SR_V_TUPLE, 2), *bi = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, fo, sr_ref(ox));
  sr_seq_push(NULL, fo, sr_int(NULL, 0));
  sr_seq_push(NULL, bi, sr_int(NULL, 0));
  sr_seq_push(NULL, bi, ox);
  SrVal *f;
  if (c->symbolic_zeros) {
    SzFwd *z = sr_xcalloc(1, sizeof *z);
    z->fwd = sr_ref(c->fwd);
    SrVal *inner = sr_builtin_with(c->fwd_name, sz_fwd_inner, z, NULL);
    z->vf = vmapped(I, inner, ax, fo, size);
    sr_unref(inner);
    f = z->vf ? sr_builtin_with(c->fwd_name, sz_fwd_outer, z, sz_free) : NULL;
    if (!f) sz_free(z);
  } else {
    f = vmapped(I, c->fwd, ax, fo, size);
  }
  SrVal *b = f ? vmapped(I, c->bwd, bi, NULL, size) : NULL;
  sr_unref(ax);
  sr_unref(fo);
  sr_unref(bi);
  if (!b) {
    sr_unref(f);
    return NULL;
  }
  BatchedBwd *bb = sr_xcalloc(1, sizeof *bb);
  bb->bwd = b;
  bb->in_tree = sr_ref(c->in_tree);
  bb->leaf_batched = sr_xcalloc((size_t)c->nleaves + 1, 1);
  for (int i = 0; i < c->nleaves; i++) bb->leaf_batched[i] = in_batched[c->nconsts + i];
  Cvjp *d = sr_xcalloc(1, sizeof *d);
  *d = *c;
  d->rc = 1;
  d->fwd = f;
  d->bwd = sr_builtin_with(c->bwd_name, batched_bwd_call, bb, bb_free);
  d->in_tree = sr_ref(c->in_tree);
  d->out_tree = sr_ref(c->out_tree);
  d->in_types = sr_xcalloc((size_t)c->nleaves + 1, sizeof *d->in_types);
  for (int i = 0; i < c->nleaves; i++) d->in_types[i] = in_types[c->nconsts + i];
  d->out_types = sr_xcalloc((size_t)c->nout + 1, sizeof *d->out_types);
  for (int i = 0; i < c->nout; i++) d->out_types[i] = out_types[i];
  d->out_batched = sr_xcalloc((size_t)c->nout + 1, 1);
  for (int i = 0; i < c->nout; i++) d->out_batched[i] = (uint8_t)((c->out_batched ? c->out_batched[i] : 0) + out_batched[i]);
  *fwd = ref_new(d, 0);
  SrVal *r = ref_new(d, 1);
  cvjp_unref(d);
  return r;
}

/* ---- jax.closure_convert (custom_derivatives.py) ----

   fun traced on the example arguments; the values it closes over that may
   be perturbed (_maybe_perturbed: tracers, except those of an integer or
   boolean type under a jit) are hoisted: the converted function takes
   them after the arguments.  The others stay closed over (a traced value
   whose value is known, an eager grad's undifferentiated argument, as its
   value: JAX has it as a value there). */
typedef struct Converted {
  SrJaxpr *j;           /* its program held */
  SrVal *out_tree, *in_tree; /* in_tree: the example arguments (a tuple), numbered */
  SrVal *consts;        /* per captured value: the closed value, or NULL (hoisted) */
  int nconsts, nhoisted;
} Converted;

static void converted_free(void *d) {
  Converted *c = d;
  sr_program_unref(c->j->prog);
  sr_unref(c->out_tree);
  sr_unref(c->in_tree);
  sr_unref(c->consts);
  free(c);
}

static SrVal *converted_call(SrInterp *I, SrArgs *a) {
  Converted *c = sr_current_builtin(I)->data;
  if (a->nkw) return sr_raise(I, "TypeError", "the closure produced by closure_convert takes positional arguments");
  int nargs = a->n - c->nhoisted;
  if (nargs < 0) nargs = 0;
  SrVal *args = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < nargs; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  SrBuf want = SR_BUF_INIT, got = SR_BUF_INIT;
  sr_vjp_treedef_str(&want, c->in_tree);
  sr_custom_treedef_of(&got, args);
  SrVal *r = NULL;
  if (a->n < c->nhoisted || strcmp(sr_buf_str(&want), sr_buf_str(&got)) != 0) {
    sr_raise(I, "TypeError",
             "The inputs to the closure produced by closure_convert must have the same Pytree structure as the "
             "example arguments passed when closure_convert was called. Expected %s, but got %s",
             sr_buf_str(&want), sr_buf_str(&got));
  } else {
    SrVal *ins = sr_seq(NULL, SR_V_LIST, 0);
    int h = nargs;
    for (int i = 0; i < c->nconsts; i++) {
      SrVal *v = c->consts->seq.items[i];
      sr_seq_push(NULL, ins, sr_ref(v->kind == SR_V_NONE && h < a->n ? a->v[h++] : v));
    }
    SrVal *l = sr_pytree_flatten(I, args);
    if (l) {
      for (int i = 0; i < l->seq.n; i++) sr_seq_push(NULL, ins, sr_ref(l->seq.items[i]));
      sr_unref(l);
      SrVal *o = sr_eval_jaxpr(I, c->j, ins->seq.n, ins->seq.items);
      if (o && !sr_is_seq(o)) {
        SrVal *t = sr_tuple(NULL, 0, NULL);
        sr_seq_push(NULL, t, o);
        o = t;
      }
      if (o) r = sr_pytree_unflatten(c->out_tree, o);
      sr_unref(o);
    }
    sr_unref(ins);
  }
  sr_buf_free(&want);
  sr_buf_free(&got);
  sr_unref(args);
  return r;
}

static SrVal *jax_closure_convert(SrInterp *I, SrArgs *a) {
  if (a->n < 1) return sr_raise(I, "TypeError", "closure_convert() missing 1 required positional argument: 'fun'");
  if (a->nkw) return sr_raise(I, "TypeError", "closure_convert() takes positional arguments only");
  SrVal *fun = a->v[0];
  SrVal *out_tree = NULL, *captured = NULL;
  SrJaxpr *j = sr_trace_fn(I, fun, a->n - 1, a->v + 1, 0, NULL, NULL, 0, &out_tree, &captured);
  if (!j) return NULL;
  Converted *c = sr_xcalloc(1, sizeof *c);
  c->j = j;
  c->out_tree = out_tree;
  SrVal *ex = sr_tuple(NULL, 0, NULL);
  for (int i = 1; i < a->n; i++) sr_seq_push(NULL, ex, sr_ref(a->v[i]));
  int k = 0;
  c->in_tree = sr_pytree_numbered(ex, &k);
  sr_unref(ex);
  c->nconsts = captured->seq.n;
  c->consts = sr_seq(NULL, SR_V_LIST, c->nconsts);
  SrVal *hoisted = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < c->nconsts; i++) {
    SrVal *v = captured->seq.items[i];
    SrArrayObj *arr = sr_array_of(v);
    SrVal *keep = NULL;
    if (!arr || arr->kind != SR_AV_TRACER) {
      keep = sr_ref(v);
    } else if (!sr_tracers_is_ad(I, v) && (keep = sr_tracers_value(I, v)) != NULL) {
      /* a value */
    } else if (!sr_tracers_is_ad(I, v) && sr_dtype_kind(sr_ad_tangent_type(arr->type)->dtype) == SR_DK_FLOAT0) {
      keep = sr_ref(v);
    }
    if (keep) {
      sr_seq_push(NULL, c->consts, keep);
    } else {
      sr_seq_push(NULL, c->consts, sr_none());
      sr_seq_push(NULL, hoisted, sr_ref(v));
    }
  }
  sr_unref(captured);
  c->nhoisted = hoisted->seq.n;
  SrVal *fn = sr_builtin_with(sr_callable_name(fun), converted_call, c, converted_free);
  SrVal *items[2] = {fn, hoisted};
  return sr_tuple(NULL, 2, items);
}

void sr_custom_vjp_init(void) {
  sr_val_keep_class(&cvjp_ref_class);
  sr_val_keep_class(&cvjp_lin_class);
  /* the rows' rules are lax/control.c's; they call these for the
     objects this file makes (lax/lax.h's hooks) */
  sr_lax_custom_hooks.custom_vjp_call = jvp_custom_vjp;
  sr_lax_custom_hooks.custom_lin_type = type_custom_lin;
  sr_lax_custom_hooks.custom_lin_transpose = tr_custom_lin;
  sr_lax_custom_hooks.custom_vjp_batch = batch_custom_vjp;
  sr_register("jax.custom_derivatives.CustomVJPPrimal", sr_obj(&vp_type_class, NULL));
  sr_def("jax.custom_derivatives.custom_vjp_primal_tree_values", jax_primal_tree_values,
         "custom_vjp_primal_tree_values(tree): tree with each CustomVJPPrimal replaced by its value");
  sr_def("jax.closure_convert jax.custom_derivatives.closure_convert", jax_closure_convert,
         "closure_convert(fun, *example_args): (fun taking its hoisted closed-over values after its arguments, "
         "those values)");
  sr_def("jax.custom_vjp jax.custom_derivatives.custom_vjp", jax_custom_vjp,
         "custom_vjp(fun): fun with a custom reverse-mode rule, set with f.defvjp(fwd, bwd); calls bind a "
         "custom_vjp_call equation");
}
