/* eval_elementwise.c: eval rules of the elementwise primitives.
 *
 * The result's layout comes from its type (eval.c adds Auto axes); every
 * operand of the result's shape is brought to that layout, keeping its own
 * unreduced and reduced sets (add of two unreduced values, mul of an
 * unreduced by a reduced one: the type rules have checked them), and each
 * device computes its shard.  Rank-0 operands are broadcast scalars. */
#include <math.h>
#include <string.h>

#include "exec/eval.h"
#include "exec/kern.h"

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
} EwArg;

static int kern_fail(SrShardIO *io, const EwArg *w) {
  return sr_ev_err(io->cx, "NotImplementedError", "%s is not implemented for dtype %s", sr_prims[w->prim].name,
                   sr_dtype_name(w->dt));
}

static int ew_fn(SrShardIO *io) {
  EwArg *w = io->arg;
  size_t n;
  int rc;
  switch (w->prim) {
  case SR_P_select_n: {
    const void *cases[16];
    n = io->out[0]->nbytes / sr_elem_size(w->dt);
    for (int k = 1; k < w->nin; k++) cases[k - 1] = io->in[k]->data;
    rc = sr_kern_select(w->wdt, w->dt, n, io->in[0]->data, w->scalar[0], w->nin - 1, cases, w->scalar + 1,
                        io->out[0]->data);
    break;
  }
  case SR_P_clamp:
    n = io->out[0]->nbytes / sr_elem_size(w->dt);
    rc = sr_kern_clamp(w->dt, n, io->in[0]->data, w->scalar[0], io->in[1]->data, w->scalar[1], io->in[2]->data,
                       w->scalar[2], io->out[0]->data);
    break;
  default:
    if (w->nin == 1) {
      n = io->in[0]->nbytes / sr_elem_size(w->dt);
      rc = sr_kern_unary(w->prim, w->dt, n, io->in[0]->data, io->out[0]->data, w->ip);
    } else {
      n = (w->scalar[0] ? io->in[1]->nbytes : io->in[0]->nbytes) / sr_elem_size(w->dt);
      if (w->scalar[0] && w->scalar[1]) n = 1;
      rc = sr_kern_binary(w->prim, w->dt, n, io->in[0]->data, w->scalar[0], io->in[1]->data, w->scalar[1],
                          io->out[0]->data);
    }
  }
  return rc < 0 ? kern_fail(io, w) : 0;
}

/* SR_MAP_REUSE for the first donated operand that arrived untouched, of
   the result's dtype and shape (the kernels allow out == in). */
static int reuse_flags(const SrEvalEqn *e, SrArray *const *ops, int first) {
  const SrType *t = e->out_type[0];
  for (uint32_t k = (uint32_t)first; k < e->nin && k < 16; k++) {
    if (!(e->donate >> k & 1) || ops[k] != e->in[k] || ops[k]->type->dtype != t->dtype) continue;
    if (ops[k]->type->ndim != t->ndim) continue;
    int same = 1;
    for (int i = 0; i < t->ndim; i++) same &= ops[k]->type->dims[i].size == t->dims[i].size;
    if (same) return SR_MAP_REUSE(k);
  }
  return 0;
}

