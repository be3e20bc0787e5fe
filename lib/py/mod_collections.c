/* mod_collections.c: Python's collections -- deque, OrderedDict,
 * defaultdict, Counter -- with CPython's reprs and messages.
 * (namedtuple is the class machinery's, registered elsewhere.)
 *
 * The three mappings wrap a dict: its methods (keys, items, get, pop,
 * update...) are the dict's own, bound to it, and what each adds is here:
 * defaultdict's default_factory for a missing key, Counter's zero and
 * most_common, OrderedDict's move_to_end and popitem(last=). */
#include <stdlib.h>
#include <string.h>

#include "py/modules.h"
#include "py/objects.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- deque ---- */

typedef struct Deque {
  SrVal *items;   /* a list */
  int64_t maxlen; /* -1: unbounded */
} Deque;

static void deque_free(void *d) {
  Deque *q = d;
  sr_unref(q->items);
  free(q);
}

static void deque_traverse(void *d, SrValVisit visit, void *arg) { visit(((Deque *)d)->items, arg); }

static void deque_clear_items(Deque *q) {
  SrVal *l = q->items;
  q->items = sr_seq(NULL, SR_V_LIST, 0);
  sr_unref(l);
}

static void deque_gc_clear(void *d) { deque_clear_items(d); }

static void deque_repr(SrBuf *out, const SrVal *v) {
  const Deque *q = v->obj.data;
  sr_buf_puts(out, "deque(");
  sr_val_repr(out, q->items);
  if (q->maxlen >= 0) sr_buf_printf(out, ", maxlen=%lld", (long long)q->maxlen);
  sr_buf_putc(out, ')');
}

static const SrClass deque_class;

static void push_back(Deque *q, SrVal *x) {
  if (q->maxlen == 0) {
    sr_unref(x);
    return;
  }
  if (q->maxlen > 0 && q->items->seq.n >= q->maxlen) {
    SrVal **it = q->items->seq.items;
    sr_unref(it[0]);
    memmove(it, it + 1, (size_t)(q->items->seq.n - 1) * sizeof *it);
    q->items->seq.n--;
  }
  sr_seq_push(NULL, q->items, x);
}

static void push_front(Deque *q, SrVal *x) {
  if (q->maxlen == 0) {
    sr_unref(x);
    return;
  }
  if (q->maxlen > 0 && q->items->seq.n >= q->maxlen) sr_unref(q->items->seq.items[--q->items->seq.n]);
  sr_seq_push(NULL, q->items, x); /* room */
  SrVal **it = q->items->seq.items;
  memmove(it + 1, it, (size_t)(q->items->seq.n - 1) * sizeof *it);
  it[0] = x;
}

static int one_arg(SrInterp *I, SrArgs *a, const char *name) {
  if (a->nkw || a->n != 1) {
    sr_raise(I, "TypeError", "deque.%s() takes exactly one argument (%d given)", name, a->n + a->nkw);
    return -1;
  }
  return 0;
}

static int no_args(SrInterp *I, SrArgs *a, const char *name) {
  if (a->nkw || a->n) {
    sr_raise(I, "TypeError", "deque.%s() takes no arguments (%d given)", name, a->n + a->nkw);
    return -1;
  }
  return 0;
}

static SrVal *dq_append(SrInterp *I, SrArgs *a) {
  if (one_arg(I, a, "append") < 0) return NULL;
  push_back(a->self->obj.data, sr_ref(a->v[0]));
  return sr_none();
}

static SrVal *dq_appendleft(SrInterp *I, SrArgs *a) {
  if (one_arg(I, a, "appendleft") < 0) return NULL;
  push_front(a->self->obj.data, sr_ref(a->v[0]));
  return sr_none();
}

static SrVal *dq_extend_side(SrInterp *I, SrArgs *a, int left) {
  if (one_arg(I, a, left ? "extendleft" : "extend") < 0) return NULL;
  SrVal *l = sr_iterate(I, a->v[0]);
  if (!l) return NULL;
  for (int i = 0; i < l->seq.n; i++) (left ? push_front : push_back)(a->self->obj.data, sr_ref(l->seq.items[i]));
  sr_unref(l);
  return sr_none();
}

static SrVal *dq_extend(SrInterp *I, SrArgs *a) { return dq_extend_side(I, a, 0); }
static SrVal *dq_extendleft(SrInterp *I, SrArgs *a) { return dq_extend_side(I, a, 1); }

