#include "compiler/cpu/cpu_backend.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "compiler/cpu/executable.h"
#include "compiler/cpu/parallel_loops.h"
#include "compiler/cpu/segments.h"
#include "compiler/cpu/target_cpu.h"
#include "ir/exact_text.h"
#include "ir/print/printer.h"
#include "runtime/threefry.h"

namespace cjax {

struct CpuBackend::Cache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const lower::Executable>> programs;
};

CpuBackend::CpuBackend() : cache_(std::make_unique<Cache>()) {}
CpuBackend::~CpuBackend() = default;

namespace {

// The program with its constvars turned into leading invars: compiled code never holds a
// captured value, the caller passes it on every run.
Jaxpr consts_as_arguments(const Jaxpr& j) {
  Jaxpr out = j;
  out.invars = j.constvars;
  out.invars.insert(out.invars.end(), j.invars.begin(), j.invars.end());
  out.constvars.clear();
  out.consts.clear();
  return out;
}

constexpr size_t kMaxCachedPrograms = 512;

// With CJAX_LOG_COMPILES set (not 0), each compile says what it compiled and how long it took.
bool log_compiles() {
  static const bool on = [] {
    const char* v = std::getenv("CJAX_LOG_COMPILES");
    return v && *v && std::string_view(v) != "0";
  }();
  return on;
}

class CompiledProgram final : public PreparedProgram {
 public:
  explicit CompiledProgram(std::shared_ptr<const lower::Executable> exe) : exe_(std::move(exe)) {}
  std::vector<runtime::Buffer> run(std::span<const runtime::Buffer> consts,
                                   std::span<const runtime::Buffer> args) const override {
    std::vector<runtime::Buffer> copies(args.begin(), args.end());  // the caller keeps its own
    return run_consuming(consts, copies);
  }
  std::vector<runtime::Buffer> run_consuming(std::span<const runtime::Buffer> consts,
                                             std::vector<runtime::Buffer>& args) const override {
    std::vector<runtime::Buffer> all;
    all.reserve(consts.size() + args.size());
    all.insert(all.end(), consts.begin(), consts.end());
    for (runtime::Buffer& a : args) all.push_back(std::move(a));
    try {
      return exe_->run_consuming(all);
    } catch (...) {
      // What the executable had not taken yet goes back to the caller.
      for (size_t i = 0; i < args.size() && consts.size() + i < all.size(); ++i)
        args[i] = std::move(all[consts.size() + i]);
      throw;
    }
  }

 private:
  std::shared_ptr<const lower::Executable> exe_;
};

}  // namespace

std::shared_ptr<const lower::Executable> CpuBackend::executable(const Jaxpr& jaxpr) {
  Jaxpr open = consts_as_arguments(jaxpr);
  // The exact text is cheap to write; the printed one is the fallback for programs holding a
  // policy or an opaque value (printed by name).
  std::optional<std::string> exact = exact_text(open);
  // What else changes the code: the target CPU, the parallel loops (read from the environment)
  // and the threefry scheme random_bits and split are compiled for.
  const std::string key =
      fmt::format("{}|{}|{}|", lower::jit_target_cpu(), lower::max_parallel_loops(),
                  runtime::threefry_partitionable() ? "partitionable" : "classic") +
      (exact ? std::string("exact:").append(*exact)
             : std::string("printed:").append(to_string(open)));
  {
    std::lock_guard lock(cache_->mu);
    if (auto it = cache_->programs.find(key); it != cache_->programs.end()) return it->second;
  }
  const std::string name = jaxpr.debug ? jaxpr.debug->function_name : "";
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const lower::Executable> exe = lower::compile(open, name);
  if (log_compiles()) {
    const lower::CompileStats& st = exe->compile_stats();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const std::string what =
        fmt::format("{} ({} eqns, {} inputs)", name.empty() ? "a program" : "'" + name + "'",
                    open.eqns.size(), open.invars.size());
    if (st.from_cache)
      fmt::print(stderr,
                 "cjax: loaded {} from the compilation cache in {:.1f} ms (lower {:.1f}, cache "
                 "{:.1f})\n",
                 what, ms, st.lower_ms, st.cache_ms);
    else
      fmt::print(stderr,
                 "cjax: compiled {} in {:.1f} ms (lower {:.1f}, mlir {:.1f}, llvm {:.1f} of "
                 "which opt {:.1f}, cache {:.1f})\n",
                 what, ms, st.lower_ms, st.optimize_ms, st.jit_ms, st.llvm_opt_ms, st.cache_ms);
  }
  std::lock_guard lock(cache_->mu);
  if (cache_->programs.size() >= kMaxCachedPrograms) cache_->programs.clear();
  cache_->programs.emplace(key, exe);
  return exe;
}

std::vector<runtime::Buffer> CpuBackend::run(const Jaxpr& jaxpr,
                                             std::span<const runtime::Buffer> consts,
                                             std::span<const runtime::Buffer> args) {
  return CompiledProgram(executable(jaxpr)).run(consts, args);
}

std::shared_ptr<const PreparedProgram> CpuBackend::prepare(const Jaxpr& jaxpr) {
  return std::make_shared<CompiledProgram>(executable(jaxpr));
}

size_t CpuBackend::compiled_programs() const {
  std::lock_guard lock(cache_->mu);
  return cache_->programs.size();
}

std::shared_ptr<Backend> install_cpu_backend() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!current_backend()) set_backend(std::make_shared<CpuBackend>());
  });
  return current_backend();
}

}  // namespace cjax
