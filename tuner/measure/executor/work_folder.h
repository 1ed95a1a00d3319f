#pragma once
// The shared work folder of the slurm executor: the only thing the driver
// and the nodes share. The driver writes, per round (scope, one per tuning
// run):
//
//   <work>/<scope>/manifest.json          every task, its attempts (array job,
//                                         index, Slurm state and reason): what a
//                                         resumed driver adopts
//   <work>/<scope>/tasks/<id>/task.json   what to run: label, target, device,
//                                         timing, input seed
//   <work>/<scope>/tasks/<id>/bench       the benchmark executable, copied
//   <work>/<scope>/references/<n>/        the CPU reference outputs, copied once
//   <work>/<scope>/arrays/<n>.json        array n: element i runs task tasks[i]
//   <work>/<scope>/arrays/<n>.sh          its sbatch script (exec gpusched worker)
//
// and each job writes only
//
//   <work>/<scope>/tasks/<id>/attempt-<k>/   the benchmark's outputs
//   <work>/<scope>/results/<id>.json         its result, written to a temporary
//                                            name and renamed, so a reader sees a
//                                            whole file or none
//   <work>/<scope>/logs/<job>_<index>.out    the job's stdout and stderr
//
// Invariants: every file is written whole (temporary + rename); a result
// file, once there, is never removed by the driver, so a node that dies
// after writing it loses nothing; paths inside the files are relative to
// the scope folder, so the folder may be mounted elsewhere on the nodes.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tuner/measure/runner/runner.h"

namespace gpusched {

struct WorkFolder {
    std::string scope_dir; // <work>/<scope>, absolute

    std::string manifest() const { return scope_dir + "/manifest.json"; }
    std::string task_dir(int64_t id) const { return scope_dir + "/tasks/" + std::to_string(id); }
    std::string task_spec(int64_t id) const { return task_dir(id) + "/task.json"; }
    std::string result(int64_t id) const { return scope_dir + "/results/" + std::to_string(id) + ".json"; }
    std::string array_file(int64_t n) const { return scope_dir + "/arrays/" + std::to_string(n) + ".json"; }
    std::string array_script(int64_t n) const { return scope_dir + "/arrays/" + std::to_string(n) + ".sh"; }
    std::string log(const std::string &job, int index) const {
        return scope_dir + "/logs/" + job + "_" + std::to_string(index) + ".out";
    }
};

// What a job needs to benchmark one task, as task.json holds it.
struct TaskSpec {
    int64_t id = 0;
    std::string key, label, target;
    std::string function_name; // the sample's pipeline function in its shared object (bench.so)
    uint64_t input_seed = 1;
    std::string reference; // relative to the scope folder; empty: no output check
    DeviceKind device = DeviceKind::OpenCl;
    TimingOptions timing;
    nlohmann::json to_json() const;
    static TaskSpec from_json(const nlohmann::json &j);
};

// Writes path whole: a temporary file beside it, then rename. Throws
// std::runtime_error naming the path when it cannot.
void write_json_atomically(const std::string &path, const nlohmann::json &value);

// The parsed file, or nullopt when it is missing or not (yet) valid JSON.
std::optional<nlohmann::json> read_json_file(const std::string &path);

} // namespace gpusched
