/* syntax.c: a recursive-descent parser for the statement language.
 *
 * The grammar is Python's, cut down to what the JAX documents use: simple
 * statements, def/if/for/while/try/with, decorators, lambdas,
 * comprehensions, f-strings, and jaxpr literals as atoms.  Each grammar
 * rule is written above the function that parses it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py/ast.h"
#include "py/interp.h"
#include "text/parse.h"
#include "util/intern.h"

enum { MAX_DEPTH = 150 };

typedef struct LP {
  SrLexer lx;
  SrTok tok, ahead;
  int has_ahead;
  SrCode *code;
  SrSrc *src;
  SrArena *a;
  SrDiags *d;
  const SrMesh *mesh;
  int err;
  int depth;
  int in_def;      /* inside a def's body: return is allowed */
  int yields;      /* yield expressions seen in the def being parsed */
  size_t prev_end; /* where the token before tok ends */
} LP;

static const char *kw(const char *s) { return sr_intern_cstr(s); }

static void advance(LP *p) {
  p->prev_end = p->tok.off + p->tok.len;
  if (p->has_ahead) {
    p->tok = p->ahead;
    p->has_ahead = 0;
  } else {
    p->tok = sr_lex_next(&p->lx);
  }
  if (p->lx.error) p->err = 1;
}

static SrTok *peek2(LP *p) {
  if (!p->has_ahead) {
    p->ahead = sr_lex_next(&p->lx);
    p->has_ahead = 1;
    if (p->lx.error) p->err = 1;
  }
  return &p->ahead;
}

static int is_op(const SrTok *t, const char *op) {
  return t->kind == SR_T_OP && strcmp(t->text, op) == 0;
}
static int is_name(const SrTok *t, const char *w) {
  return t->kind == SR_T_NAME && strcmp(t->text, w) == 0;
}
static int at_op(LP *p, const char *op) { return is_op(&p->tok, op); }
static int at_kw(LP *p, const char *w) { return is_name(&p->tok, w); }

static void describe(const SrTok *t, char *buf, size_t n) {
  switch (t->kind) {
  case SR_T_END: snprintf(buf, n, "end of input"); break;
  case SR_T_NEWLINE: snprintf(buf, n, "end of line"); break;
  case SR_T_INDENT: snprintf(buf, n, "an indented block"); break;
  case SR_T_DEDENT: snprintf(buf, n, "the end of a block"); break;
  case SR_T_NAME:
  case SR_T_OP: snprintf(buf, n, "'%s'", t->text); break;
  case SR_T_STRING: snprintf(buf, n, "a string"); break;
  case SR_T_JAXPR: snprintf(buf, n, "a jaxpr"); break;
  default: snprintf(buf, n, "a number");
  }
}

static void *syntax_error(LP *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static SrNode *fail(LP *p, const char *what) {
  if (p->err) return NULL;
  p->err = 1;
  char here[64];
  describe(&p->tok, here, sizeof here);
  /* Only where the parse needed the text's end -- the end itself, or the
     dedents and the newline the lexer makes up there -- could more input
     complete the statement: a block still to come.  A real newline ends
     the statement, so `1 +` is an error at once, as in Python's REPL (a
     lexer error has decided already). */
  if (!p->lx.error &&
      (p->tok.kind == SR_T_END ||
       ((p->tok.kind == SR_T_DEDENT || (p->tok.kind == SR_T_NEWLINE && p->tok.len == 0)) &&
        sr_skip_blanks(p->lx.s, p->lx.len, p->tok.off) >= p->lx.len)))
    p->d->incomplete |= SR_INCOMPLETE_BLOCK;
  sr_error(p->d, SR_E_PARSE, p->src, p->tok.off, "invalid syntax: %s expected, found %s", what, here);
  return NULL;
}

static int expect_op(LP *p, const char *op) {
  if (!at_op(p, op)) {
    char what[32];
    snprintf(what, sizeof what, "'%s'", op);
    fail(p, what);
    return -1;
  }
  advance(p);
  return 0;
}

static SrNode *node(LP *p, int kind, size_t off) {
  SrNode *n = SR_NEW(p->a, SrNode);
  n->kind = (uint8_t)kind;
  n->off = (uint32_t)off;
  return n;
}

/* a growable list of nodes, copied into the arena when done */
typedef struct NL {
  SrNode **v;
  int n, cap;
} NL;

static void nl_push(NL *l, SrNode *x) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 8;
    l->v = sr_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
  }
  l->v[l->n++] = x;
}

static SrNode **nl_done(LP *p, NL *l, int *n) {
  *n = l->n;
  SrNode **r = l->n ? sr_arena_memdup(p->a, l->v, (size_t)l->n * sizeof *l->v) : NULL;
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
  return r;
}

static SrNode *test(LP *p);
static SrNode *expr(LP *p);
static SrNode *or_expr(LP *p);
static SrNode *stmt(LP *p);
static SrNode *testlist_star(LP *p, int allow_star);
static SrNode *yield_expr(LP *p);

static SrNode *const_node(LP *p, size_t off, SrVal *v) {
  SrNode *n = node(p, SR_N_CONST, off);
  n->val = sr_code_hold(p->code, v);
  return n;
}

/* ---- f-strings ---- */

static void set_offsets(SrNode *n, uint32_t off, int depth) {
  if (!n || depth > 200) return;
  n->off = off;
  set_offsets(n->a, off, depth + 1);
  set_offsets(n->b, off, depth + 1);
  set_offsets(n->c, off, depth + 1);
  for (int i = 0; i < n->n; i++) set_offsets(n->list[i], off, depth + 1);
  for (int i = 0; i < n->n2; i++) set_offsets(n->list2[i], off, depth + 1);
}

/* Parses the expression text of an f-string field.  It is parsed as a
   source of its own; its errors are moved to the f-string in the real
   source, where the user can see them. */
static SrNode *fstring_expr(LP *p, const char *s, size_t n, size_t off) {
  size_t k = 0;
  while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n')) k++;
  if (k == n) {
    p->err = 1;
    sr_error(p->d, SR_E_PARSE, p->src, off, "f-string: empty expression not allowed");
    return NULL;
  }
  SrDiag *last = p->d->last;
  SrSrc *sub = sr_src_new(p->src->name, s, n, 1);
  LP q;
  memset(&q, 0, sizeof q);
  q.code = p->code;
  q.src = sub;
  q.a = p->a;
  q.d = p->d;
  q.mesh = p->mesh;
  q.depth = p->depth;
  sr_lex_init(&q.lx, p->code, sub, 0, p->d, p->mesh);
  q.lx.join_lines = 1;
  q.lx.at_bol = 0;
  advance(&q);
  SrNode *e = testlist_star(&q, 0);
  if (e && q.tok.kind != SR_T_END && !q.err) e = fail(&q, "the end of an f-string field");
  if (q.err) p->err = 1;
  for (SrDiag *g = last ? last->next : p->d->first; g; g = g->next)
    if (g->src == sub) {
      sr_src_unref(g->src);
      g->src = sr_src_ref(p->src);
      g->off = off;
    }
  sr_src_unref(sub);
  if (e) set_offsets(e, (uint32_t)off, 0);
  return e;
}

