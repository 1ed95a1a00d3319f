#include "tuner/modes/nightly/nightly_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tuner/duration.h"

namespace gpusched {
namespace fs = std::filesystem;
using nlohmann::json;

const char *to_string(NightlyMode mode) {
    return mode == NightlyMode::Top5 ? "top5" : "autotune";
}

namespace {

// Reads the fields of one JSON object, each named by its path for messages,
// and refuses the fields nobody read.
class Fields {
public:
    Fields(const json &object, std::string where, const std::string &file)
        : object_(object), where_(std::move(where)), file_(file) {
        if (!object_.is_object()) fail(where_.empty() ? "the config" : where_, "is not an object");
    }

    [[noreturn]] void fail(const std::string &field, const std::string &what) const {
        throw ConfigError(file_ + ": field '" + field + "': " + what);
    }
    std::string name(const std::string &key) const { return where_.empty() ? key : where_ + "." + key; }
    bool has(const std::string &key) {
        seen_.insert(key);
        return object_.contains(key) && !object_.at(key).is_null();
    }
    const json &raw(const std::string &key) {
        seen_.insert(key);
        if (!object_.contains(key)) fail(name(key), "is missing");
        return object_.at(key);
    }
    std::string text(const std::string &key) {
        const json &v = raw(key);
        if (!v.is_string() || v.get<std::string>().empty()) fail(name(key), "must be a non-empty string");
        return v.get<std::string>();
    }
    std::string text(const std::string &key, const std::string &fallback) {
        return has(key) ? text(key) : fallback;
    }
    double number(const std::string &key, double fallback, double lo, double hi) {
        if (!has(key)) return fallback;
        const json &v = raw(key);
        if (!v.is_number()) fail(name(key), "must be a number");
        const double d = v.get<double>();
        if (!(d >= lo && d <= hi)) fail(name(key), range(v.dump(), lo, hi));
        return d;
    }
    int64_t integer(const std::string &key, int64_t fallback, int64_t lo, int64_t hi) {
        if (!has(key)) return fallback;
        const json &v = raw(key);
        if (!v.is_number_integer()) fail(name(key), "must be a whole number");
        const int64_t i = v.get<int64_t>();
        if (i < lo || i > hi)
            fail(name(key), range(v.dump(), static_cast<double>(lo), static_cast<double>(hi)));
        return i;
    }
    std::string choice(const std::string &key, const std::vector<std::string> &allowed) {
        const std::string v = text(key);
        std::string list;
        for (std::size_t i = 0; i < allowed.size(); ++i) {
            if (v == allowed[i]) return v;
            list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
        }
        fail(name(key), "\"" + v + "\" is not " + list);
    }
    // Every key of the object was asked for.
    void no_others() const {
        for (auto it = object_.begin(); it != object_.end(); ++it)
            if (!seen_.count(it.key())) fail(name(it.key()), "is not a known field (misspelt?)");
    }

private:
    static std::string range(const std::string &value, double lo, double hi) {
        std::ostringstream s;
        s << value << " is out of range (" << lo << " to " << hi << ")";
        return s.str();
    }
    const json &object_;
    std::string where_;
    const std::string &file_;
    std::set<std::string> seen_;
};

std::string resolve(const std::string &p, const fs::path &base) {
    const fs::path path(p);
    return (path.is_absolute() ? path : base / path).lexically_normal().string();
}

TimingOptions parse_timing(Fields &parent, const std::string &key, const std::string &file) {
    TimingOptions t;
    if (!parent.has(key)) return t;
    Fields f(parent.raw(key), parent.name(key), file);
    t.min_time_s = f.number("min_time_s", t.min_time_s, 0, 3600);
    t.min_reps = static_cast<int>(f.integer("min_reps", t.min_reps, 1, 1000000));
    t.max_reps = static_cast<int>(f.integer("max_reps", t.max_reps, t.min_reps, 1000000));
    t.precision = f.number("precision", t.precision, 0, 0.999);
    t.timeout = std::chrono::seconds(f.integer("timeout_s", t.timeout.count(), 1, 86400));
    f.no_others();
    return t;
}

NightlyPipeline parse_pipeline(const json &j, const std::string &where, const std::string &file,
                               const fs::path &base) {
    Fields f(j, where, file);
    NightlyPipeline p;
    p.generator_path = resolve(f.text("generator"), base);
    p.generator_name = f.text("generator_name");
    p.name = f.text("name", p.generator_name);
    static const std::regex safe("[A-Za-z0-9_][A-Za-z0-9_.-]*");
    if (!std::regex_match(p.name, safe))
        f.fail(f.name(f.has("name") ? "name" : "generator_name"),
               "\"" + p.name + "\" cannot name a file (letters, digits, '_', '.', '-')");
    if (f.has("params")) {
        const json &params = f.raw("params");
        if (!params.is_object()) f.fail(f.name("params"), "must be an object of generator params");
        for (auto it = params.begin(); it != params.end(); ++it) {
            const json &v = it.value();
            if (v.is_string())
                p.params[it.key()] = v.get<std::string>();
            else if (v.is_number() || v.is_boolean())
                p.params[it.key()] = v.dump();
            else
                f.fail(f.name("params." + it.key()), "must be a string, number or boolean");
        }
    }
    const std::string gpu = f.text("gpu");
    const auto profile = find_builtin_gpu_profile(gpu);
    if (!profile)
        f.fail(f.name("gpu"), "\"" + gpu + "\" is not a GPU profile (" + builtin_gpu_profile_names() + ")");
    p.gpu = *profile;
    p.device = *parse_device_kind(f.choice("device", {"cuda", "opencl"}));
    p.mode = f.choice("mode", {"top5", "autotune"}) == "top5" ? NightlyMode::Top5 : NightlyMode::Autotune;
    p.share = f.number("share", 1, 1e-6, 1e6);
    p.samples = static_cast<int>(f.integer("samples", p.samples, 1, 100000));
    if (p.mode == NightlyMode::Autotune) {
        p.iterations = static_cast<int>(f.integer("iterations", p.iterations, 1, 100000));
        if (f.has("train_on"))
            p.train_on = *parse_train_on(f.choice("train_on", {"run", "pipeline", "device"}));
    } else {
        p.top = static_cast<int>(f.integer("top", p.top, 1, 100000));
    }
    if (f.has("baselines")) {
        const json &b = f.raw("baselines");
        if (!b.is_array()) f.fail(f.name("baselines"), "must be an array of li2018, naive or manual");
        for (const json &v : b) {
            const std::string name = v.is_string() ? v.get<std::string>() : v.dump();
            if (name != "li2018" && name != "naive" && name != "manual")
                f.fail(f.name("baselines"), "\"" + name + "\" is not li2018, naive or manual");
            p.baselines.push_back(name);
        }
    }
    p.search.beam_size = static_cast<int>(f.integer("beam_size", p.search.beam_size, 1, 100000));
    p.search.passes = static_cast<int>(f.integer("passes", p.search.passes, 1, 1000));
    p.search.seed = static_cast<uint64_t>(f.integer("seed", 0, 0, INT64_MAX));
    p.timing = parse_timing(f, "timing", file);
    f.no_others(); // also catches top5's fields on an autotune pipeline and the reverse
    return p;
}

} // namespace

NightlyConfig parse_nightly_config(const std::string &text, const std::string &path) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) throw ConfigError(path + ": not valid JSON");
    const fs::path base = fs::absolute(path).parent_path();
    NightlyConfig c;
    c.path = path;
    Fields f(j, "", path);
    c.database = resolve(f.text("database"), base);
    c.schedules = resolve(f.text("schedules"), base);
    c.work_dir = resolve(f.text("work_dir"), base);
    const json &budget = f.raw("budget");
    std::optional<double> seconds;
    if (budget.is_number())
        seconds = budget.get<double>();
    else if (budget.is_string())
        seconds = parse_duration(budget.get<std::string>());
    if (!seconds || !(*seconds > 0))
        f.fail("budget", budget.dump() +
                             " is not a positive duration (seconds, or \"90s\", \"15m\", \"6h\", \"1h30m\")");
    c.budget_s = *seconds;
    if (f.has("log")) c.log = resolve(f.text("log"), base);
    if (f.has("report")) c.report = resolve(f.text("report"), base);
    c.lock =
        f.has("lock") ? resolve(f.text("lock"), base) : (fs::path(c.schedules) / ".nightly.lock").string();
    c.jobs = static_cast<int>(f.integer("jobs", 0, 0, 4096));
    c.noise_floor = f.number("noise_floor", c.noise_floor, 0, 0.9);
    if (f.has("retrain")) {
        Fields r(f.raw("retrain"), "retrain", path);
        c.epochs = static_cast<int>(r.integer("epochs", c.epochs, 1, 1000000));
        c.learning_rate = r.number("learning_rate", c.learning_rate, 1e-9, 1);
        r.no_others();
    }
    if (f.has("executor")) {
        Fields e(f.raw("executor"), "executor", path);
        c.executor = e.choice("kind", {"local", "slurm"});
        if (c.executor == "slurm") {
            c.slurm.work_dir = resolve(e.text("work_dir"), base);
            c.slurm.partition = e.text("partition", "");
            c.slurm.account = e.text("account", "");
            c.slurm.gres = e.text("gres", "");
            c.slurm.time_limit = e.text("time_limit", "");
            c.slurm.worker_command = e.text("worker_command", "");
            c.slurm.max_attempts = static_cast<int>(e.integer("max_attempts", c.slurm.max_attempts, 1, 100));
        }
        e.no_others();
    }
    const json &pipelines = f.raw("pipelines");
    if (!pipelines.is_array() || pipelines.empty()) f.fail("pipelines", "must be a non-empty array");
    std::set<std::string> names;
    for (std::size_t i = 0; i < pipelines.size(); ++i) {
        const std::string where = "pipelines[" + std::to_string(i) + "]";
        c.pipelines.push_back(parse_pipeline(pipelines[i], where, path, base));
        if (!names.insert(c.pipelines.back().name).second)
            f.fail(where + ".name",
                   "\"" + c.pipelines.back().name +
                       "\" names two pipelines; each needs its own (it names NAME.schedule.h)");
    }
    f.no_others();
    return c;
}

NightlyConfig load_nightly_config(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw ConfigError(path + ": cannot read the config file");
    std::stringstream s;
    s << in.rdbuf();
    return parse_nightly_config(s.str(), path);
}

void check_nightly_paths(const NightlyConfig &c) {
    for (std::size_t i = 0; i < c.pipelines.size(); ++i) {
        const auto &p = c.pipelines[i];
        if (!fs::is_regular_file(p.generator_path))
            throw ConfigError(c.path + ": field 'pipelines[" + std::to_string(i) + "].generator': '" +
                              p.generator_path + "' is not a file");
    }
    const std::pair<const char *, std::string> dirs[] = {{"schedules", c.schedules},
                                                         {"work_dir", c.work_dir},
                                                         {"database", fs::path(c.database).parent_path()}};
    for (const auto &[field, dir] : dirs) {
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec || !fs::is_directory(dir))
            throw ConfigError(c.path + ": field '" + field + "': cannot create the folder '" + dir + "'" +
                              (ec ? ": " + ec.message() : ""));
    }
}

} // namespace gpusched
