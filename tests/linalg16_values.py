# linalg16_values.py: what linalg16_values.jxr prints, from numpy's and
# scipy's linalg (computed in float64 from float32 inputs, printed as
# float32).
import numpy as np
import scipy.linalg as sl
f = np.float32
S = np.array([[4., 2., 0.6], [2., 5., 1.], [0.6, 1., 3.]], dtype=f).astype(np.float64)
A = np.array([[1., 2., 3., 4.], [0.5, 1.3, 5., 2.], [2., 2.7, 1., 0.1], [1.1, 0.2, 0.4, 3.]], dtype=f).astype(np.float64)
B = np.stack([A, A.T + 1.])
b = np.array([1., -2., 0.5, 3.])
M = np.array([[1., 0.], [2., 1.], [0., 3.], [1., 1.]])
def fix(v):
  i = np.argmax(np.abs(v), axis=-2)
  s = np.sign(np.take_along_axis(v, i[..., None, :], axis=-2))
  return v * s
out = lambda x: np.asarray(x).astype(f)
print(out(np.linalg.cholesky(S)))
print(out(np.swapaxes(np.linalg.cholesky(np.stack([S, 2 * S])), -1, -2)))
w, v = np.linalg.eigh(S)
print(out(w))
print(out(fix(v)))
print(out(np.linalg.eigvalsh(np.stack([S, S + 1.]))))
print(out(np.linalg.eigh(S, UPLO='U')[0]))
for a in (S[:2, :2], S, A, B, np.eye(5) * 2. + 0.1):
  print(out(np.linalg.det(a)))
  sg, ld = np.linalg.slogdet(a)
  print(out(sg), out(ld))
print(out(np.linalg.det(np.zeros((4, 4)))), out(np.linalg.slogdet(np.zeros((4, 4)))[1]))
print(out(np.linalg.solve(A, b)))
print(out(np.linalg.solve(A, M)))
print(out(np.linalg.solve(B, np.broadcast_to(M, (2, 4, 2)))))
print(out(np.linalg.inv(A)))
print(out(np.linalg.inv(B)))
print(out(sl.cholesky(S)))
print(out(sl.cholesky(S, lower=True)))
print(out(sl.cho_solve(sl.cho_factor(S), b[:3])))
print(out(sl.cho_solve(sl.cho_factor(S, lower=True), M[:3])))
print(out(sl.solve(S, b[:3], assume_a='pos')))
print(out(sl.solve(A, M)))
print(out(sl.solve_triangular(np.triu(A), b)))
print(out(sl.solve_triangular(np.tril(A), M, lower=True, trans='T')))
print(out(sl.solve_triangular(np.tril(A), b, lower=True, unit_diagonal=True)))
for a in (A, A[:3], A[:, :3]):
  p, l, u = sl.lu(a)
  print(out(p))
  print(out(l))
  print(out(u))
lu, piv = sl.lu_factor(A)
print(out(lu))
print(np.asarray(piv).astype(np.int32))
print(out(sl.lu_solve((lu, piv), b)))
print(out(sl.lu_solve((lu, piv), M, trans=1)))
def perm(p, n):
  q = np.arange(n, dtype=np.int32)
  for i, j in enumerate(p):
    q[i], q[j] = q[j], q[i]
  return q
print(perm(piv, 4))
print(np.array([perm([2, 2], 5), perm([1, 3], 5)]))
w, v = sl.eigh(S)
print(out(w))
print(out(fix(v)))
print(out(sl.eigh(S, eigvals_only=True)))
print(out(sl.det(A)), out(sl.inv(S)))
