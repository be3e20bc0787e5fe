/* lax_parallel.c: jax.lax's manual-mode collectives (lax/parallel.py):
 * psum, pmean, pmax, pmin, all_gather, psum_scatter, ppermute, all_to_all,
 * axis_index, axis_size, pcast, pvary. */
#include "jax/lax.h"
#include "jax/jax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "py/objects.h"
#include "py/introspect.h"
#include "py/range.h"
#include "text/print_val.h"
#include "jax/vjp.h"
#include "util/intern.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

/* ======================================================================
 * manual-mode collectives (lax/parallel.py)
 * ====================================================================== */

/* The axis names argument as given (str or tuple) and as axes of the
   context mesh; every name must be bound (Manual in the context). */
typedef struct AxisArg {
  SrVal *names;  /* a tuple of str, as the user ordered them */
  SrAxes axes;   /* the names that are mesh axes */
  int nvmap;     /* how many name an enclosing jax.vmap's axis instead */
  int64_t size;  /* product of the sizes (psum(1, axis_name)) */
} AxisArg;

/* The size of an enclosing jax.vmap's axis s (core.get_axis_env()), or -1. */
static int64_t vmap_axis_size(SrInterp *I, const char *s) {
  for (int i = I->jax->nvmap - 1; i >= 0; i--)
    if (I->jax->vmap_axis[i] == s) return I->jax->vmap_size[i];
  return -1;
}

/* api: the primitive whose abstract eval names an unbound axis
   (parallel._check_axis_names), or NULL for core's axis_size lookup. */
static int axis_arg_for(SrInterp *I, SrVal *v, AxisArg *out, const char *api) {
  const SrMesh *m = sr_api_mesh(I);
  out->names = sr_seq(NULL, SR_V_TUPLE, 0);
  out->axes = 0;
  out->nvmap = 0;
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
    s = sr_intern_cstr(s);
    int64_t vs = vmap_axis_size(I, s);
    if (vs >= 0) {
      sr_seq_push(NULL, out->names, sr_str_cstr(NULL, s));
      out->nvmap++;
      out->size *= vs;
      continue;
    }
    int ax = sr_mesh_axis(m, s);
    if (ax < 0 || m->types[ax] != SR_AXIS_MANUAL) {
      if (api)
        sr_raise(I, "NameError", "Found an unbound axis name: %s. To fix this, please call %s under `jax.shard_map`.",
                 s, api);
      else
        sr_raise(I, "NameError", "unbound axis name: %s", s);
      return -1;
    }
    sr_seq_push(NULL, out->names, sr_str_cstr(NULL, s));
    out->axes |= 1u << ax;
    out->size *= m->sizes[ax];
  }
  return 0;
}

static int axis_arg(SrInterp *I, SrVal *v, AxisArg *out) { return axis_arg_for(I, v, out, NULL); }

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
  if (!I->jax->check_vma || I->jax->no_auto_pcast) return sr_ref(x);
  const SrMesh *m = sr_api_mesh(I);
  const SrType *t = vtype(I, x);
  return sr_lax_pvary(I, x, aa->axes & ~sr_api_axes_on(t, t->varying, m));
}

typedef struct Coll {
  AxisArg aa;
  SrVal *groups; /* axis_index_groups, a tuple of tuples, or NULL */
  SrVal *axis_name; /* as passed */
  int64_t i1, i2;   /* axis / dims */
  int tiled;
  const char *to;
  SrVal *perm;
} Coll;

/* _validate_reduce_axis_index_groups and _canonicalize_axis_index_groups:
   the groups as a tuple of int tuples, covering range(total) exactly once;
   the collective's axis size becomes len(groups[0]) (_axis_size). */
