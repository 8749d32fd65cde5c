# Install rules: the library, its headers and a CMake package config, so that a C or C++
# tool's find_package(zehal) gives zehal::zehal. Inside a wheel everything lands under
# site-packages/zehal (see pyproject.toml), where zehal.get_include() and
# zehal.get_cmake_dir() point.
include(CMakePackageConfigHelpers)

if(SKBUILD)
  set(ZEHAL_LIBDIR lib)
  set(ZEHAL_INCLUDEDIR include)
else()
  set(ZEHAL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
  set(ZEHAL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
endif()
set(ZEHAL_CMAKEDIR ${ZEHAL_LIBDIR}/cmake/zehal)

# libzehal.so and the core library it links (one file each: no links to copy into a wheel).
install(TARGETS zehal zehal_core EXPORT zehalTargets
  LIBRARY DESTINATION ${ZEHAL_LIBDIR}
  INCLUDES DESTINATION ${ZEHAL_INCLUDEDIR})

# The Level Zero driver beside the library (zehal.ze_driver_path() finds it there).
if(TARGET ze_zehal)
  install(TARGETS ze_zehal LIBRARY DESTINATION ${ZEHAL_LIBDIR})
endif()

# The MPI library of traced native programs beside it (zehal trace preloads it from there).
if(TARGET zehal_mpi)
  install(TARGETS zehal_mpi LIBRARY DESTINATION ${ZEHAL_LIBDIR})
endif()

# The SPIR-V translator's process beside the core library (cpp/compiler/spirv_reader.hpp).
if(TARGET zehal_spirv_reader)
  install(TARGETS zehal_spirv_reader RUNTIME DESTINATION ${ZEHAL_LIBDIR})
endif()

# One include root: the public headers of include/, and nothing else.
install(DIRECTORY include/ DESTINATION ${ZEHAL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

install(EXPORT zehalTargets NAMESPACE zehal:: DESTINATION ${ZEHAL_CMAKEDIR})
configure_package_config_file(cmake/zehalConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/zehalConfig.cmake INSTALL_DESTINATION ${ZEHAL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/zehalConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zehalConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/zehalConfigVersion.cmake DESTINATION ${ZEHAL_CMAKEDIR})
