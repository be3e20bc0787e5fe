/* vjp_api.c: first-class VJP objects (see vjp.h), their NotNeeded() and
 * NotSaveable() sentinels, saveable_args' tuple-tree flags, and
 * jax.fwd_and_bwd.
 *
 * The VJP object follows api.py: its pytree children are (args_res,
 * opaque_residuals, structured_residuals) and its aux data the function,
 * in_tree and out_tree (here the shared SrVjpAux).  Applying it
 * (_vjp3_callable) gathers the residuals -- the args_res leaf a residual
 * stands for, or the next opaque residual -- checks them, checks the
 * cotangent, and runs the transpose of the linear jaxpr (sr_ad_vjp_apply),
 * which binds into the current trace: inside jax.jit the backward pass is
 * traced, outside it runs.
 */
#include <stdlib.h>
#include <string.h>

#include "jax/numpy.h"
#include "py/lex.h"
#include "py/objects.h"
#include "core/trace.h"
#include "jax/tree_util.h"
#include "jax/vjp.h"
#include "jax/ref.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- the sentinels ---- */

static void not_needed_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "NotNeeded()");
}

static void not_saveable_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "NotSaveable()");
}

/* empty pytree nodes: no children, rebuilt as themselves */
static SrVal *sentinel_children(SrVal *self) {
  (void)self;
  return sr_seq(NULL, SR_V_LIST, 0);
}

static SrVal *sentinel_rebuild(SrVal *self, SrVal *children) {
  (void)children;
  return sr_ref(self);
}

static const SrLangOps sentinel_ops = {.tree_children = sentinel_children, .tree_rebuild = sentinel_rebuild};
const SrClass sr_not_needed_class = {"NotNeeded", NULL, not_needed_repr, NULL, &sentinel_ops};
const SrClass sr_not_saveable_class = {"NotSaveable", NULL, not_saveable_repr, NULL, &sentinel_ops};

static SrVal *not_needed_v, *not_saveable_v;

SrVal *sr_not_needed(void) { return not_needed_v; }
SrVal *sr_not_saveable(void) { return not_saveable_v; }

static int is_sentinel(const SrVal *v) {
  return sr_is_obj(v, &sr_not_needed_class) || sr_is_obj(v, &sr_not_saveable_class);
}

/* ---- structures ---- */

void sr_vjp_treedef_str(SrBuf *b, const SrVal *tree) { sr_treedef_str(b, tree, sr_pytree_children); }

/* ---- saveable_args: tuptree_flags ---- */

static int count_leaves(SrVal *v) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return 1;
  int n = 0;
  for (int i = 0; i < ch->seq.n; i++) n += count_leaves(ch->seq.items[i]);
  sr_unref(ch);
  return n;
}

static int flags_rec(SrInterp *I, SrVal *prefix, SrVal *v, const char *full_name, SrBuf *where, uint8_t *flags,
                     int *k, int nleaves) {
  if (prefix->kind == SR_V_BOOL) {
    int n = count_leaves(v);
    for (int i = 0; i < n && *k < nleaves; i++) flags[(*k)++] = prefix->i != 0;
    return 0;
  }
  /* a tuple matches any container by its number of children; a list or a
     dict only the same kind of container (a pytree prefix) */
  int tuple = prefix->kind == SR_V_TUPLE;
  int same = (prefix->kind == SR_V_LIST || prefix->kind == SR_V_DICT) && v->kind == prefix->kind;
  if (!tuple && !same) {
    SrBuf r = SR_BUF_INIT;
    sr_to_repr(I, &r, prefix);
    sr_raise(I, "ValueError",
             "%s must be a pytree prefix with bool leaves or a tuple-tree of bools (made of bools and tuples only), "
             "but %s is %s of type %s",
             full_name, sr_buf_str(where), sr_buf_str(&r), sr_val_kind_name(prefix));
    sr_buf_free(&r);
    return -1;
  }
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    sr_raise(I, "ValueError",
             "%s must form a tree prefix of the corresponding values (up to pytree node types), but %s is a tuple "
             "while the corresponding part of the values is a leaf; use a single bool there instead",
             full_name, sr_buf_str(where));
    return -1;
  }
  SrVal *pch = sr_pytree_children(prefix);
  int rc = 0;
  if (pch->seq.n != ch->seq.n) {
    sr_raise(I, "ValueError",
             "%s must form a tree prefix of the corresponding values (up to pytree node types, so containers need "
             "only match in their number of children), but %s has %d children while the corresponding container "
             "has %d",
             full_name, sr_buf_str(where), pch->seq.n, ch->seq.n);
    rc = -1;
  }
  if (rc == 0 && prefix->kind == SR_V_DICT)
    for (int i = 0; i < prefix->dict.n && rc == 0; i++)
      if (!sr_dict_get(v, prefix->dict.keys[i])) {
        sr_raise(I, "ValueError", "%s must form a tree prefix of the corresponding values, but the keys of %s differ",
                 full_name, sr_buf_str(where));
        rc = -1;
      }
  size_t at = where->len;
  for (int i = 0; i < ch->seq.n && rc == 0; i++) {
    where->len = at;
    sr_buf_printf(where, "[%d]", i);
    rc = flags_rec(I, pch->seq.items[i], ch->seq.items[i], full_name, where, flags, k, nleaves);
  }
  where->len = at;
  if (where->p) where->p[at] = 0;
  sr_unref(pch);
  sr_unref(ch);
  return rc;
}

