/* pytree_api.c: jax.tree and jax.tree_util's functions over PyTreeDef
 * values (JAX's tree_util.py over jaxlib's pytree.cc): flatten /
 * unflatten / structure / leaves / map with is_leaf and several trees,
 * reduce, all, transpose, the *_with_path family with the key entries
 * DictKey, SequenceKey, GetAttrKey and FlattenedIndexKey and keystr, and
 * PyTreeDef printed as pytree.cc's ToString prints it. */
#include "jax/pytree_api.h"

#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/tree_util.h"
#include "py/class.h"
#include "py/introspect.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- key entries (pytree.cc: SequenceKey, DictKey, GetAttrKey,
   FlattenedIndexKey) ---- */

enum { K_SEQ, K_DICT, K_ATTR, K_FLAT };
typedef struct Key {
  int kind;
  SrVal *v; /* the index (int), key, or name (str) */
} Key;

static void key_free(void *d) {
  Key *k = d;
  sr_unref(k->v);
  free(k);
}

static void key_str(SrBuf *out, const SrVal *v) {
  const Key *k = v->obj.data;
  switch (k->kind) {
  case K_SEQ: sr_buf_printf(out, "[%lld]", (long long)k->v->i); break;
  case K_DICT:
    sr_buf_putc(out, '[');
    sr_val_repr(out, k->v);
    sr_buf_putc(out, ']');
    break;
  case K_ATTR: sr_buf_printf(out, ".%.*s", (int)k->v->str.n, k->v->str.s); break;
  default: sr_buf_printf(out, "[<flat index %lld>]", (long long)k->v->i); break;
  }
}

static void key_repr(SrBuf *out, const SrVal *v) {
  const Key *k = v->obj.data;
  switch (k->kind) {
  case K_SEQ: sr_buf_printf(out, "SequenceKey(idx=%lld)", (long long)k->v->i); break;
  case K_DICT:
    sr_buf_puts(out, "DictKey(key=");
    sr_val_repr(out, k->v);
    sr_buf_putc(out, ')');
    break;
  case K_ATTR: sr_buf_printf(out, "GetAttrKey(name='%.*s')", (int)k->v->str.n, k->v->str.s); break;
  default: sr_buf_printf(out, "FlattenedIndexKey(key=%lld)", (long long)k->v->i); break;
  }
}

static SrVal *key_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const Key *k = self->obj.data;
  static const char *const field[] = {"idx", "key", "name", "key"};
  if (strcmp(name, field[k->kind]) == 0) return sr_ref(k->v);
  if (strcmp(name, "__match_args__") == 0) { /* pytree.cc's, for match statements */
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, 1);
    sr_seq_push(NULL, t, sr_str_cstr(NULL, field[k->kind]));
    return t;
  }
  return NULL;
}

/* keys of one class are equal when their fields are (pytree.cc's __eq__),
   and hash by field and class */
static int key_equal(const SrVal *a, const SrVal *b) {
  const Key *x = a->obj.data, *y = b->obj.data;
  return x->kind == y->kind && sr_val_equal(x->v, y->v);
}

static SrVal *key_compare(SrInterp *I, int op, SrVal *a, SrVal *b) {
  if (op != SR_OP_EQ && op != SR_OP_NE) return NULL;
  int same = a->kind == SR_V_OBJ && b->kind == SR_V_OBJ && a->obj.cls == b->obj.cls;
  if (!same) return sr_bool(op == SR_OP_NE);
  return sr_binop(I, op, ((Key *)a->obj.data)->v, ((Key *)b->obj.data)->v);
}

static int key_hash(SrInterp *I, SrVal *self, int64_t *out) {
  const Key *k = self->obj.data;
  SrVal *fn = sr_lookup_qualname("builtins.hash");
  if (!fn) return 1;
  SrVal *h = sr_call1(I, fn, k->v);
  if (!h) return -1;
  *out = (int64_t)((uint64_t)h->i * 1000003u + (uint64_t)k->kind + 1u); /* wraps, as a hash may */
  sr_unref(h);
  return 0;
}

static const SrLangOps key_ops = {.getattr = key_getattr, .binop = key_compare, .hash = key_hash};
static const SrClass seq_key_class = {"SequenceKey", key_free, key_repr, key_str, &key_ops};
static const SrClass dict_key_class = {"DictKey", key_free, key_repr, key_str, &key_ops};
static const SrClass attr_key_class = {"GetAttrKey", key_free, key_repr, key_str, &key_ops};
static const SrClass flat_key_class = {"FlattenedIndexKey", key_free, key_repr, key_str, &key_ops};

static SrVal *key_new(int kind, SrVal *v /* stolen */) {
  static const SrClass *const cls[] = {&seq_key_class, &dict_key_class, &attr_key_class, &flat_key_class};
  Key *k = sr_xcalloc(1, sizeof *k);
  k->kind = kind;
  k->v = v;
  return sr_obj(cls[kind], k);
}

static SrVal *make_key(SrInterp *I, SrArgs *a, int kind, const char *fname, const char *spec) {
  SrVal *p[1];
  if (sr_args_parse(I, a, fname, spec, p) < 0) return NULL;
  if ((kind == K_SEQ || kind == K_FLAT) && p[0]->kind != SR_V_INT)
    return sr_raise(I, "TypeError", "%s(): incompatible constructor arguments", fname);
  if (kind == K_ATTR && p[0]->kind != SR_V_STR)
    return sr_raise(I, "TypeError", "%s(): incompatible constructor arguments", fname);
  return key_new(kind, sr_ref(p[0]));
}

static SrVal *bi_seq_key(SrInterp *I, SrArgs *a) { return make_key(I, a, K_SEQ, "SequenceKey", "idx"); }
static SrVal *bi_dict_key(SrInterp *I, SrArgs *a) { return make_key(I, a, K_DICT, "DictKey", "key"); }
static SrVal *bi_attr_key(SrInterp *I, SrArgs *a) { return make_key(I, a, K_ATTR, "GetAttrKey", "name"); }
static SrVal *bi_flat_key(SrInterp *I, SrArgs *a) { return make_key(I, a, K_FLAT, "FlattenedIndexKey", "key"); }

/* ---- PyTreeDef ---- */

typedef SrTreeNode TNode;

typedef struct TreeDef {
  TNode *root;
} TreeDef;

static void treedef_free(void *d) {
  TreeDef *td = d;
  sr_tree_node_free(td->root);
  free(td);
}

static void treedef_repr(SrBuf *out, const SrVal *v) {
  const TreeDef *td = v->obj.data;
  sr_buf_puts(out, "PyTreeDef(");
  sr_tree_node_print(out, td->root);
  sr_buf_putc(out, ')');
}

static int tnode_equal(const TNode *a, const TNode *b) {
  if (!a->like || !b->like) return !a->like && !b->like;
  if (a->like->kind != b->like->kind || a->n != b->n) return 0;
  if (a->like->kind == SR_V_OBJ && strcmp(sr_val_kind_name(a->like), sr_val_kind_name(b->like)) != 0) return 0;
  if (a->head && b->head && strcmp(a->head, b->head) != 0) return 0; /* the aux data differ */
  for (int i = 0; i < a->n; i++) {
    if (a->keys && !sr_val_equal(a->keys[i], b->keys[i])) return 0;
    if (!tnode_equal(a->kid[i], b->kid[i])) return 0;
  }
  return 1;
}

static int treedef_equal(const SrVal *a, const SrVal *b) {
  return tnode_equal(((const TreeDef *)a->obj.data)->root, ((const TreeDef *)b->obj.data)->root);
}

/* PyTreeDef ==: the same structure, and a registered class's aux data
   equal by == (pytree.cc's operator==; its ValueError where == raises):
   1, 0, -1 */
static int tnode_eq(SrInterp *I, const TNode *a, const TNode *b) {
  if (!a->like || !b->like) return !a->like && !b->like;
  if (a->like->kind != b->like->kind || a->n != b->n) return 0;
  if (a->like->kind == SR_V_OBJ && strcmp(sr_val_kind_name(a->like), sr_val_kind_name(b->like)) != 0) return 0;
  SrVal *xa = a->like->kind == SR_V_OBJ ? sr_class_tree_aux(I, a->like) : NULL;
  SrVal *xb = xa ? sr_class_tree_aux(I, b->like) : NULL;
  if (I->exc) {
    sr_unref(xa);
    sr_unref(xb);
    return -1;
  }
  if (xa && xb) {
    SrVal *ta = sr_class_of(a->like), *tb = sr_class_of(b->like);
    SrVal *r = ta == tb ? sr_binop(I, SR_OP_EQ, xa, xb) : sr_bool(0);
    int t = r ? sr_truthy(I, r) : -1;
    sr_unref(r);
    sr_unref(xa);
    sr_unref(xb);
    if (t < 0) {
      SrBuf m = SR_BUF_INIT;
      sr_exc_clear(I);
      sr_to_repr(I, &m, ta);
      sr_raise(I, "ValueError", SR_PYTREE_EQ_MSG, sr_buf_str(&m));
      sr_buf_free(&m);
      return -1;
    }
    if (!t) return 0;
  } else {
    sr_unref(xa);
    sr_unref(xb);
    if (a->head && b->head && strcmp(a->head, b->head) != 0) return 0;
  }
  for (int i = 0; i < a->n; i++) {
    if (a->keys && !sr_val_equal(a->keys[i], b->keys[i])) return 0;
    int e = tnode_eq(I, a->kid[i], b->kid[i]);
    if (e <= 0) return e;
  }
  return 1;
}

static SrVal *treedef_binop(SrInterp *I, int op, SrVal *a, SrVal *b);
static SrVal *treedef_getattr(SrInterp *I, SrVal *self, const char *name);
static const SrLangOps treedef_ops = {.getattr = treedef_getattr, .binop = treedef_binop};
static const SrClass treedef_class = {"PyTreeDef", treedef_free, treedef_repr, NULL, &treedef_ops};

static SrVal *treedef_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  if (op != SR_OP_EQ && op != SR_OP_NE) return NULL;
  if (!sr_is_obj(a, &treedef_class) || !sr_is_obj(b, &treedef_class)) return sr_bool(op == SR_OP_NE);
  int e = tnode_eq(I, ((const TreeDef *)a->obj.data)->root, ((const TreeDef *)b->obj.data)->root);
  if (e < 0) return NULL;
  return sr_bool(op == SR_OP_EQ ? e : !e);
}

