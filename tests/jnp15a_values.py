# jnp15a_values.py: what jnp15a_values.jxr prints, from numpy: finfo and
# iinfo (their str, repr and attributes) and x.at[idx].divide / .power
# (numpy: x / (ones with y multiplied in at idx), np.multiply.at).
import numpy as np

for d in (np.float32, np.float16, np.float64):
    f = np.finfo(d)
    print(repr(f))
    print(f.bits, f.eps, f.epsneg, f.max, f.min, f.tiny, f.smallest_normal, f.smallest_subnormal, f.resolution,
          f.precision, f.nmant, f.nexp, f.iexp, f.minexp, f.maxexp, f.machep, f.negep, f.dtype)
print(np.finfo(np.float32))
print(np.finfo(np.float16))
print(np.finfo(np.float64))
print(np.finfo(np.complex64).dtype, np.finfo('float16').eps, np.finfo(float).bits)
for d in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.int64):
    i = np.iinfo(d)
    print(repr(i), i.bits, i.min, i.max, i.dtype, i.kind)
print(np.iinfo(np.uint8))
print(np.iinfo(int).bits)
try:
    np.finfo(np.int32)
except ValueError as e:
    print(e)
try:
    np.finfo(np.ones(2))
except ValueError as e:
    print(e)
try:
    np.iinfo(np.float32)
except ValueError as e:
    print(e)
try:
    np.iinfo(bool)
except ValueError as e:
    print(e)

def at_mul(x, idx, y):
    m = np.ones_like(x)
    np.multiply.at(m, idx, y)
    return m
x = np.arange(1., 7., dtype=np.float32)
for idx, y in ((1, 2.), ([0, 0, 5], 2.), (slice(2, None), 3.), ([4, 1], np.array([0.5, 4.], np.float32))):
    print([float(v) for v in x / at_mul(x, idx, y)], [float(v) for v in x ** at_mul(x, idx, y)])
# einsum over five and seven operands (the branch searches' paths)
for spec, sd in (('ca,dfe,ad,df,fd->ce', {'a': 4, 'c': 3, 'd': 2, 'e': 4, 'f': 2}),
                 ('acd,cf,eda,bde,ce,adf,ed->b', {'a': 4, 'b': 5, 'c': 2, 'd': 5, 'e': 2, 'f': 4})):
    terms = spec.split('->')[0].split(',')
    ops = [(np.arange(int(np.prod([sd[c] for c in t]))) % 3 - 1).astype(np.float32).reshape([sd[c] for c in t]) for t in terms]
    print([int(v) for v in np.ravel(np.einsum(spec, *ops))])
# linalg.norm and vector_norm (ord=-1 over a zero divides by zero)
np.seterr(all="ignore")
L = np.linalg
x = np.array([[1., -2., 3.], [-4., 5., 0.5]], np.float32)
v = np.array([3., -4., 0., 1.], np.float32)
def f(a):
    return [round(float(t), 4) for t in np.ravel(a)]
for o in (None, 1, np.inf, -np.inf, 0, 3, -1, 2, 0.5):
    print(o, f(L.norm(v, o)))
for o in (None, 'fro', 1, -1, np.inf, -np.inf):
    print(o, f(L.norm(x, o)), f(L.norm(x, o, axis=(1, 0))), f(L.norm(x, o, keepdims=True)))
print(f(L.norm(x, axis=1)), f(L.norm(x, 1, axis=0)), f(L.norm(x, 3, axis=-1, keepdims=True)), f(L.norm(np.arange(4))))
print(f(L.norm(x.ravel())), f(L.norm(x, ord=1, axis=1)))
t = np.arange(24.).reshape(2, 3, 4)
print(f(L.norm(t)), f(L.norm(t, axis=(0, 2))), f(L.norm(t, 1, axis=(2, 1))), f(L.norm(t, -np.inf, axis=(0, 1), keepdims=True)))
# repeat with an array of repeats
x = np.arange(1., 5., dtype=np.float32)
m = np.arange(6).reshape(2, 3)
for a, r, ax in ((x, [1, 0, 2, 1], None), (m, [2, 1], 0), (m, [0, 1, 3], 1), (m, [1, 2, 0, 1, 1, 1], None),
                 (m, [2], 1), (x, [0, 0, 0, 0], None)):
    print(np.repeat(a, np.array(r), axis=ax).tolist())
