#pragma once
// The feature-rows file: a list of samples (featurization blobs) with the
// pipeline each belongs to and, when known, its runtime. It is the input of
// gpusched_fit_default_weights (which fills runtimes from the analytic
// teacher) and a plain exchange format for training sets dumped by the
// search or exported from the database.
//
// Layout (little-endian; docs/weights-format.md, "Feature-rows file"):
//   "GSFROWS1" | u32 version | u32 #records |
//   records: u32 pipeline key | f64 runtime ms (NaN = not measured) |
//            u32 blob size | featurization blob
// Records with the same pipeline key must carry identical pipeline features.
//
// Invariant: read_feature_rows returns pipelines with >= 1 sample each, in
// order of first appearance, or throws std::runtime_error naming the path,
// the record and what is wrong.

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "costmodel/training.h"

namespace gpusched {

inline constexpr std::uint32_t kFeatureRowsVersion = 1;

struct FeatureRowsRecord {
    std::uint32_t pipeline_key = 0;
    double runtime_ms = 0; // NaN when not measured
    std::vector<PipelineFeatures> pipeline;
    StateFeatures state;
};

void write_feature_rows(const std::string &path, const std::vector<FeatureRowsRecord> &records);

// Groups records into PipelineSamples (name "pipeline <key>"); runtimes are
// copied as stored (NaN where unmeasured).
std::vector<PipelineSamples> read_feature_rows(const std::string &path);

// A record as stored, its blob not decoded: for tools that merge or filter
// files (gpusched_merge_feature_rows) without paying for decoding, and
// without holding one decoded copy of the pipeline features per record.
struct FeatureRowsRawRecord {
    std::uint32_t pipeline_key = 0;
    double runtime_ms = 0;
    std::vector<unsigned char> blob; // a featurization blob (not checked here)
};

// Checks the header and the record framing, not the blobs.
std::vector<FeatureRowsRawRecord> read_feature_rows_raw(const std::string &path);

// Writes a feature-rows file one record at a time, so a training set merged
// from many searches never has to be in memory at once. The record count in
// the header is written by close(); a writer destroyed without close()
// leaves a file whose count is 0 and that readers reject as having trailing
// bytes, never one that silently looks shorter.
class FeatureRowsWriter {
public:
    explicit FeatureRowsWriter(const std::string &path);
    ~FeatureRowsWriter();
    FeatureRowsWriter(const FeatureRowsWriter &) = delete;
    FeatureRowsWriter &operator=(const FeatureRowsWriter &) = delete;

    void append(std::uint32_t pipeline_key, double runtime_ms, const std::vector<unsigned char> &blob);
    void close();
    std::uint32_t count() const { return count_; }

private:
    std::ofstream os_;
    std::string path_;
    std::uint32_t count_ = 0;
};

} // namespace gpusched
