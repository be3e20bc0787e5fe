#!/usr/bin/env python3
"""gen_jaxpr.py: a large, realistic sharded jaxpr for `make bench`.

    python3 gen_jaxpr.py [--mb 10] [--seed 1] [-o FILE]

The program looks like the training step of a sharded transformer, as
`jax.make_jaxpr` prints it under `jax.set_mesh`: layer norms, matmuls
(dot_general, whose params break over lines), reductions, broadcasts,
elementwise chains with literals, inline `jit` bodies (with the jit rule's
name passing), `scan` and `cond` with inline bodies, hoisted
`let NAME = { ... } in` jaxprs called from many places, scan bodies of more
than ten equations hoisted as `jaxpr`, `jaxpr1`, ..., long operand and
binder lists that wrap, unused outputs printed `_`, and sharded types such
as `f32[256@X,4096@Y]`, `f32[256@X,1024]{U:Y}` and `f32[64@(X,Y),128]`.

The text must be exactly what `shardrepl --fmt` prints for it (a fixed
point), so the generator builds a program and prints it with a small copy
of lib/text/print.c: JAX's layout engine (Wadler-Lindig, width 80), its
variable naming (a..z, ba.., in print order, `_` for unused top-level
outputs, names passed into jit bodies) and its hoisting of shared jaxprs.
`make bench` checks the fixed point with `shardrepl --fmt`.

The program is also well typed, as JAX would have traced it (a jit body
per type it is called with, scan's `xs` with the leading axis of `length`,
iota's result unsharded, its `sharding` being None), so that `make bench`
can time the type checker on it; it checks that with `shardrepl --check`.

Only the Python standard library is used.
"""
import argparse
import random
import sys

WIDTH = 80

# ---- the IR ----


class Var:
    __slots__ = ("type", "name", "used")

    def __init__(self, type_):
        self.type = type_
        self.name = None  # assigned when first printed
        self.used = False


class Lit:
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


class Eqn:
    __slots__ = ("outs", "prim", "params", "ins")

    def __init__(self, outs, prim, params, ins):
        self.outs, self.prim, self.params, self.ins = outs, prim, params, ins


class Jaxpr:
    __slots__ = ("consts", "invars", "eqns", "outvars", "shared")

    def __init__(self, consts, invars, eqns, outvars):
        self.consts, self.invars, self.eqns, self.outvars = consts, invars, eqns, outvars
        self.shared = None


# ---- docs (lib/text/doc.c): [kind, flat width, payload...] ----

TEXT, BRK, CAT, GROUP, NEST = range(5)
BREAK, FLAT = 0, 1


def T(s):
    return (TEXT, len(s), s)


def B(s):
    return (BRK, len(s), s)


def C(kids):
    return (CAT, sum(k[1] for k in kids if k is not None), kids)


def G(d):
    return (GROUP, d[1], d)


def N(n, d):
    return (NEST, d[1], n, d)


class Fmt:
    """sr_fmt: a group is flat when it alone fits in the rest of the line."""

    def __init__(self, out):
        self.out = out  # list of strings
        self.k = 0

    def text(self, s):
        self.out.append(s)
        self.k += len(s)

    def newline(self, indent):
        self.out.append("\n" + " " * indent)
        self.k = indent

    def fmt(self, root, indent, mode):
        if root is None:
            return
        out = self.out
        stack = [(indent, mode, root)]
        pop, push = stack.pop, stack.append
        while stack:
            i, m, d = pop()
            if d is None:
                continue
            kind = d[0]
            if kind == TEXT:
                out.append(d[2])
                self.k += d[1]
            elif kind == CAT:
                for kid in reversed(d[2]):
                    push((i, m, kid))
            elif kind == NEST:
                push((i + d[2], m, d[3]))
            elif kind == BRK:
                if m == BREAK:
                    out.append("\n" + " " * i)
                    self.k = i
                else:
                    out.append(d[2])
                    self.k += d[1]
            else:  # GROUP
                push((i, FLAT if d[1] <= WIDTH - self.k else BREAK, d[2]))


