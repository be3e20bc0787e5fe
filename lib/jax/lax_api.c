/* lax_api.c: jax.lax and the transforms of the statement language.
 *
 * The first half is the lax layer of api.h: one function per lax function
 * of JAX, binding the primitives JAX binds, with JAX's params and skips.
 * The second half registers the built-ins: jax.lax.*, jax.reshard and
 * with_sharding_constraint, auto_axes / explicit_axes, shard_map and the
 * manual-mode collectives, scan / cond / fori_loop / while_loop, and
 * jax.tree.  Each says which JAX function it follows.
 */
#include "jax/api.h"
#include "lax/lax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jaxstate.h"
#include "py/objects.h"
#include "py/range.h"
#include "jax/vjp.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- values and context ---- */

const SrMesh *sr_api_mesh(SrInterp *I) { return sr_jax_abstract_mesh(I->jax); }

SrVal *sr_api_axes_tuple(const SrMesh *m, SrAxes axes) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, 0);
  for (int i = 0; m && i < m->n; i++)
    if (axes & (1u << i)) sr_seq_push(NULL, t, sr_str_cstr(NULL, m->names[i]));
  return t;
}

SrAxes sr_api_axes_on(const SrType *t, SrAxes axes, const SrMesh *m) {
  if (!t || !t->mesh || !m) return 0;
  return sr_axes_remap(axes, t->mesh, m);
}

SrVal *sr_api_type_spec(const SrType *t) {
  SrShardSpec s;
  sr_shard_of_type(t, &s);
  if (!s.mesh) s.mesh = sr_mesh_empty();
  return sr_shard_to_spec_val(&s);
}

int sr_api_axis_names(SrInterp *I, SrVal *v, const SrMesh *m, SrAxes *out, const char *what) {
  *out = 0;
  int n = 1;
  SrVal **items = &v;
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST || v->kind == SR_V_SET || v->kind == SR_V_FROZENSET) {
    n = v->seq.n;
    items = v->seq.items;
  }
  for (int i = 0; i < n; i++) {
    const char *s = sr_as_str(I, items[i], what);
    if (!s) return -1;
    int a = sr_mesh_axis(m, s);
    if (a < 0) {
      SrBuf b = SR_BUF_INIT;
      sr_mesh_str(&b, m);
      sr_raise(I, "NameError", "unbound axis name: %s. The following axis names (e.g. defined by pmap) are available to collective operations: %s",
               s, b.p ? b.p : "");
      sr_buf_free(&b);
      return -1;
    }
    *out |= 1u << a;
  }
  return 0;
}

int sr_api_axis(SrInterp *I, int64_t axis, int nd, int64_t *out) {
  if (axis < -nd || axis >= nd) {
    sr_raise(I, "AxisError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, nd);
    return -1;
  }
  *out = axis < 0 ? axis + nd : axis;
  return 0;
}

SrVal *sr_api_first(SrVal *r) {
  if (!r) return NULL;
  if (!sr_is_seq(r)) return r;
  SrVal *x = r->seq.n ? sr_ref(r->seq.items[0]) : NULL;
  sr_unref(r);
  return x;
}

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

/* Is v a Python scalar or a literal value (whose type has an empty mesh in
   JAX)? */
static int is_literalish(SrVal *v) {
  SrArrayObj *a = sr_array_of(v);
  if (!a) return v->kind == SR_V_INT || v->kind == SR_V_FLOAT || v->kind == SR_V_BOOL || v->kind == SR_V_COMPLEX;
  return a->kind == SR_AV_ABSTRACT && a->has_value;
}

/* ---- canonicalize_sharding ---- */

static int spec_mentions_non_explicit(SrInterp *I, const SrMesh *m, const SrSpec *s, const char *api) {
  for (int pass = 0; pass < 3; pass++) {
    int n = pass == 0 ? s->n : pass == 1 ? s->nunreduced : s->nreduced;
    for (int i = 0; i < n; i++) {
      int cnt = pass == 0 ? s->e[i].n : 1;
      for (int k = 0; k < cnt; k++) {
        const char *nm = pass == 0 ? s->e[i].names[k] : pass == 1 ? s->unreduced[i] : s->reduced[i];
        if (nm == SR_SPEC_UNCONSTRAINED) continue;
        int a = sr_mesh_axis(m, nm);
        if (a >= 0 && m->types[a] != SR_AXIS_EXPLICIT) {
          SrBuf b = SR_BUF_INIT;
          sr_spec_repr(&b, s);
          sr_raise(I, "ValueError",
                   "PartitionSpec passed to %s cannot contain axis names that are of type Auto or Manual. Got "
                   "PartitionSpec: %s with axis name: %s of type: %s.",
                   api, b.p, nm, sr_axis_type_name(m->types[a]));
          sr_buf_free(&b);
          return -1;
        }
      }
    }
  }
  return 0;
}

/* sharding_impls.canonicalize_sharding: None, a P over the context mesh, or
   a NamedSharding over an abstract mesh.  *out is NULL for None. */
static int canon_sharding(SrInterp *I, SrVal *v, const char *api, int check_mesh, SrVal **out) {
  *out = NULL;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (v->kind == SR_V_SHARDING && v->sh.mesh->n == 0) return 0;
  const SrMesh *cur = sr_api_mesh(I);
  if (v->kind == SR_V_SPEC) {
    if (!cur->n) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, v);
      sr_raise(I, "ValueError",
               "Using PartitionSpec when you are not under a mesh context is not allowed. Please pass a "
               "NamedSharding instance or enter into a mesh context via `jax.set_mesh`. Got %s",
               b.p);
      sr_buf_free(&b);
      return -1;
    }
    if (sr_api_check_spec(I, v->spec, NULL, -1) < 0 || spec_mentions_non_explicit(I, cur, v->spec, api) < 0) return -1;
    *out = sr_sharding_val(NULL, cur, v->spec, NULL);
    return 0;
  }
  if (v->kind != SR_V_SHARDING) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, v);
    sr_raise(I, "TypeError",
             "`out_sharding` argument of %s only supports instances of `NamedSharding` or `PartitionSpec`. Got %s "
             "of type: <class '%s'>",
             api, b.p ? b.p : "", sr_val_kind_name(v));
    sr_buf_free(&b);
    return -1;
  }
  const SrMesh *m = v->sh.mesh->abstract ? v->sh.mesh : sr_mesh_abstract(v->sh.mesh, 1);
  int all_auto = 1;
  for (int i = 0; i < m->n; i++) all_auto &= m->types[i] == SR_AXIS_AUTO;
  int cur_auto = 1;
  for (int i = 0; i < cur->n; i++) cur_auto &= cur->types[i] == SR_AXIS_AUTO;
  if (check_mesh && !(all_auto && cur_auto) && cur->n && sr_mesh_shape(m) != sr_mesh_shape(cur)) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_mesh_str(&b, cur);
    sr_mesh_str(&c, m);
    sr_raise(I, "ValueError", "Context mesh %s should match the mesh of sharding %s passed to %s.", b.p, c.p, api);
    sr_buf_free(&b);
    sr_buf_free(&c);
    return -1;
  }
  if (spec_mentions_non_explicit(I, m, v->sh.spec, api) < 0) return -1;
  *out = sr_sharding_val(NULL, m, v->sh.spec, NULL);
  return 0;
}

