# Applies WEFT_SANITIZE (a ;-list of -fsanitize= values) to everything built in this tree, less
# the checks WEFT_NO_SANITIZE lists (-fno-sanitize= values). The `asan` preset drops UBSan's vptr,
# null, alignment, pointer-overflow and object-size checks: with GCC 12 they nearly doubled the
# compile time of an ASan build (a kernel file: 21.3 s with all of UBSan, 11.7 s without those
# five, 12.3 s with ASan alone), and ASan itself reports the out-of-bounds and null accesses most
# of them exist for. The `fuzz` preset keeps all of UBSan for the parsers.
set(WEFT_NO_SANITIZE "" CACHE STRING "sanitizer checks left out of WEFT_SANITIZE's (a ;-list of -fno-sanitize= values)")
if(WEFT_SANITIZE)
  list(JOIN WEFT_SANITIZE "," _weft_san)
  add_compile_options(-fsanitize=${_weft_san} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${_weft_san})
  set(_weft_san_note "")
  if(WEFT_NO_SANITIZE)
    list(JOIN WEFT_NO_SANITIZE "," _weft_no_san)
    add_compile_options(-fno-sanitize=${_weft_no_san})
    add_link_options(-fno-sanitize=${_weft_no_san})
    set(_weft_san_note " without ${_weft_no_san}")
  endif()
  message(STATUS "weft: sanitizers ${_weft_san}${_weft_san_note}")
endif()

# With AddressSanitizer, every executable built here carries cmake/asan_default_options.cc (why:
# that file). It must be in the executable: libasan's own weak default would shadow a definition
# in a shared library. Call once at the end of the top-level CMakeLists.txt, after every target.
function(weft_apply_asan_defaults)
  if(NOT "address" IN_LIST WEFT_SANITIZE)
    return()
  endif()
  set(_dirs ${CMAKE_SOURCE_DIR})
  while(_dirs)
    list(POP_FRONT _dirs _dir)
    get_property(_sub DIRECTORY ${_dir} PROPERTY SUBDIRECTORIES)
    list(APPEND _dirs ${_sub})
    get_property(_targets DIRECTORY ${_dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(_t IN LISTS _targets)
      get_target_property(_type ${_t} TYPE)
      get_target_property(_imported ${_t} IMPORTED)
      if(_type STREQUAL "EXECUTABLE" AND NOT _imported)
        target_sources(${_t} PRIVATE ${CMAKE_SOURCE_DIR}/cmake/asan_default_options.cc)
      endif()
    endforeach()
  endwhile()
endfunction()
