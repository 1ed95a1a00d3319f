#pragma once
// The errors gpusched reports to a person, for the search core and the
// driver alike (one definition, so a file that includes both layers
// compiles). Each message is the whole explanation, on one line, naming
// the Func, dimension, key, option, file or device.
//
// - UserError: what was given is wrong (a pipeline without an estimate, a
//   bad config key or command-line value); exit 1.
// - UnavailableError: this machine lacks what is needed (no GPU for
//   --device cuda, no OpenCL for --device opencl, no benchmark harness); exit 2.
// - InterruptedError: SIGINT/SIGTERM ended the work before it finished;
//   what was measured is stored; exit 130.

#include <stdexcept>

namespace gpusched {

class UserError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class UnavailableError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class InterruptedError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace gpusched
