/* env.h: the environment's on/off switches (SHARDREPL_FOLD=0 and its
 * kind), read once. */
#ifndef SR_UTIL_ENV_H
#define SR_UTIL_ENV_H

#include <stdlib.h>
#include <string.h>

/* Whether switch `name` is on: it is unless the environment sets it to 0.
   *cache holds the answer once read (-1 before). */
static inline int sr_env_on(const char *name, int *cache) {
  if (*cache < 0) {
    const char *s = getenv(name);
    *cache = !(s && strcmp(s, "0") == 0);
  }
  return *cache;
}

#endif
