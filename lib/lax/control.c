/* control.c: the rules of calls and control flow: jit and the other calls, remat,
 * custom_jvp/custom_vjp calls and custom_lin, optimization_barrier,
 * while, scan, cond (pjit.py, custom_derivatives.py, lax/control_flow/).
 *
 * The family's helpers, then each primitive's (or each group sharing
 * rules') type, eval, JVP and transpose rules and communication note side
 * by side in that order under its heading, then the family's registration
 * sr_lax_control_init (lax/lax.h says what a family file holds and uses).
 */
#include "lax/lax.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "exec/comm.h"
#include "exec/eval.h"
#include "exec/ew_pieces.h"
#include "exec/kern.h"
#include "exec/layout.h"
#include "core/jaxstate.h"
#include "check/rule.h"
#include "text/print_val.h"
#include "util/intern.h"
#include "util/mem.h"

/* ==== the family's helpers ==== */

/* type rules of calls and control flow -- jit and the
 * call primitives of older texts, remat, custom_jvp/custom_vjp calls,
 * optimization_barrier, scan, while and cond.
 *
 * Every nested jaxpr is checked through cx->check_body, in the caller's
 * context (mesh, check_vma), and its output types become the results.
 * The messages are those of JAX's jaxpr type checks (core.py: _check_call;
 * loops.py: _scan_typecheck, _while_loop_abstract_eval; conditionals.py:
 * _cond_typecheck) and, where a printed jaxpr still carries what they
 * need, those of the lax.scan / lax.while_loop front ends
 * (_check_carry_type).
 */

/* The type written for result i, or NULL (tracing). */
static const SrType *written_type(const SrRuleEqn *e, uint32_t i) { return e->written ? e->written[i] : NULL; }

/* The jaxpr held by the first of the params named that is present. */
static const SrJaxpr *jaxpr_param(const SrRuleEqn *e, const char *const *keys) {
  for (; *keys; keys++) {
    SrVal *v = sr_rparam(e, *keys);
    if (v && v->kind == SR_V_JAXPR) return v->jx.jaxpr;
  }
  return NULL;
}

/* Checks a body with the given input types (NULL: the types written on
   its binders) and gives its output types. */
static int run_body(SrTypeCtx *cx, const SrJaxpr *body, const SrType *const *in, uint32_t nin,
                    const SrType **out) {
  if (cx->check_body) return cx->check_body(cx, body, in, nin, out);
  for (uint32_t i = 0; i < body->nout; i++) out[i] = body->outvars[i]->type;
  return 0;
}

/* core.typematch: everything but weak types.  A type not known (a bare
   literal, an old printer's `*`) matches anything. */
static int same_type(const SrType *a, const SrType *b) {
  if (a == b || !a || !b) return 1;
  SrDtype unknown = sr_dtype_intern("*", 1);
  if (a->dtype == unknown || b->dtype == unknown) return 1;
  return sr_type_equal_mod_mesh(sr_type_with_weak(a, 0), sr_type_with_weak(b, 0));
}

/* A jaxpr's argument types (constvars aside) and output types, as
   written. */
static const SrType *arg_type(const SrJaxpr *j, uint32_t i) { return sr_args(j)[i]->type; }

static const SrType *out_type(const SrJaxpr *j, uint32_t i) { return j->outvars[i]->type; }

static void put_type(SrBuf *b, const SrType *t) {
  if (t) sr_type_str(b, t, 0);
  else sr_buf_putc(b, '?');
}

/* _avals_short: the types' str_short(), long dtype names, space
   separated. */
static void put_avals(SrBuf *b, const SrType *const *ts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (i) sr_buf_putc(b, ' ');
    put_type(b, ts[i]);
  }
}

/* repr(aval): ShapedArray(float32[3]{V:i}, weak_type=True) */
static void put_aval_repr(SrBuf *b, const SrType *t) {
  sr_buf_puts(b, "ShapedArray(");
  sr_type_str(b, t, 0);
  sr_buf_puts(b, t->weak ? ", weak_type=True)" : ")");
}

/* str of the treedef of a flat tuple of n leaves: PyTreeDef((*, *)), and
   PyTreeDef(*) for one */
static void put_tuple_treedef(SrBuf *b, uint32_t n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, (int)n);
  for (uint32_t i = 0; i < n; i++) sr_seq_push(NULL, t, sr_bool(0));
  sr_treedef_str(b, n == 1 ? t->seq.items[0] : t, NULL);
  sr_unref(t);
}

static int report(SrTypeCtx *cx, const char *exc, SrBuf *b) {
  sr_terr(cx, exc, "%s", sr_buf_str(b));
  sr_buf_free(b);
  return -1;
}

static void put_frozenset(SrBuf *b, const SrMesh *m, SrAxes a) {
  if (!a || !m) {
    sr_buf_puts(b, "frozenset()");
    return;
  }
  sr_buf_puts(b, "frozenset({");
  int k = 0;
  for (int i = 0; i < m->n; i++) {
    if (!(a & (1u << i))) continue;
    sr_buf_printf(b, k++ ? ", '%s'" : "'%s'", m->names[i]);
  }
  sr_buf_puts(b, "})");
}

/* "the input carry" / "the input carry at path [i]" (lax.scan and
   lax.while_loop name the carry by its path in the init tree; a printed
   jaxpr keeps only the flat list). */
static void put_carry_component(SrBuf *b, uint32_t i, uint32_t n) {
  if (n == 1) sr_buf_puts(b, "the input carry");
  else sr_buf_printf(b, "the input carry at path [%u]", i);
}

/* The axes of m that the context makes Manual. */
static SrAxes manual_in(SrTypeCtx *cx, const SrMesh *m) {
  SrAxes s = 0;
  for (int i = 0; m && cx->mesh && i < m->n; i++) {
    int j = sr_mesh_axis(cx->mesh, m->names[i]);
    if (j >= 0 && cx->mesh->types[j] == SR_AXIS_MANUAL) s |= 1u << i;
  }
  return s;
}

/* The names of a set of axes of m, in mesh order, each as fmt prints it,
   separated by sep. */
static void put_names(SrBuf *b, const SrMesh *m, SrAxes a, const char *fmt, const char *sep) {
  int k = 0;
  for (int i = 0; m && i < m->n; i++) {
    if (!(a & (1u << i))) continue;
    if (k++) sr_buf_puts(b, sep);
    sr_buf_printf(b, fmt, m->names[i]);
  }
}

/* A type's ManualAxisType as text, to compare types on different meshes. */
static void put_mat(SrBuf *b, SrTypeCtx *cx, const SrType *t) {
  SrAxes man = manual_in(cx, t->mesh);
  sr_buf_puts(b, "V:");
  put_names(b, t->mesh, t->varying, "%s", ",");
  sr_buf_puts(b, " U:");
  put_names(b, t->mesh, t->unreduced & man, "%s", ",");
  sr_buf_printf(b, " K:%d R:", t->unreduced & man ? t->ukind : 0);
  put_names(b, t->mesh, t->reduced & man, "%s", ",");
}

static int mat_differs(SrTypeCtx *cx, const SrType *a, const SrType *o) {
  SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
  put_mat(&x, cx, a);
  put_mat(&y, cx, o);
  int d = strcmp(sr_buf_str(&x), sr_buf_str(&y)) != 0;
  sr_buf_free(&x);
  sr_buf_free(&y);
  return d;
}

/* core.aval_mismatch_extra */
static void put_mismatch_extra(SrBuf *b, SrTypeCtx *cx, const SrType *a, const SrType *o) {
  const char *why[3];
  int n = 0;
  if (a->dtype != o->dtype) why[n++] = "the dtypes do not match";
  int shape = a->ndim != o->ndim;
  for (int d = 0; !shape && d < a->ndim; d++) shape = a->dims[d].size != o->dims[d].size;
  if (shape) why[n++] = "the shapes do not match";
  if (mat_differs(cx, a, o)) why[n++] = "the manual axis types do not match";
  if (n == 0) return;
  sr_buf_puts(b, ", so ");
  for (int i = 0; i < n; i++) {
    if (i) sr_buf_puts(b, i == n - 1 ? ", and " : ", ");
    sr_buf_puts(b, why[i]);
  }
}

/* A list of messages laid out as JAX's _check_carry_type does: one alone,
   capitalized (or after `lead`), or as bullets after `lead_many`. */
typedef struct Items {
  char *s[64];
  uint32_t n, more;
} Items;

static void items_add(Items *it, SrBuf *b) {
  if (it->n < 64) it->s[it->n++] = sr_buf_steal(b);
  else it->more++, sr_buf_free(b);
}

static void items_put(SrBuf *b, Items *it, const char *lead_one, const char *lead_many) {
  if (it->n == 1) {
    const char *s = it->s[0];
    if (lead_one) sr_buf_printf(b, "%s%s.\n", lead_one, s);
    else sr_buf_printf(b, "%c%s.\n", s[0] >= 'a' && s[0] <= 'z' ? s[0] - 'a' + 'A' : s[0], s + 1);
  } else if (it->n > 1) {
    if (lead_many) sr_buf_puts(b, lead_many);
    /* '\n'.join(f'  * {d};\n' for d in items[:-1]) + f'  * {items[-1]}.\n' */
    for (uint32_t i = 0; i < it->n; i++)
      sr_buf_printf(b, "%s  * %s%s\n", i && i + 1 < it->n ? "\n" : "", it->s[i], i + 1 == it->n ? "." : ";");
  }
  for (uint32_t i = 0; i < it->n; i++) free(it->s[i]);
  it->n = 0;
}

/* loops.py: _check_carry_type -- the carry the body returns must have the
   types of the carry it is given. */
static int check_carry(SrTypeCtx *cx, const char *name, const SrType *const *in, const SrType *const *outs,
                       uint32_t n, uint32_t nout) {
  SrBuf b = SR_BUF_INIT;
  if (nout != n) {
    sr_buf_printf(&b, "%s function carry input and carry output must have the same pytree structure, but they "
                      "differ:\n\nthe input tree structure is:\n", name);
    put_tuple_treedef(&b, n);
    sr_buf_puts(&b, "\nthe output tree structure is:\n");
    put_tuple_treedef(&b, nout);
    sr_buf_puts(&b, "\n\nRevise the function so that the carry output has the same pytree structure as the carry "
                    "input.");
    return report(cx, "TypeError", &b);
  }
  Items diffs = {{0}, 0, 0}, fixes = {{0}, 0, 0};
  for (uint32_t i = 0; i < n; i++) {
    const SrType *a = in[i], *o = outs[i];
    if (!a || !o || same_type(a, o)) continue;
    SrBuf d = SR_BUF_INIT;
    put_carry_component(&d, i, n);
    sr_buf_puts(&d, " has type ");
    sr_type_str(&d, a, 0);
    sr_buf_puts(&d, " but the corresponding output carry component has type ");
    sr_type_str(&d, o, 0);
    put_mismatch_extra(&d, cx, a, o);
    items_add(&diffs, &d);
    /* out.mat.varying - in.mat.varying, by name */
    SrAxes more = 0;
    for (int ax = 0; o->mesh && ax < o->mesh->n; ax++) {
      if (!(o->varying & (1u << ax))) continue;
      int k = a->mesh ? sr_mesh_axis(a->mesh, o->mesh->names[ax]) : -1;
      if (k < 0 || !(a->varying & (1u << k))) more |= 1u << ax;
    }
    if (!more) continue;
    SrBuf f = SR_BUF_INIT;
    sr_buf_puts(&f, "applying `jax.lax.pcast(..., (");
    put_names(&f, o->mesh, more, "'%s'", ", ");
    sr_buf_puts(&f, sr_axes_count(more) == 1 ? ",), to='varying')`, " : "), to='varying')`, ");
    sr_buf_puts(&f, "to the initial carry value corresponding to ");
    put_carry_component(&f, i, n);
    items_add(&fixes, &f);
  }
  if (!diffs.n) return 0;
  sr_buf_printf(&b, "%s function carry input and carry output must have equal types, but they differ:\n\n", name);
  items_put(&b, &diffs, NULL, NULL);
  sr_buf_putc(&b, '\n');
  if (fixes.n) {
    items_put(&b, &fixes, "This might be fixed by ", "This might be fixed by:\n");
    sr_buf_puts(&b, "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information.\n\n");
  }
  sr_buf_puts(&b, "Revise the function so that all output types match the corresponding input types.");
  return report(cx, "TypeError", &b);
}

/* calls and control flow -- jit, custom_jvp/vjp calls,
 * remat, optimization_barrier, scan, while and cond.
 *
 * A call runs its jaxpr with the evaluator, under its own name in the
 * ledger's path (jit(f)/while/body/...).  Loop predicates and branch indices
 * are read on every device; inside shard_map they may differ between
 * devices, and then each device follows its own: a while loop goes on while
 * any device's predicate holds (the others keep their carry), and cond runs
 * every branch some device picked and keeps, per device, its own branch's
 * results.  Whether any device anywhere wants a branch or another
 * iteration is agreed over all ranks (SrCommOps.any). */

/* Runs a jaxpr as a call: out types are the equation's. */
static int call(SrEvalCtx *cx, const SrEvalEqn *e, const SrJaxpr *j, uint32_t nin, SrArray *const *in) {
  if (sr_nargs(j) != nin)
    return sr_ev_err(cx, "TypeError", "%s: its jaxpr takes %u arguments, the equation gives %u", e->prim->name,
                     sr_nargs(j), nin);
  if (j->nout != e->nout)
    return sr_ev_err(cx, "TypeError", "%s: its jaxpr has %u results, the equation %u", e->prim->name, j->nout, e->nout);
  if (sr_ev_jaxpr(cx, j, in, e->out) < 0) return -1;
  /* the equation's types (a body's own may be weak, or name a mesh the
     same way under another pointer) */
  for (uint32_t i = 0; i < e->nout; i++) {
    if (e->out[i]->type == e->out_type[i]) continue;
    SrArray *r;
    if (sr_layout_same(sr_layout_of_type(e->out[i]->type), sr_layout_of_type(e->out_type[i]))) {
      r = sr_array_retype(e->out[i], e->out_type[i], NULL);
    } else {
      /* the call's result sharding differs from the body's (out_shardings) */
      const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[i]);
      r = sr_redistribute_typed(cx, e->out[i], m, sr_ev_out_layout(cx, e, i, m), e->out_type[i]);
    }
    sr_array_unref(e->out[i]);
    e->out[i] = r;
    if (!r) return -1;
  }
  return 0;
}

/* Reads a scalar per device: vals[p] for the positions held here,
   INT64_MIN for the others. */
static void read_scalar(SrArray *a, int64_t *vals, int ndev_out, const SrMesh *m) {
  for (int p = 0; p < ndev_out; p++) {
    SrBuffer *b = a->mesh == m || !a->mesh ? sr_array_buf(a, p) : NULL;
    vals[p] = b ? sr_kern_get_i64(a->type->dtype, b->data) : INT64_MIN;
  }
}

/* rules of calls and control flow -- jit, remat,
 * custom_jvp_call / custom_vjp_call, optimization_barrier, while, cond,
 * scan and shard_map.
 *
 * A call is differentiated by transforming its body and binding a new call
 * (pjit.py: _pjit_jvp, _pjit_linearize, _pjit_transpose_fancy).  Under
 * linearization a jit becomes two: a forward jit that also returns the
 * residuals (those that are just its inputs are passed from outside, not
 * returned) and a tangent jit of the linear body, both with the original
 * name; transposing the tangent jit gives a third with the same name.
 */

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

#define JVP(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

static SrVal *param(const SrEqn *e, const char *key) { return sr_eqn_param(e, sr_intern_cstr(key)); }

static SrJaxpr *body_of(SrAd *ad, const SrEqn *e, const char *key) {
  SrVal *v = param(e, key);
  if (!v || v->kind != SR_V_JAXPR) {
    sr_raise(ad->I, "TypeError", "%s equation has no '%s' jaxpr", e->prim->name, key);
    return NULL;
  }
  return v->jx.jaxpr;
}

/* A copy of j without the outputs whose keep flag is 0 (the equations
   stay: JAX prunes outputs, it does not DCE the forward). */
static SrJaxpr *prune_outputs(SrJaxpr *j, const uint8_t *keep) {
  SrJaxprBuilder b;
  sr_jb_init(&b, j->prog);
  for (uint32_t i = 0; i < j->nconst; i++) sr_jb_constvar(&b, j->invars[i], j->consts ? j->consts[i] : NULL);
  for (uint32_t i = 0; i < sr_nargs(j); i++) sr_jb_invar(&b, sr_args(j)[i]);
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    {
      SrEqn *c = sr_jb_eqn(&b, e->prim, e->nin, e->in, e->nout, e->out, e->nparams, e->params);
      c->ns = e->ns;
      c->mesh = e->mesh;
    }
  }
  for (uint32_t i = 0; i < j->nout; i++)
    if (keep[i]) sr_jb_outvar(&b, j->outvars[i]);
  SrJaxpr *r = sr_jb_finish(&b);
  r->name = j->name;
  r->dbg = j->dbg && j->dbg->nres < 0 ? j->dbg : NULL; /* unknown names: the same */
  return r;
}

/* A call like e with its jaxpr param `key` replaced by body. */
static SrVal *bind_with_body(SrAd *ad, const SrEqn *e, const char *key, SrJaxpr *body, int nin, SrVal **in) {
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, key) == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, body));
    else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
  }
  SrVal *r = sr_ad_bind(ad, e->prim->id, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

/* ==== the calls: jit, pjit, the older call primitives, remat, custom_jvp/vjp calls ==== */

/* Old dynamic shapes (jax.config.jax_dynamic_shapes, 2022-2023): a body's
   binders may be sized by earlier int32 arguments (`c:i32[] d:f32[c]`).
   A printed jaxpr does not say which outer value a size names, so a
   symbolic size matches any size; what is not symbolic is still checked. */
static int has_sym(const SrType *t) {
  for (int d = 0; t && d < t->ndim; d++)
    if (t->dims[d].size < 0) return 1;
  return 0;
}

static int sym_compat(const SrType *a, const SrType *b) {
  if (!a || !b || a->dtype != b->dtype || a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d].size >= 0 && b->dims[d].size >= 0 && a->dims[d].size != b->dims[d].size) return 0;
  return 1;
}

/* pjit.py: _pjit_abstract_eval, core.py: _check_call -- jit (pjit,
   closed_call, core_call, xla_call in older texts), remat, and the custom
   derivative calls, whose jvp/fwd/bwd are opaque: the body applied to the
   operands; its outputs are the results. */
static int type_call(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const char *const keys[] = {"jaxpr", "call_jaxpr", "fun_jaxpr", "call", NULL};
  const SrJaxpr *body = jaxpr_param(e, keys);
  if (!body)
    return sr_terr(cx, "JaxprTypeError", "Call primitive %s missing 'call_jaxpr' parameter", e->prim->name);
  if (e->nin != sr_nargs(body))
    return sr_terr(cx, "JaxprTypeError", "Call primitive %s with %u operands cannot call jaxpr with %u inputs",
                   e->prim->name, e->nin, sr_nargs(body));
  if (e->nout != body->nout)
    return sr_terr(cx, "TypeError", "%s has %u results but its jaxpr returns %u values", e->prim->name, e->nout,
                   body->nout);
  const SrType **ins = sr_xcalloc(e->nin + 1, sizeof *ins);
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *w = arg_type(body, i);
    ins[i] = (has_sym(w) || has_sym(e->in[i])) && sym_compat(w, e->in[i]) ? w : e->in[i];
  }
  int rc = run_body(cx, body, ins, e->nin, out);
  free(ins);
  for (uint32_t i = 0; rc == 0 && i < e->nout; i++) {
    const SrType *w = written_type(e, i);
    if ((has_sym(w) || has_sym(out[i])) && sym_compat(w, out[i])) out[i] = w;
  }
  return rc;
}

static int ev_call(SrEvalCtx *cx, const SrEvalEqn *e) {
  static const char *const keys[] = {"jaxpr", "call_jaxpr", "fun_jaxpr", "call", NULL};
  const SrJaxpr *j = NULL;
  for (int k = 0; keys[k] && !j; k++) j = sr_ev_param_jaxpr(e, keys[k]);
  if (!j) return sr_ev_err(cx, "TypeError", "%s equation has no jaxpr", e->prim->name);
  if (e->prim->id != SR_P_jit && e->prim->id != SR_P_pjit) return call(cx, e, j, e->nin, e->in);
  /* jit: its in/out shardings and layouts around the body (layout.h) */
  SrArray *st[16], **in = e->nin <= 16 ? st : sr_xmalloc(e->nin * sizeof *in);
  for (uint32_t i = 0; i < e->nin; i++) in[i] = sr_array_ref(e->in[i]);
  int rc = sr_ev_call_inputs(cx, e, j, in);
  int fused = cx->fused;
  cx->fused = 1; /* a compiled computation: eval.c's multiply-add */
  if (rc == 0) rc = call(cx, e, j, e->nin, in);
  cx->fused = fused;
  for (uint32_t i = 0; i < e->nin; i++) sr_array_unref(in[i]);
  if (in != st) free(in);
  if (rc == 0) rc = sr_ev_call_outputs(cx, e);
  return rc;
}

/* The params of a new jit like e's, with body and per-operand params
   rebuilt: operand i of the new call takes e's entry isrc[i] (or the
   default when isrc[i] < 0), likewise for the results. */
void sr_lax_call_params(SrPList *ps, const SrEqn *e, SrJaxpr *body, int nin, const int *isrc, int nout,
                        const int *osrc) {
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    SrVal *v = e->params[p].val;
    int per_in = strcmp(k, "in_shardings") == 0 || strcmp(k, "in_layouts") == 0 || strcmp(k, "donated_invars") == 0;
    int per_out = strcmp(k, "out_shardings") == 0 || strcmp(k, "out_layouts") == 0;
    if (strcmp(k, "jaxpr") == 0 || strcmp(k, "call_jaxpr") == 0) {
      sr_plist_add(ps, k, sr_jaxpr_val(NULL, body));
    } else if ((per_in || per_out) && v->kind == SR_V_TUPLE) {
      int n = per_in ? nin : nout;
      const int *src = per_in ? isrc : osrc;
      SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
      for (int i = 0; i < n; i++) {
        SrVal *item;
        if (src[i] >= 0 && src[i] < v->seq.n) item = sr_ref(v->seq.items[src[i]]);
        else if (k[0] == 'd') item = sr_bool(0);
        else if (strstr(k, "layouts")) item = sr_none();
        else item = sr_word(NULL, "UnspecifiedValue", 16);
        sr_seq_push(NULL, t, item);
      }
      sr_plist_add(ps, k, t);
    } else {
      sr_plist_add(ps, k, sr_ref(v));
    }
  }
}

static SrVal *bind_call(SrAd *ad, const SrEqn *e, SrJaxpr *body, int nin, SrVal **in, const int *isrc,
                        const int *osrc) {
  SrPList ps = {0};
  sr_lax_call_params(&ps, e, body, nin, isrc, (int)body->nout, osrc);
  SrVal *r = sr_ad_bind(ad, e->prim->id, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

static int jit_lin(SrAd *ad, const SrEqn *e, SrJaxpr *body, SrVal **x, SrVal **t, SrVal **y, SrVal **ty);

/* the memo's tags (sr_ad_memo_get) */
enum { MEMO_JVP = 1, MEMO_LIN, MEMO_TRANSPOSE, MEMO_BATCH };

JVP(jvp_jit) {
  SrJaxpr *body = body_of(ad, e, "jaxpr");
  if (!body) return -1;
  if (ad->mode == SR_AD_LIN) return jit_lin(ad, e, body, x, t, y, ty);
  uint32_t n = e->nin, no = e->nout;
  uint8_t *in_nz = sr_xcalloc(n + 1, 1), *out_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) in_nz[i] = t[i] != NULL;
  const SrAdMemoVal *mv = sr_ad_memo_get(ad, MEMO_JVP, body, in_nz, n);
  SrJaxpr *J;
  if (mv) {
    J = mv->j[0];
    sr_program_ref(J->prog);
    for (uint32_t i = 0; i < no; i++) out_nz[i] = (uint8_t)mv->data[i];
  } else if ((J = sr_ad_jvp_jaxpr(ad, body, in_nz, NULL, out_nz))) {
    int *d = sr_xcalloc(no + 1, sizeof *d);
    for (uint32_t i = 0; i < no; i++) d[i] = out_nz[i];
    sr_ad_memo_put(ad, MEMO_JVP, body, in_nz, n, J, NULL, d, (int)no);
    free(d);
  }
  int rc = -1;
  if (J) {
    SrVal **in = sr_xcalloc(2 * n + 1, sizeof *in);
    int *isrc = sr_xcalloc(2 * n + 1, sizeof *isrc), *osrc = sr_xcalloc(2 * no + 1, sizeof *osrc);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) in[k] = x[i], isrc[k++] = (int)i;
    for (uint32_t i = 0; i < n; i++)
      if (in_nz[i]) in[k] = t[i], isrc[k++] = (int)i;
    uint32_t m = 0;
    for (uint32_t i = 0; i < no; i++) osrc[m++] = (int)i;
    for (uint32_t i = 0; i < no; i++)
      if (out_nz[i]) osrc[m++] = (int)i;
    SrVal *r = bind_call(ad, e, J, (int)k, in, isrc, osrc);
    if (r) {
      for (uint32_t i = 0, q = no; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = out_nz[i] ? r->seq.items[q++] : NULL;
      }
      rc = 0;
    }
    sr_program_unref(J->prog);
    free(in);
    free(isrc);
    free(osrc);
  }
  free(in_nz);
  free(out_nz);
  return rc;
}

