# Required dependencies and the configure summary.
#
# weft_require(<Package> DEBIAN <debian package> [OPTION <option>] [find_package arguments...])
#   find_package(<Package> ...) that stops the configure with an error naming the Debian package
#   to install when the package is missing (never a silently smaller build), and the option that
#   builds without it when one does.
# weft_require_file(<VAR> PATH|LIBRARY <name> DEBIAN <debian package>)
#   The same for a header (find_path) or a library (find_library) without a CMake package.
# weft_feature(<name> <option variable> <description> [ENABLED <variable>])
#   Registers an optional part of the build for the summary printed at the end of the configure
#   (CMake's FeatureSummary): every option and what it enables, found packages, nothing hidden.
#   ENABLED names the variable holding the decision when the option is not a plain ON/OFF
#   (WEFT_WITH_CUDA=AUTO resolves into WEFT_BUILD_CUDA); default: the option itself.
include(FeatureSummary)

macro(weft_require _wr_pkg)
  cmake_parse_arguments(_WR "" "DEBIAN;OPTION" "" ${ARGN})
  if(NOT _WR_DEBIAN)
    message(FATAL_ERROR "weft_require(${_wr_pkg}): DEBIAN <package> is required")
  endif()
  find_package(${_wr_pkg} ${_WR_UNPARSED_ARGUMENTS} QUIET)
  if(NOT ${_wr_pkg}_FOUND)
    if(_WR_OPTION)
      set(_wr_off "or configure with -D${_WR_OPTION}=OFF to build without it")
    else()
      set(_wr_off "or turn off the option that needs it (WEFT_BUILD_* / WEFT_WITH_*, at the top of CMakeLists.txt)")
    endif()
    message(FATAL_ERROR "weft: required dependency '${_wr_pkg}' was not found. Install the Debian package "
                        "'${_WR_DEBIAN}' (scripts/setup.sh installs everything in scripts/packages.txt), "
                        "${_wr_off}.")
  endif()
  set_package_properties(${_wr_pkg} PROPERTIES TYPE REQUIRED DESCRIPTION "Debian: ${_WR_DEBIAN}")
endmacro()

function(weft_require_file var kind name)
  cmake_parse_arguments(_WR "" "DEBIAN" "" ${ARGN})
  if(kind STREQUAL "PATH")
    find_path(${var} ${name})
  else()
    find_library(${var} ${name})
  endif()
  if(NOT ${var})
    message(FATAL_ERROR "weft: required ${name} was not found. Install the Debian package '${_WR_DEBIAN}' "
                        "(scripts/setup.sh installs everything in scripts/packages.txt).")
  endif()
endfunction()

function(weft_feature name option description)
  cmake_parse_arguments(_WF "" "ENABLED" "" ${ARGN})
  if(NOT _WF_ENABLED)
    set(_WF_ENABLED ${option})
  endif()
  add_feature_info(${name} ${_WF_ENABLED} "${description} (${option}=${${option}})")
endfunction()

# Printed once at the end of the top-level configure.
function(weft_print_summary)
  if(WEFT_SANITIZE)
    # Joined with commas: a ';' inside DESCRIPTION would split it into feature_summary() keywords.
    list(JOIN WEFT_SANITIZE "," _san)
    set(_san "sanitizers ${_san}")
  else()
    set(_san "no sanitizers")
  endif()
  set(_type "${CMAKE_BUILD_TYPE}")
  if(NOT _type)
    set(_type "no CMAKE_BUILD_TYPE")
  endif()
  feature_summary(WHAT ENABLED_FEATURES DISABLED_FEATURES PACKAGES_FOUND
                  DESCRIPTION "weft ${PROJECT_VERSION} configuration (${_type}, ${_san}):")
endfunction()
