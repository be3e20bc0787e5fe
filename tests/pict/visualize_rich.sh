#!/bin/sh
# visualize_rich.sh: jax.debug.visualize_array_sharding draws, byte for
# byte, what JAX's visualize_sharding prints with rich (jax_visualize.py,
# JAX's code run with Debian's python3-rich and python3-matplotlib) for the
# cases of visualize_cases.txt: without a terminal (a pipe: boxed), and
# under --color=always in rich's three colour systems as it reads them from
# TERM and COLORTERM.  Skips (77) without a python3 with rich and
# matplotlib.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
if ! "$PYTHON_NUMPY" -c 'import rich, matplotlib, numpy' 2>/dev/null; then
  echo "visualize_rich.sh: no python3 with rich and matplotlib ($PYTHON_NUMPY): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests/pict
sr=${SHARDREPL:-./src/shardrepl}
tmp=${TMPDIR:-/tmp}/visualize_rich.$$
trap 'rm -f "$tmp".*' EXIT
{ echo 'import jax'; echo 'import jax.numpy as jnp'
  "$PYTHON_NUMPY" "$dir/jax_visualize.py" stmts < "$dir/visualize_cases.txt"; } > "$tmp".jxr || exit 1
fail=0
check() { # NAME MODE SHARDREPL-OPTION
  env -u NO_COLOR "$PYTHON_NUMPY" "$dir/jax_visualize.py" "$2" < "$dir/visualize_cases.txt" > "$tmp".want || exit 1
  "$sr" $3 "$tmp".jxr > "$tmp".got 2>&1
  if cmp -s "$tmp".want "$tmp".got; then
    echo "PASS $1"
  else
    echo "FAIL $1"; diff "$tmp".want "$tmp".got | head -20; fail=1
  fi
}
TERM=xterm COLORTERM= check "no terminal" pipe ""
TERM=xterm COLORTERM= check "16 colours" term --color=always
TERM=xterm-256color COLORTERM= check "256 colours" term --color=always
TERM=xterm-256color COLORTERM=truecolor check "24-bit colour" term --color=always
exit $fail
