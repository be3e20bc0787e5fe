/* bench_exec.c: the evaluator's figures for `make bench`.
 *
 *   bench_exec [-n RUNS]
 *
 * 1. Overhead per equation: a parsed jaxpr of 1,000 add/mul equations on
 *    f32[4], run by the evaluator (no language layer), on one device and
 *    replicated on 8 (the 8 devices share one computation).
 * 2. dot_general of two f32[1024,1024]: the evaluator against the raw
 *    cblas_sgemm it calls.
 * 3. In-process data movement of a 64 MiB f32[4096,4096] on a (4, 2) mesh:
 *    P('X') -> P() (all-gather), P('X', None) -> P(None, 'X') (all-to-all)
 *    and unreduced over X -> P('X') (reduce-scatter), against one memcpy of
 *    the 64 MiB.
 * 4. Memory: a 1,000-equation elementwise chain on a 64 MiB array, the
 *    most bytes held at once over the input's size.
 * Each time is the best of RUNS (default 5).
 *
 *   bench_exec --chain N [-n RUNS]
 *
 * runs only a chain of N equations on f32[4] (mul by c, add b, in turn,
 * from a = [1, 2, 3, 4], b = 1, c = 0.5) and prints one line: the best
 * CPU time (CLOCK_PROCESS_CPUTIME_ID) and wall time per equation, and the
 * result, for bench/overhead_numpy.py to set beside numpy's
 * `a = a * c; a = a + b` on the same arrays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/array.h"
#include "lax/lax.h"
#include "exec/comm.h"
#include "exec/eval.h"
#include "text/parse.h"
#include "util/intern.h"

#include <cblas.h>
#undef I

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void var_name(int i, char *out) {
  char t[8];
  int n = 0;
  do {
    t[n++] = (char)('a' + i % 26);
    i = i / 26 - 1;
  } while (i >= 0);
  for (int k = 0; k < n; k++) out[k] = t[n - 1 - k];
  out[n] = 0;
}

static SrExec ex;
static SrEvalCtx cx;
static SrDiags diags = SR_DIAGS_INIT;

static SrProgram *parse(const char *text) {
  SrSrc *src = sr_src_new("<bench>", text, strlen(text), 1);
  size_t end;
  SrParseOpts o = {NULL};
  SrProgram *p = sr_parse_program(src, 0, &end, &o, &diags);
  sr_src_unref(src);
  if (!p) {
    fprintf(stderr, "bench_exec: %s\n", diags.first ? diags.first->msg : "parse error");
    exit(1);
  }
  return p;
}

/* A chain of n equations on f32[size]: op(prev, operand) alternating. */
static SrProgram *chain(int n, long size, const char *op1, const char *arg1, const char *op2, const char *arg2) {
  SrBuf t = SR_BUF_INIT;
  char v[16], w[16];
  sr_buf_printf(&t, "{ lambda ; a:f32[%ld]. let\n", size);
  for (int i = 0; i < n; i++) {
    var_name(i, v);
    var_name(i + 1, w);
    sr_buf_printf(&t, "  %s:f32[%ld] = %s %s %s\n", w, size, i % 2 ? op2 : op1, v, (i % 2 ? arg2 : arg1) ? (i % 2 ? arg2 : arg1) : v);
  }
  var_name(n, w);
  sr_buf_printf(&t, " in (%s,) }", w);
  SrProgram *p = parse(t.p);
  sr_buf_free(&t);
  return p;
}

static double run_best(const SrJaxpr *j, SrArray **in, int runs) {
  double best = 1e30;
  for (int r = 0; r < runs; r++) {
    SrArray *out[4] = {0};
    double t0 = now();
    if (sr_ev_jaxpr(&cx, j, in, out) < 0) {
      fprintf(stderr, "bench_exec: %s\n", diags.first ? diags.first->msg : "failed");
      exit(1);
    }
    double dt = now() - t0;
    for (uint32_t i = 0; i < j->nout; i++) sr_array_unref(out[i]);
    if (dt < best) best = dt;
  }
  return best;
}

static const SrType *layout2(int64_t n0, int64_t n1, const SrMesh *m, int ax0, int ax1, SrAxes u) {
  SrTypeBuilder b;
  memset(&b, 0, sizeof b);
  b.dtype = SR_F32;
  b.ndim = 2;
  b.dims[0].size = n0;
  b.dims[1].size = n1;
  b.mesh = sr_mesh_shape(m);
  if (ax0 >= 0) b.dims[0].nax = 1, b.dims[0].ax[0] = (uint8_t)ax0;
  if (ax1 >= 0) b.dims[1].nax = 1, b.dims[1].ax[0] = (uint8_t)ax1;
  b.unreduced = u;
  b.ukind = u ? SR_UK_SUM : SR_UK_NONE;
  return sr_type_get(&b);
}

