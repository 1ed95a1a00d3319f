// `gpusched bench`: the application suite through every schedule source,
// written as one markdown table (tuner/modes/suite_runner.h).

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/gpu_choice.h"
#include "cli/value_checks.h"
#include "db/database.h"
#include "tuner/modes/oneshot.h"
#include "tuner/modes/suite_runner.h"
#include "tuner/user_paths.h"

namespace gpusched::cli {

namespace {
struct BenchArgs {
    std::string manifest, build_dir = "build", output, work_dir = "bench-out", db_path, gpu = "h100";
    std::vector<std::string> apps;
    std::vector<std::string> sources{"gpusched", "li2018", "naive", "manual"};
    int samples = 16, jobs = 2, timeout_s = 900;
    bool validate = false;
};

} // namespace

Action add_bench_command(CLI::App &app, const GlobalOptions &global, int argc, char **argv) {
    auto args = std::make_shared<BenchArgs>();
    CLI::App *cmd =
        app.add_subcommand("bench", "Run the benchmark suite through every schedule source; write a table");
    cmd->add_option("--suite", args->manifest,
                    "Suite manifest (default: benchmarks/suite.json of this source tree)");
    cmd->add_option("--build-dir", args->build_dir, "Build directory holding the app generators")
        ->capture_default_str();
    cmd->add_option("--apps", args->apps, "Only these apps (comma separated)")->delimiter(',');
    cmd->add_option("--sources", args->sources, "Schedule sources (comma separated)")
        ->delimiter(',')
        ->capture_default_str();
    cmd->add_option("--gpu", args->gpu, "GPU profile or auto")->capture_default_str();
    cmd->add_option("--samples", args->samples, "One Shot samples for gpusched rows")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("-j,--jobs", args->jobs, "Parallel generator processes")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    cmd->add_option("--timeout", args->timeout_s, "Seconds per generator run")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_flag("--validate", args->validate, "Validate each chosen schedule on POCL (slow on big apps)");
    cmd->add_option("--work-dir", args->work_dir, "Where the runs' files go")->capture_default_str();
    cmd->add_option("--db", args->db_path, "Sample database (default: WORK_DIR/samples.sqlite)");
    cmd->add_option("-o,--output", args->output, "Markdown report to write (default: stdout)");
    std::string command_line = command_line_text(argc, argv);
    return [args, &global, command_line]() {
        SuiteOptions o;
        o.manifest = args->manifest.empty() ? std::string(GPUSCHED_SOURCE_DIR) + "/benchmarks/suite.json"
                                            : args->manifest;
        o.build_dir = args->build_dir;
        o.apps = args->apps;
        o.sources = args->sources;
        o.work_dir = args->work_dir;
        o.db_path = args->db_path.empty() ? args->work_dir + "/samples.sqlite" : args->db_path;
        o.gpu = resolve_gpu(args->gpu);
        o.samples = args->samples;
        o.jobs = args->jobs;
        o.validate = args->validate;
        o.timeout = std::chrono::seconds(args->timeout_s);
        o.gpusched_version = version_string();
        // What the person named, before any generator runs.
        check_input_file(o.manifest, "--suite");
        check_output_folder(o.work_dir, "--work-dir");
        if (!args->output.empty()) check_output_file(args->output, "--output");
        db::Database::open(o.db_path);
        auto cells = run_suite(o, [](const SuiteCell &c, int done, int total) {
            if (c.ok)
                spdlog::info("[{}/{}] {} with {}: {:.1f} s", done, total, c.app, c.source, c.wall_seconds);
            else
                spdlog::warn("[{}/{}] {} with {} failed: {}", done, total, c.app, c.source, c.error);
        });
        const std::string md = suite_report_markdown(o, cells, command_line);
        if (args->output.empty()) {
            std::cout << md;
        } else {
            std::error_code ec;
            std::filesystem::path out(args->output);
            if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path(), ec);
            std::ofstream f(args->output);
            f << md;
            if (!f) throw UserError("cannot write '" + args->output + "'");
            spdlog::info("wrote {}", args->output);
        }
        (void)global;
        int failed = 0;
        for (const auto &c : cells)
            failed += c.ok ? 0 : 1;
        return failed == 0 ? kExitOk : kExitError;
    };
}

} // namespace gpusched::cli
