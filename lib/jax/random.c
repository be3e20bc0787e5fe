/* random.c: jax.random under a trace.
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
#include "jax/random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/prng.h"
#include "jax/builtins_exec.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "core/jaxstate.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "core/trace.h"
#include "util/intern.h"
#include "util/mem.h"

static SrDtype key_dtype(void) { return sr_prng_key_dtype(SR_PRNG_FRY); }
static int is_key_dtype(SrDtype d) { return sr_prng_impl_of(d) >= 0; }

/* Keys of rbg and unsafe_rbg bind their primitives even on concrete
   values: the direct functions below are threefry's. */
int sr_random_traced(SrInterp *I, SrVal *v) {
  if (I->trace) return 1;
  SrArrayObj *a = sr_array_of(v);
  if (!a) return 0;
  if (a->kind != SR_AV_CONCRETE && !a->has_value) return 1;
  const SrType *t = sr_value_type(I, v);
  return t && sr_prng_impl_of(t->dtype) > SR_PRNG_FRY;
}

/* the impl param of random_seed and random_wrap: the PRNGImpl's tag */
static SrVal *impl_word(int impl) { return sr_word(NULL, sr_prng_impl_tag(impl), strlen(sr_prng_impl_tag(impl))); }

/* A literal of dtype dt (a numpy scalar: strongly typed). */
static SrVal *lit(SrDtype dt, double re, int64_t iv) { return sr_array_scalar(sr_type_array(dt, 0, NULL), re, 0, iv); }

/* ---- keys ---- */

static SrVal *key_traced(SrInterp *I, SrVal *seed, int legacy, int impl) {
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
  SrVal *k = sr_bindv(I, SR_P_random_seed, 1, &s, "impl", impl_word(impl), NULL);
  sr_unref(s);
  if (!k || !legacy) return k;
  SrVal *d = sr_bind(I, SR_P_random_unwrap, 1, &k, 0, NULL);
  sr_unref(k);
  return d;
}

SrVal *sr_random_key_traced(SrInterp *I, SrVal *seed, int legacy) { return key_traced(I, seed, legacy, SR_PRNG_FRY); }

/* _check_prng_key: a typed key as it is, a legacy uint32[..., 2] one
   wrapped (random_wrap); *ndim its key shape's rank. */
static SrVal *typed_key(SrInterp *I, SrVal *key, const char *name, int allow_batched) {
  SrVal *k = sr_jnp_asarray(I, key, -1);
  if (!k) return NULL;
  const SrType *t = sr_value_type(I, k);
  SrVal *r = NULL;
  if (t && is_key_dtype(t->dtype)) {
    r = sr_ref(k);
  } else if (t && t->dtype == SR_U32 && t->ndim && t->dims[t->ndim - 1].size == 2) {
    r = sr_bindv(I, SR_P_random_wrap, 1, &k, "impl", impl_word(SR_PRNG_FRY), NULL);
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

/* ---- PRNG implementations ---- */

/* JAX's registered implementations, in the order JAX registers them
   (prng.prngs); shardrepl has threefry2x32, rbg and unsafe_rbg. */
static const char *const prng_names[] = {"philox2x32", "philox4x32", "threefry2x32", "rbg", "unsafe_rbg", "threefry4x32"};

static int given(const SrVal *v) { return v && v->kind != SR_V_NONE; }

/* resolve_prng_impl(spec): the implementation (SR_PRNG_FRY for None) a
   name or a key dtype names, -1 with JAX's error raised. */
static int resolve_impl(SrInterp *I, SrVal *spec) {
  if (!given(spec)) return SR_PRNG_FRY;
  if (spec->kind == SR_V_DTYPE && is_key_dtype(spec->dtype)) return sr_prng_impl_of(spec->dtype);
  if (spec->kind == SR_V_STR) {
    for (size_t i = 0; i < sizeof prng_names / sizeof *prng_names; i++) {
      if (strcmp(spec->str.s, prng_names[i])) continue;
      int impl = sr_prng_impl_lookup(prng_names[i]);
      if (impl >= 0) return impl;
      sr_raise(I, "NotImplementedError",
               "the %s PRNG implementation is not supported yet (only threefry2x32, rbg and unsafe_rbg)", prng_names[i]);
      return -1;
    }
    SrBuf b = SR_BUF_INIT;
    for (size_t i = 0; i < sizeof prng_names / sizeof *prng_names; i++)
      sr_buf_printf(&b, i ? ", \"%s\"" : "\"%s\"", prng_names[i]);
    sr_raise(I, "ValueError", "unrecognized PRNG implementation \"%s\". Did you mean one of: %s?", spec->str.s, b.p);
    sr_buf_free(&b);
    return -1;
  }
  sr_raise(I, "TypeError", "unrecognized type <class '%s'> for specifying PRNG implementation.", sr_val_kind_name(spec));
  return -1;
}

/* key's and wrap_key_data's impl= or dtype= (not both) */
static int impl_or_dtype(SrInterp *I, SrVal *impl, SrVal *dtype, const char *fn) {
  if (given(dtype) && given(impl)) {
    sr_raise(I, "ValueError", "Cannot specify both `impl` and `dtype` arguments to %s", fn);
    return -1;
  }
  return resolve_impl(I, given(dtype) ? dtype : impl);
}

/* jax.random.key_dtype(impl_spec=None): the key dtype, key<fry> */
static SrVal *bi_key_dtype(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  int impl;
  if (sr_args_parse(I, a, "key_dtype", "impl_spec=", p) < 0 || (impl = resolve_impl(I, p[0])) < 0) return NULL;
  return sr_dtype_val(NULL, sr_prng_key_dtype(impl));
}

/* jax.random.key_impl(keys): the name of their implementation */
static SrVal *bi_key_impl(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "key_impl", "keys", p) < 0) return NULL;
  SrVal *k = typed_key(I, p[0], "key_impl", 1);
  if (!k) return NULL;
  const SrType *t = sr_value_type(I, k);
  int impl = t ? sr_prng_impl_of(t->dtype) : -1;
  sr_unref(k);
  return sr_str_cstr(NULL, sr_prng_impl_name(impl < 0 ? SR_PRNG_FRY : impl));
}

