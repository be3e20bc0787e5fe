/* elementwise.c: the rules of the elementwise primitives: unary and n-ary ops, comparisons,
 * select_n, clamp, conversions, add_any (lax/lax.py).
 *
 * The family's shared helpers, then each primitive's (or group's) type,
 * eval, JVP and transpose rules and communication note side by side, in
 * that order, under a heading per group, then the family's registration
 * sr_lax_elementwise_init (lax/lax.h says what a family file holds and uses).
 */
#include "lax/lax.h"

#include <complex.h>
#undef I /* complex.h's; this file's I is the interpreter */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ad/ad_rules.h"
#include "ad/batch.h"
#include "exec/eval.h"
#include "exec/ew_pieces.h"
#include "exec/kern_simd.h"
#include "exec/kern.h"
#include "exec/kern_ew.h"
#include "exec/prng.h"
#include "exec/special_fn.h"
#include "exec/vmath.h"
#include "check/rule.h"
#include "core/jaxstate.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ==== the family's helpers ==== */

/* type rules of the elementwise primitives.
 *
 * Unary ops keep their operand's sharding and pass `reduced` through but
 * reject `unreduced` (lax.unop); n-ary ops broadcast shapes and shardings
 * dimension by dimension (lax.broadcasting_shape_rule,
 * broadcasting_sharding_rule) and combine unreduced/reduced sets with one
 * of the ur rules of lax.py.  Also here: select_n, clamp,
 * convert_element_type, integer_pow, reduce_precision, add_any and the
 * identity primitives (copy, stop_gradient).
 */

typedef enum { RES_SAME, RES_BOOL, RES_REAL, RES_COMPLEX } ResultDtype;


/* lax.unop_dtype_rule. */
static int unop_dtype(SrTypeCtx *cx, const char *name, const SrType *x, unsigned accepted, int narrow_ints) {
  if (x->dtype == SR_FLOAT0) return sr_float0_error(cx, name, -1);
  if (!sr_dtype_in(x->dtype, accepted)) {
    SrBuf b = SR_BUF_INIT;
    sr_dtype_classes_str(&b, accepted);
    sr_terr(cx, "TypeError", "%s does not accept dtype %s. Accepted dtypes are subtypes of %s.", name,
            sr_dtype_name(x->dtype), sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (!narrow_ints && (x->dtype == SR_I2 || x->dtype == SR_I4 || x->dtype == SR_U2 || x->dtype == SR_U4))
    return sr_terr(cx, "TypeError",
                   "%s does not accept dtype %s. Support for narrow-width integers is platform-dependent and "
                   "limited to a few specific operations, e.g. basic arithmetic and type casting.",
                   name, sr_dtype_name(x->dtype));
  return 0;
}

/* The sharding half of a rule whose result has its operand's shape and
   sharding (`sharding_rule=_attrgetter('sharding')`). */
static void same_sharding(SrTypeBuilder *b, const SrType *x, const SrStd *s) {
  sr_type_builder(b, x);
  b->unreduced = b->reduced = b->varying = 0;
  b->ukind = SR_UK_NONE;
  if (s->mode != SR_MODE_EXPLICIT) sr_builder_replicate(b);
  if (!b->mesh) b->mesh = s->mesh;
}

/* lax._try_broadcast_shapes over the non-scalar operands
   (broadcasting_shape_rule). */
static int nary_shape(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  const SrType *shaped[64];
  int n = 0;
  for (uint32_t i = 0; i < e->nin && n < 64; i++)
    if (ts[i]->ndim) shaped[n++] = ts[i];
  b->ndim = 0;
  if (!n) return 0;
  int rank = shaped[0]->ndim;
  for (int i = 1; i < n; i++)
    if (shaped[i]->ndim != rank) {
      /* the set of ranks, which Python prints in increasing order */
      SrBuf rb = SR_BUF_INIT;
      int seen[SR_MAX_RANK + 1] = {0};
      for (int k = 0; k < n; k++) seen[shaped[k]->ndim] = 1;
      int first = 1;
      sr_buf_putc(&rb, '{');
      for (int r = 0; r <= SR_MAX_RANK; r++)
        if (seen[r]) {
          sr_buf_printf(&rb, first ? "%d" : ", %d", r);
          first = 0;
        }
      sr_buf_putc(&rb, '}');
      sr_terr(cx, "TypeError", "%s: arrays must have the same number of dimensions, got %s", e->prim->name,
              sr_buf_str(&rb));
      sr_buf_free(&rb);
      return -1;
    }
  b->ndim = (uint8_t)rank;
  for (int d = 0; d < rank; d++) {
    const SrDim *pick = &shaped[0]->dims[d];
    int all_same = 1;
    for (int i = 1; i < n; i++)
      if (!sr_dim_same(&shaped[i]->dims[d], pick)) all_same = 0;
    if (!all_same) {
      pick = NULL;
      for (int i = 0; i < n; i++) {
        const SrDim *x = &shaped[i]->dims[d];
        if (x->size == 1 && !x->sym) continue;
        if (!pick) {
          pick = x;
        } else if (!sr_dim_same(pick, x)) {
          SrBuf sb = SR_BUF_INIT;
          for (int k = 0; k < n; k++) {
            if (k) sr_buf_puts(&sb, ", ");
            sr_shape_str(&sb, shaped[k]);
          }
          sr_terr(cx, "TypeError", "%s got incompatible shapes for broadcasting: %s.", e->prim->name, sr_buf_str(&sb));
          sr_buf_free(&sb);
          return -1;
        }
      }
    }
    memset(&b->dims[d], 0, sizeof b->dims[d]);
    if (pick) {
      b->dims[d].size = pick->size;
      b->dims[d].sym = pick->sym;
    } else {
      b->dims[d].size = 1;
    }
  }
  return 0;
}

/* lax.broadcasting_sharding_rule: per dimension, equal specs pass; else
   the specs of non-trivial operands (not size 1 with None) must agree,
   None giving way to a sharded spec. */
static int nary_sharding(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  const SrMesh *m = NULL;
  if (sr_inputs_mesh(cx, e, "ShardingTypeError", &m) < 0) return -1;
  const SrType *shaped[64];
  int n = 0;
  for (uint32_t i = 0; i < e->nin && n < 64; i++)
    if (ts[i]->ndim) shaped[n++] = ts[i];
  for (int d = 0; d < b->ndim; d++) {
    const SrType *res = shaped[0];
    int all_same = 1;
    for (int i = 1; i < n; i++)
      if (!sr_spec_entry_eq(shaped[i], d, shaped[0], d)) all_same = 0;
    if (!all_same) {
      /* the non-trivial entries */
      res = NULL;
      int nontriv_same = 1;
      for (int i = 0; i < n; i++) {
        const SrDim *x = &shaped[i]->dims[d];
        if (x->size == 1 && !x->sym && !x->nax) continue;
        if (!res) res = shaped[i];
        else if (!sr_spec_entry_eq(shaped[i], d, res, d)) nontriv_same = 0;
      }
      if (res && !nontriv_same) {
        /* the first sharded entry wins; another sharded one is an error */
        res = NULL;
        for (int i = 0; i < n; i++) {
          if (!shaped[i]->dims[d].nax) continue;
          if (!res) {
            res = shaped[i];
          } else if (!sr_spec_entry_eq(shaped[i], d, res, d)) {
            SrBuf sb = SR_BUF_INIT;
            for (int k = 0; k < n; k++) {
              if (k) sr_buf_puts(&sb, ", ");
              sr_partitions_str(&sb, shaped[k], NULL, 0);
            }
            sr_terr(cx, "ShardingTypeError", "%s got incompatible shardings for broadcasting: %s.", e->prim->name,
                    sr_buf_str(&sb));
            sr_buf_free(&sb);
            return -1;
          }
        }
      }
    }
    b->dims[d].nax = 0;
    if (res && res->dims[d].nax) {
      /* axis indices of the result mesh */
      const SrDim *x = &res->dims[d];
      b->dims[d].nax = x->nax;
      for (int k = 0; k < x->nax; k++) {
        int a = b->mesh ? sr_mesh_axis(b->mesh, res->mesh->names[x->ax[k]]) : -1;
        if (a < 0) {
          b->mesh = res->mesh;
          a = x->ax[k];
        }
        b->dims[d].ax[k] = (uint8_t)a;
      }
    }
  }
  return 0;
}

/* The axes of the context mesh an operand is replicated over
   (lax.replicated_axes). */
static SrAxes replicated_axes(SrTypeCtx *cx, const SrType *t) {
  if (!cx->mesh || !cx->mesh->n) return 0;
  SrAxes all = (SrAxes)((1ull << cx->mesh->n) - 1);
  return all & ~(sr_type_sharded_axes(t) | t->unreduced | t->reduced | t->varying);
}

/* The mesh names for messages about a rule's sets. */
static const SrMesh *msg_mesh(SrTypeCtx *cx, const SrRuleEqn *e) {
  for (uint32_t i = 0; i < e->nin; i++)
    if (e->in[i]->mesh) return e->in[i]->mesh;
  return cx->mesh && cx->mesh->n ? sr_mesh_shape(cx->mesh) : NULL;
}

/* lax.default_nary_reduced_rule: every reduced operand is reduced over
   the same axes, and no operand is replicated, sharded or varying on
   them. */
static int nary_reduced(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrAxes *out) {
  const SrMesh *m = msg_mesh(cx, e);
  SrAxes sets[64];
  int nsets = 0;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrAxes r = sr_getr(cx, ts[i]);
    if (!r) continue;
    int k = 0;
    while (k < nsets && sets[k] != r) k++;
    if (k == nsets && nsets < 64) sets[nsets++] = r;
  }
  if (nsets > 1) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '{');
    for (int k = 0; k < nsets; k++) {
      if (k) sr_buf_puts(&b, ", ");
      sr_axes_frozenset_str(&b, m, sets[k]);
    }
    sr_buf_putc(&b, '}');
    sr_terr(cx, "ShardingTypeError", "All inputs should be reduced across the same mesh axes. Got specs: %s",
            sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  SrAxes r = nsets ? sets[0] : 0;
  *out = r;
  if (!r) return 0;
  for (uint32_t i = 0; i < e->nin; i++) {
    const SrType *a = ts[i];
    const char *msg = NULL;
    if (replicated_axes(cx, a) & r)
      msg = "Inputs cannot be replicated on the same axes that another input is reduced on. Got input type: %s "
            "and reduced spec: %s";
    else if ((sr_type_sharded_axes(a) | a->varying) & r)
      msg = "Inputs cannot be sharded/varying on the same axes that another input is reduced on. Reshard the "
            "input which is reduced to be sharded on the mesh axes it is reduced on via "
            "`jax.sharding.reshard(inp, jax.P(...))`. Got input type: %s and reduced spec: %s";
    if (!msg) continue;
    SrBuf at = SR_BUF_INIT, rs = SR_BUF_INIT;
    sr_aval_str(&at, a);
    sr_axes_frozenset_str(&rs, m, r);
    sr_terr(cx, "ShardingTypeError", msg, sr_buf_str(&at), sr_buf_str(&rs));
    sr_buf_free(&at);
    sr_buf_free(&rs);
    return -1;
  }
  return 0;
}

static int unreduced_not_implemented(SrTypeCtx *cx, const char *name) {
  return sr_terr(cx, "NotImplementedError",
                 "unreduced rule for %s is not implemented. Please file an issue at "
                 "https://github.com/jax-ml/jax/issues",
                 name);
}

/* lax.nary_ur_rule: no operand may be unreduced. */
static int nary_ur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  if (nary_reduced(cx, e, ts, &b->reduced) < 0) return -1;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrAxes u;
    if (sr_getu(cx, ts[i], &u) < 0) return -1;
    if (u) return unreduced_not_implemented(cx, e->prim->name);
  }
  return 0;
}

/* eval rules of the elementwise primitives.
 *
 * The result's layout comes from its type (eval.c adds Auto axes); every
 * operand of the result's shape is brought to that layout, keeping its own
 * unreduced and reduced sets (add of two unreduced values, mul of an
 * unreduced by a reduced one: the type rules have checked them), and each
 * device computes its shard.  Rank-0 operands are broadcast scalars. */

/* The layout operand a must have for a result laid out as l: l's dims,
   a's own unreduced/reduced sets and dtype.  Rank-0 operands keep theirs. */
static const SrType *operand_layout(const SrArray *a, const SrType *l) {
  if (a->type->ndim == 0 || a->type->ndim != l->ndim) return a->layout;
  /* the common case: already laid out like the result */
  int same = 1;
  for (int i = 0; i < l->ndim && same; i++) {
    const SrDim *x = &a->layout->dims[i], *y = &l->dims[i];
    same = x->size == y->size && x->nax == y->nax && memcmp(x->ax, y->ax, x->nax) == 0;
  }
  if (same) return a->layout;
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  b.dtype = a->type->dtype;
  b.unreduced = a->layout->unreduced;
  b.ukind = a->layout->ukind;
  b.reduced = a->layout->reduced;
  if ((b.unreduced || b.reduced) && !b.mesh) b.mesh = a->layout->mesh;
  for (int i = 0; i < b.ndim; i++)
    if (a->type->dims[i].size != l->dims[i].size) { /* a size-1 dim, broadcast */
      b.dims[i].size = a->type->dims[i].size;
      b.dims[i].nax = 0;
    }
  return sr_type_get(&b);
}

static int conv_fn(SrShardIO *io) {
  const SrDtype *dts = io->arg;
  /* a float0 array (a zero tangent) holds no data: as on a device (a bool
     False), it converts to zeros */
  if (dts[0] == SR_FLOAT0) {
    memset(io->out[0]->data, 0, io->out[0]->nbytes);
    return 0;
  }
  size_t n = io->in[0]->nbytes / sr_elem_size(dts[0]);
  if (sr_kern_convert(dts[0], dts[1], n, io->in[0]->data, io->out[0]->data) < 0)
    return sr_ev_err(io->cx, "NotImplementedError", "cannot convert %s to %s", sr_dtype_name(dts[0]), sr_dtype_name(dts[1]));
  return 0;
}

/* a converted to dtype dt (same layout and mesh). */
static SrArray *converted(SrEvalCtx *cx, SrArray *a, SrDtype dt) {
  if (a->type->dtype == dt) return sr_array_ref(a);
  SrArray *r = sr_array_new(sr_type_with_dtype(a->type, dt), sr_layout_with_dtype(a->layout, dt), a->mesh);
  SrDtype dts[2] = {a->type->dtype, dt};
  if (sr_ev_map(cx, 1, &a, 1, &r, 0, conv_fn, dts) < 0) {
    sr_array_unref(r);
    return NULL;
  }
  return r;
}

typedef struct BcastArg {
  int nd;
  size_t es;
  int64_t step[SR_MAX_RANK];
} BcastArg;

static int bcast_fn(SrShardIO *io) {
  BcastArg *b = io->arg;
  int64_t zero[SR_MAX_RANK] = {0};
  sr_kern_strided(b->es, b->nd, io->in_shape[0], zero, b->step, io->out_shape[0], io->in[0]->data, io->out[0]->data);
  return 0;
}

/* An operand with size-1 dims where the result has more (lax's degenerate
   broadcasting), expanded to the result's shape in the result's layout. */
static SrArray *expanded(SrEvalCtx *cx, SrArray *a, const SrType *l) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  b.dtype = a->type->dtype;
  b.unreduced = a->layout->unreduced;
  b.ukind = a->layout->ukind;
  b.reduced = a->layout->reduced;
  if ((b.unreduced || b.reduced) && !b.mesh) b.mesh = a->layout->mesh;
  const SrType *nl = sr_type_get(&b);
  SrTypeBuilder tb;
  sr_type_builder(&tb, a->type);
  for (int i = 0; i < tb.ndim; i++) tb.dims[i] = l->dims[i];
  tb.mesh = l->mesh;
  SrArray *r = sr_array_new(sr_type_get(&tb), nl, a->mesh);
  BcastArg ba;
  ba.nd = l->ndim;
  ba.es = sr_elem_size(a->type->dtype);
  for (int i = 0; i < l->ndim; i++) ba.step[i] = a->type->dims[i].size == l->dims[i].size ? 1 : 0;
  if (sr_ev_map(cx, 1, &a, 1, &r, 0, bcast_fn, &ba) < 0) {
    sr_array_unref(r);
    return NULL;
  }
  return r;
}

/* Operand k of e, on mesh m, laid out for result layout l, of dtype dt
   (dt < 0: its own). */
static SrArray *operand(SrEvalCtx *cx, const SrEvalEqn *e, uint32_t k, const SrMesh *m, const SrType *l, int dt) {
  SrArray *a = e->in[k];
  SrArray *r;
  if (a->type->ndim == 0 && (!a->mesh || a->mesh == m)) r = sr_array_ref(a);
  else r = sr_redistribute(cx, a, m, operand_layout(a, l));
  if (r && r->type->ndim && r->type->ndim == l->ndim) {
    int same = 1;
    for (int i = 0; i < l->ndim; i++) same &= r->type->dims[i].size == l->dims[i].size;
    if (!same) {
      SrArray *x = expanded(cx, r, l);
      sr_array_unref(r);
      r = x;
    }
  }
  if (!r || dt < 0 || r->type->dtype == (SrDtype)dt) return r;
  SrArray *c = converted(cx, r, (SrDtype)dt);
  sr_array_unref(r);
  return c;
}

typedef struct EwArg {
  int prim;
  SrDtype dt;       /* the operation's dtype */
  int64_t ip[4];    /* integer params */
  int nin;
  int scalar[16];   /* operand k is a broadcast scalar */
  SrDtype wdt;      /* select_n's predicate dtype */
  int form;         /* a fused multiply-add's SrFmaForm */
  int recip;        /* a div by a scalar runs as a mul by its reciprocal */
  size_t key_bytes; /* eq/ne of keys wider than 64 bits: each key's size */
} EwArg;

static int kern_fail(SrShardIO *io, const EwArg *w) {
  return sr_ev_err(io->cx, "NotImplementedError", "%s is not implemented for dtype %s", sr_prims[w->prim].name,
                   sr_dtype_name(w->dt));
}

