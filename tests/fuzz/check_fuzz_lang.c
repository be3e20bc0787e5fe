/* check_fuzz_lang.c: the statement language on hostile scripts, under
 * AddressSanitizer and UndefinedBehaviorSanitizer (`make check`).
 *
 * Built with -fsanitize=address,undefined -fno-sanitize-recover=all against
 * the whole library compiled so (see fuzz_lang.mk), it runs, each in a
 * child forked from this process (which has made the built-ins once):
 *  - the regression inputs (regress-lang/: each once crashed shardrepl),
 *    as their header says (# stdin: yes, # args: --devices N), else both as
 *    a script and as the REPL's stdin;
 *  - the golden scripts and the examples as they are, in both modes;
 *  - MUTANTS mutants of them from a fixed seed (lang_mutate.h says how
 *    they are made), alternately as scripts and at the REPL.
 * A child is interrupted as by Ctrl-C after the time limit (CPU time), and
 * killed (SIGABRT first, so that ASan prints where it was) after five
 * times that or when it holds more than the memory limit; allocations past the limit
 * fail (ASan's allocator_may_return_null).  Every input must end with an
 * exit status of 0, 1, 2 or 3: a sanitizer report, a signal, "out of memory",
 * a hang or a memory overrun is a failure.  A failure whose report matches
 * a line of lang-known.txt (a crash being fixed elsewhere) is counted and
 * shown, not failed.
 *
 *     check_fuzz_lang [-v] [-k] [-l] [-n MUTANTS] [-s SEED] [-i INDEX] [-j JOBS]
 *                     [-t SECONDS] [-m MB] [-o DIR] [-c CORPUS] [FILE...]
 *
 * -k goes on after a failure (each new signature is saved once in DIR,
 * -o, default .), -l checks each run for leaks too, -i runs only mutant
 * INDEX (with its -s), -c adds the jaxprs of a corpus folder to the pool.
 * With files, runs just those (to replay a failure).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sanitizer/common_interface_defs.h>)
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#define HAVE_SANITIZER_API 1
#endif
#endif

#include "fuzz_lang_one.h"
#include "lang_mutate.h"
#include "util/buf.h"

enum {
  EXIT_REPORT = 99, /* a sanitizer report (the sanitizers' exitcode below) */
  EXIT_LEAK = 98,   /* -l: LeakSanitizer found leaks */
  EXIT_INTERRUPTED = 16, /* added to the status of a run the time limit interrupted */
  MAX_JOBS = 16,
};

/* The sanitizers' settings (ASAN_OPTIONS and UBSAN_OPTIONS override them):
   a report exits with 99; an allocation past 2 GiB returns NULL (which
   shardrepl must turn into a MemoryError); an abort prints its stack, which
   says where a killed hang was.  Leaks are checked only with -l. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "exitcode=99:allocator_may_return_null=1:max_allocation_size_mb=2048:handle_abort=1:"
         "detect_leaks=1:leak_check_at_exit=0:detect_stack_use_after_return=0:malloc_context_size=16:"
         "quarantine_size_mb=16";
}
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "exitcode=99:print_stacktrace=1:halt_on_error=1"; }

static int verbose, keep_going, leaks, jobs = 2;
static long nmutants = 2000;
static double seconds = 1.5;
static long mem_mb = 2048;
static const char *outdir = ".";
static char scratch[4096];

static void format(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void format(char *buf, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, n, fmt, ap);
  va_end(ap);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- files ---- */

static int read_all(const char *path, SrBuf *b) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) sr_buf_putn(b, chunk, k);
  fclose(f);
  if (!b->p) sr_buf_putn(b, "", 0);
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The regular files of dir whose names end in suffix, sorted, so that the
   run is the same everywhere; fn gets each. */
