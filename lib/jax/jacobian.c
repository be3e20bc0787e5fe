/* jacobian.c: jax.jacfwd, jax.jacrev, jax.jacobian and jax.hessian
 * (api.py), built as JAX builds them on vmap: jacfwd maps jax.jvp over
 * the standard basis of the differentiated arguments (_std_basis) and
 * puts the basis axis last; jacrev maps the pullback of jax.vjp over the
 * standard basis of the outputs; _jacfwd_unravel / _jacrev_unravel split
 * the flat axis back into the arguments' and outputs' structure; hessian
 * is jacfwd(jacrev(f)).  The pieces are the registered built-ins
 * themselves (jax.vmap, jax.jvp, jax.vjp, jax.numpy.eye), called as
 * api.py calls them, so the jaxprs are those of the same calls.
 */
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/api.h"
#include "jax/array_methods.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "jax/vjp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- calling the built-ins ---- */

static SrVal *call_builtin(SrInterp *I, const char *qualname, int n, SrVal **v, int nkw, const char **kw,
                           SrVal **kwv) {
  SrVal *f = sr_lookup_qualname(qualname);
  if (!f) return sr_raise(I, "RuntimeError", "internal error: no built-in %s", qualname);
  SrArgs a = {n, v, nkw, kw, kwv, NULL};
  return sr_call(I, f, &a);
}

/* ---- argnums_partial: fun of the differentiated arguments only ---- */

typedef struct Part {
  SrVal *fun, *args; /* args: the call's positional arguments (a tuple) */
  int64_t an[SR_MAX_ARGNUMS];
  int nan, nkw;
  const char **kw;
  SrVal **kwv;
} Part;

static void part_free(void *d) {
  Part *p = d;
  sr_unref(p->fun);
  sr_unref(p->args);
  for (int i = 0; i < p->nkw; i++) sr_unref(p->kwv[i]);
  free(p->kw);
  free(p->kwv);
  free(p);
}

static SrVal *part_call(SrInterp *I, SrArgs *a) {
  Part *p = sr_current_builtin(I)->data;
  if (a->n != p->nan || a->nkw)
    return sr_raise(I, "TypeError", "the partial function takes %d positional arguments, %d given", p->nan, a->n);
  int n = p->args->seq.n;
  SrVal **v = sr_xcalloc((size_t)n + 1, sizeof *v);
  for (int i = 0; i < n; i++) v[i] = p->args->seq.items[i];
  for (int k = 0; k < p->nan; k++) v[p->an[k]] = a->v[k];
  SrArgs ca = {n, v, p->nkw, p->kw, p->kwv, NULL};
  SrVal *r = sr_call(I, p->fun, &ca);
  free(v);
  return r;
}

static SrVal *part_new(SrVal *fun, SrArgs *a, const int64_t *an, int nan) {
  Part *p = sr_xcalloc(1, sizeof *p);
  p->fun = sr_ref(fun);
  p->args = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, p->args, sr_ref(a->v[i]));
  memcpy(p->an, an, (size_t)nan * sizeof *an);
  p->nan = nan;
  p->nkw = a->nkw;
  p->kw = sr_xcalloc((size_t)a->nkw + 1, sizeof *p->kw);
  p->kwv = sr_xcalloc((size_t)a->nkw + 1, sizeof *p->kwv);
  for (int i = 0; i < a->nkw; i++) {
    p->kw[i] = a->kw[i];
    p->kwv[i] = sr_ref(a->kwv[i]);
  }
  return sr_builtin_with(sr_callable_name(fun), part_call, p, part_free);
}

/* ---- the standard basis and unravelling ---- */

static int64_t type_size(const SrType *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->dims[d].size;
  return n;
}

/* The sharding _possible_downcast casts a part to (its spec is what
   _std_basis, _jacfwd_unravel and _jacrev_unravel give): the leaf's own
   dims sharded as the leaf is (the standard basis) or not at all (the
   others, whose other dims keep arr's sharding), over the example's
   mesh.  NULL (no cast) where that mesh is empty; JAX casts there too,
   to a NamedSharding of the empty abstract mesh, an equation that
   changes nothing and that shardrepl leaves out. */
