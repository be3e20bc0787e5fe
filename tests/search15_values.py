# search15_values.py: what search15_values.jxr prints, from numpy (jnp.searchsorted,
# jnp.digitize: np.searchsorted and np.digitize on the same data; numpy has no
# method=, every method must give its answer).

import numpy as np
jnp = None
a = [-5, -4, -3, -3, -2, -1, 1, 2, 2, 3, 5, 5]
v = [7, 3, -1, -2, 3, -1, -3, 7, -4]
af = [-0.54, 0.2, 0.21, 0.33, 0.53, 0.63, 0.73, 1.39, 1.66, 2.09]
vf = [-0.18, -1.52, -1.56, 0.2, 0.69, 1.44, -0.61, -0.54, 0.2, 0.21]
perm = [11, 4, 7, 0, 1, 10, 3, 2, 9, 6, 5, 8]
ua = [a[i] for i in perm]
for m in ['scan', 'scan_unrolled', 'sort', 'compare_all']:
    kw = {} if np is not jnp else {'method': m}
    for side in ['left', 'right']:
        print(m, side, np.searchsorted(np.array(a), np.array(v), side=side, **kw).tolist())
        print(m, side, np.searchsorted(np.array(af), np.array(vf), side=side, **kw).tolist())
        print(m, side, np.searchsorted(np.array(af), np.array(vf).reshape(2, 5), side=side, **kw).tolist())
        print(m, side, np.searchsorted(np.array(ua), np.array(v), side=side, sorter=np.argsort(np.array(ua)), **kw).tolist())
        print(m, side, int(np.searchsorted(np.array(a), 2, side=side, **kw)))
        print(m, side, np.searchsorted(np.array(a), np.array(vf), side=side, **kw).tolist())
        print(m, side, np.searchsorted(np.array(af, dtype=np.float32)[:0], np.array(vf[:3]), side=side, **kw).tolist())
for right in [False, True]:
    print(np.digitize(np.array(vf), np.array(af), right=right).tolist())
    print(np.digitize(np.array(vf), np.array(af[::-1]), right=right).tolist())
    print(np.digitize(np.array(v), np.array(a), right=right).tolist())
    print(np.digitize(np.array(v), np.array(a[::-1]), right=right).tolist())
# jax.random.choice with p= and replace=True: searchsorted(cumsum(p), r)
from threefry_ref import key, split

