#include "core/expr_eval.h"

#include <algorithm>
#include <cmath>

namespace gpusched {

using namespace Halide;
using namespace Halide::Internal;

enum class CompiledExpr::Op : uint8_t {
    Const,
    Slot,
    LetSlot,
    Fail,
    Add,
    Sub,
    Mul,
    Min,
    Max,
    DivInt,
    DivFloat,
    ModInt,
    ModFloat,
    EQ,
    NE,
    LT,
    LE,
    GT,
    GE,
    And,
    Or,
    Not,
    Select,
    CastToFloat,
    CastToInt,
    Let,
    Abs,
    Floor,
    Ceil,
    Round,
    Trunc,
    Sqrt,
    ShiftLeft,
    ShiftRight,
    BitAnd,
    BitOr,
    BitXor,
};

namespace {

int64_t floor_div(int64_t a, int64_t b) {
    // Halide's integer division is Euclidean: the remainder is never negative.
    int64_t q = a / b;
    int64_t r = a % b;
    if (r < 0) q += (b > 0) ? -1 : 1;
    return q;
}

int64_t euclid_mod(int64_t a, int64_t b) {
    int64_t m = a % b;
    if (m < 0) m += (b < 0 ? -b : b);
    return m;
}

// An integer bit operation on values carried as doubles: both operands
// whole and exactly representable, and so the result, or no value. A
// negative shift goes the other way, as Halide's does for signed counts.
enum class BitOp { ShiftLeft, ShiftRight, And, Or, Xor };

std::optional<double> bit_operation(BitOp op, double a, double b) {
    constexpr double kExact = 9007199254740992.0; // 2^53
    if (a != std::floor(a) || b != std::floor(b) || std::fabs(a) >= kExact || std::fabs(b) >= kExact)
        return std::nullopt;
    const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
    int64_t r = 0;
    switch (op) {
    case BitOp::ShiftLeft:
    case BitOp::ShiftRight: {
        const int64_t left = op == BitOp::ShiftLeft ? y : -y;
        if (left >= 0) {
            if (left >= 53 || std::fabs(a) * std::ldexp(1.0, static_cast<int>(left)) >= kExact)
                return std::nullopt;
            r = x * (int64_t(1) << left);
        } else {
            r = left <= -63 ? (x < 0 ? -1 : 0) : floor_div(x, int64_t(1) << -left);
        }
        break;
    }
    case BitOp::And:
        r = x & y;
        break;
    case BitOp::Or:
        r = x | y;
        break;
    case BitOp::Xor:
        r = x ^ y;
        break;
    }
    return static_cast<double>(r);
}

} // namespace

int32_t CompiledExpr::add(Node n) {
    nodes_.push_back(n);
    return fold(static_cast<int32_t>(nodes_.size()) - 1);
}

// Constant folding: parameter estimates are constants, so boundary clamps
// like min(x.gs_hi, in.extent.0 - 1) keep only their loop-dependent part.
// A node whose children are all constants is evaluated once now; if that
// fails (a division by zero), it becomes Fail, which fails the same way
// when (and only when) its value is used.
int32_t CompiledExpr::fold(int32_t i) {
    const Node n = nodes_[i];
    if (n.op == Op::Const || n.op == Op::Slot || n.op == Op::LetSlot || n.op == Op::Fail || n.op == Op::Let)
        return i;
    for (int32_t c : {n.a, n.b, n.c})
        if (c >= 0 && nodes_[c].op != Op::Const) return i;
    std::optional<double> v = run(i, nullptr, nullptr);
    nodes_[i] = v ? Node{Op::Const} : Node{Op::Fail};
    nodes_[i].imm = v.value_or(0);
    return i;
}

void CompiledExpr::find_linear_form() {
    // (constant, slot -> coefficient) of the subtree at i, if it is linear
    // with integer constants (then double arithmetic is exact, as in run()).
    struct Form {
        double c = 0;
        std::vector<std::pair<int32_t, double>> terms;
    };
    std::function<std::optional<Form>(int32_t)> form = [&](int32_t i) -> std::optional<Form> {
        const Node &n = nodes_[i];
        switch (n.op) {
        case Op::Const:
            if (n.imm != std::floor(n.imm) || std::fabs(n.imm) > 1e15) return std::nullopt;
            return Form{n.imm, {}};
        case Op::Slot:
            return Form{0, {{n.slot, 1.0}}};
        case Op::Add:
        case Op::Sub: {
            auto x = form(n.a), y = form(n.b);
            if (!x || !y) return std::nullopt;
            const double sign = n.op == Op::Add ? 1 : -1;
            x->c += sign * y->c;
            for (auto [slot, k] : y->terms)
                x->terms.emplace_back(slot, sign * k);
            return x;
        }
        case Op::Mul: {
            auto x = form(n.a), y = form(n.b);
            if (!x || !y) return std::nullopt;
            if (!y->terms.empty()) std::swap(x, y);
            if (!y->terms.empty()) return std::nullopt; // product of two variables
            x->c *= y->c;
            for (auto &t : x->terms)
                t.second *= y->c;
            return x;
        }
        default:
            return std::nullopt;
        }
    };
    if (root_ < 0) return;
    if (auto f = form(root_)) {
        linear_ = true;
        linear_constant_ = f->c;
        linear_terms_ = std::move(f->terms);
    }
}

std::vector<CompiledExpr::IntegerNode> CompiledExpr::integer_form() const {
    using Kind = IntegerNode::Kind;
    std::vector<IntegerNode> out;
    auto integral = [](double v) { return v == std::floor(v) && std::fabs(v) <= 1e15; };
    std::function<int32_t(int32_t)> walk = [&](int32_t i) -> int32_t {
        const Node &n = nodes_[i];
        IntegerNode r{Kind::Const};
        switch (n.op) {
        case Op::Const:
            if (!integral(n.imm)) return -1;
            r.value = static_cast<int64_t>(n.imm);
            break;
        case Op::Slot:
            r.kind = Kind::Slot;
            r.value = n.slot;
            break;
        case Op::CastToInt:
            return walk(n.a); // of an integer value: the value itself
        case Op::Add:
        case Op::Sub:
        case Op::Min:
        case Op::Max:
            r.kind = n.op == Op::Add   ? Kind::Add
                     : n.op == Op::Sub ? Kind::Sub
                     : n.op == Op::Min ? Kind::Min
                                       : Kind::Max;
            r.a = walk(n.a);
            if (r.a < 0) return -1;
            r.b = walk(n.b);
            if (r.b < 0) return -1;
            break;
        case Op::Mul: {
            // A product with a constant (folded constants sit on either side).
            const bool a_const = nodes_[n.a].op == Op::Const, b_const = nodes_[n.b].op == Op::Const;
            if (a_const == b_const) return -1;
            const Node &k = nodes_[a_const ? n.a : n.b];
            if (!integral(k.imm)) return -1;
            r.kind = Kind::Scale;
            r.value = static_cast<int64_t>(k.imm);
            r.a = walk(a_const ? n.b : n.a);
            if (r.a < 0) return -1;
            break;
        }
        case Op::DivInt: {
            const Node &k = nodes_[n.b];
            if (k.op != Op::Const || !integral(k.imm) || k.imm <= 0) return -1;
            r.kind = Kind::Div;
            r.value = static_cast<int64_t>(k.imm);
            r.a = walk(n.a);
            if (r.a < 0) return -1;
            break;
        }
        default:
            return -1;
        }
        out.push_back(r);
        return static_cast<int32_t>(out.size()) - 1;
    };
    if (root_ < 0 || float_result_ || walk(root_) < 0) return {};
    return out;
}

// Values are carried as doubles (exact for integers below 2^53, far beyond
// any image size) so index arithmetic that goes through floats, e.g.
// int(floor((x + 0.5f) * scale)), evaluates too; integer nodes apply Halide's
// integer semantics.
int32_t CompiledExpr::compile(const Expr &e, const VarResolver &resolve,
                              std::vector<std::pair<std::string, int32_t>> &lets) {
    // float32 arithmetic rounds every result to float32.
    auto rounded = [&](int32_t r) {
        if (!e.type().is_float() || e.type().bits() > 32) return r;
        Node round{Op::CastToFloat};
        round.a = r;
        round.imm = 1;
        return add(round);
    };
    auto binary = [&](Op op, const Expr &a, const Expr &b) {
        Node n{op};
        n.a = compile(a, resolve, lets);
        n.b = compile(b, resolve, lets);
        return rounded(add(n));
    };
    auto unary = [&](Op op, const Expr &a) {
        Node n{op};
        n.a = compile(a, resolve, lets);
        return rounded(add(n));
    };
    auto constant = [&](double v) {
        Node n{Op::Const};
        n.imm = v;
        return add(n);
    };

    if (!e.defined()) return add(Node{Op::Fail});
    if (const auto *i = e.as<IntImm>()) return constant(static_cast<double>(i->value));
    if (const auto *u = e.as<UIntImm>()) return constant(static_cast<double>(u->value));
    if (const auto *f = e.as<FloatImm>()) return constant(f->value);
    if (const auto *v = e.as<Variable>()) {
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            if (it->first == v->name) {
                Node n{Op::LetSlot};
                n.slot = it->second;
                return add(n);
            }
        }
        VarBinding b = resolve(v->name);
        if (b.slot >= 0) {
            Node n{Op::Slot};
            n.slot = b.slot;
            return add(n);
        }
        if (b.constant) return constant(*b.constant);
        return add(Node{Op::Fail});
    }
    if (const auto *op = e.as<Add>()) return binary(Op::Add, op->a, op->b);
    if (const auto *op = e.as<Sub>()) return binary(Op::Sub, op->a, op->b);
    if (const auto *op = e.as<Mul>()) return binary(Op::Mul, op->a, op->b);
    if (const auto *op = e.as<Min>()) return binary(Op::Min, op->a, op->b);
    if (const auto *op = e.as<Max>()) return binary(Op::Max, op->a, op->b);
    if (const auto *op = e.as<Div>())
        return binary(op->type.is_float() ? Op::DivFloat : Op::DivInt, op->a, op->b);
    if (const auto *op = e.as<Mod>())
        return binary(op->type.is_float() ? Op::ModFloat : Op::ModInt, op->a, op->b);
    if (const auto *op = e.as<EQ>()) return binary(Op::EQ, op->a, op->b);
    if (const auto *op = e.as<NE>()) return binary(Op::NE, op->a, op->b);
    if (const auto *op = e.as<LT>()) return binary(Op::LT, op->a, op->b);
    if (const auto *op = e.as<LE>()) return binary(Op::LE, op->a, op->b);
    if (const auto *op = e.as<GT>()) return binary(Op::GT, op->a, op->b);
    if (const auto *op = e.as<GE>()) return binary(Op::GE, op->a, op->b);
    if (const auto *op = e.as<And>()) return binary(Op::And, op->a, op->b);
    if (const auto *op = e.as<Or>()) return binary(Op::Or, op->a, op->b);
    if (const auto *op = e.as<Not>()) return unary(Op::Not, op->a);
    if (const auto *op = e.as<Select>()) {
        Node n{Op::Select};
        n.a = compile(op->condition, resolve, lets);
        n.b = compile(op->true_value, resolve, lets);
        n.c = compile(op->false_value, resolve, lets);
        return add(n);
    }
    if (const auto *op = e.as<Cast>()) {
        if (!op->type.is_float()) return unary(Op::CastToInt, op->value);
        Node n{Op::CastToFloat};
        n.a = compile(op->value, resolve, lets);
        n.imm = op->type.bits() <= 32 ? 1 : 0;
        return add(n);
    }
    if (const auto *op = e.as<Let>()) {
        Node n{Op::Let};
        n.a = compile(op->value, resolve, lets);
        n.slot = num_lets_++;
        lets.emplace_back(op->name, n.slot);
        n.b = compile(op->body, resolve, lets);
        lets.pop_back();
        return add(n);
    }
    if (const auto *op = e.as<Call>()) {
        if ((op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost) ||
             op->is_intrinsic(Call::promise_clamped) || op->is_intrinsic(Call::unsafe_promise_clamped)) &&
            !op->args.empty()) {
            return compile(op->args[0], resolve, lets);
        }
        if (op->is_intrinsic(Call::abs) && op->args.size() == 1) return unary(Op::Abs, op->args[0]);
        // Integer bit operations: a level picked by a count (max_filter's
        // 1 << lvl) or a power-of-two tile index (x >> 3).
        if (!op->type.is_float() && op->args.size() == 2) {
            if (op->is_intrinsic(Call::shift_left)) return binary(Op::ShiftLeft, op->args[0], op->args[1]);
            if (op->is_intrinsic(Call::shift_right)) return binary(Op::ShiftRight, op->args[0], op->args[1]);
            if (op->is_intrinsic(Call::bitwise_and)) return binary(Op::BitAnd, op->args[0], op->args[1]);
            if (op->is_intrinsic(Call::bitwise_or)) return binary(Op::BitOr, op->args[0], op->args[1]);
            if (op->is_intrinsic(Call::bitwise_xor)) return binary(Op::BitXor, op->args[0], op->args[1]);
        }
        if (op->call_type == Call::PureExtern && op->args.size() == 1) {
            const std::string &n = op->name;
            if (n.rfind("floor_f", 0) == 0) return unary(Op::Floor, op->args[0]);
            if (n.rfind("ceil_f", 0) == 0) return unary(Op::Ceil, op->args[0]);
            if (n.rfind("round_f", 0) == 0) return unary(Op::Round, op->args[0]);
            if (n.rfind("trunc_f", 0) == 0) return unary(Op::Trunc, op->args[0]);
            if (n.rfind("sqrt_f", 0) == 0) return unary(Op::Sqrt, op->args[0]);
        }
    }
    return add(Node{Op::Fail});
}

