#!/usr/bin/python3
"""numfmt_oracle.py: writes numpy's own output for many arrays, as cases
for tests/unit/check_numfmt (see tests/numfmt_oracle.sh).

Usage: numfmt_oracle.py OUTFILE [SEED]

Each case is an array (dtype, shape, raw little-endian bytes in hex) with
what numpy prints for it: str(a), and repr() of the jax.Array holding it as
JAX's ArrayImpl.__repr__ builds it (np.array2string with prefix 'Array(',
suffix ',', separator ', ', then JAX's rule for where the dtype goes).
There are also single floats run through np.format_float_positional and
np.format_float_scientific, to check the Dragon4 digits on their own.

ml_dtypes types (bfloat16, int4, ...) are not installed here; numpy prints
them with the scalar's repr and no padding, which an object array of
wrappers with that repr reproduces: "%g" of the float32 value for
bfloat16 (C++ ostream), the decimal for the small ints.

File format, one record after another:
  rules N                 numpy's rules (100, 200, 203: see numfmt.h)
  array DTYPE WEAK NDIM D0 D1 ... HEXDATA   (HEXDATA '-' when empty)
  str LEN\\n<LEN bytes>\\n
  repr LEN\\n<LEN bytes>\\n
  float DTYPE HEXBITS SCI PRECISION MIN_DIGITS TRIM SIGN PAD_LEFT PAD_RIGHT EXP_DIGITS
  out LEN\\n<LEN bytes>\\n
"""
import struct
import sys

import numpy as np

rng = None


def rules():
    v = tuple(int(x) for x in np.__version__.split('.')[:2])
    if v >= (2, 3):
        return 203
    if v >= (2, 0):
        return 200
    return 100


def jax_repr(a, weak, dtname, elem_fmt=None):
    """ArrayImpl.__repr__ of a fully addressable array."""
    prefix = 'Array('
    dtype_str = f'dtype={dtname}, weak_type=True' if weak else f'dtype={dtname}'
    line_width = np.get_printoptions()['linewidth']
    if a.size == 0:
        s = f'[], shape={a.shape}'
    else:
        s = np.array2string(a, prefix=prefix, suffix=',', separator=', ',
                            max_line_width=line_width)
    last_line_len = len(s) - s.rfind('\n') + 1
    sep = ' '
    if last_line_len + len(dtype_str) + 2 > line_width:
        sep = ' ' * len(prefix)
    return f'{prefix}{s},{sep}{dtype_str})'


class G:
    """An ml_dtypes float's scalar: repr and str are ostream's "%g"."""
    __slots__ = ('v',)

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        v = self.v
        if v != v:
            return 'nan'
        return '%g' % v

    __str__ = __repr__


class I:
    """An ml_dtypes intN scalar: its decimal."""
    __slots__ = ('v',)

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return str(self.v)

    __str__ = __repr__


def bf16_bits_to_float(bits):
    return np.frombuffer((bits.astype(np.uint32) << 16).tobytes(), np.float32)


def put_text(out, tag, text):
    b = text.encode()
    out.append(f'{tag} {len(b)}\n'.encode() + b + b'\n')


def emit_array(out, dtname, a, raw, weak, shown=None):
    """a: what numpy prints; raw: the bytes shardrepl gets."""
    shape = a.shape
    hdr = f'array {dtname} {int(weak)} {len(shape)} ' + ' '.join(
        str(d) for d in shape) + (' ' if shape else '') + (raw.hex() or '-') + '\n'
    out.append(hdr.encode())
    if a.ndim == 0:
        s = str(a[()])
    else:
        s = str(a)
    put_text(out, 'str', s)
    put_text(out, 'repr', jax_repr(a, weak, dtname))


# ---- value generators ----

