# vmap_lib.py: what the vmap golden scripts share (`:load vmap_lib.py`).
# check(name, f, args, in_axes, out_axes) compares jax.vmap(f) on args with
# f applied to each example and the results stacked along out_axes (the
# definition of vmap), and prints one line: the name, the batched result's
# shapes, and "ok" or what differs.
import jax
import jax.numpy as jnp

def _replicated(a):
    # the examples of sharded operands are taken from replicated copies
    # (slicing a sharded dim is an error on an Explicit mesh), unmapped
    # operands too, so that the examples' shardings agree
    spec = getattr(getattr(a, "sharding", None), "spec", None)
    if spec is not None and any(e is not None for e in spec):
        return jax.reshard(a, jax.sharding.PartitionSpec())
    return a

def _example(a, ax, i):
    if ax is None:
        return _replicated(a)
    return _replicated(jnp.moveaxis(a, ax, 0))[i]

def _shapes(t):
    return [tuple(l.shape) for l in jax.tree.leaves(t)]

def check(name, f, args, in_axes=0, out_axes=0, tol=1e-5):
    axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    n = None
    for a, ax in zip(args, axes):
        if ax is not None:
            n = a.shape[ax]
    got = jax.vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
    outs = [f(*[_example(a, ax, i) for a, ax in zip(args, axes)]) for i in range(n)]
    want = jax.tree.map(lambda *xs: jnp.stack(xs, axis=out_axes), *outs)
    bad = []
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            bad.append(f"{g.dtype}{list(g.shape)} vs {w.dtype}{list(w.shape)}")
        elif not bool(jnp.allclose(_replicated(g), _replicated(w), rtol=tol, atol=tol)):
            bad.append("values differ")
    print(name, _shapes(got), "ok" if not bad else "MISMATCH: " + "; ".join(bad))
