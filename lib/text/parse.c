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

enum { MAX_DEPTH = 200 };

/* ---- scopes: name -> var, one per { lambda ... } ---- */

typedef struct ScopeEnt {
  const char *name;
  uint32_t len, hash;
  SrVar *var;
  int used;
} ScopeEnt;

typedef struct Scope {
  ScopeEnt *tab;
  size_t cap, n;
  /* `_` binders, to mark the unused ones as drop vars */
  ScopeEnt *under;
} Scope;

typedef struct Def {
  const char *name;
  size_t len, off;
  SrJaxpr *j;
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
  int depth;
  SrVar **vs; /* operand/binder stack */
  size_t vn, vcap;
  SrEqn *es;  /* equation stack */
  size_t en, ecap;
  Def *defs;
  size_t ndefs, capdefs;
  SrVal **refs; /* JAXPR_REF params to resolve at the end */
  size_t nrefs, caprefs;
} Parser;

static int is_ident_start(int c) { return isalpha(c) || c == '_'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_'; }
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
  size_t e = ident_end(p->s, p->len, p->pos);
  return e - p->pos == n && memcmp(p->s + p->pos, w, n) == 0;
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
  if (off >= p->len || sr_skip_blanks(p->s, p->len, off) >= p->len) p->d->incomplete = 1;
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

static size_t column_of(Parser *p, size_t off) {
  size_t b = off;
  while (b > 0 && p->s[b - 1] != '\n') b--;
  return off - b;
}

/* ---- scopes ---- */

static void scope_init(Scope *sc) {
  sc->cap = 64;
  sc->n = 0;
  sc->tab = sr_xcalloc(sc->cap, sizeof *sc->tab);
  sc->under = NULL;
}

static void mark_drop(ScopeEnt *e) {
  if (e && !e->used) e->var->kind = SR_DROP;
}

static void scope_done(Scope *sc) {
  if (sc->under) mark_drop(sc->under);
  free(sc->tab);
  free(sc->under);
}

static ScopeEnt *scope_find(Scope *sc, const char *name, size_t len, uint32_t h) {
  for (size_t j = h & (sc->cap - 1);; j = (j + 1) & (sc->cap - 1)) {
    ScopeEnt *e = &sc->tab[j];
    if (!e->name) return e;
    if (e->hash == h && e->len == len && memcmp(e->name, name, len) == 0) return e;
  }
}

static void scope_bind(Scope *sc, const char *name, size_t len, SrVar *v) {
  if (2 * (sc->n + 1) > sc->cap) {
    ScopeEnt *old = sc->tab;
    size_t oldcap = sc->cap;
    sc->cap *= 2;
    sc->tab = sr_xcalloc(sc->cap, sizeof *sc->tab);
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].name) *scope_find(sc, old[i].name, old[i].len, old[i].hash) = old[i];
    free(old);
  }
  uint32_t h = sr_hash_bytes(name, len, SR_HASH_INIT);
  ScopeEnt *e = scope_find(sc, name, len, h);
  if (!e->name) sc->n++;
  if (len == 1 && name[0] == '_') {
    /* a rebound `_` that was never read is a dropped output */
    if (!sc->under) sc->under = sr_xcalloc(1, sizeof *sc->under);
    else if (sc->under->var) mark_drop(sc->under);
    *sc->under = (ScopeEnt){name, 1, h, v, 0};
  }
  *e = (ScopeEnt){name, (uint32_t)len, h, v, 0};
}

static SrVar *scope_lookup(Scope *sc, const char *name, size_t len) {
  uint32_t h = sr_hash_bytes(name, len, SR_HASH_INIT);
  ScopeEnt *e = scope_find(sc, name, len, h);
  if (!e->name) return NULL;
  e->used = 1;
  if (len == 1 && name[0] == '_' && sc->under) sc->under->used = 1;
  return e->var;
}

/* ---- stacks ---- */