int sr_api_check_spec(SrInterp *I, const SrSpec *s, const SrVal *sharding, int ndim) {
  /* named_sharding._check_unique_resources */
  const char *seen[SR_MAX_RANK * SR_MAX_DIM_AXES], *dup[SR_MAX_RANK * SR_MAX_DIM_AXES];
  int ns = 0, nd = 0;
  for (int i = 0; i < s->n; i++)
    for (int k = 0; k < s->e[i].n; k++) {
      const char *nm = s->e[i].names[k];
      if (nm == SR_SPEC_UNCONSTRAINED) continue;
      int j = 0, again = 0;
      while (j < ns && seen[j] != nm) j++;
      if (j == ns) {
        if (ns < (int)(sizeof seen / sizeof *seen)) seen[ns++] = nm;
        continue;
      }
      for (j = 0; j < nd; j++) again |= dup[j] == nm;
      if (!again) dup[nd++] = nm;
    }
  if (nd) {
    /* mesh_lib.show_axes: sorted, each in backquotes */
    for (int i = 1; i < nd; i++)
      for (int j = i; j > 0 && strcmp(dup[j - 1], dup[j]) > 0; j--) {
        const char *t = dup[j];
        dup[j] = dup[j - 1];
        dup[j - 1] = t;
      }
    SrBuf b = SR_BUF_INIT, ax = SR_BUF_INIT;
    sr_spec_repr(&b, s);
    for (int i = 0; i < nd; i++) sr_buf_printf(&ax, i ? ", `%s`" : "`%s`", dup[i]);
    sr_raise(I, "DuplicateSpecError",
             "A single NamedSharding spec specification can map every mesh axis to at most one positional "
             "dimension, but %s has duplicate entries for %s",
             b.p, ax.p);
    sr_buf_free(&b);
    sr_buf_free(&ax);
    return -1;
  }
  /* NamedSharding.check_compatible_aval */
  if (ndim >= 0 && s->n > ndim) {
    SrBuf b = SR_BUF_INIT;
    if (sharding) sr_val_str(&b, sharding);
    else sr_spec_repr(&b, s);
    sr_raise(I, "ValueError",
             "Sharding %s is only valid for values of rank at least %d, but was applied to a value of rank %d.%s",
             b.p, s->n, ndim, ndim == 0 ? " For scalars the PartitionSpec should be P()" : "");
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

int sr_api_canon_sharding(SrInterp *I, SrVal *v, const char *api, SrVal **out) {
  return canon_sharding(I, v, api, 1, out);
}

/* A sharding's spec padded with None to nd entries (P._normalized_spec_for_aval). */
static SrVal *normalized_sharding(SrVal *sh, int nd) {
  const SrSpec *s = sh->sh.spec;
  if (s->n >= nd) return sr_ref(sh);
  SrSpec t = *s;
  SrSpecEntry e[SR_MAX_RANK];
  for (int i = 0; i < nd && i < SR_MAX_RANK; i++) e[i] = i < s->n ? s->e[i] : (SrSpecEntry){0, NULL};
  t.e = e;
  t.n = nd;
  return sr_sharding_val(NULL, sh->sh.mesh, &t, sh->sh.memory_kind);
}

/* Does a value's type already have sharding sh (same spec on its mesh)? */
static int same_sharding(SrInterp *I, SrVal *x, SrVal *sh) {
  const SrType *t = vtype(I, x);
  if (is_literalish(x)) return 0;
  SrVal *a = sr_api_type_spec(t);
  SrVal *b = normalized_sharding(sh, t->ndim);
  SrVal *bs = sr_spec_val(NULL, b->sh.spec);
  SrBuf x1 = SR_BUF_INIT, x2 = SR_BUF_INIT;
  sr_val_repr(&x1, a);
  sr_val_repr(&x2, bs);
  int eq = strcmp(sr_buf_str(&x1), sr_buf_str(&x2)) == 0;
  sr_buf_free(&x1);
  sr_buf_free(&x2);
  sr_unref(a);
  sr_unref(b);
  sr_unref(bs);
  return eq;
}

static SrVal *sharding_or_none(SrVal *sh) { return sh ? sr_ref(sh) : sr_none(); }

/* ---- pvary and auto_insert_reshard (core.py) ---- */

static SrVal *bind_axes_cast(SrInterp *I, int prim, SrVal *x, SrAxes axes) {
  const SrMesh *m = sr_api_mesh(I);
  if (!axes) return sr_ref(x);
  if (!I->jax->check_vma) {
    /* pvary is a no-op on manual axes outside check_vma */
    int all_manual = 1;
    for (int i = 0; i < m->n; i++)
      if ((axes & (1u << i)) && m->types[i] != SR_AXIS_MANUAL) all_manual = 0;
    if (all_manual) return sr_ref(x);
  }
  return sr_api_first(sr_bindv(I, prim, 1, &x, "axes", sr_api_axes_tuple(m, axes), NULL));
}

SrVal *sr_lax_pvary(SrInterp *I, SrVal *x, SrAxes axes) { return bind_axes_cast(I, SR_P_pvary, x, axes); }

SrVal *sr_lax_reduced_vary_cast(SrInterp *I, SrVal *x, SrAxes axes) {
  return bind_axes_cast(I, SR_P_reduced_vary_cast, x, axes);
}

/* core.insert_reduced_reshard: outside shard_map, a rank-0 operand that is
   replicated where the other operand is reduced becomes reduced too. */
static int insert_reduced_reshard(SrInterp *I, int n, SrVal **args) {
  const SrMesh *m = sr_api_mesh(I);
  for (int i = 0; i < m->n; i++)
    if (m->types[i] != SR_AXIS_EXPLICIT) return 0;
  if (n != 2 || !m->n) return 0;
  SrAxes red[2], out = 0;
  for (int i = 0; i < 2; i++) {
    const SrType *t = vtype(I, args[i]);
    red[i] = t ? sr_api_axes_on(t, t->reduced, m) : 0;
    out |= red[i];
  }
  if (!out) return 0;
  for (int i = 0; i < 2; i++) {
    const SrType *t = vtype(I, args[i]);
    if (!t || t->ndim != 0) continue;
    SrAxes used = sr_api_axes_on(t, t->unreduced | t->reduced, m);
    if ((~used & out) != out) continue;
    const char *names[SR_MAX_AXES];
    int k = 0;
    for (int a = 0; a < m->n; a++)
      if (out & (1u << a)) names[k++] = m->names[a];
    SrSpec s = {0};
    s.reduced = names;
    s.nreduced = k;
    SrVal *sh = sr_sharding_val(NULL, m, &s, NULL);
    SrVal *r = sr_bindv(I, SR_P_reshard, 1, &args[i], "dst_sharding", sh, "concrete_mesh", sr_none(), NULL);
    if (!r) return -1;
    sr_unref(args[i]);
    args[i] = r;
  }
  return 0;
}

int sr_auto_insert_reshard(SrInterp *I, int n, SrVal **args) {
  if (n <= 0) return 0;
  if (!I->jax->check_vma) return insert_reduced_reshard(I, n, args);
  const SrMesh *m = sr_api_mesh(I);
  SrAxes vma[64], red[64], all = 0;
  if (n > 64) return 0;
  SrAxes manual = sr_mesh_axes_of_type(m, SR_AXIS_MANUAL);
  for (int i = 0; i < n; i++) {
    const SrType *t = vtype(I, args[i]);
    vma[i] = t ? sr_api_axes_on(t, t->varying, m) : 0;
    red[i] = t ? sr_api_axes_on(t, t->reduced, m) & manual : 0;
    all |= vma[i];
  }
  for (int i = 0; i < n; i++) {
    SrAxes rest = all & ~vma[i];
    if (!rest || !vtype(I, args[i])) continue;
    SrVal *r = red[i] == rest ? sr_lax_reduced_vary_cast(I, args[i], rest) : sr_lax_pvary(I, args[i], rest);
    if (!r) return -1;
    sr_unref(args[i]);
    args[i] = r;
  }
  return 0;
}

/* ---- elementwise ---- */

SrVal *sr_lax_unary(SrInterp *I, int prim, SrVal *x) {
  SrPList ps = {0};
  if (sr_prims[prim].pp == SR_PP_ACCURACY) sr_plist_add(&ps, "accuracy", sr_none());
  SrVal *r = sr_bind(I, prim, 1, &x, ps.n, ps.p);
  sr_plist_free(&ps);
  return r;
}

SrVal *sr_lax_binary(SrInterp *I, int prim, SrVal *x, SrVal *y) {
  SrVal *args[2] = {sr_ref(x), sr_ref(y)};
  SrVal *r = NULL;
  if (sr_auto_insert_reshard(I, 2, args) == 0) {
    if (prim == SR_P_mul) r = sr_bindv(I, prim, 2, args, "out_dtype", sr_none(), NULL);
    else r = sr_bind(I, prim, 2, args, 0, NULL);
  }
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

SrVal *sr_lax_convert(SrInterp *I, SrVal *x, SrDtype dt, int weak, SrVal *sharding) {
  const SrType *t = vtype(I, x);
  if (!t) return sr_raise(I, "TypeError", "cannot convert %s to an array", sr_val_kind_name(x));
  if (!sharding && (is_literalish(x) || !sr_array_of(x))) {
    if (t->dtype == dt && t->weak == weak) return sr_ref(x);
    return sr_jnp_convert(I, x, dt, weak);
  }
  if (t->dtype == dt && t->weak == weak && !sharding) return sr_ref(x);
  return sr_bindv(I, SR_P_convert_element_type, 1, &x, "new_dtype", sr_dtype_val(NULL, dt), "weak_type",
                  sr_bool(weak), "sharding", sharding_or_none(sharding), NULL);
}

/* ---- structure ---- */

SrVal *sr_lax_reshape(SrInterp *I, SrVal *x, const int64_t *shape, int nd, SrVal *sharding) {
  const SrType *t = vtype(I, x);
  int same = t->ndim == nd;
  for (int i = 0; same && i < nd; i++) same = t->dims[i].size == shape[i];
  if (t->ndim && same && (!sharding || same_sharding(I, x, sharding)) && sr_array_of(x) && !is_literalish(x))
    return sr_ref(x);
  return sr_bindv(I, SR_P_reshape, 1, &x, "new_sizes", sr_int_tuple(shape, nd), "dimensions", sr_none(),
                  "sharding", sharding_or_none(sharding), NULL);
}

SrVal *sr_lax_transpose(SrInterp *I, SrVal *x, const int64_t *perm, int n) {
  const SrType *t = vtype(I, x);
  int ident = n == t->ndim;
  for (int i = 0; ident && i < n; i++) ident = perm[i] == i;
  if (ident && sr_array_of(x)) return sr_ref(x);
  return sr_bindv(I, SR_P_transpose, 1, &x, "permutation", sr_int_tuple(perm, n), NULL);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

SrVal *sr_lax_squeeze(SrInterp *I, SrVal *x, const int64_t *dims, int n) {
  const SrType *t = vtype(I, x);
  int64_t d[SR_MAX_RANK];
  if (n > SR_MAX_RANK) return sr_raise(I, "ValueError", "too many dimensions");
  for (int i = 0; i < n; i++)
    if (sr_api_axis(I, dims[i], t->ndim, &d[i]) < 0) return NULL;
  qsort(d, (size_t)n, sizeof *d, cmp_i64);
  if (!n && sr_array_of(x)) return sr_ref(x);
  return sr_bindv(I, SR_P_squeeze, 1, &x, "dimensions", sr_int_tuple(d, n), NULL);
}

SrVal *sr_lax_broadcast_in_dim(SrInterp *I, SrVal *x, const int64_t *shape, int nd, const int64_t *bdims,
                               int nb, SrVal *sharding) {
  const SrType *t = vtype(I, x);
  if (t->ndim == nd && !nb && sr_array_of(x) && !is_literalish(x) && !sharding) return sr_ref(x);
  int same_shape = t->ndim == nd && nb == t->ndim;
  for (int i = 0; same_shape && i < nd; i++) same_shape = t->dims[i].size == shape[i] && bdims[i] == i;
  if (same_shape && sharding && !same_sharding(I, x, sharding)) {
    SrVal *ns = normalized_sharding(sharding, nd);
    SrVal *r = sr_bindv(I, SR_P_reshard, 1, &x, "dst_sharding", ns, "concrete_mesh", sr_none(), NULL);
    return r;
  }
  return sr_bindv(I, SR_P_broadcast_in_dim, 1, &x, "shape", sr_int_tuple(shape, nd), "broadcast_dimensions",
                  sr_int_tuple(bdims, nb), "sharding", sharding_or_none(sharding), NULL);
}

SrVal *sr_lax_expand_dims(SrInterp *I, SrVal *x, const int64_t *dims, int n) {
  const SrType *t = vtype(I, x);
  int nd = t->ndim + n;
  if (nd > SR_MAX_RANK) return sr_raise(I, "ValueError", "too many dimensions");
  int is_new[SR_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    int64_t d;
    if (sr_api_axis(I, dims[i], nd, &d) < 0) return NULL;
    if (is_new[d]) return sr_raise(I, "ValueError", "repeated axis in lax.expand_dims");
    is_new[d] = 1;
  }
  int64_t shape[SR_MAX_RANK], bd[SR_MAX_RANK];
  int k = 0, nb = 0;
  for (int i = 0; i < nd; i++) {
    if (is_new[i]) {
      shape[i] = 1;
    } else {
      shape[i] = t->dims[k++].size;
      bd[nb++] = i;
    }
  }
  return sr_lax_broadcast_in_dim(I, x, shape, nd, bd, nb, NULL);
}

SrVal *sr_lax_full(SrInterp *I, const int64_t *shape, int nd, SrVal *fill, int dtype, SrVal *sharding) {
  const SrType *ft = vtype(I, fill);
  if (!ft) return sr_raise(I, "TypeError", "fill_value must be a scalar");
  if (ft->ndim) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < ft->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)ft->dims[i].size);
    sr_buf_puts(&b, ft->ndim == 1 ? ",)" : ")");
    sr_raise(I, "TypeError", "full must be called with scalar fill_value, got fill_value.shape %s.", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  int weak = dtype < 0 ? ft->weak : 0;
  SrDtype dt = dtype < 0 ? ft->dtype : (SrDtype)dtype;
  SrVal *f = sr_lax_convert(I, fill, dt, weak, NULL);
  if (!f) return NULL;
  if (nd == 0 && !sharding) return f;
  SrVal *r = sr_lax_broadcast_in_dim(I, f, shape, nd, NULL, 0, sharding);
  sr_unref(f);
  return r;
}

SrVal *sr_lax_iota(SrInterp *I, SrDtype dt, const int64_t *shape, int nd, int dim, SrVal *sharding) {
  return sr_bindv(I, SR_P_iota, 0, NULL, "dtype", sr_dtype_val(NULL, dt), "shape", sr_int_tuple(shape, nd),
                  "dimension", sr_int(NULL, dim), "sharding", sharding_or_none(sharding), NULL);
}

SrVal *sr_lax_reduce(SrInterp *I, int prim, SrVal *x, const int64_t *axes, int n, SrVal *out_sharding) {
  SrVal *r;
  if (prim == SR_P_reduce_sum || prim == SR_P_reduce_max || prim == SR_P_reduce_min)
    r = sr_bindv(I, prim, 1, &x, "axes", sr_int_tuple(axes, n), "out_sharding", sharding_or_none(out_sharding),
                 NULL);
  else
    r = sr_bindv(I, prim, 1, &x, "axes", sr_int_tuple(axes, n), NULL);
  if (!r) return NULL;
  /* monoid reducers set weak_type explicitly (lax.reduce) */
  const SrType *t = vtype(I, r);
  if (t->weak) {
    SrVal *c = sr_lax_convert(I, r, t->dtype, 0, NULL);
    sr_unref(r);
    r = c;
  }
  return r;
}

SrVal *sr_lax_argminmax(SrInterp *I, int prim, SrVal *x, int64_t axis, SrDtype index_dtype) {
  return sr_bindv(I, prim, 1, &x, "axes", sr_int_tuple(&axis, 1), "index_dtype", sr_dtype_val(NULL, index_dtype),
                  NULL);
}

SrVal *sr_lax_dot_general(SrInterp *I, SrVal *a, SrVal *b, const int64_t *lc, int nlc, const int64_t *rc,
                          int nrc, const int64_t *lb, int nlb, const int64_t *rb, int nrb,
                          SrVal *precision, int pref, SrVal *out_sharding) {
  SrVal *args[2] = {sr_ref(a), sr_ref(b)};
  SrVal *r = NULL;
  if (sr_auto_insert_reshard(I, 2, args) == 0) {
    SrVal *c = sr_seq(NULL, SR_V_TUPLE, 2), *bt = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, c, sr_int_tuple(lc, nlc));
    sr_seq_push(NULL, c, sr_int_tuple(rc, nrc));
    sr_seq_push(NULL, bt, sr_int_tuple(lb, nlb));
    sr_seq_push(NULL, bt, sr_int_tuple(rb, nrb));
    SrVal *dn = sr_seq(NULL, SR_V_TUPLE, 2);
    sr_seq_push(NULL, dn, c);
    sr_seq_push(NULL, dn, bt);
    r = sr_bindv(I, SR_P_dot_general, 2, args, "dimension_numbers", dn, "precision",
                 precision ? sr_ref(precision) : sr_none(), "preferred_element_type",
                 pref >= 0 ? sr_dtype_val(NULL, (SrDtype)pref) : sr_none(), "out_sharding",
                 sharding_or_none(out_sharding), NULL);
  }
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

SrVal *sr_lax_select(SrInterp *I, SrVal *pred, SrVal *on_true, SrVal *on_false) {
  /* select_n takes the false case first */
  SrVal *args[3] = {sr_ref(pred), sr_ref(on_false), sr_ref(on_true)};
  SrVal *r = NULL;
  if (sr_auto_insert_reshard(I, 3, args) == 0) r = sr_bind(I, SR_P_select_n, 3, args, 0, NULL);
  for (int i = 0; i < 3; i++) sr_unref(args[i]);
  return r;
}

SrVal *sr_lax_concatenate(SrInterp *I, int n, SrVal **xs, int dim) {
  if (n == 0) return sr_raise(I, "ValueError", "concatenate requires a non-empty sequences of arrays");
  if (n == 1 && sr_array_of(xs[0])) return sr_ref(xs[0]);
  SrVal **args = sr_xcalloc((size_t)n + 1, sizeof *args);
  for (int i = 0; i < n; i++) args[i] = sr_ref(xs[i]);
  SrVal *r = NULL;
  if (sr_auto_insert_reshard(I, n, args) == 0)
    r = sr_bindv(I, SR_P_concatenate, n, args, "dimension", sr_int(NULL, dim), NULL);
  for (int i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  return r;
}

SrVal *sr_lax_slice(SrInterp *I, SrVal *x, const int64_t *start, const int64_t *limit, const int64_t *strides) {
  const SrType *t = vtype(I, x);
  return sr_bindv(I, SR_P_slice, 1, &x, "start_indices", sr_int_tuple(start, t->ndim), "limit_indices",
                  sr_int_tuple(limit, t->ndim), "strides", strides ? sr_int_tuple(strides, t->ndim) : sr_none(),
                  NULL);
}

SrVal *sr_lax_dynamic_slice(SrInterp *I, SrVal *x, SrVal **starts, const int64_t *sizes) {
  const SrType *t = vtype(I, x);
  int n = t->ndim + 1;
  SrVal **args = sr_xcalloc((size_t)n + 1, sizeof *args);
  args[0] = sr_ref(x);
  for (int i = 0; i < t->ndim; i++) args[i + 1] = sr_ref(starts[i]);
  SrVal *r = NULL;
  if (sr_auto_insert_reshard(I, n, args) == 0)
    r = sr_bindv(I, SR_P_dynamic_slice, n, args, "slice_sizes", sr_int_tuple(sizes, t->ndim), NULL);
  for (int i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  return r;
}

/* lax.pad: cfg holds (low, high, interior) per dimension of x. */
SrVal *sr_lax_pad(SrInterp *I, SrVal *x, SrVal *padding_value, const int64_t *cfg, int nd) {
  SrVal *pc = sr_seq(NULL, SR_V_TUPLE, nd);
  for (int i = 0; i < nd; i++) sr_seq_push(NULL, pc, sr_int_tuple(cfg + 3 * i, 3));
  SrVal *args[2] = {sr_ref(x), sr_ref(padding_value)}, *r = NULL;
  if (sr_auto_insert_reshard(I, 2, args) == 0) r = sr_bindv(I, SR_P_pad, 2, args, "padding_config", pc, NULL);
  else sr_unref(pc);
  sr_unref(args[0]);
  sr_unref(args[1]);
  return r;
}

SrVal *sr_lax_rev(SrInterp *I, SrVal *x, const int64_t *dims, int n) {
  return sr_bindv(I, SR_P_rev, 1, &x, "dimensions", sr_int_tuple(dims, n), NULL);
}

SrVal *sr_lax_broadcast_to(SrInterp *I, SrVal *x, const int64_t *shape, int nd, SrVal *sharding) {
  const SrType *t = vtype(I, x);
  int same = t->ndim == nd;
  for (int i = 0; same && i < nd; i++) same = t->dims[i].size == shape[i];
  if (same && (!sharding || same_sharding(I, x, sharding))) return sr_ref(x);
  int lead = nd - t->ndim, ok = lead >= 0;
  for (int i = 0; ok && i < t->ndim; i++) ok = t->dims[i].size == 1 || t->dims[i].size == shape[lead + i];
  if (!ok) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_type_long(&b, t);
    sr_buf_printf(&c, "%s[", sr_dtype_name(t->dtype));
    for (int i = 0; i < nd; i++) sr_buf_printf(&c, i ? ",%lld" : "%lld", (long long)shape[i]);
    sr_buf_putc(&c, ']');
    sr_raise(I, "ValueError", "Incompatible types for broadcasting: input type=%s and requested type=%s", b.p, c.p);
    sr_buf_free(&b);
    sr_buf_free(&c);
    return NULL;
  }
  int64_t bd[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) bd[i] = lead + i;
  return sr_lax_broadcast_in_dim(I, x, shape, nd, bd, t->ndim, sharding);
}

SrVal *sr_lax_reshard(SrInterp *I, SrVal *x, SrVal *arg) {
  SrVal *ds;
  if (canon_sharding(I, arg, "reshard", 0, &ds) < 0) return NULL;
  if (!ds) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, arg ? arg : sr_none());
    sr_raise(I, "ValueError",
             "Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. Got "
             "sharding %s.",
             b.p);
    sr_buf_free(&b);
    return NULL;
  }
  const SrType *t = vtype(I, x);
  if (!t) {
    sr_unref(ds);
    return sr_raise(I, "TypeError", "reshard expects arrays, got %s", sr_val_kind_name(x));
  }
  SrVal *ns = normalized_sharding(ds, t->ndim);
  sr_unref(ds);
  SrVal *cm = arg->kind == SR_V_SHARDING && !arg->sh.mesh->abstract ? sr_mesh_val(NULL, arg->sh.mesh) : sr_none();
  return sr_bindv(I, SR_P_reshard, 1, &x, "dst_sharding", ns, "concrete_mesh", cm, NULL);
}

/* ---- calls ---- */

typedef struct ApiJit {
  SrBuiltinFn fn;
  void *data;
} ApiJit;

SrVal *sr_api_jit(SrInterp *I, const char *name, SrBuiltinFn fn, void *data, int n, SrVal **args) {
  SrVal *b = sr_builtin_with(name, fn, data, free);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  SrVal *r = sr_jit_call(I, b, name, &a);
  sr_unref(b);
  return r;
}

SrVal *sr_api_bind_typed(SrInterp *I, int prim, int nin, SrVal **in, SrPList *ps, const SrType **outs,
                         uint32_t nout) {
  sr_lax_init();
  if (sr_prims[prim].type) return sr_bind(I, prim, nin, in, ps->n, ps->p);
  return sr_bind_prim(I, &sr_prims[prim], nin, in, ps->n, ps->p, outs, nout);
}

/* ======================================================================
 * jax.lax built-ins
 * ====================================================================== */

/* An int or a sequence of ints (a shape, axes, a permutation). */
static int ints_arg(SrInterp *I, SrVal *v, int64_t *out, int *n, const char *what) {
  SrVal *ints = sr_int_seq_arg(v);
  if (ints != v) {
    int rc = ints_arg(I, ints, out, n, what);
    sr_unref(ints);
    return rc;
  }
  if (!v || v->kind == SR_V_NONE) {
    *n = 0;
    return 0;
  }
  if (!sr_is_seq(v)) {
    *n = 1;
    return sr_as_int(I, v, what, out);
  }
  if (v->seq.n > SR_MAX_RANK) return sr_raise(I, "ValueError", "%s: too many entries", what), -1;
  for (int i = 0; i < v->seq.n; i++)
    if (sr_as_int(I, v->seq.items[i], what, &out[i]) < 0) return -1;
  *n = v->seq.n;
  return 0;
}


static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

static SrVal *lax_unary_fn(SrInterp *I, SrArgs *a, int prim, const char *name) {
  if (a->n != 1) return sr_raise(I, "TypeError", "%s() takes 1 positional argument but %d were given", name, a->n);
  SrVal *x = arr(I, a->v[0]);
  if (!x) return NULL;
  SrVal *r = sr_lax_unary(I, prim, x);
  sr_unref(x);
  return r;
}

static SrVal *lax_binary_fn(SrInterp *I, SrArgs *a, int prim, const char *name) {
  if (a->n != 2) return sr_raise(I, "TypeError", "%s() takes 2 positional arguments but %d were given", name, a->n);
  SrVal *x = arr(I, a->v[0]), *y = x ? arr(I, a->v[1]) : NULL;
  SrVal *r = x && y ? sr_lax_binary(I, prim, x, y) : NULL;
  sr_unref(x);
  sr_unref(y);
  return r;
}

#define LAX_UNARY(fn, prim, name) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return lax_unary_fn(I, a, prim, name); }
#define LAX_BINARY(fn, prim, name) \
  static SrVal *fn(SrInterp *I, SrArgs *a) { return lax_binary_fn(I, a, prim, name); }
LAX_UNARY(lax_neg, SR_P_neg, "neg")
LAX_UNARY(lax_sin, SR_P_sin, "sin")
LAX_UNARY(lax_cos, SR_P_cos, "cos")
LAX_UNARY(lax_tan, SR_P_tan, "tan")
LAX_UNARY(lax_tanh, SR_P_tanh, "tanh")
LAX_UNARY(lax_exp, SR_P_exp, "exp")
LAX_UNARY(lax_exp2, SR_P_exp2, "exp2")
LAX_UNARY(lax_log, SR_P_log, "log")
LAX_UNARY(lax_log1p, SR_P_log1p, "log1p")
LAX_UNARY(lax_expm1, SR_P_expm1, "expm1")
LAX_UNARY(lax_sqrt, SR_P_sqrt, "sqrt")
LAX_UNARY(lax_rsqrt, SR_P_rsqrt, "rsqrt")
LAX_UNARY(lax_cbrt, SR_P_cbrt, "cbrt")
LAX_UNARY(lax_abs, SR_P_abs, "abs")
LAX_UNARY(lax_sign, SR_P_sign, "sign")
LAX_UNARY(lax_floor, SR_P_floor, "floor")
LAX_UNARY(lax_ceil, SR_P_ceil, "ceil")
LAX_UNARY(lax_logistic, SR_P_logistic, "logistic")
LAX_UNARY(lax_square, SR_P_square, "square")
LAX_UNARY(lax_is_finite, SR_P_is_finite, "is_finite")
LAX_UNARY(lax_not, SR_P_not, "bitwise_not")
LAX_UNARY(lax_erf, SR_P_erf, "erf")
LAX_BINARY(lax_add, SR_P_add, "add")
LAX_BINARY(lax_sub, SR_P_sub, "sub")
LAX_BINARY(lax_mul, SR_P_mul, "mul")
LAX_BINARY(lax_div, SR_P_div, "div")
LAX_BINARY(lax_rem, SR_P_rem, "rem")
LAX_BINARY(lax_pow, SR_P_pow, "pow")
LAX_BINARY(lax_max, SR_P_max, "max")
LAX_BINARY(lax_min, SR_P_min, "min")
LAX_BINARY(lax_atan2, SR_P_atan2, "atan2")
LAX_BINARY(lax_eq, SR_P_eq, "eq")
LAX_BINARY(lax_ne, SR_P_ne, "ne")
LAX_BINARY(lax_lt, SR_P_lt, "lt")
LAX_BINARY(lax_le, SR_P_le, "le")
LAX_BINARY(lax_gt, SR_P_gt, "gt")
LAX_BINARY(lax_ge, SR_P_ge, "ge")
LAX_BINARY(lax_and, SR_P_and, "bitwise_and")
LAX_BINARY(lax_or, SR_P_or, "bitwise_or")
LAX_BINARY(lax_xor, SR_P_xor, "bitwise_xor")

static SrVal *lax_integer_pow(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "integer_pow", "x, y", p) < 0) return NULL;
  int64_t y;
  if (sr_as_int(I, p[1], "y", &y) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_integer_pow, 1, &x, "y", sr_int(NULL, y), NULL);
  sr_unref(x);
  return r;
}

static SrVal *lax_round(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "round", "x, rounding_method=", p) < 0) return NULL;
  int64_t m = 0;
  if (p[1] && sr_as_int(I, p[1], "rounding_method", &m) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_round, 1, &x, "rounding_method", sr_int(NULL, m), NULL);
  sr_unref(x);
  return r;
}

/* lax.reduce_precision: the operand rounded to a float format of
   exponent_bits and mantissa_bits, as XLA's ReducePrecision does */
static SrVal *lax_reduce_precision(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "reduce_precision", "operand, exponent_bits, mantissa_bits", p) < 0) return NULL;
  int64_t eb, mb;
  if (sr_as_int(I, p[1], "exponent_bits argument of lax.reduce_precision", &eb) < 0 ||
      sr_as_int(I, p[2], "mantissa_bits argument of lax.reduce_precision", &mb) < 0)
    return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_reduce_precision, 1, &x, "exponent_bits", sr_int(NULL, eb), "mantissa_bits",
                      sr_int(NULL, mb), NULL);
  sr_unref(x);
  return r;
}

static SrVal *lax_convert_element_type(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int dt;
  if (sr_args_parse(I, a, "convert_element_type", "operand, new_dtype", p) < 0) return NULL;
  if (sr_dtype_arg(I, p[1], &dt, "convert_element_type") < 0) return NULL;
  if (dt < 0) return sr_raise(I, "TypeError", "convert_element_type: new_dtype must be a dtype");
  return sr_lax_convert(I, p[0], (SrDtype)dt, 0, NULL);
}

