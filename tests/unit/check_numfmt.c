/* check_numfmt.c: unit tests of lib/exec/numfmt.
 *
 * The fixed cases below come from JAX's documentation and from numpy by
 * hand.  With NUMFMT_CASES naming a file written by tests/numfmt_oracle.py,
 * one more test runs every case in it (tests/numfmt_oracle.sh does that).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/numfmt.h"
#include "ir/dtype.h"
#include "util/buf.h"

static char *str_of(SrDtype dt, int ndim, const int64_t *shape, const void *data) {
  SrBuf b = SR_BUF_INIT;
  sr_numfmt_str(&b, dt, ndim, shape, data);
  return sr_buf_steal(&b);
}

static char *repr_of(SrDtype dt, int ndim, const int64_t *shape, const void *data, int weak) {
  SrBuf b = SR_BUF_INIT;
  sr_numfmt_repr(&b, dt, ndim, shape, data, weak);
  return sr_buf_steal(&b);
}

#define CHECK_STR(want, got_expr)        \
  do {                                   \
    char *got_ = (got_expr);             \
    ck_assert_str_eq(got_, want);        \
    free(got_);                          \
  } while (0)

/* The outputs printed in the seed (JAX's distributed arrays page). */
START_TEST(test_seed_outputs) {
  int64_t s22[] = {2, 2}, s24[] = {2, 4}, s48[] = {4, 8}, s44[] = {4, 4}, s8[] = {8};
  float a[] = {0, 1, 4, 5};
  CHECK_STR("[[0. 1.]\n [4. 5.]]", str_of(SR_F32, 2, s22, a));
  float b[] = {8, 9, 12, 13};
  CHECK_STR("[[ 8.  9.]\n [12. 13.]]", str_of(SR_F32, 2, s22, b));
  float c[] = {0, 0, 10, 11, 0, 0, 14, 15};
  CHECK_STR("[[ 0.  0. 10. 11.]\n [ 0.  0. 14. 15.]]", str_of(SR_F32, 2, s24, c));
  int32_t d[32];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 8; j++) d[i * 8 + j] = i + j;
  CHECK_STR("Array([[ 0,  1,  2,  3,  4,  5,  6,  7],\n"
            "       [ 1,  2,  3,  4,  5,  6,  7,  8],\n"
            "       [ 2,  3,  4,  5,  6,  7,  8,  9],\n"
            "       [ 3,  4,  5,  6,  7,  8,  9, 10]], dtype=int32)",
            repr_of(SR_I32, 2, s48, d, 0));
  float e[] = {1.f, 2.682942f, 2.818595f, 1.28224f,
               -0.513605f, -0.9178486f, 0.44116902f, 2.3139732f,
               2.9787164f, 1.824237f, -0.08804226f, -0.99998045f,
               -0.07314587f, 1.840334f, 2.9812148f, 2.3005757f};
  CHECK_STR("Array([[ 1.        ,  2.682942  ,  2.818595  ,  1.28224   ],\n"
            "       [-0.513605  , -0.9178486 ,  0.44116902,  2.3139732 ],\n"
            "       [ 2.9787164 ,  1.824237  , -0.08804226, -0.99998045],\n"
            "       [-0.07314587,  1.840334  ,  2.9812148 ,  2.3005757 ]],      dtype=float32)",
            repr_of(SR_F32, 2, s44, e, 0));
  float f[8];
  for (int i = 0; i < 8; i++) f[i] = sinf((float)i);
  CHECK_STR("Array([ 0.        ,  0.84147096,  0.9092974 ,  0.14112   , -0.7568025 ,\n"
            "       -0.9589243 , -0.2794155 ,  0.6569866 ], dtype=float32)",
            repr_of(SR_F32, 1, s8, f, 0));
}
END_TEST

