#!/bin/sh
# mem17_numpy.sh: the expected outputs of the in-place goldens
# (tests/golden/mem17_inplace*.jxr) are what numpy computes: their numpy
# twins (tests/mem17/*_np.py) must print the same lines, compared as
# golden.sh compares (tests/golden_cmp).  Skipped (77) where there is no
# python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "mem17_numpy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
cmp_prog="$top_builddir/tests/golden_cmp"
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
for t in inplace inplace_mesh; do
  "$PYTHON_NUMPY" "$top_srcdir/tests/mem17/${t}_np.py" > "$tmp" || exit 1
  want="$top_srcdir/tests/golden/mem17_$t.out"
  if test -x "$cmp_prog"; then
    "$cmp_prog" "$want" "$tmp" || { echo "mem17_numpy.sh: numpy disagrees with $want"; exit 1; }
  else
    cmp -s "$want" "$tmp" || { echo "mem17_numpy.sh: numpy disagrees with $want"; diff "$want" "$tmp"; exit 1; }
  fi
  echo "PASS numpy agrees with $want"
done
