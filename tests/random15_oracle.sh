#!/bin/sh
# random15_oracle.sh: random15_values.jxr (split, fold_in under jit, vmap,
# scan) must print exactly the key words random15_values.py computes with
# a pure-Python threefry2x32.  Skips (77) without a python3.
: "${PYTHON:=/usr/bin/python3}"
if ! "$PYTHON" -c 'pass' 2>/dev/null; then
  echo "random15_oracle.sh: no python3 ($PYTHON): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests
tmp=${TMPDIR:-/tmp}/random15_oracle.$$
trap 'rm -f "$tmp".want "$tmp".got' EXIT
"$PYTHON" "$dir/random15_values.py" > "$tmp".want || exit 1
(cd "$dir" && "${SHARDREPL:-$OLDPWD/src/shardrepl}" random15_values.jxr) > "$tmp".got 2>&1 || exit 1
exec diff -u "$tmp".want "$tmp".got
