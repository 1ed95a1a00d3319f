#!/usr/bin/env bash
# Samples per minute of `gpusched tune --mode autotune` and where the time
# goes, as docs/results/autotune-pocl.md reports it:
#
#   scripts/measure-autotune.sh BUILD_DIR GENERATOR NAME ITERATIONS BATCH WORK_DIR [extra tune args...]
#
# e.g. scripts/measure-autotune.sh build build/test/driver/driver_test_generators tiny_stencil 2 8 /tmp/at
# Runs on POCL (--device opencl). Prints the wall time, the CPU time of the
# whole process tree (user + sys: what a shared machine's load does not
# inflate), the load average before and after, and sums over the run's rows.
set -euo pipefail
if [ $# -lt 6 ]; then
    sed -n 2,10p "$0"
    exit 2
fi
build=$1 gen=$2 name=$3 iters=$4 batch=$5 work=$6
shift 6
command -v sqlite3 >/dev/null || { echo "measure-autotune.sh needs sqlite3 (apt-get install sqlite3)" >&2; exit 2; }
rm -rf "$work"
mkdir -p "$work"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f '%e %U %S' -o "$work/time" "$build/cli/gpusched" --json tune "$gen" -g "$name" --mode autotune \
    --device opencl --gpu h100 --iterations "$iters" --batch "$batch" -o "$work/out" --db "$work/db.sqlite" "$@" \
    >"$work/at.json" 2>"$work/err"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r wall user sys <"$work/time"
samples=$(sqlite3 "$work/db.sqlite" "SELECT count(*) FROM samples")
measured=$(sqlite3 "$work/db.sqlite" "SELECT count(*) FROM samples WHERE benchmark = 'measured'")
awk -v w="$wall" -v u="$user" -v s="$sys" -v n="$samples" -v m="$measured" 'BEGIN {
    printf "samples %d (measured %d)\nwall %.1f s, cpu (user+sys) %.1f s\nsamples per minute (wall) %.1f\ncpu seconds per sample %.2f\n",
        n, m, w, u + s, 60 * n / w, (u + s) / n }'
sqlite3 -separator ' ' "$work/db.sqlite" "
SELECT 'search in the generator, summed s', round(sum(autoschedule_s), 2) FROM samples;
SELECT 'generator processes (compile), summed s', round(sum(compile_s), 2) FROM samples;
SELECT 'benchmark wall per sample, summed s', round(sum(json_extract(benchmark_detail, '\$.wall_seconds')), 2) FROM samples;
SELECT '  of which timed calls s', round(sum(json_extract(benchmark_detail, '\$.timed_ms')) / 1000, 2) FROM samples;
SELECT '  of which first calls s', round(sum(json_extract(benchmark_detail, '\$.first_call_ms')) / 1000, 2) FROM samples;
SELECT '  of which setup (load, inputs, bounds query) s', round(sum(json_extract(benchmark_detail, '\$.setup_ms')) / 1000, 2) FROM samples;
SELECT 'retraining, summed s', round(sum(retrain_s), 3) FROM autotune_batches;"
