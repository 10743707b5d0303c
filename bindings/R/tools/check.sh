#!/usr/bin/env bash
# Builds the R package 'mxnet' against a weft build and runs R CMD check on it, which installs it
# into a temporary library, runs its examples and its testthat tests (tests/testthat), and checks
# its code and documentation. Fails on any ERROR or WARNING of the check (NOTEs are printed).
#
#   MXNET_LIBRARY_PATH=build/default/lib/libweft_mxnet.so bindings/R/tools/check.sh
#
# Environment: MXNET_LIBRARY_PATH (required: weft's libweft_mxnet.so); WEFT_PLUGIN_PATH (the
# plugins of a build tree); for the tests that need them WEFT_TRAIN_MNIST and WEFT_PREDICT_MNIST
# (weft's sample programs) and WEFT_MXNET_PYTHON (a Python with mxnet==1.9.1, for the cross-check
# against MXNet's Python on the same library); tests without them are skipped, saying why.
# Steps: install into a temporary library (the help pages of the generated operator functions are
# written from that install's operator list by tools/gen_op_docs.R), R CMD build, R CMD check.
# The package's C++ compiles twice (the first install, then the check's); ccache makes the second
# one a cache hit.
set -euo pipefail
pkg=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z "${MXNET_LIBRARY_PATH:-}" || ! -f "$MXNET_LIBRARY_PATH" ]]; then
  echo "check.sh: set MXNET_LIBRARY_PATH to weft's libweft_mxnet.so (build the weft_mxnet target)" >&2
  exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/weft-r-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
if command -v ccache >/dev/null; then
  printf 'CXX17 = ccache %s\n' "$(R CMD config CXX17)" > "$work/Makevars"
  export R_MAKEVARS_USER="$work/Makevars"
fi
export MAKEFLAGS="-j${WEFT_R_JOBS:-2}"
step() { printf '\n---- R package: %s (at %d s) ----\n' "$*" "$SECONDS"; }

step "install into a temporary library"
mkdir -p "$work/lib" "$work/src"
cp -r "$pkg" "$work/src/mxnet"
rm -rf "$work/src/mxnet/tools"
R CMD INSTALL --no-test-load -l "$work/lib" "$work/src/mxnet" > "$work/install.log" 2>&1 || {
  cat "$work/install.log"
  exit 1
}
step "help pages of the generated operator functions"
Rscript "$pkg/tools/gen_op_docs.R" "$work/src/mxnet/man" "$work/lib"
step "R CMD build"
(cd "$work" && R CMD build --no-build-vignettes src/mxnet > build.log 2>&1) || {
  cat "$work/build.log"
  exit 1
}
step "R CMD check (install, examples, testthat tests, code and documentation)"
status=0
(cd "$work" && _R_CHECK_FORCE_SUGGESTS_=false R CMD check --no-manual mxnet_*.tar.gz) || status=$?
out="$work/mxnet.Rcheck"
for f in "$out/tests/testthat.Rout" "$out/tests/testthat.Rout.fail"; do
  if [[ -f "$f" ]]; then
    step "testthat output ($(basename "$f"))"
    sed -n '/^> test_check/,$p' "$f"
  fi
done
if [[ $status -ne 0 ]] || grep -qE '^Status: .*(ERROR|WARNING)' "$out/00check.log"; then
  step "FAILED: R CMD check reported errors or warnings (see above); 00install.out:"
  tail -30 "$out/00install.out" || true
  exit 1
fi
step "passed ($(grep '^Status:' "$out/00check.log"))"
