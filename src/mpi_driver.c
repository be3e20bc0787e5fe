/* mpi_driver.c: shardrepl as an MPI job (see mpi_driver.h).
 *
 * The messages rank 0 sends (sr_mpi_bcast_msg) are text:
 *   "C <devices> <keep_going>"          once, the configuration
 *   "R <flags> <line0> <name>\n<text>"  run a source (flags: keep_going,
 *                                       + 2 for a Python script's semantics,
 *                                       + 4 * the echo mode, I->py->echo)
 *   "E <status>"                        the session is over
 * The controller of --ranks holds devices like any rank: `--ranks P` is
 * the same job as `mpirun -np P`, with the same devices on the same ranks.
 */
#include "config.h"

#include "mpi_driver.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "exec/comm_mpi.h"
#include "text/color.h"
#include "exec/exec.h"
#include "exec/kern.h"
#include "exec/pool.h"
#include "cmd/commands.h"
#include "core/jaxstate.h"
#include "core/trace.h"
#include "util/buf.h"
#include "util/mem.h"

static struct {
  SrMpiMode mode; /* 0: no MPI */
  int ranks;      /* --ranks P */
  int started;    /* the job is running and configured */
  int tty;        /* rank 0 had a terminal: restore it on a fatal exit */
  struct termios term;
  SrInterp *I;
} drv;

/* Interrupts: the sources rank 0 has sent (every rank counts them), and the
   one a worker's SIGINT is for; the workers rank 0 passes SIGINT on to. */
static volatile sig_atomic_t src_seq, intr_seq, running;
static pid_t workers[256];
static volatile sig_atomic_t nworkers;

/* ---- options ---- */

static void usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "shardrepl: %s%s%s\n", msg, arg ? arg : "", arg ? "'" : "");
  exit(2);
}

void sr_mpi_driver_begin(int *argc, char **argv) {
  int out = 1, worker = 0;
  for (int i = 1; i < *argc; i++) {
    const char *a = argv[i], *val = NULL;
    if (strcmp(a, "--") == 0) {
      while (i < *argc) argv[out++] = argv[i++];
      break;
    }
    if (strcmp(a, "--worker") == 0) {
      worker = 1;
      continue;
    }
    if (strcmp(a, "--ranks") == 0) {
      if (i + 1 >= *argc) usage_error("--ranks needs a number of ranks", NULL);
      val = argv[++i];
    } else if (strncmp(a, "--ranks=", 8) == 0) {
      val = a + 8;
    }
    if (val) {
      char *end;
      long n = strtol(val, &end, 10);
      if (*end || n < 1 || n > 256) usage_error("--ranks needs a number from 1 to 256, got '", val);
      drv.ranks = (int)n;
      continue;
    }
    argv[out++] = argv[i];
  }
  argv[out] = NULL;
  *argc = out;
  int launched = sr_mpi_under_mpirun();
  if (worker) {
    drv.mode = SR_MPI_WORKER;
  } else if (drv.ranks) {
    if (launched) usage_error("--ranks starts ranks itself; under mpirun use mpirun's -np", NULL);
    drv.mode = SR_MPI_CONTROLLER;
  } else if (launched) {
    drv.mode = SR_MPI_LAUNCHED;
    sr_color_under_mpirun();
    /* only rank 0 prints: the others' output (--help, say) goes nowhere */
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (r && atoi(r) != 0) {
      FILE *null = freopen("/dev/null", "w", stdout);
      (void)null;
    }
  }
}

int sr_mpi_driver_ranks(void) { return drv.ranks; }

/* ---- the ranks other than 0 ---- */

static void report_silently(SrInterp *I) { sr_diags_clear(&I->py->diags); }

/* A worker's SIGINT: from rank 0, it names the source it was sent for (an
   interrupt of a source that has ended here is void: see follow). */
static void on_sigint(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  intr_seq = si && si->si_code == SI_QUEUE ? si->si_value.sival_int : src_seq;
  if (drv.I) drv.I->interrupted = 1;
}

void sr_mpi_driver_sigint(void) {
  if (!running) return;
  union sigval v;
  v.sival_int = src_seq;
  for (int i = 0; i < nworkers; i++) sigqueue(workers[i], SIGINT, v);
}

static int agree_interrupt(SrInterp *I) { return sr_comm_mpi_interrupt(((SrExec *)I->exec)->comm); }

