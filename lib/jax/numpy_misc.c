/* numpy_misc.c: small helpers -- jax.numpy.tri, tril, triu, identity,
 * array_equal, outer (numpy/lax_numpy.py, array_creation.py; lax._tri),
 * binding what JAX's bind, in the jits JAX's jit-decorated functions are.
 * Registered by sr_jnp_misc_init (jax.h). */
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "jax/array_methods.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "util/intern.h"

static const SrType *vtype(SrInterp *I, SrVal *v) { return sr_value_type(I, v); }
static SrVal *arr(SrInterp *I, SrVal *v) { return sr_jnp_asarray(I, v, -1); }
static int given(SrVal *v) { return v && v->kind != SR_V_NONE; }

/* lax._tri: ge(iota(0) + offset, iota(1)) converted to dtype (always an
   equation: _tri binds convert_element_type_p itself). */
static SrVal *tri_mask_v(SrInterp *I, SrDtype dt, int64_t n, int64_t m, int64_t k, SrVal *karr);

static SrVal *tri_mask(SrInterp *I, SrDtype dt, int64_t n, int64_t m, int64_t k) {
  return tri_mask_v(I, dt, n, m, k, NULL);
}

/* with karr (an array, traced or not) the offset instead of k */
static SrVal *tri_mask_v(SrInterp *I, SrDtype dt, int64_t n, int64_t m, int64_t k, SrVal *karr) {
  int64_t shape[2] = {n, m};
  SrDtype sd = n > INT32_MAX || m > INT32_MAX || k > INT32_MAX || k < INT32_MIN ? SR_I64 : SR_I32;
  SrVal *i0 = sr_lax_iota(I, sd, shape, 2, 0, NULL);
  SrVal *kv = karr ? sr_ref(karr) : sr_int(NULL, k);
  SrVal *kc = i0 ? sr_lax_convert(I, kv, sd, 0, NULL) : NULL;
  SrVal *s = kc ? sr_lax_binary(I, SR_P_add, i0, kc) : NULL;
  SrVal *i1 = s ? sr_lax_iota(I, sd, shape, 2, 1, NULL) : NULL;
  SrVal *g = i1 ? sr_lax_binary(I, SR_P_ge, s, i1) : NULL;
  SrVal *r = g ? sr_bindv(I, SR_P_convert_element_type, 1, &g, "new_dtype", sr_dtype_val(NULL, dt), "weak_type",
                          sr_bool(0), "sharding", sr_none(), NULL)
               : NULL;
  SrVal *tmp[] = {i0, kv, kc, s, i1, g};
  for (int i = 0; i < 6; i++) sr_unref(tmp[i]);
  return r;
}

/* jnp.tri(N, M=None, k=0, dtype=None): float32 by default */
static SrVal *jnp_tri(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "tri", "N, M=, k=, dtype=", p) < 0) return NULL;
  int64_t n, m, k = 0;
  int dt, nd;
  /* N and M make the shape (core's shape error when traced); k may be an
     array, traced too (lax._tri adds it to the iota) */
  SrVal *karr = p[2] && sr_array_of(p[2]) ? p[2] : NULL;
  if (sr_shape_arg(I, p[0], &n, &nd, "N") < 0 || (given(p[1]) && sr_shape_arg(I, p[1], &m, &nd, "M") < 0) ||
      (p[2] && !karr && sr_as_int(I, p[2], "k", &k) < 0) || sr_dtype_arg(I, p[3], &dt, "tri") < 0)
    return NULL;
  if (!given(p[1])) m = n;
  return tri_mask_v(I, dt >= 0 ? (SrDtype)dt : SR_F32, n, m, k, karr);
}

/* the bodies of jit tril / triu (static k): select over the mask
   broadcast to the batch dims */
