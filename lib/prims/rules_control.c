/* rules_control.c: type rules of calls and control flow -- jit and the
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
#include "prims/rule.h"

#include <stdlib.h>
#include <string.h>

#include "text/print_val.h"
#include "util/mem.h"

void sr_rules_control_init(void);

/* ---- shared helpers ---- */

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

/* ---- calls ---- */

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
  static const char *const keys[] = {"jaxpr", "call_jaxpr", "fun_jaxpr", NULL};
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

/* ---- scan ---- */

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

/* ---- while ---- */

/* loops.py: _while_loop_abstract_eval, with lax.while_loop's checks of
   the condition (a boolean scalar) and of the carry (_check_carry_type).
   Operands are the cond consts, the body consts, the initial carry. */
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
  if (couts[0] && (couts[0]->dtype != SR_BOOL || couts[0]->ndim)) {
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

/* ---- cond ---- */

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

void sr_rules_control_init(void) {
  static const int calls[] = {SR_P_jit, SR_P_pjit, SR_P_closed_call, SR_P_core_call, SR_P_xla_call,
                              SR_P_remat, SR_P_checkpoint, SR_P_remat2, SR_P_custom_jvp_call,
                              SR_P_custom_vjp_call, SR_P_custom_vjp_call_jaxpr};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) sr_set_type_rule(calls[i], type_call);
  sr_set_type_rule(SR_P_optimization_barrier, type_optimization_barrier);
  sr_set_type_rule(SR_P_scan, type_scan);
  sr_set_type_rule(SR_P_while, type_while);
  sr_set_type_rule(SR_P_cond, type_cond);
}
