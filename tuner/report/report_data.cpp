#include "tuner/report/report_data.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include <nlohmann/json.hpp>

#include "db/rank_correlation.h"
#include "tuner/user_error.h"

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

std::vector<ReportSample> read_samples(db::Database &database, int64_t run_id) {
    auto q = database.prepare(
        "SELECT id, batch, idx, predicted_cost, runtime_median_ms, status, coalesce(benchmark, ''), "
        "validation, "
        "ptxas_status, coalesce(device, ''), coalesce(error, ''), coalesce(benchmark_detail, ''), "
        "coalesce(validation_detail, ''), coalesce(ptxas_detail, '') FROM samples WHERE run_id = ?1 "
        "ORDER BY batch, idx");
    q.bind(1, run_id);
    std::vector<ReportSample> out;
    while (q.step()) {
        ReportSample s;
        s.id = q.column_int(0);
        s.run_id = run_id;
        s.batch = static_cast<int>(q.column_int(1));
        s.idx = static_cast<int>(q.column_int(2));
        s.predicted_cost = q.column_optional_double(3);
        s.runtime_ms = q.column_optional_double(4);
        s.status = q.column_text(5);
        s.benchmark = q.column_text(6);
        s.validation = q.column_text(7);
        s.ptxas_status = q.column_text(8);
        s.device = q.column_text(9);
        s.failure = failure_reason(s.status, s.benchmark, s.validation, s.ptxas_status, q.column_text(10),
                                   q.column_text(11), q.column_text(12), q.column_text(13));
        out.push_back(std::move(s));
    }
    // Spilling kernels, as ptxas reported them.
    auto k =
        database.prepare("SELECT k.sample_id, k.name, k.spill_store_bytes, k.spill_load_bytes FROM kernels k "
                         "JOIN samples s ON s.id = k.sample_id WHERE s.run_id = ?1 AND k.spill_store_bytes + "
                         "k.spill_load_bytes > 0 "
                         "ORDER BY k.sample_id, k.name");
    k.bind(1, run_id);
    while (k.step()) {
        const int64_t id = k.column_int(0);
        auto it = std::find_if(out.begin(), out.end(), [&](const ReportSample &s) { return s.id == id; });
        if (it == out.end()) continue;
        const int64_t store = k.column_int(2), load = k.column_int(3);
        it->spill_bytes += store + load;
        if (!it->spill_detail.empty()) it->spill_detail += "; ";
        it->spill_detail += k.column_text(1) + ": " + std::to_string(store) + " B stored, " +
                            std::to_string(load) + " B loaded";
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

std::optional<Winner> read_sample_as_winner(db::Database &database, int64_t sample_id) {
    auto q =
        database.prepare("SELECT run_id, runtime_median_ms, predicted_cost, coalesce(schedule_source, ''), "
                         "batch, idx, gpu_fill, gpu_fill_least FROM samples WHERE id = ?1");
    q.bind(1, sample_id);
    if (!q.step()) return std::nullopt;
    Winner w;
    w.sample_id = sample_id;
    w.run_id = q.column_int(0);
    w.runtime_ms = q.column_optional_double(1);
    w.predicted_cost = q.column_optional_double(2);
    w.schedule_source = q.column_text(3);
    w.batch = static_cast<int>(q.column_int(4));
    w.idx = static_cast<int>(q.column_int(5));
    w.gpu_fill = q.column_optional_double(6);
    w.gpu_fill_least = q.column_optional_double(7);
    return w;
}

std::map<std::string, BaselineTime> read_baselines(db::Database &database, int64_t pipeline_id,
                                                   const std::string &device) {
    // Newest measured run first; its fastest sample (a baseline run holds one).
    auto q = database.prepare(
        "SELECT r.autoscheduler, r.id, min(s.runtime_median_ms) FROM runs r JOIN samples s ON s.run_id = "
        "r.id "
        "WHERE r.pipeline_id = ?1 AND s.device = ?2 AND r.autoscheduler != 'gpusched' AND s.status = 'ok' "
        "AND s.benchmark = 'measured' AND s.runtime_median_ms IS NOT NULL AND s.validation != 'failed' "
        "GROUP BY r.id ORDER BY r.started_at DESC, r.id DESC");
    q.bind(1, pipeline_id).bind(2, device);
    std::map<std::string, BaselineTime> out;
    while (q.step()) {
        const std::string source = q.column_text(0);
        if (out.count(source)) continue;
        out[source] = BaselineTime{q.column_int(1), q.column_double(2)};
    }
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
    return status == "ok" && benchmark == "measured" && runtime_ms.has_value() && validation != "failed";
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

    database.transaction(
        [&] {
            auto q = database.prepare(
                "SELECT r.id, r.pipeline_id, p.generator_name, p.params, p.target, p.gpu, r.mode, "
                "r.autoscheduler, "
                "r.status, r.started_at, coalesce(r.finished_at, ''), coalesce(r.stopped_by, ''), "
                "coalesce(r.error, ''), r.best_sample_id FROM runs r JOIN pipelines p ON p.id = "
                "r.pipeline_id "
                "WHERE (?1 IS NULL OR r.id = ?1) AND (?2 = '' OR p.generator_name = ?2) "
                "AND (?3 = '' OR r.started_at >= ?3) ORDER BY r.started_at, r.id");
            q.bind(1, filter.run_id).bind(2, filter.pipeline).bind(3, since);
            // Groups in a stable order: generator, params, GPU profile, device.
            using Key = std::tuple<std::string, std::string, std::string, int64_t, std::string>;
            std::map<Key, DeviceGroup> groups;
            while (q.step()) {
                ReportPipeline pipeline{q.column_int(1), q.column_text(2), q.column_text(3), q.column_text(4),
                                        q.column_text(5)};
                ReportRun run;
                run.id = q.column_int(0);
                run.mode = q.column_text(6);
                run.autoscheduler = q.column_text(7);
                run.status = q.column_text(8);
                run.started_at = q.column_text(9);
                run.finished_at = q.column_text(10);
                run.stopped_by = q.column_text(11);
                run.error = q.column_text(12);
                run.chosen_sample_id = q.column_optional_int(13);
                std::vector<ReportSample> samples = read_samples(database, run.id);
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
                    g.winner = read_sample_as_winner(database, best->id);
                } else {
                    for (auto r = g.runs.rbegin(); r != g.runs.rend() && !g.winner; ++r)
                        if (r->chosen_sample_id)
                            g.winner = read_sample_as_winner(database, *r->chosen_sample_id);
                }
                if (!g.device.empty()) g.baselines = read_baselines(database, g.pipeline.id, g.device);
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
