/* eval.h: the evaluator -- running equations and jaxprs on concrete
 * arrays -- and what its eval rules share.
 *
 * Execution is local compute plus redistribution.  An eval rule
 *
 *     static int ev_sin(SrEvalCtx *cx, const SrEvalEqn *e);
 *
 * gets the input arrays and the output types of one equation (the types
 * come from the equation, never re-derived), decides the layout each input
 * must have for the output's layout, moves the data with sr_redistribute()
 * where they differ, and computes each device's shard with sr_ev_map().
 * It fills e->out[] with new references and returns 0, or -1 after a
 * diagnostic in cx->d.  Its inputs' shards are row-major: sr_ev_eqn()
 * relays out an input stored in another device-local layout first
 * (exec/layout.h), and the rule's results are row-major.
 *
 * The evaluator frees each intermediate at its last use in a jaxpr.
 */
#ifndef SR_EXEC_EVAL_H
#define SR_EXEC_EVAL_H

#include <stdint.h>

#include "exec/array.h"
#include "exec/comm.h"
#include "exec/exec.h"
#include "ir/jaxpr.h"
#include "prims/prim.h"

#define SR_EV_MAXPATH 32

typedef struct SrEvalCtx {
  SrInterp *I;          /* may be NULL (unit tests) */
  SrExec *ex;           /* ledger and backend */
  SrComm *comm;
  const SrMesh *mesh;   /* the concrete mesh in context, with its axis
                           types (Manual inside shard_map), or NULL */
  SrDiags *d;
  const char *path[SR_EV_MAXPATH]; /* where, for the ledger */
  int depth;
  int fused;            /* inside a jitted computation: a multiply whose
                           only use is the next equation's add runs as one
                           fused multiply-add, as XLA:CPU compiles it
                           (eval.c) */
  /* For the next sr_ev_jaxpr only, which clears them (a scan's body):
     where its results go (dest), and which of its inputs it gets the
     caller's reference to (steal, bit i: in[i]), so that one held by no
     one else can be written in place at its last use.  During one of its
     equations, which of that equation's results have a destination
     (sr_ev_dest_take). */
  const struct SrEvDest *dest;
  uint64_t steal;
  /* Set by a collective's rule around its sr_coll_* call: the
     axis_index_groups that split its groups (sr_comm_groups_sub), none
     when sub_n is 0. */
  int sub_n, sub_size;
  const int *sub;
  const struct SrEvDest *eqn_dest;
  const int32_t *eqn_dest_of;
  uint32_t eqn_dest_n;
  /* Set by a rule around its sr_ev_map when its kernel adds into its
     output (a gemm with beta = 1): it may be handed an accumulating
     destination, and a fresh output buffer starts as zeros. */
  int take_acc;
  /* For the next scan equation only, which takes them: stacked results
     to be added into arrays whose references the walk hands over
     (sr_ev_accum below). */
  struct SrEvAccIn *acc;
} SrEvalCtx;

/* The accumulators of a scan: its result out[i] is to be made in[i] plus
   that stack, in in[i]'s buffers; the rule takes (and clears) in[i]. */
#define SR_EV_MAXACC 16
typedef struct SrEvAccIn {
  int n;
  int32_t out[SR_EV_MAXACC];
  SrArray *in[SR_EV_MAXACC];
} SrEvAccIn;

/* Where a jaxpr's results go: result o's shard at mesh position pos is
   made in bytes [off, off + per) of out[o].buf[pos] (a scan's stacked
   result, at the iteration's slice) when the equation that makes it asks
   for a buffer of that size there (sr_ev_dest_take), instead of in a
   fresh buffer that the caller then copies.  The caller checks whether
   each result really is its slice (the rule may have used the slice for
   something else, which is harmless) and copies otherwise. */
typedef struct SrEvDestOut {
  SrBuffer **buf;  /* by mesh position, NULL where none; NULL: no destination */
  int ndev;
  size_t off, per;
  uint8_t *taken;  /* ndev flags: a view of the slice was handed out */
  int acc;         /* the slices hold values the results are added to (an
                      accumulator): handed only to a rule that adds into
                      its output (cx->take_acc) */
} SrEvDestOut;
typedef struct SrEvDest {
  uint32_t n;      /* results 0 .. n-1 */
  SrEvDestOut *out;
} SrEvDest;

