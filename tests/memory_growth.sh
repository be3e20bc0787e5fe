#!/bin/sh
# memory_growth.sh: a structure that grows one small allocation at a time
# past what the process may get (a list comprehension over range(2**40),
# append in a loop, a join over a generator) is Python's MemoryError at
# the expression that grew it, and the session goes on (issue 11, item 9):
# the interpreter checks malloc's heap against sr_mem_limit every 65536
# steps.  Without the check the process aborted with "out of memory".
# Runs under `ulimit -v` (a sanitizer build, which cannot start under one,
# skips).
: "${SHARDREPL:=src/shardrepl}"
case $SHARDREPL in /*) ;; *) SHARDREPL=$(pwd)/$SHARDREPL ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memgrowth.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/grow.jxr" <<'PY'
l = [i for i in range(2**40)]
print('after comprehension')
l = []
for i in range(2**40):
    l.append(i)
print('after append loop', len(l) > 1000000)
l = None
s = 'x'.join(str(i) for i in range(2**40))
print('still here')
PY
ok=$( (ulimit -v 2000000; "$SHARDREPL" -e 'print(1)') 2>/dev/null)
if [ "$ok" != 1 ]; then
  echo "memory_growth.sh: $SHARDREPL does not start under ulimit -v (a sanitizer build?): skipped"
  exit 77
fi
(ulimit -v 2000000; cd "$tmp" && "$SHARDREPL" -k grow.jxr) > "$tmp/out" 2>&1
rc=$?
# where in the line the check fires depends on the heap, so each error is
# matched by its line and type, and the prints must all come
fail=0
for want in '^grow.jxr:1:[0-9]*: error: MemoryError$' '^after comprehension$' \
    '^grow.jxr:5:[0-9]*: error: MemoryError$' '^after append loop True$' \
    '^grow.jxr:8:[0-9]*: error: MemoryError$' '^still here$'; do
  grep -q "$want" "$tmp/out" || { echo "FAIL: no line matching $want"; fail=1; }
done
[ "$(grep -c 'error:' "$tmp/out")" = 3 ] || { echo "FAIL: not exactly three errors"; fail=1; }
[ $rc -eq 1 ] || { echo "FAIL: exit status $rc (want 1)"; fail=1; }
if [ $fail = 1 ]; then cat "$tmp/out"; exit 1; fi
echo "PASS: three MemoryErrors, the session went on"
