"""eager_math.py: eager elementwise math, shardrepl against numpy.

    python3 eager_math.py --shardrepl src/shardrepl [--rounds 3] [--clock cpu]

Times, per call: jnp.tanh and jnp.exp of 4,096 float32, an add of two
4,096-float arrays, and a loop of 64x64 `tanh(x @ m)`; the same in numpy,
in this process; shardrepl with its vector math (libmvec, lib/exec/vmath.c)
and with SHARDREPL_VMATH=0 (libm's scalar functions).  Each program times
its own loops with time.perf_counter, so start-up is not counted; the
table gives the median of the rounds and the ratio to numpy.  With
--clock cpu both time them with time.process_time, the CPU time of the
process, which a machine loaded by other work disturbs far less.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

CASES = [
    ('tanh f32[4096]', 'y = jnp.tanh(x)', 'y = np.tanh(x)', 2000),
    ('exp f32[4096]', 'y = jnp.exp(x)', 'y = np.exp(x)', 2000),
    ('add f32[4096]', 'y = x + x2', 'y = x + x2', 2000),
    ('tanh(x @ m) 64x64', 'a = jnp.tanh(a @ m)', 'a = np.tanh(a @ m)', 500),
]

SCRIPT = '''import time
x = jnp.linspace(-3.0, 3.0, 4096, dtype=jnp.float32)
x2 = x * 0.5
a = jnp.ones((64, 64), jnp.float32) * 0.01
m = jnp.eye(64, dtype=jnp.float32) * 0.5
'''


CLOCK = 'perf_counter'


def shardrepl_times(prog, env):
    body = SCRIPT
    for name, stmt, _, n in CASES:
        body += ('for i in range(50):\n    %s\n' % stmt)
        body += ('t0 = time.%s()\nfor i in range(%d):\n    %s\n' % (CLOCK, n, stmt))
        body += ('print(%r, (time.%s() - t0) / %d)\n' % (name, CLOCK, n))
    with tempfile.NamedTemporaryFile('w', suffix='.jxr', delete=False) as f:
        f.write(body)
    try:
        out = subprocess.run([prog, f.name], capture_output=True, text=True, env=env, check=True).stdout
    finally:
        os.unlink(f.name)
    r = {}
    for line in out.splitlines():
        name, _, t = line.rpartition(' ')
        r[name.strip("'")] = float(t)
    return r


def numpy_times():
    x = np.linspace(-3.0, 3.0, 4096, dtype=np.float32)
    x2 = x * np.float32(0.5)
    a = np.ones((64, 64), np.float32) * np.float32(0.01)
    m = np.eye(64, dtype=np.float32) * np.float32(0.5)
    env = {'np': np, 'x': x, 'x2': x2, 'a': a, 'm': m}
    clock = getattr(time, CLOCK)
    r = {}
    for name, _, stmt, n in CASES:
        code = compile('for i in range(%d):\n    %s\n' % (n, stmt), name, 'exec')
        exec(compile('for i in range(50):\n    %s\n' % stmt, name, 'exec'), env)
        t0 = clock()
        exec(code, env)
        r[name] = (clock() - t0) / n
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--shardrepl', required=True)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--clock', choices=['wall', 'cpu'], default='wall')
    args = ap.parse_args()
    global CLOCK
    CLOCK = 'process_time' if args.clock == 'cpu' else 'perf_counter'
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1')
    off = dict(env, SHARDREPL_VMATH='0')
    runs = {'numpy': [], 'shardrepl': [], 'shardrepl, libm': []}
    for _ in range(args.rounds):
        runs['numpy'].append(numpy_times())
        runs['shardrepl'].append(shardrepl_times(args.shardrepl, env))
        runs['shardrepl, libm'].append(shardrepl_times(args.shardrepl, off))
    vf = subprocess.run([args.shardrepl, '--version'], capture_output=True, text=True).stdout.splitlines()
    print('  %s; numpy %s, one OpenBLAS thread; median of %d rounds, %s time' % (
        vf[2] if len(vf) > 2 else '', np.__version__, args.rounds, args.clock))
    print('  %-20s %12s %22s %22s' % ('per call', 'numpy', 'shardrepl (vmath)', 'shardrepl (libm)'))
    for name, _, _, _ in CASES:
        med = {k: statistics.median(r[name] for r in v) for k, v in runs.items()}
        base = med['numpy']
        print('  %-20s %9.2f us %12.2f us %5.2fx %12.2f us %5.2fx' % (
            name, base * 1e6, med['shardrepl'] * 1e6, med['shardrepl'] / base,
            med['shardrepl, libm'] * 1e6, med['shardrepl, libm'] / base))


if __name__ == '__main__':
    sys.exit(main())
