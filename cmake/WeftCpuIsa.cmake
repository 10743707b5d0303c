# WEFT_CPU_ISA_COPIES: which instruction-set copies of the cpu kernels' hot loops to compile
# (plugins/cpu/kernels/isa_dispatch.h: baseline x86-64, AVX2+FMA, AVX-512).
#   all   every copy (the default): one plugin that runs at its best on any x86-64.
#   host  only the copy for the level of the machine that configures the build, found by running
#         isa_dispatch.cc's own detection there. For a build that runs where it is built: the
#         `main` preset, i.e. the README's main command (issue 34: its build time). One copy of the
#         hot loops instead of two (AVX2 machines) or three (AVX-512 ones): the hot kernel files
#         compile in a fifth less time than with the baseline and AVX2 copies, 28 % less than with
#         all three (bench/results/2026-12-01-zen4_one_isa_copy.txt). The plugin runs on machines
#         at that level and above (it runs its one copy there); on a CPU below it, it refuses to
#         load with an error naming the fix.
# When the probe cannot run (cross-compiling) `host` falls back to `all`.
set(WEFT_CPU_ISA_COPIES all CACHE STRING "ISA copies of the cpu kernels' hot loops: all or host")
set_property(CACHE WEFT_CPU_ISA_COPIES PROPERTY STRINGS all host)

# weft_cpu_isa_copies(<target>): when WEFT_CPU_ISA_COPIES is host, defines WEFT_CPU_ISA_MIN_LEVEL and
# WEFT_CPU_ISA_MAX_LEVEL as the machine's level (PUBLIC, so that code compiled against the kernels
# agrees).
function(weft_cpu_isa_copies target)
  if(WEFT_CPU_ISA_COPIES STREQUAL "all")
    return()
  elseif(NOT WEFT_CPU_ISA_COPIES STREQUAL "host")
    message(FATAL_ERROR "WEFT_CPU_ISA_COPIES is '${WEFT_CPU_ISA_COPIES}'; use all or host")
  endif()
  if(CMAKE_CROSSCOMPILING)
    message(STATUS "weft: WEFT_CPU_ISA_COPIES=host while cross-compiling; compiling all copies")
    return()
  endif()
  if(NOT DEFINED WEFT_HOST_ISA_LEVEL)
    get_target_property(_dir ${target} SOURCE_DIR)  # the kernels' directory: isa_dispatch.h/.cc
    file(WRITE ${CMAKE_BINARY_DIR}/weft_isa_probe.cc
         "#include \"isa_dispatch.h\"\nint main() { return static_cast<int>(weft::cpu::isa::Supported()); }\n")
    try_run(_level _compiled ${CMAKE_BINARY_DIR}/weft_isa_probe
            SOURCES ${CMAKE_BINARY_DIR}/weft_isa_probe.cc ${_dir}/isa_dispatch.cc
            CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${_dir}" CXX_STANDARD 20
            COMPILE_OUTPUT_VARIABLE _out)
    if(NOT _compiled OR NOT _level MATCHES "^[0-2]$")
      message(STATUS "weft: the ISA probe did not run (${_level}); compiling all copies")
      return()
    endif()
    set(WEFT_HOST_ISA_LEVEL ${_level} CACHE INTERNAL "isa::Level of the configuring machine")
  endif()
  set(_names baseline avx2 avx512)
  list(GET _names ${WEFT_HOST_ISA_LEVEL} _name)
  message(STATUS "weft: cpu kernels' ISA copy: ${_name} only (WEFT_CPU_ISA_COPIES=host)")
  target_compile_definitions(${target} PUBLIC WEFT_CPU_ISA_MIN_LEVEL=${WEFT_HOST_ISA_LEVEL}
                                              WEFT_CPU_ISA_MAX_LEVEL=${WEFT_HOST_ISA_LEVEL})
endfunction()
