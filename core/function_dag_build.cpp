// The FunctionDAG's construction (core/function_dag.h): the constructor as
// named steps, and the analyses of the pipeline only construction uses.
#include "core/function_dag.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "core/algorithm_features.h"
#include "core/function_dag_detail.h"
#include "core/halide_compat.h"
#include "core/stable_names.h"

namespace gpusched {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// True if e reads a scalar parameter (an Input<float>, a Param<int>): a
// region bounded through one has the size of the parameter's run-time value,
// which Halide cannot bound at compile time (1 / r_sigma grows without limit
// as r_sigma shrinks), so no kernel can give it a constant size.
bool uses_scalar_param(const Expr &e) {
    if (!e.defined()) return false;
    class Finder : public IRVisitor {
    public:
        bool found = false;

    protected:
        using IRVisitor::visit;
        void visit(const Variable *op) override {
            if (op->param.defined() && !op->param.is_buffer()) found = true;
        }
    } finder;
    e.accept(&finder);
    return finder.found;
}

bool box_uses_scalar_param(const std::vector<std::pair<Expr, Expr>> &box) {
    for (const auto &[lo, hi] : box)
        if (uses_scalar_param(lo) || uses_scalar_param(hi)) return true;
    return false;
}

// Whether some dimension of box (in the stage's loop bounds) has an extent
// that follows an RVar of the stage whose domain is sized by parameters or
// buffer shapes (RDom(0, in.width() / 4)): the region then spans a run-time
// extent, not a tile's.
bool box_spans_sized_rvar(const std::vector<std::pair<Expr, Expr>> &box, const Stage &s) {
    for (const LoopDim &l : s.loops) {
        if (!l.is_rvar || !l.rvar_sized_by_params) continue;
        for (const auto &[lo, hi] : box) {
            if (!lo.defined() || !hi.defined()) continue;
            const Expr extent = simplify(hi - lo);
            if (expr_uses_var(extent, FunctionDAG::loop_min_name(l.var)) ||
                expr_uses_var(extent, FunctionDAG::loop_max_name(l.var)))
                return true;
        }
    }
    return false;
}

// Finds every parameter the pipeline refers to and records its estimate:
// scalar params by value, buffer params by their shape variables
// ("in.min.0", "in.extent.0"), so clamps in boundary conditions evaluate.
class ParamCollector : public IRVisitor {
public:
    explicit ParamCollector(VarValues &values) : values_(values) {}

    void add_buffer(const Parameter &p) {
        if (!p.defined() || !p.is_buffer()) return;
        for (int d = 0; d < p.dimensions(); d++) {
            Expr mn = p.min_constraint_estimate(d), ex = p.extent_constraint_estimate(d);
            std::optional<int64_t> m = evaluate(mn, values_);
            std::optional<int64_t> e = evaluate(ex, values_);
            std::string base = p.name();
            if (m) values_[base + ".min." + std::to_string(d)] = *m;
            if (m && e) {
                values_[base + ".extent." + std::to_string(d)] = *e;
                values_[base + ".max." + std::to_string(d)] = *m + *e - 1;
            }
        }
    }

private:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (!op->param.defined()) return;
        if (op->param.is_buffer()) {
            add_buffer(op->param);
        } else if (!values_.count(op->name)) {
            // Exactly, float parameters included: r_sigma = 0.1f must not
            // become 0 (bilateral_grid's bins are v * (1.0f / r_sigma)).
            Expr est = op->param.estimate();
            if (est.defined()) {
                if (auto v = evaluate_number(est, values_)) values_[op->name] = *v;
            }
        }
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Image) add_buffer(op->param);
    }
    VarValues &values_;
};

