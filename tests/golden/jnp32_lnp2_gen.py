# jnp32_lnp2_gen.py: writes jnp32_lnp2.jxr (JAX's tests/lax_numpy_test.py,
# LaxBackedNumpyTests: a second set of its value tests, each on small
# literal inputs) and prints what it must print, computed with numpy
# (1.24), cast to the 32-bit dtypes JAX gives without x64:
#   /usr/bin/python3 jnp32_lnp2_gen.py > want && shardrepl jnp32_lnp2.jxr > got
#   && golden_cmp want got
import numpy as np

import jnp32_gen

INPUTS = """\
a = jnp.array([[1.5, -2., 0., 0.5], [4., 0.25, -1., 2.], [0., 1., 2.5, -3.]])
v = jnp.array([3., 0., -1.5, 2., 0., 7.])
i = jnp.array([[3, 0, -2], [0, 5, 1]])
j = jnp.array([4, 1, 0, 3, 1])
b = jnp.array([[True, False, True], [False, False, True]])
c = jnp.array([1+2j, -1j, 3, 0.5])
x3 = jnp.arange(24).reshape(2, 3, 4)
z = jnp.array([0, 0, 1, 2, 0, 3, 0, 0])
"""
np_env = {}
exec(INPUTS.replace("jnp.", "np."), {"np": np}, np_env)
for key in ("a", "v"):
  np_env[key] = np_env[key].astype(np.float32)
for key in ("i", "j", "x3", "z"):
  np_env[key] = np_env[key].astype(np.int32)
np_env["c"] = np_env["c"].astype(np.complex64)

CASES = []
def C(jx, nx=None, note=None):
  CASES.append((note, jx, nx if nx is not None else jx.replace("jnp.", "np.")))
def N(note):
  CASES.append((note, None, None))

N("LaxBackedNumpyTests.testConvolutions / testConvolutionsPreferredElementType: convolve and correlate in the three modes")
for f in ("convolve", "correlate"):
  for mode in ("full", "same", "valid"):
    C(f"jnp.{f}(v, jnp.array([1., -2., 0.5]), mode='{mode}')", f"np.{f}(v, np.array([1., -2., 0.5], np.float32), mode='{mode}')")
  C(f"jnp.{f}(j, jnp.array([2, 1]))", f"np.{f}(j, np.array([2, 1], np.int32)).astype(np.float32)", note="ints convolve as float32 (promote_dtypes_inexact) without preferred_element_type" if f == "convolve" else None)
  C(f"jnp.{f}(c, jnp.array([1j, 2.]))", f"np.{f}(c, np.array([1j, 2.], np.complex64))")
