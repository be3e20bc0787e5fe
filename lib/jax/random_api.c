/* random_api.c: jax.random under a trace.
 *
 * On concrete keys, outside any trace, jax.random computes directly
 * (builtins_exec.c, on lib/exec/prng).  Under a trace (jax.jit,
 * make_jaxpr, a traced def), or on a traced key, it binds the primitives
 * JAX binds (jax/_src/random/core.py, prng.py):
 *
 *   jax.random.key(seed)        random_seed[impl=fry] seed
 *   jax.random.PRNGKey(seed)    random_seed, random_unwrap
 *   jax.random.key_data(k)      random_unwrap (a legacy key is wrapped first)
 *   jax.random.wrap_key_data(d) random_wrap[impl=fry]
 *   jax.random.bits(k, shape)   random_bits[bit_width=32 shape=...]
 *   jax.random.uniform(k, ...)  jit[name=_uniform]: random_bits, then the
 *                               float built from the mantissa bits
 *                               (shift_right_logical, or,
 *                               bitcast_convert_type, sub, mul, add, max)
 *   jax.random.normal(k, ...)   jit[name=_normal] of jit[name=_normal_real]
 *                               of _uniform on (nextafter(-1, 0), 1), then
 *                               erf_inv and a multiply by sqrt(2)
 *
 * A legacy uint32[2] key is wrapped first (random_wrap), as
 * _check_prng_key does.  The evaluator runs these equations with
 * lib/lax/random.c's eval rules, bit for bit what the eager functions give.
 * out_sharding= wraps the sampler in auto_axes over the mesh's Explicit
 * axes (maybe_auto_axes).  Not here yet under a trace: split and fold_in
 * (random_split, random_fold_in).
 */
#include "jax/random_api.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/api.h"
#include "jax/jaxstate.h"
#include "jax/jnp.h"
#include "py/objects.h"
#include "jax/trace.h"
#include "util/intern.h"
#include "util/mem.h"

static SrDtype key_dtype(void) { return sr_dtype_intern("key<fry>", 8); }

int sr_random_traced(SrInterp *I, SrVal *v) {
  if (I->trace) return 1;
  SrArrayObj *a = sr_array_of(v);
  return a && a->kind != SR_AV_CONCRETE && !a->has_value;
}

static SrVal *impl_word(void) { return sr_word(NULL, "fry", 3); }

/* A literal of dtype dt (a numpy scalar: strongly typed). */
static SrVal *lit(SrDtype dt, double re, int64_t iv) { return sr_array_scalar(sr_type_array(dt, 0, NULL), re, 0, iv); }

/* ---- keys ---- */

SrVal *sr_random_key_traced(SrInterp *I, SrVal *seed, int legacy) {
  const char *ctor = legacy ? "PRNGKey" : "key";
  SrVal *s;
  if (seed->kind == SR_V_INT || seed->kind == SR_V_BOOL) {
    /* jnp.asarray(np.int64(seed)): int32 without x64 */
    s = lit(I->jax->enable_x64 ? SR_I64 : SR_I32, (double)seed->i, I->jax->enable_x64 ? seed->i : (int32_t)seed->i);
  } else {
    s = sr_jnp_asarray(I, seed, -1);
    if (!s) return NULL;
  }
  const SrType *t = sr_value_type(I, s);
  if (t && strncmp(sr_dtype_name(t->dtype), "key<", 4) == 0) {
    sr_unref(s);
    return sr_raise(I, "TypeError", "%s accepts a scalar seed, but was given a PRNG key.", ctor);
  }
  if (t && t->ndim) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < t->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
    sr_buf_puts(&b, t->ndim == 1 ? ",)" : ")");
    sr_raise(I, "TypeError", "%s accepts a scalar seed, but was given an array of shape %s != (). Use jax.vmap for batching",
             ctor, b.p);
    sr_buf_free(&b);
    sr_unref(s);
    return NULL;
  }
  SrVal *k = sr_bindv(I, SR_P_random_seed, 1, &s, "impl", impl_word(), NULL);
  sr_unref(s);
  if (!k || !legacy) return k;
  SrVal *d = sr_bind(I, SR_P_random_unwrap, 1, &k, 0, NULL);
  sr_unref(k);
  return d;
}

/* _check_prng_key: a typed key as it is, a legacy uint32[..., 2] one
   wrapped (random_wrap); *ndim its key shape's rank. */
