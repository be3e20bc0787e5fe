#!/bin/sh
# linalg15_oracle.sh: linalg15_values.jxr (jnp.linalg.qr, svd and the
# matrix norms 2, -2, 'nuc') must print what linalg15_values.py prints with
# numpy's linalg, to float32's tolerance (tests/golden_cmp, as the goldens
# compare): numpy computes in float64, shardrepl in float32 as JAX does.
# Skips (77) without a python3 with numpy.
: "${PYTHON:=/usr/bin/python3}"
if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
  echo "linalg15_oracle.sh: no python3 with numpy ($PYTHON): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests
cmp=${GOLDEN_CMP:-tests/golden_cmp}
case $cmp in /*) ;; *) cmp=$(pwd)/$cmp ;; esac
tmp=${TMPDIR:-/tmp}/linalg15_oracle.$$
trap 'rm -f "$tmp".want "$tmp".got' EXIT
"$PYTHON" "$dir/linalg15_values.py" > "$tmp".want || exit 1
(cd "$dir" && "${SHARDREPL:-$OLDPWD/src/shardrepl}" linalg15_values.jxr) > "$tmp".got 2>&1 || exit 1
"$cmp" "$tmp".want "$tmp".got && exit 0
diff -u "$tmp".want "$tmp".got
exit 1
