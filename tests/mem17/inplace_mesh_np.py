# numpy's twin of tests/golden/mem17_inplace_mesh.jxr: prints the same lines (Debian's python3-numpy).
import numpy as np
def scan(body, c, xs):
  ys = []
  for x in xs:
    c, y = body(c, x); ys.append(y)
  return c, tuple(np.stack([y[k] for y in ys]) for k in range(len(ys[0])))
xs = np.arange(32.).reshape(4, 8)
body = lambda c, x: (c + x, (c * x, c))
cf, (ys, cs) = scan(body, np.ones(8), xs)
print('sharded', cf.tolist(), ys.tolist(), cs.tolist(), 'float32[4,8@X]')
print('replicated', cf.tolist(), ys.tolist(), cs.tolist(), 'float32[4,8]')
cf, (ys, cs) = scan(lambda c, x: (c * 2., (x * c, c)), np.ones(8), xs)
print('mixed', cf.tolist(), ys.tolist(), cs.tolist(), 'float32[4,8@X]', 'float32[4,8]')
print('kept', np.ones(8).tolist(), np.ones(8).tolist(), xs[1].tolist())
ws = np.arange(32.).reshape(2, 4, 4) / 32.
bt = np.arange(32.).reshape(2, 4, 4) / 64.
acc = np.zeros_like(ws)
for b in bt:
  h = b; acts = [h]
  for w in ws:
    h = np.tanh(h @ w); acts.append(h)
  g = 2 * h
  for k in (1, 0):
    gz = g * (1 - acts[k + 1] ** 2); acc[k] += acts[k].T @ gz; g = gz @ ws[k].T
print('grads', 'float32[2,4,4]', np.round(acc, 4).tolist())
print('ws kept', ws[1][3].tolist())
