#!/bin/sh
# golden_mpi.sh: the golden scripts under Open MPI print exactly what they
# print in one process.
#
#   golden_mpi.sh [-n "2 4"] SCRIPT.jxr...
#
# Each script runs as tests/golden.sh runs it (from its directory, with the
# options of its "# args:" header, on stdin when its header says
# "# stdin: yes", stdout and stderr merged), once in one process and once
# under `mpirun -np P` for each P of -n (default "2 4"), and, for P = 2,
# once more as `shardrepl --ranks 2` (the job the program spawns itself).
# All get the same --devices: the header's, or 8 (the one-process
# default); a P that does not divide it is skipped.  The outputs and exit
# statuses must be equal byte for byte.
#
# Environment: SHARDREPL (the program), MPIRUN (mpirun; exit 77 when it is
# missing), SR_MPI_RANKS ("2 4"), SR_MPI_SPAWN (0: skip the --ranks runs).
# Exit: 0 pass, 1 a difference, 77 skipped, 99 the harness could not run.
ranks=${SR_MPI_RANKS:-2 4}
if [ "$1" = "-n" ]; then ranks=$2; shift 2; fi
prog=${SHARDREPL:-src/shardrepl}
case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac
mpirun=${MPIRUN:-mpirun}
if ! command -v "$mpirun" > /dev/null 2>&1; then
  echo "SKIP: no mpirun"
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
: "${SHELL:=/bin/sh}"
if [ ! -x "$prog" ]; then echo "golden_mpi.sh: $prog is not an executable" >&2; exit 99; fi

# see DESIGN.md, "Open MPI here"
mpiflags="--oversubscribe --quiet --merge-stderr-to-stdout --mca pml ob1 -x OPENBLAS_NUM_THREADS=1"
[ "$(id -u)" = 0 ] && mpiflags="$mpiflags --allow-run-as-root"
OPENBLAS_NUM_THREADS=1
OMPI_MCA_pml=ob1
export OPENBLAS_NUM_THREADS OMPI_MCA_pml

tmp=$(mktemp -d "${TMPDIR:-/tmp}/golden_mpi.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# run NAME PREFIX OPTIONS: runs the current script as PREFIX shardrepl
# OPTIONS --devices N ARGS; output in $tmp/NAME.out, status in NAME.rc
run() {
  name=$1
  (
    cd "$dir" || exit 99
    eval "set -- $2 \"\$prog\" $3 --devices $devices $args"
    if [ "$stdin" = yes ]; then
      timeout 120 "$@" < "$base"
    else
      timeout 120 "$@" "$base" < /dev/null
    fi
  ) > "$tmp/$name.out" 2>&1
  echo $? > "$tmp/$name.rc"
}

fail=0
count=0
for script in "$@"; do
  if [ ! -f "$script" ]; then echo "golden_mpi.sh: no such script: $script" >&2; exit 99; fi
  dir=$(dirname "$script")
  base=$(basename "$script")
  args= stdin=no
  while IFS= read -r line; do
    case $line in
    "# args:"*) args=${line#\# args:} ;;
    "# stdin:"*) stdin=$(echo "${line#\# stdin:}" | tr -d ' ') ;;
    "# exit:"* | "# oracle:"* | "# floats:"*) ;;
    *) break ;;
    esac
  done < "$script"
  # the header's --devices N wins; else the one-process default
  devices=8
  set -- $args
  while [ $# -gt 0 ]; do
    case $1 in
    --devices) devices=$2; shift ;;
    --devices=*) devices=${1#--devices=} ;;
    esac
    shift
  done
  # a script that sets jax_num_cpu_devices itself gets that many
  n=$(sed -n "s/.*jax_num_cpu_devices['\"], *\([0-9][0-9]*\).*/\1/p" "$script" | head -1)
  [ -n "$n" ] && devices=$n
  args=$(printf '%s\n' "$args" | sed 's/--devices[ =][0-9]*//')
  set -- "$script"
  run local "" ""
  runs=
  for p in $ranks; do
    [ $((devices % p)) -eq 0 ] || continue
    run "np$p" "$mpirun -np $p $mpiflags $SHELL $here/merged.sh" ""
    runs="$runs np$p"
    if [ "$p" = 2 ] && [ "${SR_MPI_SPAWN:-1}" != 0 ]; then
      run "ranks$p" "" "--ranks $p"
      runs="$runs ranks$p"
    fi
  done
  for r in $runs; do
    count=$((count + 1))
    if ! cmp -s "$tmp/local.out" "$tmp/$r.out" || ! cmp -s "$tmp/local.rc" "$tmp/$r.rc"; then
      echo "FAIL $script ($r, --devices $devices): differs from the one-process run"
      diff -u "$tmp/local.out" "$tmp/$r.out" | sed -e "s|^--- $tmp/|--- |" -e "s|^+++ $tmp/|+++ |" | head -40
      echo "exit status: one process $(cat "$tmp/local.rc"), $r $(cat "$tmp/$r.rc")"
      fail=1
    else
      echo "PASS $script ($r, --devices $devices)"
    fi
  done
done
echo "golden_mpi: $count runs compared"
exit $fail