static int groups_arg(SrInterp *I, SrVal *v, Coll *c) {
  c->groups = NULL;
  if (!v || v->kind == SR_V_NONE) return 0;
  if (!sr_is_seq(v)) return sr_raise(I, "TypeError", "axis_index_groups must be a sequence of sequences"), -1;
  int total = 0;
  for (int i = 0; i < v->seq.n; i++) {
    if (!sr_is_seq(v->seq.items[i]))
      return sr_raise(I, "TypeError", "axis_index_groups must be a sequence of sequences"), -1;
    total += v->seq.items[i]->seq.n;
  }
  uint8_t *seen = calloc((size_t)total + 1, 1);
  SrVal *g = sr_seq(NULL, SR_V_TUPLE, v->seq.n);
  int ok = 1;
  for (int i = 0; i < v->seq.n && ok; i++) {
    SrVal *gi = v->seq.items[i], *t = sr_seq(NULL, SR_V_TUPLE, gi->seq.n);
    for (int j = 0; j < gi->seq.n && ok; j++) {
      int64_t k;
      if (sr_as_int(I, gi->seq.items[j], "axis_index_groups", &k) < 0) ok = -1;
      else if (k < 0 || k >= total || seen[k]) ok = 0;
      else {
        seen[k] = 1;
        sr_seq_push(NULL, t, sr_int(NULL, k));
      }
    }
    sr_seq_push(NULL, g, t);
  }
  free(seen);
  if (ok <= 0) {
    sr_unref(g);
    if (!ok) sr_raise(I, "ValueError", "axis_index_groups must cover all indices exactly once");
    return -1;
  }
  c->groups = g;
  if (g->seq.n) c->aa.size = g->seq.items[0]->seq.n;
  return 0;
}

static SrVal *groups_param(const Coll *c) { return c->groups ? sr_ref(c->groups) : sr_none(); }

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

/* parallel._maybe_skip_one_sized_axes: with
   jax_remove_size_one_mesh_axis_from_type the names of the context mesh's
   axes of size 1 left out (a new reference; NULL when none is left). */
static SrVal *skip_unit_axes(SrInterp *I, SrVal *names) {
  if (!sr_type_remove_size_one()) return sr_ref(names);
  const SrMesh *m = sr_api_mesh(I);
  int n = 1;
  SrVal **items = &names;
  if (names->kind == SR_V_TUPLE || names->kind == SR_V_LIST) {
    n = names->seq.n;
    items = names->seq.items;
  } else if (names->kind != SR_V_STR) {
    return sr_ref(names);
  }
  SrVal *r = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) {
    int ax = items[i]->kind == SR_V_STR ? sr_mesh_axis(m, sr_intern_cstr(items[i]->str.s)) : -1;
    if (ax < 0 || m->sizes[ax] != 1) sr_seq_push(NULL, r, sr_ref(items[i]));
  }
  if (!r->seq.n && n) {
    sr_unref(r);
    return NULL;
  }
  return r;
}

