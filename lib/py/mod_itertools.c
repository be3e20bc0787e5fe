/* mod_itertools.c: Python's itertools, with CPython's results and
 * messages (Modules/itertoolsmodule.c).
 *
 * Each function but count() makes its items when it is called and returns
 * an iterator object over them ("itertools.product"), which iterating
 * exhausts, as in Python; the inputs are walked then, not lazily.
 * count() is lazy: an iterator of ints that loops and islice() walk one
 * at a time (range.h), so `for i in count(): ... break` and
 * islice(count(), n) work; an endless repeat() is not provided. */
#include <stdlib.h>
#include <string.h>

#include "py/modules.h"
#include "py/objects.h"
#include "py/range.h"
#include "text/print_val.h"
#include "util/intern.h"

/* ---- the iterator objects ---- */

static void items_free(void *d) { sr_unref(d); }

static void items_traverse(void *d, SrValVisit visit, void *arg) {
  if (d) visit(d, arg);
}

/* the list of the items still to come (data) is emptied, not freed: the
   object's data pointer stays */
static void items_clear(void *d) {
  SrVal *l = d;
  for (int i = 0; i < l->seq.n; i++) sr_unref(l->seq.items[i]);
  l->seq.n = 0;
}

static SrVal *items_iter(SrInterp *I, SrVal *self) {
  SrVal *l = self->obj.data;
  SrVal *r = sr_seq(NULL, SR_V_LIST, l->seq.n);
  for (int i = 0; i < l->seq.n; i++) sr_seq_push(NULL, r, l->seq.items[i]);
  l->seq.n = 0; /* exhausted: the references moved to r */
  (void)I;
  return r;
}

static const SrLangOps items_ops = {.iter = items_iter};

#define ITER_CLASS(NAME)                                                                              \
  static void NAME##_repr(SrBuf *out, const SrVal *v) {                                               \
    (void)v;                                                                                          \
    sr_buf_puts(out, "<itertools." #NAME " object>");                                                 \
  }                                                                                                   \
  static const SrClass NAME##_class = {"itertools." #NAME, items_free, NAME##_repr, NULL, &items_ops};

ITER_CLASS(product)
ITER_CLASS(chain)
ITER_CLASS(accumulate)
ITER_CLASS(combinations)
ITER_CLASS(permutations)
ITER_CLASS(islice)
ITER_CLASS(zip_longest)
ITER_CLASS(starmap)
ITER_CLASS(pairwise)
ITER_CLASS(takewhile)
ITER_CLASS(dropwhile)
ITER_CLASS(compress)
ITER_CLASS(filterfalse)

/* repeat(obj, times) prints as Python's does: what is left of it */
static void repeat_repr(SrBuf *out, const SrVal *v) {
  const SrVal *l = v->obj.data;
  sr_buf_puts(out, "repeat(");
  if (l->seq.n) {
    sr_val_repr(out, l->seq.items[0]);
    sr_buf_puts(out, ", ");
  }
  sr_buf_printf(out, "%d)", l->seq.n);
}

static const SrClass repeat_class = {"itertools.repeat", items_free, repeat_repr, NULL, &items_ops};

static SrVal *iter_obj(const SrClass *cls, SrVal *items) { return sr_obj(cls, items); }

/* The items of an iterable as a new list, or NULL with an exception. */
static SrVal *items_of(SrInterp *I, SrVal *v) { return sr_iterate(I, v); }

static SrVal *list_new(void) { return sr_seq(NULL, SR_V_LIST, 0); }

static SrVal *tuple_of(SrVal **items, const int *idx, int n) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) sr_seq_push(NULL, t, sr_ref(items[idx ? idx[i] : i]));
  return t;
}

/* whether a result of count items may be made (MemoryError else), and
   Ctrl-C; count saturates */
static int room_for(SrInterp *I, uint64_t count) { return sr_listable(I, count); }

/* ---- product ---- */

