#!/usr/bin/env bash
# GPU check — for a machine WITH an NVIDIA (CUDA) or AMD (ROCm/HIP) GPU.
#
# NOT RUN YET: no machine this project builds or tests on has a GPU, so this script has never been
# executed against real hardware. It is kept ready so that the first GPU machine can answer: does
# the cuda / hip plugin pass the device contract and the conformance suite, and how fast does it
# train next to the cpu?
#
# What it does:
#   1. builds (Release) with the GPU plugins the machine's toolkits allow: CUDA for the GPU's own
#      architecture (CUDA_ARCHS, default "native" — which works only where a GPU is present), HIP
#      for HIP_ARCHS (default: the gfx name rocminfo reports);
#   2. for every GPU device type with devices: the device contract suite, the conformance suite
#      (every op the plugin claims against the cpu plugin) and the GPU plugin tests;
#   3. trains the MLP and LeNet for one epoch on the cpu and on each GPU type and prints samples/s.
# Usage: scripts/gpu-check.sh [build-dir]      (default build/gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/gpu}
cuda_archs=${CUDA_ARCHS:-native}
hip_archs=${HIP_ARCHS:-$( (rocminfo 2>/dev/null || true) | awk '/Name: *gfx/ {print $2; exit}')}
hip_archs=${hip_archs:-gfx90a}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="$cuda_archs" -DWEFT_HIP_ARCHITECTURES="$hip_archs"
cmake --build "$build" --target weft-info train_mnist device_contract_test conformance_test gpu_plugin_test

export WEFT_PLUGIN_PATH="$PWD/$build/lib/weft/plugins:$PWD/$build/test-plugins"
info=$("$build/bin/weft-info")
echo "$info"
types=()
for t in cuda hip; do
  if grep -q "^  $t(0)" <<<"$info" || grep -q " $t(0):" <<<"$info"; then types+=("$t"); fi
done
if ((${#types[@]} == 0)); then
  echo "gpu-check: no cuda or hip device found (see the 'devices:' lines above for why)" >&2
  exit 1
fi

status=0
for t in "${types[@]}"; do
  echo "==== $t: device contract, conformance, plugin tests ===="
  WEFT_CONTRACT_EXPECT="cpu,$t" "$build/tests/device_contract_test" || status=1
  "$build/tests/conformance_test" || status=1
  "$build/tests/gpu_plugin_test" || status=1
done

echo "==== one epoch of training: samples/s ===="
for net in mlp lenet; do
  for dev in cpu "${types[@]}"; do
    line=$("$build/bin/train_mnist" --network "$net" --device "$dev" --epochs 1 2>&1 | grep 'Validation-accuracy' ||
           echo "failed")
    printf '%-6s %-5s %s\n' "$net" "$dev" "$line"
  done
done
exit $status
