/* tree_util.h: pytrees (tree_util.c, after JAX's tree_util.py): the
 * nodes are lists, tuples, dicts (sorted keys), None and the classes that
 * register children (SrLangOps.tree_children: VJP objects). */
#ifndef SR_JAX_TREE_UTIL_H
#define SR_JAX_TREE_UTIL_H

#include "core/trace.h"

/* Pytrees: the leaves (arrays, scalars) of nested lists, tuples and dicts,
   and the same structure rebuilt from new leaves. */
SrVal *sr_pytree_flatten(SrInterp *I, SrVal *v);
/* core.shaped_abstractify's ValueError for a leaf that is no JAX type but
   has __jax_array__ (a traced call's argument, jax.typeof) */
#define SR_JAX_ARRAY_ABSTRACTIFY_MSG                                                                    \
  "Triggering __jax_array__() during abstractification is no longer supported. To avoid this error, " \
  "either explicitly convert your object using jax.numpy.array(), or register your object as a pytree."
/* The same with leaves of any type (tree_util.tree_flatten's, where
   sr_pytree_flatten takes only JAX types, as a traced call's arguments). */
SrVal *sr_pytree_flatten_any(SrInterp *I, SrVal *v);
/* v's structure with its leaves numbered from *k (a dummy tree, to
   rebuild from or to name leaves by). */
SrVal *sr_pytree_numbered(SrVal *v, int *k);
/* v's leaves as arrays (Python scalars become weakly typed ones). */
SrVal *sr_pytree_array_leaves(SrInterp *I, SrVal *v);
SrVal *sr_pytree_unflatten(SrVal *like, SrVal *leaves);
/* One pytree node: its children as a new list -- a list's or tuple's
   items, a dict's values in sorted key order (as JAX flattens dicts), none
   for None, a registered class's (SrLangOps.tree_children) -- or NULL for
   a leaf.  sr_pytree_rebuild makes a node like `like` from new children
   (borrowed; a dict comes out in sorted key order); a new reference. */
SrVal *sr_pytree_children(SrVal *v);
/* The order of a dict's entries when flattened (sorted keys): a malloc'd
   array of indices into d's entries. */
int *sr_pytree_dict_order(const SrVal *d);
/* jaxlib's check that a dict's keys sort with <: 0, or -1 with its
   ValueError raised (a str and a number among them, None, Enum members). */
int sr_pytree_dict_keys_sortable(SrInterp *I, const SrVal *d);
SrVal *sr_pytree_rebuild(SrVal *like, SrVal *children);
/* The keystr of each leaf of v after the prefix in path ("args" gives
   args[0], args[1]['hi']): a malloc'd string per leaf in out[*k...],
   *k advanced past them; path is restored on return. */
void sr_pytree_leaf_paths(const SrVal *v, SrBuf *path, char **out, int *k);
/* Whether v has a leaf that is not a JAX type (no sr_value_type): 1 with
   the first such leaf in *leaf (borrowed) and its keystr appended to path,
   else 0 with path as it was. */
int sr_pytree_bad_leaf(SrInterp *I, SrVal *v, SrBuf *path, SrVal **leaf);
/* The walks over a pytree recurse, so a tree must be checked by this
   first: -1 with RecursionError raised when it nests more than
   SR_VAL_MAX_NEST deep -- a list that holds itself does (JAX recurses
   forever on one too).  sr_pytree_flatten checks. */
int sr_pytree_check_depth(SrInterp *I, SrVal *v);
/* tree_util.prefix_errors' first error, raised as the ValueError
   e(name) would be: -1 with it raised, 0 when none of _prefix_error's
   cases names one.  None counts as a leaf (is_leaf=lambda x: x is None,
   as shard_map passes). */
int sr_pytree_prefix_error(SrInterp *I, SrVal *prefix, SrVal *full, const char *name);
/* tree_util.prefix_errors(prefix, full) against full's structure (its
   leaves api_util's PytreeLeaf), None a node: every error's message
   appended to out, newline-separated; returns their count, -1 with an
   exception raised. */
int sr_pytree_prefix_errors(SrInterp *I, SrVal *prefix, SrVal *full, const char *name, SrBuf *out);

/* pytree.cc's ValueError where == of two nodes' aux data raises (a
   PyTreeDef ==, jit's cache): %s the node's type */
#define SR_PYTREE_EQ_MSG                                                                                        \
  "Exception raised while checking equality of metadata fields of pytree node of type %s. Make sure that "    \
  "metadata fields are hashable and have simple equality semantics. (Note: arrays cannot be passed as metadata " \
  "fields!)"

/* tree_util.equality_errors(t1, t2): the structural differences of two
   pytrees, each a key path (keystr), what t1 and t2 have there and why
   they differ ("their Python types differ", "the lengths do not match",
   ...).  leaf, when not NULL, is the text for a leaf's type (JAX's
   "pytree leaf" of equality_errors_pytreedef); else str(type(leaf)). */
typedef struct {
  char *path, *thing1, *thing2, *expl;
} SrTreeDiff;
typedef struct {
  SrTreeDiff *d;
  int n, cap;
} SrTreeDiffs;
void sr_pytree_equality_errors(SrInterp *I, SrVal *t1, SrVal *t2, const char *leaf, SrTreeDiffs *out);
void sr_tree_diffs_free(SrTreeDiffs *d);

#endif
