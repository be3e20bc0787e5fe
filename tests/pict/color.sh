#!/bin/sh
# color.sh: colour on the terminal (--color; lib/text/color.c,
# jaxpr_color.c).  color_jaxpr.jxr under --color=always must print
# color_jaxpr.out byte for byte: jaxprs with the escapes jaxlib's
# _pretty_printer.cc writes for core.py's pp.keyword ("lambda ", "let",
# "in ": 34;1) and pp.type_annotation (":f32[]": 35), only where the colour
# changes and not on a line's indentation, plain again after
# jax.config.update('jax_pprint_use_color', False); a warning and an error
# in gcc's colours with the exception type in CPython 3.13's.  Without
# the escapes it is the plain output; the default in a pipe, --color=never,
# and on a terminal NO_COLOR or TERM=dumb print no escape at all; on a
# terminal (a pty, where python3 has the pty module) the default colours.
sr=${SHARDREPL:-$(pwd)/src/shardrepl}
dir=${top_srcdir:-.}/tests/pict
tmp=${TMPDIR:-/tmp}/color.$$
mkdir "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
esc=$(printf '\033')
ok() { echo "PASS $1"; }
bad() { echo "FAIL $1"; fail=1; }
(cd "$dir" && "$sr" -k --color=always color_jaxpr.jxr) > "$tmp/always" 2>&1
if cmp -s "$dir/color_jaxpr.out" "$tmp/always"; then ok "--color=always"; else bad "--color=always"; diff "$dir/color_jaxpr.out" "$tmp/always" | head; fi
(cd "$dir" && "$sr" -k color_jaxpr.jxr) > "$tmp/plain" 2>&1
sed "s/$esc\[[0-9;]*m//g" "$tmp/always" > "$tmp/stripped"
if cmp -s "$tmp/plain" "$tmp/stripped"; then ok "the same text without the escapes"; else bad "the same text without the escapes"; diff "$tmp/plain" "$tmp/stripped" | head; fi
if grep -q "$esc" "$tmp/plain"; then bad "no colour in a pipe"; else ok "no colour in a pipe"; fi
(cd "$dir" && "$sr" -k --color=never color_jaxpr.jxr) > "$tmp/never" 2>&1
if cmp -s "$tmp/plain" "$tmp/never"; then ok "--color=never"; else bad "--color=never"; fi
if "$sr" --color=sometimes -e 1 > "$tmp/usage" 2>&1; then bad "--color=sometimes"
elif grep -q "^shardrepl: --color wants auto, always or never, got 'sometimes'$" "$tmp/usage"; then ok "--color=sometimes is a usage error"
else bad "--color=sometimes"; cat "$tmp/usage"; fi
py=${PYTHON_NUMPY:-/usr/bin/python3}
if ! "$py" -c 'import pty' 2>/dev/null; then
  echo "SKIP the pty checks (no python3 with pty)"
  exit $fail
fi
# on a pseudo-terminal: what one statement prints, with the environment given
onpty() {
  env "$@" "$py" -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "-e", "import jax", "-e", "jax.make_jaxpr(lambda x: x)(1.0)"])
out = b""
while True:
    try:
        b = os.read(fd, 4096)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
' "$sr"
}
if onpty TERM=xterm | grep -q "$esc\[34;1mlambda"; then ok "colour on a terminal"; else bad "colour on a terminal"; fi
if onpty TERM=xterm NO_COLOR=1 | grep -q "$esc"; then bad "NO_COLOR"; else ok "NO_COLOR"; fi
if onpty TERM=dumb | grep -q "$esc"; then bad "TERM=dumb"; else ok "TERM=dumb"; fi
if onpty TERM=xterm NO_COLOR=1 | grep -q "lambda"; then ok "NO_COLOR still prints"; else bad "NO_COLOR still prints"; fi
exit $fail
