#include "core/algorithm_features.h"

#include <algorithm>

#include "core/expr_eval.h"
#include "core/let_scope.h"

namespace gpusched {

using namespace Halide;
using namespace Halide::Internal;

ScalarTypeBucket type_bucket(const Type &t) {
    if (t.is_bool()) return ScalarTypeBucket::Bool;
    if (t.is_float()) return t.bits() > 32 ? ScalarTypeBucket::Double : ScalarTypeBucket::Float;
    if (t.bits() <= 8) return ScalarTypeBucket::UInt8;
    if (t.bits() <= 16) return ScalarTypeBucket::UInt16;
    if (t.bits() <= 32) return ScalarTypeBucket::UInt32;
    return ScalarTypeBucket::UInt64;
}

namespace {

// Loop variables are evaluated around an interior point; any point away
// from the borders of clamped boundary conditions gives the interior slope.
// Where an index has no value at the first (max_filter's row
// y + floor(sqrt(r*r - t*t)) - (1 << lvl) at t = 64 > r = 26), the next
// smaller one is tried: a slope unknown at every point leaves each lane its
// own sector, a worst case for an access that is in fact coalesced.
constexpr int64_t kJacobianBasePoints[] = {64, 16, 4, 1, 0};

VarValues base_values(const std::vector<LoopDim> &loops, const VarValues &params, int64_t point) {
    VarValues v = params;
    for (const LoopDim &l : loops)
        v[l.var] = static_cast<double>(point);
    return v;
}

// A call's index at the first base point where every coordinate has a
// value (the first point of all when none does: there a coordinate without
// a value has unknown slopes): its Jacobian, and each coordinate's offset
// from the loops' common value at that point.
struct IndexAtBase {
    Jacobian jacobian;
    std::vector<std::optional<int64_t>> offset;
};

IndexAtBase index_at_base(const std::vector<Expr> &args, const std::vector<LoopDim> &loops,
                          const VarValues &params) {
    VarValues v;
    std::vector<std::optional<int64_t>> base(args.size());
    auto values_at = [&](int64_t point) {
        v = base_values(loops, params, point);
        bool all = true;
        for (size_t i = 0; i < args.size(); i++) {
            base[i] = evaluate(args[i], v);
            all = all && base[i].has_value();
        }
        return all;
    };
    int64_t point = kJacobianBasePoints[0];
    bool found = false;
    for (int64_t p : kJacobianBasePoints) {
        if ((found = values_at(p))) {
            point = p;
            break;
        }
    }
    if (!found) values_at(point);
    IndexAtBase r;
    r.jacobian.assign(args.size(), std::vector<std::optional<int64_t>>(loops.size()));
    for (size_t i = 0; i < args.size(); i++) {
        r.offset.push_back(base[i] ? std::optional<int64_t>(*base[i] - point) : std::nullopt);
        if (!base[i]) continue;
        for (size_t j = 0; j < loops.size(); j++) {
            v[loops[j].var] += 1;
            auto stepped = evaluate(args[i], v);
            v[loops[j].var] -= 1;
            if (stepped) r.jacobian[i][j] = *stepped - *base[i];
        }
    }
    return r;
}

AccessPattern classify(const Jacobian &jac, const Stage &stage) {
    // Slice: some coordinate does not move with any loop (a constant or a
    // data-dependent index).
    for (const auto &row : jac) {
        bool moves = false;
        for (const auto &s : row) {
            if (!s) return AccessPattern::Slice;
            if (*s != 0) moves = true;
        }
        if (!moves) return AccessPattern::Slice;
    }
    // Broadcast: some pure loop of the stage does not move any coordinate.
    for (size_t j = 0; j < stage.loops.size(); j++) {
        if (stage.loops[j].is_rvar) continue;
        bool used = false;
        for (const auto &row : jac)
            used = used || (row[j] && *row[j] != 0);
        if (!used) return AccessPattern::Broadcast;
    }
    // Transpose: the coordinates follow the loops in a different order.
    int last = -1;
    for (const auto &row : jac) {
        int first_loop = -1;
        for (size_t j = 0; j < row.size(); j++) {
            if (*row[j] != 0) {
                first_loop = static_cast<int>(j);
                break;
            }
        }
        if (first_loop < last) return AccessPattern::Transpose;
        last = first_loop;
    }
    return AccessPattern::Pointwise;
}

class FeatureVisitor : public IRVisitor {
public:
    FeatureVisitor(const StageAnalysisInput &in, StageAnalysis &out) : in_(in), out_(out) {}

private:
    using IRVisitor::visit;

