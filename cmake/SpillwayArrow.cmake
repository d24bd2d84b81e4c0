# Finds Apache Arrow C++ and Parquet, which io/ reads and writes files with:
# a system installation if CMake finds one (find_package(Arrow CONFIG) and
# Parquet), else the headers and shared libraries of the pyarrow wheel in the
# Python environment of SPILLWAY_ARROW_PYTHON (by default the project's
# .venv, which scripts/setup creates, or under pip the Python that builds the
# package). Sets SPILLWAY_ARROW_LIBRARIES to the
# targets to link, and SPILLWAY_ARROW_LIBRARY_DIR to the wheel's library
# directory (empty for a system Arrow), which installed programs need on
# their run path.
if(DEFINED SPILLWAY_ARROW_LIBRARIES)
  return()
endif()

find_package(Arrow CONFIG QUIET)
find_package(Parquet CONFIG QUIET)
if(Arrow_FOUND AND Parquet_FOUND)
  set(SPILLWAY_ARROW_LIBRARIES Arrow::arrow_shared Parquet::parquet_shared)
  set(SPILLWAY_ARROW_LIBRARY_DIR "")
  message(STATUS "spillway: Arrow ${Arrow_VERSION} from the system")
  return()
endif()

if(NOT SPILLWAY_ARROW_PYTHON AND DEFINED SKBUILD)
  # pip install .: the Python that builds the package has the pinned pyarrow.
  set(SPILLWAY_ARROW_PYTHON "${Python_EXECUTABLE}")
elseif(NOT SPILLWAY_ARROW_PYTHON)
  set(SPILLWAY_ARROW_PYTHON "${CMAKE_CURRENT_LIST_DIR}/../.venv/bin/python")
endif()
execute_process(
  COMMAND "${SPILLWAY_ARROW_PYTHON}" -c
    "import pyarrow as pa; print(pa.__version__); print(pa.get_include()); print(pa.get_library_dirs()[0])"
  OUTPUT_VARIABLE pyarrow_description OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE pyarrow_result ERROR_QUIET)
if(NOT pyarrow_result EQUAL 0)
  message(FATAL_ERROR "Apache Arrow C++ was not found: no system Arrow (find_package(Arrow CONFIG)), and no "
    "pyarrow in ${SPILLWAY_ARROW_PYTHON}. Run scripts/setup, which installs the pinned pyarrow into .venv, "
    "or set SPILLWAY_ARROW_PYTHON to a Python that has pyarrow.")
endif()
string(REPLACE "\n" ";" pyarrow_description "${pyarrow_description}")
list(GET pyarrow_description 0 pyarrow_version)
list(GET pyarrow_description 1 pyarrow_include)
list(GET pyarrow_description 2 pyarrow_library_dir)

# spillway_arrow_wheel_library(<target> <name>): the wheel's lib<name>.so.<N> as an imported target.
function(spillway_arrow_wheel_library target name)
  file(GLOB candidates "${pyarrow_library_dir}/lib${name}.so.[0-9]*")
  list(FILTER candidates INCLUDE REGEX "lib${name}\\.so\\.[0-9]+$")
  if(NOT candidates)
    message(FATAL_ERROR "the pyarrow wheel in ${pyarrow_library_dir} has no lib${name}.so.N; run scripts/setup")
  endif()
  list(GET candidates 0 library)
  add_library(${target} SHARED IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${library}"
    INTERFACE_INCLUDE_DIRECTORIES "${pyarrow_include}")
endfunction()
spillway_arrow_wheel_library(spillway_wheel_arrow arrow)
spillway_arrow_wheel_library(spillway_wheel_arrow_compute arrow_compute)
spillway_arrow_wheel_library(spillway_wheel_parquet parquet)
set(SPILLWAY_ARROW_LIBRARIES spillway_wheel_parquet spillway_wheel_arrow_compute spillway_wheel_arrow)
set(SPILLWAY_ARROW_LIBRARY_DIR "${pyarrow_library_dir}")
message(STATUS "spillway: Arrow ${pyarrow_version} from the pyarrow wheel in ${pyarrow_library_dir}")