/* jax.random.clone(key): random_clone, the key as it is outside key
   reuse checking */
static SrVal *bi_clone(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "clone", "key", p) < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *r = sr_bind(I, SR_P_random_clone, 1, &x, 0, NULL);
  sr_unref(x);
  return r;
}

/* jax.random.wrap_key_data(key_bits_array, *, impl=None, dtype=None) */
static SrVal *bi_wrap_key_data(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "wrap_key_data", "key_bits_array, *, impl=, dtype=", p) < 0) return NULL;
  int impl = impl_or_dtype(I, p[1], p[2], "jax.random.wrap_key_data");
  if (impl < 0) return NULL;
  SrVal *x = sr_jnp_asarray(I, p[0], -1);
  if (!x) return NULL;
  SrVal *r = sr_bindv(I, SR_P_random_wrap, 1, &x, "impl", impl_word(impl), NULL);
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
  if (s->dt != SR_C64 && s->dt != SR_C128)
    return sr_api_jit(I, "_normal_real", normal_real_body, sampler(s->shape, s->nd, s->dt), 1, a->v);
  /* complex: (re + 1j * im) / sqrt(2), re and im _normal_real of the
     key's two halves (_split) in the real dtype */
  SrDtype rdt = s->dt == SR_C64 ? SR_F32 : SR_F64;
  SrVal *keys = sr_call1(I, sr_lookup_qualname("jax.random.split"), a->v[0]), *part[2] = {NULL, NULL}, *r = NULL;
  for (int i = 0; i < 2 && keys; i++) {
    SrVal *k = sr_getindex(I, keys, i);
    SrVal *x = k ? sr_api_jit(I, "_normal_real", normal_real_body, sampler(s->shape, s->nd, rdt), 1, &k) : NULL;
    part[i] = x ? sr_lax_convert(I, x, s->dt, 0, NULL) : NULL;
    sr_unref(k);
    sr_unref(x);
    if (!part[i]) break;
  }
  if (part[1]) {
    SrVal *j = sr_complex(NULL, 0, 1);
    SrVal *ji = sr_binop(I, SR_OP_MUL, j, part[1]);
    SrVal *sum = ji ? sr_binop(I, SR_OP_ADD, part[0], ji) : NULL;
    SrVal *sq = sum ? lit(s->dt, sqrt(2.0), 0) : NULL;
    r = sq ? sr_binop(I, SR_OP_DIV, sum, sq) : NULL;
    sr_unref(j);
    sr_unref(ji);
    sr_unref(sum);
    sr_unref(sq);
  }
  sr_unref(part[0]);
  sr_unref(part[1]);
  sr_unref(keys);
  return r;
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
  Wrapped *w = sr_xcalloc(1, sizeof *w);
  w->kind = kind;
  w->s.nd = nd;
  memcpy(w->s.shape, shape, (size_t)nd * sizeof *shape);
  w->s.dt = dt;
  SrVal *fn = sr_builtin_with(kind == 0 ? "_normal" : kind == 1 ? "_uniform" : "_random_bits", wrapped_fn, w, free);
  SrVal *mn = kind == 1 ? (minval ? sr_ref(minval) : sr_float(NULL, 0.0)) : NULL;
  SrVal *mx = kind == 1 ? (maxval ? sr_ref(maxval) : sr_float(NULL, 1.0)) : NULL;
  SrVal *args[3] = {k, mn, mx};
  SrVal *r = sr_random_maybe_auto_axes(I, fn, out_sharding, names[kind], kind == 1 ? 3 : 1, args);
  sr_unref(mn);
  sr_unref(mx);
  sr_unref(k);
  return r;
}

