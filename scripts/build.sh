#!/usr/bin/env bash
# Configures and builds gpusched into build/ (Release, Ninja, ccache when
# present). Extra arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${GPUSCHED_BUILD_JOBS:-2}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$JOBS"