// The Func's own estimates (Func::set_estimate / set_estimates, kept in its
// schedule), per dimension; an output's also from its output buffer, where
// generators record them. Empty or unevaluable estimates count as none.
std::vector<std::optional<Span>> func_estimates(const Function &f, const VarValues &params) {
    std::vector<std::optional<Span>> r(f.args().size());
    for (const Bound &b : f.schedule().estimates()) {
        for (size_t d = 0; d < r.size(); d++) {
            if (f.args()[d] != b.var) continue;
            auto mn = evaluate(b.min, params), ex = evaluate(b.extent, params);
            if (mn && ex && *ex > 0) r[d] = Span{*mn, *mn + *ex - 1};
        }
    }
    for (size_t d = 0; d < r.size(); d++) {
        if (r[d] || f.output_buffers().empty()) continue;
        const Parameter &p = f.output_buffers()[0];
        Expr mn = p.min_constraint_estimate(static_cast<int>(d)),
             ex = p.extent_constraint_estimate(static_cast<int>(d));
        std::optional<int64_t> m = evaluate(mn, params);
        std::optional<int64_t> e = evaluate(ex, params);
        if (m && e && *e > 0) r[d] = Span{*m, *m + *e - 1};
    }
    return r;
}

Region output_estimates(const Function &f, const std::vector<std::optional<Span>> &estimates) {
    Region r(estimates.size());
    for (size_t d = 0; d < r.size(); d++) {
        if (estimates[d])
            r[d] = *estimates[d];
        else {
            std::ostringstream msg;
            msg << "gpusched: output Func '" << f.name() << "' has no usable estimate for dimension " << d
                << " ('" << detail::dim_name(f, static_cast<int>(d))
                << "'); give every output dimension an estimate with set_estimate()/set_estimates()";
            throw UserError(msg.str());
        }
    }
    return r;
}

// Whether a region Halide bounds as iv at a compute level has a size it can
// allocate there: its extent must not move with the loops outside the level
// (free_loops), which are fixed per block or thread (Halide allocates
// registers only at a fixed size, and the launch check takes only constant
// shared memory). Halide 14 already calls such reads unbounded (max_filter's
// column read through `1 << lvl(t)`); Halide 19 bounds it by an expression
// in t (core/halide_compat.h, kRegionsMayVaryPerThread), and lowering then
// fails with "Allocation ... has a dynamic size". A read through a rounding
// division is exempt: its extent moves by a point between tile starts and
// the nest fixes it with bound_extent (sized_by_max). Only asked where
// Halide may bound such regions: on Halide 14 the test also refused reads
// whose extent varies only near the image's borders (clamped indexing),
// which Halide 14 sizes by a constant bound, and the suite's schedules lost
// up to 0.1% of predicted cost (max_filter, nl_means).
bool fixed_size_below_root(const Interval &iv, const std::vector<std::string> &free_loops) {
    if (!kRegionsMayVaryPerThread) return true;
    if (detail::rounds(iv.min) || detail::rounds(iv.max)) return true;
    const Expr extent = simplify(iv.max - iv.min);
    for (const std::string &v : free_loops)
        if (expr_uses_var(extent, v)) return false;
    return true;
}

// Sets Edge::bounded_below_root on the edges of s (producers named by
// edge_names, parallel to s.edges). Halide's allocation bounds inference
// runs on the simplified definition, after the loops outside a compute
// level have become plain variables: mirror that with every subset of the
// pure loops in scope as intervals (the rest left free) and ask Halide's
// own boxes_required. Boundedness is not monotone in the scope (max_filter's
// read is bounded with its t loop an interval and unbounded with t free),
// so every subset is tried rather than only "none" and "all"; the cost is
// 2^(pure loops) calls per stage, once per DAG.
void mark_bounded_below_root(Stage &s, const std::vector<std::string> &edge_names,
                             const std::vector<Expr> &exprs, const FuncValueBounds &value_bounds) {
    bool any_func = false;
    for (const Edge &e : s.edges)
        any_func = any_func || !e.producer.is_image;
    if (!any_func) return;
    std::vector<Expr> lowered;
    for (const Expr &e : exprs)
        lowered.push_back(simplify(e));
    std::vector<size_t> pure;
    for (size_t l = 0; l < s.loops.size(); l++)
        if (!s.loops[l].is_rvar) pure.push_back(l);
    // 2^8 scopes at most; beyond that (never in practice) stay at root.
    constexpr size_t kMaxPureLoops = 8;
    if (pure.size() > kMaxPureLoops) {
        for (Edge &e : s.edges)
            e.bounded_below_root = e.producer.is_image;
        return;
    }
    for (uint32_t mask = 0; mask < (1u << pure.size()); mask++) {
        Scope<Interval> scope;
        std::vector<std::string> free_loops;
        for (size_t l = 0; l < s.loops.size(); l++) {
            bool iterates = s.loops[l].is_rvar;
            for (size_t q = 0; q < pure.size(); q++)
                if (pure[q] == l && (mask >> q & 1u)) iterates = true;
            if (!iterates) {
                free_loops.push_back(s.loops[l].var);
                continue;
            }
            scope.push(s.loops[l].var, detail::loop_interval(s.loops[l]));
        }
        const std::map<std::string, Box> boxes = detail::required_boxes(lowered, scope, value_bounds);
        for (size_t i = 0; i < s.edges.size(); i++) {
            Edge &e = s.edges[i];
            if (e.producer.is_image || !e.bounded_below_root) continue;
            auto it = boxes.find(edge_names[i]);
            if (it == boxes.end()) continue; // simplified away: nothing to bound
            for (const Interval &iv : it->second.bounds)
                if (!iv.is_bounded() || !fixed_size_below_root(iv, free_loops)) e.bounded_below_root = false;
        }
    }
}