static SrVal *lax_broadcast_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *sh = NULL;
  if (sr_args_parse(I, a, "broadcast_in_dim", "operand, shape, broadcast_dimensions, *, out_sharding=", p) < 0)
    return NULL;
  int64_t shape[SR_MAX_RANK], bd[SR_MAX_RANK];
  int nd, nb;
  if (ints_arg(I, p[1], shape, &nd, "shape") < 0 || ints_arg(I, p[2], bd, &nb, "broadcast_dimensions") < 0) return NULL;
  if (canon_sharding(I, p[3], "broadcast_in_dim", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_broadcast_in_dim(I, x, shape, nd, bd, nb, sh) : NULL;
  sr_unref(x);
  sr_unref(sh);
  return r;
}

static SrVal *lax_broadcast(SrInterp *I, SrArgs *a) {
  SrVal *p[3], *sh = NULL;
  if (sr_args_parse(I, a, "broadcast", "operand, sizes, *, out_sharding=", p) < 0) return NULL;
  int64_t sizes[SR_MAX_RANK], shape[SR_MAX_RANK], bd[SR_MAX_RANK];
  int ns;
  if (ints_arg(I, p[1], sizes, &ns, "sizes") < 0) return NULL;
  if (canon_sharding(I, p[2], "broadcast", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  if (ns + t->ndim > SR_MAX_RANK) return sr_raise(I, "ValueError", "too many dimensions");
  for (int i = 0; i < ns; i++) shape[i] = sizes[i];
  for (int i = 0; i < t->ndim; i++) {
    shape[ns + i] = t->dims[i].size;
    bd[i] = ns + i;
  }
  SrVal *r = ns == 0 && !sh ? sr_ref(x) : sr_lax_broadcast_in_dim(I, x, shape, ns + t->ndim, bd, t->ndim, sh);
  sr_unref(x);
  sr_unref(sh);
  return r;
}

static SrVal *lax_reshape(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *sh = NULL;
  if (sr_args_parse(I, a, "reshape", "operand, new_sizes, dimensions=, *, out_sharding=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (ints_arg(I, p[1], shape, &nd, "new_sizes") < 0) return NULL;
  if (p[2] && p[2]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "lax.reshape with dimensions= is not supported");
  if (canon_sharding(I, p[3], "reshape", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_reshape(I, x, shape, nd, sh) : NULL;
  sr_unref(x);
  sr_unref(sh);
  return r;
}

static SrVal *lax_transpose(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "transpose", "operand, permutation", p) < 0) return NULL;
  int64_t perm[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], perm, &n, "permutation") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_transpose(I, x, perm, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_squeeze(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "squeeze", "array, dimensions", p) < 0) return NULL;
  int64_t d[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], d, &n, "dimensions") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_squeeze(I, x, d, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_expand_dims(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "expand_dims", "array, dimensions", p) < 0) return NULL;
  int64_t d[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], d, &n, "dimensions") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_expand_dims(I, x, d, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_reduce_fn(SrInterp *I, SrArgs *a, int prim, const char *name, int has_sharding) {
  SrVal *p[3], *sh = NULL;
  if (sr_args_parse(I, a, name, has_sharding ? "operand, axes, *, out_sharding=" : "operand, axes", p) < 0)
    return NULL;
  int64_t axes[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], axes, &n, "axes") < 0) return NULL;
  if (has_sharding && canon_sharding(I, p[2], name, 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_reduce(I, prim, x, axes, n, sh) : NULL;
  sr_unref(x);
  sr_unref(sh);
  return r;
}

static SrVal *lax_reduce_sum(SrInterp *I, SrArgs *a) { return lax_reduce_fn(I, a, SR_P_reduce_sum, "reduce_sum", 1); }
static SrVal *lax_reduce_max(SrInterp *I, SrArgs *a) { return lax_reduce_fn(I, a, SR_P_reduce_max, "reduce_max", 1); }
static SrVal *lax_reduce_min(SrInterp *I, SrArgs *a) { return lax_reduce_fn(I, a, SR_P_reduce_min, "reduce_min", 1); }
static SrVal *lax_reduce_prod(SrInterp *I, SrArgs *a) {
  return lax_reduce_fn(I, a, SR_P_reduce_prod, "reduce_prod", 0);
}

static SrVal *lax_argfn(SrInterp *I, SrArgs *a, int prim, const char *name) {
  SrVal *p[3];
  if (sr_args_parse(I, a, name, "operand, axis, index_dtype", p) < 0) return NULL;
  int64_t ax;
  int dt;
  if (sr_as_int(I, p[1], "axis", &ax) < 0 || sr_dtype_arg(I, p[2], &dt, name) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_argminmax(I, prim, x, ax, dt < 0 ? SR_I32 : (SrDtype)dt) : NULL;
  sr_unref(x);
  return r;
}
static SrVal *lax_argmax(SrInterp *I, SrArgs *a) { return lax_argfn(I, a, SR_P_argmax, "argmax"); }
static SrVal *lax_argmin(SrInterp *I, SrArgs *a) { return lax_argfn(I, a, SR_P_argmin, "argmin"); }

/* ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) */
static int dimension_numbers(SrInterp *I, SrVal *v, int64_t d[4][SR_MAX_RANK], int n[4]) {
  if (!sr_is_seq(v) || v->seq.n != 2 || !sr_is_seq(v->seq.items[0]) || !sr_is_seq(v->seq.items[1]) ||
      v->seq.items[0]->seq.n != 2 || v->seq.items[1]->seq.n != 2)
    return sr_raise(I, "TypeError", "dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))"), -1;
  for (int k = 0; k < 4; k++)
    if (ints_arg(I, v->seq.items[k / 2]->seq.items[k % 2], d[k], &n[k], "dimension_numbers") < 0) return -1;
  return 0;
}

static SrVal *lax_dot_general(SrInterp *I, SrArgs *a) {
  SrVal *p[6], *sh = NULL;
  if (sr_args_parse(I, a, "dot_general",
                    "lhs, rhs, dimension_numbers, precision=, preferred_element_type=, *, out_sharding=", p) < 0)
    return NULL;
  int64_t d[4][SR_MAX_RANK];
  int n[4], pref;
  if (dimension_numbers(I, p[2], d, n) < 0 || sr_dtype_arg(I, p[4], &pref, "dot_general") < 0) return NULL;
  if (canon_sharding(I, p[5], "dot_general", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL;
  SrVal *prec = p[3] && p[3]->kind != SR_V_NONE ? p[3] : NULL;
  SrVal *r = x && y ? sr_lax_dot_general(I, x, y, d[0], n[0], d[1], n[1], d[2], n[2], d[3], n[3], prec, pref, sh)
                    : NULL;
  sr_unref(x);
  sr_unref(y);
  sr_unref(sh);
  return r;
}

static SrVal *lax_dot(SrInterp *I, SrArgs *a) {
  SrVal *p[5], *sh = NULL;
  if (sr_args_parse(I, a, "dot", "lhs, rhs, precision=, preferred_element_type=, *, out_sharding=", p) < 0)
    return NULL;
  int pref;
  if (sr_dtype_arg(I, p[3], &pref, "dot") < 0) return NULL;
  if (canon_sharding(I, p[4], "dot_general", 1, &sh) < 0) return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL;
  SrVal *r = NULL;
  if (x && y) {
    const SrType *tx = vtype(I, x), *ty = vtype(I, y);
    if (tx->ndim < 1 || tx->ndim > 2 || ty->ndim < 1 || ty->ndim > 2 ||
        tx->dims[tx->ndim - 1].size != ty->dims[0].size) {
      r = sr_raise(I, "TypeError", "Incompatible shapes for dot: got %s and %s.", sr_type_short(tx), sr_type_short(ty));
    } else {
      int64_t lc = tx->ndim - 1, rc = 0;
      r = sr_lax_dot_general(I, x, y, &lc, 1, &rc, 1, NULL, 0, NULL, 0,
                             p[2] && p[2]->kind != SR_V_NONE ? p[2] : NULL, pref, sh);
    }
  }
  sr_unref(x);
  sr_unref(y);
  sr_unref(sh);
  return r;
}

static SrVal *lax_select(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "select", "pred, on_true, on_false", p) < 0) return NULL;
  SrVal *c = arr(I, p[0]), *t = c ? arr(I, p[1]) : NULL, *f = t ? arr(I, p[2]) : NULL;
  SrVal *r = f ? sr_lax_select(I, c, t, f) : NULL;
  sr_unref(c);
  sr_unref(t);
  sr_unref(f);
  return r;
}

static SrVal *lax_select_n(SrInterp *I, SrArgs *a) {
  if (a->n < 2) return sr_raise(I, "ValueError", "select_n called with no cases");
  SrVal **args = sr_xcalloc((size_t)a->n + 1, sizeof *args);
  SrVal *r = NULL;
  int ok = 1;
  for (int i = 0; i < a->n && ok; i++) ok = (args[i] = arr(I, a->v[i])) != NULL;
  if (ok && sr_auto_insert_reshard(I, a->n, args) == 0) r = sr_bind(I, SR_P_select_n, a->n, args, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_unref(args[i]);
  free(args);
  return r;
}

static SrVal *lax_clamp(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "clamp", "min, x, max", p) < 0) return NULL;
  SrVal *args[3] = {NULL, NULL, NULL};
  SrVal *r = NULL;
  int ok = 1;
  for (int i = 0; i < 3 && ok; i++) ok = (args[i] = arr(I, p[i])) != NULL;
  if (ok && sr_auto_insert_reshard(I, 3, args) == 0) r = sr_bind(I, SR_P_clamp, 3, args, 0, NULL);
  for (int i = 0; i < 3; i++) sr_unref(args[i]);
  return r;
}

static SrVal *lax_concatenate(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "concatenate", "operands, dimension", p) < 0) return NULL;
  int64_t dim;
  if (sr_as_int(I, p[1], "dimension", &dim) < 0) return NULL;
  if (!sr_is_seq(p[0])) return sr_raise(I, "TypeError", "concatenate: operands must be a sequence of arrays");
  int n = p[0]->seq.n;
  SrVal **xs = sr_xcalloc((size_t)n + 1, sizeof *xs);
  int ok = 1;
  for (int i = 0; i < n && ok; i++) ok = (xs[i] = arr(I, p[0]->seq.items[i])) != NULL;
  SrVal *r = ok ? sr_lax_concatenate(I, n, xs, (int)dim) : NULL;
  for (int i = 0; i < n; i++) sr_unref(xs[i]);
  free(xs);
  return r;
}

static SrVal *lax_slice(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "slice", "operand, start_indices, limit_indices, strides=", p) < 0) return NULL;
  int64_t s[SR_MAX_RANK], l[SR_MAX_RANK], st[SR_MAX_RANK];
  int ns, nl, nst = 0;
  if (ints_arg(I, p[1], s, &ns, "start_indices") < 0 || ints_arg(I, p[2], l, &nl, "limit_indices") < 0 ||
      ints_arg(I, p[3], st, &nst, "strides") < 0)
    return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  SrVal *r;
  if (ns != vtype(I, x)->ndim || nl != ns || (nst && nst != ns))
    r = sr_raise(I, "TypeError", "slice start_indices must have length equal to the number of dimensions of the operand");
  else
    r = sr_lax_slice(I, x, s, l, nst ? st : NULL);
  sr_unref(x);
  return r;
}

/* lax._dynamic_slice_indices: static ints normalized (negative ones
   counted from the end) and converted to int32, tracers wrapped with a
   select for negative values, unsigned ones as they are.  Fills starts[]
   with new references (all NULL on error). */
static int slice_indices(SrInterp *I, const SrType *t, SrVal *const *items, SrVal **starts) {
  int ok = 1;
  for (int i = 0; i < t->ndim; i++) starts[i] = NULL;
  for (int i = 0; i < t->ndim && ok; i++) {
    SrVal *s = items[i];
    /* lax._dynamic_slice_indices: static ints normalized, tracers
       wrapped with a select for negative values */
    if (s->kind == SR_V_INT) {
      int64_t v = s->i < 0 ? s->i + t->dims[i].size : s->i;
      SrVal *iv = sr_int(NULL, v);
      starts[i] = sr_lax_convert(I, iv, SR_I32, 0, NULL);
      sr_unref(iv);
    } else {
      SrVal *iv = arr(I, s);
      const SrType *it = iv ? vtype(I, iv) : NULL;
      if (it && sr_dtype_kind(it->dtype) == SR_DK_UINT) {
        starts[i] = iv;
      } else if (it) {
        SrVal *zero = sr_int(NULL, 0), *d = sr_int(NULL, t->dims[i].size);
        SrVal *dd = sr_lax_convert(I, d, it->dtype, 0, NULL);
        SrVal *lv[2] = {iv, zero}, *av[2] = {iv, dd};
        SrArgs la = {2, lv, 0, NULL, NULL, NULL}, aa = {2, av, 0, NULL, NULL, NULL};
        SrVal *neg = dd ? sr_call(I, sr_lookup_qualname("jax.numpy.less"), &la) : NULL;
        SrVal *sum = neg ? sr_call(I, sr_lookup_qualname("jax.numpy.add"), &aa) : NULL;
        starts[i] = sum ? sr_lax_select(I, neg, sum, iv) : NULL;
        sr_unref(zero);
        sr_unref(d);
        sr_unref(dd);
        sr_unref(neg);
        sr_unref(sum);
        sr_unref(iv);
      }
    }
    ok = starts[i] != NULL;
  }
  if (ok) return 0;
  for (int i = 0; i < t->ndim; i++) {
    sr_unref(starts[i]);
    starts[i] = NULL;
  }
  return -1;
}

static SrVal *lax_dynamic_slice(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "dynamic_slice", "operand, start_indices, slice_sizes", p) < 0) return NULL;
  int64_t sz[SR_MAX_RANK];
  int nsz;
  if (ints_arg(I, p[2], sz, &nsz, "slice_sizes") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  if (!sr_is_seq(p[1]) || p[1]->seq.n != t->ndim || nsz != t->ndim) {
    sr_unref(x);
    return sr_raise(I, "ValueError", "Length of slice indices must match number of operand dimensions (%d vs %d)",
                    sr_is_seq(p[1]) ? p[1]->seq.n : 1, t->ndim);
  }
  SrVal *starts[SR_MAX_RANK];
  int ok = slice_indices(I, t, p[1]->seq.items, starts) == 0;
  SrVal *r = ok ? sr_lax_dynamic_slice(I, x, starts, sz) : NULL;
  for (int i = 0; i < t->ndim; i++) sr_unref(starts[i]);
  sr_unref(x);
  return r;
}

SrVal *sr_lax_dynamic_update_slice(SrInterp *I, SrVal *x, SrVal *update, SrVal **starts) {
  const SrType *t = vtype(I, x);
  int n = t->ndim + 2;
  SrVal **args = sr_xcalloc((size_t)n + 1, sizeof *args);
  args[0] = sr_ref(x);
  args[1] = sr_ref(update);
  for (int i = 0; i < t->ndim; i++) args[i + 2] = sr_ref(starts[i]);
  SrVal *r = NULL;
  if (sr_auto_insert_reshard(I, n, args) == 0) r = sr_bind(I, SR_P_dynamic_update_slice, n, args, 0, NULL);
  for (int i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  return r;
}

/* The update at the normalized starts (x's rank of them, in items). */
static SrVal *update_slice_at(SrInterp *I, SrVal *x, SrVal *update, SrVal *const *items) {
  const SrType *t = vtype(I, x);
  SrVal *starts[SR_MAX_RANK];
  if (slice_indices(I, t, items, starts) < 0) return NULL;
  SrVal *r = sr_lax_dynamic_update_slice(I, x, update, starts);
  for (int i = 0; i < t->ndim; i++) sr_unref(starts[i]);
  return r;
}

static SrVal *lax_dynamic_update_slice(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "dynamic_update_slice", "operand, update, start_indices", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *u = x ? arr(I, p[1]) : NULL;
  SrVal *r = NULL;
  if (u) {
    const SrType *t = vtype(I, x);
    if (!sr_is_seq(p[2]) || p[2]->seq.n != t->ndim) {
      SrBuf sb = SR_BUF_INIT;
      sr_shape_str(&sb, t);
      sr_raise(I, "ValueError", "Length of slice indices must match number of operand dimensions (%d vs %s)",
               sr_is_seq(p[2]) ? p[2]->seq.n : 1, sr_buf_str(&sb));
      sr_buf_free(&sb);
    } else {
      r = update_slice_at(I, x, u, p[2]->seq.items);
    }
  }
  sr_unref(x);
  sr_unref(u);
  return r;
}

/* lax.dynamic_update_index_in_dim: an update one smaller in rank gets the
   axis back (expand_dims), then dynamic_update_slice_in_dim: index on the
   axis, 0 elsewhere. */
static SrVal *lax_dynamic_update_index_in_dim(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "dynamic_update_index_in_dim", "operand, update, index, axis", p) < 0) return NULL;
  int64_t axis;
  if (sr_as_int(I, p[3], "axis", &axis) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *u = x ? arr(I, p[1]) : NULL;
  SrVal *r = NULL;
  if (u) {
    const SrType *t = vtype(I, x), *ut = vtype(I, u);
    if (axis < 0 || axis >= t->ndim) {
      sr_raise(I, "ValueError", "axis %lld is out of bounds for array of dimension %d", (long long)axis, t->ndim);
    } else if (ut->ndim != t->ndim && ut->ndim + 1 != t->ndim) {
      sr_raise(I, "ValueError", "dynamic_update_index_in_dim: update of rank %d for an operand of rank %d", ut->ndim,
               t->ndim);
    } else {
      SrVal *uu = ut->ndim == t->ndim ? sr_ref(u) : sr_lax_expand_dims(I, u, &axis, 1);
      SrVal *items[SR_MAX_RANK], *zero = sr_int(NULL, 0);
      for (int i = 0; i < t->ndim; i++) items[i] = i == axis ? p[2] : zero;
      if (uu) r = update_slice_at(I, x, uu, items);
      sr_unref(uu);
      sr_unref(zero);
    }
  }
  sr_unref(x);
  sr_unref(u);
  return r;
}

static SrVal *lax_pad(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "pad", "operand, padding_value, padding_config", p) < 0) return NULL;
  if (!sr_is_seq(p[2]) || p[2]->seq.n > SR_MAX_RANK)
    return sr_raise(I, "TypeError", "pad: padding_config must be a sequence of (low, high, interior) tuples");
  int nd = p[2]->seq.n, n3;
  int64_t cfg[3 * SR_MAX_RANK];
  for (int i = 0; i < nd; i++) {
    SrVal *c = p[2]->seq.items[i];
    if (!sr_is_seq(c) || c->seq.n != 3)
      return sr_raise(I, "TypeError", "pad: padding_config must be a sequence of (low, high, interior) tuples");
    if (ints_arg(I, c, cfg + 3 * i, &n3, "padding_config") < 0) return NULL;
  }
  SrVal *x = arr(I, p[0]);
  SrVal *pv = x ? arr(I, p[1]) : NULL;
  SrVal *r = pv ? sr_lax_pad(I, x, pv, cfg, nd) : NULL;
  sr_unref(x);
  sr_unref(pv);
  return r;
}

static SrVal *lax_iota(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int dt;
  int64_t size;
  if (sr_args_parse(I, a, "iota", "dtype, size", p) < 0) return NULL;
  if (sr_dtype_arg(I, p[0], &dt, "iota") < 0 || sr_as_int(I, p[1], "size", &size) < 0) return NULL;
  return sr_lax_iota(I, dt < 0 ? SR_I32 : (SrDtype)dt, &size, 1, 0, NULL);
}

static SrVal *lax_broadcasted_iota(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *sh = NULL;
  int dt;
  int64_t shape[SR_MAX_RANK], dim;
  int nd;
  if (sr_args_parse(I, a, "broadcasted_iota", "dtype, shape, dimension, *, out_sharding=", p) < 0) return NULL;
  if (sr_dtype_arg(I, p[0], &dt, "broadcasted_iota") < 0 || ints_arg(I, p[1], shape, &nd, "shape") < 0 ||
      sr_as_int(I, p[2], "dimension", &dim) < 0)
    return NULL;
  if (canon_sharding(I, p[3], "broadcasted_iota", 1, &sh) < 0) return NULL;
  SrVal *r = sr_lax_iota(I, dt < 0 ? SR_I32 : (SrDtype)dt, shape, nd, (int)dim, sh);
  sr_unref(sh);
  return r;
}

static SrVal *lax_full(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *sh = NULL;
  int dt;
  int64_t shape[SR_MAX_RANK];
  int nd;
  if (sr_args_parse(I, a, "full", "shape, fill_value, dtype=, *, sharding=", p) < 0) return NULL;
  if (ints_arg(I, p[0], shape, &nd, "shape") < 0 || sr_dtype_arg(I, p[2], &dt, "full") < 0) return NULL;
  if (canon_sharding(I, p[3], "full", 1, &sh) < 0) return NULL;
  SrVal *f = arr(I, p[1]);
  SrVal *r = f ? sr_lax_full(I, shape, nd, f, dt, sh) : NULL;
  sr_unref(f);
  sr_unref(sh);
  return r;
}

static SrVal *lax_rev(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "rev", "operand, dimensions", p) < 0) return NULL;
  int64_t d[SR_MAX_RANK];
  int n;
  if (ints_arg(I, p[1], d, &n, "dimensions") < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  SrVal *r = x ? sr_lax_rev(I, x, d, n) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_cumsum(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "cumsum", "operand, axis=, reverse=", p) < 0) return NULL;
  int64_t ax = 0;
  if (p[1] && sr_as_int(I, p[1], "axis", &ax) < 0) return NULL;
  SrVal *x = arr(I, p[0]);
  if (!x) return NULL;
  int64_t c;
  SrVal *r = NULL;
  if (sr_api_axis(I, ax, vtype(I, x)->ndim, &c) == 0)
    r = sr_bindv(I, SR_P_cumsum, 1, &x, "axis", sr_int(NULL, c), "reverse", sr_bool(p[2] && sr_val_truthy(p[2])),
                 NULL);
  sr_unref(x);
  return r;
}

