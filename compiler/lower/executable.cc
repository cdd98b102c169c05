#include "compiler/lower/executable.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/Mangling.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/ExecutionEngine/ExecutionEngine.h>
#include <mlir/ExecutionEngine/OptUtils.h>
#include <mlir/Target/LLVMIR/Export.h>

#include <chrono>
#include <cstdlib>
#include <functional>

#include "compiler/lower/lowering.h"
#include "compiler/lower/pipeline.h"
#include "compiler/lower/runtime_symbols.h"
#include "ir/errors.h"

namespace cjax::lower {

struct Executable::Impl {
  std::vector<std::unique_ptr<RuntimeCall>> calls;
  std::vector<const RuntimeCall*> call_table;  // what the compiled code indexes
  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*entry)(void**) = nullptr;
  std::vector<runtime::Buffer> consts;
  std::vector<ShapedArray> in_avals, out_avals;
  std::vector<int> forwarded;  // see forwarded_inputs
  CompileStats stats;
  std::string where;
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

// Threads pay off only for loops of many elements; a program without any compiles faster (no
// async runtime code) and runs without task overhead.
bool worth_parallel_loops(const Jaxpr& j) {
  constexpr int64_t kMinElements = int64_t{1} << 16;
  for (const Eqn& e : j.eqns)
    for (const Var& v : e.outputs)
      if (v.aval().size() >= kMinElements) return true;
  return false;
}

std::string program_name(const std::string& where) {
  return where.empty() ? "the program" : where;
}

}  // namespace

std::shared_ptr<const Executable> compile(const Jaxpr& jaxpr, const std::string& where) {
  auto impl = std::make_shared<Executable::Impl>();
  impl->where = where;
  impl->in_avals = jaxpr.in_avals();
  impl->out_avals = jaxpr.out_avals();
  impl->forwarded = forwarded_inputs(jaxpr);
  if (jaxpr.consts.size() != jaxpr.constvars.size())
    throw UnsupportedError(
        fmt::format("lower: {} has constvars without values", program_name(where)));
  for (const ConstValue& c : jaxpr.consts) impl->consts.push_back(runtime::Buffer::from_const(c));

  auto ctx = make_context();
  DiagnosticCollector diags(*ctx);
  auto t0 = Clock::now();
  auto module = lower_to_module(*ctx, jaxpr, impl->calls, where);
  impl->stats.lower_ms = ms_since(t0);
  for (const auto& c : impl->calls) {
    impl->call_table.push_back(c.get());
    impl->stats.runtime_calls.push_back(c->describe());
  }

  t0 = Clock::now();
  run_pipeline(*module, diags, worth_parallel_loops(jaxpr));
  impl->stats.optimize_ms = ms_since(t0);

  t0 = Clock::now();
  mlir::ExecutionEngineOptions options;
  // options.transformer is a function_ref: the function it refers to must outlive create().
  std::function<llvm::Error(llvm::Module*)> optimize =
      mlir::makeOptimizingTransformer(3, 0, nullptr);
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.enablePerfNotificationListener = std::getenv("CJAX_PERF_MAP") != nullptr;
  auto engine = mlir::ExecutionEngine::create(*module, options);
  if (!engine)
    throw Error(fmt::format("lower: the JIT could not compile {}: {} {}", program_name(where),
                            llvm::toString(engine.takeError()), diags.text()));
  impl->engine = std::move(*engine);
  impl->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (auto [name, address] : runtime_symbols())
      map[interner(llvm::StringRef(name.data(), name.size()))] = {
          llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
    for (const auto& [name, address] : async_runtime_symbols())
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    return map;
  });
  auto entry = impl->engine->lookupPacked("_mlir_ciface_main");
  if (!entry)
    throw Error(fmt::format("lower: the JIT could not link {}: {}", program_name(where),
                            llvm::toString(entry.takeError())));
  impl->entry = *entry;
  impl->stats.jit_ms = ms_since(t0);
  return std::make_shared<Executable>(std::move(impl));
}

std::vector<runtime::Buffer> Executable::run(std::span<const runtime::Buffer> args,
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
  if (stats) runtime::reset_peak_bytes();
  auto input = [&](size_t k) -> const runtime::Buffer& {
    return k < nconst ? m.consts[k] : args[k - nconst];
  };
  std::vector<runtime::Buffer> outs;
  for (size_t i = 0; i < m.out_avals.size(); ++i)
    outs.push_back(m.forwarded[i] >= 0 ? input(static_cast<size_t>(m.forwarded[i]))
                                       : runtime::Buffer::allocate(m.out_avals[i]));

  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(m.in_avals.size() + outs.size());
  for (size_t k = 0; k < m.in_avals.size(); ++k) descriptors.push_back(descriptor(input(k)));
  for (size_t i = 0; i < outs.size(); ++i)
    if (m.forwarded[i] < 0) descriptors.push_back(descriptor(outs[i]));
  // The packed entry takes one pointer per argument, each to the argument's value: here a
  // pointer to its descriptor.
  auto table = static_cast<int64_t>(reinterpret_cast<intptr_t>(m.call_table.data()));
  std::vector<void*> desc_ptrs, packed = {&table};
  for (auto& d : descriptors) desc_ptrs.push_back(d.data());
  for (void*& p : desc_ptrs) packed.push_back(&p);
  take_runtime_error();
  m.entry(packed.data());
  if (std::exception_ptr e = take_runtime_error()) std::rethrow_exception(e);
  if (stats) {
    stats->output_bytes = 0;
    for (size_t i = 0; i < outs.size(); ++i)
      if (m.forwarded[i] < 0) stats->output_bytes += outs[i].nbytes();
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

std::string lower_to_text(const Jaxpr& jaxpr, Stage stage, const std::string& where) {
  auto ctx = make_context();
  DiagnosticCollector diags(*ctx);
  std::vector<std::unique_ptr<RuntimeCall>> calls;
  auto module = lower_to_module(*ctx, jaxpr, calls, where);
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