SrVal *sr_random_maybe_auto_axes(SrInterp *I, SrVal *fn, SrVal *out_sharding, const char *api, int n, SrVal **args) {
  SrArgs ca = {n, args, 0, NULL, NULL, NULL};
  /* canonicalize_sharding(out_sharding, api) */
  SrVal *osh = NULL;
  if (out_sharding && sr_api_canon_sharding(I, out_sharding, api, &osh) < 0) {
    sr_unref(fn);
    return NULL;
  }
  if (!osh) {
    SrVal *r = sr_call(I, fn, &ca);
    sr_unref(fn);
    return r;
  }
  /* auto_axes(f, out_sharding=..., axes=out_sharding.mesh.explicit_axes) */
  const SrMesh *m = osh->sh.mesh;
  SrVal *axes = sr_api_axes_tuple(m, sr_mesh_axes_of_type(m, SR_AXIS_EXPLICIT));
  SrVal *aa = sr_lookup_qualname("jax.sharding.auto_axes");
  SrVal *r = NULL;
  if (aa) {
    const char *kw[2] = {sr_intern_cstr("out_sharding"), sr_intern_cstr("axes")};
    SrVal *kwv[2] = {osh, axes};
    SrArgs da = {1, &fn, 2, kw, kwv, NULL};
    SrVal *dec = sr_call(I, aa, &da);
    if (dec) r = sr_call(I, dec, &ca);
    sr_unref(dec);
  } else {
    sr_raise(I, "NotImplementedError", "out_sharding= needs jax.sharding.auto_axes");
  }
  sr_unref(fn);
  sr_unref(axes);
  sr_unref(osh);
  return r;
}

/* ---- lax.rng_bit_generator ---- */

/* rng_bit_generator(key, shape, dtype=uint32, algorithm=RNG_DEFAULT, *,
   out_sharding=None): (new_key, bits), one rng_bit_generator equation */
static SrVal *bi_rng_bit_generator(SrInterp *I, SrArgs *a) {
  SrVal *p[5];
  if (sr_args_parse(I, a, "rng_bit_generator", "key, shape, dtype=, algorithm=, *, out_sharding=", p) < 0)
    return NULL;
  int64_t shape[SR_MAX_RANK];
  int nd, d;
  if (sr_shape_arg(I, p[1], shape, &nd, "shape") < 0 || sr_dtype_arg(I, p[2], &d, "rng_bit_generator") < 0)
    return NULL;
  SrDtype dt = d < 0 ? SR_U32 : (SrDtype)d;
  if (dt == SR_U64 && !I->jax->enable_x64) dt = SR_U32;
  if (dt != SR_U8 && dt != SR_U16 && dt != SR_U32 && dt != SR_U64)
    return sr_raise(I, "TypeError", "rng_bit_generator: unsupported dtype %s", sr_dtype_name(dt));
  SrVal *osh = NULL;
  if (sr_api_canon_sharding(I, p[4], "rng_bit_generator", &osh) < 0) return NULL;
  SrVal *alg = p[3] && p[3]->kind != SR_V_NONE ? sr_ref(p[3]) : sr_word(NULL, "RNG_DEFAULT", 11);
  SrVal *k = sr_jnp_asarray(I, p[0], -1);
  SrVal *r = k ? sr_bindv(I, SR_P_rng_bit_generator, 1, &k, "shape", sr_int_tuple(shape, nd), "dtype",
                          sr_dtype_val(NULL, dt), "algorithm", alg, "out_sharding", osh ? osh : sr_none(), NULL)
               : NULL;
  if (!k) {
    sr_unref(alg);
    sr_unref(osh);
  }
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

/* ---- jax.random on concrete keys ---- */

static unsigned prng_flags(SrInterp *I) {
  return (I->jax->enable_x64 ? SR_PRNG_X64 : 0) | (I->jax->threefry_original ? SR_PRNG_ORIGINAL : 0);
}

/* The key words of a key array (typed key<fry>[...] or legacy uint32[..., 2]). */
static uint32_t *key_words(SrInterp *I, SrVal *k, int *legacy, const SrType **kt, int64_t *nkeys) {
  SrArray *a = sr_concrete_of(I, k, NULL);
  if (!a) {
    if (!I->exc) sr_raise(I, "NotImplementedError", "jax.random needs a concrete key here (tracing jax.random is not supported yet)");
    return NULL;
  }
  *kt = a->type;
  *legacy = a->type->dtype != key_dtype();
  if (*legacy && (a->type->dtype != SR_U32 || !a->type->ndim || a->type->dims[a->type->ndim - 1].size != 2)) {
    sr_array_unref(a);
    sr_raise(I, "TypeError", "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32 and a trailing dimension of 2");
    return NULL;
  }
  uint32_t *h = sr_concrete_host_data(I, a);
  int64_t n = sr_type_numel(a->type);
  *nkeys = *legacy ? n / 2 : n;
  sr_array_unref(a);
  return h;
}

/* A key array of `shape` from words (2 per key), legacy or typed. */
static SrVal *key_array(SrInterp *I, int legacy, int ndim, const int64_t *shape, const uint32_t *words) {
  int64_t sh[SR_MAX_RANK + 1];
  if (ndim) memcpy(sh, shape, (size_t)ndim * sizeof *shape);
  const SrType *t;
  if (legacy) {
    sh[ndim] = 2;
    t = sr_type_array(SR_U32, ndim + 1, sh);
  } else {
    t = sr_type_array(key_dtype(), ndim, sh);
  }
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  (void)I;
  SrBuffer *b = sr_buffer_new((size_t)n * 8);
  memcpy(b->data, words, (size_t)n * 8);
  SrArray *a = sr_array_new(t, NULL, NULL);
  a->shard[0] = b;
  return sr_concrete_wrap(a);
}

static int seed_of(SrInterp *I, SrVal *v, int64_t *seed) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *seed = v->i;
    return 0;
  }
  SrVal *item = sr_unop(I, SR_OP_ITEM, v);
  if (!item) return -1;
  int rc = sr_as_int(I, item, "seed", seed);
  sr_unref(item);
  return rc;
}

