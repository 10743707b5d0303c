#!/usr/bin/env bash
# The README's test command: installs missing Debian packages, then three passes, each a CMake
# preset built and tested with CTest:
#   default  the optimised build, the whole test suite, then scripts/check_install.sh (install
#            into a temporary prefix, build and run samples/ against it alone)
#   asan     the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (-O1; the big
#            VGG-like model test at batch 2, 64x64)
#   tsan     the engine, storage, ndarray, kvstore and io tests under ThreadSanitizer (-O1)
# Last, a plain Release build as a user makes it, less the cpu and GPU plugins (WEFT_TEST_RELEASE=0
# skips it), and the `main` preset's build with one short training epoch (WEFT_TEST_MAIN=0 skips it).
# WEFT_TEST_SANITIZERS=0 runs the default pass only (a quick local check; CI runs all three).
# WEFT_REQUIRE_ALL=1 (the default here): a test that would skip for a missing capability CI has
# (root and network namespaces, Fashion-MNIST, lavapipe, the test plugins) fails instead
# (tests/support/require.h); set WEFT_REQUIRE_ALL=0 on a machine that lacks one. Only absent GPUs
# skip then. After each pass the skipped tests are listed with their reasons
# (scripts/skipped_tests.py).
# On 2 cores with an empty ccache the whole run took about 65 minutes on a loaded machine (a fresh
# clone on 2026-11-28, build + test minutes: default 14.3 + 4.1 and its AVX2 rerun 2.8, install
# 0.7, asan 16.3 + 3.2 and its AVX2 rerun 1.2, tsan 4.2, Release 6.2, fuzz build + runs about 10.5);
# the cpu kernels' split by ISA need since then saves about 5 minutes in each of the default and
# Release builds (issue 34). The `main` preset's build and short epoch, added after, take about 600
# CPU seconds with an empty ccache (about 5 minutes on 2 idle cores; seconds with a warm one). CI
# then took 48 minutes on a machine with AVX-512, so the Release build leaves out the plugins
# other steps build (about 45 % of its compile time) and the ASan pass's AVX2 rerun keeps only
# the tests whose code depends on the ISA in a sanitizer build.
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

# Disk: the builds take about 4 GB (default), 3 GB (asan) and 1 GB (tsan, fuzz, Release together),
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

# Both CPU paths in every run (issue 27): on a machine with AVX-512 the suite runs a second time
# with the AVX2 path forced in weft's own loops (WEFT_CPU_ISA), oneDNN (ONEDNN_MAX_CPU_ISA) and
# OpenBLAS (OPENBLAS_CORETYPE=Haswell, its AVX2 kernels), so that what fails on AVX2-only machines
# (AMD EPYC Zen 3 among CI's) fails here too. Tests that do not depend on the ISA are left out:
# distributed jobs, the network namespace, Vulkan (lavapipe picks its own code), plugin loading,
# docs, the GPU plugins and the R package (its C++ is ISA-independent glue; the library's numbers
# under it are the suites' above). On an AVX2-only machine the first run already took that path.
# forced_avx2_tests <preset> [ctest args...]: the extra arguments narrow the run further.
forced_avx2_tests() {
  if ! grep -qw avx512f /proc/cpuinfo; then
    echo "no AVX-512 on this machine: the run above took the AVX2 path already"
    return 0
  fi
  # IsaDispatch.Avx512MatchesBaseline is left out too: WEFT_CPU_ISA=avx2 is a ceiling, the AVX-512
  # path does not exist in this run (the first run compared it).
  WEFT_CPU_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell \
    run_ctest "$@" -LE '^(dist|netns|vulkan|loader|docs|gpu|r|python)$' -E '^IsaDispatch\.Avx512MatchesBaseline$'
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
  step "AddressSanitizer + UBSan build"
  cmake --preset asan
  cmake --build --preset asan
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
  tsan_targets=()
  for l in engine storage ndarray kvstore io; do
    if cmake --build --preset tsan --target help | grep -q "^tests-$l:"; then tsan_targets+=("tests-$l"); fi
  done
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
if [[ "${WEFT_TEST_RELEASE:-1}" == 1 ]]; then
  # What a user builds first: a plain Release configuration (GCC -O3, no -Werror by default) of
  # the library, tools, binding, plugins and samples, so that no preset-only flag hides a broken
  # user build. Every target but three: the cpu plugin (its kernels are half of this build's
  # compile time, and the `main` step below builds it in Release without -Werror too) and the
  # CUDA and HIP device plugins (nvcc's and hipcc's device code does not depend on the host's
  # build type; the default preset builds them with -Werror).
  step "plain Release build (library, tools, binding, plugins but cpu/cuda/hip, samples)"
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_BENCH=OFF
  mapfile -t release_targets < <(ninja -C build/release -t targets all |
    awk -F': ' '$2 == "phony" && $1 !~ /[\/.]/ { print $1 }' |
    grep -vE '^(cmake_object_order_depends_target_.*|edit_cache|rebuild_cache|list_install_components|install|all|clean|help|ops_md|weft_plugin_cpu|weft_cpu_kernels|weft_plugin_cuda|weft_plugin_hip)$')
  cmake --build build/release --target "${release_targets[@]}"
fi
if [[ "${WEFT_TEST_MAIN:-1}" == 1 ]]; then
  # The README's first command: the `main` preset is the only build with its settings (-O2
  # without debug info, precompiled headers), so it is built here and its train_mnist runs one
  # short epoch. WEFT_TEST_MAIN=0 skips it.
  step "main preset (the README's first command), one short epoch"
  cmake --preset main
  cmake --build --preset main
  build/main/bin/train_mnist --network mlp --epochs 1 --num-examples 6000 --model-prefix "build/main/ci-mlp"
fi
step "all tests passed"
