// The MLIR CPU back end as cjax's evaluator: including this header (the umbrella cjax/cjax.h
// does) installs it, so that jit, grad, value_and_grad, vjp, ... on concrete arrays run compiled
// code. Each distinct program is compiled once and cached. No MLIR header is included here.
#pragma once

#include <cstddef>
#include <memory>

#include "cjax/backend.h"

namespace cjax {

namespace lower {
class Executable;
}  // namespace lower

// The back end: compiles each program it is asked to run (keyed by its exact text, with its
// consts passed as arguments so captured values never go stale) and keeps the executable.
class CpuBackend final : public Backend {
 public:
  std::vector<runtime::Buffer> run(const Jaxpr& jaxpr, std::span<const runtime::Buffer> consts,
                                   std::span<const runtime::Buffer> args) override;
  // Compiled now (or found in the cache); runs call the executable directly.
  std::shared_ptr<const PreparedProgram> prepare(const Jaxpr& jaxpr) override;
  size_t compiled_programs() const;  // cache entries, for tests and `cjax bench`

  struct Cache;
  CpuBackend();
  ~CpuBackend() override;

 private:
  std::shared_ptr<const lower::Executable> executable(const Jaxpr& jaxpr);
  std::unique_ptr<Cache> cache_;
};

// Installs a CpuBackend unless a back end is installed already; returns the installed one.
std::shared_ptr<Backend> install_cpu_backend();

namespace detail {
inline const bool kCpuBackendInstalled = (install_cpu_backend(), true);
}  // namespace detail

}  // namespace cjax
