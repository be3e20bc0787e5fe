"""kernel_pictures.py: the pictures in the Jupyter kernel, through nbclient
as `jupyter nbconvert --execute` runs a notebook.

    kernel_pictures.py SHARDREPL STMTS ORACLE

A notebook whose cell prints, draws the cases (STMTS: the statements of
visualize_cases.txt) and prints again must give a stream, one display_data
per picture with the text/plain and text/html rich gives in a notebook
(ORACLE: what jax_visualize.py draws for them in a notebook), and a stream,
in that order.
"""
import os
import subprocess
import sys
import tempfile

import nbclient
import nbformat
from nbformat.v4 import new_code_cell, new_notebook

prog, stmts, oracle = sys.argv[1:4]
want_parts = open(oracle).read().split('--\n')[:-1]
want = [('display_data', want_parts[i], want_parts[i + 1]) for i in range(0, len(want_parts), 2)]
code = ("import jax\nimport jax.numpy as jnp\nprint('before')\n" + open(stmts).read() + "print('after')\n")
with tempfile.TemporaryDirectory() as tmp:
    r = subprocess.run([prog, '--install-kernel', '--prefix', tmp], capture_output=True, text=True)
    if r.returncode:
        sys.exit('install-kernel: %s' % r.stderr)
    os.environ['JUPYTER_PATH'] = os.path.join(tmp, 'share', 'jupyter')
    os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
    nb = new_notebook()
    nb.metadata.kernelspec = {'name': 'shardrepl', 'display_name': 'shardrepl', 'language': 'python'}
    nb.cells = [new_code_cell(code)]
    nbclient.NotebookClient(nb, timeout=60, kernel_name='shardrepl').execute()
    nbformat.validate(nb)
got = []
for o in nb.cells[0].outputs:
    if o.output_type == 'stream':
        got.append(('stream', o.text))
    else:
        got.append((o.output_type, o.data.get('text/plain'), o.data.get('text/html')))
want = [('stream', 'before\n')] + want + [('stream', 'after\n')]
fail = 0
if len(got) != len(want):
    print('FAIL: %d outputs, want %d' % (len(got), len(want)))
    fail = 1
for i, (g, w) in enumerate(zip(got, want)):
    if g != w:
        print('FAIL: output %d:\n got %r\nwant %r' % (i, g, w))
        fail = 1
if not fail:
    print('PASS: %d pictures as display_data' % (len(want) - 2))
sys.exit(fail)
