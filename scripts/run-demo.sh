#!/usr/bin/env bash
# The README's run command: installs dependencies, builds, and runs One Shot
# on the bundled demo pipeline for an H100 profile. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DGPUSCHED_BUILD_BENCHMARKS=OFF
mkdir -p demo-out
exec build/cli/gpusched oneshot build/benchmarks/demo/demo_sharpen.generator -g demo_sharpen \
  --gpu h100 -o demo-out --db demo-out/samples.sqlite "$@"
