/* shard_map.c: jax.shard_map (jax.experimental.shard_map.shard_map),
 * after shard_map.py: the body traced over per-device types, the specs
 * checked, one shard_map equation bound. */
#include "jax/tracers.h"
#include "jax/tree_util.h"
#include "jax/lax.h"
#include "jax/jax.h"
#include "jax/array_methods.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "exec/array.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "jax/vjp.h"
#include "lax/lax.h"
#include "util/intern.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }

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
  int smap;          /* made by jax.smap (its messages) */
  /* set while tracing the body */
  SrVal *out_specs_flat;
  const SrMesh *inner;
  /* with None in in_specs (static arguments): the arguments as passed
     (a tuple, the tree to rebuild) and their leaves, the static ones the
     values themselves and the traced ones NULL; the body gets the traced
     leaves only (shard_map.py's which_dyn / static_args) */
  SrVal *static_tree, *static_leaves;
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

/* tree_util.broadcast_prefix: one spec per leaf of v; 1 where the trees
   do not match. */
static int spec_prefix_rec(SrInterp *I, SrVal *spec, SrVal *v, SrVal *out, SrBuf *path, SrVal *paths) {
  SrVal *pc = spec->kind == SR_V_SPEC || spec->kind == SR_V_NONE ? NULL : sr_pytree_children(spec);
  if (!pc) {
    SrVal *lv = sr_pytree_flatten_any(I, v);
    if (!lv) return -1;
    int n = lv->seq.n;
    sr_unref(lv);
    for (int i = 0; i < n; i++) {
      sr_seq_push(NULL, out, sr_ref(spec));
      if (paths) sr_seq_push(NULL, paths, sr_str_cstr(NULL, sr_buf_str(path)));
    }
    return 0;
  }
  SrVal *fc = spec->kind == v->kind ? sr_pytree_children(v) : NULL;
  int rc = !fc || fc->seq.n != pc->seq.n;
  int *o = spec->kind == SR_V_DICT ? sr_pytree_dict_order(spec) : NULL;
  if (!rc && o) {
    int *q = sr_pytree_dict_order(v);
    for (int i = 0; i < spec->dict.n && !rc; i++) rc = !sr_val_equal(spec->dict.keys[o[i]], v->dict.keys[q[i]]);
    free(q);
  }
  size_t at = path->len;
  for (int i = 0; !rc && i < pc->seq.n; i++) {
    sr_buf_putc(path, '[');
    if (o) sr_val_repr(path, spec->dict.keys[o[i]]);
    else sr_buf_printf(path, "%d", i);
    sr_buf_putc(path, ']');
    rc = spec_prefix_rec(I, pc->seq.items[i], fc->seq.items[i], out, path, paths);
    path->len = at;
    path->p[at] = 0;
  }
  free(o);
  sr_unref(pc);
  sr_unref(fc);
  return rc;
}

/* broadcast_prefix, and where it fails prefix_errors' first error raised
   as e('shard_map in_specs') (what: "in_specs" or "out_specs"). */
static int spec_prefix_paths(SrInterp *I, SrVal *spec, SrVal *v, SrVal *out, const char *what, SrVal *paths) {
  SrBuf path = SR_BUF_INIT;
  sr_buf_puts(&path, "");
  int rc = spec_prefix_rec(I, spec, v, out, &path, paths);
  sr_buf_free(&path);
  if (rc <= 0) return rc;
  char name[32];
  snprintf(name, sizeof name, "shard_map %s", what);
  if (sr_pytree_prefix_error(I, spec, v, name) == 0 && !I->exc)
    sr_raise(I, "ValueError", "%s is not a tree prefix of the corresponding value", name);
  return -1;
}


/* shard_map._spec_rank_error, with the key paths of the specs and of the
   values (for the inputs checked before the body is traced, as
   _check_specs_vs_args does; for the outputs after it, as _check_names
   does).  An input's message lacks the ", where args[0] is bound to f's
   parameter 'x'," JAX adds where inspect.signature binds the arguments. */