/* lax.optimization_barrier: one multi-result equation over the leaves. */
static SrVal *lax_optimization_barrier(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "optimization_barrier", "operand", p) < 0) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  SrVal *r = sr_bind(I, SR_P_optimization_barrier, leaves->seq.n, leaves->seq.items, 0, NULL);
  SrVal *out = r ? sr_pytree_unflatten(p[0], r) : NULL;
  sr_unref(r);
  sr_unref(leaves);
  return out;
}

/* lax.stop_gradient: a stop_gradient equation on each leaf, as JAX's
   tree_map of _stop_gradient binds (its JVP rule gives a zero tangent). */
static SrVal *lax_stop_gradient(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "stop_gradient", "x", p) < 0) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  SrVal *outs = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < leaves->seq.n; i++) {
    SrVal *r = sr_bind(I, SR_P_stop_gradient, 1, &leaves->seq.items[i], 0, NULL);
    if (!r) {
      sr_unref(outs);
      sr_unref(leaves);
      return NULL;
    }
    sr_seq_push(NULL, outs, r);
  }
  SrVal *out = sr_pytree_unflatten(p[0], outs);
  sr_unref(outs);
  sr_unref(leaves);
  return out;
}

/* ======================================================================
 * sharding: reshard, with_sharding_constraint, auto_axes, explicit_axes
 * ====================================================================== */

/* Applies f to each array leaf of a tree (lists, tuples, dicts; None is an
   empty node), rebuilding the tree; `shardings` is one value for every
   leaf, or a tree with the same structure. */
typedef SrVal *(*LeafFn)(SrInterp *I, SrVal *leaf, SrVal *sharding, void *ctx);

static SrVal *map_leaves(SrInterp *I, SrVal *v, SrVal *sh, LeafFn f, void *ctx) {
  int sh_tree = sh && (sh->kind == SR_V_TUPLE || sh->kind == SR_V_LIST || sh->kind == SR_V_DICT);
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    if (sh_tree && (!sr_is_seq(sh) || sh->seq.n != v->seq.n))
      return sr_raise(I, "ValueError", "the shardings do not match the structure of the arguments");
    SrVal *r = sr_seq(NULL, v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *x = map_leaves(I, v->seq.items[i], sh_tree ? sh->seq.items[i] : sh, f, ctx);
      if (!x) {
        sr_unref(r);
        return NULL;
      }
      sr_seq_push(NULL, r, x);
    }
    return r;
  }
  if (v->kind == SR_V_DICT) {
    SrVal *r = sr_dict(NULL);
    for (int i = 0; i < v->dict.n; i++) {
      SrVal *s = sh;
      if (sh_tree) {
        s = sh->kind == SR_V_DICT ? sr_dict_get(sh, v->dict.keys[i]) : NULL;
        if (!s) {
          sr_unref(r);
          return sr_raise(I, "ValueError", "the shardings do not match the structure of the arguments");
        }
      }
      SrVal *x = map_leaves(I, v->dict.vals[i], s, f, ctx);
      if (!x) {
        sr_unref(r);
        return NULL;
      }
      sr_dict_set(NULL, r, sr_ref(v->dict.keys[i]), x);
    }
    return r;
  }
  if (v->kind == SR_V_NONE) return sr_none();
  return f(I, v, sh, ctx);
}

static SrVal *reshard_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)ctx;
  SrVal *x = arr(I, leaf);
  SrVal *r = x ? sr_lax_reshard(I, x, sh) : NULL;
  sr_unref(x);
  return r;
}

/* jax.reshard(xs, out_shardings) (pjit.reshard) */
static SrVal *jax_reshard(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "reshard", "xs, out_shardings", p) < 0) return NULL;
  return map_leaves(I, p[0], p[1], reshard_leaf, NULL);
}

/* pjit.assert_shardings_equal */
static int assert_shardings_equal(SrInterp *I, const SrType *t, const SrSpec *user) {
  SrVal *xs = sr_api_type_spec(t);
  const SrSpec *x = xs->spec;
  SrSpec u = *user;
  SrSpecEntry e[SR_MAX_RANK];
  for (int i = 0; i < t->ndim && i < SR_MAX_RANK; i++) e[i] = i < user->n ? user->e[i] : (SrSpecEntry){0, NULL};
  if (user->n < t->ndim) {
    u.e = e;
    u.n = t->ndim;
  }
  int ok = 1;
  for (int i = 0; i < x->n && i < u.n && ok; i++) {
    if (u.e[i].n == 1 && u.e[i].names[0] == SR_SPEC_UNCONSTRAINED) continue;
    if (x->e[i].n != u.e[i].n) ok = 0;
    for (int k = 0; ok && k < x->e[i].n; k++) ok = x->e[i].names[k] == u.e[i].names[k];
  }
  if (!ok) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_spec_repr(&b, x);
    sr_spec_repr(&c, &u);
    sr_raise(I, "AssertionError",
             "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The array "
             "sharding: %s did not match the sharding provided: %s. Please use `jax.sharding.reshard` to shard your "
             "input to the sharding you want.",
             b.p, c.p);
    sr_buf_free(&b);
    sr_buf_free(&c);
  }
  sr_unref(xs);
  return ok ? 0 : -1;
}

static SrVal *wsc_leaf(SrInterp *I, SrVal *leaf, SrVal *s, void *ctx) {
  (void)ctx;
  const SrMesh *m = sr_api_mesh(I);
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  SrVal *sh = NULL, *r = NULL;
  if (s && s->kind == SR_V_SPEC) {
    if (!m->n) {
      sr_unref(x);
      return sr_raise(I, "RuntimeError",
                      "with_sharding_constraint requires a non-empty mesh in context if you are passing "
                      "`PartitionSpec`s to shardings. You can define a context mesh via `jax.set_mesh(mesh)`. "
                      "Alternatively, provide `Sharding`s to shardings and then the mesh context manager is not "
                      "required.");
    }
    sh = sr_sharding_val(NULL, m, s->spec, NULL);
  } else if (s && s->kind == SR_V_SHARDING) {
    sh = sr_ref(s);
  } else {
    sr_unref(x);
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, s ? s : sr_none());
    sr_raise(I, "ValueError",
             "One of with_sharding_constraint arguments got sharding %s which is not allowed. Please only pass "
             "`jax.sharding.Sharding` instances.",
             b.p);
    sr_buf_free(&b);
    return NULL;
  }
  int all_explicit = 1;
  for (int i = 0; i < m->n; i++) all_explicit &= m->types[i] == SR_AXIS_EXPLICIT;
  if (all_explicit) {
    if (assert_shardings_equal(I, vtype(I, x), sh->sh.spec) == 0) r = sr_ref(x);
  } else {
    /* check_shardings_are_auto */
    const SrMesh *sm = sh->sh.mesh->abstract ? sh->sh.mesh : sr_mesh_abstract(sh->sh.mesh, 1);
    const SrSpec *sp = sh->sh.spec;
    int ok = 1;
    for (int i = 0; i < sp->n && ok; i++)
      for (int k = 0; k < sp->e[i].n && ok; k++) {
        int ax = sp->e[i].names[k] == SR_SPEC_UNCONSTRAINED ? -1 : sr_mesh_axis(sm, sp->e[i].names[k]);
        if (ax >= 0 && sm->types[ax] != SR_AXIS_AUTO) ok = 0;
      }
    if (!ok) {
      SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_spec_repr(&b, sp);
      sr_mesh_str(&c, sm);
      sr_raise(I, "ValueError",
               "The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes of the "
               "mesh. Got spec=%s and mesh=%s. You probably meant to use `reshard` API?",
               b.p, c.p);
      sr_buf_free(&b);
      sr_buf_free(&c);
    } else {
      SrVal *ud = sr_seq(NULL, SR_V_FROZENSET, 0);
      for (int i = 0; i < sp->n; i++)
        if (sp->e[i].n == 1 && sp->e[i].names[0] == SR_SPEC_UNCONSTRAINED) sr_seq_push(NULL, ud, sr_int(NULL, i));
      SrVal *psh = sr_sharding_val(NULL, sm, sp, NULL);
      r = sr_bindv(I, SR_P_sharding_constraint, 1, &x, "sharding", psh, "layout", sr_none(), "context_mesh",
                   sr_mesh_val(NULL, m), "unconstrained_dims", ud, NULL);
    }
  }
  sr_unref(sh);
  sr_unref(x);
  return r;
}

static SrVal *lax_with_sharding_constraint(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "with_sharding_constraint", "x, shardings", p) < 0) return NULL;
  return map_leaves(I, p[0], p[1], wsc_leaf, NULL);
}

/* auto_axes / explicit_axes (pjit._auto_axes, _explicit_axes) */
typedef struct AxesFn {
  SrVal *fn;
  SrVal *axes;     /* None, a str or a tuple */
  SrVal *sharding; /* out_sharding (auto) or in_sharding (explicit), or NULL */
  int explicit_;
} AxesFn;

static void axes_fn_free(void *d) {
  AxesFn *f = d;
  sr_unref(f->fn);
  sr_unref(f->axes);
  sr_unref(f->sharding);
  free(f);
}

/* The first mesh of the NamedShardings in a tree, or NULL. */
static const SrMesh *tree_sharding_mesh(SrVal *v) {
  if (!v) return NULL;
  if (v->kind == SR_V_SHARDING) return v->sh.mesh->abstract ? v->sh.mesh : sr_mesh_abstract(v->sh.mesh, 1);
  if (sr_is_seq(v))
    for (int i = 0; i < v->seq.n; i++) {
      const SrMesh *m = tree_sharding_mesh(v->seq.items[i]);
      if (m) return m;
    }
  return NULL;
}

/* pjit._get_new_mesh: the mesh with `axes` switched to type `to`; *prev
   the mesh it came from.  Returns 1 when there is no mesh at all. */
static int new_mesh(SrInterp *I, SrVal *axes_v, int to, const char *name, SrVal *shardings, const SrMesh **prev,
                    const SrMesh **nm, SrAxes *axes) {
  const SrMesh *cur = sr_api_mesh(I);
  const SrMesh *sm = tree_sharding_mesh(shardings);
  const SrMesh *use;
  if (!sm && !cur->n) return 1;
  if (sm && cur->n) {
    if (sr_mesh_shape(sm) != sr_mesh_shape(cur)) {
      SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_mesh_str(&b, cur);
      sr_mesh_str(&c, sm);
      sr_raise(I, "ValueError",
               "Context mesh %s must match the mesh passed to shardings %s. Recommended approach is to use "
               "`jax.set_mesh` context manager.",
               b.p, c.p);
      sr_buf_free(&b);
      sr_buf_free(&c);
      return -1;
    }
    use = cur;
  } else {
    use = cur->n ? cur : sm;
  }
  SrAxes ax = (SrAxes)((1ull << use->n) - 1);
  if (axes_v && axes_v->kind != SR_V_NONE && sr_api_axis_names(I, axes_v, use, &ax, name) < 0) return -1;
  uint8_t types[SR_MAX_AXES];
  memcpy(types, use->types, sizeof types);
  for (int i = 0; i < use->n; i++) {
    if (!(ax & (1u << i))) continue;
    if (use->types[i] == SR_AXIS_MANUAL) {
      sr_raise(I, "NotImplementedError",
               "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. Please file a bug at "
               "https://github.com/jax-ml/jax/issues with your use case");
      return -1;
    }
    types[i] = (uint8_t)to;
  }
  *prev = use;
  *nm = sr_mesh_with_types(use, types);
  *axes = ax;
  return 0;
}

static int push_mesh(SrInterp *I, const SrMesh *m) {
  if (I->jax->nabstract == 32) return sr_raise(I, "RuntimeError", "abstract meshes nested too deeply"), -1;
  I->jax->abstract[I->jax->nabstract++] = m;
  return 0;
}

static void pop_mesh(SrInterp *I) {
  if (I->jax->nabstract) I->jax->nabstract--;
}

/* core.modify_spec_for_auto_manual: the spec of a leaf with the axes that
   mesh m does not make Explicit dropped. */
static SrVal *explicit_spec_of(SrInterp *I, SrVal *leaf, const SrMesh *m) {
  const SrType *t = vtype(I, leaf);
  SrShardSpec s;
  if (!t) return sr_spec_val(NULL, &(SrSpec){0});
  sr_shard_of_type(t, &s);
  if (!s.mesh) s.mesh = sr_mesh_empty();
  for (int d = 0; d < s.ndim; d++) {
    int k = 0;
    for (int j = 0; j < s.nax[d]; j++) {
      int ax = sr_mesh_axis(m, s.mesh->names[s.ax[d][j]]);
      if (ax >= 0 && m->types[ax] == SR_AXIS_EXPLICIT) s.ax[d][k++] = s.ax[d][j];
    }
    s.nax[d] = (uint8_t)k;
  }
  for (int i = 0; i < s.mesh->n; i++) {
    int ax = sr_mesh_axis(m, s.mesh->names[i]);
    if (ax < 0 || m->types[ax] != SR_AXIS_EXPLICIT) {
      s.unreduced &= ~(1u << i);
      s.reduced &= ~(1u << i);
    }
  }
  if (!s.unreduced) s.ukind = SR_UK_NONE;
  return sr_shard_to_spec_val(&s);
}

static SrVal *auto_spec_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  SrVal *spec = explicit_spec_of(I, x, ctx);
  SrVal *r = sr_lax_reshard(I, x, spec);
  sr_unref(spec);
  sr_unref(x);
  return r;
}

static SrVal *axes_fn_call(SrInterp *I, SrArgs *a) {
  AxesFn *f = sr_current_builtin(I)->data;
  const char *kwname = f->explicit_ ? "in_sharding" : "out_sharding";
  SrVal *sh = f->sharding;
  /* the decorated function takes out_sharding= / in_sharding= at the call */
  const char *kw[64];
  SrVal *kwv[64];
  int nkw = 0;
  for (int i = 0; i < a->nkw && nkw < 64; i++) {
    if (!sh && strcmp(a->kw[i], kwname) == 0) {
      sh = a->kwv[i];
      continue;
    }
    kw[nkw] = a->kw[i];
    kwv[nkw++] = a->kwv[i];
  }
  if (!sh) return sr_raise(I, "TypeError", "Missing required keyword argument: '%s'", kwname);
  SrArgs ca = {a->n, a->v, nkw, kw, kwv, NULL};
  const SrMesh *prev, *nm;
  SrAxes axes;
  int rc = new_mesh(I, f->axes, f->explicit_ ? SR_AXIS_EXPLICIT : SR_AXIS_AUTO,
                    f->explicit_ ? "explicit_axes" : "auto_axes", f->explicit_ ? NULL : sh, &prev, &nm, &axes);
  if (rc < 0) return NULL;
  if (f->explicit_) {
    if (rc == 1)
      return sr_raise(I, "ValueError",
                      "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into a mesh context when "
                      "using `explicit_axes` API.");
    if (push_mesh(I, nm) < 0) return NULL;
    SrVal *out = NULL, *res = NULL;
    SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n);
    for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
    /* reshard(args, in_sharding): a lone sharding applies to every arg */
    SrVal *rs = map_leaves(I, args, sh, reshard_leaf, NULL);
    if (rs) {
      SrArgs ra = {rs->seq.n, rs->seq.items, nkw, kw, kwv, NULL};
      out = sr_call(I, f->fn, &ra);
    }
    pop_mesh(I);
    if (out) res = map_leaves(I, out, NULL, auto_spec_leaf, (void *)sr_api_mesh(I));
    sr_unref(rs);
    sr_unref(args);
    sr_unref(out);
    return res;
  }
  if (rc == 1) return sr_call(I, f->fn, &ca);
  SrAxes prev_auto = sr_mesh_axes_of_type(prev, SR_AXIS_AUTO);
  if (prev_auto == axes) return sr_call(I, f->fn, &ca);
  if (push_mesh(I, nm) < 0) return NULL;
  SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  SrVal *rs = map_leaves(I, args, NULL, auto_spec_leaf, (void *)nm), *out = NULL;
  if (rs) {
    SrArgs ra = {rs->seq.n, rs->seq.items, nkw, kw, kwv, NULL};
    out = sr_call(I, f->fn, &ra);
  }
  pop_mesh(I);
  SrVal *res = out ? map_leaves(I, out, sh, reshard_leaf, NULL) : NULL;
  sr_unref(rs);
  sr_unref(args);
  sr_unref(out);
  return res;
}

static SrVal *make_axes_fn(SrVal *fn, SrVal *axes, SrVal *sharding, int explicit_) {
  AxesFn *f = sr_xcalloc(1, sizeof *f);
  f->fn = sr_ref(fn);
  f->axes = axes ? sr_ref(axes) : NULL;
  f->sharding = sharding && sharding->kind != SR_V_NONE ? sr_ref(sharding) : NULL;
  f->explicit_ = explicit_;
  const char *nm = sr_builtin_name(fn);
  return sr_builtin_with(nm ? nm : "<function>", axes_fn_call, f, axes_fn_free);
}

static SrVal *axes_decorator(SrInterp *I, SrArgs *a) {
  AxesFn *f = sr_current_builtin(I)->data;
  if (a->n != 1 || a->nkw || !sr_is_callable(a->v[0]))
    return sr_raise(I, "TypeError", "%s expects a function", f->explicit_ ? "explicit_axes" : "auto_axes");
  return make_axes_fn(a->v[0], f->axes, f->sharding, f->explicit_);
}

static SrVal *axes_api(SrInterp *I, SrArgs *a, int explicit_) {
  SrVal *p[3];
  if (sr_args_parse(I, a, explicit_ ? "explicit_axes" : "auto_axes",
                    explicit_ ? "f=, *, axes=, in_sharding=" : "f=, *, axes=, out_sharding=", p) < 0)
    return NULL;
  if (p[0] && p[0]->kind != SR_V_NONE) return make_axes_fn(p[0], p[1], p[2], explicit_);
  AxesFn *f = sr_xcalloc(1, sizeof *f);
  f->axes = p[1] ? sr_ref(p[1]) : NULL;
  f->sharding = p[2] && p[2]->kind != SR_V_NONE ? sr_ref(p[2]) : NULL;
  f->explicit_ = explicit_;
  return sr_builtin_with(explicit_ ? "explicit_axes" : "auto_axes", axes_decorator, f, axes_fn_free);
}

static SrVal *jax_auto_axes(SrInterp *I, SrArgs *a) { return axes_api(I, a, 0); }
static SrVal *jax_explicit_axes(SrInterp *I, SrArgs *a) { return axes_api(I, a, 1); }

/* ======================================================================
 * tracing bodies
 * ====================================================================== */

/* Traces fn on args (values or abstract arrays: only their types count),
   as sr_trace_fn does, except that every captured value becomes a leading
   input (JAX's separate_consts), those in `pre` first and in that order. */
static SrJaxpr *api_trace(SrInterp *I, SrVal *fn, int nargs, SrVal **args, SrVal *pre, SrVal **out_tree,
                          SrVal **captured) {
  SrTrace *t = sr_trace_begin(I);
  t->capture_consts = 0;
  for (int i = 0; pre && i < pre->seq.n; i++) sr_trace_precapture(I, t, pre->seq.items[i]);
  SrVal **targs = sr_xcalloc((size_t)nargs + 1, sizeof *targs);
  int ok = 1;
  for (int i = 0; i < nargs && ok; i++) {
    SrVal *leaves = sr_pytree_flatten(I, args[i]);
    if (!leaves) {
      ok = 0;
      break;
    }
    SrVal *tl = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
    for (int k = 0; k < leaves->seq.n; k++)
      sr_seq_push(NULL, tl, sr_trace_arg(I, t, sr_value_type(I, leaves->seq.items[k])));
    targs[i] = sr_pytree_unflatten(args[i], tl);
    sr_unref(tl);
    sr_unref(leaves);
  }
  SrVal *res = NULL;
  if (ok) {
    SrArgs ca = {nargs, targs, 0, NULL, NULL, NULL};
    res = sr_trace_call(I, fn, &ca);
  }
  for (int i = 0; i < nargs; i++) sr_unref(targs[i]);
  free(targs);
  SrVal *outs = res ? sr_pytree_flatten(I, res) : NULL;
  if (!outs) {
    sr_unref(res);
    sr_trace_abort(I, t);
    return NULL;
  }
  SrJaxpr *j = sr_trace_end(I, t, outs->seq.items, outs->seq.n, captured);
  sr_unref(outs);
  if (!j) {
    sr_unref(res);
    return NULL;
  }
  const char *nm = sr_builtin_name(fn);
  if (nm && strrchr(nm, '.')) nm = strrchr(nm, '.') + 1;
  if (nm) j->name = sr_arena_strndup(j->prog->arena, nm, strlen(nm));
  if (out_tree) *out_tree = res;
  else sr_unref(res);
  return j;
}

