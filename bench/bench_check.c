/* bench_check.c: how fast the type checker and the tracer are, against size.
 *
 *     bench_check [-n RUNS] [FILE...]
 *     bench_check [-n RUNS] -t EQNS[,EQNS...] [-l LOOP]
 *
 * Type-checking: each FILE is one jaxpr program (as `shardrepl --check`
 * reads it; `make bench` gives the ~10 MB and ~100 MB texts of
 * gen_jaxpr.py).  It is parsed once, then sr_check_jaxpr -- what
 * `shardrepl --check` calls -- runs RUNS times on the parsed program, each
 * run timed alone.  Equations are counted in every jaxpr of the program,
 * the nested ones included, each jaxpr once however many equations use it
 * (the hoisted `let` jaxprs are shared), as the text has them; the checker
 * visits a shared jaxpr at each use, so the equations it visits are
 * printed too.
 *
 * Tracing: for each EQNS, a statement-language script defines
 * `def f(x, w):` with straight-line statements (jnp unary functions,
 * arithmetic with literals and arrays, jnp.maximum, sums with keepdims and
 * their broadcast back, a matmul, jnp.where, casts through bfloat16) on
 * f32[256,1024] sharded P('X', None) over an explicit (4, 2) mesh, enough
 * of them for about EQNS equations; with -l LOOP, the body is instead a
 * Python loop over statements of about LOOP equations.  A run parses and
 * runs the script up to the def, then times `jax.make_jaxpr(f)(x, w)` --
 * x and w jax.ShapeDtypeStructs with shardings -- called through the
 * interpreter's API: tracing only.  The end-to-end figure runs the def
 * and a make_jaxpr statement as one script through sr_interp_run: lexing,
 * parsing, the def and the tracing.  Equations are those of the traced
 * jaxpr, counted as above.  Each run is a fresh process (see
 * bench_trace).
 *
 * Times are CPU time of this thread (CLOCK_THREAD_CPUTIME_ID: what other
 * processes of a busy machine take does not count) and wall-clock time;
 * best and median of RUNS.  One thread.  With two sizes or more, the last
 * lines compare each size with the first: ten times the equations should
 * take at most about ten times as long.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check/check.h"
#include "cmd/linit.h"
#include "lax/lax.h"
#include "py/interp.h"
#include "text/parse.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/mem.h"

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The best and the median of n timings (sorts them). */
typedef struct Stat {
  double best, median;
} Stat;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static Stat stat_of(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  Stat s = {t[0], n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2};
  return s;
}

/* ---- counting equations ---- */

/* Every jaxpr directly in the params of j's equations, pushed on *stack. */
static void push_subs(const SrJaxpr *j, const SrJaxpr ***stack, size_t *sp, size_t *cap) {
  for (uint32_t k = 0; k < j->neqn; k++)
    for (uint32_t i = 0; i < j->eqns[k].nparams; i++) {
      SrJaxpr *subs[64];
      int m = sr_param_jaxprs(j->eqns[k].params[i].val, subs, 64);
      for (int t = 0; t < m && t < 64; t++) {
        if (*sp == *cap) *stack = sr_xrealloc(*stack, (*cap *= 2) * sizeof **stack);
        (*stack)[(*sp)++] = subs[t];
      }
    }
}

/* Equations in the program, each jaxpr counted once however often it is
   used (*visits: counted at each use, as the checker visits them). */
static size_t count_eqns(const SrJaxpr *top, size_t *visits) {
  size_t cap = 1024, n = 0; /* a set of the jaxprs seen, at most half full */
  const SrJaxpr **seen = sr_xcalloc(cap, sizeof *seen);
  size_t scap = 1024, sp = 0, total = 0, all = 0;
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
    if (!seen[h]) {
      seen[h] = j;
      n++;
      total += j->neqn;
    }
    all += j->neqn;
    push_subs(j, &stack, &sp, &scap);
  }
  free(seen);
  free(stack);
  if (visits) *visits = all;
  return total;
}

/* ---- type-checking ---- */

static SrSrc *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "bench_check: cannot open %s: %s\n", path, strerror(errno));
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

static void fail_diags(const char *what, SrDiags *d) {
  SrBuf b = SR_BUF_INIT;
  sr_diags_render(d, &b);
  fprintf(stderr, "bench_check: %s:\n%.4000s", what, sr_buf_str(&b));
  exit(1);
}

typedef struct CheckResult {
  const char *path;
  size_t size, neqn, visits;
  Stat cpu, wall;
} CheckResult;

