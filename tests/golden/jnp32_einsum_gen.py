# jnp32_einsum_gen.py: writes jnp32_einsum.jxr (JAX's
# tests/lax_numpy_einsum_test.py, the value cases) and prints what it must
# print, computed with numpy's einsum (1.24) over the same operands (A(),
# the same numpy code both sides), cast to the 32-bit dtypes JAX gives:
#   /usr/bin/python3 jnp32_einsum_gen.py > want && shardrepl jnp32_einsum.jxr > got
#   && golden_cmp want got
import itertools
from collections import defaultdict
import numpy as np

import jnp32_gen

HELPER = """\
def A(shape, dtype='float32', k=0):
  n = int(np.prod(shape))
  v = (np.arange(n) * 7 + k) % 5 - 2
  if dtype == 'bool':
    return (v > 0).reshape(shape)
  if dtype == 'complex64':
    return (v + 1j * ((np.arange(n) * 3 + k) % 4 - 1)).astype(dtype).reshape(shape)
  return (v * 0.5 if dtype == 'float32' else v).astype(dtype).reshape(shape)
"""
np_env = {"np": np}
exec(HELPER, np_env)

CASES = []
def C(jx, nx=None, note=None):
  CASES.append((note, jx, nx if nx is not None else jx.replace("jnp.", "np.").replace(", precision=lax.Precision.HIGHEST", "")))
def N(note):
  CASES.append((note, None, None))

def E(s, *shapes, dtype="float32", note=None):
  ops = ", ".join(f"A({sh!r}, '{dtype}', {k})" for k, sh in enumerate(shapes))
  C(f"jnp.einsum('{s}', {ops}, precision=lax.Precision.HIGHEST)", note=note)

N("EinsumTest._check: jnp.einsum(s, *ops, precision=HIGHEST) equals np.einsum(s, *ops)")
N("test_three_operands_1/2, test_two_operands_1..6")
E("i,j,k->ijk", (3,), (4,), (5,))
E("ij,j->i", (3, 4), (4,))
E("ijk,j->i", (3, 4, 5), (4,))
E("iji,i->j", (3, 4, 3), (3,))
E("ij,ij->", (3, 4), (3, 4))
E("nij,jk->nik", (10, 2, 3), (3, 4))
E("sa,shb->shab", (2, 1), (2, 3, 4))
N("test_one_operand_1..16")
for s, sh in [("ijk->j", (3, 4, 5)), ("ijk->kij", (3, 4, 5)), ("ijk->ki", (3, 4, 5)), ("...ijk->...ki", (2, 3, 4, 5)),
              ("...ijk->ki", (3, 4, 5)), ("ii->", (3, 3)), ("ij->", (3, 3)), ("iii->", (3, 3, 3)), ("ii->i", (3, 3)),
              ("iij->i", (3, 3, 4)), ("iii->i", (3, 3, 3)), ("iijkk->i", (3, 3, 5, 4, 4)), ("iijkk->ik", (3, 3, 5, 4, 4)),
              ("iijkl->il", (3, 3, 5, 4, 4)), ("ij->ij", (3, 3))]:
  E(s, sh)
N("test_tf_unsupported_1..3")
E("ij...,jk...->ik...", (2, 3, 5, 1), (3, 4, 5, 1))
E("ijj,k->ik", (2, 3, 3), (4,))
E("ij,ij,jk->ik", (2, 3), (2, 3), (3, 4))
N("test_from_dask: each einstr over float32, int32, complex64 and bool operands (label sizes cycle 2, 3, 4; '...' is two dims)")
DASK = ['abc,bad->abcd', 'abcdef,bcdfg->abcdeg', 'ea,fb,abcd,gc,hd->efgh', 'ab,b', 'aa', 'a,a->', 'a,a->a', 'a,a',
        'a,b', 'a,b,c', 'a', 'ba,b', 'ba,b->', 'defab,fedbc->defac', 'ab...,bc...->ac...', 'a...a', 'abc...->cba...',
        '...ab->...a', 'a...a->a...', '...abc,...abcd->...d', 'ab...,b->ab...', 'aa->a', 'ab,ab,c->c', 'aab,bc->ac',
        'aab,bcc->ac', 'fdf,cdd,ccd,afe->ae', 'fff,fae,bef,def->abd']
for einstr in DASK:
  input_str = einstr.split('->')[0]
  dims = itertools.cycle([2, 3, 4])
  shapes = defaultdict(lambda: next(dims))
  input_shapes = [tuple(shapes[c] for c in names.replace('...', '01')) for names in input_str.split(',')]
  for dtype in ["float32", "int32", "complex64", "bool"]:
    E(einstr, *input_shapes, dtype=dtype)