/* f"text {expr!r:spec} {expr=} {{literal braces}}" */
static SrNode *fstring(LP *p, const char *s, size_t len, size_t off) {
  NL parts = {0};
  SrBuf lit = SR_BUF_INIT;
  size_t i = 0;
  while (i < len) {
    char c = s[i];
    if (c == '{' && i + 1 < len && s[i + 1] == '{') {
      sr_buf_putc(&lit, '{');
      i += 2;
      continue;
    }
    if (c == '}' && i + 1 < len && s[i + 1] == '}') {
      sr_buf_putc(&lit, '}');
      i += 2;
      continue;
    }
    if (c != '{') {
      sr_buf_putc(&lit, c);
      i++;
      continue;
    }
    if (lit.len) {
      nl_push(&parts, const_node(p, off, sr_str(NULL, lit.p, lit.len)));
      sr_buf_reset(&lit);
    }
    /* the field: expression up to '!', ':', '=' or '}' at depth 0 */
    size_t st = ++i;
    int depth = 0;
    char q = 0;
    while (i < len) {
      char d = s[i];
      if (q) {
        if (d == q) q = 0;
      } else if (d == '\'' || d == '"') {
        q = d;
      } else if (d == '(' || d == '[' || d == '{') {
        depth++;
      } else if (d == ')' || d == ']' || d == '}') {
        if (depth == 0) break;
        depth--;
      } else if (depth == 0 && (d == '!' || d == ':') && !(d == '!' && i + 1 < len && s[i + 1] == '=')) {
        break;
      } else if (depth == 0 && d == '=' && i + 1 < len && s[i + 1] != '=' && s[i - 1] != '=' &&
                 s[i - 1] != '!' && s[i - 1] != '<' && s[i - 1] != '>') {
        break;
      }
      i++;
    }
    if (i >= len) {
      /* checked before the field's text, which then is no expression */
      sr_buf_free(&lit);
      free(parts.v);
      p->err = 1;
      sr_error(p->d, SR_E_PARSE, p->src, off, "f-string: '}' expected");
      return NULL;
    }
    SrNode *f = node(p, SR_N_FORMAT, off);
    size_t ee = i;
    if (i < len && s[i] == '=') {
      /* self-documenting: the text up to and after '=', then the repr,
         unless a conversion or a format spec is given */
      i++;
      while (i < len && s[i] == ' ') i++;
      f->name = sr_arena_strndup(p->a, s + st, i - st);
      if (i >= len || (s[i] != '!' && s[i] != ':')) f->op = SR_CONV_REPR;
    }
    f->a = fstring_expr(p, s + st, ee - st, off);
    if (!f->a) {
      sr_buf_free(&lit);
      free(parts.v);
      return NULL;
    }
    if (i < len && s[i] == '!') {
      if (i + 1 < len && (s[i + 1] == 'r' || s[i + 1] == 'a')) f->op = SR_CONV_REPR;
      else if (i + 1 < len && s[i + 1] == 's') f->op = SR_CONV_STR;
      i += 2;
    }
    if (i < len && s[i] == ':') {
      size_t ss = ++i;
      int d2 = 0;
      while (i < len && !(s[i] == '}' && d2 == 0)) {
        if (s[i] == '{') d2++;
        if (s[i] == '}') d2--;
        i++;
      }
      f->b = fstring(p, s + ss, i - ss, off);
      if (!f->b) {
        sr_buf_free(&lit);
        free(parts.v);
        return NULL;
      }
    }
    if (i >= len || s[i] != '}') {
      sr_buf_free(&lit);
      free(parts.v);
      p->err = 1;
      sr_error(p->d, SR_E_PARSE, p->src, off, "f-string: '}' expected");
      return NULL;
    }
    i++;
    nl_push(&parts, f);
  }
  if (lit.len) nl_push(&parts, const_node(p, off, sr_str(NULL, lit.p, lit.len)));
  sr_buf_free(&lit);
  SrNode *n = node(p, SR_N_FSTRING, off);
  n->list = nl_done(p, &parts, &n->n);
  return n;
}

/* ---- expressions ---- */

/* atom: '(' [testlist_comp] ')' | '[' [testlist_comp] ']' | '{' [dictorset] '}'
         | NAME | NUMBER | STRING+ | '...' | JAXPR */
static SrNode *comp_for(LP *p, SrNode *elt, SrNode *val, int kind, size_t off);

/* An item of a display or an expression list: '*' expr (where star
   allows it) or a test; NULL after an error. */
static SrNode *star_or_test(LP *p, int star) {
  if (!star || !at_op(p, "*")) return test(p);
  size_t so = p->tok.off;
  advance(p);
  SrNode *e = node(p, SR_N_STARRED, so);
  e->a = expr(p);
  return e->a ? e : NULL;
}

static SrNode *atom(LP *p) {
  SrTok t = p->tok;
  size_t off = t.off;
  switch (t.kind) {
  case SR_T_NAME:
    advance(p);
    if (t.text == kw("None")) return const_node(p, off, sr_none());
    if (t.text == kw("True")) return const_node(p, off, sr_bool(1));
    if (t.text == kw("False")) return const_node(p, off, sr_bool(0));
    {
      SrNode *n = node(p, SR_N_NAME, off);
      n->name = t.text;
      return n;
    }
  case SR_T_INT: advance(p); return const_node(p, off, sr_int(NULL, t.i));
  case SR_T_FLOAT: advance(p); return const_node(p, off, sr_float(NULL, t.f));
  case SR_T_IMAG: advance(p); return const_node(p, off, sr_complex(NULL, 0, t.f));
  case SR_T_JAXPR: {
    advance(p);
    SrNode *n = node(p, SR_N_JAXPR, off);
    n->prog = t.prog;
    return n;
  }
  case SR_T_STRING: {
    /* adjacent strings concatenate; any f-string makes the whole an f-string */
    NL parts = {0};
    while (p->tok.kind == SR_T_STRING) {
      SrTok s = p->tok;
      advance(p);
      SrNode *part = s.fstring ? fstring(p, s.text, s.textlen, s.off)
                               : const_node(p, s.off, sr_str(NULL, s.text, s.textlen));
      if (!part) {
        free(parts.v);
        return NULL;
      }
      if (part->kind == SR_N_FSTRING) {
        for (int i = 0; i < part->n; i++) nl_push(&parts, part->list[i]);
      } else {
        nl_push(&parts, part);
      }
    }
    if (parts.n == 1 && parts.v[0]->kind == SR_N_CONST && !t.fstring) {
      SrNode *r = parts.v[0];
      free(parts.v);
      return r;
    }
    SrNode *n = node(p, SR_N_FSTRING, off);
    n->list = nl_done(p, &parts, &n->n);
    return n;
  }
  case SR_T_OP:
    if (at_op(p, "...")) {
      advance(p);
      /* the one builtins.Ellipsis, so that `... is Ellipsis` */
      SrVal *ell = sr_lookup_qualname("builtins.Ellipsis");
      return const_node(p, off, ell ? sr_ref(ell) : sr_word(NULL, "Ellipsis", 8));
    }
    if (at_op(p, "(")) {
      advance(p);
      if (at_op(p, ")")) {
        advance(p);
        return node(p, SR_N_TUPLE, off);
      }
      if (at_kw(p, "yield")) {
        SrNode *y = yield_expr(p);
        if (y && expect_op(p, ")") < 0) return NULL;
        return y;
      }
      SrNode *first = at_op(p, "*") ? NULL : test(p);
      if (!first && !at_op(p, "*")) return NULL;
      if (first && at_kw(p, "for")) {
        SrNode *c = comp_for(p, first, NULL, SR_COMP_GEN, off);
        if (c && expect_op(p, ")") < 0) return NULL;
        return c;
      }
      if (first && at_op(p, ")")) {
        advance(p);
        return first; /* parenthesised expression */
      }
      NL items = {0};
      if (first) {
        nl_push(&items, first);
        if (expect_op(p, ",") < 0) {
          free(items.v);
          return NULL;
        }
      }
      while (!at_op(p, ")")) {
        SrNode *e = star_or_test(p, 1);
        if (!e) {
          free(items.v);
          return NULL;
        }
        nl_push(&items, e);
        if (!at_op(p, ",")) break;
        advance(p);
      }
      if (expect_op(p, ")") < 0) {
        free(items.v);
        return NULL;
      }
      SrNode *n = node(p, SR_N_TUPLE, off);
      n->list = nl_done(p, &items, &n->n);
      return n;
    }
    if (at_op(p, "[")) {
      advance(p);
      NL items = {0};
      while (!at_op(p, "]")) {
        SrNode *e = star_or_test(p, 1);
        if (!e) {
          free(items.v);
          return NULL;
        }
        if (items.n == 0 && at_kw(p, "for")) {
          free(items.v);
          SrNode *c = comp_for(p, e, NULL, SR_COMP_LIST, off);
          if (c && expect_op(p, "]") < 0) return NULL;
          return c;
        }
        nl_push(&items, e);
        if (!at_op(p, ",")) break;
        advance(p);
      }
      if (expect_op(p, "]") < 0) {
        free(items.v);
        return NULL;
      }
      SrNode *n = node(p, SR_N_LIST, off);
      n->list = nl_done(p, &items, &n->n);
      return n;
    }
    if (at_op(p, "{")) {
      advance(p);
      NL keys = {0}, vals = {0};
      int is_dict = -1;
      /* a display is a dict or a set from its first item on; an item of
         the other kind is CPython's error where its grammar finds it */
      while (!at_op(p, "}")) {
        if (at_op(p, "**")) {
          if (is_dict == 0) {
            fail(p, "an expression");
            goto fail_brace;
          }
          advance(p);
          SrNode *v = expr(p);
          if (!v) goto fail_brace;
          nl_push(&keys, NULL);
          nl_push(&vals, v);
          is_dict = 1;
        } else {
          SrNode *k = test(p);
          if (!k) goto fail_brace;
          if (at_op(p, ":")) {
            if (is_dict == 0) {
              fail(p, "',' or '}'");
              goto fail_brace;
            }
            size_t colon = p->tok.off;
            advance(p);
            if (at_op(p, "}") || at_op(p, ",")) {
              syntax_error(p, colon, "%s", "expression expected after dictionary key and ':'");
              goto fail_brace;
            }
            if (at_op(p, "*")) {
              syntax_error(p, p->tok.off, "%s", "cannot use a starred expression in a dictionary value");
              goto fail_brace;
            }
            SrNode *v = test(p);
            if (!v) goto fail_brace;
            if (keys.n == 0 && at_kw(p, "for")) {
              free(keys.v);
              free(vals.v);
              SrNode *c = comp_for(p, k, v, SR_COMP_DICT, off);
              if (c && expect_op(p, "}") < 0) return NULL;
              return c;
            }
            nl_push(&keys, k);
            nl_push(&vals, v);
            is_dict = 1;
          } else {
            if (is_dict == 1) {
              /* at the key's last character, as CPython's invalid_kvpair
                 (at the end of the text the ':' may still come) */
              if (p->tok.kind == SR_T_END) fail(p, "':'");
              else syntax_error(p, p->prev_end - 1, "%s", "':' expected after dictionary key");
              goto fail_brace;
            }
            if (keys.n == 0 && at_kw(p, "for")) {
              free(keys.v);
              free(vals.v);
              SrNode *c = comp_for(p, k, NULL, SR_COMP_SET, off);
              if (c && expect_op(p, "}") < 0) return NULL;
              return c;
            }
            nl_push(&keys, k);
            is_dict = 0;
          }
        }
        if (!at_op(p, ",")) break;
        advance(p);
      }
      if (expect_op(p, "}") < 0) goto fail_brace;
      {
        SrNode *n = node(p, is_dict == 0 ? SR_N_SET : SR_N_DICT, off);
        n->list = nl_done(p, &keys, &n->n);
        n->list2 = nl_done(p, &vals, &n->n2);
        return n;
      }
    fail_brace:
      free(keys.v);
      free(vals.v);
      return NULL;
    }
    break;
  default:
    break;
  }
  return fail(p, "an expression");
}

