/* tree_util.c: pytrees (tree_util.h), and jax.tree and jax.tree_util
 * (tree_util.py): the registrations of classes; jax.tree's functions are pytree_api.c's. */
#include "jax/tree_util.h"
#include "jax/pytree_api.h"
#include "text/print_val.h"

#include "jax/lax.h"
#include "jax/jax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jaxstate.h"
#include "py/class.h"
#include "py/enum.h"
#include "py/objects.h"
#include "py/range.h"
#include "py/introspect.h"
#include "jax/vjp.h"
#include "util/intern.h"

/* ---- pytrees ---- */

/* The order of a dict's entries when flattened (a stable sort). */
static int *dict_order(const SrVal *d) {
  int n = d->dict.n, *o = sr_xcalloc((size_t)n + 1, sizeof *o);
  for (int i = 0; i < n; i++) {
    int k = i;
    while (k > 0 && sr_tree_key_cmp(d->dict.keys[o[k - 1]], d->dict.keys[i]) > 0) {
      o[k] = o[k - 1];
      k--;
    }
    o[k] = i;
  }
  return o;
}

int *sr_pytree_dict_order(const SrVal *d) { return dict_order(d); }

SrVal *sr_pytree_children(SrVal *v) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_TUPLE) {
    SrVal *l = sr_seq(NULL, SR_V_LIST, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) sr_seq_push(NULL, l, sr_ref(v->seq.items[i]));
    return l;
  }
  if (v->kind == SR_V_DICT) {
    int *o = dict_order(v);
    SrVal *l = sr_seq(NULL, SR_V_LIST, v->dict.n);
    for (int i = 0; i < v->dict.n; i++) sr_seq_push(NULL, l, sr_ref(v->dict.vals[o[i]]));
    free(o);
    return l;
  }
  if (v->kind == SR_V_NONE) return sr_seq(NULL, SR_V_LIST, 0);
  const SrLangOps *ops = sr_ops(v);
  if (ops && ops->tree_children) return ops->tree_children(v);
  return NULL;
}

static int tree_depth_ok(SrVal *v, int depth) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return 1;
  int ok = depth < SR_VAL_MAX_NEST;
  for (int i = 0; i < ch->seq.n && ok; i++) ok = tree_depth_ok(ch->seq.items[i], depth + 1);
  sr_unref(ch);
  return ok;
}

int sr_pytree_check_depth(SrInterp *I, SrVal *v) {
  if (tree_depth_ok(v, 0)) return 0;
  sr_raise(I, "RecursionError", "maximum recursion depth exceeded");
  return -1;
}

SrVal *sr_pytree_rebuild(SrVal *like, SrVal *children) {
  if (like->kind == SR_V_LIST || like->kind == SR_V_TUPLE) {
    SrVal *r = sr_seq(NULL, like->kind, children->seq.n);
    for (int i = 0; i < children->seq.n; i++) sr_seq_push(NULL, r, sr_ref(children->seq.items[i]));
    return r;
  }
  if (like->kind == SR_V_DICT) {
    int *o = dict_order(like);
    SrVal *r = sr_dict(NULL);
    for (int i = 0; i < like->dict.n && i < children->seq.n; i++)
      sr_dict_set(NULL, r, sr_ref(like->dict.keys[o[i]]), sr_ref(children->seq.items[i]));
    free(o);
    return r;
  }
  if (like->kind == SR_V_NONE) return sr_none();
  const SrLangOps *ops = sr_ops(like);
  if (ops && ops->tree_rebuild) return ops->tree_rebuild(like, children);
  return sr_ref(like);
}

/* The arguments of a traced call as leaves: arrays and Python scalars;
   lists, tuples, dicts and registered classes are pytree nodes. */
/* jaxlib's pytree sorts a dict's keys with <: keys that do not compare
   (a str and a number, None, members of an Enum, which has no <) make
   its ValueError.  0, or -1 with it raised. */
