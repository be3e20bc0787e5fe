#!/bin/sh
# jnp15a_oracle.sh: jnp15a_values.jxr (jnp.finfo, jnp.iinfo and
# x.at[idx].divide/power) must print exactly what jnp15a_values.py
# prints with numpy.  Skips (77) without a python3 with numpy.
: "${PYTHON:=/usr/bin/python3}"
if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
  echo "jnp15a_oracle.sh: no python3 with numpy ($PYTHON): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests
tmp=${TMPDIR:-/tmp}/jnp15a_oracle.$$
trap 'rm -f "$tmp".want "$tmp".got' EXIT
"$PYTHON" "$dir/jnp15a_values.py" > "$tmp".want || exit 1
(cd "$dir" && "${SHARDREPL:-$OLDPWD/src/shardrepl}" jnp15a_values.jxr) > "$tmp".got 2>&1 || exit 1
exec diff -u "$tmp".want "$tmp".got