static SrVal *treedef_new(TNode *root) {
  TreeDef *td = sr_xcalloc(1, sizeof *td);
  td->root = root;
  return sr_obj(&treedef_class, td);
}

/* ---- flattening ---- */

typedef struct Walk {
  SrVal *is_leaf;  /* or NULL */
  SrVal *leaves;   /* a list */
  SrVal *paths;    /* a list of key-path tuples, or NULL */
  SrVal *path;     /* the keys down to the node being walked (a list) */
  int leaf_path;   /* is_leaf_takes_path: is_leaf(key_path, x) */
} Walk;

/* the key path to the node being walked, a new tuple */
static SrVal *walk_path(const Walk *w) {
  SrVal *p = sr_seq(NULL, SR_V_TUPLE, w->path->seq.n);
  for (int i = 0; i < w->path->seq.n; i++) sr_seq_push(NULL, p, sr_ref(w->path->seq.items[i]));
  return p;
}

/* collections.OrderedDict and defaultdict, nodes keyed as dicts are */
static int is_mapping_node(const SrVal *v) {
  return v->kind == SR_V_OBJ && (strcmp(sr_val_kind_name(v), "collections.OrderedDict") == 0 ||
                                 strcmp(sr_val_kind_name(v), "collections.defaultdict") == 0);
}

/* an OrderedDict's keys in insertion order, a defaultdict's sorted (the
   order of their children): a new list */
static SrVal *mapping_keys(SrInterp *I, SrVal *v) {
  SrVal *ks = sr_iterate(I, v);
  if (!ks || strcmp(sr_val_kind_name(v), "collections.defaultdict") != 0) return ks;
  SrVal *d = sr_dict(NULL);
  for (int i = 0; i < ks->seq.n; i++) sr_dict_set(NULL, d, sr_ref(ks->seq.items[i]), sr_none());
  int *o = sr_pytree_dict_order(d);
  SrVal *l = sr_seq(NULL, SR_V_LIST, ks->seq.n);
  for (int i = 0; i < ks->seq.n; i++) sr_seq_push(NULL, l, sr_ref(d->dict.keys[o[i]]));
  free(o);
  sr_unref(d);
  sr_unref(ks);
  return l;
}

/* the key of child i of node v (dkey: a dict's key for it) */
static SrVal *key_of(const SrVal *v, int i, SrVal *dkey) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) return key_new(K_SEQ, sr_int(NULL, i));
  if (v->kind == SR_V_DICT || (dkey && is_mapping_node(v))) return key_new(K_DICT, sr_ref(dkey));
  return key_new(K_FLAT, sr_int(NULL, i));
}

static SrVal *child_key(const SrVal *v, const TNode *t, int i) { return key_of(v, i, t->keys ? t->keys[i] : NULL); }

/* a registered class's keys (sr_class_tree_keys's pairs): its own key
   objects, or GetAttrKeys of field names */
static SrVal *class_key(const SrVal *pair) {
  SrVal *x = pair->seq.items[1];
  return pair->seq.items[0]->i == 1 ? key_new(K_ATTR, sr_ref(x)) : sr_ref(x);
}

static TNode *flatten_rec(SrInterp *I, SrVal *v, Walk *w, int depth) {
  if (depth > SR_VAL_MAX_NEST) {
    sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
    return NULL;
  }
  if (sr_interrupt_point(I)) {
    sr_raise(I, "KeyboardInterrupt", "interrupted");
    return NULL;
  }
  int leaf = 0;
  if (w->is_leaf) {
    SrVal *kp = w->leaf_path ? walk_path(w) : NULL, *args[2] = {kp, v};
    SrArgs ca = {kp ? 2 : 1, kp ? args : &args[1], 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, w->is_leaf, &ca);
    sr_unref(kp);
    if (!r) return NULL;
    leaf = sr_truthy(I, r);
    sr_unref(r);
    if (leaf < 0) return NULL;
  }
  if (!leaf && v->kind == SR_V_DICT && sr_pytree_dict_keys_sortable(I, v) < 0) return NULL;
  SrVal *ch = leaf ? NULL : sr_pytree_children(v);
  TNode *t = sr_xcalloc(1, sizeof *t);
  if (!ch) {
    t->nleaves = t->nnodes = 1;
    sr_seq_push(NULL, w->leaves, sr_ref(v));
    if (w->paths) sr_seq_push(NULL, w->paths, walk_path(w));
    return t;
  }
  t->like = sr_ref(v);
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->tree_head) { /* what a PyTreeDef prints of it: NAME[AUX] */
    SrBuf hb = SR_BUF_INIT;
    ops->tree_head(v, &hb);
    t->head = hb.len ? sr_buf_steal(&hb) : NULL;
    sr_buf_free(&hb);
    if (I->exc) {
      sr_unref(ch);
      sr_tree_node_free(t);
      return NULL;
    }
  }
  t->n = ch->seq.n;
  t->kid = sr_xcalloc((size_t)t->n + 1, sizeof *t->kid);
  if (v->kind == SR_V_DICT) {
    int *o = sr_pytree_dict_order(v);
    t->keys = sr_xcalloc((size_t)t->n + 1, sizeof *t->keys);
    for (int i = 0; i < t->n; i++) t->keys[i] = v->dict.keys[o[i]];
    free(o);
  } else if (is_mapping_node(v)) {
    /* JAX's OrderedDict (insertion order) and defaultdict (sorted keys)
       give DictKeys; the keys stay alive in v, which t holds */
    SrVal *ks = mapping_keys(I, v);
    t->keys = sr_xcalloc((size_t)t->n + 1, sizeof *t->keys);
    for (int i = 0; ks && i < t->n && i < ks->seq.n; i++) t->keys[i] = ks->seq.items[i];
    sr_unref(ks);
  }
  SrVal *okeys = NULL;
  if (w->paths && v->kind == SR_V_OBJ && !is_mapping_node(v)) {
    okeys = sr_class_tree_keys(I, v);
    if (I->exc) {
      sr_unref(ch);
      sr_tree_node_free(t);
      return NULL;
    }
  }
  t->nnodes = 1;
  for (int i = 0; i < t->n; i++) {
    if (w->paths)
      sr_seq_push(NULL, w->path, okeys && i < okeys->seq.n ? class_key(okeys->seq.items[i]) : child_key(v, t, i));
    t->kid[i] = flatten_rec(I, ch->seq.items[i], w, depth + 1);
    if (w->paths) {
      w->path->seq.n--;
      sr_unref(w->path->seq.items[w->path->seq.n]);
    }
    if (!t->kid[i]) {
      sr_unref(ch);
      sr_unref(okeys);
      sr_tree_node_free(t);
      return NULL;
    }
    t->nleaves += t->kid[i]->nleaves;
    t->nnodes += t->kid[i]->nnodes;
  }
  sr_unref(okeys);
  sr_unref(ch);
  return t;
}

/* Flattens tree: the leaves (a new list), the treedef, the paths (when
   paths is not NULL: a new list of key-path tuples).  NULL on error. */
static TNode *flatten_kp(SrInterp *I, SrVal *tree, SrVal *is_leaf, int leaf_path, SrVal **leaves, SrVal **paths) {
  Walk w = {is_leaf && is_leaf->kind != SR_V_NONE ? is_leaf : NULL, sr_seq(NULL, SR_V_LIST, 0),
            paths ? sr_seq(NULL, SR_V_LIST, 0) : NULL, sr_seq(NULL, SR_V_LIST, 0), leaf_path};
  TNode *t = flatten_rec(I, tree, &w, 0);
  sr_unref(w.path);
  if (!t) {
    sr_unref(w.leaves);
    sr_unref(w.paths);
    return NULL;
  }
  *leaves = w.leaves;
  if (paths) *paths = w.paths;
  return t;
}

static TNode *flatten(SrInterp *I, SrVal *tree, SrVal *is_leaf, SrVal **leaves, SrVal **paths) {
  return flatten_kp(I, tree, is_leaf, 0, leaves, paths);
}

static SrVal *unflatten_rec(const TNode *t, SrVal *leaves, int *it) {
  if (!t->like) return sr_ref(leaves->seq.items[(*it)++]);
  SrVal *ch = sr_seq(NULL, SR_V_LIST, t->n);
  for (int i = 0; i < t->n; i++) sr_seq_push(NULL, ch, unflatten_rec(t->kid[i], leaves, it));
  SrVal *r = sr_pytree_rebuild(t->like, ch);
  sr_unref(ch);
  return r;
}

/* PyTreeDef.unflatten(leaves): leaves any iterable */
static SrVal *unflatten(SrInterp *I, const TNode *t, SrVal *leaves_it) {
  SrVal *leaves = sr_iterate(I, leaves_it);
  if (!leaves) return NULL;
  SrVal *r = NULL;
  if (leaves->seq.n < t->nleaves)
    sr_raise(I, "ValueError", "Too few leaves for PyTreeDef; expected %d, got %d", t->nleaves, leaves->seq.n);
  else if (leaves->seq.n > t->nleaves)
    sr_raise(I, "ValueError", "Too many leaves for PyTreeDef; expected %d.", t->nleaves);
  else {
    int it = 0;
    r = unflatten_rec(t, leaves, &it);
  }
  sr_unref(leaves);
  return r;
}

static void raise_repr(SrInterp *I, const char *fmt, SrVal *x) {
  SrBuf b = SR_BUF_INIT;
  sr_to_repr(I, &b, x);
  sr_raise(I, "ValueError", fmt, b.p);
  sr_buf_free(&b);
}

