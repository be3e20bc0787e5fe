# numpy's twins of tests/index16_values.jxr (tests/index16_numpy.sh)
import numpy as np
def show(v):
  print(np.asarray(v).tolist())
def rounded(l):
  return [rounded(t) for t in l] if isinstance(l, list) else round(l, 4) if isinstance(l, float) else l
def showr(v):
  print(rounded(np.asarray(v).tolist()))
x = np.arange(6.0, dtype=np.float32)
y = x.copy(); np.sin.at(y, [0, 2, 2, 5]); show(y)
y = x.copy()
for i in [1, 1, 3]: y[i] = y[i] * 2 + 1
show(y)
m = np.arange(12).reshape(3, 4)
y = m.copy(); np.multiply.at(y, ([0, 2, 0], 1), 3); show(y)
y = m.copy(); np.negative.at(y, (slice(1, None), slice(None, None, 2))); show(y)
a = np.arange(24.0, dtype=np.float32).reshape(4, 6)
show(np.stack([a[:, 5], a[:, 0], a[:, 2]], axis=1))
show(np.stack([a[1:3, 2:4], a[2:4, 4:6]]))
ix = [1, 3, 1]
u = np.array([5.0, -2.0, 7.0], dtype=np.float32)
y = np.ones(5, np.float32); np.add.at(y, ix, u); show(y)
y = np.full(5, 2.0, np.float32); np.multiply.at(y, ix, u); show(y)
y = np.zeros(5, np.float32); np.minimum.at(y, ix, u); show(y)
y = np.zeros(5, np.float32); np.maximum.at(y, ix, u); show(y)
y = np.zeros(5, np.float32); np.subtract.at(y, ix, u); show(y)
y = np.arange(5.0, dtype=np.float32)
for i in ix: y[i] = y[i] * y[i] + 1
show(y)
import warnings
warnings.simplefilter('ignore')
r = np.array([[1.5, -2.0, 3.0, 0.5], [4.0, 5.0, -6.0, 2.5], [7.0, 0.0, 9.0, -1.0]], np.float32)
rw = r > 0
show(np.sum(r, where=rw)); show(np.sum(r, axis=0, where=rw, initial=-1.0)); show(np.prod(r, axis=1, where=rw))
show(np.max(r, axis=1, where=~rw, initial=-100.0)); show(np.min(r, axis=0, where=rw, initial=50, keepdims=True))
show(np.max(np.arange(6), initial=9)); show(np.min(np.arange(6).reshape(2, 3), axis=1, initial=1))
show(np.all(r > -3, axis=1, where=rw)); show(np.any(r > 4, axis=0, where=rw))
show(np.mean(r, where=rw)); show(np.mean(r, axis=1, where=rw, keepdims=True))
nan = np.nan
z = np.array([[1.0, nan, 3.0, 7.0, 2.0], [nan, 5.0, nan, 4.0, 4.5], [nan, nan, nan, nan, nan], [0.5, 8.0, 1.0, 2.0, 6.0]], np.float32)
showr(np.nanmedian(z)); showr(np.nanmedian(z, axis=1)); showr(np.nanmedian(z, axis=0, keepdims=True))
for m in ('linear', 'lower', 'higher', 'midpoint', 'nearest'):
  showr(np.nanquantile(z, np.array([0.1, 0.35, 0.55, 0.9], np.float32), axis=1, method=m))
showr(np.nanquantile(z, np.float32(0.3))); showr(np.nanpercentile(z, np.float32(70), axis=0)); showr(np.nanpercentile(z, np.array([5, 95], np.float32), axis=1, keepdims=True))
e1 = np.arange(6.0, dtype=np.float32).reshape(2, 3)
e2 = np.arange(12.0, dtype=np.float32).reshape(3, 4)
show(np.einsum(e1, [0, 1], e2, [1, 2], [0, 2])); show(np.einsum(e1, [0, 1], e2, [1, 2]))
show(np.einsum(e1, [5, 9], [9])); show(np.einsum(e2, [3, 1], e2, [3, 7], [7, 1]))
show(np.einsum(np.ones((2, 2, 3), np.float32), [..., 0], np.arange(3.0, dtype=np.float32), [0], [...]))
pa = np.array([[6, 8, 4, 3, 1, 9], [7, 5, 2, 3, 3, 0], [1, 1, 1, 2, 0, 5]])
for k in (0, 2, 5, -2):
  pp = np.partition(pa, k, axis=1)
  kk = k % 6
  show(pp[:, kk]); show(np.sort(pp[:, :kk], axis=1)); show(np.sort(pp[:, kk + 1:], axis=1))
  show(np.tile(np.arange(6), (3, 1))); show(pp[:, kk])
show(np.partition(pa, 1, axis=0)[1])
mi = (np.array([0, 2, 1, 2]), np.array([3, 0, 4, 4]), np.array([1, 1, 0, 1]))
show(np.ravel_multi_index(mi, (3, 5, 2))); show(np.ravel_multi_index(mi, (3, 5, 2), order='F'))
show(np.ravel_multi_index((np.array([-1, 3, 7]), np.array([5, -6, 1])), (3, 4), mode='clip'))
show(np.ravel_multi_index((np.array([-1, 3, 7]), np.array([5, -6, 1])), (3, 4), mode='wrap'))
