/* print.c: JAX's jaxpr printer (core.pp_toplevel_jaxpr and friends).
 *
 * Docs are built in the order JAX builds them, because building a var's doc
 * is what names it.  The top-level jaxpr and each hoisted one are streamed:
 * their equations are built, laid out and dropped one at a time, so a
 * program of any size prints in bounded memory.  Everything nested in an
 * equation is small (a nested jaxpr of more than ten equations is hoisted).
 */
#include "text/print.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prims/prim.h"
#include "text/doc.h"
#include "text/print_val.h"
#include "util/intern.h"

#define NAME_UNDERSCORE UINT32_MAX
#define WIDTH 80
#define MAX_INLINE_DEPTH 100

typedef struct Shared {
  const SrJaxpr *j;
  int count, order, expanded, marked;
  int desc_marked; /* mark_descendants has run on it */
  int depth;       /* how deep it is written inside others (0: at top) */
  const SrJaxpr *parent; /* the first jaxpr found holding it */
  const char *name; /* from the first named equation that holds it */
  const char *final_name;
} Shared;

typedef struct Pr {
  SrArena *a;     /* docs of the chunk being printed */
  SrArena *perm;  /* names, kept for the whole print */
  uint32_t gen;
  uint32_t counter;
  Shared *tab;    /* jaxpr -> Shared, open addressing */
  size_t cap, n;
  size_t inline_left; /* nested jaxprs it may still write out */
  const SrJaxpr *top;  /* the jaxpr printed, whose unused outputs are `_` */
  uint8_t *top_used;   /* by var id: read by an equation or returned */
  const SrJaxpr **subs; /* eqn_subjaxprs' answer */
  size_t subcap;
  uint32_t *skip;  /* counters of names that shared jaxprs use, sorted */
  size_t nskip, iskip;
  SrFmt f;
} Pr;

static uint32_t print_generation;

/* ---- docs that never change ----
 *
 * Shared by every equation of every print: docs are immutable once built,
 * so a doc may appear in many places (a DAG), which saves building the
 * same brackets and breaks a million times. */

#define TEXT_DOC(s) {SR_DOC_TEXT, 0, sizeof(s) - 1, .t = {s, sizeof(s) - 1}}
#define BRK_DOC(s) {SR_DOC_BRK, 0, sizeof(s) - 1, .t = {s, sizeof(s) - 1}}

static SrDoc d_space = TEXT_DOC(" "), d_equals = TEXT_DOC(" = "), d_lparen = TEXT_DOC("("),
             d_rparen = TEXT_DOC(")"), d_comma_rparen = TEXT_DOC(",)"), d_comma = TEXT_DOC(","),
             d_lbracket = TEXT_DOC("["), d_rbracket = TEXT_DOC("]"), d_open = TEXT_DOC("{ "),
             d_lambda = TEXT_DOC("lambda "), d_semi = TEXT_DOC("; "), d_dot = TEXT_DOC(". "),
             d_let = TEXT_DOC("let"), d_in = TEXT_DOC("in "), d_close = TEXT_DOC(" }");
static SrDoc b_space = BRK_DOC(" "), b_empty = BRK_DOC(""), b_semi = BRK_DOC("; ");
/* pp_vars' separators: G(B(" ")) and T(",") + G(B(" ")) */
static SrDoc d_sep = {SR_DOC_GROUP, 0, 1, .child = &b_space};
static SrDoc *comma_sep_kids[2] = {&d_comma, &d_sep};
static SrDoc d_comma_sep = {SR_DOC_CAT, 2, 2, .kids = comma_sep_kids};

/* ---- names ---- */

static size_t encode_name(uint32_t n, char *buf) {
  if (n == NAME_UNDERSCORE) {
    buf[0] = '_';
    buf[1] = 0;
    return 1;
  }
  char tmp[16];
  size_t k = 0;
  do {
    tmp[k++] = (char)('a' + n % 26);
    n /= 26;
  } while (n);
  for (size_t i = 0; i < k; i++) buf[i] = tmp[k - 1 - i];
  buf[k] = 0;
  return k;
}

/* The counter whose name is s, or UINT32_MAX if s is no variable name
   (only names of a-z without a leading 'a', as encode_name writes them). */
static uint32_t decode_name(const char *s) {
  if (!*s || (s[0] == 'a' && s[1])) return UINT32_MAX;
  uint64_t n = 0;
  for (; *s; s++) {
    if (*s < 'a' || *s > 'z') return UINT32_MAX;
    n = n * 26 + (uint64_t)(*s - 'a');
    if (n >= UINT32_MAX) return UINT32_MAX;
  }
  return (uint32_t)n;
}

/* JAX skips a candidate name equal to a shared jaxpr's name.  The counter
   only grows, so the names to skip are kept as sorted counters and passed
   one by one, instead of comparing every new name with every shared one. */
static uint32_t fresh_name(Pr *pr) {
  uint32_t n = pr->counter++;
  while (pr->iskip < pr->nskip && pr->skip[pr->iskip] < n) pr->iskip++;
  while (pr->iskip < pr->nskip && pr->skip[pr->iskip] == n) {
    n = pr->counter++;
    pr->iskip++;
  }
  return n;
}

static int is_named(Pr *pr, const SrVar *v) { return v->pp_gen == pr->gen; }

static uint32_t name_code(Pr *pr, SrVar *v) {
  if (!is_named(pr, v)) {
    v->pp_gen = pr->gen;
    v->pp_name = fresh_name(pr);
  }
  return v->pp_name;
}