int sr_vjp_flags(SrInterp *I, SrVal *prefix, SrVal *values, const char *name, const char *full_name, uint8_t *flags,
                 int nleaves) {
  SrBuf where = SR_BUF_INIT;
  sr_buf_puts(&where, name);
  int k = 0;
  int rc = flags_rec(I, prefix, values, full_name, &where, flags, &k, nleaves);
  sr_buf_free(&where);
  return rc;
}

const char *sr_vjp_fun_info(SrVal *fun) {
  SrFunction *f = sr_as_function(fun);
  if (f && f->code && f->code->src && f->node) {
    uint32_t line, col;
    /* co_firstlineno: a decorated def starts at its first decorator */
    const SrNode *at = f->node->kind == SR_N_DEF && f->node->n2 > 0 ? f->node->list2[0] : f->node;
    sr_src_linecol(f->code->src, at->off, &line, &col);
    char buf[512];
    snprintf(buf, sizeof buf, "%s at %s:%u", f->name, f->code->src->name, line);
    return sr_intern_cstr(buf);
  }
  const char *n = sr_builtin_name(fun);
  if (fun->kind == SR_V_JAXPR && fun->jx.jaxpr->name) n = fun->jx.jaxpr->name;
  if (f) n = f->name;
  return sr_intern_cstr(n ? n : "<unnamed function>");
}

/* ---- the VJP object ---- */

void sr_vjp_aux_unref(SrVjpAux *x) {
  if (!x || --x->rc > 0) return;
  sr_ad_linear_free(&x->lin);
  free(x->res_idx);
  free(x->res_primal);
  sr_unref(x->in_tree);
  sr_unref(x->out_tree);
  free(x);
}

static void vjp_free(void *d) {
  SrVjp *v = d;
  sr_vjp_aux_unref(v->aux);
  sr_unref(v->args_res);
  sr_unref(v->opaque);
  sr_unref(v->structured);
  free(v);
}

SrVal *sr_vjp_make(SrVjpAux *aux, SrVal *args_res, SrVal *opaque, SrVal *structured, int want_logs) {
  SrVjp *v = sr_xcalloc(1, sizeof *v);
  v->aux = aux;
  v->args_res = args_res;
  v->opaque = opaque;
  v->structured = structured;
  v->want_logs = want_logs;
  return sr_obj(&sr_vjp_class, v);
}

/* a copy sharing aux (dataclasses.replace) */
static SrVal *vjp_copy(SrVjp *v) {
  v->aux->rc++;
  return sr_vjp_make(v->aux, sr_ref(v->args_res), sr_ref(v->opaque), sr_ref(v->structured), v->want_logs);
}

static void vjp_repr(SrBuf *out, const SrVal *self) {
  const SrVjp *v = self->obj.data;
  sr_buf_printf(out, "VJP(fun=<backward pass of %s>, in_tree=", v->aux->name);
  sr_vjp_treedef_str(out, v->aux->in_tree);
  sr_buf_puts(out, ", out_tree=");
  sr_vjp_treedef_str(out, v->aux->out_tree);
  sr_buf_puts(out, ", args_res=");
  sr_val_repr(out, v->args_res);
  sr_buf_puts(out, ", opaque_residuals=");
  sr_val_repr(out, v->opaque);
  sr_buf_puts(out, ", structured_residuals=");
  sr_val_repr(out, v->structured);
  sr_buf_printf(out, ", want_logs=%s)", v->want_logs ? "True" : "False");
}

static SrVal *vjp_children(SrVal *self) {
  SrVjp *v = self->obj.data;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 3);
  sr_seq_push(NULL, l, sr_ref(v->args_res));
  sr_seq_push(NULL, l, sr_ref(v->opaque));
  sr_seq_push(NULL, l, sr_ref(v->structured));
  return l;
}

static SrVal *vjp_rebuild(SrVal *self, SrVal *ch) {
  SrVjp *v = self->obj.data;
  v->aux->rc++;
  return sr_vjp_make(v->aux, sr_ref(ch->seq.items[0]), sr_ref(ch->seq.items[1]), sr_ref(ch->seq.items[2]),
                     v->want_logs);
}

/* The message of _vjp_not_saveable_error and the like: "the argument at
   position args[0] of the differentiated function layer at f.jxr:3". */
static void arg_name(SrBuf *b, const SrVjpAux *x, int idx) {
  char **paths = sr_xcalloc((size_t)x->nleaves + 1, sizeof *paths);
  SrBuf path = SR_BUF_INIT;
  sr_buf_puts(&path, "args");
  int k = 0;
  sr_pytree_leaf_paths(x->in_tree, &path, paths, &k);
  sr_buf_free(&path);
  if (idx < k) sr_buf_printf(b, "the argument at position %s", paths[idx]);
  else sr_buf_printf(b, "the argument at position flat argument index %d", idx);
  sr_buf_printf(b, " of the differentiated function %s", x->src_info);
  for (int i = 0; i < k; i++) free(paths[i]);
  free(paths);
}

/* args_res's leaves, with the sentinels as leaves (tree_leaves with
   is_leaf); NULL after an exception. */
static void res_leaves(SrVal *v, SrVal *out) {
  if (is_sentinel(v)) {
    sr_seq_push(NULL, out, sr_ref(v));
    return;
  }
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    sr_seq_push(NULL, out, sr_ref(v));
    return;
  }
  for (int i = 0; i < ch->seq.n; i++) res_leaves(ch->seq.items[i], out);
  sr_unref(ch);
}

static int same_type(const SrType *got, const SrType *want) {
  return sr_type_equal_mod_mesh(sr_type_with_weak(got, 0), sr_type_with_weak(want, 0));
}

/* equality_errors_pytreedef for a cotangent against the output
   structure: the first difference, as JAX words it.  Returns 1 when one
   was written. */
