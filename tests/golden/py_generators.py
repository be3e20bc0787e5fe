# oracle: python
# exit: 1
# Generators (CPython's data model, "Generator functions" and PEP 342/380):
# a def whose body yields returns a generator; next(), send(), throw(),
# close(), StopIteration carrying the return value, yield from (with the
# inner return value), endless generators stepped lazily by for loops,
# zip and itertools.islice, finally blocks run by close() and when the
# last reference goes, generator methods (__iter__ as a generator), a
# class iterator with __next__ walked lazily, a data stream as JAX's
# examples/mnist_classifier.py writes one, and an exception raised in a
# generator's body leaving through the loop that drove it.
def count(n):
    i = 0
    while i < n:
        yield i
        i += 1
    return 'done'
print(list(count(4)))
for x in count(3):
    print('item', x)
g = count(2)
print(next(g), next(g))
try:
    next(g)
except StopIteration as e:
    print('stop', e)
def naturals():
    k = 0
    while True:
        yield k
        k += 1
for n in naturals():
    if n > 4:
        break
    print(n, end=' ')
print()
def echo():
    got = None
    while True:
        got = yield got
        if got == 'q':
            return
e = echo()
print(next(e), e.send(1), e.send('x'))
def fin():
    try:
        yield 1
        yield 2
    finally:
        print('cleanup')
f = fin()
print(next(f))
f.close()
print('closed')
def outer():
    r = yield from count(3)
    print('inner returned', r)
    yield from [10, 20]
print(list(outer()))
print(sum(x * x for x in count(5)), max(count(4)), sorted(count(3), reverse=True))
def batches(data, size):
    for i in range(0, len(data), size):
        yield data[i:i + size]
print([b for b in batches(list(range(7)), 3)])
import itertools
print(list(itertools.islice(naturals(), 5)))
def bad():
    yield 1
    raise ValueError('inside')
try:
    for v in bad():
        print('got', v)
except ValueError as err:
    print('caught', err)
print(type(count(1)).__name__)
def thrower():
    try:
        yield 1
    except KeyError:
        yield 'recovered'
t = thrower()
next(t)
print(t.throw(KeyError))
z = fin()
next(z)
del z
print('after del')
print(dict(zip('abc', count(10))))
class Tree:
    def __init__(self, v, kids=()):
        self.v = v; self.kids = kids
    def __iter__(self):
        yield self.v
        for k in self.kids:
            yield from k
t = Tree(1, (Tree(2, (Tree(3),)), Tree(4)))
print(list(t), [v * 2 for v in t])
class Countdown:
    def __init__(self, n): self.n = n
    def __iter__(self): return self
    def __next__(self):
        if self.n <= 0: raise StopIteration
        self.n -= 1
        return self.n
print(list(Countdown(3)))
for i, c in zip(range(2), Countdown(10**9)):
    print(i, c)
def data_stream(rng, n, bs):
    while True:
        perm = rng.permutation(n)
        for i in range(n // bs):
            yield perm[i * bs:(i + 1) * bs]
import numpy as np
batches = data_stream(np.random.RandomState(0), 10, 4)
for step in range(3):
    print(step, next(batches))
def deep(n):
    if n == 0:
        yield 'bottom'
    else:
        yield from deep(n - 1)
print(list(deep(50)))
def gen_err():
    yield 1
    1 / 0
def use():
    for x in gen_err():
        pass
use()
