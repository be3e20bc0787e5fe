# oracle: python
# exit: 1
# An uncaught error prints the call chain as Python's traceback does,
# outermost first: each caller `file:line:col: in FUNCTION` with its line
# and a caret (a method's frame is named as CPython 3.11 names it, a
# comprehension runs in its function's frame as in Python 3.12), then the
# located error; the script stops there.
def leaf(values, scale):
    total = 0
    for v in values:
        total += v / scale
    return total


def middle(values):
    return [leaf(values, s) for s in (2, 1, 0)]


class Model:
    def run(self, values):
        return middle(values)


print("before")
results = []
for step in range(3):
    results.append(Model().run([1, 2, 3]))
print("never printed")
