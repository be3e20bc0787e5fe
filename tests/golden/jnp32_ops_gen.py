# jnp32_ops_gen.py: writes jnp32_ops.jxr (JAX's
# tests/lax_numpy_operators_test.py, the value cases) and prints what it
# must print, computed with numpy (1.24), cast to the 32-bit dtypes JAX
# gives without x64 (the promotions of small ints spelled out per case):
#   /usr/bin/python3 jnp32_ops_gen.py > want && shardrepl jnp32_ops.jxr > got
#   && golden_cmp want got
import numpy as np

import jnp32_gen

INPUTS = """\
a = jnp.array([[-1.5, 0.25, 2.], [3., -0.5, 1.]])
b = jnp.array([0.5, -2., 1.5])
p = jnp.array([[0.5, 1., 2.], [3., 0.25, 4.]])
q = jnp.array([1.5, 0.75, 2.])
s = jnp.array([-0.5, 0.25, 0.75])
i = jnp.array([[-3, 0, 2], [5, -1, 4]])
j = jnp.array([2, -3, 1])
k = jnp.array([[1, 2, 3], [4, 5, 6]], dtype=jnp.int8)
u = jnp.array([1, 2, 250], dtype=jnp.uint8)
c = jnp.array([1+2j, -0.5j, 3-1j], dtype=jnp.complex64)
t = jnp.array([[True, False, True], [False, False, True]])
f = jnp.array([True, True, False])
n = jnp.array([jnp.nan, jnp.inf, -jnp.inf, 0., -0., 1.5])
h = b.astype(jnp.float16)
"""
np_env = {}
exec(INPUTS.replace("jnp.nan", "np.nan").replace("jnp.inf", "np.inf").replace("jnp.", "np."), {"np": np}, np_env)
for key in ("a", "b", "p", "q", "s", "n"):
  np_env[key] = np_env[key].astype(np.float32)
for key in ("i", "j"):
  np_env[key] = np_env[key].astype(np.int32)
np_env["h"] = np_env["b"].astype(np.float16)

CASES = []
def C(jx, nx=None, note=None):
  CASES.append((note, jx, nx if nx is not None else jx.replace("jnp.", "np.")))
def N(note):
  CASES.append((note, None, None))

N("JaxNumpyOperatorTests.testOp: each one-to-one and compound op of the records against numpy, over float, int, unsigned, complex and bool inputs, broadcast and mixed (an int with a float is float32, uint8 with int32 int32)")
unary_all = ["abs", "negative", "conj", "square", "positive", "sign", "conjugate", "ravel", "transpose", "real", "imag",
             "iscomplex", "isreal"]
for op in unary_all:
  C(f"jnp.{op}(a)")
  C(f"jnp.{op}(i)")
  C(f"jnp.{op}(c)", "c / np.abs(c)" if op == "sign" else None, note="sign of a complex is x / abs(x) (numpy >= 2's; numpy 1.24 here takes the real part's sign)" if op == "sign" else None)
C("jnp.abs(t)")
C("jnp.abs(u)")
C("jnp.ravel(t)")
C("jnp.transpose(t)")
C("jnp.isrealobj(a)", "True")
C("jnp.isrealobj(c)", "False", note="isrealobj: not iscomplexobj")
C("jnp.isrealobj(i)", "True")
C("jnp.sign(n)", "np.where(n == 0, n, np.sign(n))", note="sign keeps a zero's sign (lax.sign)")
C("jnp.sign(u)")
C("jnp.sign(jnp.array([0j, 3+4j, -2j, jnp.nan + 1j]))", "np.array([0j, 0.6+0.8j, -1j, np.nan + np.nan * 1j], np.complex64)", note="testSignComplex: x / abs(x) (numpy >= 2's sign)")
for op in ["ceil", "floor", "trunc", "rint", "fabs"]:
  C(f"jnp.{op}(a)")
  C(f"jnp.{op}(n)")
  C(f"jnp.{op}(h)")
  if op != "fabs":
    C(f"jnp.{op}(i)", f"np.{op}(i)" if op == "rint" else f"np.{op}(i).astype(np.int32)", note=f"ceil, floor and trunc of ints keep them; rint makes them float32 (ufuncs.rint)" if op == "ceil" else None)
C("jnp.rint(c)")
C("jnp.rint(jnp.array([0.5, 1.5, 2.5, -0.5, -1.5]))", "np.array([0., 2., 2., -0., -2.], np.float32)")
inexact_unary = ["exp", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arctan", "arcsinh", "cbrt", "exp2", "expm1",
                 "deg2rad", "rad2deg", "sinc", "atan", "asinh"]