static const char *type_word(const SrVal *v, SrBuf *tmp) {
  SrVal *ch = sr_pytree_children((SrVal *)v);
  if (!ch) return "pytree leaf";
  sr_unref(ch);
  sr_buf_reset(tmp);
  sr_buf_printf(tmp, "<class '%s'>", sr_val_kind_name(v));
  return sr_buf_str(tmp);
}

static int tree_diff(SrBuf *msg, SrBuf *path, SrVal *like, SrVal *v) {
  SrVal *lc = sr_pytree_children(like), *vc = sr_pytree_children(v);
  int r = 0;
  if (!lc && !vc) return 0;
  if (!lc || !vc || like->kind != v->kind ||
      (like->kind == SR_V_OBJ && v->kind == SR_V_OBJ && like->obj.cls != v->obj.cls)) {
    SrBuf t1 = SR_BUF_INIT, t2 = SR_BUF_INIT;
    sr_buf_printf(msg, "  * out%s was a %s in the original output, but a %s here, so their Python types differ.",
                  sr_buf_str(path), type_word(like, &t1), type_word(v, &t2));
    sr_buf_free(&t1);
    sr_buf_free(&t2);
    r = 1;
  } else if (lc->seq.n != vc->seq.n) {
    if (like->kind == SR_V_TUPLE || like->kind == SR_V_LIST)
      sr_buf_printf(msg,
                    "  * out%s was a %s of length %d in the original output, but a %s of length %d here, so the "
                    "lengths do not match.",
                    sr_buf_str(path), sr_val_kind_name(like), lc->seq.n, sr_val_kind_name(v), vc->seq.n);
    else
      sr_buf_printf(msg,
                    "  * out%s was a <class '%s'> with %d child%s in the original output, but a <class '%s'> with "
                    "%d child%s here, so the numbers of children do not match.",
                    sr_buf_str(path), sr_val_kind_name(like), lc->seq.n, lc->seq.n > 1 ? "ren" : "",
                    sr_val_kind_name(v), vc->seq.n, vc->seq.n > 1 ? "ren" : "");
    r = 1;
  } else {
    size_t at = path->len;
    for (int i = 0; i < lc->seq.n && !r; i++) {
      path->len = at;
      sr_buf_printf(path, "[%d]", i);
      r = tree_diff(msg, path, lc->seq.items[i], vc->seq.items[i]);
    }
    path->len = at;
    if (path->p) path->p[at] = 0;
  }
  sr_unref(lc);
  sr_unref(vc);
  return r;
}

/* The cotangent as the flat arrays the linear map's outputs take. */
static SrVal *ct_leaves(SrInterp *I, const SrVjpAux *x, SrVal *ct) {
  SrBuf msg = SR_BUF_INIT, path = SR_BUF_INIT;
  sr_buf_puts(&path, "");
  if (tree_diff(&msg, &path, x->out_tree, ct)) {
    sr_raise(I, "ValueError",
             "unexpected tree structure.\n\nThe argument to a VJP function returned by `jax.vjp` must match the "
             "pytree structure of the differentiated function %s.\n\nBut the tree structures differ:\n%s",
             x->src_info, sr_buf_str(&msg));
    sr_buf_free(&msg);
    sr_buf_free(&path);
    return NULL;
  }
  sr_buf_free(&msg);
  sr_buf_free(&path);
  SrVal *l = sr_pytree_flatten(I, ct);
  if (!l) return NULL;
  for (int i = 0; i < l->seq.n; i++) {
    SrVal *c = l->seq.items[i];
    const SrType *got = sr_value_type(I, c), *primal = x->lin.out_types[i];
    const SrType *want = sr_ad_ct_type(primal);
    /* api._temporary_dtype_exception: any dtype of the right shape for a
       float0 cotangent (an integer output's), which counts as zeros */
    int shape_eq = got && got->ndim == want->ndim;
    for (int d = 0; shape_eq && d < got->ndim; d++) shape_eq = got->dims[d].size == want->dims[d].size;
    if (got && want->dtype == SR_FLOAT0 && got->dtype != SR_FLOAT0 && shape_eq) {
      SrVal *z = sr_ad_zeros(I, want);
      if (!z) {
        sr_unref(l);
        return NULL;
      }
      sr_unref(l->seq.items[i]);
      l->seq.items[i] = z;
      continue;
    }
    if (!same_type(got, want)) {
      sr_raise(I, "ValueError",
               "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got %s, but expected %s because "
               "the corresponding output of the differentiated function had JAX type %s",
               sr_type_short(got), sr_type_short(want), sr_type_short(primal));
      sr_unref(l);
      return NULL;
    }
    if (!sr_array_of(c)) {
      SrVal *arr = sr_jnp_asarray(I, c, (int)want->dtype);
      if (!arr) {
        sr_unref(l);
        return NULL;
      }
      sr_unref(l->seq.items[i]);
      l->seq.items[i] = arr;
    }
  }
  return l;
}

/* The residuals in the linear jaxpr's order, checked: the args_res leaf
   or the opaque residual each one is.  A new list, or NULL. */
