// The binding's "Custom" operator (c_api_custom.cc): MXNet's frontend-language operators.
#pragma once

namespace weft::mx {

/// Registers weft's host operator "Custom" (once, before the op list is first read).
void RegisterCustomOp();

}  // namespace weft::mx
