/* parse.c: a recursive-descent parser for printed jaxprs.
 *
 * One pass over the text, no token array.  Equation boundaries follow the
 * printer: `;` in the one-line form; in the multi-line form a new equation
 * starts with a binder (`name:type`) or a primitive with params
 * (`name[`), and otherwise with a line indented no deeper than the line the
 * current equation started on (operand lists wrap two columns deeper).
 */
#include "text/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prims/prim.h"
#include "util/intern.h"

enum { MAX_DEPTH = 200 }; /* param values nested in param values */

/* ---- scopes: name -> var, one per { lambda ... } ----
 *
 * JAX names variables by a counter written in base 26 (a..z, ba, bb, ...),
 * in print order, so the names of a printed program are small numbers that
 * mostly come in order.  Those names live in one array indexed by their
 * number, shared by all scopes: binding and looking up touch memory in
 * order, where a hash table of a million names would miss the cache on
 * every access.  A slot records the scope that bound it (every
 * { lambda ... } is closed and sees no outer names); an inner scope that
 * rebinds an outer name logs the outer binding and puts it back on exit.
 * Other names (`_`, hand-written ones, numbers beyond the array's bound)
 * go to a small hash table of the scope's own. */

typedef struct Slot {
  SrVar *var;
  uint32_t scope; /* the scope that bound it */
} Slot;

typedef struct Undo {
  uint32_t code;
  Slot old;
} Undo;

typedef struct ScopeEnt {
  const char *name;
  uint32_t len, hash;
  SrVar *var;
} ScopeEnt;

typedef struct Scope {
  uint32_t id;
  uint32_t nvars; /* binders so far */
  size_t undo_base;
  ScopeEnt *tab; /* other names; NULL until one comes */
  size_t cap, n;
  /* the last `_` binder and whether it was read, to mark unused ones as
     drop vars */
  SrVar *under;
  int under_used;
} Scope;

/* Text -> value, for types and param values that a program writes over
   and over: looking the text up is cheaper than parsing it again, and
   equal param texts then share one immortal value. */
typedef struct MemoEnt {
  const char *s;
  uint32_t len, hash;
  const void *val;
} MemoEnt;

typedef struct Memo {
  MemoEnt *tab;
  size_t cap, n;
} Memo;

#define NO_DEF SIZE_MAX

typedef struct Def {
  const char *name;
  size_t len, off;
  SrJaxpr *j;
  int depth; /* how deep its own text nests jaxprs (1: none inside) */
} Def;

typedef struct Parser {
  SrSrc *src;
  const char *s;
  size_t len, pos;
  SrProgram *prog;
  SrArena *a;
  SrDiags *d;
  const SrMesh *mesh; /* the mesh shape types index, or NULL */
  Scope *scope;
  size_t bol;         /* a line start at or before the text read so far */
  uint32_t nscopes;
  Slot *slots;        /* names by number (see scopes above) */
  size_t nslots, maxslots;
  Undo *undo;
  size_t nundo, capundo;
  Memo types, values, lits;
  Memo defnames; /* hoisted jaxprs' names -> index in defs + 1 */
  int depth, maxdepth; /* jaxprs open now, and the most since reset */
  SrVar **vs; /* operand/binder stack */
  size_t vn, vcap;
  SrEqn *es;  /* equation stack */
  size_t en, ecap;
  Def *defs;
  size_t ndefs, capdefs;
  SrVal **refs; /* JAXPR_REF params to resolve at the end */
  size_t *ref_owner; /* the def whose text holds each, or NO_DEF */
  int *ref_depth;    /* how deep in its owner's text each stands */
  size_t nrefs, caprefs;
  size_t cur_def;    /* the def being parsed, or NO_DEF */
} Parser;

/* ASCII identifiers whatever the locale, by table: scanning names is the
   parser's innermost loop.  Bit 1: may start one; bit 2: may continue. */
static const unsigned char ident_class[256] = {
  ['A' ... 'Z'] = 3, ['a' ... 'z'] = 3, ['_'] = 3, ['0' ... '9'] = 2,
};
/* c is a byte, or -1 (peek at the end) */
static int is_ident_start(int c) { return (unsigned)c < 256 && (ident_class[c] & 1); }
static int is_ident_char(int c) { return (unsigned)c < 256 && (ident_class[c] & 2); }
static int is_blank(int c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f'; }

size_t sr_skip_blanks(const char *s, size_t len, size_t pos) {
  while (pos < len) {
    if (is_blank((unsigned char)s[pos])) {
      pos++;
    } else if (s[pos] == '#') {
      while (pos < len && s[pos] != '\n') pos++;
    } else {
      break;
    }
  }
  return pos;
}

static void skip(Parser *p) { p->pos = sr_skip_blanks(p->s, p->len, p->pos); }

static int peek(Parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

static size_t ident_end(const char *s, size_t len, size_t i) {
  if (i >= len || !is_ident_start((unsigned char)s[i])) return i;
  while (i < len && is_ident_char((unsigned char)s[i])) i++;
  return i;
}

/* Is the identifier at p->pos exactly `w`? */
static int at_word(Parser *p, const char *w) {
  size_t n = strlen(w);
  return p->len - p->pos >= n && memcmp(p->s + p->pos, w, n) == 0 &&
         (p->pos + n == p->len || !is_ident_char((unsigned char)p->s[p->pos + n]));
}

static void describe_here(Parser *p, char *buf, size_t n) {
  if (p->pos >= p->len) {
    snprintf(buf, n, "end of input");
    return;
  }
  size_t e = ident_end(p->s, p->len, p->pos);
  if (e > p->pos) {
    int k = (int)(e - p->pos > 24 ? 24 : e - p->pos);
    snprintf(buf, n, "'%.*s'", k, p->s + p->pos);
  } else {
    snprintf(buf, n, "'%c'", p->s[p->pos]);
  }
}

static int fail_at(Parser *p, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(Parser *p, size_t off, const char *fmt, ...) {
  if (off >= p->len || sr_skip_blanks(p->s, p->len, off) >= p->len)
    p->d->incomplete |= SR_INCOMPLETE_OPEN;
  va_list ap;
  va_start(ap, fmt);
  sr_verror(p->d, SR_E_PARSE, p->src, off, fmt, ap);
  va_end(ap);
  return -1;
}

/* "X expected" with what was found instead. */
static int expected(Parser *p, const char *what) {
  char here[64];
  describe_here(p, here, sizeof here);
  return fail_at(p, p->pos, "%s expected, found %s", what, here);
}

static int line_of(Parser *p, size_t off) {
  uint32_t line, col;
  sr_src_linecol(p->src, off, &line, &col);
  return (int)line;
}

/* Columns are asked for in text order, so the search for the start of
   the line stops at the last line start found: equations of a long
   one-line jaxpr would otherwise each scan the line back to its start. */
static size_t column_of(Parser *p, size_t off) {
  size_t from = p->bol <= off ? p->bol : 0;
  const char *nl = off > from ? memrchr(p->s + from, '\n', off - from) : NULL;
  p->bol = nl ? (size_t)(nl - p->s) + 1 : from;
  return off - p->bol;
}

/* ---- scopes ---- */

/* The counter JAX's printer turns into this name, or UINT32_MAX if it
   makes no such name (only a-z, no leading 'a' but in "a" itself). */
static uint32_t name_number(const char *s, size_t n) {
  if (n == 0 || n > 6 || (s[0] == 'a' && n > 1)) return UINT32_MAX;
  uint32_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < 'a' || s[i] > 'z') return UINT32_MAX;
    k = k * 26 + (uint32_t)(s[i] - 'a');
  }
  return k;
}

static void scope_open(Parser *p, Scope *sc) {
  memset(sc, 0, sizeof *sc);
  sc->id = ++p->nscopes;
  sc->undo_base = p->nundo;
}

static void mark_drop(Scope *sc) {
  if (sc->under && !sc->under_used) sc->under->kind = SR_DROP;
}

static void scope_close(Parser *p, Scope *sc) {
  mark_drop(sc);
  while (p->nundo > sc->undo_base) {
    Undo *u = &p->undo[--p->nundo];
    p->slots[u->code] = u->old;
  }
  free(sc->tab);
}

static ScopeEnt *scope_find(Scope *sc, const char *name, size_t len, uint32_t h) {
  for (size_t j = h & (sc->cap - 1);; j = (j + 1) & (sc->cap - 1)) {
    ScopeEnt *e = &sc->tab[j];
    if (!e->name) return e;
    if (e->hash == h && e->len == len && memcmp(e->name, name, len) == 0) return e;
  }
}

static void scope_bind_other(Scope *sc, const char *name, size_t len, SrVar *v) {
  if (2 * (sc->n + 1) > sc->cap) {
    ScopeEnt *old = sc->tab;
    size_t oldcap = sc->cap;
    sc->cap = sc->cap ? 2 * sc->cap : 16;
    sc->tab = sr_xcalloc(sc->cap, sizeof *sc->tab);
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].name) *scope_find(sc, old[i].name, old[i].len, old[i].hash) = old[i];
    free(old);
  }
  uint32_t h = sr_hash_bytes(name, len, SR_HASH_INIT);
  ScopeEnt *e = scope_find(sc, name, len, h);
  if (!e->name) sc->n++;
  *e = (ScopeEnt){name, (uint32_t)len, h, v};
}

static void scope_bind(Parser *p, const char *name, size_t len, SrVar *v) {
  Scope *sc = p->scope;
  if (len == 1 && name[0] == '_') {
    /* a rebound `_` that was never read is a dropped output */
    mark_drop(sc);
    sc->under = v;
    sc->under_used = 0;
  }
  uint32_t k = name_number(name, len);
  if (k >= p->maxslots) {
    scope_bind_other(sc, name, len, v);
    return;
  }
  if (k >= p->nslots) {
    size_t n = p->nslots ? p->nslots : 1024;
    while (n <= k) n *= 2;
    if (n > p->maxslots) n = p->maxslots;
    p->slots = sr_xrealloc(p->slots, n * sizeof *p->slots);
    if (n >= 1 << 17) sr_mem_huge(p->slots, n * sizeof *p->slots);
    memset(p->slots + p->nslots, 0, (n - p->nslots) * sizeof *p->slots);
    p->nslots = n;
  }
  Slot *sl = &p->slots[k];
  if (sl->var && sl->scope != sc->id) {
    if (p->nundo == p->capundo) {
      p->capundo = p->capundo ? 2 * p->capundo : 64;
      p->undo = sr_xrealloc(p->undo, p->capundo * sizeof *p->undo);
    }
    p->undo[p->nundo++] = (Undo){k, *sl};
  }
  *sl = (Slot){v, sc->id};
}

