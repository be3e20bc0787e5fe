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
# Every run gets the same options, and no --devices the header does not
# give: the device count is the job's default (8 for P = 2 and 4) or the
# script's own jax_num_cpu_devices.  The outputs and exit statuses must be
# equal byte for byte.
#
# Where the script's device count cannot be split over P ranks, the run
# must fail instead, and this says so: a header's --devices N makes the
# job refuse to start ("--devices N is not a multiple of the P ranks",
# status 2); the first jax.config.update('jax_num_cpu_devices', N)
# statement with N not a multiple of P must raise the located ValueError
# that says so, after printing what one process prints before that line
# (with -k or on stdin the run goes on on other devices, and what follows
# is not compared), and the status is 1.  A script whose header says
# "# mpi: one process, REASON" is not run under MPI.
#
# Environment: SHARDREPL (the program), MPIRUN (mpirun; exit 77 when it is
# missing), SR_MPI_RANKS ("2 4"), SR_MPI_SPAWN (0: skip the --ranks runs),
# SR_MPI_JOBS (2: scripts run side by side).
# Exit: 0 pass, 1 a difference, 77 skipped, 99 the harness could not run.
# In a sanitized build Open MPI's plugins leave allocations behind that no
# LeakSanitizer suppression can name (HACKING.md, "Sanitizers"), so this
# test's processes check for leaks only where ASAN_OPTIONS asks for it.
ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
export ASAN_OPTIONS
ranks=${SR_MPI_RANKS:-2 4}
jobs=${SR_MPI_JOBS:-2}
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
# OPTIONS ARGS; output in $tmp/NAME.out, status in NAME.rc
run() {
  name=$1
  (
    cd "$dir" || exit 99
    eval "set -- $2 \"\$prog\" $3 $args"
    if [ "$stdin" = yes ]; then
      timeout 120 "$@" < "$base"
    else
      timeout 120 "$@" "$base" < /dev/null
    fi
  ) > "$tmp/$name.out" 2>&1
  echo $? > "$tmp/$name.rc"
  # Open MPI's runtime (its libevent) now and then warns of an epoll call
  # on a descriptor it has closed, on the merged output: noise of the
  # launcher, not the program's
  sed -i '/^\[warn\] Epoll [A-Z]*([0-9]*) on fd [0-9]* failed\./d' "$tmp/$name.out"
}

# differs R WHY: reports run R as failed
differs() {
  echo "FAIL $script ($1): $2"
  diff -u "$tmp/local.out" "$tmp/$1.out" | sed -e "s|^--- $tmp/|--- |" -e "s|^+++ $tmp/|+++ |" | head -40
  echo "exit status: one process $(cat "$tmp/local.rc"), $1 $(cat "$tmp/$1.rc")"
  fail=1
}

# check R P: compares run R (of P ranks) with the one-process run, or with
# the error the script's device count must give on P ranks
check() {
  r=$1 p=$2
  count=$((count + 1))
  if [ -n "$hdevices" ] && [ $((hdevices % p)) -ne 0 ]; then
    printf 'shardrepl: --devices %s is not a multiple of the %s ranks\n' "$hdevices" "$p" > "$tmp/want"
    if cmp -s "$tmp/want" "$tmp/$r.out" && [ "$(cat "$tmp/$r.rc")" = 2 ]; then
      echo "PASS $script ($r: --devices $hdevices does not split over $p ranks; the job refuses it)"
    else
      echo "FAIL $script ($r): --devices $hdevices does not split over $p ranks; want the error, status 2:"
      cat "$tmp/want"; echo "got (status $(cat "$tmp/$r.rc")):"; head -20 "$tmp/$r.out"
      fail=1
    fi
    return
  fi
  # the first jax_num_cpu_devices the ranks cannot split: line, count
  bad=$(grep -n "jax\.config\.update(['\"]jax_num_cpu_devices['\"], *[0-9][0-9]*)" "$script" |
    sed "s/^\([0-9]*\):.*jax_num_cpu_devices['\"], *\([0-9]*\)).*/\1 \2/" |
    while read -r l n; do [ $((n % p)) -ne 0 ] && { echo "$l $n"; break; }; done)
  if [ -z "$bad" ]; then
    if ! cmp -s "$tmp/local.out" "$tmp/$r.out" || ! cmp -s "$tmp/local.rc" "$tmp/$r.rc"; then
      differs "$r" "differs from the one-process run"
    else
      echo "PASS $script ($r)"
    fi
    return
  fi
  set -- $bad
  where="jax_num_cpu_devices = $2 at line $1 does not split over $p ranks"
  if [ "$stdin" = yes ]; then loc='<stdin>'; else loc=$base; fi
  msg=": error: ValueError: jax_num_cpu_devices = $2 cannot be split over the $p MPI ranks of this job: it must be a multiple of $p"
  # the error's line in the output, and what comes before it
  k=$(grep -n -F -e "$msg" "$tmp/$r.out" | head -1 | cut -d: -f1)
  if [ -z "$k" ] || ! sed -n "${k}p" "$tmp/$r.out" | grep -q -x -F -e "$loc:$1:1$msg"; then
    differs "$r" "$where; want the error '$loc:$1:1$msg'"
    return
  fi
  head -n $((k - 1)) "$tmp/$r.out" > "$tmp/before"
  head -c "$(wc -c < "$tmp/before")" "$tmp/local.out" > "$tmp/want"
  if ! cmp -s "$tmp/before" "$tmp/want"; then
    differs "$r" "$where; what it prints before the error differs from the one-process run"
  elif [ "$(cat "$tmp/$r.rc")" != 1 ]; then
    differs "$r" "$where; the error's status is $(cat "$tmp/$r.rc"), want 1"
  elif [ "$stdin" != yes ] && ! $keep && [ "$(wc -l < "$tmp/$r.out")" -ne $((k + 2)) ]; then
    differs "$r" "$where; the script goes on after the error"
  else
    echo "PASS $script ($r: $where; it says so there)"
  fi
}

