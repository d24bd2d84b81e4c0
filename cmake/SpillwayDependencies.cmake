# Finds the Debian packages that scripts/setup installs. README.md says why
# each one is needed.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
# memory/ and table/: checksums and row hashes (xxHash); memory/: the optional spill codecs.
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# memory/: where libxxhash was built with its x86 dispatcher (Debian's is),
# spill checksums use it: AVX2 or AVX-512, chosen at run time, instead of the
# SSE2 code the library's plain functions are built with.
include(CheckSymbolExists)
set(CMAKE_REQUIRED_LIBRARIES PkgConfig::XXHASH)
check_symbol_exists(XXH3_64bits_dispatch "xxh_x86dispatch.h" SPILLWAY_HAVE_XXH_DISPATCH)
unset(CMAKE_REQUIRED_LIBRARIES)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
# comm/: the MPI backend, built when an MPI with C++ support is found
# (scripts/setup installs Debian's OpenMPI). Only the C API is used, so the
# deprecated C++ bindings are skipped.
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI COMPONENTS CXX)
# io/: Parquet and Arrow IPC files, through Apache Arrow C++.
include("${CMAKE_CURRENT_LIST_DIR}/SpillwayArrow.cmake")
