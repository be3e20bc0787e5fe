/* sharding.c: jax.sharding.
 *
 * The sharding transforms of jax.sharding and jax.lax -- jax.reshard
 * (jax.sharding.reshard), jax.lax.with_sharding_constraint,
 * jax.sharding.auto_axes and explicit_axes -- with the pytree map over
 * array leaves that the collectives share (sr_api_map_leaves); then the
 * values: make_mesh, Mesh, AbstractMesh, AxisType, PartitionSpec (jax.P)
 * and NamedSharding.  Each says which JAX function it follows (pjit.py,
 * sharding_impls.py, mesh.py, partition_spec.py).  set_mesh and the
 * abstract mesh in context are in builtins_jax.c, with JAX's state. */
#include "jax/lax.h"
#include "jax/jax.h"
#include "jax/np_host.h"
#include "jax/layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "py/objects.h"
#include "py/introspect.h"
#include "py/range.h"
#include "text/print_val.h"
#include "jax/layout.h"
#include "jax/vjp.h"
#include "util/intern.h"

void sr_api_entries_drop_unit_axes(const SrMesh *m, SrSpecEntry *e, int n, const char *kept[][SR_MAX_DIM_AXES]) {
  for (int i = 0; i < n; i++) {
    int k = 0;
    for (int q = 0; q < e[i].n && k < SR_MAX_DIM_AXES; q++) {
      int ax = e[i].names[q] == SR_SPEC_UNCONSTRAINED ? -1 : sr_mesh_axis(m, e[i].names[q]);
      if (ax < 0 || m->sizes[ax] != 1) kept[i][k++] = e[i].names[q];
    }
    e[i] = (SrSpecEntry){k, kept[i]};
  }
}

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
  /* jax_remove_size_one_mesh_axis_from_type: the user's spec without the
     context mesh's axes of size 1 */
  const char *kept[SR_MAX_RANK][SR_MAX_DIM_AXES];
  if (sr_type_remove_size_one()) {
    if (u.e != e) {
      for (int i = 0; i < u.n && i < SR_MAX_RANK; i++) e[i] = u.e[i];
      u.e = e;
    }
    sr_api_entries_drop_unit_axes(sr_api_mesh(I), e, u.n < SR_MAX_RANK ? u.n : SR_MAX_RANK, kept);
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

/* pjit.with_sharding_constraint's checks of an eager input against a
   sharding over an AbstractMesh; the sharding then names the input's mesh
   (a new reference in *out), or NULL with an exception */
static void mesh_shape_tuple(SrBuf *b, const SrMesh *m) {
  sr_buf_putc(b, '(');
  for (int i = 0; i < m->n; i++) sr_buf_printf(b, "('%s', %lld)%s", m->names[i], (long long)m->sizes[i], m->n == 1 || i + 1 < m->n ? ", " : "");
  if (m->n) b->len -= 2;
  if (m->n == 1) sr_buf_putc(b, ',');
  sr_buf_putc(b, ')');
}

static int wsc_abstract_target(SrInterp *I, SrVal *leaf, SrVal *s, SrVal **out) {
  *out = NULL;
  SrArrayObj *o = sr_array_of(leaf);
  const SrType *t = sr_value_type(I, leaf);
  if (I->exc) sr_exc_clear(I);
  SrBuf sh = SR_BUF_INIT;
  if (t) {
    SrTypeCtx tc;
    SrDiags d = SR_DIAGS_INIT;
    sr_type_ctx(I, &tc, &d);
    sr_aval_str_short(&sh, &tc, sr_type_strip_sharding(t), 0, 0);
    sr_diags_clear(&d);
  }
  int rc = -1;
  if (!o || o->kind != SR_AV_CONCRETE) {
    sr_raise(I, "ValueError",
             "Target sharding contains a `jax.sharding.AbstractMesh` which requires the input passed should be a "
             "`jax.Array`. Got <class '%s'> with shape %s",
             leaf->kind == SR_V_OBJ || sr_array_of(leaf) ? "numpy.ndarray" : sr_val_kind_name(leaf), sr_buf_str(&sh));
  } else {
    SrVal *xs = sr_concrete_array_sharding(o->data);
    if (!xs || xs->kind != SR_V_SHARDING || !xs->sh.mesh->n) {
      sr_raise(I, "TypeError",
               "The sharding on the input must be a `NamedSharding` since the target sharding has an `AbstractMesh` "
               "in it. Got sharding type <class 'jax._src.sharding_impls.SingleDeviceSharding'> for shape %s",
               sr_buf_str(&sh));
    } else {
      const SrMesh *xm = xs->sh.mesh, *tm = s->sh.mesh;
      int same = xm->n == tm->n;
      for (int i = 0; i < xm->n && same; i++) same = xm->names[i] == tm->names[i] && xm->sizes[i] == tm->sizes[i];
      if (!same) {
        SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
        mesh_shape_tuple(&a, xm);
        mesh_shape_tuple(&b, tm);
        sr_raise(I, "ValueError",
                 "Mesh shape of the input %s does not match the mesh shape of the target sharding %s for shape %s", a.p,
                 b.p, sr_buf_str(&sh));
        sr_buf_free(&a);
        sr_buf_free(&b);
      } else {
        *out = sr_sharding_val(NULL, xm, s->sh.spec, NULL);
        rc = 0;
      }
    }
    sr_unref(xs);
  }
  sr_buf_free(&sh);
  return rc;
}

static SrVal *wsc_leaf(SrInterp *I, SrVal *leaf, SrVal *s, void *ctx) {
  (void)ctx;
  const SrMesh *m = sr_api_mesh(I);
  /* with no mesh set, a P names the resource env's (`with mesh:`) */
  const SrMesh *rm = m->n ? NULL : sr_jax_resource_mesh(I->jax);
  if (!I->trace && s && s->kind == SR_V_SHARDING && s->sh.mesh->abstract && s->sh.mesh->n && !m->n) {
    SrVal *cs;
    if (wsc_abstract_target(I, leaf, s, &cs) < 0) return NULL;
    SrVal *r = wsc_leaf(I, leaf, cs, ctx);
    sr_unref(cs);
    return r;
  }
  SrVal *x = arr(I, leaf);
  if (!x) return NULL;
  SrVal *sh = NULL, *r = NULL;
  if (s && s->kind == SR_V_SPEC && (rm || m->n) && sr_mesh_resource_check(I, rm ? rm : m, s->spec) < 0) {
    sr_unref(x);
    return NULL;
  }
  if (s && s->kind == SR_V_SPEC && rm) {
    sh = sr_sharding_val(NULL, rm, s->spec, sr_intern_cstr("device"));
  } else if (s && s->kind == SR_V_SPEC) {
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
    /* eagerly _sharding_constraint_impl runs jit(_identity_fn,
       out_shardings=s)(x): a committed x on other devices (or the same in
       another order) is pjit's device mismatch */
    SrArrayObj *xo = sr_array_of(x);
    if (!I->trace && xo && xo->kind == SR_AV_CONCRETE && xo->data->committed && !s->sh.mesh->abstract && s->sh.mesh->n) {
      const SrArray *xa = xo->data;
      int n = sr_mesh_ndev(s->sh.mesh), same = n == xa->ndev;
      for (int p = 0; p < n && same; p++) same = sr_mesh_device(s->sh.mesh, p) == (xa->mesh ? sr_mesh_device(xa->mesh, p) : 0);
      if (!same) {
        SrBuf b = SR_BUF_INIT;
        SrTypeCtx tc;
        SrDiags d = SR_DIAGS_INIT;
        sr_type_ctx(I, &tc, &d);
        sr_buf_puts(&b, "Received incompatible devices for jitted computation. Got argument x of _identity_fn with shape ");
        sr_aval_str_short(&b, &tc, sr_type_strip_sharding(xa->type), 0, 0);
        sr_diags_clear(&d);
        sr_buf_puts(&b, " and with device ids [");
        for (int p = 0; p < xa->ndev; p++) sr_buf_printf(&b, "%s%d", p ? ", " : "", xa->mesh ? sr_mesh_device(xa->mesh, p) : 0);
        sr_buf_puts(&b, "] on platform CPU and explicit output sharding with device ids [");
        for (int p = 0; p < n; p++) sr_buf_printf(&b, "%s%d", p ? ", " : "", sr_mesh_device(s->sh.mesh, p));
        sr_buf_puts(&b, "] on platform CPU");
        sr_raise(I, "ValueError", "%s", b.p);
        sr_buf_free(&b);
        sr_unref(x);
        return NULL;
      }
    }
    sh = sr_ref(s);
  } else if (s && s->kind == SR_V_OBJ && strcmp(sr_val_kind_name(s), "SingleDeviceSharding") == 0 && !I->trace) {
    /* eagerly, _sharding_constraint_impl: jit(identity, out_shardings=s)(x),
       a committed copy on the device */
    SrVal *pa[2] = {x, s};
    SrArgs pargs = {.n = 2, .v = pa, .nkw = 0};
    const char *kw = sr_intern_cstr("may_alias");
    SrVal *no = sr_bool(0);
    pargs.nkw = 1;
    pargs.kw = &kw;
    pargs.kwv = &no;
    r = sr_call(I, sr_lookup_qualname("jax.device_put"), &pargs);
    sr_unref(x);
    return r;
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
  /* pjit_check_aval_sharding (uneven shardings allowed) */
  if (sr_jit_check_aval_sharding(I, sh, vtype(I, x), "with_sharding_constraint arguments", NULL, 1) < 0) {
    sr_unref(sh);
    sr_unref(x);
    return NULL;
  }
  /* mesh.are_all_axes_explicit: never for the empty mesh (an empty
     context's constraint applies) */
  int all_explicit = m->n > 0;
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
      /* a NamedSharding given goes in as it is (_create_sharding_for_array);
         a P names the context's mesh.  With no mesh in context the
         context_mesh is the empty concrete Mesh() (thread_resources' one) */
      SrVal *psh = (s->kind == SR_V_SHARDING || rm) && !m->n ? sr_ref(rm ? sh : s) : sr_sharding_val(NULL, sm, sp, NULL);
      r = sr_bindv(I, SR_P_sharding_constraint, 1, &x, "sharding", psh, "layout", sr_none(), "context_mesh",
                   sr_mesh_val(NULL, m->n ? m : rm ? rm : sr_mesh_empty()), "unconstrained_dims", ud, NULL);
    }
  }
  sr_unref(sh);
  sr_unref(x);
  return r;
}

