#!/usr/bin/env bash
# The .deb's manual check (docs/install.md), run inside a fresh Debian 12 root
# with the package shared at /mnt/share:
#
#   mkdir -p /tmp/debshare && cp build/gpusched_*.deb /tmp/debshare/
#   GPUSCHED_FRESH_SHARE=/tmp/debshare scripts/in-fresh-debian.sh 'scripts/check-deb-inside.sh'
#
# Installs the package with apt (Recommends included, as apt does by default;
# --no-install-recommends as the first argument leaves them out), runs the
# README's demo from the package, then builds the package's example CMake
# project and compares its OpenCL twin with the CPU build on POCL.
set -euxo pipefail
apt_extra=("$@")
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${apt_extra[@]}" /mnt/share/gpusched_*.deb >/tmp/apt.log 2>&1 ||
  { tail -30 /tmp/apt.log; exit 1; }
grep -c '^Setting up' /tmp/apt.log
gpusched --version | tail -5
cd /tmp
time gpusched oneshot /usr/lib/gpusched/demo/demo_sharpen.generator -g demo_sharpen --samples 4 \
  -o demo-out --db demo-out/samples.sqlite
if [[ " ${apt_extra[*]} " == *" --no-install-recommends "* ]]; then exit 0; fi
cp -r /usr/share/gpusched/examples/halide_project /tmp/app
cd /tmp/app
time cmake -S . -B build >/tmp/cmake.log 2>&1 || { tail -30 /tmp/cmake.log; exit 1; }
time cmake --build build -j2
POCL_WORK_GROUP_METHOD=loops build/blur_compare
