/* rules_structural.c: the structural family's rules. */
#include "prims/rule.h"

void sr_rules_structural_init(void);

void sr_rules_structural_init(void) {}
