#include "tuner/measure/executor/executor.h"

#include "common/errors.h"

namespace gpusched {

std::unique_ptr<Executor> make_executor(const ExecutorOptions &options) {
    if (options.kind == "local") return make_local_executor(options);
    if (options.kind == "slurm") return make_slurm_executor(options);
    throw UserError("unknown executor '" + options.kind + "' (known: local, slurm)");
}

} // namespace gpusched
