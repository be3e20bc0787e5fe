/* tree_util.c: jax.tree and jax.tree_util (tree_util.py): tree.map and
 * tree.leaves. */
#include "jax/lax.h"
#include "jax/jax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax/jaxstate.h"
#include "py/objects.h"
#include "py/range.h"
#include "jax/vjp.h"
#include "util/intern.h"

/* ======================================================================
 * jax.tree
 * ====================================================================== */

/* Pytree nodes are jnp.c's: lists, tuples, dicts (sorted keys), None
   and registered classes (VJP objects). */
static void tree_leaves(SrVal *v, SrVal *out) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    sr_seq_push(NULL, out, sr_ref(v));
    return;
  }
  for (int i = 0; i < ch->seq.n; i++) tree_leaves(ch->seq.items[i], out);
  sr_unref(ch);
}

static SrVal *tree_rebuild(SrVal *like, SrVal *leaves, int *it) {
  SrVal *ch = sr_pytree_children(like);
  if (!ch) return *it < leaves->seq.n ? sr_ref(leaves->seq.items[(*it)++]) : sr_none();
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *x = tree_rebuild(ch->seq.items[i], leaves, it);
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = x;
  }
  SrVal *r = sr_pytree_rebuild(like, ch);
  sr_unref(ch);
  return r;
}

static SrVal *tree_leaves_fn(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "leaves", "tree", p) < 0 || sr_pytree_check_depth(I, p[0]) < 0) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  tree_leaves(p[0], l);
  return l;
}

static SrVal *tree_map_fn(SrInterp *I, SrArgs *a) {
  if (a->n < 2 || a->nkw) return sr_raise(I, "TypeError", "map(f, tree, *rest) takes a function and one or more trees");
  for (int k = 1; k < a->n; k++)
    if (sr_pytree_check_depth(I, a->v[k]) < 0) return NULL;
  SrVal *f = a->v[0];
  int nt = a->n - 1;
  SrVal **ls = sr_xcalloc((size_t)nt + 1, sizeof *ls);
  for (int k = 0; k < nt; k++) {
    ls[k] = sr_seq(NULL, SR_V_LIST, 0);
    tree_leaves(a->v[1 + k], ls[k]);
  }
  SrVal *res = NULL;
  int ok = 1;
  for (int k = 1; k < nt && ok; k++)
    if (ls[k]->seq.n != ls[0]->seq.n) {
      sr_raise(I, "ValueError", "Tree structures do not match: %d leaves and %d leaves", ls[0]->seq.n, ls[k]->seq.n);
      ok = 0;
    }
  SrVal *outs = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; ok && i < ls[0]->seq.n; i++) {
    SrVal *argv[64];
    for (int k = 0; k < nt && k < 64; k++) argv[k] = ls[k]->seq.items[i];
    SrArgs ca = {nt < 64 ? nt : 64, argv, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, f, &ca);
    if (!r) ok = 0;
    else sr_seq_push(NULL, outs, r);
  }
  if (ok) {
    int it = 0;
    res = tree_rebuild(a->v[1], outs, &it);
  }
  sr_unref(outs);
  for (int k = 0; k < nt; k++) sr_unref(ls[k]);
  free(ls);
  return res;
}


/* ---- registration ---- */

void sr_tree_util_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.tree.map jax.tree_util.tree_map", tree_map_fn, "map(f, tree, *rest): f applied to every leaf"},
    {"jax.tree.leaves jax.tree_util.tree_leaves", tree_leaves_fn, "leaves(tree): the leaves, in order"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
}
