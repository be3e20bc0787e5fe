/* commands_ad.c: the REPL's autodiff commands.
 *
 *   :jvp F            the JVP jaxpr: (primals, tangents) -> (outs, tangents)
 *   :linearize F      the forward jaxpr (outs and residuals) and the linear one
 *   :vjp F            (primals, output cotangents) -> (outs, input cotangents)
 *   :transpose F      F taken as linear in all its arguments, transposed
 *   :grad F [ARGNUMS] jax.jit(jax.grad(F, ARGNUMS)).trace(...).jaxpr
 *   :vmap F [IN_AXES] jax.make_jaxpr(jax.vmap(F, IN_AXES))(*ARGS): the batched
 *                     jaxpr (a jaxpr F is batched over a new axis of size
 *                     VMAP_JAXPR_SIZE at each mapped argument's in_axes)
 *   :comm-static F    the equations that imply communication, with their path
 *   :gradcheck F(ARGS) derivatives against finite differences, in float64
 *
 * F is a jaxpr value (traced on its arguments' types) or a call F(ARGS)
 * of any function on example arguments (arrays or jax.ShapeDtypeStruct).
 * `as NAME` at the end binds the jaxpr printed.
 *
 * The commands compose the language's API (jax.jvp, jax.vjp, jax.grad,
 * jax.linear_transpose): what they print is what those functions trace.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "check/check.h"
#include "cmd/commands.h"
#include "cmd/comm_svg.h"
#include "core/jaxstate.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "opt/opt.h"
#include "text/print_val.h"
#include "util/intern.h"

static void out(SrInterp *I, const char *s) { sr_write(I, s, strlen(s)); }

static int usage(SrInterp *I, SrSrc *src, size_t off, const char *msg) {
  sr_error(&I->py->diags, SR_E_USAGE, src, off, "%s", msg);
  return -1;
}

/* Prints a jaxpr value and binds it when asked. */
static int show(SrInterp *I, SrJaxpr *j, const char *bind, const char *title) {
  SrVal *v = sr_jaxpr_val(NULL, j);
  SrBuf b = SR_BUF_INIT;
  if (title) sr_buf_printf(&b, "%s\n", title);
  sr_val_str(&b, v);
  sr_buf_putc(&b, '\n');
  out(I, sr_buf_str(&b));
  sr_buf_free(&b);
  if (bind) sr_global_set(I, sr_intern_cstr(bind), v);
  else sr_unref(v);
  return 0;
}

/* A builtin of the API by name (jax.grad...). */
static SrVal *api(const char *name) { return sr_lookup_qualname(name); }

static SrVal *call(SrInterp *I, SrVal *fn, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv) {
  SrArgs a = {n, v, nkw, kw, kwv, NULL};
  return sr_call(I, fn, &a);
}

/* Traces fn on args (a tuple) at top level: its jaxpr. */
static SrJaxpr *trace_on(SrInterp *I, SrVal *fn, SrVal *args) {
  SrTrace *saved = I->trace;
  I->trace = NULL;
  SrJaxpr *j = sr_trace_fn(I, fn, args->seq.n, args->seq.items, 0, NULL, NULL, 0, NULL, NULL);
  I->trace = saved;
  return j;
}

/* Abstract values of the tangent (or cotangent) types of v's leaves, in
   v's structure. */
static SrVal *tangents_like(SrInterp *I, SrVal *v, int ct) {
  SrVal *l = sr_pytree_flatten(I, v);
  if (!l) return NULL;
  SrVal *t = sr_seq(NULL, SR_V_LIST, l->seq.n);
  for (int i = 0; i < l->seq.n; i++) {
    const SrType *ty = sr_value_type(I, l->seq.items[i]);
    ty = sr_type_with_weak(ct ? sr_ad_ct_type(ty) : sr_ad_tangent_type(ty), 0);
    sr_seq_push(NULL, t, sr_array_abstract(ty));
  }
  SrVal *r = sr_pytree_unflatten(v, t);
  sr_unref(t);
  sr_unref(l);
  return r;
}

/* ---- wrappers traced by the commands ---- */

typedef struct Wrap {
  SrVal *fn;
  int n;
  SrVal *extra;
} Wrap;

static void wrap_free(void *d) {
  Wrap *w = d;
  sr_unref(w->fn);
  sr_unref(w->extra);
  free(w);
}

/* (primals..., tangents...) -> jax.jvp(f, primals, tangents) */
static SrVal *jvp_wrapper(SrInterp *I, SrArgs *a) {
  Wrap *w = sr_current_builtin(I)->data;
  SrVal *p = sr_tuple(NULL, 0, NULL), *t = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < w->n; i++) sr_seq_push(NULL, p, sr_ref(a->v[i]));
  for (int i = w->n; i < a->n; i++) sr_seq_push(NULL, t, sr_ref(a->v[i]));
  SrVal *v[3] = {w->fn, p, t};
  SrVal *r = call(I, api("jax.jvp"), 3, v, 0, NULL, NULL);
  sr_unref(p);
  sr_unref(t);
  return r;
}

