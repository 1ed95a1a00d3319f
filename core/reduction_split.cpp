#include "core/reduction_split.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "common/errors.h"
#include "core/stable_names.h"

namespace gpusched {

using Halide::Internal::Function;

namespace {

// Each partial result should reduce at least this many iterations: fewer,
// and the intermediate's reads and writes cost more than they parallelize.
constexpr int64_t kMinIterationsPerPartial = 4;
constexpr int64_t kMinReductionPoints = 64;

int64_t floor_pow2(int64_t v) {
    int64_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

std::string split_rvar_name(const std::string &rvar, const char *part) {
    return rvar + "_" + part;
}
std::string preserved_var_name(const ReductionSplit &s, size_t k) {
    std::string f;
    for (char c : s.func)
        f += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return "rf" + std::to_string(k) + "_" + f;
}

// The RVars of the preserved pieces (after their splits), innermost first.
std::vector<std::string> preserved_rvar_names(const ReductionSplit &s) {
    std::vector<std::string> names;
    for (const PreservedRVar &p : s.preserved)
        names.push_back(p.factor ? split_rvar_name(p.rvar, p.outer ? "o" : "i") : p.rvar);
    return names;
}

// The preserved pieces giving `partials` partial results from the loops of
// an update (innermost first): whole RVars from the innermost outward while
// they fit, then the inner part of the next one.
ReductionSplit split_for(const std::string &func, int update, const std::vector<LoopDim> &loops,
                         int64_t partials) {
    ReductionSplit s;
    s.func = func;
    s.update = update;
    int64_t want = partials;
    for (const LoopDim &l : loops) {
        if (!l.is_rvar || want <= 1) continue;
        if (l.rvar_extent <= want) {
            s.preserved.push_back({l.var, 0});
            s.partials *= l.rvar_extent;
            want /= l.rvar_extent;
        } else {
            s.preserved.push_back({l.var, want});
            s.partials *= want;
            want = 1;
        }
    }
    return s;
}

} // namespace

namespace {

// env and its stable names are the pipeline's before any split: a split's
// Func is always one of them (a second level splits the same Func again).
void apply_reduction_split(const std::map<std::string, Function> &env,
                           const std::map<std::string, std::string> &stable, const ReductionSplit &split) {
    auto it =
        std::find_if(env.begin(), env.end(), [&](const auto &e) { return stable.at(e.first) == split.func; });
    if (it == env.end())
        throw UserError("gpusched: reduction split of '" + split.func + "': no such Func in this pipeline");
    Halide::Func f(it->second);
    if (split.update < 0 || split.update >= f.num_update_definitions())
        throw UserError("gpusched: reduction split of '" + split.func + "': it has no update " +
                        std::to_string(split.update));
    Halide::Stage stage = f.update(split.update);
    for (const PreservedRVar &p : split.preserved) {
        if (p.factor <= 0) continue;
        stage.split(Halide::RVar(p.rvar), Halide::RVar(split_rvar_name(p.rvar, "o")),
                    Halide::RVar(split_rvar_name(p.rvar, "i")), Halide::Expr(static_cast<int>(p.factor)),
                    Halide::TailStrategy::GuardWithIf);
    }
    std::vector<std::pair<Halide::RVar, Halide::Var>> preserved;
    const std::vector<std::string> rvars = preserved_rvar_names(split);
    for (size_t k = 0; k < rvars.size(); k++)
        preserved.emplace_back(Halide::RVar(rvars[k]), Halide::Var(preserved_var_name(split, k)));
    stage.rfactor(preserved);
    if (split.atomic) f.update(split.update).atomic();
}

// The update's atomic stores are ones both GPU backends have: one value of
// 32 bits (CUDA and OpenCL refuse 8- and 16-bit atomics; OpenCL's 64-bit
// ones need an extension; a Tuple needs a mutex neither has).
bool atomic_combine_possible(const Function &f, int update) {
    const std::vector<Halide::Expr> &values = f.updates()[update].values();
    return values.size() == 1 && values[0].type().bits() == 32 && values[0].type().lanes() == 1;
}

// Whether e loads a Func's or an image's value.
bool loads_a_value(const Halide::Expr &e) {
    struct Finder : Halide::Internal::IRVisitor {
        bool found = false;
        using IRVisitor::visit;
        void visit(const Halide::Internal::Call *op) override {
            if (op->call_type == Halide::Internal::Call::Halide ||
                op->call_type == Halide::Internal::Call::Image)
                found = true;
            IRVisitor::visit(op);
        }
    } finder;
    e.accept(&finder);
    return finder.found;
}

// Whether some definition of f discretizes a loaded value: a load or a
// store at an index computed from data (a histogram's bin, a gather), or a
// float value cast to an integer (8-bit output: a last-bit change rounds
// to the next step).
bool discretizes_values(const Function &f) {
    struct Finder : Halide::Internal::IRVisitor {
        bool found = false;
        using IRVisitor::visit;
        void visit(const Halide::Internal::Call *op) override {
            if (op->call_type == Halide::Internal::Call::Halide ||
                op->call_type == Halide::Internal::Call::Image)
                for (const Halide::Expr &a : op->args)
                    found = found || loads_a_value(a);
            IRVisitor::visit(op);
        }
        void visit(const Halide::Internal::Cast *op) override {
            if (op->value.type().is_float() && !op->type.is_float()) found = true;
            IRVisitor::visit(op);
        }
    } finder;
    std::vector<const Halide::Internal::Definition *> defs{&f.definition()};
    for (const Halide::Internal::Definition &u : f.updates())
        defs.push_back(&u);
    for (const Halide::Internal::Definition *d : defs) {
        if (!d->defined()) continue;
        for (const Halide::Expr &a : d->args())
            finder.found = finder.found || loads_a_value(a);
        for (const Halide::Expr &v : d->values())
            v.accept(&finder);
    }
    return finder.found;
}

// Atomic float adds arrive in whatever order the threads reach the output,
// so the sum differs in its last bits from run to run. Where some Func
// downstream turns values into indices (a histogram's bins) or integers, a
// last-bit change moves a value to the next bin or step and the output
// changes: random pipeline seeds 1166 (a channel mean, then a histogram of a
// stencil of it) and 1757 (a channel mean, then an 8-bit image) failed
// validation one run in three. Such a float reduction is offered no atomic
// combining; its serial combining is the same bits every run.
bool float_result_feeds_an_index(const FunctionDAG &dag, const Node &n, int update) {
    if (!update_sums_floats(n.func, update)) return false;
    std::vector<int> todo(n.consumers.begin(), n.consumers.end());
    std::vector<bool> seen(dag.nodes.size(), false);
    while (!todo.empty()) {
        const int c = todo.back();
        todo.pop_back();
        if (seen[static_cast<size_t>(c)]) continue;
        seen[static_cast<size_t>(c)] = true;
        if (discretizes_values(dag.nodes[static_cast<size_t>(c)].func)) return true;
        for (int cc : dag.nodes[static_cast<size_t>(c)].consumers)
            todo.push_back(cc);
    }
    return false;
}

// The in-block second levels of a combining update st (the level-0 split's
// partials, whose level-0 intermediate is n's "_intm"): its innermost RVar
// split into blocks of kInBlockPartials consecutive partials, the outer part
// preserved. Only where the block divides that RVar's estimated extent (a
// block past its end would size the partials' threads by a guard) and the
// partials left fit one thread, or are added atomically.
void add_in_block_options(const FunctionDAG &dag, const std::vector<Function> &outputs, const Node &n,
                          const Stage &st, bool atomic_combining, SplittableReduction &r) {
    const auto inner =
        std::find_if(st.loops.begin(), st.loops.end(), [](const LoopDim &l) { return l.is_rvar; });
    if (dag.stable_node_index(n.stable_name + "_intm") < 0 || inner == st.loops.end()) return;
    int64_t other_points = 1;
    for (auto l = std::next(inner); l != st.loops.end(); ++l)
        if (l->is_rvar) other_points *= std::max<int64_t>(1, l->rvar_extent);
    const bool atomic_ok = atomic_combining && atomic_combine_possible(n.func, r.update) &&
                           !float_result_feeds_an_index(dag, n, r.update);
    // Blocks of 256 and 1024 partials, or the whole RVar where it is one
    // block's worth itself (a 56 x 56 channel's partials: 56 per block).
    std::vector<int64_t> blocks(std::begin(kInBlockPartials), std::end(kInBlockPartials));
    if (inner->rvar_extent >= 32 && inner->rvar_extent <= 1024 &&
        std::find(blocks.begin(), blocks.end(), inner->rvar_extent) == blocks.end())
        blocks.push_back(inner->rvar_extent);
    for (int64_t block : blocks) {
        if (block > inner->rvar_extent || inner->rvar_extent % block != 0) continue;
        ReductionSplit split;
        split.func = n.stable_name;
        split.update = r.update;
        split.level = 1;
        // A piece a level-0 split left is named "r$y.r$y_i" in the loop;
        // Halide matches RVars by the unqualified name.
        split.preserved.push_back({unqualified_var_name(inner->var), block, true});
        for (auto l = std::next(inner); l != st.loops.end(); ++l)
            if (l->is_rvar) split.preserved.push_back({unqualified_var_name(l->var), 0, false});
        split.partials = inner->rvar_extent / block * other_points;
        try {
            split_copy(outputs, {split});
        } catch (const Halide::Error &) {
            continue;
        }
        for (bool atomic : {false, true}) {
            if (atomic ? !atomic_ok : split.partials > kMaxSerialPartials) continue;
            split.atomic = atomic;
            r.options.push_back(split);
        }
    }
}

} // namespace

bool update_sums_floats(const Function &f, int update) {
    const std::vector<Halide::Expr> &values = f.updates()[update].values();
    return std::any_of(values.begin(), values.end(),
                       [](const Halide::Expr &v) { return v.type().is_float(); });
}

void mark_in_block_combining(FunctionDAG &dag, const std::vector<ReductionSplit> &splits) {
    for (const ReductionSplit &s : splits) {
        if (!s.in_block()) continue;
        const int partials = dag.stable_node_index(s.func + "_intm");
        const int combiner = dag.stable_node_index(s.intermediate());
        if (partials >= 0 && combiner >= 0)
            dag.nodes[static_cast<size_t>(partials)].combined_in_block_of = combiner;
    }
}

void apply_reduction_splits(const std::vector<Function> &outputs, const std::vector<ReductionSplit> &splits) {
    const std::map<std::string, Function> env = Halide::Internal::build_environment(outputs);
    const std::map<std::string, std::string> stable = stable_func_names(env);
    for (const ReductionSplit &s : splits)
        apply_reduction_split(env, stable, s);
}

std::string reduction_split_source(const ReductionSplit &split, const std::string &func_handle,
                                   const std::string &intermediate_handle) {
    std::ostringstream s;
    s << "    ::Halide::Func " << intermediate_handle << " = " << func_handle << ".update(" << split.update
      << ")";
    for (const PreservedRVar &p : split.preserved) {
        if (p.factor <= 0) continue;
        s << "\n        .split(::Halide::RVar(\"" << p.rvar << "\"), ::Halide::RVar(\""
          << split_rvar_name(p.rvar, "o") << "\"), ::Halide::RVar(\"" << split_rvar_name(p.rvar, "i")
          << "\"), " << p.factor << ", ::Halide::TailStrategy::GuardWithIf)";
    }
    s << "\n        .rfactor({";
    const std::vector<std::string> rvars = preserved_rvar_names(split);
    for (size_t k = 0; k < rvars.size(); k++) {
        s << (k ? ", " : "") << "{::Halide::RVar(\"" << rvars[k] << "\"), ::Halide::Var(\""
          << preserved_var_name(split, k) << "\")}";
    }
    s << "});\n";
    if (split.atomic) s << "    " << func_handle << ".update(" << split.update << ").atomic();\n";
    return s.str();
}

std::vector<Function> split_copy(const std::vector<Function> &outputs,
                                 const std::vector<ReductionSplit> &splits) {
    std::vector<Function> copies =
        Halide::Internal::deep_copy(outputs, Halide::Internal::build_environment(outputs)).first;
    apply_reduction_splits(copies, splits);
    return copies;
}

std::vector<SplittableReduction> reduction_split_options(const FunctionDAG &dag, const GpuProfile &gpu,
                                                         const std::vector<ReductionSplit> &applied,
                                                         bool atomic_combining, bool in_block_combining,
                                                         int64_t max_partial_bytes) {
    const int64_t resident_threads = int64_t(gpu.sm_count) * gpu.max_threads_per_sm;
    std::vector<SplittableReduction> out;
    std::vector<Function> outputs;
    for (const Node &n : dag.nodes)
        if (n.is_output) outputs.push_back(n.func);
    for (const Node &n : dag.nodes) {
        const int level =
            static_cast<int>(std::count_if(applied.begin(), applied.end(),
                                           [&](const ReductionSplit &a) { return a.func == n.stable_name; }));
        if (level >= kMaxSplitLevels) continue;
        // A split's intermediate has as many points as the split chose to
        // fill the GPU with: splitting it again would only be a deeper level.
        if (std::any_of(applied.begin(), applied.end(),
                        [&](const ReductionSplit &a) { return a.intermediate() == n.stable_name; }))
            continue;
        // Only a last level must combine its partials in one thread.
        const int64_t max_partials = level + 1 == kMaxSplitLevels ? kMaxSerialPartials : resident_threads;
        for (size_t s = 1; s < n.stages.size(); s++) {
            const Stage &st = n.stages[s];
            std::vector<Span> bounds = dag.loop_bounds(st, n.region);
            SplittableReduction r;
            r.func = n.stable_name;
            r.update = static_cast<int>(s) - 1;
            bool has_rvar = false;
            for (size_t l = 0; l < st.loops.size(); l++) {
                if (st.loops[l].is_rvar) {
                    has_rvar = true;
                    r.reduction_points *= std::max<int64_t>(1, st.loops[l].rvar_extent);
                } else {
                    r.output_points *= std::max<int64_t>(1, bounds[l].extent());
                }
            }
            if (!has_rvar || r.output_points * 4 > resident_threads ||
                r.reduction_points < kMinReductionPoints)
                continue;
            // The most partials worth having: the threads missing, within
            // this level's limit and at least kMinIterationsPerPartial each;
            // the options are fractions of it (a histogram of 3 channels
            // misses 90,000 threads but has 12,288 iterations: 96 to 2016
            // partials, not 2048 three times).
            // Each partial is a whole copy of the Func's region: at most
            // max_partial_bytes of them.
            const int64_t copy_bytes = std::max<int64_t>(1, region_points(n.region) * n.bytes_per_point);
            const int64_t most =
                std::min({resident_threads / r.output_points, max_partials,
                          r.reduction_points / kMinIterationsPerPartial, max_partial_bytes / copy_bytes});
            const auto balanced = static_cast<int64_t>(std::sqrt(static_cast<double>(r.reduction_points)));
            for (int64_t want : {most / 16, most / 4, most, std::min(balanced, most)}) {
                int64_t p = floor_pow2(want);
                if (p < 2) continue;
                ReductionSplit split = split_for(n.stable_name, r.update, st.loops, p);
                split.level = level;
                if (std::find(r.options.begin(), r.options.end(), split) != r.options.end()) continue;
                try {
                    split_copy(outputs, {split});
                } catch (const Halide::Error &) {
                    continue; // not associative, or not a domain rfactor can split
                }
                r.options.push_back(split);
                if (atomic_combining && level == 0 && atomic_combine_possible(n.func, r.update) &&
                    !float_result_feeds_an_index(dag, n, r.update)) {
                    split.atomic = true;
                    r.options.push_back(split);
                }
            }
            if (in_block_combining && level == 1 &&
                worth_combining_in_block(r.reduction_points, r.output_points, gpu))
                add_in_block_options(dag, outputs, n, st, atomic_combining, r);
            // The in-block second levels choose their partials otherwise.
            r.options.erase(std::remove_if(r.options.begin(), r.options.end(),
                                           [&](const ReductionSplit &o) {
                                               return o.partials > max_partial_bytes / copy_bytes;
                                           }),
                            r.options.end());
            if (!r.options.empty()) out.push_back(std::move(r));
            break; // the first reduction of a Func only: later ones read its result
        }
    }
    return out;
}

nlohmann::json reduction_splits_to_json(const std::vector<ReductionSplit> &splits) {
    nlohmann::json arr = nlohmann::json::array();
    for (const ReductionSplit &s : splits) {
        nlohmann::json pieces = nlohmann::json::array();
        for (const PreservedRVar &p : s.preserved) {
            nlohmann::json piece = {{"rvar", p.rvar}, {"factor", p.factor}};
            if (p.outer) piece["outer"] = true;
            pieces.push_back(std::move(piece));
        }
        nlohmann::json e = {{"func", s.func},
                            {"update", s.update},
                            {"level", s.level},
                            {"partials", s.partials},
                            {"preserved", pieces}};
        if (s.atomic) e["atomic"] = true;
        arr.push_back(std::move(e));
    }
    return arr;
}

std::vector<ReductionSplit> reduction_splits_from_json(const nlohmann::json &j) {
    std::vector<ReductionSplit> out;
    try {
        if (!j.is_array()) throw std::invalid_argument("not a list");
        for (const auto &e : j) {
            ReductionSplit s;
            s.func = e.at("func").get<std::string>();
            s.update = e.at("update").get<int>();
            s.level = e.value("level", 0); // records before levels have only level 0
            s.partials = e.value("partials", int64_t(1));
            s.atomic = e.value("atomic", false);
            for (const auto &p : e.at("preserved"))
                s.preserved.push_back({p.at("rvar").get<std::string>(), p.at("factor").get<int64_t>(),
                                       p.value("outer", false)});
            if (s.preserved.empty())
                throw std::invalid_argument("a split of '" + s.func + "' preserves nothing");
            for (const PreservedRVar &p : s.preserved)
                if (p.outer && (p.factor <= 0 || s.level != 1))
                    throw std::invalid_argument("a split of '" + s.func +
                                                "' keeps an outer part of a whole RVar, or at level 0");
            out.push_back(std::move(s));
        }
    } catch (const std::exception &e) {
        throw UserError(std::string("gpusched replay: malformed \"reduction_splits\": ") + e.what());
    }
    return out;
}

} // namespace gpusched
