"""kernel_pictures.py: the pictures in the Jupyter kernel, through nbclient
as `jupyter nbconvert --execute` runs a notebook.

    kernel_pictures.py SHARDREPL STMTS ORACLE

A notebook whose cell prints, draws the cases (STMTS: the statements of
visualize_cases.txt) and prints again must give a stream, one display_data
per picture with the text/plain and text/html rich gives in a notebook
(ORACLE: what jax_visualize.py draws for them in a notebook), and a stream,
in that order; and a cell running :comm --svg FILE must show the SVG inline
(display_data, image/svg+xml) after its table.
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
code = ("import jax\nimport jax.numpy as jnp\njax.config.update('jax_num_cpu_devices', 16)\nprint('before')\n" + open(stmts).read() + "print('after')\n")
with tempfile.TemporaryDirectory() as tmp:
    r = subprocess.run([prog, '--install-kernel', '--prefix', tmp], capture_output=True, text=True)
    if r.returncode:
        sys.exit('install-kernel: %s' % r.stderr)
    os.environ['JUPYTER_PATH'] = os.path.join(tmp, 'share', 'jupyter')
    os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
    nb = new_notebook()
    nb.metadata.kernelspec = {'name': 'shardrepl', 'display_name': 'shardrepl', 'language': 'python'}
    svg = os.path.join(tmp, 'comm.svg')
    nb.cells = [new_code_cell(code),
                new_code_cell("_ = jax.set_mesh(jax.make_mesh((4, 2), ('X', 'Y')))\n"
                              "x = jax.device_put(jnp.ones((8, 4)), jax.P('X', None))\n"
                              ":comm --svg %s jax.jit(jnp.sum)(x)" % svg)]
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
# :comm --svg: the table, then the picture inline (image/svg+xml)
outs = []
for o in nb.cells[1].outputs:  # a front end shows consecutive streams as one
    if outs and o.output_type == 'stream' and outs[-1].output_type == 'stream':
        outs[-1].text += o.text
    else:
        outs.append(o)
kinds = [o.output_type for o in outs]
if (kinds == ['stream', 'display_data'] and 'wrote ' in outs[0].text and 'all-reduce' in outs[0].text
        and outs[1].data.get('image/svg+xml', '').startswith('<svg ')
        and 'all-reduce' in outs[1].data['image/svg+xml']):
    print('PASS: :comm --svg shows the SVG inline')
else:
    print('FAIL: :comm --svg in the kernel: %r' % [(o.output_type, o.get('text'), list(o.get('data', {}))) for o in outs])
    fail = 1
sys.exit(fail)