static SrVal *dq_pop_side(SrInterp *I, SrArgs *a, int left) {
  if (no_args(I, a, left ? "popleft" : "pop") < 0) return NULL;
  Deque *q = a->self->obj.data;
  SrVal *l = q->items;
  if (!l->seq.n) return sr_raise(I, "IndexError", "pop from an empty deque");
  if (!left) return l->seq.items[--l->seq.n];
  SrVal *x = l->seq.items[0];
  memmove(l->seq.items, l->seq.items + 1, (size_t)(l->seq.n - 1) * sizeof x);
  l->seq.n--;
  return x;
}

static SrVal *dq_pop(SrInterp *I, SrArgs *a) { return dq_pop_side(I, a, 0); }
static SrVal *dq_popleft(SrInterp *I, SrArgs *a) { return dq_pop_side(I, a, 1); }

static SrVal *dq_rotate(SrInterp *I, SrArgs *a) {
  int64_t n = 1;
  if (a->nkw || a->n > 1) return sr_raise(I, "TypeError", "rotate expected at most 1 argument, got %d", a->n + a->nkw);
  if (a->n && sr_as_int(I, a->v[0], "rotate()", &n) < 0) return NULL;
  Deque *q = a->self->obj.data;
  int len = q->items->seq.n;
  if (len < 2) return sr_none();
  int k = (int)(((n % len) + len) % len);
  if (!k) return sr_none();
  SrVal **it = q->items->seq.items, **tmp = sr_xmalloc((size_t)len * sizeof *tmp);
  for (int i = 0; i < len; i++) tmp[(i + k) % len] = it[i];
  memcpy(it, tmp, (size_t)len * sizeof *tmp);
  free(tmp);
  return sr_none();
}

static SrVal *dq_clear(SrInterp *I, SrArgs *a) {
  if (no_args(I, a, "clear") < 0) return NULL;
  deque_clear_items(a->self->obj.data);
  return sr_none();
}

static SrVal *dq_new(SrVal *items, int64_t maxlen);

static SrVal *dq_copy(SrInterp *I, SrArgs *a) {
  if (no_args(I, a, "copy") < 0) return NULL;
  Deque *q = a->self->obj.data;
  SrVal *l = sr_seq(NULL, SR_V_LIST, q->items->seq.n);
  for (int i = 0; i < q->items->seq.n; i++) sr_seq_push(NULL, l, sr_ref(q->items->seq.items[i]));
  return dq_new(l, q->maxlen);
}

static SrVal *dq_reverse(SrInterp *I, SrArgs *a) {
  if (no_args(I, a, "reverse") < 0) return NULL;
  SrVal *l = ((Deque *)a->self->obj.data)->items;
  for (int i = 0, j = l->seq.n - 1; i < j; i++, j--) {
    SrVal *t = l->seq.items[i];
    l->seq.items[i] = l->seq.items[j];
    l->seq.items[j] = t;
  }
  return sr_none();
}

/* count, index, remove: the list's own methods on the items */
static SrVal *dq_list_method(SrInterp *I, SrArgs *a, const char *name) {
  SrVal *m = sr_getattr(I, ((Deque *)a->self->obj.data)->items, name);
  if (!m) return NULL;
  SrArgs b = *a;
  b.self = NULL;
  SrVal *r = sr_call(I, m, &b);
  sr_unref(m);
  if (!r && I->exc && strcmp(name, "count") != 0 && sr_exception_is_a(sr_exc_type(I->exc), "ValueError")) {
    sr_exc_clear(I);
    SrBuf b2 = SR_BUF_INIT;
    if (a->n) sr_val_repr(&b2, a->v[0]);
    r = sr_raise(I, "ValueError", "%s is not in deque", sr_buf_str(&b2));
    sr_buf_free(&b2);
  }
  return r;
}

static SrVal *dq_count(SrInterp *I, SrArgs *a) { return dq_list_method(I, a, "count"); }
static SrVal *dq_index(SrInterp *I, SrArgs *a) { return dq_list_method(I, a, "index"); }
static SrVal *dq_remove(SrInterp *I, SrArgs *a) { return dq_list_method(I, a, "remove"); }

