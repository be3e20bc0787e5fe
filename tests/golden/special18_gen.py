# writes tests/golden/special18_f32.jxr and special18_x64.jxr with scipy / mpmath references
import numpy as np, scipy.special as sc, mpmath, sys
mpmath.mp.dps = 40
def fmt(a):
    return "[" + ", ".join(repr(float(v)) if np.isfinite(v) else ("float('nan')" if np.isnan(v) else ("float('inf')" if v > 0 else "-float('inf')")) for v in np.ravel(a)) + "]"
def bern_jax(n):
    b = np.zeros(n + 1); b[:3] = [1, -0.5, 1/6]
    m = np.arange(4, n + 1, 2.0)
    q1 = (1 / np.pi**2) * np.cumprod(-(m - 1) * m / 4 / np.pi**2)
    k = np.arange(2, 50.0)
    b[4::2] = q1 * (1 + np.sum(k[:, None] ** -m[None, :], axis=0))
    return b
def write(x64):
    q = (lambda a: np.asarray(a, np.float64)) if x64 else (lambda a: np.asarray(a, np.float32).astype(np.float64))
    rt, at = ("1e-12", "1e-13") if x64 else ("2e-6", "2e-6")
    L = []
    L.append(f"# special18_{'x64' if x64 else 'f32'}: the jax.scipy.special functions of lib/jax/scipy_special_series.c")
    L.append("# (bernoulli, dawsn, spence, zeta, sici, fresnel, owens_t, expn, exp1, expi) in " + ("float64, with jax_enable_x64." if x64 else "float32."))
    L.append("# How the expected values were checked: each reference list below was computed by")
    L.append("# tests/golden/special18_gen.py with scipy.special 1.10 (mpmath for expn and for")
    L.append("# zeta's derivative in x, by mpmath.diff), at the inputs rounded to " + ("float64" if x64 else "float32") + "; the script prints")
    L.append(f"# True where every value is within rtol {rt} (atol {at} for the derivatives) of it.")
    L.append("# The derivatives are jax.grad's (jax.jvp's for spence, whose grad is NaN above 1 as")
    L.append("# JAX's is: its unselected branch's log(1 - x) is NaN) against the closed forms")
    L.append("# (d dawsn = 1 - 2 x dawsn, d Si = sin x / x, d E_n = -E_{n-1}, ...).  Where JAX's")
    L.append("# algorithm is not scipy's the expected value is JAX's: bernoulli is checked against")
    L.append("# JAX's own formula in numpy (its tail sum stops at k = 49, 2.5e-6 off B_4) and against")
    L.append("# scipy to 3e-6; expn(n >= 2, 0) is JAX's 1 / n (scipy: 1 / (n - 1)).  Printed values")
    L.append("# are rounded to 4 decimals.")
    L.append("import jax")
    if x64: L.append("jax.config.update('jax_enable_x64', True)")
    L.append("import jax.numpy as jnp")
    L.append("import jax.scipy.special as sp")
    L.append("dt = jnp.float64" if x64 else "dt = jnp.float32")
    L.append("def check(name, got, want, rtol, atol=0.0):")
    L.append("    got = jnp.asarray(got); want = jnp.asarray(want, dtype=got.dtype)")
    L.append("    same = (got == want) | (jnp.isnan(got) & jnp.isnan(want))")
    L.append("    ok = same | (jnp.abs(got - want) <= atol + rtol * jnp.abs(want))")
    L.append("    print(name, got.dtype, bool(jnp.all(ok)))")
    R = f"{rt}"; A = f"{at}"
    def add(name, expr, ref, atol=None, rtol=None):
        L.append(f"check({name!r}, {expr}, {fmt(ref)}, {rtol or R}" + (f", {atol})" if atol else ")"))
    # dawsn
    xs = q([-8.0, -3.5, -1.0, -0.1, 0.0, 0.3, 1.0, 2.5, 3.3, 5.0, 6.3, 10.0, 50.0])
    L.append(f"x = jnp.array({fmt(xs)}, dtype=dt)")
    add("dawsn", "sp.dawsn(x)", sc.dawsn(xs))
    add("grad dawsn", "jax.vmap(jax.grad(sp.dawsn))(x)", 1 - 2 * xs * sc.dawsn(xs), atol=A)
    L.append("print(jnp.round(sp.dawsn(x[4:8]), 4))")
    # spence
    ps = q([0.0, 0.2, 0.5, 0.9, 1.0, 1.3, 1.7, 2.0, 2.5, 4.0, 10.0, 100.0, -1.0])
    L.append(f"p = jnp.array({fmt(ps)}, dtype=dt)")
    ref = sc.spence(ps); ref[-1] = np.nan
    add("spence", "sp.spence(p)", ref)
    d = np.log(ps[1:12]) / (1 - ps[1:12]); d[3] = 0.0
    add("jvp spence", "jax.jvp(sp.spence, (p[1:12],), (jnp.ones_like(p[1:12]),))[1]", d, atol=A)
    L.append("print(jnp.round(sp.spence(p[:5]), 4))")
    # bernoulli
    add("bernoulli", "sp.bernoulli(20)", bern_jax(20), rtol="1e-12" if x64 else "1e-6")
    add("bernoulli scipy", "sp.bernoulli(20)", sc.bernoulli(20), rtol="3e-6")
    L.append("print(sp.bernoulli(2), sp.bernoulli(0).shape, sp.bernoulli(7).shape)")
    # zeta
    zx = q([1.5, 2.0, 3.0, 4.5, 10.0, 2.0]); zq = q([1.0, 0.5, 2.0, 3.0, 1.0, 10.0])
    L.append(f"zx = jnp.array({fmt(zx)}, dtype=dt); zq = jnp.array({fmt(zq)}, dtype=dt)")
    add("zeta", "sp.zeta(zx, zq)", sc.zeta(zx, zq))
    add("grad zeta x", "jax.vmap(jax.grad(sp.zeta))(zx, zq)", [float(mpmath.diff(lambda t: mpmath.zeta(t, b), a)) for a, b in zip(zx, zq)], atol=A, rtol="1e-11" if x64 else None)
    add("grad zeta q", "jax.vmap(jax.grad(sp.zeta, argnums=1))(zx, zq)", -zx * sc.zeta(zx + 1, zq), atol=A)
    L.append("print(jnp.round(sp.zeta(2.0, 1.0), 4), jnp.round(jax.grad(sp.zeta)(2.0, 1.0), 4))")
    # sici
    sx = q([-20.0, -5.5, -1.0, -0.1, 0.0, 0.3, 1.0, 2.5, 3.9, 4.1, 5.0, 7.9, 8.1, 12.0, 100.0, 3e9])
    L.append(f"sx = jnp.array({fmt(sx)}, dtype=dt)")
    si, ci = sc.sici(sx)
    add("sici si", "sp.sici(sx)[0]", si, atol=A)
    add("sici ci", "sp.sici(sx)[1][5:]", ci[5:], atol=A)
    add("grad si", "jax.vmap(jax.grad(lambda x: sp.sici(x)[0]))(sx[5:15])", np.sinc(sx[5:15] / np.pi), atol=A)
    add("grad ci", "jax.vmap(jax.grad(lambda x: sp.sici(x)[1]))(sx[5:15])", np.cos(sx[5:15]) / sx[5:15], atol=A)
    L.append("print(jnp.round(jnp.stack(sp.sici(sx[4:7])), 4))")
    # fresnel
    fx = q([-3.0, -0.7, 0.0, 0.4, 1.0, 1.5, 1.7, 2.2, 5.0, 9.5, 40.0])
    L.append(f"fx = jnp.array({fmt(fx)}, dtype=dt)")
    fs, fc = sc.fresnel(fx)
    add("fresnel S", "sp.fresnel(fx)[0]", fs, atol=A)
    add("fresnel C", "sp.fresnel(fx)[1]", fc, atol=A)
    add("grad fresnel S", "jax.vmap(jax.grad(lambda x: sp.fresnel(x)[0]))(fx)", np.sin(np.pi * fx**2 / 2), atol="1e-10" if x64 else "1e-5")
    add("grad fresnel C", "jax.vmap(jax.grad(lambda x: sp.fresnel(x)[1]))(fx)", np.cos(np.pi * fx**2 / 2), atol="1e-10" if x64 else "1e-5")
    L.append("print(jnp.round(jnp.stack(sp.fresnel(fx[2:5])), 4))")
    # owens_t
    oh = q([0.0, 0.5, 1.0, 2.0, -1.5, 0.3, 3.0, 0.1, 5.0]); oa = q([0.5, 1.0, 0.3, 2.5, 0.7, -4.0, 0.9, 10.0, 1.5])
    L.append(f"oh = jnp.array({fmt(oh)}, dtype=dt); oa = jnp.array({fmt(oa)}, dtype=dt)")
    add("owens_t", "sp.owens_t(oh, oa)", sc.owens_t(oh, oa), atol=A)
    add("grad owens_t h", "jax.vmap(jax.grad(sp.owens_t))(oh, oa)", -np.exp(-0.5 * oh**2) * sc.erf(oa * oh / np.sqrt(2)) / (2 * np.sqrt(2 * np.pi)), atol=A)
    add("grad owens_t a", "jax.vmap(jax.grad(sp.owens_t, argnums=1))(oh, oa)", np.exp(-0.5 * (oa**2 + 1) * oh**2) / (2 * np.pi * (oa**2 + 1)), atol=A)
    L.append("print(jnp.round(sp.owens_t(oh[:3], oa[:3]), 4))")
    # expi, exp1, expn
    ex = q([-30.0, -5.0, -1.0, -0.2, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 40.0, 70.0])
    L.append(f"ex = jnp.array({fmt(ex)}, dtype=dt)")
    add("expi", "sp.expi(ex)", sc.expi(ex))
    add("grad expi", "jax.vmap(jax.grad(sp.expi))(ex)", np.exp(ex) / ex)
    e1 = q([0.0, 0.05, 0.5, 1.0, 1.5, 3.0, 10.0, 30.0])
    L.append(f"e1 = jnp.array({fmt(e1)}, dtype=dt)")
    add("exp1", "sp.exp1(e1)", sc.exp1(e1))
    add("grad exp1", "jax.vmap(jax.grad(sp.exp1))(e1[1:])", -np.exp(-e1[1:]) / e1[1:])
    nn = q([0, 1, 2, 3, 5, 10, 2, 7, 6000, 3, -1]); nx = q([0.7, 0.3, 0.0, 0.5, 2.0, 1.5, 8.0, 0.9, 3.0, 50.0, 1.0])
    L.append(f"nn = jnp.array({fmt(nn)}, dtype=dt); nx = jnp.array({fmt(nx)}, dtype=dt)")
    ref = [float(mpmath.expint(int(n), x)) if x > 0 and n >= 0 else (1.0 / n if x == 0 and n >= 2 else np.nan) for n, x in zip(nn, nx)]
    add("expn", "sp.expn(nn, nx)", ref, rtol="1e-12" if x64 else "5e-6")
    add("grad expn", "jax.vmap(jax.grad(sp.expn, argnums=1))(nn[3:10], nx[3:10])", [-float(mpmath.expint(int(n) - 1, x)) for n, x in zip(nn[3:10], nx[3:10])], rtol="1e-12" if x64 else "5e-6")
    L.append("print(jnp.round(sp.expn(nn[:4], nx[:4]), 4), jnp.round(sp.exp1(1.0), 4), jnp.round(sp.expi(1.0), 4))")
    # transforms
    L.append("print('jit', bool(jnp.all(jax.jit(sp.expi)(ex) == sp.expi(ex))), bool(jnp.all(jax.jit(sp.dawsn)(x) == sp.dawsn(x))))")
    L.append("print('shapes', sp.expn(2, jnp.ones((2, 3), dt)).shape, sp.sici(jnp.ones((4, 1), dt))[1].shape, sp.owens_t(jnp.ones(3, dt), 0.5).shape)")
    if x64:
        L.append("# owens_t's quadrature points are a numpy float64 array, so float32 inputs give float64 under x64 (as in JAX)")
        L.append("print(sp.owens_t(jnp.float32(1.0), jnp.float32(0.5)).dtype, sp.expi(jnp.float32(1.0)).dtype)")
    else:
        L.append("print(sp.zeta(2, 1).dtype, sp.expn(2, 1).dtype, sp.dawsn(jnp.float16(1.0)).dtype, sp.fresnel(jnp.bfloat16(1.0))[0].dtype)")
        L.append("for f in [lambda: sp.zeta(2.0), lambda: sp.bernoulli(-1), lambda: sp.bernoulli(2.5), lambda: sp.spence(jnp.int32(2)),")
        L.append("          lambda: sp.sph_harm_y(1, 0, 0.5, 0.5), lambda: sp.wofz(1.0)]:")
        L.append("    try:")
        L.append("        f()")
        L.append("    except Exception as e:")
        L.append("        print(type(e).__name__ + ':', e)")
    return "\n".join(L) + "\n"
d = sys.argv[1]
open(d + "/special18_f32.jxr", "w").write(write(False))
open(d + "/special18_x64.jxr", "w").write(write(True))
