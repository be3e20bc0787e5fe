/* comm_local.c: the communication backend for devices simulated in one
 * process.  Every device is local, so a collective is copies and folds
 * between buffers; members of a group whose results are equal share one
 * buffer. */
#include <stdlib.h>
#include <string.h>

#include "exec/comm.h"
#include "exec/kern_simd.h"
#include "exec/pool.h"
#include "util/mem.h"

static void local_free(SrComm *c) { free(c); }

/* An earlier group whose members hold the very same input buffers, in the
   same order (a replicated axis outside the group repeats them): its
   results are this group's too.  -1 if there is none. */
static int same_group(const SrGroups *g, int grp, SrBuffer *const *in) {
  const int *m = g->members + (size_t)grp * g->size;
  for (int h = 0; h < grp; h++) {
    const int *o = g->members + (size_t)h * g->size;
    int same = 1;
    for (int i = 0; i < g->size && same; i++) same = in[m[i]] == in[o[i]];
    if (same) return h;
  }
  return -1;
}

static int reuse_group(const SrGroups *g, int grp, SrBuffer *const *in, SrBuffer **out) {
  if (grp > 64) return 0; /* keep the search short for big meshes */
  int h = same_group(g, grp, in);
  if (h < 0) return 0;
  const int *m = g->members + (size_t)grp * g->size, *o = g->members + (size_t)h * g->size;
  for (int i = 0; i < g->size; i++) out[m[i]] = sr_buffer_ref(out[o[i]]);
  return 1;
}

/* acc = srcs[0] OP srcs[1] OP ... (count elements of es bytes, each
   step sr_comm_fold's), in pieces of FOLD_PIECE bytes that the thread
   pool folds in parallel: the fold is elementwise, so every element is
   the same bits as when one thread folds it all.  The dtype is one
   sr_comm_fold supports. */
#define FOLD_PIECE ((size_t)256 << 10)

typedef struct {
  SrRedOp op;
  SrDtype dt;
  size_t count, es, per;
  void *acc;
  const void *const *srcs;
  int nsrc;
} Fold;

/* one piece, the members folded in their order in one pass
   (kern_simd.h's sr_kern_fold_many: the same bits as folding them one
   after another) */
static void fold_piece(void *p, int k) {
  const Fold *f = p;
  size_t lo = (size_t)k * f->per, n = f->count - lo < f->per ? f->count - lo : f->per;
  char *acc = (char *)f->acc + lo * f->es;
  const void *small[64] = {0}, **xs = f->nsrc <= 64 ? small : sr_xmalloc((size_t)f->nsrc * sizeof *xs);
  for (int i = 0; i < f->nsrc; i++) xs[i] = (const char *)f->srcs[i] + lo * f->es;
  sr_kern_fold_many(f->op, f->dt, n, acc, xs, f->nsrc);
  if (xs != small) free(xs);
}

static void fold_members(SrRedOp op, SrDtype dt, size_t count, void *acc, const void *const *srcs, int nsrc) {
  size_t es = sr_elem_size(dt), per = FOLD_PIECE / es;
  Fold f = {op, dt, count, es, per ? per : 1, acc, srcs, nsrc};
  size_t pieces = sr_pool_parallel() ? (count + f.per - 1) / f.per : 1;
  if (pieces < 2) {
    f.per = count;
    fold_piece(&f, 0);
    return;
  }
  sr_pool_run((int)pieces, fold_piece, &f);
}

/* The fold of a group's members m[0..size) at byte offset off of their
   buffers into acc. */
static void fold_group(SrRedOp op, SrDtype dt, size_t count, void *acc, SrBuffer *const *in, const int *m, int size,
                       size_t off) {
  const void *small[64], **srcs = size <= 64 ? small : sr_xmalloc((size_t)size * sizeof *srcs);
  for (int i = 0; i < size; i++) srcs[i] = (const char *)in[m[i]]->data + off;
  fold_members(op, dt, count, acc, srcs, size);
  if (srcs != small) free(srcs);
}

static int fold_err(SrDiags *d, SrDtype dt) {
  return sr_error_exc(d, SR_E_RUNTIME, "NotImplementedError", NULL, 0, "cannot reduce arrays of dtype %s",
                      sr_dtype_name(dt));
}

static int local_all_reduce(SrComm *c, const SrGroups *g, SrRedOp op, SrDtype dt, size_t count,
                            SrBuffer *const *in, SrBuffer **out, SrDiags *d) {
  (void)c;
  size_t es = sr_elem_size(dt);
  for (int grp = 0; grp < g->count; grp++) {
    if (reuse_group(g, grp, in, out)) continue;
    const int *m = g->members + (size_t)grp * g->size;
    SrBuffer *acc;
    /* max and min of equal buffers are the buffer */
    int same = op != SR_RED_SUM;
    for (int i = 1; i < g->size && same; i++) same = in[m[i]] == in[m[0]];
    if (same) {
      acc = sr_buffer_ref(in[m[0]]);
    } else {
      if (!sr_comm_fold_supported(dt)) return fold_err(d, dt);
      acc = sr_buffer_new(count * es);
      fold_group(op, dt, count, acc->data, in, m, g->size, 0);
    }
    for (int i = 0; i < g->size; i++) out[m[i]] = sr_buffer_ref(acc);
    sr_buffer_unref(acc);
  }
  return 0;
}