/* PyTreeDef.flatten_up_to(x): pytree.cc's FlattenUpTo and its messages */
static int up_to_rec(SrInterp *I, const TNode *t, SrVal *x, SrVal *out) {
  if (!t->like) {
    sr_seq_push(NULL, out, sr_ref(x));
    return 0;
  }
  SrVal *v = t->like;
  if (v->kind == SR_V_NONE) {
    if (x->kind == SR_V_NONE) return 0;
    raise_repr(I,
               "Expected None, got %s.\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a "
               "tree-prefix of non-None values. To obtain the previous behavior, you can usually write:\n"
               "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, is_leaf=lambda x: x is None)",
               x);
    return -1;
  }
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    const char *what = v->kind == SR_V_TUPLE ? "tuple" : "list";
    if (x->kind != v->kind) {
      SrBuf f = SR_BUF_INIT;
      sr_buf_printf(&f, "Expected %s, got %%s.", what);
      raise_repr(I, f.p, x);
      sr_buf_free(&f);
      return -1;
    }
    if (x->seq.n != t->n) {
      SrBuf f = SR_BUF_INIT;
      sr_buf_printf(&f, "%s arity mismatch: %d != %d; %s: %%s.", v->kind == SR_V_TUPLE ? "Tuple" : "List", x->seq.n,
                    t->n, what);
      raise_repr(I, f.p, x);
      sr_buf_free(&f);
      return -1;
    }
    for (int i = 0; i < t->n; i++)
      if (up_to_rec(I, t->kid[i], x->seq.items[i], out) < 0) return -1;
    return 0;
  }
  if (v->kind == SR_V_DICT) {
    if (x->kind != SR_V_DICT) {
      raise_repr(I, "Expected dict, got %s.", x);
      return -1;
    }
    int *o = sr_pytree_dict_order(x);
    int same = x->dict.n == t->n;
    for (int i = 0; i < t->n && same; i++) same = sr_val_equal(x->dict.keys[o[i]], t->keys[i]);
    if (!same) {
      SrBuf b = SR_BUF_INIT;
      sr_buf_puts(&b, "Dict key mismatch; expected keys: [");
      for (int i = 0; i < t->n; i++) {
        if (i) sr_buf_puts(&b, ", ");
        sr_val_repr(&b, t->keys[i]);
      }
      sr_buf_puts(&b, "]; present keys: [");
      for (int i = 0; i < x->dict.n; i++) {
        if (i) sr_buf_puts(&b, ", ");
        sr_val_repr(&b, x->dict.keys[o[i]]);
      }
      sr_buf_puts(&b, "].");
      sr_raise(I, "ValueError", "%s", b.p);
      sr_buf_free(&b);
      free(o);
      return -1;
    }
    int rc = 0;
    for (int i = 0; i < t->n && rc == 0; i++) rc = up_to_rec(I, t->kid[i], x->dict.vals[o[i]], out);
    free(o);
    return rc;
  }
  SrVal *tv = sr_type_of(I, v), *tx = sr_type_of(I, x), *same = tv && tx ? sr_binop(I, SR_OP_IS, tv, tx) : NULL;
  int same_type = same && sr_val_truthy(same);
  sr_unref(same);
  SrBuf b = SR_BUF_INIT, tb = SR_BUF_INIT;
  sr_to_repr(I, &b, x);
  if (tv) sr_to_repr(I, &tb, tv);
  sr_unref(tv);
  sr_unref(tx);
  SrVal *ch = NULL;
  int rc = 0;
  if (sr_class_namedtuple_kind(v) == 2) { /* pytree.cc's FlattenUpTo, kNamedTuple */
    ch = sr_class_namedtuple_kind(x) ? sr_iterate(I, x) : NULL;
    if (!ch) {
      sr_exc_clear(I);
      sr_raise(I, "ValueError", "Expected named tuple, got %s.", b.p);
      rc = -1;
    } else if (ch->seq.n != t->n) {
      sr_raise(I, "ValueError", "Named tuple arity mismatch: %d != %d; tuple: %s.", ch->seq.n, t->n, b.p);
      rc = -1;
    } else if (!same_type) {
      sr_raise(I, "ValueError", "Named tuple type mismatch: expected type: %s, tuple: %s.", tb.p, b.p);
      rc = -1;
    }
  } else { /* kCustom, kDataclass: the type, the aux data, the arity */
    const char *dc = sr_class_tree_kind(v) == SR_TREE_DATACLASS ? " dataclass" : "";
    if (!same_type) {
      sr_raise(I, "ValueError", "Custom%s node type mismatch: expected type: %s, value: %s.", dc, tb.p, b.p);
      rc = -1;
    }
    SrVal *av = rc == 0 ? sr_class_tree_aux(I, v) : NULL, *ax = av ? sr_class_tree_aux(I, x) : NULL;
    if (ax) {
      SrVal *ne = sr_binop(I, SR_OP_NE, av, ax);
      int differ = ne ? sr_truthy(I, ne) : -1;
      sr_unref(ne);
      if (differ > 0) {
        SrBuf ra = SR_BUF_INIT, rx = SR_BUF_INIT;
        sr_to_repr(I, &ra, av);
        sr_to_repr(I, &rx, ax);
        sr_raise(I, "ValueError", "Mismatch custom%s node data: %s != %s; value: %s.", dc, ra.p, rx.p, b.p);
        sr_buf_free(&ra);
        sr_buf_free(&rx);
      }
      if (differ) rc = -1;
    }
    sr_unref(av);
    sr_unref(ax);
    if (I->exc) rc = -1;
    if (rc == 0) {
      ch = sr_pytree_children(x);
      if (I->exc) {
        rc = -1;
      } else if (!ch || ch->seq.n != t->n) {
        sr_raise(I, "ValueError", "Custom type arity mismatch: %d != %d; value: %s.", ch ? ch->seq.n : 0, t->n, b.p);
        rc = -1;
      }
    }
  }
  sr_buf_free(&b);
  sr_buf_free(&tb);
  if (rc < 0) {
    sr_unref(ch);
    return -1;
  }
  for (int i = 0; i < t->n && rc == 0; i++) rc = up_to_rec(I, t->kid[i], ch->seq.items[i], out);
  sr_unref(ch);
  return rc;
}

static SrVal *flatten_up_to(SrInterp *I, const TNode *t, SrVal *x) {
  if (sr_pytree_check_depth(I, x) < 0) return NULL;
  SrVal *out = sr_seq(NULL, SR_V_LIST, t->nleaves);
  if (up_to_rec(I, t, x, out) < 0) {
    sr_unref(out);
    return NULL;
  }
  return out;
}

/* sr_pytree_prefix_errors' collection: the messages, separated by
   newlines, and their count; full's leaves are api_util's PytreeLeaf */
static SrBuf *collect_buf;
static int collect_n;

/* tree_util._prefix_error: the first place the trees differ, for
   tree_map's message (NULL where none of its cases says). */
static int prefix_error(SrInterp *I, SrVal *pre, SrVal *full, SrVal *path, const char *name, SrVal *is_leaf) {
  if (is_leaf && is_leaf->kind != SR_V_NONE) {
    SrArgs ca = {1, &pre, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, is_leaf, &ca);
    int l = r ? sr_truthy(I, r) : -1;
    sr_unref(r);
    if (l != 0) return l < 0 ? -1 : 0;
  }
  SrVal *pc = sr_pytree_children(pre);
  if (!pc) return 0;
  SrBuf ks = SR_BUF_INIT;
  for (int i = 0; i < path->seq.n; i++) sr_val_str(&ks, path->seq.items[i]);
  const char *tp = sr_val_kind_name(pre), *tf = sr_val_kind_name(full);
  int rc = 0;
  SrVal *fc = NULL;
  if (collect_buf) {
    SrVal *c = sr_pytree_children(full);
    if (!c) tf = "jax._src.api_util.PytreeLeaf";
    sr_unref(c);
  }
  if (collect_buf && (pre->kind != full->kind || strcmp(tp, tf) != 0)) {
    if (collect_n++) sr_buf_putc(collect_buf, '\n');
    sr_buf_printf(collect_buf,
                  "pytree structure error: different types at key path\n    %s%s\nAt that key path, the prefix pytree "
                  "%s has a subtree of type\n    <class '%s'>\nbut at the same key path the full pytree has a subtree "
                  "of different type\n    <class '%s'>.",
                  name, sr_buf_str(&ks), name, tp, tf);
    goto out;
  }
  if (pre->kind != full->kind || strcmp(tp, tf) != 0) {
    sr_raise(I, "ValueError",
             "pytree structure error: different types at key path\n    %s%s\nAt that key path, the prefix pytree %s "
             "has a subtree of type\n    <class '%s'>\nbut at the same key path the full pytree has a subtree of "
             "different type\n    <class '%s'>.",
             name, sr_buf_str(&ks), name, tp, tf);
    rc = -1;
    goto out;
  }
  fc = sr_pytree_children(full);
  if (collect_buf && (pre->kind == SR_V_LIST || pre->kind == SR_V_TUPLE) && pre->seq.n != full->seq.n) {
    if (collect_n++) sr_buf_putc(collect_buf, '\n');
    sr_buf_printf(collect_buf,
                  "pytree structure error: different lengths of %s at key path\n    %s%s\nAt that key path, the "
                  "prefix pytree %s has a subtree of type %s of length %d, but the full pytree has a subtree of the "
                  "same type but of length %d.",
                  tp, name, sr_buf_str(&ks), name, tp, pre->seq.n, full->seq.n);
    goto out;
  }
  if ((pre->kind == SR_V_LIST || pre->kind == SR_V_TUPLE) && pre->seq.n != full->seq.n) {
    sr_raise(I, "ValueError",
             "pytree structure error: different lengths of %s at key path\n    %s%s\nAt that key path, the prefix "
             "pytree %s has a subtree of type %s of length %d, but the full pytree has a subtree of the same type "
             "but of length %d.",
             tp, name, sr_buf_str(&ks), name, tp, pre->seq.n, full->seq.n);
    rc = -1;
    goto out;
  }
  if (pre->kind == SR_V_DICT && pre->dict.n != full->dict.n) {
    /* _prefix_error's different numbers of children: the child keys of
       each (sorted) and their symmetric difference */
    int *o = sr_pytree_dict_order(pre), *q = sr_pytree_dict_order(full);
    SrBuf pk = SR_BUF_INIT, fk = SR_BUF_INIT, dk = SR_BUF_INIT;
    for (int pass = 0; pass < 2; pass++) {
      const SrVal *x = pass ? full : pre, *y = pass ? pre : full;
      const int *ox = pass ? q : o;
      SrBuf *kb = pass ? &fk : &pk;
      for (int i = 0; i < x->dict.n; i++) {
        SrVal *k = x->dict.keys[ox[i]];
        sr_buf_puts(kb, i ? " [" : "[");
        sr_val_repr(kb, k);
        sr_buf_putc(kb, ']');
        int in = 0;
        for (int j = 0; j < y->dict.n && !in; j++) in = sr_val_equal(k, y->dict.keys[j]);
        if (in) continue;
        sr_buf_puts(&dk, dk.len ? " [" : "[");
        sr_val_repr(&dk, k);
        sr_buf_putc(&dk, ']');
      }
    }
    sr_raise(I, "ValueError",
             "pytree structure error: different numbers of pytree children at key path\n    %s%s\nAt that key path, "
             "the prefix pytree %s has a subtree of type\n    <class 'dict'>\nwith %d child keys\n    %s\nbut at the "
             "same key path the full pytree has a subtree of the same type but with %d child keys\n    %s\nso the "
             "symmetric difference on key sets is\n    %s",
             name, sr_buf_str(&ks), name, pre->dict.n, sr_buf_str(&pk), full->dict.n, sr_buf_str(&fk),
             sr_buf_str(&dk));
    free(o);
    free(q);
    sr_buf_free(&pk);
    sr_buf_free(&fk);
    sr_buf_free(&dk);
    rc = -1;
    goto out;
  }
  if (!fc || fc->seq.n != pc->seq.n) goto out;
  if (pre->kind == SR_V_DICT) {
    /* the same keys, else flatten_up_to's message stands */
    int *o = sr_pytree_dict_order(pre), *q = sr_pytree_dict_order(full);
    int same = 1;
    for (int i = 0; i < pre->dict.n && same; i++) same = sr_val_equal(pre->dict.keys[o[i]], full->dict.keys[q[i]]);
    free(o);
    free(q);
    if (!same) goto out;
  }
  for (int i = 0; i < pc->seq.n && rc == 0; i++) {
    int *o = pre->kind == SR_V_DICT ? sr_pytree_dict_order(pre) : NULL;
    sr_seq_push(NULL, path, key_of(pre, i, o ? pre->dict.keys[o[i]] : NULL));
    free(o);
    rc = prefix_error(I, pc->seq.items[i], fc->seq.items[i], path, name, NULL);
    path->seq.n--;
    sr_unref(path->seq.items[path->seq.n]);
  }
out:
  sr_buf_free(&ks);
  sr_unref(pc);
  sr_unref(fc);
  return rc;
}

