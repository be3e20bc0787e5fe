/* check_np_rng.c: unit tests of lib/exec/np_rng (numpy's random streams).
 *
 * Every expected number here was printed by Debian's numpy 1.24.2:
 *   SeedSequence(s).generate_state(n).tolist(), PCG64(s).random_raw(n),
 *   MT19937 after _legacy_seeding(s) (what RandomState.seed does)
 *   .random_raw(n), and the first draws of default_rng(s) and
 *   RandomState(s), printed with repr. */
#include <check.h>
#include <stdlib.h>

#include "exec/np_rng.h"

START_TEST(test_seedseq) {
  uint32_t w[4], out[8];
  size_t n = sr_np_int_words(12345, w);
  ck_assert_uint_eq(n, 1);
  sr_np_seedseq_state(w, n, out, 4);
  static const uint32_t e1[] = {2688385916u, 3048105090u, 4196366895u, 3152189807u};
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(out[i], e1[i]);
  /* 2**100 + 7: four words */
  n = sr_np_int_words(((unsigned __int128)1 << 100) + 7, w);
  ck_assert_uint_eq(n, 4);
  sr_np_seedseq_state(w, n, out, 8);
  static const uint32_t e2[] = {1523537530u, 7724331u,    1975607920u, 2869613165u,
                                2234359096u, 4020345359u, 3748694017u, 886670718u};
  for (int i = 0; i < 8; i++) ck_assert_uint_eq(out[i], e2[i]);
  /* more entropy than the pool: [1, 2, 3, 4, 5, 6] */
  static const uint32_t six[] = {1, 2, 3, 4, 5, 6};
  sr_np_seedseq_state(six, 6, out, 3);
  static const uint32_t e3[] = {488360481u, 3956080669u, 2986500235u};
  for (int i = 0; i < 3; i++) ck_assert_uint_eq(out[i], e3[i]);
  ck_assert_uint_eq(sr_np_int_words(0, w), 1);
  ck_assert_uint_eq(w[0], 0);
}
END_TEST

START_TEST(test_pcg64) {
  SrNpBitgen g;
  uint32_t w[4];
  size_t n = sr_np_int_words(42, w);
  sr_np_pcg64_seed(&g, w, n);
  ck_assert_uint_eq(sr_np_next64(&g), 14276969152011380360ULL);
  ck_assert_uint_eq(sr_np_next64(&g), 8095878257575067585ULL);
  ck_assert_uint_eq(sr_np_next64(&g), 15838336090824644132ULL);
  n = sr_np_int_words(0, w);
  sr_np_pcg64_seed(&g, w, n);
  ck_assert_uint_eq(sr_np_next64(&g), 11749869230777074271ULL);
  ck_assert_uint_eq(sr_np_next64(&g), 4976686463289251617ULL);
  /* default_rng(42): standard_normal(), then random() */
  n = sr_np_int_words(42, w);
  sr_np_pcg64_seed(&g, w, n);
  ck_assert_double_eq(sr_np_standard_normal(&g), 0.30471707975443135);
  ck_assert_double_eq(sr_np_next_double(&g), 0.4388784397520523);
  /* default_rng(21): standard_normal(dtype=float32), random(dtype=float32) */
  sr_np_pcg64_seed(&g, w, sr_np_int_words(21, w));
  ck_assert_float_eq(sr_np_standard_normal_f(&g), 0.43439656496047974f);
  ck_assert_float_eq(sr_np_next_float(&g), 0.7811175584793091f);
  /* default_rng(41).standard_exponential() twice */
  sr_np_pcg64_seed(&g, w, sr_np_int_words(41, w));
  ck_assert_double_eq(sr_np_standard_exponential(&g), 4.822554937403827);
  ck_assert_double_eq(sr_np_standard_exponential(&g), 0.3508580669403604);
  /* default_rng(51).poisson(3.0), then poisson(50.0) (PTRS) */
  sr_np_pcg64_seed(&g, w, sr_np_int_words(51, w));
  ck_assert_int_eq(sr_np_poisson(&g, 3.0), 3);
  ck_assert_int_eq(sr_np_poisson(&g, 50.0), 56);
  /* default_rng(61).binomial(1000, 0.4, 2): BTPE */
  sr_np_pcg64_seed(&g, w, sr_np_int_words(61, w));
  for (int i = 0; i < 12; i++) sr_np_binomial(&g, 0.3, 10, 0);
  for (int i = 0; i < 8; i++) sr_np_binomial(&g, 0.5, 1, 0);
  ck_assert_int_eq(sr_np_binomial(&g, 0.4, 1000, 0), 411);
  ck_assert_int_eq(sr_np_binomial(&g, 0.4, 1000, 0), 379);
}
END_TEST

