/* jaxpr.h: the one IR.
 *
 * LAYER.  ir/ is the data every layer shares: dtypes (dtype.h), meshes and
 * PartitionSpecs (mesh.h), hash-consed types (type.h), values (val.h) and
 * this IR.  It uses util/ only.
 *
 * A parsed text, a traced function and the output of every autodiff pass
 * are all SrJaxprs, printed by one printer, checked by one checker and run
 * by one evaluator.
 *
 * An SrProgram owns an arena that holds one or more jaxprs (a top-level one
 * and the jaxprs nested in its params), their vars, equations and params.
 * Programs are reference-counted; a program whose params point at jaxprs of
 * another program holds a reference to it (sr_program_dep).
 *
 * Vars have a dense id within the jaxpr that binds them (0 .. nvars-1), so
 * passes keep per-var data in arrays indexed by id.  Literals are SrVars of
 * kind SR_LIT with a value and no id.
 */
#ifndef SR_IR_JAXPR_H
#define SR_IR_JAXPR_H

#include <stdint.h>

#include "ir/name_stack.h"
#include "ir/type.h"
#include "ir/val.h"
#include "util/diag.h"
#include "util/mem.h"

struct SrPrim;

typedef enum { SR_VAR, SR_LIT, SR_DROP } SrVarKind;

/* How a literal was written, so that it prints back the same way. */
typedef enum {
  SR_LIT_TYPED,      /* 2.0:f32[]  (the current printer) */
  SR_LIT_DTYPE_ONLY, /* 2.0:f32    (an older printer) */
  SR_LIT_BARE,       /* 2.0        (the 2021-2024 printer: no type) */
} SrLitForm;

typedef struct SrVar {
  const SrType *type;     /* a bare literal's: sr_lit_bare_type */
  uint8_t kind;           /* SrVarKind */
  uint8_t lit_form;       /* SrLitForm */
  uint32_t id;            /* SR_VAR/SR_DROP: index in the binding jaxpr */
  uint32_t pp_gen, pp_name; /* the printer's naming scratch */
  /* literals */
  const char *text;       /* as written or as JAX would print it */
  union {
    int64_t i;            /* bool and integer dtypes */
    double f;             /* float dtypes */
    double c[2];          /* complex */
  } val;
} SrVar;

typedef struct SrParam {
  const char *key; /* interned */
  SrVal *val;      /* immortal, in the program's arena */
} SrParam;

#define SR_NO_OFF UINT32_MAX

/* How deep jaxprs may nest in the params of others.  Every pass over a
   program (checker, printer, evaluator, autodiff, optimizer) recurses
   once per level, so the two things that make nested jaxprs bound them:
   the parser (a text's own nesting, and nesting through hoisted lets) and
   tracing (traces inside traces, as jit(jit(...)) makes). */
#define SR_JAXPR_MAX_DEPTH 200

typedef struct SrEqn {
  const struct SrPrim *prim;
  uint32_t nin, nout, nparams;
  SrVar **in, **out;
  SrParam *params;       /* in the order they were written or built */
  uint32_t off;          /* offset of the equation in its source text */
  const char *ns;        /* the name stack it was bound under, relative to
                            its jaxpr's trace (ir/name_stack.h), or NULL */
  const char *loc;       /* where a traced equation comes from, interned
                            (source_info_util.summarize: "file:line (fn)"),
                            or NULL */
  const struct SrMesh *mesh; /* the abstract mesh it was bound under when
                            that was not its trace's (use_abstract_mesh,
                            auto_axes, explicit_axes: JaxprEqnContext's
                            cur_abstract_mesh), or NULL; the autodiff and
                            batching engines run its rules under it */
} SrEqn;

/* core.DebugInfo of a traced function's jaxpr: what it was traced for
   ("jit", "scan"...), its func_src_info ("f at file:line"), the names of
   its inputs' leaves (arg_names) and the paths of its outputs' leaves
   (result_paths); strings interned, narg or nres < 0: None (unknown) */
typedef struct SrDebugInfo {
  const char *traced_for, *func_src_info;
  int narg, nres;
  const char **arg_names, **result_paths;
} SrDebugInfo;

typedef struct SrJaxpr {
  uint32_t nconst, nin, nout, neqn, nvars;
  SrVar **invars;        /* constvars first: invars[0..nconst) */
  SrVar **outvars;       /* vars or literals */
  SrEqn *eqns;
  SrVal **consts;        /* values of the constvars (entries may be NULL) */
  const char *effects;   /* the effects text, or NULL */
  const char *name;      /* debug name (a traced function's name), or NULL */
  const SrDebugInfo *dbg; /* its debug_info (in prog's arena), or NULL */
  struct SrProgram *prog;
  uint32_t off;          /* offset of its "{" in the source, or SR_NO_OFF */
} SrJaxpr;

typedef struct SrProgram {
  int rc;
  SrArena *arena;
  SrSrc *src;            /* the text it was parsed from, or NULL */
  SrJaxpr *top;
  const SrMesh *mesh;    /* the mesh its types name, or NULL */
  struct SrProgram **deps; /* the programs it holds: a hash set of capdeps
                              slots, ndeps of them used (jaxpr.c) */
  int ndeps, capdeps;
  SrVal **held;          /* counted values it keeps (constvar values) */
  int nheld, capheld;
} SrProgram;

