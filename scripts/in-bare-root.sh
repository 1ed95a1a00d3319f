#!/usr/bin/env bash
# Runs a command in a bare Debian root that has what a GPU node has and
# nothing of Halide's: glibc, a C++ toolchain (g++), xz-utils for `tar xf`,
# POCL with the OpenCL ICD loader for --device opencl, and no libhalide14,
# no LLVM 14 (POCL brings its own LLVM: 15 on Debian 12, 19 on Debian 13).
# GPUSCHED_BARE_ROOT_RELEASE picks the release: bookworm (Debian 12, the
# default: the bundle's own) or trixie (Debian 13: a compiler, binutils and
# C++ runtime newer than the bundle's, as on current GPU nodes). The bundle test
# (test/bundle/) unpacks scripts/make-bundle.sh's tarball there and runs
# Top 5 from it, so a library the bundle forgets fails the test instead of
# being found among the build machine's packages.
#
#   scripts/in-bare-root.sh WORKDIR 'COMMAND'
#
# WORKDIR (a directory here) is the root's /tmp, HOME and working directory;
# COMMAND runs there as root through bash, and whatever it writes stays in
# WORKDIR. The rest of the root is mounted read-only, so no run changes it
# for the next.
#
# The root (debootstrap --variant=minbase RELEASE, then apt-get install of
# the packages below) is made once per release and cached under
# GPUSCHED_BARE_ROOT_CACHE (default /var/cache/gpusched-bare-root); it is
# remade when the package list changes. Making it downloads through this
# machine's apt cache (/var/cache/apt/archives; in CI the shared one).
#
# Needs root: debootstrap, mount and chroot. As another user it re-runs
# itself with `sudo -n` (passwordless sudo) and gives WORKDIR back to that
# user afterwards; without passwordless sudo it exits 2 and says so.
# Exit status: COMMAND's, or 2 when the root cannot be made or entered.
set -euo pipefail

log() { echo "in-bare-root: $*" >&2; }
die() { log "$*"; exit 2; }

[ $# -eq 2 ] || { echo "usage: $0 WORKDIR 'COMMAND'" >&2; exit 2; }
[ -d "$1" ] || die "WORKDIR $1 is not a directory"
work=$(cd "$1" && pwd)
command=$2

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    exec sudo -n GPUSCHED_BARE_ROOT_CACHE="${GPUSCHED_BARE_ROOT_CACHE:-}" \
      GPUSCHED_BARE_ROOT_RELEASE="${GPUSCHED_BARE_ROOT_RELEASE:-}" "$0" "$work" "$command"
  fi
  die "making and entering the bare root needs root (debootstrap, mount, chroot), and $(id -un) has no passwordless sudo ('sudo -n true' failed): run the test as root or with passwordless sudo"
fi

# Every step below runs in a private mount namespace, and making one
# (unshare --propagation private) needs / to be a mount point. In a plain
# chroot (a directory, not a mount) it fails with EINVAL: say so up front.
mountpoint -q / || die "/ here is not a mount point (a plain chroot of a directory?), so no private mount namespace can be made for the bare root: run in a container, on a machine, or in a root that is itself mounted (scripts/in-fresh-debian.sh mounts its root)"

# What a GPU node has, besides its GPU driver. The bundle's docs/bundle.md
# lists the same; change both together.
packages=(g++ xz-utils pocl-opencl-icd ocl-icd-libopencl1)
release=${GPUSCHED_BARE_ROOT_RELEASE:-bookworm}
case $release in
  bookworm | trixie) ;;
  *) die "GPUSCHED_BARE_ROOT_RELEASE=$release: the bare root is bookworm (Debian 12) or trixie (Debian 13)" ;;
esac
cache=${GPUSCHED_BARE_ROOT_CACHE:-/var/cache/gpusched-bare-root}
root=$cache/$release-gpu-node
stamp="debootstrap --variant=minbase $release; apt-get install --no-install-recommends ${packages[*]}"
mkdir -p "$cache/mnt"

# Runs hold the lock shared (the root must not be remade under them); making
# the root holds it exclusively.
exec 9>"$cache/lock"
flock -s 9

ready() { [ -f "$root/.gpusched-bare-root" ] && [ "$(cat "$root/.gpusched-bare-root")" = "$stamp" ]; }

make_root() {
  local mirror partial=$root.partial started=$SECONDS
  command -v debootstrap >/dev/null || die "debootstrap is missing (scripts/install-deps.sh installs it)"
  # The Debian mirror this machine's apt uses (deb822 sources first).
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || die "no Debian mirror in this machine's apt sources"
  log "making a bare $release root at $root (once): minbase + ${packages[*]}"
  rm -rf "$partial" "$root"
  mkdir -p /var/cache/apt/archives/partial
  # Each step in a mount namespace of its own: the mounts it makes in the
  # root (/proc, the .deb cache) vanish with it, even when it is killed.
  unshare --mount --propagation private -- \
    debootstrap --variant=minbase --cache-dir=/var/cache/apt/archives "$release" "$partial" "$mirror" \
    >"$cache/make-root.log" 2>&1 || die "debootstrap failed: see $cache/make-root.log"
  cp /etc/resolv.conf "$partial/etc/resolv.conf"
  # apt inside the new root, downloading through this machine's .deb cache.
  unshare --mount --propagation private -- bash -c '
    set -e
    r=$1; shift
    mount -t proc proc "$r/proc"
    mount --bind /var/cache/apt/archives "$r/var/cache/apt/archives"
    chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
      sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends \
             -o APT::Keep-Downloaded-Packages=true \"\$@\"" sh "$@"
  ' bash "$partial" "${packages[@]}" >>"$cache/make-root.log" 2>&1 ||
    die "installing ${packages[*]} in the bare root failed: see $cache/make-root.log"
  echo "$stamp" >"$partial/.gpusched-bare-root"
  mv "$partial" "$root"
  log "made the bare root in $((SECONDS - started)) s"
}

if ! ready; then
  flock -u 9
  flock -x 9
  ready || make_root
  flock -s 9
fi

# The run: the cached root read-only, WORKDIR as its /tmp, the machine's
# /proc, /dev and /sys (hwloc, which POCL uses, reads the CPU topology there).
view=$(mktemp -d "$cache/mnt/run.XXXXXX")
set +e
unshare --mount --propagation private -- bash -c '
  set -e
  r=$1 view=$2 work=$3 command=$4
  mount --bind "$r" "$view"
  mount -o remount,bind,ro "$view"
  mount -t proc proc "$view/proc"
  mount --rbind /dev "$view/dev"
  mount --rbind /sys "$view/sys"
  mount --bind "$work" "$view/tmp"
  exec chroot "$view" /usr/bin/env -i HOME=/tmp TMPDIR=/tmp TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /tmp && $command"
' bash "$root" "$view" "$work" "$command"
rc=$?
set -e
rmdir "$view" 2>/dev/null || true
if [ -n "${SUDO_UID:-}" ]; then chown -R "$SUDO_UID:$SUDO_GID" "$work"; fi
exit "$rc"