static SrVal *typed_key(SrInterp *I, SrVal *key, const char *name, int allow_batched) {
  SrVal *k = sr_jnp_asarray(I, key, -1);
  if (!k) return NULL;
  const SrType *t = sr_value_type(I, k);
  SrVal *r = NULL;
  if (t && t->dtype == key_dtype()) {
    r = sr_ref(k);
  } else if (t && t->dtype == SR_U32 && t->ndim && t->dims[t->ndim - 1].size == 2) {
    r = sr_bindv(I, SR_P_random_wrap, 1, &k, "impl", impl_word(), NULL);
  } else if (t) {
    sr_raise(I, "TypeError",
             "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32 and a trailing dimension of 2; "
             "got dtype=%s and shape=%s",
             sr_dtype_name(t->dtype), sr_type_short(t));
  } else {
    sr_raise(I, "TypeError", "unexpected PRNG key type <class '%s'>", sr_val_kind_name(key));
  }
  sr_unref(k);
  if (!r || allow_batched) return r;
  const SrType *rt = sr_value_type(I, r);
  if (rt && rt->ndim) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < t->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
    sr_buf_puts(&b, t->ndim == 1 ? ",)" : ")");
    sr_raise(I, "ValueError", "%s accepts a single key, but was given a key array of shape %s != (). Use jax.vmap for batching.",
             name, b.p);
    sr_buf_free(&b);
    sr_unref(r);
    return NULL;
  }
  return r;
}

SrVal *sr_random_key_data_traced(SrInterp *I, SrVal *keys) {
  SrVal *k = typed_key(I, keys, "key_data", 1);
  if (!k) return NULL;
  SrVal *r = sr_bind(I, SR_P_random_unwrap, 1, &k, 0, NULL);
  sr_unref(k);
  return r;
}

/* jax.random.wrap_key_data(key_bits_array, *, impl=None) */
static SrVal *bi_wrap_key_data(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "wrap_key_data", "key_bits_array, *, impl=, dtype=", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_random_wrap, 1, &x, "impl", impl_word(), NULL);
  sr_unref(x);
  return r;
}

/* ---- samplers ---- */

typedef struct Sampler {
  int nd;
  int64_t shape[SR_MAX_RANK];
  SrDtype dt;
} Sampler;

/* finfo(dt): bits and mantissa bits; the uint of that width; 1.0's bits. */
static int float_info(SrDtype dt, int *nbits, int *nmant, SrDtype *udt, int64_t *one) {
  switch (dt) {
  case SR_F32: *nbits = 32, *nmant = 23, *udt = SR_U32, *one = 0x3f800000; return 0;
  case SR_F64: *nbits = 64, *nmant = 52, *udt = SR_U64, *one = 0x3ff0000000000000; return 0;
  case SR_F16: *nbits = 16, *nmant = 10, *udt = SR_U16, *one = 0x3c00; return 0;
  case SR_BF16: *nbits = 16, *nmant = 7, *udt = SR_U16, *one = 0x3f80; return 0;
  default: return -1;
  }
}

/* Steals x and y; a new reference, or NULL. */
static SrVal *bin(SrInterp *I, int prim, SrVal *x, SrVal *y) {
  SrVal *r = x && y ? sr_lax_binary(I, prim, x, y) : NULL;
  sr_unref(x);
  sr_unref(y);
  return r;
}

/* lax.broadcast_to_rank (steals x). */
static SrVal *to_rank(SrInterp *I, SrVal *x, int nd) {
  if (!x) return NULL;
  const SrType *t = sr_value_type(I, x);
  if (!t || t->ndim == nd) return x;
  int64_t shape[SR_MAX_RANK], dims[SR_MAX_RANK];
  int k = nd - t->ndim;
  for (int i = 0; i < k; i++) shape[i] = 1;
  for (int i = 0; i < t->ndim; i++) {
    shape[k + i] = t->dims[i].size;
    dims[i] = k + i;
  }
  SrVal *r = sr_lax_broadcast_in_dim(I, x, shape, nd, dims, t->ndim, NULL);
  sr_unref(x);
  return r;
}