int sr_pytree_dict_keys_sortable(SrInterp *I, const SrVal *d) {
  if (d->dict.n < 2) return 0;
  int str = 0, num = 0, bad = 0;
  for (int i = 0; i < d->dict.n; i++) {
    const SrVal *k = d->dict.keys[i];
    SrVal *iv;
    if (k->kind == SR_V_STR || k->kind == SR_V_WORD) str = 1;
    else if (k->kind == SR_V_INT || k->kind == SR_V_BOOL || k->kind == SR_V_FLOAT || sr_enum_kind_value(k, &iv)) num = 1;
    else if (k->kind == SR_V_NONE || sr_enum_type_of(k)) bad = 1;
  }
  if (!bad && !(str && num)) return 0;
  sr_raise(I, "ValueError", "Comparator raised exception while sorting pytree dictionary keys.");
  return -1;
}

static int flatten(SrInterp *I, SrVal *v, SrVal *leaves, int any) {
  if (v->kind == SR_V_DICT && sr_pytree_dict_keys_sortable(I, v) < 0) return -1;
  SrVal *ch = sr_pytree_children(v);
  if (ch) {
    int rc = 0;
    for (int i = 0; i < ch->seq.n && rc == 0; i++) rc = flatten(I, ch->seq.items[i], leaves, any);
    sr_unref(ch);
    return rc;
  }
  if (!any && sr_class_instance_has(v, "__jax_array__")) {
    sr_raise(I, "ValueError", "%s", SR_JAX_ARRAY_ABSTRACTIFY_MSG);
    return -1;
  }
  if (!any && !sr_value_type(I, v)) {
    SrBuf b = SR_BUF_INIT;
    sr_to_str(I, &b, v);
    sr_raise(I, "TypeError", "Argument '%s' of type <class '%s'> is not a valid JAX type.", sr_buf_str(&b),
             sr_val_kind_name(v));
    sr_buf_free(&b);
    return -1;
  }
  sr_seq_push(NULL, leaves, sr_ref(v));
  return 0;
}

/* Rebuilds v's structure with the next leaves from `it`. */
static SrVal *unflatten(SrVal *v, SrVal *leaves, int *it) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return *it < leaves->seq.n ? sr_ref(leaves->seq.items[(*it)++]) : sr_none();
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *x = unflatten(ch->seq.items[i], leaves, it);
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = x;
  }
  SrVal *r = sr_pytree_rebuild(v, ch);
  sr_unref(ch);
  return r;
}

static SrVal *flatten_all(SrInterp *I, SrVal *v, int any) {
  if (sr_pytree_check_depth(I, v) < 0) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  if (flatten(I, v, l, any) < 0) {
    sr_unref(l);
    return NULL;
  }
  return l;
}

SrVal *sr_pytree_flatten(SrInterp *I, SrVal *v) { return flatten_all(I, v, 0); }

SrVal *sr_pytree_flatten_any(SrInterp *I, SrVal *v) { return flatten_all(I, v, 1); }

SrVal *sr_pytree_numbered(SrVal *v, int *k) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) return sr_int(NULL, (*k)++);
  for (int i = 0; i < ch->seq.n; i++) {
    SrVal *s = sr_pytree_numbered(ch->seq.items[i], k);
    sr_unref(ch->seq.items[i]);
    ch->seq.items[i] = s;
  }
  SrVal *r = sr_pytree_rebuild(v, ch);
  sr_unref(ch);
  return r;
}

SrVal *sr_pytree_array_leaves(SrInterp *I, SrVal *v) {
  SrVal *l = sr_pytree_flatten(I, v);
  for (int i = 0; l && i < l->seq.n; i++)
    if (!sr_array_of(l->seq.items[i])) {
      SrVal *arr = sr_jnp_asarray(I, l->seq.items[i], -1);
      if (!arr) {
        sr_unref(l);
        return NULL;
      }
      sr_unref(l->seq.items[i]);
      l->seq.items[i] = arr;
    }
  return l;
}

