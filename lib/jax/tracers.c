/* tracers.c: how the values traced by jax.grad, jax.jvp and jax.vmap
 * print, as the _short_repr of JAX's Tracer subclasses:
 *
 *   GradTracer(primal=1.0, typeof(tangent)=f32[])     ad.LinearizeTracer
 *   JVPTracer(primal=1.0, tangent=1.0)                 ad.JVPTracer
 *   VmapTracer(aval=float32[], batched=float32[3])     batching.BatchTracer
 *
 * (every other trace's tracers print as DynamicJaxprTracer's
 * JitTracer(float32[3]), core/trace.c).  shardrepl traces each of these
 * functions to a jaxpr first, on its arguments' types, and transforms the
 * jaxpr afterwards; so a tracer's primal (and tangent) is computed when it
 * is printed, from the equations traced so far that it needs
 * (sr_trace_snapshot), on the values the function was called with: run
 * with no trace when the call is eager (the primal of an eager grad is a
 * concrete array in JAX too), and named by the enclosing trace's tracer
 * when there is one.  A value that depends on no differentiated (mapped)
 * input is no tracer of the transformation in JAX: it prints as what it
 * is, the concrete value or the enclosing trace's tracer.
 */
#include <stdlib.h>
#include <string.h>

#include "ad/ad.h"
#include "ad/batch.h"
#include "core/trace.h"
#include "jax/jax.h"
#include "jax/lax.h"
#include "core/jaxstate.h"
#include "py/objects.h"
#include "jax/tree_util.h"
#include "text/print.h"
#include "text/print_val.h"
#include "jax/tracers.h"
#include "util/intern.h"

/* The data of a trace: (kind, leaves, per-leaf info, size, axis name).
   kind: 0 grad (info: True for a differentiated leaf; size: 1 where the
   leaves are an eager call's values, whose own trace encloses this one),
   1 jvp (info: the tangent or None), 2 vmap (info: the batch dim or
   None). */
enum { K_GRAD, K_JVP, K_VMAP, K_SMAP, K_CUSTOM };

static SrVal *dget(const SrTrace *t, int i) { return t->repr_data->seq.items[i]; }

const char *sr_tracers_class_name(const SrVal *x) {
  SrArrayObj *o = sr_array_of(x);
  const SrTrace *t = o && o->kind == SR_AV_TRACER ? o->trace : NULL;
  int kind = t && t->repr_data && t->repr_data->kind == SR_V_TUPLE && t->repr_data->seq.n ? (int)dget(t, 0)->i : -1;
  switch (kind) {
  case K_GRAD: return "jax._src.interpreters.ad.LinearizeTracer";
  case K_JVP: return "jax._src.interpreters.ad.JVPTracer";
  case K_VMAP: return "jax._src.interpreters.batching.BatchTracer";
  case K_SMAP: return "jax._src.shard_map.ShardMapTracer";
  default: return "jax._src.interpreters.partial_eval.DynamicJaxprTracer";
  }
}

/* The trace whose tracers name t's primals: none for an eager call. */
static SrTrace *outer(const SrTrace *t) {
  return dget(t, 0)->i == K_GRAD && dget(t, 3)->i ? NULL : t->parent;
}

/* The inputs of a snapshot: the trace's captured values, then the leaves
   (abstract values of their types where a leaf is NULL or None). */
static SrVal **snapshot_inputs(SrTrace *t, const SrJaxpr *j, SrVal *leaves, int abstract_mapped) {
  SrVal **in = sr_xcalloc(j->nin + 1, sizeof *in);
  for (int i = 0; i < t->ncaptured; i++) in[i] = sr_ref(t->captured[i]);
  SrVal *info = dget(t, 2);
  for (uint32_t i = (uint32_t)t->ncaptured; i < j->nin; i++) {
    int k = (int)i - t->ncaptured;
    if (abstract_mapped && info->seq.items[k]->kind != SR_V_NONE)
      in[i] = sr_array_abstract(j->invars[i]->type);
    else
      in[i] = sr_ref(leaves->seq.items[k]);
  }
  return in;
}

static void free_inputs(SrVal **in, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) sr_unref(in[i]);
  free(in);
}

/* Runs j with no trace on in (an eager call's values); NULL (no
   exception left) when it cannot. */
static SrVal *run_eager(SrInterp *I, const SrJaxpr *j, SrVal **in) {
  SrTrace *saved = I->trace;
  I->trace = NULL;
  SrVal *r = sr_eval_jaxpr(I, j, (int)sr_nargs(j), in);
  I->trace = saved;
  if (!r) {
    sr_exc_clear(I);
    return NULL;
  }
  SrVal *v = sr_array_concretize(I, r->seq.items[0]);
  sr_unref(r);
  return v;
}