static SrVal *gather_residuals(SrInterp *I, SrVjp *v) {
  SrVjpAux *x = v->aux;
  SrVal *ar = sr_seq(NULL, SR_V_LIST, 0);
  res_leaves(v->args_res, ar);
  SrVal *op = sr_pytree_flatten(I, v->opaque);
  SrVal *res = NULL;
  SrBuf b = SR_BUF_INIT;
  if (!op) goto done;
  if (ar->seq.n != x->nleaves) {
    sr_raise(I, "ValueError",
             "the VJP function's args_res must mirror the arguments of the differentiated function %s: it has %d "
             "leaves (counting NotNeeded() and NotSaveable() as leaves), but the arguments have %d",
             x->src_info, ar->seq.n, x->nleaves);
    goto done;
  }
  /* _vjp_not_saveable_error: every residual still a NotSaveable() */
  int missing = 0;
  for (int r = 0; r < x->nres; r++) {
    if (!x->res_primal[r] || !sr_is_obj(ar->seq.items[x->res_idx[r]], &sr_not_saveable_class)) continue;
    sr_buf_puts(&b, missing++ ? "\n  * " : "  * ");
    arg_name(&b, x, x->res_idx[r]);
    sr_buf_putc(&b, ';');
  }
  if (missing) {
    sr_raise(I, "ValueError",
             "the VJP function was applied before restoring its not-saveable residuals.\n\nBecause `saveable_args` "
             "was passed to `jax.vjp`, some argument values that\nwould have been saved for the backward pass were "
             "instead replaced with\n`NotSaveable()` sentinels. Before the VJP function can be applied, these\nvalues "
             "must be restored, e.g. by assigning to the VJP function's `args_res`\nattribute. The values not yet "
             "restored correspond to:\n%s",
             sr_buf_str(&b));
    goto done;
  }
  int nopaque = 0;
  for (int r = 0; r < x->nres; r++) nopaque += !x->res_primal[r];
  if (op->seq.n != nopaque) {
    sr_raise(I, "ValueError", "the VJP function's opaque_residuals must hold %d arrays, but it holds %d", nopaque,
             op->seq.n);
    goto done;
  }
  res = sr_seq(NULL, SR_V_LIST, x->nres);
  const SrJaxpr *L = x->lin.jaxpr;
  for (int r = 0; r < x->nres; r++) {
    SrVal *val = x->res_primal[r] ? ar->seq.items[x->res_idx[r]] : op->seq.items[x->res_idx[r]];
    const SrType *want = sr_args(L)[r]->type, *got = NULL;
    sr_buf_reset(&b);
    if (x->res_primal[r]) arg_name(&b, x, x->res_idx[r]);
    else sr_buf_printf(&b, "opaque_residuals[%d]", x->res_idx[r]);
    if (is_sentinel(val)) {
      sr_raise(I, "ValueError",
               "the backward pass needs the value of %s, but args_res holds %s for it; restore the value the "
               "argument had",
               sr_buf_str(&b), sr_is_obj(val, &sr_not_needed_class) ? "NotNeeded()" : "NotSaveable()");
      goto fail;
    }
    got = sr_value_type(I, val);
    if (!got) {
      sr_raise(I, "TypeError", "the value restored for %s is a %s, not an array", sr_buf_str(&b),
               sr_val_kind_name(val));
      goto fail;
    }
    if (!same_type(got, want)) {
      sr_raise(I, "ValueError",
               "the value restored for %s has type %s, but the backward pass was built for %s (the same shape, dtype "
               "and sharding the forward pass saw)",
               sr_buf_str(&b), sr_type_short(got), sr_type_short(want));
      goto fail;
    }
    if (!sr_array_of(val)) {
      SrVal *arr = sr_jnp_asarray(I, val, (int)want->dtype);
      if (!arr) goto fail;
      sr_seq_push(NULL, res, arr);
    } else {
      sr_seq_push(NULL, res, sr_ref(val));
    }
  }
  goto done;
fail:
  sr_unref(res);
  res = NULL;
done:
  sr_buf_free(&b);
  sr_unref(ar);
  sr_unref(op);
  return res;
}

/* Outside a trace, a zero cotangent is a scalar literal: made a concrete
   array here, as JAX returns one. */
static SrVal *concrete_ct(SrInterp *I, SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  if (I->trace || !a || a->kind != SR_AV_ABSTRACT || !a->has_value || !sr_backend_hooks.from_scalar)
    return sr_ref(v);
  int cx = sr_dtype_kind(a->type->dtype) == SR_DK_COMPLEX;
  double re = cx ? a->value.c[0] : sr_dtype_is_inexact(a->type->dtype) ? a->value.f : (double)a->value.i;
  struct SrArray *c = sr_backend_hooks.from_scalar(I, a->type, re, cx ? a->value.c[1] : 0, a->value.i);
  return c ? sr_array_concrete(c) : sr_ref(v);
}

SrVal *sr_vjp_apply(SrInterp *I, SrVal *self, SrVal *ct) {
  SrVjp *v = self->obj.data;
  SrVjpAux *x = v->aux;
  /* args_res is a list the user may change, even to hold the VJP itself;
     the walks below recurse through it */
  if (sr_pytree_check_depth(I, self) < 0 || sr_pytree_check_depth(I, ct) < 0) return NULL;
  SrVal *res = gather_residuals(I, v);
  if (!res) return NULL;
  SrVal *cts = ct_leaves(I, x, ct);
  if (!cts) {
    sr_unref(res);
    return NULL;
  }
  SrLinear lin = x->lin;
  lin.res = res->seq.items;
  lin.nres = x->nres;
  SrVal **cin = sr_xcalloc((size_t)lin.nin + 1, sizeof *cin);
  SrVal *r = NULL;
  if (sr_ad_vjp_apply(I, &lin, cts->seq.items, cin, 1) == 0) {
    r = sr_seq(NULL, SR_V_TUPLE, x->nargs);
    SrVal *lv = sr_seq(NULL, SR_V_LIST, x->nleaves);
    for (int i = 0; i < x->nleaves; i++) sr_seq_push(NULL, lv, concrete_ct(I, cin[x->ncaptured + i]));
    SrVal *all = sr_pytree_unflatten(x->in_tree, lv);
    for (int k = 0; k < x->nargs; k++) sr_seq_push(NULL, r, sr_ref(all->seq.items[k]));
    sr_unref(all);
    sr_unref(lv);
    if (v->want_logs) {
      SrVal *pair = sr_tuple(NULL, 0, NULL);
      sr_seq_push(NULL, pair, r);
      sr_seq_push(NULL, pair, sr_dict(NULL));
      r = pair;
    }
  }
  for (int i = 0; i < lin.nin; i++) sr_unref(cin[i]);
  free(cin);
  sr_unref(cts);
  sr_unref(res);
  return r;
}

