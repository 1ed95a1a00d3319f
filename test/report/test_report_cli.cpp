// `gpusched report` through the real binary, on the database recorded by real
// tuning runs on POCL (recorded_db.h): every section and plot is there with
// as many points as the database has measured samples, two devices are never
// one series, the filters select runs, and bad input is one clear error.

#include <filesystem>
#include <map>

#include "test/catch2_compat.h"

#include "db/database.h"
#include "recorded_db.h"
#include "report_page.h"
#include "test_support.h"
#include "tuner/report/html_text.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

const test::RecordedDb &recorded() {
    const test::RecordedDb &r = test::recorded_db();
    INFO(r.error);
    REQUIRE(r.error.empty());
    return r;
}

std::string pocl_device(const test::RecordedDb &r) {
    db::Database database = db::Database::open_existing(r.db_path);
    auto q = database.prepare("SELECT device FROM samples WHERE run_id = ?1 AND device IS NOT NULL LIMIT 1");
    q.bind(1, r.autotune_run);
    REQUIRE(q.step());
    return q.column_text(0);
}

// Measured samples (the report's definition, sample_store's too) of a run,
// per batch.
std::map<int, int> measured_per_batch(const test::RecordedDb &r, int64_t run) {
    db::Database database = db::Database::open_existing(r.db_path);
    auto q = database.prepare(
        "SELECT batch, count(*) FROM samples WHERE run_id = ?1 AND status = 'ok' AND "
        "benchmark = 'measured' AND runtime_median_ms IS NOT NULL AND validation != 'failed' "
        "GROUP BY batch");
    q.bind(1, run);
    std::map<int, int> out;
    while (q.step())
        out[static_cast<int>(q.column_int(0))] = static_cast<int>(q.column_int(1));
    return out;
}

int total(const std::map<int, int> &m) {
    int n = 0;
    for (const auto &[k, v] : m)
        n += v;
    return n;
}

double scalar(const test::RecordedDb &r, const std::string &sql) {
    db::Database database = db::Database::open_existing(r.db_path);
    auto q = database.prepare(sql);
    REQUIRE(q.step());
    REQUIRE_FALSE(q.is_null(0));
    return q.column_double(0);
}

std::string text_of(const test::RecordedDb &r, const std::string &sql) {
    db::Database database = db::Database::open_existing(r.db_path);
    auto q = database.prepare(sql);
    REQUIRE(q.step());
    return q.column_text(0);
}

std::string render(const test::RecordedDb &r, const test::TempDir &dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"report", "--db", r.db_path, "-o", dir / "report.html"};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult p = test::run_gpusched(args);
    INFO("stdout: " << p.out << "\nstderr: " << p.err);
    REQUIRE(p.ok());
    return test::read_file(dir / "report.html");
}

std::vector<std::string> group_devices(const std::string &html) {
    std::vector<std::string> out;
    for (const auto &s : test::elements(html, "<section class=\"card group\"", "</section>"))
        out.push_back(test::attribute(s, "data-pipeline") + " @ " + test::attribute(s, "data-device"));
    return out;
}

} // namespace

TEST_CASE("the recorded database is made by real tuning runs on POCL", "[.][fixture]") {
    const test::RecordedDb r = test::remake_recorded_db();
    INFO(r.error);
    REQUIRE(r.error.empty());
    CHECK(total(measured_per_batch(r, r.autotune_run)) >= 2);
    CHECK(measured_per_batch(r, r.wrong_run).empty());
    CHECK(pocl_device(r).rfind("pocl-", 0) == 0);
}

