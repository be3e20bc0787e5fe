#!/bin/sh
# check_golden.sh: `shardrepl --check` on each tests/rules_golden/*.jaxpr
# (small jaxprs, most of them ill-typed) gives exactly the output in the
# matching .out file: "NAME.jaxpr: ok (1 jaxpr)", or the located error with
# JAX's message, then the exit status.  SR_GOLDEN_UPDATE=1 rewrites the .out
# files instead (review the diff before committing it).  A NAME.args file
# beside a jaxpr holds options to pass before --check (--mesh X:4,Y:2).
: "${SHARDREPL:=src/shardrepl}"
: "${top_srcdir:=.}"
dir="$top_srcdir/tests/rules_golden"
[ -d "$dir" ] || { echo "check_golden.sh: no $dir"; exit 1; }
case "$SHARDREPL" in /*) ;; *) SHARDREPL="$(pwd)/$SHARDREPL" ;; esac
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
fail=0 n=0
for f in "$dir"/*.jaxpr; do
  name=$(basename "$f")
  want="${f%.jaxpr}.out"
  n=$((n + 1))
  # run in the folder so that the messages name the file alone
  opts=
  [ -f "${f%.jaxpr}.args" ] && opts=$(cat "${f%.jaxpr}.args")
  # shellcheck disable=SC2086 # the options are words
  (cd "$dir" && "$SHARDREPL" $opts --check "$name" > "$tmp" 2>&1; echo "exit: $?" >> "$tmp")
  if [ -n "$SR_GOLDEN_UPDATE" ]; then
    cp "$tmp" "$want"
  elif [ ! -f "$want" ]; then
    echo "FAIL $name: no $(basename "$want")"; cat "$tmp"; fail=$((fail + 1))
  elif ! cmp -s "$tmp" "$want"; then
    echo "FAIL $name"; diff "$want" "$tmp"; fail=$((fail + 1))
  fi
done
echo "check_golden: $n jaxprs, $fail failures"
[ $fail -eq 0 ]
