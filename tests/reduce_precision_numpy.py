"""reduce_precision_numpy.py: checks tests/golden/reduce_precision.out, what
lax.reduce_precision gives on float32 and float64, against an independent
computation: float64 arithmetic in numpy, not the bit manipulation of
lib/exec/kern_ew.c.  The mantissa rounds as round(x / 2**(e - m)) * 2**(e - m),
half to even (e the exponent of x, or the source format's least normal
exponent for a denormal); then a value past the target format's largest
exponent is an infinity and one below its least normal exponent a signed
zero.

usage: reduce_precision_numpy.py PATH/TO/reduce_precision.out
"""
import math
import re
import sys

import numpy as np

def rp(x, eb, mb, src):  # src: (eb, mb) of the source format
    x = float(x)
    if math.isnan(x) or math.isinf(x) or x == 0: return x
    seb, smb = src
    if mb < smb:
        emin_src = 2 - 2**(seb - 1)
        e = max(math.frexp(abs(x))[1] - 1, emin_src)
        q = 2.0**(e - mb)
        x = float(np.round(np.float64(x) / q) * q)
    if eb < seb:
        emax = 2**(eb - 1) - 1
        if x != 0 and abs(x) >= 2.0**(emax + 1): return math.copysign(math.inf, x)
        if abs(x) < 2.0**(1 - emax): return math.copysign(0.0, x)
    return x
# the inputs of tests/golden/reduce_precision.jxr
xs = [1.0, 1.00048828125, 1.0009765625, 1.00146484375, 3.14159265358979, 65519.0, 65520.0, 1e-5,
      6.2e-5, -0.1, 1 / 3, float('inf'), -float('inf'), float('nan'), 0.0, -0.0, 1e30, 2.0**-14, 2.0**-15,
      -2.0**-127]
x32 = [float(v) for v in np.array(xs, dtype=np.float32)]
x64 = xs + [1e300, -1e-310, 2.0**-1022, 1.0 + 2.0**-40]
out = open(sys.argv[1]).read().splitlines()
rows = [l for l in out if re.match(r'^\d+ \d+ \[', l)]
want = [(x32, (8, 23), e, m) for e, m in [(5, 10), (8, 7), (4, 3), (8, 23), (11, 52)]] + \
       [(x64, (11, 52), e, m) for e, m in [(5, 10), (8, 7), (8, 23), (11, 4), (11, 52), (10, 30)]]
if len(rows) != len(want):
    sys.exit('reduce_precision_numpy: %d rows in the output, %d expected' % (len(rows), len(want)))
bad = 0
for row, (x, src, e, m) in zip(rows, want):
    e2, m2, vals = row.split(' ', 2)
    assert (int(e2), int(m2)) == (e, m)
    got = eval(vals, {'inf': math.inf, 'nan': math.nan})
    got = [float(v) for v in got]
    exp = [rp(v, e, m, src) for v in x]
    if src == (8, 23):  # a float32 result: as float32 again
        exp = [float(np.float32(v)) for v in exp]
    for g, w, v in zip(got, exp, x):
        same = (math.isnan(g) and math.isnan(w)) or (g == w and math.copysign(1, g) == math.copysign(1, w))
        if not same:
            bad += 1
            print('MISMATCH', e, m, v, 'got', g, 'want', w)
print('reduce_precision_numpy: %d values checked, %d mismatches' % (sum(len(w[0]) for w in want), bad))
sys.exit(1 if bad else 0)
