#!/usr/bin/env bash
# The public surface check: installs a weft build into a fresh prefix; checks that its include
# folder holds no internal header (core/internal) and that each installed header compiles on its
# own (tests/install/headers); configures and builds all of
# samples/ from that prefix alone (find_package(weft); no path into the source tree's core/), and
# runs them: train_mnist briefly (a checkpoint to read), predict_mnist on it, train_lenet_autograd
# against train_mnist (the same accuracy after one short epoch), and the custom-op sample's check (its plugin built by the installed weft_add_plugin()). Then the installed
# weft-conformance: it certifies the custom-op plugin and tinydev (a device plugin built here
# against the install, tests/conformance/tinydev), and fails tinydev's deliberately broken builds
# naming the op, the case and the error.
#   scripts/check_install.sh [build dir, default build/default]
# Everything goes to <build>/install-check (fixed paths under the checkout, so ccache hits).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
root="$build/install-check"
rm -rf "$root"
mkdir -p "$root"
root=$(cd "$root" && pwd)
cmake --install "$build" --prefix "$root/prefix" >"$root/install.log"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# The installed include folder is the public API only: no internal header (core/internal/weft/internal,
# never installed) under any name, and no installed header that includes one.
inc="$root/prefix/include"
# An internal header installed shows as a weft/internal folder, a copy of one of core/internal's
# files, or a header whose first line says "// weft internal" (as every internal header's does).
leaked=$( (find "$inc" -path '*/weft/internal*'
  grep -rl --include='*.h' --include='*.hpp' -m1 '^// weft internal' "$inc"
  for h in core/internal/weft/internal/*.h; do find "$inc" -type f -exec cmp -s "$h" {} \; -print; done) | sort -u)
if [[ -n "$leaked" ]]; then
  echo "check_install: internal headers were installed (they belong to core/internal, which is not installed):" >&2
  echo "$leaked" >&2
  exit 1
fi
if grep -rn --include='*.h' --include='*.hpp' '#include[[:space:]]*[<"]weft/internal/' "$inc"; then
  echo "check_install: an installed (public) header includes an internal header (above); move what it needs" \
    "into a public header or the declaration into weft/internal" >&2
  exit 1
fi
# Every installed header compiles on its own against the install (tests/install/headers: one
# translation unit per header, including only it).
cmake -S tests/install/headers -B "$root/headers" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$root/prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${launcher[@]}" >"$root/headers-configure.log"
if ! cmake --build "$root/headers" -- -j2 -k 0 >"$root/headers-build.log" 2>&1; then
  grep -E "error|FAILED" "$root/headers-build.log" | head -20 >&2
  echo "check_install: installed headers that do not compile on their own (above; log $root/headers-build.log)" >&2
  exit 1
fi
if grep -q -- "-I$PWD/core\b\|-I$PWD/sdk\b" "$root/headers/compile_commands.json"; then
  echo "check_install: the header check was compiled with an include path into the source tree" >&2
  exit 1
fi
echo "check_install: $(grep -c '"file"' "$root/headers/compile_commands.json") installed headers compile on their own;" \
  "no internal header installed or included"
cmake -S samples -B "$root/samples" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$root/prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${launcher[@]}" >"$root/configure.log"
cmake --build "$root/samples" -- -j2
# Nothing may reach into the source tree's core/ (internal headers): only the prefix's include/.
if grep -q -- "-I$PWD/core\b\|-I$PWD/sdk\b" "$root/samples/compile_commands.json"; then
  echo "check_install: the samples were compiled with an include path into the source tree:" >&2
  grep -o -- "-I$PWD/[^ ]*" "$root/samples/compile_commands.json" | sort -u >&2
  exit 1
fi
# The installed plugins are found next to the installed libweft (no WEFT_PLUGIN_PATH).
unset WEFT_PLUGIN_PATH
"$root/samples/train_mnist/train_mnist" --epochs 1 --num-examples 5000 --model-prefix "$root/mlp" | tail -2
out=$("$root/samples/predict_mnist/predict_mnist" --model-prefix "$root/mlp" --epoch 1)
echo "$out"
grep -q "test accuracy 0\.[5-9]" <<<"$out" || { echo "check_install: predict_mnist accuracy too low" >&2; exit 1; }
ctest --test-dir "$root/samples" --output-on-failure
# LeNet trained imperatively with autograd reaches train_mnist's accuracy after the same epoch:
# same initialisation, data order and optimizer, and autograd's gradients are the executor's, so
# the two runs agree to the last printed digit.
lenet=(--network lenet --epochs 1 --num-examples 2000)
want=$("$root/samples/train_mnist/train_mnist" "${lenet[@]}" | grep -o "Validation-accuracy=[0-9.]*")
got=$("$root/samples/train_lenet_autograd/train_lenet_autograd" "${lenet[@]}" | grep -o "Validation-accuracy=[0-9.]*")
echo "train_mnist LeNet: $want; train_lenet_autograd: $got"
[[ -n "$want" && "$want" == "$got" ]] || { echo "check_install: imperative LeNet differs from train_mnist" >&2; exit 1; }

# weft-conformance from the install, on plugins built against the install only.
conformance="$root/prefix/bin/weft-conformance"
"$conformance" --plugin "$root/samples/custom_op/libswish_op.so" --json "$root/swish.json" \
  --markdown "$root/swish.md" || { echo "check_install: the custom-op plugin did not certify" >&2; exit 1; }
cmake -S tests/conformance/tinydev -B "$root/tinydev" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$root/prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${launcher[@]}" >"$root/tinydev-configure.log"
cmake --build "$root/tinydev" -- -j2
if grep -q -- "-I$PWD/core\b" "$root/tinydev/compile_commands.json"; then
  echo "check_install: tinydev was compiled with an include path into the source tree's core/" >&2
  exit 1
fi
tests/conformance/tinydev/check_tinydev.sh "$conformance" "$root/tinydev" "$root/tinydev-reports"
echo "check_install: samples built and ran against the install in $root/prefix; weft-conformance certified"\
  "the custom op and tinydev and failed the broken tinydevs"
