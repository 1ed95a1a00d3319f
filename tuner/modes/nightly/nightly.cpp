#include "tuner/modes/nightly/nightly.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "common/elapsed.h"
#include "db/database.h"
#include "db/run_queries.h"
#include "db/sample_store.h"
#include "tuner/generate/batch.h"
#include "tuner/modes/autotune.h"
#include "tuner/modes/nightly/budget_split.h"
#include "tuner/modes/nightly/nightly_runs.h"
#include "tuner/modes/nightly/promoted_manifest.h"
#include "tuner/modes/nightly/run_lock.h"
#include "tuner/modes/top5.h"
#include "tuner/report_stamp.h"

namespace gpusched {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// A device name as a folder name: "pocl-Intel(R) Xeon(R) ..." -> "pocl-Intel-R-Xeon-R-...".
std::string slug(const std::string &name) {
    std::string s = std::regex_replace(name, std::regex("[^A-Za-z0-9_.-]+"), "-");
    while (!s.empty() && s.back() == '-')
        s.pop_back();
    return s.empty() ? "device" : s;
}

class Night {
public:
    Night(const NightlyConfig &c, const NightlyOptions &o) : c_(c), o_(o) {}

    void log(NightlyLogLevel level, const std::string &line) const {
        if (o_.log) o_.log(level, line);
    }
    bool stopping() const { return o_.stop && o_.stop->load(); }

    OneShotOptions batch_options(const NightlyPipeline &p, const std::string &out_dir, uint64_t seed) const {
        OneShotOptions b;
        b.generator_path = p.generator_path;
        b.generator_name = p.generator_name;
        b.generator_params = p.params;
        b.gpu = p.gpu;
        b.output_dir = out_dir;
        b.db_path = c_.database;
        b.samples = p.samples;
        b.jobs = c_.jobs > 0 ? c_.jobs : std::max(1u, std::thread::hardware_concurrency());
        b.search = p.search;
        b.search.seed = seed;
        b.validate = false; // the benchmarks check every output against the CPU reference
        b.gpusched_version = o_.gpusched_version;
        return b;
    }

    // Autotune: continue the unfinished run, or start one seeded apart from
    // the earlier nights' runs.
    void autotune(const NightlyPipeline &p, const NightlyRunHistory &h, PipelineOutcome &out) {
        const uint64_t stride = static_cast<uint64_t>(p.samples) * static_cast<uint64_t>(p.iterations);
        AutotuneOptions o;
        o.batch = batch_options(p, (fs::path(c_.work_dir) / p.name / "autotune").string(),
                                p.search.seed + static_cast<uint64_t>(h.earlier_runs) * stride);
        o.device = p.device;
        o.timing = p.timing;
        o.iterations = p.iterations;
        o.train_on = p.train_on;
        o.baselines = p.baselines;
        o.epochs = c_.epochs;
        o.learning_rate = c_.learning_rate;
        o.time_budget = std::chrono::duration<double>(out.budget_s);
        o.stop = o_.stop;
        o.started_by = nightly_run_tag(p);
        o.executor = executor_for(p);
        auto progress = [&](const AutotuneStatus &st) {
            const bool batch_event =
                st.event == AutotuneStatus::Event::BatchDone || st.event == AutotuneStatus::Event::Retrained;
            log(batch_event ? NightlyLogLevel::Info : NightlyLogLevel::Debug, p.name + ": " + st.message);
        };
        AutotuneResult r;
        if (h.resume_run) {
            AutotuneOptions resume = o;
            resume.resume_run = h.resume_run;
            try {
                log(NightlyLogLevel::Info, fmt::format("{}: continuing run {}", p.name, *h.resume_run));
                r = run_autotune(resume, progress);
            } catch (const CannotResumeError &e) {
                // It cannot go on (its weights file is gone, the device
                // changed, ...): say so on the run, so no night tries again.
                log(NightlyLogLevel::Warn,
                    fmt::format("{}: run {} cannot be continued ({}); starting a new run", p.name,
                                *h.resume_run, e.what()));
                {
                    db::Database database = db::Database::open(c_.database);
                    db::SampleStore(database).set_run_status(*h.resume_run, "failed", std::nullopt,
                                                             std::string("abandoned by the nightly: ") +
                                                                 e.what());
                }
                o.batch.search.seed = p.search.seed + static_cast<uint64_t>(h.earlier_runs + 1) * stride;
                r = run_autotune(o, progress);
            }
        } else {
            if (!h.not_resumed.empty())
                log(NightlyLogLevel::Info, p.name + ": starting a new run; " + h.not_resumed);
            r = run_autotune(o, progress);
        }
        out.run_id = r.run_id;
        out.resumed = r.resumed;
        out.device = r.device;
        out.samples = r.samples;
        out.samples_tonight = r.samples_this_invocation;
        out.stopped_by = r.stopped_by;
        out.files = r.best_files;
        out.kept_baseline = r.kept_baseline;
        out.status = r.end == AutotuneEnd::Interrupted ? "interrupted" : "tuned";
    }

