#include "costmodel/schedule_features.h"

namespace gpusched {

const char *schedule_feature_name(ScheduleFeature f) {
    // Generated from the same X-macro as the enum, so names and order cannot drift.
    static const char *const kNames[] = {
#define GPUSCHED_X(name) #name,
        GPUSCHED_SCHEDULE_FEATURES(GPUSCHED_X)
#undef GPUSCHED_X
    };
    const int i = static_cast<int>(f);
    if (i < 0 || i >= kNumScheduleFeatures) return "<invalid schedule feature>";
    return kNames[i];
}

ScheduleFeatures inlined_stage_row(double total_calls) {
    using F = ScheduleFeature;
    ScheduleFeatures f;
    f[F::inlined_calls] = total_calls;
    f[F::num_scalars] = total_calls;
    f[F::points_computed_total] = total_calls;
    f[F::points_computed_per_thread] = total_calls;
    f[F::num_blocks] = 1;
    f[F::num_tasks] = 1;
    f[F::num_threads_per_block] = 1;
    return f;
}

} // namespace gpusched