/* random/core.py: _uniform(key, minval, maxval, shape, dtype) */
static SrVal *uniform_body(SrInterp *I, SrArgs *a) {
  const Sampler *s = sr_current_builtin(I)->data;
  int nbits, nmant;
  SrDtype udt;
  int64_t one;
  if (float_info(s->dt, &nbits, &nmant, &udt, &one) < 0)
    return sr_raise(I, "TypeError", "uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot %s.", sr_dtype_name(s->dt));
  SrVal *mn = sr_lax_convert(I, a->v[1], s->dt, 0, NULL);
  SrVal *mx = mn ? sr_lax_convert(I, a->v[2], s->dt, 0, NULL) : NULL;
  mn = to_rank(I, mn, s->nd);
  mx = to_rank(I, mx, s->nd);
  if (!mn || !mx) {
    sr_unref(mn);
    sr_unref(mx);
    return NULL;
  }
  int rng_bits = nmant < 8 ? 8 : nbits;
  SrVal *key = a->v[0];
  SrVal *bits = sr_bindv(I, SR_P_random_bits, 1, &key, "bit_width", sr_int(NULL, rng_bits), "shape",
                         sr_int_tuple(s->shape, s->nd), NULL);
  if (bits && rng_bits != nbits) {
    SrVal *c = sr_lax_convert(I, bits, udt, 0, NULL);
    sr_unref(bits);
    bits = c;
  }
  SrVal *fb = bin(I, SR_P_shift_right_logical, bits, lit(udt, rng_bits - nmant, rng_bits - nmant));
  fb = bin(I, SR_P_or, fb, lit(udt, (double)one, one));
  SrVal *floats = NULL;
  if (fb) floats = sr_bindv(I, SR_P_bitcast_convert_type, 1, &fb, "new_dtype", sr_dtype_val(NULL, s->dt), NULL);
  sr_unref(fb);
  floats = bin(I, SR_P_sub, floats, lit(s->dt, 1.0, 1));
  SrVal *r = bin(I, SR_P_mul, floats, bin(I, SR_P_sub, sr_ref(mx), sr_ref(mn)));
  r = bin(I, SR_P_add, r, sr_ref(mn));
  if (r) {
    SrVal *rs = sr_lax_reshape(I, r, s->shape, s->nd, NULL);
    sr_unref(r);
    r = rs;
  }
  r = bin(I, SR_P_max, sr_ref(mn), r);
  sr_unref(mn);
  sr_unref(mx);
  return r;
}

static Sampler *sampler(const int64_t *shape, int nd, SrDtype dt) {
  Sampler *s = sr_xcalloc(1, sizeof *s);
  s->nd = nd;
  memcpy(s->shape, shape, (size_t)nd * sizeof *shape);
  s->dt = dt;
  return s;
}

/* uniform(key, shape, dtype, minval, maxval) with a typed key: the jit
   _uniform (maybe_auto_axes without out_sharding). */
static SrVal *uniform_call(SrInterp *I, SrVal *key, const int64_t *shape, int nd, SrDtype dt, SrVal *mn, SrVal *mx) {
  SrVal *args[3] = {key, mn, mx};
  return sr_api_jit(I, "_uniform", uniform_body, sampler(shape, nd, dt), 3, args);
}

/* random/core.py: _normal_real(key, shape, dtype) */
static SrVal *normal_real_body(SrInterp *I, SrArgs *a) {
  const Sampler *s = sr_current_builtin(I)->data;
  double lo;
  switch (s->dt) {
  case SR_F32: lo = (double)nextafterf(-1.0f, 0.0f); break;
  case SR_F64: lo = nextafter(-1.0, 0.0); break;
  case SR_F16: lo = -1.0 + 0x1p-11; break;
  case SR_BF16: lo = -1.0 + 0x1p-8; break;
  default: return sr_raise(I, "NotImplementedError", "normal of dtype %s", sr_dtype_name(s->dt));
  }
  SrVal *mn = lit(s->dt, lo, 0), *mx = lit(s->dt, 1.0, 1);
  SrVal *u = uniform_call(I, a->v[0], s->shape, s->nd, s->dt, mn, mx);
  sr_unref(mn);
  sr_unref(mx);
  if (!u) return NULL;
  SrVal *e = sr_lax_unary(I, SR_P_erf_inv, u);
  sr_unref(u);
  return bin(I, SR_P_mul, lit(s->dt, sqrt(2.0), 0), e);
}

/* random/core.py: _normal(key, shape, dtype) */
static SrVal *normal_body(SrInterp *I, SrArgs *a) {
  const Sampler *s = sr_current_builtin(I)->data;
  return sr_api_jit(I, "_normal_real", normal_real_body, sampler(s->shape, s->nd, s->dt), 1, a->v);
}

