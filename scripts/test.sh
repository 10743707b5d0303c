#!/usr/bin/env bash
# The README's test command: installs missing Debian packages, then three passes, each a CMake
# preset built and tested with CTest:
#   default  the optimised build (unity batches, precompiled headers), the whole test suite, then
#            scripts/check_install.sh (install into a temporary prefix, build and run samples/
#            against it alone)
#   asan     the suites of weft's native code (the asan test preset's labels: engine to whole
#            models) under AddressSanitizer + UBSan's cheap checks (-O1; the big VGG-like model
#            test at batch 2, 64x64)
#   tsan     the engine, storage, ndarray, kvstore and io tests under ThreadSanitizer (-O1)
# Then the libFuzzer targets (scripts/fuzz.sh; WEFT_TEST_FUZZ=0 skips them) and the `main`
# preset's build with one short training epoch (WEFT_TEST_MAIN=0 skips it).
# WEFT_TEST_SANITIZERS=0 runs the default pass only (a quick local check; CI runs all three).
# WEFT_REQUIRE_ALL=1 (the default here): a test that would skip for a missing capability CI has
# (root and network namespaces, Fashion-MNIST, lavapipe, the test plugins) fails instead
# (tests/support/require.h); set WEFT_REQUIRE_ALL=0 on a machine that lacks one. Only absent GPUs
# skip then. After each pass the skipped tests are listed with their reasons
# (scripts/skipped_tests.py).
# Time on 2 cores with an empty ccache. A CI run on a 2-core AMD EPYC (Zen 3, AVX2 only) passed
# 90 minutes before its ThreadSanitizer pass (2026-11-30): the default build, an ASan build of
# everything with all of UBSan, a plain Release build and the `main` build each compiled the tree
# again. Since then the default and `main` presets share their flags (the main step compiles
# nothing), the ASan pass builds only its labels' tests without UBSan's five costliest checks
# (cmake/WeftSanitizers.cmake), the Release build is gone (the `main` step is the user's plain
# build), the sanitizer builds compile the cpu kernels in unity batches, the tests' own code is
# compiled at -O1 (default) and -O0 (sanitizers) (tests/CMakeLists.txt), and the fuzz preset is a
# unity build too (so no step compiles libweft one file per compile any more: a source that leans on
# an #include of an earlier file in its batch fails only in a build with CMAKE_UNITY_BUILD=OFF).
# Measured step by step on such a machine (2026-12-01), in minutes: default build 14.2 (its tests
# still at -O2) and tests 5.8, ASan build 9.6 and tests 3.8, TSan build 4.9 and tests 0.65, fuzz
# build 3.4 and runs about 3, main 0.25; with setup and the install check about 50. A machine with
# AVX-512 adds the AVX2 reruns (about 4 minutes) and compiles faster. CI's own run of 2026-12-01
# (a Prefetcher test failed under TSan) had reached the end of the TSan tests at 2132 s (35.5 min),
# its TSan tests taking 58 s; the fuzz and main steps add about 4 more.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Paths relative to the checkout in ccache's hashes, so a fresh clone reuses earlier builds.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}  # -g builds otherwise hash the checkout path
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}

export WEFT_REQUIRE_ALL=${WEFT_REQUIRE_ALL:-1}

# free_gb <path>: whole gigabytes free on the file system that holds <path>.
free_gb() { df -P -BG "$1" | awk 'NR == 2 { sub("G", "", $4); print $4 }'; }

step() { printf '\n==== %s (at %d s; %s GB free for build/) ====\n' "$*" "$SECONDS" "$(free_gb .)"; }

