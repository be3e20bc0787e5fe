/* prim.h: the primitive table.
 *
 * One row per primitive (prim.def): its printed name, flags, print rule and
 * the typed slots of its rules -- type, eval, jvp, transpose, comm and
 * batch.
 * The table sits at the bottom of the layers, so the slots' types name the
 * engines' contexts only as forward-declared structs (struct SrEvalCtx of
 * exec/eval.h, struct SrAd of ad/ad_rules.h).  The family files of lib/lax/
 * fill the slots (sr_lax_init, lax/lax.h); a slot left NULL means "no
 * rule", which each stage reports in JAX's words.
 */
#ifndef SR_PRIMS_PRIM_H
#define SR_PRIMS_PRIM_H

#include <stdint.h>

#include "ir/jaxpr.h"
#include "ir/type.h"
#include "util/buf.h"
#include "util/diag.h"

enum {
  SR_PF_MULTI = 1 << 0,
  SR_PF_EW = 1 << 1,
  SR_PF_LINEAR = 1 << 2,
  SR_PF_COLL = 1 << 3,
  SR_PF_CALL = 1 << 4,
  SR_PF_LAYOUT = 1 << 5,
  SR_PF_INLINE = 1 << 6,
  SR_PF_EFFECT = 1 << 7,
  SR_PF_NO_CSE = 1 << 8,
  SR_PF_MANUAL = 1 << 9,
};

/* How the printer treats an equation's params (core.pp_eqn_rules). */
typedef enum {
  SR_PP_DEFAULT,        /* every param, sorted */
  SR_PP_ACCURACY,       /* drop accuracy=None */
  SR_PP_MUL,            /* drop out_dtype=None */
  SR_PP_CONVERT,        /* drop sharding */
  SR_PP_DOT_GENERAL,    /* drop None params and out_sharding; dims as lists */
  SR_PP_BROADCAST_IN_DIM, /* drop shape, sharding, empty broadcast_dimensions */
  SR_PP_RESHARD,        /* no params */
  SR_PP_JIT,            /* drop defaults, name= first, pass var names in */
  SR_PP_PJIT,           /* the same without passing names (older text) */
  SR_PP_CUSTOM_JVP,     /* name= first, drop num_consts=0 */
  SR_PP_CUSTOM_VJP,     /* name= first, drop num_consts=0 and out_trees */
  SR_PP_CUSTOM_LIN,     /* drop out_avals */
  SR_PP_LINEAR_SOLVE,   /* const_lengths and jaxprs as str of a _LinearSolveTuple */
  SR_PP_STATE,          /* get, swap, addupdate: y <- x[i], x[i] <- v, x[i] += v */
} SrPpRule;

enum {
#define SR_PRIM(id, name, flags, pp) SR_P_##id,
#include "prims/prim.def"
#undef SR_PRIM
  SR_NPRIMS
};

/* What a type rule sees of an equation. */
typedef struct SrRuleEqn {
  const struct SrPrim *prim;
  uint32_t nin, nout, nparams;
  const SrType *const *in;      /* input types */
  SrVar *const *inv;            /* the input atoms (literal values), or NULL */
  const SrParam *params;
  const SrType *const *written; /* binder types as written in a text, or
                                   NULL: rules take params the printer drops
                                   (broadcast_in_dim's shape) from here */
} SrRuleEqn;

struct SrTypeCtx;  /* check/, check/rule.h */
struct SrEvalCtx;  /* exec/eval.h */
struct SrEvalEqn;  /* exec/eval.h */
struct SrAd;       /* ad/ad_rules.h */
struct SrBatch;    /* ad/batch.h */

/* The type rule: the output types of an equation (check/rule.h). */
typedef int (*SrTypeRule)(struct SrTypeCtx *cx, const SrRuleEqn *e,
                          const SrType **out);
/* The eval rule: runs one equation on concrete arrays (exec/eval.h). */
typedef int (*SrEvalRule)(struct SrEvalCtx *cx, const struct SrEvalEqn *e);
/* The JVP rule: primals x and tangents t in, primal outputs y and their
   tangents ty out (ad/ad_rules.h). */
typedef int (*SrJvpRule)(struct SrAd *ad, const SrEqn *e, SrVal **x, SrVal **t, SrVal **y,
                         SrVal **ty);
/* The transpose rule: output cotangents ct in, cotangents ctx of the
   linear inputs out (ad/ad_rules.h). */
typedef int (*SrTransposeRule)(struct SrAd *ad, const SrEqn *e, SrVal **ct, SrVal **x,
                               SrVal **ctx);

/* The communication one equation implies, as :comm-static lists it and
   the optimizer weighs it: an explicit collective, or what explicit
   sharding makes of a reshard, a contraction or a reduction over sharded
   dims.  `what` is HLO's name then why ("all-reduce (contraction over
   sharded dims)"); mesh and axes say over which axes (NULL and 0 for an
   explicit collective). */
typedef struct SrCommNote {
  const char *what;
  const SrMesh *mesh;
  SrAxes axes;
} SrCommNote;
/* The comm rule: fills at most max notes of e and returns how many there
   are (0: none for this equation). */
