#!/usr/bin/env bash
# Collects the states real gpusched searches cost, on the suite apps, the
# reduction-shaped apps and seeded random pipelines, into one feature-rows
# file: the training set the default weights are fitted on
# (docs/costmodel.md, "The default weights").
#
# Every search also ranks the reduction-split variants of its pipeline
# (core/reduction_split_search.h); their states are dumped too, each variant
# under its own pipeline key and with the name of the pipeline it came
# from, so a fit learns what splitting a serial reduction is worth and a
# held-out pipeline is held out with its variants.
#
# Each pipeline is searched several ways so the set covers what One Shot
# sees (one beam search + greedy samples with dropout, network-guided with
# the embedded weights) and what a better model would steer to (the same
# searches guided by the analytic model):
#   greedy-net-s0..s2  beam 1, 1 pass, dropout 0.2, seeds 0-2, network, <= 128 states kept
#                      (One Shot's greedy samples)
#   greedy-ana-s0      beam 1, 1 pass, dropout 0.5, seed 0, analytic, <= 128 states kept
#   beam-net           beam B x P passes, seed 0, network, <= 256 states kept
#   beam-ana           beam B x P passes, seed 1, analytic, <= 128 states kept
# B x P = 16 x 3 for pipelines of at most 30 Funcs and 8 x 2 above (the
# default 32 x 5 costs ~300,000 states on nl_means and minutes on the big
# apps, and every generator run also pays Halide's lowering, 3-40 s on a
# loaded 2-core machine); the Func count is read from the first greedy run's
# record, so the choice does not depend on the
# machine's speed. Every run has a timeout; a run that fails or times out is
# logged in runs.tsv and contributes nothing. The caps on states kept per run
# (a uniform sample of what the run costed) keep one pipeline from
# dominating: every record carries the whole pipeline's features, ~110 KB
# per state on local_laplacian's 86 Funcs.
#
# Usage:
#   costmodel/tools/collect_search_states.sh [--build DIR] [--generators DIR] [--out DIR]
#       [--random N] [--random-reductions N] [--timeout S] [--jobs N] [--keep-runs]
#   --build       build tree with core/libgpusched_autoscheduler.so and
#                 costmodel/gpusched_merge_feature_rows (default: build)
#   --generators  build tree with benchmarks/apps/*.generator and
#                 benchmarks/random_pipeline/random_pipeline.generator (default: --build)
#   --out         output folder (default: /tmp/gpusched-search-states)
#   --random      random pipelines, seeds 1..N (default 20)
#   --random-reductions
#                 random pipelines with small-output reductions
#                 (reductions=true size=small), seeds 1..N (default 10)
#   --timeout     seconds per generator run (default 600)
#   --jobs        pipelines collected at once (default 1); the result does
#                 not depend on it (every run is seeded and writes its own files)
#   --keep-runs   keep the per-run files (they hold one copy of the pipeline
#                 features per state; the merged file is about as large)
#
# Output in --out: search_states.rows (the merged, de-duplicated training set),
# search_states.pipelines.tsv (pipeline key, name, group, states), runs.tsv
# (one line per run: what was run and what it gave), records/ (search records).
# Run it with nice: it is long (tens of minutes) and single-threaded.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$repo/build"
generators=""
out="/tmp/gpusched-search-states"
random_count=20
reduction_count=10
timeout_s=600
keep_runs=0
max_jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --generators) generators="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --random) random_count="$2"; shift 2 ;;
    --random-reductions) reduction_count="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --jobs) max_jobs="$2"; shift 2 ;;
    --keep-runs) keep_runs=1; shift ;;
    *) echo "collect_search_states.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$generators" ] || generators="$build"
build="$(cd "$build" && pwd)"
generators="$(cd "$generators" && pwd)"
plugin="$build/core/libgpusched_autoscheduler.so"
merge="$build/costmodel/gpusched_merge_feature_rows"
for f in "$plugin" "$merge" "$generators/benchmarks/random_pipeline/random_pipeline.generator"; do
  [ -e "$f" ] || { echo "collect_search_states.sh: missing $f (build it first)" >&2; exit 2; }