/* Abstract arrays of the given types in the structure of `like`. */
static SrVal *abstract_like(SrVal *like, const SrType **types, int n) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, l, sr_array_abstract(types[i]));
  SrVal *r = sr_pytree_unflatten(like, l);
  sr_unref(l);
  return r;
}

static int n_leaves(SrInterp *I, SrVal *v) {
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

/* loops._check_carry_type's message for mismatched types. */
static SrVal *carry_type_error(SrInterp *I, const char *name, SrVal *fn, const SrType **in, const SrType **out,
                               int n) {
  SrFunction *f = sr_as_function(fn);
  const char *carry = f && f->node->params && f->node->params->n ? f->node->params->names[0] : NULL;
  SrBuf diffs = SR_BUF_INIT;
  int k = 0, total = 0;
  for (int i = 0; i < n; i++) total += !typematch(in[i], out[i]);
  for (int i = 0; i < n; i++) {
    if (typematch(in[i], out[i])) continue;
    SrBuf comp = SR_BUF_INIT;
    if (carry) sr_buf_printf(&comp, n > 1 ? "the input carry component %s[%d]" : "the input carry %s", carry, i);
    else if (n > 1) sr_buf_printf(&comp, "the input carry at path [%d]", i);
    else sr_buf_puts(&comp, "the input carry");
    SrBuf t1 = SR_BUF_INIT, t2 = SR_BUF_INIT;
    sr_type_str(&t1, in[i], 0);
    sr_type_str(&t2, out[i], 0);
    char *c = comp.p;
    if (total == 1) c[0] = (char)(c[0] - 'a' + 'A');
    sr_buf_printf(&diffs, "%s%s has type %s but the corresponding output carry component has type %s%s",
                  total > 1 ? "  * " : "", c, t1.p, t2.p, total > 1 ? (++k < total ? ";\n" : ".\n") : ".\n");
    sr_buf_free(&comp);
    sr_buf_free(&t1);
    sr_buf_free(&t2);
  }
  sr_raise(I, "TypeError",
           "%s function carry input and carry output must have equal types, but they differ:\n\n%s\nRevise the "
           "function so that all output types match the corresponding input types.",
           name, diffs.p);
  sr_buf_free(&diffs);
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
 * shard_map (shard_map.py: shard_map, _shard_map_staging)
 * ====================================================================== */

typedef struct SMapFn {
  SrVal *fn;
  SrVal *mesh;       /* the mesh argument, or NULL */
  SrVal *in_specs;   /* NULL: Infer */
  SrVal *out_specs;
  SrVal *axis_names; /* NULL or a set */
  int check_vma;
  /* set while tracing the body */
  SrVal *out_specs_flat;
  const SrMesh *inner;
} SMapFn;

static void smap_free(void *d) {
  SMapFn *f = d;
  sr_unref(f->fn);
  sr_unref(f->mesh);
  sr_unref(f->in_specs);
  sr_unref(f->out_specs);
  sr_unref(f->axis_names);
  sr_unref(f->out_specs_flat);
  free(f);
}

/* tree_util.broadcast_prefix: one spec per leaf of v. */
static int spec_prefix(SrInterp *I, SrVal *spec, SrVal *v, SrVal *out, const char *what) {
  if (spec->kind == SR_V_SPEC || spec->kind == SR_V_NONE) {
    int n = n_leaves(I, v);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) sr_seq_push(NULL, out, sr_ref(spec));
    return 0;
  }
  if ((spec->kind == SR_V_TUPLE || spec->kind == SR_V_LIST) && (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) &&
      spec->seq.n == v->seq.n) {
    for (int i = 0; i < v->seq.n; i++)
      if (spec_prefix(I, spec->seq.items[i], v->seq.items[i], out, what) < 0) return -1;
    return 0;
  }
  if (spec->kind == SR_V_TUPLE || spec->kind == SR_V_LIST) {
    sr_raise(I, "ValueError",
             "%s is not a tree prefix of the corresponding value: the spec has %d entries where the value has %s",
             what, spec->seq.n, sr_is_seq(v) ? "a different number of children" : "a leaf");
    return -1;
  }
  SrBuf b = SR_BUF_INIT;
  sr_val_repr(&b, spec);
  sr_raise(I, "TypeError",
           "shard_map %s argument must be a pytree of `jax.sharding.PartitionSpec` instances, but:\n\n  %s is %s of "
           "type %s, \n\nCheck the %s values passed to shard_map.",
           what, what, b.p, sr_val_kind_name(spec), what);
  sr_buf_free(&b);
  return -1;
}

/* The axes of mesh m a spec's partitions name. */
static SrAxes spec_axes(const SrSpec *s, const SrMesh *m) {
  SrAxes a = 0;
  for (int i = 0; i < s->n; i++)
    for (int k = 0; k < s->e[i].n; k++) {
      int ax = s->e[i].names[k] == SR_SPEC_UNCONSTRAINED ? -1 : sr_mesh_axis(m, s->e[i].names[k]);
      if (ax >= 0) a |= 1u << ax;
    }
  return a;
}

/* The body's output wrapper: f's results with the implicit pvary onto the
   axes each out_spec names (add_implicit_pvary). */
static SrVal *smap_body(SrInterp *I, SrArgs *a) {
  SMapFn *f = sr_current_builtin(I)->data;
  SrVal *ans = sr_call(I, f->fn, a);
  if (!ans) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, ans);
  SrVal *specs = sr_seq(NULL, SR_V_LIST, 0);
  if (!leaves || spec_prefix(I, f->out_specs, ans, specs, "out_specs") < 0) {
    sr_unref(ans);
    sr_unref(leaves);
    sr_unref(specs);
    return NULL;
  }
  sr_unref(f->out_specs_flat);
  f->out_specs_flat = specs;
  if (f->check_vma) {
    const SrMesh *m = sr_api_mesh(I);
    for (int i = 0; i < leaves->seq.n; i++) {
      SrVal *s = specs->seq.items[i];
      if (s->kind != SR_V_SPEC) continue;
      const SrType *t = vtype(I, leaves->seq.items[i]);
      SrAxes need = spec_axes(s->spec, m) & ~(t ? sr_api_axes_on(t, t->varying, m) : 0);
      if (!need) continue;
      SrVal *x = sr_lax_pvary(I, leaves->seq.items[i], need);
      if (!x) {
        sr_unref(ans);
        sr_unref(leaves);
        return NULL;
      }
      sr_unref(leaves->seq.items[i]);
      leaves->seq.items[i] = x;
    }
  }
  SrVal *r = sr_pytree_unflatten(ans, leaves);
  sr_unref(ans);
  sr_unref(leaves);
  return r;
}

/* shard_map._shard_shaped_array: an argument's type inside the body. */
static const SrType *shard_type(const SrType *t, const SrSpec *s, const SrMesh *am, const SrMesh *inner,
                                int check_vma) {
  const SrMesh *shape = sr_mesh_shape(am);
  SrTypeBuilder b;
  sr_type_builder(&b, t);
  b.mesh = shape;
  SrAxes outer_manual = sr_mesh_axes_of_type(am, SR_AXIS_MANUAL);
  SrAxes inner_explicit = sr_mesh_axes_of_type(inner, SR_AXIS_EXPLICIT);
  for (int d = 0; d < t->ndim; d++) {
    SrDim *dim = &b.dims[d];
    dim->nax = 0;
    for (int k = 0; k < t->dims[d].nax; k++) {
      int ax = sr_mesh_axis(shape, t->mesh->names[t->dims[d].ax[k]]);
      if (ax >= 0 && (inner_explicit & (1u << ax))) dim->ax[dim->nax++] = (uint8_t)ax;
    }
    if (d < s->n && dim->size >= 0)
      for (int k = 0; k < s->e[d].n; k++) {
        int ax = sr_mesh_axis(am, s->e[d].names[k]);
        if (ax >= 0 && am->sizes[ax] > 0) dim->size /= am->sizes[ax];
      }
  }
  SrAxes u = sr_api_axes_on(t, t->unreduced, shape) & ~outer_manual;
  SrAxes r = sr_api_axes_on(t, t->reduced, shape) & ~outer_manual;
  b.varying = (check_vma ? spec_axes(s, shape) : 0) | sr_api_axes_on(t, t->varying, shape);
  b.unreduced = (u & inner_explicit) | (check_vma ? u : 0);
  b.reduced = (r & inner_explicit) | (check_vma ? r : 0);
  b.ukind = b.unreduced ? t->ukind : SR_UK_NONE;
  return sr_type_get(&b);
}

/* shard_map._manual_spec: an argument's spec restricted to the manual axes. */
static SrVal *manual_spec(SrInterp *I, const SrType *t, SrAxes manual, const SrMesh *am) {
  SrShardSpec s;
  sr_shard_of_type(t, &s);
  if (!s.mesh) s.mesh = sr_mesh_shape(am);
  for (int d = 0; d < s.ndim; d++) {
    int keep[SR_MAX_DIM_AXES], n = s.nax[d];
    for (int k = 0; k < n; k++) {
      int ax = sr_mesh_axis(am, s.mesh->names[s.ax[d][k]]);
      keep[k] = ax >= 0 && (manual & (1u << ax));
    }
    while (n && !keep[n - 1]) n--;
    for (int k = 0; k < n; k++)
      if (!keep[k]) {
        SrVal *v = sr_shard_to_spec_val(&s);
        SrBuf b = SR_BUF_INIT;
        sr_val_repr(&b, v);
        sr_raise(I, "ValueError", "Invalid spec: %s", b.p);
        sr_buf_free(&b);
        sr_unref(v);
        return NULL;
      }
    s.nax[d] = (uint8_t)n;
  }
  return sr_shard_to_spec_val(&s);
}

/* shard_map._check_specs: the leaves of in_specs or out_specs (None
   skipped) must be P's naming only manual axes.  Collects JAX's lines,
   "  in_specs[0] is ... of type ..., " for a leaf that is no P, and
   "  in_specs[0] refers to 'Z'" for an axis that is not manual. */
static void collect_spec_errors(SrVal *v, SrBuf *path, const char *prefix, const SrMesh *am, SrAxes manual,
                                SrBuf *types, SrBuf *names) {
  size_t at = path->len;
  if (v->kind == SR_V_NONE) return;
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    for (int i = 0; i < v->seq.n; i++) {
      sr_buf_printf(path, "[%d]", i);
      collect_spec_errors(v->seq.items[i], path, prefix, am, manual, types, names);
      path->len = at;
      path->p[at] = 0;
    }
    return;
  }
  if (v->kind == SR_V_DICT) {
    for (int i = 0; i < v->dict.n; i++) {
      sr_buf_puts(path, "[");
      sr_val_repr(path, v->dict.keys[i]);
      sr_buf_puts(path, "]");
      collect_spec_errors(v->dict.vals[i], path, prefix, am, manual, types, names);
      path->len = at;
      path->p[at] = 0;
    }
    return;
  }
  if (v->kind != SR_V_SPEC) {
    if (types->len) sr_buf_puts(types, "\n\n");
    sr_buf_printf(types, "  %s_specs%.*s is ", prefix, (int)at, path->p ? path->p : "");
    sr_val_str(types, v);
    sr_buf_printf(types, " of type %s, ", sr_val_kind_name(v));
    return;
  }
  const SrSpec *sp = v->spec;
  for (int d = 0; d < sp->n; d++)
    for (int k = 0; k < sp->e[d].n; k++) {
      const char *nm = sp->e[d].names[k];
      int ax = nm == SR_SPEC_UNCONSTRAINED ? -1 : sr_mesh_axis(am, nm);
      if (ax >= 0 && (manual >> ax & 1)) continue;
      if (names->len) sr_buf_puts(names, "\n\n");
      sr_buf_printf(names, "  %s_specs%.*s refers to ", prefix, (int)at, path->p ? path->p : "");
      if (nm == SR_SPEC_UNCONSTRAINED) sr_buf_puts(names, "UNCONSTRAINED");
      else sr_buf_printf(names, "'%s'", nm);
    }
}

static int check_specs(SrInterp *I, SrVal *specs, const char *prefix, const SrMesh *am, SrAxes manual) {
  SrBuf path = SR_BUF_INIT, types = SR_BUF_INIT, names = SR_BUF_INIT;
  collect_spec_errors(specs, &path, prefix, am, manual, &types, &names);
  int rc = 0;
  if (types.len) {
    sr_raise(I, "TypeError",
             "shard_map %s_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, but:\n\n%s\n\n"
             "Check the %s_specs values passed to shard_map.",
             prefix, types.p, prefix);
    rc = -1;
  } else if (names.len) {
    SrBuf m = SR_BUF_INIT;
    sr_axes_frozenset_str(&m, am, manual);
    sr_raise(I, "ValueError",
             "shard_map %s_specs argument must refer to an axis marked as manual (%s), but:\n\n%s\n\n"
             "Check the %s_specs values passed to shard_map.",
             prefix, m.p, names.p, prefix);
    sr_buf_free(&m);
    rc = -1;
  }
  sr_buf_free(&path);
  sr_buf_free(&types);
  sr_buf_free(&names);
  return rc;
}

/* shard_map._shmap_checks on axis_names: a set or frozenset (empty: all
   the mesh's axes) of the mesh's axes. */
static int smap_axis_names(SrInterp *I, SrVal *v, const SrMesh *am, SrAxes *out) {
  *out = (SrAxes)((1ull << am->n) - 1);
  if (!v) return 0;
  if (v->kind != SR_V_SET && v->kind != SR_V_FROZENSET)
    return sr_raise(I, "TypeError",
                    "`axis_names` argument of shard_map should be of type `frozenset` or `set`. Got type: <class '%s'>",
                    sr_val_kind_name(v)),
           -1;
  if (!v->seq.n) return 0;
  int sub = 1;
  for (int i = 0; i < v->seq.n && sub; i++) {
    SrVal *e = v->seq.items[i];
    sub = (e->kind == SR_V_STR || e->kind == SR_V_WORD) && sr_mesh_axis(am, sr_intern(e->str.s, e->str.n)) >= 0;
  }
  if (!sub) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    if (v->kind == SR_V_SET) sr_buf_puts(&b, "frozenset(");
    sr_val_repr(&b, v);
    if (v->kind == SR_V_SET) sr_buf_puts(&b, ")");
    sr_axes_frozenset_str(&c, am, (SrAxes)((1ull << am->n) - 1));
    sr_raise(I, "ValueError", "jax.shard_map requires axis_names=%s to be a subset of mesh.axis_names=%s", b.p, c.p);
    sr_buf_free(&b);
    sr_buf_free(&c);
    return -1;
  }
  return sr_api_axis_names(I, v, am, out, "axis_names");
}

static SrVal *smap_call(SrInterp *I, SrArgs *a) {
  SMapFn *f = sr_current_builtin(I)->data;
  if (a->nkw) return sr_raise(I, "TypeError", "a shard_map function takes positional arguments only");
  const SrMesh *ctx = sr_api_mesh(I), *am;
  SrVal *mesh_param;
  if (!f->mesh || f->mesh->kind == SR_V_NONE) {
    if (!ctx->n)
      return sr_raise(I, "ValueError", "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh context");
    am = ctx;
    mesh_param = sr_mesh_val(NULL, ctx);
  } else {
    if (f->mesh->kind != SR_V_MESH)
      return sr_raise(I, "TypeError", "shard_map requires a `jax.sharding.Mesh` or a `jax.sharding.AbstractMesh` instance for its second argument, but got %s.",
                      sr_val_kind_name(f->mesh));
    am = f->mesh->mesh->abstract ? f->mesh->mesh : sr_mesh_abstract(f->mesh->mesh, 1);
    if (ctx->n && (sr_mesh_shape(am) != sr_mesh_shape(ctx) || memcmp(am->types, ctx->types, sizeof am->types))) {
      SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_mesh_str(&b, ctx);
      sr_mesh_str(&c, f->mesh->mesh);
      sr_raise(I, "ValueError", "The context mesh %s should match the mesh passed to shard_map %s", b.p, c.p);
      sr_buf_free(&b);
      sr_buf_free(&c);
      return NULL;
    }
    if (!am->n) return sr_raise(I, "ValueError", "shard_map requires a non-empty mesh. Got Mesh()");
    mesh_param = sr_ref(f->mesh);
  }
  SrAxes axis_names;
  if (smap_axis_names(I, f->axis_names, am, &axis_names) < 0) {
    sr_unref(mesh_param);
    return NULL;
  }
  SrAxes explicit_ = sr_mesh_axes_of_type(am, SR_AXIS_EXPLICIT);
  if (!f->in_specs && (axis_names & ~explicit_)) {
    SrBuf b = SR_BUF_INIT;
    sr_axes_frozenset_str(&b, am, axis_names);
    SrBuf c = SR_BUF_INIT;
    int k = 0;
    for (int i = 0; i < am->n; i++)
      if (axis_names & (1u << i)) sr_buf_printf(&c, k++ ? ", %s" : "%s", sr_axis_type_name(am->types[i]));
    sr_raise(I, "TypeError",
             "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, but it was "
             "`None` when axis_names=%s are of type %s",
             b.p, c.p);
    sr_buf_free(&b);
    sr_buf_free(&c);
    sr_unref(mesh_param);
    return NULL;
  }
  if ((f->in_specs && check_specs(I, f->in_specs, "in", am, axis_names) < 0) ||
      check_specs(I, f->out_specs, "out", am, axis_names) < 0) {
    sr_unref(mesh_param);
    return NULL;
  }
  SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  SrVal *leaves = sr_pytree_flatten(I, args);
  SrVal *specs = sr_seq(NULL, SR_V_LIST, 0), *result = NULL, *out_tree = NULL, *captured = NULL, *targs = NULL;
  SrJaxpr *body = NULL;
  const SrType **itypes = NULL;
  SrPList ps = {0};
  if (!leaves) goto done;
  int n = leaves->seq.n;
  if (f->in_specs) {
    if (spec_prefix(I, f->in_specs, args, specs, "in_specs") < 0) goto done;
  } else {
    for (int i = 0; i < n; i++) {
      SrVal *s = manual_spec(I, vtype(I, leaves->seq.items[i]), axis_names, am);
      if (!s) goto done;
      sr_seq_push(NULL, specs, s);
    }
  }
  for (int i = 0; i < n; i++)
    if (specs->seq.items[i]->kind != SR_V_SPEC) {
      sr_raise(I, "NotImplementedError", "shard_map: None in in_specs (static arguments) is not supported");
      goto done;
    }
  /* with every axis manual and Explicit, in_specs must match the args */
  if (axis_names == (SrAxes)((1ull << am->n) - 1) && axis_names == explicit_) {
    for (int i = 0; i < n; i++) {
      const SrType *t = vtype(I, leaves->seq.items[i]);
      SrVal *ts = sr_api_type_spec(t);
      const SrSpec *us = specs->seq.items[i]->spec;
      SrSpec u = *us;
      SrSpecEntry e[SR_MAX_RANK];
      if (us->n < t->ndim) {
        for (int d = 0; d < t->ndim; d++) e[d] = d < us->n ? us->e[d] : (SrSpecEntry){0, NULL};
        u.e = e;
        u.n = t->ndim;
      }
      SrBuf x1 = SR_BUF_INIT, x2 = SR_BUF_INIT;
      sr_val_repr(&x1, ts);
      sr_spec_repr(&x2, &u);
      int eq = strcmp(sr_buf_str(&x1), sr_buf_str(&x2)) == 0;
      if (!eq) {
        SrBuf x3 = SR_BUF_INIT;
        sr_type_str(&x3, t, 0);
        sr_raise(I, "ValueError",
                 "in_specs passed to shard_map: %s does not match the specs of the input: %s for arg: %s. `in_specs` "
                 "is an optional argument so you can omit specifying it and shard_map will infer the in_specs from "
                 "the arguments. If you want to reshard your inputs, you can use `jax.reshard` on the arguments and "
                 "then pass those args to shard_map.",
                 x2.p, x1.p, x3.p);
        sr_buf_free(&x3);
      }
      sr_buf_free(&x1);
      sr_buf_free(&x2);
      sr_unref(ts);
      if (!eq) goto done;
    }
  }
  {
    uint8_t types[SR_MAX_AXES];
    memcpy(types, am->types, sizeof types);
    for (int i = 0; i < am->n; i++)
      if (axis_names & (1u << i)) types[i] = SR_AXIS_MANUAL;
    const SrMesh *inner = sr_mesh_with_types(am, types);
    itypes = sr_xcalloc((size_t)n + 1, sizeof *itypes);
    for (int i = 0; i < n; i++)
      itypes[i] = shard_type(vtype(I, leaves->seq.items[i]), specs->seq.items[i]->spec, am, inner, f->check_vma);
    targs = abstract_like(args, itypes, n);
    f->inner = inner;
    SrVal *wrapper = sr_builtin_with(sr_builtin_name(f->fn) ? sr_builtin_name(f->fn) : "f", smap_body, f, NULL);
    int saved_vma = I->jax->check_vma;
    if (push_mesh(I, inner) < 0) {
      sr_unref(wrapper);
      goto done;
    }
    I->jax->check_vma = f->check_vma;
    body = api_trace(I, wrapper, targs->seq.n, targs->seq.items, NULL, &out_tree, &captured);
    I->jax->check_vma = saved_vma;
    pop_mesh(I);
    sr_unref(wrapper);
    if (!body) goto done;
    SrAxes newly = axis_names & ~sr_mesh_axes_of_type(am, SR_AXIS_MANUAL);
    SrVal *in_specs = sr_seq(NULL, SR_V_TUPLE, 0);
    for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, in_specs, sr_spec_val(NULL, &(SrSpec){0}));
    for (int i = 0; i < n; i++) sr_seq_push(NULL, in_specs, sr_ref(specs->seq.items[i]));
    SrVal *out_specs = sr_seq(NULL, SR_V_TUPLE, 0);
    for (int i = 0; f->out_specs_flat && i < f->out_specs_flat->seq.n; i++)
      sr_seq_push(NULL, out_specs, sr_ref(f->out_specs_flat->seq.items[i]));
    SrVal *nm = sr_seq(NULL, SR_V_FROZENSET, 0);
    for (int i = 0; i < am->n; i++)
      if (newly & (1u << i)) sr_seq_push(NULL, nm, sr_str_cstr(NULL, am->names[i]));
    sr_plist_add(&ps, "mesh", sr_ref(mesh_param));
    sr_plist_add(&ps, "in_specs", in_specs);
    sr_plist_add(&ps, "out_specs", out_specs);
    sr_plist_add(&ps, "jaxpr", sr_jaxpr_val(NULL, body));
    sr_plist_add(&ps, "check_vma", sr_bool(f->check_vma));
    sr_plist_add(&ps, "newly_manual_axes", nm);
    SrVal *ops = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = 0; i < captured->seq.n; i++) sr_seq_push(NULL, ops, sr_ref(captured->seq.items[i]));
    for (int i = 0; i < n; i++) sr_seq_push(NULL, ops, sr_ref(leaves->seq.items[i]));
    SrVal *r = sr_bind(I, SR_P_shard_map, ops->seq.n, ops->seq.items, ps.n, ps.p);
    sr_unref(ops);
    if (r) result = sr_pytree_unflatten(out_tree, r);
    sr_unref(r);
  }
