/* sharding.c: the sharding transforms of jax.sharding and jax.lax --
 * jax.reshard (jax.sharding.reshard), jax.lax.with_sharding_constraint,
 * jax.sharding.auto_axes and explicit_axes -- and the pytree map over
 * array leaves the collectives share (sr_api_map_leaves).  Each says which
 * JAX function it follows (pjit.py, sharding_impls.py). */
#include "jax/lax.h"
#include "jax/jax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jaxstate.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "jax/vjp.h"
#include "util/intern.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }

/* ======================================================================
 * sharding: reshard, with_sharding_constraint, auto_axes, explicit_axes
 * ====================================================================== */

/* Applies f to each array leaf of a tree (lists, tuples, dicts; None is an
   empty node), rebuilding the tree; `shardings` is one value for every
   leaf, or a tree with the same structure. */
SrVal *sr_api_map_leaves(SrInterp *I, SrVal *v, SrVal *sh, SrApiLeafFn f, void *ctx) {
  int sh_tree = sh && (sh->kind == SR_V_TUPLE || sh->kind == SR_V_LIST || sh->kind == SR_V_DICT);
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    if (sh_tree && (!sr_is_seq(sh) || sh->seq.n != v->seq.n))
      return sr_raise(I, "ValueError", "the shardings do not match the structure of the arguments");
    SrVal *r = sr_seq(NULL, v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *x = sr_api_map_leaves(I, v->seq.items[i], sh_tree ? sh->seq.items[i] : sh, f, ctx);
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
      SrVal *x = sr_api_map_leaves(I, v->dict.vals[i], s, f, ctx);
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
  return sr_api_map_leaves(I, p[0], p[1], reshard_leaf, NULL);
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
  return sr_api_map_leaves(I, p[0], p[1], wsc_leaf, NULL);
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

int sr_api_push_mesh(SrInterp *I, const SrMesh *m) {
  if (I->jax->nabstract == 32) return sr_raise(I, "RuntimeError", "abstract meshes nested too deeply"), -1;
  I->jax->abstract[I->jax->nabstract++] = m;
  return 0;
}

void sr_api_pop_mesh(SrInterp *I) {
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
    if (sr_api_push_mesh(I, nm) < 0) return NULL;
    SrVal *out = NULL, *res = NULL;
    SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n);
    for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
    /* reshard(args, in_sharding): a lone sharding applies to every arg */
    SrVal *rs = sr_api_map_leaves(I, args, sh, reshard_leaf, NULL);
    if (rs) {
      SrArgs ra = {rs->seq.n, rs->seq.items, nkw, kw, kwv, NULL};
      out = sr_call(I, f->fn, &ra);
    }
    sr_api_pop_mesh(I);
    if (out) res = sr_api_map_leaves(I, out, NULL, auto_spec_leaf, (void *)sr_api_mesh(I));
    sr_unref(rs);
    sr_unref(args);
    sr_unref(out);
    return res;
  }
  if (rc == 1) return sr_call(I, f->fn, &ca);
  SrAxes prev_auto = sr_mesh_axes_of_type(prev, SR_AXIS_AUTO);
  if (prev_auto == axes) return sr_call(I, f->fn, &ca);
  if (sr_api_push_mesh(I, nm) < 0) return NULL;
  SrVal *args = sr_seq(NULL, SR_V_TUPLE, a->n);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  SrVal *rs = sr_api_map_leaves(I, args, NULL, auto_spec_leaf, (void *)nm), *out = NULL;
  if (rs) {
    SrArgs ra = {rs->seq.n, rs->seq.items, nkw, kw, kwv, NULL};
    out = sr_call(I, f->fn, &ra);
  }
  sr_api_pop_mesh(I);
  SrVal *res = out ? sr_api_map_leaves(I, out, sh, reshard_leaf, NULL) : NULL;
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


/* ---- registration ---- */

void sr_sharding_api_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.reshard jax.sharding.reshard", jax_reshard,
     "reshard(x, out_sharding): a reshard equation to a P or NamedSharding"},
    {"jax.lax.with_sharding_constraint", lax_with_sharding_constraint,
     "with_sharding_constraint(x, shardings): an assert over Explicit axes, a sharding_constraint over Auto ones"},
    {"jax.sharding.auto_axes", jax_auto_axes,
     "auto_axes(f, *, axes=None, out_sharding=None): f run with the axes Auto, resharded in and out"},
    {"jax.sharding.explicit_axes", jax_explicit_axes,
     "explicit_axes(f, *, axes=None, in_sharding=None): f run with the axes Explicit"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
