/* random.c: the rules of the PRNG primitives: random_seed, random_bits, random_wrap,
 * random_unwrap, threefry2x32 (prng.py), random_gamma and random_clone (core.py).
 *
 * The family's shared helpers, then each primitive's (or group's) type,
 * eval, JVP and transpose rules and communication note side by side, in
 * that order, under a heading per group, then the family's registration
 * sr_lax_random_init (lax/lax.h says what a family file holds and uses).
 */
#include "lax/lax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "exec/kern.h"
#include "exec/prng.h"
#include "core/jaxstate.h"
#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "check/rule.h"
#include "core/core.h"
#include "util/mem.h"

/* ==== the family's helpers ==== */

/* type rules of the PRNG primitives -- random_seed,
 * random_bits, random_wrap, random_unwrap (jax/_src/random/prng.py),
 * threefry2x32 (random/threefry2x32.py) -- and of bitcast_convert_type,
 * which jax.random.uniform applies to the bits.
 *
 * A key<fry> value is one threefry key: two uint32 words, which
 * random_unwrap shows as a trailing dimension of 2 (core.physical_aval).
 * The key shape's sharding carries over to what is made from it
 * (keys_shaped_array, logical_sharding, physical_sharding); random_bits
 * adds unsharded dims for the sample shape. */

static int is_key(SrDtype d) { return strncmp(sr_dtype_name(d), "key<", 4) == 0; }

/* The implementation a key dtype is of (threefry for a key dtype
   shardrepl only names), and the uint32 words of one key. */
static int impl_of(SrDtype d) {
  int i = sr_prng_impl_of(d);
  return i < 0 ? SR_PRNG_FRY : i;
}
static int words_of(SrDtype d) { return sr_prng_key_words(impl_of(d)); }

/* random_seed's and random_wrap's impl param: the PRNGImpl's tag (fry,
   rbg, urbg, as jaxprs print it) or name; threefry when absent, -1 for
   another. */
static int impl_param(const SrVal *v) {
  if (!v) return SR_PRNG_FRY;
  if (v->kind != SR_V_WORD && v->kind != SR_V_STR) return -1;
  return sr_prng_impl_lookup(v->str.s);
}

static int impl_rparam(SrTypeCtx *cx, const SrRuleEqn *e, const char *prim) {
  int impl = impl_param(sr_rparam(e, "impl"));
  if (impl < 0) sr_terr(cx, "TypeError", "%s: unknown PRNG implementation", prim);
  return impl;
}

/* A result of x's shape and sharding (its unreduced, reduced and weak
   marks dropped) with dtype dt. */
static void like(SrTypeBuilder *b, const SrType *x, SrDtype dt) {
  sr_type_builder(b, x);
  b->dtype = dt;
  b->weak = 0;
  b->unreduced = b->reduced = 0;
  b->ukind = SR_UK_NONE;
}

/* eval rules of the PRNG primitives -- random_seed,
 * random_bits, random_wrap, random_unwrap, threefry2x32 -- and of
 * bitcast_convert_type, on the kernels of prng.c.
 *
 * They compute what the eager jax.random functions (builtins_exec.c)
 * compute, with the same kernels: random_bits fills each device's block
 * by itself (the partitionable threefry), so a jitted
 * jax.random.normal(key, shape) -- random_bits, then _uniform's float
 * ops, erf_inv and the multiply by sqrt(2) as JAX's jaxpr has them --
 * gives the eager result bit for bit.  A key<fry> element is its two
 * uint32 words, so random_wrap, random_unwrap and bitcast_convert_type
 * move no bytes. */

static unsigned prng_flags(const SrEvalCtx *cx) {
  if (!cx->I || !cx->I->jax) return 0;
  return (cx->I->jax->enable_x64 ? SR_PRNG_X64 : 0) | (cx->I->jax->threefry_original ? SR_PRNG_ORIGINAL : 0);
}

/* a on mesh m laid out as want (a rank-0 meshless operand stays so). */
static SrArray *operand(SrEvalCtx *cx, SrArray *a, const SrMesh *m, const SrType *want) {
  if (!a->mesh && !a->type->ndim) return sr_array_ref(a);
  return sr_redistribute(cx, a, m, want);
}

/* A layout like l with one more trailing dim of size n (unsplit) and
   dtype dt, or with its last dim dropped (n < 0). */
static const SrType *with_trailing(const SrType *l, int64_t n, SrDtype dt) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  b.dtype = dt;
  if (n < 0) {
    b.ndim--;
  } else {
    memset(&b.dims[b.ndim], 0, sizeof b.dims[0]);
    b.dims[b.ndim].size = n;
    b.ndim++;
  }
  return sr_type_get(&b);
}

/* ==== random_seed ==== */

/* random_seed_abstract_eval: keys of the seeds' shape and sharding. */
static int type_random_seed(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *s = e->in[0];
  if (!sr_dtype_in(s->dtype, SR_DC_INT))
    return sr_terr(cx, "TypeError", "PRNG key seed must be an integer; got %s", sr_type_short(s));
  int impl = impl_rparam(cx, e, "random_seed");
  if (impl < 0) return -1;
  SrTypeBuilder b;
  like(&b, s, sr_prng_key_dtype(impl));
  return sr_finish_type(cx, e, &b, out);
}

typedef struct SeedArg {
  SrDtype dt; /* the seeds' */
  int impl;
} SeedArg;

static int seed_fn(SrShardIO *io) {
  const SeedArg *a = io->arg;
  size_t es = sr_elem_size(a->dt);
  size_t n = io->in[0]->nbytes / es;
  uint32_t *o = io->out[0]->data;
  /* threefry_seed: the high word of a 64-bit seed, else 0; the low word */
  unsigned f = sr_dtype_info(a->dt)->bits == 64 ? SR_PRNG_X64 : 0;
  for (size_t i = 0; i < n; i++) {
    int64_t seed = sr_kern_get_i64(a->dt, (const char *)io->in[0]->data + i * es);
    if (a->impl == SR_PRNG_FRY) sr_prng_key_ex(seed, f, o + 2 * i);
    else sr_prng_rbg_seed(seed, f, o + 4 * i);
  }
  return 0;
}

static int ev_random_seed(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SeedArg a = {e->in[0]->type->dtype, impl_of(t->dtype)};
  SrArray *x = operand(cx, e->in[0], m, sr_layout_with_dtype(l, a.dt));
  if (!x) return -1;
  e->out[0] = sr_array_new(t, l, m);
  int rc = sr_ev_map(cx, 1, &x, 1, e->out, 0, seed_fn, &a);
  sr_array_unref(x);
  return rc;
}

/* ==== random_bits ==== */

/* random_bits_abstract_eval: uint{bit_width}[*keys.shape, *shape], the
   keys' spec followed by None for the sample dims. */
static int type_random_bits(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *k = e->in[0];
  if (!is_key(k->dtype))
    return sr_terr(cx, "TypeError", "random_bits takes a key array operand, got %s", sr_type_short(k));
  int64_t bw = 0, shape[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_int(cx, e, "bit_width", 1, &bw) < 0) return -1;
  if (sr_rparam_ints(cx, e, "shape", 1, shape, SR_MAX_RANK, &n) < 0) return -1;
  SrDtype dt = bw == 8 ? SR_U8 : bw == 16 ? SR_U16 : bw == 32 ? SR_U32 : bw == 64 ? SR_U64 : SR_BOOL;
  if (dt == SR_BOOL) return sr_terr(cx, "TypeError", "random_bits: bit_width must be 8, 16, 32 or 64, got %lld", (long long)bw);
  if (k->ndim + n > SR_MAX_RANK) return sr_terr(cx, "ValueError", "random_bits: too many dimensions");
  SrTypeBuilder b;
  like(&b, k, dt);
  b.ndim = (uint8_t)(k->ndim + n);
  for (int i = 0; i < n; i++) {
    if (shape[i] < 0) return sr_terr(cx, "ValueError", "random_bits: negative dimension %lld", (long long)shape[i]);
    memset(&b.dims[k->ndim + i], 0, sizeof b.dims[0]);
    b.dims[k->ndim + i].size = shape[i];
  }
  return sr_finish_type(cx, e, &b, out);
}

