/* lax_control_flow.c: jax.lax's control flow -- scan, cond, switch,
 * while_loop, fori_loop (lax/control_flow/loops.py, conditionals.py) --
 * and the helpers of their bodies' tracing (sr_trace_fn's SR_TRACE_BODY,
 * common.py's _initial_style_jaxpr), which shard_map uses too. */
#include "jax/lax.h"
#include "jax/jax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/array_methods.h"
#include "py/objects.h"
#include "py/range.h"
#include "py/introspect.h"
#include "text/print_val.h"
#include "jax/vjp.h"
#include "jax/tree_util.h"
#include "jax/np_host.h"
#include "util/intern.h"
#include "jax/tracers.h"
#include "jax/ref.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

/* ======================================================================
 * tracing bodies
 * ====================================================================== */

/* Abstract arrays of the given types in the structure of `like`. */
SrVal *sr_api_abstract_like(SrVal *like, const SrType **types, int n) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, l, sr_array_abstract(types[i]));
  SrVal *r = sr_pytree_unflatten(like, l);
  sr_unref(l);
  return r;
}

int sr_api_n_leaves(SrInterp *I, SrVal *v) {
  SrVal *l = sr_pytree_flatten(I, v);
  int n = l ? l->seq.n : -1;
  sr_unref(l);
  return n;
}

/* core.typematch: equal but for weak types (and which mesh object names
   the axes). */
static int typematch(const SrType *a, const SrType *b) {
  return sr_type_equal_mod_mesh(sr_type_with_weak(a, 0), sr_type_with_weak(b, 0));
}

/* core.aval_mismatch_extra: what differs between two types that do not
   typematch (", so the dtypes do not match"). */
static void mismatch_extra(SrBuf *out, const SrType *a, const SrType *b) {
  const char *m[3];
  int n = 0;
  if (a->dtype != b->dtype) m[n++] = "the dtypes do not match";
  int same_shape = a->ndim == b->ndim;
  for (int d = 0; same_shape && d < a->ndim; d++) same_shape = a->dims[d].size == b->dims[d].size;
  if (!same_shape) m[n++] = "the shapes do not match";
  if (a->varying != b->varying || a->unreduced != b->unreduced || a->reduced != b->reduced)
    m[n++] = "the manual axis types do not match";
  if (n == 0) return;
  sr_buf_puts(out, ", so ");
  for (int i = 0; i < n; i++) sr_buf_printf(out, "%s%s", i == 0 ? "" : i == n - 1 ? ", and " : ", ", m[i]);
}

/* JAX's list of differences: "  * a;\n\n  * b;\n  * c.\n", or "A.\n"
   for one item (capitalized). */
static void diff_list(SrBuf *out, char **items, int n, int capitalize) {
  for (int i = 0; i < n; i++) {
    if (n == 1) {
      if (capitalize && items[i][0] >= 'a' && items[i][0] <= 'z') items[i][0] = (char)(items[i][0] - 'a' + 'A');
      sr_buf_printf(out, "%s.\n", items[i]);
    } else {
      /* '\n'.join(f'  * {d};\n' for d in diffs[:-1]) + f'  * {diffs[-1]}.\n' */
      sr_buf_printf(out, "  * %s%s", items[i], i < n - 2 ? ";\n\n" : i == n - 2 ? ";\n" : ".\n");
    }
  }
}

/* loops._check_carry_type's message for mismatched types: each leaf of the
   carry (init, the input carry's structure) whose type differs, why, and
   the pcast hint for a carry the body makes varying. */
/* inspect.signature(body_fun)'s first parameter; fori_loop's bodies
   (scanned_fun, while_body_fun) take loop_carry */
static const char *carry_param(SrVal *fn) {
  SrFunction *f = sr_as_function(fn);
  const char *carry = f && f->node->params && f->node->params->n ? f->node->params->names[0] : NULL;
  const char *bn = f ? NULL : sr_builtin_name(fn);
  if (bn && (strcmp(bn, "scanned_fun") == 0 || strcmp(bn, "while_body_fun") == 0)) carry = "loop_carry";
  return carry;
}

/* _check_carry_type's first check: the carry the body returns has the
   input carry's pytree structure (tree_util.equality_errors on the two,
   whose leaves are avals).  Returns 1 with JAX's TypeError raised. */
static int carry_struct_error(SrInterp *I, const char *name, SrVal *fn, SrVal *in, SrVal *out) {
  SrTreeDiffs d = {0};
  sr_pytree_equality_errors(I, in, out, "<class 'jax._src.core.ShapedArray'>", &d);
  if (d.n == 0) return 0;
  const char *carry = carry_param(fn);
  char **items = sr_xcalloc((size_t)d.n + 1, sizeof *items);
  for (int i = 0; i < d.n; i++) {
    SrBuf b = SR_BUF_INIT;
    const char *p = d.d[i].path;
    if (carry) sr_buf_printf(&b, *p ? "the input carry component %s%s" : "the input carry %s", carry, p);
    else sr_buf_printf(&b, *p ? "the input carry at path %s" : "the input carry", p);
    sr_buf_printf(&b, " is a %s but the corresponding component of the carry output is a %s, so %s", d.d[i].thing1,
                  d.d[i].thing2, d.d[i].expl);
    items[i] = sr_buf_steal(&b);
  }
  SrBuf msg = SR_BUF_INIT;
  diff_list(&msg, items, d.n, 1);
  sr_raise(I, "TypeError",
           "%s function carry input and carry output must have the same pytree structure, but they differ:\n\n%s\n"
           "Revise the function so that the carry output has the same pytree structure as the carry input.",
           name, msg.p);
  sr_buf_free(&msg);
  for (int i = 0; i < d.n; i++) free(items[i]);
  free(items);
  sr_tree_diffs_free(&d);
  return 1;
}

static SrVal *carry_type_error(SrInterp *I, const char *name, SrVal *fn, SrVal *init, const SrType **in,
                               const SrType **out, int n) {
  const char *carry = carry_param(fn);
  char **paths = sr_xcalloc((size_t)n + 1, sizeof *paths);
  SrBuf pb = SR_BUF_INIT;
  int k = 0;
  sr_pytree_leaf_paths(init, &pb, paths, &k);
  sr_buf_free(&pb);
  char **diffs = sr_xcalloc((size_t)n + 1, sizeof *diffs), **hints = sr_xcalloc((size_t)n + 1, sizeof *hints);
  int nd = 0, nh = 0;
  for (int i = 0; i < n; i++) {
    if (typematch(in[i], out[i])) continue;
    const char *p = i < k && paths[i] ? paths[i] : "";
    SrBuf comp = SR_BUF_INIT, d = SR_BUF_INIT;
    if (carry) sr_buf_printf(&comp, *p ? "the input carry component %s%s" : "the input carry %s", carry, p);
    else sr_buf_printf(&comp, *p ? "the input carry at path %s" : "the input carry", p);
    sr_buf_printf(&d, "%s has type ", comp.p);
    sr_type_str(&d, in[i], 0);
    sr_buf_puts(&d, " but the corresponding output carry component has type ");
    sr_type_str(&d, out[i], 0);
    mismatch_extra(&d, in[i], out[i]);
    diffs[nd++] = sr_buf_steal(&d);
    SrAxes extra = out[i]->varying & ~in[i]->varying;
    if (extra) {
      SrBuf h = SR_BUF_INIT;
      sr_buf_puts(&h, "applying `jax.lax.pcast(..., ");
      sr_axes_tuple_str(&h, out[i]->mesh ? out[i]->mesh : in[i]->mesh, extra);
      sr_buf_printf(&h, ", to='varying')`, to the initial carry value corresponding to %s", comp.p);
      hints[nh++] = sr_buf_steal(&h);
    }
    sr_buf_free(&comp);
  }
  SrBuf msg = SR_BUF_INIT;
  diff_list(&msg, diffs, nd, 1);
  sr_buf_putc(&msg, '\n');
  if (nh == 1) {
    sr_buf_printf(&msg, "This might be fixed by %s.\n", hints[0]);
  } else if (nh > 1) {
    sr_buf_puts(&msg, "This might be fixed by:\n");
    diff_list(&msg, hints, nh, 0);
  }
  if (nh)
    sr_buf_puts(&msg, "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information.\n\n");
  sr_raise(I, "TypeError",
           "%s function carry input and carry output must have equal types, but they differ:\n\n%sRevise the "
           "function so that all output types match the corresponding input types.",
           name, msg.p);
  sr_buf_free(&msg);
  for (int i = 0; i < n; i++) {
    free(paths[i]);
    free(diffs[i]);
    free(hints[i]);
  }
  free(paths);
  free(diffs);
  free(hints);
  return NULL;
}

/* loops._promote_weak_typed_input over the carry leaves (a list, in place):
   a weak init whose dtype the body changes is converted.  Returns whether
   any changed, or -1. */
static int promote_weak_carry(SrInterp *I, SrVal *leaves, const SrType **out) {
  int changed = 0;
  for (int i = 0; i < leaves->seq.n; i++) {
    const SrType *t = vtype(I, leaves->seq.items[i]);
    if (!t->weak || typematch(t, out[i])) continue;
    SrVal *pair[2] = {leaves->seq.items[i], sr_array_abstract(out[i])};
    int weak;
    SrDtype dt = sr_jnp_result_dtype(I, 2, pair, &weak);
    sr_unref(pair[1]);
    SrVal *c = sr_lax_convert(I, leaves->seq.items[i], dt, 0, NULL);
    if (!c) return -1;
    sr_unref(leaves->seq.items[i]);
    leaves->seq.items[i] = c;
    changed = 1;
  }
  return changed;
}

/* ======================================================================
 * control flow (lax/control_flow/loops.py, conditionals.py)
 *
 * The equations carry the params JAX has long printed: scan's
 * _split_transpose, jaxpr, length, linear, num_carry, num_consts,
 * reverse, unroll; while's body_jaxpr, body_nconsts, cond_jaxpr,
 * cond_nconsts; cond's branches.  Captured values are leading operands.
 * ====================================================================== */

static const SrType **leaf_types(SrInterp *I, SrVal *leaves) {
  const SrType **t = sr_xcalloc((size_t)leaves->seq.n + 1, sizeof *t);
  for (int i = 0; i < leaves->seq.n; i++) t[i] = vtype(I, leaves->seq.items[i]);
  return t;
}

/* core.mapped_leading_aval / unmapped_aval */
static const SrType *drop_leading(const SrType *t) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  memmove(b.dims, b.dims + 1, (size_t)(b.ndim - 1) * sizeof b.dims[0]);
  b.ndim--;
  return sr_type_get(&b);
}

static const SrType *add_leading(const SrType *t, int64_t n) {
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  memmove(b.dims + 1, b.dims, (size_t)b.ndim * sizeof b.dims[0]);
  memset(&b.dims[0], 0, sizeof b.dims[0]);
  b.dims[0].size = n;
  b.ndim++;
  return sr_type_get(&b);
}

static SrVal *bools(int n, int v) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_bool(v));
  return t;
}

static SrJaxpr *rebuild_jaxpr(SrJaxpr *j, const int *order, int n, const int *keep);
static int forwarded_input(const SrJaxpr *j, uint32_t i);

/* core.concrete_or_error(None, v, context): 1 with JAX's
   ConcretizationTypeError raised when v is a tracer. */
static int raise_if_traced(SrInterp *I, SrVal *v, const char *context) {
  SrArrayObj *a = sr_array_of(v);
  if (!a || a->kind == SR_AV_CONCRETE || (a->kind == SR_AV_ABSTRACT && a->has_value)) return 0;
  sr_raise_concretization(I, v, context);
  return 1;
}

