#pragma once
// Pipeline (algorithm) features: what a stage's definition computes,
// independent of any schedule. Computed once per pipeline by the search core
// from the Halide IR of each stage (core/function_dag.*), consumed by the
// cost model's pipeline-feature head.
//
// Layout, after Adams et al. 2019: a histogram of the operations in the
// stage's definition by the scalar type they produce, and a histogram of its
// memory accesses by access pattern and type. That is kNumOpTypes +
// 4 * kNumAccessTypes = 40 rows of kNumScalarTypes = 7 columns: the 40x7
// matrix of the reference implementation. Exact meanings: docs/features.md.

#include <array>
#include <cstddef>

namespace gpusched {

enum class ScalarTypeBucket : int { Bool, UInt8, UInt16, UInt32, UInt64, Float, Double, Count };
inline constexpr int kNumScalarTypes = static_cast<int>(ScalarTypeBucket::Count);

enum class OpType : int {
    Const,
    Cast,
    Variable,
    Param,
    Add,
    Sub,
    Mod,
    Mul,
    Div,
    Min,
    Max,
    EQ,
    NE,
    LT,
    LE,
    And,
    Or,
    Not,
    Select,
    ImageCall,
    FuncCall,
    SelfCall,
    ExternCall,
    Let,
    Count
};
inline constexpr int kNumOpTypes = static_cast<int>(OpType::Count);

// Who is accessed: another Func, this Func itself (update stages), an input
// image, or the stage's own store.
enum class AccessType : int { LoadFunc, LoadSelf, LoadImage, Store, Count };
inline constexpr int kNumAccessTypes = static_cast<int>(AccessType::Count);

// How the accessed coordinates relate to the loop variables.
enum class AccessPattern : int { Pointwise, Transpose, Broadcast, Slice, Count };
inline constexpr int kNumAccessPatterns = static_cast<int>(AccessPattern::Count);

inline constexpr int kPipelineFeatureRows = kNumOpTypes + kNumAccessPatterns * kNumAccessTypes; // 40
inline constexpr int kNumPipelineFeatures = kPipelineFeatureRows * kNumScalarTypes;             // 280
inline constexpr int kPipelineFeatureLayoutVersion = 1;

struct PipelineFeatures {
    // values[row * kNumScalarTypes + type]; rows are the op types first,
    // then the access rows grouped by pattern: pattern * kNumAccessTypes + access.
    std::array<float, kNumPipelineFeatures> values{};

    float &op(OpType op, ScalarTypeBucket t) { return values[index(static_cast<int>(op), t)]; }
    float &access(AccessPattern p, AccessType a, ScalarTypeBucket t) {
        return values[index(kNumOpTypes + static_cast<int>(p) * kNumAccessTypes + static_cast<int>(a), t)];
    }
    float op(OpType op, ScalarTypeBucket t) const { return values[index(static_cast<int>(op), t)]; }
    float access(AccessPattern p, AccessType a, ScalarTypeBucket t) const {
        return values[index(kNumOpTypes + static_cast<int>(p) * kNumAccessTypes + static_cast<int>(a), t)];
    }

private:
    static constexpr std::size_t index(int row, ScalarTypeBucket t) {
        return static_cast<std::size_t>(row * kNumScalarTypes + static_cast<int>(t));
    }
};

} // namespace gpusched
