/* bench_text.c: throughput and memory of the jaxpr parser and printer.
 *
 *     bench_text [-n RUNS] FILE [FILE...]
 *
 * For each file (a program as `shardrepl --fmt` reads it): the best of RUNS
 * timings of sr_parse_program and of sr_print_jaxpr, each alone, in MB/s
 * (10^6 bytes of jaxpr text per second); the peak memory of one
 * read-parse-print in a fresh child process, against the text size; and,
 * in the same run, memcpy and memchr over the same text as a yardstick for
 * this machine's memory bandwidth at that moment.  With two files or more,
 * the last lines compare each file's times with the first's: a file ten
 * times as big should take ten times as long.
 *
 * Best-of-N because the machines this runs on are shared and noisy: the
 * fastest run is the one the least disturbed.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "text/parse.h"
#include "text/print.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/mem.h"

typedef struct Result {
  const char *path;
  size_t size;
  size_t neqn, ntop;
  double parse_s, print_s, memcpy_s, memchr_s;
  int same;              /* prints back byte for byte */
  long peak_kb, base_kb; /* child's peak RSS, and its RSS with only the text */
  size_t arena;          /* the parsed program's arena */
} Result;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static SrSrc *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "bench_text: cannot open %s: %s\n", path, strerror(errno));
    exit(2);
  }
  SrBuf b = SR_BUF_INIT;
  char chunk[1 << 16];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sr_buf_putn(&b, chunk, n);
  fclose(f);
  SrSrc *s = sr_src_new(path, sr_buf_str(&b), b.len, 1);
  sr_buf_free(&b);
  return s;
}

static SrProgram *parse(SrSrc *src) {
  SrDiags d = SR_DIAGS_INIT;
  size_t end;
  SrProgram *p = sr_parse_program(src, sr_skip_blanks(src->text, src->len, 0), &end, NULL, &d);
  if (!p || sr_skip_blanks(src->text, src->len, end) != src->len) {
    SrBuf b = SR_BUF_INIT;
    sr_diags_render(&d, &b);
    fprintf(stderr, "bench_text: %s is not one jaxpr program:\n%s", src->name, sr_buf_str(&b));
    exit(1);
  }
  sr_diags_clear(&d);
  return p;
}

static void count_eqns(const SrJaxpr *j, size_t *n, int depth) {
  if (depth > 1000) return;
  *n += j->neqn;
  for (uint32_t k = 0; k < j->neqn; k++)
    for (uint32_t i = 0; i < j->eqns[k].nparams; i++) {
      SrJaxpr *subs[64];
      int m = sr_param_jaxprs(j->eqns[k].params[i].val, subs, 64);
      for (int s = 0; s < m && s < 64; s++) count_eqns(subs[s], n, depth + 1);
    }
}

static long maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* Peak memory of reading, parsing and printing once, as `shardrepl --fmt`
   does, in a child so that the timing runs do not count. */
static void measure_memory(Result *r) {
  int fds[2];
  if (pipe(fds) < 0) {
    perror("bench_text: pipe");
    exit(2);
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("bench_text: fork");
    exit(2);
  }
  if (pid == 0) {
    close(fds[0]);
    SrSrc *src = read_file(r->path);
    long base = maxrss_kb();
    SrProgram *p = parse(src);
    size_t arena = sr_arena_used(p->arena);
    SrBuf out = SR_BUF_INIT;
    sr_print_jaxpr(&out, p->top);
    size_t pair[2] = {(size_t)base, arena};
    if (write(fds[1], pair, sizeof pair) != (ssize_t)sizeof pair) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  size_t pair[2] = {0, 0};
  if (read(fds[0], pair, sizeof pair) != (ssize_t)sizeof pair) {
    fprintf(stderr, "bench_text: the memory run failed\n");
    exit(1);
  }
  close(fds[0]);
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_text: the memory run failed\n");
    exit(1);
  }
  r->peak_kb = ru.ru_maxrss;
  r->base_kb = (long)pair[0];
  r->arena = pair[1];
}

