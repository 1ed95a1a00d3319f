// random_pipeline: a seeded generator of random Halide image pipelines, in the
// spirit of Adams et al. 2019 ("Learning to Optimize Halide with Tree Search and
// Random Programs"), used to train and stress the gpusched cost model and search.
//
// One seed names one pipeline: a small DAG of 3-D (x, y, c) Funcs drawn from a
// fixed catalogue of stage kinds (pointwise ops, casts, stencils, separable
// filters, down/upsampling, transposes, window reductions, histograms with a
// prefix-sum scan, per-channel sums, channel mixes), fed by one or two 3-D input
// images and producing one to three float outputs. Every random draw comes from
// our own splitmix64 stream and is consumed in a fixed statement order (never two
// draws in one argument list), so the same GeneratorParams give the same pipeline,
// bit for bit, with any compiler and standard library.
//
// Invariants the construction keeps, so that any schedule can run on any input:
//   * inputs go through BoundaryConditions, and every Func is defined on all of
//     Z^3; data-dependent indices (histogram bins, gathers) are clamped;
//   * each Func carries a static value range [lo, hi] computed by interval
//     arithmetic; integer stages never overflow their type, float stages are
//     renormalised before they grow large, and each output maps its producer's
//     range onto [0, 1], so a correct build yields finite values in [0, 1].
// docs/random-pipelines.md describes the family and its distribution.

#include "Halide.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace Halide;

// splitmix64 (Steele, Lea, Flood 2014): tiny, fully specified, identical output on
// every platform, unlike std:: distributions.
class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull ^ 0xD1B54A32D192ED03ull) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n); the modulo bias is irrelevant here, determinism is not.
    int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
    int range(int lo, int hi_inclusive) { return lo + below(hi_inclusive - lo + 1); }
    bool chance(int percent) { return below(100) < percent; }

private:
    uint64_t state_;
};

// none: no schedule (for autoschedulers); naive: the GPU baseline of the brief
// (compute_root + 16x16 gpu_tile); root: the same Funcs compute_root on the CPU,
// a reference build whose cost is linear in the image size (unscheduled, a
// whole-image histogram would be recomputed per output pixel).
enum class ScheduleKind { None, Naive, Root };
enum class SizeKind { Large, Medium, Small };

// The stage catalogue. The integer weights (out of 100) are the probability of
// drawing each kind when it is applicable; docs/random-pipelines.md lists them.
enum class StageKind {
    Pointwise,
    Binary,
    Cast,
    Stencil3x3,
    Stencil5x5,
    Separable,
    Downsample,
    Upsample,
    Transpose,
    WindowReduce,
    Histogram,
    ChannelSum,
    ChannelMix,
    Gather,    // only with gathers=true (kGatherWeight)
    Scan,      // only with scans=true (kScanWeight)
    Pyramid,   // only with pyramids=true (kPyramidWeight)
    GlobalMax, // only with reductions=true (kReductionWeight)
    RowMean,   // only with reductions=true (kReductionWeight)
};

struct KindWeight {
    StageKind kind;
    int weight;
    const char *name;
};

constexpr KindWeight kKindWeights[] = {
    {StageKind::Pointwise, 12, "pointwise"},
    {StageKind::Binary, 12, "binary"},
    {StageKind::Cast, 8, "cast"},
    {StageKind::Stencil3x3, 9, "stencil3x3"},
    {StageKind::Stencil5x5, 5, "stencil5x5"},
    {StageKind::Separable, 8, "separable"},
    {StageKind::Downsample, 8, "downsample"},
    {StageKind::Upsample, 6, "upsample"},
    {StageKind::Transpose, 5, "transpose"},
    {StageKind::WindowReduce, 9, "window_reduce"},
    {StageKind::Histogram, 7, "histogram"},
    {StageKind::ChannelSum, 6, "channel_sum"},
    {StageKind::ChannelMix, 5, "channel_mix"},
};

// The gather kind is drawn only with gathers=true, as the draws above 100
// of a draw over 100 + kGatherWeight: without it no draw changes, so every
// seed keeps the pipeline it had before the kind existed.
constexpr int kGatherWeight = 8;
// The same for the scan (a first-order recurrence over the rows or columns)
// and the pyramid (down/up-sampling levels with rounding divisions), the
// shapes of issue 12; drawn after the gather.
constexpr int kScanWeight = 6;
constexpr int kPyramidWeight = 6;
// And for reductions to small outputs (issue 27): a whole-image maximum (one
// point) and a mean per row (one point per row and channel), half each;
// drawn after the pyramid.
constexpr int kReductionWeight = 12;

const char *kind_name(StageKind k) {
    if (k == StageKind::Gather) return "gather";
    if (k == StageKind::Scan) return "scan";
    if (k == StageKind::Pyramid) return "pyramid";
    if (k == StageKind::GlobalMax) return "global_max";
    if (k == StageKind::RowMean) return "row_mean";
    for (const KindWeight &kw : kKindWeights) {
        if (kw.kind == k) return kw.name;
    }
    return "?";
}

// Downsampling deeper than this makes logical images of a few pixels at the test
// sizes; upsampling beyond 2x the input makes the large estimate huge.
constexpr int kMaxDownLevel = 3;
constexpr int kMinDownLevel = -1;
// Float stages whose range leaves [-kFloatLimit, kFloatLimit] are renormalised to
// [0, 1], so products of products stay far from overflow and keep precision.
constexpr double kFloatLimit = 1.0e4;

// One value-producing node of the DAG: a 3-D Func with its type, static value
// range and logical extent (the region that carries image content; the Func is
// defined everywhere).
struct Node {
    Func f;
    Type type;
    double lo = 0, hi = 0;
    Expr w, h;                  // logical extent, in terms of the input's runtime size
    int est_w = 0, est_h = 0;   // the same at the estimate size
    int level = 0;              // log2(input size / this size)
    std::string label;          // "s3" or "in0"
    bool has_reduction = false; // a reduction lies on some path into this node
};