/* Calls the function at a qualified name (jax.lax.index_in_dim...). */
static SrVal *call_q(SrInterp *I, const char *q, int n, SrVal **v, int nkw, const char **kw, SrVal **kwv) {
  SrVal *fn = sr_lookup_qualname(q);
  if (!fn) return sr_raise(I, "RuntimeError", "internal error: no %s", q);
  SrArgs a = {n, v, nkw, kw, kwv, NULL};
  return sr_call(I, fn, &a);
}

/* Whether the pending exception is a ConcretizationTypeError (or one of
   its subclasses, a tracer's bool() or int()): a loop run in Python under
   disable_jit falls back to the primitive on it, as JAX's do. */
static int concretization_error(SrInterp *I) {
  if (!I->exc) return 0;
  const char *t = sr_exc_type(I->exc);
  return t && (!strcmp(t, "ConcretizationTypeError") || !strcmp(t, "TracerBoolConversionError") ||
               !strcmp(t, "TracerIntegerConversionError"));
}

/* lax.asarray: arrays as they are, Python scalars as weakly typed ones
   (numpy's as strong ones, jnp.asarray's) */
static SrVal *lax_asarray(SrInterp *I, SrVal *v) {
  if (sr_array_of(v)) return sr_ref(v);
  return call_q(I, "jax.numpy.asarray", 1, &v, 0, NULL, NULL);
}

/* tree_map(lax.asarray, tree) */
static SrVal *tree_asarray(SrInterp *I, SrVal *tree) {
  SrVal *l = sr_pytree_flatten(I, tree);
  for (int i = 0; l && i < l->seq.n; i++) {
    SrVal *x = lax_asarray(I, l->seq.items[i]);
    if (!x) {
      sr_unref(l);
      return NULL;
    }
    sr_unref(l->seq.items[i]);
    l->seq.items[i] = x;
  }
  if (!l) return NULL;
  SrVal *r = sr_pytree_unflatten(tree, l);
  sr_unref(l);
  return r;
}

/* scan under jax.disable_jit(): the body called in Python on each slice
   of xs, the ys stacked (lax.concatenate of expand_dims, loops._stack). */
static SrVal *scan_python(SrInterp *I, SrVal *f, SrVal *init, SrVal *xs, SrVal *xs_leaves, int64_t length,
                          int reverse) {
  if (length == 0)
    return sr_raise(I, "ValueError",
                    "zero-length scan is not supported in disable_jit() mode because the output type is unknown.");
  SrVal *carry = sr_ref(init), *ys = sr_seq(NULL, SR_V_LIST, 0), *result = NULL;
  SrVal *kf = sr_bool(0);
  const char *kw[1] = {sr_intern_cstr("keepdims")};
  for (int64_t k = 0; k < length; k++) {
    int64_t i = reverse ? length - 1 - k : k;
    SrVal *sl = sr_seq(NULL, SR_V_LIST, xs_leaves->seq.n);
    SrVal *iv = sr_int(NULL, i);
    int ok = 1;
    for (int q = 0; q < xs_leaves->seq.n && ok; q++) {
      SrVal *v[2] = {xs_leaves->seq.items[q], iv};
      SrVal *kv[1] = {kf};
      SrVal *x = call_q(I, "jax.lax.index_in_dim", 2, v, 1, kw, kv);
      if (x) sr_seq_push(NULL, sl, x);
      else ok = 0;
    }
    sr_unref(iv);
    SrVal *xsl = ok ? sr_pytree_unflatten(xs, sl) : NULL;
    sr_unref(sl);
    SrVal *r = NULL;
    if (xsl) {
      SrVal *v[2] = {carry, xsl};
      SrArgs ca = {2, v, 0, NULL, NULL, NULL};
      r = sr_call(I, f, &ca);
    }
    sr_unref(xsl);
    if (r && (!sr_is_seq(r) || r->kind == SR_V_SET || r->seq.n != 2)) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, r);
      sr_raise(I, "TypeError", "cannot unpack %s as a (carry, y) pair", b.p);
      sr_buf_free(&b);
      sr_unref(r);
      r = NULL;
    }
    if (!r) goto done;
    sr_unref(carry);
    carry = sr_ref(r->seq.items[0]);
    sr_seq_push(NULL, ys, sr_ref(r->seq.items[1]));
    sr_unref(r);
  }
  {
    /* tree_map(stack, *ys) in the order of the iterations' indices */
    int n = ys->seq.n;
    SrVal **flat = sr_xcalloc((size_t)n + 1, sizeof *flat);
    int ok = 1;
    for (int k = 0; k < n && ok; k++) {
      flat[k] = sr_pytree_flatten_any(I, ys->seq.items[reverse ? n - 1 - k : k]);
      ok = flat[k] != NULL && flat[k]->seq.n == flat[0]->seq.n;
      if (flat[k] && !ok) sr_raise(I, "ValueError", "scan: the ys of the iterations have different structures");
    }
    SrVal *stacked = ok ? sr_seq(NULL, SR_V_LIST, 0) : NULL;
    for (int l = 0; ok && l < flat[0]->seq.n; l++) {
      SrVal *parts = sr_seq(NULL, SR_V_LIST, n);
      SrVal *ax = sr_seq(NULL, SR_V_TUPLE, 1);
      sr_seq_push(NULL, ax, sr_int(NULL, 0));
      for (int k = 0; k < n && ok; k++) {
        SrVal *v[2] = {flat[k]->seq.items[l], ax};
        SrVal *e = call_q(I, "jax.lax.expand_dims", 2, v, 0, NULL, NULL);
        if (e) sr_seq_push(NULL, parts, e);
        else ok = 0;
      }
      sr_unref(ax);
      SrVal *z = sr_int(NULL, 0);
      SrVal *v[2] = {parts, z};
      SrVal *c = ok ? call_q(I, "jax.lax.concatenate", 2, v, 0, NULL, NULL) : NULL;
      sr_unref(z);
      sr_unref(parts);
      if (c) sr_seq_push(NULL, stacked, c);
      else ok = 0;
    }
    if (ok) {
      SrVal *st = sr_pytree_unflatten(ys->seq.items[0], stacked);
      result = sr_seq(NULL, SR_V_TUPLE, 2);
      sr_seq_push(NULL, result, sr_ref(carry));
      sr_seq_push(NULL, result, st);
    }
    sr_unref(stacked);
    for (int k = 0; k < n; k++) sr_unref(flat[k]);
    free(flat);
  }
done:
  sr_unref(kf);
  sr_unref(carry);
  sr_unref(ys);
  return result;
}

/* str of out_avals.unflatten(): the structure with each leaf's aval,
   str(aval) at the top (float32[]), its repr inside a container. */
static void aval_tree_str(SrInterp *I, SrBuf *b, SrVal *v, int top) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    const SrType *t = vtype(I, v);
    if (!t) sr_to_repr(I, b, v);
    else if (top) sr_type_str(b, t, 0);
    else sr_aval_repr(b, t);
    return;
  }
  if (v->kind == SR_V_NONE) sr_buf_puts(b, "None");
  else if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    sr_buf_putc(b, v->kind == SR_V_LIST ? '[' : '(');
    for (int i = 0; i < ch->seq.n; i++) {
      if (i) sr_buf_puts(b, ", ");
      aval_tree_str(I, b, ch->seq.items[i], 0);
    }
    sr_buf_puts(b, v->kind == SR_V_LIST ? "]" : ch->seq.n == 1 ? ",)" : ")");
  } else if (v->kind == SR_V_DICT) {
    int *o = sr_pytree_dict_order(v);
    sr_buf_putc(b, '{');
    for (int i = 0; i < v->dict.n; i++) {
      if (i) sr_buf_puts(b, ", ");
      sr_to_repr(I, b, v->dict.keys[i]);
      sr_buf_puts(b, ": ");
      aval_tree_str(I, b, v->dict.vals[i], 0);
    }
    sr_buf_putc(b, '}');
    free(o);
  } else {
    sr_to_repr(I, b, v);
  }
  sr_unref(ch);
}

