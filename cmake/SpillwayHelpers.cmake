# Functions that declare spillway's modules, tests and benchmarks the same way.

# Compiler warnings for spillway's own code.
function(spillway_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
  if(SPILLWAY_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# spillway_add_module(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
#
# Declares the library of one module (src/<name>/) as target spillway_<name>,
# aliased spillway::<name>. A module may link only the modules below it (see
# docs/architecture.md). In the build, each module exports an include tree
# of its own that holds only include/spillway/<name>/, and compiles with a
# private tree that holds only src/<name>/: its code, and the code of its
# users, sees the headers of the modules it links and no others, so an
# include of a module it does not link fails to compile.
function(spillway_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target spillway_${name})
  add_library(${target} ${ARG_SOURCES})
  add_library(spillway::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} POSITION_INDEPENDENT_CODE ON)
  set(public_tree ${PROJECT_BINARY_DIR}/module_include/${name})
  set(private_tree ${PROJECT_BINARY_DIR}/module_src/${name})
  file(MAKE_DIRECTORY ${public_tree}/spillway ${private_tree})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/spillway/${name} ${public_tree}/spillway/${name} SYMBOLIC)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${name} ${private_tree}/${name} SYMBOLIC)
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${public_tree}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${private_tree})
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  spillway_set_warnings(${target})
  set_property(GLOBAL APPEND PROPERTY SPILLWAY_MODULES ${target})
endfunction()

# spillway_add_tests(<module> SOURCES ... [LIBS ...] [LABELS ...])
#
# Builds tests/<module>/ into one GoogleTest binary, spillway_<module>_tests,
# and registers each test with ctest under the label <module> (and LABELS).
function(spillway_add_tests module)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  set(target spillway_${module}_tests)
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS} spillway_test_common GTest::gmock GTest::gtest_main)
  spillway_set_warnings(${target})
  gtest_discover_tests(${target}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${module};${ARG_LABELS}" TIMEOUT 300)
endfunction()

# spillway_add_benchmark(<name> SOURCES ... [LIBS ...])
#
# Builds SOURCES into spillway_bench_<name>. A benchmark prints its headline
# figures as `METRIC <name> <value> <unit>`.
function(spillway_add_benchmark name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  set(target spillway_bench_${name})
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  # Every benchmark reports through bench/metric.hpp.
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/bench)
  spillway_set_warnings(${target})
endfunction()

# spillway_add_mpi_tests(<module>)
#
# Runs spillway_<module>_tests again under mpirun with 2, 3 and 4 processes,
# as the ctest entries <module>_mpi_np<N>, when MPI was found. The binary then
# runs only its Mpi/* suites (SPILLWAY_TEST_COMMUNICATOR=mpi; see
# tests/comm/communicator_testing.hpp). The entries are labelled `mpi`, not
# <module>, because the tsan preset must not run MPI. --allow-run-as-root
# because CI runs as root; --oversubscribe because CI has 2 cores. Shared
# memory only (vader) and without its single-copy mechanism (CMA), which
# containers often forbid: robust, and fast enough for tests. Under ASan,
# OpenMPI's own leaks are suppressed by name, which needs full malloc stacks
# (see tests/sanitizers/lsan.supp).
function(spillway_add_mpi_tests module)
  if(NOT MPI_CXX_FOUND)
    return()
  endif()
  foreach(np 2 3 4)
    add_test(NAME ${module}_mpi_np${np}
      COMMAND ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe ${MPIEXEC_NUMPROC_FLAG} ${np}
        ${MPIEXEC_PREFLAGS} $<TARGET_FILE:spillway_${module}_tests> ${MPIEXEC_POSTFLAGS} --gtest_filter=Mpi/*)
    set_tests_properties(${module}_mpi_np${np} PROPERTIES
      LABELS mpi
      PROCESSORS ${np}
      TIMEOUT 300
      ENVIRONMENT "SPILLWAY_TEST_COMMUNICATOR=mpi;OMPI_MCA_btl=self,vader;OMPI_MCA_btl_vader_single_copy_mechanism=none;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/sanitizers/lsan.supp:fast_unwind_on_malloc=0")
  endforeach()
endfunction()