    // The config's executor; the modes fill in device and timing. On Slurm,
    // each pipeline's jobs get a folder of their own.
    ExecutorOptions executor_for(const NightlyPipeline &p) const {
        ExecutorOptions e;
        e.kind = c_.executor;
        e.stop = o_.stop;
        if (c_.executor == "slurm") {
            e.slurm = c_.slurm;
            e.slurm.work_dir = (fs::path(c_.slurm.work_dir) / p.name).string();
        }
        return e;
    }

    void top5(const NightlyPipeline &p, const NightlyRunHistory &h, PipelineOutcome &out) {
        Top5Options o;
        o.batch = batch_options(p, (fs::path(c_.work_dir) / p.name / "top5").string(),
                                p.search.seed +
                                    static_cast<uint64_t>(h.earlier_runs) * static_cast<uint64_t>(p.samples));
        o.device = p.device;
        o.timing = p.timing;
        o.top = p.top;
        o.baselines = p.baselines;
        o.started_by = nightly_run_tag(p);
        o.executor = executor_for(p);
        Top5Progress progress;
        progress.measured = [&](const Top5Entry &e) {
            log(NightlyLogLevel::Debug,
                p.name + ": " + e.label + ": " +
                    (e.measured()
                         ? fmt::format("median {:.4g} ms", *e.measurement.median_ms)
                         : std::string(to_string(e.measurement.outcome)) + ": " + e.measurement.error));
        };
        const Top5Result r = run_top5(o, progress);
        out.run_id = r.run_id;
        out.device = r.device;
        out.samples = out.samples_tonight = static_cast<int64_t>(r.samples.size());
        out.files = r.best_files;
        if (r.kept_baseline) out.kept_baseline = r.baselines[*r.kept_baseline].source;
        out.status = "tuned";
    }

    // The run's chosen sample and its time, as stored.
    void read_best(PipelineOutcome &out) const {
        db::Database database = db::Database::open(c_.database);
        const auto chosen = db::RunQueries(database).chosen_sample_time(out.run_id);
        if (!chosen) return;
        out.best_sample_id = chosen->id;
        out.best_ms = chosen->median_ms;
        out.best_min_ms = chosen->min_ms;
        out.best_reps = chosen->reps;
        if (out.device.empty()) out.device = chosen->device;
    }

    void tune(const NightlyPipeline &p, PipelineOutcome &out) {
        const auto t0 = Clock::now();
        const NightlyRunHistory h = nightly_run_history(c_.database, p);
        try {
            if (p.mode == NightlyMode::Autotune)
                autotune(p, h, out);
            else
                top5(p, h, out);
            read_best(out);
        } catch (const UnavailableError &e) {
            out.status = "unavailable";
            out.error = e.what();
        } catch (const UserError &e) {
            out.status = "failed";
            out.error = e.what();
        } catch (const db::DbError &e) {
            out.status = "failed";
            out.error = std::string("database: ") + e.what();
        }
        out.seconds = seconds_since(t0);
    }

    void promote(PipelineOutcome &out, const NightlyPipeline &p, PromotedManifest &manifest) const {
        if (!out.best_ms) {
            out.promotion = "nothing measured to promote";
            return;
        }
        if (!out.kept_baseline.empty()) {
            out.promotion =
                fmt::format("not promoted: the {} baseline ran faster than every sample of the run "
                            "({:.4g} ms); the promoted schedule, if any, stays",
                            out.kept_baseline, *out.best_ms);
            return;
        }
        MeasuredTime candidate;
        candidate.device = out.device;
        candidate.median_ms = *out.best_ms;
        candidate.min_ms = out.best_min_ms.value_or(*out.best_ms);
        candidate.reps = out.best_reps;
        candidate.run_id = out.run_id;
        candidate.sample_id = *out.best_sample_id;
        std::optional<MeasuredTime> promoted;
        bool intact = false;
        auto it = manifest.pipelines.find(p.name);
        if (it != manifest.pipelines.end()) {
            promoted = it->second.time;
            intact = promoted_files_intact(c_.schedules, it->second);
        }
        const PromotionDecision d = decide_promotion(candidate, promoted, intact, c_.noise_floor);
        out.promotion = d.reason;
        if (!d.promote) return;
        std::string schedule, record;
        for (const auto &f : out.files) {
            if (f.size() > 11 && f.compare(f.size() - 11, 11, ".schedule.h") == 0) schedule = f;
            if (f.size() > 14 && f.compare(f.size() - 14, 14, ".gpusched.json") == 0) record = f;
        }
        if (schedule.empty() || record.empty()) {
            out.promotion = "not promoted: the run's best has no schedule or decision record among its files";
            return;
        }
        PromotedEntry e;
        e.time = candidate;
        e.database = c_.database;
        e.generator_name = p.generator_name;
        e.params = canonical_params(p.params);
        e.promoted_at = utc_iso8601();
        // Files first, the manifest last (promoted_manifest.h).
        e.files = promote_schedule_files(c_.schedules, p.name, schedule, record);
        manifest.pipelines[p.name] = e;
        save_promoted_manifest(c_.schedules, manifest);
        out.promoted = true;
        out.promotion = "promoted: " + d.reason;
    }