static SrVal *lax_scan(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "scan", "f, init, xs=, length=, reverse=, unroll=, _split_transpose=", p) < 0) return NULL;
  SrVal *f = p[0];
  if (!sr_is_callable(I, f)) return sr_raise(I, "TypeError", "lax.scan: f argument should be a callable.");
  SrVal *xs = p[2] ? p[2] : sr_none();
  int reverse = p[4] && sr_val_truthy(p[4]);
  SrVal *init_leaves = sr_pytree_flatten(I, p[1]);
  SrVal *xs_leaves = init_leaves ? sr_pytree_flatten(I, xs) : NULL;
  SrVal *result = NULL, *out_tree = NULL, *captured = NULL, *carry_arg = NULL, *x_arg = NULL;
  const SrType **ctypes = NULL, **xtypes = NULL, **otypes = NULL;
  SrJaxpr *body = NULL;
  SrPList ps = {0};
  /* jax_mutable_array_checks' debug info and operand names */
  SrBuf refdbg = SR_BUF_INIT;
  SrVal *opleaves = NULL;
  char **names = NULL;
  int nnames = 0;
  if (!xs_leaves) goto done;
  int nc = init_leaves->seq.n, nx = xs_leaves->seq.n;
  /* the length (_infer_scan_length) */
  int64_t length = -1;
  {
    /* [x.shape[0] for x in xs_flat]: the values without a shape (Python
       scalars) named; a 0-d array's shape[0] is an IndexError */
    SrBuf b = SR_BUF_INIT;
    int noshape = 0, zerod = 0;
    for (int i = 0; i < nx; i++) {
      SrVal *x = xs_leaves->seq.items[i];
      if (!sr_array_of(x) && !sr_is_ndarray(x)) {
        if (noshape++) sr_buf_puts(&b, ", ");
        sr_to_str(I, &b, x);
      } else if (vtype(I, x)->ndim == 0) {
        zerod = 1;
      }
    }
    if (noshape) sr_raise(I, "ValueError", "scan got value with no leading axis to scan over: %s.", b.p);
    else if (zerod) sr_raise(I, "IndexError", "tuple index out of range");
    sr_buf_free(&b);
    if (noshape || zerod) goto done;
  }
  for (int i = 0; i < nx; i++) {
    const SrType *t = vtype(I, xs_leaves->seq.items[i]);
    if (t->dims[0].nax) {
      SrBuf b = SR_BUF_INIT;
      for (int k = 0; k < nx; k++) {
        SrVal *sp = sr_api_type_spec(vtype(I, xs_leaves->seq.items[k]));
        if (k) sr_buf_puts(&b, ", ");
        sr_val_repr(&b, sp);
        sr_unref(sp);
      }
      sr_raise(I, "ValueError", "0th dimension of all xs should be replicated. Got %s", b.p);
      sr_buf_free(&b);
      goto done;
    }
  }
  if (p[3] && p[3]->kind != SR_V_NONE) {
    if (raise_if_traced(I, p[3],
                        "The `length` argument to `scan` expects a concrete `int` value. For scan-like iteration "
                        "with a dynamic length, use `while_loop` or `fori_loop`."))
      goto done;
    if (sr_as_int(I, p[3], "length", &length) < 0) goto done;
    for (int i = 0; i < nx; i++)
      if (vtype(I, xs_leaves->seq.items[i])->dims[0].size != length) {
        SrBuf b = SR_BUF_INIT;
        sr_buf_putc(&b, '[');
        for (int k = 0; k < nx; k++)
          sr_buf_printf(&b, k ? ", %lld" : "%lld", (long long)vtype(I, xs_leaves->seq.items[k])->dims[0].size);
        sr_buf_putc(&b, ']');
        sr_raise(I, "ValueError", "scan got `length` argument of %lld which disagrees with leading axis sizes %s.",
                 (long long)length, b.p);
        sr_buf_free(&b);
        goto done;
      }
  } else {
    for (int i = 0; i < nx; i++) {
      int64_t l = vtype(I, xs_leaves->seq.items[i])->dims[0].size;
      if (length >= 0 && l != length) {
        SrBuf b = SR_BUF_INIT;
        for (int k = 0; k < nx; k++)
          sr_buf_printf(&b, k ? ", %lld" : "%lld", (long long)vtype(I, xs_leaves->seq.items[k])->dims[0].size);
        sr_raise(I, "ValueError", "scan got values with different leading axis sizes: %s.", b.p);
        sr_buf_free(&b);
        goto done;
      }
      length = l;
    }
    if (length < 0) {
      sr_raise(I, "ValueError", "scan got no values to scan over and `length` not provided.");
      goto done;
    }
  }
  if (I->jax->disable_jit) {
    result = scan_python(I, f, p[1], xs, xs_leaves, length, reverse);
    goto done;
  }
  xtypes = sr_xcalloc((size_t)nx + 1, sizeof *xtypes);
  for (int i = 0; i < nx; i++) xtypes[i] = drop_leading(vtype(I, xs_leaves->seq.items[i]));
  x_arg = sr_api_abstract_like(xs, xtypes, nx);
  /* jax_mutable_array_checks: no Ref twice among the operands */
  sr_buf_printf(&refdbg, "%s traced for scan", sr_vjp_fun_info(f));
  SrVal *sargs[2] = {p[1], xs};
  SrArgs sna = {2, sargs, 0, NULL, NULL, NULL};
  int anyref = 0;
  opleaves = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < nc; i++) sr_seq_push(NULL, opleaves, sr_ref(init_leaves->seq.items[i]));
  for (int i = 0; i < nx; i++) sr_seq_push(NULL, opleaves, sr_ref(xs_leaves->seq.items[i]));
  for (int i = 0; i < opleaves->seq.n; i++) anyref |= sr_jax_is_ref(opleaves->seq.items[i]);
  /* the names only an error about a Ref operand needs */
  names = anyref ? sr_debug_arg_names(I, f, &sna, NULL, &nnames) : NULL;
  if (anyref && !names) sr_exc_clear(I);
  int refs_bad = sr_jax_check_ref_args_named(I, (const char *const *)names, nnames, sr_buf_str(&refdbg),
                                             opleaves->seq.items, opleaves->seq.n) < 0;
  for (int pass = 0; pass < 2 && !refs_bad; pass++) {
    free(ctypes);
    ctypes = leaf_types(I, init_leaves);
    sr_unref(carry_arg);
    carry_arg = sr_api_abstract_like(p[1], ctypes, nc);
    if (body) sr_program_unref(body->prog);
    sr_unref(out_tree);
    sr_unref(captured);
    out_tree = captured = NULL;
    SrVal *bargs[2] = {carry_arg, x_arg};
    sr_trace_fn_for("scan");
    body = sr_trace_body_cached(I, f, 2, bargs, SR_TRACE_BODY, &out_tree, &captured);
    if (!body) goto done;
    if (!sr_is_seq(out_tree) || out_tree->kind == SR_V_SET || out_tree->seq.n != 2) {
      SrBuf b = SR_BUF_INIT;
      aval_tree_str(I, &b, out_tree, 1);
      sr_raise(I, "TypeError", "scan body output must be a pair, got %s.", b.p);
      sr_buf_free(&b);
      goto done;
    }
    if (sr_jax_check_closed_refs_named(I, captured->seq.items, captured->seq.n, (const char *const *)names, nnames,
                                       sr_buf_str(&refdbg), opleaves->seq.items, opleaves->seq.n) < 0) {
      refs_bad = 1;
      break;
    }
    if (carry_struct_error(I, "scan body", f, p[1], out_tree->seq.items[0])) goto done;
    uint32_t ncap = body->nin - (uint32_t)(nc + nx);
    free(otypes);
    otypes = sr_xcalloc(body->nout + 1, sizeof *otypes);
    for (uint32_t i = 0; i < body->nout; i++) otypes[i] = body->outvars[i]->type ? body->outvars[i]->type : NULL;
    (void)ncap;
    if (pass == 0) {
      int ch = promote_weak_carry(I, init_leaves, otypes);
      if (ch < 0) goto done;
      if (!ch) break;
    }
  }
  if (refs_bad) goto done;
  for (int i = 0; i < nc; i++)
    if (!typematch(ctypes[i], otypes[i])) {
      carry_type_error(I, "scan body", f, carry_arg, ctypes, otypes, nc);
      goto done;
    }
  {
    int ncap = captured->seq.n;
    int64_t unroll = 1;
    if (p[5] && raise_if_traced(I, p[5], "The `unroll` argument to `scan` expects a concrete `int` or `bool` value."))
      goto done;
    if (p[5] && p[5]->kind == SR_V_BOOL) unroll = p[5]->i ? (length > 1 ? length : 1) : 1;
    else if (p[5] && sr_as_int(I, p[5], "unroll", &unroll) < 0) goto done;
    if (unroll < 0) {
      sr_raise(I, "ValueError", "`unroll` must be a `bool` or a non-negative `int`.");
      goto done;
    }
    /* a carry the body passes through unchanged is read-only: a const
       (loops.py's move_to_const); a y that is an x is that x, not an
       output (ext_to_ext_fwd) */
    int ny = (int)body->nout - nc, nmove = 0, nyk = 0;
    int *move = sr_xcalloc((size_t)nc + 1, sizeof *move), *yfwd = sr_xcalloc((size_t)ny + 1, sizeof *yfwd);
    for (int i = 0; i < nc; i++) {
      move[i] = forwarded_input(body, (uint32_t)i) == ncap + i;
      nmove += move[i];
    }
    for (int k = 0; k < ny; k++) {
      int fi = forwarded_input(body, (uint32_t)(nc + k));
      yfwd[k] = fi >= ncap + nc ? fi - (ncap + nc) : -1;
      nyk += yfwd[k] < 0;
    }
    SrJaxpr *bj = body;
    if (nmove || nyk < ny) {
      int *order = sr_xcalloc(body->nin + 1, sizeof *order), *keep = sr_xcalloc(body->nout + 1, sizeof *keep), k = 0;
      for (int i = 0; i < nc; i++)
        if (move[i]) order[k++] = ncap + i;
      for (int i = 0; i < ncap; i++) order[k++] = i;
      for (int i = 0; i < nc; i++)
        if (!move[i]) order[k++] = ncap + i;
      for (int i = 0; i < nx; i++) order[k++] = ncap + nc + i;
      for (int i = 0; i < nc; i++) keep[i] = !move[i];
      for (int i = 0; i < ny; i++) keep[nc + i] = yfwd[i] < 0;
      bj = rebuild_jaxpr(body, order, k, keep);
      free(order);
      free(keep);
    }
    int nc2 = nc - nmove;
    sr_plist_add(&ps, "_split_transpose", sr_bool(p[6] && sr_val_truthy(p[6])));
    sr_plist_add(&ps, "jaxpr", sr_jaxpr_val(NULL, bj));
    sr_plist_add(&ps, "length", sr_int(NULL, length));
    sr_plist_add(&ps, "linear", bools(ncap + nc + nx, 0));
    sr_plist_add(&ps, "num_carry", sr_int(NULL, nc2));
    sr_plist_add(&ps, "num_consts", sr_int(NULL, ncap + nmove));
    sr_plist_add(&ps, "reverse", sr_bool(reverse));
    sr_plist_add(&ps, "unroll", sr_int(NULL, unroll));
    SrVal *ops = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = 0; i < nc; i++)
      if (move[i]) sr_seq_push(NULL, ops, sr_ref(init_leaves->seq.items[i]));
    for (int i = 0; i < ncap; i++) sr_seq_push(NULL, ops, sr_ref(captured->seq.items[i]));
    for (int i = 0; i < nc; i++)
      if (!move[i]) sr_seq_push(NULL, ops, sr_ref(init_leaves->seq.items[i]));
    for (int i = 0; i < nx; i++) sr_seq_push(NULL, ops, sr_ref(xs_leaves->seq.items[i]));
    uint32_t nout = (uint32_t)(nc2 + nyk);
    const SrType **outs = sr_xcalloc(nout + 1, sizeof *outs);
    for (int i = 0, q = 0; i < nc; i++)
      if (!move[i]) outs[q++] = otypes[i];
    for (int k = 0, q = nc2; k < ny; k++)
      if (yfwd[k] < 0) outs[q++] = add_leading(otypes[nc + k], length);
    SrVal *r = sr_api_bind_typed(I, SR_P_scan, ops->seq.n, ops->seq.items, &ps, outs, nout);
    free(outs);
    sr_unref(ops);
    if (r) {
      /* the moved carries are their inits, the forwarded ys their xs */
      SrVal *all = sr_seq(NULL, SR_V_LIST, (int)body->nout);
      int q = 0, ok = 1;
      for (int i = 0; i < nc; i++) sr_seq_push(NULL, all, sr_ref(move[i] ? init_leaves->seq.items[i] : r->seq.items[q++]));
      for (int k = 0; k < ny && ok; k++) {
        if (yfwd[k] < 0) {
          sr_seq_push(NULL, all, sr_ref(r->seq.items[q++]));
        } else {
          SrVal *x = lax_asarray(I, xs_leaves->seq.items[yfwd[k]]);
          if (x) sr_seq_push(NULL, all, x);
          else ok = 0;
        }
      }
      if (ok) result = sr_pytree_unflatten(out_tree, all);
      sr_unref(all);
    }
    sr_unref(r);
    free(move);
    free(yfwd);
  }
done:
  sr_plist_free(&ps);
  if (body) sr_program_unref(body->prog);
  free(ctypes);
  free(xtypes);
  free(otypes);
  sr_unref(carry_arg);
  sr_unref(x_arg);
  sr_unref(out_tree);
  sr_unref(captured);
  sr_unref(init_leaves);
  sr_unref(xs_leaves);
  sr_buf_free(&refdbg);
  sr_unref(opleaves);
  if (names) sr_debug_arg_names_free(names, nnames);
  return result;
}

/* Whether two captured values are the same one (JAX compares id(c)): the
   same object, tracer of one var, or concrete array of one buffer. */
static int same_capture(SrVal *a, SrVal *b) {
  if (a == b) return 1;
  SrArrayObj *x = sr_array_of(a), *y = sr_array_of(b);
  if (!x || !y || x->kind != y->kind) return 0;
  return (x->kind == SR_AV_TRACER && x->var == y->var) || (x->kind == SR_AV_CONCRETE && x->data == y->data);
}

/* Branch jaxpr j, whose first ncap inputs stand for its captured values,
   taking all the branches' instead (common.py's _merge_common_consts):
   input k stands for consts[k] of type ctypes[k], where[i] is the const
   its capture i is, and the consts it does not read are new inputs. */