/* A var's name, followed by `:type` for a binder. */
static SrDoc *var_doc(Pr *pr, SrVar *v, int typed) {
  const char *t = typed ? sr_type_short(v->type) : "";
  size_t tl = typed ? strlen(t) : 0;
  char *s = sr_arena_alloc(pr->a, 16 + tl + 1);
  size_t n = v->kind == SR_DROP ? encode_name(NAME_UNDERSCORE, s) : encode_name(name_code(pr, v), s);
  if (typed) {
    s[n++] = ':';
    memcpy(s + n, t, tl + 1);
    n += tl;
  }
  return sr_doc_text(pr->a, s, (uint32_t)n);
}

static SrDoc *lit_doc(Pr *pr, const SrVar *v) {
  if (v->text && v->lit_form == SR_LIT_TYPED && v->type) {
    /* as written: the text, ':' and the type, without a buffer */
    const char *t = sr_type_short(v->type);
    size_t vl = strlen(v->text), tl = strlen(t);
    char *s = sr_arena_alloc(pr->a, vl + 1 + tl + 1);
    memcpy(s, v->text, vl);
    s[vl] = ':';
    memcpy(s + vl + 1, t, tl + 1);
    return sr_doc_text(pr->a, s, (uint32_t)(vl + 1 + tl));
  }
  SrBuf b = SR_BUF_INIT;
  if (v->type && v->type->ndim > 0 && !v->text)
    sr_buf_puts(&b, "[...]");
  else
    sr_lit_value_text(&b, v);
  if (v->lit_form == SR_LIT_TYPED && v->type) {
    sr_buf_putc(&b, ':');
    sr_buf_puts(&b, sr_type_short(v->type));
  } else if (v->lit_form == SR_LIT_DTYPE_ONLY && v->type) {
    sr_buf_putc(&b, ':');
    sr_buf_puts(&b, sr_dtype_short(v->type->dtype));
  }
  SrDoc *d = sr_doc_text(pr->a, sr_arena_strndup(pr->a, b.p, b.len), (uint32_t)b.len);
  sr_buf_free(&b);
  return d;
}

static SrDoc *atom_doc(Pr *pr, SrVar *v, int typed) {
  return v->kind == SR_LIT ? lit_doc(pr, v) : var_doc(pr, v, typed);
}

/* pp_vars: N(2, G(join(T(sep) + G(B(" ")), items))) */
static SrDoc *vars_doc(Pr *pr, SrVar *const *vs, uint32_t n, int comma, int typed) {
  SrArena *a = pr->a;
  /* no vars is nil, one is the item alone: the same layout, fewer docs */
  if (n == 0) return NULL;
  if (n == 1) return sr_doc_nest(a, 2, sr_doc_group(a, atom_doc(pr, vs[0], typed)));
  SrDoc *small[32];
  size_t nk = 2 * (size_t)n - 1;
  SrDoc **kids = nk <= 32 ? small : sr_xmalloc(nk * sizeof *kids);
  int k = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i) kids[k++] = comma ? &d_comma_sep : &d_sep;
    /* one text for name:type: nothing can break inside it */
    kids[k++] = atom_doc(pr, vs[i], typed);
  }
  SrDoc *d = sr_doc_nest(a, 2, sr_doc_group(a, sr_doc_cat(a, k, kids)));
  if (kids != small) free(kids);
  return d;
}

/* ---- shared (hoisted) jaxprs ---- */

static size_t ptr_slot(const void *p) { return ((uintptr_t)p >> 4) * 2654435761u; }

static Shared *shared_get(Pr *pr, const SrJaxpr *j, int add) {
  if (add && 2 * (pr->n + 1) > pr->cap) {
    Shared *old = pr->tab;
    size_t oldcap = pr->cap;
    pr->cap = pr->cap ? 2 * pr->cap : 64;
    pr->tab = sr_xcalloc(pr->cap, sizeof *pr->tab);
    /* hashing scatters the touches over all of it: huge pages */
    sr_mem_huge(pr->tab, pr->cap * sizeof *pr->tab);
    pr->n = 0;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].j) {
        *shared_get(pr, old[i].j, 1) = old[i];
      }
    free(old);
  }
  if (!pr->cap) return NULL;
  for (size_t i = ptr_slot(j) & (pr->cap - 1);; i = (i + 1) & (pr->cap - 1)) {
    Shared *s = &pr->tab[i];
    if (s->j == j) return s;
    if (!s->j) {
      if (!add) return NULL;
      memset(s, 0, sizeof *s);
      s->j = j;
      s->order = -1;
      pr->n++;
      return s;
    }
  }
}

static const char *shared_name_of(Pr *pr, const SrJaxpr *j) {
  Shared *s = shared_get(pr, j, 0);
  return s ? s->final_name : NULL;
}

/* jaxprs_in_params: a jaxpr, or the jaxprs of a tuple.  Into pr->subs,
   which lasts until the next call. */
static const SrJaxpr **eqn_subjaxprs(Pr *pr, const SrEqn *e, size_t *n) {
  size_t k = 0;
  for (uint32_t i = 0; i < e->nparams; i++) {
    const SrVal *v = e->params[i].val;
    int m = v->kind == SR_V_JAXPR ? 1 : v->kind == SR_V_TUPLE ? v->seq.n : 0;
    if (k + (size_t)m > pr->subcap) {
      pr->subcap = 2 * (k + (size_t)m);
      pr->subs = sr_xrealloc(pr->subs, pr->subcap * sizeof *pr->subs);
    }
    if (v->kind == SR_V_JAXPR) pr->subs[k++] = v->jx.jaxpr;
    for (int t = 0; v->kind == SR_V_TUPLE && t < v->seq.n; t++)
      if (v->seq.items[t]->kind == SR_V_JAXPR) pr->subs[k++] = v->seq.items[t]->jx.jaxpr;
  }
  *n = k;
  return pr->subs;
}

