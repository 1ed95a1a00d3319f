#pragma once
// The search's default beam, in one place, for everything that states it:
// the plugin's SearchConfig, the CLI's options, the nightly config, fuzz and
// the driver's batches. No Halide here: the driver includes it too.

namespace gpusched {

inline constexpr int kDefaultBeamSize = 32; // paper: 32 (beam search), 1 (greedy samples)
inline constexpr int kDefaultPasses = 5;    // paper: 5 (beam search), 1 (greedy samples)

} // namespace gpusched