/* What a value of trace t that is no tracer of t's transformation prints
   as: the enclosing trace's tracer, or (eager) its value. */
static void plain_text(SrInterp *I, SrTrace *t, const SrType *type, SrVal *val, SrBuf *out) {
  if (outer(t) || !val) sr_tracer_repr(I, outer(t), NULL, type, out);
  else sr_val_str(out, val);
}

/* Which vars of j depend on the inputs flagged in in_dep (by var id). */
static uint8_t *depends(const SrJaxpr *j, const uint8_t *in_dep) {
  uint8_t *dep = sr_xcalloc(j->nvars + 1, 1);
  for (uint32_t i = 0; i < j->nin; i++) dep[j->invars[i]->id] = in_dep[i];
  for (uint32_t k = 0; k < j->neqn; k++) {
    const SrEqn *e = &j->eqns[k];
    int d = 0;
    for (uint32_t i = 0; i < e->nin && !d; i++) d = e->in[i]->kind == SR_VAR && dep[e->in[i]->id];
    for (uint32_t i = 0; i < e->nout; i++)
      if (e->out[i]->kind == SR_VAR) dep[e->out[i]->id] = (uint8_t)d;
  }
  return dep;
}

static int var_depends(SrTrace *t, const SrJaxpr *j, SrVar *v) {
  SrVal *info = dget(t, 2);
  uint8_t *in_dep = sr_xcalloc(j->nin + 1, 1);
  for (uint32_t i = (uint32_t)t->ncaptured; i < j->nin; i++) {
    SrVal *x = info->seq.items[i - (uint32_t)t->ncaptured];
    in_dep[i] = x->kind == SR_V_BOOL ? (uint8_t)x->i : x->kind != SR_V_NONE;
  }
  uint8_t *dep = depends(j, in_dep);
  int r = v->kind == SR_VAR && dep[v->id];
  free(dep);
  free(in_dep);
  return r;
}

static void grad_repr(SrInterp *I, SrTrace *t, SrVar *v, const SrType *type, SrBuf *out) {
  SrVal *val = NULL;
  if (v) {
    SrJaxpr *j = sr_trace_snapshot(t, v);
    int dep = var_depends(t, j, v);
    if (!outer(t) && !I->exc) {
      SrVal **in = snapshot_inputs(t, j, dget(t, 1), 0);
      val = run_eager(I, j, in);
      free_inputs(in, j->nin);
    }
    if (!dep) {
      plain_text(I, t, type, val, out);
      sr_unref(val);
      return;
    }
  }
  /* ad.py: LinearizeTracer._short_repr */
  sr_buf_puts(out, "GradTracer(primal=");
  plain_text(I, t, type, val, out);
  sr_buf_puts(out, ", typeof(tangent)=");
  sr_type_str(out, sr_type_with_weak(sr_ad_tangent_type(type), 0), 1);
  sr_buf_putc(out, ')');
  sr_unref(val);
}

static void jvp_repr(SrInterp *I, SrTrace *t, SrVar *v, const SrType *type, SrBuf *out) {
  const SrType *tt = sr_ad_tangent_type(type);
  SrVal *pv = NULL, *tv = NULL;
  if (v) {
    SrJaxpr *j = sr_trace_snapshot(t, v);
    int dep = var_depends(t, j, v);
    if (outer(t) && !I->exc) {
      /* inside another trace, a primal computed from concrete values
         only (jacfwd's closed-over point, under its vmap) is one too */
      SrVal **in = snapshot_inputs(t, j, dget(t, 1), 0);
      int concrete = 1;
      for (uint32_t i = 0; i < j->nin && concrete; i++) concrete = sr_tracers_is_concrete(in[i]);
      if (concrete) pv = run_eager(I, j, in);
      free_inputs(in, j->nin);
    } else if (!I->exc) {
      SrVal **in = snapshot_inputs(t, j, dget(t, 1), 0);
      SrVal **tan = sr_xcalloc(j->nin + 1, sizeof *tan);
      SrVal *info = dget(t, 2);
      for (uint32_t i = (uint32_t)t->ncaptured; i < j->nin; i++) {
        SrVal *x = info->seq.items[i - (uint32_t)t->ncaptured];
        tan[i] = x->kind == SR_V_NONE ? NULL : x;
      }
      SrTrace *saved = I->trace;
      I->trace = NULL;
      SrVal *o = NULL, *to = NULL;
      if (sr_ad_jvp(I, j, in, tan, &o, &to) == 0) {
        pv = sr_array_concretize(I, o);
        tv = to ? sr_array_concretize(I, to) : NULL;
      } else {
        sr_exc_clear(I);
      }
      I->trace = saved;
      sr_unref(o);
      sr_unref(to);
      free(tan);
      free_inputs(in, j->nin);
    }
    if (!dep) {
      if (pv) sr_val_str(out, pv);
      else plain_text(I, t, type, pv, out);
      sr_unref(pv);
      sr_unref(tv);
      return;
    }
  }
  /* ad.py: JVPTracer._short_repr */
  sr_buf_puts(out, "JVPTracer(primal=");
  if (pv) sr_val_str(out, pv);
  else plain_text(I, t, type, pv, out);
  sr_buf_puts(out, ", tangent=");
  if (tv || outer(t) || !pv) {
    /* (a tangent inside another trace is that trace's tracer) */
    plain_text(I, t, tt, tv, out);
  } else {
    /* ad_util.py: Zero.__repr__ */
    sr_buf_puts(out, "Zero(");
    sr_type_long(out, sr_type_with_weak(tt, 0));
    sr_buf_putc(out, ')');
  }
  sr_buf_putc(out, ')');
  sr_unref(pv);
  sr_unref(tv);
}

