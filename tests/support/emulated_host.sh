#!/bin/sh
# Runs one MPI process as if on its own host "emulated-host-<rank>": a new UTS
# namespace (unshare, needs root) with its own host name, which is what
# MPI_Get_processor_name, and so DRUM's machine model, sees. Open MPI only
# (OMPI_COMM_WORLD_RANK). Exits 77 (CTest: skipped) when unshare is not allowed.
#   mpiexec -n 2 emulated_host.sh PROGRAM ARGS...
unshare --uts true 2>/dev/null || { echo "emulated_host.sh: unshare --uts not allowed (needs root)" >&2; exit 77; }
exec unshare --uts sh -c 'hostname "emulated-host-${OMPI_COMM_WORLD_RANK:?Open MPI only}" && exec "$@"' \
  emulated_host.sh "$@"
