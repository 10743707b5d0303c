# Required dependencies and the configure summary.
#
# weft_require(<Package> DEBIAN <debian package> [find_package arguments...])
#   find_package(<Package> ...) that stops the configure with an error naming the Debian package
#   to install when the package is missing (never a silently smaller build).
# weft_require_file(<VAR> PATH|LIBRARY <name> DEBIAN <debian package>)
#   The same for a header (find_path) or a library (find_library) without a CMake package.
# weft_feature(<name> <option variable> <description>)
#   Registers an optional part of the build for the summary printed at the end of the configure
#   (CMake's FeatureSummary): every option and what it enables, found packages, nothing hidden.
include(FeatureSummary)

macro(weft_require _wr_pkg)
  cmake_parse_arguments(_WR "" "DEBIAN" "" ${ARGN})
  if(NOT _WR_DEBIAN)
    message(FATAL_ERROR "weft_require(${_wr_pkg}): DEBIAN <package> is required")
  endif()
  find_package(${_wr_pkg} ${_WR_UNPARSED_ARGUMENTS} QUIET)
  if(NOT ${_wr_pkg}_FOUND)
    message(FATAL_ERROR "weft: required dependency '${_wr_pkg}' was not found. Install the Debian package "
                        "'${_WR_DEBIAN}' (scripts/setup.sh installs everything in scripts/packages.txt), "
                        "or turn off the option that needs it (see the summary options above).")
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
  add_feature_info(${name} ${option} "${description} (${option}=${${option}})")
endfunction()

# Printed once at the end of the top-level configure.
function(weft_print_summary)
  feature_summary(WHAT ENABLED_FEATURES DISABLED_FEATURES PACKAGES_FOUND
                  DESCRIPTION "weft ${PROJECT_VERSION} configuration (${CMAKE_BUILD_TYPE}):")
endfunction()