int sr_pytree_prefix_error(SrInterp *I, SrVal *prefix, SrVal *full, const char *name) {
  SrVal *path = sr_seq(NULL, SR_V_LIST, 0);
  int rc = 0;
  if (prefix->kind != SR_V_NONE) rc = prefix_error(I, prefix, full, path, name, NULL);
  sr_unref(path);
  return rc;
}

int sr_pytree_prefix_errors(SrInterp *I, SrVal *prefix, SrVal *full, const char *name, SrBuf *out) {
  SrVal *path = sr_seq(NULL, SR_V_LIST, 0);
  SrBuf *saved = collect_buf;
  int saved_n = collect_n;
  collect_buf = out;
  collect_n = 0;
  int rc = prefix_error(I, prefix, full, path, name, NULL);
  int n = collect_n;
  collect_buf = saved;
  collect_n = saved_n;
  sr_unref(path);
  return rc < 0 ? -1 : n;
}

/* ---- the functions ---- */

static SrVal *bi_flatten(SrInterp *I, SrArgs *a) {
  SrVal *p[2], *leaves;
  if (sr_args_parse(I, a, "tree_flatten", "tree, is_leaf=", p) < 0) return NULL;
  TNode *t = flatten(I, p[0], p[1], &leaves, NULL);
  if (!t) return NULL;
  SrVal *items[2] = {leaves, treedef_new(t)};
  return sr_tuple(NULL, 2, items);
}

static SrVal *bi_leaves(SrInterp *I, SrArgs *a) {
  SrVal *p[2], *leaves;
  if (sr_args_parse(I, a, "tree_leaves", "tree, is_leaf=", p) < 0) return NULL;
  TNode *t = flatten(I, p[0], p[1], &leaves, NULL);
  if (!t) return NULL;
  sr_tree_node_free(t);
  return leaves;
}

static SrVal *bi_structure(SrInterp *I, SrArgs *a) {
  SrVal *p[2], *leaves;
  if (sr_args_parse(I, a, "tree_structure", "tree, is_leaf=", p) < 0) return NULL;
  TNode *t = flatten(I, p[0], p[1], &leaves, NULL);
  if (!t) return NULL;
  sr_unref(leaves);
  return treedef_new(t);
}

static const TNode *treedef_arg(SrInterp *I, SrVal *v, const char *fname) {
  if (sr_is_obj(v, &treedef_class)) return ((const TreeDef *)v->obj.data)->root;
  sr_raise(I, "TypeError", "%s(): incompatible function arguments: expected a PyTreeDef, got %s", fname,
           sr_val_kind_name(v));
  return NULL;
}

static SrVal *bi_unflatten(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "tree_unflatten", "treedef, leaves", p) < 0) return NULL;
  const TNode *t = treedef_arg(I, p[0], "unflatten");
  return t ? unflatten(I, t, p[1]) : NULL;
}

/* tree_map / tree_map_with_path: f(*xs) for the leaves of tree and the
   leaves of each of rest up to tree's structure */
static SrVal *map_common(SrInterp *I, SrArgs *a, int with_path) {
  const char *fname = with_path ? "tree_map_with_path" : "tree_map";
  SrVal *is_leaf = NULL;
  int leaf_path = 0;
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "is_leaf") == 0) is_leaf = a->kwv[k];
    else if (with_path && strcmp(a->kw[k], "is_leaf_takes_path") == 0) leaf_path = sr_val_truthy(a->kwv[k]);
    else return sr_raise(I, "TypeError", "%s() got an unexpected keyword argument '%s'", fname, a->kw[k]);
  }
  if (a->n < 2)
    return sr_raise(I, "TypeError", "%s() missing required positional argument: '%s'", fname, a->n ? "tree" : "f");
  SrVal *leaves, *paths = NULL;
  TNode *t = flatten_kp(I, a->v[1], is_leaf, leaf_path, &leaves, with_path ? &paths : NULL);
  if (!t) return NULL;
  if (leaf_path) is_leaf = NULL; /* _prefix_error's is_leaf takes one argument */
  int nt = a->n - 1, ok = 1;
  SrVal **ls = sr_xcalloc((size_t)nt + 1, sizeof *ls);
  ls[0] = leaves;
  for (int k = 1; k < nt && ok; k++) {
    ls[k] = flatten_up_to(I, t, a->v[1 + k]);
    if (!ls[k]) {
      /* the _prefix_error message where it has one */
      SrVal *saved = I->exc;
      I->exc = NULL;
      SrVal *path = sr_seq(NULL, SR_V_LIST, 0);
      char name[32];
      snprintf(name, sizeof name, "%s tree", fname);
      if (prefix_error(I, a->v[1], a->v[1 + k], path, name, is_leaf) < 0) {
        sr_unref(saved);
      } else {
        sr_exc_clear(I);
        I->exc = saved;
      }
      sr_unref(path);
      ok = 0;
    }
  }
  SrVal *outs = sr_seq(NULL, SR_V_LIST, t->nleaves);
  int extra = with_path ? 1 : 0;
  SrVal **argv = sr_xcalloc((size_t)nt + 2, sizeof *argv);
  for (int i = 0; ok && i < t->nleaves; i++) {
    if (with_path) argv[0] = paths->seq.items[i];
    for (int k = 0; k < nt; k++) argv[extra + k] = ls[k]->seq.items[i];
    SrArgs ca = {nt + extra, argv, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, a->v[0], &ca);
    if (!r) ok = 0;
    else sr_seq_push(NULL, outs, r);
  }
  free(argv);
  SrVal *res = NULL;
  if (ok) {
    int it = 0;
    res = unflatten_rec(t, outs, &it);
  }
  sr_unref(outs);
  for (int k = 0; k < nt; k++) sr_unref(ls[k]);
  free(ls);
  sr_unref(paths);
  sr_tree_node_free(t);
  return res;
}

static SrVal *bi_map(SrInterp *I, SrArgs *a) { return map_common(I, a, 0); }
static SrVal *bi_map_with_path(SrInterp *I, SrArgs *a) { return map_common(I, a, 1); }

/* tree_reduce(function, tree, initializer=, is_leaf=): functools.reduce
   over the leaves */
static SrVal *bi_reduce(SrInterp *I, SrArgs *a) {
  SrVal *p[4], *leaves;
  if (sr_args_parse(I, a, "tree_reduce", "function, tree, initializer=, is_leaf=", p) < 0) return NULL;
  TNode *t = flatten(I, p[1], p[3], &leaves, NULL);
  if (!t) return NULL;
  sr_tree_node_free(t);
  int i = 0;
  SrVal *acc;
  if (p[2]) {
    acc = sr_ref(p[2]);
  } else if (leaves->seq.n) {
    acc = sr_ref(leaves->seq.items[i++]);
  } else {
    sr_unref(leaves);
    return sr_raise(I, "TypeError", "reduce() of empty iterable with no initial value");
  }
  for (; i < leaves->seq.n && acc; i++) {
    SrVal *argv[2] = {acc, leaves->seq.items[i]};
    SrArgs ca = {2, argv, 0, NULL, NULL, NULL};
    SrVal *r = sr_call(I, p[0], &ca);
    sr_unref(acc);
    acc = r;
  }
  sr_unref(leaves);
  return acc;
}

/* tree_all(tree, *, is_leaf=None): all(tree_leaves(tree)) */
static SrVal *bi_all(SrInterp *I, SrArgs *a) {
  SrVal *p[2], *leaves;
  if (sr_args_parse(I, a, "tree_all", "tree, *, is_leaf=", p) < 0) return NULL;
  TNode *t = flatten(I, p[0], p[1], &leaves, NULL);
  if (!t) return NULL;
  sr_tree_node_free(t);
  int all = 1;
  for (int i = 0; i < leaves->seq.n && all == 1; i++) all = sr_truthy(I, leaves->seq.items[i]);
  sr_unref(leaves);
  return all < 0 ? NULL : sr_bool(all);
}

