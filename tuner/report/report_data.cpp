#include "tuner/report/report_data.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "db/measured.h"
#include "db/rank_correlation.h"
#include "db/report_queries.h"

namespace gpusched::report {
namespace {

bool all_digits(const std::string &s, std::size_t pos, std::size_t n) {
    if (pos + n > s.size()) return false;
    for (std::size_t i = pos; i < pos + n; ++i)
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    return true;
}

// Benchmark outcomes that are failures of the sample (the others: measured,
// or "not run", which a resume finishes).
bool failed_outcome(const std::string &benchmark) {
    return benchmark == "wrong output" || benchmark == "crashed" || benchmark == "timeout" ||
           benchmark == "out of memory" || benchmark == "device error" || benchmark == "build failed";
}

std::string detail_error(const std::string &benchmark_detail) {
    if (benchmark_detail.empty()) return "";
    const auto j = nlohmann::json::parse(benchmark_detail, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
    return "";
}

// Why a sample failed, in the words the tuner stored: its error, else the
// benchmark harness's, else the output check's or ptxas's detail.
std::string failure_reason(const std::string &status, const std::string &benchmark,
                           const std::string &validation, const std::string &ptxas_status,
                           const std::string &error, const std::string &benchmark_detail,
                           const std::string &validation_detail, const std::string &ptxas_detail) {
    const bool failed =
        status != "ok" || validation == "failed" || failed_outcome(benchmark) || ptxas_status == "failed";
    if (!failed) return "";
    for (const std::string *s : {&error, &validation_detail}) {
        if (!s->empty()) return *s;
    }
    if (std::string e = detail_error(benchmark_detail); !e.empty()) return e;
    if (ptxas_status == "failed" && !ptxas_detail.empty()) return "ptxas: " + ptxas_detail;
    if (failed_outcome(benchmark)) return benchmark;
    return status;
}

std::vector<ReportSample> read_samples(db::ReportQueries &queries, int64_t run_id) {
    std::vector<ReportSample> out;
    for (const db::ReportSampleRow &row : queries.samples(run_id)) {
        ReportSample s;
        s.id = row.id;
        s.run_id = run_id;
        s.batch = row.batch;
        s.idx = row.idx;
        s.predicted_cost = row.predicted_cost;
        s.runtime_ms = row.runtime_ms;
        s.status = row.status;
        s.benchmark = row.benchmark;
        s.validation = row.validation;
        s.ptxas_status = row.ptxas_status;
        s.device = row.device;
        s.failure = failure_reason(s.status, s.benchmark, s.validation, s.ptxas_status, row.error,
                                   row.benchmark_detail, row.validation_detail, row.ptxas_detail);
        out.push_back(std::move(s));
    }
    // Spilling kernels, as ptxas reported them.
    for (const db::SpillingKernel &k : queries.spilling_kernels(run_id)) {
        auto it =
            std::find_if(out.begin(), out.end(), [&](const ReportSample &s) { return s.id == k.sample_id; });
        if (it == out.end()) continue;
        it->spill_bytes += k.store_bytes + k.load_bytes;
        if (!it->spill_detail.empty()) it->spill_detail += "; ";
        it->spill_detail += k.name + ": " + std::to_string(k.store_bytes) + " B stored, " +
                            std::to_string(k.load_bytes) + " B loaded";
    }
    return out;
}

// The device a run measured on: the most frequent device among its samples.
std::string run_device(const std::vector<ReportSample> &samples) {
    std::map<std::string, int> counts;
    for (const auto &s : samples)
        if (!s.device.empty()) counts[s.device]++;
    std::string best;
    int n = 0;
    for (const auto &[d, c] : counts)
        if (c > n) best = d, n = c;
    return best;
}

std::optional<Winner> read_sample_as_winner(db::ReportQueries &queries, int64_t sample_id) {
    const std::optional<db::ScheduleRow> row = queries.schedule(sample_id);
    if (!row) return std::nullopt;
    Winner w;
    w.sample_id = row->sample_id;
    w.run_id = row->run_id;
    w.runtime_ms = row->runtime_ms;
    w.predicted_cost = row->predicted_cost;
    w.schedule_source = row->schedule_source;
    w.batch = row->batch;
    w.idx = row->idx;
    w.gpu_fill = row->gpu_fill;
    w.gpu_fill_least = row->gpu_fill_least;
    return w;
}

std::map<std::string, BaselineTime> read_baselines(db::ReportQueries &queries, int64_t pipeline_id,
                                                   const std::string &device) {
    std::map<std::string, BaselineTime> out;
    for (const auto &[source, t] : queries.newest_baseline_times(pipeline_id, device))
        out[source] = BaselineTime{t.run_id, t.runtime_ms};
    return out;
}

void rank_correlation(ReportRun &run) {
    std::vector<double> predicted, measured;
    for (const auto &s : run.samples) {
        if (!s.measured() || !s.predicted_cost) continue;
        predicted.push_back(*s.predicted_cost);
        measured.push_back(*s.runtime_ms);
    }
    run.spearman = db::spearman_rho(predicted, measured);
    run.kendall = db::kendall_tau_b(predicted, measured);
}

} // namespace

bool ReportSample::measured() const {
    return db::is_measured(status, validation, runtime_ms);
}

std::string ReportFilter::describe() const {
    std::vector<std::string> parts;
    if (run_id) parts.push_back("run " + std::to_string(*run_id));
    if (!pipeline.empty()) parts.push_back("pipeline " + pipeline);
    if (!since.empty()) parts.push_back("runs started since " + since);
    if (parts.empty()) return "all runs";
    std::string out = parts.front();
    for (std::size_t i = 1; i < parts.size(); ++i)
        out += ", " + parts[i];
    return out;
}

std::string parse_since(const std::string &text) {
    std::string t = text;
    if (!t.empty() && (t.back() == 'Z' || t.back() == 'z')) t.pop_back();
    const auto bad = [&] {
        return UserError("--since '" + text +
                         "' is not an ISO date: give YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS] (UTC)");
    };
    if (!(all_digits(t, 0, 4) && t.size() >= 10 && t[4] == '-' && all_digits(t, 5, 2) && t[7] == '-' &&
          all_digits(t, 8, 2)))
        throw bad();
    const int month = std::stoi(t.substr(5, 2)), day = std::stoi(t.substr(8, 2));
    if (month < 1 || month > 12 || day < 1 || day > 31) throw bad();
    std::string hh = "00", mm = "00", ss = "00", fraction = "000";
    if (t.size() > 10) {
        if (!((t[10] == 'T' || t[10] == ' ') && all_digits(t, 11, 2) && t.size() >= 16 && t[13] == ':' &&
              all_digits(t, 14, 2)))
            throw bad();
        hh = t.substr(11, 2);
        mm = t.substr(14, 2);
        if (t.size() >= 19 && t[16] == ':' && all_digits(t, 17, 2))
            ss = t.substr(17, 2);
        else if (t.size() != 16)
            throw bad();
        // Milliseconds, as the database writes them (a caller may pass a
        // stored started_at back).
        if (t.size() > 19) {
            if (t.size() != 23 || t[19] != '.' || !all_digits(t, 20, 3)) throw bad();
            fraction = t.substr(20, 3);
        }
        if (std::stoi(hh) > 23 || std::stoi(mm) > 59 || std::stoi(ss) > 59) throw bad();
    }
    return t.substr(0, 10) + "T" + hh + ":" + mm + ":" + ss + "." + fraction + "Z";
}

ReportData load_report_data(db::Database &database, const ReportFilter &filter) {
    ReportData data;
    data.database_path = database.path();
    data.filter = filter.describe();
    const std::string since = filter.since.empty() ? "" : parse_since(filter.since);
    db::SampleStore store(database);
    db::ReportQueries queries(database);

    database.transaction(
        [&] {
            // Groups in a stable order: generator, params, GPU profile, device.
            using Key = std::tuple<std::string, std::string, std::string, int64_t, std::string>;
            std::map<Key, DeviceGroup> groups;
            for (const db::ReportRunRow &row : queries.runs(filter.run_id, filter.pipeline, since)) {
                ReportPipeline pipeline{row.pipeline_id, row.generator_name, row.params, row.target, row.gpu};
                ReportRun run;
                run.id = row.id;
                run.mode = row.mode;
                run.autoscheduler = row.autoscheduler;
                run.status = row.status;
                run.started_at = row.started_at;
                run.finished_at = row.finished_at;
                run.stopped_by = row.stopped_by;
                run.error = row.error;
                run.chosen_sample_id = row.chosen_sample_id;
                std::vector<ReportSample> samples = read_samples(queries, run.id);
                const std::string device = run_device(samples);
                RunListing listing{
                    run.id,     pipeline.generator_name, pipeline.gpu, run.mode, run.autoscheduler,
                    run.status, run.started_at,          device};
                for (auto &s : samples) {
                    if (s.device.empty()) s.device = device;
                    listing.samples++;
                    if (s.measured()) listing.measured++;
                    if (!s.failure.empty()) listing.failed++;
                }
                data.runs.push_back(listing);
                if (run.autoscheduler != "gpusched") continue; // baselines: compared with, not plotted
                if (run.mode == "autotune") run.batches = store.autotune_batches(run.id);

                // Split by device (one in practice; never mixed in a group).
                std::map<std::string, std::vector<ReportSample>> by_device;
                for (auto &s : samples)
                    by_device[s.device].push_back(s);
                if (by_device.empty()) by_device[device];
                for (auto &[dev, dev_samples] : by_device) {
                    DeviceGroup &g =
                        groups[Key{pipeline.generator_name, pipeline.params, pipeline.gpu, pipeline.id, dev}];
                    g.pipeline = pipeline;
                    g.device = dev;
                    ReportRun part = run;
                    part.samples = std::move(dev_samples);
                    rank_correlation(part);
                    g.runs.push_back(std::move(part));
                }
            }
            for (auto &[key, g] : groups) {
                const ReportSample *best = nullptr;
                for (const auto &r : g.runs)
                    for (const auto &s : r.samples)
                        if (s.measured() && (!best || *s.runtime_ms < *best->runtime_ms)) best = &s;
                if (best) {
                    g.winner = read_sample_as_winner(queries, best->id);
                } else {
                    for (auto r = g.runs.rbegin(); r != g.runs.rend() && !g.winner; ++r)
                        if (r->chosen_sample_id)
                            g.winner = read_sample_as_winner(queries, *r->chosen_sample_id);
                }
                if (!g.device.empty()) g.baselines = read_baselines(queries, g.pipeline.id, g.device);
                data.groups.push_back(std::move(g));
            }
        },
        db::Database::Access::Read);

    if (data.runs.empty())
        throw UserError("no run in '" + database.path() + "' matches " + data.filter +
                        " (list them with `gpusched db runs --db " + database.path() + "`)");
    return data;
}

} // namespace gpusched::report