static double move_best(SrArray *a, const SrMesh *m, const SrType *l, int runs) {
  double best = 1e30;
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    SrArray *o = sr_redistribute(&cx, a, m, l);
    double dt = now() - t0;
    sr_array_unref(o);
    if (dt < best) best = dt;
  }
  return best;
}

/* --chain N: d = mul a c, e = add d b, f = mul e c, ... on f32[4]. */
static int chain_overhead(long n, int runs) {
  SrBuf t = SR_BUF_INIT;
  char v[16], w[16];
  sr_buf_puts(&t, "{ lambda ; a:f32[4] b:f32[4] c:f32[4]. let\n");
  for (long i = 0; i < n; i++) {
    var_name(i ? (int)i + 2 : 0, v);
    var_name((int)i + 3, w);
    sr_buf_printf(&t, "  %s:f32[4] = %s %s %s\n", w, i % 2 ? "add" : "mul", v, i % 2 ? "b" : "c");
  }
  var_name((int)n + 2, w);
  sr_buf_printf(&t, " in (%s,) }", w);
  SrProgram *p = parse(t.p);
  sr_buf_free(&t);
  float xa[4] = {1, 2, 3, 4}, xb[4] = {1, 1, 1, 1}, xc[4] = {0.5f, 0.5f, 0.5f, 0.5f}, r[4];
  int64_t s4[1] = {4};
  const SrType *ty = sr_type_array(SR_F32, 1, s4);
  SrArray *in[3] = {sr_array_from_data(ty, NULL, xa), sr_array_from_data(ty, NULL, xb),
                    sr_array_from_data(ty, NULL, xc)};
  double wall = 1e30, cpu = 1e30;
  /* Warm up for a quarter of a second first: OpenBLAS's worker threads
     start spinning (sched_yield) when the library loads and go to sleep
     only after a while, and their spinning is this process's CPU time;
     a fast start would time them instead of the evaluator. */
  for (double w0 = now(); now() - w0 < 0.25;) {
    SrArray *out[1];
    if (sr_ev_jaxpr(&cx, p->top, in, out) < 0) break;
    sr_array_unref(out[0]);
  }
  for (int k = 0; k < runs; k++) {
    SrArray *out[1];
    double t0 = now(), c0 = cpu_now();
    if (sr_ev_jaxpr(&cx, p->top, in, out) < 0) {
      fprintf(stderr, "bench_exec: %s\n", diags.first ? diags.first->msg : "failed");
      return 1;
    }
    double c1 = cpu_now(), t1 = now();
    if (t1 - t0 < wall) wall = t1 - t0;
    if (c1 - c0 < cpu) cpu = c1 - c0;
    if (sr_array_to_host(&cx, out[0], r) < 0) return 1;
    sr_array_unref(out[0]);
  }
  printf("chain of %ld equations on f32[4], best of %d: %.1f ns per equation of CPU time, %.1f ns wall; "
         "result %.9g %.9g %.9g %.9g\n",
         n, runs, cpu / (double)n * 1e9, wall / (double)n * 1e9, r[0], r[1], r[2], r[3]);
  for (int i = 0; i < 3; i++) sr_array_unref(in[i]);
  sr_program_unref(p);
  return 0;
}

