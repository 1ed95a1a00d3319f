#pragma once
// The decision a root tiling step's options are written into
// (RootTilingOptions::apply), as the search holds it: the Func tiled, every
// stage's serial and thread sizes one per loop (1 where not chosen yet).
// Shared by the tests that walk root tiling steps.

#include "core/function_dag.h"
#include "core/schedule_decisions.h"

namespace gpusched::test {

inline void size_for_root_tiling(const FunctionDAG &dag, FuncDecision &f, size_t n) {
    f.tiled = true;
    f.stages.resize(dag.nodes[n].stages.size());
    for (size_t s = 0; s < f.stages.size(); s++) {
        const size_t loops = dag.nodes[n].stages[s].loops.size();
        if (f.stages[s].serial.size() != loops) f.stages[s].serial.assign(loops, 1);
        if (f.stages[s].thread.size() != loops) f.stages[s].thread.assign(loops, 1);
    }
}

} // namespace gpusched::test
