#!/usr/bin/env bash
# Runs a command in this repository's committed HEAD, cloned into a fresh
# minimal Debian root (12 by default; GPUSCHED_DEBIAN_RELEASE=trixie for
# Debian 13), as root: what a newcomer's new machine is. CI runs
# the README's commands this way (.ci/run), so a package that only the
# developers' machines have (installed by hand once) fails CI instead of
# hiding behind it.
#
#   scripts/in-fresh-debian.sh 'scripts/run-demo.sh && scripts/run-tests.sh'
#
# The pristine root (debootstrap --variant=minbase RELEASE) is made once per
# release and cached; every run gets a throwaway copy of it (an overlay, or a copy where
# overlays cannot be mounted), so nothing installed by one run is there for
# the next. Two caches are shared with the runs and change no result: the
# downloaded .deb files (apt still installs them fresh) and ccache. The
# host's CUDA toolkit is mounted read-only at /usr/local/cuda, as a CUDA user
# has it. Needs root (debootstrap, mount, chroot).
#
# Environment: GPUSCHED_FRESH_ROOT_CACHE (default /var/cache/gpusched-ci);
# GPUSCHED_FRESH_SHARE=DIR mounts DIR read-only at /mnt/share in the root
# (to try a bundle made here on a machine without the Debian packages).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 'COMMAND'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "in-fresh-debian: needs root (debootstrap, mount, chroot)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${GPUSCHED_FRESH_ROOT_CACHE:-/var/cache/gpusched-ci}
release=${GPUSCHED_DEBIAN_RELEASE:-bookworm}
case "$release" in
  bookworm | trixie | forky | sid) ;;
  *) echo "in-fresh-debian: GPUSCHED_DEBIAN_RELEASE=$release: bookworm, trixie, forky or sid" >&2; exit 2 ;;
esac
pristine=$cache/$release-minbase
mkdir -p "$cache/runs"

log() { echo "in-fresh-debian: $*" >&2; }

# One run at a time: runs share the .deb cache, whose lock apt holds for a
# whole install, so a second run would fail on it rather than wait.
exec 9>"$cache/run.lock"
if ! flock -n 9; then
  log "waiting for another run to finish (lock $cache/run.lock)"
  flock 9
fi

if [ ! -x "$pristine/bin/bash" ]; then
  # The Debian mirror this machine's apt uses (deb822 sources first).
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || { log "no Debian mirror in this machine's apt sources"; exit 2; }
  if ! command -v debootstrap >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  log "making a minimal Debian $release root at $pristine (once)"
  rm -rf "$pristine.partial"
  debootstrap --variant=minbase "$release" "$pristine.partial" "$mirror" >"$cache/debootstrap-$release.log" 2>&1 ||
    { log "debootstrap failed: see $cache/debootstrap-$release.log"; exit 2; }
  mv "$pristine.partial" "$pristine"
fi

run=$(mktemp -d "$cache/runs/run.XXXXXX")
root=$run/root
# shellcheck source=scripts/lib/mounts.sh
. "$repo/scripts/lib/mounts.sh"
cleanup() {
  unmount_all
  rm -rf "$run"
}
trap cleanup EXIT

mkdir -p "$root" "$run/upper" "$run/work"
if mount -t overlay overlay -o "lowerdir=$pristine,upperdir=$run/upper,workdir=$run/work" "$root" 2>/dev/null; then
  mounted+=("$root")
else
  log "no overlay mounts here: copying the root instead"
  cp -a "$pristine/." "$root/"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount_at "$root/proc" -t proc proc
mount_at "$root/sys" --rbind /sys
mount_at "$root/dev" --rbind /dev
mkdir -p "$cache/apt-archives-$release/partial"
mount_at "$root/var/cache/apt/archives" --bind "$cache/apt-archives-$release"
mkdir -p "$cache/ccache-$release"
mount_at "$root/root/.cache/ccache" --bind "$cache/ccache-$release"
if [ -e /usr/local/cuda ]; then
  mount_at "$root/usr/local/cuda" --bind "$(readlink -f /usr/local/cuda)"
  mount -o remount,bind,ro "$root/usr/local/cuda"
else
  log "no CUDA toolkit at /usr/local/cuda on this machine: the root has none either"
fi
if [ -n "${GPUSCHED_FRESH_SHARE:-}" ]; then
  mount_at "$root/mnt/share" --bind "$GPUSCHED_FRESH_SHARE"
  mount -o remount,bind,ro "$root/mnt/share"
fi
# Keep downloaded packages for the next run (Debian's docker-style images
# delete them; a minbase root keeps them, but say so).
echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$root/etc/apt/apt.conf.d/99keep-debs"
# sid's and forky's Release files are valid for days only; a mirror that
# lags behind (a stored copy) makes apt refuse them as expired. The root is
# thrown away after the run, and the packages are still signature-checked.
case "$release" in
  sid | forky) echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99no-valid-until" ;;
esac

git clone -q "$repo" "$root/home/newcomer/project"
log "running in a fresh Debian $release root: $*"
chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb CI="${CI:-}" \
  PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c "cd /home/newcomer/project && $*"