static SrVal *random_key(SrInterp *I, SrArgs *a, int legacy) {
  SrVal *p[3] = {0};
  if (sr_args_parse(I, a, legacy ? "PRNGKey" : "key", legacy ? "seed, *, impl=" : "seed, *, impl=, dtype=", p) < 0)
    return NULL;
  int impl = impl_or_dtype(I, p[1], p[2], "jax.random.key");
  if (impl < 0) return NULL;
  if (impl != SR_PRNG_FRY || sr_random_traced(I, p[0])) return key_traced(I, p[0], legacy, impl);
  int64_t seed;
  if (seed_of(I, p[0], &seed) < 0) return NULL;
  uint32_t k[2];
  sr_prng_key_ex(seed, prng_flags(I), k);
  return key_array(I, legacy, 0, NULL, k);
}

static SrVal *bi_key(SrInterp *I, SrArgs *a) { return random_key(I, a, 0); }
static SrVal *bi_prngkey(SrInterp *I, SrArgs *a) { return random_key(I, a, 1); }

/* _return_prng_keys: a legacy key in, its key data out. */
static SrVal *return_keys(SrInterp *I, int wrapped, SrVal *k) {
  if (!k || !wrapped) return k;
  SrVal *d = sr_bind(I, SR_P_random_unwrap, 1, &k, 0, NULL);
  sr_unref(k);
  return d;
}

static int is_typed_key(SrInterp *I, SrVal *key) {
  const SrType *t = sr_value_type(I, key);
  return t && is_key_dtype(t->dtype);
}

/* split(key, num) on a traced key: random_split[shape=...]. */
static SrVal *split_traced(SrInterp *I, SrVal *key, const int64_t *shape, int nd) {
  int wrapped = !is_typed_key(I, key);
  SrVal *k = typed_key(I, key, "split", 1);
  if (!k) return NULL;
  const SrType *t = sr_value_type(I, k);
  if (t && t->ndim) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < t->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
    sr_buf_puts(&b, t->ndim == 1 ? ",)" : ")");
    sr_raise(I, "TypeError", "split accepts a single key, but was given a key array of shape %s != (). Use jax.vmap for batching.",
             b.p);
    sr_buf_free(&b);
    sr_unref(k);
    return NULL;
  }
  SrVal *r = sr_bindv(I, SR_P_random_split, 1, &k, "shape", sr_int_tuple(shape, nd), NULL);
  sr_unref(k);
  return return_keys(I, wrapped, r);
}

/* fold_in(key, data) on a traced key or data: random_fold_in with
   jnp.asarray(data, dtype='uint32'). */
static SrVal *fold_in_traced(SrInterp *I, SrVal *key, SrVal *data) {
  int wrapped = !is_typed_key(I, key);
  SrVal *k = typed_key(I, key, "fold_in", 1);
  if (!k) return NULL;
  SrVal *d;
  if (data->kind == SR_V_INT || data->kind == SR_V_BOOL) {
    d = lit(SR_U32, (double)(uint32_t)data->i, (uint32_t)data->i);
  } else {
    SrVal *x = sr_jnp_asarray(I, data, -1);
    d = x ? sr_lax_convert(I, x, SR_U32, 0, NULL) : NULL;
    sr_unref(x);
  }
  const SrType *dt = d ? sr_value_type(I, d) : NULL;
  if (dt && dt->ndim) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < dt->ndim; i++) sr_buf_printf(&b, i ? ", %lld" : "%lld", (long long)dt->dims[i].size);
    sr_buf_puts(&b, dt->ndim == 1 ? ",)" : ")");
    sr_raise(I, "TypeError", "fold_in accepts a scalar, but was given an array ofshape %s != (). Use jax.vmap for batching.",
             b.p);
    sr_buf_free(&b);
    sr_unref(d);
    d = NULL;
  }
  SrVal *r = NULL;
  if (d) {
    SrVal *in[2] = {k, d};
    r = sr_bind(I, SR_P_random_fold_in, 2, in, 0, NULL);
  }
  sr_unref(k);
  sr_unref(d);
  return return_keys(I, wrapped, r);
}

