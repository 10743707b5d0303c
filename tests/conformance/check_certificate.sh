#!/usr/bin/env bash
# Checks that the committed certificate of a plugin (docs/conformance/<name>.{json,md}) is what
# weft-conformance --stable says now.
#   check_certificate.sh <weft-conformance> <plugin> <committed dir> <output dir>
set -uo pipefail
wc=$1 plugin=$2 committed=$3 out=$4
mkdir -p "$out"
"$wc" --plugin "$plugin" --stable --json "$out/$plugin.json" --markdown "$out/$plugin.md"
status=$?
[ $status -eq 0 ] || { echo "check_certificate: $plugin does not certify (exit $status)" >&2; exit 1; }
for ext in json md; do
  if ! diff -u "$committed/$plugin.$ext" "$out/$plugin.$ext"; then
    echo "check_certificate: $committed/$plugin.$ext is out of date; regenerate it with" \
      "cmake --build --preset default --target conformance_certificates" >&2
    exit 1
  fi
done
echo "check_certificate: $committed/$plugin.{json,md} are current"
