/* re.c: Python's `re` module, on the C library's POSIX regular expressions.
 *
 * Enough of `re` for scripts that pick text apart (the seeds read op names
 * out of compiled text with re.search): search, match, fullmatch, findall,
 * finditer, sub, split, compile, and Match objects.  A Python pattern is
 * translated to a POSIX extended regular expression: \d \w \s and their
 * negations become bracket classes, \n \t and escaped punctuation become
 * the characters.  What POSIX cannot say -- (?...) groups, lazy
 * quantifiers, \b, backreferences in the pattern -- is a NotImplementedError
 * naming the construct.  POSIX alternation takes the longest match where
 * Python takes the first alternative that matches; patterns without `|`
 * match the same text.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "py/objects.h"
#include "text/print_val.h"
#include "util/buf.h"
#include "util/mem.h"

/* ---- patterns ---- */

enum { F_IGNORECASE = 2, F_DOTALL = 16 }; /* Python's values of the flags */

typedef struct Pattern {
  regex_t re;
  SrVal *text;  /* the Python pattern, a str */
  int ngroups;
  int flags;
  int anchored; /* fullmatch's form: "^(" pattern ")$", one group more */
} Pattern;

static int class_escape(SrBuf *b, char c, int in_bracket) {
  const char *in = NULL;
  int neg = 0;
  switch (c) {
  case 'd': in = "0-9"; break;
  case 'D': in = "0-9", neg = 1; break;
  case 'w': in = "_[:alnum:]"; break;
  case 'W': in = "_[:alnum:]", neg = 1; break;
  case 's': in = "[:space:]"; break;
  case 'S': in = "[:space:]", neg = 1; break;
  default: return 0;
  }
  if (in_bracket) {
    if (neg) return -1;
    sr_buf_puts(b, in);
  } else {
    sr_buf_printf(b, "[%s%s]", neg ? "^" : "", in);
  }
  return 1;
}

/* The character a \c escape stands for, or 0 when it is not a plain one. */
static char char_escape(char c) {
  switch (c) {
  case 'n': return '\n';
  case 't': return '\t';
  case 'r': return '\r';
  case 'f': return '\f';
  case 'v': return '\v';
  case 'a': return '\a';
  default: return strchr(".^$*+?()[]{}|\\/-'\"#&~ ,:;=!<>@%`", c) ? c : 0;
  }
}

static int unsupported(SrInterp *I, const char *what) {
  sr_raise(I, "NotImplementedError", "re: %s is not supported (patterns are POSIX extended regular expressions)",
           what);
  return -1;
}

static int re_error(SrInterp *I, const char *what, size_t pos) {
  sr_raise(I, "re.error", "%s at position %zu", what, pos);
  return -1;
}

/* Python pattern -> POSIX ERE in b; the number of groups in *ngroups.
   Python's '.' matches anything but a newline unless DOTALL. */
