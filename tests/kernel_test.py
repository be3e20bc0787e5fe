"""kernel_test.py: the Jupyter kernel (shardrepl --kernel) through
jupyter_client, as a notebook front end talks to it.

    kernel_test.py SHARDREPL [--ranks P]

Installs the kernel spec in a temporary prefix (--install-kernel --prefix),
starts one kernel from it with KernelManager, and runs a seed-style
session cell by cell, checking each cell's outputs on iopub (streams,
execute_result, error), its execute_reply and the busy/idle status; then
is_complete, complete, inspect and kernel_info; then an interrupted cell
(SIGINT through KernelManager.interrupt_kernel), and that the session
survives it; then shutdown.  Without --ranks, nbclient then executes a
small notebook through the same spec and its outputs are checked.
"""
import os
import subprocess
import sys
import tempfile
import time

from jupyter_client.manager import KernelManager

prog = sys.argv[1]
extra = sys.argv[2:]
TIMEOUT = 60

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def run_cell(kc, code, timeout=TIMEOUT):
    """Executes code; returns (reply content, [iopub messages of it])."""
    msg_id = kc.execute(code)
    reply = kc.get_shell_msg(timeout=timeout)
    while reply['parent_header'].get('msg_id') != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    outs = []
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m['parent_header'].get('msg_id') != msg_id:
            continue
        outs.append(m)
        if m['msg_type'] == 'status' and m['content']['execution_state'] == 'idle':
            break
    return reply['content'], outs


def outputs(outs):
    """The cell's outputs as (kind, text) pairs, as a notebook keeps them."""
    r = []
    for m in outs:
        t, c = m['msg_type'], m['content']
        if t == 'stream' and r and r[-1][0] == 'stream' and r[-1][2] == c['name']:
            r[-1] = ('stream', r[-1][1] + c['text'], c['name'])  # as a front end joins them
        elif t == 'stream':
            r.append(('stream', c['text'], c['name']))
        elif t == 'execute_result':
            r.append(('result', c['data']['text/plain']))
        elif t == 'error':
            r.append(('error', c['ename'], c['evalue'], '\n'.join(c['traceback'])))
    return r


CELLS = [
    # (code, expected outputs)
    ("import jax\nimport jax.numpy as jnp\njax.config.update('jax_num_cpu_devices', 2)\n"
     "mesh = jax.make_mesh((2,), ('X',))\njax.set_mesh(mesh)\nprint(mesh.shape)",
     [('stream', "{'X': 2}\n")]),
    # a bare expression echoes only as the cell's last statement
    ("1 + 1\n2 + 2", [('result', '4')]),
    ("x = jax.device_put(jnp.arange(8 * 4.).reshape(8, 4), jax.P('X', None))\n"
     "w = jax.device_put(jnp.arange(4 * 2.).reshape(4, 2) / 10., jax.P(None, None))\n"
     "print(jax.typeof(x))\njax.typeof(w)",
     [('stream', 'float32[8@X,4]\n'), ('result', 'ShapedArray(float32[4,2])')]),
    ("def loss(w, x):\n  return jnp.sum((x @ w) ** 2)\n\n"
     "print(jax.make_jaxpr(jax.grad(loss))(w, x))",
     [('stream', None)]),  # checked below
    (":comm jax.grad(loss)(w, x)", [('stream', None)]),
    ("a = jax.device_put(jnp.arange(4.).reshape(2, 2), jax.P(None, 'X'))\n"
     "b = jax.device_put(jnp.arange(4., 8.).reshape(2, 2), jax.P('X', None))\n"
     "print('before')\na @ b\nprint('not reached')",
     [('stream', 'before\n'), ('error', 'ShardingTypeError', None, None)]),
    ("print(jax.typeof(a))", [('stream', 'float32[2,2@X]\n')]),
    # what a cell prints comes as it is printed (checked below)
    ("import time\nprint('a')\ntime.sleep(0.3)\nprint('b')", [('stream', 'a\nb\n')]),
    # a warning is the cell's stderr
    ("print(jnp.zeros(2, dtype=jnp.float64).dtype)", [('stream', 'float32\n'), ('stream', None)]),
]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([prog, '--install-kernel', '--prefix', tmp] + extra,
                           capture_output=True, text=True)
        check(r.returncode == 0, 'install-kernel: %r' % r.stderr)
        spec = os.path.join(tmp, 'share', 'jupyter', 'kernels', 'shardrepl', 'kernel.json')
        check(os.path.exists(spec), 'kernel.json written')
        os.environ['JUPYTER_PATH'] = os.path.join(tmp, 'share', 'jupyter')
        os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
        km = KernelManager(kernel_name='shardrepl')
        km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=TIMEOUT)
            session(km, kc)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=False)
        if not extra:
            notebook()
    if failures:
        print('%d failures' % len(failures))
        sys.exit(1)
    print('kernel_test.py %s: ok' % ' '.join(extra))