static SrJaxpr *pad_consts(SrJaxpr *j, int ncap, const int *where, int nconsts, const SrType **ctypes) {
  SrVar **vars = sr_xcalloc((size_t)nconsts + 1, sizeof *vars);
  SrVar **subst = sr_xcalloc((size_t)j->nvars + 1, sizeof *subst);
  int nsubst = 0;
  for (int i = 0; i < ncap; i++) {
    SrVar *v = j->invars[i];
    if (!vars[where[i]]) vars[where[i]] = v;
    else subst[v->id] = vars[where[i]], nsubst++;
  }
  SrJaxprBuilder b;
  sr_jb_init(&b, j->prog);
  for (int k = 0; k < nconsts; k++) sr_jb_invar(&b, vars[k] ? vars[k] : sr_jb_var(&b, ctypes[k]));
  for (uint32_t i = (uint32_t)ncap; i < j->nin; i++) sr_jb_invar(&b, j->invars[i]);
  SrVar **in = NULL;
  uint32_t capin = 0;
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    SrVar *const *ins = e->in;
    if (nsubst) {
      if (e->nin > capin) in = sr_xrealloc(in, (capin = e->nin) * sizeof *in);
      for (uint32_t i = 0; i < e->nin; i++)
        in[i] = e->in[i]->kind == SR_VAR && subst[e->in[i]->id] ? subst[e->in[i]->id] : e->in[i];
      ins = in;
    }
    SrEqn *n = sr_jb_eqn(&b, e->prim, e->nin, ins, e->nout, e->out, e->nparams, e->params);
    n->off = e->off;
    n->ns = e->ns;
    n->mesh = e->mesh;
    n->loc = e->loc;
  }
  for (uint32_t i = 0; i < j->nout; i++) {
    SrVar *v = j->outvars[i];
    sr_jb_outvar(&b, v->kind == SR_VAR && subst[v->id] ? subst[v->id] : v);
  }
  SrJaxpr *r = sr_jb_finish(&b);
  r->name = j->name;
  r->effects = j->effects;
  r->dbg = j->dbg; /* the same program's arena */
  free(in);
  free(subst);
  free(vars);
  return r;
}

/* Traces the branches of a cond / switch on the operands' types, in the
   order given (cond: true_fun first), and joins their captured values:
   each branch's jaxpr takes all of them, the distinct ones in the order
   of their first capture (_merge_common_consts).  The jaxprs are returned
   in js[] in the order of fns, the consts in *consts. */
static int trace_branches(SrInterp *I, const char *api, int nb, SrVal **fns, const int *order, SrVal *ops,
                          SrJaxpr **js, SrVal **consts, SrVal **out_tree, SrVal **trees) {
  SrVal *caps[64] = {0};
  int *where[64] = {0};
  SrVal *merged = sr_seq(NULL, SR_V_LIST, 0);
  const SrType **ctypes = NULL;
  int ok = 1, ctypes_cap = 0;
  for (int t = 0; t < nb && ok; t++) {
    int b = order[t];
    SrVal *tree = NULL;
    sr_trace_fn_for(api); /* debug_info's traced_for: "cond" or "switch" */
    js[b] = sr_trace_body_cached(I, fns[b], ops->seq.n, ops->seq.items, SR_TRACE_BODY, &tree, &caps[b]);
    if (!js[b]) {
      ok = 0;
      break;
    }
    if (t == 0) *out_tree = sr_ref(tree);
    trees[b] = tree;
    where[b] = sr_xcalloc((size_t)caps[b]->seq.n + 1, sizeof *where[b]);
    for (int i = 0; i < caps[b]->seq.n; i++) {
      SrVal *c = caps[b]->seq.items[i];
      int k = 0;
      while (k < merged->seq.n && !same_capture(merged->seq.items[k], c)) k++;
      if (k == merged->seq.n) {
        sr_seq_push(NULL, merged, sr_ref(c));
        if (k >= ctypes_cap) ctypes = sr_xrealloc(ctypes, (size_t)(ctypes_cap = 2 * k + 8) * sizeof *ctypes);
        ctypes[k] = js[b]->invars[i]->type;
      }
      where[b][i] = k;
    }
  }
  /* the padded jaxpr lives in the same program, which js[b] holds */
  for (int b = 0; b < nb && ok; b++) js[b] = pad_consts(js[b], caps[b]->seq.n, where[b], merged->seq.n, ctypes);
  for (int b = 0; b < nb; b++) {
    sr_unref(caps[b]);
    free(where[b]);
  }
  free(ctypes);
  if (!ok) {
    for (int b = 0; b < nb; b++)
      if (js[b]) {
        sr_program_unref(js[b]->prog);
        js[b] = NULL;
      }
    sr_unref(merged);
    return -1;
  }
  *consts = merged;
  return 0;
}

/* repr(tuple(axes)) in the mesh's order: ('X',), ('X', 'Y') */
static void axes_tuple_str(SrBuf *b, const SrMesh *m, SrAxes axes) {
  int k = 0;
  sr_buf_puts(b, "(");
  for (int i = 0; i < SR_MAX_AXES; i++)
    if (axes >> i & 1) sr_buf_printf(b, k++ ? ", '%s'" : "'%s'", m && i < m->n ? m->names[i] : "?");
  sr_buf_puts(b, k == 1 ? ",)" : ")");
}

/* conditionals._check_branch_outputs on types: a1 are the outputs of
   name1 (true_fun, or branch 0), a2 those of name2. */
static void branch_type_error(SrInterp *I, const char *api, const char *name1, const char *name2, SrVal *f1, SrVal *f2,
                              SrVal *tree, const SrJaxpr *j1, const SrJaxpr *j2) {
  /* the key path (keystr) of every leaf: "[0]", "['w']", "" for a lone leaf */
  int npaths = 0;
  char **paths = NULL;
  if (tree) {
    sr_unref(sr_pytree_numbered(tree, &npaths));
    paths = sr_xcalloc((size_t)npaths + 1, sizeof *paths);
    SrBuf path = SR_BUF_INIT;
    int k2 = 0;
    sr_pytree_leaf_paths(tree, &path, paths, &k2);
    sr_buf_free(&path);
  }
  const SrMesh *m = sr_api_mesh(I);
  int total = 0, k = 0, npv = 0;
  for (uint32_t i = 0; i < j1->nout; i++) total += !typematch(j1->outvars[i]->type, j2->outvars[i]->type);
  SrBuf diffs = SR_BUF_INIT, pv = SR_BUF_INIT;
  for (uint32_t i = 0; i < j1->nout; i++) {
    const SrType *a1 = j1->outvars[i]->type, *a2 = j2->outvars[i]->type;
    if (typematch(a1, a2)) continue;
    SrBuf comp = SR_BUF_INIT;
    if ((int)i < npaths && paths[i][0]) sr_buf_printf(&comp, " at path %s", paths[i]);
    const char *c = comp.p ? comp.p : "";
    SrBuf d = SR_BUF_INIT;
    sr_buf_printf(&d, "the output of %s%s has type ", name1, c);
    sr_type_str(&d, a1, 0);
    sr_buf_printf(&d, " but the corresponding output of %s has type ", name2);
    sr_type_str(&d, a2, 0);
    /* core.aval_mismatch_extra */
    const char *mm[3];
    int nm = 0;
    int same_shape = a1->ndim == a2->ndim;
    for (int x = 0; same_shape && x < a1->ndim; x++) same_shape = a1->dims[x].size == a2->dims[x].size;
    if (a1->dtype != a2->dtype) mm[nm++] = "the dtypes do not match";
    if (!same_shape) mm[nm++] = "the shapes do not match";
    if (a1->varying != a2->varying || a1->unreduced != a2->unreduced || a1->reduced != a2->reduced)
      mm[nm++] = "the manual axis types do not match";
    if (nm == 1) sr_buf_printf(&d, ", so %s", mm[0]);
    else if (nm == 2) sr_buf_printf(&d, ", so %s, and %s", mm[0], mm[1]);
    else if (nm == 3) sr_buf_printf(&d, ", so %s, %s, and %s", mm[0], mm[1], mm[2]);
    if (total == 1) {
      d.p[0] = (char)(d.p[0] - 'a' + 'A');
      sr_buf_printf(&diffs, "%s.\n", d.p);
    } else {
      k++;
      sr_buf_printf(&diffs, "%s  * %s%s", k > 1 ? "\n" : "", d.p, k < total ? ";" : ".\n");
    }
    sr_buf_free(&d);
    /* the pcast hints, as the comprehension over (name1, a2, a1) and
       (name2, a1, a2) writes them */
    const SrType *pa[2][2] = {{a2, a1}, {a1, a2}};
    const char *pn[2] = {name1, name2};
    for (int q = 0; q < 2; q++) {
      const SrType *x1 = pa[q][0], *x2 = pa[q][1];
      if (x1->varying == x2->varying || !(x2->varying & ~x1->varying)) continue;
      SrBuf h = SR_BUF_INIT;
      sr_buf_puts(&h, "applying `jax.lax.pcast(..., ");
      axes_tuple_str(&h, m, x1->varying & ~x2->varying);
      sr_buf_printf(&h, ", to='varying')` to the output of %s%s", pn[q], c);
      if (pv.len) sr_buf_puts(&pv, "\n");
      sr_buf_printf(&pv, "%s", h.p);
      sr_buf_free(&h);
      npv++;
    }
    sr_buf_free(&comp);
  }
  SrBuf pmsg = SR_BUF_INIT;
  if (npv == 1) {
    sr_buf_printf(&pmsg, "This might be fixed by %s.\n", pv.p);
  } else if (npv > 1) {
    /* one hint a line: "  * ...;" and the last "  * ...." */
    sr_buf_puts(&pmsg, "This might be fixed by:\n");
    const char *s = pv.p;
    for (int i = 0; i < npv; i++) {
      const char *e = strchr(s, '\n');
      size_t n = e ? (size_t)(e - s) : strlen(s);
      sr_buf_printf(&pmsg, "  * %.*s%s\n", (int)n, s, i + 1 < npv ? ";" : ".");
      s = e ? e + 1 : s + n;
    }
  }
  if (npv)
    sr_buf_puts(&pmsg, "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more information.\n\n");
  sr_raise(I, "TypeError",
           "%s branches must have equal output types but they differ.\n\n%s is %s\n%s is %s\n\n%s\n%sRevise %s and/or "
           "%s so that all output types match.",
           api, name1, sr_vjp_fun_info(f1), name2, sr_vjp_fun_info(f2), diffs.p ? diffs.p : "", pmsg.p ? pmsg.p : "",
           name1, name2);
  sr_buf_free(&diffs);
  sr_buf_free(&pv);
  sr_buf_free(&pmsg);
  for (int i = 0; i < npaths; i++) free(paths[i]);
  free(paths);
}

/* pe.prune_closed_jaxpr_outputs: j with the outputs keep[i] names. */
static SrJaxpr *keep_outputs(SrJaxpr *j, const int *keep) {
  SrJaxprBuilder b;
  sr_jb_init(&b, j->prog);
  for (uint32_t i = 0; i < j->nin; i++) sr_jb_invar(&b, j->invars[i]);
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    SrEqn *n = sr_jb_eqn(&b, e->prim, e->nin, e->in, e->nout, e->out, e->nparams, e->params);
    n->off = e->off;
    n->ns = e->ns;
    n->mesh = e->mesh;
    n->loc = e->loc;
  }
  for (uint32_t i = 0; i < j->nout; i++)
    if (keep[i]) sr_jb_outvar(&b, j->outvars[i]);
  SrJaxpr *r = sr_jb_finish(&b);
  r->name = j->name;
  r->effects = j->effects;
  return r;
}

/* j with its arguments order[0..n) (indices into j's arguments; the
   others unused) and the outputs keep names (NULL: all). */
