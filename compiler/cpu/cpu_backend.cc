#include "compiler/cpu/cpu_backend.h"

#include <map>
#include <mutex>
#include <string>

#include "compiler/cpu/executable.h"
#include "compiler/cpu/segments.h"
#include "ir/print/printer.h"

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

}  // namespace

std::vector<runtime::Buffer> CpuBackend::run(const Jaxpr& jaxpr,
                                             std::span<const runtime::Buffer> consts,
                                             std::span<const runtime::Buffer> args) {
  Jaxpr open = consts_as_arguments(jaxpr);
  // The exact text is cheap to write; the printed one is the fallback for programs holding a
  // policy or an opaque value (printed by name).
  std::optional<std::string> exact = lower::exact_text(open);
  const std::string key = exact ? std::string("exact:").append(*exact)
                                : std::string("printed:").append(to_string(open));
  std::shared_ptr<const lower::Executable> exe;
  {
    std::lock_guard lock(cache_->mu);
    if (auto it = cache_->programs.find(key); it != cache_->programs.end()) exe = it->second;
  }
  if (!exe) {
    const std::string name = jaxpr.debug ? jaxpr.debug->function_name : "";
    exe = lower::compile(open, name);
    std::lock_guard lock(cache_->mu);
    if (cache_->programs.size() >= kMaxCachedPrograms) cache_->programs.clear();
    cache_->programs.emplace(key, exe);
  }
  std::vector<runtime::Buffer> all(consts.begin(), consts.end());
  all.insert(all.end(), args.begin(), args.end());
  return exe->run(all);
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