def notebook():
    """A notebook executed through the kernel by nbclient, as nbconvert
    --execute runs one."""
    import nbclient
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook
    nb = new_notebook()
    nb.metadata.kernelspec = {'name': 'shardrepl', 'display_name': 'shardrepl', 'language': 'python'}
    nb.cells = [new_code_cell("x = 1 + 1\nx * 3"), new_code_cell("print('hi', x)"),
                new_code_cell("x.nosuch", metadata={'tags': ['raises-exception']}),
                new_code_cell(":type x"),
                new_code_cell("input()", metadata={'tags': ['raises-exception']})]
    nbclient.NotebookClient(nb, timeout=TIMEOUT, kernel_name='shardrepl').execute()
    nbformat.validate(nb)
    got = [[(o.output_type, o.get('text') or o.get('data', {}).get('text/plain') or o.get('ename'))
            for o in c.outputs] for c in nb.cells]
    want = [[('execute_result', '6')], [('stream', 'hi 2\n')], [('error', 'AttributeError')],
            [('stream', "<class 'int'>\n")], [('error', 'StdinNotImplementedError')]]
    check(got == want, 'nbclient: %r' % got)
    check([c.execution_count for c in nb.cells] == [1, 2, 3, 4, 5], 'nbclient: execution counts')
    print('nbclient: %d cells executed' % len(nb.cells))


