#include "tuner/subprocess.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace gpusched {

// ASan reserves terabytes of address space for its shadow memory at start:
// under an address-space limit (RLIMIT_AS) an instrumented child aborts
// before main. A driver built with AddressSanitizer (GPUSCHED_SANITIZE) runs
// generators built the same way; a release driver runs instrumented ones
// when scripts/sanitizer-fuzz.sh --driver points it at them, and that script
// sets ASAN_OPTIONS for them. Either way children run without the limit.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
namespace {

bool may_be_address_sanitized(const std::vector<std::string> &child_env) {
    if (kAddressSanitizer) return true;
    return std::any_of(child_env.begin(), child_env.end(),
                       [](const std::string &e) { return e.rfind("ASAN_OPTIONS=", 0) == 0; });
}

// Where a child that cannot start writes its errno, between fork and exec.
constexpr int kExecReportFd = 3;

// Closes every descriptor from `first` on, in a child between fork and exec
// (only async-signal-safe calls): close_range where the kernel has it,
// else each number up to the descriptor limit.
void close_descriptors_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, static_cast<unsigned>(first), ~0u, 0u) == 0) return;
#endif
    const long limit = sysconf(_SC_OPEN_MAX);
    for (long fd = first; fd < (limit > 0 && limit < 65536 ? limit : 65536); ++fd)
        close(static_cast<int>(fd));
}

void close_pair(const int fds[2]) {
    close(fds[0]);
    close(fds[1]);
}

// Process groups of the children running now, so that gpusched, when it is
// interrupted or terminated, takes them down with it instead of leaving
// generators and compilers running. Lock-free slots: the signal handler reads
// them.
constexpr int kMaxLiveChildren = 256;
std::atomic<pid_t> live_groups[kMaxLiveChildren];

void remember_group(pid_t pgid) {
    for (auto &slot : live_groups) {
        pid_t empty = 0;
        if (slot.compare_exchange_strong(empty, pgid)) return;
    }
}

void forget_group(pid_t pgid) {
    for (auto &slot : live_groups) {
        pid_t expected = pgid;
        if (slot.compare_exchange_strong(expected, 0)) return;
    }
}

extern "C" void kill_children_and_reraise(int sig) {
    for (auto &slot : live_groups) {
        const pid_t g = slot.load();
        if (g > 0) kill(-g, SIGKILL);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

// Installed once, and only over the default disposition: a program that
// handles these signals itself keeps its handlers.
void install_signal_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction old {};
            sigaction(sig, nullptr, &old);
            if (old.sa_handler != SIG_DFL) continue;
            struct sigaction sa {};
            sa.sa_handler = kill_children_and_reraise;
            sigemptyset(&sa.sa_mask);
            sigaction(sig, &sa, nullptr);
        }
    });
}

// A timed-out child first gets SIGTERM, so a child that runs children of its
// own (a nested gpusched) can take them down, then SIGKILL.
constexpr auto kTerminationGrace = std::chrono::seconds(2);

