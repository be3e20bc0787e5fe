# args: --jxr
# --jxr runs a *.py file as a .jxr script: JAX's names predefined (sin,
# jnp), bare expressions echo.  Expected: JAX 0.11's values and reprs.
1 + 1
jnp.arange(3)
print(sin(0.0))
