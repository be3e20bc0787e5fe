/* tree_more.c: the rest of jax.tree_util and jax.tree (tree_util.py,
 * tree.py): Partial (functools.partial as a pytree: its args and keywords
 * the children, its func the aux data), reduce_associative (JAX's
 * _parallel_reduce: halves reduced recursively), all_leaves,
 * register_pytree_with_keys(_class) and jax.tree.static.  Registered by
 * sr_tree_more_init (misc16.h).
 */
#include <stdlib.h>
#include <string.h>

#include "jax/jax.h"
#include "jax/misc16.h"
#include "jax/tree_util.h"
#include "py/class.h"
#include "py/interp.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/intern.h"

/* ---- Partial ---- */

typedef struct {
  SrVal *func, *args, *keywords; /* a callable, a tuple, a dict of str keys */
} Partial;

static void partial_free(void *d) {
  Partial *p = d;
  sr_unref(p->func);
  sr_unref(p->args);
  sr_unref(p->keywords);
  free(p);
}

/* functools.partial's repr: Partial(func, *args, k=v) */
static void partial_repr(SrBuf *out, const SrVal *v) {
  const Partial *p = v->obj.data;
  sr_buf_puts(out, "Partial(");
  sr_val_repr(out, p->func);
  for (int i = 0; i < p->args->seq.n; i++) {
    sr_buf_puts(out, ", ");
    sr_val_repr(out, p->args->seq.items[i]);
  }
  for (int i = 0; i < p->keywords->dict.n; i++) {
    SrVal *k = p->keywords->dict.keys[i];
    sr_buf_printf(out, ", %.*s=", (int)k->str.n, k->str.s);
    sr_val_repr(out, p->keywords->dict.vals[i]);
  }
  sr_buf_putc(out, ')');
}

static SrVal *partial_make(SrVal *func, SrVal *args, SrVal *keywords);

/* Partial(func, *args, **kw)(*a, **k): func(*args, *a, **{**kw, **k}) */
static SrVal *partial_call(SrInterp *I, SrVal *self, SrArgs *a) {
  Partial *p = self->obj.data;
  int n = p->args->seq.n + a->n, nkw = p->keywords->dict.n + a->nkw, m = 0;
  SrVal **v = sr_xcalloc((size_t)n + 1, sizeof *v), **kwv = sr_xcalloc((size_t)nkw + 1, sizeof *kwv);
  const char **kw = sr_xcalloc((size_t)nkw + 1, sizeof *kw);
  for (int i = 0; i < p->args->seq.n; i++) v[i] = p->args->seq.items[i];
  for (int i = 0; i < a->n; i++) v[p->args->seq.n + i] = a->v[i];
  for (int i = 0; i < p->keywords->dict.n; i++) {
    SrVal *k = p->keywords->dict.keys[i];
    const char *name = sr_intern(k->str.s, k->str.n);
    int over = 0;
    for (int j = 0; j < a->nkw; j++) over |= a->kw[j] == name;
    if (over) continue;
    kw[m] = name;
    kwv[m++] = p->keywords->dict.vals[i];
  }
  for (int j = 0; j < a->nkw; j++) {
    kw[m] = a->kw[j];
    kwv[m++] = a->kwv[j];
  }
  SrArgs ca = {n, v, m, kw, kwv, NULL};
  SrVal *r = sr_call(I, p->func, &ca);
  free(v);
  free(kw);
  free(kwv);
  return r;
}

static SrVal *partial_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  Partial *p = self->obj.data;
  if (!strcmp(name, "func")) return sr_ref(p->func);
  if (!strcmp(name, "args")) return sr_ref(p->args);
  if (!strcmp(name, "keywords")) {
    SrVal *d = sr_dict(NULL);
    for (int i = 0; i < p->keywords->dict.n; i++)
      sr_dict_set(NULL, d, sr_ref(p->keywords->dict.keys[i]), sr_ref(p->keywords->dict.vals[i]));
    return d;
  }
  return NULL;
}

/* ((args, keywords), func): the children and the aux data */
static SrVal *partial_children(SrVal *self) {
  Partial *p = self->obj.data;
  SrVal *l = sr_seq(NULL, SR_V_LIST, 2);
  sr_seq_push(NULL, l, sr_ref(p->args));
  sr_seq_push(NULL, l, sr_ref(p->keywords));
  return l;
}

