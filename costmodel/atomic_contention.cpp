#include "costmodel/atomic_contention.h"

#include <algorithm>
#include <cmath>

#include "costmodel/serial_chain.h"

namespace gpusched {
namespace {

// Measured on an H100 (benchmarks/atomic_contention, docs/costmodel.md):
// same-address updates of a warp, one line.
constexpr double kOneLineIntNs = 0.73;
constexpr double kOneLineFloatNs = 1.76;
// Spread over L lines: kLinesNs / L per update (3.0-4.7 measured, L = 8-256).
constexpr double kLinesNs = 3.5;
// The L2 applies atomics per 128-byte line.
constexpr double kLineBytes = 128;
// However many lines: about 80 G separate updates a second over the whole
// GPU (0.012-0.018 ns per update with 4096 lines or more).
constexpr double kThroughputNs = 0.012;

} // namespace

AtomicStore atomic_store_of(const PipelineFeatures &p) {
    // Bytes per scalar type bucket (ScalarTypeBucket order).
    constexpr double kBytes[kNumScalarTypes] = {1, 1, 2, 4, 8, 4, 8};
    AtomicStore s;
    for (int pattern = 0; pattern < kNumAccessPatterns; ++pattern) {
        for (int t = 0; t < kNumScalarTypes; ++t) {
            const auto type = static_cast<ScalarTypeBucket>(t);
            if (!(p.access(static_cast<AccessPattern>(pattern), AccessType::Store, type) > 0)) continue;
            s.bytes_per_point = std::max(s.bytes_per_point, kBytes[t]);
            if (type == ScalarTypeBucket::Float || type == ScalarTypeBucket::Double) s.floating = true;
        }
    }
    return s;
}

double atomic_contention_ms(const ScheduleFeatures &f, const AtomicStore &store) {
    using F = ScheduleFeature;
    if (!(store.bytes_per_point > 0 && f[F::bytes_at_root] > 0)) return 0;
    // Atomic updates go to one allocation at root. A Func realized many
    // times (inside a kernel) may compute a point in several blocks, each
    // into its own buffer: recomputation, not contention.
    if (f[F::num_realizations] > 1) return 0;
    const double points = f[F::points_computed_total] > 0 ? f[F::points_computed_total] : f[F::num_scalars];
    const double stored_points = std::max(f[F::bytes_at_root] / store.bytes_per_point, 1.0);
    if (!(points / stored_points > 2 * points_per_thread(f, points))) return 0;
    const double lines = std::max(std::ceil(f[F::bytes_at_root] / kLineBytes), 1.0);
    const double one_line_ns = store.floating ? kOneLineFloatNs : kOneLineIntNs;
    return points * std::max(kThroughputNs, std::min(one_line_ns, kLinesNs / lines)) * 1e-6;
}

} // namespace gpusched
