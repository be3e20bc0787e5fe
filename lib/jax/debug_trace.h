/* debug_trace.h: jax.debug.print and jax.debug.callback under a trace
 * (debug_trace.c: the debug_print, debug_callback and inspect_sharding
 * primitives), called by debug.c when a trace is being built. */
#ifndef SR_JAX_DEBUG_TRACE_H
#define SR_JAX_DEBUG_TRACE_H

#include "py/interp.h"

/* Binds debug_print for fmt.format(*a, **a's keywords); None, or NULL
   with an exception raised. */
SrVal *sr_debug_print_staged(SrInterp *I, SrVal *fmt, SrArgs *a, int has_placeholders, int ordered,
                             int partitioned);
/* Binds debug_callback for fn(*a, **a's keywords); None, or NULL. */
SrVal *sr_debug_callback_staged(SrInterp *I, SrVal *fn, SrArgs *a, int ordered, int partitioned);
/* str(fn) as core.pp_kv_pair prints it (a function's address masked);
   malloc'd. */
char *sr_debug_callback_text(SrVal *fn);
/* The blocks of a inside shard_map, stacked: an array of shape (devices,
   *block) whose index p is device p's block (wherever it is held); a new
   concrete value, or NULL. */
struct SrEvalCtx;
struct SrArray;
SrVal *sr_debug_stacked_blocks(struct SrEvalCtx *cx, struct SrArray *a);
/* The rows' rules and jax.debug.inspect_array_sharding. */
void sr_debug_trace_init(void);

#endif
