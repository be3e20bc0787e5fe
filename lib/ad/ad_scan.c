/* ad_scan.c: rules of scan and cond (lax/control_flow/loops.py,
 * conditionals.py). */
#include "ad/ad_rules.h"

void sr_ad_rules_scan_init(void);
void sr_ad_rules_cond_init(void);

void sr_ad_rules_scan_init(void) {}
void sr_ad_rules_cond_init(void) {}