static SrVal *part_sharding(SrInterp *I, const SrType *pt, const SrType *at, int axis, const SrType *lt,
                            const SrType *et, int basis) {
  const SrMesh *m = et->mesh && et->mesh->n ? et->mesh : NULL;
  if (!m || pt->ndim != at->ndim - 1 + lt->ndim) return NULL;
  SrTypeBuilder tb;
  sr_type_builder(&tb, pt);
  tb.mesh = m;
  for (int d = 0; d < tb.ndim; d++) {
    const SrDim *src = NULL;
    if (d < axis) src = basis ? NULL : &at->dims[d];
    else if (d < axis + lt->ndim) src = basis ? &lt->dims[d - axis] : NULL;
    else src = basis ? NULL : &at->dims[d - lt->ndim + 1];
    tb.dims[d].nax = src && (at->mesh == m || basis) ? src->nax : 0;
    for (int k = 0; k < tb.dims[d].nax; k++) tb.dims[d].ax[k] = src->ax[k];
  }
  return sr_type_sharding(I, sr_type_get(&tb));
}

/* _unravel_array_into_pytree: arr's axis split into the leaves of
   pytree, each part reshaped to arr's shape with the leaf's shape in
   place of the axis, and cast to the dtype of the leaf (example NULL) or
   of example (_possible_downcast). */
static SrVal *unravel(SrInterp *I, SrVal *pytree, int axis, SrVal *example, SrVal *arr) {
  SrVal *leaves = sr_pytree_flatten(I, pytree);
  if (!leaves) return NULL;
  const SrType *at = sr_value_type(I, arr);
  int n = leaves->seq.n, nd = at->ndim;
  axis = ((axis % nd) + nd) % nd;
  int64_t *sizes = sr_xcalloc((size_t)n + 1, sizeof *sizes);
  for (int i = 0; i < n; i++) sizes[i] = type_size(sr_value_type(I, leaves->seq.items[i]));
  SrVal *parts = sr_bindv(I, SR_P_split, 1, &arr, "sizes", sr_int_tuple(sizes, n), "axis", sr_int(NULL, axis), NULL);
  free(sizes);
  SrVal *out = parts ? sr_seq(NULL, SR_V_LIST, n) : NULL;
  for (int i = 0; out && i < n; i++) {
    SrVal *leaf = leaves->seq.items[i];
    const SrType *lt = sr_value_type(I, leaf), *et = example ? sr_value_type(I, example) : lt;
    int64_t shape[SR_MAX_RANK];
    int k = 0;
    for (int d = 0; d < axis; d++) shape[k++] = at->dims[d].size;
    for (int d = 0; d < lt->ndim && k < SR_MAX_RANK; d++) shape[k++] = lt->dims[d].size;
    for (int d = axis + 1; d < nd && k < SR_MAX_RANK; d++) shape[k++] = at->dims[d].size;
    SrVal *r = sr_lax_reshape(I, parts->seq.items[i], shape, k, NULL);
    SrVal *sh = r ? part_sharding(I, sr_value_type(I, r), at, axis, lt, et, example == NULL) : NULL;
    SrVal *c = r ? sr_lax_convert(I, r, et->dtype, et->weak, sh) : NULL;
    sr_unref(sh);
    sr_unref(r);
    if (!c) {
      sr_unref(out);
      out = NULL;
      break;
    }
    sr_seq_push(NULL, out, c);
  }
  SrVal *res = out ? sr_pytree_unflatten(pytree, out) : NULL;
  sr_unref(out);
  sr_unref(parts);
  sr_unref(leaves);
  return res;
}

/* _std_basis: the identity over all of pytree's elements, unravelled
   along axis 1 into pytree's structure. */