static int same_var(SrVar *a, SrVar *b) { return a == b && a->kind == SR_VAR; }

/* What _pjit_linearize makes of a body, given which inputs have tangents
   and which outputs have a specified sharding: the forward jit's body
   (F's outputs, pruned to those with keep set) and the tangent jit's. */
typedef struct JitLin {
  SrJaxpr *fwd, *lin; /* each holds a reference to its program */
  uint32_t nf;        /* F's outputs: the primal ones, then the residuals */
  int nres;
  int *in_fwd;        /* nres: per residual, the input+1 it is, or 0 */
  int *fwd_in, *dup;  /* nf: the input an output forwards, an earlier output it repeats (or -1) */
  uint8_t *keep;      /* nf: returned by the forward jit */
  uint8_t *out_nz;    /* no */
} JitLin;

static void jit_lin_free(JitLin *l) {
  if (l->fwd) sr_program_unref(l->fwd->prog);
  if (l->lin) sr_program_unref(l->lin->prog);
  free(l->in_fwd);
  free(l->fwd_in);
  free(l->dup);
  free(l->keep);
  free(l->out_nz);
}

/* The JitLin of e's body, from the memo or made (and memoized).  The
   memo's ints: nf, nres, in_fwd[nres], fwd_in[nf], dup[nf], keep[nf],
   out_nz[no]. */
static int jit_lin_jaxprs(SrAd *ad, const SrEqn *e, SrJaxpr *body, SrVal **t, JitLin *o) {
  uint32_t n = e->nin, no = e->nout;
  SrVal *osh = param(e, "out_shardings");
  memset(o, 0, sizeof *o);
  /* the key: the nonzero tangents, then which outputs have a sharding */
  uint8_t *key = sr_xcalloc(n + no + 1, 1);
  for (uint32_t i = 0; i < n; i++) key[i] = t[i] != NULL;
  for (uint32_t i = 0; i < no; i++)
    key[n + i] = osh && osh->kind == SR_V_TUPLE && (int)i < osh->seq.n && osh->seq.items[i]->kind != SR_V_WORD;
  const SrAdMemoVal *mv = sr_ad_memo_get(ad, MEMO_LIN, body, key, n + no);
  if (mv) {
    const int *d = mv->data;
    o->fwd = mv->j[0];
    o->lin = mv->j[1];
    sr_program_ref(o->fwd->prog);
    sr_program_ref(o->lin->prog);
    o->nf = (uint32_t)*d++;
    o->nres = *d++;
    o->in_fwd = sr_xcalloc((size_t)o->nres + 1, sizeof *o->in_fwd);
    o->fwd_in = sr_xcalloc(o->nf + 1, sizeof *o->fwd_in);
    o->dup = sr_xcalloc(o->nf + 1, sizeof *o->dup);
    o->keep = sr_xcalloc(o->nf + 1, 1);
    o->out_nz = sr_xcalloc(no + 1, 1);
    for (int r = 0; r < o->nres; r++) o->in_fwd[r] = *d++;
    for (uint32_t i = 0; i < o->nf; i++) o->fwd_in[i] = *d++;
    for (uint32_t i = 0; i < o->nf; i++) o->dup[i] = *d++;
    for (uint32_t i = 0; i < o->nf; i++) o->keep[i] = (uint8_t)*d++;
    for (uint32_t i = 0; i < no; i++) o->out_nz[i] = (uint8_t)*d++;
    free(key);
    return 0;
  }
  SrLinJaxprs lj;
  if (sr_ad_linearize_jaxpr(ad, body, key, NULL, NULL, &lj) < 0) {
    free(key);
    return -1;
  }
  SrJaxpr *F = lj.fwd;
  uint32_t nf = F->nout; /* no primal outputs, then the returned residuals */
  /* forwarding: outputs that are inputs of the forward body are not
     returned (primal ones only when their sharding is unspecified), and a
     residual equal to an earlier output is returned once */
  int *fwd_in = sr_xcalloc(nf + 1, sizeof *fwd_in), *dup = sr_xcalloc(nf + 1, sizeof *dup);
  uint8_t *keep = sr_xcalloc(nf + 1, 1);
  for (uint32_t i = 0; i < nf; i++) {
    SrVar *v = F->outvars[i];
    fwd_in[i] = dup[i] = -1;
    keep[i] = 1;
    for (uint32_t a = 0; a < sr_nargs(F) && v->kind == SR_VAR; a++)
      if (sr_args(F)[a] == v) fwd_in[i] = (int)a;
    if (fwd_in[i] >= 0 && i < no && key[n + i]) fwd_in[i] = -1;
    if (fwd_in[i] >= 0) {
      keep[i] = 0;
      continue;
    }
    if (i >= no)
      for (uint32_t k = 0; k < i && dup[i] < 0; k++)
        if (keep[k] && same_var(F->outvars[k], v)) dup[i] = (int)k;
    if (dup[i] >= 0) keep[i] = 0;
  }
  SrJaxpr *F2 = prune_outputs(F, keep);
  o->fwd = F2;
  sr_program_ref(F2->prog);
  o->lin = lj.lin;
  sr_program_ref(lj.lin->prog);
  o->nf = nf;
  o->nres = lj.nres;
  o->in_fwd = sr_xcalloc((size_t)lj.nres + 1, sizeof *o->in_fwd);
  memcpy(o->in_fwd, lj.in_fwd, (size_t)lj.nres * sizeof *o->in_fwd);
  o->fwd_in = fwd_in;
  o->dup = dup;
  o->keep = keep;
  o->out_nz = sr_xcalloc(no + 1, 1);
  memcpy(o->out_nz, lj.out_nz, no);
  sr_ad_lin_jaxprs_free(&lj);
  int nd = 2 + o->nres + 3 * (int)nf + (int)no, *d = sr_xcalloc((size_t)nd + 1, sizeof *d), *p = d;
  *p++ = (int)nf;
  *p++ = o->nres;
  for (int r = 0; r < o->nres; r++) *p++ = o->in_fwd[r];
  for (uint32_t i = 0; i < nf; i++) *p++ = fwd_in[i];
  for (uint32_t i = 0; i < nf; i++) *p++ = dup[i];
  for (uint32_t i = 0; i < nf; i++) *p++ = keep[i];
  for (uint32_t i = 0; i < no; i++) *p++ = o->out_nz[i];
  sr_ad_memo_put(ad, MEMO_LIN, body, key, n + no, o->fwd, o->lin, d, nd);
  free(d);
  free(key);
  return 0;
}

/* _pjit_linearize */
static int jit_lin(SrAd *ad, const SrEqn *e, SrJaxpr *body, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  uint32_t n = e->nin, no = e->nout;
  JitLin lj;
  if (jit_lin_jaxprs(ad, e, body, t, &lj) < 0) return -1;
  uint32_t nf = lj.nf;
  int *isrc = sr_xcalloc(n + 1, sizeof *isrc), *osrc = sr_xcalloc(nf + 1, sizeof *osrc);
  for (uint32_t i = 0; i < n; i++) isrc[i] = (int)i;
  for (uint32_t i = 0, k = 0; i < nf; i++)
    if (lj.keep[i]) osrc[k++] = i < no ? (int)i : -1;
  SrVal *r = bind_call(ad, e, lj.fwd, (int)n, x, isrc, osrc);
  SrVal **outs = sr_xcalloc(nf + 1, sizeof *outs);
  int rc = -1;
  if (r) {
    for (uint32_t i = 0, k = 0; i < nf; i++) {
      if (lj.keep[i]) outs[i] = r->seq.items[k++];
      else if (lj.fwd_in[i] >= 0) outs[i] = x[lj.fwd_in[i]];
    }
    for (uint32_t i = 0; i < nf; i++)
      if (!outs[i] && lj.dup[i] >= 0) outs[i] = outs[lj.dup[i]];
    for (uint32_t i = 0; i < no; i++) y[i] = outs[i];
    /* the tangent jit: residuals, then the nonzero tangents */
    int anynz = 0;
    for (uint32_t i = 0; i < no; i++) anynz |= lj.out_nz[i];
    /* a tangent body with effects (writes into a tangent Ref) is bound
       though none of its results has a tangent */
    for (uint32_t q = 0; q < lj.lin->neqn && !anynz; q++)
      anynz = sr_prim_has_effect(lj.lin->eqns[q].prim, lj.lin->eqns[q].params, lj.lin->eqns[q].nparams);
    rc = 0;
    if (anynz) {
      uint32_t nl = sr_nargs(lj.lin);
      SrVal **in = sr_xcalloc(nl + 1, sizeof *in);
      int *lsrc = sr_xcalloc(nl + 1, sizeof *lsrc), *losrc = sr_xcalloc(no + 1, sizeof *losrc);
      uint32_t k = 0, q = no;
      for (int res = 0; res < lj.nres; res++) {
        lsrc[k] = -1;
        in[k++] = lj.in_fwd[res] ? x[lj.in_fwd[res] - 1] : outs[q++];
      }
      for (uint32_t i = 0; i < n; i++)
        if (t[i]) lsrc[k] = (int)i, in[k++] = t[i];
      uint32_t m = 0;
      for (uint32_t i = 0; i < no; i++)
        if (lj.out_nz[i]) losrc[m++] = (int)i;
      SrVal *rt = k == nl ? bind_call(ad, e, lj.lin, (int)k, in, lsrc, losrc) : NULL;
      if (!rt) {
        if (!ad->I->exc) sr_raise(ad->I, "RuntimeError", "internal error: the linear jit takes %u inputs, not %u", nl, k);
        rc = -1;
      } else {
        for (uint32_t i = 0, mm = 0; i < no; i++) ty[i] = lj.out_nz[i] ? rt->seq.items[mm++] : NULL;
      }
      free(in);
      free(lsrc);
      free(losrc);
    }
  }
  free(outs);
  free(isrc);
  free(osrc);
  jit_lin_free(&lj);
  return rc;
}

/* The transpose of a call whose body is linear in some operands:
   _pjit_transpose_fancy (and remat's): a call of the transposed body on
   the other operands and the nonzero cotangents. */
static int call_transpose(SrAd *ad, const SrEqn *e, const char *key, SrVal **ct, SrVal **x, SrVal **cx) {
  SrJaxpr *body = body_of(ad, e, key);
  if (!body) return -1;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *lin = sr_xcalloc(n + 1, 1), *ct_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i] == NULL;
  for (uint32_t i = 0; i < no; i++) ct_nz[i] = ct[i] != NULL;
  uint8_t *mkey = sr_xcalloc(n + no + 1, 1);
  memcpy(mkey, lin, n);
  memcpy(mkey + n, ct_nz, no);
  const SrAdMemoVal *mv = sr_ad_memo_get(ad, MEMO_TRANSPOSE, body, mkey, n + no);
  SrJaxpr *T;
  if (mv) sr_program_ref((T = mv->j[0])->prog);
  else if ((T = sr_ad_transpose_jaxpr(ad, body, lin, ct_nz))) sr_ad_memo_put(ad, MEMO_TRANSPOSE, body, mkey, n + no, T, NULL, NULL, 0);
  free(mkey);
  int rc = -1;
  if (T) {
    SrVal **in = sr_xcalloc(n + no + 1, sizeof *in);
    int *isrc = sr_xcalloc(n + no + 1, sizeof *isrc), *osrc = sr_xcalloc(n + 1, sizeof *osrc);
    uint32_t k = 0, m = 0;
    for (uint32_t i = 0; i < n; i++)
      if (!lin[i]) isrc[k] = (int)i, in[k++] = x[i];
    for (uint32_t i = 0; i < no; i++)
      if (ct_nz[i]) isrc[k] = -1, in[k++] = ct[i];
    /* the per-operand params of the transposed call: the operands' for
       the values, the results' for the cotangents */
    for (uint32_t i = 0; i < n; i++)
      if (lin[i]) osrc[m++] = (int)i;
    SrPList ps = {0};
    sr_lax_call_params(&ps, e, T, (int)k, isrc, (int)m, osrc);
    /* out_* params of the transposed call come from in_* of e: swap */
    for (int p = 0; p < ps.n; p++) {
      const char *pk = ps.p[p].key;
      SrVal *ev = NULL;
      if (strcmp(pk, "out_shardings") == 0) ev = param(e, "in_shardings");
      else if (strcmp(pk, "out_layouts") == 0) ev = param(e, "in_layouts");
      if (ev && ev->kind == SR_V_TUPLE) {
        SrVal *tt = sr_seq(NULL, SR_V_TUPLE, (int)m);
        for (uint32_t i = 0; i < m; i++)
          sr_seq_push(NULL, tt, osrc[i] < ev->seq.n ? sr_ref(ev->seq.items[osrc[i]]) : sr_none());
        sr_unref(ps.p[p].val);
        ps.p[p].val = tt;
      }
      if (strcmp(pk, "in_shardings") == 0 || strcmp(pk, "in_layouts") == 0) {
        SrVal *src = param(e, pk[3] == 's' ? "out_shardings" : "out_layouts");
        SrVal *tt = sr_seq(NULL, SR_V_TUPLE, (int)k);
        SrVal *old = ps.p[p].val;
        for (uint32_t i = 0, c = 0; i < k; i++) {
          SrVal *item;
          if (isrc[i] >= 0) {
            item = sr_ref(old->seq.items[i]);
          } else {
            while (c < no && !ct_nz[c]) c++;
            item = src && src->kind == SR_V_TUPLE && (int)c < src->seq.n ? sr_ref(src->seq.items[c])
                   : strstr(pk, "layouts")                            ? sr_none()
                                                                       : sr_word(NULL, "UnspecifiedValue", 16);
            c++;
          }
          sr_seq_push(NULL, tt, item);
        }
        sr_unref(old);
        ps.p[p].val = tt;
      }
    }
    SrVal *r = sr_ad_bind(ad, e->prim->id, (int)k, in, ps.n, ps.p);
    sr_plist_free(&ps);
    if (r) {
      for (uint32_t i = 0, q = 0; i < n; i++)
        if (lin[i]) cx[i] = r->seq.items[q++];
      rc = 0;
    }
    sr_program_unref(T->prog);
    free(in);
    free(isrc);
    free(osrc);
  }
  free(lin);
  free(ct_nz);
  return rc;
}

TR(tr_jit) { return call_transpose(ad, e, "jaxpr", ct, x, cx); }

#define BATCH(name) static int name(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd)

static void key_put(uint8_t *k, size_t *n, const void *p, size_t len) {
  memcpy(k + *n, p, len);
  *n += len;
}

/* sr_batch_jaxpr_axes of a call's body, memoized per body, axes and
   batch (size, axis_name, spmd axes) as the AD memo keeps transforms, so
   that a body called twice is batched once and the calls share it. */
static SrJaxpr *batched_body(SrBatch *b, const SrJaxpr *body, const int *in_axes, const int *out_dest,
                             int *out_axes) {
  uint32_t n = sr_nargs(body), no = body->nout;
  size_t cap = 2 + n + no + sizeof b->size + sizeof b->axis_name + sizeof b->spmd, kn = 0;
  uint8_t *key = sr_xcalloc(cap, 1);
  key[kn++] = out_dest != NULL;
  for (uint32_t i = 0; i < n; i++) key[kn++] = (uint8_t)(in_axes[i] + 3);
  for (uint32_t i = 0; out_dest && i < no; i++) key[kn++] = (uint8_t)(out_dest[i] + 3);
  key_put(key, &kn, &b->size, sizeof b->size);
  key_put(key, &kn, &b->axis_name, sizeof b->axis_name);
  key[kn++] = (uint8_t)b->nspmd;
  key_put(key, &kn, b->spmd, (size_t)b->nspmd * sizeof b->spmd[0]);
  const SrAdMemoVal *mv = sr_ad_memo_get(&b->ad, MEMO_BATCH, body, key, kn);
  SrJaxpr *J;
  if (mv) {
    J = mv->j[0];
    sr_program_ref(J->prog);
    for (uint32_t i = 0; i < no; i++) out_axes[i] = mv->data[i];
  } else if ((J = sr_batch_jaxpr_axes(b, body, in_axes, out_dest, out_axes))) {
    J->name = body->name;
    sr_ad_memo_put(&b->ad, MEMO_BATCH, body, key, kn, J, NULL, out_axes, (int)no);
  }
  free(key);
  return J;
}

/* pjit.py: _pjit_batcher_for_sharding -- a sharding of a value batched at
   dim gets an entry there: the spmd axes, or None (a replicated sharding
   with no spmd axes stays as it is).  A new reference. */
static SrVal *batch_sharding(const SrBatch *b, SrVal *s, int dim) {
  if (s->kind != SR_V_SHARDING || !s->sh.spec) return sr_ref(s);
  const SrSpec *sp = s->sh.spec;
  int repl = !sp->nunreduced && !sp->nreduced;
  for (int i = 0; i < sp->n && repl; i++) repl = sp->e[i].n == 0;
  if (repl && !b->nspmd) return sr_ref(s);
  int n = (sp->n > dim ? sp->n : dim) + 1;
  SrSpec ns = *sp;
  ns.e = sr_xcalloc((size_t)n, sizeof *ns.e);
  ns.n = n;
  for (int i = 0, k = 0; i < n; i++) {
    if (i == dim) {
      ns.e[i].n = b->nspmd;
      ns.e[i].names = (const char **)b->spmd;
    } else {
      if (k < sp->n) ns.e[i] = sp->e[k];
      k++;
    }
  }
  SrVal *r = sr_sharding_val(NULL, s->sh.mesh, &ns, s->sh.memory_kind);
  free(ns.e);
  return r;
}

/* The per-value sharding tuple of key with each batched entry rebatched. */
static SrVal *batch_shardings(const SrBatch *b, SrVal *v, const int *axes, int n) {
  if (!v || v->kind != SR_V_TUPLE) return v ? sr_ref(v) : NULL;
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) {
    SrVal *item = i < v->seq.n ? v->seq.items[i] : NULL;
    sr_seq_push(NULL, t, !item ? sr_word(NULL, "UnspecifiedValue", 16)
                         : axes[i] != SR_NOT_MAPPED ? batch_sharding(b, item, axes[i]) : sr_ref(item));
  }
  return t;
}

static int concrete_layouts(SrVal *v) {
  for (int i = 0; v && v->kind == SR_V_TUPLE && i < v->seq.n; i++)
    if (v->seq.items[i]->kind != SR_V_NONE) return 1;
  return 0;
}

/* pjit.py: _pjit_batcher -- the body batched with the operands' batch
   dims where they are (batch_jaxpr2), its results' dims where its rules
   left them; the shardings gain the batch axis; the name is kept. */
BATCH(batch_jit) {
  static const char *const keys[] = {"jaxpr", "call_jaxpr", NULL};
  SrAd *ad = &b->ad;
  SrJaxpr *body = NULL;
  const char *bkey = NULL;
  for (int k = 0; keys[k] && !body; k++) {
    SrVal *v = param(e, keys[k]);
    if (v && v->kind == SR_V_JAXPR) body = v->jx.jaxpr, bkey = keys[k];
  }
  if (!body) return sr_raise(ad->I, "TypeError", "%s equation has no jaxpr", e->prim->name), -1;
  if (concrete_layouts(param(e, "in_layouts")) || concrete_layouts(param(e, "out_layouts")))
    return sr_raise(ad->I, "NotImplementedError", "Concrete layouts are not supported for vmap(jit)."), -1;
  uint32_t n = e->nin, no = e->nout;
  int *oaxes = sr_xcalloc(no + 1, sizeof *oaxes);
  SrJaxpr *J = batched_body(b, body, bd, NULL, oaxes);
  int rc = -1;
  if (J) {
    SrPList ps = {0};
    for (uint32_t p = 0; p < e->nparams; p++) {
      const char *k = e->params[p].key;
      SrVal *v = e->params[p].val;
      if (strcmp(k, bkey) == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, J));
      else if (strcmp(k, "in_shardings") == 0) sr_plist_add(&ps, k, batch_shardings(b, v, bd, (int)n));
      else if (strcmp(k, "out_shardings") == 0) sr_plist_add(&ps, k, batch_shardings(b, v, oaxes, (int)no));
      else sr_plist_add(&ps, k, sr_ref(v));
    }
    SrVal *r = sr_ad_bind(ad, e->prim->id, (int)n, x, ps.n, ps.p);
    sr_plist_free(&ps);
    if (r) {
      for (uint32_t i = 0; i < no; i++) {
        y[i] = r->seq.items[i];
        ybd[i] = oaxes[i];
      }
      rc = 0;
    }
    sr_program_unref(J->prog);
  }
  free(oaxes);
  return rc;
}

/* ---- remat (checkpoint) ----
 *
 * The primal runs as it is; the tangent is a remat of the JVP body that
 * takes the primal inputs as its residuals, so the primal is recomputed
 * where the tangent (and, transposed, the cotangent) needs it
 * (ad_checkpoint.py: remat_jvp, remat_partial_eval, remat_transpose). */