static SrVal *it_product(SrInterp *I, SrArgs *a) {
  int64_t repeat = 1;
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "repeat") != 0)
      return sr_raise(I, "TypeError", "product() got an unexpected keyword argument '%s'", a->kw[k]);
    if (sr_as_int(I, a->kwv[k], "repeat", &repeat) < 0) return NULL;
  }
  if (repeat < 0) return sr_raise(I, "ValueError", "repeat argument cannot be negative");
  if (a->n && (uint64_t)repeat > (uint64_t)(INT32_MAX / a->n)) return sr_raise(I, "OverflowError", "repeat argument too large");
  int npools = a->n * (int)repeat;
  SrVal **pools = sr_xcalloc((size_t)npools + 1, sizeof *pools);
  int *idx = sr_xcalloc((size_t)npools + 1, sizeof *idx);
  SrVal *out = NULL;
  uint64_t total = 1;
  for (int i = 0; i < a->n; i++) {
    pools[i] = items_of(I, a->v[i]);
    if (!pools[i]) goto done;
  }
  for (int i = a->n; i < npools; i++) pools[i] = sr_ref(pools[i % a->n]);
  for (int i = 0; i < npools; i++) {
    uint64_t n = (uint64_t)pools[i]->seq.n;
    total = n && total > UINT64_MAX / n ? UINT64_MAX : total * n;
  }
  if (room_for(I, total) < 0) goto done;
  out = list_new();
  if (total == 0) goto done;
  SrVal **row = sr_xcalloc((size_t)npools + 1, sizeof *row);
  for (;;) {
    if (sr_poll_interrupt(I)) {
      sr_unref(out);
      out = NULL;
      break;
    }
    for (int i = 0; i < npools; i++) row[i] = pools[i]->seq.items[idx[i]];
    sr_seq_push(NULL, out, tuple_of(row, NULL, npools));
    int i = npools - 1;
    while (i >= 0 && ++idx[i] == pools[i]->seq.n) idx[i--] = 0;
    if (i < 0) break;
  }
  free(row);
done:
  for (int i = 0; i < npools; i++) sr_unref(pools[i]);
  free(pools);
  free(idx);
  return out ? iter_obj(&product_class, out) : NULL;
}

/* ---- chain ---- */

static SrVal *chain_of(SrInterp *I, SrVal **its, int n) {
  SrVal *out = list_new();
  for (int i = 0; i < n; i++) {
    SrVal *l = items_of(I, its[i]);
    if (!l || room_for(I, (uint64_t)out->seq.n + (uint64_t)l->seq.n) < 0) {
      sr_unref(l);
      sr_unref(out);
      return NULL;
    }
    for (int k = 0; k < l->seq.n; k++) sr_seq_push(NULL, out, sr_ref(l->seq.items[k]));
    sr_unref(l);
  }
  return iter_obj(&chain_class, out);
}

static SrVal *it_chain(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "chain() takes no keyword arguments");
  return chain_of(I, a->v, a->n);
}

static SrVal *it_chain_from_iterable(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "from_iterable", "iterable", p) < 0) return NULL;
  SrVal *its = items_of(I, p[0]);
  if (!its) return NULL;
  SrVal *r = chain_of(I, its->seq.items, its->seq.n);
  sr_unref(its);
  return r;
}

/* ---- accumulate ---- */

static SrVal *it_accumulate(SrInterp *I, SrArgs *a) {
  SrVal *p[3];
  if (sr_args_parse(I, a, "accumulate", "iterable, func=, *, initial=", p) < 0) return NULL;
  SrVal *func = p[1] && p[1]->kind != SR_V_NONE ? p[1] : NULL;
  SrVal *l = items_of(I, p[0]);
  if (!l) return NULL;
  SrVal *out = list_new(), *acc = NULL;
  if (p[2] && p[2]->kind != SR_V_NONE) {
    acc = sr_ref(p[2]);
    sr_seq_push(NULL, out, sr_ref(acc));
  }
  for (int i = 0; i < l->seq.n; i++) {
    SrVal *x = l->seq.items[i];
    if (!acc) {
      acc = sr_ref(x);
    } else {
      SrVal *r;
      if (func) {
        SrVal *pair[2] = {acc, x};
        SrArgs args = {2, pair, 0, NULL, NULL, NULL};
        r = sr_call(I, func, &args);
      } else {
        r = sr_binop(I, SR_OP_ADD, acc, x);
      }
      sr_unref(acc);
      acc = r;
      if (!acc || sr_poll_interrupt(I)) {
        sr_unref(acc);
        sr_unref(out);
        sr_unref(l);
        return NULL;
      }
    }
    sr_seq_push(NULL, out, sr_ref(acc));
  }
  sr_unref(acc);
  sr_unref(l);
  return iter_obj(&accumulate_class, out);
}