N("test_ordered_front_batch_dim_case")
C("jnp.einsum('ijkl,ijml->ijkm', np.ones((1, 8, 20, 4)), np.ones((1, 8, 20, 4)), precision=lax.Precision.HIGHEST)",
  "np.einsum('ijkl,ijml->ijkm', np.ones((1, 8, 20, 4), np.float32), np.ones((1, 8, 20, 4), np.float32))")
N("test_einsum_kpmurphy_example: the path einsum_path finds ('optimal'), then einsum along it, equals the loops")
C("jnp.einsum('ntk,kd,dc->nc', A((2, 6, 5)), A((5, 4), k=1), A((4, 3), k=2), optimize=jnp.einsum_path('ntk,kd,dc->nc', A((2, 6, 5)), A((5, 4), k=1), A((4, 3), k=2), optimize='optimal')[0])",
  "np.einsum('ntk,kd,dc->nc', A((2, 6, 5)), A((5, 4), k=1), A((4, 3), k=2))")
N("test_contraction_broadcasting / test_batch_broadcasting / test_batch_and_contraction_broadcasting / test_broadcasting_issue_2189: size-1 dims broadcast")
E("cij,cjk->cik", (3, 4, 5), (3, 1, 6))
E("cij,cjk->cik", (1, 4, 5), (3, 5, 6))
E("cij,cjk->cik", (1, 4, 5), (3, 1, 6))
E("...ij,...j", (2, 1, 3, 3), (2, 4, 3))
N("test_inf_nan: a diagonal through inf is inf (no inf * 0)")
C("jnp.einsum('baa->ba', np.array([[[np.inf, np.inf], [1.0, 1.0]]]))", "np.einsum('baa->ba', np.array([[[np.inf, np.inf], [1.0, 1.0]]], np.float32))")
N("test_einsum_mixed_precision: 'a,a->a' over mixed numeric dtypes gives numpy's values in JAX's promoted dtype")
for d1, d2 in [("int8", "float32"), ("int32", "int8"), ("uint8", "int8"), ("bool", "int32"), ("float16", "float32"),
               ("complex64", "float32"), ("int32", "complex64"), ("uint8", "uint32"), ("bool", "bool")]:
  pd = {("uint8", "int8"): "int16", ("bool", "int32"): "int32", ("int32", "int8"): "int32", ("int8", "float32"): "float32",
        ("float16", "float32"): "float32", ("complex64", "float32"): "complex64", ("int32", "complex64"): "complex64",
        ("uint8", "uint32"): "uint32", ("bool", "bool"): "bool"}[(d1, d2)]
  C(f"jnp.einsum('a,a->a', A((10,), '{d1}'), A((10,), '{d2}', 1))",
    f"np.einsum('a,a->a', A((10,), '{d1}').astype('{pd}'), A((10,), '{d2}', 1).astype('{pd}'))")
N("test_einsum_optimization_modes / test_einsum_path_optimization_modes: every optimize= (True, False, 'optimal', 'auto', 'greedy', 'eager'), and einsum along einsum_path's path")
for sig, shapes in [("i->", [(3,)]), ("ii->i", [(4, 4)]), ("ij,jk", [(3, 4), (4, 3)]), ("ij,jkl,klm", [(2, 2), (2, 3, 4), (3, 4, 2)])]:
  ops = ", ".join(f"A({sh!r}, k={k})" for k, sh in enumerate(shapes))
  for opt in [True, False, "'optimal'", "'auto'", "'greedy'", "'eager'"]:
    C(f"jnp.einsum('{sig}', {ops}, optimize={opt})", f"np.einsum('{sig}', {ops})")
    C(f"jnp.einsum('{sig}', {ops}, optimize=jnp.einsum_path('{sig}', {ops}, optimize={opt})[0])", f"np.einsum('{sig}', {ops})")


def main():
  out = open("jnp32_einsum.jxr", "w")
  out.write("""# JAX's tests/lax_numpy_einsum_test.py (EinsumTest), the value cases:
# each einsum the tests compare with numpy's, over deterministic operands
# (A below: small integers, halves, complex and bool), printed as dtype,
# shape and values (a complex result as its real and imaginary parts).
# Written by jnp32_einsum_gen.py, whose numpy computation of each case is
# what this file's .out was checked against (golden_cmp within float
# tolerance).
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
def show(v):
  v = jnp.asarray(v)
  if jnp.iscomplexobj(v):
    print(v.dtype, v.shape, v.real, v.imag)
  else:
    print(v.dtype, v.shape, v)
""")
  out.write(HELPER)
  jnp32_gen.write_cases(out, CASES, np_env)
  out.close()

main()
