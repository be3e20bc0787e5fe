/* mpi_local.c: the data movement of the in-process backend (comm_local.c)
 * against memcpy's bandwidth on this machine.
 *
 *   bench/mpi_local [-n RUNS] [-m MIB] [-d DEVICES] [-c]
 *
 * One group of DEVICES (default 8) devices.  For all-gather each device
 * holds MIB/DEVICES MiB and the result is MIB MiB; for all-to-all each
 * device holds MIB MiB and gets MIB MiB back (DEVICES x MIB written); for
 * reduce-scatter and all-reduce each holds MIB MiB and the folds read it
 * all.  The bandwidth is bytes written per second (for the reductions,
 * bytes read), against one memcpy of the same number of bytes between
 * buffers already in memory; for the reductions also the bytes read plus
 * written (the result, MIB MiB) against memcpy's read plus written.  Median of RUNS (default 20) after a warm-up.
 * With -c every time is the process's CPU time (all its threads, the
 * pool's included) instead of wall time: on a machine other work loads,
 * what the operation costs rather than when it got a core.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/comm.h"
#include "util/intern.h"

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void) {
  struct timespec ts;
  clock_gettime(clock_id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int runs = 20;

/* Median seconds of one memcpy of n bytes. */
static double time_memcpy(size_t n) {
  char *a = malloc(n), *b = malloc(n);
  memset(a, 1, n);
  memset(b, 2, n);
  double *t = calloc((size_t)runs, sizeof *t);
  for (int k = -1; k < runs; k++) {
    double t0 = now();
    memcpy(b, a, n);
    double t1 = now();
    if (k >= 0) t[k] = t1 - t0;
    a[k & 7] ^= b[(k * 7) & 15];
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  double r = t[runs / 2];
  free(a);
  free(b);
  free(t);
  return r;
}

enum { GATHER, A2A, SCATTER, REDUCE };

static double time_op(SrComm *c, const SrGroups *g, int op, size_t nbytes, int ndev) {
  SrBuffer **in = calloc((size_t)ndev, sizeof *in), **out = calloc((size_t)ndev, sizeof *out);
  for (int p = 0; p < ndev; p++) {
    in[p] = sr_buffer_new(nbytes);
    float *f = in[p]->data;
    for (size_t i = 0; i < nbytes / 4; i++) f[i] = (float)((i + (size_t)p) % 13);
  }
  SrDiags d = SR_DIAGS_INIT;
  double *t = calloc((size_t)runs, sizeof *t);
  size_t count = nbytes / 4;
  for (int k = -2; k < runs; k++) {
    double t0 = now();
    switch (op) {
    case GATHER: c->ops->all_gather(c, g, nbytes, in, out, &d); break;
    case A2A: c->ops->all_to_all(c, g, nbytes / (size_t)ndev, in, out, &d); break;
    case SCATTER: c->ops->reduce_scatter(c, g, SR_RED_SUM, SR_F32, count / (size_t)ndev, in, out, &d); break;
    case REDUCE: c->ops->all_reduce(c, g, SR_RED_SUM, SR_F32, count, in, out, &d); break;
    }
    double t1 = now();
    if (k >= 0) t[k] = t1 - t0;
    for (int p = 0; p < ndev; p++) {
      sr_buffer_unref(out[p]);
      out[p] = NULL;
    }
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  double r = t[runs / 2];
  for (int p = 0; p < ndev; p++) sr_buffer_unref(in[p]);
  free(in);
  free(out);
  free(t);
  return r;
}

int main(int argc, char **argv) {
  double mib = 16;
  int ndev = 8;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) mib = atof(argv[++i]);
    else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) ndev = atoi(argv[++i]);
    else if (strcmp(argv[i], "-c") == 0) clock_id = CLOCK_PROCESS_CPUTIME_ID;
    else {
      fprintf(stderr, "usage: mpi_local [-n RUNS] [-m MIB] [-d DEVICES] [-c]\n");
      return 2;
    }
  }
  size_t total = (size_t)(mib * 1024 * 1024) & ~(size_t)(64 * ndev - 1);
  SrComm *c = sr_comm_local_new(ndev);
  SrMesh m;
  memset(&m, 0, sizeof m);
  m.n = 1;
  m.names[0] = sr_intern_cstr("X");
  m.sizes[0] = ndev;
  const SrMesh *mesh = sr_mesh_intern(&m);
  int ax = 0;
  SrDiags d = SR_DIAGS_INIT;
  const SrGroups *g = sr_comm_groups(c, mesh, &ax, 1, &d);
  struct {
    const char *name;
    int op;
    size_t in_bytes, moved; /* per device in; bytes written (or read) per call */
  } rows[] = {
    {"all-gather", GATHER, total / (size_t)ndev, total},
    {"all-to-all", A2A, total, total * (size_t)ndev},
    {"reduce-scatter (f32 sum)", SCATTER, total, total * (size_t)ndev},
    {"all-reduce (f32 sum)", REDUCE, total, total * (size_t)ndev},
  };
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    double t = time_op(c, g, rows[r].op, rows[r].in_bytes, ndev);
    double tm = time_memcpy(rows[r].moved);
    double bw = (double)rows[r].moved / t / 1e9, bwm = (double)rows[r].moved / tm / 1e9;
    printf("  %-25s %d devices, %6.1f MiB moved: %7.2f ms, %5.2f GB/s; memcpy %5.2f GB/s: %3.0f%%",
           rows[r].name, ndev, (double)rows[r].moved / 1048576.0, t * 1e3, bw, bwm, 100 * bw / bwm);
    if (rows[r].op == SCATTER || rows[r].op == REDUCE)
      printf(" (read + written: %3.0f%%)", 100 * bw / bwm * (double)(rows[r].moved + total) / (2.0 * (double)rows[r].moved));
    printf("\n");
  }
  sr_comm_free(c);
  return 0;
}
