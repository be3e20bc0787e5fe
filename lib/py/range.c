/* range.c: Python's range object and its iterator, and SrIter (range.h). */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "py/objects.h"
#include "py/range.h"
#include "py/class.h"
#include "py/generator.h"
#include "text/print_val.h"

/* The number of ints from start to stop by step.  The span and the step's
   magnitude may not fit in int64_t (range(-2**63, 2**63 - 1)), but they do
   as unsigned. */
static uint64_t range_len(int64_t start, int64_t stop, int64_t step) {
  if (step > 0 && stop > start) return ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
  if (step < 0 && start > stop) return ((uint64_t)start - (uint64_t)stop - 1) / (0 - (uint64_t)step) + 1;
  return 0;
}

/* Item i (0 <= i < len): it fits in int64_t, the products on the way may
   not, so they wrap as unsigned. */
static int64_t range_item(const SrRange *r, uint64_t i) {
  return (int64_t)((uint64_t)r->start + i * (uint64_t)r->step);
}

static SrVal *int_overflow(SrInterp *I) {
  return sr_raise(I, "OverflowError", "integer overflow: shardrepl's Python ints are 64-bit");
}

static SrVal *len_overflow(SrInterp *I) {
  return sr_raise(I, "OverflowError", "Python int too large to convert to C ssize_t");
}

/* Listing n items: a list holds at most INT_MAX, and one past what the
   process may get (sr_check_mem) is refused before it is built. */
int sr_listable(SrInterp *I, uint64_t n) {
  if (n > INT_MAX) {
    sr_raise(I, "MemoryError", "%s", "");
    return -1;
  }
  /* an int value, its allocation's overhead and the list's pointer */
  return sr_check_mem(I, n, sizeof(SrVal) + 16 + sizeof(SrVal *));
}

/* ---- the range_iterator ---- */

static void iter_repr(SrBuf *out, const SrVal *v) {
  sr_buf_printf(out, "<range_iterator object at %p>", v->obj.data);
}

/* Lists what is left, and leaves the iterator exhausted. */
static SrVal *iter_list(SrInterp *I, SrVal *self) {
  SrIterPos *p = self->obj.data;
  if (sr_listable(I, p->left) < 0) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)p->left);
  for (; p->left; p->left--) {
    sr_seq_push(NULL, l, sr_int(NULL, p->next));
    p->next = (int64_t)((uint64_t)p->next + (uint64_t)p->step);
  }
  return l;
}

static const SrLangOps iter_ops = {.iter = iter_list};
static const SrClass range_iter_class = {"range_iterator", free, iter_repr, NULL, &iter_ops};

int sr_is_range_iter(const SrVal *v) { return sr_is_obj(v, &range_iter_class); }

SrVal *sr_range_iter_step(SrVal *v) {
  SrIterPos *p = v->obj.data;
  if (!p->left) return NULL;
  SrVal *x = sr_int(NULL, p->next);
  p->left--;
  p->next = (int64_t)((uint64_t)p->next + (uint64_t)p->step);
  return x;
}

SrVal *sr_range_reversed(SrVal *v) {
  const SrRange *r = sr_as_range(v);
  SrIterPos *p = sr_xcalloc(1, sizeof *p);
  p->left = r->len;
  if (r->len) p->next = range_item(r, r->len - 1);
  p->step = (int64_t)(0 - (uint64_t)r->step); /* wraps for INT64_MIN, as the sum does */
  return sr_obj(&range_iter_class, p);
}

SrVal *sr_range_iter_new(int64_t next, int64_t step, uint64_t left) {
  SrIterPos *p = sr_xcalloc(1, sizeof *p);
  *p = (SrIterPos){next, step, left};
  return sr_obj(&range_iter_class, p);
}

/* ---- range ---- */

SrVal *sr_range_new(int64_t start, int64_t stop, int64_t step) {
  SrRange *r = sr_xcalloc(1, sizeof *r);
  r->start = start;
  r->stop = stop;
  r->step = step;
  r->len = range_len(start, stop, step);
  return sr_obj(&sr_range_class, r);
}

