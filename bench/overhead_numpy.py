#!/usr/bin/env python3
"""overhead_numpy.py: shardrepl's overhead per equation beside numpy's per
operation, measured in the same run (`make bench`; see bench/README.md).

The work: a chain of N (default 100,000) elementwise operations on float32
arrays of 4 elements, a = a * c and a = a + b in turn, from a = [1, 2, 3, 4],
b = 1, c = 0.5 (the values stay finite: a tends to 2).  Three ways, taking
turns for --rounds rounds so that the slow spells of a shared machine fall
on all of them alike:

  evaluator  `bench_exec --chain N`: the chain as one parsed jaxpr run by
             the evaluator (sr_ev_jaxpr), one device, no language layer;
  numpy      this process: the Python loop over np.multiply / np.add on
             np.float32 arrays (a = a * c; a = a + b);
  language   `shardrepl chain.jxr`: the same jaxpr as a value of the
             statement language, called on concrete arrays, f(a, b, c),
             timed inside the script with time.perf_counter and
             time.process_time.

Each takes the best of --runs runs within a round; a round reports CPU time
(what other processes on the machine take away from it least) and wall
time per operation.  The summary is the median over rounds, and the median
of the per-round ratios shardrepl / numpy.  The three results must agree.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def var_name(i):
    s = ''
    while True:
        s = chr(ord('a') + i % 26) + s
        i = i // 26 - 1
        if i < 0:
            return s


def chain_script(n, runs):
    """The statement-language script: the chain as a jaxpr value, timed."""
    out = ['import time', 'import jax.numpy as jnp',
           'f = { lambda ; a:f32[4] b:f32[4] c:f32[4]. let']
    for i in range(n):
        v, w = var_name(i + 2 if i else 0), var_name(i + 3)
        out.append(f"    {w}:f32[4] = {'add' if i % 2 else 'mul'} {v} {'b' if i % 2 else 'c'}")
    out.append(f'  in ({var_name(n + 2)},) }}')
    out += [
        'a = jnp.array([1., 2., 3., 4.], dtype=jnp.float32)',
        'b = jnp.ones(4, dtype=jnp.float32)',
        'c = jnp.full(4, 0.5, dtype=jnp.float32)',
        'r = f(a, b, c)',
        'wall, cpu = 1e9, 1e9',
        f'for _ in range({runs}):',
        '  t, p = time.perf_counter(), time.process_time()',
        '  r = f(a, b, c)',
        '  p, t = time.process_time() - p, time.perf_counter() - t',
        '  wall, cpu = min(wall, t), min(cpu, p)',
        f"print(f'language: {{cpu / {n} * 1e9:.1f}} ns CPU, {{wall / {n} * 1e9:.1f}} ns wall; result', "
        "' '.join(str(float(x)) for x in r))",
    ]
    return '\n'.join(out) + '\n'


def numpy_chain(n, runs):
    a0 = np.array([1, 2, 3, 4], np.float32)
    b = np.ones(4, np.float32)
    c = np.full(4, 0.5, np.float32)
    wall = cpu = 1e9
    for _ in range(runs):
        a = a0
        t, p = time.perf_counter(), time.process_time()
        for _ in range(n // 2):
            a = a * c
            a = a + b
        if n % 2:
            a = a * c
        p, t = time.process_time() - p, time.perf_counter() - t
        wall, cpu = min(wall, t), min(cpu, p)
    return cpu / n * 1e9, wall / n * 1e9, [float(x) for x in a]


def run(cmd, what, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f'overhead_numpy: {what} failed ({r.returncode}):\n{r.stdout}')
    return r.stdout


def parse(text, pat, what):
    m = re.search(pat, text)
    if not m:
        sys.exit(f'overhead_numpy: no figures in the output of {what}:\n{text}')
    return float(m.group(1)), float(m.group(2)), [float(x) for x in m.group(3).split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bench-exec', required=True, help='bench/bench_exec')
    ap.add_argument('--shardrepl', help='src/shardrepl (the language figure)')
    ap.add_argument('--out', default='bench/out', help='folder for the generated script')
    ap.add_argument('-n', type=int, default=100000, help='operations in the chain')
    ap.add_argument('--runs', type=int, default=5, help='runs per round (best taken)')
    ap.add_argument('--rounds', type=int, default=5)
    args = ap.parse_args()

    n = args.n
    script = None
    if args.shardrepl:
        os.makedirs(args.out, exist_ok=True)
        script = os.path.join(args.out, f'chain-{n}.jxr')
        with open(script, 'w') as f:
            f.write(chain_script(n, args.runs))

    print(f'  chain of {n:,} elementwise operations on float32[4] (a = a * c; a = a + b), '
          f'best of {args.runs} per round, ns per operation:')
    print(f"    {'round':>5}  {'evaluator CPU':>13} {'wall':>7}  {'numpy CPU':>9} {'wall':>7}  "
          f"{'ratio':>5}" + (f"  {'language CPU':>12} {'wall':>7}" if script else ''))
    rows = []
    for k in range(args.rounds):
        ev = parse(run([args.bench_exec, '--chain', str(n), '-n', str(args.runs)], 'bench_exec'),
                   r'([0-9.]+) ns per equation of CPU time, ([0-9.]+) ns wall; result (.*)', 'bench_exec')
        npy = numpy_chain(n, args.runs)
        lang = None
        if script:
            lang = parse(run([args.shardrepl, script], 'shardrepl'),
                         r'language: ([0-9.]+) ns CPU, ([0-9.]+) ns wall; result (.*)', 'shardrepl')
        for what, res in (('the evaluator', ev), ('the language', lang)):
            if res and res[2] != npy[2]:
                sys.exit(f'overhead_numpy: {what} computed {res[2]}, numpy {npy[2]}')
        rows.append((ev, npy, lang))
        line = f'    {k + 1:>5}  {ev[0]:>13.1f} {ev[1]:>7.1f}  {npy[0]:>9.1f} {npy[1]:>7.1f}  {ev[0] / npy[0]:>5.2f}'
        if lang:
            line += f'  {lang[0]:>12.1f} {lang[1]:>7.1f}'
        print(line, flush=True)

    med = statistics.median
    ev_cpu, ev_wall = med(r[0][0] for r in rows), med(r[0][1] for r in rows)
    np_cpu, np_wall = med(r[1][0] for r in rows), med(r[1][1] for r in rows)
    ratio_cpu = med(r[0][0] / r[1][0] for r in rows)
    ratio_wall = med(r[0][1] / r[1][1] for r in rows)
    print(f'  median of {args.rounds} rounds: evaluator {ev_cpu:.1f} ns CPU ({ev_wall:.1f} ns wall) per equation, '
          f'numpy {np_cpu:.1f} ns CPU ({np_wall:.1f} ns wall) per operation')
    print(f'  evaluator / numpy: {ratio_cpu:.2f} of numpy\'s CPU time, {ratio_wall:.2f} of its wall time '
          f'(median of the per-round ratios); results agree ({" ".join(str(x) for x in rows[0][1][2])})')
    if script:
        l_cpu, l_wall = med(r[2][0] for r in rows), med(r[2][1] for r in rows)
        print(f'  statement language, f(a, b, c) on the jaxpr: {l_cpu:.1f} ns CPU ({l_wall:.1f} ns wall) per equation, '
              f'{med(r[2][0] / r[1][0] for r in rows):.2f} of numpy\'s CPU time')


if __name__ == '__main__':
    main()
