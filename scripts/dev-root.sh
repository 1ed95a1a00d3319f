#!/usr/bin/env bash
# A kept Debian root for working on another Halide than the machine's own:
# Debian 13 (trixie, Halide 19) or sid/forky (Halide 21). Unlike
# in-fresh-debian.sh (a throwaway copy of a pristine root, for CI), this root
# is kept between runs, with its packages installed and its build folder, and
# this checkout itself (not a clone) is bind-mounted at the same path, so an
# edit here is built there at once.
#
#   scripts/dev-root.sh trixie 'cmake -S . -B /var/tmp/b19 -G Ninja -DCMAKE_BUILD_TYPE=Release &&
#                               cmake --build /var/tmp/b19 -j2'
#   scripts/dev-root.sh sid 'cd /var/tmp/b21 && ctest -R search -j2'
#
# (A build folder outside the checkout: build/ is the machine's own Halide's.)
#
# The first run makes the root (debootstrap --variant=minbase, then
# scripts/install-deps.sh --tests inside it). Environment:
# GPUSCHED_DEV_ROOT_DIR (default /var/tmp/gpusched-dev-roots). Needs root.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 trixie|forky|sid 'COMMAND'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "dev-root: needs root (debootstrap, mount, chroot)" >&2; exit 2; }
release=$1; shift
case "$release" in
  trixie | forky | sid) ;;
  *) echo "dev-root: $release: trixie, forky or sid (Debian 12 is this machine's own)" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "$0")/.." && pwd)
root=${GPUSCHED_DEV_ROOT_DIR:-/var/tmp/gpusched-dev-roots}/$release
log() { echo "dev-root: $*" >&2; }

# shellcheck source=scripts/lib/mounts.sh
. "$repo/scripts/lib/mounts.sh"
trap unmount_all EXIT
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
    PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd '$repo' && $*"
}

if [ ! -e "$root/.gpusched-ready" ]; then
  if [ ! -x "$root/bin/bash" ]; then
    mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$mirror" ] || { log "no Debian mirror in this machine's apt sources"; exit 2; }
    command -v debootstrap >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
    log "making a Debian $release root at $root (once)"
    mkdir -p "$(dirname "$root")"
    rm -rf "$root.partial"
    debootstrap --variant=minbase "$release" "$root.partial" "$mirror" >"$root.debootstrap.log" 2>&1 ||
      { log "debootstrap failed: see $root.debootstrap.log"; exit 2; }
    mv "$root.partial" "$root"
  fi
  # sid's and forky's Release files are valid for days only, and the mirror
  # reached from here can lag behind them; packages are still signature-checked.
  case "$release" in
    sid | forky) echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99no-valid-until" ;;
  esac
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount_at "$root/proc" -t proc proc
mount_at "$root/sys" --rbind /sys
mount_at "$root/dev" --rbind /dev
mount_at "$root$repo" --bind "$repo"
if [ -e /usr/local/cuda ]; then
  mount_at "$root/usr/local/cuda" --bind "$(readlink -f /usr/local/cuda)"
  mount -o remount,bind,ro "$root/usr/local/cuda"
fi
if [ ! -e "$root/.gpusched-ready" ]; then
  log "installing the build and test dependencies in the $release root (once)"
  in_root "scripts/install-deps.sh --tests"
  touch "$root/.gpusched-ready"
fi
in_root "$*"