static SrVal *deque_getattr(SrInterp *I, SrVal *self, const char *name) {
  static const struct {
    const char *name;
    SrBuiltinFn fn;
  } methods[] = {
    {"append", dq_append}, {"appendleft", dq_appendleft}, {"extend", dq_extend},
    {"extendleft", dq_extendleft}, {"pop", dq_pop}, {"popleft", dq_popleft}, {"rotate", dq_rotate},
    {"clear", dq_clear}, {"copy", dq_copy}, {"reverse", dq_reverse}, {"count", dq_count},
    {"index", dq_index}, {"remove", dq_remove}, {NULL, NULL},
  };
  (void)I;
  const Deque *q = self->obj.data;
  if (strcmp(name, "maxlen") == 0) return q->maxlen < 0 ? sr_none() : sr_int(NULL, q->maxlen);
  for (int i = 0; methods[i].name; i++)
    if (strcmp(methods[i].name, name) == 0) return sr_bound_method(self, methods[i].name, methods[i].fn);
  return NULL;
}

static int deque_index(SrInterp *I, const Deque *q, SrVal *key, int64_t *i) {
  if (key->kind != SR_V_INT && key->kind != SR_V_BOOL) {
    sr_raise(I, "TypeError", "sequence index must be integer, not '%s'", sr_val_kind_name(key));
    return -1;
  }
  int64_t n = q->items->seq.n, k = key->i < 0 ? key->i + n : key->i;
  if (k < 0 || k >= n) {
    sr_raise(I, "IndexError", "deque index out of range");
    return -1;
  }
  *i = k;
  return 0;
}

static SrVal *deque_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  const Deque *q = self->obj.data;
  int64_t i;
  if (deque_index(I, q, key, &i) < 0) return NULL;
  return sr_ref(q->items->seq.items[i]);
}

static int deque_setitem(SrInterp *I, SrVal *self, SrVal *key, SrVal *v) {
  const Deque *q = self->obj.data;
  int64_t i;
  if (deque_index(I, q, key, &i) < 0) return -1;
  sr_unref(q->items->seq.items[i]);
  q->items->seq.items[i] = sr_ref(v);
  return 0;
}

static SrVal *deque_iter(SrInterp *I, SrVal *self) {
  const Deque *q = self->obj.data;
  (void)I;
  SrVal *l = sr_seq(NULL, SR_V_LIST, q->items->seq.n);
  for (int i = 0; i < q->items->seq.n; i++) sr_seq_push(NULL, l, sr_ref(q->items->seq.items[i]));
  return l;
}

static int64_t deque_len(SrInterp *I, SrVal *self) {
  (void)I;
  return ((const Deque *)self->obj.data)->items->seq.n;
}

static int deque_truthy(SrInterp *I, SrVal *self) { return deque_len(I, self) > 0; }

/* comparisons of two deques, as their lists compare; NULL (not
   implemented) for anything else */
static SrVal *deque_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  if (op < SR_OP_EQ || op > SR_OP_GE) return NULL;
  if (!sr_is_obj(a, &deque_class) || !sr_is_obj(b, &deque_class)) return NULL;
  return sr_binop(I, op, ((Deque *)a->obj.data)->items, ((Deque *)b->obj.data)->items);
}

static const SrLangOps deque_ops = {
  .getattr = deque_getattr, .getitem = deque_getitem, .setitem = deque_setitem, .iter = deque_iter,
  .binop = deque_binop, .len = deque_len, .truthy = deque_truthy,
};
static const SrClass deque_class = {"collections.deque", deque_free, deque_repr, NULL, &deque_ops};

static SrVal *dq_new(SrVal *items, int64_t maxlen) {
  Deque *q = sr_xcalloc(1, sizeof *q);
  q->items = sr_seq(NULL, SR_V_LIST, 0);
  q->maxlen = maxlen;
  for (int i = 0; i < items->seq.n; i++) push_back(q, sr_ref(items->seq.items[i]));
  sr_unref(items);
  return sr_obj(&deque_class, q);
}

static SrVal *co_deque(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "deque", "iterable=, maxlen=", p) < 0) return NULL;
  int64_t maxlen = -1;
  if (p[1] && p[1]->kind != SR_V_NONE) {
    if (p[1]->kind != SR_V_INT && p[1]->kind != SR_V_BOOL)
      return sr_raise(I, "TypeError", "an integer is required");
    maxlen = p[1]->i;
    if (maxlen < 0) return sr_raise(I, "ValueError", "maxlen must be non-negative");
  }
  SrVal *items = p[0] ? sr_iterate(I, p[0]) : sr_seq(NULL, SR_V_LIST, 0);
  return items ? dq_new(items, maxlen) : NULL;
}

