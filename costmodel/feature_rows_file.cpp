#include "costmodel/feature_rows_file.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include "costmodel/binary_io.h"
#include "costmodel/featurization_blob.h"

namespace gpusched {
namespace {
constexpr char kMagic[8] = {'G', 'S', 'F', 'R', 'O', 'W', 'S', '1'};
} // namespace

void write_feature_rows(const std::string &path, const std::vector<FeatureRowsRecord> &records) {
    ByteWriter w;
    w.raw(kMagic, sizeof kMagic);
    w.u32(kFeatureRowsVersion);
    w.u32(static_cast<std::uint32_t>(records.size()));
    for (const auto &rec : records) {
        const auto blob = serialize_featurization(rec.pipeline, rec.state);
        w.u32(rec.pipeline_key);
        w.f64(rec.runtime_ms);
        w.u32(static_cast<std::uint32_t>(blob.size()));
        w.raw(blob.data(), blob.size());
    }
    std::ofstream os(path, std::ios::binary | std::ios::trunc);
    if (!os) throw std::runtime_error(path + ": cannot open feature-rows file for writing");
    os.write(reinterpret_cast<const char *>(w.bytes().data()), static_cast<std::streamsize>(w.bytes().size()));
    if (!os) throw std::runtime_error(path + ": error while writing feature-rows file");
}

std::vector<PipelineSamples> read_feature_rows(const std::string &path) {
    std::ifstream is(path, std::ios::binary);
    if (!is) throw std::runtime_error(path + ": cannot open feature-rows file (missing or unreadable)");
    const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
    ByteReader r(bytes.data(), bytes.size(), path);
    char magic[8];
    r.raw(magic, 8, "the magic number");
    if (std::memcmp(magic, kMagic, 8) != 0) r.fail("not a feature-rows file (wrong magic number; expected \"GSFROWS1\")");
    const std::uint32_t version = r.u32("the version");
    if (version != kFeatureRowsVersion)
        r.fail("unsupported feature-rows version " + std::to_string(version) + " (this build reads " +
               std::to_string(kFeatureRowsVersion) + ")");
    const std::uint32_t count = r.u32("the record count");
    std::vector<PipelineSamples> out;
    std::map<std::uint32_t, std::size_t> index;
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::string where = "record " + std::to_string(i);
        const std::uint32_t key = r.u32("a pipeline key");
        const double runtime = r.f64("a runtime");
        const std::uint32_t size = r.u32("a blob size");
        if (size > r.remaining()) r.fail("truncated in " + where + ": blob of " + std::to_string(size) + " bytes, " +
                                         std::to_string(r.remaining()) + " left");
        std::vector<unsigned char> blob(size);
        r.raw(blob.data(), size, "a blob");
        FeaturizationSample s = deserialize_featurization(blob.data(), blob.size(), path + ", " + where);
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, out.size()).first;
            PipelineSamples ps;
            ps.name = "pipeline " + std::to_string(key);
            ps.stages = s.pipeline;
            out.push_back(std::move(ps));
        }
        PipelineSamples &ps = out[it->second];
        bool same = ps.stages.size() == s.pipeline.size();
        for (std::size_t k = 0; same && k < ps.stages.size(); ++k)
            same = std::memcmp(ps.stages[k].values.data(), s.pipeline[k].values.data(), sizeof(float) * kNumPipelineFeatures) == 0;
        if (!same) r.fail(where + " has pipeline key " + std::to_string(key) +
                          " but different pipeline features than the first record with that key");
        ps.states.push_back(std::move(s.state));
        ps.runtimes_ms.push_back(runtime);
    }
    if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " unexpected trailing bytes after the last record");
    return out;
}

} // namespace gpusched
