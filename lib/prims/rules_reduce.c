/* rules_reduce.c: the reduce family's rules. */
#include "prims/rule.h"

void sr_rules_reduce_init(void);

void sr_rules_reduce_init(void) {}
