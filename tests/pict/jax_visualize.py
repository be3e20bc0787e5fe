# jax_visualize.py: the oracle for jax.debug.visualize_sharding's pictures.
# JAX's own code (jax/_src/debugging.py, Aug 2026 main: _slice_to_chunk_idx
# down to visualize_sharding, copied verbatim below) run with Debian's rich
# and matplotlib, on a stand-in for a NamedSharding over a CPU mesh whose
# devices are numbered in row-major order, as jax.make_mesh gives on CPU.
#
#   python3 jax_visualize.py MODE < CASES
#   python3 jax_visualize.py all DIR < CASES
# MODE: pipe (no terminal), term (FORCE_COLOR; TERM and COLORTERM choose
# the colour system, as rich reads them) or jupyter (rich's notebook
# output: the display_data bundle, text/plain then text/html, each
# followed by a line "--"), stmts (the cases as shardrepl statements), or
# all: each of pipe, 16, 256, 24bit (the colour systems) and jupyter into
# its file in DIR.  Each line of CASES is a Python dict:
#   {'shape': (8, 8), 'mesh': (4, 2), 'names': ('X', 'Y'),
#    'spec': ('X', None), 'kw': {'use_color': False}}
import ast
import importlib.util
import itertools
import os
import sys
from typing import Callable, Sequence, Union

import numpy as np

import rich.console
import rich.jupyter

MODE = sys.argv[1]
_is_jupyter = rich.console._is_jupyter
def _display(segments, text):
  html = rich.jupyter._render_segments(segments)
  sys.stdout.write(text + '--\n' + html + '--\n')
rich.jupyter.display = _display


def set_mode(mode, term='', colorterm=''):
  """The environment rich reads when JAX's visualize_sharding makes its
  Console: no terminal, a terminal, or a notebook."""
  os.environ.pop('FORCE_COLOR', None)
  os.environ.pop('NO_COLOR', None)
  os.environ['TERM'], os.environ['COLORTERM'] = term, colorterm
  if mode == 'term':
    os.environ['FORCE_COLOR'] = '1'
  rich.console._is_jupyter = (lambda: True) if mode == 'jupyter' else _is_jupyter


Sharding = object

# ---- from jax/_src/debugging.py ----
def _slice_to_chunk_idx(size: int, slc: slice) -> int:
  if slc.stop == slc.start == None:
    return 0
  slice_size = slc.stop - slc.start
  assert slc.start % slice_size == 0
  assert size % slice_size == 0
  return slc.start // slice_size

def _raise_to_slice(slc: slice | int):
  if isinstance(slc, int):
    return slice(slc, slc + 1)
  return slc

Color = Union[tuple[float, float, float], str]
ColorMap = Callable[[float], tuple[float, float, float, float]]

def _canonicalize_color(color: Color) -> str:
  if isinstance(color, str):
    return color
  r, g, b = (int(a * 255) for a in color)
  return f"#{r:02X}{g:02X}{b:02X}"

def _get_text_color(color: str) -> str:
  r, g, b = map(lambda x: int(x, 16), (color[1:3], color[3:5], color[5:7]))
  if (r * 0.299 + g * 0.587 + b * 0.114) > 186:
    return "#000000"
  return "#ffffff"

