/* hooks_exec.c: the evaluator as the language reaches it: the hooks of
 * core/trace.h (running primitives on concrete arrays, arrays
 * from host values, printing arrays), the :comm command, and the
 * built-ins of lib/jax/builtins_exec.c. */
#include <stdlib.h>
#include <string.h>

#include "check/rule.h"
#include "exec/eval.h"
#include "lax/lax.h"
#include "exec/exec.h"
#include "exec/kern.h"
#include "exec/numfmt.h"
#include "cmd/commands.h"
#include "cmd/comm_svg.h"
#include "jax/builtins_exec.h"
#include "core/jaxstate.h"
#include "jax/numpy.h"
#include "py/objects.h"
#include "core/trace.h"
#include "util/mem.h"

/* A jaxpr run on zeros of its input types (shardings included): which
   collectives run depends on the types only. */
static int comm_run_jaxpr(SrInterp *I, SrVal *jx) {
  const SrJaxpr *j = jx->jx.jaxpr;
  uint32_t n = sr_nargs(j);
  SrVal **args = sr_xcalloc(n + 1, sizeof *args);
  int rc = 0;
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    const SrType *t = sr_type_with_weak(sr_args(j)[i]->type, 0);
    SrExec *ex = sr_exec(I);
    const SrMesh *m = I->jax->mesh;
    SrArray *a = sr_type_numel(t) >= 0 ? sr_array_new(t, sr_layout_of_type(t), m) : NULL;
    size_t nbytes = a ? sr_array_shard_bytes(a) : 0;
    int ok = a != NULL;
    for (int p = 0; ok && p < a->ndev; p++) {
      if (!sr_comm_local(ex->comm, m, p)) continue;
      ok = (a->shard[p] = sr_buffer_try(nbytes)) != NULL;
      if (ok) memset(a->shard[p]->data, 0, nbytes);
    }
    if (ok) {
      args[i] = sr_array_concrete(a);
    } else {
      if (a) sr_array_unref(a);
      sr_raise(I, "MemoryError", "cannot allocate the zeros of %s", sr_type_short(t));
      rc = -1;
    }
  }
  if (rc == 0) {
    SrArgs ca = {(int)n, args, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, jx, &ca);
    rc = r ? 0 : -1;
    sr_unref(r);
  }
  for (uint32_t i = 0; i < n; i++) sr_unref(args[i]);
  free(args);
  return rc;
}

/* :comm shows the last statement's collectives; :comm EXPR evaluates EXPR
   (a call, typically) and shows the collectives it ran; a jaxpr EXPR runs
   on zeros of its input types (the grammar of the other commands, target.c). */
static int cmd_comm(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  SrCommFig fig = {0};
  if (sr_comm_fig_opts(I, &arg, &off, src, "comm", &fig) < 0) return sr_comm_fig_free(&fig), -1;
  if (*arg) {
    sr_exec_stmt_begin(I);
    SrVal *v = sr_command_eval_arg(I, arg, src, off);
    if (!v) return sr_comm_fig_free(&fig), -1;
    int rc = 0;
    if (v->kind == SR_V_JAXPR) {
      sr_exec_stmt_begin(I);
      rc = comm_run_jaxpr(I, v);
    } else if (sr_is_callable(I, v)) {
      sr_error(&I->py->diags, SR_E_USAGE, src, off,
               ":comm runs a call: give the function its arguments, :comm f(x, y) (or :comm-static f(x, y))");
      rc = -1;
    }
    sr_unref(v);
    if (rc < 0) return sr_comm_fig_free(&fig), -1;
  }
  SrBuf b = SR_BUF_INIT;
  sr_exec_ledger_str(I, &b);
  sr_write(I, b.p, b.len);
  sr_buf_free(&b);
  if (!fig.svg && !fig.html) return 0;
  /* the figure (comm_svg.c): a band per ledger entry */
  SrExec *ex = sr_exec(I);
  fig.mesh = I->jax->mesh;
  fig.ndev = I->jax->num_devices;
  SrBuf t = SR_BUF_INIT;
  sr_buf_printf(&t, ":comm%s%s", *arg ? " " : "", arg);
  fig.title = sr_xstrdup(sr_buf_str(&t));
  sr_buf_free(&t);
  for (int i = 0; i < ex->nledger; i++) {
    const SrLedgerEntry *e = &ex->ledger[i];
    sr_comm_fig_add(&fig, e->kind, e->axes, 0, e->path, NULL, e->bytes, e->count);
  }
  int rc = sr_comm_fig_finish(I, &fig);
  sr_comm_fig_free(&fig);
  return rc;
}