/* Runs what rank 0 sends until it ends the session; returns its status. */
static int follow(SrInterp *I) {
  for (;;) {
    size_t len = 0;
    char *msg = sr_mpi_bcast_msg(NULL, &len);
    if (msg[0] == 'E') {
      int status = atoi(msg + 1);
      free(msg);
      return status;
    }
    if (msg[0] != 'R') {
      free(msg);
      continue;
    }
    int kg = 0;
    unsigned line0 = 1;
    int skip = 0;
    if (sscanf(msg, "R %d %u %n", &kg, &line0, &skip) < 2 || !skip) {
      free(msg);
      continue;
    }
    char *name = msg + skip, *nl = strchr(name, '\n');
    if (!nl) {
      free(msg);
      continue;
    }
    *nl = 0;
    char *text = nl + 1;
    SrSrc *src = sr_src_new(name, text, len - (size_t)(text - msg), line0);
    src_seq++;
    /* a SIGINT for an earlier source came late */
    if (intr_seq < src_seq) I->interrupted = 0;
    sr_interrupt_restart(I);
    I->py->python = kg >> 1 & 1;
    /* rank 0's echo: an echo prints (on rank 0) a value every rank
       must help fetch */
    I->py->echo = kg >> 2 & 3;
    sr_interp_run(I, src, kg & 1);
    sr_diags_clear(&I->py->diags);
    sr_src_unref(src);
    free(msg);
  }
}

/* ---- :ranks ---- */

/* Appends the members of a set of small numbers (in[i] != 0) as ranges in
   increasing order: "0-3, 6". */
static void put_ranges(SrBuf *b, const unsigned char *in, int n) {
  const char *sep = "";
  for (int i = 0; i < n; i++) {
    if (!in[i]) continue;
    int j = i;
    while (j + 1 < n && in[j + 1]) j++;
    sr_buf_printf(b, j > i ? "%s%d-%d" : "%s%d", sep, i, j);
    sep = ", ";
    i = j;
  }
}

/* What :ranks describes, given its argument: a Mesh, a NamedSharding or a
   (concrete) array, else with no argument the mesh jax.set_mesh set.  The
   mesh is NULL for none; an array on one device gives its mesh, which may
   have no axes.  Returns 1 for an array on one device, 0 for a mesh, -1 on
   an error (in I->py->diags). */
static int ranks_mesh(SrInterp *I, const char *arg, SrSrc *src, size_t off, const SrMesh **out) {
  *out = NULL;
  if (!*arg) {
    if (I->jax->mesh && !I->jax->mesh->abstract) *out = I->jax->mesh;
    return 0;
  }
  SrVal *v = sr_command_eval_arg(I, arg, src, off);
  if (!v) return -1;
  const SrArrayObj *a = sr_array_of(v);
  const SrMesh *m = NULL;
  int ok = 1;
  if (v->kind == SR_V_MESH) m = v->mesh;
  else if (v->kind == SR_V_SHARDING) m = v->sh.mesh;
  else if (a && a->kind == SR_AV_CONCRETE) m = a->data->mesh ? a->data->mesh : sr_mesh_empty();
  else ok = 0;
  if (!ok || m->abstract || m->unsized) {
    sr_error(&I->py->diags, SR_E_USAGE, src, off, ":ranks wants a Mesh, a NamedSharding or an array, got %s",
             ok ? "an AbstractMesh" : a ? "a tracer" : sr_val_kind_name(v));
    sr_unref(v);
    return -1;
  }
  sr_unref(v);
  *out = m;
  return a && !m->n;
}

