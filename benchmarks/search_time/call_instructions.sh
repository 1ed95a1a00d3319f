#!/usr/bin/env bash
# Instructions of gpusched's autoschedule call on one standard-set pipeline,
# counted by callgrind: the DAG, the search (the reduction-split search
# included) and the schedule's application (the launch check runs after the
# call, in the generator's lowering; it is off here). Instruction
# counts are exact and repeatable where this VM's CPU seconds vary by
# 20-40%, so a change to the search is compared with them.
#
#   benchmarks/search_time/call_instructions.sh BUILD_DIR PLUGIN PIPELINE [OUT_DIR]
#
# PIPELINE: a label of search_time.py's standard set (the suite's apps,
# pyramid5, random_s1..random_s5). Prints "PIPELINE INSTRUCTIONS"; the
# search record and callgrind's profile are left in OUT_DIR (default: a
# temporary folder, named on stderr).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR PLUGIN PIPELINE [OUT_DIR]" >&2; exit 2; }
build=$1 plugin=$2 pipeline=$3
out=${4:-$(mktemp -d /tmp/call-instructions.XXXXXX)}
command -v valgrind >/dev/null || { echo "call_instructions: valgrind is not installed" >&2; exit 2; }
[ -f "$plugin" ] || { echo "call_instructions: no plugin at $plugin" >&2; exit 2; }
# The pipeline's generator, name and params, as search_time.py runs it.
mapfile -t spec < <(python3 "$(dirname "$0")/search_time.py" pipeline "$pipeline" --build-dir "$build")
[ ${#spec[@]} -ge 2 ] || exit 2 # search_time.py said why
gen=${spec[0]} name=${spec[1]} params=("${spec[@]:2}")
mkdir -p "$out"
echo "{\"seed\": 0, \"check_launches\": false, \"record_path\": \"$out/record.json\"}" >"$out/config.json"
mapfile -t select < <(python3 "$(dirname "$0")/../halide_generator_args.py" "$plugin" gpusched)
GPUSCHED_CONFIG=$out/config.json valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
  --toggle-collect='*::autoschedule(Halide::Pipeline*' \
  "$gen" -g "$name" -o "$out" -e schedule target=host-cuda "${select[@]}" "${params[@]}" >"$out/log.txt" 2>&1 ||
  { echo "call_instructions: $pipeline failed; see $out/log.txt" >&2; exit 1; }
echo "call_instructions: profile and record in $out" >&2
echo "$pipeline $(awk '/^summary:/ {print $2}' "$out/callgrind.out")"
