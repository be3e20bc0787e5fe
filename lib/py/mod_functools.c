/* mod_functools.c: Python's functools -- partial, reduce, wraps and
 * update_wrapper, lru_cache and cache -- with CPython's semantics and
 * messages (Lib/functools.py, Modules/_functoolsmodule.c). */
#include <stdlib.h>
#include <string.h>

#include "py/modules.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- partial ---- */

typedef struct Partial {
  SrVal *func;
  SrVal *args; /* a tuple */
  SrVal *kw;   /* a dict of str keys */
} Partial;

static void partial_free(void *d) {
  Partial *p = d;
  sr_unref(p->func);
  sr_unref(p->args);
  sr_unref(p->kw);
  free(p);
}

static void partial_traverse(void *d, SrValVisit visit, void *arg) {
  Partial *p = d;
  visit(p->func, arg);
  visit(p->args, arg);
  visit(p->kw, arg);
}

static void partial_clear(void *d) {
  Partial *p = d;
  SrVal *f = p->func, *a = p->args, *k = p->kw;
  p->func = sr_none();
  p->args = sr_tuple(NULL, 0, NULL);
  p->kw = sr_dict(NULL);
  sr_unref(f);
  sr_unref(a);
  sr_unref(k);
}

/* functools.partial(<function f>, 1, b=2) */
static void partial_repr(SrBuf *out, const SrVal *v) {
  const Partial *p = v->obj.data;
  sr_buf_puts(out, "functools.partial(");
  sr_val_repr(out, p->func);
  for (int i = 0; i < p->args->seq.n; i++) {
    sr_buf_puts(out, ", ");
    sr_val_repr(out, p->args->seq.items[i]);
  }
  for (int i = 0; i < p->kw->dict.n; i++) {
    sr_buf_printf(out, ", %s=", p->kw->dict.keys[i]->str.s);
    sr_val_repr(out, p->kw->dict.vals[i]);
  }
  sr_buf_putc(out, ')');
}

/* func(*args, *call_args, **{**keywords, **call_keywords}) */
static SrVal *partial_call(SrInterp *I, SrVal *self, SrArgs *a) {
  Partial *p = self->obj.data;
  int n = p->args->seq.n + a->n, nkw = p->kw->dict.n + a->nkw;
  SrVal **v = sr_xmalloc(((size_t)n + (size_t)nkw + 1) * sizeof *v);
  const char **kw = sr_xmalloc(((size_t)nkw + 1) * sizeof *kw);
  SrVal **kwv = v + n;
  for (int i = 0; i < p->args->seq.n; i++) v[i] = p->args->seq.items[i];
  for (int i = 0; i < a->n; i++) v[p->args->seq.n + i] = a->v[i];
  int k = 0;
  for (int i = 0; i < p->kw->dict.n; i++) {
    const char *name = sr_intern_cstr(p->kw->dict.keys[i]->str.s);
    int over = 0;
    for (int j = 0; j < a->nkw; j++) over |= a->kw[j] == name;
    if (over) continue;
    kw[k] = name;
    kwv[k++] = p->kw->dict.vals[i];
  }
  for (int j = 0; j < a->nkw; j++) {
    kw[k] = a->kw[j];
    kwv[k++] = a->kwv[j];
  }
  SrArgs args = {n, v, k, kw, kwv, NULL};
  SrVal *func = sr_ref(p->func); /* the call may drop the partial */
  SrVal *r = sr_call(I, func, &args);
  sr_unref(func);
  free(v);
  free(kw);
  return r;
}

static SrVal *partial_getattr(SrInterp *I, SrVal *self, const char *name) {
  Partial *p = self->obj.data;
  (void)I;
  if (strcmp(name, "func") == 0) return sr_ref(p->func);
  if (strcmp(name, "args") == 0) return sr_ref(p->args);
  if (strcmp(name, "keywords") == 0) return sr_ref(p->kw);
  return NULL;
}