static SrVal *bind_remat(SrAd *ad, const SrEqn *e, SrJaxpr *body, int nin, SrVal **in, int differentiated) {
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "jaxpr") == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, body));
    else if (strcmp(k, "differentiated") == 0) sr_plist_add(&ps, k, sr_bool(differentiated));
    else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
  }
  SrVal *r = sr_ad_bind(ad, e->prim->id, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

/* The tangent body of a remat whose JVP is not split: takes the primal
   inputs, then the nonzero tangents; runs the forward jaxpr of the body's
   linearization for its residuals (the body's arguments forwarded as they
   are), then the linear jaxpr on them and the tangents; DCE'd to the
   nonzero output tangents (out_nz, J's).  A new jaxpr (its program
   referenced), or NULL with an error raised. */
static SrJaxpr *remat_recompute_body(SrAd *ad, const SrJaxpr *body, const uint8_t *in_nz, const uint8_t *out_nz,
                                     const SrJaxpr *J) {
  SrInterp *I = ad->I;
  uint32_t n = sr_nargs(body), no = body->nout;
  SrLinJaxprs l;
  if (sr_ad_linearize_jaxpr(ad, body, in_nz, out_nz, NULL, &l) < 0) return NULL;
  for (uint32_t i = 0; i < no; i++)
    if (l.out_nz[i] != out_nz[i]) {
      sr_ad_lin_jaxprs_free(&l);
      sr_raise(I, "NotImplementedError", "remat: the linearization of the body has other zero tangents than its JVP");
      return NULL;
    }
  uint32_t na = sr_nargs(J);
  const SrType **types = sr_xcalloc(na + 1, sizeof *types);
  for (uint32_t i = 0; i < na; i++) types[i] = sr_args(J)[i]->type;
  SrVal **args = sr_xcalloc(na + 1, sizeof *args);
  SrTrace *saved = I->trace;
  SrTrace *t = sr_ad_trace_begin(ad, (int)na, types, args);
  free(types);
  I->trace = t;
  SrJaxpr *T = NULL;
  SrVal *f = sr_eval_jaxpr(I, l.fwd, (int)n, args);
  SrVal *lo = NULL;
  if (f) {
    uint32_t nl = sr_nargs(l.lin);
    SrVal **lin_in = sr_xcalloc(nl + 1, sizeof *lin_in);
    uint32_t k = 0, q = no;
    for (int r = 0; r < l.nres; r++) lin_in[k++] = l.in_fwd[r] ? args[l.in_fwd[r] - 1] : f->seq.items[q++];
    for (uint32_t i = n; i < na && k < nl; i++) lin_in[k++] = args[i];
    lo = k == nl ? sr_eval_jaxpr(I, l.lin, (int)nl, lin_in)
                 : sr_raise(I, "RuntimeError", "remat: the linear jaxpr takes %u inputs, %u given", nl, k);
    free(lin_in);
  }
  if (lo) T = sr_ad_trace_end(ad, t, lo->seq.n, lo->seq.items, NULL);
  else sr_trace_abort(I, t);
  I->trace = saved;
  sr_unref(f);
  sr_unref(lo);
  for (uint32_t i = 0; i < na; i++) sr_unref(args[i]);
  free(args);
  sr_ad_lin_jaxprs_free(&l);
  if (!T) return NULL;
  uint8_t *keep = sr_xcalloc(T->nout + 1, 1);
  memset(keep, 1, T->nout);
  SrJaxpr *D = sr_ad_dce(T, keep, NULL, 0);
  free(keep);
  if (D != T) {
    sr_program_ref(D->prog);
    sr_program_unref(T->prog);
  }
  return D;
}

static int jaxpr_has_io(const SrJaxpr *j, int unordered_only, int depth);

JVP(jvp_remat) {
  SrJaxpr *body = body_of(ad, e, "jaxpr");
  if (!body) return -1;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *in_nz = sr_xcalloc(n + 1, 1), *out_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) in_nz[i] = t[i] != NULL;
  SrJaxpr *J = sr_ad_jvp_jaxpr(ad, body, in_nz, NULL, out_nz);
  int rc = -1;
  if (!J) goto out;
  if (ad->mode == SR_AD_LIN && jaxpr_has_io(body, 0, 0)) {
    /* remat_partial_eval (after remat_jvp's jvp of the body):
       effects.remat_allowed_effects has the debug effects, not
       callback.py's IO ones */
    sr_raise(ad->I, "NotImplementedError", "Effects not supported in AD of `checkpoint`/`remat`: [%s]",
             jaxpr_has_io(body, 1, 0) ? "IO" : "OrderedIO");
    sr_program_unref(J->prog);
    goto out;
  }
  SrVal **in = sr_xcalloc(2 * n + 1, sizeof *in);
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) in[k++] = x[i];
  for (uint32_t i = 0; i < n; i++)
    if (t[i]) in[k++] = t[i];
  if (ad->mode == SR_AD_LIN) {
    /* remat_partial_eval with the policy (remat_pe.c) */
    SrVal **tpk = sr_xcalloc(no + 1, sizeof *tpk);
    int pr = sr_lax_remat_lin(ad, e, J, x, t, y, tpk);
    if (pr <= 0) {
      for (uint32_t i = 0, q = 0; pr == 0 && i < no; i++) ty[i] = out_nz[i] ? tpk[q++] : NULL;
      free(tpk);
      rc = pr;
      goto done;
    }
    free(tpk);
  }
  if (ad->mode == SR_AD_LIN) {
    /* the primal: the remat as it is (known), its body the known jaxpr
       of pe.partial_eval_jaxpr_nounits (with_unknown_names) */
    SrJaxpr *K = body->dbg ? sr_ad_permute(body, NULL, NULL) : body;
    K->dbg = sr_debug_info_copy(K->prog->arena, body->dbg, 1);
    SrVal *dp = param(e, "differentiated");
    SrVal *r = bind_remat(ad, e, K, (int)n, x, dp && dp->kind == SR_V_BOOL && dp->i);
    /* the tangent: a body that recomputes the residuals of the body's
       linearization from the primal inputs, then applies its linear part
       to the tangents (what nothing_saveable leaves: everything
       recomputed), for a body whose JVP the split above does not take
       apart (a scan, a cond... reading known and unknown values) */
    SrJaxpr *Jt = remat_recompute_body(ad, body, in_nz, out_nz, J);
    if (!Jt) {
      rc = -1;
      goto done;
    }
    SrVal *rt = Jt->nout ? bind_remat(ad, e, Jt, (int)k, in, 1) : NULL;
    sr_program_unref(Jt->prog);
    if (r && (rt || !Jt->nout)) {
      for (uint32_t i = 0, q = 0; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = out_nz[i] ? rt->seq.items[q++] : NULL;
      }
      rc = 0;
    }
  } else {
    SrVal *r = bind_remat(ad, e, J, (int)k, in, 1);
    if (r) {
      for (uint32_t i = 0, q = no; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = out_nz[i] ? r->seq.items[q++] : NULL;
      }
      rc = 0;
    }
  }
done:
  free(in);
  sr_program_unref(J->prog);
out:
  free(in_nz);
  free(out_nz);
  return rc;
}

TR(tr_remat) {
  SrJaxpr *body = body_of(ad, e, "jaxpr");
  if (!body) return -1;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *lin = sr_xcalloc(n + 1, 1), *ct_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i] == NULL;
  for (uint32_t i = 0; i < no; i++) ct_nz[i] = ct[i] != NULL;
  SrJaxpr *T = sr_ad_transpose_jaxpr(ad, body, lin, ct_nz);
  int rc = -1;
  if (T) {
    SrVal **in = sr_xcalloc(n + no + 1, sizeof *in);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
      if (!lin[i]) in[k++] = x[i];
    for (uint32_t i = 0; i < no; i++)
      if (ct_nz[i]) in[k++] = ct[i];
    SrVal *r = bind_remat(ad, e, T, (int)k, in, 1);
    if (r) {
      for (uint32_t i = 0, q = 0; i < n; i++)
        if (lin[i]) cx[i] = r->seq.items[q++];
      rc = 0;
    }
    free(in);
    sr_program_unref(T->prog);
  }
  free(lin);
  free(ct_nz);
  return rc;
}

/* ad_checkpoint.py: remat_vmap -- the body batched with the operands
   where they are, its mapped results moved to the front. */
BATCH(batch_remat) {
  SrJaxpr *body = body_of(&b->ad, e, "jaxpr");
  if (!body) return -1;
  uint32_t no = e->nout;
  int *dest = sr_xcalloc(no + 1, sizeof *dest), *oaxes = sr_xcalloc(no + 1, sizeof *oaxes);
  for (uint32_t i = 0; i < no; i++) dest[i] = SR_BATCH_ZERO_IF_MAPPED;
  SrJaxpr *J = batched_body(b, body, bd, dest, oaxes);
  int rc = -1;
  if (J) {
    SrVal *differentiated = param(e, "differentiated");
    SrVal *r = bind_remat(&b->ad, e, J, (int)e->nin, x, differentiated && differentiated->kind == SR_V_BOOL && differentiated->i);
    if (r) {
      for (uint32_t i = 0; i < no; i++) {
        y[i] = r->seq.items[i];
        ybd[i] = oaxes[i];
      }
      rc = 0;
    }
    sr_program_unref(J->prog);
  }
  free(dest);
  free(oaxes);
  return rc;
}

/* ---- custom_jvp_call, custom_vjp_call ----
 *
 * In a jaxpr text the custom rule is a Python function that did not
 * survive printing, so these differentiate the primal function, inline:
 * the structure JAX gives a custom_jvp under linearize (its rule is traced
 * inline too), with the primal's derivative in place of the rule's. */

int sr_lax_jvp_custom_call(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  SrJaxpr *body = NULL;
  SrVal *v = param(e, "call_jaxpr");
  if (!v) v = param(e, "fun_jaxpr");
  if (v && v->kind == SR_V_JAXPR) body = v->jx.jaxpr;
  if (!body) return sr_raise(ad->I, "TypeError", "%s equation has no call_jaxpr", e->prim->name), -1;
  if (sr_nargs(body) != e->nin || body->nout != e->nout)
    return sr_raise(ad->I, "TypeError", "%s: its call_jaxpr does not match its operands", e->prim->name), -1;
  SrVal **out = sr_xcalloc(2 * e->nout + 1, sizeof *out);
  int rc = sr_ad_eval(ad, body, x, t, out, out + e->nout);
  if (rc == 0)
    for (uint32_t i = 0; i < e->nout; i++) {
      y[i] = sr_ad_keep(ad, out[i]);
      ty[i] = sr_ad_keep(ad, out[e->nout + i]);
    }
  free(out);
  return rc;
}

SrLaxCustomHooks sr_lax_custom_hooks;

/* Is param key of e an object of the Python layer (lax.h's hooks)? */
static int obj_param(const SrEqn *e, const char *key) {
  SrVal *v = param(e, key);
  return v && v->kind == SR_V_OBJ;
}

/* custom_jvp_call: jax.custom_jvp's rule object, through the hook, or the
   inline differentiation of a parsed text's call (lax.h). */
JVP(jvp_custom_jvp_call) {
  if (sr_lax_custom_hooks.custom_jvp_call && obj_param(e, "jvp"))
    return sr_lax_custom_hooks.custom_jvp_call(ad, e, x, t, y, ty);
  return sr_lax_jvp_custom_call(ad, e, x, t, y, ty);
}

/* custom_vjp_call: jax.custom_vjp's fwd/bwd, through the hook, or the
   inline differentiation of a parsed text's call. */
JVP(jvp_custom_vjp_call) {
  if (sr_lax_custom_hooks.custom_vjp_call && obj_param(e, "bwd"))
    return sr_lax_custom_hooks.custom_vjp_call(ad, e, x, t, y, ty);
  return sr_lax_jvp_custom_call(ad, e, x, t, y, ty);
}

/* batching.py's BatchTrace.process_custom_jvp_call and
   process_custom_vjp_call (custom_derivatives.py's _custom_jvp_call_vmap,
   _custom_vjp_call_vmap) -- the operands' batch dims moved to the front
   and the primal function batched (batch_jaxpr): only the results that
   depend on a batched operand are batched (batch_subtrace's out_dims).  A
   custom_jvp rule object, or custom_vjp's fwd and bwd, are batched to
   match (the hooks: the rules vmapped with those results' out_axes, as
   batch_custom_jvp_subtrace matches the rule's to the function's); other
   rules stay the equation's (a parsed text's words, whose JVP
   differentiates the batched call_jaxpr). */
BATCH(batch_custom_call) {
  SrAd *ad = &b->ad;
  const char *key = param(e, "call_jaxpr") ? "call_jaxpr" : "fun_jaxpr";
  SrJaxpr *body = body_of(ad, e, key);
  if (!body) return -1;
  uint32_t n = e->nin, no = e->nout;
  uint8_t *inb = sr_xcalloc(n + 1, 1), *outb = sr_xcalloc(no + 1, 1);
  SrVal **in = sr_xcalloc(n + 1, sizeof *in);
  for (uint32_t i = 0; i < n; i++) {
    inb[i] = bd[i] != SR_NOT_MAPPED;
    in[i] = inb[i] ? sr_batch_moveaxis(b, x[i], bd[i], 0) : x[i];
  }
  int jvp_rule = e->prim->id == SR_P_custom_jvp_call && obj_param(e, "jvp") && sr_lax_custom_hooks.custom_jvp_batch;
  int vjp_rule = e->prim->id == SR_P_custom_vjp_call && obj_param(e, "bwd") && sr_lax_custom_hooks.custom_vjp_batch;
  int rule = jvp_rule || vjp_rule;
  uint8_t *force = NULL;
  if (jvp_rule && sr_lax_custom_hooks.custom_jvp_batch_outs) {
    const SrType **pt = sr_xcalloc(n + 1, sizeof *pt);
    for (uint32_t i = 0; i < n && i < sr_nargs(body); i++) pt[i] = sr_args(body)[i]->type;
    force = sr_xcalloc(no + 1, 1);
    if (sr_nargs(body) == n)
      sr_lax_custom_hooks.custom_jvp_batch_outs(ad->I, param(e, "jvp"), inb, b->size, b->axis_name, pt, force);
    free(pt);
  }
  SrJaxpr *J = sr_batch_jaxpr(b, body, inb, force, outb);
  free(force);
  int rc = -1;
  if (J) {
    SrVal *r = NULL;
    if (!rule) {
      r = bind_with_body(ad, e, key, J, (int)n, in);
    } else {
      const SrType **ot = sr_xcalloc(no + 1, sizeof *ot), **it = sr_xcalloc(n + 1, sizeof *it);
      for (uint32_t i = 0; i < no; i++) ot[i] = J->outvars[i]->type;
      for (uint32_t i = 0; i < n; i++) it[i] = sr_args(J)[i]->type;
      SrVal *rv = NULL, *fwd = NULL;
      if (jvp_rule) rv = sr_lax_custom_hooks.custom_jvp_batch(ad->I, param(e, "jvp"), inb, outb, b->size, ot);
      else rv = sr_lax_custom_hooks.custom_vjp_batch(ad->I, param(e, "bwd"), inb, outb, b->size, it, ot, &fwd);
      free(ot);
      free(it);
      if (rv) {
        SrPList ps = {0};
        for (uint32_t p = 0; p < e->nparams; p++) {
          const char *k = e->params[p].key;
          if (strcmp(k, key) == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, J));
          else if (strcmp(k, jvp_rule ? "jvp" : "bwd") == 0) sr_plist_add(&ps, k, sr_ref(rv));
          else if (vjp_rule && strcmp(k, "fwd") == 0) sr_plist_add(&ps, k, sr_ref(fwd));
          else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
        }
        r = sr_ad_bind(ad, e->prim->id, (int)n, in, ps.n, ps.p);
        sr_plist_free(&ps);
        sr_unref(rv);
        sr_unref(fwd);
      }
    }
    if (r) {
      for (uint32_t i = 0; i < no; i++) {
        y[i] = r->seq.items[i];
        ybd[i] = outb[i] ? 0 : SR_NOT_MAPPED;
      }
      rc = 0;
    }
    sr_program_unref(J->prog);
  }
  free(inb);
  free(outb);
  free(in);
  return rc;
}

/* custom_derivatives.py: _custom_jvp_call_transpose_fancy -- a
   custom_jvp_call staged on tangents (a custom_jvp function its own JVP
   rule applies to them, linearly) transposes as its call_jaxpr's
   backward pass, inline. */
TR(tr_custom_jvp_call) {
  SrJaxpr *body = body_of(ad, e, "call_jaxpr");
  if (!body) return -1;
  uint32_t n = e->nin;
  if (sr_nargs(body) != n) {
    sr_raise(ad->I, "TypeError", "custom_jvp_call has %u operands, its call_jaxpr %u", n, sr_nargs(body));
    return -1;
  }
  uint8_t *lin = sr_xcalloc(n + 1, 1);
  SrVal **cin = sr_xcalloc(n + 1, sizeof *cin);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i] == NULL;
  int rc = sr_ad_backward(ad, body, lin, x, ct, cin);
  for (uint32_t i = 0; i < n; i++) {
    if (rc == 0 && lin[i]) cx[i] = sr_ad_keep(ad, cin[i]);
    else sr_unref(cin[i]);
  }
  free(lin);
  free(cin);
  return rc;
}

/* ==== custom_lin ==== */

/* custom_lin's results: the output tangents, from jax.custom_vjp's
   object through the hook (lax.h), or as written in a text. */
static int type_custom_lin(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  SrVal *v = sr_rparam(e, "bwd");
  if (v && v->kind == SR_V_OBJ && sr_lax_custom_hooks.custom_lin_type)
    return sr_lax_custom_hooks.custom_lin_type(cx, e, out);
  if (e->written) {
    for (uint32_t i = 0; i < e->nout; i++) out[i] = e->written[i];
    return 0;
  }
  return sr_terr(cx, "TypeError", "custom_lin: its backward rule did not survive printing");
}

/* Running custom_lin forward is applying a custom_vjp function's
   linearization to tangents (jax.linearize's f_jvp), which JAX refuses. */
static int ev_custom_lin(SrEvalCtx *cx, const SrEvalEqn *e) {
  (void)e;
  return sr_ev_err(cx, "TypeError", "can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
}

/* custom_lin (a custom_vjp function's linearization): its transpose
   applies bwd, through the hook. */
TR(tr_custom_lin) {
  if (sr_lax_custom_hooks.custom_lin_transpose && obj_param(e, "bwd"))
    return sr_lax_custom_hooks.custom_lin_transpose(ad, e, ct, x, cx);
  sr_raise(ad->I, "NotImplementedError", "custom_lin: its backward rule did not survive printing");
  return -1;
}

/* ==== optimization_barrier ==== */

/* core.py: standard_vma_rule -- with check_vma every operand varies over
   the same axes. */
static int vma_equal(SrTypeCtx *cx, const char *name, const SrRuleEqn *e) {
  if (!cx->check_vma || e->nin < 2) return 0;
  SrBuf all = SR_BUF_INIT, first = SR_BUF_INIT, one = SR_BUF_INIT;
  int same = 1;
  for (uint32_t i = 0; i < e->nin; i++) {
    sr_buf_reset(&one);
    put_frozenset(&one, e->in[i]->mesh, e->in[i]->varying);
    if (i == 0) sr_buf_puts(&first, sr_buf_str(&one));
    else if (strcmp(sr_buf_str(&one), sr_buf_str(&first)) != 0) same = 0;
    sr_buf_puts(&all, i ? ", " : "[");
    sr_buf_puts(&all, sr_buf_str(&one));
  }
  sr_buf_free(&first);
  sr_buf_free(&one);
  if (same) {
    sr_buf_free(&all);
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "Primitive %s requires varying manual axes to match, but got %s]. Please open an issue at "
                    "https://github.com/jax-ml/jax/issues and as a temporary workaround pass the check_vma=False "
                    "argument to `jax.shard_map`", name, sr_buf_str(&all));
  sr_buf_free(&all);
  return report(cx, "ValueError", &b);
}

/* lax.py: _optimization_barrier_abstract_eval -- the identity on every
   operand. */
static int type_optimization_barrier(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (e->nout != e->nin)
    return sr_terr(cx, "TypeError", "optimization_barrier has %u operands but %u results", e->nin, e->nout);
  if (vma_equal(cx, "optimization_barrier", e) < 0) return -1;
  for (uint32_t i = 0; i < e->nin; i++) out[i] = e->in[i];
  return 0;
}

static int ev_barrier(SrEvalCtx *cx, const SrEvalEqn *e) {
  (void)cx;
  for (uint32_t i = 0; i < e->nout; i++) e->out[i] = sr_array_retype(e->in[i], e->out_type[i], NULL);
  return 0;
}

/* lax.py's dce_sink_p: no results, the no-DCE effect (the value it sinks
   stays computed); linear (ad.deflinear: sunk again on the tangent, no
   cotangent), and batched by sinking the batched value. */
static int type_dce_sink(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  (void)out;
  return sr_rule_arity(cx, e, 1, 0);
}

static int ev_dce_sink(SrEvalCtx *cx, const SrEvalEqn *e) {
  (void)cx, (void)e;
  return 0;
}

JVP(jvp_dce_sink) {
  (void)y, (void)ty;
  if (!sr_ad_bind_eqn(ad, e, x)) return -1;
  if (t[0] && !sr_ad_bind(ad, SR_P_dce_sink, 1, t, (int)e->nparams, e->params)) return -1;
  return 0;
}

TR(tr_dce_sink) {
  (void)ad, (void)e, (void)ct, (void)x;
  cx[0] = NULL;
  return 0;
}

static int batch_dce_sink(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  (void)bd, (void)y, (void)ybd;
  return sr_ad_bind(&b->ad, SR_P_dce_sink, 1, x, (int)e->nparams, e->params) ? 0 : -1;
}

static uint32_t nout_dce_sink(int nin, const SrParam *ps, int np) {
  (void)nin, (void)ps, (void)np;
  return 0;
}

/* lax.py's composite_jvp and composite_transpose: no rules (a custom_jvp
   or custom_vjp is the way to differentiate a composite) */
JVP(jvp_composite) {
  (void)e, (void)x, (void)t, (void)y, (void)ty;
  return sr_raise(ad->I, "ValueError",
                  "JVP rule for composite not implemented. You can use `jax.custom_jvp` to add support. See "
                  "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html"),
         -1;
}

TR(tr_composite) {
  (void)e, (void)ct, (void)x, (void)cx;
  return sr_raise(ad->I, "ValueError",
                  "Transpose rule for composite not implemented. You can use`jax.custom_jvp` or `jax.custom_vjp` to "
                  "add support. See https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html"),
         -1;
}

JVP(jvp_barrier) {
  SrVal *r = sr_ad_bind_eqn(ad, e, x);
  if (!r) return -1;
  SrVal *small[32], **nz = e->nin <= 32 ? small : sr_xcalloc(e->nin, sizeof *nz);
  int k = 0;
  for (uint32_t i = 0; i < e->nin; i++)
    if (t[i]) nz[k++] = t[i];
  SrVal *rt = sr_ad_bind(ad, SR_P_optimization_barrier, k, nz, 0, NULL);
  if (nz != small) free(nz);
  if (!rt) return -1;
  for (uint32_t i = 0, q = 0; i < e->nout; i++) {
    y[i] = r->seq.items[i];
    ty[i] = t[i] ? rt->seq.items[q++] : NULL;
  }
  return 0;
}

TR(tr_barrier) {
  (void)x;
  SrVal *small[32], **nz = e->nout <= 32 ? small : sr_xcalloc(e->nout, sizeof *nz);
  int k = 0;
  for (uint32_t i = 0; i < e->nout; i++)
    if (ct[i]) nz[k++] = ct[i];
  SrVal *r = sr_ad_bind(ad, SR_P_optimization_barrier, k, nz, 0, NULL);
  if (nz != small) free(nz);
  if (!r) return -1;
  for (uint32_t i = 0, q = 0; i < e->nin; i++) cx[i] = ct[i] ? r->seq.items[q++] : NULL;
  return 0;
}

/* lax.py: _optimization_barrier_batcher -- the barrier over the batched
   operands, each result where its operand's batch dim is. */
BATCH(batch_barrier) {
  SrVal *r = sr_ad_bind_eqn(&b->ad, e, x);
  if (!r) return -1;
  for (uint32_t i = 0; i < e->nout; i++) {
    y[i] = r->seq.items[i];
    ybd[i] = bd[i];
  }
  return 0;
}

/* ==== scan ==== */

/* Reading scan's ft_in, the FlatTree param that replaced num_consts and
   num_carry in JAX 0.10.  Printed, a FlatTree is its repr (flattree.py):
   a tuple of FlatTrees "(..., ...)", "Pytree(vals=[...], tree=PyTreeDef(...))",
   "Static(...)" (no leaves), "RightsOnly(...)" (only the Right(...) leaves
   count), or a single leaf ("None").  lax.scan binds
   ((None,)*nconsts, (None,)*ncarry, (None,)*nxs). */

typedef struct Span {
  const char *s;
  size_t n;
} Span;

static Span trim(const char *s, size_t n) {
  while (n && (*s == ' ' || *s == '\n')) s++, n--;
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\n')) n--;
  return (Span){s, n};
}

static int starts(Span x, const char *p) {
  size_t k = strlen(p);
  return x.n >= k && memcmp(x.s, p, k) == 0;
}

/* The end of the bracket opened at s[0] (its index), or 0. */
static size_t close_of(const char *s, size_t n) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      depth++;
    } else if ((c == ')' || c == ']' || c == '}') && --depth == 0) {
      return i;
    }
  }
  return 0;
}

/* Splits the inside of a bracketed x at depth-0 commas; returns the number
   of parts (at most max; -1 if more), empty parts (a 1-tuple's trailing
   comma) left out. */