/* subscript: test | [test] ':' [test] [':' [test]] */
static SrNode *subscript(LP *p) {
  size_t off = p->tok.off;
  SrNode *lo = NULL;
  if (!at_op(p, ":")) {
    lo = test(p);
    if (!lo) return NULL;
    if (!at_op(p, ":")) return lo;
  }
  SrNode *s = node(p, SR_N_SLICE, off);
  s->a = lo;
  advance(p); /* : */
  if (!at_op(p, ":") && !at_op(p, "]") && !at_op(p, ",")) {
    s->b = test(p);
    if (!s->b) return NULL;
  }
  if (at_op(p, ":")) {
    advance(p);
    if (!at_op(p, "]") && !at_op(p, ",")) {
      s->c = test(p);
      if (!s->c) return NULL;
    }
  }
  return s;
}

/* arglist: argument (',' argument)* [','];
   argument: test [comp_for] | NAME '=' test | '*' test | '**' test */
static SrNode *call(LP *p, SrNode *fn) {
  /* errors of a call point at the start of the called expression */
  SrNode *n = node(p, SR_N_CALL, fn->off);
  n->a = fn;
  advance(p); /* ( */
  NL args = {0}, kwvals = {0};
  const char **kwnames = NULL;
  int nkw = 0, capkw = 0;
  while (!at_op(p, ")")) {
    SrNode *e = NULL;
    const char *kwname = NULL;
    int is_kw = 0;
    if (at_op(p, "*") || at_op(p, "**")) {
      int dbl = at_op(p, "**");
      size_t so = p->tok.off;
      advance(p);
      e = node(p, SR_N_STARRED, so);
      e->a = test(p);
      if (!e->a) goto fail;
      if (dbl) is_kw = 1; /* kwname stays NULL: a **splat */
    } else if (p->tok.kind == SR_T_NAME && is_op(peek2(p), "=")) {
      kwname = p->tok.text;
      is_kw = 1;
      advance(p);
      advance(p);
      e = test(p);
      if (!e) goto fail;
    } else {
      e = test(p);
      if (!e) goto fail;
      if (at_kw(p, "for")) e = comp_for(p, e, NULL, SR_COMP_GEN, e->off);
      if (!e) goto fail;
    }
    if (is_kw) {
      if (nkw == capkw) {
        capkw = capkw ? 2 * capkw : 4;
        kwnames = sr_xrealloc(kwnames, (size_t)capkw * sizeof *kwnames);
      }
      kwnames[nkw++] = kwname;
      nl_push(&kwvals, e);
    } else {
      if (nkw) {
        p->err = 1;
        sr_error(p->d, SR_E_PARSE, p->src, e->off, "positional argument follows keyword argument");
        goto fail;
      }
      nl_push(&args, e);
    }
    if (!at_op(p, ",")) break;
    advance(p);
  }
  if (expect_op(p, ")") < 0) goto fail;
  n->list = nl_done(p, &args, &n->n);
  n->list2 = nl_done(p, &kwvals, &n->n2);
  n->names = nkw ? sr_arena_memdup(p->a, kwnames, (size_t)nkw * sizeof *kwnames) : NULL;
  free(kwnames);
  return n;
fail:
  free(args.v);
  free(kwvals.v);
  free(kwnames);
  return NULL;
}

/* primary: atom trailer*; trailer: '(' args ')' | '[' subscripts ']' | '.' NAME */
static SrNode *primary(LP *p) {
  SrNode *e = atom(p);
  while (e && !p->err) {
    if (at_op(p, "(")) {
      e = call(p, e);
    } else if (at_op(p, "[")) {
      size_t off = p->tok.off;
      advance(p);
      NL idx = {0};
      int trailing = 0;
      while (!at_op(p, "]")) {
        SrNode *s = subscript(p);
        if (!s) {
          free(idx.v);
          return NULL;
        }
        nl_push(&idx, s);
        trailing = 0;
        if (!at_op(p, ",")) break;
        advance(p);
        trailing = 1;
      }
      if (expect_op(p, "]") < 0 || idx.n == 0) {
        free(idx.v);
        return idx.n == 0 && !p->err ? fail(p, "an index") : NULL;
      }
      SrNode *n = node(p, SR_N_SUBSCRIPT, e->off);
      (void)off;
      n->a = e;
      if (idx.n == 1 && !trailing) {
        n->b = idx.v[0];
        free(idx.v);
      } else {
        SrNode *t = node(p, SR_N_TUPLE, off);
        t->list = nl_done(p, &idx, &t->n);
        n->b = t;
      }
      e = n;
    } else if (at_op(p, ".")) {
      advance(p);
      if (p->tok.kind != SR_T_NAME) return fail(p, "an attribute name");
      SrNode *n = node(p, SR_N_ATTR, e->off);
      n->a = e;
      n->name = p->tok.text;
      advance(p);
      e = n;
    } else {
      break;
    }
  }
  return e;
}

/* power: primary ['**' factor] */
static SrNode *factor(LP *p);
static SrNode *power(LP *p) {
  SrNode *e = primary(p);
  if (e && at_op(p, "**")) {
    /* right-associative: 2 ** 2 ** ... recurses once per operator */
    if (++p->depth > MAX_DEPTH) return fail(p, "a less deeply nested expression");
    SrNode *n = node(p, SR_N_BINOP, p->tok.off);
    advance(p);
    n->op = SR_OP_POW;
    n->a = e;
    n->b = factor(p);
    p->depth--;
    return n->b ? n : NULL;
  }
  return e;
}

/* factor: ('+'|'-'|'~') factor | power */
static SrNode *factor(LP *p) {
  int op = at_op(p, "-") ? SR_OP_NEG : at_op(p, "+") ? SR_OP_POS : at_op(p, "~") ? SR_OP_INVERT : 0;
  if (!op) return power(p);
  if (++p->depth > MAX_DEPTH) return fail(p, "a less deeply nested expression");
  SrNode *n = node(p, SR_N_UNARY, p->tok.off);
  advance(p);
  n->op = (uint8_t)op;
  n->a = factor(p);
  p->depth--;
  return n->a ? n : NULL;
}

typedef struct BinOp {
  const char *tok;
  int op;
} BinOp;

static const BinOp term_ops[] = {{"*", SR_OP_MUL}, {"/", SR_OP_DIV}, {"//", SR_OP_FLOORDIV},
                                 {"%", SR_OP_MOD}, {"@", SR_OP_MATMUL}, {NULL, 0}};
static const BinOp arith_ops[] = {{"+", SR_OP_ADD}, {"-", SR_OP_SUB}, {NULL, 0}};
static const BinOp shift_ops[] = {{"<<", SR_OP_LSHIFT}, {">>", SR_OP_RSHIFT}, {NULL, 0}};
static const BinOp and_ops[] = {{"&", SR_OP_BITAND}, {NULL, 0}};
static const BinOp xor_ops[] = {{"^", SR_OP_BITXOR}, {NULL, 0}};
static const BinOp or_ops[] = {{"|", SR_OP_BITOR}, {NULL, 0}};

