/* vmap_built.c: what JAX builds on tracing and vmap besides the
 * Jacobians (jacobian.c): jax.lax.map (loops.py's map: a scan of f, or
 * with batch_size a scan of vmap(f) over batches and vmap(f) of the
 * remainder) and jax.eval_shape (api.py: the outputs' shapes and dtypes,
 * as ShapeDtypeStructs, from a trace that runs nothing) and jax.pmap as
 * current JAX implements it (pmap.py: a jit of a shard_map over a
 * one-axis mesh of the first devices, each device's slice squeezed in and
 * its output's axis expanded back).
 */
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "jax/api.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "jax/tree_util.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

static SrVal *call_builtin(SrInterp *I, const char *qualname, int n, SrVal **v, int nkw, const char **kw,
                           SrVal **kwv) {
  SrVal *f = sr_lookup_qualname(qualname);
  if (!f) return sr_raise(I, "RuntimeError", "internal error: no built-in %s", qualname);
  SrArgs a = {n, v, nkw, kw, kwv, NULL};
  return sr_call(I, f, &a);
}

static SrVal *not_callable(SrInterp *I, SrVal *fun) {
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, fun);
  sr_raise(I, "TypeError", "Expected a callable value, got %s", sr_buf_str(&b));
  sr_buf_free(&b);
  return NULL;
}

/* ---- jax.eval_shape ---- */

/* api_util.shaped_abstractify's duck typing: a leaf that is no array but
   has `shape` and `dtype` attributes (and maybe `weak_type`) stands for
   an abstract array of them; others as they are.  A new reference. */
static SrVal *duck_abstract(SrInterp *I, SrVal *x) {
  SrVal *l = sr_pytree_flatten_any(I, x);
  if (!l) return NULL;
  int changed = 0;
  for (int i = 0; i < l->seq.n; i++) {
    SrVal *v = l->seq.items[i];
    if (v->kind != SR_V_OBJ || sr_array_of(v)) continue;
    SrVal *shape = sr_getattr(I, v, "shape"), *dtype = shape ? sr_getattr(I, v, "dtype") : NULL;
    if (!shape || !dtype || dtype->kind != SR_V_DTYPE) {
      sr_unref(shape);
      sr_unref(dtype);
      if (I->exc) sr_exc_clear(I);
      continue;
    }
    int64_t dims[SR_MAX_RANK];
    int nd;
    int rc = sr_shape_arg(I, shape, dims, &nd, "shape");
    SrVal *weak = rc == 0 ? sr_getattr(I, v, "weak_type") : NULL;
    if (!weak && I->exc) sr_exc_clear(I);
    if (rc == 0) {
      SrTypeBuilder b;
      sr_type_builder(&b, sr_type_array(dtype->dtype, nd, dims));
      b.weak = weak && sr_val_truthy(weak);
      l->seq.items[i] = sr_array_abstract(sr_type_get(&b));
      sr_unref(v);
      changed = 1;
    }
    sr_unref(weak);
    sr_unref(shape);
    sr_unref(dtype);
    if (rc < 0) {
      sr_unref(l);
      return NULL;
    }
  }
  SrVal *r = changed ? sr_pytree_unflatten(x, l) : sr_ref(x);
  sr_unref(l);
  return r;
}

static SrVal *jax_eval_shape(SrInterp *I, SrArgs *a) {
  if (a->n < 1) return sr_raise(I, "TypeError", "eval_shape() missing 1 required positional argument: 'fun'");
  SrVal *fun = a->v[0];
  if (!sr_is_callable(I, fun)) return not_callable(I, fun);
  SrVal *tree = NULL, *captured = NULL;
  SrVal **args = sr_xcalloc((size_t)a->n + 1, sizeof *args);
  int ok = 1;
  for (int i = 1; i < a->n && ok; i++) ok = (args[i] = duck_abstract(I, a->v[i])) != NULL;
  SrJaxpr *j = ok ? sr_trace_fn(I, fun, a->n - 1, args + 1, a->nkw, a->kw, a->kwv, SR_TRACE_FOR_JIT | SR_TRACE_KWARGS, &tree, &captured)
                  : NULL;
  for (int i = 1; i < a->n; i++) sr_unref(args[i]);
  free(args);
  if (!j) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->nout);
  /* jit(fun).trace(...).out_info: a jitted fun's single out_shardings is
     each output's sharding */
  SrVal *osh = sr_jit_out_shardings(fun);
  if (osh && (osh->kind == SR_V_LIST || osh->kind == SR_V_TUPLE || osh->kind == SR_V_DICT || osh->kind == SR_V_NONE))
    osh = NULL;
  for (uint32_t i = 0; i < j->nout; i++) {
    SrVal *o = sr_array_abstract(sr_atom_type(j->outvars[i]));
    if (osh) ((SrArrayObj *)o->obj.data)->sharding = sr_ref(osh);
    sr_seq_push(NULL, l, o);
  }
  SrVal *r = sr_pytree_unflatten(tree, l);
  sr_unref(l);
  sr_unref(tree);
  sr_unref(captured);
  sr_program_unref(j->prog);
  return r;
}

