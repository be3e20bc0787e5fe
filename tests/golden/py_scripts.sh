#!/bin/sh
# py_scripts.sh: the golden scripts that are *.py files (every
# tests/golden/NAME.py with a NAME.out beside it), run as golden.sh runs a
# .jxr one: shardrepl gives a *.py file Python's script semantics.  (They
# are not tests of their own: a .py test extension would claim the logs
# of the .sh tests that have a .py helper of the same name.)
dir=${top_srcdir:-.}/tests/golden
fail=0 n=0
for t in "$dir"/*.py; do
  [ -f "${t%.py}.out" ] || continue
  n=$((n + 1))
  sh "${top_srcdir:-.}/tests/golden.sh" "$t" || fail=1
done
[ $n -gt 0 ] || { echo "py_scripts.sh: no golden .py scripts in $dir"; exit 99; }
exit $fail
