# numpy's twin of tests/golden/mem17_inplace.jxr: prints the same lines (Debian's python3-numpy).
import numpy as np
x = np.arange(6.)
y = x * 2; z = y + 1
print('reused', [(z * y).tolist(), y.tolist()])
print('clamp', np.clip(x, 0, 2.).tolist(), np.clip(x, 1, 3.).tolist())
a = x + 1; b = a; c = a * 3; d = np.exp(a * 0) + b
print('aliased', a.tolist(), b.tolist(), c.tolist(), d.tolist())
print('jit arg kept', a.tolist(), (a + 10).tolist())
print('jit passthrough', a.tolist(), (a + 1).tolist(), ((a + 1) * 2).tolist(), a.tolist())
xs = np.arange(12.).reshape(4, 3)
def scan(body, c, xs, reverse=False):
  ys = [None] * len(xs)
  for i in (reversed(range(len(xs))) if reverse else range(len(xs))):
    c, ys[i] = body(c, xs[i])
  return c, ys
def stack(ys):
  if isinstance(ys[0], tuple): return [np.stack([y[k] for y in ys]).tolist() for k in range(len(ys[0]))]
  return [np.stack(ys).tolist()]
def show(r): return [r[0].tolist()] + stack(r[1])
body1 = lambda c, x: (c + x, c + x)
print('scan carry=y', show(scan(body1, np.ones(3), xs)))
print('scan y=old carry', show(scan(lambda c, x: (c * 2 + x, c), np.ones(3), xs)))
def body3(c, x):
  y = c + x
  return y * 2, (y, y, x, c)
print('scan twice', show(scan(body3, np.zeros(3), xs)))
print('scan reverse', show(scan(body1, np.ones(3), xs, reverse=True)))
print('scan keeps init', np.ones(3).tolist(), scan(body1, np.ones(3), xs)[0].tolist())
d = np.ones(3) * 2; e = d + 1
print('scan init moved', [scan(body1, d, xs)[0].tolist()] + stack(scan(body1, e, xs)[1]) + [(e * 3).tolist()], np.ones(3).tolist())
cf, ys = scan(body1, np.ones(3), xs)
cf2, ys2 = scan(body1, cf, xs)
print('scan again', cf.tolist(), cf2.tolist(), ys[3].tolist(), ys2[0].tolist())
def outer(c, x):
  c2, inner = scan(lambda cc, xx: (cc + xx, cc * xx), c, np.stack([x, x + 1]))
  return c2, np.stack(inner)
print('scan nested', show(scan(outer, np.zeros(3), xs)))
def body4(c, x):
  v = c + x
  y = v * 2 if x[0] > 4 else v - 1
  w = y + 3
  return w, (y, w)
r = scan(body4, np.zeros(3), xs)
print('scan cond while', [r[0].tolist()] + stack(r[1]))
v = x.copy()
for i in range(5): v = v * 2 + 1
print('fori', v.tolist(), x.tolist())
ws = np.arange(8.).reshape(2, 2, 2) / 8
h = np.ones((3, 2)); acts = [h]
for w in ws:
  h = np.tanh(h @ w); acts.append(h)
g = 2 * h; gws = np.zeros_like(ws)
for k in (1, 0):
  gz = g * (1 - acts[k + 1] ** 2); gws[k] = acts[k].T @ gz; g = gz @ ws[k].T
print('grad', np.round(gws, 4).tolist(), np.round(g, 4).tolist())
print('ws kept', ws.tolist())
