/* weft SDK umbrella header: the whole versioned plugin C ABI. */
#ifndef WEFT_SDK_H_
#define WEFT_SDK_H_
#include "weft/sdk/device.h"
#include "weft/sdk/host.h"
#include "weft/sdk/operator.h"
#include "weft/sdk/plugin.h"
#include "weft/sdk/transport.h"
#include "weft/sdk/types.h"
#include "weft/sdk/version.h"
#endif