/* `with mesh:` (Mesh.__enter__, deprecated): the mesh joins the resource
   env (thread_resources) that pjit and with_sharding_constraint read; it
   sets neither jax.set_mesh's concrete mesh nor the abstract mesh. */
static SrVal *mesh_enter(SrInterp *I, SrVal *self) {
  if (self->mesh->abstract) return sr_raise(I, "ValueError", "AbstractMesh does not implement __enter__");
  SrJaxState *js = I->jax;
  if (js->nresource == 32) return sr_raise(I, "RuntimeError", "mesh contexts nested too deeply");
  sr_warn(I, "DeprecationWarning",
          "`with mesh:` context manager has been deprecated. Please use `with jax.set_mesh(mesh):` instead.");
  js->resource[js->nresource++] = self->mesh;
  return sr_ref(self);
}

static void mesh_exit(SrInterp *I, SrVal *self) {
  (void)self;
  if (I->jax->nresource) I->jax->nresource--;
}

static const SrContextOps mesh_ctx = {NULL, mesh_enter, mesh_exit, SR_V_MESH};

/* Mesh is a contextlib.ContextDecorator: mesh(f) is f run under `with
   mesh:` (whose warning points into contextlib, so Python shows none) */
typedef struct MeshDecorated {
  SrVal *mesh, *fn;
} MeshDecorated;

static void mesh_decorated_free(void *d) {
  MeshDecorated *m = d;
  sr_unref(m->mesh);
  sr_unref(m->fn);
  free(m);
}

static SrVal *mesh_decorated_call(SrInterp *I, SrArgs *a) {
  MeshDecorated *m = sr_current_builtin(I)->data;
  SrJaxState *js = I->jax;
  if (js->nresource == 32) return sr_raise(I, "RuntimeError", "mesh contexts nested too deeply");
  js->resource[js->nresource++] = m->mesh->mesh;
  SrVal *r = sr_call(I, m->fn, a);
  if (js->nresource) js->nresource--;
  return r;
}

static SrVal *mesh_call(SrInterp *I, SrVal *self, SrArgs *a) {
  if (self->mesh->abstract || a->n != 1 || a->nkw || !sr_is_callable(I, a->v[0]))
    return sr_raise(I, "TypeError", "'Mesh' object is not callable");
  MeshDecorated *m = sr_xcalloc(1, sizeof *m);
  m->mesh = sr_ref(self);
  m->fn = sr_ref(a->v[0]);
  const char *nm = sr_builtin_name(a->v[0]);
  return sr_builtin_with(nm ? nm : "inner", mesh_decorated_call, m, mesh_decorated_free);
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
  if (a->n != 1 || a->nkw || !sr_is_callable(I, a->v[0]))
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
 * meshes, axis types, PartitionSpec, NamedSharding (mesh.py,
 * partition_spec.py, sharding_impls.py)
 * ====================================================================== */

/* ---- helpers ---- */

static SrVal *names_tuple(const char *const *names, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_str_cstr(NULL, names[i]));
  return t;
}

static SrVal *names_set(const char *const *names, int n) {
  SrVal *t = sr_seq(NULL, SR_V_FROZENSET, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_str_cstr(NULL, names[i]));
  return t;
}

/* Axis names from a str or a tuple/list of strs. */
static int axis_names(SrInterp *I, SrVal *v, const char **out, int max, const char *what) {
  if (v->kind == SR_V_STR) {
    out[0] = sr_intern(v->str.s, v->str.n);
    return 1;
  }
  if (!sr_is_seq(v)) {
    sr_raise(I, "TypeError", "%s must be a string or a tuple of strings, got %s", what, sr_val_kind_name(v));
    return -1;
  }
  if (v->seq.n > max) {
    sr_raise(I, "ValueError", "%s: at most %d axes", what, max);
    return -1;
  }
  for (int i = 0; i < v->seq.n; i++)
    if (v->seq.items[i]->kind == SR_V_NONE) {
      SrVal *t = sr_seq(NULL, SR_V_TUPLE, v->seq.n);
      for (int k = 0; k < v->seq.n; k++) sr_seq_push(NULL, t, sr_ref(v->seq.items[k]));
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, t);
      sr_raise(I, "ValueError", "Mesh axis names cannot be None. Got: %s", b.p);
      sr_buf_free(&b);
      sr_unref(t);
      return -1;
    }
  for (int i = 0; i < v->seq.n; i++) {
    const char *s = sr_as_str(I, v->seq.items[i], what);
    if (!s) return -1;
    out[i] = s;
  }
  return v->seq.n;
}