static int translate(SrInterp *I, const char *p, size_t n, int flags, SrBuf *b, int *ngroups) {
  int in_bracket = 0;
  size_t bracket_at = 0, open[256];
  int depth = 0;
  int can_repeat = 0; /* a quantifier here has something to repeat */
  *ngroups = 0;
  for (size_t i = 0; i < n; i++) {
    char c = p[i];
    if (c == '\\') {
      if (++i == n) return re_error(I, "bad escape (end of pattern)", i - 1);
      c = p[i];
      can_repeat = 1;
      int k = class_escape(b, c, in_bracket);
      if (k < 0) return unsupported(I, "a negated class escape inside [...]");
      if (k) continue;
      char lit = char_escape(c);
      if (!lit) {
        if (c >= '0' && c <= '9') return unsupported(I, "a backreference");
        if (c == 'b' || c == 'B' || c == 'A' || c == 'Z') return unsupported(I, "an anchor escape such as \\b");
        char what[] = "bad escape \\?";
        what[sizeof what - 2] = c;
        return re_error(I, what, i - 1);
      }
      if (in_bracket) {
        if (lit == ']' || lit == '^' || lit == '-') return unsupported(I, "an escaped ']', '^' or '-' inside [...]");
        sr_buf_putc(b, lit);
      } else if (strchr(".^$*+?()[]{}|\\", lit)) {
        sr_buf_putc(b, '\\');
        sr_buf_putc(b, lit);
      } else {
        sr_buf_putc(b, lit);
      }
      continue;
    }
    if (in_bracket) {
      if (c == ']' && !(in_bracket == 1 || (in_bracket == 2 && p[i - 1] == '^'))) in_bracket = 0;
      else in_bracket = 3;
      sr_buf_putc(b, c);
      continue;
    }
    int repeatable = 1;
    switch (c) {
    case '[':
      in_bracket = 1;
      bracket_at = i;
      sr_buf_putc(b, c);
      if (i + 1 < n && p[i + 1] == '^') sr_buf_putc(b, p[++i]), in_bracket = 2;
      can_repeat = 1;
      continue;
    case '(':
      if (i + 1 < n && p[i + 1] == '?') return unsupported(I, "a (?...) group");
      if (depth == (int)(sizeof open / sizeof *open)) return unsupported(I, "nesting groups so deep");
      open[depth++] = i;
      ++*ngroups;
      repeatable = 0;
      break;
    case ')':
      if (!depth) return re_error(I, "unbalanced parenthesis", i);
      depth--;
      break;
    case '|':
    case '^':
      repeatable = 0;
      break;
    case '*':
    case '+':
    case '?':
    case '{':
      if (c == '{') {
        const char *close = memchr(p + i, '}', n - i);
        if (!close || !can_repeat) { /* Python reads a '{' that opens no repeat as itself */
          sr_buf_puts(b, "\\{");
          can_repeat = 1;
          continue;
        }
        size_t j = (size_t)(close - p);
        sr_buf_putn(b, p + i, j - i); /* the '}' is put below */
        i = j;
        c = '}';
      } else if (!can_repeat) {
        return re_error(I, "nothing to repeat", i);
      }
      if (i + 1 < n && p[i + 1] == '?') return unsupported(I, "a lazy quantifier");
      if (i + 1 < n && (p[i + 1] == '*' || p[i + 1] == '+')) return unsupported(I, "a possessive or repeated quantifier");
      repeatable = 0;
      break;
    case '.':
      if (!(flags & F_DOTALL)) {
        sr_buf_puts(b, "[^\n]");
        can_repeat = 1;
        continue;
      }
      break;
    }
    can_repeat = repeatable;
    sr_buf_putc(b, c);
  }
  if (in_bracket) return re_error(I, "unterminated character set", bracket_at);
  if (depth) return re_error(I, "missing ), unterminated subpattern", open[depth - 1]);
  return 0;
}

static void pattern_free(void *d) {
  Pattern *pt = d;
  regfree(&pt->re);
  sr_unref(pt->text);
  free(pt);
}

static void pattern_repr(SrBuf *out, const SrVal *v) {
  const Pattern *pt = v->obj.data;
  sr_buf_puts(out, "re.compile(");
  sr_val_repr(out, pt->text);
  sr_buf_putc(out, ')');
}

static const SrLangOps pattern_ops;
static const SrClass pattern_class = {"re.Pattern", pattern_free, pattern_repr, NULL, &pattern_ops};

static SrVal *compile_pattern(SrInterp *I, SrVal *text, int flags, int anchored) {
  if (text->kind != SR_V_STR)
    return sr_raise(I, "TypeError", "first argument must be string or compiled pattern");
  SrBuf b = SR_BUF_INIT;
  int ngroups;
  if (anchored) sr_buf_puts(&b, "^(");
  if (translate(I, text->str.s, text->str.n, flags, &b, &ngroups) < 0) {
    sr_buf_free(&b);
    return NULL;
  }
  if (anchored) sr_buf_puts(&b, ")$");
  sr_buf_putc(&b, '\0');
  Pattern *pt = sr_xcalloc(1, sizeof *pt);
  int rc = regcomp(&pt->re, b.p, REG_EXTENDED | (flags & F_IGNORECASE ? REG_ICASE : 0));
  sr_buf_free(&b);
  if (rc) {
    char msg[256];
    regerror(rc, &pt->re, msg, sizeof msg);
    free(pt);
    return sr_raise(I, "re.error", "%s", msg);
  }
  pt->text = sr_ref(text);
  pt->ngroups = ngroups;
  pt->flags = flags;
  pt->anchored = anchored;
  return sr_obj(&pattern_class, pt);
}

