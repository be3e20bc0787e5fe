/* lang_mutate.c: mutants of statement-language scripts (see lang_mutate.h). */
#include "lang_mutate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/jaxpr.h"
#include "ir/type.h"
#include "text/parse.h"
#include "util/diag.h"
#include "util/mem.h"

/* A mutant past this many bytes is cut there (deep nesting makes big ones) */
enum { MAX_TEXT = 4 << 20 };

typedef struct Piece {
  char *name;
  char *text;
  size_t n;
  int devices, repl;
} Piece;

struct SrLangPool {
  Piece *scripts;
  size_t nscripts, capscripts;
  Piece *jaxprs;
  size_t njaxprs, capjaxprs;
  char **names; /* dotted names of the seeds, as often as they occur */
  size_t nnames, capnames;
};

/* ---- random numbers ---- */

uint64_t sr_lang_rand(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static size_t below(uint64_t *r, size_t n) { return n ? (size_t)(sr_lang_rand(r) % n) : 0; }
static int chance(uint64_t *r, int percent) { return (int)below(r, 100) < percent; }
#define PICK(r, arr) ((arr)[below(r, sizeof(arr) / sizeof *(arr))])

static void note(char *what, size_t whatn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(char *what, size_t whatn, const char *fmt, ...) {
  size_t l = strlen(what);
  if (l + 1 >= whatn) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what + l, whatn - l, fmt, ap);
  va_end(ap);
}

/* ---- a tokenizer of the statement language, enough to cut it up ---- */

enum { T_NAME, T_NUM, T_STR, T_OP, T_NL };

typedef struct Tok {
  size_t off, len;
  int kind;
  int bol;   /* first token of its line */
  int depth; /* brackets open before it */
} Tok;

typedef struct Toks {
  Tok *t;
  size_t n, cap;
} Toks;

static int is_name0(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_name1(int c) { return is_name0(c) || (c >= '0' && c <= '9'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }

static void tok_push(Toks *ts, size_t off, size_t len, int kind, int bol, int depth) {
  if (ts->n == ts->cap) {
    ts->cap = ts->cap ? 2 * ts->cap : 256;
    ts->t = sr_xrealloc(ts->t, ts->cap * sizeof *ts->t);
  }
  ts->t[ts->n++] = (Tok){off, len, kind, bol, depth};
}

/* the end of the string that starts with the quote at i */
static size_t string_end(const char *s, size_t n, size_t i) {
  char q = s[i];
  int triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
  i += triple ? 3 : 1;
  while (i < n) {
    if (s[i] == '\\') {
      i += 2;
      continue;
    }
    if (!triple && s[i] == '\n') return i;
    if (s[i] == q && (!triple || (i + 2 < n && s[i + 1] == q && s[i + 2] == q))) return i + (triple ? 3 : 1);
    i++;
  }
  return n;
}

static void tokenize(const char *s, size_t n, Toks *ts) {
  static const char *const ops[] = {"**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "==",
                                    "!=",  "<=",  ">=",  "<<",  ">>",  "+=", "-=", "*=", "/=", "%=",
                                    "&=",  "|=",  "^=",  "@="};
  ts->n = 0;
  int depth = 0, bol = 1;
  size_t i = 0;
  while (i < n) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      i++;
      continue;
    }
    if (c == '#') {
      while (i < n && s[i] != '\n') i++;
      continue;
    }
    if (c == '\\' && i + 1 < n && s[i + 1] == '\n') {
      i += 2;
      continue;
    }
    size_t st = i;
    int kind;
    if (c == '\n') {
      tok_push(ts, i, 1, T_NL, bol, depth);
      i++;
      bol = 1;
      continue;
    } else if (c == '\'' || c == '"') {
      i = string_end(s, n, i);
      kind = T_STR;
    } else if (is_name0(c)) {
      while (i < n && is_name1(s[i])) i++;
      if (i < n && (s[i] == '\'' || s[i] == '"') && i - st <= 2) {
        i = string_end(s, n, i); /* f'...', rb"..." */
        kind = T_STR;
      } else {
        kind = T_NAME;
      }
    } else if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(s[i + 1]))) {
      while (i < n && (is_name1(s[i]) || s[i] == '.' ||
                       ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E'))))
        i++;
      kind = T_NUM;
    } else {
      size_t l = 1;
      for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        size_t ol = strlen(ops[k]);
        if (i + ol <= n && memcmp(s + i, ops[k], ol) == 0) {
          l = ol;
          break;
        }
      }
      i += l;
      kind = T_OP;
      if (c == '(' || c == '[' || c == '{') depth++;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) depth--;
      tok_push(ts, st, l, kind, bol, (c == '(' || c == '[' || c == '{') ? depth - 1 : depth);
      bol = 0;
      continue;
    }
    tok_push(ts, st, i - st, kind, bol, depth);
    bol = 0;
  }
}

/* Offsets where a top-level statement starts (a line at column 0, not in
   brackets, that is no else/elif/except/finally), then n. */
static size_t statements(const char *s, size_t n, const Toks *ts, size_t **out) {
  size_t cnt = 0, cap = 64;
  size_t *b = sr_xmalloc(cap * sizeof *b);
  for (size_t i = 0; i < ts->n; i++) {
    const Tok *t = &ts->t[i];
    if (!t->bol || t->depth || t->kind == T_NL) continue;
    if (t->off && s[t->off - 1] != '\n') continue;
    static const char *const cont[] = {"else", "elif", "except", "finally"};
    int skip = 0;
    for (size_t k = 0; k < 4; k++)
      if (t->len == strlen(cont[k]) && memcmp(s + t->off, cont[k], t->len) == 0) skip = 1;
    if (skip) continue;
    if (cnt + 2 > cap) b = sr_xrealloc(b, (cap *= 2) * sizeof *b);
    b[cnt++] = t->off;
  }
  b[cnt] = n;
  *out = b;
  return cnt;
}

