/* eval_control.c: calls and control flow -- jit, custom_jvp/vjp calls,
 * remat, optimization_barrier, scan, while and cond.
 *
 * A call runs its jaxpr with the evaluator, under its own name in the
 * ledger's path (jit(f)/while/body/...).  Loop predicates and branch indices
 * are read on every device; inside shard_map they may differ between
 * devices, and then each device follows its own: a while loop goes on while
 * any device's predicate holds (the others keep their carry), and cond runs
 * every branch some device picked and keeps, per device, its own branch's
 * results.  Whether any device anywhere wants a branch or another
 * iteration is agreed over all ranks (SrCommOps.any). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "exec/layout.h"
#include "prims/rule.h"
#include "exec/kern.h"
#include "util/mem.h"

/* Runs a jaxpr as a call: out types are the equation's. */
static int call(SrEvalCtx *cx, const SrEvalEqn *e, const SrJaxpr *j, uint32_t nin, SrArray *const *in) {
  if (sr_nargs(j) != nin)
    return sr_ev_err(cx, "TypeError", "%s: its jaxpr takes %u arguments, the equation gives %u", e->prim->name,
                     sr_nargs(j), nin);
  if (j->nout != e->nout)
    return sr_ev_err(cx, "TypeError", "%s: its jaxpr has %u results, the equation %u", e->prim->name, j->nout, e->nout);
  if (sr_ev_jaxpr(cx, j, in, e->out) < 0) return -1;
  /* the equation's types (a body's own may be weak, or name a mesh the
     same way under another pointer) */
  for (uint32_t i = 0; i < e->nout; i++) {
    if (e->out[i]->type == e->out_type[i]) continue;
    SrArray *r;
    if (sr_layout_same(sr_layout_of_type(e->out[i]->type), sr_layout_of_type(e->out_type[i]))) {
      r = sr_array_retype(e->out[i], e->out_type[i], NULL);
    } else {
      /* the call's result sharding differs from the body's (out_shardings) */
      const SrMesh *m = sr_ev_mesh_for(cx, e, e->out_type[i]);
      r = sr_redistribute_typed(cx, e->out[i], m, sr_ev_out_layout(cx, e, i, m), e->out_type[i]);
    }
    sr_array_unref(e->out[i]);
    e->out[i] = r;
    if (!r) return -1;
  }
  return 0;
}

static int ev_call(SrEvalCtx *cx, const SrEvalEqn *e) {
  static const char *const keys[] = {"jaxpr", "call_jaxpr", "fun_jaxpr", NULL};
  const SrJaxpr *j = NULL;
  for (int k = 0; keys[k] && !j; k++) j = sr_ev_param_jaxpr(e, keys[k]);
  if (!j) return sr_ev_err(cx, "TypeError", "%s equation has no jaxpr", e->prim->name);
  if (e->prim->id != SR_P_jit && e->prim->id != SR_P_pjit) return call(cx, e, j, e->nin, e->in);
  /* jit: its in/out shardings and layouts around the body (layout.h) */
  SrArray *st[16], **in = e->nin <= 16 ? st : sr_xmalloc(e->nin * sizeof *in);
  for (uint32_t i = 0; i < e->nin; i++) in[i] = sr_array_ref(e->in[i]);
  int rc = sr_ev_call_inputs(cx, e, j, in);
  int fused = cx->fused;
  cx->fused = 1; /* a compiled computation: eval.c's multiply-add */
  if (rc == 0) rc = call(cx, e, j, e->nin, in);
  cx->fused = fused;
  for (uint32_t i = 0; i < e->nin; i++) sr_array_unref(in[i]);
  if (in != st) free(in);
  if (rc == 0) rc = sr_ev_call_outputs(cx, e);
  return rc;
}

static int ev_barrier(SrEvalCtx *cx, const SrEvalEqn *e) {
  (void)cx;
  for (uint32_t i = 0; i < e->nout; i++) e->out[i] = sr_array_retype(e->in[i], e->out_type[i], NULL);
  return 0;
}

/* ---- scan ---- */

static const SrType *drop_dim0(const SrType *l) {
  SrTypeBuilder b;
  sr_type_builder(&b, l);
  b.dims[0].nax = 0;
  return sr_type_get(&b);
}

