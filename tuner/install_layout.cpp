#include "tuner/install_layout.h"

#include <cstdlib>
#include <filesystem>

#include "tuner/bundle_c_library.h"

namespace gpusched {
namespace fs = std::filesystem;

std::string running_executable() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    const char *named = std::getenv("GPUSCHED_EXECUTABLE");
    if (const auto c = bundle_c_library(); c && named && *named && fs::equivalent(exe, c->loader, ec))
        return named;
    return exe.string();
}

std::string running_executable_dir() {
    const std::string exe = running_executable();
    return exe.empty() ? std::string() : fs::path(exe).parent_path().string();
}

std::string self_command() {
    if (const char *launcher = std::getenv("GPUSCHED_LAUNCHER"); launcher && *launcher) return launcher;
    const std::string exe = running_executable();
    return exe.empty() ? std::string("gpusched") : exe;
}

std::string installed_pkglib_dir() {
    const std::string dir = running_executable_dir();
    if (dir.empty()) return {};
    return (fs::path(dir) / GPUSCHED_INSTALL_PKGLIBDIR_FROM_BINDIR).lexically_normal().string();
}

} // namespace gpusched