static int axis_type_of(SrInterp *I, SrVal *v, uint8_t *out) {
  if (v->kind == SR_V_AXISTYPE) {
    *out = (uint8_t)v->axistype;
    return 0;
  }
  sr_raise(I, "TypeError", "axis_types must hold jax.sharding.AxisType values, got %s", sr_val_kind_name(v));
  return -1;
}

/* ---- meshes ---- */

/* sharding_impls.make_mesh's ValueError, with " Got {axis_sizes}" */
static int sizes_error(SrInterp *I, SrVal *sizes, const char *fname) {
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, sizes);
  sr_raise(I, "ValueError", "`axis_sizes` passed to `%s` should be a sequence of ints.%s%s", fname,
           strcmp(fname, "make_mesh") == 0 ? " Got " : "", strcmp(fname, "make_mesh") == 0 ? b.p : "");
  sr_buf_free(&b);
  return -1;
}

static int fill_mesh(SrInterp *I, SrMesh *m, SrVal *sizes, SrVal *names, SrVal *types, int default_type,
                     const char *fname) {
  memset(m, 0, sizeof *m);
  int64_t sz[SR_MAX_AXES];
  int ns;
  if (sizes->kind == SR_V_INT) {
    sz[0] = sizes->i;
    ns = 1;
  } else if (sr_is_seq(sizes)) {
    ns = sizes->seq.n;
    if (ns > SR_MAX_AXES) return sr_raise(I, "ValueError", "%s: at most %d mesh axes", fname, SR_MAX_AXES), -1;
    for (int i = 0; i < ns; i++) {
      /* _canonicalize_axis_sizes: operator.index of each (numpy ints too) */
      SrVal *e = sizes->seq.items[i];
      if (e->kind == SR_V_INT) {
        sz[i] = e->i;
        continue;
      }
      if (e->kind == SR_V_FLOAT || sr_is_seq(e) || sr_as_int(I, e, "axis_sizes", &sz[i]) < 0) {
        sr_exc_clear(I);
        return sizes_error(I, sizes, fname);
      }
    }
  } else {
    return sizes_error(I, sizes, fname);
  }
  const char *nm[SR_MAX_AXES];
  int nn = axis_names(I, names, nm, SR_MAX_AXES, "axis_names");
  if (nn < 0) return -1;
  if (nn != ns)
    return sr_raise(I, "ValueError",
                    "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second "
                    "argument (`axis_names`), but got devices.ndim == %d and len(axis_names) == %d.", ns, nn),
           -1;
  for (int i = 0; i < ns; i++) {
    if (sz[i] <= 0) return sr_raise(I, "ValueError", "mesh axis sizes must be positive"), -1;
    for (int k = 0; k < i; k++)
      if (nm[k] == nm[i]) return sr_raise(I, "ValueError", "mesh axis names must be unique, got '%s' twice", nm[i]), -1;
    m->names[i] = nm[i];
    m->sizes[i] = sz[i];
    m->types[i] = (uint8_t)default_type;
  }
  m->n = ns;
  if (types && types->kind != SR_V_NONE) {
    /* mesh._normalize_axis_types: one type is a tuple of it; every item
       an AxisType, then as many as the names */
    SrVal *tt = types->kind == SR_V_TUPLE ? sr_ref(types) : sr_tuple(NULL, 1, (SrVal *[]){sr_ref(types)});
    const char *who = strcmp(fname, "AbstractMesh") == 0 ? "AbstractMesh" : "Mesh";
    int bad = 0;
    for (int i = 0; i < tt->seq.n; i++) bad |= tt->seq.items[i]->kind != SR_V_AXISTYPE;
    if (bad) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, tt);
      sr_buf_puts(&b, " of type (");
      for (int i = 0; i < tt->seq.n; i++) {
        SrVal *ty = tt->seq.items[i]->kind == SR_V_AXISTYPE ? NULL : sr_call1(I, sr_lookup_qualname("builtins.type"), tt->seq.items[i]);
        if (tt->seq.items[i]->kind == SR_V_AXISTYPE) sr_buf_puts(&b, "<enum 'AxisType'>"); /* an Enum's class */
        else if (ty) sr_to_repr(I, &b, ty);
        else sr_exc_clear(I);
        sr_unref(ty);
        sr_buf_puts(&b, tt->seq.n == 1 ? "," : i + 1 < tt->seq.n ? ", " : "");
      }
      sr_buf_putc(&b, ')');
      sr_raise(I, "TypeError", "axis_types passed to %s must be of type `jax.sharding.AxisType`. Got %s", who, b.p);
      sr_buf_free(&b);
      sr_unref(tt);
      return -1;
    }
    if (tt->seq.n != ns) {
      SrVal *nt = names_tuple(nm, nn);
      SrBuf b = SR_BUF_INIT;
      sr_buf_puts(&b, "Number of axis names should match the number of axis_types. Got axis_names=");
      sr_val_repr(&b, nt);
      sr_buf_puts(&b, " and axis_types=");
      sr_val_repr(&b, tt);
      sr_unref(nt);
      sr_raise(I, "ValueError", "%s", b.p);
      sr_buf_free(&b);
      sr_unref(tt);
      return -1;
    }
    for (int i = 0; i < ns; i++) m->types[i] = (uint8_t)tt->seq.items[i]->axistype;
    sr_unref(tt);
  }
  return 0;
}

#define SR_MESH_MAX_IDS 4096

/* The device ids of Mesh's devices argument, flattened in order into
   ids (at most max): (nested) lists of devices or ids, or a numpy array
   of them (which holds ids); the count, or -1 for anything else. */
static int collect_device_ids(SrInterp *I, SrVal *v, int *ids, int n, int max, int depth) {
  if (n < 0 || depth > SR_MAX_RANK + 1) return -1;
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    for (int i = 0; i < v->seq.n && n >= 0; i++) n = collect_device_ids(I, v->seq.items[i], ids, n, max, depth + 1);
    return n;
  }
  int64_t id = -1;
  if (v->kind == SR_V_INT) {
    id = v->i;
  } else if (v->kind == SR_V_OBJ && strcmp(sr_val_kind_name(v), "CpuDevice") == 0) {
    SrVal *iv = sr_getattr(I, v, "id");
    if (iv && iv->kind == SR_V_INT) id = iv->i;
    if (!iv) sr_exc_clear(I);
    sr_unref(iv);
  } else if (sr_np_is_devices(v) || (v->kind == SR_V_OBJ && strcmp(sr_val_kind_name(v), "ndarray") == 0)) {
    /* numpy's own array: its tolist stages nothing */
    SrVal *tl = sr_getattr(I, v, "tolist");
    SrArgs na = {0, NULL, 0, NULL, NULL, NULL};
    SrVal *l = tl ? sr_call(I, tl, &na) : NULL;
    sr_unref(tl);
    if (!l) {
      sr_exc_clear(I);
      return -1;
    }
    n = l->kind == SR_V_LIST ? collect_device_ids(I, l, ids, n, max, depth + 1) : -1;
    sr_unref(l);
    return n;
  }
  if (id < 0 || id >= I->jax->num_devices || n >= max) return -1;
  ids[n] = (int)id;
  return n + 1;
}

