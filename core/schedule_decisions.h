#pragma once
// The decisions the search makes, one per Func of the FunctionDAG: where the
// Func is computed and stored, and how each of its stages is tiled. This is
// the whole state of a search node and the replayable part of the record;
// the loop nest (core/loop_nest.h) is derived from it.
//
// Invariants: funcs.size() == dag.nodes.size(); a Func at Block level has
// host = the root Func whose kernel it is fused into (a single-stage Func);
// at Thread level host = the consumer Func whose innermost thread loop
// computes it; Root and Block Funcs have one StageTiling per stage with one
// entry per loop of that stage (RVars: 1); thread extents > 1 on at most 3
// loops of a stage; storage_innermost is 0 unless the Func is at Root or
// Block level and not an output, and names one of its dimensions;
// pad_shared only at Block level with storage_innermost 0.

#include <cstdint>
#include <string>
#include <vector>

#include "core/loop_sizes.h"

namespace gpusched {

enum class ComputeLocation { Unscheduled, Root, Block, Thread, Inline };

const char *location_name(ComputeLocation l);
ComputeLocation location_from_name(const std::string &s); // throws std::invalid_argument

struct StageTiling {
    LoopSizes serial; // per loop: inner serial (unrolled) extent
    LoopSizes thread; // per loop: thread extent (Root only; Block derives it)
    bool operator==(const StageTiling &o) const { return serial == o.serial && thread == o.thread; }
};

struct FuncDecision {
    ComputeLocation location = ComputeLocation::Unscheduled;
    int host = -1;
    bool tiled = false; // Root Funcs are tiled in a second step
    std::vector<StageTiling> stages;
    // The dimension stored innermost (stride 1); the others keep their
    // definition order outside it. 0 is the definition's own layout. A
    // reader whose threads walk dimension d of the Func reads it coalesced
    // only where d is innermost, and in Halide the layout of an intermediate
    // is the schedule's choice (Func::reorder_storage): the producer writes
    // it that way, with no conversion pass (issue 59, the ALT paper).
    int storage_innermost = 0;
    // Block level only, in the definition's layout: dimension 0 of the
    // shared tile is stored at least one element wider than the region
    // (Func::align_storage), so a reader walking dimension 1 strides an odd
    // number of words and spreads over the banks instead of hitting a few
    // (the classic padding of a transpose's shared tile).
    bool pad_shared = false;
    bool operator==(const FuncDecision &o) const {
        return location == o.location && host == o.host && tiled == o.tiled && stages == o.stages &&
               storage_innermost == o.storage_innermost && pad_shared == o.pad_shared;
    }
};

struct Decisions {
    std::vector<FuncDecision> funcs;
    bool operator==(const Decisions &o) const { return funcs == o.funcs; }
};

} // namespace gpusched