static SrVal *coll_over(SrInterp *I, SrArgs *a, const char *name, SrApiLeafFn f) {
  SrVal *p[3];
  if (sr_args_parse(I, a, name, "x, axis_name, *, axis_index_groups=", p) < 0) return NULL;
  if (p[2] && p[2]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "%s: axis_index_groups is not supported", name);
  Coll c = {0};
  SrVal *r = NULL;
  SrVal *names = f == psum_leaf ? skip_unit_axes(I, p[1]) : sr_ref(p[1]);
  if (!names) return sr_ref(p[0]);
  if (axis_arg_for(I, names, &c.aa, sr_array_of(p[0]) ? "psum" : NULL) == 0) r = (c.aa.axes || c.aa.nvmap) ? sr_api_map_leaves(I, p[0], NULL, f, &c) : sr_ref(p[0]);
  sr_unref(names);
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
  if (axis_arg_for(I, p[1], &c.aa, sr_array_of(p[0]) ? "psum" : NULL) == 0) {
    SrVal *s = (c.aa.axes || c.aa.nvmap) ? sr_api_map_leaves(I, p[0], NULL, psum_leaf, &c) : sr_ref(p[0]);
    r = s ? sr_api_map_leaves(I, s, NULL, div_leaf, &c) : NULL;
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
                   sr_ref(c->aa.names), "axis_index_groups", groups_param(c), "axis_size", sr_int(NULL, c->aa.size),
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
  if (axis_arg_for(I, p[1], &c.aa, "all_gather") == 0 && groups_arg(I, p[2], &c) == 0) {
    if (c.groups && strcmp(c.to, "varying")) {
      sr_unref(c.groups);
      sr_unref(c.aa.names);
      return sr_raise(I, "NotImplementedError", "all_gather with axis_index_groups and to='%s'", c.to);
    }
    r = (c.aa.axes || c.aa.nvmap) ? sr_api_map_leaves(I, p[0], NULL, all_gather_leaf, &c) : sr_ref(p[0]);
  }
  sr_unref(c.groups);
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
                     sr_int(NULL, dim), "axis_index_groups", groups_param(c), "axis_size", sr_int(NULL, c->aa.size),
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
  SrVal *r = NULL, *names = skip_unit_axes(I, p[1]);
  if (!names) return sr_ref(p[0]);
  if (axis_arg_for(I, names, &c.aa, "reduce_scatter") == 0 && groups_arg(I, p[3], &c) == 0)
    r = (c.aa.axes || c.aa.nvmap) ? sr_api_map_leaves(I, p[0], NULL, psum_scatter_leaf, &c) : sr_ref(p[0]);
  sr_unref(names);
  sr_unref(c.groups);
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
  if (p[2]->kind != SR_V_LIST && p[2]->kind != SR_V_TUPLE) {
    SrVal *ty = sr_type_of(I, p[2]);
    SrBuf b = SR_BUF_INIT;
    if (ty) sr_to_str(I, &b, ty);
    sr_unref(ty);
    sr_raise(I, "TypeError", "`perm` passed to `jax.lax.ppermute` must be a list or a tuple. Got perm of type %s",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  Coll c = {0};
  c.perm = sr_seq(NULL, SR_V_TUPLE, p[2]->seq.n);
  for (int i = 0; i < p[2]->seq.n; i++) {
    /* each pair any iterable of two ints (a row of a numpy array too):
       tuple((int(i), int(j)) for i, j in perm) */
    SrVal *pr = sr_is_seq(p[2]->seq.items[i]) ? sr_ref(p[2]->seq.items[i]) : sr_iterate(I, p[2]->seq.items[i]);
    if (!pr) sr_exc_clear(I);
    int64_t s, d;
    int bad = !pr || !sr_is_seq(pr) || pr->seq.n != 2 || sr_as_int(I, pr->seq.items[0], "perm", &s) < 0 ||
              sr_as_int(I, pr->seq.items[1], "perm", &d) < 0;
    sr_unref(pr);
    if (bad) {
      sr_unref(c.perm);
      if (!I->exc) sr_raise(I, "TypeError", "perm must be a sequence of (source, destination) pairs");
      return NULL;
    }
    int64_t sd[2] = {s, d};
    sr_seq_push(NULL, c.perm, sr_int_tuple(sd, 2));
  }
  SrVal *r = NULL;
  if (axis_arg_for(I, p[1], &c.aa, "ppermute") == 0) r = sr_api_map_leaves(I, p[0], NULL, ppermute_leaf, &c);
  sr_unref(c.aa.names);
  sr_unref(c.perm);
  return r;
}

/* parallel.pbroadcast: pbroadcast_p bound on each leaf, axis_name as
   given. */
static SrVal *pbroadcast_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf);
  SrVal *r = x ? sr_api_first(sr_bindv(I, SR_P_pbroadcast, 1, &x, "axis_name", sr_ref(c->axis_name), "source",
                                       sr_int(NULL, c->i1), NULL))
               : NULL;
  sr_unref(x);
  return r;
}

static SrVal *lax_pbroadcast(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "pbroadcast", "x, axis_name, source", p) < 0) return NULL;
  Coll c = {0};
  if (sr_as_int(I, p[2], "source", &c.i1) < 0) return NULL;
  c.axis_name = p[1];
  return sr_api_map_leaves(I, p[0], NULL, pbroadcast_leaf, &c);
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
                      sr_int(NULL, concat), "axis_name", sr_ref(c->axis_name), "axis_index_groups", groups_param(c),
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
  if (axis_arg_for(I, p[1], &c.aa, "all_to_all") == 0 && groups_arg(I, p[4], &c) == 0)
    r = sr_api_map_leaves(I, p[0], NULL, all_to_all_leaf, &c);
  sr_unref(c.groups);
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
  if (axis_arg_for(I, p[0], &aa, "axis_index") < 0) {
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
    const char *s = sr_intern(nm->str.s, nm->str.n);
    int ax = sr_mesh_axis(m, s);
    int64_t vs = vmap_axis_size(I, s);
    inner *= vs >= 0 ? vs : ax >= 0 ? m->sizes[ax] : 1;
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
    r = sr_api_bind_axes_cast(I, SR_P_preduced, x, c->aa.axes);
  } else if (!strcmp(from, "varying") && !strcmp(c->to, "unreduced")) {
    r = sr_api_bind_axes_cast(I, SR_P_vary_unreduced_cast, x, c->aa.axes);
  } else if (!strcmp(from, "reduced") && !strcmp(c->to, "varying")) {
    r = sr_lax_reduced_vary_cast(I, x, c->aa.axes);
  } else {
    sr_raise(I, "ValueError", "Unsupported pcast from=%s, to='%s'", from, c->to);
  }
  sr_unref(x);
  return r;
}