/* f.eval_shape(*args) of a jitted f (its self): jax.eval_shape(f, *args) */
SrVal *sr_jit_eval_shape(SrInterp *I, SrArgs *a) {
  if (!a->self) return sr_raise(I, "TypeError", "eval_shape() needs the jitted function");
  SrVal **v = sr_xcalloc((size_t)a->n + 2, sizeof *v);
  v[0] = a->self;
  for (int i = 0; i < a->n; i++) v[i + 1] = a->v[i];
  SrArgs na = {a->n + 1, v, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = jax_eval_shape(I, &na);
  free(v);
  return r;
}

/* ---- jax.lax.map ---- */

/* scan's body: lambda _, x: ((), f(x)), or ((), vmap(f)(x)) */
typedef struct MapBody {
  SrVal *f;
} MapBody;

static void map_body_free(void *d) {
  MapBody *m = d;
  sr_unref(m->f);
  free(m);
}

static SrVal *map_body(SrInterp *I, SrArgs *a) {
  MapBody *m = sr_current_builtin(I)->data;
  if (a->n != 2) return sr_raise(I, "TypeError", "<lambda>() takes 2 positional arguments but %d were given", a->n);
  SrVal *y = sr_call1(I, m->f, a->v[1]);
  if (!y) return NULL;
  SrVal *r = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, r, sr_tuple(NULL, 0, NULL));
  sr_seq_push(NULL, r, y);
  return r;
}

/* scan(lambda _, x: ((), f(x)), (), xs)[1] */
static SrVal *scan_map(SrInterp *I, SrVal *f, SrVal *xs) {
  MapBody *m = sr_xcalloc(1, sizeof *m);
  m->f = sr_ref(f);
  SrVal *g = sr_builtin_with("<lambda>", map_body, m, map_body_free);
  SrVal *init = sr_tuple(NULL, 0, NULL);
  SrVal *v[3] = {g, init, xs};
  SrVal *r = call_builtin(I, "jax.lax.scan", 3, v, 0, NULL, NULL);
  sr_unref(init);
  sr_unref(g);
  if (!r) return NULL;
  SrVal *ys = sr_ref(r->seq.items[1]);
  sr_unref(r);
  return ys;
}

static SrVal *vmap_of(SrInterp *I, SrVal *f) { return call_builtin(I, "jax.vmap", 1, &f, 0, NULL, NULL); }

/* leaf[lo:hi] (None for an open end), as jnp indexing does it */
static SrVal *leaf_slice(SrInterp *I, SrVal *leaf, int64_t lo, int64_t hi) {
  SrVal *s = sr_slice_new(lo < 0 ? sr_none() : sr_int(NULL, lo), hi < 0 ? sr_none() : sr_int(NULL, hi), sr_none());
  SrVal *r = sr_getitem(I, leaf, s);
  sr_unref(s);
  return r;
}

