#pragma once
// The two errors the modes report to a person: what they asked for is wrong
// (UserError, exit 1), or this machine lacks what it needs (UnavailableError,
// exit 2: no GPU for --device cuda, no OpenCL for --device opencl, no
// benchmark harness). Each message is the whole explanation, on one line.

#include <stdexcept>

#include "core/user_error.h"

namespace gpusched {

class UnavailableError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// SIGINT/SIGTERM ended the work before it finished (exit 130); what was
// measured is stored.
class InterruptedError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace gpusched
