/* experimental.c: the older sharding API that existing code still uses,
 * as JAX keeps it (jax/experimental/shard_map.py, jax/experimental/pjit.py,
 * jax/_src/mesh_utils.py):
 *
 *   jax.experimental.shard_map.shard_map(f, mesh, in_specs, out_specs,
 *       check_rep=True)
 *     jshmap._shard_map(f, mesh=mesh, in_specs=in_specs,
 *       out_specs=out_specs, axis_names=set(), check_vma=check_rep)
 *   jax.experimental.pjit.pjit(fun, in_shardings, out_shardings, ...)
 *     jit with the same options
 *   jax.experimental.mesh_utils.create_device_mesh(mesh_shape,
 *       devices=None, *, contiguous_submeshes=False,
 *       allow_split_physical_axes=False)
 *     on CPU np.asarray(devices).reshape(mesh_shape), after its checks
 *   jax.experimental.mesh_utils.create_hybrid_device_mesh(mesh_shape,
 *       dcn_mesh_shape, devices=None, *, process_is_granule=False,
 *       should_sort_granules_by_key=True, allow_split_physical_axes=False)
 *     a create_device_mesh per granule, np.block'ed in dcn_mesh_shape
 *   jax.experimental.shard_alike.shard_alike(x, y)
 *     a shard_alike equation per pair of leaves (shard_alike.py), after
 *     its checks that the trees and the leaves' shapes match
 *   jax.experimental.multihost_utils.process_allgather(in_tree,
 *       tiled=False), broadcast_one_to_all(in_tree, is_source=None)
 *     on one process each leaf as a numpy array (np.expand_dims(x, 0)
 *     for an untiled allgather)
 */
#include <stdlib.h>
#include <string.h>

#include "jax/api.h"
#include "jax/jax.h"
#include "jax/tree_util.h"

#include "core/trace.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* fn(*pos, **{keys[i]: vals[i]}) with the NULL values left out; borrowed
   arguments, a new reference or NULL. */
static SrVal *call_kw(SrInterp *I, const char *qualname, int npos, SrVal **pos, int nkw, const char *const *keys,
                      SrVal **vals) {
  SrVal *fn = sr_lookup_qualname(qualname);
  if (!fn) return sr_raise(I, "AttributeError", "module has no attribute '%s'", qualname);
  const char *kw[16];
  SrVal *kwv[16];
  int m = 0;
  for (int i = 0; i < nkw && m < 16; i++)
    if (vals[i]) {
      kw[m] = sr_intern_cstr(keys[i]);
      kwv[m++] = vals[i];
    }
  SrArgs a = {npos, pos, m, kw, kwv, NULL};
  return sr_call(I, fn, &a);
}

static SrVal *bi_shard_map(SrInterp *I, SrArgs *args) {
  SrVal *p[5];
  if (sr_args_parse(I, args, "shard_map", "f, mesh, in_specs, out_specs, check_rep=", p) < 0) return NULL;
  static const char *const keys[] = {"mesh", "in_specs", "out_specs", "check_vma"};
  SrVal *vals[] = {p[1], p[2], p[3], p[4] ? p[4] : sr_bool(1)};
  return call_kw(I, "jax.shard_map", 1, p, 4, keys, vals);
}

static SrVal *bi_pjit(SrInterp *I, SrArgs *args) {
  SrVal *p[12];
  static const char *const keys[] = {"in_shardings",  "out_shardings",   "static_argnums", "static_argnames",
                                     "donate_argnums", "donate_argnames", "keep_unused",    "device",
                                     "backend",        "inline",          "compiler_options"};
  if (sr_args_parse(I, args, "pjit",
                    "fun, in_shardings=, out_shardings=, static_argnums=, static_argnames=, donate_argnums=, "
                    "donate_argnames=, keep_unused=, device=, backend=, inline=, compiler_options=",
                    p) < 0)
    return NULL;
  SrVal *j = call_kw(I, "jax.jit", 1, p, 11, keys, p + 1);
  if (j) sr_jit_use_resource_env(j, p[1], p[2]);
  sr_jit_mark_pjit(j);
  return j;
}

