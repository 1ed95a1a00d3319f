#!/usr/bin/env bash
# Configures and builds gpusched into build/ (Release, Ninja, ccache when
# present). Usage: scripts/build.sh [CMake configure args...] [-- targets...]
# Without targets it builds everything the configuration enables.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${GPUSCHED_BUILD_JOBS:-2}"
configure=() targets=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; targets=("$@"); break; fi
  configure+=("$1"); shift
done
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${configure[@]}" >/dev/null
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build build -j "$JOBS" --target "${targets[@]}"
else
  cmake --build build -j "$JOBS"
fi
