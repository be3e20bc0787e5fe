#!/bin/sh
# repl_pty.sh: the interactive REPL on a pseudo-terminal (tests/repl_pty.py):
# prompts, multi-line input, Ctrl-C, Ctrl-D, completion and history.
# Skips (77) without a python3.
: "${SHARDREPL:=src/shardrepl}"
py=${PYTHON_NUMPY:-python3}
if ! "$py" -c 'import pty' 2>/dev/null; then
  echo "repl_pty.sh: no python3 with the pty module"
  exit 77
fi
exec "$py" "${top_srcdir:-.}/tests/repl_pty.py" "$SHARDREPL"