/* For result i of the equation being run, at mesh position pos: a view of
   its destination if it has one of nbytes not yet handed out, else NULL.
   sr_ev_map and the elementwise rules ask before allocating. */
SrBuffer *sr_ev_dest_take(SrEvalCtx *cx, uint32_t i, int pos, size_t nbytes);
/* Whether result i of the equation being run has an accumulating
   destination (SrEvDestOut.acc). */
int sr_ev_dest_acc(const SrEvalCtx *cx, uint32_t i);

typedef struct SrEvalEqn {
  const SrPrim *prim;
  const SrParam *params;
  uint32_t nparams, nin, nout;
  SrArray *const *in;
  const SrType *const *out_type;
  SrArray **out;        /* filled by the rule */
  uint32_t donate;      /* bit k: in[k] is at its last use and only the
                           caller holds it, so a rule may write into its
                           buffers (see SR_MAP_REUSE) */
  const char *ns;       /* its name stack (SrEqn.ns), or NULL */
  uint32_t lit;         /* bit k: in[k] is a literal of the jaxpr being
                           walked (a constant to XLA) */
} SrEvalEqn;

/* (SrEvalRule, the slot's type, is in prims/prim.h.) */

/* Runs one equation. */
int sr_ev_eqn(SrEvalCtx *cx, const SrEvalEqn *e);
/* Runs a jaxpr: in are its non-const inputs (its constvars take their
   values from j->consts); out gets j->nout new references. */