static int split_parts(Span x, Span *parts, int max) {
  const char *s = x.s + 1;
  size_t n = x.n >= 2 ? x.n - 2 : 0, st = 0;
  int depth = 0, k = 0;
  char quote = 0;
  for (size_t i = 0; i <= n; i++) {
    char c = i < n ? s[i] : ',';
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[' || c == '{') depth++;
    else if (c == ')' || c == ']' || c == '}') depth--;
    else if (c == ',' && depth == 0) {
      Span p = trim(s + st, i - st);
      st = i + 1;
      if (!p.n) continue;
      if (k == max) return -1;
      parts[k++] = p;
    }
  }
  return k;
}

/* Leaves of a FlatTree repr; with rights, only Right(...) leaves.  -1 for
   what cannot be read. */
static int ft_leaves(Span x, int rights) {
  Span parts[64];
  if (starts(x, "(") && close_of(x.s, x.n) == x.n - 1) {
    int k = split_parts(x, parts, 64), total = 0;
    for (int i = 0; i < k; i++) {
      int c = ft_leaves(parts[i], rights);
      if (c < 0) return -1;
      total += c;
    }
    return k < 0 ? -1 : total;
  }
  if (starts(x, "Pytree(vals=[")) {
    Span list = {x.s + 12, 0};
    list.n = close_of(list.s, x.n - 12) + 1;
    if (list.n < 2) return -1;
    int k = split_parts(list, parts, 64), total = 0;
    for (int i = 0; i < k; i++) total += !rights || starts(parts[i], "Right(");
    return k < 0 ? -1 : total;
  }
  if (starts(x, "RightsOnly(")) return ft_leaves(trim(x.s + 11, x.n - 12), 1);
  if (starts(x, "Static(")) return 0;
  return !rights || starts(x, "Right(");
}

/* The leaf counts of the ngroups top-level groups of ft_in. */
static int ft_groups(const SrVal *v, int *counts, int ngroups) {
  SrBuf b = SR_BUF_INIT;
  Span x;
  if (v->text) {
    x = trim(v->text, v->textlen);
  } else {
    sr_val_repr(&b, v);
    x = trim(sr_buf_str(&b), b.len);
  }
  Span parts[8];
  int k = -1;
  if (starts(x, "Pytree(")) {
    /* one flattened pytree: its treedef's children are the groups */
    const char *t = strstr(x.s, "tree=PyTreeDef(");
    if (t && t < x.s + x.n) {
      Span tree = {t + 15, 0};
      tree.n = close_of(tree.s, (size_t)(x.s + x.n - tree.s)) + 1;
      k = tree.n >= 2 && starts(tree, "(") ? split_parts(tree, parts, 8) : -1;
      for (int i = 0; k == ngroups && i < k; i++) {
        counts[i] = 0;
        for (size_t j = 0; j < parts[i].n; j++) counts[i] += parts[i].s[j] == '*';
      }
    }
  } else if (starts(x, "(")) {
    k = split_parts(x, parts, 8);
    for (int i = 0; k == ngroups && i < k; i++)
      if ((counts[i] = ft_leaves(parts[i], 0)) < 0) k = -1;
  }
  sr_buf_free(&b);
  return k == ngroups ? 0 : -1;
}

/* The numbers of consts and carries of a scan: num_consts / num_carry, or
   the leaf counts of ft_in. */
static int scan_split(SrTypeCtx *cx, const SrRuleEqn *e, int64_t *nconsts, int64_t *ncarry) {
  SrVal *ft = sr_rparam(e, "ft_in");
  if (!sr_rparam(e, "num_carry") && ft) {
    int c[3];
    if (ft_groups(ft, c, 3) < 0)
      return sr_terr(cx, "TypeError", "scan's ft_in is not a FlatTree of consts, carry and xs shardrepl can read");
    *nconsts = c[0];
    *ncarry = c[1];
    return 0;
  }
  /* a hand-abbreviated text may leave them out: no consts, no carry */
  *nconsts = *ncarry = 0;
  if (sr_rparam_int(cx, e, "num_consts", 0, nconsts) < 0 || sr_rparam_int(cx, e, "num_carry", 0, ncarry) < 0)
    return -1;
  return 0;
}

/* core.py: mapped_leading_aval -- one element of a scanned-over array:
   the leading dimension gone, with its sharding. */
static const SrType *slice_leading(const SrType *t) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  memmove(&b.dims[0], &b.dims[1], (size_t)(t->ndim - 1) * sizeof b.dims[0]);
  b.ndim--;
  return sr_type_get(&b);
}

/* core.py: unmapped_leading_aval -- results stacked along a new,
   unsharded leading dimension. */
static const SrType *stack_leading(const SrType *t, int64_t length) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  memmove(&b.dims[1], &b.dims[0], (size_t)t->ndim * sizeof b.dims[0]);
  memset(&b.dims[0], 0, sizeof b.dims[0]);
  b.dims[0].size = length;
  b.ndim++;
  return sr_type_get(&b);
}

/* "scan jaxpr takes input {what} types\n{body},\ncalled with {called}\n{operands}" */
static int scan_compat(SrTypeCtx *cx, const char *what, const char *called, const SrJaxpr *body, uint32_t first,
                       const SrType *const *ops, uint32_t n) {
  int ok = 1;
  for (uint32_t i = 0; i < n; i++)
    if (!same_type(arg_type(body, first + i), ops[i])) ok = 0;
  if (ok) return 0;
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "scan jaxpr takes input %s types\n", what);
  for (uint32_t i = 0; i < n; i++) {
    if (i) sr_buf_putc(&b, ' ');
    put_type(&b, arg_type(body, first + i));
  }
  sr_buf_printf(&b, ",\ncalled with %s\n", called);
  put_avals(&b, ops, n);
  return report(cx, "JaxprTypeError", &b);
}

/* loops.py: _scan_abstract_eval and _scan_typecheck, with lax.scan's
   checks of the scanned-over arrays (_infer_scan_length) and of the carry
   (_check_carry_type).  Operands are consts, initial carry, xs; results
   are the final carry and the stacked ys. */
static int type_scan(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const char *const keys[] = {"jaxpr", NULL};
  const SrJaxpr *body = jaxpr_param(e, keys);
  if (!body) return sr_terr(cx, "TypeError", "scan equation has no 'jaxpr' param");
  int64_t nconsts, ncarry, length;
  if (scan_split(cx, e, &nconsts, &ncarry) < 0) return -1;
  /* without a length param, the leading size of the first scanned array */
  length = nconsts >= 0 && ncarry >= 0 && nconsts + ncarry < e->nin && e->in[nconsts + ncarry]->ndim
               ? e->in[nconsts + ncarry]->dims[0].size
               : -1;
  if (sr_rparam_int(cx, e, "length", length < 0, &length) < 0) return -1;
  if (sr_nargs(body) != e->nin)
    /* JAX's message lacks its f-string prefix; it reads as written */
    return sr_terr(cx, "ValueError", "scan number of arguments doesn't match the number of jaxpr arguments: "
                                     "{len(args)} vs {len(jaxpr.in_avals)}");
  if (nconsts < 0 || ncarry < 0 || nconsts + ncarry > e->nin || ncarry > body->nout)
    return sr_terr(cx, "TypeError", "scan: num_consts=%lld and num_carry=%lld do not fit %u operands and %u body "
                                    "outputs", (long long)nconsts, (long long)ncarry, e->nin, body->nout);
  if (e->nout != body->nout)
    return sr_terr(cx, "TypeError", "scan has %u results but its jaxpr returns %u values", e->nout, body->nout);
  uint32_t nc = (uint32_t)nconsts, nk = (uint32_t)ncarry, nx = e->nin - nc - nk;
  const SrType *const *consts = e->in, *const *init = e->in + nc, *const *xs = e->in + nc + nk;
  int rc = -1;
  const SrType **x1 = sr_xcalloc(nx + 1, sizeof *x1), **bouts = sr_xcalloc(body->nout + 1, sizeof *bouts);
  /* the scanned-over arrays: a leading axis of the scan's length, not
     sharded (lax.scan: _infer_scan_length and its replication check) */
  SrBuf b = SR_BUF_INIT;
  for (uint32_t i = 0; i < nx; i++)
    if (!xs[i]->ndim) {
      sr_buf_puts(&b, "scan got value with no leading axis to scan over: ");
      sr_type_long(&b, xs[i]);
      sr_buf_putc(&b, '.');
      report(cx, "ValueError", &b);
      goto done;
    }
  for (uint32_t i = 0; i < nx; i++)
    if (xs[i]->dims[0].size != length) {
      sr_buf_printf(&b, "scan got `length` argument of %lld which disagrees with leading axis sizes [", (long long)length);
      for (uint32_t k = 0; k < nx; k++) sr_buf_printf(&b, k ? ", %lld" : "%lld", (long long)xs[k]->dims[0].size);
      sr_buf_puts(&b, "].");
      report(cx, "ValueError", &b);
      goto done;
    }
  for (uint32_t i = 0; i < nx; i++)
    if (xs[i]->dims[0].nax) {
      sr_buf_puts(&b, "0th dimension of all xs should be replicated. Got ");
      for (uint32_t k = 0; k < nx; k++) {
        SrShardSpec ss;
        sr_shard_of_type(xs[k], &ss);
        SrVal *spec = sr_shard_to_spec_val(&ss);
        if (k) sr_buf_puts(&b, ", ");
        sr_val_repr(&b, spec);
        sr_unref(spec);
      }
      report(cx, "ValueError", &b);
      goto done;
    }
  for (uint32_t i = 0; i < nx; i++) x1[i] = slice_leading(xs[i]);
  if (scan_compat(cx, "const", "consts of type", body, 0, consts, nc) < 0 ||
      scan_compat(cx, "carry", "initial carry of type", body, nc, init, nk) < 0 ||
      scan_compat(cx, "sequence", "sequence whose items have type", body, nc + nk, x1, nx) < 0)
    goto done;
  if (run_body(cx, body, NULL, 0, bouts) < 0) goto done;
  if (check_carry(cx, "scan body", init, bouts, nk, nk) < 0) goto done;
  for (uint32_t i = nk; i < body->nout; i++)
    if (bouts[i] && bouts[i]->ndim >= SR_MAX_RANK) {
      sr_terr(cx, "ValueError", "scan: a stacked result of rank %d is more than shardrepl handles",
              bouts[i]->ndim + 1);
      goto done;
    }
  for (uint32_t i = 0; i < nk; i++) out[i] = bouts[i];
  for (uint32_t i = nk; i < body->nout; i++) out[i] = bouts[i] ? stack_leading(bouts[i], length) : NULL;
  rc = 0;
done:
  sr_buf_free(&b);
  free(x1);
  free(bouts);
  return rc;
}

static const SrType *drop_dim0(const SrType *l) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  b.dims[0].nax = 0;
  return sr_type_get(&b);
}

/* The layout of one slice (dim 0 removed) of a layout whose dim 0 is whole. */
static const SrType *slice_layout(const SrType *l, const SrType *slice_type) {
  SrTypeBuilder b;
  sr_type_builder(&b, slice_type);
  b.weak = 0;
  b.varying = 0;
  for (int i = 1; i < l->ndim; i++) b.dims[i - 1] = l->dims[i];
  b.unreduced = l->unreduced;
  b.ukind = l->ukind;
  b.reduced = l->reduced;
  b.mesh = l->mesh ? l->mesh : b.mesh;
  return sr_type_get(&b);
}

/* The layout of a stack of `length` slices laid out as l. */
static const SrType *stack_layout(const SrType *l, int64_t length, const SrType *stack_type) {
  SrTypeBuilder b;
  sr_type_builder(&b, stack_type);
  b.weak = 0;
  b.varying = 0;
  memset(&b.dims[0], 0, sizeof b.dims[0]);
  b.dims[0].size = length;
  for (int i = 0; i < l->ndim; i++) b.dims[i + 1] = l->dims[i];
  b.unreduced = l->unreduced;
  b.ukind = l->ukind;
  b.reduced = l->reduced;
  b.mesh = l->mesh ? l->mesh : b.mesh;
  return sr_type_get(&b);
}

/* The destinations of a scan body's stacked results at iteration i: slice i
   of each stack made so far, for the first device of each distinct stack
   buffer (devices sharing one must also share the result).  0 when there
   are none yet.  The stacks flagged in acc are accumulators. */
static int stack_dests(SrEvDest *d, SrArray *const *ys, uint32_t ny, int64_t ncarry, int64_t i, int64_t length,
                       const uint8_t *acc) {
  int any = 0;
  for (uint32_t k = 0; k < ny; k++) {
    SrEvDestOut *o = &d->out[ncarry + k];
    o->acc = acc[k];
    SrArray *st = ys[k];
    if (!st || length <= 0) continue;
    if (!o->buf) {
      o->buf = sr_xcalloc((size_t)st->ndev + 1, sizeof *o->buf);
      o->taken = sr_xcalloc((size_t)st->ndev + 1, 1);
      o->ndev = st->ndev;
    }
    for (int p = 0; p < st->ndev; p++) {
      int q = 0;
      while (q < p && st->shard[q] != st->shard[p]) q++;
      o->buf[p] = q == p ? st->shard[p] : NULL;
      o->taken[p] = 0;
      if (st->shard[p]) {
        o->per = st->shard[p]->nbytes / (size_t)length;
        any = 1;
      }
    }
    o->off = (size_t)i * o->per;
  }
  return any;
}

static int in_stacks(const SrBuffer *b, SrArray *const *ys, uint32_t ny) {
  const SrBuffer *owner = b->base ? b->base : b;
  for (uint32_t k = 0; k < ny; k++)
    for (int p = 0; ys[k] && p < ys[k]->ndev; p++)
      if (ys[k]->shard[p] == owner) return 1;
  return 0;
}

/* After a body run with destinations: a slice handed out but not holding
   its stacked result exactly (a rule used it for a temporary, or the result
   is laid out otherwise and must be moved) is about to be overwritten, so
   any result still reading a stack -- but the stacked results that are
   their slices -- becomes a copy first. */
static int unalias_results(SrEvalCtx *cx, const SrEvDest *d, SrArray **res, uint32_t nout, SrArray *const *ys,
                           uint32_t ny, int64_t ncarry, int64_t i) {
  int clean = 1;
  uint8_t *exact = sr_xcalloc(nout + 1, 1);
  for (uint32_t k = 0; k < ny; k++) {
    const SrEvDestOut *o = &d->out[ncarry + k];
    SrArray *y = res[ncarry + k];
    exact[ncarry + k] = ys[k] && y->mesh == ys[k]->mesh &&
                        sr_layout_same(slice_layout(ys[k]->layout, y->type), y->layout);
    for (int p = 0; p < y->ndev && exact[ncarry + k]; p++) {
      SrBuffer *s = ys[k]->shard[p], *b = y->shard[p];
      if (!b || !s) continue;
      exact[ncarry + k] = b->nbytes == o->per && (char *)b->data == (char *)s->data + (size_t)i * o->per;
    }
    for (int p = 0; o->buf && p < o->ndev; p++)
      if (o->taken[p] && !exact[ncarry + k]) clean = 0;
  }
  int rc = 0;
  for (uint32_t k = 0; !clean && k < nout && rc == 0; k++) {
    SrArray *a = res[k], *c = NULL;
    if (exact[k]) continue;
    for (int p = 0; p < a->ndev && rc == 0; p++) {
      if (!a->shard[p] || (c && c->shard[p] != a->shard[p]) || !in_stacks(a->shard[p], ys, ny)) continue;
      if (!c) c = sr_array_retype(a, a->type, a->layout);
      SrBuffer *b = sr_ev_buffer(cx, a->shard[p]->nbytes);
      if (!b) {
        rc = -1;
        break;
      }
      memcpy(b->data, a->shard[p]->data, b->nbytes);
      for (int q = p; q < a->ndev; q++)
        if (c->shard[q] == a->shard[p]) {
          sr_buffer_unref(c->shard[q]);
          c->shard[q] = sr_buffer_ref(b);
        }
      sr_buffer_unref(b);
    }
    if (c) {
      sr_array_unref(res[k]);
      res[k] = c;
    }
  }
  free(exact);
  return rc;
}

static int ev_scan(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrJaxpr *j = sr_ev_param_jaxpr(e, "jaxpr");
  int64_t length, nconsts, ncarry, reverse = 0;
  if (!j) return sr_ev_err(cx, "TypeError", "scan equation has no jaxpr");
  if (sr_ev_param_int(cx, e, "length", &length) < 0 || sr_ev_param_int(cx, e, "num_consts", &nconsts) < 0 ||
      sr_ev_param_int(cx, e, "num_carry", &ncarry) < 0)
    return -1;
  if (sr_ev_param(e, "reverse")) sr_ev_param_int(cx, e, "reverse", &reverse);
  uint32_t nx = e->nin - (uint32_t)nconsts - (uint32_t)ncarry, ny = e->nout - (uint32_t)ncarry;
  if (sr_nargs(j) != e->nin || j->nout != e->nout) return sr_ev_err(cx, "TypeError", "scan: the body does not match the equation");
  SrArray **args = sr_xcalloc(e->nin + 1, sizeof *args);
  SrArray **res = sr_xcalloc(e->nout + 1, sizeof *res);
  SrArray **xs = sr_xcalloc(nx + 1, sizeof *xs);
  SrArray **ys = sr_xcalloc(ny + 1, sizeof *ys);
  int rc = 0;
  SrEvDest sd = {e->nout, sr_xcalloc(e->nout + 1, sizeof *sd.out)};
  SrCopy *copies = NULL;  /* an iteration's results into their slices */
  int ncopy = 0, copy_cap = 0;
  /* a stack the walk has the scan accumulate into (SrEvAccum, exec/eval.h):
     it starts as the add's other operand, and each iteration's slice is
     added into it, by the rule that makes it where it can (a gemm) */
  uint8_t *acc = sr_xcalloc(ny + 1, 1);  /* which stacks accumulate */
  if (cx->acc) {
    SrEvAccIn *a = cx->acc;
    cx->acc = NULL;
    for (int i = 0; i < a->n; i++) {
      int64_t k = a->out[i] - ncarry;
      if (k < 0 || k >= (int64_t)ny || ys[k]) {
        rc = sr_ev_err(cx, "RuntimeError", "internal: scan result %d is no stack to accumulate", a->out[i]);
        continue;
      }
      ys[k] = a->in[i];
      acc[k] = 1;
      a->in[i] = NULL;
    }
  }
  for (uint32_t i = 0; i < nconsts + ncarry; i++) args[i] = sr_array_ref(e->in[i]);
  /* an initial carry at its last use and held by no one else: its buffers
     move to the scan's own carry, so that the body may overwrite them */
  for (uint32_t i = (uint32_t)nconsts; i < nconsts + ncarry && i < 32; i++) {
    SrArray *x = e->in[i];
    if (!(e->donate >> i & 1) || x->rc != 2 || x->local) continue;
    SrArray *c = sr_array_retype(x, x->type, x->layout);
    for (int p = 0; p < x->ndev; p++) {
      sr_buffer_unref(x->shard[p]);
      x->shard[p] = NULL;
    }
    sr_array_unref(args[i]);
    args[i] = c;
  }
  /* the scanned-over dim whole on every device */
  for (uint32_t k = 0; k < nx && rc == 0; k++) {
    SrArray *x = e->in[nconsts + ncarry + k];
    xs[k] = sr_redistribute(cx, x, x->mesh, drop_dim0(x->layout));
    if (!xs[k]) rc = -1;
  }
  sr_ev_push(cx, "body");
  for (int64_t it = 0; it < length && rc == 0; it++) {
    int64_t i = reverse ? length - 1 - it : it;
    for (uint32_t k = 0; k < nx; k++) {
      SrArray *x = xs[k];
      const SrType *st = sr_args(j)[nconsts + ncarry + k]->type;
      SrArray *s = sr_array_new(st, slice_layout(x->layout, st), x->mesh);
      size_t per = sr_array_shard_bytes(x) / (size_t)(length ? length : 1);
      for (int p = 0; p < x->ndev; p++)
        if (x->shard[p]) s->shard[p] = sr_buffer_view(x->shard[p], (size_t)i * per, per);
      sr_array_unref(args[nconsts + ncarry + k]);
      args[nconsts + ncarry + k] = s;
    }
    for (uint32_t k = 0; k < e->nout; k++) res[k] = NULL;
    /* the body makes this iteration's stacked results in their slices
       (once the stacks exist), and gets the carries and slices to itself,
       so that it may overwrite a carry at its last use */
    int any_dest = stack_dests(&sd, ys, ny, ncarry, i, length, acc);
    cx->dest = any_dest ? &sd : NULL;
    cx->steal = 0;
    for (uint32_t k = (uint32_t)nconsts; k < e->nin && k < 64; k++) cx->steal |= (uint64_t)1 << k;
    int brc = sr_ev_jaxpr(cx, j, args, res);
    for (uint32_t k = (uint32_t)nconsts; k < e->nin && k < 64; k++) args[k] = NULL;
    if (brc < 0) {
      rc = -1;
      break;
    }
    if (any_dest && unalias_results(cx, &sd, res, e->nout, ys, ny, ncarry, i) < 0) {
      rc = -1;
      break;
    }
    for (uint32_t k = 0; k < ncarry; k++) {
      sr_array_unref(args[nconsts + k]);
      args[nconsts + k] = res[k];
      res[k] = NULL;
    }
    for (uint32_t k = 0; k < ny && rc == 0; k++) {
      SrArray *y = res[ncarry + k];
      if (!ys[k]) {
        ys[k] = sr_array_new(e->out_type[ncarry + k], stack_layout(y->layout, length, e->out_type[ncarry + k]), y->mesh);
        for (int p = 0; p < y->ndev && !rc; p++) {
          if (!y->shard[p]) continue;
          int q = 0;
          while (q < p && y->shard[q] != y->shard[p]) q++;
          ys[k]->shard[p] = q < p ? sr_buffer_ref(ys[k]->shard[q]) : sr_ev_buffer(cx, y->shard[p]->nbytes * (size_t)length);
          if (!ys[k]->shard[p]) rc = -1;
        }
        if (rc) break;
      } else if (y->mesh != ys[k]->mesh || !sr_layout_same(slice_layout(ys[k]->layout, y->type), y->layout)) {
        SrArray *r = sr_redistribute(cx, y, ys[k]->mesh, slice_layout(ys[k]->layout, y->type));
        sr_array_unref(y);
        res[ncarry + k] = y = r;
        if (!r) {
          rc = -1;
          break;
        }
      }
      for (int p = 0; p < y->ndev; p++) {
        if (!y->shard[p]) continue;
        /* devices that shared a stack but got different slices part */
        int q = 0;
        while (q < p && ys[k]->shard[q] != ys[k]->shard[p]) q++;
        if (q < p && y->shard[q] != y->shard[p]) {
          SrBuffer *c = sr_buffer_copy(ys[k]->shard[p]);
          sr_buffer_unref(ys[k]->shard[p]);
          ys[k]->shard[p] = c;
          q = p;
        }
        if (q < p) continue;
        size_t per = y->shard[p]->nbytes;
        char *slot = (char *)ys[k]->shard[p]->data + (size_t)i * per;
        if (y->shard[p]->data == slot) continue;
        if (acc[k]) {
          /* a slice not made in place is added into the accumulator; one
             handed out must hold its result */
          const SrEvDestOut *o = &sd.out[ncarry + k];
          if (any_dest && o->buf && p < o->ndev && o->taken[p]) {
            rc = sr_ev_err(cx, "RuntimeError", "internal: an accumulated slice was not its result");
            break;
          }
          SrDtype dt = y->type->dtype;
          sr_comm_fold(SR_RED_SUM, dt, per / sr_elem_size(dt), slot, y->shard[p]->data);
          continue;
        }
        if (ncopy == copy_cap) copies = sr_xrealloc(copies, (size_t)(copy_cap = 2 * copy_cap + 8) * sizeof *copies);
        copies[ncopy++] = (SrCopy){slot, y->shard[p]->data, per};
      }
    }
    /* the devices' copies side by side on the pool (exec/ew_pieces.h) */
    sr_copies_run(copies, ncopy);
    ncopy = 0;
    for (uint32_t k = ncarry; k < e->nout; k++) {
      sr_array_unref(res[k]);
      res[k] = NULL;
    }
    if (rc == 0 && cx->I && sr_interrupt_point(cx->I)) rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
  }
  sr_ev_pop(cx);
  if (rc == 0) {
    for (uint32_t k = 0; k < ncarry; k++) e->out[k] = sr_array_retype(args[nconsts + k], e->out_type[k], NULL);
    for (uint32_t k = 0; k < ny; k++) {
      if (!ys[k]) {
        /* length 0: empty stacks */
        const SrType *t = e->out_type[ncarry + k];
        const SrMesh *m = sr_ev_mesh_for(cx, e, t);
        ys[k] = sr_array_new(t, sr_layout_of_type(t), m);
        for (int p = 0; p < ys[k]->ndev; p++) ys[k]->shard[p] = sr_buffer_new(0);
      }
      const SrType *t = e->out_type[ncarry + k];
      e->out[ncarry + k] = sr_redistribute_typed(cx, ys[k], ys[k]->mesh, sr_ev_out_layout(cx, e, ncarry + k, ys[k]->mesh), t);
      if (!e->out[ncarry + k]) rc = -1;
    }
  }
  for (uint32_t i = 0; i < e->nin; i++) sr_array_unref(args[i]);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(res[i]);
  for (uint32_t k = 0; k < nx; k++) sr_array_unref(xs[k]);
  for (uint32_t k = 0; k < ny; k++) sr_array_unref(ys[k]);
  for (uint32_t k = 0; k < e->nout; k++) {
    free(sd.out[k].buf);
    free(sd.out[k].taken);
  }
  free(sd.out);
  free(acc);
  free(copies);
  free(args);
  free(res);
  free(xs);
  free(ys);
  return rc;
}