SrVal *sr_pytree_unflatten(SrVal *like, SrVal *leaves) {
  int it = 0;
  return unflatten(like, leaves, &it);
}


/* ======================================================================
 * jax.tree
 * ====================================================================== */

/* jax.tree.map, leaves and the rest are pytree_api.c's. */


/* ---- registering classes as pytree nodes (class statements' classes) ---- */

/* register_pytree_node(nodetype, flatten_func, unflatten_func) */
static SrVal *register_node_fn(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "register_pytree_node", "nodetype, flatten_func, unflatten_func, flatten_with_keys_func=", p) < 0)
    return NULL;
  if (!sr_is_callable(I, p[1]) || !sr_is_callable(I, p[2]))
    return sr_raise(I, "TypeError", "register_pytree_node: flatten_func and unflatten_func must be callable");
  if (sr_class_register_pytree(I, p[0], SR_TREE_FUNCS, p[1], p[2]) < 0) return NULL;
  if (p[3] && p[3]->kind != SR_V_NONE && sr_class_set_tree_keys(I, p[0], p[3]) < 0) return NULL;
  return sr_none();
}

/* @register_pytree_node_class: cls.tree_flatten() and cls.tree_unflatten(aux, children) */
static SrVal *register_node_class_fn(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "register_pytree_node_class", "cls", p) < 0) return NULL;
  if (sr_class_register_pytree(I, p[0], SR_TREE_METHODS, NULL, NULL) < 0) return NULL;
  return sr_ref(p[0]);
}

/* whether name is in coll (a list, or a str as drop_fields may be): 1, 0, -1 */
static int name_in(SrInterp *I, SrVal *name, SrVal *coll) {
  if (coll->kind == SR_V_NONE) return 0;
  SrVal *r = sr_binop(I, SR_OP_IN, name, coll);
  if (!r) return -1;
  int t = sr_val_truthy(r);
  sr_unref(r);
  return t;
}

/* the names of xs (an iterable of str) not in ys, as a set's repr: {'y'} */
static void names_minus(SrInterp *I, SrBuf *out, SrVal *xs, SrVal *ys) {
  sr_buf_putc(out, '{');
  int n = 0;
  for (int i = 0; i < xs->seq.n; i++) {
    int dup = 0;
    for (int k = 0; k < i && !dup; k++) dup = sr_val_equal(xs->seq.items[k], xs->seq.items[i]);
    if (dup || name_in(I, xs->seq.items[i], ys) != 0) continue;
    if (n++) sr_buf_puts(out, ", ");
    sr_val_repr(out, xs->seq.items[i]);
  }
  sr_buf_putc(out, '}');
  if (!n) out->len = 0;
}

/* register_dataclass's checks of a dataclass: the data and meta fields
   are its fields with init=True less drop_fields, and do not overlap */
