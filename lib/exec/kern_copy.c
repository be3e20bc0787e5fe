/* kern_copy.c: moving elements within and between shards.
 *
 * Every copy here is one walk: an n-d box of elements, read from the source
 * and written to the destination, each with its own strides.  Dimensions
 * that are contiguous on both sides are merged first, so that most copies
 * become rows of memcpy; a transpose of the two innermost dimensions goes
 * tile by tile for the cache. */
#include "exec/kern.h"
#include "exec/kern_simd.h"

#include <string.h>

#include "ir/type.h"

typedef struct Walk {
  int nd;
  int64_t size[SR_MAX_RANK + 1];
  int64_t ss[SR_MAX_RANK + 1]; /* source stride, elements */
  int64_t ds[SR_MAX_RANK + 1]; /* destination stride */
} Walk;

/* Drops size-1 dims and merges dims contiguous on both sides. */
static void walk_simplify(Walk *w) {
  int n = 0;
  for (int k = 0; k < w->nd; k++) {
    if (w->size[k] == 1) continue;
    if (n > 0 && w->ss[n - 1] == w->ss[k] * w->size[k] && w->ds[n - 1] == w->ds[k] * w->size[k]) {
      w->size[n - 1] *= w->size[k];
      w->ss[n - 1] = w->ss[k];
      w->ds[n - 1] = w->ds[k];
      continue;
    }
    w->size[n] = w->size[k];
    w->ss[n] = w->ss[k];
    w->ds[n] = w->ds[k];
    n++;
  }
  w->nd = n;
}

#define INNER(T)                                                                  \
  do {                                                                            \
    const T *s = (const T *)src;                                                  \
    T *d = (T *)dst;                                                              \
    for (int64_t i = 0; i < len; i++) d[i * dstep] = s[i * sstep];               \
  } while (0)

static void copy_line(size_t es, int64_t len, const char *src, int64_t sstep, char *dst, int64_t dstep) {
  if (sstep == 1 && dstep == 1) {
    memcpy(dst, src, (size_t)len * es);
    return;
  }
  switch (es) {
  case 1: INNER(uint8_t); break;
  case 2: INNER(uint16_t); break;
  case 4: INNER(uint32_t); break;
  case 8: INNER(uint64_t); break;
  default:
    for (int64_t i = 0; i < len; i++) memcpy(dst + i * dstep * (int64_t)es, src + i * sstep * (int64_t)es, es);
  }
}

#define TILE 32

/* dst[i][j] = src[i][j] for an a x b block with source strides (s0, 1)
   reversed: here the source is contiguous along i and the destination
   along j, so both are read and written a tile at a time. */
static void copy_tiled(size_t es, int64_t a, int64_t b, const char *src, int64_t s0, int64_t s1, char *dst,
                       int64_t d0, int64_t d1) {
  if (s0 == 1 && d1 == 1 && sr_kern_transpose_2d(es, a, b, src, s1, dst, d0) == 0) return;
  for (int64_t i0 = 0; i0 < a; i0 += TILE)
    for (int64_t j0 = 0; j0 < b; j0 += TILE) {
      int64_t ie = i0 + TILE < a ? i0 + TILE : a, je = j0 + TILE < b ? j0 + TILE : b;
      for (int64_t i = i0; i < ie; i++)
        copy_line(es, je - j0, src + (i * s0 + j0 * s1) * (int64_t)es, s1, dst + (i * d0 + j0 * d1) * (int64_t)es, d1);
    }
}

