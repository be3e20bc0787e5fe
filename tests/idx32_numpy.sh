#!/bin/sh
# idx32_numpy.sh: the index tables of tests/golden/idx32_tables.jxr and
# idx32_update.jxr against numpy's indexing (tests/idx32_numpy.py prints
# the lines those goldens print).  Skipped (77) without python3's numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "idx32_numpy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
for f in tables update; do
  "$PYTHON_NUMPY" "$top_srcdir/tests/idx32_numpy.py" "$top_srcdir/tests/golden/idx32_$f.jxr" |
    diff -u - "$top_srcdir/tests/golden/idx32_$f.out" || exit 1
done
echo "idx32_numpy.sh: both tables as numpy indexes them"
