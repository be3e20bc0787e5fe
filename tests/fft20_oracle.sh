#!/bin/sh
# fft20_oracle.sh: fft20_values.jxr (jax.numpy.fft's functions in
# complex128; see its header) must print what fft20_values.py prints with
# numpy.fft, to the goldens' tolerance (tests/golden_cmp).  Skips (77)
# without a python3 with numpy.
: "${PYTHON:=/usr/bin/python3}"
if ! "$PYTHON" -c 'import numpy.fft' 2>/dev/null; then
  echo "fft20_oracle.sh: no python3 with numpy ($PYTHON): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests
cmp=${GOLDEN_CMP:-tests/golden_cmp}
case $cmp in /*) ;; *) cmp=$(pwd)/$cmp ;; esac
tmp=${TMPDIR:-/tmp}/fft20_oracle.$$
trap 'rm -f "$tmp".want "$tmp".got' EXIT
"$PYTHON" "$dir/fft20_values.py" > "$tmp".want || exit 1
(cd "$dir" && "${SHARDREPL:-$OLDPWD/src/shardrepl}" fft20_values.jxr) > "$tmp".got 2>&1 || exit 1
"$cmp" "$tmp".want "$tmp".got && exit 0
diff -u "$tmp".want "$tmp".got
exit 1
