#!/bin/sh
# random15_more_oracle.sh: random15_more.jxr (randint, bernoulli,
# rademacher, gumbel, permutation, categorical, choice; eager, jit, vmap,
# scan) must print exactly what random15_more.py computes in numpy on a
# pure-Python threefry2x32.  Skips (77) without a python3 with numpy.
: "${PYTHON:=/usr/bin/python3}"
if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
  echo "random15_more_oracle.sh: no python3 with numpy ($PYTHON): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests
tmp=${TMPDIR:-/tmp}/random15_more_oracle.$$
trap 'rm -f "$tmp".want "$tmp".got' EXIT
"$PYTHON" "$dir/random15_more.py" > "$tmp".want || exit 1
(cd "$dir" && "${SHARDREPL:-$OLDPWD/src/shardrepl}" random15_more.jxr) > "$tmp".got 2>&1 || exit 1
exec diff -u "$tmp".want "$tmp".got
