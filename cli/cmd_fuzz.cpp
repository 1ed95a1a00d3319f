// `gpusched fuzz`: the search on seeded random pipelines, every schedule
// compiled, checked by ptxas and validated on POCL (tuner/modes/fuzz_runner.h).

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/gpu_choice.h"
#include "cli/search_args.h"
#include "cli/value_checks.h"
#include "tuner/modes/fuzz_runner.h"
#include "tuner/modes/oneshot.h"
#include "tuner/user_paths.h"

namespace gpusched::cli {

namespace {
struct FuzzArgs {
    std::string generator, build_dir = "build", work_dir = "fuzz-out", db_path, output, gpu = "h100",
                           seeds = "0:9";
    std::vector<std::string> params;
    SearchSettings search; // --beam-size and --passes; each pipeline's seed is its own
    int samples = 2, jobs = 2, timeout_s = 600;
};

std::pair<uint64_t, uint64_t> parse_seed_range(const std::string &s) {
    auto whole = [&](const std::string &part) {
        uint64_t v = 0;
        const char *end = part.data() + part.size();
        auto [ptr, ec] = std::from_chars(part.data(), end, v);
        if (part.empty() || ec != std::errc() || ptr != end)
            throw UserError("--seeds must be N or FIRST:LAST (whole numbers from 0), not '" + s + "'");
        return v;
    };
    const auto colon = s.find(':');
    if (colon == std::string::npos) {
        const uint64_t v = whole(s);
        return {v, v};
    }
    const uint64_t first = whole(s.substr(0, colon)), last = whole(s.substr(colon + 1));
    if (first > last) throw UserError("--seeds '" + s + "' is empty: FIRST comes after LAST");
    return {first, last};
}
} // namespace

Action add_fuzz_command(CLI::App &app, const GlobalOptions &global, int argc, char **argv) {
    auto args = std::make_shared<FuzzArgs>();
    CLI::App *cmd = app.add_subcommand(
        "fuzz", "Search random pipelines; compile, ptxas-check and validate every schedule");
    cmd->add_option("--seeds", args->seeds, "Pipeline seeds, N or FIRST:LAST")->capture_default_str();
    cmd->add_option("--generator", args->generator,
                    "Random pipeline generator (default: "
                    "BUILD_DIR/benchmarks/random_pipeline/random_pipeline.generator)");
    cmd->add_option("--build-dir", args->build_dir, "Build directory")->capture_default_str();
    cmd->add_option("params", args->params, "Generator params, key=value (default size=small num_outputs=0)");
    cmd->add_option("--samples", args->samples, "Schedules per pipeline: 1 beam search + greedy")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    add_beam_options(cmd, args->search);
    cmd->add_option("--gpu", args->gpu, "GPU profile")->capture_default_str();
    cmd->add_option("-j,--jobs", args->jobs, "Seeds run at a time (one process each)")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    cmd->add_option("--timeout", args->timeout_s, "Seconds per step")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("--work-dir", args->work_dir, "Where the runs' files go")->capture_default_str();
    cmd->add_option("--db", args->db_path, "Sample database (default: WORK_DIR/samples.sqlite)");
    cmd->add_option("-o,--output", args->output, "Markdown summary to write (default: stdout)");
    std::string command_line = command_line_text(argc, argv);
    return [args, &global, command_line]() {
        FuzzOptions o;
        o.generator_path = args->generator.empty()
                               ? args->build_dir + "/benchmarks/random_pipeline/random_pipeline.generator"
                               : args->generator;
        for (const auto &[k, v] : parse_generator_params(args->params))
            o.params[k] = v;
        auto [first, last] = parse_seed_range(args->seeds);
        o.first_seed = first;
        o.last_seed = last;
        o.samples = args->samples;
        o.search = args->search;
        o.jobs = args->jobs;
        o.gpu = resolve_gpu(args->gpu);
        o.work_dir = args->work_dir;
        o.db_path = args->db_path.empty() ? args->work_dir + "/samples.sqlite" : args->db_path;
        o.timeout = std::chrono::seconds(args->timeout_s);
        o.gpusched_version = version_string();
        // What the person named, before any seed runs (run_fuzz opens the database first).
        check_output_folder(o.work_dir, "--work-dir");
        if (!args->output.empty()) check_output_file(args->output, "--output");
        // The summary is rewritten after every seed, so a long run that is
        // stopped still leaves the seeds it finished.
        auto write_summary = [&](const std::vector<FuzzCase> &cases) {
            const std::string md = fuzz_report_markdown(o, cases, command_line);
            if (args->output.empty()) return;
            const std::string tmp = args->output + ".tmp";
            {
                std::ofstream f(tmp);
                f << md;
                if (!f) throw UserError("cannot write '" + tmp + "'");
            }
            std::filesystem::rename(tmp, args->output);
        };
        std::vector<FuzzCase> finished;
        auto cases = run_fuzz(o, [&](const FuzzCase &c, int done, int total) {
            if (c.outcome == FuzzOutcome::Passed)
                spdlog::info("[{}/{}] seed {}: passed ({} schedules validated, {:.0f} s)", done, total,
                             c.seed, c.validated, c.seconds);
            else
                spdlog::warn("[{}/{}] seed {}: {}: {}", done, total, c.seed, to_string(c.outcome), c.detail);
            finished.push_back(c);
            if (done < total) write_summary(finished);
        });
        if (args->output.empty())
            std::cout << fuzz_report_markdown(o, cases, command_line);
        else
            write_summary(cases);
        (void)global;
        for (const auto &c : cases)
            if (c.outcome != FuzzOutcome::Passed) return kExitError;
        return kExitOk;
    };
}

} // namespace gpusched::cli