/* _scan_leaf: leaf[:batch_elems].reshape(num_batches, batch_size, ...) */
static SrVal *scan_leaf(SrInterp *I, SrVal *leaf, int64_t elems, int64_t nb, int64_t bs) {
  const SrType *t = sr_value_type(I, leaf);
  if (t->ndim && t->dims[0].nax) {
    SrBuf b = SR_BUF_INIT;
    sr_type_str(&b, t, 0);
    sr_raise(I, "ValueError", "0th dimension of leaf passed to `jax.lax.map` should be replicated. Got %s",
             sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  SrVal *s = leaf_slice(I, leaf, -1, elems);
  if (!s) return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd = 0;
  shape[nd++] = nb;
  shape[nd++] = bs;
  for (int d = 1; d < t->ndim && nd < SR_MAX_RANK; d++) shape[nd++] = t->dims[d].size;
  SrVal *r = sr_lax_reshape(I, s, shape, nd, NULL);
  sr_unref(s);
  return r;
}

/* x.reshape(-1, *x.shape[2:]) */
static SrVal *flatten_batches(SrInterp *I, SrVal *x) {
  const SrType *t = sr_value_type(I, x);
  int64_t shape[SR_MAX_RANK];
  int nd = 0;
  shape[nd++] = t->dims[0].size * t->dims[1].size;
  for (int d = 2; d < t->ndim; d++) shape[nd++] = t->dims[d].size;
  return sr_lax_reshape(I, x, shape, nd, NULL);
}

/* map with batch_size: _batch_and_remainder, then the scan of vmap(f)
   over the batches and vmap(f) of the remainder, concatenated */
static SrVal *batched_map(SrInterp *I, SrVal *f, SrVal *xs, int64_t bs) {
  SrVal *leaves = sr_pytree_flatten(I, xs);
  if (!leaves) return NULL;
  SrVal *vf = vmap_of(I, f), *ys = NULL;
  if (!vf) goto done;
  if (!leaves->seq.n) {
    ys = scan_map(I, vf, xs);
    goto done;
  }
  for (int i = 0; i < leaves->seq.n; i++) {
    if (sr_array_of(leaves->seq.items[i])) continue;
    SrVal *arr = sr_jnp_asarray(I, leaves->seq.items[i], -1);
    if (!arr) goto done;
    sr_unref(leaves->seq.items[i]);
    leaves->seq.items[i] = arr;
  }
  const SrType *t0 = sr_value_type(I, leaves->seq.items[0]);
  if (!t0->ndim) {
    sr_raise(I, "IndexError", "tuple index out of range");
    goto done;
  }
  int64_t n0 = t0->dims[0].size, nb = bs ? n0 / bs : 0, rem = bs ? n0 % bs : n0, elems = nb * bs;
  int n = leaves->seq.n;
  SrVal *sl = NULL, *rl = NULL, *scan_ys = NULL, *rem_ys = NULL;
  /* per leaf, its batches then its remainder (unzip2 of the pairs) */
  if (nb) sl = sr_seq(NULL, SR_V_LIST, n);
  if (!nb || rem) rl = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) {
    SrVal *leaf = leaves->seq.items[i];
    if (sl) {
      SrVal *x = scan_leaf(I, leaf, elems, nb, bs);
      if (!x) goto fail;
      sr_seq_push(NULL, sl, x);
    }
    if (rl) {
      SrVal *x = leaf_slice(I, leaf, elems, -1);
      if (!x) goto fail;
      sr_seq_push(NULL, rl, x);
    }
  }
  if (sl) {
    SrVal *sxs = sr_pytree_unflatten(xs, sl);
    scan_ys = scan_map(I, vf, sxs);
    sr_unref(sxs);
    if (!scan_ys) goto fail;
  }
  if (rl) {
    SrVal *rxs = sr_pytree_unflatten(xs, rl);
    rem_ys = sr_call1(I, vf, rxs);
    sr_unref(rxs);
    if (!rem_ys) goto fail;
  }
  if (!scan_ys) {
    ys = sr_ref(rem_ys);
  } else {
    SrVal *sy = sr_pytree_flatten(I, scan_ys), *ry = rem_ys ? sr_pytree_flatten(I, rem_ys) : NULL;
    SrVal *out = sy ? sr_seq(NULL, SR_V_LIST, sy->seq.n) : NULL;
    for (int i = 0; out && i < sy->seq.n; i++) {
      SrVal *x = flatten_batches(I, sy->seq.items[i]);
      if (x && ry && i < ry->seq.n) {
        SrVal *pair[2] = {x, ry->seq.items[i]};
        SrVal *c = sr_lax_concatenate(I, 2, pair, 0);
        sr_unref(x);
        x = c;
      }
      if (!x) {
        sr_unref(out);
        out = NULL;
        break;
      }
      sr_seq_push(NULL, out, x);
    }
    if (out) ys = sr_pytree_unflatten(scan_ys, out);
    sr_unref(out);
    sr_unref(sy);
    sr_unref(ry);
  }
fail:
  sr_unref(sl);
  sr_unref(rl);
  sr_unref(scan_ys);
  sr_unref(rem_ys);
done:
  sr_unref(vf);
  sr_unref(leaves);
  return ys;
}

static SrVal *lax_map(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "map", "f, xs, *, batch_size=", p) < 0) return NULL;
  if (!p[2] || p[2]->kind == SR_V_NONE) return scan_map(I, p[0], p[1]);
  int64_t bs;
  if (sr_as_int(I, p[2], "batch_size", &bs) < 0) return NULL;
  if (bs < 0) return sr_raise(I, "ValueError", "batch_size must be non-negative, got %lld", (long long)bs);
  return batched_map(I, p[0], p[1], bs);
}