/* pcast outside any trace: the cast primitives have no impl but their
   error (parallel._raise_valueerror), so a concrete value raises. */
static SrVal *pcast_eager_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  const char *from = state_from(I, x, &c->aa, "jax.lax.pcast"), *name = NULL;
  sr_unref(x);
  if (!from) return NULL;
  if (!strcmp(from, "invarying") && !strcmp(c->to, "varying")) name = "pvary";
  else if (!strcmp(from, "invarying") && !strcmp(c->to, "reduced")) name = "preduced";
  else if (!strcmp(from, "varying") && !strcmp(c->to, "unreduced")) name = "vary_unreduced_cast";
  else if (!strcmp(from, "reduced") && !strcmp(c->to, "varying")) name = "reduced_vary_cast";
  if (!name) return sr_raise(I, "ValueError", "Unsupported pcast from=%s, to='%s'", from, c->to);
  return sr_raise(I, "ValueError", "%s should be called under jax.shard_map.", name);
}

static SrVal *lax_pcast_eager(SrInterp *I, SrVal *x, SrVal *names, Coll *c) {
  const SrMesh *m = sr_api_mesh(I);
  int n = 1;
  SrVal **items = &names;
  if (names->kind == SR_V_TUPLE || names->kind == SR_V_LIST) {
    n = names->seq.n;
    items = names->seq.items;
  }
  c->aa.names = sr_seq(NULL, SR_V_TUPLE, 0);
  for (int i = 0; i < n; i++) {
    const char *s = sr_as_str(I, items[i], "axis_name");
    if (!s) return NULL;
    s = sr_intern_cstr(s);
    sr_seq_push(NULL, c->aa.names, sr_str_cstr(NULL, s));
    int ax = sr_mesh_axis(m, s);
    if (ax >= 0) c->aa.axes |= 1u << ax;
  }
  if (!n) return sr_ref(x);
  SrVal *r = sr_api_map_leaves(I, x, NULL, pcast_eager_leaf, c);
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
  /* core.pvary leaves out the axes of size 1 with
     jax_remove_size_one_mesh_axis_from_type */
  SrVal *names = !strcmp(c.to, "varying") && p[1]->kind != SR_V_SET && p[1]->kind != SR_V_FROZENSET
                     ? skip_unit_axes(I, p[1]) : sr_ref(p[1]);
  if (!names) return sr_ref(p[0]);
  if (names->kind != SR_V_SET && names->kind != SR_V_FROZENSET && !I->trace) r = lax_pcast_eager(I, p[0], names, &c);
  else if (axis_arg_for(I, names, &c.aa, "pvary") == 0) r = (c.aa.axes || c.aa.nvmap) ? sr_api_map_leaves(I, p[0], NULL, pcast_leaf, &c) : sr_ref(p[0]);
  sr_unref(names);
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
  if (axis_arg_for(I, p[1], &c.aa, "pvary") == 0) r = sr_api_map_leaves(I, p[0], NULL, pvary_leaf, &c);
  sr_unref(c.aa.names);
  return r;
}