static SrVal *bi_make_mesh(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "make_mesh", "axis_shapes, axis_names, axis_types=, *, devices=", p) < 0) return NULL;
  SrMesh m;
  if (fill_mesh(I, &m, p[0], p[1], p[2], SR_AXIS_EXPLICIT, "make_mesh") < 0) return NULL;
  int64_t size = sr_mesh_size_of(m.sizes, m.n); /* -1: more than any count */
  int ndev = I->jax->num_devices;
  if (size < 0 || size > ndev) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < m.n; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)m.sizes[i]);
    sr_buf_puts(&b, m.n == 1 ? ",)" : ")");
    sr_raise(I, "ValueError", "Number of devices %d must be >= the product of mesh_shape %s", ndev, b.p);
    sr_buf_free(&b);
    return NULL;
  }
  /* devices=: the mesh's devices in that order (create_device_mesh on
     CPU keeps the order) */
  int ids[SR_MESH_MAX_IDS];
  if (p[3] && p[3]->kind != SR_V_NONE) {
    int got = collect_device_ids(I, p[3], ids, 0, SR_MESH_MAX_IDS, 0), identity = got >= size;
    if (got < 0) return sr_raise(I, "TypeError", "make_mesh: devices must be a sequence of devices");
    if (got < size) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_putc(&b, '(');
      for (int i = 0; i < m.n; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)m.sizes[i]);
      sr_buf_puts(&b, m.n == 1 ? ",)" : ")");
      sr_raise(I, "ValueError", "Number of devices %d must be >= the product of mesh_shape %s", got, b.p);
      sr_buf_free(&b);
      return NULL;
    }
    for (int i = 0; identity && i < size; i++) identity = ids[i] == i;
    if (!identity) m.devices = ids;
  }
  I->jax->devices_used = 1;
  return sr_mesh_val(NULL, sr_mesh_intern(&m));
}

static SrVal *bi_abstract_mesh(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "AbstractMesh", "axis_sizes, axis_names, axis_types=", p) < 0) return NULL;
  SrMesh m;
  /* mesh._normalize_axis_types: an AbstractMesh's axes default to Explicit */
  if (fill_mesh(I, &m, p[0], p[1], p[2], SR_AXIS_EXPLICIT, "AbstractMesh") < 0) return NULL;
  /* its size is a Python int, which is 64-bit here */
  if (sr_mesh_size_of(m.sizes, m.n) < 0)
    return sr_raise(I, "OverflowError", "integer overflow: shardrepl's Python ints are 64-bit");
  m.abstract = 1;
  return sr_mesh_val(NULL, sr_mesh_intern(&m));
}

static SrVal *bi_mesh(SrInterp *I, SrArgs *a) {
  /* Mesh(devices, axis_names, axis_types=): devices is an array of device
     ids (or of devices) whose shape is the mesh's */
  SrVal *p[3];
  if (sr_args_parse(I, a, "Mesh", "devices, axis_names, axis_types=", p) < 0) return NULL;
  /* a (nested) list of devices is np.array'ed first, as JAX does */
  SrVal *devs = p[0]->kind == SR_V_LIST || p[0]->kind == SR_V_TUPLE ? sr_jnp_asarray(I, p[0], -1) : sr_ref(p[0]);
  SrVal *shape = devs ? sr_getattr(I, devs, "shape") : NULL;
  if (!shape) {
    sr_unref(devs);
    return NULL;
  }
  SrMesh m;
  int rc = fill_mesh(I, &m, shape, p[1], p[2], SR_AXIS_AUTO, "Mesh");
  sr_unref(shape);
  /* the devices in their order: kept when they are not the first ones
     in order (Mesh(jax.devices()[2:4], 'i') is not Mesh(jax.devices()[:2], 'i')) */
  int ids[SR_MESH_MAX_IDS];
  sr_unref(devs);
  if (rc == 0) {
    int64_t size = sr_mesh_size_of(m.sizes, m.n);
    int got = collect_device_ids(I, p[0], ids, 0, SR_MESH_MAX_IDS, 0), identity = got == size;
    for (int i = 0; identity && i < got; i++) identity = ids[i] == i;
    if (got == size && !identity) m.devices = ids;
  }
  if (rc < 0) return NULL;
  int64_t size = sr_mesh_size_of(m.sizes, m.n);
  if (size < 0)
    return sr_raise(I, "ValueError", "Mesh: the devices array holds more than %lld devices, but there are only %d",
                    (long long)INT64_MAX, I->jax->num_devices);
  if (size > I->jax->num_devices)
    return sr_raise(I, "ValueError", "Mesh: the devices array holds %lld devices, but there are only %d",
                    (long long)size, I->jax->num_devices);
  return sr_mesh_val(NULL, sr_mesh_intern(&m));
}

static SrVal *mesh_types_tuple(const SrMesh *m) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, m->n);
  for (int i = 0; i < m->n; i++) sr_seq_push(NULL, t, sr_axistype_val(m->types[i]));
  return t;
}

/* Mesh.update(devices=None, axis_names=None, axis_types=None) and
   AbstractMesh.update(axis_sizes=None, axis_names=None, axis_types=None):
   a new mesh, the arguments not given kept */
static SrVal *mesh_update(SrInterp *I, SrArgs *a) {
  const SrMesh *m = a->self->mesh;
  SrVal *p[3];
  if (sr_args_parse(I, a, "update",
                    m->abstract ? "axis_sizes=, axis_names=, axis_types=" : "devices=, axis_names=, axis_types=",
                    p) < 0)
    return NULL;
  int given_sizes = p[0] && p[0]->kind != SR_V_NONE;
  SrVal *sizes;
  if (!given_sizes) {
    sizes = sr_seq(NULL, SR_V_TUPLE, m->n);
    for (int i = 0; i < m->n; i++) sr_seq_push(NULL, sizes, sr_int(NULL, m->sizes[i]));
  } else if (m->abstract) {
    sizes = sr_ref(p[0]);
  } else {
    SrVal *devs = p[0]->kind == SR_V_LIST || p[0]->kind == SR_V_TUPLE ? sr_jnp_asarray(I, p[0], -1) : sr_ref(p[0]);
    sizes = devs ? sr_getattr(I, devs, "shape") : NULL;
    sr_unref(devs);
    if (!sizes) return NULL;
  }
  SrVal *names = p[1] && p[1]->kind != SR_V_NONE ? sr_ref(p[1]) : names_tuple(m->names, m->n);
  SrVal *types = p[2] && p[2]->kind != SR_V_NONE ? sr_ref(p[2]) : mesh_types_tuple(m);
  SrMesh nm;
  int rc = fill_mesh(I, &nm, sizes, names, types, SR_AXIS_AUTO, m->abstract ? "AbstractMesh" : "Mesh");
  sr_unref(sizes);
  sr_unref(names);
  sr_unref(types);
  if (rc < 0) return NULL;
  if (sr_mesh_size_of(nm.sizes, nm.n) < 0)
    return sr_raise(I, "OverflowError", "integer overflow: shardrepl's Python ints are 64-bit");
  if (!m->abstract && sr_mesh_size(&nm) > I->jax->num_devices)
    return sr_raise(I, "ValueError", "Mesh: the devices array holds %lld devices, but there are only %d",
                    (long long)sr_mesh_size(&nm), I->jax->num_devices);
  nm.abstract = m->abstract;
  nm.device_fields = m->device_fields;
  if (!given_sizes) nm.devices = m->devices;
  return sr_mesh_val(NULL, sr_mesh_intern(&nm));
}