/* The pattern an argument names: a compiled one (borrowed into a new
   reference; flags must then be 0), or a str compiled now. */
static SrVal *pattern_arg(SrInterp *I, SrVal *v, int flags, int anchored) {
  if (sr_is_obj(v, &pattern_class)) {
    Pattern *pt = v->obj.data;
    if (flags) return sr_raise(I, "ValueError", "cannot process flags argument with a compiled pattern");
    if (pt->anchored == anchored) return sr_ref(v);
    return compile_pattern(I, pt->text, pt->flags, anchored);
  }
  return compile_pattern(I, v, flags, anchored);
}

/* ---- matches ---- */

enum { MAX_GROUPS = 100 };

typedef struct Match {
  SrVal *string;
  SrVal *pattern;
  int ngroups;
  regoff_t so[MAX_GROUPS], eo[MAX_GROUPS]; /* -1 where a group took no part */
} Match;

static void match_free(void *d) {
  Match *m = d;
  sr_unref(m->string);
  sr_unref(m->pattern);
  free(m);
}

static void match_repr(SrBuf *out, const SrVal *v) {
  const Match *m = v->obj.data;
  SrVal *s = sr_str(NULL, m->string->str.s + m->so[0], (size_t)(m->eo[0] - m->so[0]));
  sr_buf_printf(out, "<re.Match object; span=(%ld, %ld), match=", (long)m->so[0], (long)m->eo[0]);
  sr_val_repr(out, s);
  sr_buf_putc(out, '>');
  sr_unref(s);
}

static const SrLangOps match_ops;
static const SrClass match_class = {"re.Match", match_free, match_repr, NULL, &match_ops};

static SrVal *not_string(SrInterp *I, SrVal *v) {
  return sr_raise(I, "TypeError", "expected string or bytes-like object, got '%s'", sr_val_kind_name(v));
}

/* Runs pt on string from offset pos; a Match, None, or NULL on error. */
static SrVal *run(SrInterp *I, SrVal *pattern, SrVal *string, size_t pos, int at_start) {
  Pattern *pt = pattern->obj.data;
  if (string->kind != SR_V_STR) return not_string(I, string);
  if (memchr(string->str.s, '\0', string->str.n))
    return sr_raise(I, "NotImplementedError", "re: strings holding NUL characters are not supported");
  regmatch_t rm[MAX_GROUPS];
  size_t nm = (size_t)pt->ngroups + 1 + (size_t)pt->anchored;
  if (nm > MAX_GROUPS) return sr_raise(I, "NotImplementedError", "re: more than %d groups", MAX_GROUPS - 2);
  char *s = sr_xstrndup(string->str.s, string->str.n);
  int rc = regexec(&pt->re, s + pos, nm, rm, pos ? REG_NOTBOL : 0);
  free(s);
  if (rc == REG_NOMATCH || (rc == 0 && at_start && rm[0].rm_so != 0)) return sr_none();
  if (rc) return sr_raise(I, "re.error", "the match failed");
  Match *m = sr_xcalloc(1, sizeof *m);
  m->string = sr_ref(string);
  m->pattern = sr_ref(pattern);
  m->ngroups = pt->ngroups;
  /* fullmatch's added outer group is group 0 itself */
  for (int g = 0, k = 0; g <= pt->ngroups; g++, k = g + pt->anchored) {
    m->so[g] = rm[k].rm_so < 0 ? -1 : rm[k].rm_so + (regoff_t)pos;
    m->eo[g] = rm[k].rm_eo < 0 ? -1 : rm[k].rm_eo + (regoff_t)pos;
  }
  return sr_obj(&match_class, m);
}

static int group_index(SrInterp *I, Match *m, SrVal *v) {
  int64_t g;
  if (v->kind != SR_V_INT && v->kind != SR_V_BOOL) return sr_raise(I, "IndexError", "no such group"), -1;
  g = v->i;
  if (g < 0 || g > m->ngroups) return sr_raise(I, "IndexError", "no such group"), -1;
  return (int)g;
}

static SrVal *group_str(Match *m, int g) {
  if (m->so[g] < 0) return sr_none();
  return sr_str(NULL, m->string->str.s + m->so[g], (size_t)(m->eo[g] - m->so[g]));
}