/* (primals..., ct) -> (out, f_vjp(ct)) */
static SrVal *vjp_wrapper(SrInterp *I, SrArgs *a) {
  Wrap *w = sr_current_builtin(I)->data;
  SrVal **v = sr_xcalloc((size_t)w->n + 2, sizeof *v);
  v[0] = w->fn;
  for (int i = 0; i < w->n; i++) v[i + 1] = a->v[i];
  SrVal *r = call(I, api("jax.vjp"), w->n + 1, v, 0, NULL, NULL);
  free(v);
  if (!r) return NULL;
  SrVal *cts = sr_call1(I, r->seq.items[1], a->v[w->n]);
  SrVal *res = NULL;
  if (cts) {
    res = sr_tuple(NULL, 0, NULL);
    sr_seq_push(NULL, res, sr_ref(r->seq.items[0]));
    sr_seq_push(NULL, res, cts);
  }
  sr_unref(r);
  return res;
}

/* (ct) -> jax.linear_transpose(f, *examples)(ct) */
static SrVal *transpose_wrapper(SrInterp *I, SrArgs *a) {
  Wrap *w = sr_current_builtin(I)->data;
  SrVal **v = sr_xcalloc((size_t)w->extra->seq.n + 2, sizeof *v);
  v[0] = w->fn;
  for (int i = 0; i < w->extra->seq.n; i++) v[i + 1] = w->extra->seq.items[i];
  SrVal *ft = call(I, api("jax.linear_transpose"), w->extra->seq.n + 1, v, 0, NULL, NULL);
  free(v);
  if (!ft) return NULL;
  SrVal *r = sr_call1(I, ft, a->v[0]);
  sr_unref(ft);
  return r;
}

static SrVal *wrapper(const char *name, SrBuiltinFn fn, SrVal *f, int n, SrVal *extra) {
  Wrap *w = sr_xcalloc(1, sizeof *w);
  w->fn = sr_ref(f);
  w->n = n;
  w->extra = extra ? sr_ref(extra) : NULL;
  return sr_builtin_with(name, fn, w, wrap_free);
}

/* The output of fn on args, abstractly (jax.eval_shape). */
static SrVal *eval_shape(SrInterp *I, SrVal *fn, SrVal *args) {
  SrVal *tree = NULL;
  SrTrace *saved = I->trace;
  I->trace = NULL;
  SrJaxpr *j = sr_trace_fn(I, fn, args->seq.n, args->seq.items, 0, NULL, NULL, 0, &tree, NULL);
  I->trace = saved;
  if (!j) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->nout);
  for (uint32_t i = 0; i < j->nout; i++) sr_seq_push(NULL, l, sr_array_abstract(sr_atom_type(j->outvars[i])));
  SrVal *r = sr_pytree_unflatten(tree, l);
  sr_unref(l);
  sr_unref(tree);
  sr_program_unref(j->prog);
  return r;
}

/* ---- the commands ---- */

static int cmd_jvp(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  if (sr_target_parse(I, arg, src, off, "jvp", 0, &t) < 0) return sr_target_free(&t), -1;
  int n = t.args->seq.n, rc = -1;
  SrVal *all = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, all, sr_ref(t.args->seq.items[i]));
  for (int i = 0; i < n; i++) {
    SrVal *tl = tangents_like(I, t.args->seq.items[i], 0);
    if (!tl) goto done;
    sr_seq_push(NULL, all, tl);
  }
  SrVal *w = wrapper("jvp", jvp_wrapper, t.fn, n, NULL);
  SrJaxpr *j = trace_on(I, w, all);
  sr_unref(w);
  if (j) {
    rc = show(I, j, t.bind, NULL);
    sr_program_unref(j->prog);
  }
done:
  sr_unref(all);
  sr_target_free(&t);
  return rc;
}

static int cmd_vjp(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  if (sr_target_parse(I, arg, src, off, "vjp", 0, &t) < 0) return sr_target_free(&t), -1;
  int rc = -1;
  SrVal *shape = eval_shape(I, t.fn, t.args);
  SrVal *ct = shape ? tangents_like(I, shape, 1) : NULL;
  sr_unref(shape);
  if (ct) {
    SrVal *all = sr_tuple(NULL, 0, NULL);
    for (int i = 0; i < t.args->seq.n; i++) sr_seq_push(NULL, all, sr_ref(t.args->seq.items[i]));
    sr_seq_push(NULL, all, ct);
    SrVal *w = wrapper("vjp", vjp_wrapper, t.fn, t.args->seq.n, NULL);
    SrJaxpr *j = trace_on(I, w, all);
    sr_unref(w);
    sr_unref(all);
    if (j) {
      rc = show(I, j, t.bind, NULL);
      sr_program_unref(j->prog);
    }
  }
  sr_target_free(&t);
  return rc;
}

