#pragma once
// Private to the loop nest (core/loop_nest.cpp, core/below_root_regions.cpp).
//
// The regions of the Funcs a build computes below root (Block and Thread
// level): what the consumers in the kernel need per block (per thread of the
// host), grown by what the Func's updates touch, and, for a Func sized by its
// maximum (sized_by_max), widened to its largest extent over the tile starts.
// One is made per LoopNest::build_funcs: the regions at each tile start and
// their shapes are kept for that build only (they depend on the stages built
// before them); the regions themselves, the shifted ones and the shapes'
// verdicts are kept across builds in the nest's memos.

#include <cstdint>
#include <vector>

#include "core/loop_nest.h"

namespace gpusched {

class LoopNest::BelowRootRegions {
public:
    // Clears the nest's per-build part of the shifted regions' keys.
    explicit BelowRootRegions(LoopNest &nest);
    // The region of node n per block of `kernel` (per thread of its host,
    // for Thread level); empty where no consumer in the kernel reads it.
    // Every Func above n must already be built.
    Region region(int n, int kernel, bool per_thread);

private:
    template <typename Visit> void for_each_reader(int n, int kernel, bool per_thread, Visit &&visit) const;
    Region consumers_in_kernel(int n, int kernel, bool per_thread, int64_t shift);
    const Region &region_at_shift(int n, int kernel, bool per_thread, int64_t shift);
    RegionShape demand_shape(const Stage &st, const std::vector<SpanShape> &loops, int target) const;
    const RegionShape &shape_at_shift(int n, int kernel, bool per_thread);
    ShiftWalks shift_verdict(int n, int kernel, bool per_thread);

    LoopNest &nest_;
    // Per side (block, thread): the region of each (node, shift), and the
    // shape of each node, in this build, and whether each is made yet.
    std::vector<Region> shifted_[2];
    std::vector<uint8_t> shifted_done_[2];
    std::vector<RegionShape> shapes_[2];
    std::vector<uint8_t> shapes_done_[2];
};

} // namespace gpusched
