#include "core/expr_eval.h"

#include <algorithm>
#include <cmath>

namespace gpusched {

namespace {

using namespace Halide;
using namespace Halide::Internal;

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

// Values are carried as doubles (exact for integers below 2^53, far beyond
// any image size) so index arithmetic that goes through floats, e.g.
// int(floor((x + 0.5f) * scale)), evaluates too; integer nodes apply Halide's
// integer semantics.
class Evaluator {
public:
    explicit Evaluator(const VarValues &values) : values_(values) {}

    std::optional<double> eval(const Expr &e) {
        if (!e.defined()) return std::nullopt;
        if (const auto *i = e.as<IntImm>()) return static_cast<double>(i->value);
        if (const auto *u = e.as<UIntImm>()) return static_cast<double>(u->value);
        if (const auto *f = e.as<FloatImm>()) return f->value;
        if (const auto *v = e.as<Variable>()) {
            auto l = lets_.find(v->name);
            if (l != lets_.end()) return l->second;
            auto it = values_.find(v->name);
            if (it == values_.end()) return std::nullopt;
            return static_cast<double>(it->second);
        }
        if (const auto *op = e.as<Add>()) return bin(op->a, op->b, [](double a, double b) { return a + b; });
        if (const auto *op = e.as<Sub>()) return bin(op->a, op->b, [](double a, double b) { return a - b; });
        if (const auto *op = e.as<Mul>()) return bin(op->a, op->b, [](double a, double b) { return a * b; });
        if (const auto *op = e.as<Min>()) return bin(op->a, op->b, [](double a, double b) { return std::min(a, b); });
        if (const auto *op = e.as<Max>()) return bin(op->a, op->b, [](double a, double b) { return std::max(a, b); });
        if (const auto *op = e.as<Div>()) {
            auto a = eval(op->a), b = eval(op->b);
            if (!a || !b || *b == 0) return std::nullopt;
            if (op->type.is_float()) return *a / *b;
            return static_cast<double>(floor_div(static_cast<int64_t>(*a), static_cast<int64_t>(*b)));
        }
        if (const auto *op = e.as<Mod>()) {
            auto a = eval(op->a), b = eval(op->b);
            if (!a || !b || *b == 0) return std::nullopt;
            if (op->type.is_float()) return *a - *b * std::floor(*a / *b);
            return static_cast<double>(euclid_mod(static_cast<int64_t>(*a), static_cast<int64_t>(*b)));
        }
        if (const auto *op = e.as<EQ>()) return bin(op->a, op->b, [](double a, double b) -> double { return a == b; });
        if (const auto *op = e.as<NE>()) return bin(op->a, op->b, [](double a, double b) -> double { return a != b; });
        if (const auto *op = e.as<LT>()) return bin(op->a, op->b, [](double a, double b) -> double { return a < b; });
        if (const auto *op = e.as<LE>()) return bin(op->a, op->b, [](double a, double b) -> double { return a <= b; });
        if (const auto *op = e.as<GT>()) return bin(op->a, op->b, [](double a, double b) -> double { return a > b; });
        if (const auto *op = e.as<GE>()) return bin(op->a, op->b, [](double a, double b) -> double { return a >= b; });
        if (const auto *op = e.as<And>()) return bin(op->a, op->b, [](double a, double b) -> double { return a && b; });
        if (const auto *op = e.as<Or>()) return bin(op->a, op->b, [](double a, double b) -> double { return a || b; });
        if (const auto *op = e.as<Not>()) {
            auto a = eval(op->a);
            if (!a) return std::nullopt;
            return static_cast<double>(!*a);
        }
        if (const auto *op = e.as<Select>()) {
            auto c = eval(op->condition);
            if (!c) return std::nullopt;
            return *c ? eval(op->true_value) : eval(op->false_value);
        }
        if (const auto *op = e.as<Cast>()) {
            auto v = eval(op->value);
            if (!v) return std::nullopt;
            if (op->type.is_float()) return op->type.bits() <= 32 ? static_cast<double>(static_cast<float>(*v)) : *v;
            // Float to integer truncates towards zero, as in Halide.
            return std::trunc(*v);
        }
        if (const auto *op = e.as<Let>()) {
            auto v = eval(op->value);
            if (!v) return std::nullopt;
            auto it = lets_.find(op->name);
            std::optional<double> saved = it == lets_.end() ? std::nullopt : std::optional<double>(it->second);
            lets_[op->name] = *v;
            auto r = eval(op->body);
            if (saved) lets_[op->name] = *saved;
            else lets_.erase(op->name);
            return r;
        }
        if (const auto *op = e.as<Call>()) {
            if ((op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost) ||
                 op->is_intrinsic(Call::promise_clamped) || op->is_intrinsic(Call::unsafe_promise_clamped)) &&
                !op->args.empty()) {
                return eval(op->args[0]);
            }
            if (op->is_intrinsic(Call::abs) && op->args.size() == 1) {
                auto a = eval(op->args[0]);
                if (!a) return std::nullopt;
                return std::fabs(*a);
            }
            if (op->call_type == Call::PureExtern && op->args.size() == 1) {
                auto a = eval(op->args[0]);
                if (!a) return std::nullopt;
                const std::string &n = op->name;
                if (n.rfind("floor_f", 0) == 0) return std::floor(*a);
                if (n.rfind("ceil_f", 0) == 0) return std::ceil(*a);
                if (n.rfind("round_f", 0) == 0) return std::nearbyint(*a);
                if (n.rfind("trunc_f", 0) == 0) return std::trunc(*a);
                if (n.rfind("sqrt_f", 0) == 0) return std::sqrt(*a);
            }
            return std::nullopt;
        }
        return std::nullopt;
    }

private:
    template <typename F> std::optional<double> bin(const Expr &a, const Expr &b, F f) {
        auto x = eval(a);
        if (!x) return std::nullopt;
        auto y = eval(b);
        if (!y) return std::nullopt;
        return f(*x, *y);
    }

    const VarValues &values_;
    std::unordered_map<std::string, double> lets_;
};

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

std::optional<int64_t> evaluate(const Halide::Expr &e, const VarValues &values) {
    Evaluator ev(values);
    auto v = ev.eval(e);
    if (!v || !std::isfinite(*v)) return std::nullopt;
    return static_cast<int64_t>(e.type().is_float() ? std::floor(*v) : *v);
}

bool is_affine_bound(const Halide::Expr &e) {
    if (!e.defined()) return false;
    AffineCheck c;
    e.accept(&c);
    return c.affine;
}

} // namespace gpusched
