/* rules_random.c: type rules of the PRNG primitives -- random_seed,
 * random_bits, random_wrap, random_unwrap (jax/_src/random/prng.py),
 * threefry2x32 (random/threefry2x32.py) -- and of bitcast_convert_type,
 * which jax.random.uniform applies to the bits.
 *
 * A key<fry> value is one threefry key: two uint32 words, which
 * random_unwrap shows as a trailing dimension of 2 (core.physical_aval).
 * The key shape's sharding carries over to what is made from it
 * (keys_shaped_array, logical_sharding, physical_sharding); random_bits
 * adds unsharded dims for the sample shape. */
#include <string.h>

#include "prims/rule.h"

void sr_rules_random_init(void);

static SrDtype key_dtype(void) { return sr_dtype_intern("key<fry>", 8); }

static int is_key(SrDtype d) { return strncmp(sr_dtype_name(d), "key<", 4) == 0; }

/* A result of x's shape and sharding (its unreduced, reduced and weak
   marks dropped) with dtype dt. */
static void like(SrTypeBuilder *b, const SrType *x, SrDtype dt) {
  sr_type_builder(b, x);
  b->dtype = dt;
  b->weak = 0;
  b->unreduced = b->reduced = 0;
  b->ukind = SR_UK_NONE;
}

/* random_seed_abstract_eval: keys of the seeds' shape and sharding. */
static int type_random_seed(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *s = e->in[0];
  if (!sr_dtype_in(s->dtype, SR_DC_INT))
    return sr_terr(cx, "TypeError", "PRNG key seed must be an integer; got %s", sr_type_short(s));
  SrTypeBuilder b;
  like(&b, s, key_dtype());
  return sr_finish_type(cx, e, &b, out);
}

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

/* random_wrap_abstract_eval: uint32[..., 2] becomes keys of shape [...]
   (logical_sharding drops the key data's trailing dim). */
static int type_random_wrap(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  if (x->dtype != SR_U32 || !x->ndim || x->dims[x->ndim - 1].size != 2) {
    SrBuf s = SR_BUF_INIT;
    sr_shape_str(&s, x);
    sr_terr(cx, "TypeError",
            "random_wrap: expected key data of dtype uint32 with a trailing dimension of 2 (the threefry2x32 key "
            "shape (2,)); got dtype=%s and shape=%s",
            sr_dtype_name(x->dtype), sr_buf_str(&s));
    sr_buf_free(&s);
    return -1;
  }
  if (x->dims[x->ndim - 1].nax)
    return sr_terr(cx, "ValueError", "random_wrap: the key data's trailing dimension must not be sharded, got %s",
                   sr_type_short(x));
  SrTypeBuilder b;
  like(&b, x, key_dtype());
  b.ndim--;
  return sr_finish_type(cx, e, &b, out);
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
  b.dims[b.ndim].size = 2;
  b.ndim++;
  return sr_finish_type(cx, e, &b, out);
}

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

/* lax.bitcast_convert_type between dtypes of one width: the operand's
   shape and sharding in new_dtype. */
static int type_bitcast(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  SrDtype dt;
  int present = 0;
  if (sr_rparam_dtype(cx, e, "new_dtype", &dt, &present) < 0) return -1;
  if (!present) return sr_terr(cx, "TypeError", "bitcast_convert_type needs a new_dtype");
  if (sr_dtype_info(dt)->bits != sr_dtype_info(x->dtype)->bits)
    return sr_terr(cx, "NotImplementedError",
                   "bitcast_convert_type between dtypes of different widths (%s to %s) is not supported here",
                   sr_dtype_name(x->dtype), sr_dtype_name(dt));
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  like(&b, x, dt);
  if (s.mode != SR_MODE_EXPLICIT) sr_builder_replicate(&b);
  if (!b.mesh) b.mesh = s.mesh;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

void sr_rules_random_init(void) {
  sr_set_type_rule(SR_P_random_seed, type_random_seed);
  sr_set_type_rule(SR_P_random_bits, type_random_bits);
  sr_set_type_rule(SR_P_random_wrap, type_random_wrap);
  sr_set_type_rule(SR_P_random_unwrap, type_random_unwrap);
  sr_set_type_rule(SR_P_threefry2x32, type_threefry2x32);
  sr_set_type_rule(SR_P_bitcast_convert_type, type_bitcast);
}