/* The layout of one slice (dim 0 removed) of a layout whose dim 0 is whole. */
static const SrType *slice_layout(const SrType *l, const SrType *slice_type) {
  SrTypeBuilder b;
  sr_type_builder(&b, slice_type);
  b.weak = 0;
  b.varying = 0;
  for (int i = 1; i < l->ndim; i++) b.dims[i - 1] = l->dims[i];
  b.unreduced = l->unreduced;
  b.ukind = l->ukind;
  b.reduced = l->reduced;
  b.mesh = l->mesh ? l->mesh : b.mesh;
  return sr_type_get(&b);
}

/* The layout of a stack of `length` slices laid out as l. */
static const SrType *stack_layout(const SrType *l, int64_t length, const SrType *stack_type) {
  SrTypeBuilder b;
  sr_type_builder(&b, stack_type);
  b.weak = 0;
  b.varying = 0;
  memset(&b.dims[0], 0, sizeof b.dims[0]);
  b.dims[0].size = length;
  for (int i = 0; i < l->ndim; i++) b.dims[i + 1] = l->dims[i];
  b.unreduced = l->unreduced;
  b.ukind = l->ukind;
  b.reduced = l->reduced;
  b.mesh = l->mesh ? l->mesh : b.mesh;
  return sr_type_get(&b);
}

