#!/bin/sh
# bin/gpusched of the relocatable bundle (scripts/make-bundle.sh copies this
# file there): points gpusched at the plugin, runners and libraries beside
# it, chooses the C++ runtime and the C library its processes use, then runs
# the real binary, libexec/gpusched.
here=$(cd "$(dirname "$0")/.." && pwd)
lib=$here/lib

# The C++ runtime (libstdc++, libgcc_s) is the one library that gpusched's
# processes share with what the machine loads into them: the GPU driver,
# POCL and its LLVM, binutils' LTO plugin in `ar`. Those may need a newer
# libstdc++ than the bundle's (Debian 13's POCL needs GLIBCXX_3.4.32; the
# bundle carries Debian 12's, 3.4.30), and a process has one libstdc++. So
# the bundle's copy, in lib/cxx-runtime, is used only where the machine has
# none as new: lib/cxx-runtime/needs names the newest symbol version the
# bundle's copy defines, and a machine's libstdc++ that defines it too
# serves everything the bundle was built against.
cxx_runtime=$here/lib/cxx-runtime
needs=$(cat "$cxx_runtime/needs" 2>/dev/null)
machine_libstdcxx=$(
  for ldconfig in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do
    "$ldconfig" -p 2>/dev/null && break
  done | awk '$1 == "libstdc++.so.6" && /x86-64/ { print $NF; exit }')
chosen_cxx=
if [ -z "$needs" ] || [ -z "$machine_libstdcxx" ] || ! grep -q -F "$needs" "$machine_libstdcxx" 2>/dev/null; then
  chosen_cxx=$cxx_runtime
fi

# The C library (glibc and its dynamic loader) by the same rule: a program
# runs only on the glibc it was built against or a newer one, so where the
# machine's is older than the bundle's (lib/c-runtime/version; a Debian 13
# bundle on Debian 12 or Ubuntu 24.04) gpusched starts through the bundle's
# own loader, and so does every program of the bundle it starts
# (tuner/bundle_c_library.h). GPUSCHED_BUNDLE_LIBC=bundle or machine
# overrides the choice.
c_runtime=$here/lib/c-runtime
bundle_glibc=$(cat "$c_runtime/version" 2>/dev/null)
machine_glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '$1 == "glibc" { print $2 }')
older() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]; }
case "${GPUSCHED_BUNDLE_LIBC:-auto}" in
  bundle) use_bundle_libc=yes ;;
  machine) use_bundle_libc=no ;;
  auto)
    use_bundle_libc=no
    if [ -n "$bundle_glibc" ] && { [ -z "$machine_glibc" ] || older "$machine_glibc" "$bundle_glibc"; }; then
      use_bundle_libc=yes
    fi ;;
  *) echo "error: GPUSCHED_BUNDLE_LIBC=$GPUSCHED_BUNDLE_LIBC: expected auto, bundle or machine" >&2; exit 2 ;;
esac
loader=$c_runtime/ld-linux-x86-64.so.2
if [ "$use_bundle_libc" = yes ] && [ ! -x "$loader" ]; then
  echo "error: this machine's C library (glibc ${machine_glibc:-unknown}) is older than the bundle's" \
       "(${bundle_glibc:-unknown}), and the bundle carries no loader of its own ($loader)" >&2
  exit 1
fi

export GPUSCHED_LAUNCHER="$here/bin/gpusched"
export GPUSCHED_PLUGIN="${GPUSCHED_PLUGIN:-$here/lib/gpusched/libgpusched_autoscheduler.so}"
export GPUSCHED_HALIDE_PLUGIN_DIR="${GPUSCHED_HALIDE_PLUGIN_DIR:-$here/lib/halide-plugins}"
export GPUSCHED_OUTPUT_RUNNER="${GPUSCHED_OUTPUT_RUNNER:-$here/lib/gpusched/libgpusched_output_runner.a}"
export GPUSCHED_BENCHMARK_RUNNER="${GPUSCHED_BENCHMARK_RUNNER:-$here/lib/gpusched/libgpusched_benchmark_runner.a}"
export GPUSCHED_OPENCL_PROBE="${GPUSCHED_OPENCL_PROBE:-$here/lib/gpusched/gpusched-opencl-probe}"

if [ "$use_bundle_libc" = no ]; then
  # A launcher above this one (a Slurm worker's node may differ) may have
  # chosen the bundle's C library: not here.
  unset GPUSCHED_BUNDLE_LOADER GPUSCHED_BUNDLE_LIBRARY_PATH GPUSCHED_BUNDLE_RUNTIME_PATH GPUSCHED_EXECUTABLE
  export LD_LIBRARY_PATH="$lib${chosen_cxx:+:$chosen_cxx}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  exec "$here/libexec/gpusched" "$@"
fi

# The bundle's C library. The machine's programs that gpusched runs (the
# compiler, ar, ptxas) must not find the bundle's libraries, which need it:
# no bundle folder stays in LD_LIBRARY_PATH (a launcher above this one may
# have put them there); the bundle's programs get theirs from the loader.
machine_path=
old_ifs=$IFS; IFS=:
for dir in ${LD_LIBRARY_PATH:-}; do
  case "$dir" in "$lib" | "$lib"/*) ;; *) machine_path=${machine_path:+$machine_path:}$dir ;; esac
done
IFS=$old_ifs
if [ -n "$machine_path" ]; then export LD_LIBRARY_PATH="$machine_path"; else unset LD_LIBRARY_PATH; fi
export GPUSCHED_BUNDLE_LOADER="$loader"
export GPUSCHED_BUNDLE_LIBRARY_PATH="$c_runtime:$lib${chosen_cxx:+:$chosen_cxx}"
export GPUSCHED_BUNDLE_RUNTIME_PATH="$c_runtime${chosen_cxx:+:$chosen_cxx}"
export GPUSCHED_EXECUTABLE="$here/libexec/gpusched"
exec "$loader" --library-path "$GPUSCHED_BUNDLE_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  --argv0 "$0" "$here/libexec/gpusched" "$@"
