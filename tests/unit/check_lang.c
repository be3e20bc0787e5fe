/* check_lang.c: unit tests of the statement language's C API -- the lexer
 * (lang/lex.h), the statement parser (lang/ast.h) and the interpreter
 * (lang/interp.h).  What the language prints is tested by the golden
 * scripts; these tests pin the API that the REPL and later stages use.
 *
 * Set SR_CHECK_PENDING=1 to also run the cases of known bugs (see
 * tests/golden/pending/).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/array.h"
#include "py/ast.h"
#include "cmd/commands.h"
#include "cmd/linit.h"
#include "py/interp.h"
#include "py/lex.h"
#include "py/objects.h"
#include "py/script.h"
#include "util/intern.h"

/* ---- the lexer ---- */

/* Lexes text whole and writes its tokens, one word each, into a string:
   NAME:x OP:= INT:1 FLOAT:2.5 IMAG:3 STR:text FSTR:text JAXPR NL IN DE END,
   or "ERROR:message" where lexing failed. */
static char *tokens(const char *text) {
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  SrCode *code = sr_code_new(src);
  SrDiags d = SR_DIAGS_INIT;
  SrLexer lx;
  sr_lex_init(&lx, code, src, 0, &d, NULL);
  SrBuf b = SR_BUF_INIT;
  for (int guard = 0; guard < 1000; guard++) {
    SrTok t = sr_lex_next(&lx);
    if (lx.error) {
      sr_buf_printf(&b, "%sERROR:%s", b.len ? " " : "", d.first ? d.first->msg : "?");
      break;
    }
    if (b.len) sr_buf_putc(&b, ' ');
    switch (t.kind) {
    case SR_T_END: sr_buf_puts(&b, "END"); break;
    case SR_T_NEWLINE: sr_buf_puts(&b, "NL"); break;
    case SR_T_INDENT: sr_buf_puts(&b, "IN"); break;
    case SR_T_DEDENT: sr_buf_puts(&b, "DE"); break;
    case SR_T_NAME: sr_buf_printf(&b, "NAME:%s", t.text); break;
    case SR_T_OP: sr_buf_printf(&b, "OP:%s", t.text); break;
    case SR_T_INT: sr_buf_printf(&b, "INT:%lld", (long long)t.i); break;
    case SR_T_FLOAT: sr_buf_printf(&b, "FLOAT:%g", t.f); break;
    case SR_T_IMAG: sr_buf_printf(&b, "IMAG:%g", t.f); break;
    case SR_T_STRING:
      sr_buf_printf(&b, "%s:", t.fstring ? "FSTR" : t.bytes ? "BYTES" : "STR");
      sr_buf_putn(&b, t.text, t.textlen);
      break;
    case SR_T_JAXPR:
      sr_buf_printf(&b, "JAXPR:%u", t.prog && t.prog->top ? sr_nargs(t.prog->top) : 99u);
      break;
    }
    if (t.kind == SR_T_END) break;
  }
  sr_diags_clear(&d);
  sr_code_unref(code);
  sr_src_unref(src);
  return sr_buf_steal(&b);
}

#define CHECK_TOKENS(text, want)         \
  do {                                   \
    char *got_ = tokens(text);           \
    ck_assert_str_eq(got_, want);        \
    free(got_);                          \
  } while (0)

START_TEST(test_lex_simple) {
  CHECK_TOKENS("x = 1 + 2.5\n", "NAME:x OP:= INT:1 OP:+ FLOAT:2.5 NL END");
  CHECK_TOKENS("a**=b // c", "NAME:a OP:**= NAME:b OP:// NAME:c NL END");
  CHECK_TOKENS("f(a, *b, **c) -> d", "NAME:f OP:( NAME:a OP:, OP:* NAME:b OP:, OP:** NAME:c OP:) OP:-> NAME:d NL END");
  CHECK_TOKENS("x == y != z <= w", "NAME:x OP:== NAME:y OP:!= NAME:z OP:<= NAME:w NL END");
  /* comments and blank lines make no tokens */
  CHECK_TOKENS("# a comment\n\nx  # trailing\n\n", "NAME:x NL END");
  CHECK_TOKENS("", "END");
}
END_TEST

