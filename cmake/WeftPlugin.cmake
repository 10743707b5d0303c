# weft_add_plugin(<target> SOURCES <src>... [LINK <libs>...] [OUTPUT_DIR <dir>] [NO_INSTALL])
#
# Builds a weft plugin: a MODULE library that sees only sdk/ (never core), exports exactly the
# entry symbol (hidden visibility + a linker version script), and resolves every symbol at link
# time (-Wl,--no-undefined) so that a missing dependency is a build error, not a load error.
# Output: lib<OUTPUT_NAME or target>.so in lib/weft/plugins (shipped plugins name themselves
# weft-<name>, e.g. libweft-cpu.so).
function(weft_add_plugin target)
  cmake_parse_arguments(P "NO_INSTALL" "OUTPUT_DIR;OUTPUT_NAME" "SOURCES;LINK" ${ARGN})
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE weft_sdk ${P_LINK})
  weft_target_warnings(${target})
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    PREFIX "lib")
  if(P_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${P_OUTPUT_NAME})
  endif()
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${WEFT_PLUGIN_OUTPUT_DIR})
  endif()
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/plugin.map -Wl,--no-undefined)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/plugin.map)
  set_property(GLOBAL APPEND PROPERTY WEFT_PLUGIN_TARGETS ${target})
  if(NOT P_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${WEFT_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