/* outer.compose(inner): inner's structure at each leaf of outer */
static TNode *compose(const TNode *o, const TNode *in) {
  const TNode *src = o->like ? o : in;
  TNode *t = sr_xcalloc(1, sizeof *t);
  t->like = src->like ? sr_ref(src->like) : NULL;
  if (src->head) t->head = sr_xstrdup(src->head);
  t->n = src->n;
  t->kid = sr_xcalloc((size_t)t->n + 1, sizeof *t->kid);
  if (src->keys) {
    t->keys = sr_xcalloc((size_t)t->n + 1, sizeof *t->keys);
    memcpy(t->keys, src->keys, (size_t)t->n * sizeof *t->keys);
  }
  t->nnodes = 1;
  t->nleaves = src->like ? 0 : 1;
  for (int i = 0; i < t->n; i++) {
    t->kid[i] = o->like ? compose(o->kid[i], in) : compose(in->kid[i], in->kid[i]);
    t->nleaves += t->kid[i]->nleaves;
    t->nnodes += t->kid[i]->nnodes;
  }
  return t;
}

/* tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose) */
static SrVal *bi_transpose(SrInterp *I, SrArgs *a) {
  SrVal *p[3], *flat;
  if (sr_args_parse(I, a, "tree_transpose", "outer_treedef, inner_treedef, pytree_to_transpose", p) < 0) return NULL;
  const TNode *outer = treedef_arg(I, p[0], "tree_transpose");
  if (!outer) return NULL;
  TNode *tree = flatten(I, p[2], NULL, &flat, NULL);
  if (!tree) return NULL;
  sr_tree_node_free(tree);
  TNode *inner_made = NULL;
  const TNode *inner;
  if (p[1]->kind == SR_V_NONE) {
    SrVal *up = flatten_up_to(I, outer, p[2]);
    SrVal *l0 = NULL;
    if (up && up->seq.n) inner_made = flatten(I, up->seq.items[0], NULL, &l0, NULL);
    sr_unref(l0);
    sr_unref(up);
    if (!inner_made) {
      sr_unref(flat);
      return NULL;
    }
    inner = inner_made;
  } else {
    inner = treedef_arg(I, p[1], "tree_transpose");
    if (!inner) {
      sr_unref(flat);
      return NULL;
    }
  }
  int ni = inner->nleaves, no = outer->nleaves;
  SrVal *res = NULL;
  if (flat->seq.n != ni * no) {
    TNode *exp = compose(outer, inner);
    SrBuf b = SR_BUF_INIT;
    SrVal *td = NULL, *tl = NULL;
    TNode *got = flatten(I, p[2], NULL, &tl, NULL);
    sr_unref(tl);
    td = treedef_new(got);
    SrVal *ed = treedef_new(exp);
    sr_val_repr(&b, td);
    sr_buf_puts(&b, "\n != \n");
    sr_val_repr(&b, ed);
    sr_raise(I, "TypeError", "Mismatch\n%s", b.p);
    sr_buf_free(&b);
    sr_unref(td);
    sr_unref(ed);
  } else {
    SrVal *subs = sr_seq(NULL, SR_V_LIST, ni);
    for (int i = 0; i < ni; i++) {
      SrVal *col = sr_seq(NULL, SR_V_LIST, no);
      for (int k = 0; k < no; k++) sr_seq_push(NULL, col, sr_ref(flat->seq.items[k * ni + i]));
      int it = 0;
      sr_seq_push(NULL, subs, unflatten_rec(outer, col, &it));
      sr_unref(col);
    }
    int it = 0;
    res = unflatten_rec(inner, subs, &it);
    sr_unref(subs);
  }
  sr_tree_node_free(inner_made);
  sr_unref(flat);
  return res;
}

static SrVal *bi_flatten_with_path(SrInterp *I, SrArgs *a) {
  SrVal *p[3], *leaves, *paths;
  if (sr_args_parse(I, a, "tree_flatten_with_path", "tree, is_leaf=, is_leaf_takes_path=", p) < 0) return NULL;
  TNode *t = flatten_kp(I, p[0], p[1], p[2] && sr_val_truthy(p[2]), &leaves, &paths);
  if (!t) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, leaves->seq.n);
  for (int i = 0; i < leaves->seq.n; i++) {
    SrVal *pair[2] = {sr_ref(paths->seq.items[i]), sr_ref(leaves->seq.items[i])};
    sr_seq_push(NULL, l, sr_tuple(NULL, 2, pair));
  }
  sr_unref(leaves);
  sr_unref(paths);
  SrVal *items[2] = {l, treedef_new(t)};
  return sr_tuple(NULL, 2, items);
}

static SrVal *bi_leaves_with_path(SrInterp *I, SrArgs *a) {
  SrVal *r = bi_flatten_with_path(I, a);
  if (!r) return NULL;
  SrVal *l = sr_ref(r->seq.items[0]);
  sr_unref(r);
  return l;
}

/* keystr(keys, *, simple=False, separator='') */
static SrVal *bi_keystr(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "keystr", "keys, *, simple=, separator=", p) < 0) return NULL;
  SrVal *keys = sr_iterate(I, p[0]);
  if (!keys) return NULL;
  int simple = p[1] && sr_val_truthy(p[1]);
  if (p[2] && p[2]->kind != SR_V_STR) {
    sr_unref(keys);
    return sr_raise(I, "TypeError", "sequence item 0: expected str instance, %s found", sr_val_kind_name(p[2]));
  }
  SrBuf b = SR_BUF_INIT;
  int rc = 0;
  for (int i = 0; i < keys->seq.n && rc == 0; i++) {
    if (i && p[2]) sr_buf_printf(&b, "%.*s", (int)p[2]->str.n, p[2]->str.s);
    SrVal *k = keys->seq.items[i];
    const SrClass *c = k->kind == SR_V_OBJ ? k->obj.cls : NULL;
    if (simple && (c == &seq_key_class || c == &dict_key_class || c == &attr_key_class || c == &flat_key_class))
      rc = sr_to_str(I, &b, ((Key *)k->obj.data)->v);
    else
      rc = sr_to_str(I, &b, k);
  }
  sr_unref(keys);
  SrVal *r = rc == 0 ? sr_str_cstr(NULL, sr_buf_str(&b)) : NULL;
  sr_buf_free(&b);
  return r;
}

/* ---- PyTreeDef's attributes and methods ---- */

static SrVal *m_td_unflatten(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "unflatten() takes exactly one argument (%d given)", a->n);
  return unflatten(I, ((TreeDef *)a->self->obj.data)->root, a->v[0]);
}

static SrVal *m_td_flatten_up_to(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "flatten_up_to() takes exactly one argument (%d given)", a->n);
  return flatten_up_to(I, ((TreeDef *)a->self->obj.data)->root, a->v[0]);
}

static TNode *tnode_copy(const TNode *s) {
  TNode *t = sr_xcalloc(1, sizeof *t);
  *t = *s;
  if (t->like) sr_ref(t->like);
  if (s->head) t->head = sr_xstrdup(s->head);
  t->kid = sr_xcalloc((size_t)s->n + 1, sizeof *t->kid);
  for (int i = 0; i < s->n; i++) t->kid[i] = tnode_copy(s->kid[i]);
  if (s->keys) {
    t->keys = sr_xcalloc((size_t)s->n + 1, sizeof *t->keys);
    memcpy(t->keys, s->keys, (size_t)s->n * sizeof *t->keys);
  }
  return t;
}

static SrVal *m_td_children(SrInterp *I, SrArgs *a) {
  (void)I;
  const TNode *t = ((TreeDef *)a->self->obj.data)->root;
  SrVal *l = sr_seq(NULL, SR_V_LIST, t->n);
  for (int i = 0; i < t->n; i++) sr_seq_push(NULL, l, treedef_new(tnode_copy(t->kid[i])));
  return l;
}

static SrVal *m_td_walk(SrInterp *I, SrArgs *a);

static SrVal *m_td_compose(SrInterp *I, SrArgs *a) {
  if (a->n != 1) return sr_raise(I, "TypeError", "compose() takes exactly one argument (%d given)", a->n);
  const TNode *in = treedef_arg(I, a->v[0], "compose");
  return in ? treedef_new(compose(((TreeDef *)a->self->obj.data)->root, in)) : NULL;
}

static SrVal *treedef_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const TNode *t = ((TreeDef *)self->obj.data)->root;
  if (strcmp(name, "num_leaves") == 0) return sr_int(NULL, t->nleaves);
  if (strcmp(name, "num_nodes") == 0) return sr_int(NULL, t->nnodes);
  if (strcmp(name, "unflatten") == 0) return sr_bound_method(self, name, m_td_unflatten);
  if (strcmp(name, "flatten_up_to") == 0) return sr_bound_method(self, name, m_td_flatten_up_to);
  if (strcmp(name, "children") == 0) return sr_bound_method(self, name, m_td_children);
  if (strcmp(name, "compose") == 0) return sr_bound_method(self, name, m_td_compose);
  if (strcmp(name, "walk") == 0) return sr_bound_method(self, name, m_td_walk);
  return NULL;
}

/* treedef_is_leaf(treedef), treedef_children(treedef) */
/* flatten_one_level(tree) / flatten_one_level_with_keys(tree): the
   root's children (a list; with keys, (key, child) pairs) and its aux
   data -- None for a list, tuple or None, a dict's sorted keys, a
   namedtuple's class, a registered class's aux_data; a leaf is
   ValueError (tree_util.flatten_one_level's) */
