/* ad_shard_map.c: rules of shard_map (shard_map.py). */
#include "ad/ad_rules.h"

void sr_ad_rules_shard_map_init(void);

void sr_ad_rules_shard_map_init(void) {}
