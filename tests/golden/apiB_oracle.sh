#!/bin/sh
# apiB_oracle.sh: apiB_values.jxr (convolutions, windowed reductions) must print
# what apiB_values_oracle.py computes with Debian's numpy
# within float32's tolerance (tests/golden_cmp).  Skips (77)
# without a python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "apiB_oracle.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests/golden
tmp=${TMPDIR:-/tmp}/apiB_oracle.$$
trap 'rm -f "$tmp".want "$tmp".got' EXIT
"$PYTHON_NUMPY" "$dir/apiB_values_oracle.py" > "$tmp".want || exit 1
(cd "$dir" && "${SHARDREPL:-$OLDPWD/src/shardrepl}" apiB_values.jxr) > "$tmp".got 2>&1 || exit 1
exec "${top_builddir:-.}/tests/golden_cmp" "$tmp".want "$tmp".got
