/* comm_mpi.c: the communication backend over Open MPI, and the job it runs
 * in (the only file of shardrepl that includes mpi.h; see comm_mpi.h).
 *
 * Every operation has three steps:
 *  1. local checks (a buffer to fetch, a dtype that folds);
 *  2. agree(): one MPI_Allreduce over the job of a few integers -- is
 *     every rank in an operation, the same one (a signature of the kind,
 *     the groups and the sizes), with its checks passed?  If not, the
 *     operation fails on every rank and the statement is marked failed
 *     ("poisoned"): later operations fail at once without communicating;
 *  3. the data movement, which cannot fail any more.
 * A rank whose statement failed waits in sr_comm_mpi_stmt_end, whose
 * all-reduce matches the agree() of the others, so they learn of it at
 * their next operation and nobody hangs.
 *
 * The data moves with point-to-point messages on a private duplicate of
 * the job's communicator, one tag per phase; both sides enumerate their
 * messages in the same order, so MPI's ordering rule matches them.  A
 * rank that holds several members of a group sends each of its members'
 * data once per destination rank and its members share one result buffer.
 * When every rank holds at most one device of a mesh, groups_init also
 * makes a communicator per group (MPI_Comm_split, cached with the groups)
 * and all-gather and all-to-all use MPI's own collectives there.
 *
 * Reductions keep comm.h's order exactly: chunk j of a group's result is
 * folded by the rank of member j, from member 0's chunk, then member 1's,
 * and so on (each fold waits only for the message it needs), and then
 * sent to the other ranks of the group.
 */
#include "exec/comm_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/mem.h"

/* ---- the job ---- */

#define HOST_MAX 64

typedef struct Peer {
  long pid;
  char host[HOST_MAX];
} Peer;

static struct {
  int active, finished;
  SrMpiMode mode;
  MPI_Comm comm; /* the job: a duplicate of MPI_COMM_WORLD, or the merged
                    spawn communicator */
  int rank, size;
  Peer *peers;
  void (*fatal_hook)(void);
  pthread_t watch;
  volatile int watching;
} job;

int sr_mpi_under_mpirun(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("OMPI_COMM_WORLD_RANK") != NULL;
}

int sr_mpi_active(void) { return job.active && !job.finished; }
int sr_mpi_rank(void) { return job.active ? job.rank : 0; }
int sr_mpi_size(void) { return job.active ? job.size : 1; }

void sr_mpi_set_fatal_hook(void (*fn)(void)) { job.fatal_hook = fn; }

void sr_mpi_peer(int rank, long *pid, const char **host) {
  if (!job.peers || rank < 0 || rank >= job.size) {
    *pid = (long)getpid();
    *host = "";
    return;
  }
  *pid = job.peers[rank].pid;
  *host = job.peers[rank].host;
}

static int mpi_finalized(void) {
  int f = 0;
  MPI_Finalized(&f);
  return f;
}

void sr_mpi_finish(void) {
  if (!job.active || job.finished) return;
  job.watching = 0;
  if (!mpi_finalized()) {
    if (job.comm != MPI_COMM_NULL) MPI_Comm_free(&job.comm);
    MPI_Finalize();
  }
  job.finished = 1;
}

static void at_exit_finish(void) { sr_mpi_finish(); }

/* ---- the watchdog ----
 *
 * A rank blocked in MPI cannot notice that a peer died: Open MPI's runtime
 * aborts the job when a process of mpirun's job dies, but a controller
 * whose spawned worker dies, or a worker whose controller dies, may wait
 * forever.  So a thread looks at the peers on this host every 200 ms. */

static int write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Is pid gone (or a zombie)? */
static int pid_dead(long pid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *p = strrchr(buf, ')');
  if (!p || p[1] != ' ') return 0;
  return p[2] == 'Z' || p[2] == 'X';
}

static void *watchdog(void *arg) {
  (void)arg;
  /* Ctrl-C is the main thread's (rank 0's prompt jumps back to readline) */
  sigset_t intr;
  sigemptyset(&intr);
  sigaddset(&intr, SIGINT);
  pthread_sigmask(SIG_BLOCK, &intr, NULL);
  char me[HOST_MAX];
  snprintf(me, sizeof me, "%s", job.peers[job.rank].host);
  while (job.watching) {
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    if (!job.watching) break;
    int dead = -1;
    for (int r = 0; r < job.size && dead < 0; r++)
      if (r != job.rank && strcmp(job.peers[r].host, me) == 0 && pid_dead(job.peers[r].pid)) dead = r;
    if (dead < 0) continue;
    if (!job.watching) break;
    /* the lowest live rank says so; the others leave quietly */
    int speaker = 1;
    for (int r = 0; r < job.rank; r++)
      if (strcmp(job.peers[r].host, me) != 0 || !pid_dead(job.peers[r].pid)) speaker = 0;
    if (job.fatal_hook) job.fatal_hook();
    if (speaker) {
      char msg[256];
      int n;
      if (job.mode == SR_MPI_WORKER && dead == 0)
        n = snprintf(msg, sizeof msg, "shardrepl: rank %d: the controlling process (pid %ld) has gone; exiting\n",
                     job.rank, job.peers[0].pid);
      else
        n = snprintf(msg, sizeof msg,
                     "shardrepl: rank %d (pid %ld) has died; the session cannot go on without it, exiting\n", dead,
                     job.peers[dead].pid);
      write_all(2, msg, (size_t)n);
    }
    /* a controller takes the workers it started with it */
    if (job.mode == SR_MPI_CONTROLLER)
      for (int r = 1; r < job.size; r++)
        if (strcmp(job.peers[r].host, me) == 0 && !pid_dead(job.peers[r].pid)) kill((pid_t)job.peers[r].pid, SIGKILL);
    _exit(1);
  }
  return NULL;
}

/* ---- starting ---- */

static void env_default(const char *name, const char *value) {
  if (!getenv(name)) setenv(name, value, 1);
}

/* A singleton's runtime daemon (which Open MPI forks to spawn workers)
   forwards its stdin to the first worker: it must not inherit the
   controller's terminal.  fd 0 is /dev/null while MPI starts it. */
static int stdin_away(void) {
  int saved = dup(0);
  int null = open("/dev/null", O_RDONLY);
  if (saved < 0 || null < 0) {
    if (saved >= 0) close(saved);
    if (null >= 0) close(null);
    return -1;
  }
  dup2(null, 0);
  close(null);
  return saved;
}