static int ew_fn(SrShardIO *io) {
  EwArg *w = io->arg;
  size_t n;
  int rc;
  if (w->key_bytes) {
    /* keys compare by all their words (an rbg key's four) */
    const unsigned char *a = io->in[0]->data, *b = io->in[1]->data;
    uint8_t *y = io->out[0]->data;
    size_t kb = w->key_bytes, sa = w->scalar[0] ? 0 : kb, sb = w->scalar[1] ? 0 : kb;
    n = io->out[0]->nbytes / sr_elem_size(SR_BOOL);
    for (size_t i = 0; i < n; i++) y[i] = (uint8_t)((memcmp(a + i * sa, b + i * sb, kb) == 0) == (w->prim == SR_P_eq));
    return 0;
  }
  switch (w->prim) {
  case SR_P_select_n: {
    const void *cases[16];
    n = io->out[0]->nbytes / sr_elem_size(w->dt);
    for (int k = 1; k < w->nin; k++) cases[k - 1] = io->in[k]->data;
    rc = sr_kern_select(w->wdt, w->dt, n, io->in[0]->data, w->scalar[0], w->nin - 1, cases, w->scalar + 1,
                        io->out[0]->data);
    break;
  }
  case SR_P_clamp: {
    /* clamp = min(max(x, lo), hi) */
    n = io->out[0]->nbytes / sr_elem_size(w->dt);
    const int *sc = w->scalar;
    rc = sr_kern_binary(sr_prims[SR_P_max].kern, w->dt, n, io->in[1]->data, sc[1], io->in[0]->data, sc[0],
                        io->out[0]->data);
    if (rc == 0)
      rc = sr_kern_binary(sr_prims[SR_P_min].kern, w->dt, n, io->out[0]->data, sc[1] && sc[0], io->in[2]->data,
                          sc[2], io->out[0]->data);
    break;
  }
  case SR_P_regularized_incomplete_beta: {
    /* betainc(a, b, x) in double; a scalar operand is read at 0 */
    n = io->out[0]->nbytes / sr_elem_size(w->dt);
    const int *sc = w->scalar;
    rc = 0;
    if (w->dt == SR_F32) {
      const float *a = io->in[0]->data, *b = io->in[1]->data, *x = io->in[2]->data;
      float *y = io->out[0]->data;
      for (size_t i = 0; i < n; i++) y[i] = (float)sr_betainc(a[sc[0] ? 0 : i], b[sc[1] ? 0 : i], x[sc[2] ? 0 : i]);
    } else if (w->dt == SR_F64) {
      const double *a = io->in[0]->data, *b = io->in[1]->data, *x = io->in[2]->data;
      double *y = io->out[0]->data;
      for (size_t i = 0; i < n; i++) y[i] = sr_betainc(a[sc[0] ? 0 : i], b[sc[1] ? 0 : i], x[sc[2] ? 0 : i]);
    } else if (w->dt == SR_F16 || w->dt == SR_BF16) {
      /* special.py's _up_and_broadcast: computed in float32, rounded back */
      const uint16_t *a = io->in[0]->data, *b = io->in[1]->data, *x = io->in[2]->data;
      for (size_t i = 0; i < n; i++) {
        float v = (float)sr_betainc((float)sr_kern_get_f64(w->dt, a + (sc[0] ? 0 : i)),
                                    (float)sr_kern_get_f64(w->dt, b + (sc[1] ? 0 : i)),
                                    (float)sr_kern_get_f64(w->dt, x + (sc[2] ? 0 : i)));
        sr_kern_set_scalar(w->dt, v, 0, (uint16_t *)io->out[0]->data + i);
      }
    } else {
      rc = -1;
    }
    break;
  }
  case SR_P_div:
    if (w->recip) {
      /* x * (1 / d), the reciprocal rounded in the dtype (see div_recip) */
      n = io->out[0]->nbytes / sr_elem_size(w->dt);
      float r32 = 0;
      double r64 = 0;
      const void *r = w->dt == SR_F32 ? (const void *)&r32 : (const void *)&r64;
      if (w->dt == SR_F32) r32 = 1.0f / *(const float *)io->in[1]->data;
      else r64 = 1.0 / *(const double *)io->in[1]->data;
      const void *in[2] = {io->in[0]->data, r};
      size_t es[2] = {w->scalar[0] ? 0 : sr_elem_size(w->dt), 0};
      rc = sr_kern_ew_pieces(sr_prims[SR_P_mul].kern, w->dt, n, 2, in, es, io->out[0]->data, sr_elem_size(w->dt),
                             w->ip);
      break;
    }
    /* fall through */
  default:
    if (w->nin == 1) {
      n = io->in[0]->nbytes / sr_elem_size(w->dt);
    } else {
      n = (w->scalar[0] ? io->in[1]->nbytes : io->in[0]->nbytes) / sr_elem_size(w->dt);
      if (w->scalar[0] && w->scalar[1]) n = 1;
    }
    {
      /* in pieces on the pool when it is one big kernel (exec/ew_pieces.h) */
      /* es 0 marks a scalar operand: an empty one (n == 0) is not one */
      size_t d = n ? n : 1;
      const void *in[2] = {io->in[0]->data, w->nin > 1 ? io->in[1]->data : NULL};
      size_t es[2] = {w->scalar[0] ? 0 : n ? io->in[0]->nbytes / d : 1,
                      w->nin > 1 && !w->scalar[1] ? (n ? io->in[1]->nbytes / d : 1) : 0};
      /* int2/int4/uint2/uint4 (a byte each) run as int8/uint8, the results
         wrapped to their bits */
      SrDtype kdt = w->dt;
      int bits = kdt == SR_I2 || kdt == SR_U2 ? 2 : kdt == SR_I4 || kdt == SR_U4 ? 4 : 0;
      if (bits) kdt = kdt == SR_I2 || kdt == SR_I4 ? SR_I8 : SR_U8;
      const SrKernEw *k = sr_prims[w->prim].kern;
      rc = sr_kern_ew_pieces(k, kdt, n, w->nin, in, es, io->out[0]->data, io->out[0]->nbytes / d, w->ip);
      if (rc == 0 && bits && k && !k->bool_out) {
        uint8_t *o = io->out[0]->data;
        unsigned mask = (1u << bits) - 1, sign = 1u << (bits - 1);
        for (size_t i = 0; i < n; i++) {
          unsigned v = o[i] & mask;
          o[i] = (uint8_t)(kdt == SR_I8 && (v & sign) ? v | ~mask : v);
        }
      }
    }
  }
  return rc < 0 ? kern_fail(io, w) : 0;
}

/* XLA:CPU divides by a scalar by multiplying with its reciprocal: a
   constant divisor (a literal of the jaxpr: jnp.mean's count) and a
   scalar broadcast over an array (x / pi, eager or jitted) make x * (1 /
   d), the reciprocal rounded once in the dtype -- JAX's jnp.mean of
   [[1, 3, 4, 2], [5, 2, 6, 3], [8, 1, 2, 9]] is 3.8333335, not 46 / 12 =
   3.8333333, and x * 180 / pi of [pi/4, pi/2, 2*pi/3] is [45, 90,
   119.99999] (their docstrings).  A division of two scalars computed at
   run time stays a division, and so does numpy's on host arrays. */
static int div_recip(const SrEvalCtx *cx, const SrEvalEqn *e, SrDtype dt) {
  if (e->prim->id != SR_P_div || e->nin != 2 || (dt != SR_F32 && dt != SR_F64)) return 0;
  if (cx->I && cx->I->jax && cx->I->jax->host_numpy) return 0;
  if (e->in[1]->type->ndim != 0 || e->in[1]->type->dtype != dt) return 0;
  return (e->lit >> 1 & 1) || e->out_type[0]->ndim > 0;
}

/* SR_MAP_REUSE for each donated operand that arrived untouched, of the
   result's dtype and shape (the kernels allow out == in) -- but clamp's
   upper bound, which ew_fn reads after writing max(x, lo) to the result. */
static int reuse_flags(const SrEvalEqn *e, SrArray *const *ops, int first) {
  const SrType *t = e->out_type[0];
  int flags = 0;
  for (uint32_t k = (uint32_t)first; k < e->nin && k < 16; k++) {
    if (e->prim->id == SR_P_clamp && k == 2) continue;
    if (!(e->donate >> k & 1) || ops[k] != e->in[k] || ops[k]->type->dtype != t->dtype) continue;
    if (ops[k]->type->ndim != t->ndim) continue;
    int same = 1;
    for (int i = 0; i < t->ndim; i++) same &= ops[k]->type->dims[i].size == t->dims[i].size;
    if (same) flags |= SR_MAP_REUSE(k);
  }
  return flags;
}

static int is_compare(int id) {
  return id == SR_P_eq || id == SR_P_ne || id == SR_P_lt || id == SR_P_le || id == SR_P_gt || id == SR_P_ge ||
         id == SR_P_eq_to || id == SR_P_le_to || id == SR_P_lt_to;
}

/* Does operand a take part in an equation of result type t and operation
   dtype dt on one device just as it is: meshless and row-major, of dtype
   dt, and of t's shape unsharded or a rank-0 scalar? */
static int local_operand(const SrArray *a, const SrType *t, SrDtype dt) {
  if (a->mesh || a->local || a->type->dtype != dt || a->layout->unreduced) return 0;
  if (a->type->ndim == 0) return 1;
  if (a->type->ndim != t->ndim) return 0;
  for (int i = 0; i < t->ndim; i++)
    if (a->type->dims[i].size != t->dims[i].size || a->layout->dims[i].nax) return 0;
  return 1;
}

/* The elementwise rules on one device.  With no mesh, and every operand
   meshless, of the operation's dtype and of the result's shape (or a
   scalar), operand() hands back the inputs as they are and sr_ev_map()
   comes down to one call of the kernel, so this does just that: a chain of
   small elementwise equations is otherwise mostly that machinery.  Returns
   1 when it ran the equation (*rc: its status), 0 when the general path
   must. */
static int ew_one_device(SrEvalCtx *cx, const SrEvalEqn *e, const SrMesh *m, const SrType *l, EwArg *w, int *rc) {
  const SrType *t = e->out_type[0];
  int64_t numel = sr_type_numel(t);
  if (m || w->prim == SR_P_select_n || l->unreduced || numel < 0) return 0;
  for (int i = 0; i < l->ndim; i++)
    if (l->dims[i].nax) return 0;
  SrBuffer *ibuf[16], *obuf = NULL;
  for (uint32_t k = 0; k < e->nin; k++) {
    if (!local_operand(e->in[k], t, w->dt) || !e->in[k]->shard[0]) return 0;
    ibuf[k] = e->in[k]->shard[0];
    w->scalar[k] = e->in[k]->type->ndim == 0 && t->ndim > 0;
  }
  e->out[0] = sr_array_new(t, sr_layout_with_dtype(l, t->dtype), NULL);
  size_t nbytes = (size_t)numel * sr_elem_size(t->dtype);
  /* sr_ev_map's SR_MAP_REUSE: write into a donated input no one else holds */
  int flags = (obuf = sr_ev_dest_take(cx, 0, 0, nbytes)) ? 0 : reuse_flags(e, e->in, 0);
  for (unsigned rs = (unsigned)flags >> 3; rs && !obuf; rs &= rs - 1) {
    SrBuffer *b = ibuf[__builtin_ctz(rs)];
    if (sr_buffer_unique(b) && b->nbytes == nbytes) obuf = sr_buffer_ref(b);
  }
  if (!obuf && !(obuf = sr_ev_buffer(cx, nbytes))) {
    *rc = -1;
    return 1;
  }
  /* ew_fn reads only these fields */
  SrShardIO io;
  io.cx = cx;
  io.pos = 0;
  io.mesh = NULL;
  io.in = ibuf;
  io.out = &obuf;
  io.arg = w;
  *rc = ew_fn(&io);
  e->out[0]->shard[0] = obuf;
  return 1;
}

/* JVP and transpose rules of the elementwise
 * primitives (lax/lax.py: defjvp, defjvp2, deflinear, defbilinear and the
 * explicit rules of add, sub, div, select_n, convert_element_type).
 *
 * The rules compute what JAX's do, in the same order, so that a
 * linearized program emits the same known equations in the same places:
 * standard_jvp binds the primal first, then each nonzero input's tangent
 * term in input order, summed with add_any.
 */

/* The equation's primal output (a single result). */
static SrVal *primal1(SrAd *ad, const SrEqn *e, SrVal **x) { return sr_ad_bind_eqn1(ad, e, x); }

/* A unary op with e's accuracy param, as sin(x, accuracy=accuracy). */
static SrVal *unop_like(SrAd *ad, int prim, SrVal *x, const SrEqn *e) {
  static const char *acc;
  if (!acc) acc = sr_intern_cstr("accuracy");
  SrVal *a = sr_eqn_param(e, acc);
  if (a && sr_prims[prim].pp == SR_PP_ACCURACY) {
    SrParam p = {acc, a};
    return sr_ad_bind(ad, prim, 1, &x, 1, &p);
  }
  return sr_ad_unop(ad, prim, x);
}

static int done1(SrVal **y, SrVal **ty) { return y[0] && ty[0] ? 0 : -1; }

#define JVP1(name) static int name(SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y, SrVal **ty)

#define TR(name) static int name(SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x, SrVal **cx)

static const SrType *ct_of(const SrEqn *e, int i) { return sr_ad_ct_type(e->in[i]->type); }

/* mul(xdot, y) + mul(x, ydot), each with e's params (out_dtype) */
static SrVal *mul_like(SrAd *ad, const SrEqn *e, SrVal *a, SrVal *b) {
  SrVal *in[2] = {a, b};
  if (!a || !b) return NULL;
  if (e->nparams == 0) return sr_ad_mul(ad, a, b);
  SrVal *r = sr_ad_bind(ad, SR_P_mul, 2, in, (int)e->nparams, e->params);
  return r;
}

/* _balanced_eq(x, z, y): 1 where x == z, halved where y == z too. */
static SrVal *balanced_eq(SrAd *ad, SrVal *xv, SrVal *z, SrVal *yv) {
  const SrType *zt = sr_ad_type(ad, z);
  if (!zt) return NULL;
  SrVal *ones = sr_ad_full(ad, zt, 1.0), *zeros = sr_ad_full(ad, zt, 0.0), *twos = sr_ad_full(ad, zt, 2.0);
  SrVal *c1[2] = {zeros, ones};
  SrVal *num = sr_ad_select_n(ad, sr_ad_binop(ad, SR_P_eq, xv, z), 2, c1);
  SrVal *c2[2] = {ones, twos};
  SrVal *den = sr_ad_select_n(ad, sr_ad_binop(ad, SR_P_eq, yv, z), 2, c2);
  return sr_ad_div(ad, num, den);
}

/* ==== the unary ops: neg, sign, abs, exp, log, sin, ..., erf, erfc, erf_inv ==== */

static const struct {
  int id;
  unsigned accepted;
  uint8_t result;      /* ResultDtype */
  uint8_t narrow_ints; /* accepts int2/int4/uint2/uint4 */
} unops[] = {
  {SR_P_neg, SR_DC_NUM, RES_SAME, 1},
  {SR_P_sign, SR_DC_NUM, RES_SAME, 1},
  {SR_P_abs, SR_DC_SIGNED | SR_DC_FLOAT | SR_DC_COMPLEX, RES_REAL, 0},
  {SR_P_exp, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_exp2, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_log, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_expm1, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_log1p, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_sin, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_cos, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_tan, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_tanh, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_logistic, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_sqrt, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_rsqrt, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_real, SR_DC_COMPLEX, RES_REAL, 1},
  {SR_P_imag, SR_DC_COMPLEX, RES_REAL, 1},
  {SR_P_conj, SR_DC_F32 | SR_DC_F64 | SR_DC_COMPLEX, RES_COMPLEX, 1},
  {SR_P_cbrt, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_square, SR_DC_NUM, RES_SAME, 1},
  {SR_P_floor, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_ceil, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_round, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_not, SR_DC_INT | SR_DC_BOOL, RES_SAME, 1},
  {SR_P_is_finite, SR_DC_FLOAT, RES_BOOL, 1},
  {SR_P_erf, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_erfc, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_erf_inv, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_lgamma, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_digamma, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_asin, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_acos, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_atan, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_sinh, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_cosh, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_asinh, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_acosh, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_atanh, SR_DC_FLOAT | SR_DC_COMPLEX, RES_SAME, 1},
  {SR_P_population_count, SR_DC_INT, RES_SAME, 1},
  {SR_P_clz, SR_DC_INT, RES_SAME, 1},
  {SR_P_bessel_i0e, SR_DC_FLOAT, RES_SAME, 1},
  {SR_P_bessel_i1e, SR_DC_FLOAT, RES_SAME, 1},
};

/* lax.unop with unop_ur_rule: reduced passes, unreduced is an error. */
static int type_unop(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  size_t k = 0;
  while (k < sizeof unops / sizeof unops[0] && unops[k].id != e->prim->id) k++;
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  /* the older printer's untyped literal (`neg 1.0`) had the result's dtype */
  if (e->inv && sr_is_bare_lit(e->inv[0]) && sr_written(e, 0) && unops[k].result == RES_SAME)
    x = sr_type_with_dtype(x, sr_written(e, 0)->dtype);
  if (unop_dtype(cx, e->prim->name, x, unops[k].accepted, unops[k].narrow_ints) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  b.dtype = unops[k].result == RES_BOOL      ? SR_BOOL
            : unops[k].result == RES_REAL    ? sr_dtype_real_of(x->dtype)
            : unops[k].result == RES_COMPLEX ? sr_dtype_complex_of(x->dtype)
                                             : x->dtype;
  b.weak = x->weak;
  if (s.mode != SR_MODE_AUTO) {
    SrAxes u;
    if (sr_getu(cx, x, &u) < 0) return -1;
    if (u)
      return sr_terr(cx, "NotImplementedError",
                     "unreduced rule for %s is not implemented. Please file an issue at "
                     "https://github.com/jax-ml/jax/issues",
                     e->prim->name);
    b.reduced = sr_getr(cx, x);
  }
  b.varying = x->varying; /* unop's vma rule: the operand's, unchecked */
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

static int64_t round_method(const SrVal *v) {
  if (!v) return 0;
  if (v->kind == SR_V_INT) return v->i;
  if ((v->kind == SR_V_WORD || v->kind == SR_V_STR) && memmem(v->str.s, v->str.n, "EVEN", 4)) return 1;
  return 0;
}

/* The unary ops' kernels (exec/kern_ew.h): one loop per dtype, hung on
   each row by kernels_elementwise.  Integer arithmetic wraps, in U. */
#define UN_FLOATS(OP, E32, E64) SR_KERN_UN(OP##_f32, float, float, E32) SR_KERN_UN(OP##_f64, double, double, E64)
/* the same through the vector math library where it runs (exec/vmath.h) */
#define UN_VFLOATS(OP, VM, E32, E64)                                              \
  static int OP##_f32(size_t n, const void *a, void *out, const int64_t *ip) {   \
    (void)ip;                                                                     \
    if (sr_vmath_f32(VM, n, a, out) == 0) return 0;                               \
    SR_KERN_UN_LOOP(float, float, E32);                                           \
  }                                                                               \
  static int OP##_f64(size_t n, const void *a, void *out, const int64_t *ip) {   \
    (void)ip;                                                                     \
    if (sr_vmath_f64(VM, n, a, out) == 0) return 0;                               \
    SR_KERN_UN_LOOP(double, double, E64);                                         \
  }
UN_FLOATS(k_neg, -p, -p)
SR_KERN_UN_SINTS(k_neg, -(U)p)
SR_KERN_UN_UINTS(k_neg, -p)
UN_FLOATS(k_sign, p > 0 ? 1.0f : p < 0 ? -1.0f : p, p > 0 ? 1.0 : p < 0 ? -1.0 : p)
SR_KERN_UN_SINTS(k_sign, (p > 0) - (p < 0))
SR_KERN_UN_UINTS(k_sign, p > 0)
UN_FLOATS(k_abs, fabsf(p), fabs(p))
SR_KERN_UN_SINTS(k_abs, p < 0 ? -(U)p : (U)p)
SR_KERN_UN_UINTS(k_abs, p)
UN_VFLOATS(k_exp, SR_VM_EXP, expf(p), exp(p))
UN_VFLOATS(k_exp2, SR_VM_EXP2, exp2f(p), exp2(p))
UN_VFLOATS(k_log, SR_VM_LOG, logf(p), log(p))
UN_VFLOATS(k_expm1, SR_VM_EXPM1, expm1f(p), expm1(p))
UN_VFLOATS(k_log1p, SR_VM_LOG1P, log1pf(p), log1p(p))
UN_VFLOATS(k_sin, SR_VM_SIN, sinf(p), sin(p))
UN_VFLOATS(k_cos, SR_VM_COS, cosf(p), cos(p))
UN_VFLOATS(k_tan, SR_VM_TAN, tanf(p), tan(p))
UN_VFLOATS(k_tanh, SR_VM_TANH, tanhf(p), tanh(p))
/* logistic: exp(-x) through the vector library where it runs, then
   1 / (1 + e), in the output */
#define LOGISTIC(T, VFN, EXPR)                                                   \
  {                                                                              \
    (void)ip;                                                                    \
    if (!sr_vmath_form()) SR_KERN_UN_LOOP(T, T, EXPR);                           \
    const T *xs = a;                                                             \
    T *ys = out;                                                                 \
    for (size_t i = 0; i < n; i++) ys[i] = -xs[i];                               \
    VFN(SR_VM_EXP, n, ys, ys);                                                   \
    for (size_t i = 0; i < n; i++) ys[i] = 1 / (1 + ys[i]);                      \
    return 0;                                                                    \
  }
static int k_logistic_f32(size_t n, const void *a, void *out, const int64_t *ip)
    LOGISTIC(float, sr_vmath_f32, 1.0f / (1.0f + expf(-p)))
static int k_logistic_f64(size_t n, const void *a, void *out, const int64_t *ip)
    LOGISTIC(double, sr_vmath_f64, 1.0 / (1.0 + exp(-p)))
UN_FLOATS(k_sqrt, sqrtf(p), sqrt(p))
UN_FLOATS(k_rsqrt, 1.0f / sqrtf(p), 1.0 / sqrt(p))
UN_VFLOATS(k_cbrt, SR_VM_CBRT, cbrtf(p), cbrt(p))
UN_FLOATS(k_square, p * p, p * p)
SR_KERN_UN_SINTS(k_square, (uint64_t)(U)p * (U)p)
SR_KERN_UN_UINTS(k_square, (uint64_t)p * p)
UN_FLOATS(k_floor, floorf(p), floor(p))
UN_FLOATS(k_ceil, ceilf(p), ceil(p))
SR_KERN_UN_SINTS(k_not, ~p)
SR_KERN_UN_UINTS(k_not, ~p)
SR_KERN_UN(k_not_bool, uint8_t, uint8_t, !p)
SR_KERN_UN(k_same_bool, uint8_t, uint8_t, p)
SR_KERN_UN(k_is_finite_f32, float, uint8_t, isfinite(p))
SR_KERN_UN(k_is_finite_f64, double, uint8_t, isfinite(p))
UN_VFLOATS(k_erf, SR_VM_ERF, erff(p), erf(p))
UN_VFLOATS(k_erfc, SR_VM_ERFC, erfcf(p), erfc(p))
UN_FLOATS(k_erf_inv, sr_prng_erfinv_f32(p), sr_prng_erfinv_f64(p))