/* ---- the pool ---- */

SrLangPool *sr_lang_pool_new(void) { return sr_xcalloc(1, sizeof(SrLangPool)); }

void sr_lang_pool_free(SrLangPool *p) {
  if (!p) return;
  for (size_t i = 0; i < p->nscripts; i++) free(p->scripts[i].name), free(p->scripts[i].text);
  for (size_t i = 0; i < p->njaxprs; i++) free(p->jaxprs[i].name), free(p->jaxprs[i].text);
  for (size_t i = 0; i < p->nnames; i++) free(p->names[i]);
  free(p->scripts);
  free(p->jaxprs);
  free(p->names);
  free(p);
}

size_t sr_lang_pool_nscripts(const SrLangPool *p) { return p->nscripts; }

static Piece *piece_add(Piece **v, size_t *cnt, size_t *cap, const char *name, const char *text, size_t n) {
  if (*cnt == *cap) {
    *cap = *cap ? 2 * *cap : 64;
    *v = sr_xrealloc(*v, *cap * sizeof **v);
  }
  Piece *pc = &(*v)[(*cnt)++];
  pc->name = sr_xstrdup(name);
  pc->text = sr_xstrndup(text, n);
  pc->n = n;
  pc->devices = 0;
  pc->repl = 0;
  return pc;
}

void sr_lang_pool_jaxpr(SrLangPool *p, const char *name, const char *text, size_t n) {
  piece_add(&p->jaxprs, &p->njaxprs, &p->capjaxprs, name, text, n);
}

/* The jaxprs written in a script: from "{ lambda" to its matching "}"
   (or "let NAME = {"...: the hoisted form starts with its lets). */
static void find_jaxprs(SrLangPool *p, const char *name, const char *s, size_t n) {
  int k = 0;
  for (size_t i = 0; i + 8 < n; i++) {
    if (memcmp(s + i, "{ lambda", 8) != 0) continue;
    size_t st = i;
    /* hoisted lets before it, on the lines above */
    while (st >= 4) {
      size_t ls = st;
      while (ls > 0 && s[ls - 1] != '\n') ls--;
      if (ls == st && ls > 0) {
        size_t pl = ls - 1;
        while (pl > 0 && s[pl - 1] != '\n') pl--;
        if (ls - pl >= 4 && memcmp(s + pl, "let ", 4) == 0) {
          st = pl;
          continue;
        }
      }
      break;
    }
    int depth = 0;
    size_t j = i;
    for (; j < n; j++) {
      if (s[j] == '{') depth++;
      if (s[j] == '}' && --depth == 0) break;
    }
    if (j >= n) break;
    char nm[300];
    snprintf(nm, sizeof nm, "%s#jaxpr%d", name, k++);
    sr_lang_pool_jaxpr(p, nm, s + st, j + 1 - st);
    i = j;
  }
}

static void find_names(SrLangPool *p, const char *s, const Toks *ts) {
  for (size_t i = 0; i < ts->n; i++) {
    if (ts->t[i].kind != T_NAME) continue;
    size_t j = i, end = ts->t[i].off + ts->t[i].len;
    while (j + 2 < ts->n && ts->t[j + 1].kind == T_OP && s[ts->t[j + 1].off] == '.' &&
           ts->t[j + 1].len == 1 && ts->t[j + 2].kind == T_NAME && ts->t[j + 1].off == end &&
           ts->t[j + 2].off == end + 1) {
      j += 2;
      end = ts->t[j].off + ts->t[j].len;
    }
    if (p->nnames == p->capnames) {
      p->capnames = p->capnames ? 2 * p->capnames : 1024;
      p->names = sr_xrealloc(p->names, p->capnames * sizeof *p->names);
    }
    p->names[p->nnames++] = sr_xstrndup(s + ts->t[i].off, end - ts->t[i].off);
    i = j;
  }
}

void sr_lang_pool_script(SrLangPool *p, const char *name, const char *text, size_t n) {
  Piece *pc = piece_add(&p->scripts, &p->nscripts, &p->capscripts, name, text, n);
  /* the header: comment lines at the top */
  const char *s = pc->text;
  size_t i = 0;
  while (i < n && s[i] == '#') {
    size_t e = i;
    while (e < n && s[e] != '\n') e++;
    if (e - i > 8 && strncmp(s + i, "# stdin: yes", 12) == 0) pc->repl = 1;
    if (e - i > 8 && strncmp(s + i, "# args:", 7) == 0) {
      const char *d = strstr(s + i, "--devices ");
      if (d && d < s + e) pc->devices = atoi(d + 10);
    }
    i = e + 1;
  }
  find_jaxprs(p, name, text, n);
  Toks ts = {0};
  tokenize(text, n, &ts);
  find_names(p, text, &ts);
  free(ts.t);
}

/* ---- what goes in ---- */

