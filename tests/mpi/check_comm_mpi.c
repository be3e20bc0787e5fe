/* check_comm_mpi.c: the MPI backend against the in-process one, byte for
 * byte.  Run under mpirun (tests/mpi/comm.sh runs it with 2 and 4 ranks);
 * alone it runs as a job of one rank.
 *
 * Every rank builds the same inputs for every mesh position, runs each
 * operation through comm_local with all of them and through comm_mpi with
 * its own, and compares the outputs of its own positions.  Mismatches are
 * counted, not asserted on the spot, so that every rank makes the same
 * calls; the counts are agreed with the backend's `any` at the end of each
 * test.  Check runs in CK_NOFORK mode (MPI and fork do not mix).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/comm.h"
#include "exec/comm_mpi.h"
#include "util/intern.h"

static int nranks, rank;

/* ---- inputs ---- */

static uint64_t rng_state;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Bytes for position p of a test, the same on every rank; float dtypes get
   small numbers (sums are inexact, so the order shows), some NaNs and
   signed zeros. */
static void fill(SrDtype dt, size_t count, uint64_t seed, int p, void *out) {
  rng_state = seed * 0x9e3779b97f4a7c15ull + (uint64_t)p * 0x632be59bd9b4e019ull + 1;
  for (int i = 0; i < 4; i++) rng();
  for (size_t i = 0; i < count; i++) {
    uint64_t r = rng();
    double v = (double)(int64_t)(r % 2001 - 1000) / 7.0 + (double)(r >> 40) * 1e-9;
    if (r % 97 == 0) v = NAN;
    if (r % 89 == 0) v = -0.0;
    switch (dt) {
    case SR_F32: ((float *)out)[i] = (float)v; break;
    case SR_F64: ((double *)out)[i] = v; break;
    case SR_F16:
    case SR_BF16: {
      /* any bit pattern but NaNs with payloads and infinities */
      uint16_t b = (uint16_t)(r >> 16);
      if (dt == SR_F16 && (b & 0x7c00) == 0x7c00) b = (uint16_t)(b & 0x83ff);
      if (dt == SR_BF16 && (b & 0x7f80) == 0x7f80) b = (uint16_t)(b & 0x807f);
      ((uint16_t *)out)[i] = b;
      break;
    }
    case SR_BOOL: ((uint8_t *)out)[i] = (uint8_t)(r & 1); break;
    case SR_I8: ((int8_t *)out)[i] = (int8_t)r; break;
    case SR_I32: ((int32_t *)out)[i] = (int32_t)r; break;
    case SR_U64: ((uint64_t *)out)[i] = r; break;
    default: memset((char *)out + i * sr_elem_size(dt), (int)(r & 0xff), sr_elem_size(dt)); break;
    }
  }
}

/* ---- meshes ---- */

typedef struct MeshSpec {
  int n;
  int sizes[3];
  int reversed; /* devices in reverse order */
  int offset;   /* devices start here (a mesh over part of the world) */
} MeshSpec;

static const SrMesh *make_mesh(const MeshSpec *s, int ndev) {
  static const char *names[] = {"X", "Y", "Z"};
  SrMesh m;
  memset(&m, 0, sizeof m);
  m.n = s->n;
  int size = 1;
  for (int i = 0; i < s->n; i++) {
    m.names[i] = sr_intern_cstr(names[i]);
    m.sizes[i] = s->sizes[i];
    size *= s->sizes[i];
  }
  if (size + s->offset > ndev) return NULL;
  int dev[64];
  for (int p = 0; p < size; p++) dev[p] = s->offset + (s->reversed ? size - 1 - p : p);
  if (s->reversed || s->offset) m.devices = dev;
  return sr_mesh_intern(&m);
}

static const MeshSpec meshes[] = {
  {1, {2}, 0, 0},       {1, {4}, 0, 0},    {1, {8}, 1, 0},     {2, {2, 2}, 0, 0},
  {2, {2, 4}, 0, 0},    {2, {4, 2}, 1, 0}, {3, {2, 2, 2}, 0, 0}, {1, {4}, 0, 4},
  {2, {2, 2}, 1, 4},
};

/* The axis lists to group by: each non-empty subset, in mesh order and
   reversed. */
static int axis_lists(int naxes, int lists[][3], int *lens) {
  int k = 0;
  for (unsigned set = 1; set < (1u << naxes); set++) {
    int ax[3] = {0, 0, 0}, n = 0;
    for (int i = 0; i < naxes; i++)
      if (set & (1u << i)) ax[n++] = i;
    memcpy(lists[k], ax, sizeof ax);
    lens[k++] = n;
    if (n > 1) {
      for (int i = 0; i < n; i++) lists[k][i] = ax[n - 1 - i];
      lens[k++] = n;
    }
  }
  return k;
}

