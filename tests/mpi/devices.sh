#!/bin/sh
# devices.sh: the device count of an MPI job.
#
# 1. Without --devices and jax_num_cpu_devices, P ranks have one process's
#    8 devices where 8 splits over them (P = 2, 4), else the smallest
#    multiple of P above 8 (P = 3: 9), under mpirun and --ranks.
# 2. jax.config.update('jax_num_cpu_devices', N) sets the count until a
#    device is first used, as in one process, the ranks holding N/P each;
#    an N that P does not divide is a located ValueError naming both, and
#    the session goes on with the count it had.  :ranks does not fix the
#    count.
# 3. :ranks says which ranks hold a mesh's devices (the set mesh, or that
#    of a Mesh, a NamedSharding or an array it is given), and when they are
#    all on one rank, that no data crosses processes.
#
# The threads line (the pool of SHARDREPL_THREADS, which tests/threads17.sh
# checks) depends on the CPUs, so it is left out, as the BLAS line is.
# The process ids and host names :ranks prints are replaced by PID and
# HOST, and its BLAS line (the kernels of this machine) is dropped.
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
if ! command -v "$mpirun" > /dev/null 2>&1; then echo "SKIP: no mpirun"; exit 77; fi
[ -x "$prog" ] || { echo "devices.sh: $prog is not an executable" >&2; exit 99; }
here=$(cd "$(dirname "$0")" && pwd)
: "${SHELL:=/bin/sh}"
mpiflags="--oversubscribe --quiet --stdin none --merge-stderr-to-stdout --mca pml ob1 -x OPENBLAS_NUM_THREADS=1"
[ "$(id -u)" = 0 ] && mpiflags="$mpiflags --allow-run-as-root"
OPENBLAS_NUM_THREADS=1
OMPI_MCA_pml=ob1
export OPENBLAS_NUM_THREADS OMPI_MCA_pml

tmp=$(mktemp -d "${TMPDIR:-/tmp}/devices.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect NAME COMMAND...: runs COMMAND in $tmp (stdin from /dev/null),
# and compares its output, pids and hosts replaced, and its exit status
# ("status N" last) with $tmp/NAME.want
expect() {
  name=$1
  shift
  (cd "$tmp" && timeout 60 "$@" < /dev/null 2>&1; echo "status $?") |
    sed -e '/^BLAS: /d' -e '/^threads: /d' -e 's/pid [0-9][0-9]*/pid PID/' -e 's/ on [^ ,]*, device/ on HOST, device/' > "$tmp/$name.out"
  if cmp -s "$tmp/$name.want" "$tmp/$name.out"; then
    echo "PASS $name"
  else
    echo "FAIL $name: $*"
    diff -u "$tmp/$name.want" "$tmp/$name.out"
    fail=1
  fi
}

# ---- 1. the default count ----

echo 'print(jax.device_count(), jax.local_device_count(), jax.process_count())' > "$tmp/count.jxr"
for p in 2 3 4; do
  case $p in 3) n=9 ;; *) n=8 ;; esac
  echo "$n $((n / p)) $p" > "$tmp/np$p.want"
  echo "status 0" >> "$tmp/np$p.want"
  expect "np$p" "$mpirun" -np $p $mpiflags "$SHELL" "$here/merged.sh" "$prog" count.jxr
done
cp "$tmp/np3.want" "$tmp/ranks3.want"
expect ranks3 "$prog" --ranks 3 count.jxr

# ---- 2. jax_num_cpu_devices ----

cat > "$tmp/config.jxr" <<'X'
:ranks
jax.config.update('jax_num_cpu_devices', 4)
jax.config.update('jax_num_cpu_devices', 6)
print(jax.device_count(), jax.local_device_count())
:ranks
jax.config.update('jax_num_cpu_devices', 6)
jax.config.update('jax_num_cpu_devices', 3)
X
cat > "$tmp/config.want" <<'X'
3 ranks (mpirun), 9 devices:
  rank 0: pid PID on HOST, devices 0-2 (reads input and prints)
  rank 1: pid PID on HOST, devices 3-5
  rank 2: pid PID on HOST, devices 6-8
config.jxr:2:1: error: ValueError: jax_num_cpu_devices = 4 cannot be split over the 3 MPI ranks of this job: it must be a multiple of 3
    jax.config.update('jax_num_cpu_devices', 4)
    ^
6 2
3 ranks (mpirun), 6 devices:
  rank 0: pid PID on HOST, devices 0-1 (reads input and prints)
  rank 1: pid PID on HOST, devices 2-3
  rank 2: pid PID on HOST, devices 4-5