static SrVal *tril_triu(SrInterp *I, SrArgs *a, int upper) {
  int64_t k = *(int64_t *)sr_current_builtin(I)->data;
  SrVal *x = a->v[0];
  const SrType *t = vtype(I, x);
  if (t->ndim < 2)
    return sr_raise(I, "ValueError", "Argument to jax.numpy.%s must be at least 2D", upper ? "triu" : "tril");
  int64_t n = t->dims[t->ndim - 2].size, m = t->dims[t->ndim - 1].size;
  SrVal *mask = tri_mask(I, SR_BOOL, n, m, upper ? k - 1 : k);
  if (!mask) return NULL;
  /* lax.broadcast(mask, batch dims, out_sharding=typeof(m).sharding):
     a broadcast_in_dim even with no batch dims, the sharding not None */
  int64_t shape[SR_MAX_RANK], dims[2] = {t->ndim - 2, t->ndim - 1};
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  SrVal *sh = NULL;
  if (sr_api_mesh(I)->n) {
    SrVal *ts = sr_type_sharding(I, t);
    int rc = sr_api_canon_sharding(I, ts, "broadcast_in_dim", &sh);
    sr_unref(ts);
    if (rc < 0) return sr_unref(mask), NULL;
  }
  SrVal *which = sr_lax_broadcast_in_dim(I, mask, shape, t->ndim, dims, 2, sh);
  sr_unref(sh);
  sr_unref(mask);
  if (!which) return NULL;
  SrVal *fn = sr_lookup_qualname("jax.numpy.zeros_like");
  SrArgs za = {1, &x, 0, NULL, NULL, NULL};
  SrVal *z = fn ? sr_call(I, fn, &za) : NULL;
  SrVal *r = z ? (upper ? sr_lax_select(I, which, z, x) : sr_lax_select(I, which, x, z)) : NULL;
  sr_unref(z);
  sr_unref(which);
  return r;
}

static SrVal *tril_body(SrInterp *I, SrArgs *a) { return tril_triu(I, a, 0); }
static SrVal *triu_body(SrInterp *I, SrArgs *a) { return tril_triu(I, a, 1); }

static SrVal *tri_api(SrInterp *I, SrArgs *a, int upper) {
  SrVal *p[2];
  if (sr_args_parse(I, a, upper ? "triu" : "tril", "m, k=", p) < 0) return NULL;
  int64_t *k = sr_xcalloc(1, sizeof *k);
  if (p[1] && sr_as_int(I, p[1], "k", k) < 0) {
    free(k);
    return NULL;
  }
  SrVal *x = arr(I, p[0]);
  if (!x) {
    free(k);
    return NULL;
  }
  SrVal *r = sr_api_jit(I, upper ? "triu" : "tril", upper ? triu_body : tril_body, k, 1, &x);
  sr_unref(x);
  return r;
}

static SrVal *jnp_tril(SrInterp *I, SrArgs *a) { return tri_api(I, a, 0); }
static SrVal *jnp_triu(SrInterp *I, SrArgs *a) { return tri_api(I, a, 1); }

/* jnp.identity(n, dtype=None): eye(n, dtype=dtype) */
static SrVal *jnp_identity(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "identity", "n, dtype=", p) < 0) return NULL;
  SrVal *fn = sr_lookup_qualname("jax.numpy.eye");
  if (!fn) return sr_raise(I, "NotImplementedError", "jax.numpy.eye is not available");
  const char *kw[1] = {sr_intern_cstr("dtype")};
  SrVal *kwv[1] = {p[1]};
  SrArgs ea = {1, p, given(p[1]) ? 1 : 0, kw, kwv, NULL};
  return sr_call(I, fn, &ea);
}

/* jnp.array_equal(a1, a2, equal_nan=False): False for other shapes, else
   all(a1 == a2) (or both NaN) */