double type_max(const Type &t) {
    return t.is_float() ? 1.0 : (t.bits() == 8 ? 255.0 : 65535.0);
}

std::string type_name(const Type &t) {
    if (t.is_float()) return "float32";
    return t.bits() == 8 ? "uint8" : "uint16";
}

Expr fconst(double v) {
    return Expr(static_cast<float>(v));
}

class RandomPipeline : public Generator<RandomPipeline> {
public:
    GeneratorParam<int> seed{"seed", 0};
    GeneratorParam<int> max_stages{"max_stages", 12, 1, 64};
    // 0 draws the output count (1..3) from the seed.
    GeneratorParam<int> num_outputs{"num_outputs", 1, 0, 3};
    GeneratorParam<ScheduleKind> schedule_kind{
        "schedule",
        ScheduleKind::None,
        {{"none", ScheduleKind::None}, {"naive", ScheduleKind::Naive}, {"root", ScheduleKind::Root}}};
    GeneratorParam<SizeKind> size{
        "size",
        SizeKind::Large,
        {{"large", SizeKind::Large}, {"medium", SizeKind::Medium}, {"small", SizeKind::Small}}};
    GeneratorParam<bool> describe{"describe", false};
    // Adds the `gather` stage kind (a read at a clamped, data-dependent
    // index); off by default so that existing seeds give the same pipelines.
    GeneratorParam<bool> gathers{"gathers", false};
    // Add the `scan` and `pyramid` kinds (issue 12); off by default for the
    // same reason.
    GeneratorParam<bool> scans{"scans", false};
    GeneratorParam<bool> pyramids{"pyramids", false};
    // Add the `global_max` and `row_mean` kinds (issue 27: reductions whose
    // output cannot fill a GPU); off by default for the same reason.
    GeneratorParam<bool> reductions{"reductions", false};

    void configure() {
        rng_ = SplitMix64(static_cast<uint64_t>(static_cast<int64_t>(seed)));
        const int input_count = rng_.chance(35) ? 2 : 1;
        for (int i = 0; i < input_count; i++) {
            const int t = rng_.below(3);
            const Type type = t == 0 ? Float(32) : (t == 1 ? UInt(8) : UInt(16));
            inputs_.push_back(add_input<Buffer<>>("input_" + std::to_string(i), type, 3));
            input_types_.push_back(type);
        }
        output_count_ = num_outputs;
        if (output_count_ == 0) {
            const int r = rng_.below(100);
            output_count_ = r < 50 ? 1 : (r < 80 ? 2 : 3);
        }
        for (int i = 0; i < output_count_; i++) {
            outputs_.push_back(add_output<Buffer<>>("output_" + std::to_string(i), Float(32), 3));
        }
    }

    void generate() {
        switch ((SizeKind)size) {
        case SizeKind::Large:
            est_w_ = 1536, est_h_ = 2560;
            break;
        case SizeKind::Medium:
            est_w_ = 512, est_h_ = 384;
            break;
        case SizeKind::Small:
            est_w_ = 128, est_h_ = 96;
            break;
        }
        log_ << "random_pipeline seed=" << (int)seed << " max_stages=" << (int)max_stages
             << " outputs=" << output_count_ << " inputs=" << inputs_.size() << "\n";

        for (size_t i = 0; i < inputs_.size(); i++) {
            add_input_node(i);
        }

        const int lower = std::max(output_count_, (max_stages + 1) / 2);
        const int stage_count = rng_.range(std::min(lower, (int)max_stages), max_stages);
        for (int s = 0; s < stage_count; s++) {
            add_stage(s);
        }
        add_outputs();

        if (describe) {
            std::cerr << log_.str();
        }
    }

    void schedule() {
        if (schedule_kind == ScheduleKind::Root) {
            for (RootFunc &rf : root_funcs_) {
                rf.f.compute_root();
            }
            return;
        }
        if (schedule_kind != ScheduleKind::Naive) return;
        _halide_user_assert(get_target().has_gpu_feature())
            << "random_pipeline: schedule=naive writes a GPU schedule (gpu_tile 16x16) and needs a "
            << "target with a GPU feature (e.g. host-cuda or host-opencl), but the target is "
            << get_target().to_string() << ". Use schedule=none for CPU targets.";
        for (RootFunc &rf : root_funcs_) {
            gpu_schedule(rf);
        }
    }

private:
    // A Func the naive schedule computes at root, with the pure Vars of each of
    // its update definitions (update loops over RVars stay serial).
    struct RootFunc {
        Func f;
        std::vector<std::vector<Var>> update_pure_vars;
    };

    SplitMix64 rng_{0};
    std::vector<Input<Buffer<>> *> inputs_;
    std::vector<Type> input_types_;
    std::vector<Output<Buffer<>> *> outputs_;
    int output_count_ = 1;
    int est_w_ = 0, est_h_ = 0;
    std::vector<Node> nodes_;
    std::vector<int> uses_; // how many stages read each node
    std::vector<RootFunc> root_funcs_;
    std::ostringstream log_;
    Var x{"x"}, y{"y"}, c{"c"};

    // ---- bookkeeping -------------------------------------------------------

    void mark_root(const Func &f, std::vector<std::vector<Var>> update_vars = {}) {
        root_funcs_.push_back(RootFunc{f, std::move(update_vars)});
    }

    void gpu_schedule(RootFunc &rf) {
        Func f = rf.f;
        f.compute_root();
        std::vector<Var> args = f.args();
        tile_stage(f, args);
        for (size_t u = 0; u < rf.update_pure_vars.size(); u++) {
            Stage st = f.update((int)u);
            tile_stage(st, rf.update_pure_vars[u]);
        }
    }

