#pragma once
// The raw output files both runners write (output_file_writer.h)
// and how two of them are compared. Format, little-endian: "GPSO", then
// int32 type code (halide_type_code_t), bits, lanes, dimensions, then one
// int32 extent per dimension, then the elements densely in dimension order.
//
// Comparison: integers must match exactly, except that values computed
// through floating point may differ by one (a GPU may contract a*b+c into an
// FMA and round differently); floats must match within a relative and
// absolute tolerance. Beyond that, at most one value in a million may be an
// outlier: CPU and GPU math libraries round differently, and a steep curve
// (camera_pipe's tone curve) turns that into isolated 8-bit differences of 2
// that every schedule shows alike. A schedule bug corrupts whole tiles, not
// one value in a million. NaN or infinity where the reference is finite, or
// a different shape, always fails.

#include <cstdint>
#include <string>
#include <vector>

namespace gpusched {

struct OutputFile {
    int type_code = 0; // 0 int, 1 uint, 2 float
    int bits = 0;
    int lanes = 1;
    std::vector<int32_t> extents;
    std::vector<uint8_t> data;

    std::size_t elements() const;
    std::string type_name() const; // "float32", "uint8", ...
};

// Throws std::runtime_error naming the file when it is missing or malformed.
OutputFile read_output_file(const std::string &path);

struct OutputComparison {
    bool same_shape = false;
    std::size_t elements = 0;
    std::size_t mismatches = 0;       // values beyond the per-value tolerance
    std::size_t allowed_outliers = 0; // how many of those the comparison accepts
    std::size_t nonfinite_mismatches = 0;
    double max_abs_error = 0;
    std::size_t first_mismatch = 0; // flat index
    std::string detail;             // one line, for reports

    bool passed() const { return same_shape && nonfinite_mismatches == 0 && mismatches <= allowed_outliers; }
};

struct ComparisonTolerance {
    double float_relative = 1e-3;
    double float_absolute = 1e-4;
    double integer_absolute = 1;
    double outlier_fraction = 1e-6;
};

OutputComparison compare_outputs(const OutputFile &reference, const OutputFile &candidate,
                                 const ComparisonTolerance &tolerance = {});

// A reference folder holds the serial reference's outputs (NAME.raw) and,
// where the pipeline has long float reductions, a second reference in
// this subfolder that sums them in blocks (core/root_reference_scheduler.cpp,
// "gpusched_root_reordered"). A float sum's value depends on its order: a
// parallel schedule's sum of 16.7 million squares lands 2% above the serial
// one, near the blocked one.
inline constexpr const char *kReorderedReferenceDir = "reordered";

// Compares the candidate's output file with reference_dir/NAME.raw, and,
// where that fails and a reordered reference exists, with that one: the
// output passes when it agrees with either, and the detail says which.
// Missing or malformed files are a failed comparison naming the file.
OutputComparison compare_with_references(const std::string &reference_dir, const std::string &output_name,
                                         const std::string &candidate_path);

} // namespace gpusched