TEST_CASE(
    "the report shows each pipeline and device with its plots, correlations, failures and winning schedule",
    "[report]") {
    const auto &r = recorded();
    test::TempDir dir;
    const std::string html = render(r, dir);
    const std::string pocl = report::escape_html(pocl_device(r));

    // One section per pipeline and device.
    CHECK(group_devices(html) ==
          std::vector<std::string>{"tiny_stencil @ " + pocl,
                                   "tiny_stencil @ " + report::escape_html(test::kRelabeledDevice),
                                   "wrong_on_gpu @ " + pocl});
    const std::string g = test::group_section(html, "tiny_stencil", pocl);
    REQUIRE_FALSE(g.empty());
    const auto at = measured_per_batch(r, r.autotune_run), t5 = measured_per_batch(r, r.top5_run);
    CHECK(test::attribute(g, "data-measured") == std::to_string(total(at) + total(t5)));

    // Distribution of sample times: every measured sample of the group once.
    const auto hist = test::plots(g, "time-histogram");
    REQUIRE(hist.size() == 1);
    int binned = 0;
    for (const auto &b : test::elements(hist[0], "<rect class=\"bar\"", "</rect>"))
        binned += std::stoi(test::attribute(b, "data-count"));
    CHECK(binned == total(at) + total(t5));
    CHECK(hist[0].find(">median time (ms)</text>") != std::string::npos);

    // Tuning curves, one per run: each measured sample and the running best,
    // with the Autotune run's batch boundary.
    const auto curves = test::plots(g, "tuning-curve");
    REQUIRE(curves.size() == 2);
    CHECK(test::attribute(curves[0], "id") == "g1-r" + std::to_string(r.autotune_run) + "-curve");
    CHECK(test::count(curves[0], "class=\"point\"") == static_cast<std::size_t>(total(at)));
    CHECK(test::attribute(curves[0], "data-points") == std::to_string(2 * total(at)));
    CHECK(test::count(curves[0], "class=\"vmarker\"") == 1);
    CHECK(curves[0].find(">batch 1</text>") != std::string::npos);
    CHECK(test::count(curves[1], "class=\"point\"") == static_cast<std::size_t>(total(t5)));
    CHECK(test::count(curves[1], "class=\"vmarker\"") == 0);

    // The paper's figure 8: predicted against measured, one series per batch.
    const auto pvm = test::plots(g, "predicted-vs-measured");
    REQUIRE(pvm.size() == 2);
    const auto series = test::elements(pvm[0], "<g class=\"series\"", "</g>");
    REQUIRE(series.size() == at.size());
    for (const auto &s : series) {
        const int batch = std::stoi(test::attribute(s, "data-label").substr(6)); // "batch N"
        CHECK(test::attribute(s, "data-points") == std::to_string(at.at(batch)));
        CHECK(test::count(s, "class=\"point\"") == static_cast<std::size_t>(at.at(batch)));
    }
    CHECK(pvm[0].find(">predicted cost (model units)") != std::string::npos);

    // The model's rank correlation per batch: the values Autotune stored.
    const auto tables = test::elements(g, "<table class=\"batches\"", "</table>");
    REQUIRE(tables.size() == 1);
    CHECK(test::count(tables[0], "<tr><td class=\"num\">") == 2);
    const double spearman1 = scalar(r, "SELECT spearman FROM autotune_batches WHERE batch = 1 AND run_id = " +
                                           std::to_string(r.autotune_run));
    CHECK(tables[0].find("<td class=\"num\">" + report::format_number(spearman1) + "</td>") !=
          std::string::npos);
    CHECK(test::plots(g, "rank-correlation").size() == 1);

    // Nothing failed or spilled here; the winning schedule is the fastest
    // measured sample's source, escaped.
    CHECK(g.find("problems-none") != std::string::npos);
    const std::string source = text_of(
        r, "SELECT schedule_source FROM samples s JOIN runs r ON r.id = s.run_id JOIN pipelines p ON p.id = "
           "r.pipeline_id WHERE p.generator_name = 'tiny_stencil' AND r.autoscheduler = 'gpusched' AND "
           "s.device = '" +
               pocl_device(r) + "' AND s.benchmark = 'measured' ORDER BY s.runtime_median_ms LIMIT 1");
    REQUIRE(source.find("apply_schedule_tiny_stencil") != std::string::npos);
    CHECK(g.find("<pre class=\"schedule\"><code>" + report::escape_html(source) + "</code></pre>") !=
          std::string::npos);
    // With the GPU fill its search record gave it (a stencil over the image: every thread of the GPU).
    const double fill = scalar(
        r, "SELECT s.gpu_fill FROM samples s JOIN runs r ON r.id = s.run_id JOIN pipelines p ON p.id = "
           "r.pipeline_id WHERE p.generator_name = 'tiny_stencil' AND r.autoscheduler = 'gpusched' AND "
           "s.device = '" +
               pocl_device(r) + "' AND s.benchmark = 'measured' ORDER BY s.runtime_median_ms LIMIT 1");
    CHECK(g.find("GPU fill: " + report::format_number(100.0 * fill) + "% of the GPU's resident threads") !=
          std::string::npos);

    // wrong_on_gpu: both samples failed, with the harness's reason.
    const std::string w = test::group_section(html, "wrong_on_gpu", pocl);
    const auto problems = test::elements(w, "<table class=\"problems\"", "</table>");
    REQUIRE(problems.size() == 1);
    CHECK(test::count(problems[0], "<tr data-sample=") == 2);
    CHECK(test::count(problems[0], "failed: wrong output") == 2);
    CHECK(test::count(problems[0], "values differ") == 2);
    CHECK(test::plots(w, "tuning-curve").empty());
}