static SrVal *vjp_call(SrInterp *I, SrVal *self, SrArgs *a) {
  SrVjp *v = self->obj.data;
  if (a->nkw) return sr_raise(I, "TypeError", "VJP.__call__() got an unexpected keyword argument '%s'", a->kw[0]);
  if (a->n == 0) return sr_raise(I, "TypeError", "VJP.__call__() missing 1 required positional argument: 'out_ct'");
  if (a->n > 1)
    return sr_raise(I, "TypeError",
                    "\nThe function returned by `jax.vjp` applied to %s was called with %d arguments,\nbut functions "
                    "returned by `jax.vjp` must be called with a single argument\ncorresponding to the single value "
                    "returned by the function being differentiated\n(even if that returned value is a tuple or other "
                    "container).\n\nFor example, if we have:\n\n  def f(x):\n    return (x, x)\n  _, f_vjp = "
                    "jax.vjp(f, 1.0)\n\nthe function `f` returns a single tuple as output, and so we call `f_vjp` "
                    "with a\nsingle tuple as its argument:\n\n  x_bar, = f_vjp((2.0, 2.0))\n\nIf we instead call "
                    "`f_vjp(2.0, 2.0)`, with the values 'splatted out' as\narguments rather than in a tuple, this "
                    "error can arise.\n",
                    v->aux->name, a->n);
  return sr_vjp_apply(I, self, a->v[0]);
}

/* f_vjp.replace(**changes): dataclasses.replace */
static SrVal *vjp_replace(SrInterp *I, SrArgs *a) {
  SrVjp *v = a->self->obj.data;
  if (a->n) return sr_raise(I, "TypeError", "replace() takes 1 positional argument but %d were given", a->n + 1);
  SrVal *r = vjp_copy(v);
  SrVjp *c = r->obj.data;
  for (int k = 0; k < a->nkw; k++) {
    const char *kw = a->kw[k];
    SrVal **slot = strcmp(kw, "args_res") == 0           ? &c->args_res
                   : strcmp(kw, "opaque_residuals") == 0 ? &c->opaque
                   : strcmp(kw, "structured_residuals") == 0 ? &c->structured
                                                              : NULL;
    if (slot) {
      sr_unref(*slot);
      *slot = sr_ref(a->kwv[k]);
    } else if (strcmp(kw, "want_logs") == 0) {
      c->want_logs = sr_val_truthy(a->kwv[k]);
    } else if (strcmp(kw, "fun") == 0 || strcmp(kw, "in_tree") == 0 || strcmp(kw, "out_tree") == 0) {
      sr_unref(r);
      return sr_raise(I, "TypeError", "replace(): a VJP object's %s is fixed (it describes its backward pass)", kw);
    } else {
      sr_unref(r);
      return sr_raise(I, "TypeError", "VJP.__init__() got an unexpected keyword argument '%s'", kw);
    }
  }
  return r;
}

/* f_vjp.with_refs(*accums): a VJP whose cotangent of each primal
   argument goes where its accumulator says: added into the Refs of a Ref
   (or a pytree of Refs like the argument), returned for
   jax.ad.GradValue(), dropped for jax.ad.DontWant() or anything else.
   (JAX accumulates into the Refs inside the backward pass; here the
   cotangents are computed, then added.) */
typedef struct WithRefs {
  SrVal *vjp, *accums;
} WithRefs;

static void wr_free(void *d) {
  WithRefs *w = d;
  sr_unref(w->vjp);
  sr_unref(w->accums);
  free(w);
}

static void wr_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<VJP with refs>");
}

static int is_marker(const SrVal *v, const char *w) {
  return v->kind == SR_V_WORD && v->str.n == strlen(w) && memcmp(v->str.s, w, v->str.n) == 0;
}

static SrVal *wr_call(SrInterp *I, SrVal *self, SrArgs *a) {
  WithRefs *w = self->obj.data;
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "a VJP with refs takes the output cotangent");
  SrVal *cts = sr_vjp_apply(I, w->vjp, a->v[0]);
  if (!cts) return NULL;
  int n = sr_is_seq(cts) ? cts->seq.n : 0;
  SrVal *out = sr_seq(NULL, SR_V_TUPLE, n);
  int ok = 1;
  for (int i = 0; i < n && ok; i++) {
    SrVal *acc = i < w->accums->seq.n ? w->accums->seq.items[i] : NULL, *ct = cts->seq.items[i];
    if (acc && is_marker(acc, "GradValue()")) {
      sr_seq_push(NULL, out, sr_ref(ct));
      continue;
    }
    SrVal *al = acc && !is_marker(acc, "DontWant()") ? sr_pytree_flatten(I, acc) : NULL;
    if (acc && !al) sr_exc_clear(I);
    SrVal *cl = al ? sr_pytree_flatten(I, ct) : NULL;
    if (al && !cl) sr_exc_clear(I);
    for (int k = 0; al && cl && k < al->seq.n && k < cl->seq.n && ok; k++) {
      SrVal *r = al->seq.items[k], *c = cl->seq.items[k];
      const SrType *ct_t = sr_value_type(I, c);
      if (!sr_jax_is_ref(r) || !ct_t || ct_t->dtype == SR_FLOAT0) continue;
      /* ref[...] += ct, an addupdate (RefAccum.accum); the cotangent of
         a Ref primal is a Ref, read */
      SrVal *cv = ct_t->ref ? sr_jax_ref_get(I, c, NULL) : sr_ref(c);
      ok = cv && sr_jax_ref_addupdate(I, r, NULL, cv) == 0;
      sr_unref(cv);
    }
    sr_unref(al);
    sr_unref(cl);
    sr_seq_push(NULL, out, sr_none());
  }
  sr_unref(cts);
  if (!ok) {
    sr_unref(out);
    return NULL;
  }
  return out;
}

