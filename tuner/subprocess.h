#pragma once
// The one way gpusched runs another program: an argv vector (never a shell
// string), extra environment variables, a wall-clock timeout, and both
// output streams captured. The child runs in its own process group so a
// timeout kills everything it started (a generator's compilers, a benchmark's
// helpers), not just the first process.
//
// Invariant: run_process never throws for anything the child does; failure
// to start, a non-zero exit, a signal and a timeout are all reported in the
// result so the caller can explain them.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

struct ProcessSpec {
    std::vector<std::string> argv;          // argv[0] is the program (a path, or a name searched in PATH)
    std::map<std::string, std::string> env; // set on top of the parent's environment
    std::optional<std::string> working_dir;
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
    std::size_t max_captured_bytes = 16u << 20; // per stream; the rest is dropped (and noted)
    // The child's address-space limit (RLIMIT_AS), inherited by its own
    // children: a process that would take the machine's memory fails its
    // allocation instead of waking the kernel's OOM killer. None: no limit.
    // Not applied where the child may be built with AddressSanitizer (this
    // driver is, or ASAN_OPTIONS is in the child's environment): ASan's
    // shadow memory needs more address space than any such limit.
    std::optional<std::uint64_t> memory_limit_bytes;
    // Called on the calling thread after each chunk of stdout arrives, while
    // the child runs (a benchmark harness announces each finished sample).
    // Returns true once the child has delivered everything it was started
    // for: from then on it has exit_grace to exit before its group is killed
    // (ProcessResult::ended_after_its_work), so a runtime whose teardown hangs
    // after main (an OpenCL driver's destructors releasing its context) costs
    // seconds, not the whole timeout. Must not throw.
    std::function<bool()> on_stdout;
    std::chrono::milliseconds exit_grace{std::chrono::seconds(5)};
};

struct ProcessResult {
    bool started = false;    // false: could not exec (see start_error)
    std::string start_error; // why it did not start
    bool timed_out = false;  // killed by us after the timeout
    // Killed by us after on_stdout said its work was done and exit_grace
    // passed without it exiting: everything it was for had arrived.
    bool ended_after_its_work = false;
    int exit_code = -1;  // valid when exited normally
    int term_signal = 0; // non-zero when killed by a signal
    std::string out;     // captured stdout
    std::string err;     // captured stderr
    double wall_seconds = 0;

    bool ok() const { return started && !timed_out && term_signal == 0 && exit_code == 0; }
    // "exit status 3", "killed by signal 11 (Segmentation fault)", "timed out after 30 s", ...
    std::string describe_failure() const;
};

ProcessResult run_process(const ProcessSpec &spec);

// Searches PATH (and then the extra directories) for an executable name.
std::optional<std::string> find_executable(const std::string &name,
                                           const std::vector<std::string> &extra_dirs = {});

// The last non-empty lines of a process's output, for one-line error messages.
std::string last_lines(const std::string &text, int max_lines);

} // namespace gpusched