/* ---- the mappings ---- */

enum { ORDERED, DEFAULT, COUNTER };

typedef struct Mapping {
  int kind;
  SrVal *d;       /* the dict */
  SrVal *factory; /* defaultdict's default_factory (None too) */
} Mapping;

static const SrClass mapping_classes[3];

static void mapping_free(void *d) {
  Mapping *m = d;
  sr_unref(m->d);
  sr_unref(m->factory);
  free(m);
}

static void mapping_traverse(void *d, SrValVisit visit, void *arg) {
  Mapping *m = d;
  visit(m->d, arg);
  if (m->factory) visit(m->factory, arg);
}

static void mapping_clear(void *d) {
  Mapping *m = d;
  SrVal *old = m->d, *f = m->factory;
  m->d = sr_dict(NULL);
  m->factory = NULL;
  sr_unref(old);
  sr_unref(f);
}

/* a callable's repr as Python writes a class: <class 'list'> for the
   built-in types, else its repr */
static void factory_repr(SrBuf *out, const SrVal *f) {
  const char *n = sr_builtin_name((SrVal *)f);
  if (n && strncmp(n, "builtins.", 9) == 0) sr_buf_printf(out, "<class '%s'>", n + 9);
  else sr_val_repr(out, f);
}

static void mapping_repr(SrBuf *out, const SrVal *v) {
  const Mapping *m = v->obj.data;
  SrVal *d = m->d;
  if (m->kind == ORDERED) {
    sr_buf_puts(out, "OrderedDict(");
    if (d->dict.n) {
      sr_buf_putc(out, '[');
      for (int i = 0; i < d->dict.n; i++) {
        sr_buf_puts(out, i ? ", (" : "(");
        sr_val_repr(out, d->dict.keys[i]);
        sr_buf_puts(out, ", ");
        sr_val_repr(out, d->dict.vals[i]);
        sr_buf_putc(out, ')');
      }
      sr_buf_putc(out, ']');
    }
    sr_buf_putc(out, ')');
  } else if (m->kind == DEFAULT) {
    sr_buf_puts(out, "defaultdict(");
    if (m->factory && m->factory->kind != SR_V_NONE) factory_repr(out, m->factory);
    else sr_buf_puts(out, "None");
    sr_buf_puts(out, ", ");
    sr_val_repr(out, d);
    sr_buf_putc(out, ')');
  } else {
    /* in most_common's order: by count, descending, ties as inserted */
    int n = d->dict.n, *idx = sr_xmalloc(((size_t)n + 1) * sizeof *idx);
    for (int i = 0; i < n; i++) {
      int j = i;
      const SrVal *c = d->dict.vals[i];
      for (; j > 0 && c->kind == SR_V_INT && d->dict.vals[idx[j - 1]]->kind == SR_V_INT &&
             c->i > d->dict.vals[idx[j - 1]]->i;
           j--)
        idx[j] = idx[j - 1];
      idx[j] = i;
    }
    sr_buf_puts(out, n ? "Counter({" : "Counter(");
    for (int i = 0; i < n; i++) {
      if (i) sr_buf_puts(out, ", ");
      sr_val_repr(out, d->dict.keys[idx[i]]);
      sr_buf_puts(out, ": ");
      sr_val_repr(out, d->dict.vals[idx[i]]);
    }
    sr_buf_puts(out, n ? "})" : ")");
    free(idx);
  }
}

static SrVal *mapping_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  Mapping *m = self->obj.data;
  SrVal *v = sr_dict_get(m->d, key);
  if (v) return sr_ref(v);
  if (m->kind == COUNTER) return sr_int(NULL, 0);
  if (m->kind == DEFAULT && m->factory && m->factory->kind != SR_V_NONE) {
    SrArgs none = {0, NULL, 0, NULL, NULL, NULL};
    SrVal *x = sr_call(I, m->factory, &none);
    if (!x) return NULL;
    sr_dict_set(NULL, m->d, sr_ref(key), sr_ref(x));
    return x;
  }
  return sr_getitem(I, m->d, key); /* the dict's KeyError */
}

static int mapping_setitem(SrInterp *I, SrVal *self, SrVal *key, SrVal *v) {
  return sr_setitem(I, ((Mapping *)self->obj.data)->d, key, v);
}

