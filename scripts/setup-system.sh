#!/usr/bin/env bash
# Installs the system packages mpcrs builds and tests against (Debian/Ubuntu).
# Idempotent: does nothing when everything is present. Called by the README's
# commands and by .ci/run; never needs to be run by hand.
set -euo pipefail

packages=(
  pkg-config libhwloc-dev hwloc libclang-dev clang   # hwloc2 and bindgen
  gcc g++ libgomp1                                   # C/C++ programs, OpenMP tests, mpcrs-exec's TLS reservation
  gfortran                                           # Fortran bindings' mpi module, Fortran tests
  meson ninja-build autoconf automake libtool        # build-system tests against an installed tree
  openmpi-bin libopenmpi-dev mpich libmpich-dev      # peers for side-by-side benchmarks
  iproute2 procps util-linux                         # netns hosts, /proc readers, setpriv in tests
  cmake libibverbs-dev libnl-3-dev libnl-route-3-dev # the ibverbs rail (cargo feature)
  libhdf5-mpich-dev                                  # parallel HDF5 over MPI-IO (tests/c/hdf5_io.c)
  slurm-wlm munge                                    # a real single-node Slurm (tests/tests/slurm.rs)
  python3 python3-venv                               # mpi4py from PyPI in a virtualenv (tests/tests/mpi4py.rs)
)

# Rust toolchain: the machine's own (rustup); nothing to install here.
command -v cargo >/dev/null || { echo "mpcrs setup: cargo is required (rustup.rs)" >&2; exit 1; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "mpcrs setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