C("jnp.convolve(j, jnp.array([2, 1]), preferred_element_type=jnp.int32)", "np.convolve(j, np.array([2, 1])).astype(np.int32)")
C("jnp.correlate(v, jnp.array([1., 2.]), mode='same', preferred_element_type=jnp.float32)", "np.correlate(v, np.array([1., 2.], np.float32), mode='same')")
N("testSort / testSortStableDescending / testSortComplex / testLexsort / testArgsort / testArgsortUnstable / testPartition / testArgpartition")
C("jnp.sort(a)")
C("jnp.sort(a, axis=0)")
C("jnp.sort(a, axis=None)")
C("jnp.sort(v, descending=True)", "np.sort(v)[::-1]")
C("jnp.sort(c)", "np.sort(c)")
C("jnp.sort(jnp.array([3., jnp.nan, -1., jnp.nan, 0.]))", "np.sort(np.array([3., np.nan, -1., np.nan, 0.], np.float32))")
C("jnp.argsort(v)", "np.argsort(v, kind='stable').astype(np.int32)")
C("jnp.argsort(v, descending=True, stable=True)", "np.array([5, 0, 3, 1, 4, 2], np.int32)")
C("jnp.argsort(a, axis=0)", "np.argsort(a, axis=0, kind='stable').astype(np.int32)")
C("jnp.lexsort((jnp.array([1, 5, 1, 4, 3]), jnp.array([4, 1, 4, 1, 2])))", "np.lexsort((np.array([1, 5, 1, 4, 3]), np.array([4, 1, 4, 1, 2]))).astype(np.int32)")
C("jnp.lexsort((j, -j), axis=0)", "np.lexsort((j, -j), axis=0).astype(np.int32)")
C("jnp.partition(jnp.array([5., 1., 4., 2., 3.]), 2)[2]", "np.float32(3.)")
C("jnp.sort(jnp.partition(jnp.array([5., 1., 4., 2., 3.]), 2)[:2])", "np.array([1., 2.], np.float32)")
C("jnp.argpartition(jnp.array([5., 1., 4., 2., 3.]), 1)[1]", "np.int32(3)")
C("jnp.partition(jnp.array([3, 0, 2, 1], jnp.uint8), 1)[1]", "np.uint8(1)")
N("testTopK")
C("jax.lax.top_k(v, 3)[0]", "np.sort(v)[::-1][:3]")
C("jax.lax.top_k(v, 3)[1]", "np.array([5, 0, 3], np.int32)")
C("jnp.top_k(v, 2)[0]", "np.array([7., 3.], np.float32)")
C("jnp.top_k(v, 2, mode='smallest')[0]", "np.array([-1.5, 0.], np.float32)")
N("testHistogramBinEdges / testHistogram / testHistogram2d / testHistogramdd")
hx = "jnp.array([0.5, 1.5, 2.2, 2.5, 3.9, 0.1, 3.])"
hxn = hx.replace("jnp.", "np.")
C(f"jnp.histogram_bin_edges({hx}, bins=4)", f"np.histogram_bin_edges({hxn}.astype(np.float32), bins=4).astype(np.float32)")
C(f"jnp.histogram_bin_edges({hx}, bins=3, range=(0, 6))", f"np.histogram_bin_edges({hxn}.astype(np.float32), bins=3, range=(0, 6)).astype(np.float32)")
C(f"jnp.histogram({hx}, bins=4)[0]", f"np.histogram({hxn}.astype(np.float32), bins=4)[0].astype(np.float32)", note="the counts are in the weights' (inexact) dtype")
C(f"jnp.histogram({hx}, bins=jnp.array([0., 1., 3., 4.]))[0]", f"np.histogram({hxn}, bins=[0., 1., 3., 4.])[0].astype(np.float32)")
C(f"jnp.histogram({hx}, bins=3, density=True)[0]", f"np.histogram({hxn}.astype(np.float32), bins=3, density=True)[0].astype(np.float32)")
C(f"jnp.histogram({hx}, bins=2, weights=jnp.arange(7.))[0]", f"np.histogram({hxn}.astype(np.float32), bins=2, weights=np.arange(7.))[0].astype(np.float32)")
C(f"jnp.histogram2d({hx}, {hx}[::-1], bins=2)[0]", f"np.histogram2d({hxn}.astype(np.float32), {hxn}.astype(np.float32)[::-1], bins=2)[0].astype(np.int32)", note="histogram2d/histogramdd without weights count in int32 (bincount)")
C(f"jnp.histogramdd(jnp.stack([{hx}, {hx}[::-1]], axis=1), bins=(2, 3))[0]", f"np.histogramdd(np.stack([{hxn}.astype(np.float32), {hxn}.astype(np.float32)[::-1]], axis=1), bins=(2, 3))[0].astype(np.int32)")
N("testCorrCoef / testCumSumProd / testNanCumSumProd")
C("jnp.corrcoef(a)", "np.corrcoef(a)")
C("jnp.corrcoef(a[0], a[1])", "np.corrcoef(a[0], a[1])")
C("jnp.corrcoef(a, rowvar=False)[0]", "np.corrcoef(a, rowvar=False)[0]")
C("jnp.cumsum(a, axis=1)")
C("jnp.cumprod(i, axis=0)")
C("jnp.cumsum(b)", "np.cumsum(b).astype(np.int32)")
C("jnp.cumprod(v, dtype=jnp.float16)", "np.cumprod(v).astype(np.float16)")
C("jnp.nancumsum(jnp.array([1., jnp.nan, 2., jnp.nan]))", "np.nancumsum(np.array([1., np.nan, 2., np.nan], np.float32))")
C("jnp.nancumprod(jnp.array([[2., jnp.nan], [jnp.nan, 3.]]), axis=0)", "np.nancumprod(np.array([[2., np.nan], [np.nan, 3.]], np.float32), axis=0)")
N("testIsClose / testIsCloseCornerCases / testAllClose")
C("jnp.isclose(jnp.array([1e10, 1e-7, jnp.inf, -jnp.inf, jnp.nan]), jnp.array([1.00001e10, 1e-8, jnp.inf, jnp.inf, jnp.nan]))", "np.isclose(np.array([1e10, 1e-7, np.inf, -np.inf, np.nan], np.float32), np.array([1.00001e10, 1e-8, np.inf, np.inf, np.nan], np.float32))")
C("jnp.isclose(jnp.array([1., 2.]), jnp.array([1.1, 2.]), rtol=0.2, atol=0.)", "np.array([True, True])")
C("jnp.isclose(jnp.inf, jnp.inf)", "np.bool_(True)")
C("jnp.isclose(jnp.array([jnp.nan, 1.]), jnp.nan, equal_nan=True)", "np.array([True, False])")
C("jnp.allclose(a, a + 1e-9)", "np.bool_(True)")
C("jnp.allclose(a, a + 1e-3)", "np.bool_(False)")
C("jnp.allclose(jnp.array([jnp.nan]), jnp.array([jnp.nan]), equal_nan=True)", "np.bool_(True)")
N("testAstype / testAstypeBool / testAstypeComplexDowncast / testView / testItem / testNbytes / testItemsize (testByteSwap: no byteswap method yet)")
C("a.astype(jnp.int32)")
C("jnp.astype(v, bool)", "v.astype(bool)")
C("jnp.astype(jnp.array([0.5, -2.7, 0.]), jnp.int8)", "np.array([0, -2, 0], np.int8)")
C("c.real.astype(jnp.uint8)", "np.array([1, 0, 3, 0], np.uint8)")
C("jnp.astype(c, jnp.float32)", "c.real", note="complex to real keeps the real part (a ComplexWarning in numpy)")
C("jnp.array([1.5, -2.], jnp.float32).view(jnp.int32)", "np.array([1.5, -2.], np.float32).view(np.int32)")
C("jnp.array([1, 256], jnp.int32).view(jnp.uint8)", "np.array([1, 256], np.int32).view(np.uint8)")
C("jnp.array([1, 2, 3, 4], jnp.uint8).view(jnp.uint16)", "np.array([1, 2, 3, 4], np.uint8).view(np.uint16)")
C("jnp.array(2.5).item()", "np.float32(2.5)")
C("a[1, 2].item()", "np.float32(-1.)")
C("a.nbytes", "np.int32(48)")
C("c.itemsize", "np.int32(8)")
N("testPiecewise / testPolyfit / testPlace / testPut / testPutAlongAxis / testFromFunction")
C("jnp.piecewise(v, [v < 0, v > 2], [-1., lambda x: x * 10, 0.])", "np.piecewise(v, [v < 0, v > 2], [-1., lambda x: x * 10, 0.])")
C("jnp.piecewise(j, [j == 1], [lambda x: x + 100, lambda x: -x])", "np.piecewise(j, [j == 1], [lambda x: x + 100, lambda x: -x])")
C("jnp.round(jnp.polyfit(jnp.array([0., 1., 2., 3.]), jnp.array([1., 3., 7., 13.]), 2), 4)", "np.round(np.polyfit(np.array([0., 1., 2., 3.]), np.array([1., 3., 7., 13.]), 2), 4).astype(np.float32)", note="polyfit's least squares in float32, to 4 decimals")
C("jnp.place(v, v > 1, jnp.array([-8., -9.]), inplace=False)", "(lambda t: (np.place(t, t > 1, [-8., -9.]), t)[1])(v.copy())")
C("jnp.put(j, jnp.array([0, 2]), jnp.array([-1, -2]), inplace=False)", "(lambda t: (np.put(t, [0, 2], [-1, -2]), t)[1])(j.copy())")
C("jnp.put(j, jnp.array([7, -9]), jnp.array([5, 6]), mode='wrap', inplace=False)", "(lambda t: (np.put(t, [7, -9], [5, 6], mode='wrap'), t)[1])(j.copy())")
C("jnp.put_along_axis(a, jnp.array([[0], [1], [2]]), 9., axis=1, inplace=False)", "(lambda t: (np.put_along_axis(t, np.array([[0], [1], [2]]), 9., axis=1), t)[1])(a.copy())")
C("jnp.fromfunction(lambda r, s: r * 10 + s, (2, 3))", "np.fromfunction(lambda r, s: r * 10 + s, (2, 3)).astype(np.float32)")
C("jnp.fromfunction(lambda r: r * 2, (4,), dtype=int)", "np.array([0, 2, 4, 6], np.int32)")
N("testIsScalar / testIsNotScalar / testIsComplexObj / testNdimShapeSize")
C("jnp.array([jnp.isscalar(1.), jnp.isscalar(jnp.int32(3)), jnp.isscalar(jnp.array(2)), jnp.isscalar(jnp.array([2])), jnp.isscalar([1]), jnp.isscalar(None)])", "np.array([True, True, True, False, False, False])")
C("jnp.array([jnp.iscomplexobj(c), jnp.iscomplexobj(a), jnp.iscomplexobj(1j), jnp.iscomplexobj(3)])", "np.array([True, False, True, False])")
N("testToList / testFromBuffer / testFromString (testToBytes: no tobytes method yet)")
C("jnp.array(i.tolist())", "i")
C("jnp.frombuffer(b'\\x01\\x02\\x03\\x04', dtype=jnp.uint8)", "np.array([1, 2, 3, 4], np.uint8)")
C("jnp.fromstring('1 2 3', dtype=int, sep=' ')", "np.array([1, 2, 3], np.int32)")
N("testUnwrap / testUnstack / testArrayEqualExamples / testArrayEquivExamples")
C("jnp.unstack(i)[1]", "i[1]")
C("jnp.unstack(x3, axis=2)[3]", "x3[:, :, 3]")
C("jnp.array([jnp.array_equal(j, j), jnp.array_equal(j, j[:3]), jnp.array_equal(a, a.astype(jnp.float16)), jnp.array_equal(jnp.nan, jnp.nan), jnp.array_equal(jnp.nan, jnp.nan, equal_nan=True)])", "np.array([True, False, True, False, True])")
C("jnp.array([jnp.array_equiv(j, j), jnp.array_equiv(jnp.ones(3), 1.), jnp.array_equiv(i, i[:1]), jnp.array_equiv(jnp.ones((2, 1)), jnp.ones((2, 3)))])", "np.array([True, True, False, True])")
N("testIntegerPowersArePrecise / testSincAtZero / testReluGradientConstants / testIssue956 / testMathSpecialFloatValues")
C("jnp.power(jnp.float32(3.), 5)", "np.float32(243.)")
C("jnp.array([x ** 7 for x in jnp.arange(1., 5.)])", "np.array([1., 128., 2187., 16384.], np.float32)")
C("jnp.sinc(0.)", "np.float32(1.)")
C("jax.grad(jnp.sinc)(0.)", "np.float32(0.)")
C("jax.grad(lambda x: jnp.sinc(x).sum())(jnp.array([0., 0.5]))", "np.array([0., (np.pi * 0.5 * np.cos(np.pi * 0.5) - np.sin(np.pi * 0.5)) / (np.pi * 0.25)], np.float32)")
C("jnp.array([jnp.exp(jnp.inf), jnp.log(0.), jnp.sqrt(-1.), jnp.arctan(jnp.inf)])", "np.array([np.inf, -np.inf, np.nan, np.pi / 2], np.float32)")


def main():
  out = open("jnp32_lnp2.jxr", "w")
  out.write("""# JAX's tests/lax_numpy_test.py (LaxBackedNumpyTests), a second set of
# its value tests: each jnp call the tests compare with numpy, over small
# literal inputs, printed as dtype, shape and values (a complex result as
# its real and imaginary parts; Python results through jnp.asarray).
# Written by jnp32_lnp2_gen.py, whose numpy computation of each case is
# what this file's .out was checked against (golden_cmp within float
# tolerance).
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
