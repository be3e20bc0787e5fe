/* rule.h: what type rules share -- their context, errors in JAX's words,
 * reading params, and building result types.
 *
 * A type rule computes the output types of one equation from its input
 * types and params (reference sections 3 and 4):
 *
 *     static int type_sin(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out);
 *
 * It returns 0, or -1 after reporting with sr_terr().  The same rule serves
 * the checker (a parsed text: e->written holds the binder types, e->inv the
 * atoms) and tracing (an eager operation: e->written is NULL).
 */
#ifndef SR_PRIMS_RULE_H
#define SR_PRIMS_RULE_H

#include "ir/jaxpr.h"
#include "ir/mesh.h"
#include "ir/type.h"
#include "prims/prim.h"
#include "util/diag.h"

typedef struct SrTypeCtx {
  /* the abstract mesh in context, with its axis types (Explicit, Auto,
     Manual); NULL when no mesh is set */
  const SrMesh *mesh;
  int check_vma;     /* inside shard_map(check_vma=True) */
  SrDiags *d;
  const SrSrc *src;  /* errors point here */
  size_t off;
  /* Types a nested jaxpr (a jit, scan or shard_map body) given the types
     of its inputs, checking what is written in it; the result types go to
     out (body->nout of them).  The mesh and check_vma of cx apply; a rule
     that changes them (shard_map) passes a modified copy of cx. */
  int (*check_body)(struct SrTypeCtx *cx, const SrJaxpr *body, const SrType *const *in,
                    uint32_t nin, const SrType **out);
  void *user;
} SrTypeCtx;

/* Reports an error at cx's location; exc is JAX's exception type
   ("ShardingTypeError", "TypeError", "ValueError", ...).  Returns -1. */
int sr_terr(SrTypeCtx *cx, const char *exc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets a type rule: rules files call this from their init function. */
void sr_set_type_rule(int prim_id, SrTypeRule rule);

/* ---- params ---- */

/* The value of a param, or NULL when the equation does not have it. */
SrVal *sr_rparam(const SrRuleEqn *e, const char *key);
/* Reading params; `required` makes a missing param an error (naming the
   primitive and the param), otherwise *out keeps its value. */
int sr_rparam_int(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int required, int64_t *out);
int sr_rparam_bool(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int required, int *out);
/* A tuple or list of ints; *n is set to its length. */
int sr_rparam_ints(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int required, int64_t *out,
                   int max, int *n);
/* A dtype (float32 / dtype value); *present tells whether it was given
   and not None. */
int sr_rparam_dtype(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, SrDtype *out, int *present);
/* A value as ints: an int, or a (possibly nested) tuple/list of ints. */
int sr_val_ints(const SrVal *v, int64_t *out, int max, int *n);

/* Mesh axis names (a tuple, a str or a frozenset) as a set of axes of the
   type mesh m; unknown names are an error. */
int sr_rparam_axes(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, const SrMesh *m, SrAxes *out);
int sr_names_to_axes(SrTypeCtx *cx, const SrVal *v, const SrMesh *m, SrAxes *out);

/* A sharding param (NamedSharding or P, or None): the spec it gives for a
   result of rank ndim, as per-dimension axes of mesh m plus unreduced and
   reduced sets.  *present is 0 for None or an absent param. */
typedef struct SrShardSpec {
  const SrMesh *mesh;   /* shape mesh the axes index */
  uint8_t nax[SR_MAX_RANK];
  uint8_t ax[SR_MAX_RANK][SR_MAX_DIM_AXES];
  SrAxes unreduced, reduced;
  uint8_t ukind;
  int ndim;
} SrShardSpec;
int sr_rparam_sharding(SrTypeCtx *cx, const SrRuleEqn *e, const char *key, int ndim,
                       SrShardSpec *out, int *present);
/* The same from a spec value directly (P or NamedSharding). */
int sr_spec_to_shard(SrTypeCtx *cx, const SrVal *v, const SrMesh *m, int ndim, SrShardSpec *out);
/* Applies a shard spec to a builder (dims' axes, unreduced, reduced). */
void sr_apply_shard(SrTypeBuilder *b, const SrShardSpec *s);
/* A builder's sharding as a shard spec, and back to a P value. */
void sr_shard_of_type(const SrType *t, SrShardSpec *s);
SrVal *sr_shard_to_spec_val(const SrShardSpec *s);

/* ---- types ---- */

/* The mesh shape results are built on: the context mesh's shape, or the
   first input's mesh, or NULL. */
const SrMesh *sr_rule_mesh(SrTypeCtx *cx, const SrRuleEqn *e);
/* Is the axis Explicit in the context (Auto and Manual axes never appear
   in types)? */
int sr_axis_explicit(SrTypeCtx *cx, const SrMesh *m, int axis);
/* Finishes a result type: rejects a mesh axis used twice, and checks that
   every sharded dimension is divisible.  For the duplicate case the error
   is JAX's "{prim} operation with inputs: ... produces an illegally sharded
   result: ...". */
int sr_finish_type(SrTypeCtx *cx, const SrRuleEqn *e, SrTypeBuilder *b, const SrType **out);
/* "('X',)" / "('X', 'Y')" / "None" for one dimension of a spec, as JAX's
   messages print partition specs. */
void sr_dim_spec_str(SrBuf *out, const SrType *t, int dim);
/* "i32[4@X,4], i32[4,4@X]": the inputs of e, short form. */
void sr_inputs_str(SrBuf *out, const SrRuleEqn *e);
/* NamedSharding(mesh=AbstractMesh(...), spec=P(...)) of a type. */
void sr_type_sharding_str(SrBuf *out, SrTypeCtx *cx, const SrType *t);

/* Weak type of the result: weak only if every non-literal input is. */
int sr_all_weak(const SrRuleEqn *e);

#endif
