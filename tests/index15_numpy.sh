#!/bin/sh
# index15_numpy.sh: the values of gather/scatter indexing (x[idx], .at[],
# jnp.take, take_along_axis, an embedding's gradient) in
# tests/index15_values.jxr against numpy's twins in tests/index15_values.py,
# line by line.  Skipped (77) where there is no python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
: "${SHARDREPL:=src/shardrepl}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "index15_numpy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
tmp=${TMPDIR:-/tmp}/index15_numpy.$$
trap 'rm -f "$tmp".a "$tmp".b' EXIT
"$SHARDREPL" "$top_srcdir/tests/index15_values.jxr" >"$tmp.a" 2>&1 || { cat "$tmp.a"; exit 1; }
"$PYTHON_NUMPY" "$top_srcdir/tests/index15_values.py" >"$tmp.b" || exit 1
diff -u "$tmp.b" "$tmp.a" || exit 1
echo "index15_numpy.sh: $(wc -l <"$tmp.b") lines as numpy prints them"
