/* tracers.h: how the values traced by jax.grad, jax.jvp and jax.vmap print
 * (tracers.c).  Each makes the next trace begun (the function's own, by
 * sr_trace_fn) print its tracers as JAX's GradTracer, JVPTracer or
 * VmapTracer; call it right before tracing, and sr_trace_next_repr(I,
 * NULL, NULL) after, in case no trace was begun. */
#ifndef SR_JAX_TRACERS_H
#define SR_JAX_TRACERS_H

#include "core/trace.h"

/* jax.grad, jax.vjp, jax.linearize: args as passed; arg_diff[i] says
   whether argument i is differentiated (NULL: all); eager says that args
   are the values of an eager call that traces itself first, whose trace
   encloses the function's (jax.grad's). */
void sr_tracers_grad_next(SrInterp *I, int nargs, SrVal **args, const uint8_t *arg_diff, int eager);
/* jax.jvp: the primals and the tangents' leaves (a list, float0 or None
   for none). */
void sr_tracers_jvp_next(SrInterp *I, int nargs, SrVal **args, SrVal *tangent_leaves);
/* a custom_jvp or custom_vjp function (or rule) traced inside another
   trace, on args: its tracers print as the enclosing trace's, and hold
   the values of the arguments where those are known (Python control flow
   on them works where it does in JAX: under an eager jax.jvp or
   jax.grad). */
void sr_tracers_custom_next(SrInterp *I, int nargs, SrVal **args);
/* jax.vmap: the arguments' leaves (list; the arrays mapped) and each one's
   batch dim (SR_NOT_MAPPED: not mapped). */
void sr_tracers_vmap_next(SrInterp *I, int64_t size, const char *axis_name, SrVal *leaves, const int *in_bd);
/* shard_map called outside jit: the concrete mesh (a Mesh value), the
   arguments' leaves and each one's in_spec (lists). */
void sr_tracers_smap_next(SrInterp *I, SrVal *mesh, SrVal *leaves, SrVal *specs);
/* Tracer.to_concrete_value, for bool(), int(), float() and indexing:
   the value of a tracer whose value an eager call fixes, a new reference
   (an array, or the Python scalar an argument was);
   NULL, with no exception, for any other value.  Two kinds have one:
   - ShardMapTracer: a tracer of a shard_map called outside jit that
     varies over no axis (the same on every device: device 0's block);
   - LinearizeTracer and JVPTracer: a tracer of an eager jax.grad
     (value_and_grad) or jax.jvp, whose primal is computed from the values
     the call was given, so that Python control flow on values works under
     grad as in JAX (the trace then holds the branch taken, and the eager
     call evaluates it on those same values). */
SrVal *sr_tracers_value(SrInterp *I, SrVal *x);
/* batching.py's BatchTracer.val: the batch of values the tracer x of an
   eager vmap stands for; NULL (nothing raised) for any other value. */
SrVal *sr_tracers_vmap_val(SrInterp *I, SrVal *x);
/* Whether x is a tracer of a jax.grad's or jax.jvp's function (a JVP or
   Linearize tracer, whose trace is the one differentiating). */
int sr_tracers_is_ad(SrInterp *I, const SrVal *x);
/* Whether x is a tracer of a trace still being built. */
int sr_tracers_is_live(SrInterp *I, const SrVal *x);
/* The class of the tracer x, as type(x) names it in JAX:
   jax._src.interpreters.batching.BatchTracer (vmap), ad.JVPTracer (jvp),
   ad.LinearizeTracer (grad, vjp), shard_map.ShardMapTracer, else
   partial_eval.DynamicJaxprTracer. */
const char *sr_tracers_class_name(const SrVal *x);
/* Whether x holds a value: a concrete array or a Python number. */
int sr_tracers_is_concrete(const SrVal *x);
/* DynamicJaxprTracer._origin_msg: appends, for a tracer of a live staging
   trace that knows its function (jit, make_jaxpr, a scan or while body),
   "\nThe error occurred while tracing the function F for T. " and what
   its value depends on -- the arguments it was computed from, by name, or
   else the operations with literal or captured inputs that made it (at
   most 5, each with its source line).  Nothing for any other value. */
void sr_tracer_origin_msg(SrInterp *I, const SrVal *x, SrBuf *out);
/* core.concrete_or_error's ConcretizationTypeError for the traced value x:
   "Abstract tracer value encountered where concrete value is expected:
   traced array with shape T\n" + context + x's origin.  Returns NULL. */
SrVal *sr_raise_concretization(SrInterp *I, const SrVal *x, const char *context);
/* Is the current trace the body of a shard_map called outside jit (an
   eager ShardMapTrace)? */
int sr_tracers_in_eager_smap(SrInterp *I);

#endif