static SrJaxpr *rebuild_jaxpr(SrJaxpr *j, const int *order, int n, const int *keep) {
  SrJaxprBuilder b;
  sr_jb_init(&b, j->prog);
  for (uint32_t i = 0; i < j->nconst; i++) sr_jb_constvar(&b, j->invars[i], j->consts ? j->consts[i] : NULL);
  for (int i = 0; i < n; i++) sr_jb_invar(&b, sr_args(j)[order[i]]);
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    SrEqn *q = sr_jb_eqn(&b, e->prim, e->nin, e->in, e->nout, e->out, e->nparams, e->params);
    q->off = e->off;
    q->ns = e->ns;
    q->mesh = e->mesh;
    q->loc = e->loc;
  }
  for (uint32_t i = 0; i < j->nout; i++)
    if (!keep || keep[i]) sr_jb_outvar(&b, j->outvars[i]);
  SrJaxpr *r = sr_jb_finish(&b);
  r->name = j->name;
  r->effects = j->effects;
  return r;
}

/* pe._jaxpr_forwarding of output i: the input it is, or -1. */
static int forwarded_input(const SrJaxpr *j, uint32_t i) {
  const SrVar *v = j->outvars[i];
  if (v->kind != SR_VAR) return -1;
  for (uint32_t k = 0; k < j->nin; k++)
    if (j->invars[k] == v) return (int)k;
  return -1;
}

/* _check_branch_outputs' first check: the two branches' outputs have one
   pytree structure (equality_errors_pytreedef).  Returns 1 with JAX's
   TypeError raised. */
static int branch_struct_error(SrInterp *I, const char *api, const char *name1, const char *name2, SrVal *f1,
                               SrVal *f2, SrVal *t1, SrVal *t2) {
  SrTreeDiffs d = {0};
  sr_pytree_equality_errors(I, t1, t2, "pytree leaf", &d);
  if (d.n == 0) return 0;
  SrBuf diffs = SR_BUF_INIT;
  for (int i = 0; i < d.n; i++) {
    SrBuf c = SR_BUF_INIT;
    if (d.d[i].path[0]) sr_buf_printf(&c, " at path %s", d.d[i].path);
    const char *cp = sr_buf_str(&c);
    SrBuf x = SR_BUF_INIT;
    sr_buf_printf(&x, "%s output%s is a %s but %s output%s is a %s, so %s", name1, cp, d.d[i].thing1, name2, cp,
                  d.d[i].thing2, d.d[i].expl);
    if (d.n == 1) sr_buf_printf(&diffs, "%s.\n", x.p);
    else sr_buf_printf(&diffs, "  * %s%s", x.p, i < d.n - 2 ? ";\n\n" : i == d.n - 2 ? ";\n" : ".\n");
    sr_buf_free(&x);
    sr_buf_free(&c);
  }
  char *i1 = strdup(sr_vjp_fun_info(f1));
  sr_raise(I, "TypeError",
           "%s branch outputs must have the same pytree structure, but they differ:\n\n%s is %s\n%s is %s\n\n%s\n"
           "Revise %s and/or %s so that they have the same pytree structure.",
           api, name1, i1, name2, sr_vjp_fun_info(f2), diffs.p, name1, name2);
  free(i1);
  sr_buf_free(&diffs);
  sr_tree_diffs_free(&d);
  return 1;
}

static int same_out_types(const SrJaxpr *a, const SrJaxpr *b) {
  if (a->nout != b->nout) return 0;
  for (uint32_t i = 0; i < a->nout; i++)
    if (!typematch(a->outvars[i]->type, b->outvars[i]->type)) return 0;
  return 1;
}

/* Binds cond with index and branches (index 0 first). */
static SrVal *bind_cond(SrInterp *I, SrVal *index, int nb, SrVal **fns, SrVal *operands, const char *name,
                        SrVal *branches_platforms) {
  SrVal *ops = sr_seq(NULL, SR_V_TUPLE, 0);
  for (int i = 0; sr_is_seq(operands) && i < operands->seq.n; i++) sr_seq_push(NULL, ops, sr_ref(operands->seq.items[i]));
  SrJaxpr *js[64] = {0};
  SrVal *trees[64] = {0};
  SrVal *consts = NULL, *out_tree = NULL, *result = NULL;
  /* cond traces true_fun (index 1) first, switch its branches in order */
  int order[64];
  int is_cond = strcmp(name, "cond") == 0;
  for (int t = 0; t < nb; t++) order[t] = is_cond ? nb - 1 - t : t;
  /* jax_mutable_array_checks, under branch 0's debug info */
  SrBuf dbg = SR_BUF_INIT;
  sr_buf_printf(&dbg, "%s traced for %s", sr_vjp_fun_info(fns[0]), name);
  SrArgs na = {ops->seq.n, ops->seq.items, 0, NULL, NULL, NULL};
  int nnames = 0, anyref = 0;
  SrVal *opleaves = sr_pytree_flatten(I, ops);
  for (int i = 0; opleaves && i < opleaves->seq.n; i++) anyref |= sr_jax_is_ref(opleaves->seq.items[i]);
  /* the names only an error about a Ref operand needs */
  char **names = anyref ? sr_debug_arg_names(I, fns[0], &na, NULL, &nnames) : NULL;
  if (anyref && !names) sr_exc_clear(I);
  int refs_ok = opleaves && sr_jax_check_ref_args_named(I, (const char *const *)names, nnames, sr_buf_str(&dbg),
                                                        opleaves->seq.items, opleaves->seq.n) == 0;
  if (refs_ok && trace_branches(I, name, nb, fns, order, ops, js, &consts, &out_tree, trees) == 0) {
    for (int t = 0; t < nb && refs_ok; t++) refs_ok = sr_jax_check_returned_refs_jaxpr(I, sr_buf_str(&dbg), js[order[t]]) == 0;
    if (refs_ok)
      refs_ok = sr_jax_check_closed_refs_named(I, consts->seq.items, consts->seq.n, (const char *const *)names,
                                               nnames, sr_buf_str(&dbg), opleaves->seq.items,
                                               opleaves->seq.n) == 0;
    /* _check_branch_outputs: cond compares true_fun (index 1) with
       false_fun, switch branch 0 with each other one in turn */
    int bad = !refs_ok;
    for (int t = 1; t < nb && !bad; t++) {
      int r = is_cond ? 1 : 0, o = is_cond ? 0 : t;
      char n2[32];
      snprintf(n2, sizeof n2, "branch%d", o);
      const char *name1 = is_cond ? "true_fun" : "branch 0", *name2 = is_cond ? "false_fun" : n2;
      if (branch_struct_error(I, name, name1, name2, fns[r], fns[o], trees[r], trees[o])) bad = 1;
      else if (!same_out_types(js[r], js[o])) {
        if (js[r]->nout != js[o]->nout)
          sr_raise(I, "TypeError", "%s branch outputs must have the same pytree structure: %u and %u outputs", name,
                   js[r]->nout, js[o]->nout);
        else
          branch_type_error(I, name, name1, name2, fns[r], fns[o], out_tree, js[r], js[o]);
        bad = 1;
      }
    }
    if (!bad) {
      /* prune passthrough outputs: one every branch forwards from the
         same input is that input */
      uint32_t nout = js[0]->nout;
      int *fwd = sr_xcalloc((size_t)nout + 1, sizeof *fwd), *keep = sr_xcalloc((size_t)nout + 1, sizeof *keep);
      int nkeep = 0;
      for (uint32_t i = 0; i < nout; i++) {
        fwd[i] = forwarded_input(js[0], i);
        for (int b = 1; b < nb && fwd[i] >= 0; b++)
          if (forwarded_input(js[b], i) != fwd[i]) fwd[i] = -1;
        keep[i] = fwd[i] < 0;
        nkeep += keep[i];
      }
      SrJaxpr *pj[64];
      for (int b = 0; b < nb; b++) pj[b] = (uint32_t)nkeep == nout ? js[b] : keep_outputs(js[b], keep);
      SrVal *br = sr_seq(NULL, SR_V_TUPLE, nb);
      for (int b = 0; b < nb; b++) sr_seq_push(NULL, br, sr_jaxpr_val(NULL, pj[b]));
      SrPList ps = {0};
      sr_plist_add(&ps, "branches", br);
      if (branches_platforms) sr_plist_add(&ps, "branches_platforms", sr_ref(branches_platforms));
      SrVal *in = sr_seq(NULL, SR_V_LIST, 0);
      sr_seq_push(NULL, in, sr_ref(index));
      for (int i = 0; i < consts->seq.n; i++) sr_seq_push(NULL, in, sr_ref(consts->seq.items[i]));
      SrVal *leaves = sr_pytree_flatten(I, ops);
      for (int i = 0; leaves && i < leaves->seq.n; i++) sr_seq_push(NULL, in, sr_ref(leaves->seq.items[i]));
      sr_unref(leaves);
      const SrType **outs = sr_xcalloc((size_t)nkeep + 1, sizeof *outs);
      for (uint32_t i = 0; i < pj[0]->nout; i++) outs[i] = pj[0]->outvars[i]->type;
      SrVal *r = sr_api_bind_typed(I, SR_P_cond, in->seq.n, in->seq.items, &ps, outs, (uint32_t)nkeep);
      free(outs);
      sr_plist_free(&ps);
      if (r) {
        /* the outputs, the forwarded ones as lax.asarray(input) */
        SrVal *all = sr_seq(NULL, SR_V_LIST, (int)nout);
        int k = 0, ok = 1;
        for (uint32_t i = 0; i < nout && ok; i++) {
          if (keep[i]) {
            sr_seq_push(NULL, all, sr_ref(r->seq.items[k++]));
          } else {
            SrVal *x = lax_asarray(I, in->seq.items[1 + fwd[i]]);
            if (x) sr_seq_push(NULL, all, x);
            else ok = 0;
          }
        }
        if (ok) result = sr_pytree_unflatten(out_tree, all);
        sr_unref(all);
      }
      sr_unref(in);
      sr_unref(r);
      free(fwd);
      free(keep);
    }
    for (int b = 0; b < nb; b++) sr_program_unref(js[b]->prog);
  }
  for (int b = 0; b < nb; b++) sr_unref(trees[b]);
  sr_unref(consts);
  sr_unref(out_tree);
  sr_unref(ops);
  sr_unref(opleaves);
  if (names) sr_debug_arg_names_free(names, nnames);
  sr_buf_free(&dbg);
  return result;
}

static SrVal *lax_cond(SrInterp *I, SrArgs *a);

/* cond(pred, true_fun, false_fun, *operands, operand=...): the keyword
   form passes one operand */
static SrVal *cond_with_operand(SrInterp *I, SrArgs *a, SrVal *operand) {
  if (a->n > 3) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "if 'operand' keyword is passed then no positional operands can be passed, got operand=");
    sr_to_repr(I, &b, operand);
    sr_buf_puts(&b, " and positional operands (");
    for (int i = 3; i < a->n; i++) {
      if (i > 3) sr_buf_puts(&b, ", ");
      sr_to_repr(I, &b, a->v[i]);
    }
    sr_buf_puts(&b, a->n == 4 ? ",)" : ")");
    sr_raise(I, "TypeError", "%s", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  SrVal *v[4] = {a->v[0], a->v[1], a->v[2], operand};
  SrArgs ca = {4, v, 0, NULL, NULL, NULL};
  return lax_cond(I, &ca);
}

/* cond(pred, x_true, f_true, x_false, f_false) is
   cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false) */