static SrVal *node_one_level(SrInterp *I, SrVal *v, int with_keys) {
  SrVal *ch = sr_pytree_children(v);
  if (I->exc) {
    sr_unref(ch);
    return NULL;
  }
  if (!ch) {
    SrVal *tfn = sr_lookup_qualname("builtins.type");
    SrVal *ty = tfn ? sr_call1(I, tfn, v) : NULL;
    if (!ty) return NULL;
    SrBuf b = SR_BUF_INIT;
    sr_to_repr(I, &b, ty);
    sr_raise(I, "ValueError", "can't tree-flatten type: %s", sr_buf_str(&b));
    sr_buf_free(&b);
    sr_unref(ty);
    return NULL;
  }
  SrVal *aux = NULL, *keys = NULL, *mkeys = NULL;
  int *o = v->kind == SR_V_DICT ? sr_pytree_dict_order(v) : NULL;
  if (v->kind == SR_V_DICT) {
    aux = sr_seq(NULL, SR_V_TUPLE, v->dict.n);
    for (int i = 0; i < v->dict.n; i++) sr_seq_push(NULL, aux, sr_ref(v->dict.keys[o[i]]));
  } else if (is_mapping_node(v)) {
    /* tree_util.py's registrations: an OrderedDict's keys, a
       defaultdict's (default_factory, sorted keys) */
    mkeys = mapping_keys(I, v);
    SrVal *kt = sr_seq(NULL, SR_V_TUPLE, mkeys ? mkeys->seq.n : 0);
    for (int i = 0; mkeys && i < mkeys->seq.n; i++) sr_seq_push(NULL, kt, sr_ref(mkeys->seq.items[i]));
    if (strcmp(sr_val_kind_name(v), "collections.defaultdict") == 0) {
      SrVal *f = sr_getattr(I, v, "default_factory");
      aux = f ? sr_pair(f, kt) : NULL;
      if (!f) sr_unref(kt);
    } else {
      aux = kt;
    }
  } else if (v->kind == SR_V_OBJ) {
    aux = sr_class_tree_aux(I, v);
    if (!aux && !I->exc) aux = sr_none();
    if (with_keys && aux) keys = sr_class_tree_keys(I, v);
  } else {
    aux = sr_none();
  }
  if (!aux || I->exc) {
    free(o);
    sr_unref(aux);
    sr_unref(keys);
    sr_unref(mkeys);
    sr_unref(ch);
    return NULL;
  }
  /* pytree.cc's FlattenOneLevel: a tuple's or list's children are itself
     (with keys, a tuple of pairs), None's and a dict's a tuple, the
     others' a list */
  int as_tuple = v->kind == SR_V_NONE || v->kind == SR_V_DICT || v->kind == SR_V_TUPLE || v->kind == SR_V_LIST;
  if (with_keys) {
    SrVal *l = sr_seq(NULL, as_tuple ? SR_V_TUPLE : SR_V_LIST, ch->seq.n);
    for (int i = 0; i < ch->seq.n; i++) {
      SrVal *dk = o ? v->dict.keys[o[i]] : mkeys && i < mkeys->seq.n ? mkeys->seq.items[i] : NULL;
      SrVal *k = keys && i < keys->seq.n ? class_key(keys->seq.items[i]) : key_of(v, i, dk);
      SrVal *pr[2] = {k, sr_ref(ch->seq.items[i])};
      sr_seq_push(NULL, l, sr_tuple(NULL, 2, pr));
    }
    sr_unref(ch);
    ch = l;
  } else if (v->kind == SR_V_TUPLE || v->kind == SR_V_LIST) {
    sr_unref(ch);
    ch = sr_ref(v);
  } else if (as_tuple) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, ch->seq.n);
    for (int i = 0; i < ch->seq.n; i++) sr_seq_push(NULL, t, sr_ref(ch->seq.items[i]));
    sr_unref(ch);
    ch = t;
  }
  free(o);
  sr_unref(keys);
  sr_unref(mkeys);
  SrVal *items[2] = {ch, aux};
  return sr_tuple(NULL, 2, items);
}

static SrVal *one_level(SrInterp *I, SrArgs *a, int with_keys) {
  SrVal *p[1];
  if (sr_args_parse(I, a, with_keys ? "flatten_one_level_with_keys" : "flatten_one_level", "pytree", p) < 0)
    return NULL;
  return node_one_level(I, p[0], with_keys);
}

static SrVal *bi_one_level(SrInterp *I, SrArgs *a) { return one_level(I, a, 0); }
static SrVal *bi_one_level_with_keys(SrInterp *I, SrArgs *a) { return one_level(I, a, 1); }

/* ---- tree_util.prefix_errors ---- */

/* NAME stands for the name e(name) is called with in a message */
#define PE_NAME "\x01"

static void pe_free(void *d) { free(d); }