static int cmd_transpose(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  if (sr_target_parse(I, arg, src, off, "transpose", 0, &t) < 0) return sr_target_free(&t), -1;
  int rc = -1;
  SrVal *shape = eval_shape(I, t.fn, t.args);
  SrVal *ct = shape ? tangents_like(I, shape, 1) : NULL;
  sr_unref(shape);
  if (ct) {
    SrVal *all = sr_tuple(NULL, 0, NULL);
    sr_seq_push(NULL, all, ct);
    SrVal *w = wrapper("transpose", transpose_wrapper, t.fn, 0, t.args);
    SrJaxpr *j = trace_on(I, w, all);
    sr_unref(w);
    sr_unref(all);
    if (j) {
      rc = show(I, j, t.bind, NULL);
      sr_program_unref(j->prog);
    }
  }
  sr_target_free(&t);
  return rc;
}

static int cmd_grad(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  if (sr_target_parse(I, arg, src, off, "grad", 1, &t) < 0) return sr_target_free(&t), -1;
  int rc = -1;
  SrVal *argnums = NULL;
  if (t.rest && *t.rest) {
    argnums = sr_command_eval_part(I, arg, t.rest_at, t.rest_at + strlen(t.rest), src, off);
    if (!argnums) return sr_target_free(&t), -1;
  }
  const char *kw[1] = {sr_intern_cstr("argnums")};
  SrVal *kwv[1] = {argnums};
  SrVal *g = call(I, api("jax.grad"), 1, &t.fn, argnums ? 1 : 0, kw, kwv);
  if (g) {
    SrJaxpr *j = trace_on(I, g, t.args);
    if (j) {
      rc = show(I, j, t.bind, NULL);
      sr_program_unref(j->prog);
    }
    sr_unref(g);
  }
  sr_unref(argnums);
  sr_target_free(&t);
  return rc;
}

/* :vmap of a jaxpr: the size of the axis its arguments are batched over */
#define VMAP_JAXPR_SIZE 2

/* The batched arguments of a jaxpr's one-example arguments (abstract, in
   args): a new axis of VMAP_JAXPR_SIZE at each one's axis of in_axes (an
   int or None for all, or a tuple of them). */
static SrVal *vmap_jaxpr_args(SrInterp *I, SrVal *args, SrVal *in_axes) {
  int n = args->seq.n;
  if (in_axes && in_axes->kind == SR_V_TUPLE && in_axes->seq.n != n)
    return sr_raise(I, "ValueError",
                    "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                    "arguments passed to the function, but got len(in_axes)=%d, len(args)=%d.",
                    in_axes->seq.n, n);
  SrVal *r = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < n; i++) {
    SrVal *ax = !in_axes ? NULL : in_axes->kind == SR_V_TUPLE ? in_axes->seq.items[i] : in_axes;
    const SrType *t = sr_value_type(I, args->seq.items[i]);
    if (ax && ax->kind == SR_V_NONE) {
      sr_seq_push(NULL, r, sr_ref(args->seq.items[i]));
      continue;
    }
    int64_t a = 0;
    if (ax && ax->kind != SR_V_INT) {
      sr_unref(r);
      return sr_raise(I, "TypeError", ":vmap of a jaxpr takes in_axes of ints and None, got %s", sr_val_kind_name(ax));
    }
    if (ax) a = ax->i < 0 ? ax->i + t->ndim + 1 : ax->i;
    if (a < 0 || a > t->ndim || t->ndim >= SR_MAX_RANK) {
      sr_unref(r);
      return sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)ax->i,
                      t->ndim + 1);
    }
    SrTypeBuilder tb;
    sr_type_builder(&tb, t);
    memmove(&tb.dims[a + 1], &tb.dims[a], (size_t)(tb.ndim - a) * sizeof tb.dims[0]);
    memset(&tb.dims[a], 0, sizeof tb.dims[a]);
    tb.dims[a].size = VMAP_JAXPR_SIZE;
    tb.ndim++;
    sr_seq_push(NULL, r, sr_array_abstract(sr_type_get(&tb)));
  }
  return r;
}

static int cmd_vmap(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  if (sr_target_parse(I, arg, src, off, "vmap", 1, &t) < 0) return sr_target_free(&t), -1;
  int rc = -1;
  SrVal *in_axes = NULL, *args = NULL, *vm = NULL;
  if (t.rest && *t.rest) {
    in_axes = sr_command_eval_part(I, arg, t.rest_at, t.rest_at + strlen(t.rest), src, off);
    if (!in_axes) goto done;
  }
  if (t.abstract) {
    args = vmap_jaxpr_args(I, t.args, in_axes);
    if (!args) goto done;
  } else {
    args = sr_ref(t.args);
  }
  const char *kw[1] = {sr_intern_cstr("in_axes")};
  SrVal *kwv[1] = {in_axes};
  vm = call(I, api("jax.vmap"), 1, &t.fn, in_axes ? 1 : 0, kw, kwv);
  if (vm) {
    SrJaxpr *j = trace_on(I, vm, args);
    if (j) {
      rc = show(I, j, t.bind, NULL);
      sr_program_unref(j->prog);
    }
  }
done:
  sr_unref(vm);
  sr_unref(args);
  sr_unref(in_axes);
  sr_target_free(&t);
  return rc;
}

