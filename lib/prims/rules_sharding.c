/* rules_sharding.c: the sharding family's rules. */
#include "prims/rule.h"

void sr_rules_sharding_init(void);

void sr_rules_sharding_init(void) {}