static int rank_check(SrInterp *I, int is_out, const char *fname, SrVal *tree, SrVal *leaves, SrVal *specs,
                      SrVal *spaths) {
  const char *prefix = is_out ? "out" : "in";
  int n = leaves->seq.n, k = 0, scalar = 0, nl = 0;
  char **lp = sr_xcalloc((size_t)n + 1, sizeof *lp);
  SrBuf path = SR_BUF_INIT, msgs = SR_BUF_INIT;
  sr_buf_puts(&path, "");
  sr_pytree_leaf_paths(tree, &path, lp, &nl);
  for (int i = 0; i < n; i++) {
    SrVal *s = specs->seq.items[i];
    const SrType *t = s->kind == SR_V_SPEC ? vtype(I, leaves->seq.items[i]) : NULL;
    if (!t || s->spec->n <= t->ndim) continue;
    if (k++) sr_buf_puts(&msgs, "\n\n");
    sr_buf_printf(&msgs, "* %s_specs%s is ", prefix, spaths->seq.items[i]->str.s);
    sr_val_str(&msgs, s);
    sr_buf_printf(&msgs, " which has length %d, but ", s->spec->n);
    if (is_out) sr_buf_printf(&msgs, "%s(*args)", fname);
    else sr_buf_puts(&msgs, "the passed args");
    sr_buf_printf(&msgs, "%s has shape ", i < nl ? lp[i] : "");
    sr_type_str(&msgs, t, 0);
    sr_buf_printf(&msgs, ", which has rank %d (and %d < %d)", t->ndim, t->ndim, s->spec->n);
    if (!t->ndim) scalar = 1;
  }
  for (int i = 0; i < nl; i++) free(lp[i]);
  free(lp);
  sr_buf_free(&path);
  if (!k) {
    sr_buf_free(&msgs);
    return 0;
  }
  SrBuf b = SR_BUF_INIT;
  sr_buf_printf(&b, "shard_map applied to the function '%s' was given an %s_specs entry which is too long to be "
                    "compatible with the corresponding %sput value from the function:\n\n%s\n\n",
                fname, prefix, prefix, sr_buf_str(&msgs) + (k == 1 ? 2 : 0));
  sr_buf_printf(&b, "Entries in %s_specs must be of length no greater than the number of axes in the corresponding "
                    "%sput value.\n\nEither revise the spec to be shorter, or modify '%s' so that its %sputs have "
                    "sufficient rank.",
                prefix, prefix, fname, prefix);
  if (scalar)
    sr_buf_printf(&b, "\n\nFor scalar values (rank 0), consider using an %s_specs entry of `P()`, where "
                      "`P = jax.sharding.PartitionSpec`.", prefix);
  if (scalar && is_out)
    sr_buf_puts(&b, " In particular, for rank 0 outputs which are not constant over the mesh, add at least one "
                    "(singleton) axis to them so that they can be concatenated using out_specs.");
  sr_raise(I, "ValueError", "%s", sr_buf_str(&b));
  sr_buf_free(&b);
  sr_buf_free(&msgs);
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
  SrVal *ans;
  if (f->static_leaves) {
    SrVal *all = sr_seq(NULL, SR_V_LIST, f->static_leaves->seq.n);
    for (int i = 0, k = 0; i < f->static_leaves->seq.n; i++) {
      SrVal *v = f->static_leaves->seq.items[i];
      sr_seq_push(NULL, all, sr_ref(v->kind == SR_V_NONE && k < a->n ? a->v[k++] : v));
    }
    SrVal *full = sr_pytree_unflatten(f->static_tree, all);
    sr_unref(all);
    if (!full) return NULL;
    SrArgs fa = {full->seq.n, full->seq.items, 0, NULL, NULL, NULL};
    ans = sr_call(I, f->fn, &fa);
    sr_unref(full);
  } else {
    ans = sr_call(I, f->fn, a);
  }
  if (!ans) return NULL;
  SrVal *leaves = sr_pytree_flatten(I, ans);
  SrVal *specs = sr_seq(NULL, SR_V_LIST, 0), *spaths = sr_seq(NULL, SR_V_LIST, 0);
  if (!leaves || spec_prefix_paths(I, f->out_specs, ans, specs, "out_specs", spaths) < 0) {
    sr_unref(ans);
    sr_unref(leaves);
    sr_unref(specs);
    sr_unref(spaths);
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
        sr_unref(spaths);
        return NULL;
      }
      sr_unref(leaves->seq.items[i]);
      leaves->seq.items[i] = x;
    }
  }
  /* _check_names on the results (after the implicit pvary) */
  int bad = rank_check(I, 1, sr_builtin_name(f->fn) ? sr_builtin_name(f->fn) : "f", ans, leaves, specs, spaths);
  sr_unref(spaths);
  SrVal *r = bad ? NULL : sr_pytree_unflatten(ans, leaves);
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
  /* mesh_axis_names_wo_vmap: the mesh's axes but the Explicit ones an
     enclosing vmap maps away */
  SrAxes wo = (SrAxes)((1ull << am->n) - 1);
  for (int k = 0; k < I->jax->nexplicit_names; k++) {
    int a = sr_mesh_axis(am, I->jax->explicit_names[k]);
    if (a >= 0) wo &= ~(1u << a);
  }
  *out = wo;
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
    int a = e->kind == SR_V_STR || e->kind == SR_V_WORD ? sr_mesh_axis(am, sr_intern(e->str.s, e->str.n)) : -1;
    sub = a >= 0 && (wo >> a & 1);
  }
  if (!sub) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    if (v->kind == SR_V_SET) sr_buf_puts(&b, "frozenset(");
    sr_val_repr(&b, v);
    if (v->kind == SR_V_SET) sr_buf_puts(&b, ")");
    sr_axes_frozenset_str(&c, am, wo);
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
    if (f->smap)
      sr_raise(I, "TypeError", "in_axes was not specified when axis_name=%s was of type %s", b.p, c.p);
    else
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
  /* any leaf: None in in_specs passes an argument of any type as it is */
  SrVal *leaves = sr_pytree_flatten_any(I, args);
  SrVal *specs = sr_seq(NULL, SR_V_LIST, 0), *result = NULL, *out_tree = NULL, *captured = NULL, *targs = NULL;
  SrVal *saved_tree = NULL, *saved_leaves = NULL, *static_leaves = NULL, *static_tree = NULL;
  int set_static = 0;
  SrJaxpr *body = NULL;
  const SrType **itypes = NULL;
  SrPList ps = {0};
  if (!leaves) goto done;
  int n = leaves->seq.n;
  if (f->in_specs) {
    SrVal *spaths = sr_seq(NULL, SR_V_LIST, 0);
    int bad = spec_prefix_paths(I, f->in_specs, args, specs, "in_specs", spaths) < 0 ||
              rank_check(I, 0, sr_builtin_name(f->fn) ? sr_builtin_name(f->fn) : "f", args, leaves, specs, spaths) < 0;
    sr_unref(spaths);
    if (bad) goto done;
  } else {
    for (int i = 0; i < n; i++) {
      const SrType *lt = vtype(I, leaves->seq.items[i]);
      if (!lt) {
        /* core.typeof of what is not a JAX value */
        if (!I->exc) {
          SrBuf b = SR_BUF_INIT;
          sr_to_repr(I, &b, leaves->seq.items[i]);
          sr_raise(I, "TypeError", "Value %s with type <class '%s'> is not a valid JAX type", sr_buf_str(&b),
                   sr_val_kind_name(leaves->seq.items[i]));
          sr_buf_free(&b);
        }
        goto done;
      }
      SrVal *s = manual_spec(I, lt, axis_names, am);
      if (!s) goto done;
      sr_seq_push(NULL, specs, s);
    }
  }
  /* None in in_specs: a static argument, passed to the body as it is */
  saved_tree = f->static_tree;
  saved_leaves = f->static_leaves;
  {
    int nstatic = 0;
    for (int i = 0; i < n; i++) nstatic += specs->seq.items[i]->kind != SR_V_SPEC;
    if (nstatic) {
      SrVal *dl = sr_seq(NULL, SR_V_TUPLE, n - nstatic), *ds = sr_seq(NULL, SR_V_LIST, n - nstatic);
      static_leaves = sr_seq(NULL, SR_V_LIST, n);
      for (int i = 0; i < n; i++) {
        int dyn = specs->seq.items[i]->kind == SR_V_SPEC;
        sr_seq_push(NULL, static_leaves, dyn ? sr_none() : sr_ref(leaves->seq.items[i]));
        if (!dyn) continue;
        sr_seq_push(NULL, dl, sr_ref(leaves->seq.items[i]));
        sr_seq_push(NULL, ds, sr_ref(specs->seq.items[i]));
      }
      sr_unref(leaves);
      sr_unref(specs);
      leaves = dl;
      specs = ds;
      n -= nstatic;
      static_tree = args;
      args = sr_ref(dl);
    }
  }
  /* the mapped arguments must be JAX types */
  for (int i = 0; i < n; i++)
    if (!vtype(I, leaves->seq.items[i])) {
      SrBuf b = SR_BUF_INIT;
      sr_to_str(I, &b, leaves->seq.items[i]);
      sr_raise(I, "TypeError", "Argument '%s' of type <class '%s'> is not a valid JAX type.", sr_buf_str(&b),
               sr_val_kind_name(leaves->seq.items[i]));
      sr_buf_free(&b);
      goto done;
    }
  /* called outside jit with an AbstractMesh: the devices come from the
     arguments' NamedShardings, which must be on a mesh of its shape
     (get_mesh_from_args) */
  if (!I->trace && f->mesh && f->mesh->kind == SR_V_MESH && f->mesh->mesh->abstract) {
    int found = 0;
    for (int i = 0; i < n; i++) {
      SrArrayObj *o = sr_array_of(leaves->seq.items[i]);
      const SrMesh *lm = o && o->kind == SR_AV_CONCRETE && o->data ? o->data->mesh : NULL;
      if (!lm || !lm->n) continue;
      int same = lm->n == am->n;
      for (int k = 0; same && k < am->n; k++) same = lm->names[k] == am->names[k] && lm->sizes[k] == am->sizes[k];
      if (!same) {
        SrBuf x1 = SR_BUF_INIT, x2 = SR_BUF_INIT, x3 = SR_BUF_INIT;
        const SrMesh *ms[2] = {lm, am};
        SrBuf *bs[2] = {&x1, &x2};
        for (int q = 0; q < 2; q++) {
          sr_buf_putc(bs[q], '(');
          for (int k = 0; k < ms[q]->n; k++) sr_buf_printf(bs[q], "('%s', %lld)%s", ms[q]->names[k], (long long)ms[q]->sizes[k], ms[q]->n == 1 ? "," : k + 1 < ms[q]->n ? ", " : "");
          sr_buf_putc(bs[q], ')');
        }
        sr_type_str(&x3, vtype(I, leaves->seq.items[i]), 0);
        sr_raise(I, "ValueError", "Mesh shape of the input %s does not match the mesh shape passed to shard_map  %s for shape %s",
                 x1.p, x2.p, x3.p);
        sr_buf_free(&x1);
        sr_buf_free(&x2);
        sr_buf_free(&x3);
        goto done;
      }
      found = 1;
    }
    if (!found) {
      sr_raise(I, "ValueError", "Please pass `jax.Array`s with a `NamedSharding` as input to `shard_map` when passing "
                                "`AbstractMesh` to the mesh argument.");
      goto done;
    }
  }
  /* _check_specs_vs_args: each argument divisible by its spec's axes,
     before the other checks */
  {
    SrDiags d = SR_DIAGS_INIT;
    SrTypeCtx cx;
    sr_type_ctx(I, &cx, &d);
    const SrType **ts = sr_xcalloc((size_t)n + 1, sizeof *ts);
    for (int i = 0; i < n; i++) ts[i] = vtype(I, leaves->seq.items[i]);
    int bad = sr_lax_shard_map_divisible(&cx, am, sr_builtin_name(f->fn) ? sr_builtin_name(f->fn) : "f", (uint32_t)n,
                                         ts, specs->seq.items) < 0;
    free(ts);
    if (bad) {
      sr_raise_diags(I, &d, "ValueError");
      goto done;
    }
    sr_diags_clear(&d);
  }
  /* with every axis manual and Explicit, in_specs must match the args */
  if (axis_names == (SrAxes)((1ull << am->n) - 1) && axis_names == explicit_) {
    for (int i = 0; i < n; i++) {
      const SrType *t = vtype(I, leaves->seq.items[i]);
      SrVal *ts = sr_api_type_spec(t);
      const SrSpec *us = specs->seq.items[i]->spec;
      SrSpec u = *us;
      SrSpecEntry e[SR_MAX_RANK];
      const char *kept[SR_MAX_RANK][SR_MAX_DIM_AXES];
      if (us->n < t->ndim) {
        for (int d = 0; d < t->ndim; d++) e[d] = d < us->n ? us->e[d] : (SrSpecEntry){0, NULL};
        u.e = e;
        u.n = t->ndim;
      }
      /* remove_size_one_mesh_axis_from_spec */
      if (sr_type_remove_size_one()) {
        if (u.e != e) memcpy(e, u.e, (size_t)u.n * sizeof *e);
        u.e = e;
        sr_api_entries_drop_unit_axes(am, e, u.n < SR_MAX_RANK ? u.n : SR_MAX_RANK, kept);
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
    targs = sr_api_abstract_like(args, itypes, n);
    f->inner = inner;
    f->static_tree = static_tree;
    f->static_leaves = static_leaves;
    set_static = 1;
    SrVal *wrapper = sr_builtin_with(sr_builtin_name(f->fn) ? sr_builtin_name(f->fn) : "f", smap_body, f, NULL);
    int saved_vma = I->jax->check_vma;
    if (sr_api_push_mesh(I, inner) < 0) {
      sr_unref(wrapper);
      goto done;
    }
    I->jax->check_vma = f->check_vma;
    /* called outside jit: its tracers print each device's block */
    if (!I->trace && axis_names == (SrAxes)((1ull << am->n) - 1) && mesh_param->kind == SR_V_MESH) {
      /* _shard_map_impl: an abstract mesh (the context's) runs on the
         concrete mesh set_mesh set */
      const SrMesh *cm = I->jax->mesh;
      if (mesh_param->mesh->abstract && cm && cm->n && !cm->abstract && sr_mesh_shape(cm) == sr_mesh_shape(am)) {
        SrVal *cmv = sr_mesh_val(NULL, cm);
        sr_tracers_smap_next(I, cmv, leaves, specs);
        sr_unref(cmv);
      } else
        sr_tracers_smap_next(I, mesh_param, leaves, specs);
    }
    /* api_util.debug_info("shard_map", f, args, {}) */
    SrArgs da = {a->n, a->v, 0, NULL, NULL, NULL};
    sr_trace_fn_debug_call(I, "shard_map", f->fn, &da, NULL, 0);
    body = sr_trace_fn(I, wrapper, targs->seq.n, targs->seq.items, 0, NULL, NULL, SR_TRACE_BODY, &out_tree,
                       &captured);
    sr_trace_fn_debug_clear();
    sr_trace_next_repr(I, NULL, NULL);
    I->jax->check_vma = saved_vma;
    sr_api_pop_mesh(I);
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
  if (set_static) {
    f->static_tree = saved_tree;
    f->static_leaves = saved_leaves;
  }
  sr_unref(static_tree);
  sr_unref(static_leaves);
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

static SrVal *make_smap_flag(SrVal *fn, SrVal **p, int smap) {
  SMapFn *f = sr_xcalloc(1, sizeof *f);
  f->smap = smap;
  f->fn = sr_ref(fn);
  f->out_specs = sr_ref(p[0]);
  f->in_specs = p[1] ? sr_ref(p[1]) : NULL;
  f->mesh = p[2] ? sr_ref(p[2]) : NULL;
  f->axis_names = p[3] ? sr_ref(p[3]) : NULL;
  f->check_vma = p[4] ? sr_val_truthy(p[4]) : 1;
  const char *nm = sr_builtin_name(fn);
  /* util.wraps(f): __wrapped__ */
  return sr_builtin_set_wrapped(sr_builtin_with(nm ? nm : "<function>", smap_call, f, smap_free), fn);
}

static SrVal *make_smap(SrVal *fn, SrVal **p) { return make_smap_flag(fn, p, 0); }

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
  if (a->n != 1 || a->nkw || !sr_is_callable(I, a->v[0])) return sr_raise(I, "TypeError", "shard_map expects a function");
  return make_smap(a->v[0], s->p);
}

static SrVal *jax_shard_map(SrInterp *I, SrArgs *a) {
  SrVal *p[6];
  if (sr_args_parse(I, a, "shard_map", "f=, *, out_specs, in_specs=, mesh=, axis_names=, check_vma=", p) < 0)
    return NULL;
  if (p[0] && p[0]->kind != SR_V_NONE) {
    if (!sr_is_callable(I, p[0]))
      return sr_raise(I, "TypeError", "shard_map requires a callable for its first argument, but got %s of type %s.",
                      "a value", sr_val_kind_name(p[0]));
    return make_smap(p[0], p + 1);
  }
  SMapDeco *s = sr_xcalloc(1, sizeof *s);
  for (int i = 0; i < 5; i++) s->p[i] = p[i + 1] ? sr_ref(p[i + 1]) : NULL;
  return sr_builtin_with("shard_map", smap_decorator, s, smap_deco_free);
}


/* shard_map._axes_to_pspec over a tree of axes (ints and Nones): None is
   P(), an axis k P(None, ..., None, axis_name) with k Nones. */
static SrVal *axes_to_pspecs(SrInterp *I, SrVal *v, SrVal *name, const char *what, SrVal *whole) {
  if (v->kind == SR_V_NONE || v->kind == SR_V_INT) {
    int64_t k = v->kind == SR_V_INT ? v->i : -1;
    if (k < -1 || k >= SR_MAX_RANK) return sr_raise(I, "ValueError", "smap %s: axis %lld out of range", what, (long long)k);
    SrSpecEntry e[SR_MAX_RANK];
    const char *nm = sr_intern(name->str.s, name->str.n);
    for (int i = 0; i <= k; i++) e[i] = i < k ? (SrSpecEntry){0, NULL} : (SrSpecEntry){1, &nm};
    SrSpec sp = {0};
    sp.n = (int)(k + 1);
    sp.e = e;
    return sr_spec_val(NULL, &sp);
  }
  SrVal *ch = v->kind == SR_V_TUPLE || v->kind == SR_V_LIST || v->kind == SR_V_DICT ? sr_pytree_children(v) : NULL;
  if (!ch) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, whole);
    if (!strcmp(what, "out_axes"))
      sr_raise(I, "TypeError", "smap out_axes must be an int, None, or (nested) container with those types as leaves, "
                               "but got %s.", b.p);
    else
      sr_raise(I, "TypeError", "smap in_axes must be an int, None, jax.sharding.Infer, or (nested) container with "
                               "those types as leaves, but got %s.", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *r = axes_to_pspecs(I, ch->seq.items[i], name, what, whole);
    if (!r) {
      sr_unref(ch);
      return NULL;
    }
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = r;
  }
  SrVal *r = sr_pytree_rebuild(v, ch);
  sr_unref(ch);
  return r;
}

typedef struct SmapDeco {
  SrVal *in_specs, *out_specs, *axis_names;
} SmapDeco;

static void smapdeco_free(void *d) {
  SmapDeco *s = d;
  sr_unref(s->in_specs);
  sr_unref(s->out_specs);
  sr_unref(s->axis_names);
  free(s);
}

static SrVal *smap_make(SrVal *fn, const SmapDeco *s) {
  SrVal *p[5] = {s->out_specs, s->in_specs, NULL, s->axis_names, NULL};
  return make_smap_flag(fn, p, 1);
}

static SrVal *smap_deco_call(SrInterp *I, SrArgs *a) {
  SmapDeco *s = sr_current_builtin(I)->data;
  if (a->n != 1 || a->nkw || !sr_is_callable(I, a->v[0])) return sr_raise(I, "TypeError", "smap expects a function");
  return smap_make(a->v[0], s);
}

/* jax.smap(f, /, *, in_axes=Infer, out_axes, axis_name) (shard_map.py's
   _smap): shard_map over the one axis axis_name of the context mesh, the
   axes made specs by _axes_to_pspec. */
static SrVal *jax_smap(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "smap", "f=, *, in_axes=, out_axes, axis_name", p) < 0) return NULL;
  SrVal *nm = p[3];
  if (nm->kind == SR_V_TUPLE || nm->kind == SR_V_LIST) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, nm);
    sr_raise(I, "TypeError", "smap axis_name should be a `str` or a `Hashable`, but got %s", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  if (nm->kind != SR_V_STR && nm->kind != SR_V_WORD) return sr_raise(I, "TypeError", "smap axis_name must be a str");
  SrVal *in_axes = p[1];
  if (in_axes && in_axes->kind != SR_V_NONE && in_axes->kind != SR_V_INT && in_axes->kind != SR_V_TUPLE) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, in_axes);
    sr_raise(I, "TypeError", "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries "
                             "corresponding to the positional arguments passed to the function, but got %s.", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  SmapDeco *s = sr_xcalloc(1, sizeof *s);
  s->out_specs = axes_to_pspecs(I, p[2], nm, "out_axes", p[2]);
  s->in_specs = s->out_specs && in_axes ? axes_to_pspecs(I, in_axes, nm, "in_axes", in_axes) : NULL;
  if (!s->out_specs || (in_axes && !s->in_specs)) {
    smapdeco_free(s);
    return NULL;
  }
  s->axis_names = sr_seq(NULL, SR_V_SET, 1);
  sr_seq_push(NULL, s->axis_names, sr_ref(nm));
  if (p[0] && p[0]->kind != SR_V_NONE) {
    SrVal *r = sr_is_callable(I, p[0]) ? smap_make(p[0], s) : sr_raise(I, "TypeError", "smap expects a function");
    smapdeco_free(s);
    return r;
  }
  return sr_builtin_with("smap", smap_deco_call, s, smapdeco_free);
}