TEST_CASE(
    "the speedup table compares with the baselines measured on the same device and leaves the rest blank",
    "[report]") {
    const auto &r = recorded();
    test::TempDir dir;
    const std::string html = render(r, dir);
    const auto table = test::elements(html, "<table class=\"speedups\"", "</table>");
    REQUIRE(table.size() == 1);
    const auto rows = test::elements(table[0], "<tr data-group=", "</tr>");
    REQUIRE(rows.size() == 3);
    const std::string pocl = pocl_device(r);
    const double naive =
        scalar(r, "SELECT min(s.runtime_median_ms) FROM samples s JOIN runs r ON r.id = s.run_id "
                  "WHERE r.autoscheduler = 'naive' AND s.benchmark = 'measured'");
    const double li2018 =
        scalar(r, "SELECT min(s.runtime_median_ms) FROM samples s JOIN runs r ON r.id = s.run_id "
                  "WHERE r.autoscheduler = 'li2018' AND s.benchmark = 'measured'");
    const double best =
        scalar(r, "SELECT min(s.runtime_median_ms) FROM samples s JOIN runs r ON r.id = s.run_id "
                  "WHERE r.autoscheduler = 'gpusched' AND s.benchmark = 'measured' AND s.device = '" +
                      pocl + "' AND r.id IN (" + std::to_string(r.autotune_run) + ", " +
                      std::to_string(r.top5_run) + ")");
    // Row 1: tiny_stencil on POCL: naive and li2018 measured, manual not.
    CHECK(rows[0].find("<td class=\"num\">" + report::format_number(best) + "</td>") != std::string::npos);
    CHECK(rows[0].find("data-baseline=\"naive\">" + report::format_number(naive) + " &middot; ") !=
          std::string::npos);
    char speedup[32];
    std::snprintf(speedup, sizeof speedup, "%.2f&times;", naive / best);
    CHECK(rows[0].find(speedup) != std::string::npos);
    CHECK(rows[0].find("data-baseline=\"li2018\">" + report::format_number(li2018)) != std::string::npos);
    CHECK(rows[0].find("<td class=\"num blank\" data-baseline=\"manual\"></td>") != std::string::npos);
    // Row 2: the relabeled device had no baseline measured on it: all blank,
    // never POCL's baselines.
    CHECK(test::count(rows[1], "<td class=\"num blank\" data-baseline=") == 3);
}

TEST_CASE("samples of two devices are never drawn in one series", "[report]") {
    const auto &r = recorded();
    test::TempDir dir;
    const std::string html = render(r, dir);
    const std::string pocl = report::escape_html(pocl_device(r));
    const std::string other = report::escape_html(test::kRelabeledDevice);
    const std::string a = test::group_section(html, "tiny_stencil", pocl);
    const std::string b = test::group_section(html, "tiny_stencil", other);
    REQUIRE_FALSE(a.empty());
    REQUIRE_FALSE(b.empty());
    const int on_pocl =
        total(measured_per_batch(r, r.autotune_run)) + total(measured_per_batch(r, r.top5_run));
    const int on_other = total(measured_per_batch(r, r.relabeled_run));
    CHECK(test::attribute(a, "data-measured") == std::to_string(on_pocl));
    CHECK(test::attribute(b, "data-measured") == std::to_string(on_other));
    // Each device's plots hold its own points only: the histograms count
    // their own samples, the relabeled copy's curve is its own run's.
    CHECK(test::attribute(test::plots(a, "time-histogram").at(0), "data-points") == std::to_string(on_pocl));
    CHECK(test::attribute(test::plots(b, "time-histogram").at(0), "data-points") == std::to_string(on_other));
    const auto curves_b = test::plots(b, "tuning-curve");
    REQUIRE(curves_b.size() == 1);
    CHECK(test::attribute(curves_b[0], "id").find("-r" + std::to_string(r.relabeled_run) + "-") !=
          std::string::npos);
    for (const auto &svg : test::plots(a, "tuning-curve"))
        CHECK(test::attribute(svg, "id").find("-r" + std::to_string(r.relabeled_run) + "-") ==
              std::string::npos);
    CHECK(a.find(other) == std::string::npos);
}