static SrVal *std_basis(SrInterp *I, SrVal *pytree) {
  SrVal *leaves = sr_pytree_flatten(I, pytree);
  if (!leaves) return NULL;
  int64_t n = 0;
  for (int i = 0; i < leaves->seq.n; i++) {
    const SrType *t = sr_value_type(I, leaves->seq.items[i]);
    if (!t) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, leaves->seq.items[i]);
      sr_raise(I, "TypeError", "Argument '%s' of type <class '%s'> is not a valid JAX type.", sr_buf_str(&b),
               sr_val_kind_name(leaves->seq.items[i]));
      sr_buf_free(&b);
      sr_unref(leaves);
      return NULL;
    }
    n += type_size(t);
  }
  int weak;
  SrDtype dt = sr_jnp_result_dtype(I, leaves->seq.n, leaves->seq.items, &weak);
  sr_unref(leaves);
  SrVal *nv = sr_int(NULL, n), *dv = sr_dtype_val(NULL, dt);
  const char *kw[] = {sr_intern_cstr("dtype")};
  SrVal *eye = call_builtin(I, "jax.numpy.eye", 1, &nv, 1, kw, &dv);
  sr_unref(nv);
  sr_unref(dv);
  if (!eye) return NULL;
  SrVal *r = unravel(I, pytree, 1, NULL, eye);
  sr_unref(eye);
  /* _insert_pvary: inside a shard_map with check_vma each basis leaf
     varies as pytree's leaf does */
  if (!r || !I->jax->check_vma) return r;
  SrVal *bl = sr_pytree_flatten(I, r), *pl = sr_pytree_flatten(I, pytree);
  const SrMesh *m = sr_api_mesh(I);
  int ok = bl && pl && bl->seq.n == pl->seq.n;
  for (int i = 0; ok && i < bl->seq.n; i++) {
    const SrType *lt = sr_value_type(I, pl->seq.items[i]), *bt = sr_value_type(I, bl->seq.items[i]);
    SrAxes need = lt && bt ? sr_api_axes_on(lt, lt->varying, m) & ~sr_api_axes_on(bt, bt->varying, m) : 0;
    if (!need) continue;
    SrVal *v = sr_lax_pvary(I, bl->seq.items[i], need);
    if (!v) {
      ok = 0;
      break;
    }
    sr_unref(bl->seq.items[i]);
    bl->seq.items[i] = v;
  }
  SrVal *out = ok ? sr_pytree_unflatten(r, bl) : NULL;
  sr_unref(bl);
  sr_unref(pl);
  sr_unref(r);
  return out;
}

/* tree_transpose(outer, inner, tree): a tree of outer's structure whose
   leaves are trees of inner's becomes inner's of outer's. */
static SrVal *tree_transpose(SrInterp *I, SrVal *outer, SrVal *inner, SrVal *tree) {
  SrVal *ol = sr_pytree_flatten(I, outer), *il = sr_pytree_flatten(I, inner);
  if (!ol || !il) {
    sr_unref(ol);
    sr_unref(il);
    return NULL;
  }
  int no = ol->seq.n, ni = il->seq.n;
  /* tree's subtrees at outer's leaves, in leaf order (a walk of the two
     side by side, children pushed last to first) */
  SrVal *subs = sr_seq(NULL, SR_V_LIST, no), *res = NULL;
  SrVal *todo_t = sr_seq(NULL, SR_V_LIST, 0), *todo_o = sr_seq(NULL, SR_V_LIST, 0);
  sr_seq_push(NULL, todo_t, sr_ref(tree));
  sr_seq_push(NULL, todo_o, sr_ref(outer));
  int ok = 1;
  while (ok && todo_t->seq.n) {
    SrVal *t = todo_t->seq.items[--todo_t->seq.n], *o = todo_o->seq.items[--todo_o->seq.n];
    SrVal *oc = sr_pytree_children(o);
    if (!oc) {
      sr_seq_push(NULL, subs, t);
      sr_unref(o);
      continue;
    }
    SrVal *tc = sr_pytree_children(t);
    ok = tc && tc->seq.n == oc->seq.n;
    for (int i = ok ? oc->seq.n - 1 : -1; i >= 0; i--) {
      sr_seq_push(NULL, todo_t, sr_ref(tc->seq.items[i]));
      sr_seq_push(NULL, todo_o, sr_ref(oc->seq.items[i]));
    }
    sr_unref(tc);
    sr_unref(oc);
    sr_unref(t);
    sr_unref(o);
  }
  SrVal **cols = sr_xcalloc((size_t)no + 1, sizeof *cols);
  for (int i = 0; ok && i < no; i++) {
    cols[i] = sr_pytree_flatten(I, subs->seq.items[i]);
    ok = cols[i] && cols[i]->seq.n == ni;
  }
  if (ok) {
    SrVal *outs = sr_seq(NULL, SR_V_LIST, ni);
    for (int j = 0; j < ni; j++) {
      SrVal *row = sr_seq(NULL, SR_V_LIST, no);
      for (int i = 0; i < no; i++) sr_seq_push(NULL, row, sr_ref(cols[i]->seq.items[j]));
      sr_seq_push(NULL, outs, sr_pytree_unflatten(outer, row));
      sr_unref(row);
    }
    res = sr_pytree_unflatten(inner, outs);
    sr_unref(outs);
  } else if (!I->exc) {
    sr_raise(I, "TypeError", "Tree structure mismatch in tree_transpose");
  }
  for (int i = 0; i < no; i++) sr_unref(cols[i]);
  free(cols);
  sr_unref(todo_t);
  sr_unref(todo_o);
  sr_unref(subs);
  sr_unref(ol);
  sr_unref(il);
  return res;
}

