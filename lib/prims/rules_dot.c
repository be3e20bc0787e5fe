/* rules_dot.c: the dot family's rules. */
#include "prims/rule.h"

void sr_rules_dot_init(void);

void sr_rules_dot_init(void) {}
