#include "tuner/bundle_c_library.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace gpusched {

namespace {

std::string env_or_empty(const char *name) {
    const char *v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::vector<std::string> split_path(const std::string &path) {
    std::vector<std::string> dirs;
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');)
        if (!dir.empty()) dirs.push_back(dir);
    return dirs;
}

} // namespace

std::optional<BundleCLibrary> bundle_c_library() {
    BundleCLibrary c;
    c.loader = env_or_empty("GPUSCHED_BUNDLE_LOADER");
    if (c.loader.empty()) return std::nullopt;
    c.library_path = env_or_empty("GPUSCHED_BUNDLE_LIBRARY_PATH");
    c.runtime_dirs = split_path(env_or_empty("GPUSCHED_BUNDLE_RUNTIME_PATH"));
    // The loader's own folder is the C runtime's: never left off.
    const std::string c_runtime = std::filesystem::path(c.loader).parent_path().string();
    if (c.runtime_dirs.empty() || c.runtime_dirs.front() != c_runtime)
        c.runtime_dirs.insert(c.runtime_dirs.begin(), c_runtime);
    if (c.library_path.empty()) c.library_path = c_runtime;
    return c;
}

std::vector<std::string> through_bundle_loader(std::vector<std::string> argv) {
    const auto c = bundle_c_library();
    if (!c || argv.empty()) return argv;
    // --argv0 (glibc 2.33 and later): the program's argv[0] stays its own
    // path, not the loader's, so its usage lines and errors name it.
    // The user's LD_LIBRARY_PATH (a CUDA toolkit's folder) still counts:
    // --library-path takes its place for this process.
    std::string library_path = c->library_path;
    if (const char *user = std::getenv("LD_LIBRARY_PATH"); user && *user)
        library_path += std::string(":") + user;
    std::vector<std::string> out = {c->loader, "--library-path", library_path, "--argv0", argv.front()};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

std::vector<std::string> bundle_c_library_link_flags() {
    const auto c = bundle_c_library();
    if (!c) return {};
    // -B: the start files (Scrt1.o, crti.o, crtn.o) of the bundle's C
    // library come before the machine's; -L: its link scripts (libc.so,
    // libm.so, naming the shared objects beside them) and, when chosen, the
    // C++ runtime's libstdc++.so before the compiler's own.
    std::vector<std::string> flags = {"-B" + c->runtime_dirs.front() + "/"};
    std::string rpath;
    for (const auto &dir : c->runtime_dirs) {
        flags.push_back("-L" + dir);
        rpath += (rpath.empty() ? "" : ":") + dir;
    }
    flags.push_back("-Wl,--dynamic-linker=" + c->loader);
    // DT_RPATH (not RUNPATH), which also serves the libraries those load:
    // the machine's libOpenCL and POCL then share the bundle's libstdc++.
    flags.push_back("-Wl,--disable-new-dtags,-rpath," + rpath);
    return flags;
}

} // namespace gpusched
