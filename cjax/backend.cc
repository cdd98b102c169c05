#include "cjax/backend.h"

#include <mutex>

namespace cjax {
namespace {

std::mutex g_mu;
// Never destroyed: a compiled back end's JIT'd code and engines must not be torn down by static
// destructors that run after LLVM's own globals are gone.
std::shared_ptr<Backend>& installed() {
  static auto* backend = new std::shared_ptr<Backend>();
  return *backend;
}
thread_local bool t_force_interpreter = false;

class RunEachTime final : public PreparedProgram {
 public:
  RunEachTime(Backend& backend, const Jaxpr& jaxpr) : backend_(backend), jaxpr_(jaxpr) {}
  std::vector<runtime::Buffer> run(std::span<const runtime::Buffer> consts,
                                   std::span<const runtime::Buffer> args) const override {
    return backend_.run(jaxpr_, consts, args);
  }

 private:
  Backend& backend_;
  const Jaxpr& jaxpr_;
};

}  // namespace

std::shared_ptr<const PreparedProgram> Backend::prepare(const Jaxpr& jaxpr) {
  return std::make_shared<RunEachTime>(*this, jaxpr);
}

std::shared_ptr<Backend> set_backend(std::shared_ptr<Backend> b) {
  std::lock_guard lock(g_mu);
  std::swap(installed(), b);
  return b;
}

std::shared_ptr<Backend> current_backend() {
  if (t_force_interpreter) return nullptr;
  std::lock_guard lock(g_mu);
  return installed();
}

UseInterpreter::UseInterpreter() : saved_(t_force_interpreter) {
  t_force_interpreter = true;
}
UseInterpreter::~UseInterpreter() {
  t_force_interpreter = saved_;
}
bool interpreter_forced() {
  return t_force_interpreter;
}

}  // namespace cjax
