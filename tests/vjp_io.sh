#!/bin/sh
# vjp_io.sh: VJP objects in files (shardrepl.save_vjp / load_vjp).
#
# One session runs a sharded forward pass and saves its VJP object; a
# second session -- another process -- loads it, restores the weights it
# was told not to save and runs the backward pass, which must print what
# the first session computed.  Then files that are broken in every way the
# loader checks (a truncated zip, a description that is not one, a wrong
# version, a missing line, an array of the wrong shape, a jaxpr that does
# not parse, missing leaves, a mesh the loading session lacks) must each
# give a clear error and leave the session running: the output is compared
# with tests/vjp_io.out as tests/golden.sh compares (tests/golden_cmp: text
# and integers exactly, floats within their dtype's tolerance).  The broken
# files are made with python3's zipfile (numpy is not needed); without
# python3 those cases are skipped.
: "${top_srcdir:=.}"
: "${SHARDREPL:=src/shardrepl}"
case $SHARDREPL in /*) ;; *) SHARDREPL=$(pwd)/$SHARDREPL ;; esac
: "${GOLDEN_CMP:=$(dirname "$SHARDREPL")/../tests/golden_cmp}"
case $GOLDEN_CMP in /*) ;; *) GOLDEN_CMP=$(pwd)/$GOLDEN_CMP ;; esac
expected=$top_srcdir/tests/vjp_io.out
case $expected in /*) ;; *) expected=$(pwd)/$expected ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vjp_io.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99

cat > common.jxr <<'EOF'
import jax
import jax.numpy as jnp
import shardrepl
jax.config.update('jax_num_cpu_devices', 4)
_ = jax.set_mesh(jax.make_mesh((4,), ('X',)))
def layer(W, x):
  return jnp.tanh(x @ W)
W = jax.device_put(jnp.arange(12.).reshape(4, 3) / 10, jax.P('X'))
x = jnp.arange(8.).reshape(2, 4) / 8
EOF

cat > save.jxr <<'EOF'
:load common.jxr
fwd = jax.jit(lambda W, x: jax.vjp(layer, W, x, saveable_args=(False, True)))
y, f_vjp = fwd(W, x)
print(f_vjp.args_res[0], jax.typeof(f_vjp.args_res[1]), len(jax.tree.leaves(f_vjp)))
shardrepl.save_vjp('f_vjp', f_vjp)
print(f_vjp.replace(args_res=[W, f_vjp.args_res[1]])(jnp.ones_like(y)))
_, g_vjp = jax.vjp(layer, W, x)
print(jax.typeof(g_vjp.args_res[0]))
shardrepl.save_vjp('g_vjp.npz', g_vjp)
EOF

cat > load.jxr <<'EOF'
:load common.jxr
f_vjp = shardrepl.load_vjp('f_vjp.npz')
print(f_vjp.args_res[0], jax.typeof(f_vjp.args_res[1]), len(jax.tree.leaves(f_vjp)))
print(jax.typeof(f_vjp.opaque_residuals[0]))
f_vjp(jnp.ones((2, 3)))
f_vjp.args_res[0] = W
print(f_vjp(jnp.ones((2, 3))))
g_vjp = shardrepl.load_vjp('g_vjp.npz')
print(jax.typeof(g_vjp.args_res[0]))
print(all(jnp.allclose(a, b) for a, b in zip(g_vjp(jnp.ones((2, 3))), f_vjp(jnp.ones((2, 3))))))
EOF

{
  echo "== session 1: forward pass, saved"
  "$SHARDREPL" save.jxr 2>&1
  echo "exit $?"
  echo "== session 2: loaded, restored, backward pass"
  "$SHARDREPL" -k load.jxr 2>&1
  echo "exit $?"
  echo "== session 3: no mesh in context"
  printf "import shardrepl\nf = shardrepl.load_vjp('g_vjp.npz')\nprint('still here')\n" > nomesh.jxr
  "$SHARDREPL" -k nomesh.jxr 2>&1
  echo "exit $?"
  echo "== broken files"
  head -c 200 f_vjp.npz > truncated.npz
  printf 'not a zip at all' > garbage.npz
  if command -v python3 > /dev/null 2>&1; then
    python3 - <<'PY'
import zipfile, struct
src = zipfile.ZipFile('f_vjp.npz')
members = {n: src.read(n) for n in src.namelist()}
desc = members['__shardrepl_vjp__.npy']
# the .npy payload of the description: after the header
hl = struct.unpack('<H', desc[8:10])[0]
text = desc[10 + hl:].decode()

def npy(data, descr, shape):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    hdr += ' ' * ((64 - (10 + len(hdr) + 1) % 64) % 64) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + data

def write(name, text=None, drop=(), replace=None):
    z = zipfile.ZipFile(name, 'w')
    for n, b in members.items():
        if n in drop:
            continue
        if n == '__shardrepl_vjp__.npy' and text is not None:
            b = npy(text.encode(), '|u1', '(%d,)' % len(text.encode()))
        if replace and n in replace:
            b = replace[n]
        z.writestr(n, b)
    z.close()

write('notvjp.npz', drop=('__shardrepl_vjp__.npy',))
write('header.npz', text='hello\n' + text)
write('version.npz', text=text.replace('shardrepl-vjp 1', 'shardrepl-vjp 2', 1))
write('noline.npz', text=''.join(l for l in text.splitlines(True) if not l.startswith('res ')))
write('shape.npz', replace={'leaf_1.npy': npy(struct.pack('<4f', 1, 2, 3, 4), '<f4', '(4,)')})
write('jaxpr.npz', text=text[:text.index('\njaxpr\n')] + '\njaxpr\n{ lambda ; a:f32[2,3]. let b = in (b,) }\n')
write('leaves.npz', drop=('leaf_2.npy',))
write('args_res.npz', text=text.replace('args_res [S, *]', 'args_res [S, *', 1))
write('tree.npz', text=text.replace('in_tree (*, *)', 'in_tree (*, *, *)', 1))
PY
    broken="truncated garbage notvjp header version noline shape jaxpr leaves args_res tree"
  else
    broken="truncated garbage"
  fi
  for f in $broken; do
    printf ":load common.jxr\nf = shardrepl.load_vjp('%s.npz')\nprint('%s: the session goes on')\n" $f $f > bad.jxr
    "$SHARDREPL" -k bad.jxr 2>&1
    echo "exit $?"
  done
} > got.out

if [ "${SR_GOLDEN_UPDATE:-0}" = 1 ]; then
  cp got.out "$expected"
  echo "vjp_io.sh: wrote $expected"
  exit 0
fi
cmp -s "$expected" got.out && exit 0
if [ -x "$GOLDEN_CMP" ]; then
  "$GOLDEN_CMP" "$expected" got.out
  rc=$?
else
  echo "($GOLDEN_CMP is not built, so it compared byte for byte: make check builds it)"
  rc=1
fi
[ $rc -eq 0 ] && exit 0
[ $rc -eq 1 ] || exit 99
diff -u "$expected" got.out
echo "vjp_io.sh: the output differs from $expected"
exit 1