/* The snapshot j of a vmap's trace t, batched over the vmap's in_axes
   (*oax: where the output's batch axis went), or NULL with no exception
   where it does not batch. */
static SrJaxpr *batch_snapshot(SrInterp *I, SrTrace *t, SrJaxpr *j, int *oax) {
  SrVal *info = dget(t, 2);
  int *in_axes = sr_xcalloc(j->nin + 1, sizeof *in_axes);
  for (uint32_t i = 0; i < j->nin; i++) {
    SrVal *x = i < (uint32_t)t->ncaptured ? NULL : info->seq.items[i - (uint32_t)t->ncaptured];
    in_axes[i] = !x || x->kind == SR_V_NONE ? SR_NOT_MAPPED : (int)x->i;
  }
  SrBatch b;
  SrVal *name = dget(t, 4);
  sr_batch_begin(&b, I, dget(t, 3)->i, name->kind == SR_V_STR ? sr_intern(name->str.s, name->str.n) : NULL);
  *oax = SR_NOT_MAPPED;
  SrJaxpr *bj = sr_batch_jaxpr_axes(&b, j, in_axes, NULL, oax);
  sr_batch_end(&b);
  free(in_axes);
  if (!bj) sr_exc_clear(I);
  return bj;
}

static void vmap_repr(SrInterp *I, SrTrace *t, SrVar *v, const SrType *type, SrBuf *out) {
  int64_t size = dget(t, 3)->i;
  const SrType *batched = NULL;
  SrVal *val = NULL;
  /* (nothing is computed while an exception is pending) */
  if (v && !I->exc) {
    SrJaxpr *j = sr_trace_snapshot(t, v);
    int oax;
    SrJaxpr *bj = batch_snapshot(I, t, j, &oax);
    if (bj) {
      if (oax != SR_NOT_MAPPED) batched = bj->outvars[0]->type;
      sr_program_unref(bj->prog);
    }
    if (bj && oax == SR_NOT_MAPPED) {
      /* no BatchTracer in JAX: the value itself */
      if (!outer(t) && !I->exc) {
        SrVal **in = snapshot_inputs(t, j, dget(t, 1), 1);
        val = run_eager(I, j, in);
        free_inputs(in, j->nin);
      }
      plain_text(I, t, type, val, out);
      sr_unref(val);
      return;
    }
  }
  /* batching.py: BatchTracer._short_repr */
  sr_buf_puts(out, "VmapTracer(aval=");
  sr_type_long(out, type);
  sr_buf_puts(out, ", batched=");
  if (batched) {
    sr_type_long(out, batched);
  } else {
    /* the batch axis first, where batch_jaxpr leaves none */
    SrBuf s = SR_BUF_INIT;
    sr_type_long(&s, type);
    char *br = strchr(s.p, '[');
    if (br) {
      sr_buf_putn(out, s.p, (size_t)(br - s.p + 1));
      sr_buf_printf(out, "%lld%s%s", (long long)size, br[1] == ']' ? "" : ",", br + 1);
    } else {
      sr_buf_puts(out, s.p);
    }
    sr_buf_free(&s);
  }
  sr_buf_putc(out, ')');
}

/* The tracers of a custom_jvp or custom_vjp function (or rule) traced
   inside another transformation print as that one's (JAX runs the
   function under it); their values are known where the enclosing ones'
   are (primal_value). */
static SrVal *primal_value(SrInterp *I, SrTrace *t, SrVar *v);
static void custom_repr(SrInterp *I, SrTrace *t, SrVar *v, const SrType *type, SrBuf *out) {
  SrVal *val = v && !I->exc ? primal_value(I, t, v) : NULL;
  if (val) sr_val_str(out, val);
  else sr_tracer_repr(I, t->parent, NULL, type, out);
  sr_unref(val);
}

/* The leaves of the arguments, flattened as sr_trace_fn flattens them;
   NULL on an error (raised). */