void terminate_group(pid_t pid, int &status) {
    kill(-pid, SIGTERM);
    const auto give_up = std::chrono::steady_clock::now() + kTerminationGrace;
    while (std::chrono::steady_clock::now() < give_up) {
        if (waitpid(pid, &status, WNOHANG) == pid) return;
        usleep(10000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
}

// The child's environment: ours plus the spec's overrides.
std::vector<std::string> build_environment(const std::map<std::string, std::string> &extra) {
    std::vector<std::string> env;
    for (char **e = environ; e && *e; ++e) {
        std::string entry(*e);
        auto eq = entry.find('=');
        std::string key = entry.substr(0, eq);
        if (extra.count(key)) continue;
        env.push_back(std::move(entry));
    }
    for (const auto &[k, v] : extra)
        env.push_back(k + "=" + v);
    return env;
}

void append_capped(std::string &dst, const char *buf, std::size_t n, std::size_t cap, bool &truncated) {
    if (dst.size() >= cap) {
        truncated = true;
        return;
    }
    std::size_t room = cap - dst.size();
    dst.append(buf, n < room ? n : room);
    if (n > room) truncated = true;
}

} // namespace

std::string ProcessResult::describe_failure() const {
    std::ostringstream s;
    if (!started) {
        s << "could not start: " << start_error;
    } else if (timed_out) {
        s << "timed out after " << static_cast<long>(wall_seconds + 0.5) << " s";
    } else if (ended_after_its_work) {
        s << "killed after its work was done: it did not exit";
    } else if (term_signal != 0) {
        s << "killed by signal " << term_signal << " (" << strsignal(term_signal) << ")";
    } else if (exit_code != 0) {
        s << "exit status " << exit_code;
    } else {
        s << "succeeded";
    }
    return s.str();
}

std::optional<std::string> find_executable(const std::string &name,
                                           const std::vector<std::string> &extra_dirs) {
    auto executable = [](const std::string &p) {
        struct stat st;
        return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
    };
    if (name.find('/') != std::string::npos) {
        if (executable(name)) return name;
        return std::nullopt;
    }
    std::vector<std::string> dirs;
    if (const char *path = getenv("PATH")) {
        std::stringstream ss(path);
        std::string d;
        while (std::getline(ss, d, ':'))
            if (!d.empty()) dirs.push_back(d);
    }
    dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
    for (const auto &d : dirs) {
        std::string p = d + "/" + name;
        if (executable(p)) return p;
    }
    return std::nullopt;
}

std::string last_lines(const std::string &text, int max_lines) {
    std::vector<std::string> lines;
    std::stringstream ss(text);
    std::string line;
    while (std::getline(ss, line)) {
        if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    }
    std::string out;
    int start = static_cast<int>(lines.size()) - max_lines;
    for (int i = start < 0 ? 0 : start; i < static_cast<int>(lines.size()); ++i) {
        if (!out.empty()) out += "\n";
        out += lines[i];
    }
    return out;
}

namespace {

// The child's side of run_process, between fork and exec: its own process
// group (a timeout kills the whole tree), death with the driver, the
// pipes, the limits; an exec that fails reports its errno on exec_pipe.
[[noreturn]] void exec_child(const ProcessSpec &spec, const std::string &program, pid_t parent,
                             const int out_pipe[2], const int err_pipe[2], const int exec_pipe[2],
                             std::vector<char *> &argvp, std::vector<char *> &envp,
                             std::optional<std::uint64_t> address_space_limit) {
    // Child: own process group, so a timeout can kill the whole tree.
    setpgid(0, 0);
    // Dies with the driver, even a SIGKILLed one: a resumed run must not
    // find an orphan of the killed one still writing into a sample's
    // directory. (Its own children, a compiler's passes, are not covered;
    // they are short and write only into that directory.)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    // Nothing else of the driver's reaches the program: not the descriptors
    // it inherited without close-on-exec, nor a file or pipe another thread
    // opened a moment ago (a child holding a pipe keeps that run's output
    // open after its own child has exited). The exec report moves to 3.
    if (exec_pipe[1] != kExecReportFd) dup2(exec_pipe[1], kExecReportFd);
    fcntl(kExecReportFd, F_SETFD, FD_CLOEXEC);
    close_descriptors_from(kExecReportFd + 1);
    if (address_space_limit) {
        const struct rlimit limit = {*address_space_limit, *address_space_limit};
        setrlimit(RLIMIT_AS, &limit);
    }
    if (spec.working_dir && chdir(spec.working_dir->c_str()) != 0) {
        int e = errno;
        (void)!write(kExecReportFd, &e, sizeof e);
        _exit(127);
    }
    execve(program.c_str(), argvp.data(), envp.data());
    int e = errno;
    (void)!write(kExecReportFd, &e, sizeof e);
    _exit(127);
}

// Reads both streams into r until both close or the deadline passes;
// spec.on_stdout after each stdout chunk. Once on_stdout says the work is
// done, the deadline moves up to spec.exit_grace from then (work_done).
void read_output(const ProcessSpec &spec, pollfd fds[2], std::chrono::steady_clock::time_point &deadline,
                 bool &work_done, ProcessResult &r, bool &out_trunc, bool &err_trunc) {
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            (work_done ? r.ended_after_its_work : r.timed_out) = true;
            break;
        }
        int wait_ms =
            static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
        int n = poll(fds, 2, wait_ms > 1000 ? 1000 : wait_ms);
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            } else if (i == 0) {
                append_capped(r.out, buf, static_cast<std::size_t>(got), spec.max_captured_bytes, out_trunc);
                if (spec.on_stdout && spec.on_stdout() && !work_done) {
                    work_done = true;
                    deadline = std::min(deadline, std::chrono::steady_clock::now() + spec.exit_grace);
                }
            } else {
                append_capped(r.err, buf, static_cast<std::size_t>(got), spec.max_captured_bytes, err_trunc);
            }
        }
    }
}

} // namespace