static SrVal *bi_split(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "split", "key, num=", p) < 0) return NULL;
  int64_t shape[SR_MAX_RANK] = {2};
  int nd = 1;
  if (p[1] && sr_shape_arg(I, p[1], shape, &nd, "num") < 0) return NULL;
  /* a negative int num: threefry_split's lax.iota(uint32, num) refuses it */
  if (nd == 1 && shape[0] < 0)
    return sr_raise(I, "TypeError", "iota shape must have every element be nonnegative, got (%lld,).",
                    (long long)shape[0]);
  /* 8 bytes of key data per key */
  int64_t num = sr_shape_numel(nd, shape), nbytes;
  if (num < 0 || __builtin_mul_overflow(num, 8, &nbytes)) return sr_raise(I, "ValueError", "%s", SR_TOO_BIG_MSG);
  if ((uint64_t)nbytes > sr_mem_limit())
    return sr_raise(I, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate %lld bytes.",
                    (long long)nbytes);
  if (sr_random_traced(I, p[0])) return split_traced(I, p[0], shape, nd);
  int legacy;
  const SrType *kt;
  int64_t nk;
  uint32_t *k = key_words(I, p[0], &legacy, &kt, &nk);
  if (!k) return NULL;
  if (nk != 1) {
    free(k);
    return sr_raise(I, "TypeError", "split accepts a single key, but was given a key array of shape %s",
                    sr_type_short(kt));
  }
  /* the host words, then the array made of them: both must fit */
  uint32_t *out = (uint64_t)nbytes <= sr_mem_limit() / 2 ? sr_try_malloc((size_t)(num ? num : 1) * 8) : NULL;
  if (!out) {
    free(k);
    return sr_raise(I, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate %lld bytes.",
                    (long long)nbytes);
  }
  sr_prng_split_ex(k, num, prng_flags(I), out);
  SrVal *r = key_array(I, legacy, nd, shape, out);
  free(k);
  free(out);
  return r;
}

static SrVal *bi_fold_in(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "fold_in", "key, data", p) < 0) return NULL;
  if (sr_random_traced(I, p[0]) || sr_random_traced(I, p[1])) return fold_in_traced(I, p[0], p[1]);
  int64_t data;
  if (seed_of(I, p[1], &data) < 0) return NULL;
  int legacy;
  const SrType *kt;
  int64_t nk;
  uint32_t *k = key_words(I, p[0], &legacy, &kt, &nk);
  if (!k) return NULL;
  uint32_t out[2];
  sr_prng_fold_in(k, (uint32_t)data, out);
  free(k);
  return key_array(I, legacy, 0, NULL, out);
}

static SrVal *bi_key_data(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "key_data", "keys", p) < 0) return NULL;
  if (sr_random_traced(I, p[0])) return sr_random_key_data_traced(I, p[0]);
  int legacy;
  const SrType *kt;
  int64_t nk;
  uint32_t *k = key_words(I, p[0], &legacy, &kt, &nk);
  if (!k) return NULL;
  int64_t sh[SR_MAX_RANK + 1];
  int nd = kt->ndim - (legacy ? 1 : 0);
  for (int i = 0; i < nd; i++) sh[i] = kt->dims[i].size;
  SrVal *r = key_array(I, 1, nd, sh, k);
  free(k);
  return r;
}

typedef struct RngArg {
  int kind; /* 0 normal, 1 uniform, 2 bits */
  uint32_t key[2];
  SrDtype dt;
  int nd;
  int64_t shape[SR_MAX_RANK];
  double lo, hi;
  unsigned flags;
} RngArg;

static int rng_fn(SrShardIO *io) {
  RngArg *r = io->arg;
  int rc;
  if (r->kind == 0)
    rc = sr_prng_normal_block(r->key, r->dt, r->nd, r->shape, io->out_start, io->out_shape[0], r->flags, io->out[0]->data);
  else if (r->kind == 1)
    rc = sr_prng_uniform_block(r->key, r->dt, r->nd, r->shape, io->out_start, io->out_shape[0], r->lo, r->hi, r->flags,
                               io->out[0]->data);
  else
    rc = sr_prng_bits_block(r->key, (int)sr_dtype_info(r->dt)->bits, r->nd, r->shape, io->out_start, io->out_shape[0],
                            r->flags, io->out[0]->data);
  if (rc < 0) return sr_ev_err(io->cx, "TypeError", "random values of dtype %s are not supported", sr_dtype_name(r->dt));
  return 0;
}