START_TEST(test_scalars_and_0d) {
  float one = 1.0f;
  CHECK_STR("Array(1., dtype=float32)", repr_of(SR_F32, 0, NULL, &one, 0));
  CHECK_STR("Array(1., dtype=float32, weak_type=True)", repr_of(SR_F32, 0, NULL, &one, 1));
  CHECK_STR("1.0", str_of(SR_F32, 0, NULL, &one));
  int32_t five = 5;
  CHECK_STR("Array(5, dtype=int32, weak_type=True)", repr_of(SR_I32, 0, NULL, &five, 1));
  unsigned char t = 1;
  CHECK_STR("Array(True, dtype=bool)", repr_of(SR_BOOL, 0, NULL, &t, 0));
  CHECK_STR("True", str_of(SR_BOOL, 0, NULL, &t));
  SrBuf b = SR_BUF_INIT;
  float x = 1e-5f;
  sr_numfmt_scalar(&b, SR_F32, &x);
  ck_assert_str_eq(b.p, "1e-05");
  sr_buf_reset(&b);
  double y = 1e16;
  sr_numfmt_scalar(&b, SR_F64, &y);
  ck_assert_str_eq(b.p, "1e+16");
  sr_buf_reset(&b);
  uint16_t h = 0x7bff; /* float16 65504 */
  sr_numfmt_scalar(&b, SR_F16, &h);
  ck_assert_str_eq(b.p, "65500.0");
  sr_buf_reset(&b);
  float z[2] = {0.0f, -1.0f};
  sr_numfmt_scalar(&b, SR_C64, z);
  ck_assert_str_eq(b.p, "-1j");
  sr_buf_reset(&b);
  double w[2] = {1e20, 1e-7};
  sr_numfmt_scalar(&b, SR_C128, w);
  ck_assert_str_eq(b.p, "(1e+20+1e-07j)");
  sr_buf_free(&b);
}
END_TEST

/* JAX's docstrings: bfloat16 goes through ml_dtypes' repr, unpadded. */
START_TEST(test_ml_dtypes) {
  int64_t s4[] = {4};
  uint16_t bf[] = {0x4000, 0x4080, 0x40c0, 0x4100}; /* 2 4 6 8 */
  CHECK_STR("Array([2, 4, 6, 8], dtype=bfloat16)", repr_of(SR_BF16, 1, s4, bf, 0));
  uint16_t bf2[] = {0x3dcd, 0xbf80, 0x7fc0, 0xff80}; /* 0.1 -1 nan -inf */
  CHECK_STR("[0.100098 -1 nan -inf]", str_of(SR_BF16, 1, s4, bf2));
  int8_t i4[] = {-8, 7, 0, -1};
  CHECK_STR("Array([-8, 7, 0, -1], dtype=int4)", repr_of(SR_I4, 1, s4, i4, 0));
  unsigned char f8[] = {0x7e, 0x01, 0x7f, 0xb8}; /* e4m3fn: 448, 2^-9, nan, -1 */
  CHECK_STR("[448 0.00195312 nan -1]", str_of(SR_F8_E4M3FN, 1, s4, f8));
  unsigned char e5[] = {0x7c, 0xfc, 0x3c, 0x00}; /* e5m2: inf, -inf, 1, 0 */
  CHECK_STR("[inf -inf 1 0]", str_of(SR_F8_E5M2, 1, s4, e5));
  unsigned char e8[] = {127, 128, 0xff, 0}; /* e8m0fnu */
  CHECK_STR("[1 2 nan 5.87747e-39]", str_of(SR_F8_E8M0FNU, 1, s4, e8));
}
END_TEST

START_TEST(test_empty_and_summary) {
  int64_t s03[] = {0, 3};
  CHECK_STR("[]", str_of(SR_F32, 2, s03, NULL));
  CHECK_STR("Array([], shape=(0, 3), dtype=float32)", repr_of(SR_F32, 2, s03, NULL, 0));
  int64_t s0[] = {0};
  CHECK_STR("Array([], shape=(0,), dtype=int32)", repr_of(SR_I32, 1, s0, NULL, 0));
  int64_t s1001[] = {1001};
  int32_t *v = malloc(1001 * sizeof *v);
  for (int i = 0; i < 1001; i++) v[i] = i;
  CHECK_STR("[   0    1    2 ...  998  999 1000]", str_of(SR_I32, 1, s1001, v));
  free(v);
}
END_TEST

