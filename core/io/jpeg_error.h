// weft io (internal) — libjpeg's error handling for weft's decoder and encoder: libjpeg calls
// error_exit, which must not return; it formats the message and longjmps back to the setjmp of
// the function that called libjpeg (no C++ exception may unwind through libjpeg's C frames).
#pragma once

#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE

#include <jpeglib.h>

namespace weft::io_detail {

struct JpegErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

/// error_exit: keeps the message in `message` and jumps to `jump`.
[[noreturn]] inline void OnJpegError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

}  // namespace weft::io_detail