def make_color_iter(color_map, num_rows, num_cols):
  num_colors = num_rows * num_cols
  color_values = np.linspace(0, 1, num_colors)
  idx = 0
  for _ in range(num_colors):
    yield color_map(color_values[idx])
    idx = (idx + num_colors // 2 + bool(num_colors % 2 == 0)) % num_colors

def visualize_sharding(shape: Sequence[int], sharding: Sharding, *,
                       use_color: bool = True, scale: float = 1.,
                       min_width: int = 9, max_width: int = 80,
                       color_map: ColorMap | None = None):
  """Visualizes a ``Sharding`` using ``rich``."""
  if not importlib.util.find_spec("rich"):
    raise ValueError("`visualize_sharding` requires `rich` to be installed.")

  # These imports are local so that they don't affect JAX import times.
  import rich.align  # pyrefly: ignore[missing-import]
  import rich.console  # pyrefly: ignore[missing-import]
  import rich.box  # pyrefly: ignore[missing-import]
  import rich.padding  # pyrefly: ignore[missing-import]
  import rich.style  # pyrefly: ignore[missing-import]
  import rich.table  # pyrefly: ignore[missing-import]

  if len(shape) > 2 or len(shape) < 1:
    raise ValueError(
        "`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
  console = rich.console.Console(width=max_width)
  use_color = use_color and console.color_system is not None
  if use_color and not color_map:
    try:
      import matplotlib as mpl  # pyrefly: ignore[missing-import]
      color_map = mpl.colormaps["tab20b"]
    except ModuleNotFoundError:
      use_color = False

  base_height = int(10 * scale)
  aspect_ratio = (shape[1] if len(shape) == 2 else 1) / shape[0]
  base_width = int(base_height * aspect_ratio)
  height_to_width_ratio = 2.5

  # Grab the device kind from the first device
  device_kind = next(iter(sharding.device_set)).platform.upper()

  device_indices_map = sharding.devices_indices_map(tuple(shape))
  slices: dict[tuple[int, ...], set[int]] = {}
  heights: dict[tuple[int, ...], float | None] = {}
  widths: dict[tuple[int, ...], float] = {}

  for i, (dev, slcs) in enumerate(device_indices_map.items()):
    assert slcs is not None
    slcs = tuple(map(_raise_to_slice, slcs))
    chunk_idxs = tuple(map(_slice_to_chunk_idx, shape, slcs))
    if slcs is None:
      raise NotImplementedError
    if len(slcs) == 2:
      vert, horiz = slcs
      vert_size  = ((vert.stop  - vert.start ) if vert.stop  is not None
                    else shape[0])
      horiz_size = ((horiz.stop - horiz.start) if horiz.stop is not None
                    else shape[1])
      chunk_height = vert_size / shape[0]
      chunk_width = horiz_size / shape[1]
      heights[chunk_idxs] = chunk_height
      widths[chunk_idxs] = chunk_width
    else:
      # In the 1D case, we set the height to 1.
      horiz, = slcs
      vert = slice(0, 1, None)
      horiz_size = (
          (horiz.stop - horiz.start) if horiz.stop is not None else shape[0])
      chunk_idxs = (0, *chunk_idxs)
      heights[chunk_idxs] = None
      widths[chunk_idxs]  = horiz_size / shape[0]
    slices.setdefault(chunk_idxs, set()).add(dev.id)
  num_rows = max(a[0] for a in slices.keys()) + 1
  if len(list(slices.keys())[0]) == 1:
    num_cols = 1
  else:
    num_cols = max(a[1] for a in slices.keys()) + 1

  color_iter = make_color_iter(color_map, num_rows, num_cols)
  table = rich.table.Table(show_header=False, show_lines=not use_color,
                           padding=0,
                           highlight=not use_color, pad_edge=False,
                           box=rich.box.SQUARE if not use_color else None)
  for i in range(num_rows):
    col = []
    for j in range(num_cols):
      entry = f"{device_kind} "+",".join([str(s) for s in sorted(slices[i, j])])
      width, maybe_height = widths[i, j], heights[i, j]
      width = int(width * base_width * height_to_width_ratio)
      if maybe_height is None:
        height = 1
      else:
        height = int(maybe_height * base_height)
      width = min(max(width, min_width), max_width)
      left_padding, remainder = divmod(width - len(entry) - 2, 2)
      right_padding = left_padding + remainder
      top_padding, remainder = divmod(height - 2, 2)
      bottom_padding = top_padding + remainder
      if use_color:
        color = _canonicalize_color(next(color_iter)[:3])
        text_color = _get_text_color(color)
        top_padding += 1
        bottom_padding += 1
        left_padding += 1
        right_padding += 1
      else:
        color = None
        text_color = None
      padding = (
          max(top_padding, 0),
          max(right_padding, 0),
          max(bottom_padding, 0),
          max(left_padding, 0),
      )
      col.append(
          rich.padding.Padding(
            rich.align.Align(entry, "center", vertical="middle"), padding,
            style=rich.style.Style(bgcolor=color,
              color=text_color)))
    table.add_row(*col)
  console.print(table, end='\n\n')
# ---- end of jax/_src/debugging.py ----

class _Device:
  platform = 'cpu'
  def __init__(self, i): self.id = i

class _NamedSharding:
  def __init__(self, mesh, names, spec):
    self.mesh, self.names, self.spec = mesh, names, spec
    self.device_set = {_Device(i) for i in range(int(np.prod(mesh)))}
  def devices_indices_map(self, shape):
    out = {}
    for i in range(int(np.prod(self.mesh))):
      coord = dict(zip(self.names, np.unravel_index(i, self.mesh)))
      slcs = []
      for d, size in enumerate(shape):
        p = self.spec[d] if d < len(self.spec) else None
        axes = () if p is None else (p,) if isinstance(p, str) else p
        n, k = 1, 0
        for a in axes:
          s = self.mesh[self.names.index(a)]
          k, n = k * s + int(coord[a]), n * s
        if n == 1:
          slcs.append(slice(None))
        else:
          slcs.append(slice(k * size // n, (k + 1) * size // n))
      out[_Device(i)] = tuple(slcs)
    return out

CASES = []
for line in sys.stdin:
  line = line.strip()
  if line and not line.startswith('#'):
    CASES.append(ast.literal_eval(line))


def draw_all():
  for c in CASES:
    visualize_sharding(c['shape'], _NamedSharding(c['mesh'], c['names'], c['spec']), **c.get('kw', {}))


if MODE == 'stmts':  # the cases as shardrepl statements
  for c in CASES:
    kw = ''.join(f', {k}={v!r}' for k, v in c.get('kw', {}).items())
    print(f"jax.debug.visualize_array_sharding(jax.device_put(jnp.zeros({c['shape']!r}), "
          f"jax.NamedSharding(jax.make_mesh({c['mesh']!r}, {c['names']!r}), jax.P(*{c['spec']!r}))){kw})")
elif MODE == 'all':  # each setting into its file in the folder argv[2]
  for name, mode, term, colorterm in [('pipe', 'pipe', 'xterm', ''), ('16', 'term', 'xterm', ''),
                                      ('256', 'term', 'xterm-256color', ''),
                                      ('24bit', 'term', 'xterm-256color', 'truecolor'),
                                      ('jupyter', 'jupyter', '', '')]:
    # each in a child of its own: rich caches a style's codes for the
    # first colour system it renders in
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
      set_mode(mode, term, colorterm)
      with open(os.path.join(sys.argv[2], name), 'w') as f:
        sys.stdout = f
        draw_all()
        f.flush()
      os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status:
      sys.exit(1)
else:
  set_mode(MODE, os.environ.get('TERM', ''), os.environ.get('COLORTERM', ''))
  draw_all()
