/* opt.h: an optimization pass over jaxprs, standing in for what XLA does
 * to a jitted program before it runs it.
 *
 * LAYER.  opt/ uses the layers up to ad/; what it knows of a primitive it
 * reads from the row (flags, the comm rule).
 *
 * shardrepl has no compiler, but some of what the seeds say is about the
 * compiled program: with optimization_barrier the FSDP gradient does five
 * all-gathers, without it three, because XLA's common-subexpression
 * elimination merges the backward pass's re-gathers into the forward
 * pass's.  sr_opt_optimize does the part of XLA's work that decides such
 * counts, on the jaxpr itself:
 *
 *  1. inlining: jit (pjit, closed_call, core_call) and custom_jvp/vjp calls
 *     become their bodies, as XLA inlines calls;
 *  2. shard_map fusion: a shard_map that uses another's results (in the
 *     same PartitionSpec they were produced in) and the same mesh joins it,
 *     so the forward and backward passes of a shard_map share one body, as
 *     they share one HLO module after SPMD partitioning;
 *  3. common-subexpression elimination, inside every body: an equation
 *     with the same primitive, params and operands as an earlier one is
 *     dropped and its results are the earlier one's.  optimization_barrier
 *     is never merged, and its results are new values, so what goes
 *     through a barrier is never merged with what does not;
 *  4. dead-code elimination, inside every body, pruning the unused
 *     results and operands of shard_map equations.
 *
 * The result is a jaxpr (it prints with the usual printer and runs with
 * the evaluator) and a text listing (sr_opt_text) in a format of this
 * project -- one line per operation with HLO's opcode names (all-gather,
 * all-reduce, reduce-scatter...), described in README.md -- so that
 * `text.count('all-gather(')` counts what JAX's `compile().as_text()`
 * counts.  The communication that explicit sharding implies (a
 * contraction over sharded dims, a reshard from unreduced) gets a line of
 * its own after its equation's -- `all-reduce(%12), axes=('X',),
 * implied_by="dot_general (...)"` -- as XLA's partitioner adds one.
 */
#ifndef SR_OPT_OPT_H
#define SR_OPT_OPT_H

#include "ir/jaxpr.h"
#include "util/buf.h"

/* What the pass did. */
typedef struct SrOptStats {
  int inlined;   /* calls inlined */
  int fused;     /* shard_maps joined to an earlier one */
  int cse;       /* equations merged into an earlier equal one */
  int dce;       /* equations removed as dead */
  int64_t eqns_in;  /* equations before, nested ones counted once per use */
  int eqns_out;     /* after */
} SrOptStats;

/* Optimizes j (a closed jaxpr): returns a new jaxpr in a new program (the
   caller unrefs j->prog of the result), which keeps the programs it
   borrows from alive.  name is the program's name for op_name paths
   ("loss": paths read jit(loss)/shard_map/all_gather).  With text, the
   listing of the optimized program is appended to it.  stats may be
   NULL. */
SrJaxpr *sr_opt_optimize(const SrJaxpr *j, const char *name, SrBuf *text, SrOptStats *stats);

/* The listing of j without optimizing it (what lower().as_text() shows). */
void sr_opt_text(const SrJaxpr *j, const char *name, SrBuf *text);

#endif