static void stdin_back(int saved) {
  if (saved < 0) return;
  dup2(saved, 0);
  close(saved);
}

static int mpi_err(SrDiags *d, const char *what, int rc) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, s, &len);
  s[len] = 0;
  return sr_error(d, SR_E_USAGE, NULL, 0, "%s failed: %s", what, s);
}

int sr_mpi_start(SrMpiMode mode, int nranks, const char *exe, SrDiags *d) {
  if (job.active) return sr_error(d, SR_E_USAGE, NULL, 0, "MPI has already been started");
  if (mode == SR_MPI_CONTROLLER) {
    /* a singleton spawning more ranks than this machine has cores; the
       workers inherit the rest (see DESIGN.md, "Open MPI here") */
    env_default("OMPI_MCA_rmaps_base_oversubscribe", "1");
    env_default("OMPI_MCA_pml", "ob1");
    env_default("OPENBLAS_NUM_THREADS", "1");
  }
  int provided = 0;
  int saved = mode == SR_MPI_CONTROLLER ? stdin_away() : -1;
  int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
  stdin_back(saved);
  if (rc != MPI_SUCCESS) return sr_error(d, SR_E_USAGE, NULL, 0, "MPI_Init failed");
  job.active = 1;
  job.mode = mode;
  job.comm = MPI_COMM_NULL;
  atexit(at_exit_finish);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  switch (mode) {
  case SR_MPI_LAUNCHED:
    MPI_Comm_dup(MPI_COMM_WORLD, &job.comm);
    break;
  case SR_MPI_CONTROLLER:
    if (nranks > 1) {
      char self[4096];
      if (!exe) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) return sr_error(d, SR_E_USAGE, NULL, 0, "cannot find this program's path to start workers");
        self[n] = 0;
        exe = self;
      }
      char *args[] = {(char *)"--worker", NULL};
      int *errs = sr_xcalloc((size_t)nranks, sizeof *errs);
      MPI_Comm inter;
      saved = stdin_away();
      rc = MPI_Comm_spawn(exe, args, nranks - 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, errs);
      stdin_back(saved);
      free(errs);
      if (rc != MPI_SUCCESS) return mpi_err(d, "starting the worker ranks (MPI_Comm_spawn)", rc);
      MPI_Intercomm_merge(inter, 0, &job.comm);
      MPI_Comm_free(&inter);
    } else {
      MPI_Comm_dup(MPI_COMM_SELF, &job.comm);
    }
    break;
  case SR_MPI_WORKER: {
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL)
      return sr_error(d, SR_E_USAGE, NULL, 0, "--worker is for the ranks that 'shardrepl --ranks P' starts");
    MPI_Intercomm_merge(parent, 1, &job.comm);
    break;
  }
  }
  MPI_Comm_set_errhandler(job.comm, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_rank(job.comm, &job.rank);
  MPI_Comm_size(job.comm, &job.size);

  /* who is where, for the watchdog and :ranks */
  Peer me;
  memset(&me, 0, sizeof me);
  me.pid = (long)getpid();
  gethostname(me.host, sizeof me.host - 1);
  job.peers = sr_xcalloc((size_t)job.size, sizeof *job.peers);
  MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, job.peers, (int)sizeof me, MPI_BYTE, job.comm);
  if (job.size > 1) {
    job.watching = 1;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&job.watch, &at, watchdog, NULL) != 0) job.watching = 0;
    pthread_attr_destroy(&at);
  }
  return 0;
}

/* ---- messages from rank 0 ---- */

char *sr_mpi_bcast_msg(const char *data, size_t *len) {
  unsigned long long n = job.rank == 0 ? (unsigned long long)*len : 0;
  /* wait for the header without spinning: an idle prompt costs nothing */
  MPI_Request rq;
  MPI_Ibcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, job.comm, &rq);
  long sleep_ns = 20 * 1000;
  for (;;) {
    int done = 0;
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    if (done) break;
    struct timespec ts = {0, sleep_ns};
    nanosleep(&ts, NULL);
    if (sleep_ns < 10 * 1000 * 1000) sleep_ns *= 2;
  }
  char *out = sr_xmalloc((size_t)n + 1);
  if (job.rank == 0 && n) memcpy(out, data, (size_t)n);
  for (unsigned long long off = 0; off < n;) {
    unsigned long long k = n - off < (1ull << 30) ? n - off : (1ull << 30);
    MPI_Bcast(out + off, (int)k, MPI_BYTE, 0, job.comm);
    off += k;
  }
  out[n] = 0;
  *len = (size_t)n;
  return out;
}

/* ---- benchmarks' helpers ---- */

void sr_mpi_raw_allreduce_f32(float *buf, size_t n) {
  for (size_t off = 0; off < n;) {
    size_t k = n - off < (size_t)INT_MAX ? n - off : (size_t)INT_MAX;
    MPI_Allreduce(MPI_IN_PLACE, buf + off, (int)k, MPI_FLOAT, MPI_SUM, job.comm);
    off += k;
  }
}

void sr_mpi_raw_allreduce_f32_to(const float *in, float *out, size_t n) {
  for (size_t off = 0; off < n;) {
    size_t k = n - off < (size_t)INT_MAX ? n - off : (size_t)INT_MAX;
    MPI_Allreduce(in + off, out + off, (int)k, MPI_FLOAT, MPI_SUM, job.comm);
    off += k;
  }
}

void sr_mpi_barrier(void) { MPI_Barrier(job.comm); }
double sr_mpi_wtime(void) { return MPI_Wtime(); }

/* ==== the backend ==== */

typedef struct MpiComm {
  SrComm c;            /* first: what the evaluator holds */
  MPI_Comm comm;       /* ours alone: a duplicate of the job */
  int *rank_of;        /* [ndev] */
  int poisoned;        /* the statement failed somewhere: operations fail at once */
  int own_error;       /* an operation failed on this rank's own check */
  volatile int *pending;        /* interrupts: see comm_mpi.h */
  uint64_t *ticks, *stop_at;
  MPI_Request *req;    /* the requests of the operation running */
  int nreq, capreq;
  char *scratch;       /* chunks received to be folded, kept for reuse */
  size_t capscratch;
} MpiComm;