static const char *const numbers[] = {
  "-1", "0", "1", "2", "-2", "3", "7", "2**31", "2**31-1", "-2**31", "2**32", "2**63", "2**63-1", "-2**63",
  "-2**63-1", "2**64", "2**62", "2**40", "10**100", "-10**30", "9223372036854775807", "65535", "65536",
  "255", "256", "-129", "1e309", "-1e309", "1e-320", "-0.0", "0.0", "0.5", "1e30", "nan", "float('nan')",
  "float('inf')", "-float('inf')", "jnp.nan", "jnp.inf", "1j", "True", "False", "None", "0x7fffffff",
  "0b1", "1_000", "2**-1", "jnp.iinfo(jnp.int32).max", "jnp.finfo(jnp.float32).max",
};

static const char *const values[] = {
  "()", "[]", "{}", "''", "'x'", "'X'", "'\\x00'", "b''", "(1,)", "[0]", "{'a': 1}", "set()", "...",
  "jnp.ones(3)", "jnp.zeros((2, 3))", "jnp.ones(())", "jnp.zeros((0,))", "jnp.ones((1,) * 70)",
  "jnp.float32(1)", "jnp.int8(-1)", "jnp.uint32(7)", "jnp.arange(8)", "jnp.arange(8.0).reshape(2, 4)",
  "jnp.array([1, 2])", "jnp.array(True)", "jnp.ones(3, jnp.bfloat16)", "jnp.ones(2, jnp.complex64)",
  "lambda x: x", "lambda *a, **k: 0", "lambda: 0", "print", "len", "jax.jit", "jax.grad", "jax.vmap",
  "jax.jit(lambda x: x)", "jnp.sin", "mesh", "jax.make_mesh((8,), ('X',))",
  "jax.make_mesh((4, 2), ('X', 'Y'))", "P('X')", "P(None, 'Y')", "P(('X', 'Y'))", "P()",
  "NamedSharding(jax.make_mesh((8,), ('X',)), P('X'))", "jax.random.key(0)", "jax.random.PRNGKey(1)",
  "jax.ShapeDtypeStruct((2,), jnp.float32)", "jax.ShapeDtypeStruct((), jnp.int32)", "x", "f", "g",
  "jnp.float16", "jnp.bool_", "jnp.int64", "jnp.uint8", "jnp.float64", "'float0'", "(0, -1)", "(-1,)",
  "(2**31,)", "(0,) * 3", "[[]]", "((),)", "range(3)", "range(-1)", "range(2**62)", "{1, 2}",
  "frozenset()", "object", "Exception('e')", "KeyboardInterrupt", "type", "slice(None)", "(1, 2, 3)",
  "jnp.ones((2, 2)).T", "jax.devices()", "jax.devices()[0]", "jax.lax", "jax.tree", "'{}'", "'%s'",
  "'{:>2147483647}'", "'%*d' % (2**31, 1)",
};

static const char *const ops[] = {
  "+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>", "==", "!=", "<", ">=", "is",
  "in", "not in", "is not", "and", "or", "not", "if", "else", "lambda", ":", ",", "=", ".", "(", ")",
  "[", "]", "{", "}", ";", "\\\n", "\n", "*", "**", "->", ":=", "...", "@", "del", "return", "yield",
  "global", "nonlocal", "assert", "raise", "pass", "break", "continue", "import", "from", "as",
  "with", "try:", "except", "finally:", "class", "def", "for", "while", "elif", "async", "await",
};

static const char *const bytes_of_note = "{}[]()=:;,.@<>'\"#\\_ \n\t-+*/%&|^~!0123456789abejnxyzXYP";

/* A token of the pool: a name of the seeds, a value, or an operator. */
static const char *pool_token(SrLangPool *p, uint64_t *r, int kind) {
  if (kind == T_NUM || chance(r, 15)) return PICK(r, numbers);
  if (kind == T_NAME && p->nnames && chance(r, 60)) return p->names[below(r, p->nnames)];
  if (kind == T_OP && chance(r, 60)) return PICK(r, ops);
  if (chance(r, 50)) return PICK(r, values);
  return chance(r, 50) ? PICK(r, numbers) : PICK(r, ops);
}

/* ---- nesting ---- */

static const int depths[] = {2, 5, 20, 50, 99, 100, 101, 199, 200, 201, 300, 999, 1000, 1001, 3000, 10000, 100000};

static int pick_depth(uint64_t *r) {
  /* mostly small: deep ones are slow to run under the sanitizers */
  size_t n = sizeof depths / sizeof *depths;
  size_t i = below(r, n);
  if (i > 10 && chance(r, 50)) i = below(r, 11);
  return depths[i];
}

typedef struct Wrap {
  const char *open, *close;
} Wrap;

/* around an expression */
static const Wrap wraps[] = {
  {"(", ")"}, {"[", "]"}, {"{", "}"}, {"(", ",)"}, {"{1: ", "}"}, {"{'a': ", "}"}, {"abs(", ")"},
  {"list(", ")"}, {"tuple([", "])"}, {"len([", "])"}, {"print(", ")"}, {"str(", ")"},
  {"-", ""}, {"not ", ""}, {"~", ""}, {"+", ""}, {"lambda: ", ""}, {"lambda x: ", ""}, {"await ", ""},
  {"[", " for _ in range(1)]"}, {"{", " for _ in range(1)}"}, {"(", " if True else 0)"},
  {"(0 if False else ", ")"}, {"f'{", "}'"}, {"[*", "]"}, {"(*", ",)"}, {"{**{'a': ", "}}"},
  {"jnp.sin(", ")"}, {"jnp.asarray(", ")"}, {"jnp.sum(", ")"}, {"jax.jit(lambda x: x)(", ")"},
  {"", "[0]"}, {"", ".T"}, {"", "()"}, {"2**", ""}, {"1 + ", ""}, {"", " + 1"}, {"", " < 1"},
  {"", " and 1"}, {"'%s' % (", ",)"}, {"'{}'.format(", ")"}, {"jax.tree.map(lambda x: x, ", ")"},
  {"jax.tree.leaves(", ")"}, {"jax.lax.cond(True, lambda x: x, lambda x: x, ", ")"},
  {"jax.lax.fori_loop(0, 1, lambda i, c: c, ", ")"},
  {"jax.lax.while_loop(lambda c: False, lambda c: c, ", ")"},
  {"jax.lax.scan(lambda c, x: (c, x), ", ", None, length=1)[0]"}, {"jnp.stack([", "])"},
  {"jax.device_put(", ")"}, {"dict(a=", ")"}, {"(lambda *a: a)(", ")"}, {"(lambda **k: k)(a=", ")"},
};