static const char *eqn_name_param(Pr *pr, const SrEqn *e) {
  static const char *key;
  if (!key) key = sr_intern_cstr("name");
  const SrVal *v = sr_eqn_param(e, key);
  if (!v) return NULL;
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  /* Python's str.strip("<>") */
  size_t s = 0, n = b.len;
  while (s < n && (b.p[s] == '<' || b.p[s] == '>')) s++;
  while (n > s && (b.p[n - 1] == '<' || b.p[n - 1] == '>')) n--;
  const char *r = sr_arena_strndup(pr->perm, b.p + s, n - s);
  sr_buf_free(&b);
  return r;
}

/* Marks everything under j shared, without recursion (a chain of
   hoisted jaxprs can be as long as the text). */
static void mark_descendants(Pr *pr, const SrJaxpr *j) {
  size_t sp = 0, cap = 64;
  const SrJaxpr **stack = sr_xmalloc(cap * sizeof *stack);
  stack[sp++] = j;
  while (sp) {
    const SrJaxpr *u = stack[--sp];
    for (uint32_t k = 0; k < u->neqn; k++) {
      size_t n;
      const SrJaxpr **subs = eqn_subjaxprs(pr, &u->eqns[k], &n);
      for (size_t i = 0; i < n; i++) {
        Shared *s = shared_get(pr, subs[i], 1);
        if (s->marked) continue;
        s->marked = 1;
        if (sp == cap) stack = sr_xrealloc(stack, (cap *= 2) * sizeof *stack);
        stack[sp++] = subs[i];
      }
    }
  }
  free(stack);
}

/* Name -> how many shared jaxprs have taken it, for the f, f1, f2 rule. */
typedef struct NameCount {
  const char *name;
  uint32_t hash;
  int count;
} NameCount;

typedef struct NameCounts {
  NameCount *tab;
  size_t cap; /* a power of two, at least twice the names it will hold */
} NameCounts;

static void name_counts_init(NameCounts *nc, size_t n) {
  nc->cap = 16;
  while (nc->cap < 2 * n) nc->cap *= 2;
  nc->tab = sr_xcalloc(nc->cap, sizeof *nc->tab);
}

static int *name_count(NameCounts *nc, const char *name) {
  uint32_t h = sr_hash_bytes(name, strlen(name), SR_HASH_INIT);
  for (size_t i = h & (nc->cap - 1);; i = (i + 1) & (nc->cap - 1)) {
    NameCount *e = &nc->tab[i];
    if (!e->name) {
      *e = (NameCount){name, h, 0};
      return &e->count;
    }
    if (e->hash == h && strcmp(e->name, name) == 0) return &e->count;
  }
}

static int cmp_u32(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return (a > b) - (a < b);
}

/* _dropvars: top-level outputs never used afterwards print as `_`.  A var
   is used only after the equation that binds it, so "afterwards" is
   "anywhere": find_shared marks the uses in the walk over the top-level
   equations it makes anyway, and each equation names its unused outputs
   `_` just before it is printed, when its vars are in the cache (a pass
   of its own over a million equations cost a tenth of the printing). */
static void mark_used(Pr *pr, const SrEqn *e) {
  for (uint32_t i = 0; i < e->nin; i++)
    if (e->in[i]->kind != SR_LIT && e->in[i]->id < pr->top->nvars) pr->top_used[e->in[i]->id] = 1;
}

static void drop_unused(Pr *pr, const SrEqn *e) {
  for (uint32_t i = 0; i < e->nout; i++) {
    SrVar *v = e->out[i];
    if (v->id < pr->top->nvars && !pr->top_used[v->id]) {
      v->pp_gen = pr->gen;
      v->pp_name = NAME_UNDERSCORE;
    }
  }
}

/* Counts the uses of every nested jaxpr breadth first, as
   pp_toplevel_jaxpr does, and names those used more than once.  A jaxpr
   seen a second time makes everything under it shared too (JAX walks it
   again), which this computes without walking twice. */
