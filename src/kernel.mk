## kernel.mk: build fragment, included by Makefile.am
## Notebooks: running a cell with its outputs captured (src/cell.c),
## --notebook for MyST lessons (src/notebook.c), the Jupyter kernel
## (src/kernel.c, only when configure found libzmq, jansson and
## libcrypto) and its kernel spec (src/kernelspec.c), and their tests.

src_shardrepl_SOURCES += src/cell.c src/cell.h src/notebook.c src/notebook.h \
	src/kernel.h src/kernelspec.c
if HAVE_KERNEL
src_shardrepl_SOURCES += src/kernel.c
src_shardrepl_CPPFLAGS = $(AM_CPPFLAGS) $(KERNEL_CFLAGS)
src_shardrepl_LDADD += $(KERNEL_LIBS) -lpthread
endif

## The seeds' MyST notebooks through --notebook, against their expected
## documents (tests/notebook/*.md, *.out); the kernel through
## jupyter_client (skipped, 77, without the kernel or the client).
TESTS += tests/notebook.sh tests/kernel.sh
EXTRA_DIST += src/kernel.mk tests/notebook.sh tests/kernel.sh tests/kernel_test.py \
	tests/notebook/lesson.md tests/notebook/lesson.out tests/notebook/seed000.md \
	tests/notebook/seed000.out tests/notebook/seed004.md tests/notebook/seed004.out

## :save and :history (lib/cmd/session.c)
GOLDEN_TESTS += tests/golden/session_save.jxr
