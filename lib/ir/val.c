/* val.c: Python-level values: construction, copying, comparing (the
   printer is text/print_val.c). */
#include "ir/val.h"

#include <stdlib.h>
#include <string.h>

#include "ir/jaxpr.h"

static SrVal none_val = {-1, SR_V_NONE, 0, NULL, {0}};
static SrVal true_val = {-1, SR_V_BOOL, 0, NULL, {.i = 1}};
static SrVal false_val = {-1, SR_V_BOOL, 0, NULL, {.i = 0}};
static SrVal axistype_vals[3] = {
  {-1, SR_V_AXISTYPE, 0, NULL, {.axistype = SR_AXIS_EXPLICIT}},
  {-1, SR_V_AXISTYPE, 0, NULL, {.axistype = SR_AXIS_AUTO}},
  {-1, SR_V_AXISTYPE, 0, NULL, {.axistype = SR_AXIS_MANUAL}},
};

SrVal *sr_none(void) { return &none_val; }
SrVal *sr_bool(int b) { return b ? &true_val : &false_val; }
SrVal *sr_axistype_val(int t) { return &axistype_vals[t]; }

/* ---- the counted containers, for sr_val_collect_cycles ----
 *
 * Every counted tuple, list, set and dict, and every object of a class
 * with a traverse hook, is in this set (open addressing, linear probing,
 * deletion by backward shift), so that values that only hold each other
 * -- l.append(l) -- can be found once nothing else holds them.  The slots
 * hold the pointers masked, so that LeakSanitizer does not count them as
 * references and still reports a container that leaks.  Values are made
 * and freed on one thread. */

#define TRACK_MASK ((uintptr_t)0x5a5a5a5a5a5a5a5aull)

/* the classes whose objects are traversed (a class past the table's end
   would go unseen, and its cycles leak: that aborts instead) */
#define MAX_TRAVERSED 64
static struct {
  const SrClass *cls;
  void (*traverse)(void *data, SrValVisit visit, void *arg);
  void (*clear)(void *data);
} traversed[MAX_TRAVERSED];

/* The last few classes asked about and their answers: every object made
   or freed asks (an eager loop makes and drops arrays by the thousand), and
   the registered classes are a list.  Cleared when one is registered. */
static struct {
  const SrClass *cls;
  int index;
} seen[16];

void sr_val_traverse_class(const SrClass *cls, void (*traverse)(void *data, SrValVisit visit, void *arg),
                           void (*clear)(void *data)) {
  memset(seen, 0, sizeof seen);
  for (int i = 0; i < MAX_TRAVERSED; i++)
    if (!traversed[i].cls || traversed[i].cls == cls) {
      traversed[i].cls = cls;
      traversed[i].traverse = traverse;
      traversed[i].clear = clear;
      return;
    }
  abort();
}

static int traversed_index(const SrClass *cls) {
  size_t h = ((uintptr_t)cls >> 4) & 15;
  if (seen[h].cls == cls) return seen[h].index;
  int r = -1;
  for (int i = 0; i < MAX_TRAVERSED && traversed[i].cls; i++)
    if (traversed[i].cls == cls) {
      r = i;
      break;
    }
  seen[h].cls = cls;
  seen[h].index = r;
  return r;
}

static struct {
  uintptr_t *slot;
  size_t cap, n;
} tracked;

static int is_tracked_kind(const SrVal *v) {
  int k = v->kind;
  return k == SR_V_TUPLE || k == SR_V_LIST || k == SR_V_SET || k == SR_V_FROZENSET || k == SR_V_DICT ||
         (k == SR_V_OBJ && v->obj.cls && traversed_index(v->obj.cls) >= 0);
}

static SrVal *slot_val(size_t i) { return tracked.slot[i] ? (SrVal *)(tracked.slot[i] ^ TRACK_MASK) : NULL; }

static size_t home_of(const SrVal *v, size_t cap) {
  return (size_t)(((uintptr_t)v >> 4) * 11400714819323198485ull % cap);
}