static Shared **find_shared(Pr *pr, const SrJaxpr *top, size_t *nshared) {
  const SrJaxpr **q = NULL;
  size_t qh = 0, qt = 0, qcap = 0;
#define QPUSH(J)                                                  \
  do {                                                            \
    if (qt == qcap) {                                             \
      qcap = qcap ? 2 * qcap : 64;                                \
      q = sr_xrealloc(q, qcap * sizeof *q);                       \
    }                                                             \
    q[qt++] = (J);                                                \
  } while (0)
  QPUSH(top);
  int order = 0;
  while (qh < qt) {
    const SrJaxpr *j = q[qh++];
    Shared *s = shared_get(pr, j, 1);
    /* q[0 .. order) becomes the jaxprs in order of discovery (order <
       qh: only slots already read are written) */
    if (s->order < 0) {
      q[order] = j;
      s->order = order++;
    }
    s->count++;
    if (j != top && j->neqn > 10) s->count++;
    if (s->expanded) {
      /* once is enough: a jaxpr used a thousand times is walked twice
         (and s goes stale when marking grows the table) */
      if (!s->desc_marked) {
        s->desc_marked = 1;
        mark_descendants(pr, j);
      }
      continue;
    }
    s->expanded = 1;
    for (uint32_t k = 0; k < j->neqn; k++) {
      const SrEqn *e = &j->eqns[k];
      if (j == top && pr->top_used) mark_used(pr, e);
      size_t n;
      const SrJaxpr **subs = eqn_subjaxprs(pr, e, &n);
      if (!n) continue;
      const char *name = eqn_name_param(pr, e);
      for (size_t i = 0; i < n; i++) {
        QPUSH(subs[i]);
        Shared *c = shared_get(pr, subs[i], 1);
        if (!c->parent) c->parent = j;
        if (name && !c->name) c->name = name;
      }
    }
  }
#undef QPUSH
  Shared **out = sr_arena_alloc(pr->perm, ((size_t)order + 1) * sizeof *out);
  size_t n = 0;
  for (int i = 0; i < order; i++) out[n++] = shared_get(pr, q[i], 0);
  free(q);
  /* Written inside its holder, a jaxpr nests one deeper; past
     MAX_INLINE_DEPTH it is hoisted like a shared one, so that the text
     reads back (the parser refuses jaxprs nested 200 deep) and the
     printer's recursion stays shallow.  JAX would nest them all. */
  size_t nsh = 0;
  for (size_t i = 0; i < n; i++) {
    Shared *s = out[i];
    int shared = s->j != top && (s->count >= 2 || s->marked);
    if (s->j != top && !shared) {
      Shared *up = s->parent ? shared_get(pr, s->parent, 0) : NULL;
      s->depth = up ? up->depth + 1 : 1;
      if (s->depth > MAX_INLINE_DEPTH) shared = 1;
    }
    if (shared) {
      s->depth = 0;
      out[nsh++] = s;
    }
  }
  n = nsh;
  /* unique names: f, f1, f2, ... */
  NameCounts nc = {NULL, 0};
  name_counts_init(&nc, 2 * n + 1);
  size_t nskip = 0;
  pr->skip = sr_arena_alloc(pr->perm, (n + 1) * sizeof *pr->skip);
  for (size_t i = 0; i < n; i++) {
    const char *name = out[i]->name ? out[i]->name : "jaxpr";
    int *c = name_count(&nc, name);
    if (*c > 0) {
      char buf[32];
      snprintf(buf, sizeof buf, "%d", *c);
      (*c)++;
      size_t l = strlen(name);
      char *nn = sr_arena_alloc(pr->perm, l + strlen(buf) + 1);
      memcpy(nn, name, l);
      strcpy(nn + l, buf);
      name = nn;
      c = name_count(&nc, name);
    }
    (*c)++;
    out[i]->final_name = name;
    uint32_t code = decode_name(name);
    if (code != UINT32_MAX) pr->skip[nskip++] = code;
  }
  free(nc.tab);
  qsort(pr->skip, nskip, sizeof *pr->skip, cmp_u32);
  pr->nskip = nskip;
  *nshared = n;
  return out;
}

/* ---- params ---- */

static SrDoc *jaxpr_doc(Pr *pr, const SrJaxpr *j);

/* str(v), with ' at 0x' followed by hex digits masked as JAX does */
static SrDoc *str_doc(Pr *pr, const SrVal *v) {
  /* a parsed value prints its text: point at it when there is nothing to
     mask (sr_val_str prints the text of all but a str) */
  if (v->text && v->kind != SR_V_STR && !memmem(v->text, v->textlen, " at 0x", 6))
    return sr_doc_text(pr->a, v->text, v->textlen);
  SrBuf b = SR_BUF_INIT;
  sr_val_str(&b, v);
  for (char *p = b.p; p && (p = strstr(p, " at 0x")) != NULL;) {
    p += 6;
    while (isxdigit((unsigned char)*p)) *p++ = 'X';
  }
  SrDoc *d = sr_doc_text(pr->a, sr_arena_strndup(pr->a, sr_buf_str(&b), b.len), (uint32_t)b.len);
  sr_buf_free(&b);
  return d;
}

static int cmp_str_vals(const void *x, const void *y) {
  const SrVal *a = *(const SrVal *const *)x, *b = *(const SrVal *const *)y;
  if (a->kind == SR_V_STR && b->kind == SR_V_STR) {
    size_t n = a->str.n < b->str.n ? a->str.n : b->str.n;
    int c = memcmp(a->str.s, b->str.s, n);
    return c ? c : (a->str.n > b->str.n) - (a->str.n < b->str.n);
  }
  if (a->kind == SR_V_INT && b->kind == SR_V_INT) return (a->i > b->i) - (a->i < b->i);
  return 0;
}

/* str() of custom_linear_solve's params, _LinearSolveTuples: a NamedTuple
   is no plain tuple to pp_kv_pair, so JAX prints its repr, each jaxpr in
   it printed whole on its own (fresh names, lines from column 0). */
static SrDoc *linear_solve_doc(Pr *pr, const SrVal *v) {
  static const char *const fields[4] = {"matvec", "vecmat", "solve", "transpose_solve"};
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, "_LinearSolveTuple(");
  for (int i = 0; i < 4; i++) {
    sr_buf_printf(&b, "%s%s=", i ? ", " : "", fields[i]);
    sr_val_repr(&b, v->seq.items[i]);
  }
  sr_buf_putc(&b, ')');
  SrDoc *d = sr_doc_text(pr->a, sr_arena_strndup(pr->a, b.p, b.len), (uint32_t)b.len);
  sr_buf_free(&b);
  return d;
}

