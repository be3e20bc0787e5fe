/* mem.c: checked allocation and arenas. */
#include "util/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

void sr_oom(void) {
  fputs("shardrepl: out of memory\n", stderr);
  abort();
}

/* A limit in a cgroup file: a number of bytes, or "max" (none). */
static size_t cgroup_file_limit(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return SIZE_MAX;
  unsigned long long v = 0;
  size_t r = fscanf(f, "%llu", &v) == 1 && v > 0 ? (size_t)v : SIZE_MAX;
  fclose(f);
  return r;
}

/* The least limit in `file` of the cgroup `group` (under the hierarchy
   mounted at `base`) and of the groups above it. */
static size_t cgroup_walk(const char *base, char *group, const char *file) {
  size_t lim = SIZE_MAX;
  char path[4200];
  for (;;) {
    snprintf(path, sizeof path, "%s%s/%s", base, strcmp(group, "/") == 0 ? "" : group, file);
    size_t l = cgroup_file_limit(path);
    if (l < lim) lim = l;
    char *slash = strrchr(group, '/');
    if (!slash || strcmp(group, "/") == 0) break;
    if (slash == group) slash[1] = 0;
    else *slash = 0;
  }
  return lim;
}

/* The memory limit of this process's cgroup, as /proc/self/cgroup names
   it: v2 ("0::/a/b", memory.max) and v1 ("4:memory:/a/b",
   memory.limit_in_bytes; a container sees its own group at the mount's
   root too). */
static size_t cgroup_limit(void) {
  size_t lim = cgroup_file_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  char line[4096];
  FILE *f = fopen("/proc/self/cgroup", "r");
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || c2[1] != '/') continue;
    size_t l = SIZE_MAX;
    if (c2 == c1 + 1) l = cgroup_walk("/sys/fs/cgroup", c2 + 1, "memory.max");
    else if (strncmp(c1 + 1, "memory", 6) == 0 && c1 + 7 == c2)
      l = cgroup_walk("/sys/fs/cgroup/memory", c2 + 1, "memory.limit_in_bytes");
    if (l < lim) lim = l;
  }
  if (f) fclose(f);
  return lim;
}

size_t sr_mem_limit(void) {
  static size_t limit;
  if (limit) return limit;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  size_t lim = pages > 0 && size > 0 ? (size_t)pages * (size_t)size : SIZE_MAX;
  const int rs[] = {RLIMIT_AS, RLIMIT_DATA};
  for (int i = 0; i < 2; i++) {
    struct rlimit rl;
    if (getrlimit(rs[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (size_t)rl.rlim_cur < lim)
      lim = (size_t)rl.rlim_cur;
  }
  size_t cg = cgroup_limit();
  limit = cg < lim ? cg : lim;
  return limit;
}

int sr_mem_pressure(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  struct mallinfo2 mi = mallinfo2();
  size_t used = mi.uordblks + mi.hblkhd;
  return used > sr_mem_limit() / 4 * 3;
#else
  return 0;
#endif
}

void *sr_try_malloc(size_t n) { return n > sr_mem_limit() ? NULL : malloc(n ? n : 1); }

void *sr_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) sr_oom();
  return p;
}

void *sr_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) sr_oom();
  return p;
}

void *sr_xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) sr_oom();
  return p;
}