/* ---- jax.pmap ---- */

typedef struct Pmap {
  SrVal *fun, *in_axes, *out_axes, *devices;
  SrVal *axis_name; /* a str */
  int64_t axis_size; /* -1: from the arguments */
  int *statics;      /* static_broadcasted_argnums */
  int nstatic;
  uint8_t *donate;   /* donate_argnums: per position below ndonate */
  int ndonate;
} Pmap;

static void pmap_free(void *d) {
  Pmap *p = d;
  sr_unref(p->fun);
  sr_unref(p->in_axes);
  sr_unref(p->out_axes);
  sr_unref(p->devices);
  sr_unref(p->axis_name);
  free(p->statics);
  free(p->donate);
  free(p);
}

/* _fun of _cached_shard_map: the flat leaves squeezed at their axes,
   rebuilt into the arguments, fun called, its outputs expanded at theirs */
typedef struct PmapBody {
  SrVal *fun, *in_tree; /* in_tree: the arguments (a tuple), for their structure */
  int64_t *ax;          /* per leaf; INT64_MIN for None */
  int nl;
  int kwargs;           /* the last argument is the call's keyword arguments (a dict) */
  SrVal *out_axes;
} PmapBody;

static void pmap_body_free(void *d) {
  PmapBody *b = d;
  sr_unref(b->fun);
  sr_unref(b->in_tree);
  sr_unref(b->out_axes);
  free(b->ax);
  free(b);
}

static SrVal *pmap_body(SrInterp *I, SrArgs *a) {
  PmapBody *b = sr_current_builtin(I)->data;
  SrVal *l = sr_seq(NULL, SR_V_LIST, a->n), *res = NULL;
  for (int i = 0; i < a->n; i++) {
    SrVal *x = b->ax[i] == INT64_MIN ? sr_ref(a->v[i]) : sr_lax_squeeze(I, a->v[i], &b->ax[i], 1);
    if (!x) goto done;
    sr_seq_push(NULL, l, x);
  }
  SrVal *args = sr_pytree_unflatten(b->in_tree, l);
  /* the keyword arguments, last, mapped along axis 0 as pmap maps them */
  int npos = args->seq.n - (b->kwargs ? 1 : 0);
  SrVal *out = sr_call_kwdict(I, b->fun, npos, args->seq.items, b->kwargs ? args->seq.items[npos] : NULL);
  sr_unref(args);
  if (!out) goto done;
  SrVal *ol = sr_pytree_flatten(I, out);
  SrVal *nl = ol ? sr_seq(NULL, SR_V_LIST, ol->seq.n) : NULL;
  for (int i = 0; nl && i < ol->seq.n; i++) {
    SrVal *ax = b->out_axes;
    if (ax->kind == SR_V_NONE) {
      sr_seq_push(NULL, nl, sr_ref(ol->seq.items[i]));
      continue;
    }
    SrVal *arr = sr_array_of(ol->seq.items[i]) ? sr_ref(ol->seq.items[i]) : sr_jnp_asarray(I, ol->seq.items[i], -1);
    int64_t d = ax->i;
    SrVal *x = arr ? sr_lax_expand_dims(I, arr, &d, 1) : NULL;
    sr_unref(arr);
    if (!x) {
      sr_unref(nl);
      nl = NULL;
      break;
    }
    sr_seq_push(NULL, nl, x);
  }
  if (nl) res = sr_pytree_unflatten(out, nl);
  sr_unref(nl);
  sr_unref(ol);
  sr_unref(out);
done:
  sr_unref(l);
  return res;
}

/* _axes_to_pspec: P() for None, P(None, ..., name) with the name at ax */
static SrVal *axes_pspec(SrInterp *I, int64_t ax, SrVal *name) {
  SrVal **v = sr_xcalloc((size_t)(ax < 0 ? 0 : ax) + 2, sizeof *v);
  int n = 0;
  if (ax != INT64_MIN) {
    for (int64_t i = 0; i < ax; i++) v[n++] = sr_none();
    v[n++] = sr_ref(name);
  }
  SrVal *r = call_builtin(I, "jax.sharding.PartitionSpec", n, v, 0, NULL, NULL);
  for (int i = 0; i < n; i++) sr_unref(v[i]);
  free(v);
  return r;
}

