## numpy.mk: build fragment, included by Makefile.am
