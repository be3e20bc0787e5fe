#!/bin/sh
# numfmt_oracle.sh: numpy's own printing of a few thousand random arrays and
# floats (tests/numfmt_oracle.py), compared with lib/exec/numfmt by
# check_numfmt.  Skipped (77) where there is no python3 with numpy.
# NUMFMT_SEED picks another set of cases.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "numfmt_oracle.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$PYTHON_NUMPY" "$top_srcdir/tests/numfmt_oracle.py" "$tmp/cases" ${NUMFMT_SEED:-} || exit 1
NUMFMT_CASES="$tmp/cases" CK_RUN_CASE=oracle "$top_builddir/tests/unit/check_numfmt"