START_TEST(test_lex_numbers) {
  CHECK_TOKENS("0x1f 0o17 0b101 1_000_000", "INT:31 INT:15 INT:5 INT:1000000 NL END");
  CHECK_TOKENS("1.5 .5 1e3 2.5e-3 1E+2", "FLOAT:1.5 FLOAT:0.5 FLOAT:1000 FLOAT:0.0025 FLOAT:100 NL END");
  CHECK_TOKENS("3j 1.5J", "IMAG:3 IMAG:1.5 NL END");
  CHECK_TOKENS("x.real", "NAME:x OP:. NAME:real NL END");
}
END_TEST

START_TEST(test_lex_strings) {
  CHECK_TOKENS("'a\\tb'", "STR:a\tb NL END");
  CHECK_TOKENS("\"it's\"", "STR:it's NL END");
  CHECK_TOKENS("r'\\n'", "STR:\\n NL END");
  CHECK_TOKENS("'\\x41\\\\'", "STR:A\\ NL END");
  CHECK_TOKENS("'''two\nlines'''", "STR:two\nlines NL END");
  CHECK_TOKENS("f'{x=}!'", "FSTR:{x=}! NL END");
  CHECK_TOKENS("b'ab'", "BYTES:ab NL END");
  CHECK_TOKENS("'a' 'b'", "STR:a STR:b NL END");
  /* a name that is not a string prefix stays a name */
  CHECK_TOKENS("xy'a'", "NAME:xy STR:a NL END");
  CHECK_TOKENS("'open", "ERROR:unterminated string literal");
  CHECK_TOKENS("'''open", "ERROR:unterminated string literal");
  CHECK_TOKENS("x = 5 $ 3", "NAME:x OP:= INT:5 ERROR:invalid character '$' in the input");
}
END_TEST

START_TEST(test_lex_indent) {
  CHECK_TOKENS("if x:\n    y\nz\n",
               "NAME:if NAME:x OP:: NL IN NAME:y NL DE NAME:z NL END");
  CHECK_TOKENS("def f():\n  if a:\n    b\n  c\n",
               "NAME:def NAME:f OP:( OP:) OP:: NL IN NAME:if NAME:a OP:: NL IN NAME:b NL DE NAME:c NL DE END");
  /* two blocks closing at once: two DEDENTs */
  CHECK_TOKENS("for i in r:\n    if i:\n        p\nq\n",
               "NAME:for NAME:i NAME:in NAME:r OP:: NL IN NAME:if NAME:i OP:: NL IN NAME:p NL DE DE NAME:q NL END");
  /* blank and comment-only lines inside a block do not end it */
  CHECK_TOKENS("if x:\n    a\n\n  # note\n    b\n",
               "NAME:if NAME:x OP:: NL IN NAME:a NL NAME:b NL DE END");
  /* inside brackets lines join; a backslash joins too */
  CHECK_TOKENS("(1,\n   2)\n", "OP:( INT:1 OP:, INT:2 OP:) NL END");
  CHECK_TOKENS("x = 1 + \\\n  2\n", "NAME:x OP:= INT:1 OP:+ INT:2 NL END");
  CHECK_TOKENS("if x:\n    a\n  b\n", "NAME:if NAME:x OP:: NL IN NAME:a NL "
                                      "ERROR:unindent does not match any outer indentation level");
}
END_TEST

START_TEST(test_lex_jaxpr) {
  /* a jaxpr as JAX prints it is one token holding the parsed program */
  CHECK_TOKENS("f = { lambda ; a:f32[] b:i32[2]. let  in (a,) }\n", "NAME:f OP:= JAXPR:2 NL END");
  CHECK_TOKENS("{ lambda ; a:f32[8]. let\n    b:f32[8] = sin a\n  in (b,) }\n", "JAXPR:1 NL END");
  CHECK_TOKENS("let g = { lambda ; a:f32[]. let  in (a,) } in { lambda ; x:f32[]. let\n"
               "    y:f32[] = pjit[name=g jaxpr=g] x\n  in (y,) }",
               "JAXPR:1 NL END");
  /* a dict or set display is not a jaxpr; nor is a name starting with let */
  CHECK_TOKENS("{1: 2}", "OP:{ INT:1 OP:: INT:2 OP:} NL END");
  CHECK_TOKENS("{lam}", "OP:{ NAME:lam OP:} NL END");
  CHECK_TOKENS("letter = 1", "NAME:letter OP:= INT:1 NL END");
  char *got = tokens("{ lambda ; a:f32[]. let b:f32[] = sin c in (b,) }");
  ck_assert_msg(strncmp(got, "ERROR:", 6) == 0 && strstr(got, "'c'"), "%s", got);
  free(got);
}
END_TEST

