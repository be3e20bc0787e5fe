#!/bin/sh
# manual_golden.sh: golden tests of the control-flow and manual-mode type
# rules.  For each tests/manual_golden/NAME.jaxpr, runs
# `shardrepl --check NAME.jaxpr` in that folder and compares what it prints
# (stdout and stderr), followed by a line "[exit N]", with NAME.out.
#
#   UPDATE=1 tests/manual_golden.sh    rewrites the .out files instead
#
# Environment (set by `make check`): top_srcdir, SHARDREPL.
srcdir=${top_srcdir:-$(dirname "$0")/..}
dir=$srcdir/tests/manual_golden
shardrepl=${SHARDREPL:-shardrepl}
case $shardrepl in /*) ;; *) shardrepl=$(cd "$(dirname "$shardrepl")" && pwd)/$(basename "$shardrepl") ;; esac
tmp=${TMPDIR:-/tmp}/manual_golden.$$
trap 'rm -f "$tmp"' EXIT INT TERM
fail=0 count=0
for f in "$dir"/*.jaxpr; do
  name=$(basename "$f" .jaxpr)
  (cd "$dir" && "$shardrepl" --check "$name.jaxpr" >"$tmp" 2>&1; echo "[exit $?]" >>"$tmp")
  count=$((count + 1))
  if [ "${UPDATE:-}" = 1 ]; then
    cp "$tmp" "$dir/$name.out"
  elif ! cmp -s "$tmp" "$dir/$name.out"; then
    echo "FAIL: $name"
    diff -u "$dir/$name.out" "$tmp" | head -40
    fail=$((fail + 1))
  fi
done
[ "$count" -gt 0 ] || { echo "no tests found in $dir"; exit 1; }
echo "manual_golden: $count texts, $fail failed"
[ "$fail" -eq 0 ]
