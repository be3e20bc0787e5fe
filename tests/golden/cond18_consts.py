# cond18_consts: lax.cond, lax.switch and jnp.piecewise whose branches each
# build their own constant arrays (np.array / jnp.array inside a branch).
# How the expected output was checked: the branches' consts are joined as
# common.py's _merge_common_consts joins them -- cond traces true_fun, then
# false_fun, and concatenates their consts in that order (switch: branch 0,
# 1, ...), drops repeats of one value (by identity), and every branch jaxpr
# takes all of them, its own where they fall and an unused input for each
# of the others'; the consts are cond's operands after the index.  The
# printed jaxprs were read against that rule (which const each branch reads,
# in which position); the values were computed with numpy by hand
# (x + [1, 2], x * [3, 4], ... per row, piecewise per element, gradients the
# constant factors; cond(..., operand=(1., 2.)) is 1 + 2 or 1).
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

# the reported cases
pw = lambda x: jnp.piecewise(x, [x < 1], [lambda x: x * np.array([1., 2.])[0], lambda x: x + np.array([3., 4.])[1]])
pj = lambda x: jnp.piecewise(x, [x < 1], [lambda x: x * jnp.array([1., 2.])[1], lambda x: x + jnp.array([3., 4.])[0]])
xs = jnp.array([0.5, 1.5, 2.0])
print(pw(xs), pw(0.5), pw(1.5), jax.jit(pw)(xs), jax.vmap(pw)(xs))
print(pj(xs), pj(0.5), pj(1.5), jax.jit(pj)(1.5))
print(jax.grad(pw)(0.5), jax.grad(pw)(1.5), jax.grad(pj)(0.5), jax.vmap(jax.grad(pj))(xs))
print(jax.make_jaxpr(pj)(0.5))

g = lambda p, x: lax.cond(p, lambda x: x + jnp.array([1., 2.]), lambda x: x * jnp.array([3., 4.]), x)
y = jnp.array([1., 2.])
print(g(True, y), g(False, y), jax.jit(g)(True, y), jax.jit(g)(False, y))
print(jax.vmap(g)(jnp.array([True, False]), jnp.array([[1., 2.], [3., 4.]])))
print(jax.grad(lambda x: g(False, x).sum())(y), jax.grad(lambda x: g(True, x).sum())(y))
print(jax.make_jaxpr(g)(True, y))

# a branch closing over traced values and building a const: the consts of
# true_fun (y, then the array) come before false_fun's (z, y)
def f(p, x, y, z):
    return lax.cond(p, lambda x: x + y + jnp.array([1., 2.]), lambda x: x * z * y, x)
a = jnp.array([1., 2.]); b = jnp.array([3., 4.]); c = jnp.array([5., 6.])
print(jax.jit(f)(True, a, b, c), jax.jit(f)(False, a, b, c))
print(jax.make_jaxpr(f)(True, a, b, c))

# switch: three branches, three consts
h = lambda i, x: lax.switch(i, [lambda x: x + jnp.array([1., 2.]), lambda x: x * jnp.array([3., 4.]),
                                lambda x: x - np.array([5., 6.], np.float32)], x)
print(h(0, y), h(1, y), h(2, y), jax.jit(h)(2, y), jax.vmap(h)(jnp.array([0, 2]), jnp.stack([y, y])))
print(jax.grad(lambda x: h(1, x).sum())(y))
print(jax.make_jaxpr(h)(1, y))

# nested: the inner cond's consts are captured by the outer true_fun
def n(p, q, x):
    inner = lambda x: lax.cond(q, lambda x: x + jnp.array([1., 2.]), lambda x: x - jnp.array([7., 8.]), x)
    return lax.cond(p, inner, lambda x: x * jnp.array([3., 4.]), x)
print(n(True, False, a), n(True, True, a), n(False, True, a), jax.jit(n)(True, False, a))
print(jax.vmap(n)(jnp.array([True, True, False]), jnp.array([True, False, True]), jnp.stack([a, b, c])))
print(jax.make_jaxpr(n)(True, False, a))

# cond's operand= keyword (one operand, as JAX's operands = (operand,)) and
# JAX's error when positional operands come with it
print(lax.cond(True, lambda u: u[0] + u[1], lambda u: u[0], operand=(1., 2.)),
      lax.cond(False, lambda u: u[0] + u[1], lambda u: u[0], operand=(1., 2.)))
try:
    lax.cond(False, lambda u: u, lambda u: u, 3., operand=(1., 2.))
except TypeError as e:
    print(e)