static SrVal *m_group(SrInterp *I, SrArgs *a) {
  Match *m = a->self->obj.data;
  if (a->nkw) return sr_raise(I, "TypeError", "group() takes no keyword arguments");
  if (a->n == 0) return group_str(m, 0);
  SrVal *items[MAX_GROUPS];
  if (a->n > MAX_GROUPS) return sr_raise(I, "IndexError", "no such group");
  for (int i = 0; i < a->n; i++) {
    int g = group_index(I, m, a->v[i]);
    if (g < 0) {
      while (i--) sr_unref(items[i]);
      return NULL;
    }
    items[i] = group_str(m, g);
  }
  return a->n == 1 ? items[0] : sr_tuple(NULL, a->n, items);
}

static SrVal *groups_tuple(Match *m, SrVal *dflt) {
  SrVal *t = sr_seq(NULL, SR_V_TUPLE, m->ngroups);
  for (int g = 1; g <= m->ngroups; g++) sr_seq_push(NULL, t, m->so[g] < 0 ? sr_ref(dflt) : group_str(m, g));
  return t;
}

static SrVal *m_groups(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "groups", "default=", p) < 0) return NULL;
  SrVal *none = sr_none();
  SrVal *r = groups_tuple(a->self->obj.data, p[0] ? p[0] : none);
  sr_unref(none);
  return r;
}

/* start(g), end(g), span(g): which = 0, 1, 2 */
static SrVal *span_of(SrInterp *I, SrArgs *a, const char *name, int which) {
  Match *m = a->self->obj.data;
  SrVal *p[1];
  if (sr_args_parse(I, a, name, "group=", p) < 0) return NULL;
  int g = p[0] ? group_index(I, m, p[0]) : 0;
  if (g < 0) return NULL;
  int64_t so = m->so[g], eo = m->eo[g];
  if (which == 0) return sr_int(NULL, so);
  if (which == 1) return sr_int(NULL, eo);
  SrVal *items[2] = {sr_int(NULL, so), sr_int(NULL, eo)};
  return sr_tuple(NULL, 2, items);
}
static SrVal *m_start(SrInterp *I, SrArgs *a) { return span_of(I, a, "start", 0); }
static SrVal *m_end(SrInterp *I, SrArgs *a) { return span_of(I, a, "end", 1); }
static SrVal *m_span(SrInterp *I, SrArgs *a) { return span_of(I, a, "span", 2); }

static SrVal *match_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  Match *m = self->obj.data;
  if (strcmp(name, "group") == 0) return sr_bound_method(self, name, m_group);
  if (strcmp(name, "groups") == 0) return sr_bound_method(self, name, m_groups);
  if (strcmp(name, "start") == 0) return sr_bound_method(self, name, m_start);
  if (strcmp(name, "end") == 0) return sr_bound_method(self, name, m_end);
  if (strcmp(name, "span") == 0) return sr_bound_method(self, name, m_span);
  if (strcmp(name, "string") == 0) return sr_ref(m->string);
  if (strcmp(name, "re") == 0) return sr_ref(m->pattern);
  return NULL;
}

static SrVal *match_getitem(SrInterp *I, SrVal *self, SrVal *key) {
  Match *m = self->obj.data;
  int g = group_index(I, m, key);
  return g < 0 ? NULL : group_str(m, g);
}

static int match_truthy(SrInterp *I, SrVal *self) {
  (void)I, (void)self;
  return 1;
}

static const SrLangOps match_ops = {.getattr = match_getattr, .getitem = match_getitem, .truthy = match_truthy};

/* ---- the functions, for module and pattern alike ---- */

enum { SEARCH, MATCH, FULLMATCH };

static SrVal *do_find(SrInterp *I, SrVal *pat, SrVal *string, int flags, int how) {
  SrVal *p = pattern_arg(I, pat, flags, how == FULLMATCH);
  if (!p) return NULL;
  SrVal *r = run(I, p, string, 0, how != SEARCH);
  sr_unref(p);
  return r;
}

