#include "compiler/cpu/executable.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/Mangling.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <mlir/ExecutionEngine/ExecutionEngine.h>
#include <mlir/Target/LLVMIR/Export.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "cjax/memory_check.h"
#include "compiler/cpu/async_tasks.h"
#include "compiler/cpu/lowering.h"
#include "compiler/cpu/mlir_pipeline.h"
#include "compiler/cpu/object_cache.h"
#include "compiler/cpu/object_loader.h"
#include "compiler/cpu/parallel_loops.h"
#include "compiler/cpu/perf_map.h"
#include "compiler/cpu/program_plan.h"
#include "compiler/cpu/runtime_symbols.h"
#include "compiler/cpu/segments.h"
#include "compiler/cpu/target_cpu.h"
#include "ir/errors.h"
#include "ir/exact_text.h"
#include "ir/primitive.h"
#include "passes/pipeline.h"
#include "runtime/threefry.h"

namespace cjax::lower {

struct Executable::Impl {
  ProgramPlan plan;
  std::vector<const RuntimeCall*> call_table;     // what the compiled code indexes: plan.calls
  std::unique_ptr<mlir::ExecutionEngine> engine;  // freshly compiled code
  std::unique_ptr<llvm::orc::LLJIT> linked;       // or code from the persistent cache
  std::vector<runtime::Buffer> consts;
  std::vector<ShapedArray> in_avals, out_avals;
  CompileStats stats;
  std::string where;
  MemoryNeed memory;  // the program's modelled peak, checked against free memory at each run

