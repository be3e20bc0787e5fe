#!/bin/sh
# prims_option.sh: `shardrepl --prims` prints the rule matrix that `:prims`
# prints (tests/golden/prims.jxr keeps that listing).
: "${SHARDREPL:=src/shardrepl}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$SHARDREPL" --prims > "$tmp/option" 2>&1 || { echo "FAIL: shardrepl --prims exited with $?"; cat "$tmp/option"; exit 1; }
printf ':prims\n' | "$SHARDREPL" > "$tmp/command" 2>&1 || { echo "FAIL: :prims exited with $?"; cat "$tmp/command"; exit 1; }
grep -q '^primitive  *type  eval  jvp  transpose  comm  batch$' "$tmp/option" || { echo "FAIL: --prims printed no header:"; cat "$tmp/option"; exit 1; }
cmp -s "$tmp/option" "$tmp/command" || { echo "FAIL: --prims and :prims differ:"; diff "$tmp/option" "$tmp/command"; exit 1; }
echo "prims_option: --prims prints what :prims prints ($(wc -l < "$tmp/option") lines)"
