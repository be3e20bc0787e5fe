"""jnp_numpy.py: jax.numpy's sorting, statistics, shape and helper
functions run by shardrepl, checked against Debian's numpy.

Each case is a jax.numpy expression and the numpy expression that computes
the same thing (over the same inputs, float32 in both); shardrepl saves
each result with np.save in one run, and every result must have numpy's
shape and agree to float32 precision (NaNs in the same places; integer
results exactly).  Where JAX's and numpy's defaults differ the numpy side
says so (argsort's kind='stable', the dtype of an index).

usage: jnp_numpy.py SHARDREPL
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

# the inputs, as Python literals both sides build arrays of
INPUTS = {
    "v": ("[3., 1., 2., -0.5, 7., 1., 4.]", "float32"),
    "m": ("[[3., 1., 2., -0.5], [0.25, 5., -1., 2.], [1., 1., 6., -3.]]", "float32"),
    "n": ("[[3., float('nan'), 2.], [0.5, 1., float('nan')]]", "float32"),
    "i": ("[4, 1, 3, 1, 2, 4, 0]", "int32"),
    "s": ("[1., 2., 2., 3., 5., 8.]", "float32"),
    "q": ("[0., 2., 2.5, 9., -1.]", "float32"),
    "w": ("[1., 2., 0.5, 1.]", "float32"),
    "t": ("[[[1., 2.], [3., 4.]], [[5., 6.], [7., 8.]]]", "float32"),
    "f": ("[1., float('nan'), float('inf'), -float('inf'), -2.]", "float32"),
    # einsum's
    "ea": ("[[1., -2., 3.], [0.5, 4., -1.]]", "float32"),
    "ec": ("[[1., 2.], [-1., 0.5], [3., -2.], [0.25, 1.]]", "float32"),
    "eq": ("[[1., 2., 3.], [4., 5., 6.], [7., 8., 10.]]", "float32"),
    "ek": ("[[[1., 2., 0.], [3., -1., 4.], [2., 2., 1.]], [[0., 1., 5.], [-2., 3., 1.], [1., 0., 2.]]]", "float32"),
}

# (jax.numpy expression, numpy expression); None: the same text
CASES = [
    # sorting and selection
    ("jnp.sort(m)", "np.sort(m)"),
    ("jnp.sort(m, axis=0)", "np.sort(m, axis=0)"),
    ("jnp.sort(m, axis=None)", "np.sort(m, axis=None)"),
    ("jnp.sort(n)", "np.sort(n)"),
    ("jnp.sort(v, descending=True)", "np.sort(v)[::-1]"),
    ("jnp.argsort(i)", "np.argsort(i, kind='stable')"),
    ("jnp.argsort(m, axis=0)", "np.argsort(m, axis=0, kind='stable')"),
    ("jnp.argsort(i, descending=True)", "np.argsort(-i, kind='stable')"),
    ("jnp.argsort(n)", "np.argsort(n, kind='stable')"),
    ("jax.lax.sort((i, v), num_keys=1)[1]", "v[np.argsort(i, kind='stable')]"),
    ("jax.lax.sort((i, v, i), num_keys=2)[1]", "v[np.lexsort((v, i))]"),
    ("jax.lax.top_k(v, 3)[0]", "np.sort(v)[::-1][:3]"),
    ("jax.lax.top_k(m, 2)[1]", "np.argsort(-m, axis=-1, kind='stable')[:, :2]"),
    # statistics
    ("jnp.var(m)", "np.var(m)"),
    ("jnp.var(m, axis=0, ddof=1)", "np.var(m, axis=0, ddof=1)"),
    ("jnp.var(m, axis=1, keepdims=True)", "np.var(m, axis=1, keepdims=True)"),
    ("jnp.var(m, axis=1, where=m > 0)", "np.var(m, axis=1, where=m > 0)"),
    ("jnp.std(m)", "np.std(m)"),
    ("jnp.std(m, axis=1, ddof=1, keepdims=True)", "np.std(m, axis=1, ddof=1, keepdims=True)"),
    ("jnp.std(m, correction=2, axis=1)", "np.std(m, ddof=2, axis=1)"),
    ("m.var(axis=0)", "m.var(axis=0)"),
    ("m.std()", "m.std()"),
    ("jnp.var(i)", "np.var(i)"),
    ("jnp.median(v)", "np.median(v)"),
    ("jnp.median(m, axis=0)", "np.median(m, axis=0)"),
    ("jnp.median(m, axis=1, keepdims=True)", "np.median(m, axis=1, keepdims=True)"),
    ("jnp.median(m, keepdims=True)", "np.median(m, keepdims=True)"),
    ("jnp.quantile(v, 0.3)", "np.quantile(v, 0.3)"),
    ("jnp.quantile(m, jnp.array([0.1, 0.5, 0.9]), axis=1)", "np.quantile(m, np.array([0.1, 0.5, 0.9]), axis=1)"),
    ("jnp.quantile(m, 0.4, axis=0, method='lower')", "np.quantile(m, 0.4, axis=0, method='lower')"),
    ("jnp.quantile(m, 0.4, axis=0, method='higher')", "np.quantile(m, 0.4, axis=0, method='higher')"),
    ("jnp.quantile(m, 0.4, axis=0, method='midpoint')", "np.quantile(m, 0.4, axis=0, method='midpoint')"),
    ("jnp.quantile(v, 0.7, method='nearest')", "np.quantile(v, 0.7, method='nearest')"),
    ("jnp.percentile(m, 35., axis=1)", "np.percentile(m, 35., axis=1)"),
    ("jnp.percentile(v, jnp.array([10., 90.]))", "np.percentile(v, np.array([10., 90.]))"),
    ("jnp.median(n, axis=1)", "np.median(n, axis=1)"),
    ("jnp.average(m)", "np.average(m)"),
    ("jnp.average(m, axis=1, weights=w)", "np.average(m, axis=1, weights=w)"),
    ("jnp.average(m, axis=0, weights=jnp.array([1., 2., 3.]))", "np.average(m, axis=0, weights=np.array([1., 2., 3.]))"),
    ("jnp.average(m, axis=1, weights=w, returned=True)[1]", "np.average(m, axis=1, weights=w, returned=True)[1]"),
    ("jnp.nanmax(n)", "np.nanmax(n)"),
    ("jnp.nanmax(n, axis=1)", "np.nanmax(n, axis=1)"),
    ("jnp.nanmin(n, axis=0)", "np.nanmin(n, axis=0)"),
    ("jnp.nansum(n, axis=1)", "np.nansum(n, axis=1)"),
    ("jnp.nansum(n, keepdims=True)", "np.nansum(n, keepdims=True)"),
    ("jnp.nanprod(n, axis=0)", "np.nanprod(n, axis=0)"),
    ("jnp.nanmean(n, axis=1)", "np.nanmean(n, axis=1)"),
    ("jnp.nanmean(n)", "np.nanmean(n)"),
    ("jnp.nansum(i)", "np.nansum(i)"),
    ("jnp.cumprod(m, axis=1)", "np.cumprod(m, axis=1)"),
    ("jnp.cumprod(i)", "np.cumprod(i)"),
    ("jax.lax.cummax(v)", "np.maximum.accumulate(v)"),
    ("jax.lax.cummin(m, axis=1)", "np.minimum.accumulate(m, axis=1)"),
    ("jax.lax.cummax(v, reverse=True)", "np.maximum.accumulate(v[::-1])[::-1]"),
    ("jax.lax.cumprod(m, axis=0)", "np.cumprod(m, axis=0)"),
    ("jnp.diff(v)", "np.diff(v)"),
    ("jnp.diff(m, n=2)", "np.diff(m, n=2)"),
    ("jnp.diff(m, axis=0)", "np.diff(m, axis=0)"),
    ("jnp.diff(i, prepend=0, append=jnp.array([9]))", "np.diff(i, prepend=0, append=np.array([9]))"),
    # shapes
    ("jnp.split(v[:6], 3)[1]", "np.split(v[:6], 3)[1]"),
    ("jnp.split(m, [1, 3], axis=1)[1]", "np.split(m, [1, 3], axis=1)[1]"),
    ("jnp.array_split(v, 3)[2]", "np.array_split(v, 3)[2]"),
    ("jnp.array_split(v, 3)[0]", "np.array_split(v, 3)[0]"),
    ("jnp.hsplit(m, 2)[1]", "np.hsplit(m, 2)[1]"),
    ("jnp.vsplit(m, [1])[1]", "np.vsplit(m, [1])[1]"),
    ("jnp.dsplit(t, 2)[0]", "np.dsplit(t, 2)[0]"),
    ("jax.lax.split(v, [2, 5])[1]", "v[2:7]"),
    ("jnp.hstack([v, i])", "np.hstack([v, i])"),
    ("jnp.hstack([m, m])", "np.hstack([m, m])"),
    ("jnp.vstack([m, m[0]])", "np.vstack([m, m[0]])"),
    ("jnp.vstack([v, v])", "np.vstack([v, v])"),
    ("jnp.dstack([m, m])", "np.dstack([m, m])"),
    ("jnp.dstack([v, v])", "np.dstack([v, v])"),
    ("jnp.column_stack([v, i])", "np.column_stack([v, i])"),
    ("jnp.column_stack([m.T, v[:4]])", "np.column_stack([m.T, v[:4]])"),
    ("jnp.tile(v, 2)", "np.tile(v, 2)"),
    ("jnp.tile(m, (2, 1, 2))", "np.tile(m, (2, 1, 2))"),
    ("jnp.tile(t, 3)", "np.tile(t, 3)"),
    ("jax.lax.tile(m, (1, 3))", "np.tile(m, (1, 3))"),
    ("jnp.repeat(m, 2)", "np.repeat(m, 2)"),
    ("jnp.repeat(m, 3, axis=0)", "np.repeat(m, 3, axis=0)"),
    ("jnp.repeat(t, 2, axis=-1)", "np.repeat(t, 2, axis=-1)"),
    ("jnp.roll(v, 3)", "np.roll(v, 3)"),
    ("jnp.roll(m, -5)", "np.roll(m, -5)"),
    ("jnp.roll(m, 1, axis=0)", "np.roll(m, 1, axis=0)"),
    ("jnp.roll(m, (2, -1), axis=(1, 0))", "np.roll(m, (2, -1), axis=(1, 0))"),
    ("jnp.roll(t, 1, axis=(0, 2))", "np.roll(t, 1, axis=(0, 2))"),
    ("jnp.flip(m)", "np.flip(m)"),
    ("jnp.flip(t, (0, 2))", "np.flip(t, (0, 2))"),
    ("jnp.fliplr(m)", "np.fliplr(m)"),
    ("jnp.flipud(m)", "np.flipud(m)"),
    ("jnp.rot90(m)", "np.rot90(m)"),
    ("jnp.rot90(m, 2)", "np.rot90(m, 2)"),
    ("jnp.rot90(m, -1)", "np.rot90(m, -1)"),
    ("jnp.rot90(t, 1, axes=(1, 2))", "np.rot90(t, 1, axes=(1, 2))"),
    ("jnp.meshgrid(v, i)[0]", "np.meshgrid(v, i)[0]"),
    ("jnp.meshgrid(v, i, q)[1]", "np.meshgrid(v, i, q)[1]"),
    ("jnp.meshgrid(v, i, indexing='ij')[1]", "np.meshgrid(v, i, indexing='ij')[1]"),
    ("jnp.meshgrid(v, q, sparse=True)[1]", "np.meshgrid(v, q, sparse=True)[1]"),
    ("jnp.atleast_1d(3.0)", "np.atleast_1d(np.float32(3.0))"),
    ("jnp.atleast_2d(v)", "np.atleast_2d(v)"),
    ("jnp.atleast_3d(v)", "np.atleast_3d(v)"),
    ("jnp.atleast_3d(m)", "np.atleast_3d(m)"),
    ("jnp.atleast_3d(2.0)", "np.atleast_3d(np.float32(2.0))"),
    # small helpers
    ("jnp.tri(3)", "np.tri(3)"),
    ("jnp.tri(3, 5, k=1)", "np.tri(3, 5, k=1)"),
    ("jnp.tri(4, 2, k=-1, dtype=jnp.int32)", "np.tri(4, 2, k=-1, dtype=np.int32)"),
    ("jnp.tril(m)", "np.tril(m)"),
    ("jnp.tril(m, -1)", "np.tril(m, -1)"),
    ("jnp.triu(m, 1)", "np.triu(m, 1)"),
    ("jnp.triu(t)", "np.triu(t)"),
    ("jnp.identity(3)", "np.identity(3)"),
    ("jnp.array_equal(m, m)", "np.array_equal(m, m)"),
    ("jnp.array_equal(m, m + 1)", "np.array_equal(m, m + 1)"),
    ("jnp.array_equal(v, m)", "np.array_equal(v, m)"),
    ("jnp.array_equal(n, n, equal_nan=True)", "np.array_equal(n, n, equal_nan=True)"),
    ("jnp.array_equal(n, n)", "np.array_equal(n, n)"),
    ("jnp.outer(v, q)", "np.outer(v, q)"),
    ("jnp.outer(m, w)", "np.outer(m, w)"),
    # diagonals (numpy_linalg.c)
    ("jnp.trace(m)", "np.trace(m)"),
    ("jnp.trace(m, offset=1)", "np.trace(m, offset=1)"),
    ("jnp.trace(m, offset=-1)", "np.trace(m, offset=-1)"),
    ("jnp.trace(t, axis1=1, axis2=2)", "np.trace(t, axis1=1, axis2=2)"),
    ("jnp.trace(t, offset=1, axis1=2, axis2=0)", "np.trace(t, offset=1, axis1=2, axis2=0)"),
    ("jnp.trace(i.reshape(1, 7), dtype=jnp.float32)", "np.trace(i.reshape(1, 7), dtype=np.float32)"),
    ("jnp.diagonal(m)", "np.diagonal(m)"),
    ("jnp.diagonal(m, 2)", "np.diagonal(m, 2)"),
    ("jnp.diagonal(m, -1)", "np.diagonal(m, -1)"),
    ("jnp.diagonal(m, 5)", "np.diagonal(m, 5)"),
    ("jnp.diagonal(t, 0, 2, 1)", "np.diagonal(t, 0, 2, 1)"),
    ("jnp.diagonal(t, 1, -1, 0)", "np.diagonal(t, 1, -1, 0)"),
    ("jnp.diag(w)", "np.diag(w)"),
    ("jnp.diag(w, 2)", "np.diag(w, 2)"),
    ("jnp.diag(w, k=-1)", "np.diag(w, k=-1)"),
    ("jnp.diag(m, 1)", "np.diag(m, 1)"),
    ("jnp.diag(m, -2)", "np.diag(m, -2)"),
    ("jnp.nan_to_num(f)", "np.nan_to_num(f)"),
    ("jnp.nan_to_num(f, nan=5.0, posinf=7.0, neginf=-7.0)", "np.nan_to_num(f, nan=5.0, posinf=7.0, neginf=-7.0)"),
    ("jnp.nan_to_num(f, posinf=1e3)", "np.nan_to_num(f, posinf=1e3)"),
    ("jnp.nan_to_num(f.astype(jnp.float16))", "np.nan_to_num(f.astype(np.float16))"),
    ("jnp.nan_to_num(i)", "np.nan_to_num(i)"),
    ("jnp.inner(v, v)", "np.inner(v, v)"),
    ("jnp.inner(m, w)", "np.inner(m, w)"),
    ("jnp.inner(m, m)", "np.inner(m, m)"),
    ("jnp.inner(t, m[:, :2])", "np.inner(t, m[:, :2])"),
    ("jnp.inner(2.5, m)", "np.inner(2.5, m)"),
    ("jnp.inner(i, i)", "np.inner(i, i)"),
    # einsum: opt_einsum's path over several operands, ellipses,
    # repeated indices, implicit output
    ("jnp.einsum('ij,jk,kl->il', ea, m, ec)", "np.einsum('ij,jk,kl->il', ea, m, ec)"),
    ("jnp.einsum('ij,jk,kl', ea, m, ec)", "np.einsum('ij,jk,kl', ea, m, ec)"),
    ("jnp.einsum('ij,jk,kl->li', ea, m, ec)", "np.einsum('ij,jk,kl->li', ea, m, ec)"),
    ("jnp.einsum('ij,jk,kl,lm->m', ea, m, ec, ec.T)", "np.einsum('ij,jk,kl,lm->m', ea, m, ec, ec.T)"),
    ("jnp.einsum('ab,bc,cd,de,ef->af', ea, eq, m, ec, ec.T)", "np.einsum('ab,bc,cd,de,ef->af', ea, eq, m, ec, ec.T)"),
    ("jnp.einsum('ab,bc,cd,de,ef,fg,gh,hi,ij->aj', *([eq / 10] * 9))", "np.einsum('ab,bc,cd,de,ef,fg,gh,hi,ij->aj', *([eq / 10] * 9))"),
    ("jnp.einsum('ab,bc,cd,de,ef,fg,gh,hi->ai', *([eq / 10] * 8))", "np.einsum('ab,bc,cd,de,ef,fg,gh,hi->ai', *([eq / 10] * 8))"),
    ("jnp.einsum('ii', eq)", "np.einsum('ii', eq)"),
    ("jnp.einsum('ii->i', eq)", "np.einsum('ii->i', eq)"),
    ("jnp.einsum('iij->j', ek.transpose(1, 2, 0)[:, :, :2])", "np.einsum('iij->j', ek.transpose(1, 2, 0)[:, :, :2])"),
    ("jnp.einsum('bii->bi', ek)", "np.einsum('bii->bi', ek)"),
    ("jnp.einsum('ij,jj->i', ea, eq)", "np.einsum('ij,jj->i', ea, eq)"),
    ("jnp.einsum('...ij,jk->...ik', ek, ea.T)", "np.einsum('...ij,jk->...ik', ek, ea.T)"),
    ("jnp.einsum('i...->...', ek)", "np.einsum('i...->...', ek)"),
    ("jnp.einsum('...i,...i', ek, ek)", "np.einsum('...i,...i', ek, ek)"),
    ("jnp.einsum('ij,ij->', ea, ea)", "np.einsum('ij,ij->', ea, ea)"),
    ("jnp.einsum('i,j->ij', v, w)", "np.einsum('i,j->ij', v, w)"),
    ("jnp.einsum('ij->ji', m)", "np.einsum('ij->ji', m)"),
    ("jnp.einsum('bij,bjk->bik', t, t)", "np.einsum('bij,bjk->bik', t, t)"),
    ("jnp.einsum('ij,jk', i[:6].reshape(2, 3), i[:6].reshape(3, 2))", "np.einsum('ij,jk', i[:6].reshape(2, 3), i[:6].reshape(3, 2))"),
    ("jnp.einsum('ij,jk,kl->il', ea, m, ec, preferred_element_type=jnp.float32)", "np.einsum('ij,jk,kl->il', ea, m, ec)"),
]


def main(argv):
    shardrepl = argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        lines = ["import jax", "import jax.numpy as jnp", "import numpy as np"]
        for name, (lit, dt) in INPUTS.items():
            lines.append("%s = jnp.array(%s, dtype=jnp.%s)" % (name, lit, dt))
        for k, (jx, _) in enumerate(CASES):
            lines.append("np.save(%r, %s)" % (os.path.join(tmp, "%d.npy" % k), jx))
        prog = os.path.join(tmp, "prog.jxr")
        with open(prog, "w") as f:
            f.write("\n".join(lines) + "\n")
        run = subprocess.run([shardrepl, "-k", prog], capture_output=True, text=True)
        env = {"np": np}
        for name, (lit, dt) in INPUTS.items():
            env[name] = np.array(eval(lit), dtype=dt)
        failed = 0
        for k, (jx, nx) in enumerate(CASES):
            want = np.asarray(eval(nx if nx else jx, env))
            path = os.path.join(tmp, "%d.npy" % k)
            if not os.path.exists(path):
                print("FAIL %s: shardrepl saved nothing" % jx)
                failed += 1
                continue
            got = np.load(path)
            if got.shape != want.shape:
                print("FAIL %s: shape %s, numpy's %s" % (jx, got.shape, want.shape))
                failed += 1
            elif got.dtype.kind in "iub" and want.dtype.kind in "iub":
                if not np.array_equal(got, want):
                    print("FAIL %s:\n  got  %s\n  want %s" % (jx, got.tolist(), want.tolist()))
                    failed += 1
            elif not np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-6,
                                 equal_nan=True):
                print("FAIL %s:\n  got  %s\n  want %s" % (jx, got.tolist(), want.tolist()))
                failed += 1
        if run.returncode != 0:
            print("shardrepl exited %d:\n%s" % (run.returncode, run.stderr))
            failed += 1
        print("jnp_numpy: %d cases, %d failed" % (len(CASES), failed))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
