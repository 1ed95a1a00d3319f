#include "core/search_record.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "core/search_space.h"
#include "core/storage_layout.h"

namespace gpusched {

nlohmann::json decisions_to_json(const FunctionDAG &dag, const Decisions &d) {
    nlohmann::json arr = nlohmann::json::array();
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const FuncDecision &f = d.funcs[n];
        nlohmann::json j;
        j["func"] = dag.nodes[n].stable_name;
        j["location"] = location_name(f.location);
        j["host"] = f.host >= 0 ? nlohmann::json(dag.nodes[f.host].stable_name) : nlohmann::json(nullptr);
        nlohmann::json stages = nlohmann::json::array();
        for (const StageTiling &t : f.stages)
            stages.push_back({{"serial", t.serial.to_vector()}, {"thread", t.thread.to_vector()}});
        j["stages"] = stages;
        // Written only where it is not the definition's layout: records of
        // schedules without one stay as they were.
        if (f.storage_innermost != 0) j["storage_innermost"] = dag.nodes[n].args[f.storage_innermost];
        if (f.pad_shared) j["pad_shared"] = true;
        arr.push_back(j);
    }
    return arr;
}

namespace {

// What makes a replayed record's decisions impossible for this pipeline,
// or empty: decisions the search cannot produce (a hand-edited or foreign
// record) would have the loop nest read hosts and consumers that are not
// where the decisions say. Checked before anything is built from them.
std::string structure_error(const FunctionDAG &dag, const Decisions &d) {
    auto name = [&](int n) { return "Func '" + dag.nodes[n].stable_name + "'"; };
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        const int n = static_cast<int>(i);
        const Node &node = dag.nodes[i];
        const FuncDecision &f = d.funcs[i];
        for (const StageTiling &t : f.stages)
            for (size_t l = 0; l < t.serial.size(); l++)
                if (t.serial[l] < 1 || t.thread[l] < 1) return name(n) + " has a tile size below 1";
        switch (f.location) {
        case ComputeLocation::Unscheduled:
            return name(n) + " is not scheduled";
        case ComputeLocation::Inline:
            if (!node.can_inline && !node.always_inline)
                return name(n) + " is inlined, which it cannot be (an output, or a Func with updates)";
            continue;
        case ComputeLocation::Root:
            if (f.host >= 0) return name(n) + " is at root but names a host";
            continue;
        case ComputeLocation::Block:
            if (node.is_output) return name(n) + " is an output and must be at root";
            if (f.host < 0 || d.funcs[f.host].location != ComputeLocation::Root)
                return name(n) + " is at a kernel's block level, but its host is not a Func at root";
            break;
        case ComputeLocation::Thread:
            if (node.is_output) return name(n) + " is an output and must be at root";
            if (f.host < 0 || (d.funcs[f.host].location != ComputeLocation::Root &&
                               d.funcs[f.host].location != ComputeLocation::Block))
                return name(n) + " is at a thread level, but its host is not a Func at root or block level";
            break;
        }
        // Below root, every use is inside the host's kernel: per block, in
        // that kernel; per thread, in the host or Funcs at its thread level.
        // Its consumers have lower indices: each was found scheduled above.
        std::set<int> users;
        effective_consumers(dag, d, n, users);
        for (int c : users) {
            const bool inside = f.location == ComputeLocation::Block
                                    ? kernel_of(d, c) == f.host
                                    : c == f.host || (d.funcs[c].location == ComputeLocation::Thread &&
                                                      d.funcs[c].host == f.host);
            if (!inside)
                return name(n) + " is computed inside the kernel of " + name(f.host) + ", but " + name(c) +
                       " reads it from outside";
        }
    }
    return {};
}

} // namespace