CompiledExpr::CompiledExpr(const Expr &e, const VarResolver &resolve) {
    std::vector<std::pair<std::string, int32_t>> lets;
    root_ = compile(e, resolve, lets);
    float_result_ = e.defined() && e.type().is_float();
    find_linear_form();
}

std::optional<double> CompiledExpr::run(int32_t i, const int64_t *slots, double *let_values) const {
    const Node &n = nodes_[i];
    switch (n.op) {
    case Op::Const:
        return n.imm;
    case Op::Slot:
        return static_cast<double>(slots[n.slot]);
    case Op::LetSlot:
        return let_values[n.slot];
    case Op::Fail:
        return std::nullopt;
    case Op::Select: {
        auto c = run(n.a, slots, let_values);
        if (!c) return std::nullopt;
        return *c ? run(n.b, slots, let_values) : run(n.c, slots, let_values);
    }
    case Op::Let: {
        auto v = run(n.a, slots, let_values);
        if (!v) return std::nullopt;
        let_values[n.slot] = *v;
        return run(n.b, slots, let_values);
    }
    default:
        break;
    }

    auto x = run(n.a, slots, let_values);
    if (!x) return std::nullopt;
    const double a = *x;
    switch (n.op) {
    case Op::Not:
        return static_cast<double>(!a);
    case Op::CastToFloat:
        return n.imm != 0 ? static_cast<double>(static_cast<float>(a)) : a;
    case Op::CastToInt:
        return std::trunc(a); // float to integer truncates towards zero, as in Halide
    case Op::Abs:
        return std::fabs(a);
    case Op::Floor:
        return std::floor(a);
    case Op::Ceil:
        return std::ceil(a);
    case Op::Round:
        return std::nearbyint(a);
    case Op::Trunc:
        return std::trunc(a);
    case Op::Sqrt:
        return std::sqrt(a);
    default:
        break;
    }

    auto y = run(n.b, slots, let_values);
    if (!y) return std::nullopt;
    const double b = *y;
    switch (n.op) {
    case Op::Add:
        return a + b;
    case Op::Sub:
        return a - b;
    case Op::Mul:
        return a * b;
    case Op::Min:
        return std::min(a, b);
    case Op::Max:
        return std::max(a, b);
    case Op::DivFloat:
        return b == 0 ? std::nullopt : std::optional<double>(a / b);
    case Op::DivInt:
        if (b == 0) return std::nullopt;
        return static_cast<double>(floor_div(static_cast<int64_t>(a), static_cast<int64_t>(b)));
    case Op::ModFloat:
        return b == 0 ? std::nullopt : std::optional<double>(a - b * std::floor(a / b));
    case Op::ModInt:
        if (b == 0) return std::nullopt;
        return static_cast<double>(euclid_mod(static_cast<int64_t>(a), static_cast<int64_t>(b)));
    case Op::EQ:
        return static_cast<double>(a == b);
    case Op::NE:
        return static_cast<double>(a != b);
    case Op::LT:
        return static_cast<double>(a < b);
    case Op::LE:
        return static_cast<double>(a <= b);
    case Op::GT:
        return static_cast<double>(a > b);
    case Op::GE:
        return static_cast<double>(a >= b);
    case Op::And:
        return static_cast<double>(a && b);
    case Op::Or:
        return static_cast<double>(a || b);
    case Op::ShiftLeft:
        return bit_operation(BitOp::ShiftLeft, a, b);
    case Op::ShiftRight:
        return bit_operation(BitOp::ShiftRight, a, b);
    case Op::BitAnd:
        return bit_operation(BitOp::And, a, b);
    case Op::BitOr:
        return bit_operation(BitOp::Or, a, b);
    case Op::BitXor:
        return bit_operation(BitOp::Xor, a, b);
    default:
        return std::nullopt;
    }
}

