#!/bin/sh
# notebook.sh: MyST lessons through --notebook (tests/notebook/NAME.md):
# the document written back with each cell's outputs, and what goes to
# stderr after it, must be tests/notebook/NAME.out (compared as golden.sh
# compares: floats within their dtype's tolerance, by tests/golden_cmp).
# seed000.md and seed004.md are the seeds 000 and 004 as they were given;
# lesson.md has the cases (the last expression's echo, the two forms of a
# cell's tags, a colon command, an untagged raising cell stopping the run
# with status 1).  Then the same lesson as a .ipynb, which Debian's
# nbformat must validate (when python3-nbformat is there); and :save of a
# session as .md (which --notebook reruns to the same text) and .ipynb.
#   NOTEBOOK_UPDATE=1 sh tests/notebook.sh   rewrites the .out files
: "${SHARDREPL:=src/shardrepl}"
: "${top_srcdir:=.}"
case $SHARDREPL in /*) ;; *) SHARDREPL=$(pwd)/$SHARDREPL ;; esac
golden_cmp=$(dirname "$SHARDREPL")/../tests/golden_cmp
dir=$top_srcdir/tests/notebook
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
for md in "$dir"/*.md; do
  name=$(basename "$md" .md)
  want=0
  [ "$name" = lesson ] && want=1
  (cd "$dir" && OPENBLAS_NUM_THREADS=1 "$SHARDREPL" --notebook "$name.md" > "$tmp/$name.out" 2> "$tmp/$name.err")
  rc=$?
  cat "$tmp/$name.err" >> "$tmp/$name.out"
  if [ "$rc" != "$want" ]; then
    echo "FAIL: $name.md: exit status $rc, want $want"; cat "$tmp/$name.err"; fail=1
  fi
  if [ -n "$NOTEBOOK_UPDATE" ]; then cp "$tmp/$name.out" "$dir/$name.out"; continue; fi
  if cmp -s "$dir/$name.out" "$tmp/$name.out"; then
    echo "PASS: $name.md"
  elif [ -x "$golden_cmp" ] && "$golden_cmp" "$dir/$name.out" "$tmp/$name.out"; then
    echo "PASS: $name.md (numbers within tolerance)"
  else
    echo "FAIL: $name.md"; diff -u "$dir/$name.out" "$tmp/$name.out" | head -40; fail=1
  fi
done
# the lesson as a notebook
(cd "$dir" && "$SHARDREPL" --notebook lesson.md -o "$tmp/lesson.ipynb" 2> /dev/null)
if /usr/bin/python3 -c 'import nbformat' 2> /dev/null; then
  /usr/bin/python3 - "$tmp/lesson.ipynb" <<'PY' || fail=1
import sys, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
code = [c for c in nb.cells if c.cell_type == 'code']
outs = [[(o.output_type, o.get('text') or o.get('data', {}).get('text/plain') or o.get('ename')) for o in c.outputs]
        for c in code]
want_ = [[('execute_result', '6')], [('stream', 'before\n'), ('error', 'AttributeError')],
        [('stream', "<class 'int'>\n")], [('stream', 'float32\n'), ('stream', None)], [('error', 'NameError')], []]
assert code[3].outputs[1].name == 'stderr' and 'UserWarning: Explicitly requested dtype float64' in code[3].outputs[1].text
outs[3][1] = ('stream', None)
assert outs == want_, outs
assert code[1].metadata.tags == ['raises-exception']
assert [c.execution_count for c in code] == [1, 2, 3, 4, 5, None]
print('PASS: lesson.ipynb')
PY
fi
# :save FILE.md and FILE.ipynb: a cell a statement, with its outputs
printf 'x = 2\nprint(x)\nx * 3\n:save %s\n:save %s\n:save %s\n' "$tmp/s.md" "$tmp/s.ipynb" "$tmp/s.py" | "$SHARDREPL" > /dev/null
# the saved script makes the same session (run as a .jxr: a *.py file is
# otherwise a Python script, silent and without JAX's predefined names)
if [ "$("$SHARDREPL" --jxr "$tmp/s.py")" = "$(printf '2\n6')" ]; then echo "PASS: :save s.py"; else echo "FAIL: :save s.py"; cat "$tmp/s.py"; fail=1; fi
cat > "$tmp/s.want" <<'MD'
---
kernelspec:
  display_name: shardrepl
  language: python
  name: shardrepl
---

```{code-cell}
x = 2
```

```{code-cell}
print(x)
```

```{code-block} text
:class: cell-output

2
```

```{code-cell}
x * 3
```

```{code-block} text
:class: cell-output

6
```
MD
if cmp -s "$tmp/s.want" "$tmp/s.md"; then echo "PASS: :save s.md"; else echo "FAIL: :save s.md"; diff -u "$tmp/s.want" "$tmp/s.md"; fail=1; fi
# the saved lesson runs, and its outputs come back the same
(cd "$tmp" && "$SHARDREPL" --notebook s.md > s2.md) && cmp -s "$tmp/s.md" "$tmp/s2.md" || { echo "FAIL: --notebook s.md"; fail=1; }
if /usr/bin/python3 -c 'import nbformat' 2> /dev/null; then
  /usr/bin/python3 - "$tmp/s.ipynb" <<'PY' || fail=1
import sys, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
outs = [[(o.output_type, o.get('text') or o.get('data', {}).get('text/plain')) for o in c.outputs] for c in nb.cells]
assert outs == [[], [('stream', '2\n')], [('execute_result', '6')]], outs
assert [c.source for c in nb.cells] == ['x = 2', 'print(x)', 'x * 3']
print('PASS: :save s.ipynb')
PY
fi
exit $fail
