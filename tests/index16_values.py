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
