/* rules_elementwise.c: the elementwise family's rules. */
#include "prims/rule.h"

void sr_rules_elementwise_init(void);

void sr_rules_elementwise_init(void) {}
