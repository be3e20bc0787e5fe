#!/bin/sh
# faults.sh: failures under MPI.
#
# 1. An error on one rank only -- np.load of a file, or :load of a script,
#    that only some ranks' working directories hold (mpirun's -wdir per
#    rank; the script's statements bind names only), also where the ranks
#    that have it go on to a cond or a while loop -- is reported once by
#    rank 0, and every rank goes on: the output is exactly that of one
#    process lacking the file, whichever rank lacks it, in a script (-k)
#    and at the REPL (stdin).
# 2. A rank that dies (kill -9) ends the job within $SR_KILL_LIMIT seconds
#    (default 10) with a message and a non-zero status, instead of hanging:
#    a rank of mpirun's job; a worker of --ranks (the controller exits and
#    takes the other workers with it); the controller of --ranks (its
#    workers exit).
# 3. A name bound to arrays of different global shapes (or dtypes) on
#    different ranks: where they meet -- a collective, a jit, a host copy
#    for printing, a value every rank holds whole -- every rank fails with
#    one located error (no placeholder printed, no rank hanging), and the
#    session goes on; the same under --ranks, mpirun and at the REPL.
#
# Environment: SHARDREPL, MPIRUN (exit 77 when missing).
# Exit: 0 pass, 1 fail, 77 skipped, 99 the harness could not run.
prog=${SHARDREPL:-src/shardrepl}
case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac
# In a sanitized build Open MPI's plugins leave allocations behind that no
# LeakSanitizer suppression can name (HACKING.md, "Sanitizers"), so this
# test's processes check for leaks only where ASAN_OPTIONS asks for it.
ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
export ASAN_OPTIONS
mpirun=${MPIRUN:-mpirun}
limit=${SR_KILL_LIMIT:-10}
if ! command -v "$mpirun" > /dev/null 2>&1; then echo "SKIP: no mpirun"; exit 77; fi
[ -x "$prog" ] || { echo "faults.sh: $prog is not an executable" >&2; exit 99; }
here=$(cd "$(dirname "$0")" && pwd)
mpiflags="--oversubscribe --quiet --mca pml ob1 -x OPENBLAS_NUM_THREADS=1"
[ "$(id -u)" = 0 ] && mpiflags="$mpiflags --allow-run-as-root"
OPENBLAS_NUM_THREADS=1
OMPI_MCA_pml=ob1
export OPENBLAS_NUM_THREADS OMPI_MCA_pml

tmp=$(mktemp -d "${TMPDIR:-/tmp}/faults.XXXXXX") || exit 99
pids=
cleanup() {
  exec 3>&- 2>/dev/null
  for p in $pids; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

# ---- 1. an error on one rank ----

mkdir "$tmp/has" "$tmp/lacks"
(cd "$tmp/has" && "$prog" -e "import numpy as np" -e "np.save('only.npy', jnp.arange(3.))") || exit 99
printf 'loaded = 1\nalso = loaded + 1\n' > "$tmp/has/only.jxr"
cat > "$tmp/s.jxr" <<'EOF'
:load only.jxr
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4,), ('X',))
x = jax.device_put(jnp.arange(8.), NamedSharding(mesh, P('X')))
y = np.load('only.npy')
print('every rank goes on:', x.sum())
for i in range(2):
    z = np.load('only.npy') + i
print(jnp.cumsum(x * 2))
q = (np.load('only.npy'), jax.lax.cond(jnp.bool_(True), lambda v: v * 2, lambda v: v, 3.0))
r = (np.load('only.npy'), jax.lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0))
print(jax.lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0))
EOF

# the one-process reference, without the file
(cd "$tmp/lacks" && timeout 60 "$prog" -k --devices 4 ../s.jxr) > "$tmp/ref.out" 2>&1
echo $? > "$tmp/ref.rc"
(cd "$tmp/lacks" && timeout 60 "$prog" --devices 4 < ../s.jxr) > "$tmp/ref_stdin.out" 2>&1
echo $? > "$tmp/ref_stdin.rc"

