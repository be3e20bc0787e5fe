"""exec_numpy.py: random programs run by shardrepl, checked against numpy.

Each program lays random inputs out over a mesh with random shardings
(jax.device_put), applies a random chain of jax.numpy operations --
elementwise, reductions over sharded and unsharded axes, dots with random
out_shardings (all-reduce, reduce-scatter or a local slice), transposes,
reshards between shardings -- and saves every result with np.save.  The same
chain runs in numpy (float64), and every result must agree to float32
precision.  Two programs per seed run on an Auto mesh, where the evaluator
chooses the layouts.

usage: exec_numpy.py SHARDREPL [NPROGRAMS] [SEED]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

MESHES = [((4, 2), ("X", "Y")), ((2, 2, 2), ("a", "b", "c")), ((8,), ("A",))]


def random_spec(rng, shape, names, sizes, allow_tuple=True):
    """A PartitionSpec text whose splits divide the shape."""
    free = list(range(len(names)))
    rng.shuffle(free)
    entries = [[] for _ in shape]
    for a in free:
        d = rng.integers(0, len(shape) + 1)
        if d == len(shape):
            continue
        split = int(np.prod([sizes[x] for x in entries[d]] or [1])) * sizes[a]
        if shape[d] % split == 0 and (allow_tuple or not entries[d]):
            entries[d].append(a)
    parts = []
    for e in entries:
        if not e:
            parts.append("None")
        elif len(e) == 1:
            parts.append(repr(names[e[0]]))
        else:
            parts.append("(" + ", ".join(repr(names[x]) for x in e) + ")")
    return "jax.P(" + ", ".join(parts) + ")"


class Program:
    def __init__(self, rng, index, tmp, auto):
        self.rng = rng
        self.i = index
        self.tmp = tmp
        self.sizes, self.names = MESHES[rng.integers(0, len(MESHES))]
        self.auto = auto
        self.lines = []
        self.vals = {}  # name -> numpy value
        self.n = 0
        self.saved = []

    def spec(self, shape):
        return random_spec(self.rng, shape, self.names, self.sizes)

    def fresh(self):
        self.n += 1
        return "v%d_%d" % (self.i, self.n)

    def emit(self, name, expr, value):
        self.lines.append("%s = %s" % (name, expr))
        self.vals[name] = value
        return name

    def input(self, shape, batch=False):
        data = self.rng.standard_normal(shape).astype(np.float32)
        path = os.path.join(self.tmp, "in%d_%d.npy" % (self.i, self.n + 1))
        np.save(path, data)
        name = self.fresh()
        spec = self.spec(shape)
        if batch:  # the batch dim whole, so that both operands agree on it
            spec = "jax.P(None, " + self.spec(shape[1:])[len("jax.P("):]
        return self.emit(name, "jax.device_put(np.load(%r), %s)" % (path, spec), data.astype(np.float64))

    def pick(self, pred=lambda v: True):
        names = [k for k, v in self.vals.items() if pred(v)]
        return names[self.rng.integers(0, len(names))] if names else None

    def batched_dot(self):
        """jnp.matmul of two stacks: dot_general with a batch dim."""
        b, m, k, n = 2, 8, 4, 8
        x = self.input((b, m, k), batch=True)
        y = self.input((b, k, n), batch=True)
        v = np.matmul(self.vals[x], self.vals[y]) / k
        if self.auto:
            return self.emit(self.fresh(), "jnp.matmul(%s, %s) / %d" % (x, y, k), v)
        return self.emit(self.fresh(), "jnp.matmul(%s, %s, out_sharding=%s) / %d" % (x, y, self.spec(v.shape), k), v)

    def step(self):
        r = self.rng.integers(0, 14)
        if r == 13:
            return self.batched_dot()
        if r == 9:  # broadcasting against a reduced row or column (size-1 dims)
            x = self.pick(lambda v: v.ndim == 2)
            if x is None:
                return None
            ax = int(self.rng.integers(0, 2))
            v = self.vals[x]
            op, f = [("+", np.add), ("*", np.multiply), ("-", np.subtract)][self.rng.integers(0, 3)]
            return self.emit(self.fresh(), "%s %s %s.mean(%d, keepdims=True)" % (x, op, x, ax), f(v, v.mean(axis=ax, keepdims=True)))
        if r == 10:  # with Python scalars
            x = self.pick()
            c = float(self.rng.integers(-4, 5)) / 2
            return self.emit(self.fresh(), "(%s * %r - 1) / 2" % (x, c), (self.vals[x] * c - 1) / 2)
        if r == 11:  # where
            x = self.pick()
            y = self.pick(lambda v: v.shape == self.vals[x].shape)
            y2 = y if self.auto else "jax.reshard(%s, %s.sharding)" % (y, x)
            return self.emit(self.fresh(), "jnp.where(%s > 0, %s, %s)" % (x, x, y2), np.where(self.vals[x] > 0, self.vals[x], self.vals[y]))
        if r == 12:  # concatenate along an unsharded-by-type dim (both replicated first)
            x = self.pick(lambda v: v.ndim == 2)
            if x is None:
                return None
            y = self.pick(lambda v: v.ndim == 2 and v.shape[1] == self.vals[x].shape[1])
            if self.auto:
                expr = "jnp.concatenate([%s, %s], axis=0)" % (x, y)
            else:
                expr = "jnp.concatenate([jax.reshard(%s, jax.P()), jax.reshard(%s, jax.P())], axis=0)" % (x, y)
            return self.emit(self.fresh(), expr, np.concatenate([self.vals[x], self.vals[y]], axis=0))
        if r == 0:  # unary
            x = self.pick()
            fn, f = [("jnp.sin", np.sin), ("jnp.tanh", np.tanh), ("jnp.cos", np.cos), ("jnp.abs", np.abs)][self.rng.integers(0, 4)]
            return self.emit(self.fresh(), "%s(%s)" % (fn, x), f(self.vals[x]))
        if r in (1, 2):  # binary on equal shapes: the second resharded like the first
            x = self.pick()
            y = self.pick(lambda v: v.shape == self.vals[x].shape)
            op, f = [("+", np.add), ("*", np.multiply), ("-", np.subtract)][self.rng.integers(0, 3)]
            y2 = y if self.auto else "jax.reshard(%s, %s.sharding)" % (y, x)
            if self.rng.integers(0, 2):
                return self.emit(self.fresh(), "%s %s %s" % (x, op, y2), f(self.vals[x], self.vals[y]))
            return self.emit(self.fresh(), "jnp.maximum(%s, %s)" % (x, y2), np.maximum(self.vals[x], self.vals[y]))
        if r == 3:  # reduction over one axis
            x = self.pick(lambda v: v.ndim >= 1)
            if x is None:
                return None
            v = self.vals[x]
            ax = int(self.rng.integers(0, v.ndim))
            fn, f = [("sum", np.sum), ("max", np.max), ("min", np.min)][self.rng.integers(0, 3)]
            return self.emit(self.fresh(), "%s.%s(%d)" % (x, fn, ax), f(v, axis=ax))
        if r in (4, 5):  # a dot with a chosen out_sharding
            x = self.pick(lambda v: v.ndim == 2)
            if x is None:
                return None
            k = self.vals[x].shape[1]
            y = self.pick(lambda v: v.ndim == 2 and v.shape[0] == k)
            if y is None:
                y = self.input((k, 8))
            v = self.vals[x] @ self.vals[y] / k
            if self.auto:
                return self.emit(self.fresh(), "jnp.dot(%s, %s) / %d" % (x, y, k), v)
            return self.emit(self.fresh(), "jnp.dot(%s, %s, out_sharding=%s) / %d" % (x, y, self.spec(v.shape), k), v)
        if r == 6:  # transpose
            x = self.pick(lambda v: v.ndim == 2)
            if x is None:
                return None
            return self.emit(self.fresh(), "%s.T" % x, self.vals[x].T)
        if r == 7:  # a reshard
            x = self.pick(lambda v: v.ndim >= 1)
            if x is None:
                return None
            fn = "jax.lax.with_sharding_constraint" if self.auto else "jax.reshard"
            return self.emit(self.fresh(), "%s(%s, %s)" % (fn, x, self.spec(self.vals[x].shape)), self.vals[x])
        # a new input
        return self.input([(8, 4), (4, 8), (8, 8), (16, 8)][self.rng.integers(0, 4)])

    def script(self):
        mesh = "jax.make_mesh(%r, %r%s)" % (self.sizes, self.names,
                                          ", axis_types=(Auto,) * %d" % len(self.names) if self.auto else "")
        out = ["_ = jax.set_mesh(%s)" % mesh]
        self.input((8, 4))
        self.input((4, 8))
        for _ in range(int(self.rng.integers(4, 10))):
            self.step()
        out += self.lines
        # every value computed is checked
        for k in self.vals:
            path = os.path.join(self.tmp, "out_%s.npy" % k)
            out.append("np.save(%r, %s)" % (path, k))
            self.saved.append((k, path))
        return out


def main():
    shardrepl = sys.argv[1]
    nprog = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20250601
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="exec_numpy.") as tmp:
        progs = [Program(rng, i, tmp, auto=i % 12 == 11) for i in range(nprog)]
        lines = ["import jax", "import jax.numpy as jnp", "import numpy as np",
                 "Auto = jax.sharding.AxisType.Auto"]
        for p in progs:
            lines += p.script()
        path = os.path.join(tmp, "programs.jxr")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        run = subprocess.run([shardrepl, path], capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout + run.stderr)
            print("shardrepl failed on the program in", path)
            with open(path) as f:
                print(f.read())
            return 1
        bad = 0
        checked = 0
        for p in progs:
            for name, out in p.saved:
                got = np.load(out).astype(np.float64)
                want = p.vals[name]
                checked += 1
                if got.shape != want.shape or not np.allclose(got, want, rtol=2e-5, atol=2e-5):
                    bad += 1
                    print("MISMATCH %s (%s vs %s)" % (name, got.shape, want.shape))
                    print("program:\n" + "\n".join(p.lines))
        print("exec_numpy: %d results of %d programs checked, %d wrong" % (checked, nprog, bad))
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
