#!/bin/sh
# golden.sh: every golden script and example (tests/golden/*.jxr,
# examples/*.jxr, examples/seeds/*.jxr) through golden_mpi.sh: under
# mpirun -np 2 and 4 and --ranks 2, byte for byte as in one process.
top=${top_srcdir:-.}
exec "${SHELL:-/bin/sh}" "$top/tests/mpi/golden_mpi.sh" "$top"/tests/golden/*.jxr "$top"/examples/*.jxr \
  "$top"/examples/seeds/*.jxr