/* core.reduced_vary_cast(x, axis_name): a reduced value to a varying one
   (nothing with check_vma=False over manual axes). */
static SrVal *rvc_leaf(SrInterp *I, SrVal *leaf, SrVal *sh, void *ctx) {
  (void)sh;
  Coll *c = ctx;
  SrVal *x = arr(I, leaf);
  SrVal *r = x ? sr_lax_reduced_vary_cast(I, x, c->aa.axes) : NULL;
  sr_unref(x);
  return r;
}

static SrVal *core_reduced_vary_cast(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "reduced_vary_cast", "x, axis_name", p) < 0) return NULL;
  Coll c = {0};
  SrVal *r = NULL;
  if (axis_arg_for(I, p[1], &c.aa, "reduced_vary_cast") == 0) {
    SrAxes manual = sr_mesh_axes_of_type(sr_api_mesh(I), SR_AXIS_MANUAL);
    if (!c.aa.axes || (!I->jax->check_vma && (c.aa.axes & ~manual) == 0)) r = sr_ref(p[0]);
    else r = sr_api_map_leaves(I, p[0], NULL, rvc_leaf, &c);
  }
  sr_unref(c.aa.names);
  return r;
}

/* ---- registration ---- */

void sr_lax_parallel_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax._src.core.reduced_vary_cast", core_reduced_vary_cast,
     "reduced_vary_cast(x, axis_name): a reduced value cast to a varying one (JAX's private core function)"},
    {"jax.lax.psum", lax_psum, "psum(x, axis_name): psum_invariant (with the pvary it needs) over manual axes"},
    {"jax.lax.pmean", lax_pmean, "pmean(x, axis_name): psum, then a division by the axis size"},
    {"jax.lax.pmax", lax_pmax, "pmax(x, axis_name)"},
    {"jax.lax.pmin", lax_pmin, "pmin(x, axis_name)"},
    {"jax.lax.all_gather", lax_all_gather, "all_gather(x, axis_name, *, axis=0, tiled=False, to='varying')"},
    {"jax.lax.psum_scatter", lax_psum_scatter, "psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False)"},
    {"jax.lax.ppermute", lax_ppermute, "ppermute(x, axis_name, perm)"},
    {"jax.lax.pbroadcast", lax_pbroadcast, "pbroadcast(x, axis_name, source)"},
    {"jax.lax.all_to_all", lax_all_to_all, "all_to_all(x, axis_name, split_axis, concat_axis, *, tiled=False)"},
    {"jax.lax.axis_index", lax_axis_index, "axis_index(axis_name): this device's index along a manual axis"},
    {"jax.lax.axis_size", lax_axis_size, "axis_size(axis_name): the size of a manual axis"},
    {"jax.lax.pcast", lax_pcast, "pcast(x, axis_name, *, to): 'varying', 'unreduced' or 'reduced'"},
    {"jax.lax.pvary", lax_pvary, "pvary(x, axis_name)"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