std::optional<double> CompiledExpr::evaluate_number(const int64_t *slots) const {
    if (root_ < 0) return std::nullopt;
    if (linear_) {
        double v = linear_constant_;
        for (const auto &[slot, k] : linear_terms_)
            v += k * static_cast<double>(slots[slot]);
        return v;
    }
    // Let values live on the stack for the common case (few lets).
    constexpr int kInline = 16;
    double inline_lets[kInline];
    std::vector<double> heap_lets;
    double *lets = inline_lets;
    if (num_lets_ > kInline) {
        heap_lets.resize(num_lets_);
        lets = heap_lets.data();
    }
    auto v = run(root_, slots, lets);
    if (!v || !std::isfinite(*v)) return std::nullopt;
    return v;
}

std::optional<int64_t> CompiledExpr::evaluate(const int64_t *slots) const {
    auto v = evaluate_number(slots);
    if (!v) return std::nullopt;
    return static_cast<int64_t>(float_result_ ? std::floor(*v) : *v);
}

namespace {

CompiledExpr compile_with_values(const Expr &e, const VarValues &values) {
    return CompiledExpr(e, [&](const std::string &name) {
        VarBinding b;
        auto it = values.find(name);
        if (it != values.end()) b.constant = it->second;
        return b;
    });
}

} // namespace

std::optional<int64_t> evaluate(const Expr &e, const VarValues &values) {
    return compile_with_values(e, values).evaluate(nullptr);
}

std::optional<double> evaluate_number(const Expr &e, const VarValues &values) {
    return compile_with_values(e, values).evaluate_number(nullptr);
}

namespace {

class AffineCheck : public IRVisitor {
public:
    bool affine = true;

private:
    using IRVisitor::visit;
    void visit(const Min *) override { affine = false; }
    void visit(const Max *) override { affine = false; }
    void visit(const Select *) override { affine = false; }
    void visit(const Call *) override { affine = false; }
    void visit(const Load *) override { affine = false; }
    void visit(const Mod *) override { affine = false; }
    void visit(const Div *op) override {
        if (!is_const(op->b)) affine = false;
        IRVisitor::visit(op);
    }
    void visit(const Mul *op) override {
        if (!is_const(op->a) && !is_const(op->b)) affine = false;
        IRVisitor::visit(op);
    }
};

} // namespace

bool is_affine_bound(const Expr &e) {
    if (!e.defined()) return false;
    AffineCheck c;
    e.accept(&c);
    return c.affine;
}

} // namespace gpusched
