#include "tuner/modes/fuzz_runner.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "db/database.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/generator_run.h"
#include "tuner/measure/validation/pocl_validation.h"
#include "tuner/modes/oneshot.h"
#include "tuner/report_stamp.h"

namespace gpusched {
namespace fs = std::filesystem;

const char *to_string(FuzzOutcome o) {
    switch (o) {
    case FuzzOutcome::Passed:
        return "passed";
    case FuzzOutcome::SearchFailed:
        return "search or codegen failed";
    case FuzzOutcome::LaunchRefused:
        return "launch over the GPU's limits (search bug)";
    case FuzzOutcome::PtxasFailed:
        return "ptxas rejected the PTX";
    case FuzzOutcome::ValidationFailed:
        return "output changed on POCL";
    case FuzzOutcome::NotValidated:
        return "not validated";
    }
    return "?";
}

namespace {

// The plugin's words when core/launch_check.h refuses a schedule.
bool is_launch_refusal(const std::string &message) {
    return message.find("launch check failed") != std::string::npos;
}

// The worst thing that happened to any sample of the run.
FuzzCase classify(uint64_t seed, const OneShotResult &r) {
    FuzzCase c;
    c.seed = seed;
    c.samples = static_cast<int>(r.samples.size());
    for (const auto &s : r.samples) {
        if (!s.generator.ok()) {
            c.outcome = is_launch_refusal(s.generator.message) ? FuzzOutcome::LaunchRefused
                                                               : FuzzOutcome::SearchFailed;
            c.detail = "sample " + std::to_string(s.index) + ": " + s.generator.message;
            return c;
        }
    }
    for (const auto &s : r.samples) {
        if (s.ptxas.status == PtxasStatus::Failed) {
            c.outcome = FuzzOutcome::PtxasFailed;
            c.detail = "sample " + std::to_string(s.index) + ": " + s.ptxas.detail;
            return c;
        }
    }
    for (const auto &s : r.samples) {
        if (s.validation == "passed") {
            ++c.validated;
            if (s.validation_detail.rfind(kAgreesWithDeviceReference, 0) == 0) ++c.device_math;
        }
        if (s.validation == "failed") {
            c.outcome = FuzzOutcome::ValidationFailed;
            c.detail = "sample " + std::to_string(s.index) + ": " + s.validation_detail;
            return c;
        }
    }
    for (const auto &s : r.samples) {
        if (s.validation == "not run") {
            c.outcome = FuzzOutcome::NotValidated;
            c.detail = "sample " + std::to_string(s.index) + ": " + s.validation_detail;
            return c;
        }
    }
    return c;
}

// What the pipeline has that the search must handle, read from the
// schedules the search emitted (every Func of the pipeline appears in one):
// how many outputs, and whether some Func has update stages (a reduction).
// Read from the seed's files, so a seed whose every sample failed
// validation (One Shot then throws) is described too.
void describe_pipeline(const std::string &seed_dir, const std::string &generator_name, FuzzCase &c) {
    static const std::regex output_func(R"(::Halide::Func (output_[0-9]+) = pipeline\.get_func)");
    std::error_code ec;
    int samples = 0;
    for (const auto &sample : fs::directory_iterator(seed_dir + "/samples", ec)) {
        ++samples;
        std::ifstream in(sample.path() / (generator_name + ".schedule.h"));
        if (!in || c.outputs) continue;
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::set<std::string> outputs;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), output_func);
             it != std::sregex_iterator(); ++it)
            outputs.insert((*it)[1].str());
        c.outputs = static_cast<int>(outputs.size());
        c.has_reduction = text.find(".update(") != std::string::npos;
    }
    if (c.samples == 0) c.samples = samples;
}

// The generator and its params, tried once on the first seed's pipeline
// (check_generator_params) before any seed runs: an unknown param would
// otherwise fail every seed as a search failure, the fuzz's findings,
// instead of being the person's typo.
void check_params(const FuzzOptions &opt) {
    GeneratorOutcome pre = preflight_generator(opt.generator_path, opt.generator_name, opt.timeout);
    if (!pre.ok()) throw UserError(pre.message);
    std::map<std::string, std::string> params = opt.params;
    params["seed"] = std::to_string(opt.first_seed);
    GeneratorOutcome g =
        check_generator_params(opt.generator_path, opt.generator_name, params, "host",
                               locate_gpusched_plugin(), opt.work_dir + "/params-check", opt.timeout);
    if (!g.ok()) throw UserError("params: " + g.message);
}

} // namespace

