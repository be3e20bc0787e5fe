/* ew_pieces.c: one big elementwise kernel in pieces on the thread pool
   (ew_pieces.h). */
#include "exec/ew_pieces.h"

#include <stdatomic.h>
#include <string.h>

#include "exec/kern_simd.h"
#include "exec/pool.h"

typedef struct {
  const SrKernEw *k;
  SrDtype dt;
  size_t n;
  int nin;
  const char *in[2];
  size_t es[2];
  char *out;
  size_t oes;
  const int64_t *ip;
  atomic_int failed;
} Pieces;

static int run(const Pieces *p, size_t start, size_t len) {
  const char *a = p->in[0] + start * p->es[0];
  char *o = p->out + start * p->oes;
  if (p->nin == 1) return sr_kern_unary(p->k, p->dt, len, a, o, p->ip);
  return sr_kern_binary(p->k, p->dt, len, a, p->es[0] == 0, p->in[1] + start * p->es[1], p->es[1] == 0, o);
}

static void piece(void *arg, int i) {
  Pieces *p = arg;
  size_t start = (size_t)i * SR_EW_PIECE, len = p->n - start < SR_EW_PIECE ? p->n - start : SR_EW_PIECE;
  if (run(p, start, len) < 0) atomic_store(&p->failed, 1);
}

int sr_kern_ew_pieces(const SrKernEw *k, SrDtype dt, size_t n, int nin, const void *const *in, const size_t *es,
                      void *out, size_t oes, const int64_t *ip) {
  Pieces p = {k, dt, n, nin, {in[0], nin > 1 ? in[1] : NULL}, {es[0], nin > 1 ? es[1] : 0}, out, oes, ip, 0};
  size_t npieces = (n + SR_EW_PIECE - 1) / SR_EW_PIECE;
  if (n < 4 * SR_EW_PIECE || npieces > (size_t)1 << 30 || !sr_pool_parallel()) return run(&p, 0, n);
  sr_pool_run((int)npieces, piece, &p);
  return atomic_load(&p.failed) ? -1 : 0;
}

typedef struct {
  SrDtype dt;
  int form, scalar;
  size_t n, es;
  const char *in[3];
  char *out;
  atomic_int failed;
} FmaPieces;

static void fma_piece(void *arg, int i) {
  FmaPieces *p = arg;
  size_t start = (size_t)i * SR_EW_PIECE, len = p->n - start < SR_EW_PIECE ? p->n - start : SR_EW_PIECE;
  const void *in[3];
  for (int k = 0; k < 3; k++) in[k] = p->in[k] + (p->scalar >> k & 1 ? 0 : start * p->es);
  if (sr_kern_fma(p->dt, (SrFmaForm)p->form, len, in[0], in[1], in[2], p->scalar, p->out + start * p->es) < 0)
    atomic_store(&p->failed, 1);
}

int sr_kern_fma_pieces(SrDtype dt, int form, size_t n, const void *const *in, int scalar, void *out) {
  size_t npieces = (n + SR_EW_PIECE - 1) / SR_EW_PIECE;
  if (n < 4 * SR_EW_PIECE || npieces > (size_t)1 << 30 || !sr_pool_parallel())
    return sr_kern_fma(dt, (SrFmaForm)form, n, in[0], in[1], in[2], scalar, out);
  FmaPieces p = {dt, form, scalar, n, sr_elem_size(dt), {in[0], in[1], in[2]}, out, 0};
  sr_pool_run((int)npieces, fma_piece, &p);
  return atomic_load(&p.failed) ? -1 : 0;
}

static void copy_task(void *arg, int i) {
  const SrCopy *c = (const SrCopy *)arg + i;
  memcpy(c->dst, c->src, c->n);
}

void sr_copies_run(const SrCopy *c, int n) {
  int big = 0;
  for (int i = 0; i < n; i++) big += c[i].n >= SR_COPY_PIECE;
  if (big >= 2 && sr_pool_parallel()) {
    sr_pool_run(n, copy_task, (void *)c);
    return;
  }
  for (int i = 0; i < n; i++) memcpy(c[i].dst, c[i].src, c[i].n);
}

typedef struct {
  size_t es, n;
  const void *v;
  char *out;
} Fill;

static void fill_piece(void *arg, int i) {
  Fill *f = arg;
  size_t start = (size_t)i * SR_EW_PIECE;
  sr_kern_fill(f->es, f->n - start < SR_EW_PIECE ? f->n - start : SR_EW_PIECE, f->v, f->out + start * f->es);
}

void sr_kern_fill_pieces(size_t es, size_t n, const void *v, void *out) {
  Fill f = {es, n, v, out};
  size_t npieces = (n + SR_EW_PIECE - 1) / SR_EW_PIECE;
  if (n < 4 * SR_EW_PIECE || npieces > (size_t)1 << 30 || !sr_pool_parallel()) sr_kern_fill(es, n, v, out);
  else sr_pool_run((int)npieces, fill_piece, &f);
}
