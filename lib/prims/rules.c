/* rules.c: calls every family's initialiser to fill the primitive table. */
#include "prims/prim.h"

void sr_rules_init_all(void);

void sr_rules_init_all(void) {}
