#include "tuner/generate/batch.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/generator_run.h"
#include "tuner/generate/ptx_extract.h"
#include "tuner/generate/shared_runtime.h"
#include "tuner/host_target.h"
#include "tuner/user_paths.h"

namespace gpusched {
namespace fs = std::filesystem;

namespace {

// GeneratorParams the driver sets itself (target, and those selecting the
// autoscheduler in this Halide's protocol); users choose them with flags.
bool reserved_param(const std::string &key) {
    if (key == "target" || key.rfind("autoscheduler.", 0) == 0) return true;
    for (const std::string &p : autoscheduler_param_names())
        if (key == p) return true;
    return false;
}

std::vector<uint8_t> read_bytes(const std::string &path) {
    std::string t = read_text_file(path);
    return std::vector<uint8_t>(t.begin(), t.end());
}

// One sample: the generator run (with the plugin's config for a search),
// its record, and ptxas on every PTX module of the library.
void run_sample(const OneShotOptions &opt, const BatchInputs &in, OneShotSample &s) {
    const ScheduleSource &source = in.source;
    std::error_code ec;
    fs::remove_all(s.dir, ec);
    fs::create_directories(s.dir, ec);

    GeneratorInvocation inv;
    inv.generator_path = opt.generator_path;
    inv.generator_name = opt.generator_name;
    inv.output_dir = s.dir;
    inv.emit = {"static_library", "h", "registration", "schedule"};
    inv.target = in.target;
    inv.params = opt.generator_params;
    inv.timeout = opt.timeout;
    if (source.schedule_param) inv.params["schedule"] = *source.schedule_param;
    if (source.plugin_path) {
        inv.plugin_path = source.plugin_path;
        inv.autoscheduler = source.halide_name;
        inv.autoscheduler_options = source.options;
    }
    nlohmann::json config = opt.search_config.is_object() ? opt.search_config : nlohmann::json::object();
    const std::string record_path = s.dir + "/" + opt.generator_name + ".gpusched.json";
    if (source.searches) {
        inv.emit.push_back("featurization");
        s.beam = (s.index == 0);
        s.seed = opt.search.seed + static_cast<uint64_t>(s.index);
        config["beam_size"] = s.beam ? opt.search.beam_size : 1;
        config["passes"] = s.beam ? opt.search.passes : 1;
        config["seed"] = *s.seed;
        if (!s.beam) config["dropout"] = opt.search.greedy_dropout;
        config["gpu_profile"] = to_json(opt.gpu);
        config["record_path"] = record_path;
        const std::string config_path = s.dir + "/config.json";
        std::ofstream(config_path) << config.dump(2);
        inv.env["GPUSCHED_CONFIG"] = config_path;
    }
    // The Halide runtime is compiled once per run, not once per sample
    // (tuner/generate/shared_runtime.h): it was most of a small pipeline's compile.
    s.generator = run_generator_sharing_runtime(inv, opt.output_dir + "/runtime");
    if (!s.generator.ok()) return;
    const std::string base = s.dir + "/" + opt.generator_name;
    s.schedule_source_text = read_text_file(base + ".schedule.h");
    if (fs::exists(base + ".featurization")) s.featurization = read_bytes(base + ".featurization");
    if (fs::exists(record_path)) {
        s.record = nlohmann::json::parse(read_text_file(record_path), nullptr, false);
        if (s.record.is_discarded()) {
            s.record = nullptr;
        } else {
            if (s.record.contains("predicted_cost") && s.record["predicted_cost"].is_number())
                s.predicted_cost = s.record["predicted_cost"].get<double>();
            // The search's own time, as the plugin measured it (docs/search.md).
            const auto &stats = s.record.value("statistics", nlohmann::json::object());
            if (stats.contains("seconds_total") && stats["seconds_total"].is_number())
                s.search_seconds = stats["seconds_total"].get<double>();
            const auto &fill = s.record.value("gpu_fill", nlohmann::json::object());
            if (fill.contains("weighted") && fill["weighted"].is_number()) {
                s.gpu_fill = GpuFillSummary{fill["weighted"].get<double>(), fill.value("least", 1.0),
                                            fill.value("least_kernel", std::string()),
                                            fill.value("capacity_threads", 0.0)};
            }
        }
    }
    std::vector<std::string> ptx;
    try {
        for (auto &m : extract_ptx_modules_from_file(base + ".a"))
            ptx.push_back(std::move(m.text));
        s.ptxas = check_with_ptxas(ptx, opt.gpu.ptxas_arch(), s.dir);
    } catch (const std::exception &e) {
        s.ptxas.status = PtxasStatus::Failed;
        s.ptxas.detail = e.what();
    }
}

} // namespace

void generate_sample(const OneShotOptions &opt, const BatchInputs &in, OneShotSample &s) {
    run_sample(opt, in, s);
}

std::string read_text_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string default_cuda_target(const GpuProfile &gpu) {
    return host_target_with("cuda-" + gpu.halide_cuda_capability_feature());
}

nlohmann::json batch_run_config(const OneShotOptions &opt, int samples) {
    return {{"samples", samples},
            {"jobs", opt.jobs},
            {"beam_size", opt.search.beam_size},
            {"passes", opt.search.passes},
            {"seed", opt.search.seed},
            {"gpu", opt.gpu.name},
            {"search_config", opt.search_config}};
}

std::string canonical_params(const std::map<std::string, std::string> &params) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto &[k, v] : params)
        j[k] = v; // std::map: sorted keys
    return j.dump();
}

