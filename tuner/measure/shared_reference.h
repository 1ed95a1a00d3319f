#pragma once
// The CPU reference of a round's pipeline (tuner/measure/validation/pocl_validation.h):
// the outputs every benchmark's output is checked against. Computed once,
// by whichever worker first needs it, while the others go on with what does
// not need it (a baseline's own schedule search); a worker that needs it
// meanwhile waits.

#include <mutex>

#include "tuner/measure/validation/pocl_validation.h"

namespace gpusched {

class SharedReference {
public:
    explicit SharedReference(ValidationRequest request) : request_(std::move(request)) {}

    const ReferenceOutputs &get() {
        std::call_once(once_, [this] { outputs_ = reference_outputs(request_); });
        return outputs_;
    }

private:
    ValidationRequest request_;
    std::once_flag once_;
    ReferenceOutputs outputs_;
};

} // namespace gpusched
