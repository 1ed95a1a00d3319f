#include "tuner/modes/nightly/run_lock.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace gpusched {

namespace {

std::string holder_text(pid_t pid) {
    return pid > 0 ? "process " + std::to_string(pid) : "another process";
}

pid_t read_pid(int fd) {
    char buf[32] = {};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    return static_cast<pid_t>(std::strtol(buf, nullptr, 10));
}

} // namespace

LockHeldError::LockHeldError(const std::string &p, pid_t h)
    : std::runtime_error("another gpusched nightly (" + holder_text(h) + ") holds the lock '" + p +
                         "'; this one exits without doing anything"),
      path(p), holder(h) {}

RunLock::RunLock(const std::string &path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UserError("cannot open the lock file '" + path + "': " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        const pid_t holder = read_pid(fd_);
        ::close(fd_);
        fd_ = -1;
        if (err == EWOULDBLOCK) throw LockHeldError(path, holder);
        throw UserError("cannot lock '" + path + "': " + std::strerror(err));
    }
    // Ours now: say who holds it, for the instance that will be refused.
    const std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(fd_, 0) != 0 ||
        pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        // The lock holds without the pid; a refused instance just cannot name us.
    }
}

RunLock::~RunLock() {
    if (fd_ >= 0) ::close(fd_); // releases the flock
}

} // namespace gpusched
