#pragma once
// What every results report says about where and when it was made (STYLE.md:
// a figure carries the machine it ran on).

#include <string>

namespace gpusched {

// "2 cores, AMD EPYC": core count and the CPU model from /proc/cpuinfo.
std::string machine_description();

// The current time, "2026-11-21 14:25 UTC".
std::string utc_timestamp();

// The current time as stored in records, "2026-11-21T14:25:07Z".
std::string utc_iso8601();

} // namespace gpusched
