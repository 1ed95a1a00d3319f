#include "core/device_memory.h"

namespace gpusched {

int64_t device_bytes(const FunctionDAG &dag, const Decisions &d) {
    int64_t total = 0;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const Node &node = dag.nodes[n];
        if (node.is_output || d.funcs[n].location != ComputeLocation::Root) continue;
        Region region = node.region;
        dag.grow_by_updates(static_cast<int>(n), region);
        total += region_points(region) * node.bytes_per_point;
    }
    return total;
}

} // namespace gpusched