/* one level of left-associative binary operators */
static SrNode *binary(LP *p, const BinOp *ops, SrNode *(*sub)(LP *)) {
  SrNode *e = sub(p);
  while (e && p->tok.kind == SR_T_OP) {
    const BinOp *o = ops;
    while (o->tok && strcmp(o->tok, p->tok.text) != 0) o++;
    if (!o->tok) break;
    SrNode *n = node(p, SR_N_BINOP, p->tok.off);
    advance(p);
    n->op = (uint8_t)o->op;
    n->a = e;
    n->b = sub(p);
    e = n->b ? n : NULL;
  }
  return e;
}

static SrNode *term(LP *p) { return binary(p, term_ops, factor); }
static SrNode *arith(LP *p) { return binary(p, arith_ops, term); }
static SrNode *shift_expr(LP *p) { return binary(p, shift_ops, arith); }
static SrNode *and_expr(LP *p) { return binary(p, and_ops, shift_expr); }
static SrNode *xor_expr(LP *p) { return binary(p, xor_ops, and_expr); }
static SrNode *or_expr(LP *p) { return binary(p, or_ops, xor_expr); }
static SrNode *expr(LP *p) {
  if (++p->depth > MAX_DEPTH) return fail(p, "a less deeply nested expression");
  SrNode *e = or_expr(p);
  p->depth--;
  return e;
}

/* comparison: expr (comp_op expr)* */
static int comp_op(LP *p) {
  if (p->tok.kind == SR_T_OP) {
    const char *t = p->tok.text;
    if (!strcmp(t, "==")) return SR_OP_EQ;
    if (!strcmp(t, "!=")) return SR_OP_NE;
    if (!strcmp(t, "<")) return SR_OP_LT;
    if (!strcmp(t, "<=")) return SR_OP_LE;
    if (!strcmp(t, ">")) return SR_OP_GT;
    if (!strcmp(t, ">=")) return SR_OP_GE;
    return 0;
  }
  if (at_kw(p, "in")) return SR_OP_IN;
  if (at_kw(p, "is")) return is_name(peek2(p), "not") ? SR_OP_ISNOT : SR_OP_IS;
  if (at_kw(p, "not") && is_name(peek2(p), "in")) return SR_OP_NOTIN;
  return 0;
}

static SrNode *comparison(LP *p) {
  SrNode *e = expr(p);
  int op = e ? comp_op(p) : 0;
  if (!op) return e;
  SrNode *n = node(p, SR_N_COMPARE, p->tok.off);
  n->a = e;
  NL rest = {0};
  uint8_t ops[64];
  int nops = 0;
  while ((op = comp_op(p)) != 0) {
    advance(p);
    if (op == SR_OP_ISNOT || op == SR_OP_NOTIN) advance(p);
    SrNode *r = expr(p);
    if (!r || nops == 64) {
      free(rest.v);
      return r ? fail(p, "fewer chained comparisons") : NULL;
    }
    ops[nops++] = (uint8_t)op;
    nl_push(&rest, r);
  }
  n->list = nl_done(p, &rest, &n->n);
  n->ops = sr_arena_memdup(p->a, ops, (size_t)nops);
  return n;
}

/* not_test: 'not' not_test | comparison */
static SrNode *not_test(LP *p) {
  if (!at_kw(p, "not")) return comparison(p);
  if (++p->depth > MAX_DEPTH) return fail(p, "a less deeply nested expression");
  SrNode *n = node(p, SR_N_UNARY, p->tok.off);
  advance(p);
  n->op = SR_OP_NOT;
  n->a = not_test(p);
  p->depth--;
  return n->a ? n : NULL;
}

static SrNode *boolop(LP *p, const char *word, int op, SrNode *(*sub)(LP *)) {
  SrNode *e = sub(p);
  if (!e || !at_kw(p, word)) return e;
  SrNode *n = node(p, SR_N_BOOLOP, p->tok.off);
  n->op = (uint8_t)op;
  NL items = {0};
  nl_push(&items, e);
  while (at_kw(p, word)) {
    advance(p);
    SrNode *r = sub(p);
    if (!r) {
      free(items.v);
      return NULL;
    }
    nl_push(&items, r);
  }
  n->list = nl_done(p, &items, &n->n);
  return n;
}

static SrNode *and_test(LP *p) { return boolop(p, "and", SR_OP_AND, not_test); }
static SrNode *or_test(LP *p) { return boolop(p, "or", SR_OP_OR, and_test); }

/* A syntax error that CPython words as a sentence of its own, not as
   "X expected". */
static void *syntax_error(LP *p, size_t off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  p->err = 1;
  sr_verror(p->d, SR_E_PARSE, p->src, off, fmt, ap);
  va_end(ap);
  return NULL;
}

/* Whether name is one of the n names or the *, ** names already seen. */
static int param_seen(const SrParams *ps, const char **names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (names[i] == name) return 1; /* interned */
  return ps->star == name || ps->kwstar == name;
}

/* params: param (',' param)* with defaults, '*' [NAME], '**' NAME, '/',
   and annotations that are parsed and ignored */
static SrParams *params(LP *p, const char *close) {
  SrParams *ps = SR_NEW(p->a, SrParams);
  const char *names[256];
  SrNode *defaults[256];
  int n = 0, kwonly_from = -1;
  while (!at_op(p, close)) {
    if (at_op(p, "/")) {
      ps->nposonly = n;
      advance(p);
    } else if (at_op(p, "**")) {
      advance(p);
      if (p->tok.kind != SR_T_NAME) return fail(p, "a parameter name"), NULL;
      if (param_seen(ps, names, n, p->tok.text))
        return syntax_error(p, p->tok.off, "duplicate argument '%s' in function definition", p->tok.text);
      ps->kwstar = p->tok.text;
      advance(p);
    } else if (at_op(p, "*")) {
      advance(p);
      if (p->tok.kind == SR_T_NAME) {
        if (param_seen(ps, names, n, p->tok.text))
        return syntax_error(p, p->tok.off, "duplicate argument '%s' in function definition", p->tok.text);
        ps->star = p->tok.text;
        advance(p);
      }
      kwonly_from = n;
    } else {
      if (p->tok.kind != SR_T_NAME || n == 256) return fail(p, "a parameter name"), NULL;
      if (param_seen(ps, names, n, p->tok.text))
        return syntax_error(p, p->tok.off, "duplicate argument '%s' in function definition", p->tok.text);
      names[n] = p->tok.text;
      defaults[n] = NULL;
      size_t name_off = p->tok.off;
      advance(p);
      if (at_op(p, ":") && strcmp(close, ":") != 0) {
        advance(p);
        if (!test(p)) return NULL;
      }
      if (at_op(p, "=")) {
        advance(p);
        defaults[n] = test(p);
        if (!defaults[n]) return NULL;
      } else if (kwonly_from < 0 && n > 0 && defaults[n - 1]) {
        /* keyword-only parameters may go without defaults in any order */
        return syntax_error(p, name_off, "%s", "non-default argument follows default argument");
      }
      n++;
    }
    if (!at_op(p, ",")) break;
    advance(p);
  }
  ps->n = n;
  ps->names = sr_arena_memdup(p->a, names, (size_t)n * sizeof *names);
  ps->defaults = sr_arena_memdup(p->a, defaults, (size_t)n * sizeof *defaults);
  ps->nkwonly = kwonly_from >= 0 ? n - kwonly_from : 0;
  return ps;
}

/* lambda: 'lambda' [params] ':' test */
static SrNode *lambda(LP *p) {
  SrNode *n = node(p, SR_N_LAMBDA, p->tok.off);
  advance(p);
  n->params = params(p, ":");
  if (!n->params || expect_op(p, ":") < 0) return NULL;
  /* lambda: lambda: ... nests without parentheses */
  if (++p->depth > MAX_DEPTH) return fail(p, "a less deeply nested expression");
  n->a = test(p);
  p->depth--;
  return n->a ? n : NULL;
}

/* test: or_test ['if' or_test 'else' test] | lambda */
static SrNode *test(LP *p) {
  if (p->err) return NULL;
  if (at_kw(p, "lambda")) return lambda(p);
  SrNode *e = or_test(p);
  if (!e || !at_kw(p, "if")) return e;
  /* a conditional expression, unless this 'if' belongs to a comprehension */
  SrNode *n = node(p, SR_N_IFEXP, p->tok.off);
  advance(p);
  n->b = e;
  n->a = or_test(p);
  if (!n->a) return NULL;
  if (!at_kw(p, "else")) return fail(p, "'else' in a conditional expression");
  advance(p);
  /* a if b else c if d else ... nests once per 'else' */
  if (++p->depth > MAX_DEPTH) return fail(p, "a less deeply nested expression");
  n->c = test(p);
  p->depth--;
  return n->c ? n : NULL;
}