static SrVal *old_cond_branch(SrInterp *I, SrArgs *a) {
  SrVal **d = sr_current_builtin(I)->data;
  if (a->n != 2) return sr_raise(I, "TypeError", "cond branch takes 2 arguments");
  SrArgs ca = {1, &a->v[d[1] ? 1 : 0], 0, NULL, NULL, NULL};
  return sr_call(I, d[0], &ca);
}

static void old_cond_free(void *p) {
  SrVal **d = p;
  sr_unref(d[0]);
  free(d);
}

static SrVal *cond_old_form(SrInterp *I, SrArgs *a) {
  SrVal **t = sr_xcalloc(2, sizeof *t), **f = sr_xcalloc(2, sizeof *f);
  t[0] = sr_ref(a->v[2]);
  t[1] = NULL;
  f[0] = sr_ref(a->v[4]);
  f[1] = (SrVal *)1;
  SrVal *tf = sr_builtin_with("<lambda>", old_cond_branch, t, old_cond_free);
  SrVal *ff = sr_builtin_with("<lambda>", old_cond_branch, f, old_cond_free);
  SrVal *v[5] = {a->v[0], tf, ff, a->v[1], a->v[3]};
  SrArgs ca = {5, v, 0, NULL, NULL, NULL};
  SrVal *r = lax_cond(I, &ca);
  sr_unref(tf);
  sr_unref(ff);
  return r;
}

/* np.shape(v) of a pred or index that is not an array: () for scalars
   and strings, numpy's shape of nested lists and tuples (their length
   when they are ragged). */
static void host_shape(SrInterp *I, SrBuf *b, SrVal *v) {
  const SrType *t = sr_value_type(I, v);
  if (t) {
    sr_shape_str(b, t);
    return;
  }
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    SrVal *x = sr_jnp_asarray(I, v, -1);
    if (x) {
      sr_shape_str(b, sr_value_type(I, x));
      sr_unref(x);
      return;
    }
    sr_exc_clear(I);
    sr_buf_printf(b, "(%d,)", v->seq.n);
    return;
  }
  sr_buf_puts(b, "()");
}

static int is_py_sequence(const SrVal *v) {
  return v->kind == SR_V_LIST || v->kind == SR_V_TUPLE || v->kind == SR_V_STR;
}

/* cond's checks of pred (conditionals.py): None, a sequence or a
   non-scalar, a type that is not boolean or a number.  Returns 0, or -1
   with JAX's TypeError raised. */
static int check_pred(SrInterp *I, SrVal *pred) {
  if (pred->kind == SR_V_NONE) return sr_raise(I, "TypeError", "cond predicate is None"), -1;
  const SrType *t = sr_value_type(I, pred);
  int seq = is_py_sequence(pred);
  if (seq || (t && t->ndim != 0) || (!t && (pred->kind == SR_V_LIST || pred->kind == SR_V_TUPLE))) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "Pred must be a scalar, got ");
    if (sr_to_str(I, &b, pred) < 0) {
      sr_buf_free(&b);
      return -1;
    }
    if (seq) {
      SrVal *ty = sr_type_of(I, pred);
      sr_buf_puts(&b, " of type ");
      if (ty) sr_to_str(I, &b, ty);
      sr_unref(ty);
    } else {
      sr_buf_puts(&b, " of shape ");
      host_shape(I, &b, pred);
      sr_buf_putc(&b, '.');
    }
    sr_raise(I, "TypeError", "%s", b.p);
    sr_buf_free(&b);
    return -1;
  }
  if (!t) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "Pred type must be either boolean or number, got ");
    if (sr_to_str(I, &b, pred) == 0) sr_raise(I, "TypeError", "%s.", b.p);
    sr_buf_free(&b);
    return -1;
  }
  int k = sr_dtype_kind(t->dtype);
  if (k != SR_DK_BOOL && k != SR_DK_INT && k != SR_DK_UINT && k != SR_DK_FLOAT)
    return sr_raise(I, "TypeError", "Pred type must be either boolean or number, got %s.", sr_dtype_name(t->dtype)), -1;
  return 0;
}

/* switch's checks of index: a scalar of an integer type. */
static int check_index(SrInterp *I, SrVal *index) {
  const SrType *t = sr_value_type(I, index);
  int nonscalar = t ? t->ndim != 0 : index->kind == SR_V_LIST || index->kind == SR_V_TUPLE;
  if (nonscalar) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "Branch index must be scalar, got ");
    if (sr_to_str(I, &b, index) == 0) {
      sr_buf_puts(&b, " of shape ");
      host_shape(I, &b, index);
      sr_raise(I, "TypeError", "%s.", b.p);
    }
    sr_buf_free(&b);
    return -1;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, "Index type must be an integer, got ");
  int rc = 0;
  if (!t || (sr_dtype_kind(t->dtype) != SR_DK_INT && sr_dtype_kind(t->dtype) != SR_DK_UINT)) {
    rc = -1;
    if (sr_to_str(I, &b, index) == 0) {
      if (!t) sr_raise(I, "TypeError", "%s.", b.p);
      else sr_raise(I, "TypeError", "%s as %s", b.p, sr_dtype_name(t->dtype));
    }
  }
  sr_buf_free(&b);
  return rc;
}

static SrVal *lax_cond(SrInterp *I, SrArgs *a) {
  for (int i = 0; i < a->nkw; i++) {
    if (strcmp(a->kw[i], "operand") != 0)
      return sr_raise(I, "TypeError", "cond() got an unexpected keyword argument '%s'", a->kw[i]);
    if (a->n >= 3) {
      SrArgs pa = {a->n, a->v, 0, NULL, NULL, NULL};
      return cond_with_operand(I, &pa, a->kwv[i]);
    }
  }
  if (a->n < 3) return sr_raise(I, "TypeError", "cond() missing required arguments: pred, true_fun, false_fun");
  if (!sr_is_callable(I, a->v[1]) || !sr_is_callable(I, a->v[2])) {
    /* the old cond(pred, x_true, f_true, x_false, f_false) */
    if (sr_is_callable(I, a->v[2]) && a->n == 5 && sr_is_callable(I, a->v[4]))
      return cond_old_form(I, a);
    return sr_raise(I, "TypeError", "lax.cond: true_fun and false_fun arguments should be callable.");
  }
  if (check_pred(I, a->v[0]) < 0) return NULL;
  SrVal *pred = arr(I, a->v[0]);
  if (!pred) return NULL;
  const SrType *t = vtype(I, pred);
  SrVal *result = NULL;
  if (t->ndim != 0) {
    SrBuf b = SR_BUF_INIT;
    sr_shape_str(&b, t);
    sr_raise(I, "TypeError", "Pred must be a scalar, got %s of shape %s.", "a value", b.p);
    sr_buf_free(&b);
  } else {
    SrVal *p = sr_ref(pred);
    if (t->dtype != SR_BOOL) {
      SrVal *z = sr_int(NULL, 0);
      SrVal *zc = sr_lax_convert(I, z, t->dtype, t->weak, NULL);
      sr_unref(p);
      p = zc ? sr_lax_binary(I, SR_P_ne, pred, zc) : NULL;
      sr_unref(z);
      sr_unref(zc);
    }
    SrArrayObj *pa = p ? sr_array_of(p) : NULL;
    if (I->jax->disable_jit && pa && pa->kind == SR_AV_CONCRETE) {
      /* the branch called as it is */
      int tv = sr_truthy(I, p);
      SrVal *ops = NULL;
      if (tv >= 0) {
        SrArgs ca = {a->n - 3, a->v + 3, 0, NULL, NULL, NULL};
        result = sr_call(I, tv ? a->v[1] : a->v[2], &ca);
      }
      sr_unref(ops);
      sr_unref(p);
      sr_unref(pred);
      return result;
    }
    SrVal *index = p ? sr_lax_convert(I, p, SR_I32, 0, NULL) : NULL;
    if (index) {
      SrVal *fns[2] = {a->v[2], a->v[1]};
      SrVal *ops = sr_seq(NULL, SR_V_TUPLE, a->n - 3);
      for (int i = 3; i < a->n; i++) sr_seq_push(NULL, ops, sr_ref(a->v[i]));
      result = bind_cond(I, index, 2, fns, ops, "cond", NULL);
      sr_unref(ops);
    }
    sr_unref(index);
    sr_unref(p);
  }
  sr_unref(pred);
  return result;
}

static SrVal *lax_switch(SrInterp *I, SrArgs *a) {
  if (a->n >= 2 && sr_is_seq(a->v[1]))
    for (int i = 0; i < a->v[1]->seq.n; i++)
      if (!sr_is_callable(I, a->v[1]->seq.items[i]))
        return sr_raise(I, "TypeError", "lax.switch: branches argument should be a sequence of callables.");
  if (a->n < 2 || !sr_is_seq(a->v[1]) || a->v[1]->seq.n > 64)
    return sr_raise(I, "TypeError", "switch(index, branches, *operands): branches must be a sequence");
  for (int i = 0; i < a->nkw; i++) {
    if (strcmp(a->kw[i], "operand") != 0)
      return sr_raise(I, "TypeError", "switch() got an unexpected keyword argument '%s'", a->kw[i]);
    if (a->n > 2) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_puts(&b, "if 'operand' keyword is passed then no positional operands can be passed, got operand=");
      sr_to_repr(I, &b, a->kwv[i]);
      sr_buf_puts(&b, " and positional operands (");
      for (int k = 2; k < a->n; k++) {
        if (k > 2) sr_buf_puts(&b, ", ");
        sr_to_repr(I, &b, a->v[k]);
      }
      sr_buf_puts(&b, a->n == 3 ? ",)" : ")");
      sr_raise(I, "TypeError", "%s", b.p);
      sr_buf_free(&b);
      return NULL;
    }
    SrVal *v[3] = {a->v[0], a->v[1], a->kwv[i]};
    SrArgs sa = {3, v, 0, NULL, NULL, NULL};
    return lax_switch(I, &sa);
  }
  if (check_index(I, a->v[0]) < 0) return NULL;
  if (a->v[1]->seq.n == 0) return sr_raise(I, "ValueError", "Empty branch sequence");
  SrVal *idx = arr(I, a->v[0]);
  if (!idx) return NULL;
  int nb = a->v[1]->seq.n;
  SrVal *result = NULL;
  SrVal *i32 = sr_lax_convert(I, idx, SR_I32, 0, NULL);
  if (nb == 1) {
    SrArgs ca = {a->n - 2, a->v + 2, 0, NULL, NULL, NULL};
    result = sr_call(I, a->v[1]->seq.items[0], &ca);
  } else if (i32 && I->jax->disable_jit && sr_array_of(i32) && sr_array_of(i32)->kind == SR_AV_CONCRETE) {
    /* branches[int(index)] called as it is, the index clamped */
    int64_t k;
    if (sr_as_int(I, i32, "index", &k) == 0) {
      k = k < 0 ? 0 : k > nb - 1 ? nb - 1 : k;
      SrArgs ca = {a->n - 2, a->v + 2, 0, NULL, NULL, NULL};
      result = sr_call(I, a->v[1]->seq.items[k], &ca);
    }
  } else if (i32) {
    SrVal *lo = sr_int(NULL, 0), *hi = sr_int(NULL, nb - 1);
    SrVal *lo32 = sr_lax_convert(I, lo, SR_I32, 0, NULL), *hi32 = sr_lax_convert(I, hi, SR_I32, 0, NULL);
    SrVal *cargs[3] = {lo32, sr_ref(i32), hi32};
    SrVal *cl = NULL;
    if (sr_auto_insert_reshard(I, 3, cargs) == 0) cl = sr_bind(I, SR_P_clamp, 3, cargs, 0, NULL);
    for (int i = 0; i < 3; i++) sr_unref(cargs[i]);
    if (cl) {
      SrVal *ops = sr_seq(NULL, SR_V_TUPLE, a->n - 2);
      for (int i = 2; i < a->n; i++) sr_seq_push(NULL, ops, sr_ref(a->v[i]));
      result = bind_cond(I, cl, nb, a->v[1]->seq.items, ops, "switch", NULL);
      sr_unref(ops);
    }
    sr_unref(cl);
    sr_unref(lo);
    sr_unref(hi);
  }
  sr_unref(i32);
  sr_unref(idx);
  return result;
}

