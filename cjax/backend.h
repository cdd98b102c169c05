// The back end that evaluates whole jaxprs on concrete arrays. With none installed, programs
// run on the reference interpreter, one primitive at a time. Linking the MLIR CPU back end and
// including its header (compiler/cpu/cpu_backend.h, pulled in by the umbrella cjax/cjax.h) installs
// it, and from then on grad, value_and_grad, vjp, jit, ... on concrete arrays run compiled code.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/buffer.h"

namespace cjax {

// A program made ready once for many runs (the CPU back end compiles it): jit's cached calls run
// it with no lookup.
class PreparedProgram {
 public:
  virtual ~PreparedProgram() = default;
  virtual std::vector<runtime::Buffer> run(std::span<const runtime::Buffer> consts,
                                           std::span<const runtime::Buffer> args) const = 0;
  // run(), where the caller gives up `args` (jit's donate_argnums): once the run starts, they are
  // moved from, and the program may free each one as soon as it has read it last. A run refused
  // before it starts (arguments of the wrong type, not enough memory) leaves them as they were.
  // By default, run().
  virtual std::vector<runtime::Buffer> run_consuming(std::span<const runtime::Buffer> consts,
                                                     std::vector<runtime::Buffer>& args) const {
    return run(consts, args);
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Evaluates `jaxpr` on its constvars' values then its arguments.
  virtual std::vector<runtime::Buffer> run(const Jaxpr& jaxpr,
                                           std::span<const runtime::Buffer> consts,
                                           std::span<const runtime::Buffer> args) = 0;
  // `jaxpr` ready for repeated runs; `jaxpr` and this back end must outlive the result. By
  // default each run goes through run().
  virtual std::shared_ptr<const PreparedProgram> prepare(const Jaxpr& jaxpr);
};

// Installs `b` as the process's back end (null: the interpreter). Returns the previous one.
std::shared_ptr<Backend> set_backend(std::shared_ptr<Backend> b);
std::shared_ptr<Backend> current_backend();

// While alive, this thread evaluates with the interpreter whatever back end is installed (the
// reference for tests and for `--backend interpreter`).
class UseInterpreter {
 public:
  UseInterpreter();
  ~UseInterpreter();
  UseInterpreter(const UseInterpreter&) = delete;
  UseInterpreter& operator=(const UseInterpreter&) = delete;

 private:
  bool saved_;
};
bool interpreter_forced();

}  // namespace cjax