// The names of the Funcs and images the expressions call.
std::set<std::string> called_names(const std::vector<Expr> &exprs) {
    class Calls : public IRVisitor {
    public:
        std::set<std::string> names;

    protected:
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (op->call_type == Call::Halide || op->call_type == Call::Image) names.insert(op->name);
            IRVisitor::visit(op);
        }
    };
    Calls c;
    for (const Expr &e : exprs)
        e.accept(&c);
    return std::move(c.names);
}

// Everything mark_bounded_below_root reads of a stage, printed: its loops
// (the scope's intervals), its definition, its producers' names and the
// value bounds of what it calls (data-dependent indices are bounded by
// them).
std::string bounded_below_root_key(const Stage &s, const std::vector<std::string> &edge_names,
                                   const std::vector<Expr> &exprs, const FuncValueBounds &value_bounds) {
    std::ostringstream k;
    k << s.name << "\n";
    for (const LoopDim &l : s.loops)
        k << l.var << (l.is_rvar ? " r " : " p ") << l.rvar_min << " " << l.rvar_extent << "\n";
    for (const Expr &e : exprs)
        k << e << "\n";
    for (const std::string &e : edge_names)
        k << e << " ";
    k << "\n";
    const std::set<std::string> called = called_names(exprs);
    for (const auto &[func_value, bound] : value_bounds) {
        if (!called.count(func_value.first)) continue;
        k << func_value.first << "." << func_value.second << " [";
        if (bound.has_lower_bound()) k << bound.min;
        k << ", ";
        if (bound.has_upper_bound()) k << bound.max;
        k << "]\n";
    }
    return k.str();
}

// mark_bounded_below_root through the memo, where there is one.
void mark_bounded_below_root(Stage &s, const std::vector<std::string> &edge_names,
                             const std::vector<Expr> &exprs, const FuncValueBounds &value_bounds,
                             DagBuildMemo *memo) {
    if (!memo) return mark_bounded_below_root(s, edge_names, exprs, value_bounds);
    const std::string key = bounded_below_root_key(s, edge_names, exprs, value_bounds);
    auto known = memo->bounded_below_root.find(key);
    if (known != memo->bounded_below_root.end()) {
        memo->hits++;
        for (size_t i = 0; i < s.edges.size(); i++)
            s.edges[i].bounded_below_root = known->second[i].second;
        return;
    }
    memo->misses++;
    mark_bounded_below_root(s, edge_names, exprs, value_bounds);
    std::vector<std::pair<std::string, bool>> flags;
    for (size_t i = 0; i < s.edges.size(); i++)
        flags.emplace_back(edge_names[i], s.edges[i].bounded_below_root);
    memo->bounded_below_root.emplace(key, std::move(flags));
}

// Node::updates_stay_in_tile from the self reads of the Func's updates (the
// stores are checked as updates_write_own_point).
bool self_reads_stay_in_tile(const Node &n) {
    for (size_t si = 1; si < n.stages.size(); si++) {
        const Stage &st = n.stages[si];
        for (const Access &a : st.accesses) {
            if (!a.is_self) continue;
            for (const auto &row : a.jacobian) {
                for (size_t l = 0; l < row.size() && l < st.loops.size(); l++) {
                    if (!row[l]) return false;                             // data dependent
                    if (st.loops[l].is_rvar && *row[l] != 0) return false; // moves with an RVar
                }
            }
        }
    }
    return true;
}