    // 2-D 16x16 gpu_tile over the first two pure vars, the third (if any) as a
    // further block dimension; 1-D stages get 16-wide tiles, and stages with no
    // pure var run on one GPU thread.
    template <typename StageLike> void tile_stage(StageLike &st, const std::vector<Var> &vars) {
        Var vo("vo"), vi("vi"), wo("wo"), wi("wi");
        if (vars.size() >= 2) {
            st.gpu_tile(vars[0], vars[1], vo, wo, vi, wi, 16, 16, TailStrategy::GuardWithIf);
            if (vars.size() >= 3) st.gpu_blocks(vars[2]);
        } else if (vars.size() == 1) {
            st.gpu_tile(vars[0], vo, vi, 16, TailStrategy::GuardWithIf);
        } else {
            st.gpu_single_thread();
        }
    }

    std::string describe_node(const Node &n) const {
        std::ostringstream s;
        s << type_name(n.type) << " [" << n.lo << ", " << n.hi << "] est " << n.est_w << "x" << n.est_h;
        return s.str();
    }

    void add_input_node(size_t i) {
        Input<Buffer<>> &in = *inputs_[i];
        in.set_estimates({{0, est_w_}, {0, est_h_}, {0, 3}});
        const int bc = rng_.below(3);
        Func clamped("in" + std::to_string(i) + "_bounded");
        const char *bc_name = "repeat_edge";
        if (bc == 0) {
            clamped(x, y, c) = BoundaryConditions::repeat_edge(in)(x, y, c);
        } else if (bc == 1) {
            clamped(x, y, c) = BoundaryConditions::mirror_interior(in)(x, y, c);
            bc_name = "mirror_interior";
        } else {
            clamped(x, y, c) = BoundaryConditions::mirror_image(in)(x, y, c);
            bc_name = "mirror_image";
        }
        Node n;
        n.f = clamped;
        n.type = input_types_[i];
        n.lo = 0;
        n.hi = type_max(n.type);
        n.w = in.dim(0).extent();
        n.h = in.dim(1).extent();
        n.est_w = est_w_;
        n.est_h = est_h_;
        n.label = "in" + std::to_string(i);
        log_ << "  " << n.label << " input_" << i << " " << bc_name << ": " << describe_node(n) << "\n";
        nodes_.push_back(n);
        uses_.push_back(0);
    }

    // The stream a stage reads: usually the newest node (chains), sometimes any
    // earlier one (branches, reconvergence).
    // Dangling nodes (stages nobody reads yet) are preferred over the rest so
    // that few stages end up dead.
    int pick_source() {
        const int newest = (int)nodes_.size() - 1;
        if (rng_.chance(55)) return newest;
        std::vector<int> dangling;
        for (int i = 0; i < newest; i++) {
            if (uses_[i] == 0) dangling.push_back(i);
        }
        if (!dangling.empty() && rng_.chance(70)) return dangling[rng_.below((int)dangling.size())];
        return rng_.below((int)nodes_.size());
    }

    int pick_second_operand(int first) {
        const int r = pick_source();
        if (r != first || nodes_.size() < 2) return r;
        return (first + 1 + rng_.below((int)nodes_.size() - 1)) % (int)nodes_.size();
    }

    StageKind pick_kind(const Node &src) {
        for (int attempt = 0; attempt < 64; attempt++) {
            const int extra = (gathers ? kGatherWeight : 0) + (scans ? kScanWeight : 0) +
                              (pyramids ? kPyramidWeight : 0) + (reductions ? kReductionWeight : 0);
            int r = extra > 0 ? rng_.below(100 + extra) : rng_.below(100);
            if (r >= 100) {
                r -= 100;
                if (gathers && r < kGatherWeight) return StageKind::Gather;
                r -= gathers ? kGatherWeight : 0;
                if (scans && r < kScanWeight) return StageKind::Scan;
                r -= scans ? kScanWeight : 0;
                if (pyramids && r < kPyramidWeight) return StageKind::Pyramid;
                r -= pyramids ? kPyramidWeight : 0;
                if (!reductions) return StageKind::Pyramid; // as before reductions existed
                return r < kReductionWeight / 2 ? StageKind::GlobalMax : StageKind::RowMean;
            }
            StageKind kind = StageKind::Pointwise;
            for (const KindWeight &kw : kKindWeights) {
                if (r < kw.weight) {
                    kind = kw.kind;
                    break;
                }
                r -= kw.weight;
            }
            if (kind == StageKind::Downsample && src.level >= kMaxDownLevel) continue;
            if (kind == StageKind::Upsample && src.level <= kMinDownLevel) continue;
            return kind;
        }
        return StageKind::Pointwise;
    }

    // A float Expr with range [lo, hi] becomes a node; ranges that grew past
    // kFloatLimit are mapped to [0, 1] first.
    void finish_float(Node &n, Expr v, double lo, double hi) {
        if (lo < -kFloatLimit || hi > kFloatLimit) {
            const double scale = hi > lo ? 1.0 / (hi - lo) : 0.0;
            v = (v - fconst(lo)) * fconst(scale);
            lo = 0;
            hi = 1;
        }
        n.f(x, y, c) = v;
        n.type = Float(32);
        n.lo = lo;
        n.hi = hi;
    }

    // An Int(32) Expr with range [lo, hi] inside [0, type_max(t)] becomes a node of type t.
    void finish_int(Node &n, const Expr &v, int64_t lo, int64_t hi, const Type &t) {
        assert(lo >= 0 && hi <= (int64_t)type_max(t) && "integer stage outside its type");
        n.f(x, y, c) = cast(t, v);
        n.type = t;
        n.lo = (double)lo;
        n.hi = (double)hi;
    }

    Node derive(const Node &src, int s, StageKind kind) {
        Node n;
        n.f = Func("s" + std::to_string(s) + "_" + kind_name(kind));
        n.w = src.w;
        n.h = src.h;
        n.est_w = src.est_w;
        n.est_h = src.est_h;
        n.level = src.level;
        n.label = "s" + std::to_string(s);
        n.has_reduction = src.has_reduction;
        return n;
    }

    Expr as_float(const Node &n, const Expr &xx, const Expr &yy, const Expr &cc) {
        return cast<float>(n.f(xx, yy, cc));
    }
    Expr as_int(const Node &n, const Expr &xx, const Expr &yy, const Expr &cc) {
        return cast<int32_t>(n.f(xx, yy, cc));
    }

