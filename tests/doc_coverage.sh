#!/bin/sh
# doc_coverage.sh: every colon command of the command table (as `:help`
# lists it) and every option of `shardrepl --help` is named in README.md
# and in the manual (man/shardrepl.1); and the manual has the sections a
# manual needs.
: "${SHARDREPL:=src/shardrepl}"
top=${top_srcdir:-.}
readme=$top/README.md
man=$top/man/shardrepl.1
for f in "$readme" "$man"; do
  if [ ! -f "$f" ]; then echo "FAIL: $f is missing"; exit 1; fi
done
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# the manual's source with groff's escapes taken out: \- is -, \fB..\fR go
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em/--/g' -e 's/\\&//g' "$man" > "$tmp/man.txt"

# commands: the lines "  :name (:alias) ARGS   help" of :help
printf ':help\n' | "$SHARDREPL" > "$tmp/help" 2>&1 || { echo "FAIL: ':help' did not run"; cat "$tmp/help"; exit 1; }
sed -n 's/^  :\([a-z][a-z_-]*\).*/\1/p' "$tmp/help" > "$tmp/commands"
# options: "-e, --eval ..." and "      --devices N ..." lines of --help
"$SHARDREPL" --help > "$tmp/usage" 2>&1 || { echo "FAIL: 'shardrepl --help' failed"; exit 1; }
sed -n 's/^ *\(-[A-Za-z]\), \(--[a-z][a-z-]*\).*/\1\n\2/p; s/^ *\(--[a-z][a-z-]*\).*/\1/p' "$tmp/usage" > "$tmp/options"

ncmd=$(wc -l < "$tmp/commands")
nopt=$(wc -l < "$tmp/options")
if [ "$ncmd" -lt 6 ] || [ "$nopt" -lt 8 ]; then
  echo "FAIL: found only $ncmd commands in :help and $nopt options in --help"
  exit 1
fi

fail=0
while read -r c; do
  # a command is named as ":name" followed by something that is not a letter
  for f in "$readme" "$tmp/man.txt"; do
    if ! grep -q -- ":$c\([^a-z_-]\|\$\)" "$f"; then
      echo "FAIL: the command :$c is not in $(basename "$f" .txt)"
      fail=1
    fi
  done
done < "$tmp/commands"
while read -r o; do
  for f in "$readme" "$tmp/man.txt"; do
    if ! grep -q -- "$o\([^A-Za-z-]\|\$\)" "$f"; then
      echo "FAIL: the option $o is not in $(basename "$f" .txt)"
      fail=1
    fi
  done
done < "$tmp/options"

# the manual's sections
for s in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS ENVIRONMENT "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
  grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}\$" "$man" || { echo "FAIL: the manual has no $s section"; fail=1; }
done
grep -q SHARDREPL_HISTORY "$man" || { echo "FAIL: the manual does not name SHARDREPL_HISTORY"; fail=1; }

[ $fail -eq 0 ] && echo "doc_coverage: $ncmd commands and $nopt options, all in README.md and shardrepl.1"
exit $fail
