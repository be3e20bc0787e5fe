#!/bin/sh
# linalg16_oracle.sh: linalg16_values.jxr (jnp.linalg's and
# jax.scipy.linalg's functions over cholesky, lu and eigh; see its header)
# must print what linalg16_values.py prints with numpy's and scipy's
# linalg, to float32's tolerance (tests/golden_cmp, as the goldens
# compare): numpy computes in float64, shardrepl in float32 as JAX does.
# Skips (77) without a python3 with numpy and scipy.
: "${PYTHON:=/usr/bin/python3}"
if ! "$PYTHON" -c 'import numpy, scipy.linalg' 2>/dev/null; then
  echo "linalg16_oracle.sh: no python3 with numpy and scipy ($PYTHON): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests
cmp=${GOLDEN_CMP:-tests/golden_cmp}
case $cmp in /*) ;; *) cmp=$(pwd)/$cmp ;; esac
tmp=${TMPDIR:-/tmp}/linalg16_oracle.$$
trap 'rm -f "$tmp".want "$tmp".got' EXIT
"$PYTHON" "$dir/linalg16_values.py" > "$tmp".want || exit 1
(cd "$dir" && "${SHARDREPL:-$OLDPWD/src/shardrepl}" linalg16_values.jxr) > "$tmp".got 2>&1 || exit 1
"$cmp" "$tmp".want "$tmp".got && exit 0
diff -u "$tmp".want "$tmp".got
exit 1
