/* autodiff.c: the autodiff API of the statement language -- jax.jvp,
 * jax.linearize, jax.vjp, jax.grad, jax.value_and_grad,
 * jax.linear_transpose -- and the REPL's commands that print the jaxprs of
 * each stage (:jvp, :linearize, :vjp, :transpose, :grad), a static view of
 * the communication a jaxpr implies (:comm-static), and :gradcheck.
 *
 * A function is differentiated as a jaxpr: a jaxpr value is used as it is;
 * anything else is traced on its arguments first (sr_trace_fn), which
 * inlines jax.numpy's helpers and keeps nested jax.jit calls as jit
 * equations, as JAX's own tracing does.  The derivative's equations are
 * bound into the current trace (inside jax.jit, make_jaxpr or a scan
 * body); with no trace, jax.grad traces itself and evaluates the result.
 */
#include <stdlib.h>
#include <string.h>

#include "ad/ad.h"
#include "lax/lax.h"
#include "check/check.h"
#include "jax/jax.h"
#include "core/jaxstate.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "core/trace.h"
#include "jax/vjp.h"
#include "jax/tracers.h"
#include "text/print.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- functions as jaxprs ---- */

/* A function prepared for differentiation: its jaxpr over flat leaves
   (values captured from outside first, then the arguments' leaves). */
typedef struct Fn {
  SrJaxpr *j;          /* a reference to its program is held */
  SrVal *leaves;       /* list */
  int ncaptured;
  int nargs;
  int *arg_start;      /* per argument: its first leaf; [nargs] = total */
  SrVal *out_tree;     /* the result's structure, NULL for a jaxpr value */
} Fn;

static void fn_free(Fn *f) {
  if (f->j) sr_program_unref(f->j->prog);
  sr_unref(f->leaves);
  sr_unref(f->out_tree);
  free(f->arg_start);
  memset(f, 0, sizeof *f);
}

static int fn_prepare(SrInterp *I, SrVal *fun, SrArgs *a, Fn *f) {
  memset(f, 0, sizeof *f);
  f->nargs = a->n;
  f->arg_start = sr_xcalloc((size_t)a->n + 1, sizeof *f->arg_start);
  f->leaves = sr_seq(NULL, SR_V_LIST, 0);
  SrVal *captured = NULL;
  if (fun->kind == SR_V_JAXPR) {
    if (a->nkw) return sr_raise(I, "TypeError", "a jaxpr takes positional arguments only"), -1;
    f->j = fun->jx.jaxpr;
    sr_program_ref(f->j->prog);
  } else {
    f->j = sr_trace_fn(I, fun, a->n, a->v, a->nkw, a->kw, a->kwv, 0, &f->out_tree, &captured);
    if (!f->j) return -1;
    for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, f->leaves, sr_ref(captured->seq.items[i]));
    f->ncaptured = captured->seq.n;
    sr_unref(captured);
  }
  for (int i = 0; i < a->n; i++) {
    f->arg_start[i] = f->leaves->seq.n;
    SrVal *l = sr_pytree_flatten(I, a->v[i]);
    if (!l) return -1;
    for (int k = 0; k < l->seq.n; k++) {
      SrVal *x = l->seq.items[k];
      /* Python scalars become weakly typed arrays */
      if (!sr_array_of(x)) {
        SrVal *arr = sr_jnp_asarray(I, x, -1);
        if (!arr) {
          sr_unref(l);
          return -1;
        }
        sr_seq_push(NULL, f->leaves, arr);
      } else {
        sr_seq_push(NULL, f->leaves, sr_ref(x));
      }
    }
    sr_unref(l);
  }
  f->arg_start[a->n] = f->leaves->seq.n;
  if ((uint32_t)f->leaves->seq.n != sr_nargs(f->j))
    return sr_raise(I, "TypeError", "the jaxpr takes %u arguments, %d given", sr_nargs(f->j), f->leaves->seq.n - f->ncaptured),
           -1;
  return 0;
}

/* The outputs rebuilt in the function's result structure (a jaxpr's
   single output bare, several as a tuple). */
static SrVal *fn_result(Fn *f, SrVal **outs, int n) {
  SrVal *t = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_ref(outs[i]));
  SrVal *r;
  if (f->out_tree) {
    r = sr_pytree_unflatten(f->out_tree, t);
  } else if (n == 1) {
    r = sr_ref(outs[0]);
  } else {
    r = sr_tuple(NULL, 0, NULL);
    for (int i = 0; i < n; i++) sr_seq_push(NULL, r, sr_ref(outs[i]));
  }
  sr_unref(t);
  return r;
}

int sr_argnums_parse(SrInterp *I, SrVal *v, int64_t *out, int *n, int *single) {
  *single = 0;
  if (!v) {
    out[0] = 0;
    *n = 1;
    *single = 1;
    return 0;
  }
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    out[0] = v->i;
    *n = 1;
    *single = 1;
    return 0;
  }
  if (sr_is_seq(v)) {
    if (v->seq.n > SR_MAX_ARGNUMS) return sr_raise(I, "ValueError", "too many argnums"), -1;
    for (int i = 0; i < v->seq.n; i++)
      if (sr_as_int(I, v->seq.items[i], "argnums", &out[i]) < 0) return -1;
    *n = v->seq.n;
    return 0;
  }
  sr_raise(I, "TypeError", "argnums must be an int or a tuple of ints, got %s", sr_val_kind_name(v));
  return -1;
}

int sr_argnums_resolve(SrInterp *I, const int64_t *argnums, int n, int nargs, int64_t *out) {
  for (int k = 0; k < n; k++) {
    if (argnums[k] < -(int64_t)nargs || argnums[k] >= nargs) {
      sr_raise(I, "ValueError",
               "Positional argument indices, e.g. for `static_argnums`, must have value greater than or equal to "
               "-len(args) and less than len(args), but got value %lld for len(args) == %d.",
               (long long)argnums[k], nargs);
      return -1;
    }
    out[k] = argnums[k] < 0 ? argnums[k] + nargs : argnums[k];
  }
  return 0;
}

static void argnums_str(SrBuf *b, const int64_t *an, int n, int single) {
  if (single) {
    sr_buf_printf(b, "%lld", (long long)an[0]);
    return;
  }
  sr_buf_putc(b, '(');
  for (int i = 0; i < n; i++) sr_buf_printf(b, i ? ", %lld" : "%lld", (long long)an[i]);
  sr_buf_puts(b, n == 1 ? ",)" : ")");
}

/* ---- running a derivative where there is no trace ----
 *
 * With no trace in context (an eager call), a derivative is traced on its
 * arguments' types and the jaxpr evaluated on the arguments: the values
 * are the same, and abstract arguments give abstract results. */
static SrVal *eager(SrInterp *I, SrVal *self, SrArgs *a) {
  SrVal *out_tree = NULL, *captured = NULL;
  /* the trace's values are known (a custom_jvp rule linearized in it may
     branch on its primals, as under JAX's EvalTrace) */
  sr_tracers_custom_next(I, a->n, a->v);
  SrJaxpr *j = sr_trace_fn(I, self, a->n, a->v, a->nkw, a->kw, a->kwv, 0, &out_tree, &captured);
  sr_trace_next_repr(I, NULL, NULL);
  if (!j) return NULL;
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, leaves, sr_ref(captured->seq.items[i]));
  for (int i = 0; i < a->n; i++) {
    SrVal *l = sr_pytree_flatten(I, a->v[i]);
    for (int k = 0; l && k < l->seq.n; k++) sr_seq_push(NULL, leaves, sr_ref(l->seq.items[k]));
    sr_unref(l);
  }
  SrVal *r = sr_eval_jaxpr(I, j, leaves->seq.n, leaves->seq.items);
  SrVal *res = r ? sr_pytree_unflatten(out_tree, r) : NULL;
  sr_unref(r);
  sr_unref(leaves);
  sr_unref(captured);
  sr_unref(out_tree);
  sr_program_unref(j->prog);
  return res;
}

