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

} // namespace gpusched