/* ---- running one operation both ways ---- */

enum { OP_REDUCE, OP_GATHER, OP_SCATTER, OP_A2A, OP_PERMUTE, OP_FETCH, NOPS };

typedef struct Env {
  SrComm *loc, *mpi;
  int ndev;
  long mismatches, checked;
} Env;

static SrBuffer **bufs(int n) { return calloc((size_t)n + 1, sizeof(SrBuffer *)); }

static void drop(SrBuffer **b, int n) {
  for (int i = 0; i < n; i++) sr_buffer_unref(b[i]);
  free(b);
}

static void run_case(Env *e, const SrMesh *m, const int *axes, int naxes, int op, SrDtype dt, SrRedOp red,
                     size_t count, uint64_t seed) {
  SrDiags d = SR_DIAGS_INIT;
  const SrGroups *gl = sr_comm_groups(e->loc, m, axes, naxes, &d);
  const SrGroups *gm = sr_comm_groups(e->mpi, m, axes, naxes, &d);
  if (!gl || !gm) {
    e->mismatches++;
    sr_diags_clear(&d);
    return;
  }
  int n = sr_mesh_ndev(m), size = gl->size;
  size_t es = sr_elem_size(dt);
  /* inputs: count elements per chunk for the chunked operations */
  size_t elems = op == OP_SCATTER ? count * (size_t)size : op == OP_A2A ? count * (size_t)size : count;
  SrBuffer **in_l = bufs(n), **in_m = bufs(n), **out_l = bufs(n), **out_m = bufs(n);
  for (int p = 0; p < n; p++) {
    in_l[p] = sr_buffer_new(elems * es);
    fill(dt, elems, seed, p, in_l[p]->data);
    if (sr_comm_local(e->mpi, m, p)) in_m[p] = sr_buffer_copy(in_l[p]);
  }
  int rl = 0, rm = 0;
  int src[8], dst[8], npairs = 0;
  if (op == OP_PERMUTE) {
    /* a shift by one, and a pair that leaves members without data */
    for (int i = 0; i < size; i++) {
      if (seed % 2 && i == size - 1) break;
      src[npairs] = i;
      dst[npairs++] = (i + 1 + (int)(seed % 3)) % size;
    }
  }
  switch (op) {
  case OP_REDUCE:
    rl = e->loc->ops->all_reduce(e->loc, gl, red, dt, count, in_l, out_l, &d);
    rm = e->mpi->ops->all_reduce(e->mpi, gm, red, dt, count, in_m, out_m, &d);
    break;
  case OP_GATHER:
    rl = e->loc->ops->all_gather(e->loc, gl, count * es, in_l, out_l, &d);
    rm = e->mpi->ops->all_gather(e->mpi, gm, count * es, in_m, out_m, &d);
    break;
  case OP_SCATTER:
    rl = e->loc->ops->reduce_scatter(e->loc, gl, red, dt, count, in_l, out_l, &d);
    rm = e->mpi->ops->reduce_scatter(e->mpi, gm, red, dt, count, in_m, out_m, &d);
    break;
  case OP_A2A:
    rl = e->loc->ops->all_to_all(e->loc, gl, count * es, in_l, out_l, &d);
    rm = e->mpi->ops->all_to_all(e->mpi, gm, count * es, in_m, out_m, &d);
    break;
  case OP_PERMUTE:
    rl = e->loc->ops->ppermute(e->loc, gl, npairs, src, dst, count * es, in_l, out_l, &d);
    rm = e->mpi->ops->ppermute(e->mpi, gm, npairs, src, dst, count * es, in_m, out_m, &d);
    break;
  case OP_FETCH: {
    int pos = (int)(seed % (uint64_t)n), dev = sr_mesh_device(m, pos);
    rl = e->loc->ops->fetch(e->loc, dev, in_l[pos], elems * es, &out_l[0], &d);
    rm = e->mpi->ops->fetch(e->mpi, dev, in_m[pos], elems * es, &out_m[0], &d);
    e->checked++;
    if (rl != rm || !out_m[0] || out_m[0]->nbytes < elems * es ||
        memcmp(out_l[0]->data, out_m[0]->data, elems * es) != 0)
      e->mismatches++;
    goto done;
  }
  }
  if (rl != 0 || rm != 0) {
    e->mismatches++;
    goto done;
  }
  for (int p = 0; p < n; p++) {
    if (!sr_comm_local(e->mpi, m, p)) {
      if (out_m[p]) e->mismatches++; /* someone else's position: left alone */
      continue;
    }
    e->checked++;
    if (!out_m[p] || out_m[p]->nbytes != out_l[p]->nbytes ||
        memcmp(out_m[p]->data, out_l[p]->data, out_l[p]->nbytes) != 0) {
      if (e->mismatches < 5)
        fprintf(stderr, "rank %d: mismatch: op %d dtype %s red %d count %zu mesh %d-axes ndev %d pos %d\n", rank,
                op, sr_dtype_name(dt), (int)red, count, m->n, e->ndev, p);
      e->mismatches++;
    }
  }
done:
  drop(in_l, n);
  drop(in_m, n);
  drop(out_l, n);
  drop(out_m, n);
  sr_diags_clear(&d);
}