static SrVal *arg_leaves(SrInterp *I, int nargs, SrVal **args, int *starts) {
  SrVal *leaves = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < nargs; i++) {
    if (starts) starts[i] = leaves->seq.n;
    SrVal *l = sr_pytree_flatten(I, args[i]);
    if (!l) {
      sr_unref(leaves);
      return NULL;
    }
    for (int k = 0; k < l->seq.n; k++) sr_seq_push(NULL, leaves, sr_ref(l->seq.items[k]));
    sr_unref(l);
  }
  if (starts) starts[nargs] = leaves->seq.n;
  return leaves;
}

static void set_next(SrInterp *I, SrTracerReprFn fn, int kind, SrVal *leaves, SrVal *info, int64_t size,
                     const char *axis_name) {
  SrVal *d = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, d, sr_int(NULL, kind));
  sr_seq_push(NULL, d, leaves);
  sr_seq_push(NULL, d, info);
  sr_seq_push(NULL, d, sr_int(NULL, size));
  sr_seq_push(NULL, d, axis_name ? sr_str(NULL, axis_name, strlen(axis_name)) : sr_none());
  sr_trace_next_repr(I, fn, d);
  const char *cls = kind == K_GRAD ? "LinearizeTracer" : kind == K_JVP ? "JVPTracer" : "BatchTracer";
  if (kind == K_CUSTOM && I->trace && I->trace->origin) {
    /* the class of the trace the function runs under */
    const char *o = I->trace->origin, *tab = strchr(o, '\t');
    cls = tab ? sr_intern(o, (size_t)(tab - o)) : o;
  }
  sr_trace_next_class(I, cls);
}

void sr_tracers_grad_next(SrInterp *I, int nargs, SrVal **args, const uint8_t *arg_diff, int eager) {
  int *starts = sr_xcalloc((size_t)nargs + 1, sizeof *starts);
  SrVal *leaves = arg_leaves(I, nargs, args, starts);
  if (!leaves) {
    sr_exc_clear(I);
    free(starts);
    return;
  }
  SrVal *info = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < nargs; i++)
    for (int k = starts[i]; k < starts[i + 1]; k++) sr_seq_push(NULL, info, sr_bool(!arg_diff || arg_diff[i]));
  free(starts);
  set_next(I, grad_repr, K_GRAD, leaves, info, eager, NULL);
}

void sr_tracers_jvp_next(SrInterp *I, int nargs, SrVal **args, SrVal *tangent_leaves) {
  SrVal *leaves = arg_leaves(I, nargs, args, NULL);
  if (!leaves || tangent_leaves->seq.n != leaves->seq.n) {
    sr_exc_clear(I);
    sr_unref(leaves);
    return;
  }
  SrVal *info = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < tangent_leaves->seq.n; i++) {
    SrVal *x = tangent_leaves->seq.items[i];
    const SrType *tt = sr_value_type(I, x);
    sr_seq_push(NULL, info, !tt || sr_dtype_kind(tt->dtype) == SR_DK_FLOAT0 ? sr_none() : sr_ref(x));
  }
  set_next(I, jvp_repr, K_JVP, leaves, info, 0, NULL);
}

void sr_tracers_custom_next(SrInterp *I, int nargs, SrVal **args) {
  SrVal *leaves = arg_leaves(I, nargs, args, NULL);
  if (!leaves) {
    sr_exc_clear(I);
    return;
  }
  SrVal *info = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < leaves->seq.n; i++) sr_seq_push(NULL, info, sr_bool(1));
  set_next(I, custom_repr, K_CUSTOM, leaves, info, 0, NULL);
}

void sr_tracers_vmap_next(SrInterp *I, int64_t size, const char *axis_name, SrVal *leaves, const int *in_bd) {
  SrVal *info = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < leaves->seq.n; i++)
    sr_seq_push(NULL, info, in_bd[i] == SR_NOT_MAPPED ? sr_none() : sr_int(NULL, in_bd[i]));
  set_next(I, vmap_repr, K_VMAP, sr_ref(leaves), info, size, axis_name);
}

/* ---- shard_map called outside jit ----
 *
 * shard_map.py's ShardMapTracer.__str__: each device's block under
 *   On TFRT_CPU_0 at mesh coordinates (x,) = (0,):
 * (the value made varying over every axis, so that each device holds its
 * own block).  The block of v on every device is the body so far run as a
 * shard_map of its own, whose output, made varying so, stacks the blocks
 * (a new leading axis split over all the mesh's axes).  Only a shard_map with every axis manual prints
 * so; in others (and under a trace) a tracer prints as JitTracer. */

typedef struct {
  SrJaxpr *j;
  const SrMesh *m;
} BlockBody;

/* The body so far, its value made varying over every axis (pvary) and
   given a leading axis of 1 (expand_dims). */