# mpirun -np 1 -wdir A ... : -np 1 -wdir B ...: rank r runs in dir r
mpmd() {
  set -- "$@"
  cmd="$mpirun $mpiflags"
  sep=
  for d in "$@"; do
    cmd="$cmd $sep -np 1 -wdir $tmp/$d $SHELL $here/merged.sh $prog --devices 4"
    sep=:
  done
  echo "$cmd"
}
check() {
  name=$1 ref=$2
  if cmp -s "$tmp/$ref.out" "$tmp/$name.out" && cmp -s "$tmp/$ref.rc" "$tmp/$name.rc"; then
    echo "PASS one rank's error: $name"
  else
    echo "FAIL one rank's error: $name differs from one process lacking the file"
    diff -u "$tmp/$ref.out" "$tmp/$name.out" | head -30
    echo "exit status: one process $(cat "$tmp/$ref.rc"), $name $(cat "$tmp/$name.rc")"
    fail=1
  fi
}
: "${SHELL:=/bin/sh}"
for layout in "lacks has" "has lacks" "has has lacks has"; do
  name=$(echo "$layout" | tr ' ' '_')
  cmd=$(mpmd $layout)
  # a script with -k: mpirun's argument list takes -k and the script per rank
  (cd "$tmp/lacks" && eval "timeout 60 $(echo "$cmd" | sed 's|--devices 4|--devices 4 -k ../s.jxr|g')" < /dev/null) \
    > "$tmp/$name.out" 2>&1
  echo $? > "$tmp/$name.rc"
  check "$name" ref
  (cd "$tmp/lacks" && eval "timeout 60 $cmd" < "$tmp/s.jxr") > "$tmp/${name}_stdin.out" 2>&1
  echo $? > "$tmp/${name}_stdin.rc"
  check "${name}_stdin" ref_stdin
done

# ---- 2. a rank that dies ----

# start NAME CMD...: runs CMD reading the fifo $tmp/NAME.in, output in
# $tmp/NAME.out and .err; sets $job
start() {
  name=$1
  shift
  rm -f "$tmp/$name.in"
  mkfifo "$tmp/$name.in" || exit 99
  "$@" < "$tmp/$name.in" > "$tmp/$name.out" 2> "$tmp/$name.err" &
  job=$!
  pids="$pids $job"
  exec 3> "$tmp/$name.in"
  printf ':ranks\n' >&3
}

