# writes tests/golden/cond18_special_f32.jxr and cond18_special_x64.jxr
# (bessel_jn, hyp1f1, hyp2f1) with scipy.special / mpmath references:
#   /usr/bin/python3 tests/golden/cond18_gen.py tests/golden
import numpy as np, scipy.special as sc, mpmath, sys
mpmath.mp.dps = 40
DEBUG = len(sys.argv) > 2  # print each check's worst error instead of True/False
def fmt(a):
    return "[" + ", ".join(repr(float(v)) if np.isfinite(v) else ("float('nan')" if np.isnan(v) else ("float('inf')" if v > 0 else "-float('inf')")) for v in np.ravel(a)) + "]"
def bessel_jax(z, v, n_iter, dt):
    # JAX's _bessel_jn recurrence in numpy, in dtype dt (where it overflows)
    z = dt(z); f0 = dt(0); f1 = dt(1e-16); bs = dt(0); out = []
    with np.errstate(all='ignore'):
        for k in range(n_iter, -1, -1):
            k = dt(k)
            f = dt(2.0) * (k + dt(1.0)) * f1 / z - f0
            if k % 2 == 0: bs = bs + dt(2.0) * f
            f0, f1 = f1, f
            out.append(f)
        out = np.array(out[::-1], dt)
        return out[:v + 1] / (bs - out[0])
def mp(f, *a):
    return float(f(*[mpmath.mpf(float(x)) for x in a]))
def dmp(f, args, i):
    a = [mpmath.mpf(float(x)) for x in args]
    return float(mpmath.diff(lambda t: f(*(a[:i] + [t] + a[i + 1:])), a[i]))