static int ev_scan(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrJaxpr *j = sr_ev_param_jaxpr(e, "jaxpr");
  int64_t length, nconsts, ncarry, reverse = 0;
  if (!j) return sr_ev_err(cx, "TypeError", "scan equation has no jaxpr");
  if (sr_ev_param_int(cx, e, "length", &length) < 0 || sr_ev_param_int(cx, e, "num_consts", &nconsts) < 0 ||
      sr_ev_param_int(cx, e, "num_carry", &ncarry) < 0)
    return -1;
  if (sr_ev_param(e, "reverse")) sr_ev_param_int(cx, e, "reverse", &reverse);
  uint32_t nx = e->nin - (uint32_t)nconsts - (uint32_t)ncarry, ny = e->nout - (uint32_t)ncarry;
  if (sr_nargs(j) != e->nin || j->nout != e->nout) return sr_ev_err(cx, "TypeError", "scan: the body does not match the equation");
  SrArray **args = sr_xcalloc(e->nin + 1, sizeof *args);
  SrArray **res = sr_xcalloc(e->nout + 1, sizeof *res);
  SrArray **xs = sr_xcalloc(nx + 1, sizeof *xs);
  SrArray **ys = sr_xcalloc(ny + 1, sizeof *ys);
  int rc = 0;
  for (uint32_t i = 0; i < nconsts + ncarry; i++) args[i] = sr_array_ref(e->in[i]);
  /* the scanned-over dim whole on every device */
  for (uint32_t k = 0; k < nx && rc == 0; k++) {
    SrArray *x = e->in[nconsts + ncarry + k];
    xs[k] = sr_redistribute(cx, x, x->mesh, drop_dim0(x->layout));
    if (!xs[k]) rc = -1;
  }
  sr_ev_push(cx, "body");
  for (int64_t it = 0; it < length && rc == 0; it++) {
    int64_t i = reverse ? length - 1 - it : it;
    for (uint32_t k = 0; k < nx; k++) {
      SrArray *x = xs[k];
      const SrType *st = sr_args(j)[nconsts + ncarry + k]->type;
      SrArray *s = sr_array_new(st, slice_layout(x->layout, st), x->mesh);
      size_t per = sr_array_shard_bytes(x) / (size_t)(length ? length : 1);
      for (int p = 0; p < x->ndev; p++)
        if (x->shard[p]) s->shard[p] = sr_buffer_view(x->shard[p], (size_t)i * per, per);
      sr_array_unref(args[nconsts + ncarry + k]);
      args[nconsts + ncarry + k] = s;
    }
    for (uint32_t k = 0; k < e->nout; k++) res[k] = NULL;
    if (sr_ev_jaxpr(cx, j, args, res) < 0) {
      rc = -1;
      break;
    }
    for (uint32_t k = 0; k < ncarry; k++) {
      sr_array_unref(args[nconsts + k]);
      args[nconsts + k] = res[k];
      res[k] = NULL;
    }
    for (uint32_t k = 0; k < ny && rc == 0; k++) {
      SrArray *y = res[ncarry + k];
      if (!ys[k]) {
        ys[k] = sr_array_new(e->out_type[ncarry + k], stack_layout(y->layout, length, e->out_type[ncarry + k]), y->mesh);
        for (int p = 0; p < y->ndev && !rc; p++) {
          if (!y->shard[p]) continue;
          int q = 0;
          while (q < p && y->shard[q] != y->shard[p]) q++;
          ys[k]->shard[p] = q < p ? sr_buffer_ref(ys[k]->shard[q]) : sr_ev_buffer(cx, y->shard[p]->nbytes * (size_t)length);
          if (!ys[k]->shard[p]) rc = -1;
        }
        if (rc) break;
      } else if (y->mesh != ys[k]->mesh || !sr_layout_same(slice_layout(ys[k]->layout, y->type), y->layout)) {
        SrArray *r = sr_redistribute(cx, y, ys[k]->mesh, slice_layout(ys[k]->layout, y->type));
        sr_array_unref(y);
        res[ncarry + k] = y = r;
        if (!r) {
          rc = -1;
          break;
        }
      }
      for (int p = 0; p < y->ndev; p++) {
        if (!y->shard[p]) continue;
        /* devices that shared a stack but got different slices part */
        int q = 0;
        while (q < p && ys[k]->shard[q] != ys[k]->shard[p]) q++;
        if (q < p && y->shard[q] != y->shard[p]) {
          SrBuffer *c = sr_buffer_copy(ys[k]->shard[p]);
          sr_buffer_unref(ys[k]->shard[p]);
          ys[k]->shard[p] = c;
          q = p;
        }
        if (q < p) continue;
        size_t per = y->shard[p]->nbytes;
        memcpy((char *)ys[k]->shard[p]->data + (size_t)i * per, y->shard[p]->data, per);
      }
    }
    for (uint32_t k = ncarry; k < e->nout; k++) {
      sr_array_unref(res[k]);
      res[k] = NULL;
    }
    if (rc == 0 && cx->I && sr_interrupt_point(cx->I)) rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
  }
  sr_ev_pop(cx);
  if (rc == 0) {
    for (uint32_t k = 0; k < ncarry; k++) e->out[k] = sr_array_retype(args[nconsts + k], e->out_type[k], NULL);
    for (uint32_t k = 0; k < ny; k++) {
      if (!ys[k]) {
        /* length 0: empty stacks */
        const SrType *t = e->out_type[ncarry + k];
        const SrMesh *m = sr_ev_mesh_for(cx, e, t);
        ys[k] = sr_array_new(t, sr_layout_of_type(t), m);
        for (int p = 0; p < ys[k]->ndev; p++) ys[k]->shard[p] = sr_buffer_new(0);
      }
      const SrType *t = e->out_type[ncarry + k];
      e->out[ncarry + k] = sr_redistribute_typed(cx, ys[k], ys[k]->mesh, sr_ev_out_layout(cx, e, ncarry + k, ys[k]->mesh), t);
      if (!e->out[ncarry + k]) rc = -1;
    }
  }
  for (uint32_t i = 0; i < e->nin; i++) sr_array_unref(args[i]);
  for (uint32_t i = 0; i < e->nout; i++) sr_array_unref(res[i]);
  for (uint32_t k = 0; k < nx; k++) sr_array_unref(xs[k]);
  for (uint32_t k = 0; k < ny; k++) sr_array_unref(ys[k]);
  free(args);
  free(res);
  free(xs);
  free(ys);
  return rc;
}

/* ---- predicates ---- */

/* Reads a scalar per device: vals[p] for the positions held here,
   INT64_MIN for the others. */
static void read_scalar(SrArray *a, int64_t *vals, int ndev_out, const SrMesh *m) {
  for (int p = 0; p < ndev_out; p++) {
    SrBuffer *b = a->mesh == m || !a->mesh ? sr_array_buf(a, p) : NULL;
    vals[p] = b ? sr_kern_get_i64(a->type->dtype, b->data) : INT64_MIN;
  }
}

/* ---- while ---- */

