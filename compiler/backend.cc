#include "compiler/backend.h"

#include <mutex>

namespace cjax {
namespace {

std::mutex g_mu;
std::shared_ptr<Backend> g_backend;
thread_local bool t_force_interpreter = false;

}  // namespace

std::shared_ptr<Backend> set_backend(std::shared_ptr<Backend> b) {
  std::lock_guard lock(g_mu);
  std::swap(g_backend, b);
  return b;
}

std::shared_ptr<Backend> current_backend() {
  if (t_force_interpreter) return nullptr;
  std::lock_guard lock(g_mu);
  return g_backend;
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