for op in inexact_unary:
  npop = {"atan": "arctan", "asinh": "arcsinh"}.get(op, op)
  C(f"jnp.{op}(a)", f"np.{npop}(a)")
  if op not in ("cbrt", "deg2rad", "rad2deg"):
    C(f"jnp.{op}(c)", f"np.{npop}(c)")
  C(f"jnp.{op}(k)", f"np.{npop}(k.astype(np.float32))", note="an int input is promoted to float32 (promote_like_jnp(inexact=True))" if op == "exp" else None)
for op in ["arcsin", "arccos", "arctanh", "asin", "acos", "atanh"]:
  npop = {"asin": "arcsin", "acos": "arccos", "atanh": "arctanh"}.get(op, op)
  C(f"jnp.{op}(s)", f"np.{npop}(s)")
  C(f"jnp.{op}(c * 0.3)", f"np.{npop}(c * np.float32(0.3))")
for op in ["log", "log2", "log10", "log1p", "sqrt", "arccosh", "acosh", "reciprocal"]:
  npop = {"acosh": "arccosh"}.get(op, op)
  src = "p + 1" if "cosh" in op else "p"
  C(f"jnp.{op}({src})", f"np.{npop}({src})")
  C(f"jnp.{op}(c)", f"np.{npop}(c)")
C("jnp.log(u)", "np.log(u.astype(np.float32))")
C("jnp.sqrt(jnp.array([4, 9, 2]))", "np.sqrt(np.array([4, 9, 2], np.float32))")
C("jnp.reciprocal(jnp.array([2., -4., 0.]))", "np.array([0.5, -0.25, np.inf], np.float32)")
C("jnp.i0(a)")
C("jnp.i0(jnp.array([0., 1., -2., 10.]))", "np.i0(np.array([0., 1., -2., 10.], np.float32))")
C("jnp.spacing(a)")
C("jnp.spacing(h)")
C("jnp.spacing(jnp.array([0., -0., 1e30, jnp.inf]))", "np.spacing(np.array([0., -0., 1e30, np.inf], np.float32))")
C("jnp.signbit(n)")
C("jnp.signbit(i)")
C("jnp.signbit(t)")
for op in ["isfinite", "isinf", "isnan", "isneginf", "isposinf"]:
  C(f"jnp.{op}(n)")
  if op in ("isfinite", "isinf", "isnan"):
    C(f"jnp.{op}(jnp.array([1+1j, complex(0, jnp.inf), complex(jnp.nan, 0)]))", f"np.{op}(np.array([1+1j, complex(0, np.inf), complex(np.nan, 0)]))")
C("jnp.angle(c)")
C("jnp.angle(c, deg=True)")
C("jnp.angle(a)")
C("jnp.angle(i, deg=True)", "np.angle(i, deg=True).astype(np.float32)")
C("jnp.modf(a)[0]")
C("jnp.modf(a)[1]")
C("jnp.modf(i)[1]", "np.modf(i)[1].astype(np.float32)", note="modf of ints: float32 parts")
for op in ["atleast_1d", "atleast_2d", "atleast_3d"]:
  C(f"jnp.{op}(b)")
  C(f"jnp.{op}(3.5)", f"np.{op}(np.float32(3.5))")
  C(f"jnp.{op}(i)")
C("jnp.unwrap(jnp.array([0., 3., 6.5, -1., 2.]))", "np.unwrap(np.array([0., 3., 6.5, -1., 2.]))")
C("jnp.unwrap(a, axis=0)", "np.unwrap(a, axis=0)")
C("jnp.unwrap(jnp.array([0., 3., 6.5, -1., 2.]), period=4)", "np.unwrap(np.array([0., 3., 6.5, -1., 2.]), period=4)")

binary = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "greater", "greater_equal", "less",
          "less_equal", "fmin", "fmax", "logaddexp", "logaddexp2", "hypot", "copysign", "arctan2", "atan2",
          "heaviside", "nextafter", "true_divide", "divide", "float_power", "power", "pow", "fmod", "remainder",
          "mod", "floor_divide", "isclose", "array_equal", "array_equiv"]