static void bench_check_file(const char *path, int runs, CheckResult *r) {
  SrSrc *src = read_file(path);
  SrDiags d = SR_DIAGS_INIT;
  size_t end;
  SrProgram *p = sr_parse_program(src, sr_skip_blanks(src->text, src->len, 0), &end, NULL, &d);
  if (!p || sr_skip_blanks(src->text, src->len, end) != src->len) fail_diags("not one jaxpr program", &d);
  r->path = path;
  r->size = src->len;
  r->neqn = count_eqns(p->top, &r->visits);
  /* as `shardrepl --check FILE` checks it: strict, the program's own mesh */
  SrCheckOpts opts = {NULL, 1};
  double *cpu = sr_xcalloc((size_t)runs, sizeof *cpu), *wall = sr_xcalloc((size_t)runs, sizeof *wall);
  for (int i = 0; i < runs; i++) {
    double w0 = wall_now(), c0 = cpu_now();
    int errors = sr_check_jaxpr(p->top, &opts, &d, NULL);
    double c1 = cpu_now(), w1 = wall_now();
    if (errors || d.count) fail_diags("the benchmark jaxpr does not type-check", &d);
    cpu[i] = c1 - c0;
    wall[i] = w1 - w0;
  }
  r->cpu = stat_of(cpu, runs);
  r->wall = stat_of(wall, runs);
  free(cpu);
  free(wall);
  sr_program_unref(p);
  sr_diags_clear(&d);
  sr_src_unref(src);
}

/* ---- tracing ---- */

static const char prelude[] =
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding, AxisType\n"
    "jax.config.update('jax_num_cpu_devices', 8)\n"
    "mesh = jax.make_mesh((4, 2), ('X', 'Y'), axis_types=(AxisType.Explicit, AxisType.Explicit))\n"
    "_ = jax.set_mesh(mesh)\n"
    "x = jax.ShapeDtypeStruct((256, 1024), jnp.float32, sharding=NamedSharding(mesh, P('X', None)))\n"
    "w = jax.ShapeDtypeStruct((1024, 512), jnp.float32, sharding=NamedSharding(mesh, P(None, 'Y')))\n";

static const char *const unary[] = {"sin", "cos", "tanh", "exp", "log1p", "abs", "negative", "sqrt"};
static const char *const binop[] = {"+", "-", "*", "/"};
static const char *const lits[] = {"0.5", "2.0", "1.0", "-1.0", "3.0", "1e-05", "0.044715"};

/* A deterministic generator (a 64-bit LCG; the high bits). */
static uint64_t rng_state;

static unsigned rnd(unsigned n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((rng_state >> 33) % n);
}

#define PICK(a) a[rnd(sizeof a / sizeof *a)]

/* Statements binding about `eqns` equations (the estimate of each is what
   JAX binds for it), each line indented by `ind`. */
static void gen_stmts(SrBuf *b, size_t eqns, const char *ind) {
  size_t n = 0;
  while (n < eqns) {
    unsigned k = rnd(100);
    sr_buf_puts(b, ind);
    if (k < 25) {
      sr_buf_printf(b, "y = jnp.%s(y)\n", PICK(unary));
      n += 1;
    } else if (k < 50) {
      sr_buf_printf(b, "y = y %s %s\n", PICK(binop), PICK(lits));
      n += 1;
    } else if (k < 65) {
      sr_buf_printf(b, "y = %s %s y\n", rnd(2) ? "x" : "t", PICK(binop));
      n += 1;
    } else if (k < 72) {
      sr_buf_puts(b, "y = jnp.maximum(y, 0.0)\n");
      n += 1;
    } else if (k < 80) {
      sr_buf_printf(b, "t = y\n%ss = jnp.sum(y, axis=1, keepdims=True)\n%sy = y - s\n", ind, ind);
      n += 3;
    } else if (k < 85) {
      sr_buf_printf(b, "z = y @ w\n%sy = y + jnp.sum(z, axis=1, keepdims=True)\n", ind);
      n += 4;
    } else if (k < 92) {
      sr_buf_puts(b, "y = jnp.where(y > 0, y, t)\n");
      n += 3; /* gt, jit of _where, the select_n in it */
    } else {
      sr_buf_puts(b, "y = y.astype(jnp.bfloat16).astype(jnp.float32)\n");
      n += 2;
    }
  }
}

/* `def f(x, w):` of about `eqns` equations: straight-line statements, or
   (loop > 0) a Python loop over statements of about `loop` equations. */
