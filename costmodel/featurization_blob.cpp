#include "costmodel/featurization_blob.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "costmodel/binary_io.h"
#include "costmodel/crc32.h"

namespace gpusched {
namespace {
constexpr char kBlobMagic[4] = {'G', 'S', 'F', 'B'};
// More stages or rows than this is a corrupt count, not a real pipeline.
constexpr std::uint32_t kMaxCount = 1u << 20;
} // namespace

std::vector<unsigned char> serialize_featurization(const std::vector<PipelineFeatures> &pipeline,
                                                   const StateFeatures &state) {
    if (state.stage_ids.size() != state.schedule.size())
        throw std::invalid_argument(
            "serialize_featurization: state has mismatched stage ids and feature rows");
    for (int id : state.stage_ids)
        if (id < 0 || static_cast<std::size_t>(id) >= pipeline.size())
            throw std::invalid_argument("serialize_featurization: stage id " + std::to_string(id) +
                                        " outside the " + std::to_string(pipeline.size()) +
                                        "-stage pipeline");
    ByteWriter w;
    w.raw(kBlobMagic, sizeof kBlobMagic);
    w.u32(kFeaturizationBlobVersion);
    w.u32(static_cast<std::uint32_t>(kScheduleFeatureLayoutVersion));
    w.u32(static_cast<std::uint32_t>(kPipelineFeatureLayoutVersion));
    w.u32(static_cast<std::uint32_t>(kNumScheduleFeatures));
    w.u32(static_cast<std::uint32_t>(kNumPipelineFeatures));
    w.u32(static_cast<std::uint32_t>(pipeline.size()));
    w.u32(static_cast<std::uint32_t>(state.schedule.size()));
    for (const auto &p : pipeline)
        for (float v : p.values)
            w.f32(v);
    for (std::size_t r = 0; r < state.schedule.size(); ++r) {
        w.i32(state.stage_ids[r]);
        for (double v : state.schedule[r].values)
            w.f64(v);
    }
    const std::uint32_t crc = crc32(w.bytes().data(), w.bytes().size());
    w.u32(crc);
    return w.take();
}

FeaturizationSample deserialize_featurization(const unsigned char *data, std::size_t size,
                                              const std::string &source) {
    ByteReader r(data, size, source);
    char magic[4];
    r.raw(magic, 4, "the magic number");
    if (std::memcmp(magic, kBlobMagic, 4) != 0)
        r.fail("not a featurization blob (wrong magic number; expected \"GSFB\")");
    const auto check = [&](std::uint32_t got, std::uint32_t want, const char *what) {
        if (got != want)
            r.fail(std::string(what) + " is " + std::to_string(got) + ", this build expects " +
                   std::to_string(want));
    };
    check(r.u32("the blob version"), kFeaturizationBlobVersion, "blob version");
    check(r.u32("the schedule layout version"), static_cast<std::uint32_t>(kScheduleFeatureLayoutVersion),
          "schedule-feature layout version");
    check(r.u32("the pipeline layout version"), static_cast<std::uint32_t>(kPipelineFeatureLayoutVersion),
          "pipeline-feature layout version");
    check(r.u32("the schedule feature count"), static_cast<std::uint32_t>(kNumScheduleFeatures),
          "number of schedule features");
    check(r.u32("the pipeline feature count"), static_cast<std::uint32_t>(kNumPipelineFeatures),
          "number of pipeline features");
    const std::uint32_t stages = r.u32("the stage count");
    const std::uint32_t rows = r.u32("the row count");
    if (stages > kMaxCount || rows > kMaxCount) r.fail("corrupt stage or row count");
    const std::size_t body =
        std::size_t(stages) * kNumPipelineFeatures * 4 + std::size_t(rows) * (4 + 8 * kNumScheduleFeatures);
    if (r.remaining() < body + 4)
        r.fail("truncated: " + std::to_string(r.remaining()) + " bytes left, " + std::to_string(body + 4) +
               " needed for " + std::to_string(stages) + " stages and " + std::to_string(rows) + " rows");
    FeaturizationSample out;
    out.pipeline.resize(stages);
    for (auto &p : out.pipeline)
        for (float &v : p.values)
            v = r.f32("pipeline features");
    out.state.stage_ids.resize(rows);
    out.state.schedule.resize(rows);
    for (std::uint32_t i = 0; i < rows; ++i) {
        out.state.stage_ids[i] = r.i32("a stage id");
        for (double &v : out.state.schedule[i].values)
            v = r.f64("schedule features");
    }
    const std::size_t covered = r.position();
    const std::uint32_t stored = r.u32("the checksum");
    if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " unexpected trailing bytes");
    if (stored != crc32(data, covered)) r.fail("bad checksum (blob is corrupt)");
    for (std::uint32_t i = 0; i < rows; ++i) {
        const int id = out.state.stage_ids[i];
        if (id < 0 || static_cast<std::uint32_t>(id) >= stages)
            r.fail("row " + std::to_string(i) + " names stage " + std::to_string(id) + " of " +
                   std::to_string(stages));
        for (double v : out.state.schedule[i].values)
            if (!std::isfinite(v)) r.fail("row " + std::to_string(i) + " has a non-finite schedule feature");
    }
    for (const auto &p : out.pipeline)
        for (float v : p.values)
            if (!std::isfinite(v)) r.fail("non-finite pipeline feature");
    return out;
}

} // namespace gpusched
