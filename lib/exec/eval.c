/* eval.c: running equations and jaxprs on concrete arrays.
 *
 * The jaxpr loop keeps one array per var, made by the equation that binds
 * it and dropped right after its last use, so a long chain of elementwise
 * equations holds at most its input, the value being computed and the
 * previous one.  Literals become meshless scalar arrays once per run.
 *
 * Auto mode.  Types never name Auto mesh axes; the layout of a result
 * (the concrete sharding x.sharding shows) is its type's sharding plus the
 * Auto axes the evaluator picks, by one rule: an elementwise result keeps
 * the Auto axes its same-shaped inputs agree on (no communication), and
 * every other result is replicated over Auto axes -- so jnp.dot of two
 * Auto-sharded operands gives P(), as XLA chose in the seed.  A
 * sharding_constraint, reshard or device_put sets Auto axes explicitly.
 */
#include "exec/eval.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "exec/fold.h"
#include "exec/eval_par.h"
#include "exec/ew_pieces.h"
#include "exec/kern.h"
#include "exec/kern_simd.h"
#include "exec/layout.h"
#include "core/jaxstate.h"
#include "core/trace.h"
#include "check/rule.h"
#include "text/print_val.h"
#include "util/env.h"
#include "util/intern.h"
#include "util/mem.h"

/* ---- context and errors ---- */

void sr_eval_ctx_init(SrEvalCtx *cx, SrInterp *I, SrExec *ex, SrDiags *d) {
  memset(cx, 0, sizeof *cx);
  cx->I = I;
  cx->ex = ex;
  cx->comm = ex ? ex->comm : NULL;
  cx->d = d;
}

int sr_ev_err(SrEvalCtx *cx, const char *exc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sr_verror(cx->d, SR_E_RUNTIME, NULL, 0, fmt, ap);
  va_end(ap);
  if (cx->d && exc) cx->d->last->exc = sr_xstrdup(exc);
  return -1;
}

int sr_ev_oom(SrEvalCtx *cx, size_t nbytes) {
  /* jaxlib's exception, with XLA's status text */
  return sr_ev_err(cx, "JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate %zu bytes.",
                   nbytes);
}

SrBuffer *sr_ev_buffer(SrEvalCtx *cx, size_t nbytes) {
  SrBuffer *b = sr_buffer_try(nbytes);
  if (!b) sr_ev_oom(cx, nbytes);
  return b;
}

/* The path's segments are scopes and the equations' name stacks (their
   transforms included); the op name renders them as JAX's NameStack
   does, the last segment the operation's own name. */
void sr_ev_path_str(const SrEvalCtx *cx, SrBuf *out) {
  int n = cx->depth < SR_EV_MAXPATH ? cx->depth : SR_EV_MAXPATH;
  SrBuf raw = SR_BUF_INIT;
  for (int i = 0; i < n; i++) {
    if (i) sr_buf_putc(&raw, '/');
    sr_buf_puts(&raw, cx->path[i]);
  }
  sr_buf_puts(out, "");
  sr_ns_render_op(out, sr_buf_str(&raw));
  sr_buf_free(&raw);
}

/* ---- params ---- */

SrVal *sr_ev_param(const SrEvalEqn *e, const char *key) {
  for (uint32_t i = 0; i < e->nparams; i++)
    if (strcmp(e->params[i].key, key) == 0) return e->params[i].val;
  return NULL;
}

int sr_ev_param_int(SrEvalCtx *cx, const SrEvalEqn *e, const char *key, int64_t *out) {
  SrVal *v = sr_ev_param(e, key);
  if (!v || (v->kind != SR_V_INT && v->kind != SR_V_BOOL))
    return sr_ev_err(cx, "TypeError", "%s equation has no integer param '%s'", e->prim->name, key);
  *out = v->i;
  return 0;
}

int sr_ev_param_ints(SrEvalCtx *cx, const SrEvalEqn *e, const char *key, int64_t *out, int max, int *n) {
  SrVal *v = sr_ev_param(e, key);
  if (!v || sr_val_ints(v, out, max, n) < 0)
    return sr_ev_err(cx, "TypeError", "%s equation has no param '%s' of integers", e->prim->name, key);
  return 0;
}

static int axis_name(SrEvalCtx *cx, const SrVal *v, const SrMesh *m, int *axes, int *n) {
  const char *s = NULL;
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) s = sr_intern(v->str.s, v->str.n);
  int a = s && m ? sr_mesh_axis(m, s) : -1;
  if (a < 0) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, v);
    sr_ev_err(cx, "NameError", "unbound axis name: %s", sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  axes[(*n)++] = a;
  return 0;
}

int sr_ev_param_axes(SrEvalCtx *cx, const SrEvalEqn *e, const char *key, const SrMesh *m, int *axes, int *naxes) {
  SrVal *v = sr_ev_param(e, key);
  *naxes = 0;
  if (!v) return sr_ev_err(cx, "TypeError", "%s equation has no param '%s'", e->prim->name, key);
  if (sr_is_seq(v)) {
    for (int i = 0; i < v->seq.n && *naxes < SR_MAX_AXES; i++)
      if (axis_name(cx, v->seq.items[i], m, axes, naxes) < 0) return -1;
    return 0;
  }
  return axis_name(cx, v, m, axes, naxes);
}

const SrJaxpr *sr_ev_param_jaxpr(const SrEvalEqn *e, const char *key) {
  SrVal *v = sr_ev_param(e, key);
  return v && v->kind == SR_V_JAXPR ? v->jx.jaxpr : NULL;
}

/* ---- meshes and layouts of results ---- */