static const SrLangOps wr_ops = {.call = wr_call};
static const SrClass wr_class = {"VJP", wr_free, wr_repr, NULL, &wr_ops};

static SrVal *vjp_with_refs(SrInterp *I, SrArgs *a) {
  (void)I;
  WithRefs *w = malloc(sizeof *w);
  if (!w) abort();
  w->vjp = sr_ref(a->self);
  w->accums = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, w->accums, sr_ref(a->v[i]));
  return sr_obj(&wr_class, w);
}

static SrVal *bi_grad_value(SrInterp *I, SrArgs *a) {
  (void)I, (void)a;
  return sr_word(NULL, "GradValue()", 11);
}

static SrVal *bi_dont_want(SrInterp *I, SrArgs *a) {
  (void)I, (void)a;
  return sr_word(NULL, "DontWant()", 10);
}

void sr_vjp_refs_init(void) {
  sr_def("jax.ad.GradValue", bi_grad_value, "GradValue(): VJP.with_refs' accumulator that returns the cotangent");
  sr_def("jax.ad.DontWant", bi_dont_want, "DontWant(): VJP.with_refs' accumulator that drops the cotangent");
}

static SrVal *vjp_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  SrVjp *v = self->obj.data;
  SrVjpAux *x = v->aux;
  if (strcmp(name, "args_res") == 0) return sr_ref(v->args_res);
  if (strcmp(name, "opaque_residuals") == 0) return sr_ref(v->opaque);
  if (strcmp(name, "structured_residuals") == 0) return sr_ref(v->structured);
  if (strcmp(name, "want_logs") == 0) return sr_bool(v->want_logs);
  if (strcmp(name, "jaxpr") == 0) return sr_jaxpr_val(NULL, x->lin.jaxpr);
  if (strcmp(name, "out_nzs") == 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, x->lin.nout);
    for (int i = 0; i < x->lin.nout; i++) sr_seq_push(NULL, t, sr_bool(x->lin.out_nz[i]));
    return t;
  }
  if (strcmp(name, "with_logs") == 0) {
    SrVal *r = vjp_copy(v);
    ((SrVjp *)r->obj.data)->want_logs = 1;
    return r;
  }
  if (strcmp(name, "in_tree") == 0 || strcmp(name, "out_tree") == 0) {
    SrBuf b = SR_BUF_INIT;
    sr_vjp_treedef_str(&b, name[0] == 'i' ? x->in_tree : x->out_tree);
    SrVal *w = sr_word(NULL, b.p, b.len);
    sr_buf_free(&b);
    return w;
  }
  if (strcmp(name, "fun") == 0) {
    char buf[300];
    snprintf(buf, sizeof buf, "<backward pass of %s>", x->name);
    return sr_word(NULL, buf, strlen(buf));
  }
  if (strcmp(name, "replace") == 0) return sr_bound_method(self, "replace", vjp_replace);
  if (strcmp(name, "with_refs") == 0) return sr_bound_method(self, "with_refs", vjp_with_refs);
  return NULL;
}

static int vjp_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *val) {
  SrVjp *v = self->obj.data;
  SrVal **slot = strcmp(name, "args_res") == 0             ? &v->args_res
                 : strcmp(name, "opaque_residuals") == 0     ? &v->opaque
                 : strcmp(name, "structured_residuals") == 0 ? &v->structured
                                                              : NULL;
  if (slot) {
    sr_unref(*slot);
    *slot = sr_ref(val);
    return 0;
  }
  if (strcmp(name, "want_logs") == 0) {
    v->want_logs = sr_val_truthy(val);
    return 0;
  }
  if (strcmp(name, "fun") == 0 || strcmp(name, "in_tree") == 0 || strcmp(name, "out_tree") == 0)
    sr_raise(I, "AttributeError", "a VJP object's %s is fixed (it describes its backward pass)", name);
  else
    sr_raise(I, "AttributeError", "'VJP' object has no attribute '%s'", name);
  return -1;
}

static const SrLangOps vjp_ops = {
  .call = vjp_call,
  .getattr = vjp_getattr,
  .setattr = vjp_setattr,
  .tree_children = vjp_children,
  .tree_rebuild = vjp_rebuild,
};
const SrClass sr_vjp_class = {"VJP", vjp_free, vjp_repr, NULL, &vjp_ops};

/* tuptree_map's result: every container a tuple */
static SrVal *to_tuptree(SrVal *v) {
  SrVal *ch = is_sentinel(v) ? NULL : sr_pytree_children(v);
  if (!ch) return sr_ref(v);
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, ch->seq.n);
  for (int i = 0; i < ch->seq.n; i++) sr_seq_push(NULL, t, to_tuptree(ch->seq.items[i]));
  sr_unref(ch);
  return t;
}

/* A linear jaxpr whose residuals are constvars with values (an eager
   linearization captures concrete arrays that way) with them as leading
   residual arguments instead, so that every residual is a leaf. */