/* AbstractMesh.update_axis_types({name: AxisType}): names the mesh does
   not have are ignored */
static SrVal *mesh_update_axis_types(SrInterp *I, SrArgs *a) {
  const SrMesh *m = a->self->mesh;
  SrVal *p[1];
  if (sr_args_parse(I, a, "update_axis_types", "name_to_type", p) < 0) return NULL;
  if (p[0]->kind != SR_V_DICT) return sr_raise(I, "TypeError", "update_axis_types expects a dict of axis names to AxisTypes");
  uint8_t types[SR_MAX_AXES];
  memcpy(types, m->types, sizeof types);
  for (int i = 0; i < m->n; i++) {
    SrVal *k = sr_str_cstr(NULL, m->names[i]);
    SrVal *v = sr_dict_get(p[0], k);
    sr_unref(k);
    if (v && axis_type_of(I, v, &types[i]) < 0) return NULL;
  }
  return sr_mesh_val(NULL, sr_mesh_with_types(m, types));
}

static SrVal *mesh_getattr(SrInterp *I, SrVal *self, const char *name) {
  const SrMesh *m = self->mesh;
  (void)I;
  if (strcmp(name, "update") == 0) return sr_bound_method(self, "update", mesh_update);
  if (m->abstract && strcmp(name, "update_axis_types") == 0)
    return sr_bound_method(self, "update_axis_types", mesh_update_axis_types);
  if (strcmp(name, "axis_names") == 0) return names_tuple(m->names, m->n);
  if (strcmp(name, "axis_sizes") == 0 || strcmp(name, "devices_shape") == 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, m->n);
    for (int i = 0; i < m->n; i++) sr_seq_push(NULL, t, sr_int(NULL, m->sizes[i]));
    return t;
  }
  if (strcmp(name, "axis_types") == 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, m->n);
    for (int i = 0; i < m->n; i++) sr_seq_push(NULL, t, sr_axistype_val(m->types[i]));
    return t;
  }
  if (strcmp(name, "shape") == 0) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < m->n; i++) sr_dict_set(NULL, d, sr_str_cstr(NULL, m->names[i]), sr_int(NULL, m->sizes[i]));
    return d;
  }
  if (strcmp(name, "size") == 0) return sr_int(NULL, sr_mesh_size(m));
  if (strcmp(name, "empty") == 0) return sr_bool(m->n == 0);
  /* mesh.manual_axes / explicit_axes / auto_axes: the names of that type,
     in mesh order */
  int want = strcmp(name, "manual_axes") == 0     ? SR_AXIS_MANUAL
             : strcmp(name, "explicit_axes") == 0 ? SR_AXIS_EXPLICIT
             : strcmp(name, "auto_axes") == 0     ? SR_AXIS_AUTO
                                                  : -1;
  if (want >= 0) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, m->n);
    for (int i = 0; i < m->n; i++)
      if (m->types[i] == want) sr_seq_push(NULL, t, sr_str_cstr(NULL, m->names[i]));
    return t;
  }
  if (strcmp(name, "abstract_mesh") == 0) return sr_mesh_val(NULL, sr_mesh_abstract(m, !m->abstract));
  /* mesh.are_all_axes_manual / auto / explicit: every axis of that type,
     never for the empty mesh */
  want = strcmp(name, "are_all_axes_manual") == 0     ? SR_AXIS_MANUAL
         : strcmp(name, "are_all_axes_explicit") == 0 ? SR_AXIS_EXPLICIT
         : strcmp(name, "are_all_axes_auto") == 0     ? SR_AXIS_AUTO
                                                      : -1;
  if (want >= 0) {
    int all = m->n > 0;
    for (int i = 0; i < m->n; i++) all &= m->types[i] == want;
    return sr_bool(all);
  }
  return NULL;
}

/* ---- axis types ---- */

static SrVal *axistype_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "name") == 0) return sr_str_cstr(NULL, sr_axis_type_name(self->axistype));
  return NULL;
}

/* ---- PartitionSpec ---- */

/* CanonicalizePartition: falsy -> None, 1-tuples -> the element, lists ->
   tuples, nested tuples rejected. */
static int spec_entry_of(SrInterp *I, SrVal *v, SrSpecEntry *e, const char **names, int *nn) {
  e->names = names + *nn;
  e->n = 0;
  if (!sr_val_truthy(v) && v->kind != SR_V_OBJ) return 0;
  if (v->kind == SR_V_WORD && v->str.n == 13 && memcmp(v->str.s, "UNCONSTRAINED", 13) == 0) {
    names[(*nn)++] = SR_SPEC_UNCONSTRAINED;
    e->n = 1;
    return 0;
  }
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    for (int i = 0; i < v->seq.n; i++) {
      SrVal *x = v->seq.items[i];
      if (x->kind == SR_V_TUPLE || x->kind == SR_V_LIST) {
        SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
        sr_val_str(&b, v);
        sr_val_str(&c, x);
        sr_raise(I, "ValueError", "A tuple inside PartitionSpec cannot contain a nested tuple. Got partition: %s and the nested tuple: %s", b.p, c.p);
        sr_buf_free(&b);
        sr_buf_free(&c);
        return -1;
      }
      const char *s = sr_as_str(I, x, "a PartitionSpec entry");
      if (!s) return -1;
      if (*nn >= 64) return sr_raise(I, "ValueError", "PartitionSpec too large"), -1;
      names[(*nn)++] = s;
      e->n++;
    }
    return 0;
  }
  const char *s = sr_as_str(I, v, "a PartitionSpec entry");
  if (!s) return -1;
  names[(*nn)++] = s;
  e->n = 1;
  return 0;
}

static int name_set_of(SrInterp *I, SrVal *v, const char **out, int *n, const char *which) {
  *n = 0;
  if (!v) return 0;
  if (v->kind != SR_V_SET && v->kind != SR_V_FROZENSET) {
    sr_raise(I, "TypeError", "%s argument of PartitionSpec should of type `frozenset` or `set`. Got type <class '%s'>",
             which, sr_val_kind_name(v));
    return -1;
  }
  for (int i = 0; i < v->seq.n && i < SR_MAX_AXES; i++) {
    if (v->seq.items[i]->kind == SR_V_NONE) {
      sr_raise(I, "ValueError", "%s cannot contain None. All elements in %s should refer to the mesh axes.", which, which);
      return -1;
    }
    const char *s = sr_as_str(I, v->seq.items[i], which);
    if (!s) return -1;
    out[(*n)++] = s;
  }
  return 0;
}

