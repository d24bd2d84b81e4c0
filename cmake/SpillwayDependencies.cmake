# Finds the Debian packages that scripts/setup installs. README.md says why
# each one is needed.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
# oneTBB is the reference scheduler the exec/ benchmarks measure against; no
# library links it, so consumers of the installed package do not need it.
if(SPILLWAY_BUILD_BENCHMARKS)
  find_package(TBB REQUIRED)
endif()
