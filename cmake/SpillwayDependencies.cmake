# Finds the Debian packages that scripts/setup installs. README.md says why
# each one is needed.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
# memory/: spill-file checksums (xxHash) and the optional spill codecs.
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
# comm/: the MPI backend, built when an MPI with C++ support is found
# (scripts/setup installs Debian's OpenMPI). Only the C API is used, so the
# deprecated C++ bindings are skipped.
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI COMPONENTS CXX)
