#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang, ASan + UBSan, the whole library
# coverage-instrumented) and runs each for FUZZ_SECONDS (default 60) on its dictionary and seed
# corpus. Fails on any crash, leak, timeout or over-limit allocation; prints executions and
# coverage per target. Long run: FUZZ_SECONDS=3600 scripts/fuzz.sh (about 10 M executions each).
#   usage: scripts/fuzz.sh [target ...]     (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${FUZZ_SECONDS:-60}
shared=${WEFT_SHARED_DIR:-$root/../shared}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(symbol_json_fuzzer params_fuzzer states_fuzzer idx_fuzzer)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}" -- -j2

seeds() {
  case $1 in
    symbol_json_fuzzer) ls "$shared"/fixtures/mxnet/*.json "$root"/tests/symbol/data/*.json 2>/dev/null ;;
    params_fuzzer) ls "$shared"/fixtures/mxnet/legacy_ndarray.v0 "$root"/tests/fuzz/seeds/params/* 2>/dev/null ;;
    states_fuzzer) ls "$root"/tests/fuzz/seeds/states/* "$root"/tests/fuzz/seeds/params/* ;;
    idx_fuzzer) ls "$root"/tests/fuzz/seeds/idx/* ;;
  esac
}
dict() {
  case $1 in
    symbol_json_fuzzer | states_fuzzer) echo "$root/tests/fuzz/json.dict" ;;
    *) echo "$root/tests/fuzz/params.dict" ;;
  esac
}

status=0
for t in "${targets[@]}"; do
  corpus=$root/build/fuzz/corpus/$t
  mkdir -p "$corpus"
  seeds "$t" | while read -r f; do cp -f "$f" "$corpus/"; done
  log=$root/build/fuzz/$t.log
  start=$(date +%s)
  # -max_len 1 MiB lets inputs nest deep enough to reach the JSON depth limit.
  if ! "$root/build/fuzz/$t" -max_total_time="$seconds" -max_len=1048576 -malloc_limit_mb=512 -rss_limit_mb=2048 \
      -timeout=10 -dict="$(dict "$t")" -print_final_stats=1 -artifact_prefix="$root/build/fuzz/$t-" \
      "$corpus" >"$log" 2>&1; then
    status=1
    echo "FAIL $t: see $log"
    grep -m5 -E "ERROR|SUMMARY|crash|Test unit written" "$log" || true
  fi
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
  echo "$t: ${runs} executions, coverage ${cov}, $(($(date +%s) - start)) s"
done
exit $status
