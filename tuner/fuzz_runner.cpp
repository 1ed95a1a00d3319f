#include "tuner/fuzz_runner.h"

#include <map>
#include <sstream>

#include "tuner/oneshot.h"
#include "tuner/report_stamp.h"

namespace gpusched {

const char *to_string(FuzzOutcome o) {
    switch (o) {
    case FuzzOutcome::Passed: return "passed";
    case FuzzOutcome::SearchFailed: return "search or codegen failed";
    case FuzzOutcome::PtxasFailed: return "ptxas rejected the PTX";
    case FuzzOutcome::ValidationFailed: return "output changed on POCL";
    case FuzzOutcome::NotValidated: return "not validated";
    }
    return "?";
}

namespace {

// The worst thing that happened to any sample of the run.
FuzzCase classify(uint64_t seed, const OneShotResult &r) {
    FuzzCase c;
    c.seed = seed;
    c.samples = static_cast<int>(r.samples.size());
    for (const auto &s : r.samples) {
        if (!s.generator.ok()) {
            c.outcome = FuzzOutcome::SearchFailed;
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
        if (s.validation == "passed") ++c.validated;
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

} // namespace

std::vector<FuzzCase> run_fuzz(const FuzzOptions &opt, const FuzzProgress &progress) {
    if (opt.last_seed < opt.first_seed) throw UserError("the seed range is empty");
    std::vector<FuzzCase> cases;
    const int total = static_cast<int>(opt.last_seed - opt.first_seed + 1);
    for (uint64_t seed = opt.first_seed; seed <= opt.last_seed; ++seed) {
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
        o.beam_size = opt.beam_size;
        o.passes = opt.passes;
        o.seed = seed * 1000;  // distinct search seeds per pipeline
        o.jobs = opt.jobs;
        o.validate = true;
        o.validate_every_sample = true;
        o.timeout = opt.timeout;
        o.gpusched_version = opt.gpusched_version;
        const auto t0 = std::chrono::steady_clock::now();
        FuzzCase c;
        try {
            c = classify(seed, run_oneshot(o));
        } catch (const UserError &e) {
            // Every sample failed: the message says how.
            c.seed = seed;
            const std::string what = e.what();
            c.outcome = what.find("changed the pipeline's output") != std::string::npos ? FuzzOutcome::ValidationFailed
                        : what.find("ptxas rejected") != std::string::npos             ? FuzzOutcome::PtxasFailed
                                                                                        : FuzzOutcome::SearchFailed;
            c.detail = what;
        } catch (const std::exception &e) {
            c.seed = seed;
            c.outcome = FuzzOutcome::SearchFailed;
            c.detail = e.what();
        }
        c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        cases.push_back(c);
        if (progress) progress(cases.back(), static_cast<int>(cases.size()), total);
    }
    return cases;
}

std::string fuzz_report_markdown(const FuzzOptions &opt, const std::vector<FuzzCase> &cases,
                                 const std::string &command_line) {
    std::map<FuzzOutcome, int> counts;
    int samples = 0, validated = 0;
    double seconds = 0;
    for (const auto &c : cases) {
        counts[c.outcome]++;
        samples += c.samples;
        validated += c.validated;
        seconds += c.seconds;
    }
    std::ostringstream md;
    md << "# Search fuzzing on random pipelines\n\nProduced by:\n\n```sh\n" << command_line << "\n```\n\n";
    md << "on " << machine_description() << ", " << utc_timestamp() << ", gpusched "
       << opt.gpusched_version << ", GPU profile " << opt.gpu.name << ". Seeds " << opt.first_seed << ".."
       << opt.last_seed << " of `random_pipeline`";
    for (const auto &[k, v] : opt.params) md << " " << k << "=" << v;
    md << "; per seed, One Shot with " << opt.samples << " samples (a beam search " << opt.beam_size << "x"
       << opt.passes << " and greedy samples); every sample compiled for CUDA, its PTX assembled by ptxas -arch="
       << opt.gpu.ptxas_arch() << ", and its OpenCL build run on POCL against a CPU build.\n\n";
    md << "| outcome | seeds |\n|---|---:|\n";
    for (auto o : {FuzzOutcome::Passed, FuzzOutcome::SearchFailed, FuzzOutcome::PtxasFailed,
                   FuzzOutcome::ValidationFailed, FuzzOutcome::NotValidated})
        md << "| " << to_string(o) << " | " << counts[o] << " |\n";
    md << "\n" << cases.size() << " pipelines, " << samples << " schedules, " << validated
       << " validated on POCL, " << static_cast<long>(seconds) << " s in all.\n";
    bool any = false;
    for (const auto &c : cases) {
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