/* A mesh of a shape over the devices of base (same count). */
static const SrMesh *mesh_over(SrEvalCtx *cx, const SrMesh *shape, const SrMesh *base) {
  SrMesh m = *shape;
  m.abstract = 0;
  m.device_fields = 0;
  m.devices = base->devices;
  const SrMesh *am = cx->I && cx->I->jax ? sr_jax_context_mesh(cx->I->jax) : NULL;
  if (am && sr_mesh_shape(am) == shape)
    memcpy(m.types, am->types, sizeof m.types);
  else
    memset(m.types, SR_AXIS_EXPLICIT, sizeof m.types);
  return sr_mesh_intern(&m);
}

const SrMesh *sr_ev_mesh_for(SrEvalCtx *cx, const SrEvalEqn *e, const SrType *t) {
  const SrMesh *shape = t->mesh && t->mesh->n ? t->mesh : NULL;
  if (!shape) {
    for (uint32_t i = 0; e && i < e->nin; i++)
      if (e->in[i]->mesh) return e->in[i]->mesh;
    return cx->mesh;
  }
  return sr_ev_mesh_of_shape(cx, e, shape);
}

const SrMesh *sr_ev_mesh_of_shape(SrEvalCtx *cx, const SrEvalEqn *e, const SrMesh *shape) {
  if (cx->mesh && sr_mesh_shape(cx->mesh) == shape) return cx->mesh;
  const SrMesh *base = cx->mesh;
  for (uint32_t i = 0; e && i < e->nin; i++) {
    const SrMesh *m = e->in[i]->mesh;
    if (!m) continue;
    if (sr_mesh_shape(m) == shape) return m;
    if (!base) base = m;
  }
  if (base && sr_mesh_ndev(base) == sr_mesh_ndev(shape)) return mesh_over(cx, shape, base);
  if (!base && cx->comm && sr_mesh_ndev(shape) <= cx->comm->ndev) {
    SrMesh m = *shape;
    m.abstract = 0;
    m.device_fields = 0;
    m.devices = NULL;
    memset(m.types, SR_AXIS_EXPLICIT, sizeof m.types);
    return sr_mesh_intern(&m);
  }
  return NULL;
}

const SrType *sr_layout_with_dtype(const SrType *l, SrDtype dt) {
  return sr_layout_of_type(sr_type_with_dtype(l, dt));
}

const SrType *sr_layout_replicated(SrDtype dt, int ndim, const int64_t *shape, const SrMesh *shape_mesh) {
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = dt;
  b.ndim = (uint8_t)ndim;
  for (int i = 0; i < ndim; i++) b.dims[i].size = shape[i];
  b.mesh = shape_mesh && shape_mesh->n ? shape_mesh : NULL;
  return sr_type_get(&b);
}

static SrAxes auto_axes(const SrMesh *m) {
  SrAxes a = 0;
  for (int i = 0; m && i < m->n; i++)
    if (m->types[i] == SR_AXIS_AUTO) a |= 1u << i;
  return a;
}

const SrType *sr_ev_out_layout(SrEvalCtx *cx, const SrEvalEqn *e, uint32_t i, const SrMesh *m) {
  (void)cx;
  const SrType *t = e->out_type[i];
  const SrType *l = sr_layout_of_type(t);
  SrAxes au = auto_axes(m);
  if (!au || !(e->prim->flags & SR_PF_EW) || !t->ndim) return l;
  /* elementwise: keep the Auto axes the inputs of the same shape agree on */
  const SrType *src = NULL;
  for (uint32_t k = 0; k < e->nin; k++) {
    const SrArray *a = e->in[k];
    if (a->mesh != m || a->layout->ndim != t->ndim) continue;
    if (!src) {
      src = a->layout;
      continue;
    }
    for (int d = 0; d < t->ndim; d++)
      if (a->layout->dims[d].nax != src->dims[d].nax || memcmp(a->layout->dims[d].ax, src->dims[d].ax, src->dims[d].nax))
        return l;
  }
  return src ? sr_layout_adopt_auto(l, src, m) : l;
}

const SrType *sr_layout_adopt_auto(const SrType *l, const SrType *src, const SrMesh *m) {
  SrAxes au = auto_axes(m);
  if (!au || !src || src->ndim != l->ndim || sr_type_sharded_axes(src) == 0) return l;
  SrAxes used = sr_type_sharded_axes(l);
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  int changed = 0;
  for (int d = 0; d < l->ndim; d++) {
    const SrDim *sd = &src->dims[d];
    if (b.dims[d].nax || !sd->nax || sd->size != b.dims[d].size) continue;
    SrAxes want = sr_dim_axes(sd);
    if ((want & ~au) || (want & used)) continue;
    b.dims[d].nax = sd->nax;
    memcpy(b.dims[d].ax, sd->ax, SR_MAX_DIM_AXES);
    used |= want;
    changed = 1;
  }
  if (!changed) return l;
  b.mesh = sr_mesh_shape(m);
  return sr_type_get(&b);
}

SrArray *sr_ev_new_out(const SrEvalEqn *e, uint32_t i, const SrMesh *m, const SrType *layout) {
  return sr_array_new(e->out_type[i], layout, m);
}

/* ---- per-device computation ---- */

/* The block id of output 0 at pos, for SR_MAP_BLOCK / SR_MAP_POS. */
static int64_t block_id(const SrArray *o, int pos, int flags) {
  if (flags & SR_MAP_POS) return -(int64_t)pos - 1;
  if (!(flags & SR_MAP_BLOCK) || !o->mesh) return 0;
  int64_t id = 0;
  for (int d = 0; d < o->layout->ndim; d++)
    id = id * sr_layout_splits(o->layout, d) + sr_layout_block_index(o->layout, o->mesh, pos, d);
  return id + 1;
}

