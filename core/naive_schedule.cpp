#include "core/naive_schedule.h"

#include <algorithm>
#include <vector>

namespace gpusched {

namespace {

// Some read of node n is one Halide cannot bound anywhere: only inlining
// lowers (FunctionDAG sets always_inline for it, as for pointwise reads).
bool read_unbounded_in_halide(const FunctionDAG &dag, int n) {
    for (int c : dag.nodes[n].consumers)
        for (const Stage &s : dag.nodes[c].stages)
            for (const Edge &e : s.edges)
                if (!e.producer.is_image && e.producer.index == n && e.unbounded_in_halide) return true;
    return false;
}

// One stage as naive_gpu / naive_gpu_update tile it: 16 threads on the
// loops of the Func's first two arguments, everything else serial inside
// the thread: its serial extent is the loop's whole extent at root.
StageTiling naive_tiling(const FunctionDAG &dag, const Node &node, const Stage &st) {
    const std::vector<Span> bounds = dag.loop_bounds(st, node.region);
    StageTiling t;
    const size_t nl = st.loops.size();
    t.serial.assign(nl, 1);
    t.thread.assign(nl, 1);
    for (size_t l = 0; l < nl; l++) {
        const LoopDim &loop = st.loops[l];
        if (loop.is_rvar) continue; // serial by the nest, as its tiling of 1 says
        if (loop.func_arg == 0 || loop.func_arg == 1)
            t.thread[l] = kNaiveThreadExtent;
        else
            t.serial[l] = std::max<int64_t>(1, bounds[l].extent());
    }
    return t;
}

} // namespace

Decisions naive_decisions(const FunctionDAG &dag) {
    Decisions d;
    d.funcs.resize(dag.nodes.size());
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        FuncDecision &f = d.funcs[n];
        if (read_unbounded_in_halide(dag, static_cast<int>(n))) {
            f.location = ComputeLocation::Inline;
            continue;
        }
        f.location = ComputeLocation::Root;
        f.tiled = true;
        for (const Stage &st : dag.nodes[n].stages)
            f.stages.push_back(naive_tiling(dag, dag.nodes[n], st));
    }
    return d;
}

} // namespace gpusched