/* lax.platform_dependent(*args, default=None, **per_platform)
   (conditionals.py): identical branches joined, platform_index of their
   platforms; a concrete index (eagerly) calls its branch, a traced one is
   a switch (no clamp) whose cond keeps branches_platforms. */
static SrVal *lax_platform_dependent(SrInterp *I, SrArgs *a) {
  SrVal *fns[64], *plats[64], *dflt = NULL;
  int nb = 0;
  for (int i = 0; i < a->nkw; i++) {
    const char *k = a->kw[i];
    SrVal *f = a->kwv[i];
    if (strcmp(k, "default") == 0) {
      dflt = f->kind == SR_V_NONE ? NULL : f;
      continue;
    }
    if (!sr_is_callable(I, f))
      return sr_raise(I, "TypeError", "lax.platform_dependent: the '%s' branch must be a callable.", k);
    if (strcmp(k, "gpu") == 0) return sr_raise(I, "ValueError", "Use 'cuda' or 'rocm' for lax.platform_dependent.");
    int j = 0;
    while (j < nb && fns[j] != f) j++;
    if (j == nb) {
      if (nb == 63) return sr_raise(I, "ValueError", "lax.platform_dependent: too many branches");
      fns[nb] = f;
      plats[nb++] = sr_seq(NULL, SR_V_TUPLE, 0);
    }
    sr_seq_push(NULL, plats[j], sr_str_cstr(NULL, k));
  }
  SrVal *bp = sr_seq(NULL, SR_V_TUPLE, nb + 1);
  for (int j = 0; j < nb; j++) sr_seq_push(NULL, bp, plats[j]);
  if (dflt) {
    if (!sr_is_callable(I, dflt)) {
      sr_unref(bp);
      return sr_raise(I, "TypeError", "lax.platform_dependent: the 'default' branch must be a callable.");
    }
    fns[nb++] = dflt;
    sr_seq_push(NULL, bp, sr_none());
  }
  SrVal *result = NULL;
  SrVal *idx = sr_bindv(I, SR_P_platform_index, 0, NULL, "platforms", sr_ref(bp), NULL);
  SrArrayObj *ia = idx ? sr_array_of(idx) : NULL;
  if (idx && ia && ia->kind == SR_AV_CONCRETE) {
    int64_t k;
    if (sr_as_int(I, idx, "platform index", &k) == 0 && k >= 0 && k < nb) {
      SrArgs ca = {a->n, a->v, 0, NULL, NULL, NULL};
      result = sr_call(I, fns[k], &ca);
    }
  } else if (idx && nb == 1) {
    SrArgs ca = {a->n, a->v, 0, NULL, NULL, NULL};
    result = sr_call(I, fns[0], &ca);
  } else if (idx) {
    SrVal *ops = sr_seq(NULL, SR_V_TUPLE, a->n);
    for (int i = 0; i < a->n; i++) sr_seq_push(NULL, ops, sr_ref(a->v[i]));
    result = bind_cond(I, idx, nb, fns, ops, "switch", bp);
    sr_unref(ops);
  }
  sr_unref(idx);
  sr_unref(bp);
  return result;
}

/* while_loop(cond_fun, body_fun, init_val) */
/* while_loop under jax.disable_jit(): cond and body called in Python,
   the carry's leaves as arrays; NULL with no exception raised when a
   value is not concrete (a vmap's tracer), for the primitive to run. */
static SrVal *while_python(SrInterp *I, SrVal *cond_fun, SrVal *body_fun, SrVal *init) {
  SrVal *val = tree_asarray(I, init);
  while (val) {
    SrArgs ca = {1, &val, 0, NULL, NULL, NULL};
    SrVal *c = sr_call(I, cond_fun, &ca);
    int t = c ? sr_truthy(I, c) : -1;
    sr_unref(c);
    if (t <= 0) {
      if (t == 0) return val;
      break;
    }
    SrVal *nv = sr_call(I, body_fun, &ca);
    sr_unref(val);
    val = nv ? tree_asarray(I, nv) : NULL;
    sr_unref(nv);
  }
  sr_unref(val);
  if (concretization_error(I)) sr_exc_clear(I);
  return NULL;
}

static SrVal *while_impl(SrInterp *I, SrVal *cond_fun, SrVal *body_fun, SrVal *init) {
  if (I->jax->disable_jit) {
    SrVal *r = while_python(I, cond_fun, body_fun, init);
    if (r || I->exc) return r;
  }
  SrVal *leaves = sr_pytree_flatten(I, init);
  if (!leaves) return NULL;
  int n = leaves->seq.n;
  SrVal *result = NULL, *ctree = NULL, *btree = NULL, *ccap = NULL, *bcap = NULL, *arg = NULL;
  const SrType **types = NULL, **otypes = NULL;
  SrJaxpr *cj = NULL, *bj = NULL;
  SrVal *like = init;
  for (int pass = 0; pass < 2; pass++) {
    free(types);
    types = leaf_types(I, leaves);
    sr_unref(arg);
    arg = sr_api_abstract_like(like, types, n);
    if (cj) sr_program_unref(cj->prog);
    if (bj) sr_program_unref(bj->prog);
    sr_unref(ctree);
    sr_unref(btree);
    sr_unref(ccap);
    sr_unref(bcap);
    ctree = btree = ccap = bcap = NULL;
    bj = NULL;
    sr_trace_fn_for("while_cond");
    cj = sr_trace_body_cached(I, cond_fun, 1, &arg, SR_TRACE_BODY, &ctree, &ccap);
    if (!cj) goto done;
    sr_trace_fn_for("while_body");
    bj = sr_trace_body_cached(I, body_fun, 1, &arg, SR_TRACE_BODY, &btree, &bcap);
    if (!bj) goto done;
    SrVal *cch = sr_pytree_children(ctree);
    sr_unref(cch);
    if (cj->nout != 1 || cch) {
      SrBuf b = SR_BUF_INIT;
      sr_vjp_treedef_str(&b, ctree);
      sr_raise(I, "TypeError", "cond_fun must return a boolean scalar, but got pytree %s.", b.p);
      sr_buf_free(&b);
      goto done;
    }
    if (cj->nout != 1 || cj->outvars[0]->type->ndim != 0 || cj->outvars[0]->type->dtype != SR_BOOL) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_putc(&b, '[');
      for (uint32_t i = 0; i < cj->nout; i++) {
        if (i) sr_buf_puts(&b, ", ");
        sr_aval_repr(&b, cj->outvars[i]->type);
      }
      sr_buf_putc(&b, ']');
      sr_raise(I, "TypeError", "cond_fun must return a boolean scalar, but got output type(s) %s.", b.p);
      sr_buf_free(&b);
      goto done;
    }
    if (carry_struct_error(I, "while_loop body", body_fun, init, btree)) goto done;
    if ((int)bj->nout != n) {
      sr_raise(I, "TypeError", "while_loop body: the carry output has %u leaves, the input %d", bj->nout, n);
      goto done;
    }
    free(otypes);
    otypes = sr_xcalloc((size_t)n + 1, sizeof *otypes);
    for (int i = 0; i < n; i++) otypes[i] = bj->outvars[i]->type;
    if (pass == 0) {
      int ch = promote_weak_carry(I, leaves, otypes);
      if (ch < 0) goto done;
      if (!ch) break;
    }
  }
  for (int i = 0; i < n; i++)
    if (!typematch(types[i], otypes[i])) {
      carry_type_error(I, "while_loop body", body_fun, arg, types, otypes, n);
      goto done;
    }
  {
    /* a carry the body passes through unchanged and the cond does not
       read becomes a body const (loops.py's move_to_const) */
    int nbc = bcap->seq.n, ncc = ccap->seq.n, nmove = 0;
    uint8_t *cused = sr_xcalloc(cj->nin + 1, 1);
    SrJaxpr *cdce = sr_ad_dce(cj, NULL, cused, 0);
    int *move = sr_xcalloc((size_t)n + 1, sizeof *move);
    for (int i = 0; i < n; i++) {
      move[i] = forwarded_input(bj, (uint32_t)i) == nbc + i && !cused[ncc + i];
      nmove += move[i];
    }
    SrJaxpr *cj2 = cj, *bj2 = bj;
    if (nmove) {
      int *order = sr_xcalloc(cdce->nin + 1, sizeof *order), k = 0;
      for (int i = 0; i < (int)cdce->nin; i++)
        if (i < ncc || !move[i - ncc]) order[k++] = i;
      cj2 = rebuild_jaxpr(cdce, order, k, NULL);
      free(order);
      int *keep = sr_xcalloc((size_t)n + 1, sizeof *keep);
      order = sr_xcalloc(bj->nin + 1, sizeof *order);
      k = 0;
      for (int i = 0; i < n; i++)
        if (move[i]) order[k++] = nbc + i;
      for (int i = 0; i < nbc; i++) order[k++] = i;
      for (int i = 0; i < n; i++) {
        keep[i] = !move[i];
        if (!move[i]) order[k++] = nbc + i;
      }
      bj2 = rebuild_jaxpr(bj, order, k, keep);
      free(order);
      free(keep);
    }
    SrPList ps = {0};
    sr_plist_add(&ps, "body_jaxpr", sr_jaxpr_val(NULL, bj2));
    sr_plist_add(&ps, "body_nconsts", sr_int(NULL, nbc + nmove));
    sr_plist_add(&ps, "cond_jaxpr", sr_jaxpr_val(NULL, cj2));
    sr_plist_add(&ps, "cond_nconsts", sr_int(NULL, ncc));
    SrVal *ops = sr_seq(NULL, SR_V_LIST, 0);
    const SrType **kt = sr_xcalloc((size_t)n + 1, sizeof *kt);
    int nk = 0;
    for (int i = 0; i < ncc; i++) sr_seq_push(NULL, ops, sr_ref(ccap->seq.items[i]));
    for (int i = 0; i < n; i++)
      if (move[i]) sr_seq_push(NULL, ops, sr_ref(leaves->seq.items[i]));
    for (int i = 0; i < nbc; i++) sr_seq_push(NULL, ops, sr_ref(bcap->seq.items[i]));
    for (int i = 0; i < n; i++)
      if (!move[i]) {
        sr_seq_push(NULL, ops, sr_ref(leaves->seq.items[i]));
        kt[nk++] = otypes[i];
      }
    SrVal *r = sr_api_bind_typed(I, SR_P_while, ops->seq.n, ops->seq.items, &ps, kt, (uint32_t)nk);
    sr_plist_free(&ps);
    sr_unref(ops);
    if (r) {
      /* pe.merge_lists(move_to_const, outs, new_body_consts) */
      SrVal *all = sr_seq(NULL, SR_V_LIST, n);
      for (int i = 0, q = 0; i < n; i++) sr_seq_push(NULL, all, sr_ref(move[i] ? leaves->seq.items[i] : r->seq.items[q++]));
      result = sr_pytree_unflatten(init, all);
      sr_unref(all);
    }
    sr_unref(r);
    free(kt);
    free(move);
    free(cused);
  }