/* The sampler itself, on a typed key (and minval, maxval for uniform). */
static SrVal *sample(SrInterp *I, int kind, SrVal *k, const int64_t *shape, int nd, SrDtype dt, SrVal *minval,
                     SrVal *maxval) {
  SrVal *r;
  if (kind == 2) {
    /* bits: _random_bits, with dtype's width */
    r = sr_bindv(I, SR_P_random_bits, 1, &k, "bit_width", sr_int(NULL, (int64_t)sr_dtype_info(dt)->bits), "shape",
                 sr_int_tuple(shape, nd), NULL);
  } else if (kind == 1) {
    /* Python floats are weakly typed jit arguments */
    SrVal *mn = minval ? sr_ref(minval) : sr_float(NULL, 0.0), *mx = maxval ? sr_ref(maxval) : sr_float(NULL, 1.0);
    SrVal *amn = sr_jnp_asarray(I, mn, -1), *amx = amn ? sr_jnp_asarray(I, mx, -1) : NULL;
    r = amn && amx ? uniform_call(I, k, shape, nd, dt, amn, amx) : NULL;
    sr_unref(mn);
    sr_unref(mx);
    sr_unref(amn);
    sr_unref(amx);
  } else {
    r = sr_api_jit(I, "_normal", normal_body, sampler(shape, nd, dt), 1, &k);
  }
  return r;
}

/* The sampler as the function maybe_auto_axes wraps: its arguments are
   the key (and minval, maxval), its data the sampler's kind, shape and
   dtype. */
typedef struct Wrapped {
  int kind;
  Sampler s;
} Wrapped;

static SrVal *wrapped_fn(SrInterp *I, SrArgs *a) {
  const Wrapped *w = sr_current_builtin(I)->data;
  return sample(I, w->kind, a->v[0], w->s.shape, w->s.nd, w->s.dt, a->n > 1 ? a->v[1] : NULL, a->n > 2 ? a->v[2] : NULL);
}

SrVal *sr_random_sample_traced(SrInterp *I, int kind, SrVal *key, const int64_t *shape, int nd, SrDtype dt,
                               SrVal *minval, SrVal *maxval, SrVal *out_sharding) {
  static const char *const names[] = {"normal", "uniform", "bits"};
  SrVal *k = typed_key(I, key, names[kind], 0);
  if (!k) return NULL;
  if (!out_sharding || out_sharding->kind == SR_V_NONE) {
    SrVal *r = sample(I, kind, k, shape, nd, dt, minval, maxval);
    sr_unref(k);
    return r;
  }
  /* maybe_auto_axes: auto_axes(sampler, out_sharding=..., axes=the
     mesh's Explicit axes) */
  const SrMesh *m = sr_api_mesh(I);
  SrVal *axes = sr_api_axes_tuple(m, sr_mesh_axes_of_type(m, SR_AXIS_EXPLICIT));
  Wrapped *w = sr_xcalloc(1, sizeof *w);
  w->kind = kind;
  w->s.nd = nd;
  memcpy(w->s.shape, shape, (size_t)nd * sizeof *shape);
  w->s.dt = dt;
  SrVal *fn = sr_builtin_with(kind == 0 ? "_normal" : kind == 1 ? "_uniform" : "_random_bits", wrapped_fn, w, free);
  SrVal *aa = sr_lookup_qualname("jax.sharding.auto_axes");
  SrVal *r = NULL;
  if (aa) {
    const char *kw[2] = {sr_intern_cstr("out_sharding"), sr_intern_cstr("axes")};
    SrVal *kwv[2] = {out_sharding, axes};
    SrArgs da = {1, &fn, 2, kw, kwv, NULL};
    SrVal *dec = sr_call(I, aa, &da);
    if (dec) {
      SrVal *mn = kind == 1 ? (minval ? sr_ref(minval) : sr_float(NULL, 0.0)) : NULL;
      SrVal *mx = kind == 1 ? (maxval ? sr_ref(maxval) : sr_float(NULL, 1.0)) : NULL;
      SrVal *args[3] = {k, mn, mx};
      SrArgs ca = {kind == 1 ? 3 : 1, args, 0, NULL, NULL, NULL};
      r = sr_call(I, dec, &ca);
      sr_unref(mn);
      sr_unref(mx);
      sr_unref(dec);
    }
  } else {
    sr_raise(I, "NotImplementedError", "jax.random.%s with out_sharding needs jax.sharding.auto_axes", names[kind]);
  }
  sr_unref(fn);
  sr_unref(axes);
  sr_unref(k);
  return r;
}