# Disk: the builds take about 2 GB (default), 2 GB (asan) and 1 GB (tsan, fuzz and main together),
# and ccache up to CCACHE_MAXSIZE. A CI run once died in the ASan link with "No space left on
# device" on a disk shared with other work, so when less than WEFT_TEST_KEEP_FREE_GB (20) stays
# free, each pass's build tree is removed once its tests are done (ccache keeps the objects).
keep_free_gb=${WEFT_TEST_KEEP_FREE_GB:-20}
done_with() {
  local free
  free=$(free_gb .)
  if ((free < keep_free_gb)); then
    echo "only $free GB free (< WEFT_TEST_KEEP_FREE_GB=$keep_free_gb): removing build/$1, its pass is done"
    rm -rf "build/$1"
  fi
}
if (($(free_gb .) < 12)); then
  echo "warning: only $(free_gb .) GB free where build/ is; this run needs about 12 GB (the build" \
    "trees, removed after their passes when space is short, and ccache's CCACHE_MAXSIZE=$CCACHE_MAXSIZE)" >&2
fi

# run_ctest <preset> [ctest args...]: the tests, then the list of those skipped, with reasons.
run_ctest() {
  local rc=0
  ctest --preset "$@" || rc=$?
  scripts/skipped_tests.py "build/$1" --title "ctest --preset $*" || true
  return "$rc"
}