static SrVar *scope_lookup(Parser *p, const char *name, size_t len) {
  Scope *sc = p->scope;
  uint32_t k = name_number(name, len);
  if (k < p->maxslots) {
    if (k < p->nslots && p->slots[k].var && p->slots[k].scope == sc->id) return p->slots[k].var;
    return NULL;
  }
  if (!sc->tab) return NULL;
  ScopeEnt *e = scope_find(sc, name, len, sr_hash_bytes(name, len, SR_HASH_INIT));
  if (!e->name) return NULL;
  if (len == 1 && name[0] == '_') sc->under_used = 1;
  return e->var;
}

/* ---- memo tables ---- */

static MemoEnt *memo_find(Memo *m, const char *s, size_t len, uint32_t h) {
  for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
    MemoEnt *e = &m->tab[j];
    if (!e->s || (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)) return e;
  }
}

static const void *memo_get(Memo *m, const char *s, size_t len) {
  if (!m->cap) return NULL;
  return memo_find(m, s, len, sr_hash_bytes(s, len, SR_HASH_INIT))->val;
}

/* s must live as long as the table (it points into the source text). */
static void memo_put(Memo *m, const char *s, size_t len, const void *val) {
  if (len > UINT32_MAX) return;
  if (2 * (m->n + 1) > m->cap) {
    MemoEnt *old = m->tab;
    size_t oldcap = m->cap;
    m->cap = m->cap ? 2 * m->cap : 256;
    m->tab = sr_xcalloc(m->cap, sizeof *m->tab);
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].s) *memo_find(m, old[i].s, old[i].len, old[i].hash) = old[i];
    free(old);
  }
  uint32_t h = sr_hash_bytes(s, len, SR_HASH_INIT);
  MemoEnt *e = memo_find(m, s, len, h);
  if (!e->s) m->n++;
  *e = (MemoEnt){s, (uint32_t)len, h, val};
}

/* ---- stacks ---- */

static void vpush(Parser *p, SrVar *v) {
  if (p->vn == p->vcap) {
    p->vcap = p->vcap ? 2 * p->vcap : 256;
    p->vs = sr_xrealloc(p->vs, p->vcap * sizeof *p->vs);
    if (p->vcap >= 1 << 20) sr_mem_huge(p->vs, p->vcap * sizeof *p->vs);
  }
  p->vs[p->vn++] = v;
}

static SrVar **vtake(Parser *p, size_t base) {
  SrVar **arr = sr_arena_memdup(p->a, p->vs + base, (p->vn - base) * sizeof *arr);
  p->vn = base;
  return arr;
}

/* ---- types ---- */

static int parse_axis_name(Parser *p, int *ax) {
  size_t e = ident_end(p->s, p->len, p->pos);
  if (e == p->pos) {
    /* axis names may start with a digit in hand-written text */
    while (e < p->len && is_ident_char((unsigned char)p->s[e])) e++;
    if (e == p->pos) return expected(p, "a mesh axis name");
  }
  const char *name = sr_intern(p->s + p->pos, e - p->pos);
  int i = p->mesh ? sr_mesh_axis(p->mesh, name) : -1;
  if (i < 0) {
    SrBuf axes = SR_BUF_INIT;
    for (int k = 0; p->mesh && k < p->mesh->n; k++)
      sr_buf_printf(&axes, "%s%s", k ? ", " : "", p->mesh->names[k]);
    fail_at(p, p->pos, "unknown mesh axis '%s' (the mesh has %s)", name,
            axes.len ? axes.p : "no axes");
    sr_buf_free(&axes);
    return -1;
  }
  *ax = i;
  p->pos = e;
  return 0;
}

/* axis | "(" axis { "," axis } ")" -- into a set or an ordered list */
static int parse_axis_group(Parser *p, uint8_t *list, int *n, int max, SrAxes *set) {
  int k = 0;
  SrAxes seen = 0;
  int paren = peek(p) == '(';
  if (paren) p->pos++;
  for (;;) {
    int ax = 0;
    size_t at = p->pos;
    if (parse_axis_name(p, &ax) < 0) return -1;
    if (seen & (1u << ax))
      return fail_at(p, at, "mesh axis '%s' appears twice", p->mesh->names[ax]);
    seen |= 1u << ax;
    if (list) {
      if (k == max) return fail_at(p, at, "too many mesh axes on one dimension (at most %d)", max);
      list[k] = (uint8_t)ax;
    }
    k++;
    if (!paren) break;
    if (peek(p) == ',') {
      p->pos++;
      skip(p);
      continue;
    }
    if (peek(p) == ')') {
      p->pos++;
      break;
    }
    return expected(p, "',' or ')' in a tuple of mesh axes");
  }
  if (n) *n = k;
  if (set) *set = seen;
  return 0;
}

/* {V:a, U:(b,c), R:d} or <U:a> */
static int parse_type_suffix(Parser *p, SrTypeBuilder *b) {
  int close = peek(p) == '{' ? '}' : '>';
  size_t open_off = p->pos;
  p->pos++;
  for (;;) {
    skip(p);
    size_t e = ident_end(p->s, p->len, p->pos);
    size_t n = e - p->pos;
    const char *w = p->s + p->pos;
    SrAxes *dst;
    int kind = SR_UK_SUM;
    if (n == 1 && w[0] == 'V') dst = &b->varying;
    else if (n == 1 && w[0] == 'U') dst = &b->unreduced;
    else if (n == 5 && memcmp(w, "U_max", 5) == 0) dst = &b->unreduced, kind = SR_UK_MAX;
    else if (n == 5 && memcmp(w, "U_min", 5) == 0) dst = &b->unreduced, kind = SR_UK_MIN;
    else if (n == 1 && w[0] == 'R') dst = &b->reduced;
    else return expected(p, "'V:', 'U:', 'U_max:', 'U_min:' or 'R:' in a type's sharding suffix");
    p->pos = e;
    if (peek(p) != ':') return expected(p, "':'");
    p->pos++;
    SrAxes set;
    size_t at = p->pos;
    if (parse_axis_group(p, NULL, NULL, 0, &set) < 0) return -1;
    if (*dst) return fail_at(p, at, "the sharding suffix names this set twice");
    *dst = set;
    if (dst == &b->unreduced) b->ukind = (uint8_t)kind;
    skip(p);
    if (peek(p) == ',') {
      p->pos++;
      continue;
    }
    if (peek(p) == close) {
      p->pos++;
      break;
    }
    char what[80];
    snprintf(what, sizeof what, "',' or '%c' to close the sharding suffix opened at line %d",
             close, line_of(p, open_off));
    return expected(p, what);
  }
  if ((b->unreduced & b->reduced) || (b->varying & (b->unreduced | b->reduced)))
    return fail_at(p, open_off, "an axis cannot be in two of the varying, unreduced and "
                                "reduced sets");
  return 0;
}

/* Does a sharding suffix ({V:a} or the older <U:a>) start at i, after a
   type's shape? */
static int at_type_suffix(const char *s, size_t len, size_t i) {
  return i < len &&
         (s[i] == '{' || (s[i] == '<' && i + 2 < len && isupper((unsigned char)s[i + 1])));
}

/* Where the type text at i ends, found without parsing it: a dtype, an
   optional <...>, a [shape] and an optional suffix, all on one line; 0 for
   other forms, which are parsed without the memo.  It reads what follows
   the shape exactly as parse_type_text does, so equal spans parse alike. */
static size_t type_span(const char *s, size_t len, size_t i) {
  size_t e = ident_end(s, len, i);
  if (e == i) return 0;
  if (e < len && s[e] == '<') {
    while (e < len && s[e] != '>' && s[e] != '\n') e++;
    if (e >= len || s[e] != '>') return 0;
    e++;
  }
  if (e >= len || s[e] != '[') return 0;
  while (e < len && s[e] != ']' && s[e] != '\n') e++;
  if (e >= len || s[e] != ']') return 0;
  e++;
  if (at_type_suffix(s, len, e)) {
    char close = s[e] == '{' ? '}' : '>';
    while (e < len && s[e] != close && s[e] != '\n') e++;
    if (e >= len || s[e] != close) return 0;
    e++;
  }
  return e;
}

static int parse_type_text(Parser *p, const SrType **out, int allow_bare, int *bare);

/* dtype [ "<" memspace ">" ] "[" dims "]" [ suffix ]; with allow_bare, a
   dtype alone (an older literal form) is a scalar and *bare is set.  A type
   written before is looked up by its text. */
static int parse_type(Parser *p, const SrType **out, int allow_bare, int *bare) {
  size_t start = p->pos, span = type_span(p->s, p->len, p->pos);
  if (span) {
    const SrType *t = memo_get(&p->types, p->s + start, span - start);
    if (t) {
      p->pos = span;
      if (bare) *bare = 0;
      *out = t;
      return 0;
    }
  }
  if (parse_type_text(p, out, allow_bare, bare) < 0) return -1;
  if (span && p->pos == span) memo_put(&p->types, p->s + start, span - start, *out);
  return 0;
}