# ---- the printer (lib/text/print.c) ----


def encode_name(n):
    s = ""
    while True:
        s = chr(97 + n % 26) + s
        n //= 26
        if not n:
            return s


class Printer:
    def __init__(self, out):
        self.counter = 0
        self.shared_names = set()
        self.f = Fmt(out)

    def fresh(self):
        while True:
            s = encode_name(self.counter)
            self.counter += 1
            if s not in self.shared_names:
                return s

    def name_of(self, v):
        if v.name is None:
            v.name = self.fresh()
        return v.name

    def atom(self, v):
        return T(v.text) if isinstance(v, Lit) else T(self.name_of(v))

    # pp_vars: N(2, G(join(T(sep) + G(B(" ")), items)))
    def vars_doc(self, vs, sep, typed):
        kids = []
        for i, v in enumerate(vs):
            if i:
                b = G(B(" "))
                kids.append(C([T(sep), b]) if sep else b)
            item = self.atom(v)
            if typed and not isinstance(v, Lit):
                item = C([item, T(":" + v.type)])
            kids.append(item)
        return N(2, G(C(kids)))

    def value_doc(self, v):
        if isinstance(v, Jaxpr):
            return self.jaxpr_doc(v)
        if isinstance(v, tuple):
            kids = [T("("), B("")]
            for i, j in enumerate(v):
                if i:
                    kids.append(B(" "))
                kids.append(self.jaxpr_doc(j))
            return G(C([N(2, C(kids)), B(""), T(")")]))
        return T(v)

    def params_doc(self, e):
        if not e.params:
            return None
        kids = [T("["), B("")]
        for i, (k, v) in enumerate(e.params):
            if i:
                kids.append(B(" "))
            kids.append(C([T(k + "="), self.value_doc(v)]))
        return G(C([N(2, C(kids)), B(""), T("]")]))

    # core.suggest_same_var_names
    def suggest(self, for_vars, like):
        if len(for_vars) != len(like):
            return
        used = []
        for f, l in zip(for_vars, like):
            if isinstance(l, Lit) or isinstance(f, Lit) or f.name is not None:
                continue
            if any(u is l for u in used):
                continue
            used.append(l)
            f.name = self.name_of(l)

    def eqn_doc(self, e):
        if e.prim == "jit":
            body = dict(e.params)["jaxpr"]
            if isinstance(body, Jaxpr) and body.shared is None:
                self.suggest(body.invars, e.ins)
                self.suggest(body.outvars, e.outs)
        lhs = self.vars_doc(e.outs, "", True) if e.outs else None
        kv = self.params_doc(e)
        args = C([T(" "), self.vars_doc(e.ins, "", False)])
        if not e.outs:
            return C([T(e.prim), kv, args])
        return C([lhs, T(" = "), T(e.prim), kv, args])

    def head_doc(self, j):
        return C([T("{ "), T("lambda "), self.vars_doc(j.consts, "", True), T("; "),
                  self.vars_doc(j.invars, "", True), T(". "), T("let")])

    def outs_doc(self, j):
        return C([T("("), self.vars_doc(j.outvars, ",", False),
                  T(",)" if len(j.outvars) == 1 else ")")])

    def skeleton(self, head, eqns, outs):
        kids = [B(" ")]
        for i, d in enumerate(eqns):
            if i:
                kids.append(B("; "))
            kids.append(d)
        body = N(2, C(kids))
        g = G(N(2, C([head, body, B(" "), T("in "), outs])))
        return C([g, T(" }")])

    def jaxpr_doc(self, j):
        if j.shared is not None:
            return T(j.shared)
        head = self.head_doc(j)
        eqns = [self.eqn_doc(e) for e in j.eqns]
        return self.skeleton(head, eqns, self.outs_doc(j))

    def print_top_skeleton(self, j):
        """A top-level jaxpr, streamed one equation at a time."""
        f = self.f
        head = self.head_doc(j)
        limit = WIDTH - f.k
        w = head[1]
        built = []
        while len(built) < len(j.eqns) and w <= limit:
            d = self.eqn_doc(j.eqns[len(built)])
            w += (2 if built else 1) + d[1]
            built.append(d)
        if not j.eqns:
            w += 1
        if len(built) == len(j.eqns) and w <= limit:
            outs = self.outs_doc(j)
            w += 4 + outs[1]
            if w <= limit:
                f.fmt(self.skeleton(head, built, outs), 0, BREAK)
                return
        f.fmt(head, 2, BREAK)
        for i, e in enumerate(j.eqns):
            d = built[i] if i < len(built) else self.eqn_doc(e)
            f.newline(4)
            f.fmt(d, 4, BREAK)
        if not j.eqns:
            f.newline(4)
        f.newline(2)
        f.text("in ")
        f.fmt(self.outs_doc(j), 2, BREAK)
        f.text(" }")

    def find_shared(self, top):
        """pp_toplevel_jaxpr's breadth-first count of jaxpr uses."""
        info = {}  # id(jaxpr) -> [jaxpr, count, order, expanded, marked, name]

        def get(j):
            s = info.get(id(j))
            if s is None:
                s = info[id(j)] = [j, 0, -1, False, False, None]
            return s

        def subs_of(e):
            for _, v in e.params:
                if isinstance(v, Jaxpr):
                    yield v
                elif isinstance(v, tuple):
                    yield from v

        def mark(j):
            for e in j.eqns:
                for s in subs_of(e):
                    c = get(s)
                    if not c[4]:
                        c[4] = True
                        mark(s)

        queue = [top]
        order = 0
        qh = 0
        while qh < len(queue):
            j = queue[qh]
            qh += 1
            s = get(j)
            if s[2] < 0:
                s[2] = order
                order += 1
            s[1] += 1
            if j is not top and len(j.eqns) > 10:
                s[1] += 1
            if s[3]:
                mark(j)
                continue
            s[3] = True
            for e in j.eqns:
                subs = list(subs_of(e))
                if not subs:
                    continue
                name = dict(e.params).get("name")
                if name is not None:
                    name = name.strip("<>")
                for sub in subs:
                    queue.append(sub)
                    if name is not None:
                        c = get(sub)
                        if c[5] is None:
                            c[5] = name
        shared = sorted((s for s in info.values() if s[1] >= 2 or s[4]), key=lambda s: s[2])
        counts = {}
        result = []
        for s in shared:
            name = s[5] or "jaxpr"
            if counts.get(name, 0) > 0:
                n = counts[name]
                counts[name] = n + 1
                name = name + str(n)
                counts[name] = counts.get(name, 0) + 1
            else:
                counts[name] = 1
            s[0].shared = name
            self.shared_names.add(name)
            result.append(s[0])
        return result

    def print_program(self, top):
        # _dropvars: top-level outputs never used afterwards print as `_`
        for v in top.outvars:
            if isinstance(v, Var):
                v.used = True
        for e in reversed(top.eqns):
            for v in e.outs:
                if not v.used:
                    v.name = "_"
            for v in e.ins:
                if isinstance(v, Var):
                    v.used = True
        for j in self.find_shared(top):
            self.f.text("let " + j.shared + " = ")
            self.print_top_skeleton(j)
            self.f.text(" in")
            self.f.newline(0)
        self.print_top_skeleton(top)