static void vpush(Parser *p, SrVar *v) {
  if (p->vn == p->vcap) {
    p->vcap = p->vcap ? 2 * p->vcap : 256;
    p->vs = sr_xrealloc(p->vs, p->vcap * sizeof *p->vs);
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

/* dtype [ "<" memspace ">" ] "[" dims "]" [ suffix ]; with allow_bare, a
   dtype alone (an older literal form) is a scalar and *bare is set. */
static int parse_type(Parser *p, const SrType **out, int allow_bare, int *bare) {
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
  if (peek(p) == '{' || (peek(p) == '<' && p->pos + 2 < p->len && isupper((unsigned char)p->s[p->pos + 1])))
    if (parse_type_suffix(p, &b) < 0) return -1;
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
  v->kind = SR_LIT;
  v->text = sr_arena_strndup(p->a, s + start, e - start);
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
    v->lit_form = SR_LIT_BARE;
  }
  *out = v;
  return 0;
}

static int parse_atom(Parser *p, SrVar **out) {
  if (at_literal(p)) return parse_literal(p, out);
  size_t e = ident_end(p->s, p->len, p->pos);
  if (e == p->pos) return expected(p, "an operand");
  SrVar *v = scope_lookup(p->scope, p->s + p->pos, e - p->pos);
  if (!v)
    return fail_at(p, p->pos, "variable '%.*s' is not defined", (int)(e - p->pos), p->s + p->pos);
  p->pos = e;
  *out = v;
  return 0;
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
    if (kn == 4 && memcmp(k, "mesh", 4) == 0) mesh = val;
    else if (kn == 4 && memcmp(k, "spec", 4) == 0) spec = val;
    else {
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
static SrVal *opaque_value(Parser *p, size_t st, size_t e) {
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
  }
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
  if (jkey && is_ident_start(c)) {
    /* the name of a hoisted jaxpr; names come from functions' names, which
       may hold spaces ("unnamed function") */
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
  SrParam *ps = NULL;
  uint32_t np = 0, cap = 0;
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
      cap = cap ? 2 * cap : 8;
      ps = sr_xrealloc(ps, cap * sizeof *ps);
    }
    ps[np++] = (SrParam){key, v};
  }
  if (rc == 0) {
    *out = sr_arena_memdup(p->a, ps, np * sizeof *ps);
    *n = np;
  }
  free(ps);
  return rc;
}

/* ---- equations and jaxprs ---- */

static int at_in_keyword(Parser *p) {
  if (!at_word(p, "in")) return 0;
  size_t i = sr_skip_blanks(p->s, p->len, p->pos + 2);
  return i < p->len && p->s[i] == '(';
}

/* Does the token here begin a new equation rather than continue the
   operands of the current one? */
static int at_eqn_start(Parser *p) {
  size_t e = ident_end(p->s, p->len, p->pos);
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
    scope_bind(p->scope, name, len, v);
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
  if (ident_end(p->s, p->len, p->pos) < p->len && p->s[ident_end(p->s, p->len, p->pos)] == ':') {
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
  /* primitive and params */
  size_t pe = ident_end(p->s, p->len, p->pos);
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
    if (c < 0 || c == ';' || c == '}' || c == ')' || at_in_keyword(p) || at_eqn_start(p)) break;
    int newline = memchr(p->s + before, '\n', p->pos - before) != NULL;
    if (newline && column_of(p, p->pos) <= col) break;
    SrVar *a;
    if (parse_atom(p, &a) < 0) {
      rc = -1;
      goto done;
    }
    vpush(p, a);
  }
  uint32_t nin = (uint32_t)(p->vn - ibase);
  SrVar **in = vtake(p, ibase);
  SrVar **out = vtake(p, obase);
  for (uint32_t i = 0; i < nout; i++) scope_bind(p->scope, namev[i], lenv[i], out[i]);
  if (p->en == p->ecap) {
    p->ecap = p->ecap ? 2 * p->ecap : 256;
    p->es = sr_xrealloc(p->es, p->ecap * sizeof *p->es);
  }
  p->es[p->en++] = (SrEqn){prim, nin, nout, nparams, in, out, params, (uint32_t)start};
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
  if (++p->depth > MAX_DEPTH) return fail_at(p, open, "jaxprs nested too deeply (at most %d)", MAX_DEPTH);
  p->pos++;
  skip(p);
  if (!at_word(p, "lambda")) return expected(p, "'lambda' after '{'");
  p->pos += 6;

  Scope sc, *outer = p->scope;
  scope_init(&sc);
  p->scope = &sc;
  size_t vbase = p->vn, ebase = p->en;
  int rc = -1;
  char close_msg[64];
  snprintf(close_msg, sizeof close_msg, "to close '{ lambda' at line %d", line_of(p, open));

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
      snprintf(what, sizeof what, "an equation or 'in' %s", close_msg);
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
    if (parse_atom(p, &a) < 0) goto done;
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
    snprintf(what, sizeof what, "'}' %s", close_msg);
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
  j->eqns = sr_arena_memdup(p->a, p->es + ebase, j->neqn * sizeof *j->eqns);
  p->en = ebase;
  uint32_t id = 0;
  for (uint32_t i = 0; i < j->nin; i++) j->invars[i]->id = id++;
  for (uint32_t k = 0; k < j->neqn; k++)
    for (uint32_t i = 0; i < j->eqns[k].nout; i++) j->eqns[k].out[i]->id = id++;
  j->nvars = id;
  *out = j;
  rc = 0;
done:
  scope_done(&sc);
  p->scope = outer;
  p->depth--;
  if (rc < 0) {
    p->vn = vbase;
    p->en = ebase;
  }
  return rc;
}

/* ---- the program's mesh ---- */

/* A mesh printed in the text (shard_map's mesh=, jit's ctx_mesh=). */
static const SrMesh *text_mesh(const char *s, size_t len) {
  const char *q = s, *end = s + len;
  while ((q = memmem(q, (size_t)(end - q), "Mesh(", 5)) != NULL) {
    size_t at = (size_t)(q - s);
    int abstract = at >= 8 && memcmp(q - 8, "Abstract", 8) == 0;
    size_t st = abstract ? at - 8 : at;
    if (st == 0 || !is_ident_char((unsigned char)s[st - 1])) {
      PyP pq = {s + st, len - st, 0, NULL, 0};
      SrVal *v = pv_value(&pq);
      if (v && v->kind == SR_V_MESH && v->mesh->n > 0) {
        const SrMesh *m = v->mesh;
        sr_unref(v);
        return m;
      }
      if (v) sr_unref(v);
    }
    q += 5;
  }
  return NULL;
}

/* Without a mesh anywhere: the axes the types name, in order of first
   appearance, form an unsized mesh. */
static void add_axis(SrMesh *m, const char *s, size_t n) {
  const char *name = sr_intern(s, n);
  if (sr_mesh_axis(m, name) >= 0 || m->n == SR_MAX_AXES) return;
  m->names[m->n++] = name;
}

static size_t scan_axis_group(SrMesh *m, const char *s, size_t len, size_t i) {
  int paren = i < len && s[i] == '(';
  if (paren) i++;
  for (;;) {
    size_t e = i;
    while (e < len && is_ident_char((unsigned char)s[e])) e++;
    if (e == i) return i;
    add_axis(m, s + i, e - i);
    i = e;
    if (!paren || i >= len || s[i] != ',') return i;
    i++;
  }
}

static const SrMesh *implicit_mesh(const char *s, size_t len) {
  SrMesh m;
  memset(&m, 0, sizeof m);
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c == '@' && i > 0 && isdigit((unsigned char)s[i - 1])) {
      scan_axis_group(&m, s, len, i + 1);
    } else if ((c == '{' || c == '<') && i > 0 && (s[i - 1] == ']')) {
      /* a type suffix {V:a, U:(b,c)} */
      size_t k = i + 1;
      for (;;) {
        while (k < len && s[k] == ' ') k++;
        size_t e = k;
        while (e < len && is_ident_char((unsigned char)s[e])) e++;
        if (e == k || e >= len || s[e] != ':') break;
        k = scan_axis_group(&m, s, len, e + 1);
        if (k >= len || s[k] != ',') break;
        k++;
      }
    }
  }
  if (m.n == 0) return NULL;
  m.abstract = 1;
  m.unsized = 1;
  return sr_mesh_intern(&m);
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