static int parse_type_text(Parser *p, const SrType **out, int allow_bare, int *bare) {
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.mesh = p->mesh;
  size_t start = p->pos;
  if (peek(p) == '*') {
    /* the 2021-2024 printer's type of a dropped output */
    p->pos++;
    b.dtype = sr_dtype_intern("*", 1);
    if (bare) *bare = 0;
    *out = sr_type_get(&b);
    return 0;
  }
  size_t e = ident_end(p->s, p->len, p->pos);
  if (e == p->pos) return expected(p, "a type");
  /* key<fry> is one dtype name */
  if (e - p->pos == 3 && memcmp(p->s + p->pos, "key", 3) == 0 && e < p->len && p->s[e] == '<') {
    size_t c = e;
    while (c < p->len && p->s[c] != '>' && p->s[c] != '\n') c++;
    if (c >= p->len || p->s[c] != '>') return fail_at(p, e, "'>' expected to close 'key<'");
    e = c + 1;
  }
  b.dtype = sr_dtype_intern(p->s + start, e - start);
  p->pos = e;
  if (peek(p) == '<') {
    size_t c = p->pos + 1;
    size_t we = ident_end(p->s, p->len, c);
    if (we == c || we >= p->len || p->s[we] != '>')
      return expected(p, "a memory space such as '<host>'");
    if (!(we - c == 6 && memcmp(p->s + c, "device", 6) == 0))
      b.mem = sr_intern(p->s + c, we - c);
    p->pos = we + 1;
  }
  if (peek(p) == '{')
    return fail_at(p, p->pos, "reference types such as '%.*s{...}' (Pallas state) are not "
                              "supported", (int)(p->pos - start), p->s + start);
  if (peek(p) != '[' && e - start == 3 && memcmp(p->s + start, "Tok", 3) == 0) {
    /* core.AbstractToken, printed Tok */
    if (bare) *bare = 0;
    *out = sr_type_get(&b);
    return 0;
  }
  if (peek(p) != '[') {
    if (allow_bare) {
      *bare = 1;
      *out = sr_type_get(&b);
      return 0;
    }
    return expected(p, "'[' to start the shape of a type");
  }
  size_t open = p->pos++;
  if (peek(p) != ']') {
    for (;;) {
      if (b.ndim == SR_MAX_RANK) return fail_at(p, p->pos, "too many dimensions (at most %d)", SR_MAX_RANK);
      SrDim *dim = &b.dims[b.ndim++];
      if (isdigit(peek(p))) {
        errno = 0;
        char *endp;
        long long v = strtoll(p->s + p->pos, &endp, 10);
        if (errno || v < 0) return fail_at(p, p->pos, "dimension size out of range");
        dim->size = v;
        p->pos = (size_t)(endp - p->s);
      } else if (is_ident_start(peek(p))) {
        size_t we = ident_end(p->s, p->len, p->pos);
        dim->size = -1;
        dim->sym = sr_intern(p->s + p->pos, we - p->pos);
        p->pos = we;
      } else {
        return expected(p, "a dimension size");
      }
      if (peek(p) == '@') {
        p->pos++;
        int n;
        if (parse_axis_group(p, dim->ax, &n, SR_MAX_DIM_AXES, NULL) < 0) return -1;
        dim->nax = (uint8_t)n;
      }
      if (peek(p) == ',') {
        p->pos++;
        skip(p);
        continue;
      }
      if (peek(p) == ';') {
        /* an old printer's named shape: f16[4,512;a:8] */
        size_t c = p->pos + 1;
        while (c < p->len && p->s[c] != ']' && p->s[c] != '\n') c++;
        if (c >= p->len || p->s[c] != ']') return fail_at(p, p->pos, "']' expected to close a named shape");
        b.named = sr_intern(p->s + p->pos + 1, c - p->pos - 1);
        p->pos = c;
      }
      if (peek(p) == ']') break;
      char what[64];
      snprintf(what, sizeof what, "',' or ']' to close the shape opened at line %d", line_of(p, open));
      return expected(p, what);
    }
  }
  p->pos++; /* ] */
  if (at_type_suffix(p->s, p->len, p->pos) && parse_type_suffix(p, &b) < 0) return -1;
  /* one axis may shard only one dimension */
  SrAxes used = b.unreduced | b.reduced | b.varying;
  for (int i = 0; i < b.ndim; i++)
    for (int j = 0; j < b.dims[i].nax; j++) {
      SrAxes bit = 1u << b.dims[i].ax[j];
      if (used & bit)
        return fail_at(p, start, "mesh axis '%s' is used more than once in type '%.*s'",
                       p->mesh->names[b.dims[i].ax[j]], (int)(p->pos - start), p->s + start);
      used |= bit;
    }
  if (bare) *bare = 0;
  *out = sr_type_get(&b);
  return 0;
}

/* ---- literals and atoms ---- */

static int is_literal_word(const char *w, size_t n) {
  return (n == 3 && (memcmp(w, "inf", 3) == 0 || memcmp(w, "nan", 3) == 0)) ||
         (n == 4 && memcmp(w, "True", 4) == 0) || (n == 5 && memcmp(w, "False", 5) == 0);
}

/* Does a literal start here? */
static int at_literal(Parser *p) {
  int c = peek(p);
  if (c < 0) return 0;
  if (isdigit(c) || c == '-' || c == '+' || c == '.' || c == '(' || c == '[') return 1;
  size_t e = ident_end(p->s, p->len, p->pos);
  return e > p->pos && is_literal_word(p->s + p->pos, e - p->pos);
}

static size_t scan_number(const char *s, size_t len, size_t i) {
  size_t st = i;
  if (i < len && (s[i] == '-' || s[i] == '+')) i++;
  if (i + 3 <= len && (memcmp(s + i, "inf", 3) == 0 || memcmp(s + i, "nan", 3) == 0)) return i + 3;
  while (i < len && isdigit((unsigned char)s[i])) i++;
  if (i < len && s[i] == '.') {
    i++;
    while (i < len && isdigit((unsigned char)s[i])) i++;
  }
  if (i > st && i < len && (s[i] == 'e' || s[i] == 'E')) {
    size_t k = i + 1;
    if (k < len && (s[k] == '+' || s[k] == '-')) k++;
    if (k < len && isdigit((unsigned char)s[k])) {
      while (k < len && isdigit((unsigned char)s[k])) k++;
      i = k;
    }
  }
  if (i < len && s[i] == 'j') i++;
  return i;
}

static int literal_value(Parser *p, SrVar *v, size_t start, size_t e);

static int parse_literal(Parser *p, SrVar **out) {
  size_t start = p->pos;
  const char *s = p->s;
  size_t e;
  if (peek(p) == '[') {
    if (p->pos + 5 > p->len || memcmp(s + p->pos, "[...]", 5) != 0)
      return expected(p, "an operand ('[...]' is the only array literal)");
    e = p->pos + 5;
  } else if (peek(p) == '(') {
    /* a complex literal: (1+2j) */
    e = p->pos + 1;
    while (e < p->len && s[e] != ')' && s[e] != '\n' && e - p->pos < 64) e++;
    if (e >= p->len || s[e] != ')') return expected(p, "an operand");
    e++;
  } else {
    size_t w = ident_end(s, p->len, p->pos);
    e = w > p->pos ? w : scan_number(s, p->len, p->pos);
  }
  if (e == start) return expected(p, "an operand");
  SrVar *v = SR_NEW(p->a, SrVar);
  const SrVar *seen = memo_get(&p->lits, s + start, e - start);
  if (seen) {
    /* the value of a literal written before: no strtod again */
    *v = *seen;
  } else {
    if (literal_value(p, v, start, e) < 0) return -1;
    memo_put(&p->lits, s + start, e - start, sr_arena_memdup(p->a, v, sizeof *v));
  }
  const char *t = v->text;
  p->pos = e;
  if (peek(p) == ':') {
    p->pos++;
    int bare;
    if (parse_type(p, &v->type, 1, &bare) < 0) return -1;
    v->lit_form = bare ? SR_LIT_DTYPE_ONLY : SR_LIT_TYPED;
    /* a typed integer literal of a float dtype holds a float */
    if (sr_dtype_is_inexact(v->type->dtype) && !strpbrk(t, ".eEnij(") && t[0] != '[')
      v->val.f = (double)v->val.i;
  } else {
    /* the 2021-2024 printer's: the type its text reads as, so that every
       later stage sees a typed literal */
    v->lit_form = SR_LIT_BARE;
    v->type = sr_lit_bare_type(t);
  }
  *out = v;
  return 0;
}

/* The kind, text and value of the literal written in [start, e). */
static int literal_value(Parser *p, SrVar *v, size_t start, size_t e) {
  v->kind = SR_LIT;
  v->text = sr_arena_strndup(p->a, p->s + start, e - start);
  const char *t = v->text;
  if (strcmp(t, "True") == 0 || strcmp(t, "False") == 0) {
    v->val.i = t[0] == 'T';
  } else if (t[0] == '(' || t[e - start - 1] == 'j') {
    /* complex: (re+imj) or imj */
    char *endp;
    const char *q = t[0] == '(' ? t + 1 : t;
    double re = 0, im;
    double x = strtod(q, &endp);
    if (*endp == 'j') {
      im = x;
    } else {
      re = x;
      im = strtod(endp, &endp);
      if (*endp != 'j') return fail_at(p, start, "malformed complex literal '%s'", t);
    }
    v->val.c[0] = re;
    v->val.c[1] = im;
  } else if (t[0] != '[') {
    char *endp;
    if (strpbrk(t, ".eEn") || strstr(t, "inf")) {
      v->val.f = strtod(t, &endp);
    } else {
      errno = 0;
      v->val.i = strtoll(t, &endp, 10);
      if (errno) v->val.f = strtod(t, &endp);
    }
    if (*endp) return fail_at(p, start, "malformed number '%s'", t);
  }
  return 0;
}

/* var | literal; e is ident_end at p->pos */
static int parse_atom(Parser *p, size_t e, SrVar **out) {
  if (e == p->pos) {
    if (at_literal(p)) return parse_literal(p, out);
    return expected(p, "an operand");
  }
  int litword = is_literal_word(p->s + p->pos, e - p->pos);
  /* JAX's name counter reaches `inf` and `nan` (after about 6000
     variables): a bound variable of that name, which an operand writes
     without a type, is the variable, not the literal */
  if (!litword || e >= p->len || p->s[e] != ':') {
    SrVar *v = scope_lookup(p, p->s + p->pos, e - p->pos);
    if (v) {
      p->pos = e;
      *out = v;
      return 0;
    }
    if (!litword)
      return fail_at(p, p->pos, "variable '%.*s' is not defined", (int)(e - p->pos), p->s + p->pos);
  }
  return parse_literal(p, out);
}

/* ---- param values ---- */

static int parse_jaxpr(Parser *p, SrJaxpr **out);

static int is_jaxpr_key(const char *k) {
  return strstr(k, "jaxpr") != NULL || strcmp(k, "branches") == 0;
}

/* The end of an opaque param value: the first blank run at bracket depth 0
   that is followed by `key=` or by the `]` closing the params. */
