#include "core/function_dag.h"

#include <algorithm>
#include <unordered_map>

#include "core/function_dag_detail.h"

namespace gpusched {

using namespace Halide;
using namespace Halide::Internal;

void merge_region(Region &a, const Region &b) {
    if (a.empty()) {
        a = b;
        return;
    }
    for (size_t i = 0; i < a.size() && i < b.size(); i++) {
        a[i].min = std::min(a[i].min, b[i].min);
        a[i].max = std::max(a[i].max, b[i].max);
    }
}

int64_t region_points(const Region &r) {
    int64_t p = 1;
    for (const Span &s : r)
        p *= std::max<int64_t>(1, s.extent());
    return p;
}

int Stage::num_pure_loops() const {
    int n = 0;
    for (const LoopDim &l : loops)
        n += l.is_rvar ? 0 : 1;
    return n;
}

namespace {

// Whether e divides or takes a remainder (a rounding footprint).
class RoundingCheck : public IRVisitor {
public:
    bool rounds = false;

private:
    using IRVisitor::visit;
    void visit(const Div *op) override {
        rounds = true;
        IRVisitor::visit(op);
    }
    void visit(const Mod *op) override {
        rounds = true;
        IRVisitor::visit(op);
    }
};

} // namespace

namespace detail {

std::vector<Expr> stage_exprs(const Definition &def, bool is_update) {
    std::vector<Expr> exprs = def.values();
    if (is_update) exprs.insert(exprs.end(), def.args().begin(), def.args().end());
    return exprs;
}

std::string dim_name(const Function &f, int d) {
    return d < static_cast<int>(f.args().size()) ? f.args()[d] : std::to_string(d);
}

// A stage loop as the symbolic interval [var.gs_lo, var.gs_hi] its
// footprints are expressed in.
Interval loop_interval(const LoopDim &l) {
    return Interval(Variable::make(Int(32), FunctionDAG::loop_min_name(l.var)),
                    Variable::make(Int(32), FunctionDAG::loop_max_name(l.var)));
}

// The box of each Func or image read by exprs (Halide's boxes_required),
// merged over all of them.
std::map<std::string, Box> required_boxes(const std::vector<Expr> &exprs, const Scope<Interval> &scope,
                                          const FuncValueBounds &value_bounds) {
    std::map<std::string, Box> boxes;
    for (const Expr &e : exprs) {
        for (auto &kv : boxes_required(e, scope, value_bounds)) {
            auto it = boxes.find(kv.first);
            if (it == boxes.end())
                boxes.emplace(kv.first, kv.second);
            else
                merge_boxes(it->second, kv.second);
        }
    }
    return boxes;
}

bool rounds(const Expr &e) {
    if (!e.defined()) return false;
    RoundingCheck c;
    e.accept(&c);
    return c.rounds;
}

} // namespace detail

int FunctionDAG::node_index(const std::string &name) const {
    for (size_t i = 0; i < nodes.size(); i++)
        if (nodes[i].name == name) return static_cast<int>(i);
    return -1;
}

int FunctionDAG::stable_node_index(const std::string &stable_name) const {
    for (size_t i = 0; i < nodes.size(); i++)
        if (nodes[i].stable_name == stable_name) return static_cast<int>(i);
    return -1;
}

EstimatedShapes FunctionDAG::estimated_shapes() const {
    EstimatedShapes s;
    s.values = param_values;
    for (const Node &n : nodes) {
        if (!n.is_output) continue;
        for (const Parameter &buf : n.func.output_buffers()) {
            s.outputs.push_back(buf.name());
            for (size_t d = 0; d < n.region.size(); d++) {
                const std::string k = "." + std::to_string(d);
                s.values[buf.name() + ".min" + k] = static_cast<double>(n.region[d].min);
                s.values[buf.name() + ".extent" + k] = static_cast<double>(n.region[d].extent());
                s.values[buf.name() + ".max" + k] = static_cast<double>(n.region[d].max);
            }
        }
    }
    return s;
}

int FunctionDAG::num_stages() const {
    return stage_offsets_.back();
}

int FunctionDAG::stage_id(int node, int stage) const {
    return stage_offsets_[node] + stage;
}

std::vector<Span> FunctionDAG::loop_bounds(const Stage &s, const Region &func_region) const {
    std::vector<Span> b;
    loop_bounds_into(s, func_region, b);
    return b;
}

std::optional<Region> FunctionDAG::required(const Stage &s, const Edge &e,
                                            const std::vector<Span> &loops) const {
    constexpr size_t kInline = 16; // loops per stage; more is rare
    int64_t inline_slots[2 * kInline];
    std::vector<int64_t> heap_slots;
    int64_t *slots = inline_slots;
    if (loops.size() > kInline) {
        heap_slots.resize(2 * loops.size());
        slots = heap_slots.data();
    }
    for (size_t i = 0; i < loops.size(); i++) {
        slots[2 * i] = loops[i].min;
        slots[2 * i + 1] = loops[i].max;
    }
    Region r(e.compiled_box.size());
    for (size_t d = 0; d < e.compiled_box.size(); d++) {
        auto mn = e.compiled_box[d].first.evaluate(slots), mx = e.compiled_box[d].second.evaluate(slots);
        if (!mn || !mx) {
            if (d < e.estimated.size() && e.estimated[d]) {
                r[d] = *e.estimated[d];
                continue;
            }
            return std::nullopt;
        }
        r[d] = Span{*mn, std::max(*mn, *mx)};
    }
    return r;
}

void FunctionDAG::compile_box(const Stage &s, Edge &e) const {
    std::unordered_map<std::string, int> slot_of;
    for (size_t i = 0; i < s.loops.size(); i++) {
        slot_of[loop_min_name(s.loops[i].var)] = static_cast<int>(2 * i);
        slot_of[loop_max_name(s.loops[i].var)] = static_cast<int>(2 * i + 1);
    }
    auto resolve = [&](const std::string &name) {
        VarBinding b;
        auto si = slot_of.find(name);
        if (si != slot_of.end()) {
            b.slot = si->second;
            return b;
        }
        auto pi = param_values.find(name);
        if (pi != param_values.end()) b.constant = pi->second;
        return b;
    };
    e.compiled_box.clear();
    e.integer_box.clear();
    e.shift_traceable = true;
    for (const auto &[mn, mx] : e.box) {
        e.compiled_box.emplace_back(CompiledExpr(mn, resolve), CompiledExpr(mx, resolve));
        const auto &[lo, hi] = e.compiled_box.back();
        auto &[lo_form, hi_form] = e.integer_box.emplace_back();
        if (!lo.linear_terms()) lo_form = lo.integer_form();
        if (!hi.linear_terms()) hi_form = hi.integer_form();
        e.shift_traceable = e.shift_traceable && (lo.linear_terms() || !lo_form.empty()) &&
                            (hi.linear_terms() || !hi_form.empty());
    }
}

bool FunctionDAG::bound_with_whole_loops(const Stage &s, Edge &e, const std::vector<Span> &loops,
                                         const FuncValueBounds &value_bounds) {
    std::vector<int64_t> slots;
    for (const Span &l : loops) {
        slots.push_back(l.min);
        slots.push_back(l.max);
    }
    std::vector<size_t> unevaluable;
    bool undefined = false;
    for (size_t d = 0; d < e.box.size(); d++) {
        if (!e.box[d].first.defined() || !e.box[d].second.defined())
            undefined = true;
        else if (e.compiled_box[d].first.evaluate(slots.data()) &&
                 e.compiled_box[d].second.evaluate(slots.data()))
            continue;
        unevaluable.push_back(d);
    }
    if (unevaluable.empty()) return false;
    const Function &f = nodes[s.node].func;
    const Definition &def = s.index == 0 ? f.definition() : f.updates()[s.index - 1];
    // Simplified first, as Halide's lowering bounds it.
    std::vector<Expr> exprs;
    for (const Expr &x : detail::stage_exprs(def, s.index > 0))
        exprs.push_back(simplify(x));
    const std::string producer = producer_name(e.producer);
    // Which loops take their constant range: each alone (the others stay
    // symbolic, so the footprint still follows the tile in them), then all.
    std::vector<std::vector<bool>> tries;
    for (size_t l = 0; l < loops.size(); l++) {
        tries.emplace_back(loops.size(), false);
        tries.back()[l] = true;
    }
    tries.emplace_back(loops.size(), true);
    for (const std::vector<bool> &whole : tries) {
        Scope<Interval> scope;
        for (size_t l = 0; l < loops.size(); l++)
            scope.push(s.loops[l].var, whole[l] ? Interval(make_const(Int(32), loops[l].min),
                                                           make_const(Int(32), loops[l].max))
                                                : detail::loop_interval(s.loops[l]));
        const std::map<std::string, Box> boxes = detail::required_boxes(exprs, scope, value_bounds);
        auto it = boxes.find(producer);
        if (it == boxes.end() || it->second.size() != e.box.size()) continue;
        bool all = true;
        for (size_t d : unevaluable)
            all = all && it->second[d].is_bounded();
        if (!all) continue;
        const Edge before = e;
        for (size_t d : unevaluable)
            e.box[d] = {simplify(it->second[d].min), simplify(it->second[d].max)};
        compile_box(s, e);
        bool evaluates = true;
        for (size_t d : unevaluable)
            evaluates = evaluates && e.compiled_box[d].first.evaluate(slots.data()) &&
                        e.compiled_box[d].second.evaluate(slots.data());
        if (!evaluates) { // still data dependent, say
            e = before;
            continue;
        }
        e.affine = true;
        for (const auto &[mn, mx] : e.box) {
            e.affine = e.affine && is_affine_bound(mn) && is_affine_bound(mx);
            e.rounds = e.rounds || detail::rounds(mn) || detail::rounds(mx);
        }
        // Where Halide left the bound undefined with the loops symbolic, as
        // they are wherever it computes the producer, it cannot lower the
        // producer anywhere: it is inlined.
        if (undefined) {
            e.unbounded_in_halide = true;
            e.bounded_below_root = false;
        }
        return true;
    }
    return false;
}

void FunctionDAG::use_estimates_where_unbounded(const Stage &s, Edge &e,
                                                const std::vector<Span> &loops) const {
    std::vector<int64_t> slots;
    for (const Span &l : loops) {
        slots.push_back(l.min);
        slots.push_back(l.max);
    }
    e.estimated.assign(e.compiled_box.size(), std::nullopt);
    for (size_t d = 0; d < e.compiled_box.size(); d++) {
        if (e.compiled_box[d].first.evaluate(slots.data()) && e.compiled_box[d].second.evaluate(slots.data()))
            continue;
        if (!e.box[d].first.defined() || !e.box[d].second.defined()) e.unbounded_in_halide = true;
        const std::string producer = producer_name(e.producer);
        if (!e.producer.is_image && nodes[e.producer.index].estimate[d]) {
            e.estimated[d] = nodes[e.producer.index].estimate[d];
            continue;
        }
        std::string dim = std::to_string(d);
        if (!e.producer.is_image)
            dim += " ('" + detail::dim_name(nodes[e.producer.index].func, static_cast<int>(d)) + "')";
        std::string fix = "clamp the index or give the parameters it uses estimates";
        if (!e.producer.is_image) {
            const std::string v = detail::dim_name(nodes[e.producer.index].func, static_cast<int>(d));
            fix += ", or give '" + producer + "' an estimate for '" + v + "' with Func::set_estimate";
        }
        throw UserError("gpusched: cannot bound dimension " + dim + " of the region of '" + producer +
                        "' read by " + s.name + ": the index is data dependent or unbounded, and '" +
                        producer + "' has no estimate there; " + fix);
    }
}

void FunctionDAG::grow_by_updates(int node, Region &region) const {
    const Node &n = nodes[node];
    // An update's pure loops run over the region grown by the others: two
    // rounds reach every update's reads of every other (stages rarely chain
    // deeper, and a third round would only grow a region already refused).
    for (int round = 0; round < 2; round++) {
        for (size_t si = 1; si < n.stages.size(); si++) {
            const Stage &st = n.stages[si];
            if (st.self_box.compiled_box.size() != region.size()) continue;
            std::optional<Region> r = required(st, st.self_box, loop_bounds(st, region));
            if (r) merge_region(region, *r);
        }
    }
}

Region FunctionDAG::required_or_all(const Stage &s, const Edge &e, const std::vector<Span> &loops) const {
    auto r = required(s, e, loops);
    if (r) return *r;
    return producer_region(e.producer);
}

} // namespace gpusched