/* around a function, which is then called */
static const Wrap fwraps[] = {
  {"jax.jit(", ")"}, {"jax.vmap(", ")"}, {"jax.grad(", ")"}, {"jax.checkpoint(", ")"},
  {"jax.make_jaxpr(", ")"}, {"jax.value_and_grad(", ")"}, {"jax.jacfwd(", ")"}, {"jax.jacrev(", ")"},
  {"jax.hessian(", ")"}, {"(lambda f: f)(", ")"}, {"(lambda f: lambda *a: f(*a))(", ")"},
  {"jax.named_call(", ")"}, {"jax.custom_jvp(", ")"},
};

static void put_rep(SrBuf *b, const char *s, int n) {
  size_t l = strlen(s);
  for (int i = 0; i < n && b->len + l < MAX_TEXT; i++) sr_buf_putn(b, s, l);
}

static void put_indent(SrBuf *b, int n) { sr_buf_fill(b, ' ', (size_t)n); }

/* a generated expression nested d deep around mid */
static void nest_expr(uint64_t *r, SrBuf *b, const char *mid, int d, char *what, size_t whatn) {
  const Wrap *w = &PICK(r, wraps);
  put_rep(b, w->open, d);
  sr_buf_puts(b, mid);
  put_rep(b, w->close, d);
  note(what, whatn, " nest %d '%s'...'%s'", d, w->open, w->close);
}

/* statements nested d deep in blocks (the limit is Python's 100 levels
   of indentation) */
static void nest_blocks(uint64_t *r, SrBuf *b, int d, char *what, size_t whatn) {
  static const char *const heads[] = {"if True:", "for _ in range(1):", "while False:", "def f():",
                                      "try:", "with jax.set_mesh(jax.make_mesh((8,), ('X',))):",
                                      "if False:\n%*spass\n%*selse:", "for i in []:\n%*spass\n%*selse:"};
  int h = (int)below(r, sizeof heads / sizeof *heads);
  int step = chance(r, 80) ? 1 : (int)below(r, 4) + 1;
  if (d > 400) d = 400;
  for (int i = 0; i < d && b->len < MAX_TEXT; i++) {
    put_indent(b, i * step);
    if (h >= 6)
      sr_buf_printf(b, heads[h], (i + 1) * step, "", i * step, "");
    else
      sr_buf_puts(b, heads[h]);
    sr_buf_putc(b, '\n');
  }
  put_indent(b, d * step);
  sr_buf_puts(b, chance(r, 50) ? "print(1)\n" : "x = 1\n");
  if (h == 4)
    for (int i = d - 1; i >= 0 && b->len < MAX_TEXT; i--) {
      put_indent(b, i * step);
      sr_buf_puts(b, chance(r, 50) ? "except Exception:\n" : "finally:\n");
      put_indent(b, i * step + step);
      sr_buf_puts(b, "pass\n");
    }
  if (h == 3)
    for (int i = d - 1; i >= 0 && b->len < MAX_TEXT; i--) {
      put_indent(b, i * step + step);
      sr_buf_puts(b, i == d - 1 ? "return 1\n" : "return f()\n");
    }
  sr_buf_puts(b, "\n");
  if (h == 3) sr_buf_puts(b, "print(f())\n");
  note(what, whatn, " blocks %d '%s'", d, heads[h]);
}

