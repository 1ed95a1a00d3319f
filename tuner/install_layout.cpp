#include "tuner/install_layout.h"

#include <filesystem>

namespace gpusched {
namespace fs = std::filesystem;

std::string running_executable_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

std::string installed_pkglib_dir() {
    const std::string dir = running_executable_dir();
    if (dir.empty()) return {};
    return (fs::path(dir) / GPUSCHED_INSTALL_PKGLIBDIR_FROM_BINDIR).lexically_normal().string();
}

} // namespace gpusched
