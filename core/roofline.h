#pragma once
// A lower bound on any schedule's time for a pipeline on a GPU (issue 56):
// the least bytes it must move, every input read once and every output
// written once, at the profile's DRAM bandwidth, and its arithmetic, each
// stage's operations once per point of its Func's region (no recompute), at
// the profile's peak FP32 rate; the bound is the larger of the two. It says
// how far a measured time is from the hardware, whatever the schedule: no
// schedule moves less than that or computes less than that (caches can
// serve repeated reads, not the first one). Estimates of the pipeline's
// sizes, as everywhere in the search.

#include "common/gpu_profile.h"
#include "core/function_dag.h"

namespace gpusched {

struct Roofline {
    double bytes = 0;      // inputs read once + outputs written once
    double operations = 0; // arithmetic, logic and select operations, each stage's points once
    double memory_ms = 0;  // bytes at the profile's bandwidth (0: the profile has none)
    double compute_ms = 0; // operations at the profile's peak FP32 rate (0: none)
    double bound_ms() const { return memory_ms > compute_ms ? memory_ms : compute_ms; }
};

Roofline roofline(const FunctionDAG &dag, const GpuProfile &gpu);

} // namespace gpusched