static int partial_setattr(SrInterp *I, SrVal *self, const char *name, SrVal *v) {
  (void)self, (void)v;
  if (strcmp(name, "func") == 0 || strcmp(name, "args") == 0 || strcmp(name, "keywords") == 0)
    sr_raise(I, "AttributeError", "readonly attribute");
  else
    sr_raise(I, "AttributeError", "'functools.partial' object has no attribute '%s'", name);
  return -1;
}

static const SrLangOps partial_ops = {.call = partial_call, .getattr = partial_getattr,
                                      .setattr = partial_setattr};
static const SrClass partial_class = {"functools.partial", partial_free, partial_repr, NULL, &partial_ops};

SrVal *sr_partial_func(const SrVal *v) {
  return sr_is_obj(v, &partial_class) ? ((Partial *)v->obj.data)->func : NULL;
}

static SrVal *ft_partial(SrInterp *I, SrArgs *a) {
  if (a->n < 1) return sr_raise(I, "TypeError", "type 'partial' takes at least one argument");
  SrVal *func = a->v[0];
  if (!sr_is_callable(I, func)) return sr_raise(I, "TypeError", "the first argument must be callable");
  Partial *p = sr_xcalloc(1, sizeof *p);
  const Partial *inner = sr_is_obj(func, &partial_class) ? func->obj.data : NULL;
  int ninner = inner ? inner->args->seq.n : 0;
  p->func = sr_ref(inner ? inner->func : func);
  p->args = sr_seq(NULL, SR_V_TUPLE, ninner + a->n - 1);
  for (int i = 0; i < ninner; i++) sr_seq_push(NULL, p->args, sr_ref(inner->args->seq.items[i]));
  for (int i = 1; i < a->n; i++) sr_seq_push(NULL, p->args, sr_ref(a->v[i]));
  p->kw = sr_dict(NULL);
  for (int i = 0; inner && i < inner->kw->dict.n; i++)
    sr_dict_set(NULL, p->kw, sr_ref(inner->kw->dict.keys[i]), sr_ref(inner->kw->dict.vals[i]));
  for (int i = 0; i < a->nkw; i++) sr_dict_set(NULL, p->kw, sr_str_cstr(NULL, a->kw[i]), sr_ref(a->kwv[i]));
  return sr_obj(&partial_class, p);
}

/* ---- reduce ---- */

static SrVal *ft_reduce(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "reduce() takes no keyword arguments");
  if (a->n < 2) return sr_raise(I, "TypeError", "reduce expected at least 2 arguments, got %d", a->n);
  if (a->n > 3) return sr_raise(I, "TypeError", "reduce expected at most 3 arguments, got %d", a->n);
  SrIter it;
  if (sr_iter_begin(I, &it, a->v[1]) < 0) {
    if (!sr_exception_is_a(sr_exc_type(I->exc), "TypeError")) return NULL;
    sr_exc_clear(I);
    return sr_raise(I, "TypeError", "reduce() arg 2 must support iteration");
  }
  SrVal *acc = a->n == 3 ? sr_ref(a->v[2]) : sr_iter_next(&it);
  if (!acc) {
    sr_iter_end(&it);
    return sr_raise(I, "TypeError", "reduce() of empty iterable with no initial value");
  }
  for (SrVal *x; (x = sr_iter_next(&it));) {
    SrVal *pair[2] = {acc, x};
    SrArgs args = {2, pair, 0, NULL, NULL, NULL};
    SrVal *r = sr_poll_interrupt(I) ? NULL : sr_call(I, a->v[0], &args);
    sr_unref(acc);
    sr_unref(x);
    acc = r;
    if (!acc) break;
  }
  sr_iter_end(&it);
  return acc;
}

/* ---- update_wrapper and wraps ---- */

static const char *const wrapper_assignments[] = {"__module__", "__name__", "__qualname__", "__doc__",
                                                  "__annotations__", NULL};

/* Copies what wrapped has of the assigned attributes onto wrapper, as
   Python does (a missing one is skipped), then sets __wrapped__. */
