#include "tuner/measure/executor/worker.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "common/elapsed.h"
#include "tuner/measure/executor/work_folder.h"
#include "tuner/measure/runner/device_traits.h"

namespace gpusched {
namespace fs = std::filesystem;

namespace {

std::string env_or(const char *name, const std::string &fallback) {
    const char *v = std::getenv(name);
    return v ? v : fallback;
}

std::string host_name() {
    char buf[256] = {};
    return ::gethostname(buf, sizeof buf - 1) == 0 ? buf : "";
}

} // namespace

int run_worker(const std::string &scope_dir, int64_t array, std::optional<int> index) {
    const auto t0 = std::chrono::steady_clock::now();
    const double started_at = epoch_seconds(); // beside the driver's submitted_at: queue and launch time
    const WorkFolder wf{fs::absolute(scope_dir).string()};
    if (!index) {
        const char *id = std::getenv("SLURM_ARRAY_TASK_ID");
        if (!id) {
            std::cerr
                << "gpusched worker: SLURM_ARRAY_TASK_ID is not set (give --index outside a job array)\n";
            return kWorkerBadTask;
        }
        index = std::atoi(id);
    }
    const auto arr = read_json_file(wf.array_file(array));
    if (!arr || !arr->contains("tasks") || *index < 0 || *index >= static_cast<int>((*arr)["tasks"].size())) {
        std::cerr << "gpusched worker: " << wf.array_file(array) << " names no task at index " << *index
                  << "\n";
        return kWorkerBadTask;
    }
    const auto &element = (*arr)["tasks"][static_cast<std::size_t>(*index)];
    const int64_t task_id = element.at("task").get<int64_t>();
    const int attempt = element.at("attempt").get<int>();
    const auto spec_json = read_json_file(wf.task_spec(task_id));
    if (!spec_json) {
        std::cerr << "gpusched worker: cannot read " << wf.task_spec(task_id) << "\n";
        return kWorkerBadTask;
    }
    TaskSpec spec;
    try {
        spec = TaskSpec::from_json(*spec_json);
    } catch (const std::exception &e) {
        std::cerr << "gpusched worker: " << wf.task_spec(task_id) << " is not a task: " << e.what() << "\n";
        return kWorkerBadTask;
    }
    std::cout << "gpusched worker: task " << task_id << " (" << spec.label << "), attempt " << attempt
              << ", node " << host_name() << std::endl;
    if (attempt == 1 && env_or("GPUSCHED_WORKER_FAIL_FIRST_ATTEMPT", "") == spec.label) {
        std::cerr << "gpusched worker: failing " << spec.label
                  << "'s first attempt on purpose (GPUSCHED_WORKER_FAIL_FIRST_ATTEMPT)\n";
        return kWorkerInjectedFault;
    }

    BenchmarkBinary b;
    b.label = spec.label;
    b.executable = wf.task_dir(task_id) + "/bench";
    b.library = wf.task_dir(task_id) + "/bench.so";
    b.function_name = spec.function_name;
    b.work_dir = wf.task_dir(task_id) + "/attempt-" + std::to_string(attempt);
    b.reference_dir = spec.reference.empty() ? "" : wf.scope_dir + "/" + spec.reference;
    b.target = spec.target;
    b.input_seed = spec.input_seed;
    // This node's device, as the local runners name and drive it.
    const NodeDevice node = node_device(spec.device, host_name(), b.work_dir);
    if (!node.problem.empty()) {
        std::cerr << "gpusched worker: " << node.problem << "\n";
        return kWorkerNoDevice;
    }
    Measurement m = detail::run_benchmark_process(
        b, resolve_flush_bytes(spec.timing, node.last_level_cache_bytes), node.env);
    m.device_kind = spec.device;
    m.device = node.name;

    nlohmann::json result = {
        {"task", task_id},
        {"attempt", attempt},
        {"measurement", m.to_json()},
        {"slurm",
         {{"job_id", env_or("SLURM_JOB_ID", "")},
          {"array_job_id", env_or("SLURM_ARRAY_JOB_ID", "")},
          {"array_task_id", env_or("SLURM_ARRAY_TASK_ID", "")},
          {"node", host_name()}}},
        {"worker_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
        {"started_at", started_at},
        {"finished_at", epoch_seconds()},
    };
    try {
        write_json_atomically(wf.result(task_id), result);
    } catch (const std::exception &e) {
        std::cerr << "gpusched worker: " << e.what() << "\n";
        return kWorkerBadTask;
    }
    std::cout << "gpusched worker: " << spec.label << ": " << to_string(m.outcome)
              << (m.median_ms ? ", median " + std::to_string(*m.median_ms) + " ms" : "") << std::endl;
    return kWorkerOk;
}

} // namespace gpusched
