/* rule_cache.h: the type rules' results, remembered by their inputs. */
#ifndef SR_CHECK_RULE_CACHE_H
#define SR_CHECK_RULE_CACHE_H

#include "check/rule.h"

/* sr_type_rule_run(cx, e, out), or the results it gave the last time for
   the same primitive, input types, params and context (rule_cache.c says
   which equations are remembered).  SHARDREPL_RULE_CACHE=0 turns it off. */
int sr_type_rule_cached(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out);

/* The rule itself, then the size check of the results. */
int sr_type_rule_run(SrTypeCtx *cx, const SrRuleEqn *e, const SrType **out);

#endif