/* ---- the statement parser ---- */

typedef struct Parsed {
  int kinds[16];
  int n;
  int errors, incomplete;
  char msg[256];
} Parsed;

/* Parses every statement of text with sr_lang_parse_stmt. */
static Parsed parse_all(const char *text) {
  Parsed r;
  memset(&r, 0, sizeof r);
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  SrCode *code = sr_code_new(src);
  SrDiags d = SR_DIAGS_INIT;
  size_t pos = 0;
  while (r.n < 16) {
    size_t before = pos;
    SrNode *n = sr_lang_parse_stmt(code, &pos, &d, NULL);
    if (!n) break;
    r.kinds[r.n++] = n->kind;
    ck_assert_msg(pos > before, "the parser did not advance");
  }
  r.errors = d.count;
  r.incomplete = d.incomplete;
  if (d.first) snprintf(r.msg, sizeof r.msg, "%s", d.first->msg);
  sr_diags_clear(&d);
  sr_code_unref(code);
  sr_src_unref(src);
  return r;
}

START_TEST(test_parse_statements) {
  Parsed p = parse_all("x = 1\ny = x + 2\nprint(y)\n");
  ck_assert_int_eq(p.n, 3);
  ck_assert_int_eq(p.errors, 0);
  ck_assert_int_eq(p.kinds[0], SR_N_ASSIGN);
  ck_assert_int_eq(p.kinds[2], SR_N_EXPR);
  p = parse_all("def f(a, b=1, *c, d, **e):\n    return a\n\nf(1)\n");
  ck_assert_int_eq(p.n, 2);
  ck_assert_int_eq(p.kinds[0], SR_N_DEF);
  p = parse_all("@dec\ndef g():\n    pass\n");
  ck_assert_int_eq(p.n, 1);
  ck_assert_int_eq(p.kinds[0], SR_N_DEF);
  p = parse_all("if a:\n    b\nelif c:\n    d\nelse:\n    e\nfor i in x:\n    pass\n"
                "while 0:\n    break\ntry:\n    pass\nexcept E as e:\n    pass\nfinally:\n    pass\n"
                "with m as n:\n    pass\n");
  ck_assert_int_eq(p.errors, 0);
  ck_assert_int_eq(p.n, 5);
  ck_assert_int_eq(p.kinds[0], SR_N_IF);
  ck_assert_int_eq(p.kinds[1], SR_N_FOR);
  ck_assert_int_eq(p.kinds[2], SR_N_WHILE);
  ck_assert_int_eq(p.kinds[3], SR_N_TRY);
  ck_assert_int_eq(p.kinds[4], SR_N_WITH);
  p = parse_all("import jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P, Mesh\n");
  ck_assert_int_eq(p.n, 2);
  ck_assert_int_eq(p.kinds[0], SR_N_IMPORT);
  ck_assert_int_eq(p.kinds[1], SR_N_FROM);
  p = parse_all("x += 1\nassert x, 'm'\nraise E('x')\ndel x\nglobal g\npass\n");
  ck_assert_int_eq(p.errors, 0);
  ck_assert_int_eq(p.kinds[0], SR_N_AUGASSIGN);
  ck_assert_int_eq(p.kinds[1], SR_N_ASSERT);
  ck_assert_int_eq(p.kinds[2], SR_N_RAISE);
  ck_assert_int_eq(p.kinds[3], SR_N_DEL);
  ck_assert_int_eq(p.kinds[4], SR_N_GLOBAL);
  ck_assert_int_eq(p.kinds[5], SR_N_PASS);
  /* several statements on one line */
  p = parse_all("a = 1; b = 2\n");
  ck_assert_int_eq(p.errors, 0);
  ck_assert_int_eq(p.n, 1);
  ck_assert_int_eq(p.kinds[0], SR_N_SEQ);
  /* a jaxpr literal is an expression */
  p = parse_all("f = { lambda ; a:f32[]. let\n    b:f32[] = sin a\n  in (b,) }\n");
  ck_assert_int_eq(p.n, 1);
  ck_assert_int_eq(p.kinds[0], SR_N_ASSIGN);
  p = parse_all("");
  ck_assert_int_eq(p.n, 0);
  ck_assert_int_eq(p.errors, 0);
}
END_TEST

