// The host's definition of the SDK's opaque weft_error (sdk/types.h): a code and a message.
#pragma once

#include <cstdint>
#include <string>

struct weft_error {
  int32_t code;
  std::string message;
};
