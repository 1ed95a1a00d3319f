#pragma once
// The relocatable bundle's own C library (docs/bundle.md). A bundle made on
// a newer Debian than the GPU machine's (Halide 19 from Debian 13 on a
// machine with glibc 2.36) carries its dynamic loader and glibc in
// lib/c-runtime. Where the machine's C library is older than the bundle's,
// its launcher (scripts/bundle-launcher.sh) starts gpusched through that
// loader and says so in the environment; gpusched then starts every program
// built with the bundle's libraries (generators, the OpenCL probe) through
// it too, and links the benchmark harness and the validation runner, which
// it builds here with the machine's compiler, against it. Programs of the
// machine (the compiler, ar, ptxas) never see the bundle's C library: a
// process has one, and theirs is the machine's.

#include <optional>
#include <string>
#include <vector>

namespace gpusched {

struct BundleCLibrary {
    // lib/c-runtime/ld-linux-x86-64.so.2: the loader, beside the C
    // library's shared objects, start files and link scripts.
    std::string loader;
    // Where a program built with the bundle finds its libraries: the C
    // runtime, the bundle's lib/ (libHalide, LLVM) and, when the launcher
    // chose it, the bundle's C++ runtime.
    std::string library_path;
    // The C runtime and, when chosen, the C++ runtime alone: what a program
    // linked here needs from the bundle (it loads nothing else of it).
    std::vector<std::string> runtime_dirs;
};

// What the launcher exported (GPUSCHED_BUNDLE_LOADER, _LIBRARY_PATH,
// _RUNTIME_PATH) when it chose the bundle's C library; none otherwise.
std::optional<BundleCLibrary> bundle_c_library();

// The argv that starts `argv` (a program built with gpusched's own
// libraries) through the bundle's loader, where it applies; argv unchanged
// otherwise. The program still sees its own path as argv[0].
std::vector<std::string> through_bundle_loader(std::vector<std::string> argv);

// Link flags that make an executable linked here run on the bundle's C
// library (its start files and link scripts, its loader as interpreter, its
// runtimes on the run path); none where the launcher did not choose it.
std::vector<std::string> bundle_c_library_link_flags();

} // namespace gpusched