/* Every operation over every mesh and axis list, for ndev devices. */
static long sweep(int ndev, const SrDtype *dts, int ndts, const size_t *counts, int ncounts, long *checked) {
  Env e = {sr_comm_local_new(ndev), sr_comm_mpi_new(ndev), ndev, 0, 0};
  uint64_t seed = 1;
  for (size_t mi = 0; mi < sizeof meshes / sizeof *meshes; mi++) {
    const SrMesh *m = make_mesh(&meshes[mi], ndev);
    if (!m) continue;
    int lists[16][3], lens[16];
    int nl = axis_lists(m->n, lists, lens);
    for (int li = 0; li < nl; li++)
      for (int op = 0; op < NOPS; op++)
        for (int di = 0; di < ndts; di++)
          for (int ci = 0; ci < ncounts; ci++) {
            int reduces = op == OP_REDUCE || op == OP_SCATTER;
            /* the dtype matters only to reductions */
            if (!reduces && di > 0) continue;
            int reds = reduces ? 3 : 1;
            for (int red = 0; red < reds; red++)
              run_case(&e, m, lists[li], lens[li], op, dts[di], (SrRedOp)red, counts[ci], seed++);
          }
  }
  /* agree on the result, and end the "statement" */
  int bad = e.mpi->ops->any(e.mpi, e.mismatches != 0);
  SrDiags d = SR_DIAGS_INIT;
  int failed = sr_comm_mpi_stmt_end(e.mpi, 1, 0, &d);
  sr_diags_clear(&d);
  *checked = e.checked;
  sr_comm_free(e.loc);
  sr_comm_free(e.mpi);
  return bad || failed ? (e.mismatches ? e.mismatches : 1) : 0;
}

START_TEST(test_ops_small) {
  static const SrDtype dts[] = {SR_F32, SR_F64, SR_F16, SR_BF16, SR_I32, SR_I8, SR_U64, SR_BOOL};
  static const size_t counts[] = {1, 3, 17};
  for (int k = 1; k <= 8 / nranks || k == 1; k *= 2) {
    int ndev = nranks * k;
    if (ndev > 8) break;
    if (ndev < 2) continue;
    long checked = 0;
    long bad = sweep(ndev, dts, 8, counts, 3, &checked);
    ck_assert_msg(bad == 0, "%ld mismatches with %d devices on %d ranks", bad, ndev, nranks);
    ck_assert(checked > 0);
  }
}
END_TEST

START_TEST(test_ops_large) {
  /* chunks of uneven sizes and big enough to take many messages */
  static const SrDtype dts[] = {SR_F32};
  static const size_t counts[] = {100003};
  long checked = 0;
  int ndev = nranks * (nranks <= 2 ? 4 : 2);
  long bad = sweep(ndev, dts, 1, counts, 1, &checked);
  ck_assert_msg(bad == 0, "%ld mismatches", bad);
  bad = sweep(nranks, dts, 1, counts, 1, &checked);
  ck_assert_msg(bad == 0, "%ld mismatches (one device per rank)", bad);
}
END_TEST

/* ---- failures ---- */

static SrBuffer **local_inputs(SrComm *c, const SrMesh *m, size_t nbytes) {
  int n = sr_mesh_ndev(m);
  SrBuffer **in = bufs(n);
  for (int p = 0; p < n; p++)
    if (sr_comm_local(c, m, p)) in[p] = sr_buffer_zeros(nbytes);
  return in;
}

