#pragma once
// Whether this machine's CUDA driver can load the PTX a batch was compiled
// to. A driver older than the PTX ISA fails every benchmark alike, so the
// driver checks once, before any is built (device_traits.h).

#include <string>

namespace gpusched {

// The lowest CUDA driver version (1000 * major + 10 * minor) that loads PTX
// of this ISA version ("7.1" -> 11010); 0 when the version is not known.
int cuda_driver_for_ptx_isa(const std::string &ptx_version);

// The PTX ISA version (".version 7.1") of a compiled library; empty if none.
std::string ptx_isa_version(const std::string &library);

// The error saying the local driver is too old for the library's PTX, or
// empty (also when either version is unknown: the benchmarks will say).
std::string cuda_driver_problem_for(const std::string &library);

} // namespace gpusched
