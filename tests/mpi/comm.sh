#!/bin/sh
# comm.sh: check_comm_mpi (every operation of the MPI backend against
# comm_local, byte for byte, and the agreed failures) under mpirun with 2
# and 4 ranks.  Exit 77 without mpirun.
# In a sanitized build Open MPI's plugins leave allocations behind that no
# LeakSanitizer suppression can name (HACKING.md, "Sanitizers"), so this
# test's processes check for leaks only where ASAN_OPTIONS asks for it.
ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
export ASAN_OPTIONS
mpirun=${MPIRUN:-mpirun}
if ! command -v "$mpirun" > /dev/null 2>&1; then echo "SKIP: no mpirun"; exit 77; fi
prog=${top_builddir:-.}/tests/mpi/check_comm_mpi
[ -x "$prog" ] || { echo "comm.sh: $prog is not built" >&2; exit 99; }
flags="--oversubscribe --stdin none --mca pml ob1 -x OPENBLAS_NUM_THREADS=1"
[ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
OMPI_MCA_pml=ob1
export OMPI_MCA_pml
fail=0
for n in ${SR_MPI_RANKS:-2 4}; do
  echo "== mpirun -np $n check_comm_mpi"
  timeout 300 $mpirun -np "$n" $flags "$prog" < /dev/null || fail=1
done
exit $fail
