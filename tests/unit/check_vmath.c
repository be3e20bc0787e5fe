/* check_vmath.c: the vector math library's functions against libm in
 * float64 (lib/exec/vmath.c): over a sweep of each function's domain,
 * the float32 forms within MAX_ULP32 units in the last place of the
 * float64 result rounded to float32, the float64 forms within MAX_ULP64
 * of libm's float64 result.  glibc documents libmvec to within 4 ulp;
 * the bound is twice that, so that every CPU's form passes while a wrong
 * function (thousands of ulp off) does not.  It prints what it measured.
 * Where no vector form runs (no libmvec, another CPU), sr_vmath_* says
 * so and the test checks only that.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/vmath.h"

enum { N = 20001, MAX_ULP32 = 8, MAX_ULP64 = 8 };

static const struct {
  SrVmathFn fn;
  const char *name;
  double (*ref)(double);
  double lo, hi;
} funcs[] = {
  {SR_VM_TANH, "tanh", tanh, -20, 20},   {SR_VM_EXP, "exp", exp, -80, 80},
  {SR_VM_EXP2, "exp2", exp2, -120, 120}, {SR_VM_EXPM1, "expm1", expm1, -20, 20},
  {SR_VM_LOG, "log", log, 1e-30, 1e30},  {SR_VM_LOG1P, "log1p", log1p, -0.999, 1e6},
  {SR_VM_SIN, "sin", sin, -100, 100},    {SR_VM_COS, "cos", cos, -100, 100},
  {SR_VM_TAN, "tan", tan, -1.5, 1.5},    {SR_VM_ERF, "erf", erf, -5, 5},
  {SR_VM_ERFC, "erfc", erfc, -5, 9},     {SR_VM_CBRT, "cbrt", cbrt, -1e6, 1e6},
};

/* units in the last place of float32 between got and want */
static double ulps32(float got, double want) {
  float w = (float)want;
  if (isnan(w) && isnan(got)) return 0;
  if (w == got) return 0;
  float up = nextafterf(fabsf(w), INFINITY);
  double ulp = (double)up - (double)fabsf(w);
  return fabs((double)got - want) / ulp;
}

static double ulps64(double got, double want) {
  if (isnan(want) && isnan(got)) return 0;
  if (want == got) return 0;
  double ulp = nextafter(fabs(want), INFINITY) - fabs(want);
  return fabs(got - want) / ulp;
}

/* the sweep: evenly spaced, or log-spaced for log's wide domain */
static double point(int k, int i) {
  double t = (double)i / (N - 1);
  if (funcs[k].fn == SR_VM_LOG) return exp(log(funcs[k].lo) + t * (log(funcs[k].hi) - log(funcs[k].lo)));
  return funcs[k].lo + t * (funcs[k].hi - funcs[k].lo);
}

START_TEST(test_accuracy) {
  float *x32 = malloc(N * sizeof *x32), *y32 = malloc(N * sizeof *y32);
  double *x64 = malloc(N * sizeof *x64), *y64 = malloc(N * sizeof *y64);
  int runs = sr_vmath_form() != NULL;
  for (int k = 0; k < (int)(sizeof funcs / sizeof *funcs); k++) {
    for (int i = 0; i < N; i++) x64[i] = point(k, i), x32[i] = (float)x64[i];
    int r32 = sr_vmath_f32(funcs[k].fn, N, x32, y32), r64 = sr_vmath_f64(funcs[k].fn, N, x64, y64);
    ck_assert_int_eq(r32, runs ? 0 : -1);
    ck_assert_int_eq(r64, runs ? 0 : -1);
    if (!runs) continue;
    double worst32 = 0, worst64 = 0;
    for (int i = 0; i < N; i++) {
      double u = ulps32(y32[i], funcs[k].ref((double)x32[i]));
      if (u > worst32) worst32 = u;
      u = ulps64(y64[i], funcs[k].ref(x64[i]));
      if (u > worst64) worst64 = u;
    }
    printf("%-6s float32 %.2f ulp, float64 %.2f ulp (%s)\n", funcs[k].name, worst32, worst64, sr_vmath_form());
    ck_assert_msg(worst32 <= MAX_ULP32, "%s float32: %.2f ulp", funcs[k].name, worst32);
    ck_assert_msg(worst64 <= MAX_ULP64, "%s float64: %.2f ulp", funcs[k].name, worst64);
  }
  free(x32), free(y32), free(x64), free(y64);
}
END_TEST

/* in place (y == x), and every length's tail */
START_TEST(test_lengths) {
  if (!sr_vmath_form()) return;
  for (size_t n = 0; n <= 40; n++) {
    float x[41] = {0}, y[41] = {0};
    for (size_t i = 0; i < n; i++) x[i] = (float)i / 8 - 2, y[i] = x[i];
    ck_assert_int_eq(sr_vmath_f32(SR_VM_TANH, n, y, y), 0);
    for (size_t i = 0; i < n; i++) ck_assert_msg(ulps32(y[i], tanh((double)x[i])) <= MAX_ULP32, "n %zu i %zu", n, i);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("vmath");
  TCase *tc = tcase_create("vmath");
  tcase_add_test(tc, test_accuracy);
  tcase_add_test(tc, test_lengths);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