/* ---- jax.grad and jax.value_and_grad ---- */

typedef struct Grad {
  SrVal *fun;
  int64_t argnums[SR_MAX_ARGNUMS];
  int nargnums, single;
  int has_aux, allow_int, value_and_grad, holomorphic;
  const char *name;
  SrArgs *concrete; /* an eager call's arguments, while it traces */
} Grad;

static void grad_free(void *d) {
  Grad *g = d;
  sr_unref(g->fun);
  free(g);
}

static const char *fun_name(SrVal *fun) {
  const char *n = sr_builtin_name(fun);
  if (fun->kind == SR_V_JAXPR && fun->jx.jaxpr->name) n = fun->jx.jaxpr->name;
  SrFunction *uf = sr_as_function(fun);
  if (uf) n = uf->name;
  return n ? n : "<unnamed function>";
}

static int check_scalar(SrInterp *I, const SrType *t) {
  if (t->ndim == 0) return 0;
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, "(");
  for (int i = 0; i < t->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
  sr_buf_puts(&b, t->ndim == 1 ? ",)" : ")");
  int64_t n = sr_type_numel(t);
  const char *extract = n == 1 ? (t->ndim == 1 ? "extract the scalar with output.reshape(()) or output[0], "
                                               : "extract the scalar with output.reshape(()), ")
                               : "";
  sr_raise(I, "TypeError",
           "Gradient only defined for scalar-output functions. Output had shape: %s. To get the gradient, %sreduce "
           "the output to a scalar with output.sum(), or use jax.jacobian to differentiate a function with a "
           "non-scalar output.",
           sr_buf_str(&b), extract);
  sr_buf_free(&b);
  return -1;
}

/* An eager call traces its arguments, but JAX's message shows the output's
   values: they are the traced jaxpr run on the concrete arguments.  NULL
   when the call is not eager (or a captured value is a tracer). */
static SrVal *concrete_result(SrInterp *I, Grad *g, Fn *f, int nout) {
  if (!g->concrete || !f->out_tree) return NULL;
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < f->ncaptured; i++) sr_seq_push(NULL, leaves, sr_ref(f->leaves->seq.items[i]));
  for (int i = 0; i < g->concrete->n; i++) {
    SrVal *l = sr_pytree_flatten(I, g->concrete->v[i]);
    for (int k = 0; l && k < l->seq.n; k++) sr_seq_push(NULL, leaves, sr_ref(l->seq.items[k]));
    sr_unref(l);
  }
  SrVal *r = NULL;
  int ok = (uint32_t)leaves->seq.n == sr_nargs(f->j);
  for (int i = 0; ok && i < leaves->seq.n; i++) ok = sr_tracers_is_concrete(leaves->seq.items[i]);
  if (ok) {
    SrTrace *saved = I->trace;
    I->trace = NULL;
    SrVal *outs = sr_eval_jaxpr(I, f->j, leaves->seq.n, leaves->seq.items);
    I->trace = saved;
    if (outs && sr_is_seq(outs) && outs->seq.n == nout) r = sr_pytree_unflatten(f->out_tree, outs);
    sr_unref(outs);
  }
  sr_unref(leaves);
  return r;
}

/* _check_scalar's error for an output that is no single array (a tuple,
   say): JAX formats the output itself into the message. */
static void not_scalar(SrInterp *I, Grad *g, Fn *f, SrVal **outs, int n) {
  SrVal *ans = concrete_result(I, g, f, n);
  if (!ans) ans = fn_result(f, outs, n);
  int has_aux = g->has_aux;
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, has_aux && sr_is_seq(ans) && ans->seq.n == 2 ? ans->seq.items[0] : ans);
  sr_raise(I, "TypeError", "Gradient only defined for scalar-output functions. Output was %s.", sr_buf_str(&b));
  sr_buf_free(&b);
  sr_unref(ans);
}