static void track(SrVal *v) {
  if (2 * (tracked.n + 1) > tracked.cap) {
    size_t cap = tracked.cap ? 2 * tracked.cap : 1024;
    uintptr_t *slot = sr_xcalloc(cap, sizeof *slot);
    for (size_t i = 0; i < tracked.cap; i++) {
      SrVal *x = slot_val(i);
      if (!x) continue;
      size_t j = home_of(x, cap);
      while (slot[j]) j = (j + 1) % cap;
      slot[j] = tracked.slot[i];
    }
    free(tracked.slot);
    tracked.slot = slot;
    tracked.cap = cap;
  }
  size_t j = home_of(v, tracked.cap);
  while (tracked.slot[j]) j = (j + 1) % tracked.cap;
  tracked.slot[j] = (uintptr_t)v ^ TRACK_MASK;
  tracked.n++;
}

/* The slot of v, or SIZE_MAX. */
static size_t tracked_slot(const SrVal *v) {
  if (!tracked.cap) return SIZE_MAX;
  uintptr_t m = (uintptr_t)v ^ TRACK_MASK;
  for (size_t j = home_of(v, tracked.cap); tracked.slot[j]; j = (j + 1) % tracked.cap)
    if (tracked.slot[j] == m) return j;
  return SIZE_MAX;
}

static void untrack(SrVal *v) {
  size_t i = tracked_slot(v);
  if (i == SIZE_MAX) return;
  tracked.slot[i] = 0;
  tracked.n--;
  /* backward shift: move later entries of the run into the hole unless
     their home lies cyclically in (i, j] */
  for (size_t j = (i + 1) % tracked.cap; tracked.slot[j]; j = (j + 1) % tracked.cap) {
    size_t h = home_of(slot_val(j), tracked.cap);
    int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
    if (stays) continue;
    tracked.slot[i] = tracked.slot[j];
    tracked.slot[j] = 0;
    i = j;
  }
}

size_t sr_val_containers_live(void) { return tracked.n; }

/* Calls visit on each value v holds directly. */
static void children(SrVal *v, void (*visit)(SrVal *c, void *arg), void *arg) {
  if (v->kind == SR_V_DICT) {
    for (int k = 0; k < v->dict.n; k++) {
      visit(v->dict.keys[k], arg);
      visit(v->dict.vals[k], arg);
    }
  } else if (v->kind == SR_V_OBJ) {
    traversed[traversed_index(v->obj.cls)].traverse(v->obj.data, visit, arg);
  } else {
    for (int k = 0; k < v->seq.n; k++) visit(v->seq.items[k], arg);
  }
}

typedef struct Collect {
  int64_t *gc;    /* per slot: references from outside the tracked values */
  uint8_t *reach; /* per slot: reached from outside */
  size_t *stack, top;
} Collect;

static size_t child_slot(SrVal *c) {
  if (!c || c->rc < 0 || !is_tracked_kind(c)) return SIZE_MAX;
  return tracked_slot(c);
}

static void visit_count(SrVal *c, void *arg) {
  size_t j = child_slot(c);
  if (j != SIZE_MAX) ((Collect *)arg)->gc[j]--;
}

static void visit_reach(SrVal *c, void *arg) {
  Collect *cl = arg;
  size_t j = child_slot(c);
  if (j != SIZE_MAX && !cl->reach[j]) {
    cl->reach[j] = 1;
    cl->stack[cl->top++] = j;
  }
}

