/* vmap_built.c: what JAX builds on tracing and vmap besides the
 * Jacobians (jacobian.c): jax.lax.map (loops.py's map: a scan of f, or
 * with batch_size a scan of vmap(f) over batches and vmap(f) of the
 * remainder) and jax.eval_shape (api.py: the outputs' shapes and dtypes,
 * as ShapeDtypeStructs, from a trace that runs nothing).
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

static SrVal *jax_eval_shape(SrInterp *I, SrArgs *a) {
  if (a->n < 1) return sr_raise(I, "TypeError", "eval_shape() missing 1 required positional argument: 'fun'");
  SrVal *fun = a->v[0];
  if (!sr_is_callable(fun)) return not_callable(I, fun);
  SrVal *tree = NULL, *captured = NULL;
  SrJaxpr *j = sr_trace_fn(I, fun, a->n - 1, a->v + 1, a->nkw, a->kw, a->kwv, 0, NULL, &tree, &captured);
  if (!j) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)j->nout);
  for (uint32_t i = 0; i < j->nout; i++) sr_seq_push(NULL, l, sr_array_abstract(sr_atom_type(j->outvars[i])));
  SrVal *r = sr_pytree_unflatten(tree, l);
  sr_unref(l);
  sr_unref(tree);
  sr_unref(captured);
  sr_program_unref(j->prog);
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

void sr_vmap_built_init(void) {
  sr_def("jax.eval_shape", jax_eval_shape,
         "eval_shape(fun, *args, **kwargs): fun's outputs as ShapeDtypeStructs, computing nothing");
  sr_def("jax.lax.map", lax_map,
         "map(f, xs, *, batch_size=None): f over the leading axis of xs (a scan; batches of vmap(f))");
}
