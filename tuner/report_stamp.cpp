#include "tuner/report_stamp.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <thread>

namespace gpusched {

std::string machine_description() {
    std::string cpu;
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);) {
        if (line.rfind("model name", 0) == 0) {
            cpu = line.substr(line.find(':') + 2);
            break;
        }
    }
    return std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " cores, " +
           (cpu.empty() ? "unknown CPU" : cpu);
}

std::string utc_timestamp() {
    std::time_t t = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    return date;
}

std::string utc_iso8601() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

} // namespace gpusched
