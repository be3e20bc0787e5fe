#!/bin/sh
# reduce_precision_numpy.sh: the values of tests/golden/reduce_precision.out
# (lax.reduce_precision on float32 and float64) against an independent
# computation in numpy (tests/reduce_precision_numpy.py).
# Skipped (77) where there is no python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "reduce_precision_numpy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
exec "$PYTHON_NUMPY" "$top_srcdir/tests/reduce_precision_numpy.py" "$top_srcdir/tests/golden/reduce_precision.out"