/* digamma: NaN at the poles (0, -1, ...), the reflection
   psi(1 - x) - pi / tan(pi x) below 1/2, the recurrence
   psi(x) = psi(x + 1) - 1/x up to 6, then the asymptotic series */
static double digamma_f64(double x) {
  if (isnan(x) || x == -INFINITY) return NAN;
  if (x <= 0 && x == floor(x)) return NAN;
  double r = 0;
  if (x < 0.5) {
    r = -M_PI / tan(M_PI * x);
    x = 1 - x;
  }
  while (x < 6) {
    r -= 1 / x;
    x += 1;
  }
  double f = 1 / (x * x);
  double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))));
  return r + log(x) - 0.5 / x + t;
}

UN_FLOATS(k_lgamma, (float)lgamma((double)p), lgamma(p))
UN_FLOATS(k_digamma, (float)digamma_f64((double)p), digamma_f64(p))
UN_FLOATS(k_asin, asinf(p), asin(p))
UN_FLOATS(k_acos, acosf(p), acos(p))
UN_FLOATS(k_atan, atanf(p), atan(p))
UN_FLOATS(k_sinh, sinhf(p), sinh(p))
UN_FLOATS(k_cosh, coshf(p), cosh(p))
UN_FLOATS(k_asinh, asinhf(p), asinh(p))
UN_FLOATS(k_acosh, acoshf(p), acosh(p))
UN_FLOATS(k_atanh, atanhf(p), atanh(p))
UN_FLOATS(k_bessel_i0e, (float)sr_bessel_i0e((double)p), sr_bessel_i0e(p))
UN_FLOATS(k_bessel_i1e, (float)sr_bessel_i1e((double)p), sr_bessel_i1e(p))
/* population_count and clz on the operand's bits (U, BITS wide) */
SR_KERN_UN_SINTS(k_popcount, __builtin_popcountll((uint64_t)(U)p))
SR_KERN_UN_UINTS(k_popcount, __builtin_popcountll((uint64_t)p))
SR_KERN_UN_SINTS(k_clz, (U)p == 0 ? BITS : __builtin_clzll((uint64_t)(U)p) - (64 - BITS))
SR_KERN_UN_UINTS(k_clz, p == 0 ? BITS : __builtin_clzll((uint64_t)p) - (64 - BITS))

/* the Hurwitz zeta function zeta(x, q) = sum_n (n + q)^-x, Cephes' zeta:
   the sum to a >= 9, then the Euler-Maclaurin tail */
static double zeta_f64(double x, double q) {
  static const double A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                             7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                             -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18};
  const double eps = 1.11022302462515654042e-16;
  if (isnan(x) || isnan(q)) return NAN;
  if (x == 1.0) return INFINITY;
  if (x < 1.0) return NAN;
  if (q <= 0.0) {
    if (q == floor(q)) return INFINITY;
    if (x != floor(x)) return NAN;
  }
  double s = pow(q, -x), a = q, b = 0.0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    i++;
    a += 1.0;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < eps) return s;
  }
  double w = a, k = 0.0;
  s += b * w / (x - 1.0);
  s -= 0.5 * b;
  a = 1.0;
  for (i = 0; i < 12; i++) {
    a *= x + k;
    b /= w;
    double t = a * b / A[i];
    s += t;
    if (fabs(t / s) < eps) return s;
    k += 1.0;
    a *= x + k;
    b /= w;
    k += 1.0;
  }
  return s;
}

/* polygamma(n, x): digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1, x),
   NaN for an n that is not a natural number (as XLA's chlo.polygamma) */
static double polygamma_f64(double n, double x) {
  if (isnan(n) || n != floor(n) || n < 0) return NAN;
  if (n == 0) return digamma_f64(x);
  double sign = fmod(n, 2.0) == 0 ? -1.0 : 1.0;
  return sign * exp(lgamma(n + 1.0)) * zeta_f64(n + 1.0, x);
}

SR_KERN_BIN(k_polygamma_f32, float, float, (float)polygamma_f64(p, q))
SR_KERN_BIN(k_polygamma_f64, double, double, polygamma_f64(p, q))
SR_KERN_BIN(k_zeta_f32, float, float, (float)zeta_f64(p, q))
SR_KERN_BIN(k_zeta_f64, double, double, zeta_f64(p, q))
static const SrKernEw kern_polygamma = {.bin = {SR_KERN_FLOATS(k_polygamma)}};
static const SrKernEw kern_zeta = {.bin = {SR_KERN_FLOATS(k_zeta)}};

/* round: ip[0] is the rounding method, 1 for to-nearest-even */
static int k_round_f32(size_t n, const void *a, void *out, const int64_t *ip) {
  if (ip && ip[0] == 1) SR_KERN_UN_LOOP(float, float, nearbyintf(p));
  SR_KERN_UN_LOOP(float, float, roundf(p));
}

static int k_round_f64(size_t n, const void *a, void *out, const int64_t *ip) {
  if (ip && ip[0] == 1) SR_KERN_UN_LOOP(double, double, nearbyint(p));
  SR_KERN_UN_LOOP(double, double, round(p));
}

/* complex64 and complex128: C's float and double _Complex, laid out as
   numpy and XLA lay them out (the real part, then the imaginary), through
   libm's complex functions where C has them */
typedef float _Complex cf32;
typedef double _Complex cf64;
#define UN_COMPLEX(OP, E64, E128) SR_KERN_UN(OP##_c64, cf32, cf32, E64) SR_KERN_UN(OP##_c128, cf64, cf64, E128)
/* expm1 and log1p without the cancellation of exp(z) - 1 and log(1 + z)
   near 0: expm1(x + iy) = expm1(x) cos y - 2 sin^2(y/2) + i e^x sin y,
   log1p(x + iy) = log1p(2x + x^2 + y^2) / 2 + i atan2(y, 1 + x) */
static cf64 c_expm1(cf64 z) {
  double x = creal(z), y = cimag(z), h = sin(y / 2);
  return CMPLX(expm1(x) * cos(y) - 2 * h * h, exp(x) * sin(y));
}
static cf64 c_log1p(cf64 z) {
  double x = creal(z), y = cimag(z);
  return CMPLX(log1p(x * (2 + x) + y * y) / 2, atan2(y, 1 + x));
}
/* sin and cos as lax's _sin_complex and _cos_complex lower them: sinh and
   cosh of the imaginary part from expm1 (no cancellation near 0), and the
   part that sin(0) or cos(0)'s product would make -0 or NaN set to +0 where
   the real part is 0 */
static void sinh_cosh_expm1(double b, double *snh, double *csh) {
  double e1 = expm1(b), e2 = expm1(-b);
  *snh = (e1 - e2) / 2, *csh = (e1 + e2 + 2) / 2;
}
static cf64 c_sin(cf64 z) {
  double a = creal(z), snh, csh;
  sinh_cosh_expm1(cimag(z), &snh, &csh);
  return CMPLX(a == 0 ? 0.0 : sin(a) * csh, cos(a) * snh);
}
static cf64 c_cos(cf64 z) {
  double a = creal(z), snh, csh;
  sinh_cosh_expm1(cimag(z), &snh, &csh);
  return CMPLX(cos(a) * csh, a == 0 ? 0.0 : -sin(a) * snh);
}
/* sign: z / |z|, 0 at 0 (XLA's) */
static cf64 c_sign(cf64 z) {
  double r = cabs(z);
  return r == 0 ? z : z / r;
}
UN_COMPLEX(k_neg, -p, -p)
UN_COMPLEX(k_sign, (cf32)c_sign(p), c_sign(p))
UN_COMPLEX(k_exp, cexpf(p), cexp(p))
UN_COMPLEX(k_log, clogf(p), clog(p))
UN_COMPLEX(k_expm1, (cf32)c_expm1(p), c_expm1(p))
UN_COMPLEX(k_log1p, (cf32)c_log1p(p), c_log1p(p))
UN_COMPLEX(k_sin, (cf32)c_sin(p), c_sin(p))
UN_COMPLEX(k_cos, (cf32)c_cos(p), c_cos(p))
UN_COMPLEX(k_tan, ctanf(p), ctan(p))
UN_COMPLEX(k_tanh, ctanhf(p), ctanh(p))
UN_COMPLEX(k_logistic, 1.0f / (1.0f + cexpf(-p)), 1.0 / (1.0 + cexp(-p)))
UN_COMPLEX(k_sqrt, csqrtf(p), csqrt(p))
UN_COMPLEX(k_rsqrt, 1.0f / csqrtf(p), 1.0 / csqrt(p))
UN_COMPLEX(k_square, p * p, p * p)
UN_COMPLEX(k_asin, casinf(p), casin(p))
UN_COMPLEX(k_acos, cacosf(p), cacos(p))
UN_COMPLEX(k_atan, catanf(p), catan(p))
UN_COMPLEX(k_sinh, csinhf(p), csinh(p))
UN_COMPLEX(k_cosh, ccoshf(p), ccosh(p))
UN_COMPLEX(k_asinh, casinhf(p), casinh(p))
UN_COMPLEX(k_acosh, cacoshf(p), cacosh(p))
UN_COMPLEX(k_atanh, catanhf(p), catanh(p))
UN_COMPLEX(k_exp2, cexpf(p * 0.69314718055994530942f), cexp(p * 0.69314718055994530942))
UN_COMPLEX(k_conj, conjf(p), conj(p))
SR_KERN_UN(k_abs_c64, cf32, float, cabsf(p))
SR_KERN_UN(k_abs_c128, cf64, double, cabs(p))
SR_KERN_UN(k_real_c64, cf32, float, crealf(p))
SR_KERN_UN(k_real_c128, cf64, double, creal(p))
SR_KERN_UN(k_imag_c64, cf32, float, cimagf(p))
SR_KERN_UN(k_imag_c128, cf64, double, cimag(p))
/* conj of a real operand: the complex number with imaginary part 0 */
SR_KERN_UN(k_conj_f32, float, cf32, CMPLXF(p, 0.0f))
SR_KERN_UN(k_conj_f64, double, cf64, CMPLX(p, 0.0))
#undef UN_COMPLEX

static const SrKernEw kern_real = {.un = {SR_KERN_COMPLEX(k_real)}};
static const SrKernEw kern_imag = {.un = {SR_KERN_COMPLEX(k_imag)}};
static const SrKernEw kern_conj = {.un = {SR_KERN_FLOATS(k_conj), SR_KERN_COMPLEX(k_conj)}};
static const SrKernEw kern_neg = {.un = {SR_KERN_FLOATS(k_neg), SR_KERN_INTS(k_neg), SR_KERN_COMPLEX(k_neg)}};
static const SrKernEw kern_sign = {.un = {SR_KERN_FLOATS(k_sign), SR_KERN_COMPLEX(k_sign), SR_KERN_INTS(k_sign), [SR_BOOL] = k_same_bool}};
static const SrKernEw kern_abs = {.un = {SR_KERN_FLOATS(k_abs), SR_KERN_COMPLEX(k_abs), SR_KERN_INTS(k_abs), [SR_BOOL] = k_same_bool}};
static const SrKernEw kern_exp = {.un = {SR_KERN_FLOATS(k_exp), SR_KERN_COMPLEX(k_exp)}};
static const SrKernEw kern_exp2 = {.un = {SR_KERN_FLOATS(k_exp2), SR_KERN_COMPLEX(k_exp2)}};
static const SrKernEw kern_log = {.un = {SR_KERN_FLOATS(k_log), SR_KERN_COMPLEX(k_log)}};
static const SrKernEw kern_expm1 = {.un = {SR_KERN_FLOATS(k_expm1), SR_KERN_COMPLEX(k_expm1)}};
static const SrKernEw kern_log1p = {.un = {SR_KERN_FLOATS(k_log1p), SR_KERN_COMPLEX(k_log1p)}};
static const SrKernEw kern_sin = {.un = {SR_KERN_FLOATS(k_sin), SR_KERN_COMPLEX(k_sin)}};
static const SrKernEw kern_cos = {.un = {SR_KERN_FLOATS(k_cos), SR_KERN_COMPLEX(k_cos)}};
static const SrKernEw kern_tan = {.un = {SR_KERN_FLOATS(k_tan), SR_KERN_COMPLEX(k_tan)}};
static const SrKernEw kern_tanh = {.un = {SR_KERN_FLOATS(k_tanh), SR_KERN_COMPLEX(k_tanh)}};
static const SrKernEw kern_logistic = {.un = {SR_KERN_FLOATS(k_logistic), SR_KERN_COMPLEX(k_logistic)}};
static const SrKernEw kern_sqrt = {.un = {SR_KERN_FLOATS(k_sqrt), SR_KERN_COMPLEX(k_sqrt)}};
static const SrKernEw kern_rsqrt = {.un = {SR_KERN_FLOATS(k_rsqrt), SR_KERN_COMPLEX(k_rsqrt)}};
static const SrKernEw kern_cbrt = {.un = {SR_KERN_FLOATS(k_cbrt)}};
static const SrKernEw kern_square = {.un = {SR_KERN_FLOATS(k_square), SR_KERN_COMPLEX(k_square), SR_KERN_INTS(k_square), [SR_BOOL] = k_same_bool}};
static const SrKernEw kern_floor = {.un = {SR_KERN_FLOATS(k_floor)}};
static const SrKernEw kern_ceil = {.un = {SR_KERN_FLOATS(k_ceil)}};
static const SrKernEw kern_round = {.un = {SR_KERN_FLOATS(k_round)}};
static const SrKernEw kern_not = {.un = {SR_KERN_INTS(k_not), [SR_BOOL] = k_not_bool}};
static const SrKernEw kern_is_finite = {.un = {SR_KERN_FLOATS(k_is_finite)}, .bool_out = 1};
static const SrKernEw kern_erf = {.un = {SR_KERN_FLOATS(k_erf)}};
static const SrKernEw kern_erfc = {.un = {SR_KERN_FLOATS(k_erfc)}};
static const SrKernEw kern_erf_inv = {.un = {SR_KERN_FLOATS(k_erf_inv)}};
static const SrKernEw kern_lgamma = {.un = {SR_KERN_FLOATS(k_lgamma)}};
static const SrKernEw kern_digamma = {.un = {SR_KERN_FLOATS(k_digamma)}};
static const SrKernEw kern_asin = {.un = {SR_KERN_FLOATS(k_asin), SR_KERN_COMPLEX(k_asin)}};
static const SrKernEw kern_acos = {.un = {SR_KERN_FLOATS(k_acos), SR_KERN_COMPLEX(k_acos)}};
static const SrKernEw kern_atan = {.un = {SR_KERN_FLOATS(k_atan), SR_KERN_COMPLEX(k_atan)}};
static const SrKernEw kern_sinh = {.un = {SR_KERN_FLOATS(k_sinh), SR_KERN_COMPLEX(k_sinh)}};
static const SrKernEw kern_cosh = {.un = {SR_KERN_FLOATS(k_cosh), SR_KERN_COMPLEX(k_cosh)}};
static const SrKernEw kern_asinh = {.un = {SR_KERN_FLOATS(k_asinh), SR_KERN_COMPLEX(k_asinh)}};
static const SrKernEw kern_acosh = {.un = {SR_KERN_FLOATS(k_acosh), SR_KERN_COMPLEX(k_acosh)}};
static const SrKernEw kern_atanh = {.un = {SR_KERN_FLOATS(k_atanh), SR_KERN_COMPLEX(k_atanh)}};
static const SrKernEw kern_bessel_i0e = {.un = {SR_KERN_FLOATS(k_bessel_i0e)}};
static const SrKernEw kern_bessel_i1e = {.un = {SR_KERN_FLOATS(k_bessel_i1e)}};
static const SrKernEw kern_population_count = {.un = {SR_KERN_INTS(k_popcount)}};
static const SrKernEw kern_clz = {.un = {SR_KERN_INTS(k_clz)}};

static int ev_unary(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  EwArg w;
  memset(&w, 0, sizeof w);
  w.prim = e->prim->id;
  w.nin = 1;
  w.dt = e->in[0]->type->dtype;
  switch (w.prim) {
  case SR_P_integer_pow:
    if (sr_ev_param_int(cx, e, "y", &w.ip[0]) < 0) return -1;
    break;
  case SR_P_round: w.ip[0] = round_method(sr_ev_param(e, "rounding_method")); break;
  case SR_P_reduce_precision:
    /* without the params, no bits are dropped */
    w.ip[0] = 64;
    w.ip[1] = 64;
    if (sr_ev_param(e, "exponent_bits")) sr_ev_param_int(cx, e, "exponent_bits", &w.ip[0]);
    if (sr_ev_param(e, "mantissa_bits")) sr_ev_param_int(cx, e, "mantissa_bits", &w.ip[1]);
    break;
  default: break;
  }
  int rc;
  if (ew_one_device(cx, e, m, l, &w, &rc)) return rc;
  SrArray *x = operand(cx, e, 0, m, l, -1);
  if (!x) return -1;
  e->out[0] = sr_array_new(t, sr_layout_with_dtype(l, t->dtype), m);
  rc = sr_ev_map(cx, 1, &x, 1, e->out, reuse_flags(e, &x, 0), ew_fn, &w);
  sr_array_unref(x);
  return rc;
}

JVP1(jvp_neg) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_neg(ad, t[0]);
  return done1(y, ty);
}

JVP1(jvp_exp) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], ans);
  return done1(y, ty);
}

JVP1(jvp_exp2) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *l2 = unop_like(ad, SR_P_log, sr_ad_const(ad, x[0], 2.0), e);
  ty[0] = sr_ad_mul(ad, l2, sr_ad_mul(ad, t[0], ans));
  return done1(y, ty);
}

JVP1(jvp_log) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_div(ad, t[0], x[0]);
  return done1(y, ty);
}

JVP1(jvp_expm1) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_binop(ad, SR_P_add, ans, sr_ad_scalar_like(ad, ans, 1.0)));
  return done1(y, ty);
}

JVP1(jvp_log1p) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_div(ad, t[0], sr_ad_binop(ad, SR_P_add, x[0], sr_ad_scalar_like(ad, x[0], 1.0)));
  return done1(y, ty);
}

JVP1(jvp_sin) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], unop_like(ad, SR_P_cos, x[0], e));
  return done1(y, ty);
}

JVP1(jvp_cos) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_neg(ad, sr_ad_mul(ad, t[0], unop_like(ad, SR_P_sin, x[0], e)));
  return done1(y, ty);
}

JVP1(jvp_tan) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *sq = sr_ad_unop(ad, SR_P_square, ans);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_binop(ad, SR_P_add, sr_ad_const(ad, x[0], 1.0), sq));
  return done1(y, ty);
}

JVP1(jvp_tanh) {
  /* mul(add(g, mul(g, ans)), sub(_one(x), ans)) (default accuracy) */
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *a = sr_ad_binop(ad, SR_P_add, t[0], sr_ad_mul(ad, t[0], ans));
  SrVal *b = sr_ad_binop(ad, SR_P_sub, sr_ad_scalar_like(ad, x[0], 1.0), ans);
  ty[0] = sr_ad_mul(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_logistic) {
  /* mul(g, mul(ans, sub(_one(ans), ans))) */
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *b = sr_ad_mul(ad, ans, sr_ad_binop(ad, SR_P_sub, sr_ad_scalar_like(ad, ans, 1.0), ans));
  ty[0] = sr_ad_mul(ad, t[0], b);
  return done1(y, ty);
}

JVP1(jvp_sqrt) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_div(ad, sr_ad_const(ad, x[0], 0.5), ans));
  return done1(y, ty);
}

JVP1(jvp_rsqrt) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_mul(ad, sr_ad_const(ad, x[0], -0.5), sr_ad_div(ad, ans, x[0])));
  return done1(y, ty);
}

JVP1(jvp_cbrt) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *p = sr_ad_bindv(ad, SR_P_integer_pow, 1, &ans, "y", sr_int(NULL, -2), NULL);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_mul(ad, sr_ad_const(ad, x[0], 1.0 / 3.0), p));
  return done1(y, ty);
}

JVP1(jvp_square) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_mul(ad, sr_ad_const(ad, x[0], 2.0), x[0]));
  return done1(y, ty);
}