/* e(name): the ValueError of the message with name in it */
static SrVal *pe_call(SrInterp *I, SrArgs *a) {
  const char *msg = sr_current_builtin(I)->data;
  if (a->n != 1 || a->v[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "<lambda>() takes a name (str)");
  SrBuf b = SR_BUF_INIT;
  for (const char *c = msg; *c; c++) {
    if (*c == PE_NAME[0]) sr_buf_printf(&b, "%.*s", (int)a->v[0]->str.n, a->v[0]->str.s);
    else sr_buf_putc(&b, *c);
  }
  SrVal *e = sr_exc_new("ValueError", sr_buf_str(&b), 0);
  sr_buf_free(&b);
  return e;
}

static void pe_push(SrVal *out, SrBuf *m) {
  sr_seq_push(NULL, out, sr_builtin_with("<lambda>", pe_call, sr_buf_steal(m), pe_free));
  sr_buf_free(m);
}

/* the keys of a node's (key, child) pairs, each str()'d, joined by " " */
static void join_keys(SrBuf *out, SrVal *pairs, SrVal *not_in) {
  int n = 0;
  for (int i = 0; i < pairs->seq.n; i++) {
    SrVal *k = pairs->seq.items[i]->seq.items[0];
    int in = 0;
    for (int j = 0; not_in && j < not_in->seq.n && !in; j++) in = sr_val_equal(k, not_in->seq.items[j]->seq.items[0]);
    if (in) continue;
    if (n++) sr_buf_putc(out, ' ');
    sr_val_str(out, k);
  }
}

/* difflib.ndiff of two one-line texts as _prefix_error indents it: the
   "? " lines marking the characters replaced when the lines have one
   length and agree at 3/4 of their places (SequenceMatcher's cutoff);
   other lines are "- a" and "+ b" (ndiff's finer hints for insertions
   are not made) */
static void meta_diff(SrBuf *out, const char *a, const char *b) {
  size_t n = strlen(a), same = 0;
  int fancy = n && n == strlen(b) && !strchr(a, '\n') && !strchr(b, '\n');
  for (size_t i = 0; fancy && i < n; i++) same += a[i] == b[i];
  if (fancy && 4 * same >= 3 * n && same < n) {
    size_t last = 0;
    for (size_t i = 0; i < n; i++)
      if (a[i] != b[i]) last = i + 1;
    for (int pass = 0; pass < 2; pass++) {
      sr_buf_printf(out, "%s    %c %s\n    ? ", pass ? "\n" : "", pass ? '+' : '-', pass ? b : a);
      for (size_t i = 0; i < last; i++) sr_buf_putc(out, a[i] != b[i] ? '^' : ' ');
      sr_buf_putc(out, '\n');
    }
    return;
  }
  if (strcmp(a, b) != 0) sr_buf_printf(out, "    - %s\n    + %s", a, b);
  else sr_buf_printf(out, "      %s", a);
}

/* _prefix_error(key_path, prefix_tree, full_tree, is_leaf): appends to
   out an e(name) per place where prefix is no tree prefix of full */
static int prefix_errs(SrInterp *I, SrVal *path, SrVal *pre, SrVal *full, SrVal *is_leaf, SrVal *out) {
  SrVal *lv;
  TNode *st = flatten(I, pre, is_leaf, &lv, NULL);
  if (!st) return -1;
  int strict_leaf = !st->like;
  sr_unref(lv);
  sr_tree_node_free(st);
  if (strict_leaf) return 0;
  SrBuf ks = SR_BUF_INIT, tp = SR_BUF_INIT, tf = SR_BUF_INIT, m = SR_BUF_INIT;
  for (int i = 0; i < path->seq.n; i++) sr_val_str(&ks, path->seq.items[i]);
  SrVal *tfn = sr_lookup_qualname("builtins.type"), *a = NULL, *b = NULL, *r = NULL;
  int rc = -1;
  SrVal *ty_p = sr_call1(I, tfn, pre), *ty_f = ty_p ? sr_call1(I, tfn, full) : NULL;
  if (!ty_f || sr_to_repr(I, &tp, ty_p) < 0 || sr_to_repr(I, &tf, ty_f) < 0) goto out;
  r = sr_binop(I, SR_OP_EQ, ty_p, ty_f);
  if (!r) goto out;
  if (!sr_val_truthy(r)) {
    sr_buf_printf(&m,
                  "pytree structure error: different types at key path\n    " PE_NAME "%s\nAt that key path, the "
                  "prefix pytree " PE_NAME " has a subtree of type\n    %s\nbut at the same key path the full pytree "
                  "has a subtree of different type\n    %s.",
                  sr_buf_str(&ks), tp.p, tf.p);
    pe_push(out, &m);
    rc = 0;
    goto out;
  }
  a = node_one_level(I, pre, 1);
  b = a ? node_one_level(I, full, 1) : NULL;
  if (!b) goto out;
  SrVal *pc = a->seq.items[0], *fc = b->seq.items[0];
  SrVal *seqs[2] = {sr_lookup_qualname("builtins.list"), sr_lookup_qualname("builtins.tuple")};
  SrVal *isi = sr_lookup_qualname("builtins.isinstance"), *cls = sr_tuple(NULL, 2, (SrVal *[]){sr_ref(seqs[0]), sr_ref(seqs[1])});
  SrVal *is_seq = sr_call(I, isi, &(SrArgs){2, (SrVal *[]){pre, cls}, 0, NULL, NULL, NULL});
  sr_unref(cls);
  if (!is_seq) goto out;
  int seq = sr_val_truthy(is_seq);
  sr_unref(is_seq);
  if (seq && pc->seq.n != fc->seq.n) {
    SrVal *nm = sr_getattr(I, ty_p, "__name__");
    if (!nm) goto out;
    SrBuf tn = SR_BUF_INIT;
    sr_val_str(&tn, nm);
    sr_unref(nm);
    sr_buf_printf(&m,
                  "pytree structure error: different lengths of %s at key path\n    " PE_NAME "%s\nAt that key "
                  "path, the prefix pytree " PE_NAME " has a subtree of type %s of length %d, but the full pytree "
                  "has a subtree of the same type but of length %d.",
                  tn.p, sr_buf_str(&ks), tn.p, pc->seq.n, fc->seq.n);
    sr_buf_free(&tn);
    pe_push(out, &m);
    rc = 0;
    goto out;
  }
  if (!seq && pc->seq.n != fc->seq.n) {
    sr_buf_printf(&m,
                  "pytree structure error: different numbers of pytree children at key path\n    " PE_NAME
                  "%s\nAt that key path, the prefix pytree " PE_NAME " has a subtree of type\n    %s\nwith %d child "
                  "keys\n    ",
                  sr_buf_str(&ks), tp.p, pc->seq.n);
    join_keys(&m, pc, NULL);
    sr_buf_printf(&m,
                  "\nbut at the same key path the full pytree has a subtree of the same type but with %d child "
                  "keys\n    ",
                  fc->seq.n);
    join_keys(&m, fc, NULL);
    /* set(prefix keys) ^ set(full keys): the prefix's own, then the full's */
    sr_buf_puts(&m, "\nso the symmetric difference on key sets is\n    ");
    size_t at = m.len;
    join_keys(&m, pc, fc);
    if (m.len > at && fc->seq.n) sr_buf_putc(&m, ' ');
    size_t at2 = m.len;
    join_keys(&m, fc, pc);
    if (m.len == at2 && at2 > at && m.p[at2 - 1] == ' ') m.p[--m.len] = 0;
    pe_push(out, &m);
    rc = 0;
    goto out;
  }
  SrVal *ne = sr_binop(I, SR_OP_NE, a->seq.items[1], b->seq.items[1]);
  if (!ne) goto out;
  int differ = sr_truthy(I, ne);
  sr_unref(ne);
  if (differ < 0) goto out;
  if (differ) {
    SrBuf ma = SR_BUF_INIT, mb = SR_BUF_INIT;
    sr_val_str(&ma, a->seq.items[1]);
    sr_val_str(&mb, b->seq.items[1]);
    sr_buf_printf(&m,
                  "pytree structure error: different pytree metadata at key path\n    " PE_NAME "%s\nAt that key "
                  "path, the prefix pytree " PE_NAME " has a subtree of type\n    %s\nwith metadata\n    %s\nbut at "
                  "the same key path the full pytree has a subtree of the same type but with metadata\n    %s\nso "
                  "the diff in the metadata at these pytree nodes is\n",
                  sr_buf_str(&ks), tp.p, sr_buf_str(&ma), sr_buf_str(&mb));
    meta_diff(&m, sr_buf_str(&ma), sr_buf_str(&mb));
    sr_buf_free(&ma);
    sr_buf_free(&mb);
    pe_push(out, &m);
    rc = 0;
    goto out;
  }
  rc = 0;
  for (int i = 0; i < pc->seq.n && i < fc->seq.n && rc == 0; i++) {
    SrVal *kp = pc->seq.items[i];
    sr_seq_push(NULL, path, sr_ref(kp->seq.items[0]));
    rc = prefix_errs(I, path, kp->seq.items[1], fc->seq.items[i]->seq.items[1], NULL, out);
    path->seq.n--;
    sr_unref(path->seq.items[path->seq.n]);
  }
out:
  sr_unref(r);
  sr_unref(a);
  sr_unref(b);
  sr_unref(ty_p);
  sr_unref(ty_f);
  sr_buf_free(&ks);
  sr_buf_free(&tp);
  sr_buf_free(&tf);
  sr_buf_free(&m);
  return rc;
}

/* PyTreeDef.node_data() as Python prints it: (type, data), the data None
   for a list, tuple or None, a dict's sorted keys, a class's aux data */
static void node_data_repr(SrInterp *I, SrBuf *out, const TNode *t) {
  SrVal *ty = sr_type_of(I, t->like);
  sr_buf_putc(out, '(');
  if (ty) sr_to_repr(I, out, ty);
  sr_unref(ty);
  sr_buf_puts(out, ", ");
  if (t->keys && t->like->kind == SR_V_DICT) {
    sr_buf_putc(out, '[');
    for (int i = 0; i < t->n; i++) {
      if (i) sr_buf_puts(out, ", ");
      sr_val_repr(out, t->keys[i]);
    }
    sr_buf_putc(out, ']');
  } else {
    SrVal *aux = t->like->kind == SR_V_OBJ ? sr_class_tree_aux(I, t->like) : NULL;
    if (aux) sr_to_repr(I, out, aux);
    else sr_buf_puts(out, "None");
    sr_unref(aux);
  }
  sr_buf_putc(out, ')');
}

static int same_node_data(const TNode *a, const TNode *b) {
  if (a->like->kind != b->like->kind) return 0;
  if (a->like->kind == SR_V_OBJ && strcmp(sr_val_kind_name(a->like), sr_val_kind_name(b->like)) != 0) return 0;
  if ((a->head || b->head) && (!a->head || !b->head || strcmp(a->head, b->head) != 0)) return 0;
  if (a->like->kind == SR_V_DICT) {
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
      if (!sr_val_equal(a->keys[i], b->keys[i])) return 0;
  }
  return 1;
}

/* broadcast_flattened_prefix_with_treedef's _broadcast */
static int bcast_rec(SrInterp *I, const TNode *pt, const TNode *ft, SrVal *leaves, int *at, SrVal *out) {
  if (!pt->like) {
    SrVal *leaf = leaves->seq.items[(*at)++];
    for (int k = 0; k < ft->nleaves; k++) sr_seq_push(NULL, out, sr_ref(leaf));
    return 0;
  }
  if (!ft->like) {
    sr_raise(I, "ValueError", "`prefix_treedef` is not a prefix of `full_treedef`");
    return -1;
  }
  if (!same_node_data(pt, ft)) {
    SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
    node_data_repr(I, &x, ft);
    node_data_repr(I, &y, pt);
    sr_raise(I, "ValueError", "expected %s, got %s", sr_buf_str(&x), sr_buf_str(&y));
    sr_buf_free(&x);
    sr_buf_free(&y);
    return -1;
  }
  for (int i = 0; i < pt->n && i < ft->n; i++)
    if (bcast_rec(I, pt->kid[i], ft->kid[i], leaves, at, out) < 0) return -1;
  if (pt->n != ft->n) { /* zip(..., strict=True) */
    sr_raise(I, "ValueError", "zip() argument 2 is %s than argument 1", ft->n < pt->n ? "shorter" : "longer");
    return -1;
  }
  return 0;
}

/* broadcast_flattened_prefix_with_treedef(prefix_leaves, prefix_treedef,
   full_treedef): each prefix leaf repeated over its full subtree's leaves */
static SrVal *bi_broadcast_flattened(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "broadcast_flattened_prefix_with_treedef", "prefix_leaves, prefix_treedef, full_treedef", p) <
      0)
    return NULL;
  const TNode *pt = treedef_arg(I, p[1], "broadcast_flattened_prefix_with_treedef");
  const TNode *ft = pt ? treedef_arg(I, p[2], "broadcast_flattened_prefix_with_treedef") : NULL;
  if (!ft) return NULL;
  SrVal *leaves = sr_iterate(I, p[0]);
  if (!leaves) return NULL;
  if (leaves->seq.n != pt->nleaves) {
    sr_unref(leaves);
    return sr_raise(I, "ValueError", "prefix_leaves has %d leaves, prefix_treedef %d", leaves->seq.n, pt->nleaves);
  }
  SrVal *out = sr_seq(NULL, SR_V_LIST, ft->nleaves);
  int at = 0;
  if (bcast_rec(I, pt, ft, leaves, &at, out) < 0) {
    sr_unref(out);
    out = NULL;
  }
  sr_unref(leaves);
  return out;
}

/* prefix_errors(prefix_tree, full_tree, is_leaf=None): a list of
   functions e(name) that make the ValueError of each mismatch */
static SrVal *bi_prefix_errors(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "prefix_errors", "prefix_tree, full_tree, is_leaf=", p) < 0) return NULL;
  SrVal *out = sr_seq(NULL, SR_V_LIST, 0), *path = sr_seq(NULL, SR_V_LIST, 0);
  int rc = prefix_errs(I, path, p[0], p[1], p[2], out);
  sr_unref(path);
  if (rc < 0) {
    sr_unref(out);
    return NULL;
  }
  return out;
}

/* is_tree_node(typ): a registered node type -- list, tuple, dict,
   NoneType, OrderedDict, defaultdict, a registered class, a namedtuple */
static SrVal *bi_is_tree_node(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "is_tree_node", "typ", p) < 0) return NULL;
  if (sr_class_is_tree_node(p[0])) return sr_bool(1);
  static const char *const builtin[] = {"builtins.list", "builtins.tuple", "builtins.dict", "collections.OrderedDict",
                                        "collections.defaultdict"};
  SrVal *none_t = sr_type_of(I, sr_none());
  int is = 0;
  for (int i = 0; i <= 5 && !is; i++) {
    SrVal *t = i < 5 ? sr_lookup_qualname(builtin[i]) : none_t;
    SrVal *r = t ? sr_binop(I, SR_OP_IS, p[0], t) : NULL;
    is = r && sr_val_truthy(r);
    sr_unref(r);
  }
  sr_unref(none_t);
  return sr_bool(is);
}

/* PyTreeDef.walk(f_node, f_leaf, leaves) (pytree.cc's Walk): in post-order,
   f_leaf(leaf) for each leaf (the leaf itself where f_leaf is None) and
   f_node(tuple of the children's results, node_data) for each node, the
   node data None for a list, tuple or None, a dict's keys (a list), a
   registered class's aux data; the root's result */