done:
  if (cj) sr_program_unref(cj->prog);
  if (bj) sr_program_unref(bj->prog);
  free(types);
  free(otypes);
  sr_unref(arg);
  sr_unref(ctree);
  sr_unref(btree);
  sr_unref(ccap);
  sr_unref(bcap);
  sr_unref(leaves);
  return result;
}

static SrVal *lax_while_loop(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "while_loop", "cond_fun, body_fun, init_val", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0]) || !sr_is_callable(I, p[1]))
    return sr_raise(I, "TypeError", "lax.while_loop: body_fun and cond_fun arguments should be callable.");
  return while_impl(I, p[0], p[1], p[2]);
}

/* fori_loop's bodies: (i, x) -> (i + 1, body(i, x)) for scan and
   (i, upper, x) -> (i + 1, upper, body(i, x)) for while, and i < upper. */
/* api_util.debug_info("fori_loop", body_fun, (0, init_val), {}).arg_names,
   with "" after the first where upper is carried (the while_loop form) */
static char **fori_arg_names(SrInterp *I, SrVal *body_fun, SrVal *init, int upper, int *n) {
  SrVal *zero = sr_int(NULL, 0);
  SrVal *argv[2] = {zero, init};
  SrArgs a = {2, argv, 0, NULL, NULL, NULL};
  int pending = I->exc != NULL;
  char **names = sr_debug_arg_names(I, body_fun, &a, NULL, n);
  if (!pending) sr_exc_clear(I);
  sr_unref(zero);
  if (upper && *n > 0) {
    names = sr_xrealloc(names, ((size_t)*n + 2) * sizeof *names);
    memmove(names + 2, names + 1, (size_t)(*n - 1) * sizeof *names);
    names[1] = sr_xstrdup("");
    (*n)++;
  }
  return names;
}

static SrVal *fori_scan_body(SrInterp *I, SrArgs *a) {
  SrVal *body = sr_current_builtin(I)->data;
  SrVal *carry = a->v[0];
  SrVal *i = carry->seq.items[0], *x = carry->seq.items[1];
  SrVal *one = sr_int(NULL, 1);
  SrVal *addv[2] = {i, one};
  SrArgs aa = {2, addv, 0, NULL, NULL, NULL};
  SrVal *i1 = sr_call(I, sr_lookup_qualname("jax.numpy.add"), &aa);
  sr_unref(one);
  if (!i1) return NULL;
  SrVal *bv[2] = {i, x};
  SrArgs ba = {2, bv, 0, NULL, NULL, NULL};
  SrVal *nx = sr_call(I, body, &ba);
  if (!nx) {
    sr_unref(i1);
    return NULL;
  }
  SrVal *c = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, c, i1);
  sr_seq_push(NULL, c, nx);
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, r, c);
  sr_seq_push(NULL, r, sr_none());
  return r;
}

static SrVal *fori_while_body(SrInterp *I, SrArgs *a) {
  SrVal *body = sr_current_builtin(I)->data;
  SrVal *carry = a->v[0];
  SrVal *i = carry->seq.items[0], *upper = carry->seq.items[1], *x = carry->seq.items[2];
  const SrType *it = vtype(I, i);
  SrVal *one = sr_int(NULL, 1);
  SrVal *c1 = sr_lax_convert(I, one, it->dtype, it->weak, NULL);
  SrVal *i1 = c1 ? sr_lax_binary(I, SR_P_add, i, c1) : NULL;
  sr_unref(one);
  sr_unref(c1);
  if (!i1) return NULL;
  SrVal *bv[2] = {i, x};
  SrArgs ba = {2, bv, 0, NULL, NULL, NULL};
  SrVal *nx = sr_call(I, body, &ba);
  if (!nx) {
    sr_unref(i1);
    return NULL;
  }
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, 3);
  sr_seq_push(NULL, r, i1);
  sr_seq_push(NULL, r, sr_ref(upper));
  sr_seq_push(NULL, r, nx);
  return r;
}

static SrVal *fori_cond(SrInterp *I, SrArgs *a) {
  SrVal *carry = a->v[0];
  return sr_lax_binary(I, SR_P_lt, carry->seq.items[0], carry->seq.items[1]);
}

/* core.is_concrete(v) and int(v): Python ints, concrete integer scalars
   (np.int16(0), jnp.int32(10)) and literal-valued abstract ones. */
static int is_concrete_int(SrInterp *I, SrVal *v, int64_t *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = v->i;
    return 1;
  }
  SrArrayObj *a = sr_array_of(v);
  if (a && a->kind == SR_AV_ABSTRACT && a->has_value && a->type->ndim == 0 && !sr_dtype_is_inexact(a->type->dtype)) {
    *out = a->value.i;
    return 1;
  }
  if (a && a->kind == SR_AV_CONCRETE && a->type->ndim == 0 && !sr_dtype_is_inexact(a->type->dtype)) {
    if (sr_as_int(I, v, "fori_loop bound", out) == 0) return 1;
    sr_exc_clear(I);
  }
  return 0;
}

static SrVal *lax_fori_loop(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "fori_loop", "lower, upper, body_fun, init_val, *, unroll=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[2])) return sr_raise(I, "TypeError", "lax.fori_loop: body_fun argument should be callable.");
  SrVal *lo = arr(I, p[0]), *hi = lo ? arr(I, p[1]) : NULL;
  if (!hi) {
    sr_unref(lo);
    return NULL;
  }
  const SrType *lt = vtype(I, lo), *ht = vtype(I, hi);
  SrDtype dt = lt->dtype;
  SrVal *result = NULL;
  if (lt->dtype != ht->dtype) {
    int ok = 0;
    if (sr_dtype_kind(lt->dtype) == SR_DK_INT && sr_dtype_kind(ht->dtype) == SR_DK_INT) {
      if (lt->weak && !ht->weak) dt = ht->dtype, ok = 1;
      else if (!lt->weak && ht->weak) dt = lt->dtype, ok = 1;
    }
    if (!ok) {
      sr_raise(I, "TypeError", "lower and upper arguments to fori_loop must have equal types, got %s and %s",
               sr_dtype_name(lt->dtype), sr_dtype_name(ht->dtype));
      goto done;
    }
  }
  int64_t l, u;
  if (is_concrete_int(I, lo, &l) && is_concrete_int(I, hi, &u)) {
    /* the trip count is static: a scan */
    int64_t length = u - l > 0 ? u - l : 0;
    /* scan's Python loop takes no zero-length loop */
    if (I->jax->disable_jit && length == 0) {
      result = sr_ref(p[3]);
      goto done;
    }
    SrVal *body = sr_builtin_with("scanned_fun", fori_scan_body, sr_ref(p[2]), (void (*)(void *))sr_unref);
    /* _fori_scan_body_fun: body_fun's debug_info("fori_loop", body_fun,
       (0, init_val), {}), result_paths None */
    int nn = 0;
    char **names = fori_arg_names(I, p[2], p[3], 0, &nn);
    sr_trace_fn_save_debug(body, "fori_loop", p[2], names, nn, 1);
    SrVal *carry = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, carry, sr_int(NULL, l));
    sr_seq_push(NULL, carry, sr_ref(p[3]));
    SrVal *len = sr_int(NULL, length);
    SrVal *unroll = p[4] && p[4]->kind != SR_V_NONE ? p[4] : sr_bool(0);
    const char *kw[2] = {sr_intern_cstr("length"), sr_intern_cstr("unroll")};
    SrVal *kwv[2] = {len, unroll};
    SrVal *argv[3] = {body, carry, sr_none()};
    SrArgs sa = {3, argv, 2, kw, kwv, NULL};
    SrVal *r = lax_scan(I, &sa);
    if (r) result = sr_ref(r->seq.items[0]->seq.items[1]);
    sr_unref(r);
    sr_unref(len);
    sr_unref(carry);
    sr_trace_fn_unsave_debug(body);
    sr_unref(body);
  } else {
    if (p[4] && p[4]->kind != SR_V_NONE && !(p[4]->kind == SR_V_BOOL && !p[4]->i) &&
        !(p[4]->kind == SR_V_INT && p[4]->i == 1)) {
      sr_raise(I, "ValueError", "Can only use `unroll` in `fori_loop` if the loop bounds are statically known.");
      goto done;
    }
    SrVal *l2 = sr_lax_convert(I, lo, dt, lt->dtype == dt ? lt->weak : 0, NULL);
    SrVal *h2 = l2 ? sr_lax_convert(I, hi, dt, ht->dtype == dt ? ht->weak : 0, NULL) : NULL;
    if (h2) {
      SrVal *body = sr_builtin_with("while_body_fun", fori_while_body, sr_ref(p[2]), (void (*)(void *))sr_unref);
      SrVal *cond = sr_builtin_with("_fori_cond_fun", fori_cond, NULL, NULL);
      /* _fori_body_fun: the names with "" for upper */
      int nn = 0;
      char **names = fori_arg_names(I, p[2], p[3], 1, &nn);
      sr_trace_fn_save_debug(body, "fori_loop", p[2], names, nn, 0);
      SrVal *carry = sr_seq(NULL, SR_V_TUPLE, 3);
      sr_seq_push(NULL, carry, sr_ref(l2));
      sr_seq_push(NULL, carry, sr_ref(h2));
      sr_seq_push(NULL, carry, sr_ref(p[3]));
      /* while_loop's debug_info("while_cond", _fori_cond_fun, ...): its
         parameter is loop_carry */
      SrVal *leaves = sr_pytree_flatten(I, carry);
      int nc = 0;
      char **cnames = sr_xcalloc((size_t)(leaves ? leaves->seq.n : 0) + 1, sizeof *cnames);
      SrBuf path = SR_BUF_INIT;
      sr_buf_puts(&path, "loop_carry");
      if (leaves) sr_pytree_leaf_paths(carry, &path, cnames, &nc);
      else sr_exc_clear(I);
      sr_buf_free(&path);
      sr_unref(leaves);
      sr_trace_fn_save_debug(cond, "while_cond", cond, cnames, nc, 0);
      SrVal *r = while_impl(I, cond, body, carry);
      if (r) result = sr_ref(r->seq.items[2]);
      sr_unref(r);
      sr_unref(carry);
      sr_trace_fn_unsave_debug(body);
      sr_trace_fn_unsave_debug(cond);
      sr_unref(body);
      sr_unref(cond);
    }
    sr_unref(l2);
    sr_unref(h2);
  }
done:
  sr_unref(lo);
  sr_unref(hi);
  return result;
}


/* ---- registration ---- */

void sr_lax_control_flow_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.lax.scan", lax_scan, "scan(f, init, xs=None, length=None, reverse=False, unroll=1)"},
    {"jax.lax.cond", lax_cond, "cond(pred, true_fun, false_fun, *operands, operand=None)"},
    {"jax.lax.switch", lax_switch, "switch(index, branches, *operands)"},
    {"jax.lax.while_loop", lax_while_loop, "while_loop(cond_fun, body_fun, init_val)"},
    {"jax.lax.fori_loop", lax_fori_loop,
     "fori_loop(lower, upper, body_fun, init_val): a scan when the bounds are static, else a while"},
    {"jax.lax.platform_dependent", lax_platform_dependent,
     "platform_dependent(*args, default=None, **per_platform): the branch of the platform (cpu here), or default's"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  sr_lax_solves_api_init();
}
