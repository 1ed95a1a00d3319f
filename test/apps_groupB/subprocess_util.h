// Running a subprocess from the group B app tests: argv vector (no shell),
// stdout and stderr captured to a log file, a timeout after which the child
// is killed. Header-only: two test executables use it.
#pragma once

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <signal.h>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace appsB {

struct ProcessResult {
    int exit_code = -1;  // -1 when killed by a signal or timed out
    bool timed_out = false;
    std::string output;  // stdout and stderr together
};

inline std::string read_file(const std::filesystem::path &p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline ProcessResult run_process(const std::vector<std::string> &argv, const std::filesystem::path &log, int timeout_s) {
    ProcessResult result;
    pid_t pid = fork();
    if (pid < 0) {
        throw std::runtime_error("fork failed for " + argv.at(0));
    }
    if (pid == 0) {
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        std::vector<char *> args;
        for (const std::string &a : argv) {
            args.push_back(const_cast<char *>(a.c_str()));
        }
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int status = 0;
    while (true) {
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) {
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            result.timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!result.timed_out && WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    }
    result.output = read_file(log);
    return result;
}

}  // namespace appsB