def float_values(dt, n):
    kind = rng.integers(0, 12)
    finfo = np.finfo(dt)
    if kind == 0:
        v = rng.integers(-20, 20, n).astype(np.float64)
    elif kind == 1:
        v = rng.uniform(-1, 1, n)
    elif kind == 2:
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 12)
    elif kind == 3:
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 12, n)
    elif kind == 4:
        # near the thresholds of scientific notation
        base = rng.choice([1e-4, 1e8, 1e6, 1e3, 1e16, 1000.0])
        v = base * (1 + rng.integers(-3, 4, n) * float(finfo.eps))
        v *= rng.choice([1, -1], n)
    elif kind == 5:
        # random bit patterns: subnormals, huge values, NaNs
        bits = {np.float16: np.uint16, np.float32: np.uint32,
                np.float64: np.uint64}[dt]
        info = np.iinfo(bits)
        raw = rng.integers(0, int(info.max), n, dtype=bits, endpoint=True)
        return raw.view(dt)
    elif kind == 6:
        v = np.array(rng.choice([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.5,
                                 0.1, 1 / 3, 2.0 ** -20, 1e-30, 1e30], n))
    elif kind == 7:
        v = rng.integers(0, 10, n) * 0.5 + rng.integers(0, 1000, n)
    elif kind == 8:
        v = np.exp(rng.uniform(-3, 3, n))
    elif kind == 9:
        tiny = float(finfo.smallest_subnormal) if hasattr(finfo, 'smallest_subnormal') else float(finfo.tiny)
        v = rng.integers(1, 50, n) * tiny
    elif kind == 10:
        v = rng.choice([float(finfo.max), -float(finfo.max), float(finfo.tiny),
                        float(finfo.eps), 65504.0, 1e8, 99999999.0, 123456789.0], n)
    else:
        v = np.round(rng.standard_normal(n) * 100, int(rng.integers(0, 6)))
    with np.errstate(over='ignore', invalid='ignore'):
        return v.astype(dt)


def sprinkle(v):
    """Adds a few non-finite values or zeros, sometimes."""
    if v.size and rng.random() < 0.25:
        k = int(rng.integers(1, 3))
        idx = rng.integers(0, v.size, k)
        flat = v.reshape(-1)
        for i in idx:
            flat[i] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
    return v


def random_shape():
    r = rng.random()
    if r < 0.15:
        return ()
    if r < 0.93:
        nd = int(rng.integers(1, 5))
        return tuple(int(rng.integers(1 if rng.random() < 0.95 else 0, 6 if nd > 2 else 12))
                     for _ in range(nd))
    # big enough to summarise
    return [(1001,), (2000,), (40, 30), (3, 400), (11, 11, 11), (2, 3, 200),
            (7, 150), (1, 1, 1001), (2, 2, 2, 200), (5, 6, 7, 8)][int(rng.integers(0, 10))]