static int count_leaves_of(SrInterp *I, SrVal *v) {
  SrVal *l = sr_pytree_flatten(I, v);
  int n = l ? l->seq.n : 0;
  sr_unref(l);
  return n;
}

static SrVal *pmap_call_with(SrInterp *I, const Pmap *p, SrArgs *a) {
  SrVal *args = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  /* keyword arguments: one more argument, a dict mapped along axis 0 */
  SrVal *kwd = NULL;
  if (a->nkw) {
    kwd = sr_dict(NULL);
    for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, kwd, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
    sr_seq_push(NULL, args, kwd);
  }
  int nargs = a->n + (kwd != NULL);
  SrVal *zero = sr_int(NULL, 0);
  SrVal *leaves = sr_pytree_flatten(I, args), *result = NULL;
  SrVal *specs = NULL, *mesh = NULL, *sm = NULL, *jf = NULL, *body = NULL, *ospec = NULL;
  PmapBody *pb = NULL;
  if (!leaves) goto done;
  int nl = leaves->seq.n;
  if (p->in_axes->kind == SR_V_TUPLE && p->in_axes->seq.n != a->n) {
    sr_raise(I, "ValueError", "pmap in_axes specification must be a tree prefix of the corresponding value");
    goto done;
  }
  pb = sr_xcalloc(1, sizeof *pb);
  pb->ax = sr_xcalloc((size_t)nl + 1, sizeof *pb->ax);
  pb->nl = nl;
  int64_t size = -1;
  pb->kwargs = kwd != NULL;
  for (int i = 0, k = 0; i < nargs; i++) {
    SrVal *s = i == a->n ? zero : p->in_axes->kind == SR_V_TUPLE ? p->in_axes->seq.items[i] : p->in_axes;
    if (!(s->kind == SR_V_NONE || s->kind == SR_V_INT)) {
      sr_raise(I, "NotImplementedError", "pmap in_axes other than ints and None per argument");
      goto done;
    }
    SrVal *l = sr_pytree_flatten(I, args->seq.items[i]);
    if (!l) goto done;
    for (int q = 0; q < l->seq.n; q++, k++) {
      if (s->kind == SR_V_NONE) {
        pb->ax[k] = INT64_MIN;
        continue;
      }
      const SrType *t = sr_value_type(I, leaves->seq.items[k]);
      int nd = t ? t->ndim : 0;
      int64_t ax = s->i < 0 ? s->i + nd : s->i;
      if (ax < 0 || ax >= nd) {
        sr_unref(l);
        sr_raise(I, "ValueError",
                 "pmap was requested to map its argument along axis %lld, which implies that its rank should be at "
                 "least %llu, but is only %d",
                 (long long)s->i,
                 s->i >= 0 ? (unsigned long long)s->i + 1 : 0ULL - (unsigned long long)s->i, nd);
        goto done;
      }
      pb->ax[k] = ax;
      int64_t n = t->dims[ax].size;
      if (size >= 0 && n != size) {
        sr_unref(l);
        sr_raise(I, "ValueError", "pmap got inconsistent sizes for array axes to be mapped: %lld and %lld",
                 (long long)size, (long long)n);
        goto done;
      }
      size = n;
    }
    sr_unref(l);
  }
  if (p->axis_size >= 0 && size >= 0 && p->axis_size != size) {
    sr_raise(I, "ValueError", "Specified axis_size %lld doesn't match received axis_size %lld.",
             (long long)p->axis_size, (long long)size);
    goto done;
  }
  if (size < 0) size = p->axis_size;
  if (size < 0) {
    sr_raise(I, "ValueError", "pmap requires at least one argument with a mapped axis.");
    goto done;
  }
  /* the mesh: the first `size` devices, one axis (_get_mesh_devices'
     mesh_devices[:global_axis_size]: fewer when there are fewer, and
     then a slice is bigger than one and its squeeze fails, as in JAX) */
  SrVal *devs = p->devices ? sr_ref(p->devices) : call_builtin(I, "jax.devices", 0, NULL, 0, NULL, NULL);
  if (!devs) goto done;
  if (!sr_is_seq(devs) || devs->seq.n == 0) {
    sr_unref(devs);
    sr_raise(I, "ValueError", "pmap: no devices");
    goto done;
  }
  int64_t nd = size < devs->seq.n ? size : devs->seq.n;
  SrVal *dl = sr_seq(NULL, SR_V_LIST, (int)nd);
  for (int64_t i = 0; i < nd; i++) sr_seq_push(NULL, dl, sr_ref(devs->seq.items[i]));
  sr_unref(devs);
  SrVal *names = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, names, sr_ref(p->axis_name));
  SrVal *mv[2] = {dl, names};
  mesh = call_builtin(I, "jax.sharding.Mesh", 2, mv, 0, NULL, NULL);
  sr_unref(dl);
  sr_unref(names);
  if (!mesh) goto done;
  specs = sr_tuple(NULL, 0, NULL);
  for (int i = 0; i < nl; i++) {
    SrVal *sp = axes_pspec(I, pb->ax[i], p->axis_name);
    if (!sp) goto done;
    sr_seq_push(NULL, specs, sp);
  }
  ospec = axes_pspec(I, p->out_axes->kind == SR_V_NONE ? INT64_MIN : p->out_axes->i, p->axis_name);
  if (!ospec) goto done;
  pb->fun = sr_ref(p->fun);
  pb->in_tree = sr_ref(args);
  pb->out_axes = sr_ref(p->out_axes);
  body = sr_builtin_with("_fun", pmap_body, pb, pmap_body_free);
  pb = NULL;
  const char *kw[4] = {sr_intern_cstr("mesh"), sr_intern_cstr("in_specs"), sr_intern_cstr("out_specs"),
                       sr_intern_cstr("check_vma")};
  SrVal *kwv[4] = {mesh, specs, ospec, sr_bool(0)};
  sm = call_builtin(I, "jax.shard_map", 1, &body, 4, kw, kwv);
  if (!sm) goto done;
  {
    /* donate_argnums: the donated arguments' leaves, donated to the jit */
    SrVal *don = sr_tuple(NULL, 0, NULL);
    for (int i = 0, k = 0; i < nargs; i++) {
      int nleaf = count_leaves_of(I, args->seq.items[i]);
      for (int q = 0; q < nleaf; q++, k++)
        if (i < a->n && i < p->ndonate && p->donate[i]) sr_seq_push(NULL, don, sr_int(NULL, k));
    }
    const char *dk = sr_intern_cstr("donate_argnums");
    jf = call_builtin(I, "jax.jit", 1, &sm, don->seq.n ? 1 : 0, &dk, &don);
    sr_unref(don);
  }
  if (!jf) goto done;
  SrArgs ca = {nl, leaves->seq.items, 0, NULL, NULL, NULL};
  result = sr_call(I, jf, &ca);
