# Precompiled headers (issue 34: the main job's build time). Nearly every core translation unit
# parses the same ~70 000 lines (weft/base.h with fmt, <functional>, <unordered_map>, <map>,
# <algorithm>) before its own code: about 1 s of a 3-6 s compile at -O2, and the cpu kernels'
# sdk and standard headers the same in each of ~60 files. Loading a precompiled copy takes
# about 0.15-0.3 s.
#
# GCC only: clang's PCH needs its own ccache settings, and the `fuzz` preset (clang) stays a build
# without them.
# A PCH that does not match a file's flags is reported by -Winvalid-pch (an error with
# WEFT_WERROR), never silently ignored; e.g. the debug-info level must agree.
#
# ccache (its manual, "Precompiled headers"): a PCH is only cacheable, and a file that uses one
# only hits, with sloppiness pch_defines,time_macros (weft uses neither __DATE__ nor __TIME__).
# CMake includes the PCH with -include, the other of ccache's two requirements. The targets with
# a PCH get a launcher that adds those two to the sloppiness ccache has configured.
#
# GCC 12 writes a different .gch each time it compiles the same header (two builds compared), and
# ccache hashes the .gch a file includes: the files hit only while the PCH itself comes from the
# cache (it does, also from another checkout under CCACHE_BASEDIR: 5 of 5 hits for a PCH and
# four files; a PCH compiled again, e.g. evicted, makes its target's files miss once).
# OFF for a plain build; ON in the default preset and those that inherit it (main, asan, tsan).
# The fuzz preset (clang) has none.
option(WEFT_PCH "Precompiled headers for the core modules and the cpu kernels (GCC)" OFF)
set(WEFT_PCH_ACTIVE OFF)
if(WEFT_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(WEFT_PCH_ACTIVE ON)
elseif(WEFT_PCH)
  message(STATUS "weft: no precompiled headers with ${CMAKE_CXX_COMPILER_ID} (GCC only)")
endif()

if(CCACHE_PROGRAM)
  execute_process(COMMAND ${CCACHE_PROGRAM} --get-config sloppiness OUTPUT_VARIABLE _weft_sloppiness
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  string(REPLACE " " "" _weft_sloppiness "${_weft_sloppiness}")
  string(REPLACE "," ";" _weft_sloppiness "${_weft_sloppiness}")
  list(APPEND _weft_sloppiness pch_defines time_macros)
  list(REMOVE_DUPLICATES _weft_sloppiness)
  list(REMOVE_ITEM _weft_sloppiness "")
  list(JOIN _weft_sloppiness "," _weft_sloppiness)
  set(_WEFT_PCH_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=${_weft_sloppiness} ${CCACHE_PROGRAM})
endif()

# weft_precompile_headers(<target> HEADERS <header>... | REUSE_FROM <other>): target's C++ files
# include the headers first, precompiled (HEADERS: <std> or "quoted" names), or reuse <other>'s
# PCH (its flags and definitions must agree: -Winvalid-pch says when not). No-op unless
# WEFT_PCH_ACTIVE (WEFT_PCH with GCC).
function(weft_precompile_headers target)
  cmake_parse_arguments(P "" "REUSE_FROM" "HEADERS" ${ARGN})
  if(NOT WEFT_PCH_ACTIVE)
    return()
  endif()
  if(P_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${P_REUSE_FROM})
  else()
    target_precompile_headers(${target} PRIVATE ${P_HEADERS})
  endif()
  if(_WEFT_PCH_LAUNCHER)
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER "${_WEFT_PCH_LAUNCHER}")
  endif()
endfunction()
