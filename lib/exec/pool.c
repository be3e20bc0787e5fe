/* pool.c: the thread pool of pool.h.
 *
 * One batch at a time (only the interpreter's thread starts batches): the
 * caller publishes it under the lock and wakes the workers, then takes
 * tasks itself; every thread takes the next task index from one atomic
 * counter until none is left.  The caller waits until every task has run
 * and every worker that joined the batch has left it, then closes it, so
 * that a worker waking late finds nothing to do and none can reach into
 * the next batch's counters.
 *
 * A thread about to sleep -- a worker between batches, the caller waiting
 * for the workers' last tasks -- first waits busy for a while
 * (SHARDREPL_SPIN_US microseconds, 100 by default, 0 for none): the
 * interpreter publishes a device batch every few microseconds in a
 * training step, and a futex sleep and wake-up each time cost more than
 * the gap.
 */
#include "config.h"

#include "exec/pool.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "exec/vmath.h"
#include "util/mem.h"

#define POOL_MAX 256

static int size = -1;     /* threads, the caller included */
static int nworkers;      /* workers started */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static uint64_t gen;      /* batches published */
static SrPoolFn cur_fn;   /* NULL when the batch is closed */
static void *cur_arg;
static int cur_n, nactive;
static atomic_int next_task, ndone;
static atomic_uint_least64_t worker_tasks;
static uint64_t nbatches, ntasks;
static _Thread_local int in_task;

/* How long a thread waits busy before it sleeps, in nanoseconds. */
static long spin_ns(void) {
  static long ns = -1;
  if (ns < 0) {
    const char *env = getenv("SHARDREPL_SPIN_US");
    char *end;
    long us = env && *env ? strtol(env, &end, 10) : -1;
    ns = env && *env && !*end && us >= 0 ? us * 1000 : 100000;
  }
  return ns;
}

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* The batch counter and the workers in a batch change under the lock;
   the busy waits read them without it. */
static uint64_t gen_now(void) { return __atomic_load_n(&gen, __ATOMIC_ACQUIRE); }

/* Waits busy until a batch after `seen` is published or the spin time
   passes. */
static void spin_for_batch(uint64_t seen) {
  long long end = now_ns() + spin_ns();
  for (int i = 1; gen_now() == seen; i++)
    if (!(i & 63) && now_ns() >= end) return;
    else relax();
}

/* Waits busy until all n tasks have run and no worker is in the batch, or
   the spin time passes. */
static void spin_for_done(int n) {
  long long end = now_ns() + spin_ns();
  for (int i = 1; atomic_load(&ndone) < n || __atomic_load_n(&nactive, __ATOMIC_ACQUIRE) > 0; i++)
    if (!(i & 63) && now_ns() >= end) return;
    else relax();
}