static SrVal *partial_rebuild(SrVal *self, SrVal *children) {
  Partial *p = self->obj.data;
  SrVal *args = children->seq.items[0], *kw = children->seq.items[1];
  if (args->kind != SR_V_TUPLE) { /* a tuple node rebuilt stays a tuple */
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, sr_is_seq(args) ? args->seq.n : 0);
    for (int i = 0; sr_is_seq(args) && i < args->seq.n; i++) sr_seq_push(NULL, t, sr_ref(args->seq.items[i]));
    SrVal *r = partial_make(sr_ref(p->func), t, sr_ref(kw));
    return r;
  }
  return partial_make(sr_ref(p->func), sr_ref(args), sr_ref(kw));
}

static void partial_head(SrVal *self, SrBuf *out) {
  Partial *p = self->obj.data;
  sr_buf_puts(out, "Partial[");
  sr_val_repr(out, p->func);
  sr_buf_putc(out, ']');
}

static const SrLangOps partial_ops = {
  .call = partial_call,
  .getattr = partial_getattr,
  .tree_children = partial_children,
  .tree_rebuild = partial_rebuild,
  .tree_head = partial_head,
};
static const SrClass partial_class = {"Partial", partial_free, partial_repr, NULL, &partial_ops};

static void partial_traverse(void *d, SrValVisit visit, void *arg) {
  Partial *p = d;
  if (p->func) visit(p->func, arg);
  if (p->args) visit(p->args, arg);
  if (p->keywords) visit(p->keywords, arg);
}

static void partial_clear(void *d) {
  Partial *p = d;
  sr_unref(p->func);
  sr_unref(p->args);
  sr_unref(p->keywords);
  p->func = sr_none();
  p->args = sr_seq(NULL, SR_V_TUPLE, 0);
  p->keywords = sr_dict(NULL);
}

/* steals its arguments */
static SrVal *partial_make(SrVal *func, SrVal *args, SrVal *keywords) {
  Partial *p = sr_xcalloc(1, sizeof *p);
  p->func = func;
  p->args = args;
  p->keywords = keywords;
  return sr_obj(&partial_class, p);
}

/* jax.tree_util.Partial(func, *args, **kw); a Partial's func, args and
   keywords are merged in, as functools.partial does */
static SrVal *bi_partial(SrInterp *I, SrArgs *a) {
  if (a->n < 1) return sr_raise(I, "TypeError", "type 'partial' takes at least one argument");
  SrVal *func = a->v[0];
  if (!sr_is_callable(I, func)) return sr_raise(I, "TypeError", "the first argument must be callable");
  SrVal *args = sr_seq(NULL, SR_V_TUPLE, 0), *kw = sr_dict(NULL);
  if (sr_is_obj(func, &partial_class)) {
    Partial *in = func->obj.data;
    for (int i = 0; i < in->args->seq.n; i++) sr_seq_push(NULL, args, sr_ref(in->args->seq.items[i]));
    for (int i = 0; i < in->keywords->dict.n; i++)
      sr_dict_set(NULL, kw, sr_ref(in->keywords->dict.keys[i]), sr_ref(in->keywords->dict.vals[i]));
    func = in->func;
  }
  for (int i = 1; i < a->n; i++) sr_seq_push(NULL, args, sr_ref(a->v[i]));
  for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, kw, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
  return partial_make(sr_ref(func), args, kw);
}

/* ---- reduce_associative, all_leaves ---- */

/* _parallel_reduce(sequence[lo:hi], operation, identity) */
static SrVal *parallel_reduce(SrInterp *I, SrVal *seq, int lo, int hi, SrVal *op, SrVal *identity) {
  if (sr_interrupt_point(I)) return sr_raise(I, "KeyboardInterrupt", "interrupted");
  int n = hi - lo;
  if (n == 0) {
    if (!identity) return sr_raise(I, "TypeError", "Must specify identity for parallel reduction of empty sequence.");
    return sr_ref(identity);
  }
  if (n == 1) return sr_ref(seq->seq.items[lo]);
  int mid = lo + n / 2;
  SrVal *x = parallel_reduce(I, seq, lo, mid, op, identity);
  SrVal *y = x ? parallel_reduce(I, seq, mid, hi, op, identity) : NULL;
  SrVal *r = NULL;
  if (y) {
    SrVal *v[2] = {x, y};
    SrArgs ca = {2, v, 0, NULL, NULL, NULL};
    r = sr_call(I, op, &ca);
  }
  sr_unref(x);
  sr_unref(y);
  return r;
}

