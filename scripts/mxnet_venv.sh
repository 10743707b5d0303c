#!/usr/bin/env bash
# Makes (once) a Python virtual environment with MXNet 1.9.1's Python package from PyPI, for the
# MXNet binding's tests and the binding benchmarks, and prints its python. MXNet's frontend is used
# unmodified: it loads weft's libweft_mxnet when MXNET_LIBRARY_PATH names it.
# Usage: scripts/mxnet_venv.sh [DIR]    (default build/mxvenv)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/mxvenv}
if [[ ! -x "$dir/bin/python" ]] || ! "$dir/bin/python" -c 'import mxnet, pytest' >/dev/null 2>&1; then
  python3 -m venv "$dir" >&2
  # mxnet 1.9.1 uses np.bool, which numpy 1.24 removed.
  "$dir/bin/pip" install -q --disable-pip-version-check 'mxnet==1.9.1' 'numpy<1.24' pytest >&2
fi
echo "$PWD/$dir/bin/python"
