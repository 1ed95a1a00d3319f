#include "core/storage_layout.h"

#include <algorithm>
#include <optional>
#include <set>

#include "core/effective_access.h"

namespace gpusched {

void storage_strides(const Region &alloc, size_t dims, int innermost, int64_t padding,
                     std::vector<int64_t> &out) {
    out.assign(dims, 1);
    auto extent = [&](size_t i) { return std::max<int64_t>(1, i < alloc.size() ? alloc[i].extent() : 1); };
    const size_t first =
        innermost > 0 && static_cast<size_t>(innermost) < dims ? static_cast<size_t>(innermost) : 0;
    int64_t stride = extent(first) + padding;
    for (size_t i = 0; i < dims; i++) {
        if (i == first) continue;
        out[i] = stride;
        stride *= extent(i);
    }
}

bool layout_is_choosable(const FunctionDAG &dag, int n) {
    const Node &node = dag.nodes[n];
    return !node.is_output && node.args.size() >= 2;
}

namespace {

// Adds to `walked` the dimension (other than 0) of n that stage st's
// innermost pure loop moves while it leaves dimension 0 in place, for a
// load of n with jacobian jac.
void add_walked(const Stage &st, const Jacobian &jac, std::set<int> &walked) {
    int l0 = -1;
    for (size_t l = 0; l < st.loops.size() && l0 < 0; l++)
        if (!st.loops[l].is_rvar) l0 = static_cast<int>(l);
    if (l0 < 0 || jac.empty() || static_cast<size_t>(l0) >= jac[0].size()) return;
    if (!jac[0][l0] || *jac[0][l0] != 0) return; // lanes walk (or may walk) dimension 0
    int best = -1;
    int64_t best_step = 0;
    for (size_t i = 1; i < jac.size(); i++) {
        const std::optional<int64_t> step = jac[i][l0];
        if (!step) return; // data dependent: no layout serves it
        const int64_t s = *step < 0 ? -*step : *step;
        if (s != 0 && (best < 0 || s < best_step)) {
            best = static_cast<int>(i);
            best_step = s;
        }
    }
    if (best > 0) walked.insert(best);
}

// Walks the readers of Func `target` through Func `via` (target itself, or
// an inlined Func between them) whose loads of target compose to `jac` per
// loop of via's pure stage; depth bounds chains of inlined Funcs.
void readers_walk(const FunctionDAG &dag, const Decisions &d, int via, const Jacobian *jac, int depth,
                  std::set<int> &walked) {
    if (depth > 4) return;
    for (int c : dag.nodes[via].consumers) {
        const bool inlined = d.funcs[c].location == ComputeLocation::Inline;
        for (const Stage &st : dag.nodes[c].stages) {
            for (const Access &a : st.accesses) {
                if (a.producer.is_image || a.producer.index != via || a.is_self) continue;
                const Jacobian composed =
                    jac ? compose_through_inlined(*jac, dag.nodes[via].stages[0], a.jacobian) : a.jacobian;
                if (inlined)
                    readers_walk(dag, d, c, &composed, depth + 1, walked);
                else
                    add_walked(st, composed, walked);
            }
            if (inlined) break; // an inlined Func has its pure stage only
        }
    }
}

} // namespace

std::vector<int> dimensions_readers_walk(const FunctionDAG &dag, const Decisions &d, int n) {
    if (!layout_is_choosable(dag, n)) return {};
    std::set<int> walked;
    readers_walk(dag, d, n, nullptr, 0, walked);
    return {walked.begin(), walked.end()};
}

void add_layout_options(const FunctionDAG &dag, const Decisions &parent, int n, bool padding,
                        std::vector<FuncDecision> &options) {
    const std::vector<int> dims = dimensions_readers_walk(dag, parent, n);
    if (dims.empty()) return;
    const size_t count = options.size();
    for (int dim : dims) {
        for (size_t i = 0; i < count; i++) {
            if (options[i].location != ComputeLocation::Block) continue;
            FuncDecision f = options[i];
            f.storage_innermost = dim;
            options.push_back(std::move(f));
        }
    }
    for (size_t i = 0; i < count && padding; i++) {
        if (options[i].location != ComputeLocation::Block) continue;
        FuncDecision f = options[i];
        f.pad_shared = true;
        options.push_back(std::move(f));
    }
}

} // namespace gpusched