for op in binary:
  npop = {"atan2": "arctan2", "pow": "power"}.get(op, op)
  C(f"jnp.{op}(a, b)", f"np.{npop}(a, b)")
  if op in ("add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "greater", "less", "fmin",
            "fmax", "true_divide", "isclose", "array_equal"):
    C(f"jnp.{op}(i, j)", f"np.{npop}(i, j)")
  if op in ("add", "subtract", "multiply", "equal", "not_equal", "true_divide", "divide", "power", "array_equal", "maximum", "fmax"):
    C(f"jnp.{op}(c, b)", f"np.{npop}(c, b)")
  if op in ("add", "multiply", "maximum", "minimum", "equal", "greater", "not_equal", "true_divide"):
    C(f"jnp.{op}(t, f)", f"np.{npop}(t, f)")
C("jnp.add(i, b)", "np.add(i, b).astype(np.float32)", note="mixed kinds and widths: int32 + float32, uint8 + int32, int8 + uint8 (int16), float16 + float32, a weak Python scalar")
C("jnp.multiply(u, j)", "np.multiply(u.astype(np.int32), j)")
C("jnp.add(k, u)", "np.add(k.astype(np.int16), u.astype(np.int16))")
C("jnp.subtract(h, b)")
C("jnp.add(k, 300)", "np.add(k, np.int8(44))", note="300 wraps in int8 (a weak int takes the array's dtype)")
C("jnp.multiply(b, 2)")
C("jnp.true_divide(i, 2)", "np.true_divide(i, 2).astype(np.float32)")
C("jnp.true_divide(t, f)", "np.true_divide(t, f).astype(np.float32)")
C("jnp.power(i, jnp.array([2, 0, 3]))", "np.power(i, np.array([2, 0, 3], np.int32))")
C("jnp.power(b, 3)")
C("jnp.float_power(p, q)", "np.float_power(p, q).astype(np.float32)")
C("jnp.float_power(c, 2)", "np.float_power(c, 2).astype(np.complex64)")
C("jnp.nextafter(b, jnp.array([1., -3., 1.5]))", "np.nextafter(b, np.array([1., -3., 1.5], np.float32))")
C("jnp.nextafter(h, jnp.float16(0))", "np.nextafter(h, np.float16(0))")
C("jnp.heaviside(a, 0.5)", "np.heaviside(a, np.float32(0.5))")
C("jnp.heaviside(i, j)", "np.heaviside(i, j).astype(np.float32)")
C("jnp.logaddexp(n, 1.)", "np.logaddexp(n, np.float32(1.))")
C("jnp.logaddexp(n[:, None], n[None, :])", "np.logaddexp(n[:, None], n[None, :])")
C("jnp.logaddexp2(n, -jnp.inf)", "np.logaddexp2(n, np.float32(-np.inf))")
C("jnp.fmin(n, 1.)", "np.fmin(n, np.float32(1.))")
C("jnp.fmax(n, n[::-1])")
C("jnp.maximum(n, 1.)", "np.maximum(n, np.float32(1.))")
C("jnp.minimum(c, jnp.array([1+3j, 1j, 3]))", "np.minimum(c, np.array([1+3j, 1j, 3], np.complex64))")
C("jnp.copysign(j, -1)", "np.copysign(j, -1).astype(np.float32)")
C("jnp.copysign(u, -1.)", "np.copysign(u, -1.).astype(np.float32)")
C("jnp.arctan2(i, j)", "np.arctan2(i, j).astype(np.float32)")
for op in ["fmod", "remainder", "mod", "floor_divide"]:
  C(f"jnp.{op}(i, j)")
  C(f"jnp.{op}(i, -2)", f"np.{op}(i, np.int32(-2))")
  C(f"jnp.{op}(u, jnp.uint8(7))", f"np.{op}(u, np.uint8(7))")
  C(f"jnp.{op}(n, 1.25)", f"np.where(n == 0, n, np.{op}(n, np.float32(1.25)))" if op in ("remainder", "mod") else f"np.{op}(n, np.float32(1.25))",
    note="remainder keeps the sign of a zero (lax.rem's, where numpy's is +0)" if op == "remainder" else None)