static void each_file(const char *dir, const char *suffix, void (*fn)(const char *path, void *ctx), void *ctx) {
  DIR *d = opendir(dir);
  if (!d) return;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name), sl = strlen(suffix);
    if (e->d_name[0] == '.' || l < sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
    if (n == cap) names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n; i++) {
    char path[4096];
    struct stat st;
    format(path, sizeof path, "%s/%s", dir, names[i]);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) fn(path, ctx);
    free(names[i]);
  }
  free(names);
}

/* ---- the known crashes ---- */

typedef struct Known {
  regex_t re;
  char *line;
  long hits;
} Known;

static Known *known;
static size_t nknown;

static void read_known(const char *path) {
  SrBuf b = SR_BUF_INIT;
  if (read_all(path, &b) < 0) return;
  char *s = b.p;
  while (s && *s) {
    char *e = strchr(s, '\n');
    if (e) *e = 0;
    if (*s && *s != '#') {
      known = realloc(known, (nknown + 1) * sizeof *known);
      Known *k = &known[nknown];
      k->line = strdup(s);
      k->hits = 0;
      /* \n is a newline, in brackets too */
      for (char *c = s; (c = strstr(c, "\\n")) != NULL;) {
        *c = '\n';
        memmove(c + 1, c + 2, strlen(c + 2) + 1);
      }
      if (regcomp(&k->re, s, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "check_fuzz_lang: %s: a bad regular expression: %s\n", path, s);
        exit(2);
      }
      nknown++;
    }
    s = e ? e + 1 : NULL;
  }
  sr_buf_free(&b);
}

static Known *match_known(const char *text) {
  for (size_t i = 0; i < nknown; i++)
    if (regexec(&known[i].re, text, 0, NULL, 0) == 0) return &known[i];
  return NULL;
}

/* ---- running one input in a child ---- */

typedef struct Input {
  SrBuf text;
  char what[600];
  SrFuzzLangOpts o;
} Input;

typedef struct Slot {
  pid_t pid;
  double start;
  int aborted; /* 1: sent SIGABRT for time, 2: for memory */
  int nudged;  /* sent the time limit's Ctrl-C for wall time (a child that waits) */
  double killed_at;
  unsigned polls;
  Input in;
} Slot;

static Slot slots[MAX_JOBS];

/* tallies */
static double cpu_total;
static long nruns, nstatus[4], ninterrupted, nknown_hits, nfailures;
static char **sigs_seen;
static size_t nsigs;

static void child(Slot *s, int slot) {
  if (chdir(scratch) != 0) _exit(97);
  int dn = open("/dev/null", O_RDWR);
  if (dn >= 0) dup2(dn, 1);
  char path[4200];
  format(path, sizeof path, "%s/stderr.%d", scratch, slot);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) dup2(fd, 2);
  /* a run that prints without end gets EFBIG, not SIGXFSZ */
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit fl = {64 << 20, 64 << 20};
  setrlimit(RLIMIT_FSIZE, &fl);
  struct rlimit core = {0, 0};
  setrlimit(RLIMIT_CORE, &core);
#ifdef HAVE_SANITIZER_API
  format(path, sizeof path, "%s/report", scratch);
  __sanitizer_set_report_path(path);
#endif
  int st = sr_fuzz_lang_run((const uint8_t *)s->in.text.p, s->in.text.len, &s->in.o);
  if (sr_fuzz_lang_expired()) st += EXIT_INTERRUPTED;
  fflush(stdout);
  fflush(stderr);
#ifdef HAVE_SANITIZER_API
  if (leaks && __lsan_do_recoverable_leak_check()) _exit(EXIT_LEAK);
#endif
  _exit(st);
}

/* the text of a file, cut to at most max bytes from its end, "" if none */
static void read_tail(const char *path, SrBuf *b, size_t max) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  off_t end = lseek(fd, 0, SEEK_END);
  off_t from = end > (off_t)max ? end - (off_t)max : 0;
  lseek(fd, from, SEEK_SET);
  char chunk[65536];
  ssize_t k;
  while ((k = read(fd, chunk, sizeof chunk)) > 0) sr_buf_putn(b, chunk, (size_t)k);
  close(fd);
}

