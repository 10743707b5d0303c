# weft_add_plugin(<target> SOURCES <src>... [LINK <libs>...] [OUTPUT_NAME <name>] [OUTPUT_DIR <dir>]
#                 [INSTALL_DIR <dir>] [NO_INSTALL])
#
# Builds a weft plugin: a MODULE library that sees only the SDK (weft::sdk, never core), exports
# exactly the entry symbol `weft_plugin_entry` (hidden visibility + the linker version script
# plugin.map next to this file), and resolves every symbol at link time (-Wl,--no-undefined) so
# that a missing dependency is a build error, not a load error.
#
#   SOURCES      the plugin's sources (one of them uses WEFT_SDK_PLUGIN / defines the entry)
#   LINK         further libraries, linked PRIVATE
#   OUTPUT_NAME  file name without prefix/suffix (default <target>): lib<OUTPUT_NAME>.so. Plugins
#                shipped with weft name themselves weft-<name>, e.g. libweft-cpu.so
#   OUTPUT_DIR   where the build puts it (default: inside weft's tree <build>/lib/weft/plugins,
#                where discovery next to libweft finds it; elsewhere the current binary dir)
#   INSTALL_DIR  install destination (default <libdir>/weft/plugins: the directory libweft
#                searches next to itself; a plugin installed elsewhere needs WEFT_PLUGIN_PATH)
#   NO_INSTALL   build only (tests, fixtures)
#
# Shipped with the weft CMake package: after find_package(weft), out-of-tree plugins
# (samples/custom_op) call it exactly as weft's own plugins/ do.
include_guard(GLOBAL)
include(GNUInstallDirs)
set(_WEFT_PLUGIN_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin.map)

function(weft_add_plugin target)
  cmake_parse_arguments(P "NO_INSTALL" "OUTPUT_DIR;OUTPUT_NAME;INSTALL_DIR" "SOURCES;LINK" ${ARGN})
  if(P_UNPARSED_ARGUMENTS OR NOT P_SOURCES)
    message(FATAL_ERROR "weft_add_plugin(${target}): expected SOURCES <src>... [LINK ...] [OUTPUT_NAME n] "
                        "[OUTPUT_DIR d] [INSTALL_DIR d] [NO_INSTALL]; got '${ARGN}'")
  endif()
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE weft::sdk ${P_LINK})
  if(COMMAND weft_target_warnings)  # inside weft's own build: its warning flags
    weft_target_warnings(${target})
  endif()
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    PREFIX "lib")
  if(P_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${P_OUTPUT_NAME})
  endif()
  if(NOT P_OUTPUT_DIR)
    if(WEFT_PLUGIN_OUTPUT_DIR)
      set(P_OUTPUT_DIR ${WEFT_PLUGIN_OUTPUT_DIR})
    else()
      set(P_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR})
    endif()
  endif()
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR})
  target_link_options(${target} PRIVATE -Wl,--version-script=${_WEFT_PLUGIN_MAP} -Wl,--no-undefined)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${_WEFT_PLUGIN_MAP})
  set_property(GLOBAL APPEND PROPERTY WEFT_PLUGIN_TARGETS ${target})
  if(NOT P_NO_INSTALL)
    if(NOT P_INSTALL_DIR)
      set(P_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/weft/plugins)
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION ${P_INSTALL_DIR})
  endif()
endfunction()
