/* check_text.c: unit tests of the parser and printer. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "text/parse.h"
#include "text/print.h"

/* Parses text and prints it back; returns a malloc'ed string, or the
   rendered errors prefixed with "ERROR: ". */
static char *roundtrip(const char *text) {
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *src = sr_src_new("t", text, strlen(text), 1);
  size_t end;
  SrProgram *p = sr_parse_program(src, 0, &end, NULL, &d);
  SrBuf b = SR_BUF_INIT;
  if (!p) {
    sr_buf_puts(&b, "ERROR: ");
    sr_diags_render(&d, &b);
  } else {
    sr_print_jaxpr(&b, p->top);
    sr_program_unref(p);
  }
  sr_diags_clear(&d);
  sr_src_unref(src);
  return sr_buf_steal(&b);
}

#define CHECK_SAME(text)                      \
  do {                                        \
    char *out = roundtrip(text);              \
    ck_assert_str_eq(out, text);              \
    free(out);                                \
  } while (0)

START_TEST(test_one_line) {
  CHECK_SAME("{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos b in (c,) }");
  CHECK_SAME("{ lambda ; a:i32[]. let  in (a,) }");
  CHECK_SAME("{ lambda ; . let  in () }");
}
END_TEST

START_TEST(test_sharded_types) {
  CHECK_SAME("{ lambda ; a:f32[8@X,4@Y] b:f32[2,2]{U:X}. let  in (a, b) }");
  CHECK_SAME("{ lambda ; a:f32[8@(X,Y)] b:f32[4]{V:X, U:Y}. let  in (a, b) }");
  CHECK_SAME("{ lambda ; a:f32<host>[8] b:f32[8]{U_max:X}. let  in (a, b) }");
  char *out = roundtrip("{ lambda ; a:f32[2,4]<U:X>. let  in (a,) }");
  ck_assert_str_eq(out, "{ lambda ; a:f32[2,4]{U:X}. let  in (a,) }");
  free(out);
}
END_TEST

START_TEST(test_multiline_and_names) {
  const char *t =
      "{ lambda ; a:f32[4,8] b:f32[8,2]. let\n"
      "    c:f32[4,2] = dot_general[\n"
      "      dimension_numbers=(([1], [0]), ([], []))\n"
      "      precision=BF16_BF16_F32\n"
      "      preferred_element_type=float32\n"
      "    ] a b\n"
      "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n"
      "    d:f32[4,2] = broadcast_in_dim 1.0:f32[]\n"
      "  in (d,) }";
  CHECK_SAME(t);
}
END_TEST

START_TEST(test_errors) {
  char *out = roundtrip("{ lambda ; a:f32[]. let b:f32[] = sin a in (b,)");
  ck_assert_msg(strstr(out, "'}' to close '{ lambda' at line 1") != NULL, "%s", out);
  free(out);
  out = roundtrip("{ lambda ; a:f32[]. let b:f32[] = sin c in (b,) }");
  ck_assert_msg(strstr(out, "t:1:39: error: variable 'c' is not defined") != NULL, "%s", out);
  free(out);
  out = roundtrip("{ lambda ; a:f32[8@X,4@X]. let  in (a,) }");
  ck_assert_msg(strstr(out, "used more than once") != NULL, "%s", out);
  free(out);
}
END_TEST

START_TEST(test_unknown_prim) {
  CHECK_SAME("{ lambda ; a:f32[]. let b:f32[] = frob[knob=(1, 'x') mode=<odd>] a in (b,) }");
}
END_TEST

/* The last-use table of a parsed jaxpr: the index of the equation reading
   each var last, SR_LAST_NONE for an unread one, SR_LAST_OUT for outputs;
   skipped equations read nothing. */
START_TEST(test_last_use) {
  const char *t =
      "{ lambda ; a:f32[] b:f32[]. let c:f32[] = sin a; d:f32[] = mul c b; e:f32[] = cos d; "
      "f:f32[] = add c 1.0:f32[]; _:f32[] = neg f in (e, b) }";
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *src = sr_src_new("t", t, strlen(t), 1);
  size_t end;
  SrProgram *p = sr_parse_program(src, 0, &end, NULL, &d);
  ck_assert_ptr_nonnull(p);
  const SrJaxpr *j = p->top;
  ck_assert_uint_eq(j->neqn, 5);
  const SrEqn *q = j->eqns;
  const SrVar *a = j->invars[0], *b = j->invars[1], *c = q[0].out[0], *dv = q[1].out[0];
  const SrVar *e = q[2].out[0], *f = q[3].out[0];
  int32_t *last = sr_jaxpr_last_use(j, NULL);
  ck_assert_int_eq(last[a->id], 0);
  ck_assert_int_eq(last[c->id], 3);
  ck_assert_int_eq(last[dv->id], 2);
  ck_assert_int_eq(last[f->id], 4);
  ck_assert_int_eq(last[b->id], SR_LAST_OUT);
  ck_assert_int_eq(last[e->id], SR_LAST_OUT);
  ck_assert(sr_dies_at(last, a, 0) && !sr_dies_at(last, a, 1));
  ck_assert(sr_dies_at(last, c, 3) && !sr_dies_at(last, c, 1));
  ck_assert(!sr_dies_at(last, b, 1) && !sr_dies_at(last, q[3].in[1], 3));
  ck_assert(sr_is_read(last, f) && sr_is_read(last, e) && !sr_is_read(last, q[4].out[0]));
  free(last);
  /* without the equations that will not run, f and c die earlier */
  uint8_t skip[5] = {0, 0, 0, 1, 1};
  last = sr_jaxpr_last_use(j, skip);
  ck_assert_int_eq(last[c->id], 1);
  ck_assert_int_eq(last[f->id], SR_LAST_NONE);
  ck_assert(!sr_is_read(last, f));
  free(last);
  sr_program_unref(p);
  sr_diags_clear(&d);
  sr_src_unref(src);
}
END_TEST

int main(void) {
  Suite *s = suite_create("text");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_one_line);
  tcase_add_test(tc, test_sharded_types);
  tcase_add_test(tc, test_multiline_and_names);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_unknown_prim);
  tcase_add_test(tc, test_last_use);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