def uniform(k, shape):
    n = int(np.prod(shape, dtype=np.int64))
    b = np.array([a ^ c for a, c in split(k, n)], dtype=np.uint32).reshape(shape)
    f = ((b >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
    return np.maximum(np.float32(0), f)

def choice(k, a, shape, p):
    c = np.cumsum(np.array(p, np.float32))
    r = c[-1] * (np.float32(1) - uniform(k, shape))
    return np.array(a)[np.searchsorted(c, r)]

pp = [.1, .2, .3, .2, .2]
print(choice(key(0), np.arange(5), (12,), pp).tolist())
print(choice(key(3), np.arange(10., 15., dtype=np.float32), (2, 3), pp).tolist())
print(choice(key(1), np.arange(5), (6,), [0., .5, 0., .5, 0.]).tolist())
print([choice(kk, np.arange(5), (4,), pp).tolist() for kk in split(key(7), 2)])
# jnp.interp: left, right, 'extrapolate', period
def r4(x):
    return [round(float(t), 4) for t in np.ravel(x).tolist()]
ix = [0., 1., 1.5, 2.72, 3.14, 2., -1., 5.]
print(r4(np.interp(np.array(ix), np.array([1., 2., 3.]), np.array([3., 2., 0.]))))
print(r4(np.interp(np.array(ix), np.array([1., 2., 3.]), np.array([3., 2., 0.]), left=-1., right=9)))
print(r4(np.interp(np.array(ix), np.array(af), np.array(vf))))
print(r4(np.interp(np.array(ix).reshape(2, 4), np.array([1., 1., 3.]), np.array([3., 2., 0.]))))
print(r4(np.interp(np.array([-180, -170, -185, 185, -10, -5, 0, 365]), np.array([190, -190, 350, -350]), np.array([5, 10, 3, 4]), period=360)))
print(r4(np.interp(np.array(ix), np.array(a), np.array(a) * 2, period=7)))
# jnp.unique and its faces (the size= padding is JAX's own: checked in the golden)
ux = [3, 4, 1, 3, 1, 7, 4, 4, -2]
um = [[1, 2, 0], [1, 2, 0], [0, 5, 1], [1, 2, 0]]
uf = [0.5, float('nan'), -0.0, 0.0, 0.5, float('nan'), 2.0]
def tl(r):
    return [t.tolist() for t in r] if isinstance(r, tuple) else r.tolist()
_np_unique = np.unique
def _unique(a, return_index=False, return_inverse=False, return_counts=False, axis=None, **kw):
    # numpy 2's rule, which JAX follows: with axis=None the inverse has a's shape
    r = _np_unique(a, return_index, return_inverse, return_counts, axis, **kw)
    if return_inverse and axis is None:
        r = list(r)
        r[1 + return_index] = r[1 + return_index].reshape(a.shape)
        r = tuple(r)
    return r
np.unique = _unique
for ri in [False, True]:
    for rv in [False, True]:
        for rc in [False, True]:
            print(ri, rv, rc, tl(np.unique(np.array(ux), return_index=ri, return_inverse=rv, return_counts=rc)))
            print(tl(np.unique(np.array(um), return_index=ri, return_inverse=rv, return_counts=rc)))
            print(tl(np.unique(np.array(um), return_index=ri, return_inverse=rv, return_counts=rc, axis=0)))
            print(tl(np.unique(np.array(um), return_index=ri, return_inverse=rv, return_counts=rc, axis=1)))
print(tl(np.unique(np.array(uf), return_counts=True)))
print(tl(np.unique(np.array(uf), return_counts=True, equal_nan=False)))
print(tl(np.unique(np.array(ux)[:0], return_counts=True, return_index=True, return_inverse=True)))
print([t.tolist() for t in np.nonzero(np.array(um))], np.flatnonzero(np.array(um)).tolist())
print(np.lexsort([np.array(ux), np.array(ux) % 3]).tolist(), np.lexsort(np.array(um).T).tolist())
print(np.bincount(np.array([1, 1, 3, 0, 7])).tolist(), np.bincount(np.array([1, 1, 3]), minlength=6).tolist())
print(np.bincount(np.array([1, 1, 3]), weights=np.array([0.5, 1., 2.])).tolist())
# lax.cumlogsumexp against numpy's logaddexp.accumulate
def cumlogsumexp(x, ax, rev):
    x = np.flip(x, ax) if rev else x
    r = np.logaddexp.accumulate(x.astype(np.float32), axis=ax)
    return np.flip(r, ax) if rev else r
cx = [[0.5, -1., 2., 30., -40.], [1., 1., 0.25, -3., 7.]]
for ax in [0, 1]:
    for rev in [False, True]:
        print(r4(cumlogsumexp(np.array(cx), ax, rev)))
# mode='high': gumbel, bernoulli, categorical (two uniforms per draw)
def gumbel_high(k, shape):
    u = uniform(k, (2,) + shape)
    hi, lo = u[0], u[1]
    x = np.where(hi >= np.float32(0.5), hi, hi + np.float32(2.0 ** -23) * lo + np.float32(2.0 ** -47))
    return -np.log(-np.log1p(-x))
print([f"{float(v):.5f}" for v in np.ravel(gumbel_high(key(0), (2, 3)))])
u = uniform(key(2), (2, 8))
print([int(v) for v in (u[1] * np.float32(2.0 ** -23) < np.float32(0.3) - u[0])])
print([int(v) for v in np.argmax(gumbel_high(key(5), (6, 3)) + np.array([0., 1., 2.], np.float32), axis=-1)])
