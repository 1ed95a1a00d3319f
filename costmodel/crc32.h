#pragma once
// CRC-32 (IEEE 802.3 polynomial 0xEDB88320, reflected, initial value and
// final xor 0xFFFFFFFF: the checksum of zlib, PNG and gzip). Used by the
// weights file and the featurization blob to detect corruption; both formats
// store it little-endian after the bytes it covers.
//
// Invariant: crc32(data) == crc32_update(crc32_update(0, a), b) when data is
// a followed by b (streaming gives the same value as one call).

#include <cstddef>
#include <cstdint>

namespace gpusched {

// Continue a running CRC over more bytes; start with crc = 0.
std::uint32_t crc32_update(std::uint32_t crc, const void *data, std::size_t size);

inline std::uint32_t crc32(const void *data, std::size_t size) {
    return crc32_update(0, data, size);
}

} // namespace gpusched