done
# The generator arguments that load the plugin and select it, in its Halide's protocol.
mapfile -t select_gpusched < <(python3 "$(dirname "$0")/../../benchmarks/halide_generator_args.py" "$plugin" gpusched)
[ ${#select_gpusched[@]} -gt 0 ] || { echo "collect_search_states.sh: cannot read $plugin's Halide" >&2; exit 2; }

# A suite file lists apps; read it with jq, or python3 where jq is missing.
suite_apps() {
  if command -v jq >/dev/null; then
    jq -r '.apps[] | [.name, .generator, .generator_name, ([.params | to_entries[] | "\(.key)=\(.value)"] | join(" "))] | @tsv' \
      "$1"
  else
    python3 -c 'import json,sys
for a in json.load(open(sys.argv[1]))["apps"]:
    print("\t".join([a["name"], a["generator"], a["generator_name"], " ".join("%s=%s" % kv for kv in a["params"].items())]))' \
      "$1"
  fi
}

# The Func count of a search record (its decisions list).
record_funcs() {
  if command -v jq >/dev/null; then jq '.decisions | length' "$1"
  else python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["decisions"]))' "$1"; fi
}
record_costed() {
  if command -v jq >/dev/null; then jq '.statistics.states_costed' "$1"
  else python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["statistics"]["states_costed"])' "$1"; fi
}

mkdir -p "$out/runs" "$out/records" "$out/tmp"
runs_tsv="$out/runs.tsv"
printf 'group\tpipeline\tconfig\tbeam\tpasses\tdropout\tseed\tcost_model\tkept_max\trc\tseconds\tstates_costed\n' > "$runs_tsv"

# run_search GROUP NAME GEN GEN_NAME "PARAMS" CONFIG BEAM PASSES DROPOUT SEED MODEL KEEP
run_search() {
  local group="$1" name="$2" gen="$3" gen_name="$4" params="$5" config="$6"
  local beam="$7" passes="$8" dropout="$9" seed="${10}" model="${11}" keep="${12}"
  local tag="${name}__${config}"
  mkdir -p "$out/runs/$group" "$out/records/$group"
  local rows="$out/runs/$group/$tag.rows" record="$out/records/$group/$tag.json" cfg="$out/tmp/$tag.json"
  rm -f "$rows" "$record"
  cat > "$cfg" <<EOF
{"beam_size": $beam, "passes": $passes, "dropout": $dropout, "seed": $seed, "cost_model": "$model",
 "dump_states_path": "$rows", "dump_states_max": $keep, "record_path": "$record"}
EOF
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086  # params is a list of key=value words
  mkdir -p "$out/tmp/$tag"
  GPUSCHED_CONFIG="$cfg" timeout "$timeout_s" "$gen" -g "$gen_name" -o "$out/tmp/$tag" -e schedule \
    target=host-cuda-cuda_capability_86 "${select_gpusched[@]}" $params \
    > "$out/tmp/$tag.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  local costed="-"
  if [ "$rc" -eq 0 ] && [ -s "$record" ]; then costed="$(record_costed "$record")"; else rm -f "$rows"; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\n' "$group" "$name" "$config" "$beam" "$passes" \
    "$dropout" "$seed" "$model" "$keep" "$rc" "$(echo "$t1 - $t0" | bc)" "$costed" >> "$runs_tsv"
  echo "[$group] $tag: rc=$rc states_costed=$costed" >&2
}

