/* rules_control.c: the control family's rules. */
#include "prims/rule.h"

void sr_rules_control_init(void);

void sr_rules_control_init(void) {}
