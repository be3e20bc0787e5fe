/* lex.c: the statement language's tokenizer. */
#include "py/lex.h"

#include "py/ast.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text/parse.h"
#include "util/intern.h"

SrCode *sr_code_new(SrSrc *src) {
  SrCode *c = sr_xcalloc(1, sizeof *c);
  c->rc = 1;
  c->arena = sr_arena_new();
  c->src = sr_src_ref(src);
  return c;
}

SrVal *sr_code_hold(SrCode *c, SrVal *v) {
  if (c->nheld == c->capheld) {
    c->capheld = c->capheld ? 2 * c->capheld : 16;
    c->held = sr_xrealloc(c->held, c->capheld * sizeof *c->held);
  }
  c->held[c->nheld++] = v;
  return v;
}

SrCode *sr_code_ref(SrCode *c) {
  if (c) c->rc++;
  return c;
}

void sr_code_unref(SrCode *c) {
  if (!c || --c->rc > 0) return;
  for (size_t i = 0; i < c->nprogs; i++) sr_program_unref(c->progs[i]);
  free(c->progs);
  for (size_t i = 0; i < c->nheld; i++) sr_unref(c->held[i]);
  free(c->held);
  sr_arena_free(c->arena);
  sr_src_unref(c->src);
  free(c);
}

void sr_lex_init(SrLexer *lx, SrCode *code, SrSrc *src, size_t start, SrDiags *d,
                 const SrMesh *mesh) {
  memset(lx, 0, sizeof *lx);
  lx->src = src;
  lx->s = src->text;
  lx->len = src->len;
  lx->pos = start;
  lx->code = code;
  lx->a = code->arena;
  lx->d = d;
  lx->mesh = mesh;
  lx->at_bol = 1;
  lx->indents[0] = 0;
  lx->nindent = 1;
}