/* ---- combinations and permutations (the algorithms of the itertools
   documentation's pure-Python equivalents) ---- */

static SrVal *it_combinations(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int64_t r;
  if (sr_args_parse(I, a, "combinations", "iterable, r", p) < 0) return NULL;
  if (sr_as_int(I, p[1], "r", &r) < 0) return NULL;
  if (r < 0) return sr_raise(I, "ValueError", "r must be non-negative");
  SrVal *pool = items_of(I, p[0]);
  if (!pool) return NULL;
  SrVal *out = list_new();
  int n = pool->seq.n;
  if (r <= n) {
    int *idx = sr_xcalloc((size_t)r + 1, sizeof *idx);
    for (int i = 0; i < r; i++) idx[i] = i;
    for (;;) {
      if (sr_poll_interrupt(I) || room_for(I, (uint64_t)out->seq.n + 1) < 0) {
        sr_unref(out);
        out = NULL;
        break;
      }
      sr_seq_push(NULL, out, tuple_of(pool->seq.items, idx, (int)r));
      int i = (int)r - 1;
      while (i >= 0 && idx[i] == i + n - r) i--;
      if (i < 0) break;
      idx[i]++;
      for (int j = i + 1; j < r; j++) idx[j] = idx[j - 1] + 1;
    }
    free(idx);
  }
  sr_unref(pool);
  return out ? iter_obj(&combinations_class, out) : NULL;
}

static SrVal *it_permutations(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "permutations", "iterable, r=", p) < 0) return NULL;
  SrVal *pool = items_of(I, p[0]);
  if (!pool) return NULL;
  int n = pool->seq.n;
  int64_t r = n;
  if (p[1] && p[1]->kind != SR_V_NONE) {
    if (sr_as_int(I, p[1], "r", &r) < 0) {
      sr_unref(pool);
      return NULL;
    }
    if (r < 0) {
      sr_unref(pool);
      return sr_raise(I, "ValueError", "r must be non-negative");
    }
  }
  SrVal *out = list_new();
  if (r <= n) {
    int *idx = sr_xcalloc((size_t)n + 1, sizeof *idx), *cyc = sr_xcalloc((size_t)r + 1, sizeof *cyc);
    for (int i = 0; i < n; i++) idx[i] = i;
    for (int i = 0; i < r; i++) cyc[i] = n - i;
    sr_seq_push(NULL, out, tuple_of(pool->seq.items, idx, (int)r));
    for (int done = n == 0 && r > 0; !done;) {
      if (sr_poll_interrupt(I) || room_for(I, (uint64_t)out->seq.n + 1) < 0) {
        sr_unref(out);
        out = NULL;
        break;
      }
      done = 1;
      for (int i = (int)r - 1; i >= 0; i--) {
        if (--cyc[i] == 0) {
          int first = idx[i];
          memmove(idx + i, idx + i + 1, (size_t)(n - i - 1) * sizeof *idx);
          idx[n - 1] = first;
          cyc[i] = n - i;
        } else {
          int j = cyc[i], t = idx[i];
          idx[i] = idx[n - j];
          idx[n - j] = t;
          sr_seq_push(NULL, out, tuple_of(pool->seq.items, idx, (int)r));
          done = 0;
          break;
        }
      }
    }
    free(idx);
    free(cyc);
  }
  sr_unref(pool);
  return out ? iter_obj(&permutations_class, out) : NULL;
}

/* ---- count, repeat, islice ---- */

