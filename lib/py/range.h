/* range.h: Python's range, a lazy sequence of ints, and walking an
 * iterable one item at a time.
 *
 * A range holds its start, stop and step, never its items: range(10**12)
 * costs nothing, and len, indexing, slicing (which gives a range), `in`,
 * .index and .count are arithmetic.  Consumers that walk an iterable
 * (for loops, comprehensions, sum, min, max, any, all, zip) use SrIter, so
 * that a range yields its ints as they are needed; whatever builds a list
 * of the items (list(), sorted(), *unpacking) gets them from sr_iterate,
 * which raises MemoryError for a range too long to list.
 */
#ifndef SR_LANG_RANGE_H
#define SR_LANG_RANGE_H

#include "py/interp.h"

typedef struct SrRange {
  int64_t start, stop, step; /* step != 0 */
  uint64_t len;              /* may pass INT64_MAX: range(-2**63, 2**63 - 1) */
} SrRange;

extern const SrClass sr_range_class;

/* A new range value (step must not be 0). */
SrVal *sr_range_new(int64_t start, int64_t stop, int64_t step);

static inline const SrRange *sr_as_range(const SrVal *v) {
  return sr_is_obj(v, &sr_range_class) ? (const SrRange *)v->obj.data : NULL;
}

/* reversed(r): a range_iterator over r's ints from the last. */
SrVal *sr_range_reversed(SrVal *range);

/* An iterator of `left` ints from next by step (itertools.count: as many
   as an int64 holds), walked lazily as a range's iterator is. */
SrVal *sr_range_iter_new(int64_t next, int64_t step, uint64_t left);

/* Whether v is such an iterator; its next int (a new reference), or NULL
   when it is exhausted (next() on it). */
int sr_is_range_iter(const SrVal *v);
SrVal *sr_range_iter_step(SrVal *v);

/* `item in r`; -1 with an exception raised. */
int sr_range_contains(SrInterp *I, const SrRange *r, SrVal *item);

/* The walk over an iterable.  sr_iter_begin returns 0, or -1 with an
   exception raised (not iterable, too long to list); sr_iter_next gives
   the next item (a new reference) or NULL at the end; sr_iter_end frees
   what the walk holds.  Walking a range's iterator (reversed(range(...)))
   advances it, as in Python. */
typedef struct SrIterPos {
  int64_t next, step;
  uint64_t left;
} SrIterPos;

typedef struct SrIter {
  SrVal *items;     /* the listed items of anything but a range, or NULL */
  int i;
  SrVal *held;      /* a range iterator whose position is walked */
  SrIterPos *pos;   /* the ints still to come: &own, or the iterator's */
  SrIterPos own;
  /* a generator, or the iterator a class's __iter__ gave, stepped one
     item at a time (it may be endless): */
  SrVal *lazy;
  SrInterp *I;
  int done, failed;
} SrIter;

int sr_iter_begin(SrInterp *I, SrIter *it, SrVal *v);
SrVal *sr_iter_next(SrIter *it);
void sr_iter_end(SrIter *it);
/* Iterators written in C that give one item a step (enumerate, zip and
   map over a generator): step returns a new reference, or NULL at the
   end (no exception) or with an exception raised.  Listing one (list(),
   sorted()) steps it to its end. */
typedef SrVal *(*SrLazyStep)(SrInterp *I, void *state);
SrVal *sr_lazy_iter_new(const char *type, SrLazyStep step, void *state, void (*free_state)(void *));
int sr_is_lazy_iter(const SrVal *v);
SrVal *sr_lazy_iter_step(SrInterp *I, SrVal *v);
/* Whether iterating v may have to go an item at a time: a generator, a
   C iterator of that kind, or an instance (its __iter__/__next__). */
int sr_iter_is_lazy(const SrVal *v);

/* After sr_iter_next gave NULL: whether the walk ended in an exception
   (a generator's body, an iterator's __next__), raised, rather than at
   the end. */
static inline int sr_iter_failed(const SrIter *it) { return it->failed; }

/* A long walk stops at Ctrl-C (an interrupt point, sr_interrupt_point):
   1 with KeyboardInterrupt raised, else 0. */
static inline int sr_poll_interrupt(SrInterp *I) {
  if (!sr_interrupt_point(I)) return 0;
  sr_raise(I, "KeyboardInterrupt", "interrupted");
  return 1;
}

/* How many items the walk has still to give, and whether a list of n
   items can be made (0), or -1 with MemoryError raised: past INT_MAX
   items, or past what the process may get (sr_check_mem). */
uint64_t sr_iter_left(const SrIter *it);
int sr_listable(SrInterp *I, uint64_t n);

/* Where a sequence of ints is wanted (a shape, axes, a permutation), a
   range is one too: its ints as a new list (a range longer than
   SR_MAX_RANK gives its first SR_MAX_RANK + 1, enough for the caller to
   refuse it).  Anything else (NULL too) is v itself, borrowed. */
SrVal *sr_int_seq_arg(SrVal *v);

/* Registers range and its iterator (from sr_builtins_py_init). */
void sr_range_init(void);

#endif