static SrVal *grad_impl(SrInterp *I, Grad *g, SrArgs *a) {
  const char *api = g->value_and_grad ? "value_and_grad" : "grad";
  if (g->nargnums == 0) return sr_raise(I, "ValueError", "max() arg is an empty sequence");
  int64_t maxarg = g->argnums[0];
  for (int i = 1; i < g->nargnums; i++)
    if (g->argnums[i] > maxarg) maxarg = g->argnums[i];
  if (maxarg >= a->n) {
    SrBuf b = SR_BUF_INIT;
    argnums_str(&b, g->argnums, g->nargnums, g->single);
    sr_raise(I, "TypeError",
             "differentiating with respect to argnums=%s requires at least %llu positional arguments to be passed by "
             "the caller, but got only %d positional arguments.",
             sr_buf_str(&b), (unsigned long long)maxarg + 1, a->n); /* maxarg >= 0: no overflow */
    sr_buf_free(&b);
    return NULL;
  }
  /* argnums_partial2: negative ones count from the end; when two name
     the same argument, the last one is the argument (the others get
     zeros) */
  int64_t an[SR_MAX_ARGNUMS];
  if (sr_argnums_resolve(I, g->argnums, g->nargnums, a->n, an) < 0) return NULL;
  Fn f;
  SrVal *result = NULL;
  SrVal **outs = NULL, **cts_out = NULL, **cts_in = NULL;
  SrLinear lin = {0};
  int have_lin = 0;
  uint8_t *arg_diff = sr_xcalloc((size_t)a->n + 1, 1);
  for (int k = 0; k < g->nargnums; k++) arg_diff[an[k]] = 1;
  /* an eager call traces itself first (grad_call): its tracers stand
     for the arguments it was called with */
  if (g->concrete && g->concrete->n == a->n) sr_tracers_grad_next(I, a->n, g->concrete->v, arg_diff, 1);
  else sr_tracers_grad_next(I, a->n, a->v, arg_diff, 0);
  free(arg_diff);
  int prep = fn_prepare(I, g->fun, a, &f);
  sr_trace_next_repr(I, NULL, NULL);
  if (prep < 0) goto done;
  int nl = f.leaves->seq.n;
  uint8_t *in_nz = sr_xcalloc((size_t)nl + 1, 1);
  for (int k = 0; k < g->nargnums; k++) {
    for (int i = f.arg_start[an[k]]; i < f.arg_start[an[k] + 1]; i++) {
      const SrType *t = sr_value_type(I, f.leaves->seq.items[i]);
      if (g->holomorphic && sr_dtype_kind(t->dtype) != SR_DK_COMPLEX) {
        sr_raise(I, "TypeError", "%s with holomorphic=True requires inputs with complex dtype, but got %s.", api,
                 sr_dtype_name(t->dtype));
        free(in_nz);
        goto done;
      }
      if (!sr_dtype_is_inexact(t->dtype) && !g->allow_int) {
        sr_raise(I, "TypeError",
                 "%s requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), but "
                 "got %s. If you want to use Boolean- or integer-valued inputs, use vjp or set allow_int to True.",
                 api, sr_dtype_name(t->dtype));
        free(in_nz);
        goto done;
      }
      in_nz[i] = 1;
    }
  }
  /* the differentiated output: the first one (the pair's first with
     has_aux) */
  uint32_t nout = f.j->nout, nans = nout;
  if (g->has_aux) {
    SrVal *ot = f.out_tree;
    if (!ot || !sr_is_seq(ot) || ot->seq.n != 2) {
      sr_raise(I, "TypeError", "expected function with aux output to return a two-element tuple");
      free(in_nz);
      goto done;
    }
    SrVal *l = sr_pytree_flatten(I, ot->seq.items[0]);
    nans = l ? (uint32_t)l->seq.n : 0;
    sr_unref(l);
  }
  if (nout < 1) {
    not_scalar(I, g, &f, NULL, 0);
    free(in_nz);
    goto done;
  }
  uint8_t *out_diff = sr_xcalloc(nout + 1, 1);
  out_diff[0] = 1;
  outs = sr_xcalloc(nout + 1, sizeof *outs);
  int rc = sr_ad_linearize(I, f.j, f.leaves->seq.items, in_nz, out_diff, outs, &lin);
  free(in_nz);
  free(out_diff);
  if (rc < 0) goto done;
  have_lin = 1;
  /* checked once there are values: JAX's message shows the output */
  if (nans != 1) {
    not_scalar(I, g, &f, outs, (int)nout);
    goto done;
  }
  const SrType *at = sr_value_type(I, outs[0]);
  if (check_scalar(I, at) < 0) goto done;
  if (g->holomorphic && sr_dtype_kind(at->dtype) != SR_DK_COMPLEX) {
    sr_raise(I, "TypeError", "%s with holomorphic=True requires outputs with complex dtype, but got %s.", api,
             sr_dtype_name(at->dtype));
    goto done;
  }
  if (!g->holomorphic && !sr_dtype_is_float(at->dtype)) {
    if (sr_dtype_kind(at->dtype) == SR_DK_COMPLEX)
      sr_raise(I, "TypeError",
               "%s requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got %s. For "
               "holomorphic differentiation, pass holomorphic=True. For differentiation of non-holomorphic functions "
               "involving complex outputs, use jax.vjp directly.",
               api, sr_dtype_name(at->dtype));
    else
      sr_raise(I, "TypeError",
               "%s requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got %s. For "
               "differentiation of functions with integer outputs, use jax.vjp directly.",
               api, sr_dtype_name(at->dtype));
    goto done;
  }
  cts_out = sr_xcalloc(nout + 1, sizeof *cts_out);
  cts_out[0] = sr_ad_one_ct(I, at, sr_ad_jaxpr_mesh(f.j));
  if (!cts_out[0]) goto done;
  cts_in = sr_xcalloc((size_t)nl + 1, sizeof *cts_in);
  if (sr_ad_vjp_apply(I, &lin, cts_out, cts_in, 0) < 0) goto done;
  /* an input with no tangent (an integer one, with allow_int) still gets
     a gradient: zeros of its cotangent type, float0 for integers */
  for (int k = 0; k < g->nargnums; k++)
    for (int i = f.arg_start[an[k]]; i < f.arg_start[an[k] + 1]; i++)
      if (!cts_in[i] && !(cts_in[i] = sr_ad_zeros(I, sr_ad_ct_type(sr_value_type(I, f.leaves->seq.items[i])))))
        goto done;
  /* the gradients, in the arguments' structures */
  SrVal *gs = sr_seq(NULL, SR_V_TUPLE, g->nargnums);
  for (int k = 0; k < g->nargnums; k++) {
    int later = 0;
    for (int k2 = k + 1; k2 < g->nargnums; k2++) later |= an[k2] == an[k];
    SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = f.arg_start[an[k]]; i < f.arg_start[an[k] + 1]; i++) {
      SrVal *ct = later ? sr_ad_zeros(I, sr_value_type(I, cts_in[i])) : sr_ref(cts_in[i]);
      if (!ct) {
        sr_unref(l);
        sr_unref(gs);
        goto done;
      }
      sr_seq_push(NULL, l, ct);
    }
    sr_seq_push(NULL, gs, sr_pytree_unflatten(a->v[an[k]], l));
    sr_unref(l);
  }
  SrVal *grads = g->single ? sr_ref(gs->seq.items[0]) : sr_ref(gs);
  sr_unref(gs);
  SrVal *ans = fn_result(&f, outs, (int)nout); /* (ans, aux) with has_aux */
  SrVal *value = ans, *aux = NULL;
  if (g->has_aux) {
    value = sr_ref(ans->seq.items[0]);
    aux = sr_ref(ans->seq.items[1]);
    sr_unref(ans);
  }
  if (g->value_and_grad) {
    SrVal *va = g->has_aux ? sr_tuple(NULL, 0, NULL) : sr_ref(value);
    if (g->has_aux) {
      sr_seq_push(NULL, va, sr_ref(value));
      sr_seq_push(NULL, va, sr_ref(aux));
    }
    result = sr_tuple(NULL, 0, NULL);
    sr_seq_push(NULL, result, va);
    sr_seq_push(NULL, result, sr_ref(grads));
  } else if (g->has_aux) {
    result = sr_tuple(NULL, 0, NULL);
    sr_seq_push(NULL, result, sr_ref(grads));
    sr_seq_push(NULL, result, sr_ref(aux));
  } else {
    result = sr_ref(grads);
  }
  sr_unref(value);
  sr_unref(aux);
  sr_unref(grads);
done:
  if (outs)
    for (uint32_t i = 0; f.j && i < f.j->nout; i++) sr_unref(outs[i]);
  if (cts_out)
    for (uint32_t i = 0; f.j && i < f.j->nout; i++) sr_unref(cts_out[i]);
  if (cts_in)
    for (int i = 0; f.leaves && i < f.leaves->seq.n; i++) sr_unref(cts_in[i]);
  free(outs);
  free(cts_out);
  free(cts_in);
  if (have_lin) sr_ad_linear_free(&lin);
  fn_free(&f);
  return result;
}

/* api_util.argnums_partial: the arguments grad does not differentiate are
   passed to the function as they are (a Python bool stays a bool), fixed
   in a partial; those holding only arrays are kept as arguments here, as
   their values are the same either way. */
typedef struct Fixed {
  SrVal *fun;
  int n;
  SrVal **v; /* n: the fixed value, or NULL where the call's next one goes */
} Fixed;

static void fixed_free(void *d) {
  Fixed *x = d;
  sr_unref(x->fun);
  for (int i = 0; i < x->n; i++) sr_unref(x->v[i]);
  free(x->v);
  free(x);
}

static SrVal *fixed_call(SrInterp *I, SrArgs *a) {
  Fixed *x = sr_current_builtin(I)->data;
  SrVal **v = sr_xcalloc((size_t)x->n + (size_t)a->n + 1, sizeof *v);
  int n = 0, k = 0;
  for (int i = 0; i < x->n; i++) v[n++] = x->v[i] ? x->v[i] : k < a->n ? a->v[k++] : sr_none();
  while (k < a->n) v[n++] = a->v[k++];
  SrArgs ca = {n, v, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, x->fun, &ca);
  free(v);
  return r;
}

static int has_nonarray_leaf(SrInterp *I, SrVal *v) {
  /* any leaf: a function or another non-JAX value too (argnums_partial
     closes over it) */
  SrVal *l = sr_pytree_flatten_any(I, v);
  if (!l) {
    sr_exc_clear(I);
    return 0;
  }
  int r = 0;
  for (int k = 0; k < l->seq.n && !r; k++) r = !sr_array_of(l->seq.items[k]);
  sr_unref(l);
  return r;
}

static SrVal *grad_call(SrInterp *I, SrArgs *a);

/* grad(f, argnums)(*args) as grad(partial(f, fixed), argnums')(*rest)
   where a non-differentiated argument holds a non-array; NULL with no
   exception where there is none (or argnums are left to grad_impl's
   errors). */