static SrVal *it_count(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "count", "start=, step=", p) < 0) return NULL;
  int64_t start = 0, step = 1;
  for (int i = 0; i < 2; i++)
    if (p[i] && p[i]->kind != SR_V_INT && p[i]->kind != SR_V_BOOL) {
      if (p[i]->kind == SR_V_FLOAT || p[i]->kind == SR_V_COMPLEX)
        return sr_raise(I, "NotImplementedError", "itertools.count() of non-integers is not supported");
      return sr_raise(I, "TypeError", "a number is required");
    }
  if (p[0] && sr_as_int(I, p[0], "start", &start) < 0) return NULL;
  if (p[1] && sr_as_int(I, p[1], "step", &step) < 0) return NULL;
  /* as many as int64 holds in the step's direction (one if the step is 0,
     since an endless walk of one value cannot be listed either) */
  uint64_t left = step > 0   ? ((uint64_t)INT64_MAX - (uint64_t)start) / (uint64_t)step + 1
                  : step < 0 ? ((uint64_t)start - (uint64_t)INT64_MIN) / (0 - (uint64_t)step) + 1
                             : UINT64_MAX;
  return sr_range_iter_new(start, step, left);
}

static SrVal *it_repeat(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "repeat", "object, times=", p) < 0) return NULL;
  if (!p[1])
    return sr_raise(I, "NotImplementedError", "itertools.repeat() without times (an endless iterator) is not supported");
  int64_t times;
  if (sr_as_int(I, p[1], "times", &times) < 0) return NULL;
  if (times < 0) times = 0;
  if (room_for(I, (uint64_t)times) < 0) return NULL;
  SrVal *out = sr_seq(NULL, SR_V_LIST, (int)times);
  for (int64_t i = 0; i < times; i++) sr_seq_push(NULL, out, sr_ref(p[0]));
  return iter_obj(&repeat_class, out);
}

/* an islice index: None (none), or an int; -1 when it is neither */
static int islice_index(SrVal *v, int64_t *out, int64_t none) {
  if (!v || v->kind == SR_V_NONE) {
    *out = none;
    return 0;
  }
  if (v->kind != SR_V_INT && v->kind != SR_V_BOOL) return -1;
  *out = v->i;
  return 0;
}

/* CPython's checks, in its order and words: the stop, then the start,
   then the step */
static SrVal *it_islice(SrInterp *I, SrArgs *a) {
  if (a->nkw) return sr_raise(I, "TypeError", "islice() takes no keyword arguments");
  if (a->n < 2) return sr_raise(I, "TypeError", "islice expected at least 2 arguments, got %d", a->n);
  if (a->n > 4) return sr_raise(I, "TypeError", "islice expected at most 4 arguments, got %d", a->n);
  static const char range_msg[] = "must be None or an integer: 0 <= x <= sys.maxsize.";
  int64_t start = 0, stop, step = 1;
  SrVal *stop_v = a->n == 2 ? a->v[1] : a->v[2];
  if (islice_index(stop_v, &stop, INT64_MAX) < 0 || stop == -1)
    return sr_raise(I, "ValueError", "Stop argument for islice() %s", range_msg);
  if (a->n > 2 && islice_index(a->v[1], &start, 0) < 0)
    return sr_raise(I, "ValueError", "Indices for islice() %s", range_msg);
  if (start < 0 || stop < -1) return sr_raise(I, "ValueError", "Indices for islice() %s", range_msg);
  if (a->n == 4) {
    SrVal *s = a->v[3];
    if (s->kind != SR_V_NONE && (islice_index(s, &step, 1) < 0 || step < 1))
      return sr_raise(I, "ValueError", "Step for islice() must be a positive integer or None.");
  }
  SrIter it;
  if (sr_iter_begin(I, &it, a->v[0]) < 0) return NULL;
  SrVal *out = list_new();
  int64_t i = 0, next = start;
  for (SrVal *x; i < stop && (x = sr_iter_next(&it)); i++) {
    if (i == next) {
      if (room_for(I, (uint64_t)out->seq.n + 1) < 0) {
        sr_unref(x);
        sr_unref(out);
        out = NULL;
        break;
      }
      sr_seq_push(NULL, out, x);
      next = next > INT64_MAX - step ? INT64_MAX : next + step;
    } else {
      sr_unref(x);
    }
    if (sr_poll_interrupt(I)) {
      sr_unref(out);
      out = NULL;
      break;
    }
  }
  sr_iter_end(&it);
  return out ? iter_obj(&islice_class, out) : NULL;
}