static int check_dataclass_fields(SrInterp *I, SrVal *fl, SrVal *data_it, SrVal *meta_it, SrVal *drop) {
  SrVal *data = sr_iterate(I, data_it), *meta = data ? sr_iterate(I, meta_it) : NULL;
  if (!meta) {
    sr_unref(data);
    return -1;
  }
  SrVal *init = sr_seq(NULL, SR_V_LIST, 0), *given = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < fl->seq.n; i++) {
    SrVal *name = sr_getattr(I, fl->seq.items[i], "name"), *in = sr_getattr(I, fl->seq.items[i], "init");
    if (in && sr_val_truthy(in) && name_in(I, name, drop) == 0) sr_seq_push(NULL, init, sr_ref(name));
    sr_unref(name);
    sr_unref(in);
  }
  for (int i = 0; i < meta->seq.n; i++) sr_seq_push(NULL, given, sr_ref(meta->seq.items[i]));
  for (int i = 0; i < data->seq.n; i++) sr_seq_push(NULL, given, sr_ref(data->seq.items[i]));
  SrBuf missing = SR_BUF_INIT, unexpected = SR_BUF_INIT, overlap = SR_BUF_INIT;
  names_minus(I, &missing, init, given);
  names_minus(I, &unexpected, given, init);
  int rc = 0;
  if (missing.len || unexpected.len) {
    SrBuf m = SR_BUF_INIT;
    sr_buf_puts(&m, "data_fields and meta_fields must include all dataclass fields with ``init=True`` and only them.");
    if (missing.len)
      sr_buf_printf(&m, " Missing fields: %s. Add them to drop_fields to suppress this error.", missing.p);
    if (unexpected.len) sr_buf_printf(&m, " Unexpected fields: %s.", unexpected.p);
    sr_raise(I, "ValueError", "%s", m.p);
    sr_buf_free(&m);
    rc = -1;
  } else {
    /* set(data_fields) & set(meta_fields): the data fields that are meta too */
    SrVal *not_meta = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = 0; i < data->seq.n; i++)
      if (name_in(I, data->seq.items[i], meta) == 0) sr_seq_push(NULL, not_meta, sr_ref(data->seq.items[i]));
    names_minus(I, &overlap, data, not_meta);
    sr_unref(not_meta);
    if (overlap.len) {
      sr_raise(I, "ValueError", "data_fields and meta_fields must not overlap. Overlapping fields: %s.", overlap.p);
      rc = -1;
    }
  }
  sr_buf_free(&missing);
  sr_buf_free(&unexpected);
  sr_buf_free(&overlap);
  sr_unref(init);
  sr_unref(given);
  sr_unref(data);
  sr_unref(meta);
  return rc;
}

/* register_dataclass(nodetype, data_fields=None, meta_fields=None):
   a decorator too; the fields default to a dataclass's */
static SrVal *register_dataclass_fn(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "register_dataclass", "nodetype, data_fields=, meta_fields=, drop_fields=", p) < 0)
    return NULL;
  SrVal *data = p[1] && p[1]->kind != SR_V_NONE ? p[1] : NULL;
  SrVal *meta = p[2] && p[2]->kind != SR_V_NONE ? p[2] : NULL;
  if (!data != !meta) {
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "data_fields=");
    sr_val_repr(&b, p[1] ? p[1] : sr_none());
    sr_buf_puts(&b, " meta_fields=");
    sr_val_repr(&b, p[2] ? p[2] : sr_none());
    sr_raise(I, "TypeError", "register_dataclass: data_fields and meta_fields must both be specified when either is specified. Got %s.", b.p);
    sr_buf_free(&b);
    return NULL;
  }
  SrVal *drop = p[3] ? p[3] : sr_none();
  SrVal *isdc_fn = sr_lookup_qualname("dataclasses.is_dataclass"), *fields_fn = sr_lookup_qualname("dataclasses.fields");
  SrVal *isdc = isdc_fn ? sr_call1(I, isdc_fn, p[0]) : NULL;
  if (!isdc) return NULL;
  int is_dc = sr_val_truthy(isdc);
  sr_unref(isdc);
  SrVal *fields = is_dc && fields_fn ? sr_call1(I, fields_fn, p[0]) : NULL, *fl = fields ? sr_iterate(I, fields) : NULL;
  sr_unref(fields);
  if (is_dc && !fl) return NULL;
  SrVal *made_data = NULL, *made_meta = NULL, *r = NULL;
  if (!data) {
    if (!is_dc) {
      SrBuf b = SR_BUF_INIT;
      sr_val_repr(&b, p[0]);
      sr_raise(I, "TypeError", "register_dataclass: data_fields and meta_fields are required when nodetype is not a dataclass. Got nodetype=%s.", b.p);
      sr_buf_free(&b);
      goto out;
    }
    /* every field not dropped: data, or meta where field(metadata={'static': True}) */
    made_data = data = sr_seq(NULL, SR_V_LIST, 0);
    made_meta = meta = sr_seq(NULL, SR_V_LIST, 0);
    for (int i = 0; i < fl->seq.n; i++) {
      SrVal *name = sr_getattr(I, fl->seq.items[i], "name"), *md = sr_getattr(I, fl->seq.items[i], "metadata");
      /* f.metadata.get("static", False) */
      SrVal *get = md ? sr_getattr(I, md, "get") : NULL, *key = sr_str_cstr(NULL, "static");
      SrVal *st = get ? sr_call1(I, get, key) : NULL;
      int is_static = st && sr_val_truthy(st), dropped = name_in(I, name, drop);
      sr_unref(st);
      sr_unref(key);
      sr_unref(get);
      sr_unref(md);
      if (I->exc) dropped = -1;
      if (dropped < 0) {
        sr_unref(name);
        goto out;
      }
      if (dropped) sr_unref(name);
      else sr_seq_push(NULL, is_static ? meta : data, name);
    }
  }
  if (is_dc && check_dataclass_fields(I, fl, data, meta, drop) < 0) goto out;
  if (sr_class_register_pytree(I, p[0], SR_TREE_DATACLASS, data, meta) < 0) goto out;
  r = sr_ref(p[0]);