/* rules of scan and cond (lax/control_flow/loops.py:
 * _scan_jvp, _scan_linearize, _scan_transpose_fancy; conditionals.py).
 *
 * A scan's operands are its consts, its carries and its scanned-over xs;
 * its results the final carries and the stacked ys.  Linearized, a scan
 * becomes a primal scan that also returns its per-iteration residuals as
 * extra stacked outputs (residuals that are consts or xs elements are
 * passed from outside instead), and a tangent scan over the linear body;
 * transposed, the tangent scan runs in reverse, its const cotangents
 * accumulated in carries.
 */

typedef struct Scan {
  SrJaxpr *body;
  int nc, nk, nx, ny;
  int64_t length;
  int reverse;
  int ft;          /* ft_in/ft_out params (JAX 0.10) rather than num_consts */
} Scan;

static int count_leaves(const SrVal *v) {
  if (!sr_is_seq(v)) return 1;
  int n = 0;
  for (int i = 0; i < v->seq.n; i++) n += count_leaves(v->seq.items[i]);
  return n;
}

static int scan_read(SrAd *ad, const SrEqn *e, Scan *s) {
  memset(s, 0, sizeof *s);
  SrVal *j = param(e, "jaxpr");
  if (!j || j->kind != SR_V_JAXPR) return sr_raise(ad->I, "TypeError", "scan equation has no 'jaxpr' param"), -1;
  s->body = j->jx.jaxpr;
  SrVal *ft = param(e, "ft_in"), *nc = param(e, "num_consts"), *nk = param(e, "num_carry");
  if (nc || nk || !ft) {
    s->nc = nc && nc->kind == SR_V_INT ? (int)nc->i : 0;
    s->nk = nk && nk->kind == SR_V_INT ? (int)nk->i : 0;
  } else {
    if (ft->kind != SR_V_TUPLE || ft->seq.n != 3)
      return sr_raise(ad->I, "NotImplementedError", "autodiff of a scan whose ft_in is not a tuple of three groups"), -1;
    s->ft = 1;
    s->nc = count_leaves(ft->seq.items[0]);
    s->nk = count_leaves(ft->seq.items[1]);
  }
  s->nx = (int)e->nin - s->nc - s->nk;
  s->ny = (int)s->body->nout - s->nk;
  SrVal *len = param(e, "length"), *rev = param(e, "reverse");
  s->length = len && len->kind == SR_V_INT ? len->i : -1;
  if (s->length < 0 && s->nx > 0) s->length = e->in[s->nc + s->nk]->type->dims[0].size;
  s->reverse = rev && sr_val_truthy(rev);
  if (s->nx < 0 || s->ny < 0)
    return sr_raise(ad->I, "TypeError", "scan: its operands do not fit its body"), -1;
  return 0;
}

static SrVal *nones(int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_none());
  return t;
}

static SrVal *groups(int a, int b, int c, int three) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 3);
  sr_seq_push(NULL, t, nones(a));
  sr_seq_push(NULL, t, nones(b));
  if (three) sr_seq_push(NULL, t, nones(c));
  return t;
}

void sr_lax_scan_params(SrPList *ps, const SrEqn *e, SrJaxpr *body, int nc, int nk, int nx, int reverse) {
  int ny = (int)body->nout - nk;
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "jaxpr") == 0) sr_plist_add(ps, k, sr_jaxpr_val(NULL, body));
    else if (strcmp(k, "ft_in") == 0) sr_plist_add(ps, k, groups(nc, nk, nx, 1));
    else if (strcmp(k, "ft_out") == 0) sr_plist_add(ps, k, groups(nk, ny, 0, 0));
    else if (strcmp(k, "num_consts") == 0) sr_plist_add(ps, k, sr_int(NULL, nc));
    else if (strcmp(k, "num_carry") == 0) sr_plist_add(ps, k, sr_int(NULL, nk));
    else if (strcmp(k, "linear") == 0) {
      SrVal *l = sr_seq(NULL, SR_V_TUPLE, nc + nk + nx);
      for (int i = 0; i < nc + nk + nx; i++) sr_seq_push(NULL, l, sr_bool(0));
      sr_plist_add(ps, k, l);
    } else if (strcmp(k, "reverse") == 0) sr_plist_add(ps, k, sr_bool(reverse));
    else sr_plist_add(ps, k, sr_ref(e->params[p].val));
  }
}

int sr_lax_scan_shape(SrAd *ad, const SrEqn *e, int *nc, int *nk, int64_t *length, int *reverse) {
  Scan s;
  if (scan_read(ad, e, &s) < 0) return -1;
  *nc = s.nc, *nk = s.nk, *length = s.length, *reverse = s.reverse;
  return 0;
}

/* Binds a scan like e with a new body and operand counts. */
static SrVal *bind_scan(SrAd *ad, const SrEqn *e, const Scan *s, SrJaxpr *body, int nc, int nk, int nx,
                        int reverse, int nin, SrVal **in) {
  SrPList ps = {0};
  int ny = (int)body->nout - nk;
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "jaxpr") == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, body));
    else if (strcmp(k, "ft_in") == 0) sr_plist_add(&ps, k, groups(nc, nk, nx, 1));
    else if (strcmp(k, "ft_out") == 0) sr_plist_add(&ps, k, groups(nk, ny, 0, 0));
    else if (strcmp(k, "num_consts") == 0) sr_plist_add(&ps, k, sr_int(NULL, nc));
    else if (strcmp(k, "num_carry") == 0) sr_plist_add(&ps, k, sr_int(NULL, nk));
    else if (strcmp(k, "linear") == 0) {
      SrVal *l = sr_seq(NULL, SR_V_TUPLE, nc + nk + nx);
      for (int i = 0; i < nc + nk + nx; i++) sr_seq_push(NULL, l, sr_bool(0));
      sr_plist_add(&ps, k, l);
    } else if (strcmp(k, "reverse") == 0) sr_plist_add(&ps, k, sr_bool(reverse));
    else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
  }
  (void)s;
  SrVal *r = sr_ad_bind(ad, SR_P_scan, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

/* core.mapped_leading_aval's inverse: t with a leading axis of size n. */
static const SrType *stacked(const SrType *t, int64_t n) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  memmove(b.dims + 1, b.dims, (size_t)b.ndim * sizeof *b.dims);
  memset(&b.dims[0], 0, sizeof b.dims[0]);
  b.dims[0].size = n;
  b.ndim++;
  return sr_type_get(&b);
}

static int scan_jvp_mode(SrAd *ad, const SrEqn *e, const Scan *s, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  int nc = s->nc, nk = s->nk, nx = s->nx, ny = s->ny, n = nc + nk + nx, no = nk + ny;
  uint8_t *nz = sr_xcalloc((size_t)n + 1, 1), *onz = sr_xcalloc((size_t)no + 1, 1);
  uint8_t *carry_nz = nz + nc;
  for (int i = 0; i < n; i++) nz[i] = t[i] != NULL;
  SrJaxpr *J = NULL;
  uint8_t *inst = sr_xcalloc((size_t)no + 1, 1);
  /* the fixpoint of which carries have nonzero tangents */
  for (int it = 0; it <= nk + 1; it++) {
    if (J) sr_program_unref(J->prog);
    for (int i = 0; i < nk; i++) inst[i] = carry_nz[i];
    J = sr_ad_jvp_jaxpr(ad, s->body, nz, inst, onz);
    if (!J) break;
    int same = 1;
    for (int i = 0; i < nk; i++)
      if (onz[i] && !carry_nz[i]) carry_nz[i] = 1, same = 0;
    if (same) break;
  }
  free(inst);
  int rc = -1;
  if (!J) goto out;
  /* J: [primals (n)] [nz tangents] -> [primal outs (no)] [nz touts];
     the scan wants ((consts, const dots), (carry, carry dots), (xs, xs dots))
     and ((carry, carry dots), (ys, ys dots)) */
  {
    int ntan = 0, nto = 0;
    for (int i = 0; i < n; i++) ntan += nz[i];
    for (int i = 0; i < no; i++) nto += onz[i];
    int *order = sr_xcalloc((size_t)(n + ntan) + 1, sizeof *order), k = 0;
    int tpos[1024];
    for (int i = 0, q = n; i < n && i < 1024; i++) tpos[i] = nz[i] ? q++ : -1;
    int starts[4] = {0, nc, nc + nk, n};
    int gc[3] = {0, 0, 0};
    for (int g = 0; g < 3; g++) {
      for (int i = starts[g]; i < starts[g + 1]; i++) order[k++] = i;
      for (int i = starts[g]; i < starts[g + 1]; i++)
        if (nz[i]) order[k++] = tpos[i], gc[g]++;
    }
    int *oorder = sr_xcalloc((size_t)(no + nto) + 1, sizeof *oorder), m = 0;
    int otpos[1024];
    for (int i = 0, q = no; i < no && i < 1024; i++) otpos[i] = onz[i] ? q++ : -1;
    int oc[2] = {0, 0};
    int ostarts[3] = {0, nk, no};
    for (int g = 0; g < 2; g++) {
      for (int i = ostarts[g]; i < ostarts[g + 1]; i++) oorder[m++] = i;
      for (int i = ostarts[g]; i < ostarts[g + 1]; i++)
        if (onz[i]) oorder[m++] = otpos[i], oc[g]++;
    }
    int bad = 0;
    for (int i = 0; i < nk; i++) bad |= carry_nz[i] != onz[i];
    if (bad) {
      sr_raise(ad->I, "NotImplementedError", "scan JVP: a carry whose tangent is zero on the way out");
      free(order);
      free(oorder);
      sr_program_unref(J->prog);
      goto out;
    }
    SrJaxpr *Jr = sr_ad_permute(J, order, oorder);
    SrVal **in = sr_xcalloc((size_t)(n + ntan) + 1, sizeof *in);
    for (int i = 0; i < n + ntan; i++) {
      int src = order[i];
      if (src < n) {
        in[i] = x[src];
      } else {
        int pi = 0;
        for (int q = 0; q < n; q++)
          if (tpos[q] == src) pi = q;
        in[i] = t[pi] ? t[pi] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[pi])));
      }
    }
    SrVal *r = bind_scan(ad, e, s, Jr, nc + gc[0], nk + gc[1], nx + gc[2], s->reverse, n + ntan, in);
    if (r) {
      for (int i = 0; i < no + nto; i++) {
        int src = oorder[i];
        if (src < no) {
          y[src] = r->seq.items[i];
        } else {
          for (int q = 0; q < no; q++)
            if (otpos[q] == src) ty[q] = r->seq.items[i];
        }
      }
      rc = 0;
    }
    free(in);
    free(order);
    free(oorder);
    sr_program_unref(Jr->prog);
  }
out:
  free(nz);
  free(onz);
  return rc;
}

static int scan_lin(SrAd *ad, const SrEqn *e, const Scan *s, SrVal **x, SrVal **t, SrVal **y, SrVal **ty) {
  int nc = s->nc, nk = s->nk, nx = s->nx, ny = s->ny, n = nc + nk + nx, no = nk + ny;
  uint8_t *nz = sr_xcalloc((size_t)n + 1, 1), *inst = sr_xcalloc((size_t)no + 1, 1);
  uint8_t *allow = sr_xcalloc((size_t)n + 1, 1);
  for (int i = 0; i < n; i++) {
    nz[i] = t[i] != NULL;
    allow[i] = i < nc || i >= nc + nk; /* carries change every iteration */
  }
  SrLinJaxprs lj = {0};
  int rc = -1, have = 0;
  for (int it = 0; it <= nk + 1; it++) {
    if (have) sr_ad_lin_jaxprs_free(&lj);
    for (int i = 0; i < nk; i++) inst[i] = nz[nc + i];
    if (sr_ad_linearize_jaxpr(ad, s->body, nz, inst, allow, &lj) < 0) goto out;
    have = 1;
    int same = 1;
    for (int i = 0; i < nk; i++)
      if (lj.out_nz[i] && !nz[nc + i]) nz[nc + i] = 1, same = 0;
    if (same) break;
  }
  {
    SrJaxpr *F = lj.fwd, *L = lj.lin;
    int nres = lj.nres;
    /* residuals: forwarded consts are consts of the tangent scan, forwarded
       xs and computed residuals are its xs (the latter stacked outputs of
       the primal scan) */
    int nf = (int)F->nout; /* no, then the returned residuals */
    /* dedup: a residual output equal to a ys output or an earlier residual */
    int *dup = sr_xcalloc((size_t)nf + 1, sizeof *dup);
    uint8_t *keep = sr_xcalloc((size_t)nf + 1, 1);
    for (int i = 0; i < nf; i++) {
      dup[i] = -1;
      keep[i] = 1;
      if (i < no) continue;
      SrVar *o = F->outvars[i];
      for (int k = nk; k < i && dup[i] < 0; k++)
        if (keep[k] && o->kind == SR_VAR && F->outvars[k] == o) dup[i] = k;
      if (dup[i] >= 0) keep[i] = 0;
    }
    uint8_t *keepc = sr_xcalloc((size_t)nf + 1, 1);
    memcpy(keepc, keep, (size_t)nf);
    int *ord = sr_xcalloc((size_t)nf + 1, sizeof *ord), nkept = 0;
    for (int i = 0; i < nf; i++)
      if (keep[i]) ord[nkept++] = i;
    SrJaxpr *F2 = F;
    if (nkept != nf) {
      SrJaxprBuilder b;
      sr_jb_init(&b, F->prog);
      for (uint32_t i = 0; i < sr_nargs(F); i++) sr_jb_invar(&b, sr_args(F)[i]);
      for (uint32_t k = 0; k < F->neqn; k++) {
        const SrEqn *q = &F->eqns[k];
        {
          SrEqn *c = sr_jb_eqn(&b, q->prim, q->nin, q->in, q->nout, q->out, q->nparams, q->params);
          c->ns = q->ns;
          c->mesh = q->mesh;
        }
      }
      for (int i = 0; i < nkept; i++) sr_jb_outvar(&b, F->outvars[ord[i]]);
      F2 = sr_jb_finish(&b);
    }
    SrVal *r = bind_scan(ad, e, s, F2, nc, nk, nx, s->reverse, n, x);
    SrVal **outs = sr_xcalloc((size_t)nf + 1, sizeof *outs);
    if (r) {
      for (int i = 0; i < nkept; i++) outs[ord[i]] = r->seq.items[i];
      for (int i = 0; i < nf; i++)
        if (!outs[i] && dup[i] >= 0) outs[i] = outs[dup[i]];
      for (int i = 0; i < no; i++) y[i] = outs[i];
      int anynz = 0;
      for (int i = 0; i < no; i++) anynz |= lj.out_nz[i];
      /* as the tangent jit: a tangent body with effects is bound */
      for (uint32_t q2 = 0; q2 < L->neqn && !anynz; q2++)
        anynz = sr_prim_has_effect(L->eqns[q2].prim, L->eqns[q2].params, L->eqns[q2].nparams);
      rc = 0;
      if (anynz) {
        /* the tangent scan: consts = const residuals, nz const tangents;
           carries = nz carry tangents; xs = nz xs tangents, xs residuals */
        int nl = (int)sr_nargs(L);
        int *order = sr_xcalloc((size_t)nl + 1, sizeof *order), k = 0;
        SrVal **in = sr_xcalloc((size_t)nl + 1, sizeof *in);
        int *tpos = sr_xcalloc((size_t)n + 1, sizeof *tpos);
        for (int i = 0, q = nres; i < n; i++) tpos[i] = nz[i] ? q++ : -1;
        int g0 = 0, g1 = 0, g2 = 0, q = no;
        SrVal **resv = sr_xcalloc((size_t)nres + 1, sizeof *resv);
        uint8_t *res_const = sr_xcalloc((size_t)nres + 1, 1);
        for (int rr = 0; rr < nres; rr++) {
          int f = lj.in_fwd[rr];
          if (f) {
            resv[rr] = x[f - 1];
            res_const[rr] = f - 1 < nc;
          } else {
            resv[rr] = outs[q++];
          }
        }
        for (int rr = 0; rr < nres; rr++)
          if (res_const[rr]) order[k] = rr, in[k++] = resv[rr], g0++;
        for (int i = 0; i < nc; i++)
          if (nz[i]) order[k] = tpos[i], in[k++] = t[i], g0++;
        for (int i = nc; i < nc + nk; i++)
          if (nz[i]) {
            order[k] = tpos[i];
            in[k++] = t[i] ? t[i] : sr_ad_zeros_staged(ad, sr_ad_tangent_type(sr_ad_type(ad, x[i])));
            g1++;
          }
        for (int i = nc + nk; i < n; i++)
          if (nz[i]) order[k] = tpos[i], in[k++] = t[i], g2++;
        for (int rr = 0; rr < nres; rr++)
          if (!res_const[rr]) order[k] = rr, in[k++] = resv[rr], g2++;
        SrJaxpr *Lp = sr_ad_permute(L, order, NULL);
        lj.lin = Lp; /* L was consumed by the permutation */
        SrVal *rt = k == nl ? bind_scan(ad, e, s, Lp, g0, g1, g2, s->reverse, k, in) : NULL;
        if (!rt) {
          if (!ad->I->exc) sr_raise(ad->I, "RuntimeError", "internal error: the tangent scan's operands");
          rc = -1;
        } else {
          for (int i = 0, mm = 0; i < no; i++) ty[i] = lj.out_nz[i] ? rt->seq.items[mm++] : NULL;
        }
        free(order);
        free(in);
        free(tpos);
        free(resv);
        free(res_const);
      }
    }
    if (F2 != F) lj.fwd = F2;
    free(outs);
    free(dup);
    free(keep);
    free(keepc);
    free(ord);
  }
out:
  if (have) sr_ad_lin_jaxprs_free(&lj);
  free(nz);
  free(inst);
  free(allow);
  return rc;
}

JVP(jvp_scan) {
  Scan s;
  if (scan_read(ad, e, &s) < 0) return -1;
  if (ad->mode == SR_AD_LIN) return scan_lin(ad, e, &s, x, t, y, ty);
  return scan_jvp_mode(ad, e, &s, x, t, y, ty);
}

/* The transposed body: (ires, ct_consts, ct_carry, ct_ys, eres) ->
   (ct_consts + this iteration's, ct_carry in, ct_xs). */
static SrJaxpr *scan_transpose_body(SrAd *ad, const Scan *s, const uint8_t *lin, const uint8_t *ys_nz) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  SrJaxpr *b = s->body;
  int nc = s->nc, nk = s->nk, nx = s->nx, ny = s->ny, n = nc + nk + nx;
  const SrType **types = sr_xcalloc((size_t)(n + ny) + 1, sizeof *types);
  int *slot = sr_xcalloc((size_t)(n + ny) + 1, sizeof *slot), k = 0;
  /* argument positions: ires, ct consts, ct carry, ct ys, eres */
  for (int i = 0; i < nc; i++)
    if (!lin[i]) slot[i] = k, types[k++] = sr_args(b)[i]->type;
  for (int i = 0; i < nc; i++)
    if (lin[i]) slot[i] = k, types[k++] = sr_ad_ct_type(sr_args(b)[i]->type);
  for (int i = nc; i < nc + nk; i++) slot[i] = k, types[k++] = sr_ad_ct_type(sr_args(b)[i]->type);
  for (int i = 0; i < ny; i++)
    if (ys_nz[i]) slot[n + i] = k, types[k++] = sr_ad_ct_type(b->outvars[nk + i]->type);
  for (int i = nc + nk; i < n; i++)
    if (!lin[i]) slot[i] = k, types[k++] = sr_args(b)[i]->type;
  SrVal **args = sr_xcalloc((size_t)k + 1, sizeof *args);
  SrTrace *tr = sr_ad_trace_begin(ad, k, types, args);
  free(types);
  SrVal **vals = sr_xcalloc((size_t)n + 1, sizeof *vals), **cts = sr_xcalloc((size_t)(nk + ny) + 1, sizeof *cts);
  SrVal **cin = sr_xcalloc((size_t)n + 1, sizeof *cin);
  for (int i = 0; i < n; i++) {
    if (!lin[i]) vals[i] = args[slot[i]];
    else if (i < nc) cin[i] = sr_ref(args[slot[i]]); /* the accumulator starts from the carried sum */
  }
  for (int i = 0; i < nk; i++) cts[i] = args[slot[nc + i]];
  for (int i = 0; i < ny; i++) cts[nk + i] = ys_nz[i] ? args[slot[n + i]] : NULL;
  /* a Ref const or xs is a tangent's cotangent Ref (a slice of it),
     passed in: the body writes into it (as sr_ad_transpose_jaxpr does) */
  uint8_t *lin2 = sr_xcalloc((size_t)n + 1, 1);
  for (int i = 0; i < n; i++) {
    const SrType *at = sr_args(b)[i]->type;
    lin2[i] = lin[i] || ((i < nc || i >= nc + nk) && at && at->ref == 1);
    if (!lin[i] && lin2[i]) cin[i] = sr_ref(vals[i]);
  }
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  I->trace = tr;
  int rc = sr_ad_backward(&sub, b, lin2, vals, cts, cin);
  free(lin2);
  SrJaxpr *r = NULL;
  if (rc == 0) {
    SrVal **outs = sr_xcalloc((size_t)n + 1, sizeof *outs);
    int m = 0;
    for (int i = 0; i < n && rc == 0; i++) {
      if (!lin[i]) continue;
      if (!cin[i]) {
        int mark = sr_ad_mark(&sub);
        cin[i] = sr_ref(sr_ad_full_zeros(&sub, sr_ad_ct_type(sr_args(b)[i]->type)));
        sr_ad_release(&sub, mark);
        if (!cin[i]) rc = -1;
      }
      outs[m++] = cin[i];
    }
    if (rc == 0) r = sr_ad_trace_end(&sub, tr, m, outs, NULL);
    else sr_trace_abort(I, tr);
    free(outs);
  } else {
    sr_trace_abort(I, tr);
  }
  sr_ad_end(&sub);
  for (int i = 0; i < n; i++) sr_unref(cin[i]);
  for (int i = 0; i < k; i++) sr_unref(args[i]);
  free(args);
  free(vals);
  free(cts);
  free(cin);
  free(slot);
  I->trace = saved;
  return r;
}