static SrVal *grad_fixed(SrInterp *I, Grad *g, SrArgs *a) {
  int64_t maxarg = g->nargnums ? g->argnums[0] : 0, an[SR_MAX_ARGNUMS];
  for (int i = 1; i < g->nargnums; i++)
    if (g->argnums[i] > maxarg) maxarg = g->argnums[i];
  if (g->nargnums == 0 || maxarg >= a->n || sr_argnums_resolve(I, g->argnums, g->nargnums, a->n, an) < 0) {
    if (I->exc) sr_exc_clear(I);
    return NULL;
  }
  uint8_t *fix = sr_xcalloc((size_t)a->n + 1, 1);
  int nfix = 0;
  for (int i = 0; i < a->n; i++) {
    int diff = 0;
    for (int k = 0; k < g->nargnums; k++) diff |= an[k] == i;
    if (!diff && has_nonarray_leaf(I, a->v[i])) fix[i] = 1, nfix++;
  }
  if (!nfix) {
    free(fix);
    return NULL;
  }
  Fixed *x = sr_xcalloc(1, sizeof *x);
  x->fun = sr_ref(g->fun);
  x->n = a->n;
  x->v = sr_xcalloc((size_t)a->n + 1, sizeof *x->v);
  SrVal **rest = sr_xcalloc((size_t)a->n + 1, sizeof *rest);
  int *pos = sr_xcalloc((size_t)a->n + 1, sizeof *pos), nrest = 0;
  for (int i = 0; i < a->n; i++) {
    if (fix[i]) x->v[i] = sr_ref(a->v[i]);
    else pos[i] = nrest, rest[nrest++] = a->v[i];
  }
  Grad g2 = *g;
  g2.fun = sr_builtin_with(sr_callable_name(g->fun), fixed_call, x, fixed_free);
  g2.concrete = NULL;
  for (int k = 0; k < g->nargnums; k++) g2.argnums[k] = pos[an[k]];
  SrVal *self = sr_builtin_with(sr_callable_name(g->fun), grad_call, &g2, NULL);
  SrArgs ra = {nrest, rest, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, self, &ra);
  if (!r && !I->exc) r = sr_raise(I, "RuntimeError", "grad failed");
  sr_unref(self);
  sr_unref(g2.fun);
  free(fix);
  free(rest);
  free(pos);
  return r;
}

static SrVal *grad_call(SrInterp *I, SrArgs *a) {
  SrBuiltin *b = sr_current_builtin(I);
  Grad *g = b->data;
  if (!g->concrete) {
    SrVal *r = grad_fixed(I, g, a);
    if (r || I->exc) return r;
  }
  if (!I->trace) {
    /* an eager call: trace, then evaluate (the builtin object is this
       call's self, found through the registry of the current call) */
    SrVal *self = sr_builtin_with(b->name, grad_call, NULL, NULL);
    SrBuiltin *sb = self->obj.data;
    sb->data = g;
    SrArgs *saved = g->concrete;
    g->concrete = a;
    SrVal *r = eager(I, self, a);
    g->concrete = saved;
    sb->data = NULL;
    sr_unref(self);
    return r;
  }
  return grad_impl(I, g, a);
}

static SrVal *make_grad(SrInterp *I, SrArgs *a, int value_and_grad) {
  const char *api = value_and_grad ? "value_and_grad" : "grad";
  SrVal *p[6];
  if (sr_args_parse(I, a, api, "fun, argnums=, has_aux=, holomorphic=, allow_int=, reduce_axes=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(p[0]));
  Grad *g = sr_xcalloc(1, sizeof *g);
  if (sr_argnums_parse(I, p[1], g->argnums, &g->nargnums, &g->single) < 0) {
    free(g);
    return NULL;
  }
  g->fun = sr_ref(p[0]);
  g->has_aux = p[2] && sr_val_truthy(p[2]);
  g->holomorphic = p[3] && sr_val_truthy(p[3]);
  g->allow_int = p[4] && sr_val_truthy(p[4]);
  g->value_and_grad = value_and_grad;
  if (p[5] && sr_val_truthy(p[5])) {
    grad_free(g);
    return sr_raise(I, "NotImplementedError", "reduce_axes argument to grad is deprecated");
  }
  const char *fname = fun_name(p[0]);
  return sr_api_wraps_doc(
      I, sr_builtin_with(fname, grad_call, g, grad_free), p[0],
      value_and_grad ? "Value and gradient of {fun} with respect to positional argument(s) {argnums}. Takes the same "
                       "arguments as {fun} but returns a two-element tuple where the first element is the value of "
                       "{fun} and the second element is the gradient, which has the same shape as the arguments at "
                       "positions {argnums}."
                     : "Gradient of {fun} with respect to positional argument(s) {argnums}. Takes the same arguments "
                       "as {fun} but returns the gradient, which has the same shape as the arguments at positions "
                       "{argnums}.",
      p[1], 0);
}

static SrVal *jax_grad(SrInterp *I, SrArgs *a) { return make_grad(I, a, 0); }
static SrVal *jax_value_and_grad(SrInterp *I, SrArgs *a) { return make_grad(I, a, 1); }

/* ---- jax.vjp and jax.linearize: functions holding a linearization ----
 *
 * jax.linearize's f_jvp is an object holding its linearization (the linear
 * jaxpr and the residuals); jax.vjp's is the first-class VJP object of
 * vjp_api.c, made from the same linearization. */

typedef struct Lin {
  SrLinear lin;
  SrVal *in_tree;      /* the primals, as passed (a tuple) */
  SrVal *out_tree;     /* the function's result */
  int nleaves, ncaptured;
  int *arg_start;
  int nargs;
  int is_vjp;
  const char *name;
} Lin;

static void lin_free(void *d) {
  Lin *l = d;
  sr_ad_linear_free(&l->lin);
  sr_unref(l->in_tree);
  sr_unref(l->out_tree);
  free(l->arg_start);
  free(l);
}

static void lin_repr(SrBuf *out, const SrVal *v) {
  const Lin *l = v->obj.data;
  sr_buf_printf(out, "<function %s_jvp>", l->name);
}

/* api.py's _lift_linearized: when the tangent varies over other manual
   axes than its primal, which pcast would fix it */
static void lin_vma_hint(SrBuf *out, const SrType *primal, const SrType *tangent) {
  const SrMesh *m = tangent->mesh ? tangent->mesh : primal->mesh;
  if (!m) return;
  if (primal->varying == tangent->varying && primal->unreduced == tangent->unreduced &&
      primal->reduced == tangent->reduced)
    return;
  SrAxes left_t = tangent->varying & ~primal->varying, left_p = primal->varying & ~tangent->varying;
  sr_buf_puts(out, " \nThis might be fixed by:");
  if (left_t) {
    sr_buf_puts(out, "\n  * applying `jax.lax.pcast(..., ");
    sr_axes_tuple_str(out, m, left_t);
    sr_buf_puts(out, ", to='varying')` to the primal value passed to `jax.linearize`;");
  }
  if (left_p) {
    sr_buf_puts(out, "\n  * applying `jax.lax.pcast(..., ");
    sr_axes_tuple_str(out, m, left_p);
    sr_buf_puts(out, ", to='varying')` to the tangent value passed to the callable `f_jvp` returned by `jax.linearize`;");
  }
}

static SrVal *lin_call(SrInterp *I, SrVal *self, SrArgs *a) {
  Lin *l = self->obj.data;
  SrLinear *lin = &l->lin;
  if (a->nkw) return sr_raise(I, "TypeError", "the linearized function takes positional arguments only");
  /* f_jvp(*tangents): api.py's _lift_linearized compares the structure
     of the tangents with the primals' */
  SrVal *args = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  SrBuf tw = SR_BUF_INIT, tg = SR_BUF_INIT;
  sr_vjp_treedef_str(&tw, l->in_tree);
  sr_vjp_treedef_str(&tg, args);
  sr_unref(args);
  int differ = strcmp(sr_buf_str(&tw), sr_buf_str(&tg)) != 0;
  if (differ) sr_raise(I, "TypeError", "expected %s, got %s", sr_buf_str(&tw), sr_buf_str(&tg));
  sr_buf_free(&tw);
  sr_buf_free(&tg);
  if (differ) return NULL;
  SrVal **tan = sr_xcalloc((size_t)lin->nin + 1, sizeof *tan);
  int k = l->ncaptured, ok = 1;
  for (int i = 0; i < a->n && ok; i++) {
    SrVal *lv = sr_pytree_flatten(I, a->v[i]);
    if (!lv) ok = 0;
    for (int q = 0; lv && q < lv->seq.n && k < lin->nin; q++) {
      const SrType *t = sr_value_type(I, lv->seq.items[q]);
      const SrType *want = sr_ad_tangent_type(lin->in_types[k]);
      if (!t || !sr_type_equal_mod_mesh(sr_type_with_weak(t, 0), sr_type_with_weak(want, 0))) {
        /* str(aval): str_short(), long dtype names, weak ones marked ~ */
        SrBuf extra = SR_BUF_INIT, st = SR_BUF_INIT, sp = SR_BUF_INIT, sw = SR_BUF_INIT;
        const SrType *shown[3] = {t, lin->in_types[k], want};
        SrBuf *bufs[3] = {&st, &sp, &sw};
        for (int w = 0; w < 3; w++) {
          if (!shown[w]) {
            sr_buf_puts(bufs[w], "?");
            continue;
          }
          if (shown[w]->weak) sr_buf_putc(bufs[w], '~');
          sr_type_str(bufs[w], shown[w], 0);
        }
        if (t) lin_vma_hint(&extra, lin->in_types[k], t);
        sr_raise(I, "ValueError",
                 "linearized function called on tangent values inconsistent with the original primal values:\nGot "
                 "tangent aval %s for primal aval %s but expected %s.%s",
                 sr_buf_str(&st), sr_buf_str(&sp), sr_buf_str(&sw), sr_buf_str(&extra));
        sr_buf_free(&extra);
        sr_buf_free(&st);
        sr_buf_free(&sp);
        sr_buf_free(&sw);
        ok = 0;
        break;
      }
      tan[k++] = sr_ref(lv->seq.items[q]);
    }
    sr_unref(lv);
  }
  SrVal *r = NULL;
  if (ok) {
    SrVal **tout = sr_xcalloc((size_t)lin->nout + 1, sizeof *tout);
    if (sr_ad_linear_apply(I, lin, tan, tout) == 0) {
      SrVal *lv = sr_seq(NULL, SR_V_LIST, 0);
      for (int i = 0; i < lin->nout; i++) sr_seq_push(NULL, lv, tout[i]);
      if (l->out_tree) r = sr_pytree_unflatten(l->out_tree, lv);
      else r = lin->nout == 1 ? sr_ref(lv->seq.items[0]) : sr_tuple(NULL, 0, NULL);
      if (!l->out_tree && lin->nout != 1)
        for (int i = 0; i < lin->nout; i++) sr_seq_push(NULL, r, sr_ref(lv->seq.items[i]));
      sr_unref(lv);
    }
    free(tout);
  }
  for (int i = 0; i < lin->nin; i++) sr_unref(tan[i]);
  free(tan);
  return r;
}

/* lifted_jvp.func: partial(_lift_linearized, jaxpr, ...), whose .args
   start with the linear jaxpr */
static void lin_func_free(void *d) { sr_unref(d); }
static void lin_func_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "functools.partial(<function _lift_linearized>, ...)");
}
static SrVal *lin_func_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  Lin *l = ((SrVal *)self->obj.data)->obj.data;
  if (strcmp(name, "args") == 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, 1);
    sr_seq_push(NULL, t, sr_jaxpr_val(NULL, l->lin.jaxpr));
    return t;
  }
  return NULL;
}
static const SrLangOps lin_func_ops = {.getattr = lin_func_getattr};
static const SrClass lin_func_class = {"partial", lin_func_free, lin_func_repr, NULL, &lin_func_ops};

