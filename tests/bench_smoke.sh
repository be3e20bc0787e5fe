#!/bin/sh
# bench_smoke.sh: every benchmark program of `make bench` runs to the end on
# a tiny input and prints its figures' lines.  No figure is judged (timings
# belong in `make bench`, bench/README.md); this only keeps the benchmarks
# from rotting unseen, as bench_check did once (it checked a file before
# the type rules were registered, and every primitive had none).
: "${top_srcdir:=.}" "${top_builddir:=.}"
b=$top_builddir/bench
py=${PYTHON_NUMPY:-python3}
command -v "$py" >/dev/null 2>&1 || py=python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
# run NAME PATTERN CMD...: CMD exits 0 and its output has a line matching PATTERN
run() {
  name=$1 pat=$2; shift 2
  if ! "$@" > "$tmp/out" 2>&1; then
    echo "FAIL $name: exit status $? from: $*"; sed 's/^/  /' "$tmp/out" | head -20; fail=1
  elif ! grep -q "$pat" "$tmp/out"; then
    echo "FAIL $name: no line matching '$pat' in the output of: $*"; sed 's/^/  /' "$tmp/out" | head -20; fail=1
  else
    echo "ok   $name"
  fi
}
"$py" "$top_srcdir/bench/gen_jaxpr.py" --mb 0.02 -o "$tmp/small.txt" >/dev/null 2>&1 || { echo "gen_jaxpr.py failed"; exit 1; }
run bench_text "prints back byte for byte" "$b/bench_text" -n 1 "$tmp/small.txt"
run "bench_check (checking)" "small.txt .*ms" "$b/bench_check" -n 1 "$tmp/small.txt"
run "bench_check (tracing)" "linearity" "$b/bench_check" -n 1 -t 100,200
run "bench_check (tracing a loop)" "linearity" "$b/bench_check" -n 1 -t 100,200 -l 50
run bench_ad "per eqn" "$b/bench_ad" -n 1 100
run bench_vmap "results agree: yes" "$b/bench_vmap" -n 1 100
run bench_exec "raw cblas_sgemm" "$b/bench_exec" -n 1
run bench_kern "of memcpy" "$b/bench_kern" -n 1
run mpi_local "all-reduce" "$b/mpi_local" -n 1 -m 1 -d 4
if [ -n "$MPIRUN" ]; then
  root=; [ "$(id -u)" = 0 ] && root=--allow-run-as-root
  run "mpi_allreduce (2 ranks)" "shardrepl" $MPIRUN --oversubscribe --quiet $root -np 2 "$b/mpi_allreduce" -n 1 -m 1
fi
exit $fail
