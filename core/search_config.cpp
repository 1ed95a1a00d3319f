#include "core/search_config.h"

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

} // namespace

PluginConfig parse_plugin_config(const nlohmann::json &j) {
    PluginConfig c;
    c.gpu = *find_builtin_gpu_profile("h100");
    if (!j.is_object()) throw UserError("gpusched config: must be a JSON object, got " + j.dump());
    static const std::set<std::string> known = {"beam_size", "passes", "seed", "dropout", "cost_model",
                                                "weights_path", "gpu_profile", "record_path", "replay", "memoize", "hierarchical_sampling",
                                                "freezing", "freezing_min_funcs", "freeze_tilings", "sampling_max_depth",
                                                "dump_states_path", "dump_states_max", "check_launches", "split_reductions",
                                                "atomic_reductions"};
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string &key = it.key();
        const nlohmann::json &v = it.value();
        if (!known.count(key)) {
            std::string names;
            for (const std::string &k : known) names += (names.empty() ? "" : ", ") + k;
            bad(key, "unknown key (known: " + names + ")");
        }
        if (key == "beam_size") c.search.beam_size = positive_int(v, key);
        else if (key == "passes") c.search.passes = positive_int(v, key);
        else if (key == "dump_states_max") c.dump_states_max = positive_int(v, key);
        else if (key == "sampling_max_depth") c.search.sampling_max_depth = positive_int(v, key);
        else if (key == "seed") {
            if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
                bad(key, "must be a non-negative integer, got " + v.dump());
            c.search.seed = v.get<uint64_t>();
        } else if (key == "dropout") {
            if (!v.is_number() || v.get<double>() < 0 || v.get<double>() >= 1)
                bad(key, "must be a number in [0, 1), got " + v.dump());
            c.search.dropout = v.get<double>();
        } else if (key == "hierarchical_sampling") {
            c.search.hierarchical_sampling = boolean(v, key);
        } else if (key == "freezing") {
            c.search.freezing = boolean(v, key);
        } else if (key == "freeze_tilings") {
            c.search.freeze_tilings = boolean(v, key);
        } else if (key == "freezing_min_funcs") {
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000)
                bad(key, "must be an integer >= 0, got " + v.dump());
            c.search.freezing_min_funcs = v.get<int>();
        } else if (key == "check_launches") {
            c.check_launches = boolean(v, key);
        } else if (key == "split_reductions") {
            c.split_reductions = boolean(v, key);
        } else if (key == "atomic_reductions") {
            c.atomic_reductions = boolean(v, key);
        } else if (key == "memoize") {
            c.search.memoize = boolean(v, key);
        } else if (key == "cost_model") {
            if (!v.is_string()) bad(key, "must be a string, got " + v.dump());
            c.cost_model_config[key] = v;
        } else if (key == "weights_path") {
            if (!v.is_string() && !v.is_null()) bad(key, "must be a path string or null, got " + v.dump());
            c.cost_model_config[key] = v;
        } else if (key == "gpu_profile") {
            if (v.is_string()) {
                auto p = find_builtin_gpu_profile(v.get<std::string>());
                if (!p) bad(key, "unknown GPU '" + v.get<std::string>() + "' (known: " + builtin_gpu_profile_names() + ")");
                c.gpu = *p;
            } else if (v.is_object()) {
                try {
                    c.gpu = gpu_profile_from_json(v);
                } catch (const std::exception &e) {
                    bad(key, e.what());
                }
            } else {
                bad(key, "must be a profile object or a built-in GPU name, got " + v.dump());
            }
        } else if (key == "record_path" || key == "replay" || key == "dump_states_path") {
            if (!v.is_string() || v.get<std::string>().empty()) bad(key, "must be a non-empty path string");
            (key == "replay" ? c.replay_path : key == "record_path" ? c.record_path : c.dump_states_path) =
                v.get<std::string>();
        }
    }
    return c;
}

PluginConfig load_plugin_config(const std::map<std::string, std::string> &options) {
    nlohmann::json j = nlohmann::json::object();
    const char *path = std::getenv("GPUSCHED_CONFIG");
    if (path && *path) {
        std::ifstream in(path);
        if (!in) throw UserError(std::string("gpusched config: cannot open GPUSCHED_CONFIG file '") + path + "'");
        try {
            in >> j;
        } catch (const std::exception &e) {
            throw UserError(std::string("gpusched config: '") + path + "' is not valid JSON: " + e.what());
        }
        if (!j.is_object()) return parse_plugin_config(j);  // names the problem
    }
    for (const auto &[key, text] : options) {
        nlohmann::json v = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        j[key] = v.is_number() || v.is_boolean() ? v : nlohmann::json(text);
    }
    return parse_plugin_config(j);
}

} // namespace gpusched
