#!/usr/bin/env bash
# Installs the Debian packages of scripts/packages-main.txt and scripts/packages.txt that are not
# installed yet.
# Usage: scripts/setup.sh [--main | --bench]
#   --main   only scripts/packages-main.txt: what the README's main command builds and runs
#   --bench  adds scripts/packages-bench.txt (the PyTorch peer)
# Runs as root (or through sudo when it is available). Idempotent: a second run installs nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lists=("$here/packages-main.txt")
case "${1:-}" in
  --main) ;;
  --bench) lists+=("$here/packages.txt" "$here/packages-bench.txt") ;;
  "") lists+=("$here/packages.txt") ;;
  *) echo "setup: unknown option '$1' (use --main, --bench or nothing)" >&2; exit 2 ;;
esac
mapfile -t wanted < <(grep -hv '^\s*#' "${lists[@]}" | awk 'NF {print $1}')
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#wanted[@]} packages present"
  exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