static SrVal *walk_rec(SrInterp *I, const TNode *t, SrVal *f_node, SrVal *f_leaf, SrVal *leaves, int *it) {
  if (!t->like) {
    if (*it >= leaves->seq.n) return sr_raise(I, "ValueError", "Too few leaves for PyTreeDef");
    SrVal *leaf = leaves->seq.items[(*it)++];
    return f_leaf->kind == SR_V_NONE ? sr_ref(leaf) : sr_call1(I, f_leaf, leaf);
  }
  SrVal *kids = sr_seq(NULL, SR_V_TUPLE, t->n);
  for (int i = 0; i < t->n; i++) {
    SrVal *r = walk_rec(I, t->kid[i], f_node, f_leaf, leaves, it);
    if (!r) {
      sr_unref(kids);
      return NULL;
    }
    sr_seq_push(NULL, kids, r);
  }
  SrVal *data = NULL;
  if (t->keys) {
    data = sr_seq(NULL, SR_V_LIST, t->n);
    for (int i = 0; i < t->n; i++) sr_seq_push(NULL, data, sr_ref(t->keys[i]));
  } else if (t->like->kind == SR_V_OBJ) {
    data = sr_class_tree_aux(I, t->like);
  }
  if (I->exc) {
    sr_unref(kids);
    sr_unref(data);
    return NULL;
  }
  SrVal *args[2] = {kids, data ? data : sr_none()};
  SrVal *r = sr_call(I, f_node, &(SrArgs){2, args, 0, NULL, NULL, NULL});
  sr_unref(kids);
  sr_unref(data);
  return r;
}

static SrVal *m_td_walk(SrInterp *I, SrArgs *a) {
  if (a->n != 3) return sr_raise(I, "TypeError", "walk() takes 3 arguments (f_node, f_leaf, leaves)");
  SrVal *leaves = sr_iterate(I, a->v[2]);
  if (!leaves) return NULL;
  int it = 0;
  SrVal *r = walk_rec(I, ((TreeDef *)a->self->obj.data)->root, a->v[0], a->v[1], leaves, &it);
  if (r && it < leaves->seq.n) {
    sr_unref(r);
    r = sr_raise(I, "ValueError", "Too many leaves for PyTreeDef");
  }
  sr_unref(leaves);
  return r;
}

static SrVal *bi_treedef_is_leaf(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "treedef_is_leaf", "treedef", p) < 0) return NULL;
  const TNode *t = treedef_arg(I, p[0], "treedef_is_leaf");
  return t ? sr_bool(t->nnodes == 1) : NULL;
}

static SrVal *bi_treedef_children(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "treedef_children", "treedef", p) < 0) return NULL;
  if (!treedef_arg(I, p[0], "treedef_children")) return NULL;
  SrArgs ma = {0, NULL, 0, NULL, NULL, p[0]};
  return m_td_children(I, &ma);
}

/* treedef_tuple(treedefs): the PyTreeDef of a tuple of these */
static SrVal *bi_treedef_tuple(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "treedef_tuple", "treedefs", p) < 0) return NULL;
  SrVal *items = sr_iterate(I, p[0]);
  if (!items) return NULL;
  for (int i = 0; i < items->seq.n; i++)
    if (!treedef_arg(I, items->seq.items[i], "treedef_tuple")) {
      sr_unref(items);
      return NULL;
    }
  TNode *t = sr_xcalloc(1, sizeof *t);
  int n = items->seq.n;
  t->like = sr_seq(NULL, SR_V_TUPLE, n); /* a tuple rebuilt from its children */
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t->like, sr_none());
  t->n = n;
  t->kid = sr_xcalloc((size_t)n + 1, sizeof *t->kid);
  t->nnodes = 1;
  for (int i = 0; i < n; i++) {
    t->kid[i] = tnode_copy(((const TreeDef *)items->seq.items[i]->obj.data)->root);
    t->nleaves += t->kid[i]->nleaves;
    t->nnodes += t->kid[i]->nnodes;
  }
  sr_unref(items);
  return treedef_new(t);
}

/* tree_broadcast(prefix_tree, full_tree, is_leaf=None): each leaf of the
   prefix repeated over the leaves of full_tree's subtree there
   (broadcast_prefix), in full_tree's structure */
static SrVal *bi_broadcast(SrInterp *I, SrArgs *a) {
  SrVal *p[3], *pl, *fl;
  if (sr_args_parse(I, a, "tree_broadcast", "prefix_tree, full_tree, is_leaf=", p) < 0) return NULL;
  TNode *pt = flatten(I, p[0], p[2], &pl, NULL);
  if (!pt) return NULL;
  SrVal *subs = flatten_up_to(I, pt, p[1]), *r = NULL;
  if (!subs) {
    SrVal *saved = I->exc;
    I->exc = NULL;
    SrVal *path = sr_seq(NULL, SR_V_LIST, 0);
    if (prefix_error(I, p[0], p[1], path, "broadcast_prefix prefix_tree", p[2]) < 0) {
      sr_unref(saved);
    } else {
      sr_exc_clear(I);
      I->exc = saved;
    }
    sr_unref(path);
    goto out;
  }
  SrVal *res = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < subs->seq.n; i++) {
    SrVal *sl = sr_pytree_flatten_any(I, subs->seq.items[i]);
    if (!sl) {
      sr_unref(res);
      sr_unref(subs);
      goto out;
    }
    for (int k = 0; k < sl->seq.n; k++) sr_seq_push(NULL, res, sr_ref(pl->seq.items[i]));
    sr_unref(sl);
  }
  sr_unref(subs);
  TNode *ft = flatten(I, p[1], NULL, &fl, NULL);
  if (ft) {
    sr_unref(fl);
    r = unflatten(I, ft, res);
    sr_tree_node_free(ft);
  }
  sr_unref(res);
out:
  sr_unref(pl);
  sr_tree_node_free(pt);
  return r;
}

void sr_pytree_api_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.tree.flatten jax.tree_util.tree_flatten", bi_flatten,
     "flatten(tree, is_leaf=None): (leaves, treedef), the leaves in order and the PyTreeDef of the structure"},
    {"jax.tree.unflatten jax.tree_util.tree_unflatten", bi_unflatten,
     "unflatten(treedef, leaves): the tree of treedef's structure with these leaves"},
    {"jax.tree.structure jax.tree_util.tree_structure", bi_structure,
     "structure(tree, is_leaf=None): the PyTreeDef of tree, PyTreeDef({'a': *, 'b': (*, *)})"},
    {"jax.tree.leaves jax.tree_util.tree_leaves", bi_leaves, "leaves(tree, is_leaf=None): the leaves, in order"},
    {"jax.tree.map jax.tree_util.tree_map", bi_map,
     "map(f, tree, *rest, is_leaf=None): f applied to each leaf of tree and the matching leaves of rest"},
    {"jax.tree.reduce jax.tree_util.tree_reduce", bi_reduce,
     "reduce(function, tree, initializer=, is_leaf=None): functools.reduce over the leaves"},
    {"jax.tree.all jax.tree_util.tree_all", bi_all, "all(tree, *, is_leaf=None): whether every leaf is true"},
    {"jax.tree.transpose jax.tree_util.tree_transpose", bi_transpose,
     "transpose(outer_treedef, inner_treedef, tree): a tree of outer structure of inner ones turned inside out"},
    {"jax.tree.flatten_with_path jax.tree_util.tree_flatten_with_path", bi_flatten_with_path,
     "flatten_with_path(tree, is_leaf=None): ([(key_path, leaf), ...], treedef)"},
    {"jax.tree.leaves_with_path jax.tree_util.tree_leaves_with_path", bi_leaves_with_path,
     "leaves_with_path(tree, is_leaf=None): [(key_path, leaf), ...]"},
    {"jax.tree.map_with_path jax.tree_util.tree_map_with_path", bi_map_with_path,
     "map_with_path(f, tree, *rest, is_leaf=None): f(key_path, leaf, *others) at each leaf"},
    {"jax.tree_util.keystr", bi_keystr,
     "keystr(keys, *, simple=False, separator=''): a key path as text, ['a'][0].x"},
    {"jax.tree_util.flatten_one_level", bi_one_level,
     "flatten_one_level(pytree): (children, aux_data) of the root node; ValueError for a leaf"},
    {"jax.tree_util.flatten_one_level_with_keys", bi_one_level_with_keys,
     "flatten_one_level_with_keys(pytree): ([(key, child), ...], aux_data) of the root node"},
    {"jax._src.tree_util.broadcast_flattened_prefix_with_treedef", bi_broadcast_flattened,
     "broadcast_flattened_prefix_with_treedef(prefix_leaves, prefix_treedef, full_treedef): the leaves broadcast"},
    {"jax._src.tree_util.prefix_errors", bi_prefix_errors,
     "prefix_errors(prefix_tree, full_tree, is_leaf=None): e(name) for each place prefix_tree is no tree prefix"},
    {"jax.tree_util.is_tree_node", bi_is_tree_node,
     "is_tree_node(typ): whether typ is a registered pytree node type (list, dict, a namedtuple, ...)"},
    {"jax.tree_util.treedef_is_leaf", bi_treedef_is_leaf, "treedef_is_leaf(treedef): whether it is a single leaf"},
    {"jax.tree_util.treedef_children", bi_treedef_children,
     "treedef_children(treedef): the PyTreeDefs of the root's children"},
    {"jax.tree_util.treedef_tuple", bi_treedef_tuple, "treedef_tuple(treedefs): the PyTreeDef of a tuple of them"},
    {"jax.tree.broadcast jax.tree_util.tree_broadcast", bi_broadcast,
     "broadcast(prefix_tree, full_tree, is_leaf=None): the prefix's leaves repeated to full_tree's structure"},
    {"jax.tree_util.SequenceKey", bi_seq_key, "SequenceKey(idx): a key path entry for a list or tuple item, [0]"},
    {"jax.tree_util.DictKey", bi_dict_key, "DictKey(key): a key path entry for a dict item, ['a']"},
    {"jax.tree_util.GetAttrKey", bi_attr_key, "GetAttrKey(name): a key path entry for an attribute, .name"},
    {"jax.tree_util.FlattenedIndexKey", bi_flat_key,
     "FlattenedIndexKey(key): a key path entry for a child of a node without keys, [<flat index 0>]"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  sr_val_equal_class(&treedef_class, treedef_equal);
  sr_val_equal_class(&seq_key_class, key_equal);
  sr_val_equal_class(&dict_key_class, key_equal);
  sr_val_equal_class(&attr_key_class, key_equal);
  sr_val_equal_class(&flat_key_class, key_equal);
}
