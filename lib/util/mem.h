/* mem.h: allocation that never returns NULL, and the arena allocator.
 *
 * Out of memory is not an error shardrepl can recover from: the x*alloc
 * functions print a message and abort.  Everything else in lib/ reports
 * errors through SrDiags and never exits.
 *
 * An SrArena hands out memory that lives until the whole arena is freed.
 * Parsed programs, printer documents and per-statement scratch data live in
 * arenas; nothing allocated from an arena is freed on its own.
 *
 * LAYER.  util/ is the bottom layer (this header its first): memory and
 * arenas, buffers (buf.h), interning (intern.h), diagnostics (diag.h) and
 * Python's number formats (pyfmt.h).  It uses only the C library.
 */
#ifndef SR_UTIL_MEM_H
#define SR_UTIL_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* SR_ASAN: built with AddressSanitizer.  The free lists of counted
   values and array objects then hand what is freed back to malloc, so
   that a leak report names where a block was made and a use after free
   is caught. */
#if defined(__SANITIZE_ADDRESS__)
#define SR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SR_ASAN 1
#endif
#endif

void *sr_xmalloc(size_t n);
void *sr_xcalloc(size_t n, size_t size);
void *sr_xrealloc(void *p, size_t n);
char *sr_xstrdup(const char *s);
char *sr_xstrndup(const char *s, size_t n);
void sr_oom(void) __attribute__((noreturn));

/* The most bytes one allocation may take: the least of physical memory,
   RLIMIT_AS, RLIMIT_DATA and the memory limit of the process's cgroup (v2
   memory.max, v1 memory.limit_in_bytes), read once.  A request a user's
   value sizes (an array, a repeated string, a format width) past it is
   refused before allocating -- JAX's RESOURCE_EXHAUSTED, Python's
   MemoryError -- since with overcommit malloc would grant it and touching
   it would bring the OOM killer. */
size_t sr_mem_limit(void);
/* malloc(n), or NULL when n is past sr_mem_limit() or malloc fails: for
   the allocations above, whose failure is an error, not an abort. */
void *sr_try_malloc(size_t n);
/* Whether the bytes malloc holds now (glibc's mallinfo2) pass 3/4 of
   sr_mem_limit(): the interpreter asks every 65536 steps, so that
   a loop growing a structure one small allocation at a time (a list
   comprehension over range(2**40), append in a loop) raises MemoryError
   before the allocator fails and the process aborts. */
int sr_mem_pressure(void);
/* Asks for huge pages for the block [p, p+n) (Linux; a hint, no more),
   for big blocks about to be filled. */
void sr_mem_huge(void *p, size_t n);

typedef struct SrArena SrArena;

SrArena *sr_arena_new(void);
void sr_arena_free(SrArena *a);
/* Forget everything allocated, keeping the first chunk for reuse. */
void sr_arena_reset(SrArena *a);
/* Bytes handed out so far (for memory measurements). */
size_t sr_arena_used(const SrArena *a);

void *sr_arena_alloc_slow(SrArena *a, size_t n);

struct SrArena {
  char *cur, *end;       /* free space in the current chunk */
  struct SrChunk *chunks;
  size_t used;
  struct SrAdopted *adopted; /* malloc'ed blocks it frees (sr_arena_adopt) */
};

/* Memory aligned for any object; uninitialised. */
/* memcpy for counts that may be 0 with NULL pointers, which memcpy
   itself does not allow. */
static inline void *sr_copy(void *dst, const void *src, size_t n) {
  return n ? memcpy(dst, src, n) : dst;
}

static inline void *sr_arena_alloc(SrArena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if ((size_t)(a->end - a->cur) < n) return sr_arena_alloc_slow(a, n);
  void *p = a->cur;
  a->cur += n;
  a->used += n;
  return p;
}

void *sr_arena_zalloc(SrArena *a, size_t n);
char *sr_arena_strndup(SrArena *a, const char *s, size_t n);
void *sr_arena_memdup(SrArena *a, const void *p, size_t n);
/* Makes the malloc'ed block p, of which n bytes are in use, part of the
   arena: it goes when the arena is freed or reset.  Returns the block,
   which shrinking it to n bytes may have moved.  For a big array built
   with realloc, instead of copying it into the arena. */
void *sr_arena_adopt(SrArena *a, void *p, size_t n);

#define SR_NEW(a, T) ((T *)sr_arena_zalloc((a), sizeof(T)))
#define SR_NEWN(a, T, n) ((T *)sr_arena_alloc((a), sizeof(T) * (size_t)(n)))

#endif