START_TEST(test_numpy_rules) {
  /* float32 1e6 is scientific from numpy 2.3 on */
  int64_t s2[] = {2};
  float a[] = {1e6f, 1e5f};
  SrNumfmtOpts o = SR_NUMFMT_OPTS_INIT;
  SrBuf b = SR_BUF_INIT;
  sr_numfmt_str_opts(&b, &o, SR_F32, 1, s2, a);
  ck_assert_str_eq(b.p, "[1.e+06 1.e+05]");
  o.rules = SR_NUMPY_1;
  sr_buf_reset(&b);
  sr_numfmt_str_opts(&b, &o, SR_F32, 1, s2, a);
  ck_assert_str_eq(b.p, "[1000000.  100000.]");
  /* float32(1e-4) < 1e-4 in float64 but not in float32 */
  float c[] = {1e-4f, 1e-3f};
  sr_buf_reset(&b);
  sr_numfmt_str_opts(&b, &o, SR_F32, 1, s2, c);
  ck_assert_str_eq(b.p, "[1.e-04 1.e-03]");
  o.rules = SR_NUMPY_2_0;
  sr_buf_reset(&b);
  sr_numfmt_str_opts(&b, &o, SR_F32, 1, s2, c);
  ck_assert_str_eq(b.p, "[0.0001 0.001 ]");
  /* float16's cutoff is 1e3 from numpy 2.3 on */
  uint16_t h[] = {0x63d0, 0x3c00}; /* 1000, 1 */
  o.rules = SR_NUMPY_2_3;
  sr_buf_reset(&b);
  sr_numfmt_str_opts(&b, &o, SR_F16, 1, s2, h);
  ck_assert_str_eq(b.p, "[1.e+03 1.e+00]");
  o.rules = SR_NUMPY_2_0;
  sr_buf_reset(&b);
  sr_numfmt_str_opts(&b, &o, SR_F16, 1, s2, h);
  ck_assert_str_eq(b.p, "[1000.    1.]");
  sr_buf_free(&b);
}
END_TEST

/* ---- the oracle's cases ---- */

typedef struct Reader {
  char *p, *end;
} Reader;

static char *read_word(Reader *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\n')) r->p++;
  char *w = r->p;
  while (r->p < r->end && *r->p != ' ' && *r->p != '\n') r->p++;
  if (r->p < r->end) *r->p++ = 0;
  return w;
}

/* "TAG LEN\n<LEN bytes>\n" */
static char *read_text(Reader *r, const char *tag) {
  char *t = read_word(r);
  ck_assert_str_eq(t, tag);
  long n = atol(read_word(r));
  char *s = r->p;
  r->p += n;
  *r->p++ = 0;
  return s;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - 'A' + 10;
}

static unsigned char *unhex(const char *h, size_t *n) {
  if (strcmp(h, "-") == 0) h = "";
  size_t len = strlen(h) / 2;
  unsigned char *b = malloc(len ? len : 1);
  for (size_t i = 0; i < len; i++)
    b[i] = (unsigned char)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
  *n = len;
  return b;
}