/* ---- hooks ---- */

/* dispatch.apply_primitive runs a primitive as jit(prim_fun)(*args): its
   committed inputs on one device assignment, else pjit's "Received
   incompatible devices" naming the first two that differ (args[i]). */
static int same_devices(const SrArray *a, const SrArray *b) {
  if (a->ndev != b->ndev) return 0;
  for (int p = 0; p < a->ndev; p++)
    if ((a->mesh ? sr_mesh_device(a->mesh, p) : 0) != (b->mesh ? sr_mesh_device(b->mesh, p) : 0)) return 0;
  return 1;
}

static void arg_devices_str(SrInterp *I, SrBuf *b, const SrPrim *prim, int i, const SrArray *a) {
  SrTypeCtx tc;
  SrDiags d = SR_DIAGS_INIT;
  sr_type_ctx(I, &tc, &d);
  sr_buf_printf(b, "argument args[%d] of %s with shape ", i, prim->name);
  sr_aval_str_short(b, &tc, sr_type_strip_sharding(a->type), 0, 0);
  sr_diags_clear(&d);
  sr_buf_puts(b, " and with device ids [");
  for (int p = 0; p < a->ndev; p++) sr_buf_printf(b, "%s%d", p ? ", " : "", a->mesh ? sr_mesh_device(a->mesh, p) : 0);
  sr_buf_puts(b, "] on platform CPU");
}

static int check_eager_devices(SrInterp *I, const SrPrim *prim, int nin, struct SrArray **in) {
  /* with a mesh in context every array is taken to live on it (the
     evaluator keeps some scalars on one device) */
  if (prim->id == SR_P_jit || I->jax->mesh) return 0;
  int first = -1;
  for (int i = 0; i < nin; i++) {
    if (!in[i] || !in[i]->committed) continue;
    if (first < 0) {
      first = i;
      continue;
    }
    if (same_devices(in[first], in[i])) continue;
    SrBuf b = SR_BUF_INIT;
    arg_devices_str(I, &b, prim, first, in[first]);
    sr_buf_puts(&b, " and ");
    arg_devices_str(I, &b, prim, i, in[i]);
    sr_raise(I, "ValueError", "Received incompatible devices for jitted computation. Got %s", b.p);
    sr_buf_free(&b);
    return -1;
  }
  return 0;
}

static int hook_eqn(SrInterp *I, const SrPrim *prim, const SrParam *params, int nparams, int nin, struct SrArray **in,
                    int nout, const SrType *const *out_types, struct SrArray **out, SrDiags *d) {
  if (check_eager_devices(I, prim, nin, in) < 0) return -1;
  SrEvalCtx cx;
  sr_eval_ctx_init(&cx, I, sr_exec(I), d);
  cx.mesh = I->jax->mesh;
  SrEvalEqn e = {prim, params, (uint32_t)nparams, (uint32_t)nin, (uint32_t)nout, in, out_types, out, 0, NULL, 0};
  if (sr_ev_eqn(&cx, &e) < 0) return -1;
  /* an eager operation commits its results as JAX's dispatch does: a
     committed input, a mesh in context, several devices (layout.h) */
  int committed = cx.mesh != NULL;
  for (int i = 0; i < nin && !committed; i++) committed = in[i]->committed;
  /* pxla._get_out_sharding_from_orig_sharding: a result placed as the
     first sharded input (the same mesh and layout) has its sharding as
     that input has it (P('x', 'y', 'z'), not the normalized P(None, 'y')) */
  const SrArray *orig = NULL;
  for (int i = 0; i < nin && !orig; i++)
    if (in[i] && in[i]->mesh && in[i]->mesh->n) orig = in[i];
  if (orig && !sr_mesh_axes_of_type(orig->mesh, SR_AXIS_AUTO)) orig = NULL;
  for (int i = 0; orig && orig->sharding && i < nout; i++)
    if (out[i] && out[i] != orig && out[i]->rc == 1 && !out[i]->sharding && out[i]->mesh == orig->mesh &&
        out[i]->layout == orig->layout)
      out[i]->sharding = sr_ref(orig->sharding);
  for (int i = 0; i < nout; i++) {
    if (out[i]->committed || !(committed || out[i]->ndev > 1)) continue;
    if (out[i]->rc > 1) {
      SrArray *c = sr_array_retype(out[i], out[i]->type, out[i]->layout);
      if (out[i]->sharding) c->sharding = sr_ref(out[i]->sharding);
      sr_array_unref(out[i]);
      out[i] = c;
    }
    out[i]->committed = 1;
  }
  return 0;
}