/* What groups_init attaches to an SrGroups. */
typedef struct Plan {
  uint64_t hash;       /* the same on every rank for the same groups */
  int *rank;           /* [count * size]: the rank of each member */
  int *nranks;         /* [count]: distinct ranks in the group */
  int *ranks;          /* [count * size]: those ranks, in member order of
                          first appearance (nranks[g] of them used) */
  int *have;           /* [count]: members this rank holds */
  int simple;          /* every rank holds at most one position of the mesh */
  MPI_Comm gcomm;      /* simple: this rank's group, ranked by member index */
  int my_group, my_index; /* simple: this rank's position, or -1 */
} Plan;

enum { TAG_A = 11, TAG_B = 12 };

static int rank_of_pos(const MpiComm *mc, const SrMesh *m, int pos) {
  int dev = sr_mesh_device(m, pos);
  return dev >= 0 && dev < mc->c.ndev ? mc->rank_of[dev] : 0;
}

/* ---- agreement ---- */

/* Waits for an agreement: polling for 5 ms, then sleeping in growing
   steps of up to 1 ms, so that ranks waiting long for another (one still
   computing after this one failed) leave it the CPU.  Ranks in step meet
   within the polling, even four to a core: a nonblocking collective moves
   only while every rank polls, and sleeping sooner made each statement
   cost milliseconds there. */
static void wait_patiently(MPI_Request *rq) {
  int done = 0;
  double t0 = MPI_Wtime();
  while (!done && MPI_Wtime() - t0 < 5e-3) MPI_Test(rq, &done, MPI_STATUS_IGNORE);
  long ns = 100 * 1000;
  while (!done) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 1000 * 1000) ns *= 2;
    MPI_Test(rq, &done, MPI_STATUS_IGNORE);
  }
}

enum {
  A_DONE, A_BUSY, A_FAILED, A_SIG, A_NSIG, A_TSIG, A_NTSIG, A_FLAG, A_OWN, A_ANY, A_LMAX, A_LMIN, A_INTR, A_TICK,
  A_N
};

#define LEVEL_INV 1000000 /* A_LMIN holds LEVEL_INV - level: MAX finds the least */

/* The operands' dtypes and shapes (comm.h: SrCommOperands), hashed the
   same on every rank; 0 when none are set. */
static int64_t operands_sig(const SrComm *c) {
  if (!c->operands.n) return 0;
  uint64_t h = 0x6a09e667f3bcc909ull;
  for (int i = 0; i < c->operands.n; i++) {
    const SrType *t = c->operands.types[i];
    h = (h ^ (uint64_t)t->dtype) * 0x100000001b3ull;
    h = (h ^ t->ndim) * 0x100000001b3ull;
    for (int k = 0; k < t->ndim; k++) h = (h ^ (uint64_t)t->dims[k].size) * 0x100000001b3ull;
  }
  return (int64_t)(h & 0x3fffffffffffffffull) | 1;
}

/* One all-reduce (MAX) over the job.  done: at a statement's end, of depth
   level (0 in an operation).  join: at an interrupt point, to agree where
   to stop (A_INTR: some rank joined; then A_TICK is the first point every
   rank can stop at: a joining rank can stop at the point it is at, the
   others only at their next one).  Every rank that takes part learns the
   point, whatever it came for.  A_TSIG: the operands' signature. */
static void agree_raw(MpiComm *mc, int done, int failed, int64_t sig, int flag, int own, int level, int join,
                      int64_t *res) {
  int64_t v[A_N];
  int64_t tsig = done || join ? 0 : operands_sig(&mc->c);
  v[A_TSIG] = tsig;
  v[A_NTSIG] = -tsig;
  v[A_INTR] = join;
  v[A_TICK] = mc->ticks ? (int64_t)(*mc->ticks + (join ? 0 : 1)) : 0;
  int inv = mc->c.nranks - mc->c.rank; /* larger for lower ranks: MAX picks the lowest */
  v[A_LMAX] = done ? level : 0;
  v[A_LMIN] = done ? LEVEL_INV - level : 0;
  v[A_DONE] = done;
  v[A_BUSY] = !done;
  v[A_FAILED] = failed;
  v[A_SIG] = sig;
  v[A_NSIG] = -sig;
  v[A_FLAG] = flag != 0;
  v[A_OWN] = own ? inv : 0;
  v[A_ANY] = failed ? inv : 0;
  MPI_Request rq;
  MPI_Iallreduce(v, res, A_N, MPI_INT64_T, MPI_MAX, mc->comm, &rq);
  wait_patiently(&rq);
  if (res[A_INTR] && mc->stop_at && (uint64_t)res[A_TICK] < *mc->stop_at) *mc->stop_at = (uint64_t)res[A_TICK];
}

static int secondary(SrDiags *d, const char *why) {
  return sr_error_exc(d, SR_E_RUNTIME, "RuntimeError", NULL, 0, "%s", why);
}

/* Step 2 of every operation.  local_err: this rank's check failed (its
   diagnostic is already in d).  Returns 0 to go on, -1 on every rank
   otherwise. */
static int agree(MpiComm *mc, uint64_t sig, int local_err, SrDiags *d) {
  if (mc->poisoned) {
    if (!local_err) secondary(d, "the statement failed on another rank");
    return -1;
  }
  int64_t s = (int64_t)(sig & 0x3fffffffffffffffull) | 1;
  int64_t res[A_N];
  /* a rank that came to agree where to stop is not in this operation:
     agree again, when it is */
  do
    agree_raw(mc, 0, local_err, s, 0, local_err, 0, 0, res);
  while (res[A_INTR]);
  if (local_err) {
    mc->poisoned = mc->own_error = 1;
    return -1;
  }
  if (res[A_DONE] || res[A_FAILED]) {
    mc->poisoned = 1;
    return secondary(d, "the statement failed on another rank");
  }
  if (res[A_TSIG] != -res[A_NTSIG] && -res[A_NTSIG] != 0) {
    /* every rank has operands, and they differ: a name bound to arrays of
       different shapes (or dtypes) on different ranks: each rank's own
       error, located where it is raised */
    mc->poisoned = mc->own_error = 1;
    SrBuf b = SR_BUF_INIT;
    for (int i = 0; i < mc->c.operands.n; i++)
      sr_buf_printf(&b, "%s%s", i ? ", " : "", sr_type_short(mc->c.operands.types[i]));
    sr_error_exc(d, SR_E_RUNTIME, "RuntimeError", NULL, 0,
                 "the ranks hold arrays of different global shapes or dtypes here (rank %d has %s): every rank "
                 "must bind the same global arrays",
                 mc->c.rank, sr_buf_str(&b));
    sr_buf_free(&b);
    return -1;
  }
  if (res[A_SIG] != -res[A_NSIG]) {
    mc->poisoned = 1;
    return secondary(d, "the ranks reached different collectives (the statement took different paths on "
                        "different ranks)");
  }
  return 0;
}

