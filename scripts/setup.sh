#!/usr/bin/env bash
# Installs every Debian 12 package flexmpi needs to build, test, run its demos
# and plot its traces. Idempotent: apt-get only runs when a package is
# missing, so a second run takes a fraction of a second. Run as root, or as
# a user who may sudo.
#
#   bash scripts/setup.sh            # install what is missing
#   bash scripts/setup.sh --check    # only report what is missing (exit 1 if anything)
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config git ccache
  # Fortran: the flexmpi and flexmpi_f08 modules, their examples and the Fortran Jacobi
  gfortran
  # static checks of scripts/lint.sh (format, function size)
  clang-format clang-tidy
  # MPI: Open MPI is the reference (spawning works); MPICH is tested too
  openmpi-bin libopenmpi-dev
  mpich libmpich-dev
  # numerical and machine-model libraries (partitioners, policies, DRUM)
  libgsl-dev libglpk-dev libhwloc-dev libcminpack-dev libpugixml-dev
  # checkpoints: parallel HDF5 for each MPI, h5dump, h5py to read them in tests
  libhdf5-openmpi-dev libhdf5-mpich-dev hdf5-tools python3-h5py
  # the PMPI test of an mpi4py program (its blocking receive is MPI time)
  python3-mpi4py
  # DRUM's link capacity: the rate tc shapes a link to, read through rtnetlink
  libnl-route-3-dev
  # flexmpi-drum-config's capability benchmark (dgesv) and the Zoltan example of DRUM
  liblapack-dev libtrilinos-zoltan-dev
  # C++ libraries used by the library and the tools
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  # hardware counters (optional at run time: the library says when there are none)
  libpapi-dev papi-tools
  # flexmpi-plot
  python3 python3-matplotlib
  # outside load and core pinning for the non-dedicated experiments
  stress-ng util-linux
  # a local Slurm cluster for the slurm resource manager (scripts/slurm-local.sh)
  munge slurmctld slurmd slurm-client
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "${package}" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("${package}")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi
echo "setup: missing packages: ${missing[*]}"
if [[ "${1:-}" == "--check" ]]; then
  exit 1
fi

if ((EUID == 0)); then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "setup: installing packages needs root: run 'sudo bash scripts/setup.sh' or as root" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  "${missing[@]}" </dev/null
echo "setup: installed ${missing[*]}"
