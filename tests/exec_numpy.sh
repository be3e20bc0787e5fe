#!/bin/sh
# exec_numpy.sh: random sharded programs run by shardrepl and checked against
# numpy (tests/exec_numpy.py), for a few seeds.  Skipped (77) where there is
# no python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
: "${SHARDREPL:=src/shardrepl}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "exec_numpy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
for seed in 20250601 7 11; do
  "$PYTHON_NUMPY" "$top_srcdir/tests/exec_numpy.py" "$SHARDREPL" 24 "$seed" || exit 1
done