enum { OP_CHECK = 100 };

static int mpi_check(SrComm *c, SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  uint64_t h = (uint64_t)OP_CHECK * 0x9e3779b97f4a7c15ull;
  return agree(mc, h, 0, d);
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t op_sig(const SrGroups *g, int op, uint64_t a, uint64_t b, uint64_t c2) {
  const Plan *pl = g ? g->impl : NULL;
  uint64_t h = mix(pl ? pl->hash : 0, (uint64_t)op);
  h = mix(h, a);
  h = mix(h, b);
  return mix(h, c2);
}

enum { OP_REDUCE = 1, OP_GATHER, OP_SCATTER, OP_A2A, OP_PERMUTE, OP_FETCH, OP_ANY, OP_GROUPS };

/* ---- requests ---- */

#define MSG_MAX ((size_t)1 << 30)

static void req_room(MpiComm *mc, int k) {
  if (mc->nreq + k <= mc->capreq) return;
  int cap = mc->capreq ? mc->capreq : 64;
  while (cap < mc->nreq + k) cap *= 2;
  mc->req = sr_xrealloc(mc->req, (size_t)cap * sizeof *mc->req);
  mc->capreq = cap;
}

/* Posts a send or a receive of n bytes (in pieces of at most MSG_MAX);
   returns the index of its first request (its requests run to the index
   the next post returns). */
static int post(MpiComm *mc, int send, void *p, size_t n, int peer, int tag) {
  int first = mc->nreq;
  size_t pieces = n ? (n + MSG_MAX - 1) / MSG_MAX : 0;
  req_room(mc, (int)pieces);
  for (size_t off = 0; off < n; off += MSG_MAX) {
    size_t k = n - off < MSG_MAX ? n - off : MSG_MAX;
    if (send)
      MPI_Isend((char *)p + off, (int)k, MPI_BYTE, peer, tag, mc->comm, &mc->req[mc->nreq++]);
    else
      MPI_Irecv((char *)p + off, (int)k, MPI_BYTE, peer, tag, mc->comm, &mc->req[mc->nreq++]);
  }
  return first;
}

static void wait_range(MpiComm *mc, int lo, int hi) {
  if (hi > lo) MPI_Waitall(hi - lo, mc->req + lo, MPI_STATUSES_IGNORE);
}

static void wait_all(MpiComm *mc) {
  wait_range(mc, 0, mc->nreq);
  mc->nreq = 0;
}

/* ---- groups ---- */

static int mpi_groups_init(SrComm *c, SrGroups *g, SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  int n = sr_mesh_ndev(g->mesh), size = g->size, count = g->count;
  Plan *pl = sr_xcalloc(1, sizeof *pl);
  pl->gcomm = MPI_COMM_NULL;
  pl->my_group = pl->my_index = -1;
  uint64_t h = mix(0, (uint64_t)n);
  for (int i = 0; i < g->mesh->n; i++) h = mix(h, (uint64_t)g->mesh->sizes[i]);
  for (int p = 0; p < n; p++) h = mix(h, (uint64_t)sr_mesh_device(g->mesh, p));
  for (int i = 0; i < g->naxes; i++) h = mix(h, (uint64_t)g->axes[i] + 100);
  pl->hash = h;
  g->impl = pl;
  /* the communicator below is collective: agree first */
  if (agree(mc, op_sig(g, OP_GROUPS, 0, 0, 0), 0, d) < 0) {
    free(pl);
    g->impl = NULL;
    return -1;
  }
  pl->rank = sr_xmalloc((size_t)n * sizeof *pl->rank);
  pl->ranks = sr_xmalloc((size_t)n * sizeof *pl->ranks);
  pl->nranks = sr_xcalloc((size_t)count, sizeof *pl->nranks);
  pl->have = sr_xcalloc((size_t)count, sizeof *pl->have);
  int *held = sr_xcalloc((size_t)c->nranks, sizeof *held);
  for (int grp = 0; grp < count; grp++) {
    int *rk = pl->rank + (size_t)grp * size, *dr = pl->ranks + (size_t)grp * size;
    for (int i = 0; i < size; i++) {
      int r = rank_of_pos(mc, g->mesh, g->members[grp * size + i]);
      rk[i] = r;
      held[r]++;
      if (r == c->rank) pl->have[grp]++;
      int seen = 0;
      for (int k = 0; k < pl->nranks[grp] && !seen; k++) seen = dr[k] == r;
      if (!seen) dr[pl->nranks[grp]++] = r;
    }
  }
  pl->simple = size > 1;
  for (int r = 0; r < c->nranks; r++)
    if (held[r] > 1) pl->simple = 0;
  free(held);
  if (pl->simple) {
    int color = MPI_UNDEFINED, key = 0;
    for (int grp = 0; grp < count; grp++)
      for (int i = 0; i < size; i++)
        if (pl->rank[grp * size + i] == c->rank) {
          color = pl->my_group = grp;
          key = pl->my_index = i;
        }
    MPI_Comm_split(mc->comm, color, key, &pl->gcomm);
  }
  return 0;
}

static void mpi_groups_free(SrComm *c, SrGroups *g) {
  (void)c;
  Plan *pl = g->impl;
  if (!pl) return;
  if (pl->gcomm != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&pl->gcomm);
  free(pl->rank);
  free(pl->ranks);
  free(pl->nranks);
  free(pl->have);
  free(pl);
  g->impl = NULL;
}

/* ---- the operations ---- */

static int fold_err(SrDiags *d, SrDtype dt) {
  return sr_error_exc(d, SR_E_RUNTIME, "NotImplementedError", NULL, 0, "cannot reduce arrays of dtype %s",
                      sr_dtype_name(dt));
}

/* n bytes of scratch (the same memory every time: fresh pages cost a
   fault each). */
static char *scratch(MpiComm *mc, size_t n) {
  if (!n) return NULL;
  if (n > mc->capscratch) {
    free(mc->scratch);
    mc->scratch = sr_xmalloc(n);
    mc->capscratch = n;
  }
  return mc->scratch;
}

/* How many members of the groups this rank holds. */
static int mine_count(const Plan *pl, const SrGroups *g, int me) {
  int k = 0;
  for (size_t i = 0; i < (size_t)g->count * g->size; i++) k += pl->rank[i] == me;
  return k;
}

/* The element range [lo, hi) of chunk j of n over count elements. */
static void chunk_of(size_t count, int n, int j, size_t *lo, size_t *hi) {
  size_t q = count / (size_t)n, r = count % (size_t)n;
  *lo = q * (size_t)j + ((size_t)j < r ? (size_t)j : r);
  *hi = *lo + q + ((size_t)j < r ? 1 : 0);
}

/* A group held wholly by this rank: what comm_local does. */
static int local_group_reduce(SrRedOp op, SrDtype dt, size_t count, const int *m, int n, SrBuffer *const *in,
                              SrBuffer **out) {
  size_t es = sr_elem_size(dt);
  SrBuffer *acc;
  int same = op != SR_RED_SUM;
  for (int i = 1; i < n && same; i++) same = in[m[i]] == in[m[0]];
  if (same) {
    acc = sr_buffer_ref(in[m[0]]);
  } else {
    acc = sr_buffer_new(count * es);
    memcpy(acc->data, in[m[0]]->data, count * es);
    for (int i = 1; i < n; i++) sr_comm_fold(op, dt, count, acc->data, in[m[i]]->data);
  }
  for (int i = 0; i < n; i++) out[m[i]] = sr_buffer_ref(acc);
  sr_buffer_unref(acc);
  return 0;
}

static int mpi_all_reduce(SrComm *c, const SrGroups *g, SrRedOp op, SrDtype dt, size_t count, SrBuffer *const *in,
                          SrBuffer **out, SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  const Plan *pl = g->impl;
  int bad = !sr_comm_fold_supported(dt);
  if (bad) fold_err(d, dt);
  if (agree(mc, op_sig(g, OP_REDUCE, (uint64_t)op, (uint64_t)dt, count), bad, d) < 0) return -1;
  size_t es = sr_elem_size(dt);
  int n = g->size, me = c->rank;
  /* per group this rank takes part in: the result buffer */
  SrBuffer **res = sr_xcalloc((size_t)g->count, sizeof *res);
  /* scratch for the chunks of other ranks' members this rank folds */
  size_t nscratch = 0;
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp] || pl->nranks[grp] == 1) continue;
    const int *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] != me) continue;
      size_t lo, hi;
      chunk_of(count, n, j, &lo, &hi);
      for (int i = 1; i < n; i++)
        if (rk[i] != me) nscratch += (hi - lo) * es;
    }
  }
  char *tmp = scratch(mc, nscratch);
  /* the first request of chunk j of member i, n slots per member j of
     this rank's, in enumeration order */
  int *rq = sr_xmalloc(((size_t)mine_count(pl, g, me) * n + 1) * sizeof *rq);
  int mk = 0;
  mc->nreq = 0;
  /* phase A: the chunks this rank folds, from the ranks of the other members */
  size_t toff = 0;
  for (int grp = 0; grp < g->count; grp++) {
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    if (!pl->have[grp]) continue;
    if (pl->nranks[grp] == 1) {
      local_group_reduce(op, dt, count, m, n, in, out);
      continue;
    }
    res[grp] = sr_buffer_new(count * es);
    for (int j = 0; j < n; j++) {
      if (rk[j] != me) continue;
      size_t lo, hi;
      chunk_of(count, n, j, &lo, &hi);
      size_t cb = (hi - lo) * es;
      int *slots = rq + (size_t)mk++ * n;
      for (int i = 0; i < n; i++) {
        int *slot = slots + i;
        *slot = -1;
        if (rk[i] == me || !cb) continue;
        /* member 0's chunk lands in the result itself */
        void *dst = i == 0 ? (char *)res[grp]->data + lo * es : tmp + toff;
        if (i) toff += cb;
        *slot = post(mc, 0, dst, cb, rk[i], TAG_A);
      }
    }
  }
  /* phase B receives: the folded chunks of the other ranks */
  for (int grp = 0; grp < g->count; grp++) {
    if (!res[grp]) continue;
    const int *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] == me) continue;
      size_t lo, hi;
      chunk_of(count, n, j, &lo, &hi);
      post(mc, 0, (char *)res[grp]->data + lo * es, (hi - lo) * es, rk[j], TAG_B);
    }
  }
  /* phase A sends: each of this rank's members' chunk j to the rank of member j */
  for (int grp = 0; grp < g->count; grp++) {
    if (!res[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] == me) continue;
      size_t lo, hi;
      chunk_of(count, n, j, &lo, &hi);
      for (int i = 0; i < n; i++)
        if (rk[i] == me) post(mc, 1, (char *)in[m[i]]->data + lo * es, (hi - lo) * es, rk[j], TAG_A);
    }
  }
  /* fold in member order, each step waiting only for its chunk; send each
     folded chunk on as soon as it is done */
  toff = 0;
  mk = 0;
  for (int grp = 0; grp < g->count; grp++) {
    if (!res[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] != me) continue;
      size_t lo, hi;
      chunk_of(count, n, j, &lo, &hi);
      size_t cb = (hi - lo) * es;
      const int *slot = rq + (size_t)mk++ * n;
      if (!cb) continue;
      char *acc = (char *)res[grp]->data + lo * es;
      if (rk[0] == me) memcpy(acc, (char *)in[m[0]]->data + lo * es, cb);
      else wait_range(mc, slot[0], slot[0] + (int)((cb + MSG_MAX - 1) / MSG_MAX));
      for (int i = 1; i < n; i++) {
        const char *x;
        if (rk[i] == me) {
          x = (char *)in[m[i]]->data + lo * es;
        } else {
          wait_range(mc, slot[i], slot[i] + (int)((cb + MSG_MAX - 1) / MSG_MAX));
          x = tmp + toff;
          toff += cb;
        }
        sr_comm_fold(op, dt, hi - lo, acc, x);
      }
      for (int k = 0; k < pl->nranks[grp]; k++) {
        int t = pl->ranks[(size_t)grp * n + k];
        if (t != me) post(mc, 1, acc, cb, t, TAG_B);
      }
    }
  }
  wait_all(mc);
  for (int grp = 0; grp < g->count; grp++) {
    if (!res[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int i = 0; i < n; i++)
      if (rk[i] == me) out[m[i]] = sr_buffer_ref(res[grp]);
    sr_buffer_unref(res[grp]);
  }
  free(res);
  free(rq);
  return 0;
}