/* ---- jax.extend.random.threefry_2x32 ---- */

/* threefry_2x32(keypair, count): the hash of count's elements under the
   key (keypair's two words), as a threefry2x32 equation on the two halves
   of the flattened count (padded to an even size). */
static SrVal *bi_threefry_2x32(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "threefry_2x32", "keypair, count", p) < 0) return NULL;
  SrVal *kp = sr_jnp_asarray(I, p[0], -1), *c = kp ? sr_jnp_asarray(I, p[1], -1) : NULL;
  const SrType *kt = kp ? sr_value_type(I, kp) : NULL, *ct = c ? sr_value_type(I, c) : NULL;
  SrVal *r = NULL, *k1 = NULL, *k2 = NULL, *flat = NULL, *h0 = NULL, *h1 = NULL, *ys = NULL;
  if (!kt || !ct) goto done;
  if (kt->dtype != SR_U32 || ct->dtype != SR_U32 || kt->ndim != 1 || kt->dims[0].size != 2) {
    sr_raise(I, "TypeError", "threefry_2x32 requires uint32 arguments, got [dtype('%s'), dtype('%s')]",
             sr_dtype_name(kt->dtype), sr_dtype_name(ct->dtype));
    goto done;
  }
  int64_t n = sr_type_numel(ct), z = 0, one = 1, two = 2, half = (n + 1) / 2;
  k1 = sr_lax_slice(I, kp, &z, &one, NULL);
  k2 = sr_lax_slice(I, kp, &one, &two, NULL);
  if (!k1 || !k2) goto done;
  SrVal *s1 = sr_lax_reshape(I, k1, NULL, 0, NULL), *s2 = sr_lax_reshape(I, k2, NULL, 0, NULL);
  sr_unref(k1);
  sr_unref(k2);
  k1 = s1;
  k2 = s2;
  flat = sr_lax_reshape(I, c, &n, 1, NULL);
  if (!k1 || !k2 || !flat) goto done;
  if (n % 2) {
    SrVal *z0 = sr_int(NULL, 0);
    SrVal *zero = sr_lax_full(I, &one, 1, z0, SR_U32, NULL);
    sr_unref(z0);
    SrVal *parts[2] = {flat, zero};
    SrVal *cat = zero ? sr_lax_concatenate(I, 2, parts, 0) : NULL;
    sr_unref(zero);
    sr_unref(flat);
    flat = cat;
    if (!flat) goto done;
  }
  int64_t end = 2 * half;
  h0 = sr_lax_slice(I, flat, &z, &half, NULL);
  h1 = sr_lax_slice(I, flat, &half, &end, NULL);
  if (!h0 || !h1) goto done;
  SrVal *in[4] = {k1, k2, h0, h1};
  ys = sr_bind(I, SR_P_threefry2x32, 4, in, 0, NULL);
  if (!ys) goto done;
  SrVal *cat = sr_lax_concatenate(I, 2, ys->seq.items, 0);
  if (!cat) goto done;
  if (n % 2) {
    SrVal *cut = sr_lax_slice(I, cat, &z, &n, NULL);
    sr_unref(cat);
    cat = cut;
    if (!cat) goto done;
  }
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < ct->ndim; i++) shape[i] = ct->dims[i].size;
  r = sr_lax_reshape(I, cat, shape, ct->ndim, NULL);
  sr_unref(cat);
done:
  sr_unref(kp);
  sr_unref(c);
  sr_unref(k1);
  sr_unref(k2);
  sr_unref(flat);
  sr_unref(h0);
  sr_unref(h1);
  sr_unref(ys);
  return r;
}

void sr_random_api_init(void) {
  sr_def("jax.random.wrap_key_data", bi_wrap_key_data,
         "wrap_key_data(key_bits_array): a typed key array from uint32 key data (random_wrap)");
  sr_def("jax.extend.random.threefry_2x32", bi_threefry_2x32,
         "threefry_2x32(keypair, count): the Threefry-2x32 hash of uint32 counts under a uint32[2] key");
}