std::vector<FuzzCase> run_fuzz(const FuzzOptions &opt, const FuzzProgress &progress) {
    if (opt.last_seed < opt.first_seed) throw UserError("the seed range is empty");
    if (opt.jobs < 1) throw UserError("--jobs must be at least 1");
    const int total = static_cast<int>(opt.last_seed - opt.first_seed + 1);
    // Create the database (and its schema) before the seeds run in
    // parallel: two One Shots creating a new file at once both tried to
    // create its tables.
    (void)db::Database::open(opt.db_path);
    check_params(opt);
    std::vector<FuzzCase> cases(static_cast<std::size_t>(total));
    // Seeds run --jobs at a time, each One Shot with one process at a time:
    // a seed's validation is sequential, so parallel samples within a seed
    // left cores idle for half of it.
    std::atomic<int> next{0};
    int done = 0;
    std::mutex progress_mutex;
    auto run_seed = [&](uint64_t seed) {
        OneShotOptions o;
        o.generator_path = opt.generator_path;
        o.generator_name = opt.generator_name;
        o.generator_params = opt.params;
        o.generator_params["seed"] = std::to_string(seed);
        o.gpu = opt.gpu;
        o.schedule_source = "gpusched";
        o.output_dir = opt.work_dir + "/seed" + std::to_string(seed);
        o.db_path = opt.db_path;
        o.samples = opt.samples;
        o.search = opt.search;
        o.search.seed = seed * 1000; // distinct search seeds per pipeline
        o.jobs = 1;
        o.validate = true;
        o.validate_every_sample = true;
        o.timeout = opt.timeout;
        o.gpusched_version = opt.gpusched_version;
        FuzzCase c;
        try {
            c = classify(seed, run_oneshot(o));
        } catch (const UserError &e) {
            // Every sample failed: the message says how.
            c.seed = seed;
            const std::string what = e.what();
            c.outcome = what.find("changed the pipeline's output") != std::string::npos
                            ? FuzzOutcome::ValidationFailed
                        : what.find("ptxas rejected") != std::string::npos ? FuzzOutcome::PtxasFailed
                        : is_launch_refusal(what)                          ? FuzzOutcome::LaunchRefused
                                                                           : FuzzOutcome::SearchFailed;
            c.detail = what;
        } catch (const std::exception &e) {
            c.seed = seed;
            c.outcome = FuzzOutcome::SearchFailed;
            c.detail = e.what();
        }
        describe_pipeline(o.output_dir, opt.generator_name, c);
        return c;
    };
    auto worker = [&] {
        for (int i = next++; i < total; i = next++) {
            const uint64_t seed = opt.first_seed + static_cast<uint64_t>(i);
            const auto t0 = std::chrono::steady_clock::now();
            FuzzCase c = run_seed(seed);
            c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::lock_guard<std::mutex> lock(progress_mutex);
            cases[static_cast<std::size_t>(i)] = c;
            ++done;
            if (progress) progress(c, done, total);
        }
    };
    std::vector<std::thread> threads;
    for (int j = 0; j < std::min(opt.jobs, total); ++j)
        threads.emplace_back(worker);
    for (auto &t : threads)
        t.join();
    return cases;
}

std::string fuzz_report_markdown(const FuzzOptions &opt, const std::vector<FuzzCase> &cases,
                                 const std::string &command_line) {
    std::map<FuzzOutcome, int> counts;
    int samples = 0, validated = 0, device_math = 0;
    double seconds = 0;
    for (const auto &c : cases) {
        counts[c.outcome]++;
        samples += c.samples;
        validated += c.validated;
        device_math += c.device_math;
        seconds += c.seconds;
    }
    std::ostringstream md;
    md << "# Search fuzzing on random pipelines\n\nProduced by:\n\n```sh\n" << command_line << "\n```\n\n";
    md << "on " << machine_description() << ", " << utc_timestamp() << ", gpusched " << opt.gpusched_version
       << ", GPU profile " << opt.gpu.name << ". Seeds " << opt.first_seed << ".." << opt.last_seed
       << " of `random_pipeline`";
    for (const auto &[k, v] : opt.params)
        md << " " << k << "=" << v;
    md << "; per seed, One Shot with " << opt.samples << " samples (a beam search " << opt.search.beam_size
       << "x" << opt.search.passes
       << " and greedy samples); every sample compiled for CUDA, its PTX assembled by ptxas -arch="
       << opt.gpu.ptxas_arch() << ", and its OpenCL build run on POCL against a CPU build.\n\n";
    md << "| outcome | seeds |\n|---|---:|\n";
    for (auto o : {FuzzOutcome::Passed, FuzzOutcome::SearchFailed, FuzzOutcome::LaunchRefused,
                   FuzzOutcome::PtxasFailed, FuzzOutcome::ValidationFailed, FuzzOutcome::NotValidated})
        md << "| " << to_string(o) << " | " << counts[o] << " |\n";
    const uint64_t range = opt.last_seed - opt.first_seed + 1;
    if (cases.size() < range)
        md << "\n**In progress or stopped: " << cases.size() << " of " << range << " seeds finished.**\n";
    md << "\n"
       << cases.size() << " pipelines, " << samples << " schedules, " << validated << " validated on POCL";
    if (device_math > 0)
        md << " (" << device_math
           << " of them against the device's own build of the pipeline only: the CPU's math library differs)";
    md << ", " << static_cast<long>(seconds) << " s of seed time in all (seeds ran " << opt.jobs
       << " at a time).\n";
    int several = 0, reductions = 0, both = 0, unknown = 0;
    for (const auto &c : cases) {
        if (c.outputs == 0) {
            ++unknown;
            continue;
        }
        several += c.outputs > 1;
        reductions += c.has_reduction;
        both += c.outputs > 1 && c.has_reduction;
    }
    md << "\nPipelines with several outputs: " << several
       << "; with a reduction (a Func with update stages): " << reductions
       << "; with both (the case of Halide issue 8000): " << both;
    if (unknown) md << "; not known (no schedule emitted): " << unknown;
    md << ".\n";
    bool any = false;
    std::vector<FuzzCase> by_seed = cases;
    std::sort(by_seed.begin(), by_seed.end(),
              [](const FuzzCase &a, const FuzzCase &b) { return a.seed < b.seed; });
    for (const auto &c : by_seed) {
        if (c.outcome == FuzzOutcome::Passed) continue;
        if (!any) md << "\n## Failures\n\n| seed | outcome | detail |\n|---:|---|---|\n";
        any = true;
        std::string d = c.detail;
        for (char &ch : d)
            if (ch == '|' || ch == '\n') ch = ' ';
        md << "| " << c.seed << " | " << to_string(c.outcome) << " | " << d << " |\n";
    }
    return md.str();
}

} // namespace gpusched