/* Input the REPL must wait on: the parse fails with d->incomplete, and
   says whether something is open (blank lines go on with it) or a block
   is still to come (a blank line ends the input). */
START_TEST(test_parse_incomplete) {
  static const struct {
    const char *text;
    int flags;
  } more[] = {
    {"x = (1,\n", SR_INCOMPLETE_OPEN},
    {"x = [1, 2\n", SR_INCOMPLETE_OPEN},
    {"d = {'a':\n", SR_INCOMPLETE_OPEN},
    {"f(a,\n  b,\n", SR_INCOMPLETE_OPEN},
    {"x = (1 +\n\n", SR_INCOMPLETE_OPEN},
    {"def f():\n", SR_INCOMPLETE_BLOCK},
    {"if x:\n", SR_INCOMPLETE_BLOCK},
    {"for i in range(3):\n", SR_INCOMPLETE_BLOCK},
    {"@dec\n", SR_INCOMPLETE_BLOCK},
    {"try:\n    pass\n", SR_INCOMPLETE_BLOCK},
    {"if x:\n    pass\nelse:\n", SR_INCOMPLETE_BLOCK},
    {"s = '''abc\n", SR_INCOMPLETE_OPEN},
    {"x = 1 + \\\n", SR_INCOMPLETE_OPEN},
    {"f = { lambda ; a:f32[]. let\n", SR_INCOMPLETE_OPEN},
    {"f = { lambda ; a:f32[]. let\n    b:f32[] = sin a\n", SR_INCOMPLETE_OPEN},
    {NULL, 0},
  };
  for (int i = 0; more[i].text; i++) {
    Parsed p = parse_all(more[i].text);
    ck_assert_msg(p.errors == 1 && p.incomplete == more[i].flags, "%s: errors %d, incomplete %d (%s)", more[i].text,
                  p.errors, p.incomplete, p.msg);
  }
  /* errors that more input cannot fix, among them a line that ends where
     the statement cannot (Python's REPL reports `1 +` at once) */
  static const char *const bad[] = {
    "x = )\n", "x = 1 +* 2\n", "'abc\n", "def (x):\n", "if x:\npass\n", "x = 5 $ 3\n",
    "1 +\n", "x = 1 +\n", "for i in\n", "if x\n", "if x:\n    y = 1 +\n", "print(1) +\n",
    "lambda:\n", "x = [i for i in\n]\n", "def f(:\n", "del\n", NULL,
  };
  for (int i = 0; bad[i]; i++) {
    Parsed p = parse_all(bad[i]);
    ck_assert_msg(p.errors >= 1 && !p.incomplete, "%s: errors %d, incomplete %d (%s)", bad[i], p.errors,
                  p.incomplete, p.msg);
  }
}
END_TEST

/* Known bugs: a block inside a block is reported as an error, not as
   incomplete input, so the REPL cannot take it (pending/nested_blocks);
   nor can it take a line ending in a backslash. */
START_TEST(test_parse_incomplete_nested) {
  static const char *const more[] = {
    "def f():\n    for i in x:\n",
    "if a:\n    if b:\n",
    "x = 1 + \\\n",
    NULL,
  };
  for (int i = 0; more[i]; i++) {
    Parsed p = parse_all(more[i]);
    ck_assert_msg(p.errors == 1 && p.incomplete, "%s: errors %d, incomplete %d (%s)", more[i], p.errors,
                  p.incomplete, p.msg);
  }
}
END_TEST

START_TEST(test_parse_expr) {
  SrSrc *src = sr_src_new("t", "a + b * 2", 9, 1);
  SrCode *code = sr_code_new(src);
  SrDiags d = SR_DIAGS_INIT;
  SrNode *e = sr_lang_parse_expr(code, 0, &d, NULL);
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(e->kind, SR_N_BINOP);
  ck_assert_int_eq(e->op, SR_OP_ADD);
  ck_assert_int_eq(e->b->kind, SR_N_BINOP);
  ck_assert_int_eq(e->b->op, SR_OP_MUL);
  sr_code_unref(code);
  sr_src_unref(src);
  /* a statement is not an expression */
  src = sr_src_new("t", "x = 1", 5, 1);
  code = sr_code_new(src);
  ck_assert_ptr_null(sr_lang_parse_expr(code, 0, &d, NULL));
  ck_assert_int_eq(d.count, 1);
  sr_diags_clear(&d);
  sr_code_unref(code);
  sr_src_unref(src);
}
END_TEST

