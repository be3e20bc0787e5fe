/* rules_manual.c: the manual family's rules. */
#include "prims/rule.h"

void sr_rules_manual_init(void);

void sr_rules_manual_init(void) {}
