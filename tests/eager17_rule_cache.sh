#!/bin/sh
# eager17_rule_cache.sh: the type rules' remembered results change nothing
# (lib/check/rule_cache.c): golden scripts that bind the same operands with
# other params, weak types, mesh contexts and errors give the same text with
# the table off (SHARDREPL_RULE_CACHE=0) as with it on, which is their .out.
: "${srcdir:=.}"
status=0
for t in tests/golden/eager17_rule_cache.jxr tests/golden/sharding.jxr tests/golden/sharding_errors.jxr \
  tests/golden/sharding_messages.jxr tests/golden/shard_map_eager_print.jxr; do
  test -f "$srcdir/$t" || continue
  SHARDREPL_RULE_CACHE=0 sh "$srcdir/tests/golden.sh" "$srcdir/$t" >/dev/null 2>&1 || {
    echo "eager17_rule_cache.sh: $t differs with SHARDREPL_RULE_CACHE=0"
    status=1
  }
done
exit $status