/* ---- the interpreter ---- */

/* An interpreter whose output goes to a memory buffer. */
typedef struct Session {
  SrInterp *I;
  char *out;
  size_t outlen;
  FILE *f;
} Session;

/* A session of init's language (NULL: plain Python). */
static void session_open_with(Session *s, const SrPyInit *init) {
  memset(s, 0, sizeof *s);
  s->I = sr_interp_new(init);
  s->f = open_memstream(&s->out, &s->outlen);
  ck_assert_ptr_nonnull(s->f);
  s->I->py->out = s->f;
}

static void session_open(Session *s) { session_open_with(s, &sr_linit); }

static void session_close(Session *s) {
  sr_interp_free(s->I);
  fclose(s->f);
  free(s->out);
}

/* Runs text, returns the number of failed statements; *printed gets what
   it printed (valid until the next call). */
static int run(Session *s, const char *text, int keep_going, const char **printed) {
  fflush(s->f);
  size_t start = s->outlen;
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  int failed = sr_interp_run(s->I, src, keep_going);
  sr_src_unref(src);
  fflush(s->f);
  if (printed) *printed = s->out + start;
  return failed;
}

static char *render(SrInterp *I) {
  SrBuf b = SR_BUF_INIT;
  sr_diags_render(&I->py->diags, &b);
  sr_diags_clear(&I->py->diags);
  return sr_buf_steal(&b);
}

START_TEST(test_interp_bindings) {
  Session s;
  session_open(&s);
  const char *out;
  ck_assert_int_eq(run(&s, "x = 6 * 7\nname = 'jax'\n", 0, &out), 0);
  ck_assert_str_eq(out, "");
  SrVal *x = sr_global_get(s.I, "x");
  ck_assert_ptr_nonnull(x);
  ck_assert_int_eq(x->kind, SR_V_INT);
  ck_assert_int_eq(x->i, 42);
  SrVal *name = sr_global_get(s.I, "name");
  ck_assert_int_eq(name->kind, SR_V_STR);
  ck_assert_str_eq(name->str.s, "jax");
  ck_assert_ptr_null(sr_global_get(s.I, "nope"));
  /* a value set from C is seen by the code */
  sr_global_set(s.I, "from_c", sr_int(NULL, 5));
  ck_assert_int_eq(run(&s, "print(from_c + x)\n", 0, &out), 0);
  ck_assert_str_eq(out, "47\n");
  /* echo of bare expressions, which the driver may turn off */
  ck_assert_int_eq(run(&s, "x + 1\nNone\n'a'\n", 0, &out), 0);
  ck_assert_str_eq(out, "43\n'a'\n");
  s.I->py->echo = 0;
  ck_assert_int_eq(run(&s, "x + 1\n", 0, &out), 0);
  ck_assert_str_eq(out, "");
  s.I->py->echo = 1;
  /* a jaxpr literal binds a jaxpr value */
  ck_assert_int_eq(run(&s, "f = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) }\n", 0, NULL), 0);
  SrVal *f = sr_global_get(s.I, "f");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(f->kind, SR_V_JAXPR);
  /* eval_text evaluates one expression */
  SrSrc *src = sr_src_new("t", "x - 2", 5, 1);
  SrVal *v = sr_interp_eval_text(s.I, src, 0);
  sr_src_unref(src);
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq(v->i, 40);
  sr_unref(v);
  /* reset forgets the user's bindings, not the built-ins */
  sr_interp_reset(s.I);
  ck_assert_ptr_null(sr_global_get(s.I, "x"));
  ck_assert_int_eq(run(&s, "print(len([1, 2]))\n", 0, &out), 0);
  ck_assert_str_eq(out, "2\n");
  session_close(&s);
}
END_TEST

/* Without the init table py/ is plain Python: jaxpr literals parse but
   are neither checked nor callable, and there are no colon commands. */