  // A worker of the async runtime may still be returning through this engine's code after the
  // last call woke its caller (async_tasks.h).
  ~Impl() {
    if (engine || linked) wait_for_async_tasks();
  }
};

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// A memref descriptor as the C interface lays it out: allocated and aligned pointers, offset,
// sizes, strides (row-major, contiguous).
std::vector<int64_t> descriptor(const runtime::Buffer& b) {
  const Shape& shape = b.aval().shape;
  const auto ptr = static_cast<int64_t>(reinterpret_cast<intptr_t>(b.data()));
  std::vector<int64_t> d = {ptr, ptr, 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i) strides[i - 2] = strides[i - 1] * shape[i - 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

// Threads pay off only for loops of many elements (written, or read by a reduction); a program
// without any compiles faster (no async runtime code) and runs without task overhead.
bool worth_parallel_loops(const Jaxpr& j) {
  if (max_parallel_loops() == 0) return false;
  for (const Eqn& e : j.eqns) {
    for (const Var& v : e.outputs)
      if (v.aval().size() >= kMinParallelElements) return true;
    if (e.prim->name.rfind("reduce_", 0) == 0)
      for (const Atom& a : e.inputs)
        if (a.aval().size() >= kMinParallelElements) return true;
  }
  return false;
}

// LLVM's -O3 pipeline as MLIR's makeOptimizingTransformer runs it, less loop unrolling: that
// fully unrolled every short loop (a tanh over 8x64 became 32 copies of the polynomial) and
// tripled the JIT time of small programs, while the long loops run as fast without it (the
// vectorizer interleaves them anyway): a 1000-layer chain's JIT went from ~290 to ~75 ms, a
// GELU over 64x8192 kept its 0.29 ms. Adds the time it takes to `*ms`.
std::function<llvm::Error(llvm::Module*)> optimizing_transformer(llvm::TargetMachine* machine,
                                                                 double* ms) {
  return [machine, ms](llvm::Module* m) -> llvm::Error {
    const auto t0 = Clock::now();
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = false;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder builder(machine, tuning);
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*m, modules);
    *ms += ms_since(t0);
    return llvm::Error::success();
  };
}

std::string program_name(const std::string& where) {
  return where.empty() ? "the program" : where;
}

// Calls `f` on `inputs`; returns its outputs (fresh buffers, or the inputs it forwards).
std::vector<runtime::Buffer> call(const CompiledFunction& f,
                                  const std::vector<const runtime::Buffer*>& inputs,
                                  const std::vector<const RuntimeCall*>& call_table) {
  std::vector<runtime::Buffer> outs;
  outs.reserve(f.out_avals.size());
  for (size_t i = 0; i < f.out_avals.size(); ++i)
    outs.push_back(f.forwarded[i] >= 0 ? *inputs[static_cast<size_t>(f.forwarded[i])]
                                       : runtime::Buffer::allocate(f.out_avals[i]));
  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(inputs.size() + outs.size());
  for (const runtime::Buffer* in : inputs) descriptors.push_back(descriptor(*in));
  for (size_t i = 0; i < outs.size(); ++i)
    if (f.forwarded[i] < 0) descriptors.push_back(descriptor(outs[i]));
  // The packed entry takes one pointer per argument, each to the argument's value: here a
  // pointer to its descriptor.
  auto table = static_cast<int64_t>(reinterpret_cast<intptr_t>(call_table.data()));
  std::vector<void*> desc_ptrs, packed = {&table};
  desc_ptrs.reserve(descriptors.size());
  for (auto& d : descriptors) desc_ptrs.push_back(d.data());
  for (void*& p : desc_ptrs) packed.push_back(&p);
  take_runtime_error();
  run_compiled(f.entry, packed.data());
  if (std::exception_ptr e = take_runtime_error()) std::rethrow_exception(e);
  return outs;
}

// The program as one function `main`, called once.
void plan_whole(Executable::Impl& impl, mlir::ModuleOp module, const Jaxpr& jaxpr, DotPath dot_path,
                OutlinedCalls* outlined) {
  ProgramPlan& plan = impl.plan;
  lower_function(module, jaxpr, plan.calls, impl.where, "main", dot_path, false, outlined);
  plan.functions.push_back({"main", nullptr, jaxpr.out_avals(), forwarded_inputs(jaxpr)});
  Step step;
  for (size_t k = 0; k < impl.in_avals.size(); ++k) step.inputs.push_back(k);
  for (size_t i = 0; i < jaxpr.outvars.size(); ++i)
    step.outputs.push_back(impl.in_avals.size() + i);
  plan.output_slots = step.outputs;
  plan.num_slots = impl.in_avals.size() + jaxpr.outvars.size();
  plan.steps.push_back(std::move(step));
}

// A loop: its segment's inputs are held while it runs.
bool runs_loop(const Eqn& e) {
  return e.prim->name == "scan" || e.prim->name == "while";
}

// A segment starts at every dot_general (a layer's product and the elementwise work after it
// are one segment, whether the product is a loop nest or a call into OpenBLAS) and at every
// eqn the back end runs through a runtime call.
bool starts_segment(const Eqn& next) {
  return next.prim->name == "dot_general" || !find_lower_rule(*next.prim);
}

// The segments of `jaxpr` (see segments.h) and their keys; a program is compiled as segments when
// it is long or when some of them repeat (a network's equal layers: each compiles once).
struct Segmentation {
  Jaxpr jaxpr;  // calls inlined, transposed dots folded
  std::vector<Segment> segments;
  std::vector<std::string> keys;
  size_t distinct = 0;
};

// `prepared` is the program after prepare_for_lowering (calls inlined, transposed dots folded),
// so that no segment boundary separates a dot from the transpose folded into it; values passed
// through a barrier or a name are read from where they were computed (a segment returning them
// would copy them).
// With `loops_apart` (a program compiled as segments), a loop is also a segment of its own: a
// segment's inputs live until it returns, so a value read only before the loop (the final norm's
// input, before the backward pass's scan over the layers) would otherwise be held through every
// iteration.
Segmentation segment(Jaxpr prepared, const CompileOptions& options, bool loops_apart) {
  Segmentation out;
  out.jaxpr = std::move(prepared);
  auto cuts_between = [loops_apart](const Eqn& previous, const Eqn& next) {
    return starts_segment(next) || (loops_apart && (runs_loop(previous) || runs_loop(next)));
  };
  out.segments = split_into_segments(out.jaxpr, options.max_segment_eqns, cuts_between);
  std::unordered_set<std::string> seen;
  for (size_t k = 0; k < out.segments.size(); ++k) {
    out.keys.push_back(segment_key(out.jaxpr, out.segments[k], k));
    seen.insert(out.keys.back());
  }
  out.distinct = seen.size();
  return out;
}

// A segment's buffer handover (lower_function): the inputs it may write over and, per output,
// the input whose buffer returns it (or -1).
struct Handover {
  std::vector<bool> writable;
  std::vector<int> tied;
};

// The operand of a loop eqn that starts each of its carries (scan: after its consts; while:
// after its condition's and body's consts), and how many carries lead its outputs.
std::pair<size_t, size_t> loop_carries(const Eqn& loop) {
  if (loop.prim->name == "scan")
    return {static_cast<size_t>(loop.params.get_int("num_consts")),
            static_cast<size_t>(loop.params.get_int("num_carry"))};
  const auto first = static_cast<size_t>(loop.params.get_int("cond_nconsts") +
                                         loop.params.get_int("body_nconsts"));
  return {first, loop.outputs.size()};
}

// Only a loop's segment takes over its `dying` inputs. A carry's final value is returned in the
// buffer of the input that started it when that one is dying: the loop may have updated the
// carry in that very buffer (carry_in_place), and returning another value there would overwrite
// it. Each other output is returned in a dying input of its type that starts no carry.
Handover loop_handover(const Jaxpr& program, const std::vector<int>& forwarded,
                       const std::vector<bool>& dying) {
  Handover h;
  h.tied.assign(forwarded.size(), -1);
  if (program.eqns.size() != 1 || !runs_loop(program.eqns[0])) return h;
  h.writable = dying;
  const Eqn& loop = program.eqns[0];
  auto input_index = [&](const Atom& a) -> int {
    if (!a.is_var()) return -1;
    for (size_t j = 0; j < program.invars.size(); ++j)
      if (program.invars[j].id() == a.var().id()) return static_cast<int>(j);
    return -1;
  };
  const auto [first_init, num_carry] = loop_carries(loop);
  std::vector<bool> untied = dying;                       // writable inputs not yet tied
  std::vector<int> start_of(program.outvars.size(), -1);  // the input starting output i's carry
  for (size_t i = 0; i < program.outvars.size(); ++i) {
    if (!program.outvars[i].is_var()) continue;
    for (size_t k = 0; k < num_carry; ++k)
      if (loop.outputs[k].id() == program.outvars[i].var().id())
        start_of[i] = input_index(loop.inputs[first_init + k]);
  }
  for (size_t k = 0; k < num_carry; ++k)  // inputs that start a carry are for that carry only
    if (const int j = input_index(loop.inputs[first_init + k]); j >= 0) untied[size_t(j)] = false;
  for (size_t i = 0; i < h.tied.size(); ++i) {
    if (forwarded[i] >= 0 || !program.outvars[i].is_var()) continue;
    if (const int j = start_of[i]; j >= 0 && dying[size_t(j)]) {
      // An input that starts two carries returns the first of them only.
      if (std::find(h.tied.begin(), h.tied.end(), j) == h.tied.end()) h.tied[i] = j;
      continue;
    }
    for (size_t j = 0; j < untied.size(); ++j)
      if (untied[j] && program.invars[j].aval().same_type(program.outvars[i].aval())) {
        h.tied[i] = static_cast<int>(j);
        untied[j] = false;
        break;
      }
  }
  return h;
}

// The segments compiled once per key and called in order. A loop's segment is handed the inputs
// it is the last to read writable (lower_function), when an earlier segment allocated their
// buffers for them alone (not forwarded, not outputs of the program): the loop's carry starts in
// such a buffer instead of a copy of it, and an output of its type is returned in it (`tied`),
// so that no output buffer is held while the loop runs. (Other segments are left as they are:
// they write their outputs straight into fresh buffers, which a tie would turn into a copy at
// the end, and a writable mask would split equal segments into several functions.)
void plan_segments(Executable::Impl& impl, mlir::ModuleOp module, const Segmentation& cut,
                   DotPath dot_path, OutlinedCalls* outlined) {
  const Jaxpr& jaxpr = cut.jaxpr;
  ProgramPlan& plan = impl.plan;
  std::unordered_map<const void*, size_t> slot_of;
  size_t next_slot = 0;
  for (const Var& v : jaxpr.constvars) slot_of[v.id()] = next_slot++;
  for (const Var& v : jaxpr.invars) slot_of[v.id()] = next_slot++;
  const size_t num_inputs = next_slot;
  // Each distinct segment's program and forwarded outputs, then the steps' slots.
  std::unordered_map<std::string_view, std::pair<Jaxpr, std::vector<int>>> program_of;
  std::unordered_map<size_t, size_t> last_reader;  // slot -> step
  std::unordered_set<size_t> shared;               // slots whose buffer another slot holds too
  std::vector<size_t> literal_slots;
  for (size_t k = 0; k < cut.segments.size(); ++k) {
    const Segment& s = cut.segments[k];
    auto it = program_of.find(cut.keys[k]);
    if (it == program_of.end()) {
      Jaxpr program = segment_program(jaxpr, s);
      std::vector<int> forwarded = forwarded_inputs(program);
      it = program_of.emplace(cut.keys[k], std::pair{std::move(program), std::move(forwarded)})
               .first;
    }
    Step step;
    for (const Var& v : s.inputs) {
      step.inputs.push_back(slot_of.at(v.id()));
      last_reader[step.inputs.back()] = k;
    }
    for (const Var& v : s.outputs) step.outputs.push_back(slot_of[v.id()] = next_slot++);
    for (size_t i = 0; i < s.literals.size(); ++i) {
      step.outputs.push_back(next_slot++);
      literal_slots.push_back(step.outputs.back());
    }
    const std::vector<int>& forwarded = it->second.second;
    for (size_t i = 0; i < forwarded.size(); ++i)
      if (forwarded[i] >= 0) {
        shared.insert(step.inputs[static_cast<size_t>(forwarded[i])]);
        shared.insert(step.outputs[i]);
      }
    plan.steps.push_back(std::move(step));
  }
  plan.num_slots = next_slot;
  size_t next_literal = 0;
  for (const Atom& a : jaxpr.outvars)
    plan.output_slots.push_back(a.is_var() ? slot_of.at(a.var().id())
                                           : literal_slots[next_literal++]);
  // Free every slot after its last reader, except the outputs.
  std::unordered_set<size_t> kept(plan.output_slots.begin(), plan.output_slots.end());
  for (const auto& [slot, step] : last_reader)
    if (!kept.count(slot)) plan.steps[step].release.push_back(slot);
  // One function per segment key and writable inputs.
  std::unordered_map<std::string, size_t> function_of;
  for (size_t k = 0; k < cut.segments.size(); ++k) {
    Step& step = plan.steps[k];
    const auto& [program, forwarded] = program_of.at(cut.keys[k]);
    std::vector<bool> dying;  // inputs whose buffers the segment may take over
    for (size_t slot : step.inputs)
      dying.push_back(slot >= num_inputs && last_reader.at(slot) == k && !kept.count(slot) &&
                      !shared.count(slot));
    const auto [writable, tied] = loop_handover(program, forwarded, dying);
    // The key's program text fixes the ties once the writable inputs are known.
    std::string key = cut.keys[k];
    if (!writable.empty()) key += "|writable";
    for (bool w : writable) key += w ? '1' : '0';
    auto [it, added] = function_of.emplace(std::move(key), plan.functions.size());
    if (added) {
      std::string name = fmt::format("segment{}", plan.functions.size());
      lower_function(module, program, plan.calls, impl.where, name, dot_path, false, outlined,
                     writable, tied);
      // The executable hands a tied input's buffer back as the output, as a forwarded one.
      std::vector<int> handed_back = forwarded;
      for (size_t i = 0; i < tied.size(); ++i)
        if (tied[i] >= 0) handed_back[i] = tied[i];
      plan.functions.push_back({std::move(name), nullptr, program.out_avals(), handed_back});
    }
    step.function = it->second;
  }
}

// The module of `jaxpr`'s functions, and in `impl` the plan that calls them; `prepared` is
// prepare_for_lowering(jaxpr).
mlir::OwningOpRef<mlir::ModuleOp> lower_planned(mlir::MLIRContext& ctx, Executable::Impl& impl,
                                                const Jaxpr& jaxpr, Jaxpr prepared,
                                                const CompileOptions& options) {
  mlir::OwningOpRef<mlir::ModuleOp> module = new_module(ctx);
  // Whether to cut is decided on the segments without loops apart (which, equal loops being
  // equal segments, would make a short program of several equal scans "repeat").
  Segmentation cut = segment(prepared, options, /*loops_apart=*/false);
  const bool repeats = cut.distinct < cut.segments.size();
  const bool segmented = repeats || count_eqns(jaxpr) > options.max_whole_eqns;
  if (segmented) cut = segment(std::move(prepared), options, /*loops_apart=*/true);
  std::optional<OutlinedCalls> outlined;
  if (options.outline_repeated_calls) outlined.emplace(cut.jaxpr);
  OutlinedCalls* calls = outlined ? &*outlined : nullptr;
  if (segmented)
    plan_segments(impl, *module, cut, options.dot_path, calls);
  else
    plan_whole(impl, *module, cut.jaxpr, options.dot_path, calls);
  return module;
}

}  // namespace

namespace {

std::string module_text(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

// What the code generator was set up for, as part of the persistent cache's key: the same module
// compiles to other code for another CPU, or with the async runtime's parallel loops.
std::string target_description(const llvm::TargetMachine& machine, bool parallel) {
  return fmt::format("{}|{}|{}|parallel={} loops={} workers={}", machine.getTargetTriple().str(),
                     machine.getTargetCPU().str(), machine.getTargetFeatureString().str(),
                     parallel && !async_runtime_symbols().empty(), max_parallel_loops(),
                     parallel_workers());
}

// Links cached object code into `impl` and finds its functions; false (and `impl` without code)
// when the object does not link, so the caller compiles afresh.
bool link_cached(Executable::Impl& impl, const std::string& object) {
  try {
    impl.linked = link_object(object, impl.where);
    for (CompiledFunction& f : impl.plan.functions)
      f.entry = packed_entry(*impl.linked, f.name, impl.where);
    return true;
  } catch (const Error&) {
    impl.linked.reset();
    for (CompiledFunction& f : impl.plan.functions) f.entry = nullptr;
    return false;
  }
}

// What the persistent cache keys a program by before lowering it: the exact text of the program
// as the lowering reads it (`prepared`; its consts are arguments of the compiled code, and
// policies and custom rules, which the code does not depend on, are placeholders) and what else
// changes the code; nullopt when the program holds values no text pins down (an opaque
// parameter, a nested jaxpr's consts), whose key is then the lowered module.
std::optional<std::string> program_key_text(const Jaxpr& prepared, const CompileOptions& options) {
  ExactTextWriter w = ExactTextWriter::for_compiled_code();
  w.jaxpr(prepared, /*consts_are_inputs=*/true);
  if (!w.exact()) return std::nullopt;
  return fmt::format(
      "jaxpr max_whole_eqns={} max_segment_eqns={} dot_path={} outline={} threefry={}\n{}",
      options.max_whole_eqns, options.max_segment_eqns, static_cast<int>(options.dot_path),
      options.outline_repeated_calls, runtime::threefry_partitionable(), w.take());
}

// The program stored under `key`, linked into `impl`: its plan too when `with_plan` (a key made
// before lowering), else only its code (`impl` holds the lowering's plan). False when there is
// no entry; an entry that does not read or link is removed, so that the compile replaces it.
bool load_cached(Executable::Impl& impl, const std::filesystem::path& dir, const std::string& key,
                 bool with_plan) {
  std::optional<std::string> payload = load_cached_object(dir, key);
  if (!payload) return false;
  bool linked = false;
  if (auto parts = split_cache_payload(*payload)) {
    try {
      if (with_plan)
        impl.plan = read_plan(parts->plan, impl.in_avals.size(), impl.out_avals.size());
      linked = link_cached(impl, std::string(parts->object));
    } catch (const Error&) {
      linked = false;
    }
  }
  if (!linked) {
    if (with_plan) impl.plan = ProgramPlan();
    std::error_code ec;
    std::filesystem::remove(cached_object_path(dir, key), ec);
  }
  return linked;
}

// The engine's object code and `impl`'s plan, stored in the persistent cache under `key`.
void store_program(const Executable::Impl& impl, mlir::ExecutionEngine& engine,
                   const std::filesystem::path& dir, const std::string& key) {
  const std::filesystem::path dump = temporary_path(dir, key);
  engine.dumpToObjectFile(dump.string());
  std::ostringstream object;
  {
    std::ifstream in(dump, std::ios::binary);
    if (in) object << in.rdbuf();
  }
  std::error_code ec;
  std::filesystem::remove(dump, ec);
  if (!object.str().empty())
    store_cached_object(dir, key, cache_payload(write_plan(impl.plan), object.str()));
}

// The figures of a complete plan (lowered or read from the cache), and the call table its code
// indexes.
void finish_plan(Executable::Impl& impl) {
  impl.stats.functions = impl.plan.functions.size();
  impl.stats.steps = impl.plan.steps.size();
  for (const auto& c : impl.plan.calls) {
    impl.call_table.push_back(c.get());
    impl.stats.runtime_calls.push_back(c->describe());
  }
}

}  // namespace

namespace {

std::shared_ptr<const Executable> compile_with(const Jaxpr& jaxpr, const std::string& where,
                                               const CompileOptions& options) {
  auto impl = std::make_shared<Executable::Impl>();
  impl->where = where;
  impl->memory = memory_need(jaxpr);
  impl->in_avals = jaxpr.in_avals();
  impl->out_avals = jaxpr.out_avals();
  if (jaxpr.consts.size() != jaxpr.constvars.size())
    throw UnsupportedError(
        fmt::format("lower: {} has constvars without values", program_name(where)));
  for (const ConstValue& c : jaxpr.consts) impl->consts.push_back(runtime::Buffer::from_const(c));

  const bool parallel = worth_parallel_loops(jaxpr);
  // The optimizer and the code generator get the same CPU (target_cpu.h): without one, LLVM's
  // cost model assumes no vector registers and no loop is vectorized (a GELU over 64x8192 took
  // 1.4 ms scalar against 0.2 ms in AVX-512).
  const std::unique_ptr<llvm::TargetMachine> machine = jit_target_machine(where);

  // The persistent cache, keyed by the program's exact text: a hit skips the lowering, MLIR's
  // passes and LLVM. (A folder this process cannot write to is read, never written.)
  // (A perf map names fresh code only: with one asked for, every program is compiled afresh.)
  const std::optional<std::filesystem::path> cache_dir =
      perf_map_requested() ? std::nullopt : object_cache_dir();
  const bool cache_writable = cache_dir && object_cache_writable(*cache_dir);
  auto t0 = Clock::now();
  // The lowering's first step, and the cache's key.
  Jaxpr prepared =
      prepare_for_lowering(jaxpr, {.keep_repeated_calls = options.outline_repeated_calls});
  impl->stats.lower_ms = ms_since(t0);
  const std::optional<std::string> key_text =
      cache_dir ? program_key_text(prepared, options) : std::nullopt;
  const std::string target = target_description(*machine, parallel);
  std::string key;
  auto try_cache = [&](bool with_plan) {
    const auto t0 = Clock::now();
    impl->stats.from_cache = load_cached(*impl, *cache_dir, key, with_plan);
    impl->stats.cache_ms += ms_since(t0);
    if (impl->stats.from_cache) finish_plan(*impl);
    return impl->stats.from_cache;
  };
  impl->stats.keyed_before_lowering = key_text.has_value();
  if (key_text) {
    key = object_cache_key(*key_text, target);
    if (try_cache(/*with_plan=*/true)) return std::make_shared<Executable>(std::move(impl));
  }

  auto ctx = make_context();
  DiagnosticCollector diags(*ctx);
  t0 = Clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      lower_planned(*ctx, *impl, jaxpr, std::move(prepared), options);
  impl->stats.lower_ms += ms_since(t0);
  // Without an exact text, the module before MLIR's passes is the key.
  if (cache_dir && !key_text) {
    key = object_cache_key("module\n" + module_text(*module), target);
    if (try_cache(/*with_plan=*/false)) return std::make_shared<Executable>(std::move(impl));
  }
  finish_plan(*impl);

  t0 = Clock::now();
  run_pipeline(*module, diags, parallel);
  impl->stats.optimize_ms = ms_since(t0);

  t0 = Clock::now();
  mlir::ExecutionEngineOptions engine_options;
  // engine_options.transformer is a function_ref: what it refers to must outlive create().
  std::function<llvm::Error(llvm::Module*)> optimize =
      optimizing_transformer(machine.get(), &impl->stats.llvm_opt_ms);
  engine_options.transformer = optimize;
  engine_options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  engine_options.enableObjectDump = cache_writable;
  auto engine = mlir::ExecutionEngine::create(*module, engine_options, jit_target_machine(where));
  if (!engine)
    throw Error(fmt::format("lower: the JIT could not compile {}: {} {}", program_name(where),
                            llvm::toString(engine.takeError()), diags.text()));
  impl->engine = std::move(*engine);
  impl->engine->registerSymbols(runtime_symbol_map);
  if (perf_map_requested()) write_perf_map(*module, *impl->engine, program_name(where));
  for (CompiledFunction& f : impl->plan.functions) {
    auto entry = impl->engine->lookupPacked("_mlir_ciface_" + f.name);
    if (!entry)
      throw Error(fmt::format("lower: the JIT could not link {}: {}", program_name(where),
                              llvm::toString(entry.takeError())));
    f.entry = *entry;
  }
  impl->stats.jit_ms = ms_since(t0);
  if (cache_writable) {
    t0 = Clock::now();
    store_program(*impl, *impl->engine, *cache_dir, key);
    impl->stats.cache_ms += ms_since(t0);
  }
  return std::make_shared<Executable>(std::move(impl));
}

}  // namespace

std::shared_ptr<const Executable> compile(const Jaxpr& jaxpr, const std::string& where,
                                          const CompileOptions& options) {
  if (!options.outline_repeated_calls) return compile_with(jaxpr, where, options);
  try {
    return compile_with(jaxpr, where, options);
  } catch (const UnsupportedError&) {
    throw;  // the same without functions
  } catch (const Error&) {
    // A function boundary the pipeline could not cross (a buffer layout bufferization cannot
    // pass to a function, say): every call compiled in place, as without repeated calls.
    CompileOptions in_place = options;
    in_place.outline_repeated_calls = false;
    return compile_with(jaxpr, where, in_place);
  }
}

std::vector<runtime::Buffer> Executable::run(std::span<const runtime::Buffer> args,
                                             RunStats* stats) const {
  std::vector<runtime::Buffer> copies(args.begin(), args.end());
  return run_consuming(copies, stats);
}

std::vector<runtime::Buffer> Executable::run_consuming(std::vector<runtime::Buffer>& args,
                                                       RunStats* stats) const {
  const Impl& m = *impl_;
  const size_t nconst = m.consts.size();
  if (args.size() + nconst != m.in_avals.size())
    throw TypeError(fmt::format("compiled {}: expected {} arguments, got {}", program_name(m.where),
                                m.in_avals.size() - nconst, args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i] || args[i].aval().shape != m.in_avals[nconst + i].shape ||
        args[i].aval().dtype != m.in_avals[nconst + i].dtype)
      throw TypeError(fmt::format(
          "compiled {}: argument {} has type {}, expected {}", program_name(m.where), i,
          args[i] ? args[i].aval().str_short() : "<empty>", m.in_avals[nconst + i].str_short()));
  // Reading the system's figures costs tens of microseconds: small programs skip it.
  constexpr size_t kCheckedPeakBytes = size_t{64} << 20;
  if (m.memory.peak_bytes >= kCheckedPeakBytes) check_memory_need(m.memory);
  if (stats) runtime::reset_peak_bytes();
  // The inputs' storage, to tell the outputs this call allocated from the inputs it hands back.
  std::unordered_set<const void*> input_data;
  if (stats) {
    for (const runtime::Buffer& c : m.consts) input_data.insert(c.data());
    for (const runtime::Buffer& a : args) input_data.insert(a.data());
  }
  const ProgramPlan& plan = m.plan;
  std::vector<runtime::Buffer> slots(plan.num_slots);
  for (size_t k = 0; k < nconst; ++k) slots[k] = m.consts[k];
  for (size_t i = 0; i < args.size(); ++i) slots[nconst + i] = std::move(args[i]);
  std::vector<const runtime::Buffer*> inputs;
  for (const Step& step : plan.steps) {
    inputs.clear();
    for (size_t slot : step.inputs) inputs.push_back(&slots[slot]);
    std::vector<runtime::Buffer> outs = call(plan.functions[step.function], inputs, m.call_table);
    for (size_t i = 0; i < outs.size(); ++i) slots[step.outputs[i]] = std::move(outs[i]);
    for (size_t slot : step.release) slots[slot] = runtime::Buffer();
  }
  std::vector<runtime::Buffer> outs;
  outs.reserve(plan.output_slots.size());
  for (size_t slot : plan.output_slots) outs.push_back(slots[slot]);
  if (stats) {
    // Bytes of the buffers this call allocated for its outputs, each once (not the arguments
    // it hands back).
    stats->output_bytes = 0;
    for (const runtime::Buffer& b : outs)
      if (input_data.insert(b.data()).second) stats->output_bytes += b.nbytes();
    stats->peak_bytes = runtime::memory_stats().peak_bytes;
  }
  return outs;
}

const std::vector<ShapedArray>& Executable::in_avals() const {
  return impl_->in_avals;
}
const std::vector<ShapedArray>& Executable::out_avals() const {
  return impl_->out_avals;
}
const CompileStats& Executable::compile_stats() const {
  return impl_->stats;
}

std::string lower_to_text(const Jaxpr& jaxpr, Stage stage, const std::string& where,
                          const CompileOptions& options) {
  auto ctx = make_context();
  DiagnosticCollector diags(*ctx);
  Executable::Impl plan;
  plan.where = where;
  plan.in_avals = jaxpr.in_avals();
  auto module = lower_planned(
      *ctx, plan, jaxpr,
      prepare_for_lowering(jaxpr, {.keep_repeated_calls = options.outline_repeated_calls}),
      options);
  std::string text;
  llvm::raw_string_ostream os(text);
  if (stage == Stage::mlir) {
    verify_module(*module, diags);
    module->print(os);
    return os.str();
  }
  run_pipeline(*module, diags, worth_parallel_loops(jaxpr));
  if (stage == Stage::lowered) {
    module->print(os);
    return os.str();
  }
  llvm::LLVMContext llvm_ctx;
  auto llvm_module = mlir::translateModuleToLLVMIR(*module, llvm_ctx);
  if (!llvm_module)
    throw Error(fmt::format("lower: translation to LLVM IR failed: {}", diags.text()));
  llvm_module->print(os, nullptr);
  return os.str();
}

}  // namespace cjax::lower
