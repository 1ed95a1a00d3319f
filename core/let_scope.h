#pragma once
// The lets around a point of a lowered statement, to write an expression
// found there in terms of what is left free (buffer shapes, GPU loop
// variables) once every enclosing let is substituted.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <Halide.h>

namespace gpusched {

// The names of the variables an expression reads.
inline std::set<std::string> free_variables(const Halide::Expr &e) {
    class Collect : public Halide::Internal::IRVisitor {
    public:
        std::set<std::string> names;

    protected:
        using Halide::Internal::IRVisitor::visit;
        void visit(const Halide::Internal::Variable *op) override { names.insert(op->name); }
    };
    Collect c;
    e.accept(&c);
    return std::move(c.names);
}

class LetScope {
public:
    void push(const std::string &name, const Halide::Expr &value) { lets_[name].push_back(value); }
    void pop(const std::string &name) { lets_[name].pop_back(); }
    bool binds_any() const {
        for (const auto &[name, values] : lets_)
            if (!values.empty()) return true;
        return false;
    }

    // Substitutes the innermost value of every let the expression uses, until
    // none is left (the values may use outer lets), then simplifies. Lets
    // for which `keep` is true stay as variables.
    Halide::Expr resolve(Halide::Expr e, const std::function<bool(const std::string &)> &keep = {}) const {
        for (int round = 0; round < 64; round++) {
            std::map<std::string, Halide::Expr> bound;
            for (const std::string &v : free_variables(e)) {
                auto it = lets_.find(v);
                if (it != lets_.end() && !it->second.empty() && !(keep && keep(v)))
                    bound[v] = it->second.back();
            }
            if (bound.empty()) break;
            e = Halide::Internal::substitute(bound, e);
        }
        return Halide::Internal::simplify(e);
    }

private:
    std::map<std::string, std::vector<Halide::Expr>> lets_;
};

} // namespace gpusched