static int mpi_all_gather(SrComm *c, const SrGroups *g, size_t nbytes, SrBuffer *const *in, SrBuffer **out,
                          SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  const Plan *pl = g->impl;
  if (agree(mc, op_sig(g, OP_GATHER, nbytes, 0, 0), 0, d) < 0) return -1;
  int n = g->size, me = c->rank;
  if (pl->simple && nbytes * (size_t)n <= (size_t)INT_MAX) {
    if (pl->my_group < 0) return 0;
    int p = g->members[(size_t)pl->my_group * n + pl->my_index];
    SrBuffer *r = sr_buffer_new(nbytes * (size_t)n);
    MPI_Allgather(in[p]->data, (int)nbytes, MPI_BYTE, r->data, (int)nbytes, MPI_BYTE, pl->gcomm);
    out[p] = r;
    return 0;
  }
  SrBuffer **res = sr_xcalloc((size_t)g->count, sizeof *res);
  mc->nreq = 0;
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    res[grp] = sr_buffer_new(nbytes * (size_t)n);
    for (int i = 0; i < n; i++) {
      char *dst = (char *)res[grp]->data + (size_t)i * nbytes;
      if (rk[i] == me) memcpy(dst, in[m[i]]->data, nbytes);
      else post(mc, 0, dst, nbytes, rk[i], TAG_A);
    }
  }
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int i = 0; i < n; i++) {
      if (rk[i] != me) continue;
      for (int k = 0; k < pl->nranks[grp]; k++) {
        int t = pl->ranks[(size_t)grp * n + k];
        if (t != me) post(mc, 1, in[m[i]]->data, nbytes, t, TAG_A);
      }
    }
  }
  wait_all(mc);
  for (int grp = 0; grp < g->count; grp++) {
    if (!res[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int i = 0; i < n; i++)
      if (rk[i] == me) out[m[i]] = sr_buffer_ref(res[grp]);
    sr_buffer_unref(res[grp]);
  }
  free(res);
  return 0;
}

