#!/bin/sh
# merged.sh: runs a command with its stderr on its stdout.  mpirun forwards
# a rank's stdout and stderr through separate pipes, so their order is lost
# on the way; the MPI tests compare the merged output in order.
exec "$@" 2>&1
