#include "tuner/measure/runner/cache_flush_size.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace gpusched {
namespace fs = std::filesystem;

int64_t flush_bytes_for_cache(int64_t last_level_cache_bytes) {
    return last_level_cache_bytes > 0 ? 2 * last_level_cache_bytes : kFallbackFlushBytes;
}

namespace {

std::string first_word_of_file(const fs::path &file) {
    std::ifstream f(file);
    std::string word;
    f >> word;
    return word;
}

// "32768K", "1M", "512": the kernel's cache size format.
int64_t parse_cache_size(const std::string &text) {
    std::size_t used = 0;
    int64_t value = 0;
    try {
        value = std::stoll(text, &used);
    } catch (...) {
        return 0;
    }
    const std::string unit = text.substr(used);
    if (unit == "K") return value << 10;
    if (unit == "M") return value << 20;
    if (unit == "G") return value << 30;
    return unit.empty() ? value : 0;
}

} // namespace

int64_t last_level_cache_from_sysfs(const std::string &cache_dir) {
    std::error_code ec;
    int best_level = 0;
    int64_t best_bytes = 0;
    for (fs::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename().string().rfind("index", 0) != 0) continue;
        if (first_word_of_file(it->path() / "type") == "Instruction") continue;
        int level = 0;
        try {
            level = std::stoi(first_word_of_file(it->path() / "level"));
        } catch (...) {
            continue;
        }
        const int64_t bytes = parse_cache_size(first_word_of_file(it->path() / "size"));
        if (bytes > 0 && level > best_level) {
            best_level = level;
            best_bytes = bytes;
        }
    }
    return best_bytes;
}

int64_t host_last_level_cache_bytes() {
    if (int64_t bytes = last_level_cache_from_sysfs("/sys/devices/system/cpu/cpu0/cache"); bytes > 0)
        return bytes;
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (long bytes = sysconf(_SC_LEVEL3_CACHE_SIZE); bytes > 0) return bytes;
#endif
    return 0;
}

} // namespace gpusched