/* The function of a target as a jaxpr over its flat arguments. */
static SrJaxpr *target_jaxpr(SrInterp *I, SrTarget *t) {
  if (t->fn->kind == SR_V_JAXPR) {
    sr_program_ref(t->fn->jx.jaxpr->prog);
    return t->fn->jx.jaxpr;
  }
  return trace_on(I, t->fn, t->args);
}

static int cmd_linearize(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  if (sr_target_parse(I, arg, src, off, "linearize", 0, &t) < 0) return sr_target_free(&t), -1;
  int rc = -1;
  SrJaxpr *j = target_jaxpr(I, &t);
  if (j) {
    uint32_t n = sr_nargs(j);
    uint8_t *nz = sr_xcalloc(n + 1, 1);
    for (uint32_t i = 0; i < n; i++) nz[i] = sr_ad_differentiable(sr_args(j)[i]->type);
    SrAd ad;
    sr_ad_begin(&ad, I, SR_AD_LIN);
    SrLinJaxprs lj;
    SrTrace *saved = I->trace;
    I->trace = NULL;
    if (sr_ad_linearize_jaxpr(&ad, j, nz, NULL, NULL, &lj) == 0) {
      I->trace = saved;
      SrBuf b = SR_BUF_INIT;
      sr_buf_printf(&b, "# forward: the outputs, then %d residual%s", lj.nres, lj.nres == 1 ? "" : "s");
      int nf = 0;
      for (int r = 0; r < lj.nres; r++) nf += lj.in_fwd[r] != 0;
      if (nf) sr_buf_printf(&b, " (%d of them arguments, passed along)", nf);
      show(I, lj.fwd, NULL, sr_buf_str(&b));
      sr_buf_reset(&b);
      sr_buf_puts(&b, "# linear: the residuals, then the tangents");
      show(I, lj.lin, t.bind, sr_buf_str(&b));
      sr_buf_free(&b);
      sr_ad_lin_jaxprs_free(&lj);
      rc = 0;
    }
    I->trace = saved;
    sr_ad_end(&ad);
    free(nz);
    sr_program_unref(j->prog);
  }
  sr_target_free(&t);
  return rc;
}

/* ---- :comm-static ---- */

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

static void axes_names(SrBuf *b, const SrMesh *m, SrAxes a) {
  int k = 0;
  for (int i = 0; m && i < m->n; i++)
    if (a & (1u << i)) sr_buf_printf(b, k++ ? ",%s" : "%s", m->names[i]);
}

/* A line of :comm-static in the figure asked for (comm_svg.c): "PATH: TYPES  # WHAT". */
static void comm_fig_band(const char *line, const char *what, const SrMesh *m, SrAxes a) {
  SrCommFig *fig = sr_comm_fig_static;
  if (!fig->mesh && m) fig->mesh = m;
  const char *colon = strstr(line, ": ");
  char *path = sr_xstrdup(line), *types = NULL;
  if (colon) {
    path[colon - line] = 0;
    types = sr_xstrdup(colon + 2);
    char *hash = strstr(types, "  # ");
    if (hash) *hash = 0;
  }
  SrBuf ax = SR_BUF_INIT;
  if (a && m) sr_axes_tuple_str(&ax, m, a);
  sr_comm_fig_add(fig, what, sr_buf_str(&ax), m == fig->mesh ? a : 0, path, types, 0, 1);
  sr_buf_free(&ax);
  free(path);
  free(types);
}

static void comm_line(SrInterp *I, const char *path, const SrEqn *e, const char *what, const SrMesh *m, SrAxes a,
                      int *count) {
  SrBuf b = SR_BUF_INIT, raw = SR_BUF_INIT;
  /* the op name: the path, the equation's name stack and the primitive,
     rendered as JAX's NameStack (ir/name_stack.h) */
  sr_buf_printf(&raw, "%s%s%s%s%s", path, *path && e->ns ? "/" : "", e->ns ? e->ns : "",
                *path || e->ns ? "/" : "", e->prim->name);
  sr_ns_render_op(&b, sr_buf_str(&raw));
  sr_buf_free(&raw);
  sr_buf_puts(&b, ": ");
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *t = e->in[i]->type;
    sr_buf_printf(&b, "%s%s", i ? " " : "", t ? sr_type_short(t) : "?");
  }
  sr_buf_puts(&b, " -> ");
  for (uint32_t i = 0; i < e->nout; i++) sr_buf_printf(&b, "%s%s", i ? " " : "", sr_type_short(e->out[i]->type));
  sr_buf_printf(&b, "  # %s", what);
  if (sr_comm_fig_static) comm_fig_band(b.p, what, m, a);
  if (a) {
    sr_buf_puts(&b, " over ");
    axes_names(&b, m, a);
  }
  sr_buf_putc(&b, '\n');
  out(I, sr_buf_str(&b));
  sr_buf_free(&b);
  (*count)++;
}

static void comm_walk(SrInterp *I, const SrJaxpr *j, const char *path, int *count);