/* ---- dtype checks ---- */

/* _check_input_dtype_jacfwd / _check_input_dtype_revderiv("jacrev") */
static int check_inputs(SrInterp *I, SrVal *dyn, int rev, int holomorphic, int allow_int) {
  SrVal *l = sr_pytree_flatten(I, dyn);
  if (!l) return -1;
  int rc = 0;
  for (int i = 0; i < l->seq.n && rc == 0; i++) {
    const SrType *t = sr_value_type(I, l->seq.items[i]);
    if (!t) {
      /* dispatch.check_arg */
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, l->seq.items[i]);
      sr_raise(I, "TypeError", "Argument '%s' of type <class '%s'> is not a valid JAX type.", sr_buf_str(&b),
               sr_val_kind_name(l->seq.items[i]));
      sr_buf_free(&b);
      rc = -1;
      break;
    }
    int k = sr_dtype_kind(t->dtype);
    const char *dn = sr_dtype_name(t->dtype);
    if (!rev) {
      if (k == SR_DK_OTHER) rc = -1, sr_raise(I, "TypeError", "jacfwd with input element type %s", dn);
      else if (holomorphic && k != SR_DK_COMPLEX)
        rc = -1, sr_raise(I, "TypeError",
                          "jacfwd with holomorphic=True requires inputs with complex dtype, but got %s.", dn);
      else if (!holomorphic && k != SR_DK_FLOAT)
        rc = -1, sr_raise(I, "TypeError",
                          "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
                          "got %s. For holomorphic differentiation, pass holomorphic=True. For differentiation of "
                          "non-holomorphic functions involving complex inputs or integer inputs, use jax.jvp "
                          "directly.",
                          dn);
    } else {
      if (holomorphic && k != SR_DK_COMPLEX)
        rc = -1, sr_raise(I, "TypeError",
                          "jacrev with holomorphic=True requires inputs with complex dtype, but got %s.", dn);
      else if ((k == SR_DK_OTHER || k == SR_DK_INT || k == SR_DK_UINT || k == SR_DK_BOOL) && !allow_int)
        rc = -1, sr_raise(I, "TypeError",
                          "jacrev requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                          "np.inexact), but got %s. If you want to use Boolean- or integer-valued inputs, use vjp "
                          "or set allow_int to True.",
                          dn);
    }
  }
  sr_unref(l);
  return rc;
}

