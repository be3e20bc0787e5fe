# jax_visualize.py: the oracle for jax.debug.visualize_sharding's pictures.
# JAX's layout (jax/_src/debugging.py's visualize_sharding, Aug 2026 main,
# rebuilt below in this project's words from what it does) run with
# Debian's rich and matplotlib, on a stand-in for a NamedSharding over a
# CPU mesh whose devices are numbered in row-major order, as
# jax.make_mesh gives on CPU.
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
import os
import sys

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


# ---- JAX's picture, rebuilt from what jax/_src/debugging.py's
# visualize_sharding does (Aug 2026 main): each device's block is a cell of
# a rich Table, sized from the block's share of the array, labelled with
# the platform and the ids holding it, coloured from matplotlib's tab20b
# in a stride that alternates far-apart colours ----

def block_index(size, part):
  """Which block along a dimension a device's slice is (0 when whole)."""
  if part.start is None and part.stop is None:
    return 0
  return part.start // (part.stop - part.start)


def color_sequence(cmap, count):
  """count colours of cmap, visiting evenly spaced points in a stride of
  about half of them (one more when count is even)."""
  points = np.linspace(0, 1, count)
  k = 0
  for _ in range(count):
    yield cmap(points[k])
    k = (k + count // 2 + (count % 2 == 0)) % count


def hex_color(rgb):
  return '#' + ''.join('%02X' % int(c * 255) for c in rgb)


def ink_on(bg):
  r, g, b = (int(bg[i:i + 2], 16) for i in (1, 3, 5))
  return '#000000' if r * 0.299 + g * 0.587 + b * 0.114 > 186 else '#ffffff'


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9, max_width=80, color_map=None):
  import rich.align, rich.box, rich.padding, rich.style, rich.table
  if not 1 <= len(shape) <= 2:
    raise ValueError('only 1-D and 2-D shapes')
  console = rich.console.Console(width=max_width)
  use_color = use_color and console.color_system is not None
  if use_color and not color_map:
    import matplotlib
    color_map = matplotlib.colormaps['tab20b']
  unit_h = int(10 * scale)
  unit_w = int(unit_h * ((shape[1] if len(shape) == 2 else 1) / shape[0]))
  label = next(iter(sharding.device_set)).platform.upper()
  holders, frac_h, frac_w = {}, {}, {}
  for dev, parts in sharding.devices_indices_map(tuple(shape)).items():
    parts = tuple(slice(p, p + 1) if isinstance(p, int) else p for p in parts)
    where = tuple(block_index(n, p) for n, p in zip(shape, parts))
    extent = [(p.stop - p.start) if p.stop is not None else n for n, p in zip(shape, parts)]
    if len(parts) == 1:
      where = (0,) + where
      frac_h[where], frac_w[where] = None, extent[0] / shape[0]
    else:
      frac_h[where], frac_w[where] = extent[0] / shape[0], extent[1] / shape[1]
    holders.setdefault(where, set()).add(dev.id)
  rows = max(w[0] for w in holders) + 1
  cols = max(w[1] for w in holders) + 1
  colors = color_sequence(color_map, rows * cols)
  table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0, highlight=not use_color,
                           pad_edge=False, box=None if use_color else rich.box.SQUARE)
  for i in range(rows):
    cells = []
    for j in range(cols):
      text = label + ' ' + ','.join(str(d) for d in sorted(holders[i, j]))
      width = min(max(int(frac_w[i, j] * unit_w * 2.5), min_width), max_width)
      height = 1 if frac_h[i, j] is None else int(frac_h[i, j] * unit_h)
      left, extra = divmod(width - len(text) - 2, 2)
      right = left + extra
      top, extra = divmod(height - 2, 2)
      bottom = top + extra
      bg = ink = None
      if use_color:
        bg = hex_color(next(colors)[:3])
        ink = ink_on(bg)
        top, right, bottom, left = top + 1, right + 1, bottom + 1, left + 1
      cells.append(rich.padding.Padding(rich.align.Align(text, 'center', vertical='middle'),
                                        (max(top, 0), max(right, 0), max(bottom, 0), max(left, 0)),
                                        style=rich.style.Style(bgcolor=bg, color=ink)))
    table.add_row(*cells)
  console.print(table, end='\n\n')
# ---- end of the picture ----

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
