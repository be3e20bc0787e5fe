#!/bin/sh
# comm_chromium.sh: the pictures of :comm --svg render in headless Chromium
# (Debian's chromium, which ./bootstrap does not install: it takes minutes;
# skipped, 77, without it): each golden SVG of comm_svg.sh loads as an SVG
# document without a parser error and holds its labels, and the HTML page
# renders to a screenshot.
chromium=${CHROMIUM:-chromium}
if ! command -v "$chromium" > /dev/null 2>&1; then
  echo "comm_chromium.sh: no chromium: skipped"
  exit 77
fi
dir=$(cd "${top_srcdir:-.}/tests/pict" && pwd)
tmp=${TMPDIR:-/tmp}/comm_chromium.$$
mkdir "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
run() { timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" "$@" 2> "$tmp/stderr"; }
fail=0
# one document holding the three pictures (one browser start)
{ echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>comm</title></head><body>'
  for f in grad bwd static; do cat "$dir/comm_svg.$f.svg"; done
  echo '</body></html>'; } > "$tmp/all.html"
run --dump-dom "file://$tmp/all.html" > "$tmp/dom" || { echo "FAIL chromium --dump-dom"; cat "$tmp/stderr"; exit 1; }
for want in 'data-pass="backward"' '>all-reduce<' "over ('X',)" '16 B/device' 'CPU 7' \
  '>backward<' 'jit(loss)/transpose(jvp())/dot_general'; do
  if grep -qF "$want" "$tmp/dom"; then echo "PASS the DOM holds $want"; else echo "FAIL the DOM lacks $want"; fail=1; fi
done
if [ "$(grep -c '<svg ' "$tmp/dom")" = 3 ] && ! grep -q parsererror "$tmp/dom"; then echo "PASS three SVGs, no parser error"; else echo "FAIL the SVGs did not load"; fail=1; fi
run --window-size=900,400 --screenshot="$tmp/shot.png" "file://$tmp/all.html" > /dev/null
if [ -s "$tmp/shot.png" ] && head -c 4 "$tmp/shot.png" | grep -q PNG; then echo "PASS a screenshot"; else echo "FAIL no screenshot"; cat "$tmp/stderr"; fail=1; fi
exit $fail