static SrVal *update_wrapper(SrInterp *I, SrVal *wrapper, SrVal *wrapped) {
  for (int i = 0; wrapper_assignments[i]; i++) {
    SrVal *v = sr_getattr(I, wrapped, wrapper_assignments[i]);
    if (!v) {
      if (!sr_exception_is_a(sr_exc_type(I->exc), "AttributeError")) return NULL;
      sr_exc_clear(I);
      continue;
    }
    int rc = sr_setattr(I, wrapper, wrapper_assignments[i], v);
    sr_unref(v);
    if (rc < 0) return NULL;
  }
  if (sr_setattr(I, wrapper, "__wrapped__", wrapped) < 0) return NULL;
  return sr_ref(wrapper);
}

static SrVal *ft_update_wrapper(SrInterp *I, SrArgs *a) {
  SrVal *p[4];
  if (sr_args_parse(I, a, "update_wrapper", "wrapper, wrapped, assigned=, updated=", p) < 0) return NULL;
  return update_wrapper(I, p[0], p[1]);
}

static SrVal *wraps_call(SrInterp *I, SrArgs *a) {
  SrVal *wrapped = sr_current_builtin(I)->data;
  if (a->n != 1 || a->nkw)
    return sr_raise(I, "TypeError", "update_wrapper() missing 1 required positional argument: 'wrapper'");
  return update_wrapper(I, a->v[0], wrapped);
}

static void unref_data(void *d) { sr_unref(d); }

static SrVal *ft_wraps(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "wraps", "wrapped, assigned=, updated=", p) < 0) return NULL;
  return sr_builtin_with("functools.wraps.<locals>.decorator", wraps_call, sr_ref(p[0]), unref_data);
}

/* ---- lru_cache and cache ---- */

typedef struct Cache {
  SrVal *func;
  SrVal *keys, *vals; /* lists, least recently used first */
  int64_t maxsize;    /* -1: unbounded */
  int64_t hits, misses;
} Cache;

static void cache_free(void *d) {
  Cache *c = d;
  sr_unref(c->func);
  sr_unref(c->keys);
  sr_unref(c->vals);
  free(c);
}

static void cache_traverse(void *d, SrValVisit visit, void *arg) {
  Cache *c = d;
  visit(c->func, arg);
  visit(c->keys, arg);
  visit(c->vals, arg);
}

static void cache_empty(Cache *c) {
  SrVal *k = c->keys, *v = c->vals;
  c->keys = sr_seq(NULL, SR_V_LIST, 0);
  c->vals = sr_seq(NULL, SR_V_LIST, 0);
  sr_unref(k);
  sr_unref(v);
}

static void cache_clear(void *d) {
  Cache *c = d;
  SrVal *f = c->func;
  c->func = sr_none();
  sr_unref(f);
  cache_empty(c);
}

static void cache_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<functools._lru_cache_wrapper object>");
}

/* a key's parts must be hashable, as in a dict */
static int check_hashable(SrInterp *I, SrVal *v) {
  if (v->kind == SR_V_LIST || v->kind == SR_V_DICT || v->kind == SR_V_SET) {
    sr_raise(I, "TypeError", "unhashable type: '%s'", sr_val_kind_name(v));
    return -1;
  }
  if (v->kind == SR_V_TUPLE || v->kind == SR_V_FROZENSET)
    for (int i = 0; i < v->seq.n; i++)
      if (check_hashable(I, v->seq.items[i]) < 0) return -1;
  return 0;
}

static void move_to_end(SrVal *list, int i) {
  SrVal *x = list->seq.items[i];
  memmove(list->seq.items + i, list->seq.items + i + 1, (size_t)(list->seq.n - i - 1) * sizeof x);
  list->seq.items[list->seq.n - 1] = x;
}

static void drop_first(SrVal *list) {
  sr_unref(list->seq.items[0]);
  memmove(list->seq.items, list->seq.items + 1, (size_t)(list->seq.n - 1) * sizeof *list->seq.items);
  list->seq.n--;
}

