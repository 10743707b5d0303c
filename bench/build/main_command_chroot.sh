#!/bin/bash
# Times the README's main command from a fresh clone in a fresh copy of a Debian 12 minbase chroot
# (issue 34), as root:
#   bench/build/main_command_chroot.sh BASE_CHROOT [COMMIT]
# BASE_CHROOT: made once with `debootstrap --variant=minbase bookworm DIR http://deb.debian.org/debian`
# and never modified; each run copies it to BASE_CHROOT-run, clones COMMIT (default HEAD) of this
# checkout into it, binds /proc, /sys and /dev, runs the command under `time` and prints when setup
# and the build ended. The build's ninja log is left in BASE_CHROOT-run/root/weft/build/main.
set -euo pipefail
base=${1:?usage: $0 BASE_CHROOT [COMMIT]}
commit=$(git -C "$(dirname "$0")/../.." rev-parse "${2:-HEAD}")
repo=$(git -C "$(dirname "$0")/../.." rev-parse --show-toplevel)
run=${base%/}-run
umount -R "$run/proc" "$run/sys" "$run/dev" 2>/dev/null || true
rm -rf "$run"
cp -a "$base" "$run"
cp /etc/resolv.conf "$run/etc/resolv.conf"
git clone -q "$repo" "$run/root/weft"
git -C "$run/root/weft" checkout -q "$commit"
mount --bind /proc "$run/proc"
mount --bind /sys "$run/sys"
mount --rbind /dev "$run/dev"
trap 'umount -R "$run/proc" "$run/sys" "$run/dev"' EXIT
echo "commit ${commit:0:7} start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
chroot "$run" bash -c 'cd /root/weft && time (scripts/setup.sh --main >/tmp/setup.log 2>&1 &&
  date -u +"setup done %T" && cmake --preset main >/tmp/configure.log && cmake --build --preset main >/tmp/build.log &&
  date -u +"build done %T" && build/main/bin/train_mnist --network mlp --epochs 3 --model-prefix /tmp/weft-mlp 2>&1 | tail -2)'
echo "end $(date -u +%T)"
