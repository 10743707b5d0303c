# weft_target_warnings(target): -Wall -Wextra -Werror on our own code (not on third-party code).
function(weft_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