static SrVal *lin_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  Lin *l = self->obj.data;
  if (strcmp(name, "jaxpr") == 0) return sr_jaxpr_val(NULL, l->lin.jaxpr);
  if (strcmp(name, "func") == 0) return sr_obj(&lin_func_class, sr_ref(self));
  if (strcmp(name, "out_nzs") == 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, l->lin.nout);
    for (int i = 0; i < l->lin.nout; i++) sr_seq_push(NULL, t, sr_bool(l->lin.out_nz[i]));
    return t;
  }
  return NULL;
}

/* f_jvp is a pytree, as api.py's Partial of its linear function: its
   children the residuals, rebuilt with new ones around the same linear
   jaxpr (a jit returns it and takes it) */
static const SrClass lin_class;
static void *dup_bytes(const void *p, size_t n) {
  void *d = sr_xcalloc(n + 1, 1);
  if (p && n) memcpy(d, p, n);
  return d;
}
static SrVal *lin_children(SrVal *self) {
  const Lin *l = self->obj.data;
  SrVal *c = sr_seq(NULL, SR_V_LIST, l->lin.nres);
  for (int i = 0; i < l->lin.nres; i++) sr_seq_push(NULL, c, sr_ref(l->lin.res[i]));
  return c;
}
static SrVal *lin_rebuild(SrVal *self, SrVal *ch) {
  const Lin *l = self->obj.data;
  const SrLinear *s = &l->lin;
  Lin *n = sr_xcalloc(1, sizeof *n);
  *n = *l;
  SrLinear *d = &n->lin;
  sr_program_ref(s->jaxpr->prog);
  d->res = sr_xcalloc((size_t)s->nres + 1, sizeof *d->res);
  for (int i = 0; i < s->nres; i++) d->res[i] = sr_ref(i < ch->seq.n ? ch->seq.items[i] : s->res[i]);
  d->in_nz = dup_bytes(s->in_nz, (size_t)s->nin);
  d->out_nz = dup_bytes(s->out_nz, (size_t)s->nout);
  d->in_types = dup_bytes(s->in_types, (size_t)s->nin * sizeof *s->in_types);
  d->out_types = dup_bytes(s->out_types, (size_t)s->nout * sizeof *s->out_types);
  d->res_arg = dup_bytes(s->res_arg, (size_t)s->nres);
  n->in_tree = sr_ref(l->in_tree);
  n->out_tree = l->out_tree ? sr_ref(l->out_tree) : NULL;
  n->arg_start = dup_bytes(l->arg_start, ((size_t)l->nargs + 1) * sizeof *l->arg_start);
  return sr_obj(&lin_class, n);
}

static const SrLangOps lin_ops = {
  .call = lin_call, .getattr = lin_getattr, .tree_children = lin_children, .tree_rebuild = lin_rebuild};
static const SrClass lin_class = {"partial", lin_free, lin_repr, NULL, &lin_ops};

