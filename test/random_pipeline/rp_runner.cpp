// rp_runner: runs one of the random pipelines compiled ahead of time into this
// executable (see CMakeLists.txt: one build per seed, for the host CPU or for
// host-opencl with the naive GPU schedule) on a deterministic synthetic input,
// and writes every output as raw float32 to a file for the test to inspect.
//
// It is a separate process on purpose: the OpenCL build must run outside any
// process holding libHalide (docs/random-pipelines.md), and a crash in generated
// code must fail one test, not the test binary.
//
// Usage: rp_runner SEED WIDTH HEIGHT OUT_FILE
// OUT_FILE holds, per output in argument order: int32 width, height, channels,
// then width*height*channels float32 values in x-fastest order.

#include "HalideBuffer.h"
#include "HalideRuntime.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include RP_REGISTRY_HEADER // defines kPipelines[] (seed, argv entry, metadata)

namespace {

// A fixed integer hash, so inputs are identical in every runner build.
uint32_t hash3(uint32_t x, uint32_t y, uint32_t z) {
    uint32_t h = x * 0x8DA6B343u ^ y * 0xD8163841u ^ z * 0xCB1AB31Fu;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    h *= 0x297A2D39u;
    h ^= h >> 15;
    return h;
}

// A smooth image plus hash noise: stencils, histograms and resampling all see
// structure, and every input differs by argument index.
double pixel_value(int x, int y, int c, int arg, int width, int height) {
    const double ramp = 0.5 * (double)x / width + 0.3 * (double)y / height + 0.1 * c;
    const double noise = (hash3((uint32_t)x, (uint32_t)y, (uint32_t)(c + 7 * arg)) & 0xFFFF) / 65535.0;
    const double v = 0.6 * ramp + 0.4 * noise;
    return v > 1.0 ? v - 1.0 : v;
}

Halide::Runtime::Buffer<> make_input(const halide_type_t &type, int arg, int width, int height) {
    Halide::Runtime::Buffer<> buf(type, width, height, 3);
    for (int c = 0; c < 3; c++) {
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                const double v = pixel_value(x, y, c, arg, width, height);
                if (type.code == halide_type_float && type.bits == 32) {
                    buf.as<float>()(x, y, c) = (float)v;
                } else if (type.code == halide_type_uint && type.bits == 8) {
                    buf.as<uint8_t>()(x, y, c) = (uint8_t)(v * 255.0 + 0.5);
                } else if (type.code == halide_type_uint && type.bits == 16) {
                    buf.as<uint16_t>()(x, y, c) = (uint16_t)(v * 65535.0 + 0.5);
                } else {
                    std::fprintf(stderr, "rp_runner: unsupported input type (code %d, bits %d)\n", type.code,
                                 type.bits);
                    std::exit(2);
                }
            }
        }
    }
    return buf;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s SEED WIDTH HEIGHT OUT_FILE\n", argv[0]);
        return 2;
    }
    const int seed = std::atoi(argv[1]);
    const int width = std::atoi(argv[2]);
    const int height = std::atoi(argv[3]);
    const RpPipeline *pipeline = nullptr;
    for (const RpPipeline &p : kPipelines) {
        if (p.seed == seed) pipeline = &p;
    }
    if (pipeline == nullptr || width <= 0 || height <= 0) {
        std::fprintf(stderr, "rp_runner: seed %d is not built into this runner (or bad size)\n", seed);
        return 2;
    }

    const halide_filter_metadata_t *md = pipeline->metadata();
    std::vector<Halide::Runtime::Buffer<>> buffers;
    buffers.reserve(md->num_arguments);
    std::vector<void *> args;
    std::vector<int> output_indices;
    for (int i = 0; i < md->num_arguments; i++) {
        const halide_filter_argument_t &a = md->arguments[i];
        if (a.kind == halide_argument_kind_input_buffer) {
            buffers.push_back(make_input(a.type, i, width, height));
        } else if (a.kind == halide_argument_kind_output_buffer) {
            buffers.emplace_back(a.type, width, height, 3);
            output_indices.push_back(i);
        } else {
            std::fprintf(stderr, "rp_runner: argument %s is a scalar; random pipelines have none\n", a.name);
            return 2;
        }
        args.push_back(buffers.back().raw_buffer());
    }

    const int status = pipeline->argv(args.data());
    if (status != 0) {
        std::fprintf(stderr, "rp_runner: pipeline returned error %d\n", status);
        return 1;
    }

    FILE *out = std::fopen(argv[4], "wb");
    if (out == nullptr) {
        std::fprintf(stderr, "rp_runner: cannot write %s\n", argv[4]);
        return 2;
    }
    for (int i : output_indices) {
        Halide::Runtime::Buffer<> &b = buffers[i];
        b.copy_to_host();
        Halide::Runtime::Buffer<float> f = b.as<float>();
        const int32_t dims[3] = {f.dim(0).extent(), f.dim(1).extent(), f.dim(2).extent()};
        std::fwrite(dims, sizeof(int32_t), 3, out);
        for (int c = 0; c < dims[2]; c++) {
            for (int y = 0; y < dims[1]; y++) {
                for (int x = 0; x < dims[0]; x++) {
                    const float v = f(x, y, c);
                    std::fwrite(&v, sizeof(float), 1, out);
                }
            }
        }
    }
    std::fclose(out);
    return 0;
}