static SrVal *block_body(SrInterp *I, SrArgs *a) {
  BlockBody *bb = sr_current_builtin(I)->data;
  SrVal *r = sr_eval_jaxpr(I, bb->j, a->n, a->v);
  if (!r) return NULL;
  SrVal *x = sr_ref(r->seq.items[0]);
  sr_unref(r);
  const SrType *t = sr_value_type(I, x);
  SrVal *names = sr_seq(NULL, SR_V_TUPLE, 0);
  for (int i = 0; t && i < bb->m->n; i++)
    if (!(t->varying & (1u << i))) sr_seq_push(NULL, names, sr_str_cstr(NULL, bb->m->names[i]));
  if (names->seq.n) {
    SrVal *pv = sr_lookup_qualname("jax.lax.pvary");
    SrVal *args[2] = {x, names};
    SrArgs pa = {2, args, 0, NULL, NULL, NULL};
    SrVal *y = pv ? sr_call(I, pv, &pa) : NULL;
    sr_unref(x);
    x = y;
  }
  sr_unref(names);
  if (!x) return NULL;
  SrVal *fn = sr_lookup_qualname("jax.numpy.expand_dims");
  SrVal *args[2] = {x, sr_int(NULL, 0)};
  SrArgs ea = {2, args, 0, NULL, NULL, NULL};
  SrVal *e = fn ? sr_call(I, fn, &ea) : NULL;
  sr_unref(args[1]);
  sr_unref(x);
  return e;
}

/* Each device's block of v, stacked (a concrete array), or NULL. */
static SrVal *device_blocks(SrInterp *I, SrTrace *t, SrVar *v, const SrMesh *m) {
  SrJaxpr *j = sr_trace_snapshot(t, v);
  SrVal *leaves = dget(t, 1), *specs = dget(t, 2);
  int nc = t->ncaptured, n = nc + leaves->seq.n;
  SrVal *in_specs = sr_seq(NULL, SR_V_TUPLE, n), *args = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < nc; i++) {
    sr_seq_push(NULL, in_specs, sr_spec_val(NULL, &(SrSpec){0}));
    sr_seq_push(NULL, args, sr_ref(t->captured[i]));
  }
  for (int i = 0; i < leaves->seq.n; i++) {
    sr_seq_push(NULL, in_specs, sr_ref(specs->seq.items[i]));
    sr_seq_push(NULL, args, sr_ref(leaves->seq.items[i]));
  }
  SrSpecEntry all = {m->n, (const char **)m->names};
  SrVal *out_spec = sr_spec_val(NULL, &(SrSpec){.n = 1, .e = &all});
  BlockBody *bb = sr_xcalloc(1, sizeof *bb);
  bb->j = j;
  bb->m = m;
  SrVal *body = sr_builtin_with("block", block_body, bb, free);
  SrVal *smap = sr_lookup_qualname("jax.shard_map"), *r = NULL;
  SrTrace *saved = I->trace;
  I->trace = NULL;
  int saved_vma = I->jax->check_vma;
  if (smap && sr_api_push_mesh(I, sr_mesh_abstract(m, 1)) == 0) {
    const char *kw[4] = {sr_intern_cstr("mesh"), sr_intern_cstr("in_specs"), sr_intern_cstr("out_specs"),
                         sr_intern_cstr("check_vma")};
    SrVal *mv = sr_mesh_val(NULL, m);
    SrVal *kwv[4] = {mv, in_specs, out_spec, sr_bool(1)};
    SrArgs sa = {1, &body, 4, kw, kwv, NULL};
    SrVal *f = sr_call(I, smap, &sa);
    if (f) {
      SrArgs ca = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
      r = sr_call(I, f, &ca);
    }
    sr_unref(f);
    sr_unref(mv);
    sr_api_pop_mesh(I);
  }
  I->jax->check_vma = saved_vma;
  I->trace = saved;
  if (!r) sr_exc_clear(I);
  sr_unref(body);
  sr_unref(out_spec);
  sr_unref(in_specs);
  sr_unref(args);
  SrArrayObj *ro = r ? sr_array_of(r) : NULL;
  if (!ro || ro->kind != SR_AV_CONCRETE) {
    sr_unref(r);
    return NULL;
  }
  return r;
}

