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
constexpr char kRowsFileMagic[8] = {'G', 'S', 'F', 'R', 'O', 'W', 'S', '1'};
} // namespace

FeatureRowsWriter::FeatureRowsWriter(const std::string &path)
    : os_(path, std::ios::binary | std::ios::trunc), path_(path) {
    if (!os_) throw std::runtime_error(path + ": cannot open feature-rows file for writing");
    ByteWriter w;
    w.raw(kRowsFileMagic, sizeof kRowsFileMagic);
    w.u32(kFeatureRowsVersion);
    w.u32(0); // the record count, patched by close()
    os_.write(reinterpret_cast<const char *>(w.bytes().data()),
              static_cast<std::streamsize>(w.bytes().size()));
    if (!os_) throw std::runtime_error(path + ": error while writing feature-rows file");
}

FeatureRowsWriter::~FeatureRowsWriter() = default;

void FeatureRowsWriter::append(std::uint32_t pipeline_key, double runtime_ms,
                               const std::vector<unsigned char> &blob) {
    if (!os_.is_open()) throw std::logic_error(path_ + ": feature-rows writer used after close()");
    if (count_ == UINT32_MAX)
        throw std::runtime_error(path_ + ": more records than a feature-rows file can count");
    ByteWriter w;
    w.u32(pipeline_key);
    w.f64(runtime_ms);
    w.u32(static_cast<std::uint32_t>(blob.size()));
    os_.write(reinterpret_cast<const char *>(w.bytes().data()),
              static_cast<std::streamsize>(w.bytes().size()));
    os_.write(reinterpret_cast<const char *>(blob.data()), static_cast<std::streamsize>(blob.size()));
    if (!os_) throw std::runtime_error(path_ + ": error while writing feature-rows file");
    ++count_;
}

void FeatureRowsWriter::close() {
    if (!os_.is_open()) return;
    ByteWriter w;
    w.u32(count_);
    os_.seekp(sizeof kRowsFileMagic + 4);
    os_.write(reinterpret_cast<const char *>(w.bytes().data()),
              static_cast<std::streamsize>(w.bytes().size()));
    os_.close();
    if (!os_) throw std::runtime_error(path_ + ": error while writing feature-rows file");
}

void write_feature_rows(const std::string &path, const std::vector<FeatureRowsRecord> &records) {
    FeatureRowsWriter w(path);
    for (const auto &rec : records)
        w.append(rec.pipeline_key, rec.runtime_ms, serialize_featurization(rec.pipeline, rec.state));
    w.close();
}

namespace {

std::vector<unsigned char> read_all(const std::string &path) {
    std::ifstream is(path, std::ios::binary);
    if (!is) throw std::runtime_error(path + ": cannot open feature-rows file (missing or unreadable)");
    return std::vector<unsigned char>((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
}

// Checks magic and version; returns the record count.
std::uint32_t read_header(ByteReader &r) {
    char magic[8];
    r.raw(magic, 8, "the magic number");
    if (std::memcmp(magic, kRowsFileMagic, 8) != 0)
        r.fail("not a feature-rows file (wrong magic number; expected \"GSFROWS1\")");
    const std::uint32_t version = r.u32("the version");
    if (version != kFeatureRowsVersion)
        r.fail("unsupported feature-rows version " + std::to_string(version) + " (this build reads " +
               std::to_string(kFeatureRowsVersion) + ")");
    return r.u32("the record count");
}

// Reads one record's framing; the blob is left in `blob`.
void read_record(ByteReader &r, std::uint32_t i, std::uint32_t &key, double &runtime,
                 std::vector<unsigned char> &blob) {
    key = r.u32("a pipeline key");
    runtime = r.f64("a runtime");
    const std::uint32_t size = r.u32("a blob size");
    if (size > r.remaining())
        r.fail("truncated in record " + std::to_string(i) + ": blob of " + std::to_string(size) + " bytes, " +
               std::to_string(r.remaining()) + " left");
    blob.resize(size);
    r.raw(blob.data(), size, "a blob");
}

void check_end(ByteReader &r) {
    if (r.remaining() != 0)
        r.fail(std::to_string(r.remaining()) + " unexpected trailing bytes after the last record");
}

} // namespace

std::vector<FeatureRowsRawRecord> read_feature_rows_raw(const std::string &path) {
    const std::vector<unsigned char> bytes = read_all(path);
    ByteReader r(bytes.data(), bytes.size(), path);
    const std::uint32_t count = read_header(r);
    std::vector<FeatureRowsRawRecord> out(count);
    for (std::uint32_t i = 0; i < count; ++i)
        read_record(r, i, out[i].pipeline_key, out[i].runtime_ms, out[i].blob);
    check_end(r);
    return out;
}

std::vector<PipelineSamples> read_feature_rows(const std::string &path) {
    const std::vector<unsigned char> bytes = read_all(path);
    ByteReader r(bytes.data(), bytes.size(), path);
    const std::uint32_t count = read_header(r);
    std::vector<PipelineSamples> out;
    std::map<std::uint32_t, std::size_t> index;
    std::vector<unsigned char> blob;
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::string where = "record " + std::to_string(i);
        std::uint32_t key = 0;
        double runtime = 0;
        read_record(r, i, key, runtime, blob);
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
            same = std::memcmp(ps.stages[k].values.data(), s.pipeline[k].values.data(),
                               sizeof(float) * kNumPipelineFeatures) == 0;
        if (!same)
            r.fail(where + " has pipeline key " + std::to_string(key) +
                   " but different pipeline features than the first record with that key");
        ps.states.push_back(std::move(s.state));
        ps.runtimes_ms.push_back(runtime);
    }
    check_end(r);
    return out;
}

} // namespace gpusched
