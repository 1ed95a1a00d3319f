#include "cli/logging.h"

#include <cstdlib>
#include <memory>
#include <vector>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace gpusched::cli {

void setup_logging(int verbosity, bool quiet, const std::string &log_file) {
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    spdlog::level::level_enum level = spdlog::level::info;
    if (quiet)
        level = spdlog::level::err;
    else if (verbosity == 1)
        level = spdlog::level::debug;
    else if (verbosity >= 2)
        level = spdlog::level::trace;
    console->set_level(level);
    // https://no-color.org: any non-empty NO_COLOR turns colour off.
    if (const char *nc = std::getenv("NO_COLOR"); nc && *nc)
        console->set_color_mode(spdlog::color_mode::never);
    console->set_pattern("%^%l%$: %v");
    std::vector<spdlog::sink_ptr> sinks{console};
    if (!log_file.empty()) {
        try {
            auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file, false);
            file->set_level(spdlog::level::trace);
            file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
            sinks.push_back(file);
        } catch (const spdlog::spdlog_ex &e) {
            throw std::runtime_error("cannot open log file '" + log_file + "': " + e.what());
        }
    }
    auto logger = std::make_shared<spdlog::logger>("gpusched", sinks.begin(), sinks.end());
    logger->set_level(spdlog::level::trace);
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
}

void add_timestamped_log_file(const std::string &log_file) {
    auto logger = spdlog::default_logger();
    for (auto &sink : logger->sinks())
        sink->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
    if (log_file.empty()) return;
    try {
        auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file, false);
        file->set_level(spdlog::level::debug);
        file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [pid %P] [%l] %v");
        logger->sinks().push_back(file);
    } catch (const spdlog::spdlog_ex &e) {
        throw std::runtime_error("cannot open log file '" + log_file + "': " + e.what());
    }
}

} // namespace gpusched::cli