static void smap_repr(SrInterp *I, SrTrace *t, SrVar *v, const SrType *type, SrBuf *out) {
  SrVal *mv = dget(t, 5);
  const SrMesh *m = mv->kind == SR_V_MESH ? mv->mesh : NULL;
  SrVal *blocks = v && !I->exc && !t->parent && m && !m->abstract ? device_blocks(I, t, v, m) : NULL;
  if (!blocks) {
    sr_tracer_repr(I, NULL, v, type, out);
    return;
  }
  int64_t ndev = 1;
  for (int i = 0; i < m->n; i++) ndev *= m->sizes[i];
  SrBuf text = SR_BUF_INIT;
  SrTrace *saved = I->trace;
  I->trace = NULL;
  int64_t k = 0;
  for (; k < ndev; k++) {
    SrVal *b = sr_getindex(I, blocks, k);
    if (!b) {
      sr_exc_clear(I);
      break;
    }
    if (k) sr_buf_putc(&text, '\n');
    sr_buf_printf(&text, "On TFRT_CPU_%d at mesh coordinates (", m->devices ? m->devices[k] : (int)k);
    for (int i = 0; i < m->n; i++) sr_buf_printf(&text, "%s, ", m->names[i]);
    text.len -= 2;
    text.p[text.len] = 0;
    sr_buf_puts(&text, ",) = (");
    /* np.ndenumerate's index: k row-major over the mesh's shape */
    int64_t rest = k, idx[SR_MAX_AXES];
    for (int i = m->n - 1; i >= 0; i--) {
      idx[i] = rest % m->sizes[i];
      rest /= m->sizes[i];
    }
    for (int i = 0; i < m->n; i++)
      sr_buf_printf(&text, m->n == 1 ? "%lld," : i ? ", %lld" : "%lld", (long long)idx[i]);
    sr_buf_puts(&text, "):\n");
    sr_val_str(&text, b);
    sr_buf_putc(&text, '\n');
    sr_unref(b);
  }
  I->trace = saved;
  sr_unref(blocks);
  if (k == ndev) sr_buf_puts(out, text.p);
  else sr_tracer_repr(I, NULL, v, type, out);
  sr_buf_free(&text);
}

int sr_tracers_in_eager_smap(SrInterp *I) {
  return I->trace && I->trace->repr == smap_repr && !I->trace->parent;
}

int sr_tracers_is_live(SrInterp *I, const SrVal *x) {
  const SrArrayObj *a = sr_array_of(x);
  return a && a->kind == SR_AV_TRACER && a->trace && sr_trace_is_live(I, a->trace, a->trace_id);
}

int sr_tracers_is_ad(SrInterp *I, const SrVal *x) {
  const SrArrayObj *a = sr_array_of(x);
  if (!a || a->kind != SR_AV_TRACER || !a->trace || !a->var || !sr_trace_is_live(I, a->trace, a->trace_id)) return 0;
  if (a->trace->repr != grad_repr && a->trace->repr != jvp_repr) return 0;
  /* one that depends on no differentiated input is no tracer in JAX */
  SrJaxpr *j = sr_trace_snapshot(a->trace, a->var);
  return var_depends(a->trace, j, a->var);
}

/* batching.py: BatchTracer.val, the batch of values an eager vmap's
   tracer x stands for (its batch axis where the batched rules put it):
   the body so far, batched, run on the call's values; NULL (no exception)
   for no such tracer, or inside another trace. */
SrVal *sr_tracers_vmap_val(SrInterp *I, SrVal *x) {
  SrArrayObj *a = sr_array_of(x);
  if (!a || a->kind != SR_AV_TRACER || !a->trace || !a->var || I->exc) return NULL;
  SrTrace *t = a->trace;
  if (!sr_trace_is_live(I, t, a->trace_id) || t->repr != vmap_repr || outer(t)) return NULL;
  SrJaxpr *j = sr_trace_snapshot(t, a->var);
  if (!var_depends(t, j, a->var)) return NULL;
  int oax;
  SrJaxpr *bj = batch_snapshot(I, t, j, &oax);
  if (!bj) return NULL;
  SrVal **in = snapshot_inputs(t, bj, dget(t, 1), 0);
  SrVal *val = run_eager(I, bj, in);
  free_inputs(in, bj->nin);
  sr_program_unref(bj->prog);
  return val;
}

int sr_tracers_is_concrete(const SrVal *x) {
  const SrArrayObj *a = sr_array_of(x);
  return a ? a->kind == SR_AV_CONCRETE : x->kind == SR_V_INT || x->kind == SR_V_FLOAT || x->kind == SR_V_BOOL;
}

/* The primal of v, a var of a grad's or jvp's trace t, where the values
   it is computed from are concrete: an eager call's, or a jvp's closed
   over primals under the vmap of jax.jacfwd. */
static SrVal *snapshot_value(SrInterp *I, SrTrace *t, SrVar *v, SrJaxpr *j, int abstract_mapped);

static SrVal *primal_value(SrInterp *I, SrTrace *t, SrVar *v) {
  return snapshot_value(I, t, v, sr_trace_snapshot(t, v), 0);
}

/* v's value from the snapshot j of its trace t (a vmap's mapped inputs
   abstract, which v must not read) */