    // ---- the stages ----------------------------------------------------------

    void add_stage(int s) {
        const int src_index = pick_source();
        const Node &src = nodes_[src_index];
        const StageKind kind = pick_kind(src);
        uses_[src_index]++;
        std::string detail;
        std::string inputs = src.label;
        Node n = derive(src, s, kind);
        switch (kind) {
        case StageKind::Pointwise:
            detail = pointwise(n, src);
            break;
        case StageKind::Binary: {
            const int other = pick_second_operand(src_index);
            uses_[other]++;
            inputs += ", " + nodes_[other].label;
            n.has_reduction = n.has_reduction || nodes_[other].has_reduction;
            detail = binary(n, src, nodes_[other]);
            break;
        }
        case StageKind::Cast:
            detail = cast_stage(n, src);
            break;
        case StageKind::Stencil3x3:
            detail = stencil(n, src, 1);
            break;
        case StageKind::Stencil5x5:
            detail = stencil(n, src, 2);
            break;
        case StageKind::Separable:
            detail = separable(n, src);
            break;
        case StageKind::Downsample:
            detail = downsample(n, src);
            break;
        case StageKind::Upsample:
            detail = upsample(n, src);
            break;
        case StageKind::Transpose:
            detail = transpose(n, src);
            break;
        case StageKind::WindowReduce:
            detail = window_reduce(n, src);
            break;
        case StageKind::Histogram:
            detail = histogram(n, src);
            break;
        case StageKind::ChannelSum:
            detail = channel_sum(n, src);
            break;
        case StageKind::ChannelMix:
            detail = channel_mix(n, src);
            break;
        case StageKind::Scan:
            detail = scan(n, src);
            break;
        case StageKind::Pyramid:
            detail = pyramid(n, src);
            break;
        case StageKind::GlobalMax:
            detail = global_max(n, src);
            break;
        case StageKind::RowMean:
            detail = row_mean(n, src);
            break;
        case StageKind::Gather: {
            const int index_src = pick_second_operand(src_index);
            uses_[index_src]++;
            inputs += ", " + nodes_[index_src].label;
            n.has_reduction = n.has_reduction || nodes_[index_src].has_reduction;
            detail = gather(n, src, nodes_[index_src]);
            break;
        }
        }
        // Cheap pointwise stages stay inline in the naive schedule, as a person
        // writing it would leave them; everything else gets its own kernel.
        if (kind != StageKind::Pointwise && kind != StageKind::Binary && kind != StageKind::Cast &&
            kind != StageKind::ChannelMix) {
            mark_root(n.f);
        }
        log_ << "  " << n.label << " " << kind_name(kind) << "(" << inputs << ") " << detail << ": "
             << describe_node(n) << "\n";
        nodes_.push_back(n);
        uses_.push_back(0);
    }

    std::string pointwise(Node &n, const Node &a) {
        const int op = rng_.below(5);
        if (a.type.is_float()) {
            Expr v = a.f(x, y, c);
            const double mid = 0.5 * (a.lo + a.hi);
            switch (op) {
            case 0: {
                static const double kScales[] = {-2.0, -1.0, -0.5, 0.5, 2.0, 3.0};
                const double k = kScales[rng_.below(6)];
                const double b = (double)rng_.range(-1, 1);
                const double p = a.lo * k + b, q = a.hi * k + b;
                finish_float(n, v * fconst(k) + fconst(b), std::min(p, q), std::max(p, q));
                return "affine";
            }
            case 1:
                finish_float(n, sqrt(max(v, 0.0f)), std::sqrt(std::max(a.lo, 0.0)),
                             std::sqrt(std::max(a.hi, 0.0)));
                return "sqrt";
            case 2: {
                const double m = std::max(a.lo * a.lo, a.hi * a.hi);
                const double l = (a.lo <= 0 && a.hi >= 0) ? 0.0 : std::min(a.lo * a.lo, a.hi * a.hi);
                finish_float(n, v * v, l, m);
                return "square";
            }
            case 3:
                finish_float(n, sin(v), -1.0, 1.0);
                return "sin";
            default:
                finish_float(n, select(v > fconst(mid), v - fconst(mid), fconst(mid) - v), 0.0,
                             std::max(a.hi - mid, mid - a.lo));
                return "absdev";
            }
        }
        Expr v = as_int(a, x, y, c);
        const int64_t lo = (int64_t)a.lo, hi = (int64_t)a.hi;
        const int64_t tmax = (int64_t)type_max(a.type);
        const int64_t mid = (lo + hi) / 2;
        switch (op) {
        case 0:
            finish_int(n, v / 2 + v / 4, lo / 2 + lo / 4, hi / 2 + hi / 4, a.type);
            return "three_quarters";
        case 1:
            finish_int(n, (int)tmax - v, tmax - hi, tmax - lo, a.type);
            return "invert";
        case 2:
            finish_int(n, min(v, (int)mid), std::min(lo, mid), mid, a.type);
            return "clamp_high";
        case 3:
            finish_int(n, min(v * 2, (int)tmax), std::min(lo * 2, tmax), std::min(hi * 2, tmax), a.type);
            return "saturating_double";
        default:
            finish_int(n, select(v > (int)mid, v - (int)mid, (int)mid - v), 0, std::max(hi - mid, mid - lo),
                       a.type);
            return "absdev";
        }
    }

