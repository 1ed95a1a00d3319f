#include "core/schedule_apply.h"

#include <map>
#include <sstream>

#include "core/halide_compat.h"
#include "core/loop_nest.h"

namespace gpusched {

using namespace Halide;

namespace {

const char *memory_src(MemoryType m) {
    return m == MemoryType::GPUShared ? "::Halide::MemoryType::GPUShared" : "::Halide::MemoryType::Register";
}

// A C++ identifier for a Func's stable name or a variable's name.
std::string ident(const std::string &name) {
    std::string s;
    for (char c : name)
        s += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
    return s;
}

// Applies and prints the directives for one Func.
class FuncScheduler {
public:
    FuncScheduler(Func f, std::string handle, bool apply, std::ostringstream &out)
        : f_(f), handle_(std::move(handle)), apply_(apply), out_(out) {}

    void var(const std::string &name, bool rvar) {
        if (vars_.count(name)) return;
        std::string id = "v" + std::to_string(vars_.size()) + "_" + ident(name);
        vars_[name] = {id, rvar};
        decls_ << "        " << (rvar ? "::Halide::RVar " : "::Halide::Var ") << id << "(\""
               << unqualified_var_name(name) << "\");\n";
    }
    VarOrRVar vr(const std::string &name) const {
        auto it = vars_.find(name);
        return it->second.second ? VarOrRVar(RVar(unqualified_var_name(name)))
                                 : VarOrRVar(Var(unqualified_var_name(name)));
    }
    std::string id(const std::string &name) const { return vars_.at(name).first; }
    Halide::Stage stage(int s) { return s == 0 ? Halide::Stage(f_) : f_.update(s - 1); }
    std::string stage_src(int s) const {
        return s == 0 ? handle_ : handle_ + ".update(" + std::to_string(s - 1) + ")";
    }

