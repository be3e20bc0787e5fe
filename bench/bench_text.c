/* bench_text.c: throughput and memory of the jaxpr parser and printer.
 *
 *     bench_text [-n RUNS] FILE [FILE...]
 *
 * For each file (one program, as `shardrepl --fmt` reads it): the best of
 * RUNS timings of sr_parse_program and of sr_print_jaxpr, each alone, in
 * MB/s (10^6 bytes of jaxpr text per second) of CPU time, which does not
 * count what the other processes of a busy machine take from the run, and
 * of wall-clock time; in the same runs, memcpy and
 * memchr over the same text, a yardstick of the machine's speed at that
 * moment; and the peak memory of a run against the text size: all of it
 * ("peak", which holds the text twice while it is read, as --fmt reads
 * it), what parsing and printing added ("added"), and the bytes of the
 * program's arena.  With two files or more, the last lines compare each
 * file's times with the first's: ten times the text should take ten times
 * as long.
 *
 * Each run is a fresh process (this program again, with -1 FILE), as a
 * run of `shardrepl --fmt` is: in one process, a small program's memory
 * would come back from malloc already mapped, run after run, while a big
 * one's is handed back to the kernel and faulted in anew, which would
 * make big inputs look slower per byte than they are.  The files take
 * turns, round after round, so that a busy spell of a shared, noisy
 * machine falls on all of them alike, and the best of the rounds is kept:
 * the run the least disturbed.
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

/* What one run measures, as the child writes it on its stdout. */
typedef struct Run {
  double parse_s, print_s, memcpy_s, memchr_s; /* CPU time */
  double parse_w, print_w;                     /* wall-clock time */
  size_t size, neqn, ntop, arena;
  long base_kb; /* RSS with the text read, before parsing */
  int same;     /* the printing is the text, byte for byte */
} Run;

typedef struct Result {
  const char *path;
  Run best;     /* the best time of each kind over the rounds */
  long peak_kb; /* the runs' peak RSS */
} Result;

static void keep_best(Run *b, const Run *r) {
  if (r->parse_s < b->parse_s) b->parse_s = r->parse_s;
  if (r->print_s < b->print_s) b->print_s = r->print_s;
  if (r->memcpy_s < b->memcpy_s) b->memcpy_s = r->memcpy_s;
  if (r->memchr_s < b->memchr_s) b->memchr_s = r->memchr_s;
  if (r->parse_w < b->parse_w) b->parse_w = r->parse_w;
  if (r->print_w < b->print_w) b->print_w = r->print_w;
  b->size = r->size, b->neqn = r->neqn, b->ntop = r->ntop, b->arena = r->arena;
  b->base_kb = r->base_kb, b->same = r->same;
}

/* The CPU time of this process: what a busy machine's other processes
   take from a run does not count, as it does in the wall-clock time. */
static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
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

/* Equations in the program, each jaxpr counted once however often it is
   used (the hoisted ones are shared). */
static size_t count_eqns(const SrJaxpr *top) {
  size_t cap = 1024, n = 0; /* a set of the jaxprs seen, at most half full */
  const SrJaxpr **seen = sr_xcalloc(cap, sizeof *seen);
  size_t scap = 1024, sp = 0, total = 0; /* the ones to visit */
  const SrJaxpr **stack = sr_xmalloc(scap * sizeof *stack);
  stack[sp++] = top;
  while (sp) {
    const SrJaxpr *j = stack[--sp];
    if (2 * (n + 1) > cap) {
      const SrJaxpr **old = seen;
      seen = sr_xcalloc(2 * cap, sizeof *seen);
      for (size_t i = 0; i < cap; i++)
        if (old[i]) {
          size_t h = ((uintptr_t)old[i] >> 4) & (2 * cap - 1);
          while (seen[h]) h = (h + 1) & (2 * cap - 1);
          seen[h] = old[i];
        }
      free(old);
      cap *= 2;
    }
    size_t h = ((uintptr_t)j >> 4) & (cap - 1);
    while (seen[h] && seen[h] != j) h = (h + 1) & (cap - 1);
    if (seen[h]) continue;
    seen[h] = j;
    n++;
    total += j->neqn;
    for (uint32_t k = 0; k < j->neqn; k++)
      for (uint32_t i = 0; i < j->eqns[k].nparams; i++) {
        SrJaxpr *subs[64];
        int m = sr_param_jaxprs(j->eqns[k].params[i].val, subs, 64);
        for (int t = 0; t < m && t < 64; t++) {
          if (sp == scap) stack = sr_xrealloc(stack, (scap *= 2) * sizeof *stack);
          stack[sp++] = subs[t];
        }
      }
  }
  free(seen);
  free(stack);
  return total;
}

