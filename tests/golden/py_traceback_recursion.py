# args: -k
# exit: 1
# A recursion's traceback, cut as CPython cuts one: after three frames
# alike the rest of the run is "[Previous line repeated N more times]"
# (CPython's words; the count is this interpreter's, whose recursion
# limit is lower than CPython's 1000); a chain of frames unlike each other
# (two functions calling each other) shows its first 20 and its last 20.
def down(n):
    if n == 0:
        raise ValueError("bottom")
    return down(n - 1)


def forever(n):
    return forever(n + 1)


def ping(n):
    return pong(n + 1)


def pong(n):
    return ping(n + 1)


down(5)
forever(0)
ping(0)
