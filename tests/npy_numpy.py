#!/usr/bin/python3
"""npy_numpy.py: both numpy sides of the .npy/.npz cross-check.

  npy_numpy.py write DIR    numpy writes .npy and .npz files into DIR, with
                            DIR/manifest listing what each holds
  npy_numpy.py verify DIR   numpy reads the out_* copies shardrepl wrote
                            (check_npy with NPY_XCHECK=DIR) and compares

The files cover every dtype shardrepl maps to numpy, ranks 0 to 4, empty
arrays, Fortran order, big-endian data, format 2.0, ml_dtypes' bfloat16
descr '<V2', np.savez and np.savez_compressed.  A written .npy must match
np.save's bytes exactly; a written .npz must load back equal.

Manifest lines (arrays in shardrepl's terms: C order, little-endian, hex):
  npy FILE DTYPE NDIM D0 .. HEX
  npz FILE COUNT   then COUNT lines   entry NAME DTYPE NDIM D0 .. HEX
"""
import io
import os
import sys

import numpy as np

NAMES = {'b1': 'bool', 'i1': 'int8', 'i2': 'int16', 'i4': 'int32', 'i8': 'int64',
         'u1': 'uint8', 'u2': 'uint16', 'u4': 'uint32', 'u8': 'uint64',
         'f2': 'float16', 'f4': 'float32', 'f8': 'float64', 'c8': 'complex64',
         'c16': 'complex128', 'V2': 'bfloat16'}


def canon(a):
    """The bytes shardrepl holds for a: C order, little-endian."""
    a = np.array(a, order='C')  # (ascontiguousarray would make 0-d 1-d)
    if a.dtype.byteorder == '>':
        a = a.astype(a.dtype.newbyteorder('<'))
    return a


def describe(a):
    c = canon(a)
    name = NAMES[c.dtype.str[1:]]
    dims = ' '.join(str(d) for d in c.shape)
    return f'{name} {c.ndim} {dims}{" " if c.ndim else ""}{c.tobytes().hex() or "-"}'


def arrays(rng):
    out = []
    shapes = [(), (1,), (7,), (2, 3), (3, 1, 4), (2, 3, 2, 2), (0,), (2, 0), (0, 3, 1)]
    for code in ['b1', 'i1', 'i2', 'i4', 'i8', 'u1', 'u2', 'u4', 'u8', 'f2', 'f4', 'f8',
                 'c8', 'c16']:
        for shape in shapes:
            n = int(np.prod(shape))
            if code == 'b1':
                a = rng.random(n) < 0.5
            elif code[0] in 'iu':
                info = np.iinfo(code)
                a = rng.integers(int(info.min), int(info.max), n, dtype=code, endpoint=True)
            elif code[0] == 'f':
                a = (rng.standard_normal(n) * 1000).astype(code)
            else:
                a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(code)
            out.append((f'{code}_{"x".join(map(str, shape)) or "scalar"}', a.reshape(shape)))
    return out


def raw_npy(descr, shape, data, fortran=False):
    """A .npy made by hand, for descrs numpy's writer would not produce."""
    d = {'descr': descr, 'fortran_order': fortran, 'shape': shape}
    buf = io.BytesIO()
    np.lib.format._write_array_header(buf, d, (1, 0))
    return buf.getvalue() + data