done:
  sr_plist_free(&ps);
  if (body) sr_program_unref(body->prog);
  sr_unref(f->out_specs_flat);
  f->out_specs_flat = NULL;
  free(itypes);
  sr_unref(targs);
  sr_unref(out_tree);
  sr_unref(captured);
  sr_unref(specs);
  sr_unref(leaves);
  sr_unref(args);
  sr_unref(mesh_param);
  return result;
}

static SrVal *make_smap(SrVal *fn, SrVal **p) {
  SMapFn *f = sr_xcalloc(1, sizeof *f);
  f->fn = sr_ref(fn);
  f->out_specs = sr_ref(p[0]);
  f->in_specs = p[1] ? sr_ref(p[1]) : NULL;
  f->mesh = p[2] ? sr_ref(p[2]) : NULL;
  f->axis_names = p[3] ? sr_ref(p[3]) : NULL;
  f->check_vma = p[4] ? sr_val_truthy(p[4]) : 1;
  const char *nm = sr_builtin_name(fn);
  return sr_builtin_with(nm ? nm : "<function>", smap_call, f, smap_free);
}

typedef struct SMapDeco {
  SrVal *p[5];
} SMapDeco;

static void smap_deco_free(void *d) {
  SMapDeco *s = d;
  for (int i = 0; i < 5; i++) sr_unref(s->p[i]);
  free(s);
}

static SrVal *smap_decorator(SrInterp *I, SrArgs *a) {
  SMapDeco *s = sr_current_builtin(I)->data;
  if (a->n != 1 || a->nkw || !sr_is_callable(a->v[0])) return sr_raise(I, "TypeError", "shard_map expects a function");
  return make_smap(a->v[0], s->p);
}

static SrVal *jax_shard_map(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "shard_map", "f=, *, out_specs, in_specs=, mesh=, axis_names=, check_vma=", p) < 0)
    return NULL;
  if (p[0] && p[0]->kind != SR_V_NONE) {
    if (!sr_is_callable(p[0]))
      return sr_raise(I, "TypeError", "shard_map requires a callable for its first argument, but got %s of type %s.",
                      "a value", sr_val_kind_name(p[0]));
    return make_smap(p[0], p + 1);
  }
  SMapDeco *s = sr_xcalloc(1, sizeof *s);
  for (int i = 0; i < 5; i++) s->p[i] = p[i + 1] ? sr_ref(p[i + 1]) : NULL;
  return sr_builtin_with("shard_map", smap_decorator, s, smap_deco_free);
}

/* ======================================================================
 * manual-mode collectives (lax/parallel.py)
 * ====================================================================== */

/* The axis names argument as given (str or tuple) and as axes of the
   context mesh; every name must be bound (Manual in the context). */
typedef struct AxisArg {
  SrVal *names;  /* a tuple of str, as the user ordered them */
  SrAxes axes;
  int64_t size;  /* product of the sizes (psum(1, axis_name)) */
} AxisArg;

static int axis_arg(SrInterp *I, SrVal *v, AxisArg *out) {
  const SrMesh *m = sr_api_mesh(I);
  out->names = sr_seq(NULL, SR_V_TUPLE, 0);
  out->axes = 0;
  out->size = 1;
  int n = 1;
  SrVal **items = &v;
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    n = v->seq.n;
    items = v->seq.items;
  } else if (v->kind == SR_V_SET || v->kind == SR_V_FROZENSET) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    sr_raise(I, "TypeError", "axis_name=%s must be a tuple or a str. Got %s", b.p, b.p);
    sr_buf_free(&b);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    const char *s = sr_as_str(I, items[i], "axis_name");
    if (!s) return -1;
    int ax = sr_mesh_axis(m, s);
    if (ax < 0 || m->types[ax] != SR_AXIS_MANUAL) {
      sr_raise(I, "NameError", "unbound axis name: %s", s);
      return -1;
    }
    sr_seq_push(NULL, out->names, sr_str_cstr(NULL, s));
    out->axes |= 1u << ax;
    out->size *= m->sizes[ax];
  }
  return 0;
}

/* parallel._get_from: which state the input is in along the axes. */
static const char *state_from(SrInterp *I, SrVal *x, const AxisArg *aa, const char *name) {
  const SrMesh *m = sr_api_mesh(I);
  const SrType *t = vtype(I, x);
  SrAxes v = sr_api_axes_on(t, t->varying, m), u = sr_api_axes_on(t, t->unreduced, m),
         r = sr_api_axes_on(t, t->reduced, m);
  int seen[4] = {0};
  for (int i = 0; i < m->n; i++) {
    if (!(aa->axes & (1u << i))) continue;
    seen[(v & (1u << i)) ? 0 : (u & (1u << i)) ? 1 : (r & (1u << i)) ? 2 : 3] = 1;
  }
  static const char *const names[4] = {"varying", "unreduced", "reduced", "invarying"};
  int k = seen[0] + seen[1] + seen[2] + seen[3];
  if (k > 1) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT, d = SR_BUF_INIT;
    sr_type_long(&b, t);
    sr_val_repr(&c, aa->names);
    sr_buf_putc(&d, '{');
    int j = 0;
    for (int i = 0; i < 4; i++)
      if (seen[i]) sr_buf_printf(&d, j++ ? ", '%s'" : "'%s'", names[i]);
    sr_buf_putc(&d, '}');
    sr_raise(I, "ValueError",
             "%s can only accept axis_name which corresponds to one of varying, unreduced, reduced or invarying state "
             "of the input. Got input type: %s, axes: %s and input state: %s",
             name, b.p, c.p, d.p);
    sr_buf_free(&b);
    sr_buf_free(&c);
    sr_buf_free(&d);
    return NULL;
  }
  for (int i = 0; i < 4; i++)
    if (seen[i]) return names[i];
  return "invarying";
}

/* insert_collective_pvary */
static SrVal *collective_pvary(SrInterp *I, SrVal *x, const AxisArg *aa) {
  if (!I->jax->check_vma) return sr_ref(x);
  const SrMesh *m = sr_api_mesh(I);
  const SrType *t = vtype(I, x);
  return sr_lax_pvary(I, x, aa->axes & ~sr_api_axes_on(t, t->varying, m));
}

typedef struct Coll {
  AxisArg aa;
  SrVal *axis_name; /* as passed */
  int64_t i1, i2;   /* axis / dims */
  int tiled;
  const char *to;
  SrVal *perm;
} Coll;

static SrVal *psum_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  if (!sr_array_of(leaf)) {
    /* the constant case: size * x */
    if (leaf->kind == SR_V_INT || leaf->kind == SR_V_BOOL) return sr_int(NULL, leaf->i * c->aa.size);
    if (leaf->kind == SR_V_FLOAT) return sr_float(NULL, leaf->f * (double)c->aa.size);
  }
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  const char *from = state_from(I, x, &c->aa, "jax.lax.psum");
  SrVal *r = NULL;
  if (!from) {
  } else if (strcmp(from, "unreduced") == 0) {
    r = sr_api_first(sr_bindv(I, SR_P_unreduced_psum, 1, &x, "axes", sr_ref(c->aa.names), NULL));
  } else {
    if (vtype(I, x)->dtype == SR_BOOL) {
      SrVal *y = sr_lax_convert(I, x, SR_I32, 0, NULL);
      sr_unref(x);
      x = y;
    }
    if (x && I->jax->check_vma) {
      SrVal *y = collective_pvary(I, x, &c->aa);
      if (y) r = sr_api_first(sr_bindv(I, SR_P_psum_invariant, 1, &y, "axes", sr_ref(c->aa.names), NULL));
      sr_unref(y);
    } else if (x) {
      r = sr_api_first(sr_bindv(I, SR_P_psum, 1, &x, "axes", sr_ref(c->aa.names), "axis_index_groups", sr_none(),
                                NULL));
    }
  }
  sr_unref(x);
  return r;
}

static SrVal *pmax_leaf_prim(SrInterp *I, SrVal *leaf, Coll *c, int prim, int uprim, const char *name) {
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  const char *from = state_from(I, x, &c->aa, name);
  SrVal *r = NULL;
  if (from && strcmp(from, "unreduced") == 0) {
    r = sr_api_first(sr_bindv(I, uprim, 1, &x, "axes", sr_ref(c->aa.names), NULL));
  } else if (from) {
    SrVal *y = collective_pvary(I, x, &c->aa);
    if (y) r = sr_api_first(sr_bindv(I, prim, 1, &y, "axes", sr_ref(c->aa.names), "axis_index_groups", sr_none(), NULL));
    sr_unref(y);
  }
  sr_unref(x);
  return r;
}

static SrVal *pmax_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  return pmax_leaf_prim(I, leaf, ctx, SR_P_pmax, SR_P_unreduced_pmax, "jax.lax.pmax");
}

static SrVal *pmin_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  return pmax_leaf_prim(I, leaf, ctx, SR_P_pmin, SR_P_unreduced_pmin, "jax.lax.pmin");
}

static SrVal *coll_over(SrInterp *I, SrArgs *a, const char *name, LeafFn f) {
  SrVal *p[3];
  if (sr_args_parse(I, a, name, "x, axis_name, *, axis_index_groups=", p) < 0) return NULL;
  if (p[2] && p[2]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "%s: axis_index_groups is not supported", name);
  Coll c = {0};
  SrVal *r = NULL;
  if (axis_arg(I, p[1], &c.aa) == 0) r = c.aa.axes ? map_leaves(I, p[0], NULL, f, &c) : sr_ref(p[0]);
  sr_unref(c.aa.names);
  return r;
}

static SrVal *lax_psum(SrInterp *I, SrArgs *a) { return coll_over(I, a, "psum", psum_leaf); }
static SrVal *lax_pmax(SrInterp *I, SrArgs *a) { return coll_over(I, a, "pmax", pmax_leaf); }
static SrVal *lax_pmin(SrInterp *I, SrArgs *a) { return coll_over(I, a, "pmin", pmin_leaf); }

static SrVal *div_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *fn = sr_lookup_qualname("jax.numpy.true_divide");
  SrVal *n = sr_int(NULL, c->aa.size);
  SrVal *argv[2] = {leaf, n};
  SrArgs da = {2, argv, 0, NULL, NULL, NULL};
  SrVal *r = sr_call(I, fn, &da);
  sr_unref(n);
  return r;
}

/* pmean: psum, then v / n */
static SrVal *lax_pmean(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "pmean", "x, axis_name, *, axis_index_groups=", p) < 0) return NULL;
  Coll c = {0};
  SrVal *r = NULL;
  if (axis_arg(I, p[1], &c.aa) == 0) {
    SrVal *s = c.aa.axes ? map_leaves(I, p[0], NULL, psum_leaf, &c) : sr_ref(p[0]);
    r = s ? map_leaves(I, s, NULL, div_leaf, &c) : NULL;
    sr_unref(s);
  }
  sr_unref(c.aa.names);
  return r;
}

static SrVal *all_gather_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  int nd = vtype(I, x)->ndim;
  int64_t dim;
  SrVal *r = NULL;
  if (sr_api_axis(I, c->i1, c->tiled ? nd : nd + 1, &dim) < 0) {
    sr_unref(x);
    return NULL;
  }
  if (strcmp(c->to, "reduced") == 0) {
    r = sr_bindv(I, SR_P_all_gather_reduced, 1, &x, "all_gather_dimension", sr_int(NULL, dim), "axis_name",
                 sr_ref(c->aa.names), "axis_size", sr_int(NULL, c->aa.size), "tiled", sr_bool(c->tiled), NULL);
  } else {
    SrVal *y = collective_pvary(I, x, &c->aa);
    if (y && strcmp(c->to, "invarying") == 0)
      r = sr_bindv(I, SR_P_all_gather_invariant, 1, &y, "all_gather_dimension", sr_int(NULL, dim), "axis_name",
                   sr_ref(c->aa.names), "axis_size", sr_int(NULL, c->aa.size), "tiled", sr_bool(c->tiled), NULL);
    else if (y)
      r = sr_bindv(I, SR_P_all_gather, 1, &y, "all_gather_dimension", sr_int(NULL, dim), "axis_name",
                   sr_ref(c->aa.names), "axis_index_groups", sr_none(), "axis_size", sr_int(NULL, c->aa.size),
                   "tiled", sr_bool(c->tiled), NULL);
    sr_unref(y);
  }
  sr_unref(x);
  return r;
}

static SrVal *lax_all_gather(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "all_gather", "x, axis_name, *, axis_index_groups=, axis=, tiled=, to=", p) < 0)
    return NULL;
  Coll c = {0};
  c.to = "varying";
  if (p[5] && !(c.to = sr_as_str(I, p[5], "to"))) return NULL;
  if (strcmp(c.to, "varying") && strcmp(c.to, "reduced") && strcmp(c.to, "invarying"))
    return sr_raise(I, "ValueError",
                    "Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are: {'varying', "
                    "'reduced', 'invarying'}");
  if (p[3] && sr_as_int(I, p[3], "axis", &c.i1) < 0) return NULL;
  c.tiled = p[4] && sr_val_truthy(p[4]);
  SrVal *r = NULL;
  if (axis_arg(I, p[1], &c.aa) == 0) r = c.aa.axes ? map_leaves(I, p[0], NULL, all_gather_leaf, &c) : sr_ref(p[0]);
  sr_unref(c.aa.names);
  return r;
}

static SrVal *psum_scatter_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  const char *from = state_from(I, x, &c->aa, "jax.lax.psum_scatter");
  SrVal *r = NULL;
  int64_t dim;
  if (from && sr_api_axis(I, c->i1, vtype(I, x)->ndim, &dim) == 0) {
    if (strcmp(from, "unreduced") == 0) {
      r = sr_bindv(I, SR_P_unreduced_reduce_scatter, 1, &x, "axis_name", sr_ref(c->aa.names), "scatter_dimension",
                   sr_int(NULL, c->i1), "axis_size", sr_int(NULL, c->aa.size), "tiled", sr_bool(c->tiled), NULL);
    } else {
      SrVal *y = collective_pvary(I, x, &c->aa);
      if (y)
        r = sr_bindv(I, SR_P_reduce_scatter, 1, &y, "axis_name", sr_ref(c->aa.names), "scatter_dimension",
                     sr_int(NULL, dim), "axis_index_groups", sr_none(), "axis_size", sr_int(NULL, c->aa.size),
                     "tiled", sr_bool(c->tiled), NULL);
      sr_unref(y);
    }
  }
  sr_unref(x);
  return r;
}

static SrVal *lax_psum_scatter(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "psum_scatter", "x, axis_name, *, scatter_dimension=, axis_index_groups=, tiled=", p) < 0)
    return NULL;
  Coll c = {0};
  if (p[2] && sr_as_int(I, p[2], "scatter_dimension", &c.i1) < 0) return NULL;
  c.tiled = p[4] && sr_val_truthy(p[4]);
  SrVal *r = NULL;
  if (axis_arg(I, p[1], &c.aa) == 0) r = c.aa.axes ? map_leaves(I, p[0], NULL, psum_scatter_leaf, &c) : sr_ref(p[0]);
  sr_unref(c.aa.names);
  return r;
}

static SrVal *ppermute_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf), *y = x ? collective_pvary(I, x, &c->aa) : NULL;
  SrVal *r = y ? sr_api_first(sr_bindv(I, SR_P_ppermute, 1, &y, "axis_name", sr_ref(c->aa.names), "perm",
                                       sr_ref(c->perm), NULL))
               : NULL;
  sr_unref(x);
  sr_unref(y);
  return r;
}