/* mesh_utils._canonicalize_axis_sizes: a tuple of ints, or NULL */
static SrVal *axis_sizes(SrInterp *I, SrVal *v) {
  if (v->kind != SR_V_TUPLE && v->kind != SR_V_LIST) return NULL;
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, v->seq.n);
  for (int i = 0; i < v->seq.n; i++) {
    int64_t n;
    SrVal *x = v->seq.items[i];
    if (x->kind != SR_V_INT || sr_as_int(I, x, "mesh_shape", &n) < 0) {
      sr_exc_clear(I);
      sr_unref(t);
      return NULL;
    }
    sr_seq_push(NULL, t, sr_int(NULL, n));
  }
  return t;
}

static SrVal *bi_create_device_mesh(SrInterp *I, SrArgs *args) {
  SrVal *p[4];
  if (sr_args_parse(I, args, "create_device_mesh", "mesh_shape, devices=, *, contiguous_submeshes=, allow_split_physical_axes=",
                    p) < 0)
    return NULL;
  SrVal *devices = p[1] && p[1]->kind != SR_V_NONE ? sr_ref(p[1]) : call_kw(I, "jax.devices", 0, NULL, 0, NULL, NULL);
  if (!devices) return NULL;
  SrVal *shape = axis_sizes(I, p[0]), *r = NULL;
  if (!shape) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, p[0]);
    sr_raise(I, "ValueError", "`mesh_shape` passed to `create_device_mesh` should be a sequence of ints. Got %s",
             sr_buf_str(&b));
    sr_buf_free(&b);
    goto out;
  }
  /* math.prod(mesh_shape); one past int64 cannot be the device count */
  int64_t prod = 1;
  int huge = 0;
  for (int i = 0; i < shape->seq.n; i++) huge |= __builtin_mul_overflow(prod, shape->seq.items[i]->i, &prod);
  if (devices->kind != SR_V_LIST && devices->kind != SR_V_TUPLE) {
    sr_raise(I, "TypeError", "create_device_mesh: devices must be a sequence of devices, got %s", sr_val_kind_name(devices));
    goto out;
  }
  int64_t nd = devices->seq.n;
  if (huge || prod != nd) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, shape);
    sr_raise(I, "ValueError", "Number of devices %lld must equal the product of mesh_shape %s", (long long)nd, sr_buf_str(&b));
    sr_buf_free(&b);
    goto out;
  }
  SrVal *arr = call_kw(I, sr_lookup_qualname("numpy.asarray") ? "numpy.asarray" : "jax.numpy.asarray", 1, &devices, 0,
                       NULL, NULL);
  if (arr) {
    SrVal *reshape = sr_getattr(I, arr, "reshape");
    if (reshape) r = sr_call1(I, reshape, shape);
    sr_unref(reshape);
    sr_unref(arr);
  }
out:
  sr_unref(shape);
  sr_unref(devices);
  return r;
}

/* mesh_utils.create_hybrid_device_mesh: the devices grouped into granules
   by process_index or slice_index (the keys sorted, else in the order
   first seen), a create_device_mesh of mesh_shape for each, laid out as
   np.block lays the granules' meshes in dcn_mesh_shape */