START_TEST(test_interp_plain) {
  static const char bad[] = "g = { lambda ; a:f32[]. let b:i32[] = sin a in (b,) }\n";
  Session s;
  session_open_with(&s, NULL);
  const char *out;
  ck_assert_int_eq(run(&s, "x = [i * i for i in range(4)]\nprint(x, len(x))\n", 0, &out), 0);
  ck_assert_str_eq(out, "[0, 1, 4, 9] 4\n");
  ck_assert_int_eq(run(&s, bad, 0, NULL), 0);
  ck_assert_int_eq(run(&s, "g(1.0)\n", 0, NULL), 1);
  char *r = render(s.I);
  ck_assert_ptr_nonnull(strstr(r, "NotImplementedError: calling a jaxpr is not available"));
  free(r);
  ck_assert_int_eq(run(&s, ":help\n", 0, NULL), 1);
  ck_assert_int_eq(sr_diags_kind(&s.I->py->diags), SR_E_USAGE);
  r = render(s.I);
  ck_assert_ptr_nonnull(strstr(r, "colon commands are not available"));
  free(r);
  session_close(&s);
  /* shardrepl's table checks the literal */
  session_open(&s);
  ck_assert_int_eq(run(&s, bad, 0, NULL), 1);
  r = render(s.I);
  ck_assert_ptr_nonnull(strstr(r, "TypeError"));
  free(r);
  session_close(&s);
}
END_TEST

START_TEST(test_name_suggestion) {
  /* CPython's Python/suggestions.c: a case flip costs 1, other edits 2,
     at most a third of the characters change, and the first of equals in
     builtins' order wins (bin before min) */
  ck_assert_str_eq(sr_name_suggestion(NULL, NULL, "sin"), "bin");
  ck_assert_str_eq(sr_name_suggestion(NULL, NULL, "prnt"), "print");
  ck_assert_str_eq(sr_name_suggestion(NULL, NULL, "Print"), "print");
  ck_assert_str_eq(sr_name_suggestion(NULL, NULL, "nope"), "None");
  ck_assert_ptr_null(sr_name_suggestion(NULL, NULL, "xyzzy"));
  ck_assert_ptr_null(sr_name_suggestion(NULL, NULL, "print")); /* itself is no suggestion */
  ck_assert_ptr_null(sr_name_suggestion(NULL, NULL, "p"));
  /* longer than 40 characters: none */
  ck_assert_ptr_null(sr_name_suggestion(NULL, NULL, "isinstanceisinstanceisinstanceisinstance_"));
  /* the locals first, then the globals, then the built-ins */
  SrEnv *g = sr_env_new(NULL), *l = sr_env_new(g);
  sr_env_set(g, sr_intern_cstr("counter"), sr_int(NULL, 1));
  sr_env_set(l, sr_intern_cstr("county"), sr_int(NULL, 2));
  ck_assert_str_eq(sr_name_suggestion(NULL, g, "countr"), "counter");
  ck_assert_str_eq(sr_name_suggestion(l, g, "countr"), "county");
  ck_assert_str_eq(sr_name_suggestion(l, g, "prnt"), "print");
  sr_env_unref(l);
  sr_env_unref(g);
}
END_TEST