static int ev_while(SrEvalCtx *cx, const SrEvalEqn *e) {
  const SrJaxpr *cj = sr_ev_param_jaxpr(e, "cond_jaxpr"), *bj = sr_ev_param_jaxpr(e, "body_jaxpr");
  int64_t cn, bn;
  if (!cj || !bj) return sr_ev_err(cx, "TypeError", "while equation has no cond_jaxpr or body_jaxpr");
  if (sr_ev_param_int(cx, e, "cond_nconsts", &cn) < 0 || sr_ev_param_int(cx, e, "body_nconsts", &bn) < 0) return -1;
  uint32_t nc = e->nin - (uint32_t)cn - (uint32_t)bn;
  if (nc != e->nout || sr_nargs(cj) != cn + nc || sr_nargs(bj) != bn + nc || bj->nout != nc || cj->nout != 1)
    return sr_ev_err(cx, "TypeError", "while: the cond and body jaxprs do not match the equation");
  SrArray **cargs = sr_xcalloc(cn + nc + 1, sizeof *cargs), **bargs = sr_xcalloc(bn + nc + 1, sizeof *bargs);
  SrArray **carry = sr_xcalloc(nc + 1, sizeof *carry), **next = sr_xcalloc(nc + 1, sizeof *next);
  for (uint32_t i = 0; i < nc; i++) carry[i] = sr_array_ref(e->in[cn + bn + i]);
  int rc = 0;
  int64_t *pred = NULL;
  int npred = 0;
  for (;;) {
    for (uint32_t i = 0; i < cn; i++) cargs[i] = e->in[i];
    for (uint32_t i = 0; i < nc; i++) cargs[cn + i] = carry[i];
    SrArray *p = NULL;
    sr_ev_push(cx, "cond");
    rc = sr_ev_jaxpr(cx, cj, cargs, &p);
    sr_ev_pop(cx);
    if (rc < 0) break;
    const SrMesh *m = p->mesh ? p->mesh : nc && carry[0]->mesh ? carry[0]->mesh : NULL;
    int nd = sr_mesh_ndev(m);
    if (nd > npred) {
      free(pred);
      pred = sr_xmalloc((size_t)nd * sizeof *pred);
      npred = nd;
    }
    read_scalar(p, pred, nd, m);
    int local_any = 0, local_stop = 0;
    for (int q = 0; q < nd; q++) {
      local_any |= pred[q] != INT64_MIN && pred[q] != 0;
      local_stop |= pred[q] == 0;
    }
    sr_array_unref(p);
    int go = cx->comm->ops->any(cx->comm, local_any);
    if (go < 0) {
      rc = sr_ev_err(cx, "RuntimeError", "the statement failed on another rank");
      break;
    }
    if (!go) break;
    for (uint32_t i = 0; i < bn; i++) bargs[i] = e->in[cn + i];
    for (uint32_t i = 0; i < nc; i++) bargs[bn + i] = carry[i];
    sr_ev_push(cx, "body");
    rc = sr_ev_jaxpr(cx, bj, bargs, next);
    sr_ev_pop(cx);
    if (rc < 0) break;
    /* Another rank may want more iterations when every device here is
       done, so "the devices here agree" is not enough: only when none of
       them has stopped does the whole body's result go on. */
    for (uint32_t i = 0; i < nc; i++) {
      if (local_stop && !local_any) {
        sr_array_unref(next[i]);
        next[i] = NULL;
        continue;
      }
      if (local_stop && next[i]->mesh == m && carry[i]->mesh == m) {
        /* devices whose predicate was false keep their carry */
        SrArray *sel = sr_array_retype(next[i], next[i]->type, NULL);
        for (int q = 0; q < nd; q++)
          if (pred[q] == 0 && sel->shard[q]) {
            sr_buffer_unref(sel->shard[q]);
            sel->shard[q] = sr_buffer_ref(sr_array_buf(carry[i], q));
          }
        sr_array_unref(next[i]);
        next[i] = sel;
      }
      sr_array_unref(carry[i]);
      carry[i] = next[i];
      next[i] = NULL;
    }
    if (cx->I && sr_interrupt_point(cx->I)) {
      rc = sr_ev_err(cx, "KeyboardInterrupt", "interrupted");
      break;
    }
  }
  if (rc == 0)
    for (uint32_t i = 0; i < nc; i++) e->out[i] = sr_array_retype(carry[i], e->out_type[i], NULL);
  for (uint32_t i = 0; i < nc; i++) {
    sr_array_unref(carry[i]);
    sr_array_unref(next[i]);
  }
  free(cargs);
  free(bargs);
  free(carry);
  free(next);
  free(pred);
  return rc;
}

/* ---- cond ---- */

