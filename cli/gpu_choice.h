#pragma once
// Resolves --gpu: a built-in profile name, or "auto" for the local GPU. Shared
// by every subcommand that needs a GPU profile.

#include <string>

#include "common/gpu_profile.h"

namespace gpusched::cli {

// Throws std::runtime_error with a clear message for an unknown name, or for
// "auto" when there is no local GPU.
GpuProfile resolve_gpu(const std::string &choice);

} // namespace gpusched::cli