# collect_pipeline GROUP NAME GEN GEN_NAME "PARAMS"
collect_pipeline() {
  local group="$1" name="$2" gen="$3" gen_name="$4" params="$5"
  local s
  for s in 0 1 2; do
    run_search "$group" "$name" "$gen" "$gen_name" "$params" "greedy-net-s$s" 1 1 0.2 "$s" network 128
  done
  run_search "$group" "$name" "$gen" "$gen_name" "$params" greedy-ana-s0 1 1 0.5 0 analytic 128
  local first="$out/records/$group/${name}__greedy-net-s0.json" funcs=0 beam=16 passes=3
  [ -s "$first" ] && funcs="$(record_funcs "$first")"
  if [ "$funcs" -gt 30 ]; then beam=8; passes=2; fi
  run_search "$group" "$name" "$gen" "$gen_name" "$params" beam-net "$beam" "$passes" 0 0 network 256
  run_search "$group" "$name" "$gen" "$gen_name" "$params" beam-ana "$beam" "$passes" 0 1 analytic 128
}

# At most $max_jobs pipelines at once (bash's wait -n).
throttle() {
  while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do wait -n || true; done
}

while IFS=$'\t' read -r name gen gen_name params; do
  throttle
  collect_pipeline suite "$name" "$generators/$gen" "$gen_name" "$params" &
done < <(suite_apps "$repo/benchmarks/suite.json")
# The reduction-shaped apps (issue 27) are a group of their own, so the
# hold-out takes some of them (histogram_equalize is in both suites: it is
# collected once, with the suite).
while IFS=$'\t' read -r name gen gen_name params; do
  grep -q "\"$name\"" "$repo/benchmarks/suite.json" && continue
  throttle
  collect_pipeline ml "$name" "$generators/$gen" "$gen_name" "$params" &
done < <(suite_apps "$repo/benchmarks/suite-ml.json")

# Random pipelines: sizes and stage counts cycle with the seed so the set
# spans small and large images and short and long pipelines; num_outputs=0
# draws 1-3 outputs from the seed (docs/random-pipelines.md).
sizes=(small medium large)
stages=(8 12 16)
for ((seed = 1; seed <= random_count; seed++)); do
  size="${sizes[$((seed % 3))]}"
  max_stages="${stages[$(((seed / 3) % 3))]}"
  throttle
  collect_pipeline random "random-s$seed" "$generators/benchmarks/random_pipeline/random_pipeline.generator" \
    random_pipeline "seed=$seed size=$size max_stages=$max_stages num_outputs=0" &
done
for ((seed = 1; seed <= reduction_count; seed++)); do
  throttle
  collect_pipeline random-reductions "random-red-s$seed" \
    "$generators/benchmarks/random_pipeline/random_pipeline.generator" random_pipeline \
    "seed=$seed size=small max_stages=12 reductions=true num_outputs=0" &
done
wait

shopt -s nullglob
inputs=("$out"/runs/*/*.rows)
[ ${#inputs[@]} -gt 0 ] || { echo "collect_search_states.sh: no run produced states (see $runs_tsv)" >&2; exit 1; }
# The merged file is about as large as the per-run files, which stay until
# it is written: a full disk midway would fail every process on the machine.
need_kb=$(du -sk "$out/runs" | cut -f1)
free_kb=$(df -Pk "$out" | awk 'NR == 2 {print $4}')
if [ "$free_kb" -lt "$need_kb" ]; then
  echo "collect_search_states.sh: the merge needs about $((need_kb / 1024)) MiB in $out, only $((free_kb / 1024)) MiB" \
    "are free; the runs are kept in $out/runs: free some space and merge them with" \
    "$merge --out $out/search_states.rows --names-out $out/search_states.pipelines.tsv $out/runs/*/*.rows" >&2
  exit 1
fi
"$merge" --out "$out/search_states.rows" --names-out "$out/search_states.pipelines.tsv" "${inputs[@]}"
if [ "$keep_runs" -eq 0 ]; then rm -rf "$out/runs"; fi
rm -rf "$out/tmp"
echo "wrote $out/search_states.rows ($(du -h "$out/search_states.rows" | cut -f1)); runs: $runs_tsv" >&2