/* target list of a for: expr (',' expr)* */
static SrNode *for_target(LP *p) {
  size_t off = p->tok.off;
  NL items = {0};
  int comma = 0;
  for (;;) {
    SrNode *e = or_expr(p);
    if (!e) {
      free(items.v);
      return NULL;
    }
    nl_push(&items, e);
    if (!at_op(p, ",")) break;
    advance(p);
    comma = 1;
    if (at_kw(p, "in")) break;
  }
  if (items.n == 1 && !comma) {
    SrNode *r = items.v[0];
    free(items.v);
    return r;
  }
  SrNode *t = node(p, SR_N_TUPLE, off);
  t->list = nl_done(p, &items, &t->n);
  return t;
}

/* comp_for: ('for' target 'in' or_test ('if' or_test)*)+ */
static SrNode *comp_for(LP *p, SrNode *elt, SrNode *val, int kind, size_t off) {
  SrNode *c = node(p, SR_N_COMP, off);
  c->op = (uint8_t)kind;
  c->a = elt;
  c->b = val;
  NL gens = {0};
  while (at_kw(p, "for")) {
    SrNode *g = node(p, SR_N_COMPFOR, p->tok.off);
    advance(p);
    g->a = for_target(p);
    if (!g->a) goto fail;
    if (!at_kw(p, "in")) {
      fail(p, "'in'");
      goto fail;
    }
    advance(p);
    g->b = or_test(p);
    if (!g->b) goto fail;
    NL ifs = {0};
    while (at_kw(p, "if")) {
      advance(p);
      SrNode *cond = or_test(p);
      if (!cond) {
        free(ifs.v);
        goto fail;
      }
      nl_push(&ifs, cond);
    }
    g->list = nl_done(p, &ifs, &g->n);
    nl_push(&gens, g);
  }
  c->list = nl_done(p, &gens, &c->n);
  return c;
fail:
  free(gens.v);
  return NULL;
}

static int at_line_end(LP *p);

/* yield_expr: 'yield' [testlist_star] | 'yield' 'from' test -- inside a
   def, whose body it makes a generator's */
static SrNode *yield_expr(LP *p) {
  size_t off = p->tok.off;
  if (!p->in_def) return syntax_error(p, off, "%s", "'yield' outside function");
  advance(p);
  p->yields++;
  SrNode *n = node(p, SR_N_YIELD, off);
  if (at_kw(p, "from")) {
    advance(p);
    n->op = 1;
    n->a = test(p);
    return n->a ? n : NULL;
  }
  if (at_line_end(p) || at_op(p, ")") || at_op(p, "]") || at_op(p, "}") || at_op(p, "=")) return n;
  n->a = testlist_star(p, 1);
  return n->a ? n : NULL;
}

/* testlist_star: (test|star_expr) (',' (test|star_expr))* [','] -- a tuple
   when there is a comma */
static SrNode *testlist_star(LP *p, int allow_star) {
  if (at_kw(p, "yield")) return yield_expr(p);
  size_t off = p->tok.off;
  NL items = {0};
  int comma = 0;
  for (;;) {
    SrNode *e = star_or_test(p, allow_star);
    if (!e) {
      free(items.v);
      return NULL;
    }
    nl_push(&items, e);
    if (!at_op(p, ",")) break;
    advance(p);
    comma = 1;
    if (p->tok.kind == SR_T_NEWLINE || p->tok.kind == SR_T_END || at_op(p, "=") ||
        at_op(p, ")") || at_op(p, ";") || at_op(p, ":"))
      break;
  }
  if (items.n == 1 && !comma) {
    SrNode *r = items.v[0];
    free(items.v);
    return r;
  }
  SrNode *t = node(p, SR_N_TUPLE, off);
  t->list = nl_done(p, &items, &t->n);
  return t;
}

/* ---- statements ---- */

static int at_line_end(LP *p) {
  return p->tok.kind == SR_T_NEWLINE || p->tok.kind == SR_T_END || at_op(p, ";");
}

static int is_target(SrNode *e) {
  switch (e->kind) {
  case SR_N_NAME:
  case SR_N_ATTR:
  case SR_N_SUBSCRIPT: return 1;
  case SR_N_STARRED: return is_target(e->a);
  case SR_N_TUPLE:
  case SR_N_LIST:
    for (int i = 0; i < e->n; i++)
      if (!is_target(e->list[i])) return 0;
    return 1;
  default: return 0;
  }
}

static SrNode *bad_target(LP *p, SrNode *e) {
  p->err = 1;
  sr_error(p->d, SR_E_PARSE, p->src, e->off, "cannot assign to this expression");
  return NULL;
}

static const char *dotted_name(LP *p) {
  if (p->tok.kind != SR_T_NAME) return fail(p, "a module name"), NULL;
  SrBuf b = SR_BUF_INIT;
  sr_buf_puts(&b, p->tok.text);
  advance(p);
  while (at_op(p, ".")) {
    advance(p);
    if (p->tok.kind != SR_T_NAME) {
      sr_buf_free(&b);
      return fail(p, "a module name"), NULL;
    }
    sr_buf_putc(&b, '.');
    sr_buf_puts(&b, p->tok.text);
    advance(p);
  }
  const char *r = sr_intern(b.p, b.len);
  sr_buf_free(&b);
  return r;
}

static SrNode *import_stmt(LP *p) {
  SrNode *n = node(p, SR_N_IMPORT, p->tok.off);
  advance(p);
  NL items = {0};
  for (;;) {
    SrNode *al = node(p, SR_N_ALIAS, p->tok.off);
    al->name = dotted_name(p);
    if (!al->name) goto fail;
    if (at_kw(p, "as")) {
      advance(p);
      if (p->tok.kind != SR_T_NAME) {
        fail(p, "a name after 'as'");
        goto fail;
      }
      al->name2 = p->tok.text;
      advance(p);
    }
    nl_push(&items, al);
    if (!at_op(p, ",")) break;
    advance(p);
  }
  n->list = nl_done(p, &items, &n->n);
  return n;
fail:
  free(items.v);
  return NULL;
}

static SrNode *from_stmt(LP *p) {
  SrNode *n = node(p, SR_N_FROM, p->tok.off);
  advance(p);
  n->name = dotted_name(p);
  if (!n->name) return NULL;
  if (!at_kw(p, "import")) return fail(p, "'import'");
  advance(p);
  int paren = at_op(p, "(");
  if (paren) advance(p);
  NL items = {0};
  for (;;) {
    if (paren && at_op(p, ")")) break;
    SrNode *al = node(p, SR_N_ALIAS, p->tok.off);
    if (at_op(p, "*")) {
      al->name = kw("*");
      advance(p);
    } else if (p->tok.kind == SR_T_NAME) {
      al->name = p->tok.text;
      advance(p);
    } else {
      free(items.v);
      return fail(p, "a name to import");
    }
    if (at_kw(p, "as")) {
      advance(p);
      if (p->tok.kind != SR_T_NAME) {
        free(items.v);
        return fail(p, "a name after 'as'");
      }
      al->name2 = p->tok.text;
      advance(p);
    }
    nl_push(&items, al);
    if (!at_op(p, ",")) break;
    advance(p);
  }
  if (paren && expect_op(p, ")") < 0) {
    free(items.v);
    return NULL;
  }
  n->list = nl_done(p, &items, &n->n);
  return n;
}

static const BinOp aug_ops[] = {{"+=", SR_OP_ADD}, {"-=", SR_OP_SUB}, {"*=", SR_OP_MUL},
                                {"/=", SR_OP_DIV}, {"//=", SR_OP_FLOORDIV}, {"%=", SR_OP_MOD},
                                {"**=", SR_OP_POW}, {"@=", SR_OP_MATMUL}, {"&=", SR_OP_BITAND},
                                {"|=", SR_OP_BITOR}, {"^=", SR_OP_BITXOR}, {"<<=", SR_OP_LSHIFT},
                                {">>=", SR_OP_RSHIFT}, {NULL, 0}};