static SrVal *random_values(SrInterp *I, SrArgs *a, int kind) {
  SrVal *p[6];
  const char *spec = kind == 1 ? "key, shape=, dtype=, minval=, maxval=, *, out_sharding="
                               : "key, shape=, dtype=, *, out_sharding=";
  if (sr_args_parse(I, a, kind == 0 ? "normal" : kind == 1 ? "uniform" : "bits", spec, p) < 0) return NULL;
  SrVal *osh = kind == 1 ? p[5] : p[3];
  RngArg r;
  memset(&r, 0, sizeof r);
  r.kind = kind;
  r.flags = prng_flags(I);
  r.dt = kind == 2 ? SR_U32 : I->jax->enable_x64 ? SR_F64 : SR_F32;
  r.nd = 0;
  if (p[1] && p[1]->kind != SR_V_NONE && sr_shape_arg(I, p[1], r.shape, &r.nd, "shape") < 0) return NULL;
  int dt;
  if (sr_dtype_arg(I, p[2], &dt, kind == 0 ? "normal" : kind == 1 ? "uniform" : "bits") < 0) return NULL;
  if (dt >= 0) r.dt = (SrDtype)dt;
  if (kind == 2 && r.dt != SR_U8 && r.dt != SR_U16 && r.dt != SR_U32 && r.dt != SR_U64)
    return sr_raise(I, "ValueError", "dtype argument to `bits` must be an unsigned int dtype, got %s", sr_dtype_name(r.dt));
  int cplx = r.dt == SR_C64 || r.dt == SR_C128;
  if (kind == 0 && !sr_dtype_is_float(r.dt) && !cplx)
    return sr_raise(I, "ValueError", "dtype argument to `normal` must be a float or complex dtype, got %s",
                    sr_dtype_name(r.dt));
  if (kind == 1 && !sr_dtype_is_float(r.dt))
    return sr_raise(I, "ValueError", "dtype argument to `uniform` must be a float dtype, got %s", sr_dtype_name(r.dt));
  /* traced: minval and maxval may be arrays (truncated_normal's); complex
     normals are _normal's jit even eagerly */
  if (sr_random_traced(I, p[0]) || (kind == 0 && cplx))
    return sr_random_sample_traced(I, kind, p[0], r.shape, r.nd, r.dt, kind == 1 ? p[3] : NULL, kind == 1 ? p[4] : NULL, osh);
  r.lo = 0;
  r.hi = 1;
  if (kind == 1) {
    if (p[3] && sr_as_float(I, p[3], "minval", &r.lo) < 0) return NULL;
    if (p[4] && sr_as_float(I, p[4], "maxval", &r.hi) < 0) return NULL;
  }
  int legacy;
  const SrType *kt;
  int64_t nk;
  uint32_t *k = key_words(I, p[0], &legacy, &kt, &nk);
  if (!k) return NULL;
  if (nk != 1) {
    free(k);
    return sr_raise(I, "TypeError", "%s accepts a single key, but was given a key array of shape %s",
                    kind == 0 ? "normal" : kind == 1 ? "uniform" : "bits", sr_type_short(kt));
  }
  r.key[0] = k[0];
  r.key[1] = k[1];
  free(k);
  const SrType *plain = sr_type_array(r.dt, r.nd, r.shape);
  /* made here, not by a type rule (sr_type_rule), so checked here */
  if (sr_type_too_big(plain)) return sr_raise(I, "ValueError", "%s", SR_TOO_BIG_MSG);
  SrEvalCtx cx;
  SrDiags d = SR_DIAGS_INIT;
  sr_concrete_ctx(I, &cx, &d, kind == 0 ? "normal" : kind == 1 ? "uniform" : "bits");
  const SrMesh *m = I->jax->mesh;
  const SrType *l = sr_layout_of_type(plain);
  SrVal *sh = NULL;
  if (osh && osh->kind != SR_V_NONE) {
    int dev;
    sh = sr_concrete_target_sharding(I, osh, &dev);
    if (!sh) return dev >= 0 ? sr_raise(I, "TypeError", "out_sharding must be a sharding") : NULL;
    m = sh->sh.mesh;
    if (sr_ev_layout_of_sharding(&cx, plain, sh, m, &l) < 0 || sr_concrete_check_divisible(I, l, sh) < 0) {
      sr_unref(sh);
      if (!I->exc) sr_raise_diags(I, &d, "ValueError");
      return NULL;
    }
  }
  const SrType *t = sr_concrete_type_of_layout(plain, l, m);
  SrArray *out = sr_array_new(t, l, m);
  int rc = sr_ev_map(&cx, 0, NULL, 1, &out, SR_MAP_BLOCK, rng_fn, &r);
  sr_unref(sh);
  if (rc < 0) {
    sr_array_unref(out);
    return sr_raise_diags(I, &d, "RuntimeError");
  }
  return sr_concrete_wrap(out);
}