    void split(int s, const std::string &old, const std::string &outer, const std::string &inner,
               int64_t factor, TailStrategy tail) {
        // A split RVar (an atomic update's) gives RVars.
        const bool rvar = vars_.at(old).second;
        var(outer, rvar);
        var(inner, rvar);
        if (apply_) stage(s).split(vr(old), vr(outer), vr(inner), Expr(static_cast<int>(factor)), tail);
        body_ << "        " << stage_src(s) << ".split(" << id(old) << ", " << id(outer) << ", " << id(inner)
              << ", " << factor << ", ::Halide::TailStrategy::"
              << (tail == TailStrategy::GuardWithIf ? "GuardWithIf" : "ShiftInwards") << ");\n";
    }
    void reorder(int s, const std::vector<std::string> &vars) {
        if (vars.size() < 2) return;
        std::vector<VarOrRVar> v;
        body_ << "        " << stage_src(s) << ".reorder(";
        for (size_t i = 0; i < vars.size(); i++) {
            v.push_back(vr(vars[i]));
            body_ << (i ? ", " : "") << id(vars[i]);
        }
        body_ << ");\n";
        if (apply_) stage(s).reorder(v);
    }
    void gpu(int s, const std::vector<std::string> &vars, bool blocks) {
        if (vars.empty()) return;
        std::vector<VarOrRVar> v;
        for (const auto &n : vars)
            v.push_back(vr(n));
        if (apply_) {
            Halide::Stage st = stage(s);
            if (blocks) {
                if (v.size() == 1)
                    st.gpu_blocks(v[0]);
                else if (v.size() == 2)
                    st.gpu_blocks(v[0], v[1]);
                else
                    st.gpu_blocks(v[0], v[1], v[2]);
            } else {
                if (v.size() == 1)
                    st.gpu_threads(v[0]);
                else if (v.size() == 2)
                    st.gpu_threads(v[0], v[1]);
                else
                    st.gpu_threads(v[0], v[1], v[2]);
            }
        }
        body_ << "        " << stage_src(s) << (blocks ? ".gpu_blocks(" : ".gpu_threads(");
        for (size_t i = 0; i < vars.size(); i++)
            body_ << (i ? ", " : "") << id(vars[i]);
        body_ << ");\n";
    }
    void unroll(int s, const std::string &v) {
        if (apply_) stage(s).unroll(vr(v));
        body_ << "        " << stage_src(s) << ".unroll(" << id(v) << ");\n";
    }
    void single_thread(int s) {
        if (apply_) stage(s).gpu_single_thread();
        body_ << "        " << stage_src(s) << ".gpu_single_thread();\n";
    }
    void compute_root() {
        if (apply_) f_.compute_root();
        body_ << "        " << handle_ << ".compute_root();\n";
    }
    void compute_inline() {
        if (apply_) f_.compute_inline();
        body_ << "        " << handle_ << ".compute_inline();\n";
    }
    // Block-level Funcs live in shared memory, thread-level ones in
    // registers. Register is not just a hint: Halide 14 moves a per-thread
    // allocation whose size it cannot prove constant (a footprint through
    // x/2 depends on the parity of the thread's first x) to a global heap
    // that FuseGPUThreadLoops sizes by the extents of the Func's own thread
    // loops but indexes with the whole kernel's thread block; a Func in a
    // kernel whose block is larger than its own thread loops then writes
    // past the heap (random_pipeline seed 6: heap corruption on POCL, and
    // the same code for CUDA). Register allocations are instead bounded by
    // a constant over the thread loops, or refused at compile time.
    void compute_at(Func host, const std::string &host_handle, const std::string &v, MemoryType memory) {
        var(v, false);
        if (apply_) f_.compute_at(host, Var(v)).store_in(memory);
        body_ << "        " << handle_ << ".compute_at(" << host_handle << ", " << id(v) << ").store_in("
              << memory_src(memory) << ");\n";
    }
    // sec. 4.7: stage a producer at this Func's thread level, through a
    // wrapper Func (producer.in(this)) computed per thread, in registers
    // for the reason given at compute_at.
    void stage_in(Func producer, const std::string &producer_handle, const std::string &thread_var) {
        var(thread_var, false);
        if (apply_) producer.in(f_).compute_at(f_, Var(thread_var)).store_in(MemoryType::Register);
        body_ << "        " << producer_handle << ".in(" << handle_ << ").compute_at(" << handle_ << ", "
              << id(thread_var) << ").store_in(" << memory_src(MemoryType::Register) << ");\n";
    }
    // A Func below root whose region may change extent as the tile moves
    // (sized_by_max) gets the nest's extents, the largest over tile
    // positions, as its fixed size: Halide then launches constant thread
    // extents and shared memory instead of sizing them at run time (and
    // checks at run time that the region needed fits). A Func in registers
    // (FixedSize::Storage) needs only its storage fixed (core/halide_compat.h,
    // kRegisterBoundMethod).
    // Pads the Func's innermost dimension's storage in shared memory to a
    // multiple of `align` (core/loop_nest.h, shared_storage_alignment:
    // Halide's packing of a kernel's shared allocations rounds a narrow
    // one's size down; padded against bank conflicts, FuncDecision::
    // pad_shared, `align` is the padded extent itself, which Halide then
    // allocates as that extent).
    void align_shared_storage(const Node &node, int64_t align) {
        if (node.args.empty() || align <= 1) return;
        var(node.args[0], false);
        if (apply_) f_.align_storage(Var(node.args[0]), Expr(static_cast<int>(align)));
        body_ << "        " << handle_ << ".align_storage(" << id(node.args[0]) << ", " << align << ");\n";
    }
    // Stores dimension `innermost` innermost, the others in their order
    // (FuncDecision::storage_innermost); 0 leaves Halide's default.
    void reorder_storage(const Node &node, int innermost) {
        if (innermost <= 0 || static_cast<size_t>(innermost) >= node.args.size()) return;
        std::vector<std::string> order{node.args[innermost]};
        for (size_t d = 0; d < node.args.size(); d++)
            if (static_cast<int>(d) != innermost) order.push_back(node.args[d]);
        std::vector<Var> vars;
        body_ << "        " << handle_ << ".reorder_storage(";
        for (size_t i = 0; i < order.size(); i++) {
            var(order[i], false);
            vars.emplace_back(order[i]);
            body_ << (i ? ", " : "") << id(order[i]);
        }
        body_ << ");\n";
        if (apply_) f_.reorder_storage(vars);
    }
    enum class FixedSize { Computed, Storage };
    void bound_extents(const Node &node, const Region &region, FixedSize what) {
        if (!sized_by_max(node)) return;
        const char *method = what == FixedSize::Storage ? kRegisterBoundMethod : "bound_extent";
        for (size_t d = 0; d < node.args.size() && d < region.size(); d++) {
            var(node.args[d], false);
            const int extent = static_cast<int>(region[d].extent());
            if (apply_ && what == FixedSize::Storage) bound_register_storage(f_, Var(node.args[d]), extent);
            if (apply_ && what == FixedSize::Computed) f_.bound_extent(Var(node.args[d]), extent);
            body_ << "        " << handle_ << "." << method << "(" << id(node.args[d]) << ", " << extent
                  << ");\n";
        }
    }
    void flush() { out_ << "    {\n" << decls_.str() << body_.str() << "    }\n"; }

private:
    Func f_;
    std::string handle_;
    bool apply_;
    std::ostringstream &out_;
    std::ostringstream decls_, body_;
    std::map<std::string, std::pair<std::string, bool>> vars_;
};

struct StageVars {
    std::vector<std::string> serial, thread, block, rvars, outer;
    std::string innermost_thread, innermost_block;
};

StageVars tile_stage(FuncScheduler &fs, const gpusched::Stage &st, const ScheduledStage &ss) {
    StageVars sv;
    const bool update = st.index > 0;
    const TailStrategy tail = update ? TailStrategy::GuardWithIf : TailStrategy::ShiftInwards;
    int pure_seen = 0;
    for (size_t l = 0; l < st.loops.size(); l++) {
        const LoopDim &ld = st.loops[l];
        fs.var(ld.var, ld.is_rvar);
        if (!st.tileable(l)) {
            sv.rvars.push_back(ld.var);
            continue;
        }
        const int64_t s = ss.serial[l], t = ss.thread[l];
        const std::string &v = ld.var;
        if (ss.location == ComputeLocation::Root) {
            if (t > 1 && s > 1) {
                fs.split(st.index, v, v + "_gb", v + "_gi", t * s, tail);
                fs.split(st.index, v + "_gi", v + "_gt", v + "_gs", s, tail);
                sv.block.push_back(v + "_gb");
                sv.thread.push_back(v + "_gt");
                sv.serial.push_back(v + "_gs");
            } else if (t > 1) {
                fs.split(st.index, v, v + "_gb", v + "_gt", t, tail);
                sv.block.push_back(v + "_gb");
                sv.thread.push_back(v + "_gt");
            } else if (s > 1) {
                fs.split(st.index, v, v + "_gb", v + "_gs", s, tail);
                sv.block.push_back(v + "_gb");
                sv.serial.push_back(v + "_gs");
            } else {
                sv.block.push_back(v);
            }
        } else {
            // Block level: the loop over the Func's region per block becomes
            // thread loops outside serial loops; beyond 3 loops, serial.
            if (pure_seen++ >= 3) {
                sv.outer.push_back(v);
                continue;
            }
            std::string tv = v;
            if (s > 1) {
                fs.split(st.index, v, v + "_gt", v + "_gs", s, tail);
                sv.serial.push_back(v + "_gs");
                tv = v + "_gt";
            }
            if (t > 1)
                sv.thread.push_back(tv);
            else
                sv.outer.push_back(tv);
        }
    }
    std::vector<std::string> order = sv.serial;
    order.insert(order.end(), sv.rvars.begin(), sv.rvars.end());
    order.insert(order.end(), sv.thread.begin(), sv.thread.end());
    order.insert(order.end(), sv.outer.begin(), sv.outer.end());
    order.insert(order.end(), sv.block.begin(), sv.block.end());
    fs.reorder(st.index, order);
    // sec. 4.7: unroll serial loops of total extent < 16.
    int64_t serial_total = 1;
    for (size_t l = 0; l < st.loops.size(); l++)
        if (st.tileable(l) && ss.serial[l] > 1 && !sv.serial.empty()) serial_total *= ss.serial[l];
    if (!sv.serial.empty() && serial_total < 16)
        for (const auto &v : sv.serial)
            fs.unroll(st.index, v);
    if (sv.thread.size() > 3) sv.thread.resize(3);
    std::vector<std::string> blocks = sv.block;
    if (blocks.size() > 3) blocks.resize(3); // outer ones stay host loops
    fs.gpu(st.index, blocks, true);
    fs.gpu(st.index, sv.thread, false);
    if (ss.location == ComputeLocation::Root && blocks.empty()) fs.single_thread(st.index);
    if (!sv.thread.empty()) sv.innermost_thread = sv.thread[0];
    if (!blocks.empty()) sv.innermost_block = blocks[0];
    return sv;
}

// Producers worth staging in registers at consumer n's thread level: n is a
// single pure stage whose threads each compute several points (serial
// product > 1), and the producer is a Func read through an affine footprint
// (so the per-thread buffer has a static size) of at most
// kMaxStagedBytes, which Halide can bound per thread (bounded_below_root:
// max_filter's vert reads its input at y + h + 1 - (1 << lvl(t)), finite
// over all t but unbounded to Halide's allocation bounds inference once t
// is a fixed outer loop, and lowering failed with "accessed over an
// unbounded domain"). Thread-level producers already live there.
std::vector<int> staged_producers(const FunctionDAG &dag, const Decisions &d, const LoopNest &nest, int n) {
    constexpr int64_t kMaxStagedBytes = 256;
    std::vector<int> out;
    const Node &node = dag.nodes[n];
    if (node.stages.size() != 1) return out;
    const ScheduledStage &ss = nest.stages[nest.stage_at[n][0]];
    int64_t serial = 1;
    for (size_t l = 0; l < ss.serial.size(); l++)
        if (!node.stages[0].loops[l].is_rvar) serial *= ss.serial[l];
    if (serial <= 1 || ss.threads <= 1) return out;
    for (const Edge &e : node.stages[0].edges) {
        if (e.producer.is_image || !e.affine || !e.bounded_below_root) continue;
        ComputeLocation loc = d.funcs[e.producer.index].location;
        if (loc == ComputeLocation::Thread || loc == ComputeLocation::Unscheduled) continue;
        Region r = dag.required_or_all(node.stages[0], e, ss.loops_thread);
        if (region_points(r) * dag.nodes[e.producer.index].bytes_per_point > kMaxStagedBytes) continue;
        out.push_back(e.producer.index);
    }
    return out;
}

} // namespace

std::string func_handle(const std::string &stable_name) {
    return ident(stable_name);
}

std::map<std::string, int> get_func_indices(Pipeline pipeline) {
    std::map<std::string, int> index;
    const std::vector<Internal::Function> outputs = [&] {
        std::vector<Internal::Function> o;
        for (const Func &f : pipeline.outputs())
            o.push_back(f.function());
        return o;
    }();
    const size_t funcs = Internal::build_environment(outputs).size();
    for (size_t i = 0; i < funcs; i++)
        index[pipeline.get_func(i).name()] = static_cast<int>(i);
    return index;
}

std::string schedule_pipeline(const FunctionDAG &dag, const Decisions &d, Pipeline pipeline, bool apply) {
    return schedule_pipeline(dag, d, {}, get_func_indices(pipeline), apply);
}

std::string schedule_pipeline(const FunctionDAG &dag, const Decisions &d,
                              const std::vector<ReductionSplit> &splits,
                              const std::map<std::string, int> &get_func_index, bool apply) {
    LoopNest nest(dag, d);
    std::ostringstream out;
    // The unsplit pipeline's Funcs first, then the intermediates the splits
    // create from them (a split's Func may itself be an earlier split's
    // intermediate, hence in order).
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        auto it = get_func_index.find(dag.nodes[n].name);
        if (it != get_func_index.end())
            out << "    ::Halide::Func " << ident(dag.nodes[n].stable_name) << " = pipeline.get_func("
                << it->second << ");\n";
    }
    for (const ReductionSplit &s : splits)
        out << reduction_split_source(s, ident(s.func), ident(s.intermediate()));
    std::vector<StageVars> stage_vars(nest.stages.size());
    // Consumers first: hosts' loop names are known before their producers.
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const Node &node = dag.nodes[n];
        Func f(node.func);
        FuncScheduler fs(f, ident(node.stable_name), apply, out);
        const FuncDecision &fd = d.funcs[n];
        switch (fd.location) {
        case ComputeLocation::Unscheduled:
        case ComputeLocation::Inline:
            fs.compute_inline();
            break;
        case ComputeLocation::Root:
            fs.compute_root();
            fs.reorder_storage(node, fd.storage_innermost);
            for (size_t s = 0; s < node.stages.size(); s++) {
                int idx = nest.stage_at[n][s];
                stage_vars[idx] = tile_stage(fs, node.stages[s], nest.stages[idx]);
            }
            break;
        case ComputeLocation::Block: {
            fs.bound_extents(node, nest.realization_region[n], FuncScheduler::FixedSize::Computed);
            fs.reorder_storage(node, fd.storage_innermost);
            // The nest decides the padded extent (LoopNest::storage_padding),
            // as it counts the tile's shared memory and strides by it.
            const int64_t padding = nest.storage_padding(ProducerRef{static_cast<int>(n), false});
            fs.align_shared_storage(
                node,
                padding > 0
                    ? nest.realization_region[n][0].extent() + padding
                    : shared_storage_alignment(
                          node, nest.kernels[nest.stages[nest.stage_at[n][0]].kernel].widest_shared_element));
            // compute_at names a loop of the host's last stage (a split's
            // partials combined in block sit in its update's kernel).
            const StageVars &host = stage_vars[nest.stage_at[fd.host].back()];
            fs.compute_at(Func(dag.nodes[fd.host].func), ident(dag.nodes[fd.host].stable_name),
                          host.innermost_block, MemoryType::GPUShared);
            for (size_t s = 0; s < node.stages.size(); s++) {
                int idx = nest.stage_at[n][s];
                stage_vars[idx] = tile_stage(fs, node.stages[s], nest.stages[idx]);
            }
            break;
        }
        case ComputeLocation::Thread: {
            fs.bound_extents(node, nest.realization_region[n], FuncScheduler::FixedSize::Storage);
            const StageVars &host = stage_vars[nest.stage_at[fd.host][0]];
            fs.compute_at(Func(dag.nodes[fd.host].func), ident(dag.nodes[fd.host].stable_name),
                          host.innermost_thread, MemoryType::Register);
            break;
        }
        }
        // Only kernels' own stages stage producers: staging inside a
        // block-level Func made Halide 14 fail to lower local_laplacian
        // ("Symbol not found: <kernel>.s0.y.y_gi.base" in CodeGen_LLVM).
        if (fd.location == ComputeLocation::Root) {
            for (int producer : staged_producers(dag, d, nest, static_cast<int>(n))) {
                fs.stage_in(Func(dag.nodes[producer].func), ident(dag.nodes[producer].stable_name),
                            stage_vars[nest.stage_at[n][0]].innermost_thread);
            }
        }
        fs.flush();
    }
    return out.str();
}

} // namespace gpusched