out:
  sr_unref(fl);
  sr_unref(made_data);
  sr_unref(made_meta);
  return r;
}

/* register_static(cls): a node with no children, kept whole in the treedef */
static SrVal *register_static_fn(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "register_static", "cls", p) < 0) return NULL;
  if (sr_class_register_pytree(I, p[0], SR_TREE_STATIC, NULL, NULL) < 0) return NULL;
  return sr_ref(p[0]);
}

/* ---- registration ---- */

void sr_tree_util_init(void) {
  static const struct {
    const char *names;
    SrBuiltinFn fn;
    const char *doc;
  } defs[] = {
    {"jax.tree_util.register_pytree_node", register_node_fn,
     "register_pytree_node(nodetype, flatten_func, unflatten_func): a class's instances become pytree nodes"},
    {"jax.tree_util.register_pytree_node_class", register_node_class_fn,
     "register_pytree_node_class(cls): a pytree node by its tree_flatten method and tree_unflatten classmethod"},
    {"jax.tree_util.register_dataclass", register_dataclass_fn,
     "register_dataclass(nodetype, data_fields=None, meta_fields=None): a dataclass as a pytree node of its data fields"},
    {"jax.tree_util.register_static", register_static_fn,
     "register_static(cls): a pytree node without children (static data)"},
    {NULL, NULL, NULL},
  };
  for (int i = 0; defs[i].names; i++) sr_def(defs[i].names, defs[i].fn, defs[i].doc);
  sr_pytree_api_init(); /* pytree_api.c: jax.tree's functions over PyTreeDefs */
}

/* Paths of leaves (tree_util.h). */
int sr_pytree_bad_leaf(SrInterp *I, SrVal *v, SrBuf *path, SrVal **leaf) {
  SrVal *ch = sr_pytree_children(v);
  if (!ch) {
    if (sr_value_type(I, v)) return 0;
    *leaf = v;
    return 1;
  }
  size_t at = path->len;
  int *order = v->kind == SR_V_DICT ? sr_pytree_dict_order(v) : NULL, found = 0;
  for (int i = 0; i < ch->seq.n && !found; i++) {
    path->len = at;
    if (order) {
      sr_buf_putc(path, '[');
      sr_val_repr(path, v->dict.keys[order[i]]);
      sr_buf_putc(path, ']');
    } else {
      sr_buf_printf(path, "[%d]", i);
    }
    found = sr_pytree_bad_leaf(I, ch->seq.items[i], path, leaf);
  }
  if (!found) {
    path->len = at;
    if (path->p) path->p[at] = 0;
  }
  free(order);
  sr_unref(ch);
  return found;
}

