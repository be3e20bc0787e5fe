#!/bin/sh
# comm_svg.sh: the pictures of communication (:comm --svg/--html,
# :comm-static --svg; comm_svg.c).  comm_fig.jxr runs in a scratch folder;
# what it prints must be comm_fig.out, the SVGs it writes the goldens
# comm_svg.grad.svg, comm_svg.bwd.svg and comm_svg.static.svg byte for byte
# (deterministic text), the HTML page must hold grad.svg, and where
# python3 is, each SVG must be well-formed XML with a band per collective
# labelled with its kind and pass.  (comm_chromium.sh renders them.)
sr=${SHARDREPL:-$(pwd)/src/shardrepl}
dir=$(cd "${top_srcdir:-.}/tests/pict" && pwd)
tmp=${TMPDIR:-/tmp}/comm_svg.$$
mkdir "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
cp "$dir/comm_fig.jxr" "$tmp/"
(cd "$tmp" && "$sr" -k comm_fig.jxr) > "$tmp/out" 2>&1
fail=0
check() { # WANT GOT NAME
  if cmp -s "$1" "$2"; then echo "PASS $3"; else echo "FAIL $3"; diff "$1" "$2" | head -20; fail=1; fi
}
check "$dir/comm_fig.out" "$tmp/out" "what :comm --svg prints"
for f in grad bwd static; do check "$dir/comm_svg.$f.svg" "$tmp/$f.svg" "$f.svg"; done
if grep -q '^<svg ' "$tmp/grad.html" && grep -q '^<!DOCTYPE html>' "$tmp/grad.html"; then echo "PASS grad.html"; else echo "FAIL grad.html"; fail=1; fi
py=${PYTHON_NUMPY:-/usr/bin/python3}
if "$py" -c 'import xml.etree.ElementTree' 2>/dev/null; then
  "$py" - "$tmp" <<'PY' || fail=1
import sys, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
want = {'grad': [('all-reduce', 'backward')], 'bwd': [('all-reduce', 'backward')],
        'static': [('all-reduce (contraction over sharded dims)', 'backward')]}
bad = 0
for name, bands in want.items():
    root = ET.parse(f'{sys.argv[1]}/{name}.svg').getroot()
    got = [(g.get('data-kind'), g.get('data-pass')) for g in root.iter(ns + 'g') if g.get('class') == 'collective']
    texts = [t.text for t in root.iter(ns + 'text')]
    ok = got == bands and all(k in texts and p in texts for k, p in bands) and 'CPU 7' in texts
    print('PASS' if ok else 'FAIL', f'{name}.svg parses, bands {got}')
    bad |= not ok
sys.exit(bad)
PY
fi
exit $fail