TR(tr_scan) {
  Scan s;
  if (scan_read(ad, e, &s) < 0) return -1;
  int nc = s.nc, nk = s.nk, nx = s.nx, ny = s.ny, n = nc + nk + nx;
  uint8_t *lin = sr_xcalloc((size_t)n + 1, 1), *ys_nz = sr_xcalloc((size_t)ny + 1, 1);
  for (int i = 0; i < n; i++) lin[i] = x[i] == NULL;
  /* carries are tangents of the body even when the value passed in is
     not linear (an instantiated zero): its cotangent is dropped */
  uint8_t *outer_lin = sr_xcalloc((size_t)n + 1, 1);
  memcpy(outer_lin, lin, (size_t)n);
  for (int i = nc; i < nc + nk; i++) lin[i] = 1;
  for (int i = 0; i < ny; i++) ys_nz[i] = ct[nk + i] != NULL;
  SrJaxpr *T = scan_transpose_body(ad, &s, lin, ys_nz);
  int rc = -1;
  if (T) {
    SrVal **in = sr_xcalloc((size_t)(n + ny) + 1, sizeof *in);
    int k = 0, g0 = 0, g1 = 0, g2 = 0;
    for (int i = 0; i < nc; i++)
      if (!lin[i]) in[k++] = x[i], g0++;
    for (int i = 0; i < nc; i++)
      if (lin[i]) in[k++] = sr_ad_full_zeros(ad, sr_ad_ct_type(e->in[i]->type)), g1++;
    for (int i = 0; i < nk; i++)
      in[k++] = ct[i] ? ct[i] : sr_ad_full_zeros(ad, sr_ad_ct_type(e->out[i]->type)), g1++;
    for (int i = 0; i < ny; i++)
      if (ys_nz[i]) in[k++] = ct[nk + i], g2++;
    for (int i = nc + nk; i < n; i++)
      if (!lin[i]) in[k++] = x[i], g2++;
    SrVal *r = bind_scan(ad, e, &s, T, g0, g1, g2, !s.reverse, k, in);
    if (r) {
      int q = 0;
      for (int i = 0; i < n; i++)
        if (lin[i] && i < nc) cx[i] = r->seq.items[q++];
      for (int i = nc; i < nc + nk; i++, q++)
        if (outer_lin[i]) cx[i] = r->seq.items[q];
      for (int i = nc + nk; i < n; i++)
        if (lin[i]) cx[i] = r->seq.items[q++];
      rc = 0;
    }
    free(in);
    sr_program_unref(T->prog);
  }
  free(lin);
  free(outer_lin);
  free(ys_nz);
  (void)stacked;
  return rc;
}

/* loops.py: _scan_batching_rule -- the fixpoint of which carries are
   batched (batched initially, or made so by the body), then the scan of
   the batched body: consts and carries batched at 0, xs and ys at 1. */
BATCH(batch_scan) {
  SrAd *ad = &b->ad;
  Scan s;
  if (scan_read(ad, e, &s) < 0) return -1;
  uint32_t n = e->nin, no = s.body->nout;
  int nc = s.nc, nk = s.nk;
  uint8_t *inb = sr_xcalloc(n + 1, 1), *inst = sr_xcalloc(no + 1, 1), *outb = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) inb[i] = bd[i] != SR_NOT_MAPPED;
  SrJaxpr *J = NULL;
  for (int it = 0; it <= nk; it++) {
    memcpy(inst, inb + nc, (size_t)nk);
    if (!(J = sr_batch_jaxpr(b, s.body, inb, inst, outb))) break;
    int same = 1;
    for (int i = 0; i < nk; i++)
      if (outb[i] != inb[nc + i]) same = 0, inb[nc + i] |= outb[i];
    if (same) break;
    sr_program_unref(J->prog);
    J = NULL;
  }
  int rc = -1;
  if (J) {
    SrVal **in = sr_xcalloc(n + 1, sizeof *in);
    for (uint32_t i = 0; i < n; i++) {
      int to = (int)i < nc + nk ? 0 : 1;
      in[i] = inb[i] ? sr_batch_matchaxis(b, x[i], bd[i], to) : x[i];
    }
    SrVal *r = bind_with_body(ad, e, "jaxpr", J, (int)n, in);
    if (r) {
      for (uint32_t i = 0; i < no; i++) {
        y[i] = r->seq.items[i];
        ybd[i] = !outb[i] ? SR_NOT_MAPPED : (int)i < nk ? 0 : 1;
      }
      rc = 0;
    }
    free(in);
    sr_program_unref(J->prog);
  } else if (!ad->I->exc) {
    sr_raise(ad->I, "AssertionError", "Fixpoint not reached");
  }
  free(inb);
  free(inst);
  free(outb);
  return rc;
}

/* ==== while ==== */

/* loops.py: _while_loop_abstract_eval, with lax.while_loop's checks of
   the condition (a boolean scalar) and of the carry (_check_carry_type).
   Operands are the cond consts, the body consts, the initial carry. */
/* A batched predicate (vmap's, _while_loop_batching_rule) has a shape
   that leads every carry's. */
static int pred_prefix(const SrType *p, const SrType *const *carry, uint32_t nk) {
  for (uint32_t i = 0; i < nk; i++) {
    if (!carry[i] || carry[i]->ndim < p->ndim) return 0;
    for (int d = 0; d < p->ndim; d++)
      if (carry[i]->dims[d].size != p->dims[d].size) return 0;
  }
  return 1;
}

static int type_while(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  static const char *const ckeys[] = {"cond_jaxpr", NULL}, *const bkeys[] = {"body_jaxpr", NULL};
  const SrJaxpr *cj = jaxpr_param(e, ckeys), *bj = jaxpr_param(e, bkeys);
  if (!cj || !bj) return sr_terr(cx, "TypeError", "while equation needs 'cond_jaxpr' and 'body_jaxpr' params");
  int64_t cn, bn;
  if (sr_rparam_int(cx, e, "cond_nconsts", 1, &cn) < 0 || sr_rparam_int(cx, e, "body_nconsts", 1, &bn) < 0)
    return -1;
  if (cn < 0 || bn < 0 || cn + bn > e->nin)
    return sr_terr(cx, "TypeError", "while: cond_nconsts=%lld and body_nconsts=%lld do not fit %u operands",
                   (long long)cn, (long long)bn, e->nin);
  uint32_t nk = e->nin - (uint32_t)(cn + bn);
  if (sr_nargs(cj) != cn + nk)
    return sr_terr(cx, "JaxprTypeError", "while_loop len(cond_jaxpr.in_avals)=%u but "
                   "len(cond_consts_avals) + len(in_avals)=%u", sr_nargs(cj), (uint32_t)cn + nk);
  if (sr_nargs(bj) != bn + nk)
    return sr_terr(cx, "JaxprTypeError", "while_loop len(body_jaxpr.in_avals)=%u but "
                   "len(body_consts_avals) + len(in_avals)=%u", sr_nargs(bj), (uint32_t)bn + nk);
  if (e->nout != bj->nout)
    return sr_terr(cx, "TypeError", "while has %u results but its body returns %u values", e->nout, bj->nout);
  const SrType *const *carry = e->in + cn + bn;
  int rc = -1;
  const SrType **ins = sr_xcalloc(e->nin + 1, sizeof *ins);
  const SrType **couts = sr_xcalloc(cj->nout + 1, sizeof *couts), **bouts = sr_xcalloc(bj->nout + 1, sizeof *bouts);
  SrBuf b = SR_BUF_INIT;
  memcpy(ins, e->in, cn * sizeof *ins);
  memcpy(ins + cn, carry, nk * sizeof *ins);
  if (run_body(cx, cj, ins, (uint32_t)cn + nk, couts) < 0) goto done;
  if (cj->nout != 1) {
    sr_buf_puts(&b, "cond_fun must return a boolean scalar, but got pytree ");
    put_tuple_treedef(&b, cj->nout);
    sr_buf_putc(&b, '.');
    report(cx, "TypeError", &b);
    goto done;
  }
  if (couts[0] && (couts[0]->dtype != SR_BOOL || (couts[0]->ndim && !pred_prefix(couts[0], carry, nk)))) {
    sr_buf_puts(&b, "cond_fun must return a boolean scalar, but got output type(s) [");
    put_aval_repr(&b, couts[0]);
    sr_buf_puts(&b, "].");
    report(cx, "TypeError", &b);
    goto done;
  }
  memcpy(ins, e->in + cn, bn * sizeof *ins);
  memcpy(ins + bn, carry, nk * sizeof *ins);
  if (run_body(cx, bj, ins, (uint32_t)bn + nk, bouts) < 0) goto done;
  if (check_carry(cx, "while_loop body", carry, bouts, nk, bj->nout) < 0) goto done;
  for (uint32_t i = 0; i < bj->nout; i++) out[i] = bouts[i];
  rc = 0;
done:
  sr_buf_free(&b);
  free(ins);
  free(couts);
  free(bouts);
  return rc;
}

/* select_n(broadcast_in_dim(pred), carry, next): the carry of the
   examples whose predicate (which leads its shape) is false stays, on the
   devices -- _while_lowering's batched body, _pred_bcast_select_hlo.
   Replaces *next. */
static int while_keep(SrEvalCtx *cx, SrArray *pred, SrArray *carry, SrArray **next) {
  const SrType *ct = (*next)->type, *bt = sr_type_with_dtype(ct, SR_BOOL);
  int64_t dims[SR_MAX_RANK];
  for (int i = 0; i < pred->type->ndim; i++) dims[i] = i;
  SrVal *bd = sr_int_tuple(dims, pred->type->ndim);
  SrParam bp[1] = {{sr_intern_cstr("broadcast_dimensions"), bd}};
  SrArray *bin[1] = {pred}, *bout[1] = {NULL};
  const SrType *bts[1] = {bt};
  SrEvalEqn be = {&sr_prims[SR_P_broadcast_in_dim], bp, 1, 1, 1, bin, bts, bout, 0, NULL, 0};
  int rc = sr_ev_eqn(cx, &be);
  sr_unref(bd);
  if (rc < 0) return -1;
  SrArray *sin[3] = {bout[0], carry, *next}, *sout[1] = {NULL};
  const SrType *sts[1] = {ct};
  SrEvalEqn se = {&sr_prims[SR_P_select_n], NULL, 0, 3, 1, sin, sts, sout, 0, NULL, 0};
  rc = sr_ev_eqn(cx, &se);
  sr_array_unref(bout[0]);
  if (rc < 0) return -1;
  sr_array_unref(*next);
  *next = sout[0];
  return 0;
}

/* Does j (or a body in it) hold an effect (a debug callback or print),
   and is one of them ordered (ordered=True: effects.ordered_effects)? */
static int jaxpr_effects(const SrJaxpr *j, int *ordered, int depth) {
  int any = 0;
  for (uint32_t q = 0; q < j->neqn && depth < 64; q++) {
    const SrEqn *e = &j->eqns[q];
    if ((e->prim->flags & SR_PF_EFFECT) && e->prim->id >= 0) {
      any = 1;
      SrVal *o = sr_eqn_param(e, sr_intern_cstr("ordered")), *ef = sr_eqn_param(e, sr_intern_cstr("effect"));
      if (o && (o->kind == SR_V_BOOL || o->kind == SR_V_INT) && o->i) *ordered = 1;
      if (ef && (ef->kind == SR_V_WORD || ef->kind == SR_V_STR) && strcmp(ef->str.s, "OrderedDebug") == 0)
        *ordered = 1;
    }
    for (uint32_t i = 0; i < e->nparams; i++) {
      SrJaxpr *js[16];
      int nj = sr_param_jaxprs(e->params[i].val, js, 16);
      for (int k = 0; k < nj && k < 16; k++) any |= jaxpr_effects(js[k], ordered, depth + 1);
    }
  }
  return any;
}

/* Does j (or a body in it) call io_callback (callback.py's IO effects;
   unordered_only: the unordered ones, _IOEffect)? */
static int jaxpr_has_io(const SrJaxpr *j, int unordered_only, int depth) {
  for (uint32_t q = 0; q < j->neqn && depth < 64; q++) {
    const SrEqn *e = &j->eqns[q];
    if (e->prim->id == SR_P_io_callback) {
      SrVal *o = sr_eqn_param(e, sr_intern_cstr("ordered"));
      int ordered = o && (o->kind == SR_V_BOOL || o->kind == SR_V_INT) && o->i;
      if (!unordered_only || !ordered) return 1;
    }
    for (uint32_t i = 0; i < e->nparams; i++) {
      SrJaxpr *js[16];
      int nj = sr_param_jaxprs(e->params[i].val, js, 16);
      for (int k = 0; k < nj && k < 16; k++)
        if (jaxpr_has_io(js[k], unordered_only, depth + 1)) return 1;
    }
  }
  return 0;
}

/* A while whose predicate is batched (vmap's): it runs while any entry
   holds, and the carries of the examples whose entry is false stay, as
   _while_lowering lowers it: the body computes its predicate again (the
   cond's effects run again there).  A cond with ordered effects is
   lowered as a while_loop of (pred, carry) instead, whose body is the
   batched body alone: every example's carry moves on each time. */
static int ev_while_batched(SrEvalCtx *cx, const SrEvalEqn *e, const SrJaxpr *cj, const SrJaxpr *bj, uint32_t cn,
                            uint32_t bn, uint32_t nc) {
  int ordered = 0, effects = jaxpr_effects(cj, &ordered, 0);
  SrArray **cargs = sr_xcalloc(cn + nc + 1, sizeof *cargs), **bargs = sr_xcalloc(bn + nc + 1, sizeof *bargs);
  SrArray **carry = sr_xcalloc(nc + 1, sizeof *carry), **next = sr_xcalloc(nc + 1, sizeof *next);
  int64_t np = sr_type_numel(cj->outvars[0]->type);
  uint8_t *pred = sr_xmalloc((size_t)np + 1);
  for (uint32_t i = 0; i < nc; i++) carry[i] = sr_array_ref(e->in[cn + bn + i]);
  int rc = 0;
  for (;;) {
    for (uint32_t i = 0; i < cn; i++) cargs[i] = e->in[i];
    for (uint32_t i = 0; i < nc; i++) cargs[cn + i] = carry[i];
    SrArray *p = NULL;
    sr_ev_push(cx, "cond");
    rc = sr_ev_jaxpr(cx, cj, cargs, &p);
    sr_ev_pop(cx);
    if (rc < 0) break;
    /* the loop goes on while any entry holds (the cond's reduce_or) */
    rc = sr_array_to_host(cx, p, pred);
    if (rc < 0) {
      sr_array_unref(p);
      break;
    }
    int any = 0;
    for (int64_t j = 0; j < np; j++) any |= pred[j] != 0;
    if (!any) {
      sr_array_unref(p);
      break;
    }
    for (uint32_t i = 0; i < bn; i++) bargs[i] = e->in[cn + i];
    for (uint32_t i = 0; i < nc; i++) bargs[bn + i] = carry[i];
    sr_ev_push(cx, "body");
    rc = sr_ev_jaxpr(cx, bj, bargs, next);
    sr_ev_pop(cx);
    if (rc == 0 && effects && !ordered) {
      /* body_pred: the cond again on the same carry, effects and all */
      sr_array_unref(p);
      p = NULL;
      sr_ev_push(cx, "body_pred");
      rc = sr_ev_jaxpr(cx, cj, cargs, &p);
      sr_ev_pop(cx);
    }
    /* the body's predicate is the cond's on the same carry: p */
    for (uint32_t i = 0; rc == 0 && !ordered && i < nc; i++) rc = while_keep(cx, p, carry[i], &next[i]);
    sr_array_unref(p);
    for (uint32_t i = 0; i < nc; i++) {
      sr_array_unref(carry[i]);
      carry[i] = next[i];
      next[i] = NULL;
    }
    if (rc < 0) break;
    if (cx->I && sr_interrupt_point(cx->I)) {
      rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
      break;
    }
  }
  if (rc == 0)
    for (uint32_t i = 0; i < nc; i++) e->out[i] = sr_array_retype(carry[i], e->out_type[i], NULL);
  for (uint32_t i = 0; i < nc; i++) sr_array_unref(carry[i]);
  free(cargs);
  free(bargs);
  free(carry);
  free(next);
  free(pred);
  return rc;
}

static int ev_while(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrJaxpr *cj = sr_ev_param_jaxpr(e, "cond_jaxpr"), *bj = sr_ev_param_jaxpr(e, "body_jaxpr");
  int64_t cn, bn;
  if (!cj || !bj) return sr_ev_err(cx, "TypeError", "while equation has no cond_jaxpr or body_jaxpr");
  if (sr_ev_param_int(cx, e, "cond_nconsts", &cn) < 0 || sr_ev_param_int(cx, e, "body_nconsts", &bn) < 0) return -1;
  uint32_t nc = e->nin - (uint32_t)cn - (uint32_t)bn;
  if (nc != e->nout || sr_nargs(cj) != cn + nc || sr_nargs(bj) != bn + nc || bj->nout != nc || cj->nout != 1)
    return sr_ev_err(cx, "TypeError", "while: the cond and body jaxprs do not match the equation");
  if (cj->outvars[0]->type && cj->outvars[0]->type->ndim)
    return ev_while_batched(cx, e, cj, bj, (uint32_t)cn, (uint32_t)bn, nc);
  SrArray **cargs = sr_xcalloc(cn + nc + 1, sizeof *cargs), **bargs = sr_xcalloc(bn + nc + 1, sizeof *bargs);
  SrArray **carry = sr_xcalloc(nc + 1, sizeof *carry), **next = sr_xcalloc(nc + 1, sizeof *next);
  for (uint32_t i = 0; i < nc; i++) carry[i] = sr_array_ref(e->in[cn + bn + i]);
  int rc = 0;
  int64_t *pred = NULL;
  int npred = 0;
  for (;;) {
    for (uint32_t i = 0; i < cn; i++) cargs[i] = e->in[i];
    for (uint32_t i = 0; i < nc; i++) cargs[cn + i] = carry[i];
    SrArray *p = NULL;
    sr_ev_push(cx, "cond");
    rc = sr_ev_jaxpr(cx, cj, cargs, &p);
    sr_ev_pop(cx);
    if (rc < 0) break;
    const SrMesh *m = p->mesh ? p->mesh : nc && carry[0]->mesh ? carry[0]->mesh : NULL;
    int nd = sr_mesh_ndev(m);
    if (nd > npred) {
      free(pred);
      pred = sr_xmalloc((size_t)nd * sizeof *pred);
      npred = nd;
    }
    read_scalar(p, pred, nd, m);
    int local_any = 0, local_stop = 0;
    for (int q = 0; q < nd; q++) {
      local_any |= pred[q] != INT64_MIN && pred[q] != 0;
      local_stop |= pred[q] == 0;
    }
    sr_array_unref(p);
    int go = cx->comm->ops->any(cx->comm, local_any);
    if (go < 0) {
      rc = sr_ev_err(cx, "RuntimeError", "the statement failed on another rank");
      break;
    }
    if (!go) break;
    for (uint32_t i = 0; i < bn; i++) bargs[i] = e->in[cn + i];
    for (uint32_t i = 0; i < nc; i++) bargs[bn + i] = carry[i];
    sr_ev_push(cx, "body");
    rc = sr_ev_jaxpr(cx, bj, bargs, next);
    sr_ev_pop(cx);
    if (rc < 0) break;
    /* Another rank may want more iterations when every device here is
       done, so "the devices here agree" is not enough: only when none of
       them has stopped does the whole body's result go on. */
    for (uint32_t i = 0; i < nc; i++) {
      if (local_stop && !local_any) {
        sr_array_unref(next[i]);
        next[i] = NULL;
        continue;
      }
      if (local_stop && next[i]->mesh == m && carry[i]->mesh == m) {
        /* devices whose predicate was false keep their carry */
        SrArray *sel = sr_array_retype(next[i], next[i]->type, NULL);
        for (int q = 0; q < nd; q++)
          if (pred[q] == 0 && sel->shard[q]) {
            sr_buffer_unref(sel->shard[q]);
            sel->shard[q] = sr_buffer_ref(sr_array_buf(carry[i], q));
          }
        sr_array_unref(next[i]);
        next[i] = sel;
      }
      sr_array_unref(carry[i]);
      carry[i] = next[i];
      next[i] = NULL;
    }
    if (cx->I && sr_interrupt_point(cx->I)) {
      rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
      break;
    }
  }
  if (rc == 0)
    for (uint32_t i = 0; i < nc; i++) e->out[i] = sr_array_retype(carry[i], e->out_type[i], NULL);
  for (uint32_t i = 0; i < nc; i++) {
    sr_array_unref(carry[i]);
    sr_array_unref(next[i]);
  }
  free(cargs);
  free(bargs);
  free(carry);
  free(next);
  free(pred);
  return rc;
}

/* A copy of a jaxpr traced with extra unused arguments after its own. */
static SrJaxpr *with_extra_args(SrAd *ad, const SrJaxpr *j, int nextra, const SrType *const *extra) {
  uint32_t n = sr_nargs(j);
  const SrType **types = sr_xcalloc(n + (uint32_t)nextra + 1, sizeof *types);
  for (uint32_t i = 0; i < n; i++) types[i] = sr_args(j)[i]->type;
  for (int i = 0; i < nextra; i++) types[n + (uint32_t)i] = extra[i];
  SrVal **args = sr_xcalloc(n + (uint32_t)nextra + 1, sizeof *args);
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  SrTrace *tr = sr_ad_trace_begin(ad, (int)n + nextra, types, args);
  I->trace = tr;
  SrVal *r = sr_eval_jaxpr(I, j, (int)n, args);
  SrJaxpr *out = NULL;
  if (r) out = sr_ad_trace_end(ad, tr, r->seq.n, r->seq.items, NULL);
  else sr_trace_abort(I, tr);
  sr_unref(r);
  for (uint32_t i = 0; i < n + (uint32_t)nextra; i++) sr_unref(args[i]);
  free(args);
  free(types);
  I->trace = saved;
  return out;
}

/* The JVP of a while's body with binders in the order the loop wants:
   consts, const tangents, carries, carry tangents -> carries, carry
   tangents (ad.rearrange_binders). */
static SrJaxpr *while_body_jvp(SrAd *ad, const SrJaxpr *body, uint32_t nb, const uint8_t *bc_nz,
                               uint32_t nc, const uint8_t *carry_nz, uint8_t *out_nz) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  const SrType **types = sr_xcalloc(2 * (nb + nc) + 1, sizeof *types);
  uint32_t k = 0;
  for (uint32_t i = 0; i < nb; i++) types[k++] = sr_args(body)[i]->type;
  for (uint32_t i = 0; i < nb; i++)
    if (bc_nz[i]) types[k++] = sr_ad_tangent_type(sr_args(body)[i]->type);
  uint32_t carry0 = k;
  for (uint32_t i = 0; i < nc; i++) types[k++] = sr_args(body)[nb + i]->type;
  for (uint32_t i = 0; i < nc; i++)
    if (carry_nz[i]) types[k++] = sr_ad_tangent_type(sr_args(body)[nb + i]->type);
  SrVal **args = sr_xcalloc(k + 1, sizeof *args);
  SrTrace *tr = sr_ad_trace_begin(ad, (int)k, types, args);
  free(types);
  SrVal **p = sr_xcalloc(nb + nc + 1, sizeof *p), **tn = sr_xcalloc(nb + nc + 1, sizeof *tn);
  uint32_t q = nb;
  for (uint32_t i = 0; i < nb; i++) {
    p[i] = args[i];
    tn[i] = bc_nz[i] ? args[q++] : NULL;
  }
  q = carry0 + nc;
  for (uint32_t i = 0; i < nc; i++) {
    p[nb + i] = args[carry0 + i];
    tn[nb + i] = carry_nz[i] ? args[q++] : NULL;
  }
  SrVal **out = sr_xcalloc(2 * nc + 1, sizeof *out);
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_JVP);
  I->trace = tr;
  int rc = sr_ad_eval(&sub, body, p, tn, out, out + nc);
  SrJaxpr *r = NULL;
  if (rc == 0) {
    uint32_t m = nc;
    SrVal **outs = sr_xcalloc(2 * nc + 1, sizeof *outs);
    for (uint32_t i = 0; i < nc; i++) outs[i] = out[i];
    for (uint32_t i = 0; i < nc; i++) {
      SrVal *tv = out[nc + i];
      out_nz[i] = tv != NULL;
      if (carry_nz[i] && !tv) {
        int mark = sr_ad_mark(&sub);
        tv = out[nc + i] = sr_ref(sr_ad_full_zeros(&sub, sr_ad_tangent_type(body->outvars[i]->type)));
        sr_ad_release(&sub, mark);
      }
      if (carry_nz[i]) outs[m++] = tv;
    }
    r = sr_ad_trace_end(&sub, tr, (int)m, outs, NULL);
    free(outs);
  } else {
    sr_trace_abort(I, tr);
  }
  sr_ad_end(&sub);
  for (uint32_t i = 0; i < 2 * nc; i++) sr_unref(out[i]);
  for (uint32_t i = 0; i < k; i++) sr_unref(args[i]);
  free(out);
  free(args);
  free(p);
  free(tn);
  I->trace = saved;
  return r;
}