void sr_pytree_leaf_paths(const SrVal *v, SrBuf *path, char **out, int *k) {
  SrVal *ch = sr_pytree_children((SrVal *)v);
  if (!ch) {
    out[(*k)++] = strdup(sr_buf_str(path));
    return;
  }
  size_t at = path->len;
  int *order = NULL;
  if (v->kind == SR_V_DICT) {
    /* the children come in sorted key order: find each one's key */
    order = sr_xcalloc((size_t)ch->seq.n + 1, sizeof *order);
    for (int i = 0; i < ch->seq.n; i++)
      for (int q = 0; q < v->dict.n; q++)
        if (v->dict.vals[q] == ch->seq.items[i]) order[i] = q;
  }
  for (int i = 0; i < ch->seq.n; i++) {
    path->len = at;
    if (order) {
      sr_buf_putc(path, '[');
      sr_val_repr(path, v->dict.keys[order[i]]);
      sr_buf_putc(path, ']');
    } else {
      sr_buf_printf(path, "[%d]", i);
    }
    sr_pytree_leaf_paths(ch->seq.items[i], path, out, k);
  }
  path->len = at;
  if (path->p) path->p[at] = 0;
  free(order);
  sr_unref(ch);
}

/* ---- tree_util.equality_errors ---- */

static void type_str(SrInterp *I, SrBuf *b, SrVal *v) {
  SrVal *t = sr_type_of(I, v);
  if (!t || sr_to_str(I, b, t) < 0) {
    sr_exc_clear(I);
    sr_buf_printf(b, "<class '%s'>", sr_val_kind_name(v));
  }
  sr_unref(t);
}

static void diff_push(SrTreeDiffs *d, const char *path, SrBuf *t1, SrBuf *t2, const char *expl) {
  if (d->n == d->cap) {
    d->cap = d->cap ? 2 * d->cap : 4;
    d->d = sr_xrealloc(d->d, (size_t)d->cap * sizeof *d->d);
  }
  SrTreeDiff *x = &d->d[d->n++];
  x->path = strdup(path);
  x->thing1 = sr_buf_steal(t1);
  x->thing2 = sr_buf_steal(t2);
  x->expl = strdup(expl);
}

static int same_node_type(const SrVal *a, const SrVal *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == SR_V_OBJ) return a->obj.cls == b->obj.cls;
  return 1;
}

/* A child's key text after the path: [i] or [repr(key)]. */
static void child_key(SrBuf *path, const SrVal *v, const int *order, int i) {
  if (v->kind == SR_V_DICT) {
    sr_buf_putc(path, '[');
    sr_val_repr(path, v->dict.keys[order[i]]);
    sr_buf_putc(path, ']');
  } else {
    sr_buf_printf(path, "[%d]", i);
  }
}

