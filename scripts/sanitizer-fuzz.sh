#!/usr/bin/env bash
# Random-pipeline fuzzing under AddressSanitizer and UBSan (issue 29).
#
# Usage: scripts/sanitizer-fuzz.sh [--build-dir DIR] [--driver GPUSCHED]
#                                  [--seeds A:B] [-j N] [--timeout S]
#                                  [--work-dir DIR] [-o SUMMARY.md] [params...]
#
# Configures DIR (default build-asan) with GPUSCHED_SANITIZE=address,undefined
# (CMakeLists.txt), builds what `gpusched fuzz` runs (the driver, the plugin,
# the random-pipeline generator, the benchmark runner library and the OpenCL
# probe), then runs `gpusched fuzz` from it: every seed's beam search and
# greedy sample inside an instrumented generator, each schedule compiled for
# CUDA, ptxas-checked and validated on POCL. A sanitizer report aborts the
# process that made it, so its seed fails and the summary names the step;
# the report itself is in that seed's logs under the work directory.
# --driver GPUSCHED runs that (uninstrumented) driver instead and builds only
# the search's side instrumented: the plugin and the generator it runs in
# (GPUSCHED_PLUGIN and --generator point the driver at them). CI does this:
# the search is what the fuzz exercises, and an instrumented driver's build
# is most of the step's time.
# Params default to the fuzz's own (size=small num_outputs=0); the summary
# goes to stdout unless -o names a file. --timeout (seconds per step) is
# 3600 by default: instrumented searches run several times slower than
# release ones, and a busy machine's took more than the fuzz's 600 s.
# Exit status: gpusched fuzz's.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-asan driver="" seeds=0:19 jobs=2 timeout=3600 work=sanitizer-fuzz-out summary=""
params=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --driver) driver="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --work-dir) work="$2"; shift 2 ;;
    -o) summary="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "sanitizer-fuzz: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) params+=("$1"); shift ;;
  esac
done
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPUSCHED_SANITIZE=address,undefined -DGPUSCHED_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
driver_args=()
if [ -n "$driver" ]; then
  [ -x "$driver" ] || { echo "sanitizer-fuzz: --driver $driver is not an executable" >&2; exit 2; }
  cmake --build "$build" -j "${GPUSCHED_BUILD_JOBS:-2}" --target gpusched_autoscheduler random_pipeline.generator
  build_abs=$(cd "$build" && pwd)
  export GPUSCHED_PLUGIN=$build_abs/core/libgpusched_autoscheduler.so
  driver_args=(--generator "$build_abs/benchmarks/random_pipeline/random_pipeline.generator")
else
  cmake --build "$build" -j "${GPUSCHED_BUILD_JOBS:-2}" --target gpusched gpusched_autoscheduler \
    random_pipeline.generator gpusched_benchmark_runner gpusched-opencl-probe
  driver=$build/cli/gpusched
fi
# Halide keeps its compiled pipelines and runtime alive until exit, by
# design: leaks are not findings. Reports go to each process's stderr, which
# the fuzz keeps per step.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
out=()
[ -n "$summary" ] && out=(-o "$summary")
exec "$driver" fuzz --build-dir "$build" "${driver_args[@]}" --seeds "$seeds" -j "$jobs" --timeout "$timeout" --work-dir "$work" \
  "${out[@]}" "${params[@]}"