/* jax.tree.leaves(tree, is_leaf=is_leaf): a new list or NULL */
static SrVal *leaves_of(SrInterp *I, SrVal *tree, SrVal *is_leaf) {
  SrVal *fn = sr_lookup_qualname("jax.tree.leaves");
  if (!fn) return sr_raise(I, "RuntimeError", "jax.tree.leaves is missing");
  const char *kw[1] = {sr_intern_cstr("is_leaf")};
  SrVal *kv[1] = {is_leaf};
  SrArgs ca = {1, &tree, is_leaf ? 1 : 0, kw, kv, NULL};
  return sr_call(I, fn, &ca);
}

static SrVal *bi_reduce_associative(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "reduce_associative", "operation, tree, *, identity=, is_leaf=", p) < 0) return NULL;
  SrVal *l = leaves_of(I, p[1], p[3]);
  if (!l) return NULL;
  SrVal *r = parallel_reduce(I, l, 0, l->seq.n, p[0], p[2]);
  sr_unref(l);
  return r;
}

/* all_leaves(iterable, is_leaf=None) */
static SrVal *bi_all_leaves(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "all_leaves", "iterable, is_leaf=", p) < 0) return NULL;
  SrVal *items = sr_iterate(I, p[0]);
  if (!items) return NULL;
  int all = 1;
  if (!p[1] || p[1]->kind == SR_V_NONE) {
    for (int i = 0; i < items->seq.n && all; i++) {
      SrVal *ch = sr_pytree_children(items->seq.items[i]);
      all = !ch;
      sr_unref(ch);
    }
  } else {
    SrVal *l = leaves_of(I, items, p[1]);
    if (!l) {
      sr_unref(items);
      return NULL;
    }
    all = l->seq.n == items->seq.n;
    for (int i = 0; i < items->seq.n && all; i++) all = l->seq.items[i] == items->seq.items[i];
    sr_unref(l);
  }
  sr_unref(items);
  return sr_bool(all);
}

/* ---- register_pytree_with_keys ---- */

/* flatten_func_impl: flatten_with_keys(tree) with the keys dropped; a
   method name in data calls tree.NAME() instead */
typedef struct {
  SrVal *fn;        /* flatten_with_keys, or NULL */
  const char *meth; /* or a method of the node */
  int keyed;        /* drop the keys */
} Flat;

static void flat_free(void *d) {
  Flat *f = d;
  sr_unref(f->fn);
  free(f);
}

static SrVal *flat_call(SrInterp *I, SrArgs *a) {
  Flat *f = sr_current_builtin(I)->data;
  if (a->n != 1) return sr_raise(I, "TypeError", "flatten_func_impl() takes 1 positional argument but %d were given", a->n);
  SrVal *r;
  if (f->fn) {
    r = sr_call1(I, f->fn, a->v[0]);
  } else {
    SrVal *m = sr_getattr(I, a->v[0], f->meth);
    SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
    r = m ? sr_call(I, m, &none) : NULL;
    sr_unref(m);
  }
  if (!r || !f->keyed) return r;
  if (!sr_is_seq(r) || r->seq.n != 2) {
    sr_unref(r);
    return sr_raise(I, "ValueError", "cannot unpack: flatten_with_keys must return (key_children, aux_data)");
  }
  SrVal *kc = sr_iterate(I, r->seq.items[0]), *out = NULL;
  if (kc) {
    SrVal *ch = sr_seq(NULL, SR_V_LIST, kc->seq.n);
    int ok = 1;
    for (int i = 0; i < kc->seq.n && ok; i++) {
      SrVal *e = kc->seq.items[i];
      if (!sr_is_seq(e) || e->seq.n != 2) {
        sr_raise(I, "ValueError", "the key children of flatten_with_keys must be (key, child) pairs");
        ok = 0;
      } else {
        sr_seq_push(NULL, ch, sr_ref(e->seq.items[1]));
      }
    }
    if (ok) {
      SrVal *items[2] = {ch, sr_ref(r->seq.items[1])};
      out = sr_tuple(NULL, 2, items);
    } else {
      sr_unref(ch);
    }
    sr_unref(kc);
  }
  sr_unref(r);
  return out;
}

static SrVal *flat_new(SrVal *fn, const char *meth, int keyed) {
  Flat *f = sr_xcalloc(1, sizeof *f);
  f->fn = fn ? sr_ref(fn) : NULL;
  f->meth = meth;
  f->keyed = keyed;
  return sr_builtin_with("flatten_func_impl", flat_call, f, flat_free);
}

/* register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func,
   flatten_func=None) */
