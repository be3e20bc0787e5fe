#!/bin/sh
# corpus_check.sh: `shardrepl --check` on every v3 text of the shared corpus
# (../shared/corpus, found as corpus.sh finds it).  A text whose primitives
# all have type rules must check with no error.  A text with a primitive
# that has no rule yet is skipped and its primitives listed, unless one of
# its other equations fails, which is a failure too.  Texts the parser owes
# only a clean refusal (expect = refuse-or-parse) are not checked.  Texts
# from JAX's removed dynamic shapes (dimensions named by variables,
# f32[a,4]) count as checked when they check, and as skipped when they do
# not: matching such dimensions across scopes is not done yet.
: "${SHARDREPL:=src/shardrepl}"
corpus=
for c in "$SR_CORPUS" "$top_srcdir/../shared/corpus" "$top_srcdir/../../shared/corpus" /work/shared/corpus; do
  if [ -n "$c" ] && [ -f "$c/INDEX.tsv" ]; then corpus=$c; break; fi
done
if [ -z "$corpus" ]; then
  echo "corpus_check.sh: no corpus found (set SR_CORPUS to the folder holding INDEX.tsv)"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/missing"
total=0 checked=0 skipped=0 dynamic=0 refused=0 fail=0
# INDEX.tsv has empty columns, which `read` would collapse: awk picks them
awk -F'\t' 'NR > 1 && $2 == "v3" { print $1, $7 }' "$corpus/INDEX.tsv" > "$tmp/index"
while read -r file expect; do
  total=$((total + 1))
  case "$expect" in refuse-or-parse*) refused=$((refused + 1)); continue ;; esac
  f="$corpus/jaxprs/$file"
  "$SHARDREPL" --check "$f" > "$tmp/out" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then checked=$((checked + 1)); continue; fi
  if grep -qE '(bool|[iufc][0-9]+|bf16)\[([^]]*,)?[a-z_]' "$f"; then
    dynamic=$((dynamic + 1))
    echo "skip $file: dynamic shapes: $(grep -m1 ' error: ' "$tmp/out" | sed 's/.* error: //')"
    continue
  fi
  grep ' error: ' "$tmp/out" > "$tmp/errs"
  grep "has no type rule for the primitive" "$tmp/errs" > "$tmp/norule"
  if [ -s "$tmp/norule" ] && [ "$(wc -l < "$tmp/norule")" -eq "$(wc -l < "$tmp/errs")" ]; then
    skipped=$((skipped + 1))
    sed "s/.*primitive '\(.*\)'.*/\1/" "$tmp/norule" | sort -u > "$tmp/prims"
    echo "skip $file: no rule for $(tr '\n' ' ' < "$tmp/prims")"
    cat "$tmp/prims" >> "$tmp/missing"
  else
    echo "FAIL $file (exit $rc)"; cat "$tmp/out"; fail=$((fail + 1))
  fi
done < "$tmp/index"
missing=$(sort -u "$tmp/missing" | tr '\n' ' ')
echo "corpus_check: $total v3 texts; $checked checked with no error, $skipped skipped (primitives without a rule: ${missing:-none}), $dynamic with dynamic shapes skipped, $refused not owed a parse; $fail failures"
[ $fail -eq 0 ]
