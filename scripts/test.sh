#!/usr/bin/env bash
# The README's test command: installs missing Debian packages, builds, and runs the whole test
# suite in the optimised build.
#   WEFT_TEST_SANITIZERS=1 adds two passes: the whole suite under AddressSanitizer +
#   UndefinedBehaviorSanitizer (preset asan), then the engine, storage and ndarray tests under
#   ThreadSanitizer (preset tsan). They are off in CI until the integrated tree has been run
#   through them once (each part passed them on its own; see the issues' notes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Paths relative to the checkout in ccache's hashes, so a fresh clone reuses earlier builds.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}  # -g builds otherwise hash the checkout path
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}

step() { printf '\n==== %s ====\n' "$*"; }

step "default build"
cmake --preset default
cmake --build --preset default
step "default tests"
ctest --preset default

if [[ "${WEFT_TEST_SANITIZERS:-0}" == 1 ]]; then
  step "AddressSanitizer + UBSan build"
  cmake --preset asan
  cmake --build --preset asan
  step "AddressSanitizer + UBSan tests"
  ctest --preset asan

  step "ThreadSanitizer build (engine, storage, ndarray, kvstore tests)"
  cmake --preset tsan
  tsan_targets=()
  for l in engine storage ndarray kvstore; do
    if cmake --build --preset tsan --target help | grep -q "^tests-$l:"; then tsan_targets+=("tests-$l"); fi
  done
  if ((${#tsan_targets[@]})); then
    cmake --build --preset tsan --target "${tsan_targets[@]}"
    step "ThreadSanitizer tests"
    ctest --preset tsan
  fi
fi
step "all tests passed"