static void hoist_consts(SrLinear *lin) {
  SrJaxpr *L = lin->jaxpr;
  if (!L->nconst) return;
  uint32_t nc = L->nconst;
  SrVal **res = sr_xcalloc(nc + (size_t)lin->nres + 1, sizeof *res);
  SrJaxprBuilder b;
  sr_jb_init(&b, L->prog);
  for (uint32_t i = 0; i < nc; i++) {
    res[i] = sr_ref(L->consts ? L->consts[i] : NULL);
    sr_jb_invar(&b, L->invars[i]);
  }
  for (uint32_t i = 0; i < sr_nargs(L); i++) sr_jb_invar(&b, sr_args(L)[i]);
  for (uint32_t k = 0; k < L->neqn; k++) {
    const SrEqn *e = &L->eqns[k];
    {
      SrEqn *c = sr_jb_eqn(&b, e->prim, e->nin, e->in, e->nout, e->out, e->nparams, e->params);
      c->ns = e->ns;
      c->mesh = e->mesh;
    }
  }
  for (uint32_t i = 0; i < L->nout; i++) sr_jb_outvar(&b, L->outvars[i]);
  SrJaxpr *N = sr_jb_finish(&b);
  N->name = L->name;
  for (int r = 0; r < lin->nres; r++) res[nc + (uint32_t)r] = lin->res[r];
  free(lin->res);
  lin->res = res;
  lin->nres += (int)nc;
  free(lin->res_arg);
  lin->res_arg = NULL;
  lin->jaxpr = N;
}

SrVal *sr_vjp_new(SrInterp *I, SrLinear *lin, int ncaptured, SrVal **leaves, SrVal *args, SrVal *out_like,
                  const uint8_t *saveable, const char *name, const char *src_info) {
  SrVjpAux *x = sr_xcalloc(1, sizeof *x);
  x->rc = 1;
  hoist_consts(lin);
  x->lin = *lin;
  memset(lin, 0, sizeof *lin);
  x->ncaptured = ncaptured;
  x->nleaves = x->lin.nin - ncaptured;
  x->nargs = args->seq.n;
  x->name = sr_intern_cstr(name);
  x->src_info = sr_intern_cstr(src_info);
  int k = 0;
  x->in_tree = sr_pytree_numbered(args, &k);
  if (out_like) {
    k = 0;
    x->out_tree = sr_pytree_numbered(out_like, &k);
  } else if (x->lin.nout == 1) {
    x->out_tree = sr_int(NULL, 0);
  } else {
    x->out_tree = sr_seq(NULL, SR_V_TUPLE, x->lin.nout);
    for (int i = 0; i < x->lin.nout; i++) sr_seq_push(NULL, x->out_tree, sr_int(NULL, i));
  }
  /* which residuals are argument leaves (by identity, as api.py's id_map:
     the last leaf holding the value), the others opaque */
  int nres = x->lin.nres;
  x->nres = nres;
  x->res_idx = sr_xcalloc((size_t)nres + 1, sizeof *x->res_idx);
  x->res_primal = sr_xcalloc((size_t)nres + 1, 1);
  uint8_t *used = sr_xcalloc((size_t)x->nleaves + 1, 1);
  SrVal *opaque = sr_seq(NULL, SR_V_LIST, 0);
  for (int r = 0; r < nres; r++) {
    SrVal *rv = x->lin.res[r];
    int idx = -1;
    for (int i = 0; i < x->nleaves; i++)
      if (leaves[ncaptured + i] == rv) idx = i;
    if (idx >= 0) {
      x->res_primal[r] = 1;
      x->res_idx[r] = idx;
      for (int i = 0; i < x->nleaves; i++)
        if (leaves[ncaptured + i] == rv) used[i] = 1;
    } else {
      x->res_idx[r] = opaque->seq.n;
      sr_seq_push(NULL, opaque, sr_ref(rv));
    }
  }
  /* args_res: tuptree_map(keep, ...) -- containers become tuples */
  SrVal *kept = sr_seq(NULL, SR_V_LIST, x->nleaves);
  for (int i = 0; i < x->nleaves; i++) {
    SrVal *val = used[i] ? (saveable && !saveable[i] ? sr_not_saveable() : leaves[ncaptured + i]) : sr_not_needed();
    sr_seq_push(NULL, kept, sr_ref(val));
  }
  SrVal *all = sr_pytree_unflatten(x->in_tree, kept);
  SrVal *args_res = sr_seq(NULL, SR_V_LIST, x->nargs);
  for (int a = 0; a < x->nargs; a++) sr_seq_push(NULL, args_res, to_tuptree(all->seq.items[a]));
  sr_unref(all);
  sr_unref(kept);
  free(used);
  /* the residual values now live in args_res and opaque_residuals */
  for (int r = 0; r < nres; r++) sr_unref(x->lin.res[r]);
  free(x->lin.res);
  x->lin.res = NULL;
  free(x->lin.res_arg);
  x->lin.res_arg = NULL;
  x->lin.nres = 0;
  (void)I;
  return sr_vjp_make(x, args_res, opaque, sr_seq(NULL, SR_V_LIST, 0), 0);
}

/* ---- jax.fwd_and_bwd ---- */

typedef struct FwdBwd {
  SrVal *fun;
  int64_t argnums[SR_MAX_ARGNUMS];
  int nargnums, single, has_aux;
} FwdBwd;

static void fwdbwd_free(void *d) {
  FwdBwd *f = d;
  sr_unref(f->fun);
  free(f);
}

/* argnums_partial: fun with the arguments not in argnums fixed */
typedef struct Partial {
  SrVal *fun;
  SrVal *args;           /* all the arguments, a tuple */
  int64_t argnums[SR_MAX_ARGNUMS];
  int nargnums;
} Partial;