static void range_repr(SrBuf *out, const SrVal *v) {
  const SrRange *r = v->obj.data;
  sr_buf_printf(out, "range(%lld, %lld", (long long)r->start, (long long)r->stop);
  if (r->step != 1) sr_buf_printf(out, ", %lld", (long long)r->step);
  sr_buf_putc(out, ')');
}

/* Python's range equality: the same sequence of ints. */
static int range_equal(const SrVal *a, const SrVal *b) {
  const SrRange *x = a->obj.data, *y = b->obj.data;
  if (x->len != y->len) return 0;
  if (x->len == 0) return 1;
  if (x->start != y->start) return 0;
  return x->len == 1 || x->step == y->step;
}

static int64_t range_len_op(SrInterp *I, SrVal *self) {
  const SrRange *r = self->obj.data;
  if (r->len > INT64_MAX) {
    len_overflow(I);
    return -1;
  }
  return (int64_t)r->len;
}

static int range_truthy(SrInterp *I, SrVal *self) {
  (void)I;
  return ((const SrRange *)self->obj.data)->len != 0;
}

static SrVal *range_list(SrInterp *I, SrVal *self) {
  const SrRange *r = self->obj.data;
  if (sr_listable(I, r->len) < 0) return NULL;
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)r->len);
  for (uint64_t i = 0; i < r->len; i++) sr_seq_push(NULL, l, sr_int(NULL, range_item(r, i)));
  return l;
}

/* Where int x is in r: 1 and its index, or 0. */
static int int_index(const SrRange *r, int64_t x, uint64_t *idx) {
  uint64_t off, step;
  if (r->step > 0) {
    if (x < r->start || x >= r->stop) return 0;
    off = (uint64_t)x - (uint64_t)r->start;
    step = (uint64_t)r->step;
  } else {
    if (x > r->start || x <= r->stop) return 0;
    off = (uint64_t)r->start - (uint64_t)x;
    step = 0 - (uint64_t)r->step;
  }
  if (off % step) return 0;
  *idx = off / step;
  return 1;
}

/* An item that equals an int only when it is that int: ints, bools, and
   floats and complex numbers of integral value.  1 with the int, 0 for
   anything equal to no int (a string, a fraction), -1 for an object (an
   array), which only its == can tell. */
static int as_exact_int(const SrVal *v, int64_t *out) {
  double f;
  switch (v->kind) {
  case SR_V_INT:
  case SR_V_BOOL: *out = v->i; return 1;
  case SR_V_FLOAT: f = v->f; break;
  case SR_V_COMPLEX:
    if (v->c.im != 0) return 0;
    f = v->c.re;
    break;
  case SR_V_OBJ: return -1;
  default: return 0;
  }
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0) || f != floor(f)) return 0;
  *out = (int64_t)f;
  return 1;
}

/* Python's search by == for an object: the index of the first item equal
   to it, 1 if found (counting them all when count is given), 0 if not, -1
   with an exception.  A long walk can be interrupted. */
static int search(SrInterp *I, const SrRange *r, SrVal *item, uint64_t *idx, uint64_t *count) {
  int found = 0;
  for (uint64_t i = 0; i < r->len; i++) {
    if (sr_poll_interrupt(I)) return -1;
    SrVal *x = sr_int(NULL, range_item(r, i));
    SrVal *eq = sr_binop(I, SR_OP_EQ, item, x);
    sr_unref(x);
    int t = eq ? sr_truthy(I, eq) : -1;
    sr_unref(eq);
    if (t < 0) return -1;
    if (!t) continue;
    if (!found) *idx = i;
    found = 1;
    if (!count) return 1;
    ++*count;
  }
  return found;
}

int sr_range_contains(SrInterp *I, const SrRange *r, SrVal *item) {
  int64_t x;
  uint64_t idx;
  int k = as_exact_int(item, &x);
  if (k >= 0) return k && int_index(r, x, &idx);
  return search(I, r, item, &idx, NULL);
}

