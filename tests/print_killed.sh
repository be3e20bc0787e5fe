#!/bin/sh
# print_killed.sh: a batch job whose output is not a terminal keeps what it
# printed when it is killed.  shardrepl flushes its output after each
# statement when it is not a terminal (and print(..., flush=True) flushes
# at once), so a script that prints and then runs on is SIGKILLed once its
# output file has the line; before that it would be sitting in the stdio
# buffer and be lost.  Also under --ranks (rank 0 prints), when Open MPI
# is there.  The wait is bounded (60 s) only so that a failure ends.
: "${top_srcdir:=.}"
: "${SHARDREPL:=src/shardrepl}"
case $SHARDREPL in /*) ;; *) SHARDREPL=$(pwd)/$SHARDREPL ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/print_killed.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail=0

# run NAME WANT ARGS...: starts shardrepl ARGS > NAME.out, waits until the
# file has the line WANT, kills the job with SIGKILL
run() {
  name=$1 want=$2
  shift 2
  "$SHARDREPL" "$@" > "$name.out" 2> "$name.err" &
  pid=$!
  i=0
  while ! grep -qx "$want" "$name.out" 2>/dev/null && [ $i -lt 600 ]; do
    if ! kill -0 $pid 2>/dev/null; then break; fi
    sleep 0.1
    i=$((i + 1))
  done
  kill -KILL $pid 2>/dev/null
  wait $pid 2>/dev/null
  if grep -qx "$want" "$name.out"; then
    echo "ok: $name"
  else
    echo "FAIL: $name: the output file lacks '$want'; it has:"
    cat "$name.out" "$name.err"
    fail=1
  fi
}

cat > statement.jxr <<'EOF'
print('printed before the loop')
while True:
  pass
EOF
run statement 'printed before the loop' statement.jxr

cat > flush.jxr <<'EOF'
def f():
  print('flushed by print', flush=True)
  while True:
    pass
f()
EOF
run flush 'flushed by print' flush.jxr

if "$SHARDREPL" --ranks 2 -e 'print(1)' 2>/dev/null | grep -qx 1; then
  cat > ranks.jxr <<'EOF'
import jax
print('rank', jax.process_index(), 'of', jax.process_count())
while True:
  pass
EOF
  run ranks 'rank 0 of 2' --ranks 2 ranks.jxr
else
  echo "skip: --ranks (no working Open MPI here)"
fi
exit $fail