config.jxr:7:1: error: RuntimeError: jax_num_cpu_devices config should be updated before backends are initialized.
    jax.config.update('jax_num_cpu_devices', 3)
    ^
status 1
X
expect config "$mpirun" -np 3 $mpiflags "$SHELL" "$here/merged.sh" "$prog" -k config.jxr

# ---- 3. where a mesh's devices are ----

cat > "$tmp/mesh.jxr" <<'X'
from jax.sharding import NamedSharding, PartitionSpec as P
small = jax.make_mesh((2,), ('x',))
:ranks small
x = jax.device_put(jnp.arange(4.0), NamedSharding(small, P('x')))
print(x.sum())
:ranks x
:ranks NamedSharding(jax.make_mesh((2, 2), ('a', 'b')), P())
jax.set_mesh(jax.make_mesh((8,), ('a',)))
:ranks
:ranks jax.device_put(jnp.ones(2), jax.devices()[5])
:ranks 1
:ranks jax.sharding.AbstractMesh((2,), ('x',))
X
cat > "$tmp/mesh4.want" <<'X'
4 ranks (--ranks), 8 devices:
  rank 0: pid PID on HOST, devices 0-1 (reads input and prints)
  rank 1: pid PID on HOST, devices 2-3
  rank 2: pid PID on HOST, devices 4-5
  rank 3: pid PID on HOST, devices 6-7
the mesh Mesh('x': 2, axis_types=(Explicit,)) has devices 0-1, all on rank 0: no data crosses processes
6.0
4 ranks (--ranks), 8 devices:
  rank 0: pid PID on HOST, devices 0-1 (reads input and prints)
  rank 1: pid PID on HOST, devices 2-3
  rank 2: pid PID on HOST, devices 4-5
  rank 3: pid PID on HOST, devices 6-7
the mesh Mesh('x': 2, axis_types=(Explicit,)) has devices 0-1, all on rank 0: no data crosses processes
4 ranks (--ranks), 8 devices:
  rank 0: pid PID on HOST, devices 0-1 (reads input and prints)
  rank 1: pid PID on HOST, devices 2-3
  rank 2: pid PID on HOST, devices 4-5
  rank 3: pid PID on HOST, devices 6-7
the mesh Mesh('a': 2, 'b': 2, axis_types=(Explicit, Explicit)) has devices 0-3, on 2 of the 4 ranks (0-1): data moved between them goes through MPI
<jax._src.sharding_impls.set_mesh object>
4 ranks (--ranks), 8 devices:
  rank 0: pid PID on HOST, devices 0-1 (reads input and prints)
  rank 1: pid PID on HOST, devices 2-3
  rank 2: pid PID on HOST, devices 4-5
  rank 3: pid PID on HOST, devices 6-7
the mesh Mesh('a': 8, axis_types=(Explicit,)) has devices 0-7, on 4 of the 4 ranks (0-3): data moved between them goes through MPI
4 ranks (--ranks), 8 devices:
  rank 0: pid PID on HOST, devices 0-1 (reads input and prints)
  rank 1: pid PID on HOST, devices 2-3
  rank 2: pid PID on HOST, devices 4-5
  rank 3: pid PID on HOST, devices 6-7
the array has device 5, on rank 2: no data crosses processes
mesh.jxr:11:1: error: :ranks wants a Mesh, a NamedSharding or an array, got int
    :ranks 1
    ^
mesh.jxr:12:1: error: :ranks wants a Mesh, a NamedSharding or an array, got an AbstractMesh
    :ranks jax.sharding.AbstractMesh((2,), ('x',))
    ^
status 2
X
expect mesh4 "$prog" --ranks 4 -k mesh.jxr

# one process: the same questions, and :ranks leaves the count open
cat > "$tmp/one.jxr" <<'X'
:ranks
jax.config.update('jax_num_cpu_devices', 4)
:ranks jax.make_mesh((2,), ('x',))
:ranks jax.device_put(jnp.ones(()), jax.devices()[3])
X
cat > "$tmp/one.want" <<'X'
one process (no MPI), pid PID: devices 0-7
one process (no MPI), pid PID: devices 0-3
the mesh Mesh('x': 2, axis_types=(Explicit,)) has devices 0-1, all in this process
one process (no MPI), pid PID: devices 0-3
the array has device 3, in this process
status 0
X
expect one "$prog" one.jxr
exit $fail
