#!/bin/sh
# jnp_numpy.sh: jax.numpy's sorting, statistics, shape and helper functions
# checked against numpy (tests/jnp_numpy.py).  Skipped (77) where there is
# no python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_srcdir:=.}"
: "${SHARDREPL:=src/shardrepl}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "jnp_numpy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
exec "$PYTHON_NUMPY" "$top_srcdir/tests/jnp_numpy.py" "$SHARDREPL"