C("jnp.divmod(i, j)[0]")
C("jnp.divmod(i, j)[1]")
C("jnp.divmod(a, b)[0]")
C("jnp.divmod(a, b)[1]")
C("jnp.divmod(k, jnp.int8(-4))[1]", "np.divmod(k, np.int8(-4))[1]")
C("jnp.remainder(i, 0)", "np.zeros((2, 3), np.int32)", note="an int % 0 is 0 (XLA's rem, where numpy warns)")
C("jnp.isclose(p, p + 1e-6)")
C("jnp.isclose(n, n)")
C("jnp.isclose(n, n, equal_nan=True)")
C("jnp.isclose(i, j)")
C("jnp.isclose(c, c * (1 + 1e-7))")
C("jnp.isclose(t, f)")
C("jnp.array_equal(n, n)")
C("jnp.array_equal(n, n, equal_nan=True)")
C("jnp.array_equal(a, a[:1])")
C("jnp.array_equiv(a, b)")
C("jnp.array_equiv(i, i[:1])")
C("jnp.array_equiv(a, jnp.ones((3, 2)))", "False")
C("jnp.kron(a, b)")
C("jnp.kron(i, k)", "np.kron(i, k).astype(np.int32)")
C("jnp.kron(c, 2.)", "np.kron(c, np.float32(2.))")
C("jnp.outer(b, j)", "np.outer(b, j).astype(np.float32)")
C("jnp.outer(a, i)", "np.outer(a, i).astype(np.float32)")
C("jnp.polyval(b, a)")
C("jnp.polyval(j, i)", "np.polyval(j, i).astype(np.int32)")
C("jnp.polyval(c, b)")
C("jnp.polyval(jnp.array([1., 2.]), 3.)", "np.float32(5.)")
C("jnp.ediff1d(i)")
C("jnp.ediff1d(i, jnp.array([7, 8]), jnp.array([-1]))", "np.ediff1d(i, np.array([7, 8]), np.array([-1])).astype(np.int32)")
C("jnp.ediff1d(j, to_begin=0)", "np.ediff1d(j, to_begin=0).astype(np.int32)")
C("jnp.ldexp(i, j)", "np.ldexp(i.astype(np.float32), j)")
C("jnp.ldexp(b, j)")
C("jnp.gcd(i, j)")
C("jnp.gcd(k, jnp.int8(4))", "np.gcd(k, np.int8(4))")
C("jnp.lcm(i, j)")
C("jnp.lcm(u, jnp.uint8(3))", "np.lcm(u, np.uint8(3))", note="lcm of uint8: 750 wraps to 238")
C("jnp.lcm(jnp.array([100, -60], jnp.int8), jnp.int8(3))", "np.lcm(np.array([100, -60], np.int8), np.int8(3))")
for op in ["logical_and", "logical_or", "logical_xor"]:
  C(f"jnp.{op}(t, f)")
  C(f"jnp.{op}(i, j)")
  C(f"jnp.{op}(a, c)", f"np.{op}(a, c)")
C("jnp.logical_not(t)")
C("jnp.logical_not(i)")
C("jnp.logical_not(n)")

N("testBitwiseOp / testBitwiseCount / testShiftOpAgainstNumpy: over ints and uints (an int and a uint of the same width that numpy would widen past 32 bits are skipped upstream)")
fr8 = "jnp.array([-128, -1, 0, 1, 127, 85], jnp.int8)"
fr16 = "jnp.array([-32768, -1, 0, 1, 32767, 1234], jnp.int16)"
fr32 = "jnp.array([-2147483648, -1, 0, 1, 2147483647, 123456789], jnp.int32)"
u8 = "jnp.array([0, 1, 2, 127, 128, 255], jnp.uint8)"
u32 = "jnp.array([0, 1, 3, 65536, 2147483648, 4294967295], jnp.uint32)"
for op in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
  C(f"jnp.{op}({fr8}, jnp.int8(0x5a))", f"np.{op}({fr8.replace('jnp.', 'np.')}, np.int8(0x5a))")
  C(f"jnp.{op}({fr32}, {fr32}[::-1])", f"np.{op}({fr32.replace('jnp.', 'np.')}, {fr32.replace('jnp.', 'np.')}[::-1])")
  C(f"jnp.{op}({u8}, {u8}[::-1])", f"np.{op}({u8.replace('jnp.', 'np.')}, {u8.replace('jnp.', 'np.')}[::-1])")
  C(f"jnp.{op}({fr8}, {fr16})", f"np.{op}({fr8.replace('jnp.', 'np.')}, {fr16.replace('jnp.', 'np.')})")
  C(f"jnp.{op}({u32}, {fr32})", f"np.{op}({u32.replace('jnp.', 'np.')}.astype(np.int64), {fr32.replace('jnp.', 'np.')}).astype(np.int32)" if False else f"np.{op}({u32.replace('jnp.', 'np.')}.view(np.int32), {fr32.replace('jnp.', 'np.')})", note="uint32 with int32 is int32 in JAX's lattice without x64 (numpy: int64)" if op == "bitwise_and" else None) if False else None
  C(f"jnp.{op}(t, f)")