static SrVal *bi_register_with_keys(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "register_pytree_with_keys", "nodetype, flatten_with_keys, unflatten_func, flatten_func=", p) <
      0)
    return NULL;
  if (!sr_is_callable(I, p[1]) || !sr_is_callable(I, p[2]))
    return sr_raise(I, "TypeError", "register_pytree_with_keys: flatten_with_keys and unflatten_func must be callable");
  SrVal *flat = p[3] && sr_val_truthy(p[3]) ? sr_ref(p[3]) : flat_new(p[1], NULL, 1);
  int rc = sr_class_register_pytree(I, p[0], SR_TREE_FUNCS, flat, p[2]);
  if (rc == 0) rc = sr_class_set_tree_keys(I, p[0], p[1]);
  sr_unref(flat);
  return rc < 0 ? NULL : sr_none();
}

/* register_pytree_with_keys_class(cls): tree_flatten (or
   tree_flatten_with_keys without its keys) and cls.tree_unflatten */
static SrVal *bi_register_with_keys_class(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "register_pytree_with_keys_class", "cls", p) < 0) return NULL;
  SrVal *has = sr_getattr(I, p[0], "tree_flatten");
  if (!has) sr_exc_clear(I);
  SrVal *unf = sr_getattr(I, p[0], "tree_unflatten");
  if (!unf) {
    sr_unref(has);
    return NULL;
  }
  SrVal *flat = has ? flat_new(NULL, "tree_flatten", 0) : flat_new(NULL, "tree_flatten_with_keys", 1);
  int rc = sr_class_register_pytree(I, p[0], SR_TREE_FUNCS, flat, unf);
  if (rc == 0) {
    SrVal *keys = flat_new(NULL, "tree_flatten_with_keys", 0);
    rc = sr_class_set_tree_keys(I, p[0], keys);
    sr_unref(keys);
  }
  sr_unref(has);
  sr_unref(unf);
  sr_unref(flat);
  return rc < 0 ? NULL : sr_ref(p[0]);
}

/* jax.tree.static(**kwargs): dataclasses.field(metadata={'static': True,
   **metadata}, **kwargs) */
static SrVal *bi_static(SrInterp *I, SrArgs *a) {
  if (a->n) return sr_raise(I, "TypeError", "static() takes 0 positional arguments but %d were given", a->n);
  SrVal *field = sr_lookup_qualname("dataclasses.field");
  if (!field) return sr_raise(I, "RuntimeError", "dataclasses.field is missing");
  SrVal *meta = sr_dict(NULL);
  sr_dict_set(NULL, meta, sr_str_cstr(NULL, "static"), sr_bool(1));
  const char **kw = sr_xcalloc((size_t)a->nkw + 2, sizeof *kw);
  SrVal **kwv = sr_xcalloc((size_t)a->nkw + 2, sizeof *kwv);
  int m = 0;
  for (int i = 0; i < a->nkw; i++) {
    if (!strcmp(a->kw[i], "metadata")) {
      SrVal *md = a->kwv[i];
      if (md->kind == SR_V_DICT)
        for (int k = 0; k < md->dict.n; k++) sr_dict_set(NULL, meta, sr_ref(md->dict.keys[k]), sr_ref(md->dict.vals[k]));
      continue;
    }
    kw[m] = a->kw[i];
    kwv[m++] = a->kwv[i];
  }
  kw[m] = sr_intern_cstr("metadata");
  kwv[m++] = meta;
  SrArgs ca = {0, NULL, m, kw, kwv, NULL};
  SrVal *r = sr_call(I, field, &ca);
  free(kw);
  free(kwv);
  sr_unref(meta);
  return r;
}

/* ---- jax.flatten_util.ravel_pytree (flatten_util.py) ---- */

/* qualname(*args), a new reference */
static SrVal *callq(SrInterp *I, const char *qualname, int n, SrVal **args) {
  SrVal *fn = sr_lookup_qualname(qualname);
  if (!fn) return sr_raise(I, "RuntimeError", "%s is missing", qualname);
  SrArgs a = {n, args, 0, NULL, NULL, NULL};
  return sr_call(I, fn, &a);
}

/* what unravel keeps: the treedef, the leaves' shapes, the split points
   (the cumulative sizes), and the leaves' dtypes and the raveled one where
   they differ (NULL: one dtype, and unravel takes any) */
typedef struct Unravel {
  SrVal *treedef, *shapes, *indices, *from_dtypes, *to_dtype;
} Unravel;

