/* fold.h: transposes folded into the dot_generals beside them (fold.c).
 *
 * JAX's gradient of x @ w puts a transpose after the weight gradient's
 * dot_general; XLA folds such a transpose into the dot (the gemm's
 * transpose flags, or its operands swapped: C^T = B^T A^T) instead of
 * copying the array.  The evaluator's jaxpr walk does the same, as a rule
 * on the equations:
 *
 *  - a transpose whose result's one use is an operand of a dot_general,
 *    whose permutation keeps that operand's free dims in their order, and
 *    after which the dot's kernel reads the transpose's input without a
 *    copy (its dims in [batch, free, contracting] or [batch, contracting,
 *    free] order: a transpose flag), is not run: the dot reads its input,
 *    its dimension numbers mapped through the permutation;
 *  - a transpose whose input's one use it is, the result of a dot_general,
 *    and whose permutation swaps the dot's lhs-free and rhs-free dims
 *    (batch dims kept; for 2-D and batched matrices, the last two), is not
 *    run: the dot runs with its operands swapped and makes the transposed
 *    result itself.
 *
 * Both may fold into one dot (one operand's transpose at most).  A
 * transpose whose input is laid out otherwise than its type says (Auto
 * axes the evaluator chose, a device-local layout) runs as written, so
 * that the communication is the same as without folding.
 *
 * SHARDREPL_FOLD=0 in the environment turns folding off (for
 * comparisons); sr_kern_transposes() (kern.h) counts the transposes
 * materialized. */
#ifndef SR_EXEC_FOLD_H
#define SR_EXEC_FOLD_H

#include <stdint.h>

#include "exec/array.h"
#include "ir/jaxpr.h"

/* The rows the folding rule names, set by the family that owns them
   (lax/dot.c); nothing folds while `on` is 0. */
typedef struct SrEvFold {
  int on;
  int transpose, dot;  /* the rows' ids */
} SrEvFold;
extern SrEvFold sr_ev_fold;

typedef struct SrFold SrFold;

/* The folds of j's equations, for one walk; NULL when there are none.
   dead flags the equations the walk skips (or NULL); last is the walk's
   last-use table (sr_jaxpr_last_use), which the plan extends where a dot
   reads a folded transpose's input. */
SrFold *sr_fold_plan(const SrJaxpr *j, const uint8_t *dead, int32_t *last);
/* The equation the walk runs at k: q itself, its rewrite, or NULL when it
   was folded away; env holds the walk's values (a transpose checks its
   input's layout). */
const SrEqn *sr_fold_eqn(SrFold *f, uint32_t k, const SrEqn *q, SrArray *const *env, int32_t *last);
void sr_fold_free(SrFold *f);
/* How many transposes this process has folded so far. */
long sr_fold_count(void);

#endif
