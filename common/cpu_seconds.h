#pragma once
// CPU seconds (user + system) of this process and of its children that have
// ended: what an autoscheduler's call is timed with (its record's
// cpu_seconds_autoschedule, and the side-by-side benchmark's timing plugin),
// so a scheduler that works in child processes is charged for them (gpusched's
// launch check lowered in one until session 31).

#include <sys/resource.h>

namespace gpusched {

inline double cpu_with_children_seconds() {
    struct rusage self {
    }, children{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    auto seconds = [](const timeval &t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
    return seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) +
           seconds(children.ru_stime);
}

} // namespace gpusched
