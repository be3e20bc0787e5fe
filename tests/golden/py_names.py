# oracle: python
# args: -k
# exit: 1
# In a *.py file nothing is predefined beyond Python's built-ins: jnp, np,
# jax, P and JAX's functions come from the file's imports, as under
# CPython, and an undefined name is NameError with CPython's "Did you
# mean" where its suggestion algorithm finds a near name (locals first,
# then globals, then the built-ins).  -k goes on after each error.
x = 1.0
sin(x)
jnp.sin(x)
P('X')
prnt(x)
lenght = len([1, 2])
lengt
counter = 0
def bump(amount):
    return countr + amout
bump(1)
def scaled(value, factor):
    return valeu * factor
scaled(2, 3)
math.pi
import math
print(math.pi)
print(__name__ == "__main__", abs(-2), max(1, 2))
abs_ = abss(-1)
