# random15_values.py: what random15_values.jxr prints, from a pure-Python
# threefry2x32 (Salmon et al.; JAX's threefry2x32.py, 20 rounds) and JAX's
# partitionable split and fold_in (jax_threefry_partitionable=True):
# split(key, shape)[i] = threefry(key, (hi(i), lo(i))) for the flat index i,
# fold_in(key, d) = threefry(key, (0, d)), key(seed) = (0, seed) for a
# 32-bit seed.
from threefry_ref import M, key, split, threefry

def fold_in(k, d):
    return threefry(k, [0, d & M])

def show(keys):
    print([w for kk in keys for w in kk])

k = key(0)
show(split(k, 4))
show(split(k, 6))
show([fold_in(k, 7)])
show([fold_in(key(42), 123456)])
show([fold_in(key(3), i) for i in range(5)])
show([s for kk in split(k, 2) for s in split(kk, 2)])
c, out = key(9), []
for _ in range(3):
    c, s = split(c, 2)
    out.append(s)
show(out)

# random_bits(key, (n,)) for 32 bits: bits1 ^ bits2 of threefry over the
# iota counters; uniform's floats from the top 23 bits
import numpy as np
def uniform(k, n, lo, hi):
    b = np.array([a ^ c for a, c in split(k, n)], dtype=np.uint32)
    f = ((b >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
    lo, hi = np.float32(lo), np.float32(hi)
    return np.maximum(lo, f * (hi - lo) + lo)
k5 = key(5)
fi = np.finfo(np.float32)
u = uniform(k5, 6, 0.0, 1.0)
e = -np.log1p(-u)
u = uniform(k5, 6, fi.tiny, 1.0)
lg = np.log(u) - np.log1p(-u)
u = uniform(k5, 6, -1.0 + fi.epsneg, 1.0)
la = np.sign(u) * np.log1p(-np.abs(u))
for x in (e, lg, la):
    print([f"{float(v):.5f}" for v in x])
    print([f"{float(v):.5f}" for v in x])