/* jax.vjp / jax.linearize: (out, f) or (out, f, aux) */
static SrVal *vjp_or_linearize(SrInterp *I, SrArgs *a, int is_vjp) {
  const char *api = is_vjp ? "vjp" : "linearize";
  if (a->n < 1) return sr_raise(I, "TypeError", "%s() missing required argument: 'fun'", api);
  SrVal *fun = a->v[0];
  if (!sr_is_callable(I, fun)) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(fun));
  int has_aux = 0;
  SrVal *saveable_args = NULL, *in_nzs = NULL;
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "has_aux") == 0) has_aux = sr_val_truthy(a->kwv[k]);
    else if (is_vjp && strcmp(a->kw[k], "saveable_args") == 0) saveable_args = a->kwv[k];
    else if (is_vjp && strcmp(a->kw[k], "in_nzs") == 0) in_nzs = a->kwv[k]->kind == SR_V_NONE ? NULL : a->kwv[k];
    else if (strcmp(a->kw[k], "reduce_axes") == 0) {
      if (sr_val_truthy(a->kwv[k]))
        return sr_raise(I, "NotImplementedError", "reduce_axes argument to %s is deprecated", api);
    } else return sr_raise(I, "TypeError", "%s() got an unexpected keyword argument '%s'", api, a->kw[k]);
  }
  SrArgs pa = {a->n - 1, a->v + 1, 0, NULL, NULL, NULL};
  Fn f;
  sr_tracers_grad_next(I, pa.n, pa.v, NULL, 0);
  int prep = fn_prepare(I, fun, &pa, &f);
  sr_trace_next_repr(I, NULL, NULL);
  if (prep < 0) {
    fn_free(&f);
    return NULL;
  }
  /* saveable_args and in_nzs: one flag per argument leaf (tuptree_flags) */
  int nleaves = f.leaves->seq.n - f.ncaptured;
  uint8_t *saveable = NULL, *nz_flags = NULL;
  if (saveable_args || in_nzs) {
    SrVal *args = sr_tuple(NULL, 0, NULL);
    for (int i = 0; i < pa.n; i++) sr_seq_push(NULL, args, sr_ref(pa.v[i]));
    int bad = 0;
    if (saveable_args) {
      saveable = sr_xcalloc((size_t)nleaves + 1, 1);
      bad = sr_vjp_flags(I, saveable_args, args, "saveable_args", "the saveable_args argument to jax.vjp", saveable,
                         nleaves) < 0;
    }
    if (in_nzs && !bad) {
      nz_flags = sr_xcalloc((size_t)nleaves + 1, 1);
      bad = sr_vjp_flags(I, in_nzs, args, "in_nzs", "the in_nzs argument to jax.vjp", nz_flags, nleaves) < 0;
    }
    sr_unref(args);
    if (bad) {
      free(saveable);
      free(nz_flags);
      fn_free(&f);
      return NULL;
    }
  }
  uint32_t nout = f.j->nout, nans = nout;
  SrVal *ans_tree = f.out_tree ? sr_ref(f.out_tree) : NULL, *aux_tree = NULL;
  if (has_aux) {
    if (!f.out_tree || !sr_is_seq(f.out_tree) || f.out_tree->seq.n != 2) {
      fn_free(&f);
      sr_unref(ans_tree);
      return sr_raise(I, "TypeError", "expected function with aux output to return a two-element tuple");
    }
    sr_unref(ans_tree);
    ans_tree = sr_ref(f.out_tree->seq.items[0]);
    aux_tree = sr_ref(f.out_tree->seq.items[1]);
    SrVal *l = sr_pytree_flatten(I, ans_tree);
    nans = (uint32_t)l->seq.n;
    sr_unref(l);
  }
  uint8_t *out_diff = sr_xcalloc(nout + 1, 1);
  for (uint32_t i = 0; i < nans; i++) out_diff[i] = 1;
  uint8_t *in_nz = sr_xcalloc((size_t)f.leaves->seq.n + 1, 1);
  for (int i = f.ncaptured; i < f.leaves->seq.n; i++) in_nz[i] = nz_flags ? nz_flags[i - f.ncaptured] : 1;
  free(nz_flags);
  SrVal **outs = sr_xcalloc(nout + 1, sizeof *outs);
  Lin *l = sr_xcalloc(1, sizeof *l);
  int rc = sr_ad_linearize(I, f.j, f.leaves->seq.items, in_nz, out_diff, outs, &l->lin);
  free(in_nz);
  free(out_diff);
  SrVal *result = NULL;
  if (rc == 0) {
    /* the linearization covers the differentiated outputs only */
    l->lin.nout = (int)nans;
    l->is_vjp = is_vjp;
    l->name = sr_intern_cstr(fun_name(fun));
    l->in_tree = sr_tuple(NULL, 0, NULL);
    for (int i = 0; i < pa.n; i++) sr_seq_push(NULL, l->in_tree, sr_ref(pa.v[i]));
    l->out_tree = ans_tree ? sr_ref(ans_tree) : NULL;
    l->nargs = pa.n;
    l->ncaptured = f.ncaptured;
    l->arg_start = sr_xcalloc((size_t)pa.n + 1, sizeof *l->arg_start);
    memcpy(l->arg_start, f.arg_start, ((size_t)pa.n + 1) * sizeof *l->arg_start);
    SrVal *lv = sr_seq(NULL, SR_V_LIST, 0);
    for (uint32_t i = 0; i < nans; i++) sr_seq_push(NULL, lv, sr_ref(outs[i]));
    SrVal *ans = ans_tree ? sr_pytree_unflatten(ans_tree, lv) : nans == 1 ? sr_ref(outs[0]) : sr_tuple(NULL, 0, NULL);
    if (!ans_tree && nans != 1)
      for (uint32_t i = 0; i < nans; i++) sr_seq_push(NULL, ans, sr_ref(outs[i]));
    sr_unref(lv);
    result = sr_tuple(NULL, 0, NULL);
    sr_seq_push(NULL, result, ans);
    if (is_vjp) {
      /* the first-class VJP object (vjp_api.c) takes the linearization */
      sr_seq_push(NULL, result,
                  sr_vjp_new(I, &l->lin, f.ncaptured, f.leaves->seq.items, l->in_tree, ans_tree, saveable, l->name,
                             sr_vjp_fun_info(fun)));
      lin_free(l);
    } else {
      sr_seq_push(NULL, result, sr_obj(&lin_class, l));
    }
    if (has_aux) {
      SrVal *av = sr_seq(NULL, SR_V_LIST, 0);
      for (uint32_t i = nans; i < nout; i++) sr_seq_push(NULL, av, sr_ref(outs[i]));
      sr_seq_push(NULL, result, sr_pytree_unflatten(aux_tree, av));
      sr_unref(av);
    }
  } else {
    free(l);
  }
  for (uint32_t i = 0; i < nout; i++) sr_unref(outs[i]);
  free(outs);
  free(saveable);
  sr_unref(ans_tree);
  sr_unref(aux_tree);
  fn_free(&f);
  return result;
}

static SrVal *jax_vjp(SrInterp *I, SrArgs *a) { return vjp_or_linearize(I, a, 1); }
static SrVal *jax_linearize(SrInterp *I, SrArgs *a) { return vjp_or_linearize(I, a, 0); }

/* ---- jax.jvp ---- */