static SrVal *bi_create_hybrid_device_mesh(SrInterp *I, SrArgs *args) {
  SrVal *p[6];
  if (sr_args_parse(I, args, "create_hybrid_device_mesh",
                    "mesh_shape, dcn_mesh_shape, devices=, *, process_is_granule=, should_sort_granules_by_key=, "
                    "allow_split_physical_axes=",
                    p) < 0)
    return NULL;
  int by_process = p[3] && sr_truthy(I, p[3]) > 0, sort = !p[4] || sr_truthy(I, p[4]) > 0;
  const char *attr = by_process ? "process_index" : "slice_index";
  SrVal *devices = p[2] && p[2]->kind != SR_V_NONE ? sr_ref(p[2]) : call_kw(I, "jax.devices", 0, NULL, 0, NULL, NULL);
  if (!devices) return NULL;
  SrVal *mshape = NULL, *dshape = NULL, *flat = NULL, *r = NULL, **meshes = NULL;
  int64_t *keys = NULL, *gkey = NULL;
  int nd = 0, ng = 0;
  if (devices->kind != SR_V_LIST && devices->kind != SR_V_TUPLE) {
    sr_raise(I, "TypeError", "create_hybrid_device_mesh: devices must be a sequence of devices, got %s",
             sr_val_kind_name(devices));
    goto out;
  }
  nd = devices->seq.n;
  keys = sr_xcalloc((size_t)nd + 1, sizeof *keys);
  gkey = sr_xcalloc((size_t)nd + 1, sizeof *gkey);
  for (int i = 0; i < nd; i++) {
    SrVal *k = sr_getattr(I, devices->seq.items[i], attr);
    if (!k) {
      if (i == 0) {
        sr_exc_clear(I);
        SrBuf b = SR_BUF_INIT;
        sr_val_str(&b, devices->seq.items[0]);
        sr_raise(I, "ValueError", "Device %s does not have attribute %s. See `process_is_granule` option.",
                 sr_buf_str(&b), attr);
        sr_buf_free(&b);
      }
      goto out;
    }
    int rc = sr_as_int(I, k, attr, &keys[i]);
    sr_unref(k);
    if (rc < 0) goto out;
    int g = 0;
    while (g < ng && gkey[g] != keys[i]) g++;
    if (g == ng) gkey[ng++] = keys[i];
  }
  if (sort)
    for (int a = 1; a < ng; a++)
      for (int b = a; b > 0 && gkey[b - 1] > gkey[b]; b--) {
        int64_t t = gkey[b];
        gkey[b] = gkey[b - 1];
        gkey[b - 1] = t;
      }
  mshape = axis_sizes(I, p[0]);
  dshape = axis_sizes(I, p[1]);
  if (!mshape || !dshape) {
    sr_raise(I, "TypeError", "create_hybrid_device_mesh: mesh_shape and dcn_mesh_shape must be sequences of ints");
    goto out;
  }
  int64_t prod = 1;
  for (int i = 0; i < dshape->seq.n; i++) prod *= dshape->seq.items[i]->i;
  if (prod != ng) {
    SrBuf b = SR_BUF_INIT;
    sr_val_str(&b, p[1]);
    sr_raise(I, "ValueError", "Number of slices %d must equal the product of dcn_mesh_shape %s", ng, sr_buf_str(&b));
    sr_buf_free(&b);
    goto out;
  }
  /* each granule's mesh, as a flat list in row-major order */
  meshes = sr_xcalloc((size_t)ng + 1, sizeof *meshes);
  for (int g = 0; g < ng; g++) {
    SrVal *gd = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = 0; i < nd; i++)
      if (keys[i] == gkey[g]) sr_seq_push(NULL, gd, sr_ref(devices->seq.items[i]));
    SrVal *av[2] = {p[0], gd};
    SrVal *m = call_kw(I, "jax.experimental.mesh_utils.create_device_mesh", 2, av, 0, NULL, NULL);
    sr_unref(gd);
    if (!m) goto out;
    SrVal *tl = sr_getattr(I, m, "flat"), *lst = tl ? sr_getattr(I, tl, "tolist") : NULL;
    meshes[g] = lst ? sr_call(I, lst, &(SrArgs){0, NULL, 0, NULL, NULL, NULL}) : NULL;
    sr_unref(lst);
    sr_unref(tl);
    sr_unref(m);
    if (!meshes[g]) goto out;
  }
  /* np.block: both shapes padded with leading 1s to one rank, the blocks
     tiling it */
  int nm = mshape->seq.n, ndc = dshape->seq.n, rank = nm > ndc ? nm : ndc;
  if (rank > SR_MAX_RANK) {
    sr_raise(I, "ValueError", "create_hybrid_device_mesh: rank %d is more than %d", rank, SR_MAX_RANK);
    goto out;
  }
  int64_t ms[SR_MAX_RANK], ds[SR_MAX_RANK], total = 1;
  SrVal *shape = sr_seq(NULL, SR_V_TUPLE, rank);
  for (int i = 0; i < rank; i++) {
    ms[i] = i < rank - nm ? 1 : mshape->seq.items[i - (rank - nm)]->i;
    ds[i] = i < rank - ndc ? 1 : dshape->seq.items[i - (rank - ndc)]->i;
    sr_seq_push(NULL, shape, sr_int(NULL, ms[i] * ds[i]));
    total *= ms[i] * ds[i];
  }
  flat = sr_seq(NULL, SR_V_LIST, (int)total);
  for (int64_t o = 0; o < total; o++) {
    int64_t rest = o, g = 0, l = 0, gm = 1, lm = 1;
    for (int i = rank - 1; i >= 0; i--) {
      int64_t n = ms[i] * ds[i], oi = rest % n;
      rest /= n;
      g += oi / ms[i] * gm;
      l += oi % ms[i] * lm;
      gm *= ds[i];
      lm *= ms[i];
    }
    sr_seq_push(NULL, flat, sr_ref(meshes[g]->seq.items[l]));
  }
  SrVal *arr = call_kw(I, "numpy.asarray", 1, &flat, 0, NULL, NULL);
  if (arr) {
    SrVal *reshape = sr_getattr(I, arr, "reshape");
    if (reshape) r = sr_call1(I, reshape, shape);
    sr_unref(reshape);
    sr_unref(arr);
  }
  sr_unref(shape);
