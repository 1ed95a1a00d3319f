#pragma once
// A bounded cache of per-stage network costs, keyed by the stage and its
// whole feature row. The search costs ~100k states per pipeline, but most
// of a state's rows are identical to rows already costed (featurization
// memoizes kernels, sec. 3.3, and a step changes one Func), so the network
// runs only for rows it has not seen.
//
// Invariants: direct-mapped with a fixed number of slots (memory is
// constant: 24 bytes a slot); a lookup hits only if the stage id and a
// 128-bit hash of the row's bits both match (a wrong hit needs a 128-bit
// collision); clear() forgets everything (a new pipeline or new weights).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "costmodel/schedule_features.h"

namespace gpusched {

class RowCostCache {
public:
    struct Key {
        uint64_t a = 0, b = 0;
    };

    explicit RowCostCache(int slots_log2 = 17);

    // The hash state of a row over every feature but working_set_at_root,
    // which featurization sets per state on rows it otherwise copies from
    // its per-kernel memo: the memo keeps each row's Prefix, so the rows a
    // state shares with earlier ones are not hashed again (hashing every
    // row of every costed state was 9% of a small deep pipeline's search).
    struct Prefix {
        uint64_t a = 0, b = 0;
    };
    static Prefix prefix(int stage_id, const ScheduleFeatures &row);
    // The key from a row's Prefix (made from the same stage id and every
    // other feature of this row) and its working_set_at_root.
    static Key key(const Prefix &prefix, const ScheduleFeatures &row);
    static Key key(int stage_id, const ScheduleFeatures &row) { return key(prefix(stage_id, row), row); }
    bool lookup(const Key &k, double &cost);
    void store(const Key &k, double cost);
    void clear();

    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }

private:
    struct Slot {
        Key key;
        double cost = 0;
        bool used = false;
    };
    std::size_t index(const Key &k) const { return static_cast<std::size_t>(k.a >> shift_); }

    std::vector<Slot> slots_;
    int shift_;
    uint64_t hits_ = 0, misses_ = 0;
};

} // namespace gpusched