static SrVal *bi_partition_spec(SrInterp *I, SrArgs *a) {
  SrVal *unred = NULL, *red = NULL, *kind = NULL;
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "unreduced") == 0) unred = a->kwv[k];
    else if (strcmp(a->kw[k], "reduced") == 0) red = a->kwv[k];
    else if (strcmp(a->kw[k], "unreduced_kind") == 0) kind = a->kwv[k];
    else return sr_raise(I, "TypeError", "PartitionSpec() got an unexpected keyword argument '%s'", a->kw[k]);
  }
  if (a->n > SR_MAX_RANK) return sr_raise(I, "ValueError", "PartitionSpec has too many entries");
  SrSpec spec = {0};
  SrSpecEntry entries[SR_MAX_RANK];
  const char *names[64], *un[SR_MAX_AXES], *re[SR_MAX_AXES];
  int nn = 0;
  spec.e = entries;
  spec.n = a->n;
  for (int i = 0; i < a->n; i++)
    if (spec_entry_of(I, a->v[i], &entries[i], names, &nn) < 0) return NULL;
  if (name_set_of(I, unred, un, &spec.nunreduced, "unreduced") < 0) return NULL;
  if (name_set_of(I, red, re, &spec.nreduced, "reduced") < 0) return NULL;
  spec.unreduced = un;
  spec.reduced = re;
  for (int i = 0; i < spec.nunreduced; i++)
    for (int k = 0; k < spec.nreduced; k++)
      if (un[i] == re[k]) {
        SrVal *u = names_set(un, spec.nunreduced), *r = names_set(re, spec.nreduced);
        SrBuf b = SR_BUF_INIT;
        sr_buf_puts(&b, "`unreduced` and `reduced` argument to PartitionSpec cannot overlap. Got unreduced: ");
        sr_val_repr(&b, u);
        sr_buf_puts(&b, " and reduced: ");
        sr_val_repr(&b, r);
        sr_raise(I, "ValueError", "%s", b.p);
        sr_buf_free(&b);
        sr_unref(u);
        sr_unref(r);
        return NULL;
      }
  for (int i = 0; i < spec.n; i++)
    for (int j = 0; j < entries[i].n; j++)
      for (int k = 0; k < spec.nunreduced + spec.nreduced; k++) {
        int is_un = k < spec.nunreduced;
        const char *x = is_un ? un[k] : re[k - spec.nunreduced];
        if (entries[i].names[j] == x) {
          SrVal *pv = sr_spec_val(NULL, &(SrSpec){spec.n, entries, 0, 0, NULL, NULL, 0});
          SrBuf b = SR_BUF_INIT;
          SrVal *t = sr_seq(NULL, SR_V_TUPLE, spec.n);
          for (int q = 0; q < spec.n; q++) sr_seq_push(NULL, t, sr_getindex(I, pv, q));
          sr_val_repr(&b, t);
          SrVal *s = is_un ? names_set(un, spec.nunreduced) : names_set(re, spec.nreduced);
          sr_buf_puts(&b, is_un ? " and unreduced axes: " : " and reduced axes: ");
          sr_val_repr(&b, s);
          sr_raise(I, "ValueError", "partitions cannot overlap with %s axes passed to PartitionSpec. Got partitions: %s",
                   is_un ? "unreduced" : "reduced", b.p);
          sr_buf_free(&b);
          sr_unref(pv);
          sr_unref(t);
          sr_unref(s);
          return NULL;
        }
      }
  spec.ukind = SR_UK_NONE;
  if (kind && kind->kind != SR_V_NONE) {
    /* a member of jax.sharding.UnreducedKind, nothing else (not its name) */
    for (int k = SR_UK_SUM; k <= SR_UK_MIN && !spec.ukind; k++) {
      SrVal *m = sr_ukind_val(k);
      if (m == kind) spec.ukind = (uint8_t)k;
      sr_unref(m);
    }
    if (!spec.ukind) {
      SrVal *t = sr_type_of(I, kind);
      SrBuf b = SR_BUF_INIT;
      if (t) sr_val_repr(&b, t);
      sr_raise(I, "TypeError", "Expected unreduced_kind to be of type `jax.sharding.UnreducedKind` but got %s",
               b.p ? b.p : "?");
      sr_buf_free(&b);
      sr_unref(t);
      return NULL;
    }
    if (!spec.nunreduced) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, kind);
      sr_raise(I, "ValueError",
               "`unreduced_kind` should be `None` when `unreduced` is an empty set. Got "
               "unreduced_kind=%s and unreduced=frozenset()", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  } else if (spec.nunreduced) {
    spec.ukind = SR_UK_SUM;
  }
  return sr_spec_val(NULL, &spec);
}

SrVal *sr_ukind_val(int kind) {
  if (kind != SR_UK_SUM && kind != SR_UK_MAX && kind != SR_UK_MIN) return sr_none();
  char w[48];
  snprintf(w, sizeof w, "jax.sharding.UnreducedKind.%s", sr_ukind_name(kind));
  SrVal *v = sr_lookup_qualname(w);
  return v ? sr_ref(v) : sr_none();
}

static SrVal *spec_getattr(SrInterp *I, SrVal *self, const char *name);

/* P.index(value) / P.count(value): the partitions tuple's, of the value
   canonicalized as P canonicalizes an entry (P(value)'s one entry) */
static SrVal *spec_seq_method(SrInterp *I, SrArgs *a, const char *which) {
  if (a->n != 1) return sr_raise(I, "TypeError", "%s() takes exactly one argument (%d given)", which, a->n);
  SrVal *ctor = sr_lookup_qualname("jax.sharding.PartitionSpec");
  SrVal *one = ctor ? sr_call1(I, ctor, a->v[0]) : NULL;
  if (!one) return NULL;
  SrVal *op = spec_getattr(I, one, "partitions"), *parts = spec_getattr(I, a->self, "partitions");
  SrVal *v = op && op->seq.n == 1 ? sr_ref(op->seq.items[0]) : sr_none();
  SrVal *m = parts ? sr_getattr(I, parts, which) : NULL;
  SrVal *r = m ? sr_call1(I, m, v) : NULL;
  sr_unref(one);
  sr_unref(op);
  sr_unref(parts);
  sr_unref(m);
  sr_unref(v);
  return r;
}
/* P.__add__ / P.__radd__: P + P joins partitions and unreduced and
   reduced sets (the same unreduced kind); P + tuple and tuple + P join
   partitions, refused when the P has unreduced or reduced axes */