    std::string binary(Node &n, const Node &a, const Node &b) {
        const int op = rng_.below(5);
        if (!a.type.is_float() && a.type == b.type) {
            Expr u = as_int(a, x, y, c), v = as_int(b, x, y, c);
            const int64_t alo = (int64_t)a.lo, ahi = (int64_t)a.hi, blo = (int64_t)b.lo, bhi = (int64_t)b.hi;
            switch (op) {
            case 0:
                finish_int(n, (u + v) / 2, (alo + blo) / 2, (ahi + bhi) / 2, a.type);
                return "average";
            case 1:
                finish_int(n, select(u > v, u - v, v - u), 0, std::max({ahi - blo, bhi - alo, (int64_t)0}),
                           a.type);
                return "absdiff";
            case 2:
                finish_int(n, min(u, v), std::min(alo, blo), std::min(ahi, bhi), a.type);
                return "min";
            case 3:
                finish_int(n, max(u, v), std::max(alo, blo), std::max(ahi, bhi), a.type);
                return "max";
            default:
                finish_int(n, select(u > v, u, v / 2), std::min(alo, blo / 2), std::max(ahi, bhi / 2),
                           a.type);
                return "select";
            }
        }
        Expr u = as_float(a, x, y, c), v = as_float(b, x, y, c);
        switch (op) {
        case 0:
            finish_float(n, u + v, a.lo + b.lo, a.hi + b.hi);
            return "add";
        case 1:
            finish_float(n, u - v, a.lo - b.hi, a.hi - b.lo);
            return "sub";
        case 2: {
            const double p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
            finish_float(n, u * v, *std::min_element(p, p + 4), *std::max_element(p, p + 4));
            return "mul";
        }
        case 3:
            finish_float(n, max(u, v), std::max(a.lo, b.lo), std::max(a.hi, b.hi));
            return "max";
        default:
            finish_float(n, select(u > v, u, v * 0.5f), std::min(a.lo, 0.5 * b.lo),
                         std::max(a.hi, 0.5 * b.hi));
            return "select";
        }
    }

    std::string cast_stage(Node &n, const Node &a) {
        // Pick a target type different from the source.
        const int r = rng_.below(2);
        Type to;
        if (a.type.is_float()) {
            to = r == 0 ? UInt(8) : UInt(16);
        } else if (a.type.bits() == 8) {
            to = r == 0 ? Float(32) : UInt(16);
        } else {
            to = r == 0 ? Float(32) : UInt(8);
        }
        if (a.type.is_float()) {
            // Quantise [lo, hi] onto the integer type's range.
            const double tmax = type_max(to);
            const double scale = a.hi > a.lo ? tmax / (a.hi - a.lo) : 0.0;
            Expr q = clamp((a.f(x, y, c) - fconst(a.lo)) * fconst(scale) + 0.5f, 0.0f, fconst(tmax));
            n.f(x, y, c) = cast(to, q);
            n.type = to;
            n.lo = 0;
            n.hi = tmax;
        } else if (to.is_float()) {
            const double scale = 1.0 / type_max(a.type);
            n.f(x, y, c) = cast<float>(a.f(x, y, c)) * fconst(scale);
            n.type = to;
            n.lo = a.lo * scale;
            n.hi = a.hi * scale;
        } else if (to.bits() == 16) {
            n.f(x, y, c) = cast<uint16_t>(a.f(x, y, c)) * cast<uint16_t>(257);
            n.type = to;
            n.lo = a.lo * 257;
            n.hi = a.hi * 257;
        } else {
            n.f(x, y, c) = cast<uint8_t>(a.f(x, y, c) >> 8);
            n.type = to;
            n.lo = std::floor(a.lo / 256);
            n.hi = std::floor(a.hi / 256);
        }
        return type_name(a.type) + "->" + type_name(to);
    }

    // Weighted sum of taps; integer sources accumulate in Int(32) and are mapped
    // back onto their type's range by an exact integer division.
    std::string weighted_sum(Node &n, const Node &a, const std::vector<Expr> &taps_f,
                             const std::vector<Expr> &taps_i, const std::vector<int> &weights) {
        double smin = 0, smax = 0;
        for (int w : weights) {
            smin += std::min(w * a.lo, w * a.hi);
            smax += std::max(w * a.lo, w * a.hi);
        }
        if (a.type.is_float()) {
            Expr sum = fconst(0);
            for (size_t i = 0; i < weights.size(); i++) {
                if (weights[i] != 0) sum += taps_f[i] * fconst(weights[i]);
            }
            finish_float(n, sum, smin, smax);
            return "";
        }
        Expr sum = 0;
        for (size_t i = 0; i < weights.size(); i++) {
            if (weights[i] != 0) sum += taps_i[i] * weights[i];
        }
        const int64_t imin = (int64_t)smin, imax = (int64_t)smax;
        const int64_t tmax = (int64_t)type_max(a.type);
        const int64_t div = std::max<int64_t>(1, (imax - imin + tmax - 1) / tmax);
        finish_int(n, (sum - (int)imin) / (int)div, 0, (imax - imin) / div, a.type);
        return "";
    }

    std::string stencil(Node &n, const Node &a, int radius) {
        const bool edge = rng_.chance(30);
        std::vector<int> weights;
        std::vector<Expr> tf, ti;
        for (int dy = -radius; dy <= radius; dy++) {
            for (int dx = -radius; dx <= radius; dx++) {
                const int w = edge ? rng_.range(-2, 2) : rng_.range(0, 3);
                weights.push_back(w);
                tf.push_back(as_float(a, x + dx, y + dy, c));
                ti.push_back(as_int(a, x + dx, y + dy, c));
            }
        }
        // A zero kernel would make a constant stage; keep the centre tap.
        const size_t centre = weights.size() / 2;
        if (std::all_of(weights.begin(), weights.end(), [](int w) { return w == 0; })) weights[centre] = 1;
        weighted_sum(n, a, tf, ti, weights);
        return edge ? "signed weights" : "blur weights";
    }