START_TEST(test_mt19937) {
  SrNpBitgen g;
  sr_np_mt_seed(&g, 5);
  ck_assert_uint_eq(sr_np_next32(&g), 953453411u);
  ck_assert_uint_eq(sr_np_next32(&g), 236996814u);
  ck_assert_uint_eq(sr_np_next32(&g), 3739766767u);
  static const uint32_t key[] = {1, 2, 3};
  sr_np_mt_seed_array(&g, key, 3);
  ck_assert_uint_eq(sr_np_next32(&g), 2619334238u);
  ck_assert_uint_eq(sr_np_next32(&g), 1552691353u);
  /* np.random.MT19937(5).random_raw(3): seeded through SeedSequence */
  uint32_t w[4];
  sr_np_mt_seed_seq(&g, w, sr_np_int_words(5, w));
  ck_assert_uint_eq(sr_np_next32(&g), 1463718072u);
  ck_assert_uint_eq(sr_np_next32(&g), 2137291433u);
  ck_assert_uint_eq(sr_np_next32(&g), 2035765579u);
  /* RandomState(1): standard_normal() twice (one polar pair), random_sample() */
  sr_np_mt_seed(&g, 1);
  ck_assert_double_eq(sr_np_legacy_gauss(&g), 1.6243453636632417);
  ck_assert_double_eq(sr_np_legacy_gauss(&g), -0.6117564136500754);
  ck_assert_double_eq(sr_np_next_double(&g), 0.00011437481734488664);
}
END_TEST

START_TEST(test_bounded) {
  SrNpBitgen g;
  uint32_t w[4];
  uint64_t out[5];
  /* default_rng(7).integers(0, 10, 5), then integers(0, 2**40, 2): Lemire */
  sr_np_pcg64_seed(&g, w, sr_np_int_words(7, w));
  sr_np_bounded_uint64_fill(&g, 0, 9, 5, 0, out);
  static const uint64_t e1[] = {9, 6, 6, 8, 5};
  for (int i = 0; i < 5; i++) ck_assert_uint_eq(out[i], e1[i]);
  sr_np_bounded_uint64_fill(&g, 0, (1ULL << 40) - 1, 2, 0, out);
  ck_assert_uint_eq(out[0], 247617924053ULL);
  ck_assert_uint_eq(out[1], 330036320526ULL);
  /* RandomState(7).randint(0, 10, 5), then randint(0, 2**40, 2): masked */
  sr_np_mt_seed(&g, 7);
  sr_np_bounded_uint64_fill(&g, 0, 9, 5, 1, out);
  static const uint64_t e2[] = {4, 9, 6, 3, 3};
  for (int i = 0; i < 5; i++) ck_assert_uint_eq(out[i], e2[i]);
  sr_np_bounded_uint64_fill(&g, 0, (1ULL << 40) - 1, 2, 1, out);
  ck_assert_uint_eq(out[0], 650496783975ULL);
  ck_assert_uint_eq(out[1], 396459895993ULL);
}
END_TEST

START_TEST(test_shuffle) {
  SrNpBitgen g;
  uint32_t w[4];
  int64_t a[10], b[10];
  for (int i = 0; i < 10; i++) a[i] = b[i] = i;
  /* default_rng(3).permutation(10) and RandomState(3).permutation(10) */
  sr_np_pcg64_seed(&g, w, sr_np_int_words(3, w));
  sr_np_shuffle(&g, a, 10, sizeof *a);
  static const int64_t e1[] = {9, 6, 0, 2, 1, 4, 7, 5, 3, 8};
  for (int i = 0; i < 10; i++) ck_assert_int_eq(a[i], e1[i]);
  sr_np_mt_seed(&g, 3);
  sr_np_shuffle(&g, b, 10, sizeof *b);
  static const int64_t e2[] = {5, 4, 1, 2, 9, 6, 7, 0, 3, 8};
  for (int i = 0; i < 10; i++) ck_assert_int_eq(b[i], e2[i]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("np_rng");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_seedseq);
  tcase_add_test(tc, test_pcg64);
  tcase_add_test(tc, test_mt19937);
  tcase_add_test(tc, test_bounded);
  tcase_add_test(tc, test_shuffle);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