JVP1(jvp_erf) {
  y[0] = primal1(ad, e, x);
  SrVal *ex = sr_ad_unop(ad, SR_P_exp, sr_ad_neg(ad, sr_ad_unop(ad, SR_P_square, x[0])));
  ty[0] = sr_ad_mul(ad, sr_ad_const(ad, x[0], 2.0 / sqrt(M_PI)), sr_ad_mul(ad, t[0], ex));
  return done1(y, ty);
}

/* ad.defjvp(erfc_p, lambda g, x: mul(_const(x, -2. / np.sqrt(np.pi)),
 *                                    mul(g, exp(neg(square(x)))))) */
JVP1(jvp_erfc) {
  y[0] = primal1(ad, e, x);
  SrVal *ex = sr_ad_unop(ad, SR_P_exp, sr_ad_neg(ad, sr_ad_unop(ad, SR_P_square, x[0])));
  ty[0] = sr_ad_mul(ad, sr_ad_const(ad, x[0], -2.0 / sqrt(M_PI)), sr_ad_mul(ad, t[0], ex));
  return done1(y, ty);
}

JVP1(jvp_erf_inv) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *ex = sr_ad_unop(ad, SR_P_exp, sr_ad_unop(ad, SR_P_square, ans));
  ty[0] = sr_ad_mul(ad, sr_ad_const(ad, x[0], sqrt(M_PI) / 2.0), sr_ad_mul(ad, t[0], ex));
  return done1(y, ty);
}

/* ad.defjvp(lgamma_p, lambda g, x: mul(g, digamma(x))) */
JVP1(jvp_lgamma) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_unop(ad, SR_P_digamma, x[0]));
  return done1(y, ty);
}

/* ad.defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x))))) and
   acos_p's, the same negated */
JVP1(jvp_asin) {
  y[0] = primal1(ad, e, x);
  SrVal *d = sr_ad_binop(ad, SR_P_sub, sr_ad_const(ad, x[0], 1.0), sr_ad_unop(ad, SR_P_square, x[0]));
  SrVal *r = sr_ad_unop(ad, SR_P_rsqrt, d);
  ty[0] = sr_ad_mul(ad, t[0], e->prim->id == SR_P_acos ? sr_ad_neg(ad, r) : r);
  return done1(y, ty);
}

/* ad.defjvp(atan_p, lambda g, x: div(g, add(_const(x, 1), square(x)))) */
JVP1(jvp_atan) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_div(ad, t[0], sr_ad_binop(ad, SR_P_add, sr_ad_const(ad, x[0], 1.0), sr_ad_unop(ad, SR_P_square, x[0])));
  return done1(y, ty);
}

/* sinh: mul(g, cosh(x)); cosh: mul(g, sinh(x)) */
JVP1(jvp_sinh) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_unop(ad, e->prim->id == SR_P_sinh ? SR_P_cosh : SR_P_sinh, x[0]));
  return done1(y, ty);
}

/* asinh: mul(g, rsqrt(add(square(x), _one(x))));
   acosh: mul(g, rsqrt(sub(square(x), _one(x)))) */
JVP1(jvp_asinh) {
  y[0] = primal1(ad, e, x);
  SrVal *d = sr_ad_binop(ad, e->prim->id == SR_P_asinh ? SR_P_add : SR_P_sub, sr_ad_unop(ad, SR_P_square, x[0]),
                         sr_ad_scalar_like(ad, x[0], 1.0));
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_unop(ad, SR_P_rsqrt, d));
  return done1(y, ty);
}

/* mul(reciprocal(add(_one(x), x)), div(g, sub(_one(x), x))) */
JVP1(jvp_atanh) {
  y[0] = primal1(ad, e, x);
  SrVal *p = sr_ad_binop(ad, SR_P_add, sr_ad_scalar_like(ad, x[0], 1.0), x[0]);
  SrVal *rp = sr_ad_bindv(ad, SR_P_integer_pow, 1, &p, "y", sr_int(NULL, -1), NULL);
  SrVal *q = sr_ad_div(ad, t[0], sr_ad_binop(ad, SR_P_sub, sr_ad_scalar_like(ad, x[0], 1.0), x[0]));
  ty[0] = sr_ad_mul(ad, rp, q);
  return done1(y, ty);
}

/* ad.defjvp2(bessel_i0e_p, lambda g, y, x: g * (bessel_i1e(x) - sign(x) * y)) */
JVP1(jvp_bessel_i0e) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  /* operands in Python's order (C leaves the order of arguments open) */
  SrVal *i1 = sr_ad_unop(ad, SR_P_bessel_i1e, x[0]);
  SrVal *sy = sr_ad_mul(ad, sr_ad_unop(ad, SR_P_sign, x[0]), ans);
  SrVal *d = sr_ad_binop(ad, SR_P_sub, i1, sy);
  ty[0] = sr_ad_mul(ad, t[0], d);
  return done1(y, ty);
}

/* _bessel_i1e_jvp: safe_x = select(abs(x) > eps, x, full_like(x, eps));
   dy_dx = bessel_i0e(safe_x) - y * (sign(safe_x) + reciprocal(safe_x)),
   0.5 where x is tiny; g * dy_dx */
JVP1(jvp_bessel_i1e) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  const SrType *xt = sr_ad_type(ad, x[0]);
  if (!xt) return -1;
  double eps = xt->dtype == SR_F64 ? 2.220446049250313e-16 : xt->dtype == SR_F16 ? 0.0009765625
               : xt->dtype == SR_BF16 ? 0.0078125 : 1.1920929e-07;
  SrVal *big = sr_ad_binop(ad, SR_P_gt, sr_ad_unop(ad, SR_P_abs, x[0]), sr_ad_const(ad, x[0], eps));
  SrVal *c1[2] = {sr_ad_full(ad, xt, eps), x[0]};
  SrVal *sx = sr_ad_select_n(ad, big, 2, c1);
  SrVal *i0 = sr_ad_unop(ad, SR_P_bessel_i0e, sx);
  SrVal *sg = sr_ad_unop(ad, SR_P_sign, sx);
  SrVal *rs = sr_ad_bindv(ad, SR_P_integer_pow, 1, &sx, "y", sr_int(NULL, -1), NULL);
  SrVal *d = sr_ad_binop(ad, SR_P_sub, i0, sr_ad_mul(ad, ans, sr_ad_binop(ad, SR_P_add, sg, rs)));
  SrVal *c2[2] = {sr_ad_full(ad, xt, 0.5), d};
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_select_n(ad, big, 2, c2));
  return done1(y, ty);
}

/* ad.defjvp(digamma_p, lambda g, x: mul(g, polygamma(_const(x, 1), x))) */
JVP1(jvp_digamma) {
  y[0] = primal1(ad, e, x);
  ty[0] = sr_ad_mul(ad, t[0], sr_ad_binop(ad, SR_P_polygamma, sr_ad_const(ad, x[0], 1), x[0]));
  return done1(y, ty);
}

/* ad.defjvp(polygamma_p, polygamma_gradm, polygamma_gradx): m has none;
   g * polygamma(add(m, _const(m, 1)), x) */
JVP1(jvp_polygamma) {
  if (t[0]) {
    sr_raise(ad->I, "ValueError", "polygamma gradient with respect to m is not supported");
    return -1;
  }
  y[0] = primal1(ad, e, x);
  SrVal *m1 = sr_ad_binop(ad, SR_P_add, x[0], sr_ad_const(ad, x[0], 1));
  ty[0] = t[1] ? sr_ad_mul(ad, t[1], sr_ad_binop(ad, SR_P_polygamma, m1, x[1])) : NULL;
  return done1(y, ty);
}

/* lax.conj_p.bind(x, input_dtype=x's dtype) */
static SrVal *ad_conj(SrAd *ad, SrVal *x) {
  const SrType *t = sr_ad_type(ad, x);
  return t ? sr_ad_bindv(ad, SR_P_conj, 1, &x, "input_dtype", sr_dtype_val(NULL, t->dtype), NULL) : NULL;
}

/* lax.complex(x, y) */
static SrVal *ad_complex(SrAd *ad, SrVal *re, SrVal *im) { return sr_ad_binop(ad, SR_P_complex, re, im); }

/* np.zeros((), dtype of x): a rank-0 literal */
static SrVal *ad_zero_of(SrAd *ad, SrVal *x) {
  const SrType *t = sr_ad_type(ad, x);
  return t ? sr_ad_scalar(ad, t->dtype, 0, 0.0) : NULL;
}

/* real and imag transpose into complex(t, 0) and complex(0, -t) */
TR(tr_real) {
  (void)x;
  (void)e;
  cx[0] = ad_complex(ad, ct[0], ad_zero_of(ad, ct[0]));
  return cx[0] ? 0 : -1;
}

TR(tr_imag) {
  (void)x;
  (void)e;
  cx[0] = ad_complex(ad, ad_zero_of(ad, ct[0]), sr_ad_neg(ad, ct[0]));
  return cx[0] ? 0 : -1;
}

/* _complex_transpose_rule: real(t) to x, imag(neg(t)) to y, unbroadcast */
TR(tr_complex) {
  if (!x[0] && !(cx[0] = sr_ad_unbroadcast(ad, ct_of(e, 0), sr_ad_unop(ad, SR_P_real, ct[0])))) return -1;
  if (!x[1] && !(cx[1] = sr_ad_unbroadcast(ad, ct_of(e, 1), sr_ad_unop(ad, SR_P_imag, sr_ad_neg(ad, ct[0])))))
    return -1;
  return 0;
}

/* _conj_transpose_rule: conj(t) for a complex input_dtype, real(t) else */
TR(tr_conj) {
  (void)x;
  cx[0] = sr_dtype_kind(e->in[0]->type->dtype) == SR_DK_COMPLEX ? ad_conj(ad, ct[0]) : sr_ad_unop(ad, SR_P_real, ct[0]);
  return cx[0] ? 0 : -1;
}

JVP1(jvp_abs) {
  const SrType *xt = sr_ad_type(ad, x[0]);
  if (xt && sr_dtype_kind(xt->dtype) == SR_DK_COMPLEX) {
    /* real(g * (conj(x) / _replace_zero(convert_element_type(ans, x's dtype)))) */
    SrVal *ans = y[0] = primal1(ad, e, x);
    SrVal *ac = sr_ad_convert(ad, ans, xt->dtype, 0);
    SrVal *is0 = sr_ad_binop(ad, SR_P_eq, ac, sr_ad_const(ad, ac, 0.0));
    SrVal *cases[2] = {ac, sr_ad_full(ad, sr_ad_type(ad, ac), 1.0)};
    SrVal *nz = sr_ad_select_n(ad, is0, 2, cases);
    ty[0] = sr_ad_unop(ad, SR_P_real, sr_ad_mul(ad, t[0], sr_ad_div(ad, ad_conj(ad, x[0]), nz)));
    return done1(y, ty);
  }
  /* select(ge(x, _zero(x)), g, neg(g)) */
  y[0] = primal1(ad, e, x);
  SrVal *ge = sr_ad_binop(ad, SR_P_ge, x[0], sr_ad_scalar_like(ad, x[0], 0.0));
  SrVal *cases[2] = {sr_ad_neg(ad, t[0]), t[0]};
  ty[0] = sr_ad_select_n(ad, ge, 2, cases);
  return done1(y, ty);
}

TR(tr_neg) {
  (void)x;
  (void)e;
  cx[0] = sr_ad_neg(ad, ct[0]);
  return cx[0] ? 0 : -1;
}

/* ==== integer_pow ==== */