/* a whole generated script of one deep construct */
static void gen_deep(SrLangPool *p, uint64_t *r, SrBuf *b, char *what, size_t whatn) {
  (void)p;
  sr_buf_puts(b, "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
                 "from jax.sharding import PartitionSpec as P, NamedSharding\nx = 1.0\n");
  int d = pick_depth(r);
  switch (below(r, 9)) {
  case 0:
  case 1: { /* an expression */
    int pr = chance(r, 50);
    sr_buf_puts(b, pr ? "print(" : "y = ");
    nest_expr(r, b, PICK(r, ((const char *const[]){"1", "x", "1.0", "()", "jnp.ones(2)", "'s'"})), d, what,
              whatn);
    if (pr) sr_buf_putc(b, ')');
    sr_buf_puts(b, "\nprint('done')\n");
    break;
  }
  case 2: { /* a transform around a function, called */
    const Wrap *w = &PICK(r, fwraps);
    if (memcmp(w->open, "jax.grad", 8) == 0 || memcmp(w->open, "jax.jac", 7) == 0 ||
        memcmp(w->open, "jax.hess", 8) == 0)
      d = d > 6 ? 1 + (int)below(r, 6) : d;
    sr_buf_puts(b, "f = ");
    put_rep(b, w->open, d);
    sr_buf_puts(b, PICK(r, ((const char *const[]){"jnp.sin", "lambda x: x * x", "lambda x: jnp.sum(x)"})));
    put_rep(b, w->close, d);
    sr_buf_printf(b, "\nprint(f(%s))\n", PICK(r, ((const char *const[]){"1.0", "2.0", "jnp.ones(())"})));
    note(what, whatn, " transforms %d '%s'", d, w->open);
    break;
  }
  case 3: /* blocks */
    nest_blocks(r, b, d, what, whatn);
    break;
  case 4: { /* containers built deep at run time */
    static const char *const builds[] = {"x = [x]", "x = (x,)", "x = {'a': x}", "x = [x, x]",
                                         "x = {'k': [x]}", "x = (x, 1)"};
    const char *bl = PICK(r, builds);
    static const char *const uses[] = {"print(x)", "print(x == x)", "print(len(str(x)))",
                                       "print(jax.tree.leaves(x))", "y = jnp.array(x)",
                                       "print(jax.tree.map(lambda a: a, x))", "print(hash(x))",
                                       "print(x < x)", "y = jax.jit(lambda a: a)(x)", "print(repr(x)[:10])",
                                       "y = list(x)", "print(jax.tree.structure(x))", "y = sorted([x, x])",
                                       "print(x in [x])", "import copy\ny = copy.deepcopy(x)"};
    if (d > 16 && strstr(bl, "x, x")) d = 16; /* 2**d leaves */
    sr_buf_printf(b, "x = 1\nfor _ in range(%d):\n  %s\n\n", d, bl);
    int k = 1 + (int)below(r, 3);
    for (int i = 0; i < k; i++) sr_buf_printf(b, "%s\n", PICK(r, uses));
    note(what, whatn, " built %d '%s'", d, bl);
    break;
  }
  case 5: { /* recursion */
    static const char *const recs[] = {
      "def f(n):\n  return f(n + 1)\n\nf(0)\n",
      "def f(n):\n  return jax.jit(f)(n)\n\nf(1.0)\n",
      "def f(x):\n  return jax.grad(f)(x)\n\nf(1.0)\n",
      "f = lambda x: f(x)\nf(1)\n",
      "def f(x):\n  return lax.cond(x > 0, f, f, x)\n\nf(1.0)\n",
      "def f(c, x):\n  return lax.scan(f, c, x)\n\nf(1.0, jnp.ones(2))\n",
      "def f(x):\n  return jax.vmap(f)(x)\n\nf(jnp.ones(2))\n",
      "def f(x):\n  try:\n    return f(x)\n  except RecursionError:\n    return 0\n\nprint(f(1))\n",
      "def g(*a):\n  return g(*a, 1)\n\ng()\n",
      "def f(n):\n  return n if n == 0 else f(n - 1)\n\nprint(f(%d))\n",
      "def f(n):\n  return 0 if n == 0 else jax.jit(f, static_argnums=0)(n - 1)\n\nprint(f(%d))\n",
      "f = jnp.sin\nfor _ in range(%d):\n  f = jax.jit(f)\n\nprint(f(1.0))\nprint(jax.make_jaxpr(f)(1.0))\n",
      "f = jnp.sin\nfor _ in range(%d):\n  f = jax.checkpoint(f)\n\nprint(f(1.0))\n",
      "f = lambda x: x\nfor _ in range(%d):\n  f = (lambda g: lambda x: g(x) + 1)(f)\n\nprint(f(0))\n",
      "l = [1]\nl.append(l)\nprint(l)\nprint(l == l)\n",
      "d = {}\nd['d'] = d\nprint(d)\nprint(jax.tree.leaves(d))\n",
    };
    const char *t = PICK(r, recs);
    sr_buf_printf(b, t, d);
    note(what, whatn, " recursion %d: %.40s", d, t);
    break;
  }
  case 6: { /* long, not deep */
    static const char *const longs[] = {" + 1", " < 1", " and 1", " or 0", ", 1", "[0:1]", ".real", ".T"};
    const char *t = PICK(r, longs);
    sr_buf_puts(b, "y = (1");
    put_rep(b, t, d * 10);
    sr_buf_puts(b, ")\nprint(y)\n");
    note(what, whatn, " long %d '%s'", d * 10, t);
    break;
  }
  case 7: { /* lambdas called */
    sr_buf_puts(b, "f = ");
    put_rep(b, "lambda: ", d);
    sr_buf_puts(b, "1\nprint(f");
    put_rep(b, "()", d);
    sr_buf_puts(b, ")\n");
    note(what, whatn, " lambdas %d", d);
    break;
  }
  default: { /* a string or f-string nested, or one long */
    if (chance(r, 50)) {
      put_rep(b, "print(f'{", d > 200 ? 200 : d);
      sr_buf_puts(b, "1");
      put_rep(b, "}')", d > 200 ? 200 : d);
      sr_buf_puts(b, "\n");
      note(what, whatn, " f-strings %d", d);
    } else {
      sr_buf_puts(b, "s = '");
      put_rep(b, PICK(r, ((const char *const[]){"a", "\\n", "\\x00", "{", "%", "\\u1234"})), d * 10);
      sr_buf_puts(b, "'\nprint(len(s))\nprint(s.format())\nprint(s % ())\nprint(s.split('a'))\n");
      note(what, whatn, " string %d", d * 10);
    }
  }
  }
}

/* ---- jaxprs and the autodiff commands ---- */

/* jnp.ones(shape, dtype) for each input of the jaxpr, or NULL if it does
   not parse */
