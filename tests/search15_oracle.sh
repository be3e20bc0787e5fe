#!/bin/sh
# search15_oracle.sh: search15_values.jxr (jnp.searchsorted, jnp.digitize,
# jnp.interp, jax.random.choice) must print exactly what search15_values.py
# prints with numpy.  Skips (77) without a python3 with numpy.
: "${PYTHON:=/usr/bin/python3}"
if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
  echo "search15_oracle.sh: no python3 with numpy ($PYTHON): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests
tmp=${TMPDIR:-/tmp}/search15_oracle.$$
trap 'rm -f "$tmp".want "$tmp".got' EXIT
"$PYTHON" "$dir/search15_values.py" > "$tmp".want || exit 1
(cd "$dir" && "${SHARDREPL:-$OLDPWD/src/shardrepl}" search15_values.jxr) > "$tmp".got 2>&1 || exit 1
exec diff -u "$tmp".want "$tmp".got