/* small_stmt */
static SrNode *small_stmt(LP *p) {
  size_t off = p->tok.off;
  if (p->tok.kind == SR_T_NAME) {
    const char *w = p->tok.text;
    if (w == kw("pass") || w == kw("break") || w == kw("continue")) {
      advance(p);
      return node(p, w == kw("pass") ? SR_N_PASS : w == kw("break") ? SR_N_BREAK : SR_N_CONTINUE, off);
    }
    if (w == kw("return")) {
      if (!p->in_def) return syntax_error(p, off, "%s", "'return' outside function");
      advance(p);
      SrNode *n = node(p, SR_N_RETURN, off);
      if (!at_line_end(p)) {
        n->a = testlist_star(p, 1);
        if (!n->a) return NULL;
      }
      return n;
    }
    if (w == kw("import")) return import_stmt(p);
    if (w == kw("from")) return from_stmt(p);
    if (w == kw("assert")) {
      advance(p);
      SrNode *n = node(p, SR_N_ASSERT, off);
      n->a = test(p);
      if (!n->a) return NULL;
      if (at_op(p, ",")) {
        advance(p);
        n->b = test(p);
        if (!n->b) return NULL;
      }
      return n;
    }
    if (w == kw("raise")) {
      advance(p);
      SrNode *n = node(p, SR_N_RAISE, off);
      if (!at_line_end(p)) {
        n->a = test(p);
        if (!n->a) return NULL;
        if (at_kw(p, "from")) {
          advance(p);
          n->b = test(p);
          if (!n->b) return NULL;
        }
      }
      return n;
    }
    if (w == kw("del")) {
      advance(p);
      SrNode *n = node(p, SR_N_DEL, off);
      SrNode *t = testlist_star(p, 0);
      if (!t) return NULL;
      if (t->kind == SR_N_TUPLE) {
        n->list = t->list;
        n->n = t->n;
      } else {
        n->list = sr_arena_memdup(p->a, &t, sizeof t);
        n->n = 1;
      }
      return n;
    }
    if (w == kw("global") || w == kw("nonlocal")) {
      advance(p);
      SrNode *n = node(p, SR_N_GLOBAL, off);
      n->op = w == kw("global");
      NL names = {0};
      while (p->tok.kind == SR_T_NAME) {
        SrNode *nm = node(p, SR_N_NAME, p->tok.off);
        nm->name = p->tok.text;
        nl_push(&names, nm);
        advance(p);
        if (!at_op(p, ",")) break;
        advance(p);
      }
      n->list = nl_done(p, &names, &n->n);
      return n;
    }
  }
  SrNode *e = testlist_star(p, 1);
  if (!e) return NULL;
  if (p->tok.kind == SR_T_OP) {
    for (const BinOp *o = aug_ops; o->tok; o++)
      if (strcmp(o->tok, p->tok.text) == 0) {
        if (e->kind != SR_N_NAME && e->kind != SR_N_ATTR && e->kind != SR_N_SUBSCRIPT)
          return bad_target(p, e);
        SrNode *n = node(p, SR_N_AUGASSIGN, p->tok.off);
        advance(p);
        n->op = (uint8_t)o->op;
        n->a = e;
        n->b = testlist_star(p, 0);
        return n->b ? n : NULL;
      }
    if (at_op(p, ":") && (e->kind == SR_N_NAME || e->kind == SR_N_ATTR || e->kind == SR_N_SUBSCRIPT)) {
      /* an annotated assignment: x: T = v; T is kept as text (a class
         body records it in __annotations__), never evaluated */
      SrNode *n = node(p, SR_N_ANNOT, off);
      n->a = e;
      advance(p);
      size_t at = p->tok.off;
      if (!test(p)) return NULL;
      size_t end = p->tok.off;
      while (end > at && (p->src->text[end - 1] == ' ' || p->src->text[end - 1] == '\t')) end--;
      n->doc = sr_arena_strndup(p->a, p->src->text + at, end > at ? end - at : 0);
      if (at_op(p, "=")) {
        advance(p);
        n->b = testlist_star(p, 1);
        if (!n->b) return NULL;
      }
      return n;
    }
    if (at_op(p, "=")) {
      SrNode *n = node(p, SR_N_ASSIGN, p->tok.off);
      NL targets = {0};
      nl_push(&targets, e);
      SrNode *v = NULL;
      while (at_op(p, "=")) {
        advance(p);
        v = testlist_star(p, 1);
        if (!v) {
          free(targets.v);
          return NULL;
        }
        if (at_op(p, "=")) nl_push(&targets, v);
      }
      for (int i = 0; i < targets.n; i++)
        if (!is_target(targets.v[i])) {
          SrNode *bad = targets.v[i];
          free(targets.v);
          return bad_target(p, bad);
        }
      n->list = nl_done(p, &targets, &n->n);
      n->a = v;
      return n;
    }
  }
  SrNode *n = node(p, SR_N_EXPR, off);
  n->a = e;
  return n;
}

/* simple_stmts: small_stmt (';' small_stmt)* [';'] NEWLINE -- returned as
   one node, or a block-like IF(True) when there are several */
static SrNode *simple_stmts(LP *p, NL *out) {
  for (;;) {
    SrNode *s = small_stmt(p);
    if (!s) return NULL;
    nl_push(out, s);
    if (!at_op(p, ";")) break;
    advance(p);
    if (p->tok.kind == SR_T_NEWLINE || p->tok.kind == SR_T_END) break;
  }
  if (p->tok.kind == SR_T_NEWLINE) {
    advance(p);
  } else if (p->tok.kind != SR_T_END) {
    return fail(p, "the end of the statement");
  }
  return out->v[out->n - 1];
}

/* block: simple_stmts | NEWLINE INDENT stmt+ DEDENT */
static SrNode **block(LP *p, int *n) {
  NL body = {0};
  *n = 0;
  if (p->tok.kind != SR_T_NEWLINE) {
    if (!simple_stmts(p, &body)) {
      free(body.v);
      return NULL;
    }
    return nl_done(p, &body, n);
  }
  advance(p);
  if (p->tok.kind != SR_T_INDENT) {
    fail(p, "an indented block");
    return NULL;
  }
  advance(p);
  while (p->tok.kind != SR_T_DEDENT && p->tok.kind != SR_T_END) {
    SrNode *s = stmt(p);
    if (!s) {
      free(body.v);
      return NULL;
    }
    /* stmt() returns the last of a line's statements; take them all */
    if (s->kind == SR_N_SEQ) {
      for (int i = 0; i < s->n; i++) nl_push(&body, s->list[i]);
    } else {
      nl_push(&body, s);
    }
  }
  if (p->tok.kind == SR_T_DEDENT) advance(p);
  return nl_done(p, &body, n);
}

static int colon_block(LP *p, SrNode ***body, int *n) {
  if (expect_op(p, ":") < 0) return -1;
  *body = block(p, n);
  return *body ? 0 : -1;
}

static SrNode *if_stmt(LP *p) {
  SrNode *n = node(p, SR_N_IF, p->tok.off);
  advance(p);
  n->a = test(p);
  if (!n->a || colon_block(p, &n->list, &n->n) < 0) return NULL;
  if (at_kw(p, "elif")) {
    SrNode *e = if_stmt(p);
    if (!e) return NULL;
    n->list2 = sr_arena_memdup(p->a, &e, sizeof e);
    n->n2 = 1;
  } else if (at_kw(p, "else")) {
    advance(p);
    if (colon_block(p, &n->list2, &n->n2) < 0) return NULL;
  }
  return n;
}

static SrNode *def_stmt(LP *p, NL *decorators, size_t start) {
  SrNode *n = node(p, SR_N_DEF, p->tok.off);
  /* into the arena first: a syntax error below must not leak the list */
  n->list2 = nl_done(p, decorators, &n->n2);
  advance(p);
  if (p->tok.kind != SR_T_NAME) return fail(p, "a function name");
  n->name = p->tok.text;
  advance(p);
  if (expect_op(p, "(") < 0) return NULL;
  n->params = params(p, ")");
  if (!n->params || expect_op(p, ")") < 0) return NULL;
  if (at_op(p, "->")) {
    advance(p);
    if (!test(p)) return NULL;
  }
  p->in_def++;
  int yields = p->yields;
  p->yields = 0;
  int rc = colon_block(p, &n->list, &n->n);
  if (p->yields) n->op = 1;
  p->yields = yields;
  p->in_def--;
  if (rc < 0) return NULL;
  size_t end = p->tok.off;
  n->doc = sr_arena_strndup(p->a, p->src->text + start, end > start ? end - start : 0);
  return n;
}

/* classdef: 'class' NAME ['(' [arguments] ')'] ':' block -- the bases
   positional; a keyword (metaclass=) is refused. */
static SrNode *class_stmt(LP *p, NL *decorators) {
  SrNode *n = node(p, SR_N_CLASS, p->tok.off);
  n->list2 = nl_done(p, decorators, &n->n2);
  advance(p);
  if (p->tok.kind != SR_T_NAME) return fail(p, "a class name");
  n->name = p->tok.text;
  advance(p);
  if (at_op(p, "(")) {
    SrNode *c = call(p, n);
    if (!c) return NULL;
    if (c->n2) return syntax_error(p, c->list2[0]->off, "%s", "class keywords (metaclass=...) are not supported");
    for (int i = 0; i < c->n; i++)
      if (c->list[i]->kind == SR_N_STARRED) return syntax_error(p, c->list[i]->off, "%s", "a starred base class is not supported");
    n->list3 = c->list;
    n->n3 = c->n;
  }
  /* return, even in a class inside a function, is outside a function */
  int in_def = p->in_def;
  p->in_def = 0;
  int rc = colon_block(p, &n->list, &n->n);
  p->in_def = in_def;
  if (rc < 0) return NULL;
  if (n->n && n->list[0]->kind == SR_N_EXPR && n->list[0]->a->kind == SR_N_CONST &&
      n->list[0]->a->val->kind == SR_V_STR)
    n->doc = n->list[0]->a->val->str.s;
  return n;
}

