/* rules.c: calls every family's initialiser to fill the primitive table. */
#include "prims/prim.h"

void sr_rules_init_all(void);

/* one per family file */
void sr_rules_elementwise_init(void);
void sr_rules_structural_init(void);
void sr_rules_reduce_init(void);
void sr_rules_dot_init(void);
void sr_rules_sharding_init(void);
void sr_rules_control_init(void);
void sr_rules_manual_init(void);
void sr_rules_random_init(void);

void sr_rules_init_all(void) {
  sr_rules_elementwise_init();
  sr_rules_structural_init();
  sr_rules_reduce_init();
  sr_rules_dot_init();
  sr_rules_sharding_init();
  sr_rules_control_init();
  sr_rules_manual_init();
  sr_rules_random_init();
}