static void equality_errors(SrInterp *I, SrBuf *path, SrVal *t1, SrVal *t2, const char *leaf, SrTreeDiffs *d) {
  SrVal *c1 = sr_pytree_children(t1), *c2 = sr_pytree_children(t2);
  SrBuf a = SR_BUF_INIT, b = SR_BUF_INIT;
  int *o1 = NULL, *o2 = NULL;
  if (!c1 && !c2) goto done;
  if (!c1 || !c2 || !same_node_type(t1, t2)) {
    if (!c1 && leaf) sr_buf_puts(&a, leaf);
    else type_str(I, &a, t1);
    if (!c2 && leaf) sr_buf_puts(&b, leaf);
    else type_str(I, &b, t2);
    diff_push(d, sr_buf_str(path), &a, &b, "their Python types differ");
    goto done;
  }
  if ((t1->kind == SR_V_LIST || t1->kind == SR_V_TUPLE) && c1->seq.n != c2->seq.n) {
    const char *k = t1->kind == SR_V_LIST ? "list" : "tuple";
    sr_buf_printf(&a, "%s of length %d", k, c1->seq.n);
    sr_buf_printf(&b, "%s of length %d", k, c2->seq.n);
    diff_push(d, sr_buf_str(path), &a, &b, "the lengths do not match");
    goto done;
  }
  if (t1->kind == SR_V_DICT) {
    o1 = sr_pytree_dict_order(t1);
    o2 = sr_pytree_dict_order(t2);
  }
  if (c1->seq.n != c2->seq.n) {
    type_str(I, &a, t1);
    sr_buf_printf(&a, " with %d child%s", c1->seq.n, c1->seq.n > 1 ? "ren" : "");
    type_str(I, &b, t2);
    sr_buf_printf(&b, " with %d child%s", c2->seq.n, c2->seq.n > 1 ? "ren" : "");
    SrBuf e = SR_BUF_INIT;
    sr_buf_puts(&e, "the numbers of children do not match");
    if (t1->kind == SR_V_DICT) {
      /* the symmetric difference of the key sets */
      SrBuf s = SR_BUF_INIT;
      for (int pass = 0; pass < 2; pass++) {
        SrVal *x = pass ? t2 : t1, *y = pass ? t1 : t2;
        for (int i = 0; i < x->dict.n; i++) {
          int found = 0;
          for (int j = 0; j < y->dict.n && !found; j++) found = sr_val_equal(x->dict.keys[i], y->dict.keys[j]);
          if (found) continue;
          if (s.len) sr_buf_putc(&s, ' ');
          sr_val_repr(&s, x->dict.keys[i]);
        }
      }
      if (s.len) sr_buf_printf(&e, ", with the symmetric difference of key sets: {%s}", s.p);
      sr_buf_free(&s);
    }
    diff_push(d, sr_buf_str(path), &a, &b, sr_buf_str(&e));
    sr_buf_free(&e);
    goto done;
  }
  if (t1->kind == SR_V_DICT) {
    int same = 1;
    for (int i = 0; i < c1->seq.n && same; i++) same = sr_val_equal(t1->dict.keys[o1[i]], t2->dict.keys[o2[i]]);
    if (!same) {
      for (int pass = 0; pass < 2; pass++) {
        SrVal *x = pass ? t2 : t1;
        SrBuf *o = pass ? &b : &a;
        int *ord = pass ? o2 : o1;
        type_str(I, o, x);
        /* a dict's node data: the tuple of its sorted keys */
        sr_buf_puts(o, " with pytree metadata (");
        for (int i = 0; i < x->dict.n; i++) {
          if (i) sr_buf_puts(o, ", ");
          sr_val_repr(o, x->dict.keys[ord[i]]);
        }
        sr_buf_puts(o, x->dict.n == 1 ? ",)" : ")");
      }
      diff_push(d, sr_buf_str(path), &a, &b, "the pytree node metadata does not match");
      goto done;
    }
  }
  size_t at = path->len;
  for (int i = 0; i < c1->seq.n; i++) {
    path->len = at;
    if (path->p) path->p[at] = 0;
    child_key(path, t1, o1, i);
    equality_errors(I, path, c1->seq.items[i], c2->seq.items[i], leaf, d);
  }
  path->len = at;
  if (path->p) path->p[at] = 0;
done:
  free(o1);
  free(o2);
  sr_buf_free(&a);
  sr_buf_free(&b);
  sr_unref(c1);
  sr_unref(c2);
}

void sr_pytree_equality_errors(SrInterp *I, SrVal *t1, SrVal *t2, const char *leaf, SrTreeDiffs *out) {
  SrBuf path = SR_BUF_INIT;
  sr_buf_puts(&path, "");
  equality_errors(I, &path, t1, t2, leaf, out);
  sr_buf_free(&path);
}

void sr_tree_diffs_free(SrTreeDiffs *d) {
  for (int i = 0; i < d->n; i++) {
    free(d->d[i].path);
    free(d->d[i].thing1);
    free(d->d[i].thing2);
    free(d->d[i].expl);
  }
  free(d->d);
  d->d = NULL;
  d->n = d->cap = 0;
}