# ---- the program ----

ACT = "f32[256@X,1024]"      # activations, batch-sharded
ACT_U = "f32[256@X,1024]{U:Y}"  # a partial sum over Y
ACT16 = "bf16[256@X,1024]"
HID = "f32[256@X,4096@Y]"    # the MLP's hidden layer
W1T = "f32[1024,4096@Y]"
W2T = "f32[4096@Y,1024]"
VEC = "f32[256@X]"           # per-example statistics
FEAT = "f32[1024]"
SCAL = "f32[]"
TILE = "f32[64@(X,Y),128]"
HALF = "f32[256@X,512]"
STEPS = "f32[8,256@X]"
IDX = "f32[256]"             # an iota, replicated

DN = "(([1], [0]), ([], []))"
UNARY = ["tanh", "exp", "logistic", "neg", "sin", "cos", "abs", "sqrt", "rsqrt", "log1p"]
BINARY = ["add", "sub", "mul", "max", "min", "div"]
FLOATS = ["0.5", "2.0", "1.0", "-1.0", "0.0", "1e-05", "0.7978845608028654", "0.044715",
          "3.0", "0.10000000149011612", "inf", "-inf", "1e+20"]


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.eqns = []  # the top-level jaxpr being built
        self.ntotal = 0
        self.hoisted = 0

    def emit(self, eqns, prim, ins, out_types, params=()):
        outs = [Var(t) for t in out_types]
        eqns.append(Eqn(outs, prim, list(params), ins))
        self.ntotal += 1
        return outs[0] if len(outs) == 1 else outs

    def lit(self, t="f32[]"):
        return Lit(self.rng.choice(FLOATS) + ":" + t)

    # inline bodies, built with fresh vars of their own (closed scopes)

    def gelu_body(self, t):
        e = []
        a = Var(t)
        b = self.emit(e, "integer_pow", [a], [t], [("y", "3")])
        c = self.emit(e, "mul", [b, Lit("0.044715:f32[]")], [t])
        d = self.emit(e, "add", [a, c], [t])
        f = self.emit(e, "mul", [d, Lit("0.7978845608028654:f32[]")], [t])
        g = self.emit(e, "tanh", [f], [t])
        h = self.emit(e, "add", [g, Lit("1.0:f32[]")], [t])
        i = self.emit(e, "mul", [a, h], [t])
        k = self.emit(e, "mul", [i, Lit("0.5:f32[]")], [t])
        return Jaxpr([], [a], e, [k])

    def relu_body(self, t):
        e = []
        a = Var(t)
        b = self.emit(e, "max", [a, Lit("0.0:f32[]")], [t])
        return Jaxpr([], [a], e, [b])

    def scan_body(self, long):
        e = []
        w, c, x = Var(FEAT), Var(ACT), Var(VEC)
        wb = self.emit(e, "broadcast_in_dim", [w], [ACT], [("broadcast_dimensions", "(1,)")])
        xb = self.emit(e, "broadcast_in_dim", [x], [ACT], [("broadcast_dimensions", "(0,)")])
        y = self.emit(e, "mul", [c, wb], [ACT])
        y = self.emit(e, "add", [y, xb], [ACT])
        for _ in range(8 if long else 2):
            y = self.emit(e, self.rng.choice(UNARY[:4]), [y], [ACT])
        s = self.emit(e, "reduce_sum", [y], [VEC], [("axes", "(1,)"), ("out_sharding", "None")])
        return Jaxpr([], [w, c, x], e, [y, s])

    def branch(self, op):
        e = []
        a, b = Var(ACT), Var(ACT)
        if op == "mul":
            c = self.emit(e, "mul", [a, Lit("2.0:f32[]")], [ACT])
        else:
            c = self.emit(e, op, [a, b], [ACT])
        return Jaxpr([], [a, b], e, [c])

    def mlp_block(self, relu_hid):
        """A hoisted function of more than ten equations."""
        e = []
        x, w1, w2, s = Var(ACT), Var(W1T), Var(W2T), Var(FEAT)
        y = self.layer_norm(e, x, s)
        h = self.emit(e, "dot_general", [y, w1], [HID], [("dimension_numbers", DN),
                                                         ("preferred_element_type", "float32")])
        h = self.emit(e, "jit", [h], [HID], [("name", "relu"), ("jaxpr", relu_hid)])
        o = self.emit(e, "dot_general", [h, w2], [ACT_U], [("dimension_numbers", DN),
                                                           ("preferred_element_type", "float32")])
        o = self.emit(e, "reshard", [o], [ACT])
        o = self.emit(e, "add", [x, o], [ACT])
        return Jaxpr([], [x, w1, w2, s], e, [o])

    def layer_norm(self, e, x, scale):
        m = self.emit(e, "reduce_sum", [x], [VEC], [("axes", "(1,)"), ("out_sharding", "None")])
        m = self.emit(e, "div", [m, Lit("1024.0:f32[]")], [VEC])
        mb = self.emit(e, "broadcast_in_dim", [m], [ACT], [("broadcast_dimensions", "(0,)")])
        c = self.emit(e, "sub", [x, mb], [ACT])
        sq = self.emit(e, "integer_pow", [c], [ACT], [("y", "2")])
        v = self.emit(e, "reduce_sum", [sq], [VEC], [("axes", "(1,)"), ("out_sharding", "None")])
        v = self.emit(e, "div", [v, Lit("1024.0:f32[]")], [VEC])
        v = self.emit(e, "add", [v, Lit("1e-05:f32[]")], [VEC])
        r = self.emit(e, "rsqrt", [v], [VEC])
        rb = self.emit(e, "broadcast_in_dim", [r], [ACT], [("broadcast_dimensions", "(0,)")])
        y = self.emit(e, "mul", [c, rb], [ACT])
        sb = self.emit(e, "broadcast_in_dim", [scale], [ACT], [("broadcast_dimensions", "(1,)")])
        return self.emit(e, "mul", [y, sb], [ACT])

    def program(self, mb):
        rng = self.rng
        e = self.eqns
        x = Var(ACT)
        ws = [(Var(W1T), Var(W2T), Var(FEAT)) for _ in range(4)]
        step = Var("i32[]")
        tile = Var(TILE)
        invars = [x] + [v for w in ws for v in w] + [step, tile]
        relu = self.relu_body(ACT)
        mlp = self.mlp_block(self.relu_body(HID))
        recent = [x]  # recent activations
        stats = []
        # the sizes added below are rough guesses of each block's text;
        # this factor makes the total come out near the size asked for
        target = mb * 1e6 * 1.16
        size = 0
        while size < target:
            w1, w2, s = rng.choice(ws)
            kind = rng.random()
            if kind < 0.18:
                x = self.layer_norm(e, x, s)
                size += 1000
            elif kind < 0.33:
                h = self.emit(e, "dot_general", [x, w1], [HID], [("dimension_numbers", DN),
                                                                 ("preferred_element_type", "float32")])
                h = self.emit(e, "jit", [h], [HID], [("name", "gelu"), ("jaxpr", self.gelu_body(HID))])
                o = self.emit(e, "dot_general", [h, w2], [ACT_U], [("dimension_numbers", DN),
                                                                   ("preferred_element_type", "float32")])
                o = self.emit(e, "reshard", [o], [ACT])
                x = self.emit(e, "add", [x, o], [ACT])
                size += 1100
            elif kind < 0.43:
                x = self.emit(e, "jit", [x, w1, w2, s], [ACT], [("name", "mlp_block"), ("jaxpr", mlp)])
                y = self.emit(e, "jit", [x], [ACT], [("name", "relu"), ("jaxpr", relu)])
                x = self.emit(e, "add", [x, y], [ACT])
                size += 150
            elif kind < 0.53:
                long = rng.random() < 0.15
                self.hoisted += long
                m = self.emit(e, "reduce_max", [x], [VEC], [("axes", "(1,)"), ("out_sharding", "None")])
                xs = self.emit(e, "broadcast_in_dim", [m], [STEPS], [("broadcast_dimensions", "(1,)")])
                outs = self.emit(e, "scan", [s, x, xs], [ACT, STEPS], [
                    ("_split_transpose", "False"), ("jaxpr", self.scan_body(long)), ("length", "8"),
                    ("linear", "(False, False, False)"), ("num_carry", "1"), ("num_consts", "1"),
                    ("reverse", "False"), ("unroll", "1")])
                x = outs[0]
                stats.append(outs[1])
                size += 700 if not long else 150
            elif kind < 0.62:
                p = self.emit(e, "reduce_max", [x], [SCAL], [("axes", "(0, 1)"), ("out_sharding", "None")])
                q = self.emit(e, "gt", [p, Lit("0.0:f32[]")], ["bool[]"])
                i = self.emit(e, "convert_element_type", [q], ["i32[]"],
                              [("new_dtype", "int32"), ("weak_type", "False")])
                ops = rng.sample(["mul", "add", "sub", "max"], 2)
                x = self.emit(e, "cond", [i, x, rng.choice(recent)], [ACT],
                              [("branches", tuple(self.branch(op) for op in ops))])
                size += 500
            elif kind < 0.70:
                # a split whose binder list wraps, and a concatenate whose operand list does
                parts = self.emit(e, "split", [x], [HALF] * 2, [("axis", "1"), ("sizes", "(512, 512)")])
                n = rng.randint(3, 9)
                us = [self.emit(e, rng.choice(UNARY), [parts[k % 2]], [HALF]) for k in range(n)]
                cat = self.emit(e, "concatenate", us + parts, [f"f32[256@X,{512 * (n + 2)}]"],
                                [("dimension", "1")])
                r = self.emit(e, "slice", [cat], [ACT], [("limit_indices", "(256, 1024)"),
                                                         ("start_indices", "(0, 0)"),
                                                         ("strides", "None")])
                many = self.emit(e, "split", [tile], [f"f32[64@(X,Y),{128 // 8}]"] * 8,
                                 [("axis", "1"), ("sizes", "(16, 16, 16, 16, 16, 16, 16, 16)")])
                t = self.emit(e, "concatenate", many, [TILE], [("dimension", "1")])
                if rng.random() < 0.5:
                    tile = t
                x = self.emit(e, "add", [x, r], [ACT])
                size += 900 + 80 * n
            elif kind < 0.75:
                ix = self.emit(e, "iota", [], ["i32[256]"], [("dimension", "0"), ("dtype", "int32"),
                                                            ("shape", "(256,)"),
                                                            ("sharding", "None")])
                fx = self.emit(e, "convert_element_type", [ix], [IDX],
                               [("new_dtype", "float32"), ("weak_type", "False")])
                st = self.emit(e, "convert_element_type", [step], [SCAL],
                               [("new_dtype", "float32"), ("weak_type", "False")])
                fx = self.emit(e, "mul", [fx, st], [IDX])
                stats.append(fx)
                size += 450
            else:
                # an elementwise chain with literals, through bfloat16 and back
                y = x
                for _ in range(rng.randint(3, 8)):
                    r = rng.random()
                    if r < 0.4:
                        y = self.emit(e, rng.choice(UNARY), [y], [ACT])
                    elif r < 0.7:
                        y = self.emit(e, rng.choice(BINARY), [y, self.lit()], [ACT])
                    elif r < 0.9:
                        y = self.emit(e, rng.choice(BINARY), [y, rng.choice(recent)], [ACT])
                    else:
                        y = self.emit(e, "convert_element_type", [y], [ACT16],
                                      [("new_dtype", "bfloat16"), ("weak_type", "False")])
                        y = self.emit(e, "convert_element_type", [y], [ACT],
                                      [("new_dtype", "float32"), ("weak_type", "False")])
                # statistics nobody reads print as `_`
                if rng.random() < 0.3:
                    self.emit(e, "reduce_max", [y], [VEC], [("axes", "(1,)"), ("out_sharding", "None")])
                x = y
                size += 330
            recent = (recent + [x])[-8:]
        outs = [x] + stats[-6:]
        return Jaxpr([], invars, e, outs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=10.0, help="approximate size in MB (10^6 bytes)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    g = Gen(random.Random(args.seed))
    top = g.program(args.mb)
    out = open(args.output, "w") if args.output != "-" else sys.stdout

    class Sink(list):
        """The printer's output, written out every 65536 pieces."""

        def append(self, s):
            list.append(self, s)
            if len(self) >= 65536:
                out.write("".join(self))
                self.clear()

    sink = Sink()
    Printer(sink).print_program(top)
    sink.append("\n")
    out.write("".join(sink))
    if out is not sys.stdout:
        out.close()
    print(f"gen_jaxpr: {g.ntotal} equations, {len(top.eqns)} at top level", file=sys.stderr)


if __name__ == "__main__":
    main()
