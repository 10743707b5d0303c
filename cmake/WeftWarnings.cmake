# weft_target_warnings(target): -Wall -Wextra -Werror on our own code (not on third-party code);
# nvcc gets the host compiler's warnings and turns its own into errors.
function(weft_target_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Werror=all-warnings>)
endfunction()