static int mpi_reduce_scatter(SrComm *c, const SrGroups *g, SrRedOp op, SrDtype dt, size_t count,
                              SrBuffer *const *in, SrBuffer **out, SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  const Plan *pl = g->impl;
  int bad = !sr_comm_fold_supported(dt);
  if (bad) fold_err(d, dt);
  if (agree(mc, op_sig(g, OP_SCATTER, (uint64_t)op, (uint64_t)dt, count), bad, d) < 0) return -1;
  size_t chunk = count * sr_elem_size(dt);
  int n = g->size, me = c->rank;
  size_t nscratch = 0;
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++)
      if (rk[j] == me)
        for (int i = 1; i < n; i++)
          if (rk[i] != me) nscratch += chunk;
  }
  char *tmp = scratch(mc, nscratch);
  int *rq = sr_xmalloc(((size_t)mine_count(pl, g, me) * n + 1) * sizeof *rq);
  int mk = 0;
  mc->nreq = 0;
  size_t toff = 0;
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] != me) continue;
      out[m[j]] = sr_buffer_new(chunk);
      int *slots = rq + (size_t)mk++ * n;
      for (int i = 0; i < n; i++) {
        int *slot = slots + i;
        *slot = -1;
        if (rk[i] == me || !chunk) continue;
        void *dst = i == 0 ? out[m[j]]->data : tmp + toff;
        if (i) toff += chunk;
        *slot = post(mc, 0, dst, chunk, rk[i], TAG_A);
      }
    }
  }
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] == me) continue;
      for (int i = 0; i < n; i++)
        if (rk[i] == me) post(mc, 1, (char *)in[m[i]]->data + (size_t)j * chunk, chunk, rk[j], TAG_A);
    }
  }
  toff = 0;
  mk = 0;
  int pieces = (int)((chunk + MSG_MAX - 1) / MSG_MAX);
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] != me) continue;
      const int *slot = rq + (size_t)mk++ * n;
      if (!chunk) continue;
      char *acc = out[m[j]]->data;
      if (rk[0] == me) memcpy(acc, (char *)in[m[0]]->data + (size_t)j * chunk, chunk);
      else wait_range(mc, slot[0], slot[0] + pieces);
      for (int i = 1; i < n; i++) {
        const char *x;
        if (rk[i] == me) {
          x = (char *)in[m[i]]->data + (size_t)j * chunk;
        } else {
          wait_range(mc, slot[i], slot[i] + pieces);
          x = tmp + toff;
          toff += chunk;
        }
        sr_comm_fold(op, dt, count, acc, x);
      }
    }
  }
  wait_all(mc);
  free(rq);
  return 0;
}

static int mpi_all_to_all(SrComm *c, const SrGroups *g, size_t nbytes, SrBuffer *const *in, SrBuffer **out,
                          SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  const Plan *pl = g->impl;
  if (agree(mc, op_sig(g, OP_A2A, nbytes, 0, 0), 0, d) < 0) return -1;
  int n = g->size, me = c->rank;
  if (pl->simple && nbytes * (size_t)n <= (size_t)INT_MAX) {
    if (pl->my_group < 0) return 0;
    int p = g->members[(size_t)pl->my_group * n + pl->my_index];
    SrBuffer *r = sr_buffer_new(nbytes * (size_t)n);
    MPI_Alltoall(in[p]->data, (int)nbytes, MPI_BYTE, r->data, (int)nbytes, MPI_BYTE, pl->gcomm);
    out[p] = r;
    return 0;
  }
  mc->nreq = 0;
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] != me) continue;
      SrBuffer *r = out[m[j]] = sr_buffer_new(nbytes * (size_t)n);
      for (int i = 0; i < n; i++) {
        char *dst = (char *)r->data + (size_t)i * nbytes;
        if (rk[i] == me) memcpy(dst, (char *)in[m[i]]->data + (size_t)j * nbytes, nbytes);
        else post(mc, 0, dst, nbytes, rk[i], TAG_A);
      }
    }
  }
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    for (int j = 0; j < n; j++) {
      if (rk[j] == me) continue;
      for (int i = 0; i < n; i++)
        if (rk[i] == me) post(mc, 1, (char *)in[m[i]]->data + (size_t)j * nbytes, nbytes, rk[j], TAG_A);
    }
  }
  wait_all(mc);
  return 0;
}