static size_t value_extent(const char *s, size_t len, size_t i) {
  int depth = 0;
  while (i < len) {
    char c = s[i];
    if (c == '\'' || c == '"') {
      size_t k = i + 1;
      while (k < len && s[k] != c && s[k] != '\n') k += s[k] == '\\' ? 2 : 1;
      i = k < len ? k + 1 : len;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      depth++;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) return i;
      depth--;
    } else if (depth == 0 && is_blank((unsigned char)c)) {
      size_t k = i;
      while (k < len && is_blank((unsigned char)s[k])) k++;
      if (k >= len || s[k] == ']') return i;
      size_t we = ident_end(s, len, k);
      if (we > k && we < len && s[we] == '=') return i;
      /* every blank of the run would find the same: go past it (a long
         run would otherwise cost its length squared) */
      i = k;
      continue;
    }
    i++;
  }
  return i;
}

/* A small parser for Python-style param values.  Returns NULL when the
   text is not of a form it knows; the caller then keeps it as a word. */
typedef struct PyP {
  const char *s;
  size_t len, pos;
  SrArena *a; /* NULL: counted values */
  int depth;
} PyP;

static SrVal *pv_value(PyP *q);

static void pv_skip(PyP *q) {
  while (q->pos < q->len && is_blank((unsigned char)q->s[q->pos])) q->pos++;
}

static int pv_peek(PyP *q) { return q->pos < q->len ? (unsigned char)q->s[q->pos] : -1; }

static void pv_free(PyP *q, SrVal *v) {
  if (!q->a) sr_unref(v);
}

/* a sequence of values up to `close`, for tuples, lists and sets */
static SrVal *pv_seq(PyP *q, SrValKind kind, int close, int *trailing_comma) {
  SrVal *v = sr_seq(q->a, kind, 0);
  *trailing_comma = 0;
  for (;;) {
    pv_skip(q);
    if (pv_peek(q) == close) {
      q->pos++;
      return v;
    }
    SrVal *item = pv_value(q);
    if (!item) break;
    sr_seq_push(q->a, v, item);
    pv_skip(q);
    *trailing_comma = 0;
    if (pv_peek(q) == ',') {
      q->pos++;
      *trailing_comma = 1;
      continue;
    }
    if (pv_peek(q) == close) {
      q->pos++;
      return v;
    }
    break;
  }
  pv_free(q, v);
  return NULL;
}

static const char *pv_name_of(SrVal *v) {
  if (v->kind == SR_V_STR || v->kind == SR_V_WORD) return sr_intern(v->str.s, v->str.n);
  return NULL;
}

/* P(...) / PartitionSpec(...) */
static SrVal *pv_spec(PyP *q) {
  SrSpec spec = {0};
  SrSpecEntry entries[SR_MAX_RANK];
  const char *names[SR_MAX_RANK * 4 + 2 * SR_MAX_AXES];
  const char *unred[SR_MAX_AXES], *red[SR_MAX_AXES];
  int nn = 0;
  spec.e = entries;
  spec.unreduced = unred;
  spec.reduced = red;
  SrVal *ok = NULL;
  for (;;) {
    pv_skip(q);
    if (pv_peek(q) == ')') {
      q->pos++;
      ok = sr_spec_val(q->a, &spec);
      break;
    }
    size_t we = ident_end(q->s, q->len, q->pos);
    if (we > q->pos && we < q->len && q->s[we] == '=') {
      size_t kn = we - q->pos;
      const char *k = q->s + q->pos;
      q->pos = we + 1;
      SrVal *val = pv_value(q);
      if (!val) break;
      int bad = 0;
      if ((kn == 9 && memcmp(k, "unreduced", 9) == 0) || (kn == 7 && memcmp(k, "reduced", 7) == 0)) {
        const char **dst = kn == 9 ? unred : red;
        int *cnt = kn == 9 ? &spec.nunreduced : &spec.nreduced;
        if (!sr_is_seq(val)) bad = 1;
        for (int i = 0; !bad && i < val->seq.n && *cnt < SR_MAX_AXES; i++) {
          const char *nm = pv_name_of(val->seq.items[i]);
          if (!nm) bad = 1;
          else dst[(*cnt)++] = nm;
        }
      } else if (kn == 14 && memcmp(k, "unreduced_kind", 14) == 0) {
        const char *nm = pv_name_of(val);
        if (nm == sr_intern_cstr("sum")) spec.ukind = SR_UK_SUM;
        else if (nm == sr_intern_cstr("max")) spec.ukind = SR_UK_MAX;
        else if (nm == sr_intern_cstr("min")) spec.ukind = SR_UK_MIN;
        else bad = 1;
      } else {
        bad = 1;
      }
      pv_free(q, val);
      if (bad) break;
    } else {
      SrVal *val = pv_value(q);
      if (!val || spec.n == SR_MAX_RANK) {
        if (val) pv_free(q, val);
        break;
      }
      SrSpecEntry *e = &entries[spec.n++];
      e->names = names + nn;
      e->n = 0;
      int bad = 0;
      if (val->kind == SR_V_NONE) {
      } else if (val->kind == SR_V_WORD && val->str.n == 13 &&
                 memcmp(val->str.s, "UNCONSTRAINED", 13) == 0) {
        names[nn++] = SR_SPEC_UNCONSTRAINED;
        e->n = 1;
      } else if (val->kind == SR_V_STR) {
        names[nn++] = pv_name_of(val);
        e->n = 1;
      } else if (val->kind == SR_V_TUPLE) {
        for (int i = 0; i < val->seq.n && nn < (int)(sizeof names / sizeof *names); i++) {
          const char *nm = val->seq.items[i]->kind == SR_V_STR ? pv_name_of(val->seq.items[i]) : NULL;
          if (!nm) bad = 1;
          else names[nn++] = nm, e->n++;
        }
      } else {
        bad = 1;
      }
      pv_free(q, val);
      if (bad) break;
    }
    pv_skip(q);
    if (pv_peek(q) == ',') q->pos++;
    else if (pv_peek(q) != ')') break;
  }
  if (spec.nunreduced && !spec.ukind) spec.ukind = SR_UK_SUM;
  return ok;
}

/* Mesh('X': 4, axis_types=(...)) / AbstractMesh(...) */
static SrVal *pv_mesh(PyP *q, int abstract) {
  SrMesh m;
  memset(&m, 0, sizeof m);
  m.abstract = (uint8_t)abstract;
  int ntypes = 0;
  for (;;) {
    pv_skip(q);
    if (pv_peek(q) == ')') {
      q->pos++;
      break;
    }
    size_t we = ident_end(q->s, q->len, q->pos);
    if (we > q->pos && we < q->len && q->s[we] == '=') {
      size_t kn = we - q->pos;
      const char *k = q->s + q->pos;
      q->pos = we + 1;
      SrVal *val = pv_value(q);
      if (!val) return NULL;
      int bad = 0;
      if (kn == 10 && memcmp(k, "axis_types", 10) == 0) {
        if (val->kind != SR_V_TUPLE) bad = 1;
        for (int i = 0; !bad && i < val->seq.n && i < SR_MAX_AXES; i++) {
          SrVal *t = val->seq.items[i];
          const char *w = t->kind == SR_V_WORD ? t->str.s : "";
          if (strncmp(w, "Explicit", 8) == 0) m.types[i] = SR_AXIS_EXPLICIT;
          else if (strncmp(w, "Auto", 4) == 0) m.types[i] = SR_AXIS_AUTO;
          else if (strncmp(w, "Manual", 6) == 0) m.types[i] = SR_AXIS_MANUAL;
          else bad = 1;
          ntypes = i + 1;
        }
      } else if (kn == 11 && memcmp(k, "device_kind", 11) == 0) {
        m.device_fields = 1;
      }
      pv_free(q, val);
      if (bad) return NULL;
    } else if (pv_peek(q) == '(' && abstract && m.n == 0) {
      /* AbstractMesh((), axis_types=()) */
      SrVal *val = pv_value(q);
      if (!val) return NULL;
      pv_free(q, val);
    } else {
      SrVal *key = pv_value(q);
      if (!key || key->kind != SR_V_STR || m.n == SR_MAX_AXES) {
        if (key) pv_free(q, key);
        return NULL;
      }
      m.names[m.n] = pv_name_of(key);
      pv_free(q, key);
      /* an axis named twice is no mesh (the value stays text) */
      for (int i = 0; i < m.n; i++)
        if (strcmp(m.names[i], m.names[m.n]) == 0) return NULL;
      pv_skip(q);
      if (pv_peek(q) != ':') return NULL;
      q->pos++;
      SrVal *size = pv_value(q);
      if (!size || size->kind != SR_V_INT || size->i <= 0) {
        if (size) pv_free(q, size);
        return NULL;
      }
      m.sizes[m.n++] = size->i;
      pv_free(q, size);
    }
    pv_skip(q);
    if (pv_peek(q) == ',') q->pos++;
    else if (pv_peek(q) != ')') return NULL;
  }
  if (ntypes != m.n) return NULL;
  /* nor is one whose device count does not fit in 64 bits */
  if (sr_mesh_size_of(m.sizes, m.n) < 0) return NULL;
  return sr_mesh_val(q->a, sr_mesh_intern(&m));
}

/* NamedSharding(mesh=..., spec=P(...), memory_kind=...) */
static SrVal *pv_sharding(PyP *q) {
  SrVal *mesh = NULL, *spec = NULL;
  const char *memkind = NULL;
  SrVal *res = NULL;
  for (;;) {
    pv_skip(q);
    if (pv_peek(q) == ')') {
      q->pos++;
      if (mesh && spec && mesh->kind == SR_V_MESH && spec->kind == SR_V_SPEC)
        res = sr_sharding_val(q->a, mesh->mesh, spec->spec, memkind);
      break;
    }
    size_t we = ident_end(q->s, q->len, q->pos);
    if (!(we > q->pos && we < q->len && q->s[we] == '=')) break;
    size_t kn = we - q->pos;
    const char *k = q->s + q->pos;
    q->pos = we + 1;
    SrVal *val = pv_value(q);
    if (!val) break;
    /* a key given twice: the last one counts (the first is freed) */
    if (kn == 4 && memcmp(k, "mesh", 4) == 0) {
      if (mesh) pv_free(q, mesh);
      mesh = val;
    } else if (kn == 4 && memcmp(k, "spec", 4) == 0) {
      if (spec) pv_free(q, spec);
      spec = val;
    } else {
      if (kn == 11 && memcmp(k, "memory_kind", 11) == 0 && val->kind == SR_V_WORD)
        memkind = sr_intern(val->str.s, val->str.n);
      pv_free(q, val);
    }
    pv_skip(q);
    if (pv_peek(q) == ',') q->pos++;
  }
  if (mesh) pv_free(q, mesh);
  if (spec) pv_free(q, spec);
  return res;
}