// Node::reads_vary_with_tile of nodes[n], given that flag of its consumers.
bool reads_vary_with_tile(const std::vector<Node> &nodes, int n) {
    std::vector<const Jacobian *> patterns;
    for (int c : nodes[n].consumers) {
        // Through a consumer that may be inlined, its own reads compose with
        // these (seed 46: a transpose of a stencil of this Func).
        if (nodes[c].can_inline && nodes[c].reads_vary_with_tile) return true;
        for (const Stage &st : nodes[c].stages) {
            for (const Access &a : st.accesses) {
                if (a.producer.is_image || a.producer.index != n) continue;
                bool seen = false;
                for (const Jacobian *p : patterns)
                    seen = seen || *p == a.jacobian;
                if (!seen) patterns.push_back(&a.jacobian);
                // Each argument must follow at most one loop, with step 1. (A
                // data-dependent index, nullopt, reads a fixed range: the whole
                // region, wherever the tile is.)
                for (const auto &row : a.jacobian) {
                    int moving = 0;
                    for (const auto &v : row)
                        if (v && *v != 0) moving += (*v == 1 || *v == -1) ? 1 : 2;
                    if (moving > 1) return true;
                }
            }
        }
    }
    return patterns.size() > 1;
}

// Whether a read moves the producer's region as the reader's own moves:
// each argument follows the reader's argument of the same position, step 1.
bool moves_with_reader(const Stage &st, const Access &a) {
    for (size_t arg = 0; arg < a.jacobian.size(); arg++) {
        int following = 0;
        for (size_t l = 0; l < a.jacobian[arg].size() && l < st.loops.size(); l++) {
            const std::optional<int64_t> &step = a.jacobian[arg][l];
            if (!step) return false;
            if (*step == 0) continue;
            if (*step != 1 || st.loops[l].is_rvar || st.loops[l].func_arg != static_cast<int>(arg))
                return false;
            following++;
        }
        if (following != 1) return false;
    }
    return true;
}

// Node::paths_move_apart of every node, consumers first: moved_below[n] says
// that some read on a path from n toward the outputs does not move with its
// reader.
void mark_paths_moving_apart(std::vector<Node> &nodes) {
    std::vector<uint8_t> moved_below(nodes.size(), 0);
    for (size_t ni = 0; ni < nodes.size(); ni++) {
        bool consumer_moves_apart = false;
        for (int c : nodes[ni].consumers) {
            bool below = moved_below[c] != 0;
            for (const Stage &st : nodes[c].stages)
                for (const Access &a : st.accesses)
                    if (!a.producer.is_image && a.producer.index == static_cast<int>(ni) && !a.is_self &&
                        !moves_with_reader(st, a))
                        moved_below[ni] = 1;
            consumer_moves_apart = consumer_moves_apart || below;
            if (below) moved_below[ni] = 1;
        }
        nodes[ni].paths_move_apart = nodes[ni].consumers.size() >= 2 && consumer_moves_apart;
    }
}