size_t sr_val_collect_cycles(void) {
  if (!tracked.n) return 0;
  size_t cap = tracked.cap;
  Collect cl = {sr_xcalloc(cap, sizeof *cl.gc), sr_xcalloc(cap, 1), sr_xmalloc(cap * sizeof *cl.stack), 0};
  /* 1. references from outside: the count less those from tracked values */
  for (size_t i = 0; i < cap; i++)
    if (tracked.slot[i]) cl.gc[i] = slot_val(i)->rc;
  for (size_t i = 0; i < cap; i++)
    if (tracked.slot[i]) children(slot_val(i), visit_count, &cl);
  /* 2. what the values held from outside reach */
  for (size_t i = 0; i < cap; i++) {
    if (!tracked.slot[i] || cl.gc[i] <= 0 || cl.reach[i]) continue;
    cl.reach[i] = 1;
    cl.stack[cl.top++] = i;
    while (cl.top) children(slot_val(cl.stack[--cl.top]), visit_reach, &cl);
  }
  /* 3. the rest is garbage: held, emptied, then let go */
  SrVal **garbage = sr_xmalloc(cap * sizeof *garbage);
  size_t ng = 0;
  for (size_t i = 0; i < cap; i++)
    if (tracked.slot[i] && !cl.reach[i]) garbage[ng++] = sr_ref(slot_val(i));
  free(cl.gc);
  free(cl.reach);
  free(cl.stack);
  for (size_t g = 0; g < ng; g++) {
    SrVal *v = garbage[g];
    if (v->kind == SR_V_DICT) {
      int n = v->dict.n;
      v->dict.n = 0;
      for (int k = 0; k < n; k++) {
        sr_unref(v->dict.keys[k]);
        sr_unref(v->dict.vals[k]);
      }
    } else if (v->kind == SR_V_OBJ) {
      traversed[traversed_index(v->obj.cls)].clear(v->obj.data);
    } else {
      int n = v->seq.n;
      v->seq.n = 0;
      for (int k = 0; k < n; k++) sr_unref(v->seq.items[k]);
    }
  }
  for (size_t g = 0; g < ng; g++) sr_unref(garbage[g]);
  free(garbage);
  return ng;
}

/* Counted values freed lately, kept for the next ones (a loop makes and
   drops a few values an iteration): a list of each thread's own. */
#ifdef SR_ASAN
#define SPARE_VALS 0
#else
#define SPARE_VALS 64
#endif
static _Thread_local struct {
  SrVal *head;
  int n;
} spare;

static SrVal *alloc_val(SrArena *a, SrValKind kind) {
  SrVal *v;
  if (a) {
    v = sr_arena_zalloc(a, sizeof *v);
    v->rc = -1;
  } else {
    if (spare.head) {
      v = spare.head;
      spare.head = *(SrVal **)v;
      spare.n--;
      memset(v, 0, sizeof *v);
    } else {
      v = sr_xcalloc(1, sizeof *v);
    }
    v->rc = 1;
  }
  v->kind = (uint8_t)kind;
  if (!a && is_tracked_kind(v)) track(v);
  return v;
}

static void *alloc_mem(SrArena *a, size_t n) {
  return a ? sr_arena_alloc(a, n) : sr_xmalloc(n);
}

SrVal *sr_int(SrArena *a, int64_t i) {
  SrVal *v = alloc_val(a, SR_V_INT);
  v->i = i;
  return v;
}

SrVal *sr_float(SrArena *a, double f) {
  SrVal *v = alloc_val(a, SR_V_FLOAT);
  v->f = f;
  return v;
}

SrVal *sr_complex(SrArena *a, double re, double im) {
  SrVal *v = alloc_val(a, SR_V_COMPLEX);
  v->c.re = re;
  v->c.im = im;
  return v;
}