/* Primitive.bind: under a mesh with a Manual axis and only Auto or Manual
   ones (inside a shard_map), a concrete array closed over from a mesh of
   another kind is cast to the context: from an all-Auto mesh it is
   resharded to the context mesh, replicated; one on Explicit axes is not
   supported.  0, or 1 with *cast set to the operands to bind instead (new
   references), or -1 with an exception. */
static int cast_closed_over(SrInterp *I, const SrPrim *prim, int nin, SrVal **in, SrVal **cast) {
  if (!I->trace || !sr_backend_hooks.array_mesh || (prim->flags & SR_PF_CALL) || prim->id == SR_P_reshard) return 0;
  const SrMesh *cur = sr_jax_abstract_mesh(I->jax);
  int manual = 0, auto_or_manual = cur->n > 0;
  for (int i = 0; i < cur->n; i++) {
    manual |= cur->types[i] == SR_AXIS_MANUAL;
    auto_or_manual &= cur->types[i] != SR_AXIS_EXPLICIT;
  }
  if (!manual || !auto_or_manual) return 0;
  /* the outermost trace under this mesh began the shard_map: an array
     made since is a constant of its body (a tracer in JAX), not a value
     closed over */
  const SrTrace *body = I->trace;
  while (body->parent && body->parent->mesh == cur) body = body->parent;
  int any = 0;
  for (int i = 0; i < nin; i++) {
    SrArrayObj *a = sr_array_of(in[i]);
    const SrMesh *m = a && a->kind == SR_AV_CONCRETE && a->serial < body->serial
                          ? sr_backend_hooks.array_mesh(a->data)
                          : NULL;
    int all_auto = m && m->n > 0, explicit = 0;
    for (int k = 0; m && k < m->n; k++) {
      all_auto &= m->types[k] == SR_AXIS_AUTO;
      explicit |= m->types[k] == SR_AXIS_EXPLICIT;
    }
    cast[i] = NULL;
    if (all_auto) {
      const SrType *t = a->type;
      SrSpecEntry e[SR_MAX_RANK];
      memset(e, 0, sizeof e);
      SrSpec spec = {0};
      spec.n = t->ndim;
      spec.e = e;
      SrParam ps[2] = {{sr_intern_cstr("dst_sharding"), sr_sharding_val(NULL, cur, &spec, NULL)},
                       {sr_intern_cstr("concrete_mesh"), sr_none()}};
      SrVal *r = sr_bind_prim(I, &sr_prims[SR_P_reshard], 1, &in[i], 2, ps, NULL, 0);
      sr_unref(ps[0].val);
      sr_unref(ps[1].val);
      if (!r) {
        for (int k = 0; k < i; k++) sr_unref(cast[k]);
        return -1;
      }
      cast[i] = r;
      any = 1;
    } else if (explicit) {
      /* aval.str_short(True, True): the mesh's axis types after the type */
      SrBuf b = SR_BUF_INIT;
      sr_type_str(&b, a->type, 1);
      sr_buf_puts(&b, "({");
      /* core._axis_types_dict: the types in order of first appearance */
      for (int j = 0, done = 0; j < m->n; j++) {
        int ty = m->types[j];
        if (done & (1 << ty)) continue;
        sr_buf_printf(&b, "%s%s: (", done ? ", " : "", sr_axis_type_name(ty));
        done |= 1 << ty;
        int cnt = 0;
        for (int k = j; k < m->n; k++) {
          if (m->types[k] != ty) continue;
          sr_buf_printf(&b, cnt ? ", '%s'" : "'%s'", m->names[k]);
          cnt++;
        }
        sr_buf_puts(&b, cnt == 1 ? ",)" : ")");
      }
      sr_buf_puts(&b, "})");
      sr_raise(I, "NotImplementedError",
               "Closing over inputs to shard_map where the input is sharded on `Explicit` axes is not implemented. "
               "As a workaround, please pass those inputs as an argument to shard_map. Got input with shape %s",
               sr_buf_str(&b));
      sr_buf_free(&b);
      for (int k = 0; k < i; k++) sr_unref(cast[k]);
      return -1;
    }
  }
  if (!any) return 0;
  for (int i = 0; i < nin; i++)
    if (!cast[i]) cast[i] = sr_ref(in[i]);
  return 1;
}