typedef struct BitsArg {
  int nk, ns;                 /* key dims, sample dims */
  int64_t shape[SR_MAX_RANK]; /* the sample shape */
  int64_t keys[SR_MAX_RANK];  /* the key shape */
  int bw;
  int impl;
  unsigned flags;
} BitsArg;

/* The keys whole on every device (rbg draws from the first key). */
static SrArray *keys_whole(SrEvalCtx *cx, SrArray *k, const SrMesh *m) {
  SrTypeBuilder kb;
  sr_type_builder(&kb, sr_layout_of_type(k->type));
  for (int d = 0; d < kb.ndim; d++) kb.dims[d].nax = 0;
  return operand(cx, k, m, sr_type_get(&kb));
}

/* The row-major index among all keys of the i-th key of a device's
   block (the block's first nk dims). */
static int64_t key_index(const BitsArg *b, const int64_t *start, const int64_t *count, int64_t i) {
  int64_t flat = 0, stride = 1;
  for (int d = b->nk - 1; d >= 0; d--) {
    flat += (start[d] + i % count[d]) * stride;
    i /= count[d];
    stride *= b->keys[d];
  }
  return flat;
}

/* rbg and unsafe_rbg: RngBitGenerator(key, shape) of the first key, its
   shape the keys' then the sample's (the batching of vmap over the keys,
   _rng_bit_generator_batching_rule) */
