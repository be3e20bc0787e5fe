#!/usr/bin/env python3
"""train_step.py: a training step end to end, shardrepl beside numpy
(`make bench`; see bench/README.md).

The step is the microbatch example of the seed "Autodiff and sharding",
scaled up (bench/train_step.jxr): --layers weights of --features squared
float32, stacked and reduced over the mesh axis X of 4 devices; a scan over
--microbatches microbatches of --batch rows (split over X), each taking
jax.grad of sum(predict(ws, x) ** 2) through a scan over the layers
(x = tanh(x @ w)); the unreduced gradients accumulate, are all-reduced once,
and ws - 0.01 * grads is the new weights.

This script writes the weights and the batch (a fixed seed) to --out, then
takes turns for --rounds rounds between
  numpy      this process: the same forward and backward pass written by
             hand (the activations kept, then the layers in reverse), the
             same steps;
  1 process  `shardrepl --devices 4 train_step.jxr`: 4 simulated devices;
  4 ranks    `mpirun -np 4 ... shardrepl --devices 4 train_step.jxr`: one
             device per rank (skipped without --mpirun);
  numpy 1T   numpy again in a child process with OPENBLAS_NUM_THREADS=1:
             one BLAS thread, as each rank and each of the one process's
             pool threads uses (the first numpy uses all the cores);
each one warm-up step, then --steps timed steps of training.  shardrepl
times its steps inside the script (time.perf_counter, time.process_time).
It checks shardrepl's first step against numpy's: the new weights of the
one-process run (train_new_ws.npy) and the sum of the update's magnitudes
that both runs print.  The summary is the median over rounds of each run's
median step time.
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np


def grads_and_loss(ws, x):
    """d/dws of sum(predict(ws, x) ** 2), by hand."""
    acts = [x]
    for w in ws:
        x = np.tanh(x @ w)
        acts.append(x)
    g = 2 * x
    gws = np.empty_like(ws)
    for k in range(len(ws) - 1, -1, -1):
        gz = g * (1 - acts[k + 1] ** 2)   # through tanh
        gws[k] = acts[k].T @ gz
        g = gz @ ws[k].T
    return gws, float(np.sum(x ** 2))


def step(ws, xs):
    acc = np.zeros_like(ws)
    for x in xs:
        acc += grads_and_loss(ws, x)[0]
    return ws - np.float32(0.01) * acc


def numpy_run(ws, xs, steps):
    first = step(ws, xs)   # warm-up, and the check
    walls, cpus = [], []
    for _ in range(steps):
        t, c = time.perf_counter(), time.process_time()
        ws = step(ws, xs)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return first, statistics.median(walls), statistics.median(cpus)


def numpy_child(out, steps, threads):
    """numpy_run in a child process with `threads` BLAS threads: (wall, CPU)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    r = subprocess.run([sys.executable, os.path.abspath(__file__), '--numpy-child', out, '--steps', str(steps)],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r'numpy child: wall ([0-9.]+) CPU ([0-9.]+)', r.stdout)
    if r.returncode != 0 or not m:
        sys.exit(f'train_step: numpy with {threads} BLAS thread(s) failed ({r.returncode}):\n{r.stdout}')
    return float(m.group(1)), float(m.group(2))