int sr_ev_jaxpr(SrEvalCtx *cx, const SrJaxpr *j, SrArray *const *in, SrArray **out);
/* A context for the top level of an interpreter. */
void sr_eval_ctx_init(SrEvalCtx *cx, SrInterp *I, SrExec *ex, SrDiags *d);
/* An error at run time ("exc: message" as JAX words it); returns -1. */
int sr_ev_err(SrEvalCtx *cx, const char *exc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A result buffer of n bytes, or NULL after XLA's RESOURCE_EXHAUSTED error
   when there is not that much memory: a program's shapes choose the size,
   so running out is the program's error, not the end of the session. */
SrBuffer *sr_ev_buffer(SrEvalCtx *cx, size_t nbytes);
/* That error, for a size known to be too big before allocating. */
int sr_ev_oom(SrEvalCtx *cx, size_t nbytes);
/* The path as "jit(step)/while/body/dot_general". */
void sr_ev_path_str(const SrEvalCtx *cx, SrBuf *out);
static inline void sr_ev_push(SrEvalCtx *cx, const char *name) {
  if (cx->depth < SR_EV_MAXPATH) cx->path[cx->depth] = name;
  cx->depth++;
}
static inline void sr_ev_pop(SrEvalCtx *cx) { cx->depth--; }

/* ---- params ---- */

SrVal *sr_ev_param(const SrEvalEqn *e, const char *key);
int sr_ev_param_int(SrEvalCtx *cx, const SrEvalEqn *e, const char *key, int64_t *out);
/* A tuple of ints (nested tuples flattened); -1 if absent or not ints. */
int sr_ev_param_ints(SrEvalCtx *cx, const SrEvalEqn *e, const char *key, int64_t *out, int max,
                     int *n);
/* Mesh axis names of a param (a str or tuple of strs, in order) as axis
   indices of the concrete mesh m. */
int sr_ev_param_axes(SrEvalCtx *cx, const SrEvalEqn *e, const char *key, const SrMesh *m,
                     int *axes, int *naxes);
/* A jaxpr param (jaxpr=, call_jaxpr=, ...). */
const SrJaxpr *sr_ev_param_jaxpr(const SrEvalEqn *e, const char *key);

/* ---- meshes and layouts of results ---- */

/* The concrete mesh a result of type t lives on: the context's or an
   input's mesh of t's shape (or, for a type with no mesh axes, the first
   input's mesh, else the context's); a mesh of t's shape over the context
   mesh's devices when the abstract mesh changed (use_abstract_mesh). */
const SrMesh *sr_ev_mesh_for(SrEvalCtx *cx, const SrEvalEqn *e, const SrType *t);
/* The same for a mesh shape (sr_mesh_shape) that a sharding names: the
   context's or an input's mesh of that shape, the same devices in that
   shape, or the default devices; NULL when none fits. */
const SrMesh *sr_ev_mesh_of_shape(SrEvalCtx *cx, const SrEvalEqn *e, const SrMesh *shape);
/* The layout of result i: its type's sharding, plus the Auto axes the
   evaluator picks (see eval.c: elementwise results keep their inputs'
   Auto sharding, other results are replicated over Auto axes). */
const SrType *sr_ev_out_layout(SrEvalCtx *cx, const SrEvalEqn *e, uint32_t i, const SrMesh *m);
/* Layout builders. */
/* Layout l with the Auto axes of m that layout src (of l's rank) splits a
   dimension over added where l leaves that dimension whole and does not
   use the axes already; l itself when nothing is added. */
const SrType *sr_layout_adopt_auto(const SrType *l, const SrType *src, const SrMesh *m);
const SrType *sr_layout_with_dtype(const SrType *l, SrDtype dt);
/* Concrete mesh m with a shape mesh's axis indices: an SrType with
   no axes at all and the given shape/dtype (replicated). */
const SrType *sr_layout_replicated(SrDtype dt, int ndim, const int64_t *shape, const SrMesh *shape_mesh);

/* The layout a sharding value (NamedSharding or P) gives a result of
   type t on concrete mesh m (eval.c). */
int sr_ev_layout_of_sharding(SrEvalCtx *cx, const SrType *t, const SrVal *sh, const SrMesh *m, const SrType **out);
/* The same with dims kept: the dims in `keep` (a bit per dim) and those
   the spec leaves unconstrained keep the axes of layout xl (may be NULL). */
int sr_ev_layout_of_spec(SrEvalCtx *cx, const SrType *t, const SrVal *sh, const SrMesh *m, const SrType *xl,
                         uint64_t keep, const SrType **out);

/* ---- data movement ---- */

/* a's data with layout `layout` on mesh m (NULL: one device), moving it
   with the fewest collectives redistribute.c knows: reductions of
   unreduced axes (all-reduce, or reduce-scatter into a dimension the
   target splits), all-to-all for an axis that moves between dimensions,
   all-gathers for axes the target drops, local slices for axes it adds,
   zero padding for axes that become unreduced.  Returns a new reference
   (a itself when nothing moves). */
SrArray *sr_redistribute(SrEvalCtx *cx, SrArray *a, const SrMesh *m, const SrType *layout);
/* The same, giving the result type `type` (the array's layout otherwise). */
SrArray *sr_redistribute_typed(SrEvalCtx *cx, SrArray *a, const SrMesh *m, const SrType *layout,
                               const SrType *type);
/* The whole value of an array, row-major, on the host of every rank. */
int sr_array_to_host(SrEvalCtx *cx, SrArray *a, void *out);
/* Collectives with ledger entries, for the rules of manual mode and for
   redistribute.c.  axes are concrete mesh axis indices in member order. */
int sr_coll_all_reduce(SrEvalCtx *cx, SrArray *a, const int *axes, int naxes, SrRedOp op,
                       SrBuffer **out);
int sr_coll_all_gather(SrEvalCtx *cx, SrBuffer **in, const SrMesh *m, SrDtype dt, size_t nbytes,
                       const int *axes, int naxes, SrBuffer **out);
int sr_coll_reduce_scatter(SrEvalCtx *cx, SrBuffer **in, const SrMesh *m, SrDtype dt,
                           size_t count, const int *axes, int naxes, SrRedOp op, SrBuffer **out);
int sr_coll_all_to_all(SrEvalCtx *cx, SrBuffer **in, const SrMesh *m, SrDtype dt, size_t nbytes,
                       const int *axes, int naxes, SrBuffer **out);
int sr_coll_ppermute(SrEvalCtx *cx, SrBuffer **in, const SrMesh *m, SrDtype dt, size_t nbytes,
                     const int *axes, int naxes, int npairs, const int *src, const int *dst,
                     SrBuffer **out);

/* ---- per-device computation ---- */

typedef struct SrShardIO {
  SrEvalCtx *cx;
  int pos;                      /* mesh position */
  const SrMesh *mesh;
  SrBuffer *const *in;          /* the device's input buffers */
  const int64_t *in_shape[16];  /* their shard shapes */
  SrBuffer **out;               /* allocated unless SR_MAP_NOALLOC */
  const int64_t *out_shape[16];
  int64_t out_start[SR_MAX_RANK]; /* where output 0's block starts */
  void *arg;
} SrShardIO;

typedef int (*SrShardFn)(SrShardIO *io);

enum {
  SR_MAP_BLOCK = 1,   /* the result depends on the device's block of
                         output 0 (iota, random bits), not just the inputs */
  SR_MAP_POS = 2,     /* the result depends on the device (axis_index) */
  SR_MAP_NOALLOC = 4, /* fn sets io->out[] itself (sharing a buffer) */
};
/* Output 0 may be written into input k's buffer where that buffer has no
   other holder (the rule has checked that the caller donated input k and
   that sizes agree; the kernel must allow in == out).  Several may be
   given: the first whose buffer is free on a device is used there. */
#define SR_MAP_REUSE(k) (8 << (k))

/* Runs fn for each device this rank holds, once per distinct tuple of
   input buffers (and block, with SR_MAP_BLOCK): devices with the same
   inputs share the outputs.  The out arrays are made by the caller
   (sr_array_new); inputs are on their mesh or meshless.  At most 16
   inputs and outputs.  fn may run on a thread of the pool, beside other
   devices' calls (exec/eval_par.h): it computes into io->out[] from
   io->in[] and io->arg, and may call sr_ev_err(io->cx, ...), malloc and
   the kernels, but must not allocate counted buffers, touch reference
   counts, or write anything another device's call reads. */
int sr_ev_map(SrEvalCtx *cx, int nin, SrArray *const *in, int nout, SrArray *const *out, int flags,
              SrShardFn fn, void *arg);

/* A new output array for result i of e on mesh m with a layout. */
SrArray *sr_ev_new_out(const SrEvalEqn *e, uint32_t i, const SrMesh *m, const SrType *layout);

/* The walk's fusion of a multiply into the next add or subtract (eval.c),
   as the elementwise family registers it (lax/elementwise.c, with its
   rules): the rows of the multiply, the add and the subtract, and `rule`,
   the fused multiply-add of float32/float64 operands e->in[0..2]
   (broadcast like an add's) in one of the forms of SrFmaForm
   (exec/kern_simd.h: a*b + c, c - a*b, a*b - c) as e's one result, and
   `fuses`, whether a multiply equation's params let it fuse (NULL: all
   do).  e->donate says which operands it may overwrite.  The walk fuses
   nothing while rule is NULL. */
typedef struct SrEvFma {
  int mul, add, sub;  /* the rows' ids */
  int (*rule)(SrEvalCtx *cx, const SrEvalEqn *e, int form);
  int (*fuses)(const SrEqn *mul);
} SrEvFma;
extern SrEvFma sr_ev_fma;

/* The walk's fusion of stacked results into the adds that consume them
   (eval.c), as the control-flow family registers it (lax/control.c).
   Inside a jit, a scan's stacked result Y read only by a later equation
   `c = add A Y` (or add_any, either order), where A is float32 or float64
   of Y's type, is read by nothing else from the scan to that add (the
   scan included), dies there, and is held by the walk alone, in buffers of
   its own: the scan accumulates into A (cx->acc), each iteration's slice
   added into A's slice, c is its result and the add does not run -- what
   XLA makes of a gradient accumulated over microbatches (each parameter's
   add of jax.tree.map), one buffer updated in place, the weight
   gradient's gemm adding into it (beta = 1) instead of writing a stack.  `stacked` says whether result o of a scan equation is stacked.
   SHARDREPL_ACCUM=0 in the environment turns it off (for comparisons). */
typedef struct SrEvAccum {
  int scan, add, add_any;  /* the rows' ids */
  int (*stacked)(const SrEqn *scan, uint32_t o);
} SrEvAccum;
extern SrEvAccum sr_ev_accum;
/* How many adds of a stacked result scans have done so, in place, in this
   process. */
long sr_ev_accum_count(void);
static inline void sr_set_eval_rule(int prim_id, SrEvalRule r) { sr_prims[prim_id].eval = r; }

#endif