/* _check_output_dtype_jacfwd / _check_output_dtype_revderiv("jacrev") */
static int check_outputs(SrInterp *I, SrVal *y, int rev, int holomorphic) {
  SrVal *l = sr_pytree_flatten(I, y);
  if (!l) return -1;
  int rc = 0;
  for (int i = 0; i < l->seq.n && rc == 0; i++) {
    const SrType *t = sr_value_type(I, l->seq.items[i]);
    if (!t) continue;
    int k = sr_dtype_kind(t->dtype);
    const char *dn = sr_dtype_name(t->dtype), *api = rev ? "jacrev" : "jacfwd";
    if (rev && k == SR_DK_OTHER) rc = -1, sr_raise(I, "TypeError", "jacrev with output element type %s", dn);
    else if (holomorphic && k != SR_DK_COMPLEX)
      rc = -1, sr_raise(I, "TypeError", "%s with holomorphic=True requires outputs with complex dtype, but got %s.",
                        api, dn);
    else if (rev && !holomorphic && k == SR_DK_COMPLEX)
      rc = -1, sr_raise(I, "TypeError",
                        "jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
                        "got %s. For holomorphic differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use jax.vjp directly.",
                        dn);
    else if (rev && !holomorphic && k != SR_DK_FLOAT)
      rc = -1, sr_raise(I, "TypeError",
                        "jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
                        "got %s. For differentiation of functions with integer outputs, use jax.vjp directly.",
                        dn);
  }
  sr_unref(l);
  return rc;
}

/* ---- jacfwd and jacrev ---- */

typedef struct Jac {
  SrVal *fun;
  int64_t argnums[SR_MAX_ARGNUMS];
  int nargnums, single;
  int has_aux, holomorphic, allow_int, rev;
} Jac;

static void jac_free(void *d) {
  Jac *j = d;
  sr_unref(j->fun);
  free(j);
}

/* jacfwd's pushfwd: partial(_jvp, f_partial, dyn_args, has_aux) */
typedef struct Push {
  SrVal *f, *dyn;
  int has_aux;
} Push;

static void push_free(void *d) {
  Push *p = d;
  sr_unref(p->f);
  sr_unref(p->dyn);
  free(p);
}

static SrVal *push_call(SrInterp *I, SrArgs *a) {
  Push *p = sr_current_builtin(I)->data;
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "pushfwd takes one argument");
  SrVal *v[3] = {p->f, p->dyn, a->v[0]}, *aux = sr_bool(p->has_aux);
  const char *kw[] = {sr_intern_cstr("has_aux")};
  SrVal *r = call_builtin(I, "jax.jvp", 3, v, 1, kw, &aux);
  sr_unref(aux);
  return r;
}

static SrVal *vmapped(SrInterp *I, SrVal *f, SrVal *out_axes, SrVal *arg) {
  const char *kw[] = {sr_intern_cstr("out_axes")};
  SrVal *vm = call_builtin(I, "jax.vmap", 1, &f, out_axes ? 1 : 0, kw, &out_axes);
  if (!vm) return NULL;
  SrVal *r = sr_call1(I, vm, arg);
  sr_unref(vm);
  return r;
}

