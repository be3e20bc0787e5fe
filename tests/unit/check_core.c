/* check_core.c: unit tests of the core layer (lib/core).
 *
 *  - a param list (SrPList) keeps every pair added, past the ones it holds
 *    inline (it used to drop the 25th and later silently), and can be
 *    reused after sr_plist_free;
 *  - raising and clearing an exception.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"
#include "util/intern.h"
#include "util/mem.h"

START_TEST(test_plist_grows) {
  SrPList ps = {0};
  enum { N = 3 * SR_PLIST_INLINE + 5 };
  char key[16];
  for (int i = 0; i < N; i++) {
    snprintf(key, sizeof key, "k%d", i);
    sr_plist_add(&ps, key, sr_int(NULL, i));
  }
  ck_assert_int_eq(ps.n, N);
  for (int i = 0; i < N; i++) {
    snprintf(key, sizeof key, "k%d", i);
    ck_assert_ptr_eq(ps.p[i].key, sr_intern_cstr(key));
    ck_assert_int_eq(ps.p[i].val->kind, SR_V_INT);
    ck_assert_int_eq(ps.p[i].val->i, i);
  }
  sr_plist_free(&ps);
  ck_assert_int_eq(ps.n, 0);
  /* reused after freeing */
  sr_plist_add(&ps, "again", sr_int(NULL, 7));
  ck_assert_int_eq(ps.n, 1);
  ck_assert_str_eq(ps.p[0].key, "again");
  sr_plist_free(&ps);
}
END_TEST

START_TEST(test_raise) {
  SrInterp *I = sr_xcalloc(1, sizeof *I);
  ck_assert_ptr_null(sr_raise(I, "ValueError", "bad %d", 3));
  ck_assert_ptr_nonnull(I->exc);
  ck_assert_str_eq(sr_exc_type(I->exc), "ValueError");
  ck_assert_str_eq(sr_exc_msg(I->exc), "bad 3");
  sr_exc_clear(I);
  ck_assert_ptr_null(I->exc);
  free(I);
}
END_TEST

static Suite *core_suite(void) {
  Suite *s = suite_create("core");
  TCase *tc = tcase_create("plist");
  tcase_add_test(tc, test_plist_grows);
  suite_add_tcase(s, tc);
  tc = tcase_create("exceptions");
  tcase_add_test(tc, test_raise);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(core_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