def gen_arrays(out, n):
    fdt = {'float16': np.float16, 'float32': np.float32, 'float64': np.float64}
    idt = {'int8': np.int8, 'int16': np.int16, 'int32': np.int32, 'int64': np.int64,
           'uint8': np.uint8, 'uint16': np.uint16, 'uint32': np.uint32, 'uint64': np.uint64}
    names = (['bool'] + list(idt) + list(fdt) + ['complex64', 'complex128',
             'bfloat16', 'int4', 'uint4', 'int2', 'uint2'])
    weights = np.array([2] + [1] * 8 + [4, 6, 5] + [3, 3] + [3, 1, 1, 1, 1], float)
    weights /= weights.sum()
    for _ in range(n):
        name = str(rng.choice(names, p=weights))
        shape = random_shape()
        size = int(np.prod(shape))
        weak = bool(rng.random() < 0.2)
        if name == 'bool':
            a = rng.random(size) < rng.random()
            a = a.reshape(shape)
            emit_array(out, name, a, a.astype(np.uint8).tobytes(), weak)
        elif name in idt:
            dt = idt[name]
            info = np.iinfo(dt)
            r = rng.random()
            if r < 0.3:
                lo, hi = -20, 20
            elif r < 0.6:
                lo, hi = -1000, 100000
            else:
                lo, hi = int(info.min), int(info.max)
            lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
            a = rng.integers(lo, hi, size, dtype=dt, endpoint=True).reshape(shape)
            emit_array(out, name, a, a.astype('<' + a.dtype.str[1:]).tobytes(), weak)
        elif name in fdt:
            dt = fdt[name]
            a = sprinkle(float_values(dt, size)).reshape(shape)
            emit_array(out, name, a, a.astype(a.dtype.newbyteorder('<')).tobytes(), weak)
        elif name in ('complex64', 'complex128'):
            dt = np.float32 if name == 'complex64' else np.float64
            re = sprinkle(float_values(dt, size))
            im = sprinkle(float_values(dt, size)) if rng.random() < 0.8 else np.zeros(size, dt)
            a = np.empty(size, name)
            a.real = re
            a.imag = im
            a = a.reshape(shape)
            emit_array(out, name, a, a.tobytes(), weak)
        elif name == 'bfloat16':
            f = sprinkle(float_values(np.float32, size))
            bits = (f.view(np.uint32) >> 16).astype(np.uint16)
            vals = bf16_bits_to_float(bits)
            a = np.empty(size, object)
            for i, v in enumerate(vals):
                a[i] = G(float(v))
            a = a.reshape(shape)
            emit_array(out, name, a, bits.tobytes(), weak)
        else:
            bits = {'int4': 4, 'uint4': 4, 'int2': 2, 'uint2': 2}[name]
            signed = name[0] == 'i'
            lo = -(1 << (bits - 1)) if signed else 0
            hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
            vals = rng.integers(lo, hi, size, endpoint=True)
            a = np.empty(size, object)
            for i, v in enumerate(vals):
                a[i] = I(int(v))
            a = a.reshape(shape)
            emit_array(out, name, a, vals.astype(np.int8).tobytes(), weak)


def gen_floats(out, n):
    fdt = [('float16', np.float16, np.uint16), ('float32', np.float32, np.uint32),
           ('float64', np.float64, np.uint64)]
    for _ in range(n):
        name, dt, ut = fdt[int(rng.integers(0, 3))]
        x = float_values(dt, 1)[0]
        sci = int(rng.integers(0, 2))
        r = rng.random()
        prec = -1 if r < 0.4 else int(rng.integers(0, 20))
        mind = -1 if rng.random() < 0.5 else int(rng.integers(0, 20))
        if prec >= 0 and mind > prec:
            mind = prec
        trim = str(rng.choice(['k', '.', '0', '-']))
        if prec < 0 and rng.random() < 0.5:
            trim = str(rng.choice(['.', '0', '-']))
        sign = int(rng.integers(0, 2))
        pl = -1 if rng.random() < 0.6 else int(rng.integers(0, 8))
        pr = -1 if rng.random() < 0.6 else int(rng.integers(0, 12))
        ed = -1 if rng.random() < 0.7 else int(rng.integers(0, 5))
        frac = True
        kw = dict(precision=None if prec < 0 else prec, unique=True, trim=trim,
                  sign=bool(sign), pad_left=None if pl < 0 else pl,
                  min_digits=None if mind < 0 else mind)
        try:
            if sci:
                s = np.format_float_scientific(x, exp_digits=None if ed < 0 else ed, **kw)
            else:
                s = np.format_float_positional(x, fractional=frac,
                                               pad_right=None if pr < 0 else pr, **kw)
        except ValueError:
            continue
        bits = int(np.array([x], dt).view(ut)[0])
        out.append(f'float {name} {bits:x} {sci} {prec} {mind} {trim} {sign} {pl} {pr} {ed}\n'.encode())
        put_text(out, 'out', s)


def main():
    global rng
    path = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 20240601
    rng = np.random.default_rng(seed)
    np.set_printoptions()  # numpy's defaults
    out = [f'rules {rules()}\n'.encode()]
    gen_arrays(out, 2500)
    gen_floats(out, 4000)
    with open(path, 'wb') as f:
        f.write(b''.join(out))


if __name__ == '__main__':
    main()