# one SCRIPT: its runs, compared
one() {
  script=$1
  dir=$(dirname "$script")
  base=$(basename "$script")
  args= stdin=no mpi=
  while IFS= read -r line; do
    case $line in
    "# args:"*) args=${line#\# args:} ;;
    "# stdin:"*) stdin=$(echo "${line#\# stdin:}" | tr -d ' ') ;;
    "# mpi:"*) mpi=${line#\# mpi:} ;;
    "# exit:"* | "# oracle:"* | "# floats:"*) ;;
    *) break ;;
    esac
  done < "$script"
  # "# mpi: one process, REASON": a script about what differs from process
  # to process (jax.local_devices(), a late jax_num_cpu_devices) is not
  # compared
  case $mpi in
  " one process"*)
    echo "skip $script:$mpi"
    return 0
    ;;
  esac
  # the header's --devices, and -k
  hdevices= keep=false
  set -- $args
  while [ $# -gt 0 ]; do
    case $1 in
    --devices) hdevices=$2; shift ;;
    --devices=*) hdevices=${1#--devices=} ;;
    -k | --keep-going) keep=true ;;
    esac
    shift
  done
  run local "" ""
  for p in $ranks; do
    # a script read from a file gets no stdin: with none to forward,
    # mpirun's event loop has no descriptor to drop at the end (Open MPI
    # 4.1 sometimes prints "[warn] Epoll MOD(1) on fd N failed" then)
    if [ "$stdin" = yes ]; then sin=; else sin="--stdin none"; fi
    run "np$p" "$mpirun -np $p $mpiflags $sin $SHELL $here/merged.sh" ""
    check "np$p" "$p"
    if [ "$p" = 2 ] && [ "${SR_MPI_SPAWN:-1}" != 0 ]; then
      run "ranks$p" "" "--ranks $p"
      check "ranks$p" "$p"
    fi
  done
}

for script in "$@"; do
  if [ ! -f "$script" ]; then echo "golden_mpi.sh: no such script: $script" >&2; exit 99; fi
done
# $jobs shards of the scripts (shard j: every jobs-th script from the j-th)
# run side by side, each in a directory of its own, with its report in
# $all/j.log and its counts in $all/j.res
all=$tmp
j=0
while [ "$j" -lt "$jobs" ]; do
  (
    tmp=$all/$j
    mkdir "$tmp" "$tmp/ompi" || exit 99
    # each shard's mpiruns keep their session directories in a folder of
    # its own: Open MPI's top session directory under /tmp is shared by
    # every job of the user, and two mpiruns creating and removing it at
    # once fail (ORTE_ERROR_LOG ... session_dir.c)
    TMPDIR=$tmp/ompi
    export TMPDIR
    fail=0 count=0 i=0
    for script in "$@"; do
      [ $((i % jobs)) -eq "$j" ] && one "$script"
      i=$((i + 1))
    done
    echo "$count $fail" > "$all/$j.res"
  ) > "$all/$j.log" 2>&1 &
  j=$((j + 1))
done
wait
fail=0 count=0 j=0
while [ "$j" -lt "$jobs" ]; do
  cat "$all/$j.log"
  if [ -f "$all/$j.res" ]; then
    read -r c f < "$all/$j.res"
    count=$((count + c))
    [ "$f" = 0 ] || fail=1
  else
    echo "golden_mpi.sh: shard $j did not finish" >&2
    fail=1
  fi
  j=$((j + 1))
done
echo "golden_mpi: $count runs compared"
exit $fail