static SrVal *jacfwd_impl(SrInterp *I, Jac *jc, SrVal *f, SrVal *dyn) {
  Push *p = sr_xcalloc(1, sizeof *p);
  p->f = sr_ref(f);
  p->dyn = sr_ref(dyn);
  p->has_aux = jc->has_aux;
  SrVal *push = sr_builtin_with("_jvp", push_call, p, push_free);
  SrVal *basis = std_basis(I, dyn), *res = NULL, *out = NULL;
  SrVal *oa = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, oa, sr_none());
  sr_seq_push(NULL, oa, sr_int(NULL, -1));
  if (jc->has_aux) sr_seq_push(NULL, oa, sr_none());
  if (basis) res = vmapped(I, push, oa, basis);
  if (res && (!sr_is_seq(res) || res->seq.n != 2 + jc->has_aux)) {
    sr_raise(I, "TypeError", "expected function with aux output to return a two-element tuple");
    sr_unref(res);
    res = NULL;
  }
  if (res && check_outputs(I, res->seq.items[0], 0, jc->holomorphic) == 0) {
    SrVal *y = res->seq.items[0], *jac = res->seq.items[1];
    SrVal *example = jc->single ? dyn->seq.items[0] : dyn;
    SrVal *yl = sr_pytree_flatten(I, y), *jl = yl ? sr_pytree_flatten(I, jac) : NULL;
    if (yl && jl && yl->seq.n == jl->seq.n) {
      SrVal *parts = sr_seq(NULL, SR_V_LIST, yl->seq.n);
      for (int i = 0; i < yl->seq.n && parts; i++) {
        SrVal *u = unravel(I, example, -1, yl->seq.items[i], jl->seq.items[i]);
        if (!u) {
          sr_unref(parts);
          parts = NULL;
        } else {
          sr_seq_push(NULL, parts, u);
        }
      }
      if (parts) {
        SrVal *tree = sr_pytree_unflatten(y, parts);
        sr_unref(parts);
        if (jc->has_aux) {
          out = sr_tuple(NULL, 0, NULL);
          sr_seq_push(NULL, out, tree);
          sr_seq_push(NULL, out, sr_ref(res->seq.items[2]));
        } else {
          out = tree;
        }
      }
    }
    sr_unref(yl);
    sr_unref(jl);
  }
  sr_unref(res);
  sr_unref(oa);
  sr_unref(basis);
  sr_unref(push);
  return out;
}

static SrVal *jacrev_impl(SrInterp *I, Jac *jc, SrVal *f, SrVal *dyn) {
  int n = dyn->seq.n + 1;
  SrVal **v = sr_xcalloc((size_t)n + 1, sizeof *v), *aux = sr_bool(jc->has_aux), *out = NULL;
  v[0] = f;
  for (int i = 1; i < n; i++) v[i] = dyn->seq.items[i - 1];
  const char *kw[] = {sr_intern_cstr("has_aux")};
  SrVal *r = call_builtin(I, "jax.vjp", n, v, 1, kw, &aux);
  free(v);
  sr_unref(aux);
  if (!r) return NULL;
  SrVal *y = r->seq.items[0], *pullback = r->seq.items[1];
  SrVal *basis = NULL, *jac = NULL;
  if (check_outputs(I, y, 1, jc->holomorphic) == 0 && (basis = std_basis(I, y)) != NULL)
    jac = vmapped(I, pullback, NULL, basis);
  if (jac) {
    SrVal *example = jc->single ? dyn->seq.items[0] : dyn;
    SrVal *jj = jc->single ? jac->seq.items[0] : jac;
    SrVal *el = sr_pytree_flatten(I, example), *jl = el ? sr_pytree_flatten(I, jj) : NULL;
    SrVal *parts = el && jl && el->seq.n == jl->seq.n ? sr_seq(NULL, SR_V_LIST, el->seq.n) : NULL;
    for (int i = 0; parts && i < el->seq.n; i++) {
      SrVal *u = unravel(I, y, 0, el->seq.items[i], jl->seq.items[i]);
      if (!u) {
        sr_unref(parts);
        parts = NULL;
      } else {
        sr_seq_push(NULL, parts, u);
      }
    }
    if (parts) {
      SrVal *tree = sr_pytree_unflatten(example, parts);
      SrVal *t = tree_transpose(I, example, y, tree);
      sr_unref(tree);
      if (t && jc->has_aux) {
        out = sr_tuple(NULL, 0, NULL);
        sr_seq_push(NULL, out, t);
        sr_seq_push(NULL, out, sr_ref(r->seq.items[2]));
      } else {
        out = t;
      }
    }
    sr_unref(parts);
    sr_unref(el);
    sr_unref(jl);
  }
  sr_unref(jac);
  sr_unref(basis);
  sr_unref(r);
  return out;
}

