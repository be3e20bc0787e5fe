#!/bin/sh
# npy_numpy.sh: .npy and .npz files both ways between numpy and lib/exec/npy:
# numpy writes, check_npy reads and compares, check_npy writes, numpy reads
# and compares (and a written .npy must be np.save's bytes exactly).
# Skipped (77) where there is no python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "npy_numpy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$PYTHON_NUMPY" "$top_srcdir/tests/npy_numpy.py" write "$tmp" || exit 1
NPY_XCHECK="$tmp" CK_RUN_CASE=numpy "$top_builddir/tests/unit/check_npy" || exit 1
"$PYTHON_NUMPY" "$top_srcdir/tests/npy_numpy.py" verify "$tmp"
