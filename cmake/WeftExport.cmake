# The weft CMake package (find_package(weft)): targets weft::weft and weft::sdk, installed to
# <libdir>/cmake/weft and exported from the build tree (<build>/weftConfig.cmake), so that
# out-of-tree projects (samples/custom_op) configure against either. Included by the top-level
# CMakeLists.txt after every target exists.
include(CMakePackageConfigHelpers)
set_target_properties(weft_sdk PROPERTIES EXPORT_NAME sdk)
set_target_properties(weft_headers PROPERTIES EXPORT_NAME headers)
set_target_properties(weft PROPERTIES EXPORT_NAME weft)
install(TARGETS weft_headers EXPORT weftTargets)
set(_weft_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${_weft_cmake_dir})
export(EXPORT weftTargets NAMESPACE weft:: FILE ${CMAKE_BINARY_DIR}/weftTargets.cmake)
configure_file(${CMAKE_CURRENT_LIST_DIR}/weftConfig.cmake.in ${CMAKE_BINARY_DIR}/weftConfig.cmake @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/weftConfig.cmake ${CMAKE_BINARY_DIR}/weftConfigVersion.cmake
  DESTINATION ${_weft_cmake_dir})