static SrVal *jax_jvp(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "jvp", "fun, primals, tangents, has_aux=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(p[0]));
  if (!(p[1]->kind == SR_V_TUPLE || p[1]->kind == SR_V_LIST) || !(p[2]->kind == SR_V_TUPLE || p[2]->kind == SR_V_LIST))
  {
    /* type(x).__name__: a class's last dotted component */
    const char *n1 = sr_val_kind_name(p[1]), *n2 = sr_val_kind_name(p[2]);
    if (strrchr(n1, '.')) n1 = strrchr(n1, '.') + 1;
    if (strrchr(n2, '.')) n2 = strrchr(n2, '.') + 1;
    return sr_raise(I, "TypeError", "primal and tangent arguments to jax.jvp must be tuples or lists; found %s and %s.",
                    n1, n2);
  }
  int has_aux = p[3] && sr_val_truthy(p[3]);
  SrVal *pl = sr_pytree_flatten(I, p[1]), *tl = pl ? sr_pytree_flatten(I, p[2]) : NULL;
  if (!pl || !tl) {
    sr_unref(pl);
    return NULL;
  }
  {
    /* ps_ft.tree != ts_ft.tree: the whole structures (a tuple of primals
       and a list of tangents differ) */
    SrBuf pt = SR_BUF_INIT, tt = SR_BUF_INIT;
    sr_vjp_treedef_str(&pt, p[1]);
    sr_vjp_treedef_str(&tt, p[2]);
    if (pl->seq.n != tl->seq.n || strcmp(sr_buf_str(&pt), sr_buf_str(&tt)) != 0) {
      sr_unref(pl);
      sr_unref(tl);
      sr_raise(I, "TypeError",
               "primal and tangent arguments to jax.jvp must have the same tree structure; primals have tree "
               "structure %s whereas tangents have tree structure %s.",
               sr_buf_str(&pt), sr_buf_str(&tt));
      sr_buf_free(&pt);
      sr_buf_free(&tt);
      return NULL;
    }
    sr_buf_free(&pt);
    sr_buf_free(&tt);
  }
  for (int i = 0; i < pl->seq.n; i++) {
    const SrType *pt = sr_value_type(I, pl->seq.items[i]), *tt = sr_value_type(I, tl->seq.items[i]);
    if (!pt || !tt) continue;
    if (sr_dtype_tangent(pt->dtype) != tt->dtype) {
      sr_raise(I, "TypeError",
               "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case of int/bool "
               "primal dtype the tangent dtype must be float0.Got primal dtype %s and so expected tangent dtype %s, "
               "but got tangent dtype %s instead.",
               sr_dtype_name(pt->dtype), sr_dtype_name(sr_dtype_tangent(pt->dtype)), sr_dtype_name(tt->dtype));
      sr_unref(pl);
      sr_unref(tl);
      return NULL;
    }
    int same = pt->ndim == tt->ndim;
    for (int d = 0; same && d < pt->ndim; d++) same = pt->dims[d].size == tt->dims[d].size;
    if (!same) {
      SrBuf b1 = SR_BUF_INIT, b2 = SR_BUF_INIT;
      sr_shape_str(&b1, pt);
      sr_shape_str(&b2, tt);
      sr_raise(I, "ValueError",
               "jvp called with different primal and tangent shapes;Got primal shape %s and tangent shape as %s",
               sr_buf_str(&b1), sr_buf_str(&b2));
      sr_buf_free(&b1);
      sr_buf_free(&b2);
      sr_unref(pl);
      sr_unref(tl);
      return NULL;
    }
  }
  SrArgs pa = {p[1]->seq.n, p[1]->seq.items, 0, NULL, NULL, NULL};
  Fn f;
  SrVal *result = NULL;
  sr_tracers_jvp_next(I, pa.n, pa.v, tl);
  int prep = fn_prepare(I, p[0], &pa, &f);
  sr_trace_next_repr(I, NULL, NULL);
  if (prep == 0) {
    int nl = f.leaves->seq.n;
    SrVal **tan = sr_xcalloc((size_t)nl + 1, sizeof *tan);
    for (int i = f.ncaptured; i < nl; i++) {
      SrVal *t = tl->seq.items[i - f.ncaptured];
      tan[i] = sr_dtype_kind(sr_value_type(I, t)->dtype) == SR_DK_FLOAT0 ? NULL : t;
      if (tan[i] && !sr_array_of(tan[i])) tan[i] = sr_jnp_asarray(I, tan[i], -1);
      else sr_ref(tan[i]);
    }
    uint32_t nout = f.j->nout;
    SrVal **outs = sr_xcalloc(2 * nout + 1, sizeof *outs), **touts = outs + nout;
    if (sr_ad_jvp(I, f.j, f.leaves->seq.items, tan, outs, touts) == 0) {
      int ok = 1;
      for (uint32_t i = 0; i < nout && ok; i++)
        if (!touts[i]) {
          touts[i] = sr_ad_zeros(I, sr_ad_tangent_type(sr_value_type(I, outs[i])));
          ok = touts[i] != NULL;
        }
      for (uint32_t i = 0; i < 2 * nout && ok; i++) {
        SrVal *c = sr_array_concretize(I, outs[i]);
        sr_unref(outs[i]);
        outs[i] = c;
      }
      if (ok) {
        SrVal *pr = fn_result(&f, outs, (int)nout), *tr = fn_result(&f, touts, (int)nout);
        result = sr_tuple(NULL, 0, NULL);
        if (has_aux && pr && sr_is_seq(pr) && pr->seq.n == 2) {
          sr_seq_push(NULL, result, sr_ref(pr->seq.items[0]));
          sr_seq_push(NULL, result, sr_ref(tr->seq.items[0]));
          sr_seq_push(NULL, result, sr_ref(pr->seq.items[1]));
        } else {
          sr_seq_push(NULL, result, sr_ref(pr));
          sr_seq_push(NULL, result, sr_ref(tr));
        }
        sr_unref(pr);
        sr_unref(tr);
      }
    }
    for (uint32_t i = 0; i < 2 * nout; i++) sr_unref(outs[i]);
    free(outs);
    for (int i = 0; i < nl; i++) sr_unref(tan[i]);
    free(tan);
  }
  fn_free(&f);
  sr_unref(pl);
  sr_unref(tl);
  return result;
}

/* ---- jax.linear_transpose ---- */

typedef struct LT {
  SrJaxpr *j;
  SrVal *consts;       /* the captured leaves */
  SrVal *in_tree;      /* the primals' structure */
  SrVal *out_tree;
  const SrType **out_types;
  int nout;
} LT;

static void lt_free(void *d) {
  LT *t = d;
  if (t->j) sr_program_unref(t->j->prog);
  sr_unref(t->consts);
  sr_unref(t->in_tree);
  sr_unref(t->out_tree);
  free(t->out_types);
  free(t);
}

static SrVal *lt_call(SrInterp *I, SrVal *self, SrArgs *a) {
  LT *t = self->obj.data;
  if (a->n != 1) return sr_raise(I, "TypeError", "the transposed function takes one argument, the output cotangent");
  SrVal *cts = sr_pytree_flatten(I, a->v[0]);
  if (!cts) return NULL;
  /* api.linear_transpose's transposed_fun: the cotangent's tree, then
     each leaf's type (core.typecheck: dtype and shape) */
  SrBuf want = SR_BUF_INIT, got = SR_BUF_INIT;
  if (t->out_tree) {
    int k = 0;
    SrVal *n = sr_pytree_numbered(t->out_tree, &k);
    sr_vjp_treedef_str(&want, n);
    sr_unref(n);
    k = 0;
    n = sr_pytree_numbered(a->v[0], &k);
    sr_vjp_treedef_str(&got, n);
    sr_unref(n);
  }
  if (cts->seq.n != t->nout || strcmp(sr_buf_str(&want), sr_buf_str(&got)) != 0) {
    if (t->out_tree)
      sr_raise(I, "TypeError", "cotangent tree does not match function output, expected %s but got %s",
               sr_buf_str(&want), sr_buf_str(&got));
    else
      sr_raise(I, "TypeError", "cotangent tree does not match function output");
    sr_buf_free(&want);
    sr_buf_free(&got);
    sr_unref(cts);
    return NULL;
  }
  sr_buf_free(&want);
  sr_buf_free(&got);
  int typed = 1;
  for (int i = 0; i < t->nout && typed; i++) {
    const SrType *ot = sr_atom_type(t->j->outvars[i]);
    SrVal *c = sr_array_of(cts->seq.items[i]) ? sr_ref(cts->seq.items[i]) : sr_jnp_asarray(I, cts->seq.items[i], -1);
    const SrType *ct = c ? sr_value_type(I, c) : NULL;
    typed = ct && ct->dtype == ot->dtype && ct->ndim == ot->ndim;
    for (int d = 0; typed && d < ot->ndim; d++) typed = ct->dims[d].size == ot->dims[d].size;
    sr_unref(c);
    if (I->exc) sr_exc_clear(I);
  }
  if (!typed) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '[');
    for (int i = 0; i < t->nout; i++) {
      const SrType *ot = sr_atom_type(t->j->outvars[i]);
      sr_buf_printf(&b, "%sShapedArray(", i ? ", " : "");
      sr_type_str(&b, sr_type_strip_sharding(ot), 0);
      sr_buf_puts(&b, ot->weak ? ", weak_type=True)" : ")");
    }
    sr_buf_puts(&b, "] but got ");
    sr_to_repr(I, &b, cts);
    sr_raise(I, "TypeError", "cotangent type does not match function output, expected %s", sr_buf_str(&b));
    sr_buf_free(&b);
    sr_unref(cts);
    return NULL;
  }
  const SrJaxpr *j = t->j;
  uint32_t n = sr_nargs(j), nc = (uint32_t)t->consts->seq.n;
  uint8_t *lin = sr_xcalloc(n + 1, 1);
  SrVal **vals = sr_xcalloc(n + 1, sizeof *vals), **cin = sr_xcalloc(n + 1, sizeof *cin);
  for (uint32_t i = 0; i < n; i++) {
    lin[i] = i >= nc;
    if (i < nc) vals[i] = t->consts->seq.items[i];
  }
  SrVal **cv = sr_xcalloc((size_t)t->nout + 1, sizeof *cv);
  for (int i = 0; i < t->nout; i++) {
    cv[i] = cts->seq.items[i];
    if (!sr_array_of(cv[i])) cv[i] = sr_jnp_asarray(I, cv[i], -1);
    else sr_ref(cv[i]);
  }
  SrVal *r = NULL;
  if (sr_ad_transpose(I, j, lin, vals, cv, cin) == 0) {
    SrVal *lv = sr_seq(NULL, SR_V_LIST, 0);
    int ok = 1;
    for (uint32_t i = nc; i < n && ok; i++) {
      SrVal *c = cin[i];
      if (!c) c = sr_ad_zeros(I, sr_ad_ct_type(sr_args(j)[i]->type));
      else sr_ref(c);
      if (!c) ok = 0;
      else sr_seq_push(NULL, lv, c);
    }
    if (ok) r = sr_pytree_unflatten(t->in_tree, lv);
    sr_unref(lv);
  }
  for (uint32_t i = 0; i < n; i++) sr_unref(cin[i]);
  for (int i = 0; i < t->nout; i++) sr_unref(cv[i]);
  free(cv);
  free(lin);
  free(vals);
  free(cin);
  sr_unref(cts);
  return r;
}

