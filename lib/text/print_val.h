/* print_val.h: str() and repr() of values, as Python prints them, and
 * the PyTreeDef of a pytree.
 *
 * The value half of the one printer (print.h prints jaxprs; a jaxpr value
 * prints as print.h prints it).  Values parsed from a jaxpr print their
 * text verbatim, so that what was read prints back; an object (SR_V_OBJ)
 * prints through its class's slots (sr_obj_print).  Containers go at most
 * SR_VAL_MAX_NEST deep (ir/val.h, sr_val_too_deep).
 */
#ifndef SR_TEXT_PRINT_VAL_H
#define SR_TEXT_PRINT_VAL_H

#include "ir/val.h"
#include "util/buf.h"

/* str(v) and repr(v), as Python prints them.  A container that holds
   itself prints as [...] or {...}. */
void sr_val_str(SrBuf *out, const SrVal *v);
void sr_val_repr(SrBuf *out, const SrVal *v);

/* A pytree's structure, the nodes of a PyTreeDef: like is the node it
   was made from (counted), NULL for a leaf; kid its n children in
   flattening order; keys a dict's keys in that order (borrowed from
   like); nleaves/nnodes are jax.tree's counts.  One printer prints every
   PyTreeDef: jax.tree's (jax/pytree_api.c) and the value-shaped ones
   below. */
typedef struct SrTreeNode {
  SrVal *like;
  int n;
  struct SrTreeNode **kid;
  SrVal **keys;
  int nleaves, nnodes;
  char *head; /* a custom node's NAME[AUX] (malloc'd), or NULL: NAME[...] */
} SrTreeNode;
void sr_tree_node_free(SrTreeNode *t);
/* The inside of PyTreeDef(...): (*, [*, None]), {'a': *}, CustomNode(T[...], [*]). */
void sr_tree_node_print(SrBuf *b, const SrTreeNode *t);

/* PyTreeDef(...), JAX's repr of the structure of a pytree: tuples, lists
   and None print as themselves, a leaf as *.  A dict or an object is a
   node when children(v) gives its children (a new list: a dict's values
   in the pytree's order, an object's by its class), else a leaf (always
   with children NULL); an object node prints as CustomNode(NAME[...],
   [...]).  jax/'s sr_vjp_treedef_str passes the pytree registry's
   sr_pytree_children; a type rule, which sees flat tuples, NULL. */
void sr_treedef_str(SrBuf *b, const SrVal *tree, SrVal *(*children)(SrVal *v));

#endif
