// simdev — CPU kernel classes registered for "simdev" (see simdev_kernels.h).
#include "simdev_kernels.h"

#include "cpu_kernels.h"

namespace weft::simdev {

const weft_operator_api* SimdevKernels::Fill(sdk::KernelTable& table) {
  cpu::RegisterAllKernels(table);
  return table.Api();
}

SimdevKernels::SimdevKernels(sdk::PointerResolver resolve, sdk::HostQueueDevice* device)
    : table_("simdev", resolve), queued_(Fill(table_), device, "simdev") {}

}  // namespace weft::simdev