START_TEST(test_oracle_cases) {
  const char *path = getenv("NUMFMT_CASES");
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  ck_assert_int_eq(fread(text, 1, (size_t)size, f), (size_t)size);
  fclose(f);
  text[size] = 0;
  Reader r = {text, text + size};
  SrNumfmtOpts o = SR_NUMFMT_OPTS_INIT;
  int narrays = 0, nfloats = 0, failed = 0;
  SrBuf b = SR_BUF_INIT;
  while (r.p < r.end) {
    char *kind = read_word(&r);
    if (!*kind) break;
    if (strcmp(kind, "rules") == 0) {
      o.rules = atoi(read_word(&r));
    } else if (strcmp(kind, "array") == 0) {
      char *dtname = read_word(&r);
      int dt = sr_dtype_lookup(dtname, strlen(dtname));
      ck_assert_int_ge(dt, 0);
      int weak = atoi(read_word(&r));
      int ndim = atoi(read_word(&r));
      int64_t shape[8];
      for (int i = 0; i < ndim; i++) shape[i] = atoll(read_word(&r));
      size_t n;
      unsigned char *data = unhex(read_word(&r), &n);
      char *want_str = read_text(&r, "str");
      char *want_repr = read_text(&r, "repr");
      sr_buf_reset(&b);
      sr_numfmt_str_opts(&b, &o, (SrDtype)dt, ndim, shape, data);
      if (strcmp(sr_buf_str(&b), want_str) != 0) {
        if (failed++ < 10)
          fprintf(stderr, "str of %s case %d:\nwant:\n%s\ngot:\n%s\n", dtname,
                  narrays, want_str, sr_buf_str(&b));
      }
      sr_buf_reset(&b);
      sr_numfmt_repr_opts(&b, &o, (SrDtype)dt, ndim, shape, data, weak);
      if (strcmp(sr_buf_str(&b), want_repr) != 0) {
        if (failed++ < 10)
          fprintf(stderr, "repr of %s case %d:\nwant:\n%s\ngot:\n%s\n", dtname,
                  narrays, want_repr, sr_buf_str(&b));
      }
      free(data);
      narrays++;
    } else if (strcmp(kind, "float") == 0) {
      char *dtname = read_word(&r);
      int dt = sr_dtype_lookup(dtname, strlen(dtname));
      unsigned long long bits = strtoull(read_word(&r), NULL, 16);
      SrFloatFmt ff;
      ff.scientific = atoi(read_word(&r));
      ff.precision = atoi(read_word(&r));
      ff.min_digits = atoi(read_word(&r));
      ff.trim = read_word(&r)[0];
      ff.sign = atoi(read_word(&r));
      ff.pad_left = atoi(read_word(&r));
      ff.pad_right = atoi(read_word(&r));
      ff.exp_digits = atoi(read_word(&r));
      ff.fractional = 1;
      char *want = read_text(&r, "out");
      unsigned char elem[8];
      uint16_t h = (uint16_t)bits;
      uint32_t w = (uint32_t)bits;
      uint64_t q = bits;
      if (dt == SR_F16) memcpy(elem, &h, 2);
      else if (dt == SR_F32) memcpy(elem, &w, 4);
      else memcpy(elem, &q, 8);
      sr_buf_reset(&b);
      sr_numfmt_float(&b, (SrDtype)dt, elem, &ff);
      if (strcmp(sr_buf_str(&b), want) != 0) {
        if (failed++ < 10)
          fprintf(stderr, "%s %s 0x%llx sci=%d prec=%d min=%d trim=%c sign=%d pl=%d pr=%d ed=%d:"
                  " want '%s' got '%s'\n", ff.scientific ? "scientific" : "positional",
                  dtname, bits, ff.scientific, ff.precision, ff.min_digits, ff.trim,
                  ff.sign, ff.pad_left, ff.pad_right, ff.exp_digits, want, sr_buf_str(&b));
      }
      nfloats++;
    } else {
      ck_abort_msg("bad record '%s'", kind);
    }
  }
  sr_buf_free(&b);
  free(text);
  fprintf(stderr, "numfmt oracle: %d arrays (str and repr), %d floats, %d mismatches\n",
          narrays, nfloats, failed);
  ck_assert_int_eq(failed, 0);
  ck_assert_int_gt(narrays + nfloats, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("numfmt");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_seed_outputs);
  tcase_add_test(tc, test_scalars_and_0d);
  tcase_add_test(tc, test_ml_dtypes);
  tcase_add_test(tc, test_empty_and_summary);
  tcase_add_test(tc, test_numpy_rules);
  suite_add_tcase(s, tc);
  if (getenv("NUMFMT_CASES")) {
    TCase *oc = tcase_create("oracle");
    tcase_add_test(oc, test_oracle_cases);
    tcase_set_timeout(oc, 60);
    suite_add_tcase(s, oc);
  }
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