static SrVal *snapshot_value(SrInterp *I, SrTrace *t, SrVar *v, SrJaxpr *j, int abstract_mapped) {
  (void)v;
  SrVal **in = snapshot_inputs(t, j, dget(t, 1), abstract_mapped);
  /* only the inputs the snapshot reads need values */
  uint8_t *used = sr_xcalloc(j->nvars + 1, 1);
  for (uint32_t k = 0; k < j->neqn; k++)
    for (uint32_t i = 0; i < j->eqns[k].nin; i++)
      if (j->eqns[k].in[i]->kind == SR_VAR) used[j->eqns[k].in[i]->id] = 1;
  for (uint32_t i = 0; i < j->nout; i++)
    if (j->outvars[i]->kind == SR_VAR) used[j->outvars[i]->id] = 1;
  int ok = 1;
  for (uint32_t i = 0; i < j->nin && ok; i++) {
    if (sr_tracers_is_concrete(in[i])) continue;
    if (!used[j->invars[i]->id]) {
      sr_unref(in[i]);
      in[i] = sr_array_abstract(j->invars[i]->type);
      continue;
    }
    /* a tracer of an enclosing grad or jvp whose own primal is concrete
       (jax.hessian: jacrev's vjp on jacfwd's jvp tracers) */
    SrVal *c = sr_tracers_value(I, in[i]);
    ok = c != NULL;
    if (c) {
      sr_unref(in[i]);
      in[i] = c;
    }
  }
  free(used);
  SrVal *val = ok ? run_eager(I, j, in) : NULL;
  free_inputs(in, j->nin);
  return val;
}

SrVal *sr_tracers_value(SrInterp *I, SrVal *x) {
  SrArrayObj *a = sr_array_of(x);
  if (!a || a->kind != SR_AV_TRACER || !a->trace || !a->var || I->exc) return NULL;
  if (!sr_trace_is_live(I, a->trace, a->trace_id)) return NULL;
  if (a->trace->repr == grad_repr || a->trace->repr == jvp_repr || a->trace->repr == custom_repr)
    return primal_value(I, a->trace, a->var);
  if (a->trace->repr == vmap_repr) {
    /* a value no mapped input reaches is no BatchTracer in JAX: the value
       itself, where the values it is computed from are known */
    SrJaxpr *j = sr_trace_snapshot(a->trace, a->var);
    if (var_depends(a->trace, j, a->var)) return NULL;
    return snapshot_value(I, a->trace, a->var, j, 1);
  }
  if (a->trace->repr != smap_repr || a->trace->parent) return NULL;
  SrTrace *t = a->trace;
  SrVal *mv = dget(t, 5);
  const SrMesh *m = mv->kind == SR_V_MESH ? mv->mesh : NULL;
  if (!m || m->abstract || (a->type->varying && a->type->mesh)) return NULL;
  SrVal *blocks = device_blocks(I, t, a->var, m);
  if (!blocks) return NULL;
  SrTrace *saved = I->trace;
  I->trace = NULL;
  SrVal *b = sr_getindex(I, blocks, 0);
  I->trace = saved;
  sr_unref(blocks);
  if (!b) sr_exc_clear(I);
  return b;
}

void sr_tracers_smap_next(SrInterp *I, SrVal *mesh, SrVal *leaves, SrVal *specs) {
  SrVal *d = sr_tuple(NULL, 0, NULL);
  sr_seq_push(NULL, d, sr_int(NULL, K_SMAP));
  sr_seq_push(NULL, d, sr_ref(leaves));
  sr_seq_push(NULL, d, sr_ref(specs));
  sr_seq_push(NULL, d, sr_int(NULL, 0));
  sr_seq_push(NULL, d, sr_none());
  sr_seq_push(NULL, d, sr_ref(mesh));
  sr_trace_next_repr(I, smap_repr, d);
  sr_trace_next_class(I, "ShardMapTracer");
}

