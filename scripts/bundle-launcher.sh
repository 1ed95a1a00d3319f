#!/bin/sh
# bin/gpusched of the relocatable bundle (scripts/make-bundle.sh copies this
# file there): points gpusched at the plugin, runners and libraries beside
# it, then runs the real binary, libexec/gpusched.
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
if [ -z "$needs" ] || [ -z "$machine_libstdcxx" ] || ! grep -q -F "$needs" "$machine_libstdcxx" 2>/dev/null; then
  lib=$lib:$cxx_runtime
fi

export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPUSCHED_PLUGIN="${GPUSCHED_PLUGIN:-$here/lib/gpusched/libgpusched_autoscheduler.so}"
export GPUSCHED_HALIDE_PLUGIN_DIR="${GPUSCHED_HALIDE_PLUGIN_DIR:-$here/lib/halide-plugins}"
export GPUSCHED_OUTPUT_RUNNER="${GPUSCHED_OUTPUT_RUNNER:-$here/lib/gpusched/libgpusched_output_runner.a}"
export GPUSCHED_BENCHMARK_RUNNER="${GPUSCHED_BENCHMARK_RUNNER:-$here/lib/gpusched/libgpusched_benchmark_runner.a}"
export GPUSCHED_OPENCL_PROBE="${GPUSCHED_OPENCL_PROBE:-$here/lib/gpusched/gpusched-opencl-probe}"
exec "$here/libexec/gpusched" "$@"
