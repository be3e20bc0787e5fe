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

const char *sr_intern(const char *s, size_t n);
const char *sr_intern_cstr(const char *s);

/* FNV-1a; shared by the hash tables of lib/. */
static inline uint32_t sr_hash_bytes(const void *p, size_t n, uint32_t h) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
  return h;
}
#define SR_HASH_INIT 2166136261u

#endif
