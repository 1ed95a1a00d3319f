#pragma once
// Memory transactions per block of a scheduled stage (Anderson et al. 2021
// appendix A): which lanes of which warps run the stage, a regular and a
// tail warp standing for all of them, and how many 32-byte global sectors
// and bank-conflict-serialized shared transactions its loads and stores
// issue, with the bytes of them actually used. featurize_stage
// (core/featurize_schedule.cpp) turns these into its transaction and
// efficiency features.

#include <array>
#include <cstdint>
#include <vector>

#include "core/effective_access.h"
#include "core/loop_nest.h"

namespace gpusched {

// A block's lanes as the transaction analysis sees them: every warp's
// active lanes are counted, but coordinates are kept only for the two warps
// the analysis reads (the first active warp, which stands for all regular
// ones, and a tail warp with a different number of active lanes). Filling
// every lane's coordinates (up to 1,024 threads x loops, for every stage
// featurized) was 8% of the pyramid's whole search.
struct Lanes {
    size_t loops = 0;
    int64_t warps = 0, active_warps = 0, active_threads = 0;
    int regular_warp = -1, tail_warp = -1;
    // Per kept warp (0: regular, 1: tail): the lanes (in the warp) that run
    // this stage, and per stage loop the offset of each such lane's first
    // point, a column per loop ([loop * lanes + j] for the j-th active
    // lane): a lane's address is a sum of columns scaled by the loops'
    // strides, and a loop the address does not move with is skipped whole.
    std::array<std::vector<int64_t>, 2> lanes, columns;
};

// Fills L (its buffers are reused: this runs for every stage featurized).
void make_lanes(Lanes &L, const LoopNest &nest, const ScheduledStage &ss, const Stage &st, int warp_size);

// Transactions, and the bytes of them the lanes use.
struct MemStats {
    double transactions = 0;
    double bytes_used = 0;
};

// A stage's transactions per block: its loads by the memory level each
// producer is stored at, its stores by its own level.
struct BlockTransactions {
    MemStats global_loads, shared_loads, global_stores, shared_stores;
};

// Transactions per block of stage ss's loads (accesses: after following
// inlined Funcs) and of its stores to its own allocation own_alloc, stored
// at level own with dimension own_innermost innermost. L: make_lanes' for ss.
BlockTransactions block_transactions(const LoopNest &nest, const ScheduledStage &ss, const Lanes &L,
                                     const EffectiveAccesses &accesses, const Region &own_alloc,
                                     int own_innermost, MemoryLevel own, int warp_size, int banks);

namespace detail {
// Buffers the transaction counts below reuse between calls (they run for
// every warp analysed of every access of every stage featurized).
struct TransactionBuffers {
    std::vector<int64_t> units;         // sectors or words touched
    std::vector<int64_t> words_in_bank; // per shared-memory bank
};
// Memory transactions one warp issues for the given element addresses of its
// active lanes (in elements of `bytes` bytes).
int64_t global_transactions(const std::vector<int64_t> &addresses, int bytes,
                            TransactionBuffers &buffers); // 32-byte sectors
int64_t shared_transactions(const std::vector<int64_t> &addresses, int bytes, int banks,
                            TransactionBuffers &buffers); // conflict degree
} // namespace detail

} // namespace gpusched