def shardrepl_run(cmd, what, out):
    r = subprocess.run(cmd, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r'wall min [0-9.]+ s median ([0-9.]+) s; CPU of rank 0 min [0-9.]+ s median ([0-9.]+) s', r.stdout)
    c = re.search(r"update's magnitudes ([0-9.e+-]+)", r.stdout)
    if r.returncode != 0 or not m or not c:
        sys.exit(f'train_step: {what} failed ({r.returncode}):\n{r.stdout}')
    return float(m.group(1)), float(m.group(2)), float(c.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--shardrepl', required=True)
    ap.add_argument('--script', required=True, help='bench/train_step.jxr')
    ap.add_argument('--mpirun', help='the mpirun command and its options, e.g. "mpirun --oversubscribe"')
    ap.add_argument('--out', default='bench/out')
    ap.add_argument('--layers', type=int, default=8)
    ap.add_argument('--features', type=int, default=512)
    ap.add_argument('--microbatches', type=int, default=4)
    ap.add_argument('--batch', type=int, default=256, help='rows per microbatch (a multiple of 4)')
    ap.add_argument('--steps', type=int, default=5, help='timed steps (as in train_step.jxr)')
    ap.add_argument('--rounds', type=int, default=3)
    if len(sys.argv) > 2 and sys.argv[1] == '--numpy-child':
        out = sys.argv[2]
        steps = int(sys.argv[4]) if len(sys.argv) > 4 else 5
        ws, xs = np.load(os.path.join(out, 'train_ws.npy')), np.load(os.path.join(out, 'train_xs.npy'))
        _, w, c = numpy_run(ws, xs, steps)
        print(f'numpy child: wall {w:.6f} CPU {c:.6f}')
        return
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)
    L, F, M, B = args.layers, args.features, args.microbatches, args.batch
    ws = (rng.standard_normal((L, F, F)) / np.sqrt(F)).astype(np.float32)
    xs = rng.standard_normal((M, B, F)).astype(np.float32)
    np.save(os.path.join(args.out, 'train_ws.npy'), ws)
    np.save(os.path.join(args.out, 'train_xs.npy'), xs)
    script = os.path.abspath(args.script)
    prog = os.path.abspath(args.shardrepl)
    runs = [('1 process', [prog, '--devices', '4', script])]
    if args.mpirun:
        runs.append(('4 ranks', shlex.split(args.mpirun) + ['-np', '4', prog, '--devices', '4', script]))

    vf = subprocess.run([prog, '--version'], capture_output=True, text=True).stdout.splitlines()
    print('  ' + (vf[2] if len(vf) > 2 else 'kernels: ?') + f'; numpy {np.__version__}')
    flops = 3 * 2 * B * F * F * L * M   # three matmuls per layer and microbatch
    print(f'  training step: {L} layers of {F}x{F} float32 weights (reduced over X), {M} microbatches '
          f'of {B} rows (split over X), 4 devices; {flops / 1e9:.1f} GFLOP of matmuls a step; '
          f'median of {args.steps} steps after a warm-up, seconds:')
    print(f"    {'round':>5}  {'numpy wall':>10} {'CPU':>6}  {'numpy 1T wall':>13} {'CPU':>6}" +
          ''.join(f"  {name + ' wall':>15} {'CPU':>6}" for name, _ in runs))
    rows, ones = [], []
    for k in range(args.rounds):
        first, nw, nc = numpy_run(ws, xs, args.steps)
        row = [(nw, nc)]
        ones.append(numpy_child(args.out, args.steps, 1))
        upd = float(np.sum(np.abs(first - ws), dtype=np.float64))
        for name, cmd in runs:
            w, c, mag = shardrepl_run(cmd, name, args.out)
            if abs(mag - upd) > 1e-4 * upd:
                sys.exit(f"train_step: {name}: the update's magnitudes add up to {mag:.9e}, numpy's to {upd:.9e}")
            row.append((w, c))
        if k == 0:
            sr = np.load(os.path.join(args.out, 'train_new_ws.npy'))
            err = float(np.max(np.abs((sr - ws) - (first - ws))) / np.max(np.abs(first - ws)))
            if err > 1e-4:
                sys.exit(f'train_step: shardrepl\'s update differs from numpy\'s by {err:.2e} of its largest element')
        rows.append(row)
        print(f'    {k + 1:>5}  {nw:>10.3f} {nc:>6.3f}  {ones[-1][0]:>13.3f} {ones[-1][1]:>6.3f}' +
              ''.join(f'  {w:>15.3f} {c:>6.3f}' for w, c in row[1:]), flush=True)

    med = statistics.median
    nw = med(r[0][0] for r in rows)
    print(f'  checked: the new weights of shardrepl\'s first step match numpy\'s (largest difference of the update '
          f'{err:.1e} of its largest element), and both runs\' sums of the update agree to 1e-4')
    print(f'  median of {args.rounds} rounds: numpy {nw:.3f} s a step, with one BLAS thread '
          f'{med(o[0] for o in ones):.3f} s' +
          ''.join(f'; shardrepl {name} {med(r[i + 1][0] for r in rows):.3f} s '
                  f'({med(r[i + 1][0] / r[0][0] for r in rows):.2f}x numpy, '
                  f'{med(r[i + 1][0] / o[0] for r, o in zip(rows, ones)):.2f}x numpy with one BLAS thread)'
                  for i, (name, _) in enumerate(runs)))


if __name__ == '__main__':
    main()