    std::string separable(Node &n, const Node &a) {
        const int taps = rng_.range(3, 7);
        const int r0 = -(taps / 2);
        std::vector<int> weights;
        int total = 0;
        for (int i = 0; i < taps; i++) {
            weights.push_back(rng_.range(1, 4));
            total += weights.back();
        }
        const bool is_float = a.type.is_float();
        Func row(n.f.name() + "_row");
        Expr sum = is_float ? fconst(0) : Expr(0);
        for (int i = 0; i < taps; i++) {
            Expr tap = is_float ? as_float(a, x + r0 + i, y, c) : as_int(a, x + r0 + i, y, c);
            sum += is_float ? tap * fconst(weights[i]) : tap * weights[i];
        }
        row(x, y, c) = sum;
        mark_root(row);
        Expr col = is_float ? fconst(0) : Expr(0);
        for (int i = 0; i < taps; i++) {
            Expr tap = row(x, y + r0 + i, c);
            col += is_float ? tap * fconst(weights[i]) : tap * weights[i];
        }
        const int64_t norm = (int64_t)total * total;
        if (is_float) {
            finish_float(n, col * fconst(1.0 / (double)norm), a.lo, a.hi);
        } else {
            finish_int(n, col / (int)norm, (int64_t)a.lo, (int64_t)a.hi, a.type);
        }
        return std::to_string(taps) + " taps";
    }

    std::string downsample(Node &n, const Node &a) {
        const bool pool_max = rng_.chance(30);
        n.w = max(a.w / 2, 1);
        n.h = max(a.h / 2, 1);
        n.est_w = std::max(a.est_w / 2, 1);
        n.est_h = std::max(a.est_h / 2, 1);
        n.level = a.level + 1;
        if (pool_max) {
            n.f(x, y, c) = max(max(a.f(2 * x, 2 * y, c), a.f(2 * x + 1, 2 * y, c)),
                               max(a.f(2 * x, 2 * y + 1, c), a.f(2 * x + 1, 2 * y + 1, c)));
            n.type = a.type;
            n.lo = a.lo;
            n.hi = a.hi;
            return "max pool 2x2";
        }
        if (a.type.is_float()) {
            Expr s = a.f(2 * x, 2 * y, c) + a.f(2 * x + 1, 2 * y, c) + a.f(2 * x, 2 * y + 1, c) +
                     a.f(2 * x + 1, 2 * y + 1, c);
            finish_float(n, s * 0.25f, a.lo, a.hi);
        } else {
            Expr s = as_int(a, 2 * x, 2 * y, c) + as_int(a, 2 * x + 1, 2 * y, c) +
                     as_int(a, 2 * x, 2 * y + 1, c) + as_int(a, 2 * x + 1, 2 * y + 1, c);
            finish_int(n, s / 4, (int64_t)a.lo, (int64_t)a.hi, a.type);
        }
        return "average 2x2";
    }

    std::string upsample(Node &n, const Node &a) {
        const bool linear = rng_.chance(60);
        n.w = a.w * 2;
        n.h = a.h * 2;
        n.est_w = a.est_w * 2;
        n.est_h = a.est_h * 2;
        n.level = a.level - 1;
        if (!linear) {
            n.f(x, y, c) = a.f(x / 2, y / 2, c);
            n.type = a.type;
            n.lo = a.lo;
            n.hi = a.hi;
            return "nearest";
        }
        // Bilinear with weights 3:1 toward the nearer coarse sample.
        Expr x0 = (x - 1) / 2, y0 = (y - 1) / 2;
        Expr wx = select(x % 2 == 0, 1, 3), wy = select(y % 2 == 0, 1, 3);
        if (a.type.is_float()) {
            Expr fx = cast<float>(wx), fy = cast<float>(wy);
            Expr v = (a.f(x0, y0, c) * (4.0f - fx) + a.f(x0 + 1, y0, c) * fx) * (4.0f - fy) +
                     (a.f(x0, y0 + 1, c) * (4.0f - fx) + a.f(x0 + 1, y0 + 1, c) * fx) * fy;
            finish_float(n, v * (1.0f / 16.0f), a.lo, a.hi);
        } else {
            Expr v = (as_int(a, x0, y0, c) * (4 - wx) + as_int(a, x0 + 1, y0, c) * wx) * (4 - wy) +
                     (as_int(a, x0, y0 + 1, c) * (4 - wx) + as_int(a, x0 + 1, y0 + 1, c) * wx) * wy;
            finish_int(n, v / 16, (int64_t)a.lo, (int64_t)a.hi, a.type);
        }
        return "bilinear";
    }

    std::string transpose(Node &n, const Node &a) {
        n.f(x, y, c) = a.f(y, x, c);
        n.type = a.type;
        n.lo = a.lo;
        n.hi = a.hi;
        n.w = a.h;
        n.h = a.w;
        n.est_w = a.est_h;
        n.est_h = a.est_w;
        return "swap x,y";
    }

    // A window sum or max written as an explicit reduction: a Func with an
    // update over an RDom, then a normalising pointwise stage.
    std::string window_reduce(Node &n, const Node &a) {
        const int radius = rng_.range(1, 3);
        const bool use_max = rng_.chance(30);
        const int side = 2 * radius + 1;
        RDom r(-radius, side, -radius, side, n.f.name() + "_r");
        Func acc(n.f.name() + "_acc");
        const bool is_float = a.type.is_float();
        n.has_reduction = true;
        if (use_max) {
            acc(x, y, c) = is_float ? fconst(a.lo) : cast<int32_t>((int)a.lo);
            Expr tap = is_float ? Expr(a.f(x + r.x, y + r.y, c)) : as_int(a, x + r.x, y + r.y, c);
            acc(x, y, c) = max(acc(x, y, c), tap);
            mark_root(acc, {{x, y, c}});
            if (is_float) {
                finish_float(n, acc(x, y, c), a.lo, a.hi);
            } else {
                finish_int(n, acc(x, y, c), (int64_t)a.lo, (int64_t)a.hi, a.type);
            }
            return "max over " + std::to_string(side) + "x" + std::to_string(side) + " RDom";
        }
        acc(x, y, c) = is_float ? fconst(0) : Expr(0);
        acc(x, y, c) += is_float ? Expr(a.f(x + r.x, y + r.y, c)) : as_int(a, x + r.x, y + r.y, c);
        mark_root(acc, {{x, y, c}});
        const int count = side * side;
        if (is_float) {
            finish_float(n, acc(x, y, c) * fconst(1.0 / count), a.lo, a.hi);
        } else {
            finish_int(n, acc(x, y, c) / count, (int64_t)a.lo, (int64_t)a.hi, a.type);
        }
        return "sum over " + std::to_string(side) + "x" + std::to_string(side) + " RDom";
    }

