#include "tuner/report/html_text.h"

#include <cmath>
#include <cstdio>

namespace gpusched::report {

std::string escape_html(const std::string &text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string format_number(double value) {
    if (!std::isfinite(value)) return std::isnan(value) ? "NaN" : (value > 0 ? "inf" : "-inf");
    if (value == 0) return "0";
    char buf[64];
    const double mag = std::fabs(value);
    // %g switches to exponent notation below 1e-4; keep plain decimals down
    // to 1e-4 (sample times of tiny pipelines are a few microseconds).
    std::snprintf(buf, sizeof buf, mag >= 1e-4 && mag < 1e6 ? "%.4g" : "%.3g", value);
    return buf;
}

} // namespace gpusched::report
