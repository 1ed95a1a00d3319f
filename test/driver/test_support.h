#pragma once
// Shared by the driver's tests: temporary directories, files, and running
// the real gpusched binary.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/subprocess.h"

namespace gpusched::test {

class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;

    const std::string &path() const { return path_; }
    std::string operator/(const std::string &name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Sets environment variables for the lifetime of the object (for code
// under test that reads them, or starts processes with this environment),
// then restores what was there.
class ScopedEnv {
public:
    explicit ScopedEnv(const std::map<std::string, std::string> &vars);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::string read_file(const std::string &path);
void write_file(const std::string &path, const std::string &text);

// Runs the built gpusched (GPUSCHED_BINARY) with these arguments and extra
// environment variables, with a 5 minute timeout.
ProcessResult run_gpusched(const std::vector<std::string> &args,
                           const std::map<std::string, std::string> &env = {});

// Starts the built gpusched in the background, in its own process group,
// stdout and stderr to `log`, with this process's environment plus `env`
// (which wins), so a test can signal it mid-run (SIGKILL, like a machine
// losing power) or start a second one beside it. Returns its pid; the caller
// waits for it.
int spawn_gpusched(const std::vector<std::string> &args, const std::string &log,
                   const std::map<std::string, std::string> &env = {});

} // namespace gpusched::test
