/* check_pool.c: the thread pool (lib/exec/pool.c) and the evaluator's
 * batches of devices on it (lib/exec/eval_par.c), with 4 threads
 * (SHARDREPL_THREADS=4, set before the pool first sizes itself): every
 * task runs once, on the workers too, and the counters say so; a batch
 * inside a task runs inline; an error of a device's task reaches the
 * caller with its message, the first failing device's when several fail,
 * as running the devices in turn would have reported it; small work runs
 * inline, stopping at the first failure.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "exec/eval_par.h"
#include "exec/pool.h"

enum { N = 1000 };

static atomic_int hits[N];

static void count_task(void *arg, int i) {
  (void)arg;
  /* some work, so that the workers get a share */
  volatile double s = 0;
  for (int k = 0; k < 2000; k++) s += k * 0.5;
  atomic_fetch_add(&hits[i], 1);
}

START_TEST(test_every_task_once) {
  ck_assert_int_eq(sr_pool_size(), 4);
  ck_assert(sr_pool_parallel());
  SrPoolStats before, after;
  sr_pool_stats(&before);
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
    int n = round % 2 ? N : 7;
    sr_pool_run(n, count_task, NULL);
    for (int i = 0; i < N; i++) ck_assert_int_eq(atomic_load(&hits[i]), i < n ? 1 : 0);
  }
  sr_pool_stats(&after);
  ck_assert_int_eq((int)(after.batches - before.batches), 20);
  ck_assert_int_eq((int)(after.tasks - before.tasks), 10 * N + 10 * 7);
  ck_assert_msg(after.worker_tasks > before.worker_tasks, "the workers ran no task");
  /* one task: inline, not a batch */
  sr_pool_run(1, count_task, NULL);
  sr_pool_stats(&before);
  ck_assert_int_eq((int)(before.batches - after.batches), 0);
}
END_TEST

static void nested_task(void *arg, int i) {
  (void)i;
  ck_assert(!sr_pool_parallel());
  atomic_int *c = arg;
  atomic_fetch_add(c, 1);
}

static void outer_task(void *arg, int i) {
  (void)i;
  sr_pool_run(3, nested_task, arg);
}

START_TEST(test_nested_inline) {
  atomic_int c = 0;
  sr_pool_run(8, outer_task, &c);
  ck_assert_int_eq(atomic_load(&c), 24);
}
END_TEST

static atomic_int ran[16];

/* devices 5 and 9 fail, with messages of their own */
static int dev_fn(SrEvalCtx *cx, int i, void *arg) {
  (void)arg;
  atomic_fetch_add(&ran[i], 1);
  if (i == 5 || i == 9) return sr_ev_err(cx, "ValueError", "device %d failed", i);
  return 0;
}

START_TEST(test_first_error) {
  SrDiags d = {0};
  SrEvalCtx cx;
  sr_eval_ctx_init(&cx, NULL, NULL, &d);
  for (int i = 0; i < 16; i++) atomic_store(&ran[i], 0);
  SrPoolStats before, after;
  sr_pool_stats(&before);
  ck_assert_int_eq(sr_ev_for_each_device(&cx, 16, SR_EV_PAR_BYTES, dev_fn, NULL), -1);
  sr_pool_stats(&after);
  ck_assert_int_eq((int)(after.batches - before.batches), 1);
  ck_assert_int_eq(d.count, 1);
  ck_assert_str_eq(d.first->msg, "device 5 failed");
  ck_assert_str_eq(d.first->exc, "ValueError");
  for (int i = 0; i < 16; i++) ck_assert_int_eq(atomic_load(&ran[i]), 1);
  sr_diags_clear(&d);
  /* small work: in turn, stopping at device 5, no batch */
  for (int i = 0; i < 16; i++) atomic_store(&ran[i], 0);
  ck_assert_int_eq(sr_ev_for_each_device(&cx, 16, 100, dev_fn, NULL), -1);
  sr_pool_stats(&before);
  ck_assert_int_eq((int)(before.batches - after.batches), 0);
  ck_assert_int_eq(d.count, 1);
  ck_assert_str_eq(d.first->msg, "device 5 failed");
  for (int i = 0; i < 16; i++) ck_assert_int_eq(atomic_load(&ran[i]), i <= 5 ? 1 : 0);
  sr_diags_clear(&d);
}
END_TEST

int main(void) {
  setenv("SHARDREPL_THREADS", "4", 1);
  Suite *s = suite_create("pool");
  TCase *tc = tcase_create("pool");
  tcase_add_test(tc, test_every_task_once);
  tcase_add_test(tc, test_nested_inline);
  tcase_add_test(tc, test_first_error);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