static SrVal *cache_call(SrInterp *I, SrVal *self, SrArgs *a) {
  Cache *c = self->obj.data;
  /* the key: the positional arguments, then each keyword and its value */
  SrVal *key = sr_seq(NULL, SR_V_TUPLE, a->n + 2 * a->nkw);
  for (int i = 0; i < a->n; i++) sr_seq_push(NULL, key, sr_ref(a->v[i]));
  for (int i = 0; i < a->nkw; i++) {
    sr_seq_push(NULL, key, sr_str_cstr(NULL, a->kw[i]));
    sr_seq_push(NULL, key, sr_ref(a->kwv[i]));
  }
  if (check_hashable(I, key) < 0) {
    sr_unref(key);
    return NULL;
  }
  for (int i = 0; i < c->keys->seq.n; i++)
    if (sr_val_equal(c->keys->seq.items[i], key)) {
      sr_unref(key);
      c->hits++;
      move_to_end(c->keys, i);
      move_to_end(c->vals, i);
      return sr_ref(c->vals->seq.items[c->vals->seq.n - 1]);
    }
  c->misses++;
  SrVal *func = sr_ref(c->func), *keep = sr_ref(self);
  SrVal *r = sr_call(I, func, a);
  sr_unref(func);
  if (r && c->maxsize != 0) {
    if (c->maxsize > 0 && c->keys->seq.n >= c->maxsize) {
      drop_first(c->keys);
      drop_first(c->vals);
    }
    sr_seq_push(NULL, c->keys, sr_ref(key));
    sr_seq_push(NULL, c->vals, sr_ref(r));
  }
  sr_unref(key);
  sr_unref(keep);
  return r;
}

/* CacheInfo(hits=0, misses=0, maxsize=128, currsize=0), with its fields */
typedef struct CacheInfo {
  int64_t hits, misses, maxsize, currsize;
} CacheInfo;

static void info_repr(SrBuf *out, const SrVal *v) {
  const CacheInfo *ci = v->obj.data;
  sr_buf_printf(out, "CacheInfo(hits=%lld, misses=%lld, maxsize=", (long long)ci->hits, (long long)ci->misses);
  if (ci->maxsize < 0) sr_buf_puts(out, "None");
  else sr_buf_printf(out, "%lld", (long long)ci->maxsize);
  sr_buf_printf(out, ", currsize=%lld)", (long long)ci->currsize);
}

static SrVal *info_getattr(SrInterp *I, SrVal *self, const char *name) {
  const CacheInfo *ci = self->obj.data;
  (void)I;
  if (strcmp(name, "hits") == 0) return sr_int(NULL, ci->hits);
  if (strcmp(name, "misses") == 0) return sr_int(NULL, ci->misses);
  if (strcmp(name, "maxsize") == 0) return ci->maxsize < 0 ? sr_none() : sr_int(NULL, ci->maxsize);
  if (strcmp(name, "currsize") == 0) return sr_int(NULL, ci->currsize);
  return NULL;
}

static const SrLangOps info_ops = {.getattr = info_getattr};
static const SrClass info_class = {"CacheInfo", free, info_repr, NULL, &info_ops};

static SrVal *m_cache_info(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "cache_info() takes no arguments");
  const Cache *c = a->self->obj.data;
  CacheInfo *ci = sr_xcalloc(1, sizeof *ci);
  *ci = (CacheInfo){c->hits, c->misses, c->maxsize, c->keys->seq.n};
  return sr_obj(&info_class, ci);
}

static SrVal *m_cache_clear(SrInterp *I, SrArgs *a) {
  if (a->n || a->nkw) return sr_raise(I, "TypeError", "cache_clear() takes no arguments");
  Cache *c = a->self->obj.data;
  cache_empty(c);
  c->hits = c->misses = 0;
  return sr_none();
}

