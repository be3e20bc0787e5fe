#!/bin/sh
# golden.sh: runs one golden script and compares what it prints with the
# expected output kept next to it.
#
#   golden.sh [--update] DIR/NAME.jxr   (or DIR/NAME.py: a Python script)
#
# The script runs as `$SR_RUNNER $SHARDREPL ARGS NAME.jxr` from DIR (so that
# error messages name it the same way in every build tree, and `:load` finds
# files next to it), with stdout and stderr merged in the order they were
# written.  The output must equal DIR/NAME.out byte for byte, and the exit
# status must be the expected one.  The comparison is tests/golden_cmp's:
# text and integers byte for byte, floating-point numbers within their
# dtype's tolerance (a BLAS kernel, libm or thread count may change their
# last digits).  On a mismatch it names the numbers and the first other
# difference, and a unified diff follows.
#
# The first lines of the script may be a header, one directive a line:
#   # exit: N        the expected exit status (0 when absent)
#   # args: ...      options given before the script (shell words: -k, --devices 4)
#   # stdin: yes     feed the script on stdin instead of naming it: the session
#                    behaves as the interactive REPL does (without a terminal)
#   # oracle: python the script is plain Python too, and its .out is what
#                    CPython prints for it (golden/py_oracle.sh checks that)
#   # floats: exact  compare the floats byte for byte too (a script about
#                    number formatting, whose floats no kernel computes)
#
# Environment:
#   SHARDREPL          the program (default: src/shardrepl)
#   GOLDEN_CMP         the comparison (default: tests/golden_cmp beside src/;
#                      when it is not built, outputs compare byte for byte)
#   SR_RUNNER          a command prefix, e.g. "mpirun -n 4 --oversubscribe"
#   SR_GOLDEN_UPDATE   when 1 (or with --update): write NAME.out instead of
#                      comparing, and report the exit status it had
#
# Exit: 0 pass, 1 fail, 99 the harness could not run.
update=${SR_GOLDEN_UPDATE:-0}
if [ "$1" = "--update" ]; then update=1; shift; fi
if [ $# -ne 1 ]; then
  echo "usage: golden.sh [--update] SCRIPT.jxr" >&2
  exit 99
fi
script=$1
prog=${SHARDREPL:-src/shardrepl}
case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac
if [ ! -x "$prog" ]; then
  echo "golden.sh: $prog is not an executable (set SHARDREPL)" >&2
  exit 99
fi
if [ ! -f "$script" ]; then
  echo "golden.sh: no such script: $script" >&2
  exit 99
fi
dir=$(dirname "$script")
base=$(basename "$script")
name=${base%.jxr}
name=${name%.py}
expected=$dir/$name.out

# the header
want_exit=0 args= stdin=no floats=
while IFS= read -r line; do
  case $line in
  "# exit:"*) want_exit=$(echo "${line#\# exit:}" | tr -d ' ') ;;
  "# args:"*) args=${line#\# args:} ;;
  "# stdin:"*) stdin=$(echo "${line#\# stdin:}" | tr -d ' ') ;;
  "# floats:"*) floats=$(echo "${line#\# floats:}" | tr -d ' ') ;;
  "# oracle:"* | "# mpi:"*) ;;
  *) break ;;
  esac
done < "$script"
case $want_exit in
'' | *[!0-9]*) echo "golden.sh: $script: bad '# exit:' header" >&2; exit 99 ;;
esac
case $floats in
'' | exact) ;;
*) echo "golden.sh: $script: bad '# floats:' header (only 'exact')" >&2; exit 99 ;;
esac
golden_cmp=${GOLDEN_CMP:-$(dirname "$prog")/../tests/golden_cmp}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/golden.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
got=$tmp/$name.out

# SR_RUNNER and the args header are shell words on purpose
(
  cd "$dir" || exit 99
  eval "set -- $args"
  if [ "$stdin" = yes ]; then
    $SR_RUNNER "$prog" "$@" < "$base"
  else
    $SR_RUNNER "$prog" "$@" "$base" < /dev/null
  fi
) > "$got" 2>&1
rc=$?

if [ "$update" = 1 ]; then
  cp "$got" "$expected" || exit 99
  if [ $rc -ne "$want_exit" ]; then
    echo "golden.sh: $script: wrote $expected; note the exit status was $rc, the header says $want_exit" >&2
  else
    echo "golden.sh: wrote $expected"
  fi
  exit 0
fi

fail=0 note=
if [ ! -f "$expected" ]; then
  echo "FAIL $script: no expected output $expected (make golden-update writes one)"
  echo "--- it printed:"
  cat "$got"
  exit 1
fi
if ! cmp -s "$expected" "$got"; then
  if [ "$floats" = exact ]; then
    report="(# floats: exact: compared byte for byte)" crc=1
  elif [ -x "$golden_cmp" ]; then
    report=$("$golden_cmp" "$expected" "$got")
    crc=$?
  else
    report="($golden_cmp is not built, so it compared byte for byte: make check builds it)" crc=1
  fi
  case $crc in
  0) note=" ($report)" ;;
  1)
    echo "FAIL $script: the output differs from $expected"
    printf '%s\n' "$report"
    diff -u "$expected" "$got" | sed "s|^+++ $tmp/|+++ got/|"
    fail=1
    ;;
  *) echo "golden.sh: $golden_cmp failed" >&2; exit 99 ;;
  esac
fi
if [ $rc -ne "$want_exit" ]; then
  echo "FAIL $script: exit status $rc, expected $want_exit"
  fail=1
fi
[ $fail -eq 0 ] && echo "PASS $script$note"
exit $fail