static SrDoc *value_doc(Pr *pr, const SrVal *v, int how) {
  SrArena *a = pr->a;
  if (v->kind == SR_V_JAXPR) return jaxpr_doc(pr, v->jx.jaxpr);
  if (how == 2 && !v->text && v->kind == SR_V_TUPLE && v->seq.n == 4) return linear_solve_doc(pr, v);
  if (v->kind == SR_V_TUPLE && v->seq.n > 0) {
    int all = 1;
    for (int i = 0; i < v->seq.n; i++) all &= v->seq.items[i]->kind == SR_V_JAXPR;
    if (all) {
      /* pp_jaxprs: G(N(2, T("(") + B("") + join(B(" "), jaxprs)) + B("") + T(")")) */
      SrDoc **kids = sr_arena_alloc(a, (2 * (size_t)v->seq.n + 2) * sizeof *kids);
      int k = 0;
      kids[k++] = &d_lparen;
      kids[k++] = &b_empty;
      for (int i = 0; i < v->seq.n; i++) {
        if (i) kids[k++] = &b_space;
        kids[k++] = jaxpr_doc(pr, v->seq.items[i]->jx.jaxpr);
      }
      SrDoc *inner = sr_doc_nest(a, 2, sr_doc_cat(a, k, kids));
      return sr_doc_group(a, sr_doc_cat3(a, inner, &b_empty, &d_rparen));
    }
  }
  if (v->kind == SR_V_FROZENSET && !v->text) {
    /* frozenset({...}) sorted, and frozenset({}) when empty */
    SrVal **items = sr_arena_memdup(a, v->seq.items, (size_t)v->seq.n * sizeof *items);
    qsort(items, (size_t)v->seq.n, sizeof *items, cmp_str_vals);
    SrBuf b = SR_BUF_INIT;
    sr_buf_puts(&b, "frozenset({");
    for (int i = 0; i < v->seq.n; i++) {
      if (i) sr_buf_puts(&b, ", ");
      sr_val_repr(&b, items[i]);
    }
    sr_buf_puts(&b, "})");
    SrDoc *d = sr_doc_text(a, sr_arena_strndup(a, b.p, b.len), (uint32_t)b.len);
    sr_buf_free(&b);
    return d;
  }
  if (how == 1 && !v->text && v->kind == SR_V_TUPLE && v->seq.n == 2) {
    /* dot_general prints its dimension numbers as lists */
    SrBuf b = SR_BUF_INIT;
    sr_buf_putc(&b, '(');
    for (int i = 0; i < 2; i++) {
      const SrVal *pair = v->seq.items[i];
      if (i) sr_buf_puts(&b, ", ");
      sr_buf_putc(&b, '(');
      for (int k = 0; sr_is_seq(pair) && k < pair->seq.n; k++) {
        const SrVal *dims = pair->seq.items[k];
        if (k) sr_buf_puts(&b, ", ");
        sr_buf_putc(&b, '[');
        for (int m = 0; sr_is_seq(dims) && m < dims->seq.n; m++) {
          if (m) sr_buf_puts(&b, ", ");
          sr_val_repr(&b, dims->seq.items[m]);
        }
        sr_buf_putc(&b, ']');
      }
      sr_buf_putc(&b, ')');
    }
    sr_buf_putc(&b, ')');
    SrDoc *d = sr_doc_text(a, sr_arena_strndup(a, b.p, b.len), (uint32_t)b.len);
    sr_buf_free(&b);
    return d;
  }
  return str_doc(pr, v);
}

static int is_none(const SrVal *v) { return v->kind == SR_V_NONE; }
static int is_false(const SrVal *v) { return v->kind == SR_V_BOOL && !v->i; }
static int is_word(const SrVal *v, const char *w) {
  return v->kind == SR_V_WORD && v->str.n == strlen(w) && memcmp(v->str.s, w, v->str.n) == 0;
}
static int falsy_zero(const SrVal *v) {
  return (v->kind == SR_V_INT || v->kind == SR_V_BOOL) && v->i == 0;
}

/* all(pred(x) for x in v) over a tuple or list; true when empty */
static int all_items(const SrVal *v, int (*pred)(const SrVal *)) {
  if (!sr_is_seq(v)) return 0;
  for (int i = 0; i < v->seq.n; i++)
    if (!pred(v->seq.items[i])) return 0;
  return 1;
}
static int is_unspecified(const SrVal *v) { return is_word(v, "UnspecifiedValue"); }
static int empty_seq(const SrVal *v) { return sr_is_seq(v) && v->seq.n == 0; }

static int key_is(const char *k, const char *w) { return strcmp(k, w) == 0; }

/* Whether the print rule drops this param (core.pp_eqn_rules). */
static int dropped(const SrPrim *prim, const char *k, const SrVal *v) {
  switch (prim->pp) {
  case SR_PP_ACCURACY: return key_is(k, "accuracy") && is_none(v);
  case SR_PP_MUL: return key_is(k, "out_dtype") && is_none(v);
  case SR_PP_CONVERT: return key_is(k, "sharding");
  case SR_PP_DOT_GENERAL: return is_none(v) || key_is(k, "out_sharding");
  case SR_PP_BROADCAST_IN_DIM:
    return key_is(k, "shape") || key_is(k, "sharding") ||
           (key_is(k, "broadcast_dimensions") && empty_seq(v));
  case SR_PP_RESHARD: return 1;
  case SR_PP_JIT:
  case SR_PP_PJIT:
    if (key_is(k, "inline")) return 1;
    if (key_is(k, "donated_invars")) return all_items(v, is_false);
    if (key_is(k, "in_shardings") || key_is(k, "out_shardings")) return all_items(v, is_unspecified);
    if (key_is(k, "in_layouts") || key_is(k, "out_layouts")) return all_items(v, is_none);
    if (key_is(k, "keep_unused")) return is_false(v);
    if (key_is(k, "ctx_mesh")) return v->kind == SR_V_MESH && v->mesh->n == 0;
    if (key_is(k, "compiler_options_kvs")) return empty_seq(v);
    return 0;
  case SR_PP_CUSTOM_JVP: return key_is(k, "num_consts") && falsy_zero(v);
  case SR_PP_CUSTOM_VJP:
    return (key_is(k, "num_consts") && falsy_zero(v)) || key_is(k, "out_trees");
  case SR_PP_CUSTOM_LIN: return key_is(k, "out_avals");
  default: return 0;
  }
}

