#!/usr/bin/env python3
"""jax_doctests.py: runs the examples of JAX's docstrings through shardrepl.

JAX's docstrings show real JAX output (`>>> jnp.logspace(0, 2, 5)` and the
Array it prints).  This tool parses them out of a JAX source tree with
CPython's doctest parser, runs each docstring's examples as one session
(`shardrepl --python -`, REPL semantics) after the imports JAX's doctest
configuration provides, and compares each example's output with the
docstring's as pytest's doctest options do (NORMALIZE_WHITESPACE,
ELLIPSIS, NUMBER: floats to the digits shown; an expected exception by its
type and message).  It is a measuring tool, not a test: it needs a JAX
checkout, which CI does not have.

    tools/jax_doctests.py --jax-src DIR [--shardrepl src/shardrepl]
                          [--filter SUBSTRING] [--report FILE.json]

prints how many examples and whole docstrings pass; --report writes every
failure (source, expected, got) for reading.
"""
import argparse, ast, doctest, json, os, re, subprocess, sys

FILES = [
    "numpy/lax_numpy.py", "numpy/ufuncs.py", "numpy/reductions.py", "numpy/array_creation.py",
    "numpy/array_constructors.py", "numpy/setops.py", "numpy/indexing.py", "numpy/array_methods.py",
    "numpy/linalg.py", "numpy/polynomial.py", "numpy/window_functions.py", "numpy/einsum.py",
    "numpy/sorting.py", "numpy/util.py", "numpy/tensor_contractions.py", "numpy/scalar_types.py",
    "numpy/vectorize.py", "numpy/fft.py", "nn/functions.py", "nn/initializers.py",
    "random/__init__.py", "random/core.py", "lax/lax.py", "lax/slicing.py", "lax/control_flow/loops.py",
    "lax/control_flow/conditionals.py", "lax/parallel.py", "lax/special.py", "lax/linalg.py",
    "lax/convolution.py", "lax/windowed_reductions.py", "lax/other.py", "scipy/special.py",
    "scipy/linalg.py", "tree_util.py", "tree.py", "api.py", "ad_checkpoint.py", "debugging.py",
    "shard_map.py", "sharding_impls.py", "dtypes.py", "custom_derivatives.py", "named_sharding.py",
    "mesh.py", "partition_spec.py", "stages.py",
]

PRE = ("import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import lax, random\n"
       "import jax.scipy as jsp\nimport math\nimport functools\n")
MARK = "@@MARK@@"
NUM = re.compile(r"(?<![\w.])([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)(?![\w.])")


def docstrings(root):
    parser = doctest.DocTestParser()
    for rel in FILES:
        path = os.path.join(root, "jax", "_src", rel)
        if not os.path.exists(path):
            continue
        try:
            tree = ast.parse(open(path).read())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=True)
                if not doc or ">>>" not in doc:
                    continue
                try:
                    ex = parser.get_examples(doc)
                except ValueError:
                    continue
                yield rel + ":" + node.name, [(e.source, e.want) for e in ex]


def numbers_match(want, got):
    ws, gs = NUM.split(want.strip()), NUM.split(got.strip())
    if len(ws) != len(gs):
        return False
    for i, (a, b) in enumerate(zip(ws, gs)):
        if i % 2 == 0:
            if a.split() != b.split():
                return False
        elif a != b:
            try:
                fa, fb = float(a), float(b)
            except ValueError:
                return False
            if "." in a and "e" not in a.lower():
                if abs(fa - fb) > 10 ** -len(a.split(".")[1]):
                    return False
            elif fa != fb:
                return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jax-src", required=True)
    ap.add_argument("--shardrepl", default="src/shardrepl")
    ap.add_argument("--filter", default="")
    ap.add_argument("--report")
    o = ap.parse_args()
    chk = doctest.OutputChecker()
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    total = ok = full = nd = 0
    report = {}
    for key, examples in docstrings(o.jax_src):
        if o.filter not in key:
            continue
        src = PRE + 'print("%s")\n' % MARK
        for s, _ in examples:
            if "\n" in s.rstrip("\n"):
                s += "\n"
            src += s + 'print("%s")\n' % MARK
        try:
            p = subprocess.run([o.shardrepl, "--python", "-"], input=src, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=60)
            outs = p.stdout.split(MARK + "\n")[1:]
        except subprocess.TimeoutExpired:
            outs = []
        good, fails, n = 0, [], 0
        for i, (s, w) in enumerate(examples):
            if "doctest: +SKIP" in s:
                continue
            n += 1
            got = outs[i] if i < len(outs) else "<<missing>>"
            if w.startswith("Traceback"):
                last = w.strip().splitlines()[-1]
                m = re.search(r"error: (\w+(?:Error|Exception|Warning)?: .*)", got)
                g = m.group(1) if m else got
                passed = (g.strip().split(":")[0] == last.split(":")[0].split(".")[-1]
                          and last.split(":", 1)[-1].strip()[:40] in g)
            else:
                passed = chk.check_output(w, got, flags) or numbers_match(w, got)
            if passed:
                good += 1
            else:
                fails.append({"source": s, "want": w, "got": got})
        total += n
        ok += good
        nd += 1
        full += good == n
        report[key] = {"passed": good, "examples": n, "failures": fails}
    print("%d/%d examples pass; docstrings fully passing: %d/%d" % (ok, total, full, nd))
    if o.report:
        json.dump(report, open(o.report, "w"), indent=1)


if __name__ == "__main__":
    main()
