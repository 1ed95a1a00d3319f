#pragma once
// The device (global) memory a schedule allocates beside the pipeline's own
// inputs and outputs: every Func computed at root that is not an output, at
// its whole region (grown by what its updates touch), a reduction split's
// partials included. Shared memory and registers are on chip and not
// counted. One Shot prints it for its pick and the record keeps it
// (`device_bytes`), so a schedule that asks for a gigabyte is seen (issue 57).

#include <cstdint>

#include "core/function_dag.h"
#include "core/schedule_decisions.h"

namespace gpusched {

int64_t device_bytes(const FunctionDAG &dag, const Decisions &d);

} // namespace gpusched