static int rbg_bits_of_keys_fn(SrShardIO *io) {
  const BitsArg *b = io->arg;
  if (io->in[0]->nbytes < 16) return 0; /* no keys, no bits */
  int64_t full[SR_MAX_RANK];
  memcpy(full, b->keys, (size_t)b->nk * sizeof *full);
  memcpy(full + b->nk, b->shape, (size_t)b->ns * sizeof *full);
  uint64_t st[2];
  sr_rbg_state_of_words(io->in[0]->data, st);
  if (sr_rbg_bits_block(st, SR_RBG_PHILOX, b->bw, b->nk + b->ns, full, io->out_start, io->out_shape[0], io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "TypeError", "requires 8-, 16-, 32- or 64-bit field width.");
  return 0;
}

static int bits_fn(SrShardIO *io) {
  const BitsArg *b = io->arg;
  const uint32_t *keys = io->in[0]->data;
  size_t nkeys = io->in[0]->nbytes / 8;
  const int64_t *start = io->out_start + b->nk, *count = io->out_shape[0] + b->nk;
  int64_t per = 1;
  for (int i = 0; i < b->ns; i++) per *= count[i];
  char *out = io->out[0]->data;
  for (size_t k = 0; k < nkeys; k++)
    if (sr_prng_bits_block(keys + 2 * k, b->bw, b->ns, b->shape, start, count, b->flags,
                           out + (size_t)k * (size_t)per * (size_t)(b->bw / 8)) < 0)
      return sr_ev_err(io->cx, "TypeError", "random_bits of width %d is not supported", b->bw);
  return 0;
}

static int ev_random_bits(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  BitsArg b;
  memset(&b, 0, sizeof b);
  int64_t bw;
  if (sr_ev_param_int(cx, e, "bit_width", &bw) < 0 || sr_ev_param_ints(cx, e, "shape", b.shape, SR_MAX_RANK, &b.ns) < 0)
    return -1;
  b.bw = (int)bw;
  b.nk = e->in[0]->type->ndim;
  b.flags = prng_flags(cx);
  b.impl = impl_of(e->in[0]->type->dtype);
  for (int i = 0; i < b.nk; i++) b.keys[i] = e->in[0]->type->dims[i].size;
  if (b.impl != SR_PRNG_FRY) {
    SrArray *k = keys_whole(cx, e->in[0], m);
    if (!k) return -1;
    e->out[0] = sr_array_new(t, l, m);
    int rc = sr_ev_map(cx, 1, &k, 1, e->out, SR_MAP_BLOCK, rbg_bits_of_keys_fn, &b);
    sr_array_unref(k);
    return rc;
  }
  /* the keys laid out as the result's leading dims */
  const SrType *kl = l;
  for (int i = 0; i < b.ns; i++) kl = with_trailing(kl, -1, e->in[0]->type->dtype);
  if (!b.ns) kl = sr_layout_with_dtype(l, e->in[0]->type->dtype);
  SrArray *k = operand(cx, e->in[0], m, kl);
  if (!k) return -1;
  e->out[0] = sr_array_new(t, l, m);
  int rc = sr_ev_map(cx, 1, &k, 1, e->out, SR_MAP_BLOCK, bits_fn, &b);
  sr_array_unref(k);
  return rc;
}

/* ==== random_split, random_fold_in ==== */

/* random_split_abstract_eval: keys of shape [*keys.shape, *shape], the
   keys' spec followed by None for the new dims. */
static int type_random_split(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *k = e->in[0];
  if (!is_key(k->dtype))
    return sr_terr(cx, "TypeError", "random_split takes a key array operand, got %s", sr_type_short(k));
  int64_t shape[SR_MAX_RANK];
  int n = 0;
  if (sr_rparam_ints(cx, e, "shape", 1, shape, SR_MAX_RANK, &n) < 0) return -1;
  if (k->ndim + n > SR_MAX_RANK) return sr_terr(cx, "ValueError", "random_split: too many dimensions");
  SrTypeBuilder b;
  like(&b, k, k->dtype);
  b.ndim = (uint8_t)(k->ndim + n);
  for (int i = 0; i < n; i++) {
    if (shape[i] < 0) return sr_terr(cx, "ValueError", "random_split: negative dimension %lld", (long long)shape[i]);
    memset(&b.dims[k->ndim + i], 0, sizeof b.dims[0]);
    b.dims[k->ndim + i].size = shape[i];
  }
  return sr_finish_type(cx, e, &b, out);
}

/* Each key's split into prod(shape) keys; the device's block of them.
   The keys are the block's (threefry, rbg), or all of them (unsafe_rbg,
   which draws from the first). */
static int split_fn(SrShardIO *io) {
  const BitsArg *b = io->arg;
  const uint32_t *keys = io->in[0]->data;
  int w = sr_prng_key_words(b->impl);
  int64_t nkeys = 1;
  for (int d = 0; d < b->nk; d++) nkeys *= io->out_shape[0][d];
  const int64_t *start = io->out_start + b->nk, *count = io->out_shape[0] + b->nk;
  int64_t per = 1, num = 1;
  for (int i = 0; i < b->ns; i++) per *= count[i], num *= b->shape[i];
  if (!per || !nkeys) return 0;
  uint32_t *all = sr_try_malloc((size_t)(num ? num : 1) * (size_t)w * 4);
  if (!all) return sr_ev_err(io->cx, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory in random_split");
  uint32_t *out = io->out[0]->data;
  for (int64_t k = 0; k < nkeys; k++) {
    int rc = 0;
    if (b->impl == SR_PRNG_FRY) sr_prng_split_ex(keys + 2 * k, num, b->flags, all);
    else if (b->impl == SR_PRNG_RBG) rc = sr_prng_rbg_split(keys + 4 * k, num, b->flags, all);
    else sr_prng_urbg_split(keys, key_index(b, io->out_start, io->out_shape[0], k), num, all);
    if (rc < 0) {
      free(all);
      return sr_ev_err(io->cx, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory in random_split");
    }
    for (int64_t j = 0; j < per; j++) {
      /* j's position in the block, then in the whole sample shape */
      int64_t rem = j, flat = 0, stride = 1;
      for (int d = b->ns - 1; d >= 0; d--) {
        int64_t c = rem % count[d];
        rem /= count[d];
        flat += (start[d] + c) * stride;
        stride *= b->shape[d];
      }
      memcpy(out + (size_t)w * (size_t)(k * per + j), all + (size_t)w * (size_t)flat, (size_t)w * 4);
    }
  }
  free(all);
  return 0;
}

static int ev_random_split(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  BitsArg b;
  memset(&b, 0, sizeof b);
  if (sr_ev_param_ints(cx, e, "shape", b.shape, SR_MAX_RANK, &b.ns) < 0) return -1;
  b.nk = e->in[0]->type->ndim;
  b.flags = prng_flags(cx);
  b.impl = impl_of(e->in[0]->type->dtype);
  for (int i = 0; i < b.nk; i++) b.keys[i] = e->in[0]->type->dims[i].size;
  const SrType *kl = l;
  for (int i = 0; i < b.ns; i++) kl = with_trailing(kl, -1, e->in[0]->type->dtype);
  SrArray *k = b.impl == SR_PRNG_URBG ? keys_whole(cx, e->in[0], m) : operand(cx, e->in[0], m, kl);
  if (!k) return -1;
  e->out[0] = sr_array_new(t, l, m);
  int rc = sr_ev_map(cx, 1, &k, 1, e->out, SR_MAP_BLOCK, split_fn, &b);
  sr_array_unref(k);
  return rc;
}

/* random_fold_in_abstract_eval: the broadcast of keys and uint32 msgs
   (equal shapes, or one of them a scalar). */
static int type_random_fold_in(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *k = e->in[0], *d = e->in[1];
  if (!is_key(k->dtype))
    return sr_terr(cx, "TypeError", "random_fold_in takes a key array operand, got %s", sr_type_short(k));
  if (d->dtype != SR_U32)
    return sr_terr(cx, "TypeError", "random_fold_in takes uint32 messages, got %s", sr_type_short(d));
  int same = k->ndim == d->ndim;
  for (int i = 0; same && i < k->ndim; i++) same = k->dims[i].size == d->dims[i].size;
  if (!same && k->ndim && d->ndim) {
    SrBuf s1 = SR_BUF_INIT, s2 = SR_BUF_INIT;
    sr_shape_str(&s1, k);
    sr_shape_str(&s2, d);
    sr_terr(cx, "TypeError", "random_fold_in got incompatible shapes for broadcasting: %s, %s.", sr_buf_str(&s1),
            sr_buf_str(&s2));
    sr_buf_free(&s1);
    sr_buf_free(&s2);
    return -1;
  }
  SrTypeBuilder b;
  like(&b, k->ndim || !d->ndim ? k : d, k->dtype);
  return sr_finish_type(cx, e, &b, out);
}

static int fold_in_fn(SrShardIO *io) {
  const int *impl = io->arg;
  const uint32_t *keys = io->in[0]->data, *msgs = io->in[1]->data;
  /* as many keys as the result holds: none for an empty batch (nk or nm 0) */
  size_t w = (size_t)sr_prng_key_words(*impl);
  size_t nk = io->in[0]->nbytes / (4 * w), nm = io->in[1]->nbytes / 4, n = io->out[0]->nbytes / (4 * w);
  uint32_t *out = io->out[0]->data;
  for (size_t i = 0; i < n; i++) {
    const uint32_t *k = keys + w * (nk == 1 ? 0 : i);
    if (*impl == SR_PRNG_FRY) sr_prng_fold_in(k, msgs[nm == 1 ? 0 : i], out + 2 * i);
    else sr_prng_rbg_fold_in(k, msgs[nm == 1 ? 0 : i], out + 4 * i);
  }
  return 0;
}

/* unsafe_rbg on all the keys and messages: RngBitGenerator of the first
   message's seed, a row for each message when they are batched, as vmap
   batches it (_rng_bit_generator_batching_rule) */
static int urbg_fold_in_fn(SrShardIO *io) {
  const BitsArg *b = io->arg;
  const uint32_t *keys = io->in[0]->data, *msgs = io->in[1]->data;
  int64_t nk = (int64_t)(io->in[0]->nbytes / 16), nm = (int64_t)(io->in[1]->nbytes / 4), n = 1;
  for (int d = 0; d < b->nk; d++) n *= io->out_shape[0][d];
  if (!nm) return 0;
  uint32_t *out = io->out[0]->data;
  for (int64_t i = 0; i < n; i++) {
    int64_t g = key_index(b, io->out_start, io->out_shape[0], i);
    sr_prng_urbg_fold_in(keys + 4 * (nk == 1 ? 0 : g), msgs[0], b->ns ? g : 0, out + 4 * i);
  }
  return 0;
}

static int ev_random_fold_in(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  int impl = impl_of(t->dtype);
  if (impl == SR_PRNG_URBG) {
    BitsArg b;
    memset(&b, 0, sizeof b);
    b.nk = t->ndim;
    b.ns = e->in[1]->type->ndim > 0; /* the messages batched */
    for (int i = 0; i < t->ndim; i++) b.keys[i] = t->dims[i].size;
    SrArray *w[2] = {keys_whole(cx, e->in[0], m), NULL};
    w[1] = w[0] ? keys_whole(cx, e->in[1], m) : NULL;
    int rc = -1;
    if (w[1]) {
      e->out[0] = sr_array_new(t, l, m);
      rc = sr_ev_map(cx, 2, w, 1, e->out, SR_MAP_BLOCK, urbg_fold_in_fn, &b);
    }
    sr_array_unref(w[0]);
    if (w[1]) sr_array_unref(w[1]);
    return rc;
  }
  SrArray *in[2];
  for (int i = 0; i < 2; i++) {
    SrArray *a = e->in[i];
    in[i] = a->type->ndim || !t->ndim ? operand(cx, a, m, sr_layout_with_dtype(l, a->type->dtype)) : sr_array_ref(a);
    if (!in[i]) {
      if (i) sr_array_unref(in[0]);
      return -1;
    }
  }
  e->out[0] = sr_array_new(t, l, m);
  int rc = sr_ev_map(cx, 2, in, 1, e->out, 0, fold_in_fn, &impl);
  sr_array_unref(in[0]);
  sr_array_unref(in[1]);
  return rc;
}

/* ==== random_wrap, random_unwrap, bitcast_convert_type: no bytes move ==== */

/* random_wrap_abstract_eval: uint32[..., 2] becomes keys of shape [...]
   (logical_sharding drops the key data's trailing dim). */
static int type_random_wrap(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int impl = impl_rparam(cx, e, "random_wrap");
  if (impl < 0) return -1;
  int w = sr_prng_key_words(impl);
  if (x->dtype != SR_U32 || !x->ndim || x->dims[x->ndim - 1].size != w) {
    SrBuf s = SR_BUF_INIT;
    sr_shape_str(&s, x);
    sr_terr(cx, "TypeError",
            "random_wrap: expected key data of dtype uint32 with a trailing dimension of %d (the %s key "
            "shape (%d,)); got dtype=%s and shape=%s",
            w, sr_prng_impl_name(impl), w, sr_dtype_name(x->dtype), sr_buf_str(&s));
    sr_buf_free(&s);
    return -1;
  }
  if (x->dims[x->ndim - 1].nax)
    return sr_terr(cx, "ValueError", "random_wrap: the key data's trailing dimension must not be sharded, got %s",
                   sr_type_short(x));
  SrTypeBuilder b;
  like(&b, x, sr_prng_key_dtype(impl));
  b.ndim--;
  return sr_finish_type(cx, e, &b, out);
}

static int ev_random_wrap(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = operand(cx, e->in[0], m, with_trailing(l, words_of(t->dtype), SR_U32));
  if (!x) return -1;
  e->out[0] = sr_array_retype(x, t, l);
  sr_array_unref(x);
  return 0;
}

/* random_wrap_batch_rule: the batch dim in front (it may be the key
   data's trailing dim of 2 no longer), then random_wrap. */
static int batch_random_wrap(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *a = sr_batch_at_front(b, x[0], bd[0], 1);
  return a ? sr_batch_bind_same(b, e, &a, 0, y, ybd) : -1;
}

/* defbroadcasting for random_fold_in: the mapped operands' batch dims in
   front; an unmapped scalar stays one (the primitive broadcasts it). */
static int batch_random_fold_in(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *a[2];
  for (int i = 0; i < 2; i++) {
    const SrType *t = sr_ad_type(&b->ad, x[i]);
    a[i] = bd[i] == SR_NOT_MAPPED && t && !t->ndim ? x[i] : sr_batch_at_front(b, x[i], bd[i], b->size);
    if (!a[i]) return -1;
  }
  return sr_batch_bind_same(b, e, a, 0, y, ybd);
}

/* random_unwrap_abstract_eval: core.physical_aval, uint32[*keys.shape, 2]. */
static int type_random_unwrap(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *k = e->in[0];
  if (!is_key(k->dtype))
    return sr_terr(cx, "TypeError", "random_unwrap takes key array operand, got keys.dtype=dtype('%s')", sr_dtype_name(k->dtype));
  if (k->ndim + 1 > SR_MAX_RANK) return sr_terr(cx, "ValueError", "random_unwrap: too many dimensions");
  SrTypeBuilder b;
  like(&b, k, SR_U32);
  memset(&b.dims[b.ndim], 0, sizeof b.dims[0]);
  b.dims[b.ndim].size = words_of(k->dtype);
  b.ndim++;
  return sr_finish_type(cx, e, &b, out);
}

static int ev_random_unwrap(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = operand(cx, e->in[0], m, with_trailing(l, -1, e->in[0]->type->dtype));
  if (!x) return -1;
  e->out[0] = sr_array_retype(x, t, l);
  sr_array_unref(x);
  return 0;
}

/* lax.bitcast_convert_type: _bitcast_convert_type_dtype_rule (bool and
   complex only to themselves), _shape_rule (a wider dtype gains a
   trailing dim of old_nbits // new_nbits, a narrower one takes the
   trailing dim whose bits it holds) and _sharding_rule (the spec gains an
   unsharded trailing dim, or loses its last). */
static int type_bitcast(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  SrDtype dt;
  int present = 0;
  if (sr_rparam_dtype(cx, e, "new_dtype", &dt, &present) < 0) return -1;
  if (!present) return sr_terr(cx, "TypeError", "bitcast_convert_type needs a new_dtype");
  int odd = x->dtype == SR_BOOL || sr_dtype_is_complex(x->dtype) || dt == SR_BOOL || sr_dtype_is_complex(dt);
  if (odd && x->dtype != dt)
    return sr_terr(cx, "TypeError",
                   "lax.bitcast_convert_type does not support bool or complex values unless the operand and "
                   "destination types match. Got operand dtype=%s, new_dtype=dtype('%s'). Consider using the "
                   "arr.view() method instead.",
                   sr_dtype_name(x->dtype), sr_dtype_name(dt));
  int old_bits = sr_dtype_info(x->dtype)->bits, new_bits = sr_dtype_info(dt)->bits;
  if (!old_bits || !new_bits || sr_dtype_kind(x->dtype) == SR_DK_OTHER || sr_dtype_kind(dt) == SR_DK_OTHER)
    return sr_terr(cx, "TypeError", "bitcast_convert_type from %s to %s is not supported", sr_dtype_name(x->dtype),
                   sr_dtype_name(dt));
  int64_t last = x->ndim ? x->dims[x->ndim - 1].size : 1;
  if (old_bits < new_bits && last * old_bits != new_bits) {
    SrBuf s = SR_BUF_INIT;
    sr_shape_str(&s, x);
    sr_terr(cx, "ValueError",
            "Attempting to convert array of shape %s from %s of size %d bits to %s of size %d, bits but %lld * %d "
            "!= %d",
            sr_buf_str(&s), sr_dtype_name(x->dtype), old_bits, sr_dtype_name(dt), new_bits, (long long)last,
            old_bits, new_bits);
    sr_buf_free(&s);
    return -1;
  }
  if (old_bits > new_bits && x->ndim + 1 > SR_MAX_RANK) return sr_terr(cx, "ValueError", "bitcast_convert_type: too many dimensions");
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  like(&b, x, dt);
  if (old_bits > new_bits) {
    memset(&b.dims[b.ndim], 0, sizeof b.dims[0]);
    b.dims[b.ndim++].size = old_bits / new_bits;
  } else if (old_bits < new_bits && b.ndim) {
    b.ndim--;
  }
  if (s.mode != SR_MODE_EXPLICIT) sr_builder_replicate(&b);
  if (!b.mesh) b.mesh = s.mesh;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* The bit pattern of element i of a buffer of dtype bits wide (sub-byte
   dtypes one to a byte), and its store. */
static uint64_t bits_at(const uint8_t *p, size_t i, int size, int bits) {
  uint64_t v = 0;
  for (int k = 0; k < size; k++) v |= (uint64_t)p[i * size + k] << (8 * k);
  return bits < 64 ? v & ((UINT64_C(1) << bits) - 1) : v;
}

static void bits_put(uint8_t *p, size_t i, int size, int bits, int is_signed, uint64_t v) {
  if (bits < 8 && is_signed && (v >> (bits - 1)) & 1) v |= ~UINT64_C(0) << bits; /* sign-extend int2/int4 */
  for (int k = 0; k < size; k++) p[i * size + k] = (uint8_t)(v >> (8 * k));
}

typedef struct BitcastArg {
  int in_size, in_bits, out_size, out_bits, out_signed;
} BitcastArg;

/* XLA's BitcastConvert as the host's little-endian memory has it: a wide
   element's pieces from its lowest bits up, narrow elements joined the
   same way. */
static int bitcast_fn(SrShardIO *io) {
  const BitcastArg *a = io->arg;
  const uint8_t *x = io->in[0]->data;
  uint8_t *y = io->out[0]->data;
  size_t n_in = io->in[0]->nbytes / (size_t)a->in_size, n_out = io->out[0]->nbytes / (size_t)a->out_size;
  if (a->in_bits >= a->out_bits) {
    int k = a->in_bits / a->out_bits;
    for (size_t i = 0; i < n_in; i++) {
      uint64_t v = bits_at(x, i, a->in_size, a->in_bits);
      for (int j = 0; j < k && i * k + j < n_out; j++) {
        uint64_t piece = a->out_bits < 64 ? (v >> (j * a->out_bits)) & ((UINT64_C(1) << a->out_bits) - 1) : v;
        bits_put(y, i * k + j, a->out_size, a->out_bits, a->out_signed, piece);
      }
    }
  } else {
    int k = a->out_bits / a->in_bits;
    for (size_t i = 0; i < n_out; i++) {
      uint64_t v = 0;
      for (int j = 0; j < k && i * k + j < n_in; j++) v |= bits_at(x, i * k + j, a->in_size, a->in_bits) << (j * a->in_bits);
      bits_put(y, i, a->out_size, a->out_bits, a->out_signed, v);
    }
  }
  return 0;
}

static int ev_bitcast(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrDtype from = e->in[0]->type->dtype;
  const SrDtypeInfo *fi = sr_dtype_info(from), *ti = sr_dtype_info(t->dtype);
  if (fi->bits == ti->bits && fi->size == ti->size) {
    SrArray *x = operand(cx, e->in[0], m, sr_layout_with_dtype(l, from));
    if (!x) return -1;
    e->out[0] = sr_array_retype(x, t, x->mesh == m ? l : sr_layout_with_dtype(x->layout, t->dtype));
    sr_array_unref(x);
    return 0;
  }
  /* the operand laid out as the result, its trailing dim (of the pieces
     or of what they join) whole on each device */
  const SrType *want = fi->bits == ti->bits   ? sr_layout_with_dtype(l, from)
                       : fi->bits > ti->bits ? with_trailing(l, -1, from)
                                              : with_trailing(l, ti->bits / fi->bits, from);
  SrArray *x = operand(cx, e->in[0], m, want);
  if (!x) return -1;
  BitcastArg arg = {fi->size, fi->bits, ti->size, ti->bits, sr_dtype_kind(t->dtype) == SR_DK_INT};
  e->out[0] = sr_array_new(t, l, m);
  int rc = sr_ev_map(cx, 1, &x, 1, e->out, 0, bitcast_fn, &arg);
  sr_array_unref(x);
  return rc;
}

/* ==== threefry2x32 ==== */

/* _threefry2x32_abstract_eval: four uint32 operands broadcast together
   (lax.broadcasting_shape_rule, broadcasting_sharding_rule), two results
   of that type. */
static int type_threefry2x32(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 4, 2) < 0) return -1;
  const SrType *ts[4];
  sr_resolve_bare_literals(e, ts);
  for (int i = 0; i < 4; i++) {
    if (ts[i]->dtype == SR_U32) continue;
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int k = 0; k < 4; k++) {
      if (k) sr_buf_puts(&b, ", ");
      sr_aval_repr(&b, ts[k]);
    }
    sr_buf_putc(&b, ')');
    sr_terr(cx, "TypeError", "Arguments to threefry2x32 must have uint32 type, got %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  /* the result's shape: that of the operands that have one, whose sizes
     agree or are 1 */
  const SrType *ref = NULL;
  for (int i = 0; i < 4; i++)
    if (ts[i]->ndim) {
      if (ref && ref->ndim != ts[i]->ndim)
        return sr_terr(cx, "TypeError", "threefry2x32: arrays must have same number of dimensions, got %d and %d.",
                       ref->ndim, ts[i]->ndim);
      if (!ref) ref = ts[i];
    }
  SrTypeBuilder b;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  like(&b, ref ? ref : ts[0], SR_U32);
  if (!b.mesh) b.mesh = s.mesh;
  for (int d = 0; ref && d < ref->ndim; d++) {
    const SrType *w = NULL; /* the operand whose size this dim takes */
    for (int i = 0; i < 4; i++) {
      if (!ts[i]->ndim) continue;
      int64_t n = ts[i]->dims[d].size;
      if (n != 1 && w && w->dims[d].size != 1 && w->dims[d].size != n) {
        SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
        sr_shape_str(&a, w);
        sr_shape_str(&c, ts[i]);
        sr_terr(cx, "TypeError", "threefry2x32 got incompatible shapes for broadcasting: %s, %s.", sr_buf_str(&a),
                sr_buf_str(&c));
        sr_buf_free(&a);
        sr_buf_free(&c);
        return -1;
      }
      if (!w || (w->dims[d].size == 1 && n != 1)) w = ts[i];
      else if (s.mode == SR_MODE_EXPLICIT && n == w->dims[d].size && !sr_spec_entry_eq(w, d, ts[i], d))
        return sr_terr(cx, "ShardingTypeError",
                       "threefry2x32 got incompatible shardings for broadcasting: %s and %s in dimension %d.",
                       sr_type_short(w), sr_type_short(ts[i]), d);
    }
    b.dims[d] = w->dims[d];
    if (s.mode != SR_MODE_EXPLICIT) b.dims[d].nax = 0;
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_finish_type(cx, e, &b, &out[0]) < 0) return -1;
  out[1] = out[0];
  return 0;
}

typedef struct FryArg {
  int scalar[4];
  int bcast[4]; /* operand k has size-1 dims where the result has more */
  int nd;
} FryArg;

/* Element i of the shard (shape `out`) read from an operand of shape
   `in` that broadcasts along its size-1 dims. */
static size_t bcast_index(size_t i, int nd, const int64_t *out, const int64_t *in) {
  size_t r = 0, stride = 1;
  for (int d = nd - 1; d >= 0; d--) {
    size_t k = i % (size_t)out[d];
    i /= (size_t)out[d];
    if (in[d] != 1) r += k * stride;
    stride *= (size_t)in[d];
  }
  return r;
}

static int fry_fn(SrShardIO *io) {
  const FryArg *f = io->arg;
  size_t n = io->out[0]->nbytes / 4;
  const uint32_t *in[4];
  for (int i = 0; i < 4; i++) in[i] = io->in[i]->data;
  uint32_t *y0 = io->out[0]->data, *y1 = io->out[1]->data;
  int plain = !(f->bcast[0] | f->bcast[1] | f->bcast[2] | f->bcast[3]);
  if (plain && f->scalar[0] && f->scalar[1] && !f->scalar[2] && !f->scalar[3]) {
    uint32_t key[2] = {in[0][0], in[1][0]};
    sr_threefry2x32(key, n, in[2], in[3], y0, y1);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    size_t at[4];
    for (int k = 0; k < 4; k++)
      at[k] = f->scalar[k] ? 0 : f->bcast[k] ? bcast_index(i, f->nd, io->out_shape[0], io->in_shape[k]) : i;
    uint32_t key[2] = {in[0][at[0]], in[1][at[1]]};
    uint32_t x0 = in[2][at[2]], x1 = in[3][at[3]];
    sr_threefry2x32(key, 1, &x0, &x1, y0 + i, y1 + i);
  }
  return 0;
}

/* The layout an operand of type it takes for a result laid out as l:
   l's, its size-1 dims (broadcast) unsplit. */
static const SrType *fry_layout(const SrType *it, const SrType *l) {
  if (!it->ndim) return sr_layout_of_type(it);
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  for (int d = 0; d < b.ndim; d++)
    if (it->dims[d].size != l->dims[d].size) {
      b.dims[d].size = it->dims[d].size;
      b.dims[d].nax = 0;
    }
  return sr_type_get(&b);
}

static int ev_threefry2x32(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  FryArg f;
  memset(&f, 0, sizeof f);
  f.nd = t->ndim;
  SrArray *ops[4] = {0};
  int rc = 0;
  for (int i = 0; i < 4 && rc == 0; i++) {
    const SrType *it = e->in[i]->type;
    f.scalar[i] = it->ndim == 0 && t->ndim > 0;
    for (int d = 0; d < it->ndim; d++) f.bcast[i] |= it->dims[d].size != t->dims[d].size;
    if (!(ops[i] = operand(cx, e->in[i], m, fry_layout(it, l)))) rc = -1;
  }
  if (rc == 0) {
    e->out[0] = sr_array_new(t, l, m);
    e->out[1] = sr_array_new(e->out_type[1], l, m);
    rc = sr_ev_map(cx, 4, ops, 2, e->out, 0, fry_fn, &f);
  }
  for (int i = 0; i < 4; i++) sr_array_unref(ops[i]);
  return rc;
}

/* ==== rng_bit_generator ==== */

/* The algorithm param: a RandomAlgorithm member (its name, or its int);
   -1 if it is neither. */
static int rbg_algorithm(const SrVal *v) {
  static const char *const names[3] = {"RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"};
  if (!v) return SR_RBG_DEFAULT;
  if (v->kind == SR_V_INT) return v->i >= 0 && v->i <= 2 ? (int)v->i : -1;
  if (v->kind != SR_V_WORD && v->kind != SR_V_STR) return -1;
  const char *w = v->str.s;
  size_t n = v->str.n;
  if (n > 16 && memcmp(w, "RandomAlgorithm.", 16) == 0) w += 16, n -= 16;
  for (int i = 0; i < 3; i++)
    if (strlen(names[i]) == n && memcmp(w, names[i], n) == 0) return i;
  return -1;
}

/* _rng_bit_generator_shape_rule and friends: the key's type, and
   dtype[*shape] with out_sharding (None: the context mesh, replicated),
   varying over no axes.  The key is XLA's u64[2] state, or a u32[4] as
   JAX passes it (its lowering reshapes and bitcasts). */
static int type_rng_bit_generator(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 2) < 0) return -1;
  const SrType *k = e->in[0];
  if (k->ndim != 1 || !((k->dtype == SR_U32 && k->dims[0].size == 4) || (k->dtype == SR_U64 && k->dims[0].size == 2)))
    return sr_terr(cx, "TypeError", "rng_bit_generator: the key must be uint32[4] or uint64[2], got %s",
                   sr_type_short(k));
  int64_t shape[SR_MAX_RANK];
  int n = 0, has = 0;
  SrDtype dt = SR_U32;
  if (sr_rparam_ints(cx, e, "shape", 1, shape, SR_MAX_RANK, &n) < 0 || sr_rparam_dtype(cx, e, "dtype", &dt, &has) < 0)
    return -1;
  if (dt != SR_U8 && dt != SR_U16 && dt != SR_U32 && dt != SR_U64)
    return sr_terr(cx, "TypeError", "rng_bit_generator: unsupported dtype %s", sr_dtype_name(dt));
  if (rbg_algorithm(sr_rparam(e, "algorithm")) < 0)
    return sr_terr(cx, "TypeError", "rng_bit_generator: unknown algorithm");
  for (int i = 0; i < n; i++)
    if (shape[i] < 0) return sr_terr(cx, "ValueError", "rng_bit_generator: negative dimension %lld", (long long)shape[i]);
  SrStd st;
  if (sr_std_begin(cx, e, &st) < 0) return -1;
  SrShardSpec g;
  int given = 0;
  if (sr_rparam_sharding(cx, e, "out_sharding", n, &g, &given) < 0) return -1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = dt;
  b.ndim = (uint8_t)n;
  b.mesh = st.mesh;
  for (int i = 0; i < n; i++) b.dims[i].size = shape[i];
  if (given) sr_apply_shard(&b, &g);
  out[0] = k;
  return sr_finish_type(cx, e, &b, &out[1]);
}

typedef struct RbgArg {
  int alg, bw, nd, u32; /* u32: the key is uint32[4] */
  int64_t shape[SR_MAX_RANK];
} RbgArg;

/* XLA's u64[2] state from the key (the device's whole copy) */
static void rbg_state_in(const SrShardIO *io, uint64_t s[2]) {
  const RbgArg *r = io->arg;
  if (r->u32) {
    const uint32_t *w = io->in[0]->data;
    s[0] = (uint64_t)w[1] << 32 | w[0];
    s[1] = (uint64_t)w[3] << 32 | w[2];
  } else {
    memcpy(s, io->in[0]->data, 2 * sizeof *s);
  }
}

static int rbg_bits_fn(SrShardIO *io) {
  const RbgArg *r = io->arg;
  uint64_t st[2];
  rbg_state_in(io, st);
  if (sr_rbg_bits_block(st, r->alg, r->bw, r->nd, r->shape, io->out_start, io->out_shape[0], io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "TypeError", "rng_bit_generator of width %d is not supported", r->bw);
  return 0;
}

/* the new state, in the key's own form */
static int rbg_key_fn(SrShardIO *io) {
  const RbgArg *r = io->arg;
  uint64_t st[2], ns[2];
  rbg_state_in(io, st);
  sr_rbg_state(st, r->alg, r->bw, r->nd, r->shape, ns);
  /* ns's words (little-endian, as the bitcast), the device's block of them */
  uint32_t w[4];
  for (int i = 0; i < 2; i++) {
    w[2 * i] = (uint32_t)ns[i];
    w[2 * i + 1] = (uint32_t)(ns[i] >> 32);
  }
  size_t size = r->u32 ? 4 : 8;
  memcpy(io->out[0]->data, (char *)w + (size_t)io->out_start[0] * size, (size_t)io->out_shape[0][0] * size);
  return 0;
}

static int ev_rng_bit_generator(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *kt = e->out_type[0], *t = e->out_type[1];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  RbgArg r;
  memset(&r, 0, sizeof r);
  r.alg = rbg_algorithm(sr_ev_param(e, "algorithm"));
  if (r.alg == SR_RBG_DEFAULT) r.alg = SR_RBG_PHILOX; /* XLA's default on CPU and GPU */
  r.bw = (int)sr_dtype_info(t->dtype)->bits;
  r.nd = t->ndim;
  for (int i = 0; i < t->ndim; i++) r.shape[i] = t->dims[i].size;
  /* the key, whole */
  SrTypeBuilder kb;
  sr_type_builder(&kb, sr_layout_of_type(kt));
  kb.dims[0].nax = 0;
  SrArray *k = operand(cx, e->in[0], m, sr_type_get(&kb));
  if (!k) return -1;
  r.u32 = kt->dtype == SR_U32;
  e->out[1] = sr_array_new(t, sr_ev_out_layout(cx, e, 1, m), m);
  int rc = sr_ev_map(cx, 1, &k, 1, &e->out[1], SR_MAP_BLOCK, rbg_bits_fn, &r);
  if (rc == 0) {
    e->out[0] = sr_array_new(kt, sr_ev_out_layout(cx, e, 0, m), m);
    rc = sr_ev_map(cx, 1, &k, 1, &e->out[0], SR_MAP_BLOCK, rbg_key_fn, &r);
  }
  sr_array_unref(k);
  return rc;
}

/* threefry2x32 batches as batching.defbroadcasting (sr_batch_broadcast):
   unmapped operands get a leading 1 that the primitive broadcasts. */

/* ==== registration ==== */

/* ==== random_gamma ==== */

/* _random_gamma_abstract_eval: a's type.  The keys' shape is a prefix of
   a's (one key, or a key per batch element under vmap). */
static int type_random_gamma(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *k = e->in[0], *a = e->in[1];
  if (!is_key(k->dtype))
    return sr_terr(cx, "TypeError", "random_gamma takes a key array operand, got %s", sr_type_short(k));
  if (!sr_dtype_is_float(a->dtype))
    return sr_terr(cx, "TypeError", "random_gamma: a must be a float array, got %s", sr_type_short(a));
  int ok = k->ndim <= a->ndim;
  for (int i = 0; ok && i < k->ndim; i++) ok = k->dims[i].size == a->dims[i].size;
  if (!ok)
    return sr_terr(cx, "TypeError", "random_gamma: the keys' shape %s is not a prefix of a's %s", sr_type_short(k),
                   sr_type_short(a));
  int log_space = 0;
  if (sr_rparam_bool(cx, e, "log_space", 1, &log_space) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, a);
  return sr_finish_type(cx, e, &b, out);
}

typedef struct GammaArg {
  int nk, nd;                 /* key dims, a's dims */
  int64_t shape[SR_MAX_RANK]; /* a's shape */
  SrDtype dt;
  int log_space;
  unsigned flags;
  int impl; /* SR_PRNG_FRY or SR_PRNG_RBG */
} GammaArg;

/* A scalar normal or uniform draw of dtype dt, as a double: threefry's,
   or the float ops on rbg's RngBitGenerator bits of shape (). */
static double draw(int impl, const uint32_t *key, SrDtype dt, unsigned flags, int normal) {
  float f;
  double d;
  SrDtype ft = dt == SR_F64 ? SR_F64 : SR_F32;
  void *o = dt == SR_F64 ? (void *)&d : (void *)&f;
  if (impl == SR_PRNG_FRY) {
    if (normal) sr_prng_normal_ex(key, ft, 0, NULL, flags, o);
    else sr_prng_uniform_ex(key, ft, 0, NULL, 0.0, 1.0, flags, o);
  } else {
    uint64_t st[2], bits = 0;
    sr_rbg_state_of_words(key, st);
    sr_rbg_bits_block(st, SR_RBG_PHILOX, sr_prng_rng_width(ft), 0, NULL, NULL, NULL, &bits);
    if (normal) sr_prng_normal_of_bits(ft, &bits, 1, flags, o);
    else sr_prng_uniform_of_bits(ft, &bits, 1, 0.0, 1.0, flags, o);
  }
  return dt == SR_F64 ? d : f;
}

/* split(key, num) of threefry (2 words a key) or rbg (4) */
static int split_k(int impl, const uint32_t *key, int64_t num, unsigned flags, uint32_t *out) {
  if (impl == SR_PRNG_FRY) {
    sr_prng_split_ex(key, num, flags, out);
    return 0;
  }
  return sr_prng_rbg_split(key, num, flags, out);
}

/* _gamma_one(key, alpha, log_space) of random/core.py: Marsaglia and
   Tsang's rejection sampler, with the same keys split in the same order,
   in the precision of dt (R rounds each step to float32 for f32; half
   types are computed in float32). */
#define R(x) (f64 ? (double)(x) : (double)(float)(x))
static double gamma_one(const uint32_t *key0, double alpha, const GammaArg *g) {
  int f64 = g->dt == SR_F64;
  unsigned fl = g->flags;
  SrDtype dt = g->dt;
  int impl = g->impl;
  size_t kw = impl == SR_PRNG_FRY ? 2 : 4, kb = kw * sizeof(uint32_t);
  double third = R(1.0 / 3.0), squeeze = R(0.0331);
  int boost_mask = alpha >= 1.0;
  double alpha_orig = alpha;
  alpha = boost_mask ? alpha : R(alpha + 1.0);
  double d = R(alpha - third);
  double c = R(third / R(f64 ? sqrt(d) : sqrtf((float)d)));
  uint32_t ks[12], key[4], subkey[4];
  split_k(impl, key0, 2, fl, ks);
  memcpy(key, ks, kb);
  memcpy(subkey, ks + kw, kb);
  double X = 0, V = 1, U = 2;
  for (;;) {
    /* _cond_fn: keep going while U >= 1 - 0.0331 X^2 and
       log U >= X / 2 + d (1 - V + log V) */
    double lu = f64 ? log(U) : logf((float)U), lv = f64 ? log(V) : logf((float)V);
    int again = U >= R(1.0 - R(squeeze * R(X * X))) && lu >= R(R(X * 0.5) + R(d * R(R(1.0 - V) + lv)));
    if (!again) break;
    split_k(impl, key, 3, fl, ks);
    memcpy(key, ks, kb);
    uint32_t xkey[4], ukey[4];
    memcpy(xkey, ks + kw, kb);
    memcpy(ukey, ks + 2 * kw, kb);
    double x = 0, v = -1;
    while (v <= 0) {
      uint32_t kk[8];
      split_k(impl, xkey, 2, fl, kk);
      memcpy(xkey, kk, kb);
      x = draw(impl, kk + kw, dt, fl, 1);
      v = R(1.0 + R(x * c));
    }
    X = R(x * x);
    V = R(R(v * v) * v);
    U = draw(impl, ukey, dt, fl, 0);
  }
  if (g->log_space) {
    /* log_samples = -exponential(subkey) = log1p(-uniform(subkey)) */
    double u = draw(impl, subkey, dt, fl, 0);
    double ls = f64 ? log1p(-u) : sr_prng_log1p_f32((float)-u);
    double lb = boost_mask || ls == 0 ? 0 : R(ls * R(1.0 / alpha_orig));
    double ld = f64 ? log(d) : logf((float)d), lV = f64 ? log(V) : logf((float)V);
    return R(R(ld + lV) + lb);
  }
  double samples = R(1.0 - draw(impl, subkey, dt, fl, 0));
  double boost = boost_mask ? 1.0 : f64 ? pow(samples, 1.0 / alpha_orig) : powf((float)samples, (float)(1.0 / alpha_orig));
  return R(R(d * V) * boost);
}
#undef R

static int gamma_fn(SrShardIO *io) {
  const GammaArg *g = io->arg;
  const uint32_t *keys = io->in[0]->data;
  const char *alpha = io->in[1]->data;
  char *out = io->out[0]->data;
  const int64_t *start = io->out_start, *count = io->out_shape[0];
  size_t es = sr_elem_size(g->dt), n = io->out[0]->nbytes / es;
  int64_t num = 1;
  for (int d = g->nk; d < g->nd; d++) num *= g->shape[d];
  uint32_t *all = NULL;
  size_t kw = g->impl == SR_PRNG_FRY ? 2 : 4;
  if ((g->flags & SR_PRNG_ORIGINAL) || g->impl != SR_PRNG_FRY) {
    all = sr_try_malloc((size_t)(num ? num : 1) * kw * 4);
    if (!all) return sr_ev_err(io->cx, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory in random_gamma");
  }
  int64_t last_key = -1;
  for (size_t j = 0; j < n; j++) {
    /* j's key (its block-local leading index) and its place q among the
       key's num samples (global trailing index) */
    int64_t rem = (int64_t)j, kidx = 0, kstride = 1, q = 0, qstride = 1;
    for (int d = g->nd - 1; d >= 0; d--) {
      int64_t cd = rem % count[d];
      rem /= count[d];
      if (d >= g->nk) {
        q += (start[d] + cd) * qstride;
        qstride *= g->shape[d];
      } else {
        kidx += cd * kstride;
        kstride *= count[d];
      }
    }
    uint32_t sub[4];
    if (all) {
      if (kidx != last_key && split_k(g->impl, keys + kw * kidx, num, g->flags, all) < 0) {
        free(all);
        return sr_ev_err(io->cx, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory in random_gamma");
      }
      last_key = kidx;
      memcpy(sub, all + kw * q, kw * 4);
    } else {
      sr_prng_fold_in(keys + 2 * kidx, (uint32_t)q, sub);
    }
    double a = sr_kern_get_f64(g->dt, alpha + j * es);
    sr_kern_set_scalar(g->dt, gamma_one(sub, a, g), 0, out + j * es);
  }
  free(all);
  return 0;
}

static int ev_random_gamma(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  if (impl_of(e->in[0]->type->dtype) == SR_PRNG_URBG)
    return sr_ev_err(cx, "NotImplementedError",
                     "random_gamma of %s keys is not supported yet (only threefry2x32 and rbg)",
                     sr_prng_impl_name(impl_of(e->in[0]->type->dtype)));
  GammaArg g;
  memset(&g, 0, sizeof g);
  SrVal *ls = sr_ev_param(e, "log_space");
  g.log_space = ls && sr_val_truthy(ls) > 0;
  g.nk = e->in[0]->type->ndim;
  g.nd = t->ndim;
  for (int i = 0; i < g.nd; i++) g.shape[i] = t->dims[i].size;
  g.dt = t->dtype;
  g.flags = prng_flags(cx);
  g.impl = impl_of(e->in[0]->type->dtype);
  /* the keys laid out as the result's leading dims, a as the result */
  const SrType *kl = l;
  for (int i = g.nk; i < g.nd; i++) kl = with_trailing(kl, -1, e->in[0]->type->dtype);
  if (g.nk == g.nd) kl = sr_layout_with_dtype(l, e->in[0]->type->dtype);
  SrArray *in[2] = {operand(cx, e->in[0], m, kl), NULL};
  in[1] = in[0] ? operand(cx, e->in[1], m, l) : NULL;
  int rc = -1;
  if (in[1]) {
    e->out[0] = sr_array_new(t, l, m);
    rc = sr_ev_map(cx, 2, in, 1, e->out, SR_MAP_BLOCK, gamma_fn, &g);
  }
  sr_array_unref(in[0]);
  if (in[1]) sr_array_unref(in[1]);
  return rc;
}

/* vmap: the batch dims of both operands to the front (an unbatched key
   broadcast), as _gamma_batching_rule does. */
static int batch_random_gamma(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrVal *a[2];
  for (int i = 0; i < 2; i++)
    if (!(a[i] = sr_batch_at_front(b, x[i], bd[i], b->size))) return -1;
  return sr_batch_bind_same(b, e, a, 0, y, ybd);
}

/* ==== random_clone: the key as it is (key reuse checking's copy) ==== */

/* random_clone_p.def_abstract_eval(lambda x: x) */
static int type_random_clone(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  out[0] = e->in[0];
  return 0;
}

/* dispatch.simple_impl, lowered to its operand */
static int ev_random_clone(SrEvalCtx *cx, const SrEvalEqn *e) {
  (void)cx;
  e->out[0] = sr_array_ref(e->in[0]);
  return 0;
}

static void type_rules_random(void) {
  sr_set_type_rule(SR_P_random_clone, type_random_clone);
  sr_set_type_rule(SR_P_random_seed, type_random_seed);
  sr_set_type_rule(SR_P_random_bits, type_random_bits);
  sr_set_type_rule(SR_P_random_wrap, type_random_wrap);
  sr_set_type_rule(SR_P_random_unwrap, type_random_unwrap);
  sr_set_type_rule(SR_P_random_split, type_random_split);
  sr_set_type_rule(SR_P_random_fold_in, type_random_fold_in);
  sr_set_type_rule(SR_P_threefry2x32, type_threefry2x32);
  sr_set_type_rule(SR_P_random_gamma, type_random_gamma);
  sr_set_type_rule(SR_P_bitcast_convert_type, type_bitcast);
  sr_set_type_rule(SR_P_rng_bit_generator, type_rng_bit_generator);
}

static void eval_rules_random(void) {
  sr_set_eval_rule(SR_P_random_clone, ev_random_clone);
  sr_set_eval_rule(SR_P_random_seed, ev_random_seed);
  sr_set_eval_rule(SR_P_random_bits, ev_random_bits);
  sr_set_eval_rule(SR_P_random_wrap, ev_random_wrap);
  sr_set_eval_rule(SR_P_random_unwrap, ev_random_unwrap);
  sr_set_eval_rule(SR_P_random_split, ev_random_split);
  sr_set_eval_rule(SR_P_random_fold_in, ev_random_fold_in);
  sr_set_eval_rule(SR_P_threefry2x32, ev_threefry2x32);
  sr_set_eval_rule(SR_P_random_gamma, ev_random_gamma);
  sr_set_eval_rule(SR_P_bitcast_convert_type, ev_bitcast);
  sr_set_eval_rule(SR_P_rng_bit_generator, ev_rng_bit_generator);
}

static void ad_rules_random(void) {
  static const int zero[] = {SR_P_random_bits, SR_P_random_seed, SR_P_random_wrap, SR_P_random_unwrap,
                             SR_P_threefry2x32, SR_P_random_split, SR_P_random_fold_in, SR_P_random_clone};
  for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) sr_ad_set_jvp(zero[i], sr_ad_jvp_zero);
  sr_ad_set_jvp(SR_P_bitcast_convert_type, sr_ad_jvp_zero); /* lax.py: ad.defjvp_zero */
}

/* _rng_bit_generator_batching_rule (control_flow/loops.py): the batch of
   keys in front, the first key draws bits of shape (batch, *shape), and
   the new key replaces keys[0]. */
static int batch_rng_bit_generator(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  if (bd[0] == SR_NOT_MAPPED) {
    SrVal *r = sr_batch_bind_with(b, e, 1, x, NULL);
    if (!r) return -1;
    y[0] = r->seq.items[0];
    y[1] = r->seq.items[1];
    ybd[0] = ybd[1] = SR_NOT_MAPPED;
    return 0;
  }
  SrVal *keys = sr_batch_moveaxis(b, x[0], bd[0], 0);
  const SrType *kt = keys ? sr_ad_type(&b->ad, keys) : NULL;
  if (!kt) return -1;
  const SrVal *shv = NULL, *osh = NULL;
  for (uint32_t i = 0; i < e->nparams; i++) {
    if (strcmp(e->params[i].key, "shape") == 0) shv = e->params[i].val;
    if (strcmp(e->params[i].key, "out_sharding") == 0) osh = e->params[i].val;
  }
  int64_t shape[SR_MAX_RANK];
  int ns = 0;
  if (!shv || sr_val_ints(shv, shape + 1, SR_MAX_RANK - 1, &ns) < 0) return sr_batch_no_rule(b, e->prim);
  shape[0] = b->size;
  const SrBinder *bb = SR_AD_BINDER(&b->ad);
  int64_t st[SR_MAX_RANK] = {0}, lim[SR_MAX_RANK], zero = 0;
  for (int i = 0; i < kt->ndim; i++) lim[i] = kt->dims[i].size;
  lim[0] = 1;
  SrVal *key = sr_ad_keep(&b->ad, sr_op_slice(bb, keys, st, lim, NULL));
  key = key ? sr_ad_keep(&b->ad, sr_op_squeeze(bb, key, &zero, 1)) : NULL;
  if (!key) return -1;
  SrVal *sh = osh && osh->kind != SR_V_NONE ? sr_batch_sharding_for_vmap((SrVal *)osh, 0, kt, 0) : sr_none();
  SrVal *r = sr_batch_bind_with(b, e, 1, &key, "shape", sr_ad_ints(shape, ns + 1), "out_sharding", sh, NULL);
  if (!r) return -1;
  SrVal *nk = sr_ad_keep(&b->ad, sr_op_expand_dims(bb, r->seq.items[0], &zero, 1));
  SrVal *starts[SR_MAX_RANK];
  for (int i = 0; i < kt->ndim; i++) starts[i] = sr_ad_scalar(&b->ad, SR_I32, 0, 0);
  y[0] = nk ? sr_ad_keep(&b->ad, sr_op_dynamic_update_slice(bb, keys, nk, starts)) : NULL;
  y[1] = r->seq.items[1];
  ybd[0] = ybd[1] = 0;
  return y[0] ? 0 : -1;
}

/* vmap: random_seed, random_bits, random_unwrap and random_clone as
   batching.defvectorized (the keys' dims lead the result, so the batch dim
   stays where it is), random_wrap by its own rule, threefry2x32 as
   defbroadcasting (prng.py, threefry2x32.py). */
static void batch_rules_random(void) {
  sr_prims[SR_P_random_seed].batch = sr_batch_unary;
  sr_prims[SR_P_random_bits].batch = sr_batch_unary;
  sr_prims[SR_P_random_unwrap].batch = sr_batch_unary;
  sr_prims[SR_P_random_split].batch = sr_batch_unary;
  sr_prims[SR_P_random_clone].batch = sr_batch_unary; /* batching.defvectorized */
  sr_prims[SR_P_random_fold_in].batch = batch_random_fold_in;
  sr_prims[SR_P_random_wrap].batch = batch_random_wrap;
  sr_prims[SR_P_threefry2x32].batch = sr_batch_broadcast;
  sr_prims[SR_P_random_gamma].batch = batch_random_gamma;
  sr_prims[SR_P_rng_bit_generator].batch = batch_rng_bit_generator;
}

/* threefry2x32's two halves of the hash (prims/prim.h's result count). */
static uint32_t nout_threefry2x32(int nin, const SrParam *ps, int np) {
  (void)nin, (void)ps, (void)np;
  return 2;
}

void sr_lax_random_init(void) {
  sr_prims[SR_P_threefry2x32].nout = nout_threefry2x32;
  sr_prims[SR_P_rng_bit_generator].nout = nout_threefry2x32; /* the new key and the bits */
  type_rules_random();
  eval_rules_random();
  ad_rules_random();
  batch_rules_random();
}
