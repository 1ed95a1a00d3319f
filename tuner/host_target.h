#pragma once
// The Halide target for code that runs on this machine's CPU.
//
// Halide 14's own `host` cannot be trusted for that: its detection
// (get_host_target) turns on avx512_sapphirerapids for any CPU with
// AVX512-VNNI and AVX512-BF16, and LLVM 14 then compiles for the whole
// Sapphire Rapids ISA, AVX512-FP16 and AMX included. AMD Zen 4 has VNNI and
// BF16 but neither of the others, so `host` builds die there with SIGILL
// (seen: `vmovw` in local_laplacian's CPU build). gpusched therefore spells
// the host target out itself: each Halide x86 feature is turned on only when
// the CPU reports every instruction-set flag that the LLVM CPU model behind
// it may use. Everything gpusched builds for "this CPU" goes through here:
// the validation reference, the host side of OpenCL and CUDA builds, and the
// CMake build's own CPU libraries (the configure step runs the same code).

#include <set>
#include <string>
#include <vector>

namespace gpusched {

// The instruction-set flags of a CPU as Linux lists them in /proc/cpuinfo's
// "flags" line (sse4_1, avx2, avx512f, avx512_fp16, amx_tile, ...).
using CpuFlags = std::set<std::string>;

// The flags of the first processor in /proc/cpuinfo text; empty if none.
CpuFlags parse_cpuinfo_flags(const std::string &cpuinfo_text);

// The Halide 14 x86 features a CPU with these flags runs, in Halide's
// order (sse41, avx, avx2, fma, f16c, avx512, avx512_skylake, ...).
std::vector<std::string> halide_x86_features(const CpuFlags &flags);

// "x86-64-linux-<features>" for a CPU with these flags.
std::string x86_64_linux_target(const CpuFlags &flags);

// This machine's CPU target: x86_64_linux_target() of /proc/cpuinfo on
// x86-64 Linux, Halide's "host" elsewhere (where Halide's detection has no
// known fault). Computed once.
const std::string &host_cpu_target();

// host_cpu_target() with more features: host_target_with("opencl") is
// "x86-64-linux-avx-...-opencl". An empty list gives host_cpu_target().
std::string host_target_with(const std::string &features);

} // namespace gpusched