    void count(OpType op, const Type &t) { out_.features.op(op, type_bucket(t)) += 1; }

    void visit(const IntImm *op) override { count(OpType::Const, op->type); }
    void visit(const UIntImm *op) override { count(OpType::Const, op->type); }
    void visit(const FloatImm *op) override { count(OpType::Const, op->type); }
    void visit(const Cast *op) override {
        count(OpType::Cast, op->type);
        IRVisitor::visit(op);
    }
    void visit(const Variable *op) override {
        bool is_param = op->param.defined() || in_.params->count(op->name);
        count(is_param ? OpType::Param : OpType::Variable, op->type);
    }
#define GPUSCHED_COUNT_BINARY(NODE, OP)                                                                      \
    void visit(const NODE *op) override {                                                                    \
        count(OpType::OP, op->type);                                                                         \
        IRVisitor::visit(op);                                                                                \
    }
    GPUSCHED_COUNT_BINARY(Add, Add)
    GPUSCHED_COUNT_BINARY(Sub, Sub)
    GPUSCHED_COUNT_BINARY(Mod, Mod)
    GPUSCHED_COUNT_BINARY(Mul, Mul)
    GPUSCHED_COUNT_BINARY(Div, Div)
    GPUSCHED_COUNT_BINARY(Min, Min)
    GPUSCHED_COUNT_BINARY(Max, Max)
    GPUSCHED_COUNT_BINARY(EQ, EQ)
    GPUSCHED_COUNT_BINARY(NE, NE)
    GPUSCHED_COUNT_BINARY(LT, LT)
    GPUSCHED_COUNT_BINARY(LE, LE)
    GPUSCHED_COUNT_BINARY(GT, LT) // a > b is b < a
    GPUSCHED_COUNT_BINARY(GE, LE)
    GPUSCHED_COUNT_BINARY(And, And)
    GPUSCHED_COUNT_BINARY(Or, Or)
    GPUSCHED_COUNT_BINARY(Not, Not)
    GPUSCHED_COUNT_BINARY(Select, Select)
#undef GPUSCHED_COUNT_BINARY

    // A let's body sees the let's value: a load's index written through a
    // let (Halide's CSE of a Func's definition binds max_filter's
    // h = floor(sqrt(r*r - t*t)) once for all its reads; rfactor of a split
    // RVar binds the original coordinate, t = r.x.r.x_o * P + rf) is as
    // evaluable as the let's value. Left unresolved, each such load counted
    // one sector per lane.
    void visit(const Let *op) override {
        count(OpType::Let, op->type);
        op->value.accept(this);
        lets_.push(op->name, op->value);
        op->body.accept(this);
        lets_.pop(op->name);
    }

    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Halide || op->call_type == Call::Image) {
            bool self = op->call_type == Call::Halide && op->name == in_.self_name;
            std::vector<Expr> args = op->args;
            if (lets_.binds_any()) {
                for (Expr &arg : args)
                    arg = lets_.resolve(arg);
            }
            Access a;
            a.is_self = self;
            a.bytes = op->type.bytes();
            IndexAtBase index = index_at_base(args, in_.stage->loops, *in_.params);
            a.jacobian = std::move(index.jacobian);
            a.offset = std::move(index.offset);
            if (!self) a.producer = in_.resolve(op);
            AccessPattern p = classify(a.jacobian, *in_.stage);
            AccessType t =
                self ? AccessType::LoadSelf
                     : (op->call_type == Call::Image ? AccessType::LoadImage : AccessType::LoadFunc);
            out_.features.access(p, t, type_bucket(op->type)) += 1;
            count(self ? OpType::SelfCall
                       : (op->call_type == Call::Image ? OpType::ImageCall : OpType::FuncCall),
                  op->type);
            if (!self) out_.accesses.push_back(std::move(a));
        } else if (op->call_type == Call::Extern || op->call_type == Call::ExternCPlusPlus ||
                   op->call_type == Call::PureExtern) {
            count(OpType::ExternCall, op->type);
        }
    }

