#pragma once
// The search's default beam, in one place, for everything that states it:
// the plugin's SearchConfig, the CLI's options, the nightly config, fuzz and
// the driver's batches. No Halide here: the driver includes it too.

namespace gpusched {

inline constexpr int kDefaultBeamSize = 32; // paper: 32 (beam search), 1 (greedy samples)
inline constexpr int kDefaultPasses = 5;    // paper: 5 (beam search), 1 (greedy samples)
// The most device memory a reduction split's partials may take by default
// (core/reduction_split.h): well inside the memory of every GPU profile
// (16 GiB and more), and above every split the suite and the
// reduction-shaped apps choose (issue 57).
inline constexpr long long kDefaultMaxSplitBytes = 256LL << 20;

} // namespace gpusched
