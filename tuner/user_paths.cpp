#include "tuner/user_paths.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/errors.h"

namespace fs = std::filesystem;

namespace gpusched {

namespace {

std::string named(const std::string &option, const std::string &path) {
    return option + " '" + path + "'";
}

} // namespace

void check_input_file(const std::string &path, const std::string &option) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st)) throw UserError(named(option, path) + ": no such file");
    if (fs::is_directory(st)) throw UserError(named(option, path) + ": is a directory, not a file");
    std::ifstream f(path);
    if (!f) throw UserError(named(option, path) + ": cannot be read (" + std::strerror(errno) + ")");
}

void check_output_file(const std::string &path, const std::string &option) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw UserError(named(option, path) + ": is a directory, not a file");
    const fs::path parent = fs::absolute(path, ec).parent_path();
    fs::create_directories(parent, ec);
    if (!fs::is_directory(parent, ec))
        throw UserError(named(option, path) + ": its folder '" + parent.string() + "' cannot be created");
}

void check_output_folder(const std::string &path, const std::string &what) {
    std::error_code ec;
    if (fs::exists(path, ec) && !fs::is_directory(path, ec))
        throw UserError(what + " '" + path + "' is a file, not a folder");
    fs::create_directories(path, ec);
    if (ec) throw UserError("cannot create " + what + " '" + path + "': " + ec.message());
    // Created, or there already: whether this user may write in it (a
    // read-only mount, another user's folder) only a write tells.
    const std::string probe = path + "/.gpusched-write-test";
    {
        std::ofstream f(probe);
        if (!f) throw UserError(what + " '" + path + "' is not writable");
    }
    fs::remove(probe, ec);
}

} // namespace gpusched
