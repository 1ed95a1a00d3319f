#include "tuner/executor/work_folder.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

namespace gpusched {
namespace fs = std::filesystem;

nlohmann::json TaskSpec::to_json() const {
    return {{"id", id},
            {"key", key},
            {"label", label},
            {"target", target},
            {"function_name", function_name},
            {"input_seed", input_seed},
            {"reference", reference},
            {"device", to_string(device)},
            {"timing", gpusched::to_json(timing)}};
}

TaskSpec TaskSpec::from_json(const nlohmann::json &j) {
    TaskSpec t;
    t.id = j.at("id").get<int64_t>();
    t.key = j.at("key").get<std::string>();
    t.label = j.at("label").get<std::string>();
    t.target = j.at("target").get<std::string>();
    t.function_name = j.at("function_name").get<std::string>();
    t.input_seed = j.at("input_seed").get<uint64_t>();
    t.reference = j.at("reference").get<std::string>();
    const auto kind = parse_device_kind(j.at("device").get<std::string>());
    if (!kind) throw std::runtime_error("unknown device '" + j.at("device").get<std::string>() + "'");
    t.device = *kind;
    t.timing = timing_from_json(j.at("timing"));
    return t;
}

void write_json_atomically(const std::string &path, const nlohmann::json &value) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    // Unique per writer: the host's pid keeps two writers (driver, job) apart.
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << value.dump(1) << "\n";
        f.flush();
        if (!f) throw std::runtime_error("cannot write '" + tmp + "'");
    }
    fs::rename(tmp, path, ec);
    if (ec) throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
}

std::optional<nlohmann::json> read_json_file(const std::string &path) {
    std::ifstream f(path);
    if (!f) return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

Measurement measurement_from_json(const nlohmann::json &j) {
    Measurement m;
    auto opt = [&](const char *k) -> std::optional<double> {
        return j.contains(k) && j[k].is_number() ? std::optional<double>(j[k].get<double>()) : std::nullopt;
    };
    m.label = j.value("label", "");
    m.target = j.value("target", "");
    m.device_kind = parse_device_kind(j.value("device_kind", "opencl")).value_or(DeviceKind::OpenCl);
    m.device = j.value("device", "");
    if (j.contains("gpu_index") && j["gpu_index"].is_number()) m.gpu_index = j["gpu_index"].get<int>();
    const std::string outcome = j.value("outcome", "not run");
    m.outcome = MeasureOutcome::NotRun;
    for (MeasureOutcome o :
         {MeasureOutcome::Measured, MeasureOutcome::WrongOutput, MeasureOutcome::Crashed,
          MeasureOutcome::TimedOut, MeasureOutcome::OutOfMemory, MeasureOutcome::DeviceError,
          MeasureOutcome::BuildFailed, MeasureOutcome::NotRun})
        if (outcome == to_string(o)) m.outcome = o;
    m.error = j.value("error", "");
    m.min_ms = opt("min_ms");
    m.median_ms = opt("median_ms");
    m.max_ms = opt("max_ms");
    m.reps = j.value("reps", int64_t{0});
    m.validation = j.value("validation", "not run");
    m.validation_detail = j.value("validation_detail", "");
    m.first_call_ms = j.value("first_call_ms", 0.0);
    m.input_copy_ms = j.value("input_copy_ms", 0.0);
    m.setup_ms = j.value("setup_ms", 0.0);
    m.check_ms = j.value("check_ms", 0.0);
    m.timed_ms = j.value("timed_ms", 0.0);
    m.process_ms = j.value("process_ms", 0.0);
    m.wall_seconds = j.value("wall_seconds", 0.0);
    return m;
}

} // namespace gpusched
