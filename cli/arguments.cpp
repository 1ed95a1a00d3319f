#include "cli/arguments.h"

#include "tuner/modes/oneshot.h"

namespace gpusched::cli {

std::string command_line_text(int argc, char **argv) {
    std::string s = "gpusched";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        s += " " + (a.find_first_of(" \"'") == std::string::npos ? a : "'" + a + "'");
    }
    return s;
}

std::map<std::string, std::string> parse_generator_params(const std::vector<std::string> &words) {
    std::map<std::string, std::string> out;
    for (const auto &w : words) {
        auto eq = w.find('=');
        if (eq == std::string::npos || eq == 0)
            throw UserError("generator param '" + w + "' must be written key=value");
        out[w.substr(0, eq)] = w.substr(eq + 1);
    }
    return out;
}

} // namespace gpusched::cli