/* A whole array from host bytes, replicated on mesh m (NULL: meshless);
   only this rank's devices get the buffer. */
static SrArray *place(SrInterp *I, const SrType *t, const SrMesh *m, SrBuffer *b) {
  SrExec *ex = sr_exec(I);
  SrArray *a = sr_array_new(t, sr_layout_of_type(sr_type_strip_sharding(sr_type_with_weak(t, 0))), m);
  for (int p = 0; p < a->ndev; p++)
    if (sr_comm_local(ex->comm, m, p)) a->shard[p] = sr_buffer_ref(b);
  return a;
}

static struct SrArray *hook_from_scalar(SrInterp *I, const SrType *t, double re, double im, int64_t iv) {
  size_t es = sr_elem_size(t->dtype);
  if (!es) {
    sr_raise(I, "NotImplementedError", "shardrepl cannot hold arrays of dtype %s", sr_dtype_name(t->dtype));
    return NULL;
  }
  SrBuffer *b = sr_buffer_new(es);
  sr_kern_set_complex(t->dtype, re, im, iv, b->data);
  SrArray *a = place(I, t, NULL, b);
  sr_buffer_unref(b);
  return a;
}

static struct SrArray *from_host(SrInterp *I, const SrType *t, const double *re, const double *im, const int64_t *iv) {
  size_t es = sr_elem_size(t->dtype);
  if (!es) {
    sr_raise(I, "NotImplementedError", "shardrepl cannot hold arrays of dtype %s", sr_dtype_name(t->dtype));
    return NULL;
  }
  int64_t n = sr_type_numel(t);
  SrBuffer *b = sr_buffer_new((size_t)n * es);
  int isf = sr_dtype_is_inexact(t->dtype) || !iv;
  for (int64_t i = 0; i < n; i++)
    sr_kern_set_complex(t->dtype, re[i], im ? im[i] : 0, isf ? sr_f2i64(re[i]) : iv[i], (char *)b->data + (size_t)i * es);
  SrArray *a = place(I, t, I->jax->mesh, b);
  sr_buffer_unref(b);
  return a;
}

static void hook_unref(struct SrArray *a) { sr_array_unref(a); }
static const SrType *hook_type(struct SrArray *a) { return a->type; }
/* Whether a and b are one array: the same buffers.  A rank that holds
   none of their buffers (an MPI rank without the mesh's devices) cannot
   tell two arrays apart by them: it keeps them apart. */
static int hook_same(SrArray *a, SrArray *b) {
  if (a == b) return 1;
  if (!a || !b || a->ndev != b->ndev) return 0;
  int held = 0;
  for (int i = 0; i < a->ndev; i++) {
    if (a->shard[i] != b->shard[i] && (!a->shard[i] || !b->shard[i] || a->shard[i]->data != b->shard[i]->data))
      return 0;
    held |= a->shard[i] != NULL;
  }
  return held;
}

static const SrMesh *hook_mesh(struct SrArray *a) { return a->mesh; }

/* The whole value on the host (malloc'ed), or NULL with d filled. */
static void *host_copy(SrInterp *I, SrArray *a, SrDiags *d) {
  SrEvalCtx cx;
  sr_eval_ctx_init(&cx, I, sr_exec(I), d);
  cx.mesh = I->jax->mesh;
  sr_ev_push(&cx, "print");
  size_t n = (size_t)sr_type_numel(a->type) * sr_elem_size(a->type->dtype);
  void *h = sr_xmalloc(n ? n : 1);
  if (sr_array_to_host(&cx, a, h) < 0) {
    free(h);
    return NULL;
  }
  return h;
}

static int is_key(SrDtype dt) {
  const char *n = sr_dtype_name(dt);
  return strncmp(n, "key<", 4) == 0;
}

static void shape_str(SrBuf *out, const SrType *t) {
  sr_buf_putc(out, '(');
  for (int i = 0; i < t->ndim; i++) sr_buf_printf(out, i ? ", %lld" : "%lld", (long long)t->dims[i].size);
  if (t->ndim == 1) sr_buf_putc(out, ',');
  sr_buf_putc(out, ')');
}

/* An array whose values could not be copied to the host (another rank's
   failure, arrays that differ between ranks) prints a placeholder, and the
   print raises the error (sr_to_str sees the exception). */
static void copy_failed(SrInterp *I, SrBuf *out, SrDiags *d) {
  sr_buf_puts(out, "<array: ");
  if (d->first) sr_buf_puts(out, d->first->msg);
  sr_buf_putc(out, '>');
  if (I && !I->exc) sr_raise_diags(I, d, "RuntimeError");
  sr_diags_clear(d);
}