done:
  sr_unref(zero);
  if (pb) pmap_body_free(pb);
  sr_unref(jf);
  sr_unref(sm);
  sr_unref(body);
  sr_unref(ospec);
  sr_unref(specs);
  sr_unref(mesh);
  sr_unref(leaves);
  sr_unref(args);
  return result;
}

/* static_broadcasted_argnums: the function called on the dynamic
   arguments with the static ones put back in their places (pmap.py's
   argnums_partial), broadcast to every device as constants */
typedef struct PStatic {
  SrVal *fun;
  int n;       /* the arguments in all */
  uint8_t *is_static;
  SrVal **vals; /* per position, the static ones' */
} PStatic;

static void pstatic_free(void *d) {
  PStatic *s = d;
  sr_unref(s->fun);
  for (int i = 0; i < s->n; i++) sr_unref(s->vals[i]);
  free(s->vals);
  free(s->is_static);
  free(s);
}

static SrVal *pstatic_call(SrInterp *I, SrArgs *a) {
  PStatic *s = sr_current_builtin(I)->data;
  SrVal **v = sr_xcalloc((size_t)s->n + 1, sizeof *v);
  int k = 0;
  for (int i = 0; i < s->n; i++) v[i] = s->is_static[i] ? s->vals[i] : k < a->n ? a->v[k++] : NULL;
  SrVal *r = NULL;
  if (k == a->n) {
    SrArgs fa = {s->n, v, a->nkw, a->kw, a->kwv, NULL};
    r = sr_call(I, s->fun, &fa);
  } else {
    sr_raise(I, "TypeError", "pmap: the function got %d dynamic arguments, %d expected", a->n, k);
  }
  free(v);
  return r;
}