/* the transposed function is a pytree, as api.py's Partial of it over the
   jaxpr's consts: its children the consts */
static const SrClass lt_class;
static SrVal *lt_children(SrVal *self) {
  const LT *t = self->obj.data;
  SrVal *c = sr_seq(NULL, SR_V_LIST, t->consts->seq.n);
  for (int i = 0; i < t->consts->seq.n; i++) sr_seq_push(NULL, c, sr_ref(t->consts->seq.items[i]));
  return c;
}
static SrVal *lt_rebuild(SrVal *self, SrVal *ch) {
  const LT *t = self->obj.data;
  LT *n = sr_xcalloc(1, sizeof *n);
  *n = *t;
  sr_program_ref(n->j->prog);
  n->consts = sr_seq(NULL, SR_V_LIST, t->consts->seq.n);
  for (int i = 0; i < t->consts->seq.n; i++)
    sr_seq_push(NULL, n->consts, sr_ref(i < ch->seq.n ? ch->seq.items[i] : t->consts->seq.items[i]));
  n->in_tree = sr_ref(t->in_tree);
  n->out_tree = t->out_tree ? sr_ref(t->out_tree) : NULL;
  n->out_types = NULL;
  return sr_obj(&lt_class, n);
}
static void lt_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<function transposed_fun>");
}
static const SrLangOps lt_ops = {.call = lt_call, .tree_children = lt_children, .tree_rebuild = lt_rebuild};
static const SrClass lt_class = {"Partial", lt_free, lt_repr, NULL, &lt_ops};

static SrVal *jax_linear_transpose(SrInterp *I, SrArgs *a) {
  if (a->n < 1) return sr_raise(I, "TypeError", "linear_transpose() missing required argument: 'fun'");
  SrVal *fun = a->v[0];
  if (!sr_is_callable(I, fun)) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(fun));
  SrArgs pa = {a->n - 1, a->v + 1, 0, NULL, NULL, NULL};
  /* traced on the primals' types, as a separate jaxpr (not into the
     current trace) */
  SrTrace *saved = I->trace;
  Fn f;
  int rc;
  if (fun->kind == SR_V_JAXPR) {
    rc = fn_prepare(I, fun, &pa, &f);
  } else {
    SrVal **abs = sr_xcalloc((size_t)pa.n + 1, sizeof *abs);
    for (int i = 0; i < pa.n; i++) abs[i] = sr_ref(pa.v[i]);
    rc = fn_prepare(I, fun, &pa, &f);
    for (int i = 0; i < pa.n; i++) sr_unref(abs[i]);
    free(abs);
  }
  I->trace = saved;
  if (rc < 0) {
    fn_free(&f);
    return NULL;
  }
  /* api.py: all inexact, or all integer */
  int ninexact = 0, nint = 0, nall = 0;
  SrBuf ins = SR_BUF_INIT, outs = SR_BUF_INIT;
  for (int i = f.ncaptured; i < f.leaves->seq.n; i++) {
    SrDtype d = sr_value_type(I, f.leaves->seq.items[i])->dtype;
    sr_buf_printf(&ins, "%sdtype('%s')", i > f.ncaptured ? ", " : "", sr_dtype_name(d));
    ninexact += sr_dtype_is_inexact(d), nint += sr_dtype_is_int(d), nall++;
  }
  for (uint32_t i = 0; i < f.j->nout; i++) {
    SrDtype d = sr_atom_type(f.j->outvars[i])->dtype;
    sr_buf_printf(&outs, "%sdtype('%s')", i ? ", " : "", sr_dtype_name(d));
    ninexact += sr_dtype_is_inexact(d), nint += sr_dtype_is_int(d), nall++;
  }
  if (ninexact != nall && nint != nall) {
    sr_raise(I, "TypeError",
             "linear_transpose only supports [float or complex] -> [float or complex], and integer -> "
             "integer functions, but got [%s] -> [%s].",
             sr_buf_str(&ins), sr_buf_str(&outs));
    sr_buf_free(&ins);
    sr_buf_free(&outs);
    fn_free(&f);
    return NULL;
  }
  sr_buf_free(&ins);
  sr_buf_free(&outs);
  LT *t = sr_xcalloc(1, sizeof *t);
  t->j = f.j;
  sr_program_ref(t->j->prog);
  t->consts = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < f.ncaptured; i++) sr_seq_push(NULL, t->consts, sr_ref(f.leaves->seq.items[i]));
  t->in_tree = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < pa.n; i++) sr_seq_push(NULL, t->in_tree, sr_ref(pa.v[i]));
  t->nout = (int)f.j->nout;
  t->out_tree = f.out_tree ? sr_ref(f.out_tree) : NULL;
  fn_free(&f);
  return sr_obj(&lt_class, t);
}

void sr_autodiff_init(void) {
  sr_lax_init();
  sr_def("jax.grad", jax_grad,
         "grad(fun, argnums=0, has_aux=False): a function computing fun's gradient with respect to the argnums "
         "arguments");
  sr_def("jax.value_and_grad", jax_value_and_grad,
         "value_and_grad(fun, argnums=0, has_aux=False): a function returning (fun(*args), gradient)");
  sr_def("jax.vjp", jax_vjp,
         "vjp(fun, *primals, has_aux=False): (fun(*primals), f_vjp), where f_vjp maps an output cotangent to the "
         "inputs' cotangents");
  sr_def("jax.linearize", jax_linearize,
         "linearize(fun, *primals, has_aux=False): (fun(*primals), f_jvp), where f_jvp applies the linearized "
         "function to tangents");
  sr_def("jax.jvp", jax_jvp, "jvp(fun, primals, tangents): (fun(*primals), the Jacobian-vector product)");
  sr_def("jax.linear_transpose", jax_linear_transpose,
         "linear_transpose(fun, *primals): the transpose of the linear function fun, given example arguments");
  sr_vjp_api_init();
}
