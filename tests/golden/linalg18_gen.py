# linalg18_gen.py: the reference values of linalg18_values.jxr, computed with
# scipy.linalg 1.10 (and scipy.linalg.lapack for the raw LAPACK results the
# lax.linalg primitives return) in float64; run with /usr/bin/python3 and
# paste its output into the script.  Not a test itself.
import numpy as np
import scipy.linalg as sl
from scipy.linalg import lapack

np.set_printoptions(precision=10, floatmode='maxprec', linewidth=2000)

def lit(x):
    return repr(np.asarray(x, dtype=np.float64).round(10).tolist())

A4 = np.array([[1., 2., 3., 4.], [1., 4., 2., 3.], [3., 2., 1., 4.], [2., 3., 2., 2.]])
A5 = np.round(np.random.RandomState(0).randn(5, 5), 2)
A3c = np.array([[0., 3., 3.], [0., 1., 2.], [2., 0., 1.]])       # a complex pair
S4 = A4 @ A4.T + 4 * np.eye(4)                                    # symmetric positive definite
N3 = np.array([[4., 1., 2.], [0.5, 3., 1.], [0.2, 0.1, 2.]])      # nonsymmetric, real positive eigenvalues
W = np.array([[1., 2., 0.5], [3., -1., 2.], [0., 1., 1.], [2., 2., 2.]])   # 4 x 3
out = {}
for name, a in (("A4", A4), ("A5", A5), ("A3c", A3c)):
    h, q = sl.hessenberg(a, calc_q=True)
    out["hess_H_" + name], out["hess_Q_" + name] = h, q
    t, z = sl.schur(a)
    out["schur_T_" + name], out["schur_Z_" + name] = t, z
hh, taus, info = lapack.dgehrd(A5)
out["gehrd_a"], out["gehrd_tau"] = hh, taus
qr_a, tau, _, _ = lapack.dgeqrf(W)
out["geqrf_a"], out["geqrf_tau"] = qr_a, tau
q, _, _ = lapack.dorgqr(qr_a, tau)
out["orgqr"] = q
C43 = np.arange(12.).reshape(4, 3) / 7 - 0.5
for left in (0, 1):
    for tr in (0, 1):
        c = C43 if left else C43.T
        r, _, _ = lapack.dormqr("L" if left else "R", "T" if tr else "N", qr_a, tau, c, max(1, c.shape[1] * 64))
        out["ormqr_%d%d" % (left, tr)] = r
Ssym = S4.copy()
for lower in (1, 0):
    c, d, e, tau, info = lapack.dsytrd(Ssym, lower=lower)
    out["sytrd_%d_a" % lower], out["sytrd_%d_d" % lower], out["sytrd_%d_e" % lower] = c, d, e
    out["sytrd_%d_tau" % lower] = tau
b = np.array([2., 4., 5., 4.])
cq, r = sl.qr_multiply(W, b, mode="right")
out["qrm_right_1d"], out["qrm_R"] = cq, r
C2 = np.array([[1., 0., 2., -1.], [0.5, 1., 1., 3.]])
out["qrm_right_2d"] = sl.qr_multiply(W, C2, mode="right")[0]
C3 = np.array([[1., 2.], [0., 1.], [3., -1.]])
out["qrm_left_2d"] = sl.qr_multiply(W, C3, mode="left")[0]
out["qrm_left_1d"] = sl.qr_multiply(W, np.array([1., -2., 0.5]), mode="left")[0]
out["qrm_right_conj"] = sl.qr_multiply(W, C2, mode="right", conjugate=True)[0]
for side in ("right", "left"):
    for name, a in (("A4", A4), ("W", W), ("Wt", W.T)):
        u, p = sl.polar(a, side=side)
        out["polar_%s_%s_u" % (side, name)], out["polar_%s_%s_p" % (side, name)] = u, p
out["sqrtm_S4"] = sl.sqrtm(S4)
out["sqrtm_N3"] = sl.sqrtm(N3)
E4 = np.array([[0., 1., 0., 2.], [1., 0., -1., 0.], [0.5, 0., 0., 1.], [0., 0., 1., 0.]])
ea, ef = sl.expm_frechet(A4 / 4, E4)
out["expm_A"], out["expm_frechet"] = ea, ef
SA = np.array([[1., 2.], [3., 4.]]); SB = np.array([[5., 6.], [7., 8.]]); SC = np.array([[6., 8.], [10., 12.]])
out["sylv_doc"] = sl.solve_sylvester(SA, SB, SC)
out["sylv_N3_S4"] = sl.solve_sylvester(N3, S4, np.arange(12.).reshape(3, 4) - 5)
d = np.array([1., 2., 3., 4., -1., 0.5]); e = np.array([1., 0.5, -2., 1., 0.25])
out["tri_all"] = sl.eigh_tridiagonal(d, e, eigvals_only=True)
out["tri_i"] = sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3))
for k, v in out.items():
    print("%s = %s" % (k, lit(v)))