static SrVal *m_range_index(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw)
    return sr_raise(I, "TypeError", "range.index() takes exactly one argument (%d given)", a->n + a->nkw);
  const SrRange *r = a->self->obj.data;
  SrVal *item = a->v[0];
  int64_t x;
  uint64_t idx = 0;
  int k = as_exact_int(item, &x), found;
  if (k >= 0) {
    found = k && int_index(r, x, &idx);
  } else {
    found = search(I, r, item, &idx, NULL);
    if (found < 0) return NULL;
  }
  if (found) return idx > INT64_MAX ? len_overflow(I) : sr_int(NULL, (int64_t)idx);
  /* an int is looked up, anything else searched for */
  if (item->kind == SR_V_INT || item->kind == SR_V_BOOL) {
    SrBuf b = SR_BUF_INIT;
    sr_val_repr(&b, item);
    sr_raise(I, "ValueError", "%s is not in range", sr_buf_str(&b));
    sr_buf_free(&b);
    return NULL;
  }
  return sr_raise(I, "ValueError", "sequence.index(x): x not in sequence");
}

static SrVal *m_range_count(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw)
    return sr_raise(I, "TypeError", "range.count() takes exactly one argument (%d given)", a->n + a->nkw);
  const SrRange *r = a->self->obj.data;
  int64_t x;
  uint64_t idx, count = 0;
  int k = as_exact_int(a->v[0], &x);
  if (k >= 0) return sr_int(NULL, k && int_index(r, x, &idx));
  if (search(I, r, a->v[0], &idx, &count) < 0) return NULL;
  return sr_int(NULL, (int64_t)count);
}

static SrVal *range_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  const SrRange *r = self->obj.data;
  if (strcmp(name, "start") == 0) return sr_int(NULL, r->start);
  if (strcmp(name, "stop") == 0) return sr_int(NULL, r->stop);
  if (strcmp(name, "step") == 0) return sr_int(NULL, r->step);
  if (strcmp(name, "index") == 0) return sr_bound_method(self, "index", m_range_index);
  if (strcmp(name, "count") == 0) return sr_bound_method(self, "count", m_range_count);
  return NULL;
}

/* r[i] and r[a:b:c], which is a range again, as CPython's compute_slice
   makes it: the slice's indices mapped through r. */
static SrVal *range_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  const SrRange *r = self->obj.data;
  if (sr_is_obj(key, &sr_slice_class)) {
    if (r->len > INT64_MAX) return len_overflow(I);
    int64_t lo, hi, st, n;
    if (sr_slice_indices(I, key, (int64_t)r->len, &lo, &hi, &st, &n) < 0) return NULL;
    /* exact in 128 bits: a product may pass int64_t where the sum does not */
    __int128 start = (__int128)r->start + (__int128)lo * r->step;
    __int128 stop = (__int128)r->start + (__int128)hi * r->step;
    __int128 step = (__int128)r->step * st;
    if (start < INT64_MIN || start > INT64_MAX || stop < INT64_MIN || stop > INT64_MAX || step < INT64_MIN ||
        step > INT64_MAX)
      return int_overflow(I);
    return sr_range_new((int64_t)start, (int64_t)stop, (int64_t)step);
  }
  int64_t i;
  if (key->kind == SR_V_INT || key->kind == SR_V_BOOL) {
    i = key->i;
  } else if (key->kind == SR_V_OBJ && sr_ops(key) && sr_ops(key)->unop) {
    /* a 0-d integer array is an index (__index__) */
    if (sr_as_int(I, key, "range index", &i) < 0) return NULL;
  } else {
    return sr_raise(I, "TypeError", "range indices must be integers or slices, not %s", sr_val_kind_name(key));
  }
  uint64_t u;
  if (i >= 0) {
    u = (uint64_t)i;
    if (u >= r->len) return sr_raise(I, "IndexError", "range object index out of range");
  } else {
    uint64_t back = 0 - (uint64_t)i;
    if (back > r->len) return sr_raise(I, "IndexError", "range object index out of range");
    u = r->len - back;
  }
  return sr_int(NULL, range_item(r, u));
}