/* ---- top_level_all_gather (shard_map.py) ----
   x gathered, dimension by dimension, from in_spec (its type's) to
   out_spec (the out_sharding's, padded with None) by all_gathers to
   'reduced' inside jit(shard_map(..., out_specs=out_spec)). */

typedef struct TopAg {
  SrVal *in_spec, *out_spec; /* P values */
  const SrType *type;        /* x's, for the messages */
  int multi_dim;
} TopAg;

static void top_ag_free(void *d) {
  TopAg *t = d;
  sr_unref(t->in_spec);
  sr_unref(t->out_spec);
  free(t);
}

static int same_entry(const SrSpecEntry *a, const SrSpecEntry *b) {
  if (a->n != b->n) return 0;
  for (int k = 0; k < a->n; k++)
    if (a->names[k] != b->names[k]) return 0;
  return 1;
}

static SrVal *top_ag_err(SrInterp *I, const TopAg *t, int which, int axis) {
  SrBuf is = SR_BUF_INIT, os = SR_BUF_INIT, av = SR_BUF_INIT;
  sr_spec_repr(&is, t->in_spec->spec);
  sr_spec_repr(&os, t->out_spec->spec);
  sr_aval_str(&av, t->type);
  if (which == 0)
    sr_raise(I, "ValueError",
             "multiple dimensions cannot be all_gathered since multi_dim=False passed to `top_level_all_gather`. "
             "Got in_spec=%s and out_spec=%s",
             is.p, os.p);
  else if (which == 1)
    sr_raise(I, "ValueError", "top_level_all_gather doesn't allow input %s to be unsharded on dimension %d when out_spec=%s.",
             av.p, axis, os.p);
  else
    sr_raise(I, "ValueError",
             "top_level_all_gather maintains `top_level_all_gather(x, ...) == x` property. The in_spec=%s and "
             "out_spec=%s don't satisfy this property. Please change your out_spec of array dimension %d so that "
             "it's a prefix of in_spec",
             is.p, os.p, axis);
  sr_buf_free(&is);
  sr_buf_free(&os);
  sr_buf_free(&av);
  return NULL;
}