static void gen_def(SrBuf *b, size_t eqns, size_t loop) {
  rng_state = 1;
  sr_buf_puts(b, "def f(x, w):\n  y = x\n  t = x\n");
  if (loop) {
    sr_buf_printf(b, "  for i in range(%zu):\n", (eqns + loop - 1) / loop);
    gen_stmts(b, loop, "    ");
  } else {
    gen_stmts(b, eqns, "  ");
  }
  sr_buf_puts(b, "  return y\n");
}

static void run_text(SrInterp *I, const char *name, const char *text, size_t len) {
  SrSrc *src = sr_src_new(name, text, len, 1);
  int failed = sr_interp_run(I, src, 0);
  sr_src_unref(src);
  if (failed) fail_diags("the generated script failed", &I->py->diags);
}

/* What one run measures, as the child writes it on its stdout. */
enum { R_DEF, R_TRACE, R_TRACE_W, R_SCRIPT, R_SCRIPT_W, R_NEQN, R_NTOP, R_NSTMT, R_SIZE, R_N };

/* -1 EQNS: one run, in this (fresh) process.  The trace and the script
   run in processes of their own (-s), so that neither finds the memory
   the other has freed already mapped. */
static int run_one(size_t eqns, size_t loop, int script) {
  double r[R_N] = {0};
  SrInterp *I = sr_interp_new(&sr_linit);
  run_text(I, "bench-prelude", prelude, sizeof prelude - 1);
  SrBuf def = SR_BUF_INIT;
  gen_def(&def, eqns, loop);
  for (size_t i = 0; i < def.len; i++) r[R_NSTMT] += def.p[i] == '\n';
  r[R_NSTMT] -= 1; /* the def line */
  r[R_SIZE] = (double)def.len;
  if (script) {
    /* end to end: the def and the statement tracing it, run as
       `shardrepl script` runs them */
    sr_buf_puts(&def, "jx = jax.make_jaxpr(f)(x, w)\n");
    double w0 = wall_now(), c0 = cpu_now();
    run_text(I, "bench-script", def.p, def.len);
    r[R_SCRIPT] = cpu_now() - c0;
    r[R_SCRIPT_W] = wall_now() - w0;
  } else {
    /* the def (parsing it), then the tracing alone: jax.make_jaxpr(f)(x, w)
       through the interpreter's API */
    double c0 = cpu_now();
    run_text(I, "bench-def", def.p, def.len);
    r[R_DEF] = cpu_now() - c0;
    SrVal *f = sr_global_get(I, "f");
    SrVal *args[2] = {sr_global_get(I, "x"), sr_global_get(I, "w")};
    SrVal *mk = sr_call1(I, sr_lookup_qualname("jax.make_jaxpr"), f);
    if (!mk) fail_diags("jax.make_jaxpr(f) failed", &I->py->diags);
    SrArgs a = {2, args, 0, NULL, NULL, NULL};
    double w0 = wall_now();
    c0 = cpu_now();
    SrVal *j = sr_call(I, mk, &a);
    r[R_TRACE] = cpu_now() - c0;
    r[R_TRACE_W] = wall_now() - w0;
    if (!j || j->kind != SR_V_JAXPR) {
      fprintf(stderr, "bench_check: tracing failed: %s: %s\n", I->exc ? sr_exc_type(I->exc) : "?",
              I->exc ? sr_exc_msg(I->exc) : "no jaxpr");
      return 1;
    }
    r[R_NEQN] = (double)count_eqns(j->jx.jaxpr, NULL);
    r[R_NTOP] = j->jx.jaxpr->neqn;
    sr_unref(j);
    sr_unref(mk);
  }
  for (int i = 0; i < R_N; i++) printf("%.9g ", r[i]);
  printf("\n");
  sr_buf_free(&def);
  sr_interp_free(I);
  return 0;
}

/* Runs `self -1 EQNS [-l LOOP] [-s]` and adds its figures to r (the
   fields it measured); *peak_kb gets the child's peak RSS. */