static SrVal *text_val(SrArena *a, SrValKind kind, const char *s, size_t n) {
  SrVal *v = alloc_val(a, kind);
  char *p = alloc_mem(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  v->str.s = p;
  v->str.n = n;
  return v;
}

SrVal *sr_str(SrArena *a, const char *s, size_t n) { return text_val(a, SR_V_STR, s, n); }
SrVal *sr_str_cstr(SrArena *a, const char *s) { return sr_str(a, s, strlen(s)); }

SrVal *sr_str_take(char *p, size_t n) {
  SrVal *v = alloc_val(NULL, SR_V_STR);
  v->str.s = p;
  v->str.n = n;
  return v;
}
SrVal *sr_word(SrArena *a, const char *s, size_t n) { return text_val(a, SR_V_WORD, s, n); }

SrVal *sr_seq(SrArena *a, SrValKind kind, int n) {
  SrVal *v = alloc_val(a, kind);
  v->seq.cap = n > 0 ? n : 0;
  v->seq.items = n > 0 ? alloc_mem(a, (size_t)n * sizeof(SrVal *)) : NULL;
  return v;
}

void sr_seq_push(SrArena *a, SrVal *seq, SrVal *item) {
  if (seq->seq.n == seq->seq.cap) {
    int cap = seq->seq.cap ? 2 * seq->seq.cap : 4;
    SrVal **items = alloc_mem(a, (size_t)cap * sizeof(SrVal *));
    if (seq->seq.n) memcpy(items, seq->seq.items, (size_t)seq->seq.n * sizeof(SrVal *));
    if (!a) free(seq->seq.items);
    seq->seq.items = items;
    seq->seq.cap = cap;
  }
  seq->seq.items[seq->seq.n++] = item;
}

SrVal *sr_tuple(SrArena *a, int n, SrVal **items) {
  SrVal *t = sr_seq(a, SR_V_TUPLE, n);
  for (int i = 0; i < n; i++) t->seq.items[i] = items[i];
  t->seq.n = n;
  return t;
}

SrVal *sr_dict(SrArena *a) { return alloc_val(a, SR_V_DICT); }

void sr_dict_set(SrArena *a, SrVal *d, SrVal *key, SrVal *val) {
  for (int i = 0; i < d->dict.n; i++)
    if (sr_val_equal(d->dict.keys[i], key)) {
      sr_unref(key);
      sr_unref(d->dict.vals[i]);
      d->dict.vals[i] = val;
      return;
    }
  if (d->dict.n == d->dict.cap) {
    int cap = d->dict.cap ? 2 * d->dict.cap : 4;
    SrVal **k = alloc_mem(a, (size_t)cap * sizeof(SrVal *));
    SrVal **v = alloc_mem(a, (size_t)cap * sizeof(SrVal *));
    if (d->dict.n) {
      sr_copy(k, d->dict.keys, (size_t)d->dict.n * sizeof(SrVal *));
      sr_copy(v, d->dict.vals, (size_t)d->dict.n * sizeof(SrVal *));
    }
    if (!a) {
      free(d->dict.keys);
      free(d->dict.vals);
    }
    d->dict.keys = k;
    d->dict.vals = v;
    d->dict.cap = cap;
  }
  d->dict.keys[d->dict.n] = key;
  d->dict.vals[d->dict.n++] = val;
}

SrVal *sr_dict_get(const SrVal *d, const SrVal *key) {
  for (int i = 0; i < d->dict.n; i++)
    if (sr_val_equal(d->dict.keys[i], key)) return d->dict.vals[i];
  return NULL;
}

SrVal *sr_dtype_val(SrArena *a, SrDtype d) {
  SrVal *v = alloc_val(a, SR_V_DTYPE);
  v->dtype = d;
  return v;
}

SrSpec *sr_spec_copy(SrArena *a, const SrSpec *s) {
  /* one block: the spec, its entries, then the name arrays */
  size_t nnames = (size_t)s->nunreduced + (size_t)s->nreduced;
  for (int i = 0; i < s->n; i++) nnames += (size_t)s->e[i].n;
  size_t size = sizeof(SrSpec) + (size_t)s->n * sizeof(SrSpecEntry) + nnames * sizeof(char *);
  SrSpec *c = alloc_mem(a, size);
  memset(c, 0, size);
  c->n = s->n;
  c->e = (SrSpecEntry *)(c + 1);
  const char **names = (const char **)(c->e + s->n);
  for (int i = 0; i < s->n; i++) {
    c->e[i].n = s->e[i].n;
    c->e[i].names = names;
    sr_copy(names, s->e[i].names, (size_t)s->e[i].n * sizeof(char *));
    names += s->e[i].n;
  }
  c->nunreduced = s->nunreduced;
  c->unreduced = names;
  sr_copy(names, s->unreduced, (size_t)s->nunreduced * sizeof(char *));
  names += s->nunreduced;
  c->nreduced = s->nreduced;
  c->reduced = names;
  sr_copy(names, s->reduced, (size_t)s->nreduced * sizeof(char *));
  c->ukind = s->nunreduced ? (s->ukind ? s->ukind : SR_UK_SUM) : SR_UK_NONE;
  return c;
}

void sr_spec_free(SrSpec *s) { free(s); }

SrVal *sr_spec_val(SrArena *a, const SrSpec *s) {
  SrVal *v = alloc_val(a, SR_V_SPEC);
  v->spec = sr_spec_copy(a, s);
  return v;
}

SrVal *sr_sharding_val(SrArena *a, const SrMesh *m, const SrSpec *s,
                       const char *memory_kind) {
  SrVal *v = alloc_val(a, SR_V_SHARDING);
  v->sh.mesh = m;
  v->sh.spec = sr_spec_copy(a, s);
  v->sh.memory_kind = memory_kind;
  return v;
}

SrVal *sr_mesh_val(SrArena *a, const SrMesh *m) {
  SrVal *v = alloc_val(a, SR_V_MESH);
  v->mesh = m;
  return v;
}

SrVal *sr_jaxpr_val(SrArena *a, SrJaxpr *j) {
  SrVal *v = alloc_val(a, SR_V_JAXPR);
  v->jx.jaxpr = j;
  v->jx.prog = a ? j->prog : sr_program_ref(j->prog);
  return v;
}

SrVal *sr_obj(const SrClass *cls, void *data) {
  SrVal *v = alloc_val(NULL, SR_V_OBJ);
  v->obj.cls = cls;
  v->obj.data = data;
  if (traversed_index(cls) >= 0) track(v);
  return v;
}

/* Frees one value whose count reached zero; the items of a container go
   through sr_unref, which queues those that die instead of recursing. */
static void free_val(SrVal *v) {
  if (is_tracked_kind(v)) untrack(v);
  switch (v->kind) {
  case SR_V_STR:
  case SR_V_WORD:
    free((char *)v->str.s);
    break;
  case SR_V_TUPLE:
  case SR_V_LIST:
  case SR_V_SET:
  case SR_V_FROZENSET:
    for (int i = 0; i < v->seq.n; i++) sr_unref(v->seq.items[i]);
    free(v->seq.items);
    break;
  case SR_V_DICT:
    for (int i = 0; i < v->dict.n; i++) {
      sr_unref(v->dict.keys[i]);
      sr_unref(v->dict.vals[i]);
    }
    free(v->dict.keys);
    free(v->dict.vals);
    break;
  case SR_V_SPEC:
    free(v->spec);
    break;
  case SR_V_SHARDING:
    free(v->sh.spec);
    break;
  case SR_V_JAXPR:
    sr_program_unref(v->jx.prog);
    break;
  case SR_V_OBJ:
    if (v->obj.cls->free) v->obj.cls->free(v->obj.data);
    break;
  default:
    break;
  }
  if (spare.n < SPARE_VALS) {
    *(SrVal **)v = spare.head;
    spare.head = v;
    spare.n++;
    return;
  }
  free(v);
}

/* Values that died while another was being freed, waiting their turn:
   freeing a list nested 200000 deep must not recurse 200000 deep. */
static _Thread_local struct {
  SrVal **v;
  size_t n, cap;
  int freeing;
} dying;

void sr_unref(SrVal *v) {
  if (!v || v->rc < 0 || --v->rc > 0) return;
  if (dying.n == dying.cap) {
    dying.cap = dying.cap ? 2 * dying.cap : 64;
    dying.v = sr_xrealloc(dying.v, dying.cap * sizeof *dying.v);
  }
  dying.v[dying.n++] = v;
  if (dying.freeing) return;
  dying.freeing = 1;
  while (dying.n) free_val(dying.v[--dying.n]);
  dying.freeing = 0;
}

enum { KEPT_CLASSES = 16 };
static const SrClass *kept_classes[KEPT_CLASSES];

void sr_val_keep_class(const SrClass *cls) {
  for (int i = 0; i < KEPT_CLASSES; i++)
    if (!kept_classes[i] || kept_classes[i] == cls) {
      kept_classes[i] = cls;
      return;
    }
}

static struct {
  const SrClass *cls;
  int (*equal)(const SrVal *, const SrVal *);
} equal_classes[8];

void sr_val_equal_class(const SrClass *cls, int (*equal)(const SrVal *a, const SrVal *b)) {
  for (int i = 0; i < 8; i++)
    if (!equal_classes[i].cls || equal_classes[i].cls == cls) {
      equal_classes[i].cls = cls;
      equal_classes[i].equal = equal;
      return;
    }
}

static struct {
  const SrClass *cls;
  const char *(*type_name)(const SrVal *);
} named_classes[8];

void sr_val_type_name_class(const SrClass *cls, const char *(*type_name)(const SrVal *v)) {
  for (int i = 0; i < 8; i++)
    if (!named_classes[i].cls || named_classes[i].cls == cls) {
      named_classes[i].cls = cls;
      named_classes[i].type_name = type_name;
      return;
    }
}

static const char *obj_type_name(const SrVal *v) {
  for (int i = 0; i < 8 && named_classes[i].cls; i++)
    if (named_classes[i].cls == v->obj.cls) return named_classes[i].type_name(v);
  return v->obj.cls->name;
}

static int obj_equal(const SrVal *a, const SrVal *b) {
  if (a->obj.data == b->obj.data) return 1;
  for (int i = 0; i < 8 && equal_classes[i].cls; i++)
    if (equal_classes[i].cls == a->obj.cls) return a->obj.cls == b->obj.cls && equal_classes[i].equal(a, b);
  return 0;
}

static int kept_by_ref(const SrVal *v) {
  for (int i = 0; v->kind == SR_V_OBJ && i < KEPT_CLASSES && kept_classes[i]; i++)
    if (kept_classes[i] == v->obj.cls) return 1;
  return 0;
}

/* What sr_val_repr (text/print_val.c) prints for the values that
   sr_val_to_prog keeps as text: an object of lang/, a hoisted jaxpr's
   name. */
static void repr_kept_as_text(SrBuf *out, const SrVal *v) {
  if (v->text)
    sr_buf_putn(out, v->text, v->textlen);
  else if (v->kind == SR_V_JAXPR_REF)
    sr_buf_puts(out, v->ref.name);
  else
    sr_obj_print(out, v, 1);
}

SrVal *sr_val_to_prog(SrProgram *p, SrVal *v) {
  if (v->rc < 0 && v->kind != SR_V_JAXPR) return v;
  if (kept_by_ref(v)) return sr_program_hold(p, v);
  SrArena *a = p->arena;
  SrVal *c;
  switch (v->kind) {
  case SR_V_NONE: return sr_none();
  case SR_V_BOOL: return sr_bool((int)v->i);
  case SR_V_AXISTYPE: return sr_axistype_val(v->axistype);
  case SR_V_INT: c = sr_int(a, v->i); break;
  case SR_V_FLOAT: c = sr_float(a, v->f); break;
  case SR_V_COMPLEX: c = sr_complex(a, v->c.re, v->c.im); break;
  case SR_V_STR: c = sr_str(a, v->str.s, v->str.n); break;
  case SR_V_WORD: c = sr_word(a, v->str.s, v->str.n); break;
  case SR_V_TUPLE:
  case SR_V_LIST:
  case SR_V_SET:
  case SR_V_FROZENSET:
    c = sr_seq(a, v->kind, v->seq.n);
    for (int i = 0; i < v->seq.n; i++) sr_seq_push(a, c, sr_val_to_prog(p, v->seq.items[i]));
    break;
  case SR_V_DICT:
    c = sr_dict(a);
    for (int i = 0; i < v->dict.n; i++)
      sr_dict_set(a, c, sr_val_to_prog(p, v->dict.keys[i]), sr_val_to_prog(p, v->dict.vals[i]));
    break;
  case SR_V_DTYPE: c = sr_dtype_val(a, v->dtype); break;
  case SR_V_SPEC: c = sr_spec_val(a, v->spec); break;
  case SR_V_SHARDING: c = sr_sharding_val(a, v->sh.mesh, v->sh.spec, v->sh.memory_kind); break;
  case SR_V_MESH: c = sr_mesh_val(a, v->mesh); break;
  case SR_V_JAXPR:
    if (v->rc < 0 && v->jx.prog == p) return v;
    if (v->jx.prog != p) sr_program_dep(p, v->jx.prog);
    c = sr_jaxpr_val(a, v->jx.jaxpr);
    break;
  default: {
    SrBuf b = SR_BUF_INIT;
    repr_kept_as_text(&b, v);
    c = sr_word(a, b.p, b.len);
    sr_buf_free(&b);
    return c;
  }
  }
  return c;
}

/* Printing (text/print_val.c) and comparing recurse into containers.  A
   container that holds itself prints as Python prints it, [...] or {...};
   one nested more than SR_VAL_MAX_NEST deep stops there and sets too_deep,
   which the language turns into RecursionError (sr_val_too_deep), as
   Python raises one.  The two share one count of levels. */
static _Thread_local struct {
  const SrVal *v[SR_VAL_MAX_NEST];
  int n;
  int too_deep;
} nest;

int sr_val_nest_enter(const SrVal *v) {
  for (int i = 0; v && i < nest.n; i++)
    if (nest.v[i] == v) return 0;
  if (nest.n == SR_VAL_MAX_NEST) {
    nest.too_deep = 1;
    return -1;
  }
  nest.v[nest.n++] = v;
  return 1;
}

void sr_val_nest_leave(void) { nest.n--; }

int sr_val_too_deep(void) {
  int t = nest.too_deep;
  nest.too_deep = 0;
  return t;
}

void sr_obj_print(SrBuf *out, const SrVal *v, int repr) {
  if (!repr && v->obj.cls->str)
    v->obj.cls->str(out, v);
  else if (v->obj.cls->repr)
    v->obj.cls->repr(out, v);
  else
    sr_buf_printf(out, "<%s object>", v->obj.cls->name);
}

static int spec_equal(const SrSpec *a, const SrSpec *b) {
  if (a->n != b->n || a->nunreduced != b->nunreduced || a->nreduced != b->nreduced ||
      a->ukind != b->ukind)
    return 0;
  for (int i = 0; i < a->n; i++) {
    if (a->e[i].n != b->e[i].n) return 0;
    for (int j = 0; j < a->e[i].n; j++)
      if (a->e[i].names[j] != b->e[i].names[j]) return 0;
  }
  /* unreduced and reduced are sets */
  for (int i = 0; i < a->nunreduced; i++) {
    int found = 0;
    for (int j = 0; j < b->nunreduced; j++) found |= a->unreduced[i] == b->unreduced[j];
    if (!found) return 0;
  }
  for (int i = 0; i < a->nreduced; i++) {
    int found = 0;
    for (int j = 0; j < b->nreduced; j++) found |= a->reduced[i] == b->reduced[j];
    if (!found) return 0;
  }
  return 1;
}

static int val_equal(const SrVal *a, const SrVal *b);

/* Containers compare item by item; past SR_VAL_MAX_NEST levels the answer
   is "unequal" with too_deep set, as printing does. */
int sr_val_equal(const SrVal *a, const SrVal *b) {
  if (a == b) return 1;
  if (sr_val_nest_enter(NULL) < 0) return 0; /* a level, not a container being printed */
  int eq = val_equal(a, b);
  sr_val_nest_leave();
  return eq;
}

static int val_equal(const SrVal *a, const SrVal *b) {
  /* Python: True == 1 == 1.0 */
  int an = a->kind == SR_V_BOOL || a->kind == SR_V_INT || a->kind == SR_V_FLOAT;
  int bn = b->kind == SR_V_BOOL || b->kind == SR_V_INT || b->kind == SR_V_FLOAT;
  if ((an && b->kind == SR_V_COMPLEX) || (bn && a->kind == SR_V_COMPLEX)) {
    const SrVal *c = a->kind == SR_V_COMPLEX ? a : b, *r = c == a ? b : a;
    double x = r->kind == SR_V_FLOAT ? r->f : (double)r->i;
    return c->c.im == 0 && c->c.re == x;
  }
  if (an && bn) {
    if (a->kind != SR_V_FLOAT && b->kind != SR_V_FLOAT) return a->i == b->i;
    double x = a->kind == SR_V_FLOAT ? a->f : (double)a->i;
    double y = b->kind == SR_V_FLOAT ? b->f : (double)b->i;
    return x == y;
  }
  int as = a->kind == SR_V_SET || a->kind == SR_V_FROZENSET;
  int bs = b->kind == SR_V_SET || b->kind == SR_V_FROZENSET;
  if (as && bs) {
    if (a->seq.n != b->seq.n) return 0;
    for (int i = 0; i < a->seq.n; i++) {
      int found = 0;
      for (int j = 0; j < b->seq.n && !found; j++)
        found = sr_val_equal(a->seq.items[i], b->seq.items[j]);
      if (!found) return 0;
    }
    return 1;
  }
  /* numpy's dtype.__eq__ compares with np.dtype(other): a dtype equals
     its name */
  if ((a->kind == SR_V_DTYPE && b->kind == SR_V_STR) || (a->kind == SR_V_STR && b->kind == SR_V_DTYPE)) {
    const SrVal *d = a->kind == SR_V_DTYPE ? a : b, *n = a->kind == SR_V_DTYPE ? b : a;
    return sr_dtype_lookup(n->str.s, n->str.n) == (int)d->dtype;
  }
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
  case SR_V_NONE: return 1;
  case SR_V_COMPLEX: return a->c.re == b->c.re && a->c.im == b->c.im;
  case SR_V_STR:
  case SR_V_WORD:
    return a->str.n == b->str.n && memcmp(a->str.s, b->str.s, a->str.n) == 0;
  case SR_V_TUPLE:
  case SR_V_LIST:
    if (a->seq.n != b->seq.n) return 0;
    for (int i = 0; i < a->seq.n; i++)
      if (!sr_val_equal(a->seq.items[i], b->seq.items[i])) return 0;
    return 1;
  case SR_V_DICT:
    if (a->dict.n != b->dict.n) return 0;
    for (int i = 0; i < a->dict.n; i++) {
      SrVal *o = sr_dict_get(b, a->dict.keys[i]);
      if (!o || !sr_val_equal(a->dict.vals[i], o)) return 0;
    }
    return 1;
  case SR_V_DTYPE: return a->dtype == b->dtype;
  case SR_V_SPEC: return spec_equal(a->spec, b->spec);
  case SR_V_SHARDING:
    return sr_mesh_shape(a->sh.mesh) == sr_mesh_shape(b->sh.mesh) &&
           spec_equal(a->sh.spec, b->sh.spec);
  case SR_V_MESH: return a->mesh == b->mesh;
  case SR_V_AXISTYPE: return a->axistype == b->axistype;
  case SR_V_JAXPR: return a->jx.jaxpr == b->jx.jaxpr;
  case SR_V_OBJ: return obj_equal(a, b);
  default: return 0;
  }
}