static void bench_file(Result *r, int runs) {
  SrSrc *src = read_file(r->path);
  r->size = src->len;
  r->parse_s = r->print_s = r->memcpy_s = r->memchr_s = 1e30;

  /* the yardsticks */
  char *copy = sr_xmalloc(src->len + 1);
  volatile size_t sink = 0;
  for (int i = 0; i < runs; i++) {
    double t0 = now();
    memcpy(copy, src->text, src->len);
    double t1 = now();
    size_t lines = 0;
    for (const char *q = src->text, *e = q + src->len; (q = memchr(q, '\n', (size_t)(e - q))); q++)
      lines++;
    double t2 = now();
    sink += lines + (unsigned char)copy[src->len / 2];
    if (t1 - t0 < r->memcpy_s) r->memcpy_s = t1 - t0;
    if (t2 - t1 < r->memchr_s) r->memchr_s = t2 - t1;
  }
  free(copy);

  SrProgram *kept = NULL;
  for (int i = 0; i < runs; i++) {
    double t0 = now();
    SrProgram *p = parse(src);
    double t = now() - t0;
    if (t < r->parse_s) r->parse_s = t;
    if (kept) sr_program_unref(kept);
    kept = p;
  }
  r->neqn = 0;
  count_eqns(kept->top, &r->neqn, 0);
  r->ntop = kept->top->neqn;

  for (int i = 0; i < runs; i++) {
    SrBuf out = SR_BUF_INIT;
    double t0 = now();
    sr_print_jaxpr(&out, kept->top);
    double t = now() - t0;
    if (t < r->print_s) r->print_s = t;
    /* --fmt adds the final newline */
    r->same = out.len + 1 == src->len && memcmp(out.p, src->text, out.len) == 0;
    sr_buf_free(&out);
  }
  sr_program_unref(kept);
  sr_src_unref(src);
  measure_memory(r);
}

static double mbps(size_t bytes, double s) { return (double)bytes / 1e6 / s; }

static void usage(void) {
  fputs("usage: bench_text [-n RUNS] FILE [FILE...]\n", stderr);
  exit(2);
}

int main(int argc, char **argv) {
  int runs = 5, opt;
  while ((opt = getopt(argc, argv, "n:")) != -1) {
    if (opt == 'n' && atoi(optarg) > 0) runs = atoi(optarg);
    else usage();
  }
  int nfiles = argc - optind;
  if (nfiles < 1) usage();
  Result *rs = sr_xcalloc((size_t)nfiles, sizeof *rs);

  printf("best of %d runs; MB = 10^6 bytes; one thread\n\n", runs);
  printf("%-28s %9s %8s %9s %9s %9s %9s %8s %8s\n", "file", "MB", "eqns", "parse", "print",
         "memcpy", "memchr", "peak", "arena");
  printf("%-28s %9s %8s %9s %9s %9s %9s %8s %8s\n", "", "", "", "MB/s", "MB/s", "MB/s", "MB/s",
         "/ text", "/ text");
  for (int i = 0; i < nfiles; i++) {
    Result *r = &rs[i];
    r->path = argv[optind + i];
    bench_file(r, runs);
    const char *name = strrchr(r->path, '/') ? strrchr(r->path, '/') + 1 : r->path;
    printf("%-28s %9.2f %8zu %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f\n", name, r->size / 1e6, r->neqn,
           mbps(r->size, r->parse_s), mbps(r->size, r->print_s), mbps(r->size, r->memcpy_s),
           mbps(r->size, r->memchr_s), (double)r->peak_kb * 1024 / (double)r->size,
           (double)r->arena / (double)r->size);
    fflush(stdout);
  }
  printf("\n");
  for (int i = 0; i < nfiles; i++) {
    Result *r = &rs[i];
    const char *name = strrchr(r->path, '/') ? strrchr(r->path, '/') + 1 : r->path;
    printf("%s: %zu equations (%zu at top level); parse %.1f ms, print %.1f ms; "
           "peak RSS %.1f MB (%.1f MB before parsing), arena %.1f MB%s\n",
           name, r->neqn, r->ntop, r->parse_s * 1e3, r->print_s * 1e3, r->peak_kb / 1024.0,
           r->base_kb / 1024.0, r->arena / 1e6,
           r->same ? "; prints back byte for byte" : "; prints DIFFERENTLY");
  }
  for (int i = 1; i < nfiles; i++) {
    double x = (double)rs[i].size / (double)rs[0].size;
    printf("linearity: %.2fx the text of %s takes %.2fx the time to parse, %.2fx to print "
           "(per byte: %.3f, %.3f)\n",
           x, rs[0].path, rs[i].parse_s / rs[0].parse_s, rs[i].print_s / rs[0].print_s,
           rs[i].parse_s / rs[0].parse_s / x, rs[i].print_s / rs[0].print_s / x);
  }
  free(rs);
  return 0;
}