static int jaxpr_args(const char *text, size_t n, SrBuf *args) {
  SrSrc *src = sr_src_new("<pool>", text, n, 1);
  SrDiags d = SR_DIAGS_INIT;
  size_t end;
  SrProgram *prog = sr_parse_program(src, 0, &end, NULL, &d);
  sr_diags_clear(&d);
  sr_src_unref(src);
  if (!prog) return -1;
  const SrJaxpr *j = prog->top;
  for (uint32_t i = j->nconst; i < j->nin; i++) {
    const SrType *t = j->invars[i]->type;
    if (i > j->nconst) sr_buf_puts(args, ", ");
    if (!t) {
      sr_buf_puts(args, "1.0");
      continue;
    }
    sr_buf_puts(args, "jnp.ones((");
    for (int k = 0; k < t->ndim; k++) sr_buf_printf(args, "%lld, ", (long long)t->dims[k].size);
    sr_buf_printf(args, "), '%s')", sr_dtype_name(t->dtype));
  }
  sr_program_unref(prog);
  return 0;
}

static void gen_jaxpr(SrLangPool *p, uint64_t *r, SrBuf *b, char *what, size_t whatn) {
  sr_buf_puts(b, "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n");
  static const char *const meshes[] = {
    "", "", "_ = jax.set_mesh(jax.make_mesh((4, 2), ('X', 'Y')))\n",
    "_ = jax.set_mesh(jax.make_mesh((2, 2, 2), ('X', 'Y', 'Z')))\n",
    "_ = jax.set_mesh(jax.make_mesh((8,), ('X',), axis_types=(jax.sharding.AxisType.Explicit,)))\n",
    "_ = jax.set_mesh(jax.make_mesh((4, 2), ('X', 'Y'), axis_types=(jax.sharding.AxisType.Explicit,) * 2))\n",
  };
  sr_buf_puts(b, PICK(r, meshes));
  const Piece *j = &p->jaxprs[below(r, p->njaxprs)];
  note(what, whatn, "%s", j->name);
  SrBuf args = SR_BUF_INIT;
  if (jaxpr_args(j->text, j->n, &args) < 0) sr_buf_puts(&args, "1.0");
  sr_buf_puts(b, "f = ");
  if (chance(r, 40)) {
    SrBuf m = SR_BUF_INIT;
    sr_lang_mutate(p, r, j->text, j->n, &m, what, whatn);
    sr_buf_putn(b, m.p ? m.p : "", m.len);
    sr_buf_free(&m);
  } else {
    sr_buf_putn(b, j->text, j->n);
  }
  sr_buf_puts(b, "\n");
  static const char *const cmds[] = {
    ":type f", ":print f", ":jvp f", ":vjp f", ":grad f", ":grad f 0", ":grad f (0, 1)", ":grad f -1",
    ":transpose f", ":linearize f", ":optimize f", ":comm-static f", ":grad f as df\n:type df\ndf(%s)",
    ":jvp f(%s)", ":vjp f(%s)", ":grad f(%s)", ":linearize f(%s)", ":gradcheck f(%s)", "print(f(%s))",
    "print(jax.jit(f)(%s))", "print(jax.grad(f)(%s))", "print(jax.vjp(f, %s)[0])",
    "y, f_vjp = jax.vjp(f, %s)\nprint(f_vjp(y))", "y, f_jvp = jax.linearize(f, %s)\nprint(f_jvp(%s))",
    "print(jax.jvp(f, (%s,), (%s,)))", "print(jax.make_jaxpr(f)(%s))", "print(jax.vmap(f)(%s))",
    "print(jax.jit(f).lower(%s).compile().as_text())", "print(jax.value_and_grad(f)(%s))",
    "print(jax.linear_transpose(f, %s)(%s))", "print(jax.jit(jax.grad(f))(%s))", "print(f)",
    "print(f(*[%s]))", ":comm print(f(%s))", "print(jax.eval_shape(f, %s))",
  };
  int k = 2 + (int)below(r, 6);
  for (int i = 0; i < k; i++) {
    const char *c = PICK(r, cmds);
    const char *a = chance(r, 85) ? sr_buf_str(&args) : pool_token(p, r, T_NUM);
    sr_buf_printf(b, c, a, a, a);
    sr_buf_putc(b, '\n');
    note(what, whatn, "; %.24s", c);
  }
  sr_buf_free(&args);
}

/* ---- mutations of a text ---- */

/* out = in with [at, at+del) replaced by ins */
static void splice(SrBuf *out, const char *in, size_t n, size_t at, size_t del, const char *ins, size_t insn) {
  sr_buf_reset(out);
  sr_buf_putn(out, in, at);
  sr_buf_putn(out, ins, insn);
  sr_buf_putn(out, in + at + del, n - at - del);
}

static const Tok *pick_tok(uint64_t *r, const Toks *ts, int kind) {
  if (!ts->n) return NULL;
  if (kind >= 0)
    for (int tries = 0; tries < 20; tries++) {
      const Tok *t = &ts->t[below(r, ts->n)];
      if (t->kind == kind) return t;
    }
  for (int tries = 0; tries < 20; tries++) {
    const Tok *t = &ts->t[below(r, ts->n)];
    if (t->kind != T_NL) return t;
  }
  return &ts->t[below(r, ts->n)];
}