// The loops of the stage that def defines (stage_name, for messages),
// innermost first as Halide orders them; an RVar's domain at the
// parameters' estimates.
std::vector<LoopDim> stage_loops(const Definition &def, const std::string &stage_name,
                                 const VarValues &param_values) {
    std::vector<LoopDim> loops;
    std::map<std::string, const ReductionVariable *> rvars;
    for (const ReductionVariable &rv : def.schedule().rvars())
        rvars[rv.var] = &rv;
    for (const Dim &d : def.schedule().dims()) {
        if (d.var == Var::outermost().name()) continue;
        LoopDim l;
        l.var = d.var;
        l.is_rvar = d.is_rvar();
        if (l.is_rvar) {
            const ReductionVariable *rv = rvars.at(d.var);
            auto mn = evaluate(rv->min, param_values), ex = evaluate(rv->extent, param_values);
            if (!mn || !ex) {
                throw UserError("gpusched: cannot evaluate the domain of RVar '" + d.var + "' in " +
                                stage_name + "; give the parameters it depends on estimates");
            }
            l.rvar_min = *mn;
            l.rvar_extent = std::max<int64_t>(1, *ex);
            l.rvar_sized_by_params = !is_const(simplify(rv->extent));
        } else {
            for (size_t a = 0; a < def.args().size(); a++) {
                const auto *v = def.args()[a].as<Variable>();
                if (v && v->name == d.var) l.func_arg = static_cast<int>(a);
            }
            if (l.func_arg < 0) {
                // A loop that is no argument of the Func comes from a split the
                // generator made itself (gpu_tile, vectorize, split).
                throw UserError("gpusched: " + stage_name +
                                " already has a schedule from its generator (its loop '" + d.var +
                                "' comes from a split, tile or vectorize); an autoscheduler "
                                "schedules a pipeline without one: apply the generator's own "
                                "schedule only when no autoscheduler is used (Halide 14: "
                                "if (!auto_schedule); 15 and later: if (!using_autoscheduler()))");
            }
        }
        loops.push_back(l);
    }
    return loops;
}

// The call sites of stage s of node n (defined by def), its store jacobian,
// algorithm features and Strahler number (core/algorithm_features.h);
// resolve names each producer it calls.
void analyze_call_sites(Stage &s, const Definition &def, const Node &n, const VarValues &param_values,
                        const std::function<ProducerRef(const Call *)> &resolve) {
    StageAnalysisInput in;
    in.stage = &s;
    in.values = def.values();
    if (s.index > 0)
        in.store_args = def.args();
    else
        for (const std::string &a : n.args)
            in.store_args.push_back(Variable::make(Int(32), a));
    in.self_name = n.name;
    in.params = &param_values;
    in.resolve = resolve;
    StageAnalysis an = analyze_stage(in);
    s.accesses = std::move(an.accesses);
    s.store_jacobian = std::move(an.store_jacobian);
    s.features = an.features;
    s.strahler = an.strahler;
}

// The symbolic footprints of stage s (defined by def, computing exprs, of
// the Func self_name): one Edge per producer it reads, a Func by index_of or
// an image by image_index, and for an update its self_box.
void add_footprints(Stage &s, const Definition &def, const std::vector<Expr> &exprs,
                    const std::string &self_name, const std::map<std::string, int> &index_of,
                    const std::map<std::string, int> &image_index, const FuncValueBounds &value_bounds) {
    // Symbolic footprints of every producer.
    Scope<Interval> scope;
    for (const LoopDim &l : s.loops) {
        scope.push(l.var, detail::loop_interval(l));
    }
    const std::map<std::string, Box> boxes = detail::required_boxes(exprs, scope, value_bounds);
    for (auto &kv : boxes) {
        if (kv.first == self_name) continue; // self reads of updates stay in the Func
        Edge e;
        auto fi = index_of.find(kv.first);
        if (fi != index_of.end()) {
            e.producer = ProducerRef{fi->second, false};
        } else {
            auto ii = image_index.find(kv.first);
            if (ii == image_index.end()) continue; // e.g. a scalar param buffer; not a producer
            e.producer = ProducerRef{ii->second, true};
        }
        for (const Interval &iv : kv.second.bounds) {
            Expr mn = iv.has_lower_bound() ? simplify(iv.min) : Expr();
            Expr mx = iv.has_upper_bound() ? simplify(iv.max) : Expr();
            e.affine = e.affine && is_affine_bound(mn) && is_affine_bound(mx);
            e.rounds = e.rounds || detail::rounds(mn) || detail::rounds(mx);
            e.box.emplace_back(mn, mx);
        }
        for (const Access &a : s.accesses)
            e.num_calls += a.producer == e.producer ? 1 : 0;
        s.edges.push_back(std::move(e));
    }
    if (s.index > 0) {
        // What the update touches of its own Func: its self reads
        // (the boxes above) and its stores, the update's arguments.
        s.self_box.producer = ProducerRef{s.node, false};
        auto self = boxes.find(self_name);
        for (size_t d = 0; d < def.args().size(); d++) {
            Interval iv = bounds_of_expr_in_scope(def.args()[d], scope, value_bounds);
            if (self != boxes.end() && d < self->second.size()) iv.include(self->second[d]);
            Expr mn = iv.has_lower_bound() ? simplify(iv.min) : Expr();
            Expr mx = iv.has_upper_bound() ? simplify(iv.max) : Expr();
            s.self_box.box.emplace_back(mn, mx);
        }
    }
}

