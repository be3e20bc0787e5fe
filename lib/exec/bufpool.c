/* bufpool.c: the pool of freed buffer blocks (bufpool.h). */
#include "exec/bufpool.h"

#include <stdint.h>
#include <stdlib.h>

#define BUF_HEAD 64
#define SMALL_CLASSES 64 /* up to 4 KiB of data */
/* A training step holds a few dozen large arrays of a few sizes at once
   (its activations, per-layer gradients, their stacks, on each simulated
   device): the table must hold a step's worth, or blocks leave it only to
   come back as fresh pages. */
#define LARGE_SLOTS 256
#define POOL_MAX ((size_t)512 << 20)

static SrBuffer *small_free[SMALL_CLASSES];
static struct {
  SrBuffer *b;
  size_t total;
  uint64_t stamp;
} large[LARGE_SLOTS];
static int nlarge;
static uint64_t clock_;
static size_t pooled, nallocs, nfresh;

SrBuffer *sr_bufpool_take(size_t total) {
  size_t cls = (total - BUF_HEAD) / 64;
  if (cls < SMALL_CLASSES) {
    SrBuffer *b = small_free[cls];
    if (b) {
      small_free[cls] = b->base;
      pooled -= total;
    }
    return b;
  }
  int best = -1;
  for (int i = 0; i < nlarge; i++)
    if (large[i].total == total && (best < 0 || large[i].stamp > large[best].stamp)) best = i;
  if (best < 0) return NULL;
  SrBuffer *b = large[best].b;
  large[best] = large[--nlarge];
  pooled -= total;
  return b;
}

static void evict_oldest(void) {
  int old = 0;
  for (int i = 1; i < nlarge; i++)
    if (large[i].stamp < large[old].stamp) old = i;
  pooled -= large[old].total;
  free(large[old].b);
  large[old] = large[--nlarge];
}

void sr_bufpool_put(SrBuffer *b, size_t total) {
  if (total > POOL_MAX) {
    free(b);
    return;
  }
  size_t cls = (total - BUF_HEAD) / 64;
  if (cls < SMALL_CLASSES) {
    if (pooled + total > POOL_MAX) {
      free(b);
      return;
    }
    b->base = small_free[cls];
    small_free[cls] = b;
    pooled += total;
    return;
  }
  while (nlarge && (nlarge == LARGE_SLOTS || pooled + total > POOL_MAX)) evict_oldest();
  if (pooled + total > POOL_MAX) {
    free(b);
    return;
  }
  large[nlarge].b = b;
  large[nlarge].total = total;
  large[nlarge++].stamp = ++clock_;
  pooled += total;
}

void sr_bufpool_count(int fresh) {
  nallocs++;
  nfresh += fresh != 0;
}

void sr_buffer_counts(SrBufCounts *c) {
  c->allocs = nallocs;
  c->fresh = nfresh;
  c->pooled_bytes = pooled;
}
