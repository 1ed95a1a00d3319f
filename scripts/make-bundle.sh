#!/usr/bin/env bash
# Packs a relocatable gpusched into one tarball for GPU machines that lack
# Halide, LLVM and the Debian libraries (docs/bundle.md):
#
#   scripts/make-bundle.sh [BUILD_DIR] [OUT.tar.xz]
#
# In it: the gpusched binary and a launcher, the search plugin, the build's
# Halide's own plugins (Li2018, Mullapudi2016 for the CPU reference, and
# Anderson2021 from Halide 16: baselines), the two
# prebuilt runner archives (validation and benchmark harness), the OpenCL
# probe, the generators of the suite that BUILD_DIR has built (demo, apps,
# random pipeline), RunGen.h and GenGen (a source in Halide 14, a library
# from 16) for users' own generators, and every shared library those load
# but the GPU drivers (libcuda, libOpenCL), which come from the machine.
# The C++ runtime (lib/cxx-runtime) and the C library with its dynamic
# loader, start files and link scripts (lib/c-runtime) lie apart: the
# launcher uses each only where the machine's is older (bundle-launcher.sh).
# After `tar xf`, bin/gpusched runs as installed, compiles included.
# Linking each benchmark still needs the machine's C++ compiler (c++ or
# $CXX), as on a build machine.
#
# Refuses to write a bundle larger than 60 MiB.
set -euo pipefail
# Both paths are the caller's: relative ones are taken from where the script
# was started, before it moves to the repository root.
build=$(realpath -m "${1:-build}")
out=$(realpath -m "${2:-gpusched-bundle.tar.xz}")
mkdir -p "$(dirname "$out")" || { echo "error: cannot make the folder of $out" >&2; exit 1; }
cd "$(dirname "$0")/.."
limit_mib=60

for f in cli/gpusched core/libgpusched_autoscheduler.so tuner/libgpusched_output_runner.a \
         tuner/libgpusched_benchmark_runner.a tuner/gpusched-opencl-probe; do
  [[ -f "$build/$f" ]] || { echo "error: $build/$f is missing; build gpusched first (scripts/build.sh)" >&2; exit 1; }
done
halide_plugins=$(grep -E '^GPUSCHED_HALIDE_PLUGIN_DIR:' "$build/CMakeCache.txt" | cut -d= -f2)
halide_src=$(grep -E '^GPUSCHED_HALIDE_SRC_DIR:' "$build/CMakeCache.txt" | cut -d= -f2)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/gpusched"
mkdir -p "$root"/{bin,libexec,lib/gpusched,lib/halide-plugins,lib/cxx-runtime,lib/c-runtime,generators,share/halide}

cp "$build/cli/gpusched" "$root/libexec/gpusched"
cp "$build/core/libgpusched_autoscheduler.so" "$build/tuner/libgpusched_output_runner.a" \
   "$build/tuner/libgpusched_benchmark_runner.a" "$build/tuner/gpusched-opencl-probe" "$root/lib/gpusched/"
cp "$halide_plugins/libautoschedule_li2018.so" "$halide_plugins/libautoschedule_mullapudi2016.so" "$root/lib/halide-plugins/"
if [[ -f "$halide_plugins/libautoschedule_anderson2021.so" ]]; then
  cp "$halide_plugins/libautoschedule_anderson2021.so" "$root/lib/halide-plugins/"
fi
gengen=$(grep -E '^GPUSCHED_GENGEN:' "$build/CMakeCache.txt" | cut -d= -f2)
cp "$halide_src/RunGen.h" "$halide_src/RunGenMain.cpp" ${gengen:+"$gengen"} "$halide_src"/halide_*.h \
   "$root/share/halide/" 2>/dev/null || true
while IFS= read -r gen; do
  cp "$gen" "$root/generators/"
done < <(find "$build/benchmarks" -name '*.generator' -type f -perm -u+x)