SrProgram *sr_parse_program(SrSrc *src, size_t start, size_t *end,
                            const SrParseOpts *opts, SrDiags *d) {
  sr_prims_init();
  Parser P;
  memset(&P, 0, sizeof P);
  Parser *p = &P;
  p->src = src;
  p->s = src->text;
  p->len = src->len;
  p->pos = start;
  p->d = d;
  p->prog = sr_program_new();
  p->prog->src = sr_src_ref(src);
  p->a = p->prog->arena;

  const SrMesh *m = text_mesh(p->s + start, p->len - start);
  if (!m && opts && opts->mesh && opts->mesh->n) m = opts->mesh;
  if (m) {
    p->mesh = sr_mesh_shape(m);
    p->prog->mesh = m;
  } else {
    p->mesh = implicit_mesh(p->s + start, p->len - start);
    p->prog->mesh = p->mesh;
  }

  int rc = 0;
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
    Def def = {p->s + p->pos, ne - p->pos, def_off, NULL};
    for (size_t i = 0; i < p->ndefs; i++)
      if (p->defs[i].len == def.len && memcmp(p->defs[i].name, def.name, def.len) == 0) {
        rc = fail_at(p, p->pos, "jaxpr '%.*s' is defined twice", (int)def.len, def.name);
        break;
      }
    if (rc) break;
    p->pos = ne;
    skip(p);
    if (peek(p) != '=') {
      rc = expected(p, "'=' after 'let NAME'");
      break;
    }
    p->pos++;
    skip(p);
    if (parse_jaxpr(p, &def.j) < 0) {
      rc = -1;
      break;
    }
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
  }
  if (rc == 0 && parse_jaxpr(p, &p->prog->top) < 0) rc = -1;
  /* resolve the names of hoisted jaxprs; they may be used before they are
     defined */
  for (size_t i = 0; rc == 0 && i < p->nrefs; i++) {
    SrVal *v = p->refs[i];
    size_t n = strlen(v->ref.name);
    Def *def = NULL;
    for (size_t k = 0; k < p->ndefs; k++)
      if (p->defs[k].len == n && memcmp(p->defs[k].name, v->ref.name, n) == 0) def = &p->defs[k];
    if (!def) {
      rc = fail_at(p, v->ref.off, "jaxpr '%s' is not defined by a 'let %s = { ... } in' block",
                   v->ref.name, v->ref.name);
      break;
    }
    v->kind = SR_V_JAXPR;
    v->jx.jaxpr = def->j;
    v->jx.prog = p->prog;
  }
  free(p->vs);
  free(p->es);
  free(p->defs);
  free(p->refs);
  if (rc < 0) {
    sr_program_unref(p->prog);
    return NULL;
  }
  if (end) *end = p->pos;
  return p->prog;
}