static const SrLangOps range_ops = {
  .getattr = range_getattr,
  .getitem = range_getitem,
  .iter = range_list,
  .len = range_len_op,
  .truthy = range_truthy,
};
const SrClass sr_range_class = {"range", free, range_repr, NULL, &range_ops};

/* range(stop), range(start, stop[, step]) */
static int range_arg(SrInterp *I, SrVal *v, int64_t *out) {
  if (v->kind == SR_V_INT || v->kind == SR_V_BOOL) {
    *out = v->i;
    return 0;
  }
  if (v->kind == SR_V_OBJ && sr_ops(v) && sr_ops(v)->unop) return sr_as_int(I, v, "range()", out);
  sr_raise(I, "TypeError", "'%s' object cannot be interpreted as an integer", sr_val_kind_name(v));
  return -1;
}

static SrVal *bi_range(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "range() takes no keyword arguments");
  if (a->n < 1) return sr_raise(I, "TypeError", "range expected at least 1 argument, got %d", a->n);
  if (a->n > 3) return sr_raise(I, "TypeError", "range expected at most 3 arguments, got %d", a->n);
  int64_t v[3] = {0, 0, 1};
  for (int i = 0; i < a->n; i++)
    if (range_arg(I, a->v[i], &v[a->n == 1 ? 1 : i]) < 0) return NULL;
  if (v[2] == 0) return sr_raise(I, "ValueError", "range() arg 3 must not be zero");
  return sr_range_new(v[0], v[1], v[2]);
}

SrVal *sr_int_seq_arg(SrVal *v) {
  const SrRange *r = v ? sr_as_range(v) : NULL;
  if (!r) return v;
  uint64_t n = r->len > SR_MAX_RANK ? SR_MAX_RANK + 1 : r->len;
  SrVal *l = sr_seq(NULL, SR_V_LIST, (int)n);
  for (uint64_t i = 0; i < n; i++) sr_seq_push(NULL, l, sr_int(NULL, range_item(r, i)));
  return l;
}

/* ---- walking iterables ---- */

/* ---- C iterators stepped lazily ---- */

typedef struct Lazy {
  const char *type;
  SrLazyStep step;
  void *state;
  void (*free_state)(void *);
  int done;
} Lazy;

static void lazy_free(void *data) {
  Lazy *l = data;
  if (l->free_state) l->free_state(l->state);
  free(l);
}

static void lazy_repr(SrBuf *out, const SrVal *v) {
  const Lazy *l = v->obj.data;
  /* a generator expression's generator, as CPython names it */
  const char *what = strcmp(l->type, "generator") == 0 ? " <genexpr>" : "";
  sr_buf_printf(out, "<%s object%s at %p>", l->type, what, (const void *)l);
}

static const char *lazy_type_name(const SrVal *v) { return ((const Lazy *)v->obj.data)->type; }

static SrVal *lazy_list(SrInterp *I, SrVal *self) {
  SrVal *l = sr_seq(NULL, SR_V_LIST, 0);
  for (SrVal *x; (x = sr_lazy_iter_step(I, self));) {
    if (sr_interrupt_point(I)) {
      sr_unref(x);
      sr_unref(l);
      return sr_raise(I, "KeyboardInterrupt", "interrupted");
    }
    sr_seq_push(NULL, l, x);
  }
  if (I->exc) {
    sr_unref(l);
    return NULL;
  }
  return l;
}

static const SrLangOps lazy_ops = {.iter = lazy_list};
static const SrClass lazy_class = {"iterator", lazy_free, lazy_repr, NULL, &lazy_ops};

SrVal *sr_lazy_iter_new(const char *type, SrLazyStep step, void *state, void (*free_state)(void *)) {
  Lazy *l = sr_xcalloc(1, sizeof *l);
  l->type = type;
  l->step = step;
  l->state = state;
  l->free_state = free_state;
  return sr_obj(&lazy_class, l);
}

