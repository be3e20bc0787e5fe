#!/bin/sh
# kernel.sh: the Jupyter kernel through jupyter_client (tests/kernel_test.py),
# in one process and, where mpirun is, under --ranks 2.  Skips (77) when
# shardrepl was built without the kernel or Debian's python3 lacks
# jupyter_client.
: "${SHARDREPL:=src/shardrepl}"
: "${top_srcdir:=.}"
py=/usr/bin/python3
if ! "$py" -c 'import jupyter_client' 2>/dev/null; then
  echo "kernel.sh: no jupyter_client in $py (python3-jupyter-client): skipped"
  exit 77
fi
if "$SHARDREPL" --kernel -f /dev/null 2>&1 | grep -q 'was not built'; then
  echo "kernel.sh: shardrepl was built without the kernel: skipped"
  exit 77
fi
"$py" "$top_srcdir/tests/kernel_test.py" "$SHARDREPL" || exit 1
mpirun=${MPIRUN:-mpirun}
if ! command -v "$mpirun" > /dev/null 2>&1; then
  echo "kernel.sh: no mpirun: --ranks 2 skipped"
  exit 0
fi
OMPI_MCA_pml=ob1 "$py" "$top_srcdir/tests/kernel_test.py" "$SHARDREPL" --ranks 2
