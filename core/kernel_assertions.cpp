#include "core/kernel_assertions.h"

#include <set>
#include <sstream>

#include "core/let_scope.h"

namespace gpusched {

namespace {

using namespace Halide;
using namespace Halide::Internal;

std::string join_extents(const VarValues &v, const std::vector<std::string> &outputs) {
    std::ostringstream s;
    for (size_t o = 0; o < outputs.size(); o++) {
        s << (o ? ", " : "") << outputs[o] << " is ";
        for (int d = 0;; d++) {
            auto it = v.find(outputs[o] + ".extent." + std::to_string(d));
            if (it == v.end()) break;
            s << (d ? " x " : "") << static_cast<int64_t>(it->second);
        }
    }
    return s.str();
}

} // namespace

std::string first_failure(const KernelAssertion &a, const EstimatedShapes &shapes) {
    const std::vector<std::string> &outputs = shapes.outputs;
    const std::string what =
        "kernel of '" + a.kernel + "' " +
        (a.bound.empty() ? "has an assertion"
                         : "checks that the bound of " + a.bound + " covers what is read") +
        ", which the GPU code drops";
    // Enough positions for every block and thread of a realistic kernel at
    // every swept size; past it, the rest of a size is not tried.
    constexpr int64_t kMaxPositions = int64_t{1} << 20;
    std::vector<bool> uses(a.loops.size(), false);
    const std::set<std::string> used = free_variables(a.condition);
    for (size_t i = 0; i < a.loops.size(); i++)
        uses[i] = used.count(a.loops[i].name) > 0;
    for (int64_t delta = 0; delta < kExtentSweep; delta++) {
        VarValues v = shapes.values;
        for (const std::string &o : outputs) {
            for (int d = 0;; d++) {
                const std::string ext = o + ".extent." + std::to_string(d);
                auto it = v.find(ext);
                if (it == v.end()) break;
                it->second += static_cast<double>(delta);
                const std::string mn = o + ".min." + std::to_string(d);
                if (v.count(mn)) v[o + ".max." + std::to_string(d)] = v[mn] + it->second - 1;
            }
        }
        std::vector<int64_t> lo, count;
        for (size_t i = 0; i < a.loops.size(); i++) {
            const GpuLoop &l = a.loops[i];
            auto m = evaluate(l.min, v);
            auto e = evaluate(l.extent, v);
            if (!m || !e) {
                std::ostringstream b;
                b << "[" << l.min << ", extent " << l.extent << "]";
                return what + " (" + l.name + "'s bounds " + b.str() +
                       " cannot be evaluated at the estimated sizes)";
            }
            lo.push_back(*m);
            // Only the loops the condition reads are walked; the others
            // stay at their first position.
            count.push_back(uses[i] ? std::max<int64_t>(*e, 0) : std::min<int64_t>(*e, 1));
        }
        const CompiledExpr check(a.condition, [&](const std::string &name) {
            VarBinding b;
            for (size_t i = 0; i < a.loops.size(); i++)
                if (a.loops[i].name == name) b.slot = static_cast<int>(i);
            if (b.slot < 0) {
                auto it = v.find(name);
                if (it != v.end()) b.constant = it->second;
            }
            return b;
        });
        // Every combination of GPU loop positions (an odometer).
        std::vector<int64_t> pos(lo);
        bool empty = false;
        for (int64_t c : count)
            empty = empty || c == 0;
        for (int64_t n = 0; !empty && n < kMaxPositions; n++) {
            const std::optional<int64_t> holds = check.evaluate(pos.data());
            if (!holds) {
                std::ostringstream c;
                c << a.condition;
                return what + ": it cannot be evaluated at the estimated sizes (" + c.str() + ")";
            }
            if (*holds == 0) {
                std::ostringstream s;
                s << what << ": it fails when " << join_extents(v, outputs) << " at";
                for (size_t i = 0; i < pos.size(); i++)
                    if (uses[i]) s << " " << a.loops[i].name << " = " << pos[i];
                return s.str();
            }
            size_t i = pos.size();
            while (i > 0) {
                --i;
                if (++pos[i] < lo[i] + count[i]) break;
                pos[i] = lo[i];
                if (i == 0) empty = true; // wrapped around: all tried
            }
            if (pos.empty()) break;
        }
    }
    return {};
}

} // namespace gpusched