static void unravel_free(void *d) {
  Unravel *u = d;
  sr_unref(u->treedef);
  sr_unref(u->shapes);
  sr_unref(u->indices);
  sr_unref(u->from_dtypes);
  sr_unref(u->to_dtype);
  free(u);
}

/* unravel(flat): the pytree of flat's chunks, reshaped (and cast back to
   their dtypes: _unravel_list's TypeError for another dtype than the raveled one) */
static SrVal *unravel_call(SrInterp *I, SrVal *self, SrArgs *a) {
  const Unravel *u = self->obj.data;
  if (a->n != 1) return sr_raise(I, "TypeError", "unravel_pytree() takes 1 positional argument but %d were given", a->n);
  SrVal *arr = a->v[0], *chunks = NULL, *leaves = NULL, *r = NULL, *dt = NULL;
  if (u->to_dtype) {
    dt = callq(I, "jax.numpy.result_type", 1, &arr);
    SrVal *ne = dt ? sr_binop(I, SR_OP_NE, dt, u->to_dtype) : NULL;
    int differ = ne ? sr_truthy(I, ne) : -1;
    sr_unref(ne);
    if (differ < 0) goto out;
    if (differ) {
      SrBuf x = SR_BUF_INIT, y = SR_BUF_INIT;
      sr_val_str(&x, dt);
      sr_val_str(&y, u->to_dtype);
      sr_raise(I, "TypeError", "unravel function given array of dtype %s but expected dtype %s", x.p, y.p);
      sr_buf_free(&x);
      sr_buf_free(&y);
      goto out;
    }
  }
  int n = u->shapes->seq.n;
  if (n) {
    SrVal *cut = sr_seq(NULL, SR_V_LIST, n);
    for (int i = 0; i + 1 < n; i++) sr_seq_push(NULL, cut, sr_ref(u->indices->seq.items[i]));
    SrVal *args[2] = {arr, cut};
    chunks = callq(I, "jax.numpy.split", 2, args);
    sr_unref(cut);
    if (!chunks) goto out;
  }
  leaves = sr_seq(NULL, SR_V_LIST, n);
  for (int i = 0; i < n; i++) {
    SrVal *rs = sr_getattr(I, chunks->seq.items[i], "reshape");
    SrVal *x = rs ? sr_call1(I, rs, u->shapes->seq.items[i]) : NULL;
    sr_unref(rs);
    if (x && u->from_dtypes) {
      SrVal *args[2] = {x, u->from_dtypes->seq.items[i]};
      SrVal *c = callq(I, "jax.lax.convert_element_type", 2, args);
      sr_unref(x);
      x = c;
    }
    if (!x) goto out;
    sr_seq_push(NULL, leaves, x);
  }
  SrVal *unf = sr_getattr(I, u->treedef, "unflatten");
  r = unf ? sr_call1(I, unf, leaves) : NULL;
  sr_unref(unf);
out:
  sr_unref(dt);
  sr_unref(chunks);
  sr_unref(leaves);
  return r;
}

/* util.HashablePartial's ==: the same treedef, shapes, split points and
   dtypes (jit's static_argnums take one unravel for another) */
static SrVal *unravel_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  if (op != SR_OP_EQ && op != SR_OP_NE) return NULL;
  if (a->kind != SR_V_OBJ || b->kind != SR_V_OBJ || a->obj.cls != b->obj.cls) return sr_bool(op == SR_OP_NE);
  const Unravel *x = a->obj.data, *y = b->obj.data;
  SrVal *fx[5] = {x->treedef, x->shapes, x->indices, x->from_dtypes, x->to_dtype};
  SrVal *fy[5] = {y->treedef, y->shapes, y->indices, y->from_dtypes, y->to_dtype};
  int eq = 1;
  for (int i = 0; i < 5 && eq; i++) {
    if (!fx[i] || !fy[i]) {
      eq = !fx[i] && !fy[i];
      continue;
    }
    SrVal *r = sr_binop(I, SR_OP_EQ, fx[i], fy[i]);
    if (!r) return NULL;
    eq = sr_truthy(I, r);
    sr_unref(r);
    if (eq < 0) return NULL;
  }
  return sr_bool(op == SR_OP_EQ ? eq : !eq);
}

static const SrLangOps unravel_ops = {.call = unravel_call, .binop = unravel_binop};
static const SrClass unravel_class = {"HashablePartial", unravel_free, NULL, NULL, &unravel_ops};

/* ravel_pytree(pytree): (the leaves raveled and concatenated in their
   result type, unravel); no leaves give a float32 [] */