static SrVal *mapping_iter(SrInterp *I, SrVal *self) { return sr_iterate(I, ((Mapping *)self->obj.data)->d); }

static int64_t mapping_len(SrInterp *I, SrVal *self) {
  (void)I;
  return ((Mapping *)self->obj.data)->d->dict.n;
}

static int mapping_truthy(SrInterp *I, SrVal *self) { return mapping_len(I, self) > 0; }

static SrVal *inner(SrVal *v) {
  for (int k = 0; k < 3; k++)
    if (sr_is_obj(v, &mapping_classes[k])) return ((Mapping *)v->obj.data)->d;
  return v;
}

/* == and != with dicts and the other mappings */
static SrVal *mapping_binop(SrInterp *I, int op, SrVal *a, SrVal *b) {
  (void)I;
  if (op != SR_OP_EQ && op != SR_OP_NE) return NULL;
  SrVal *x = inner(a), *y = inner(b);
  if (x->kind != SR_V_DICT || y->kind != SR_V_DICT) return NULL;
  int eq = x->dict.n == y->dict.n;
  for (int i = 0; eq && i < x->dict.n; i++) {
    SrVal *w = sr_dict_get(y, x->dict.keys[i]);
    eq = w && sr_val_equal(w, x->dict.vals[i]);
  }
  /* two OrderedDicts are equal only in the same order */
  if (eq && a != x && b != y && ((Mapping *)a->obj.data)->kind == ORDERED && ((Mapping *)b->obj.data)->kind == ORDERED)
    for (int i = 0; eq && i < x->dict.n; i++) eq = sr_val_equal(x->dict.keys[i], y->dict.keys[i]);
  return sr_bool(op == SR_OP_EQ ? eq : !eq);
}

/* Counter.most_common([n]): (key, count) pairs, most first, ties in
   insertion order */
static SrVal *m_most_common(SrInterp *I, SrArgs *a) {
  Mapping *m = a->self->obj.data;
  int64_t n = -1;
  if (a->n > 1 || a->nkw) return sr_raise(I, "TypeError", "most_common() takes from 1 to 2 positional arguments");
  if (a->n && a->v[0]->kind != SR_V_NONE && sr_as_int(I, a->v[0], "n", &n) < 0) return NULL;
  SrVal *pairs = sr_seq(NULL, SR_V_LIST, m->d->dict.n);
  for (int i = 0; i < m->d->dict.n; i++) {
    SrVal *t[2] = {sr_ref(m->d->dict.keys[i]), sr_ref(m->d->dict.vals[i])};
    sr_seq_push(NULL, pairs, sr_tuple(NULL, 2, t));
  }
  /* a stable insertion sort by count, descending */
  for (int i = 1; i < pairs->seq.n; i++) {
    SrVal *x = pairs->seq.items[i];
    int j = i;
    for (; j > 0; j--) {
      SrVal *gt = sr_binop(I, SR_OP_GT, x->seq.items[1], pairs->seq.items[j - 1]->seq.items[1]);
      if (!gt) {
        sr_unref(pairs);
        return NULL;
      }
      int t = sr_val_truthy(gt);
      sr_unref(gt);
      if (!t) break;
      pairs->seq.items[j] = pairs->seq.items[j - 1];
    }
    pairs->seq.items[j] = x;
  }
  if (n >= 0 && n < pairs->seq.n) {
    for (int i = (int)n; i < pairs->seq.n; i++) sr_unref(pairs->seq.items[i]);
    pairs->seq.n = (int)n;
  }
  return pairs;
}

static SrVal *m_total(SrInterp *I, SrArgs *a) {
  Mapping *m = a->self->obj.data;
  SrVal *acc = sr_int(NULL, 0);
  for (int i = 0; acc && i < m->d->dict.n; i++) {
    SrVal *r = sr_binop(I, SR_OP_ADD, acc, m->d->dict.vals[i]);
    sr_unref(acc);
    acc = r;
  }
  return acc;
}