START_TEST(test_failure_agreed) {
  if (nranks < 2) return;
  int ndev = nranks;
  SrComm *c = sr_comm_mpi_new(ndev);
  MeshSpec ms = {1, {ndev}, 0, 0};
  const SrMesh *m = make_mesh(&ms, ndev);
  int ax = 0;
  SrDiags d = SR_DIAGS_INIT;
  const SrGroups *g = sr_comm_groups(c, m, &ax, 1, &d);
  ck_assert_ptr_nonnull(g);
  SrBuffer **in = local_inputs(c, m, 64), **out = bufs(ndev);
  /* the last rank fails its statement (np.load of a file it lacks, say);
     the others run a collective and learn of it there */
  int failed;
  if (rank == nranks - 1) {
    sr_error_exc(&d, SR_E_RUNTIME, "FileNotFoundError", NULL, 0, "No such file or directory: 'only-here.npy'");
    failed = sr_comm_mpi_stmt_end(c, 1, 1, &d);
  } else {
    int rc = c->ops->all_reduce(c, g, SR_RED_SUM, SR_F32, 16, in, out, &d);
    ck_assert_int_eq(rc, -1);
    /* the rest of the statement fails at once, `any` too */
    ck_assert_int_eq(c->ops->all_gather(c, g, 64, in, out, &d), -1);
    ck_assert_int_eq(c->ops->any(c, 1), -1);
    failed = sr_comm_mpi_stmt_end(c, 1, 1, &d);
  }
  ck_assert_int_eq(failed, 1);
  /* every rank now holds the failing rank's diagnostic */
  ck_assert_int_eq(d.count, 1);
  ck_assert_str_eq(d.first->exc, "FileNotFoundError");
  ck_assert_str_eq(d.first->msg, "No such file or directory: 'only-here.npy'");
  sr_diags_clear(&d);
  /* the next statement works */
  drop(out, ndev);
  out = bufs(ndev);
  ck_assert_int_eq(c->ops->all_reduce(c, g, SR_RED_SUM, SR_F32, 16, in, out, &d), 0);
  ck_assert_int_eq(c->ops->any(c, rank == 0), 1);
  ck_assert_int_eq(c->ops->any(c, 0), 0);
  ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 0, &d), 0);
  drop(in, ndev);
  drop(out, ndev);
  sr_comm_free(c);
}
END_TEST

START_TEST(test_failure_located) {
  /* a located diagnostic travels with its source line */
  if (nranks < 2) return;
  SrComm *c = sr_comm_mpi_new(nranks);
  SrDiags d = SR_DIAGS_INIT;
  SrSrc *src = sr_src_new("t.jxr", "x = 1\ny = np.load('f.npy')\n", 27, 1);
  if (rank == 1) sr_error_exc(&d, SR_E_RUNTIME, "FileNotFoundError", src, 10, "no file");
  ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, rank == 1, &d), 1);
  ck_assert_int_eq(d.count, 1);
  SrBuf b = SR_BUF_INIT;
  sr_diags_render(&d, &b);
  SrDiags e = SR_DIAGS_INIT;
  sr_error_exc(&e, SR_E_RUNTIME, "FileNotFoundError", src, 10, "no file");
  SrBuf want = SR_BUF_INIT;
  sr_diags_render(&e, &want);
  ck_assert_str_eq(sr_buf_str(&b), sr_buf_str(&want));
  sr_buf_free(&b);
  sr_buf_free(&want);
  sr_diags_clear(&d);
  sr_diags_clear(&e);
  sr_src_unref(src);
  sr_comm_free(c);
}
END_TEST

START_TEST(test_failure_own_check) {
  /* fetch from a device whose rank holds no buffer: that rank's message */
  SrComm *c = sr_comm_mpi_new(nranks);
  SrDiags d = SR_DIAGS_INIT;
  SrBuffer *out = NULL;
  int dev = nranks - 1;
  int rc = c->ops->fetch(c, dev, NULL, 8, &out, &d);
  ck_assert_int_eq(rc, -1);
  ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 1, &d), 1);
  ck_assert_int_eq(d.count, 1);
  char want[64];
  snprintf(want, sizeof want, "device %d holds no data to fetch", dev);
  ck_assert_str_eq(d.first->msg, want);
  sr_diags_clear(&d);
  /* a dtype that does not fold fails on every rank, before moving data */
  MeshSpec ms = {1, {nranks}, 0, 0};
  const SrMesh *m = make_mesh(&ms, nranks);
  int ax = 0;
  const SrGroups *g = sr_comm_groups(c, m, &ax, 1, &d);
  SrBuffer **in = local_inputs(c, m, 16), **o = bufs(nranks);
  ck_assert_int_eq(c->ops->all_reduce(c, g, SR_RED_SUM, SR_F8_E4M3FN, 2, in, o, &d), -1);
  ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 1, &d), 1);
  ck_assert_str_eq(d.first->msg, "cannot reduce arrays of dtype float8_e4m3fn");
  sr_diags_clear(&d);
  drop(in, nranks);
  drop(o, nranks);
  sr_comm_free(c);
}
END_TEST