// Node::consumers of every node, each list in index order.
void link_consumers(std::vector<Node> &nodes) {
    for (size_t ni = 0; ni < nodes.size(); ni++) {
        for (const Stage &s : nodes[ni].stages) {
            for (const Edge &e : s.edges) {
                if (e.producer.is_image) continue;
                auto &c = nodes[e.producer.index].consumers;
                if (std::find(c.begin(), c.end(), static_cast<int>(ni)) == c.end())
                    c.push_back(static_cast<int>(ni));
            }
        }
    }
    for (Node &n : nodes)
        std::sort(n.consumers.begin(), n.consumers.end());
}

// Node::can_inline, updates_write_own_point, updates_stay_in_tile and
// always_inline of n (a node of nodes) from its definition and its
// consumers' call sites.
void mark_inline_choices(std::vector<Node> &nodes, Node &n) {
    const Function &f = n.func;
    n.can_inline = !n.is_output && f.updates().empty() && !f.has_extern_definition();
    for (const Definition &u : f.updates()) {
        for (size_t i = 0; i < u.args().size(); i++) {
            const auto *v = u.args()[i].as<Variable>();
            if (!v || i >= n.args.size() || v->name != n.args[i]) n.updates_write_own_point = false;
        }
    }
    n.updates_stay_in_tile = n.updates_write_own_point && self_reads_stay_in_tile(n);
    bool pointwise = n.can_inline;
    for (int c : n.consumers) {
        for (const Stage &s : nodes[c].stages) {
            for (const Access &a : s.accesses) {
                if (!a.producer.is_image && a.producer.index == static_cast<int>(&n - nodes.data()))
                    pointwise = pointwise && is_pointwise_access(a, s);
            }
        }
    }
    // A Func that only forwards another Func or an input (the wrapper an
    // ImageParam makes, f(x, y) = in(x, y)) computes nothing: inlining it
    // is free wherever it is called.
    bool forwards = n.can_inline && f.values().size() == 1;
    if (forwards) {
        const auto *c = f.values()[0].as<Call>();
        forwards = c && (c->call_type == Call::Image || c->call_type == Call::Halide) &&
                   c->args.size() == n.args.size();
        for (size_t i = 0; forwards && i < n.args.size(); i++) {
            const auto *v = c->args[i].as<Variable>();
            forwards = v && v->name == n.args[i];
        }
    }
    n.always_inline = pointwise || forwards;
}

// What the reads of n (a node of nodes) by its consumers allow:
// Edge::bounded_below_root of those reads and Node::bounded_below_root,
// Node::region_spans_sized_rvar, and always_inline where Halide cannot
// bound a read. Throws UserError where such a Func cannot be inlined.
void mark_reads_by_consumers(std::vector<Node> &nodes, Node &n) {
    for (int c : n.consumers) {
        for (Stage &s : nodes[c].stages) {
            for (Edge &e : s.edges) {
                if (e.producer.is_image || e.producer.index != static_cast<int>(&n - nodes.data())) continue;
                // A region from an estimate, or bounded through a scalar
                // parameter, is Halide's to size at lowering (symbolically,
                // from the parameters' run-time values): the Func stays at
                // root, where no constant size is needed. (estimated_grid:
                // the grid's z extent is 1 / r_sigma; at block level the
                // kernel's thread count and shared memory followed it.)
                if (e.from_estimate() || box_uses_scalar_param(e.box)) e.bounded_below_root = false;
                n.bounded_below_root = n.bounded_below_root && e.bounded_below_root;
                n.region_spans_sized_rvar = n.region_spans_sized_rvar || box_spans_sized_rvar(e.box, s);
                if (!e.unbounded_in_halide) continue;
                // Halide cannot bound this read at any compute level: the
                // only schedule that lowers computes the Func where it is
                // read.
                if (!n.can_inline) {
                    throw UserError("gpusched: the region of '" + n.name + "' read by " + s.name +
                                    " is unbounded in Halide (a data-dependent index with no clamp), so '" +
                                    n.name +
                                    "' could only be inlined, which a Func with update definitions "
                                    "or an output cannot be; clamp the index");
                }
                n.always_inline = true;
            }
        }
    }
}

