#!/bin/sh
# py_oracle.sh: the golden scripts marked `# oracle: python` are plain
# Python; their expected output must be what CPython prints for them, so
# that a golden file never enshrines a difference from Python.
# Skips (77) without a python3.
py=${PYTHON_NUMPY:-python3}
if ! "$py" -c 'import ast, sys; sys.exit(sys.version_info < (3, 8))' 2>/dev/null; then
  echo "py_oracle.sh: no python3 (3.8 or later) to compare with"
  exit 77
fi
dir=${top_srcdir:-.}/tests/golden
set -- "$dir"/*.jxr "$dir"/*.py
[ -d "$dir/pending" ] && ls "$dir"/pending/*.jxr >/dev/null 2>&1 && set -- "$@" "$dir"/pending/*.jxr
exec "$py" "$dir/py_oracle.py" "$@"