static void comm_eqn(SrInterp *I, const SrEqn *e, const char *path, int *count) {
  int id = e->prim->id;
  SrCommNote notes[4];
  int nn = sr_prim_comm_notes(e, notes, 4);
  for (int i = 0; i < nn && i < 4; i++) comm_line(I, path, e, notes[i].what, notes[i].mesh, notes[i].axes, count);
  if (nn >= 0) return;
  /* nested jaxprs */
  SrJaxpr *subs[64];
  for (uint32_t p = 0; p < e->nparams; p++) {
    int ns = sr_param_jaxprs(e->params[p].val, subs, 64);
    for (int s = 0; s < ns && s < 64; s++) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_puts(&b, path);
      if (*path) sr_buf_putc(&b, '/');
      if (e->ns) sr_buf_printf(&b, "%s/", e->ns);
      const char *key = e->params[p].key;
      switch (id) {
      case SR_P_jit: case SR_P_pjit: {
        SrVal *nm = param(e, "name");
        if (nm && (nm->kind == SR_V_STR || nm->kind == SR_V_WORD)) sr_buf_printf(&b, "jit(%.*s)", (int)nm->str.n, nm->str.s);
        else sr_buf_puts(&b, "jit");
        break;
      }
      case SR_P_scan: sr_buf_puts(&b, "while/body"); break;
      case SR_P_while: sr_buf_puts(&b, strcmp(key, "cond_jaxpr") == 0 ? "while/cond" : "while/body"); break;
      case SR_P_cond: sr_buf_printf(&b, "cond/branch_%d", s); break;
      default: sr_buf_puts(&b, e->prim->name); break;
      }
      comm_walk(I, subs[s], sr_buf_str(&b), count);
      sr_buf_free(&b);
    }
  }
}

/* Equations whose results nothing uses are dead: the compiler removes
   them with their communication, so they are not listed. */
static void comm_walk(SrInterp *I, const SrJaxpr *j, const char *path, int *count) {
  uint8_t *live = sr_xcalloc(j->nvars + 1, 1), *keep = sr_xcalloc(j->neqn + 1, 1);
  for (uint32_t i = 0; i < j->nout; i++)
    if (j->outvars[i]->kind == SR_VAR) live[j->outvars[i]->id] = 1;
  for (uint32_t k = j->neqn; k-- > 0;) {
    const SrEqn *e = &j->eqns[k];
    int need = (e->prim->flags & SR_PF_COLL) != 0;
    for (uint32_t i = 0; i < e->nout && !need; i++) need = e->out[i]->kind == SR_VAR && live[e->out[i]->id];
    if (!need) continue;
    keep[k] = 1;
    for (uint32_t i = 0; i < e->nin; i++)
      if (e->in[i]->kind != SR_LIT) live[e->in[i]->id] = 1;
  }
  for (uint32_t k = 0; k < j->neqn; k++)
    if (keep[k]) comm_eqn(I, &j->eqns[k], path, count);
  free(live);
  free(keep);
}

static int cmd_comm_static(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  SrCommFig fig = {0};
  if (sr_comm_fig_opts(I, &arg, &off, src, "comm-static", &fig) < 0) return sr_comm_fig_free(&fig), -1;
  if (sr_target_parse(I, arg, src, off, "comm-static", 0, &t) < 0) return sr_target_free(&t), sr_comm_fig_free(&fig), -1;
  SrJaxpr *j = target_jaxpr(I, &t);
  if (!j) return sr_target_free(&t), sr_comm_fig_free(&fig), -1;
  if (fig.svg || fig.html) sr_comm_fig_static = &fig;
  int count = 0;
  SrBuf b = SR_BUF_INIT;
  const char *nm = j->name ? j->name : "";
  if (t.fn->kind != SR_V_JAXPR && sr_builtin_name(t.fn)) nm = sr_builtin_name(t.fn);
  sr_buf_puts(&b, *nm ? "jit(" : "");
  sr_buf_puts(&b, nm);
  sr_buf_puts(&b, *nm ? ")" : "");
  comm_walk(I, j, sr_buf_str(&b), &count);
  if (!count) out(I, "no communication\n");
  int rc = 0;
  if (sr_comm_fig_static) {
    sr_comm_fig_static = NULL;
    SrBuf title = SR_BUF_INIT;
    sr_buf_printf(&title, ":comm-static %s", arg);
    fig.title = sr_xstrdup(sr_buf_str(&title));
    sr_buf_free(&title);
    if (!fig.mesh) fig.mesh = I->jax->mesh, fig.ndev = I->jax->num_devices;
    rc = sr_comm_fig_finish(I, &fig);
  }
  sr_comm_fig_free(&fig);
  sr_buf_free(&b);
  sr_program_unref(j->prog);
  sr_target_free(&t);
  return rc;
}

/* ---- :optimize ---- */

/* F's jaxpr after the optimization pass of lib/opt (inlining, shard_map
   fusion, CSE, DCE): what jit(F).lower(...).compile() stands for. */
