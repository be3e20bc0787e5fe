#!/bin/sh
# np_host_npy.sh: np.save writes an ndarray that numpy reads back as the
# same array, and np.load gives an ndarray (lib/jax/np_host_funcs.c) of
# what numpy wrote.  Skipped (77) where there is no python3 with numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${top_builddir:=.}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "np_host_npy.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
sr=$top_builddir/src/shardrepl
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$sr" -e "np.save('$tmp/a.npy', np.arange(6.0).reshape(2, 3))" -e "np.save('$tmp/b.npy', jnp.arange(3))" || exit 1
want="array([[0., 1., 2.],
       [3., 4., 5.]]) float64
array([0, 1, 2], dtype=int32) int32"
got=$("$PYTHON_NUMPY" -c "
import numpy as np
for f in ('a', 'b'):
    x = np.load('$tmp/%s.npy' % f)
    print(repr(x), x.dtype)
np.save('$tmp/c.npy', np.array([[1, 2]], dtype=np.int16))
np.savez('$tmp/d.npz', u=np.linspace(0, 1, 3))
") || exit 1
[ "$got" = "$want" ] || { printf 'numpy read:\n%s\nwanted:\n%s\n' "$got" "$want"; exit 1; }
want="array([[1, 2]], dtype=int16) <class 'numpy.ndarray'>
{'u': array([0. , 0.5, 1. ])}"
got=$("$sr" -e "x = np.load('$tmp/c.npy'); print(repr(x), type(x))" -e "print(np.load('$tmp/d.npz'))") || exit 1
[ "$got" = "$want" ] || { printf 'shardrepl read:\n%s\nwanted:\n%s\n' "$got" "$want"; exit 1; }
echo "np_host_npy.sh: np.save and np.load agree with numpy"