static int cmd_ranks(SrInterp *I, const char *arg, SrSrc *src, size_t off) {
  const SrMesh *m;
  int one_device = ranks_mesh(I, arg, src, off, &m);
  if (one_device < 0) return -1;
  SrBuf b = SR_BUF_INIT;
  /* the count the devices will have: asking does not fix it */
  int n = sr_mpi_size(), ndev = I->jax->num_devices;
  if (!sr_mpi_active()) {
    sr_buf_printf(&b, "one process (no MPI), pid %ld: device%s 0", (long)getpid(), ndev == 1 ? "" : "s");
    if (ndev > 1) sr_buf_printf(&b, "-%d", ndev - 1);
    sr_buf_putc(&b, '\n');
  } else {
    sr_buf_printf(&b, "%d rank%s (%s), %d device%s:\n", n, n == 1 ? "" : "s",
                  drv.mode == SR_MPI_LAUNCHED ? "mpirun" : "--ranks", ndev, ndev == 1 ? "" : "s");
    for (int r = 0; r < n; r++) {
      long pid;
      const char *host;
      sr_mpi_peer(r, &pid, &host);
      int lo = (int)((long)r * ndev / n), hi = (int)((long)(r + 1) * ndev / n);
      sr_buf_printf(&b, "  rank %d: pid %ld on %s, device%s %d", r, pid, host, hi - lo == 1 ? "" : "s", lo);
      if (hi - lo > 1) sr_buf_printf(&b, "-%d", hi - 1);
      sr_buf_printf(&b, "%s\n", r == 0 ? " (reads input and prints)" : "");
    }
  }
  sr_buf_puts(&b, "BLAS: ");
  sr_kern_blas_describe(&b);
  sr_buf_puts(&b, sr_mpi_active() ? " (rank 0)\n" : "\n");
  sr_buf_puts(&b, "threads: ");
  sr_pool_describe(&b, 1);
  sr_buf_puts(&b, sr_mpi_active() ? " (rank 0)\n" : "\n");
  if (m) {
    /* which devices of the job the mesh takes, and which ranks hold them */
    int size = sr_mesh_ndev(m), nr = 0;
    unsigned char *dev = sr_xcalloc((size_t)ndev, 1), *rank = sr_xcalloc((size_t)n, 1);
    for (int p = 0; p < size; p++) {
      int d = sr_mesh_device(m, p);
      if (d < 0 || d >= ndev) continue;
      dev[d] = 1;
      int r = (int)((long)d * n / ndev);
      nr += !rank[r];
      rank[r] = 1;
    }
    if (one_device) {
      sr_buf_puts(&b, "the array");
    } else {
      sr_buf_puts(&b, "the mesh ");
      sr_mesh_str(&b, m);
    }
    sr_buf_printf(&b, " has device%s ", size == 1 ? "" : "s");
    put_ranges(&b, dev, ndev);
    if (!sr_mpi_active()) {
      sr_buf_puts(&b, size == 1 ? ", in this process\n" : ", all in this process\n");
    } else if (nr == 1) {
      sr_buf_puts(&b, size == 1 ? ", on rank " : ", all on rank ");
      put_ranges(&b, rank, n);
      sr_buf_puts(&b, ": no data crosses processes\n");
    } else {
      sr_buf_printf(&b, ", on %d of the %d ranks (", nr, n);
      put_ranges(&b, rank, n);
      sr_buf_puts(&b, "): data moved between them goes through MPI\n");
    }
    free(dev);
    free(rank);
  }
  sr_write(I, b.p, b.len);
  sr_buf_free(&b);
  return 0;
}

/* ---- attaching ---- */

/* OpenBLAS's thread count is read when the library loads, before main:
   when the user set none, ranks that share a host get one thread each (it
   is a weak reference, so another BLAS simply goes without). */
void openblas_set_num_threads(int n) __attribute__((weak));

static void blas_threads(int blas_env_set) {
  if (blas_env_set || !openblas_set_num_threads) return;
  int here = 0;
  long pid;
  const char *me, *host;
  sr_mpi_peer(sr_mpi_rank(), &pid, &me);
  for (int r = 0; r < sr_mpi_size(); r++) {
    sr_mpi_peer(r, &pid, &host);
    here += strcmp(host, me) == 0;
  }
  if (here > 1) openblas_set_num_threads(1);
}

static int stmt_end(SrInterp *I, int failed) {
  /* the backend attach installed (sr_exec() would fix the device count) */
  int r = sr_comm_mpi_stmt_end(((SrExec *)I->exec)->comm, I->py->run_depth, failed, &I->py->diags);
  /* every rank is here: interrupt points count from here */
  sr_interrupt_restart(I);
  return r;
}

static void restore_terminal(void) {
  if (drv.tty) tcsetattr(0, TCSANOW, &drv.term);
}

/* input() under MPI: rank 0 reads the line, and every rank gets it, as
   every rank runs the same statement ("L" and the line, or "E": the end
   of the input, or rank 0's error, which is the one reported) */
static int share_line(SrInterp *I, const char *prompt, SrBuf *line,
                      int (*read)(SrInterp *I, const char *prompt, SrBuf *line)) {
  SrBuf b = SR_BUF_INIT;
  if (sr_mpi_rank() == 0) {
    int rc = read(I, prompt, line);
    sr_buf_puts(&b, rc == 0 ? "L" : "E");
    if (rc == 0) sr_buf_putn(&b, line->p ? line->p : "", line->len);
  }
  size_t len = b.len;
  char *msg = sr_mpi_bcast_msg(b.p ? b.p : "", &len);
  sr_buf_free(&b);
  int ok = len > 0 && msg[0] == 'L';
  if (ok && sr_mpi_rank() != 0) sr_buf_putn(line, msg + 1, len - 1);
  free(msg);
  return ok ? 0 : -1;
}

