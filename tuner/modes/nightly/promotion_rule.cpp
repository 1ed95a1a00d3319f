#include "tuner/modes/nightly/promotion_rule.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpusched {

double measurement_noise(const MeasuredTime &t) {
    if (!(t.median_ms > 0) || !(t.min_ms > 0) || t.min_ms > t.median_ms) return 0;
    return (t.median_ms - t.min_ms) / t.median_ms;
}

PromotionDecision decide_promotion(const MeasuredTime &c, const std::optional<MeasuredTime> &p,
                                   bool promoted_files_ok, double noise_floor) {
    PromotionDecision d;
    if (!p) {
        d.promote = true;
        d.reason =
            fmt::format("first schedule promoted for this pipeline ({:.4g} ms on {})", c.median_ms, c.device);
        return d;
    }
    if (!promoted_files_ok) {
        d.promote = true;
        d.reason = "the promoted schedule's files are missing or changed in the schedule folder; replaced";
        return d;
    }
    if (p->device != c.device) {
        d.reason =
            fmt::format("the promoted schedule was measured on {} and this one on {}: times of two devices "
                        "are never compared (remove its entry from promoted.json to start over)",
                        p->device, c.device);
        return d;
    }
    if (p->run_id == c.run_id && p->sample_id == c.sample_id) {
        d.reason = fmt::format("its best ({:.4g} ms, sample {}) is the promoted schedule already",
                               c.median_ms, c.sample_id);
        return d;
    }
    d.bar = std::max({measurement_noise(c), measurement_noise(*p), noise_floor});
    d.gain = p->median_ms > 0 ? 1 - c.median_ms / p->median_ms : 0;
    d.promote = c.median_ms < p->median_ms * (1 - d.bar);
    const std::string times = fmt::format("{:.4g} ms against the promoted {:.4g} ms (run {})", c.median_ms,
                                          p->median_ms, p->run_id);
    if (d.promote)
        d.reason = fmt::format("{:.1f}% faster, more than the noise bar of {:.1f}%: {}", 100 * d.gain,
                               100 * d.bar, times);
    else if (d.gain > 0)
        d.reason = fmt::format("{:.1f}% faster, within the noise bar of {:.1f}%: {}", 100 * d.gain,
                               100 * d.bar, times);
    else
        d.reason = fmt::format("not faster ({:.1f}% slower): {}", -100 * d.gain, times);
    return d;
}

} // namespace gpusched
