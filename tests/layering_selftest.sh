#!/bin/sh
# layering_selftest.sh: tests/layering.sh fails when it should, saying what
# to do: on a new upward use (one the known list lacks, and one that a fake
# nm adds to an object of util/), on a known use that is gone, and on a
# folder of lib/ that HACKING.md's order does not name.
top=${top_srcdir:-.}
nm=${NM:-nm}
command -v "$nm" >/dev/null 2>&1 || { echo "SKIP: no $nm"; exit 77; }
script=$top/tests/layering.sh
known=$top/tests/layering-known.txt
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect NAME STATUS PATTERN: the last run exited with STATUS and printed PATTERN
expect() {
  if [ "$rc" -ne "$2" ] || ! grep -q -- "$3" "$tmp/out"; then
    echo "FAIL: $1: expected status $2 and '$3', got $rc:"
    sed 's/^/  | /' "$tmp/out"
    fail=1
  fi
}

sh "$script" > "$tmp/out" 2>&1; rc=$?
expect "the tree as it is" 0 "no new one"

# A fake nm that also reports util/mem.o using sr_raise, which a higher
# layer defines: a new upward use.
cat > "$tmp/nm" <<EOF
#!/bin/sh
"$(command -v "$nm")" "\$@" || exit
for f; do
  case \$f in */lib/util/libshardrepl_a-mem.o) echo "\$f: sr_raise U";; esac
done
EOF
chmod +x "$tmp/nm"
line="lib/util/mem.o sr_raise"
NM=$tmp/nm sh "$script" > "$tmp/out" 2>&1; rc=$?
expect "a new upward use" 1 "^FAIL: 1 new upward uses"
expect "a new upward use" 1 "^  $line   (defined in [a-z]*/)"
expect "a new upward use (the line to add)" 1 "^  $line\$"

# the same use, listed as known, passes
{ cat "$known"; echo "$line"; } > "$tmp/with"
NM=$tmp/nm LAYERING_KNOWN=$tmp/with sh "$script" > "$tmp/out" 2>&1; rc=$?
expect "a known use" 0 "1 known upward uses, no new one"

# a listed use that no object has is gone
{ cat "$known"; echo "lib/util/mem.o sr_no_such_symbol"; } > "$tmp/more"
LAYERING_KNOWN=$tmp/more sh "$script" > "$tmp/out" 2>&1; rc=$?
expect "a listed use that is gone" 1 "^FAIL: 1 known upward uses are gone"
expect "a listed use that is gone (the line to remove)" 1 "^  lib/util/mem.o sr_no_such_symbol\$"

# a folder the order does not name
mkdir "$tmp/top" "$tmp/top/tests"
sed 's/^layers: \(.*\) opt /layers: \1 /' "$top/HACKING.md" > "$tmp/top/HACKING.md"
grep -q '^layers: .* ad ' "$tmp/top/HACKING.md" || { echo "FAIL: HACKING.md's layers line is not '... ad opt ...'"; fail=1; }
cp "$known" "$tmp/top/tests/"
top_srcdir=$tmp/top sh "$script" > "$tmp/out" 2>&1; rc=$?
expect "a folder out of the order" 1 "^  opt\$"

[ $fail -eq 0 ] && echo "layering_selftest: layering.sh fails on a new use, a gone use and an unnamed folder"
exit $fail
