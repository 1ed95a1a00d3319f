#include "tuner/measure/validation/output_file.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpusched {

std::size_t OutputFile::elements() const {
    std::size_t n = static_cast<std::size_t>(lanes);
    for (int32_t e : extents)
        n *= static_cast<std::size_t>(e);
    return n;
}

std::string OutputFile::type_name() const {
    const char *base = type_code == 0 ? "int" : type_code == 1 ? "uint" : type_code == 2 ? "float" : "handle";
    return base + std::to_string(bits) + (lanes > 1 ? "x" + std::to_string(lanes) : "");
}

OutputFile read_output_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("output file '" + path + "' is missing");
    char magic[4] = {};
    int32_t header[4] = {};
    f.read(magic, 4);
    f.read(reinterpret_cast<char *>(header), sizeof header);
    if (!f || std::memcmp(magic, "GPSO", 4) != 0)
        throw std::runtime_error("output file '" + path + "' is not a gpusched output file");
    OutputFile o;
    o.type_code = header[0];
    o.bits = header[1];
    o.lanes = header[2];
    const int dims = header[3];
    const bool known_type = (o.type_code >= 0 && o.type_code <= 2) &&
                            (o.bits == 1 || o.bits == 8 || o.bits == 16 || o.bits == 32 || o.bits == 64);
    if (!known_type || o.lanes < 1 || dims < 0 || dims > 16)
        throw std::runtime_error("output file '" + path + "' has a malformed header");
    o.extents.resize(static_cast<std::size_t>(dims));
    f.read(reinterpret_cast<char *>(o.extents.data()), static_cast<std::streamsize>(dims * sizeof(int32_t)));
    for (int32_t e : o.extents)
        if (!f || e < 0) throw std::runtime_error("output file '" + path + "' has a malformed header");
    const std::size_t bytes = o.elements() * static_cast<std::size_t>((o.bits + 7) / 8);
    o.data.resize(bytes);
    f.read(reinterpret_cast<char *>(o.data.data()), static_cast<std::streamsize>(bytes));
    if (static_cast<std::size_t>(f.gcount()) != bytes)
        throw std::runtime_error("output file '" + path + "' is truncated");
    return o;
}

namespace {

template <typename T> T load(const std::vector<uint8_t> &data, std::size_t i) {
    T v;
    std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
    return v;
}

// The value of element i as a double.
double element(const OutputFile &o, std::size_t i) {
    switch (o.type_code * 100 + o.bits) {
    case 1:
    case 101:
    case 8:
        return o.type_code == 0 ? load<int8_t>(o.data, i) : load<uint8_t>(o.data, i);
    case 108:
        return load<uint8_t>(o.data, i);
    case 16:
        return load<int16_t>(o.data, i);
    case 116:
        return load<uint16_t>(o.data, i);
    case 32:
        return load<int32_t>(o.data, i);
    case 132:
        return load<uint32_t>(o.data, i);
    case 64:
        return static_cast<double>(load<int64_t>(o.data, i));
    case 164:
        return static_cast<double>(load<uint64_t>(o.data, i));
    case 232:
        return load<float>(o.data, i);
    case 264:
        return load<double>(o.data, i);
    default:
        return 0;
    }
}

} // namespace

OutputComparison compare_outputs(const OutputFile &ref, const OutputFile &cand,
                                 const ComparisonTolerance &tol) {
    OutputComparison c;
    if (ref.type_code != cand.type_code || ref.bits != cand.bits || ref.lanes != cand.lanes ||
        ref.extents != cand.extents) {
        c.detail = "shape or type differs: reference " + ref.type_name() + " vs " + cand.type_name();
        return c;
    }
    c.same_shape = true;
    c.elements = ref.elements();
    const bool is_float = ref.type_code == 2;
    for (std::size_t i = 0; i < c.elements; ++i) {
        const double a = element(ref, i), b = element(cand, i);
        bool bad;
        double err;
        if (is_float) {
            if (std::isnan(a) && std::isnan(b)) continue;
            err = std::fabs(a - b);
            if (!std::isfinite(b) && (std::isfinite(a) || a != b)) {
                ++c.nonfinite_mismatches;
                bad = true;
            } else {
                bad = err > tol.float_absolute + tol.float_relative * std::fabs(a);
            }
        } else {
            err = std::fabs(a - b);
            bad = err > tol.integer_absolute;
        }
        if (std::isfinite(err) && err > c.max_abs_error) c.max_abs_error = err;
        if (bad) {
            if (c.mismatches == 0) c.first_mismatch = i;
            ++c.mismatches;
        }
    }
    c.allowed_outliers = static_cast<std::size_t>(tol.outlier_fraction * static_cast<double>(c.elements));
    std::ostringstream s;
    if (c.mismatches > 0 && c.passed()) {
        s << c.elements << " " << ref.type_name() << " values agree but " << c.mismatches
          << " isolated outlier(s), within the allowed " << c.allowed_outliers << " (first at element "
          << c.first_mismatch << ": " << element(ref, c.first_mismatch) << " vs "
          << element(cand, c.first_mismatch) << "; max abs error " << c.max_abs_error << ")";
    } else if (c.mismatches == 0) {
        s << c.elements << " " << ref.type_name() << " values agree (max abs error " << c.max_abs_error
          << ")";
    } else {
        s << c.mismatches << " of " << c.elements << " values differ (first at element " << c.first_mismatch
          << ": " << element(ref, c.first_mismatch) << " vs " << element(cand, c.first_mismatch)
          << "; max abs error " << c.max_abs_error << ")";
    }
    c.detail = s.str();
    return c;
}

OutputComparison compare_with_references(const std::string &reference_dir, const std::string &output_name,
                                         const std::string &candidate_path) {
    OutputComparison serial;
    OutputFile candidate;
    try {
        candidate = read_output_file(candidate_path);
        serial = compare_outputs(read_output_file(reference_dir + "/" + output_name + ".raw"), candidate);
    } catch (const std::exception &e) {
        serial.detail = e.what();
        return serial;
    }
    const std::string reordered_path =
        reference_dir + "/" + kReorderedReferenceDir + "/" + output_name + ".raw";
    std::error_code ec;
    if (serial.passed() || !std::filesystem::exists(reordered_path, ec)) return serial;
    OutputComparison reordered;
    try {
        reordered = compare_outputs(read_output_file(reordered_path), candidate);
    } catch (const std::exception &e) {
        reordered.detail = e.what();
    }
    if (reordered.passed()) {
        reordered.detail +=
            " with the reference whose float reductions sum in blocks (the serial one: " + serial.detail +
            ")";
        return reordered;
    }
    serial.detail +=
        " (and against the reference whose float reductions sum in blocks: " + reordered.detail + ")";
    return serial;
}

} // namespace gpusched