static SrVal *jnp_array_equal(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "array_equal", "a1, a2, equal_nan=", p) < 0) return NULL;
  SrVal *x = arr(I, p[0]), *y = x ? arr(I, p[1]) : NULL;
  if (!y) {
    sr_unref(x);
    return NULL;
  }
  const SrType *tx = vtype(I, x), *ty = vtype(I, y);
  int same = tx->ndim == ty->ndim;
  for (int i = 0; same && i < tx->ndim; i++) same = tx->dims[i].size == ty->dims[i].size;
  SrVal *r = NULL;
  if (!same) {
    /* array(False, dtype=bool): a concrete array */
    SrVal *f = sr_bool(0), *fn = sr_lookup_qualname("jax.numpy.array");
    SrArgs fa = {1, &f, 0, NULL, NULL, NULL};
    r = fn ? sr_call(I, fn, &fa) : sr_raise(I, "NotImplementedError", "jax.numpy.array is not available");
    sr_unref(f);
  } else {
    SrVal *fe = sr_lookup_qualname("jax.numpy.equal"), *fa = sr_lookup_qualname("jax.numpy.all");
    SrVal *args[2] = {x, y};
    SrArgs ca = {2, args, 0, NULL, NULL, NULL};
    SrVal *eq = fe ? sr_call(I, fe, &ca) : NULL;
    if (eq && p[2] && sr_val_truthy(p[2]) && sr_dtype_is_inexact(tx->dtype)) {
      SrVal *nx = sr_lax_binary(I, SR_P_ne, x, x), *ny = nx ? sr_lax_binary(I, SR_P_ne, y, y) : NULL;
      SrVal *both = ny ? sr_lax_binary(I, SR_P_and, nx, ny) : NULL;
      SrVal *e2 = both ? sr_lax_binary(I, SR_P_or, eq, both) : NULL;
      sr_unref(nx);
      sr_unref(ny);
      sr_unref(both);
      sr_unref(eq);
      eq = e2;
    }
    SrArgs aa = {1, &eq, 0, NULL, NULL, NULL};
    r = eq && fa ? sr_call(I, fa, &aa) : NULL;
    sr_unref(eq);
  }
  sr_unref(x);
  sr_unref(y);
  return r;
}

/* the body of jit outer: ravel(a)[:, None] * ravel(b)[None, :] */
static SrVal *outer_body(SrInterp *I, SrArgs *a) {
  SrVal *r[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    int64_t n = sr_type_numel(vtype(I, a->v[i])), d = 1 - i;
    SrVal *f = vtype(I, a->v[i])->ndim == 1 ? sr_ref(a->v[i]) : sr_lax_reshape(I, a->v[i], &n, 1, NULL);
    r[i] = f ? sr_lax_expand_dims(I, f, &d, 1) : NULL;
    sr_unref(f);
    if (!r[i]) break;
  }
  SrVal *fm = sr_lookup_qualname("jax.numpy.multiply");
  SrArgs ma = {2, r, 0, NULL, NULL, NULL};
  SrVal *out = r[0] && r[1] && fm ? sr_call(I, fm, &ma) : NULL;
  sr_unref(r[0]);
  sr_unref(r[1]);
  return out;
}

static SrVal *jnp_outer(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "outer", "a, b, out=", p) < 0) return NULL;
  if (given(p[2])) return sr_raise(I, "NotImplementedError", "The 'out' argument to jnp.outer is not supported.");
  SrVal *xs[2] = {arr(I, p[0]), NULL};
  if (xs[0]) xs[1] = arr(I, p[1]);
  SrVal *r = xs[1] ? sr_api_jit(I, "outer", outer_body, NULL, 2, xs) : NULL;
  sr_unref(xs[0]);
  sr_unref(xs[1]);
  return r;
}

void sr_jnp_misc_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
      {"jax.numpy.tri", jnp_tri, "tri(N, M=None, k=0, dtype=None): ones at and below diagonal k (lax._tri)"},
      {"jax.numpy.tril", jnp_tril, "tril(m, k=0): jit[name=tril], zeros above diagonal k"},
      {"jax.numpy.triu", jnp_triu, "triu(m, k=0): jit[name=triu], zeros below diagonal k"},
      {"jax.numpy.identity", jnp_identity, "identity(n, dtype=None): eye(n, dtype=dtype)"},
      {"jax.numpy.array_equal", jnp_array_equal, "array_equal(a1, a2, equal_nan=False): all(a1 == a2) of one shape"},
      {"jax.numpy.outer", jnp_outer, "outer(a, b): jit[name=outer], ravel(a)[:, None] * ravel(b)[None, :]"},
      {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