static int mpi_ppermute(SrComm *c, const SrGroups *g, int npairs, const int *src, const int *dst, size_t nbytes,
                        SrBuffer *const *in, SrBuffer **out, SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  const Plan *pl = g->impl;
  uint64_t ph = (uint64_t)npairs;
  for (int k = 0; k < npairs; k++) ph = mix(mix(ph, (uint64_t)src[k]), (uint64_t)dst[k]);
  if (agree(mc, op_sig(g, OP_PERMUTE, nbytes, ph, 0), 0, d) < 0) return -1;
  int n = g->size, me = c->rank;
  mc->nreq = 0;
  /* receives first, then sends, both in (group, pair) order */
  for (int pass = 0; pass < 2; pass++)
    for (int grp = 0; grp < g->count; grp++) {
      if (!pl->have[grp]) continue;
      const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
      for (int k = 0; k < npairs; k++) {
        int s = src[k], t = dst[k];
        if (pass == 0) {
          if (rk[t] != me) continue;
          if (rk[s] == me) {
            out[m[t]] = sr_buffer_ref(in[m[s]]);
          } else {
            out[m[t]] = sr_buffer_new(nbytes);
            post(mc, 0, out[m[t]]->data, nbytes, rk[s], TAG_A);
          }
        } else if (rk[s] == me && rk[t] != me) {
          post(mc, 1, in[m[s]]->data, nbytes, rk[t], TAG_A);
        }
      }
    }
  for (int grp = 0; grp < g->count; grp++) {
    if (!pl->have[grp]) continue;
    const int *m = g->members + (size_t)grp * n, *rk = pl->rank + (size_t)grp * n;
    SrBuffer *zero = NULL;
    for (int j = 0; j < n; j++) {
      if (rk[j] != me) continue;
      int is_dst = 0;
      for (int k = 0; k < npairs && !is_dst; k++) is_dst = dst[k] == j;
      if (is_dst) continue;
      if (!zero) zero = sr_buffer_zeros(nbytes);
      out[m[j]] = sr_buffer_ref(zero);
    }
    sr_buffer_unref(zero);
  }
  wait_all(mc);
  return 0;
}

static int mpi_fetch(SrComm *c, int device, SrBuffer *buf, size_t nbytes, SrBuffer **out, SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  int owner = device >= 0 && device < c->ndev ? mc->rank_of[device] : -1;
  int bad = owner < 0 || (owner == c->rank && (!buf || buf->nbytes < nbytes));
  if (bad)
    sr_error_exc(d, SR_E_RUNTIME, "RuntimeError", NULL, 0, "device %d holds no data to fetch", device);
  if (agree(mc, op_sig(NULL, OP_FETCH, (uint64_t)device, nbytes, 0), bad, d) < 0) return -1;
  SrBuffer *r = owner == c->rank ? sr_buffer_ref(buf) : sr_buffer_new(nbytes);
  for (size_t off = 0; off < nbytes; off += MSG_MAX) {
    size_t k = nbytes - off < MSG_MAX ? nbytes - off : MSG_MAX;
    MPI_Bcast((char *)r->data + off, (int)k, MPI_BYTE, owner, mc->comm);
  }
  *out = r;
  return 0;
}

static int mpi_any(SrComm *c, int flag) {
  MpiComm *mc = (MpiComm *)c;
  if (mc->poisoned) return -1;
  int64_t s = (int64_t)(op_sig(NULL, OP_ANY, 0, 0, 0) & 0x3fffffffffffffffull) | 1;
  int64_t res[A_N];
  do
    agree_raw(mc, 0, 0, s, flag, 0, 0, 0, res);
  while (res[A_INTR]);
  if (res[A_DONE] || res[A_FAILED] || res[A_SIG] != -res[A_NSIG]) {
    mc->poisoned = 1;
    return -1;
  }
  return res[A_FLAG] != 0;
}

/* ---- statements ---- */

/* Diagnostics as bytes: for each, kind (and 1 << 32 when rendered), offset, then the exception type,
   message, source name and source text as (length, bytes), and line0. */
static void put_u64(SrBuf *b, uint64_t v) { sr_buf_putn(b, (const char *)&v, sizeof v); }
static void put_str(SrBuf *b, const char *s, size_t n) {
  put_u64(b, s ? (uint64_t)n : UINT64_MAX);
  if (s && n) sr_buf_putn(b, s, n);
}

static void diags_pack(const SrDiags *d, SrBuf *b) {
  put_u64(b, (uint64_t)d->count);
  for (const SrDiag *g = d->first; g; g = g->next) {
    put_u64(b, (uint64_t)g->kind | (uint64_t)(g->rendered != 0) << 32);
    put_u64(b, (uint64_t)g->off);
    put_str(b, g->exc, g->exc ? strlen(g->exc) : 0);
    put_str(b, g->msg, g->msg ? strlen(g->msg) : 0);
    if (g->src) {
      put_str(b, g->src->name, strlen(g->src->name));
      put_str(b, g->src->text, g->src->len);
      put_u64(b, g->src->line0);
    } else {
      put_str(b, NULL, 0);
    }
  }
}

typedef struct Reader {
  const char *p, *end;
} Reader;

static uint64_t get_u64(Reader *r) {
  uint64_t v = 0;
  if (r->end - r->p >= (long)sizeof v) memcpy(&v, r->p, sizeof v);
  r->p += sizeof v;
  if (r->p > r->end) r->p = r->end;
  return v;
}

/* A new NUL-terminated copy, or NULL for an absent string. */
static char *get_str(Reader *r, size_t *len) {
  uint64_t n = get_u64(r);
  if (n == UINT64_MAX) return NULL;
  if (n > (uint64_t)(r->end - r->p)) n = (uint64_t)(r->end - r->p);
  char *s = sr_xstrndup(r->p, (size_t)n);
  r->p += n;
  if (len) *len = (size_t)n;
  return s;
}

