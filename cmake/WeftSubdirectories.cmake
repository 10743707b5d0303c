# weft_add_subdirectories(): adds every direct subdirectory of the current source directory that
# has a CMakeLists.txt, in name order. New plugins, tests, benchmarks and samples join the
# build by existing; the glob is re-checked at build time (CONFIGURE_DEPENDS).
function(weft_add_subdirectories)
  file(GLOB _dirs LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(_d IN LISTS _dirs)
    if(IS_DIRECTORY ${_d} AND EXISTS ${_d}/CMakeLists.txt)
      add_subdirectory(${_d})
    endif()
  endforeach()
endfunction()
