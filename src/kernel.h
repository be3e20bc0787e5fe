/* kernel.h: shardrepl as a Jupyter kernel (kernel.c, built when configure
 * finds libzmq, jansson and libcrypto) and its kernel spec
 * (kernelspec.c, always built). */
#ifndef SR_SRC_KERNEL_H
#define SR_SRC_KERNEL_H

#include "py/interp.h"

/* Serves the Jupyter messaging protocol (5.3) on the sockets the
   connection file names, running each execute_request as a cell of I's
   session (cell.h), until a shutdown_request.  Returns 0, or 1 when the
   connection file cannot be read or a socket cannot be bound (said on
   stderr). */
int sr_kernel_run(SrInterp *I, const char *connection_file);

/* Writes the kernel spec kernels/shardrepl/kernel.json (argv: this
   program, --kernel -f {connection_file}, and --ranks P when ranks > 0)
   under Jupyter's data directory: with user, the user's
   ($JUPYTER_DATA_DIR, else ~/.local/share/jupyter); with prefix,
   PREFIX/share/jupyter; else /usr/local/share/jupyter, as `python -m
   ipykernel install` does.  argv0 is found on PATH when it has no slash.
   Returns 0, or 1 with the reason on stderr. */
int sr_kernel_install(const char *argv0, int user, const char *prefix, int ranks);

#endif