static SrVal *spec_add_impl(SrInterp *I, SrVal *self, SrVal *other, int reflected) {
  SrVal *ctor = sr_lookup_qualname("jax.sharding.PartitionSpec");
  if (!ctor) return NULL;
  const SrSpec *s = self->spec;
  if (other->kind == SR_V_SPEC && !reflected) {
    const SrSpec *o = other->spec;
    if ((s->nunreduced ? s->ukind : 0) != (o->nunreduced ? o->ukind : 0)) {
      SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_spec_repr(&b, s);
      sr_spec_repr(&c, o);
      sr_raise(I, "TypeError", "PartitionSpec can't be added if the unreduced_kind differs in self and other. Got self=%s and other=%s",
               b.p, c.p);
      sr_buf_free(&b);
      sr_buf_free(&c);
      return NULL;
    }
  } else if (other->kind == SR_V_TUPLE) {
    for (int r = 0; r < 2; r++)
      if (r ? s->nreduced : s->nunreduced) {
        SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
        sr_val_str(&b, other);
        sr_spec_repr(&c, s);
        sr_raise(I, "TypeError", "other %s cannot be of instance `tuple` when self %s has %s in `%s` of PartitionSpec.", b.p,
                 c.p, r ? "reduced" : "unreduced", reflected ? "__radd__" : "__add__");
        sr_buf_free(&b);
        sr_buf_free(&c);
        return NULL;
      }
  } else {
    return sr_raise(I, "NotImplementedError", "%s", "");
  }
  SrVal *sp = spec_getattr(I, self, "partitions");
  SrVal *op = other->kind == SR_V_SPEC ? spec_getattr(I, other, "partitions") : sr_ref(other);
  SrVal *first = reflected ? op : sp, *second = reflected ? sp : op;
  int n = first->seq.n + second->seq.n;
  SrVal **args = sr_xcalloc((size_t)n + 1, sizeof *args);
  for (int i = 0; i < first->seq.n; i++) args[i] = first->seq.items[i];
  for (int i = 0; i < second->seq.n; i++) args[first->seq.n + i] = second->seq.items[i];
  const char *kw[3] = {sr_intern_cstr("unreduced"), sr_intern_cstr("reduced"), sr_intern_cstr("unreduced_kind")};
  SrVal *kwv[3];
  int nkw = 0;
  if (other->kind == SR_V_SPEC) {
    const SrSpec *o = other->spec;
    SrVal *u = sr_seq(NULL, SR_V_SET, s->nunreduced + o->nunreduced), *rd = sr_seq(NULL, SR_V_SET, s->nreduced + o->nreduced);
    for (int i = 0; i < s->nunreduced; i++) sr_seq_push(NULL, u, sr_str_cstr(NULL, s->unreduced[i]));
    for (int i = 0; i < o->nunreduced; i++) {
      int dup = 0;
      for (int k = 0; k < s->nunreduced; k++) dup |= s->unreduced[k] == o->unreduced[i];
      if (!dup) sr_seq_push(NULL, u, sr_str_cstr(NULL, o->unreduced[i]));
    }
    for (int i = 0; i < s->nreduced; i++) sr_seq_push(NULL, rd, sr_str_cstr(NULL, s->reduced[i]));
    for (int i = 0; i < o->nreduced; i++) {
      int dup = 0;
      for (int k = 0; k < s->nreduced; k++) dup |= s->reduced[k] == o->reduced[i];
      if (!dup) sr_seq_push(NULL, rd, sr_str_cstr(NULL, o->reduced[i]));
    }
    kwv[0] = u;
    kwv[1] = rd;
    kwv[2] = sr_ukind_val(s->nunreduced ? s->ukind : SR_UK_NONE);
    nkw = 3;
  }
  SrArgs ca = {n, args, nkw, kw, kwv, NULL};
  SrVal *r = sr_call(I, ctor, &ca);
  for (int i = 0; i < nkw; i++) sr_unref(kwv[i]);
  free(args);
  sr_unref(sp);
  sr_unref(op);
  return r;
}

static SrVal *spec_add(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->v[0]->kind != SR_V_SPEC) return NULL;
  return spec_add_impl(I, a->v[0], a->v[1], 0);
}

static SrVal *spec_radd(SrInterp *I, SrArgs *a) {
  if (a->n != 2 || a->v[0]->kind != SR_V_SPEC) return NULL;
  return spec_add_impl(I, a->v[0], a->v[1], 1);
}

static SrVal *spec_index(SrInterp *I, SrArgs *a) { return spec_seq_method(I, a, "index"); }
static SrVal *spec_count(SrInterp *I, SrArgs *a) { return spec_seq_method(I, a, "count"); }

static SrVal *spec_getattr(SrInterp *I, SrVal *self, const char *name) {
  const SrSpec *s = self->spec;
  if (strcmp(name, "index") == 0) return sr_bound_method(self, name, spec_index);
  if (strcmp(name, "count") == 0) return sr_bound_method(self, name, spec_count);
  if (strcmp(name, "unreduced") == 0) return names_set(s->unreduced, s->nunreduced);
  if (strcmp(name, "reduced") == 0) return names_set(s->reduced, s->nreduced);
  if (strcmp(name, "unreduced_kind") == 0) return sr_ukind_val(s->nunreduced ? s->ukind : SR_UK_NONE);
  if (strcmp(name, "partitions") == 0) {
    SrSpec plain = *s;
    plain.nunreduced = plain.nreduced = 0;
    SrVal *pv = sr_spec_val(NULL, &plain);
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, s->n);
    for (int i = 0; i < s->n; i++) sr_seq_push(NULL, t, sr_getindex(I, pv, i));
    sr_unref(pv);
    return t;
  }
  return NULL;
}

/* ---- NamedSharding ---- */

/* named_sharding._check_mesh_resource_axis: every axis spec names is one
   of mesh m's.  -1 with JAX's ValueError raised. */
int sr_mesh_resource_check(SrInterp *I, const SrMesh *m, const SrSpec *s) {
  for (int i = 0; i < s->n; i++)
    for (int j = 0; j < s->e[i].n; j++)
      if (s->e[i].names[j] != SR_SPEC_UNCONSTRAINED && sr_mesh_axis(m, s->e[i].names[j]) < 0) {
        SrBuf b = SR_BUF_INIT, names = SR_BUF_INIT;
        sr_spec_repr(&b, s);
        SrVal *t = names_tuple(m->names, m->n);
        sr_val_repr(&names, t);
        sr_unref(t);
        sr_raise(I, "ValueError", "Resource axis: %s of %s is not found in mesh: %s.", s->e[i].names[j], b.p, names.p);
        sr_buf_free(&b);
        sr_buf_free(&names);
        return -1;
      }
  return 0;
}

