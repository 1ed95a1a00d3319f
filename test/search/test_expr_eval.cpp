// The bound evaluator the search runs its footprints through
// (core/expr_eval.h): compiled with slots, it must agree with Halide's
// integer semantics and never guess.
#include "test/catch2_compat.h"

#include <Halide.h>

#include "core/expr_eval.h"

using namespace gpusched;
using Halide::Expr;
using Halide::Internal::Let;
using Halide::Internal::Variable;

namespace {

Expr var(const char *name) {
    return Variable::make(Halide::Int(32), name);
}

// x.lo is slot 0, x.hi slot 1; "n" is a parameter constant 100.
VarBinding bind(const std::string &name) {
    VarBinding b;
    if (name == "x.lo")
        b.slot = 0;
    else if (name == "x.hi")
        b.slot = 1;
    else if (name == "n")
        b.constant = 100;
    return b;
}

} // namespace

TEST_CASE("a compiled bound reads loop bounds from slots and parameters as constants", "[expr_eval]") {
    Expr e = Halide::min(var("x.hi") * 2 + 3, var("n") - 1);
    CompiledExpr c(e, bind);
    int64_t small[2] = {0, 10}, large[2] = {0, 60};
    CHECK(c.evaluate(small) == 23);
    CHECK(c.evaluate(large) == 99);
    // The same expression through the name-based path.
    CHECK(evaluate(e, {{"x.hi", 10}, {"n", 100}}) == 23);
}

TEST_CASE("integer division and modulo are Euclidean as in Halide", "[expr_eval]") {
    int64_t slots[2] = {-7, 0};
    CHECK(CompiledExpr(var("x.lo") / 2, bind).evaluate(slots) == -4);
    CHECK(CompiledExpr(var("x.lo") % 2, bind).evaluate(slots) == 1);
    CHECK(CompiledExpr(var("x.lo") / -2, bind).evaluate(slots) == 4);
    CHECK_FALSE(CompiledExpr(var("x.lo") / var("x.hi"), bind).evaluate(slots).has_value());
}

TEST_CASE("float index arithmetic floors at the end and casts truncate", "[expr_eval]") {
    int64_t slots[2] = {5, 0};
    Expr f = (Halide::cast<float>(var("x.lo")) + 0.5f) * 0.5f; // 2.75
    CHECK(CompiledExpr(f, bind).evaluate(slots) == 2);
    CHECK(CompiledExpr(Halide::cast<int>(-f), bind).evaluate(slots) == -2);
    CHECK(CompiledExpr(Halide::cast<int>(Halide::floor(-f)), bind).evaluate(slots) == -3);
}

TEST_CASE("an unknown variable or a load fails evaluation unless a select does not take it", "[expr_eval]") {
    int64_t slots[2] = {1, 2};
    CHECK_FALSE(CompiledExpr(var("x.lo") + var("unknown"), bind).evaluate(slots).has_value());
    Expr guarded = Halide::select(var("x.lo") > 0, var("x.hi"), var("unknown"));
    CHECK(CompiledExpr(guarded, bind).evaluate(slots) == 2);
    int64_t negative[2] = {-1, 2};
    CHECK_FALSE(CompiledExpr(guarded, bind).evaluate(negative).has_value());
    CHECK_FALSE(CompiledExpr(Expr(), bind).evaluate(slots).has_value());
}

TEST_CASE("shifts and bitwise operations follow Halide's integer semantics", "[expr_eval]") {
    int64_t slots[2] = {3, -9};
    const Expr lo = var("x.lo"), hi = var("x.hi");
    CHECK(CompiledExpr(Expr(1) << lo, bind).evaluate(slots) == 8); // max_filter's 1 << lvl
    CHECK(CompiledExpr(hi >> 1, bind).evaluate(slots) == -5);      // arithmetic: floors
    CHECK(CompiledExpr(hi << -1, bind).evaluate(slots) == -5);     // a negative count goes right
    CHECK(CompiledExpr(lo & 1, bind).evaluate(slots) == 1);
    CHECK(CompiledExpr(lo | 4, bind).evaluate(slots) == 7);
    CHECK(CompiledExpr(lo ^ 1, bind).evaluate(slots) == 2);
    CHECK(CompiledExpr(hi & 0xff, bind).evaluate(slots) == 247); // two's complement
    CHECK(evaluate(var("y") - (Expr(1) << var("l")), {{"y", 40}, {"l", 5}}) == 8);
    // Never a guess: a shift out of exact range has no value.
    CHECK_FALSE(CompiledExpr(Halide::cast<int64_t>(lo) << 60, bind).evaluate(slots).has_value());
}

TEST_CASE("lets bind in order and an inner let shadows an outer one of the same name", "[expr_eval]") {
    int64_t slots[2] = {3, 0};
    // let t = x.lo + 1 in (let t = t * 10 in t + 1) + t  =  41 + 4
    Expr inner = Let::make("t", var("t") * 10, var("t") + 1);
    Expr e = Let::make("t", var("x.lo") + 1, inner + var("t"));
    CHECK(CompiledExpr(e, bind).evaluate(slots) == 45);
    CHECK(evaluate(e, {{"x.lo", 3}}) == 45);
}

TEST_CASE("linear bounds and constant parts fold at compile time with the same results", "[expr_eval]") {
    int64_t slots[2] = {-5, 9};
    // Linear in the slots: evaluated as c + sum a_i * slot_i.
    CHECK(CompiledExpr((var("x.hi") + var("n")) * 2 - var("x.lo") * 3 + 1, bind).evaluate(slots) ==
          2 * 109 + 15 + 1);
    // A clamp against a parameter folds to a constant bound.
    CHECK(CompiledExpr(Halide::min(var("x.hi"), var("n") - 1) + Halide::max(var("n") / 3, 0), bind)
              .evaluate(slots) == 9 + 33);
    // A constant division by zero fails only where its value is used.
    Expr bad = var("n") / (var("n") - 100);
    CHECK_FALSE(CompiledExpr(var("x.lo") + bad, bind).evaluate(slots).has_value());
    CHECK(CompiledExpr(Halide::select(var("x.hi") > 0, var("x.lo"), bad), bind).evaluate(slots) == -5);
}
