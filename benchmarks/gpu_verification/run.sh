#!/usr/bin/env bash
# The GPU verification runs of Top 5 and Autotune, from the relocatable
# bundle (scripts/make-bundle.sh), on a GPU machine that has no Halide: the
# lent device machines here, or any node with an NVIDIA driver and a C++
# compiler. One call does one mode over a list of suite apps:
#
#   benchmarks/gpu_verification/run.sh BUNDLE.tar.xz WORK top5 APP...
#   benchmarks/gpu_verification/run.sh BUNDLE.tar.xz WORK autotune BUDGET APP...
#
# top5:     tune --mode top5 --samples $SAMPLES --baselines $BASELINES, per app.
# autotune: tune --mode autotune --iterations $ITERATIONS --batch $BATCH
#           --time-budget BUDGET --baselines li2018, per app (BUDGET: 150s, 5m).
#
# Environment (defaults): DEVICE (cuda), GPU (auto), SAMPLES (80), BATCH (80),
# ITERATIONS (20), BASELINES (li2018,naive), JOBS (every core), DEADLINE_S
# (560: no app starts, and a running Top 5 is stopped, past this many seconds
# from the start, so that a device call limited to 600 s still packs its
# results), EXTRA (more tune arguments).
#
# WORK gets, per app, APP.MODE.json (tune --json) and APP.MODE.log (its
# stderr); machine.txt (GPU, driver, cores, ptxas); samples.sqlite, the
# database every app writes; db-stats.txt and db-runs.txt. After each app
# everything but the sample folders is packed again into
# WORK/../gpu-verification.tar.gz (or $PACK), so a call cut off at its limit
# still returns what it finished. The figures for docs/results/ come from the
# JSON files: benchmarks/gpu_verification/figures.py.
set -uo pipefail

usage() { sed -n 2,26p "$0" >&2; exit 2; }
[ $# -ge 4 ] || usage
bundle=$1 work=$2 mode=$3
shift 3
budget=
if [ "$mode" = autotune ]; then budget=$1; shift; fi
[ "$mode" = top5 ] || [ "$mode" = autotune ] || usage
[ $# -ge 1 ] || usage
apps=("$@")

started=$SECONDS
deadline=${DEADLINE_S:-560}
device=${DEVICE:-cuda} gpu=${GPU:-auto}
jobs=${JOBS:-$(nproc)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
pack=${PACK:-$(dirname "$work")/gpu-verification.tar.gz}

# The bundle, unpacked once per machine (a warm machine keeps it).
unpacked=${BUNDLE_DIR:-/tmp/gpusched-bundle}
if [ ! -x "$unpacked/gpusched/bin/gpusched" ]; then
  mkdir -p "$unpacked"
  if command -v xz >/dev/null; then
    tar -xf "$bundle" -C "$unpacked" || { echo "run.sh: cannot unpack $bundle" >&2; exit 2; }
  else
    # No xz here: Python's tarfile reads .tar.xz on its own.
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$bundle" "$unpacked" ||
      { echo "run.sh: cannot unpack $bundle (no xz, and python3 failed)" >&2; exit 2; }
  fi
fi
g=$unpacked/gpusched
# ptxas (the spill check) where CUDA installs it, if the PATH lacks it.
command -v ptxas >/dev/null || [ ! -x /usr/local/cuda/bin/ptxas ] || PATH=$PATH:/usr/local/cuda/bin
db=$work/samples.sqlite

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm)"
  echo "cores: $(nproc)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv,noheader
  command -v ptxas >/dev/null && ptxas --version | tail -1
  "$g/bin/gpusched" --version
} >"$work/machine.txt" 2>&1

pack_results() {
  "$g/bin/gpusched" db --db "$db" stats >"$work/db-stats.txt" 2>&1
  "$g/bin/gpusched" db --db "$db" runs >"$work/db-runs.txt" 2>&1
  tar -czf "$pack.part" -C "$(dirname "$work")" --exclude='*/out' --exclude='*/out-*' "$(basename "$work")" &&
    mv "$pack.part" "$pack"
}

rc=0
for app in "${apps[@]}"; do
  left=$((deadline - (SECONDS - started)))
  gen=$g/generators/$app.generator
  if [ ! -x "$gen" ]; then
    echo "run.sh: $app: no generator $gen in the bundle" | tee -a "$work/skipped.txt" >&2
    rc=1
    continue
  fi
  if [ "$left" -lt 30 ]; then
    echo "run.sh: $app: not started, ${left}s left before the deadline" | tee -a "$work/skipped.txt" >&2
    continue
  fi
  echo "run.sh: $app ($mode), ${left}s left" >&2
  common=(--json tune "$gen" -g "$app" --mode "$mode" --device "$device" --gpu "$gpu" -j "$jobs"
          -o "$work/out-$app-$mode" --db "$db")
  if [ "$mode" = top5 ]; then
    # Top 5 has no budget of its own: stop it (SIGTERM, exit 130, what it
    # measured stored) if it would run past the deadline.
    timeout -s TERM "$((left - 10))" "$g/bin/gpusched" "${common[@]}" --samples "${SAMPLES:-80}" \
      --baselines "${BASELINES:-li2018,naive}" ${EXTRA:-} >"$work/$app.top5.json" 2>"$work/$app.top5.log"
  else
    # The budget, cut to end before the deadline (it is checked before each
    # sample starts, so the app stops within a sample of it).
    case $budget in *m) b=$(( ${budget%m} * 60 )) ;; *s) b=${budget%s} ;; *) b=$budget ;; esac
    [ "$b" -le "$((left - 20))" ] || b=$((left - 20))
    b=${b}s
    "$g/bin/gpusched" "${common[@]}" --iterations "${ITERATIONS:-20}" --batch "${BATCH:-80}" \
      --time-budget "$b" --baselines "${BASELINES:-li2018}" ${EXTRA:-} \
      >"$work/$app.autotune.json" 2>"$work/$app.autotune.log"
  fi
  app_rc=$?
  # 3: an autotune stopped by its budget, which is the plan.
  if [ "$app_rc" -ne 0 ] && [ "$app_rc" -ne 3 ]; then
    echo "run.sh: $app exited $app_rc: $(tail -1 "$work/$app.$mode.log")" >&2
    rc=1
  fi
  pack_results
done
pack_results
echo "run.sh: done in $((SECONDS - started)) s; results packed in $pack" >&2
exit "$rc"