/* counts in: a mapping's values added, or each item of an iterable once */
static int count_in(SrInterp *I, Mapping *m, SrVal *src, int sign) {
  SrVal *d = inner(src);
  if (d->kind == SR_V_DICT) {
    for (int i = 0; i < d->dict.n; i++) {
      SrVal *old = sr_dict_get(m->d, d->dict.keys[i]);
      SrVal *zero = sr_int(NULL, 0);
      SrVal *r = sr_binop(I, sign > 0 ? SR_OP_ADD : SR_OP_SUB, old ? old : zero, d->dict.vals[i]);
      sr_unref(zero);
      if (!r) return -1;
      sr_dict_set(NULL, m->d, sr_ref(d->dict.keys[i]), r);
    }
    return 0;
  }
  SrVal *items = sr_iterate(I, src);
  if (!items) return -1;
  for (int i = 0; i < items->seq.n; i++) {
    SrVal *old = sr_dict_get(m->d, items->seq.items[i]);
    int64_t c = old && old->kind == SR_V_INT ? old->i : 0;
    sr_dict_set(NULL, m->d, sr_ref(items->seq.items[i]), sr_int(NULL, c + sign));
  }
  sr_unref(items);
  return 0;
}

static SrVal *m_counter_update(SrInterp *I, SrArgs *a) {
  Mapping *m = a->self->obj.data;
  int sign = strcmp(sr_current_builtin(I)->name, "subtract") == 0 ? -1 : 1;
  for (int i = 0; i < a->n; i++)
    if (count_in(I, m, a->v[i], sign) < 0) return NULL;
  for (int i = 0; i < a->nkw; i++) {
    SrVal *k = sr_str_cstr(NULL, a->kw[i]);
    SrVal *cur = sr_dict_get(m->d, k), *zero = sr_int(NULL, 0);
    SrVal *r = sr_binop(I, sign > 0 ? SR_OP_ADD : SR_OP_SUB, cur ? cur : zero, a->kwv[i]);
    sr_unref(zero);
    if (!r) {
      sr_unref(k);
      return NULL;
    }
    sr_dict_set(NULL, m->d, k, r);
  }
  return sr_none();
}

static SrVal *m_elements(SrInterp *I, SrArgs *a) {
  Mapping *m = a->self->obj.data;
  SrVal *out = sr_seq(NULL, SR_V_LIST, 0);
  for (int i = 0; i < m->d->dict.n; i++) {
    SrVal *c = m->d->dict.vals[i];
    for (int64_t k = 0; c->kind == SR_V_INT && k < c->i; k++) sr_seq_push(NULL, out, sr_ref(m->d->dict.keys[i]));
  }
  (void)I;
  return out;
}

/* move_to_end(key, last=True) */
static SrVal *m_move_to_end(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "move_to_end", "key, last=", p) < 0) return NULL;
  int last = p[1] ? sr_truthy(I, p[1]) : 1;
  if (last < 0) return NULL;
  SrVal *d = ((Mapping *)a->self->obj.data)->d;
  int n = d->dict.n, i = 0;
  while (i < n && !sr_val_equal(d->dict.keys[i], p[0])) i++;
  if (i == n) return sr_getitem(I, d, p[0]); /* KeyError */
  SrVal *k = d->dict.keys[i], *v = d->dict.vals[i];
  if (last) {
    memmove(d->dict.keys + i, d->dict.keys + i + 1, (size_t)(n - i - 1) * sizeof k);
    memmove(d->dict.vals + i, d->dict.vals + i + 1, (size_t)(n - i - 1) * sizeof v);
    d->dict.keys[n - 1] = k;
    d->dict.vals[n - 1] = v;
  } else {
    memmove(d->dict.keys + 1, d->dict.keys, (size_t)i * sizeof k);
    memmove(d->dict.vals + 1, d->dict.vals, (size_t)i * sizeof v);
    d->dict.keys[0] = k;
    d->dict.vals[0] = v;
  }
  return sr_none();
}

/* popitem(last=True) */
static SrVal *m_popitem(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "popitem", "last=", p) < 0) return NULL;
  int last = p[0] ? sr_truthy(I, p[0]) : 1;
  if (last < 0) return NULL;
  SrVal *d = ((Mapping *)a->self->obj.data)->d;
  if (!d->dict.n) return sr_raise(I, "KeyError", "'dictionary is empty'");
  int i = last ? d->dict.n - 1 : 0;
  SrVal *t[2] = {d->dict.keys[i], d->dict.vals[i]};
  memmove(d->dict.keys + i, d->dict.keys + i + 1, (size_t)(d->dict.n - i - 1) * sizeof *t);
  memmove(d->dict.vals + i, d->dict.vals + i + 1, (size_t)(d->dict.n - i - 1) * sizeof *t);
  d->dict.n--;
  return sr_tuple(NULL, 2, t);
}