/* Every non-overlapping match, as a list of Match objects. */
static SrVal *all_matches(SrInterp *I, SrVal *p, SrVal *string) {
  SrVal *out = sr_seq(NULL, SR_V_LIST, 0);
  size_t pos = 0;
  while (pos <= string->str.n) {
    SrVal *m = run(I, p, string, pos, 0);
    if (!m) {
      sr_unref(out);
      return NULL;
    }
    if (m->kind == SR_V_NONE) {
      sr_unref(m);
      break;
    }
    Match *mm = m->obj.data;
    pos = (size_t)mm->eo[0] + (mm->eo[0] == mm->so[0]); /* an empty match moves on */
    sr_seq_push(NULL, out, m);
  }
  return out;
}

static SrVal *do_findall(SrInterp *I, SrVal *pat, SrVal *string, int flags, int as_iter) {
  if (string->kind != SR_V_STR) return not_string(I, string);
  SrVal *p = pattern_arg(I, pat, flags, 0);
  if (!p) return NULL;
  SrVal *ms = all_matches(I, p, string);
  sr_unref(p);
  if (!ms || as_iter) return ms;
  SrVal *out = sr_seq(NULL, SR_V_LIST, ms->seq.n);
  SrVal *empty = sr_str(NULL, "", 0);
  for (int i = 0; i < ms->seq.n; i++) {
    Match *m = ms->seq.items[i]->obj.data;
    if (m->ngroups == 0) sr_seq_push(NULL, out, group_str(m, 0));
    else if (m->ngroups == 1) sr_seq_push(NULL, out, m->so[1] < 0 ? sr_ref(empty) : group_str(m, 1));
    else sr_seq_push(NULL, out, groups_tuple(m, empty));
  }
  sr_unref(empty);
  sr_unref(ms);
  return out;
}

/* repl's text for one match: \1..\99, \g<N>, and the escapes of char_escape */
static int expand(SrInterp *I, SrBuf *b, const char *r, size_t n, Match *m) {
  for (size_t i = 0; i < n; i++) {
    if (r[i] != '\\') {
      sr_buf_putc(b, r[i]);
      continue;
    }
    if (++i == n) return sr_raise(I, "re.error", "bad escape (end of pattern) at position %zu", i - 1), -1;
    int g = -1;
    if (r[i] >= '0' && r[i] <= '9') {
      g = r[i] - '0';
      if (i + 1 < n && r[i + 1] >= '0' && r[i + 1] <= '9') g = g * 10 + (r[++i] - '0');
    } else if (r[i] == 'g' && i + 1 < n && r[i + 1] == '<') {
      size_t e = i + 2;
      g = 0;
      while (e < n && r[e] >= '0' && r[e] <= '9') g = g * 10 + (r[e++] - '0');
      if (e == i + 2 || e == n || r[e] != '>') return unsupported(I, "a named group reference");
      i = e;
    } else {
      char c = char_escape(r[i]);
      if (!c) return sr_raise(I, "re.error", "bad escape \\%c at position %zu", r[i], i - 1), -1;
      sr_buf_putc(b, c);
      continue;
    }
    if (g > m->ngroups) return sr_raise(I, "re.error", "invalid group reference %d at position %zu", g, i), -1;
    if (m->so[g] >= 0) sr_buf_putn(b, m->string->str.s + m->so[g], (size_t)(m->eo[g] - m->so[g]));
  }
  return 0;
}