static int name_first(const SrPrim *prim) {
  return prim->pp == SR_PP_JIT || prim->pp == SR_PP_PJIT || prim->pp == SR_PP_CUSTOM_JVP ||
         prim->pp == SR_PP_CUSTOM_VJP;
}

static int cmp_params(const void *x, const void *y) {
  const SrParam *a = *(const SrParam *const *)x, *b = *(const SrParam *const *)y;
  return strcmp(a->key, b->key);
}

static SrDoc *params_doc(Pr *pr, const SrEqn *e) {
  SrArena *a = pr->a;
  const SrParam **ps = sr_arena_alloc(a, (e->nparams + 1) * sizeof *ps);
  int n = 0;
  const SrParam *name = NULL;
  /* a parsed equation prints its params as they were written: the rules
     below are those of today's printer, and older texts predate some */
  int as_written = e->off != SR_NO_OFF;
  for (uint32_t i = 0; i < e->nparams && as_written; i++) ps[n++] = &e->params[i];
  for (uint32_t i = 0; i < e->nparams && !as_written; i++) {
    const SrParam *p = &e->params[i];
    if (dropped(e->prim, p->key, p->val)) continue;
    if (name_first(e->prim) && key_is(p->key, "name")) {
      name = p;
      continue;
    }
    ps[n++] = p;
  }
  if (!as_written) qsort(ps, (size_t)n, sizeof *ps, cmp_params);
  if (name) {
    memmove(ps + 1, ps, (size_t)n * sizeof *ps);
    ps[0] = name;
    n++;
  }
  if (n == 0) return NULL;
  SrDoc **kids = sr_arena_alloc(a, (2 * (size_t)n + 2) * sizeof *kids);
  int k = 0;
  kids[k++] = &d_lbracket;
  kids[k++] = &b_empty;
  for (int i = 0; i < n; i++) {
    if (i) kids[k++] = &b_space;
    size_t kl = strlen(ps[i]->key);
    char *kt = sr_arena_alloc(a, kl + 2);
    memcpy(kt, ps[i]->key, kl);
    kt[kl] = '=';
    kt[kl + 1] = 0;
    /* how: 1 dot_general's dimension numbers, 2 a _LinearSolveTuple */
    int how = 0;
    if (e->prim->pp == SR_PP_DOT_GENERAL && key_is(ps[i]->key, "dimension_numbers")) how = 1;
    if (e->prim->pp == SR_PP_LINEAR_SOLVE && (key_is(ps[i]->key, "const_lengths") || key_is(ps[i]->key, "jaxprs")))
      how = 2;
    SrDoc *key = sr_doc_text(a, kt, (uint32_t)kl + 1);
    kids[k++] = sr_doc_cat2(a, key, value_doc(pr, ps[i]->val, how));
  }
  SrDoc *inner = sr_doc_nest(a, 2, sr_doc_cat(a, k, kids));
  return sr_doc_group(a, sr_doc_cat3(a, inner, &b_empty, &d_rbracket));
}

/* ---- equations and jaxprs ---- */

/* context.suggest_same_var_names */
static void suggest_names(Pr *pr, SrVar *const *for_vars, uint32_t n, SrVar *const *like,
                          uint32_t m) {
  if (n != m) return;
  /* the outer vars already used, as a set of pointers (a jit may take
     thousands of operands) */
  size_t cap = 16;
  while (cap < 2 * (size_t)n) cap *= 2;
  const SrVar **used = sr_arena_alloc(pr->a, cap * sizeof *used);
  memset(used, 0, cap * sizeof *used);
  for (uint32_t i = 0; i < n; i++) {
    SrVar *f = for_vars[i], *l = like[i];
    if (l->kind == SR_LIT || f->kind == SR_LIT || is_named(pr, f)) continue;
    size_t h = ptr_slot(l) & (cap - 1);
    while (used[h] && used[h] != l) h = (h + 1) & (cap - 1);
    if (used[h]) continue;
    used[h] = l;
    f->pp_gen = pr->gen;
    f->pp_name = l->kind == SR_DROP ? NAME_UNDERSCORE : name_code(pr, l);
  }
}

/* state/primitives.py's pp_ref_transforms: x[...] or x[i,1:3] from the
   indexer of lax/state.c (the param `tree`) */
static SrDoc *ref_ix_doc(Pr *pr, const SrEqn *e) {
  static const char *tkey;
  if (!tkey) tkey = sr_intern_cstr("tree");
  SrBuf b = SR_BUF_INIT;
  SrDoc *ref = atom_doc(pr, e->in[0], 0);
  const SrVal *tree = sr_eqn_param(e, tkey);
  const SrType *rt = e->in[0]->type;
  if (!tree || !sr_is_seq(tree) || !rt || tree->seq.n != rt->ndim) {
    sr_buf_puts(&b, "[...]");
  } else {
    sr_buf_putc(&b, '[');
    for (int d = 0; d < tree->seq.n; d++) {
      const SrVal *it = tree->seq.items[d];
      if (d) sr_buf_putc(&b, ',');
      if (it->kind == SR_V_INT && it->i >= 0 && (uint32_t)it->i < e->nin) {
        SrVar *v = e->in[it->i];
        if (v->kind == SR_LIT) {
          sr_lit_value_text(&b, v);
        } else {
          char nm[24];
          size_t nl = encode_name(name_code(pr, v), nm);
          sr_buf_putn(&b, nm, nl);
        }
      } else if (sr_is_seq(it) && it->seq.n == 3) {
        /* _pp_slice: start:end, each left out at its default */
        int64_t start = it->seq.items[0]->i, end = start + it->seq.items[1]->i;
        if (start) sr_buf_printf(&b, "%lld", (long long)start);
        sr_buf_putc(&b, ':');
        if (end != rt->dims[d].size) sr_buf_printf(&b, "%lld", (long long)end);
      }
    }
    sr_buf_putc(&b, ']');
  }
  SrDoc *ix = sr_doc_text(pr->a, sr_arena_strndup(pr->a, b.p, b.len), (uint32_t)b.len);
  sr_buf_free(&b);
  return sr_doc_cat2(pr->a, ref, ix);
}