int sr_is_lazy_iter(const SrVal *v) { return sr_is_obj(v, &lazy_class); }

SrVal *sr_lazy_iter_step(SrInterp *I, SrVal *v) {
  Lazy *l = v->obj.data;
  if (l->done) return NULL;
  SrVal *x = l->step(I, l->state);
  if (!x) l->done = 1;
  return x;
}

int sr_iter_is_lazy(const SrVal *v) { return sr_is_gen(v) || sr_is_lazy_iter(v) || sr_class_of(v); }

int sr_iter_begin(SrInterp *I, SrIter *it, SrVal *v) {
  memset(it, 0, sizeof *it);
  const SrRange *r = sr_as_range(v);
  if (r) {
    it->own.next = r->start;
    it->own.step = r->step;
    it->own.left = r->len;
    it->pos = &it->own;
    return 0;
  }
  if (sr_is_obj(v, &range_iter_class)) {
    it->held = sr_ref(v);
    it->pos = v->obj.data;
    return 0;
  }
  if (sr_is_gen(v) || sr_is_lazy_iter(v)) {
    it->lazy = sr_ref(v);
    it->I = I;
    return 0;
  }
  if (sr_class_of(v)) {
    /* an instance: iter(v) when its class has __iter__; an iterator
       (anything with __next__) is stepped lazily */
    SrVal *iterfn = sr_lookup_qualname("builtins.iter");
    SrVal *has = sr_getattr(I, v, "__iter__");
    if (has) {
      sr_unref(has);
      SrVal *itr = sr_call1(I, iterfn, v);
      if (!itr) return -1;
      if (sr_is_gen(itr) || sr_class_of(itr)) {
        it->lazy = itr;
        it->I = I;
        return 0;
      }
      it->items = sr_iterate(I, itr);
      sr_unref(itr);
      return it->items ? 0 : -1;
    }
    sr_exc_clear(I);
  }
  it->items = sr_iterate(I, v);
  return it->items ? 0 : -1;
}

static SrVal *lazy_next(SrIter *it) {
  if (it->done) return NULL;
  SrInterp *I = it->I;
  SrVal *x;
  if (sr_is_gen(it->lazy)) {
    x = sr_gen_next(I, it->lazy);
  } else if (sr_is_lazy_iter(it->lazy)) {
    x = sr_lazy_iter_step(I, it->lazy);
  } else {
    x = sr_call1(I, sr_lookup_qualname("builtins.next"), it->lazy);
    if (!x && I->exc && strcmp(sr_exc_type(I->exc), "StopIteration") == 0) sr_exc_clear(I);
  }
  if (!x) {
    it->done = 1;
    it->failed = I->exc != NULL;
  }
  return x;
}

SrVal *sr_iter_next(SrIter *it) {
  if (it->lazy) return lazy_next(it);
  if (it->pos) {
    SrIterPos *p = it->pos;
    if (!p->left) return NULL;
    int64_t x = p->next;
    p->left--;
    p->next = (int64_t)((uint64_t)x + (uint64_t)p->step);
    return sr_int(NULL, x);
  }
  if (!it->items || it->i >= it->items->seq.n) return NULL;
  return sr_ref(it->items->seq.items[it->i++]);
}

uint64_t sr_iter_left(const SrIter *it) {
  if (it->lazy) return it->done ? 0 : UINT64_MAX;
  if (it->pos) return it->pos->left;
  return it->items ? (uint64_t)(it->items->seq.n - it->i) : 0;
}

void sr_iter_end(SrIter *it) {
  sr_unref(it->items);
  sr_unref(it->held);
  sr_unref(it->lazy);
  memset(it, 0, sizeof *it);
}

void sr_range_init(void) {
  sr_def("builtins.range", bi_range, "range(stop) / range(start, stop[, step]): the ints from start to stop by step");
  sr_val_equal_class(&sr_range_class, range_equal);
  sr_val_type_name_class(&lazy_class, lazy_type_name);
}