static void walk_run(size_t es, Walk *w, const char *src, char *dst) {
  walk_simplify(w);
  int nd = w->nd;
  if (nd == 0) {
    memcpy(dst, src, es);
    return;
  }
  /* the inner one or two dims are done by the line/tile copiers */
  int tiled = nd >= 2 && w->ss[nd - 1] != 1 && w->ds[nd - 1] == 1 && w->ss[nd - 2] == 1 &&
              w->size[nd - 1] >= 8 && w->size[nd - 2] >= 8;
  int inner = tiled ? 2 : 1;
  int outer = nd - inner;
  int64_t idx[SR_MAX_RANK + 1] = {0};
  int64_t so = 0, dof = 0;
  for (;;) {
    const char *s = src + so * (int64_t)es;
    char *d = dst + dof * (int64_t)es;
    if (tiled)
      copy_tiled(es, w->size[nd - 2], w->size[nd - 1], s, w->ss[nd - 2], w->ss[nd - 1], d, w->ds[nd - 2],
                 w->ds[nd - 1]);
    else
      copy_line(es, w->size[nd - 1], s, w->ss[nd - 1], d, w->ds[nd - 1]);
    int k = outer - 1;
    for (; k >= 0; k--) {
      so += w->ss[k];
      dof += w->ds[k];
      if (++idx[k] < w->size[k]) break;
      so -= w->ss[k] * w->size[k];
      dof -= w->ds[k] * w->size[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

static void strides_of(int ndim, const int64_t *shape, int64_t *st) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    st[i] = s;
    s *= shape[i];
  }
}

static int any_zero(int ndim, const int64_t *shape) {
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0) return 1;
  return 0;
}

static long ntransposes;

long sr_kern_transposes(void) { return __atomic_load_n(&ntransposes, __ATOMIC_RELAXED); }

void sr_kern_transpose(size_t es, int ndim, const int64_t *in_shape, const int *perm, const void *in,
                       void *out) {
  if (any_zero(ndim, in_shape)) return;
  __atomic_fetch_add(&ntransposes, 1, __ATOMIC_RELAXED);
  int64_t ist[SR_MAX_RANK], osh[SR_MAX_RANK], ost[SR_MAX_RANK];
  strides_of(ndim, in_shape, ist);
  for (int k = 0; k < ndim; k++) osh[k] = in_shape[perm[k]];
  strides_of(ndim, osh, ost);
  Walk w = {.nd = ndim};
  for (int k = 0; k < ndim; k++) {
    w.size[k] = osh[k];
    w.ss[k] = ist[perm[k]];
    w.ds[k] = ost[k];
  }
  walk_run(es, &w, in, out);
}

void sr_kern_copy_box(size_t es, int ndim, const int64_t *in_shape, const int64_t *start,
                      const int64_t *count, const void *in, void *out) {
  if (any_zero(ndim, count)) return;
  int64_t ist[SR_MAX_RANK], ost[SR_MAX_RANK], off = 0;
  strides_of(ndim, in_shape, ist);
  strides_of(ndim, count, ost);
  Walk w = {.nd = ndim};
  for (int k = 0; k < ndim; k++) {
    w.size[k] = count[k];
    w.ss[k] = ist[k];
    w.ds[k] = ost[k];
    off += start[k] * ist[k];
  }
  walk_run(es, &w, (const char *)in + off * (int64_t)es, out);
}

void sr_kern_paste_box(size_t es, int ndim, const int64_t *out_shape, const int64_t *start,
                       const int64_t *count, const void *in, void *out) {
  if (any_zero(ndim, count)) return;
  int64_t ist[SR_MAX_RANK], ost[SR_MAX_RANK], off = 0;
  strides_of(ndim, count, ist);
  strides_of(ndim, out_shape, ost);
  Walk w = {.nd = ndim};
  for (int k = 0; k < ndim; k++) {
    w.size[k] = count[k];
    w.ss[k] = ist[k];
    w.ds[k] = ost[k];
    off += start[k] * ost[k];
  }
  walk_run(es, &w, in, (char *)out + off * (int64_t)es);
}

void sr_kern_strided(size_t es, int ndim, const int64_t *in_shape, const int64_t *start,
                     const int64_t *step, const int64_t *out_shape, const void *in, void *out) {
  if (any_zero(ndim, out_shape)) return;
  int64_t ist[SR_MAX_RANK], ost[SR_MAX_RANK], off = 0;
  strides_of(ndim, in_shape, ist);
  strides_of(ndim, out_shape, ost);
  Walk w = {.nd = ndim};
  for (int k = 0; k < ndim; k++) {
    w.size[k] = out_shape[k];
    w.ss[k] = ist[k] * step[k];
    w.ds[k] = ost[k];
    off += start[k] * ist[k];
  }
  walk_run(es, &w, (const char *)in + off * (int64_t)es, out);
}

void sr_kern_copy_general(size_t es, int ndim, const int64_t *count, const void *src, int64_t src_off,
                          const int64_t *src_stride, void *dst, int64_t dst_off, const int64_t *dst_stride) {
  if (any_zero(ndim, count)) return;
  Walk w = {.nd = ndim};
  for (int k = 0; k < ndim; k++) {
    w.size[k] = count[k];
    w.ss[k] = src_stride[k];
    w.ds[k] = dst_stride[k];
  }
  walk_run(es, &w, (const char *)src + src_off * (int64_t)es, (char *)dst + dst_off * (int64_t)es);
}

void sr_kern_row_strides(int ndim, const int64_t *shape, int64_t *strides) { strides_of(ndim, shape, strides); }

void sr_kern_fill(size_t es, size_t n, const void *elem, void *out) {
  const unsigned char *b = elem;
  size_t k = 1;
  while (k < es && b[k] == b[0]) k++;
  if (k == es) { /* zeros above all: memset's stores are the fastest */
    memset(out, b[0], es * n);
    return;
  }
  switch (es) {
  case 1: memset(out, *(const uint8_t *)elem, n); return;
  case 2: {
    uint16_t v;
    memcpy(&v, elem, 2);
    for (size_t i = 0; i < n; i++) ((uint16_t *)out)[i] = v;
    return;
  }
  case 4: {
    uint32_t v;
    memcpy(&v, elem, 4);
    for (size_t i = 0; i < n; i++) ((uint32_t *)out)[i] = v;
    return;
  }
  case 8: {
    uint64_t v;
    memcpy(&v, elem, 8);
    for (size_t i = 0; i < n; i++) ((uint64_t *)out)[i] = v;
    return;
  }
  default:
    for (size_t i = 0; i < n; i++) memcpy((char *)out + i * es, elem, es);
  }
}

void sr_kern_move_axis(size_t es, int ndim, const int64_t *shape, int from, int to, const void *in,
                       void *out) {
  int perm[SR_MAX_RANK + 1], n = 0;
  for (int k = 0; k < ndim; k++) {
    if (k == from) continue;
    perm[n++] = k;
  }
  /* insert `from` at position `to` */
  for (int k = ndim - 1; k > to; k--) perm[k] = perm[k - 1];
  perm[to] = from;
  sr_kern_transpose(es, ndim, shape, perm, in, out);
}
