#!/usr/bin/env python3
"""transformer.py: a 2-layer transformer block, forward and backward,
shardrepl under jax.jit(jax.grad(...)) beside numpy (`make bench`; see
bench/README.md).

The block is bench/transformer.jxr's: pre-norm layers of d = --d features,
x + attention(layer_norm(x)) with --heads heads and a softmax over the keys,
then h + mlp(layer_norm(h)) with a hidden layer of 4d and jax.nn.gelu (its
tanh approximation); --layers layers on a batch of --batch sequences of
--seq tokens, the loss mean(out ** 2), its gradient with respect to every
parameter.  numpy computes the same gradient by hand in this process (the
forward pass keeping what the backward pass needs, then each layer in
reverse), in float32 as shardrepl does.

This script writes the parameters and the input (a fixed seed) to --out,
then takes turns for --rounds rounds between numpy (one warm-up step and
--steps timed steps) and `shardrepl transformer.jxr` (the same, timed inside
the script with time.perf_counter and time.process_time), and checks
shardrepl's gradients (tf_grad_*.npy, from its warm-up step) against
numpy's: for each parameter the largest difference over its largest
magnitude.  The summary is the median over rounds of each run's median.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

NAMES = ('ln1_g', 'ln1_b', 'wq', 'wk', 'wv', 'wo', 'ln2_g', 'ln2_b', 'w1', 'b1', 'w2', 'b2')
C = np.float32(np.sqrt(2 / np.pi))
EPS = np.float32(1e-5)


def make_params(rng, layers, d):
    f = np.float32
    p = []
    for _ in range(layers):
        q = {'ln1_g': 1 + 0.1 * rng.standard_normal(d), 'ln1_b': 0.1 * rng.standard_normal(d),
             'ln2_g': 1 + 0.1 * rng.standard_normal(d), 'ln2_b': 0.1 * rng.standard_normal(d),
             'w1': rng.standard_normal((d, 4 * d)) / np.sqrt(d), 'b1': 0.1 * rng.standard_normal(4 * d),
             'w2': rng.standard_normal((4 * d, d)) / np.sqrt(4 * d), 'b2': 0.1 * rng.standard_normal(d)}
        for n in ('wq', 'wk', 'wv', 'wo'):
            q[n] = rng.standard_normal((d, d)) / np.sqrt(d)
        p.append({n: q[n].astype(f) for n in NAMES})
    return p


def ln_fwd(x, g, b):
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    rstd = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + EPS)
    xh = xc * rstd
    return xh * g + b, (xh, rstd, g)


def ln_bwd(dy, cache):
    xh, rstd, g = cache
    dg = (dy * xh).sum((0, 1))
    db = dy.sum((0, 1))
    dxh = dy * g
    dx = rstd * (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True))
    return dx, dg, db


def block_fwd(x, p, heads):
    B, S, D = x.shape
    dh = D // heads
    a, c1 = ln_fwd(x, p['ln1_g'], p['ln1_b'])
    split = lambda t: t.reshape(B, S, heads, dh).transpose(0, 2, 1, 3)
    q, k, v = split(a @ p['wq']), split(a @ p['wk']), split(a @ p['wv'])
    s = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(dh))
    e = np.exp(s - s.max(-1, keepdims=True))
    pr = e / e.sum(-1, keepdims=True)
    o = (pr @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
    h = x + o @ p['wo']
    a2, c2 = ln_fwd(h, p['ln2_g'], p['ln2_b'])
    u = a2 @ p['w1'] + p['b1']
    t = np.tanh(C * (u + np.float32(0.044715) * u ** 3))
    gu = np.float32(0.5) * u * (1 + t)
    out = h + gu @ p['w2'] + p['b2']
    return out, (a, c1, q, k, v, pr, o, a2, c2, u, t, gu)


def block_bwd(dout, p, cache, heads):
    a, c1, q, k, v, pr, o, a2, c2, u, t, gu = cache
    B, S, D = dout.shape
    dh = D // heads
    g = {}
    tok = lambda z: z.reshape(B * S, -1)
    # mlp
    g['b2'] = dout.sum((0, 1))
    g['w2'] = tok(gu).T @ tok(dout)
    dgu = dout @ p['w2'].T
    du = dgu * (np.float32(0.5) * (1 + t) +
                np.float32(0.5) * u * (1 - t * t) * C * (1 + np.float32(3 * 0.044715) * u * u))
    g['b1'] = du.sum((0, 1))
    g['w1'] = tok(a2).T @ tok(du)
    dh_, g['ln2_g'], g['ln2_b'] = ln_bwd(du @ p['w1'].T, c2)
    dh_ = dh_ + dout
    # attention
    g['wo'] = tok(o).T @ tok(dh_)
    do = (dh_ @ p['wo'].T).reshape(B, S, heads, dh).transpose(0, 2, 1, 3)
    dp = do @ v.transpose(0, 1, 3, 2)
    dv = pr.transpose(0, 1, 3, 2) @ do
    ds = pr * (dp - (dp * pr).sum(-1, keepdims=True)) / np.float32(np.sqrt(dh))
    dq = ds @ k
    dk = ds.transpose(0, 1, 3, 2) @ q
    merge = lambda z: z.transpose(0, 2, 1, 3).reshape(B * S, D)
    dq, dk, dv = merge(dq), merge(dk), merge(dv)
    g['wq'], g['wk'], g['wv'] = tok(a).T @ dq, tok(a).T @ dk, tok(a).T @ dv
    da = (dq @ p['wq'].T + dk @ p['wk'].T + dv @ p['wv'].T).reshape(B, S, D)
    dx, g['ln1_g'], g['ln1_b'] = ln_bwd(da, c1)
    return dx + dh_, g


def grads(params, x, heads):
    caches = []
    for p in params:
        x, c = block_fwd(x, p, heads)
        caches.append(c)
    dx = np.float32(2 / x.size) * x
    out = [None] * len(params)
    for l in range(len(params) - 1, -1, -1):
        dx, out[l] = block_bwd(dx, params[l], caches[l], heads)
    return out


def numpy_run(params, x, heads, steps):
    first = grads(params, x, heads)
    walls, cpus = [], []
    for _ in range(steps):
        t, c = time.perf_counter(), time.process_time()
        grads(params, x, heads)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return first, statistics.median(walls), statistics.median(cpus)


def shardrepl_run(cmd, out):
    r = subprocess.run(cmd, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r'wall min [0-9.]+ s median ([0-9.]+) s; CPU min [0-9.]+ s median ([0-9.]+) s', r.stdout)
    if r.returncode != 0 or not m:
        sys.exit(f'transformer: shardrepl failed ({r.returncode}):\n{r.stdout}')
    return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--shardrepl', required=True)
    ap.add_argument('--script', required=True, help='bench/transformer.jxr')
    ap.add_argument('--out', default='bench/out')
    ap.add_argument('--layers', type=int, default=2)
    ap.add_argument('--d', type=int, default=512)
    ap.add_argument('--heads', type=int, default=8, help='as in transformer.jxr')
    ap.add_argument('--seq', type=int, default=256)
    ap.add_argument('--batch', type=int, default=8)
    ap.add_argument('--steps', type=int, default=3, help='timed steps (as in transformer.jxr)')
    ap.add_argument('--rounds', type=int, default=3)
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)
    L, D, S, B = args.layers, args.d, args.seq, args.batch
    params = make_params(rng, L, D)
    x = rng.standard_normal((B, S, D)).astype(np.float32)
    np.save(os.path.join(args.out, 'tf_x.npy'), x)
    np.savez(os.path.join(args.out, 'tf_params.npz'), **{f'{l}_{n}': params[l][n] for l in range(L) for n in NAMES})
    cmd = [os.path.abspath(args.shardrepl), os.path.abspath(args.script)]
    vf = subprocess.run(cmd[:1] + ['--version'], capture_output=True, text=True).stdout.splitlines()
    print('  ' + (vf[2] if len(vf) > 2 else 'kernels: ?') + f'; numpy {np.__version__}')
    flops = 3 * L * (2 * B * S * 12 * D * D + 4 * B * S * S * D)   # forward matmuls, and twice that backward
    print(f'  transformer block: {L} layers, d={D}, {args.heads} heads, seq {S}, batch {B}, forward and backward '
          f'under jit(grad); {flops / 1e9:.1f} GFLOP of matmuls a step; median of {args.steps} steps after a '
          f'warm-up, seconds:')
    print(f"    {'round':>5}  {'numpy wall':>10} {'CPU':>6}  {'shardrepl wall':>14} {'CPU':>6}")
    rows = []
    for k in range(args.rounds):
        first, nw, nc = numpy_run(params, x, args.heads, args.steps)
        sw, sc = shardrepl_run(cmd, args.out)
        if k == 0:
            err = 0.0
            for l in range(L):
                for n in NAMES:
                    got = np.load(os.path.join(args.out, f'tf_grad_{l}_{n}.npy'))
                    want = first[l][n]
                    e = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
                    if not e <= 1e-3:
                        sys.exit(f'transformer: the gradient of layer {l} {n} differs from numpy\'s by {e:.2e} '
                                 f'of its largest element')
                    err = max(err, e)
        rows.append((nw, nc, sw, sc))
        print(f'    {k + 1:>5}  {nw:>10.3f} {nc:>6.3f}  {sw:>14.3f} {sc:>6.3f}', flush=True)
    med = statistics.median
    print(f'  checked: every gradient matches numpy\'s (largest difference {err:.1e} of the largest element)')
    print(f'  median of {args.rounds} rounds: numpy {med(r[0] for r in rows):.3f} s a step (CPU '
          f'{med(r[1] for r in rows):.3f}); shardrepl {med(r[2] for r in rows):.3f} s (CPU {med(r[3] for r in rows):.3f}), '
          f'{med(r[2] / r[0] for r in rows):.2f}x numpy\'s wall time, {med(r[3] / r[1] for r in rows):.2f}x its CPU time')


if __name__ == '__main__':
    main()