static SrVal *lax_ppermute(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "ppermute", "x, axis_name, perm", p) < 0) return NULL;
  if (!sr_is_seq(p[2])) return sr_raise(I, "TypeError", "`perm` argument of `ppermute` must be a list or tuple of pairs, got perm of type %s", sr_val_kind_name(p[2]));
  Coll c = {0};
  c.perm = sr_seq(NULL, SR_V_TUPLE, p[2]->seq.n);
  for (int i = 0; i < p[2]->seq.n; i++) {
    SrVal *pr = p[2]->seq.items[i];
    int64_t s, d;
    if (!sr_is_seq(pr) || pr->seq.n != 2 || sr_as_int(I, pr->seq.items[0], "perm", &s) < 0 ||
        sr_as_int(I, pr->seq.items[1], "perm", &d) < 0) {
      sr_unref(c.perm);
      if (!I->exc) sr_raise(I, "TypeError", "perm must be a sequence of (source, destination) pairs");
      return NULL;
    }
    int64_t sd[2] = {s, d};
    sr_seq_push(NULL, c.perm, sr_int_tuple(sd, 2));
  }
  SrVal *r = NULL;
  if (axis_arg(I, p[1], &c.aa) == 0) r = map_leaves(I, p[0], NULL, ppermute_leaf, &c);
  sr_unref(c.aa.names);
  sr_unref(c.perm);
  return r;
}

static SrVal *all_to_all_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  const SrType *t = vtype(I, x);
  int64_t split, concat;
  if (sr_api_axis(I, c->i1, t->ndim, &split) < 0 || sr_api_axis(I, c->i2, t->ndim, &concat) < 0) {
    sr_unref(x);
    return NULL;
  }
  int64_t g = c->aa.size;
  if (c->tiled) {
    if (t->dims[split].size % g != 0) {
      SrBuf b = SR_BUF_INIT;
      sr_val_str(&b, c->axis_name);
      sr_raise(I, "ValueError",
               "The size of all_to_all split_axis (%lld) has to be divisible by the size of the named axis %s (%lld)",
               (long long)t->dims[split].size, b.p, (long long)g);
      sr_buf_free(&b);
      sr_unref(x);
      return NULL;
    }
  } else {
    if (g != t->dims[split].size) {
      sr_unref(x);
      return sr_raise(I, "ValueError",
                      "all_to_all requires the size of the mapped axis axis_name to equal x.shape[split_axis], but "
                      "they are %lld and %lld respectively.",
                      (long long)g, (long long)t->dims[split].size);
    }
    if (split < concat) {
      concat += 1;
      SrVal *y = sr_lax_expand_dims(I, x, &concat, 1);
      sr_unref(x);
      x = y;
    } else if (split > concat) {
      SrVal *y = sr_lax_expand_dims(I, x, &concat, 1);
      sr_unref(x);
      x = y;
      split += 1;
    }
    if (!x) return NULL;
  }
  SrVal *y = collective_pvary(I, x, &c->aa);
  sr_unref(x);
  if (!y) return NULL;
  SrVal *r = sr_bindv(I, SR_P_all_to_all, 1, &y, "split_axis", sr_int(NULL, split), "concat_axis",
                      sr_int(NULL, concat), "axis_name", sr_ref(c->axis_name), "axis_index_groups", sr_none(),
                      "tiled", sr_bool(c->tiled), NULL);
  sr_unref(y);
  if (r && !c->tiled && split != concat) {
    SrVal *s = sr_lax_squeeze(I, r, &split, 1);
    sr_unref(r);
    r = s;
  }
  return r;
}

static SrVal *lax_all_to_all(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "all_to_all", "x, axis_name, split_axis, concat_axis, *, axis_index_groups=, tiled=", p) < 0)
    return NULL;
  Coll c = {0};
  if (sr_as_int(I, p[2], "split_axis", &c.i1) < 0 || sr_as_int(I, p[3], "concat_axis", &c.i2) < 0) return NULL;
  c.tiled = p[5] && sr_val_truthy(p[5]);
  c.axis_name = p[1];
  SrVal *r = NULL;
  if (axis_arg(I, p[1], &c.aa) == 0) r = map_leaves(I, p[0], NULL, all_to_all_leaf, &c);
  sr_unref(c.aa.names);
  return r;
}

static SrVal *axis_index_one(SrInterp *I, SrVal *name) {
  return sr_bindv(I, SR_P_axis_index, 0, NULL, "axis_name", sr_ref(name), NULL);
}

static SrVal *lax_axis_index(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "axis_index", "axis_name", p) < 0) return NULL;
  AxisArg aa;
  if (axis_arg(I, p[0], &aa) < 0) {
    sr_unref(aa.names);
    return NULL;
  }
  sr_unref(aa.names);
  if (p[0]->kind != SR_V_TUPLE && p[0]->kind != SR_V_LIST) return axis_index_one(I, p[0]);
  /* index = sum over names (reversed) of axis_index(name) * inner_size */
  const SrMesh *m = sr_api_mesh(I);
  SrVal *addf = sr_lookup_qualname("jax.numpy.add"), *mulf = sr_lookup_qualname("jax.numpy.multiply");
  SrVal *index = sr_int(NULL, 0);
  int64_t inner = 1;
  for (int i = p[0]->seq.n - 1; i >= 0 && index; i--) {
    SrVal *nm = p[0]->seq.items[i];
    SrVal *ai = axis_index_one(I, nm);
    SrVal *sz = sr_int(NULL, inner);
    SrVal *mv[2] = {ai, sz};
    SrArgs ma = {2, mv, 0, NULL, NULL, NULL};
    SrVal *prod = ai ? sr_call(I, mulf, &ma) : NULL;
    SrVal *av[2] = {index, prod};
    SrArgs aa2 = {2, av, 0, NULL, NULL, NULL};
    SrVal *sum = prod ? sr_call(I, addf, &aa2) : NULL;
    sr_unref(ai);
    sr_unref(sz);
    sr_unref(prod);
    sr_unref(index);
    index = sum;
    int ax = sr_mesh_axis(m, sr_intern(nm->str.s, nm->str.n));
    inner *= ax >= 0 ? m->sizes[ax] : 1;
  }
  return index;
}

static SrVal *lax_axis_size(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "axis_size", "axis_name", p) < 0) return NULL;
  AxisArg aa;
  int rc = axis_arg(I, p[0], &aa);
  sr_unref(aa.names);
  return rc < 0 ? NULL : sr_int(NULL, aa.size);
}

static SrVal *pcast_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  const char *from = state_from(I, x, &c->aa, "jax.lax.pcast");
  SrVal *r = NULL;
  if (!from) {
  } else if (!strcmp(from, "invarying") && !strcmp(c->to, "varying")) {
    r = sr_lax_pvary(I, x, c->aa.axes);
  } else if (!strcmp(from, "invarying") && !strcmp(c->to, "reduced")) {
    r = bind_axes_cast(I, SR_P_preduced, x, c->aa.axes);
  } else if (!strcmp(from, "varying") && !strcmp(c->to, "unreduced")) {
    r = bind_axes_cast(I, SR_P_vary_unreduced_cast, x, c->aa.axes);
  } else if (!strcmp(from, "reduced") && !strcmp(c->to, "varying")) {
    r = sr_lax_reduced_vary_cast(I, x, c->aa.axes);
  } else {
    sr_raise(I, "ValueError", "Unsupported pcast from=%s, to='%s'", from, c->to);
  }
  sr_unref(x);
  return r;
}

static SrVal *lax_pcast(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "pcast", "x, axis_name, *, to", p) < 0) return NULL;
  Coll c = {0};
  if (!(c.to = sr_as_str(I, p[2], "to"))) return NULL;
  if (strcmp(c.to, "varying") && strcmp(c.to, "reduced") && strcmp(c.to, "unreduced"))
    return sr_raise(I, "ValueError",
                    "Got unexpected `to` value. Allowed `to` values are: {'unreduced', 'reduced', 'varying'}");
  SrVal *r = NULL;
  if (axis_arg(I, p[1], &c.aa) == 0) r = c.aa.axes ? map_leaves(I, p[0], NULL, pcast_leaf, &c) : sr_ref(p[0]);
  sr_unref(c.aa.names);
  return r;
}

static SrVal *pvary_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf);
  SrVal *r = x ? sr_lax_pvary(I, x, c->aa.axes) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_pvary(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "pvary", "x, axis_name", p) < 0) return NULL;
  Coll c = {0};
  SrVal *r = NULL;
  if (axis_arg(I, p[1], &c.aa) == 0) r = map_leaves(I, p[0], NULL, pvary_leaf, &c);
  sr_unref(c.aa.names);
  return r;
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

static SrVal *lax_scan(SrInterp *I, SrArgs *a) {
  SrVal *p[7];
  if (sr_args_parse(I, a, "scan", "f, init, xs=, length=, reverse=, unroll=, _split_transpose=", p) < 0) return NULL;
  SrVal *f = p[0];
  if (!sr_is_callable(f)) return sr_raise(I, "TypeError", "lax.scan: f argument should be a callable.");
  SrVal *xs = p[2] ? p[2] : sr_none();
  int reverse = p[4] && sr_val_truthy(p[4]);
  SrVal *init_leaves = sr_pytree_flatten(I, p[1]);
  SrVal *xs_leaves = init_leaves ? sr_pytree_flatten(I, xs) : NULL;
  SrVal *result = NULL, *out_tree = NULL, *captured = NULL, *carry_arg = NULL, *x_arg = NULL;
  const SrType **ctypes = NULL, **xtypes = NULL, **otypes = NULL;
  SrJaxpr *body = NULL;
  SrPList ps = {0};
  if (!xs_leaves) goto done;
  int nc = init_leaves->seq.n, nx = xs_leaves->seq.n;
  /* the length (_infer_scan_length) */
  int64_t length = -1;
  for (int i = 0; i < nx; i++) {
    const SrType *t = vtype(I, xs_leaves->seq.items[i]);
    if (t->ndim == 0) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, xs_leaves->seq.items[i]);
      sr_raise(I, "ValueError", "scan got value with no leading axis to scan over: %s.", b.p);
      sr_buf_free(&b);
      goto done;
    }
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
  xtypes = sr_xcalloc((size_t)nx + 1, sizeof *xtypes);
  for (int i = 0; i < nx; i++) xtypes[i] = drop_leading(vtype(I, xs_leaves->seq.items[i]));
  x_arg = abstract_like(xs, xtypes, nx);
  for (int pass = 0; pass < 2; pass++) {
    free(ctypes);
    ctypes = leaf_types(I, init_leaves);
    sr_unref(carry_arg);
    carry_arg = abstract_like(p[1], ctypes, nc);
    if (body) sr_program_unref(body->prog);
    sr_unref(out_tree);
    sr_unref(captured);
    out_tree = captured = NULL;
    SrVal *bargs[2] = {carry_arg, x_arg};
    body = api_trace(I, f, 2, bargs, NULL, &out_tree, &captured);
    if (!body) goto done;
    if (!sr_is_seq(out_tree) || out_tree->kind == SR_V_SET || out_tree->seq.n != 2) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, out_tree);
      sr_raise(I, "TypeError", "scan body output must be a pair, got %s.", b.p);
      sr_buf_free(&b);
      goto done;
    }
    if (n_leaves(I, out_tree->seq.items[0]) != nc) {
      sr_raise(I, "TypeError",
               "scan body function carry input and carry output must have the same pytree structure, but they "
               "differ:\n\nthe input carry has %d leaves and the carry output has %d\n\nRevise the function so that "
               "the carry output has the same pytree structure as the carry input.",
               nc, n_leaves(I, out_tree->seq.items[0]));
      goto done;
    }
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
  for (int i = 0; i < nc; i++)
    if (!typematch(ctypes[i], otypes[i])) {
      carry_type_error(I, "scan body", f, ctypes, otypes, nc);
      goto done;
    }
  {
    int ncap = captured->seq.n;
    int64_t unroll = 1;
    if (p[5] && p[5]->kind == SR_V_BOOL) unroll = p[5]->i ? (length > 1 ? length : 1) : 1;
    else if (p[5] && sr_as_int(I, p[5], "unroll", &unroll) < 0) goto done;
    if (unroll < 0) {
      sr_raise(I, "ValueError", "`unroll` must be a `bool` or a non-negative `int`.");
      goto done;
    }
    sr_plist_add(&ps, "_split_transpose", sr_bool(p[6] && sr_val_truthy(p[6])));
    sr_plist_add(&ps, "jaxpr", sr_jaxpr_val(NULL, body));
    sr_plist_add(&ps, "length", sr_int(NULL, length));
    sr_plist_add(&ps, "linear", bools(ncap + nc + nx, 0));
    sr_plist_add(&ps, "num_carry", sr_int(NULL, nc));
    sr_plist_add(&ps, "num_consts", sr_int(NULL, ncap));
    sr_plist_add(&ps, "reverse", sr_bool(reverse));
    sr_plist_add(&ps, "unroll", sr_int(NULL, unroll));
    SrVal *ops = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = 0; i < ncap; i++) sr_seq_push(NULL, ops, sr_ref(captured->seq.items[i]));
    for (int i = 0; i < nc; i++) sr_seq_push(NULL, ops, sr_ref(init_leaves->seq.items[i]));
    for (int i = 0; i < nx; i++) sr_seq_push(NULL, ops, sr_ref(xs_leaves->seq.items[i]));
    uint32_t nout = body->nout;
    const SrType **outs = sr_xcalloc(nout + 1, sizeof *outs);
    for (uint32_t i = 0; i < nout; i++) outs[i] = (int)i < nc ? otypes[i] : add_leading(otypes[i], length);
    SrVal *r = sr_api_bind_typed(I, SR_P_scan, ops->seq.n, ops->seq.items, &ps, outs, nout);
    free(outs);
    sr_unref(ops);
    if (r) result = sr_pytree_unflatten(out_tree, r);
    sr_unref(r);
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
  return result;
}

/* Traces the branches of a cond / switch on the operands' types, sharing
   the captured values (_merge_common_consts); the jaxprs are returned in
   js[], the shared constants in *consts. */
static int trace_branches(SrInterp *I, int nb, SrVal **fns, SrVal *ops, SrJaxpr **js, SrVal **consts,
                          SrVal **out_tree) {
  SrVal *caps[64] = {0};
  SrVal *merged = sr_seq(NULL, SR_V_LIST, 0);
  int ok = 1, need_retrace = 0;
  for (int b = 0; b < nb && ok; b++) {
    SrVal *tree = NULL;
    js[b] = api_trace(I, fns[b], ops->seq.n, ops->seq.items, NULL, &tree, &caps[b]);
    if (!js[b]) {
      ok = 0;
      break;
    }
    if (b == 0) *out_tree = tree;
    else sr_unref(tree);
    for (int i = 0; i < caps[b]->seq.n; i++) {
      SrVal *c = caps[b]->seq.items[i];
      int seen = 0;
      for (int k = 0; k < merged->seq.n && !seen; k++) {
        SrArrayObj *x = sr_array_of(merged->seq.items[k]), *y = sr_array_of(c);
        seen = merged->seq.items[k] == c || (x && y && x->kind == y->kind &&
                                             ((x->kind == SR_AV_TRACER && x->var == y->var) ||
                                              (x->kind == SR_AV_CONCRETE && x->data == y->data)));
      }
      if (!seen) sr_seq_push(NULL, merged, sr_ref(c));
    }
  }
  for (int b = 0; b < nb && ok; b++) need_retrace |= caps[b]->seq.n != merged->seq.n;
  if (ok && need_retrace) {
    for (int b = 0; b < nb && ok; b++) {
      if (caps[b]->seq.n == merged->seq.n) continue;
      sr_program_unref(js[b]->prog);
      sr_unref(caps[b]);
      caps[b] = NULL;
      js[b] = api_trace(I, fns[b], ops->seq.n, ops->seq.items, merged, NULL, &caps[b]);
      if (!js[b]) ok = 0;
      else if (caps[b]->seq.n != merged->seq.n) {
        sr_raise(I, "RuntimeError", "cond: the branches' captured values could not be merged");
        ok = 0;
      }
    }
  }
  for (int b = 0; b < nb; b++) sr_unref(caps[b]);
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

/* The key path (keystr) of every leaf of a pytree, pushed to paths as
   strings: "[0]", "['w']", "" for a lone leaf. */
static void leaf_paths(SrInterp *I, SrVal *v, SrBuf *path, SrVal *paths) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    sr_seq_push(NULL, paths, sr_str(NULL, path->p ? path->p : "", path->len));
    return;
  }
  size_t at = path->len;
  for (int i = 0; i < ch->seq.n; i++) {
    if (v->kind == SR_V_DICT) {
      /* the children are the dict's values in key order: find each key */
      int k = 0;
      while (k < v->dict.n && v->dict.vals[k] != ch->seq.items[i]) k++;
      sr_buf_puts(path, "[");
      if (k < v->dict.n) sr_val_repr(path, v->dict.keys[k]);
      sr_buf_puts(path, "]");
    } else if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
      sr_buf_printf(path, "[%d]", i);
    }
    leaf_paths(I, ch->seq.items[i], path, paths);
    path->len = at;
    if (path->p) path->p[at] = 0;
  }
  sr_unref(ch);
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
  SrVal *paths = sr_seq(NULL, SR_V_LIST, 0);
  SrBuf path = SR_BUF_INIT;
  if (tree) leaf_paths(I, tree, &path, paths);
  sr_buf_free(&path);
  const SrMesh *m = sr_api_mesh(I);
  int total = 0, k = 0, npv = 0;
  for (uint32_t i = 0; i < j1->nout; i++) total += !typematch(j1->outvars[i]->type, j2->outvars[i]->type);
  SrBuf diffs = SR_BUF_INIT, pv = SR_BUF_INIT;
  for (uint32_t i = 0; i < j1->nout; i++) {
    const SrType *a1 = j1->outvars[i]->type, *a2 = j2->outvars[i]->type;
    if (typematch(a1, a2)) continue;
    SrBuf comp = SR_BUF_INIT;
    if ((int)i < paths->seq.n && paths->seq.items[i]->str.n)
      sr_buf_printf(&comp, " at path %.*s", (int)paths->seq.items[i]->str.n, paths->seq.items[i]->str.s);
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
  sr_unref(paths);
}

/* Binds cond with index and branches (index 0 first). */
static SrVal *bind_cond(SrInterp *I, SrVal *index, int nb, SrVal **fns, SrVal *operands, const char *name) {
  SrVal *ops = sr_seq(NULL, SR_V_TUPLE, 0);
  for (int i = 0; sr_is_seq(operands) && i < operands->seq.n; i++) sr_seq_push(NULL, ops, sr_ref(operands->seq.items[i]));
  SrJaxpr *js[64] = {0};
  SrVal *consts = NULL, *out_tree = NULL, *result = NULL;
  if (trace_branches(I, nb, fns, ops, js, &consts, &out_tree) == 0) {
    /* every branch must give the same types (_check_branch_outputs) */
    int ok = 1;
    for (int b = 1; b < nb && ok; b++) {
      ok = js[b]->nout == js[0]->nout;
      for (uint32_t i = 0; ok && i < js[0]->nout; i++) ok = typematch(js[0]->outvars[i]->type, js[b]->outvars[i]->type);
    }
    if (!ok) {
      /* the first branch that differs from the reference one: cond
         compares true_fun (index 1) with false_fun, switch branch 0 with
         the others */
      int is_cond = strcmp(name, "cond") == 0;
      int r = is_cond ? 1 : 0, o = is_cond ? 0 : 1;
      for (int b = 1; !is_cond && b < nb; b++) {
        int same = js[b]->nout == js[0]->nout;
        for (uint32_t i = 0; same && i < js[0]->nout; i++) same = typematch(js[0]->outvars[i]->type, js[b]->outvars[i]->type);
        if (!same) {
          o = b;
          break;
        }
      }
      char n2[32];
      snprintf(n2, sizeof n2, "branch%d", o);
      const char *name1 = is_cond ? "true_fun" : "branch 0", *name2 = is_cond ? "false_fun" : n2;
      if (js[r]->nout != js[o]->nout)
        sr_raise(I, "TypeError",
                 "%s branch outputs must have the same pytree structure, but they differ:\n\n%s is %s\n%s is %s\n\n"
                 "%s has %u outputs and %s has %u\n\nRevise %s and/or %s so that they have the same pytree structure.",
                 name, name1, sr_vjp_fun_info(fns[r]), name2, sr_vjp_fun_info(fns[o]), name1, js[r]->nout, name2,
                 js[o]->nout, name1, name2);
      else
        branch_type_error(I, name, name1, name2, fns[r], fns[o], out_tree, js[r], js[o]);
    } else {
      SrVal *br = sr_seq(NULL, SR_V_TUPLE, nb);
      for (int b = 0; b < nb; b++) sr_seq_push(NULL, br, sr_jaxpr_val(NULL, js[b]));
      SrPList ps = {0};
      sr_plist_add(&ps, "branches", br);
      SrVal *in = sr_seq(NULL, SR_V_LIST, 0);
      sr_seq_push(NULL, in, sr_ref(index));
      for (int i = 0; i < consts->seq.n; i++) sr_seq_push(NULL, in, sr_ref(consts->seq.items[i]));
      SrVal *leaves = sr_pytree_flatten(I, ops);
      for (int i = 0; leaves && i < leaves->seq.n; i++) sr_seq_push(NULL, in, sr_ref(leaves->seq.items[i]));
      sr_unref(leaves);
      const SrType **outs = sr_xcalloc(js[0]->nout + 1, sizeof *outs);
      for (uint32_t i = 0; i < js[0]->nout; i++) outs[i] = js[0]->outvars[i]->type;
      SrVal *r = sr_api_bind_typed(I, SR_P_cond, in->seq.n, in->seq.items, &ps, outs, js[0]->nout);
      free(outs);
      sr_plist_free(&ps);
      sr_unref(in);
      if (r) result = sr_pytree_unflatten(out_tree, r);
      sr_unref(r);
    }
    for (int b = 0; b < nb; b++) sr_program_unref(js[b]->prog);
  }
  sr_unref(consts);
  sr_unref(out_tree);
  sr_unref(ops);
  return result;
}

