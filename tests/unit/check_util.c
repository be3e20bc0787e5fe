/* check_util.c: unit tests of lib/util. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/diag.h"
#include "util/intern.h"
#include "util/mem.h"
#include "util/pyfmt.h"

static const char *float_repr(double x) {
  static char out[64];
  SrBuf b = SR_BUF_INIT;
  sr_py_float_repr(&b, x);
  snprintf(out, sizeof out, "%s", b.p);
  sr_buf_free(&b);
  return out;
}

START_TEST(test_float_repr) {
  ck_assert_str_eq(float_repr(2.0), "2.0");
  ck_assert_str_eq(float_repr(0.1), "0.1");
  ck_assert_str_eq(float_repr((double)0.1f), "0.10000000149011612");
  ck_assert_str_eq(float_repr((double)1e-6f), "9.999999974752427e-07");
  ck_assert_str_eq(float_repr(1e-5), "1e-05");
  ck_assert_str_eq(float_repr(0.0001), "0.0001");
  ck_assert_str_eq(float_repr(1e16), "1e+16");
  ck_assert_str_eq(float_repr(1e15), "1000000000000000.0");
  ck_assert_str_eq(float_repr(-1.5), "-1.5");
  ck_assert_str_eq(float_repr(-0.0), "-0.0");
  ck_assert_str_eq(float_repr(1.0 / 0.0), "inf");
  ck_assert_str_eq(float_repr(123456.789), "123456.789");
}
END_TEST

START_TEST(test_str_repr) {
  SrBuf b = SR_BUF_INIT;
  sr_py_str_repr(&b, "X", 1);
  ck_assert_str_eq(b.p, "'X'");
  sr_buf_reset(&b);
  sr_py_str_repr(&b, "it's", 4);
  ck_assert_str_eq(b.p, "\"it's\"");
  sr_buf_reset(&b);
  sr_py_complex_str(&b, 1, 2);
  ck_assert_str_eq(b.p, "(1+2j)");
  sr_buf_free(&b);
}
END_TEST

START_TEST(test_intern_and_arena) {
  const char *a = sr_intern("abc", 3), *b = sr_intern_cstr("abc");
  ck_assert_ptr_eq(a, b);
  ck_assert_ptr_ne(a, sr_intern("abd", 3));
  SrArena *ar = sr_arena_new();
  for (int i = 0; i < 100000; i++) {
    int *p = sr_arena_alloc(ar, sizeof(int) * (size_t)(i % 7 + 1));
    p[0] = i;
    ck_assert_int_eq(((uintptr_t)p) % 16, 0);
  }
  void *big = sr_arena_alloc(ar, 10 << 20);
  memset(big, 1, 10 << 20);
  sr_arena_free(ar);
}
END_TEST

START_TEST(test_diag_caret) {
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *s = sr_src_new("f.jxr", "abc\n  def ghi\n", 14, 1);
  sr_error(&d, SR_E_PARSE, s, 10, "something at ghi");
  SrBuf b = SR_BUF_INIT;
  sr_diags_render(&d, &b);
  ck_assert_str_eq(b.p, "f.jxr:2:7: error: something at ghi\n      def ghi\n          ^\n");
  sr_buf_free(&b);
  sr_diags_clear(&d);
  sr_src_unref(s);
}
END_TEST

/* sr_src_linecol against a byte-by-byte count, at every offset of texts
   with empty lines, no final newline, a first line numbered 7 and none */
START_TEST(test_src_linecol) {
  static const char *texts[] = {"", "\n", "a", "ab\n\ncd\n", "x\ny\n\n\nzz z", "\n\nq"};
  for (size_t t = 0; t < sizeof texts / sizeof *texts; t++)
    for (uint32_t line0 = 1; line0 <= 7; line0 += 6) {
      size_t len = strlen(texts[t]);
      SrSrc *s = sr_src_new("f", texts[t], len, line0);
      uint32_t ln = line0, bol = 0;
      for (size_t off = 0; off <= len + 2; off++) {
        uint32_t line, col;
        sr_src_linecol(s, off, &line, &col);
        size_t o = off > len ? len : off;
        ck_assert_uint_eq(line, ln);
        ck_assert_uint_eq(col, o - bol + 1);
        if (off < len && texts[t][off] == '\n') ln++, bol = (uint32_t)off + 1;
      }
      sr_src_unref(s);
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_float_repr);
  tcase_add_test(tc, test_str_repr);
  tcase_add_test(tc, test_intern_and_arena);
  tcase_add_test(tc, test_diag_caret);
  tcase_add_test(tc, test_src_linecol);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