/* ---- exponential, logistic, laplace (random/core.py): a jit of
   uniform(key, shape, dtype, minval, maxval), then elementwise ops ---- */

enum { DIST_EXPONENTIAL, DIST_LOGISTIC, DIST_LAPLACE };

typedef struct Dist {
  Sampler s; /* first: sr_current_builtin's data is read as a Sampler too */
  int kind;
} Dist;

static SrVal *dist_body(SrInterp *I, SrArgs *a) {
  const Dist *d = sr_current_builtin(I)->data;
  SrDtype dt = d->s.dt;
  /* minval: Python's 0.0, or a numpy scalar of dt (finfo's tiny, -1 + epsneg) */
  SrVal *mn, *mx = sr_float(NULL, 1.0);
  double eps = dt == SR_F64 ? 0x1p-53 : dt == SR_F16 ? 0x1p-11 : dt == SR_BF16 ? 0x1p-8 : 0x1p-24;
  double tiny = dt == SR_F64 ? 0x1p-1022 : dt == SR_F16 ? 0x1p-14 : 0x1p-126;
  if (d->kind == DIST_EXPONENTIAL) mn = sr_float(NULL, 0.0);
  else if (d->kind == DIST_LOGISTIC) mn = lit(dt, tiny, 0);
  else mn = lit(dt, -1.0 + eps, 0);
  SrVal *amn = sr_jnp_asarray(I, mn, -1), *amx = amn ? sr_jnp_asarray(I, mx, -1) : NULL;
  SrVal *u = amn && amx ? uniform_call(I, a->v[0], d->s.shape, d->s.nd, dt, amn, amx) : NULL;
  sr_unref(mn);
  sr_unref(mx);
  sr_unref(amn);
  sr_unref(amx);
  if (!u) return NULL;
  SrVal *r = NULL;
  if (d->kind == DIST_EXPONENTIAL) {
    /* lax.neg(lax.log1p(lax.neg(u))) */
    SrVal *n = sr_lax_unary(I, SR_P_neg, u);
    SrVal *l = n ? sr_lax_unary(I, SR_P_log1p, n) : NULL;
    r = l ? sr_lax_unary(I, SR_P_neg, l) : NULL;
    sr_unref(n);
    sr_unref(l);
  } else if (d->kind == DIST_LOGISTIC) {
    /* lax.sub(lax.log(x), lax.log1p(lax.neg(x))) */
    SrVal *lg = sr_lax_unary(I, SR_P_log, u);
    SrVal *n = lg ? sr_lax_unary(I, SR_P_neg, u) : NULL;
    SrVal *l = n ? sr_lax_unary(I, SR_P_log1p, n) : NULL;
    sr_unref(n);
    r = bin(I, SR_P_sub, lg, l);
  } else {
    /* lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u)))) */
    SrVal *sg = sr_lax_unary(I, SR_P_sign, u);
    SrVal *ab = sg ? sr_lax_unary(I, SR_P_abs, u) : NULL;
    SrVal *n = ab ? sr_lax_unary(I, SR_P_neg, ab) : NULL;
    SrVal *l = n ? sr_lax_unary(I, SR_P_log1p, n) : NULL;
    sr_unref(ab);
    sr_unref(n);
    r = bin(I, SR_P_mul, sg, l);
  }
  sr_unref(u);
  return r;
}

static SrVal *dist(SrInterp *I, SrArgs *a, int kind) {
  static const char *const names[] = {"exponential", "logistic", "laplace"};
  static const char *const jits[] = {"_exponential", "_logistic", "_laplace"};
  const char *name = names[kind];
  SrVal *p[4];
  if (sr_args_parse(I, a, name, "key, shape=, dtype=, *, out_sharding=", p) < 0) return NULL;
  if (p[3] && p[3]->kind != SR_V_NONE)
    return sr_raise(I, "NotImplementedError", "jax.random.%s with out_sharding is not supported yet", name);
  Dist *d = sr_xcalloc(1, sizeof *d);
  d->kind = kind;
  d->s.dt = I->jax->enable_x64 ? SR_F64 : SR_F32;
  int dt;
  if ((p[1] && p[1]->kind != SR_V_NONE && sr_shape_arg(I, p[1], d->s.shape, &d->s.nd, "shape") < 0) ||
      sr_dtype_arg(I, p[2], &dt, name) < 0) {
    free(d);
    return NULL;
  }
  if (dt >= 0) d->s.dt = (SrDtype)dt;
  if (!sr_dtype_is_float(d->s.dt)) {
    SrDtype bad = d->s.dt;
    free(d);
    return sr_raise(I, "ValueError", "dtype argument to `%s` must be a float dtype, got %s", name, sr_dtype_name(bad));
  }
  SrVal *k = typed_key(I, p[0], name, 0);
  if (!k) {
    free(d);
    return NULL;
  }
  SrVal *r = sr_api_jit(I, jits[kind], dist_body, d, 1, &k);
  sr_unref(k);
  return r;
}