/* ---- zip_longest, starmap, pairwise ---- */

static SrVal *it_zip_longest(SrInterp *I, SrArgs *a) {
  SrVal *fill = sr_none();
  for (int k = 0; k < a->nkw; k++) {
    if (strcmp(a->kw[k], "fillvalue") != 0)
      return sr_raise(I, "TypeError", "zip_longest() got an unexpected keyword argument '%s'", a->kw[k]);
    fill = a->kwv[k];
  }
  SrVal **ls = sr_xcalloc((size_t)a->n + 1, sizeof *ls);
  SrVal *out = NULL;
  int longest = 0;
  for (int i = 0; i < a->n; i++) {
    if (!(ls[i] = items_of(I, a->v[i]))) goto done;
    if (ls[i]->seq.n > longest) longest = ls[i]->seq.n;
  }
  out = list_new();
  for (int k = 0; k < longest; k++) {
    SrVal *t = sr_seq(NULL, SR_V_TUPLE, a->n);
    for (int i = 0; i < a->n; i++) sr_seq_push(NULL, t, sr_ref(k < ls[i]->seq.n ? ls[i]->seq.items[k] : fill));
    sr_seq_push(NULL, out, t);
  }
done:
  for (int i = 0; i < a->n; i++) sr_unref(ls[i]);
  free(ls);
  return out ? iter_obj(&zip_longest_class, out) : NULL;
}

static SrVal *it_starmap(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "starmap", "function, iterable", p) < 0) return NULL;
  SrVal *l = items_of(I, p[1]);
  if (!l) return NULL;
  SrVal *out = list_new();
  for (int i = 0; i < l->seq.n && out; i++) {
    SrVal *args = items_of(I, l->seq.items[i]);
    SrVal *r = NULL;
    if (args) {
      SrArgs ca = {args->seq.n, args->seq.items, 0, NULL, NULL, NULL};
      r = sr_call(I, p[0], &ca);
      sr_unref(args);
    }
    if (r) {
      sr_seq_push(NULL, out, r);
    } else {
      sr_unref(out);
      out = NULL;
    }
  }
  sr_unref(l);
  return out ? iter_obj(&starmap_class, out) : NULL;
}

static SrVal *it_pairwise(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "pairwise", "iterable", p) < 0) return NULL;
  SrVal *l = items_of(I, p[0]);
  if (!l) return NULL;
  SrVal *out = list_new();
  for (int i = 0; i + 1 < l->seq.n; i++) sr_seq_push(NULL, out, tuple_of(l->seq.items + i, NULL, 2));
  sr_unref(l);
  return iter_obj(&pairwise_class, out);
}

/* ---- takewhile, dropwhile, filterfalse, compress ---- */

/* pred(x) as a truth value: 1, 0, -1 with an exception */
static int pred_true(SrInterp *I, SrVal *pred, SrVal *x) {
  SrVal *r = pred->kind == SR_V_NONE ? sr_ref(x) : sr_call1(I, pred, x);
  if (!r) return -1;
  int t = sr_truthy(I, r);
  sr_unref(r);
  return t;
}

enum { TAKE, DROP, FILTERFALSE };

static SrVal *select_by(SrInterp *I, SrArgs *a, int how) {
  static const char *const names[] = {"takewhile", "dropwhile", "filterfalse"};
  static const SrClass *const classes[] = {&takewhile_class, &dropwhile_class, &filterfalse_class};
  SrVal *p[2];
  if (sr_args_parse(I, a, names[how], "predicate, iterable", p) < 0) return NULL;
  SrVal *l = items_of(I, p[1]);
  if (!l) return NULL;
  SrVal *out = list_new();
  int dropping = 1;
  for (int i = 0; i < l->seq.n; i++) {
    SrVal *x = l->seq.items[i];
    int t = how == DROP && !dropping ? 0 : pred_true(I, p[0], x);
    if (t < 0) {
      sr_unref(out);
      sr_unref(l);
      return NULL;
    }
    if (how == TAKE && !t) break;
    if (how == DROP && dropping && t) continue;
    dropping = 0;
    if (how == FILTERFALSE && t) continue;
    sr_seq_push(NULL, out, sr_ref(x));
  }
  sr_unref(l);
  return iter_obj(classes[how], out);
}

