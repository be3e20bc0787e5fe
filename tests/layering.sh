#!/bin/sh
# layering.sh: no object of a lower layer of lib/ uses a symbol that a
# higher layer defines, beyond the known uses of tests/layering-known.txt.
#
# The layers, lowest first, are the folders of lib/ in the order of the
# line "layers: ..." of HACKING.md, the one place the order is written.
# The script reads the library's objects (lib/*/libshardrepl_a-*.o of the
# build tree) with nm: a symbol an object leaves undefined (U) and an
# object of a higher layer defines is an upward use, listed as
# "lib/FOLDER/FILE.o SYMBOL".  The known list (empty since issue 12
# removed the last use) holds the uses tolerated for a while, and the
# test fails
#   - on a use the list lacks (a new upward dependency), and
#   - on a listed use that is gone (so the list only shrinks),
# saying which lines to add or remove.  A folder of lib/ that the order
# does not name fails too.
#
# Environment: top_srcdir, top_builddir (default .), NM (default nm),
# LAYERING_KNOWN (default $top_srcdir/tests/layering-known.txt),
# LAYERING_OBJECTS (the objects, relative to top_builddir; make check sets
# it from the Makefile, else they are found under $top_builddir/lib).
# Exit: 0 pass, 1 fail, 77 skip (no nm), 99 hard error.
top=${top_srcdir:-.}
build=${top_builddir:-.}
nm=${NM:-nm}
known=${LAYERING_KNOWN:-$top/tests/layering-known.txt}
LC_ALL=C
export LC_ALL

command -v "$nm" >/dev/null 2>&1 || { echo "SKIP: no $nm"; exit 77; }
[ -f "$top/HACKING.md" ] || { echo "ERROR: no $top/HACKING.md"; exit 99; }
[ -f "$known" ] || { echo "ERROR: no $known"; exit 99; }
order=$(sed -n 's/^layers: *//p' "$top/HACKING.md")
[ -n "$order" ] || { echo "ERROR: HACKING.md has no 'layers:' line"; exit 99; }

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# the library's objects as the Makefile lists them (no stale object of a
# removed source), or those of the build tree
if [ -n "$LAYERING_OBJECTS" ]; then
  for o in $LAYERING_OBJECTS; do echo "$build/$o"; done | sort > "$tmp/objects"
else
  find "$build/lib" -name 'libshardrepl_a-*.o' | sort > "$tmp/objects"
fi
[ -s "$tmp/objects" ] || { echo "ERROR: no library objects under $build/lib (build first)"; exit 99; }
# shellcheck disable=SC2046 # one word a path: the build's paths have no blanks
"$nm" -g -P -A $(cat "$tmp/objects") > "$tmp/nm" || { echo "ERROR: $nm failed"; exit 99; }

# nm -P -A lines: "path/lib/FOLDER/libshardrepl_a-FILE.o: SYMBOL TYPE ..."
awk -v order="$order" -v out="$tmp" '
  BEGIN { n = split(order, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
  {
    path = $1; sub(/:$/, "", path)
    k = split(path, part, "/")
    folder = part[k - 1]
    file = part[k]; sub(/^libshardrepl_a-/, "", file)
    obj = "lib/" folder "/" file
    if (!(folder in rank)) { if (!(folder in unknown)) print folder > (out "/unknown"); unknown[folder] = 1 }
    if ($3 == "U") { nuse++; user[nuse] = obj; usedsym[nuse] = $2; userfolder[nuse] = folder }
    else if ($3 ~ /^[A-TV-Z]$/) def[$2] = folder
  }
  END {
    for (i = 1; i <= nuse; i++) {
      s = usedsym[i]
      if (!(s in def)) continue
      if (rank[def[s]] > rank[userfolder[i]]) print user[i], s, def[s] > (out "/found3")
    }
  }' "$tmp/nm" || exit 99

fail=0
if [ -s "$tmp/unknown" ]; then
  echo "FAIL: these folders of lib/ are not in HACKING.md's 'layers:' line ($order):"
  sed 's/^/  /' "$tmp/unknown"
  fail=1
fi
touch "$tmp/found3"
sort -u "$tmp/found3" > "$tmp/found3s"
cut -d' ' -f1,2 "$tmp/found3s" > "$tmp/found"
grep -v '^#' "$known" | grep -v '^$' | sort -u > "$tmp/known"
comm -13 "$tmp/known" "$tmp/found" > "$tmp/new"
comm -23 "$tmp/known" "$tmp/found" > "$tmp/gone"
if [ -s "$tmp/new" ]; then
  echo "FAIL: $(wc -l < "$tmp/new") new upward uses (a lower layer using a symbol a higher one defines; layers, lowest first: $order):"
  # with the folder that defines the symbol
  awk 'NR == FNR { want[$1 " " $2] = 1; next } ($1 " " $2) in want { print "  " $1 " " $2 "   (defined in " $3 "/)" }' \
    "$tmp/new" "$tmp/found3s"
  echo "Move the code to the layer it belongs to; only a use that must stay for now goes into"
  echo "$known (these lines, sorted):"
  sed 's/^/  /' "$tmp/new"
  fail=1
fi
if [ -s "$tmp/gone" ]; then
  echo "FAIL: $(wc -l < "$tmp/gone") known upward uses are gone; remove these lines from $known:"
  sed 's/^/  /' "$tmp/gone"
  fail=1
fi
[ $fail -eq 0 ] && echo "layering: $(wc -l < "$tmp/objects") objects, layers $order; $(wc -l < "$tmp/found") known upward uses, no new one"
exit $fail