out:
  for (int g = 0; meshes && g < ng; g++) sr_unref(meshes[g]);
  free(meshes);
  free(keys);
  free(gkey);
  sr_unref(flat);
  sr_unref(mshape);
  sr_unref(dshape);
  sr_unref(devices);
  return r;
}

/* shard_alike.shard_alike(x, y) */
static SrVal *bi_shard_alike(SrInterp *I, SrArgs *args) {
  SrVal *p[2];
  if (sr_args_parse(I, args, "shard_alike", "x, y", p) < 0) return NULL;
  SrTreeDiffs d = {0};
  sr_pytree_equality_errors(I, p[0], p[1], "pytree leaf", &d);
  int differ = d.n > 0;
  sr_tree_diffs_free(&d);
  if (I->exc) return NULL;
  if (differ) {
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
    sr_treedef_str(&a, p[0], sr_pytree_children);
    sr_treedef_str(&b, p[1], sr_pytree_children);
    sr_raise(I, "ValueError", "Trees should be equal. Got x_tree: %s, y_tree: %s", sr_buf_str(&a), sr_buf_str(&b));
    sr_buf_free(&a);
    sr_buf_free(&b);
    return NULL;
  }
  SrVal *xs = sr_pytree_flatten(I, p[0]), *ys = xs ? sr_pytree_flatten(I, p[1]) : NULL;
  SrVal *xo = NULL, *yo = NULL, *r = NULL;
  if (!ys) goto out;
  SrVal *shape = sr_lookup_qualname("jax.numpy.shape");
  for (int i = 0; i < xs->seq.n; i++) {
    SrVal *xsh = sr_call1(I, shape, xs->seq.items[i]), *ysh = xsh ? sr_call1(I, shape, ys->seq.items[i]) : NULL;
    if (!ysh) {
      sr_unref(xsh);
      goto out;
    }
    SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
    sr_val_str(&a, xsh);
    sr_val_str(&b, ysh);
    sr_unref(xsh);
    sr_unref(ysh);
    if (strcmp(sr_buf_str(&a), sr_buf_str(&b)) != 0)
      sr_raise(I, "ValueError",
               "The leaves shapes of `x` and `y` should match. Got `x` leaf shape: %s and `y` leaf shape: %s. File an "
               "issue at https://github.com/jax-ml/jax/issues if you want this feature.",
               sr_buf_str(&a), sr_buf_str(&b));
    sr_buf_free(&a);
    sr_buf_free(&b);
    if (I->exc) goto out;
  }
  xo = sr_seq(NULL, SR_V_LIST, xs->seq.n);
  yo = sr_seq(NULL, SR_V_LIST, xs->seq.n);
  for (int i = 0; i < xs->seq.n; i++) {
    SrVal *in[2] = {xs->seq.items[i], ys->seq.items[i]};
    SrVal *o = sr_bind(I, SR_P_shard_alike, 2, in, 0, NULL);
    if (!o) goto out;
    sr_seq_push(NULL, xo, sr_ref(o->seq.items[0]));
    sr_seq_push(NULL, yo, sr_ref(o->seq.items[1]));
    sr_unref(o);
  }
  r = sr_seq(NULL, SR_V_TUPLE, 2);
  sr_seq_push(NULL, r, sr_pytree_unflatten(p[0], xo));
  sr_seq_push(NULL, r, sr_pytree_unflatten(p[1], yo));
out:
  sr_unref(xo);
  sr_unref(yo);
  sr_unref(xs);
  sr_unref(ys);
  return r;
}