char *sr_xstrndup(const char *s, size_t n) {
  char *p = sr_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *sr_xstrdup(const char *s) { return sr_xstrndup(s, strlen(s)); }

enum { HUGE_PAGE = 2 << 20, PAGE = 4096 };

/* A big block that is written from end to end once (an arena chunk, a
   stack of the parser, a printed program) is best backed by transparent
   huge pages, where Linux offers them on request: a page fault per 2 MiB
   instead of per 4 KiB, and few TLB misses.  Without them the time per
   byte of a 100 MB program was half again that of a 10 MB one.  The
   advice covers every page the block touches, not only its aligned huge
   pages: a mapping advised in part is split in two, and realloc can then
   no longer grow it in place with mremap but copies it, into pages that
   are not advised. */
void sr_mem_huge(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  uintptr_t a = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);
  uintptr_t e = ((uintptr_t)p + n + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
  if (n >= HUGE_PAGE) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

/* Chunks grow geometrically so that a big program costs few mallocs. */
struct SrChunk {
  struct SrChunk *next;
  size_t size;
  _Alignas(16) char data[];
};

/* the largest chunk is 4 MiB with its header */
enum { FIRST_CHUNK = 4096 - sizeof(struct SrChunk), MAX_CHUNK = (1 << 22) - sizeof(struct SrChunk) };

/* A chunk of a huge page or more is aligned to huge pages, so that all of
   it can have them. */
static struct SrChunk *new_chunk(size_t size) {
  struct SrChunk *c;
  if (sizeof *c + size >= HUGE_PAGE) {
    size_t n = (sizeof *c + size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, n) != 0 || !p) sr_oom();
    sr_mem_huge(p, n);
    c = p;
    c->size = n - sizeof *c;
  } else {
    c = sr_xmalloc(sizeof *c + size);
    c->size = size;
  }
  return c;
}

SrArena *sr_arena_new(void) {
  SrArena *a = sr_xcalloc(1, sizeof(SrArena));
  /* a first chunk now, so that cur is never NULL: an allocation of 0 bytes
     from a new arena would otherwise compute NULL + 0 */
  sr_arena_alloc_slow(a, 0);
  return a;
}

struct SrAdopted {
  void *p;
  struct SrAdopted *next;
};

static void free_adopted(SrArena *a) {
  for (struct SrAdopted *d = a->adopted; d; d = d->next) free(d->p);
  a->adopted = NULL;
}

void *sr_arena_adopt(SrArena *a, void *p, size_t n) {
  p = sr_xrealloc(p, n);
  /* the record lives in the arena, and goes with it */
  struct SrAdopted *d = sr_arena_alloc(a, sizeof *d);
  d->p = p;
  d->next = a->adopted;
  a->adopted = d;
  a->used += n;
  return p;
}

void sr_arena_free(SrArena *a) {
  if (!a) return;
  free_adopted(a);
  struct SrChunk *c = a->chunks;
  while (c) {
    struct SrChunk *n = c->next;
    free(c);
    c = n;
  }
  free(a);
}

void sr_arena_reset(SrArena *a) {
  free_adopted(a);
  struct SrChunk *c = a->chunks;
  if (!c) return;
  /* keep the most recent (largest) chunk */
  struct SrChunk *keep = c;
  c = c->next;
  while (c) {
    struct SrChunk *n = c->next;
    free(c);
    c = n;
  }
  keep->next = NULL;
  a->chunks = keep;
  a->cur = keep->data;
  a->end = keep->data + keep->size;
  a->used = 0;
}

size_t sr_arena_used(const SrArena *a) { return a->used; }

void *sr_arena_alloc_slow(SrArena *a, size_t n) {
  size_t size = a->chunks ? a->chunks->size * 2 : FIRST_CHUNK;
  if (size > MAX_CHUNK) size = MAX_CHUNK;
  if (size < n) size = n;
  struct SrChunk *c = new_chunk(size);
  if (size == n && a->chunks) {
    /* a big one-off block: put it behind the current chunk */
    c->next = a->chunks->next;
    a->chunks->next = c;
    a->used += n;
    return c->data;
  }
  c->next = a->chunks;
  a->chunks = c;
  a->cur = c->data + n;
  a->end = c->data + c->size;
  a->used += n;
  return c->data;
}

void *sr_arena_zalloc(SrArena *a, size_t n) {
  void *p = sr_arena_alloc(a, n);
  memset(p, 0, n);
  return p;
}

void *sr_arena_memdup(SrArena *a, const void *p, size_t n) {
  void *q = sr_arena_alloc(a, n);
  if (n) memcpy(q, p, n);
  return q;
}

char *sr_arena_strndup(SrArena *a, const char *s, size_t n) {
  char *p = sr_arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}
