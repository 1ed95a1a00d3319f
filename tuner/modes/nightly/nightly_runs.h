#pragma once
// The runs a nightly pipeline started on earlier nights, found in the
// database by the tag every one of them carries in its config
// (started_by: "nightly NAME", tuner/modes/autotune.h): the unfinished Autotune run
// to continue tonight, and how many runs came before (new runs are seeded
// apart from them, or a new run with the same seed would search the same
// schedules again).
//
// Only the newest run of the pipeline on this device kind is ever
// continued, and only when it can be: the same generator build (its bytes
// are hashed into the pipeline row) and the same batch size and iteration
// count as tonight's config. Otherwise tonight starts a new run and the
// reason is logged.

#include <cstdint>
#include <optional>
#include <string>

#include "tuner/modes/nightly/nightly_config.h"

namespace gpusched {

// The tag stored in the runs of a nightly pipeline.
std::string nightly_run_tag(const NightlyPipeline &pipeline);

struct NightlyRunHistory {
    int64_t earlier_runs = 0;          // of this pipeline and device kind, any status
    std::optional<int64_t> resume_run; // the unfinished Autotune run to continue
    std::string not_resumed;           // why the newest unfinished run is not continued
};

// Reads the database (no writes; an absent file has no history).
NightlyRunHistory nightly_run_history(const std::string &db_path, const NightlyPipeline &pipeline);

} // namespace gpusched