for op in ["bitwise_not", "bitwise_invert", "invert"]:
  npop = "invert" if op == "bitwise_invert" else op
  C(f"jnp.{op}({fr8})", f"np.{npop}({fr8.replace('jnp.', 'np.')})")
  C(f"jnp.{op}({u32})", f"np.{npop}({u32.replace('jnp.', 'np.')})")
  C(f"jnp.{op}(t)", f"np.{npop}(t)")
C(f"jnp.bitwise_count({fr8})", "np.array([1, 1, 0, 1, 7, 4], np.uint8)", note="bitwise_count: the popcount of |x| (numpy's), in uint8")
C(f"jnp.bitwise_count({fr32})", "np.array([1, 1, 0, 1, 31, 16], np.uint8)")
C(f"jnp.bitwise_count({u32})", "np.array([0, 1, 2, 1, 1, 32], np.uint8)")
C(f"jnp.bitwise_count({fr16}.reshape(2, 3))", "np.array([[1, 1, 0], [1, 15, 5]], np.uint8)")
sh8 = "jnp.array([0, 1, 3, 7, 2, 5], jnp.int8)"
for op in ["left_shift", "bitwise_left_shift", "right_shift", "bitwise_right_shift"]:
  npop = op.replace("bitwise_", "")
  C(f"jnp.{op}({fr8}, {sh8})", f"np.{npop}({fr8.replace('jnp.', 'np.')}, {sh8.replace('jnp.', 'np.')})")
  C(f"jnp.{op}({u8}, {sh8}.astype(jnp.uint8))", f"np.{npop}({u8.replace('jnp.', 'np.')}, {sh8.replace('jnp.', 'np.')}.astype(np.uint8))")
  C(f"jnp.{op}({fr32}, jnp.array([0, 1, 4, 31, 30, 2]))", f"np.{npop}({fr32.replace('jnp.', 'np.')}, np.array([0, 1, 4, 31, 30, 2], np.int32))")
  C(f"jnp.{op}({fr16}, {sh8})", f"np.{npop}({fr16.replace('jnp.', 'np.')}, {sh8.replace('jnp.', 'np.')}.astype(np.int16))")
  C(f"jnp.{op}({fr8}.reshape(2, 3), jnp.array([1, 2, 3], jnp.int8))", f"np.{npop}({fr8.replace('jnp.', 'np.')}.reshape(2, 3), np.array([1, 2, 3], np.int8))")
C("jnp.left_shift(jnp.int8(1), jnp.int8(8))", "np.int8(0)", note="a shift by the bit width or more: 0 (or -1 shifting a negative right)")
C("jnp.right_shift(jnp.int8(-100), jnp.int8(9))", "np.int8(-1)")
C("jnp.right_shift(jnp.uint8(200), jnp.uint8(8))", "np.uint8(0)")