typedef int (*SrCommRule)(const SrEqn *e, SrCommNote *out, int max);

/* The batching rule (vmap): inputs x with their batch dims bd (-1: not
   mapped; at least one is mapped) in, outputs y with their batch dims ybd
   out (ad/batch.h). */
typedef int (*SrBatchRule)(struct SrBatch *b, const SrEqn *e, SrVal **x, const int *bd, SrVal **y,
                           int *ybd);

/* The result-count rule of a multi-result row whose params, not a body,
   say how many results it has (while's carry, cond's branches, split's
   sizes): the count for an equation of nin operands and these params.
   NULL: the body's (a jaxpr or call_jaxpr param), else one per operand
   (core/trace.c's bind). */
typedef uint32_t (*SrNoutRule)(int nin, const SrParam *ps, int nparams);

/* The op_name rule: a segment of the path XLA's op_name metadata gives the
   equations under this one (what the ledger of :comm and the optimizer's
   listing print).  With key NULL, the equation's own segment (jit(f), a
   scan's or while's `while`); with key, the segment of its body in param
   key, item s of a tuple of bodies (`body`, `cond`, `branch_1`), or NULL
   for none.  Written into buf (n bytes) or a static string, and returned.
   A NULL slot: the primitive's name, and no segment for a body. */
typedef const char *(*SrOpNameRule)(const SrParam *ps, uint32_t nparams, const char *key, int s, char *buf,
                                    size_t n);

/* The layout rule of Layout.AUTO (exec/layout.c's sr_local_auto): the one
   dimension along which e reads operand i (of rank nd) as lines, which
   AUTO makes minor-most; -1 for none.  A NULL slot: the equation has no
   preference, and AUTO keeps the operand row-major. */
typedef int (*SrMinorRule)(const SrEqn *e, uint32_t i, int nd);

struct SrKernEw;   /* exec/kern.h */

typedef struct SrPrim {
  const char *name;  /* interned */
  int id;            /* SR_P_*, or -1 for a primitive the table lacks */
  unsigned flags;
  SrPpRule pp;
  SrTypeRule type;
  SrEvalRule eval;
  SrJvpRule jvp;
  SrTransposeRule transpose;
  SrCommRule comm;
  SrBatchRule batch;
  /* what the engines ask of a row besides its rules (each NULL by
     default; the family files fill them) */
  SrNoutRule nout;
  SrOpNameRule op_name;
  SrMinorRule minor;
  const char *hlo;              /* the HLO opcode of the optimizer's
                                   listing (all-reduce); NULL: the name,
                                   `_` written `-` */
  const struct SrKernEw *kern;  /* an elementwise row's kernels, per
                                   dtype (exec/kern.h) */
} SrPrim;

extern SrPrim sr_prims[SR_NPRIMS];

/* Fills the table's names and its index of names; idempotent.  The rule
   slots are filled by lax/'s sr_lax_init (which calls this first): the
   program, the tests and the upper layers' inits call sr_lax_init before
   anything runs a rule.  (Below lax/, a caller needs the names only.) */
void sr_prims_init(void);
/* The row for a printed name, making an empty row for an unknown one. */
const SrPrim *sr_prim_lookup(const char *name, size_t n);
/* Appends the rule matrix to b: a line per row of the table, in the
   table's order, with a mark (x) under each rule it has -- type, eval,
   jvp, transpose, comm, batch -- or '-', then a count of each.  Lists what the
   family files have registered by the time it is called (:prims,
   shardrepl --prims). */
void sr_prims_matrix(SrBuf *b);
/* The communication notes of e (its row's comm rule), or -1 for a
   primitive with no comm rule: one that never communicates by itself (a
   call or control flow, whose bodies may, or local compute). */
int sr_prim_comm_notes(const SrEqn *e, SrCommNote *out, int max);
/* For comm rules: note n of out (when n < max), returning n + 1. */
int sr_comm_note(SrCommNote *out, int max, int n, const char *what, const SrMesh *m, SrAxes a);
/* Equation segment (key NULL) or body segment of an op_name path, by
   the row's op_name rule (SrOpNameRule); buf holds n bytes. */
const char *sr_prim_op_name(const SrPrim *p, const SrParam *ps, uint32_t nparams, const char *key, int s,
                            char *buf, size_t n);
/* Whether an equation of p with these params has an effect that keeps it
   though nothing reads its results (jax's effects): a row of the table
   with SR_PF_EFFECT (a debug callback), or a call or control flow whose
   bodies hold one (cond's branches, scan's body). */
int sr_prim_has_effect(const SrPrim *p, const SrParam *ps, uint32_t n);
/* Whether a call or control flow equation's bodies hold a collective
   (SR_PF_COLL: axis_index, psum...), which a named vmap batches though
   no operand is mapped. */
int sr_prim_holds_collective(const SrPrim *p, const SrParam *ps, uint32_t n);
static inline const SrPrim *sr_prim(int id) { return &sr_prims[id]; }

#endif