def session(km, kc):
    kc.kernel_info()
    info = kc.get_shell_msg(timeout=TIMEOUT)['content']
    check(info['protocol_version'] == '5.3', 'protocol 5.3: %r' % info)
    check(info['language_info']['name'] == 'python', 'language_info')
    for n, (code, want) in enumerate(CELLS, 1):
        reply, outs = run_cell(kc, code)
        got = outputs(outs)
        if os.environ.get("KT_VERBOSE"): print(n, got)
        types = [m['msg_type'] for m in outs]
        check(types[0] == 'status' and outs[0]['content']['execution_state'] == 'busy',
              'cell %d: busy first: %r' % (n, types))
        check('execute_input' in types, 'cell %d: execute_input' % n)
        check(reply['execution_count'] == n, 'cell %d: execution_count %r' % (n, reply['execution_count']))
        check(len(got) == len(want), 'cell %d: outputs %r, want %r' % (n, got, want))
        for g, w in zip(got, want):
            check(g[0] == w[0], 'cell %d: %r, want %r' % (n, g, w))
            if w[0] == 'error':
                check(reply['status'] == 'error' and reply['ename'] == w[1], 'cell %d: reply %r' % (n, reply))
                check(g[1] == w[1], 'cell %d: ename %r' % (n, g[1]))
                check('<cell %d>:4:3: error: ShardingTypeError: Contracting dimensions are sharded' % n in g[3]
                      and '    a @ b\n      ^' in g[3], 'cell %d: located traceback %r' % (n, g[3]))
            elif w[1] is not None:
                check(g[1] == w[1], 'cell %d: %r, want %r' % (n, g[1], w[1]))
        if n == 8:
            check([m['content']['text'] for m in outs if m['msg_type'] == 'stream'] == ['a\n', 'b\n'],
                  'cell 8: streamed as printed %r' % outs)
        if n == 9:
            check(len(outs) > 3 and [m['content'].get('name') for m in outs if m['msg_type'] == 'stream']
                  == ['stdout', 'stderr'] and 'UserWarning' in got[1][1], 'cell 9: warning on stderr %r' % got)
        if n == 4:
            text = got[0][1] if got else ''
            check('transpose[permutation=(1, 0)]' in text and 'f32[8@X,4]' in text,
                  'cell 4: gradient jaxpr %r' % text)
        if n == 5:
            text = got[0][1] if got else ''
            check('all-reduce' in text and 'dot_general' in text, 'cell 5: :comm %r' % text)
        if want[-1][0] != 'error':
            check(reply['status'] == 'ok', 'cell %d: status %r' % (n, reply))

    # is_complete
    for code, want in [('x = 1', 'complete'), ('def f(x):', 'incomplete'), ('f(1,', 'incomplete'),
                       ('def f(x):\n    return x\n\n', 'complete')]:
        kc.is_complete(code)
        c = kc.get_shell_msg(timeout=TIMEOUT)['content']
        check(c['status'] == want, 'is_complete %r: %r, want %r' % (code, c, want))
    kc.is_complete('def f(x):')
    c = kc.get_shell_msg(timeout=TIMEOUT)['content']
    check(c.get('indent') == '    ', 'is_complete indent %r' % c)

    # complete
    kc.complete('jnp.ara', 7)
    c = kc.get_shell_msg(timeout=TIMEOUT)['content']
    check('jnp.arange' in c['matches'] and c['cursor_start'] == 0 and c['cursor_end'] == 7, 'complete %r' % c)
    kc.complete('y = los', 7)
    c = kc.get_shell_msg(timeout=TIMEOUT)['content']
    check('loss' in c['matches'] and c['cursor_start'] == 4, 'complete a binding %r' % c)

    # inspect: the :help text
    kc.inspect('jnp.sin(x)', 3)
    c = kc.get_shell_msg(timeout=TIMEOUT)['content']
    check(c['found'] and 'sin(x)' in c['data'].get('text/plain', ''), 'inspect %r' % c)
    kc.inspect('nosuchname', 3)
    c = kc.get_shell_msg(timeout=TIMEOUT)['content']
    check(not c['found'], 'inspect unknown %r' % c)

    # an interrupted cell: SIGINT stops it, the session goes on
    msg_id = kc.execute('i = 0\nwhile True:\n    i += 1\n')
    time.sleep(1.0)
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=TIMEOUT)
    check(reply['parent_header']['msg_id'] == msg_id and reply['content']['status'] == 'error'
          and reply['content']['ename'] == 'KeyboardInterrupt', 'interrupt: %r' % reply['content'])
    reply, outs = run_cell(kc, 'print(i > 0, jax.typeof(a))')
    check(outputs(outs) == [('stream', 'True float32[2,2@X]\n', 'stdout')], 'after the interrupt: %r' % outputs(outs))

    # an interrupt_request on the control channel stops a busy cell too
    msg_id = kc.execute('j = 0\nwhile True:\n    j += 1\n')
    time.sleep(1.0)
    req = kc.session.msg('interrupt_request', {})
    kc.control_channel.send(req)
    rep = kc.get_control_msg(timeout=TIMEOUT)
    check(rep['msg_type'] == 'interrupt_reply' and rep['parent_header']['msg_id'] == req['header']['msg_id'],
          'interrupt_request: %r' % rep)
    reply = kc.get_shell_msg(timeout=TIMEOUT)
    check(reply['parent_header']['msg_id'] == msg_id and reply['content']['status'] == 'error'
          and reply['content']['ename'] == 'KeyboardInterrupt', 'interrupt_request: %r' % reply['content'])
    reply, outs = run_cell(kc, 'print(j > 0)')
    check(outputs(outs) == [('stream', 'True\n', 'stdout')], 'after interrupt_request: %r' % outputs(outs))

    # input() through the stdin channel: the prompt goes in the
    # input_request, what was printed before it first
    msg_id = kc.execute('print("before")\nname = input("who? ")\nprint("hi", name)', allow_stdin=True)
    m = kc.get_stdin_msg(timeout=TIMEOUT)
    check(m['msg_type'] == 'input_request' and m['content']['prompt'] == 'who? '
          and m['parent_header']['msg_id'] == msg_id, 'input_request %r' % m)
    kc.input('Ada')
    reply = kc.get_shell_msg(timeout=TIMEOUT)
    check(reply['content']['status'] == 'ok', 'input: %r' % reply['content'])
    outs = []
    while True:
        o = kc.get_iopub_msg(timeout=TIMEOUT)
        if o['parent_header'].get('msg_id') != msg_id:
            continue
        outs.append(o)
        if o['msg_type'] == 'status' and o['content']['execution_state'] == 'idle':
            break
    check(outputs(outs) == [('stream', 'before\nhi Ada\n', 'stdout')], 'input: %r' % outputs(outs))
    # a front end that allows no input: ipykernel's StdinNotImplementedError
    msg_id = kc.execute('input()', allow_stdin=False)
    reply = kc.get_shell_msg(timeout=TIMEOUT)
    check(reply['content']['status'] == 'error' and reply['content']['ename'] == 'StdinNotImplementedError'
          and 'does not support input requests' in reply['content']['evalue'], 'no stdin: %r' % reply['content'])


main()
