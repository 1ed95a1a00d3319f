#include "core/search_config.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#include "core/function_dag.h"

namespace gpusched {

namespace {

[[noreturn]] void bad(const std::string &key, const std::string &why) {
    throw UserError("gpusched config: key \"" + key + "\": " + why);
}

int positive_int(const nlohmann::json &v, const std::string &key) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1000000)
        bad(key, "must be an integer >= 1, got " + v.dump());
    return v.get<int>();
}

bool boolean(const nlohmann::json &v, const std::string &key) {
    if (!v.is_boolean()) bad(key, "must be true or false, got " + v.dump());
    return v.get<bool>();
}

bool non_negative_int(const nlohmann::json &v, const std::string &key) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000)
        bad(key, "must be an integer >= 0, got " + v.dump());
    return true;
}

std::string path(const nlohmann::json &v, const std::string &key) {
    if (!v.is_string() || v.get<std::string>().empty()) bad(key, "must be a non-empty path string");
    return v.get<std::string>();
}

nlohmann::json path_or_omit(const std::string &p) {
    return p.empty() ? nlohmann::json() : nlohmann::json(p);
}

// Every key of the config: how it is read, how the record echoes it.
const std::vector<SearchOption> kOptions = {
    {"beam_size", "integer >= 1", "beam width of the search (paper: 32; greedy samples: 1)",
     [](const nlohmann::json &v, PluginConfig &c) { c.search.beam_size = positive_int(v, "beam_size"); },
     [](const PluginConfig &c) { return nlohmann::json(c.search.beam_size); }},
    {"passes", "integer >= 1", "passes of the search, each deeper in hierarchical sampling (paper: 5)",
     [](const nlohmann::json &v, PluginConfig &c) { c.search.passes = positive_int(v, "passes"); },
     [](const PluginConfig &c) { return nlohmann::json(c.search.passes); }},
    {"seed", "integer >= 0", "random seed of dropout and hierarchical sampling",
     [](const nlohmann::json &v, PluginConfig &c) {
         if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
             bad("seed", "must be a non-negative integer, got " + v.dump());
         c.search.seed = v.get<uint64_t>();
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.seed); }},
    {"dropout", "number in [0, 1)", "probability of dropping each costed child (one always survives)",
     [](const nlohmann::json &v, PluginConfig &c) {
         if (!v.is_number() || v.get<double>() < 0 || v.get<double>() >= 1)
             bad("dropout", "must be a number in [0, 1), got " + v.dump());
         c.search.dropout = v.get<double>();
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.dropout); }},
    {"memoize", "boolean", "reuse kernel featurizations (paper sec. 3.3)",
     [](const nlohmann::json &v, PluginConfig &c) { c.search.memoize = boolean(v, "memoize"); },
     [](const PluginConfig &c) { return nlohmann::json(c.search.memoize); }},
    {"hierarchical_sampling", "boolean", "featurize a few members of each structural bucket (paper sec. 3.1)",
     [](const nlohmann::json &v, PluginConfig &c) {
         c.search.hierarchical_sampling = boolean(v, "hierarchical_sampling");
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.hierarchical_sampling); }},
    {"sampling_max_depth", "integer >= 1", "deepest structural hash of hierarchical sampling",
     [](const nlohmann::json &v, PluginConfig &c) {
         c.search.sampling_max_depth = positive_int(v, "sampling_max_depth");
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.sampling_max_depth); }},
    {"freezing", "boolean", "freeze all but the costliest Funcs after a pre-pass (paper sec. 3.2)",
     [](const nlohmann::json &v, PluginConfig &c) { c.search.freezing = boolean(v, "freezing"); },
     [](const PluginConfig &c) { return nlohmann::json(c.search.freezing); }},
    {"freezing_min_funcs", "integer >= 0", "freeze only pipelines with at least this many Funcs",
     [](const nlohmann::json &v, PluginConfig &c) {
         non_negative_int(v, "freezing_min_funcs");
         c.search.freezing_min_funcs = v.get<int>();
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.freezing_min_funcs); }},
    {"freeze_tilings", "boolean", "a frozen root Func also keeps the pre-pass's tiling",
     [](const nlohmann::json &v, PluginConfig &c) { c.search.freeze_tilings = boolean(v, "freeze_tilings"); },
     [](const PluginConfig &c) { return nlohmann::json(c.search.freeze_tilings); }},
    {"reuse_tiling_rows", "boolean",
     "a root stage's row per tiling costed once per search, later candidates priced from it",
     [](const nlohmann::json &v, PluginConfig &c) {
         c.search.reuse_tiling_rows = boolean(v, "reuse_tiling_rows");
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.reuse_tiling_rows); }},
    {"search_layouts", "boolean",
     "offer an intermediate's block placements and root tilings also with each dimension its readers walk "
     "stored innermost",
     [](const nlohmann::json &v, PluginConfig &c) { c.search.search_layouts = boolean(v, "search_layouts"); },
     [](const PluginConfig &c) { return nlohmann::json(c.search.search_layouts); }},
    {"search_shared_padding", "boolean",
     "with search_layouts, offer each such shared tile also padded against bank conflicts (off: it crowds "
     "the "
     "beam)",
     [](const nlohmann::json &v, PluginConfig &c) {
         c.search.search_shared_padding = boolean(v, "search_shared_padding");
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.search_shared_padding); }},
    {"reuse_parent_nest", "boolean",
     "a location step's candidates' loop nests made from their parent's, built once per expansion",
     [](const nlohmann::json &v, PluginConfig &c) {
         c.search.reuse_parent_nest = boolean(v, "reuse_parent_nest");
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.reuse_parent_nest); }},
    {"root_only", "boolean", "every Func at root, its own kernel (validation's device reference)",
     [](const nlohmann::json &v, PluginConfig &c) { c.search.root_only = boolean(v, "root_only"); },
     [](const PluginConfig &c) { return nlohmann::json(c.search.root_only); }},
    {"offer_naive", "boolean",
     "cost the naive schedule (every Func at root, 16x16 threads) beside the search's pick; keep the cheaper",
     [](const nlohmann::json &v, PluginConfig &c) { c.offer_naive = boolean(v, "offer_naive"); },
     [](const PluginConfig &c) { return nlohmann::json(c.offer_naive); }},
    {"naive_only", "boolean",
     "no search: cost and apply the naive schedule (the baseline in the model's terms)",
     [](const nlohmann::json &v, PluginConfig &c) { c.naive_only = boolean(v, "naive_only"); },
     [](const PluginConfig &c) { return nlohmann::json(c.naive_only); }},
    {"check_launches", "boolean",
     "check the chosen schedule's kernels in the lowering that compiles it; refuse launches over the GPU's "
     "limits",
     [](const nlohmann::json &v, PluginConfig &c) { c.check_launches = boolean(v, "check_launches"); },
     [](const PluginConfig &c) { return nlohmann::json(c.check_launches); }},
    {"split_reductions", "boolean", "search splits of small-output reductions across threads",
     [](const nlohmann::json &v, PluginConfig &c) { c.split_reductions = boolean(v, "split_reductions"); },
     [](const PluginConfig &c) { return nlohmann::json(c.split_reductions); }},
    {"atomic_reductions", "boolean", "a split may combine its partials with atomic updates",
     [](const nlohmann::json &v, PluginConfig &c) { c.atomic_reductions = boolean(v, "atomic_reductions"); },
     [](const PluginConfig &c) { return nlohmann::json(c.atomic_reductions); }},
    {"in_block_reductions", "boolean", "a split's second level may combine its partials a block at a time",
     [](const nlohmann::json &v, PluginConfig &c) {
         c.in_block_reductions = boolean(v, "in_block_reductions");
     },
     [](const PluginConfig &c) { return nlohmann::json(c.in_block_reductions); }},
    {"max_split_bytes", "integer >= 0",
     "the most device memory a reduction split's partials may take (bytes; default 256 MiB)",
     [](const nlohmann::json &v, PluginConfig &c) {
         if (!v.is_number_integer() || v.get<int64_t>() < 0)
             bad("max_split_bytes", "must be a whole number of bytes >= 0, got " + v.dump());
         c.search.max_split_bytes = v.get<int64_t>();
     },
     [](const PluginConfig &c) { return nlohmann::json(c.search.max_split_bytes); }},
    {"split_tie_tolerance", "number in [0, 1)",
     "splits of a reduction whose predicted costs are this close (relative) are a tie, kept by GPU fill",
     [](const nlohmann::json &v, PluginConfig &c) {
         if (!v.is_number() || v.get<double>() < 0 || v.get<double>() >= 1)
             bad("split_tie_tolerance", "must be a number in [0, 1), got " + v.dump());
         c.split_tie_tolerance = v.get<double>();
     },
     [](const PluginConfig &c) { return nlohmann::json(c.split_tie_tolerance); }},
    {"cost_model", "string", "the cost model: network (default) or analytic",
     [](const nlohmann::json &v, PluginConfig &c) {
         if (!v.is_string()) bad("cost_model", "must be a string, got " + v.dump());
         c.cost_model_config["cost_model"] = v;
     },
     [](const PluginConfig &c) { return c.cost_model_config.value("cost_model", nlohmann::json()); }},
    {"weights_path", "path or null", "the network's weights file (null: the embedded defaults)",
     [](const nlohmann::json &v, PluginConfig &c) {
         if (!v.is_string() && !v.is_null())
             bad("weights_path", "must be a path string or null, got " + v.dump());
         c.cost_model_config["weights_path"] = v;
     },
     [](const PluginConfig &c) { return c.cost_model_config.value("weights_path", nlohmann::json()); }},
    {"gpu_profile", "GPU name or profile object", "the GPU the search prunes and costs for (default h100)",
     [](const nlohmann::json &v, PluginConfig &c) {
         if (v.is_string()) {
             auto p = find_builtin_gpu_profile(v.get<std::string>());
             if (!p)
                 bad("gpu_profile", "unknown GPU '" + v.get<std::string>() +
                                        "' (known: " + builtin_gpu_profile_names() + ")");
             c.gpu = *p;
         } else if (v.is_object()) {
             try {
                 c.gpu = gpu_profile_from_json(v);
             } catch (const std::exception &e) {
                 bad("gpu_profile", e.what());
             }
         } else {
             bad("gpu_profile", "must be a profile object or a built-in GPU name, got " + v.dump());
         }
     },
     [](const PluginConfig &c) { return to_json(c.gpu); }},
    // Not echoed: the record is that file.
    {"record_path", "path", "where to write the decision record",
     [](const nlohmann::json &v, PluginConfig &c) { c.record_path = path(v, "record_path"); },
     [](const PluginConfig &) { return nlohmann::json(); }},
    {"replay", "path", "apply this record's decisions instead of searching",
     [](const nlohmann::json &v, PluginConfig &c) { c.replay_path = path(v, "replay"); },
     [](const PluginConfig &c) { return path_or_omit(c.replay_path); }},
    {"dump_states_path", "path", "write a seeded sample of the states the search costed (feature rows)",
     [](const nlohmann::json &v, PluginConfig &c) { c.dump_states_path = path(v, "dump_states_path"); },
     [](const PluginConfig &c) { return path_or_omit(c.dump_states_path); }},
    {"dump_states_max", "integer >= 1", "states kept by dump_states_path",
     [](const nlohmann::json &v, PluginConfig &c) { c.dump_states_max = positive_int(v, "dump_states_max"); },
     [](const PluginConfig &c) {
         return c.dump_states_path.empty() ? nlohmann::json() : nlohmann::json(c.dump_states_max);
     }},
};

} // namespace

