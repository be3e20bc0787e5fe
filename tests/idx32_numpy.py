# idx32_numpy.py: numpy's twin of tests/golden/idx32_tables.jxr -- runs the
# same tables with numpy's indexing and prints the lines the golden prints.
import sys, re
import numpy as np
src = open(sys.argv[1]).read()
pre = src[:src.index("def arange(" if "def arange(" in src else "OPS = [")]
pre = re.sub(r"^import jax.*$|^from jax.*$", "", pre, flags=re.M)
g = {}
exec(pre, g)
from math import prod
UFN = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
       "power": np.power, "min": np.minimum, "max": np.maximum}
def show_update(tables):
  for name, specs in tables:
    for k, (shape, idx, out_shape) in enumerate(specs):
      x0 = np.arange(prod(shape), dtype=np.float32).reshape(shape) + np.float32(1)
      full = (np.arange(prod(out_shape), dtype=np.float32) % 3 + 1).reshape(out_shape)
      for op in ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"]:
        for y in [full, np.float32(2)]:
          x = np.array(x0)
          if op == "set":
            x[idx] = y
          else:
            UFN[op].at(x, idx, y)
          print(name, k, op, np.ndim(y), x.dtype, True, x.tolist())
if "update" in sys.argv[1]:
  for t in ["STATIC_INDEXING_TESTS", "ADVANCED_INDEXING_TESTS_NO_REPEATS",
            "ADVANCED_INDEXING_TESTS_NO_REPEATS_SORTED", "MIXED_ADVANCED_INDEXING_TESTS_NO_REPEATS"]:
    print(t)
    show_update(g[t])
  sys.exit(0)
def show(tables):
  for name, specs in tables:
    for k, (shape, idx, out_shape) in enumerate(specs):
      y = np.arange(prod(shape), dtype=np.int32).reshape(shape)[idx]
      print(name, k, shape, y.shape, y.shape == out_shape or out_shape is None, True, y.tolist())
for t in ["STATIC_INDEXING_TESTS", "ADVANCED_INDEXING_TESTS", "ADVANCED_INDEXING_TESTS_NO_REPEATS",
          "ADVANCED_INDEXING_TESTS_NO_REPEATS_SORTED", "MIXED_ADVANCED_INDEXING_TESTS"]:
  print(t)
  show(g[t])
for dt in [np.float32, np.float16, np.int8, np.uint8, np.uint32, np.bool_]:
  x = np.arange(60).reshape(3, 4, 5) % 2 == 0 if dt == np.bool_ else np.arange(60, dtype=dt).reshape(3, 4, 5)
  print(x[1, None, :, None].dtype, x[np.array([0, 2]), 1:3, np.array([-1, 2])].dtype, x[..., 2, 3].tolist())
