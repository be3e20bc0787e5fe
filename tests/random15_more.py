# random15_more.py: what random15_more.jxr prints, from a pure-Python
# threefry2x32 (the one random15_values.py checks) and jax/_src/random/
# core.py's algorithms written again in numpy: randint (_randint: two
# 32-bit draws from split keys folded mod span), bernoulli and rademacher
# (uniform < p), gumbel (-log(-log(uniform(tiny, 1)))), permutation
# (_shuffle: ceil(3 log n / log(2^32 - 1)) stable sorts by fresh bits),
# categorical (argmax or top_k of logits + gumbel) and choice.
import math
import numpy as np

from threefry_ref import M, key, split, threefry

def bits(k, shape):
    n = int(np.prod(shape, dtype=np.int64))
    return np.array([a ^ c for a, c in split(k, n)], dtype=np.uint32).reshape(shape)

def uniform(k, shape, lo=0.0, hi=1.0):
    b = bits(k, shape)
    f = ((b >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
    lo, hi = np.float32(lo), np.float32(hi)
    return np.maximum(lo, f * (hi - lo) + lo)

def gumbel(k, shape):
    u = uniform(k, shape, np.finfo(np.float32).tiny, 1.0)
    return -np.log(-np.log(u))

def bernoulli(k, p, shape):
    return uniform(k, shape) < np.float32(p)

def randint(k, shape, lo, hi):
    # int32 sampling; lo, hi already clipped to the dtype
    k1, k2 = split(k)
    higher, lower = bits(k1, shape), bits(k2, shape)
    span = np.uint32((hi - lo) & M) if hi > lo else np.uint32(1)
    with np.errstate(over='ignore'):
        mult = np.uint32(65536) % span
        mult = (mult * mult) % span
        off = ((higher % span) * mult + lower % span) % span
    return (np.int64(lo) + off.astype(np.int64)).astype(np.int32)

def shuffle(k, x, axis=0):
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(M)))
    for _ in range(rounds):
        k, sub = split(k)
        sk = bits(sub, x.shape)
        order = np.argsort(sk, axis=axis, kind='stable')
        x = np.take_along_axis(x, order, axis=axis)
    return x

def top_k_indices(v, k):
    return np.argsort(-v, kind='stable')[:k]

def show(x):
    print([int(v) for v in np.ravel(x)])

def showf(x):
    print([f"{float(v):.5f}" for v in np.ravel(x)])

k = key(0)
showf(gumbel(k, (4,)))
show(bernoulli(k, 0.3, (8,)))
show(2 * bernoulli(k, 0.5, (8,)).astype(np.int32) - 1)
show(randint(k, (6,), 0, 10))
show(randint(key(3), (2, 3), -100, 100))
show(randint(k, (6,), 0, 256).astype(np.uint8))   # uint8, minval -5, maxval 300
show(randint(k, (4,), 5, 5))                      # empty range: minval
show(shuffle(k, np.arange(8)))
show(shuffle(key(1), np.arange(100)))
show(np.arange(6).reshape(3, 2)[shuffle(k, np.arange(3))])
show(shuffle(k, np.arange(6).reshape(3, 2), axis=1))
lg = np.array([[0., 1., 2.], [3., 0., -1.]], np.float32)
show(np.argmax(gumbel(k, (2, 3)) + lg, axis=-1))
l1 = np.array([0., 1., 2.], np.float32)
show(np.argmax(gumbel(k, (4, 3)) + l1[None], axis=-1))
l2 = np.array([0., 1., 2., 0.5], np.float32)
show(top_k_indices(l2 + gumbel(k, (4,)), 2))
show(randint(k, (3,), 0, 5))
show(shuffle(k, np.arange(10.))[:4])
p = np.array([.1, .2, .3, .2, .2], np.float32)
show(top_k_indices(gumbel(k, (5,)) + np.log(p), 3))
# under jit, vmap and scan: the same draws
ks = split(key(7), 3)
show(np.stack([randint(kk, (2,), 0, 100) for kk in ks]))
show(np.stack([bernoulli(kk, 0.5, (3,)) for kk in ks]))
c, out = key(9), []
for _ in range(3):
    c, sub = split(c)
    out.append(shuffle(sub, np.arange(5)))
show(out)