/* one mutation of cur into out */
static void mutate_once(SrLangPool *p, uint64_t *r, const char *cur, size_t n, SrBuf *out, char *what,
                        size_t whatn) {
  Toks ts = {0};
  tokenize(cur, n, &ts);
  size_t *st = NULL;
  size_t nst = statements(cur, n, &ts, &st);
  int op = (int)below(r, 100);
  if (!ts.n) op = 0;
  if (op < 10) { /* bytes */
    char c;
    size_t at = below(r, n + 1);
    switch (below(r, 4)) {
    case 0:
      if (n) {
        at = below(r, n);
        c = (char)(cur[at] ^ (1 << below(r, 8)));
        splice(out, cur, n, at, 1, &c, 1);
        note(what, whatn, " flip@%zu", at);
        break;
      }
      /* fall through */
    case 1:
      c = chance(r, 70) ? bytes_of_note[below(r, strlen(bytes_of_note))] : (char)sr_lang_rand(r);
      splice(out, cur, n, at, 0, &c, 1);
      note(what, whatn, " insert-byte@%zu", at);
      break;
    case 2:
      c = chance(r, 70) ? bytes_of_note[below(r, strlen(bytes_of_note))] : (char)sr_lang_rand(r);
      splice(out, cur, n, at < n ? at : 0, n ? 1 : 0, &c, 1);
      note(what, whatn, " set-byte@%zu", at);
      break;
    default: {
      size_t l = 1 + below(r, 8);
      if (at + l > n) l = n - at;
      splice(out, cur, n, at, l, "", 0);
      note(what, whatn, " delete-bytes@%zu+%zu", at, l);
    }
    }
  } else if (op < 18) { /* delete tokens */
    const Tok *t = pick_tok(r, &ts, -1);
    size_t k = 1 + (chance(r, 30) ? below(r, 4) : 0);
    size_t i = (size_t)(t - ts.t), e = i + k < ts.n ? i + k : ts.n - 1;
    size_t end = ts.t[e].off + ts.t[e].len;
    splice(out, cur, n, t->off, end - t->off, "", 0);
    note(what, whatn, " delete-tokens@%zu+%zu", t->off, e - i + 1);
  } else if (op < 25) { /* duplicate tokens */
    const Tok *t = pick_tok(r, &ts, -1);
    size_t i = (size_t)(t - ts.t), e = i + below(r, 3);
    if (e >= ts.n) e = ts.n - 1;
    size_t end = ts.t[e].off + ts.t[e].len;
    int times = chance(r, 80) ? 1 : (int)below(r, 100) + 1;
    SrBuf ins = SR_BUF_INIT;
    for (int k = 0; k < times; k++) {
      sr_buf_putn(&ins, cur + t->off, end - t->off);
      sr_buf_putc(&ins, ' ');
    }
    splice(out, cur, n, t->off, 0, ins.p, ins.len);
    sr_buf_free(&ins);
    note(what, whatn, " duplicate-tokens@%zu x%d", t->off, times);
  } else if (op < 31) { /* swap two tokens */
    const Tok *a = pick_tok(r, &ts, -1), *b2;
    if (chance(r, 70)) {
      size_t i = (size_t)(a - ts.t) + 1 + below(r, 8);
      b2 = &ts.t[i < ts.n ? i : ts.n - 1];
    } else {
      b2 = pick_tok(r, &ts, -1);
    }
    if (a->off > b2->off) {
      const Tok *x = a;
      a = b2;
      b2 = x;
    }
    if (a == b2 || a->off + a->len > b2->off) {
      splice(out, cur, n, 0, 0, "", 0);
    } else {
      sr_buf_reset(out);
      sr_buf_putn(out, cur, a->off);
      sr_buf_putn(out, cur + b2->off, b2->len);
      sr_buf_putn(out, cur + a->off + a->len, b2->off - a->off - a->len);
      sr_buf_putn(out, cur + a->off, a->len);
      sr_buf_putn(out, cur + b2->off + b2->len, n - b2->off - b2->len);
    }
    note(what, whatn, " swap@%zu,%zu", a->off, b2->off);
  } else if (op < 46) { /* replace a number */
    const Tok *t = pick_tok(r, &ts, T_NUM);
    const char *ins = PICK(r, numbers);
    int paren = t->kind == T_NUM && ins[0] == '-' && chance(r, 50);
    SrBuf b = SR_BUF_INIT;
    sr_buf_printf(&b, paren ? "(%s)" : "%s", ins);
    splice(out, cur, n, t->off, t->len, b.p, b.len);
    sr_buf_free(&b);
    note(what, whatn, " number@%zu=%s", t->off, ins);
  } else if (op < 60) { /* replace a token */
    const Tok *t = pick_tok(r, &ts, chance(r, 50) ? T_NAME : -1);
    const char *ins = pool_token(p, r, t->kind);
    splice(out, cur, n, t->off, t->len, ins, strlen(ins));
    note(what, whatn, " token@%zu=%.30s", t->off, ins);
  } else if (op < 67 && nst > 1) { /* truncate at a statement */
    size_t k = 1 + below(r, nst - 1);
    if (chance(r, 70)) {
      splice(out, cur, n, st[k], n - st[k], "", 0);
      note(what, whatn, " truncate@stmt%zu", k);
    } else { /* or in it */
      size_t at = st[k - 1] + below(r, st[k] - st[k - 1]);
      splice(out, cur, n, at, n - at, "", 0);
      note(what, whatn, " truncate@%zu", at);
    }
  } else if (op < 78 && p->nscripts) { /* splice from another script */
    const Piece *o = &p->scripts[below(r, p->nscripts)];
    Toks ot = {0};
    tokenize(o->text, o->n, &ot);
    size_t *ost = NULL;
    size_t onst = statements(o->text, o->n, &ot, &ost);
    size_t j = below(r, nst + 1), at = st[j];
    if (onst && chance(r, 70)) { /* whole statements, in or instead of one */
      size_t k = below(r, onst), e = k + 1 + (chance(r, 30) ? below(r, 4) : 0);
      if (e > onst) e = onst;
      size_t del = j < nst && chance(r, 30) ? st[j + 1] - st[j] : 0;
      splice(out, cur, n, at, del, o->text + ost[k], ost[e] - ost[k]);
      note(what, whatn, " splice %s:stmt%zu-%zu@%zu", o->name, k, e, at);
    } else { /* a line, at any line */
      size_t ls = below(r, o->n + 1);
      while (ls > 0 && o->text[ls - 1] != '\n') ls--;
      size_t le = ls;
      while (le < o->n && o->text[le] != '\n') le++;
      if (le < o->n) le++;
      at = below(r, n + 1);
      while (at > 0 && cur[at - 1] != '\n') at--;
      splice(out, cur, n, at, 0, o->text + ls, le - ls);
      note(what, whatn, " splice-line %s@%zu", o->name, at);
    }
    free(ost);
    free(ot.t);
  } else if (op < 88) { /* nest a token deep */
    const Tok *t = pick_tok(r, &ts, chance(r, 50) ? T_NAME : -1);
    SrBuf b = SR_BUF_INIT;
    SrBuf mid = SR_BUF_INIT;
    sr_buf_putn(&mid, cur + t->off, t->len);
    nest_expr(r, &b, sr_buf_str(&mid), pick_depth(r), what, whatn);
    splice(out, cur, n, t->off, t->len, b.p, b.len);
    note(what, whatn, "@%zu", t->off);
    sr_buf_free(&b);
    sr_buf_free(&mid);
  } else if (op < 93 && nst) { /* a statement again, or blocks in */
    size_t k = below(r, nst);
    size_t at = st[below(r, nst + 1)];
    if (chance(r, 60)) {
      int times = chance(r, 70) ? 1 : 1 + (int)below(r, 50);
      SrBuf b = SR_BUF_INIT;
      for (int i = 0; i < times; i++) sr_buf_putn(&b, cur + st[k], st[k + 1] - st[k]);
      splice(out, cur, n, at, 0, b.p, b.len);
      sr_buf_free(&b);
      note(what, whatn, " repeat stmt%zu x%d@%zu", k, times, at);
    } else {
      SrBuf b = SR_BUF_INIT;
      nest_blocks(r, &b, 1 + (int)below(r, chance(r, 80) ? 5 : 120), what, whatn);
      splice(out, cur, n, at, 0, b.p, b.len);
      sr_buf_free(&b);
      note(what, whatn, "@%zu", at);
    }
  } else { /* blank lines and indentation: the REPL ends a block at a blank line */
    size_t at = below(r, n + 1);
    while (at > 0 && cur[at - 1] != '\n') at--;
    switch (below(r, 4)) {
    case 0:
      splice(out, cur, n, at, 0, "\n", 1);
      note(what, whatn, " blank-line@%zu", at);
      break;
    case 1:
      splice(out, cur, n, at, 0, chance(r, 50) ? " " : "\t", 1);
      note(what, whatn, " indent@%zu", at);
      break;
    case 2: {
      size_t l = 0;
      while (at + l < n && (cur[at + l] == ' ' || cur[at + l] == '\t')) l++;
      splice(out, cur, n, at, l, "", 0);
      note(what, whatn, " dedent@%zu", at);
      break;
    }
    default: {
      /* drop every blank line: a script's blocks then run into each other at the REPL */
      sr_buf_reset(out);
      for (size_t i = 0; i < n; i++)
        if (!(cur[i] == '\n' && (i == 0 || cur[i - 1] == '\n'))) sr_buf_putc(out, cur[i]);
      note(what, whatn, " no-blank-lines");
    }
    }
  }
  if (out->len > MAX_TEXT) out->len = MAX_TEXT;
  free(st);
  free(ts.t);
}