START_TEST(test_interp_errors) {
  Session s;
  session_open(&s);
  const char *out;
  /* an error stops the source; what ran before it stays bound */
  ck_assert_int_eq(run(&s, "a = 1\nb = a / 0\nc = 3\n", 0, &out), 1);
  ck_assert_ptr_nonnull(sr_global_get(s.I, "a"));
  ck_assert_ptr_null(sr_global_get(s.I, "b"));
  ck_assert_ptr_null(sr_global_get(s.I, "c"));
  ck_assert_int_eq(s.I->py->diags.count, 1);
  ck_assert_int_eq(sr_diags_kind(&s.I->py->diags), SR_E_RUNTIME);
  char *r = render(s.I);
  ck_assert_str_eq(r, "t:2:7: error: ZeroDivisionError: division by zero\n"
                      "    b = a / 0\n"
                      "          ^\n");
  free(r);
  /* keep going: every error is counted and the rest runs */
  ck_assert_int_eq(run(&s, "d = 1 / 0\ne = nope\nf = 3\n", 1, &out), 2);
  ck_assert_int_eq(s.I->py->diags.count, 2);
  ck_assert_int_eq(sr_global_get(s.I, "f")->i, 3);
  r = render(s.I);
  /* with CPython's suggestion */
  ck_assert_msg(strstr(r, "t:2:5: error: NameError: name 'nope' is not defined. Did you mean: 'None'?\n") != NULL, "%s", r);
  free(r);
  /* a parse error is of kind SR_E_PARSE */
  ck_assert_int_eq(run(&s, "x = (1 +* 2)\n", 0, NULL), 1);
  ck_assert_int_eq(sr_diags_kind(&s.I->py->diags), SR_E_PARSE);
  r = render(s.I);
  ck_assert_msg(strstr(r, "t:1:9: error: invalid syntax") == r, "%s", r);
  free(r);
  /* an exception the code catches is no error */
  ck_assert_int_eq(run(&s, "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print('caught', e)\n", 0, &out), 0);
  ck_assert_str_eq(out, "caught division by zero\n");
  ck_assert_int_eq(s.I->py->diags.count, 0);
  /* runaway recursion is an error, not a crash */
  ck_assert_int_eq(run(&s, "def r(n):\n    return r(n + 1)\n\nr(0)\n", 0, NULL), 1);
  ck_assert_int_eq(s.I->py->diags.count, 1);
  sr_diags_clear(&s.I->py->diags);
  session_close(&s);
}
END_TEST

START_TEST(test_interp_commands) {
  Session s;
  session_open(&s);
  const char *out;
  /* the table is data: it has the base commands */
  int n = 0, help = 0, quit = 0;
  for (const SrCommand *c = sr_commands(); c->name; c++, n++) {
    ck_assert_ptr_nonnull(c->help);
    ck_assert_ptr_nonnull(c->run);
    if (strcmp(c->name, "help") == 0) help = 1;
    if (strcmp(c->name, "quit") == 0) quit = 1;
  }
  ck_assert_int_ge(n, 6);
  ck_assert(help && quit);
  ck_assert_int_eq(run(&s, "x = 2\n:type x\n:print x * 3\n", 0, &out), 0);
  ck_assert_str_eq(out, "<class 'int'>\n6\n");
  ck_assert_int_eq(run(&s, ":type { lambda ; a:f32[2] b:i32[]. let  in (b,) }\n", 0, &out), 0);
  ck_assert_str_eq(out, "(f32[2], i32[]) -> (i32[],)\n");
  ck_assert_int_eq(run(&s, ":nope\n", 0, NULL), 1);
  char *r = render(s.I);
  ck_assert_msg(strstr(r, "unknown command ':nope'") != NULL, "%s", r);
  free(r);
  /* :quit stops the source and tells the driver */
  ck_assert_int_eq(run(&s, "y = 1\n:quit\nz = 2\n", 0, NULL), 0);
  ck_assert_int_eq(s.I->py->quit, 1);
  ck_assert_ptr_nonnull(sr_global_get(s.I, "y"));
  ck_assert_ptr_null(sr_global_get(s.I, "z"));
  session_close(&s);
}
END_TEST

START_TEST(test_interp_jaxpr_memory) {
  /* calling a jaxpr value drops each intermediate after its last use: a
     200-equation chain on a 1 MiB array holds a few arrays, not 200 */
  const int neq = 200, n = 1 << 18;
  SrBuf t = SR_BUF_INIT;
  sr_buf_printf(&t, "import jax.numpy as jnp\nx = jnp.ones(%d, dtype=jnp.float32)\n", n);
  sr_buf_printf(&t, "f = { lambda ; a:f32[%d]. let\n", n);
  for (int i = 0; i < neq; i++) {
    char in[16] = "a";
    if (i) snprintf(in, sizeof in, "v%d", i);
    sr_buf_printf(&t, "    v%d:f32[%d] = %s %s\n", i + 1, n, i % 2 ? "abs" : "neg", in);
  }
  sr_buf_printf(&t, "  in (v%d,) }\n", neq);
  char *text = sr_buf_steal(&t);
  Session s;
  session_open(&s);
  ck_assert_int_eq(run(&s, text, 0, NULL), 0);
  size_t before, peak;
  sr_buffer_stats(&before, NULL);
  sr_buffer_stats_reset_peak();
  ck_assert_int_eq(run(&s, "y = f(x)\n", 0, NULL), 0);
  sr_buffer_stats(NULL, &peak);
  ck_assert_msg(peak - before <= (size_t)4 * n * 4, "peak %zu KiB over %zu KiB", (peak - before) >> 10, (size_t)n * 4 >> 10);
  session_close(&s);
  free(text);
}
END_TEST