/* the body: one tiled all_gather(to='reduced') per dimension that differs */
static SrVal *top_ag_body(SrInterp *I, SrArgs *a) {
  const TopAg *t = sr_current_builtin(I)->data;
  if (a->n != 1) return sr_raise(I, "TypeError", "top_level_all_gather's body takes one argument");
  const SrSpec *in = t->in_spec->spec, *out = t->out_spec->spec;
  SrVal *ag = sr_lookup_qualname("jax.lax.all_gather");
  if (!ag) return sr_raise(I, "NotImplementedError", "top_level_all_gather needs jax.lax.all_gather");
  SrVal *x = sr_ref(a->v[0]);
  int count = 0;
  for (int axis = 0; axis < in->n && axis < out->n; axis++) {
    const SrSpecEntry *i = &in->e[axis], *o = &out->e[axis];
    if (same_entry(i, o)) continue;
    if (!t->multi_dim && count > 0) return sr_unref(x), top_ag_err(I, t, 0, axis);
    count++;
    if (!i->n) return sr_unref(x), top_ag_err(I, t, 1, axis);
    int prefix = o->n <= i->n;
    for (int k = 0; prefix && k < o->n; k++) prefix = i->names[k] == o->names[k];
    if (o->n && !prefix) return sr_unref(x), top_ag_err(I, t, 2, axis);
    /* axis_name = i if o is None else i[-len(o):] */
    int from = o->n ? i->n - o->n : 0;
    SrVal *names = sr_seq(NULL, SR_V_TUPLE, i->n - from);
    for (int k = from; k < i->n; k++) sr_seq_push(NULL, names, sr_str_cstr(NULL, i->names[k]));
    const char *kw[4] = {sr_intern_cstr("axis_name"), sr_intern_cstr("axis"), sr_intern_cstr("tiled"), sr_intern_cstr("to")};
    SrVal *kwv[4] = {names, sr_int(NULL, axis), sr_bool(1), sr_str_cstr(NULL, "reduced")};
    SrArgs ca = {1, &x, 4, kw, kwv, NULL};
    SrVal *y = sr_call(I, ag, &ca);
    for (int k = 0; k < 4; k++) sr_unref(kwv[k]);
    sr_unref(x);
    if (!y) return NULL;
    x = y;
  }
  return x;
}