START_TEST(test_failure_diverged) {
  /* ranks that reach different collectives fail together */
  if (nranks < 2) return;
  SrComm *c = sr_comm_mpi_new(nranks);
  MeshSpec ms = {1, {nranks}, 0, 0};
  const SrMesh *m = make_mesh(&ms, nranks);
  int ax = 0;
  SrDiags d = SR_DIAGS_INIT;
  const SrGroups *g = sr_comm_groups(c, m, &ax, 1, &d);
  SrBuffer **in = local_inputs(c, m, 32), **out = bufs(nranks);
  int rc = rank == 0 ? c->ops->all_gather(c, g, 32, in, out, &d) : c->ops->all_to_all(c, g, 32 / nranks, in, out, &d);
  ck_assert_int_eq(rc, -1);
  ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 1, &d), 1);
  ck_assert_int_eq(d.count, 1);
  ck_assert_ptr_nonnull(strstr(d.first->msg, "different collectives"));
  sr_diags_clear(&d);
  /* a rank that finished while another is in a collective */
  if (rank == 0) {
    ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 0, &d), 1);
  } else {
    ck_assert_int_eq(c->ops->all_gather(c, g, 32, in, out, &d), -1);
    ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 1, &d), 1);
  }
  sr_diags_clear(&d);
  drop(in, nranks);
  drop(out, nranks);
  sr_comm_free(c);
}
END_TEST

START_TEST(test_failure_levels) {
  /* rank 0 runs a :load'ed script that the others could not open: its
     statement in the script meets their end of the :load statement */
  if (nranks < 2) return;
  SrComm *c = sr_comm_mpi_new(nranks);
  SrDiags d = SR_DIAGS_INIT;
  if (rank == 0) {
    ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 2, 0, &d), 2);
    ck_assert_int_eq(d.count, 0);
    /* the rest of the script fails at once */
    ck_assert_int_eq(c->ops->any(c, 1), -1);
    ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 1, &d), 1);
  } else {
    sr_error_exc(&d, SR_E_USAGE, NULL, NULL, 0, "cannot open 'only-on-rank-0.jxr'");
    ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 1, &d), 1);
  }
  ck_assert_int_eq(d.count, 1);
  ck_assert_str_eq(d.first->msg, "cannot open 'only-on-rank-0.jxr'");
  sr_diags_clear(&d);
  /* in step again */
  ck_assert_int_eq(c->ops->any(c, rank == 1), 1);
  ck_assert_int_eq(sr_comm_mpi_stmt_end(c, 1, 0, &d), 0);
  sr_comm_free(c);
}
END_TEST

/* Under AddressSanitizer (HACKING.md, "Sanitizers"): Open MPI's plugins
   leave allocations behind that no LeakSanitizer suppression can name, so
   this program checks for leaks only where ASAN_OPTIONS asks for it.  A
   build without the sanitizer never calls this. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

int main(void) {
  SrDiags d = SR_DIAGS_INIT;
  SrMpiMode mode = sr_mpi_under_mpirun() ? SR_MPI_LAUNCHED : SR_MPI_CONTROLLER;
  if (sr_mpi_start(mode, 1, NULL, &d) < 0) {
    fprintf(stderr, "check_comm_mpi: %s\n", d.first ? d.first->msg : "cannot start MPI");
    return 99;
  }
  nranks = sr_mpi_size();
  rank = sr_mpi_rank();
  Suite *s = suite_create("comm_mpi");
  TCase *tc = tcase_create("ops");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_ops_small);
  tcase_add_test(tc, test_ops_large);
  suite_add_tcase(s, tc);
  TCase *tf = tcase_create("failures");
  tcase_set_timeout(tf, 60);
  tcase_add_test(tf, test_failure_agreed);
  tcase_add_test(tf, test_failure_located);
  tcase_add_test(tf, test_failure_own_check);
  tcase_add_test(tf, test_failure_diverged);
  tcase_add_test(tf, test_failure_levels);
  suite_add_tcase(s, tf);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, rank == 0 ? CK_NORMAL : CK_SILENT);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  /* the same status everywhere */
  SrComm *c = sr_comm_mpi_new(nranks);
  int any = c->ops->any(c, nf != 0);
  sr_comm_free(c);
  sr_mpi_finish();
  return any ? 1 : 0;
}
