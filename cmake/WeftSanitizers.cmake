# Applies WEFT_SANITIZE (a ;-list of -fsanitize= values) to everything built in this tree.
if(WEFT_SANITIZE)
  list(JOIN WEFT_SANITIZE "," _weft_san)
  add_compile_options(-fsanitize=${_weft_san} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${_weft_san})
  message(STATUS "weft: sanitizers ${_weft_san}")
endif()