/* _while_loop_jvp.  Under linearization the same loop goes into the
   tangent trace (its primal inputs are residuals), as JAX's partial eval
   stages the whole loop as unknown; its transpose is JAX's error. */
JVP(jvp_while) {
  int64_t cn = 0, bn = 0;
  SrVal *v = param(e, "cond_nconsts");
  if (v && v->kind == SR_V_INT) cn = v->i;
  v = param(e, "body_nconsts");
  if (v && v->kind == SR_V_INT) bn = v->i;
  SrJaxpr *cond = body_of(ad, e, "cond_jaxpr"), *body = body_of(ad, e, "body_jaxpr");
  if (!cond || !body) return -1;
  uint32_t nb = (uint32_t)bn, nc = e->nin - (uint32_t)cn - nb;
  const uint8_t dummy = 0;
  (void)dummy;
  uint8_t *bc_nz = sr_xcalloc(nb + 1, 1), *carry_nz = sr_xcalloc(nc + 1, 1), *onz = sr_xcalloc(nc + 1, 1);
  for (uint32_t i = 0; i < nb; i++) bc_nz[i] = t[cn + i] != NULL;
  for (uint32_t i = 0; i < nc; i++) carry_nz[i] = t[cn + nb + i] != NULL;
  SrJaxpr *J = NULL;
  for (uint32_t it = 0; it <= nc + 1; it++) {
    if (J) sr_program_unref(J->prog);
    J = while_body_jvp(ad, body, nb, bc_nz, nc, carry_nz, onz);
    if (!J) break;
    int same = 1;
    for (uint32_t i = 0; i < nc; i++)
      if (onz[i] && !carry_nz[i]) carry_nz[i] = 1, same = 0;
    if (same) break;
  }
  int rc = -1;
  if (J) {
    const SrType **ext = sr_xcalloc(nc + 1, sizeof *ext);
    int next = 0;
    for (uint32_t i = 0; i < nc; i++)
      if (carry_nz[i]) ext[next++] = sr_ad_tangent_type(sr_args(body)[nb + i]->type);
    SrJaxpr *C = with_extra_args(ad, cond, next, ext);
    free(ext);
    if (C) {
      SrVal **in = sr_xcalloc(2 * e->nin + 1, sizeof *in);
      uint32_t k = 0, nbd = 0;
      for (uint32_t i = 0; i < (uint32_t)cn + nb; i++) in[k++] = x[i];
      for (uint32_t i = 0; i < nb; i++)
        if (bc_nz[i]) in[k++] = t[cn + i], nbd++;
      for (uint32_t i = 0; i < nc; i++) in[k++] = x[cn + nb + i];
      for (uint32_t i = 0; i < nc; i++)
        if (carry_nz[i]) in[k++] = t[cn + nb + i] ? t[cn + nb + i] : sr_ad_full_zeros(ad, sr_ad_tangent_type(sr_ad_type(ad, x[cn + nb + i])));
      SrPList ps = {0};
      for (uint32_t p = 0; p < e->nparams; p++) {
        const char *key = e->params[p].key;
        if (strcmp(key, "cond_jaxpr") == 0) sr_plist_add(&ps, key, sr_jaxpr_val(NULL, C));
        else if (strcmp(key, "body_jaxpr") == 0) sr_plist_add(&ps, key, sr_jaxpr_val(NULL, J));
        else if (strcmp(key, "body_nconsts") == 0) sr_plist_add(&ps, key, sr_int(NULL, bn + nbd));
        else sr_plist_add(&ps, key, sr_ref(e->params[p].val));
      }
      SrVal *r = sr_ad_bind(ad, SR_P_while, (int)k, in, ps.n, ps.p);
      sr_plist_free(&ps);
      if (r) {
        if (ad->mode == SR_AD_LIN) {
          /* the primal outputs are known: the loop itself, in the primal trace */
          SrVal *rp = sr_ad_bind_eqn(ad, e, x);
          for (uint32_t i = 0; rp && i < nc; i++) y[i] = rp->seq.items[i];
          if (!rp) r = NULL;
        } else {
          for (uint32_t i = 0; i < nc; i++) y[i] = r->seq.items[i];
        }
      }
      if (r) {
        for (uint32_t i = 0, q = nc; i < nc; i++) ty[i] = carry_nz[i] ? r->seq.items[q++] : NULL;
        rc = 0;
      }
      free(in);
      sr_program_unref(C->prog);
    }
    sr_program_unref(J->prog);
  }
  free(bc_nz);
  free(carry_nz);
  free(onz);
  return rc;
}

TR(tr_while) {
  (void)e, (void)ct, (void)x, (void)cx;
  sr_raise(ad->I, "ValueError",
           "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic start/stop "
           "values. Try using lax.scan, or using fori_loop with static start/stop.");
  return -1;
}

/* loops.py: _while_loop_batching_rule -- the fixpoint of which carries
   the body batches; a batched predicate batches every carry at 0 and
   the loop runs while any example's predicate holds, the others keeping
   their carry (the lowering's _pred_bcast_select_hlo, ev_while's
   batched predicate); an unbatched one batches the carries after the
   predicate's own dims. */
BATCH(batch_while) {
  SrAd *ad = &b->ad;
  SrJaxpr *cj = body_of(ad, e, "cond_jaxpr"), *bj = body_of(ad, e, "body_jaxpr");
  SrVal *cnv = param(e, "cond_nconsts"), *bnv = param(e, "body_nconsts");
  if (!cj || !bj) return -1;
  int cn = cnv && cnv->kind == SR_V_INT ? (int)cnv->i : 0, bn = bnv && bnv->kind == SR_V_INT ? (int)bnv->i : 0;
  int n = (int)e->nin, nk = n - cn - bn;
  if (nk < 0 || (int)bj->nout != nk || cj->nout != 1)
    return sr_raise(ad->I, "TypeError", "while: the cond and body jaxprs do not match the equation"), -1;
  uint8_t *bb = sr_xcalloc((size_t)n + 1, 1), *cb = sr_xcalloc((size_t)n + 1, 1), *outb = sr_xcalloc((size_t)nk + 1, 1);
  int *bdims = sr_xcalloc((size_t)n + 1, sizeof *bdims), *cdims = sr_xcalloc((size_t)n + 1, sizeof *cdims);
  int *kd = sr_xcalloc((size_t)nk + 1, sizeof *kd), *oaxes = sr_xcalloc((size_t)nk + 1, sizeof *oaxes);
  SrVal **in = sr_xcalloc((size_t)n + 1, sizeof *in);
  SrJaxpr *CB = NULL, *BB = NULL;
  int rc = -1, fix = 0;
  uint8_t *carry = bb + bn;
  for (int i = 0; i < bn; i++) bb[i] = bd[cn + i] != SR_NOT_MAPPED;
  for (int i = 0; i < nk; i++) carry[i] = bd[cn + bn + i] != SR_NOT_MAPPED;
  for (int it = 0; it <= nk && !fix; it++) {
    SrJaxpr *t = sr_batch_jaxpr(b, bj, bb, carry, outb);
    if (!t) goto done;
    sr_program_unref(t->prog);
    fix = 1;
    for (int i = 0; i < nk; i++)
      if (outb[i] != carry[i]) fix = 0, carry[i] |= outb[i];
  }
  if (!fix) {
    sr_raise(ad->I, "AssertionError", "Fixpoint not reached");
    goto done;
  }
  for (int i = 0; i < cn; i++) cb[i] = bd[i] != SR_NOT_MAPPED;
  memcpy(cb + cn, carry, (size_t)nk);
  uint8_t pred_b;
  SrJaxpr *t = sr_batch_jaxpr(b, cj, cb, NULL, &pred_b);
  if (!t) goto done;
  sr_program_unref(t->prog);
  if (pred_b && (jaxpr_has_io(bj, 1, 0) || jaxpr_has_io(cj, 1, 0))) {
    sr_raise(ad->I, "Exception", "Unordered IO effects not supported in while_loop with batched predicate");
    goto done;
  }
  int pred_dest;
  if (pred_b) {
    for (int i = 0; i < nk; i++) kd[i] = 0;
    pred_dest = 0;
  } else {
    int rank = cj->outvars[0]->type ? cj->outvars[0]->type->ndim : 0;
    for (int i = 0; i < nk; i++) kd[i] = carry[i] ? rank : SR_NOT_MAPPED;
    pred_dest = SR_NOT_MAPPED;
  }
  for (int i = 0; i < bn; i++) bdims[i] = bd[cn + i];
  for (int i = 0; i < cn; i++) cdims[i] = bd[i];
  memcpy(bdims + bn, kd, (size_t)nk * sizeof *kd);
  memcpy(cdims + cn, kd, (size_t)nk * sizeof *kd);
  if (!(BB = sr_batch_jaxpr_axes(b, bj, bdims, kd, oaxes))) goto done;
  if (!(CB = sr_batch_jaxpr_axes(b, cj, cdims, &pred_dest, oaxes))) goto done;
  for (int i = 0; i < n; i++) {
    int k = i - cn - bn;
    in[i] = k < 0 || kd[k] == SR_NOT_MAPPED ? x[i] : sr_batch_matchaxis(b, x[i], bd[i], kd[k]);
  }
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "cond_jaxpr") == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, CB));
    else if (strcmp(k, "body_jaxpr") == 0) sr_plist_add(&ps, k, sr_jaxpr_val(NULL, BB));
    else sr_plist_add(&ps, k, sr_ref(e->params[p].val));
  }
  SrVal *r = sr_ad_bind(ad, SR_P_while, n, in, ps.n, ps.p);
  sr_plist_free(&ps);
  if (r) {
    for (int i = 0; i < nk; i++) {
      y[i] = r->seq.items[i];
      ybd[i] = kd[i];
    }
    rc = 0;
  }
done:
  if (CB) sr_program_unref(CB->prog);
  if (BB) sr_program_unref(BB->prog);
  free(bb);
  free(cb);
  free(outb);
  free(bdims);
  free(cdims);
  free(kd);
  free(oaxes);
  free(in);
  return rc;
}

/* ==== cond ==== */

/* conditionals.py: _cond_typecheck -- every branch takes the operands
   (after the index) and all return the same types, which are the
   results. */
static int type_cond(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  SrVal *bv = sr_rparam(e, "branches");
  SrJaxpr *br[64];
  int nb = bv ? sr_param_jaxprs(bv, br, 64) : 0;
  if (nb > 64) return sr_terr(cx, "TypeError", "cond has more than 64 branches");
  if (nb == 0) return sr_terr(cx, "JaxprTypeError", "cond requires at least one branch function");
  const SrJaxpr *b0 = br[0];
  uint32_t nargs = sr_nargs(b0), nres = b0->nout;
  SrBuf b = SR_BUF_INIT;
  for (int i = 1; i < nb; i++) {
    const SrJaxpr *bi = br[i];
    if (sr_nargs(bi) != nargs)
      return sr_terr(cx, "JaxprTypeError", "cond branch 0 takes %u inputs, branch %d takes %u", nargs, i,
                     sr_nargs(bi));
    if (bi->nout != nres)
      return sr_terr(cx, "JaxprTypeError", "cond branch 0 outputs %u values, branch %d outputs %u", nres, i,
                     bi->nout);
    for (int pass = 0; pass < 2; pass++) {
      uint32_t n = pass ? nres : nargs;
      int ok = 1;
      for (uint32_t k = 0; k < n; k++)
        if (!same_type(pass ? out_type(b0, k) : arg_type(b0, k), pass ? out_type(bi, k) : arg_type(bi, k))) ok = 0;
      if (ok) continue;
      sr_buf_printf(&b, "cond branches 0 and %d have mismatching %s types: ", i, pass ? "output" : "input");
      for (int side = 0; side < 2; side++) {
        const SrJaxpr *j = side ? bi : b0;
        if (side) sr_buf_puts(&b, " vs ");
        for (uint32_t k = 0; k < n; k++) {
          if (k) sr_buf_putc(&b, ' ');
          put_type(&b, pass ? out_type(j, k) : arg_type(j, k));
        }
      }
      return report(cx, "JaxprTypeError", &b);
    }
  }
  if (e->nin != nargs + 1)
    return sr_terr(cx, "JaxprTypeError", "cond called with %d non-predicate operands, but branches take %u inputs",
                   (int)e->nin - 1, nargs);
  if (e->nout != nres)
    return sr_terr(cx, "TypeError", "cond has %u results but its branches return %u values", e->nout, nres);
  /* an int32 index; a bool predicate (older texts) is accepted too */
  const SrType *idx = e->in[0];
  if (idx->dtype != SR_I32 && idx->dtype != SR_BOOL)
    return sr_terr(cx, "JaxprTypeError", "cond called with index of type %s instead of int32",
                   sr_dtype_info(idx->dtype)->name);
  if (idx->ndim) {
    /* JAX's jaxpr check leaves this to lax.switch, whose message names the
       traced value; this one names its shape */
    sr_buf_puts(&b, "cond index must be a scalar, got an index of shape (");
    for (int d = 0; d < idx->ndim; d++) sr_buf_printf(&b, d ? ", %lld" : "%lld", (long long)idx->dims[d].size);
    sr_buf_puts(&b, idx->ndim == 1 ? ",)" : ")");
    return report(cx, "TypeError", &b);
  }
  int ok = 1;
  for (uint32_t k = 0; k < nargs; k++)
    if (!same_type(arg_type(b0, k), e->in[k + 1])) ok = 0;
  if (!ok) {
    sr_buf_puts(&b, "cond branches take input types ");
    for (uint32_t k = 0; k < nargs; k++) {
      if (k) sr_buf_putc(&b, ' ');
      put_type(&b, arg_type(b0, k));
    }
    sr_buf_puts(&b, ", called with operands of type ");
    put_avals(&b, e->in + 1, nargs);
    return report(cx, "JaxprTypeError", &b);
  }
  const SrType **bouts = sr_xcalloc(nres + 1, sizeof *bouts);
  int rc = 0;
  for (int i = nb - 1; i >= 0; i--)
    if (run_body(cx, br[i], NULL, 0, bouts) < 0) rc = -1;
  for (uint32_t k = 0; rc == 0 && k < nres; k++) out[k] = bouts[k];
  free(bouts);
  return rc;
}

static int ev_cond(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrVal *br = sr_ev_param(e, "branches");
  if (!br || !sr_is_seq(br) || !br->seq.n) return sr_ev_err(cx, "TypeError", "cond equation has no branches");
  int nb = br->seq.n;
  SrArray *idx = e->in[0];
  const SrMesh *m = NULL;
  for (uint32_t i = 0; i < e->nin && !m; i++) m = e->in[i]->mesh;
  if (!m) m = idx->mesh;
  int nd = sr_mesh_ndev(m);
  int64_t *which = sr_xmalloc((size_t)nd * sizeof *which);
  read_scalar(idx, which, nd, m);
  int64_t first = INT64_MIN;
  int uniform = 1;
  for (int p = 0; p < nd; p++) {
    if (which[p] == INT64_MIN) continue;
    int64_t w = which[p] < 0 ? 0 : which[p] >= nb ? nb - 1 : which[p];
    if (idx->type->dtype == SR_BOOL) w = which[p] != 0;
    which[p] = w;
    if (first == INT64_MIN) first = w;
    else if (w != first) uniform = 0;
  }
  int rc = 0;
  SrArray **results = sr_xcalloc((size_t)nb * e->nout + 1, sizeof *results);
  int ran = 0;
  char name[32];
  for (int b = 0; b < nb && rc == 0; b++) {
    int local = 0;
    for (int p = 0; p < nd; p++) local |= which[p] == b;
    int go = cx->comm->ops->any(cx->comm, local);
    if (go < 0) {
      rc = sr_ev_err(cx, "RuntimeError", "the statement failed on another rank");
      break;
    }
    if (!go) continue;
    SrVal *jv = br->seq.items[b];
    if (jv->kind != SR_V_JAXPR) {
      rc = sr_ev_err(cx, "TypeError", "cond's branch %d is not a jaxpr", b);
      break;
    }
    snprintf(name, sizeof name, "branch_%d", b);
    sr_ev_push(cx, name);
    SrEvalEqn sub = *e;
    sub.out = results + (size_t)b * e->nout;
    rc = call(cx, &sub, jv->jx.jaxpr, e->nin - 1, e->in + 1);
    sr_ev_pop(cx);
    ran++;
  }
  if (rc == 0) {
    for (uint32_t i = 0; i < e->nout && rc == 0; i++) {
      if (uniform || ran == 1) {
        int b = first == INT64_MIN ? 0 : (int)first;
        for (int k = 0; k < nb && !results[(size_t)b * e->nout + i]; k++) b = k;
        e->out[i] = sr_array_ref(results[(size_t)b * e->nout + i]);
        continue;
      }
      /* per device, its own branch's result (in one layout), on the
         devices the index is on even where the branches' results are
         constants on none */
      const SrMesh *om = m;
      for (int b = 0; b < nb && !om; b++)
        if (results[(size_t)b * e->nout + i]) om = results[(size_t)b * e->nout + i]->mesh;
      const SrType *l = sr_ev_out_layout(cx, e, i, om);
      SrArray *out = sr_array_new(e->out_type[i], l, om);
      for (int b = 0; b < nb && rc == 0; b++) {
        SrArray *r = results[(size_t)b * e->nout + i];
        if (!r) continue;
        SrArray *rr = sr_redistribute(cx, r, om, l);
        if (!rr) {
          rc = -1;
          break;
        }
        for (int p = 0; p < out->ndev; p++)
          if (which[p] == b && rr->shard[p]) out->shard[p] = sr_buffer_ref(rr->shard[p]);
        sr_array_unref(rr);
      }
      e->out[i] = out;
    }
  }
  for (size_t k = 0; k < (size_t)nb * e->nout; k++) sr_array_unref(results[k]);
  free(results);
  free(which);
  return rc;
}

/* ---- cond ----
 *
 * cond(index, *ops) with params branches=(jaxprs).  Under linearization
 * every branch is linearized; the forward cond returns the primal outputs
 * and one set of residual slots shared by the branches (a slot per type,
 * as _merge_branch_residuals assigns them; a branch fills the slots it does
 * not use with zeros where JAX uses empty_like), and the tangent cond takes
 * the index, the slots and the nonzero tangents. */

static SrJaxpr *const *branches_of(SrAd *ad, const SrEqn *e, int *nb) {
  SrVal *v = param(e, "branches");
  static SrJaxpr *bs[64];
  *nb = v ? sr_param_jaxprs(v, bs, 64) : 0;
  if (*nb <= 0 || *nb > 64) {
    sr_raise(ad->I, "TypeError", "cond equation without branches");
    return NULL;
  }
  return bs;
}