# label_targets <preset>: the build targets tests-<label> (tests/CMakeLists.txt) of the labels
# that <preset>'s test preset runs (its filter, "^(a|b|...)$", in CMakePresets.json), one per line;
# a label without tests in the configured tree has no target and is left out.
label_targets() {
  local help l
  help=$(cmake --build --preset "$1" --target help)
  for l in $(python3 -c 'import json, sys
p = next(t for t in json.load(open("CMakePresets.json"))["testPresets"] if t["name"] == sys.argv[1])
print(p["filter"]["include"]["label"].removeprefix("^(").removesuffix(")$").replace("|", " "))' "$1"); do
    if grep -q "^tests-$l:" <<<"$help"; then echo "tests-$l"; fi
  done
}

# Both CPU paths in every run (issue 27): on a machine with AVX-512 the suite runs a second time
# with the AVX2 path forced in weft's own loops (WEFT_CPU_ISA), oneDNN (ONEDNN_MAX_CPU_ISA) and
# OpenBLAS (OPENBLAS_CORETYPE=Haswell, its AVX2 kernels), so that what fails on AVX2-only machines
# (AMD EPYC Zen 3 among CI's) fails here too. Tests that do not depend on the ISA are left out:
# distributed jobs, the network namespace, Vulkan (lavapipe picks its own code), plugin loading,
# docs, the build's CMake functions, the GPU plugins and the R package (its C++ is ISA-independent
# glue; the library's numbers under it are the suites' above). On an AVX2-only machine the first
# run already took that path.
# forced_avx2_tests <preset> [ctest args...]: the extra arguments narrow the run further.
forced_avx2_tests() {
  if ! grep -qw avx512f /proc/cpuinfo; then
    echo "no AVX-512 on this machine: the run above took the AVX2 path already"
    return 0
  fi
  # IsaDispatch.Avx512MatchesBaseline is left out too: WEFT_CPU_ISA=avx2 is a ceiling, the AVX-512
  # path does not exist in this run (the first run compared it).
  WEFT_CPU_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell \
    run_ctest "$@" -LE '^(dist|netns|vulkan|loader|docs|build|gpu|r|python)$' -E '^IsaDispatch\.Avx512MatchesBaseline$'
}

step "Python environment for the MXNet binding's tests (mxnet==1.9.1 from PyPI)"
WEFT_MXNET_PYTHON=$(scripts/mxnet_venv.sh)
export WEFT_MXNET_PYTHON

step "default build"
cmake --preset default -DWEFT_MXNET_PYTHON="$WEFT_MXNET_PYTHON"
cmake --build --preset default
step "default tests"
run_ctest default
step "default tests again on the AVX2 path"
forced_avx2_tests default
step "install, then build and run samples/ against the install only"
scripts/check_install.sh build/default
done_with default

if [[ "${WEFT_TEST_SANITIZERS:-1}" == 1 ]]; then
  # The ASan pass builds and runs the suites of weft's own native code, from the engine to whole
  # models (the asan test preset's labels); the conformance certificates, docs, GPU math, samples,
  # bindings (Python, R) and Vulkan suites run in the default pass only. Building everything here,
  # with all of UBSan, took longer than the default build itself on a 2-core AMD EPYC.
  step "AddressSanitizer + UBSan build (the asan test preset's labels)"
  cmake --preset asan
  mapfile -t asan_targets < <(label_targets asan)
  cmake --build --preset asan --target "${asan_targets[@]}"
  step "AddressSanitizer + UBSan tests"
  run_ctest asan
  # Sanitizer builds compile weft's loops in the baseline ISA only (plugins/cpu/kernels), so on the
  # AVX2 path only oneDNN's and OpenBLAS's kernels and the layouts weft chooses by them (blocked
  # nChw8c instead of nChw16c, their weight formats) change: the rerun is the tests that reach them.
  step "AddressSanitizer + UBSan tests again on the AVX2 path (kernels, operator, executor)"
  forced_avx2_tests asan -L '^(kernels|operator|executor)$'
  done_with asan

  step "ThreadSanitizer build (engine, storage, ndarray, kvstore, io tests)"
  cmake --preset tsan
  mapfile -t tsan_targets < <(label_targets tsan)
  if ((${#tsan_targets[@]})); then
    cmake --build --preset tsan --target "${tsan_targets[@]}"
    step "ThreadSanitizer tests"
    run_ctest tsan
  fi
  done_with tsan
fi
if [[ "${WEFT_TEST_FUZZ:-1}" == 1 ]]; then
  # The libFuzzer targets (tests/fuzz), 60 s each, two at a time; any crash fails. Builds only
  # libweft's sources and the targets with clang (the `fuzz` preset). WEFT_TEST_FUZZ=0 skips it.
  step "libFuzzer targets, 60 s each (scripts/fuzz.sh)"
  FUZZ_SECONDS=60 FUZZ_JOBS=2 scripts/fuzz.sh
  done_with fuzz
fi
if [[ "${WEFT_TEST_MAIN:-1}" == 1 ]]; then
  # The README's first command, as a user runs it: its own configuration (no tests, bindings or
  # other plugins) and build directory, then one short epoch of train_mnist. It is also the plain
  # build a user makes first. Its flags are the default preset's, so ccache has libweft's objects
  # from the default pass; the cpu kernels compile again, only the files of train_mnist's networks
  # (WEFT_CPU_KERNELS=mnist, plugins/cpu/kernels/kernel_sets.cmake) and only the machine's own ISA
  # copy of their hot loops (WEFT_CPU_ISA_COPIES=host, cmake/WeftCpuIsa.cmake). So that set's
  # plugin runs what train_mnist and predict_mnist offer: both networks, every optimizer, two
  # devices, a resumed run and prediction from the checkpoint (a kernel left out of the set fails
  # the run with "no kernel for operator"). WEFT_TEST_MAIN=0 skips it.
  step "main preset (the README's first command), short epochs of what train_mnist offers"
  cmake --preset main
  cmake --build --preset main
  cmake --build --preset main --target predict_mnist
  main_bin=build/main/bin
  "$main_bin/train_mnist" --network mlp --epochs 1 --num-examples 6000 --model-prefix build/main/ci-mlp
  "$main_bin/predict_mnist" --model-prefix build/main/ci-mlp --epoch 1
  # (Adam and RMSProp at SGD's learning rate of 0.05 diverge: 0.001 for them.)
  for opt in sgd:0.05 nag:0.05 adam:0.001 rmsprop:0.001; do
    "$main_bin/train_mnist" --network lenet --epochs 1 --num-examples 300 --optimizer "${opt%:*}" --lr "${opt#*:}" \
      --num-devices 2 --model-prefix "build/main/ci-lenet-${opt%:*}"
  done
  "$main_bin/train_mnist" --network lenet --epochs 2 --load-epoch 1 --num-examples 300 --optimizer rmsprop --lr 0.001 \
    --model-prefix build/main/ci-lenet-rmsprop
  "$main_bin/predict_mnist" --model-prefix build/main/ci-lenet-rmsprop --epoch 2
fi
step "all tests passed"
