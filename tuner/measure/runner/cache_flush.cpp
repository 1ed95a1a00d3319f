#include "tuner/measure/runner/cache_flush.h"

#include <cstring>
#include <vector>

#include "tuner/measure/runner/harness_cuda.h"

namespace gpusched::harness {
namespace {

class NoFlush : public CacheFlush {
public:
    int64_t bytes() const override { return 0; }
    void flush() override {}
};

// POCL and CPU builds: the device's caches are the host's. The buffer is
// zeroed (its pages faulted in) when made, not in the first flush.
class HostFlush : public CacheFlush {
public:
    explicit HostFlush(int64_t bytes) : buffer_(static_cast<std::size_t>(bytes)) {}
    int64_t bytes() const override { return static_cast<int64_t>(buffer_.size()); }
    void flush() override {
        // One read-modify-write a cache line, not memset: a large memset may
        // use non-temporal stores (glibc does above a threshold of the
        // cache's size), which write around the cache and evict nothing.
        // Each line is read into the cache and left dirty, as the next
        // call's data would have to push it out.
        unsigned char *p = buffer_.data();
        for (std::size_t i = 0; i < buffer_.size(); i += kLineBytes)
            p[i] = static_cast<unsigned char>(p[i] + 1);
        // The buffer is never read otherwise: keep the compiler from
        // dropping the loop as dead stores.
        asm volatile("" : : "r"(p) : "memory");
    }

private:
    static constexpr std::size_t kLineBytes = 64; // x86-64's and ARMv8's usual line
    std::vector<unsigned char> buffer_;
};

class CudaFlush : public CacheFlush {
public:
    CudaFlush(CUdeviceptr buffer, int64_t bytes) : buffer_(buffer), bytes_(bytes) {}
    int64_t bytes() const override { return bytes_; }
    void flush() override {
        CudaContextScope scope;
        if (!scope.ok()) end_with_device_error("CUDA cache flush: " + scope.problem());
        value_ ^= 0x5a5a5a5au;
        // On stream 0 like the pipeline (device_timer.cpp); asynchronous to
        // the host for device memory, hence the synchronize: the flush ends
        // before the call is timed.
        const auto words = static_cast<std::size_t>(bytes_) / 4;
        if (CUresult rc = scope.driver().cuMemsetD32(buffer_, value_, words); rc != 0)
            end_with_device_error(cuda_failure("cuMemsetD32 (cache flush)", rc));
        if (CUresult rc = scope.driver().cuCtxSynchronize(); rc != 0)
            end_with_device_error(cuda_failure("cuCtxSynchronize (cache flush)", rc));
    }

private:
    CUdeviceptr buffer_;
    int64_t bytes_;
    unsigned value_ = 0;
};

std::unique_ptr<CacheFlush> make_cuda_flush(int64_t bytes, std::string &why_not) {
    CudaContextScope scope;
    if (!scope.ok()) {
        why_not = scope.problem();
        return nullptr;
    }
    // Whole 32-bit words; the buffer lives as long as the process.
    bytes = (bytes + 3) / 4 * 4;
    CUdeviceptr buffer = 0;
    if (CUresult rc = scope.driver().cuMemAlloc(&buffer, static_cast<std::size_t>(bytes)); rc != 0) {
        why_not = cuda_failure("cuMemAlloc of the flush buffer", rc);
        return nullptr;
    }
    return std::make_unique<CudaFlush>(buffer, bytes);
}

} // namespace

std::unique_ptr<CacheFlush> make_cache_flush(const std::string &device, int64_t bytes, std::string *why_not) {
    std::string why;
    std::unique_ptr<CacheFlush> flush;
    if (bytes <= 0)
        flush = std::make_unique<NoFlush>();
    else if (device == "cuda")
        flush = make_cuda_flush(bytes, why);
    else
        flush = std::make_unique<HostFlush>(bytes);
    if (!flush) flush = std::make_unique<NoFlush>();
    if (why_not) *why_not = why;
    return flush;
}

} // namespace gpusched::harness
