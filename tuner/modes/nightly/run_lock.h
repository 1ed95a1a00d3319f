#pragma once
// The nightly's lock: one instance at a time per schedule folder, so that a
// night that overruns into the next cron start is not joined by a second
// one tuning the same pipelines and promoting into the same folder.
//
// An exclusive flock(2) on a lock file, taken without waiting. The kernel
// drops it when the holder's process dies in any way (kill -9, a lost
// node), so there is no stale lock to clean up; the file itself stays and
// holds the last holder's pid, for the message a refused instance prints.
// The descriptor is close-on-exec: the generators and benchmarks the
// nightly starts must not inherit the lock and keep it alive after it dies.

#include <string>
#include <sys/types.h>

#include "common/errors.h"

namespace gpusched {

// Another instance holds the lock.
class LockHeldError : public std::runtime_error {
public:
    LockHeldError(const std::string &path, pid_t holder);
    std::string path;
    pid_t holder = 0; // 0 when the file did not name one
};

class RunLock {
public:
    // Takes the lock or throws LockHeldError at once; UserError when the
    // file cannot be opened.
    explicit RunLock(const std::string &path);
    ~RunLock();
    RunLock(const RunLock &) = delete;
    RunLock &operator=(const RunLock &) = delete;

    const std::string &path() const { return path_; }

private:
    std::string path_;
    int fd_ = -1;
};

} // namespace gpusched
