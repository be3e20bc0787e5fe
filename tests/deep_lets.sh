#!/bin/sh
# deep_lets.sh: jaxprs nested through a long chain of hoisted lets.
#
# `let f1 = { ... pjit[jaxpr=f0] ... } in let f2 = { ... jaxpr=f1 ... } in`
# nests as deep as the chain is long, and every pass over a program
# recurses once per level, so the parser bounds this nesting as it bounds
# a text's own (at most 200 levels, SR_JAXPR_MAX_DEPTH): a chain of 3,000
# is the located parse error at the call that goes past the bound, for
# --check and --fmt and in a session (where the commands that follow do
# not crash on it), and a chain of 199 works through the checker, the
# printer, the evaluator and autodiff (issue 11, crash 5).  The chains are
# generated here; the output is compared with tests/deep_lets.out
# (SR_GOLDEN_UPDATE=1 rewrites it).
: "${top_srcdir:=.}"
: "${SHARDREPL:=src/shardrepl}"
case $SHARDREPL in /*) ;; *) SHARDREPL=$(pwd)/$SHARDREPL ;; esac
expected=$top_srcdir/tests/deep_lets.out
case $expected in /*) ;; *) expected=$(pwd)/$expected ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/deep_lets.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99

# chain N: defs f0 .. f(N-1), each calling the one before, and a top-level
# jaxpr calling the last
chain() {
  awk -v n="$1" 'BEGIN {
    print "let f0 = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in"
    for (i = 1; i < n; i++)
      printf "let f%d = { lambda ; a:f32[]. let b:f32[] = pjit[name=f%d jaxpr=f%d] a in (b,) } in\n", i, i - 1, i - 1
    printf "{ lambda ; a:f32[]. let b:f32[] = pjit[name=f%d jaxpr=f%d] a in (b,) }\n", n - 1, n - 1
  }'
}
chain 3000 > c3000.jaxpr
chain 199 > c199.jaxpr
{ printf 'f = '; cat c3000.jaxpr; } > c3000.jxr
{ printf 'f = '; cat c199.jaxpr; } > c199.jxr

cut_lines() { cut -c1-100; }
{
  echo "--check of 3000"
  "$SHARDREPL" --check c3000.jaxpr > o.txt 2>&1
  echo "exit $?"
  cut_lines < o.txt
  echo "--fmt of 3000"
  "$SHARDREPL" --fmt c3000.jaxpr > o.txt 2>&1
  echo "exit $?"
  cut_lines < o.txt
  echo "--check of 199"
  "$SHARDREPL" --check c199.jaxpr 2>&1
  echo "--fmt of 199: $("$SHARDREPL" --fmt c199.jaxpr 2>&1 | grep -c 'pjit\[')"
  echo "a session with 3000"
  "$SHARDREPL" <<'IN' 2>&1 | cut_lines
import jax
:load c3000.jxr
:type f
:grad f
print(jax.jit(f)(1.0))
print('still here')
IN
  echo "a session with 199"
  "$SHARDREPL" <<'IN' 2>&1 | cut_lines
import jax
:load c199.jxr
:type f
print(f(1.0), jax.jit(f)(1.0), jax.grad(f)(1.0))
print(jax.vjp(f, 1.0)[1](1.0), jax.linearize(f, 1.0)[1](1.0))
print(len(str(f)), len(str(jax.make_jaxpr(jax.grad(f))(1.0))) > 0)
:optimize f
IN
} > actual.out 2>&1
if [ "${SR_GOLDEN_UPDATE:-0}" = 1 ]; then
  cp actual.out "$expected" && echo "deep_lets.sh: wrote $expected"
  exit 0
fi
if cmp -s "$expected" actual.out; then
  echo "PASS: deep_lets"
  exit 0
fi
echo "FAIL: deep_lets: output differs from $expected"
diff -u "$expected" actual.out | head -60
exit 1