const std::vector<SearchOption> &search_options() {
    return kOptions;
}

PluginConfig parse_plugin_config(const nlohmann::json &j) {
    PluginConfig c;
    c.gpu = *find_builtin_gpu_profile("h100");
    if (!j.is_object()) throw UserError("gpusched config: must be a JSON object, got " + j.dump());
    for (auto it = j.begin(); it != j.end(); ++it) {
        const auto option = std::find_if(kOptions.begin(), kOptions.end(),
                                         [&](const SearchOption &o) { return it.key() == o.key; });
        if (option == kOptions.end()) {
            std::set<std::string> sorted;
            for (const SearchOption &o : kOptions)
                sorted.insert(o.key);
            std::string names;
            for (const std::string &k : sorted)
                names += (names.empty() ? "" : ", ") + k;
            bad(it.key(), "unknown key (known: " + names + ")");
        }
        option->read(it.value(), c);
    }
    return c;
}

nlohmann::json echo_plugin_config(const PluginConfig &c) {
    nlohmann::json j = nlohmann::json::object();
    for (const SearchOption &o : kOptions) {
        nlohmann::json v = o.echo(c);
        if (!v.is_null()) j[o.key] = std::move(v);
    }
    return j;
}

PluginConfig load_plugin_config(const std::map<std::string, std::string> &options) {
    nlohmann::json j = nlohmann::json::object();
    const char *path = std::getenv("GPUSCHED_CONFIG");
    if (path && *path) {
        std::ifstream in(path);
        if (!in)
            throw UserError(std::string("gpusched config: cannot open GPUSCHED_CONFIG file '") + path + "'");
        try {
            in >> j;
        } catch (const std::exception &e) {
            throw UserError(std::string("gpusched config: '") + path + "' is not valid JSON: " + e.what());
        }
        if (!j.is_object()) return parse_plugin_config(j); // names the problem
    }
    for (const auto &[key, text] : options) {
        nlohmann::json v = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        j[key] = v.is_number() || v.is_boolean() ? v : nlohmann::json(text);
    }
    return parse_plugin_config(j);
}

} // namespace gpusched