static int cmd_optimize(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  if (sr_target_parse(I, arg, src, off, "optimize", 0, &t) < 0) return sr_target_free(&t), -1;
  SrJaxpr *j = target_jaxpr(I, &t);
  if (!j) return sr_target_free(&t), -1;
  const char *nm = j->name ? j->name : "";
  if (t.fn->kind != SR_V_JAXPR && sr_builtin_name(t.fn)) nm = sr_builtin_name(t.fn);
  SrOptStats st;
  SrJaxpr *o = sr_opt_optimize(j, nm, NULL, &st);
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b,
                "# optimized: %d equation%s (was %lld): inlined %d call%s, fused %d shard_map%s, merged %d (CSE), "
                "removed %d (DCE)",
                st.eqns_out, st.eqns_out == 1 ? "" : "s", (long long)st.eqns_in, st.inlined, st.inlined == 1 ? "" : "s",
                st.fused, st.fused == 1 ? "" : "s", st.cse, st.dce);
  show(I, o, t.bind, sr_buf_str(&b));
  sr_buf_free(&b);
  sr_program_unref(o->prog);
  sr_program_unref(j->prog);
  sr_target_free(&t);
  return 0;
}

/* ---- :gradcheck ---- */

/* Deterministic directions in [-1, 1]. */
static double rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)((*s >> 11) & ((1ull << 52) - 1)) / (double)(1ull << 51) - 1.0;
}

/* A direction of t's type; a complex one has random imaginary parts too
   (a direction in R^2 per element). */
static SrVal *random_like(SrInterp *I, const SrType *t, uint64_t *seed) {
  int64_t n = sr_type_numel(t);
  if (n < 0 || !sr_backend_hooks.from_host) return NULL;
  int cplx = sr_dtype_kind(t->dtype) == SR_DK_COMPLEX;
  double *re = sr_xcalloc((size_t)n + 1, sizeof *re), *im = cplx ? sr_xcalloc((size_t)n + 1, sizeof *im) : NULL;
  for (int64_t i = 0; i < n; i++) {
    re[i] = rnd(seed);
    if (im) im[i] = rnd(seed);
  }
  struct SrArray *a = sr_backend_hooks.from_host(I, sr_type_with_weak(t, 0), re, im, NULL);
  free(re);
  free(im);
  return a ? sr_array_concrete(a) : NULL;
}

/* One line of :gradcheck's report: NAME's relative error ERR against TOL.
 * An error that passes prints as a bound, the least power of ten above it
 * but no less than NOISE, the rounding noise the check cannot see below
 * (its digits change with the BLAS kernel and the CPU); one that fails
 * prints as it is. */
static void gradcheck_line(SrBuf *b, const char *name, double err, double tol, double noise) {
  if (err <= tol) {
    double bound = noise;
    while (bound <= err) bound *= 10;
    sr_buf_printf(b, "%s: relative error < %.0e, tolerance %.0e  ok\n", name, bound, tol);
  } else {
    sr_buf_printf(b, "%s: relative error %.2e, tolerance %.0e  FAILED\n", name, err, tol);
  }
}

/* <a, b> summed over all elements, as a Python float (eager).  Complex
   values pair as JAX's transposes pair them, Re(sum(a * b)) (a linear
   map's transpose is its adjoint for that pairing), or with conj, as
   Re(sum(conj(a) * b)), whose <d, d> is the squared norm. */
static int dot_scalar(SrAd *ad, SrVal *a, SrVal *b, double *out, int conj) {
  const SrType *at = sr_ad_type(ad, a);
  if (conj && at && sr_dtype_kind(at->dtype) == SR_DK_COMPLEX)
    a = sr_ad_bindv(ad, SR_P_conj, 1, &a, "input_dtype", sr_dtype_val(NULL, at->dtype), NULL);
  SrVal *p = sr_ad_mul(ad, a, b);
  const SrType *t = sr_ad_type(ad, p);
  if (!t) return -1;
  int64_t axes[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) axes[i] = i;
  SrVal *s = t->ndim ? sr_ad_reduce_sum(ad, p, axes, t->ndim, NULL) : p;
  SrArrayObj *ao = sr_array_of(s);
  if (!ao || ao->kind != SR_AV_CONCRETE || !sr_backend_hooks.array_item) {
    sr_raise(ad->I, "RuntimeError", ":gradcheck needs concrete arrays: evaluation is not available");
    return -1;
  }
  SrVal *item = sr_backend_hooks.array_item(ad->I, ao->data);
  if (!item) return -1;
  *out = item->kind == SR_V_FLOAT ? item->f : item->kind == SR_V_COMPLEX ? item->c.re : (double)item->i;
  sr_unref(item);
  return 0;
}

