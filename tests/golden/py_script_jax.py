# A *.py file is a Python script, as JAX runs it: what it uses of JAX comes
# from its imports (nothing is predefined), and its bare expressions --
# the docstring, a bare jax.set_mesh(...), x.block_until_ready() -- print
# nothing.  Expected output: what this prints under JAX 0.11 (the values
# by hand: arange(8) doubled, its sum; the mesh as jax prints it).
"""Doubles a sharded vector."""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P, NamedSharding

mesh = jax.make_mesh((4,), ('X',))
jax.set_mesh(mesh)
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P('X')))
y = jax.jit(lambda v: 2 * v)(x)
y.block_until_ready()
y
jnp.sum(y)


def main():
    print(y)
    print(jnp.sum(y))
    print(y.sharding.spec)


if __name__ == "__main__":
    main()