static SrVal *do_sub(SrInterp *I, SrVal *pat, SrVal *repl, SrVal *string, int64_t count, int flags) {
  if (string->kind != SR_V_STR) return not_string(I, string);
  int call = repl->kind != SR_V_STR;
  if (call && !sr_is_callable(I, repl))
    return sr_raise(I, "TypeError", "decoding to str: need a bytes-like object, %s found", sr_val_kind_name(repl));
  SrVal *p = pattern_arg(I, pat, flags, 0);
  if (!p) return NULL;
  SrVal *ms = all_matches(I, p, string);
  sr_unref(p);
  if (!ms) return NULL;
  SrBuf b = SR_BUF_INIT;
  size_t last = 0;
  int ok = 1;
  for (int i = 0; ok && i < ms->seq.n && (count <= 0 || i < count); i++) {
    SrVal *mv = ms->seq.items[i];
    Match *m = mv->obj.data;
    sr_buf_putn(&b, string->str.s + last, (size_t)m->so[0] - last);
    if (call) {
      SrVal *r = sr_call1(I, repl, mv);
      if (!r) ok = 0;
      else if (r->kind != SR_V_STR) ok = 0, sr_raise(I, "TypeError", "expected str instance, %s found", sr_val_kind_name(r));
      else sr_buf_putn(&b, r->str.s, r->str.n);
      sr_unref(r);
    } else {
      ok = expand(I, &b, repl->str.s, repl->str.n, m) == 0;
    }
    last = (size_t)m->eo[0];
  }
  sr_unref(ms);
  if (!ok) {
    sr_buf_free(&b);
    return NULL;
  }
  sr_buf_putn(&b, string->str.s + last, string->str.n - last);
  SrVal *r = sr_str(NULL, b.p ? b.p : "", b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *do_split(SrInterp *I, SrVal *pat, SrVal *string, int64_t maxsplit, int flags) {
  if (string->kind != SR_V_STR) return not_string(I, string);
  SrVal *p = pattern_arg(I, pat, flags, 0);
  if (!p) return NULL;
  SrVal *ms = all_matches(I, p, string);
  sr_unref(p);
  if (!ms) return NULL;
  SrVal *out = sr_seq(NULL, SR_V_LIST, 0);
  size_t last = 0;
  for (int i = 0; i < ms->seq.n && (maxsplit <= 0 || i < maxsplit); i++) {
    Match *m = ms->seq.items[i]->obj.data;
    sr_seq_push(NULL, out, sr_str(NULL, string->str.s + last, (size_t)m->so[0] - last));
    for (int g = 1; g <= m->ngroups; g++) sr_seq_push(NULL, out, group_str(m, g));
    last = (size_t)m->eo[0];
  }
  sr_seq_push(NULL, out, sr_str(NULL, string->str.s + last, string->str.n - last));
  sr_unref(ms);
  return out;
}

/* The flags argument: IGNORECASE and DOTALL, or -1 with an exception. */
static int flags_arg(SrInterp *I, SrVal *flags) {
  if (!flags) return 0;
  int64_t f;
  if (sr_as_int(I, flags, "flags", &f) < 0) return -1;
  if (f & ~(int64_t)(F_IGNORECASE | F_DOTALL)) return unsupported(I, "a flag other than IGNORECASE and DOTALL");
  return (int)f;
}

static int count_arg(SrInterp *I, SrVal *v, const char *what, int64_t *out) {
  *out = 0;
  return v ? sr_as_int(I, v, what, out) : 0;
}

/* re.NAME(pattern, ...) and Pattern.NAME(...): a->self is the pattern in
   the second form, and the spec then lacks "pattern". */
static SrVal *dispatch(SrInterp *I, SrArgs *a, const char *name, int op) {
  SrVal *p[5] = {0};
  int self = a->self != NULL;
  static const char *specs[][2] = {
      {"pattern, string, flags=", "string"},
      {"pattern, string, flags=", "string"},
      {"pattern, string, flags=", "string"},
      {"pattern, string, flags=", "string"},
      {"pattern, string, flags=", "string"},
      {"pattern, repl, string, count=, flags=", "repl, string, count="},
      {"pattern, string, maxsplit=, flags=", "string, maxsplit="},
  };
  if (sr_args_parse(I, a, name, specs[op][self], self ? p + 1 : p) < 0) return NULL;
  if (self) p[0] = a->self;
  int64_t k;
  int fl;
  switch (op) {
  case 0:
  case 1:
  case 2:
    if ((fl = flags_arg(I, p[2])) < 0) return NULL;
    return do_find(I, p[0], p[1], fl, op);
  case 3:
  case 4:
    if ((fl = flags_arg(I, p[2])) < 0) return NULL;
    return do_findall(I, p[0], p[1], fl, op == 4);
  case 5:
    if ((fl = flags_arg(I, p[4])) < 0 || count_arg(I, p[3], "count", &k) < 0) return NULL;
    return do_sub(I, p[0], p[1], p[2], k, fl);
  default:
    if ((fl = flags_arg(I, p[3])) < 0 || count_arg(I, p[2], "maxsplit", &k) < 0) return NULL;
    return do_split(I, p[0], p[1], k, fl);
  }
}

static SrVal *pyre_search(SrInterp *I, SrArgs *a) { return dispatch(I, a, "search", 0); }
static SrVal *pyre_match(SrInterp *I, SrArgs *a) { return dispatch(I, a, "match", 1); }
static SrVal *pyre_fullmatch(SrInterp *I, SrArgs *a) { return dispatch(I, a, "fullmatch", 2); }
static SrVal *pyre_findall(SrInterp *I, SrArgs *a) { return dispatch(I, a, "findall", 3); }
static SrVal *pyre_finditer(SrInterp *I, SrArgs *a) { return dispatch(I, a, "finditer", 4); }
static SrVal *pyre_sub(SrInterp *I, SrArgs *a) { return dispatch(I, a, "sub", 5); }
static SrVal *pyre_split(SrInterp *I, SrArgs *a) { return dispatch(I, a, "split", 6); }

static SrVal *pyre_compile(SrInterp *I, SrArgs *a) {
  SrVal *p[2];
  int fl;
  if (sr_args_parse(I, a, "compile", "pattern, flags=", p) < 0 || (fl = flags_arg(I, p[1])) < 0) return NULL;
  return pattern_arg(I, p[0], fl, 0);
}

static SrVal *pyre_escape(SrInterp *I, SrArgs *a) {
  SrVal *p[1];
  if (sr_args_parse(I, a, "escape", "pattern", p) < 0) return NULL;
  if (p[0]->kind != SR_V_STR) return sr_raise(I, "TypeError", "expected str, %s found", sr_val_kind_name(p[0]));
  SrBuf b = SR_BUF_INIT;
  for (size_t i = 0; i < p[0]->str.n; i++) {
    char c = p[0]->str.s[i];
    if (strchr("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", c)) sr_buf_putc(&b, '\\');
    sr_buf_putc(&b, c);
  }
  SrVal *r = sr_str(NULL, b.p ? b.p : "", b.len);
  sr_buf_free(&b);
  return r;
}

static SrVal *pattern_getattr(SrInterp *I, SrVal *self, const char *name) {
  (void)I;
  Pattern *pt = self->obj.data;
  static const struct {
    const char *name;
    SrBuiltinFn fn;
  } methods[] = {{"search", pyre_search},   {"match", pyre_match}, {"fullmatch", pyre_fullmatch},
                 {"findall", pyre_findall}, {"finditer", pyre_finditer}, {"sub", pyre_sub},
                 {"split", pyre_split}};
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
    if (strcmp(name, methods[i].name) == 0) return sr_bound_method(self, name, methods[i].fn);
  if (strcmp(name, "pattern") == 0) return sr_ref(pt->text);
  if (strcmp(name, "groups") == 0) return sr_int(NULL, pt->ngroups);
  return NULL;
}

static const SrLangOps pattern_ops = {.getattr = pattern_getattr};

void sr_re_init(void) {
  sr_register("re.IGNORECASE", sr_int(NULL, F_IGNORECASE));
  sr_register("re.I", sr_int(NULL, F_IGNORECASE));
  sr_register("re.DOTALL", sr_int(NULL, F_DOTALL));
  sr_register("re.S", sr_int(NULL, F_DOTALL));
  sr_def("re.search", pyre_search, "re.search(pattern, string): the first match anywhere, or None");
  sr_def("re.match", pyre_match, "re.match(pattern, string): a match at the start, or None");
  sr_def("re.fullmatch", pyre_fullmatch, "re.fullmatch(pattern, string): a match of the whole string, or None");
  sr_def("re.findall", pyre_findall, "re.findall(pattern, string): every match's text (or groups)");
  sr_def("re.finditer", pyre_finditer, "re.finditer(pattern, string): every match, as Match objects");
  sr_def("re.sub", pyre_sub, "re.sub(pattern, repl, string, count=0): replace matches (\\1, \\g<1>, or a function)");
  sr_def("re.split", pyre_split, "re.split(pattern, string, maxsplit=0)");
  sr_def("re.compile", pyre_compile,
         "re.compile(pattern): a compiled pattern (POSIX extended regular expressions, "
         "with \\d \\w \\s; no (?...) groups or lazy quantifiers)");
  sr_def("re.escape", pyre_escape, "re.escape(pattern): the pattern with its special characters escaped");
}