static int cmd_gradcheck(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrTarget t;
  if (sr_target_parse(I, arg, src, off, "gradcheck", 0, &t) < 0) return sr_target_free(&t), -1;
  if (I->trace) return sr_target_free(&t), usage(I, src, off, ":gradcheck runs eagerly, not inside a trace");
  if (!sr_backend_hooks.from_host) return sr_target_free(&t), usage(I, src, off, ":gradcheck needs the evaluator (concrete arrays)");
  int rc = -1, saved_x64 = I->jax->enable_x64;
  int traced = t.fn->kind != SR_V_JAXPR;
  SrAd ad;
  sr_ad_begin(&ad, I, SR_AD_BWD);
  SrJaxpr *j = NULL;
  SrVal **x = NULL, **v = NULL, **w = NULL, **y = NULL, **ty = NULL, **yp = NULL, **ym = NULL;
  SrVal *leaves = NULL;
  /* the arguments, in float64 for a traced function (x64 on) */
  if (traced) I->jax->enable_x64 = 1;
  leaves = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < t.args->seq.n; i++) {
    SrVal *l = sr_pytree_flatten(I, t.args->seq.items[i]);
    if (!l) goto done;
    for (int k = 0; k < l->seq.n; k++) {
      SrVal *a = sr_jnp_asarray(I, l->seq.items[k], -1);
      if (!a) {
        sr_unref(l);
        goto done;
      }
      const SrType *at = sr_value_type(I, a);
      if (traced && sr_dtype_is_float(at->dtype) && at->dtype != SR_F64) {
        SrVal *c = sr_ref(sr_ad_convert(&ad, a, SR_F64, 0));
        sr_unref(a);
        a = c;
        if (!a) {
          sr_unref(l);
          goto done;
        }
      }
      sr_seq_push(NULL, leaves, a);
    }
    sr_unref(l);
  }
  {
    SrVal *targs = sr_pytree_unflatten(t.args, leaves);
    SrTrace *saved = I->trace;
    j = traced ? sr_trace_fn(I, t.fn, targs->seq.n, targs->seq.items, 0, NULL, NULL, 0, NULL, NULL)
               : t.fn->jx.jaxpr;
    I->trace = saved;
    sr_unref(targs);
    if (!j) goto done;
    if (!traced) sr_program_ref(j->prog);
  }
  uint32_t n = sr_nargs(j), no = j->nout;
  if ((uint32_t)leaves->seq.n != n) {
    usage(I, src, off, ":gradcheck: the function closes over traced values; pass them as arguments");
    goto done;
  }
  x = leaves->seq.items;
  v = sr_xcalloc(n + 1, sizeof *v);
  w = sr_xcalloc(no + 1, sizeof *w);
  y = sr_xcalloc(no + 1, sizeof *y);
  ty = sr_xcalloc(no + 1, sizeof *ty);
  uint64_t seed = 12345;
  for (uint32_t i = 0; i < n; i++) {
    const SrType *at = sr_value_type(I, x[i]);
    if (sr_ad_differentiable(at) && !(v[i] = random_like(I, at, &seed))) goto done;
  }
  if (sr_ad_jvp(I, j, x, v, y, ty) < 0) goto done;
  /* central differences: f(x + h v) - f(x - h v) over 2h */
  int f64 = 1;
  for (uint32_t i = 0; i < n; i++)
    if (v[i] && sr_value_type(I, x[i])->dtype != SR_F64) f64 = 0;
  double h = f64 ? 1e-6 : 1e-3;
  SrVal **xp = sr_xcalloc(n + 1, sizeof *xp), **xm = sr_xcalloc(n + 1, sizeof *xm);
  for (uint32_t i = 0; i < n; i++) {
    if (!v[i]) {
      xp[i] = xm[i] = x[i];
      continue;
    }
    const SrType *at = sr_value_type(I, x[i]);
    SrVal *hv = sr_ad_mul(&ad, v[i], sr_ad_scalar(&ad, at->dtype, 0, h));
    xp[i] = sr_ad_binop(&ad, SR_P_add, x[i], hv);
    xm[i] = sr_ad_binop(&ad, SR_P_sub, x[i], hv);
    if (!xp[i] || !xm[i]) {
      free(xp);
      free(xm);
      goto done;
    }
  }
  SrVal *rp = sr_eval_jaxpr(I, j, (int)n, xp), *rm = rp ? sr_eval_jaxpr(I, j, (int)n, xm) : NULL;
  free(xp);
  free(xm);
  if (!rp || !rm) {
    sr_unref(rp);
    goto done;
  }
  double err = 0, scale = 0, lhs = 0, rhs = 0;
  int ok = 1;
  for (uint32_t k = 0; k < no && ok; k++) {
    const SrType *ot = sr_value_type(I, y[k]);
    if (!sr_ad_differentiable(ot)) continue;
    SrVal *tk = ty[k] ? ty[k] : sr_ad_full(&ad, ot, 0.0);
    SrVal *fd = sr_ad_div(&ad, sr_ad_binop(&ad, SR_P_sub, rp->seq.items[k], rm->seq.items[k]), sr_ad_scalar(&ad, ot->dtype, 0, 2 * h));
    SrVal *diff = sr_ad_binop(&ad, SR_P_sub, fd, tk);
    double e2, s2;
    if (dot_scalar(&ad, diff, diff, &e2, 1) < 0 || dot_scalar(&ad, fd, fd, &s2, 1) < 0) {
      ok = 0;
      break;
    }
    err += e2;
    scale += s2;
    /* the dot-product test of the VJP: <w, J v> = <J^T w, v> */
    if (!(w[k] = random_like(I, ot, &seed))) ok = 0;
    double d;
    if (ok && dot_scalar(&ad, w[k], tk, &d, 0) < 0) ok = 0;
    rhs += d;
  }
  sr_unref(rp);
  sr_unref(rm);
  if (!ok) goto done;
  {
    SrLinear lin;
    SrVal **outs = sr_xcalloc(no + 1, sizeof *outs), **cin = sr_xcalloc(n + 1, sizeof *cin);
    int lrc = sr_ad_linearize(I, j, x, NULL, NULL, outs, &lin);
    if (lrc == 0) lrc = sr_ad_vjp_apply(I, &lin, w, cin, 1);
    for (uint32_t i = 0; lrc == 0 && i < n; i++) {
      double d;
      if (!v[i] || !cin[i]) continue;
      if (dot_scalar(&ad, cin[i], v[i], &d, 0) < 0) lrc = -1;
      lhs += d;
    }
    for (uint32_t i = 0; i < no; i++) sr_unref(outs[i]);
    for (uint32_t i = 0; i < n; i++) sr_unref(cin[i]);
    free(outs);
    free(cin);
    if (lrc == 0) sr_ad_linear_free(&lin);
    if (lrc < 0) goto done;
  }
  {
    double rel = sqrt(err) / (sqrt(scale) > 1e-30 ? sqrt(scale) : 1.0);
    double rel2 = fabs(lhs - rhs) / (fabs(rhs) > 1e-30 ? fabs(rhs) : 1.0);
    double tol = f64 ? 1e-6 : 2e-2, tol2 = f64 ? 1e-10 : 1e-4;
    /* the noise: about eps / h for the differences (2e-10 in float64, 1e-4
       in float32), some eps for the identity; the floors sit well above */
    double noise = f64 ? 1e-8 : 1e-3, noise2 = f64 ? 1e-13 : 1e-5;
    SrBuf b = SR_BUF_INIT;
    char name[64];
    snprintf(name, sizeof name, "jvp vs central differences (%s, h=%g)", f64 ? "float64" : "float32", h);
    gradcheck_line(&b, name, rel, tol, noise);
    gradcheck_line(&b, "vjp vs jvp, <w, J v> = <J^T w, v>", rel2, tol2, noise2);
    out(I, sr_buf_str(&b));
    sr_buf_free(&b);
    rc = rel <= tol && rel2 <= tol2 ? 0 : -1;
    if (rc < 0) usage(I, src, off, ":gradcheck: the derivatives disagree");
  }