static int local_all_gather(SrComm *c, const SrGroups *g, size_t nbytes, SrBuffer *const *in,
                            SrBuffer **out, SrDiags *d) {
  (void)c;
  (void)d;
  for (int grp = 0; grp < g->count; grp++) {
    if (reuse_group(g, grp, in, out)) continue;
    const int *m = g->members + (size_t)grp * g->size;
    SrBuffer *r = sr_buffer_new(nbytes * (size_t)g->size);
    for (int i = 0; i < g->size; i++) memcpy((char *)r->data + (size_t)i * nbytes, in[m[i]]->data, nbytes);
    for (int i = 0; i < g->size; i++) out[m[i]] = sr_buffer_ref(r);
    sr_buffer_unref(r);
  }
  return 0;
}

static int local_reduce_scatter(SrComm *c, const SrGroups *g, SrRedOp op, SrDtype dt, size_t count,
                                SrBuffer *const *in, SrBuffer **out, SrDiags *d) {
  (void)c;
  size_t es = sr_elem_size(dt), chunk = count * es;
  for (int grp = 0; grp < g->count; grp++) {
    if (reuse_group(g, grp, in, out)) continue;
    const int *m = g->members + (size_t)grp * g->size;
    if (!sr_comm_fold_supported(dt)) return fold_err(d, dt);
    for (int j = 0; j < g->size; j++) {
      SrBuffer *acc = sr_buffer_new(chunk);
      fold_group(op, dt, count, acc->data, in, m, g->size, j * chunk);
      out[m[j]] = acc;
    }
  }
  return 0;
}

static int local_all_to_all(SrComm *c, const SrGroups *g, size_t nbytes, SrBuffer *const *in,
                            SrBuffer **out, SrDiags *d) {
  (void)c;
  (void)d;
  for (int grp = 0; grp < g->count; grp++) {
    if (reuse_group(g, grp, in, out)) continue;
    const int *m = g->members + (size_t)grp * g->size;
    for (int j = 0; j < g->size; j++) {
      SrBuffer *r = sr_buffer_new(nbytes * (size_t)g->size);
      for (int i = 0; i < g->size; i++)
        memcpy((char *)r->data + (size_t)i * nbytes, (char *)in[m[i]]->data + (size_t)j * nbytes, nbytes);
      out[m[j]] = r;
    }
  }
  return 0;
}

static int local_ppermute(SrComm *c, const SrGroups *g, int npairs, const int *src, const int *dst,
                          size_t nbytes, SrBuffer *const *in, SrBuffer **out, SrDiags *d) {
  (void)c;
  (void)d;
  for (int grp = 0; grp < g->count; grp++) {
    const int *m = g->members + (size_t)grp * g->size;
    for (int k = 0; k < npairs; k++) out[m[dst[k]]] = sr_buffer_ref(in[m[src[k]]]);
    SrBuffer *zero = NULL;
    for (int j = 0; j < g->size; j++) {
      int is_dst = 0;
      for (int k = 0; k < npairs && !is_dst; k++) is_dst = dst[k] == j;
      if (is_dst) continue;
      if (!zero) zero = sr_buffer_zeros(nbytes);
      out[m[j]] = sr_buffer_ref(zero);
    }
    sr_buffer_unref(zero);
  }
  return 0;
}

static int local_fetch(SrComm *c, int device, SrBuffer *buf, size_t nbytes, SrBuffer **out, SrDiags *d) {
  (void)c;
  (void)device;
  if (!buf || buf->nbytes < nbytes)
    return sr_error_exc(d, SR_E_RUNTIME, "RuntimeError", NULL, 0, "device %d holds no data to fetch", device);
  *out = sr_buffer_ref(buf);
  return 0;
}

static int local_any(SrComm *c, int flag) {
  (void)c;
  return flag != 0;
}

static const SrCommOps local_ops = {
  .name = "local",
  .free = local_free,
  .all_reduce = local_all_reduce,
  .all_gather = local_all_gather,
  .reduce_scatter = local_reduce_scatter,
  .all_to_all = local_all_to_all,
  .ppermute = local_ppermute,
  .fetch = local_fetch,
  .any = local_any,
};

SrComm *sr_comm_local_new(int ndev) {
  SrComm *c = sr_xcalloc(1, sizeof *c);
  c->ops = &local_ops;
  c->ndev = ndev;
  c->nranks = 1;
  c->rank = 0;
  c->dev_lo = 0;
  c->dev_hi = ndev;
  return c;
}