    Expr bin_of(const Node &a, const Expr &v, int bins) {
        const double scale = a.hi > a.lo ? bins / (a.hi - a.lo) : 0.0;
        return clamp(cast<int32_t>((cast<float>(v) - fconst(a.lo)) * fconst(scale)), 0, bins - 1);
    }

    // Histogram equalisation: a histogram over the whole logical image (RDom
    // with a data-dependent, clamped store index), an in-place prefix-sum scan,
    // and a lookup of each pixel's cumulative frequency.
    std::string histogram(Node &n, const Node &a) {
        static const int kBins[] = {16, 32, 64, 128, 256};
        const int bins = kBins[rng_.below(5)];
        Var b("b");
        Func hist(n.f.name() + "_hist"), cdf(n.f.name() + "_cdf");
        RDom r(0, a.w, 0, a.h, n.f.name() + "_r");
        hist(b, c) = 0;
        hist(bin_of(a, a.f(r.x, r.y, c), bins), c) += 1;
        RDom rb(1, bins - 1, n.f.name() + "_rb");
        cdf(b, c) = hist(b, c);
        cdf(rb, c) = cdf(rb - 1, c) + hist(rb, c);
        mark_root(hist, {{c}});
        mark_root(cdf, {{c}});
        Expr pixels = cast<float>(max(a.w * a.h, 1));
        finish_float(n, cast<float>(cdf(bin_of(a, a.f(x, y, c), bins), c)) / pixels, 0.0, 1.0);
        n.has_reduction = true;
        return std::to_string(bins) + " bins";
    }

    // Subtract each channel's mean over the whole logical image.
    std::string channel_sum(Node &n, const Node &a) {
        Func total(n.f.name() + "_total");
        RDom r(0, a.w, 0, a.h, n.f.name() + "_r");
        total(c) = 0.0f;
        total(c) += as_float(a, r.x, r.y, c);
        mark_root(total, {{c}});
        Expr mean = total(c) / cast<float>(max(a.w * a.h, 1));
        finish_float(n, as_float(a, x, y, c) - mean, a.lo - a.hi, a.hi - a.lo);
        n.has_reduction = true;
        return "minus per-channel mean";
    }

    // Divide by the largest value over the whole logical image and all
    // channels (plus one, so never by zero): a reduction to one point, which
    // only a split across threads can spread over a GPU.
    std::string global_max(Node &n, const Node &a) {
        Func peak(n.f.name() + "_peak");
        RDom r(0, a.w, 0, a.h, 0, 3, n.f.name() + "_r");
        peak() = fconst(a.lo);
        peak() = max(peak(), as_float(a, r.x, r.y, r.z));
        mark_root(peak, {{}});
        const double shift = a.lo < 0 ? -a.lo : 0.0; // divide a non-negative value by a positive one
        Expr v = (as_float(a, x, y, c) + fconst(shift)) / (peak() + fconst(shift + 1.0));
        finish_float(n, v, 0.0, 1.0);
        n.has_reduction = true;
        return "divided by the image's max";
    }

    // Subtract each row's mean (per channel): one output point per row and
    // channel, a reduction along the whole row.
    std::string row_mean(Node &n, const Node &a) {
        Func sum(n.f.name() + "_rowsum");
        RDom r(0, a.w, n.f.name() + "_r");
        sum(y, c) = 0.0f;
        sum(y, c) += as_float(a, r, y, c);
        mark_root(sum, {{y, c}});
        Expr mean = sum(y, c) / cast<float>(max(a.w, 1));
        finish_float(n, as_float(a, x, y, c) - mean, a.lo - a.hi, a.hi - a.lo);
        n.has_reduction = true;
        return "minus its row's mean";
    }

    // A 3x3 colour matrix: every output channel reads all three input channels.
    std::string channel_mix(Node &n, const Node &a) {
        std::vector<Expr> rows;
        double lo = 0, hi = 0;
        for (int oc = 0; oc < 3; oc++) {
            Expr e = fconst(0);
            double rlo = 0, rhi = 0;
            for (int ic = 0; ic < 3; ic++) {
                const int w = rng_.range(-1, 2);
                if (w == 0) continue;
                e += as_float(a, x, y, ic) * fconst(w);
                rlo += std::min(w * a.lo, w * a.hi);
                rhi += std::max(w * a.lo, w * a.hi);
            }
            rows.push_back(e);
            lo = oc == 0 ? rlo : std::min(lo, rlo);
            hi = oc == 0 ? rhi : std::max(hi, rhi);
        }
        finish_float(n, select(c <= 0, rows[0], c == 1, rows[1], rows[2]), lo, hi);
        return "3x3 matrix";
    }

    // Reads a at a position that depends on the values of b (mapped onto
    // [0, 1] by b's static range): a displacement of x or y by up to
    // +-radius pixels, or a lookup of a's row (column) at the position b
    // names across the whole logical image. Either way the index is clamped,
    // by constants or by the image's extent (which the input's estimates
    // give an autoscheduler), so bounds inference bounds the read without
    // knowing b's values.
    // A first-order recurrence down the rows (or along the columns): an
    // update over an RDom covering all but the first row of the logical
    // image, reading the row before. Its region is the RDom's, whatever
    // the consumer needs.
    std::string scan(Node &n, const Node &a) {
        const bool along_y = rng_.chance(60);
        const float k = rng_.chance(50) ? 0.5f : 0.75f;
        Func acc(n.f.name() + "_acc");
        acc(x, y, c) = as_float(a, x, y, c);
        if (along_y) {
            RDom r(1, max(a.h - 1, 1), n.f.name() + "_r");
            acc(x, r, c) = k * acc(x, r - 1, c) + (1.0f - k) * as_float(a, x, r, c);
            mark_root(acc, {{x, c}});
        } else {
            RDom r(1, max(a.w - 1, 1), n.f.name() + "_r");
            acc(r, y, c) = k * acc(r - 1, y, c) + (1.0f - k) * as_float(a, r, y, c);
            mark_root(acc, {{y, c}});
        }
        n.has_reduction = true;
        finish_float(n, acc(x, y, c), a.lo, a.hi);
        return std::string("recurrence along ") + (along_y ? "y" : "x") + " (" +
               (k == 0.5f ? "0.5" : "0.75") + ")";
    }