done:
  I->jax->enable_x64 = saved_x64;
  sr_ad_end(&ad);
  if (j) {
    uint32_t n2 = sr_nargs(j), no2 = j->nout;
    for (uint32_t i = 0; v && i < n2; i++) sr_unref(v[i]);
    for (uint32_t i = 0; i < no2; i++) {
      if (w) sr_unref(w[i]);
      if (y) sr_unref(y[i]);
      if (ty) sr_unref(ty[i]);
    }
    sr_program_unref(j->prog);
  }
  free(v);
  free(w);
  free(y);
  free(ty);
  (void)yp;
  (void)ym;
  sr_unref(leaves);
  sr_target_free(&t);
  return rc;
}

void sr_commands_ad_init(void) {
  static const SrCommand cmds[] = {
      {"jvp", NULL, "F", "print the JVP jaxpr of F (a jaxpr, or f(ARGS)): (primals, tangents) -> (outs, tangents)",
       cmd_jvp},
      {"linearize", NULL, "F", "print F's forward jaxpr (outputs and residuals) and its linear jaxpr", cmd_linearize},
      {"vjp", NULL, "F", "print the VJP jaxpr of F: (primals, output cotangents) -> (outs, input cotangents)", cmd_vjp},
      {"transpose", NULL, "F", "print the transpose of F, taken as linear in all its arguments", cmd_transpose},
      {"grad", NULL, "F [ARGNUMS]", "print jax.jit(jax.grad(F, ARGNUMS)).trace(...).jaxpr; `as NAME` binds it", cmd_grad},
      {"vmap", NULL, "F [IN_AXES]",
       "print the batched jaxpr of F: jax.make_jaxpr(jax.vmap(F, IN_AXES))(ARGS); `as NAME` binds it", cmd_vmap},
      {"comm-static", NULL, "F", "list F's equations that imply communication, with their nesting path (--svg FILE F or --html FILE F also draws them)",
       cmd_comm_static},
      {"optimize", NULL, "F", "print F's jaxpr after inlining, shard_map fusion, CSE and DCE (what XLA would run)",
       cmd_optimize},
      {"gradcheck", NULL, "F(ARGS)", "check F's JVP against finite differences (float64) and its VJP against the JVP",
       cmd_gradcheck},
  };

  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) sr_command_add(&cmds[i]);
}
