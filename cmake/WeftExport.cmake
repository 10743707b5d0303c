# The weft CMake package (find_package(weft)): targets weft::weft (libweft and its public headers)
# and weft::sdk (the header-only plugin SDK), plus the function weft_add_plugin(). Installed to
# <libdir>/cmake/weft and exported from the build tree (<build>/weftConfig.cmake), so that
# out-of-tree projects (samples/) configure against either. Included by the top-level
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
# weft_add_plugin() and its version script sit next to weftConfig.cmake in both places.
configure_file(${CMAKE_CURRENT_LIST_DIR}/WeftPlugin.cmake ${CMAKE_BINARY_DIR}/WeftPlugin.cmake COPYONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/plugin.map ${CMAKE_BINARY_DIR}/plugin.map COPYONLY)
install(FILES ${CMAKE_BINARY_DIR}/weftConfig.cmake ${CMAKE_BINARY_DIR}/weftConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/WeftPlugin.cmake ${CMAKE_CURRENT_LIST_DIR}/plugin.map
  DESTINATION ${_weft_cmake_dir})