static SrVal *mapping_getattr(SrInterp *I, SrVal *self, const char *name) {
  Mapping *m = self->obj.data;
  if (m->kind == DEFAULT && strcmp(name, "default_factory") == 0) return sr_ref(m->factory ? m->factory : sr_none());
  if (m->kind == COUNTER) {
    if (strcmp(name, "most_common") == 0) return sr_bound_method(self, name, m_most_common);
    if (strcmp(name, "total") == 0) return sr_bound_method(self, name, m_total);
    if (strcmp(name, "elements") == 0) return sr_bound_method(self, name, m_elements);
    if (strcmp(name, "update") == 0 || strcmp(name, "subtract") == 0)
      return sr_bound_method(self, strcmp(name, "update") == 0 ? "update" : "subtract", m_counter_update);
  }
  if (m->kind == ORDERED) {
    if (strcmp(name, "move_to_end") == 0) return sr_bound_method(self, name, m_move_to_end);
    if (strcmp(name, "popitem") == 0) return sr_bound_method(self, name, m_popitem);
  }
  SrVal *v = sr_getattr(I, m->d, name); /* the dict's own methods */
  if (!v) sr_exc_clear(I);
  return v;
}

static SrVal *mapping_new(int kind, SrVal *d, SrVal *factory) {
  Mapping *m = sr_xcalloc(1, sizeof *m);
  m->kind = kind;
  m->d = d;
  m->factory = factory;
  return sr_obj(&mapping_classes[kind], m);
}

/* JAX registers OrderedDict (its values in insertion order, its keys the
   node's data) and defaultdict (its values in sorted key order, its data
   (default_factory, sorted keys)) as pytree nodes; Counter is a leaf. */

/* (objects.h) defaultdict's order, and a dict's as JAX flattens it */
int sr_tree_key_cmp(const SrVal *a, const SrVal *b) {
  if ((a->kind == SR_V_STR || a->kind == SR_V_WORD) && (b->kind == SR_V_STR || b->kind == SR_V_WORD)) {
    size_t n = a->str.n < b->str.n ? a->str.n : b->str.n;
    int c = memcmp(a->str.s, b->str.s, n);
    return c ? c : (a->str.n > b->str.n) - (a->str.n < b->str.n);
  }
  int an = a->kind == SR_V_INT || a->kind == SR_V_BOOL || a->kind == SR_V_FLOAT;
  int bn = b->kind == SR_V_INT || b->kind == SR_V_BOOL || b->kind == SR_V_FLOAT;
  if (an && bn) {
    double x = a->kind == SR_V_FLOAT ? a->f : (double)a->i, y = b->kind == SR_V_FLOAT ? b->f : (double)b->i;
    return (x > y) - (x < y);
  }
  return 0;
}

static int *tree_order(const Mapping *m) {
  int n = m->d->dict.n, *o = sr_xcalloc((size_t)n + 1, sizeof *o);
  for (int i = 0; i < n; i++) {
    int k = i;
    while (m->kind == DEFAULT && k > 0 && sr_tree_key_cmp(m->d->dict.keys[o[k - 1]], m->d->dict.keys[i]) > 0) {
      o[k] = o[k - 1];
      k--;
    }
    o[k] = i;
  }
  return o;
}

static SrVal *mapping_tree_children(SrVal *self) {
  Mapping *m = self->obj.data;
  if (m->kind == COUNTER) return NULL;
  int *o = tree_order(m);
  SrVal *l = sr_seq(NULL, SR_V_LIST, m->d->dict.n);
  for (int i = 0; i < m->d->dict.n; i++) sr_seq_push(NULL, l, sr_ref(m->d->dict.vals[o[i]]));
  free(o);
  return l;
}

static SrVal *mapping_tree_rebuild(SrVal *self, SrVal *children) {
  Mapping *m = self->obj.data;
  int *o = tree_order(m);
  SrVal *d = sr_dict(NULL);
  for (int i = 0; i < m->d->dict.n && i < children->seq.n; i++)
    sr_dict_set(NULL, d, sr_ref(m->d->dict.keys[o[i]]), sr_ref(children->seq.items[i]));
  free(o);
  return mapping_new(m->kind, d, m->factory ? sr_ref(m->factory) : NULL);
}

/* its PyTreeDef head (pytree.cc prints str(aux_data)):
   OrderedDict[('b', 'a')], defaultdict[(<class 'int'>, ('a', 'b'))] */
