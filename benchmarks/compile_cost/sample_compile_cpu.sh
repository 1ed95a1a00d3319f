#!/usr/bin/env bash
# CPU seconds (user + sys, the launch check's forked child included) of one
# greedy gpusched sample's generator run per suite app, as a batch runs it
# (-e static_library,h,registration,schedule,featurization for host-cuda,
# no_runtime), with the plugin's launch check off and on; the best of two
# runs each. CPU time, so a loaded machine does not inflate it.
#
#   benchmarks/compile_cost/sample_compile_cpu.sh BUILD_DIR [APP...]
#
# PLUGIN_B=other/libgpusched_autoscheduler.so adds a column with the check
# on under that plugin build (to compare two versions of the plugin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:?usage: $0 BUILD_DIR [APP...]}")
shift
apps=("$@")
if [ ${#apps[@]} -eq 0 ]; then
  for g in "$build"/benchmarks/apps/*.generator; do apps+=("$(basename "$g" .generator)"); done
fi
host=$(sed -n "s/^GPUSCHED_HOST_TARGET:STRING=//p" "$build/CMakeCache.txt")
[ -n "$host" ] || { echo "no GPUSCHED_HOST_TARGET in $build/CMakeCache.txt" >&2; exit 2; }
target=$host-cuda-cuda_capability_86-no_runtime
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# cpu APP PLUGIN CHECK(true|false): best of two runs, in seconds.
cpu() {
  local best=
  for _ in 1 2; do
    local d=$work/run
    rm -rf "$d" && mkdir -p "$d"
    echo "{\"beam_size\":1,\"passes\":1,\"seed\":7,\"dropout\":0.5,\"check_launches\":$3}" >"$d/c.json"
    /usr/bin/time -o "$d/time" -f "%U %S" env GPUSCHED_CONFIG="$d/c.json" \
      "$build/benchmarks/apps/$1.generator" -g "$1" -o "$d" \
      -e static_library,h,registration,schedule,featurization target="$target" -p "$2" "${select_gpusched[@]}" \
      >/dev/null 2>"$d/err" || { echo "$1 failed: $(tail -1 "$d/err")" >&2; exit 1; }
    local s
    s=$(awk '{print $1 + $2}' "$d/time")
    best=$(awk -v a="${best:-$s}" -v b="$s" 'BEGIN {print (b < a ? b : a)}')
  done
  echo "$best"
}

plugin=$build/core/libgpusched_autoscheduler.so
# How the build's Halide (every plugin compared here is built for it) selects
# gpusched: the arguments after `-p PLUGIN`.
mapfile -t select_gpusched < <(python3 "$here/../halide_generator_args.py" "$plugin" gpusched | tail -n +3)
[ ${#select_gpusched[@]} -gt 0 ] || { echo "cannot read $plugin's Halide" >&2; exit 2; }
header="| app | check off | check on |"
rule="|---|---|---|"
if [ -n "${PLUGIN_B:-}" ]; then header="$header check on, $PLUGIN_B |"; rule="$rule---|"; fi
echo "target: $target"
echo "$header"
echo "$rule"
for app in "${apps[@]}"; do
  row="| $app | $(cpu "$app" "$plugin" false) s | $(cpu "$app" "$plugin" true) s |"
  [ -z "${PLUGIN_B:-}" ] || row="$row $(cpu "$app" "$PLUGIN_B" true) s |"
  echo "$row"
done