static void spawn_run(const char *self, size_t eqns, size_t loop, int script, double *r, long *peak_kb) {
  char e[32], l[32];
  snprintf(e, sizeof e, "%zu", eqns);
  snprintf(l, sizeof l, "%zu", loop);
  int fds[2];
  if (pipe(fds) < 0) {
    perror("bench_check: pipe");
    exit(2);
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("bench_check: fork");
    exit(2);
  }
  if (pid == 0) {
    close(fds[0]);
    if (dup2(fds[1], 1) < 0) _exit(2);
    execl(self, self, "-1", e, "-l", l, script ? "-s" : (char *)NULL, (char *)NULL);
    perror("bench_check: exec");
    _exit(2);
  }
  close(fds[1]);
  FILE *f = fdopen(fds[0], "r");
  int n = 0;
  double v[R_N];
  while (f && n < R_N && fscanf(f, "%lf", &v[n]) == 1) n++;
  if (f) fclose(f);
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || n != R_N) {
    fprintf(stderr, "bench_check: the run tracing %zu equations failed\n", eqns);
    exit(1);
  }
  for (int i = 0; i < R_N; i++)
    if (v[i]) r[i] = v[i];
  if (ru.ru_maxrss > *peak_kb) *peak_kb = ru.ru_maxrss;
}

typedef struct TraceResult {
  double fig[R_N]; /* the counts, from the last run */
  Stat def, trace, trace_w, script, script_w;
  long peak_kb;    /* the tracing runs' peak RSS */
} TraceResult;

/* Each run in a fresh process, as a run of `shardrepl` is: in one process,
   a small trace's memory would come back from malloc already mapped, run
   after run, while a big one's is handed back to the kernel and faulted in
   anew.  The sizes take turns, round after round, so that a busy spell of
   a shared machine falls on all of them alike. */
static void bench_trace(const char *self, const size_t *sizes, int nsizes, size_t loop, int runs,
                        TraceResult *tr) {
  /* the figures of each size, field and round */
  double *t = sr_xcalloc((size_t)nsizes * R_N * (size_t)runs, sizeof *t);
#define T(s, k) (t + ((size_t)(s) * R_N + (k)) * (size_t)runs)
  for (int round = 0; round < runs; round++)
    for (int s = 0; s < nsizes; s++) {
      double r[R_N] = {0};
      long peak = 0;
      spawn_run(self, sizes[s], loop, 0, r, &tr[s].peak_kb);
      spawn_run(self, sizes[s], loop, 1, r, &peak);
      memcpy(tr[s].fig, r, sizeof r);
      for (int k = 0; k < R_N; k++) T(s, k)[round] = r[k];
    }
  for (int s = 0; s < nsizes; s++) {
    tr[s].def = stat_of(T(s, R_DEF), runs);
    tr[s].trace = stat_of(T(s, R_TRACE), runs);
    tr[s].trace_w = stat_of(T(s, R_TRACE_W), runs);
    tr[s].script = stat_of(T(s, R_SCRIPT), runs);
    tr[s].script_w = stat_of(T(s, R_SCRIPT_W), runs);
  }
#undef T
  free(t);
}

static void print_trace(int nsizes, size_t loop, int runs, const TraceResult *tr) {
  if (loop)
    printf("tracing: jax.make_jaxpr(f)(x, w) of a generated `def f` whose body is a Python\n"
           "loop over statements of about %zu equations;",
           loop);
  else
    printf("tracing: jax.make_jaxpr(f)(x, w) of a generated straight-line `def f`;");
  printf("\nbest and median of %d runs, each in a fresh process; one thread.  \"trace\": the\n"
         "call alone, f already defined; \"def\": lexing, parsing and running the def;\n"
         "\"script\": the def and the call run as a script.  CPU time (and the best\n"
         "wall-clock time); the tracing runs' peak RSS\n\n",
         runs);
  printf("  %7s %8s %8s %6s | %16s %7s | %5s %6s | %7s %7s | %6s\n", "stmts", "eqns", "top", "MB",
         "trace cpu (wall)", "median", "Meq/s", "ns/eqn", "def", "script", "RSS MB");
  for (int s = 0; s < nsizes; s++) {
    const TraceResult *r = &tr[s];
    double n = r->fig[R_NEQN];
    printf("  %7.0f %8.0f %8.0f %6.2f | %6.1fms (%5.1f) %5.1fms | %5.2f %6.0f | %5.1fms %5.1fms | %6.1f\n",
           r->fig[R_NSTMT], n, r->fig[R_NTOP], r->fig[R_SIZE] / 1e6, r->trace.best * 1e3, r->trace_w.best * 1e3,
           r->trace.median * 1e3, n / r->trace.best / 1e6, 1e9 * r->trace.best / n, r->def.best * 1e3,
           r->script.best * 1e3, r->peak_kb / 1024.0);
  }
  for (int s = 0; s < nsizes; s++) {
    const TraceResult *r = &tr[s];
    printf("  %.0f equations: end to end %.2f Meqn/s (CPU, best; median %.2f)", r->fig[R_NEQN],
           r->fig[R_NEQN] / r->script.best / 1e6, r->fig[R_NEQN] / r->script.median / 1e6);
    if (!loop) printf(", %.0f statements/ms", r->fig[R_NSTMT] / r->script.best / 1e3);
    printf("\n");
  }
  for (int s = 1; s < nsizes; s++)
    printf("  linearity: %.2fx the equations take %.2fx the CPU time to trace (best; median %.2fx),\n"
           "    %.2fx end to end (median %.2fx)\n",
           tr[s].fig[R_NEQN] / tr[0].fig[R_NEQN], tr[s].trace.best / tr[0].trace.best,
           tr[s].trace.median / tr[0].trace.median, tr[s].script.best / tr[0].script.best,
           tr[s].script.median / tr[0].script.median);
  printf("\n");
}