static SrVal *cache_getattr(SrInterp *I, SrVal *self, const char *name) {
  Cache *c = self->obj.data;
  if (strcmp(name, "cache_info") == 0) return sr_bound_method(self, "cache_info", m_cache_info);
  if (strcmp(name, "cache_clear") == 0) return sr_bound_method(self, "cache_clear", m_cache_clear);
  if (strcmp(name, "__wrapped__") == 0) return sr_ref(c->func);
  if (strcmp(name, "__name__") == 0 || strcmp(name, "__qualname__") == 0 || strcmp(name, "__doc__") == 0 ||
      strcmp(name, "__module__") == 0) {
    SrVal *v = sr_getattr(I, c->func, name);
    if (!v) sr_exc_clear(I);
    return v;
  }
  return NULL;
}

static const SrLangOps cache_ops = {.call = cache_call, .getattr = cache_getattr};
static const SrClass cache_class = {"functools._lru_cache_wrapper", cache_free, cache_repr, NULL, &cache_ops};

static SrVal *cache_new(SrVal *func, int64_t maxsize) {
  Cache *c = sr_xcalloc(1, sizeof *c);
  c->func = sr_ref(func);
  c->keys = sr_seq(NULL, SR_V_LIST, 0);
  c->vals = sr_seq(NULL, SR_V_LIST, 0);
  c->maxsize = maxsize;
  return sr_obj(&cache_class, c);
}

static SrVal *lru_decorator(SrInterp *I, SrArgs *a) {
  int64_t maxsize = (int64_t)(intptr_t)sr_current_builtin(I)->data;
  if (a->n != 1 || a->nkw)
    return sr_raise(I, "TypeError", "decorating_function() takes 1 positional argument but %d were given", a->n);
  if (!sr_is_callable(I, a->v[0])) return sr_raise(I, "TypeError", "the first argument must be callable");
  return cache_new(a->v[0], maxsize);
}

/* lru_cache(maxsize=128, typed=False), or lru_cache(function) */
static SrVal *ft_lru_cache(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "lru_cache", "maxsize=, typed=", p) < 0) return NULL;
  int64_t maxsize = 128;
  if (p[0] && sr_is_callable(I, p[0]) && p[0]->kind != SR_V_INT && p[0]->kind != SR_V_BOOL) return cache_new(p[0], 128);
  if (p[0] && p[0]->kind == SR_V_NONE) {
    maxsize = -1;
  } else if (p[0]) {
    if (p[0]->kind != SR_V_INT && p[0]->kind != SR_V_BOOL)
      return sr_raise(I, "TypeError", "Expected first argument to be an integer, a callable, or None");
    if (sr_as_int(I, p[0], "maxsize", &maxsize) < 0) return NULL;
    if (maxsize < 0) maxsize = 0;
  }
  return sr_builtin_with("functools.lru_cache.<locals>.decorating_function", lru_decorator,
                         (void *)(intptr_t)maxsize, NULL);
}

static SrVal *ft_cache(SrInterp *I, SrArgs *a) {
  if (a->n != 1 || a->nkw) return sr_raise(I, "TypeError", "cache() takes 1 positional argument but %d were given", a->n);
  if (!sr_is_callable(I, a->v[0])) return sr_raise(I, "TypeError", "the first argument must be callable");
  return cache_new(a->v[0], -1);
}

void sr_functools_init(void) {
  sr_val_traverse_class(&partial_class, partial_traverse, partial_clear);
  sr_val_traverse_class(&cache_class, cache_traverse, cache_clear);
  sr_def("functools.partial", ft_partial,
         "functools.partial(func, /, *args, **keywords): func with the arguments given first");
  sr_def("functools.reduce", ft_reduce,
         "functools.reduce(function, iterable[, initial]): applies function cumulatively, left to right");
  sr_def("functools.wraps", ft_wraps,
         "functools.wraps(wrapped): a decorator that gives the wrapper wrapped's __name__ and __wrapped__");
  sr_def("functools.update_wrapper", ft_update_wrapper,
         "functools.update_wrapper(wrapper, wrapped): what functools.wraps does");
  sr_def("functools.lru_cache", ft_lru_cache,
         "functools.lru_cache(maxsize=128, typed=False): memoizes a function on its arguments");
  sr_def("functools.cache", ft_cache, "functools.cache(function): lru_cache(maxsize=None)(function)");
}
