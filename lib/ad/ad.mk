## ad.mk: build fragment, included by Makefile.am
## Autodiff (lib/ad): JVP and transpose rules, linearization, the
## language's jax.grad family and the REPL's :grad commands.

lib_libshardrepl_a_SOURCES += \
	lib/ad/ad.c lib/ad/ad.h lib/ad/ad_rules.h lib/ad/ad_ops.c \
	lib/ad/ad_elementwise.c lib/ad/ad_structural.c \
	lib/ad/ad_collectives.c lib/ad/ad_calls.c lib/ad/ad_scan.c \
	lib/ad/ad_shard_map.c \
	lib/ad/ad_commands.c lib/lang/ad_api.c
