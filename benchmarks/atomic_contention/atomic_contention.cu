// How fast a GPU applies global atomic adds when many of them land on few
// addresses: the measurement behind the analytic cost model's contention term
// (costmodel/analytic_cost_model.cpp, docs/costmodel.md "atomic contention").
//
// Every thread of a 1-D grid adds once. Which address it adds to is the
// pattern, over K addresses of the element type, `stride` bytes apart:
//   warp    all 32 lanes of a warp add to one address; warps round-robin
//           over the K addresses (a combining update whose innermost thread
//           loop runs over the reduction: one output point per warp)
//   lane    consecutive threads add to consecutive addresses (thread t adds
//           to t mod K: the innermost thread loop runs over the outputs)
//   random  a hash of the thread index picks the address (a histogram of
//           noise: a data-dependent index)
// Output: one CSV line per case, pattern,type,addresses,stride_bytes,updates,
// ms,ns_per_update (the least of five timed launches after a warm-up), and a
// check line per case that the sum of the K results equals the updates made.
//
//   nvcc -O3 -arch=sm_90 -o atomic_contention atomic_contention.cu
//   ./atomic_contention > atomic_contention.csv
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "atomic_contention: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

enum Pattern { kWarp = 0, kLane = 1, kRandom = 2 };
const char *const kPatternNames[] = {"warp", "lane", "random"};

__device__ __forceinline__ unsigned hash32(unsigned x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

template <typename T>
__global__ void add_atomically(T *base, unsigned addresses, unsigned stride_elems, int pattern) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a;
    if (pattern == kWarp) a = (t / 32) % addresses;
    else if (pattern == kLane) a = t % addresses;
    else a = hash32(t) % addresses;
    atomicAdd(base + static_cast<size_t>(a) * stride_elems, T(1));
}

template <typename T>
void run_case(const char *type, int pattern, unsigned addresses, unsigned stride_bytes, unsigned updates,
              T *buf, cudaEvent_t start, cudaEvent_t stop) {
    const unsigned stride_elems = stride_bytes / sizeof(T);
    const size_t span = static_cast<size_t>(addresses) * stride_elems;
    const unsigned threads = 256, blocks = updates / threads;
    float best = 1e30f;
    for (int rep = 0; rep < 6; ++rep) {
        CHECK(cudaMemset(buf, 0, span * sizeof(T)));
        CHECK(cudaEventRecord(start));
        add_atomically<T><<<blocks, threads>>>(buf, addresses, stride_elems, pattern);
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaGetLastError());
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (rep > 0 && ms < best) best = ms; // rep 0 is the warm-up
    }
    std::vector<T> host(span);
    CHECK(cudaMemcpy(host.data(), buf, span * sizeof(T), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (size_t i = 0; i < span; i += stride_elems) sum += static_cast<double>(host[i]);
    std::printf("%s,%s,%u,%u,%u,%.5f,%.5f\n", kPatternNames[pattern], type, addresses, stride_bytes, updates, best,
                best * 1e6 / updates);
    if (sum != static_cast<double>(updates))
        std::printf("# check failed: %s %s K=%u: sum %.0f, expected %u\n", kPatternNames[pattern], type, addresses,
                    sum, updates);
}

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("# %s, %d SMs, L2 %d bytes, compute %d.%d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize,
                prop.major, prop.minor);
    std::printf("pattern,type,addresses,stride_bytes,updates,ms,ns_per_update\n");
    // 2^24 updates: float sums stay exact (each address gets at most 2^24).
    const unsigned updates = 1u << 24;
    const unsigned address_counts[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096, 65536, 1u << 20};
    const unsigned strides[] = {4, 128};
    void *buf = nullptr;
    CHECK(cudaMalloc(&buf, static_cast<size_t>(1u << 20) * 128));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int pattern = 0; pattern < 3; ++pattern)
        for (unsigned stride : strides)
            for (unsigned k : address_counts) {
                run_case<int>("int32", pattern, k, stride, updates, static_cast<int *>(buf), start, stop);
                run_case<float>("float32", pattern, k, stride, updates, static_cast<float *>(buf), start, stop);
            }
    CHECK(cudaFree(buf));
    return 0;
}