static int ev_cond(SrEvalCtx *cx, const SrEvalEqn *e) {
  SrVal *br = sr_ev_param(e, "branches");
  if (!br || !sr_is_seq(br) || !br->seq.n) return sr_ev_err(cx, "TypeError", "cond equation has no branches");
  int nb = br->seq.n;
  SrArray *idx = e->in[0];
  const SrMesh *m = NULL;
  for (uint32_t i = 0; i < e->nin && !m; i++) m = e->in[i]->mesh;
  if (!m) m = idx->mesh;
  int nd = sr_mesh_ndev(m);
  int64_t *which = sr_xmalloc((size_t)nd * sizeof *which);
  read_scalar(idx, which, nd, m);
  int64_t first = INT64_MIN;
  int uniform = 1;
  for (int p = 0; p < nd; p++) {
    if (which[p] == INT64_MIN) continue;
    int64_t w = which[p] < 0 ? 0 : which[p] >= nb ? nb - 1 : which[p];
    if (idx->type->dtype == SR_BOOL) w = which[p] != 0;
    which[p] = w;
    if (first == INT64_MIN) first = w;
    else if (w != first) uniform = 0;
  }
  int rc = 0;
  SrArray **results = sr_xcalloc((size_t)nb * e->nout + 1, sizeof *results);
  int ran = 0;
  char name[32];
  for (int b = 0; b < nb && rc == 0; b++) {
    int local = 0;
    for (int p = 0; p < nd; p++) local |= which[p] == b;
    int go = cx->comm->ops->any(cx->comm, local);
    if (go < 0) {
      rc = sr_ev_err(cx, "RuntimeError", "the statement failed on another rank");
      break;
    }
    if (!go) continue;
    SrVal *jv = br->seq.items[b];
    if (jv->kind != SR_V_JAXPR) {
      rc = sr_ev_err(cx, "TypeError", "cond's branch %d is not a jaxpr", b);
      break;
    }
    snprintf(name, sizeof name, "branch_%d", b);
    sr_ev_push(cx, name);
    SrEvalEqn sub = *e;
    sub.out = results + (size_t)b * e->nout;
    rc = call(cx, &sub, jv->jx.jaxpr, e->nin - 1, e->in + 1);
    sr_ev_pop(cx);
    ran++;
  }
  if (rc == 0) {
    for (uint32_t i = 0; i < e->nout && rc == 0; i++) {
      if (uniform || ran == 1) {
        int b = first == INT64_MIN ? 0 : (int)first;
        for (int k = 0; k < nb && !results[(size_t)b * e->nout + i]; k++) b = k;
        e->out[i] = sr_array_ref(results[(size_t)b * e->nout + i]);
        continue;
      }
      /* per device, its own branch's result (in one layout) */
      const SrMesh *om = NULL;
      for (int b = 0; b < nb && !om; b++)
        if (results[(size_t)b * e->nout + i]) om = results[(size_t)b * e->nout + i]->mesh;
      const SrType *l = sr_ev_out_layout(cx, e, i, om);
      SrArray *out = sr_array_new(e->out_type[i], l, om);
      for (int b = 0; b < nb && rc == 0; b++) {
        SrArray *r = results[(size_t)b * e->nout + i];
        if (!r) continue;
        SrArray *rr = sr_redistribute(cx, r, om, l);
        if (!rr) {
          rc = -1;
          break;
        }
        for (int p = 0; p < out->ndev; p++)
          if (which[p] == b && rr->shard[p]) out->shard[p] = sr_buffer_ref(rr->shard[p]);
        sr_array_unref(rr);
      }
      e->out[i] = out;
    }
  }
  for (size_t k = 0; k < (size_t)nb * e->nout; k++) sr_array_unref(results[k]);
  free(results);
  free(which);
  return rc;
}

void sr_eval_rules_control(void) {
  static const int calls[] = {
    SR_P_jit, SR_P_pjit, SR_P_closed_call, SR_P_core_call, SR_P_custom_jvp_call, SR_P_custom_vjp_call,
    SR_P_custom_vjp_call_jaxpr, SR_P_remat, SR_P_checkpoint, SR_P_remat2,
  };
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) sr_set_eval_rule(calls[i], ev_call);
  sr_set_eval_rule(SR_P_optimization_barrier, ev_barrier);
  sr_set_eval_rule(SR_P_scan, ev_scan);
  sr_set_eval_rule(SR_P_while, ev_while);
  sr_set_eval_rule(SR_P_cond, ev_cond);
}