static void hook_repr(SrInterp *I, SrBuf *out, struct SrArray *a, int weak) {
  const SrType *t = a->type;
  if (a->layout->unreduced) {
    /* ArrayImpl.__repr__ of an unreduced array: no values */
    sr_buf_puts(out, "Array(shape=");
    shape_str(out, t);
    sr_buf_printf(out, ", dtype=%s%s, sharding=", sr_dtype_name(t->dtype), weak ? ", weak_type=True" : "");
    sr_concrete_sharding_str(I, out, a);
    sr_buf_putc(out, ')');
    return;
  }
  SrDiags d = SR_DIAGS_INIT;
  void *h = host_copy(I, a, &d);
  if (!h) {
    copy_failed(I, out, &d);
    return;
  }
  int64_t shape[SR_MAX_RANK + 1];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  if (is_key(t->dtype)) {
    /* Array((), dtype=key<fry>) overlaying:\n[0 0] */
    sr_buf_puts(out, "Array(");
    shape_str(out, t);
    sr_buf_printf(out, ", dtype=%s) overlaying:\n", sr_dtype_name(t->dtype));
    shape[t->ndim] = (int64_t)(sr_elem_size(t->dtype) / 4); /* the key's uint32 words */
    sr_numfmt_str(out, SR_U32, t->ndim + 1, shape, h);
  } else {
    sr_numfmt_repr(out, t->dtype, t->ndim, shape, h, weak);
  }
  free(h);
}

static void hook_str(SrInterp *I, SrBuf *out, struct SrArray *a) {
  const SrType *t = a->type;
  if (a->layout->unreduced || is_key(t->dtype)) {
    hook_repr(I, out, a, t->weak);
    return;
  }
  SrDiags d = SR_DIAGS_INIT;
  void *h = host_copy(I, a, &d);
  if (!h) {
    copy_failed(I, out, &d);
    return;
  }
  int64_t shape[SR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->dims[i].size;
  sr_numfmt_str(out, t->dtype, t->ndim, shape, h);
  free(h);
}

static SrVal *hook_item(SrInterp *I, struct SrArray *a) {
  const SrType *t = a->type;
  if (sr_type_numel(t) != 1)
    return sr_raise(I, "ValueError", "can only convert an array of size 1 to a Python scalar");
  if (is_key(t->dtype) || !sr_elem_size(t->dtype))
    return sr_raise(I, "TypeError", "cannot convert an array of dtype %s to a Python scalar", sr_dtype_name(t->dtype));
  SrDiags d = SR_DIAGS_INIT;
  void *h = host_copy(I, a, &d);
  if (!h) return sr_raise_diags(I, &d, "RuntimeError");
  SrVal *r;
  if (t->dtype == SR_BOOL) r = sr_bool(*(uint8_t *)h != 0);
  else if (t->dtype == SR_C64) r = sr_complex(NULL, ((float *)h)[0], ((float *)h)[1]);
  else if (t->dtype == SR_C128) r = sr_complex(NULL, ((double *)h)[0], ((double *)h)[1]);
  else if (sr_dtype_is_float(t->dtype)) r = sr_float(NULL, sr_kern_get_f64(t->dtype, h));
  else if (t->dtype == SR_U64) r = sr_int(NULL, (int64_t) * (uint64_t *)h);
  else r = sr_int(NULL, sr_kern_get_i64(t->dtype, h));
  free(h);
  return r;
}

int sr_hooks_exec_init(SrInterp *I) {
  sr_lax_init();
  sr_backend_hooks.eqn = hook_eqn;
  sr_backend_hooks.from_scalar = hook_from_scalar;
  sr_backend_hooks.array_unref = hook_unref;
  sr_backend_hooks.array_repr = hook_repr;
  sr_backend_hooks.array_str = hook_str;
  sr_backend_hooks.array_item = hook_item;
  sr_backend_hooks.array_type = hook_type;
  sr_backend_hooks.array_mesh = hook_mesh;
  sr_backend_hooks.array_same = hook_same;
  sr_backend_hooks.from_host = from_host;
  static int once;
  if (!once) {
    once = 1;
    SrCommand c = {"comm", NULL, "[EXPR]",
                   "show the collectives the last statement ran, or EXPR runs now (kind, axes, bytes, count, where); "
                   ":comm --svg FILE [EXPR] (or --html FILE) also draws them",
                   cmd_comm};
    sr_command_add(&c);
    sr_builtins_exec_init();
  }
  (void)I;
  return 0;
}
