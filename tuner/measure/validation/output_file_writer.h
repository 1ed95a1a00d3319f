#pragma once
// Writes one pipeline output in the runners' file format (output_file.h:
// "GPSO", type code, bits, lanes, dimensions, extents, then the values).
// Header-only: it is compiled into the two runner programs (the validation
// runner and the benchmark harness), which link only Halide's runtime.

#include <cstdint>
#include <fstream>
#include <string>

#include "HalideBuffer.h"

namespace gpusched {

// Copies the buffer to the host and writes it densely, in dimension order
// whatever its strides; false if the file could not be written.
inline bool write_output_file(const std::string &path, Halide::Runtime::Buffer<> &b) {
    static constexpr char kMagic[4] = {'G', 'P', 'S', 'O'};
    b.copy_to_host();
    Halide::Runtime::Buffer<> dense = b.copy();
    std::ofstream f(path, std::ios::binary);
    f.write(kMagic, 4);
    const halide_type_t t = dense.type();
    const int32_t header[4] = {t.code, t.bits, t.lanes, dense.dimensions()};
    f.write(reinterpret_cast<const char *>(header), sizeof header);
    for (int d = 0; d < dense.dimensions(); ++d) {
        const int32_t extent = dense.dim(d).extent();
        f.write(reinterpret_cast<const char *>(&extent), sizeof extent);
    }
    f.write(static_cast<const char *>(dense.data()), static_cast<std::streamsize>(dense.size_in_bytes()));
    return static_cast<bool>(f);
}

} // namespace gpusched