// Node::footprint_rounds of every node, consumers first.
void mark_footprint_rounds(std::vector<Node> &nodes) {
    for (size_t ni = 0; ni < nodes.size(); ni++) {
        for (int c : nodes[ni].consumers) {
            nodes[ni].footprint_rounds = nodes[ni].footprint_rounds || nodes[c].footprint_rounds;
            for (const Stage &st : nodes[c].stages)
                for (const Edge &e : st.edges)
                    if (!e.producer.is_image && e.producer.index == static_cast<int>(ni) && e.rounds)
                        nodes[ni].footprint_rounds = true;
        }
    }
}

} // namespace

FunctionDAG::FunctionDAG(const std::vector<Function> &outputs, DagBuildMemo *memo) {
    std::map<std::string, Function> env = build_environment(outputs);
    std::vector<std::string> order = realization_order(outputs, env).first;
    FuncValueBounds value_bounds = compute_function_value_bounds(order, env);

    // Parameters first: bounds and RDoms refer to them.
    collect_param_estimates(env);
    const std::map<std::string, int> index_of = add_nodes(outputs, env, order);
    add_stages(index_of, value_bounds, memo);
    compile_footprints();
    link_consumers(nodes);
    compute_regions(value_bounds);
    // Per Func: its inlining flags, then what its consumers' reads of it
    // allow (which may force always_inline on).
    for (Node &n : nodes) {
        mark_inline_choices(nodes, n);
        mark_reads_by_consumers(nodes, n);
    }
    number_stages();
    // Consumers first (smaller indices), so a consumer's flag is final when
    // its producers are visited.
    for (size_t ni = 0; ni < nodes.size(); ni++)
        nodes[ni].reads_vary_with_tile = reads_vary_with_tile(nodes, static_cast<int>(ni));
    mark_paths_moving_apart(nodes);
    mark_footprint_rounds(nodes);
}

void FunctionDAG::collect_param_estimates(const std::map<std::string, Function> &env) {
    ParamCollector pc(param_values);
    for (const auto &kv : env) {
        const Function &f = kv.second;
        if (f.has_extern_definition()) {
            throw UserError("gpusched: Func '" + f.name() +
                            "' has an extern definition, which this autoscheduler does not schedule");
        }
        for (const Expr &e : f.values())
            e.accept(&pc);
        for (const Definition &u : f.updates()) {
            for (const Expr &e : detail::stage_exprs(u, true))
                e.accept(&pc);
            for (const ReductionVariable &rv : u.schedule().rvars()) {
                rv.min.accept(&pc);
                rv.extent.accept(&pc);
            }
        }
        for (const Parameter &p : f.output_buffers())
            pc.add_buffer(p);
    }
}

std::map<std::string, int> FunctionDAG::add_nodes(const std::vector<Function> &outputs,
                                                  const std::map<std::string, Function> &env,
                                                  const std::vector<std::string> &order) {
    const std::map<std::string, std::string> stable = stable_func_names(order);
    std::map<std::string, int> index_of;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        index_of[*it] = static_cast<int>(nodes.size());
        Node n;
        n.name = *it;
        n.stable_name = stable.at(*it);
        n.func = env.at(*it);
        n.args = n.func.args();
        for (const Type &t : n.func.output_types()) {
            n.bytes_per_point += t.bytes();
            n.max_element_bytes = std::max(n.max_element_bytes, t.bytes());
            n.min_element_bytes = n.min_element_bytes ? std::min(n.min_element_bytes, t.bytes()) : t.bytes();
        }
        for (const Function &o : outputs)
            n.is_output = n.is_output || o.name() == n.name;
        n.estimate = func_estimates(n.func, param_values);
        nodes.push_back(std::move(n));
    }
    return index_of;
}

