# numpy's twins of tests/index16_values.jxr (tests/index16_numpy.sh)
import numpy as np
def show(v):
  print(np.asarray(v).tolist())
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
