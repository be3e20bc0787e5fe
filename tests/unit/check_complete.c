/* check_complete.c: Tab completion (cmd/complete.h) without a terminal:
 * attributes after a dot, module names after import and from, a module's
 * names after `from M import`, file names after :load, bare names, and
 * never the implementation's internal names; and the indentation a
 * continuation line starts with. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/complete.h"
#include "cmd/linit.h"
#include "py/interp.h"

static SrInterp *I;

static void setup(void) {
  I = sr_interp_new(&sr_linit);
  I->py->out = NULL;
  const char *text = "import jax\nimport jax.numpy as jnp\nclass Point:\n    def __init__(self):\n"
                     "        self.x = 1\n        self._hidden = 2\n    def norm(self):\n        return 0\n"
                     "p = Point()\narr = jnp.arange(3)\nfive = 5\n";
  SrSrc *src = sr_src_new("setup", text, strlen(text), 1);
  ck_assert_int_eq(sr_interp_run(I, src, 0), 0);
  sr_src_unref(src);
}

static void teardown(void) { sr_interp_free(I); }

/* The completions of the end of line, the word starting at its last
   blank (or at start when given), joined by spaces. */
static char *complete(const char *line, int start) {
  if (start < 0) {
    const char *sp = strrchr(line, ' ');
    start = sp ? (int)(sp + 1 - line) : 0;
  }
  char **c;
  int n = sr_complete(I, line, start, &c);
  size_t len = 1;
  for (int i = 0; i < n; i++) len += strlen(c[i]) + 1;
  char *r = calloc(1, len);
  for (int i = 0; i < n; i++) {
    if (i) strcat(r, " ");
    strcat(r, c[i]);
    free(c[i]);
  }
  free(c);
  return r;
}

static int has(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; (p = strstr(p, word)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
  return 0;
}

#define EXPECT(line, want)                                \
  do {                                                    \
    char *got_ = complete(line, -1);                      \
    ck_assert_msg(strcmp(got_, want) == 0, "%s: got \"%s\"", line, got_); \
    free(got_);                                           \
  } while (0)

START_TEST(attributes_of_values) {
  EXPECT("p.", "p.norm p.x");
  EXPECT("p._", "p._hidden");
  EXPECT("p.no", "p.norm");
  EXPECT("x = five.re", "five.real");
  char *s = complete("arr.", -1);
  ck_assert_msg(has(s, "arr.sum") && has(s, "arr.shape") && has(s, "arr.T"), "%s", s);
  ck_assert_msg(!strstr(s, "method") && !strstr(s, "arr._"), "%s", s);
  free(s);
  s = complete("arr.__", -1);
  ck_assert_msg(has(s, "arr.__class__"), "%s", s);
  free(s);
}
END_TEST

START_TEST(attributes_of_modules) {
  EXPECT("jnp.linsp", "jnp.linspace");
  EXPECT("y = jnp.lins", "jnp.linspace");
  char *s = complete("jax.nn.", -1);
  ck_assert_msg(has(s, "jax.nn.relu") && has(s, "jax.nn.softmax"), "%s", s);
  free(s);
  s = complete("jnp.", -1);
  ck_assert_msg(has(s, "jnp.sin") && !strstr(s, "jnp._"), "%s", s);
  free(s);
  /* the implementation's names, even when asked for */
  EXPECT("jnp._get", "");
  EXPECT("jax.Array.me", "");
  EXPECT("nothing.", "");
}
END_TEST

START_TEST(module_names) {
  char *s = complete("import ", 7);
  ck_assert_msg(has(s, "jax") && has(s, "functools") && has(s, "math") && has(s, "enum"), "%s", s);
  ck_assert_msg(!has(s, "builtins") && !has(s, "os"), "%s", s);
  free(s);
  EXPECT("import func", "functools");
  EXPECT("from jax.tree_u", "jax.tree_util");
  s = complete("import jax.n", -1);
  ck_assert_msg(has(s, "jax.nn") && has(s, "jax.numpy") && !has(s, "jax.named_call"), "%s", s);
  free(s);
  EXPECT("from functools import par", "partial");
  EXPECT("from enum import Int", "IntEnum IntFlag");
}
END_TEST

START_TEST(file_names) {
  FILE *f = fopen("check_complete_tmp.jxr", "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  EXPECT(":load check_complete_tm", "check_complete_tmp.jxr");
  EXPECT(":l check_complete_tm", "check_complete_tmp.jxr");
  remove("check_complete_tmp.jxr");
  EXPECT(":load /nonexistent-dir/x", "");
  char *s = complete(":lo", 0);
  ck_assert_msg(has(s, ":load"), "%s", s);
  free(s);
}
END_TEST

START_TEST(bare_names) {
  EXPECT("fiv", "five");
  char *s = complete("prin", -1);
  ck_assert_msg(has(s, "print"), "%s", s);
  free(s);
  s = complete("_", -1);
  ck_assert_msg(!has(s, "_getitem"), "%s", s);
  free(s);
}
END_TEST

static void indent_is(const char *text, const char *want) {
  char *got = sr_complete_indent(text, strlen(text));
  ck_assert_msg(strcmp(got, want) == 0, "%s: got \"%s\"", text, got);
  free(got);
}

START_TEST(continuation_indent) {
  indent_is("def f(x):\n", "    ");
  indent_is("def f(x):\n    if x:\n", "        ");
  indent_is("def f(x):\n    y = x\n", "    ");
  indent_is("xs = [1,\n", "");
  indent_is("class C:  \n", "    ");
  indent_is("for i in range(3):\n\n", "    ");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("complete");
  TCase *t = tcase_create("complete");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, attributes_of_values);
  tcase_add_test(t, attributes_of_modules);
  tcase_add_test(t, module_names);
  tcase_add_test(t, file_names);
  tcase_add_test(t, bare_names);
  tcase_add_test(t, continuation_indent);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