int sr_val_truthy(const SrVal *v) {
  switch (v->kind) {
  case SR_V_NONE: return 0;
  case SR_V_BOOL:
  case SR_V_INT: return v->i != 0;
  case SR_V_FLOAT: return v->f != 0;
  case SR_V_COMPLEX: return v->c.re != 0 || v->c.im != 0;
  case SR_V_STR: return v->str.n != 0;
  case SR_V_TUPLE:
  case SR_V_LIST:
  case SR_V_SET:
  case SR_V_FROZENSET: return v->seq.n != 0;
  case SR_V_DICT: return v->dict.n != 0;
  default: return 1;
  }
}

const char *sr_val_kind_name(const SrVal *v) {
  switch (v->kind) {
  case SR_V_NONE: return "NoneType";
  case SR_V_BOOL: return "bool";
  case SR_V_INT: return "int";
  case SR_V_FLOAT: return "float";
  case SR_V_COMPLEX: return "complex";
  case SR_V_STR: return "str";
  case SR_V_WORD: return "object";
  case SR_V_TUPLE: return "tuple";
  case SR_V_LIST: return "list";
  case SR_V_SET: return "set";
  case SR_V_FROZENSET: return "frozenset";
  case SR_V_DICT: return "dict";
  case SR_V_DTYPE: return "dtype";
  case SR_V_SPEC: return "PartitionSpec";
  case SR_V_SHARDING: return "NamedSharding";
  case SR_V_MESH: return v->mesh->abstract ? "AbstractMesh" : "Mesh";
  case SR_V_AXISTYPE: return "AxisType";
  case SR_V_JAXPR: return "Jaxpr";
  case SR_V_JAXPR_REF: return "Jaxpr";
  case SR_V_OBJ: return obj_type_name(v);
  }
  return "object";
}
