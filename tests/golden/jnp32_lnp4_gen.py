# jnp32_lnp4_gen.py: writes jnp32_lnp4.jxr (JAX's tests/lax_numpy_test.py,
# LaxBackedNumpyTests: a fourth set of its value tests, each on small
# literal inputs) and prints what it must print, computed with numpy
# (1.24), cast to the 32-bit dtypes JAX gives without x64:
#   /usr/bin/python3 jnp32_lnp4_gen.py > want && shardrepl jnp32_lnp4.jxr > got
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

N("LaxBackedNumpyTests.testPad / testPadStatValues / testPadSymmetricAndReflect / testPadLinearRamp / testPadKwargs: jnp.pad's modes")
for mode, kw in [("constant", ""), ("constant", ", constant_values=((1, 2), (3, 4))"), ("edge", ""), ("wrap", ""),
                 ("linear_ramp", ", end_values=((5, -5), (0, 10))"), ("maximum", ""), ("minimum", ", stat_length=2"),
                 ("mean", ", stat_length=((1, 2), (2, 1))"), ("median", ""), ("reflect", ""), ("symmetric", ""),
                 ("reflect", ", reflect_type='odd'"), ("symmetric", ", reflect_type='odd'")]:
  C(f"jnp.pad(a, ((1, 2), (2, 1)), mode='{mode}'{kw})", f"np.pad(a, ((1, 2), (2, 1)), mode='{mode}'{kw})")
C("jnp.pad(j, 3, mode='reflect')", "np.pad(j, 3, mode='reflect')")
C("jnp.pad(j, (4, 2), mode='symmetric')", "np.pad(j, (4, 2), mode='symmetric')")
C("jnp.pad(i, ((0, 1), (1, 0)), mode='mean')", "np.pad(i, ((0, 1), (1, 0)), mode='mean')")
C("jnp.pad(j, 2, mode='linear_ramp', end_values=10)", "np.pad(j, 2, mode='linear_ramp', end_values=10)")
N("testUnique (values, return_index, return_inverse, return_counts) / testSetops (intersect1d, union1d, setdiff1d, setxor1d, isin)")
C("jnp.unique(j)", "np.unique(j)")
C("jnp.unique(j, return_counts=True)[1]", "np.unique(j, return_counts=True)[1].astype(np.int32)")
C("jnp.unique(j, return_index=True)[1]", "np.unique(j, return_index=True)[1].astype(np.int32)")
C("jnp.unique(j, return_inverse=True)[1]", "np.unique(j, return_inverse=True)[1].astype(np.int32)")
C("jnp.unique(i, axis=0)", "np.unique(i, axis=0)")
C("jnp.intersect1d(j, jnp.array([1, 3, 5]))", "np.intersect1d(j, np.array([1, 3, 5], np.int32))")
C("jnp.union1d(j, jnp.array([7, -1]))", "np.union1d(j, np.array([7, -1], np.int32))")
C("jnp.setdiff1d(j, jnp.array([1, 4]))", "np.setdiff1d(j, np.array([1, 4], np.int32))")
C("jnp.setxor1d(j, jnp.array([1, 5]))", "np.setxor1d(j, np.array([1, 5], np.int32))")
C("jnp.isin(i, j)", "np.isin(i, j)")
C("jnp.isin(i, j, invert=True)", "np.isin(i, j, invert=True)")
N("testSearchsorted / testInterp / testInterpExtrapoate")
C("jnp.searchsorted(jnp.array([0., 1., 1., 3., 5.]), jnp.array([-1., 1., 2., 5., 6.]))", "np.searchsorted(np.array([0., 1., 1., 3., 5.]), np.array([-1., 1., 2., 5., 6.])).astype(np.int32)")
C("jnp.searchsorted(jnp.array([0., 1., 1., 3., 5.]), jnp.array([-1., 1., 2., 5., 6.]), side='right')", "np.searchsorted(np.array([0., 1., 1., 3., 5.]), np.array([-1., 1., 2., 5., 6.]), side='right').astype(np.int32)")
C("jnp.searchsorted(jnp.array([3, 1, 2]), 2, sorter=jnp.array([1, 2, 0]))", "np.int32(1)")
C("jnp.interp(jnp.array([-1., 0.5, 2.5, 4.]), jnp.array([0., 1., 3.]), jnp.array([10., 20., 0.]))", "np.interp(np.array([-1., 0.5, 2.5, 4.]), np.array([0., 1., 3.]), np.array([10., 20., 0.])).astype(np.float32)")
C("jnp.interp(jnp.array([-1., 4.]), jnp.array([0., 1., 3.]), jnp.array([10., 20., 0.]), left=-5., right=5.)", "np.array([-5., 5.], np.float32)")
C("jnp.interp(jnp.array([-1., 3.5, 7.]), jnp.array([0., 1., 3.]), jnp.array([10., 20., 0.]), period=4)", "np.interp(np.array([-1., 3.5, 7.]), np.array([0., 1., 3.]), np.array([10., 20., 0.]), period=4).astype(np.float32)")
N("nanargmin / nanargmax / around (jnp.fix and jnp.real_if_close are not in JAX 0.11)")
C("jnp.nanargmin(jnp.array([[3., jnp.nan, 1.], [jnp.nan, 2., 5.]]), axis=1)", "np.nanargmin(np.array([[3., np.nan, 1.], [np.nan, 2., 5.]]), axis=1).astype(np.int32)")
C("jnp.nanargmax(jnp.array([[3., jnp.nan, 1.], [jnp.nan, 2., 5.]]))", "np.int32(5)")
C("jnp.around(a, 1)", "np.around(a, 1)")


def main():
  out = open("jnp32_lnp4.jxr", "w")
  out.write("""# JAX's tests/lax_numpy_test.py (LaxBackedNumpyTests), a fourth set of
# its value tests: each jnp call the tests compare with numpy, over small
# literal inputs, printed as dtype, shape and values (a complex result as
# its real and imaginary parts; Python results through jnp.asarray).
# Written by jnp32_lnp4_gen.py, whose numpy computation of each case is
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
