/* intern.c: an open-addressing set of strings that never shrinks. */
#include "util/intern.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

typedef struct {
  const char *s;
  uint32_t len, hash;
} Slot;

static Slot *slots;
static size_t nslots, nused;
static SrArena *strings;

static void rehash(void) {
  size_t n = nslots ? nslots * 2 : 1024;
  Slot *t = sr_xcalloc(n, sizeof *t);
  for (size_t i = 0; i < nslots; i++) {
    if (!slots[i].s) continue;
    size_t j = slots[i].hash & (n - 1);
    while (t[j].s) j = (j + 1) & (n - 1);
    t[j] = slots[i];
  }
  free(slots);
  slots = t;
  nslots = n;
}

const char *sr_intern(const char *s, size_t n) {
  if (nused * 2 >= nslots) rehash();
  if (!strings) strings = sr_arena_new();
  uint32_t h = sr_hash_bytes(s, n, SR_HASH_INIT);
  size_t j = h & (nslots - 1);
  while (slots[j].s) {
    if (slots[j].hash == h && slots[j].len == n && memcmp(slots[j].s, s, n) == 0)
      return slots[j].s;
    j = (j + 1) & (nslots - 1);
  }
  const char *copy = sr_arena_strndup(strings, s, n);
  slots[j] = (Slot){copy, (uint32_t)n, h};
  nused++;
  return copy;
}

const char *sr_intern_cstr(const char *s) { return sr_intern(s, strlen(s)); }
