#pragma once
// A load a stage really issues once calls to inlined Funcs are followed: the
// producer it reaches, the index jacobian composed along the way, and how
// many load sites (paths through the inlined Funcs) share that pattern.
// Featurization collects them per stage (core/featurize_schedule.cpp); they
// depend only on the stage and on which Funcs are inlined, so the search
// remembers them (core/region_memo.h).

#include <vector>

#include "core/function_dag.h"

namespace gpusched {

struct EffectiveAccess {
    ProducerRef producer;
    int bytes = 4;
    Jacobian jacobian; // [producer arg][stage loop]
    double count = 1;  // load sites with this pattern (paths through inlined Funcs)
};

using EffectiveAccesses = std::vector<EffectiveAccess>;

class LoopNest;

// j (relative to inlined stage s's loops) composed with outer, the jacobian
// of the call into s's Func: s's loop l is its Func's argument func_arg(l),
// which the caller indexes with outer[arg]. Unknown where any term is.
Jacobian compose_through_inlined(const Jacobian &j, const Stage &s, const Jacobian &outer);

// The loads stage st issues with the nest's Funcs inlined as they are, each
// distinct pattern once with its count. LoopNest::accesses remembers them.
EffectiveAccesses collect_accesses(const LoopNest &nest, const Stage &st);

} // namespace gpusched