N("testOperatorOverload / testRightOperatorOverload: Python's operators on arrays, both ways")
import operator as _op
ops2 = [("add", "+"), ("sub", "-"), ("mul", "*"), ("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
        ("ge", ">="), ("pow", "**"), ("mod", "%"), ("floordiv", "//"), ("truediv", "/")]
for nm, sym in ops2:
  src = "p" if nm == "pow" else "a"
  C(f"operator.{nm}({src}, b)", f"{src} {sym} b")
  C(f"operator.{nm}(i, j)" if nm not in ("pow",) else "operator.pow(i, jnp.array([2, 0, 3]))", f"i {sym} j" if nm not in ("pow", "truediv") else ("np.power(i, np.array([2, 0, 3], np.int32))" if nm == "pow" else "(i / j).astype(np.float32)"))
  C(f"b.__r{nm}__({src})" if nm not in ("eq", "ne", "lt", "le", "gt", "ge") else f"operator.{nm}(b, {src})", f"{src} {sym} b" if nm not in ("eq", "ne", "lt", "le", "gt", "ge") else f"b {sym} {src}")
  C(f"operator.{nm}(c, b)" if nm in ("add", "sub", "mul", "eq", "ne", "truediv", "pow") else f"operator.{nm}(2, b)", f"c {sym} b" if nm in ("add", "sub", "mul", "eq", "ne", "truediv", "pow") else f"np.float32(2) {sym} b")
C("operator.pos(c)", "+c")
C("operator.neg(i)", "-i")
C("operator.abs(c)", "np.abs(c)")
C("operator.invert(k)", "~k")
C("operator.lshift(k, jnp.array([1, 2, 3], jnp.int8))", "k << np.array([1, 2, 3], np.int8)")
C("operator.rshift(i, 1)", "i >> 1")
C("(3).__rlshift__(k)" if False else "jnp.int8(1).__rlshift__(k)", "k << np.int8(1)")
C("j.__rrshift__(jnp.array([64, 64, 64]))", "np.array([64, 64, 64], np.int32) >> j")
C("j.__rmod__(7)", "np.int32(7) % j")
C("b.__rpow__(2.)", "np.float32(2.) ** b")

N("testI0Grad (issue 11479): grad of i0 at 0 is 0")
C("jax.grad(jax.numpy.i0)(0.0)", "np.float32(0.)")
N("testSpacingIntegerInputs: spacing of ints is spacing of them as floats of spacing's dtype (float32)")
C("jnp.spacing(jnp.array([-64, -1, 0, 3, 63]))", "np.spacing(np.array([-64, -1, 0, 3, 63], np.float32))")
C("jnp.spacing(jnp.array([-64, 5], jnp.int8))", "np.spacing(np.array([-64, 5], np.float32))", note="int8's inexact dtype is float32 too (dtypes.to_inexact_dtype)")
N("testSpacingSubnormals: spacing around 0 through the subnormals")
C("jnp.spacing(jnp.array([-2.8e-45, -1.4e-45, 0., 1.4e-45, 2.8e-45], jnp.float32))", "np.spacing(np.array([-2.8e-45, -1.4e-45, 0., 1.4e-45, 2.8e-45], np.float32))")
C("jnp.spacing(jnp.array([-1.2e-07, -6e-08, 0., 6e-08, 1.2e-07], jnp.float16))", "np.spacing(np.array([-1.2e-07, -6e-08, 0., 6e-08, 1.2e-07], np.float16))")
N("test_float_divmod_zero / test_float_floor_divide_zero (issue 37752): divmod and floor_divide of floats by 0 as numpy")
for dt in ("float16", "float32"):
  C(f"jnp.divmod(jnp.arange(-2, 3, dtype=jnp.{dt}), jnp.zeros(5, jnp.{dt}))[0]", f"np.divmod(np.arange(-2, 3, dtype=np.{dt}), np.zeros(5, np.{dt}))[0]")
  C(f"jnp.divmod(jnp.arange(-2, 3, dtype=jnp.{dt}), jnp.zeros(5, jnp.{dt}))[1]", f"np.divmod(np.arange(-2, 3, dtype=np.{dt}), np.zeros(5, np.{dt}))[1]")
  C(f"jnp.floor_divide(jnp.arange(-2, 3, dtype=jnp.{dt}), jnp.zeros(5, jnp.{dt}))", f"np.floor_divide(np.arange(-2, 3, dtype=np.{dt}), np.zeros(5, np.{dt}))")
N("test_heaviside_nan (issue 38105): heaviside's table over nan, -inf, -1, 0, 1, inf")
for dt in ("float16", "float32"):
  C(f"jnp.heaviside(jnp.array([jnp.nan, -jnp.inf, -1, 0, 1, jnp.inf], jnp.{dt})[:, None], jnp.array([jnp.nan, -jnp.inf, -1, 0, 1, jnp.inf], jnp.{dt})[None, :])",
    f"np.heaviside(np.array([np.nan, -np.inf, -1, 0, 1, np.inf], np.{dt})[:, None], np.array([np.nan, -np.inf, -1, 0, 1, np.inf], np.{dt})[None, :])")

CASES[:] = [c for c in CASES if c is not None]


def main():
  out = open("jnp32_ops.jxr", "w")
  out.write("""# JAX's tests/lax_numpy_operators_test.py (JaxNumpyOperatorTests), the
# value cases: each jnp function and Python operator the tests compare with
# numpy, over small literal inputs, printed as dtype, shape and values.
# Written by jnp32_ops_gen.py, whose numpy computation of each case is what
# this file's .out was checked against (golden_cmp within float tolerance).
import operator
import numpy as np
import jax
import jax.numpy as jnp
def show(v):
  v = jnp.asarray(v)
  if jnp.iscomplexobj(v):
    print(v.dtype, v.shape, v.real, v.imag)
  else:
    print(v.dtype, v.shape, v)
""")
  out.write(INPUTS)
  env = dict(np_env)
  env["np"] = np
  jnp32_gen.write_cases(out, CASES, env)
  out.close()

main()
