#include "core/effective_access.h"

#include <map>
#include <utility>

#include "core/loop_nest.h"

namespace gpusched {

Jacobian compose_through_inlined(const Jacobian &j, const Stage &s, const Jacobian &outer) {
    size_t n_outer_loops = outer.empty() ? 0 : outer[0].size();
    Jacobian c(j.size(), std::vector<std::optional<int64_t>>(n_outer_loops, int64_t(0)));
    for (size_t k = 0; k < j.size(); k++) {
        for (size_t l = 0; l < s.loops.size(); l++) {
            int arg = s.loops[l].func_arg;
            for (size_t q = 0; q < n_outer_loops; q++) {
                if (!c[k][q]) continue;
                if (!j[k][l] || arg < 0 || !outer[arg][q])
                    c[k][q] = std::nullopt;
                else
                    *c[k][q] += *j[k][l] * outer[arg][q].value();
            }
        }
    }
    return c;
}

namespace {

void add_pattern(std::vector<std::pair<Jacobian, double>> &patterns, Jacobian j, double count) {
    for (auto &p : patterns) {
        if (p.first == j) {
            p.second += count;
            return;
        }
    }
    patterns.emplace_back(std::move(j), count);
}

} // namespace

// Calls to inlined Funcs are followed, composing index jacobians. Every path
// through the inlined Funcs is a load site; the walk goes Func by Func
// (drain_in_dag_order), carrying each distinct jacobian with the number of
// paths that reach it.
EffectiveAccesses collect_accesses(const LoopNest &nest, const Stage &st) {
    const FunctionDAG &dag = nest.dag;
    std::vector<EffectiveAccess> out;
    auto emit = [&](const Access &a, Jacobian j, double count) {
        for (EffectiveAccess &e : out) {
            if (e.producer == a.producer && e.bytes == a.bytes && e.jacobian == j) {
                e.count += count;
                return;
            }
        }
        out.push_back(EffectiveAccess{a.producer, a.bytes, std::move(j), count});
    };
    auto inlined = [&](const Access &a) {
        return !a.producer.is_image && nest.location(a.producer.index) == ComputeLocation::Inline;
    };
    std::map<int, std::vector<std::pair<Jacobian, double>>> pending;
    for (const Access &a : st.accesses) {
        if (inlined(a))
            add_pattern(pending[a.producer.index], a.jacobian, 1);
        else
            emit(a, a.jacobian, 1);
    }
    drain_in_dag_order(pending, [&](int node, const std::vector<std::pair<Jacobian, double>> &patterns) {
        const Stage &s = dag.nodes[node].stages[0];
        for (const auto &[outer, count] : patterns) {
            for (const Access &a : s.accesses) {
                Jacobian j = compose_through_inlined(a.jacobian, s, outer);
                if (inlined(a))
                    add_pattern(pending[a.producer.index], std::move(j), count);
                else
                    emit(a, std::move(j), count);
            }
        }
    });
    return out;
}

} // namespace gpusched
