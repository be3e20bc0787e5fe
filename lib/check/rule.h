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
 *
 * The machinery lives with the checker, the engine that drives type rules
 * (as exec/ holds what eval rules share and ad/ what JVP and transpose
 * rules share); the rules themselves are the family files' (lib/lax/).
 * Its messages print params with text/'s value printer, which is why it
 * sits above text/ and not beside the table in prims/.
 */
#ifndef SR_CHECK_RULE_H
#define SR_CHECK_RULE_H

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
  int no_f16_reductions; /* jax_allow_f16_reductions=False: reduce_sum
                            of float16 or bfloat16 over a size > 1 axis
                            is an error */
  /* the axis names of the enclosing jax.vmaps and their sizes (nvmap of
     them): collectives may name them besides the mesh's Manual axes */
  const char *const *vmap_axis;
  const int64_t *vmap_size;
  int nvmap;
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
/* core._check_divisibility: each sharded dimension divides by its axes'
   total size (JAX's message); -1 after reporting. */
int sr_check_divisible(SrTypeCtx *cx, const SrType *t);
/* Runs e's type rule (which it must have) and refuses a result too big to
   exist: every caller of a type rule goes through here, so no shape whose
   byte size overflows int64 reaches the evaluator.  The results of plain
   equations are remembered by their inputs (check/rule_cache.h). */
int sr_type_rule(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out);
/* numpy's ValueError for such a shape; also for a rule whose own shape
   arithmetic overflows. */
int sr_terr_too_big(SrTypeCtx *cx);
/* "('X',)" / "('X', 'Y')" / "None" for one dimension of a spec, as JAX's
   messages print partition specs. */
void sr_dim_spec_str(SrBuf *out, const SrType *t, int dim);
/* "i32[4@X,4], i32[4,4@X]": the inputs of e, short form. */
void sr_inputs_str(SrBuf *out, const SrRuleEqn *e);
/* NamedSharding(mesh=AbstractMesh(...), spec=P(...)) of a type. */
void sr_type_sharding_str(SrBuf *out, SrTypeCtx *cx, const SrType *t);

/* Weak type of the result: weak only if every non-literal input is. */
int sr_all_weak(const SrRuleEqn *e);

/* ---- the frame of a standard primitive (lax/utils.py) ----
 *
 * JAX's standard_abstract_eval runs, for one result: the shape and dtype
 * rules; then the sharding rule unless the context mesh and the inputs'
 * meshes are all Auto/Manual (call_sharding_rule); then the unreduced/
 * reduced ("ur") rule on the explicit sets (call_ur_rule), or on the manual
 * sets when every context axis is Manual (manual_rule); then the varying
 * rule; then the memory space.  In this IR a type's unreduced and reduced
 * sets hold both kinds; which one they are is a fact of the context. */

typedef enum {
  SR_MODE_EXPLICIT, /* a context axis is Explicit (or there is no context
                       mesh): the sharding and ur rules run */
  SR_MODE_AUTO,     /* Auto axes (maybe with Manual ones): replicated, no
                       unreduced or reduced */
  SR_MODE_MANUAL,   /* every context axis Manual: replicated, the ur rule
                       runs on the manual sets */
} SrShardMode;

typedef struct SrStd {
  SrShardMode mode;
  const SrMesh *mesh; /* the mesh results are built on (a shape), or NULL */
} SrStd;

/* Starts a standard rule: checks the inputs' meshes against the context
   (core.check_avals_context_mesh) and picks the mode. */
int sr_std_begin(SrTypeCtx *cx, const SrRuleEqn *e, SrStd *s);
/* The common mesh of the inputs that have one
   (utils._get_abstract_mesh_from_avals): "Mesh for all inputs should be
   equal" when two differ.  *m is NULL when none has a mesh. */
int sr_inputs_mesh(SrTypeCtx *cx, const SrRuleEqn *e, const char *exc, const SrMesh **m);
/* Whether input i counts as having an empty mesh in JAX (a literal, or any
   meshless value when there is no context mesh): replicated values carry
   no mesh in this IR, so a var with no axes is taken to be on the mesh. */
int sr_in_mesh_empty(SrTypeCtx *cx, const SrRuleEqn *e, uint32_t i);
/* Clears every dimension's axes (the replicated result of the Auto and
   Manual paths). */
void sr_builder_replicate(SrTypeBuilder *b);

/* core.getu / core.getr: the unreduced and reduced sets an ur rule sees.
   getu also wants the unreduced kind to be `sum` (ValueError otherwise);
   sr_getu_kind asks for another kind. */
int sr_getu(SrTypeCtx *cx, const SrType *t, SrAxes *out);
int sr_getu_kind(SrTypeCtx *cx, const SrType *t, int kind, SrAxes *out);
SrAxes sr_getr(SrTypeCtx *cx, const SrType *t);
/* call_ur_rule for a primitive without an ur rule: in explicit mode any
   unreduced or reduced input (or given output sharding, when out_ur is
   nonzero) is "unreduced/reduced rule for {p} is not implemented". */
