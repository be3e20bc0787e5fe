# oracle: python
# Python built-ins that were missing: bin, oct, hex (sign before the
# prefix), ascii (repr with \\x, \\u, \\U escapes), id, and filter (an
# iterator: lazy over an endless generator).
print(bin(5), bin(-5), bin(0), oct(8), hex(255), hex(-16), bin(True))
print(ascii('héllo'), ascii(['ü', 'ok']), ascii('日本'))
print(list(filter(lambda v: v % 2, range(7))), list(filter(None, [0, 1, '', 'a', [], [2]])))
def nat():
    k = 0
    while True:
        yield k
        k += 1
evens = filter(lambda v: v % 2 == 0, nat())
print(next(evens), next(evens), next(evens))
print(id(evens) == id(evens), type(id(3)).__name__)
try:
    bin(1.5)
except TypeError as e:
    print(e)
