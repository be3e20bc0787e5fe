/* intern.h: process-wide string interning.
 *
 * Interned strings are unique: two interned strings are equal exactly when
 * their pointers are, so primitive names, param keys and mesh axis names are
 * compared with ==.  They live until the process exits.
 */
#ifndef SR_UTIL_INTERN_H
#define SR_UTIL_INTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

const char *sr_intern(const char *s, size_t n);
const char *sr_intern_cstr(const char *s);

/* A hash of n bytes, continuing from h; shared by the hash tables of lib/.
   Eight bytes at a time, each word mixed in by a multiply and a shift
   (the finaliser of splitmix64): the parser hashes the text of every type
   and param list it reads, where a byte at a time cost a tenth of its
   time.  The values depend on the byte order; nothing stores them. */
static inline uint32_t sr_hash_bytes(const void *p, size_t n, uint32_t h) {
  const unsigned char *s = p;
  uint64_t x = h ^ ((uint64_t)n * 0x9E3779B97F4A7C15ull);
  for (; n >= 8; s += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    x = (x ^ w) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
  }
  if (n) {
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)s[i] << (8 * i);
    x = (x ^ w) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
  }
  x = (x ^ (x >> 29)) * 0x94D049BB133111EBull;
  return (uint32_t)(x ^ (x >> 32));
}
#define SR_HASH_INIT 2166136261u

#endif
