/* mpi_allreduce.c: a sum all-reduce of float32 through shardrepl's MPI
 * backend against a raw MPI_Allreduce of the same bytes, in the same run.
 *
 *   mpirun -np P bench/mpi_allreduce [-n RUNS] [-m MIB]
 *
 * One device per rank, one mesh axis over all of them; each run reduces
 * MIB MiB (default 16) per rank.  Three take turns (raw in place, raw
 * into another buffer, backend, ...) after two warm-up rounds, each behind
 * a barrier, so that the machine's noise falls on all alike; rank 0
 * prints the median and best of its times (each starts behind a barrier),
 * the bandwidth (bytes / median time) and the medians of the per-run
 * ratios backend / raw.  The backend's all-reduce leaves its input as it
 * was (arrays are values), as the out-of-place MPI_Allreduce does; the
 * in-place one, the usual baseline, overwrites its input, which an MPI
 * implementation may use to skip copying the input into the result.
 * MPI here is comm_mpi.c's (sr_mpi_raw_allreduce_f32 is a plain
 * MPI_Allreduce over the job): no other file includes mpi.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/comm.h"
#include "exec/comm_mpi.h"
#include "util/intern.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int runs = 20;
  double mib = 16;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) mib = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: mpirun -np P mpi_allreduce [-n RUNS] [-m MIB]\n");
      return 2;
    }
  }
  SrDiags d = SR_DIAGS_INIT;
  if (sr_mpi_start(sr_mpi_under_mpirun() ? SR_MPI_LAUNCHED : SR_MPI_CONTROLLER, 1, NULL, &d) < 0) {
    fprintf(stderr, "mpi_allreduce: cannot start MPI\n");
    return 1;
  }
  int P = sr_mpi_size(), rank = sr_mpi_rank();
  size_t count = (size_t)(mib * 1024 * 1024) / sizeof(float);
  size_t nbytes = count * sizeof(float);

  SrComm *c = sr_comm_mpi_new(P);
  SrMesh m;
  memset(&m, 0, sizeof m);
  m.n = 1;
  m.names[0] = sr_intern_cstr("X");
  m.sizes[0] = P;
  const SrMesh *mesh = sr_mesh_intern(&m);
  int ax = 0;
  const SrGroups *g = sr_comm_groups(c, mesh, &ax, 1, &d);
  SrBuffer **in = calloc((size_t)P, sizeof *in), **out = calloc((size_t)P, sizeof *out);
  in[rank] = sr_buffer_new(nbytes);
  float *raw = malloc(nbytes), *raw2 = malloc(nbytes);
  for (size_t i = 0; i < count; i++) ((float *)in[rank]->data)[i] = (float)((i + (size_t)rank) % 97) * 0.25f;
  memcpy(raw, in[rank]->data, nbytes);
  memset(raw2, 0, nbytes);

  double *traw = calloc((size_t)runs, sizeof *traw), *tsr = calloc((size_t)runs, sizeof *tsr);
  double *tout = calloc((size_t)runs, sizeof *tout);
  int bad = 0;
  for (int k = -2; k < runs; k++) {
    /* the raw reduction works in place: start from the same data */
    memcpy(raw, in[rank]->data, nbytes);
    sr_mpi_barrier();
    double t0 = sr_mpi_wtime();
    sr_mpi_raw_allreduce_f32(raw, count);
    double t1 = sr_mpi_wtime();
    sr_mpi_barrier();
    double u0 = sr_mpi_wtime();
    sr_mpi_raw_allreduce_f32_to(in[rank]->data, raw2, count);
    double u1 = sr_mpi_wtime();
    sr_mpi_barrier();
    double t2 = sr_mpi_wtime();
    if (c->ops->all_reduce(c, g, SR_RED_SUM, SR_F32, count, in, out, &d) < 0) bad = 1;
    double t3 = sr_mpi_wtime();
    if (k >= 0) {
      traw[k] = t1 - t0;
      tout[k] = u1 - u0;
      tsr[k] = t3 - t2;
    }
    if (k == -1 && out[rank]) {
      /* the values are small integers over 4: both sums are exact */
      if (memcmp(out[rank]->data, raw, nbytes) != 0) bad = 1;
    }
    sr_buffer_unref(out[rank]);
    out[rank] = NULL;
  }
  bad = c->ops->any(c, bad);
  /* each backend run follows its raw run: their ratio cancels the slow
     spells of a shared machine */
  double *ratio = calloc((size_t)runs, sizeof *ratio), *ratio2 = calloc((size_t)runs, sizeof *ratio2);
  for (int k = 0; k < runs; k++) ratio[k] = tsr[k] / traw[k], ratio2[k] = tsr[k] / tout[k];
  qsort(ratio, (size_t)runs, sizeof *ratio, cmp_double);
  qsort(ratio2, (size_t)runs, sizeof *ratio2, cmp_double);
  qsort(traw, (size_t)runs, sizeof *traw, cmp_double);
  qsort(tout, (size_t)runs, sizeof *tout, cmp_double);
  qsort(tsr, (size_t)runs, sizeof *tsr, cmp_double);
  if (rank == 0) {
    double mr = traw[runs / 2], ms = tsr[runs / 2];
    double gb = (double)nbytes / 1e9;
    printf("  all-reduce %5.1f MiB f32, %d ranks: MPI_Allreduce in place %7.2f ms (best %7.2f, %5.2f GB/s), "
           "into another buffer %7.2f ms (best %7.2f)  shardrepl %7.2f ms (best %7.2f, %5.2f GB/s)  "
           "ratio %.2f to in place, %.2f to out of place%s\n",
           mib, P, mr * 1e3, traw[0] * 1e3, gb / mr, tout[runs / 2] * 1e3, tout[0] * 1e3, ms * 1e3, tsr[0] * 1e3,
           gb / ms, ratio[runs / 2], ratio2[runs / 2], bad ? "  RESULTS DIFFER" : "");
  }
  SrDiags e = SR_DIAGS_INIT;
  sr_comm_mpi_stmt_end(c, 1, 0, &e);
  sr_buffer_unref(in[rank]);
  free(in);
  free(out);
  free(raw);
  free(raw2);
  free(tout);
  free(ratio2);
  free(traw);
  free(tsr);
  free(ratio);
  sr_comm_free(c);
  sr_mpi_finish();
  return bad;
}