static SrVal *top_ag_one(SrInterp *I, SrVal *x, SrVal *out_sh_, int multi_dim) {
  const SrType *ty = sr_value_type(I, x);
  if (!ty) return sr_raise(I, "TypeError", "top_level_all_gather expects arrays");
  SrVal *out_sh = NULL;
  if (sr_api_canon_sharding(I, out_sh_, "top_level_all_gather", &out_sh) < 0) return NULL;
  if (!out_sh) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, out_sh_);
    sr_raise(I, "ValueError",
             "out_sharding passed to top_level_all_gather cannot be %s. It should be a PartitionSpec or NamedSharding.",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  SrVal *in_sh = sr_type_sharding(I, ty);
  if (!in_sh) {
    sr_unref(out_sh);
    return NULL;
  }
  /* out_sh.spec._normalized_spec_for_aval(len(in_spec)) */
  const SrSpec *os = out_sh->sh.spec;
  int n = in_sh->sh.spec->n > os->n ? in_sh->sh.spec->n : os->n;
  SrSpecEntry e[SR_MAX_RANK + 8];
  memset(e, 0, sizeof e);
  for (int i = 0; i < os->n && i < (int)(sizeof e / sizeof *e); i++) e[i] = os->e[i];
  for (int i = 0; i < os->n; i++)
    if (e[i].n == 1 && e[i].names[0] == SR_SPEC_UNCONSTRAINED) e[i].n = 0;
  SrSpec ns = *os;
  ns.n = n < (int)(sizeof e / sizeof *e) ? n : (int)(sizeof e / sizeof *e);
  ns.e = e;
  /* jax_remove_size_one_mesh_axis_from_type: without the axes of size 1 */
  const SrMesh *om = out_sh->sh.mesh;
  const char *kept[SR_MAX_RANK + 8][SR_MAX_DIM_AXES], *ur[2][SR_MAX_AXES];
  if (sr_type_remove_size_one()) {
    sr_api_entries_drop_unit_axes(om, e, ns.n, kept);
    for (int w = 0; w < 2; w++) {
      const char **src = w ? os->reduced : os->unreduced;
      int cnt = w ? os->nreduced : os->nunreduced, k2 = 0;
      for (int k = 0; k < cnt && k2 < SR_MAX_AXES; k++) {
        int ax = sr_mesh_axis(om, src[k]);
        if (ax < 0 || om->sizes[ax] != 1) ur[w][k2++] = src[k];
      }
      if (w) {
        ns.reduced = ur[1];
        ns.nreduced = k2;
      } else {
        ns.unreduced = ur[0];
        ns.nunreduced = k2;
        if (!k2) ns.ukind = SR_UK_NONE;
      }
    }
  }
  TopAg *t = sr_xcalloc(1, sizeof *t);
  t->in_spec = sr_spec_val(NULL, in_sh->sh.spec);
  t->out_spec = sr_spec_val(NULL, &ns);
  t->type = ty;
  t->multi_dim = multi_dim;
  sr_unref(in_sh);
  sr_unref(out_sh);
  SrVal *out_spec = sr_ref(t->out_spec);
  SrVal *body = sr_builtin_with("f_shmap", top_ag_body, t, top_ag_free);
  SrVal *sm = sr_lookup_qualname("jax.shard_map"), *jit = sr_lookup_qualname("jax.jit");
  SrVal *r = NULL;
  if (sm && jit) {
    const char *kw[1] = {sr_intern_cstr("out_specs")};
    SrArgs sa = {1, &body, 1, kw, &out_spec, NULL};
    SrVal *f = sr_call(I, sm, &sa);
    SrArgs ja = {1, &f, 0, NULL, NULL, NULL};
    SrVal *jf = f ? sr_call(I, jit, &ja) : NULL;
    SrArgs xa = {1, &x, 0, NULL, NULL, NULL};
    r = jf ? sr_call(I, jf, &xa) : NULL;
    sr_unref(jf);
    sr_unref(f);
  } else {
    sr_raise(I, "NotImplementedError", "top_level_all_gather needs jax.shard_map and jax.jit");
  }
  sr_unref(body);
  sr_unref(out_spec);
  return r;
}