static SrNode *compound(LP *p) {
  size_t off = p->tok.off;
  const char *w = p->tok.text;
  if (w == kw("if")) return if_stmt(p);
  if (w == kw("while") || w == kw("for")) {
    SrNode *n = node(p, w == kw("while") ? SR_N_WHILE : SR_N_FOR, off);
    advance(p);
    if (n->kind == SR_N_FOR) {
      n->a = for_target(p);
      if (!n->a) return NULL;
      if (!at_kw(p, "in")) return fail(p, "'in'");
      advance(p);
      n->b = testlist_star(p, 0);
      if (!n->b) return NULL;
    } else {
      n->a = test(p);
      if (!n->a) return NULL;
    }
    if (colon_block(p, &n->list, &n->n) < 0) return NULL;
    if (at_kw(p, "else")) {
      advance(p);
      if (colon_block(p, &n->list2, &n->n2) < 0) return NULL;
    }
    return n;
  }
  if (w == kw("try")) {
    SrNode *n = node(p, SR_N_TRY, off);
    advance(p);
    if (colon_block(p, &n->list, &n->n) < 0) return NULL;
    NL handlers = {0};
    while (at_kw(p, "except")) {
      SrNode *h = node(p, SR_N_HANDLER, p->tok.off);
      advance(p);
      if (!at_op(p, ":")) {
        h->a = test(p);
        if (!h->a) goto fail_try;
        if (at_kw(p, "as")) {
          advance(p);
          if (p->tok.kind != SR_T_NAME) {
            fail(p, "a name after 'as'");
            goto fail_try;
          }
          h->name = p->tok.text;
          advance(p);
        }
      }
      if (colon_block(p, &h->list, &h->n) < 0) goto fail_try;
      nl_push(&handlers, h);
    }
    if (at_kw(p, "else")) {
      /* try/else: run after the body when nothing was raised */
      advance(p);
      SrNode **eb;
      int en;
      if (colon_block(p, &eb, &en) < 0) goto fail_try;
      SrNode **all = sr_arena_alloc(p->a, (size_t)(n->n + en) * sizeof *all);
      memcpy(all, n->list, (size_t)n->n * sizeof *all);
      memcpy(all + n->n, eb, (size_t)en * sizeof *all);
      n->list = all;
      n->n += en;
    }
    if (at_kw(p, "finally")) {
      advance(p);
      if (colon_block(p, &n->list3, &n->n3) < 0) goto fail_try;
    }
    if (handlers.n == 0 && n->n3 == 0) {
      fail(p, "'except' or 'finally'");
      goto fail_try;
    }
    n->list2 = nl_done(p, &handlers, &n->n2);
    return n;
  fail_try:
    free(handlers.v);
    return NULL;
  }
  if (w == kw("with")) {
    SrNode *n = node(p, SR_N_WITH, off);
    advance(p);
    NL items = {0};
    for (;;) {
      SrNode *it = node(p, SR_N_WITHITEM, p->tok.off);
      it->a = test(p);
      if (!it->a) {
        free(items.v);
        return NULL;
      }
      if (at_kw(p, "as")) {
        advance(p);
        it->b = or_expr(p);
        if (!it->b) {
          free(items.v);
          return NULL;
        }
      }
      nl_push(&items, it);
      if (!at_op(p, ",")) break;
      advance(p);
    }
    n->list2 = nl_done(p, &items, &n->n2);
    if (colon_block(p, &n->list, &n->n) < 0) return NULL;
    return n;
  }
  if (w == kw("def")) {
    NL none = {0};
    return def_stmt(p, &none, off);
  }
  if (w == kw("class")) {
    NL none = {0};
    return class_stmt(p, &none);
  }
  return NULL;
}

/* ---- match statements (PEP 634) ---- */

/* whether the logical line at p->tok ends with ':' (a soft keyword's
   statement: `match x:` and `case ...:`, not `match(x)` or `match = 1`) */
static int line_ends_with_colon(LP *p) {
  const char *s = p->lx.s;
  size_t n = p->lx.len, i = p->tok.off, last = 0;
  int depth = 0;
  char q = 0;
  for (; i < n; i++) {
    char c = s[i];
    if (q) {
      if (c == '\\') i++;
      else if (c == q) q = 0;
      continue;
    }
    if (c == '\'' || c == '"') q = c;
    else if (c == '#') {
      while (i < n && s[i] != '\n') i++;
      if (depth == 0) break;
      continue;
    } else if (c == '(' || c == '[' || c == '{') depth++;
    else if (c == ')' || c == ']' || c == '}') depth--;
    else if (c == '\n' && depth <= 0) break;
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') last = i + 1;
  }
  return last > 0 && s[last - 1] == ':';
}

static SrNode *pattern(LP *p);

/* a dotted name: NAME ('.' NAME)* as SR_N_NAME / SR_N_ATTR */
static SrNode *dotted_value(LP *p) {
  SrNode *e = node(p, SR_N_NAME, p->tok.off);
  e->name = p->tok.text;
  advance(p);
  while (at_op(p, ".")) {
    advance(p);
    if (p->tok.kind != SR_T_NAME) return fail(p, "a name after '.'");
    SrNode *a = node(p, SR_N_ATTR, p->tok.off);
    a->a = e;
    a->name = p->tok.text;
    advance(p);
    e = a;
  }
  return e;
}

/* the patterns up to close (one of ")]"), separated by commas: *n of them;
   *comma: whether a comma was seen */
static SrNode **pattern_list(LP *p, const char *close, int *n, int *comma) {
  NL l = {0};
  *comma = 0;
  while (!at_op(p, close)) {
    SrNode *x = pattern(p);
    if (!x) {
      free(l.v);
      return NULL;
    }
    nl_push(&l, x);
    if (!at_op(p, ",")) break;
    *comma = 1;
    advance(p);
  }
  return nl_done(p, &l, n);
}

static SrNode *closed_pattern(LP *p) {
  size_t off = p->tok.off;
  if (at_op(p, "*")) {
    advance(p);
    if (p->tok.kind != SR_T_NAME) return fail(p, "a name after '*'");
    SrNode *n = node(p, SR_N_PSTAR, off);
    n->name = p->tok.text == kw("_") ? NULL : p->tok.text;
    advance(p);
    return n;
  }
  if (at_op(p, "(") || at_op(p, "[")) {
    int paren = at_op(p, "(");
    advance(p);
    int comma;
    SrNode *n = node(p, SR_N_PSEQ, off);
    n->list = pattern_list(p, paren ? ")" : "]", &n->n, &comma);
    if (p->err || expect_op(p, paren ? ")" : "]") < 0) return NULL;
    /* (p) groups; (p,) and [p] are sequences */
    if (paren && n->n == 1 && !comma && n->list[0]->kind != SR_N_PSTAR) return n->list[0];
    return n;
  }
  if (at_op(p, "{")) {
    advance(p);
    SrNode *n = node(p, SR_N_PMAP, off);
    NL keys = {0}, vals = {0};
    while (!at_op(p, "}")) {
      if (at_op(p, "**")) {
        advance(p);
        if (p->tok.kind != SR_T_NAME) break;
        n->name = p->tok.text;
        advance(p);
      } else {
        SrNode *k = node(p, SR_N_PVALUE, p->tok.off);
        k->a = p->tok.kind == SR_T_NAME && p->tok.text != kw("None") && p->tok.text != kw("True") &&
                       p->tok.text != kw("False")
                   ? dotted_value(p)
                   : arith(p);
        SrNode *v = k->a && expect_op(p, ":") == 0 ? pattern(p) : NULL;
        if (!v) {
          free(keys.v);
          free(vals.v);
          return NULL;
        }
        nl_push(&keys, k);
        nl_push(&vals, v);
      }
      if (!at_op(p, ",")) break;
      advance(p);
    }
    n->list = nl_done(p, &keys, &n->n);
    n->list2 = nl_done(p, &vals, &n->n2);
    if (expect_op(p, "}") < 0) return NULL;
    return n;
  }
  if (p->tok.kind == SR_T_NAME && p->tok.text != kw("None") && p->tok.text != kw("True") &&
      p->tok.text != kw("False")) {
    int dotted = is_op(peek2(p), ".");
    if (!dotted && !is_op(peek2(p), "(")) { /* a capture, or the wildcard */
      SrNode *n = node(p, SR_N_PCAPTURE, off);
      n->name = p->tok.text == kw("_") ? NULL : p->tok.text;
      advance(p);
      return n;
    }
    SrNode *cls = dotted_value(p);
    if (!cls) return NULL;
    if (!at_op(p, "(")) {
      SrNode *n = node(p, SR_N_PVALUE, off);
      n->a = cls;
      return n;
    }
    advance(p);
    SrNode *n = node(p, SR_N_PCLASS, off);
    n->a = cls;
    NL pos = {0}, kwv = {0};
    const char **names = NULL;
    int nkw = 0;
    while (!at_op(p, ")")) {
      if (p->tok.kind == SR_T_NAME && is_op(peek2(p), "=")) {
        const char *k = p->tok.text;
        advance(p);
        advance(p);
        SrNode *v = pattern(p);
        if (!v) break;
        names = sr_xrealloc(names, (size_t)(nkw + 1) * sizeof *names);
        names[nkw++] = k;
        nl_push(&kwv, v);
      } else {
        if (nkw) {
          syntax_error(p, p->tok.off, "%s", "positional patterns follow keyword patterns");
          break;
        }
        SrNode *v = pattern(p);
        if (!v) break;
        nl_push(&pos, v);
      }
      if (!at_op(p, ",")) break;
      advance(p);
    }
    n->list = nl_done(p, &pos, &n->n);
    n->list2 = nl_done(p, &kwv, &n->n2);
    n->names = nkw ? sr_arena_memdup(p->a, names, (size_t)nkw * sizeof *names) : NULL;
    free(names);
    if (p->err || expect_op(p, ")") < 0) return NULL;
    return n;
  }
  /* a literal: a number (signed, complex), a string, None, True, False */
  SrNode *n = node(p, SR_N_PVALUE, off);
  n->a = arith(p);
  return n->a ? n : NULL;
}