SrProgram *sr_program_new(void);
SrProgram *sr_program_ref(SrProgram *p);
void sr_program_unref(SrProgram *p);
/* Records that p's params point into q, keeping q alive while p is. */
void sr_program_dep(SrProgram *p, SrProgram *q);
/* Keeps a reference to a counted value for as long as p lives; returns v. */
SrVal *sr_program_hold(SrProgram *p, SrVal *v);

static inline SrVar **sr_constvars(const SrJaxpr *j) { return j->invars; }
static inline SrVar **sr_args(const SrJaxpr *j) { return j->invars + j->nconst; }
static inline uint32_t sr_nargs(const SrJaxpr *j) { return j->nin - j->nconst; }

/* ---- last uses ----
 *
 * The walks over a jaxpr's equations (sr_eval_jaxpr, the evaluator's
 * sr_ev_jaxpr, the autodiff engine's JVP walk) drop each var's value right
 * after the equation that reads it last, so that a long chain holds a few
 * values, not all of them.  sr_jaxpr_last_use gives the table they share:
 * for each var id (j->nvars + 1 entries, malloc'ed), the index of the last
 * equation reading it, SR_LAST_NONE where none does and SR_LAST_OUT for an
 * output of the jaxpr, which never dies.  Equations flagged in skip (when
 * not NULL: ones that will not run) read nothing. */
#define SR_LAST_NONE (-1)
#define SR_LAST_OUT INT32_MAX
int32_t *sr_jaxpr_last_use(const SrJaxpr *j, const uint8_t *skip);
/* Whether atom v's value dies after equation k: a var read last by k. */
static inline int sr_dies_at(const int32_t *last, const SrVar *v, uint32_t k) {
  return v->kind == SR_VAR && last[v->id] == (int32_t)k;
}
/* Whether a binder's value is read at all (by an equation or as an
   output): the walks do not keep the others. */
static inline int sr_is_read(const int32_t *last, const SrVar *v) {
  return v->kind != SR_DROP && last[v->id] != SR_LAST_NONE;
}

/* Looks up a param by interned key; NULL if absent. */
SrVal *sr_eqn_param(const SrEqn *e, const char *key);

/* Looks up a param of a list by key (compared as text); NULL if absent. */
SrVal *sr_params_find(const SrParam *ps, uint32_t n, const char *key);

/* Every jaxpr directly in a param value (a jaxpr, or a tuple of jaxprs),
   in order.  Returns how many there are, writing at most max. */
int sr_param_jaxprs(const SrVal *v, SrJaxpr **out, int max);

/* ---- building jaxprs ----
 *
 * A builder collects binders and equations, then sr_jb_finish() lays the
 * jaxpr out in the program's arena and numbers its vars.  Vars made with
 * sr_jb_var are owned by the program right away. */
typedef struct SrJaxprBuilder {
  SrProgram *prog;
  SrVar **in;  uint32_t nin, capin, nconst;
  SrVal **consts;
  SrVar **out; uint32_t nout, capout;
  SrEqn *eqns; uint32_t neqn, capeqn;
  uint32_t off;
} SrJaxprBuilder;

void sr_jb_init(SrJaxprBuilder *b, SrProgram *p);
void sr_jb_free(SrJaxprBuilder *b); /* frees the builder, not the program */
SrVar *sr_jb_var(SrJaxprBuilder *b, const SrType *t);
SrVar *sr_jb_drop(SrJaxprBuilder *b, const SrType *t);
void sr_jb_invar(SrJaxprBuilder *b, SrVar *v);
/* A leading constvar with its value (the program keeps a reference). */
void sr_jb_constvar(SrJaxprBuilder *b, SrVar *v, SrVal *value);
void sr_jb_outvar(SrJaxprBuilder *b, SrVar *v);
/* Appends an equation; the arrays are copied, the params' values must be
   immortal in the program's arena. */
SrEqn *sr_jb_eqn(SrJaxprBuilder *b, const struct SrPrim *prim, uint32_t nin,
                 SrVar *const *in, uint32_t nout, SrVar *const *out,
                 uint32_t nparams, const SrParam *params);
SrJaxpr *sr_jb_finish(SrJaxprBuilder *b);
/* A copy of debug info d in arena a (NULL for NULL); unknown_names: with
   arg_names and result_paths None (DebugInfo.with_unknown_names). */
const SrDebugInfo *sr_debug_info_copy(SrArena *a, const SrDebugInfo *d, int unknown_names);

/* Literals, made in the program's arena. */
SrVar *sr_lit_int(SrProgram *p, const SrType *t, int64_t i);
SrVar *sr_lit_float(SrProgram *p, const SrType *t, double f);
SrVar *sr_lit_bool(SrProgram *p, int b);
/* A literal written without a type (the 2021-2024 printer's), whose
   dtype the type rules take from the other operands. */
static inline int sr_is_bare_lit(const SrVar *v) {
  return v->kind == SR_LIT && (!v->type || v->lit_form == SR_LIT_BARE);
}
/* The type a literal written without one has: a weak-typed scalar of the
   dtype its text reads as (bool, int32, float32 or complex64). */
const SrType *sr_lit_bare_type(const char *text);

/* The text JAX prints for a scalar literal's value (no type): 2.0, 1, True,
   0.10000000149011612 for f32 0.1. */
void sr_lit_value_text(SrBuf *out, const SrVar *lit);

#endif
