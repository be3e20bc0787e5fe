#!/bin/sh
# mem17_npload.sh: np.load's ndarray takes over the buffer of the array it
# read instead of copying it (lib/jax/np_host.c, sr_ndarray_adopt_jax);
# the ndarray stays its own: writing into it changes no later load of the
# file and no copy made before.  Expected output: what numpy prints for the
# same script.  Skipped (77) without numpy.
: "${PYTHON_NUMPY:=/usr/bin/python3}"
: "${SHARDREPL:=$PWD/src/shardrepl}"
if ! "$PYTHON_NUMPY" -c 'import numpy' 2>/dev/null; then
  echo "mem17_npload.sh: no python3 with numpy ($PYTHON_NUMPY): skipped"
  exit 77
fi
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
"$PYTHON_NUMPY" -c "import numpy as np; np.save('$dir/a.npy', np.arange(6, dtype=np.float32).reshape(2, 3)); np.save('$dir/b.npy', np.arange(3.))" || exit 1
cat > "$dir/t.py" <<'PY'
import numpy as np
a = np.load('a.npy')
j = np.asarray(a).copy()
a[0, 0] = 50.
a += 1
b = np.load('a.npy')
c = np.load('b.npy')
c[1] = 7
print(a.tolist(), a.dtype, b.tolist(), j.tolist(), c.tolist(), c.dtype, np.load('b.npy').tolist())
PY
want=$(cd "$dir" && "$PYTHON_NUMPY" t.py) || exit 1
got=$(cd "$dir" && "$SHARDREPL" --python t.py 2>&1) || { echo "$got"; exit 1; }
if test "$got" != "$want"; then
  printf 'mem17_npload.sh: shardrepl printed\n%s\nnumpy\n%s\n' "$got" "$want"
  exit 1
fi
echo "PASS $got"
