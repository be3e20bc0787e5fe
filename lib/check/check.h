/* check.h: the type checker.
 *
 * Runs every equation's type rule on the types of its inputs and compares
 * the results with the binder types written in the jaxpr; nested jaxprs
 * (jit, scan, while, cond, shard_map, custom_*) are checked through their
 * primitives' rules.  All errors of a jaxpr are reported, each located at
 * its equation.
 *
 * LAYER.  check/ is the engine of type rules: this walk, and the machinery
 * every type rule shares (rule.h: the context, errors in JAX's words,
 * params, result types).  The rules themselves are the family files'
 * (lax/), reached through the rows' type slots.  It uses util/ ir/ prims/
 * text/ only; core/ (bind) and the language check with it.
 */
#ifndef SR_CHECK_CHECK_H
#define SR_CHECK_CHECK_H

#include "check/rule.h"
#include "ir/jaxpr.h"
#include "util/diag.h"

typedef struct SrCheckOpts {
  const SrMesh *mesh;   /* the abstract mesh in context (with axis types), or NULL */
  /* an equation whose primitive has no type rule: an error (strict), or
     trusted as written and listed in unknown[] */
  int strict;
} SrCheckOpts;

typedef struct SrCheckResult {
  int nunknown;
  const char *unknown[16]; /* primitives without a rule that were met */
} SrCheckResult;

/* Checks a top-level jaxpr (its source locates the errors).  Returns the
   number of errors. */
int sr_check_jaxpr(const SrJaxpr *j, const SrCheckOpts *opts, SrDiags *d, SrCheckResult *res);

/* The checker as a check_body callback, for rules and for tracing. */
int sr_check_body(SrTypeCtx *cx, const SrJaxpr *body, const SrType *const *in, uint32_t nin,
                  const SrType **out);

/* Types compare equal for checking: weak types aside, and meshes compared
   by their axis names. */
int sr_types_match(const SrType *a, const SrType *b);

/* The type of an atom as a rule sees it (a literal written without a type
   gets a weak scalar type from its text). */
const SrType *sr_atom_type(const SrVar *v);

#endif