/* lax.integer_pow_p: a unop without an ur rule. */
static int type_integer_pow(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t y = 0;
  if (sr_rparam_int(cx, e, "y", 1, &y) < 0) return -1;
  if (unop_dtype(cx, "integer_pow", x, SR_DC_NUM, 1) < 0) return -1;
  if (y < 0 && sr_dtype_in(x->dtype, SR_DC_INT)) {
    SrBuf b = SR_BUF_INIT;
    sr_aval_str(&b, x);
    sr_terr(cx, "TypeError", "Integers cannot be raised to negative powers, got integer_pow(%s, %lld)",
            sr_buf_str(&b), (long long)y);
    sr_buf_free(&b);
    return -1;
  }
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  b.varying = x->varying;
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

/* lax.integer_pow's lowering: square-and-multiply, then 1/acc for y < 0
   (ip[0] is y).  Integers are raised in uint64_t, where overflow wraps as
   XLA's integer power does (signed overflow would be undefined); |y| is
   taken unsigned, as -INT64_MIN does not fit in int64. */
#define INTPOW(NAME, T, M, ONE, ISFLOAT)                                     \
  static int NAME(size_t n, const void *a, void *out, const int64_t *ip) {   \
    const T *x_ = a;                                                         \
    T *o_ = out;                                                             \
    int64_t y = ip ? ip[0] : 1;                                              \
    int recip = y < 0;                                                       \
    uint64_t ey = recip ? -(uint64_t)y : (uint64_t)y;                        \
    for (size_t i = 0; i < n; i++) {                                         \
      M x = (M)x_[i], acc = ONE;                                             \
      int have = 0;                                                          \
      for (uint64_t e = ey; e > 0;) {                                        \
        if (e & 1) {                                                         \
          acc = have ? (M)(acc * x) : x;                                     \
          have = 1;                                                          \
        }                                                                    \
        e >>= 1;                                                             \
        if (e > 0) x = (M)(x * x);                                           \
      }                                                                      \
      T r = (T)acc;                                                          \
      if (recip) r = ISFLOAT ? (T)(ONE / r) : (r == 1 || r == (T)-1) ? r : 0; \
      o_[i] = r;                                                             \
    }                                                                        \
    return 0;                                                                \
  }
INTPOW(k_integer_pow_f32, float, float, 1.0f, 1)
INTPOW(k_integer_pow_f64, double, double, 1.0, 1)
INTPOW(k_integer_pow_c64, cf32, cf32, 1.0f, 1)
INTPOW(k_integer_pow_c128, cf64, cf64, 1.0, 1)
INTPOW(k_integer_pow_i8, int8_t, uint64_t, 1, 0)
INTPOW(k_integer_pow_i16, int16_t, uint64_t, 1, 0)
INTPOW(k_integer_pow_i32, int32_t, uint64_t, 1, 0)
INTPOW(k_integer_pow_i64, int64_t, uint64_t, 1, 0)
INTPOW(k_integer_pow_u8, uint8_t, uint64_t, 1, 0)
INTPOW(k_integer_pow_u16, uint16_t, uint64_t, 1, 0)
INTPOW(k_integer_pow_u32, uint32_t, uint64_t, 1, 0)
INTPOW(k_integer_pow_u64, uint64_t, uint64_t, 1, 0)
#undef INTPOW

static const SrKernEw kern_integer_pow = {.un = {SR_KERN_FLOATS(k_integer_pow), SR_KERN_INTS(k_integer_pow), SR_KERN_COMPLEX(k_integer_pow)}};

JVP1(jvp_integer_pow) {
  static const char *ykey;
  if (!ykey) ykey = sr_intern_cstr("y");
  y[0] = primal1(ad, e, x);
  SrVal *yp = sr_eqn_param(e, ykey);
  int64_t p = yp && yp->kind == SR_V_INT ? yp->i : 1;
  if (p == 0) {
    ty[0] = NULL; /* _zeros(g) */
    return y[0] ? 0 : -1;
  }
  if (p == 1) {
    ty[0] = t[0];
  } else if (p == 2) {
    ty[0] = sr_ad_mul(ad, t[0], sr_ad_mul(ad, sr_ad_const(ad, x[0], 2.0), x[0]));
  } else {
    SrVal *q = sr_ad_bindv(ad, SR_P_integer_pow, 1, &x[0], "y", sr_int(NULL, p - 1), NULL);
    ty[0] = sr_ad_mul(ad, t[0], sr_ad_mul(ad, sr_ad_const(ad, x[0], (double)p), q));
  }
  return done1(y, ty);
}

/* ==== copy, copy_p, stop_gradient ==== */

/* Primitives whose abstract eval is the identity: copy_p, stop_gradient,
   layout_constraint (lax.copy_p, ad_util.stop_gradient_p). */
static int type_identity(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  out[0] = e->in[0];
  return 0;
}

/* copy, stop_gradient, and the identity casts: the same buffers. */
static int ev_identity(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  e->out[0] = sr_redistribute_typed(cx, e->in[0], m, operand_layout(e->in[0], l), t);
  return e->out[0] ? 0 : -1;
}

/* the same op applied to the cotangent (copy, reduce_precision) */
TR(tr_self) {
  (void)x;
  cx[0] = sr_ad_bind_eqn1(ad, e, ct);
  return cx[0] ? 0 : -1;
}

/* ==== reduce_precision ==== */

/* lax.reduce_precision_p: float operands, sets pass through. */
static int type_reduce_precision(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  int64_t ebits = 0, mbits = 0;
  if (sr_rparam_int(cx, e, "exponent_bits", 1, &ebits) < 0 || sr_rparam_int(cx, e, "mantissa_bits", 1, &mbits) < 0)
    return -1;
  if (ebits < 1)
    return sr_terr(cx, "ValueError", "reduce_precision: exponent_bits must be positive; got %lld", (long long)ebits);
  if (mbits < 0)
    return sr_terr(cx, "ValueError", "reduce_precision: mantissa_bits must be non-negative; got %lld",
                   (long long)mbits);
  if (unop_dtype(cx, "reduce_precision", x, SR_DC_FLOAT, 1) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  if (s.mode != SR_MODE_AUTO) {
    if (sr_getu(cx, x, &b.unreduced) < 0) return -1;
    b.reduced = sr_getr(cx, x);
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

/* XLA's ReducePrecision (EmitReducePrecisionIR in elemental_ir_emitter.cc)
   on the bits u of a float of nbits bits, src_eb of them the exponent's
   and src_mb the mantissa's: the mantissa rounds to mb bits, to nearest
   even; then an exponent past what eb bits hold becomes infinity and one
   below becomes zero (denormals too), keeping the sign.  The sums wrap at
   nbits, as XLA's integer arithmetic does. */
static uint64_t reduce_precision_bits(uint64_t u, int nbits, int src_eb, int src_mb, int64_t eb, int64_t mb) {
  const uint64_t width = nbits == 64 ? ~0ull : (1ull << nbits) - 1;
  if (mb < src_mb) {
    uint64_t last = 1ull << (src_mb - mb);
    uint64_t bias = (last >> 1) - 1 + ((u & last) >> (src_mb - mb));
    u = ((u + bias) & width) & ~(last - 1);
  }
  if (eb < src_eb) {
    const uint64_t sign = 1ull << (nbits - 1), exp_mask = ((1ull << src_eb) - 1) << src_mb;
    const uint64_t bias = (1ull << (src_eb - 1)) - 1, reduced_bias = (1ull << (eb - 1)) - 1;
    const uint64_t e = u & exp_mask;
    if (e > (bias + reduced_bias) << src_mb) u = (u & sign) | exp_mask;
    else if (e <= (bias - reduced_bias) << src_mb) u = u & sign;
  }
  return u;
}

/* A NaN stays a NaN while a mantissa bit is left (rounding or the
   exponent's clamp would make it an infinity or a zero). */
static float reduce_precision_f(float x, int64_t eb, int64_t mb) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u = (uint32_t)reduce_precision_bits(u, 32, 8, 23, eb, mb);
  float r;
  memcpy(&r, &u, 4);
  return mb > 0 && isnan(x) ? x : r;
}

static double reduce_precision_d(double x, int64_t eb, int64_t mb) {
  uint64_t u;
  memcpy(&u, &x, 8);
  u = reduce_precision_bits(u, 64, 11, 52, eb, mb);
  double r;
  memcpy(&r, &u, 8);
  return mb > 0 && isnan(x) ? x : r;
}

/* ip: exponent_bits, mantissa_bits */
SR_KERN_UN(k_reduce_precision_f32, float, float, reduce_precision_f(p, ip ? ip[0] : 64, ip ? ip[1] : 64))
SR_KERN_UN(k_reduce_precision_f64, double, double, reduce_precision_d(p, ip ? ip[0] : 64, ip ? ip[1] : 64))
static const SrKernEw kern_reduce_precision = {.un = {SR_KERN_FLOATS(k_reduce_precision)}};

/* ==== the n-ary ops: add, sub, mul, div, rem, pow, max, min, atan2, comparisons, bitwise ==== */

/* lax._add_ur_rule: both sides unreduced over the same axes, or
   neither. */
static int add_ur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  if (nary_reduced(cx, e, ts, &b->reduced) < 0) return -1;
  SrAxes xu, yu;
  if (sr_getu(cx, ts[0], &xu) < 0 || sr_getu(cx, ts[1], &yu) < 0) return -1;
  if (xu && yu) {
    if (xu != yu) {
      const SrMesh *m = msg_mesh(cx, e);
      SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
      sr_axes_frozenset_str(&x, m, xu);
      sr_axes_frozenset_str(&y, m, yu);
      sr_terr(cx, "ShardingTypeError",
              "lhs and rhs to `add` must be unreduced along the same mesh axes. Got lhs=%s, rhs=%s", sr_buf_str(&x),
              sr_buf_str(&y));
      sr_buf_free(&x);
      sr_buf_free(&y);
      return -1;
    }
    b->unreduced = xu;
  } else if (xu || yu) {
    const char *l = xu ? "lhs" : "rhs", *r = xu ? "rhs" : "lhs";
    return sr_terr(cx, "ShardingTypeError",
                   "%s is unreduced while %s is not. `add` operation does not allow this because there will be "
                   "implicit communication. Please reduce %s via `reshard` before calling `add`.",
                   l, r, l);
  }
  return 0;
}

static int ur_pair_error(SrTypeCtx *cx, const char *exc, const char *fmt, const SrType *x, const SrType *y,
                         int repr) {
  SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
  if (repr) {
    sr_aval_repr(&a, x);
    sr_aval_repr(&c, y);
  } else {
    sr_aval_str(&a, x);
    sr_aval_str(&c, y);
  }
  sr_terr(cx, exc, fmt, sr_buf_str(&a), sr_buf_str(&c));
  sr_buf_free(&a);
  sr_buf_free(&c);
  return -1;
}

/* lax._mul_ur_rule: mul is bilinear, so one side may be unreduced if the
   other is reduced over the same axes. */
static int mul_ur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  if (nary_reduced(cx, e, ts, &b->reduced) < 0) return -1;
  const SrType *x = ts[0], *y = ts[1];
  SrAxes xu, yu;
  if (sr_getu(cx, x, &xu) < 0 || sr_getu(cx, y, &yu) < 0) return -1;
  if (xu && yu) {
    const SrMesh *m = msg_mesh(cx, e);
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_axes_frozenset_str(&a, m, xu);
    sr_axes_frozenset_str(&c, m, yu);
    sr_terr(cx, "ShardingTypeError", "lhs and rhs to `mul` cannot be unreduced since mul is bilinear. Got lhs=%s, rhs=%s",
            sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  if (xu && xu != sr_getr(cx, y))
    return ur_pair_error(cx, "ShardingTypeError",
                         "RHS should be reduced along the same axes LHS is unreduced on. Got lhs=%s and rhs=%s", x, y, 0);
  if (yu && sr_getr(cx, x) != yu)
    return ur_pair_error(cx, "ShardingTypeError",
                         "LHS should be reduced along the same axes RHS is unreduced on. Got lhs=%s and rhs=%s", x, y, 0);
  b->unreduced = xu | yu;
  if (b->unreduced) b->reduced = 0; /* the reduced set equals it, and is used up */
  return 0;
}

/* lax._div_ur_rule: the numerator may be unreduced over the axes the
   denominator is reduced over. */
static int div_ur(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b) {
  if (nary_reduced(cx, e, ts, &b->reduced) < 0) return -1;
  const SrType *x = ts[0], *y = ts[1];
  SrAxes xu, yu;
  if (sr_getu(cx, x, &xu) < 0 || sr_getu(cx, y, &yu) < 0) return -1;
  if (yu) {
    SrBuf a = SR_BUF_INIT;
    sr_aval_repr(&a, y);
    sr_terr(cx, "ValueError", "The denominator cannot be unreduced passed to `div`. Got y=%s", sr_buf_str(&a));
    sr_buf_free(&a);
    return -1;
  }
  if (xu && xu != sr_getr(cx, y))
    return ur_pair_error(cx, "ValueError",
                         "Denominator should be reduced along the same axes numerator is unreduced on. Got x=%s, y=%s",
                         x, y, 1);
  b->unreduced = xu;
  if (xu) b->reduced = 0;
  return 0;
}

typedef int (*UrRule)(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, SrTypeBuilder *b);

static const struct {
  int id;
  unsigned accepted[3]; /* dtype classes of each position (a third: ternary) */
  uint8_t result;       /* ResultDtype */
  uint8_t extended;     /* allow_extended_dtype */
  UrRule ur;
} naryops[] = {
  {SR_P_add, {SR_DC_NUM, SR_DC_NUM}, RES_SAME, 0, add_ur},
  {SR_P_sub, {SR_DC_NUM, SR_DC_NUM}, RES_SAME, 0, nary_ur},
  {SR_P_mul, {SR_DC_NUM, SR_DC_NUM}, RES_SAME, 0, mul_ur},
  {SR_P_div, {SR_DC_NUM, SR_DC_NUM}, RES_SAME, 0, div_ur},
  {SR_P_rem, {SR_DC_INT | SR_DC_FLOAT, SR_DC_INT | SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_pow, {SR_DC_FLOAT | SR_DC_COMPLEX, SR_DC_NUM}, RES_SAME, 0, nary_ur},
  {SR_P_max, {SR_DC_ANY, SR_DC_ANY}, RES_SAME, 0, nary_ur},
  {SR_P_min, {SR_DC_ANY, SR_DC_ANY}, RES_SAME, 0, nary_ur},
  {SR_P_atan2, {SR_DC_FLOAT | SR_DC_COMPLEX, SR_DC_FLOAT | SR_DC_COMPLEX}, RES_SAME, 0, nary_ur},
  {SR_P_nextafter, {SR_DC_FLOAT, SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_complex, {SR_DC_F32 | SR_DC_F64, SR_DC_F32 | SR_DC_F64}, RES_COMPLEX, 0, nary_ur},
  {SR_P_igamma, {SR_DC_FLOAT, SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_igammac, {SR_DC_FLOAT, SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_igamma_grad_a, {SR_DC_FLOAT, SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_regularized_incomplete_beta, {SR_DC_FLOAT, SR_DC_FLOAT, SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_polygamma, {SR_DC_FLOAT, SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_zeta, {SR_DC_FLOAT, SR_DC_FLOAT}, RES_SAME, 0, nary_ur},
  {SR_P_eq, {SR_DC_ANY, SR_DC_ANY}, RES_BOOL, 1, nary_ur},
  {SR_P_ne, {SR_DC_ANY, SR_DC_ANY}, RES_BOOL, 1, nary_ur},
  {SR_P_lt, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_le, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_gt, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_ge, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_eq_to, {SR_DC_INT | SR_DC_FLOAT | SR_DC_COMPLEX | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_COMPLEX | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_le_to, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_lt_to, {SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL, SR_DC_INT | SR_DC_FLOAT | SR_DC_BOOL}, RES_BOOL, 0, nary_ur},
  {SR_P_and, {SR_DC_INT | SR_DC_BOOL, SR_DC_INT | SR_DC_BOOL}, RES_SAME, 0, nary_ur},
  {SR_P_or, {SR_DC_INT | SR_DC_BOOL, SR_DC_INT | SR_DC_BOOL}, RES_SAME, 0, nary_ur},
  {SR_P_xor, {SR_DC_INT | SR_DC_BOOL, SR_DC_INT | SR_DC_BOOL}, RES_SAME, 0, nary_ur},
  {SR_P_shift_left, {SR_DC_INT, SR_DC_INT}, RES_SAME, 0, nary_ur},
  {SR_P_shift_right_logical, {SR_DC_INT, SR_DC_INT}, RES_SAME, 0, nary_ur},
  {SR_P_shift_right_arithmetic, {SR_DC_INT, SR_DC_INT}, RES_SAME, 0, nary_ur},
  {SR_P_mulhi, {SR_DC_INT, SR_DC_INT}, RES_SAME, 0, nary_ur},
};

/* lax.naryop_dtype_rule: each operand's dtype class, then equal dtypes
   (unless mul has an out_dtype, or for pow). */
static int nary_dtype(SrTypeCtx *cx, const SrRuleEqn *e, const SrType *const *ts, const unsigned *accepted,
                      int extended, int require_same) {
  const char *name = e->prim->name;
  for (uint32_t i = 0; i < e->nin; i++) {
    SrDtype d = ts[i]->dtype;
    if (extended && sr_dtype_kind(d) == SR_DK_OTHER) continue;
    if (sr_dtype_in(d, accepted[i])) continue;
    if (d == SR_FLOAT0) return sr_float0_error(cx, name, (int)i);
    SrBuf b = SR_BUF_INIT;
    sr_dtype_classes_str(&b, accepted[i]);
    sr_terr(cx, "TypeError",
            "%s does not accept dtype %s at position %u. Accepted dtypes at position %u are subtypes of %s.", name,
            sr_dtype_name(d), i, i, sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (require_same) return sr_check_same_dtypes(cx, name, ts, e->nin);
  return 0;
}

/* lax.naryop: the binary arithmetic, comparison and bitwise ops. */
static int type_naryop(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  size_t k = 0;
  while (k < sizeof naryops / sizeof naryops[0] && naryops[k].id != e->prim->id) k++;
  int arity = naryops[k].accepted[2] ? 3 : 2;
  if (sr_rule_arity(cx, e, arity, 1) < 0) return -1;
  const SrType *ts[3];
  sr_resolve_bare_literals(e, ts);
  SrDtype out_dtype = 0;
  int has_out_dtype = 0;
  if (e->prim->id == SR_P_mul && sr_rparam_dtype(cx, e, "out_dtype", &out_dtype, &has_out_dtype) < 0) return -1;
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  if (nary_shape(cx, e, ts, &b) < 0) return -1;
  if (nary_dtype(cx, e, ts, naryops[k].accepted, naryops[k].extended,
                 e->prim->id != SR_P_pow && !has_out_dtype) < 0)
    return -1;
  if (e->prim->id == SR_P_pow && !(sr_dtype_in(ts[0]->dtype, SR_DC_FLOAT | SR_DC_COMPLEX) &&
                                   sr_dtype_in(ts[1]->dtype, SR_DC_INT)) &&
      ts[0]->dtype != ts[1]->dtype)
    return sr_terr(cx, "TypeError",
                   "the first argument to pow must have an inexact dtype (float or complex), and the second "
                   "argument must have an inexact or integer dtype, and two inexact dtypes must match, but got %s "
                   "and %s respectively.",
                   sr_dtype_name(ts[0]->dtype), sr_dtype_name(ts[1]->dtype));
  b.dtype = naryops[k].result == RES_BOOL      ? SR_BOOL
            : naryops[k].result == RES_COMPLEX ? sr_dtype_complex_of(ts[0]->dtype)
            : has_out_dtype                    ? out_dtype
                                               : ts[0]->dtype;
  b.weak = (uint8_t)(ts[0]->weak && ts[1]->weak && (arity < 3 || ts[2]->weak));
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  b.mesh = s.mesh;
  if (s.mode == SR_MODE_EXPLICIT && nary_sharding(cx, e, ts, &b) < 0) return -1;
  if (s.mode != SR_MODE_AUTO && naryops[k].ur(cx, e, ts, &b) < 0) return -1;
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

/* The n-ary ops' kernels (exec/kern_ew.h), hung on each row by
   kernels_elementwise.  Integer arithmetic wraps, in U; integer division
   by zero gives -1 (all ones) and remainder by zero the dividend, XLA's
   answers where C has undefined behaviour; bool's add and max are or, its
   mul and min and. */

/* integer pow by squaring; a negative exponent gives 0 unless |base| is 1 */
#define SPOW(T, U)                                                           \
  static T ipow_##T(T p, T q) {                                              \
    if (q < 0) return p == 1 ? 1 : p == (T)-1 ? ((q & 1) ? (T)-1 : 1) : 0;   \
    U r = 1, x = (U)p;                                                       \
    for (U e = (U)q; e; e >>= 1) {                                           \
      if (e & 1) r *= x;                                                     \
      x *= x;                                                                \
    }                                                                        \
    return (T)r;                                                             \
  }
#define UPOW(T)                                                              \
  static T ipow_##T(T p, T q) {                                              \
    T r = 1, x = p;                                                          \
    for (T e = q; e; e >>= 1) {                                              \
      if (e & 1) r = (T)(r * x);                                             \
      x = (T)(x * x);                                                        \
    }                                                                        \
    return r;                                                                \
  }
SPOW(int8_t, uint8_t)
SPOW(int16_t, uint16_t)
SPOW(int32_t, uint32_t)
SPOW(int64_t, uint64_t)
UPOW(uint8_t)
UPOW(uint16_t)
UPOW(uint32_t)
UPOW(uint64_t)
#undef SPOW
#undef UPOW
#define IPOW(p, q)                                                                                        \
  _Generic((p), int8_t: ipow_int8_t, int16_t: ipow_int16_t, int32_t: ipow_int32_t, int64_t: ipow_int64_t, \
           uint8_t: ipow_uint8_t, uint16_t: ipow_uint16_t, uint32_t: ipow_uint32_t, uint64_t: ipow_uint64_t)(p, q)

#define BIN_FLOATS(OP, E32, E64) SR_KERN_BIN(OP##_f32, float, float, E32) SR_KERN_BIN(OP##_f64, double, double, E64)
#define BIN_BOOL(OP, E) SR_KERN_BIN(OP##_bool, uint8_t, uint8_t, E)
#define CMP_ALL(OP, E)                                                                                 \
  SR_KERN_BIN(OP##_f32, float, uint8_t, E) SR_KERN_BIN(OP##_f64, double, uint8_t, E) SR_KERN_CMP_SINTS(OP, E) \
  SR_KERN_CMP_UINTS(OP, E) BIN_BOOL(OP, E)
BIN_FLOATS(k_add, p + q, p + q)
SR_KERN_BIN_SINTS(k_add, (U)p + (U)q)
SR_KERN_BIN_UINTS(k_add, p + q)
BIN_BOOL(k_or, p | q)
BIN_FLOATS(k_sub, p - q, p - q)
SR_KERN_BIN_SINTS(k_sub, (U)p - (U)q)
SR_KERN_BIN_UINTS(k_sub, p - q)
BIN_FLOATS(k_mul, p * q, p * q)
SR_KERN_BIN_SINTS(k_mul, (U)p * (U)q)
SR_KERN_BIN_UINTS(k_mul, p * q)
BIN_BOOL(k_and, p & q)
BIN_FLOATS(k_div, p / q, p / q)
SR_KERN_BIN_SINTS(k_div, q == 0 ? (T)-1 : (p == MINV && q == -1) ? p : p / q)
SR_KERN_BIN_UINTS(k_div, q == 0 ? (T)-1 : p / q)
BIN_FLOATS(k_rem, fmodf(p, q), fmod(p, q))
SR_KERN_BIN_SINTS(k_rem, q == 0 ? p : (p == MINV && q == -1) ? 0 : p % q)
SR_KERN_BIN_UINTS(k_rem, q == 0 ? p : p % q)
BIN_FLOATS(k_pow, powf(p, q), pow(p, q))
SR_KERN_BIN_SINTS(k_pow, IPOW(p, q))
SR_KERN_BIN_UINTS(k_pow, IPOW(p, q))
BIN_FLOATS(k_max, SR_KERN_FMAX(p, q), SR_KERN_FMAX(p, q))
SR_KERN_BIN_SINTS(k_max, p < q ? q : p)
SR_KERN_BIN_UINTS(k_max, p < q ? q : p)
BIN_FLOATS(k_min, SR_KERN_FMIN(p, q), SR_KERN_FMIN(p, q))
SR_KERN_BIN_SINTS(k_min, q < p ? q : p)
SR_KERN_BIN_UINTS(k_min, q < p ? q : p)
BIN_FLOATS(k_atan2, atan2f(p, q), atan2(p, q))
BIN_FLOATS(k_nextafter, nextafterf(p, q), nextafter(p, q))
/* on float16 and bfloat16 the next value is one step of the bits (both
   are sign and magnitude), not float32's */
static uint16_t nextafter_half(int bf, uint16_t x, uint16_t y) {
  float fx = bf ? sr_prng_bf16_to_float(x) : sr_prng_f16_to_float(x);
  float fy = bf ? sr_prng_bf16_to_float(y) : sr_prng_f16_to_float(y);
  if (fx != fx) return x;
  if (fy != fy) return y;
  if (fx == fy) return y;
  if (fx == 0) return (uint16_t)((y & 0x8000u) | 1u);
  return (uint16_t)((fx < fy) == (fx > 0) ? x + 1 : x - 1);
}
SR_KERN_BIN(k_nextafter_f16, uint16_t, uint16_t, nextafter_half(0, p, q))
SR_KERN_BIN(k_nextafter_bf16, uint16_t, uint16_t, nextafter_half(1, p, q))
BIN_FLOATS(k_igamma, (float)sr_igamma(p, q), sr_igamma(p, q))
BIN_FLOATS(k_igammac, (float)sr_igammac(p, q), sr_igammac(p, q))
BIN_FLOATS(k_igamma_grad_a, (float)sr_igamma_grad_a(p, q), sr_igamma_grad_a(p, q))
SR_KERN_BIN_SINTS(k_and, p & q)
SR_KERN_BIN_UINTS(k_and, p & q)
SR_KERN_BIN_SINTS(k_or, p | q)
SR_KERN_BIN_UINTS(k_or, p | q)
SR_KERN_BIN_SINTS(k_xor, p ^ q)
SR_KERN_BIN_UINTS(k_xor, p ^ q)
BIN_BOOL(k_xor, p ^ q)
SR_KERN_BIN_SINTS(k_shift_left, (q < 0 || q >= BITS) ? 0 : (U)p << q)
SR_KERN_BIN_UINTS(k_shift_left, q >= BITS ? 0 : p << q)
SR_KERN_BIN_SINTS(k_shift_right_logical, (q < 0 || q >= BITS) ? 0 : (U)p >> q)
SR_KERN_BIN_UINTS(k_shift_right_logical, q >= BITS ? 0 : p >> q)
SR_KERN_BIN_SINTS(k_shift_right_arithmetic, (q < 0 || q >= BITS) ? (p < 0 ? -1 : 0) : p >> q)
SR_KERN_BIN_UINTS(k_shift_right_arithmetic, q >= BITS ? 0 : p >> q)
/* the high half of the double-width product (chlo.mulhi) */
SR_KERN_BIN_SINTS(k_mulhi, (T)(((__int128)p * q) >> BITS))
SR_KERN_BIN_UINTS(k_mulhi, (T)(((unsigned __int128)p * q) >> BITS))
CMP_ALL(k_eq, p == q)
CMP_ALL(k_ne, p != q)
CMP_ALL(k_lt, p < q)
CMP_ALL(k_le, p <= q)
CMP_ALL(k_gt, p > q)
CMP_ALL(k_ge, p >= q)
/* eq_to, le_to, lt_to: XLA's total order (-NaN < -inf < ... < -0 < +0 < ...
   < inf < NaN), on the sign-magnitude bits mapped to an ordered integer */
static inline int64_t tot32(float f) {
  int32_t i;
  memcpy(&i, &f, sizeof i);
  return i < 0 ? (int64_t)(int32_t)(~(uint32_t)i | 0x80000000u) : i;
}
static inline int64_t tot64(double f) {
  int64_t i;
  memcpy(&i, &f, sizeof i);
  return i < 0 ? (int64_t)(~(uint64_t)i | 0x8000000000000000u) : i;
}
#define CMP_TO(OP, E)                                                                                     \
  SR_KERN_BIN(OP##_f32, float, uint8_t, E(tot32(p), tot32(q)))                                            \
  SR_KERN_BIN(OP##_f64, double, uint8_t, E(tot64(p), tot64(q))) SR_KERN_CMP_SINTS(OP, E(p, q))            \
  SR_KERN_CMP_UINTS(OP, E(p, q)) BIN_BOOL(OP, E(p, q))
#define TO_EQ(a, b) ((a) == (b))
#define TO_LE(a, b) ((a) <= (b))
#define TO_LT(a, b) ((a) < (b))
CMP_TO(k_eq_to, TO_EQ)
CMP_TO(k_le_to, TO_LE)
CMP_TO(k_lt_to, TO_LT)
#undef TO_EQ
#undef TO_LE
#undef TO_LT
#undef CMP_TO
#undef IPOW
#undef BIN_FLOATS
#undef BIN_BOOL
#undef CMP_ALL

/* x ** y: 1 for y == 0 (XLA's), cpow otherwise */
static cf64 c_pow(cf64 x, cf64 y) { return y == 0 ? 1.0 : cpow(x, y); }

/* complex64 and complex128 (cf32, cf64 above); complex(x, y) from two
   reals; == and != compare both parts */
#define BIN_COMPLEX(OP, E) SR_KERN_BIN(OP##_c64, cf32, cf32, E) SR_KERN_BIN(OP##_c128, cf64, cf64, E)
BIN_COMPLEX(k_add, p + q)
BIN_COMPLEX(k_sub, p - q)
BIN_COMPLEX(k_mul, p * q)
BIN_COMPLEX(k_div, p / q)
SR_KERN_BIN(k_pow_c64, cf32, cf32, (cf32)c_pow(p, q))
SR_KERN_BIN(k_pow_c128, cf64, cf64, c_pow(p, q))
SR_KERN_BIN(k_eq_c64, cf32, uint8_t, p == q)
SR_KERN_BIN(k_eq_c128, cf64, uint8_t, p == q)
SR_KERN_BIN(k_ne_c64, cf32, uint8_t, p != q)
SR_KERN_BIN(k_ne_c128, cf64, uint8_t, p != q)
/* max and min of complex numbers: lexicographic on (real, imag), as
   mlir._minmax_hlo lowers them */
#define C_PICK(p, q, GT)                                                                               \
  ((creal(p) == creal(q) ? (cimag(p) GT cimag(q)) : (creal(p) GT creal(q))) ? (p) : (q))
BIN_COMPLEX(k_max, C_PICK(p, q, >))
BIN_COMPLEX(k_min, C_PICK(p, q, <))
#undef C_PICK
SR_KERN_BIN(k_complex_f32, float, cf32, CMPLXF(p, q))
SR_KERN_BIN(k_complex_f64, double, cf64, CMPLX(p, q))
#undef BIN_COMPLEX
static const SrKernEw kern_complex = {.bin = {SR_KERN_FLOATS(k_complex)}};

#define KB(OP, ...) {.bin = {SR_KERN_FLOATS(OP), SR_KERN_INTS(OP), __VA_ARGS__}}
#define KB_INTS(OP, ...) {.bin = {SR_KERN_INTS(OP), __VA_ARGS__}}
#define KB_CMP(OP) {.bin = {SR_KERN_FLOATS(OP), SR_KERN_INTS(OP), [SR_BOOL] = OP##_bool}, .bool_out = 1}
static const SrKernEw kern_add = KB(k_add, [SR_BOOL] = k_or_bool, SR_KERN_COMPLEX(k_add));
static const SrKernEw kern_sub = KB(k_sub, SR_KERN_COMPLEX(k_sub));
static const SrKernEw kern_mul = KB(k_mul, [SR_BOOL] = k_and_bool, SR_KERN_COMPLEX(k_mul));
static const SrKernEw kern_div = KB(k_div, SR_KERN_COMPLEX(k_div));
static const SrKernEw kern_rem = KB(k_rem, );
static const SrKernEw kern_pow = KB(k_pow, SR_KERN_COMPLEX(k_pow));
static const SrKernEw kern_max = KB(k_max, [SR_BOOL] = k_or_bool, SR_KERN_COMPLEX(k_max));
static const SrKernEw kern_min = KB(k_min, [SR_BOOL] = k_and_bool, SR_KERN_COMPLEX(k_min));
static const SrKernEw kern_atan2 = {.bin = {SR_KERN_FLOATS(k_atan2)}};
static const SrKernEw kern_nextafter = {
    .bin = {SR_KERN_FLOATS(k_nextafter), [SR_F16] = k_nextafter_f16, [SR_BF16] = k_nextafter_bf16}};
static const SrKernEw kern_igamma = {.bin = {SR_KERN_FLOATS(k_igamma)}};
static const SrKernEw kern_igammac = {.bin = {SR_KERN_FLOATS(k_igammac)}};
static const SrKernEw kern_igamma_grad_a = {.bin = {SR_KERN_FLOATS(k_igamma_grad_a)}};
static const SrKernEw kern_and = KB_INTS(k_and, [SR_BOOL] = k_and_bool);
static const SrKernEw kern_or = KB_INTS(k_or, [SR_BOOL] = k_or_bool);
static const SrKernEw kern_xor = KB_INTS(k_xor, [SR_BOOL] = k_xor_bool);
static const SrKernEw kern_shift_left = KB_INTS(k_shift_left, );
static const SrKernEw kern_shift_right_logical = KB_INTS(k_shift_right_logical, );
static const SrKernEw kern_shift_right_arithmetic = KB_INTS(k_shift_right_arithmetic, );
static const SrKernEw kern_mulhi = KB_INTS(k_mulhi, );
static const SrKernEw kern_eq = {.bin = {SR_KERN_FLOATS(k_eq), SR_KERN_INTS(k_eq), [SR_BOOL] = k_eq_bool, SR_KERN_COMPLEX(k_eq)}, .bool_out = 1};
static const SrKernEw kern_ne = {.bin = {SR_KERN_FLOATS(k_ne), SR_KERN_INTS(k_ne), [SR_BOOL] = k_ne_bool, SR_KERN_COMPLEX(k_ne)}, .bool_out = 1};
static const SrKernEw kern_lt = KB_CMP(k_lt);
static const SrKernEw kern_le = KB_CMP(k_le);
static const SrKernEw kern_gt = KB_CMP(k_gt);
static const SrKernEw kern_ge = KB_CMP(k_ge);
static const SrKernEw kern_eq_to = KB_CMP(k_eq_to);
static const SrKernEw kern_le_to = KB_CMP(k_le_to);
static const SrKernEw kern_lt_to = KB_CMP(k_lt_to);
#undef KB
#undef KB_INTS
#undef KB_CMP

/* The n-ary elementwise rule: add, mul, comparisons, select_n, ... */
static int ev_nary(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  int id = e->prim->id;
  EwArg w;
  memset(&w, 0, sizeof w);
  w.prim = id;
  w.nin = (int)e->nin;
  if (e->nin > 16) return sr_ev_err(cx, "NotImplementedError", "%s with more than 16 operands", e->prim->name);
  /* the operation's dtype: the result's, or for comparisons (and the
     predicate of select_n) that of the operands */
  int first = id == SR_P_select_n ? 1 : 0;
  SrDtype dt = t->dtype;
  if (is_compare(id) || id == SR_P_complex) {
    dt = e->in[0]->type->dtype;
    for (uint32_t k = 0; k < e->nin; k++)
      if (e->in[k]->type->ndim && !e->in[k]->type->weak) dt = e->in[k]->type->dtype;
  }
  w.dt = dt;
  w.recip = div_recip(cx, e, dt);
  /* keys compare by their data (_compare_lower_hlo_opaque): a threefry
     key's two words, as one 64-bit word */
  if ((id == SR_P_eq || id == SR_P_ne) && strncmp(sr_dtype_name(dt), "key<", 4) == 0) {
    if (sr_elem_size(dt) == 8) w.dt = SR_U64;
    else w.key_bytes = sr_elem_size(dt);
  }
  int rc = 0;
  if (ew_one_device(cx, e, m, l, &w, &rc)) return rc;
  SrArray *ops[16] = {0};
  for (uint32_t k = 0; k < e->nin && rc == 0; k++) {
    int want = (int)k < first ? -1 : (int)dt;
    ops[k] = operand(cx, e, k, m, l, want);
    if (!ops[k]) rc = -1;
    else w.scalar[k] = ops[k]->type->ndim == 0 && t->ndim > 0;
  }
  if (rc == 0 && id == SR_P_select_n) {
    w.wdt = ops[0]->type->dtype;
    if (w.wdt != SR_BOOL && w.wdt != SR_I32) {
      SrArray *c = converted(cx, ops[0], SR_I32);
      sr_array_unref(ops[0]);
      ops[0] = c;
      w.wdt = SR_I32;
      if (!c) rc = -1;
    }
  }
  if (rc == 0) {
    e->out[0] = sr_array_new(t, sr_layout_with_dtype(l, t->dtype), m);
    rc = sr_ev_map(cx, (int)e->nin, ops, 1, e->out, reuse_flags(e, ops, first), ew_fn, &w);
  }
  for (uint32_t k = 0; k < e->nin; k++) sr_array_unref(ops[k]);
  return rc;
}

JVP1(jvp_add) {
  SrVal *out = y[0] = primal1(ad, e, x);
  const SrType *ot = sr_ad_type(ad, out);
  if (!ot) return -1;
  if (!t[0]) ty[0] = sr_ad_maybe_broadcast(ad, t[1], sr_ad_tangent_type(ot));
  else if (!t[1]) ty[0] = sr_ad_maybe_broadcast(ad, t[0], sr_ad_tangent_type(ot));
  else ty[0] = sr_ad_binop(ad, SR_P_add, t[0], t[1]);
  return done1(y, ty);
}

JVP1(jvp_sub) {
  SrVal *out = y[0] = primal1(ad, e, x);
  const SrType *ot = sr_ad_type(ad, out);
  if (!ot) return -1;
  if (!t[0]) ty[0] = sr_ad_maybe_broadcast(ad, sr_ad_neg(ad, t[1]), sr_ad_tangent_type(ot));
  else if (!t[1]) ty[0] = sr_ad_maybe_broadcast(ad, t[0], sr_ad_tangent_type(ot));
  else ty[0] = sr_ad_binop(ad, SR_P_sub, t[0], t[1]);
  return done1(y, ty);
}

JVP1(jvp_mul) {
  y[0] = primal1(ad, e, x);
  SrVal *a = t[0] ? mul_like(ad, e, t[0], x[1]) : NULL;
  SrVal *b = t[1] ? mul_like(ad, e, x[0], t[1]) : NULL;
  ty[0] = sr_ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_div) {
  y[0] = primal1(ad, e, x);
  SrVal *a = t[0] ? sr_ad_div(ad, t[0], x[1]) : NULL;
  SrVal *b = NULL;
  if (t[1]) {
    SrVal *p = sr_ad_bindv(ad, SR_P_integer_pow, 1, &x[1], "y", sr_int(NULL, -2), NULL);
    b = sr_ad_mul(ad, sr_ad_mul(ad, sr_ad_neg(ad, t[1]), x[0]), p);
  }
  ty[0] = sr_ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_minmax) {
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *a = t[0] ? sr_ad_mul(ad, t[0], balanced_eq(ad, x[0], ans, x[1])) : NULL;
  SrVal *b = t[1] ? sr_ad_mul(ad, t[1], balanced_eq(ad, x[1], ans, x[0])) : NULL;
  ty[0] = sr_ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_pow) {
  /* d/dx = y * x**(y-1) (guarded at y == 0 for an integer y), d/dy =
     log(x) * ans */
  SrVal *ans = y[0] = primal1(ad, e, x);
  SrVal *a = NULL, *b = NULL;
  const SrType *yt = sr_ad_type(ad, x[1]);
  if (t[0] && !sr_dtype_is_inexact(yt->dtype)) {
    /* _pow_jvp_lhs for an integer exponent: y as the result's dtype, then
       select(eq(y, 0), _zeros(y), mul(_replace_zero(y), pow(x, sub(y, _ones(y))))) */
    SrVal *yf = sr_ad_convert(ad, x[1], sr_ad_type(ad, x[0])->dtype, 0), *xb = x[0];
    const SrType *xt = sr_ad_type(ad, x[0]), *yt2 = sr_ad_type(ad, yf);
    int same = xt && yt2 && xt->ndim == yt2->ndim;
    for (int i = 0; same && i < xt->ndim; i++) same = xt->dims[i].size == yt2->dims[i].size;
    if (yf && !same) {
      /* x and y broadcast to the result's shape first (x.shape != y.shape) */
      const SrType *at = sr_ad_type(ad, ans);
      xb = sr_ad_maybe_broadcast(ad, x[0], at);
      yf = sr_ad_maybe_broadcast(ad, yf, at);
    }
    const SrType *ft = sr_ad_type(ad, yf);
    SrVal *is0 = sr_ad_binop(ad, SR_P_eq, yf, sr_ad_const(ad, yf, 0.0));
    SrVal *zeros = sr_ad_full(ad, ft, 0.0);
    SrVal *rz0 = sr_ad_binop(ad, SR_P_eq, yf, sr_ad_const(ad, yf, 0.0));
    SrVal *rc[2] = {yf, sr_ad_full(ad, ft, 1.0)};
    SrVal *nz = sr_ad_select_n(ad, rz0, 2, rc);
    SrVal *ym1 = sr_ad_binop(ad, SR_P_sub, yf, sr_ad_full(ad, ft, 1.0));
    SrVal *p = sr_ad_binop(ad, SR_P_pow, xb, ym1);
    SrVal *jc[2] = {sr_ad_mul(ad, nz, p), zeros};
    a = sr_ad_mul(ad, t[0], sr_ad_select_n(ad, is0, 2, jc));
  } else if (t[0]) {
    SrVal *ym1 = sr_ad_binop(ad, SR_P_sub, x[1], sr_ad_const(ad, x[1], 1.0));
    SrVal *p = sr_ad_binop(ad, SR_P_pow, x[0], ym1);
    a = sr_ad_mul(ad, t[0], sr_ad_mul(ad, x[1], p));
  }
  if (t[1]) {
    SrVal *z = sr_ad_binop(ad, SR_P_eq, x[0], sr_ad_const(ad, x[0], 0.0));
    SrVal *c[2] = {x[0], sr_ad_full(ad, sr_ad_type(ad, x[0]), 1.0)};
    SrVal *safe = sr_ad_select_n(ad, z, 2, c);
    b = sr_ad_mul(ad, t[1], sr_ad_mul(ad, sr_ad_unop(ad, SR_P_log, safe), ans));
  }
  ty[0] = sr_ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

JVP1(jvp_atan2) {
  y[0] = primal1(ad, e, x);
  SrVal *a = NULL, *b = NULL;
  if (t[0]) {
    SrVal *den = sr_ad_binop(ad, SR_P_add, sr_ad_unop(ad, SR_P_square, x[0]), sr_ad_unop(ad, SR_P_square, x[1]));
    a = sr_ad_mul(ad, t[0], sr_ad_div(ad, x[1], den));
  }
  if (t[1]) {
    SrVal *den = sr_ad_binop(ad, SR_P_add, sr_ad_unop(ad, SR_P_square, x[0]), sr_ad_unop(ad, SR_P_square, x[1]));
    b = sr_ad_mul(ad, t[1], sr_ad_div(ad, sr_ad_neg(ad, x[0]), den));
  }
  ty[0] = sr_ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

/* lax/special.py: ad.defjvp(igamma_p, igamma_grada, igamma_gradx), igammac's
   the same negated: g * igamma_grad_a(a, x) and
   g * exp(-x + (a - _ones(a)) * log(x) - lgamma(a)) */
JVP1(jvp_igamma) {
  y[0] = primal1(ad, e, x);
  int neg = e->prim->id == SR_P_igammac;
  SrVal *da = NULL, *dx = NULL;
  if (t[0]) {
    da = sr_ad_mul(ad, t[0], sr_ad_binop(ad, SR_P_igamma_grad_a, x[0], x[1]));
    if (neg) da = sr_ad_neg(ad, da);
  }
  if (t[1]) {
    const SrType *at = sr_ad_type(ad, x[0]);
    SrVal *nx = sr_ad_neg(ad, x[1]);
    SrVal *am1 = at ? sr_ad_binop(ad, SR_P_sub, x[0], sr_ad_full(ad, at, 1.0)) : NULL;
    SrVal *lx = sr_ad_unop(ad, SR_P_log, x[1]);
    SrVal *ex = sr_ad_binop(ad, SR_P_add, nx, sr_ad_mul(ad, am1, lx));
    ex = sr_ad_binop(ad, SR_P_sub, ex, sr_ad_unop(ad, SR_P_lgamma, x[0]));
    dx = sr_ad_mul(ad, t[1], sr_ad_unop(ad, SR_P_exp, ex));
    if (neg) dx = sr_ad_neg(ad, dx);
  }
  ty[0] = sr_ad_add_tangents(ad, da, dx);
  return done1(y, ty);
}

/* lax/special.py: ad.defjvp(regularized_incomplete_beta_p,
   betainc_grad_not_implemented (a, b), betainc_gradx):
   exp((b - 1) * log1p(-x) + (a - 1) * log(x) - lbeta) * g */
JVP1(jvp_betainc) {
  if (t[0] || t[1])
    return sr_raise(ad->I, "ValueError", "Betainc gradient with respect to a and b not supported."), -1;
  y[0] = primal1(ad, e, x);
  if (t[2]) {
    SrVal *a = x[0], *b = x[1], *xx = x[2];
    /* each operand in Python's order (C leaves the order of arguments open) */
    SrVal *la = sr_ad_unop(ad, SR_P_lgamma, a);
    SrVal *lb = sr_ad_unop(ad, SR_P_lgamma, b);
    SrVal *lab = sr_ad_binop(ad, SR_P_add, la, lb);
    SrVal *lapb = sr_ad_unop(ad, SR_P_lgamma, sr_ad_binop(ad, SR_P_add, a, b));
    SrVal *lbeta = sr_ad_binop(ad, SR_P_sub, lab, lapb);
    SrVal *bm1 = sr_ad_binop(ad, SR_P_sub, b, sr_ad_scalar_like(ad, b, 1.0));
    SrVal *t1 = sr_ad_mul(ad, bm1, sr_ad_unop(ad, SR_P_log1p, sr_ad_neg(ad, xx)));
    SrVal *am1 = sr_ad_binop(ad, SR_P_sub, a, sr_ad_scalar_like(ad, a, 1.0));
    SrVal *t2 = sr_ad_mul(ad, am1, sr_ad_unop(ad, SR_P_log, xx));
    SrVal *px = sr_ad_unop(ad, SR_P_exp, sr_ad_binop(ad, SR_P_sub, sr_ad_binop(ad, SR_P_add, t1, t2), lbeta));
    ty[0] = sr_ad_mul(ad, px, t[2]);
  }
  return y[0] && (!t[2] || ty[0]) ? 0 : -1;
}

JVP1(jvp_rem) {
  y[0] = primal1(ad, e, x);
  SrVal *a = NULL, *b = NULL;
  if (t[0]) a = sr_ad_maybe_broadcast(ad, t[0], sr_ad_tangent_type(sr_ad_type(ad, y[0])));
  if (t[1]) {
    SrVal *q = sr_ad_div(ad, x[0], x[1]);
    SrVal *f = sr_ad_mul(ad, sr_ad_unop(ad, SR_P_sign, q), sr_ad_unop(ad, SR_P_floor, sr_ad_unop(ad, SR_P_abs, q)));
    b = sr_ad_mul(ad, sr_ad_neg(ad, t[1]), f);
  }
  ty[0] = sr_ad_add_tangents(ad, a, b);
  return done1(y, ty);
}

TR(tr_add) {
  /* x_aval: the ct aval of an undefined primal, else typeof(x).to_ct_aval() */
  for (int i = 0; i < 2; i++) {
    if (x[i]) continue;
    cx[i] = sr_ad_unbroadcast(ad, ct_of(e, i), ct[0]);
    if (!cx[i]) return -1;
  }
  return 0;
}

TR(tr_sub) {
  if (!x[0] && !(cx[0] = sr_ad_unbroadcast(ad, ct_of(e, 0), ct[0]))) return -1;
  if (!x[1] && !(cx[1] = sr_ad_unbroadcast(ad, ct_of(e, 1), sr_ad_neg(ad, ct[0])))) return -1;
  return 0;
}

/* _mul_transpose_left / _right: the cotangent's product has out_dtype
   None, or (with an out_dtype) the dtype of the operand it is for */
static SrVal *mul_ct(SrAd *ad, const SrEqn *e, int k, SrVal *a, SrVal *b) {
  for (uint32_t i = 0; i < e->nparams; i++)
    if (strcmp(e->params[i].key, "out_dtype") == 0 && e->params[i].val->kind != SR_V_NONE) {
      SrVal *in[2] = {a, b};
      if (!a || !b) return NULL;
      SrParam p = {e->params[i].key, sr_dtype_val(NULL, e->in[k]->type->dtype)};
      SrVal *r = sr_ad_bind(ad, SR_P_mul, 2, in, 1, &p);
      sr_unref(p.val);
      return r;
    }
  return mul_like(ad, e, a, b);
}

TR(tr_mul) {
  if (!x[0] && !x[1]) return sr_raise(ad->I, "ValueError", "mul is bilinear: it transposes in one operand only"), -1;
  if (!x[0]) {
    cx[0] = sr_ad_unbroadcast(ad, ct_of(e, 0), mul_ct(ad, e, 0, ct[0], x[1]));
    return cx[0] ? 0 : -1;
  }
  cx[1] = sr_ad_unbroadcast(ad, ct_of(e, 1), mul_ct(ad, e, 1, x[0], ct[0]));
  return cx[1] ? 0 : -1;
}

TR(tr_div) {
  if (!x[1]) return sr_raise(ad->I, "RuntimeError", "nonlinear div can't be transposed"), -1;
  cx[0] = sr_ad_unbroadcast(ad, ct_of(e, 0), sr_ad_div(ad, ct[0], x[1]));
  return cx[0] ? 0 : -1;
}

/* ==== clamp ==== */

/* lax.clamp_p: min and max are scalars or have the operand's shape; the
   result has the operand's sharding; no ur rule. */
static int type_clamp(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 3, 1) < 0) return -1;
  const SrType *ts[3];
  sr_resolve_bare_literals(e, ts);
  const SrType *mn = ts[0], *x = ts[1], *mx = ts[2];
  static const char *const which[] = {"min", "max"};
  const SrType *bound[] = {mn, mx};
  for (int k = 0; k < 2; k++) {
    const SrType *t = bound[k];
    int same = t->ndim == x->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = sr_dim_same(&t->dims[d], &x->dims[d]);
    if (!t->ndim || same) continue;
    SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
    sr_shape_str(&a, t);
    sr_shape_str(&c, x);
    sr_terr(cx, "TypeError", "clamp requires %s.shape == operand.shape or %s.shape == (), got %s.shape=%s, operand.shape=%s.",
            which[k], which[k], which[k], sr_buf_str(&a), sr_buf_str(&c));
    sr_buf_free(&a);
    sr_buf_free(&c);
    return -1;
  }
  static const unsigned any3[3] = {SR_DC_ANY, SR_DC_ANY, SR_DC_ANY};
  if (nary_dtype(cx, e, ts, any3, 0, 1) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0 || sr_ur_none(cx, e, &s, 0) < 0) return -1;
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  b.dtype = mn->dtype;
  b.weak = (uint8_t)(mn->weak && x->weak && mx->weak);
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

JVP1(jvp_clamp) {
  /* clamp(min, operand, max) */
  y[0] = primal1(ad, e, x);
  SrVal *lo = x[0], *op = x[1], *hi = x[2], *acc = NULL;
  for (int i = 0; i < 3; i++) {
    if (!t[i]) continue;
    SrVal *cond;
    if (i == 0) cond = sr_ad_binop(ad, SR_P_and, sr_ad_binop(ad, SR_P_gt, lo, op), sr_ad_binop(ad, SR_P_lt, lo, hi));
    else if (i == 1) cond = sr_ad_binop(ad, SR_P_and, sr_ad_binop(ad, SR_P_gt, op, lo), sr_ad_binop(ad, SR_P_lt, op, hi));
    else cond = sr_ad_binop(ad, SR_P_lt, hi, op);
    SrVal *c[2] = {sr_ad_full(ad, sr_ad_type(ad, op), 0.0), t[i]};
    acc = sr_ad_add_tangents(ad, acc, sr_ad_select_n(ad, cond, 2, c));
    if (!acc) return -1;
  }
  ty[0] = acc;
  return done1(y, ty);
}

/* np.shape(a) == np.shape(b) */
static int same_shape(const SrType *a, const SrType *b) {
  if (a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d].size != b->dims[d].size) return 0;
  return 1;
}

/* lax._clamp_batch_rule: bounds batched like the operand bind as they
   are (1-d ones broadcast along it); scalar bounds of a mapped operand
   too; else everything with its batch dim in front, scalar bounds
   broadcast to the operand's shape and 1-d ones along its first dim. */
static int batch_clamp(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrAd *ad = &b->ad;
  if (e->nin != 3) return sr_batch_no_rule(b, e->prim);
  SrVal *v[3] = {x[0], x[1], x[2]};
  const SrType *t[3];
  for (int i = 0; i < 3; i++)
    if (!(t[i] = sr_ad_type(ad, v[i]))) return -1;
  int64_t size = b->size;
  if (bd[0] == bd[1] && bd[1] == bd[2]) {
    int same = same_shape(t[0], t[1]) && same_shape(t[1], t[2]);
    if (same || (t[0]->ndim == 0 && t[2]->ndim == 0)) return sr_batch_bind_same(b, e, v, bd[1], y, ybd);
    if (t[0]->ndim == 1 && t[2]->ndim == 1) {
      int64_t d0 = bd[0], d2 = bd[2];
      v[0] = sr_ad_broadcast_in_dim(ad, v[0], t[1], &d0, 1, 0);
      v[2] = sr_ad_broadcast_in_dim(ad, v[2], t[1], &d2, 1, 0);
      return sr_batch_bind_same(b, e, v, bd[1], y, ybd);
    }
  } else if (t[0]->ndim == 0 && t[2]->ndim == 0 && bd[1] != SR_NOT_MAPPED) {
    return sr_batch_bind_same(b, e, v, bd[1], y, ybd);
  }
  for (int i = 0; i < 3; i++)
    if (t[i]->ndim) v[i] = sr_batch_at_front(b, v[i], bd[i], size);
  for (int i = 0; i < 3; i++)
    if (!(t[i] = sr_ad_type(ad, v[i]))) return -1;
  int64_t zero = 0;
  for (int i = 0; i < 3; i += 2) {
    if (t[i]->ndim == 0 && t[1]->ndim > 0) v[i] = sr_ad_broadcast_in_dim(ad, v[i], t[1], NULL, 0, 0);
    else if (t[i]->ndim > 0 && t[i]->ndim < t[1]->ndim) v[i] = sr_ad_broadcast_in_dim(ad, v[i], t[1], &zero, 1, 0);
  }
  if (t[0]->ndim > t[1]->ndim) v[1] = sr_ad_broadcast_in_dim(ad, v[1], t[0], NULL, 0, 0);
  return sr_batch_bind_same(b, e, v, 0, y, ybd);
}

/* ==== select_n ==== */

/* lax.select_n_p: cases of one shape, dtype and sharding; `which` a bool
   or int scalar, or shaped and sharded like the cases. */
static int type_select_n(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (e->nin < 1 || sr_rule_arity(cx, e, -1, 1) < 0) return sr_terr(cx, "TypeError", "select_n takes `which` and cases");
  const SrType *ts[256];
  if (e->nin > 256) return sr_terr(cx, "TypeError", "select_n: too many cases");
  sr_resolve_bare_literals(e, ts);
  const SrType *which = ts[0], *const *cases = ts + 1;
  uint32_t nc = e->nin - 1;
  /* _select_shape_rule */
  if (!nc) return sr_terr(cx, "TypeError", "select must have at least one case");
  for (uint32_t i = 1; i < nc; i++) {
    int same = cases[i]->ndim == cases[0]->ndim;
    for (int d = 0; same && d < cases[0]->ndim; d++) same = sr_dim_same(&cases[i]->dims[d], &cases[0]->dims[d]);
    if (same) continue;
    SrBuf b = SR_BUF_INIT;
    for (uint32_t k = 0; k < nc; k++) {
      if (k) sr_buf_puts(&b, ", ");
      sr_shape_str(&b, cases[k]);
    }
    sr_terr(cx, "TypeError", "select cases must have the same shapes, got [%s].", sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (which->ndim) {
    int same = which->ndim == cases[0]->ndim;
    for (int d = 0; same && d < which->ndim; d++) same = sr_dim_same(&which->dims[d], &cases[0]->dims[d]);
    if (!same) {
      SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
      sr_shape_str(&a, which);
      sr_shape_str(&c, cases[0]);
      sr_terr(cx, "TypeError",
              "select `which` must be scalar or have the same shape as cases, got `which` shape %s but case shape %s.",
              sr_buf_str(&a), sr_buf_str(&c));
      sr_buf_free(&a);
      sr_buf_free(&c);
      return -1;
    }
  }
  /* _select_dtype_rule */
  if (sr_check_same_dtypes(cx, "select", cases, nc) < 0) return -1;
  if (!sr_dtype_in(which->dtype, SR_DC_BOOL | SR_DC_INT))
    return sr_terr(cx, "TypeError", "select `which` must be boolean or integer type, got %s.",
                   sr_dtype_name(which->dtype));
  if (which->dtype == SR_BOOL && nc > 2) return sr_terr(cx, "TypeError", "select with boolean `which` cannot have > 2 cases.");
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrTypeBuilder b;
  sr_type_builder(&b, cases[0]);
  b.unreduced = b.reduced = b.varying = 0;
  b.ukind = SR_UK_NONE;
  b.weak = 1;
  for (uint32_t i = 0; i < nc; i++) b.weak &= cases[i]->weak;
  if (!b.mesh) b.mesh = s.mesh;
  /* the first case on a mesh */
  const SrType *first = NULL;
  for (uint32_t i = 0; i < nc && !first; i++)
    if (!sr_in_mesh_empty(cx, e, i + 1)) first = cases[i];
  if (s.mode == SR_MODE_EXPLICIT) {
    /* _select_sharding_rule */
    for (uint32_t i = 0; first && i < nc; i++) {
      const SrType *c = cases[i];
      if (sr_in_mesh_empty(cx, e, i + 1)) continue;
      int same = c->unreduced == first->unreduced && c->reduced == first->reduced && c->ukind == first->ukind;
      for (int d = 0; same && d < c->ndim; d++) same = sr_spec_entry_eq(c, d, first, d);
      if (same) continue;
      SrBuf sb = SR_BUF_INIT;
      for (uint32_t k = 0; k < nc; k++) {
        if (k) sr_buf_puts(&sb, ", ");
        sr_type_sharding_str(&sb, cx, cases[k]);
      }
      sr_terr(cx, "ShardingTypeError", "select cases must have the same shardings, got [%s].", sr_buf_str(&sb));
      sr_buf_free(&sb);
      return -1;
    }
    if (first && which->ndim && !sr_in_mesh_empty(cx, e, 0)) {
      int same = 1;
      for (int d = 0; same && d < which->ndim; d++) same = sr_spec_entry_eq(which, d, first, d);
      if (!same) {
        SrBuf a = SR_BUF_INIT, c = SR_BUF_INIT;
        sr_type_sharding_str(&a, cx, which);
        sr_type_sharding_str(&c, cx, cases[0]);
        sr_terr(cx, "ShardingTypeError",
                "select `which` must be scalar or have the same sharding as cases, got `which` sharding %s but case "
                "sharding %s.",
                sr_buf_str(&a), sr_buf_str(&c));
        sr_buf_free(&a);
        sr_buf_free(&c);
        return -1;
      }
    }
    if (first) {
      sr_type_builder(&b, first);
      b.dtype = cases[0]->dtype;
      b.unreduced = b.reduced = b.varying = 0;
      b.weak = 1;
      for (uint32_t i = 0; i < nc; i++) b.weak &= cases[i]->weak;
    } else {
      sr_builder_replicate(&b);
    }
  } else {
    sr_builder_replicate(&b);
  }
  /* _select_ur_rule: the first case on a mesh gives the sets */
  if (s.mode != SR_MODE_AUTO && first) {
    if (sr_getu(cx, first, &b.unreduced) < 0) return -1;
    b.reduced = sr_getr(cx, first);
    b.ukind = b.unreduced ? SR_UK_SUM : SR_UK_NONE;
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  if (sr_mem_default(cx, e, &b.mem) < 0) return -1;
  return sr_finish_type(cx, e, &b, out);
}

JVP1(jvp_select_n) {
  y[0] = primal1(ad, e, x);
  if (!y[0]) return -1;
  SrVal *nz = NULL;
  for (uint32_t i = 1; i < e->nin && !nz; i++) nz = t[i];
  if (!nz) {
    ty[0] = NULL;
    return 0;
  }
  SrVal *z = sr_ad_full(ad, sr_ad_type(ad, nz), 0.0);
  SrVal *cs[64];
  uint32_t n = e->nin - 1 < 64 ? e->nin - 1 : 63;
  for (uint32_t i = 0; i < n; i++) cs[i] = t[i + 1] ? t[i + 1] : z;
  ty[0] = sr_ad_select_n(ad, x[0], (int)n, cs);
  return done1(y, ty);
}

TR(tr_select_n) {
  if (!x[0]) return sr_raise(ad->I, "ValueError", "select_n cannot be transposed in its predicate"), -1;
  SrVal *zeros = sr_ad_full(ad, sr_ad_type(ad, ct[0]), 0.0);
  const SrType *wt = sr_ad_type(ad, x[0]);
  if (!zeros || !wt) return -1;
  uint32_t n = e->nin - 1;
  if (wt->dtype == SR_BOOL) {
    for (uint32_t i = 0; i < n && i < 2; i++) {
      if (x[i + 1]) continue;
      /* select(which, zeros, ct) for case 0 is select_n(which, ct, zeros) */
      SrVal *c[2] = {i == 0 ? ct[0] : zeros, i == 0 ? zeros : ct[0]};
      if (!(cx[i + 1] = sr_ad_select_n(ad, x[0], 2, c))) return -1;
    }
    return 0;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (x[i + 1]) continue;
    SrVal *eq = sr_ad_binop(ad, SR_P_eq, x[0], sr_ad_const(ad, x[0], (double)i));
    SrVal *c[2] = {zeros, ct[0]};
    if (!(cx[i + 1] = sr_ad_select_n(ad, eq, 2, c))) return -1;
  }
  return 0;
}

/* batching.bdim_at_front(x, bd, size, explicit_mesh_axis): an unmapped x
   broadcast with the batch axis' sharding, that of dim sbd of src. */
static SrVal *at_front_as(SrBatch *b, SrVal *x, int bd, const SrType *src, int sbd) {
  if (bd != SR_NOT_MAPPED) return sr_batch_moveaxis(b, x, bd, 0);
  return sr_batch_broadcast_as(b, x, 0, src, sbd);
}

/* lax._select_batch_rule: `which` batched like the cases binds as it is
   (a mapped scalar `which` broadcast along the cases' batch dim); an
   unmapped scalar `which` with mapped cases moves them to the first
   case's batch dim; else everything goes to the front, a 1-d `which`
   broadcast along dim 0 and scalar cases to `which`'s shape. */
static int batch_select_n(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  SrAd *ad = &b->ad;
  uint32_t n = e->nin;
  if (n < 2) return sr_batch_no_rule(b, e->prim);
  SrVal *small[64], **v = n <= 64 ? small : sr_xcalloc(n, sizeof *v);
  int rc = -1;
  memcpy(v, x, n * sizeof *v);
  const SrType *wt = sr_ad_type(ad, v[0]), *ct = sr_ad_type(ad, v[1]);
  if (!wt || !ct) goto done;
  int agree = 1, all_mapped = 1, cases_agree = 1, cases_same = 1;
  for (uint32_t i = 1; i < n; i++) {
    const SrType *t = sr_ad_type(ad, v[i]);
    if (!t) goto done;
    agree &= bd[i] == bd[0];
    all_mapped &= bd[i] != SR_NOT_MAPPED;
    cases_agree &= bd[i] == bd[1];
    cases_same &= same_shape(t, ct);
  }
  if (agree) {
    if (!same_shape(wt, ct)) {
      int64_t d = bd[0];
      v[0] = sr_ad_broadcast_in_dim(ad, v[0], ct, &d, 1, 1);
    }
    rc = sr_batch_bind_same(b, e, v, bd[0], y, ybd);
    goto done;
  }
  if (wt->ndim == 0 && all_mapped && (cases_agree || cases_same)) {
    for (uint32_t i = 2; i < n; i++) v[i] = sr_batch_moveaxis(b, v[i], bd[i], bd[1]);
    rc = sr_batch_bind_same(b, e, v, bd[1], y, ybd);
    goto done;
  }
  /* bdim_at_front with the batch axis' sharding (explicit_mesh_axis),
     which a mapped operand's batch dim shows */
  uint32_t m = 0;
  while (bd[m] == SR_NOT_MAPPED) m++;
  const SrType *mt = sr_ad_type(ad, x[m]);
  if (wt->ndim) v[0] = at_front_as(b, v[0], bd[0], mt, bd[m]);
  int scalars = 1;
  for (uint32_t i = 1; i < n; i++) scalars &= sr_ad_type(ad, v[i])->ndim == 0;
  if (!scalars)
    for (uint32_t i = 1; i < n; i++) v[i] = at_front_as(b, v[i], bd[i], mt, bd[m]);
  wt = sr_ad_type(ad, v[0]);
  ct = sr_ad_type(ad, v[1]);
  if (!wt || !ct) goto done;
  if (wt->ndim > 0 && wt->ndim < ct->ndim) {
    int64_t zero = 0;
    v[0] = sr_ad_broadcast_in_dim(ad, v[0], ct, &zero, 1, 1);
  }
  if (wt->ndim > ct->ndim)
    for (uint32_t i = 1; i < n; i++) v[i] = sr_ad_broadcast_in_dim(ad, v[i], wt, NULL, 0, 1);
  rc = sr_batch_bind_same(b, e, v, 0, y, ybd);
done:
  if (v != small) free(v);
  return rc;
}

/* ==== convert_element_type ==== */

/* lax.convert_element_type_p: new dtype and weak type from the params;
   the operand's sharding or the given one.  The printer drops `sharding`,
   so a parsed equation takes it from its binder. */
static int type_convert(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 1, 1) < 0) return -1;
  const SrType *x = e->in[0];
  SrDtype nd = x->dtype;
  int has = 0, weak = 0;
  if (sr_rparam_dtype(cx, e, "new_dtype", &nd, &has) < 0) return -1;
  if (!has) return sr_terr(cx, "TypeError", "convert_element_type equation has no 'new_dtype' param");
  if (sr_rparam_bool(cx, e, "weak_type", 0, &weak) < 0) return -1;
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  SrShardSpec given;
  int present = 0;
  const SrType *w = sr_written(e, 0);
  if (sr_rparam(e, "sharding")) {
    if (sr_rparam_sharding(cx, e, "sharding", x->ndim, &given, &present) < 0) return -1;
  } else if (w) {
    sr_shard_of_type(w, &given);
    present = 1;
  }
  SrTypeBuilder b;
  same_sharding(&b, x, &s);
  b.dtype = nd;
  b.weak = (uint8_t)weak;
  if (s.mode == SR_MODE_EXPLICIT && present) {
    for (int d = 0; d < b.ndim; d++) {
      b.dims[d].nax = given.nax[d];
      memcpy(b.dims[d].ax, given.ax[d], SR_MAX_DIM_AXES);
    }
    if (given.mesh) b.mesh = given.mesh;
  }
  /* _convert_element_type_ur_rule */
  if (s.mode != SR_MODE_AUTO) {
    if (present && given.unreduced) {
      if (given.ukind != SR_UK_SUM) {
        SrBuf sb = SR_BUF_INIT;
        SrVal *spec = sr_shard_to_spec_val(&given);
        sr_val_repr(&sb, spec);
        sr_unref(spec);
        sr_terr(cx, "ValueError",
                "`sharding` passed to `convert_element_type` can only contain unreduced of kind `sum`. Got "
                "sharding=%s",
                sr_buf_str(&sb));
        sr_buf_free(&sb);
        return -1;
      }
      b.unreduced = given.unreduced;
    } else {
      if (sr_getu(cx, x, &b.unreduced) < 0) return -1;
    }
    b.reduced = present && given.reduced ? given.reduced : sr_getr(cx, x);
  }
  if (sr_vma_standard(cx, e, &b.varying) < 0) return -1;
  b.mem = x->mem;
  return sr_finish_type(cx, e, &b, out);
}

static int ev_convert(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x;
  if (l->unreduced & ~e->in[0]->layout->unreduced) {
    /* a cast to unreduced axes the operand is replicated on: the value
       stays on the first device of each group, zeros elsewhere (as a
       reshard to them) */
    x = sr_redistribute(cx, e->in[0], m, sr_layout_with_dtype(l, e->in[0]->type->dtype));
  } else {
    x = operand(cx, e, 0, m, l, -1);
  }
  if (!x) return -1;
  SrArray *c = converted(cx, x, t->dtype);
  sr_array_unref(x);
  if (!c) return -1;
  e->out[0] = sr_array_retype(c, t, sr_layout_with_dtype(c->layout, t->dtype));
  sr_array_unref(c);
  return 0;
}

JVP1(jvp_convert) {
  static const char *nd;
  if (!nd) nd = sr_intern_cstr("new_dtype");
  y[0] = primal1(ad, e, x);
  if (!y[0]) return -1;
  const SrType *yt = sr_ad_type(ad, y[0]);
  if (!sr_ad_differentiable(yt)) {
    ty[0] = NULL;
    return 0;
  }
  ty[0] = sr_ad_bind_eqn1(ad, e, t);
  return done1(y, ty);
}

TR(tr_convert) {
  (void)x;
  const SrType *in = e->in[0]->type;
  if (!sr_ad_differentiable(in)) return 0; /* a float0 zero */
  SrVal *c = ct[0];
  cx[0] = sr_ad_bindv(ad, SR_P_convert_element_type, 1, &c, "new_dtype", sr_dtype_val(NULL, in->dtype), "weak_type",
                   sr_bool(in->weak), "sharding", sr_ad_sharding_param(ad, sr_ad_ct_type(in)), NULL);
  return cx[0] ? 0 : -1;
}

/* lax._convert_element_type_batching_rule: the same dtype change, its
   sharding (when given) with the batch axis' entry at the batch dim. */
static int batch_convert(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  if (e->nin != 1) return sr_batch_no_rule(b, e->prim);
  SrVal *sh = sr_eqn_param(e, sr_intern_cstr("sharding"));
  if (!sh || sh->kind == SR_V_NONE) return sr_batch_bind_same(b, e, x, bd[0], y, ybd);
  y[0] = sr_batch_bind_with(b, e, (int)e->nin, x, "sharding",
                            sr_batch_sharding_for_vmap(sh, bd[0], sr_ad_type(&b->ad, x[0]), bd[0]), NULL);
  ybd[0] = bd[0];
  return y[0] ? 0 : -1;
}

/* ==== add_any ==== */

/* ad_util.add_jaxvals_p: both operands have the same type (typematch),
   which is the result. */
static int type_add_any(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out) {
  if (sr_rule_arity(cx, e, 2, 1) < 0) return -1;
  const SrType *ts[2];
  sr_resolve_bare_literals(e, ts);
  const SrType *x = ts[0], *y = ts[1];
  int same = x->dtype == y->dtype && x->ndim == y->ndim && x->mem == y->mem && x->varying == y->varying;
  for (int d = 0; same && d < x->ndim; d++) same = sr_dim_same(&x->dims[d], &y->dims[d]);
  /* core.cmp_shape_shd_mat_memsp compares shardings only when both have a
     mesh */
  int shd = !sr_in_mesh_empty(cx, e, 0) && !sr_in_mesh_empty(cx, e, 1);
  SrStd s;
  if (sr_std_begin(cx, e, &s) < 0) return -1;
  if (shd || s.mode == SR_MODE_MANUAL)
    same = same && x->unreduced == y->unreduced && x->reduced == y->reduced && x->ukind == y->ukind;
  for (int d = 0; same && shd && d < x->ndim; d++) same = sr_spec_entry_eq(x, d, y, d);
  if (!same) return ur_pair_error(cx, "AssertionError", "(%s, %s)", x, y, 1);
  out[0] = e->in[0];
  return 0;
}

TR(tr_add_any) {
  (void)e;
  if (!x[0]) cx[0] = ct[0];
  if (!x[1]) cx[1] = ct[0];
  return 0;
}

/* batching.add_batched: an unmapped operand broadcast to the other's
   batch dim, or x's batch dim moved to y's. */
static int batch_add_any(SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y, int *ybd) {
  if (e->nin != 2) return sr_batch_no_rule(b, e->prim);
  SrVal *v[2] = {x[0], x[1]};
  int to = bd[1] != SR_NOT_MAPPED ? bd[1] : bd[0];
  if (bd[0] != bd[1]) {
    if (bd[1] == SR_NOT_MAPPED) v[1] = sr_batch_broadcast_as(b, v[1], to, sr_ad_type(&b->ad, v[0]), bd[0]);
    else if (bd[0] == SR_NOT_MAPPED) v[0] = sr_batch_broadcast_as(b, v[0], to, sr_ad_type(&b->ad, v[1]), bd[1]);
    else v[0] = sr_batch_moveaxis(b, v[0], bd[0], to);
  }
  return sr_batch_bind_same(b, e, v, to, y, ybd);
}

/* ==== the fused multiply-add of a jitted computation (eval.c) ==== */

static int fma_fn(SrShardIO *io) {
  const EwArg *w = io->arg;
  size_t n = io->out[0]->nbytes / sr_elem_size(w->dt);
  const void *in[3] = {io->in[0]->data, io->in[1]->data, io->in[2]->data};
  int scalar = w->scalar[0] | w->scalar[1] << 1 | w->scalar[2] << 2;
  /* in pieces on the pool when it is one big kernel (exec/ew_pieces.h) */
  return sr_kern_fma_pieces(w->dt, w->form, n, in, scalar, io->out[0]->data) < 0 ? kern_fail(io, w) : 0;
}

/* A multiply with an out_dtype of its own does not fuse. */
static int fma_fuses(const SrEqn *m) {
  for (uint32_t i = 0; i < m->nparams; i++)
    if (strcmp(m->params[i].key, "out_dtype") == 0 && m->params[i].val->kind != SR_V_NONE) return 0;
  return 1;
}

static int ev_fma(SrEvalCtx *cx, const SrEvalEqn *e, int form) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  EwArg w;
  memset(&w, 0, sizeof w);
  w.prim = form == SR_FMA_ADD ? SR_P_add : SR_P_sub;
  w.nin = 3;
  w.dt = t->dtype;
  w.form = form;
  SrArray *ops[3] = {0};
  int rc = 0;
  for (uint32_t k = 0; k < 3 && rc == 0; k++) {
    ops[k] = operand(cx, e, k, m, l, (int)t->dtype);
    if (!ops[k]) rc = -1;
    else w.scalar[k] = ops[k]->type->ndim == 0 && t->ndim > 0;
  }
  if (rc == 0) {
    e->out[0] = sr_array_new(t, sr_layout_with_dtype(l, t->dtype), m);
    rc = sr_ev_map(cx, 3, ops, 1, e->out, reuse_flags(e, ops, 0), fma_fn, &w);
  }
  for (int k = 0; k < 3; k++) sr_array_unref(ops[k]);
  return rc;
}

/* ==== registration ==== */

static void type_rules_elementwise(void) {
  for (size_t k = 0; k < sizeof unops / sizeof unops[0]; k++) sr_set_type_rule(unops[k].id, type_unop);
  for (size_t k = 0; k < sizeof naryops / sizeof naryops[0]; k++) sr_set_type_rule(naryops[k].id, type_naryop);
  sr_set_type_rule(SR_P_integer_pow, type_integer_pow);
  sr_set_type_rule(SR_P_reduce_precision, type_reduce_precision);
  sr_set_type_rule(SR_P_convert_element_type, type_convert);
  sr_set_type_rule(SR_P_copy, type_identity);
  sr_set_type_rule(SR_P_copy_p, type_identity);
  sr_set_type_rule(SR_P_stop_gradient, type_identity);
  sr_set_type_rule(SR_P_select_n, type_select_n);
  sr_set_type_rule(SR_P_clamp, type_clamp);
  sr_set_type_rule(SR_P_add_any, type_add_any);
}

static void eval_rules_elementwise(void) {
  static const int unary[] = {
    SR_P_neg, SR_P_sign, SR_P_abs, SR_P_exp, SR_P_exp2, SR_P_log, SR_P_expm1, SR_P_log1p, SR_P_sin, SR_P_cos,
    SR_P_tan, SR_P_tanh, SR_P_logistic, SR_P_sqrt, SR_P_rsqrt, SR_P_cbrt, SR_P_square, SR_P_floor, SR_P_ceil,
    SR_P_round, SR_P_not, SR_P_integer_pow, SR_P_is_finite, SR_P_erf, SR_P_erfc, SR_P_erf_inv, SR_P_reduce_precision,
    SR_P_lgamma, SR_P_digamma, SR_P_asin, SR_P_acos, SR_P_atan, SR_P_sinh, SR_P_cosh, SR_P_asinh, SR_P_acosh,
    SR_P_atanh, SR_P_population_count, SR_P_clz, SR_P_bessel_i0e, SR_P_bessel_i1e, SR_P_real, SR_P_imag,
    SR_P_conj,
  };
  static const int nary[] = {
    SR_P_add, SR_P_sub, SR_P_mul, SR_P_div, SR_P_rem, SR_P_pow, SR_P_max, SR_P_min, SR_P_atan2, SR_P_nextafter,
    SR_P_eq, SR_P_ne, SR_P_lt, SR_P_le, SR_P_gt, SR_P_ge, SR_P_and, SR_P_or, SR_P_xor, SR_P_shift_left,
    SR_P_shift_right_logical, SR_P_shift_right_arithmetic, SR_P_mulhi, SR_P_select_n, SR_P_clamp, SR_P_add_any,
    SR_P_igamma, SR_P_igammac, SR_P_igamma_grad_a, SR_P_regularized_incomplete_beta,
    SR_P_eq_to, SR_P_le_to, SR_P_lt_to, SR_P_polygamma, SR_P_zeta, SR_P_complex,
  };
  for (size_t i = 0; i < sizeof unary / sizeof *unary; i++) sr_set_eval_rule(unary[i], ev_unary);
  for (size_t i = 0; i < sizeof nary / sizeof *nary; i++) sr_set_eval_rule(nary[i], ev_nary);
  sr_set_eval_rule(SR_P_copy, ev_identity);
  sr_set_eval_rule(SR_P_copy_p, ev_identity);
  sr_set_eval_rule(SR_P_stop_gradient, ev_identity);
  sr_set_eval_rule(SR_P_convert_element_type, ev_convert);
}

static void ad_rules_elementwise(void) {
  static const int zero[] = {
      SR_P_sign, SR_P_floor, SR_P_ceil, SR_P_round, SR_P_not, SR_P_is_finite, SR_P_stop_gradient,
      SR_P_eq, SR_P_ne, SR_P_lt, SR_P_le, SR_P_gt, SR_P_ge, SR_P_and, SR_P_or, SR_P_xor,
      SR_P_shift_left, SR_P_shift_right_logical, SR_P_shift_right_arithmetic, SR_P_mulhi,
      SR_P_eq_to, SR_P_le_to, SR_P_lt_to,
  };
  for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) sr_ad_set_jvp(zero[i], sr_ad_jvp_zero);
  sr_ad_set_jvp(SR_P_neg, jvp_neg);
  sr_ad_set_transpose(SR_P_neg, tr_neg);
  sr_ad_set_jvp(SR_P_exp, jvp_exp);
  sr_ad_set_jvp(SR_P_exp2, jvp_exp2);
  sr_ad_set_jvp(SR_P_log, jvp_log);
  sr_ad_set_jvp(SR_P_expm1, jvp_expm1);
  sr_ad_set_jvp(SR_P_log1p, jvp_log1p);
  sr_ad_set_jvp(SR_P_sin, jvp_sin);
  sr_ad_set_jvp(SR_P_cos, jvp_cos);
  sr_ad_set_jvp(SR_P_tan, jvp_tan);
  sr_ad_set_jvp(SR_P_tanh, jvp_tanh);
  sr_ad_set_jvp(SR_P_logistic, jvp_logistic);
  sr_ad_set_jvp(SR_P_sqrt, jvp_sqrt);
  sr_ad_set_jvp(SR_P_rsqrt, jvp_rsqrt);
  sr_ad_set_jvp(SR_P_cbrt, jvp_cbrt);
  sr_ad_set_jvp(SR_P_square, jvp_square);
  sr_ad_set_jvp(SR_P_integer_pow, jvp_integer_pow);
  sr_ad_set_jvp(SR_P_erf, jvp_erf);
  sr_ad_set_jvp(SR_P_erfc, jvp_erfc);
  sr_ad_set_jvp(SR_P_erf_inv, jvp_erf_inv);
  sr_ad_set_jvp(SR_P_lgamma, jvp_lgamma);
  sr_ad_set_jvp(SR_P_digamma, jvp_digamma);
  sr_ad_set_jvp(SR_P_polygamma, jvp_polygamma);
  sr_ad_set_jvp(SR_P_abs, jvp_abs);
  sr_ad_set_jvp(SR_P_convert_element_type, jvp_convert);
  sr_ad_set_transpose(SR_P_convert_element_type, tr_convert);
  sr_ad_set_jvp(SR_P_copy, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_copy, tr_self);
  sr_ad_set_jvp(SR_P_copy_p, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_copy_p, tr_self);
  sr_ad_set_jvp(SR_P_reduce_precision, sr_ad_jvp_linear);
  sr_ad_set_transpose(SR_P_reduce_precision, tr_self);
  sr_ad_set_jvp(SR_P_add, jvp_add);
  sr_ad_set_transpose(SR_P_add, tr_add);
  sr_ad_set_jvp(SR_P_sub, jvp_sub);
  sr_ad_set_transpose(SR_P_sub, tr_sub);
  sr_ad_set_jvp(SR_P_mul, jvp_mul);
  sr_ad_set_transpose(SR_P_mul, tr_mul);
  sr_ad_set_jvp(SR_P_div, jvp_div);
  sr_ad_set_transpose(SR_P_div, tr_div);
  sr_ad_set_jvp(SR_P_max, jvp_minmax);
  sr_ad_set_jvp(SR_P_min, jvp_minmax);
  sr_ad_set_jvp(SR_P_pow, jvp_pow);
  sr_ad_set_jvp(SR_P_atan2, jvp_atan2);
  sr_ad_set_jvp(SR_P_rem, jvp_rem);
  sr_ad_set_jvp(SR_P_select_n, jvp_select_n);
  sr_ad_set_transpose(SR_P_select_n, tr_select_n);
  sr_ad_set_jvp(SR_P_clamp, jvp_clamp);
  sr_ad_set_jvp(SR_P_asin, jvp_asin);
  sr_ad_set_jvp(SR_P_acos, jvp_asin);
  sr_ad_set_jvp(SR_P_atan, jvp_atan);
  sr_ad_set_jvp(SR_P_sinh, jvp_sinh);
  sr_ad_set_jvp(SR_P_cosh, jvp_sinh);
  sr_ad_set_jvp(SR_P_asinh, jvp_asinh);
  sr_ad_set_jvp(SR_P_acosh, jvp_asinh);
  sr_ad_set_jvp(SR_P_atanh, jvp_atanh);
  sr_ad_set_jvp(SR_P_bessel_i0e, jvp_bessel_i0e);
  sr_ad_set_jvp(SR_P_bessel_i1e, jvp_bessel_i1e);
  sr_ad_set_jvp(SR_P_igamma, jvp_igamma);
  sr_ad_set_jvp(SR_P_igammac, jvp_igamma);
  sr_ad_set_jvp(SR_P_regularized_incomplete_beta, jvp_betainc);
  sr_ad_set_jvp(SR_P_add_any, sr_ad_jvp_linear);
  static const struct {
    int id;
    int (*tr)(SrAd *, const SrEqn *, SrVal **, SrVal **, SrVal **);
  } linear[] = {{SR_P_real, tr_real}, {SR_P_imag, tr_imag}, {SR_P_complex, tr_complex}, {SR_P_conj, tr_conj}};
  for (size_t i = 0; i < sizeof linear / sizeof *linear; i++) {
    sr_ad_set_jvp(linear[i].id, sr_ad_jvp_linear);
    sr_ad_set_transpose(linear[i].id, linear[i].tr);
  }
  sr_ad_set_transpose(SR_P_add_any, tr_add_any);
}

#undef TR
#undef JVP1

/* vmap: the n-ary rows batch as JAX's broadcast_batcher does
   (defbroadcasting), the unary ones with vectorized_batcher
   (defvectorized, and stop_gradient's rule, the same), and select_n,
   clamp, convert_element_type and add_any with rules of their own. */
static void batch_rules_elementwise(void) {
  for (int i = 0; i < SR_NPRIMS; i++)
    if (sr_prims[i].flags & SR_PF_EW) sr_prims[i].batch = sr_batch_broadcast;
  for (size_t k = 0; k < sizeof unops / sizeof unops[0]; k++) sr_prims[unops[k].id].batch = sr_batch_unary;
  static const int unary[] = {SR_P_integer_pow, SR_P_reduce_precision, SR_P_copy, SR_P_copy_p,
                              SR_P_stop_gradient, SR_P_bitcast_convert_type};
  for (size_t i = 0; i < sizeof unary / sizeof *unary; i++) sr_prims[unary[i]].batch = sr_batch_unary;
  sr_prims[SR_P_select_n].batch = batch_select_n;
  sr_prims[SR_P_clamp].batch = batch_clamp;
  sr_prims[SR_P_convert_element_type].batch = batch_convert;
  sr_prims[SR_P_add_any].batch = batch_add_any;
}

/* Each elementwise row's kernels (exec/kern.h), defined beside its eval
   rule. */
static void kernels_elementwise(void) {
  static const struct {
    int id;
    const SrKernEw *k;
  } rows[] = {
      {SR_P_neg, &kern_neg}, {SR_P_sign, &kern_sign}, {SR_P_abs, &kern_abs}, {SR_P_exp, &kern_exp},
      {SR_P_exp2, &kern_exp2}, {SR_P_log, &kern_log}, {SR_P_expm1, &kern_expm1}, {SR_P_log1p, &kern_log1p},
      {SR_P_sin, &kern_sin}, {SR_P_cos, &kern_cos}, {SR_P_tan, &kern_tan}, {SR_P_tanh, &kern_tanh},
      {SR_P_logistic, &kern_logistic}, {SR_P_sqrt, &kern_sqrt}, {SR_P_rsqrt, &kern_rsqrt},
      {SR_P_cbrt, &kern_cbrt}, {SR_P_square, &kern_square}, {SR_P_floor, &kern_floor}, {SR_P_ceil, &kern_ceil},
      {SR_P_round, &kern_round}, {SR_P_not, &kern_not}, {SR_P_is_finite, &kern_is_finite},
      {SR_P_erf, &kern_erf}, {SR_P_erfc, &kern_erfc}, {SR_P_erf_inv, &kern_erf_inv},
      {SR_P_lgamma, &kern_lgamma}, {SR_P_digamma, &kern_digamma},
      {SR_P_integer_pow, &kern_integer_pow}, {SR_P_reduce_precision, &kern_reduce_precision},
      {SR_P_add, &kern_add}, {SR_P_add_any, &kern_add}, {SR_P_sub, &kern_sub}, {SR_P_mul, &kern_mul},
      {SR_P_div, &kern_div}, {SR_P_rem, &kern_rem}, {SR_P_pow, &kern_pow}, {SR_P_max, &kern_max},
      {SR_P_min, &kern_min}, {SR_P_atan2, &kern_atan2}, {SR_P_nextafter, &kern_nextafter},
      {SR_P_and, &kern_and}, {SR_P_or, &kern_or}, {SR_P_xor, &kern_xor}, {SR_P_shift_left, &kern_shift_left},
      {SR_P_shift_right_logical, &kern_shift_right_logical},
      {SR_P_shift_right_arithmetic, &kern_shift_right_arithmetic}, {SR_P_mulhi, &kern_mulhi}, {SR_P_eq, &kern_eq}, {SR_P_ne, &kern_ne},
      {SR_P_lt, &kern_lt}, {SR_P_le, &kern_le}, {SR_P_gt, &kern_gt}, {SR_P_ge, &kern_ge},
      {SR_P_asin, &kern_asin}, {SR_P_acos, &kern_acos}, {SR_P_atan, &kern_atan}, {SR_P_sinh, &kern_sinh},
      {SR_P_cosh, &kern_cosh}, {SR_P_asinh, &kern_asinh}, {SR_P_acosh, &kern_acosh}, {SR_P_atanh, &kern_atanh},
      {SR_P_population_count, &kern_population_count}, {SR_P_clz, &kern_clz},
      {SR_P_bessel_i0e, &kern_bessel_i0e}, {SR_P_bessel_i1e, &kern_bessel_i1e},
      {SR_P_igamma, &kern_igamma}, {SR_P_igammac, &kern_igammac}, {SR_P_igamma_grad_a, &kern_igamma_grad_a},
      {SR_P_eq_to, &kern_eq_to}, {SR_P_le_to, &kern_le_to}, {SR_P_lt_to, &kern_lt_to},
      {SR_P_polygamma, &kern_polygamma}, {SR_P_zeta, &kern_zeta}, {SR_P_real, &kern_real},
      {SR_P_imag, &kern_imag}, {SR_P_conj, &kern_conj}, {SR_P_complex, &kern_complex},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) sr_prims[rows[i].id].kern = rows[i].k;
}

void sr_lax_elementwise_init(void) {
  kernels_elementwise();
  type_rules_elementwise();
  eval_rules_elementwise();
  ad_rules_elementwise();
  batch_rules_elementwise();
  sr_ev_fma = (SrEvFma){SR_P_mul, SR_P_add, SR_P_sub, ev_fma, fma_fuses};
}