static SrVal *bi_exponential(SrInterp *I, SrArgs *a) { return dist(I, a, DIST_EXPONENTIAL); }
static SrVal *bi_logistic(SrInterp *I, SrArgs *a) { return dist(I, a, DIST_LOGISTIC); }
static SrVal *bi_laplace(SrInterp *I, SrArgs *a) { return dist(I, a, DIST_LAPLACE); }

static SrVal *bi_normal(SrInterp *I, SrArgs *a) { return random_values(I, a, 0); }
static SrVal *bi_uniform(SrInterp *I, SrArgs *a) { return random_values(I, a, 1); }
static SrVal *bi_bits(SrInterp *I, SrArgs *a) { return random_values(I, a, 2); }

/* ---- registration ---- */

/* jax.random on concrete keys. */
void sr_random_concrete_init(void) {
  sr_def("jax.random.key", bi_key, "key(seed, *, impl=None): a typed PRNG key (threefry2x32; impl='rbg' or 'unsafe_rbg': XLA's RngBitGenerator)");
  sr_def("jax.random.PRNGKey", bi_prngkey, "PRNGKey(seed): a legacy uint32[2] PRNG key");
  sr_def("jax.random.split", bi_split, "split(key, num=2): num new keys (a tuple num: that shape); traced: random_split");
  sr_def("jax.random.fold_in", bi_fold_in, "fold_in(key, data): a key derived from key and an integer (uint32); traced: random_fold_in");
  sr_def("jax.random.key_data", bi_key_data, "key_data(keys): the uint32 words of keys");
  sr_def("jax.random.key_dtype", bi_key_dtype, "key_dtype(impl_spec=None): the dtype of keys of a PRNG implementation, key<fry>");
  sr_def("jax.random.key_impl", bi_key_impl, "key_impl(keys): the name of the keys' PRNG implementation: 'threefry2x32', 'rbg' or 'unsafe_rbg'");
  sr_def("jax.random.clone", bi_clone, "clone(key): the key, for reuse (random_clone; an identity outside key reuse checking)");
  sr_def("jax.random.normal", bi_normal,
         "normal(key, shape=(), dtype=float32, *, out_sharding=None): standard normal samples, bit-exact with JAX");
  sr_def("jax.random.uniform", bi_uniform,
         "uniform(key, shape=(), dtype=float32, minval=0, maxval=1, *, out_sharding=None): uniform samples");
  sr_def("jax.random.bits", bi_bits, "bits(key, shape=(), dtype=uint32, *, out_sharding=None): random bits");
}

void sr_random_api_init(void) {
  sr_def("jax.random.exponential", bi_exponential,
         "exponential(key, shape=(), dtype=float): Exponential(1) samples, -log1p(-uniform)");
  sr_def("jax.random.logistic", bi_logistic, "logistic(key, shape=(), dtype=float): standard logistic samples");
  sr_def("jax.random.laplace", bi_laplace, "laplace(key, shape=(), dtype=float): Laplace(0, 1) samples");
  sr_def("jax.random.wrap_key_data", bi_wrap_key_data,
         "wrap_key_data(key_bits_array): a typed key array from uint32 key data (random_wrap)");
  sr_def("jax.lax.rng_bit_generator", bi_rng_bit_generator,
         "rng_bit_generator(key, shape, dtype=uint32, algorithm=RNG_DEFAULT, *, out_sharding=None): XLA's "
         "RngBitGenerator on a uint32[4] (or uint64[2]) key: (new key, bits); RNG_DEFAULT is Philox");
  /* lax.RandomAlgorithm (an IntEnum whose str is the member's name, as the
     param prints) */
  sr_register("jax.lax.RandomAlgorithm.RNG_DEFAULT", sr_word(NULL, "RNG_DEFAULT", 11));
  sr_register("jax.lax.RandomAlgorithm.RNG_THREE_FRY", sr_word(NULL, "RNG_THREE_FRY", 13));
  sr_register("jax.lax.RandomAlgorithm.RNG_PHILOX", sr_word(NULL, "RNG_PHILOX", 10));
  sr_def("jax.extend.random.threefry_2x32", bi_threefry_2x32,
         "threefry_2x32(keypair, count): the Threefry-2x32 hash of uint32 counts under a uint32[2] key");
}