void sr_lang_mutate(SrLangPool *p, uint64_t *r, const char *in, size_t n, SrBuf *out, char *what,
                    size_t whatn) {
  int k = chance(r, 60) ? 1 : chance(r, 60) ? 2 : 3 + (int)below(r, 2);
  SrBuf a = SR_BUF_INIT;
  sr_buf_putn(&a, in, n);
  for (int i = 0; i < k; i++) {
    mutate_once(p, r, a.p ? a.p : "", a.len, out, what, whatn);
    SrBuf t = a;
    a = *out;
    *out = t;
  }
  SrBuf t = a;
  a = *out;
  *out = t;
  sr_buf_free(&a);
  if (!out->p) sr_buf_putn(out, "", 0);
}

void sr_lang_generate(SrLangPool *p, uint64_t *r, SrLangMutant *m) {
  sr_buf_reset(&m->text);
  m->what[0] = 0;
  m->devices = 0;
  m->repl = 0;
  int kind = (int)below(r, 100);
  if (kind < 12 || !p->nscripts) {
    note(m->what, sizeof m->what, "deep:");
    gen_deep(p, r, &m->text, m->what, sizeof m->what);
  } else if (kind < 24 && p->njaxprs) {
    gen_jaxpr(p, r, &m->text, m->what, sizeof m->what);
  } else {
    const Piece *s = &p->scripts[below(r, p->nscripts)];
    m->devices = s->devices;
    m->repl = s->repl;
    note(m->what, sizeof m->what, "%s:", s->name);
    sr_lang_mutate(p, r, s->text, s->n, &m->text, m->what, sizeof m->what);
  }
  if (m->text.len > MAX_TEXT) m->text.len = MAX_TEXT;
}
