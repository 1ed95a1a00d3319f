#!/usr/bin/env bash
# The README's test command: installs dependencies, builds everything, and
# runs the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests
scripts/build.sh -DGPUSCHED_BUILD_BENCHMARKS=ON
cd build
ctest --output-on-failure -j "${GPUSCHED_TEST_JOBS:-2}" "$@"