void sr_tracer_origin_msg(SrInterp *I, const SrVal *x, SrBuf *out) {
  const SrArrayObj *a = sr_array_of(x);
  if (!a || a->kind != SR_AV_TRACER || !sr_tracers_is_live(I, x)) return;
  SrTrace *t = a->trace;
  static const char dyn[] = "DynamicJaxprTracer\t";
  if (strncmp(t->origin, dyn, sizeof dyn - 1) != 0) return; /* no debug info */
  /* the debug info is "F traced for T" */
  const char *dbg = t->origin + sizeof dyn - 1, *sep = NULL;
  for (const char *p = strstr(dbg, " traced for "); p; p = strstr(p + 1, " traced for ")) sep = p;
  if (!sep) return;
  SrBuf o = SR_BUF_INIT;
  sr_buf_printf(&o, "\nThe error occurred while tracing the function %.*s for %s. ", (int)(sep - dbg), dbg,
                sep + strlen(" traced for "));
  SrVar *v = a->var;
  if (!v || v->kind != SR_VAR) { /* a literal: find_progenitors finds nothing */
    sr_buf_puts(out, sr_buf_str(&o));
    sr_buf_free(&o);
    return;
  }
  /* pe.find_progenitors: the vars v is computed from, walking back */
  SrJaxprBuilder *jb = &t->jb;
  uint32_t id = 0;
  for (int i = 0; i < t->ncaptured; i++) t->captured_vars[i]->id = id++;
  for (uint32_t i = 0; i < jb->nin; i++) jb->in[i]->id = id++;
  for (uint32_t k = 0; k < jb->neqn; k++)
    for (uint32_t i = 0; i < jb->eqns[k].nout; i++) jb->eqns[k].out[i]->id = id++;
  uint8_t *active = sr_xcalloc((size_t)id + 1, 1);
  active[v->id] = 1;
  for (uint32_t k = jb->neqn; k-- > 0;) {
    const SrEqn *e = &jb->eqns[k];
    int produced = 0;
    for (uint32_t i = 0; i < e->nout; i++)
      if (e->out[i]->kind == SR_VAR && active[e->out[i]->id]) produced = 1, active[e->out[i]->id] = 0;
    if (produced)
      for (uint32_t i = 0; i < e->nin; i++)
        if (e->in[i]->kind == SR_VAR) active[e->in[i]->id] = 1;
  }
  int npos = 0, bad = 0;
  const char *names[3] = {NULL, NULL, NULL}; /* the first two and the last */
  for (uint32_t i = jb->nconst; i < jb->nin; i++) {
    if (!active[jb->in[i]->id]) continue;
    uint32_t pos = i - jb->nconst;
    const char *nm = !t->arg_names ? "unknown" : (int)pos < t->narg_names ? t->arg_names[pos] : NULL;
    if (!nm) bad = 1; /* JAX's IndexError: no origin at all */
    if (npos < 2) names[npos] = nm;
    names[2] = nm;
    npos++;
  }
  if (bad) {
    free(active);
    sr_buf_free(&o);
    return;
  }
  if (npos == 1) {
    sr_buf_printf(&o, "This concrete value was not available in Python because it depends on the value of the "
                      "argument %s.", names[0]);
  } else if (npos == 2) {
    sr_buf_printf(&o, "This concrete value was not available in Python because it depends on the values of the "
                      "arguments %s and %s.", names[0], names[1]);
  } else if (npos > 2) {
    sr_buf_puts(&o, "This concrete value was not available in Python because it depends on the values of the arguments ");
    uint32_t seen = 0;
    for (uint32_t i = jb->nconst; i < jb->nin; i++) {
      if (!active[jb->in[i]->id]) continue;
      const char *nm = t->arg_names ? t->arg_names[i - jb->nconst] : "unknown";
      if (++seen == (uint32_t)npos) sr_buf_printf(&o, ", and %s.", nm);
      else sr_buf_printf(&o, "%s%s", seen > 1 ? ", " : "", nm);
    }
  } else {
    /* the equations with a literal input or one of the captured values v
       depends on */
    int shown = 0, more = 0;
    for (uint32_t k = 0; k < jb->neqn; k++) {
      const SrEqn *e = &jb->eqns[k];
      int from_const = 0;
      for (uint32_t i = 0; i < e->nin && !from_const; i++) {
        const SrVar *u = e->in[i];
        from_const = u->kind == SR_LIT || (u->kind == SR_VAR && u->id < (uint32_t)t->ncaptured && active[u->id]);
      }
      if (!from_const) continue;
      if (shown == 5) {
        more = 1;
        break;
      }
      sr_buf_puts(&o, shown ? "\n\n  operation " : "This value became a tracer due to JAX operations on these lines:\n\n  operation ");
      sr_print_eqn(&o, e);
      sr_buf_printf(&o, "\n    from line %s", e->loc ? e->loc : "unknown");
      shown++;
    }
    if (more) sr_buf_puts(&o, "\n\n(Additional originating lines are not shown.)");
  }
  free(active);
  sr_buf_puts(out, sr_buf_str(&o));
  sr_buf_free(&o);
}

SrVal *sr_raise_concretization(SrInterp *I, const SrVal *x, const char *context) {
  SrBuf b = SR_BUF_INIT, og = SR_BUF_INIT;
  const SrType *t = sr_value_type(I, (SrVal *)x);
  if (t) sr_type_str(&b, t, 0); /* Tracer._error_repr: aval.str_short() */
  sr_tracer_origin_msg(I, x, &og);
  sr_raise(I, "ConcretizationTypeError",
           "Abstract tracer value encountered where concrete value is expected: traced array with shape %s\n%s%s\n",
           sr_buf_str(&b), context ? context : "", sr_buf_str(&og));
  sr_buf_free(&b);
  sr_buf_free(&og);
  return NULL;
}
