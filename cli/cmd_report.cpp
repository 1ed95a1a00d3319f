// `gpusched report`: the HTML report of a sample database, for people who
// would rather look than read (tuner/report/html_report.h does the work).

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/gpu_choice.h"
#include "cli/value_checks.h"
#include "tuner/modes/learning.h"
#include "tuner/report/html_report.h"
#include "tuner/user_paths.h"

namespace gpusched::cli {
namespace {

struct ReportArgs {
    std::string db_path, output, pipeline, since;
    std::optional<int64_t> run_id;
    bool learning = false;
    std::string gpu = "h100", device;
    int jobs = 0;
};

} // namespace

Action add_report_command(CLI::App &app, const GlobalOptions &global) {
    auto args = std::make_shared<ReportArgs>();
    CLI::App *cmd = app.add_subcommand(
        "report",
        "Write one self-contained HTML file (plots, tables, the winning schedules) from the sample database");
    cmd->add_option("--db", args->db_path,
                    "Sample database (default: $XDG_DATA_HOME/gpusched/samples.sqlite)");
    cmd->add_option("--run", args->run_id, "Only this run")->check(whole_number_at_least(1));
    cmd->add_option("--pipeline", args->pipeline, "Only runs of this generator name");
    cmd->add_option("--since", args->since,
                    "Only runs started at or after this UTC date: YYYY-MM-DD[THH:MM[:SS[.mmm]]]");
    cmd->add_option("-o,--output", args->output, "The HTML file to write")->required();
    cmd->add_flag("--learning", args->learning,
                  "Also draw whether retraining learns (as `gpusched learning`: trains hold-one-out models, "
                  "a minute for 16 pipelines)");
    cmd->add_option("--gpu", args->gpu, "With --learning: the GPU profile the samples were measured on")
        ->capture_default_str();
    cmd->add_option("--device", args->device,
                    "With --learning: the measuring device, if the database has several");
    cmd->add_option("-j,--jobs", args->jobs, "With --learning: models trained at once (0: every core)")
        ->check(CLI::Range(0, 4096));
    return [args, &global]() {
        report::ReportFilter filter;
        filter.run_id = args->run_id;
        filter.pipeline = args->pipeline;
        filter.since = args->since;
        check_output_file(args->output, "--output");
        const std::string path = args->db_path.empty() ? db::default_database_path() : args->db_path;
        // Checked whether or not --learning asks for it: a wrong value is never silently unused.
        const GpuProfile gpu = resolve_gpu(args->gpu);
        std::optional<LearningReport> learning;
        if (args->learning) {
            LearningOptions lo;
            lo.db_paths = {path};
            lo.device = args->device;
            lo.gpu = gpu;
            lo.jobs = args->jobs;
            learning = evaluate_learning(lo);
        }
        const report::ReportWritten w = report::write_report(
            path, filter, args->output, "gpusched " + version_string(), std::move(learning));
        if (global.json) {
            std::cout
                << nlohmann::json{{"output", args->output}, {"runs", w.runs}, {"sections", w.groups}}.dump(2)
                << "\n";
        } else if (!global.quiet) {
            std::cout << "wrote " << args->output << ": " << w.runs << " runs, " << w.groups
                      << " pipeline x device sections\n";
        }
        return kExitOk;
    };
}

} // namespace gpusched::cli