static uint64_t key_hash(SrBuffer *const *in, int n, int64_t blk) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)blk;
  for (int i = 0; i < n; i++) h = (h ^ (uint64_t)(uintptr_t)in[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

int sr_ev_map(SrEvalCtx *cx, int nin, SrArray *const *in, int nout, SrArray *const *out, int flags, SrShardFn fn,
              void *arg) {
  if (nin > 16 || nout > 16) return sr_ev_err(cx, "RuntimeError", "too many operands for one kernel");
  const SrMesh *m = out[0]->mesh;
  int ndev = out[0]->ndev;
  int64_t ishape[16][SR_MAX_RANK], oshape[16][SR_MAX_RANK];
  size_t obytes[16];
  SrShardIO io;
  io.cx = cx;
  io.mesh = m;
  io.arg = arg;
  for (int k = 0; k < nin; k++) {
    sr_layout_shard_shape(in[k]->layout, ishape[k]);
    io.in_shape[k] = ishape[k];
    if (in[k]->mesh && in[k]->mesh != m)
      return sr_ev_err(cx, "RuntimeError", "internal: an operand of %s is on another mesh", cx->depth ? cx->path[cx->depth - 1] : "?");
  }
  for (int k = 0; k < nout; k++) {
    sr_layout_shard_shape(out[k]->layout, oshape[k]);
    io.out_shape[k] = oshape[k];
    obytes[k] = (size_t)sr_layout_shard_numel(out[k]->layout) * sr_elem_size(out[k]->type->dtype);
  }
  int ol = out[0]->layout->ndim;
  if (!(flags & SR_MAP_BLOCK)) memset(io.out_start, 0, (size_t)ol * sizeof *io.out_start);
  /* devices with the same inputs (and block) share results: the ones
     computed so far, searched linearly for a few devices, hashed for many */
  int small = ndev <= 16;
  int cap = 16;
  while (!small && cap < 2 * ndev) cap *= 2;
  int *tab = small ? NULL : sr_xmalloc((size_t)cap * sizeof *tab);
  for (int i = 0; !small && i < cap; i++) tab[i] = -1;
  int dst[16], ndistinct = 0;
  int64_t dblk[16];
  SrBuffer *ibuf[16];
  io.in = ibuf;
  int rc = 0;
  /* big shards: the distinct devices' kernels run together on the thread
     pool once their buffers are made (eval_par.h) */
  SrMapBatch batch;
  int par = sr_ev_map_parallel(&batch, ndev, flags, nin, in, nout, obytes);
  for (int p = 0; p < ndev && rc == 0; p++) {
    if (cx->comm && !sr_comm_local(cx->comm, m, p)) continue;
    for (int i = 0; i < nin; i++) {
      ibuf[i] = sr_array_buf(in[i], p);
      if (!ibuf[i]) rc = sr_ev_err(cx, "RuntimeError", "internal: a device holds no operand data");
    }
    if (rc) break;
    int64_t blk = (flags & (SR_MAP_BLOCK | SR_MAP_POS)) ? block_id(out[0], p, flags) : 0;
    int found = -1, slot = 0;
    if (ndev > 1) {
      if (small) {
        for (int d = 0; d < ndistinct && found < 0; d++) {
          int q = dst[d], same = dblk[d] == blk;
          for (int i = 0; i < nin && same; i++) same = sr_array_buf(in[i], q) == ibuf[i];
          if (same) found = q;
        }
      } else {
        slot = (int)(key_hash(ibuf, nin, blk) & (uint64_t)(cap - 1));
        while (tab[slot] >= 0) {
          int q = tab[slot], same = block_id(out[0], q, flags) == blk;
          for (int i = 0; i < nin && same; i++) same = sr_array_buf(in[i], q) == ibuf[i];
          if (same) {
            found = q;
            break;
          }
          slot = (slot + 1) & (cap - 1);
        }
      }
    }
    if (found >= 0) {
      for (int j = 0; j < nout; j++) out[j]->shard[p] = sr_buffer_ref(out[j]->shard[found]);
      continue;
    }
    if (small) {
      dst[ndistinct] = p;
      dblk[ndistinct++] = blk;
    } else {
      tab[slot] = p;
    }
    io.pos = p;
    SrBuffer *obuf[16];
    for (int j = 0; j < nout; j++) {
      obuf[j] = NULL;
      if (flags & SR_MAP_NOALLOC) continue;
      if (cx->eqn_dest && (obuf[j] = sr_ev_dest_take(cx, (uint32_t)j, p, obytes[j]))) continue;
      if (j == 0 && flags >= 8) {
        /* the first of the reusable inputs whose buffer no one else holds */
        for (unsigned rs = (unsigned)flags >> 3; rs && !obuf[0]; rs &= rs - 1) {
          int r = __builtin_ctz(rs);
          if (r < nin && sr_buffer_unique(ibuf[r]) && ibuf[r]->nbytes == obytes[0]) obuf[0] = sr_buffer_ref(ibuf[r]);
        }
        if (obuf[0]) continue;
      }
      obuf[j] = sr_ev_buffer(cx, obytes[j]);
      if (!obuf[j]) rc = -1;
      else if (cx->take_acc) memset(obuf[j]->data, 0, obytes[j]);
    }
    if (rc) {
      for (int j = 0; j < nout; j++) sr_buffer_unref(obuf[j]);
      break;
    }
    io.out = obuf;
    if ((flags & SR_MAP_BLOCK) && ol) {
      if (m) sr_layout_block_start(out[0]->layout, m, p, io.out_start);
      else memset(io.out_start, 0, (size_t)ol * sizeof *io.out_start);
    }
    if (par) sr_ev_batch_add(&batch, &io, nin, nout);
    else rc = fn(&io);
    for (int j = 0; j < nout; j++) {
      if (rc == 0 && !obuf[j]) rc = sr_ev_err(cx, "RuntimeError", "internal: a kernel made no output");
      out[j]->shard[p] = obuf[j];
    }
  }
  free(tab);
  if (par) {
    int brc = sr_ev_batch_run(cx, &batch, fn, rc == 0);
    if (rc == 0) rc = brc;
  }
  return rc;
}

/* ---- equations ---- */

/* An equation's segment of the ledger's path, as XLA's op_name metadata
   names it (what the seed's print_all_reduces reads): its row's op_name
   rule (jit(NAME), a loop's `while`), else the primitive. */
static const char *op_segment(const SrEvalEqn *e) {
  if (!e->prim->op_name) return e->prim->name;
  char buf[160];
  const char *s = e->prim->op_name(e->params, e->nparams, NULL, 0, buf, sizeof buf);
  return s == buf ? sr_intern_cstr(buf) : s;
}

int sr_ev_eqn(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrEvalRule rule = (SrEvalRule)e->prim->eval;
  if (!rule)
    return sr_ev_err(cx, "NotImplementedError", "shardrepl cannot run the primitive '%s' (it has no eval rule)",
                     e->prim->name);
  /* refuse a result bigger than the machine before any rule tries to make
     it (its shards may each fit where all of them do not) */
  for (uint32_t i = 0; i < e->nout; i++) {
    const SrType *t = e->out_type ? e->out_type[i] : NULL;
    int64_t n = t ? sr_type_numel(t) : -1;
    size_t nbytes = n > 0 ? (size_t)n * sr_elem_size(t->dtype) : 0;
    if (nbytes > sr_mem_limit()) return sr_ev_oom(cx, nbytes);
    /* a jaxpr read with no mesh in context names axes of no known size
       (an unsized mesh): no device holds a shard of such a result */
    if (t && t->mesh && t->mesh->unsized) {
      SrBuf b = SR_BUF_INIT;
      sr_type_str(&b, t, 0);
      sr_ev_err(cx, "ValueError",
                "cannot run %s: its result type %s names mesh axes whose sizes are not known (the jaxpr was read "
                "with no mesh in context)",
                e->prim->name, sr_buf_str(&b));
      sr_buf_free(&b);
      return -1;
    }
  }
  /* every rule sees row-major inputs (exec/layout.h), but those of the
     primitives that pass arrays along as they are */
  SrArray *rm[16], **rin = NULL;
  SrEvalEqn re = *e;
  if (!(e->prim->flags & SR_PF_LAYOUT))
    for (uint32_t i = 0; i < e->nin; i++) {
      if (!e->in[i]->local) continue;
      if (!rin) {
        rin = e->nin <= 16 ? rm : sr_xmalloc(e->nin * sizeof *rin);
        for (uint32_t k = 0; k < e->nin; k++) rin[k] = sr_array_ref(e->in[k]);
        re.in = rin;
      }
      SrArray *r = sr_array_row_major(rin[i]);
      sr_array_unref(rin[i]);
      rin[i] = r;
      if (i < 32) re.donate &= ~(1u << i);
    }
  /* the operands' global types, which the ranks agree on before they
     communicate */
  const SrType *tsmall[16], **types = e->nin <= 16 ? tsmall : sr_xmalloc(e->nin * sizeof *types);
  for (uint32_t i = 0; i < e->nin; i++) types[i] = e->in[i]->type;
  SrCommOperands saved = {0};
  if (cx->comm) saved = sr_comm_operands(cx->comm, types, (int)e->nin);
  if (e->ns) sr_ev_push(cx, e->ns);
  sr_ev_push(cx, op_segment(e));
  int rc = rule(cx, rin ? &re : e);
  sr_ev_pop(cx);
  if (e->ns) sr_ev_pop(cx);
  if (cx->comm) cx->comm->operands = saved;
  if (types != tsmall) free(types);
  if (rin) {
    for (uint32_t k = 0; k < e->nin; k++) sr_array_unref(rin[k]);
    if (rin != rm) free(rin);
  }
  if (rc < 0) {
    for (uint32_t i = 0; i < e->nout; i++) {
      sr_array_unref(e->out[i]);
      e->out[i] = NULL;
    }
    if (!cx->d || !cx->d->count) sr_ev_err(cx, "RuntimeError", "%s failed", e->prim->name);
    return -1;
  }
  return 0;
}

/* ---- jaxprs ---- */

/* A literal as a meshless scalar array. */
static SrArray *literal_array(const SrVar *l) {
  const SrType *t = sr_atom_type(l);
  const SrType *st = sr_type_with_weak(t, t->weak);
  unsigned char buf[16] = {0};
  double re = 0, im = 0;
  int64_t iv = 0;
  if (l->type) {
    if (sr_dtype_kind(t->dtype) == SR_DK_COMPLEX) re = l->val.c[0], im = l->val.c[1], iv = sr_f2i64(re);
    else if (sr_dtype_is_inexact(t->dtype)) re = l->val.f, iv = sr_f2i64(l->val.f);
    else iv = l->val.i, re = (double)l->val.i;
  } else {
    const char *s = l->text ? l->text : "0";
    if (sr_dtype_is_inexact(t->dtype)) re = strtod(s, NULL), iv = sr_f2i64(re);
    else iv = strcmp(s, "True") == 0 ? 1 : strtoll(s, NULL, 10), re = (double)iv;
  }
  sr_kern_set_complex(t->dtype, re, im, iv, buf);
  return sr_array_from_data(st, NULL, buf);
}

/* XLA:CPU compiles a jitted computation with LLVM's floating-point
   contraction on (AllowFPOpFusion::Fast): a multiply feeding an add or a
   subtract in one fusion is one fused multiply-add, rounded once (LLVM
   contracts d - a*b to fma(-a, b, d) and a*b - d to fma(a, b, -d)).
   Inside a jit (cx->fused) equation k, `c = mul a b`, and k + 1, `add c
   d`, `add d c`, `sub d c` or `sub c d`, run so when c has no other use
   and they are float32 or float64 of one shape -- what JAX computes for
   jax.random.uniform's floats * (maxval - minval) + minval, and for a
   training step's `w - lr * g`.  *pos is c's position in the add. */
SrEvFma sr_ev_fma;

static int fusable(const SrEvalCtx *cx, const SrJaxpr *j, uint32_t k, const int32_t *last, int *pos) {
  if (!sr_ev_fma.rule) return 0;
  if (!cx->fused || k + 1 >= j->neqn) return 0;
  const SrEqn *m = &j->eqns[k], *a = &j->eqns[k + 1];
  if (m->prim->id != sr_ev_fma.mul || (a->prim->id != sr_ev_fma.add && a->prim->id != sr_ev_fma.sub) || m->nin != 2 ||
      a->nin != 2 || m->nout != 1 || a->nout != 1)
    return 0;
  const SrVar *v = m->out[0];
  if (!sr_dies_at(last, v, k + 1) || (a->in[0] == v) == (a->in[1] == v)) return 0;
  const SrType *t = v->type, *at = a->out[0]->type;
  if ((t->dtype != SR_F32 && t->dtype != SR_F64) || at->dtype != t->dtype || at->ndim != t->ndim) return 0;
  for (int i = 0; i < t->ndim; i++)
    if (t->dims[i].size != at->dims[i].size) return 0;
  if (sr_ev_fma.fuses && !sr_ev_fma.fuses(m)) return 0;
  *pos = a->in[0] == v ? 0 : 1;
  return 1;
}

/* Runs equations k and k + 1 as one fused multiply-add (see fusable). */
static int run_fused(SrEvalCtx *cx, const SrJaxpr *j, uint32_t k, int pos, SrArray **env, const int32_t *last) {
  const SrEqn *m = &j->eqns[k], *a = &j->eqns[k + 1];
  const SrVar *atoms[3] = {m->in[0], m->in[1], a->in[1 - pos]};
  int form = a->prim->id == sr_ev_fma.add ? SR_FMA_ADD : pos == 1 ? SR_FMA_RSUB : SR_FMA_SUB;
  SrArray *ins[3], *outs[1] = {NULL};
  uint32_t donate = 0;
  int rc = 0;
  for (int i = 0; i < 3; i++) {
    const SrVar *v = atoms[i];
    SrArray *x = v->kind == SR_LIT ? literal_array(v) : sr_array_ref(env[v->id]);
    if (!x) {
      rc = sr_ev_err(cx, "RuntimeError", "internal: a var of the jaxpr has no value");
      ins[i] = NULL;
      continue;
    }
    /* an operand used for the last time, once, held by the walk alone */
    int once = v->kind == SR_VAR && sr_dies_at(last, v, i < 2 ? k : k + 1) && x->rc == 2 && !x->local;
    for (int o = 0; o < 3 && once; o++) once = o == i || atoms[o] != v;
    if (once) donate |= 1u << i;
    ins[i] = sr_array_row_major(x);
    sr_array_unref(x);
  }
  const SrType *ts[1] = {a->out[0]->type};
  SrEvalEqn e = {a->prim, NULL, 0, 3, 1, ins, ts, outs, donate, a->ns, 0};
  if (rc == 0) {
    if (a->ns) sr_ev_push(cx, a->ns);
    sr_ev_push(cx, a->prim->name);
    rc = sr_ev_fma.rule(cx, &e, form);
    sr_ev_pop(cx);
    if (a->ns) sr_ev_pop(cx);
  }
  for (int i = 0; i < 3; i++) sr_array_unref(ins[i]);
  if (rc < 0) {
    sr_array_unref(outs[0]);
    return -1;
  }
  const SrVar *ov = a->out[0];
  if (!sr_is_read(last, ov)) {
    sr_array_unref(outs[0]);
  } else {
    sr_array_unref(env[ov->id]);
    env[ov->id] = outs[0];
  }
  for (uint32_t s = 0; s < 2; s++) {
    const SrEqn *q = s ? a : m;
    for (uint32_t i = 0; i < q->nin; i++) {
      const SrVar *v = q->in[i];
      if (sr_dies_at(last, v, k + s) && env[v->id]) {
        sr_array_unref(env[v->id]);
        env[v->id] = NULL;
      }
    }
  }
  return 0;
}

/* The equations whose results nothing reads, directly or through other
   such equations, as flags; NULL when there are none.  A jitted computation
   runs without them, as XLA's dead-code elimination compiles it, so that
   (say) the loss value a gradient computes and drops costs no all-reduce.
   An equation with an effect (sr_prim_has_effect: a debug callback, or
   control flow around one) is kept, as XLA keeps a side-effecting custom
   call. */
static uint8_t *find_dead(const SrJaxpr *j) {
  uint8_t *live = sr_xcalloc(j->nvars + 1, 1), *dead = sr_xcalloc(j->neqn + 1, 1);
  int any = 0;
  for (uint32_t i = 0; i < j->nout; i++)
    if (j->outvars[i]->kind == SR_VAR) live[j->outvars[i]->id] = 1;
  for (uint32_t k = j->neqn; k-- > 0;) {
    const SrEqn *q = &j->eqns[k];
    int used = 0;
    for (uint32_t i = 0; i < q->nout && !used; i++) used = q->out[i]->kind == SR_VAR && live[q->out[i]->id];
    if (!used) used = sr_prim_has_effect(q->prim, q->params, q->nparams);
    if (!used) {
      dead[k] = 1;
      any = 1;
      continue;
    }
    for (uint32_t i = 0; i < q->nin; i++)
      if (q->in[i]->kind == SR_VAR) live[q->in[i]->id] = 1;
  }
  free(live);
  if (!any) {
    free(dead);
    return NULL;
  }
  return dead;
}

SrBuffer *sr_ev_dest_take(SrEvalCtx *cx, uint32_t i, int pos, size_t nbytes) {
  const SrEvDest *d = cx->eqn_dest;
  if (!d || i >= cx->eqn_dest_n || cx->eqn_dest_of[i] < 0) return NULL;
  const SrEvDestOut *o = &d->out[cx->eqn_dest_of[i]];
  if (!o->buf || pos < 0 || pos >= o->ndev || !o->buf[pos] || o->per != nbytes || o->taken[pos]) return NULL;
  if (o->acc && !cx->take_acc) return NULL;
  o->taken[pos] = 1;
  return sr_buffer_view(o->buf[pos], o->off, nbytes);
}

int sr_ev_dest_acc(const SrEvalCtx *cx, uint32_t i) {
  const SrEvDest *d = cx->eqn_dest;
  if (!d || i >= cx->eqn_dest_n || cx->eqn_dest_of[i] < 0) return 0;
  const SrEvDestOut *o = &d->out[cx->eqn_dest_of[i]];
  return o->buf && o->acc;
}

/* Which result of j each var is, where that result has a destination (the
   first such result of a var that several are); -1 elsewhere. */
static int32_t *dest_of_vars(const SrJaxpr *j, const SrEvDest *d) {
  int32_t *of = sr_xmalloc((j->nvars + 1) * sizeof *of);
  for (uint32_t i = 0; i <= j->nvars; i++) of[i] = -1;
  for (uint32_t o = 0; o < j->nout && o < d->n; o++) {
    const SrVar *v = j->outvars[o];
    if (v->kind == SR_VAR && d->out[o].buf && of[v->id] < 0) of[v->id] = (int32_t)o;
  }
  return of;
}

/* Runs equation q (the walk's k-th, or its rewrite) on the values in env:
   its results bound there, what it read last dropped. */
static int run_eqn(SrEvalCtx *cx, const SrEqn *q, uint32_t k, SrArray **env, const int32_t *last,
                   const SrEvDest *dest, const int32_t *dest_of) {
  SrArray *ist[16], *ost[16];
  const SrType *tst[16];
  int32_t eqn_of[16];
  int rc = 0;
  SrArray **ins = q->nin <= 16 ? ist : sr_xmalloc(q->nin * sizeof *ins);
  SrArray **outs = q->nout <= 16 ? ost : sr_xmalloc(q->nout * sizeof *outs);
  const SrType **ts = q->nout <= 16 ? tst : sr_xmalloc(q->nout * sizeof *ts);
  uint32_t nlit = 0;
  for (uint32_t i = 0; i < q->nin; i++) {
    const SrVar *v = q->in[i];
    if (v->kind == SR_LIT) {
      ins[i] = literal_array(v);
      nlit++;
    } else {
      ins[i] = env[v->id];
      if (!ins[i]) rc = sr_ev_err(cx, "RuntimeError", "internal: a var of the jaxpr has no value");
    }
  }
  for (uint32_t i = 0; i < q->nout; i++) {
    ts[i] = q->out[i]->type;
    outs[i] = NULL;
  }
  if (rc == 0) {
    SrEvalEqn ee = {q->prim, q->params, q->nparams, q->nin, q->nout, ins, ts, outs, 0, q->ns, 0};
    for (uint32_t i = 0; i < q->nin && i < 32; i++)
      if (q->in[i]->kind == SR_LIT) ee.lit |= 1u << i;
    /* inputs used for the last time, once, and held by nobody else */
    for (uint32_t i = 0; i < q->nin && i < 32; i++) {
      const SrVar *v = q->in[i];
      if (!sr_dies_at(last, v, k) || ins[i]->rc != 1) continue;
      int once = 1;
      for (uint32_t o = 0; o < q->nin && once; o++) once = o == i || q->in[o] != v;
      if (once) ee.donate |= 1u << i;
    }
    int any_dest = 0;
    for (uint32_t i = 0; dest_of && i < q->nout && q->nout <= 16; i++)
      any_dest |= (eqn_of[i] = q->out[i]->kind == SR_VAR ? dest_of[q->out[i]->id] : -1) >= 0;
    if (any_dest) {
      cx->eqn_dest = dest;
      cx->eqn_dest_of = eqn_of;
      cx->eqn_dest_n = q->nout;
    }
    rc = sr_ev_eqn(cx, &ee);
    cx->eqn_dest = NULL;
  }
  if (nlit)
    for (uint32_t i = 0; i < q->nin; i++)
      if (q->in[i]->kind == SR_LIT) sr_array_unref(ins[i]);
  for (uint32_t i = 0; i < q->nout && rc == 0; i++) {
    const SrVar *v = q->out[i];
    if (!sr_is_read(last, v)) {
      sr_array_unref(outs[i]);
      continue;
    }
    sr_array_unref(env[v->id]);
    env[v->id] = outs[i];
  }
  /* drop what this equation used last */
  for (uint32_t i = 0; i < q->nin; i++) {
    const SrVar *v = q->in[i];
    if (sr_dies_at(last, v, k) && env[v->id]) {
      sr_array_unref(env[v->id]);
      env[v->id] = NULL;
    }
  }
  if (ins != ist) free(ins);
  if (outs != ost) free(outs);
  if (ts != tst) free(ts);
  return rc;
}

/* The adds that scan k's stacked results can accumulate into (see
   SrEvAccum in eval.h): result out[i] into the add at equation add[i],
   whose operand pos[i] it is. */
SrEvAccum sr_ev_accum;
static long naccum;

long sr_ev_accum_count(void) { return __atomic_load_n(&naccum, __ATOMIC_RELAXED); }

/* SHARDREPL_ACCUM=0 in the environment turns the accumulation off (for
   comparisons). */
static int accum_enabled(void) {
  static int on = -1;
  return sr_env_on("SHARDREPL_ACCUM", &on);
}

typedef struct AccPlan {
  int n;
  uint32_t out[SR_EV_MAXACC], add[SR_EV_MAXACC];
  int pos[SR_EV_MAXACC];
} AccPlan;

static int reads(const SrEqn *q, const SrVar *v) {
  for (uint32_t i = 0; i < q->nin; i++)
    if (q->in[i] == v) return 1;
  return 0;
}

/* Whether A is held by the walk alone and each of its buffers by A alone
   (devices may share one: unshare gives each its own). */
static int owned(const SrArray *A) {
  if (!A || A->rc != 1 || A->local) return 0;
  for (int d = 0; d < A->ndev; d++) {
    const SrBuffer *b = A->shard[d];
    int n = 0;
    for (int e = 0; b && e < A->ndev; e++) n += A->shard[e] == b;
    if (b && (b->rc != n || (b->base && b->base->rc != 1))) return 0;
  }
  return 1;
}

/* Gives each device of A (owned) a buffer of its own, the copies side by
   side on the pool: the devices accumulate apart (the zeros that a
   reshard to unreduced gives devices 1 and up are one buffer). */
static int unshare(SrEvalCtx *cx, SrArray *A) {
  SrCopy *c = NULL;
  int n = 0, rc = 0;
  for (int d = 0; d < A->ndev && rc == 0; d++) {
    SrBuffer *b = A->shard[d];
    int e = 0;
    while (b && e < d && A->shard[e] != b) e++;
    if (!b || e == d) continue;
    SrBuffer *o = sr_ev_buffer(cx, b->nbytes);
    if (!o) {
      rc = -1;
      break;
    }
    if (!c) c = sr_xmalloc((size_t)A->ndev * sizeof *c);
    c[n++] = (SrCopy){o->data, b->data, b->nbytes};
    sr_buffer_unref(b);
    A->shard[d] = o;
  }
  sr_copies_run(c, n);
  free(c);
  return rc;
}

static int plan_accum(const SrEvalCtx *cx, const SrJaxpr *j, uint32_t k, const uint8_t *dead, const int32_t *last,
                      SrArray *const *env, AccPlan *pl) {
  pl->n = 0;
  const SrEqn *s = &j->eqns[k];
  if (!sr_ev_accum.stacked || !cx->fused || s->prim->id != sr_ev_accum.scan || !accum_enabled()) return 0;
  for (uint32_t o = 0; o < s->nout && pl->n < SR_EV_MAXACC; o++) {
    const SrVar *y = s->out[o];
    if (y->kind != SR_VAR || !sr_ev_accum.stacked(s, o)) continue;
    int32_t r = last[y->id];
    if (r <= (int32_t)k || r == SR_LAST_OUT || (dead && dead[r])) continue;
    const SrEqn *a = &j->eqns[r];
    if (a->nin != 2 || a->nout != 1 || (a->prim->id != sr_ev_accum.add && a->prim->id != sr_ev_accum.add_any) ||
        (a->in[0] == y) == (a->in[1] == y))
      continue;
    int pos = a->in[0] == y ? 0 : 1;
    const SrVar *acc = a->in[1 - pos];
    const SrType *t = acc->type;
    if (acc->kind != SR_VAR || !sr_dies_at(last, acc, (uint32_t)r) || reads(s, acc) || t != y->type ||
        t != a->out[0]->type || (t->dtype != SR_F32 && t->dtype != SR_F64) || !owned(env[acc->id]))
      continue;
    /* nothing between reads the stack or the accumulator */
    int clear = 1;
    for (int32_t q = (int32_t)k + 1; q < r && clear; q++)
      clear = (dead && dead[q]) || (!reads(&j->eqns[q], y) && !reads(&j->eqns[q], acc));
    if (!clear) continue;
    pl->out[pl->n] = o;
    pl->add[pl->n] = (uint32_t)r;
    pl->pos[pl->n++] = pos;
  }
  return pl->n > 0;
}

/* Runs scan k accumulating into its adds' operands (see plan_accum); the
   adds' results are bound here and skip[] marks the adds, which the walk
   then passes over. */
static int run_accum(SrEvalCtx *cx, const SrJaxpr *j, uint32_t k, const AccPlan *pl, SrArray **env,
                     const int32_t *last, const SrEvDest *dest, const int32_t *dest_of, uint8_t *skip) {
  SrEvAccIn acc = {pl->n, {0}, {0}};
  int rc = 0;
  for (int i = 0; i < pl->n; i++) {
    const SrVar *v = j->eqns[pl->add[i]].in[1 - pl->pos[i]];
    acc.out[i] = (int32_t)pl->out[i];
    acc.in[i] = env[v->id];
    env[v->id] = NULL;
    if (rc == 0) rc = unshare(cx, acc.in[i]);
  }
  cx->acc = &acc;
  if (rc == 0) rc = run_eqn(cx, &j->eqns[k], k, env, last, dest, dest_of);
  cx->acc = NULL;
  int left = 0;
  for (int i = 0; i < pl->n; i++) {
    /* the rule did not take them (it failed before starting) */
    left |= acc.in[i] != NULL;
    sr_array_unref(acc.in[i]);
  }
  if (left && rc == 0) rc = sr_ev_err(cx, "RuntimeError", "internal: the scan did not accumulate into its adds");
  if (rc < 0) return -1;
  __atomic_fetch_add(&naccum, pl->n, __ATOMIC_RELAXED);
  for (int i = 0; i < pl->n; i++) {
    const SrEqn *a = &j->eqns[pl->add[i]];
    const SrVar *y = a->in[pl->pos[i]], *c = a->out[0];
    SrArray *sum = env[y->id];
    env[y->id] = NULL;
    if (!sr_is_read(last, c)) {
      sr_array_unref(sum);
    } else {
      sr_array_unref(env[c->id]);
      env[c->id] = sum;
    }
    skip[pl->add[i]] = 1;
  }
  return 0;
}

int sr_ev_jaxpr(SrEvalCtx *cx, const SrJaxpr *j, SrArray *const *in, SrArray **out) {
  uint32_t nv = j->nvars;
  const SrEvDest *dest = cx->dest, *outer_dest = cx->eqn_dest;
  const int32_t *outer_of = cx->eqn_dest_of;
  uint32_t outer_n = cx->eqn_dest_n;
  uint64_t steal = cx->steal;
  cx->dest = NULL;
  cx->steal = 0;
  cx->eqn_dest = NULL;
  int32_t *dest_of = dest ? dest_of_vars(j, dest) : NULL;
  for (uint32_t i = 0; i < j->nout; i++) out[i] = NULL;
  SrArray **env = sr_xcalloc(nv + 1, sizeof *env);
  uint8_t *dead = cx->fused ? find_dead(j) : NULL;
  int32_t *last = sr_jaxpr_last_use(j, dead);
  SrFold *fold = sr_fold_plan(j, dead, last);
  uint8_t *skip = NULL;  /* adds a scan accumulated into (run_accum) */
  int rc = 0;
  for (uint32_t i = 0; i < j->nconst; i++) {
    SrArrayObj *c = j->consts ? sr_array_of(j->consts[i]) : NULL;
    if (!c || c->kind != SR_AV_CONCRETE) {
      rc = sr_ev_err(cx, "RuntimeError", "the jaxpr's constant %u has no concrete value", i);
      for (uint32_t a = 0; a < sr_nargs(j) && a < 64; a++)
        if (steal >> a & 1) sr_array_unref(in[a]);
      goto done;
    }
    env[j->invars[i]->id] = sr_array_ref(c->data);
  }
  for (uint32_t i = 0; i < sr_nargs(j); i++)
    env[sr_args(j)[i]->id] = i < 64 && (steal >> i & 1) ? in[i] : sr_array_ref(in[i]);
  for (uint32_t k = 0; k < j->neqn && rc == 0; k++) {
    const SrEqn *q = &j->eqns[k];
    int pos;
    if (dead && dead[k]) continue;
    if (fusable(cx, j, k, last, &pos)) {
      rc = run_fused(cx, j, k, pos, env, last);
      k++;
      continue;
    }
    if (skip && skip[k]) continue;
    AccPlan pl;
    if (plan_accum(cx, j, k, dead, last, env, &pl)) {
      if (!skip) skip = sr_xcalloc(j->neqn + 1, 1);
      rc = run_accum(cx, j, k, &pl, env, last, dest, dest_of, skip);
      continue;
    }
    if (fold && !(q = sr_fold_eqn(fold, k, q, env, last))) continue;
    rc = run_eqn(cx, q, k, env, last, dest, dest_of);
    if (rc == 0 && cx->I && sr_interrupt_point(cx->I)) rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
  }
  for (uint32_t i = 0; i < j->nout && rc == 0; i++) {
    const SrVar *v = j->outvars[i];
    out[i] = v->kind == SR_LIT ? literal_array(v) : sr_array_ref(env[v->id]);
    if (!out[i]) rc = sr_ev_err(cx, "RuntimeError", "internal: an output of the jaxpr has no value");
  }
  if (rc < 0)
    for (uint32_t i = 0; i < j->nout; i++) {
      sr_array_unref(out[i]);
      out[i] = NULL;
    }
done:
  for (uint32_t i = 0; i < nv; i++) sr_array_unref(env[i]);
  free(env);
  free(last);
  free(dead);
  sr_fold_free(fold);
  free(skip);
  free(dest_of);
  cx->eqn_dest = outer_dest;
  cx->eqn_dest_of = outer_of;
  cx->eqn_dest_n = outer_n;
  return rc;
}

/* ---- layouts of sharding values ---- */

/* The layout a NamedSharding / P value gives a result of type t on mesh m:
   dims from the spec (except `keep` dims, which keep x's axes), unreduced
   and reduced from the spec. */
int sr_ev_layout_of_spec(SrEvalCtx *cx, const SrType *t, const SrVal *sh, const SrMesh *m, const SrType *xl,
                         uint64_t keep, const SrType **out) {
  const SrSpec *s = sh->kind == SR_V_SHARDING ? sh->sh.spec : sh->kind == SR_V_SPEC ? sh->spec : NULL;
  if (!s) return sr_ev_err(cx, "TypeError", "expected a sharding, got %s", sr_val_kind_name(sh));
  SrTypeBuilder b;
  sr_type_builder(&b, sr_layout_of_type(t));
  b.mesh = m ? sr_mesh_shape(m) : NULL;
  if (b.mesh && !b.mesh->n) b.mesh = NULL;
  for (int i = 0; i < b.ndim; i++) {
    SrDim *d = &b.dims[i];
    d->nax = 0;
    if (keep >> i & 1) {
      if (xl && i < xl->ndim) {
        d->nax = xl->dims[i].nax;
        memcpy(d->ax, xl->dims[i].ax, SR_MAX_DIM_AXES);
      }
      continue;
    }
    if (i >= s->n) continue;
    for (int k = 0; k < s->e[i].n; k++) {
      const char *nm = s->e[i].names[k];
      if (nm == SR_SPEC_UNCONSTRAINED) {
        if (xl && i < xl->ndim) {
          d->nax = xl->dims[i].nax;
          memcpy(d->ax, xl->dims[i].ax, SR_MAX_DIM_AXES);
        }
        break;
      }
      int a = m ? sr_mesh_axis(m, nm) : -1;
      if (a < 0) return sr_ev_err(cx, "ValueError", "Resource axis: %s is not found in the mesh", nm);
      d->ax[d->nax++] = (uint8_t)a;
    }
  }
  SrAxes u = 0, r = 0;
  for (int k = 0; k < s->nunreduced; k++) {
    int a = m ? sr_mesh_axis(m, s->unreduced[k]) : -1;
    if (a >= 0) u |= 1u << a;
  }
  for (int k = 0; k < s->nreduced; k++) {
    int a = m ? sr_mesh_axis(m, s->reduced[k]) : -1;
    if (a >= 0) r |= 1u << a;
  }
  b.unreduced = u;
  b.ukind = (uint8_t)(u ? (s->ukind ? s->ukind : SR_UK_SUM) : SR_UK_NONE);
  b.reduced = r;
  *out = sr_type_get(&b);
  return 0;
}

int sr_ev_layout_of_sharding(SrEvalCtx *cx, const SrType *t, const SrVal *sh, const SrMesh *m, const SrType **out) {
  return sr_ev_layout_of_spec(cx, t, sh, m, NULL, 0, out);
}
