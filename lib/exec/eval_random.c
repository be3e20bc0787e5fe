/* eval_random.c: eval rules of the PRNG primitives -- random_seed,
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
#include <string.h>

#include "exec/eval.h"
#include "exec/kern.h"
#include "exec/prng.h"
#include "core/core.h"
#include "core/jaxstate.h"

static unsigned prng_flags(const SrEvalCtx *cx) {
  return cx->I && cx->I->jax && cx->I->jax->enable_x64 ? SR_PRNG_X64 : 0;
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

/* ---- random_seed ---- */

static int seed_fn(SrShardIO *io) {
  const SrDtype *dt = io->arg;
  size_t es = sr_elem_size(*dt);
  size_t n = io->in[0]->nbytes / es;
  uint32_t *o = io->out[0]->data;
  /* threefry_seed: the high word of a 64-bit seed, else 0; the low word */
  unsigned f = sr_dtype_info(*dt)->bits == 64 ? SR_PRNG_X64 : 0;
  for (size_t i = 0; i < n; i++) sr_prng_key_ex(sr_kern_get_i64(*dt, (const char *)io->in[0]->data + i * es), f, o + 2 * i);
  return 0;
}

static int ev_random_seed(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrDtype dt = e->in[0]->type->dtype;
  SrArray *x = operand(cx, e->in[0], m, sr_layout_with_dtype(l, dt));
  if (!x) return -1;
  e->out[0] = sr_array_new(t, l, m);
  int rc = sr_ev_map(cx, 1, &x, 1, e->out, 0, seed_fn, &dt);
  sr_array_unref(x);
  return rc;
}

/* ---- random_bits ---- */

typedef struct BitsArg {
  int nk, ns;                 /* key dims, sample dims */
  int64_t shape[SR_MAX_RANK]; /* the sample shape */
  int bw;
  unsigned flags;
} BitsArg;

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

/* ---- random_wrap, random_unwrap, bitcast_convert_type: no bytes move ---- */

static int ev_random_wrap(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = operand(cx, e->in[0], m, with_trailing(l, 2, SR_U32));
  if (!x) return -1;
  e->out[0] = sr_array_retype(x, t, l);
  sr_array_unref(x);
  return 0;
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

static int ev_bitcast(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrDtype from = e->in[0]->type->dtype;
  if (sr_elem_size(from) != sr_elem_size(t->dtype))
    return sr_ev_err(cx, "NotImplementedError", "bitcast_convert_type from %s to %s changes the element size",
                     sr_dtype_name(from), sr_dtype_name(t->dtype));
  SrArray *x = operand(cx, e->in[0], m, sr_layout_with_dtype(l, from));
  if (!x) return -1;
  e->out[0] = sr_array_retype(x, t, x->mesh == m ? l : sr_layout_with_dtype(x->layout, t->dtype));
  sr_array_unref(x);
  return 0;
}

/* ---- threefry2x32 ---- */

typedef struct FryArg {
  int scalar[4];
} FryArg;

static int fry_fn(SrShardIO *io) {
  const FryArg *f = io->arg;
  size_t n = io->out[0]->nbytes / 4;
  const uint32_t *in[4];
  for (int i = 0; i < 4; i++) in[i] = io->in[i]->data;
  uint32_t *y0 = io->out[0]->data, *y1 = io->out[1]->data;
  if (f->scalar[0] && f->scalar[1] && !f->scalar[2] && !f->scalar[3]) {
    uint32_t key[2] = {in[0][0], in[1][0]};
    sr_threefry2x32(key, n, in[2], in[3], y0, y1);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t key[2] = {in[0][f->scalar[0] ? 0 : i], in[1][f->scalar[1] ? 0 : i]};
    uint32_t x0 = in[2][f->scalar[2] ? 0 : i], x1 = in[3][f->scalar[3] ? 0 : i];
    sr_threefry2x32(key, 1, &x0, &x1, y0 + i, y1 + i);
  }
  return 0;
}

static int ev_threefry2x32(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  FryArg f;
  SrArray *ops[4] = {0};
  int rc = 0;
  for (int i = 0; i < 4 && rc == 0; i++) {
    const SrType *it = e->in[i]->type;
    f.scalar[i] = it->ndim == 0 && t->ndim > 0;
    for (int d = 0; d < it->ndim && rc == 0; d++)
      if (it->dims[d].size != t->dims[d].size)
        rc = sr_ev_err(cx, "NotImplementedError", "threefry2x32 with operands broadcast along size-1 dims");
    if (rc == 0 && !(ops[i] = operand(cx, e->in[i], m, it->ndim ? l : sr_layout_of_type(it)))) rc = -1;
  }
  if (rc == 0) {
    e->out[0] = sr_array_new(t, l, m);
    e->out[1] = sr_array_new(e->out_type[1], l, m);
    rc = sr_ev_map(cx, 4, ops, 2, e->out, 0, fry_fn, &f);
  }
  for (int i = 0; i < 4; i++) sr_array_unref(ops[i]);
  return rc;
}

void sr_eval_rules_random(void) {
  sr_set_eval_rule(SR_P_random_seed, ev_random_seed);
  sr_set_eval_rule(SR_P_random_bits, ev_random_bits);
  sr_set_eval_rule(SR_P_random_wrap, ev_random_wrap);
  sr_set_eval_rule(SR_P_random_unwrap, ev_random_unwrap);
  sr_set_eval_rule(SR_P_threefry2x32, ev_threefry2x32);
  sr_set_eval_rule(SR_P_bitcast_convert_type, ev_bitcast);
}
