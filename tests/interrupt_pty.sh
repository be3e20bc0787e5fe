#!/bin/sh
# interrupt_pty.sh: Ctrl-C during long computations on a pseudo-terminal
# (tests/interrupt_pty.py), in one process and, when Open MPI's mpirun is
# there, under --ranks 2.  Skips (77) without a python3.
: "${SHARDREPL:=src/shardrepl}"
py=${PYTHON_NUMPY:-python3}
if ! "$py" -c 'import pty' 2>/dev/null; then
  echo "interrupt_pty.sh: no python3 with the pty module"
  exit 77
fi
script=${top_srcdir:-.}/tests/interrupt_pty.py
"$py" "$script" "$SHARDREPL"
rc=$?
[ $rc = 0 ] || exit $rc
mpirun=${MPIRUN:-mpirun}
if ! command -v "$mpirun" > /dev/null 2>&1; then
  echo "interrupt_pty.sh: no mpirun: --ranks 2 skipped"
  exit 0
fi
OMPI_MCA_pml=ob1 OPENBLAS_NUM_THREADS=1 "$py" "$script" "$SHARDREPL" --ranks 2