TEST_CASE("the filters --run, --pipeline and --since select the runs the report covers", "[report]") {
    const auto &r = recorded();
    test::TempDir dir;
    CHECK(group_devices(render(r, dir, {"--run", std::to_string(r.top5_run)})).size() == 1);
    const std::string one = test::read_file(dir / "report.html");
    CHECK(test::plots(one, "tuning-curve").size() == 1);
    CHECK(one.find("<title>gpusched report: run " + std::to_string(r.top5_run) + "</title>") !=
          std::string::npos);

    const auto wrong = group_devices(render(r, dir, {"--pipeline", "wrong_on_gpu"}));
    REQUIRE(wrong.size() == 1);
    CHECK(wrong[0].rfind("wrong_on_gpu @ ", 0) == 0);

    // Every run started after 2000-01-01; combined with --pipeline.
    CHECK(group_devices(render(r, dir, {"--since", "2000-01-01", "--pipeline", "tiny_stencil"})).size() == 2);
    const std::string started =
        text_of(r, "SELECT started_at FROM runs WHERE id = " + std::to_string(r.wrong_run));
    // From the wrong_on_gpu run's start, as stored, on: only that run (the
    // relabeled copy keeps the autotune run's start).
    const auto since_wrong = group_devices(render(r, dir, {"--since", started}));
    CHECK(since_wrong == std::vector<std::string>{"wrong_on_gpu @ " + report::escape_html(pocl_device(r))});
}

TEST_CASE("an empty selection, a bad date, a missing or corrupt database and an unwritable output are one "
          "clear error",
          "[report]") {
    const auto &r = recorded();
    test::TempDir dir;
    auto fails_with = [&](std::vector<std::string> args, const std::string &message) {
        ProcessResult p = test::run_gpusched(args);
        INFO("stdout: " << p.out << "\nstderr: " << p.err);
        CHECK(p.exit_code == 1);
        CHECK(p.err.find("error: ") != std::string::npos);
        CHECK(p.err.find(message) != std::string::npos);
        CHECK(std::count(p.err.begin(), p.err.end(), '\n') == 1);
        CHECK_FALSE(fs::exists(dir / "report.html"));
    };
    const std::string out = dir / "report.html";
    fails_with({"report", "--db", r.db_path, "--since", "2999-01-01", "-o", out},
               "no run in '" + r.db_path + "' matches runs started since 2999-01-01");
    fails_with({"report", "--db", r.db_path, "--pipeline", "no_such_pipeline", "-o", out},
               "matches pipeline no_such_pipeline");
    fails_with({"report", "--db", r.db_path, "--run", "999999", "-o", out}, "matches run 999999");
    fails_with({"report", "--db", r.db_path, "--since", "yesterday", "-o", out},
               "--since 'yesterday' is not an ISO date");
    fails_with({"report", "--db", r.db_path, "--since", "2026-13-01", "-o", out}, "is not an ISO date");
    fails_with({"report", "--db", dir / "missing.sqlite", "-o", out}, "does not exist");
    test::write_file(dir / "corrupt.sqlite", "this is not a database, it is a text file of some length\n");
    fails_with({"report", "--db", dir / "corrupt.sqlite", "-o", out}, "is not a SQLite database");
    // A parent that is a regular file: unwritable even for root.
    test::write_file(dir / "file", "x");
    ProcessResult p = test::run_gpusched({"report", "--db", r.db_path, "-o", dir / "file/report.html"});
    CHECK(p.exit_code == 1);
    // Checked before the database is read (tuner/user_paths.h).
    CHECK(p.err.find("--output '" + (dir / "file/report.html") + "': its folder") != std::string::npos);
    CHECK(p.err.find("cannot be created") != std::string::npos);
}
