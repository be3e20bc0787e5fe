/* check_kern_simd.c: unit tests of the vectorized kernels (exec/kern_simd.h)
 * and the loops they replace or feed: blocked transposes of every element
 * size against a plain loop, the one-pass reductions over devices bit for
 * bit against folding the devices one at a time (NaNs, wrapping sums and
 * every dtype included), and the elementwise add in place, into its other
 * operand and out of place. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/array.h"
#include "exec/comm.h"
#include "exec/kern.h"
#include "exec/kern_simd.h"
#include "lax/lax.h"
#include "prims/prim.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int rndi(int n) { return (int)(rnd() % (uint64_t)n); }

START_TEST(test_transpose_blocked) {
  static const size_t sizes[] = {1, 2, 4, 8};
  for (int iter = 0; iter < 120; iter++) {
    size_t es = sizes[iter % 4];
    int nd = 2 + rndi(2);
    int64_t shape[3], n = 1;
    for (int i = 0; i < nd; i++) n *= shape[i] = 1 + rndi(i == 0 && nd == 3 ? 4 : 300);
    int perm[3];
    if (nd == 2) perm[0] = 1, perm[1] = 0;
    else if (iter & 1) perm[0] = 0, perm[1] = 2, perm[2] = 1;
    else perm[0] = 2, perm[1] = 0, perm[2] = 1;
    unsigned char *in = malloc((size_t)n * es), *out = malloc((size_t)n * es);
    for (size_t i = 0; i < (size_t)n * es; i++) in[i] = (unsigned char)rnd();
    sr_kern_transpose(es, nd, shape, perm, in, out);
    int64_t st[3], s = 1, osh[3], idx[3] = {0};
    for (int i = nd - 1; i >= 0; i--) st[i] = s, s *= shape[i];
    for (int k = 0; k < nd; k++) osh[k] = shape[perm[k]];
    int64_t bad = -1;
    for (int64_t o = 0; o < n; o++) {
      int64_t src = 0;
      for (int k = 0; k < nd; k++) src += idx[k] * st[perm[k]];
      if (bad < 0 && memcmp(out + o * (int64_t)es, in + src * (int64_t)es, es) != 0) bad = o;
      for (int k = nd - 1; k >= 0; k--) {
        if (++idx[k] < osh[k]) break;
        idx[k] = 0;
      }
    }
    ck_assert_msg(bad < 0, "element %lld of a %zu-byte transpose", (long long)bad, es);
    free(in);
    free(out);
  }
}
END_TEST

START_TEST(test_fold_many) {
  static const SrDtype dts[] = {SR_F32, SR_F64, SR_I32, SR_I64, SR_U32, SR_U64, SR_I8, SR_U16, SR_BF16, SR_F16, SR_BOOL};
  for (size_t t = 0; t < sizeof dts / sizeof *dts; t++)
    for (int op = SR_RED_SUM; op <= SR_RED_MIN; op++)
      for (int nx = 1; nx <= 5; nx++) {
        SrDtype dt = dts[t];
        size_t es = sr_elem_size(dt), n = 1 + (size_t)rndi(20000);
        unsigned char *x[5], *want = malloc(n * es), *got = malloc(n * es);
        const void *xs[5];
        for (int k = 0; k < nx; k++) {
          x[k] = malloc(n * es);
          for (size_t i = 0; i < n; i++) {
            if (dt == SR_F32) ((float *)x[k])[i] = rndi(50) == 0 ? NAN : (float)rndi(2000) / 7.0f - 100;
            else if (dt == SR_F64) ((double *)x[k])[i] = rndi(50) == 0 ? NAN : (double)rndi(2000) / 7.0 - 100;
            else if (dt == SR_BOOL) x[k][i] = (unsigned char)rndi(2);
            else if (dt == SR_BF16 || dt == SR_F16) ((uint16_t *)x[k])[i] = (uint16_t)(0x3c00 + rndi(0x800));
            else
              for (size_t b = 0; b < es; b++) x[k][i * es + b] = (unsigned char)rnd();
          }
          xs[k] = x[k];
        }
        memcpy(want, x[0], n * es);
        for (int k = 1; k < nx; k++) ck_assert_int_eq(sr_comm_fold((SrRedOp)op, dt, n, want, x[k]), 0);
        ck_assert_int_eq(sr_kern_fold_many((SrRedOp)op, dt, n, got, xs, nx), 0);
        ck_assert_msg(memcmp(got, want, n * es) == 0, "fold of %d %s buffers, op %d", nx, sr_dtype_name(dt), op);
        /* the accumulator may be the first input */
        ck_assert_int_eq(sr_kern_fold_many((SrRedOp)op, dt, n, x[0], xs, nx), 0);
        ck_assert(memcmp(x[0], want, n * es) == 0);
        for (int k = 0; k < nx; k++) free(x[k]);
        free(want);
        free(got);
      }
}
END_TEST

START_TEST(test_add_aliasing) {
  sr_lax_init();
  const SrKernEw *k = sr_prims[SR_P_add].kern;
  for (size_t n = 1; n < 200; n += 13) {
    float *a = malloc(n * 4), *b = malloc(n * 4), *o = malloc(n * 4), *want = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
      a[i] = (float)i / 3.0f;
      b[i] = 1.0f / (float)(i + 1);
      want[i] = a[i] + b[i];
    }
    ck_assert_int_eq(sr_kern_binary(k, SR_F32, n, a, 0, b, 0, o), 0);
    ck_assert(memcmp(o, want, n * 4) == 0);
    memcpy(o, a, n * 4);
    ck_assert_int_eq(sr_kern_binary(k, SR_F32, n, o, 0, b, 0, o), 0); /* out is the lhs */
    ck_assert(memcmp(o, want, n * 4) == 0);
    memcpy(o, b, n * 4);
    ck_assert_int_eq(sr_kern_binary(k, SR_F32, n, a, 0, o, 0, o), 0); /* out is the rhs */
    ck_assert(memcmp(o, want, n * 4) == 0);
    memcpy(o, a, n * 4);
    ck_assert_int_eq(sr_kern_binary(k, SR_F32, n, o, 0, o, 0, o), 0); /* all three */
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok &= o[i] == a[i] + a[i];
    ck_assert(ok);
    ck_assert_int_eq(sr_kern_binary(k, SR_F32, n, a, 0, b, 1, o), 0); /* a scalar rhs */
    for (size_t i = 0; i < n; i++) ok &= o[i] == a[i] + b[0];
    ck_assert(ok);
    free(a);
    free(b);
    free(o);
    free(want);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("kern_simd");
  TCase *tc = tcase_create("kernels");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, test_transpose_blocked);
  tcase_add_test(tc, test_fold_many);
  tcase_add_test(tc, test_add_aliasing);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
