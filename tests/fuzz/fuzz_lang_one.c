/* fuzz_lang_one.c: one input through the statement language, as
 * src/main.c runs a script and src/repl.c reads stdin. */
#include "fuzz_lang_one.h"

#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cmd/linit.h"
#include "py/interp.h"
#include "core/jaxstate.h"
#include "repl.h"
#include "util/diag.h"

static timer_t timer;
static pid_t timer_pid; /* the process that made it: a forked child has no timers */
static SrInterp *volatile running;
static volatile sig_atomic_t expired;

static int have_timer(void);

/* The time limit: Ctrl-C, as often as it takes. */
static void on_timer(int sig) {
  (void)sig;
  SrInterp *I = running;
  if (I) {
    I->interrupted = 1;
    expired = 1;
  }
}

int sr_fuzz_lang_init(void) {
  /* SIGVTALRM: libFuzzer's -timeout has SIGALRM */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_timer;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGVTALRM, &sa, NULL);
  /* the registry of built-ins and the command table are made once */
  sr_interp_free(sr_interp_new(&sr_linit));
  return have_timer() ? 0 : -1;
}

int sr_fuzz_lang_expired(void) { return expired; }

/* this process's timer, made on first use */
static int have_timer(void) {
  if (timer_pid == getpid()) return 1;
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGVTALRM;
  /* CPU time: a loaded machine makes no run look endless */
  if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &timer) != 0) return 0;
  timer_pid = getpid();
  return 1;
}

static void arm(double seconds) {
  if (seconds <= 0 || !have_timer()) return;
  struct itimerspec t;
  memset(&t, 0, sizeof t);
  t.it_value.tv_sec = (time_t)seconds;
  t.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
  t.it_interval.tv_nsec = 10 * 1000 * 1000;
  timer_settime(timer, 0, &t, NULL);
}

static void disarm(void) {
  if (timer_pid != getpid()) return;
  struct itimerspec t;
  memset(&t, 0, sizeof t);
  timer_settime(timer, 0, &t, NULL);
}

/* stdin now reads the bytes, from their start */
static int set_stdin(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz-stdin", 0);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < size) {
    ssize_t k = write(fd, data + done, size - done);
    if (k <= 0) {
      close(fd);
      return -1;
    }
    done += (size_t)k;
  }
  lseek(fd, 0, SEEK_SET);
  __fpurge(stdin);
  clearerr(stdin);
  int rc = dup2(fd, 0) < 0 ? -1 : 0;
  close(fd);
  return rc;
}

/* main.c's exit status of an error kind */
static int exit_for(int kind) {
  switch (kind) {
  case 0: return 0;
  case SR_E_PARSE:
  case SR_E_TYPE: return 3;
  case SR_E_USAGE: return 2;
  default: return 1;
  }
}

int sr_fuzz_lang_run(const uint8_t *data, size_t size, const SrFuzzLangOpts *o) {
  static FILE *devnull;
  if (!o->show && !devnull) devnull = fopen("/dev/null", "w");
  SrInterp *I = sr_interp_new(&sr_linit);
  if (!o->show && devnull) I->py->out = devnull;
  I->py->keep_going = o->repl || o->keep_going;
  I->py->on_error = sr_repl_report;
  if (o->devices) I->jax->num_devices = o->devices;
  expired = 0;
  running = I;
  arm(o->seconds);
  int status = 0;
  if (o->repl) {
    if (set_stdin(data, size) == 0 && sr_repl(I)) status = 1;
  } else {
    SrSrc *src = sr_src_new("<fuzz>", (const char *)data, size, 1);
    sr_interp_run(I, src, o->keep_going);
    sr_src_unref(src);
    sr_repl_report(I);
  }
  disarm();
  running = NULL;
  if (!status) status = exit_for(I->py->first_error);
  if (I->py->out) fflush(I->py->out);
  fflush(stdout);
  sr_interp_free(I);
  return status;
}
