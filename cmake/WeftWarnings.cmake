# weft_target_warnings(target): -Wall -Wextra on our own code (not on third-party code), plus
# -Werror when WEFT_WERROR is ON. WEFT_WERROR is OFF by default so that a user's build with another
# compiler or optimisation level (e.g. GCC 12's -O3 false positives) never fails on a warning;
# the CMake presets and CI turn it ON. nvcc gets the host compiler's warnings (and with WEFT_WERROR
# turns its own into errors).
option(WEFT_WERROR "Treat compiler warnings in weft's own code as errors (ON in the presets and CI)" OFF)
function(weft_target_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra $<$<BOOL:${WEFT_WERROR}>:-Werror>>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra $<$<BOOL:${WEFT_WERROR}>:--Werror=all-warnings>>)
  # A unity build (UNITY_BUILD: the default preset and those that inherit it) #includes each .cc
  # into a batch file, and GCC then takes a class in a .cc whose member uses an anonymous-namespace
  # type (a pimpl's Impl) for a class in a header: -Wsubobject-linkage, a false alarm there. A
  # build of one file per compile keeps it.
  target_compile_options(
    ${target} PRIVATE $<$<AND:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>>:-Wno-subobject-linkage>)
endfunction()
