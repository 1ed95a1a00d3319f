#pragma once
// Synthetic but self-consistent feature rows, for fitting default weights,
// benchmarking and tests while the search core cannot yet dump real states.
//
// It is a deliberately small featurizer of its own: pipelines are chains of
// 1-6 2-D stencil stages (radius 0-3) over a W x H image of 1-, 2- or 4-byte
// elements; a state places every non-output stage at root (own kernel), at
// its consumer's block level (shared memory) or inline, and tiles every
// kernel into blocks x threads x serial loops with the search space's sizes
// (threads 16/32/64 innermost, powers of two up to 16 outer; serial 1/2/4).
// From that loop nest it derives the schedule features of docs/features.md
// (coalescing from the lane stride, bank conflicts from the word stride,
// occupancy from threads, shared memory and an estimate of registers).
//
// What it is not: the search's featurizer. Its loop nests are far simpler
// than real ones (no reductions, no multi-level tiling of producers, no
// register-level producers), so weights fitted on its rows are a starting
// point that must be refitted on states from real searches.
//
// Invariant: every generated state respects the GPU profile's hard limits
// (threads per block, 48 KiB shared memory per block); values obey
// ScheduleFeatures' invariant.

#include <cstdint>
#include <random>
#include <vector>

#include "common/gpu_profile.h"
#include "costmodel/cost_model.h"

namespace gpusched {

struct SyntheticPipeline {
    int width = 0, height = 0, element_bytes = 4;
    std::vector<int> radius;              // per stage, stage 0 reads the input image
    std::vector<PipelineFeatures> stages; // op and access histograms
};

SyntheticPipeline random_synthetic_pipeline(std::mt19937_64 &rng);

// One random schedule of the pipeline, featurized. Every stage that is not
// inlined gets a row; inlined stages get a row with inlined_calls > 0.
StateFeatures random_synthetic_state(const SyntheticPipeline &p, const GpuProfile &gpu, std::mt19937_64 &rng);

} // namespace gpusched
