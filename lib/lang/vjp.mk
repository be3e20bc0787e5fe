## vjp.mk: build fragment, included by Makefile.am
## First-class VJP objects (lib/lang/vjp_api.c), their files (vjp_io.c),
## jax.custom_vjp (custom_vjp.c), and the optimization pass over jaxprs
## that jit(...).lower(...).compile() and :optimize show (lib/opt/).

lib_libshardrepl_a_SOURCES += \
	lib/lang/vjp.h lib/lang/vjp_api.c lib/lang/custom_vjp.c \
	lib/opt/opt.h lib/opt/opt.c

## Golden scripts: the seed walkthrough and the bad-input cases.
VJP_GOLDEN =
TESTS += $(VJP_GOLDEN)
EXTRA_DIST += $(VJP_GOLDEN) $(VJP_GOLDEN:.jxr=.out)