static SrVal *pmap_call(SrInterp *I, SrArgs *a) {
  Pmap *p = sr_current_builtin(I)->data;
  if (!p->nstatic) return pmap_call_with(I, p, a);
  int mx = 0;
  for (int i = 0; i < p->nstatic; i++) mx = p->statics[i] > mx ? p->statics[i] : mx;
  if (mx >= a->n) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < p->nstatic; i++) sr_buf_printf(&b, "%s%d", i ? ", " : "", p->statics[i]);
    sr_buf_puts(&b, p->nstatic == 1 ? ",)" : ")");
    sr_raise(I, "ValueError",
             "pmapped function has static_broadcasted_argnums=%s but was called with only %d positional argument%s. "
             "All static broadcasted arguments must be passed positionally.",
             sr_buf_str(&b), a->n, a->n > 1 ? "s" : "");
    sr_buf_free(&b);
    return NULL;
  }
  PStatic *ps = sr_xcalloc(1, sizeof *ps);
  ps->fun = sr_ref(p->fun);
  ps->n = a->n;
  ps->is_static = sr_xcalloc((size_t)a->n + 1, 1);
  ps->vals = sr_xcalloc((size_t)a->n + 1, sizeof *ps->vals);
  for (int i = 0; i < p->nstatic; i++) ps->is_static[p->statics[i]] = 1;
  SrVal **dyn = sr_xcalloc((size_t)a->n + 1, sizeof *dyn);
  SrVal *ia = p->in_axes->kind == SR_V_TUPLE ? sr_tuple(NULL, 0, NULL) : sr_ref(p->in_axes);
  int nd = 0;
  for (int i = 0; i < a->n; i++) {
    if (ps->is_static[i]) {
      ps->vals[i] = sr_ref(a->v[i]);
      continue;
    }
    dyn[nd++] = a->v[i];
    if (p->in_axes->kind == SR_V_TUPLE && i < p->in_axes->seq.n) sr_seq_push(NULL, ia, sr_ref(p->in_axes->seq.items[i]));
  }
  Pmap q = *p;
  /* the donated positions among the dynamic arguments */
  uint8_t *dn = sr_xcalloc((size_t)a->n + 1, 1);
  for (int i = 0, k = 0; i < a->n; i++)
    if (!ps->is_static[i]) dn[k++] = i < p->ndonate && p->donate[i];
  q.donate = dn;
  q.ndonate = nd;
  q.fun = sr_builtin_with(sr_callable_name(p->fun), pstatic_call, ps, pstatic_free);
  q.in_axes = ia;
  q.nstatic = 0;
  SrArgs da = {nd, dyn, a->nkw, a->kw, a->kwv, NULL};
  SrVal *r = pmap_call_with(I, &q, &da);
  free(dn);
  sr_unref(q.fun);
  sr_unref(ia);
  free(dyn);
  return r;
}

/* jax.pmap(fun, axis_name=None, *, in_axes=0, out_axes=0,
   static_broadcasted_argnums=(), devices=None, backend=None,
   axis_size=None, donate_argnums=()) */