int main(int argc, char **argv) {
  int runs = 5;
  long nchain = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-n") == 0) runs = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--chain") == 0) nchain = atol(argv[i + 1]);
    else {
      fprintf(stderr, "usage: bench_exec [-n RUNS] [--chain N]\n");
      return 2;
    }
  }
  if (runs < 1) runs = 1;
  sr_lax_init();
  ex.comm = sr_comm_local_new(8);
  sr_eval_ctx_init(&cx, NULL, &ex, &diags);
  if (nchain > 0) {
    int rc = chain_overhead(nchain, runs);
    sr_comm_free(ex.comm);
    return rc;
  }
  SrMesh mm = {0};
  mm.n = 2;
  mm.names[0] = sr_intern_cstr("X");
  mm.names[1] = sr_intern_cstr("Y");
  mm.sizes[0] = 4;
  mm.sizes[1] = 2;
  const SrMesh *m = sr_mesh_intern(&mm);

  /* 1. overhead */
  SrProgram *p = chain(1000, 4, "add", NULL, "mul", NULL);
  float x4[4] = {1, 2, 3, 4};
  int64_t s4[1] = {4};
  SrArray *small = sr_array_from_data(sr_type_array(SR_F32, 1, s4), NULL, x4);
  SrArray *small8 = sr_redistribute(&cx, small, m, small->layout);
  double t1 = run_best(p->top, &small, runs * 20), t8 = run_best(p->top, &small8, runs * 20);
  printf("  overhead per equation (1,000 equations on f32[4]): %.0f ns on one device, %.0f ns replicated on 8\n",
         t1 / 1000 * 1e9, t8 / 1000 * 1e9);
  sr_program_unref(p);

  /* 2. dot */
  const int64_t n = 1024;
  int64_t sh[2] = {n, n};
  float *A = malloc((size_t)(n * n) * 4), *B = malloc((size_t)(n * n) * 4), *C = malloc((size_t)(n * n) * 4);
  for (int64_t i = 0; i < n * n; i++) {
    A[i] = (float)(i % 7) / 7;
    B[i] = (float)(i % 5) / 5;
  }
  double raw = 1e30;
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)n, (blasint)n, (blasint)n, 1, A, (blasint)n, B,
                (blasint)n, 0, C, (blasint)n);
    double dt = now() - t0;
    if (dt < raw) raw = dt;
  }
  SrProgram *pd = parse("{ lambda ; a:f32[1024,1024] b:f32[1024,1024]. let c:f32[1024,1024] = dot_general["
                        "dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float32] a b in (c,) }");
  SrArray *ab[2] = {sr_array_from_data(sr_type_array(SR_F32, 2, sh), NULL, A),
                    sr_array_from_data(sr_type_array(SR_F32, 2, sh), NULL, B)};
  double td = run_best(pd->top, ab, runs);
  printf("  dot_general f32[1024,1024] x f32[1024,1024]: %.2f ms, raw cblas_sgemm %.2f ms (%.0f%%)\n", td * 1e3,
         raw * 1e3, raw / td * 100);
  sr_program_unref(pd);
  sr_array_unref(ab[0]);
  sr_array_unref(ab[1]);
  free(A);
  free(B);
  free(C);

  /* 3. data movement */
  const int64_t big = 4096;
  size_t bytes = (size_t)(big * big) * 4;
  float *H = malloc(bytes), *H2 = malloc(bytes);
  for (size_t i = 0; i < bytes / 4; i++) H[i] = (float)(i % 1000);
  double mc = 1e30;
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    memcpy(H2, H, bytes);
    double dt = now() - t0;
    if (dt < mc) mc = dt;
  }
  int64_t bs[2] = {big, big};
  SrArray *h = sr_array_from_data(sr_type_array(SR_F32, 2, bs), NULL, H);
  SrArray *ax = sr_redistribute(&cx, h, m, layout2(big, big, m, 0, -1, 0));
  SrArray *ux = sr_redistribute(&cx, h, m, layout2(big, big, m, -1, -1, 1));
  double tg = move_best(ax, m, layout2(big, big, m, -1, -1, 0), runs);
  double ta = move_best(ax, m, layout2(big, big, m, -1, 0, 0), runs);
  double tr = move_best(ux, m, layout2(big, big, m, 0, -1, 0), runs);
  printf("  64 MiB: memcpy %.1f ms (%.1f GB/s); all-gather P('X')->P() %.1f ms (%.0f%% of memcpy), all-to-all "
         "P('X',None)->P(None,'X') %.1f ms (%.0f%%), reduce-scatter unreduced->P('X') %.1f ms\n",
         mc * 1e3, (double)bytes / mc / 1e9, tg * 1e3, mc / tg * 100, ta * 1e3, mc / ta * 100, tr * 1e3);
  sr_array_unref(ax);
  sr_array_unref(ux);
  sr_array_unref(h);
  free(H);
  free(H2);

  /* 4. memory of a long chain */
  const long big1 = 16L << 20;
  SrProgram *pc = chain(1000, big1, "mul", "1.0001:f32[]", "add", "0.5:f32[]");
  float *z = calloc((size_t)big1, 4);
  int64_t zs[1] = {big1};
  SrArray *za = sr_array_from_data(sr_type_array(SR_F32, 1, zs), NULL, z);
  free(z);
  size_t before, peak;
  sr_buffer_stats(&before, NULL);
  sr_buffer_stats_reset_peak();
  double tc = run_best(pc->top, &za, 1);
  sr_buffer_stats(NULL, &peak);
  printf("  1,000-equation elementwise chain on a 64 MiB array: %.2f s, at most %.2fx the array held (input included)\n",
         tc, (double)peak / ((double)big1 * 4));
  sr_array_unref(za);
  sr_program_unref(pc);
  sr_array_unref(small);
  sr_array_unref(small8);
  sr_comm_free(ex.comm);
  return 0;
}