# Every shared library the executables and plugins load, but the drivers';
# glibc's own apart, in lib/c-runtime.
elves=("$root/libexec/gpusched" "$root/lib/gpusched/libgpusched_autoscheduler.so" "$root/lib/gpusched/gpusched-opencl-probe"
       "$root"/lib/halide-plugins/*.so "$root"/generators/*)
ldd "${elves[@]}" 2>/dev/null | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libcuda.so*|libOpenCL.so*) continue ;;
    libc.so.*|libm.so.*|libmvec.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|libutil.so.*|libanl.so.*)
      cp -L "$lib" "$root/lib/c-runtime/" ;;
    *) cp -L "$lib" "$root/lib/" ;;
  esac
done

# The C library whole: the loader the executables name, the shared objects
# the link scripts below name, and what linking against it takes (its start
# files and libc_nonshared.a). The link scripts name the objects beside
# them, since the bundle's place is known only once it is unpacked; the
# linker finds them through -L (tuner/bundle_c_library.cpp).
c_runtime=$root/lib/c-runtime
interpreter=$(readelf -l "$root/libexec/gpusched" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
[[ "$(basename "$interpreter")" == ld-linux-x86-64.so.2 ]] ||
  { echo "error: gpusched's interpreter is '$interpreter', not x86-64 glibc's ld-linux-x86-64.so.2" >&2; exit 1; }
cp -L "$interpreter" "$c_runtime/"
cxx=${CXX:-c++}
for f in libc.so.6 libm.so.6 libmvec.so.1 Scrt1.o crt1.o crti.o crtn.o libc_nonshared.a; do
  [[ -f "$c_runtime/$f" ]] && continue
  found=$("$cxx" -print-file-name="$f")
  [[ "$found" == /* && -f "$found" ]] ||
    { echo "error: $cxx cannot find glibc's $f (libc6-dev) to put in the bundle" >&2; exit 1; }
  cp -L "$found" "$c_runtime/"
done
echo 'GROUP ( libc.so.6 libc_nonshared.a AS_NEEDED ( ld-linux-x86-64.so.2 ) )' >"$c_runtime/libc.so"
echo 'GROUP ( libm.so.6 AS_NEEDED ( libmvec.so.1 ) )' >"$c_runtime/libm.so"
getconf GNU_LIBC_VERSION | awk '$1 == "glibc" { print $2 }' >"$c_runtime/version"
[[ -s "$c_runtime/version" ]] || { echo "error: getconf GNU_LIBC_VERSION names no glibc version" >&2; exit 1; }
# The C++ runtime apart: the launcher uses it only where the machine's is
# older (scripts/bundle-launcher.sh), and tells them apart by the newest
# GLIBCXX symbol version the bundle's libstdc++ defines.
for lib in libstdc++.so.6 libgcc_s.so.1; do
  if [[ -f "$root/lib/$lib" ]]; then mv "$root/lib/$lib" "$root/lib/cxx-runtime/"; fi
done
[[ -f "$root/lib/cxx-runtime/libstdc++.so.6" ]] ||
  { echo "error: no libstdc++.so.6 among the libraries gpusched loads (ldd)" >&2; exit 1; }
grep -ao 'GLIBCXX_3\.4\.[0-9]*' "$root/lib/cxx-runtime/libstdc++.so.6" | sort -uV | tail -1 >"$root/lib/cxx-runtime/needs"
# The name the linker looks for, for benchmarks linked against the bundle's C library.
ln -s libstdc++.so.6 "$root/lib/cxx-runtime/libstdc++.so"

cp scripts/bundle-launcher.sh "$root/bin/gpusched"
chmod +x "$root/bin/gpusched"
cat > "$root/README.txt" <<README
gpusched $(git describe --always --dirty 2>/dev/null || echo unknown), relocatable bundle for x86-64 Linux (glibc $(cat "$c_runtime/version") carried, used where the machine's is older).

  bin/gpusched tune generators/demo_sharpen.generator -g demo_sharpen --mode top5 --gpu auto -o out --db out/samples.sqlite

Needs on the machine: an NVIDIA driver (or POCL for --device opencl), and a C++ compiler (c++ or \$CXX)
to link each benchmark. ptxas (CUDA toolkit) in PATH for the spill check; without it the check is "not checked".
README

XZ_OPT=${XZ_OPT:--T0} tar -C "$stage" -cJf "$out" gpusched
size=$(stat -c %s "$out")
mib=$(( (size + 1048575) / 1048576 ))
if (( size > limit_mib * 1048576 )); then
  echo "error: the bundle is ${mib} MiB, over the ${limit_mib} MiB limit; $out left for inspection" >&2
  exit 1
fi
echo "$out: ${mib} MiB ($(tar -tJf "$out" | wc -l) files)"