static SrVal *bind_cond(SrAd *ad, const SrEqn *e, SrJaxpr **bs, int nb, int nin, SrVal **in) {
  SrPList ps = {0};
  for (uint32_t p = 0; p < e->nparams; p++) {
    const char *k = e->params[p].key;
    if (strcmp(k, "branches") == 0) {
      SrVal *t = sr_seq(NULL, SR_V_TUPLE, nb);
      for (int b = 0; b < nb; b++) sr_seq_push(NULL, t, sr_jaxpr_val(NULL, bs[b]));
      sr_plist_add(&ps, k, t);
    } else {
      sr_plist_add(&ps, k, sr_ref(e->params[p].val));
    }
  }
  SrVal *r = sr_ad_bind(ad, SR_P_cond, nin, in, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

static int cond_jvp_mode(SrAd *ad, const SrEqn *e, SrJaxpr *const *bs0, int nb, SrVal **x, SrVal **t, SrVal **y,
                         SrVal **ty) {
  uint32_t n = e->nin - 1, no = e->nout;
  uint8_t *nz = sr_xcalloc(n + 1, 1), *onz = sr_xcalloc(no + 1, 1), *any = sr_xcalloc(no + 1, 1);
  SrJaxpr *bs[64] = {0};
  for (uint32_t i = 0; i < n; i++) nz[i] = t[i + 1] != NULL;
  int rc = -1;
  for (int b = 0; b < nb; b++) {
    SrJaxpr *J = sr_ad_jvp_jaxpr(ad, bs0[b], nz, NULL, onz);
    if (!J) goto out;
    for (uint32_t i = 0; i < no; i++) any[i] |= onz[i];
    sr_program_unref(J->prog);
  }
  for (int b = 0; b < nb; b++)
    if (!(bs[b] = sr_ad_jvp_jaxpr(ad, bs0[b], nz, any, onz))) goto out;
  {
    SrVal **in = sr_xcalloc(2 * n + 2, sizeof *in);
    uint32_t k = 0;
    in[k++] = x[0];
    for (uint32_t i = 0; i < n; i++) in[k++] = x[i + 1];
    for (uint32_t i = 0; i < n; i++)
      if (nz[i]) in[k++] = t[i + 1];
    SrVal *r = bind_cond(ad, e, bs, nb, (int)k, in);
    free(in);
    if (r) {
      for (uint32_t i = 0, q = no; i < no; i++) {
        y[i] = r->seq.items[i];
        ty[i] = any[i] ? r->seq.items[q++] : NULL;
      }
      rc = 0;
    }
  }
out:
  for (int b = 0; b < nb; b++)
    if (bs[b]) sr_program_unref(bs[b]->prog);
  free(nz);
  free(onz);
  free(any);
  return rc;
}

/* A branch's forward jaxpr with its residuals moved into the shared slots
   (zeros in the slots it does not use), traced again. */
typedef struct FwdSlots {
  uint32_t no;
  const int *slot_of;
  int nslots;
  const SrType *const *slot_types;
} FwdSlots;

static int fwd_slots(SrAd *sub, SrVal *const *in, int n, SrVal **outs, int cap, void *arg) {
  const FwdSlots *f = arg;
  (void)cap;
  uint32_t no = f->no;
  for (uint32_t i = 0; i < no; i++) outs[i] = in[i];
  for (uint32_t i = no; i < (uint32_t)n; i++) outs[no + (uint32_t)f->slot_of[i - no]] = in[i];
  for (int s2 = 0; s2 < f->nslots; s2++)
    if (!outs[no + (uint32_t)s2] && !(outs[no + (uint32_t)s2] = sr_ad_full_zeros(sub, f->slot_types[s2])))
      return -1;
  return (int)no + f->nslots;
}

static SrJaxpr *cond_fwd_branch(SrAd *ad, SrJaxpr *F, uint32_t no, const int *slot_of, int nslots,
                                const SrType *const *slot_types) {
  FwdSlots f = {no, slot_of, nslots, slot_types};
  return sr_ad_retrace(ad, F, (int)no + nslots, fwd_slots, &f);
}

/* A branch's linear jaxpr taking all the slots (it reads its own), then
   the tangents. */
static SrJaxpr *cond_lin_branch(SrAd *ad, SrJaxpr *L, int nres, const int *slot_of, int nslots,
                                const SrType *const *slot_types) {
  SrInterp *I = ad->I;
  SrTrace *saved = I->trace;
  uint32_t n = sr_nargs(L), nt = n - (uint32_t)nres;
  const SrType **types = sr_xcalloc((size_t)nslots + nt + 1, sizeof *types);
  for (int s2 = 0; s2 < nslots; s2++) types[s2] = slot_types[s2];
  for (uint32_t i = 0; i < nt; i++) types[(uint32_t)nslots + i] = sr_args(L)[(uint32_t)nres + i]->type;
  SrVal **args = sr_xcalloc((size_t)nslots + nt + 1, sizeof *args), **in = sr_xcalloc(n + 1, sizeof *in);
  SrTrace *tr = sr_ad_trace_begin(ad, nslots + (int)nt, types, args);
  free(types);
  for (int r = 0; r < nres; r++) in[r] = args[slot_of[r]];
  for (uint32_t i = 0; i < nt; i++) in[(uint32_t)nres + i] = args[(uint32_t)nslots + i];
  I->trace = tr;
  SrVal *r = sr_eval_jaxpr(I, L, (int)n, in);
  SrAd sub;
  sr_ad_begin(&sub, I, SR_AD_BWD);
  SrJaxpr *out = r ? sr_ad_trace_end(&sub, tr, r->seq.n, r->seq.items, NULL) : NULL;
  if (!r) sr_trace_abort(I, tr);
  sr_ad_end(&sub);
  sr_unref(r);
  for (uint32_t i = 0; i < (uint32_t)nslots + nt; i++) sr_unref(args[i]);
  free(args);
  free(in);
  I->trace = saved;
  return out;
}

static int cond_lin(SrAd *ad, const SrEqn *e, SrJaxpr *const *bs0, int nb, SrVal **x, SrVal **t, SrVal **y,
                    SrVal **ty) {
  uint32_t n = e->nin - 1, no = e->nout;
  uint8_t *nz = sr_xcalloc(n + 1, 1), *any = sr_xcalloc(no + 1, 1);
  uint8_t *nofwd = sr_xcalloc(n + 1, 1);
  for (uint32_t i = 0; i < n; i++) nz[i] = t[i + 1] != NULL;
  SrLinJaxprs lj[64];
  memset(lj, 0, sizeof lj);
  int rc = -1, have = 0;
  /* which outputs have a nonzero tangent in some branch */
  for (int b = 0; b < nb; b++) {
    SrLinJaxprs tmp;
    if (sr_ad_linearize_jaxpr(ad, bs0[b], nz, NULL, nofwd, &tmp) < 0) goto out;
    for (uint32_t i = 0; i < no; i++) any[i] |= tmp.out_nz[i];
    sr_ad_lin_jaxprs_free(&tmp);
  }
  for (int b = 0; b < nb; b++, have++)
    if (sr_ad_linearize_jaxpr(ad, bs0[b], nz, any, nofwd, &lj[b]) < 0) goto out;
  {
    /* the residual slots */
    const SrType *stypes[1024];
    int nslots = 0, *slot_of[64];
    for (int b = 0; b < nb; b++) {
      slot_of[b] = sr_xcalloc((size_t)lj[b].nres + 1, sizeof *slot_of[b]);
      uint8_t used[1024] = {0};
      for (int r = 0; r < lj[b].nres; r++) {
        const SrType *rt = sr_args(lj[b].lin)[r]->type;
        int found = -1;
        for (int s2 = 0; s2 < nslots && found < 0; s2++)
          if (!used[s2] && stypes[s2] == rt) found = s2;
        if (found < 0 && nslots < 1024) stypes[found = nslots++] = rt;
        used[found] = 1;
        slot_of[b][r] = found;
      }
    }
    SrJaxpr *fb[64] = {0}, *lb[64] = {0};
    int ok = 1;
    for (int b = 0; b < nb && ok; b++) {
      fb[b] = cond_fwd_branch(ad, lj[b].fwd, no, slot_of[b], nslots, stypes);
      lb[b] = fb[b] ? cond_lin_branch(ad, lj[b].lin, lj[b].nres, slot_of[b], nslots, stypes) : NULL;
      ok = fb[b] && lb[b];
    }
    if (ok) {
      SrVal *r = bind_cond(ad, e, fb, nb, (int)e->nin, x);
      if (r) {
        for (uint32_t i = 0; i < no; i++) y[i] = r->seq.items[i];
        int anynz = 0;
        for (uint32_t i = 0; i < no; i++) anynz |= any[i];
        rc = 0;
        if (anynz) {
          SrVal **in = sr_xcalloc(1 + (size_t)nslots + n + 1, sizeof *in);
          uint32_t k = 0;
          in[k++] = x[0];
          for (int s2 = 0; s2 < nslots; s2++) in[k++] = r->seq.items[no + (uint32_t)s2];
          for (uint32_t i = 0; i < n; i++)
            if (nz[i]) in[k++] = t[i + 1];
          SrVal *rt = bind_cond(ad, e, lb, nb, (int)k, in);
          free(in);
          if (!rt) rc = -1;
          else
            for (uint32_t i = 0, q = 0; i < no; i++) ty[i] = any[i] ? rt->seq.items[q++] : NULL;
        }
      }
    }
    for (int b = 0; b < nb; b++) {
      if (fb[b]) sr_program_unref(fb[b]->prog);
      if (lb[b]) sr_program_unref(lb[b]->prog);
      free(slot_of[b]);
    }
  }
out:
  for (int b = 0; b < have; b++) sr_ad_lin_jaxprs_free(&lj[b]);
  free(nz);
  free(any);
  free(nofwd);
  return rc;
}

JVP(jvp_cond) {
  int nb;
  SrJaxpr *const *bs0 = branches_of(ad, e, &nb);
  if (!bs0) return -1;
  SrJaxpr *bs[64];
  memcpy(bs, bs0, (size_t)nb * sizeof *bs);
  if (t[0]) return sr_raise(ad->I, "TypeError", "cond: the index has no tangent"), -1;
  if (ad->mode == SR_AD_LIN) return cond_lin(ad, e, bs, nb, x, t, y, ty);
  return cond_jvp_mode(ad, e, bs, nb, x, t, y, ty);
}

TR(tr_cond) {
  int nb;
  SrJaxpr *const *bs0 = branches_of(ad, e, &nb);
  if (!bs0) return -1;
  SrJaxpr *bs[64] = {0}, *src[64];
  memcpy(src, bs0, (size_t)nb * sizeof *src);
  if (!x[0]) return sr_raise(ad->I, "TypeError", "cond: the index cannot be linear"), -1;
  uint32_t n = e->nin - 1, no = e->nout;
  uint8_t *lin = sr_xcalloc(n + 1, 1), *ct_nz = sr_xcalloc(no + 1, 1);
  for (uint32_t i = 0; i < n; i++) lin[i] = x[i + 1] == NULL;
  for (uint32_t i = 0; i < no; i++) ct_nz[i] = ct[i] != NULL;
  int rc = -1, ok = 1;
  for (int b = 0; b < nb && ok; b++) ok = (bs[b] = sr_ad_transpose_jaxpr(ad, src[b], lin, ct_nz)) != NULL;
  if (ok) {
    SrVal **in = sr_xcalloc(1 + n + no + 1, sizeof *in);
    uint32_t k = 0;
    in[k++] = x[0];
    for (uint32_t i = 0; i < n; i++)
      if (!lin[i]) in[k++] = x[i + 1];
    for (uint32_t i = 0; i < no; i++)
      if (ct[i]) in[k++] = ct[i];
    SrVal *r = bind_cond(ad, e, bs, nb, (int)k, in);
    free(in);
    if (r) {
      for (uint32_t i = 0, q = 0; i < n; i++)
        if (lin[i]) cx[i + 1] = r->seq.items[q++];
      rc = 0;
    }
  }
  for (int b = 0; b < nb; b++)
    if (bs[b]) sr_program_unref(bs[b]->prog);
  free(lin);
  free(ct_nz);
  return rc;
}

/* ==== op_name paths and result counts: jit, pjit, scan, while, cond, custom_lin ==== */

/* XLA names a jit's computation jit(NAME), lowers scan and while to a
   `while` whose bodies are `body` and `cond`, and a cond's branches
   `branch_K`. */
static const char *opname_jit(const SrParam *ps, uint32_t np, const char *key, int s, char *buf, size_t n) {
  (void)s;
  if (key) return NULL;
  SrVal *nm = sr_params_find(ps, np, "name");
  if (!nm || (nm->kind != SR_V_STR && nm->kind != SR_V_WORD)) return "jit";
  snprintf(buf, n, "jit(%.*s)", (int)nm->str.n, nm->str.s);
  return buf;
}

static const char *opname_scan(const SrParam *ps, uint32_t np, const char *key, int s, char *buf, size_t n) {
  (void)ps, (void)np, (void)s, (void)buf, (void)n;
  return key ? "body" : "while";
}

static const char *opname_while(const SrParam *ps, uint32_t np, const char *key, int s, char *buf, size_t n) {
  (void)ps, (void)np, (void)s, (void)buf, (void)n;
  return !key ? "while" : strcmp(key, "cond_jaxpr") == 0 ? "cond" : "body";
}

static const char *opname_cond(const SrParam *ps, uint32_t np, const char *key, int s, char *buf, size_t n) {
  (void)ps, (void)np;
  if (!key) return "cond";
  snprintf(buf, n, "branch_%d", s);
  return buf;
}

static int param_seq_len(const SrVal *v) { return v && sr_is_seq(v) ? v->seq.n : 0; }

static uint32_t nout_while(int nin, const SrParam *ps, int np) {
  const SrVal *cn = sr_params_find(ps, (uint32_t)np, "cond_nconsts"), *bn = sr_params_find(ps, (uint32_t)np, "body_nconsts");
  return (uint32_t)(nin - (cn ? cn->i : 0) - (bn ? bn->i : 0));
}

static uint32_t nout_cond(int nin, const SrParam *ps, int np) {
  (void)nin;
  const SrVal *br = sr_params_find(ps, (uint32_t)np, "branches");
  return param_seq_len(br) ? br->seq.items[0]->jx.jaxpr->nout : 0;
}

static uint32_t nout_custom_lin(int nin, const SrParam *ps, int np) {
  (void)nin;
  return (uint32_t)param_seq_len(sr_params_find(ps, (uint32_t)np, "out_avals"));
}

/* conditionals.py: _bcast_select_n -- select_n(pred, *cases), pred
   broadcast to the cases' rank along its leading dims. */
static SrVal *bcast_select_n(SrAd *ad, SrVal *pred, int n, SrVal **cases) {
  const SrType *pt = sr_ad_type(ad, pred), *ct = sr_ad_type(ad, cases[0]);
  if (!pt || !ct) return NULL;
  if (pt->ndim != ct->ndim) {
    int64_t dims[SR_MAX_RANK];
    for (int i = 0; i < pt->ndim; i++) dims[i] = i;
    /* on an Explicit mesh select_n wants `which` sharded as the cases */
    int sharded = 0;
    for (int d = 0; d < ct->ndim; d++) sharded |= ct->dims[d].nax > 0;
    pred = sr_ad_broadcast_in_dim(ad, pred, ct, dims, pt->ndim, sharded);
  }
  return sr_ad_select_n(ad, pred, n, cases);
}

/* conditionals.py: _cond_batching_rule.  A batched index runs every
   branch (batched, its operands and results at the front) on operands
   selected against their stop_gradient, and select_n picks each result;
   an unbatched index is a cond of the branches batched alike (the
   results any branch batches are batched in all). */
BATCH(batch_cond) {
  SrAd *ad = &b->ad;
  int nb;
  SrJaxpr *const *bs0 = branches_of(ad, e, &nb);
  if (!bs0) return -1;
  SrJaxpr *bs[64];
  memcpy(bs, bs0, (size_t)nb * sizeof *bs);
  /* _cond_batching_rule */
  for (int k = 0; k < nb; k++)
    if (jaxpr_has_io(bs[k], 0, 0)) return sr_raise(ad->I, "NotImplementedError", "IO effect not supported in vmap-of-cond."), -1;
  uint32_t n = e->nin, nops = n - 1, no = e->nout;
  uint8_t *inb = sr_xcalloc(n + 1, 1), *outb = sr_xcalloc(no + 1, 1), *ob = sr_xcalloc(no + 1, 1);
  SrVal **ops = sr_xcalloc(n + 1, sizeof *ops);
  SrJaxpr *bb[64] = {0};
  int rc = -1;
  if (bd[0] != SR_NOT_MAPPED) {
    SrVal *index = sr_batch_at_front(b, x[0], bd[0], b->size);
    for (uint32_t i = 0; i < nops; i++) ops[i] = sr_batch_at_front(b, x[1 + i], bd[1 + i], b->size);
    memset(inb, 1, nops);
    memset(outb, 1, no);
    SrVal **outs = sr_xcalloc((size_t)nb * no + 1, sizeof *outs), **sel = sr_xcalloc(nops + 1, sizeof *sel);
    rc = 0;
    for (int k = 0; k < nb && rc == 0; k++) {
      if (!(bb[k] = sr_batch_jaxpr(b, bs[k], inb, outb, ob))) {
        rc = -1;
        break;
      }
      SrVal *pred = sr_ad_binop(ad, SR_P_eq, index, sr_ad_const(ad, index, k));
      for (uint32_t i = 0; i < nops; i++) {
        SrVal *cases[2] = {sr_ad_unop(ad, SR_P_stop_gradient, ops[i]), ops[i]};
        sel[i] = cases[0] ? bcast_select_n(ad, pred, 2, cases) : NULL;
        if (!sel[i]) rc = -1;
      }
      SrVal *r = rc == 0 ? sr_ad_keep(ad, sr_eval_jaxpr(ad->I, bb[k], (int)nops, sel)) : NULL;
      if (!r) rc = -1;
      for (uint32_t i = 0; rc == 0 && i < no; i++) outs[(size_t)i * nb + k] = r->seq.items[i];
    }
    for (uint32_t i = 0; rc == 0 && i < no; i++) {
      y[i] = bcast_select_n(ad, index, nb, &outs[(size_t)i * nb]);
      ybd[i] = 0;
      if (!y[i]) rc = -1;
    }
    free(outs);
    free(sel);
  } else {
    ops[0] = x[0];
    for (uint32_t i = 0; i < nops; i++) {
      inb[i] = bd[1 + i] != SR_NOT_MAPPED;
      ops[1 + i] = inb[i] ? sr_batch_moveaxis(b, x[1 + i], bd[1 + i], 0) : x[1 + i];
    }
    for (int k = 0; k < nb; k++) {
      SrJaxpr *t = sr_batch_jaxpr(b, bs[k], inb, NULL, ob);
      if (!t) goto done;
      sr_program_unref(t->prog);
      for (uint32_t i = 0; i < no; i++) outb[i] |= ob[i];
    }
    for (int k = 0; k < nb; k++)
      if (!(bb[k] = sr_batch_jaxpr(b, bs[k], inb, outb, ob))) goto done;
    SrVal *r = bind_cond(ad, e, bb, nb, (int)n, ops);
    if (!r) goto done;
    for (uint32_t i = 0; i < no; i++) {
      y[i] = r->seq.items[i];
      ybd[i] = outb[i] ? 0 : SR_NOT_MAPPED;
    }
    rc = 0;
  }
done:
  for (int k = 0; k < nb; k++)
    if (bb[k]) sr_program_unref(bb[k]->prog);
  free(inb);
  free(outb);
  free(ob);
  free(ops);
  return rc;
}

/* ==== registration ==== */

static int type_platform_index(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out);

static void type_rules_control(void) {
  sr_set_type_rule(SR_P_custom_lin, type_custom_lin);
  static const int calls[] = {SR_P_jit, SR_P_pjit, SR_P_closed_call, SR_P_core_call, SR_P_eval_jaxpr,
                              SR_P_xla_call, SR_P_composite, SR_P_remat, SR_P_checkpoint, SR_P_remat2,
                              SR_P_custom_jvp_call,
                              SR_P_custom_vjp_call, SR_P_custom_vjp_call_jaxpr, SR_P_custom_vmap_call};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) sr_set_type_rule(calls[i], type_call);
  sr_set_type_rule(SR_P_optimization_barrier, type_optimization_barrier);
  sr_set_type_rule(SR_P_dce_sink, type_dce_sink);
  sr_set_type_rule(SR_P_scan, type_scan);
  sr_set_type_rule(SR_P_while, type_while);
  sr_set_type_rule(SR_P_cond, type_cond);
  sr_set_type_rule(SR_P_platform_index, type_platform_index);
}

/* ==== platform_index ====
 *
 * conditionals.py's platform_index_p: the index into platforms (a tuple
 * of tuples of platform names, None for the default) of the platform the
 * computation runs on -- here always "cpu"; mlir.lower_per_platform's
 * NotImplementedError when none names it and there is no default. */

static int type_platform_index(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 0, 1) < 0) return -1;
  SrVal *ps = sr_rparam(e, "platforms");
  if (!ps || (ps->kind != SR_V_TUPLE && ps->kind != SR_V_LIST))
    return sr_terr(cx, "TypeError", "platform_index equation needs a 'platforms' tuple");
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = SR_I32;
  out[0] = sr_type_get(&b);
  return 0;
}

/* The branch of platform "cpu", or the default's; -1 if none. */
static int64_t platform_branch(const SrVal *ps) {
  int64_t dflt = -1;
  for (int i = 0; i < ps->seq.n; i++) {
    const SrVal *g = ps->seq.items[i];
    if (g->kind == SR_V_NONE) {
      if (dflt < 0) dflt = i;
      continue;
    }
    for (int k = 0; (g->kind == SR_V_TUPLE || g->kind == SR_V_LIST) && k < g->seq.n; k++) {
      const SrVal *n = g->seq.items[k];
      if ((n->kind == SR_V_STR || n->kind == SR_V_WORD) && n->str.n == 3 && memcmp(n->str.s, "cpu", 3) == 0) return i;
    }
  }
  return dflt;
}

static int index_fill(SrShardIO *io) {
  const int64_t *v = io->arg;
  sr_kern_set_scalar(SR_I32, (double)*v, *v, io->out[0]->data);
  return 0;
}

static int ev_platform_index(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrVal *ps = sr_ev_param(e, "platforms");
  if (!ps || (ps->kind != SR_V_TUPLE && ps->kind != SR_V_LIST))
    return sr_ev_err(cx, "TypeError", "platform_index equation needs a 'platforms' tuple");
  int64_t k = platform_branch(ps);
  if (k < 0) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, ps);
    int rc = sr_ev_err(cx, "NotImplementedError",
                       "MLIR translation rule for primitive 'platform_index(platforms=%s)' not found for platform cpu",
                       b.p);
    sr_buf_free(&b);
    return rc;
  }
  const SrType *t = e->out_type[0];
  e->out[0] = sr_array_new(t, sr_layout_of_type(t), cx->mesh);
  return sr_ev_map(cx, 0, NULL, 1, e->out, SR_MAP_POS, index_fill, &k);
}

static void eval_rules_control(void) {
  sr_set_eval_rule(SR_P_platform_index, ev_platform_index);
  sr_set_eval_rule(SR_P_custom_lin, ev_custom_lin);
  static const int calls[] = {
    SR_P_jit, SR_P_pjit, SR_P_closed_call, SR_P_core_call, SR_P_eval_jaxpr, SR_P_custom_jvp_call,
    SR_P_custom_vjp_call, SR_P_custom_vjp_call_jaxpr, SR_P_remat, SR_P_checkpoint, SR_P_remat2, SR_P_custom_vmap_call,
    SR_P_composite,
  };
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) sr_set_eval_rule(calls[i], ev_call);
  sr_set_eval_rule(SR_P_optimization_barrier, ev_barrier);
  sr_set_eval_rule(SR_P_dce_sink, ev_dce_sink);
  sr_set_eval_rule(SR_P_scan, ev_scan);
  sr_set_eval_rule(SR_P_while, ev_while);
  sr_set_eval_rule(SR_P_cond, ev_cond);
}

static void ad_rules_control(void) {
  sr_ad_set_jvp(SR_P_platform_index, sr_ad_jvp_zero);
  sr_ad_set_jvp(SR_P_jit, jvp_jit);
  sr_ad_set_transpose(SR_P_jit, tr_jit);
  sr_ad_set_jvp(SR_P_pjit, jvp_jit);
  sr_ad_set_transpose(SR_P_pjit, tr_jit);
  sr_ad_set_jvp(SR_P_checkpoint, jvp_remat);
  sr_ad_set_transpose(SR_P_checkpoint, tr_remat);
  sr_ad_set_jvp(SR_P_remat, jvp_remat);
  sr_ad_set_transpose(SR_P_remat, tr_remat);
  sr_ad_set_jvp(SR_P_remat2, jvp_remat);
  sr_ad_set_transpose(SR_P_remat2, tr_remat);
  sr_ad_set_jvp(SR_P_custom_jvp_call, jvp_custom_jvp_call);
  sr_ad_set_transpose(SR_P_custom_jvp_call, tr_custom_jvp_call);
  sr_ad_set_jvp(SR_P_custom_vjp_call, jvp_custom_vjp_call);
  sr_ad_set_jvp(SR_P_custom_vjp_call_jaxpr, sr_lax_jvp_custom_call);
  /* eval_jaxpr: its call_jaxpr differentiated inline (lax/eval_jaxpr.py's
     _eval_jaxpr_jvp binds it again on the JVP jaxpr; the values are the same) */
  sr_ad_set_jvp(SR_P_eval_jaxpr, sr_lax_jvp_custom_call);
  sr_ad_set_transpose(SR_P_custom_lin, tr_custom_lin);
  sr_ad_set_jvp(SR_P_dce_sink, jvp_dce_sink);
  sr_ad_set_transpose(SR_P_dce_sink, tr_dce_sink);
  sr_ad_set_jvp(SR_P_composite, jvp_composite);
  sr_ad_set_transpose(SR_P_composite, tr_composite);
  sr_ad_set_jvp(SR_P_optimization_barrier, jvp_barrier);
  sr_ad_set_transpose(SR_P_optimization_barrier, tr_barrier);
  sr_ad_set_jvp(SR_P_while, jvp_while);
  sr_ad_set_transpose(SR_P_while, tr_while);
}

static void batch_rules_control(void) {
  sr_prims[SR_P_jit].batch = batch_jit;
  sr_prims[SR_P_pjit].batch = batch_jit;
  sr_prims[SR_P_closed_call].batch = batch_jit;
  sr_prims[SR_P_core_call].batch = batch_jit;
  sr_prims[SR_P_eval_jaxpr].batch = batch_jit;
  sr_prims[SR_P_remat].batch = batch_remat;
  sr_prims[SR_P_checkpoint].batch = batch_remat;
  sr_prims[SR_P_remat2].batch = batch_remat;
  sr_prims[SR_P_optimization_barrier].batch = batch_barrier;
  sr_prims[SR_P_dce_sink].batch = batch_dce_sink;
  sr_prims[SR_P_cond].batch = batch_cond;
  sr_prims[SR_P_scan].batch = batch_scan;
  sr_prims[SR_P_while].batch = batch_while;
  sr_prims[SR_P_custom_jvp_call].batch = batch_custom_call;
  sr_prims[SR_P_custom_vjp_call].batch = batch_custom_call;
  sr_prims[SR_P_custom_vjp_call_jaxpr].batch = batch_custom_call;
}

static void ad_rules_scan(void) {
  sr_ad_set_jvp(SR_P_scan, jvp_scan);
  sr_ad_set_transpose(SR_P_scan, tr_scan);
}

static void ad_rules_cond(void) {
  sr_ad_set_jvp(SR_P_cond, jvp_cond);
  sr_ad_set_transpose(SR_P_cond, tr_cond);
}

#undef TR

#undef JVP

static void engine_slots_control(void) {
  sr_prims[SR_P_jit].op_name = opname_jit;
  sr_prims[SR_P_pjit].op_name = opname_jit;
  sr_prims[SR_P_scan].op_name = opname_scan;
  sr_prims[SR_P_while].op_name = opname_while;
  sr_prims[SR_P_cond].op_name = opname_cond;
  sr_prims[SR_P_while].nout = nout_while;
  sr_prims[SR_P_cond].nout = nout_cond;
  sr_prims[SR_P_custom_lin].nout = nout_custom_lin;
  sr_prims[SR_P_dce_sink].nout = nout_dce_sink;
  sr_prims[SR_P_optimization_barrier].hlo = "opt-barrier";
}

/* Whether result o of a scan equation is a stacked one (for the walk's
   accumulation, SrEvAccum). */
static int scan_stacked(const SrEqn *q, uint32_t o) {
  const SrVal *v = sr_eqn_param(q, sr_intern_cstr("num_carry"));
  return v && v->kind == SR_V_INT && (int64_t)o >= v->i && o < q->nout;
}

void sr_lax_control_init(void) {
  sr_ev_accum = (SrEvAccum){SR_P_scan, SR_P_add, SR_P_add_any, scan_stacked};
  engine_slots_control();
  type_rules_control();
  eval_rules_control();
  ad_rules_control();
  ad_rules_scan();
  ad_rules_cond();
  batch_rules_control();
}