std::string hash_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw UserError("cannot read '" + path + "'");
    uint64_t h = 1469598103934665603ull; // FNV-1a 64 offset basis
    char buf[1 << 16];
    while (f.read(buf, sizeof buf) || f.gcount() > 0) {
        for (std::streamsize i = 0; i < f.gcount(); ++i) {
            h ^= static_cast<unsigned char>(buf[i]);
            h *= 1099511628211ull; // FNV-1a 64 prime
        }
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

BatchInputs check_batch_inputs(const OneShotOptions &opt) {
    // Asking the generator for its names is a generator run: the same time limit.
    if (auto pre = preflight_generator(opt.generator_path, opt.generator_name, opt.timeout); !pre.ok())
        throw UserError(pre.message);
    auto source = find_schedule_source(opt.schedule_source);
    if (!source) {
        std::string names;
        for (const auto &n : schedule_source_names())
            names += (names.empty() ? "" : ", ") + n;
        throw UserError("unknown schedule source '" + opt.schedule_source + "' (known: " + names + ")");
    }
    if (source->plugin_path) {
        if (source->plugin_path->empty())
            throw UserError("the gpusched autoscheduler plugin (libgpusched_autoscheduler.so) was not found; "
                            "build it or set GPUSCHED_PLUGIN");
        if (!fs::exists(*source->plugin_path))
            throw UserError("autoscheduler plugin '" + *source->plugin_path + "' does not exist");
    }
    for (const auto &param : opt.generator_params) {
        if (reserved_param(param.first))
            throw UserError(
                "generator param '" + param.first +
                "' is set by gpusched (use --gpu / --target / --autoscheduler, and the search options)");
    }
    if (opt.samples < 1) throw UserError("--samples must be at least 1");
    if (opt.jobs < 1) throw UserError("--jobs must be at least 1");
    check_output_folder(opt.output_dir, "output directory");
    BatchInputs in;
    in.source = *source;
    in.target = opt.target.empty() ? default_cuda_target(opt.gpu) : opt.target;
    in.samples = source->searches ? opt.samples : 1;
    // The params (and the target) once, before any sample: a Top 5 or an
    // Autotune stores each sample as it finishes, and a typo would leave a
    // failed run behind it.
    if (auto g =
            check_generator_params(opt.generator_path, opt.generator_name, opt.generator_params, in.target,
                                   locate_gpusched_plugin(), opt.output_dir + "/.params-check", opt.timeout);
        !g.ok())
        throw UserError(g.message);
    return in;
}

std::vector<OneShotSample> generate_batch(const OneShotOptions &opt, const BatchInputs &in,
                                          const ProgressFn &progress) {
    const int n = in.samples;
    std::vector<OneShotSample> samples(static_cast<std::size_t>(n));
    std::atomic<int> next{0}, done{0};
    std::mutex progress_mutex;
    auto worker = [&] {
        for (int i = next++; i < n; i = next++) {
            OneShotSample &s = samples[static_cast<std::size_t>(i)];
            s.index = i;
            s.dir = opt.output_dir + "/samples/" + std::to_string(i);
            run_sample(opt, in, s);
            int d = ++done;
            if (progress) {
                std::lock_guard<std::mutex> lock(progress_mutex);
                progress(s, d, n);
            }
        }
    };
    std::vector<std::thread> threads;
    for (int j = 0; j < std::min(opt.jobs, n); ++j)
        threads.emplace_back(worker);
    for (auto &t : threads)
        t.join();
    return samples;
}

std::vector<SelectionCandidate> selection_candidates(const std::vector<OneShotSample> &samples) {
    std::vector<SelectionCandidate> candidates;
    for (const auto &s : samples) {
        SelectionCandidate c;
        c.usable = s.compiled() && s.ptxas.status != PtxasStatus::Failed;
        c.predicted_cost = s.predicted_cost;
        c.spill_bytes = s.ptxas.total_spill_bytes();
        candidates.push_back(c);
    }
    return candidates;
}

nlohmann::json sample_search_config(const OneShotOptions &opt, const OneShotSample &s) {
    nlohmann::json cfg = opt.search_config.is_object() ? opt.search_config : nlohmann::json::object();
    if (s.seed) cfg["seed"] = *s.seed;
    return cfg;
}

std::string fill_percent(double share) {
    std::ostringstream s;
    s.precision(3);
    s << 100.0 * share << "%";
    return s.str();
}

db::SampleRow to_sample_row(const OneShotSample &s, const nlohmann::json &search_config) {
    db::SampleRow row;
    row.batch = 0;
    row.idx = s.index;
    if (s.seed) row.seed = static_cast<int64_t>(*s.seed);
    row.search_config = search_config.dump();
    if (s.record.is_null()) {
        row.decisions = "";
    } else {
        // The per-step counts (hundreds of entries) are for studying one
        // search; the database keeps each sample's record without them.
        nlohmann::json stored = s.record;
        if (stored.contains("statistics") && stored["statistics"].is_object())
            stored["statistics"].erase("steps");
        row.decisions = stored.dump();
    }
    row.schedule_source = s.schedule_source_text;
    row.featurization = s.featurization;
    row.predicted_cost = s.predicted_cost;
    row.autoschedule_s = s.search_seconds;
    if (s.gpu_fill) {
        row.gpu_fill = s.gpu_fill->weighted;
        row.gpu_fill_least = s.gpu_fill->least;
    }
    if (s.generator.process.started) {
        double total = s.generator.process.wall_seconds;
        row.compile_s = total - s.search_seconds.value_or(0.0);
    }
    row.ptxas_status = to_string(s.ptxas.status);
    row.ptxas_detail = s.ptxas.detail;
    row.validation = s.validation;
    row.validation_detail = s.validation_detail;
    if (!s.generator.ok()) {
        row.status = s.generator.failure == GeneratorFailure::TimedOut ? "timeout" : "failed";
        row.error = s.generator.message;
    } else if (s.ptxas.status == PtxasStatus::Failed) {
        row.status = "failed";
        row.error = s.ptxas.detail;
    }
    for (const auto &k : s.ptxas.kernels) {
        db::KernelRow kr;
        kr.name = k.name;
        kr.registers = k.registers;
        kr.spill_store_bytes = k.spill_store_bytes;
        kr.spill_load_bytes = k.spill_load_bytes;
        kr.stack_frame_bytes = k.stack_frame_bytes;
        kr.static_shared_bytes = k.static_shared_bytes;
        kr.barriers = k.barriers;
        row.kernels.push_back(kr);
    }
    return row;
}

db::PipelineIdentity pipeline_identity(const OneShotOptions &opt, const std::string &target) {
    db::PipelineIdentity pid;
    pid.generator_path = fs::weakly_canonical(opt.generator_path).string();
    pid.generator_hash = hash_file(opt.generator_path);
    pid.generator_name = opt.generator_name;
    pid.params = canonical_params(opt.generator_params);
    pid.target = target;
    pid.gpu = opt.gpu.name;
    return pid;
}

std::vector<std::string> copy_sample_files(const OneShotSample &sample, const std::string &name,
                                           const std::string &output_dir) {
    std::vector<std::string> files;
    for (const auto &entry : fs::directory_iterator(sample.dir)) {
        if (!entry.is_regular_file()) continue;
        const std::string fname = entry.path().filename().string();
        if (fname.rfind(name + ".", 0) != 0) continue;
        std::error_code ec;
        fs::copy_file(entry.path(), output_dir + "/" + fname, fs::copy_options::overwrite_existing, ec);
        if (ec) throw UserError("cannot write '" + output_dir + "/" + fname + "': " + ec.message());
        files.push_back(output_dir + "/" + fname);
    }
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace gpusched
