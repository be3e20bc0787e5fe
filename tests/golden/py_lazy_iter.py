# oracle: python
# zip, enumerate and map over generators are iterators that step their
# inputs lazily (as Python's builtins are), so endless generators work.
import itertools
def naturals():
    k = 0
    while True:
        yield k
        k += 1
for i, n in enumerate(naturals(), start=1):
    if i > 3:
        break
    print(i, n)
for a, b in zip(naturals(), 'xyz'):
    print(a, b)
sq = map(lambda v: v * v, naturals())
print(next(sq), next(sq), next(sq))
print(list(map(str, (c for c in 'ab'))))
e = enumerate(x for x in [5, 6])
print(list(e))
z = zip(naturals(), naturals())
print(next(z), next(iter(z)))
print(list(itertools.islice(enumerate(naturals()), 2)))
print(dict(enumerate(naturals() if False else iter([1, 2]))))