static void diags_unpack(const char *p, size_t n, SrDiags *d) {
  Reader r = {p, p + n};
  uint64_t count = get_u64(&r);
  for (uint64_t k = 0; k < count && r.p < r.end; k++) {
    uint64_t kr = get_u64(&r);
    SrErrKind kind = (SrErrKind)(kr & 0xffffffffu);
    size_t off = (size_t)get_u64(&r);
    char *exc = get_str(&r, NULL);
    char *msg = get_str(&r, NULL);
    char *name = get_str(&r, NULL);
    SrSrc *src = NULL;
    if (name) {
      size_t len = 0;
      char *text = get_str(&r, &len);
      uint32_t line0 = (uint32_t)get_u64(&r);
      src = sr_src_new(name, text ? text : "", text ? len : 0, line0);
      free(text);
    }
    sr_error_exc(d, kind, exc, src, off, "%s", msg ? msg : "");
    d->last->rendered = (int)(kr >> 32);
    sr_src_unref(src);
    free(name);
    free(exc);
    free(msg);
  }
}

int sr_comm_mpi_stmt_end(SrComm *c, int level, int failed, SrDiags *d) {
  MpiComm *mc = (MpiComm *)c;
  if (level < 1) level = 1;
  int bad = failed || mc->poisoned;
  /* its own error: failed without having been told of another rank's */
  int own = failed && (!mc->poisoned || mc->own_error);
  /* a statement that failed here may have reported already (a :load whose
     script failed); one that only heard of a failure says so */
  if (!failed && mc->poisoned && !d->count) secondary(d, "the statement failed on another rank");
  int64_t res[A_N];
  for (;;) {
    agree_raw(mc, 1, bad, 0, 0, own, level, 0, res);
    /* someone still in an operation (or agreeing where to stop): this
       answer fails it, and it comes back here */
    if (res[A_BUSY]) continue;
    /* a rank at the end of an enclosing statement (its :load failed, say):
       leave this source quietly, failing the rest of it at once, and agree
       at that statement's end */
    if (LEVEL_INV - res[A_LMIN] < level) {
      mc->poisoned = 1;
      mc->own_error = 0;
      sr_diags_clear(d);
      return 2;
    }
    /* ranks still inside a deeper source come up to this level */
    if (res[A_LMAX] > level) continue;
    break;
  }
  mc->poisoned = mc->own_error = 0;
  if (!res[A_FAILED]) return 0;
  int who = c->nranks - (int)(res[A_OWN] ? res[A_OWN] : res[A_ANY]);
  SrBuf b = SR_BUF_INIT;
  if (c->rank == who) diags_pack(d, &b);
  unsigned long long n = b.len;
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, who, mc->comm);
  char *bytes = c->rank == who ? b.p : sr_xmalloc((size_t)n + 1);
  for (unsigned long long off = 0; off < n;) {
    unsigned long long k = n - off < MSG_MAX ? n - off : MSG_MAX;
    MPI_Bcast(bytes + off, (int)k, MPI_BYTE, who, mc->comm);
    off += k;
  }
  if (c->rank != who) {
    sr_diags_clear(d);
    diags_unpack(bytes, (size_t)n, d);
    free(bytes);
  }
  sr_buf_free(&b);
  return 1;
}

/* ---- interrupts ---- */

void sr_comm_mpi_watch_interrupts(SrComm *c, volatile int *pending, uint64_t *ticks, uint64_t *stop_at) {
  MpiComm *mc = (MpiComm *)c;
  mc->pending = pending;
  mc->ticks = ticks;
  mc->stop_at = stop_at;
}

int sr_comm_mpi_interrupt(SrComm *c) {
  MpiComm *mc = (MpiComm *)c;
  if (!mc->ticks) return 0;
  /* a SIGINT that comes once a stop is agreed is that stop's */
  int join = *mc->pending && *mc->stop_at == UINT64_MAX;
  *mc->pending = 0;
  if (join) {
    int64_t res[A_N];
    agree_raw(mc, 0, 0, 0, 0, 0, 0, 1, res);
  }
  if (*mc->ticks < *mc->stop_at) return 0;
  *mc->stop_at = UINT64_MAX;
  return 1;
}

/* ---- construction ---- */

static void mpi_free(SrComm *c) {
  MpiComm *mc = (MpiComm *)c;
  if (mc->comm != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&mc->comm);
  free(mc->rank_of);
  free(mc->req);
  free(mc->scratch);
  free(mc);
}

/* rank_of for the devices c has now */
static void mpi_resize(SrComm *c) {
  MpiComm *mc = (MpiComm *)c;
  int ndev = c->ndev, n = c->nranks;
  free(mc->rank_of);
  mc->rank_of = sr_xmalloc((size_t)(ndev > 0 ? ndev : 1) * sizeof *mc->rank_of);
  for (int r = 0; r < n; r++) {
    int lo = (int)((int64_t)r * ndev / n), hi = (int)((int64_t)(r + 1) * ndev / n);
    for (int dv = lo; dv < hi; dv++) mc->rank_of[dv] = r;
  }
}

static const SrCommOps mpi_ops = {
  .name = "mpi",
  .free = mpi_free,
  .groups_init = mpi_groups_init,
  .groups_free = mpi_groups_free,
  .all_reduce = mpi_all_reduce,
  .all_gather = mpi_all_gather,
  .reduce_scatter = mpi_reduce_scatter,
  .all_to_all = mpi_all_to_all,
  .ppermute = mpi_ppermute,
  .fetch = mpi_fetch,
  .any = mpi_any,
  .resize = mpi_resize,
  .check = mpi_check,
};

int sr_comm_is_mpi(const SrComm *c) { return c && c->ops == &mpi_ops; }

SrComm *sr_comm_mpi_new(int ndev) {
  MpiComm *mc = sr_xcalloc(1, sizeof *mc);
  SrComm *c = &mc->c;
  c->ops = &mpi_ops;
  c->nranks = job.size;
  c->rank = job.rank;
  sr_comm_resize(c, ndev);
  MPI_Comm_dup(job.comm, &mc->comm);
  return c;
}