void FunctionDAG::add_stages(const std::map<std::string, int> &index_of, const FuncValueBounds &value_bounds,
                             DagBuildMemo *memo) {
    std::map<std::string, int> image_index;
    auto resolve = [&](const Call *c) -> ProducerRef {
        if (c->call_type == Call::Halide) return ProducerRef{index_of.at(c->name), false};
        auto it = image_index.find(c->name);
        if (it != image_index.end()) return ProducerRef{it->second, true};
        ImageInput img;
        img.name = c->name;
        img.dims = static_cast<int>(c->args.size());
        img.bytes = c->type.bytes();
        images.push_back(img);
        image_index[c->name] = static_cast<int>(images.size()) - 1;
        return ProducerRef{static_cast<int>(images.size()) - 1, true};
    };

    for (size_t ni = 0; ni < nodes.size(); ni++) {
        Node &n = nodes[ni];
        const Function &f = n.func;
        int num_stages = 1 + static_cast<int>(f.updates().size());
        for (int si = 0; si < num_stages; si++) {
            const Definition &def = si == 0 ? f.definition() : f.updates()[si - 1];
            Stage s;
            s.node = static_cast<int>(ni);
            s.index = si;
            s.name = si == 0 ? n.name : n.name + ".update(" + std::to_string(si - 1) + ")";
            s.atomic = si > 0 && def.schedule().atomic();
            s.loops = stage_loops(def, s.name, param_values);

            std::vector<Expr> exprs = detail::stage_exprs(def, si > 0);
            analyze_call_sites(s, def, n, param_values, resolve);
            add_footprints(s, def, exprs, n.name, index_of, image_index, value_bounds);
            std::sort(s.edges.begin(), s.edges.end(),
                      [](const Edge &a, const Edge &b) { return a.producer < b.producer; });
            std::vector<std::string> edge_names;
            for (const Edge &e : s.edges)
                edge_names.push_back(e.producer.is_image ? images[e.producer.index].name
                                                         : nodes[e.producer.index].name);
            mark_bounded_below_root(s, edge_names, exprs, value_bounds, memo);
            n.stages.push_back(std::move(s));
        }
    }
}

// Footprints compiled once; required() runs them per loop nest.
void FunctionDAG::compile_footprints() {
    for (Node &n : nodes) {
        for (Stage &s : n.stages) {
            for (Edge &e : s.edges)
                compile_box(s, e);
            compile_box(s, s.self_box);
        }
    }
}

// Regions, consumers first. A bound that cannot be evaluated (a
// data-dependent index Halide bounds only symbolically, or not at all)
// takes the producer's Func estimate in that dimension, in the DAG's
// regions and in every footprint the search evaluates alike
// (Edge::estimated); an evaluable bound wins over an estimate, since it
// is what Halide computes (docs/search.md, "What gpusched reads from a
// generator").
void FunctionDAG::compute_regions(const FuncValueBounds &value_bounds) {
    for (size_t ni = 0; ni < nodes.size(); ni++) {
        Node &n = nodes[ni];
        if (n.is_output) {
            n.region = output_estimates(n.func, n.estimate);
        } else if (n.consumers.empty()) {
            throw UserError("gpusched: Func '" + n.name + "' is not used by any output");
        }
        for (Stage &s : n.stages) {
            std::vector<Span> loops = loop_bounds(s, n.region);
            for (Edge &e : s.edges) {
                std::optional<Region> r = required(s, e, loops);
                if (!r && bound_with_whole_loops(s, e, loops, value_bounds)) r = required(s, e, loops);
                if (!r) {
                    use_estimates_where_unbounded(s, e, loops);
                    r = required(s, e, loops);
                    assert(r &&
                           "every dimension is evaluable or estimated after use_estimates_where_unbounded");
                }
                Region &target =
                    e.producer.is_image ? images[e.producer.index].region : nodes[e.producer.index].region;
                merge_region(target, *r);
            }
        }
    }
}

void FunctionDAG::number_stages() {
    int offset = 0;
    for (const Node &n : nodes) {
        stage_offsets_.push_back(offset);
        offset += static_cast<int>(n.stages.size());
    }
    stage_offsets_.push_back(offset);
}

} // namespace gpusched