static void mapping_tree_head(SrVal *self, SrBuf *out) {
  Mapping *m = self->obj.data;
  int *o = tree_order(m);
  if (m->kind == DEFAULT) {
    sr_buf_puts(out, "defaultdict[(");
    if (m->factory) factory_repr(out, m->factory);
    else sr_buf_puts(out, "None");
    sr_buf_puts(out, ", (");
  } else {
    sr_buf_puts(out, "OrderedDict[(");
  }
  for (int i = 0; i < m->d->dict.n; i++) {
    if (i) sr_buf_puts(out, ", ");
    sr_val_repr(out, m->d->dict.keys[o[i]]);
  }
  free(o);
  sr_buf_puts(out, m->d->dict.n == 1 ? ",)" : ")");
  sr_buf_puts(out, m->kind == DEFAULT ? ")]" : "]");
}

static const SrLangOps mapping_ops = {
  .getattr = mapping_getattr, .getitem = mapping_getitem, .setitem = mapping_setitem, .iter = mapping_iter,
  .binop = mapping_binop, .len = mapping_len, .truthy = mapping_truthy,
  .tree_children = mapping_tree_children, .tree_rebuild = mapping_tree_rebuild, .tree_head = mapping_tree_head,
};
static const SrClass mapping_classes[3] = {
  {"collections.OrderedDict", mapping_free, mapping_repr, NULL, &mapping_ops},
  {"collections.defaultdict", mapping_free, mapping_repr, NULL, &mapping_ops},
  {"collections.Counter", mapping_free, mapping_repr, NULL, &mapping_ops},
};


/* dict(*args, **kwargs), through the built-in */
static SrVal *make_dict(SrInterp *I, int n, SrVal **v, SrArgs *a) {
  SrVal *fn = sr_lookup_qualname("builtins.dict");
  SrArgs b = {n, v, a->nkw, a->kw, a->kwv, NULL};
  if (n == 1) {
    SrVal *d = inner(v[0]);
    b.v = &d;
    return sr_call(I, fn, &b);
  }
  return sr_call(I, fn, &b);
}

static SrVal *co_ordereddict(SrInterp *I, SrArgs *a) {
  if (a->n > 1) return sr_raise(I, "TypeError", "expected at most 1 argument, got %d", a->n);
  SrVal *d = make_dict(I, a->n, a->v, a);
  return d ? mapping_new(ORDERED, d, NULL) : NULL;
}

static SrVal *co_defaultdict(SrInterp *I, SrArgs *a) {
  SrVal *factory = a->n ? a->v[0] : sr_none();
  if (factory->kind != SR_V_NONE && !sr_is_callable(I, factory))
    return sr_raise(I, "TypeError", "first argument must be callable or None");
  if (a->n > 2) return sr_raise(I, "TypeError", "dict expected at most 1 argument, got %d", a->n - 1);
  SrVal *d = make_dict(I, a->n > 1 ? 1 : 0, a->v + 1, a);
  return d ? mapping_new(DEFAULT, d, sr_ref(factory)) : NULL;
}

static SrVal *co_counter(SrInterp *I, SrArgs *a) {
  if (a->n > 1) return sr_raise(I, "TypeError", "expected at most 1 argument, got %d", a->n);
  SrVal *c = mapping_new(COUNTER, sr_dict(NULL), NULL);
  SrArgs u = *a;
  u.self = c;
  SrVal *r = sr_bound_method(c, "update", m_counter_update);
  SrVal *done = sr_call(I, r, &u);
  sr_unref(r);
  if (!done) {
    sr_unref(c);
    return NULL;
  }
  sr_unref(done);
  return c;
}

void sr_collections_init(void) {
  sr_val_traverse_class(&deque_class, deque_traverse, deque_gc_clear);
  for (int k = 0; k < 3; k++) sr_val_traverse_class(&mapping_classes[k], mapping_traverse, mapping_clear);
  sr_def("collections.deque", co_deque, "collections.deque(iterable=(), maxlen=None): a double-ended queue");
  sr_def("collections.OrderedDict", co_ordereddict,
         "collections.OrderedDict(mapping or pairs): a dict with move_to_end and popitem(last=)");
  sr_def("collections.defaultdict", co_defaultdict,
         "collections.defaultdict(default_factory=None, ...): a dict that makes a missing key's value");
  sr_def("collections.Counter", co_counter, "collections.Counter(iterable or mapping): counts, with most_common");
}