ProcessResult run_process(const ProcessSpec &spec) {
    ProcessResult r;
    if (spec.argv.empty()) {
        r.start_error = "empty command line";
        return r;
    }
    auto program = find_executable(spec.argv[0]);
    if (!program) {
        r.start_error = "'" + spec.argv[0] + "' not found or not executable";
        return r;
    }

    // Close-on-exec from birth: the driver's threads start children
    // concurrently, and a pipe end inherited by another thread's child would
    // keep this child's output open until that one exits (its read loop
    // would wait for the other child, or for the timeout). The child's dup2
    // onto stdout and stderr makes its own ends survive its exec.
    int pipes[3][2];
    auto close_pipes = [&](int count) {
        for (int i = 0; i < count; i++)
            close_pair(pipes[i]);
    };
    for (int i = 0; i < 3; i++) {
        if (pipe2(pipes[i], O_CLOEXEC) != 0) {
            r.start_error = std::string("pipe: ") + strerror(errno);
            close_pipes(i);
            return r;
        }
    }
    int *const out_pipe = pipes[0], *const err_pipe = pipes[1], *const exec_pipe = pipes[2];

    std::vector<std::string> env = build_environment(spec.env);
    std::vector<char *> envp, argvp;
    for (auto &e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv = spec.argv;
    for (auto &a : argv)
        argvp.push_back(a.data());
    argvp.push_back(nullptr);

    const std::optional<std::uint64_t> address_space_limit =
        may_be_address_sanitized(env) ? std::nullopt : spec.memory_limit_bytes;

    install_signal_handlers();
    auto t0 = std::chrono::steady_clock::now();
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        r.start_error = std::string("fork: ") + strerror(errno);
        close_pipes(3);
        return r;
    }
    if (pid == 0)
        exec_child(spec, *program, parent, out_pipe, err_pipe, exec_pipe, argvp, envp, address_space_limit);
    setpgid(pid, pid); // also from the parent, to win the race with kill()
    remember_group(pid);
    close(out_pipe[1]);
    close(err_pipe[1]);
    close(exec_pipe[1]);

    int exec_errno = 0;
    if (read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
        close(exec_pipe[0]);
        close(out_pipe[0]);
        close(err_pipe[0]);
        waitpid(pid, nullptr, 0);
        forget_group(pid);
        r.start_error = "'" + *program + "': " + strerror(exec_errno);
        return r;
    }
    close(exec_pipe[0]);
    r.started = true;

    bool out_trunc = false, err_trunc = false;
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    auto deadline = t0 + spec.timeout;
    bool work_done = false;
    read_output(spec, fds, deadline, work_done, r, out_trunc, err_trunc);

    int status = 0;
    if (r.timed_out || r.ended_after_its_work) {
        terminate_group(pid, status);
    } else {
        // Output closed; the child may still be running until the deadline.
        while (true) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) break;
            if (std::chrono::steady_clock::now() >= deadline) {
                (work_done ? r.ended_after_its_work : r.timed_out) = true;
                terminate_group(pid, status);
                break;
            }
            usleep(2000);
        }
    }
    for (auto &f : fds)
        if (f.fd >= 0) close(f.fd);
    // Anything the child left behind in its group goes with it.
    kill(-pid, SIGKILL);
    forget_group(pid);

    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.timed_out && !r.ended_after_its_work) {
        if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
    }
    if (out_trunc) r.out += "\n[gpusched: output truncated]\n";
    if (err_trunc) r.err += "\n[gpusched: output truncated]\n";
    return r;
}

} // namespace gpusched
