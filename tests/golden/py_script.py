# oracle: python
"""A module docstring: a Python script prints nothing for it."""
import sys

1 + 1
"a bare string"
[x * x for x in range(3)]
print(__name__)
print(sys.argv)


def main():
    print("main", 1, 2, sep="-", end="!\n")
    print("to stderr", file=sys.stderr)
    print("flushed", flush=True)
    print(end="")
    print("a", "b", sep="")
    print(*[1, 2, 3], sep=", ")
    print("none sep", sep=None, end=None)
    sys.stdout.write("written\n")
    sys.stderr.write("written to stderr\n")
    sys.stdout.flush()
    len("value")


if __name__ == "__main__":
    main()