static SrVal *pv_value(PyP *q) {
  if (++q->depth > MAX_DEPTH) {
    q->depth--;
    return NULL;
  }
  pv_skip(q);
  SrVal *v = NULL;
  int c = pv_peek(q);
  size_t st = q->pos;
  int tc;
  if (c == '(') {
    q->pos++;
    v = pv_seq(q, SR_V_TUPLE, ')', &tc);
    /* (x) without a comma is x itself */
    if (v && v->seq.n == 1 && !tc) {
      SrVal *inner = sr_ref(v->seq.items[0]);
      pv_free(q, v);
      v = inner;
    }
  } else if (c == '[') {
    q->pos++;
    v = pv_seq(q, SR_V_LIST, ']', &tc);
  } else if (c == '{') {
    q->pos++;
    pv_skip(q);
    v = pv_seq(q, SR_V_SET, '}', &tc);
  } else if (c == '\'' || c == '"') {
    size_t k = q->pos + 1;
    SrBuf b = SR_BUF_INIT;
    while (k < q->len && q->s[k] != c) {
      if (q->s[k] == '\\' && k + 1 < q->len) {
        char e = q->s[k + 1];
        sr_buf_putc(&b, e == 'n' ? '\n' : e == 't' ? '\t' : e);
        k += 2;
      } else {
        sr_buf_putc(&b, q->s[k++]);
      }
    }
    if (k < q->len) {
      v = sr_str(q->a, sr_buf_str(&b), b.len);
      q->pos = k + 1;
    }
    sr_buf_free(&b);
  } else if (c == '-' || c == '+' || isdigit(c)) {
    size_t e = scan_number(q->s, q->len, q->pos);
    char tmp[64];
    size_t n = e - q->pos;
    if (n > 0 && n < sizeof tmp && q->s[e - 1] != 'j') {
      memcpy(tmp, q->s + q->pos, n);
      tmp[n] = 0;
      char *endp;
      if (strpbrk(tmp, ".eEn")) {
        v = sr_float(q->a, strtod(tmp, &endp));
      } else {
        errno = 0;
        long long x = strtoll(tmp, &endp, 10);
        v = errno ? NULL : sr_int(q->a, x);
      }
      if (v && *endp) {
        pv_free(q, v);
        v = NULL;
      }
      q->pos = e;
    }
  } else if (is_ident_start(c) || c == '<') {
    size_t e;
    if (c == '<') {
      /* <lambda>, <function f at 0x...>: up to the matching '>' */
      e = q->pos + 1;
      while (e < q->len && q->s[e] != '>' && q->s[e] != '\n') e++;
      if (e < q->len && q->s[e] == '>') e++;
    } else {
      e = q->pos;
      while (e < q->len && (is_ident_char((unsigned char)q->s[e]) || q->s[e] == '.')) e++;
    }
    const char *w = q->s + q->pos;
    size_t n = e - q->pos;
    q->pos = e;
    if (n == 4 && memcmp(w, "None", 4) == 0) v = sr_none();
    else if (n == 4 && memcmp(w, "True", 4) == 0) v = sr_bool(1);
    else if (n == 5 && memcmp(w, "False", 5) == 0) v = sr_bool(0);
    else if (pv_peek(q) == '(' && c != '<') {
      q->pos++;
      if ((n == 1 && w[0] == 'P') || (n == 13 && memcmp(w, "PartitionSpec", 13) == 0))
        v = pv_spec(q);
      else if (n == 4 && memcmp(w, "Mesh", 4) == 0)
        v = pv_mesh(q, 0);
      else if (n == 12 && memcmp(w, "AbstractMesh", 12) == 0)
        v = pv_mesh(q, 1);
      else if (n == 13 && memcmp(w, "NamedSharding", 13) == 0)
        v = pv_sharding(q);
      else if (n == 9 && memcmp(w, "frozenset", 9) == 0) {
        pv_skip(q);
        if (pv_peek(q) == '{') {
          q->pos++;
          v = pv_seq(q, SR_V_FROZENSET, '}', &tc);
        } else {
          v = sr_seq(q->a, SR_V_FROZENSET, 0);
        }
        pv_skip(q);
        if (v && pv_peek(q) == ')') {
          q->pos++;
        } else if (v) {
          pv_free(q, v);
          v = NULL;
        }
      }
    } else {
      v = sr_word(q->a, w, n);
    }
  }
  (void)st;
  q->depth--;
  return v;
}

SrVal *sr_parse_pyval(const char *s, size_t n) {
  PyP q = {s, n, 0, NULL, 0};
  SrVal *v = pv_value(&q);
  pv_skip(&q);
  if (!v || q.pos != n) {
    if (v) sr_unref(v);
    return sr_word(NULL, s, n);
  }
  return v;
}

/* A param value parsed from its text, keeping the text for printing. */
static SrVal *opaque_text_value(Parser *p, size_t st, size_t e);

static SrVal *opaque_value(Parser *p, size_t st, size_t e) {
  /* values are immortal and never changed, so equal texts share one */
  SrVal *v = (SrVal *)memo_get(&p->values, p->s + st, e - st);
  if (v) return v;
  v = opaque_text_value(p, st, e);
  memo_put(&p->values, p->s + st, e - st, v);
  return v;
}

static SrVal *opaque_text_value(Parser *p, size_t st, size_t e) {
  PyP q = {p->s + st, e - st, 0, p->a, 0};
  SrVal *v = pv_value(&q);
  pv_skip(&q);
  if (v && q.pos != e - st) v = NULL; /* arena values need no freeing */
  if (!v || v->kind == SR_V_NONE || v->kind == SR_V_BOOL || v->kind == SR_V_AXISTYPE) {
    /* the shared singletons must not carry text: use a private copy */
    SrVal *c = SR_NEW(p->a, SrVal);
    if (v) {
      *c = *v;
    } else {
      c->kind = SR_V_WORD;
      c->str.s = sr_arena_strndup(p->a, p->s + st, e - st);
      c->str.n = e - st;
    }
    c->rc = -1;
    v = c;
  }
  v->text = p->s + st;
  v->textlen = (uint32_t)(e - st);
  return v;
}

static SrVal *jaxpr_ref(Parser *p, size_t st, size_t e) {
  SrVal *v = SR_NEW(p->a, SrVal);
  v->rc = -1;
  v->kind = SR_V_JAXPR_REF;
  v->ref.name = sr_arena_strndup(p->a, p->s + st, e - st);
  v->ref.off = (uint32_t)st;
  if (p->nrefs == p->caprefs) {
    p->caprefs = p->caprefs ? 2 * p->caprefs : 16;
    p->refs = sr_xrealloc(p->refs, p->caprefs * sizeof *p->refs);
    p->ref_owner = sr_xrealloc(p->ref_owner, p->caprefs * sizeof *p->ref_owner);
    p->ref_depth = sr_xrealloc(p->ref_depth, p->caprefs * sizeof *p->ref_depth);
  }
  p->ref_owner[p->nrefs] = p->cur_def;
  p->ref_depth[p->nrefs] = p->depth;
  p->refs[p->nrefs++] = v;
  return v;
}

static int at_lambda(Parser *p, size_t i) {
  i = sr_skip_blanks(p->s, p->len, i);
  return i + 6 <= p->len && memcmp(p->s + i, "lambda", 6) == 0 &&
         (i + 6 == p->len || !is_ident_char((unsigned char)p->s[i + 6]));
}

static int param_value(Parser *p, const char *key, SrVal **out) {
  size_t st = p->pos;
  int c = peek(p);
  int jkey = is_jaxpr_key(key);
  if (c == '{' && at_lambda(p, p->pos + 1)) {
    SrJaxpr *j;
    if (parse_jaxpr(p, &j) < 0) return -1;
    *out = sr_jaxpr_val(p->a, j);
    return 0;
  }
  if (c == '(') {
    size_t i = sr_skip_blanks(p->s, p->len, p->pos + 1);
    int tuple_of_jaxprs = i < p->len && p->s[i] == '{' && at_lambda(p, i + 1);
    if (!tuple_of_jaxprs && jkey) {
      size_t we = ident_end(p->s, p->len, i);
      tuple_of_jaxprs = we > i && we < p->len && (is_blank((unsigned char)p->s[we]) || p->s[we] == ')');
    }
    if (tuple_of_jaxprs) {
      size_t open = p->pos++;
      SrVal *t = sr_seq(p->a, SR_V_TUPLE, 2);
      for (;;) {
        skip(p);
        if (peek(p) == ')') {
          p->pos++;
          break;
        }
        if (peek(p) == '{') {
          SrJaxpr *j;
          if (parse_jaxpr(p, &j) < 0) return -1;
          sr_seq_push(p->a, t, sr_jaxpr_val(p->a, j));
        } else {
          size_t we = ident_end(p->s, p->len, p->pos);
          if (we == p->pos) {
            char what[80];
            snprintf(what, sizeof what, "a jaxpr or ')' to close the tuple opened at line %d",
                     line_of(p, open));
            return expected(p, what);
          }
          sr_seq_push(p->a, t, jaxpr_ref(p, p->pos, we));
          p->pos = we;
        }
      }
      *out = t;
      return 0;
    }
  }
  size_t ie = ident_end(p->s, p->len, p->pos);
  int none = ie == p->pos + 4 && memcmp(p->s + p->pos, "None", 4) == 0;
  if (jkey && is_ident_start(c) && !none) {
    /* the name of a hoisted jaxpr; names come from functions' names, which
       may hold spaces ("unnamed function"); None is a jaxpr param's absent
       value (scatter's update_jaxpr=None) */
    size_t we = value_extent(p->s, p->len, p->pos);
    *out = jaxpr_ref(p, p->pos, we);
    p->pos = we;
    return 0;
  }
  size_t e = value_extent(p->s, p->len, p->pos);
  if (e == st) return expected(p, "a param value");
  *out = opaque_value(p, st, e);
  p->pos = e;
  return 0;
}

