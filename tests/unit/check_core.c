/* check_core.c: unit tests of the core layer (lib/core).
 *
 *  - raising and clearing an exception.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"
#include "util/intern.h"
#include "util/mem.h"

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
  TCase *tc = tcase_create("exceptions");
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
