#!/bin/sh
# visualize_rich.sh: jax.debug.visualize_array_sharding draws, byte for
# byte, what JAX's visualize_sharding prints with rich (jax_visualize.py,
# JAX's code run with Debian's python3-rich and python3-matplotlib) for the
# cases of visualize_cases.txt: without a terminal (a pipe: boxed), under
# --color=always in rich's three colour systems as it reads them from
# TERM and COLORTERM, and in the Jupyter kernel as rich renders into a
# notebook (kernel_pictures.py, where the kernel and nbclient are).  Skips
# (77) without a python3 with rich and matplotlib.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
if ! "$PYTHON_NUMPY" -c 'import rich, matplotlib, numpy' 2>/dev/null; then
  echo "visualize_rich.sh: no python3 with rich and matplotlib ($PYTHON_NUMPY): skipped"
  exit 77
fi
dir=${top_srcdir:-.}/tests/pict
sr=${SHARDREPL:-./src/shardrepl}
tmp=${TMPDIR:-/tmp}/visualize_rich.$$
mkdir "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
"$PYTHON_NUMPY" "$dir/jax_visualize.py" stmts < "$dir/visualize_cases.txt" > "$tmp/stmts" || exit 1
{ echo 'import jax'; echo 'import jax.numpy as jnp'; echo "jax.config.update('jax_num_cpu_devices', 16)"; cat "$tmp/stmts"; } > "$tmp/cases.jxr"
"$PYTHON_NUMPY" "$dir/jax_visualize.py" all "$tmp" < "$dir/visualize_cases.txt" || exit 1
fail=0
check() { # NAME WANT TERM COLORTERM SHARDREPL-OPTION
  TERM=$3 COLORTERM=$4 "$sr" $5 "$tmp/cases.jxr" > "$tmp/got" 2>&1
  if cmp -s "$tmp/$2" "$tmp/got"; then
    echo "PASS $1"
  else
    echo "FAIL $1"; diff "$tmp/$2" "$tmp/got" | head -20; fail=1
  fi
}
check "no terminal" pipe xterm "" ""
check "16 colours" 16 xterm "" --color=always
check "256 colours" 256 xterm-256color "" --color=always
check "24-bit colour" 24bit xterm-256color truecolor --color=always
# in the kernel: rich's notebook HTML and text, as display_data
if "$sr" --kernel -f /dev/null 2>&1 | grep -q 'was not built' || ! "$PYTHON_NUMPY" -c 'import nbclient' 2>/dev/null; then
  echo "SKIP the kernel (not built, or no python3-nbclient)"
else
  "$PYTHON_NUMPY" "$dir/kernel_pictures.py" "$sr" "$tmp/stmts" "$tmp/jupyter" || fail=1
fi
exit $fail