/* _get_pp_rule (y <- x[i]), _swap_pp_rule (x[i] <- v, or y, x[i] <- x[i], v
   when y is used) and _addupdate_pp_rule (x[i] += v) */
static SrDoc *state_eqn_doc(Pr *pr, const SrEqn *e) {
  SrArena *a = pr->a;
  SrDoc *xi = ref_ix_doc(pr, e);
  if (e->prim->id == SR_P_get && e->nout == 1)
    return sr_doc_cat3(a, vars_doc(pr, e->out, 1, 0, 1), sr_doc_textz(a, " <- "), xi);
  if (e->nin < 2) return xi;
  SrDoc *v = atom_doc(pr, e->in[1], 0);
  if (e->prim->id == SR_P_addupdate) return sr_doc_cat3(a, xi, sr_doc_textz(a, " += "), v);
  SrVar *y = e->nout == 1 ? e->out[0] : NULL;
  if (!y || y->kind == SR_DROP || (is_named(pr, y) && y->pp_name == NAME_UNDERSCORE))
    return sr_doc_cat3(a, xi, sr_doc_textz(a, " <- "), v);
  SrDoc *kids[6] = {vars_doc(pr, e->out, 1, 0, 1), sr_doc_textz(a, ", "), xi, sr_doc_textz(a, " <- "),
                    ref_ix_doc(pr, e), sr_doc_cat2(a, sr_doc_textz(a, ", "), v)};
  return sr_doc_cat(a, 6, kids);
}

static SrDoc *eqn_doc(Pr *pr, const SrEqn *e) {
  SrArena *a = pr->a;
  if (e->prim->pp == SR_PP_STATE) return state_eqn_doc(pr, e);
  if (e->prim->pp == SR_PP_JIT) {
    static const char *jkey;
    if (!jkey) jkey = sr_intern_cstr("jaxpr");
    const SrVal *jv = sr_eqn_param(e, jkey);
    if (jv && jv->kind == SR_V_JAXPR && !shared_name_of(pr, jv->jx.jaxpr)) {
      const SrJaxpr *body = jv->jx.jaxpr;
      suggest_names(pr, sr_args(body), sr_nargs(body), e->in, e->nin);
      suggest_names(pr, body->outvars, body->nout, e->out, e->nout);
    }
  }
  SrDoc *lhs = e->nout ? vars_doc(pr, e->out, e->nout, 0, 1) : NULL;
  SrDoc *kv = params_doc(pr, e);
  SrDoc *args = sr_doc_cat2(a, &d_space, vars_doc(pr, e->in, e->nin, 0, 0));
  SrDoc *name = sr_doc_textz(a, e->prim->name);
  if (!e->nout) return sr_doc_cat3(a, name, kv, args);
  SrDoc *kids[5] = {lhs, &d_equals, name, kv, args};
  return sr_doc_cat(a, 5, kids);
}

static SrDoc *outs_doc(Pr *pr, const SrJaxpr *j) {
  SrArena *a = pr->a;
  return sr_doc_cat3(a, &d_lparen, vars_doc(pr, j->outvars, j->nout, 1, 0),
                     j->nout == 1 ? &d_comma_rparen : &d_rparen);
}

static SrDoc *head_doc(Pr *pr, const SrJaxpr *j) {
  SrArena *a = pr->a;
  SrDoc *consts = vars_doc(pr, sr_constvars(j), j->nconst, 0, 1);
  SrDoc *args = vars_doc(pr, sr_args(j), sr_nargs(j), 0, 1);
  SrDoc *kids[7] = {&d_open, &d_lambda, consts, &d_semi, args, &d_dot, &d_let};
  return sr_doc_cat(a, 7, kids);
}

static SrDoc *effects_doc(Pr *pr, const SrJaxpr *j) {
  if (!j->effects) return NULL;
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, " : ");
  sr_buf_puts(&b, j->effects);
  SrDoc *d = sr_doc_text(pr->a, sr_arena_strndup(pr->a, b.p, b.len), (uint32_t)b.len);
  sr_buf_free(&b);
  return d;
}

/* pp_jaxpr_skeleton, given the equations' docs */
static SrDoc *skeleton(Pr *pr, SrDoc *head, SrDoc **eqns, uint32_t neqn, SrDoc *outs, SrDoc *eff) {
  SrArena *a = pr->a;
  SrDoc **kids = sr_arena_alloc(a, (2 * (size_t)neqn + 2) * sizeof *kids);
  int k = 0;
  kids[k++] = &b_space;
  for (uint32_t i = 0; i < neqn; i++) {
    if (i) kids[k++] = &b_semi;
    kids[k++] = eqns[i];
  }
  SrDoc *body = sr_doc_nest(a, 2, sr_doc_cat(a, k, kids));
  SrDoc *parts[6] = {head, body, &b_space, &d_in, outs, eff};
  SrDoc *g = sr_doc_group(a, sr_doc_nest(a, 2, sr_doc_cat(a, 6, parts)));
  return sr_doc_cat2(a, g, &d_close);
}

