# Installs the libraries, their headers, the CLI and a CMake package so that
# consumers can write `find_package(spillway CONFIG REQUIRED)` and link
# `spillway::spillway` (every module) or one module such as `spillway::memory`.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(spillway_modules GLOBAL PROPERTY SPILLWAY_MODULES)
add_library(spillway INTERFACE)
add_library(spillway::spillway ALIAS spillway)
target_link_libraries(spillway INTERFACE ${spillway_modules})

install(TARGETS spillway ${spillway_modules} EXPORT spillwayTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/spillway DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT spillwayTargets NAMESPACE spillway:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/spillway)

configure_package_config_file(cmake/spillwayConfig.cmake.in
  ${PROJECT_BINARY_DIR}/spillwayConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/spillway)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/spillwayConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/spillwayConfig.cmake ${PROJECT_BINARY_DIR}/spillwayConfigVersion.cmake
  cmake/SpillwayDependencies.cmake cmake/SpillwayArrow.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/spillway)
