#!/usr/bin/env bash
# Installs mpcrs under PREFIX (default /usr/local):
# - bin/: mpcrs-run (also as mpirun and mpiexec), mpcrs-exec, mpcrs-ckpt,
#   mpcrs-ckptd (the checkpoint service), and
#   the compiler wrappers mpcrs-cc, mpcrs-cxx, mpcrs-fort with the names build
#   systems look for (mpicc; mpicxx, mpic++, mpiCC; mpifort, mpif90, mpif77);
# - lib/libmpi.so (also as libmpi.so.12 and libmpich.so.12, so binaries built
#   by MPICH's mpicc load it; libfti.so and libcraas.so: FTI's and CRaaS's
#   calls are libmpi's);
# - include/: mpi.h, fti.h, craas.h, mpif.h and the gfortran `mpi` module (mpi.mod);
# - lib/pkgconfig/: the names build systems probe (mpi, mpi-c, mpi-cxx,
#   mpi-fort, mpich, ompi, ompi-c, ompi-cxx, ompi-fort), and bin/pkg-config,
#   which puts them first when bin/ is first on PATH (Meson asks pkg-config
#   before it tries mpicc).
# Usage: scripts/install.sh [--from BUILD_DIR] [PREFIX]
#   --from BUILD_DIR  install what is already built there (target/release),
#                     without running cargo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

R=""
if [ "${1:-}" = "--from" ]; then
  [ $# -ge 2 ] || { echo "install.sh: --from needs a build directory" >&2; exit 2; }
  R=$2
  shift 2
fi
PREFIX=${1:-/usr/local}
if [ -z "$R" ]; then
  cargo build --release --workspace
  R=target/release
fi
for f in mpcrs-run mpcrs-exec mpcrs-cc mpcrs-cxx mpcrs-fort mpcrs-ckpt mpcrs-ckptd libmpi.so; do
  [ -e "$R/$f" ] || { echo "install.sh: $R/$f is missing (build the workspace first)" >&2; exit 1; }
done

install -d "$PREFIX/bin" "$PREFIX/lib/pkgconfig" "$PREFIX/include" "$PREFIX/share/mpcrs"
install -m 755 "$R/mpcrs-run" "$R/mpcrs-exec" "$R/mpcrs-cc" "$R/mpcrs-cxx" "$R/mpcrs-fort" \
  "$R/mpcrs-ckpt" "$R/mpcrs-ckptd" "$PREFIX/bin/"
for name in mpirun mpiexec; do ln -sf mpcrs-run "$PREFIX/bin/$name"; done
ln -sf mpcrs-cc "$PREFIX/bin/mpicc"
for name in mpicxx mpic++ mpiCC; do ln -sf mpcrs-cxx "$PREFIX/bin/$name"; done
for name in mpifort mpif90 mpif77; do ln -sf mpcrs-fort "$PREFIX/bin/$name"; done

install -m 755 "$R/libmpi.so" "$PREFIX/lib/"
ln -sf libmpi.so "$PREFIX/lib/libmpi.so.12"
ln -sf libmpi.so "$PREFIX/lib/libmpich.so.12"
# FTI's calls (fti.h) are libmpi's: -lfti finds them there.
ln -sf libmpi.so "$PREFIX/lib/libfti.so"
# And CRaaS's (craas.h): -lcraas.
ln -sf libmpi.so "$PREFIX/lib/libcraas.so"

install -m 644 mpi-abi/include/mpi.h mpi-abi/include/fti.h mpi-abi/include/craas.h "$PREFIX/include/"
# mpif.h and mpi.mod were made by the build (mpi-abi/build.rs), beside each other.
fortran_dir=""
for d in $("$R/mpcrs-fort" -showme:incdirs); do
  [ -f "$d/mpif.h" ] && fortran_dir=$d
done
[ -n "$fortran_dir" ] || { echo "install.sh: the build made no mpif.h" >&2; exit 1; }
install -m 644 "$fortran_dir/mpif.h" "$PREFIX/include/"
if [ -f "$fortran_dir/mpi.mod" ]; then
  install -m 644 "$fortran_dir/mpi.mod" "$PREFIX/include/"
else
  echo "install.sh: no mpi module (no gfortran when mpcrs was built): mpif.h only" >&2
fi
install -m 644 config/rails.xml "$PREFIX/share/mpcrs/"

version=$(cargo metadata --no-deps --format-version 1 --offline 2>/dev/null |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="mpcrs"))' ||
  sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
for name in mpi mpi-c mpi-cxx mpi-fort mpich ompi ompi-c ompi-cxx ompi-fort; do
  cat > "$PREFIX/lib/pkgconfig/$name.pc" <<PC
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: $name
Description: mpcrs, a thread-based MPI runtime (MPICH ABI)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lmpi
PC
done
# Meson asks pkg-config for ompi-c before it tries mpicc, and the system's
# Open MPI answers: with this bin/ first on PATH, this pkg-config puts mpcrs's
# .pc files (MPI names only) first, then runs the next pkg-config on PATH.
cat > "$PREFIX/bin/pkg-config" <<'SH'
#!/bin/sh
# pkg-config of mpcrs: mpcrs's MPI .pc files first, then the system's pkg-config.
here=$(cd "$(dirname "$0")" && pwd -P)
PKG_CONFIG_PATH="$here/../lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
IFS=:
for dir in $PATH; do
  [ -z "$dir" ] && continue
  [ "$(cd "$dir" 2>/dev/null && pwd -P)" = "$here" ] && continue
  if [ -x "$dir/pkg-config" ]; then exec "$dir/pkg-config" "$@"; fi
done
echo "pkg-config (mpcrs): no other pkg-config on PATH" >&2
exit 127
SH
chmod 755 "$PREFIX/bin/pkg-config"
echo "installed mpcrs $version under $PREFIX"
