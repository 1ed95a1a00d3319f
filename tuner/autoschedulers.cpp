#include "tuner/autoschedulers.h"

#include <cstdlib>
#include <filesystem>

#include "tuner/install_layout.h"

namespace gpusched {
namespace fs = std::filesystem;

std::string halide_plugin_dir() {
    if (const char *env = std::getenv("GPUSCHED_HALIDE_PLUGIN_DIR"); env && *env) return env;
    return GPUSCHED_HALIDE_PLUGIN_DIR;
}

std::string locate_gpusched_plugin() {
    if (const char *env = std::getenv("GPUSCHED_PLUGIN"); env && *env) return env;
    const std::string dir = running_executable_dir();
    const std::vector<std::string> candidates = {
        installed_pkglib_dir() + "/libgpusched_autoscheduler.so", // install tree (tuner/install_layout.h)
        dir + "/../core/libgpusched_autoscheduler.so",            // build tree: build/cli/gpusched
        dir + "/libgpusched_autoscheduler.so",
#ifdef GPUSCHED_BUILD_PLUGIN_PATH
        GPUSCHED_BUILD_PLUGIN_PATH,
#endif
    };
    for (const auto &c : candidates) {
        std::error_code ec;
        if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
    }
    return {};
}

std::optional<ScheduleSource> find_schedule_source(const std::string &name) {
    ScheduleSource s;
    s.name = name;
    if (name == "gpusched") {
        s.plugin_path = locate_gpusched_plugin();
        s.halide_name = "gpusched";
        s.searches = true;
        s.description = "gpusched's search (Anderson et al. 2021)";
        return s;
    }
    if (name == "li2018") {
        s.plugin_path = halide_plugin_dir() + "/libautoschedule_li2018.so";
        s.halide_name = "Li2018";
        s.description = "Halide 14's Li2018 GPU autoscheduler (baseline)";
        return s;
    }
    if (name == "naive" || name == "manual") {
        s.schedule_param = name;
        s.description = name == "naive" ? "every Func compute_root with a 16x16 gpu_tile (the floor)"
                                        : "the generator's expert hand-written GPU schedule";
        return s;
    }
    return std::nullopt;
}

std::vector<std::string> schedule_source_names() { return {"gpusched", "li2018", "naive", "manual"}; }

} // namespace gpusched
