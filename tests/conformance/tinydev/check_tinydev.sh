#!/usr/bin/env bash
# weft-conformance against tinydev built three ways (CMakeLists.txt here): the good plugin must
# certify (exit 0); the broken ones must fail (exit 1) with a report naming the op, the case and
# the error; a plugin that cannot be loaded must be refused with the reason (exit 2).
#   check_tinydev.sh <weft-conformance> <directory holding libtinydev*.so> <output directory>
set -uo pipefail
wc=$1 dir=$2 out=$3
mkdir -p "$out"
fail() { echo "check_tinydev: $*" >&2; exit 1; }
run() {  # run <plugin file> <name>: exit status of weft-conformance; report in $out/<name>.{txt,json,md}
  "$wc" --plugin "$1" --json "$out/$2.json" --markdown "$out/$2.md" >"$out/$2.txt" 2>&1
}
run "$dir/libtinydev.so" tinydev
status=$?
cat "$out/tinydev.txt"
[ $status -eq 0 ] || fail "the good tinydev did not certify (exit $status)"
grep -q '"result": "certified"' "$out/tinydev.json" || fail "tinydev.json does not say certified"
grep -q '"elemwise_add"' "$out/tinydev.json" || fail "tinydev.json has no elemwise_add row"

for broken in tinydev-ulp tinydev-oob; do
  run "$dir/lib$broken.so" "$broken"
  status=$?
  cat "$out/$broken.txt"
  [ $status -eq 1 ] || fail "$broken: expected exit 1 (failed), got $status"
  # The op, the case (its label) and the error are named in the summary and in both files.
  for f in "$out/$broken.txt" "$out/$broken.md"; do
    grep -q "elemwise_add" "$f" || fail "$f does not name the op"
    grep -q "elemwise_add() on (" "$f" || fail "$f does not name the case"
  done
  grep -q '"result": "failed"' "$out/$broken.json" || fail "$broken.json does not say failed"
done
grep -q "an exactly defined result" "$out/tinydev-ulp.txt" || fail "tinydev-ulp: the one-ulp error is not reported"
grep -q "past the end" "$out/tinydev-oob.txt" || fail "tinydev-oob: the out-of-bounds write is not reported"

# Not a plugin: refused naming the reason.
echo "not an ELF file" >"$out/libnotaplugin.so"
"$wc" --plugin "$out/libnotaplugin.so" >"$out/notaplugin.txt" 2>&1
status=$?
cat "$out/notaplugin.txt"
[ $status -eq 2 ] || fail "a file that is no plugin: expected exit 2, got $status"
grep -q "cannot load plugin" "$out/notaplugin.txt" || fail "no reason given for the unloadable plugin"
echo "check_tinydev: tinydev certified; tinydev-ulp and tinydev-oob failed naming op, case and error"
