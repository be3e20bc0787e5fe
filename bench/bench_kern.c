/* bench_kern.c: the data-moving kernels against memcpy (issue 17).
 *
 *   bench/bench_kern [-n RUNS] [-m MIB]
 *
 * Times, on buffers of MIB MiB (64 by default), best of RUNS (5), in CPU
 * time of the process (CLOCK_PROCESS_CPUTIME_ID) and wall time:
 *   - memcpy of the buffer;
 *   - sr_kern_transpose of it as a square f32 matrix (perm (1, 0)), and of
 *     a stack of 64 x 64 f32 tiles' last two dims;
 *   - the in-process reduction over 4 devices (sr_kern_fold_many, what the
 *     local all-reduce and reduce-scatter run) of 4 buffers of MIB / 4,
 *     and the same reduction folded one device at a time (memcpy then
 *     sr_comm_fold per device, the way it was);
 *   - an elementwise add of two f32 buffers of MIB / 2 into a third, and
 *     in place (the add row's kernel).
 * Each figure is the bytes read plus written over the time, and its ratio
 * to memcpy's (which reads and writes the buffer once). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/comm.h"
#include "exec/kern.h"
#include "exec/kern_simd.h"
#include "lax/lax.h"
#include "prims/prim.h"
#include "util/mem.h"

static double now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct Best {
  double cpu, wall;
} Best;

#define TIME(best, runs, stmt)                                            \
  do {                                                                    \
    best.cpu = best.wall = 1e30;                                          \
    for (int r_ = 0; r_ < (runs); r_++) {                                 \
      double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC); \
      stmt;                                                               \
      double c1 = now(CLOCK_PROCESS_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC); \
      if (c1 - c0 < best.cpu) best.cpu = c1 - c0;                         \
      if (w1 - w0 < best.wall) best.wall = w1 - w0;                       \
    }                                                                     \
  } while (0)

static double ref_gbs;

static void report(const char *what, double bytes, Best b) {
  double gbs = bytes / b.cpu * 1e-9;
  if (ref_gbs == 0) ref_gbs = gbs;
  printf("  %-44s %8.2f ms CPU %8.2f ms wall %7.2f GB/s  %4.0f%% of memcpy\n", what, b.cpu * 1e3, b.wall * 1e3,
         gbs, 100 * gbs / ref_gbs);
}

int main(int argc, char **argv) {
  int runs = 5;
  size_t mib = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-n") == 0) runs = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "-m") == 0) mib = (size_t)atol(argv[i + 1]);
  }
  sr_lax_init();
  size_t nb = mib << 20, n = nb / 4;
  float *a = sr_xmalloc(nb), *b = sr_xmalloc(nb), *c = sr_xmalloc(nb);
  for (size_t i = 0; i < n; i++) a[i] = (float)(i % 1000) * 0.5f, b[i] = 1.0f, c[i] = 0;
  memcpy(b, a, nb);
  memcpy(c, a, nb);
  printf("bench_kern: %zu MiB buffers, best of %d\n", mib, runs);
  Best t;
  TIME(t, runs, memcpy(b, a, nb));
  report("memcpy", 2.0 * nb, t);
  int64_t side = (int64_t)sqrt((double)n);
  while (side * side > (int64_t)n) side--;
  int64_t sq[2] = {side, side};
  int perm2[2] = {1, 0};
  char what[80];
  snprintf(what, sizeof what, "transpose f32[%lld,%lld]", (long long)side, (long long)side);
  TIME(t, runs, sr_kern_transpose(4, 2, sq, perm2, a, b));
  report(what, 2.0 * (double)(side * side) * 4, t);
  for (int64_t i = 0; i < side; i += 97)
    for (int64_t j = 0; j < side; j += 89)
      if (b[j * side + i] != a[i * side + j]) {
        fprintf(stderr, "bench_kern: the transpose is wrong\n");
        return 1;
      }
  int64_t st[3] = {(int64_t)n / 4096, 64, 64};
  int perm3[3] = {0, 2, 1};
  TIME(t, runs, sr_kern_transpose(4, 3, st, perm3, a, b));
  report("transpose f32[N,64,64] (0, 2, 1)", 2.0 * (double)(st[0] * 4096) * 4, t);
  /* reductions over 4 devices of nb / 4 bytes each */
  size_t q = n / 4;
  const void *xs[4] = {a, a + q, a + 2 * q, a + 3 * q};
  TIME(t, runs, sr_kern_fold_many(SR_RED_SUM, SR_F32, q, c, xs, 4));
  report("all-reduce f32 over 4 devices, one pass", 5.0 * (double)q * 4, t);
  TIME(t, runs, {
    memcpy(b, xs[0], q * 4);
    for (int k = 1; k < 4; k++) sr_comm_fold(SR_RED_SUM, SR_F32, q, b, xs[k]);
  });
  report("all-reduce f32 over 4 devices, device by device", 5.0 * (double)q * 4, t);
  if (memcmp(b, c, q * 4) != 0) {
    fprintf(stderr, "bench_kern: the two reductions differ\n");
    return 1;
  }
  /* elementwise add */
  const SrKernEw *k = sr_prims[SR_P_add].kern;
  size_t h = n / 2;
  TIME(t, runs, sr_kern_binary(k, SR_F32, h, a, 0, a + h, 0, c));
  report("add f32, out of place", 3.0 * (double)h * 4, t);
  TIME(t, runs, sr_kern_binary(k, SR_F32, h, c, 0, a + h, 0, c));
  report("add f32, in place", 3.0 * (double)h * 4, t);
  free(a);
  free(b);
  free(c);
  return 0;
}