/* -1 FILE: one run, in this (fresh) process. */
static int run_one(const char *path) {
  Run r;
  memset(&r, 0, sizeof r);
  SrSrc *src = read_file(path);
  r.size = src->len;
  r.base_kb = maxrss_kb();

  /* the yardsticks, into a buffer already mapped */
  char *copy = sr_xmalloc(src->len + 1);
  memset(copy, 0, src->len + 1);
  double t0 = cpu_now();
  memcpy(copy, src->text, src->len);
  double t1 = cpu_now();
  size_t lines = 0;
  for (const char *q = src->text, *e = q + src->len; (q = memchr(q, '\n', (size_t)(e - q))); q++)
    lines++;
  double t2 = cpu_now();
  volatile size_t sink = lines + (unsigned char)copy[src->len / 2];
  (void)sink;
  free(copy);
  r.memcpy_s = t1 - t0;
  r.memchr_s = t2 - t1;

  double w0 = wall_now();
  t0 = cpu_now();
  SrProgram *p = parse(src);
  t1 = cpu_now();
  double w1 = wall_now();
  SrBuf out = SR_BUF_INIT;
  sr_print_jaxpr(&out, p->top);
  t2 = cpu_now();
  double w2 = wall_now();
  r.parse_s = t1 - t0;
  r.print_s = t2 - t1;
  r.parse_w = w1 - w0;
  r.print_w = w2 - w1;
  r.arena = sr_arena_used(p->arena);
  /* --fmt adds the final newline */
  r.same = out.len + 1 == src->len && memcmp(out.p, src->text, out.len) == 0;
  r.neqn = count_eqns(p->top);
  r.ntop = p->top->neqn;
  printf("%.9f %.9f %.9f %.9f %.9f %.9f %zu %zu %zu %zu %ld %d\n", r.parse_s, r.print_s,
         r.memcpy_s, r.memchr_s, r.parse_w, r.print_w, r.size, r.neqn, r.ntop, r.arena, r.base_kb,
         r.same);
  return 0;
}

/* Runs `self -1 path` and reads its figures; the peak RSS is the child's. */
static void spawn_run(const char *self, const char *path, Run *r, long *peak_kb) {
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
    if (dup2(fds[1], 1) < 0) _exit(2);
    execl(self, self, "-1", path, (char *)NULL);
    perror("bench_text: exec");
    _exit(2);
  }
  close(fds[1]);
  FILE *f = fdopen(fds[0], "r");
  int n = f ? fscanf(f, "%lf %lf %lf %lf %lf %lf %zu %zu %zu %zu %ld %d", &r->parse_s, &r->print_s,
                     &r->memcpy_s, &r->memchr_s, &r->parse_w, &r->print_w, &r->size, &r->neqn,
                     &r->ntop, &r->arena, &r->base_kb, &r->same)
             : 0;
  if (f) fclose(f);
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || n != 12) {
    fprintf(stderr, "bench_text: the run on %s failed\n", path);
    exit(1);
  }
  *peak_kb = ru.ru_maxrss;
}

static double mbps(size_t bytes, double s) { return (double)bytes / 1e6 / s; }

