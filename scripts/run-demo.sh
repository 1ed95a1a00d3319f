#!/usr/bin/env bash
# The README's run command: installs dependencies, builds, and runs One Shot
# on the bundled demo pipeline for an H100 profile: 16 samples (1 beam search,
# 15 greedy) rather than the paper's 80, so it takes about a minute on 2
# cores; pass --samples 80 for the full batch. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Only what the demo runs: the driver (which builds its plugin, validation
# runner and OpenCL probe) and the demo generator, not the test suite.
scripts/build.sh -DGPUSCHED_BUILD_BENCHMARKS=OFF -- gpusched demo_sharpen.generator
mkdir -p demo-out
exec build/cli/gpusched oneshot build/benchmarks/demo/demo_sharpen.generator -g demo_sharpen \
  --gpu h100 --samples 16 -o demo-out --db demo-out/samples.sqlite "$@"