static SrVal *bi_ravel_pytree(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "ravel_pytree", "pytree", p) < 0) return NULL;
  SrVal *fl = callq(I, "jax.tree_util.tree_flatten", 1, p);
  if (!fl) return NULL;
  SrVal *lv = fl->seq.items[0];
  int n = lv->seq.n, one = 1;
  Unravel *u = sr_xcalloc(1, sizeof *u);
  u->treedef = sr_ref(fl->seq.items[1]);
  u->shapes = sr_seq(NULL, SR_V_LIST, n);
  u->indices = sr_seq(NULL, SR_V_LIST, n);
  SrVal *dts = sr_seq(NULL, SR_V_LIST, n), *flat = NULL, *to = NULL, *parts = sr_seq(NULL, SR_V_LIST, n);
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    SrVal *x = lv->seq.items[i];
    SrVal *dt = callq(I, "jax.numpy.result_type", 1, &x), *sh = dt ? callq(I, "jax.numpy.shape", 1, &x) : NULL;
    SrVal *sz = sh ? callq(I, "jax.numpy.size", 1, &x) : NULL;
    if (!sz) {
      sr_unref(dt);
      sr_unref(sh);
      goto out;
    }
    total += sz->i;
    sr_unref(sz);
    sr_seq_push(NULL, dts, dt);
    sr_seq_push(NULL, u->shapes, sh);
    sr_seq_push(NULL, u->indices, sr_int(NULL, total));
  }
  if (!n) {
    SrVal *args[2] = {sr_seq(NULL, SR_V_LIST, 0), sr_lookup_qualname("jax.numpy.float32")};
    flat = callq(I, "jax.numpy.array", 2, args);
    sr_unref(args[0]);
  } else {
    to = callq(I, "jax.numpy.result_type", n, dts->seq.items);
    if (!to) goto out;
    for (int i = 0; i < n && one; i++) {
      SrVal *eq = sr_binop(I, SR_OP_EQ, dts->seq.items[i], to);
      if (!eq) goto out;
      one = sr_val_truthy(eq);
      sr_unref(eq);
    }
    for (int i = 0; i < n; i++) {
      SrVal *x = sr_ref(lv->seq.items[i]);
      if (!one) {
        SrVal *args[2] = {x, to};
        SrVal *c = callq(I, "jax.lax.convert_element_type", 2, args);
        sr_unref(x);
        x = c;
      }
      SrVal *rv = x ? callq(I, "jax.numpy.ravel", 1, &x) : NULL;
      sr_unref(x);
      if (!rv) goto out;
      sr_seq_push(NULL, parts, rv);
    }
    flat = callq(I, "jax.numpy.concatenate", 1, &parts);
    if (!one) {
      u->from_dtypes = sr_ref(dts);
      u->to_dtype = sr_ref(to);
    }
  }
out:
  sr_unref(fl);
  sr_unref(dts);
  sr_unref(parts);
  sr_unref(to);
  if (!flat) {
    unravel_free(u);
    return NULL;
  }
  SrVal *items[2] = {flat, sr_obj(&unravel_class, u)};
  return sr_tuple(NULL, 2, items);
}

void sr_tree_more_init(void) {
  sr_val_traverse_class(&partial_class, partial_traverse, partial_clear);
  sr_def("jax.tree_util.Partial", bi_partial,
         "Partial(func, *args, **kw): functools.partial as a pytree (args and keywords its children)");
  sr_def("jax.tree.reduce_associative jax.tree_util.tree_reduce_associative", bi_reduce_associative,
         "reduce_associative(operation, tree, *, identity=, is_leaf=None): the leaves reduced pairwise, halves first");
  sr_def("jax.flatten_util.ravel_pytree", bi_ravel_pytree,
         "ravel_pytree(pytree): (the leaves raveled into one 1-D array, unravel), unravel(flat) the pytree again");
  sr_def("jax.tree_util.all_leaves", bi_all_leaves, "all_leaves(iterable, is_leaf=None): whether every item is a leaf");
  sr_def("jax.tree_util.register_pytree_with_keys", bi_register_with_keys,
         "register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None): a pytree node");
  sr_def("jax.tree_util.register_pytree_with_keys_class", bi_register_with_keys_class,
         "register_pytree_with_keys_class(cls): cls a pytree node by its tree_flatten_with_keys and tree_unflatten");
  sr_def("jax.tree.static", bi_static,
         "static(**kwargs): dataclasses.field(metadata={'static': True}, **kwargs), a static dataclass field");
}