def write(x64):
    q = (lambda a: np.asarray(a, np.float64)) if x64 else (lambda a: np.asarray(a, np.float32).astype(np.float64))
    dt = np.float64 if x64 else np.float32
    L = []
    tag = 'x64' if x64 else 'f32'
    L += [f"# cond18_special_{tag}: jax.scipy.special's bessel_jn, hyp1f1 and hyp2f1 (lib/jax/",
          "# scipy_special_series.c) in " + ("float64, with jax_enable_x64." if x64 else "float32."),
          "# How the expected values were checked: each reference list below was computed by",
          "# tests/golden/cond18_gen.py with scipy.special 1.10 (jv, hyp1f1, hyp2f1; mpmath at 40",
          "# digits where scipy's hyp1f1 / hyp2f1 is off or has no derivative), at the inputs",
          "# rounded to " + ("float64" if x64 else "float32") + "; the script prints True where every value is within the",
          "# check's rtol (and atol) of it.  The derivatives are jax.grad's against closed forms",
          "# (d J_n = (J_{n-1} - J_{n+1}) / 2, d/dx 1F1 = a/b 1F1(a+1; b+1; x), d/dx 2F1 =",
          "# ab/c 2F1(a+1, b+1; c+1; x)) and against mpmath.diff of mpmath's 1F1 / 2F1 in a, b, c.",
          "# Where JAX's algorithm gives what scipy does not, the expected value is JAX's: its",
          "# recurrence for bessel_jn overflows in float32 for small z at n_iter=50 (NaN, as",
          "# the recurrence run in numpy float32 gives), hyp1f1(0, 0, x) is 1, hyp2f1 at x > 1 is",
          "# inf.  In float32 bessel_jn's gradient at z = 0.1 is left out: its recurrence's",
          "# (bs - f)**2, which the derivative of the last division reads, overflows float32.",
          "# Printed values are rounded to 4 decimals."]
    L.append("import jax")
    if x64: L.append("jax.config.update('jax_enable_x64', True)")
    L += ["import jax.numpy as jnp", "import jax.scipy.special as sp",
          "dt = jnp.float64" if x64 else "dt = jnp.float32"]
    if DEBUG:
        L += ["def check(name, got, want, rtol, atol=0.0):",
              "    got = jnp.asarray(got); want = jnp.asarray(want, dtype=got.dtype).reshape(got.shape)",
              "    err = jnp.where((got == want) | (jnp.isnan(got) & jnp.isnan(want)), 0.0, jnp.abs(got - want) / (atol + rtol * jnp.abs(want)))",
              "    print(name, got.dtype, jnp.max(err), err)"]
    else:
        L += ["def check(name, got, want, rtol, atol=0.0):",
              "    got = jnp.asarray(got); want = jnp.asarray(want, dtype=got.dtype).reshape(got.shape)",
              "    same = (got == want) | (jnp.isnan(got) & jnp.isnan(want))",
              "    ok = same | (jnp.abs(got - want) <= atol + rtol * jnp.abs(want))",
              "    print(name, got.dtype, bool(jnp.all(ok)))"]
    def add(name, expr, ref, rtol, atol=None):
        L.append(f"check({name!r}, {expr}, {fmt(ref)}, {rtol}" + (f", {atol})" if atol else ")"))
    R = "1e-12" if x64 else "2e-5"
    # bessel_jn
    if x64:
        z = q([0.1, 0.5, 1.0, 2.5, 5.0, 7.3, 10.0, 15.0, -3.0])
        ni = 50
    else:
        z = q([0.1, 0.5, 1.0, 2.5, 5.0, 7.3, -3.0])
        ni = 16
    L.append(f"z = jnp.array({fmt(z)}, dtype=dt)")
    v = 4
    add("bessel_jn", f"sp.bessel_jn(z, v={v}" + ("" if x64 else f", n_iter={ni}") + ")", sc.jv(np.arange(v + 1)[:, None], z), "1e-12" if x64 else "1e-5", "1e-14" if x64 else "1e-6")
    # in float32 the gradient at z = 0.1 is left out: the recurrence's (bs - f)**2 overflows there
    gz = z if x64 else z[1:]
    dj = np.stack([-sc.jv(1, gz)] + [(sc.jv(n - 1, gz) - sc.jv(n + 1, gz)) / 2 for n in range(1, 3)])
    add("grad bessel_jn", f"jnp.stack([jax.vmap(jax.grad(lambda t: sp.bessel_jn(t, v=2" + ("" if x64 else f", n_iter={ni}") + ")[n]))(z" + ("" if x64 else "[1:]") + ") for n in range(3)])", dj, "1e-9" if x64 else "1e-4", "1e-13" if x64 else "1e-5")
    if not x64:
        L.append("# JAX's recurrence from n_iter=50 overflows float32 below z of about 4: NaN")
        add("bessel_jn n_iter=50", "sp.bessel_jn(jnp.array([0.5, 3.0, 10.0], dt), v=1)", np.stack([bessel_jax(t, 1, 50, np.float32) for t in [0.5, 3.0, 10.0]], 1), "1e-5", "1e-6")
    L.append("print(jnp.round(sp.bessel_jn(jnp.array([1.0, 2.0], dt), v=2" + ("" if x64 else ", n_iter=16") + "), 4), sp.bessel_jn(jnp.ones((2, 3), dt), v=3, n_iter=12).shape, sp.bessel_jn(2.0, v=0).shape)")
    L.append("print('jit bessel_jn', bool(jnp.all(jax.jit(lambda t: sp.bessel_jn(t, v=3, n_iter=16))(z) == sp.bessel_jn(z, v=3, n_iter=16))))")
    # hyp1f1
    ha = q([0.5, 1.0, 2.0, 1.5, 0.3, 3.0, 1.0, 2.5, -1.5, 0.7, 1.2])
    hb = q([1.5, 2.0, 1.0, 1.5, 2.7, 4.5, 3.0, 1.5, 2.0, 0.4, 2.2])
    hx = q([0.3, 2.0, -1.3, 0.7, 5.0, -4.0, 10.0, 0.0, 1.5, 3.0, 120.0])
    L.append(f"ha = jnp.array({fmt(ha)}, dtype=dt); hb = jnp.array({fmt(hb)}, dtype=dt); hx = jnp.array({fmt(hx)}, dtype=dt)")
    ref = [mp(mpmath.hyp1f1, a, b, x) for a, b, x in zip(ha, hb, hx)]
    if not x64: ref[-1] = np.inf  # 1F1(1.2; 2.2; 120) is 3.8e50: inf in float32
    add("hyp1f1", "sp.hyp1f1(ha, hb, hx)", ref, "1e-12" if x64 else "1e-4", "1e-13" if x64 else "1e-6")
    add("hyp1f1 scipy", "sp.hyp1f1(ha[:10], hb[:10], hx[:10])", sc.hyp1f1(ha[:10], hb[:10], hx[:10]), "1e-12" if x64 else "1e-4", "1e-13" if x64 else "1e-6")
    n = 9
    add("grad hyp1f1 x", f"jax.vmap(jax.grad(sp.hyp1f1, argnums=2))(ha[:{n}], hb[:{n}], hx[:{n}])", [a / b * mp(mpmath.hyp1f1, a + 1, b + 1, x) for a, b, x in zip(ha[:n], hb[:n], hx[:n])], "1e-10" if x64 else "1e-4", "1e-12" if x64 else "1e-5")
    add("grad hyp1f1 a", f"jax.vmap(jax.grad(sp.hyp1f1, argnums=0))(ha[:{n}], hb[:{n}], hx[:{n}])", [dmp(mpmath.hyp1f1, (a, b, x), 0) for a, b, x in zip(ha[:n], hb[:n], hx[:n])], "1e-10" if x64 else "1e-3", "1e-12" if x64 else "1e-4")
    add("grad hyp1f1 b", f"jax.vmap(jax.grad(sp.hyp1f1, argnums=1))(ha[:{n}], hb[:{n}], hx[:{n}])", [dmp(mpmath.hyp1f1, (a, b, x), 1) for a, b, x in zip(ha[:n], hb[:n], hx[:n])], "1e-10" if x64 else "1e-3", "1e-12" if x64 else "1e-4")
    add("grad grad hyp1f1 x", "jax.vmap(jax.grad(jax.grad(sp.hyp1f1, argnums=2), argnums=2))(ha[:4], hb[:4], hx[:4])", [a * (a + 1) / (b * (b + 1)) * mp(mpmath.hyp1f1, a + 2, b + 2, x) for a, b, x in zip(ha[:4], hb[:4], hx[:4])], "1e-10" if x64 else "1e-4", "1e-12" if x64 else "1e-5")
    L.append("# the special cases: a = 0 is 1, a = b is exp(x), b = 0 (a != 0) is inf, and a = b = 0 is 1")
    L.append("print(jnp.round(sp.hyp1f1(jnp.array([0.0, 2.0, 1.5, 0.0], dt), jnp.array([1.0, 2.0, 0.0, 0.0], dt), jnp.array([3.0, 1.0, 1.0, 2.0], dt)), 4))")
    L.append("print(jnp.round(sp.hyp1f1(1.0, 2.0, jnp.array([0.5, 1.0], dt)), 4), sp.hyp1f1(1, 2, 3).dtype, sp.hyp1f1(jnp.ones((2, 1), dt), 2.0, jnp.ones(3, dt)).shape)")
    # hyp2f1: every case of its index (x = 0 or a or b 0; c a non-positive integer, x > 1 or
    # x = 1 with c - a - b <= 0; c - a - b <= -1 (its transformation, here terminating);
    # b = c; a = c; x = 1 (Gauss's sum); and else the terminating series, the Taylor series or,
    # for x > 0.9 and an integer c - a - b (0, 1, 3), the digamma transformation)
    A = q([0.5, 1.0, -2.0, 1.5, 0.3, 2.0, 0.5, 1.0, 0.5, 1.0, 0.7, 1.5, 2.5, 1.0, 1.3, -3.0, 2.0, 1.0, 1.0, 1.0, 2.0])
    B = q([1.0, 2.0, 1.5, 0.5, 0.7, 1.5, 0.5, 2.0, 1.5, 3.0, 1.2, 2.0, 1.0, 0.0, 0.5, 2.0, 0.5, 1.0, 1.0, 1.5, 2.5])
    C = q([1.5, 3.0, 2.5, 3.0, 1.2, 4.5, 2.0, 3.0, 1.5, 1.0, 2.5, 4.0, 2.0, 2.0, -1.0, 1.5, 2.0, 2.0, 5.0, 2.0, 1.5])
    X = q([0.3, 0.5, 0.7, 0.95, -0.5, 0.97, 1.0, 0.0, 0.4, -0.6, 2.0, 0.92, 0.35, 0.5, 0.3, 0.8, 0.6, 0.95, 0.95, 1.0, 0.93])
    L.append(f"A = jnp.array({fmt(A)}, dtype=dt); B = jnp.array({fmt(B)}, dtype=dt)")
    L.append(f"C = jnp.array({fmt(C)}, dtype=dt); X = jnp.array({fmt(X)}, dtype=dt)")
    ref = []
    for a, b, c, x in zip(A, B, C, X):
        if x > 1 or (c <= 0 and c == round(c)) or (x == 1 and c - a - b <= 0): ref.append(np.inf)
        else: ref.append(mp(mpmath.hyp2f1, a, b, c, x))
    add("hyp2f1", "sp.hyp2f1(A, B, C, X)", ref, "1e-10" if x64 else "1e-4", "1e-13" if x64 else "1e-6")
    m = [i for i in range(len(A)) if np.isfinite(ref[i])]
    add("hyp2f1 scipy", f"sp.hyp2f1(A, B, C, X)[jnp.array({m})]", sc.hyp2f1(A[m], B[m], C[m], X[m]), "1e-10" if x64 else "1e-4", "1e-13" if x64 else "1e-6")
    g = [0, 1, 4, 8, 9, 12]
    GA, GB, GC, GX = A[g], B[g], C[g], X[g]
    L.append(f"g = jnp.array({g})")
    add("grad hyp2f1 x", "jax.vmap(jax.grad(sp.hyp2f1, argnums=3))(A[g], B[g], C[g], X[g])", [a * b / c * mp(mpmath.hyp2f1, a + 1, b + 1, c + 1, x) for a, b, c, x in zip(GA, GB, GC, GX)], "1e-10" if x64 else "1e-4", "1e-12" if x64 else "1e-5")
    for i, nm in enumerate("abc"):
        add(f"grad hyp2f1 {nm}", f"jax.vmap(jax.grad(sp.hyp2f1, argnums={i}))(A[g], B[g], C[g], X[g])", [dmp(mpmath.hyp2f1, (a, b, c, x), i) for a, b, c, x in zip(GA, GB, GC, GX)], "1e-10" if x64 else "1e-3", "1e-12" if x64 else "1e-4")
    L.append("print(jnp.round(sp.hyp2f1(A[:4], B[:4], C[:4], X[:4]), 4), jnp.round(sp.hyp2f1(1.0, 1.0, 2.0, 0.5), 4))")
    L.append("print('jit', bool(jnp.all(jax.jit(sp.hyp2f1)(A, B, C, X) == sp.hyp2f1(A, B, C, X))), bool(jnp.all(jax.jit(sp.hyp1f1)(ha, hb, hx) == sp.hyp1f1(ha, hb, hx))))")
    L.append("print('vmap', bool(jnp.all(jax.vmap(sp.hyp2f1)(A, B, C, X) == sp.hyp2f1(A, B, C, X))), bool(jnp.all(jax.vmap(sp.hyp1f1, (0, None, 0))(ha, 2.0, hx) == sp.hyp1f1(ha, 2.0, hx))), bool(jnp.all(jax.vmap(lambda t: sp.bessel_jn(t, v=2, n_iter=16))(z) == sp.bessel_jn(z, v=2, n_iter=16).T)))")
    L.append("print('shapes', sp.hyp2f1(1.0, 2.0, 3.0, jnp.ones((2, 3), dt) / 2).shape, sp.hyp2f1(1, 2, 3, 0.5).dtype)")
    if not x64:
        L.append("for f in [lambda: sp.bessel_jn(1.0, v=1.5), lambda: sp.bessel_jn(1.0, 2), lambda: sp.bessel_jn(1.0)]:")
        L.append("    try:")
        L.append("        f()")
        L.append("    except Exception as e:")
        L.append("        print(type(e).__name__ + ':', e)")
    return "\n".join(L) + "\n"
d = sys.argv[1]
open(d + "/cond18_special_f32.jxr", "w").write(write(False))
open(d + "/cond18_special_x64.jxr", "w").write(write(True))
