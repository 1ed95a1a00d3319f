#include "costmodel/weights_file.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "costmodel/binary_io.h"
#include "costmodel/crc32.h"

namespace gpusched {
namespace {

// A provenance longer than this is a corrupt length field, not a real note.
constexpr std::uint32_t kMaxProvenanceBytes = 1u << 20;

struct ExpectedSize {
    const char *name;
    std::uint32_t value;
};

const ExpectedSize kExpectedSizes[] = {
    {"number of schedule features", static_cast<std::uint32_t>(kNumScheduleFeatures)},
    {"number of pipeline features", static_cast<std::uint32_t>(kNumPipelineFeatures)},
    {"pipeline embedding width", static_cast<std::uint32_t>(kPipelineEmbedding)},
    {"schedule embedding width", static_cast<std::uint32_t>(kScheduleEmbedding)},
    {"number of coefficients", static_cast<std::uint32_t>(kNumCoefficients)},
};

} // namespace

std::vector<unsigned char> encode_weights(const WeightsFile &file) {
    if (!file.weights.valid_shape())
        throw std::invalid_argument("encode_weights: weights have the wrong shape");
    ByteWriter w;
    w.raw(kWeightsMagic, sizeof kWeightsMagic);
    w.u32(kWeightsFormatVersion);
    w.u32(static_cast<std::uint32_t>(kScheduleFeatureLayoutVersion));
    w.u32(static_cast<std::uint32_t>(kPipelineFeatureLayoutVersion));
    w.u32(static_cast<std::uint32_t>(file.formula_version));
    for (const auto &s : kExpectedSizes)
        w.u32(s.value);
    w.u32(static_cast<std::uint32_t>(file.provenance.size()));
    w.raw(file.provenance.data(), file.provenance.size());
    const std::vector<float> values = file.weights.flatten();
    w.u32(static_cast<std::uint32_t>(values.size()));
    for (float v : values)
        w.f32(v);
    const std::uint32_t crc = crc32(w.bytes().data(), w.bytes().size());
    w.u32(crc);
    return w.take();
}

WeightsFile decode_weights(const unsigned char *data, std::size_t size, const std::string &source) {
    ByteReader r(data, size, source);
    char magic[sizeof kWeightsMagic];
    r.raw(magic, sizeof magic, "the magic number");
    if (std::memcmp(magic, kWeightsMagic, sizeof magic) != 0)
        r.fail("not a gpusched weights file (wrong magic number; expected \"GSCMWGTS\")");
    const std::uint32_t version = r.u32("the format version");
    if (version < 1 || version > kWeightsFormatVersion)
        r.fail("unsupported weights format version " + std::to_string(version) +
               " (this build reads versions 1 to " + std::to_string(kWeightsFormatVersion) + ")");
    const std::uint32_t sched_layout = r.u32("the schedule-feature layout version");
    if (sched_layout != static_cast<std::uint32_t>(kScheduleFeatureLayoutVersion))
        r.fail("weights were trained for schedule-feature layout version " + std::to_string(sched_layout) +
               ", this build uses version " + std::to_string(kScheduleFeatureLayoutVersion) +
               "; retrain them");
    const std::uint32_t pipe_layout = r.u32("the pipeline-feature layout version");
    if (pipe_layout != static_cast<std::uint32_t>(kPipelineFeatureLayoutVersion))
        r.fail("weights were trained for pipeline-feature layout version " + std::to_string(pipe_layout) +
               ", this build uses version " + std::to_string(kPipelineFeatureLayoutVersion) +
               "; retrain them");
    std::uint32_t formula = 1; // version 1 files predate the field
    if (version >= 2) {
        formula = r.u32("the cost-formula version");
        if (formula < 1 || formula > static_cast<std::uint32_t>(kCostFormulaVersion))
            r.fail("weights were trained for cost-formula version " + std::to_string(formula) +
                   ", this build knows versions 1 to " + std::to_string(kCostFormulaVersion));
    }
    for (const auto &s : kExpectedSizes) {
        const std::uint32_t v = r.u32(s.name);
        if (v != s.value)
            r.fail("wrong network size: " + std::string(s.name) + " is " + std::to_string(v) +
                   ", this build expects " + std::to_string(s.value));
    }
    const std::uint32_t prov_len = r.u32("the provenance length");
    if (prov_len > kMaxProvenanceBytes || prov_len > r.remaining())
        r.fail("truncated or corrupt: provenance length " + std::to_string(prov_len) + " exceeds the " +
               std::to_string(r.remaining()) + " bytes left");
    WeightsFile out;
    out.formula_version = static_cast<int>(formula);
    out.provenance.resize(prov_len);
    r.raw(out.provenance.data(), prov_len, "the provenance string");
    const std::uint32_t count = r.u32("the parameter count");
    if (count != NetworkWeights::num_parameters())
        r.fail("wrong size: " + std::to_string(count) + " parameters, this build expects " +
               std::to_string(NetworkWeights::num_parameters()));
    if (r.remaining() < std::size_t(count) * 4 + 4)
        r.fail("truncated: " + std::to_string(r.remaining()) + " bytes left for " + std::to_string(count) +
               " float32 parameters and the checksum");
    std::vector<float> values(count);
    for (auto &v : values)
        v = r.f32("a parameter");
    const std::size_t covered = r.position();
    const std::uint32_t stored = r.u32("the checksum");
    if (r.remaining() != 0)
        r.fail(std::to_string(r.remaining()) + " unexpected trailing bytes after the checksum");
    const std::uint32_t actual = crc32(data, covered);
    if (stored != actual)
        r.fail("bad checksum (file is corrupt): stored CRC-32 " + std::to_string(stored) + ", computed " +
               std::to_string(actual));
    for (std::size_t i = 0; i < values.size(); ++i)
        if (!std::isfinite(values[i])) r.fail("parameter " + std::to_string(i) + " is not finite");
    out.weights = NetworkWeights::unflatten(values);
    return out;
}

void write_weights_file(const std::string &path, const WeightsFile &file) {
    const std::vector<unsigned char> bytes = encode_weights(file);
    std::ofstream os(path, std::ios::binary | std::ios::trunc);
    if (!os) throw std::runtime_error(path + ": cannot open weights file for writing");
    os.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!os) throw std::runtime_error(path + ": error while writing weights file");
}

WeightsFile read_weights_file(const std::string &path) {
    std::ifstream is(path, std::ios::binary);
    if (!is) throw std::runtime_error(path + ": cannot open weights file (missing or unreadable)");
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
    if (is.bad()) throw std::runtime_error(path + ": error while reading weights file");
    return decode_weights(bytes.data(), bytes.size(), path);
}

} // namespace gpusched
