/* bufpool.h: the pool of freed buffer blocks, by size (exec/array.c's
 * buffers come from it and go back to it).
 *
 * Arrays of the same shapes come back again and again -- each equation of
 * a loop, each iteration of a scan, each step of a training loop -- and
 * memory fresh from the system costs a page fault per 4 KiB (for an 8 MiB
 * gradient, more than adding it up).  A freed block is kept for the next
 * request of its size: small sizes (up to 4 KiB) in one list per 64-byte
 * class, large ones in a table searched by exact size, the most recently
 * freed first (its pages are the warmest); when the table is full or holds
 * its limit in bytes, the block freed longest ago goes back to the system.
 * Pooled bytes are not live (sr_buffer_stats). */
#ifndef SR_EXEC_BUFPOOL_H
#define SR_EXEC_BUFPOOL_H

#include <stddef.h>

#include "exec/array.h"

/* A pooled block of exactly `total` bytes (header included), or NULL. */
SrBuffer *sr_bufpool_take(size_t total);
/* Keeps block b of `total` bytes for reuse, or frees it. */
void sr_bufpool_put(SrBuffer *b, size_t total);
/* Counts since start-up, for tests and :comm-like figures: blocks handed
   out (allocs), of which taken from the system rather than the pool
   (fresh). */
typedef struct SrBufCounts {
  size_t allocs, fresh;
  size_t pooled_bytes;
} SrBufCounts;
void sr_bufpool_count(int fresh);
void sr_buffer_counts(SrBufCounts *c);

#endif
