/* eval_par.c: the devices of one process in parallel (eval_par.h). */
#include "exec/eval_par.h"

#include <stdlib.h>
#include <string.h>

#include "exec/pool.h"
#include "util/mem.h"

typedef struct {
  SrEvalCtx *cx;
  SrEvalCtx *tcx;   /* one a task */
  SrDiags *d;
  int *rc;
  SrEvDevFn fn;
  void *arg;
} ForEach;

static void for_each_task(void *p, int i) {
  ForEach *f = p;
  f->tcx[i] = *f->cx;
  f->tcx[i].d = &f->d[i];
  f->rc[i] = f->fn(&f->tcx[i], i, f->arg);
}

static int in_turn(SrEvalCtx *cx, int n, SrEvDevFn fn, void *arg) {
  for (int i = 0; i < n; i++)
    if (fn(cx, i, arg) < 0) return -1;
  return 0;
}

int sr_ev_for_each_device(SrEvalCtx *cx, int n, size_t bytes, SrEvDevFn fn, void *arg) {
  if (bytes < SR_EV_PAR_BYTES) return in_turn(cx, n, fn, arg);
  /* a batch: one OpenBLAS thread a device, on the pool or not, so that a
     device's dot is the same bits for every pool size and rank */
  int blas = sr_pool_blas_one();
  if (n <= 1 || !sr_pool_parallel()) {
    int rc = in_turn(cx, n, fn, arg);
    sr_pool_blas_restore(blas);
    return rc;
  }
  ForEach f = {cx, sr_xmalloc((size_t)n * sizeof *f.tcx), sr_xcalloc((size_t)n, sizeof *f.d),
               sr_xmalloc((size_t)n * sizeof *f.rc), fn, arg};
  sr_pool_run(n, for_each_task, &f);
  sr_pool_blas_restore(blas);
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (f.rc[i] < 0 && rc == 0) {
      rc = -1;
      if (!f.d[i].count) sr_ev_err(cx, "RuntimeError", "internal: a device's work failed with no message");
      else if (cx->d) sr_diags_move(cx->d, &f.d[i]);
    }
    sr_diags_clear(&f.d[i]);
  }
  free(f.tcx);
  free(f.d);
  free(f.rc);
  return rc;
}

/* ---- sr_ev_map's batches ---- */

int sr_ev_map_parallel(SrMapBatch *b, int ndev, int flags, int nin, SrArray *const *in, int nout,
                       const size_t *obytes) {
  memset(b, 0, sizeof *b);
  if (ndev < 2 || (flags & SR_MAP_NOALLOC)) return 0;
  size_t bytes = 0;
  for (int k = 0; k < nin; k++)
    bytes += (size_t)sr_layout_shard_numel(in[k]->layout) * sr_elem_size(in[k]->type->dtype);
  for (int k = 0; k < nout; k++) bytes += obytes[k];
  b->bytes = bytes;
  return bytes >= SR_EV_PAR_BYTES;
}

void sr_ev_batch_add(SrMapBatch *b, const SrShardIO *io, int nin, int nout) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 8;
    b->t = sr_xrealloc(b->t, (size_t)b->cap * sizeof *b->t);
  }
  SrMapTask *t = &b->t[b->n++];
  t->io = *io;
  memcpy(t->in, io->in, (size_t)nin * sizeof *t->in);
  memcpy(t->out, io->out, (size_t)nout * sizeof *t->out);
  t->io.in = t->in;
  t->io.out = t->out;
}

typedef struct {
  SrMapBatch *b;
  SrShardFn fn;
} MapRun;

static int map_task(SrEvalCtx *tcx, int i, void *arg) {
  MapRun *r = arg;
  SrShardIO *io = &r->b->t[i].io;
  io->cx = tcx;
  return r->fn(io);
}

int sr_ev_batch_run(SrEvalCtx *cx, SrMapBatch *b, SrShardFn fn, int run) {
  MapRun r = {b, fn};
  int rc = run ? sr_ev_for_each_device(cx, b->n, b->bytes, map_task, &r) : 0;
  free(b->t);
  memset(b, 0, sizeof *b);
  return rc;
}