/* "[" key=value { key=value } "]" */
static int parse_params(Parser *p, SrParam **out, uint32_t *n) {
  size_t open = p->pos++;
  SrParam small[16], *ps = small;
  uint32_t np = 0, cap = 16;
  int rc = 0;
  for (;;) {
    skip(p);
    if (peek(p) == ']') {
      p->pos++;
      break;
    }
    size_t ke = ident_end(p->s, p->len, p->pos);
    if (ke == p->pos || ke >= p->len || p->s[ke] != '=') {
      char what[80];
      snprintf(what, sizeof what, "a param 'key=value' or ']' to close the params opened at line %d",
               line_of(p, open));
      rc = expected(p, what);
      break;
    }
    const char *key = sr_intern(p->s + p->pos, ke - p->pos);
    p->pos = ke + 1;
    SrVal *v = NULL;
    if (param_value(p, key, &v) < 0) {
      rc = -1;
      break;
    }
    if (np == cap) {
      /* past the few params on the stack */
      cap *= 2;
      SrParam *bigger = sr_xmalloc(cap * sizeof *bigger);
      memcpy(bigger, ps, np * sizeof *ps);
      if (ps != small) free(ps);
      ps = bigger;
    }
    ps[np++] = (SrParam){key, v};
  }
  if (rc == 0) {
    *out = sr_arena_memdup(p->a, ps, np * sizeof *ps);
    *n = np;
  }
  if (ps != small) free(ps);
  return rc;
}

/* ---- equations and jaxprs ---- */

static int at_in_keyword(Parser *p) {
  if (p->pos >= p->len || p->s[p->pos] != 'i' || !at_word(p, "in")) return 0;
  size_t i = sr_skip_blanks(p->s, p->len, p->pos + 2);
  return i < p->len && p->s[i] == '(';
}

/* Does the token here begin a new equation rather than continue the
   operands of the current one? */
static int at_eqn_start(Parser *p, size_t e) {
  if (e == p->pos) return 0;
  if (e < p->len && p->s[e] == '[') return 1;
  if (e < p->len && p->s[e] == ':') return !is_literal_word(p->s + p->pos, e - p->pos);
  return 0;
}

static int parse_binder(Parser *p, SrVar **out, const char **name, size_t *len) {
  size_t e = ident_end(p->s, p->len, p->pos);
  if (e == p->pos) return expected(p, "a variable 'name:type'");
  if (e >= p->len || p->s[e] != ':')
    return fail_at(p, e, "':' expected after variable '%.*s' (binders are written name:type "
                         "with no space)", (int)(e - p->pos), p->s + p->pos);
  *name = p->s + p->pos;
  *len = e - p->pos;
  p->pos = e + 1;
  SrVar *v = SR_NEW(p->a, SrVar);
  v->kind = SR_VAR;
  /* binders are numbered in the order they are written: the inputs, then
     each equation's outputs (numbering them here saves a second pass over
     vars that are no longer in the cache) */
  v->id = p->scope->nvars++;
  if (parse_type(p, &v->type, 0, NULL) < 0) return -1;
  *out = v;
  return 0;
}

/* binders up to `stop` (';' or '.'), bound at once */
static int parse_binders(Parser *p, int stop, const char *what) {
  for (;;) {
    skip(p);
    if (peek(p) == stop) {
      p->pos++;
      return 0;
    }
    if (!is_ident_start(peek(p))) {
      char buf[96];
      snprintf(buf, sizeof buf, "a binder 'name:type' or '%c' %s", stop, what);
      return expected(p, buf);
    }
    SrVar *v;
    const char *name;
    size_t len;
    if (parse_binder(p, &v, &name, &len) < 0) return -1;
    scope_bind(p, name, len, v);
    vpush(p, v);
  }
}

static int parse_eqn(Parser *p) {
  size_t start = p->pos;
  size_t col = column_of(p, start);
  size_t obase = p->vn;
  /* outputs: binders up to '=' (possibly none) */
  const char *names[64];
  size_t lens[64];
  uint32_t nout = 0;
  const char **namev = names;
  size_t *lenv = lens;
  uint32_t namecap = 64;
  int rc = 0;
  size_t we = ident_end(p->s, p->len, p->pos);
  if (we < p->len && p->s[we] == ':') {
    for (;;) {
      SrVar *v;
      if (nout == namecap) {
        namecap *= 2;
        const char **nv = sr_xmalloc(namecap * sizeof *nv);
        size_t *lv = sr_xmalloc(namecap * sizeof *lv);
        memcpy(nv, namev, nout * sizeof *nv);
        memcpy(lv, lenv, nout * sizeof *lv);
        if (namev != names) {
          free(namev);
          free(lenv);
        }
        namev = nv;
        lenv = lv;
      }
      if (parse_binder(p, &v, &namev[nout], &lenv[nout]) < 0) {
        rc = -1;
        goto done;
      }
      vpush(p, v);
      nout++;
      skip(p);
      if (peek(p) == '=') {
        p->pos++;
        skip(p);
        break;
      }
      if (!is_ident_start(peek(p))) {
        rc = expected(p, "'=' after the equation's binders");
        goto done;
      }
    }
  }
  /* primitive and params; a name may hold hyphens (scatter-add) */
  size_t pe = ident_end(p->s, p->len, p->pos);
  while (pe > p->pos && pe + 1 < p->len && p->s[pe] == '-' && is_ident_start((unsigned char)p->s[pe + 1]))
    pe = ident_end(p->s, p->len, pe + 1);
  if (pe == p->pos) {
    rc = expected(p, "a primitive name");
    goto done;
  }
  const SrPrim *prim = sr_prim_lookup(p->s + p->pos, pe - p->pos);
  p->pos = pe;
  SrParam *params = NULL;
  uint32_t nparams = 0;
  if (peek(p) == '[' && parse_params(p, &params, &nparams) < 0) {
    rc = -1;
    goto done;
  }
  /* operands */
  size_t ibase = p->vn;
  for (;;) {
    size_t before = p->pos;
    skip(p);
    int c = peek(p);
    if (c < 0 || c == ';' || c == '}' || c == ')') break;
    size_t e = ident_end(p->s, p->len, p->pos);
    if (at_in_keyword(p) || at_eqn_start(p, e)) break;
    int newline = memchr(p->s + before, '\n', p->pos - before) != NULL;
    if (newline && column_of(p, p->pos) <= col) break;
    SrVar *a;
    if (parse_atom(p, e, &a) < 0) {
      rc = -1;
      goto done;
    }
    vpush(p, a);
  }
  /* the outputs and the inputs, in one block */
  uint32_t nin = (uint32_t)(p->vn - ibase);
  SrVar **out = vtake(p, obase);
  SrVar **in = out + nout;
  for (uint32_t i = 0; i < nout; i++) scope_bind(p, namev[i], lenv[i], out[i]);
  if (p->en == p->ecap) {
    p->ecap = p->ecap ? 2 * p->ecap : 256;
    p->es = sr_xrealloc(p->es, p->ecap * sizeof *p->es);
    /* a program of a million equations: huge pages */
    if (p->ecap >= 1 << 16) sr_mem_huge(p->es, p->ecap * sizeof *p->es);
  }
  p->es[p->en++] = (SrEqn){prim, nin, nout, nparams, in, out, params, (uint32_t)start, NULL, NULL, NULL};
done:
  if (namev != names) {
    free(namev);
    free(lenv);
  }
  return rc;
}

/* "{" "lambda" binders ";" binders "." "let" eqns "in" outs [effects] "}" */
static int parse_jaxpr(Parser *p, SrJaxpr **out) {
  size_t open = p->pos;
  if (peek(p) != '{') return expected(p, "'{ lambda' to start a jaxpr");
  if (++p->depth > SR_JAXPR_MAX_DEPTH)
    return fail_at(p, open, "jaxprs nested too deeply (at most %d)", SR_JAXPR_MAX_DEPTH);
  if (p->depth > p->maxdepth) p->maxdepth = p->depth;
  p->pos++;
  skip(p);
  if (!at_word(p, "lambda")) return expected(p, "'lambda' after '{'");
  p->pos += 6;

  Scope sc, *outer = p->scope;
  scope_open(p, &sc);
  p->scope = &sc;
  size_t vbase = p->vn, ebase = p->en;
  int rc = -1;

  if (parse_binders(p, ';', "after the constvars") < 0) goto done;
  size_t nconst = p->vn - vbase;
  if (parse_binders(p, '.', "after the inputs") < 0) goto done;
  skip(p);
  if (!at_word(p, "let")) {
    expected(p, "'let' after the inputs' '.'");
    goto done;
  }
  p->pos += 3;
  for (;;) {
    skip(p);
    if (at_in_keyword(p)) break;
    if (peek(p) == ';') {
      p->pos++;
      continue;
    }
    if (peek(p) == '}' || peek(p) < 0 || !is_ident_start(peek(p))) {
      char what[96];
      /* the line number costs a scan of the text: only on errors */
      snprintf(what, sizeof what, "an equation or 'in' to close '{ lambda' at line %d",
               line_of(p, open));
      expected(p, what);
      goto done;
    }
    if (parse_eqn(p) < 0) goto done;
  }
  p->pos += 2;
  skip(p);
  size_t outs_open = p->pos;
  if (peek(p) != '(') {
    expected(p, "'(' to start the outputs after 'in'");
    goto done;
  }
  p->pos++;
  size_t obase = p->vn;
  for (;;) {
    skip(p);
    if (peek(p) == ')') {
      p->pos++;
      break;
    }
    SrVar *a;
    if (parse_atom(p, ident_end(p->s, p->len, p->pos), &a) < 0) goto done;
    vpush(p, a);
    skip(p);
    if (peek(p) == ',') {
      p->pos++;
      continue;
    }
    if (peek(p) == ')') {
      p->pos++;
      break;
    }
    char what[96];
    snprintf(what, sizeof what, "',' or ')' to close the outputs opened at line %d",
             line_of(p, outs_open));
    expected(p, what);
    goto done;
  }
  skip(p);
  const char *effects = NULL;
  if (peek(p) == ':') {
    p->pos++;
    skip(p);
    if (peek(p) != '{') {
      expected(p, "'{' to start the effects");
      goto done;
    }
    size_t st = p->pos;
    int depth = 0;
    while (p->pos < p->len) {
      char c = p->s[p->pos++];
      if (c == '{') depth++;
      else if (c == '}' && --depth == 0) break;
    }
    if (depth != 0) {
      fail_at(p, st, "'}' expected to close the effects");
      goto done;
    }
    effects = sr_arena_strndup(p->a, p->s + st, p->pos - st);
    skip(p);
  }
  if (peek(p) != '}') {
    char what[96];
    snprintf(what, sizeof what, "'}' to close '{ lambda' at line %d", line_of(p, open));
    expected(p, what);
    goto done;
  }
  p->pos++;

  SrJaxpr *j = SR_NEW(p->a, SrJaxpr);
  j->prog = p->prog;
  j->off = (uint32_t)open;
  j->effects = effects;
  j->nout = (uint32_t)(p->vn - obase);
  j->outvars = vtake(p, obase);
  j->nin = (uint32_t)(p->vn - vbase);
  j->nconst = (uint32_t)nconst;
  j->invars = vtake(p, vbase);
  j->neqn = (uint32_t)(p->en - ebase);
  if (ebase == 0 && j->neqn >= 1 << 14) {
    /* a big jaxpr at the bottom of the stack (the top-level one, or a
       hoisted one): the stack itself becomes its equations, rather than
       a copy of them; parsing goes on with a new stack */
    j->eqns = sr_arena_adopt(p->a, p->es, j->neqn * sizeof *j->eqns);
    p->ecap = 256;
    p->es = sr_xmalloc(p->ecap * sizeof *p->es);
  } else {
    j->eqns = sr_arena_memdup(p->a, p->es + ebase, j->neqn * sizeof *j->eqns);
  }
  p->en = ebase;
  j->nvars = sc.nvars;
  *out = j;
  rc = 0;
done:
  scope_close(p, &sc);
  p->scope = outer;
  p->depth--;
  if (rc < 0) {
    p->vn = vbase;
    p->en = ebase;
  }
  return rc;
}