/* pattern: closed ('|' closed)* ['as' NAME] */
static SrNode *pattern(LP *p) {
  size_t off = p->tok.off;
  SrNode *e = closed_pattern(p);
  if (e && at_op(p, "|")) {
    NL alts = {0};
    nl_push(&alts, e);
    while (at_op(p, "|")) {
      advance(p);
      SrNode *x = closed_pattern(p);
      if (!x) {
        free(alts.v);
        return NULL;
      }
      nl_push(&alts, x);
    }
    e = node(p, SR_N_POR, off);
    e->list = nl_done(p, &alts, &e->n);
  }
  if (e && at_kw(p, "as")) {
    advance(p);
    if (p->tok.kind != SR_T_NAME) return fail(p, "a name after 'as'");
    SrNode *a = node(p, SR_N_PAS, off);
    a->a = e;
    a->name = p->tok.text;
    advance(p);
    e = a;
  }
  return e;
}

/* match_stmt: 'match' subject ':' NEWLINE INDENT case_block+ DEDENT */
static SrNode *match_stmt(LP *p) {
  SrNode *n = node(p, SR_N_MATCH, p->tok.off);
  advance(p);
  n->a = testlist_star(p, 1);
  if (!n->a || expect_op(p, ":") < 0) return NULL;
  if (p->tok.kind != SR_T_NEWLINE) return fail(p, "a new line after 'match ...:'");
  advance(p);
  if (p->tok.kind != SR_T_INDENT) return fail(p, "an indented block of cases");
  advance(p);
  NL cases = {0};
  while (at_kw(p, "case")) {
    SrNode *c = node(p, SR_N_CASE, p->tok.off);
    advance(p);
    /* case a, b: an open sequence pattern */
    size_t off = p->tok.off;
    int comma;
    int np;
    SrNode **ps = pattern_list(p, ":", &np, &comma);
    if (!ps && (p->err || np)) {
      free(cases.v);
      return NULL;
    }
    if (np == 1 && !comma && ps[0]->kind != SR_N_PSTAR) {
      c->a = ps[0];
    } else {
      c->a = node(p, SR_N_PSEQ, off);
      c->a->list = ps;
      c->a->n = np;
    }
    if (at_kw(p, "if")) {
      advance(p);
      c->b = test(p);
      if (!c->b) {
        free(cases.v);
        return NULL;
      }
    }
    if (colon_block(p, &c->list, &c->n) < 0) {
      free(cases.v);
      return NULL;
    }
    nl_push(&cases, c);
  }
  if (!cases.n) return fail(p, "'case'");
  n->list = nl_done(p, &cases, &n->n);
  if (p->tok.kind == SR_T_DEDENT) advance(p);
  else if (p->tok.kind != SR_T_END) return fail(p, "the end of the match block");
  return n;
}

/* stmt: compound_stmt | decorated | simple_stmts */
static SrNode *stmt(LP *p) {
  if (p->err) return NULL;
  size_t off = p->tok.off;
  if (at_op(p, "@")) {
    NL decos = {0};
    while (at_op(p, "@")) {
      advance(p);
      SrNode *d = test(p);
      if (!d) {
        free(decos.v);
        return NULL;
      }
      nl_push(&decos, d);
      if (p->tok.kind != SR_T_NEWLINE) {
        free(decos.v);
        return fail(p, "a new line after the decorator");
      }
      advance(p);
    }
    if (at_kw(p, "class")) return class_stmt(p, &decos);
    if (!at_kw(p, "def")) {
      free(decos.v);
      return fail(p, "'def' or 'class' after decorators");
    }
    return def_stmt(p, &decos, off);
  }
  if (p->tok.kind == SR_T_NAME) {
    const char *w = p->tok.text;
    if (w == kw("if") || w == kw("while") || w == kw("for") || w == kw("try") || w == kw("with") ||
        w == kw("def") || w == kw("class"))
      return compound(p);
    if (w == kw("match") && line_ends_with_colon(p)) return match_stmt(p);
  }
  if (p->tok.kind == SR_T_INDENT) {
    p->err = 1;
    sr_error(p->d, SR_E_PARSE, p->src, p->tok.off, "unexpected indent");
    return NULL;
  }
  NL line = {0};
  SrNode *last = simple_stmts(p, &line);
  if (!last) {
    free(line.v);
    return NULL;
  }
  if (line.n == 1) {
    free(line.v);
    return last;
  }
  /* several statements on one line: a pseudo-block node */
  SrNode *b = node(p, SR_N_SEQ, off);
  b->list = nl_done(p, &line, &b->n);
  return b;
}

static void lp_init(LP *p, SrCode *code, size_t pos, SrDiags *d, const SrMesh *mesh) {
  memset(p, 0, sizeof *p);
  p->code = code;
  p->src = code->src;
  p->a = code->arena;
  p->d = d;
  p->mesh = mesh;
  sr_lex_init(&p->lx, code, code->src, pos, d, mesh);
  advance(p);
}

SrNode *sr_lang_parse_stmt(SrCode *code, size_t *pos, SrDiags *d, const SrMesh *mesh) {
  LP p;
  lp_init(&p, code, *pos, d, mesh);
  while (p.tok.kind == SR_T_NEWLINE) advance(&p);
  if (p.tok.kind == SR_T_END) {
    *pos = p.lx.pos;
    return NULL;
  }
  SrNode *s = stmt(&p);
  if (p.err) s = NULL;
  /* the next statement starts at the beginning of the current token's
     line, so that its indentation is seen (an unexpected indent) */
  if (s) {
    size_t at = p.tok.kind == SR_T_END ? p.lx.len : p.tok.off;
    size_t bol = at;
    while (bol > 0 && (p.lx.s[bol - 1] == ' ' || p.lx.s[bol - 1] == '\t')) bol--;
    if (bol == 0 || p.lx.s[bol - 1] == '\n') at = bol;
    *pos = at;
  }
  return s;
}

SrNode *sr_lang_parse_expr(SrCode *code, size_t pos, SrDiags *d, const SrMesh *mesh) {
  LP p;
  /* an expression may stand anywhere on its line (a command's argument) */
  while (pos < code->src->len && (code->src->text[pos] == ' ' || code->src->text[pos] == '\t')) pos++;
  memset(&p, 0, sizeof p);
  p.code = code;
  p.src = code->src;
  p.a = code->arena;
  p.d = d;
  p.mesh = mesh;
  sr_lex_init(&p.lx, code, code->src, pos, d, mesh);
  p.lx.at_bol = 0;
  advance(&p);
  while (p.tok.kind == SR_T_NEWLINE) advance(&p);
  SrNode *e = testlist_star(&p, 0);
  while (e && p.tok.kind == SR_T_NEWLINE) advance(&p);
  if (e && p.tok.kind != SR_T_END) e = fail(&p, "the end of the expression");
  return p.err ? NULL : e;
}