static int lex_error(SrLexer *lx, size_t off, int incomplete, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int lex_error(SrLexer *lx, size_t off, int incomplete, const char *fmt, ...) {
  if (lx->error) return -1;
  lx->error = 1;
  if (incomplete) lx->d->incomplete |= SR_INCOMPLETE_OPEN;
  va_list ap;
  va_start(ap, fmt);
  sr_verror(lx->d, SR_E_PARSE, lx->src, off, fmt, ap);
  va_end(ap);
  return -1;
}

static SrTok tok(SrTokKind k, size_t off, size_t len) {
  SrTok t;
  memset(&t, 0, sizeof t);
  t.kind = k;
  t.off = off;
  t.len = len;
  return t;
}

static SrTok end_tok(SrLexer *lx) { return tok(SR_T_END, lx->pos, 0); }

static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "...", NULL};
static const char *const ops2[] = {"->", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+=",
                                   "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":=", NULL};
static const char ops1[] = "()[]{},:;.+-*/%@&|^~<>=";

/* Appends code point cp as UTF-8. */
static void put_utf8(SrBuf *b, uint32_t cp) {
  if (cp < 0x80) {
    sr_buf_putc(b, (int)cp);
  } else if (cp < 0x800) {
    sr_buf_putc(b, (int)(0xc0 | (cp >> 6)));
    sr_buf_putc(b, (int)(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    sr_buf_putc(b, (int)(0xe0 | (cp >> 12)));
    sr_buf_putc(b, (int)(0x80 | ((cp >> 6) & 0x3f)));
    sr_buf_putc(b, (int)(0x80 | (cp & 0x3f)));
  } else {
    sr_buf_putc(b, (int)(0xf0 | (cp >> 18)));
    sr_buf_putc(b, (int)(0x80 | ((cp >> 12) & 0x3f)));
    sr_buf_putc(b, (int)(0x80 | ((cp >> 6) & 0x3f)));
    sr_buf_putc(b, (int)(0x80 | (cp & 0x3f)));
  }
}

/* The position CPython's unicode-escape decoder reports for byte i of a
   literal whose body starts at body: it decodes the body with each
   non-ASCII character first written as a 10-character \UXXXXXXXX. */
static size_t escape_pos(const char *s, size_t body, size_t i) {
  size_t p = 0;
  for (size_t k = body; k < i; k++) {
    unsigned char c = (unsigned char)s[k];
    if (c < 0x80) p++;
    else if (c >= 0xc0) p += 10;
  }
  return p;
}

/* Reads a string literal starting at the quote; decodes escapes unless raw
   (Python's: \n \t \r \a \b \f \v, octal \ooo, \xXX, and in a str \uXXXX
   and \UXXXXXXXX as UTF-8; an unknown escape stays as written), with
   CPython's errors.  f-strings keep their braces for the parser. */
static int lex_string(SrLexer *lx, size_t start, size_t q, int raw, int bytes, SrTok *t) {
  const char *s = lx->s;
  char quote = s[q];
  int triple = q + 2 < lx->len && s[q + 1] == quote && s[q + 2] == quote;
  size_t i = q + (triple ? 3 : 1), body = i;
  SrBuf b = SR_BUF_INIT;
  for (;;) {
    if (i >= lx->len) {
      sr_buf_free(&b);
      return lex_error(lx, start, 1, "unterminated string literal");
    }
    char c = s[i];
    if (c == quote && (!triple || (i + 2 < lx->len && s[i + 1] == quote && s[i + 2] == quote))) {
      i += triple ? 3 : 1;
      break;
    }
    if (c == '\n' && !triple) {
      sr_buf_free(&b);
      return lex_error(lx, start, 0, "unterminated string literal");
    }
    if (c == '\\' && i + 1 < lx->len) {
      char e = s[i + 1];
      if (raw) {
        sr_buf_putc(&b, c);
        sr_buf_putc(&b, e);
        i += 2;
        continue;
      }
      size_t at = i;
      i += 2;
      switch (e) {
      case 'n': sr_buf_putc(&b, '\n'); break;
      case 't': sr_buf_putc(&b, '\t'); break;
      case 'r': sr_buf_putc(&b, '\r'); break;
      case 'a': sr_buf_putc(&b, '\a'); break;
      case 'b': sr_buf_putc(&b, '\b'); break;
      case 'f': sr_buf_putc(&b, '\f'); break;
      case 'v': sr_buf_putc(&b, '\v'); break;
      case '\n': break;
      case '\\': case '\'': case '"': sr_buf_putc(&b, e); break;
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
        uint32_t v = (uint32_t)(e - '0');
        for (int k = 0; k < 2 && i < lx->len && s[i] >= '0' && s[i] <= '7'; k++) v = v * 8 + (uint32_t)(s[i++] - '0');
        if (bytes) sr_buf_putc(&b, (int)(v & 0xff));
        else put_utf8(&b, v);
        break;
      }
      case 'x': case 'u': case 'U': {
        if (bytes && e != 'x') {
          sr_buf_putc(&b, '\\');
          sr_buf_putc(&b, e);
          break;
        }
        int want = e == 'x' ? 2 : e == 'u' ? 4 : 8, got = 0;
        uint32_t v = 0;
        while (got < want && i < lx->len && isxdigit((unsigned char)s[i])) {
          char h = s[i++];
          v = v * 16 + (uint32_t)(isdigit((unsigned char)h) ? h - '0' : tolower((unsigned char)h) - 'a' + 10);
          got++;
        }
        /* the error's position, a scan of the body: only for an error, so
           that a long literal of escapes lexes in linear time */
        size_t p0 = got < want || v > 0x10ffff ? escape_pos(s, body, at) : 0, p1 = p0 + 1 + (size_t)got;
        if (got < want) {
          sr_buf_free(&b);
          if (bytes) return lex_error(lx, start, 0, "SyntaxError: (value error) invalid \\x escape at position %zu", p0);
          return lex_error(lx, start, 0,
                           "SyntaxError: (unicode error) 'unicodeescape' codec can't decode bytes in position "
                           "%zu-%zu: truncated \\%s escape",
                           p0, p1, e == 'x' ? "xXX" : e == 'u' ? "uXXXX" : "UXXXXXXXX");
        }
        if (v > 0x10ffff) {
          sr_buf_free(&b);
          return lex_error(lx, start, 0,
                           "SyntaxError: (unicode error) 'unicodeescape' codec can't decode bytes in position "
                           "%zu-%zu: illegal Unicode character",
                           p0, p1);
        }
        if (bytes) sr_buf_putc(&b, (int)v);
        else put_utf8(&b, v);
        break;
      }
      case 'N':
        if (!bytes) {
          sr_buf_free(&b);
          return lex_error(lx, start, 0,
                           "SyntaxError: shardrepl has no table of Unicode character names: write \\N{...} "
                           "as its \\uXXXX or \\UXXXXXXXX escape");
        }
        /* fall through */
      default:
        sr_buf_putc(&b, '\\');
        sr_buf_putc(&b, e);
      }
      continue;
    }
    sr_buf_putc(&b, c);
    i++;
  }
  *t = tok(SR_T_STRING, start, i - start);
  t->text = sr_arena_strndup(lx->a, sr_buf_str(&b), b.len);
  t->textlen = b.len;
  sr_buf_free(&b);
  lx->pos = i;
  return 0;
}

static int lex_number(SrLexer *lx, SrTok *t) {
  const char *s = lx->s;
  size_t st = lx->pos, i = st;
  char buf[128];
  size_t n = 0;
  int is_float = 0;
  if (s[i] == '0' && i + 1 < lx->len && strchr("xXoObB", s[i + 1])) {
    int base = strchr("xX", s[i + 1]) ? 16 : strchr("oO", s[i + 1]) ? 8 : 2;
    i += 2;
    while (i < lx->len && (isxdigit((unsigned char)s[i]) || s[i] == '_')) {
      if (s[i] != '_' && n < sizeof buf - 1) buf[n++] = s[i];
      i++;
    }
    buf[n] = 0;
    *t = tok(SR_T_INT, st, i - st);
    errno = 0;
    t->i = (int64_t)strtoull(buf, NULL, base);
    lx->pos = i;
    return errno ? lex_error(lx, st, 0, "integer literal too large") : 0;
  }
  while (i < lx->len) {
    char c = s[i];
    if (isdigit((unsigned char)c) || c == '_') {
    } else if (c == '.' && !is_float) {
      is_float = 1;
    } else if ((c == 'e' || c == 'E') && i + 1 < lx->len &&
               (isdigit((unsigned char)s[i + 1]) ||
                ((s[i + 1] == '+' || s[i + 1] == '-') && i + 2 < lx->len && isdigit((unsigned char)s[i + 2])))) {
      is_float = 1;
      if (n < sizeof buf - 1) buf[n++] = c;
      i++;
      c = s[i];
    } else {
      break;
    }
    if (c != '_' && n < sizeof buf - 1) buf[n++] = c;
    i++;
  }
  buf[n] = 0;
  if (i < lx->len && (s[i] == 'j' || s[i] == 'J')) {
    *t = tok(SR_T_IMAG, st, i + 1 - st);
    t->f = strtod(buf, NULL);
    lx->pos = i + 1;
    return 0;
  }
  if (is_float) {
    *t = tok(SR_T_FLOAT, st, i - st);
    t->f = strtod(buf, NULL);
  } else {
    *t = tok(SR_T_INT, st, i - st);
    errno = 0;
    t->i = strtoll(buf, NULL, 10);
    if (errno) {
      *t = tok(SR_T_FLOAT, st, i - st);
      t->f = strtod(buf, NULL);
    }
  }
  lx->pos = i;
  return 0;
}

/* Indentation at the start of a logical line: INDENT, DEDENTs, or nothing.
   Blank and comment-only lines are skipped. Returns 1 if a token was made. */
static int lex_indent(SrLexer *lx, SrTok *t) {
  for (;;) {
    size_t i = lx->pos;
    int col = 0;
    while (i < lx->len && (lx->s[i] == ' ' || lx->s[i] == '\t' || lx->s[i] == '\f')) {
      col = lx->s[i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
      i++;
    }
    if (i < lx->len && lx->s[i] == '\r') i++;
    if (i < lx->len && (lx->s[i] == '\n' || lx->s[i] == '#')) {
      while (i < lx->len && lx->s[i] != '\n') i++;
      lx->pos = i < lx->len ? i + 1 : i;
      continue;
    }
    lx->pos = i;
    if (i >= lx->len) return 0; /* at the end: stay at a line start */
    lx->at_bol = 0;
    int cur = lx->indents[lx->nindent - 1];
    if (col > cur) {
      if (lx->nindent == (int)(sizeof lx->indents / sizeof *lx->indents)) {
        lex_error(lx, i, 0, "too many levels of indentation");
        return 0;
      }
      lx->indents[lx->nindent++] = col;
      *t = tok(SR_T_INDENT, i, 0);
      return 1;
    }
    if (col < cur) {
      int k = lx->nindent - 1;
      while (k > 0 && lx->indents[k] > col) k--;
      if (lx->indents[k] != col) {
        lex_error(lx, i, 0, "unindent does not match any outer indentation level");
        return 0;
      }
      lx->pending_dedents = lx->nindent - 1 - k;
      lx->nindent = k + 1;
      lx->pending_dedents--;
      *t = tok(SR_T_DEDENT, i, 0);
      return 1;
    }
    return 0;
  }
}

SrTok sr_lex_next(SrLexer *lx) {
  SrTok t;
  if (lx->error) return end_tok(lx);
  if (lx->pending_dedents > 0) {
    lx->pending_dedents--;
    return tok(SR_T_DEDENT, lx->pos, 0);
  }
  if (lx->at_bol && lx->depth == 0 && !lx->join_lines) {
    if (lex_indent(lx, &t)) return t;
    if (lx->error) return end_tok(lx);
  }
  const char *s = lx->s;
  /* blanks, comments, continuations */
  for (;;) {
    while (lx->pos < lx->len && (s[lx->pos] == ' ' || s[lx->pos] == '\t' || s[lx->pos] == '\r' ||
                                 s[lx->pos] == '\f'))
      lx->pos++;
    if (lx->pos < lx->len && s[lx->pos] == '#') {
      while (lx->pos < lx->len && s[lx->pos] != '\n') lx->pos++;
    }
    if (lx->pos + 1 < lx->len && s[lx->pos] == '\\' && s[lx->pos + 1] == '\n') {
      if (lx->pos + 2 >= lx->len) {
        lex_error(lx, lx->pos, 1, "unexpected end of input after a line continuation");
        return end_tok(lx);
      }
      lx->pos += 2;
      continue;
    }
    if (lx->pos < lx->len && s[lx->pos] == '\n' && (lx->depth > 0 || lx->join_lines)) {
      lx->pos++;
      continue;
    }
    break;
  }
  if (lx->pos >= lx->len) {
    if (lx->depth > 0 && !lx->join_lines) {
      lex_error(lx, lx->pos, 1, "unexpected end of input: a bracket is still open");
      return end_tok(lx);
    }
    if (!lx->at_bol && !lx->join_lines) {
      lx->at_bol = 1;
      return tok(SR_T_NEWLINE, lx->pos, 0);
    }
    if (lx->nindent > 1) {
      lx->nindent--;
      return tok(SR_T_DEDENT, lx->pos, 0);
    }
    return end_tok(lx);
  }
  size_t st = lx->pos;
  char c = s[st];
  if (c == '\n') {
    lx->pos++;
    lx->at_bol = 1;
    return tok(SR_T_NEWLINE, st, 1);
  }
  /* a jaxpr as JAX prints it */
  if ((c == '{' || c == 'l') && sr_parse_looks_like_jaxpr(s, lx->len, st)) {
    SrParseOpts opts = {lx->mesh};
    size_t end;
    SrProgram *p = sr_parse_program(lx->src, st, &end, &opts, lx->d);
    if (!p) {
      lx->error = 1;
      return end_tok(lx);
    }
    SrCode *code = lx->code;
    if (code->nprogs == code->capprogs) {
      code->capprogs = code->capprogs ? 2 * code->capprogs : 4;
      code->progs = sr_xrealloc(code->progs, code->capprogs * sizeof *code->progs);
    }
    code->progs[code->nprogs++] = p;
    t = tok(SR_T_JAXPR, st, end - st);
    t.prog = p;
    lx->pos = end;
    return t;
  }
  if (isalpha((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80) {
    size_t i = st;
    while (i < lx->len && (isalnum((unsigned char)s[i]) || s[i] == '_' || (unsigned char)s[i] >= 0x80)) i++;
    /* string prefixes: r, f, b, rb, br, fr, rf */
    size_t n = i - st;
    if (n <= 2 && i < lx->len && (s[i] == '\'' || s[i] == '"')) {
      int raw = 0, f = 0, b = 0, ok = 1;
      for (size_t k = st; k < i; k++) {
        char p = (char)tolower((unsigned char)s[k]);
        if (p == 'r') raw = 1;
        else if (p == 'f') f = 1;
        else if (p == 'b') b = 1;
        else if (p == 'u') {
        } else ok = 0;
      }
      if (ok) {
        if (lex_string(lx, st, i, raw, b, &t) < 0) return end_tok(lx);
        t.fstring = (uint8_t)f;
        t.bytes = (uint8_t)b;
        t.raw = (uint8_t)raw;
        return t;
      }
    }
    t = tok(SR_T_NAME, st, n);
    t.text = sr_intern(s + st, n);
    t.textlen = n;
    lx->pos = i;
    return t;
  }
  if (isdigit((unsigned char)c) || (c == '.' && st + 1 < lx->len && isdigit((unsigned char)s[st + 1]))) {
    if (lex_number(lx, &t) < 0) return end_tok(lx);
    return t;
  }
  if (c == '\'' || c == '"') {
    if (lex_string(lx, st, st, 0, 0, &t) < 0) return end_tok(lx);
    return t;
  }
  for (int k = 0; ops3[k]; k++)
    if (st + 3 <= lx->len && memcmp(s + st, ops3[k], 3) == 0) {
      lx->pos += 3;
      t = tok(SR_T_OP, st, 3);
      t.text = sr_intern(ops3[k], 3);
      return t;
    }
  for (int k = 0; ops2[k]; k++)
    if (st + 2 <= lx->len && memcmp(s + st, ops2[k], 2) == 0) {
      lx->pos += 2;
      t = tok(SR_T_OP, st, 2);
      t.text = sr_intern(ops2[k], 2);
      return t;
    }
  if (strchr(ops1, c)) {
    if (c == '(' || c == '[' || c == '{') lx->depth++;
    if ((c == ')' || c == ']' || c == '}') && lx->depth > 0) lx->depth--;
    lx->pos++;
    t = tok(SR_T_OP, st, 1);
    t.text = sr_intern(s + st, 1);
    return t;
  }
  lex_error(lx, st, 0, "invalid character '%c' in the input", c);
  return end_tok(lx);
}
