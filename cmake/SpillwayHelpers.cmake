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
# docs/architecture.md); listing them here is what lets the link enforce it.
function(spillway_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target spillway_${name})
  add_library(${target} ${ARG_SOURCES})
  add_library(spillway::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
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

# spillway_add_benchmark(<module> <name> SOURCES ... [LIBS ...])
#
# Builds bench/<module>/bench_<name>.cpp into spillway_bench_<name>. A
# benchmark prints its headline figures as `METRIC <name> <value> <unit>`.
function(spillway_add_benchmark module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  set(target spillway_bench_${name})
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  spillway_set_warnings(${target})
  set_property(GLOBAL APPEND PROPERTY SPILLWAY_BENCHMARKS ${target})
endfunction()
