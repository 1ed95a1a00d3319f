#include "tuner/measure/executor/work_folder.h"

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

} // namespace gpusched