static void partial_free(void *d) {
  Partial *p = d;
  sr_unref(p->fun);
  sr_unref(p->args);
  free(p);
}

static SrVal *partial_call(SrInterp *I, SrArgs *a) {
  Partial *p = sr_current_builtin(I)->data;
  int n = p->args->seq.n;
  SrVal **v = sr_xcalloc((size_t)n + 1, sizeof *v);
  for (int i = 0; i < n; i++) v[i] = p->args->seq.items[i];
  for (int k = 0; k < p->nargnums && k < a->n; k++) v[p->argnums[k]] = a->v[k];
  SrArgs ca = {n, v, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = sr_call(I, p->fun, &ca);
  free(v);
  return r;
}

static SrVal *fwd_call(SrInterp *I, SrArgs *a) {
  FwdBwd *f = sr_current_builtin(I)->data;
  int64_t an[SR_MAX_ARGNUMS];
  if (sr_argnums_resolve(I, f->argnums, f->nargnums, a->n, an) < 0) return NULL;
  Partial *p = sr_xcalloc(1, sizeof *p);
  p->fun = sr_ref(f->fun);
  p->args = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, p->args, sr_ref(a->v[i]));
  memcpy(p->argnums, an, sizeof an);
  p->nargnums = f->nargnums;
  SrFunction *uf = sr_as_function(f->fun);
  const char *nm = uf ? uf->name : sr_builtin_name(f->fun);
  SrVal *part = sr_builtin_with(nm ? nm : "<unnamed function>", partial_call, p, partial_free);
  SrVal **v = sr_xcalloc((size_t)f->nargnums + 2, sizeof *v);
  v[0] = part;
  for (int k = 0; k < f->nargnums; k++) v[k + 1] = a->v[an[k]];
  const char *kw[1] = {sr_intern_cstr("has_aux")};
  SrVal *kwv[1] = {sr_bool(f->has_aux)};
  SrArgs va = {f->nargnums + 1, v, 1, kw, kwv, NULL};
  SrVal *r = sr_call(I, sr_lookup_qualname("jax.vjp"), &va);
  free(v);
  sr_unref(part);
  return r;
}

static SrVal *bwd_call(SrInterp *I, SrArgs *a) {
  FwdBwd *f = sr_current_builtin(I)->data;
  SrVal *p[2];
  if (sr_args_parse(I, a, "bwd", "f_vjp, outgrad", p) < 0) return NULL;
  SrVal *g = sr_call1(I, p[0], p[1]);
  if (!g || !f->single) return g;
  SrVal *g0 = sr_is_seq(g) && g->seq.n ? sr_ref(g->seq.items[0]) : sr_ref(g);
  sr_unref(g);
  return g0;
}

static SrVal *jax_fwd_and_bwd(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "fwd_and_bwd", "fun, argnums, has_aux=, jitted=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_val_kind_name(p[0]));
  FwdBwd *fw = sr_xcalloc(1, sizeof *fw), *bw = sr_xcalloc(1, sizeof *bw);
  if (sr_argnums_parse(I, p[1], fw->argnums, &fw->nargnums, &fw->single) < 0) {
    free(fw);
    free(bw);
    return NULL;
  }
  fw->has_aux = p[2] && sr_val_truthy(p[2]);
  fw->fun = sr_ref(p[0]);
  *bw = *fw;
  sr_ref(bw->fun);
  SrVal *fwd = sr_builtin_with("fwd", fwd_call, fw, fwdbwd_free);
  SrVal *bwd = sr_builtin_with("bwd", bwd_call, bw, fwdbwd_free);
  if (!p[3] || sr_val_truthy(p[3])) {
    SrVal *jit = sr_lookup_qualname("jax.jit");
    SrVal *jf = sr_call1(I, jit, fwd), *jb = jf ? sr_call1(I, jit, bwd) : NULL;
    sr_unref(fwd);
    sr_unref(bwd);
    if (!jb) {
      sr_unref(jf);
      return NULL;
    }
    fwd = jf;
    bwd = jb;
  }
  SrVal *r = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, r, fwd);
  sr_seq_push(NULL, r, bwd);
  return r;
}

/* jax._src.api.NotNeeded() / NotSaveable(): the sentinels (also the
   classes isinstance checks against: the builtins are named as them) */
static SrVal *bi_not_needed(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "NotNeeded", "", NULL) < 0) return NULL;
  return sr_ref(not_needed_v);
}

static SrVal *bi_not_saveable(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "NotSaveable", "", NULL) < 0) return NULL;
  return sr_ref(not_saveable_v);
}

void sr_vjp_api_init(void) {
  sr_register("jax._src.api.NotNeeded", sr_builtin_with("NotNeeded", bi_not_needed, NULL, NULL));
  sr_register("jax._src.api.NotSaveable", sr_builtin_with("NotSaveable", bi_not_saveable, NULL, NULL));
  if (!not_needed_v) {
    not_needed_v = sr_obj(&sr_not_needed_class, NULL);
    not_saveable_v = sr_obj(&sr_not_saveable_class, NULL);
  }
  sr_custom_vjp_init();
  sr_custom_jvp_init();
  sr_custom_vmap_init();
  sr_vjp_io_init();
  sr_def("jax.fwd_and_bwd", jax_fwd_and_bwd,
         "fwd_and_bwd(fun, argnums, has_aux=False, jitted=True): (fwd, bwd), separately jitted forward and "
         "backward passes: fwd(*args) = (out, f_vjp), bwd(f_vjp, out_ct) = the argnums' cotangents");
}