/* ---- main ---- */

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static void usage(void) {
  fputs("usage: bench_check [-n RUNS] [FILE...]\n"
        "       bench_check [-n RUNS] -t EQNS[,EQNS...] [-l LOOP]\n",
        stderr);
  exit(2);
}

int main(int argc, char **argv) {
  int runs = 5, opt, script = 0;
  size_t loop = 0, one = 0;
  size_t sizes[16];
  int nsizes = 0;
  while ((opt = getopt(argc, argv, "n:t:l:1:s")) != -1) {
    if (opt == 'n' && atoi(optarg) > 0) {
      runs = atoi(optarg);
    } else if (opt == 'l' && atoi(optarg) >= 0) {
      loop = (size_t)atoi(optarg);
    } else if (opt == '1' && atol(optarg) > 0) {
      one = (size_t)atol(optarg);
    } else if (opt == 's') {
      script = 1;
    } else if (opt == 't') {
      for (char *s = optarg; *s && nsizes < 16;) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0) usage();
        sizes[nsizes++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
      }
    } else {
      usage();
    }
  }
  sr_lax_init(); /* the type rules: bench_check_file checks before any interpreter exists */
  if (one) return run_one(one, loop, script);
  int nfiles = argc - optind;
  if (!nfiles && !nsizes) usage();

  if (nfiles) {
    CheckResult *cr = sr_xcalloc((size_t)nfiles, sizeof *cr);
    printf("type-checking: sr_check_jaxpr (what `shardrepl --check` runs) on the parsed program,\n"
           "best and median of %d runs; one thread; CPU time (and wall-clock).  Equations:\n"
           "each jaxpr once, nested ones included; \"visited\": a shared jaxpr counted at each\n"
           "use, as the checker visits it\n\n",
           runs);
    printf("  %-16s %7s %8s %8s | %8s %8s %8s | %6s %7s\n", "file", "MB", "eqns", "visited", "cpu best",
           "median", "wall", "Meq/s", "ns/eqn");
    for (int i = 0; i < nfiles; i++) {
      CheckResult *r = &cr[i];
      bench_check_file(argv[optind + i], runs, r);
      printf("  %-16s %7.2f %8zu %8zu | %6.1fms %6.1fms %6.1fms | %6.2f %7.0f\n", base_name(r->path),
             r->size / 1e6, r->neqn, r->visits, r->cpu.best * 1e3, r->cpu.median * 1e3, r->wall.best * 1e3,
             r->neqn / r->cpu.best / 1e6, 1e9 * r->cpu.best / r->neqn);
      fflush(stdout);
    }
    for (int i = 1; i < nfiles; i++)
      printf("  linearity: %.2fx the equations of %s take %.2fx the CPU time (best; median %.2fx)\n",
             (double)cr[i].neqn / (double)cr[0].neqn, base_name(cr[0].path), cr[i].cpu.best / cr[0].cpu.best,
             cr[i].cpu.median / cr[0].cpu.median);
    printf("\n");
    fflush(stdout);
    free(cr);
  }

  if (nsizes) {
    /* this program, to run again for each measurement */
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl > 0) self[sl] = 0;
    else snprintf(self, sizeof self, "%s", argv[0]);
    TraceResult *tr = sr_xcalloc((size_t)nsizes, sizeof *tr);
    bench_trace(self, sizes, nsizes, loop, runs, tr);
    print_trace(nsizes, loop, runs, tr);
    free(tr);
  }
  return 0;
}