static void usage(void) {
  fputs("usage: bench_text [-n RUNS] FILE [FILE...]\n", stderr);
  exit(2);
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

int main(int argc, char **argv) {
  int runs = 5, opt;
  const char *one = NULL;
  while ((opt = getopt(argc, argv, "n:1:")) != -1) {
    if (opt == 'n' && atoi(optarg) > 0) runs = atoi(optarg);
    else if (opt == '1') one = optarg;
    else usage();
  }
  if (one) return run_one(one);
  int nfiles = argc - optind;
  if (nfiles < 1) usage();
  /* this program, to run again for each measurement */
  char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl > 0) self[sl] = 0;
  else snprintf(self, sizeof self, "%s", argv[0]);

  Result *rs = sr_xcalloc((size_t)nfiles, sizeof *rs);
  for (int i = 0; i < nfiles; i++) {
    rs[i].path = argv[optind + i];
    Run *b = &rs[i].best;
    b->parse_s = b->print_s = b->memcpy_s = b->memchr_s = b->parse_w = b->print_w = 1e30;
  }
  for (int round = 0; round < runs; round++)
    for (int i = 0; i < nfiles; i++) {
      Run r;
      long peak;
      spawn_run(self, rs[i].path, &r, &peak);
      keep_best(&rs[i].best, &r);
      if (peak > rs[i].peak_kb) rs[i].peak_kb = peak;
    }

  printf("best of %d runs, each in a fresh process, the files taking turns; MB = 10^6 bytes;\n"
         "one thread.  MB/s of CPU time (CLOCK_PROCESS_CPUTIME_ID: what other processes take\n"
         "from a run does not count) and of wall-clock time (CLOCK_MONOTONIC); memcpy and\n"
         "memchr over the same text in the same runs.  Memory: peak RSS, all of it and what\n"
         "parsing and printing added to it, and the program's arena, against the text size.\n\n",
         runs);
  printf("%-16s %6s %8s | %6s %6s | %6s %6s | %6s %6s | %5s %5s %5s\n", "", "", "", "parse", "",
         "print", "", "memcpy", "memchr", "peak", "added", "arena");
  printf("%-16s %6s %8s | %6s %6s | %6s %6s | %6s %6s | %5s %5s %5s\n", "file", "MB", "eqns",
         "MB/s", "wall", "MB/s", "wall", "MB/s", "MB/s", "/text", "/text", "/text");
  for (int i = 0; i < nfiles; i++) {
    const Run *r = &rs[i].best;
    double sz = (double)r->size;
    printf("%-16s %6.2f %8zu | %6.1f %6.1f | %6.1f %6.1f | %6.0f %6.0f | %5.2f %5.2f %5.2f\n",
           base_name(rs[i].path), sz / 1e6, r->neqn, mbps(r->size, r->parse_s),
           mbps(r->size, r->parse_w), mbps(r->size, r->print_s), mbps(r->size, r->print_w),
           mbps(r->size, r->memcpy_s), mbps(r->size, r->memchr_s),
           (double)rs[i].peak_kb * 1024 / sz, (double)(rs[i].peak_kb - r->base_kb) * 1024 / sz,
           (double)r->arena / sz);
  }
  printf("\n");
  for (int i = 0; i < nfiles; i++) {
    const Run *r = &rs[i].best;
    printf("%s: %zu equations (%zu at top level); CPU time: parse %.1f ms, print %.1f ms; "
           "peak RSS %.1f MB (%.1f MB with the text read), arena %.1f MB%s\n",
           base_name(rs[i].path), r->neqn, r->ntop, r->parse_s * 1e3, r->print_s * 1e3,
           rs[i].peak_kb / 1024.0, r->base_kb / 1024.0, (double)r->arena / 1e6,
           r->same ? "; prints back byte for byte" : "; prints DIFFERENTLY");
  }
  for (int i = 1; i < nfiles; i++) {
    const Run *a = &rs[0].best, *b = &rs[i].best;
    double x = (double)b->size / (double)a->size;
    printf("linearity: %.2fx the text of %s takes %.2fx the CPU time to parse, %.2fx to print\n"
           "  (per byte: %.3f and %.3f; wall-clock: %.2fx and %.2fx)\n",
           x, base_name(rs[0].path), b->parse_s / a->parse_s, b->print_s / a->print_s,
           b->parse_s / a->parse_s / x, b->print_s / a->print_s / x, b->parse_w / a->parse_w,
           b->print_w / a->print_w);
  }
  free(rs);
  return 0;
}