/* ---- the program's mesh ---- */

/* A mesh printed in the text (shard_map's mesh=, jit's ctx_mesh=).  The
   whole text is searched, so memchr for the rare 'M' does the walking. */
static const SrMesh *text_mesh(const char *s, size_t len) {
  const char *q = s, *end = s + len;
  for (; (q = memchr(q, 'M', (size_t)(end - q))) != NULL; q++) {
    if ((size_t)(end - q) < 5 || memcmp(q, "Mesh(", 5) != 0) continue;
    size_t at = (size_t)(q - s);
    int abstract = at >= 8 && memcmp(q - 8, "Abstract", 8) == 0;
    size_t st = abstract ? at - 8 : at;
    if (st == 0 || !is_ident_char((unsigned char)s[st - 1])) {
      PyP pq = {s + st, len - st, 0, NULL, 0};
      SrVal *v = pv_value(&pq);
      if (v && v->kind == SR_V_MESH && v->mesh->n > 0) {
        /* a nested shard_map prints its mesh with the outer manual axes
           Manual: the program's own context has them Explicit */
        const SrMesh *m = v->mesh;
        uint8_t types[SR_MAX_AXES];
        memcpy(types, m->types, sizeof types);
        for (int i = 0; i < m->n; i++)
          if (types[i] == SR_AXIS_MANUAL) types[i] = SR_AXIS_EXPLICIT;
        m = sr_mesh_with_types(m, types);
        sr_unref(v);
        return m;
      }
      if (v) sr_unref(v);
    }
  }
  return NULL;
}

/* Without a mesh anywhere: the axes the types name, in order of first
   appearance, form an unsized mesh.  The text is searched with memchr once
   for each place that names axes ('@' in a shape, '{' or '<' after one),
   keeping the first offset of each name, and the offsets give the order. */
typedef struct FirstAxes {
  int n;
  const char *s[SR_MAX_AXES];
  size_t len[SR_MAX_AXES], off[SR_MAX_AXES];
} FirstAxes;

/* Keeps the SR_MAX_AXES names that appear first: a name seen earlier than
   the latest one kept takes its place. */
static void note_axis(FirstAxes *f, const char *text, const char *s, size_t n) {
  size_t off = (size_t)(s - text);
  int last = -1;
  for (int k = 0; k < f->n; k++) {
    if (f->len[k] == n && memcmp(f->s[k], s, n) == 0) {
      if (off < f->off[k]) f->off[k] = off;
      return;
    }
    if (last < 0 || f->off[k] > f->off[last]) last = k;
  }
  int k;
  if (f->n < SR_MAX_AXES) k = f->n++;
  else if (off < f->off[last]) k = last;
  else return;
  f->s[k] = s;
  f->len[k] = n;
  f->off[k] = off;
}

static size_t scan_axis_group(FirstAxes *f, const char *s, size_t len, size_t i) {
  int paren = i < len && s[i] == '(';
  if (paren) i++;
  for (;;) {
    size_t e = i;
    while (e < len && is_ident_char((unsigned char)s[e])) e++;
    if (e == i) return i;
    note_axis(f, s, s + i, e - i);
    i = e;
    if (!paren || i >= len || s[i] != ',') return i;
    i++;
  }
}

/* a type suffix {V:a, U:(b,c)}, from just after its '{' */
static void scan_suffix(FirstAxes *f, const char *s, size_t len, size_t k) {
  for (;;) {
    while (k < len && s[k] == ' ') k++;
    size_t e = k;
    while (e < len && is_ident_char((unsigned char)s[e])) e++;
    if (e == k || e >= len || s[e] != ':') return;
    k = scan_axis_group(f, s, len, e + 1);
    if (k >= len || s[k] != ',') return;
    k++;
  }
}

static const SrMesh *implicit_mesh(const char *s, size_t len) {
  FirstAxes f;
  f.n = 0;
  const char *end = s + len;
  for (const char *q = s; (q = memchr(q, '@', (size_t)(end - q))) != NULL; q++)
    if (q > s && q[-1] >= '0' && q[-1] <= '9') scan_axis_group(&f, s, len, (size_t)(q - s) + 1);
  for (const char *q = s; (q = memchr(q, '{', (size_t)(end - q))) != NULL; q++)
    if (q > s && q[-1] == ']') scan_suffix(&f, s, len, (size_t)(q - s) + 1);
  for (const char *q = s; (q = memchr(q, '<', (size_t)(end - q))) != NULL; q++)
    if (q > s && q[-1] == ']') scan_suffix(&f, s, len, (size_t)(q - s) + 1);
  if (f.n == 0) return NULL;
  /* in order of first appearance (at most SR_MAX_AXES: insertion sort) */
  for (int i = 1; i < f.n; i++)
    for (int k = i; k > 0 && f.off[k - 1] > f.off[k]; k--) {
      const char *ts = f.s[k];
      size_t tl = f.len[k], to = f.off[k];
      f.s[k] = f.s[k - 1], f.len[k] = f.len[k - 1], f.off[k] = f.off[k - 1];
      f.s[k - 1] = ts, f.len[k - 1] = tl, f.off[k - 1] = to;
    }
  SrMesh m;
  memset(&m, 0, sizeof m);
  for (int i = 0; i < f.n; i++) m.names[m.n++] = sr_intern(f.s[i], f.len[i]);
  m.abstract = 1;
  m.unsized = 1;
  return sr_mesh_intern(&m);
}

/* ---- hoisted jaxprs may not call themselves, nor nest too deeply ---- */

/* JAX cannot print a jaxpr that holds itself, and nothing could run one,
   but `let f = { ... jaxpr=f ... } in` says just that.  A depth-first walk
   of the calls between the hoisted jaxprs (ref i, written at where[i],
   goes from ref_owner[i] to target[i]) finds such a cycle, without
   recursion: the chain of lets can be as long as the text.

   The same walk bounds how deep the jaxprs nest through the lets, as
   parse_jaxpr bounds a text's own nesting: a chain of lets that each call
   the one before is a jaxpr nested as deep as the chain is long, and every
   pass over it (checker, printer, evaluator, autodiff) recurses that
   deep.  depth[u] is how deep def u nests, its calls followed: its own
   text's depth, or a call's place in that text plus the callee's depth. */
static int check_no_cycle(Parser *p, const size_t *target, const size_t *where) {
  size_t n = p->ndefs;
  /* the calls of each def, as a compressed adjacency list of refs */
  size_t *first = sr_xcalloc(n + 1, sizeof *first);
  size_t *edge = sr_xmalloc((p->nrefs + 1) * sizeof *edge);
  for (size_t i = 0; i < p->nrefs; i++)
    if (p->ref_owner[i] != NO_DEF) first[p->ref_owner[i] + 1]++;
  for (size_t k = 0; k < n; k++) first[k + 1] += first[k];
  size_t *fill = sr_xmalloc((n + 1) * sizeof *fill);
  memcpy(fill, first, (n + 1) * sizeof *fill);
  for (size_t i = 0; i < p->nrefs; i++)
    if (p->ref_owner[i] != NO_DEF) edge[fill[p->ref_owner[i]]++] = i;
  /* 0: not seen, 1: on the walk's path, 2: done */
  unsigned char *state = sr_xcalloc(n, 1);
  size_t *stack = sr_xmalloc((n + 1) * sizeof *stack), *next = fill;
  int *depth = sr_xmalloc((n + 1) * sizeof *depth);
  int rc = 0;
  for (size_t root = 0; root < n && rc == 0; root++) {
    if (state[root]) continue;
    size_t sp = 0;
    stack[sp++] = root;
    state[root] = 1;
    next[root] = first[root];
    while (sp && rc == 0) {
      size_t u = stack[sp - 1];
      if (next[u] == first[u + 1]) {
        /* its callees are done */
        depth[u] = p->defs[u].depth;
        for (size_t k = first[u]; k < first[u + 1] && rc == 0; k++) {
          size_t r = edge[k];
          int dr = p->ref_depth[r] + depth[target[r]];
          if (dr > SR_JAXPR_MAX_DEPTH)
            rc = fail_at(p, where[r], "jaxprs nested too deeply (at most %d)", SR_JAXPR_MAX_DEPTH);
          if (dr > depth[u]) depth[u] = dr;
        }
        state[u] = 2;
        sp--;
        continue;
      }
      size_t r = edge[next[u]++], w = target[r];
      if (state[w] == 1) {
        const Def *d = &p->defs[w];
        rc = fail_at(p, where[r],
                     "jaxpr '%.*s' calls itself%s: jaxprs cannot be recursive", (int)d->len,
                     d->name, w == u ? "" : " (through the jaxprs it calls)");
      } else if (state[w] == 0) {
        state[w] = 1;
        next[w] = first[w];
        stack[sp++] = w;
      }
    }
  }
  /* and the calls of the top-level jaxpr */
  for (size_t r = 0; r < p->nrefs && rc == 0; r++)
    if (p->ref_owner[r] == NO_DEF && p->ref_depth[r] + depth[target[r]] > SR_JAXPR_MAX_DEPTH)
      rc = fail_at(p, where[r], "jaxprs nested too deeply (at most %d)", SR_JAXPR_MAX_DEPTH);
  free(first);
  free(edge);
  free(fill);
  free(state);
  free(stack);
  free(depth);
  return rc;
}