int sr_mpi_driver_attach(SrInterp *I, int devices, int *status) {
  static int once;
  if (!once) {
    once = 1;
    SrCommand c = {"ranks", NULL, "[MESH]",
                   "show the MPI ranks: process, host and devices of each, and which hold MESH's devices", cmd_ranks};
    sr_command_add(&c);
  }
  if (!drv.mode) return 0;
  SrDiags d = SR_DIAGS_INIT;
  int blas_env_set = getenv("OPENBLAS_NUM_THREADS") != NULL;
  if (sr_mpi_start(drv.mode, drv.ranks ? drv.ranks : 1, NULL, &d) < 0) {
    fprintf(stderr, "shardrepl: cannot start the MPI job: %s\n", d.first ? d.first->msg : "MPI failed");
    sr_diags_clear(&d);
    drv.mode = 0;
    *status = 2;
    return 1;
  }
  int rank = sr_mpi_rank(), n = sr_mpi_size();
  blas_threads(blas_env_set);
  drv.I = I;
  if (rank == 0 && isatty(0) && tcgetattr(0, &drv.term) == 0) drv.tty = 1;
  sr_mpi_set_fatal_hook(restore_terminal);

  /* the configuration is rank 0's: workers have no options of their own */
  SrBuf cfg = SR_BUF_INIT;
  if (rank == 0) {
    /* one process's 8 devices where they split evenly over the ranks, else
       the smallest multiple of the ranks that is at least 8: every mesh one
       process can make can be made, with as many devices on each rank */
    int ndev = devices ? devices : (SR_DEFAULT_DEVICES + n - 1) / n * n;
    if (ndev % n != 0 || ndev < n) {
      fprintf(stderr, "shardrepl: --devices %d is not a multiple of the %d ranks\n", ndev, n);
      ndev = 0;
    }
    sr_buf_printf(&cfg, "C %d %d", ndev, I->py->keep_going);
  }
  size_t len = cfg.len;
  char *msg = sr_mpi_bcast_msg(cfg.p, &len);
  sr_buf_free(&cfg);
  int ndev = 0, kg = 0;
  sscanf(msg, "C %d %d", &ndev, &kg);
  free(msg);
  if (ndev <= 0) {
    *status = 2;
    return 1;
  }
  I->py->keep_going = kg;
  /* until a device is used, jax_num_cpu_devices may change the count */
  sr_exec_set_comm(I, sr_comm_mpi_new(ndev));
  I->py->on_stmt_end = stmt_end;
  I->py->share_line = share_line;
  sr_comm_mpi_watch_interrupts(((SrExec *)I->exec)->comm, &I->interrupted, &I->ticks, &I->stop_at);
  I->on_interrupt = agree_interrupt;
  drv.started = 1;
  if (rank == 0) {
    /* the workers of --ranks (on this host) hear of Ctrl-C from rank 0 */
    long pid;
    const char *me, *host;
    sr_mpi_peer(0, &pid, &me);
    for (int r = 1; r < n && drv.mode == SR_MPI_CONTROLLER && nworkers < (int)(sizeof workers / sizeof *workers);
         r++) {
      sr_mpi_peer(r, &pid, &host);
      if (strcmp(host, me) == 0) workers[nworkers++] = (pid_t)pid;
    }
    return 0;
  }

  /* a silent rank (its stdout goes nowhere, as a spawned worker's would
     otherwise reach the controller's terminal) */
  if (!freopen("/dev/null", "w", stdout)) clearerr(stdout);
  I->py->out = NULL;
  I->py->on_error = report_silently;
  if (drv.mode == SR_MPI_WORKER) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigint;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
  }
  *status = follow(I);
  drv.started = 0;
  /* a worker's status is its controller's business: Open MPI would report
     a non-zero one as a failed job */
  if (drv.mode == SR_MPI_WORKER) *status = 0;
  return 1;
}

int sr_mpi_driver_run(SrInterp *I, SrSrc *src, int keep_going) {
  if (drv.started && sr_mpi_rank() == 0) {
    src_seq++;
    running = 1;
    SrBuf b = SR_BUF_INIT;
    sr_buf_printf(&b, "R %d %u %s\n", !!keep_going + 2 * !!I->py->python + 4 * (I->py->echo & 3),
                  (unsigned)src->line0, src->name);
    sr_buf_putn(&b, src->text, src->len);
    size_t len = b.len;
    free(sr_mpi_bcast_msg(b.p, &len));
    sr_buf_free(&b);
    sr_interrupt_restart(I);
    int r = sr_interp_run(I, src, keep_going);
    running = 0;
    return r;
  }
  return sr_interp_run(I, src, keep_going);
}

int sr_mpi_driver_end(SrInterp *I, int status) {
  (void)I;
  if (drv.started && sr_mpi_rank() == 0) {
    char m[32];
    snprintf(m, sizeof m, "E %d", status);
    size_t len = strlen(m);
    free(sr_mpi_bcast_msg(m, &len));
    drv.started = 0;
  }
  fflush(stdout);
  return status;
}
