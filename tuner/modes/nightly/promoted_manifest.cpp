#include "tuner/modes/nightly/promoted_manifest.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "costmodel/crc32.h"
#include "tuner/modes/nightly/atomic_file.h"

namespace gpusched {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kManifestFormat = 1;

std::optional<std::string> file_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string crc_hex(const std::string &bytes) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", crc32(bytes.data(), bytes.size()));
    return hex;
}

} // namespace

std::string promoted_manifest_path(const std::string &schedules) {
    return (fs::path(schedules) / "promoted.json").string();
}

PromotedManifest load_promoted_manifest(const std::string &schedules) {
    const std::string path = promoted_manifest_path(schedules);
    PromotedManifest m;
    const auto bytes = file_bytes(path);
    if (!bytes) return m;
    try {
        const json j = json::parse(*bytes);
        if (j.at("format").get<int>() != kManifestFormat)
            throw UserError("'" + path + "' has format " + j.at("format").dump() + ", this gpusched reads " +
                            std::to_string(kManifestFormat));
        for (const auto &[name, e] : j.at("pipelines").items()) {
            PromotedEntry p;
            p.time.device = e.at("device").get<std::string>();
            p.time.median_ms = e.at("median_ms").get<double>();
            p.time.min_ms = e.at("min_ms").get<double>();
            p.time.reps = e.at("reps").get<int64_t>();
            p.time.run_id = e.at("run_id").get<int64_t>();
            p.time.sample_id = e.at("sample_id").get<int64_t>();
            p.database = e.at("database").get<std::string>();
            p.generator_name = e.at("generator_name").get<std::string>();
            p.params = e.at("params").get<std::string>();
            p.promoted_at = e.at("promoted_at").get<std::string>();
            p.files = e.at("files").get<std::map<std::string, std::string>>();
            m.pipelines[name] = p;
        }
    } catch (const UserError &) {
        throw;
    } catch (const std::exception &e) {
        throw UserError("the promotion manifest '" + path + "' is not readable (" + e.what() +
                        "); restore it or remove it to promote afresh");
    }
    return m;
}

void save_promoted_manifest(const std::string &schedules, const PromotedManifest &m) {
    json pipelines = json::object();
    for (const auto &[name, p] : m.pipelines) {
        pipelines[name] = {{"device", p.time.device},
                           {"median_ms", p.time.median_ms},
                           {"min_ms", p.time.min_ms},
                           {"reps", p.time.reps},
                           {"noise", measurement_noise(p.time)},
                           {"run_id", p.time.run_id},
                           {"sample_id", p.time.sample_id},
                           {"database", p.database},
                           {"generator_name", p.generator_name},
                           {"params", p.params},
                           {"promoted_at", p.promoted_at},
                           {"files", p.files}};
    }
    const json j = {{"format", kManifestFormat}, {"pipelines", pipelines}};
    write_file_atomically(promoted_manifest_path(schedules), j.dump(2) + "\n");
}

bool promoted_files_intact(const std::string &schedules, const PromotedEntry &entry) {
    if (entry.files.empty()) return false;
    for (const auto &[name, crc] : entry.files) {
        const auto bytes = file_bytes((fs::path(schedules) / name).string());
        if (!bytes || crc_hex(*bytes) != crc) return false;
    }
    return true;
}

std::map<std::string, std::string> promote_schedule_files(const std::string &schedules,
                                                          const std::string &name,
                                                          const std::string &schedule_file,
                                                          const std::string &record_file) {
    std::map<std::string, std::string> files;
    const std::pair<std::string, std::string> copies[] = {{schedule_file, name + ".schedule.h"},
                                                          {record_file, name + ".gpusched.json"}};
    for (const auto &[from, to] : copies) {
        const auto bytes = file_bytes(from);
        if (!bytes) throw UserError("cannot promote '" + from + "': it cannot be read");
        write_file_atomically((fs::path(schedules) / to).string(), *bytes);
        files[to] = crc_hex(*bytes);
    }
    return files;
}

} // namespace gpusched