START_TEST(test_interp_closure_cycles) {
  /* a closure's environment holds the function bound in it and the
     function holds the environment; :reset and the end of the session
     free them all the same */
  Session s;
  session_open(&s);
  size_t base = sr_env_live();
  ck_assert_int_eq(run(&s,
                       "def adder(k):\n"
                       "    def add(x):\n"
                       "        return x + k\n"
                       "    return add\n"
                       "add3 = adder(3)\n"
                       "def counter():\n"
                       "    count = [0]\n"
                       "    def inc():\n"
                       "        count[0] += 1\n"
                       "        return count[0]\n"
                       "    return inc\n"
                       "c = counter()\n"
                       "c(), add3(4)\n",
                       0, NULL),
                   0);
  ck_assert_uint_gt(sr_env_live(), base);
  ck_assert_int_eq(run(&s, ":reset\n", 0, NULL), 0);
  ck_assert_uint_eq(sr_env_live(), base);
  ck_assert_int_eq(run(&s, "def outer():\n    def inner():\n        return 1\n    return inner\nf = outer()\n", 0, NULL), 0);
  session_close(&s);
  ck_assert_uint_eq(sr_env_live(), base - 1); /* the globals too */
}
END_TEST

START_TEST(test_interp_container_cycles) {
  /* containers that only hold each other (a list appended to itself, a
     dict holding itself, a tuple and a list, a function whose attribute
     holds it) are freed at :reset and at the end of the session */
  Session s;
  session_open(&s);
  size_t base = sr_val_containers_live();
  const char *cycles = "l = [1]\n"
                       "l.append(l)\n"
                       "d = {}\n"
                       "d['self'] = d\n"
                       "t = ([],)\n"
                       "t[0].append(t)\n"
                       "a = [[]]\n"
                       "a[0].append({'x': a})\n"
                       "def f():\n"
                       "    return 1\n"
                       "f.attr = [f]\n"
                       "keep = [l, d]\n";
  ck_assert_int_eq(run(&s, cycles, 0, NULL), 0);
  ck_assert_uint_gt(sr_val_containers_live(), base + 6);
  /* held from outside: nothing is collected */
  ck_assert_uint_eq(sr_val_collect_cycles(), 0);
  ck_assert_int_eq(run(&s, "print(keep[0][1][0], keep[1]['self']['self'] is d, f.attr[0]())\n", 0, NULL), 0);
  ck_assert_int_eq(run(&s, ":reset\n", 0, NULL), 0);
  ck_assert_uint_eq(sr_val_containers_live(), base);
  ck_assert_int_eq(run(&s, cycles, 0, NULL), 0);
  session_close(&s);
  ck_assert_uint_eq(sr_val_containers_live(), base);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("lang");
  TCase *lex = tcase_create("lex");
  tcase_add_test(lex, test_lex_simple);
  tcase_add_test(lex, test_lex_numbers);
  tcase_add_test(lex, test_lex_strings);
  tcase_add_test(lex, test_lex_indent);
  tcase_add_test(lex, test_lex_jaxpr);
  suite_add_tcase(s, lex);
  TCase *parse = tcase_create("parse");
  tcase_add_test(parse, test_parse_statements);
  tcase_add_test(parse, test_parse_incomplete);
  tcase_add_test(parse, test_parse_expr);
  suite_add_tcase(s, parse);
  TCase *interp = tcase_create("interp");
  tcase_add_test(interp, test_interp_bindings);
  tcase_add_test(interp, test_name_suggestion);
  tcase_add_test(interp, test_interp_errors);
  tcase_add_test(interp, test_interp_plain);
  tcase_add_test(interp, test_interp_commands);
  tcase_add_test(interp, test_interp_jaxpr_memory);
  tcase_add_test(interp, test_interp_closure_cycles);
  tcase_add_test(interp, test_interp_container_cycles);
  suite_add_tcase(s, interp);
  tcase_add_test(parse, test_parse_incomplete_nested);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