    const StageAnalysisInput &in_;
    StageAnalysis &out_;
    LetScope lets_;
};

int strahler_of(const Expr &e);

int combine(std::vector<int> kids) {
    if (kids.empty()) return 1;
    std::sort(kids.rbegin(), kids.rend());
    if (kids.size() > 1 && kids[0] == kids[1]) return kids[0] + 1;
    return kids[0];
}

int strahler_of(const Expr &e) {
    if (!e.defined()) return 0;
#define GPUSCHED_BIN(NODE)                                                                                   \
    if (const auto *op = e.as<NODE>()) return combine({strahler_of(op->a), strahler_of(op->b)});
    GPUSCHED_BIN(Add)
    GPUSCHED_BIN(Sub)
    GPUSCHED_BIN(Mul)
    GPUSCHED_BIN(Div)
    GPUSCHED_BIN(Mod)
    GPUSCHED_BIN(Min)
    GPUSCHED_BIN(Max)
    GPUSCHED_BIN(EQ)
    GPUSCHED_BIN(NE)
    GPUSCHED_BIN(LT)
    GPUSCHED_BIN(LE)
    GPUSCHED_BIN(GT)
    GPUSCHED_BIN(GE)
    GPUSCHED_BIN(And)
    GPUSCHED_BIN(Or)
#undef GPUSCHED_BIN
    if (const auto *op = e.as<Not>()) return strahler_of(op->a);
    if (const auto *op = e.as<Cast>()) return strahler_of(op->value);
    if (const auto *op = e.as<Select>())
        return combine(
            {strahler_of(op->condition), strahler_of(op->true_value), strahler_of(op->false_value)});
    if (const auto *op = e.as<Let>()) return combine({strahler_of(op->value), strahler_of(op->body)});
    if (const auto *op = e.as<Call>()) {
        // A load's index arithmetic happens in address registers; count the
        // loaded value as a leaf, but a pure function of values as a node.
        if (op->call_type == Call::Halide || op->call_type == Call::Image) return 1;
        std::vector<int> kids;
        for (const Expr &a : op->args)
            kids.push_back(strahler_of(a));
        return combine(kids);
    }
    return 1;
}

} // namespace

Jacobian index_jacobian(const std::vector<Expr> &args, const std::vector<LoopDim> &loops,
                        const VarValues &params) {
    return index_at_base(args, loops, params).jacobian;
}

bool is_pointwise_access(const Access &a, const Stage &consumer) {
    for (const auto &o : a.offset)
        if (!o || *o != 0) return false;
    for (size_t i = 0; i < a.jacobian.size(); i++) {
        for (size_t j = 0; j < consumer.loops.size(); j++) {
            const auto &s = a.jacobian[i][j];
            if (!s) return false;
            bool own = !consumer.loops[j].is_rvar && consumer.loops[j].func_arg == static_cast<int>(i);
            if (*s != (own ? 1 : 0)) return false;
        }
    }
    return true;
}

StageAnalysis analyze_stage(const StageAnalysisInput &in) {
    StageAnalysis out;
    FeatureVisitor fv(in, out);
    std::vector<int> kids;
    for (const Expr &e : in.values) {
        e.accept(&fv);
        kids.push_back(strahler_of(e));
    }
    for (const Expr &e : in.store_args)
        e.accept(&fv);
    out.strahler = std::max(1, combine(kids));
    out.store_jacobian = index_jacobian(in.store_args, in.stage->loops, *in.params);
    AccessPattern store_pattern = classify(out.store_jacobian, *in.stage);
    for (const Expr &e : in.values)
        out.features.access(store_pattern, AccessType::Store, type_bucket(e.type())) += 1;
    return out;
}

} // namespace gpusched