static int is_compare(int id) {
  return id == SR_P_eq || id == SR_P_ne || id == SR_P_lt || id == SR_P_le || id == SR_P_gt || id == SR_P_ge;
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
  int flags = reuse_flags(e, e->in, 0);
  if (flags) {
    SrBuffer *b = ibuf[__builtin_ctz((unsigned)flags >> 3)];
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
  if (is_compare(id)) {
    dt = e->in[0]->type->dtype;
    for (uint32_t k = 0; k < e->nin; k++)
      if (e->in[k]->type->ndim && !e->in[k]->type->weak) dt = e->in[k]->type->dtype;
  }
  w.dt = dt;
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

/* ---- the fused multiply-add of a jitted computation (eval.c) ---- */

static int fma_fn(SrShardIO *io) {
  const EwArg *w = io->arg;
  size_t es = sr_elem_size(w->dt), n = io->out[0]->nbytes / es;
  const int *sc = w->scalar;
  if (w->dt == SR_F32) {
    const float *a = io->in[0]->data, *b = io->in[1]->data, *c = io->in[2]->data;
    float *o = io->out[0]->data;
    for (size_t i = 0; i < n; i++) o[i] = fmaf(a[sc[0] ? 0 : i], b[sc[1] ? 0 : i], c[sc[2] ? 0 : i]);
  } else {
    const double *a = io->in[0]->data, *b = io->in[1]->data, *c = io->in[2]->data;
    double *o = io->out[0]->data;
    for (size_t i = 0; i < n; i++) o[i] = fma(a[sc[0] ? 0 : i], b[sc[1] ? 0 : i], c[sc[2] ? 0 : i]);
  }
  return 0;
}

int sr_ev_fma(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  EwArg w;
  memset(&w, 0, sizeof w);
  w.prim = SR_P_add;
  w.nin = 3;
  w.dt = t->dtype;
  SrArray *ops[3] = {0};
  int rc = 0;
  for (uint32_t k = 0; k < 3 && rc == 0; k++) {
    ops[k] = operand(cx, e, k, m, l, (int)t->dtype);
    if (!ops[k]) rc = -1;
    else w.scalar[k] = ops[k]->type->ndim == 0 && t->ndim > 0;
  }
  if (rc == 0) {
    e->out[0] = sr_array_new(t, sr_layout_with_dtype(l, t->dtype), m);
    rc = sr_ev_map(cx, 3, ops, 1, e->out, 0, fma_fn, &w);
  }
  for (int k = 0; k < 3; k++) sr_array_unref(ops[k]);
  return rc;
}

static int64_t round_method(const SrVal *v) {
  if (!v) return 0;
  if (v->kind == SR_V_INT) return v->i;
  if ((v->kind == SR_V_WORD || v->kind == SR_V_STR) && memmem(v->str.s, v->str.n, "EVEN", 4)) return 1;
  return 0;
}

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

/* copy, stop_gradient, and the identity casts: the same buffers. */
static int ev_identity(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  e->out[0] = sr_redistribute_typed(cx, e->in[0], m, operand_layout(e->in[0], l), t);
  return e->out[0] ? 0 : -1;
}

static int ev_convert(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrType *t = e->out_type[0];
  const SrMesh *m = sr_ev_mesh_for(cx, e, t);
  const SrType *l = sr_ev_out_layout(cx, e, 0, m);
  SrArray *x = operand(cx, e, 0, m, l, -1);
  if (!x) return -1;
  SrArray *c = converted(cx, x, t->dtype);
  sr_array_unref(x);
  if (!c) return -1;
  e->out[0] = sr_array_retype(c, t, sr_layout_with_dtype(c->layout, t->dtype));
  sr_array_unref(c);
  return 0;
}

void sr_eval_rules_elementwise(void) {
  static const int unary[] = {
    SR_P_neg, SR_P_sign, SR_P_abs, SR_P_exp, SR_P_exp2, SR_P_log, SR_P_expm1, SR_P_log1p, SR_P_sin, SR_P_cos,
    SR_P_tan, SR_P_tanh, SR_P_logistic, SR_P_sqrt, SR_P_rsqrt, SR_P_cbrt, SR_P_square, SR_P_floor, SR_P_ceil,
    SR_P_round, SR_P_not, SR_P_integer_pow, SR_P_is_finite, SR_P_erf, SR_P_erf_inv, SR_P_reduce_precision,
  };
  static const int nary[] = {
    SR_P_add, SR_P_sub, SR_P_mul, SR_P_div, SR_P_rem, SR_P_pow, SR_P_max, SR_P_min, SR_P_atan2, SR_P_nextafter,
    SR_P_eq, SR_P_ne, SR_P_lt, SR_P_le, SR_P_gt, SR_P_ge, SR_P_and, SR_P_or, SR_P_xor, SR_P_shift_left,
    SR_P_shift_right_logical, SR_P_shift_right_arithmetic, SR_P_select_n, SR_P_clamp, SR_P_add_any,
  };
  for (size_t i = 0; i < sizeof unary / sizeof *unary; i++) sr_set_eval_rule(unary[i], ev_unary);
  for (size_t i = 0; i < sizeof nary / sizeof *nary; i++) sr_set_eval_rule(nary[i], ev_nary);
  sr_set_eval_rule(SR_P_copy, ev_identity);
  sr_set_eval_rule(SR_P_copy_p, ev_identity);
  sr_set_eval_rule(SR_P_stop_gradient, ev_identity);
  sr_set_eval_rule(SR_P_convert_element_type, ev_convert);
}
