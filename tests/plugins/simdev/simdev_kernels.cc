// simdev — CPU kernel classes registered for "simdev" (see simdev_kernels.h).
#include "simdev_kernels.h"

#include "cpu_kernels.h"

namespace weft::simdev {

const weft_operator_api* SimdevKernels::Fill(sdk::KernelTable& table) {
  cpu::RegisterAllKernels(table);
  return table.Api();
}

SimdevKernels::SimdevKernels(sdk::PointerResolver resolve, void* resolver_data, sdk::HostQueueDevice* device,
                             const weft_host_api* host)
    : table_("simdev", host, resolve, resolver_data), queued_(Fill(table_), device, "simdev", host) {}

}  // namespace weft::simdev