/* ---- programs ---- */

int sr_parse_looks_like_jaxpr(const char *s, size_t len, size_t pos) {
  pos = sr_skip_blanks(s, len, pos);
  if (pos < len && s[pos] == '{') {
    size_t i = sr_skip_blanks(s, len, pos + 1);
    return i + 6 <= len && memcmp(s + i, "lambda", 6) == 0;
  }
  if (pos + 3 <= len && memcmp(s + pos, "let", 3) == 0 && pos + 3 < len && is_blank((unsigned char)s[pos + 3])) {
    size_t i = sr_skip_blanks(s, len, pos + 3);
    size_t e = ident_end(s, len, i);
    if (e == i) return 0;
    i = sr_skip_blanks(s, len, e);
    return i < len && s[i] == '=';
  }
  return 0;
}

/* Where the program at i probably ends: just after the '}' that closes
   the first brace group at depth 0 that no 'in' follows (the hoisted
   `let NAME = { ... } in` blocks come first).  Braces inside quotes do not
   count.  Each of the four characters is looked for with memchr, in a
   window that doubles each time it comes up empty, so the guess costs a
   memchr over the program, not over all the text after it. */
static size_t guess_program_end(const char *s, size_t len, size_t i) {
  static const char chars[4] = {'{', '}', '\'', '"'};
  const char *end = s + len, *q = s + i;
  /* next[k]: the next chars[k] at or after q, or, when found[k] is 0, a
     position before which there is none */
  const char *next[4] = {q, q, q, q};
  int found[4] = {0, 0, 0, 0};
  size_t window[4] = {4096, 4096, 4096, 4096};
  size_t depth = 0;
  for (;;) {
    int which = 0;
    for (int k = 0; k < 4; k++) {
      if (next[k] < q || (next[k] == q && !found[k])) {
        size_t n = (size_t)(end - q) < window[k] ? (size_t)(end - q) : window[k];
        const char *m = memchr(q, chars[k], n);
        found[k] = m != NULL;
        next[k] = m ? m : q + n;
        if (!m) window[k] *= 2;
      }
      if (next[k] < next[which]) which = k;
    }
    const char *at = next[which];
    if (at >= end) return len;
    if (!found[which]) {
      q = at; /* nothing before here: look further */
      continue;
    }
    if (which >= 2) {
      /* a quoted string, to its closing quote on the same line */
      const char *c = at + 1;
      while (c < end && *c != *at && *c != '\n') c += *c == '\\' ? 2 : 1;
      q = c < end ? c + 1 : end;
    } else if (which == 0) {
      depth++;
      q = at + 1;
    } else {
      q = at + 1;
      if (depth > 0 && --depth == 0) {
        size_t k = sr_skip_blanks(s, len, (size_t)(q - s));
        if (!(len - k >= 2 && s[k] == 'i' && s[k + 1] == 'n' &&
              (k + 2 == len || !is_ident_char((unsigned char)s[k + 2]))))
          return (size_t)(q - s);
      }
    }
  }
}

/* The mesh the types of a text index, and the program's mesh. */
typedef struct MeshPick {
  const SrMesh *mesh, *shape;
} MeshPick;

static MeshPick pick_mesh(const char *s, size_t n, const SrParseOpts *opts) {
  MeshPick r;
  const SrMesh *m = text_mesh(s, n);
  if (!m && opts && opts->mesh && opts->mesh->n) m = opts->mesh;
  if (m) {
    r.mesh = m;
    r.shape = sr_mesh_shape(m);
  } else {
    r.mesh = r.shape = implicit_mesh(s, n);
  }
  return r;
}

static SrProgram *parse_once(SrSrc *src, size_t start, size_t scan_end, const MeshPick *mp,
                             size_t *end, SrDiags *d);

SrProgram *sr_parse_program(SrSrc *src, size_t start, size_t *end,
                            const SrParseOpts *opts, SrDiags *d) {
  sr_prims_init();
  /* The mesh (a Mesh(...) printed in the text, else the axes the types
     name) and the check for NUL bytes come from a scan of the program's
     own text: scanning everything after it too, for each of the many
     programs of a file, would cost the file's size squared.  Where the
     program ends is first guessed; when the parse does not end there (or
     fails), it is done again over all the text from start. */
  size_t guess = guess_program_end(src->text, src->len, start);
  MeshPick mp = pick_mesh(src->text + start, guess - start, opts);
  SrDiags first = SR_DIAGS_INIT;
  size_t e = start;
  SrProgram *prog = parse_once(src, start, guess, &mp, &e, &first);
  if ((!prog || e != guess) && sr_skip_blanks(src->text, src->len, guess) < src->len) {
    if (prog) sr_program_unref(prog);
    sr_diags_clear(&first);
    mp = pick_mesh(src->text + start, src->len - start, opts);
    return parse_once(src, start, src->len, &mp, end, d);
  }
  sr_diags_move(d, &first);
  if (prog && end) *end = e;
  return prog;
}

/* One parse of the program at start, with the mesh mp; the text up to
   scan_end must hold no NUL byte. */
static SrProgram *parse_once(SrSrc *src, size_t start, size_t scan_end, const MeshPick *mp,
                             size_t *end, SrDiags *d) {
  Parser P;
  memset(&P, 0, sizeof P);
  Parser *p = &P;
  p->cur_def = NO_DEF;
  p->src = src;
  p->s = src->text;
  p->len = src->len;
  p->pos = start;
  p->d = d;
  p->prog = sr_program_new();
  p->prog->src = sr_src_ref(src);
  p->a = p->prog->arena;
  /* a printed program has fewer variables than a quarter of its bytes;
     larger name numbers (hand-written names) go to the hash tables, which
     bounds the name array by the text's size */
  p->maxslots = (p->len - start) / 4 + 64;
  if (p->maxslots > UINT32_MAX - 1) p->maxslots = UINT32_MAX - 1;
  /* the stacks exist from the start: `stack + base` on a NULL stack would
     be undefined even for an empty jaxpr */
  p->vcap = p->ecap = 256;
  p->vs = sr_xmalloc(p->vcap * sizeof *p->vs);
  p->es = sr_xmalloc(p->ecap * sizeof *p->es);

  p->mesh = mp->shape;
  p->prog->mesh = mp->mesh;

  int rc = 0;
  /* names, types and param values become C strings: a NUL byte would cut
     one short, and the printing would not read back */
  const char *nul = memchr(p->s + start, 0, scan_end - start);
  if (nul) rc = fail_at(p, (size_t)(nul - p->s), "a NUL byte in the text");
  skip(p);
  /* hoisted jaxprs: let NAME = { ... } in */
  while (rc == 0 && at_word(p, "let")) {
    size_t def_off = p->pos;
    p->pos += 3;
    skip(p);
    size_t ne = ident_end(p->s, p->len, p->pos);
    if (ne == p->pos) {
      rc = expected(p, "a name after 'let'");
      break;
    }
    /* a name with spaces runs up to " = {" */
    for (size_t k = ne; k < p->len && p->s[k] != '\n' && p->s[k] != '{'; k++)
      if (p->s[k] == '=') {
        size_t e = k;
        while (e > ne && is_blank((unsigned char)p->s[e - 1])) e--;
        ne = e;
        break;
      }
    Def def = {p->s + p->pos, ne - p->pos, def_off, NULL, 0};
    if (memo_get(&p->defnames, def.name, def.len)) {
      rc = fail_at(p, p->pos, "jaxpr '%.*s' is defined twice", (int)def.len, def.name);
      break;
    }
    p->pos = ne;
    skip(p);
    if (peek(p) != '=') {
      rc = expected(p, "'=' after 'let NAME'");
      break;
    }
    p->pos++;
    skip(p);
    p->cur_def = p->ndefs;
    p->maxdepth = 0;
    if (parse_jaxpr(p, &def.j) < 0) {
      rc = -1;
      break;
    }
    def.depth = p->maxdepth;
    p->cur_def = NO_DEF;
    skip(p);
    if (!at_word(p, "in")) {
      rc = expected(p, "'in' after a 'let NAME = { ... }' definition");
      break;
    }
    p->pos += 2;
    skip(p);
    if (p->ndefs == p->capdefs) {
      p->capdefs = p->capdefs ? 2 * p->capdefs : 8;
      p->defs = sr_xrealloc(p->defs, p->capdefs * sizeof *p->defs);
    }
    p->defs[p->ndefs++] = def;
    /* by name, as index + 1 (the array moves as it grows) */
    memo_put(&p->defnames, def.name, def.len, (const void *)(uintptr_t)p->ndefs);
  }
  if (rc == 0 && parse_jaxpr(p, &p->prog->top) < 0) rc = -1;
  /* resolve the names of hoisted jaxprs; they may be used before they are
     defined */
  size_t *target = sr_xmalloc((p->nrefs + 1) * sizeof *target);
  size_t *where = sr_xmalloc((p->nrefs + 1) * sizeof *where); /* ref.off, which resolving overwrites */
  for (size_t i = 0; rc == 0 && i < p->nrefs; i++) {
    SrVal *v = p->refs[i];
    uintptr_t k = (uintptr_t)memo_get(&p->defnames, v->ref.name, strlen(v->ref.name));
    if (!k) {
      rc = fail_at(p, v->ref.off, "jaxpr '%s' is not defined by a 'let %s = { ... } in' block",
                   v->ref.name, v->ref.name);
      break;
    }
    target[i] = k - 1;
    where[i] = v->ref.off;
    v->kind = SR_V_JAXPR;
    v->jx.jaxpr = p->defs[k - 1].j;
    v->jx.prog = p->prog;
  }
  if (rc == 0 && p->ndefs) rc = check_no_cycle(p, target, where);
  free(target);
  free(where);
  free(p->vs);
  free(p->es);
  free(p->defs);
  free(p->refs);
  free(p->ref_owner);
  free(p->ref_depth);
  free(p->slots);
  free(p->undo);
  free(p->types.tab);
  free(p->values.tab);
  free(p->lits.tab);
  free(p->defnames.tab);
  if (rc < 0) {
    sr_program_unref(p->prog);
    return NULL;
  }
  if (end) *end = p->pos;
  return p->prog;
}