def write(dirname):
    rng = np.random.default_rng(7)
    man = []
    for name, a in arrays(rng):
        fn = f'{name}.npy'
        np.save(os.path.join(dirname, fn), a)
        man.append(f'npy {fn} {describe(a)}')
    # Fortran order, big-endian, format 2.0
    f = np.asfortranarray(rng.standard_normal((3, 4, 2)).astype('f4'))
    np.save(os.path.join(dirname, 'fortran.npy'), f)
    man.append(f'npy fortran.npy {describe(f)}')
    fi = np.asfortranarray(rng.integers(0, 100, (5, 3)).astype('<i8'))
    np.save(os.path.join(dirname, 'fortran_i8.npy'), fi)
    man.append(f'npy fortran_i8.npy {describe(fi)}')
    for code in ['>f4', '>i8', '>c16', '>u2', '>f2']:
        b = (rng.standard_normal((2, 3)) * 100).astype(code) if code[1] in 'fc' else \
            rng.integers(0, 1000, (2, 3)).astype(code)
        fn = f'be_{code[1:]}.npy'
        np.save(os.path.join(dirname, fn), b)
        man.append(f'npy {fn} {describe(b)}')
    v2 = rng.standard_normal((4, 5)).astype('f8')
    with open(os.path.join(dirname, 'v2.npy'), 'wb') as fh:
        np.lib.format.write_array(fh, v2, version=(2, 0))
    man.append(f'npy v2.npy {describe(v2)}')
    # bfloat16 as ml_dtypes saves it: '<V2' holding the 16 bits
    bits = (rng.standard_normal(6).astype('f4').view('u4') >> 16).astype('<u2').reshape(2, 3)
    with open(os.path.join(dirname, 'bf16.npy'), 'wb') as fh:
        fh.write(raw_npy('<V2', (2, 3), bits.tobytes()))
    man.append(f'npy bf16.npy bfloat16 2 2 3 {bits.tobytes().hex()}')
    # .npz, stored and deflated
    members = {'x': rng.standard_normal((3, 3)).astype('f4'),
               'counts': np.arange(10, dtype='i8'),
               'flags': np.array([True, False, True]),
               'z': np.zeros((0, 2), 'c8'),
               's': np.float64(2.5) * np.ones(())}
    for fn, save in [('plain.npz', np.savez), ('packed.npz', np.savez_compressed)]:
        save(os.path.join(dirname, fn), **members)
        man.append(f'npz {fn} {len(members)}')
        for k, v in members.items():
            man.append(f'entry {k} {describe(v)}')
    big = {'big': rng.standard_normal(200000).astype('f4'), 'ones': np.ones((300, 300), 'i2')}
    np.savez_compressed(os.path.join(dirname, 'big.npz'), **big)
    man.append(f'npz big.npz {len(big)}')
    for k, v in big.items():
        man.append(f'entry {k} {describe(v)}')
    with open(os.path.join(dirname, 'manifest'), 'w') as fh:
        fh.write('\n'.join(man) + '\n')


def parse_array(words):
    name, nd = words[0], int(words[1])
    shape = tuple(int(w) for w in words[2:2 + nd])
    hexdata = words[2 + nd]
    raw = bytes.fromhex('' if hexdata == '-' else hexdata)
    code = {v: k for k, v in NAMES.items()}[name]
    dt = np.dtype('<V2' if code == 'V2' else '<' + code if code not in ('b1', 'i1', 'u1') else code)
    return np.frombuffer(raw, dt).reshape(shape), code


def verify(dirname):
    bad = 0
    checked = 0
    with open(os.path.join(dirname, 'manifest')) as fh:
        lines = fh.read().split('\n')
    i = 0
    while i < len(lines):
        w = lines[i].split()
        i += 1
        if not w:
            continue
        out = os.path.join(dirname, 'out_' + w[1])
        if w[0] == 'npy':
            want, code = parse_array(w[2:])
            got = np.load(out)
            if got.shape != want.shape or got.dtype.str[1:] != want.dtype.str[1:] or \
                    canon(got).tobytes() != want.tobytes():
                print(f'{w[1]}: numpy reads back {got.dtype} {got.shape}, not {want.dtype} {want.shape}')
                bad += 1
            if code != 'V2':
                ref = io.BytesIO()
                np.save(ref, np.array(want, order='C'))
                if ref.getvalue() != open(out, 'rb').read():
                    print(f'{w[1]}: bytes differ from np.save')
                    bad += 1
            checked += 1
        elif w[0] == 'npz':
            n = int(w[2])
            want = {}
            for _ in range(n):
                e = lines[i].split()
                i += 1
                want[e[1]] = parse_array(e[2:])[0]
            with np.load(out) as z:
                if sorted(z.files) != sorted(want):
                    print(f'{w[1]}: members {z.files}, want {list(want)}')
                    bad += 1
                for k, v in want.items():
                    g = z[k]
                    if g.shape != v.shape or g.dtype != v.dtype or g.tobytes() != v.tobytes():
                        print(f'{w[1]}: member {k} differs')
                        bad += 1
            checked += 1
    print(f'npy_numpy.py: numpy checked {checked} files shardrepl wrote, {bad} problems')
    return bad == 0


if __name__ == '__main__':
    if sys.argv[1] == 'write':
        write(sys.argv[2])
    else:
        sys.exit(0 if verify(sys.argv[2]) else 1)