static SrDoc *jaxpr_doc(Pr *pr, const SrJaxpr *j) {
  const char *shared = shared_name_of(pr, j);
  if (shared) return sr_doc_textz(pr->a, shared);
  if (!pr->inline_left) return sr_doc_textz(pr->a, "{ ... }");
  pr->inline_left--;
  SrDoc *head = head_doc(pr, j);
  SrDoc **eqns = sr_arena_alloc(pr->a, (j->neqn + 1) * sizeof *eqns);
  for (uint32_t i = 0; i < j->neqn; i++) eqns[i] = eqn_doc(pr, &j->eqns[i]);
  SrDoc *outs = outs_doc(pr, j);
  return skeleton(pr, head, eqns, j->neqn, outs, effects_doc(pr, j));
}

/* A jaxpr at top level (the main one or a hoisted one), streamed. */
static void print_top_skeleton(Pr *pr, const SrJaxpr *j) {
  SrFmt *f = &pr->f;
  SrDoc *head = head_doc(pr, j);
  int64_t limit = WIDTH - f->k;
  int64_t w = sr_doc_flat(head);
  /* build equations until the whole group cannot fit */
  SrDoc **built = sr_xmalloc((j->neqn + 1) * sizeof *built);
  uint32_t nbuilt = 0;
  while (nbuilt < j->neqn && w <= limit) {
    if (j == pr->top) drop_unused(pr, &j->eqns[nbuilt]);
    built[nbuilt] = eqn_doc(pr, &j->eqns[nbuilt]);
    w += (nbuilt ? 2 : 1) + sr_doc_flat(built[nbuilt]);
    nbuilt++;
  }
  if (!j->neqn) w += 1;
  SrDoc *outs = NULL, *eff = NULL;
  if (nbuilt == j->neqn && w <= limit) {
    outs = outs_doc(pr, j);
    eff = effects_doc(pr, j);
    w += 1 + 3 + sr_doc_flat(outs) + sr_doc_flat(eff);
    if (w <= limit) {
      sr_fmt(f, skeleton(pr, head, built, nbuilt, outs, eff), 0, SR_MODE_BREAK);
      free(built);
      return;
    }
  }
  /* the skeleton group breaks: each equation on its own line */
  sr_fmt(f, head, 2, SR_MODE_BREAK);
  for (uint32_t i = 0; i < j->neqn; i++) {
    if (i >= nbuilt && j == pr->top) drop_unused(pr, &j->eqns[i]);
    SrDoc *d = i < nbuilt ? built[i] : eqn_doc(pr, &j->eqns[i]);
    sr_fmt_brk(f, " ", 4, SR_MODE_BREAK);
    sr_fmt(f, d, 4, SR_MODE_BREAK);
    if (i + 1 >= nbuilt) {
      /* the docs built so far are laid out; outs is rebuilt below, under
         the names it already has */
      sr_arena_reset(pr->a);
      outs = eff = NULL;
    }
  }
  if (!j->neqn) sr_fmt_brk(f, " ", 4, SR_MODE_BREAK);
  if (!outs) {
    outs = outs_doc(pr, j);
    eff = effects_doc(pr, j);
  }
  sr_fmt_brk(f, " ", 2, SR_MODE_BREAK);
  sr_fmt_text(f, "in ", 3);
  sr_fmt(f, outs, 2, SR_MODE_BREAK);
  sr_fmt(f, eff, 2, SR_MODE_BREAK);
  sr_fmt_text(f, " }", 2);
  free(built);
}

static void pr_init(Pr *pr, SrBuf *out) {
  memset(pr, 0, sizeof *pr);
  pr->a = sr_arena_new();
  pr->perm = sr_arena_new();
  pr->gen = ++print_generation;
  pr->inline_left = SIZE_MAX;
  sr_fmt_init(&pr->f, out, WIDTH);
}

static void pr_free(Pr *pr) {
  sr_arena_free(pr->a);
  sr_arena_free(pr->perm);
  free(pr->tab);
  free(pr->subs);
  free(pr->top_used);
  sr_fmt_free(&pr->f);
}

void sr_print_jaxpr(SrBuf *out, const SrJaxpr *j) {
  Pr pr;
  pr_init(&pr, out);
  /* a program read from a text prints to about as much: room for that
     now, rather than doubling the buffer (and faulting its pages) bit by
     bit */
  if (j->prog && j->prog->src && j->prog->top == j) sr_buf_grow(out, j->prog->src->len + 64);
  pr.f.k = 0;
  pr.top = j;
  pr.top_used = sr_xcalloc(j->nvars + 1, 1);
  for (uint32_t i = 0; i < j->nout; i++)
    if (j->outvars[i]->kind != SR_LIT && j->outvars[i]->id < j->nvars) pr.top_used[j->outvars[i]->id] = 1;
  size_t nshared;
  Shared **shared = find_shared(&pr, j, &nshared);
  for (size_t i = 0; i < nshared; i++) {
    sr_fmt_text(&pr.f, "let ", 4);
    sr_fmt_text(&pr.f, shared[i]->final_name, strlen(shared[i]->final_name));
    sr_fmt_text(&pr.f, " = ", 3);
    print_top_skeleton(&pr, shared[i]->j);
    sr_fmt_text(&pr.f, " in", 3);
    sr_fmt_brk(&pr.f, " ", 0, SR_MODE_BREAK);
    sr_arena_reset(pr.a);
  }
  print_top_skeleton(&pr, j);
  pr_free(&pr);
}

void sr_print_eqn(SrBuf *out, const SrEqn *e) {
  Pr pr;
  pr_init(&pr, out);
  /* Nothing is hoisted here, as in JAX's repr of an equation, so a jaxpr
     used twice at each of n levels would be written 2^n times: past a
     bound, nested jaxprs are elided. */
  pr.inline_left = 1000;
  size_t start = out->len;
  sr_fmt(&pr.f, eqn_doc(&pr, e), 0, SR_MODE_BREAK);
  while (out->len > start && out->p[out->len - 1] == ' ') out->p[--out->len] = 0;
  pr_free(&pr);
}
