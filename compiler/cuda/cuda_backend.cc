#include "compiler/cuda/cuda_backend.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "compiler/cuda/gpu.h"
#include "ir/errors.h"
#include "ir/exact_text.h"
#include "ir/print/printer.h"
#include "runtime/cuda/cublas.h"
#include "runtime/cuda/gpu_executable.h"
#include "runtime/threefry.h"

namespace cjax {
namespace {

using Executable = runtime::cuda::GpuExecutable;

class Prepared final : public PreparedProgram {
 public:
  explicit Prepared(std::shared_ptr<const Executable> exe) : exe_(std::move(exe)) {}
  std::vector<runtime::Buffer> run(std::span<const runtime::Buffer> consts,
                                   std::span<const runtime::Buffer> args) const override {
    std::vector<runtime::Buffer> all(consts.begin(), consts.end());
    all.insert(all.end(), args.begin(), args.end());
    return exe_->run(all);
  }

 private:
  std::shared_ptr<const Executable> exe_;
};

}  // namespace

struct CudaBackend::Cache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const Executable>> programs;

  std::shared_ptr<const Executable> get(const Jaxpr& jaxpr, int ordinal) {
    Jaxpr open = jaxpr;
    convert_constvars(open);  // consts are passed as the leading arguments
    const std::optional<std::string> exact = exact_text(open);
    const std::string key =
        std::string(runtime::threefry_partitionable() ? "partitionable|" : "classic|") +
        (exact ? "exact:" + *exact : "printed:" + to_string(open));
    std::lock_guard lock(mu);
    if (auto it = programs.find(key); it != programs.end()) return it->second;
    const std::string name = jaxpr.debug ? jaxpr.debug->function_name : "";
    auto exe = std::make_shared<const Executable>(lower::compile_gpu_program(open, name), ordinal);
    programs.emplace(key, exe);
    return exe;
  }
};

CudaBackend::CudaBackend(int ordinal) : cache_(std::make_unique<Cache>()), ordinal_(ordinal) {}
CudaBackend::~CudaBackend() = default;

std::vector<runtime::Buffer> CudaBackend::run(const Jaxpr& jaxpr,
                                              std::span<const runtime::Buffer> consts,
                                              std::span<const runtime::Buffer> args) {
  return Prepared(cache_->get(jaxpr, ordinal_)).run(consts, args);
}

std::shared_ptr<const PreparedProgram> CudaBackend::prepare(const Jaxpr& jaxpr) {
  return std::make_shared<Prepared>(cache_->get(jaxpr, ordinal_));
}

size_t CudaBackend::compiled_programs() const {
  std::lock_guard lock(cache_->mu);
  return cache_->programs.size();
}

std::shared_ptr<Backend> make_cuda_backend(int ordinal) {
  if (auto why = runtime::cuda::cublas_unavailable_reason()) throw UnsupportedError(*why);
  return std::make_shared<CudaBackend>(ordinal);
}

}  // namespace cjax