static SrVal *jac_call(SrInterp *I, SrArgs *a) {
  Jac *jc = sr_current_builtin(I)->data;
  int64_t an[SR_MAX_ARGNUMS];
  if (sr_argnums_resolve(I, jc->argnums, jc->nargnums, a->n, an) < 0) return NULL;
  SrVal *dyn = sr_tuple(NULL, 0, NULL);
  for (int k = 0; k < jc->nargnums; k++) sr_seq_push(NULL, dyn, sr_ref(a->v[an[k]]));
  SrVal *out = NULL;
  if (check_inputs(I, dyn, jc->rev, jc->holomorphic, jc->allow_int) == 0) {
    SrVal *f = part_new(jc->fun, a, an, jc->nargnums);
    out = jc->rev ? jacrev_impl(I, jc, f, dyn) : jacfwd_impl(I, jc, f, dyn);
    sr_unref(f);
  }
  sr_unref(dyn);
  return out;
}

static SrVal *jac_new(SrInterp *I, SrVal *fun, SrVal *argnums, int has_aux, int holomorphic, int allow_int,
                      int rev) {
  Jac *jc = sr_xcalloc(1, sizeof *jc);
  if (sr_argnums_parse(I, argnums, jc->argnums, &jc->nargnums, &jc->single) < 0) {
    free(jc);
    return NULL;
  }
  jc->fun = sr_ref(fun);
  jc->has_aux = has_aux;
  jc->holomorphic = holomorphic;
  jc->allow_int = allow_int;
  jc->rev = rev;
  return sr_api_wraps_doc(I, sr_builtin_with(sr_callable_name(fun), jac_call, jc, jac_free), fun,
                          "Jacobian of {fun} with respect to positional argument(s) {argnums}. Takes the same "
                          "arguments as {fun} but returns the jacobian of the output with respect to the arguments at "
                          "positions {argnums}.",
                          argnums && argnums->kind != SR_V_NONE ? argnums : NULL, 0);
}

static SrVal *not_callable(SrInterp *I, SrVal *fun) {
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, fun);
  sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_buf_str(&b));
  sr_buf_free(&b);
  return NULL;
}

static int flag(SrVal *v) { return v && sr_val_truthy(v); }

static SrVal *make_jac(SrInterp *I, SrArgs *a, int rev, const char *name) {
  SrVal *p[5];
  if (sr_args_parse(I, a, name,
                    rev ? "fun, argnums=, has_aux=, holomorphic=, allow_int=" : "fun, argnums=, has_aux=, holomorphic=",
                    p) < 0)
    return NULL;
  if (!sr_is_callable(I, p[0])) return not_callable(I, p[0]);
  return jac_new(I, p[0], p[1], flag(p[2]), flag(p[3]), rev && flag(p[4]), rev);
}

static SrVal *jax_jacfwd(SrInterp *I, SrArgs *a) { return make_jac(I, a, 0, "jacfwd"); }
static SrVal *jax_jacrev(SrInterp *I, SrArgs *a) { return make_jac(I, a, 1, "jacrev"); }
static SrVal *jax_jacobian(SrInterp *I, SrArgs *a) { return make_jac(I, a, 1, "jacobian"); }

/* hessian = jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums,
   has_aux, holomorphic) */
static SrVal *jax_hessian(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "hessian", "fun, argnums=, has_aux=, holomorphic=", p) < 0) return NULL;
  if (!sr_is_callable(I, p[0])) return not_callable(I, p[0]);
  SrVal *inner = jac_new(I, p[0], p[1], flag(p[2]), flag(p[3]), 0, 1);
  if (!inner) return NULL;
  SrVal *r = jac_new(I, inner, p[1], flag(p[2]), flag(p[3]), 0, 0);
  sr_unref(inner);
  return r;
}

void sr_jacobian_init(void) {
  sr_def("jax.jacfwd", jax_jacfwd,
         "jacfwd(fun, argnums=0, has_aux=False, holomorphic=False): the Jacobian by forward mode (vmap of jvp)");
  sr_def("jax.jacrev", jax_jacrev,
         "jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False): the Jacobian by reverse "
         "mode (vmap of vjp)");
  sr_def("jax.jacobian", jax_jacobian,
         "jacobian(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False): jacrev");
  sr_def("jax.hessian", jax_hessian,
         "hessian(fun, argnums=0, has_aux=False, holomorphic=False): jacfwd(jacrev(fun))");
}