    // A Laplacian-style pyramid: 2..4 levels down with (2x-1, 2x, 2x+1) taps
    // in x then y, back up reading the coarser level at x/2 and (x+1)/2 in
    // both dimensions, each level half its own and half the upsampled one.
    std::string pyramid(Node &n, const Node &a) {
        const int levels = rng_.range(2, 4);
        const std::string base = n.f.name();
        std::vector<Func> down(levels + 1), up(levels + 1);
        down[0] = Func(base + "_d0");
        down[0](x, y, c) = as_float(a, x, y, c);
        mark_root(down[0]);
        for (int k = 1; k <= levels; k++) {
            Func dx(base + "_dx" + std::to_string(k));
            const Func &p = down[k - 1];
            dx(x, y, c) = (p(2 * x - 1, y, c) + 2.0f * p(2 * x, y, c) + p(2 * x + 1, y, c)) * 0.25f;
            down[k] = Func(base + "_d" + std::to_string(k));
            down[k](x, y, c) = (dx(x, 2 * y - 1, c) + 2.0f * dx(x, 2 * y, c) + dx(x, 2 * y + 1, c)) * 0.25f;
            mark_root(dx);
            mark_root(down[k]);
        }
        up[levels] = down[levels];
        for (int k = levels - 1; k >= 0; k--) {
            up[k] = Func(base + "_u" + std::to_string(k));
            const Func &q = up[k + 1];
            Expr coarse = q(x / 2, y / 2, c) + q((x + 1) / 2, y / 2, c) + q(x / 2, (y + 1) / 2, c) +
                          q((x + 1) / 2, (y + 1) / 2, c);
            up[k](x, y, c) = 0.5f * down[k](x, y, c) + 0.125f * coarse;
            if (k > 0) mark_root(up[k]);
        }
        finish_float(n, up[0](x, y, c), a.lo, a.hi);
        return std::to_string(levels) + " levels";
    }

    std::string gather(Node &n, const Node &a, const Node &b) {
        const bool along_x = rng_.chance(50);
        const bool lookup = rng_.chance(40);
        const double scale = b.hi > b.lo ? 1.0 / (b.hi - b.lo) : 0.0;
        Expr t = clamp((cast<float>(b.f(x, y, c)) - fconst(b.lo)) * fconst(scale), 0.0f, 1.0f);
        std::string detail;
        Expr at;
        if (lookup) {
            Expr extent = along_x ? a.w : a.h;
            at = clamp(cast<int32_t>(t * cast<float>(extent - 1) + 0.5f), 0, extent - 1);
            detail = std::string("lookup along ") + (along_x ? "x" : "y");
        } else {
            const int radius = rng_.range(1, 4);
            Expr offset = clamp(cast<int32_t>(t * fconst(2 * radius) + 0.5f) - radius, -radius, radius);
            at = (along_x ? x : y) + offset;
            detail = std::string("displace ") + (along_x ? "x" : "y") + " by up to " + std::to_string(radius);
        }
        n.f(x, y, c) = along_x ? a.f(at, y, c) : a.f(x, at, c);
        n.type = a.type;
        n.lo = a.lo;
        n.hi = a.hi;
        return detail;
    }

    void add_outputs() {
        // Output 0 is the newest node; the others are dangling branches first
        // (so they are not dead code), then distinct earlier stages, which are
        // also consumed inside the pipeline (shared producers across outputs).
        std::vector<int> chosen{(int)nodes_.size() - 1};
        const int first_stage = (int)inputs_.size();
        for (int i = 1; i < output_count_; i++) {
            int pick = -1;
            std::vector<int> dangling;
            for (int cand = first_stage; cand < (int)nodes_.size(); cand++) {
                if (uses_[cand] == 0 && std::find(chosen.begin(), chosen.end(), cand) == chosen.end()) {
                    dangling.push_back(cand);
                }
            }
            if (!dangling.empty() && rng_.chance(60)) pick = dangling[rng_.below((int)dangling.size())];
            for (int attempt = 0; attempt < 32 && pick < 0; attempt++) {
                const int cand = first_stage + rng_.below((int)nodes_.size() - first_stage);
                if (std::find(chosen.begin(), chosen.end(), cand) == chosen.end()) pick = cand;
            }
            if (pick < 0) {
                // Few stages: take the newest stage not yet chosen.
                for (int cand = (int)nodes_.size() - 1; cand >= first_stage && pick < 0; cand--) {
                    if (std::find(chosen.begin(), chosen.end(), cand) == chosen.end()) pick = cand;
                }
            }
            _halide_user_assert(pick >= 0)
                << "random_pipeline: not enough stages for " << output_count_ << " outputs";
            chosen.push_back(pick);
        }
        for (int i = 0; i < output_count_; i++) {
            const Node &src = nodes_[chosen[i]];
            Output<Buffer<>> &out = *outputs_[i];
            const double scale = src.hi > src.lo ? 1.0 / (src.hi - src.lo) : 0.0;
            out(x, y, c) = (cast<float>(src.f(x, y, c)) - fconst(src.lo)) * fconst(scale);
            out.set_estimates({{0, src.est_w}, {0, src.est_h}, {0, 3}});
            mark_root(out);
            log_ << "  output_" << i << " <- " << src.label
                 << (src.has_reduction ? " (reduction upstream)" : "") << " est " << src.est_w << "x"
                 << src.est_h << "x3\n";
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(RandomPipeline, random_pipeline)