# pid_of NAME RANK: the pid :ranks printed for a rank (waits for it)
pid_of() {
  i=0
  while [ $i -lt 300 ]; do
    p=$(sed -n "s/^  rank $2: pid \([0-9]*\).*/\1/p" "$tmp/$1.out")
    if [ -n "$p" ]; then echo "$p"; return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

# gone PID...: waits up to $limit seconds for all of them to end; prints
# the seconds it took
gone() {
  t=0
  while [ $t -lt $((limit * 10)) ]; do
    alive=0
    for p in "$@"; do
      if kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then alive=1; fi
    done
    if [ $alive = 0 ]; then echo "$((t / 10)).$((t % 10))"; return 0; fi
    sleep 0.1
    t=$((t + 1))
  done
  return 1
}

kill_case() {
  name=$1 victim=$2 waitfor=$3 expect=$4
  if ! secs=$(gone $waitfor); then
    echo "FAIL $name: still running $limit s after kill -9 of $victim"
    fail=1
    exec 3>&-
    return
  fi
  exec 3>&-
  wait "$job" 2>/dev/null
  rc=$?
  if [ -n "$expect" ] && ! grep -q "$expect" "$tmp/$name.err"; then
    echo "FAIL $name: no message matching '$expect'"
    cat "$tmp/$name.err"
    fail=1
  elif [ "$rc" = 0 ]; then
    echo "FAIL $name: exit status 0 after kill -9 of $victim"
    fail=1
  else
    echo "PASS $name: ended in ${secs}s with status $rc"
  fi
}

# a rank of mpirun's job (without --quiet: mpirun says what happened)
start np3 $mpirun -np 3 $(echo "$mpiflags" | sed 's/--quiet//') "$prog"
if r2=$(pid_of np3 2) && r0=$(pid_of np3 0); then
  kill -9 "$r2"
  kill_case np3 "rank 2" "$job $r0" "died\|exited on signal"
else
  echo "FAIL np3: :ranks printed no pids"; cat "$tmp/np3.out" "$tmp/np3.err"; fail=1
fi

# a worker of --ranks
start ranks3 "$prog" --ranks 3
if w1=$(pid_of ranks3 1) && w2=$(pid_of ranks3 2); then
  pids="$pids $w1 $w2"
  kill -9 "$w1"
  kill_case ranks3 "worker rank 1" "$job $w2" "rank 1 (pid $w1) has died"
else
  echo "FAIL ranks3: :ranks printed no pids"; cat "$tmp/ranks3.out" "$tmp/ranks3.err"; fail=1
fi

# the controller of --ranks
start ctl3 "$prog" --ranks 3
if w1=$(pid_of ctl3 1) && w2=$(pid_of ctl3 2); then
  pids="$pids $w1 $w2"
  kill -9 "$job"
  kill_case ctl3 "the controller" "$w1 $w2" ""
else
  echo "FAIL ctl3: :ranks printed no pids"; cat "$tmp/ctl3.out" "$tmp/ctl3.err"; fail=1
fi

# ---- 3. arrays that differ between ranks ----

cat > "$tmp/differ.jxr" <<'EOF'
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4,), ('X',))
n = 16 if jax.process_index() == 0 else 8
x = jax.device_put(jnp.ones(n), NamedSharding(mesh, P('X')))
print('bound')
print(x.sum())
print(x)
y = jnp.arange(4) if jax.process_index() == 1 else jnp.arange(4.0)
print(y + 1)
print(jax.jit(lambda v: v * 2)(x).sum())
z = jax.device_put(jnp.ones(16), NamedSharding(mesh, P('X')))
print(z.sum())
EOF
msg='RuntimeError: the ranks hold arrays of different global shapes or dtypes here'
cat > "$tmp/differ.want" <<EOF
bound
differ.jxr:8:7: error: $msg (rank 0 has f32[16@X]): every rank must bind the same global arrays
    print(x.sum())
          ^
differ.jxr:9:1: error: $msg (rank 0 has f32[16@X]): every rank must bind the same global arrays
    print(x)
    ^
differ.jxr:11:1: error: $msg (rank 0 has f32[4]): every rank must bind the same global arrays
    print(y + 1)
    ^
differ.jxr:12:7: error: $msg (rank 0 has f32[16@X]): every rank must bind the same global arrays
    print(jax.jit(lambda v: v * 2)(x).sum())
          ^
16.0
exit 1
EOF
# differ_case NAME CMD...: runs CMD in $tmp, compares its merged output
differ_case() {
  name=$1
  shift
  (cd "$tmp" && "$@") > "$tmp/$name.out" 2>&1
  echo "exit $?" >> "$tmp/$name.out"
  sed -i 's/^<stdin>:/differ.jxr:/' "$tmp/$name.out"
  if cmp -s "$tmp/differ.want" "$tmp/$name.out"; then
    echo "PASS arrays that differ between ranks: $name"
  else
    echo "FAIL arrays that differ between ranks: $name"
    diff -u "$tmp/differ.want" "$tmp/$name.out" | head -30
    fail=1
  fi
}
differ_case differ_ranks timeout 60 "$prog" --ranks 2 --devices 4 -k differ.jxr
differ_case differ_mpirun timeout 60 $mpirun $mpiflags -np 2 $SHELL $here/merged.sh "$prog" --devices 4 -k differ.jxr
differ_case differ_stdin sh -c "timeout 60 '$prog' --ranks 2 --devices 4 < differ.jxr"

exit $fail
