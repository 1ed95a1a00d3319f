#include "tuner/top5.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <map>
#include <regex>
#include <thread>

#include "db/sample_store.h"
#include "tuner/baselines.h"
#include "tuner/cuda_device_query.h"
#include "tuner/ptx_extract.h"
#include "tuner/sample_selection.h"

namespace gpusched {
namespace fs = std::filesystem;

namespace {

// The usable samples to benchmark, best predicted first (sec. 6.1): those
// that do not spill; if every one spills, those within 50% of the least
// spilling, as One Shot chooses.
std::vector<std::size_t> benchmark_candidates(const std::vector<OneShotSample> &samples,
                                              const std::vector<std::size_t> &ranking,
                                              std::vector<std::size_t> &spillers) {
    std::vector<std::size_t> keep;
    long least = -1;
    for (std::size_t i : ranking) {
        const long spill = samples[i].ptxas.total_spill_bytes();
        if (spill == 0)
            keep.push_back(i);
        else
            spillers.push_back(i);
        if (least < 0 || spill < least) least = spill;
    }
    if (!keep.empty() || ranking.empty()) return keep;
    for (std::size_t i : ranking) {
        if (static_cast<double>(samples[i].ptxas.total_spill_bytes()) <=
            kSpillTolerance * static_cast<double>(least))
            keep.push_back(i);
    }
    return keep;
}

// The PTX ISA version (".version 7.1") of a compiled library; empty if none.
std::string ptx_isa_version(const std::string &library) {
    try {
        static const std::regex version(R"(\.version\s+(\d+\.\d+))");
        for (const auto &m : extract_ptx_modules_from_file(library)) {
            std::smatch match;
            if (std::regex_search(m.text, match, version)) return match[1];
        }
    } catch (const std::exception &) {
    }
    return {};
}

std::string first_error(const std::vector<OneShotSample> &samples) {
    for (const auto &s : samples) {
        if (!s.generator.ok()) return s.generator.message;
        if (s.ptxas.status == PtxasStatus::Failed)
            return "ptxas rejected the generated PTX: " + s.ptxas.detail;
    }
    return "no usable sample";
}

} // namespace

// The validation request that names a schedule of this pipeline: what the
// reference and every benchmark build start from.
ValidationRequest schedule_request(const OneShotOptions &opt, const ScheduleSource &source,
                                   const std::string &work_dir) {
    ValidationRequest vr;
    vr.generator_path = opt.generator_path;
    vr.generator_name = opt.generator_name;
    vr.generator_params = opt.generator_params;
    vr.source = source;
    vr.work_dir = work_dir;
    vr.runtime_cache_dir = opt.output_dir + "/runtime";
    vr.timeout = opt.timeout;
    return vr;
}

// The database row update for a measurement.
ExecutorOptions executor_options(ExecutorOptions e, DeviceKind device, const TimingOptions &timing,
                                 const GpuProfile &gpu) {
    e.device = device;
    e.timing = timing;
    e.fallback_device_name = gpu.description;
    return e;
}

db::MeasurementRow measurement_row(const Measurement &m, const ExecutionRecord &execution) {
    db::MeasurementRow row;
    row.device = m.device;
    row.benchmark = to_string(m.outcome);
    row.runtime_min_ms = m.min_ms;
    row.runtime_median_ms = m.median_ms;
    if (m.measured()) row.runtime_reps = m.reps;
    row.validation = m.validation;
    row.validation_detail = m.validation_detail;
    row.status = m.measured() ? "ok" : (m.outcome == MeasureOutcome::TimedOut ? "timeout" : "failed");
    row.error = m.error;
    nlohmann::json detail = m.to_json();
    if (!execution.is_null()) detail["execution"] = execution;
    row.detail = detail.dump();
    return row;
}

// The measurement of something that never reached the device.
Measurement not_benchmarked(const std::string &label, const std::string &device, DeviceKind kind,
                            MeasureOutcome outcome, const std::string &error) {
    Measurement m;
    m.label = label;
    m.device = device;
    m.device_kind = kind;
    m.outcome = outcome;
    m.error = error;
    return m;
}

BenchmarkBuildRequest sample_build_request(const OneShotOptions &opt, const BatchInputs &inputs,
                                           const OneShotSample &s, DeviceKind device,
                                           const std::string &benchmark_target, const std::string &dir) {
    BenchmarkBuildRequest req;
    req.label = "sample " + std::to_string(s.index);
    req.target = benchmark_target;
    req.work_dir = dir + "/build";
    req.schedule = schedule_request(opt, inputs.source, dir);
    req.schedule.plugin_config = nlohmann::json::parse(read_text_file(s.dir + "/config.json"), nullptr, false);
    req.schedule.replay_record = s.dir + "/" + opt.generator_name + ".gpusched.json";
    if (device == DeviceKind::Cuda) req.library_dir = s.dir;
    return req;
}

int cuda_driver_for_ptx_isa(const std::string &v) {
    const auto dot = v.find('.');
    if (dot == std::string::npos) return 0;
    const int major = std::atoi(v.substr(0, dot).c_str()), minor = std::atoi(v.substr(dot + 1).c_str());
    // PTX ISA release notes: 6.0 came with CUDA 9.0, ..., 6.5 with 10.2,
    // 7.0 with 11.0, 7.x with 11.x, 8.0 with 12.0, 8.x with 12.x.
    if (major == 6) {
        static const int kCuda[] = {9000, 9010, 9020, 10000, 10010, 10020};
        return minor >= 0 && minor <= 5 ? kCuda[minor] : 0;
    }
    if (major == 7 || major == 8) return (major == 7 ? 11000 : 12000) + 10 * minor;
    return 0;
}

Top5Result run_top5(const Top5Options &options, const Top5Progress &progress) {
    const auto t0 = std::chrono::steady_clock::now();
    const OneShotOptions &opt = options.batch;

    // --- Refuse a missing device and bad input before anything is written.
    std::unique_ptr<Executor> executor =
        make_executor(executor_options(options.executor, options.device, options.timing, opt.gpu));
    const BatchInputs inputs = check_batch_inputs(opt);
    if (!inputs.source.searches)
        throw UserError("tune searches with gpusched; name other sources with --baselines");
    if (options.top < 1) throw UserError("--top must be at least 1");
    const std::vector<ScheduleSource> baselines = baseline_sources(options.baselines);
    if (locate_benchmark_runner_archive().empty())
        throw UnavailableError(
            "the benchmark harness (libgpusched_benchmark_runner.a) was not found; build gpusched "
            "or set GPUSCHED_BENCHMARK_RUNNER");
    if (locate_cxx_compiler().empty())
        throw UnavailableError("no C++ compiler (c++ or $CXX) to link benchmarks with");
    db::Database database = db::Database::open(opt.db_path);
    db::SampleStore store(database);
    std::mutex db_mutex;

    Top5Result result;
    result.db_path = opt.db_path;
    result.target = inputs.target;
    result.benchmark_target = benchmark_target(options.device, inputs.target);
    result.device = executor->device_name();

    // --- The pipeline and the run first, so every sample can be written as it finishes.
    nlohmann::json run_config = {
        {"samples", inputs.samples},
        {"jobs", opt.jobs},
        {"beam_size", opt.beam_size},
        {"passes", opt.passes},
        {"seed", opt.seed},
        {"gpu", opt.gpu.name},
        {"search_config", opt.search_config},
        {"device", to_string(options.device)},
        {"device_name", result.device},
        {"executor", executor->name()},
        {"top", options.top},
        {"baselines", options.baselines},
        {"benchmark_target", result.benchmark_target},
        {"timing", to_json(options.timing)},
    };
    if (!options.started_by.empty()) run_config["started_by"] = options.started_by;
    const db::PipelineIdentity pid = pipeline_identity(opt, inputs.target);
    auto start_run = [&](const std::string &autoscheduler) {
        int64_t id = 0;
        std::lock_guard<std::mutex> lock(db_mutex);
        database.transaction([&] {
            db::RunInfo run;
            run.pipeline_id = store.upsert_pipeline(pid);
            run.mode = "top5";
            run.autoscheduler = autoscheduler;
            run.config = run_config.dump();
            run.gpusched_version = opt.gpusched_version;
            id = store.start_run(run);
        });
        return id;
    };
    result.run_id = start_run(opt.schedule_source);
    auto fail_run = [&](const std::string &error) {
        std::lock_guard<std::mutex> lock(db_mutex);
        store.finish_run(result.run_id, "failed", std::nullopt, error);
    };

    // A database error in a worker thread (locked beyond the busy timeout)
    // ends the run once the threads are joined: the first one is rethrown.
    std::exception_ptr db_failure;
    auto remember_failure = [&] {
        std::lock_guard<std::mutex> lock(db_mutex);
        if (!db_failure) db_failure = std::current_exception();
    };

    // --- The batch, each sample stored as it finishes.
    std::vector<int64_t> sample_ids(static_cast<std::size_t>(inputs.samples), 0);
    result.samples = generate_batch(opt, inputs, [&](const OneShotSample &s, int done, int total) {
        try {
            std::lock_guard<std::mutex> lock(db_mutex);
            sample_ids[static_cast<std::size_t>(s.index)] =
                store.add_sample(result.run_id, to_sample_row(s, sample_search_config(opt, s)));
        } catch (...) {
            remember_failure();
        }
        if (progress.sample) progress.sample(s, done, total);
    });
    if (db_failure) std::rethrow_exception(db_failure);
    const auto batch_done = std::chrono::steady_clock::now();
    result.batch_seconds = std::chrono::duration<double>(batch_done - t0).count();

    // --- Choose what to benchmark: the best predicted that do not spill.
    const std::vector<SelectionCandidate> candidates = selection_candidates(result.samples);
    result.ranking = rank_by_prediction(candidates);
    std::vector<std::size_t> chosen = benchmark_candidates(result.samples, result.ranking, result.spillers);
    if (chosen.empty()) {
        const std::string error = first_error(result.samples);
        fail_run(error);
        throw UserError("no sample compiled: " + error);
    }
    const bool spill_checked = std::any_of(chosen.begin(), chosen.end(), [&](std::size_t i) {
        return result.samples[i].ptxas.status == PtxasStatus::Checked;
    });
    if (!spill_checked) {
        result.spill_check = "not checked (" + result.samples[chosen.front()].ptxas.detail +
                             "): samples that spill registers were not filtered out, so a spiller may be "
                             "among those benchmarked; the measurements still decide";
    } else if (result.spillers.size() == result.ranking.size()) {
        result.spill_check = "every sample spills; benchmarking those within 50% of the least spilling";
    } else {
        result.spill_check = "checked: " + std::to_string(result.spillers.size()) + " spilling sample" +
                             (result.spillers.size() == 1 ? "" : "s") + " dropped";
    }
    if (chosen.size() > static_cast<std::size_t>(options.top))
        chosen.resize(static_cast<std::size_t>(options.top));

    // --- A CUDA driver that cannot load the PTX would fail every benchmark alike.
    if (options.device == DeviceKind::Cuda) {
        const OneShotSample &first = result.samples[chosen.front()];
        const std::string isa = ptx_isa_version(first.dir + "/" + opt.generator_name + ".a");
        const int need = cuda_driver_for_ptx_isa(isa);
        const int have = query_local_gpus().driver_version;
        if (need > 0 && have > 0 && have < need) {
            const std::string error =
                "the CUDA driver (" + std::to_string(have / 1000) + "." + std::to_string(have % 1000 / 10) +
                ") is too old for PTX ISA " + isa + " (needs CUDA " + std::to_string(need / 1000) + "." +
                std::to_string(need % 1000 / 10) + " or newer); update the NVIDIA driver";
            fail_run(error);
            throw UnavailableError(error);
        }
    }

    // --- Build and benchmark. Entry 0..k-1: samples; then baselines.
    const std::string bench_root = opt.output_dir + "/benchmarks";
    std::vector<Top5Entry> entries;
    for (std::size_t i : chosen) {
        const OneShotSample &s = result.samples[i];
        Top5Entry e;
        e.label = "sample " + std::to_string(s.index);
        e.source = opt.schedule_source;
        e.sample = i;
        e.predicted_rank = static_cast<int>(std::find(result.ranking.begin(), result.ranking.end(), i) -
                                            result.ranking.begin()) +
                           1;
        e.predicted_cost = s.predicted_cost;
        e.ptxas_status = to_string(s.ptxas.status);
        e.spill_bytes = s.ptxas.total_spill_bytes();
        e.run_id = result.run_id;
        e.sample_id = sample_ids[i];
        entries.push_back(std::move(e));
    }
    for (const ScheduleSource &src : baselines) {
        Top5Entry e;
        e.label = src.name;
        e.source = src.name;
        entries.push_back(std::move(e));
    }
    const std::size_t n_samples = chosen.size();

    // The CPU reference every benchmark's output is compared with.
    const ValidationRequest base = schedule_request(opt, inputs.source, bench_root);
    ReferenceOutputs reference;
    bool reference_ready = false;

    std::mutex mutex;
    std::condition_variable changed;

    // One build: a sample links its CUDA library (cuda) or is compiled again
    // for OpenCL with its decision record replayed; a baseline first runs as
    // a batch of one (CUDA library, ptxas, its own run row).
    auto wait_for_reference = [&] {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return reference_ready; });
        return reference.dir;
    };
    auto build_entry_or_throw = [&](Top5Entry &e) {
        const std::string dir =
            bench_root + "/" + (e.sample ? std::to_string(result.samples[*e.sample].index) : e.source);
        if (!e.sample) {
            BaselineBuild bb = build_baseline(
                opt, *find_schedule_source(e.source), options.device, result.benchmark_target, dir,
                [&](const OneShotSample &schedule) {
                    e.run_id = start_run(e.source);
                    std::lock_guard<std::mutex> lock(db_mutex);
                    e.sample_id = store.add_sample(e.run_id, to_sample_row(schedule, nlohmann::json::object()));
                },
                wait_for_reference);
            e.baseline = std::move(bb.schedule);
            e.ptxas_status = to_string(e.baseline.ptxas.status);
            e.spill_bytes = e.baseline.ptxas.total_spill_bytes();
            e.build = std::move(bb.build);
            return;
        }
        BenchmarkBuildRequest req = sample_build_request(opt, inputs, result.samples[*e.sample], options.device,
                                                         result.benchmark_target, dir);
        req.label = e.label;
        req.reference_dir = wait_for_reference();
        e.build = build_benchmark(req);
    };
    auto build_entry = [&](Top5Entry &e) {
        try {
            build_entry_or_throw(e);
        } catch (const db::DbError &) {
            remember_failure();
            e.build.ok = false;
            e.build.error = "not built: the database failed";
        } catch (const std::exception &err) {
            e.build.ok = false;
            e.build.error = err.what();
        }
    };

    auto record = [&](Top5Entry &e) {
        if (e.sample_id != 0) {
            std::lock_guard<std::mutex> lock(db_mutex);
            store.record_measurement(e.sample_id, measurement_row(e.measurement, e.execution));
            if (!e.sample) {
                store.finish_run(e.run_id, e.measured() ? "finished" : "failed",
                                 e.measured() ? std::optional<int64_t>(e.sample_id) : std::nullopt,
                                 e.measured() ? "" : e.measurement.error);
            }
        }
        if (progress.measured) progress.measured(e);
    };
    auto record_or_remember = [&](Top5Entry &e) {
        try {
            record(e);
        } catch (...) {
            remember_failure();
        }
    };

    // The executor runs the benchmarks (on this machine, or as Slurm jobs)
    // and hands each measurement back here, where it is stored.
    std::map<std::string, std::size_t> entry_of_key;
    for (std::size_t i = 0; i < entries.size(); ++i)
        entry_of_key["run " + std::to_string(result.run_id) + " " + (entries[i].sample ? "sample " : "baseline ") +
                     (entries[i].sample ? std::to_string(result.samples[*entries[i].sample].index)
                                        : entries[i].source)] = i;
    auto key_of = [&](std::size_t i) {
        for (const auto &[k, v] : entry_of_key)
            if (v == i) return k;
        return std::string();
    };
    executor->begin("run-" + std::to_string(result.run_id),
                    [&](const BenchmarkTask &task, const Measurement &m, const ExecutionRecord &execution) {
                        Top5Entry &e = entries[entry_of_key.at(task.key)];
                        e.measurement = m;
                        e.measurement.label = e.label;
                        e.execution = execution;
                        record_or_remember(e);
                    });
    // A built entry goes to the executor; one that cannot run is recorded now.
    auto dispatch = [&](std::size_t i) {
        Top5Entry &e = entries[i];
        {
            std::unique_lock<std::mutex> lock(mutex);
            changed.wait(lock, [&] { return reference_ready; });
        }
        if (!reference.ok()) {
            e.measurement = not_benchmarked(e.label, result.device, options.device, MeasureOutcome::NotRun,
                                            "no CPU reference to check the output against: " + reference.failure);
        } else if (!e.build.ok) {
            e.measurement =
                not_benchmarked(e.label, result.device, options.device, MeasureOutcome::BuildFailed, e.build.error);
        } else {
            executor->submit({key_of(i), e.build.binary});
            return;
        }
        record_or_remember(e);
    };

    std::atomic<std::size_t> next_build{0};
    auto builder = [&](bool builds_reference) {
        if (builds_reference) {
            ReferenceOutputs r = reference_outputs(base);
            std::lock_guard<std::mutex> lock(mutex);
            reference = r;
            reference_ready = true;
            changed.notify_all();
        }
        for (std::size_t i = next_build++; i < entries.size(); i = next_build++) {
            build_entry(entries[i]);
            dispatch(i);
        }
    };
    bool complete = true;
    {
        std::vector<std::thread> threads;
        const int builders = std::max(1, std::min<int>(opt.jobs, static_cast<int>(entries.size()) + 1));
        for (int j = 0; j < builders; ++j)
            threads.emplace_back(builder, j == 0);
        for (auto &t : threads)
            t.join();
        complete = executor->finish();
    }
    if (!complete) {
        // Interrupted: what was measured is stored; the rest was cancelled.
        std::lock_guard<std::mutex> lock(db_mutex);
        store.finish_run(result.run_id, "interrupted", std::nullopt, "interrupted while benchmarking");
        throw InterruptedError("interrupted while benchmarking; measured samples are stored in run " +
                               std::to_string(result.run_id));
    }
    if (db_failure) std::rethrow_exception(db_failure);
    result.benchmark_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - batch_done).count();
    result.reference_dir = reference.dir;
    for (std::size_t i = 0; i < entries.size(); ++i)
        (i < n_samples ? result.benchmarked : result.baselines).push_back(std::move(entries[i]));

    // --- Keep the fastest sample whose output was right.
    for (std::size_t i = 0; i < result.benchmarked.size(); ++i) {
        const Top5Entry &e = result.benchmarked[i];
        if (!e.measured()) continue;
        if (!result.best ||
            *e.measurement.median_ms < *result.benchmarked[*result.best].measurement.median_ms)
            result.best = i;
    }
    if (!result.best) {
        const Top5Entry &first = result.benchmarked.front();
        const std::string error = "every benchmarked sample failed (" +
                                  std::to_string(result.benchmarked.size()) + " of " +
                                  std::to_string(result.benchmarked.size()) + "); " + first.label + ": " +
                                  to_string(first.measurement.outcome) + ": " + first.measurement.error;
        fail_run(error);
        throw UserError(error);
    }
    const Top5Entry &best = result.benchmarked[*result.best];
    result.best_files = copy_sample_files(result.samples[*best.sample], opt.generator_name, opt.output_dir);
    {
        std::lock_guard<std::mutex> lock(db_mutex);
        store.finish_run(result.run_id, "finished", best.sample_id);
    }
    result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

} // namespace gpusched