static int cpus(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* The ranks of this MPI job on this host, as the launcher says (Open
   MPI's variable, MPICH's), or 1: they share its CPUs. */
static int local_ranks(void) {
  const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
  for (int i = 0; i < 2; i++) {
    const char *v = getenv(vars[i]);
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : 0;
    if (n >= 1 && !*end) return (int)n;
  }
  return 1;
}

int sr_pool_size(void) {
  if (size < 0) {
    const char *env = getenv("SHARDREPL_THREADS");
    char *end;
    long n = env && *env ? strtol(env, &end, 10) : 0;
    if (!env || !*env || *end || n < 1) n = cpus() / local_ranks();
    if (n < 1) n = 1;
    size = n > POOL_MAX ? POOL_MAX : (int)n;
  }
  return size;
}

int sr_pool_parallel(void) { return !in_task && sr_pool_size() > 1; }

/* Takes tasks of the current batch until none is left. */
static void take_tasks(SrPoolFn fn, void *arg, int n, int worker) {
  int i;
  while ((i = atomic_fetch_add(&next_task, 1)) < n) {
    fn(arg, i);
    if (worker) atomic_fetch_add(&worker_tasks, 1);
    atomic_fetch_add(&ndone, 1);
  }
}

static void *worker_main(void *unused) {
  (void)unused;
  uint64_t seen = 0;
  in_task = 1;
  pthread_mutex_lock(&mu);
  for (;;) {
    if (gen == seen && spin_ns() > 0) {
      pthread_mutex_unlock(&mu);
      spin_for_batch(seen);
      pthread_mutex_lock(&mu);
    }
    while (gen == seen) pthread_cond_wait(&work_cv, &mu);
    seen = gen;
    if (!cur_fn) continue;
    SrPoolFn fn = cur_fn;
    void *arg = cur_arg;
    int n = cur_n;
    __atomic_add_fetch(&nactive, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu);
    take_tasks(fn, arg, n, 1);
    pthread_mutex_lock(&mu);
    if (__atomic_sub_fetch(&nactive, 1, __ATOMIC_RELEASE) == 0) pthread_cond_signal(&done_cv);
  }
  return NULL;
}

/* Starts the workers once; fewer when the system refuses threads (the
   batch then runs on those there are, or inline). */
static void start_workers(void) {
  static int started;
  if (started) return;
  started = 1;
  /* what the kernels initialize lazily, once, before any thread can race
     on it */
  (void)sr_mem_limit();
  (void)sr_vmath_form();
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  for (int i = 0; i < size - 1; i++) {
    pthread_t t;
    if (pthread_create(&t, &at, worker_main, NULL) != 0) break;
    nworkers++;
  }
  pthread_attr_destroy(&at);
}

void sr_pool_run(int n, SrPoolFn fn, void *arg) {
  if (n <= 0) return;
  if (n > 1 && sr_pool_parallel()) start_workers();
  if (n == 1 || in_task || nworkers == 0) {
    for (int i = 0; i < n; i++) fn(arg, i);
    return;
  }
  pthread_mutex_lock(&mu);
  atomic_store(&next_task, 0);
  atomic_store(&ndone, 0);
  cur_fn = fn;
  cur_arg = arg;
  cur_n = n;
  __atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
  nbatches++;
  ntasks += (uint64_t)n;
  pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&mu);
  in_task = 1;
  take_tasks(fn, arg, n, 0);
  in_task = 0;
  if (spin_ns() > 0) spin_for_done(n);
  pthread_mutex_lock(&mu);
  while (atomic_load(&ndone) < n || nactive > 0) pthread_cond_wait(&done_cv, &mu);
  cur_fn = NULL;
  cur_arg = NULL;
  cur_n = 0;
  pthread_mutex_unlock(&mu);
}

int sr_pool_blas_one(void) {
  int n = openblas_get_num_threads();
  if (n > 1) openblas_set_num_threads(1);
  return n;
}

void sr_pool_blas_restore(int n) {
  if (n > 1) openblas_set_num_threads(n);
}

void sr_pool_stats(SrPoolStats *s) {
  pthread_mutex_lock(&mu);
  s->batches = nbatches;
  s->tasks = ntasks;
  s->worker_tasks = atomic_load(&worker_tasks);
  pthread_mutex_unlock(&mu);
}

void sr_pool_describe(SrBuf *b, int stats) {
  const char *env = getenv("SHARDREPL_THREADS");
  int n = sr_pool_size();
  char *end;
  if (env && *env && strtol(env, &end, 10) >= 1 && !*end) sr_buf_printf(b, "%d (SHARDREPL_THREADS=%s)", n, env);
  else if (local_ranks() > 1) sr_buf_printf(b, "%d (the CPUs this process may use, over %d ranks on this host)", n, local_ranks());
  else sr_buf_printf(b, "%d (the CPUs this process may use)", n);
  if (!stats) return;
  SrPoolStats st;
  sr_pool_stats(&st);
  sr_buf_printf(b, "; %llu batch%s of %llu device task%s so far", (unsigned long long)st.batches,
                st.batches == 1 ? "" : "es", (unsigned long long)st.tasks, st.tasks == 1 ? "" : "s");
}