static SrVal *bi_named_sharding(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "NamedSharding", "mesh, spec, *, memory_kind=", p) < 0) return NULL;
  if (p[0]->kind != SR_V_MESH)
    return sr_raise(I, "TypeError", "NamedSharding's mesh must be a Mesh or AbstractMesh, got %s", sr_val_kind_name(p[0]));
  /* jaxlib's NamedSharding.__init__ */
  if (p[1]->kind == SR_V_NONE)
    return sr_raise(I, "TypeError", "Unexpected None passed as spec for NamedSharding. Did you mean P()?");
  if (p[1]->kind != SR_V_SPEC)
    return sr_raise(I, "TypeError", "NamedSharding's spec must be a PartitionSpec, got %s", sr_val_kind_name(p[1]));
  const SrMesh *m = p[0]->mesh;
  const SrSpec *s = p[1]->spec;
  /* over an AbstractMesh, the memory kind is one of the valid ones
     (checked before the spec) */
  if (m->abstract && p[2] && p[2]->kind == SR_V_STR) {
    const char *k = p[2]->str.s;
    if (strcmp(k, "device") && strcmp(k, "pinned_host") && strcmp(k, "unpinned_host"))
      return sr_raise(I, "ValueError", "Got invalid memory kind: %s. Valid memory kinds are: device, pinned_host, unpinned_host",
                      k);
  }
  if (sr_api_check_spec(I, s, NULL, -1) < 0 || sr_mesh_resource_check(I, m, s) < 0) return NULL;
  /* _check_mesh_unreduced: unreduced and reduced name Explicit axes of
     the mesh */
  for (int r = 0; r < 2; r++) {
    const char *const *names = r ? s->reduced : s->unreduced;
    int n = r ? s->nreduced : s->nunreduced;
    const char *what = r ? "Reduced" : "Unreduced", *lwhat = r ? "reduced" : "unreduced";
    for (int k = 0; k < n; k++) {
      int ax = sr_mesh_axis(m, names[k]);
      if (ax >= 0 && m->types[ax] == SR_AXIS_EXPLICIT) continue;
      SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
      if (ax < 0) {
        SrVal *nt = names_tuple(m->names, m->n);
        sr_val_repr(&b, nt);
        sr_unref(nt);
        sr_spec_repr(&c, s);
        sr_raise(I, "ValueError", "%s axes %s is not found in mesh.axis_names=%s. Got pspec=%s", what, names[k], b.p, c.p);
      } else {
        SrVal *set = names_set(names, n);
        sr_val_repr(&b, set);
        sr_unref(set);
        sr_val_str(&c, p[0]);
        sr_raise(I, "ValueError",
                 "%s axes can only refer to mesh axes that is of type `Explicit`. Got %s axes: %s and mesh: %s", what,
                 lwhat, b.p, c.p);
      }
      sr_buf_free(&b);
      sr_buf_free(&c);
      return NULL;
    }
  }
  /* _check_mesh_resource_axis: P.UNCONSTRAINED needs an Auto axis */
  int any_auto = 0, unconstrained = 0;
  for (int i = 0; i < m->n; i++) any_auto |= m->types[i] == SR_AXIS_AUTO;
  for (int i = 0; i < s->n; i++) unconstrained |= s->e[i].n == 1 && s->e[i].names[0] == SR_SPEC_UNCONSTRAINED;
  if (!any_auto && unconstrained) {
    SrBuf b = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_spec_repr(&b, s);
    SrVal *t = mesh_types_tuple(m);
    sr_val_repr(&c, t);
    sr_unref(t);
    sr_raise(I, "ValueError",
             "%s cannot contain `P.UNCONSTRAINED` when no mesh axis_types are `Auto`. Got mesh axis_types: %s", b.p,
             c.p);
    sr_buf_free(&b);
    sr_buf_free(&c);
    return NULL;
  }
  const char *mk = NULL;
  if (p[2] && p[2]->kind != SR_V_NONE) mk = sr_as_str(I, p[2], "memory_kind");
  else if (!m->abstract) mk = sr_intern_cstr("device");
  return sr_sharding_val(NULL, m, s, mk);
}

/* NamedSharding.with_memory_kind(kind): the sharding in another memory */
static SrVal *sharding_with_memory_kind(SrInterp *I, SrArgs *a) {
  SrVal *self = sr_current_builtin(I)->data, *p[1];
  if (sr_args_parse(I, a, "with_memory_kind", "kind", p) < 0) return NULL;
  const char *mk = sr_as_str(I, p[0], "kind");
  if (!mk) return NULL;
  return sr_sharding_val(NULL, self->sh.mesh, self->sh.spec, sr_intern_cstr(mk));
}

static SrVal *sharding_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  if (strcmp(name, "with_memory_kind") == 0)
    return sr_builtin_with("with_memory_kind", sharding_with_memory_kind, sr_ref(self), (void (*)(void *))sr_unref);
  if (strcmp(name, "mesh") == 0) return sr_mesh_val(NULL, self->sh.mesh);
  if (strcmp(name, "spec") == 0) return sr_spec_val(NULL, self->sh.spec);
  if (strcmp(name, "memory_kind") == 0)
    return self->sh.memory_kind ? sr_str_cstr(NULL, self->sh.memory_kind) : sr_none();
  return NULL;
}

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

/* jax.sharding.Sharding, the base class of every sharding: isinstance
   holds for NamedSharding, SingleDeviceSharding... values */
static void sharding_base_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<class 'jaxlib._jax.Sharding'>"); /* use_cpp_class(xc.Sharding) */
}

static int sharding_base_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  (void)self;
  const char *kn = sr_val_kind_name(x);
  size_t n = strlen(kn);
  return n > 8 && strcmp(kn + n - 8, "Sharding") == 0;
}

static SrVal *sharding_base_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  (void)self;
  if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, "Sharding");
  if (strcmp(name, "__module__") == 0) return sr_str_cstr(NULL, "jaxlib._jax");
  return NULL;
}

static const SrLangOps sharding_base_ops = {.getattr = sharding_base_getattr,
                                            .instancecheck = sharding_base_instancecheck};
static const SrClass sharding_base_class = {"type", NULL, sharding_base_repr, NULL, &sharding_base_ops};

/* jax.Device, the class of the devices (jax.devices()'s CpuDevice...) */
static void device_base_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<class 'jaxlib._jax.Device'>");
}

static int device_base_instancecheck(SrInterp *I, SrVal *self, SrVal *x) {
  (void)I;
  (void)self;
  const char *kn = sr_val_kind_name(x);
  size_t n = strlen(kn);
  return n > 6 && strcmp(kn + n - 6, "Device") == 0;
}

static SrVal *device_base_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  (void)self;
  if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0) return sr_str_cstr(NULL, "Device");
  if (strcmp(name, "__module__") == 0) return sr_str_cstr(NULL, "jaxlib._jax");
  return NULL;
}

static const SrLangOps device_base_ops = {.getattr = device_base_getattr,
                                          .instancecheck = device_base_instancecheck};
static const SrClass device_base_class = {"type", NULL, device_base_repr, NULL, &device_base_ops};

/* Meshes, PartitionSpec and NamedSharding (from sr_builtins_jax_init). */
void sr_sharding_init(void) {
  sr_register("jax.sharding.Sharding", sr_obj(&sharding_base_class, NULL));
  sr_register("jax.Device", sr_obj(&device_base_class, NULL));
  sr_def("jax.make_mesh jax.sharding.make_mesh", bi_make_mesh,
         "make_mesh(axis_shapes, axis_names, axis_types=None): a concrete Mesh over the first devices; axis types default to Explicit");
  sr_def("jax.sharding.AbstractMesh", bi_abstract_mesh,
         "AbstractMesh(axis_sizes, axis_names, axis_types=None): a mesh with no devices");
  sr_def("jax.sharding.Mesh", bi_mesh, "Mesh(devices, axis_names, axis_types=None): a mesh over an array or (nested) list of devices");
  sr_def("jax.sharding.PartitionSpec.__add__", spec_add, "P.__add__(self, other): P + P or P + tuple");
  sr_def("jax.sharding.PartitionSpec.__radd__", spec_radd, "P.__radd__(self, other): tuple + P");
  sr_def("jax.sharding.PartitionSpec jax.P", bi_partition_spec,
         "P(*partitions, unreduced=set(), reduced=set()): how each array dimension is split over mesh axes");
  sr_def("jax.sharding.NamedSharding jax.NamedSharding", bi_named_sharding,
         "NamedSharding(mesh, spec): a PartitionSpec over a mesh");
  sr_kind_getattr_set(SR_V_MESH, mesh_getattr);
  sr_context_register(&mesh_ctx);
  sr_kind_call_set(SR_V_MESH, mesh_call);
  sr_kind_getattr_set(SR_V_SPEC, spec_getattr);
  sr_kind_getattr_set(SR_V_SHARDING, sharding_getattr);
  sr_kind_getattr_set(SR_V_AXISTYPE, axistype_getattr);
}