static SrVal *lax_cond(SrInterp *I, SrArgs *a) {
  if (a->n < 3) return sr_raise(I, "TypeError", "cond() missing required arguments: pred, true_fun, false_fun");
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
    SrVal *index = p ? sr_lax_convert(I, p, SR_I32, 0, NULL) : NULL;
    if (index) {
      SrVal *fns[2] = {a->v[2], a->v[1]};
      SrVal *ops = sr_seq(NULL, SR_V_TUPLE, a->n - 3);
      for (int i = 3; i < a->n; i++) sr_seq_push(NULL, ops, sr_ref(a->v[i]));
      result = bind_cond(I, index, 2, fns, ops, "cond");
      sr_unref(ops);
    }
    sr_unref(index);
    sr_unref(p);
  }
  sr_unref(pred);
  return result;
}

static SrVal *lax_switch(SrInterp *I, SrArgs *a) {
  if (a->n < 2 || !sr_is_seq(a->v[1]) || a->v[1]->seq.n < 1 || a->v[1]->seq.n > 64)
    return sr_raise(I, "TypeError", "switch(index, branches, *operands): branches must be a non-empty sequence");
  SrVal *idx = arr(I, a->v[0]);
  if (!idx) return NULL;
  int nb = a->v[1]->seq.n;
  SrVal *result = NULL;
  SrVal *i32 = sr_lax_convert(I, idx, SR_I32, 0, NULL);
  if (nb == 1) {
    SrArgs ca = {a->n - 2, a->v + 2, 0, NULL, NULL, NULL};
    result = sr_call(I, a->v[1]->seq.items[0], &ca);
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
      result = bind_cond(I, cl, nb, a->v[1]->seq.items, ops, "switch");
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

/* while_loop(cond_fun, body_fun, init_val) */
static SrVal *while_impl(SrInterp *I, SrVal *cond_fun, SrVal *body_fun, SrVal *init) {
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
    arg = abstract_like(like, types, n);
    if (cj) sr_program_unref(cj->prog);
    if (bj) sr_program_unref(bj->prog);
    sr_unref(ctree);
    sr_unref(btree);
    sr_unref(ccap);
    sr_unref(bcap);
    ctree = btree = ccap = bcap = NULL;
    bj = NULL;
    cj = api_trace(I, cond_fun, 1, &arg, NULL, &ctree, &ccap);
    if (!cj) goto done;
    bj = api_trace(I, body_fun, 1, &arg, NULL, &btree, &bcap);
    if (!bj) goto done;
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
    if ((int)bj->nout != n) {
      sr_raise(I, "TypeError",
               "while_loop body function carry input and carry output must have the same pytree structure, but "
               "they differ:\n\nthe input carry has %d leaves and the carry output has %u\n\nRevise the function so "
               "that the carry output has the same pytree structure as the carry input.",
               n, bj->nout);
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
      carry_type_error(I, "while_loop body", body_fun, types, otypes, n);
      goto done;
    }
  {
    SrPList ps = {0};
    sr_plist_add(&ps, "body_jaxpr", sr_jaxpr_val(NULL, bj));
    sr_plist_add(&ps, "body_nconsts", sr_int(NULL, bcap->seq.n));
    sr_plist_add(&ps, "cond_jaxpr", sr_jaxpr_val(NULL, cj));
    sr_plist_add(&ps, "cond_nconsts", sr_int(NULL, ccap->seq.n));
    SrVal *ops = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = 0; i < ccap->seq.n; i++) sr_seq_push(NULL, ops, sr_ref(ccap->seq.items[i]));
    for (int i = 0; i < bcap->seq.n; i++) sr_seq_push(NULL, ops, sr_ref(bcap->seq.items[i]));
    for (int i = 0; i < n; i++) sr_seq_push(NULL, ops, sr_ref(leaves->seq.items[i]));
    SrVal *r = sr_api_bind_typed(I, SR_P_while, ops->seq.n, ops->seq.items, &ps, otypes, (uint32_t)n);
    sr_plist_free(&ps);
    sr_unref(ops);
    if (r) result = sr_pytree_unflatten(init, r);
    sr_unref(r);
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
  return while_impl(I, p[0], p[1], p[2]);
}

/* fori_loop's bodies: (i, x) -> (i + 1, body(i, x)) for scan and
   (i, upper, x) -> (i + 1, upper, body(i, x)) for while, and i < upper. */
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

static int is_concrete_int(SrVal *v, int64_t *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = v->i;
    return 1;
  }
  SrArrayObj *a = sr_array_of(v);
  if (a && a->kind == SR_AV_ABSTRACT && a->has_value && a->type->ndim == 0 && !sr_dtype_is_inexact(a->type->dtype)) {
    *out = a->value.i;
    return 1;
  }
  return 0;
}

static SrVal *lax_fori_loop(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "fori_loop", "lower, upper, body_fun, init_val, *, unroll=", p) < 0) return NULL;
  if (!sr_is_callable(p[2])) return sr_raise(I, "TypeError", "fori_loop: body_fun must be callable");
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
  if (is_concrete_int(lo, &l) && is_concrete_int(hi, &u)) {
    /* the trip count is static: a scan */
    int64_t length = u - l > 0 ? u - l : 0;
    SrVal *body = sr_builtin_with("scanned_fun", fori_scan_body, sr_ref(p[2]), (void (*)(void *))sr_unref);
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
      SrVal *carry = sr_seq(NULL, SR_V_TUPLE, 3);
      sr_seq_push(NULL, carry, sr_ref(l2));
      sr_seq_push(NULL, carry, sr_ref(h2));
      sr_seq_push(NULL, carry, sr_ref(p[3]));
      SrVal *r = while_impl(I, cond, body, carry);
      if (r) result = sr_ref(r->seq.items[2]);
      sr_unref(r);
      sr_unref(carry);
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

/* ======================================================================
 * jax.tree
 * ====================================================================== */

/* Pytree nodes are jnp.c's: lists, tuples, dicts (sorted keys), None
   and registered classes (VJP objects). */
static void tree_leaves(SrVal *v, SrVal *out) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    sr_seq_push(NULL, out, sr_ref(v));
    return;
  }
  for (int i = 0; i < ch->seq.n; i++) tree_leaves(ch->seq.items[i], out);
  sr_unref(ch);
}

static SrVal *tree_rebuild(SrVal *like, SrVal *leaves, int *it) {
  SrVal *ch = sr_pytree_children(like);
  if (!ch) return *it < leaves->seq.n ? sr_ref(leaves->seq.items[(*it)++]) : sr_none();
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *x = tree_rebuild(ch->seq.items[i], leaves, it);
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = x;
  }
  SrVal *r = sr_pytree_rebuild(like, ch);
  sr_unref(ch);
  return r;
}

static SrVal *tree_leaves_fn(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "leaves", "tree", p) < 0 || sr_pytree_check_depth(I, p[0]) < 0) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  tree_leaves(p[0], l);
  return l;
}

static SrVal *tree_map_fn(SrInterp *I, SrArgs *a) {
  if (a->n < 2 || a->nkw) return sr_raise(I, "TypeError", "map(f, tree, *rest) takes a function and one or more trees");
  for (int k = 1; k < a->n; k++)
    if (sr_pytree_check_depth(I, a->v[k]) < 0) return NULL;
  SrVal *f = a->v[0];
  int nt = a->n - 1;
  SrVal **ls = sr_xcalloc((size_t)nt + 1, sizeof *ls);
  for (int k = 0; k < nt; k++) {
    ls[k] = sr_seq(NULL, SR_V_LIST, 0);
    tree_leaves(a->v[1 + k], ls[k]);
  }
  SrVal *res = NULL;
  int ok = 1;
  for (int k = 1; k < nt && ok; k++)
    if (ls[k]->seq.n != ls[0]->seq.n) {
      sr_raise(I, "ValueError", "Tree structures do not match: %d leaves and %d leaves", ls[0]->seq.n, ls[k]->seq.n);
      ok = 0;
    }
  SrVal *outs = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; ok && i < ls[0]->seq.n; i++) {
    SrVal *argv[64];
    for (int k = 0; k < nt && k < 64; k++) argv[k] = ls[k]->seq.items[i];
    SrArgs ca = {nt < 64 ? nt : 64, argv, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, f, &ca);
    if (!r) ok = 0;
    else sr_seq_push(NULL, outs, r);
  }
  if (ok) {
    int it = 0;
    res = tree_rebuild(a->v[1], outs, &it);
  }
  sr_unref(outs);
  for (int k = 0; k < nt; k++) sr_unref(ls[k]);
  free(ls);
  return res;
}

/* ======================================================================
 * registration
 * ====================================================================== */

void sr_lax_api_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.lax.neg", lax_neg, "neg(x): -x"},
    {"jax.lax.sin", lax_sin, "sin(x)"},
    {"jax.lax.cos", lax_cos, "cos(x)"},
    {"jax.lax.tan", lax_tan, "tan(x)"},
    {"jax.lax.tanh", lax_tanh, "tanh(x)"},
    {"jax.lax.exp", lax_exp, "exp(x)"},
    {"jax.lax.exp2", lax_exp2, "exp2(x)"},
    {"jax.lax.log", lax_log, "log(x)"},
    {"jax.lax.log1p", lax_log1p, "log1p(x)"},
    {"jax.lax.expm1", lax_expm1, "expm1(x)"},
    {"jax.lax.sqrt", lax_sqrt, "sqrt(x)"},
    {"jax.lax.rsqrt", lax_rsqrt, "rsqrt(x)"},
    {"jax.lax.cbrt", lax_cbrt, "cbrt(x)"},
    {"jax.lax.abs", lax_abs, "abs(x)"},
    {"jax.lax.sign", lax_sign, "sign(x)"},
    {"jax.lax.floor", lax_floor, "floor(x)"},
    {"jax.lax.ceil", lax_ceil, "ceil(x)"},
    {"jax.lax.logistic", lax_logistic, "logistic(x): 1 / (1 + exp(-x))"},
    {"jax.lax.square", lax_square, "square(x)"},
    {"jax.lax.is_finite", lax_is_finite, "is_finite(x)"},
    {"jax.lax.bitwise_not", lax_not, "bitwise_not(x)"},
    {"jax.lax.erf", lax_erf, "erf(x)"},
    {"jax.lax.add", lax_add, "add(x, y)"},
    {"jax.lax.sub", lax_sub, "sub(x, y)"},
    {"jax.lax.mul", lax_mul, "mul(x, y)"},
    {"jax.lax.div", lax_div, "div(x, y)"},
    {"jax.lax.rem", lax_rem, "rem(x, y)"},
    {"jax.lax.pow", lax_pow, "pow(x, y)"},
    {"jax.lax.max", lax_max, "max(x, y)"},
    {"jax.lax.min", lax_min, "min(x, y)"},
    {"jax.lax.atan2", lax_atan2, "atan2(x, y)"},
    {"jax.lax.eq", lax_eq, "eq(x, y)"},
    {"jax.lax.ne", lax_ne, "ne(x, y)"},
    {"jax.lax.lt", lax_lt, "lt(x, y)"},
    {"jax.lax.le", lax_le, "le(x, y)"},
    {"jax.lax.gt", lax_gt, "gt(x, y)"},
    {"jax.lax.ge", lax_ge, "ge(x, y)"},
    {"jax.lax.bitwise_and", lax_and, "bitwise_and(x, y)"},
    {"jax.lax.bitwise_or", lax_or, "bitwise_or(x, y)"},
    {"jax.lax.bitwise_xor", lax_xor, "bitwise_xor(x, y)"},
    {"jax.lax.integer_pow", lax_integer_pow, "integer_pow(x, y): x ** y for a Python int y"},
    {"jax.lax.round", lax_round, "round(x, rounding_method=0)"},
    {"jax.lax.reduce_precision", lax_reduce_precision,
     "reduce_precision(operand, exponent_bits, mantissa_bits): rounded to a float format with those bits"},
    {"jax.lax.convert_element_type", lax_convert_element_type, "convert_element_type(operand, new_dtype)"},
    {"jax.lax.broadcast_in_dim", lax_broadcast_in_dim,
     "broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None)"},
    {"jax.lax.broadcast", lax_broadcast, "broadcast(operand, sizes): new leading dimensions"},
    {"jax.lax.reshape", lax_reshape, "reshape(operand, new_sizes, *, out_sharding=None)"},
    {"jax.lax.transpose", lax_transpose, "transpose(operand, permutation)"},
    {"jax.lax.squeeze", lax_squeeze, "squeeze(array, dimensions)"},
    {"jax.lax.expand_dims", lax_expand_dims, "expand_dims(array, dimensions)"},
    {"jax.lax.reduce_sum", lax_reduce_sum, "reduce_sum(operand, axes, *, out_sharding=None)"},
    {"jax.lax.reduce_max", lax_reduce_max, "reduce_max(operand, axes, *, out_sharding=None)"},
    {"jax.lax.reduce_min", lax_reduce_min, "reduce_min(operand, axes, *, out_sharding=None)"},
    {"jax.lax.reduce_prod", lax_reduce_prod, "reduce_prod(operand, axes)"},
    {"jax.lax.argmax", lax_argmax, "argmax(operand, axis, index_dtype)"},
    {"jax.lax.argmin", lax_argmin, "argmin(operand, axis, index_dtype)"},
    {"jax.lax.dot_general", lax_dot_general,
     "dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *, out_sharding=None)"},
    {"jax.lax.dot", lax_dot, "dot(lhs, rhs, precision=None, preferred_element_type=None, *, out_sharding=None)"},
    {"jax.lax.select", lax_select, "select(pred, on_true, on_false): a select_n (false case first)"},
    {"jax.lax.select_n", lax_select_n, "select_n(which, *cases)"},
    {"jax.lax.clamp", lax_clamp, "clamp(min, x, max)"},
    {"jax.lax.concatenate", lax_concatenate, "concatenate(operands, dimension)"},
    {"jax.lax.slice", lax_slice, "slice(operand, start_indices, limit_indices, strides=None)"},
    {"jax.lax.dynamic_slice", lax_dynamic_slice, "dynamic_slice(operand, start_indices, slice_sizes)"},
    {"jax.lax.dynamic_update_slice", lax_dynamic_update_slice, "dynamic_update_slice(operand, update, start_indices)"},
    {"jax.lax.dynamic_update_index_in_dim", lax_dynamic_update_index_in_dim,
     "dynamic_update_index_in_dim(operand, update, index, axis)"},
    {"jax.lax.pad", lax_pad, "pad(operand, padding_value, padding_config): (low, high, interior) per dimension"},
    {"jax.lax.iota", lax_iota, "iota(dtype, size)"},
    {"jax.lax.broadcasted_iota", lax_broadcasted_iota,
     "broadcasted_iota(dtype, shape, dimension, *, out_sharding=None)"},
    {"jax.lax.full", lax_full, "full(shape, fill_value, dtype=None, *, sharding=None)"},
    {"jax.lax.rev", lax_rev, "rev(operand, dimensions)"},
    {"jax.lax.cumsum", lax_cumsum, "cumsum(operand, axis=0, reverse=False)"},
    {"jax.lax.optimization_barrier", lax_optimization_barrier,
     "optimization_barrier(operand): one optimization_barrier equation over the leaves"},
    {"jax.lax.stop_gradient jax.stop_gradient", lax_stop_gradient,
     "stop_gradient(x): a stop_gradient equation on each leaf; no gradient flows through it"},
    {"jax.reshard jax.sharding.reshard", jax_reshard,
     "reshard(x, out_sharding): a reshard equation to a P or NamedSharding"},
    {"jax.lax.with_sharding_constraint", lax_with_sharding_constraint,
     "with_sharding_constraint(x, shardings): an assert over Explicit axes, a sharding_constraint over Auto ones"},
    {"jax.sharding.auto_axes", jax_auto_axes,
     "auto_axes(f, *, axes=None, out_sharding=None): f run with the axes Auto, resharded in and out"},
    {"jax.sharding.explicit_axes", jax_explicit_axes,
     "explicit_axes(f, *, axes=None, in_sharding=None): f run with the axes Explicit"},
    {"jax.shard_map jax.experimental.shard_map.shard_map", jax_shard_map,
     "shard_map(f, *, out_specs, in_specs=Infer, mesh=None, axis_names=set(), check_vma=True): axis_names a set of the axes made manual (empty: all)"},
    {"jax.lax.psum", lax_psum, "psum(x, axis_name): psum_invariant (with the pvary it needs) over manual axes"},
    {"jax.lax.pmean", lax_pmean, "pmean(x, axis_name): psum, then a division by the axis size"},
    {"jax.lax.pmax", lax_pmax, "pmax(x, axis_name)"},
    {"jax.lax.pmin", lax_pmin, "pmin(x, axis_name)"},
    {"jax.lax.all_gather", lax_all_gather, "all_gather(x, axis_name, *, axis=0, tiled=False, to='varying')"},
    {"jax.lax.psum_scatter", lax_psum_scatter, "psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False)"},
    {"jax.lax.ppermute", lax_ppermute, "ppermute(x, axis_name, perm)"},
    {"jax.lax.all_to_all", lax_all_to_all, "all_to_all(x, axis_name, split_axis, concat_axis, *, tiled=False)"},
    {"jax.lax.axis_index", lax_axis_index, "axis_index(axis_name): this device's index along a manual axis"},
    {"jax.lax.axis_size", lax_axis_size, "axis_size(axis_name): the size of a manual axis"},
    {"jax.lax.pcast", lax_pcast, "pcast(x, axis_name, *, to): 'varying', 'unreduced' or 'reduced'"},
    {"jax.lax.pvary", lax_pvary, "pvary(x, axis_name)"},
    {"jax.lax.scan", lax_scan, "scan(f, init, xs=None, length=None, reverse=False, unroll=1)"},
    {"jax.lax.cond", lax_cond, "cond(pred, true_fun, false_fun, *operands)"},
    {"jax.lax.switch", lax_switch, "switch(index, branches, *operands)"},
    {"jax.lax.while_loop", lax_while_loop, "while_loop(cond_fun, body_fun, init_val)"},
    {"jax.lax.fori_loop", lax_fori_loop,
     "fori_loop(lower, upper, body_fun, init_val): a scan when the bounds are static, else a while"},
    {"jax.tree.map jax.tree_util.tree_map", tree_map_fn, "map(f, tree, *rest): f applied to every leaf"},
    {"jax.tree.leaves jax.tree_util.tree_leaves", tree_leaves_fn, "leaves(tree): the leaves, in order"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