Decisions decisions_from_json(const FunctionDAG &dag, const nlohmann::json &arr) {
    if (!arr.is_array() || arr.size() != dag.nodes.size())
        throw UserError(
            "gpusched replay: the record's decisions do not have one entry per Func of this pipeline (" +
            std::to_string(dag.nodes.size()) + " Funcs)");
    Decisions d;
    d.funcs.resize(dag.nodes.size());
    try {
        for (size_t n = 0; n < dag.nodes.size(); n++) {
            const nlohmann::json &j = arr[n];
            const std::string name = j.at("func").get<std::string>();
            if (name != dag.nodes[n].stable_name)
                throw UserError("gpusched replay: decision " + std::to_string(n) + " is for Func '" + name +
                                "' but this pipeline's Func there is '" + dag.nodes[n].name + "'");
            FuncDecision &f = d.funcs[n];
            f.location = location_from_name(j.at("location").get<std::string>());
            if (!j.at("host").is_null()) {
                const std::string host = j.at("host").get<std::string>();
                f.host = dag.stable_node_index(host);
                if (f.host < 0) throw UserError("gpusched replay: Func '" + name + "' has an unknown host");
            }
            for (const auto &s : j.at("stages")) {
                f.stages.push_back(StageTiling{s.at("serial").get<std::vector<int64_t>>(),
                                               s.at("thread").get<std::vector<int64_t>>()});
            }
            f.tiled = f.location == ComputeLocation::Root || f.location == ComputeLocation::Block;
            if (j.contains("storage_innermost")) {
                const std::string dim = j.at("storage_innermost").get<std::string>();
                const std::vector<std::string> &args = dag.nodes[n].args;
                const auto it = std::find(args.begin(), args.end(), dim);
                if (it == args.end())
                    throw UserError("gpusched replay: Func '" + name + "' has no dimension '" + dim +
                                    "' to store innermost");
                if (!f.tiled || !layout_is_choosable(dag, static_cast<int>(n)))
                    throw UserError(
                        "gpusched replay: Func '" + name +
                        "' cannot choose its layout (only intermediates at root or block level can)");
                f.storage_innermost = static_cast<int>(it - args.begin());
            }
            if (j.contains("pad_shared")) {
                f.pad_shared = j.at("pad_shared").get<bool>();
                if (f.pad_shared && (f.location != ComputeLocation::Block || f.storage_innermost != 0 ||
                                     !layout_is_choosable(dag, static_cast<int>(n))))
                    throw UserError(
                        "gpusched replay: Func '" + name +
                        "' cannot pad its storage (only a shared tile of two or more dimensions in "
                        "its definition's layout can)");
            }
            if (f.tiled && f.stages.size() != dag.nodes[n].stages.size())
                throw UserError("gpusched replay: Func '" + name + "' needs one tiling per stage");
            for (size_t s = 0; s < f.stages.size(); s++) {
                size_t loops = dag.nodes[n].stages[s].loops.size();
                if (f.stages[s].serial.size() != loops || f.stages[s].thread.size() != loops)
                    throw UserError("gpusched replay: Func '" + name + "' stage " + std::to_string(s) +
                                    " needs one serial and thread size per loop");
            }
        }
    } catch (const nlohmann::json::exception &e) {
        throw UserError(std::string("gpusched replay: malformed decisions: ") + e.what());
    } catch (const std::invalid_argument &e) {
        throw UserError(std::string("gpusched replay: ") + e.what());
    }
    if (const std::string why = structure_error(dag, d); !why.empty())
        throw UserError("gpusched replay: the record's decisions cannot be this pipeline's schedule: " + why);
    return d;
}

nlohmann::json record_to_json(const FunctionDAG &dag, const SearchResult &r,
                              const nlohmann::json &config_echo, bool replayed, double peak_rss_mb) {
    nlohmann::json j;
    j["format"] = "gpusched-search-record";
    j["version"] = 1;
    j["replayed"] = replayed;
    j["config"] = config_echo;
    j["decisions"] = decisions_to_json(dag, r.decisions);
    j["predicted_cost"] = r.cost;
    nlohmann::json per_stage = nlohmann::json::array();
    std::vector<std::string> names;
    for (const Node &n : dag.nodes)
        for (const Stage &s : n.stages)
            names.push_back(s.name);
    for (size_t i = 0; i < r.stage_ids.size() && i < r.stage_costs.size(); i++)
        per_stage.push_back({{"stage", names.at(r.stage_ids[i])}, {"cost", r.stage_costs[i]}});
    j["stage_costs"] = per_stage;
    const SearchStats &s = r.stats;
    j["statistics"] = {{"states_enumerated", s.states_enumerated},
                       {"states_pruned_hard", s.states_pruned_hard},
                       {"states_pruned_soft", s.states_pruned_soft},
                       {"states_sampled_out", s.states_sampled_out},
                       {"states_priced", s.states_priced},
                       {"states_featurized", s.states_featurized},
                       {"states_costed", s.states_costed},
                       {"memo_hits", s.memo_hits},
                       {"memo_misses", s.memo_misses},
                       {"memo_evictions", s.memo_evictions},
                       {"region_memo_hits", s.region_memo_hits},
                       {"region_memo_misses", s.region_memo_misses},
                       {"region_memo_resets", s.region_memo_resets},
                       {"funcs_frozen", s.funcs_frozen},
                       {"seconds_enumerate", s.seconds_enumerate},
                       {"seconds_featurize", s.seconds_featurize},
                       {"seconds_cost", s.seconds_cost},
                       {"seconds_total", s.seconds_total},
                       {"seconds_prepass", s.seconds_prepass},
                       {"cpu_seconds_total", s.cpu_seconds_total},
                       {"peak_rss_mb", peak_rss_mb}};
    // Per pass and step of the search whose statistics these are (the
    // chosen pipeline's full search, where reductions were split).
    nlohmann::json steps = nlohmann::json::array();
    for (const StepCounts &c : s.steps)
        steps.push_back({{"pass", c.pass},
                         {"step", c.step},
                         {"func", c.func},
                         {"phase", c.phase},
                         {"enumerated", c.enumerated},
                         {"pruned_hard", c.pruned_hard},
                         {"pruned_soft", c.pruned_soft},
                         {"sampled_out", c.sampled_out},
                         {"costed", c.costed},
                         {"kept", c.kept}});
    j["statistics"]["steps"] = std::move(steps);
    return j;
}

namespace {

nlohmann::json read_record(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw UserError("gpusched replay: cannot open record '" + path + "'");
    nlohmann::json j;
    try {
        in >> j;
    } catch (const std::exception &e) {
        throw UserError("gpusched replay: '" + path + "' is not valid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("decisions"))
        throw UserError("gpusched replay: '" + path + "' has no \"decisions\"");
    return j;
}

} // namespace

Decisions read_record_decisions(const FunctionDAG &dag, const std::string &path) {
    return decisions_from_json(dag, read_record(path)["decisions"]);
}

std::vector<ReductionSplit> read_record_reduction_splits(const std::string &path) {
    const nlohmann::json j = read_record(path);
    if (!j.contains("reduction_splits")) return {};
    return reduction_splits_from_json(j["reduction_splits"]);
}

} // namespace gpusched
