#pragma once
// Little-endian byte packing for the cost model's binary formats (weights
// file, featurization blob, feature-rows file). Writing goes through
// ByteWriter, reading through ByteReader, which never reads past its end:
// a short buffer is reported with the caller's description of what was being
// read, so every corrupt-input path ends in a clear exception, never a crash.
//
// Invariant: the byte order on disk is little-endian whatever the host.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusched {

class ByteWriter {
public:
    void u32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i)
            bytes_.push_back(static_cast<unsigned char>(v >> (8 * i)));
    }
    void u64(std::uint64_t v) {
        for (int i = 0; i < 8; ++i)
            bytes_.push_back(static_cast<unsigned char>(v >> (8 * i)));
    }
    void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
    void f32(float v) {
        std::uint32_t b;
        std::memcpy(&b, &v, 4);
        u32(b);
    }
    void f64(double v) {
        std::uint64_t b;
        std::memcpy(&b, &v, 8);
        u64(b);
    }
    void raw(const void *data, std::size_t n) {
        const auto *p = static_cast<const unsigned char *>(data);
        bytes_.insert(bytes_.end(), p, p + n);
    }
    const std::vector<unsigned char> &bytes() const { return bytes_; }
    std::vector<unsigned char> take() { return std::move(bytes_); }

private:
    std::vector<unsigned char> bytes_;
};

// Reads from a borrowed buffer. Every read names what it reads so a short
// buffer gives "<source>: truncated while reading <what>".
class ByteReader {
public:
    ByteReader(const unsigned char *data, std::size_t size, std::string source)
        : data_(data), size_(size), source_(std::move(source)) {}

    std::size_t position() const { return pos_; }
    std::size_t remaining() const { return size_ - pos_; }
    const std::string &source() const { return source_; }

    std::uint32_t u32(const char *what) {
        need(4, what);
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v |= static_cast<std::uint32_t>(data_[pos_ + i]) << (8 * i);
        pos_ += 4;
        return v;
    }
    std::uint64_t u64(const char *what) {
        need(8, what);
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v |= static_cast<std::uint64_t>(data_[pos_ + i]) << (8 * i);
        pos_ += 8;
        return v;
    }
    std::int32_t i32(const char *what) { return static_cast<std::int32_t>(u32(what)); }
    float f32(const char *what) {
        const std::uint32_t b = u32(what);
        float v;
        std::memcpy(&v, &b, 4);
        return v;
    }
    double f64(const char *what) {
        const std::uint64_t b = u64(what);
        double v;
        std::memcpy(&v, &b, 8);
        return v;
    }
    void raw(void *out, std::size_t n, const char *what) {
        need(n, what);
        std::memcpy(out, data_ + pos_, n);
        pos_ += n;
    }
    [[noreturn]] void fail(const std::string &what) const { throw std::runtime_error(source_ + ": " + what); }

private:
    void need(std::size_t n, const char *what) const {
        if (size_ - pos_ < n)
            fail("truncated while reading " + std::string(what) + " (at byte " + std::to_string(pos_) +
                 " of " + std::to_string(size_) + ")");
    }

    const unsigned char *data_;
    std::size_t size_;
    std::size_t pos_ = 0;
    std::string source_;
};

} // namespace gpusched
