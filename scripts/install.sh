#!/usr/bin/env bash
# Installs mpcrs under PREFIX (default /usr/local): bin/ (mpcrs-run, mpcrs-exec, mpcrs-ckpt,
# mpcrs-cc, mpcrs-cxx and the mpicc/mpicxx names), lib/libmpi.so (also as
# libmpi.so.12 and libmpich.so.12, so binaries built by MPICH's mpicc load it),
# libfti.so (FTI's calls, in libmpi), include/mpi.h and fti.h, and pkg-config files. Usage: scripts/install.sh [PREFIX]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PREFIX=${1:-/usr/local}

cargo build --release --workspace
R=target/release
install -d "$PREFIX/bin" "$PREFIX/lib/pkgconfig" "$PREFIX/include"
install -m 755 $R/mpcrs-run $R/mpcrs-exec $R/mpcrs-cc $R/mpcrs-cxx $R/mpcrs-ckpt "$PREFIX/bin/"
ln -sf mpcrs-cc "$PREFIX/bin/mpicc"
ln -sf mpcrs-cxx "$PREFIX/bin/mpicxx"
install -m 755 $R/libmpi.so "$PREFIX/lib/"
ln -sf libmpi.so "$PREFIX/lib/libmpi.so.12"
ln -sf libmpi.so "$PREFIX/lib/libmpich.so.12"
# FTI's calls (fti.h) are libmpi's: -lfti finds them there.
ln -sf libmpi.so "$PREFIX/lib/libfti.so"
install -m 644 mpi-abi/include/mpi.h mpi-abi/include/fti.h "$PREFIX/include/"
install -d "$PREFIX/share/mpcrs"
install -m 644 config/rails.xml "$PREFIX/share/mpcrs/"
version=$(cargo metadata --no-deps --format-version 1 | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="mpcrs"))')
for name in mpcrs mpi; do
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
echo "installed mpcrs $version under $PREFIX"
