#!/bin/sh
# golden_selftest.sh: the golden harness can fail.  tests/golden.sh runs a
# small script against expected outputs that differ from what it prints:
# a float32 value within its tolerance passes (and says so), while a value
# beyond it, a changed word, a changed integer, and the in-tolerance value
# under "# floats: exact" each fail, naming what differs.  (tests/golden_cmp
# run without arguments tests the comparison itself, case by case.)
#
# Environment: SHARDREPL, GOLDEN_CMP, top_srcdir (set by make check).
# Exit: 0 pass, 1 fail, 99 the harness could not run.
top=${top_srcdir:-.}
prog=${SHARDREPL:-src/shardrepl}
case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac
: "${GOLDEN_CMP:=$(dirname "$prog")/../tests/golden_cmp}"
case $GOLDEN_CMP in /*) ;; *) GOLDEN_CMP=$(pwd)/$GOLDEN_CMP ;; esac
[ -x "$GOLDEN_CMP" ] || { echo "golden_selftest.sh: $GOLDEN_CMP is not built" >&2; exit 99; }
export SHARDREPL="$prog" GOLDEN_CMP
golden="${SHELL:-/bin/sh} $top/tests/golden.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/golden_selftest.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# what it prints is the same on every machine: a division, a shape, words
cat > "$tmp/s.jxr" <<'EOF'
import jax.numpy as jnp
x = jnp.arange(4.) / 3
print(x)
print(x.shape, 'done')
EOF
cat > "$tmp/want.out" <<'EOF'
[0.         0.33333334 0.6666667  1.        ]
(4,) done
EOF
fail=0

# case NAME WANT SED [PATTERN]: with s.out = want.out edited by SED, golden.sh
# must give WANT (pass or fail) and print a line matching PATTERN
case_() {
  name=$1 want=$2 edit=$3 pattern=$4
  sed "$edit" "$tmp/want.out" > "$tmp/s.out"
  $golden "$tmp/s.jxr" > "$tmp/log" 2>&1
  rc=$?
  got=pass
  [ $rc -eq 1 ] && got=fail
  [ $rc -gt 1 ] && got="an error ($rc)"
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: golden.sh gave $got, expected $want"
    sed 's/^/  | /' "$tmp/log"
    fail=1
  elif [ -n "$pattern" ] && ! grep -q -e "$pattern" "$tmp/log"; then
    echo "FAIL $name: golden.sh said no line matching '$pattern'"
    sed 's/^/  | /' "$tmp/log"
    fail=1
  else
    echo "PASS $name ($want): $(grep -e "${pattern:-PASS}" "$tmp/log" | head -1)"
  fi
}

case_ "the output as printed" pass "" "^PASS"
case_ "a float32 value 12 ulps away" pass "s/0.33333334/0.3333337 /" "1 number differs within tolerance"
case_ "a float32 value beyond tolerance" fail "s/0.33333334/0.33343334/" \
  'expected "0.33343334", got "0.33333334".*more than float32'
case_ "a changed word" fail "s/done/gone/" 'expected "gone", got "done"'
case_ "a changed integer" fail "s/(4,)/(5,)/" 'expected "5", got "4"'
case_ "a line more" fail '$a\
extra' 'expected "extra", got the end'
sed -i '1i\
# floats: exact' "$tmp/s.jxr"
case_ "a float32 value 12 ulps away, # floats: exact" fail "s/0.33333334/0.3333337 /" "compared byte for byte"
case_ "the output as printed, # floats: exact" pass "" "^PASS"
exit $fail
