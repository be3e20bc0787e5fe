/* prim.h: the primitive table.
 *
 * One row per primitive (prim.def): its printed name, flags, print rule and
 * the rules of each stage.  The family files rules_*.c fill the rule slots
 * from sr_prims_init(); a slot left NULL means "no rule", which each stage
 * reports in JAX's words.
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

struct SrTypeCtx;
typedef int (*SrTypeRule)(struct SrTypeCtx *cx, const SrRuleEqn *e,
                          const SrType **out);

struct SrEvalCtx; /* exec/ */
struct SrAdCtx;   /* ad/ */

typedef struct SrPrim {
  const char *name;  /* interned */
  int id;            /* SR_P_*, or -1 for a primitive the table lacks */
  unsigned flags;
  SrPpRule pp;
  SrTypeRule type;
  void *eval;        /* exec/: SrEvalRule */
  void *jvp;         /* ad/: SrJvpRule */
  void *transpose;   /* ad/: SrTransposeRule */
} SrPrim;

extern SrPrim sr_prims[SR_NPRIMS];

/* Fills the rule slots; idempotent. */
void sr_prims_init(void);
/* The row for a printed name, making an empty row for an unknown one. */
const SrPrim *sr_prim_lookup(const char *name, size_t n);
/* Appends the rule matrix to b: a line per row of the table, in the
   table's order, with a mark (x) under each rule it has -- type, eval,
   jvp, transpose -- or '-', then a count of each.  Lists what the stages
   have registered by the time it is called (:prims, shardrepl --prims).
   The communication notes of :comm-static are no column: they are a
   switch in ad/ad_commands.c, not a rule of the row (issue 12). */
void sr_prims_matrix(SrBuf *b);
static inline const SrPrim *sr_prim(int id) { return &sr_prims[id]; }

#endif