static SrVal *it_takewhile(SrInterp *I, SrArgs *a) { return select_by(I, a, TAKE); }
static SrVal *it_dropwhile(SrInterp *I, SrArgs *a) { return select_by(I, a, DROP); }
static SrVal *it_filterfalse(SrInterp *I, SrArgs *a) { return select_by(I, a, FILTERFALSE); }

static SrVal *it_compress(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  if (sr_args_parse(I, a, "compress", "data, selectors", p) < 0) return NULL;
  SrVal *d = items_of(I, p[0]), *s = d ? items_of(I, p[1]) : NULL, *out = NULL;
  if (s) {
    out = list_new();
    for (int i = 0; i < d->seq.n && i < s->seq.n; i++) {
      int t = sr_truthy(I, s->seq.items[i]);
      if (t < 0) {
        sr_unref(out);
        out = NULL;
        break;
      }
      if (t) sr_seq_push(NULL, out, sr_ref(d->seq.items[i]));
    }
  }
  sr_unref(d);
  sr_unref(s);
  return out ? iter_obj(&compress_class, out) : NULL;
}

void sr_itertools_init(void) {
  static const SrClass *const classes[] = {
    &product_class, &chain_class, &accumulate_class, &combinations_class, &permutations_class,
    &islice_class, &zip_longest_class, &starmap_class, &pairwise_class, &takewhile_class,
    &dropwhile_class, &compress_class, &filterfalse_class, &repeat_class,
  };
  for (size_t i = 0; i < sizeof classes / sizeof *classes; i++)
    sr_val_traverse_class(classes[i], items_traverse, items_clear);
  sr_def("itertools.product", it_product, "itertools.product(*iterables, repeat=1): the cartesian product, as tuples");
  sr_def("itertools.chain", it_chain, "itertools.chain(*iterables): the items of each in turn");
  sr_def("itertools.chain.from_iterable", it_chain_from_iterable,
         "itertools.chain.from_iterable(iterable): the items of each iterable it gives");
  sr_def("itertools.accumulate", it_accumulate,
         "itertools.accumulate(iterable, func=operator.add, *, initial=None): running totals");
  sr_def("itertools.combinations", it_combinations,
         "itertools.combinations(iterable, r): the r-length subsequences, in order");
  sr_def("itertools.permutations", it_permutations,
         "itertools.permutations(iterable, r=None): the r-length orderings");
  sr_def("itertools.count", it_count, "itertools.count(start=0, step=1): ints from start, without end (lazy)");
  sr_def("itertools.repeat", it_repeat, "itertools.repeat(object, times): object, times times");
  sr_def("itertools.islice", it_islice, "itertools.islice(iterable, stop) / (iterable, start, stop[, step])");
  sr_def("itertools.zip_longest", it_zip_longest,
         "itertools.zip_longest(*iterables, fillvalue=None): zip to the longest, filling the others");
  sr_def("itertools.starmap", it_starmap, "itertools.starmap(function, iterable): function(*args) for each");
  sr_def("itertools.pairwise", it_pairwise, "itertools.pairwise(iterable): successive overlapping pairs");
  sr_def("itertools.takewhile", it_takewhile, "itertools.takewhile(predicate, iterable)");
  sr_def("itertools.dropwhile", it_dropwhile, "itertools.dropwhile(predicate, iterable)");
  sr_def("itertools.filterfalse", it_filterfalse, "itertools.filterfalse(predicate, iterable)");
  sr_def("itertools.compress", it_compress, "itertools.compress(data, selectors)");
}
