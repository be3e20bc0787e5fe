#!/bin/sh
# threads17.sh: the simulated devices of one process run on a thread pool
# (issue 17; lib/exec/pool.c, eval_par.c) and give the same bits as when
# they run one after another.  tests/threads17_bits.jxr (matmuls,
# elementwise math, reductions, a transpose, cumsum, sort, gradients
# through a scan, the all-reduce and reduce-scatter of unreduced
# gradients, manual collectives, random numbers) runs with
# SHARDREPL_THREADS=1 and =4, each under OPENBLAS_NUM_THREADS=2, and on 4
# MPI ranks of one device each under OPENBLAS_NUM_THREADS=1 (OpenBLAS
# rounds a dot differently with two threads than with one: a device's
# dot uses one wherever it runs); every result must be the same file,
# byte for byte.  :ranks must show the pool's size and that the run with
# 4 threads used it (batches of device tasks), the run with 1 not;
# --version shows the size too.
: "${SHARDREPL:=src/shardrepl}"
: "${top_srcdir:=.}"
case $SHARDREPL in /*) ;; *) SHARDREPL=$(pwd)/$SHARDREPL ;; esac
script=$(cd "$top_srcdir/tests" && pwd)/threads17_bits.jxr
tmp=$(mktemp -d "${TMPDIR:-/tmp}/threads17.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
{ cat "$script"; echo ':ranks'; } >"$tmp/bits.jxr"
for t in 1 4; do
  mkdir "$tmp/t$t"
  (cd "$tmp/t$t" && OPENBLAS_NUM_THREADS=2 SHARDREPL_THREADS=$t "$SHARDREPL" --devices 4 "$tmp/bits.jxr" >out.txt 2>&1) ||
    { echo "FAIL: SHARDREPL_THREADS=$t:"; cat "$tmp/t$t/out.txt"; fail=1; }
done
n=$(ls "$tmp/t1"/r*.npy 2>/dev/null | wc -l)
[ "$n" -ge 14 ] || { echo "FAIL: only $n results"; fail=1; }
for f in "$tmp/t1"/r*.npy; do
  b=$(basename "$f")
  cmp -s "$f" "$tmp/t4/$b" || { echo "FAIL: $b ($(grep "^${b%.npy} " "$tmp/t1/out.txt")) differs with 4 threads"; fail=1; }
done
mpirun=${MPIRUN:-mpirun}
if command -v "$mpirun" >/dev/null 2>&1; then
  flags="--oversubscribe --mca pml ob1 -x OPENBLAS_NUM_THREADS=1"
  [ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
  mkdir "$tmp/mpi"
  (cd "$tmp/mpi" && ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} OMPI_MCA_pml=ob1 \
    timeout 300 $mpirun -np 4 $flags "$SHARDREPL" "$script" >out.txt 2>&1 </dev/null) ||
    { echo "FAIL: mpirun:"; cat "$tmp/mpi/out.txt"; fail=1; }
  for f in "$tmp/t1"/r*.npy; do
    b=$(basename "$f")
    cmp -s "$f" "$tmp/mpi/$b" || { echo "FAIL: $b ($(grep "^${b%.npy} " "$tmp/t1/out.txt")) differs on 4 ranks"; fail=1; }
  done
else
  echo "threads17.sh: no mpirun, the comparison with 4 ranks skipped"
fi
grep -v '^threads:\|pid' "$tmp/t1/out.txt" >"$tmp/o1"
grep -v '^threads:\|pid' "$tmp/t4/out.txt" >"$tmp/o4"
cmp -s "$tmp/o1" "$tmp/o4" || { echo "FAIL: the outputs differ:"; diff "$tmp/o1" "$tmp/o4"; fail=1; }
grep -q '^threads: 1 (SHARDREPL_THREADS=1); 0 batches of 0 device tasks so far$' "$tmp/t1/out.txt" ||
  { echo "FAIL: :ranks with 1 thread:"; grep '^threads' "$tmp/t1/out.txt"; fail=1; }
grep -q '^threads: 4 (SHARDREPL_THREADS=4); [1-9][0-9]* batches of [1-9][0-9]* device tasks so far$' "$tmp/t4/out.txt" ||
  { echo "FAIL: :ranks with 4 threads (the pool unused?):"; grep '^threads' "$tmp/t4/out.txt"; fail=1; }
v=$(SHARDREPL_THREADS=3 "$SHARDREPL" --version)
echo "$v" | grep -q '^threads: 3 (SHARDREPL_THREADS=3)$' || { echo "FAIL: --version: $v"; fail=1; }
v=$(SHARDREPL_THREADS= "$SHARDREPL" --version)
echo "$v" | grep -q '^threads: [1-9][0-9]* (the CPUs this process may use)$' || { echo "FAIL: --version: $v"; fail=1; }
[ $fail = 0 ] && echo "threads17.sh: ok"
exit $fail
