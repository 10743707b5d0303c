#!/bin/bash
# Interleaved A/B of two builds of the cpu plugin (issue 34: compile flags must not cost speed):
#   bench/build/plugin_ab.sh PLUGIN_A.so PLUGIN_B.so [ROUNDS=6]
# Each round copies A, then B, over build/default's plugin and runs, at 1 thread: train_mnist mlp
# (2 epochs; the 2nd epoch's samples/s), lenet (1 epoch), and image_classification --benchmark
# (median ms per batch of 10 runs) on the MXNet zoo exports in ~/.cache/weft-bench/zoo (made by
# bench/zoo/compare.py). The plugin found in build/default at the start is put back at the end.
set -euo pipefail
a=${1:?usage: $0 PLUGIN_A.so PLUGIN_B.so [ROUNDS]}; b=${2:?}; rounds=${3:-6}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/default/bin; plugin=$root/build/default/lib/weft/plugins/libweft-cpu.so
zoo=$HOME/.cache/weft-bench/zoo
saved=$(mktemp); cp "$plugin" "$saved"; trap 'cp "$saved" "$plugin"; rm -f "$saved"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 WEFT_CPU_MATH_THREADS=1 MKL_NUM_THREADS=1
for round in $(seq "$rounds"); do
  for v in A B; do
    if [[ $v == A ]]; then cp "$a" "$plugin"; else cp "$b" "$plugin"; fi
    m=$("$bin/train_mnist" --network mlp --epochs 2 --model-prefix /tmp/ab-mlp --replace-network 2>&1 | grep -o "Speed=[0-9.]*" | tail -1)
    l=$("$bin/train_mnist" --network lenet --epochs 1 --model-prefix /tmp/ab-lenet --replace-network 2>&1 | grep -o "Speed=[0-9.]*" | tail -1)
    z=""
    for n in resnet18_v1:224:2 mobilenetv2_1.0:224:1 squeezenet1.1:224:2 densenet121:224:1 inceptionv3:299:1; do
      IFS=: read -r net size batch <<< "$n"
      t=$("$bin/image_classification" --model "$zoo/$net" --epoch 0 --benchmark --input-size "$size" --runs 10 --warmup 2 \
          --batch-sizes "$batch" 2>&1 | grep -o "[0-9.]* ms per batch" | cut -d' ' -f1)
      z="$z $net=$t"
    done
    echo "$round $v mlp $m lenet $l $z"
  done
done