int sr_ur_none(SrTypeCtx *cx, const SrRuleEqn *e, const SrStd *s, SrAxes out_ur);
/* core.standard_vma_rule: with check_vma all inputs vary over the same
   axes, which the result varies over. */
int sr_vma_standard(SrTypeCtx *cx, const SrRuleEqn *e, SrAxes *out);
/* utils._default_memory_space_rule. */
int sr_mem_default(SrTypeCtx *cx, const SrRuleEqn *e, const char **out);

/* Checks the number of operands and results: "{p} takes N operands". */
int sr_rule_arity(SrTypeCtx *cx, const SrRuleEqn *e, int nin, int nout);
/* The written result type i, or NULL (tracing, or nothing written). */
const SrType *sr_written(const SrRuleEqn *e, uint32_t i);

/* ---- dtypes as JAX's rules test them ---- */

enum {
  SR_DC_BOOL = 1 << 0,
  SR_DC_SIGNED = 1 << 1,
  SR_DC_UNSIGNED = 1 << 2,
  SR_DC_INT = SR_DC_SIGNED | SR_DC_UNSIGNED,
  SR_DC_FLOAT = 1 << 3,
  SR_DC_COMPLEX = 1 << 4,
  SR_DC_F32 = 1 << 5, /* float32 itself (lax._complex_elem_types) */
  SR_DC_F64 = 1 << 6,
  SR_DC_NUM = SR_DC_INT | SR_DC_FLOAT | SR_DC_COMPLEX,
  SR_DC_ANY = SR_DC_NUM | SR_DC_BOOL,
};
/* dtypes.issubdtype(d, t) for one of the classes in the set. */
int sr_dtype_in(SrDtype d, unsigned classes);
/* "integer, floating": numpy's names of the classes, for messages. */
void sr_dtype_classes_str(SrBuf *out, unsigned classes);
/* lax.check_same_dtypes ("lax.add requires arguments to have the same
   dtypes, got float32, int32."), over the given types. */
int sr_check_same_dtypes(SrTypeCtx *cx, const char *name, const SrType *const *ts, uint32_t n);
/* The float0 TypeError of unop/naryop dtype rules; pos < 0 for a unary op. */
int sr_float0_error(SrTypeCtx *cx, const char *name, int pos);
/* Input types where a literal written without a type (the 2021-2024
   printer's `add a 1.0`) takes the dtype of the first typed operand, as
   the weak literal it was did. */
void sr_resolve_bare_literals(const SrRuleEqn *e, const SrType **ts);

/* ---- text for JAX's messages ---- */

/* str(aval): ~float32[8@X]{U:Y} */
void sr_aval_str(SrBuf *out, const SrType *t);
/* repr(aval): ShapedArray(float32[8@X], weak_type=True) */
void sr_aval_repr(SrBuf *out, const SrType *t);
/* aval.str_short(mesh_axis_types=True): float32[8@X]({Explicit: ('X',)}) */
void sr_aval_str_axis_types(SrBuf *out, SrTypeCtx *cx, const SrType *t);
/* aval.str_short(short_dtypes, mesh_axis_types) */
void sr_aval_str_short(SrBuf *out, SrTypeCtx *cx, const SrType *t, int short_dtypes, int mesh_axis_types);
/* str(shape): (8, 4), (8,), () */
void sr_shape_str(SrBuf *out, const SrType *t);
/* str(tuple(spec.partitions)) of some dims (all of them if dims is NULL):
   ('X', None), (('X', 'Y'),), () */
void sr_partitions_str(SrBuf *out, const SrType *t, const int64_t *dims, int n);
/* repr of the type's PartitionSpec: P('X', None, unreduced={'Y'}, ...) */
void sr_type_spec_repr(SrBuf *out, const SrType *t);
/* repr(frozenset) of a set of axes: frozenset({'X', 'Y'}), frozenset() */
void sr_axes_frozenset_str(SrBuf *out, const SrMesh *m, SrAxes axes);
/* str of a Python tuple of ints: (0, 1), (0,), () */
void sr_ints_str(SrBuf *out, const int64_t *v, int n);
/* The mesh a type or spec names, for messages: the context mesh when it
   has the same axes, else the shape mesh. */
void sr_mesh_for_msg(SrBuf *out, SrTypeCtx *cx, const SrMesh *m);

/* Two dimensions of the same size (symbolic sizes by name). */
static inline int sr_dim_same(const SrDim *a, const SrDim *b) {
  return a->size == b->size && a->sym == b->sym;
}
/* The spec entries of dim i of a and dim j of b name the same axes in the
   same order (P entries compare equal). */
int sr_spec_entry_eq(const SrType *a, int i, const SrType *b, int j);
/* The axes of a set named by one type's mesh, as bits of another mesh. */
SrAxes sr_axes_remap(SrAxes axes, const SrMesh *from, const SrMesh *to);

#endif
