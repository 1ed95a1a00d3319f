#pragma once
// One Halide runtime per target and run, instead of one per compiled sample.
//
// A generator compiling for a target without `no_runtime` compiles Halide's
// runtime (the CUDA or OpenCL driver glue, buffers, threads: LLVM on ~250
// KiB of code) into the library, every time. For the small pipelines of a
// tuning batch that was almost all of a generator process: tiny_stencil for
// host-opencl took 0.84 s with the runtime and 0.08 s with no_runtime
// (docs/results/autotune-pocl.md). So samples are compiled with no_runtime
// and the runtime, built once per (generator build, target) with GenGen's
// `-r`, is appended to each sample's NAME.a with `ar`: every NAME.a is still
// a complete library, as a user links it (the runtime's symbols are weak, as
// they are when Halide embeds them), and nothing downstream changes.
//
// Invariants: run_generator_sharing_runtime() produces the same files as
// run_generator() on the same invocation (a library with the pipeline and
// the runtime for inv.target, header, registration, schedule, ...), and
// fails exactly when the generator does. Where the shortcut does not apply
// (no `ar`, a multi-target or already no_runtime target, no static library
// emitted, or the runtime cannot be built) it is run_generator() itself.
// The runtime of a key is built once per process, by the first caller, under
// a lock; a runtime whose file has since been removed is built again.

#include <string>

#include "tuner/generate/generator_run.h"

namespace gpusched {

struct SharedRuntime {
    std::string object;  // the runtime's object file, when built
    std::string failure; // why there is none; empty on success
    bool ok() const { return failure.empty(); }
};

// The runtime object for target, built with generator_path's Halide (its
// `-r` mode) into a directory under cache_dir, once per process.
SharedRuntime shared_runtime(const std::string &generator_path, const std::string &target,
                             const std::string &cache_dir, std::chrono::milliseconds timeout);

// run_generator(inv), with the runtime from shared_runtime(..., cache_dir)
// instead of a fresh one where that applies (see above).
GeneratorOutcome run_generator_sharing_runtime(const GeneratorInvocation &inv, const std::string &cache_dir);

} // namespace gpusched