    void retrain(NightlySummary &s, const std::string &stamp) const {
        std::map<std::string, HoldoutRequest> by_device;
        for (std::size_t i = 0; i < s.pipelines.size(); ++i) {
            const PipelineOutcome &out = s.pipelines[i];
            if (out.device.empty() || !out.best_ms) continue;
            const NightlyPipeline &p = c_.pipelines[i];
            HoldoutRequest &r = by_device[out.device];
            if (r.device.empty()) {
                r.db_path = c_.database;
                r.device = out.device;
                r.gpu = p.gpu;
                r.out_dir = (fs::path(c_.work_dir) / "weights" / stamp / slug(out.device)).string();
                r.purpose = "gpusched nightly " + stamp;
                r.epochs = c_.epochs;
                r.learning_rate = c_.learning_rate;
            }
            r.pipelines.push_back({p.name, p.generator_name, canonical_params(p.params)});
        }
        if (by_device.empty()) s.retrain_skipped = "no pipeline was measured tonight";
        for (const auto &[device, request] : by_device) {
            log(NightlyLogLevel::Info,
                fmt::format("retraining on {}: every pipeline, then each held out", device));
            DeviceModels d{device, retrain_hold_one_out(request)};
            for (const auto &m : d.models) {
                const std::string what = m.held_out.empty() ? "all pipelines" : "without " + m.held_out;
                if (m.weights_id)
                    log(NightlyLogLevel::Info,
                        fmt::format("  {}: {} samples of {} pipelines -> {} (weights {})", what, m.samples,
                                    m.pipelines, m.path, *m.weights_id));
                else
                    log(NightlyLogLevel::Warn, fmt::format("  {}: not trained: {}", what, m.error));
            }
            s.retrained.push_back(std::move(d));
        }
    }

    NightlySummary run() {
        const auto t0 = Clock::now();
        NightlySummary s;
        s.config = c_.path;
        s.database = c_.database;
        s.schedules = c_.schedules;
        s.started_at = utc_iso8601();
        s.budget_s = c_.budget_s;
        // The stamp names tonight's weights folder: no colons in file names.
        std::string stamp = s.started_at;
        for (char &ch : stamp)
            if (ch == ':') ch = '-';

        double weights_left = 0;
        for (const auto &p : c_.pipelines)
            weights_left += p.share;
        for (const auto &p : c_.pipelines) {
            PipelineOutcome out;
            out.name = p.name;
            out.mode = to_string(p.mode);
            out.budget_s = next_budget_share(c_.budget_s - seconds_since(t0), p.share, weights_left);
            weights_left -= p.share;
            if (s.interrupted || stopping()) {
                s.interrupted = true;
                out.status = "skipped";
                out.error = "the night was interrupted before its turn";
            } else if (out.budget_s <= 0) {
                out.error = "the night's budget was spent before its turn";
            } else {
                log(NightlyLogLevel::Info, fmt::format("{}: {} on {} for up to {:.0f} s", p.name, out.mode,
                                                       to_string(p.device), out.budget_s));
                tune(p, out);
                if (out.status == "interrupted") s.interrupted = true;
                log(out.status == "tuned" ? NightlyLogLevel::Info : NightlyLogLevel::Warn,
                    fmt::format("{}: {} (run {}, {} samples, best {}){}", p.name, out.status, out.run_id,
                                out.samples, out.best_ms ? fmt::format("{:.4g} ms", *out.best_ms) : "-",
                                out.error.empty() ? "" : ": " + out.error));
            }
            s.pipelines.push_back(out);
        }

        // Promotion: what was measured tonight, interrupted or not.
        PromotedManifest manifest = load_promoted_manifest(c_.schedules);
        for (std::size_t i = 0; i < s.pipelines.size(); ++i) {
            PipelineOutcome &out = s.pipelines[i];
            if (out.status != "tuned" && out.status != "interrupted") {
                out.promotion = "not tuned tonight";
                continue;
            }
            promote(out, c_.pipelines[i], manifest);
            log(NightlyLogLevel::Info, out.name + ": " + out.promotion);
        }
        if (s.interrupted)
            s.retrain_skipped = "the night was interrupted";
        else
            retrain(s, stamp);
        s.seconds = seconds_since(t0);
        return s;
    }

private:
    const NightlyConfig &c_;
    const NightlyOptions &o_;
};

} // namespace

NightlySummary run_nightly(const NightlyConfig &config, const NightlyOptions &options) {
    check_nightly_paths(config);
    RunLock lock(config.lock);
    Night night(config, options);
    night.log(NightlyLogLevel::Info,
              fmt::format("gpusched nightly {} (pid {}): {} pipelines, budget {:.0f} s, lock {}", config.path,
                          static_cast<long>(getpid()), config.pipelines.size(), config.budget_s,
                          config.lock));
    return night.run();
}

} // namespace gpusched
