#!/bin/sh
# help_examples.sh: every built-in's :help example runs (issue 16, part 6).
# `:help --examples` writes them as one script, each after a :reset; the
# script runs in a scratch directory (examples that save files write
# there), and any error, or a documented built-in without an example,
# fails the test.
: "${SHARDREPL:=src/shardrepl}"
case $SHARDREPL in /*) ;; *) SHARDREPL=$(pwd)/$SHARDREPL ;; esac
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$SHARDREPL" -e ':help --examples' > "$tmp/examples.jxr" || { echo "help_examples.sh: :help --examples failed"; exit 1; }
status=0
if grep '^# no example: ' "$tmp/examples.jxr"; then
  echo "help_examples.sh: the built-ins above have no example (lib/cmd/help_examples.def)"
  status=1
fi
n=$(grep -c '^:reset$' "$tmp/examples.jxr")
(cd "$tmp" && "$SHARDREPL" -k examples.jxr < /dev/null > out.txt 2>&1)
if grep -n ': error: ' "$tmp/out.txt" > "$tmp/errors.txt"; then
  # name the example each error came from: the last "# NAME" before it
  awk '/^# / { name = $2 } /: error: / { print name ": " $0 }' "$tmp/out.txt"
  echo "help_examples.sh: examples failed"
  status=1
fi
echo "help_examples.sh: $n examples ran"
exit $status
