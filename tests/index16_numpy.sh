#!/bin/sh
# index16_numpy.sh: the values of tests/index16_values.jxr (.at[].apply, lax's
# gather/scatter, nan-quantiles, reductions with initial=/where=, einsum,
# partition) against numpy's twins in tests/index16_values.py, line by line.
# Skipped (77) where there is no python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
: "${SHARDREPL:=src/shardrepl}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "index16_numpy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
tmp=${TMPDIR:-/tmp}/index16_numpy.$$
trap 'rm -f "$tmp".a "$tmp".b' EXIT
"$SHARDREPL" "$top_srcdir/tests/index16_values.jxr" >"$tmp.a" 2>&1 || { cat "$tmp.a"; exit 1; }
"$PYTHON_NUMPY" "$top_srcdir/tests/index16_values.py" >"$tmp.b" || exit 1
diff -u "$tmp.b" "$tmp.a" || exit 1
echo "index16_numpy.sh: $(wc -l <"$tmp.b") lines as numpy prints them"