/* top_level_all_gather(xs, out_sharding, *, multi_dim=False): out_sharding
   one for all the leaves of xs, or one per element of a tuple or list */
static SrVal *jax_top_level_all_gather(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "top_level_all_gather", "xs, out_sharding, *, multi_dim=", p) < 0) return NULL;
  const SrMesh *m = sr_jax_abstract_mesh(I->jax);
  int explicit = m->n > 0;
  for (int i = 0; i < m->n; i++) explicit &= m->types[i] == SR_AXIS_EXPLICIT;
  if (!explicit) {
    SrBuf b = SR_BUF_INIT;
    sr_mesh_str(&b, sr_mesh_abstract(m, m->device_fields));
    sr_raise(I, "ValueError", "top_level_all_gather works when all mesh axes of context mesh are explicit. Got %s",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  int multi = p[2] && sr_val_truthy(p[2]);
  SrVal *leaves = sr_pytree_flatten(I, p[0]);
  if (!leaves) return NULL;
  int per = (p[1]->kind == SR_V_TUPLE || p[1]->kind == SR_V_LIST) && (p[0]->kind == SR_V_TUPLE || p[0]->kind == SR_V_LIST) &&
            p[1]->seq.n == p[0]->seq.n && leaves->seq.n == p[0]->seq.n;
  SrVal *outs = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < leaves->seq.n; i++) {
    SrVal *r = top_ag_one(I, leaves->seq.items[i], per ? p[1]->seq.items[i] : p[1], multi);
    if (!r) {
      sr_unref(outs);
      sr_unref(leaves);
      return NULL;
    }
    sr_seq_push(NULL, outs, r);
  }
  SrVal *res = sr_pytree_unflatten(p[0], outs);
  sr_unref(outs);
  sr_unref(leaves);
  return res;
}

/* ---- registration ---- */

void sr_shard_map_init(void) {
  sr_bind_cast_hook = cast_closed_over;
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.shard_map", jax_shard_map,
     "shard_map(f, *, out_specs, in_specs=Infer, mesh=None, axis_names=set(), check_vma=True): axis_names a set of the axes made manual (empty: all)"},
    {"jax._src.shard_map.top_level_all_gather", jax_top_level_all_gather,
     "top_level_all_gather(xs, out_sharding, *, multi_dim=False): xs gathered to out_sharding (its dimensions' "
     "in_spec prefixes, the rest reduced) by all_gathers inside jit(shard_map)"},
    {"jax.smap", jax_smap,
     "smap(f, *, in_axes=Infer, out_axes, axis_name): shard_map over the one mesh axis axis_name, in_axes and out_axes (ints, None) as specs"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