static SrVal *jax_pmap(SrInterp *I, SrArgs *a) {
  SrVal *p[9];
  if (sr_args_parse(I, a, "pmap",
                    "fun, axis_name=, *, in_axes=, out_axes=, static_broadcasted_argnums=, devices=, backend=, "
                    "axis_size=, donate_argnums=",
                    p) < 0)
    return NULL;
  if (!sr_is_callable(I, p[0])) return not_callable(I, p[0]);
  /* pmap._prepare_pmap: every leaf of in_axes and out_axes an int (a bool
     is not) */
  for (int k = 2; k <= 3; k++) {
    if (!p[k]) continue;
    SrVal *l = sr_pytree_flatten_any(I, p[k]);
    if (!l) return NULL;
    int ok = 1;
    for (int i = 0; i < l->seq.n && ok; i++) ok = l->seq.items[i]->kind == SR_V_INT;
    sr_unref(l);
    if (!ok) {
      SrBuf b = SR_BUF_INIT;
      sr_to_str(I, &b, p[k]);
      sr_raise(I, "TypeError",
               "pmap %s must be an int, None, or (nested) container with those types as leaves, but got %s.",
               k == 2 ? "in_axes" : "out_axes", sr_buf_str(&b));
      sr_buf_free(&b);
      return NULL;
    }
  }
  /* static_broadcasted_argnums: an int or a sequence of them
     (_ensure_index_tuple) */
  int nstatic = 0, *statics = NULL;
  if (p[4] && p[4]->kind != SR_V_NONE) {
    int one = p[4]->kind == SR_V_INT;
    if (!one && !sr_is_seq(p[4]))
      return sr_raise(I, "TypeError", "static_broadcasted_argnums must be an int or a tuple of ints");
    int n = one ? 1 : p[4]->seq.n;
    statics = sr_xcalloc((size_t)n + 1, sizeof *statics);
    for (int i = 0; i < n; i++) {
      SrVal *x = one ? p[4] : p[4]->seq.items[i];
      if (x->kind != SR_V_INT || x->i < 0) {
        free(statics);
        return sr_raise(I, x->kind == SR_V_INT ? "NotImplementedError" : "TypeError",
                        x->kind == SR_V_INT ? "pmap's negative static_broadcasted_argnums"
                                            : "static_broadcasted_argnums must be an int or a tuple of ints");
      }
      statics[nstatic++] = (int)x->i;
    }
  }
  SrVal *oa = p[3] ? p[3] : NULL;
  if (oa && !(oa->kind == SR_V_NONE || oa->kind == SR_V_INT)) {
    free(statics);
    return sr_raise(I, "NotImplementedError", "pmap out_axes other than an int or None");
  }
  SrVal *ia = p[2] ? p[2] : NULL;
  Pmap *pm = sr_xcalloc(1, sizeof *pm);
  pm->fun = sr_ref(p[0]);
  pm->statics = statics;
  pm->nstatic = nstatic;
  /* donate_argnums: an int or a sequence of them */
  if (p[8] && p[8]->kind != SR_V_NONE) {
    int one = p[8]->kind == SR_V_INT, n = one ? 1 : sr_is_seq(p[8]) ? p[8]->seq.n : -1;
    for (int i = 0; i < n; i++) {
      SrVal *x = one ? p[8] : p[8]->seq.items[i];
      if (x->kind != SR_V_INT || x->i < 0 || x->i > 1 << 20) {
        n = -1;
        break;
      }
      if (x->i >= pm->ndonate) {
        pm->donate = sr_xrealloc(pm->donate, (size_t)x->i + 2);
        memset(pm->donate + pm->ndonate, 0, (size_t)(x->i + 2 - pm->ndonate));
        pm->ndonate = (int)x->i + 1;
      }
      pm->donate[x->i] = 1;
    }
    if (n < 0) {
      pmap_free(pm);
      return sr_raise(I, "TypeError", "donate_argnums must be an int or a tuple of non-negative ints");
    }
  }
  if (ia && ia->kind == SR_V_LIST) {
    pm->in_axes = sr_tuple(NULL, 0, NULL);
    for (int i = 0; i < ia->seq.n; i++) sr_seq_push(NULL, pm->in_axes, sr_ref(ia->seq.items[i]));
  } else {
    pm->in_axes = ia ? sr_ref(ia) : sr_int(NULL, 0);
  }
  pm->out_axes = oa ? sr_ref(oa) : sr_int(NULL, 0);
  pm->devices = p[5] && p[5]->kind != SR_V_NONE ? sr_ref(p[5]) : NULL;
  pm->axis_size = -1;
  if (p[7] && p[7]->kind != SR_V_NONE && sr_as_int(I, p[7], "axis_size", &pm->axis_size) < 0) {
    pmap_free(pm);
    return NULL;
  }
  /* pmap._prepare_pmap: an unnamed axis is "_internal_pmap_axis_name" */
  pm->axis_name = p[1] && p[1]->kind == SR_V_STR ? sr_ref(p[1]) : sr_str_cstr(NULL, "_internal_pmap_axis_name");
  if (p[1] && p[1]->kind != SR_V_STR && p[1]->kind != SR_V_NONE) {
    pmap_free(pm);
    return sr_raise(I, "TypeError", "pmap axis_name must be a str, got %s", sr_val_kind_name(p[1]));
  }
  return sr_builtin_with(sr_callable_name(p[0]), pmap_call, pm, pmap_free);
}

void sr_vmap_built_init(void) {
  sr_def("jax.pmap", jax_pmap,
         "pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None, "
         "axis_size=None, donate_argnums=()): fun over the devices, "
         "one slice each (a jit of a shard_map over a one-axis mesh)");
  sr_def("jax.eval_shape", jax_eval_shape,
         "eval_shape(fun, *args, **kwargs): fun's outputs as ShapeDtypeStructs, computing nothing");
  sr_def("jax.lax.map", lax_map,
         "map(f, xs, *, batch_size=None): f over the leading axis of xs (a scan; batches of vmap(f))");
}
