#pragma once
// Finds the CUDA kernels in a compiled Halide library. Halide's CUDA backend
// embeds each pipeline's PTX module in the host object as a NUL-terminated
// string that starts with LLVM's NVPTX banner; a static library (.a) or an
// object file holds it byte for byte, so scanning the file finds every module
// without parsing ar or ELF.

#include <string>
#include <vector>

namespace gpusched {

struct PtxModule {
    std::string text;                      // the PTX source, without the NUL
    std::vector<std::string> kernel_names; // the .entry functions it defines
};

// All PTX modules inside a blob of bytes (the contents of a .a or .o).
std::vector<PtxModule> extract_ptx_modules(const std::string &bytes);

// Reads the file and extracts its modules. Throws std::runtime_error naming the
// file if it cannot be read.
std::vector<PtxModule> extract_ptx_modules_from_file(const std::string &path);

// The names of the .entry functions of one PTX module.
std::vector<std::string> ptx_kernel_names(const std::string &ptx);

} // namespace gpusched
