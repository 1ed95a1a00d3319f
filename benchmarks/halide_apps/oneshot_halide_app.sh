#!/usr/bin/env bash
# One Shot on one of Halide's own example apps, as a user of that Halide
# would run it: the app's generator built from the Halide repository at a tag
# (never copied into this tree), then `gpusched oneshot` with POCL validation.
# Prints one line: the app, its generator, the exit status, the times and the
# validation (or the error).
#
#   benchmarks/halide_apps/oneshot_halide_app.sh APP [generator params...]
#
# Environment: HALIDE_REPO (a clone with tags; default the fetched mirror),
# HALIDE_TAG (v14.0.0), HALIDE_VERSION (14: /usr/include/halide14,
# /usr/src/halide14/GenGen.cpp, -lHalide14), GPUSCHED (build/cli/gpusched),
# WORK (/var/tmp/halide-apps), SAMPLES (2), GPU (h100).
set -u
app=$1; shift
repo=${HALIDE_REPO:-/work/.mirror/halide+Halide/repo}
tag=${HALIDE_TAG:-v14.0.0}
ver=${HALIDE_VERSION:-14}
here=$(cd "$(dirname "$0")/../.." && pwd)
gpusched=${GPUSCHED:-$here/build/cli/gpusched}
work=${WORK:-/var/tmp/halide-apps}/$tag/$app
mkdir -p "$work/src" && cd "$work" || exit 1
src=$(git -C "$repo" ls-tree --name-only "$tag" "apps/$app/" | grep '_generator\.cpp$' | head -1)
[ -n "$src" ] || { echo "$app: no generator in apps/$app at $tag"; exit 1; }
git -C "$repo" show "$tag:$src" > src/gen.cpp
for h in $(git -C "$repo" ls-tree --name-only "$tag" "apps/$app/" | grep '\.h$'); do
  git -C "$repo" show "$tag:$h" > "src/$(basename "$h")"; done
# local_laplacian and others include the trace config header from tools/.
git -C "$repo" show "$tag:tools/halide_trace_config.h" > src/halide_trace_config.h 2> /dev/null
name=$(grep -o 'HALIDE_REGISTER_GENERATOR([^,]*, *[a-z_0-9]*' src/gen.cpp | head -1 | sed 's/.*, *//')
t0=$(date +%s)
if ! g++ -std=c++17 -O1 -fno-rtti -Isrc -I"/usr/include/halide$ver" src/gen.cpp "/usr/src/halide$ver/GenGen.cpp" \
    "-lHalide$ver" -ldl -lpthread -rdynamic -o gen > build.log 2>&1; then
  echo "$app ($name): the generator does not build: $(tail -1 build.log)"; exit 1; fi
t1=$(date +%s)
"$gpusched" oneshot ./gen -g "$name" --gpu "${GPU:-h100}" --samples "${SAMPLES:-2}" -o out --db db.sqlite "$@" \
  > oneshot.log 2>&1
rc=$?; t2=$(date +%s)
echo "$app ($name): exit $rc; generator built in $((t1 - t0)) s, One Shot $((t2 - t1)) s: $(grep -E '^Output validation|^error' oneshot.log | tail -1)"
exit 0
