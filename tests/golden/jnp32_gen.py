# jnp32_gen.py: what the jnp32_*_gen.py generators share.  Each writes a
# golden script of `show(<jnp expression>)` lines and prints, for each,
# what the script must print, computed with numpy (1.24) and cast to the
# 32-bit dtypes JAX gives without x64; `import jnp32_gen` from beside it.
import sys
import warnings

import numpy as np

NARROW = {np.dtype(np.float64): np.float32, np.dtype(np.complex128): np.complex64,
          np.dtype(np.int64): np.int32, np.dtype(np.uint64): np.uint32}


def show_np(v, split_complex=True):
  """numpy's v as the script's show(v) prints it: dtype, shape, values
  (a complex array as its real and imaginary parts when split_complex)."""
  v = np.asarray(v)
  v = v.astype(NARROW.get(v.dtype, v.dtype))
  if split_complex and v.dtype.kind == "c":
    print(v.dtype, v.shape, v.real, v.imag)
  else:
    print(v.dtype, v.shape, v)


def write_cases(out, cases, env, split_complex=True):
  """Writes each (note, jnp expression, numpy expression) case to out, a
  note alone when the jnp expression is None, and prints numpy's value
  of each ('?' and a line on stderr when numpy cannot compute it)."""
  np.seterr(all="ignore")
  warnings.simplefilter("ignore")
  for note, jx, nx in cases:
    if jx is None:
      out.write(f"# {note}\n")
      continue
    if note:
      out.write(f"# {note}\n")
    out.write(f"show({jx})\n")
    try:
      show_np(eval(nx, env), split_complex)
    except Exception as e:
      print("ORACLE FAIL", jx, nx, e, file=sys.stderr)
      print("?")
