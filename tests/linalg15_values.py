# linalg15_values.py: what linalg15_values.jxr prints, from numpy's
# linalg (computed in float64 from float32 inputs, printed as float32).

import numpy as np
x = np.array([[6., 1., 0.], [2., 3., 1.], [0., 1., 1.], [1., 0., 2.]], dtype=np.float32)
b = np.array([[[2., -1.], [0.5, 3.]], [[1., 1.], [-2., 4.]], [[0., 1.], [1., 0.]]], dtype=np.float32)
for a in (x, x.T, b):
  q, r = np.linalg.qr(a)
  print(np.asarray(q).astype(np.float32))
  print(np.asarray(r).astype(np.float32))
  qc, rc = np.linalg.qr(a, mode='complete')
  print(np.asarray(qc).astype(np.float32))
  print(np.asarray(rc).astype(np.float32))
  print(np.asarray(np.linalg.qr(a, mode='r')).astype(np.float32))
  u, s, vh = np.linalg.svd(a)
  print(np.asarray(u).astype(np.float32))
  print(np.asarray(s).astype(np.float32))
  print(np.asarray(vh).astype(np.float32))
  u, s, vh = np.linalg.svd(a, full_matrices=False)
  print(np.asarray(u).astype(np.float32))
  print(np.asarray(vh).astype(np.float32))
  print(np.asarray(np.linalg.svd(a, compute_uv=False)).astype(np.float32))
  for o in (2, -2, 'nuc'):
    print(np.asarray(np.linalg.norm(a, o, axis=(-2, -1))).astype(np.float32))