/* the sanitizer's report of the child, removed */
static void read_report(pid_t pid, SrBuf *b) {
  char path[4200];
  format(path, sizeof path, "%s/report.%d", scratch, (int)pid);
  read_tail(path, b, 1 << 20);
  unlink(path);
}

/* Is the frame's file [s, e) one of shardrepl's sources (a path that
   has one of these folders, from the build directory or absolute)? */
static int own_file(const char *s, const char *e) {
  static const char *const dirs[] = {"lib/py/", "lib/jax/", "lib/cmd/", "lib/core/", "lib/lax/", "lib/exec/", "lib/ad/", "lib/ir/", "lib/text/", "lib/check/",
                                     "lib/prims/", "lib/opt/", "lib/util/", "src/repl.c", "src/main.c"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    for (const char *f = strstr(s, dirs[i]); f && f < e; f = strstr(f + 1, dirs[i]))
      if (f[-1] == ' ' || f[-1] == '/') return 1;
  return 0;
}

/* "kind in f1 < f2 < f3": the report's kind and its first three frames in
   shardrepl's own code, which name a crash across inputs */
static void signature(const char *report, const char *kind, SrBuf *sig) {
  sr_buf_puts(sig, kind);
  const char *k = strstr(report, "ERROR: AddressSanitizer: ");
  if (k) {
    k += strlen("ERROR: AddressSanitizer: ");
    size_t l = strcspn(k, " \n");
    sr_buf_puts(sig, ": ");
    sr_buf_putn(sig, k, l);
  } else if ((k = strstr(report, "runtime error: ")) != NULL) {
    k += strlen("runtime error: ");
    size_t l = strcspn(k, "\n");
    /* the message without its numbers, which vary */
    sr_buf_puts(sig, ": ");
    for (size_t i = 0; i < l && i < 60; i++)
      if (!(k[i] >= '0' && k[i] <= '9') && k[i] != '\'') sr_buf_putc(sig, k[i]);
  }
  int frames = 0;
  const char *s = report;
  while (frames < 3 && (s = strstr(s, "    #")) != NULL) {
    s += 5;
    const char *e = strchr(s, '\n');
    if (!e) e = s + strlen(s);
    const char *in = strstr(s, " in ");
    if (!in || in > e) continue;
    in += 4;
    const char *sp = strchr(in, ' ');
    if (!sp || sp > e) sp = e;
    /* frames in shardrepl's sources, not the sanitizer's or libc's */
    if (sp >= e || !own_file(sp + 1, e)) continue;
    if (strncmp(in, "sr_oom", 6) == 0 || strncmp(in, "sr_x", 4) == 0) continue;
    sr_buf_puts(sig, frames ? " < " : " in ");
    sr_buf_putn(sig, in, (size_t)(sp - in));
    frames++;
  }
}

static void save_failure(const Input *in, const char *sig, const char *report) {
  char path[4200];
  unsigned h = 5381;
  for (const char *c = sig; *c; c++) h = h * 33 + (unsigned char)*c;
  format(path, sizeof path, "%s/lang-failure-%08x.jxr", outdir, h);
  FILE *f = fopen(path, "wb");
  if (!f) return;
  if (in->o.repl) fputs("# stdin: yes\n", f);
  fprintf(f, "# args: %s%s%.0d\n", in->o.keep_going ? "-k" : "", in->o.devices ? " --devices " : "",
          in->o.devices);
  fwrite(in->text.p ? in->text.p : "", 1, in->text.len, f);
  fclose(f);
  format(path, sizeof path, "%s/lang-failure-%08x.log", outdir, h);
  f = fopen(path, "w");
  if (f) {
    fprintf(f, "%s\n%s\n%s\n", sig, in->what, report);
    fclose(f);
  }
  fprintf(stderr, "check_fuzz_lang: input saved as %s/lang-failure-%08x.jxr\n", outdir, h);
}

/* What became of a child. */
static void finish(Slot *s, int status) {
  nruns++;
  const char *kind = NULL;
  SrBuf report = SR_BUF_INIT, tail = SR_BUF_INIT;
  char path[4200];
  format(path, sizeof path, "%s/stderr.%d", scratch, (int)(s - slots));
  if (s->aborted) {
    /* killed by us: ASan's report of the SIGABRT says where it was */
    kind = s->aborted == 1 ? "hang" : "memory limit";
  } else if (WIFEXITED(status)) {
    int st = WEXITSTATUS(status);
    if (st >= EXIT_INTERRUPTED && st < EXIT_INTERRUPTED + 4) {
      ninterrupted++;
      st -= EXIT_INTERRUPTED;
    }
    if (st >= 0 && st <= 3) nstatus[st]++;
    else if (st == EXIT_REPORT) kind = "sanitizer";
    else if (st == EXIT_LEAK) kind = "leak";
    else kind = "exit status";
    if (kind && st != EXIT_REPORT && st != EXIT_LEAK) {
      char k[64];
      format(k, sizeof k, "exit status %d", st);
      sr_buf_puts(&report, k);
    }
  } else if (WIFSIGNALED(status)) {
    kind = "signal";
  }
  if (kind && !s->aborted) {
    read_tail(path, &tail, 4096);
    if (strstr(sr_buf_str(&tail), "shardrepl: out of memory")) kind = "out of memory";
  }
  if (kind) {
    read_report(s->pid, &report);
    if (!tail.len) read_tail(path, &tail, 4096);
    if (!strstr(sr_buf_str(&report), "==ERROR") && !strstr(sr_buf_str(&report), "runtime error")) {
      /* UBSan writes to stderr: its report is in the end of it */
      SrBuf t = SR_BUF_INIT;
      read_tail(path, &t, 65536);
      const char *r = sr_buf_str(&t), *at = strstr(r, "runtime error: ");
      if (!at) at = strstr(r, "ERROR: AddressSanitizer");
      if (at) {
        while (at > r && at[-1] != '\n') at--;
        sr_buf_puts(&report, at);
      }
      sr_buf_free(&t);
    }
    if (WIFSIGNALED(status)) sr_buf_printf(&report, "\n(killed by signal %d)", WTERMSIG(status));
    SrBuf sig = SR_BUF_INIT;
    signature(sr_buf_str(&report), kind, &sig);
    /* the known list sees the signature, the report and the input */
    SrBuf all = SR_BUF_INIT;
    sr_buf_printf(&all, "%s\n%s\n%s\n-- input --\n", sr_buf_str(&sig), sr_buf_str(&report), sr_buf_str(&tail));
    sr_buf_putn(&all, s->in.text.p ? s->in.text.p : "", s->in.text.len);
    for (size_t i = 0; i < all.len; i++)
      if (!all.p[i]) all.p[i] = ' ';
    Known *k = match_known(sr_buf_str(&all));
    if (k) {
      nknown_hits++;
      if (!k->hits++ || verbose)
        fprintf(stderr, "check_fuzz_lang: known: %s (%s): %s\n", sr_buf_str(&sig), s->in.what, k->line);
    } else {
      int seen = 0;
      for (size_t i = 0; i < nsigs; i++)
        if (strcmp(sigs_seen[i], sr_buf_str(&sig)) == 0) seen = 1;
      nfailures++;
      if (!seen) {
        sigs_seen = realloc(sigs_seen, (nsigs + 1) * sizeof *sigs_seen);
        sigs_seen[nsigs++] = strdup(sr_buf_str(&sig));
        fprintf(stderr, "check_fuzz_lang: FAIL: %s\n  input: %s (%s%s)\n", sr_buf_str(&sig), s->in.what,
                s->in.o.repl ? "REPL" : "script", s->in.o.keep_going ? ", -k" : "");
        /* the report, shortened */
        const char *r = sr_buf_str(&report);
        int lines = 0;
        for (const char *c = r; *c && lines < 40; c++) {
          fputc(*c, stderr);
          if (*c == '\n') lines++;
        }
        fputs("\n  its stderr ends:\n", stderr);
        const char *t = sr_buf_str(&tail);
        fputs(strlen(t) > 600 ? t + strlen(t) - 600 : t, stderr);
        fputc('\n', stderr);
        save_failure(&s->in, sr_buf_str(&sig), r);
      } else if (verbose) {
        fprintf(stderr, "check_fuzz_lang: again: %s (%s)\n", sr_buf_str(&sig), s->in.what);
      }
    }
    sr_buf_free(&all);
    sr_buf_free(&sig);
  }
  sr_buf_free(&report);
  sr_buf_free(&tail);
  s->pid = 0;
}

/* the CPU seconds the child has used */
static double cpu_s(pid_t pid) {
  char path[64], buf[1024];
  format(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  /* the fields after the command's name, which is in parentheses */
  const char *p = strrchr(buf, ')');
  unsigned long ut = 0, st = 0;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return 0;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long rss_mb(pid_t pid) {
  char path[64];
  format(path, sizeof path, "/proc/%d/statm", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  long size = 0, res = 0;
  if (fscanf(f, "%ld %ld", &size, &res) != 2) res = 0;
  fclose(f);
  return res * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

/* Waits for some child to end (or for every one, with all); kills those
   past their limits. */
static void reap(int all) {
  for (;;) {
    int busy = 0;
    for (int i = 0; i < jobs; i++) {
      Slot *s = &slots[i];
      if (!s->pid) continue;
      int status;
      struct rusage ru;
      pid_t r = wait4(s->pid, &status, WNOHANG, &ru);
      if (r == s->pid) {
        double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
        cpu_total += cpu;
        if (verbose && cpu > 0.2) fprintf(stderr, "check_fuzz_lang: slow: %.1f s of CPU: %s\n", cpu, s->in.what);
        finish(s, status);
        if (!all) return;
        continue;
      }
      busy++;
      /* limits in CPU time, which a loaded machine does not stretch, and
         a generous one in wall time for a child that waits */
      double t = now() - s->start;
      if (!s->aborted && (t > 20 * seconds + 60 || ((s->polls & 15) == 0 && cpu_s(s->pid) > 5 * seconds + 2))) {
        s->aborted = 1;
        s->killed_at = t;
        kill(s->pid, SIGABRT);
      } else if (!s->aborted && !s->nudged && t > 10 * seconds + 30) {
        /* a child that sleeps or waits spends no CPU time, so its CPU-time
           limit never comes: give it the same Ctrl-C on wall time */
        s->nudged = 1;
        kill(s->pid, SIGVTALRM);
      } else if (!s->aborted && (s->polls & 3) == 0 && rss_mb(s->pid) > mem_mb) {
        s->aborted = 2;
        s->killed_at = t;
        kill(s->pid, SIGABRT);
      } else if (s->aborted && t > s->killed_at + 20) {
        kill(s->pid, SIGKILL);
      }
      s->polls++;
    }
    if (!busy) return;
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

static Slot *free_slot(void) {
  for (;;) {
    for (int i = 0; i < jobs; i++)
      if (!slots[i].pid) return &slots[i];
    reap(0);
  }
}

/* Runs the input (copied) in a child; stops the program at a new failure
   unless -k. */
static void run(const char *text, size_t n, const char *what, const SrFuzzLangOpts *o) {
  Slot *s = free_slot();
  if (nfailures && !keep_going) return;
  sr_buf_reset(&s->in.text);
  sr_buf_putn(&s->in.text, text, n);
  format(s->in.what, sizeof s->in.what, "%s", what);
  s->in.o = *o;
  s->aborted = 0;
  s->nudged = 0;
  s->polls = 0;
  s->start = now();
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    perror("check_fuzz_lang: fork");
    exit(2);
  }
  if (pid == 0) child(s, (int)(s - slots));
  s->pid = pid;
  if (jobs == 1) reap(1);
}

/* A file as its header says, else both as a script and at the REPL. */
static void run_file(const char *path, void *ctx) {
  (void)ctx;
  SrBuf b = SR_BUF_INIT;
  if (read_all(path, &b) < 0) {
    fprintf(stderr, "check_fuzz_lang: cannot read %s\n", path);
    exit(2);
  }
  SrFuzzLangOpts o = {0, 0, 0, seconds, 0};
  int repl = 0, both = 1;
  const char *s = b.p;
  while (*s == '#') {
    if (strncmp(s, "# stdin: yes", 12) == 0) repl = 1, both = 0;
    if (strncmp(s, "# args:", 7) == 0) {
      const char *e = strchr(s, '\n');
      const char *d = strstr(s, "--devices ");
      if (d && (!e || d < e)) o.devices = atoi(d + 10);
      const char *k = strstr(s, "-k");
      if (k && (!e || k < e)) o.keep_going = 1;
      both = 0;
    }
    s = strchr(s, '\n');
    if (!s) break;
    s++;
  }
  char what[4200];
  for (int m = 0; m < 2; m++) {
    if (!both && m != repl) continue;
    o.repl = m;
    format(what, sizeof what, "%s (%s)", path, m ? "REPL" : "script");
    run(b.p, b.len, what, &o);
  }
  sr_buf_free(&b);
}

static void add_script(const char *path, void *ctx) {
  SrBuf b = SR_BUF_INIT;
  if (read_all(path, &b) == 0) sr_lang_pool_script(ctx, path, b.p, b.len);
  sr_buf_free(&b);
}

static void add_jaxpr(const char *path, void *ctx) {
  SrBuf b = SR_BUF_INIT;
  if (read_all(path, &b) == 0) sr_lang_pool_jaxpr(ctx, path, b.p, b.len);
  sr_buf_free(&b);
}

/* splitmix64: mutant i's own random state, so that -i replays one */
static uint64_t mutant_rng(uint64_t seed, long i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + (uint64_t)i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z ? z : 1;
}

static int rm_entry(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char p[4600];
    format(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_entry(p);
    else unlink(p);
  }
  closedir(d);
  return rmdir(dir);
}

static void usage(void) {
  fputs("usage: check_fuzz_lang [-v] [-k] [-l] [-n MUTANTS] [-s SEED] [-i INDEX] [-j JOBS] [-t SECONDS]\n"
        "                       [-m MB] [-o DIR] [-c CORPUS] [FILE...]\n",
        stderr);
  exit(2);
}

int main(int argc, char **argv) {
  /* one BLAS thread: a forked child has only the thread that forked */
  if (!getenv("OPENBLAS_NUM_THREADS")) {
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    execv("/proc/self/exe", argv);
  }
  uint64_t seed = 1;
  long only = -1;
  const char *corpus = NULL;
  int opt;
  while ((opt = getopt(argc, argv, "vkln:s:i:j:t:m:o:c:")) != -1) {
    switch (opt) {
    case 'v': verbose = 1; break;
    case 'k': keep_going = 1; break;
    case 'l': leaks = 1; break;
    case 'n': nmutants = atol(optarg); break;
    case 's': seed = strtoull(optarg, NULL, 0); break;
    case 'i': only = atol(optarg); break;
    case 'j': jobs = atoi(optarg); break;
    case 't': seconds = atof(optarg); break;
    case 'm': mem_mb = atol(optarg); break;
    case 'o': outdir = optarg; break;
    case 'c': corpus = optarg; break;
    default: usage();
    }
  }
  if (jobs < 1 || jobs > MAX_JOBS || seconds <= 0 || nmutants < 0 || mem_mb < 64) usage();
  mkdir(outdir, 0755);
  const char *tmp = getenv("TMPDIR");
  format(scratch, sizeof scratch, "%s/check_fuzz_lang.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(scratch)) {
    perror("check_fuzz_lang: mkdtemp");
    return 2;
  }
  if (sr_fuzz_lang_init() < 0) {
    perror("check_fuzz_lang: timer_create");
    return 2;
  }
  const char *top = getenv("top_srcdir");
  if (!top) top = ".";
  char dir[4096];
  format(dir, sizeof dir, "%s/tests/fuzz/lang-known.txt", top);
  read_known(dir);
  double t0 = now();

  if (optind < argc) {
    for (int i = optind; i < argc; i++) {
      char abs[4096];
      format(abs, sizeof abs, "%s", argv[i]);
      if (argv[i][0] != '/' && realpath(argv[i], abs) == NULL) format(abs, sizeof abs, "%s", argv[i]);
      run_file(abs, NULL);
    }
  } else {
    /* 1. the regression inputs */
    format(dir, sizeof dir, "%s/tests/fuzz/regress-lang", top);
    if (only < 0) each_file(dir, ".jxr", run_file, NULL);
    /* 2. the seeds, as they are and mutated */
    SrLangPool *pool = sr_lang_pool_new();
    format(dir, sizeof dir, "%s/tests/golden", top);
    each_file(dir, ".jxr", add_script, pool);
    format(dir, sizeof dir, "%s/examples", top);
    each_file(dir, ".jxr", add_script, pool);
    format(dir, sizeof dir, "%s/examples/seeds", top);
    each_file(dir, ".jxr", add_script, pool);
    format(dir, sizeof dir, "%s/tests/fuzz/seeds", top);
    each_file(dir, ".jaxpr", add_jaxpr, pool);
    if (corpus) {
      format(dir, sizeof dir, "%s/jaxprs", corpus);
      each_file(dir, ".jaxpr", add_jaxpr, pool);
    }
    if (!sr_lang_pool_nscripts(pool)) {
      fprintf(stderr, "check_fuzz_lang: no golden scripts under %s (set top_srcdir)\n", top);
      return 2;
    }
    if (only < 0) {
      format(dir, sizeof dir, "%s/tests/golden", top);
      each_file(dir, ".jxr", run_file, NULL);
    }
    SrLangMutant m = {SR_BUF_INIT, 0, 0, ""};
    for (long i = only < 0 ? 0 : only; i < (only < 0 ? nmutants : only + 1); i++) {
      if (nfailures && !keep_going) break;
      uint64_t r = mutant_rng(seed, i);
      sr_lang_generate(pool, &r, &m);
      SrFuzzLangOpts o = {m.repl ^ (int)(i & 1), 1, m.devices, seconds, 0};
      char what[700];
      format(what, sizeof what, "-s %llu -i %ld: %s", (unsigned long long)seed, i, m.what);
      run(m.text.p ? m.text.p : "", m.text.len, what, &o);
      if (verbose && i % 500 == 499)
        fprintf(stderr, "check_fuzz_lang: %ld mutants, %.0f s\n", i + 1, now() - t0);
    }
    sr_buf_free(&m.text);
    sr_lang_pool_free(pool);
  }
  reap(1);
  rm_entry(scratch);
  printf("check_fuzz_lang: %ld runs in %.0f s (%.0f s of CPU): %ld ok, %ld with a runtime error, %ld with a parse or type "
         "error, %ld with a usage error (%ld interrupted by the time limit); %ld known crashes, %ld failures\n",
         nruns, now() - t0, cpu_total, nstatus[0], nstatus[1], nstatus[3], nstatus[2], ninterrupted, nknown_hits, nfailures);
  for (size_t i = 0; i < nknown; i++)
    if (known[i].hits) printf("  known, %ld times: %s\n", known[i].hits, known[i].line);
  for (size_t i = 0; i < nsigs; i++) printf("  new: %s\n", sigs_seen[i]);
  return nfailures ? 1 : 0;
}