/* multihost_utils on one process (jax.process_count() == 1): every leaf
   np.asarray'd, an untiled allgather's stacked on a new axis 0 */
static SrVal *one_process_leaf(SrInterp *I, SrVal *x, int expand) {
  SrVal *np_asarray = sr_lookup_qualname("numpy.asarray");
  SrVal *r = np_asarray ? sr_call1(I, np_asarray, x) : sr_raise(I, "RuntimeError", "numpy.asarray is missing");
  if (!r || !expand) return r;
  SrVal *zero = sr_int(NULL, 0), *argv[2] = {r, zero};
  SrVal *ed = sr_lookup_qualname("numpy.expand_dims");
  SrArgs ea = {2, argv, 0, NULL, NULL, NULL};
  SrVal *e = ed ? sr_call(I, ed, &ea) : sr_raise(I, "RuntimeError", "numpy.expand_dims is missing");
  sr_unref(r);
  sr_unref(zero);
  return e;
}

static SrVal *one_process_tree(SrInterp *I, SrVal *tree, int expand, const char *what) {
  SrVal *pc = sr_lookup_qualname("jax.process_count");
  SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
  SrVal *n = pc ? sr_call(I, pc, &none) : NULL;
  int many = n && n->kind == SR_V_INT && n->i > 1;
  sr_unref(n);
  if (many) return sr_raise(I, "NotImplementedError", "multihost_utils.%s across processes", what);
  SrVal *ch = tree->kind != SR_V_NONE ? sr_pytree_children(tree) : NULL;
  if (!ch) return one_process_leaf(I, tree, expand);
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *r = one_process_tree(I, ch->seq.items[i], expand, what);
    if (!r) {
      sr_unref(ch);
      return NULL;
    }
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = r;
  }
  SrVal *r = sr_pytree_rebuild(tree, ch);
  sr_unref(ch);
  return r;
}

static SrVal *bi_process_allgather(SrInterp *I, SrArgs *args) {
  SrVal *p[2];
  if (sr_args_parse(I, args, "process_allgather", "in_tree, tiled=", p) < 0) return NULL;
  int tiled = p[1] && sr_truthy(I, p[1]) > 0;
  return one_process_tree(I, p[0], !tiled, "process_allgather");
}

static SrVal *bi_broadcast_one_to_all(SrInterp *I, SrArgs *args) {
  SrVal *p[2];
  if (sr_args_parse(I, args, "broadcast_one_to_all", "in_tree, is_source=", p) < 0) return NULL;
  return one_process_tree(I, p[0], 0, "broadcast_one_to_all");
}

void sr_experimental_init(void) {
  sr_def("jax.experimental.multihost_utils.process_allgather", bi_process_allgather,
         "process_allgather(in_tree, tiled=False): on one process, each leaf as a numpy array (stacked on a new axis 0 unless tiled)");
  sr_def("jax.experimental.multihost_utils.broadcast_one_to_all", bi_broadcast_one_to_all,
         "broadcast_one_to_all(in_tree, is_source=None): on one process, each leaf as a numpy array");
  sr_def("jax.experimental.shard_map.shard_map", bi_shard_map,
         "shard_map(f, mesh, in_specs, out_specs, check_rep=True): jax.shard_map with check_vma=check_rep (deprecated in JAX)");
  sr_def("jax.experimental.pjit.pjit", bi_pjit,
         "pjit(fun, in_shardings=, out_shardings=, ...): jax.jit with the same options (deprecated in JAX)");
  sr_def("jax.experimental.mesh_utils.create_hybrid_device_mesh", bi_create_hybrid_device_mesh,
         "create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *, process_is_granule=False): the granules' "
         "device meshes laid out in dcn_mesh_shape");
  sr_def("jax.experimental.shard_alike.shard_alike", bi_shard_alike,
         "shard_alike(x, y): x and y (pytrees of one structure and shapes) sharded alike, as one sharding group");
  sr_def("jax.experimental.mesh_utils.create_device_mesh", bi_create_device_mesh,
         "create_device_mesh(mesh_shape, devices=None): the devices as an array of shape mesh_shape, for jax.sharding.Mesh");
}
