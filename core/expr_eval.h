#pragma once
// A small integer evaluator for the index and bound expressions of a Halide
// pipeline. The search evaluates the symbolic footprints of the function DAG
// (core/function_dag.h) hundreds of thousands of times per search with
// concrete loop bounds; substituting and calling Halide's simplifier each
// time would dominate the search time, and so would looking variables up by
// name (bgu: 55 % of a search went to string hashing). So an Expr is
// compiled once into a flat program whose variables are either constants
// (parameter estimates) or numbered slots (loop bounds), and run with the
// slots' values.
//
// Float arithmetic is rounded to float32 after every float32-typed
// operation, as the generated code computes it: a bin index
// cast<int>(v * (1.0f / r_sigma)) with r_sigma = 0.1f reaches 10 (1.0f / 0.1f
// is 10.0f in float32, 9.99999985 in double).
//
// Invariant: evaluation never guesses. It returns nullopt when the expression
// contains anything whose value is not a pure function of the bound
// variables (a load, an unknown variable, an unsupported node, a division by
// zero); the caller then falls back to a documented approximation. A
// subexpression that cannot be evaluated only matters if its value is used
// (the untaken side of a select does not).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <Halide.h>

namespace gpusched {

// Values of named variables: integers (loop bounds, integer parameters,
// buffer shapes) and the estimates of float parameters, exactly.
using VarValues = std::unordered_map<std::string, double>;

// How a compiled expression's free variables are bound: a slot index (its
// value is passed at evaluation), a constant, or neither (the variable is
// unknown and any use of it fails evaluation).
struct VarBinding {
    int slot = -1;
    std::optional<double> constant;
};
using VarResolver = std::function<VarBinding(const std::string &name)>;

class CompiledExpr {
public:
    CompiledExpr() = default; // undefined: evaluates to nullopt
    CompiledExpr(const Halide::Expr &e, const VarResolver &resolve);

    // Halide semantics: integer division and modulo are Euclidean, float-to-
    // int casts truncate; a float-typed result is floored. slots[i] is the
    // value of slot i; the caller passes at least as many as were bound.
    std::optional<int64_t> evaluate(const int64_t *slots) const;
    // The value itself, not floored (a float parameter's estimate).
    std::optional<double> evaluate_number(const int64_t *slots) const;
    // Where the expression is c + sum a_i * slot_i with integer a_i and c
    // (it then never fails to evaluate): its terms (slot, a_i), a slot
    // possibly more than once; otherwise null.
    const std::vector<std::pair<int32_t, double>> *linear_terms() const {
        return linear_ ? &linear_terms_ : nullptr;
    }
    double linear_constant() const { return linear_constant_; }

    // The expression as integer arithmetic on slots, for analyses over
    // other domains (core/shift_shape.h): where it is built only from
    // integer constants, slots, +, -, products with a constant, division by
    // a positive constant (Euclidean: floor), min and max, integer casts
    // looked through, its nodes with each child before its parent and the
    // root last; empty otherwise.
    struct IntegerNode {
        enum class Kind : uint8_t { Const, Slot, Add, Sub, Scale, Div, Min, Max };
        Kind kind;
        int32_t a = -1, b = -1; // operands (Scale, Div: a only)
        int64_t value = 0;      // Const: the constant; Slot: the slot; Scale, Div: the factor
    };
    std::vector<IntegerNode> integer_form() const;

private:
    enum class Op : uint8_t;
    struct Node {
        Op op;
        int32_t a = -1, b = -1, c = -1; // child nodes
        int32_t slot = -1;              // Slot / LetSlot / Let target
        double imm = 0;                 // Const; Cast: 1 if to float32
    };
    int32_t compile(const Halide::Expr &e, const VarResolver &resolve,
                    std::vector<std::pair<std::string, int32_t>> &lets);
    int32_t add(Node n);
    std::optional<double> run(int32_t node, const int64_t *slots, double *let_values) const;

    int32_t fold(int32_t node);
    void find_linear_form();

    std::vector<Node> nodes_;
    int32_t root_ = -1;
    // Most footprint bounds are c + sum a_i * slot_i with integer a_i, c
    // (x.gs_lo - 1, 2 * x.gs_hi + 3): those evaluate without the tree.
    bool linear_ = false;
    double linear_constant_ = 0;
    std::vector<std::pair<int32_t, double>> linear_terms_; // (slot, coefficient)
    int32_t num_lets_ = 0;
    bool float_result_ = false;
};

// Value of e with every Variable looked up in values (one-off evaluations;
// the search's repeated ones use CompiledExpr with slots).
std::optional<int64_t> evaluate(const Halide::Expr &e, const VarValues &values);
// As evaluate(), without flooring a float result.
std::optional<double> evaluate_number(const Halide::Expr &e, const VarValues &values);

// True if e is built only from +, -, *, constant division, variables and
// constants: such a bound has the same extent wherever the loop tile sits, so
// an allocation sized by it is constant (what GPU register allocations need).
bool is_affine_bound(const Halide::Expr &e);

} // namespace gpusched
