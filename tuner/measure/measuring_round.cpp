#include "tuner/measure/measuring_round.h"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tuner/measure/measurement_records.h"

namespace gpusched {

PreparedWork PreparedWork::submit(std::string key, BenchmarkBinary binary) {
    PreparedWork w;
    w.then = Then::Submit;
    w.key = std::move(key);
    w.binary = std::move(binary);
    return w;
}

PreparedWork PreparedWork::adopt(std::string key, std::string label) {
    PreparedWork w;
    w.then = Then::Adopt;
    w.key = std::move(key);
    w.binary.label = std::move(label);
    return w;
}

PreparedWork PreparedWork::record(Measurement measurement) {
    PreparedWork w;
    w.then = Then::Record;
    w.measurement = std::move(measurement);
    return w;
}

PreparedWork after_build(const std::string &key, const std::string &label, const BenchmarkBuild &build,
                         const ReferenceOutputs &reference, const std::string &device_name,
                         DeviceKind device) {
    if (!reference.ok())
        return PreparedWork::record(
            not_benchmarked(label, device_name, device, MeasureOutcome::NotRun,
                            "no CPU reference to check the output against: " + reference.failure));
    if (!build.ok)
        return PreparedWork::record(
            not_benchmarked(label, device_name, device, MeasureOutcome::BuildFailed, build.error));
    BenchmarkBinary binary = build.binary;
    binary.reference_dir = reference.dir;
    return PreparedWork::submit(key, std::move(binary));
}

bool run_measuring_round(Executor &executor, const RoundPlan &plan) {
    std::mutex claim_mutex, result_mutex, keys_mutex;
    std::size_t next = 0;
    bool failed = false; // under claim_mutex: no more claims once set
    std::exception_ptr first_failure;
    std::map<std::string, std::size_t> item_of_key;

    auto fail = [&] {
        std::lock_guard<std::mutex> lock(claim_mutex);
        if (!first_failure) first_failure = std::current_exception();
        failed = true;
    };
    // Serialized, whether the measurement comes from a worker or the executor.
    auto deliver = [&](std::size_t item, const Measurement &m, const ExecutionRecord &execution) {
        try {
            std::lock_guard<std::mutex> lock(result_mutex);
            plan.measured(item, m, execution);
        } catch (...) {
            fail();
        }
    };
    auto claim = [&]() -> std::optional<std::size_t> {
        std::lock_guard<std::mutex> lock(claim_mutex);
        if (failed || next >= plan.items) return std::nullopt;
        if (plan.may_claim && !plan.may_claim(next)) {
            next = plan.items; // a stop is final for the round
            return std::nullopt;
        }
        return next++;
    };
    auto worker = [&] {
        while (const std::optional<std::size_t> item = claim()) {
            PreparedWork work;
            try {
                work = plan.prepare(*item);
            } catch (...) {
                fail();
                return;
            }
            switch (work.then) {
            case PreparedWork::Then::Nothing:
                break;
            case PreparedWork::Then::Record:
                deliver(*item, work.measurement, ExecutionRecord{});
                break;
            case PreparedWork::Then::Adopt: // a task without a binary (PreparedWork::adopt)
            case PreparedWork::Then::Submit: {
                {
                    std::lock_guard<std::mutex> lock(keys_mutex);
                    item_of_key[work.key] = *item;
                }
                executor.submit({work.key, std::move(work.binary)});
                break;
            }
            }
        }
    };

    executor.begin(plan.scope,
                   [&](const BenchmarkTask &task, const Measurement &m, const ExecutionRecord &execution) {
                       std::size_t item = 0;
                       {
                           std::lock_guard<std::mutex> lock(keys_mutex);
                           item = item_of_key.at(task.key);
                       }
                       deliver(item, m, execution);
                   });
    const std::size_t workers =
        std::min<std::size_t>(static_cast<std::size_t>(std::max(1, plan.jobs)), plan.items);
    std::vector<std::thread> threads;
    for (std::size_t j = 0; j < workers; ++j)
        threads.emplace_back(worker);
    for (auto &t : threads)
        t.join();
    const bool complete = executor.finish();
    if (first_failure) std::rethrow_exception(first_failure);
    return complete;
}

} // namespace gpusched
