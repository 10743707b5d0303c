#!/usr/bin/env bash
# The one entry point for fuzzing, in CI (scripts/test.sh) and by hand. Builds the libFuzzer
# targets of tests/fuzz (the `fuzz` preset: clang, ASan + UBSan, libweft's sources
# coverage-instrumented; only the core modules the targets link are compiled) and runs each for
# FUZZ_SECONDS on its dictionary and a seed corpus assembled in build/fuzz/fuzz/seeds/. Fails on any
# crash, sanitizer report, leak, timeout (> 10 s for one input) or allocation over 512 MiB; the
# input that failed is kept as build/fuzz/fuzz/<target>-crash-* (or -leak-, -timeout-, -oom-).
#   usage: scripts/fuzz.sh [target ...]        (default: all five)
#   FUZZ_SECONDS  fuzzing time per target (default 60: what CI runs)
#   FUZZ_JOBS     targets run at once (default 2: CI's 2 cores)
# Long run, as documented in the issue-19 note: FUZZ_SECONDS=600 FUZZ_JOBS=1 nice -n 10 scripts/fuzz.sh
# Prints one line per target: executions, executions/s, coverage (libFuzzer's cov and ft at the
# end), corpus size, seconds. The corpus of each target grows in build/fuzz/fuzz/corpus/<target>
# across runs (delete it for a run from the seeds only).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${FUZZ_SECONDS:-60}
parallel=${FUZZ_JOBS:-2}
shared=${WEFT_SHARED_DIR:-$root/../shared}
out=$root/build/fuzz/fuzz  # the targets, seeds, corpora, logs and failing inputs
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(symbol_json_fuzzer params_fuzzer states_fuzzer idx_fuzzer recordio_fuzzer)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_seeds "${targets[@]}" -- -j"${FUZZ_BUILD_JOBS:-2}"

# Seeds: weft-made files (fuzz_seeds), the MXNet fixtures and the test suite's data files, read
# where they are (never copied into the repository). Files over 16 KiB are left out: the fuzzer's
# speed falls with input size, and the small ones cover the same structure.
seeds=$out/seeds
rm -rf "$seeds"
"$out/fuzz_seeds" "$seeds/generated"
add_seeds() {  # <target> <file>...
  local dir=$seeds/$1 f
  shift
  mkdir -p "$dir"
  for f in "$@"; do
    if [[ -f $f && $(stat -c %s "$f") -le 16384 ]]; then cp "$f" "$dir/$(basename "$(dirname "$f")")_$(basename "$f")"; fi
  done
}
shopt -s nullglob
add_seeds symbol_json_fuzzer "$shared"/fixtures/mxnet/*.json "$root"/tests/symbol/data/*.json \
  "$root"/tests/compat/data/*-symbol.json
add_seeds params_fuzzer "$seeds"/generated/params/* "$shared"/fixtures/mxnet/legacy_ndarray.v0 \
  "$root"/tests/compat/data/*.params "$root"/tests/ndarray/data/*.params
add_seeds states_fuzzer "$seeds"/generated/states/* "$seeds"/generated/params/*
add_seeds idx_fuzzer "$seeds"/generated/idx/* /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
add_seeds recordio_fuzzer "$seeds"/generated/recordio/* "$root"/tests/io/data/*.rec
shopt -u nullglob

dict() {
  case $1 in
    symbol_json_fuzzer) echo "$root/tests/fuzz/json.dict" ;;
    idx_fuzzer) echo "$root/tests/fuzz/idx.dict" ;;
    recordio_fuzzer) echo "$root/tests/fuzz/recordio.dict" ;;
    *) echo "$root/tests/fuzz/params.dict" ;;
  esac
}
# The states target reads both an NDArray list and the JSON inside it: both dictionaries.
merged_dict=$out/states.dict
cat "$root/tests/fuzz/params.dict" "$root/tests/fuzz/json.dict" >"$merged_dict"

run_one() {  # <target>: runs it, writes <target>.rc and <target>.summary
  local t=$1 log=$out/$t.log corpus=$out/corpus/$1 d start rc=0
  d=$(dict "$t")
  [[ $t == states_fuzzer ]] && d=$merged_dict
  mkdir -p "$corpus"
  start=$(date +%s)
  # -max_len 1 MiB: inputs may grow deep enough to reach the JSON depth limit and large enough for
  # the size checks against the header; libFuzzer lengthens inputs gradually, so most stay small.
  "$out/$t" -max_total_time="$seconds" -max_len=1048576 -malloc_limit_mb=512 -rss_limit_mb=2048 \
    -timeout=10 -dict="$d" -print_final_stats=1 -artifact_prefix="$out/$t-" \
    "$corpus" "$seeds/$t" >"$log" 2>&1 || rc=$?
  echo "$rc" >"$out/$t.rc"
  local runs rate cov ft corp
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  rate=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
  corp=$(find "$corpus" -type f | wc -l)
  printf '%-20s %s: %s executions, %s exec/s, cov %s, ft %s, corpus %s, %d s\n' "$t" \
    "$([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)")" "$runs" "$rate" "$cov" "$ft" "$corp" \
    $(($(date +%s) - start)) >"$out/$t.summary"
}

for t in "${targets[@]}"; do
  rm -f "$out/$t.rc" "$out/$t.summary"
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  run_one "$t" &
done
wait

status=0
for t in "${targets[@]}"; do
  cat "$out/$t.summary"
  if [[ $(cat "$out/$t.rc") != 0 ]]; then
    status=1
    grep -m8 -E "ERROR|SUMMARY|Test unit written|==[0-9]+==" "$out/$t.log" || true
    echo "  full log: $out/$t.log"
  fi
done
exit $status
