#!/bin/sh
# corpus.sh: every jaxpr JAX printed (../shared/corpus) parses; printing is
# a fixed point (print(parse(print(parse(x)))) == print(parse(x))); the
# printer-exact texts print back byte for byte, trailing spaces aside; the
# refuse-or-parse texts get a located error or a result, never a crash.
: "${SHARDREPL:=src/shardrepl}"
corpus=
for c in "$SR_CORPUS" "$top_srcdir/../shared/corpus" "$top_srcdir/../../shared/corpus" /work/shared/corpus; do
  if [ -n "$c" ] && [ -f "$c/INDEX.tsv" ]; then corpus=$c; break; fi
done
if [ -z "$corpus" ]; then
  echo "corpus.sh: no corpus found (set SR_CORPUS to the folder holding INDEX.tsv)"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0 parsed=0 exact=0 fixed=0 refused=0 total=0
# INDEX.tsv has empty columns, which `read` would collapse: take the file
# and expect columns with awk
awk -F'\t' 'NR > 1 { print $1, $7 }' "$corpus/INDEX.tsv" > "$tmp/index"
while read -r file expect; do
  total=$((total + 1))
  f="$corpus/jaxprs/$file"
  "$SHARDREPL" --fmt "$f" > "$tmp/p1" 2> "$tmp/err"
  rc=$?
  case "$expect" in
  refuse-or-parse*)
    if [ $rc -eq 0 ]; then parsed=$((parsed + 1)); refused=$((refused + 1))
    elif [ $rc -eq 3 ] && grep -q "^$f:[0-9]*:[0-9]*: error: " "$tmp/err"; then refused=$((refused + 1))
    else echo "FAIL $file ($expect): exit $rc"; cat "$tmp/err"; fail=$((fail + 1)); fi
    continue ;;
  esac
  if [ $rc -ne 0 ]; then
    echo "FAIL $file: does not parse"; cat "$tmp/err"; fail=$((fail + 1)); continue
  fi
  parsed=$((parsed + 1))
  "$SHARDREPL" --fmt "$tmp/p1" > "$tmp/p2" 2> "$tmp/err"
  if ! cmp -s "$tmp/p1" "$tmp/p2"; then
    echo "FAIL $file: printing is not a fixed point"; diff "$tmp/p1" "$tmp/p2" | head -20
    fail=$((fail + 1)); continue
  fi
  fixed=$((fixed + 1))
  if [ "$expect" = exact ]; then
    sed 's/ *$//' "$f" > "$tmp/want"; printf '\n' >> "$tmp/want"
    sed 's/ *$//' "$tmp/p1" > "$tmp/got"
    if cmp -s "$tmp/want" "$tmp/got"; then exact=$((exact + 1))
    else echo "FAIL $file: not byte-exact"; diff "$tmp/want" "$tmp/got" | head -20; fail=$((fail + 1)); fi
  fi
done < "$tmp/index"
echo "corpus: $total texts; $parsed parse, $fixed print to a fixed point, $exact of 36 exact texts byte-identical, $refused refuse-or-parse texts handled; $fail failures"
[ $fail -eq 0 ]
