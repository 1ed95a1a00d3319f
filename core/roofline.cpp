#include "core/roofline.h"

namespace gpusched {

namespace {

// The operations a point of a stage does (its pipeline features' op
// histogram over every scalar type): arithmetic, comparisons, logic and
// selects; not constants, variables, casts, loads or lets.
double operations_per_point(const PipelineFeatures &f) {
    static constexpr OpType kCounted[] = {OpType::Add, OpType::Sub, OpType::Mod, OpType::Mul, OpType::Div,
                                          OpType::Min, OpType::Max, OpType::EQ,  OpType::NE,  OpType::LT,
                                          OpType::LE,  OpType::And, OpType::Or,  OpType::Not, OpType::Select};
    double n = 0;
    for (OpType op : kCounted)
        for (int t = 0; t < kNumScalarTypes; t++)
            n += f.op(op, static_cast<ScalarTypeBucket>(t));
    return n;
}

} // namespace

Roofline roofline(const FunctionDAG &dag, const GpuProfile &gpu) {
    Roofline r;
    for (const ImageInput &im : dag.images)
        r.bytes += static_cast<double>(region_points(im.region)) * im.bytes;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const Node &node = dag.nodes[n];
        if (node.is_output) r.bytes += static_cast<double>(region_points(node.region)) * node.bytes_per_point;
        for (const Stage &st : node.stages) {
            double points = 1;
            for (const Span &s : dag.loop_bounds(st, node.region))
                points *= static_cast<double>(s.extent());
            r.operations += points * operations_per_point(st.features);
        }
    }
    if (gpu.memory_bandwidth_gb_per_s > 0)
        r.memory_ms = r.bytes / (gpu.memory_bandwidth_gb_per_s * 1e9) * 1e3;
    if (gpu.fp32_tflops > 0) r.compute_ms = r.operations / (gpu.fp32_tflops * 1e12) * 1e3;
    return r;
}

} // namespace gpusched
